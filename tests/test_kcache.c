/* test_kcache: the kernel cache: keys, hits and misses, corrupt and unsafe
 * entries, concurrent writers, directory creation and housekeeping, a FIFO
 * named like an entry, builds without a usable directory; builds past a
 * refused entry (uncached, never failing), directories, FIFOs, sockets and
 * links named like entries listed without being opened and left by clear
 * (which removes orrery's own files only, naming the rest), an unreadable
 * entry of one's own rebuilt, a read-only directory said once. */
#include "testutil.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kcache.h"
#include "util.h"

#define HDR_SIZE 56

static void make_key(orr_kkey *k, const char *a, const char *b)
{
    orr_error err = {0};
    orr_kkey_builder kb;
    TU_OK(orr_kkey_begin(&kb, &err), &err);
    orr_kkey_add_str(&kb, a);
    orr_kkey_add_str(&kb, b);
    orr_kkey_finish(&kb, k);
}

static unsigned char *rand_bytes(size_t n, uint64_t seed)
{
    unsigned char *p = malloc(n);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(tu_rand(&seed) * 256.0);
    return p;
}

static void entry_file(char *out, size_t size, const orr_kkey *k, const char *kind)
{
    snprintf(out, size, "%s/%s.%s", getenv("ORRERY_CACHE_DIR"), k->hex, kind);
}

/* Counts files in the cache dir whose name contains ".tmp.". */
static int count_temps(void)
{
    DIR *d = opendir(getenv("ORRERY_CACHE_DIR"));
    assert_non_null(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strstr(de->d_name, ".tmp."))
            n++;
    closedir(d);
    return n;
}

static int rm_item(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb; (void)flag; (void)ftw;
    return remove(path);
}

static void rm_tree(const char *path)
{
    nftw(path, rm_item, 16, FTW_DEPTH | FTW_PHYS);
}

/* Every test starts with the private cache selected and empty (clear
 * leaves what is not orrery's own: a test removes what it made). */
static int setup(void **state)
{
    (void)state;
    const char *dir = tu_private_cache();
    setenv("ORRERY_CACHE_DIR", dir, 1);
    orr_error err = {0};
    size_t removed, left = 0;
    if (orr_kcache_clear(&removed, &left, NULL, NULL, &err) != ORR_OK) {
        fprintf(stderr, "clear failed: %s\n", err.msg);
        return -1;
    }
    if (left) {
        fprintf(stderr, "clear left %zu items an earlier test made\n", left);
        return -1;
    }
    return 0;
}

static int group_teardown(void **state)
{
    (void)state;
    rm_tree(tu_private_cache());
    return 0;
}

/* 1. keys */
static void test_key(void **state)
{
    orr_kkey k1, k2, k3, k4;
    make_key(&k1, "ab", "c");
    make_key(&k2, "ab", "c");
    make_key(&k3, "a", "bc");
    make_key(&k4, "ab", NULL);
    assert_string_equal(k1.hex, k2.hex);
    assert_string_not_equal(k1.hex, k3.hex);
    assert_string_not_equal(k1.hex, k4.hex);
    assert_int_equal(strlen(k1.hex), 32);
    for (int i = 0; i < 32; i++)
        assert_true((k1.hex[i] >= '0' && k1.hex[i] <= '9') ||
                    (k1.hex[i] >= 'a' && k1.hex[i] <= 'f'));

    /* NULL counts as "" */
    orr_kkey k5, k6;
    make_key(&k5, "x", NULL);
    make_key(&k6, "x", "");
    assert_string_equal(k5.hex, k6.hex);
}

/* 2. miss, put, hit */
static void test_put_get(void **state)
{
    orr_error err = {0};
    orr_kkey k;
    make_key(&k, "put_get", "v1");
    size_t n = 100 * 1024 + 17;
    unsigned char *payload = rand_bytes(n, 42);

    void *data = (void *)1;
    size_t len = 99;
    int hit = 1;
    char *note = (char *)1;
    TU_OK(orr_kcache_get(&k, "cubin", &data, &len, &hit, &note, &err), &err);
    assert_int_equal(hit, 0);
    assert_null(note);
    assert_null(data);

    TU_OK(orr_kcache_put(&k, "cubin", payload, n, &err), &err);
    TU_OK(orr_kcache_get(&k, "cubin", &data, &len, &hit, &note, &err), &err);
    assert_int_equal(hit, 1);
    assert_null(note);
    assert_int_equal(len, n);
    assert_memory_equal(data, payload, n);
    free(data);

    /* a different kind is a different entry */
    TU_OK(orr_kcache_get(&k, "so", &data, &len, &hit, NULL, &err), &err);
    assert_int_equal(hit, 0);

    /* entry file is 0600 with the documented layout */
    char path[512];
    entry_file(path, sizeof path, &k, "cubin");
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal((size_t)sb.st_size, HDR_SIZE + n);
    char *raw = NULL;
    size_t rawlen = 0;
    TU_OK(orr_read_file(path, &raw, &rawlen, &err), &err);
    assert_memory_equal(raw, "ORRKC001", 8);
    assert_memory_equal(raw + 8, k.hex, 32);
    free(raw);

    /* an empty payload round-trips */
    orr_kkey ke;
    make_key(&ke, "empty", "");
    TU_OK(orr_kcache_put(&ke, "so", "", 0, &err), &err);
    TU_OK(orr_kcache_get(&ke, "so", &data, &len, &hit, NULL, &err), &err);
    assert_int_equal(hit, 1);
    assert_int_equal(len, 0);
    free(data);

    free(payload);
}

