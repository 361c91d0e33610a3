/* lorrery: module "orrery.core", the C part of `require "orrery"` (the Lua
 * part, lua/orrery/init.lua, adds to it), and the helpers the binding's C
 * files share: errors positioned at the user's line, value descriptions for
 * messages, option-table key checks. */
#include "lorrery.h"
#include "lview.h"
#include "tunestore.h"
#include "util.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef ORR_VERSION
#define ORR_VERSION "dev"
#endif

volatile int *orr_lua_stop = NULL;
orr_comm *orr_lua_comm = NULL;

int orr_lua_rank0(void)
{
    return !orr_lua_comm || orr_comm_rank(orr_lua_comm) == 0;
}

static orr_seen_lines notes_seen;   /* the note lines shown so far */

void orr_lua_note(const char *text)
{
    if (!text || !orr_lua_rank0())
        return;
    while (*text) {   /* a line per entry (util.h), each shown once */
        size_t len = strcspn(text, "\n");
        if (orr_line_is_new(&notes_seen, text, len)) {
            fprintf(stderr, "orrery: note: %.*s\n", (int)len, text);
            fflush(stderr);
        }
        text += len + (text[len] == '\n');
    }
}

/* The tuning store's lock held by another process: said as the wait
 * begins (the note after it says how it ended). */
static void store_wait(const char *msg, void *ctx)
{
    (void)ctx;
    orr_lua_note(msg);
}

/* ---- shared helpers -------------------------------------------------------- */

/* "file.lua:12: " of the innermost Lua function that is not part of the
 * embedded library (chunk names "=orrery/..."), or "".  Level 0 counts: in
 * a hook it is the Lua function that was running; C functions are skipped. */
int orr_lua_caller(lua_State *L, lua_Debug *ar)
{
    for (int level = 0; lua_getstack(L, level, ar); level++) {
        lua_getinfo(L, "Sl", ar);
        if (ar->currentline > 0 && strncmp(ar->source, "=orrery/", 8) != 0)
            return 1;
    }
    return 0;
}

static void push_where(lua_State *L)
{
    lua_Debug ar;
    if (orr_lua_caller(L, &ar))
        lua_pushfstring(L, "%s:%d: ", orr_lua_chunkname(&ar), ar.currentline);
    else
        lua_pushliteral(L, "");
}

int orr_lua_error(lua_State *L, const char *fmt, ...)
{
    va_list ap;
    push_where(L);
    va_start(ap, fmt);
    lua_pushvfstring(L, fmt, ap);
    va_end(ap);
    lua_concat(L, 2);
    return lua_error(L);
}

char orr_lua_shared_error[1200];

int orr_lua_fail(lua_State *L, orr_error *err, const char *prefix)
{
    luaL_Buffer b;
    if (err->code == ORR_ERR_INTERRUPTED)
        lua_sethook(L, NULL, 0, 0);   /* the runner's Ctrl-C hook has done its job */
    luaL_buffinit(L, &b);
    if (prefix) {
        luaL_addstring(&b, prefix);
        luaL_addstring(&b, ": ");
    }
    luaL_addstring(&b, err->code == ORR_ERR_INTERRUPTED ? "interrupted" : err->msg);
    if (err->code != ORR_ERR_INTERRUPTED && err->log && *err->log) {
        size_t len = strlen(err->log);
        luaL_addchar(&b, '\n');
        luaL_addlstring(&b, err->log, err->log[len - 1] == '\n' ? len - 1 : len);
    }
    luaL_pushresult(&b);
    if (err->shared)
        snprintf(orr_lua_shared_error, sizeof orr_lua_shared_error, "%s", lua_tostring(L, -1));
    orr_error_clear(err);
    return orr_lua_error(L, "%s", lua_tostring(L, -1));
}

const char *orr_lua_describe(lua_State *L, int idx)
{
    switch (lua_type(L, idx)) {
    case LUA_TSTRING: {
        size_t len;
        const char *s = lua_tolstring(L, idx, &len);
        luaL_Buffer b;
        luaL_buffinit(L, &b);
        luaL_addchar(&b, '"');
        luaL_addlstring(&b, s, len > 40 ? 37 : len);
        luaL_addstring(&b, len > 40 ? "...\"" : "\"");
        luaL_pushresult(&b);
        return lua_tostring(L, -1);
    }
    case LUA_TNUMBER:
        if (isnan(lua_tonumber(L, idx)))
            return lua_pushliteral(L, "nan");
        return luaL_tolstring(L, idx, NULL);
    case LUA_TBOOLEAN:
        return lua_pushstring(L, lua_toboolean(L, idx) ? "true" : "false");
    case LUA_TUSERDATA: {
        int t = luaL_getmetafield(L, idx, "__name");
        if (t == LUA_TSTRING)
            return lua_tostring(L, -1);
        if (t != LUA_TNIL)
            lua_pop(L, 1);
        return lua_pushstring(L, "userdata");
    }
    default:
        return lua_pushstring(L, luaL_typename(L, idx));
    }
}

