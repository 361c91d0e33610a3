/* lfewbody: orrery.fewbody{...}, a few bodies under their own gravity
 * integrated by algorithmic regularisation (core/integrate/ar.h): close
 * encounters, eccentric binaries and small groups at a cost that does not
 * depend on how close the bodies come.  An orrery.FewBody has
 * fb:advance(t), fb:body(i), fb:bodies(), fb:energy() and the fields n,
 * time, G, tol, steps, kicks. */
#include "lorrery.h"
#include "ar.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ORR_LUA_FEWBODY "orrery.FewBody"
#define WHO "orrery.fewbody"

static orr_ar *check_fb(lua_State *L, int idx)
{
    return luaL_checkudata(L, idx, ORR_LUA_FEWBODY);
}

/* Body k's field key of the table at idx (0 when absent). */
static double body_field(lua_State *L, int idx, int k, const char *key)
{
    lua_getfield(L, idx, key);
    double v = 0;
    if (!lua_isnil(L, -1)) {
        v = lua_tonumber(L, -1);
        if (lua_type(L, -1) != LUA_TNUMBER || !isfinite(v))
            orr_lua_error(L, WHO ": body %d: '%s' must be a finite number (got %s)", k, key,
                          orr_lua_describe(L, -1));
    }
    lua_pop(L, 1);
    return v;
}

/* orrery.fewbody{bodies = list or orrery.Bodies, G = 1, tol = 1e-14, t = 0} */
static int l_fewbody(lua_State *L)
{
    static const char *const keys[] = {"bodies", "G", "tol", "t", NULL};
    luaL_checktype(L, 1, LUA_TTABLE);
    orr_lua_checkkeys(L, 1, WHO, keys, 1);
    double G = 1, tol = 1e-14, t = 0;
    if (lua_getfield(L, 1, "G") != LUA_TNIL)
        G = orr_lua_checkfinite(L, -1, WHO, "G", "a positive number");
    if (lua_getfield(L, 1, "tol") != LUA_TNIL)
        tol = orr_lua_checkfinite(L, -1, WHO, "tol", "a number from 1e-16 to 1e-6");
    if (lua_getfield(L, 1, "t") != LUA_TNIL)
        t = orr_lua_checkfinite(L, -1, WHO, "t", "a finite number");
    lua_pop(L, 3);
    if (!(tol >= 1e-16 && tol <= 1e-6)) {
        char got[32];
        snprintf(got, sizeof got, "%g", tol);
        return orr_lua_error(L, WHO ": 'tol' must be a number from 1e-16 to 1e-6 (got %s)", got);
    }
    double m[ORR_AR_MAX], pos[3 * ORR_AR_MAX], vel[3 * ORR_AR_MAX];
    int n = 0;
    lua_getfield(L, 1, "bodies");
    const orr_lua_bodies *b = luaL_testudata(L, -1, ORR_LUA_BODIES);
    if (b) {
        if (b->n < 2 || b->n > ORR_AR_MAX)
            return orr_lua_error(L, WHO ": 2 to %d bodies (got %ld)", ORR_AR_MAX, b->n);
        n = (int)b->n;
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < 3; k++) {
                pos[3 * i + k] = b->data[4 * i + k];
                vel[3 * i + k] = b->data[4 * b->n + 3 * i + k];
            }
            m[i] = b->data[4 * i + 3];
        }
    } else if (lua_type(L, -1) == LUA_TTABLE) {
        const lua_Integer len = (lua_Integer)lua_rawlen(L, -1);
        if (len < 2 || len > ORR_AR_MAX)
            return orr_lua_error(L, WHO ": 2 to %d bodies (got %d)", ORR_AR_MAX, (int)len);
        n = (int)len;
        static const char *const bkeys[] = {"x", "y", "z", "vx", "vy", "vz", "m", NULL};
        for (int i = 0; i < n; i++) {
            lua_rawgeti(L, -1, i + 1);
            if (lua_type(L, -1) != LUA_TTABLE)
                return orr_lua_error(L, WHO ": body %d must be a table {x =, y =, z =, vx =, "
                                     "vy =, vz =, m =} (got %s)", i + 1, orr_lua_describe(L, -1));
            orr_lua_checkkeys(L, lua_gettop(L), WHO, bkeys, 1);
            static const char *const xs[] = {"x", "y", "z"}, *const vs[] = {"vx", "vy", "vz"};
            for (int k = 0; k < 3; k++) {
                pos[3 * i + k] = body_field(L, lua_gettop(L), i + 1, xs[k]);
                vel[3 * i + k] = body_field(L, lua_gettop(L), i + 1, vs[k]);
            }
            m[i] = body_field(L, lua_gettop(L), i + 1, "m");
            lua_pop(L, 1);
        }
    } else {
        return orr_lua_error(L, WHO ": 'bodies' must be a list of body tables or an "
                             "orrery.Bodies (got %s)", orr_lua_describe(L, -1));
    }
    lua_pop(L, 1);
    orr_ar *a = lua_newuserdatauv(L, sizeof *a, 0);
    luaL_setmetatable(L, ORR_LUA_FEWBODY);
    orr_error err = {0};
    if (orr_ar_init(a, n, G, m, pos, vel, t, &err))
        return orr_lua_fail(L, &err, WHO);
    a->tol = tol;
    return 1;
}

