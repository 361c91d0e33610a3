/* kcache: the on-disk cache of compiled kernels (see kcache.h).  Keys are
 * XXH3-128 hashes of everything that determines the compiled bytes; entries
 * are self-checking files (magic, key, length, XXH3-64 checksum, payload)
 * written atomically by temp file + fsync + rename (outfile.h).  Corrupt
 * entries read as misses; entries that someone else could have written are
 * refused. */
#include "kcache.h"
#include "outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <xxhash.h>

#define KC_MAGIC "ORRKC001"
#define KC_MAGIC_LEN 8
#define KC_KEY_LEN 32
#define KC_HDR_SIZE (KC_MAGIC_LEN + KC_KEY_LEN + 8 + 8)
#define KC_KIND_MAX 16
/* ---- keys ---------------------------------------------------------------- */

orr_status orr_kkey_begin(orr_kkey_builder *b, orr_error *err)
{
    XXH3_state_t *st = XXH3_createState();
    if (!st) {
        b->state = NULL;
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory creating a kernel cache key");
    }
    XXH3_128bits_reset(st);
    b->state = st;
    return ORR_OK;
}

void orr_kkey_add(orr_kkey_builder *b, const void *data, size_t len)
{
    if (!b || !b->state)
        return;
    /* the length as 8 little-endian bytes, so part boundaries matter */
    unsigned char pre[8];
    uint64_t n = (uint64_t)len;
    for (int i = 0; i < 8; i++)
        pre[i] = (unsigned char)(n >> (8 * i));
    XXH3_128bits_update(b->state, pre, sizeof pre);
    if (len)
        XXH3_128bits_update(b->state, data, len);
}

void orr_kkey_add_str(orr_kkey_builder *b, const char *s)
{
    if (!s)
        s = "";
    orr_kkey_add(b, s, strlen(s));
}

void orr_kkey_finish(orr_kkey_builder *b, orr_kkey *out)
{
    XXH128_hash_t h = {0, 0};
    if (b && b->state) {
        h = XXH3_128bits_digest(b->state);
        XXH3_freeState(b->state);
        b->state = NULL;
    }
    snprintf(out->hex, sizeof out->hex, "%016llx%016llx", (unsigned long long)h.high64,
             (unsigned long long)h.low64);
}

/* ---- names --------------------------------------------------------------- */

static int is_lower_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static int is_kind_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int valid_kind(const char *kind)
{
    if (!kind)
        return 0;
    size_t n = strlen(kind);
    if (n == 0 || n > KC_KIND_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!is_kind_char(kind[i]))
            return 0;
    return 1;
}

static int valid_key(const orr_kkey *key)
{
    if (!key)
        return 0;
    for (int i = 0; i < KC_KEY_LEN; i++)
        if (!is_lower_hex(key->hex[i]))
            return 0;
    return key->hex[KC_KEY_LEN] == '\0';
}

/* Length of the "<32 hex>.<kind>" prefix of name, or 0 if it has none. */
static size_t entry_prefix_len(const char *name)
{
    for (int i = 0; i < KC_KEY_LEN; i++)
        if (!is_lower_hex(name[i]))
            return 0;
    if (name[KC_KEY_LEN] != '.')
        return 0;
    size_t k = 0;
    while (is_kind_char(name[KC_KEY_LEN + 1 + k]))
        k++;
    if (k == 0 || k > KC_KIND_MAX)
        return 0;
    return KC_KEY_LEN + 1 + k;
}

/* 1 if name is exactly an entry name "<32 hex>.<kind>". */
static int is_entry_name(const char *name)
{
    size_t n = entry_prefix_len(name);
    return n && name[n] == '\0';
}

/* 1 if name is a temp file left by put: an entry name's outfile
 * temporary ("<entry name>.tmp.HOST.PID.XXXXXX", or .tmp.XXXXXX as before). */
