/* lsource: scripts named in full in messages.  Wherever Lua writes a
 * position (error messages, tracebacks, short_src) it shortens a file chunk
 * name "@path" longer than LUA_IDSIZE - 1 bytes to "..." and the path's
 * last LUA_IDSIZE - 4 bytes, so a script in a deep directory would be named
 * ".../deep/dir/my.lua:3: boom".  orrery names it the way the user wrote
 * it: every file chunk loaded (the script, dofile, loadfile, load with an
 * "@" name, require) is recorded with its shortened form, and the messages
 * a script or the user sees (pcall, xpcall, coroutine.resume and close,
 * debug.traceback, the runner's reports) have each shortened form that is
 * followed by ':' replaced by the full name. */
#include "lorrery.h"

#include <lualib.h>
#include <string.h>

#define SOURCES "orrery.sources"          /* registry: shortened -> full (false: two) */
#define SHORT_LEN (LUA_IDSIZE - 1)        /* a shortened name: "..." + tail */
#define TAIL_LEN (LUA_IDSIZE - 4)

const char *orr_lua_chunkname(const lua_Debug *ar)
{
    if (ar->source && (ar->source[0] == '@' || ar->source[0] == '='))
        return ar->source + 1;
    return ar->short_src;
}

void orr_lua_source_add(lua_State *L, const char *chunkname)
{
    size_t len = chunkname ? strlen(chunkname) : 0;
    if (len <= LUA_IDSIZE || chunkname[0] != '@')
        return;   /* Lua writes it in full */
    char shortened[SHORT_LEN + 1];
    memcpy(shortened, "...", 3);
    memcpy(shortened + 3, chunkname + len - TAIL_LEN, TAIL_LEN);
    shortened[SHORT_LEN] = '\0';
    luaL_getsubtable(L, LUA_REGISTRYINDEX, SOURCES);
    int known = lua_getfield(L, -1, shortened);
    if (known == LUA_TNIL)
        lua_pushstring(L, chunkname + 1);
    else if (known == LUA_TSTRING && strcmp(lua_tostring(L, -1), chunkname + 1) != 0)
        lua_pushboolean(L, 0);   /* two paths, one shortened form: left as Lua wrote it */
    else
        lua_pushnil(L);
    if (!lua_isnil(L, -1))
        lua_setfield(L, -3, shortened);
    else
        lua_pop(L, 1);
    lua_pop(L, 2);
}

/* Adds "@" name (a file name) with orr_lua_source_add. */
static void add_file(lua_State *L, const char *name)
{
    if (name == NULL)
        return;
    lua_pushfstring(L, "@%s", name);
    orr_lua_source_add(L, lua_tostring(L, -1));
    lua_pop(L, 1);
}

const char *orr_lua_source_expand(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) != LUA_TSTRING) {
        lua_pushvalue(L, idx);
        return NULL;
    }
    size_t len;
    const char *s = lua_tolstring(L, idx, &len), *end = s + len;
    if (lua_getfield(L, LUA_REGISTRYINDEX, SOURCES) != LUA_TTABLE ||
        memmem(s, len, "...", 3) == NULL) {
        lua_pop(L, 1);
        lua_pushvalue(L, idx);
        return s;
    }
    int t = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    const char *p = s, *q;
    while ((q = memmem(p, (size_t)(end - p), "...", 3)) != NULL) {
        const char *full = NULL;
        if (end - q > SHORT_LEN && q[SHORT_LEN] == ':') {
            lua_pushlstring(L, q, SHORT_LEN);
            lua_rawget(L, t);
            full = lua_tostring(L, -1);   /* NULL for nil and false; the table keeps it */
            lua_pop(L, 1);
        }
        if (full) {
            luaL_addlstring(&b, p, (size_t)(q - p));
            luaL_addstring(&b, full);
            p = q + SHORT_LEN;
        } else {
            luaL_addlstring(&b, p, (size_t)(q + 1 - p));
            p = q + 1;
        }
    }
    luaL_addlstring(&b, p, (size_t)(end - p));
    luaL_pushresult(&b);
    lua_remove(L, t);
    return lua_tostring(L, -1);
}

/* ---- the standard functions that load files or hand messages on ---------- */

/* pcall and xpcall, as the base library's, with the message of a failure
 * expanded (for xpcall: what the handler returned). */
static int finish_pcall(lua_State *L, int status, lua_KContext extra)
{
    if (status != LUA_OK && status != LUA_YIELD) {
        lua_pushboolean(L, 0);
        orr_lua_source_expand(L, -2);
        return 2;
    }
    return lua_gettop(L) - (int)extra;
}

static int l_pcall(lua_State *L)
{
    luaL_checkany(L, 1);
    lua_pushboolean(L, 1);   /* the first result when it succeeds */
    lua_insert(L, 1);
    int st = lua_pcallk(L, lua_gettop(L) - 2, LUA_MULTRET, 0, 0, finish_pcall);
    return finish_pcall(L, st, 0);
}

