/* outfile: how orrery writes every file (HDF5 snapshots, checkpoints, text
 * output, PNG frames, compiled kernels, kernel-cache entries, the tuning
 * store) so that no reader ever sees half a file: the data goes to a
 * temporary file in the target's directory, which is flushed to disk
 * (fsync) and renamed over the target; on any failure the temporary file is
 * removed and the previous file stays as it was.  Also the numbered paths of
 * snapshot and frame series ("out/snap_%03d.hdf5"). */
#ifndef ORR_OUTFILE_H
#define ORR_OUTFILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
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

/* A file being written.  orr_outfile_begin creates the temporary file;
 * the data goes in through orr_outfile_put (bytes), orr_outfile_stream
 * (stdio) or orr_outfile_name (writers that open the file by name, such as
 * HDF5); then orr_outfile_commit, or orr_outfile_abort after a failure. */
typedef struct {
    char *path;   /* the target (heap) */
    char *tmp;    /* "<path>.tmp.HOST.PID.XXXXXX" in the same directory, unique per call
                     (heap; HOST 8 hex digits of a hash of the host name and process-id
                     namespace, PID the writer's process) */
    int fd;       /* open for writing on tmp; -1 once handed to a stream or closed */
    FILE *fp;     /* the stream from orr_outfile_stream, or NULL */
} orr_outfile;

/* Prepares writing path: creates its missing parent directories and the
 * temporary file "<path>.tmp.HOST.PID.XXXXXX" (six letters or digits,
 * unique even between threads of one process; opened with O_EXCL).  First
 * it removes the temporary files of path that a writer left behind when it
 * died (kill -9, MPI_Abort during the write): of exactly this name, made on
 * this host (and process-id namespace) by a process that no longer exists;
 * another host's, another name's, a live writer's and the format before
 * this one ("<path>.tmp.XXXXXX", which names no process) stay.  mode 0 gives the
 * file 0666 less the umask, as fopen would; any other mode is set exactly
 * (0600 for the kernel cache and the tuning store).  Errors name the path:
 * "cannot write 'out/x.h5': cannot create directory 'out': ...".  On
 * failure there is nothing to abort.  When the environment variable
 * ORRERY_TEST_DISK_FULL is set (non-empty), the temporary file's
 * descriptor is /dev/full's, so that every write through orr_outfile_put
 * and orr_outfile_stream fails with ENOSPC as on a full disk (for the
 * tests of that path; a writer that opens the file by name is not
 * affected). */
orr_status orr_outfile_begin(orr_outfile *f, const char *path, mode_t mode, orr_error *err);
/* Removes every temporary file of this process still being written (begun,
 * neither committed nor aborted): for a process about to end on a signal
 * while its writers are stuck or unfinished, so that it leaves none
 * behind (their writers' commits then fail).  Returns how many were
 * removed, or -1 when another thread holds the list (it is not waited
 * for). */
int orr_outfile_remove_temporaries(void);

/* Writes len bytes to the temporary file ("cannot write 'PATH': REASON" on
 * failure; the caller then aborts). */
orr_status orr_outfile_put(orr_outfile *f, const void *data, size_t len, orr_error *err);
/* A stdio stream on the temporary file, owned by f (commit flushes and
 * closes it, abort closes it); the same stream on later calls.  NULL with
 * err set on failure (the caller then aborts). */
FILE *orr_outfile_stream(orr_outfile *f, orr_error *err);
/* orr_outfile_begin and orr_outfile_stream in one: the stream into *fp; on
 * failure nothing is left to abort. */
orr_status orr_outfile_begin_stream(orr_outfile *f, const char *path, mode_t mode, FILE **fp,
                                    orr_error *err);
/* The temporary file's name, for a writer that opens it by name (it exists,
 * empty; its descriptor is closed here).  The writer closes its own handle
 * before commit. */
const char *orr_outfile_name(orr_outfile *f);
/* The temporary file, complete, goes to disk (fsync) and is renamed over
 * the target, whose directory is synced too.  On failure the temporary file
 * is removed and the target untouched.  When the environment variable
 * ORRERY_TEST_WRITE_FAIL is set (non-empty) every commit fails on purpose
 * after the temporary file was written ("simulated failure"), for the
 * tests of this path; when ORRERY_TEST_WRITE_CRASH is set (non-empty) the
 * process kills itself there (SIGKILL), leaving the temporary file as a
 * writer killed mid-write would.  Frees f either way. */
orr_status orr_outfile_commit(orr_outfile *f, orr_error *err);
/* Closes and removes the temporary file (if any) and frees f: after a
 * failed write.  Safe on an f whose begin failed. */
void orr_outfile_abort(orr_outfile *f);

/* Whether name (a file name, no directory) is one of orr_outfile_begin's
 * temporary files for the output whose name is the first base_len bytes of
 * base (no directory), in this format or the one before. */
int orr_outfile_is_temp(const char *name, const char *base, size_t base_len);

/* The whole of a file in one call: begin, put, commit (mode as for
 * orr_outfile_begin). */
orr_status orr_outfile_write(const char *path, const void *data, size_t len, mode_t mode,
                             orr_error *err);

#endif
