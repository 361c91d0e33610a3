/* tunestore: the autotuner's store (tune.h) of the winning kernel
 * parameters, per device and kernel identity, so a later start with the
 * same identity costs no compiling and no timing.  One JSON file,
 * "tuning.json" in the kernel-cache directory (orr_kcache_dir):
 *   {"format": "orrery-tuning", "version": 1, "entries": [
 *     {"device", "kernel", "backend", "n_bucket", "targets_bucket" (only for
 *      a slice shape, or a Hermite tuning's active bodies), "integrator"
 *      ("hermite" for the force + jerk kernel's tuning, htune.h; absent for
 *      the force pass), "precision", "force",
 *      "exhaustive" (bool), "budget_s",
 *      "best": {"block", "unroll", "split", "threads", "ranges", "ipt",
 *               "prefetch" (only when 1), "blocks_per_sm" (hermite only), "ms",
 *               "interactions_per_s"},
 *      "trials": [{"block", "unroll", "split", "threads", "ranges", "ipt",
 *                  "prefetch" (only when 1), "blocks_per_sm" (hermite only), "ms",
 *                  "max_rel_err", "ok",
 *                  "why"}, ...],
 *      "when": "2026-11-22T06:00:00Z"}, ...]}
 * A missing file is an empty store.  A file that does not parse, has the
 * wrong shape, is not a regular file (a FIFO, a directory, a symbolic link)
 * or could have been written by someone else (not owned by the user,
 * writable by others) is corrupt: lookups say why and miss, and the next
 * save replaces it.  A file that cannot be read (open, stat or read fails:
 * EACCES, EMFILE, EIO, ...) is not corrupt: lookups miss and say why, saves
 * fail and leave it as it is.  The file is opened without blocking, so a
 * FIFO in its place is reported, never waited on.
 *
 * Saves take a lock, re-read the file, replace or add the one entry and
 * write the whole file atomically (outfile.h: a temporary file in the same
 * directory, mode 0600, fsynced, renamed into place), then release the
 * lock: a reader never sees a torn store, and concurrent tunings of other
 * identities, in other processes or threads, are kept.  The lock is an
 * fcntl() write lock on "tuning.json.lock" beside the store (an
 * open-file-description lock, or a classic POSIX record lock on kernels
 * before Linux 3.15), plus a mutex between the threads of one process.
 * fcntl() locks hold between processes on one host and, on NFS, between
 * hosts (the client takes them on the server: NLM/lockd for NFSv3, the
 * protocol itself for NFSv4), and the store is read after the lock is
 * taken, so NFS's close-to-open consistency gives the current file.  Where
 * they are not kept:
 *   - a file system that refuses them (ENOLCK: NFSv3 without lockd, a lock
 *     table full; EOPNOTSUPP, ENOSYS: some FUSE and cluster file systems)
 *     saves without the lock, and the note of orr_tune_store_put says so: a
 *     save at the same moment elsewhere may then be lost, as before locks;
 *   - an NFS mount with "nolock" or "local_lock=posix|all" keeps locks on
 *     each host, which cannot be seen from here: saves on different hosts
 *     may then lose each other's entries (saves on one host are kept).
 * The wait is bounded: a save that finds the lock held retries for 30 s,
 * then fails with "the tuning store is locked: waited 30 s for PATH.lock"
 * (the tuners turn a failed save into a note: the run goes on with the
 * tuning found, unsaved).  A wait that lasts 1 s is told, as it goes on, to
 * the hook orr_tune_store_on_wait sets, so a program can say why it stands
 * still.
 * orr_tune_store_clear removes the lock file while holding it; a waiting
 * save notices and locks a new one.
 *
 * Test hooks (environment): ORRERY_TEST_LOCK_TIMEOUT=SECONDS replaces the
 * 30 s wait; ORRERY_TEST_NOLOCK=1 makes every lock fail as with ENOLCK. */
#ifndef ORR_TUNESTORE_H
#define ORR_TUNESTORE_H

#include <limits.h>
#include <stddef.h>
#include "err.h"

/* One stored tuning. */
typedef struct {
    char device[512];                    /* device identity (tune.h) */
    char kernel[33];                     /* kernel identity, 32 hex digits */
    char backend[8];                     /* "cuda" or "cpu" ("?" when absent) */
    char precision[8];                   /* "float" or "double" ("?" when absent) */
    char force[64];                      /* force law name ("?" when absent) */
    long n_bucket;                       /* next power of two >= n */
    long targets_bucket;                 /* a slice shape's target bucket, a Hermite
                                            tuning's active bodies; 0 = all n */
    char integrator[16];                 /* "hermite": the force + jerk kernel's tuning
                                            (block = its tile); "" for the force pass */
    int exhaustive;                      /* 1: every valid candidate was tried */
    double budget_s;                     /* the search's budget in seconds (0 when absent) */
    int block, unroll, split, threads;   /* the stored winner */
    int ranges;                          /* its GPU j-ranges (0 = automatic, or absent) */
    int ipt;                             /* its GPU bodies per thread (1 when absent) */
    int prefetch;                        /* its GPU tile prefetch (0 when absent) */
    int per_sm;                          /* hermite: its j-split in blocks per SM (else 0) */
    double ms, interactions_per_s;       /* its timing (ms -1, 0 when absent) */
    int ntrials, nfailed;                /* trials stored with it */
    char when[32];                       /* ISO 8601, UTC, of the save */
} orr_tune_entry;