static void expect_corrupt_miss(const orr_kkey *k, const char *kind, const char *path)
{
    orr_error err = {0};
    void *data = NULL;
    size_t len = 0;
    int hit = 1;
    char *note = NULL;
    TU_OK(orr_kcache_get(k, kind, &data, &len, &hit, &note, &err), &err);
    assert_int_equal(hit, 0);
    assert_null(data);
    assert_non_null(note);
    print_message("note: %s\n", note);
    assert_non_null(strstr(note, "corrupt"));
    assert_non_null(strstr(note, path));
    free(note);
}

/* 3. corrupt and truncated entries are misses */
static void test_corrupt(void **state)
{
    orr_error err = {0};
    orr_kkey k;
    make_key(&k, "corrupt", "v1");
    size_t n = 50000;
    unsigned char *payload = rand_bytes(n, 7);
    char path[512];
    entry_file(path, sizeof path, &k, "cubin");

    /* flip one payload byte */
    TU_OK(orr_kcache_put(&k, "cubin", payload, n, &err), &err);
    int fd = open(path, O_RDWR);
    assert_true(fd >= 0);
    unsigned char c;
    assert_int_equal(pread(fd, &c, 1, HDR_SIZE + 1234), 1);
    c ^= 0x10;
    assert_int_equal(pwrite(fd, &c, 1, HDR_SIZE + 1234), 1);
    close(fd);
    expect_corrupt_miss(&k, "cubin", path);

    /* put again: a hit */
    TU_OK(orr_kcache_put(&k, "cubin", payload, n, &err), &err);
    void *data = NULL;
    size_t len = 0;
    int hit = 0;
    char *note = NULL;
    TU_OK(orr_kcache_get(&k, "cubin", &data, &len, &hit, &note, &err), &err);
    assert_int_equal(hit, 1);
    assert_null(note);
    assert_int_equal(len, n);
    assert_memory_equal(data, payload, n);
    free(data);

    /* truncated to half */
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(truncate(path, sb.st_size / 2), 0);
    expect_corrupt_miss(&k, "cubin", path);

    /* truncated inside the header, and empty */
    assert_int_equal(truncate(path, 20), 0);
    expect_corrupt_miss(&k, "cubin", path);
    assert_int_equal(truncate(path, 0), 0);
    expect_corrupt_miss(&k, "cubin", path);

    /* longer than the header says */
    TU_OK(orr_kcache_put(&k, "cubin", payload, n, &err), &err);
    fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "xx", 2), 2);
    close(fd);
    expect_corrupt_miss(&k, "cubin", path);

    /* wrong magic */
    TU_OK(orr_kcache_put(&k, "cubin", payload, n, &err), &err);
    fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, "XRRKC001", 8, 0), 8);
    close(fd);
    expect_corrupt_miss(&k, "cubin", path);

    /* an entry copied under another key's name */
    orr_kkey k2;
    make_key(&k2, "corrupt", "v2");
    TU_OK(orr_kcache_put(&k, "cubin", payload, n, &err), &err);
    char path2[512];
    entry_file(path2, sizeof path2, &k2, "cubin");
    assert_int_equal(link(path, path2), 0);
    expect_corrupt_miss(&k2, "cubin", path2);
    free(payload);
}

/* Counts listed entries that orr_kcache_get would refuse, with the last
 * reason and advice. */
typedef struct {
    int n;
    char why[64];
    char advice[128];
} refused_t;

static void on_refused(const orr_kcache_entry *e, void *ctx)
{
    refused_t *r = ctx;
    if (e->refused) {
        r->n++;
        snprintf(r->why, sizeof r->why, "%s", e->refused);
        assert_non_null(e->advice);
        snprintf(r->advice, sizeof r->advice, "%s", e->advice);
        assert_int_equal(e->valid, 0);
    } else {
        assert_null(e->advice);
    }
}