static int fb_advance(lua_State *L)
{
    orr_ar *a = check_fb(L, 1);
    const double t = luaL_checknumber(L, 2);
    if (!isfinite(t) || t < a->t) {
        char now[32], got[32];
        snprintf(now, sizeof now, "%.17g", a->t);
        snprintf(got, sizeof got, "%.17g", t);
        return orr_lua_error(L, "bad argument #1 to 'advance' (time must be finite and >= the "
                             "current time %s (got %s))", now, got);
    }
    orr_error err = {0};
    if (orr_ar_advance(a, t, &err))
        return orr_lua_fail(L, &err, "fb:advance");
    lua_settop(L, 1);
    return 1;
}

static void push_body(lua_State *L, const orr_ar *a, int i)
{
    double pos[3 * ORR_AR_MAX], vel[3 * ORR_AR_MAX];
    orr_ar_state(a, pos, vel);
    lua_createtable(L, 0, 7);
    static const char *const names[] = {"x", "y", "z", "vx", "vy", "vz"};
    for (int k = 0; k < 6; k++) {
        lua_pushnumber(L, k < 3 ? pos[3 * i + k] : vel[3 * i + k - 3]);
        lua_setfield(L, -2, names[k]);
    }
    lua_pushnumber(L, a->m[i]);
    lua_setfield(L, -2, "m");
}

static int fb_body(lua_State *L)
{
    orr_ar *a = check_fb(L, 1);
    const lua_Integer i = luaL_checkinteger(L, 2);
    if (i < 1 || i > a->n)
        return orr_lua_error(L, "bad argument #1 to 'body' (index %d out of range 1..%d)", (int)i,
                             a->n);
    push_body(L, a, (int)i - 1);
    return 1;
}

static int fb_bodies(lua_State *L)
{
    orr_ar *a = check_fb(L, 1);
    lua_createtable(L, a->n, 0);
    for (int i = 0; i < a->n; i++) {
        push_body(L, a, i);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

static int fb_energy(lua_State *L)
{
    lua_pushnumber(L, orr_ar_energy(check_fb(L, 1)));
    return 1;
}

static int fb_index(lua_State *L)
{
    orr_ar *a = check_fb(L, 1);
    const char *key = luaL_checkstring(L, 2);
    if (luaL_getmetafield(L, 1, "methods") != LUA_TNIL) {
        lua_getfield(L, -1, key);
        if (!lua_isnil(L, -1))
            return 1;
        lua_pop(L, 2);
    }
    if (strcmp(key, "n") == 0)
        lua_pushinteger(L, a->n);
    else if (strcmp(key, "time") == 0)
        lua_pushnumber(L, a->t);
    else if (strcmp(key, "G") == 0)
        lua_pushnumber(L, a->G);
    else if (strcmp(key, "tol") == 0)
        lua_pushnumber(L, a->tol);
    else if (strcmp(key, "steps") == 0)
        lua_pushinteger(L, (lua_Integer)a->steps);
    else if (strcmp(key, "kicks") == 0)
        lua_pushinteger(L, (lua_Integer)a->kicks);
    else
        lua_pushnil(L);
    return 1;
}

static int fb_tostring(lua_State *L)
{
    orr_ar *a = check_fb(L, 1);
    char now[32];
    snprintf(now, sizeof now, "%.17g", a->t);
    lua_pushfstring(L, "orrery.FewBody(%d bodies, t = %s)", a->n, now);
    return 1;
}

void orr_lua_open_fewbody(lua_State *L)
{
    static const luaL_Reg methods[] = {{"advance", fb_advance}, {"body", fb_body},
                                       {"bodies", fb_bodies},   {"energy", fb_energy},
                                       {NULL, NULL}};
    luaL_newmetatable(L, ORR_LUA_FEWBODY);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "methods");
    lua_pushcfunction(L, fb_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, fb_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pop(L, 1);
    lua_pushcfunction(L, l_fewbody);
    lua_setfield(L, -2, "fewbody");
}
