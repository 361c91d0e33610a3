/* outfile: atomic output files and numbered paths (see outfile.h); the one
 * place orrery writes a file. */
#include "outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

orr_status orr_outfile_expand(const char *pattern, long number, char *out, size_t size,
                              int *numbered, orr_error *err)
{
    char fmt[32] = "";
    size_t used = 0;
    int found = 0;
    if (numbered)
        *numbered = 0;
    for (const char *p = pattern; *p;) {
        if (*p != '%') {
            if (used + 1 >= size)
                goto too_long;
            out[used++] = *p++;
            continue;
        }
        if (p[1] == '%') {
            if (used + 1 >= size)
                goto too_long;
            out[used++] = '%';
            p += 2;
            continue;
        }
        /* %[flags][width](d|i) */
        const char *q = p + 1;
        while (*q && strchr("0-+ ", *q))
            q++;
        while (*q >= '0' && *q <= '9')
            q++;
        int ok = (*q == 'd' || *q == 'i') && q - p < 12 && !found;
        if (!ok) {
            /* the offending conversion as written: up to its letter */
            const char *e = q;
            while (*e && strchr("hlLqjzt.*0123456789", *e))
                e++;
            int len = *e ? (int)(e - p) + 1 : (int)(e - p);
            if ((*q == 'd' || *q == 'i') && found)
                return orr_fail(err, ORR_ERR_ARG,
                                "output path '%s': more than one number conversion ('%s' and "
                                "'%.*s'); use one, or %%%% for a literal %%",
                                pattern, fmt, len, p);
            return orr_fail(err, ORR_ERR_ARG,
                            "output path '%s': '%.*s' is not allowed (use one integer "
                            "conversion such as %%03d, or %%%% for a literal %%)",
                            pattern, len, p);
        }
        found = 1;
        snprintf(fmt, sizeof fmt, "%.*s", (int)(q - p + 1), p);
        char spec[40], num[64];
        snprintf(spec, sizeof spec, "%.*sl%c", (int)(q - p), p, *q);
        int w = snprintf(num, sizeof num, spec, number);
        if (w < 0 || (size_t)w >= sizeof num || used + (size_t)w >= size)
            goto too_long;
        memcpy(out + used, num, (size_t)w);
        used += (size_t)w;
        p = q + 1;
    }
    if (size == 0)
        goto too_long;
    out[used] = '\0';
    if (numbered)
        *numbered = found;
    return ORR_OK;
too_long:
    return orr_fail(err, ORR_ERR_ARG, "output path '%s': too long", pattern);
}

/* mkdir -p of the directories before the last '/' of path. */
static orr_status make_parents(const char *path, orr_error *err)
{
    char *dir = strdup(path);
    if (!dir)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) {
        free(dir);
        return ORR_OK;
    }
    *slash = '\0';
    struct stat st;
    if (stat(dir, &st) == 0) {
        int isdir = S_ISDIR(st.st_mode);
        if (!isdir)
            orr_fail(err, ORR_ERR_IO, "cannot write '%s': '%s' is not a directory", path, dir);
        free(dir);
        return isdir ? ORR_OK : ORR_ERR_IO;
    }
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
            int e = errno;
            orr_fail(err, ORR_ERR_IO, "cannot write '%s': cannot create directory '%s': %s",
                     path, dir, strerror(e));
            free(dir);
            return ORR_ERR_IO;
        }
        *p = c;
        if (!c)
            break;
    }
    free(dir);
    return ORR_OK;
}

/* Six letters or digits, different on every call: a per-process counter
 * mixed with the process id and the clock.  Uniqueness itself comes from
 * O_EXCL (a clash, with another process say, just draws again). */
static void temp_suffix(char out[7])
{
    static const char digits[] =
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    static atomic_ullong counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    unsigned long long x = atomic_fetch_add(&counter, 1) * 0x9e3779b97f4a7c15ULL;
    x ^= ((unsigned long long)getpid() << 32) ^ (unsigned long long)ts.tv_nsec ^
         ((unsigned long long)ts.tv_sec << 20);
    /* splitmix64's finaliser */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    for (int i = 0; i < 6; i++, x /= 62)
        out[i] = digits[x % 62];
    out[6] = '\0';
}

