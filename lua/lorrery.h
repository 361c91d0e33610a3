/* lorrery: the Lua 5.4 binding of orrery, shared between its C files.
 * One C file per Lua module or type:
 *   lorrery.c  module "orrery.core": simulation(), version, ic, helpers
 *   lsim.c     type orrery.Sim (a simulation) and orrery.simulation{}
 *   lbuffer.c  type orrery.Buffer (sim.pos, sim.vel, sim.mass)
 *   lic.c      module table orrery.ic and type orrery.Bodies
 *   lforce.c   orrery.force{} and type orrery.Force; the Sim's law methods
 *   lfield.c   orrery.field{} and type orrery.Field (external fields)
 *   lio.c      files: orrery.read, orrery.restore, sim:write (HDF5, numbered
 *              paths), sim:checkpoint, sim:render
 *   lrun.c     `orrery run SCRIPT.lua`: the state, preloads, Ctrl-C, reports;
 *              the run command for core/cli/cli.c, law scripts for --force
 *   lsource.c  scripts named in full in messages (Lua shortens long paths)
 *   main.c     main(): core/cli/cli.c's commands plus run
 * The Lua-side parts (lua/orrery/NAME.lua) are embedded at build time into
 * orr_lua_embedded and installed in package.preload. */
#ifndef ORR_LORRERY_H
#define ORR_LORRERY_H

#include <lua.h>
#include <lauxlib.h>

#include "comm.h"
#include "err.h"
#include "ksrc.h"
#include "sim.h"

#define ORR_LUA_SIM "orrery.Sim"
#define ORR_LUA_BUFFER "orrery.Buffer"
#define ORR_LUA_BODIES "orrery.Bodies"
#define ORR_LUA_FORCE "orrery.Force"
#define ORR_LUA_FIELD "orrery.Field"

struct orr_law;

/* The Sim userdata: sim is NULL before creation succeeded and after close.
 * User values 1..3 cache its buffers (pos, vel, mass), 4.. those of the
 * force law's attributes (sim.attr.NAME). */
#define ORR_LUA_SIM_UV 7
typedef struct {
    orr_sim *sim;
} orr_lua_sim;

/* The Bodies userdata (what orrery.ic generators return): pos = data
 * (4n: x y z m), vel = data + 4n (3n). */
typedef struct {
    long n;
    double data[];
} orr_lua_bodies;

/* Generated from lua/orrery/NAME.lua by tools/embed.c (NULL-name terminated):
 * "init.lua" is preloaded as "orrery", "X.lua" as "orrery.X". */
extern const orr_ksrc_file orr_lua_embedded[];

/* Set by the runner's SIGINT handler; orr_sim_step polls it (NULL: never). */
extern volatile int *orr_lua_stop;
/* The ranks agreed on a stop (a stepping call raised "interrupted" on
 * every rank); everywhere: every rank had a signal of its own (lrun.c). */
void orr_lua_stop_agreed(int everywhere);

/* The ranks of this run (comm.h), set when the module opens: every
 * simulation is spread over them, and what the module reports or writes
 * happens on rank 0. */
extern orr_comm *orr_lua_comm;
/* Whether this process does the reporting and writing (rank 0). */
int orr_lua_rank0(void);
/* Prints "orrery: note: LINE" on stderr for each line of text (a note of
 * several entries has one per line, util.h), on rank 0 only, once per
 * process for each distinct line ("" and NULL print nothing): what the
 * library returned as notes (how kernels were got, what a tuning said). */
void orr_lua_note(const char *text);
/* orr_lua_note for what a simulation's creation, retuning or recompiling
 * has to say: how its kernels were got (an unusable or read-only kernel
 * cache, an entry refused, not stored or rebuilt) and what its last tuning
 * said (a tuning not saved and why, the defaults kept), over several ranks
 * every rank's (lsim.c). */
void orr_lua_sim_notes(const orr_sim *s);
/* The GPU of this rank: its local rank modulo the visible devices (0 with
 * one rank or no GPU). */
int orr_lua_default_device(void);

/* Opens "orrery.core" (the C part of the module); for package.preload. */
int orr_lua_open_core(lua_State *L);

/* Registers the types and fills module table t (at the top of the stack). */
void orr_lua_open_sim(lua_State *L);      /* simulation, Sim */
void orr_lua_open_buffer(lua_State *L);   /* metatable only */
void orr_lua_open_ic(lua_State *L);       /* ic */
void orr_lua_open_fewbody(lua_State *L);  /* fewbody, FewBody */
void orr_lua_open_force(lua_State *L);    /* force, forces, Force; after open_sim */
void orr_lua_open_field(lua_State *L);    /* field, fields, Field */
void orr_lua_open_io(lua_State *L);       /* read, restore; Sim write, checkpoint, render;
                                             after open_sim */

/* The orrery.Force at idx (raises otherwise). */
const struct orr_law *orr_lua_checklaw(lua_State *L, int idx);
/* The law that options table t asks for with its 'force' (a built-in name or
 * an orrery.Force) and 'params' (values to change) keys: pushes an
 * orrery.Force holding a copy (keep it on the stack while the pointer is
 * used) and returns its law, or pushes nothing and returns NULL when t has
 * neither key.  Errors are raised with prefix who. */
const struct orr_law *orr_lua_sim_law(lua_State *L, int t, const char *who);