static int is_temp_name(const char *name)
{
    size_t n = entry_prefix_len(name);
    return n && orr_outfile_is_temp(name, name, n);
}

/* ---- directory ----------------------------------------------------------- */

/* Checks that an existing path is a directory owned by us and not writable
 * by group or others. */
static orr_status check_dir(const char *path, orr_error *err)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return orr_fail(err, ORR_ERR_CACHE, "cannot access cache directory %s: %s", path,
                        strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return orr_fail(err, ORR_ERR_CACHE, "cache directory %s exists but is not a directory",
                        path);
    if (st.st_uid != geteuid())
        return orr_fail(err, ORR_ERR_CACHE,
                        "cache directory %s is owned by uid %lu, not by you (uid %lu)", path,
                        (unsigned long)st.st_uid, (unsigned long)geteuid());
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return orr_fail(err, ORR_ERR_CACHE,
                        "cache directory %s is writable by group or others; fix with chmod 700 %s",
                        path, path);
    return ORR_OK;
}

/* Creates path and its missing parents with mode 0700; *created is set when
 * the last component was made here. */
static orr_status make_dirs(char *path, int *created, orr_error *err)
{
    *created = 0;
    size_t n = strlen(path);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        if (path[i - 1] == '/')
            continue;   /* repeated slash */
        char save = path[i];
        path[i] = '\0';
        struct stat st;
        int rc = 0;
        if (stat(path, &st) != 0) {
            if (mkdir(path, 0700) == 0) {
                if (save == '\0')
                    *created = 1;
            } else if (errno != EEXIST) {
                rc = errno;
            }
        }
        if (rc) {
            orr_status s = orr_fail(err, ORR_ERR_CACHE, "cannot create cache directory %s: %s",
                                    path, strerror(rc));
            path[i] = save;
            return s;
        }
        path[i] = save;
    }
    return ORR_OK;
}

orr_status orr_kcache_dir(char *out, size_t size, orr_error *err)
{
    const char *env = getenv("ORRERY_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    char path[PATH_MAX];
    int n;
    if (env && env[0]) {
        n = snprintf(path, sizeof path, "%s", env);
    } else if (xdg && xdg[0] == '/') {
        n = snprintf(path, sizeof path, "%s/orrery", xdg);
    } else {
        const char *home = getenv("HOME");
        if (!home || !home[0]) {
            struct passwd *pw = getpwuid(geteuid());
            home = pw ? pw->pw_dir : NULL;
        }
        if (!home || !home[0])
            return orr_fail(err, ORR_ERR_CACHE,
                            "cannot find a home directory for the kernel cache; "
                            "set ORRERY_CACHE_DIR");
        n = snprintf(path, sizeof path, "%s/.cache/orrery", home);
    }
    if (n < 0 || (size_t)n >= sizeof path)
        return orr_fail(err, ORR_ERR_CACHE, "cache directory path is too long: %.200s...", path);
    /* drop trailing slashes, keeping a lone "/" */
    while (n > 1 && path[n - 1] == '/')
        path[--n] = '\0';
    if ((size_t)n >= size)
        return orr_fail(err, ORR_ERR_CACHE, "cache directory path %s is too long (limit %zu)",
                        path, size ? size - 1 : 0);

    int created = 0;
    orr_status st = make_dirs(path, &created, err);
    if (st)
        return st;
    if (created && chmod(path, 0700) != 0)
        return orr_fail(err, ORR_ERR_CACHE, "cannot set mode 700 on cache directory %s: %s",
                        path, strerror(errno));
    st = check_dir(path, err);
    if (st)
        return st;
    memcpy(out, path, (size_t)n + 1);
    return ORR_OK;
}

orr_kcache_state orr_kcache_check(char *dir, size_t dsize, char *why, size_t why_size)
{
    orr_error e = {0};
    if (orr_kcache_dir(dir, dsize, &e) != ORR_OK) {
        if (dsize)
            dir[0] = '\0';
        snprintf(why, why_size, "%s", e.msg);
        orr_error_clear(&e);
        return ORR_KCACHE_UNUSABLE;
    }
    /* the effective user's rights, as open and rename will see them (a
     * directory of one's own with mode 0500, a read-only file system) */
    if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0) {
        snprintf(why, why_size, "cache directory %s is not writable (%s)", dir, strerror(errno));
        return ORR_KCACHE_READONLY;
    }
    if (why_size)
        why[0] = '\0';
    return ORR_KCACHE_USABLE;
}