/* 4. unsafe entries are refused */
static void test_unsafe_entry(void **state)
{
    orr_error err = {0};
    orr_kkey k;
    make_key(&k, "unsafe", "v1");
    unsigned char *payload = rand_bytes(4096, 9);
    char path[512];
    entry_file(path, sizeof path, &k, "so");
    TU_OK(orr_kcache_put(&k, "so", payload, 4096, &err), &err);

    void *data = NULL;
    size_t len = 0;
    int hit = 1;
    char *note = NULL;
    assert_int_equal(chmod(path, 0666), 0);
    assert_int_equal(orr_kcache_get(&k, "so", &data, &len, &hit, &note, &err), ORR_ERR_CACHE);
    print_message("refused: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "writable by group or others"));
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "; " ORR_KCACHE_ADVICE_CLEAR));   /* a file of one's own */
    assert_int_equal(hit, 0);
    assert_null(data);
    assert_null(note);
    orr_error_clear(&err);
    /* the listing flags it */
    refused_t rs = {0};
    TU_OK(orr_kcache_list(on_refused, &rs, &err), &err);
    assert_int_equal(rs.n, 1);
    assert_string_equal(rs.why, "writable by group or others");
    assert_string_equal(rs.advice, ORR_KCACHE_ADVICE_CLEAR);

    /* a symlink named like an entry is refused too */
    assert_int_equal(unlink(path), 0);
    char target[600];
    snprintf(target, sizeof target, "%s.target", path);
    TU_OK(orr_kcache_put(&k, "so", payload, 4096, &err), &err);
    assert_int_equal(rename(path, target), 0);
    assert_int_equal(symlink(target, path), 0);
    assert_int_equal(orr_kcache_get(&k, "so", &data, &len, &hit, &note, &err), ORR_ERR_CACHE);
    print_message("refused: %s\n", err.msg);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "; " ORR_KCACHE_ADVICE_OWN));   /* clear leaves it */
    orr_error_clear(&err);
    memset(&rs, 0, sizeof rs);
    TU_OK(orr_kcache_list(on_refused, &rs, &err), &err);
    assert_int_equal(rs.n, 1);
    assert_string_equal(rs.why, "a symbolic link");
    assert_string_equal(rs.advice, ORR_KCACHE_ADVICE_OWN);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(unlink(target), 0);

    if (geteuid() == 0) {
        TU_OK(orr_kcache_put(&k, "so", payload, 4096, &err), &err);
        assert_int_equal(chown(path, 12345, 12345), 0);
        assert_int_equal(orr_kcache_get(&k, "so", &data, &len, &hit, &note, &err),
                         ORR_ERR_CACHE);
        print_message("refused: %s\n", err.msg);
        assert_non_null(strstr(err.msg, "not owned by you (uid 12345)"));
        assert_non_null(strstr(err.msg, path));
        assert_non_null(strstr(err.msg, "; " ORR_KCACHE_ADVICE_OWN));
        orr_error_clear(&err);
        memset(&rs, 0, sizeof rs);
        TU_OK(orr_kcache_list(on_refused, &rs, &err), &err);
        assert_int_equal(rs.n, 1);
        assert_string_equal(rs.why, "not owned by you");
        assert_string_equal(rs.advice, ORR_KCACHE_ADVICE_OWN);
        assert_int_equal(unlink(path), 0);   /* not orrery's to clear */
    } else {
        print_message("not root: skipping the foreign-owner case\n");
    }

    /* a fresh put replaces the unsafe entry */
    TU_OK(orr_kcache_put(&k, "so", payload, 4096, &err), &err);
    TU_OK(orr_kcache_get(&k, "so", &data, &len, &hit, &note, &err), &err);
    assert_int_equal(hit, 1);
    assert_int_equal(len, 4096);
    assert_memory_equal(data, payload, 4096);
    free(data);
    free(payload);
}

/* 5. concurrent writers and readers never see a torn entry */
#define NCHILD 4
#define CONC_SIZE (1024 * 1024)

/* 0 if the get was a miss or a full correct hit, 1 otherwise. */
static int check_get(const orr_kkey *k, const unsigned char *payload)
{
    orr_error err = {0};
    void *data = NULL;
    size_t len = 0;
    int hit = 0;
    char *note = NULL;
    orr_status st = orr_kcache_get(k, "cubin", &data, &len, &hit, &note, &err);
    int bad = st != ORR_OK || note != NULL ||
              (hit && (len != CONC_SIZE || memcmp(data, payload, CONC_SIZE) != 0));
    if (bad)
        fprintf(stderr, "bad get: st=%d hit=%d len=%zu note=%s msg=%s\n", st, hit, len,
                note ? note : "-", err.msg);
    free(data);
    free(note);
    orr_error_clear(&err);
    return bad;
}

static void test_concurrency(void **state)
{
    orr_kkey k;
    make_key(&k, "concurrent", "v1");
    unsigned char *payload = rand_bytes(CONC_SIZE, 1234);
    fflush(NULL);
    pid_t pids[NCHILD];
    for (int c = 0; c < NCHILD; c++) {
        pids[c] = fork();
        assert_true(pids[c] >= 0);
        if (pids[c] == 0) {
            int bad = 0;
            for (int i = 0; i < 20; i++) {
                bad |= check_get(&k, payload);
                orr_error err = {0};
                if (orr_kcache_put(&k, "cubin", payload, CONC_SIZE, &err) != ORR_OK) {
                    fprintf(stderr, "put failed: %s\n", err.msg);
                    bad = 1;
                }
                bad |= check_get(&k, payload);
            }
            free(payload);
            _exit(bad ? 1 : 0);
        }
    }
    int running = NCHILD, ok = 0, parent_bad = 0, parent_gets = 0;
    while (running > 0) {
        parent_bad |= check_get(&k, payload);
        parent_gets++;
        for (int c = 0; c < NCHILD; c++) {
            int status;
            if (pids[c] > 0 && waitpid(pids[c], &status, WNOHANG) == pids[c]) {
                pids[c] = 0;
                running--;
                if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                    ok++;
            }
        }
    }
    print_message("%d parent gets during %d writers\n", parent_gets, NCHILD);
    assert_int_equal(ok, NCHILD);
    assert_int_equal(parent_bad, 0);
    assert_int_equal(check_get(&k, payload), 0);

    orr_error err = {0};
    void *data = NULL;
    size_t len = 0;
    int hit = 0;
    TU_OK(orr_kcache_get(&k, "cubin", &data, &len, &hit, NULL, &err), &err);
    assert_int_equal(hit, 1);
    assert_int_equal(len, CONC_SIZE);
    assert_memory_equal(data, payload, CONC_SIZE);
    free(data);
    assert_int_equal(count_temps(), 0);
    free(payload);
}

