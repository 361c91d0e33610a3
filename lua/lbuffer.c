/* lbuffer: the orrery.Buffer type: typed views of a simulation's host
 * mirror.  sim.pos and sim.vel hold n 3-vectors, sim.mass n numbers;
 * indices are 1-based and bounds-checked.  buf[i] is a table {x, y, z} (a
 * number for mass) and buf[i] = {x, y, z} sets it; buf:get(i) / buf:set(i,
 * x, y, z) do the same without tables; sim.attr.NAME holds the force law's
 * per-body attribute NAME, n numbers; buf:to_table() / buf:from_table(t)
 * copy all values as one flat array.  A buffer keeps its Sim userdata alive
 * (user value 1) and checks that it is still open on every access; writes
 * call orr_sim_touch (attributes: orr_sim_touch_attr, the bodies staying
 * the engine's) so the next step uploads them. */
#include "lorrery.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { POS, VEL, MASS, ATTR };   /* ATTR + a: attribute a of the force law */

static const char *const kind_names[] = {"sim.pos", "sim.vel", "sim.mass"};

typedef struct {
    int kind;        /* POS, VEL, MASS, ATTR + a */
    char name[48];   /* "sim.pos", ..., "sim.attr.charge" */
} lbuf;

/* A buffer's data: element i, component k is base[i * stride + k]. */
typedef struct {
    orr_sim *sim;
    double *base;
    long n;
    int stride, comps, kind;
    const char *name;
} view;

static view checkview(lua_State *L, int arg)
{
    lbuf *b = luaL_checkudata(L, arg, ORR_LUA_BUFFER);
    lua_getiuservalue(L, arg, 1);
    orr_lua_sim *p = luaL_testudata(L, -1, ORR_LUA_SIM);
    lua_pop(L, 1);
    if (!p || !p->sim)
        orr_lua_error(L, "orrery.Buffer: simulation is closed");
    view v = {p->sim, NULL, orr_sim_n(p->sim), 4, 3, b->kind, b->name};
    double *d;
    orr_error err = {0};
    if (b->kind >= ATTR) {
        if (orr_sim_attr(v.sim, b->kind - ATTR, &d, &err))
            orr_lua_fail(L, &err, NULL);
        v.base = d;
        v.stride = v.comps = 1;
        return v;
    }
    if (b->kind == VEL) {
        if (orr_sim_vel(v.sim, &d, &err))
            orr_lua_fail(L, &err, NULL);
        v.stride = 3;
    } else if (orr_sim_pos(v.sim, &d, &err)) {
        orr_lua_fail(L, &err, NULL);
    }
    v.base = b->kind == MASS ? d + 3 : d;
    v.comps = b->kind == MASS ? 1 : 3;
    return v;
}

void orr_lua_push_buffer(lua_State *L, int sim, int kind)
{
    sim = lua_absindex(L, sim);
    if (lua_getiuservalue(L, sim, kind + 1) == LUA_TUSERDATA)
        return;
    lua_pop(L, 1);
    lbuf *b = lua_newuserdatauv(L, sizeof *b, 1);
    b->kind = kind;
    if (kind >= ATTR) {
        orr_lua_sim *p = lua_touserdata(L, sim);
        const orr_law *law = orr_sim_law(p->sim);
        snprintf(b->name, sizeof b->name, "sim.attr.%s",
                 kind - ATTR < law->nattrs ? law->attrs[kind - ATTR] : "?");
    } else {
        snprintf(b->name, sizeof b->name, "%s", kind_names[kind]);
    }
    luaL_setmetatable(L, ORR_LUA_BUFFER);
    lua_pushvalue(L, sim);
    lua_setiuservalue(L, -2, 1);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, sim, kind + 1);
}

/* The 1-based index at arg, checked; returns it 0-based. */
static long checkindex(lua_State *L, int arg, const view *v)
{
    lua_Integer i = luaL_checkinteger(L, arg);
    if (i < 1 || i > v->n)
        luaL_argerror(L, arg,
                      lua_pushfstring(L, "index %I out of range 1..%I", i, (lua_Integer)v->n));
    return (long)i - 1;
}

/* A value to store: finite, and for masses not negative. */
static int storable(const view *v, double x)
{
    return isfinite(x) && (v->kind != MASS || x >= 0);
}

/* NULL when x, component k of element i (0-based), fits what the
 * simulation stores (float: the float range), else pushes and returns
 * "sim.pos[2]: y = 1e+39 is beyond the float range (...)" ("sim.mass[2] =
 * ..." for one component). */
