/* outfile: how orrery writes output files (HDF5 snapshots, checkpoints, PNG
 * frames) so that no reader ever sees half a file: the data goes to a
 * temporary file in the target's directory, which is flushed to disk
 * (fsync) and renamed over the target; on any failure the temporary file is
 * removed and the previous file stays as it was.  Also the numbered paths of
 * snapshot and frame series ("out/snap_%03d.hdf5"). */
#ifndef ORR_OUTFILE_H
#define ORR_OUTFILE_H

#include <stddef.h>
#include "err.h"

/* Expands the one printf integer conversion in pattern (%d or %i, with
 * optional flags from "0-+ " and a width, e.g. %03d) with number into out;
 * "%%" stands for a literal %.  *numbered (may be NULL) tells whether there
 * was a conversion (without one the pattern is copied as is).  A second
 * conversion or any other one (%s, %f, %ld, %*d, ...) is an ORR_ERR_ARG:
 * "output path 'a_%s.h5': '%s' is not allowed (use one integer conversion
 * such as %03d, or %% for a literal %)". */
orr_status orr_outfile_expand(const char *pattern, long number, char *out, size_t size,
                              int *numbered, orr_error *err);

/* A file being written: write to tmp, then commit or abort. */
typedef struct {
    char *path;   /* the target (heap) */
    char *tmp;    /* "<path>.tmp.<pid>" in the same directory (heap) */
} orr_outfile;

/* Prepares writing path: creates its missing parent directories and picks
 * the temporary name (nothing is created there yet).  Errors name the path:
 * "cannot write 'out/x.h5': cannot create directory 'out': ...". */
orr_status orr_outfile_begin(orr_outfile *f, const char *path, orr_error *err);
/* The temporary file, complete and closed, goes to disk (fsync) and is
 * renamed over the target, whose directory is synced too.  On failure the
 * temporary file is removed and the target untouched.  When the
 * environment variable ORRERY_TEST_WRITE_FAIL is set (non-empty) the commit
 * fails on purpose after the temporary file was written ("simulated
 * failure"), for the tests of this path.  Frees f either way. */
orr_status orr_outfile_commit(orr_outfile *f, orr_error *err);
/* Removes the temporary file (if any) and frees f: after a failed write. */
void orr_outfile_abort(orr_outfile *f);

#endif
