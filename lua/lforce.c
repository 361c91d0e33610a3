/* lforce: force laws in Lua.  orrery.force{} defines a law (or, given a
 * name, returns a built-in one) as an orrery.Force value; orrery.forces lists
 * the built-in laws.  The Sim methods that touch the law live here too:
 * set_param / param / params, set_attribute / attribute, and verify (the
 * current backend against the CPU in double), which `orrery run --verify`
 * also runs on every simulation. */
#include "lorrery.h"
#include "trial.h"
#include "law.h"
#include "lawcheck.h"
#include "fieldcheck.h"
#include "expr.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHO "orrery.force"

typedef struct {
    orr_law law;   /* zeroed until filled; __gc frees its snippets */
} lforce;

int orr_lua_verify_mode = 0;
int orr_lua_verify_failures = 0;

static int force_gc(lua_State *L)
{
    lforce *f = luaL_checkudata(L, 1, ORR_LUA_FORCE);
    orr_law_free(&f->law);
    return 0;
}

/* Pushes a new, empty orrery.Force. */
static orr_law *push_law(lua_State *L)
{
    lforce *f = lua_newuserdatauv(L, sizeof *f, 0);
    memset(f, 0, sizeof *f);
    luaL_setmetatable(L, ORR_LUA_FORCE);
    return &f->law;
}

/* Pushes "file.lua:12" of the user's code calling (orr_lua_caller), or
 * "?", the path in full, and returns it. */
static const char *push_where(lua_State *L)
{
    lua_Debug ar;
    if (orr_lua_caller(L, &ar))
        return lua_pushfstring(L, "%s:%d", orr_lua_chunkname(&ar), ar.currentline);
    return lua_pushstring(L, "?");
}

static void raise(lua_State *L, orr_error *err)
{
    orr_lua_fail(L, err, WHO);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* params = {name = number, ...} applied to law: added (add = 1) or set, in
 * name order, so the generated source does not depend on Lua's table order. */
static void apply_params(lua_State *L, int t, orr_law *law, int add, const char *who)
{
    t = lua_absindex(L, t);
    if (lua_type(L, t) != LUA_TTABLE)
        orr_lua_error(L, "%s: 'params' must be a table of name = number (got %s)", who,
                      orr_lua_describe(L, t));
    const char *names[ORR_LAW_MAX_PARAMS + 1];   /* the table keeps the strings alive */
    int n = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            orr_lua_error(L, "%s: 'params' keys must be param names (got %s)", who,
                          orr_lua_describe(L, -1));
        if (n > ORR_LAW_MAX_PARAMS)
            orr_lua_error(L, "%s: too many params (at most %d)", who, ORR_LAW_MAX_PARAMS);
        if (strlen(lua_tostring(L, -1)) != lua_rawlen(L, -1))
            orr_lua_error(L, "%s: a 'params' name has a NUL byte (what follows it would be "
                          "dropped)", who);
        names[n++] = lua_tostring(L, -1);
    }
    qsort(names, (size_t)n, sizeof names[0], by_name);
    for (int k = 0; k < n; k++) {
        lua_getfield(L, t, names[k]);
        if (lua_type(L, -1) != LUA_TNUMBER || !isfinite(lua_tonumber(L, -1)))
            orr_lua_error(L, "%s: param '%s' must be a finite number (got %s)", who, names[k],
                          orr_lua_describe(L, -1));
        orr_error err = {0};
        double v = lua_tonumber(L, -1);
        if (add ? orr_law_add_param(law, names[k], v, &err)
                : orr_law_set_param(law, names[k], v, &err))
            orr_lua_fail(L, &err, who);
        lua_pop(L, 1);
    }
}