/* The external fields that options table t asks for with its 'fields' key
 * (a list of orrery.Field values and built-in names): pushes a holder of
 * their copies (keep it on the stack while the pointer is used) and
 * returns them, or pushes nothing and returns NULL without the key. */
const struct orr_fieldset *orr_lua_sim_fields(lua_State *L, int t, const char *who);

/* `orrery run --verify`: every simulation is verified against the CPU in
 * double before its first step and after each sim:run; results go to
 * stderr, failures are counted for the exit status. */
extern int orr_lua_verify_mode;
extern int orr_lua_verify_failures;
void orr_lua_verify_report(lua_State *L, orr_sim *s, const char *when);

/* Frames written in the background (lio.c).  orr_lua_frames_close: the
 * frames of the Sim userdata at index sim all on disk and its writer
 * stopped (closing the simulation); returns the first failure not
 * reported yet, in err.  orr_lua_frames_finish (a lua_CFunction, for the
 * end of a script): every simulation's frames on disk; raises the first
 * failure.  orr_lua_frames_settle (for os.exit): every simulation's
 * frames on disk, raising nothing and with no collective (a rank may exit
 * alone), each writer's failure passed to orr_lua_frames_lost.
 * orr_lua_frames_lost: a failure no script can see any more (a simulation
 * collected, the process exiting) printed to stderr and counted in
 * orr_lua_frame_failures, for the exit status.  orr_lua_frames_pending:
 * whether the Sim userdata at index sim has frames queued since they were
 * last flushed, the same on every rank (every rank counts rank 0's
 * frames). */
orr_status orr_lua_frames_close(lua_State *L, int sim, orr_error *err);
int orr_lua_frames_pending(lua_State *L, int sim);
int orr_lua_frames_finish(lua_State *L);
void orr_lua_frames_settle(lua_State *L);
void orr_lua_frames_lost(orr_error *err);
extern int orr_lua_frame_failures;

/* The sim at argument arg; raises "orrery.Sim: simulation is closed". */
orr_sim *orr_lua_checksim(lua_State *L, int arg);
/* Pushes (and caches in the sim's user value) the buffer of kind 0 pos,
 * 1 vel, 2 mass for the Sim userdata at index sim. */
void orr_lua_push_buffer(lua_State *L, int sim, int kind);

/* Raises err->msg (after "prefix: " when prefix is not NULL, followed by a
 * compiler log if any) as a Lua error positioned at the innermost Lua
 * function outside the embedded library, so a script sees its own
 * file:line; an interruption reads "interrupted".  Clears err first. */
int orr_lua_fail(lua_State *L, orr_error *err, const char *prefix);
/* The text of the last error raised that every rank holds alike
 * (orr_error.shared), or "": the runner reports it once (lrun.c). */
extern char orr_lua_shared_error[1200];
/* The innermost Lua function outside the embedded library (chunk names
 * "=orrery/..."), with source and current line filled in: the user's code.
 * Returns 0 when there is none. */
int orr_lua_caller(lua_State *L, lua_Debug *ar);
/* The name of ar's chunk in full, as it was loaded ("dir/my.lua" of
 * "@dir/my.lua"), where Lua's short_src shortens long paths to "...tail";
 * short_src for chunks loaded from strings.  ar needs "S". */
const char *orr_lua_chunkname(const lua_Debug *ar);
/* Records chunk name "@path" (other names are ignored) so that messages
 * naming it in Lua's shortened form can name it in full. */
void orr_lua_source_add(lua_State *L, const char *chunkname);
/* Pushes the string at idx with every shortened chunk name of a recorded
 * file followed by ':' (a position) replaced by the full name, and returns
 * it; a value that is not a string is pushed as it is (returns NULL). */
const char *orr_lua_source_expand(lua_State *L, int idx);
/* After the standard libraries are open: pcall, xpcall, coroutine.resume
 * and close, and debug.traceback expand their messages; dofile, loadfile,
 * load and require's file searcher record the files they load. */
void orr_lua_source_install(lua_State *L);
/* Like luaL_error, positioned like orr_lua_fail. */
int orr_lua_error(lua_State *L, const char *fmt, ...);
/* Pushes a short description of the value at idx for messages: strings in
 * double quotes, numbers as written, other values by type name. */
const char *orr_lua_describe(lua_State *L, int idx);
/* NULL when v fits what simulation s stores (precision "float": a float,
 * at most FLT_MAX in magnitude; "double" and "mixed": any double, their
 * finiteness checked by the caller), else pushes and returns "<what> = <v>
 * is beyond the float range (at most 3.40282347e+38 in magnitude;
 * precision \"double\" holds it)". */
const char *orr_lua_float_range(lua_State *L, const orr_sim *s, const char *what, double v);
/* The value at idx as a finite number, or raises
 * "<who>: '<key>' must be <what> (got <value>)". */
double orr_lua_checkfinite(lua_State *L, int idx, const char *who, const char *key,
                           const char *what);
/* Raises "<who>: unknown key 'k'" for the first key of table t not in the
 * NULL-terminated list keys, followed by " (valid: a, b, c)" when list is set. */
void orr_lua_checkkeys(lua_State *L, int t, const char *who, const char *const *keys, int list);

/* x in the fewest digits that read back as x (%.15g, %.16g or %.17g):
 * messages show times as a user wrote them, and tell apart two that
 * differ in the last bit. */
const char *orr_lua_number(char *buf, size_t size, double x);

#endif
