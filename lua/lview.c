/* lview: the live view's C side in the Lua layer (lua/orrery/view.lua has
 * the rest: sim:view{}, the poll between steps, pause and the controls).
 *   core._view_start{host=, port=, max_fps=, max_clients=, who=} -> orrery.View
 *       (owns an orr_view, io/view.h, serving the embedded page
 *       orr_view_page); methods url, poll, wait(ms), take, watched(s), close
 *   core._view_frame(view|nil, sim, json, first, stride, count): the sim's
 *       subsample (orr_sim_sample: collective over ranks), published on the
 *       view where there is one (rank 0)
 *   core._view_attr(sim, name): a force-law attribute's index
 *   core._view_mark(sim|nil, pending): which simulation's steps call the
 *       poll (orr_lua_view_after), and whether a new one should (--view)
 *   core._view_set_poll(fn): the poll orr_lua_view_after calls
 *   core._view_png(sim, path): the page's PNG button, on rank 0: a
 *       1024x1024 picture written now on this thread, with a view of its
 *       own (the simulation's frames keep theirs and their numbering), its
 *       failure raised here
 *   core._view_port: the port of `orrery run --view[=PORT]`, or nil */
#include "lorrery.h"
#include "lview.h"
#include "law.h"
#include "render.h"
#include "view.h"

#include <stdlib.h>
#include <string.h>

#define VIEW_MT "orrery.View"
#define POLL_KEY "orrery.view.poll"

extern const orr_ksrc_file orr_view_page[];

int orr_lua_view_port = -1;
static const void *viewed;   /* the Sim userdata whose steps call the poll */
static int pending;          /* --view: a simulation not yet viewed calls it too */

typedef struct {
    orr_view *v;
    float *buf;
    size_t cap;   /* floats */
} lview;

void orr_lua_view_after(lua_State *L, int sim)
{
    if (!pending && lua_touserdata(L, sim) != viewed)
        return;
    sim = lua_absindex(L, sim);
    if (lua_getfield(L, LUA_REGISTRYINDEX, POLL_KEY) != LUA_TFUNCTION) {
        lua_pop(L, 1);
        return;
    }
    lua_pushvalue(L, sim);
    lua_call(L, 1, 0);
}

static lview *checkview(lua_State *L, int arg)
{
    lview *p = luaL_checkudata(L, arg, VIEW_MT);
    if (!p->v)
        orr_lua_error(L, "orrery.View: the view is closed");
    return p;
}

static int opt_int(lua_State *L, int t, const char *key, int def, int lo, int hi)
{
    int ty = lua_getfield(L, t, key);
    int v = def;
    if (ty != LUA_TNIL) {
        lua_Integer x = 0;
        int ok = lua_isinteger(L, -1);
        if (ok)
            x = lua_tointeger(L, -1);
        if (!ok || x < lo || x > hi)
            orr_lua_error(L, "sim:view: '%s' must be an integer in %d..%d (got %s)", key, lo, hi,
                          orr_lua_describe(L, -1));
        v = (int)x;
    }
    lua_pop(L, 1);
    return v;
}

static int l_view_start(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lview *p = lua_newuserdatauv(L, sizeof *p, 0);
    memset(p, 0, sizeof *p);
    luaL_setmetatable(L, VIEW_MT);
    orr_view_config c = {0};
    c.files = orr_view_page;
    c.port = opt_int(L, 1, "port", 0, 0, 65535);
    c.max_clients = opt_int(L, 1, "max_clients", 64, 1, 1024);
    if (lua_getfield(L, 1, "host") != LUA_TNIL) {
        if (lua_type(L, -1) != LUA_TSTRING)
            orr_lua_error(L, "sim:view: 'host' must be an IPv4 address (got %s)",
                          orr_lua_describe(L, -1));
        c.host = lua_tostring(L, -1);   /* kept on the stack until started */
    }
    if (lua_getfield(L, 1, "max_fps") != LUA_TNIL) {
        double f = lua_tonumber(L, -1);
        if (lua_type(L, -1) != LUA_TNUMBER || !(f > 0 && f <= 1000))
            orr_lua_error(L, "sim:view: 'max_fps' must be a number in (0, 1000] (got %s)",
                          orr_lua_describe(L, -1));
        c.max_fps = f;
    }
    orr_error err = {0};
    if (orr_view_start(&p->v, &c, &err)) {
        /* "view: port ..." said as the caller's: sim:view or --view */
        lua_getfield(L, 1, "who");
        const char *who = luaL_optstring(L, -1, "sim:view");
        if (strncmp(err.msg, "view: ", 6) == 0)
            memmove(err.msg, err.msg + 6, strlen(err.msg + 6) + 1);
        return orr_lua_fail(L, &err, who);
    }
    lua_pop(L, 2);
    return 1;
}

static int view_url(lua_State *L)
{
    lua_pushstring(L, orr_view_url(checkview(L, 1)->v));
    return 1;
}

static int view_port(lua_State *L)
{
    lua_pushinteger(L, orr_view_port(checkview(L, 1)->v));
    return 1;
}

static int view_poll(lua_State *L)
{
    lua_pushinteger(L, orr_view_poll(checkview(L, 1)->v));
    return 1;
}

