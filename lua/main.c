/* main: the orrery program: the command line's own commands (core/cli/cli.c)
 * with the Lua layer's `run` added, and `--force LAW.lua` loading law scripts
 * through Lua.  The one place where core/cli and the Lua layer meet. */
#include "cli.h"
#include "lrun.h"

int main(int argc, char **argv)
{
    return orr_cli_main(argc, argv, &orr_lua_run_command, 1, orr_lua_load_law);
}
