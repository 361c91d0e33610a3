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
 * writers never leave a torn entry.  A corrupt or truncated entry is a miss
 * (the caller rebuilds and overwrites it); an entry not owned by the user or
 * writable by group/others is refused, since loading it would run someone
 * else's code; so is one that is not a regular file (a FIFO is opened
 * without blocking, so it is refused, never waited on).
 * orr_kcache_build is the one way the backends (and the benchmark's
 * reference loop) obtain a kernel object: fetch the entry, or build it and
 * store it; where the directory cannot be made or used, build it uncached
 * with a note. */
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

/* Looks up key/kind ("cubin", "so", ...).  On a hit: *hit = 1 and *data
 * (heap, caller frees) / *len hold the payload.  On a miss: *hit = 0, and if
 * an entry existed but was corrupt or truncated, *note (may be NULL) gets a
 * heap message saying so; the caller rebuilds and stores anew.  Returns
 * ORR_ERR_CACHE (with a message naming the file and advising to remove it or
 * run 'orrery cache clear') if the entry is not owned by the user, is
 * writable by group/others, or is not a regular file. */
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
 * a note).  A cache directory that orr_kcache_dir refuses (it cannot be
 * made, is not a directory, not yours, writable by others) is not an
 * error: the kernel is built and not stored, and the note says
 * "kernel cache unusable, running uncached: REASON".  A refused entry in a
 * usable directory stays an error (orr_kcache_get).  Fills info (cached,
 * compile time, key, note).  *data is heap. */
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
                              "writable by group or others", ...; static), or NULL */
} orr_kcache_entry;

/* Calls fn for every entry (files matching the entry name pattern). */
orr_status orr_kcache_list(void (*fn)(const orr_kcache_entry *e, void *ctx), void *ctx,
                           orr_error *err);
/* Totals for `orrery info`. */
orr_status orr_kcache_usage(size_t *entries, size_t *bytes, orr_error *err);
/* Removes every entry (and stale temp files); reports how many. */
orr_status orr_kcache_clear(size_t *removed, orr_error *err);

#endif
