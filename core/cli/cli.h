/* cli: the orrery command line's own commands (info, compile, bench, tune,
 * cache, movie, --help, --version) behind orr_cli_main, which a program's main()
 * calls with the commands it adds (lua/main.c adds the Lua layer's run).
 * Like the Lua layer, and unlike the library (liborrery.a, which it is not
 * part of), it talks to the user: messages on stdout and stderr, exit
 * statuses returned for main() to return. */
#ifndef ORR_CLI_H
#define ORR_CLI_H

#include "err.h"

struct orr_law;

/* A command that the program adds to the built-in ones. */
typedef struct {
    const char *name;      /* the command word, e.g. "run" */
    const char *usage;     /* its lines of the usage text, listed before the built-in commands */
    int script_args;       /* 1: what follows its first operand is not orrery's (a --help
                              there is passed on, not answered with the usage text) */
    int (*main)(int argc, char **argv);   /* argv[1] is name; returns the exit status */
} orr_cli_command;

/* Loads the law that a script at path defines, for `--force LAW.lua`
 * (orr_lua_load_law); *law is freed with orr_law_free. */
typedef orr_status (*orr_cli_law_loader)(const char *path, struct orr_law *law, orr_error *err);

/* Runs the command line argv[1..argc-1]: --help (also `help`, COMMAND --help
 * or -h), --version, one of the nextra commands in extra, or a built-in
 * command.  load_law may be NULL: --force then takes built-in laws only.
 * Returns the exit status: 0, 1 after a run-time error, 2 after a usage
 * error (one line on stderr). */
int orr_cli_main(int argc, char **argv, const orr_cli_command *extra, int nextra,
                 orr_cli_law_loader load_law);

/* Reports a usage error, "orrery: MESSAGE (see 'orrery --help')" on stderr,
 * and returns 2, the exit status for it.  printf-style. */
int orr_cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