static int view_wait(lua_State *L)
{
    lview *p = checkview(L, 1);
    lua_Integer ms = luaL_checkinteger(L, 2);
    luaL_argcheck(L, ms >= 0 && ms <= 10000, 2, "0..10000 ms");
    lua_pushinteger(L, orr_view_wait(p->v, (int)ms));
    return 1;
}

static int view_take(lua_State *L)
{
    const char *name = orr_view_cmd_name(orr_view_take(checkview(L, 1)->v));
    if (name)
        lua_pushstring(L, name);
    else
        lua_pushnil(L);
    return 1;
}

static int view_watched(lua_State *L)
{
    lview *p = checkview(L, 1);
    lua_pushboolean(L, orr_view_watched(p->v, luaL_checknumber(L, 2)));
    return 1;
}

static int view_close(lua_State *L)
{
    lview *p = luaL_checkudata(L, 1, VIEW_MT);
    orr_view_stop(p->v);
    p->v = NULL;
    free(p->buf);
    p->buf = NULL;
    p->cap = 0;
    return 0;
}

/* core._view_attr(sim, name) -> the force law's attribute index (0-based),
 * or nil and the list of its attributes */
static int l_view_attr(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    const char *name = luaL_checkstring(L, 2);
    const orr_law *law = orr_sim_law(s);
    int a = orr_law_attr_index(law, name);
    if (a >= 0) {
        lua_pushinteger(L, a);
        return 1;
    }
    lua_pushnil(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int k = 0; k < law->nattrs; k++) {
        if (k)
            luaL_addstring(&b, ", ");
        luaL_addstring(&b, law->attrs[k]);
    }
    luaL_pushresult(&b);
    return 2;
}

/* core._view_frame(view|nil, sim, json, first, stride, count [, attr]):
 * with attr (a law attribute's index) its values in place of the masses */
static int l_view_frame(lua_State *L)
{
    lview *p = lua_isnil(L, 1) ? NULL : checkview(L, 1);
    orr_sim *s = orr_lua_checksim(L, 2);
    size_t len;
    const char *json = luaL_checklstring(L, 3, &len);
    lua_Integer first = luaL_checkinteger(L, 4), stride = luaL_checkinteger(L, 5),
                count = luaL_checkinteger(L, 6);
    luaL_argcheck(L, count >= 0 && count <= 100000000, 6, "0..1e8 bodies");
    const size_t nf = 5 * (size_t)count;
    float *buf = p ? p->buf : NULL;
    if (!p || nf > p->cap) {
        buf = malloc(sizeof(float) * (nf ? nf : 1));
        if (!buf)
            return orr_lua_error(L, "sim:view: out of memory for %I bodies", count);
        if (p) {
            free(p->buf);
            p->buf = buf;
            p->cap = nf;
        }
    }
    orr_error err = {0};
    orr_status st = orr_sim_sample(s, (long)first, (long)stride, (long)count, buf, &err);
    if (!st && !lua_isnoneornil(L, 7)) {   /* the law's attribute: the host's copy */
        double *attr;
        st = orr_sim_attr(s, (int)luaL_checkinteger(L, 7), &attr, &err);
        for (long k = 0; !st && k < (long)count; k++)
            buf[4 * count + k] = (float)attr[first + k * stride];
    }
    if (!st && p)
        st = orr_view_publish(p->v, json, len, buf, nf, &err);
    if (!p)
        free(buf);
    return st ? orr_lua_fail(L, &err, "sim:view") : 0;
}

/* core._view_png(sim, path): rank 0 renders and writes path at once;
 * other ranks do nothing (rank 0 holds every body's position) */
static int l_view_png(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    const char *path = luaL_checkstring(L, 2);
    if (!orr_lua_rank0())
        return 0;
    orr_render_options o;
    orr_render_options_default(&o);
    orr_render_view view;
    memset(&view, 0, sizeof view);
    orr_error err = {0};
    if (orr_render_sim(s, path, &o, &view, &err))
        return orr_lua_fail(L, &err, NULL);
    return 0;
}

static int l_view_mark(lua_State *L)
{
    viewed = lua_isnoneornil(L, 1) ? NULL : lua_touserdata(L, 1);
    pending = lua_toboolean(L, 2);
    return 0;
}

/* core._view_set_poll(fn): what orr_lua_view_after calls */
static int l_view_set_poll(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    lua_pushvalue(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, POLL_KEY);
    return 0;
}

static const luaL_Reg view_meth[] = {
    {"url", view_url},
    {"port", view_port},
    {"poll", view_poll},
    {"wait", view_wait},
    {"take", view_take},
    {"watched", view_watched},
    {"close", view_close},
    {NULL, NULL},
};

static const luaL_Reg funcs[] = {
    {"_view_start", l_view_start},
    {"_view_frame", l_view_frame},
    {"_view_mark", l_view_mark},
    {"_view_attr", l_view_attr},
    {"_view_set_poll", l_view_set_poll},
    {"_view_png", l_view_png},
    {NULL, NULL},
};

void orr_lua_open_view(lua_State *L)
{
    luaL_newmetatable(L, VIEW_MT);
    lua_pushcfunction(L, view_close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, view_close);
    lua_setfield(L, -2, "__close");
    luaL_newlib(L, view_meth);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    luaL_setfuncs(L, funcs, 0);
    if (orr_lua_view_port >= 0) {
        lua_pushinteger(L, orr_lua_view_port);
        lua_setfield(L, -2, "_view_port");
    }
    viewed = NULL;
    pending = 0;
}