/* 6. the cache directory */
static void test_cache_dir(void **state)
{
    orr_error err = {0};
    char base[] = "/tmp/orrery-kcdir-XXXXXX";
    assert_non_null(mkdtemp(base));
    char nested[512], out[512];
    snprintf(nested, sizeof nested, "%s/a/b/cache", base);
    setenv("ORRERY_CACHE_DIR", nested, 1);
    TU_OK(orr_kcache_dir(out, sizeof out, &err), &err);
    assert_string_equal(out, nested);
    struct stat sb;
    assert_int_equal(stat(nested, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    assert_int_equal(sb.st_mode & 0777, 0700);
    /* again: exists, fine */
    TU_OK(orr_kcache_dir(out, sizeof out, &err), &err);

    /* trailing slashes are dropped */
    char slashed[600];
    snprintf(slashed, sizeof slashed, "%s//", nested);
    setenv("ORRERY_CACHE_DIR", slashed, 1);
    TU_OK(orr_kcache_dir(out, sizeof out, &err), &err);
    assert_string_equal(out, nested);

    /* too small an output buffer */
    char tiny[8];
    assert_int_equal(orr_kcache_dir(tiny, sizeof tiny, &err), ORR_ERR_CACHE);
    orr_error_clear(&err);

    /* group-writable: refused with the fix */
    setenv("ORRERY_CACHE_DIR", nested, 1);
    assert_int_equal(chmod(nested, 0770), 0);
    assert_int_equal(orr_kcache_dir(out, sizeof out, &err), ORR_ERR_CACHE);
    print_message("refused: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "writable by group or others"));
    assert_non_null(strstr(err.msg, "chmod 700"));
    assert_non_null(strstr(err.msg, nested));
    orr_error_clear(&err);
    /* and a put there fails the same way */
    orr_kkey k;
    make_key(&k, "dir", "");
    assert_int_equal(orr_kcache_put(&k, "so", "x", 1, &err), ORR_ERR_CACHE);
    orr_error_clear(&err);
    assert_int_equal(chmod(nested, 0700), 0);

    /* a regular file */
    char file[600];
    snprintf(file, sizeof file, "%s/plain", base);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    setenv("ORRERY_CACHE_DIR", file, 1);
    assert_int_equal(orr_kcache_dir(out, sizeof out, &err), ORR_ERR_CACHE);
    print_message("refused: %s\n", err.msg);
    assert_non_null(strstr(err.msg, file));
    orr_error_clear(&err);

    /* a regular file in the way of a parent */
    char under[700];
    snprintf(under, sizeof under, "%s/sub", file);
    setenv("ORRERY_CACHE_DIR", under, 1);
    assert_int_equal(orr_kcache_dir(out, sizeof out, &err), ORR_ERR_CACHE);
    print_message("refused: %s\n", err.msg);
    orr_error_clear(&err);

    /* XDG_CACHE_HOME and HOME fallbacks */
    char *old_xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    char *old_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    unsetenv("ORRERY_CACHE_DIR");
    char xdg[600], want[700];
    snprintf(xdg, sizeof xdg, "%s/xdg", base);
    setenv("XDG_CACHE_HOME", xdg, 1);
    snprintf(want, sizeof want, "%s/orrery", xdg);
    TU_OK(orr_kcache_dir(out, sizeof out, &err), &err);
    assert_string_equal(out, want);
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", base, 1);
    snprintf(want, sizeof want, "%s/.cache/orrery", base);
    TU_OK(orr_kcache_dir(out, sizeof out, &err), &err);
    assert_string_equal(out, want);
    if (old_xdg)
        setenv("XDG_CACHE_HOME", old_xdg, 1);
    if (old_home)
        setenv("HOME", old_home, 1);
    else
        unsetenv("HOME");
    free(old_xdg);
    free(old_home);

    setenv("ORRERY_CACHE_DIR", tu_private_cache(), 1);
    rm_tree(base);
}

/* 7. list, usage, clear */
typedef struct {
    int n, valid;
    size_t bytes;
} seen_t;

static void on_entry(const orr_kcache_entry *e, void *ctx)
{
    seen_t *s = ctx;
    s->n++;
    s->valid += e->valid;
    s->bytes += e->bytes;
    assert_true(e->mtime > 0);
    assert_int_equal(strlen(e->name) > 33, 1);
}

static void test_list_usage_clear(void **state)
{
    orr_error err = {0};
    size_t sizes[3] = {1000, 20000, 12345};
    const char *kinds[3] = {"cubin", "so", "ptx"};
    size_t total = 0;
    for (int i = 0; i < 3; i++) {
        orr_kkey k;
        char part[16];
        snprintf(part, sizeof part, "%d", i);
        make_key(&k, "list", part);
        unsigned char *p = rand_bytes(sizes[i], (uint64_t)i + 100);
        TU_OK(orr_kcache_put(&k, kinds[i], p, sizes[i], &err), &err);
        total += HDR_SIZE + sizes[i];
        free(p);
    }
    const char *dir = getenv("ORRERY_CACHE_DIR");
    char path[512];
    snprintf(path, sizeof path, "%s/README", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("not a cache entry\n", f);
    fclose(f);
    /* a stale temp file and some look-alikes that are not entries */
    char stale[600], odd1[600], odd2[600];
    snprintf(stale, sizeof stale, "%s/0123456789abcdef0123456789abcdef.so.tmp.Ab12Cd", dir);
    snprintf(odd1, sizeof odd1, "%s/0123456789ABCDEF0123456789abcdef.so", dir);
    snprintf(odd2, sizeof odd2, "%s/0123456789abcdef0123456789abcdef.so.bak", dir);
    const char *extra[3] = {stale, odd1, odd2};
    for (int i = 0; i < 3; i++) {
        f = fopen(extra[i], "w");
        assert_non_null(f);
        fclose(f);
    }

    size_t entries = 0, bytes = 0;
    TU_OK(orr_kcache_usage(&entries, &bytes, &err), &err);
    assert_int_equal(entries, 3);
    assert_int_equal(bytes, total);

    seen_t s = {0};
    TU_OK(orr_kcache_list(on_entry, &s, &err), &err);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.valid, 3);
    assert_int_equal(s.bytes, total);

    /* a corrupt entry lists as invalid */
    orr_kkey k0;
    make_key(&k0, "list", "0");
    char p0[512];
    entry_file(p0, sizeof p0, &k0, "cubin");
    assert_int_equal(truncate(p0, 100), 0);
    memset(&s, 0, sizeof s);
    TU_OK(orr_kcache_list(on_entry, &s, &err), &err);
    assert_int_equal(s.n, 3);
    assert_int_equal(s.valid, 2);

    size_t removed = 0;
    TU_OK(orr_kcache_clear(&removed, NULL, NULL, NULL, &err), &err);
    assert_int_equal(removed, 3);
    TU_OK(orr_kcache_usage(&entries, &bytes, &err), &err);
    assert_int_equal(entries, 0);
    assert_int_equal(bytes, 0);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(access(stale, F_OK), -1);
    assert_int_equal(access(odd1, F_OK), 0);
    assert_int_equal(access(odd2, F_OK), 0);
    unlink(path);
    unlink(odd1);
    unlink(odd2);
}

/* bad kinds and keys are argument errors */
static void test_bad_args(void **state)
{
    orr_error err = {0};
    orr_kkey k;
    make_key(&k, "args", "");
    const char *bad[] = {"", "CUBIN", "a/b", "..", "so.tmp", "abcdefghijklmnopq"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(orr_kcache_put(&k, bad[i], "x", 1, &err), ORR_ERR_ARG);
        orr_error_clear(&err);
        void *data = NULL;
        size_t len = 0;
        int hit = 0;
        assert_int_equal(orr_kcache_get(&k, bad[i], &data, &len, &hit, NULL, &err), ORR_ERR_ARG);
        orr_error_clear(&err);
    }
    orr_kkey bk = k;
    bk.hex[3] = 'G';
    assert_int_equal(orr_kcache_put(&bk, "so", "x", 1, &err), ORR_ERR_ARG);
    orr_error_clear(&err);
}

/* 9. a FIFO named like an entry: refused at once (opened without waiting
 * for a writer), listed as refused */
static void test_fifo_entry(void **state)
{
    orr_kkey k;
    make_key(&k, "fifo", "");
    char path[4200];
    entry_file(path, sizeof path, &k, "so");
    assert_int_equal(mkfifo(path, 0600), 0);
    alarm(30);   /* a hang fails the test */
    orr_error err = {0};
    void *data = NULL;
    size_t len = 0;
    int hit = 1;
    char *note = NULL;
    assert_int_equal(orr_kcache_get(&k, "so", &data, &len, &hit, &note, &err), ORR_ERR_CACHE);
    print_message("refused: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "not a regular file"));
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "; " ORR_KCACHE_ADVICE_OWN));
    assert_int_equal(hit, 0);
    orr_error_clear(&err);
    refused_t rs = {0};
    TU_OK(orr_kcache_list(on_refused, &rs, &err), &err);
    assert_int_equal(rs.n, 1);
    assert_string_equal(rs.why, "not a regular file");
    alarm(0);
    unlink(path);
}

static int builds;

static orr_status count_build(void *ctx, void **data, size_t *len, double *seconds,
                              orr_error *err)
{
    (void)ctx;
    (void)err;
    builds++;
    *data = strdup("payload");
    *len = 8;
    *seconds = 0;
    return ORR_OK;
}

/* 10. a cache directory that cannot be made (under a regular file: this
 * stops root too) or used: kernels are built uncached, with a note that
 * says why */
static void test_unusable_dir(void **state)
{
    char base[] = "/tmp/orrery-kcnodir-XXXXXX";
    assert_non_null(mkdtemp(base));
    char file[300], cache[320];
    snprintf(file, sizeof file, "%s/file", base);
    snprintf(cache, sizeof cache, "%s/x", file);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    char *old = strdup(getenv("ORRERY_CACHE_DIR"));
    setenv("ORRERY_CACHE_DIR", cache, 1);
    const char *parts[2] = {"unusable", "dir"};
    builds = 0;
    for (int round = 0; round < 2; round++) {
        orr_error err = {0};
        orr_build_info info;
        memset(&info, 0, sizeof info);
        void *data = NULL;
        size_t len = 0;
        orr_status st = orr_kcache_build(parts, 2, "so", count_build, NULL, &data, &len, &info,
                                         &err);
        if (st)
            print_message("build: %s\n", err.msg);
        assert_int_equal(st, ORR_OK);
        assert_int_equal(builds, round + 1);
        assert_int_equal(info.cached, 0);
        assert_int_equal(len, 8);
        free(data);
        print_message("note: %s\n", info.note);
        assert_non_null(strstr(info.note, "kernel cache unusable, running uncached: "));
        assert_non_null(strstr(info.note, cache));
        assert_non_null(strstr(info.note, "Not a directory"));
    }
    setenv("ORRERY_CACHE_DIR", old, 1);
    free(old);
    rm_tree(base);
}

/* Builds parts through the cache (count_build), expecting success; returns
 * info. */
static orr_build_info build_ok(const char *a, const char *b)
{
    const char *parts[2] = {a, b};
    orr_error err = {0};
    orr_build_info info;
    memset(&info, 0, sizeof info);
    void *data = NULL;
    size_t len = 0;
    orr_status st = orr_kcache_build(parts, 2, "so", count_build, NULL, &data, &len, &info, &err);
    if (st)
        fail_msg("build %s/%s: %s", a, b, err.msg);
    assert_int_equal(len, 8);
    assert_string_equal((const char *)data, "payload");
    free(data);
    return info;
}

/* 11. an entry refused (a FIFO, a directory, a symbolic link, one writable
 * by others, another user's) never ends a run: the kernel is built and not
 * stored, the note names the entry and why, and the entry is left as it is
 * (loading it would run code someone else could have written) */
static void test_refused_entry_built(void **state)
{
    const char *kinds[] = {"fifo", "dir", "symlink", "groupw", "other"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        const char *kind = kinds[i];
        if (strcmp(kind, "other") == 0 && geteuid() != 0) {
            print_message("not root: skipping another user's entry\n");
            continue;
        }
        orr_kkey k;
        make_key(&k, "refused-build", kind);
        char path[512], target[600], want[1024];
        entry_file(path, sizeof path, &k, "so");
        builds = 0;
        orr_build_info info = build_ok("refused-build", kind);   /* stored */
        assert_int_equal(builds, 1);
        const char *why = NULL, *advice = ORR_KCACHE_ADVICE_OWN;   /* clear leaves it */
        mode_t type = S_IFREG;
        if (strcmp(kind, "fifo") == 0) {
            assert_int_equal(unlink(path), 0);
            assert_int_equal(mkfifo(path, 0600), 0);
            why = "not a regular file", type = S_IFIFO;
        } else if (strcmp(kind, "dir") == 0) {
            assert_int_equal(unlink(path), 0);
            assert_int_equal(mkdir(path, 0700), 0);
            why = "a directory", type = S_IFDIR;
        } else if (strcmp(kind, "symlink") == 0) {
            snprintf(target, sizeof target, "%s.target", path);
            assert_int_equal(rename(path, target), 0);
            assert_int_equal(symlink(target, path), 0);
            why = "a symbolic link", type = S_IFLNK;
        } else if (strcmp(kind, "groupw") == 0) {
            assert_int_equal(chmod(path, 0620), 0);
            why = "writable by group or others", advice = ORR_KCACHE_ADVICE_CLEAR;
        } else {
            assert_int_equal(chown(path, 12345, 12345), 0);
            why = "not owned by you (uid 12345)";
        }
        alarm(30);   /* a FIFO waited on fails the test */
        for (int round = 0; round < 2; round++) {
            info = build_ok("refused-build", kind);
            assert_int_equal(builds, 2 + round);
            assert_int_equal(info.cached, 0);
            snprintf(want, sizeof want, "kernel built uncached: refusing cache entry %s: %s; %s",
                     path, why, advice);
            print_message("%s: %s\n", kind, info.note);
            assert_string_equal(info.note, want);
            struct stat sb;
            assert_int_equal(lstat(path, &sb), 0);
            assert_int_equal(sb.st_mode & S_IFMT, type);   /* left as it was */
        }
        alarm(0);
        if (type == S_IFDIR)
            assert_int_equal(rmdir(path), 0);
        else
            assert_int_equal(unlink(path), 0);
        if (type == S_IFLNK)
            assert_int_equal(unlink(target), 0);
    }
}

/* What clear left, a line each: "PATH: WHY\n". */
static void on_left(const char *path, const char *why, void *ctx)
{
    char *out = ctx;
    size_t len = strlen(out);
    snprintf(out + len, 4096 - len, "%s: %s\n", path, why);
}

/* 12. whatever is named like an entry or a temporary is listed without
 * being opened or followed (a FIFO, a socket, a directory, a symbolic
 * link: refused, with the advice to remove it oneself); clear removes only
 * orrery's own (regular files of one's own, a group-writable one too) and
 * leaves the rest as it is, each named with why (a link's target is
 * untouched, a directory's contents too) */
static void test_odd_entries_listed_cleared(void **state)
{
    orr_error err = {0};
    const char *dir = getenv("ORRERY_CACHE_DIR");
    orr_kkey kd, kf, kl, kfull, ks, kown, kgw, kother;
    make_key(&kd, "odd", "dir");
    make_key(&kf, "odd", "fifo");
    make_key(&kl, "odd", "link");
    make_key(&kfull, "odd", "full");
    make_key(&ks, "odd", "socket");
    make_key(&kown, "odd", "own");
    make_key(&kgw, "odd", "groupw");
    make_key(&kother, "odd", "other");
    char pd[512], pf[512], pl[512], pfull[512], ps[512], pown[512], pgw[512], pother[512];
    char ptmp[600], target[600], inside[600];
    entry_file(pd, sizeof pd, &kd, "so");
    entry_file(pf, sizeof pf, &kf, "so");
    entry_file(pl, sizeof pl, &kl, "cubin");
    entry_file(pfull, sizeof pfull, &kfull, "so");
    entry_file(ps, sizeof ps, &ks, "so");
    entry_file(pown, sizeof pown, &kown, "so");
    entry_file(pgw, sizeof pgw, &kgw, "so");
    entry_file(pother, sizeof pother, &kother, "so");
    snprintf(ptmp, sizeof ptmp, "%s.tmp.Fa1fo0", pown);   /* named like a temporary */
    snprintf(target, sizeof target, "%s/elsewhere", dir);
    snprintf(inside, sizeof inside, "%s/something", pfull);
    assert_int_equal(mkdir(pd, 0700), 0);
    assert_int_equal(mkfifo(pf, 0600), 0);
    assert_int_equal(mkfifo(ptmp, 0600), 0);
    FILE *f = fopen(target, "w");
    assert_non_null(f);
    fclose(f);
    assert_int_equal(symlink(target, pl), 0);
    assert_int_equal(mkdir(pfull, 0700), 0);
    f = fopen(inside, "w");
    assert_non_null(f);
    fclose(f);
    int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(sock >= 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    const int have_socket = strlen(ps) < sizeof sa.sun_path;   /* a short TMPDIR */
    if (have_socket) {
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", ps);
        assert_int_equal(bind(sock, (struct sockaddr *)&sa, sizeof sa), 0);
    } else {
        print_message("the cache path is too long for a socket: no socket\n");
    }
    unsigned char payload[16] = "orrery's own";
    TU_OK(orr_kcache_put(&kown, "so", payload, sizeof payload, &err), &err);
    TU_OK(orr_kcache_put(&kgw, "so", payload, sizeof payload, &err), &err);
    assert_int_equal(chmod(pgw, 0660), 0);
    const int root = geteuid() == 0;
    if (root) {   /* another user's file (chown needs root) */
        TU_OK(orr_kcache_put(&kother, "so", payload, sizeof payload, &err), &err);
        assert_int_equal(chown(pother, 12345, 12345), 0);
    }

    alarm(30);   /* a FIFO or socket opened and waited on fails the test */
    refused_t rs = {0};
    TU_OK(orr_kcache_list(on_refused, &rs, &err), &err);
    const int odd = 4 + have_socket;   /* dir, fifo, link, full dir, socket */
    assert_int_equal(rs.n, odd + 1 + root);   /* + group-writable, another user's */
    size_t entries = 0, bytes = 1;
    TU_OK(orr_kcache_usage(&entries, &bytes, &err), &err);
    assert_int_equal(entries, (size_t)(odd + 2 + root));
    /* only regular files have bytes: the two (three) stored entries */
    struct stat sb;
    assert_int_equal(stat(pown, &sb), 0);
    assert_int_equal(bytes, (size_t)sb.st_size * (size_t)(2 + root));

    size_t removed = 0, left = 0;
    char said[4096] = "";
    TU_OK(orr_kcache_clear(&removed, &left, on_left, said, &err), &err);
    alarm(0);
    print_message("left:\n%s", said);
    assert_int_equal(removed, 2);   /* the entry and the group-writable one */
    assert_int_equal(left, (size_t)(odd + 1 + root));   /* + the FIFO named as a temporary */
    const struct {
        const char *path, *why;
        int on;
    } kept[] = {
        {pd, "a directory", 1},
        {pf, "not a regular file", 1},
        {ptmp, "not a regular file", 1},
        {pl, "a symbolic link", 1},
        {pfull, "a directory", 1},
        {ps, "not a regular file", have_socket},
        {pother, "not owned by you (uid 12345)", root},
    };
    for (size_t k = 0; k < sizeof kept / sizeof kept[0]; k++) {
        if (!kept[k].on)
            continue;
        char line[1200];
        snprintf(line, sizeof line, "%s: %s\n", kept[k].path, kept[k].why);
        if (!strstr(said, line))
            fail_msg("clear did not say it left %s", line);
        assert_int_equal(lstat(kept[k].path, &sb), 0);   /* left as it was */
    }
    assert_int_equal(lstat(pown, &sb), -1);
    assert_int_equal(lstat(pgw, &sb), -1);
    assert_int_equal(stat(target, &sb), 0);   /* the link's target untouched */
    assert_int_equal(stat(inside, &sb), 0);
    assert_true(S_ISLNK((lstat(pl, &sb), sb.st_mode)));

    unlink(inside);
    rmdir(pfull);
    rmdir(pd);
    unlink(pf);
    unlink(ptmp);
    unlink(pl);
    unlink(target);
    close(sock);
    unlink(ps);
    unlink(pother);
}

/* Runs fn(dir) in a child process as an unprivileged user (nobody when
 * this is root: file modes mean nothing to root) in a fresh directory of
 * its own; skips the test where that cannot be done.  fn returns 0 when
 * every check held (it reports the rest on stderr). */
static void as_user(const char *prefix, int (*fn)(const char *dir))
{
    char dir[256];
    tu_temp_dir(dir, sizeof dir, prefix);
    tu_remove_at_exit(dir);
    const uid_t nobody = 65534;
    if (geteuid() == 0) {
        assert_int_equal(chown(dir, nobody, nobody), 0);
        assert_int_equal(chmod(dir, 0700), 0);
    }
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(nobody) != 0 || setuid(nobody) != 0))
            _exit(3);
        if (access(dir, W_OK | X_OK) != 0)
            _exit(4);   /* a TMPDIR that nobody cannot reach */
        _exit(fn(dir));
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    if (geteuid() == 0)   /* whatever the child left, removable at exit */
        chmod(dir, 0700);
    assert_true(WIFEXITED(ws));
    if (WEXITSTATUS(ws) == 3 || WEXITSTATUS(ws) == 4) {
        print_message("cannot run as an unprivileged user here: skipped\n");
        skip();
    }
    assert_int_equal(WEXITSTATUS(ws), 0);
}

#define CHECK(cond)                                                                \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "%s:%d: %s fails\n", __FILE__, __LINE__, #cond);       \
            bad = 1;                                                               \
        }                                                                          \
    } while (0)

