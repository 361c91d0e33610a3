/* textio: orrery's text output, written and read back.  One header line
 * naming the columns, "id x y z vx vy vz m", then one line per body: its
 * 1-based id, position, velocity and mass, every number with 17 significant
 * digits (%.17g) so that it reads back bit for bit.  ".txt" files separate
 * the columns with blanks, ".csv" files with commas.  The writer and the
 * reader share the one column list (textio.c); files are written
 * atomically (outfile.h: missing directories created, a temporary file
 * renamed into place).  A line starting with '#' is a comment (the writer
 * puts the units there when the simulation has physical ones).  The reader
 * also takes files written by hand: blanks around fields, CRLF line ends,
 * blank lines, comment lines, the header in any case. */
#ifndef ORR_TEXTIO_H
#define ORR_TEXTIO_H

#include "err.h"
#include "sim.h"
#include "snapshot.h"

/* The column separator for path's extension: ' ' for ".txt", ',' for ".csv"
 * (any case), 0 for any other name (not text output). */
char orr_text_sep(const char *path);

/* Writes n bodies (pos: 4n values x y z m, vel: 3n) to path, a .txt or .csv
 * name; any other name is an ORR_ERR_ARG "cannot write 'PATH': unknown
 * format (expected .txt or .csv)", checked before anything else (pos and
 * vel are not read then).  comment (NULL or "" for none; one line) goes
 * first as "# COMMENT" (the simulation's units).  I/O errors: "cannot
 * write 'PATH': REASON". */
orr_status orr_text_write(const char *path, long n, const double *pos, const double *vel,
                          const char *comment, orr_error *err);

/* Writes the bodies of s as text: ".txt" whitespace-separated, ".csv"
 * commas, the simulation's units in the comment line; atomically, so a
 * failed write never leaves a half file in place.  An unknown format fails
 * before the state is read.  Over several ranks every rank calls it and
 * rank 0 writes (sim.h: orr_sim_write_once). */
orr_status orr_text_write_sim(orr_sim *s, const char *path, orr_error *err);

/* Reads a .txt or .csv file (separator by orr_text_sep; path must be one)
 * into out (heap, orr_snapshot_free; time 0, no extra columns).  Messages
 * start "cannot read 'PATH': " and say what is wrong ("line 2: vz is not
 * finite (nan)", "line 1: expected the header line 'id x y z vx vy vz m'"). */
orr_status orr_text_read(const char *path, orr_snapshot *out, orr_error *err);

#endif