/* t[key] as a list of names, calling fn for each. */
static void each_name(lua_State *L, const char *key, orr_law *law,
                      orr_status (*fn)(orr_law *, const char *, orr_error *))
{
    if (lua_getfield(L, 1, key) == LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    if (lua_type(L, -1) != LUA_TTABLE)
        orr_lua_error(L, "%s: '%s' must be a list of names (got %s)", WHO, key,
                      orr_lua_describe(L, -1));
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    for (lua_Integer k = 1; k <= n; k++) {
        if (lua_rawgeti(L, -1, k) != LUA_TSTRING)
            orr_lua_error(L, "%s: '%s'[%I] must be a name (got %s)", WHO, key, k,
                          orr_lua_describe(L, -1));
        if (strlen(lua_tostring(L, -1)) != lua_rawlen(L, -1))
            orr_lua_error(L, "%s: '%s'[%I] has a NUL byte (what follows it would be dropped)",
                          WHO, key, k);
        orr_error err = {0};
        if (fn(law, lua_tostring(L, -1), &err))
            raise(L, &err);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* t[key] as a string or absent (NULL); the table keeps the string alive.
 * A Lua string may hold NUL bytes, where the C string would end: refused
 * for the names and the doc; a snippet's length goes to *len (NULL: no
 * snippet), for orr_law_check_bytes to name the NUL's line. */
static const char *opt_string(lua_State *L, const char *key, size_t *len)
{
    int t = lua_getfield(L, 1, key);
    if (t != LUA_TNIL && t != LUA_TSTRING)
        orr_lua_error(L, "%s: '%s' must be a string (got %s)", WHO, key, orr_lua_describe(L, -1));
    size_t n = 0;
    const char *s = t == LUA_TSTRING ? lua_tolstring(L, -1, &n) : NULL;
    if (s && !len && strlen(s) != n)
        orr_lua_error(L, "%s: '%s' has a NUL byte (what follows it would be dropped)", WHO, key);
    if (len)
        *len = n;
    lua_pop(L, 1);
    return s;
}

/* Refuses a NUL byte in snippet `key` (code, len bytes) at its line. */
static void check_bytes(lua_State *L, const orr_law *law, const char *key, const char *code,
                        size_t len, int first)
{
    orr_error err = {0};
    if (code && orr_law_check_bytes(law, key, code, len, first, &err))
        raise(L, &err);
}

/* orrery.force{...} or orrery.force("builtin") */
static int l_force(lua_State *L)
{
    static const char *const keys[] = {"name",    "base",      "doc",   "params",
                                       "runtime_params", "attributes", "pair", "potential",
                                       "scale",   "finite_at_zero", "jerk", "energy", NULL};
    orr_error err = {0};
    if (lua_type(L, 1) == LUA_TSTRING) {
        orr_law *law = push_law(L);
        if (orr_law_builtin(lua_tostring(L, 1), law, &err))
            raise(L, &err);
        return 1;
    }
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    orr_lua_checkkeys(L, 1, WHO, keys, 1);
    size_t pair_len, potential_len, scale_len, jerk_len;
    const char *name = opt_string(L, "name", NULL), *base = opt_string(L, "base", NULL);
    const char *pair = opt_string(L, "pair", &pair_len);
    const char *potential = opt_string(L, "potential", &potential_len);
    const char *scale = opt_string(L, "scale", &scale_len), *doc = opt_string(L, "doc", NULL);
    const char *jerk = opt_string(L, "jerk", &jerk_len);
    const char *energy = opt_string(L, "energy", NULL);
    if (energy && (pair || potential || jerk || base))
        orr_lua_error(L, "%s: 'energy' cannot be combined with '%s' (the law's code is made from "
                      "the energy)", WHO, base ? "base" : pair ? "pair" : potential ? "potential"
                                                                          : "jerk");
    const char *origin = push_where(L);   /* index 2 */
    orr_law *law = push_law(L);           /* index 3 */
    if (base) {
        static const char *const own[] = {"pair", "potential", "attributes", "scale",
                                          "finite_at_zero", "jerk", NULL};
        for (int k = 0; own[k]; k++) {
            if (lua_getfield(L, 1, own[k]) != LUA_TNIL)
                orr_lua_error(L, "%s: '%s' cannot be combined with 'base' (a law derived from "
                              "'%s' keeps its code)", WHO, own[k], base);
            lua_pop(L, 1);
        }
        if (orr_law_builtin(base, law, &err))
            raise(L, &err);
        if (name) {
            if (strlen(name) >= sizeof law->name ||
                strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(name) || !*name)
                orr_lua_error(L, "%s: invalid force law name \"%s\" (lowercase letters, digits, "
                              "'_')", WHO, name);
            snprintf(law->name, sizeof law->name, "%s", name);
        }
        if (lua_getfield(L, 1, "params") != LUA_TNIL)
            apply_params(L, -1, law, 0, WHO);
        lua_pop(L, 1);
    } else {
        if (!name)
            orr_lua_error(L, "%s: 'name' is required (or 'base', a built-in law to start from)",
                          WHO);
        if (!pair && !energy)
            orr_lua_error(L, "%s: 'pair' is required: C code that sets f, the acceleration of "
                          "body i being scale * f * (x_j - x_i) (or 'energy': an expression "
                          "of r)", WHO);
        if (orr_law_init(law, name, energy ? "f = 0;" : pair, potential, origin, &err))
            raise(L, &err);
        check_bytes(L, law, "pair", pair, pair_len, law->pair_line);
        check_bytes(L, law, "potential", potential, potential_len, law->potential_line);
        check_bytes(L, law, "jerk", jerk, jerk_len, 1);
        check_bytes(L, law, "scale", scale, scale_len, 1);
        if (jerk && orr_law_set_jerk(law, jerk, 1, &err))
            raise(L, &err);
        each_name(L, "attributes", law, orr_law_add_attr);
        if (lua_getfield(L, 1, "params") != LUA_TNIL)
            apply_params(L, -1, law, 1, WHO);
        lua_pop(L, 1);
        if (energy) {   /* u, f and g from the energy (expr.h) */
            each_name(L, "runtime_params", law, orr_law_set_runtime);   /* named before use */
            char *code[3];
            if (orr_expr_law(law, energy, &code[0], &code[1], &code[2], &err))
                orr_lua_error(L, "%s: force law '%s': %s", WHO, name, err.msg);
            free(law->pair), free(law->potential), free(law->jerk);
            law->pair = code[0], law->potential = code[1], law->jerk = code[2];
        }
        if (scale && strlen(scale) >= sizeof law->scale)
            orr_lua_error(L, "%s: 'scale' is too long (at most %d characters)", WHO,
                          (int)sizeof law->scale - 1);
        if (scale)
            snprintf(law->scale, sizeof law->scale, "%s", scale);
        if (lua_getfield(L, 1, "finite_at_zero") != LUA_TNIL) {
            if (lua_type(L, -1) != LUA_TBOOLEAN)
                orr_lua_error(L, "%s: 'finite_at_zero' must be true or false (got %s)", WHO,
                              orr_lua_describe(L, -1));
            law->finite_at_zero = lua_toboolean(L, -1);
        }
        lua_pop(L, 1);
    }
    if (doc)
        snprintf(law->doc, sizeof law->doc, "%s", doc);
    each_name(L, "runtime_params", law, orr_law_set_runtime);
    if (orr_law_validate(law, &err))
        raise(L, &err);
    return 1;
}

const orr_law *orr_lua_checklaw(lua_State *L, int idx)
{
    lforce *f = luaL_checkudata(L, idx, ORR_LUA_FORCE);
    return &f->law;
}

const orr_law *orr_lua_sim_law(lua_State *L, int t, const char *who)
{
    t = lua_absindex(L, t);
    int ft = lua_getfield(L, t, "force");
    int pt = lua_getfield(L, t, "params");
    if (ft == LUA_TNIL && pt == LUA_TNIL) {
        lua_pop(L, 2);
        return NULL;
    }
    orr_error err = {0};
    orr_law *law = push_law(L);   /* t.force, t.params, law */
    if (ft == LUA_TNIL || ft == LUA_TSTRING) {
        if (ft == LUA_TSTRING && lua_rawlen(L, -3) == 0)
            orr_lua_error(L, "%s: 'force' must be the name of a force law or an orrery.Force "
                          "(got \"\")", who);
        if (orr_law_builtin(ft == LUA_TNIL ? "gravity" : lua_tostring(L, -3), law, &err))
            orr_lua_fail(L, &err, who);
    } else if (luaL_testudata(L, -3, ORR_LUA_FORCE)) {
        if (orr_law_copy(law, orr_lua_checklaw(L, -3), &err))
            orr_lua_fail(L, &err, who);
    } else {
        orr_lua_error(L, "%s: 'force' must be the name of a force law or an orrery.Force (got %s)",
                      who, orr_lua_describe(L, -3));
    }
    if (pt != LUA_TNIL)
        apply_params(L, -2, law, 0, who);
    lua_replace(L, -3);
    lua_pop(L, 1);
    return law;
}

/* ---- orrery.Force fields ------------------------------------------------------ */

static void push_params(lua_State *L, const orr_law *law)
{
    lua_createtable(L, 0, law->nparams);
    for (int k = 0; k < law->nparams; k++) {
        lua_pushnumber(L, law->params[k].value);
        lua_setfield(L, -2, law->params[k].name);
    }
}

/* Pushes a law check's result: {ok =, message =, compared =, skipped =,
 * force = {checked =, max_rel =, r =, value =, fd =}, jerk = {...}}. */
static void push_check(lua_State *L, const orr_lawcheck_result *r)
{
    lua_createtable(L, 0, 6);
    lua_pushboolean(L, r->ok);
    lua_setfield(L, -2, "ok");
    lua_pushstring(L, r->message);
    lua_setfield(L, -2, "message");
    lua_pushinteger(L, r->compared);
    lua_setfield(L, -2, "compared");
    lua_pushinteger(L, r->skipped);
    lua_setfield(L, -2, "skipped");
    for (int k = 0; k < 2; k++) {
        lua_createtable(L, 0, 5);
        lua_pushboolean(L, k ? r->jerk_checked : r->force_checked);
        lua_setfield(L, -2, "checked");
        const double v[4] = {k ? r->jerk_err : r->force_err, k ? r->jerk_r : r->force_r,
                             k ? r->jerk_value : r->force_value, k ? r->jerk_fd : r->force_fd};
        static const char *const names[4] = {"max_rel", "r", "value", "fd"};
        for (int q = 0; q < 4; q++) {
            lua_pushnumber(L, v[q]);
            lua_setfield(L, -2, names[q]);
        }
        lua_setfield(L, -2, k ? "jerk" : "force");
    }
}

/* law:check{eps =, G =, mi =, mj =, attributes = {name = {i, j}}, rmin =,
 * rmax =, samples =, tol =} -> the result table (lawcheck.h). */
static int force_check(lua_State *L)
{
    const orr_law *law = orr_lua_checklaw(L, 1);
    static const char *const WHOC = "law:check";
    orr_lawcheck_opts o;
    orr_lawcheck_default(&o);
    double G = 1;
    if (!lua_isnoneornil(L, 2)) {
        static const char *const keys[] = {"eps", "G", "mi", "mj", "attributes", "rmin", "rmax",
                                           "samples", "tol", NULL};
        luaL_checktype(L, 2, LUA_TTABLE);
        orr_lua_checkkeys(L, 2, WHOC, keys, 1);
        double *const slot[] = {&o.eps, &G, &o.mi, &o.mj, NULL, &o.rmin, &o.rmax, NULL, &o.tol};
        for (int k = 0; keys[k]; k++) {
            if (!slot[k] || lua_getfield(L, 2, keys[k]) == LUA_TNIL) {
                if (slot[k])
                    lua_pop(L, 1);
                continue;
            }
            *slot[k] = orr_lua_checkfinite(L, -1, WHOC, keys[k], "a finite number");
            lua_pop(L, 1);
        }
        if (lua_getfield(L, 2, "samples") != LUA_TNIL) {
            int isint = 0;
            const lua_Integer n = lua_tointegerx(L, -1, &isint);
            if (!isint || n < 3 || n > 10000)
                orr_lua_error(L, "%s: 'samples' must be an integer from 3 to 10000 (got %s)", WHOC,
                              orr_lua_describe(L, -1));
            o.samples = (int)n;
        }
        lua_pop(L, 1);
        if (lua_getfield(L, 2, "attributes") != LUA_TNIL) {
            if (!lua_istable(L, -1))
                orr_lua_error(L, "%s: 'attributes' must be a table {name = {value_i, value_j}} "
                              "(got %s)", WHOC, orr_lua_describe(L, -1));
            lua_pushnil(L);
            while (lua_next(L, -2)) {
                const int a = lua_type(L, -2) == LUA_TSTRING
                                  ? orr_law_attr_index(law, lua_tostring(L, -2)) : -1;
                if (a < 0)
                    orr_lua_error(L, "%s: force law '%s' has no attribute %s", WHOC, law->name,
                                  orr_lua_describe(L, -2));
                if (lua_istable(L, -1) && lua_rawlen(L, -1) != 2)
                    orr_lua_error(L, "%s: attribute '%s' must be {value_i, value_j} (got a "
                                  "table of %d values)", WHOC, law->attrs[a],
                                  (int)lua_rawlen(L, -1));
                if (!lua_istable(L, -1))
                    orr_lua_error(L, "%s: attribute '%s' must be {value_i, value_j} (got %s)",
                                  WHOC, law->attrs[a], orr_lua_describe(L, -1));
                lua_rawgeti(L, -1, 1);
                o.attr_i[a] = orr_lua_checkfinite(L, -1, WHOC, law->attrs[a], "finite numbers");
                lua_rawgeti(L, -2, 2);
                o.attr_j[a] = orr_lua_checkfinite(L, -1, WHOC, law->attrs[a], "finite numbers");
                lua_pop(L, 3);
            }
        }
        lua_pop(L, 1);
    }
    orr_lawcheck_result r;
    orr_error err = {0};
    if (orr_law_check(law, G, &o, &r, &err))
        return orr_lua_fail(L, &err, WHOC);
    push_check(L, &r);
    return 1;
}

static int force_index(lua_State *L)
{
    const orr_law *law = orr_lua_checklaw(L, 1);
    const char *key = luaL_checkstring(L, 2);
    if (strcmp(key, "name") == 0)
        lua_pushstring(L, law->name);
    else if (strcmp(key, "doc") == 0)
        lua_pushstring(L, law->doc);
    else if (strcmp(key, "origin") == 0)
        lua_pushstring(L, law->origin);
    else if (strcmp(key, "pair") == 0)
        lua_pushstring(L, law->pair);
    else if (strcmp(key, "potential") == 0)
        lua_pushstring(L, law->potential);
    else if (strcmp(key, "jerk") == 0)
        lua_pushstring(L, law->jerk);
    else if (strcmp(key, "scale") == 0)
        lua_pushstring(L, law->scale);
    else if (strcmp(key, "builtin") == 0)
        lua_pushboolean(L, law->builtin);
    else if (strcmp(key, "check") == 0)
        lua_pushcfunction(L, force_check);
    else if (strcmp(key, "params") == 0)
        push_params(L, law);
    else if (strcmp(key, "runtime_params") == 0 || strcmp(key, "attributes") == 0) {
        int attrs = key[0] == 'a', n = 0;
        lua_newtable(L);
        for (int k = 0; k < (attrs ? law->nattrs : law->nparams); k++)
            if (attrs || law->params[k].runtime) {
                lua_pushstring(L, attrs ? law->attrs[k] : law->params[k].name);
                lua_rawseti(L, -2, ++n);
            }
    } else
        lua_pushnil(L);
    return 1;
}

static int force_tostring(lua_State *L)
{
    const orr_law *law = orr_lua_checklaw(L, 1);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "orrery.Force (%s", law->name);
    luaL_addvalue(&b);
    for (int k = 0; k < law->nparams; k++) {
        lua_pushfstring(L, "%s%s=%f%s", k ? ", " : "; ", law->params[k].name,
                        law->params[k].value, law->params[k].runtime ? " (runtime)" : "");
        luaL_addvalue(&b);
    }
    for (int a = 0; a < law->nattrs; a++) {
        lua_pushfstring(L, "%s%s", a ? ", " : "; attributes ", law->attrs[a]);
        luaL_addvalue(&b);
    }
    luaL_addchar(&b, ')');
    luaL_pushresult(&b);
    return 1;
}

/* ---- Sim methods ------------------------------------------------------------------ */

static int checkattr(lua_State *L, orr_sim *s, int arg)
{
    const char *name = luaL_checkstring(L, arg);
    const orr_law *law = orr_sim_law(s);
    int a = orr_law_attr_index(law, name);
    if (a < 0) {
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        for (int k = 0; k < law->nattrs; k++) {
            luaL_addstring(&b, k ? ", " : "");
            luaL_addstring(&b, law->attrs[k]);
        }
        luaL_pushresult(&b);
        luaL_argerror(L, arg, lua_pushfstring(L, "force law '%s' has no attribute '%s' "
                                                 "(attributes: %s)", law->name, name,
                                              law->nattrs ? lua_tostring(L, -1) : "none"));
    }
    return a;
}

static double *attr_values(lua_State *L, orr_sim *s, int a)
{
    double *v;
    orr_error err = {0};
    if (orr_sim_attr(s, a, &v, &err))
        orr_lua_fail(L, &err, NULL);
    return v;
}

/* NULL when x, attribute a of body i (0-based), fits what s stores (float:
 * the float range), else pushes and returns "body 2: 'charge' = 1e+39 is
 * beyond the float range (...)". */
static const char *attr_range(lua_State *L, orr_sim *s, int a, long i, double x)
{
    if (fabs(x) <= FLT_MAX)
        return NULL;
    char what[96];
    snprintf(what, sizeof what, "body %ld: '%s'", i + 1, orr_sim_law(s)->attrs[a]);
    return orr_lua_float_range(L, s, what, x);
}

/* sim:set_attribute(name, i, value) or sim:set_attribute(name, {v1, ..., vn}) */
static int sim_set_attribute(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    int a = checkattr(L, s, 2);
    long n = orr_sim_n(s);
    double *v = attr_values(L, s, a);
    if (lua_type(L, 3) == LUA_TTABLE) {
        if ((long)lua_rawlen(L, 3) != n)
            luaL_argerror(L, 3, lua_pushfstring(L, "%I values expected (one per body), got %I",
                                                (lua_Integer)n, (lua_Integer)lua_rawlen(L, 3)));
        double *tmp = lua_newuserdatauv(L, sizeof(double) * (size_t)n, 0);
        for (long i = 0; i < n; i++) {
            int t = lua_rawgeti(L, 3, i + 1);
            tmp[i] = lua_tonumber(L, -1);
            if (t != LUA_TNUMBER || !isfinite(tmp[i]))
                luaL_argerror(L, 3, lua_pushfstring(L, "element %I: finite number expected, got %s",
                                                    (lua_Integer)i + 1, orr_lua_describe(L, -1)));
            const char *msg = attr_range(L, s, a, i, tmp[i]);
            if (msg)
                luaL_argerror(L, 3, msg);
            lua_pop(L, 1);
        }
        memcpy(v, tmp, sizeof(double) * (size_t)n);
    } else {
        lua_Integer i = luaL_checkinteger(L, 3);
        if (i < 1 || i > n)
            luaL_argerror(L, 3, lua_pushfstring(L, "index %I out of range 1..%I", i, (lua_Integer)n));
        double x = luaL_checknumber(L, 4);
        if (!isfinite(x))
            luaL_argerror(L, 4, lua_pushfstring(L, "finite number expected, got %s",
                                                orr_lua_describe(L, 4)));
        const char *msg = attr_range(L, s, a, (long)i - 1, x);
        if (msg)
            luaL_argerror(L, 4, msg);
        v[i - 1] = x;
    }
    orr_sim_touch_attr(s);   /* the bodies stay the engine's: the clock's */
    return 0;
}

/* sim:attribute(name, i) -> value; sim:attribute(name) -> {v1, ..., vn} */
static int sim_attribute(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    int a = checkattr(L, s, 2);
    long n = orr_sim_n(s);
    const double *v = attr_values(L, s, a);
    if (lua_isnoneornil(L, 3)) {
        lua_createtable(L, n < 0x7fffffff ? (int)n : 0, 0);
        for (long i = 0; i < n; i++) {
            lua_pushnumber(L, v[i]);
            lua_rawseti(L, -2, i + 1);
        }
        return 1;
    }
    lua_Integer i = luaL_checkinteger(L, 3);
    if (i < 1 || i > n)
        luaL_argerror(L, 3, lua_pushfstring(L, "index %I out of range 1..%I", i, (lua_Integer)n));
    lua_pushnumber(L, v[i - 1]);
    return 1;
}

/* sim:set_param(name, value) -> recompiled (boolean) */
static int sim_set_param(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    const char *name = luaL_checkstring(L, 2);
    double v = luaL_checknumber(L, 3);
    if (!isfinite(v))
        luaL_argerror(L, 3, lua_pushfstring(L, "finite number expected, got %s",
                                            orr_lua_describe(L, 3)));
    int recompiled = 0;
    orr_error err = {0};
    if (orr_sim_set_param(s, name, v, &recompiled, &err))
        return orr_lua_fail(L, &err, "sim:set_param");
    if (recompiled)   /* how the new kernels were got */
        orr_lua_sim_notes(s);
    lua_pushboolean(L, recompiled);
    return 1;
}

/* sim:param(name) -> value; sim:params() -> {name = value}: the law's
 * params and the fields' as "FIELD.PARAM" */
static int sim_param(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    const orr_law *law = orr_sim_law(s);
    const orr_fieldset *fs = orr_sim_fields(s);
    if (lua_isnoneornil(L, 2)) {
        push_params(L, law);
        for (int f = 0; f < fs->n; f++)
            for (int k = 0; k < fs->f[f].nparams; k++) {
                lua_pushfstring(L, "%s.%s", fs->f[f].name, fs->f[f].params[k].name);
                lua_pushnumber(L, fs->f[f].params[k].value);
                lua_rawset(L, -3);
            }
        return 1;
    }
    const char *name = luaL_checkstring(L, 2);
    if (strchr(name, '.')) {
        int f = -1, k = -1;
        if (orr_fieldset_find(fs, name, &f, &k))
            return luaL_argerror(L, 2, lua_pushfstring(L, f >= 0 ? "field '%s' has no such param"
                                                       : "no field '%s' (the fields' params "
                                                         "are FIELD.PARAM)", name));
        lua_pushnumber(L, fs->f[f].params[k].value);
        return 1;
    }
    int k = orr_law_param_index(law, name);
    if (k < 0)
        return luaL_argerror(L, 2, lua_pushfstring(L, "force law '%s' has no param '%s'",
                                                   law->name, name));
    lua_pushnumber(L, law->params[k].value);
    return 1;
}

/* The tolerance sim:verify and --verify judge by. */
static double verify_tolerance(const orr_sim *s)
{
    return orr_accel_tolerance(orr_sim_config_of(s)->precision);
}

/* sim:verify{sample=} -> max_rel_err, bodies compared, tolerance */
static int sim_verify(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    lua_Integer sample = 0;
    if (!lua_isnoneornil(L, 2)) {
        static const char *const keys[] = {"sample", NULL};
        luaL_checktype(L, 2, LUA_TTABLE);
        orr_lua_checkkeys(L, 2, "sim:verify", keys, 1);
        if (lua_getfield(L, 2, "sample") != LUA_TNIL) {
            int isint = 0;
            sample = lua_tointegerx(L, -1, &isint);
            if (!isint || sample < 1)
                orr_lua_error(L, "sim:verify: 'sample' must be a positive integer (got %s)",
                              orr_lua_describe(L, -1));
        }
        lua_pop(L, 1);
    }
    double e = 0;
    long ni = 0;
    orr_error err = {0};
    if (orr_sim_verify(s, (long)sample, &e, &ni, &err))
        return orr_lua_fail(L, &err, "sim:verify");
    lua_pushnumber(L, e);
    lua_pushinteger(L, (lua_Integer)ni);
    lua_pushnumber(L, verify_tolerance(s));
    return 3;
}

void orr_lua_verify_report(lua_State *L, orr_sim *s, const char *when)
{
    double e = 0;
    long ni = 0;
    orr_error err = {0};
    if (orr_sim_verify(s, 0, &e, &ni, &err)) {
        orr_lua_fail(L, &err, "--verify");
        return;
    }
    double tol = verify_tolerance(s);
    int ok = e <= tol;
    orr_lua_verify_failures += !ok;
    if (strcmp(when, "before the first step") == 0) {   /* the law against itself, once */
        const orr_sim_config *c = orr_sim_config_of(s);
        orr_lawcheck_opts o;
        orr_lawcheck_default(&o);
        o.eps = c->softening;
        orr_lawcheck_result r;
        if (orr_law_check(orr_sim_law(s), c->G, &o, &r, &err)) {
            orr_lua_fail(L, &err, "--verify");
            return;
        }
        orr_lua_verify_failures += !r.ok;
        const orr_fieldset *fs = orr_sim_fields(s);
        for (int f = 0; f < fs->n; f++) {   /* each field against itself too */
            orr_fieldcheck_opts fo;
            orr_fieldcheck_default(&fo);
            fo.t = orr_sim_time(s);
            orr_fieldcheck_result fr;
            if (orr_field_check(&fs->f[f], c->G, &fo, &fr, &err)) {
                orr_lua_fail(L, &err, "--verify");
                return;
            }
            orr_lua_verify_failures += !fr.ok;
            if (fr.ok)
                fprintf(stderr, "orrery: verify: field '%s' against itself (%d points from r = "
                        "%g to %g): a against -grad Phi %s, its jerk against d a/dt %s: ok\n",
                        fs->f[f].name, fr.compared, fo.rmin, fo.rmax,
                        fr.accel_checked ? "checked" : "not checked (no potential snippet)",
                        fr.jerk_checked ? "checked" : "not checked (no jerk snippet)");
            else
                fprintf(stderr, "orrery: verify: %s: FAILED\n", fr.message);
        }
        if (r.ok)
            fprintf(stderr, "orrery: verify: force law '%s' against itself (eps %g, %d "
                    "separations from %g to %g): f against the potential's derivative %s, g "
                    "against f's %s: ok\n", orr_sim_law(s)->name, o.eps, r.compared, o.rmin,
                    o.rmax, r.force_checked ? "checked" : "not checked (no potential snippet)",
                    r.jerk_checked ? "checked" : "not checked (no jerk snippet)");
        else
            fprintf(stderr, "orrery: verify: %s: FAILED\n", r.message);
    }
    fprintf(stderr, "orrery: verify (%s): %s %s '%s' vs cpu double: error %.3g over %ld "
            "bodies (tolerance %.0e): %s\n", when, orr_engine_backend_name(orr_sim_engine(s)),
            orr_precision_name(orr_sim_config_of(s)->precision), orr_sim_law(s)->name, e, ni, tol,
            ok ? "ok" : "FAILED");
}

/* core._verifying() -> boolean; core._verify(sim, when) reports when verifying */
static int l_verifying(lua_State *L)
{
    lua_pushboolean(L, orr_lua_verify_mode);
    return 1;
}

static int l_verify_report(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    if (orr_lua_verify_mode)
        orr_lua_verify_report(L, s, luaL_checkstring(L, 2));
    return 0;
}

static const luaL_Reg sim_methods[] = {
    {"set_attribute", sim_set_attribute},
    {"attribute", sim_attribute},
    {"set_param", sim_set_param},
    {"param", sim_param},
    {"params", sim_param},
    {"verify", sim_verify},
    {NULL, NULL},
};

/* A force law is a value: its parts are read, never set. */
static int force_newindex(lua_State *L)
{
    const orr_law *law = orr_lua_checklaw(L, 1);
    return orr_lua_error(L, "orrery.Force: force law '%s' cannot be changed (%s): make another "
                         "with orrery.force{base = ...}, or set a simulation's params with "
                         "sim:set_param", law->name, orr_lua_describe(L, 2));
}

static const luaL_Reg force_meta[] = {
    {"__gc", force_gc},
    {"__index", force_index},
    {"__newindex", force_newindex},
    {"__tostring", force_tostring},
    {NULL, NULL},
};

void orr_lua_open_force(lua_State *L)
{
    luaL_newmetatable(L, ORR_LUA_FORCE);
    luaL_setfuncs(L, force_meta, 0);
    lua_pop(L, 1);
    lua_pushcfunction(L, l_force);
    lua_setfield(L, -2, "force");
    lua_newtable(L);
    int n = 0;
    for (const char *const *b = orr_law_builtin_names(); *b; b++) {
        lua_pushstring(L, *b);
        lua_rawseti(L, -2, ++n);
    }
    lua_setfield(L, -2, "forces");
    lua_pushcfunction(L, l_verifying);
    lua_setfield(L, -2, "_verifying");
    lua_pushcfunction(L, l_verify_report);
    lua_setfield(L, -2, "_verify");
    lua_getfield(L, -1, "Sim");   /* the Sim methods table (orr_lua_open_sim ran first) */
    luaL_setfuncs(L, sim_methods, 0);
    lua_pop(L, 1);
}
