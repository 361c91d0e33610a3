/* kcache: the on-disk cache of compiled kernels (CUBIN for the GPU, shared
 * objects for the CPU backend).
 *
 * Directory: $ORRERY_CACHE_DIR, else $XDG_CACHE_HOME/orrery, else
 * ~/.cache/orrery, created 0700.  Key: a 128-bit XXH3 hash over everything
 * that determines the compiled bytes (kernel family, full generated source,
 * options, target architecture, compiler identity), as 32 hex digits.  An entry is one file
 * "<key>.<kind>" holding a header (magic, version, key, payload length,
 * XXH3-64 checksum of the payload) and the payload.  Writes go to a temp file
 * in the same directory, are fsynced and renamed into place, so concurrent
 * writers never leave a torn entry.  A corrupt or truncated entry, or a file
 * of one's own that cannot be read (mode 000), is a miss (the caller
 * rebuilds and overwrites it); an entry not owned by the user or writable by
 * group/others is refused, since loading it would run someone else's code;
 * so is one that is not a regular file (a directory, a symbolic link, a
 * FIFO, a socket: opened without blocking, so refused, never waited on).
 * Clearing removes the user's regular files only and names what it leaves.
 * orr_kcache_build is the one way the backends (and the benchmark's
 * reference loop) obtain a kernel object: fetch the entry, or build it and
 * store it.  Nothing about the cache ends a run: where the directory cannot
 * be made or used, or an entry is refused or cannot be read, the kernel is
 * built uncached with a note; where the directory cannot be written, entries are loaded
 * and new kernels not stored, with a note. */
#ifndef ORR_KCACHE_H
#define ORR_KCACHE_H

#include <stddef.h>
#include "err.h"

typedef struct {
    char hex[33];   /* 32 lowercase hex digits + NUL */
} orr_kkey;

/* Incremental key builder; each part is hashed with its length, so
 * ("ab","c") and ("a","bc") give different keys. */
typedef struct {
    void *state;    /* XXH3 state (opaque) */
} orr_kkey_builder;

orr_status orr_kkey_begin(orr_kkey_builder *b, orr_error *err);
void orr_kkey_add(orr_kkey_builder *b, const void *data, size_t len);
void orr_kkey_add_str(orr_kkey_builder *b, const char *s);  /* NULL counts as "" */
void orr_kkey_finish(orr_kkey_builder *b, orr_kkey *out);   /* frees the state */

/* Resolves the cache directory into out (size bytes) and creates it (and
 * missing parents) with mode 0700.  Fails if it exists but is not a
 * directory owned by the user. */
orr_status orr_kcache_dir(char *out, size_t size, orr_error *err);

/* The notes every part of orrery gives for a cache directory it cannot use
 * or write, followed by the reason (orr_kcache_check's why). */
#define ORR_KCACHE_UNUSABLE_NOTE "kernel cache unusable, running uncached: "
#define ORR_KCACHE_READONLY_NOTE "kernel cache read-only, new kernels and tunings not stored: "

typedef enum {
    ORR_KCACHE_USABLE,     /* entries are read and written */
    ORR_KCACHE_READONLY,   /* entries are read, none written (a directory of one's own that
                              one may not write, a read-only file system) */
    ORR_KCACHE_UNUSABLE    /* orr_kcache_dir fails: nothing is read or written */
} orr_kcache_state;

/* Resolves (and creates) the cache directory into dir (dsize bytes; "" when
 * unusable) and says what can be done there; for READONLY and UNUSABLE, why
 * (why_size bytes) says why ("cache directory DIR is not writable
 * (Permission denied)", orr_kcache_dir's message). */
orr_kcache_state orr_kcache_check(char *dir, size_t dsize, char *why, size_t why_size);

/* What a refused entry's message (and `orrery cache list`) advises:
 * orr_kcache_clear removes a regular file of one's own (one writable by
 * others), and leaves whatever else is named like an entry. */
#define ORR_KCACHE_ADVICE_CLEAR "remove it or run 'orrery cache clear'"
#define ORR_KCACHE_ADVICE_OWN "remove it yourself ('orrery cache clear' leaves it)"