/* Resolves the directory and the path of key/kind in it. */
static orr_status entry_path(const orr_kkey *key, const char *kind, char *dir, size_t dsize,
                             char *path, size_t psize, orr_error *err)
{
    if (!valid_key(key))
        return orr_fail(err, ORR_ERR_ARG, "invalid kernel cache key: expected 32 hex digits");
    if (!valid_kind(kind))
        return orr_fail(err, ORR_ERR_ARG,
                        "invalid kernel cache kind \"%.40s\": expected 1 to %d characters [a-z0-9]",
                        kind ? kind : "(null)", KC_KIND_MAX);
    orr_status st = orr_kcache_dir(dir, dsize, err);
    if (st)
        return st;
    int n = snprintf(path, psize, "%s/%s.%s", dir, key->hex, kind);
    if (n < 0 || (size_t)n >= psize)
        return orr_fail(err, ORR_ERR_CACHE, "cache entry path in %s is too long", dir);
    return ORR_OK;
}

/* ---- reading entries ----------------------------------------------------- */

/* Reads up to n bytes, stopping early only at end of file; returns the count
 * or -1 with errno set. */
static ssize_t read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

enum { ENTRY_OK, ENTRY_CORRUPT, ENTRY_IOERR, ENTRY_NOMEM };

/* Reads and verifies an entry from fd (file size fsize) against keyhex.
 * ENTRY_OK: *data (heap) / *len hold the payload.  ENTRY_CORRUPT: why holds
 * the reason.  ENTRY_IOERR: errno says why.  ENTRY_NOMEM: out of memory. */
static int entry_read(int fd, const char *keyhex, off_t fsize, void **data, size_t *len,
                      char *why, size_t whysize)
{
    unsigned char hdr[KC_HDR_SIZE];
    ssize_t n = read_full(fd, hdr, sizeof hdr);
    if (n < 0)
        return ENTRY_IOERR;
    if ((size_t)n < sizeof hdr || fsize < (off_t)sizeof hdr) {
        snprintf(why, whysize, "truncated header: %zd of %d bytes", n, KC_HDR_SIZE);
        return ENTRY_CORRUPT;
    }
    if (memcmp(hdr, KC_MAGIC, KC_MAGIC_LEN) != 0) {
        snprintf(why, whysize, "bad magic");
        return ENTRY_CORRUPT;
    }
    if (memcmp(hdr + KC_MAGIC_LEN, keyhex, KC_KEY_LEN) != 0) {
        snprintf(why, whysize, "key does not match the file name");
        return ENTRY_CORRUPT;
    }
    uint64_t plen, sum;
    memcpy(&plen, hdr + KC_MAGIC_LEN + KC_KEY_LEN, 8);
    memcpy(&sum, hdr + KC_MAGIC_LEN + KC_KEY_LEN + 8, 8);
    uint64_t have = (uint64_t)fsize - KC_HDR_SIZE;
    if (plen > have) {
        snprintf(why, whysize, "truncated: %llu of %llu payload bytes", (unsigned long long)have,
                 (unsigned long long)plen);
        return ENTRY_CORRUPT;
    }
    if (plen < have) {
        snprintf(why, whysize, "%llu bytes after the %llu-byte payload",
                 (unsigned long long)(have - plen), (unsigned long long)plen);
        return ENTRY_CORRUPT;
    }
    if (plen > (uint64_t)SIZE_MAX - 1) {
        snprintf(why, whysize, "payload length %llu too large", (unsigned long long)plen);
        return ENTRY_CORRUPT;
    }
    char *buf = malloc(plen ? (size_t)plen : 1);
    if (!buf)
        return ENTRY_NOMEM;
    n = read_full(fd, buf, (size_t)plen);
    if (n < 0) {
        int e = errno;
        free(buf);
        errno = e;
        return ENTRY_IOERR;
    }
    if ((uint64_t)n < plen) {
        free(buf);
        snprintf(why, whysize, "truncated: %zd of %llu payload bytes", n,
                 (unsigned long long)plen);
        return ENTRY_CORRUPT;
    }
    char extra;
    n = read_full(fd, &extra, 1);
    if (n != 0) {
        int e = errno;
        free(buf);
        if (n < 0) {
            errno = e;
            return ENTRY_IOERR;
        }
        snprintf(why, whysize, "bytes after the %llu-byte payload", (unsigned long long)plen);
        return ENTRY_CORRUPT;
    }
    if (XXH3_64bits(buf, (size_t)plen) != (XXH64_hash_t)sum) {
        free(buf);
        snprintf(why, whysize, "checksum mismatch");
        return ENTRY_CORRUPT;
    }
    *data = buf;
    *len = (size_t)plen;
    return ENTRY_OK;
}