const char *orr_lua_float_range(lua_State *L, const orr_sim *s, const char *what, double v)
{
    if (ORR_STORED_DOUBLE(orr_sim_config_of(s)->precision) || fabs(v) <= FLT_MAX)
        return NULL;
    char num[32], lim[32];
    snprintf(num, sizeof num, "%.14g", v);
    snprintf(lim, sizeof lim, "%.9g", FLT_MAX);
    return lua_pushfstring(L, "%s = %s is beyond the float range (at most %s in magnitude; "
                           "precision \"double\" holds it)", what, num, lim);
}

double orr_lua_checkfinite(lua_State *L, int idx, const char *who, const char *key,
                           const char *what)
{
    if (lua_type(L, idx) == LUA_TNUMBER) {
        double v = lua_tonumber(L, idx);
        if (isfinite(v))
            return v;
    }
    idx = lua_absindex(L, idx);
    return orr_lua_error(L, "%s: '%s' must be %s (got %s)", who, key, what,
                         orr_lua_describe(L, idx));
}

void orr_lua_checkkeys(lua_State *L, int t, const char *who, const char *const *keys, int list)
{
    t = lua_absindex(L, t);
    lua_pushnil(L);
    while (lua_next(L, t)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING) {
            const char *k = lua_tostring(L, -1);
            int found = 0;
            for (int i = 0; keys[i] && !found; i++)
                found = strcmp(keys[i], k) == 0;
            if (found)
                continue;
            lua_pushfstring(L, "%s: unknown key '%s'", who, k);
        } else {
            lua_pushfstring(L, "%s: unknown key [%s]", who, orr_lua_describe(L, -1));
        }
        if (list) {
            luaL_Buffer b;
            luaL_buffinit(L, &b);
            luaL_addstring(&b, " (valid: ");
            for (int i = 0; keys[i]; i++) {
                if (i)
                    luaL_addstring(&b, ", ");
                luaL_addstring(&b, keys[i]);
            }
            luaL_addstring(&b, ")");
            luaL_pushresult(&b);
            lua_concat(L, 2);
        }
        orr_lua_error(L, "%s", lua_tostring(L, -1));
    }
}

/* ---- module functions ------------------------------------------------------ */

/* orrery._isatty(fd) -> boolean: for the progress bar (stderr only when it
 * is a terminal). */
static int l_isatty(lua_State *L)
{
    lua_Integer fd = luaL_checkinteger(L, 1);
    luaL_argcheck(L, fd >= 0 && fd <= INT_MAX, 1, "file descriptor out of range");
    lua_pushboolean(L, isatty((int)fd));
    return 1;
}

/* orrery._clock() -> seconds on a monotonic wall clock (os.clock counts the
 * CPU time of every thread). */
static int l_clock(lua_State *L)
{
    lua_pushnumber(L, (lua_Number)orr_now_s());
    return 1;
}

/* orrery._agree(v) -> rank 0's v (a boolean or a number) on every rank:
 * for decisions that every rank must take alike (how many steps before the
 * next progress update, whether to stop), since each is a collective. */
static int l_agree(lua_State *L)
{
    double v = lua_isboolean(L, 1) ? lua_toboolean(L, 1) : luaL_checknumber(L, 1);
    orr_error err = {0};
    if (orr_comm_bcast(orr_lua_comm, &v, sizeof v, 0, &err))
        return orr_lua_fail(L, &err, NULL);
    if (lua_isboolean(L, 1))
        lua_pushboolean(L, v != 0);
    else
        lua_pushnumber(L, v);
    return 1;
}

/* orrery._time_tolerance(dt, t, t_end) -> how near t_end a clock at t
 * counts as there (orr_sim_time_tolerance): sim:run{until=} decides its
 * shortened last step with sim:advance's test. */
static int l_time_tolerance(lua_State *L)
{
    lua_pushnumber(L, orr_sim_time_tolerance(luaL_checknumber(L, 1), luaL_checknumber(L, 2),
                                             luaL_checknumber(L, 3)));
    return 1;
}

const char *orr_lua_number(char *buf, size_t size, double x)
{
    return orr_shortest(buf, size, x);
}

static const luaL_Reg funcs[] = {
    {"_isatty", l_isatty},
    {"_time_tolerance", l_time_tolerance},
    {"_clock", l_clock},
    {"_agree", l_agree},
    {NULL, NULL},
};

int orr_lua_open_core(lua_State *L)
{
    orr_error err = {0};
    if (!orr_lua_comm && orr_comm_world(&orr_lua_comm, &err))
        return orr_lua_fail(L, &err, NULL);
    orr_tune_store_on_wait(store_wait, NULL);
    luaL_newlib(L, funcs);
    lua_pushliteral(L, ORR_VERSION);
    lua_setfield(L, -2, "version");
    lua_pushinteger(L, orr_comm_rank(orr_lua_comm));
    lua_setfield(L, -2, "rank");
    lua_pushinteger(L, orr_comm_size(orr_lua_comm));
    lua_setfield(L, -2, "ranks");
    orr_lua_open_buffer(L);
    orr_lua_open_sim(L);
    orr_lua_open_io(L);
    orr_lua_open_force(L);
    orr_lua_open_field(L);
    orr_lua_open_ic(L);
    orr_lua_open_fewbody(L);
    orr_lua_open_view(L);
    return 1;
}
