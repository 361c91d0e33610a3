/* lrun: `orrery run SCRIPT.lua [ARGS...]`, the only entry point cli.c needs
 * from the Lua layer. */
#ifndef ORR_LRUN_H
#define ORR_LRUN_H

/* Runs the script (path, or "-" for standard input) in a fresh Lua state
 * with `require "orrery"` available and `arg` = {[0] = script, argv...}.
 * Reports errors on stderr (file:line: message and a traceback).  Returns
 * the exit status: 0, 1 on an error, 130 when interrupted (Ctrl-C). */
int orr_lua_run(const char *script, int argc, char **argv);

#endif
