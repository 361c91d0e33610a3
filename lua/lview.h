/* lview: the live view's hooks for the rest of the Lua layer (lview.c). */
#ifndef ORR_LVIEW_H
#define ORR_LVIEW_H

#include <lua.h>

/* `orrery run --view[=PORT]`: the port (0: a free one), -1 without. */
extern int orr_lua_view_port;

/* After a simulation's steps (lsim.c): the view's poll (view.lua), where
 * the Sim at index sim is the one viewed or --view waits for one; one
 * pointer comparison otherwise. */
void orr_lua_view_after(lua_State *L, int sim);

/* Adds core._view_* and the orrery.View type to the table on top. */
void orr_lua_open_view(lua_State *L);

#endif
