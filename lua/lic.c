/* lic: orrery.ic, the initial-condition generators, and the orrery.Bodies
 * type they return.  Every entry of orr_ic_generators() becomes
 * orrery.ic.NAME{n=, seed=, <params>...}, read generically: parameters by
 * name with the table's defaults, unknown keys named with the valid ones
 * listed.  A Bodies userdata holds the bodies inline (no __gc needed); it
 * is what sim:load and orrery.simulation{bodies=} take. */
#include "lorrery.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ic.h"

/* orrery.ic.NAME{...}; upvalue 1: the generator (light userdata). */
static int ic_generate(lua_State *L)
{
    const orr_ic_generator *g = lua_touserdata(L, lua_upvalueindex(1));
    char who[96];
    snprintf(who, sizeof who, "orrery.ic.%s", g->name);
    if (lua_isnoneornil(L, 1)) {
        lua_settop(L, 0);
        lua_newtable(L);
    }
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);

    const char *keys[ORR_IC_MAX_PARAMS + 3];
    int nk = 0;
    if (g->takes_n)
        keys[nk++] = "n";
    keys[nk++] = "seed";
    for (int k = 0; k < g->nparams; k++)
        keys[nk++] = g->params[k];
    keys[nk] = NULL;
    orr_lua_checkkeys(L, 1, who, keys, 1);

    lua_Integer n = 0, seed = 1;
    int isint = 0;
    if (g->takes_n) {
        if (lua_getfield(L, 1, "n") == LUA_TNIL)
            return orr_lua_error(L, "%s: 'n' is required", who);
        if (lua_type(L, -1) == LUA_TNUMBER)
            n = lua_tointegerx(L, -1, &isint);
        if (!isint || n < 1 || n > INT_MAX)
            return orr_lua_error(L, "%s: 'n' must be an integer from 1 to %d (got %s)", who,
                                 INT_MAX, orr_lua_describe(L, -1));
        lua_pop(L, 1);
    }
    if (lua_getfield(L, 1, "seed") != LUA_TNIL) {
        isint = 0;
        if (lua_type(L, -1) == LUA_TNUMBER)
            seed = lua_tointegerx(L, -1, &isint);
        if (!isint || seed < 0)
            return orr_lua_error(L, "%s: 'seed' must be a non-negative integer (got %s)", who,
                                 orr_lua_describe(L, -1));
    }
    lua_pop(L, 1);
    double p[ORR_IC_MAX_PARAMS];
    for (int k = 0; k < g->nparams; k++) {
        p[k] = g->defaults[k];
        if (lua_getfield(L, 1, g->params[k]) != LUA_TNIL)
            p[k] = orr_lua_checkfinite(L, -1, who, g->params[k], "a finite number");
        lua_pop(L, 1);
    }

    long count = g->count((long)n, p);
    if (count < 1 || count > INT_MAX)
        return orr_lua_error(L, "%s: cannot make %I bodies", who, (lua_Integer)count);
    orr_lua_bodies *b = lua_newuserdatauv(L, sizeof *b + sizeof(double) * 7 * (size_t)count, 0);
    b->n = 0;   /* empty until generated */
    luaL_setmetatable(L, ORR_LUA_BODIES);
    orr_error err = {0};
    if (orr_ic_generate(g, (long)n, (uint64_t)seed, p, b->data, b->data + 4 * count, &err)) {
        /* "plummer: mass must be positive" -> "orrery.ic.plummer: mass ..." */
        size_t len = strlen(g->name);
        const char *m = err.msg;
        if (strncmp(m, g->name, len) == 0 && strncmp(m + len, ": ", 2) == 0)
            m += len + 2;
        lua_pushstring(L, m);
        orr_error_clear(&err);
        return orr_lua_error(L, "%s: %s", who, lua_tostring(L, -1));
    }
    b->n = count;
    return 1;
}

/* orrery.ic.list() -> {"plummer", ...} in the library's order. */
static int ic_list(lua_State *L)
{
    const orr_ic_generator *const *gens = orr_ic_generators();
    lua_newtable(L);
    for (int i = 0; gens[i]; i++) {
        lua_pushstring(L, gens[i]->name);
        lua_rawseti(L, -2, i + 1);
    }
    return 1;
}

/* ---- orrery.Bodies ---------------------------------------------------------- */

static orr_lua_bodies *checkbodies(lua_State *L, int arg)
{
    orr_lua_bodies *b = luaL_checkudata(L, arg, ORR_LUA_BODIES);
    if (b->n < 1)
        orr_lua_error(L, "orrery.Bodies: empty (generation failed)");
    return b;
}

static int bodies_body(lua_State *L)
{
    static const char *const names[] = {"x", "y", "z", "vx", "vy", "vz", "m"};
    orr_lua_bodies *b = checkbodies(L, 1);
    lua_Integer i = luaL_checkinteger(L, 2);
    if (i < 1 || i > b->n)
        return luaL_argerror(L, 2, lua_pushfstring(L, "index %I out of range 1..%I", i,
                                                   (lua_Integer)b->n));
    const double *pos = b->data + 4 * (i - 1), *vel = b->data + 4 * b->n + 3 * (i - 1);
    double v[7] = {pos[0], pos[1], pos[2], vel[0], vel[1], vel[2], pos[3]};
    lua_createtable(L, 0, 7);
    for (int k = 0; k < 7; k++) {
        lua_pushnumber(L, v[k]);
        lua_setfield(L, -2, names[k]);
    }
    return 1;
}

static int bodies_index(lua_State *L)
{
    orr_lua_bodies *b = luaL_checkudata(L, 1, ORR_LUA_BODIES);
    lua_settop(L, 2);
    if (lua_type(L, 2) == LUA_TSTRING && strcmp(lua_tostring(L, 2), "n") == 0) {
        lua_pushinteger(L, (lua_Integer)b->n);
        return 1;
    }
    lua_rawget(L, lua_upvalueindex(1));
    return 1;
}

static int bodies_len(lua_State *L)
{
    lua_pushinteger(L, (lua_Integer)checkbodies(L, 1)->n);
    return 1;
}

static int bodies_tostring(lua_State *L)
{
    orr_lua_bodies *b = luaL_checkudata(L, 1, ORR_LUA_BODIES);
    lua_pushfstring(L, "orrery.Bodies (%I bodies)", (lua_Integer)b->n);
    return 1;
}

static const luaL_Reg funcs[] = {
    {"list", ic_list},
    {NULL, NULL},
};

static const luaL_Reg meth[] = {
    {"body", bodies_body},
    {NULL, NULL},
};

static const luaL_Reg metameth[] = {
    {"__len", bodies_len},
    {"__tostring", bodies_tostring},
    {"__index", NULL},   /* placeholder, set below */
    {NULL, NULL},
};

void orr_lua_open_ic(lua_State *L)
{
    luaL_newmetatable(L, ORR_LUA_BODIES);
    luaL_setfuncs(L, metameth, 0);
    luaL_newlibtable(L, meth);
    luaL_setfuncs(L, meth, 0);
    lua_pushcclosure(L, bodies_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);

    luaL_newlib(L, funcs);
    const orr_ic_generator *const *gens = orr_ic_generators();
    for (int i = 0; gens[i]; i++) {
        lua_pushlightuserdata(L, (void *)gens[i]);
        lua_pushcclosure(L, ic_generate, 1);
        lua_setfield(L, -2, gens[i]->name);
    }
    lua_setfield(L, -2, "ic");
}