static const char *in_range(lua_State *L, const view *v, long i, int k, double x)
{
    if (fabs(x) <= FLT_MAX || ORR_STORED_DOUBLE(orr_sim_config_of(v->sim)->precision))
        return NULL;
    static const char *const comp[2][3] = {{"x", "y", "z"}, {"vx", "vy", "vz"}};
    char what[96];
    if (v->comps == 3)
        snprintf(what, sizeof what, "%s[%ld]: %s", v->name, i + 1, comp[v->kind == VEL][k]);
    else
        snprintf(what, sizeof what, "%s[%ld]", v->name, i + 1);
    return orr_lua_float_range(L, v->sim, what, x);
}

/* After a write: the next step uploads it.  An attribute view fetched no
 * bodies, so only the attributes become the authority. */
static void touched(const view *v)
{
    if (v->kind >= ATTR)
        orr_sim_touch_attr(v->sim);
    else
        orr_sim_touch(v->sim);
}

/* ---- methods ------------------------------------------------------------------ */

static int buf_get(lua_State *L)
{
    view v = checkview(L, 1);
    long i = checkindex(L, 2, &v);
    for (int k = 0; k < v.comps; k++)
        lua_pushnumber(L, v.base[i * v.stride + k]);
    return v.comps;
}

static int buf_set(lua_State *L)
{
    view v = checkview(L, 1);
    long i = checkindex(L, 2, &v);
    double x[3];
    for (int k = 0; k < v.comps; k++) {
        x[k] = luaL_checknumber(L, 3 + k);
        if (!storable(&v, x[k]))
            luaL_argerror(L, 3 + k,
                          lua_pushfstring(L, "%s expected, got %s",
                                          v.kind == MASS ? "non-negative finite number"
                                                         : "finite number",
                                          orr_lua_describe(L, 3 + k)));
        const char *msg = in_range(L, &v, i, k, x[k]);
        if (msg)
            luaL_argerror(L, 3 + k, msg);
    }
    memcpy(v.base + i * v.stride, x, sizeof(double) * (size_t)v.comps);
    touched(&v);
    return 0;
}

static int buf_to_table(lua_State *L)
{
    view v = checkview(L, 1);
    lua_Integer total = (lua_Integer)v.n * v.comps;
    lua_createtable(L, total < 0x7fffffff ? (int)total : 0x7fffffff, 0);
    for (long i = 0; i < v.n; i++)
        for (int k = 0; k < v.comps; k++) {
            lua_pushnumber(L, v.base[i * v.stride + k]);
            lua_rawseti(L, -2, (lua_Integer)i * v.comps + k + 1);
        }
    return 1;
}