/* One candidate as stored with a tuning (orr_tune_store_put). */
typedef struct {
    int block, unroll, split, threads, ranges, ipt;
    int per_sm;           /* hermite: blocks per SM (else 0) */
    double ms;            /* < 0 if not timed */
    double max_rel_err;   /* < 0 if not checked */
    int ok;               /* 1: built, verified and timed */
    const char *why;      /* why rejected; "" when ok */
    int prefetch;         /* GPU tile prefetch, 0/1 */
} orr_tune_stored_trial;

/* The store file as orr_tune_store_get found it. */
typedef struct {
    char path[PATH_MAX];   /* where it is ("" when the cache directory is unusable) */
    char corrupt[256];     /* why it was ignored ("not valid JSON near byte 12", "not owned
                              by you or writable by others", "not a regular file", ...);
                              the next save replaces it; "" when it was fine or missing */
    char unreadable[ORR_NOTE_MAX]; /* why it could not be read ("cannot read tuning store PATH:
                              Permission denied", or the cache directory's error:
                              "cannot create cache directory DIR: Not a directory"); a
                              save does not replace it; "" when it was read or missing */
} orr_tune_store_file;

/* Writes the store's path into buf (size bytes), creating the cache directory
 * if needed (an error when it is unusable). */
orr_status orr_tune_store_path(char *buf, size_t size, orr_error *err);

/* Looks up the tuning stored for device and kernel (compared whole): on a hit
 * *found = 1 and *e holds it (ntrials, nfailed counted; *e untouched on a
 * miss).  file (may be NULL) gets the path and, for a store that was
 * ignored or could not be read, or an unusable cache directory, why (then
 * *found is 0).  Never blocks on a lock.  Returns an error only when memory
 * runs out. */
orr_status orr_tune_store_get(const char *device, const char *kernel, orr_tune_entry *e,
                              int *found, orr_tune_store_file *file, orr_error *err);

/* Saves e (its device, kernel, backend, n_bucket, precision, force,
 * exhaustive, budget_s, winner and timing; ntrials, nfailed and when are
 * ignored: the save is stamped with the current time) with its trials
 * trials[0..ntrials), replacing any entry of the same device and kernel;
 * the rest of the store is kept, also what other processes save meanwhile
 * (a corrupt store is replaced).  note (may be NULL; note_size bytes, text
 * appended with orr_note_add) gets what the save could not promise: "...
 * this file system keeps no locks (...), so the save went ahead without
 * one ...".  Fails (ORR_ERR_IO) when the store cannot be read ("cannot read
 * tuning store PATH (Permission denied); not replacing it"), the lock
 * cannot be taken or stays held past the wait, or the write fails; with
 * ORR_ERR_CACHE when the cache directory is unusable or cannot be written
 * (orr_kcache_check), the message then in the kernel cache's words
 * ("kernel cache unusable, running uncached: REASON", "kernel cache
 * read-only, new kernels and tunings not stored: REASON"). */
orr_status orr_tune_store_put(const orr_tune_entry *e, const orr_tune_stored_trial *trials,
                              int ntrials, char *note, size_t note_size, orr_error *err);

/* Sets the hook told of a save's (or clear's) wait for the store's lock
 * once it has lasted 1 s (half the wait, if that is shorter), from the
 * waiting thread, with msg "the tuning store is locked by another process:
 * waiting up to 30 s for PATH.lock"; fn NULL: none (the default).  fn is
 * called with the store's in-process mutex held: it must not call into the
 * tuning store.  The library prints nothing itself. */
void orr_tune_store_on_wait(void (*fn)(const char *msg, void *ctx), void *ctx);

/* Calls fn for every stored tuning, in file order; e is valid only during the
 * call.  A missing store lists nothing; a corrupt one returns ORR_ERR_CACHE
 * with "tuning store PATH is corrupt (REASON)", one that cannot be read
 * ORR_ERR_IO with "cannot read tuning store PATH: REASON", and lists
 * nothing. */
orr_status orr_tune_store_list(void (*fn)(const orr_tune_entry *e, void *ctx), void *ctx,
                               orr_error *err);

/* Removes the store (and stale temp files of interrupted saves, and the lock
 * file), holding the lock; where the lock cannot be taken and there is no
 * store (a read-only directory), there is nothing to do.  *removed (may be
 * NULL) gets the number of tunings it held (0 when missing, corrupt,
 * unreadable or left).  A store or temporary that is not orrery's own (not
 * a regular file of the user's: a directory, a symbolic link, a FIFO,
 * another user's file) is left, never followed, and given to on_left (may
 * be NULL) with its path and why ("a directory", "not owned by you (uid
 * N)"), as orr_kcache_clear does. */
orr_status orr_tune_store_clear(size_t *removed,
                                void (*on_left)(const char *path, const char *why, void *ctx),
                                void *ctx, orr_error *err);

#endif