/* ---- temporary names -----------------------------------------------------
 * "<path>.tmp.<host>.<pid>.<six letters or digits>": host is 8 hex digits of
 * a hash of the writer's host name and process-id namespace, pid its
 * process, so that a temporary file left by a writer that died (kill -9,
 * MPI_Abort) can be told from a live writer's: where host is this one's,
 * pid names a process this one can see. */

/* 8 hex digits of the FNV-1a hash of this host's name and its process-id
 * namespace (containers that share a host name and a file system see
 * different processes). */
static void host_tag(char out[9])
{
    char host[256] = "", ns[64] = "";
    if (gethostname(host, sizeof host) != 0)
        host[0] = '\0';
    host[sizeof host - 1] = '\0';
    ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
    ns[n > 0 ? n : 0] = '\0';
    unsigned h = 2166136261u;
    for (const char *p = host; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    for (const char *p = ns; *p; p++)
        h = (h ^ (unsigned char)*p) * 16777619u;
    snprintf(out, 9, "%08x", h);
}

/* The part after "<base>.tmp." of a temporary name: 1 for this format
 * (host and pid into *host and *pid), 2 for the one before it (six
 * letters or digits alone), 0 for anything else. */
static int parse_temp(const char *rest, char host[9], long *pid)
{
    size_t k = 0;
    while (k < 8 && strchr("0123456789abcdef", rest[k]) && rest[k])
        k++;
    const char *p = rest + 9;
    if (k == 8 && rest[8] == '.' && *p >= '0' && *p <= '9') {
        char *end;
        long v = strtol(p, &end, 10);
        if (*end == '.' && v > 0) {
            size_t n = 0;
            while (end[1 + n] && strchr("0123456789abcdefghijklmnopqrstuvwxyz"
                                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ", end[1 + n]))
                n++;
            if (n == 6 && end[7] == '\0') {
                memcpy(host, rest, 8);
                host[8] = '\0';
                *pid = v;
                return 1;
            }
        }
    }
    size_t n = 0;
    while (rest[n] && strchr("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
                             rest[n]))
        n++;
    return n == 6 && rest[6] == '\0' ? 2 : 0;
}

int orr_outfile_is_temp(const char *name, const char *base, size_t base_len)
{
    char host[9];
    long pid;
    return strncmp(name, base, base_len) == 0 && strncmp(name + base_len, ".tmp.", 5) == 0 &&
           parse_temp(name + base_len + 5, host, &pid) != 0;
}

/* Removes the temporary files of path that their writers left behind: of
 * exactly this output name, in this format, from this host, whose writer
 * process is gone.  Anything else (another host's, whose process cannot be
 * seen from here; the format before, which names no process) stays. */
static void remove_stale(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    DIR *d = dir ? opendir(dir) : NULL;
    free(dir);
    if (!d)
        return;
    char mine[9];
    host_tag(mine);
    const size_t blen = strlen(base);
    for (struct dirent *e; (e = readdir(d));) {
        char host[9];
        long pid = 0;
        if (strncmp(e->d_name, base, blen) != 0 || strncmp(e->d_name + blen, ".tmp.", 5) != 0 ||
            parse_temp(e->d_name + blen + 5, host, &pid) != 1 || strcmp(host, mine) != 0 ||
            pid == (long)getpid() || (pid_t)pid != pid)
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;   /* its writer lives (or is another user's) */
        unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

/* ---- the temporary files being written (orr_outfile_remove_temporaries) ---- */

typedef struct live_tmp {
    char *name;
    struct live_tmp *next;
} live_tmp;

static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static live_tmp *live;

static void live_add(const char *name)
{
    live_tmp *t = malloc(sizeof *t);
    if (t && !(t->name = strdup(name))) {
        free(t);
        t = NULL;
    }
    if (!t)
        return;   /* best effort: such a file is only not removed on a signal */
    pthread_mutex_lock(&live_mu);
    t->next = live;
    live = t;
    pthread_mutex_unlock(&live_mu);
}

static void live_remove(const char *name)
{
    pthread_mutex_lock(&live_mu);
    for (live_tmp **p = &live; *p; p = &(*p)->next)
        if (strcmp((*p)->name, name) == 0) {
            live_tmp *t = *p;
            *p = t->next;
            free(t->name);
            free(t);
            break;
        }
    pthread_mutex_unlock(&live_mu);
}

int orr_outfile_remove_temporaries(void)
{
    int n = 0;
    if (pthread_mutex_trylock(&live_mu) != 0)
        return -1;
    for (live_tmp *t = live; t; t = t->next)
        n += unlink(t->name) == 0;
    pthread_mutex_unlock(&live_mu);
    return n;
}

orr_status orr_outfile_begin(orr_outfile *f, const char *path, mode_t mode, orr_error *err)
{
    f->path = f->tmp = NULL;
    f->fd = -1;
    f->fp = NULL;
    if (!path[0])
        return orr_fail(err, ORR_ERR_ARG, "cannot write '': empty path");
    orr_status st = make_parents(path, err);
    if (st)
        return st;
    remove_stale(path);
    char host[9];
    host_tag(host);
    size_t len = strlen(path) + sizeof ".tmp.12345678.18446744073709551615.XXXXXX";
    f->path = strdup(path);
    f->tmp = malloc(len);
    if (!f->path || !f->tmp) {
        orr_outfile_abort(f);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    int e = EEXIST;
    for (int tries = 0; f->fd < 0 && e == EEXIST && tries < 100; tries++) {
        char suffix[7];
        temp_suffix(suffix);
        snprintf(f->tmp, len, "%s.tmp.%s.%ld.%s", path, host, (long)getpid(), suffix);
        f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode ? mode : 0666);
        e = f->fd < 0 ? errno : 0;
    }

    if (f->fd < 0) {
        free(f->tmp);   /* not ours to remove */
        f->tmp = NULL;
        orr_outfile_abort(f);
        return orr_fail(err, ORR_ERR_IO, "cannot write '%s': %s", path, strerror(e));
    }
    live_add(f->tmp);
    if (mode && fchmod(f->fd, mode) != 0) {   /* exactly mode, whatever the umask */
        e = errno;
        orr_outfile_abort(f);
        return orr_fail(err, ORR_ERR_IO, "cannot write '%s': cannot set mode %o: %s", path,
                        (unsigned)mode, strerror(e));
    }
    const char *full = getenv("ORRERY_TEST_DISK_FULL");
    if (full && full[0]) {   /* the test hook: the temporary's writes meet a full disk */
        int dev = open("/dev/full", O_WRONLY | O_CLOEXEC);
        e = dev < 0 || dup3(dev, f->fd, O_CLOEXEC) < 0 ? errno : 0;
        if (dev >= 0)
            close(dev);
        if (e) {
            orr_outfile_abort(f);
            return orr_fail(err, ORR_ERR_IO, "cannot write '%s': /dev/full (ORRERY_TEST_DISK_FULL "
                            "is set): %s", path, strerror(e));
        }
    }
    return ORR_OK;
}

orr_status orr_outfile_put(orr_outfile *f, const void *data, size_t len, orr_error *err)
{
    const char *p = data;
    while (len) {
        ssize_t w = f->fd >= 0 ? write(f->fd, p, len) : (errno = EBADF, -1);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return orr_fail(err, ORR_ERR_IO, "cannot write '%s': %s", f->path,
                            strerror(w < 0 ? errno : EIO));
        p += w;
        len -= (size_t)w;
    }
    return ORR_OK;
}

FILE *orr_outfile_stream(orr_outfile *f, orr_error *err)
{
    if (f->fp)
        return f->fp;
    f->fp = f->fd >= 0 ? fdopen(f->fd, "wb") : (errno = EBADF, NULL);
    if (!f->fp) {
        orr_fail(err, ORR_ERR_IO, "cannot write '%s': %s", f->path, strerror(errno));
        return NULL;
    }
    f->fd = -1;   /* the stream's now */
    return f->fp;
}

orr_status orr_outfile_begin_stream(orr_outfile *f, const char *path, mode_t mode, FILE **fp,
                                    orr_error *err)
{
    orr_status st = orr_outfile_begin(f, path, mode, err);
    if (st)
        return st;
    if (!(*fp = orr_outfile_stream(f, err))) {
        orr_outfile_abort(f);
        return ORR_ERR_IO;
    }
    return ORR_OK;
}

const char *orr_outfile_name(orr_outfile *f)
{
    if (f->fd >= 0)
        close(f->fd);
    f->fd = -1;
    return f->tmp;
}

/* Closes whatever f holds open on the temporary file. */
static void close_tmp(orr_outfile *f)
{
    if (f->fp)
        fclose(f->fp);
    else if (f->fd >= 0)
        close(f->fd);
    f->fp = NULL;
    f->fd = -1;
}

void orr_outfile_abort(orr_outfile *f)
{
    close_tmp(f);
    if (f->tmp) {
        unlink(f->tmp);
        live_remove(f->tmp);
    }
    free(f->tmp);
    free(f->path);
    f->tmp = f->path = NULL;
}

/* fsync of the directory holding path, so the rename itself is durable;
 * best effort (some file systems refuse it). */
static void sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir)
        return;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

/* Flushes the temporary file to disk and closes it; 0 or an errno value. */
static int sync_tmp(orr_outfile *f)
{
    int e = 0;
    if (f->fp) {
        errno = 0;
        if (fflush(f->fp) != 0 || ferror(f->fp))
            e = errno ? errno : EIO;
        if (!e && fsync(fileno(f->fp)) != 0)
            e = errno;
        if (fclose(f->fp) != 0 && !e)
            e = errno ? errno : EIO;
        f->fp = NULL;
    } else if (f->fd >= 0) {
        if (fsync(f->fd) != 0)
            e = errno;
        if (close(f->fd) != 0 && !e)
            e = errno;
        f->fd = -1;
    } else {   /* written by name (orr_outfile_name) */
        int fd = open(f->tmp, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return errno;
        if (fsync(fd) != 0)
            e = errno;
        close(fd);
    }
    return e;
}

orr_status orr_outfile_commit(orr_outfile *f, orr_error *err)
{
    int e = sync_tmp(f);
    const char *crash = getenv("ORRERY_TEST_WRITE_CRASH");
    if (crash && crash[0])   /* the test hook: a writer killed mid-write */
        raise(SIGKILL);
    const char *fail = getenv("ORRERY_TEST_WRITE_FAIL");
    if (!e && fail && fail[0]) {
        orr_fail(err, ORR_ERR_IO,
                 "cannot write '%s': simulated failure (ORRERY_TEST_WRITE_FAIL is set)", f->path);
        orr_outfile_abort(f);
        return ORR_ERR_IO;
    }
    if (!e && rename(f->tmp, f->path) != 0)
        e = errno;
    if (e) {
        orr_fail(err, ORR_ERR_IO, "cannot write '%s': %s", f->path, strerror(e));
        orr_outfile_abort(f);
        return ORR_ERR_IO;
    }
    live_remove(f->tmp);
    sync_dir(f->path);
    free(f->tmp);
    free(f->path);
    f->tmp = f->path = NULL;
    return ORR_OK;
}

orr_status orr_outfile_write(const char *path, const void *data, size_t len, mode_t mode,
                             orr_error *err)
{
    orr_outfile f;
    orr_status st = orr_outfile_begin(&f, path, mode, err);
    if (st)
        return st;
    st = orr_outfile_put(&f, data, len, err);
    if (st) {
        orr_outfile_abort(&f);
        return st;
    }
    return orr_outfile_commit(&f, err);
}