/* Builds parts in the child (count_build); returns its status. */
static orr_status child_build(const char *a, const char *b, orr_build_info *info)
{
    const char *parts[2] = {a, b};
    orr_error err = {0};
    memset(info, 0, sizeof *info);
    void *data = NULL;
    size_t len = 0;
    orr_status st = orr_kcache_build(parts, 2, "so", count_build, NULL, &data, &len, info, &err);
    if (st)
        fprintf(stderr, "build %s/%s: %s\n", a, b, err.msg);
    free(data);
    orr_error_clear(&err);
    return st;
}

/* An entry of one's own that one may not read (mode 000) is no use to
 * anyone: a miss with a note, rebuilt and replaced. */
static int unreadable_child(const char *base)
{
    int bad = 0;
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", base);
    setenv("ORRERY_CACHE_DIR", cache, 1);
    orr_build_info info;
    builds = 0;
    CHECK(child_build("unreadable", "", &info) == ORR_OK && builds == 1);
    orr_kkey k;
    orr_error err = {0};
    orr_kkey_builder kb;
    CHECK(orr_kkey_begin(&kb, &err) == ORR_OK);
    orr_kkey_add_str(&kb, "unreadable");
    orr_kkey_add_str(&kb, "");
    orr_kkey_finish(&kb, &k);
    char path[512];
    snprintf(path, sizeof path, "%s/%s.so", cache, k.hex);
    CHECK(chmod(path, 0) == 0);
    void *data = NULL;
    size_t len = 0;
    int hit = 1;
    char *note = NULL;
    CHECK(orr_kcache_get(&k, "so", &data, &len, &hit, &note, &err) == ORR_OK);
    CHECK(hit == 0);
    char want[700];
    snprintf(want, sizeof want, "cache entry %s cannot be read (Permission denied); rebuilding",
             path);
    CHECK(note && strcmp(note, want) == 0);
    fprintf(stderr, "get: %s\n", note ? note : "(no note)");
    free(note);
    CHECK(child_build("unreadable", "", &info) == ORR_OK && builds == 2 && !info.cached);
    CHECK(strcmp(info.note, want) == 0);
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600);   /* replaced */
    CHECK(child_build("unreadable", "", &info) == ORR_OK && builds == 2 && info.cached);
    CHECK(info.note[0] == '\0');
    return bad;
}