/* Looks up key/kind ("cubin", "so", ...).  On a hit: *hit = 1 and *data
 * (heap, caller frees) / *len hold the payload.  On a miss: *hit = 0, and if
 * an entry existed but was corrupt or truncated, or is a file of one's own
 * that cannot be read, *note (may be NULL) gets a heap message saying so;
 * the caller rebuilds and stores anew.  Returns ORR_ERR_CACHE ("refusing
 * cache entry PATH: REASON; ADVICE") if the entry is not owned by the user
 * (REASON "not owned by you (uid N)"), is writable by group/others, or is
 * not a regular file (REASON "a directory", "a symbolic link", "not a
 * regular file": a FIFO, a socket, a device), ADVICE one of the
 * ORR_KCACHE_ADVICE strings; ORR_ERR_CACHE too when it cannot be opened for
 * another reason (EMFILE, ...), ORR_ERR_IO when it cannot be read. */
orr_status orr_kcache_get(const orr_kkey *key, const char *kind, void **data, size_t *len,
                          int *hit, char **note, orr_error *err);

/* Stores a payload atomically (outfile.h: temp file, fsync, rename), mode
 * 0600. */
orr_status orr_kcache_put(const orr_kkey *key, const char *kind, const void *data, size_t len,
                          orr_error *err);

/* How a kernel object was obtained (orr_kcache_build), for reports. */
typedef struct {
    int cached;            /* 1: kernel object came from the cache */
    double compile_s;      /* seconds compiling (0 when cached) */
    double load_s;         /* seconds loading the module / shared object */
    char key[33];          /* cache key */
    char note[ORR_NOTE_MAX]; /* e.g. a corrupt cache entry that was rebuilt */
    char target[64];       /* "sm_90" or "cpu" */
} orr_build_info;

/* Makes a kernel object through the cache: the key is the hash of
 * key_parts; on a hit the stored payload, else build(ctx, ...) is run and
 * its result stored (a failed build stores nothing; a failed store is only
 * a note).  Nothing about the cache is an error, each case said in the
 * note: a cache directory that orr_kcache_dir refuses (it cannot be made,
 * is not a directory, not yours, writable by others): the kernel is built
 * and not stored, "kernel cache unusable, running uncached: REASON"; one
 * that cannot be written: an entry there is loaded, a kernel built is not
 * stored, "kernel cache read-only, new kernels and tunings not stored:
 * REASON" (the same words for every kernel); an entry refused or that
 * cannot be opened or read (orr_kcache_get): never loaded, left as it is,
 * the kernel built and not stored, "kernel built uncached: refusing cache
 * entry PATH: REASON; ADVICE".  Fills info
 * (cached, compile time, key, note).  *data is heap. */
typedef orr_status (*orr_build_fn)(void *ctx, void **data, size_t *len, double *seconds,
                                   orr_error *err);
orr_status orr_kcache_build(const char *const *key_parts, int nparts, const char *kind,
                            orr_build_fn build, void *ctx, void **data, size_t *len,
                            orr_build_info *info, orr_error *err);

typedef struct {
    char name[128];   /* file name, "<key>.<kind>" */
    size_t bytes;     /* file size */
    double mtime;     /* seconds since the epoch */
    int valid;        /* header and checksum good (0 when refused: not read) */
    const char *refused;   /* why orr_kcache_get refuses it ("not owned by you",
                              "writable by group or others", "a directory", "a symbolic
                              link", "not a regular file"; static), or NULL */
    const char *advice;    /* what to do about a refused one (an ORR_KCACHE_ADVICE
                              string), or NULL */
} orr_kcache_entry;

/* Calls fn for every entry (whatever is named like one: files, and the
 * directories, FIFOs, sockets and links that orr_kcache_get refuses, never
 * opened or followed). */
orr_status orr_kcache_list(void (*fn)(const orr_kcache_entry *e, void *ctx), void *ctx,
                           orr_error *err);
/* Totals for `orrery info`. */
orr_status orr_kcache_usage(size_t *entries, size_t *bytes, orr_error *err);
/* Removes every entry (and stale temp files) that is orrery's own: a
 * regular file of the user's, whatever its contents or mode.  Anything else
 * named like one (a directory, a symbolic link, a FIFO, a socket, a device,
 * another user's file) is left as it is, never followed or descended into:
 * counted in *left (may be NULL) and given to on_left (may be NULL) with
 * its path and why ("a directory", "not owned by you (uid N)", ...); that
 * is not an error.  *removed (may be NULL) counts the entries removed.
 * Fails when the directory cannot be used or read, or the system refuses a
 * removal. */
orr_status orr_kcache_clear(size_t *removed, size_t *left,
                            void (*on_left)(const char *path, const char *why, void *ctx),
                            void *ctx, orr_error *err);

#endif