/* Why an entry with these attributes (lstat or fstat) is refused, or NULL:
 * loading a file someone else could have written would run their code. */
static const char *refusal(const struct stat *sb)
{
    if (S_ISLNK(sb->st_mode))
        return "a symbolic link";
    if (S_ISDIR(sb->st_mode))
        return "a directory";
    if (!S_ISREG(sb->st_mode))
        return "not a regular file";
    if (sb->st_uid != geteuid())
        return "not owned by you";
    if (sb->st_mode & (S_IWGRP | S_IWOTH))
        return "writable by group or others";
    return NULL;
}

/* Whether orr_kcache_clear removes an item with these attributes: a
 * regular file of one's own, nothing it would follow or descend into. */
static int clearable(const struct stat *sb)
{
    return S_ISREG(sb->st_mode) && sb->st_uid == geteuid();
}

/* What to do about a refused entry (kcache.h). */
static const char *advice(const struct stat *sb)
{
    return clearable(sb) ? ORR_KCACHE_ADVICE_CLEAR : ORR_KCACHE_ADVICE_OWN;
}

/* why, with the owner's uid for another user's file, into buf. */
static const char *reason(const char *why, const struct stat *sb, char *buf, size_t size)
{
    if (sb && strcmp(why, "not owned by you") == 0)
        snprintf(buf, size, "%s (uid %lu)", why, (unsigned long)sb->st_uid);
    else
        snprintf(buf, size, "%s", why);
    return buf;
}

static orr_status refuse(orr_error *err, const char *path, const char *why,
                         const struct stat *sb)
{
    char text[64];
    return orr_fail(err, ORR_ERR_CACHE, "refusing cache entry %s: %s; %s", path,
                    reason(why, sb, text, sizeof text), sb ? advice(sb) : ORR_KCACHE_ADVICE_OWN);
}