static int l_xpcall(lua_State *L)
{
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushboolean(L, 1);
    lua_pushvalue(L, 1);
    lua_rotate(L, 3, 2);   /* f, handler, true, f, args... */
    int st = lua_pcallk(L, n - 2, LUA_MULTRET, 2, 2, finish_pcall);
    return finish_pcall(L, st, 2);
}

/* coroutine.resume and coroutine.close: the original (upvalue 1), then a
 * failure's message expanded. */
static int l_resume(lua_State *L)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    if (lua_gettop(L) >= 2 && !lua_toboolean(L, 1)) {
        orr_lua_source_expand(L, 2);
        lua_replace(L, 2);
    }
    return lua_gettop(L);
}

/* debug.traceback([thread,] [message [, level]]), expanded. */
static int l_traceback(lua_State *L)
{
    lua_State *L1 = L;
    int arg = 0;
    if (lua_type(L, 1) == LUA_TTHREAD) {
        L1 = lua_tothread(L, 1);
        arg = 1;
    }
    const char *msg = lua_tostring(L, arg + 1);
    if (msg == NULL && !lua_isnoneornil(L, arg + 1)) {
        lua_pushvalue(L, arg + 1);   /* not a string: returned untouched */
        return 1;
    }
    int level = (int)luaL_optinteger(L, arg + 2, L == L1 ? 1 : 0);
    luaL_traceback(L, L1, msg, level);
    orr_lua_source_expand(L, -1);
    return 1;
}

/* loadfile and load: the name recorded, then the original (upvalue 1). */
static int l_loadfile(lua_State *L)
{
    add_file(L, luaL_optstring(L, 1, NULL));
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static int l_load(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TSTRING)
        orr_lua_source_add(L, lua_tostring(L, 2));
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* dofile: loads (the name recorded) and runs the file in this frame, so
 * tracebacks read as under the base library's. */
static int dofile_done(lua_State *L, int status, lua_KContext ctx)
{
    (void)status;
    (void)ctx;
    return lua_gettop(L) - 1;
}

static int l_dofile(lua_State *L)
{
    const char *name = luaL_optstring(L, 1, NULL);
    lua_settop(L, 1);
    add_file(L, name);
    if (luaL_loadfile(L, name) != LUA_OK)
        return lua_error(L);
    lua_callk(L, 0, LUA_MULTRET, 0, dofile_done);
    return dofile_done(L, LUA_OK, 0);
}

/* require's searcher of Lua files: records the file that
 * package.searchpath(name, package.path) finds (upvalue 2: package), then
 * the original searcher (upvalue 1). */
static int l_search_lua(lua_State *L)
{
    luaL_checkstring(L, 1);
    lua_settop(L, 1);
    lua_getfield(L, lua_upvalueindex(2), "searchpath");
    lua_pushvalue(L, 1);
    lua_getfield(L, lua_upvalueindex(2), "path");
    if (lua_pcall(L, 2, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING)
        add_file(L, lua_tostring(L, -1));
    lua_settop(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, 1, LUA_MULTRET);
    return lua_gettop(L);
}

/* t[name] = closure of f with t[name] (the original) as its upvalue. */
static void wrap(lua_State *L, int t, const char *name, lua_CFunction f)
{
    lua_getfield(L, t, name);
    lua_pushcclosure(L, f, 1);
    lua_setfield(L, t, name);
}

void orr_lua_source_install(lua_State *L)
{
    lua_pushglobaltable(L);
    int g = lua_gettop(L);
    lua_pushcfunction(L, l_pcall);
    lua_setfield(L, g, "pcall");
    lua_pushcfunction(L, l_xpcall);
    lua_setfield(L, g, "xpcall");
    lua_pushcfunction(L, l_dofile);
    lua_setfield(L, g, "dofile");
    wrap(L, g, "loadfile", l_loadfile);
    wrap(L, g, "load", l_load);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    int loaded = lua_gettop(L);
    if (lua_getfield(L, loaded, LUA_COLIBNAME) == LUA_TTABLE) {
        wrap(L, lua_gettop(L), "resume", l_resume);
        wrap(L, lua_gettop(L), "close", l_resume);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, loaded, LUA_DBLIBNAME) == LUA_TTABLE) {
        lua_pushcfunction(L, l_traceback);
        lua_setfield(L, -2, "traceback");
    }
    lua_pop(L, 1);
    if (lua_getfield(L, loaded, LUA_LOADLIBNAME) == LUA_TTABLE &&
        lua_getfield(L, -1, "searchers") == LUA_TTABLE &&
        lua_rawgeti(L, -1, 2) == LUA_TFUNCTION) {
        lua_pushvalue(L, -3);   /* package */
        lua_pushcclosure(L, l_search_lua, 2);
        lua_rawseti(L, -2, 2);
    }
    lua_settop(L, g - 1);
}
