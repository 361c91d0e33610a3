/* lrun: `orrery run SCRIPT.lua [ARGS...]` and `--force LAW.lua`, what the
 * command line (lua/main.c, core/cli/cli.h) needs from the Lua layer. */
#ifndef ORR_LRUN_H
#define ORR_LRUN_H

#include "cli.h"

/* The command `orrery run [--verify] [--resume CKPT] SCRIPT.lua [ARGS...]`
 * for orr_cli_main: its usage lines, its options, then orr_lua_run. */
extern const orr_cli_command orr_lua_run_command;

/* Runs the script (path, or "-" for standard input) in a fresh Lua state
 * with `require "orrery"` available and `arg` = {[0] = script, argv...}.
 * Reports errors on stderr (file:line: message and a traceback).  Returns
 * the exit status: 0, 1 on an error, 130 when interrupted (Ctrl-C). */
int orr_lua_run(const char *script, int argc, char **argv);

/* `orrery run --verify`: every simulation is compared with the CPU backend
 * in double before its first step and after each sim:run (on stderr); the
 * run exits 1 when any comparison is above tolerance (1e-5 float, 1e-12
 * double). */
void orr_lua_set_verify(int on);

/* `orrery run --resume CKPT`: before the script runs, orrery.resumed =
 * orrery.restore(CKPT) (a failure is reported and the run exits 1).  The
 * string must outlive the run. */
void orr_lua_set_resume(const char *checkpoint);

/* `--force SCRIPT.lua`: runs a law script, which must return an
 * orrery.Force (return orrery.force{...}), and copies that law into *law
 * (free it with orr_law_free).  Errors carry the script's file:line. */
#include "err.h"
struct orr_law;
orr_status orr_lua_load_law(const char *path, struct orr_law *law, orr_error *err);

#endif
