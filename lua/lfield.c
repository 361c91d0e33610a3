/* lfield: external fields in Lua.  orrery.field{} defines a field from its
 * potential (an expression of x, y, z, t) or from C snippets, or
 * (orrery.field("name", {params}) or orrery.field{base = "name", ...})
 * takes a built-in one, as an orrery.Field value; orrery.fields lists the
 * built-in fields; orrery.simulation{fields = {...}} takes any number of
 * them (fields and built-in names).  Their params are the simulation's
 * "FIELD.PARAM" params (sim:set_param, sim:param: lforce.c). */
#include "lorrery.h"
#include "field.h"
#include "fieldcheck.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WHO "orrery.field"

typedef struct {
    orr_field f;   /* zeroed until filled; __gc frees its snippets */
} lfield;

static int field_gc(lua_State *L)
{
    lfield *p = luaL_checkudata(L, 1, ORR_LUA_FIELD);
    orr_field_free(&p->f);
    return 0;
}

static orr_field *push_field(lua_State *L)
{
    lfield *p = lua_newuserdatauv(L, sizeof *p, 0);
    memset(p, 0, sizeof *p);
    luaL_setmetatable(L, ORR_LUA_FIELD);
    return &p->f;
}

static const orr_field *checkfield(lua_State *L, int idx)
{
    return &((lfield *)luaL_checkudata(L, idx, ORR_LUA_FIELD))->f;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* params = {name = number}: added (add) or set, in name order. */
static void apply_params(lua_State *L, int t, orr_field *f, int add)
{
    t = lua_absindex(L, t);
    if (lua_type(L, t) != LUA_TTABLE)
        orr_lua_error(L, WHO ": 'params' must be a table of name = number (got %s)",
                      orr_lua_describe(L, t));
    const char *names[ORR_FIELD_MAX_PARAMS + 1];
    int n = 0;
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING || strlen(lua_tostring(L, -1)) != lua_rawlen(L, -1))
            orr_lua_error(L, WHO ": 'params' keys must be param names (got %s)",
                          orr_lua_describe(L, -1));
        if (n > ORR_FIELD_MAX_PARAMS)
            orr_lua_error(L, WHO ": too many params (at most %d)", ORR_FIELD_MAX_PARAMS);
        names[n++] = lua_tostring(L, -1);
    }
    qsort(names, (size_t)n, sizeof names[0], by_name);
    for (int k = 0; k < n; k++) {
        lua_getfield(L, t, names[k]);
        if (lua_type(L, -1) != LUA_TNUMBER || !isfinite(lua_tonumber(L, -1)))
            orr_lua_error(L, WHO ": param '%s' must be a finite number (got %s)", names[k],
                          orr_lua_describe(L, -1));
        orr_error err = {0};
        const double v = lua_tonumber(L, -1);
        if (add ? orr_field_add_param(f, names[k], v, &err)
                : orr_field_set_param(f, names[k], v, &err))
            orr_lua_fail(L, &err, WHO);
        lua_pop(L, 1);
    }
}