/* buf:from_table(t): t holds comps * n finite numbers; all or nothing. */
static int buf_from_table(lua_State *L)
{
    view v = checkview(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    lua_Integer total = (lua_Integer)v.n * v.comps;
    lua_Unsigned len = lua_rawlen(L, 2);
    if (len != (lua_Unsigned)total)
        luaL_argerror(L, 2, lua_pushfstring(L, "%I numbers expected (%s), got %I", total,
                                            v.comps == 3 ? "3 per body" : "1 per body",
                                            (lua_Integer)len));
    double *tmp = lua_newuserdatauv(L, sizeof(double) * (size_t)(total ? total : 1), 0);
    for (lua_Integer j = 0; j < total; j++) {
        int t = lua_rawgeti(L, 2, j + 1);
        tmp[j] = lua_tonumber(L, -1);
        if (t != LUA_TNUMBER || !storable(&v, tmp[j]))
            luaL_argerror(L, 2, lua_pushfstring(L, "element %I: %s expected, got %s", j + 1,
                                                v.kind == MASS ? "non-negative finite number"
                                                               : "finite number",
                                                orr_lua_describe(L, -1)));
        const char *msg = in_range(L, &v, (long)(j / v.comps), (int)(j % v.comps), tmp[j]);
        if (msg)
            luaL_argerror(L, 2, lua_pushfstring(L, "element %I: %s", j + 1, msg));
        lua_pop(L, 1);
    }
    for (long i = 0; i < v.n; i++)
        memcpy(v.base + i * v.stride, tmp + i * v.comps, sizeof(double) * (size_t)v.comps);
    touched(&v);
    return 0;
}

/* ---- metamethods ------------------------------------------------------------- */

/* buf[i] (element), or a method by name (upvalue 1). */
static int buf_index(lua_State *L)
{
    luaL_checkudata(L, 1, ORR_LUA_BUFFER);
    lua_settop(L, 2);
    if (lua_type(L, 2) != LUA_TNUMBER) {
        lua_rawget(L, lua_upvalueindex(1));
        return 1;
    }
    view v = checkview(L, 1);
    int isint;
    lua_Integer i = lua_tointegerx(L, 2, &isint);
    if (!isint)
        return orr_lua_error(L, "%s: index %s is not an integer", v.name, orr_lua_describe(L, 2));
    if (i < 1 || i > v.n)
        return orr_lua_error(L, "%s: index %I out of range 1..%I", v.name, i, (lua_Integer)v.n);
    const double *x = v.base + (i - 1) * v.stride;
    if (v.comps == 1) {
        lua_pushnumber(L, x[0]);
        return 1;
    }
    lua_createtable(L, 3, 0);
    for (int k = 0; k < 3; k++) {
        lua_pushnumber(L, x[k]);
        lua_rawseti(L, -2, k + 1);
    }
    return 1;
}

/* buf[i] = {x, y, z} (a number for mass). */
static int buf_newindex(lua_State *L)
{
    view v = checkview(L, 1);
    int isint = 0;
    lua_Integer i = lua_type(L, 2) == LUA_TNUMBER ? lua_tointegerx(L, 2, &isint) : 0;
    if (!isint)
        return orr_lua_error(L, "%s: index %s is not an integer", v.name, orr_lua_describe(L, 2));
    if (i < 1 || i > v.n)
        return orr_lua_error(L, "%s: index %I out of range 1..%I", v.name, i, (lua_Integer)v.n);
    double x[3];
    int ok;
    if (v.comps == 1) {
        x[0] = lua_tonumber(L, 3);
        ok = lua_type(L, 3) == LUA_TNUMBER && storable(&v, x[0]);
    } else {
        ok = lua_type(L, 3) == LUA_TTABLE && lua_rawlen(L, 3) == 3;
        for (int k = 0; ok && k < 3; k++) {
            ok = lua_rawgeti(L, 3, k + 1) == LUA_TNUMBER;
            x[k] = lua_tonumber(L, -1);
            ok = ok && storable(&v, x[k]);
            lua_pop(L, 1);
        }
    }
    if (!ok)
        return orr_lua_error(L, "%s[%I]: expected %s (got %s)", v.name, i,
                             v.kind == MASS  ? "a non-negative finite number"
                             : v.comps == 1 ? "a finite number"
                                            : "a table {x, y, z} of finite numbers",
                             orr_lua_describe(L, 3));
    for (int k = 0; k < v.comps; k++) {
        const char *msg = in_range(L, &v, (long)i - 1, k, x[k]);
        if (msg)
            return orr_lua_error(L, "%s", msg);
    }
    memcpy(v.base + (i - 1) * v.stride, x, sizeof(double) * (size_t)v.comps);
    touched(&v);
    return 0;
}

static int buf_len(lua_State *L)
{
    view v = checkview(L, 1);
    lua_pushinteger(L, (lua_Integer)v.n);
    return 1;
}

static int buf_tostring(lua_State *L)
{
    lbuf *b = luaL_checkudata(L, 1, ORR_LUA_BUFFER);
    lua_getiuservalue(L, 1, 1);
    orr_lua_sim *p = luaL_testudata(L, -1, ORR_LUA_SIM);
    if (!p || !p->sim)
        lua_pushfstring(L, "orrery.Buffer (%s, simulation closed)", b->name);
    else
        lua_pushfstring(L, "orrery.Buffer (%s, %I x %d)", b->name,
                        (lua_Integer)orr_sim_n(p->sim), b->kind == POS || b->kind == VEL ? 3 : 1);
    return 1;
}

static const luaL_Reg meth[] = {
    {"get", buf_get},
    {"set", buf_set},
    {"to_table", buf_to_table},
    {"from_table", buf_from_table},
    {NULL, NULL},
};

static const luaL_Reg metameth[] = {
    {"__newindex", buf_newindex},
    {"__len", buf_len},
    {"__tostring", buf_tostring},
    {"__index", NULL},   /* placeholder, set below */
    {NULL, NULL},
};

void orr_lua_open_buffer(lua_State *L)
{
    luaL_newmetatable(L, ORR_LUA_BUFFER);
    luaL_setfuncs(L, metameth, 0);
    luaL_newlibtable(L, meth);
    luaL_setfuncs(L, meth, 0);
    lua_pushcclosure(L, buf_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
}