orr_status orr_kcache_get(const orr_kkey *key, const char *kind, void **data, size_t *len,
                          int *hit, char **note, orr_error *err)
{
    *hit = 0;
    *data = NULL;
    *len = 0;
    if (note)
        *note = NULL;
    char dir[PATH_MAX], path[PATH_MAX + 64];
    orr_status st = entry_path(key, kind, dir, sizeof dir, path, sizeof path, err);
    if (st)
        return st;

    /* O_NONBLOCK: a FIFO in the entry's place is opened at once (and refused
     * below), not waited on for a writer */
    int fd;
    do
        fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            return ORR_OK;
        struct stat lsb;
        const int known = lstat(path, &lsb) == 0;
        const char *why = e == ELOOP ? "a symbolic link" : known ? refusal(&lsb) : NULL;
        if (why)
            return refuse(err, path, why, known ? &lsb : NULL);
        if (e == EACCES && known && S_ISREG(lsb.st_mode)) {
            /* a file of one's own that one may not read (mode 000): no use
             * to anyone, so a miss that the rebuilt entry replaces, as a
             * corrupt one is */
            if (note && asprintf(note, "cache entry %s cannot be read (%s); rebuilding", path,
                                 strerror(e)) < 0)
                *note = NULL;
            return ORR_OK;
        }
        return orr_fail(err, ORR_ERR_CACHE, "cannot open cache entry %s: %s", path, strerror(e));
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return orr_fail(err, ORR_ERR_IO, "cannot stat cache entry %s: %s", path, strerror(e));
    }
    const char *refused = refusal(&sb);
    if (refused) {
        close(fd);
        return refuse(err, path, refused, &sb);
    }

    char why[160];
    void *buf = NULL;
    size_t blen = 0;
    int r = entry_read(fd, key->hex, sb.st_size, &buf, &blen, why, sizeof why);
    int e = errno;
    close(fd);
    switch (r) {
    case ENTRY_OK:
        *data = buf;
        *len = blen;
        *hit = 1;
        return ORR_OK;
    case ENTRY_CORRUPT:
        if (note && asprintf(note, "cache entry %s is corrupt (%s); rebuilding", path, why) < 0)
            *note = NULL;
        return ORR_OK;
    case ENTRY_NOMEM:
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory reading cache entry %s", path);
    default:
        return orr_fail(err, ORR_ERR_IO, "cannot read cache entry %s: %s", path, strerror(e));
    }
}

/* ---- writing entries ----------------------------------------------------- */

orr_status orr_kcache_put(const orr_kkey *key, const char *kind, const void *data, size_t len,
                          orr_error *err)
{
    char dir[PATH_MAX], path[PATH_MAX + 64];
    orr_status st = entry_path(key, kind, dir, sizeof dir, path, sizeof path, err);
    if (st)
        return st;

    unsigned char hdr[KC_HDR_SIZE];
    uint64_t plen = (uint64_t)len;
    uint64_t sum = (uint64_t)XXH3_64bits(data, len);
    memcpy(hdr, KC_MAGIC, KC_MAGIC_LEN);
    memcpy(hdr + KC_MAGIC_LEN, key->hex, KC_KEY_LEN);
    memcpy(hdr + KC_MAGIC_LEN + KC_KEY_LEN, &plen, 8);
    memcpy(hdr + KC_MAGIC_LEN + KC_KEY_LEN + 8, &sum, 8);

    orr_outfile f;
    st = orr_outfile_begin(&f, path, 0600, err);
    if (!st)
        st = orr_outfile_put(&f, hdr, sizeof hdr, err);
    if (!st)
        st = orr_outfile_put(&f, data, len, err);
    if (st) {
        orr_outfile_abort(&f);
        return st;
    }
    return orr_outfile_commit(&f, err);
}

/* ---- listing ------------------------------------------------------------- */

/* Calls fn(dir, dfd, name, ctx) for every directory item whose name passes
 * match; stops at the first non-OK status. */
typedef orr_status (*item_fn)(const char *dir, int dfd, const char *name, void *ctx,
                              orr_error *err);

static orr_status for_each(int (*match)(const char *name), item_fn fn, void *ctx,
                           orr_error *err)
{
    char dir[PATH_MAX];
    orr_status st = orr_kcache_dir(dir, sizeof dir, err);
    if (st)
        return st;
    DIR *d = opendir(dir);
    if (!d)
        return orr_fail(err, ORR_ERR_CACHE, "cannot open cache directory %s: %s", dir,
                        strerror(errno));
    int dfd = dirfd(d);
    for (;;) {
        errno = 0;
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno) {
                int e = errno;
                closedir(d);
                return orr_fail(err, ORR_ERR_IO, "cannot read cache directory %s: %s", dir,
                                strerror(e));
            }
            break;
        }
        if (!match(de->d_name))
            continue;
        st = fn(dir, dfd, de->d_name, ctx, err);
        if (st) {
            closedir(d);
            return st;
        }
    }
    closedir(d);
    return ORR_OK;
}