static void runtime_params(lua_State *L, int t, orr_field *f)
{
    if (lua_getfield(L, t, "runtime_params") == LUA_TNIL) {
        lua_pop(L, 1);
        return;
    }
    if (lua_type(L, -1) != LUA_TTABLE)
        orr_lua_error(L, WHO ": 'runtime_params' must be a list of names (got %s)",
                      orr_lua_describe(L, -1));
    const lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    for (lua_Integer k = 1; k <= n; k++) {
        if (lua_rawgeti(L, -1, k) != LUA_TSTRING)
            orr_lua_error(L, WHO ": 'runtime_params'[%I] must be a name (got %s)", k,
                          orr_lua_describe(L, -1));
        orr_error err = {0};
        if (orr_field_set_runtime(f, lua_tostring(L, -1), &err))
            orr_lua_fail(L, &err, WHO);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* t[key] as a string or NULL; *len its length (a NUL inside is refused
 * at its line by orr_snippet_check_bytes, or here for the names). */
static const char *opt_string(lua_State *L, int t, const char *key, size_t *len)
{
    const int type = lua_getfield(L, t, key);
    if (type != LUA_TNIL && type != LUA_TSTRING)
        orr_lua_error(L, WHO ": '%s' must be a string (got %s)", key, orr_lua_describe(L, -1));
    size_t n = 0;
    const char *s = type == LUA_TSTRING ? lua_tolstring(L, -1, &n) : NULL;
    if (s && !len && strlen(s) != n)
        orr_lua_error(L, WHO ": '%s' has a NUL byte (what follows it would be dropped)", key);
    if (len)
        *len = n;
    lua_pop(L, 1);
    return s;
}

/* orrery.field{...}, orrery.field("name" [, params]) */
static int l_field(lua_State *L)
{
    static const char *const keys[] = {"name", "base", "doc", "params", "runtime_params",
                                       "potential", "accel", "jerk", NULL};
    orr_error err = {0};
    if (lua_type(L, 1) == LUA_TSTRING) {   /* a built-in, its params changed */
        lua_settop(L, 2);
        orr_field *f = push_field(L);
        if (orr_field_builtin(lua_tostring(L, 1), f, &err))
            orr_lua_fail(L, &err, WHO);
        if (!lua_isnil(L, 2))
            apply_params(L, 2, f, 0);
        return 1;
    }
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    orr_lua_checkkeys(L, 1, WHO, keys, 1);
    size_t alen = 0, plen = 0, jlen = 0;
    const char *name = opt_string(L, 1, "name", NULL), *base = opt_string(L, 1, "base", NULL);
    const char *doc = opt_string(L, 1, "doc", NULL);
    const char *accel = opt_string(L, 1, "accel", &alen);
    const char *potential = opt_string(L, 1, "potential", &plen);
    const char *jerk = opt_string(L, 1, "jerk", &jlen);
    lua_Debug ar;
    const char *origin = orr_lua_caller(L, &ar)
                             ? lua_pushfstring(L, "%s:%d", orr_lua_chunkname(&ar), ar.currentline)
                             : lua_pushstring(L, "?");   /* index 2 */
    orr_field *f = push_field(L);                        /* index 3 */
    if (base) {
        if (accel || potential || jerk)
            orr_lua_error(L, WHO ": '%s' cannot be combined with 'base' (a field derived from "
                          "'%s' keeps its code)", accel ? "accel" : potential ? "potential"
                                                                              : "jerk", base);
        if (orr_field_builtin(base, f, &err))
            orr_lua_fail(L, &err, WHO);
        if (name) {
            if (!*name || strlen(name) >= sizeof f->name ||
                strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(name))
                orr_lua_error(L, WHO ": invalid field name \"%s\" (lowercase letters, digits, "
                              "'_')", name);
            snprintf(f->name, sizeof f->name, "%s", name);
        }
        if (lua_getfield(L, 1, "params") != LUA_TNIL)
            apply_params(L, -1, f, 0);
        lua_pop(L, 1);
        runtime_params(L, 1, f);
    } else {
        if (!name)
            orr_lua_error(L, WHO ": 'name' is required (or 'base', a built-in field to start "
                          "from)");
        if (!accel && !potential)
            orr_lua_error(L, WHO ": 'potential' is required: the potential per unit mass as an "
                          "expression of x, y, z, t (or 'accel': C code that sets ax, ay, az)");
        if (orr_field_init(f, name, origin, &err))
            orr_lua_fail(L, &err, WHO);
        char label[96];
        snprintf(label, sizeof label, "field '%s'", f->name);
        const char *code[3] = {accel, potential, jerk};
        const size_t len[3] = {alen, plen, jlen};
        static const char *const what[3] = {"accel", "potential", "jerk"};
        for (int k = 0; k < 3; k++)
            if (code[k] && orr_snippet_check_bytes(origin, label, 0, what[k], code[k], len[k], 1,
                                                   &err))
                orr_lua_fail(L, &err, WHO);
        if (lua_getfield(L, 1, "params") != LUA_TNIL)
            apply_params(L, -1, f, 1);
        lua_pop(L, 1);
        runtime_params(L, 1, f);   /* named before the expression reads them */
        if (accel) {   /* C snippets: potential and jerk too, where given */
            if (orr_field_set_code(f, accel, potential, jerk, &err))
                orr_lua_fail(L, &err, WHO);
        } else {
            if (jerk)
                orr_lua_error(L, WHO ": 'jerk' comes with 'accel' (C snippets); a potential "
                              "expression gives its own jerk");
            if (orr_field_set_expr(f, potential, 1, &err))
                orr_lua_fail(L, &err, WHO);
        }
    }
    if (doc)
        snprintf(f->doc, sizeof f->doc, "%s", doc);
    if (orr_field_validate(f, &err))
        orr_lua_fail(L, &err, WHO);
    return 1;
}

/* A holder of a simulation's fields (orr_lua_sim_fields): a userdata with
 * __gc, so an error between reading them and making the simulation frees
 * them. */
#define ORR_LUA_FIELDSET "orrery.FieldSet"
static int fieldset_gc(lua_State *L)
{
    orr_fieldset_free(luaL_checkudata(L, 1, ORR_LUA_FIELDSET));
    return 0;
}

const orr_fieldset *orr_lua_sim_fields(lua_State *L, int t, const char *who)
{
    t = lua_absindex(L, t);
    if (lua_getfield(L, t, "fields") == LUA_TNIL) {
        lua_pop(L, 1);
        return NULL;
    }
    if (lua_type(L, -1) != LUA_TTABLE)
        orr_lua_error(L, "%s: 'fields' must be a list of fields (orrery.field values or "
                      "built-in names) (got %s)", who, orr_lua_describe(L, -1));
    const lua_Integer len = (lua_Integer)lua_rawlen(L, -1);
    for (lua_pushnil(L); lua_next(L, -2); lua_pop(L, 1))   /* a list: keys 1..len alone */
        if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1 || lua_tointeger(L, -2) > len) {
            lua_pushvalue(L, -2);
            orr_lua_error(L, "%s: 'fields' must be a list of fields (orrery.field values or "
                          "built-in names), not a table with the key %s (a built-in with "
                          "params: orrery.field(\"plummer\", {M = 5}))", who,
                          orr_lua_describe(L, -1));
        }
    orr_fieldset *s = lua_newuserdatauv(L, sizeof *s, 0);   /* fields, holder */
    s->n = 0;
    luaL_setmetatable(L, ORR_LUA_FIELDSET);
    const lua_Integer n = (lua_Integer)lua_rawlen(L, -2);
    for (lua_Integer k = 1; k <= n; k++) {
        const int type = lua_rawgeti(L, -2, k);
        orr_error err = {0};
        if (type == LUA_TSTRING) {
            orr_field f;
            if (orr_field_builtin(lua_tostring(L, -1), &f, &err))
                orr_lua_fail(L, &err, who);
            const orr_status st = orr_fieldset_add(s, &f, &err);
            orr_field_free(&f);
            if (st)
                orr_lua_fail(L, &err, who);
        } else if (luaL_testudata(L, -1, ORR_LUA_FIELD)) {
            if (orr_fieldset_add(s, checkfield(L, -1), &err))
                orr_lua_fail(L, &err, who);
        } else {
            orr_lua_error(L, "%s: 'fields'[%I] must be an orrery.field value or a built-in "
                          "field's name (got %s)", who, k, orr_lua_describe(L, -1));
        }
        lua_pop(L, 1);
    }
    lua_remove(L, -2);
    return s;
}

/* ---- orrery.Field ---------------------------------------------------------------- */

static void push_params(lua_State *L, const orr_field *f)
{
    lua_createtable(L, 0, f->nparams);
    for (int k = 0; k < f->nparams; k++) {
        lua_pushnumber(L, f->params[k].value);
        lua_setfield(L, -2, f->params[k].name);
    }
}

/* field:check{t =, rmin =, rmax =, samples =, tol =} -> {ok =, message =,
 * compared =, skipped =, accel = {checked =, max_rel =}, jerk = {...}} */
static int field_check(lua_State *L)
{
    const orr_field *f = checkfield(L, 1);
    static const char *const WHOC = "field:check";
    orr_fieldcheck_opts o;
    orr_fieldcheck_default(&o);
    double G = 1;
    if (!lua_isnoneornil(L, 2)) {
        static const char *const keys[] = {"G", "t", "rmin", "rmax", "samples", "tol", NULL};
        luaL_checktype(L, 2, LUA_TTABLE);
        orr_lua_checkkeys(L, 2, WHOC, keys, 1);
        double *const slot[] = {&G, &o.t, &o.rmin, &o.rmax, NULL, &o.tol};
        for (int k = 0; keys[k]; k++) {
            if (!slot[k])
                continue;
            if (lua_getfield(L, 2, keys[k]) != LUA_TNIL)
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
    }
    orr_fieldcheck_result r;
    orr_error err = {0};
    if (orr_field_check(f, G, &o, &r, &err))
        return orr_lua_fail(L, &err, WHOC);
    lua_createtable(L, 0, 6);
    lua_pushboolean(L, r.ok);
    lua_setfield(L, -2, "ok");
    lua_pushstring(L, r.message);
    lua_setfield(L, -2, "message");
    lua_pushinteger(L, r.compared);
    lua_setfield(L, -2, "compared");
    lua_pushinteger(L, r.skipped);
    lua_setfield(L, -2, "skipped");
    for (int k = 0; k < 2; k++) {
        lua_createtable(L, 0, 2);
        lua_pushboolean(L, k ? r.jerk_checked : r.accel_checked);
        lua_setfield(L, -2, "checked");
        lua_pushnumber(L, k ? r.jerk_err : r.accel_err);
        lua_setfield(L, -2, "max_rel");
        lua_setfield(L, -2, k ? "jerk" : "accel");
    }
    return 1;
}

static int field_index(lua_State *L)
{
    const orr_field *f = checkfield(L, 1);
    const char *key = luaL_checkstring(L, 2);
    static const char *const strs[] = {"name", "doc", "origin", "accel", "potential", "jerk",
                                       "expr", NULL};
    const char *const vals[] = {f->name, f->doc, f->origin, f->accel, f->potential, f->jerk,
                                f->expr};
    for (int k = 0; strs[k]; k++)
        if (strcmp(key, strs[k]) == 0) {
            lua_pushstring(L, vals[k]);
            return 1;
        }
    if (strcmp(key, "builtin") == 0)
        lua_pushboolean(L, f->builtin);
    else if (strcmp(key, "params") == 0)
        push_params(L, f);
    else if (strcmp(key, "check") == 0)
        lua_pushcfunction(L, field_check);
    else if (strcmp(key, "runtime_params") == 0) {
        lua_newtable(L);
        int n = 0;
        for (int k = 0; k < f->nparams; k++)
            if (f->params[k].runtime) {
                lua_pushstring(L, f->params[k].name);
                lua_rawseti(L, -2, ++n);
            }
    } else
        lua_pushnil(L);
    return 1;
}

static int field_tostring(lua_State *L)
{
    const orr_field *f = checkfield(L, 1);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    lua_pushfstring(L, "orrery.Field (%s", f->name);
    luaL_addvalue(&b);
    for (int k = 0; k < f->nparams; k++) {
        lua_pushfstring(L, "%s%s=%f%s", k ? ", " : "; ", f->params[k].name, f->params[k].value,
                        f->params[k].runtime ? " (runtime)" : "");
        luaL_addvalue(&b);
    }
    luaL_addchar(&b, ')');
    luaL_pushresult(&b);
    return 1;
}

/* A field is a value: its parts are read, never set. */
static int field_newindex(lua_State *L)
{
    const orr_field *f = checkfield(L, 1);
    return orr_lua_error(L, "orrery.Field: field '%s' cannot be changed (%s): make another with "
                         "orrery.field{...}, or set a simulation's params with sim:set_param",
                         f->name, orr_lua_describe(L, 2));
}

static const luaL_Reg field_meta[] = {
    {"__gc", field_gc},
    {"__index", field_index},
    {"__newindex", field_newindex},
    {"__tostring", field_tostring},
    {NULL, NULL},
};

void orr_lua_open_field(lua_State *L)
{
    luaL_newmetatable(L, ORR_LUA_FIELD);
    luaL_setfuncs(L, field_meta, 0);
    lua_pop(L, 1);
    luaL_newmetatable(L, ORR_LUA_FIELDSET);
    lua_pushcfunction(L, fieldset_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    lua_pushcfunction(L, l_field);
    lua_setfield(L, -2, "field");
    lua_newtable(L);
    int n = 0;
    for (const char *const *b = orr_field_builtin_names(); *b; b++) {
        lua_pushstring(L, *b);
        lua_rawseti(L, -2, ++n);
    }
    lua_setfield(L, -2, "fields");
}
