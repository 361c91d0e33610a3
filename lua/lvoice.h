/* lvoice: what a script writes to standard output under mpirun.  A script
 * is written once for one rank or many, and its output is read as from one
 * rank: by default only rank 0's standard output reaches the terminal (the
 * other ranks' goes to /dev/null); `orrery run --all-ranks` or
 * ORRERY_ALL_RANKS=1 shows every rank's, each line prefixed "[rank R] ".
 * Standard error is left alone (every rank's errors are reported). */
#ifndef ORR_LVOICE_H
#define ORR_LVOICE_H

/* `--all-ranks`: every rank's output, prefixed (before orr_lua_voice_begin). */
void orr_lua_voice_all(int on);

/* Sets standard output up for rank `rank` of `size` (nothing for one rank).
 * Returns 0, or -1 with errno set (the output is then left as it was). */
int orr_lua_voice_begin(int rank, int size);

/* Puts standard output back, every prefixed line written first (also run at
 * exit, for os.exit).  Safe to call more than once. */
void orr_lua_voice_end(void);

#endif