typedef struct {
    void (*fn)(const orr_kcache_entry *e, void *ctx);
    void *ctx;
    size_t entries, bytes;
} list_ctx;

/* Fills e for one entry; returns 0, or 1 if it vanished.  Entries that
 * orr_kcache_get would refuse (directories, FIFOs, sockets and symbolic
 * links among them: never opened or followed) get the reason in
 * e->refused; only regular files count bytes. */
static int describe(const char *dir, int dfd, const char *name, int check, orr_kcache_entry *e)
{
    (void)dir;
    struct stat sb;
    if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
        return 1;
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->bytes = S_ISREG(sb.st_mode) ? (size_t)sb.st_size : 0;
    e->mtime = (double)sb.st_mtim.tv_sec + (double)sb.st_mtim.tv_nsec * 1e-9;
    e->refused = refusal(&sb);
    if (e->refused)
        e->advice = advice(&sb);
    if (!check || e->refused)
        return 0;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat fs;
    if (fstat(fd, &fs) == 0 && S_ISREG(fs.st_mode)) {
        void *buf = NULL;
        size_t len = 0;
        char why[160];
        if (entry_read(fd, name, fs.st_size, &buf, &len, why, sizeof why) == ENTRY_OK) {
            e->valid = 1;
            free(buf);
        }
    }
    close(fd);
    return 0;
}

static orr_status list_item(const char *dir, int dfd, const char *name, void *ctx,
                            orr_error *err)
{
    (void)err;
    list_ctx *lc = ctx;
    orr_kcache_entry e;
    if (describe(dir, dfd, name, lc->fn != NULL, &e))
        return ORR_OK;
    lc->entries++;
    lc->bytes += e.bytes;
    if (lc->fn)
        lc->fn(&e, lc->ctx);
    return ORR_OK;
}

orr_status orr_kcache_list(void (*fn)(const orr_kcache_entry *e, void *ctx), void *ctx,
                           orr_error *err)
{
    list_ctx lc = {fn, ctx, 0, 0};
    if (!fn)
        return orr_fail(err, ORR_ERR_ARG, "orr_kcache_list: no callback given");
    return for_each(is_entry_name, list_item, &lc, err);
}

orr_status orr_kcache_usage(size_t *entries, size_t *bytes, orr_error *err)
{
    list_ctx lc = {NULL, NULL, 0, 0};
    orr_status st = for_each(is_entry_name, list_item, &lc, err);
    if (st)
        return st;
    if (entries)
        *entries = lc.entries;
    if (bytes)
        *bytes = lc.bytes;
    return ORR_OK;
}

static int is_entry_or_temp(const char *name)
{
    return is_entry_name(name) || is_temp_name(name);
}

typedef struct {
    size_t removed, left;
    void (*on_left)(const char *path, const char *why, void *ctx);
    void *ctx;
} clear_ctx;

/* Removes one item if it is orrery's own, a regular file of one's own
 * (unlinked: a name replaced by a directory since is refused by unlinkat,
 * a link removed itself, never followed); anything else named like an
 * entry (a directory, a symbolic link, a FIFO, a socket, a device, another
 * user's file) is not orrery's to judge: left, and given to on_left. */