static void test_unreadable_own_entry(void **state)
{
    as_user("orrery-kc000", unreadable_child);
}

/* A cache directory of one's own that one may not write (mode 0500): said
 * once in the same words for every kernel; entries there are loaded, new
 * kernels built and not stored (nothing tried in the directory). */
static int readonly_child(const char *base)
{
    int bad = 0;
    char cache[300], dir[300], why[600];
    snprintf(cache, sizeof cache, "%s/cache", base);
    setenv("ORRERY_CACHE_DIR", cache, 1);
    orr_build_info info;
    builds = 0;
    CHECK(child_build("readonly", "stored", &info) == ORR_OK && builds == 1);
    CHECK(orr_kcache_check(dir, sizeof dir, why, sizeof why) == ORR_KCACHE_USABLE);
    CHECK(chmod(cache, 0500) == 0);
    CHECK(orr_kcache_check(dir, sizeof dir, why, sizeof why) == ORR_KCACHE_READONLY);
    CHECK(strcmp(dir, cache) == 0);
    char want[900];
    snprintf(want, sizeof want, "cache directory %s is not writable (Permission denied)", cache);
    CHECK(strcmp(why, want) == 0);
    fprintf(stderr, "read-only: %s\n", why);
    CHECK(child_build("readonly", "stored", &info) == ORR_OK && builds == 1 && info.cached);
    CHECK(info.note[0] == '\0');
    snprintf(want, sizeof want, ORR_KCACHE_READONLY_NOTE "%s", why);
    CHECK(child_build("readonly", "new1", &info) == ORR_OK && builds == 2 && !info.cached);
    CHECK(strcmp(info.note, want) == 0);
    CHECK(child_build("readonly", "new2", &info) == ORR_OK && builds == 3 && !info.cached);
    CHECK(strcmp(info.note, want) == 0);
    DIR *d = opendir(cache);
    int items = 0;
    struct dirent *de;
    while (d && (de = readdir(d)))
        items += de->d_name[0] != '.';
    if (d)
        closedir(d);
    CHECK(items == 1);
    CHECK(chmod(cache, 0700) == 0);
    return bad;
}

static void test_readonly_dir(void **state)
{
    as_user("orrery-kcro", readonly_child);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_key, setup),
        cmocka_unit_test_setup(test_put_get, setup),
        cmocka_unit_test_setup(test_corrupt, setup),
        cmocka_unit_test_setup(test_unsafe_entry, setup),
        cmocka_unit_test_setup(test_concurrency, setup),
        cmocka_unit_test_setup(test_cache_dir, setup),
        cmocka_unit_test_setup(test_list_usage_clear, setup),
        cmocka_unit_test_setup(test_bad_args, setup),
        cmocka_unit_test_setup(test_fifo_entry, setup),
        cmocka_unit_test_setup(test_unusable_dir, setup),
        cmocka_unit_test_setup(test_refused_entry_built, setup),
        cmocka_unit_test_setup(test_odd_entries_listed_cleared, setup),
        cmocka_unit_test_setup(test_unreadable_own_entry, setup),
        cmocka_unit_test_setup(test_readonly_dir, setup),
    };
    return cmocka_run_group_tests_name("kcache", tests, NULL, group_teardown);
}