static orr_status clear_item(const char *dir, int dfd, const char *name, void *ctx,
                             orr_error *err)
{
    clear_ctx *cc = ctx;
    struct stat sb;
    if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
        return ORR_OK;   /* gone already */
    if (!clearable(&sb)) {
        char path[PATH_MAX + 160], why[64];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        cc->left++;
        if (cc->on_left)
            cc->on_left(path, reason(refusal(&sb), &sb, why, sizeof why), cc->ctx);
        return ORR_OK;
    }
    if (unlinkat(dfd, name, 0) != 0) {
        if (errno == ENOENT)
            return ORR_OK;
        return orr_fail(err, ORR_ERR_CACHE, "cannot remove cache file %s/%s: %s", dir, name,
                        strerror(errno));
    }
    if (is_entry_name(name))
        cc->removed++;
    return ORR_OK;
}

/* Counts removed entries; stale temp files are removed but not counted. */
orr_status orr_kcache_clear(size_t *removed, size_t *left,
                            void (*on_left)(const char *path, const char *why, void *ctx),
                            void *ctx, orr_error *err)
{
    clear_ctx cc = {0, 0, on_left, ctx};
    orr_status st = for_each(is_entry_or_temp, clear_item, &cc, err);
    if (removed)
        *removed = cc.removed;
    if (left)
        *left = cc.left;
    return st;
}

orr_status orr_kcache_build(const char *const *key_parts, int nparts, const char *kind,
                            orr_build_fn build, void *ctx, void **data, size_t *len,
                            orr_build_info *info, orr_error *err)
{
    orr_kkey_builder kb;
    orr_kkey key;
    orr_status st = orr_kkey_begin(&kb, err);
    if (st)
        return st;
    for (int k = 0; k < nparts; k++)
        orr_kkey_add_str(&kb, key_parts[k]);
    orr_kkey_finish(&kb, &key);
    memcpy(info->key, key.hex, sizeof info->key);

    /* a cache directory that cannot be made or used: built uncached; one
     * that cannot be written: looked up, and what is built not stored.
     * The note says why in the same words for every kernel, so a caller
     * that shows each distinct note once says it once. */
    char dir[PATH_MAX], why[PATH_MAX + 128];
    const orr_kcache_state state = orr_kcache_check(dir, sizeof dir, why, sizeof why);
    info->cached = 0;
    if (state == ORR_KCACHE_UNUSABLE) {
        snprintf(info->note, sizeof info->note, ORR_KCACHE_UNUSABLE_NOTE "%s", why);
        return build(ctx, data, len, &info->compile_s, err);
    }

    int hit = 0;
    char *note = NULL;
    orr_error get_err = {0};
    st = orr_kcache_get(&key, kind, data, len, &hit, &note, &get_err);
    if (note) {
        snprintf(info->note, sizeof info->note, "%s", note);
        free(note);
    }
    if (st == ORR_ERR_CACHE || st == ORR_ERR_IO) {
        /* an entry refused (a directory, FIFO, link, a file someone else
         * could have written) or one that cannot be read: never loaded,
         * left as it is, and the kernel built without the cache */
        snprintf(info->note, sizeof info->note, "kernel built uncached: %.470s", get_err.msg);
        orr_error_clear(&get_err);
        return build(ctx, data, len, &info->compile_s, err);
    }
    if (st) {
        if (err)
            *err = get_err;
        else
            orr_error_clear(&get_err);
        return st;
    }
    if (hit) {
        info->cached = 1;
        info->compile_s = 0;
        return ORR_OK;
    }
    st = build(ctx, data, len, &info->compile_s, err);
    if (st)
        return st;   /* nothing is written to the cache for a failed build */
    if (state == ORR_KCACHE_READONLY) {
        if (!info->note[0])
            snprintf(info->note, sizeof info->note, ORR_KCACHE_READONLY_NOTE "%s", why);
        return ORR_OK;
    }
    orr_error put_err = {0};
    if (orr_kcache_put(&key, kind, *data, *len, &put_err) != ORR_OK && !info->note[0])
        snprintf(info->note, sizeof info->note, "kernel not cached: %s", put_err.msg);
    orr_error_clear(&put_err);
    return ORR_OK;
}
