/* tunestore: the tuning store, one JSON file read, checked, listed, cleared
 * and saved atomically under a lock (see tunestore.h).  The only place that
 * knows its JSON. */
#include "tunestore.h"
#include "kcache.h"
#include "outfile.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STORE_NAME "tuning.json"
#define STORE_TMP STORE_NAME ".tmp."   /* outfile.h's temporary names */
#define STORE_LOCK STORE_NAME ".lock"
#define LOCK_TIMEOUT_S 30.0            /* the longest wait for another save */
#define WAIT_NOTICE_S 1.0              /* a wait this long is told to the wait hook */
#define STORE_FORMAT "orrery-tuning"
#define STORE_VERSION 1

/* ---- the file ------------------------------------------------------------ */

typedef struct {
    char path[PATH_MAX];
    char dir[PATH_MAX];
    cJSON *root;           /* always a valid store object after store_load */
    cJSON *entries;        /* its "entries" array */
    int existed;           /* the file was there */
    char corrupt[256];     /* why the file was ignored; "" when it was fine */
    char unreadable[256];  /* why it could not be read (open, stat or read failed: not
                              its content); "" when it was read or missing */
} store;

static orr_status store_locate(store *s, orr_error *err)
{
    orr_status st = orr_kcache_dir(s->dir, sizeof s->dir, err);
    if (st)
        return st;
    if ((size_t)snprintf(s->path, sizeof s->path, "%s/%s", s->dir, STORE_NAME) >= sizeof s->path)
        return orr_fail(err, ORR_ERR_IO, "cache directory path too long: %s", s->dir);
    return ORR_OK;
}

static const char *str_item(const cJSON *o, const char *name)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(it) ? it->valuestring : NULL;
}

static int num_item(const cJSON *o, const char *name, double *v)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!cJSON_IsNumber(it))
        return 0;
    *v = it->valuedouble;
    return 1;
}

static int int_item(const cJSON *o, const char *name, int *v)
{
    double d;
    if (!num_item(o, name, &d) || d != floor(d) || d < INT_MIN || d > INT_MAX)
        return 0;
    *v = (int)d;
    return 1;
}

/* A whole number from 0 to LONG_MAX (n_bucket). */
static int count_item(const cJSON *o, const char *name, long *v)
{
    double d;
    if (!num_item(o, name, &d) || d != floor(d) || d < 0 || d >= -(double)LONG_MIN)
        return 0;
    *v = (long)d;
    return 1;
}

/* Checks the shape of a parsed store; why gets the first problem. */
static int store_shape_ok(const cJSON *root, char *why, size_t size)
{
    const char *fmt;
    double version;
    if (!cJSON_IsObject(root)) {
        snprintf(why, size, "not a JSON object");
        return 0;
    }
    if (!(fmt = str_item(root, "format")) || strcmp(fmt, STORE_FORMAT) != 0) {
        snprintf(why, size, "\"format\" is not \"%s\"", STORE_FORMAT);
        return 0;
    }
    if (!num_item(root, "version", &version) || version != STORE_VERSION) {
        snprintf(why, size, "\"version\" is not %d", STORE_VERSION);
        return 0;
    }
    const cJSON *entries = cJSON_GetObjectItemCaseSensitive(root, "entries");
    if (!cJSON_IsArray(entries)) {
        snprintf(why, size, "\"entries\" is not an array");
        return 0;
    }
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, entries) {
        const cJSON *best = cJSON_GetObjectItemCaseSensitive(e, "best");
        const char *kernel = str_item(e, "kernel");
        long n;
        int v;
        if (!cJSON_IsObject(e) || !str_item(e, "device") || !kernel || strlen(kernel) != 32 ||
            !count_item(e, "n_bucket", &n) || !cJSON_IsObject(best) ||
            !int_item(best, "block", &v) || !int_item(best, "unroll", &v) ||
            !int_item(best, "split", &v) || !int_item(best, "threads", &v) ||
            !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(e, "trials"))) {
            snprintf(why, size, "entry %d lacks device, kernel, n_bucket, best or trials", k);
            return 0;
        }
        k++;
    }
    return 1;
}

static orr_status store_empty(store *s, orr_error *err)
{
    cJSON_Delete(s->root);
    s->root = cJSON_CreateObject();
    if (!s->root || !cJSON_AddStringToObject(s->root, "format", STORE_FORMAT) ||
        !cJSON_AddNumberToObject(s->root, "version", STORE_VERSION) ||
        !(s->entries = cJSON_AddArrayToObject(s->root, "entries"))) {
        cJSON_Delete(s->root);
        s->root = NULL;
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    return ORR_OK;
}

/* Reads the store.  A missing file gives an empty store; an unparsable or
 * misshapen one, or one that is not a regular file of ours, an empty store
 * and s->corrupt; one that cannot be read (EACCES, EMFILE, EIO, ...) an
 * empty store and s->unreadable.  Opened without blocking, so a FIFO in its
 * place is reported, not waited on. */
static orr_status store_load(store *s, orr_error *err)
{
    memset(s, 0, sizeof *s);
    orr_status st = store_locate(s, err);
    if (st)
        return st;
    int fd;
    do
        fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        if (errno == ELOOP)
            snprintf(s->corrupt, sizeof s->corrupt, "a symbolic link");
        else if (errno != ENOENT)
            snprintf(s->unreadable, sizeof s->unreadable, "%s", strerror(errno));
        return store_empty(s, err);
    }
    s->existed = 1;
    struct stat sb;
    char *text = NULL;
    if (fstat(fd, &sb) != 0) {
        snprintf(s->unreadable, sizeof s->unreadable, "cannot stat it: %s", strerror(errno));
    } else if (!S_ISREG(sb.st_mode)) {
        snprintf(s->corrupt, sizeof s->corrupt, "not a regular file");
    } else if (sb.st_uid != geteuid() || (sb.st_mode & 022)) {
        snprintf(s->corrupt, sizeof s->corrupt, "not owned by you or writable by others");
    } else if (sb.st_size > (64L << 20)) {
        snprintf(s->corrupt, sizeof s->corrupt, "larger than 64 MiB");
    } else if (!(text = malloc((size_t)sb.st_size + 1))) {
        close(fd);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory reading %s", s->path);
    } else {
        size_t got = 0, want = (size_t)sb.st_size;
        while (got < want) {
            ssize_t r = read(fd, text + got, want - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                snprintf(s->unreadable, sizeof s->unreadable, "%s", strerror(errno));
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        if (got != want && !s->unreadable[0])
            snprintf(s->unreadable, sizeof s->unreadable,
                     "it shrank from %zu to %zu bytes while being read", want, got);
        text[got] = '\0';
    }
    close(fd);
    if (!s->corrupt[0] && !s->unreadable[0]) {
        const char *end = NULL;
        s->root = cJSON_ParseWithLengthOpts(text, (size_t)sb.st_size, &end, 0);
        if (!s->root) {
            long at = end && end >= text ? (long)(end - text) : 0;
            snprintf(s->corrupt, sizeof s->corrupt, "not valid JSON near byte %ld", at);
        } else if (store_shape_ok(s->root, s->corrupt, sizeof s->corrupt)) {
            s->entries = cJSON_GetObjectItemCaseSensitive(s->root, "entries");
        }
    }
    free(text);
    if (s->corrupt[0] || s->unreadable[0])
        return store_empty(s, err);
    return ORR_OK;
}

static void store_free(store *s)
{
    cJSON_Delete(s->root);
    s->root = s->entries = NULL;
}

static cJSON *store_find(const store *s, const char *device, const char *kernel, int *index)
{
    int k = 0;
    cJSON *e;
    cJSON_ArrayForEach(e, s->entries) {
        const char *d = str_item(e, "device"), *kn = str_item(e, "kernel");
        if (d && kn && strcmp(d, device) == 0 && strcmp(kn, kernel) == 0) {
            if (index)
                *index = k;
            return e;
        }
        k++;
    }
    return NULL;
}

/* ---- the lock ------------------------------------------------------------ */

/* Saves (and clear) hold an fcntl() write lock on tuning.json.lock while
 * they read the store, change it and rename the new one into place: an
 * open-file-description lock where the kernel has them (Linux 3.15), else a
 * classic POSIX record lock, which NFS carries to the server (NLM for v3,
 * the protocol itself for v4).  A process-wide mutex keeps the threads of
 * one process apart (POSIX locks do not, and closing any descriptor of the
 * file would drop them).  The wait is bounded: the lock is tried without
 * blocking, with pauses growing from 1 to 64 ms, until LOCK_TIMEOUT_S. */

static pthread_mutex_t lock_mutex = PTHREAD_MUTEX_INITIALIZER;

/* orr_tune_store_on_wait's hook (set before any save, read under lock_mutex) */
static void (*wait_hook)(const char *msg, void *ctx);
static void *wait_hook_ctx;

void orr_tune_store_on_wait(void (*fn)(const char *msg, void *ctx), void *ctx)
{
    pthread_mutex_lock(&lock_mutex);
    wait_hook = fn;
    wait_hook_ctx = ctx;
    pthread_mutex_unlock(&lock_mutex);
}

typedef struct {
    int fd;           /* the lock file, locked; -1 when saving without a lock */
    int ofd;          /* 1: an open-file-description lock */
} store_lock;

static double lock_timeout_s(void)
{
    const char *v = getenv("ORRERY_TEST_LOCK_TIMEOUT");   /* test hook (tunestore.h) */
    char *end;
    double t = v && *v ? strtod(v, &end) : LOCK_TIMEOUT_S;
    return v && *v && *end == '\0' && t >= 0 ? t : LOCK_TIMEOUT_S;
}

/* 1 when errno says this file system keeps no locks (rather than a lock
 * held by someone else, or a real failure). */
static int no_locking(int e)
{
    return e == ENOLCK || e == EOPNOTSUPP || e == ENOSYS;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Takes the store's lock (dir is the cache directory); *note (may be NULL,
 * note_size bytes) gets why a save goes ahead without it.  Holds lock_mutex
 * on success; store_lock_release releases both. */
static orr_status store_lock_take(const char *dir, store_lock *lk, char *note, size_t note_size,
                                  orr_error *err)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, STORE_LOCK) >= sizeof path)
        return orr_fail(err, ORR_ERR_IO, "cache directory path too long: %s", dir);
    lk->fd = -1;
    lk->ofd = 1;
    pthread_mutex_lock(&lock_mutex);
    const double timeout = lock_timeout_s(), start = mono_s(), deadline = start + timeout;
    /* a wait that lasts is told before it goes on (half the wait when it is
     * short, as tests make it) */
    const double notice = timeout / 2 < WAIT_NOTICE_S ? timeout / 2 : WAIT_NOTICE_S;
    int told = 0;
    const char *test_nolock = getenv("ORRERY_TEST_NOLOCK");   /* test hook (tunestore.h) */
    long pause_ms = 1;
    orr_status st = ORR_OK;
    for (;;) {
        int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
        if (fd < 0 && errno == EINTR)
            continue;
        if (fd < 0) {
            st = orr_fail(err, ORR_ERR_IO, "cannot lock the tuning store: cannot open %s: %s",
                          path, errno == ELOOP ? "it is a symbolic link" : strerror(errno));
            break;
        }
        struct stat fsb, psb;
        if (fstat(fd, &fsb) != 0 || !S_ISREG(fsb.st_mode)) {
            close(fd);
            st = orr_fail(err, ORR_ERR_IO,
                          "cannot lock the tuning store: %s is not a regular file; remove it",
                          path);
            break;
        }
        struct flock fl;
        memset(&fl, 0, sizeof fl);
        fl.l_type = F_WRLCK;
        fl.l_whence = SEEK_SET;
        int rc, e = 0;
        if (test_nolock && *test_nolock) {
            rc = -1, e = ENOLCK;
        } else {
            rc = fcntl(fd, lk->ofd ? F_OFD_SETLK : F_SETLK, &fl);
            e = errno;
            if (rc != 0 && e == EINVAL && lk->ofd) {   /* a kernel without OFD locks */
                lk->ofd = 0;
                close(fd);
                continue;
            }
        }
        if (rc == 0) {
            /* the file locked must still be the one at the path: a clear may
             * have removed it while this process waited */
            if (stat(path, &psb) == 0 && psb.st_dev == fsb.st_dev && psb.st_ino == fsb.st_ino) {
                lk->fd = fd;
                return ORR_OK;
            }
            close(fd);
            continue;
        }
        close(fd);
        if (e == EINTR)
            continue;
        if (no_locking(e)) {
            if (note)
                orr_note_add(note, note_size,
                             "tuning store in %s: this file system keeps no locks (%s), so the "
                             "save went ahead without one (a save at the same moment elsewhere "
                             "may be lost)", dir, strerror(e));
            return ORR_OK;   /* lk->fd = -1: saved without the lock, mutex held */
        }
        if (e != EAGAIN && e != EACCES) {
            st = orr_fail(err, ORR_ERR_IO, "cannot lock the tuning store (%s): %s", path,
                          strerror(e));
            break;
        }
        const double now = mono_s();
        if (!told && now - start >= notice && now < deadline && wait_hook) {
            char msg[PATH_MAX + 160];
            snprintf(msg, sizeof msg, "the tuning store is locked by another process: waiting up "
                     "to %g s for %s", timeout, path);
            wait_hook(msg, wait_hook_ctx);
            told = 1;
        }
        if (now >= deadline) {
            st = orr_fail(err, ORR_ERR_IO,
                          "the tuning store is locked: waited %g s for %s, held by another "
                          "process (a save that hangs, or a lock left on an NFS server)",
                          timeout, path);
            break;
        }
        struct timespec ts = {0, pause_ms * 1000000L};
        nanosleep(&ts, NULL);
        if (pause_ms < 64)
            pause_ms *= 2;
    }
    pthread_mutex_unlock(&lock_mutex);
    return st;
}

static void store_lock_release(store_lock *lk)
{
    if (lk->fd >= 0)
        close(lk->fd);   /* drops the lock */
    lk->fd = -1;
    pthread_mutex_unlock(&lock_mutex);
}

/* Adds entry (taking ownership) to the store on disk, replacing the entry with
 * the same identity.  Under the lock re-reads the file, so concurrent tunings
 * of other identities are kept; a corrupt file is replaced, one that cannot
 * be read is left alone (the save fails). */
static orr_status save_entry(cJSON *entry, const char *device, const char *kernel, char *note,
                             size_t note_size, orr_error *err)
{
    store s;
    memset(&s, 0, sizeof s);
    store_lock lk;
    /* a directory that cannot be used or written: said as the kernel cache
     * says it (one note for both where a caller shows each once) */
    char why[PATH_MAX + 128];
    const orr_kcache_state ks = orr_kcache_check(s.dir, sizeof s.dir, why, sizeof why);
    orr_status st = ks == ORR_KCACHE_UNUSABLE
                        ? orr_fail(err, ORR_ERR_CACHE, ORR_KCACHE_UNUSABLE_NOTE "%s", why)
                    : ks == ORR_KCACHE_READONLY
                        ? orr_fail(err, ORR_ERR_CACHE, ORR_KCACHE_READONLY_NOTE "%s", why)
                        : store_locate(&s, err);
    if (!st)
        st = store_lock_take(s.dir, &lk, note, note_size, err);
    if (st) {
        cJSON_Delete(entry);
        return st;
    }
    st = store_load(&s, err);
    if (!st && s.unreadable[0])
        st = orr_fail(err, ORR_ERR_IO, "cannot read tuning store %s (%s); not replacing it",
                      s.path, s.unreadable);
    if (st) {
        store_lock_release(&lk);
        cJSON_Delete(entry);
        store_free(&s);
        return st;
    }
    int index = -1;
    while (store_find(&s, device, kernel, &index))
        cJSON_DeleteItemFromArray(s.entries, index);
    if (!cJSON_AddItemToArray(s.entries, entry)) {
        store_lock_release(&lk);
        cJSON_Delete(entry);
        store_free(&s);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    char *text = cJSON_Print(s.root);
    if (!text) {
        store_lock_release(&lk);
        store_free(&s);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory writing the tuning store");
    }
    st = orr_outfile_write(s.path, text, strlen(text), 0600, err);   /* atomic */
    store_lock_release(&lk);
    cJSON_free(text);
    store_free(&s);
    return st;
}

/* ---- entries ------------------------------------------------------------- */

/* An entry of a store that passed store_shape_ok, as a struct. */
static void entry_of(const cJSON *e, orr_tune_entry *en)
{
    memset(en, 0, sizeof *en);
    const char *v;
    double d;
    const cJSON *best = cJSON_GetObjectItemCaseSensitive(e, "best");
    snprintf(en->device, sizeof en->device, "%s", str_item(e, "device"));
    snprintf(en->kernel, sizeof en->kernel, "%s", str_item(e, "kernel"));
    snprintf(en->backend, sizeof en->backend, "%s", (v = str_item(e, "backend")) ? v : "?");
    snprintf(en->precision, sizeof en->precision, "%s", (v = str_item(e, "precision")) ? v : "?");
    snprintf(en->force, sizeof en->force, "%s", (v = str_item(e, "force")) ? v : "?");
    snprintf(en->when, sizeof en->when, "%s", (v = str_item(e, "when")) ? v : "");
    snprintf(en->integrator, sizeof en->integrator, "%s",
             (v = str_item(e, "integrator")) ? v : "");   /* absent: the force pass */
    count_item(e, "n_bucket", &en->n_bucket);   /* checked by store_shape_ok */
    if (!count_item(e, "targets_bucket", &en->targets_bucket))   /* absent: the whole set */
        en->targets_bucket = 0;
    en->exhaustive = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(e, "exhaustive"));
    en->budget_s = num_item(e, "budget_s", &d) ? d : 0;
    int_item(best, "block", &en->block);
    int_item(best, "unroll", &en->unroll);
    int_item(best, "split", &en->split);
    int_item(best, "threads", &en->threads);
    int_item(best, "ranges", &en->ranges);   /* absent in stores before ranges: 0 */
    en->ipt = 1;                              /* absent in stores before ipt: 1 */
    int_item(best, "ipt", &en->ipt);
    int_item(best, "prefetch", &en->prefetch);   /* absent in stores before prefetch: 0 */
    int_item(best, "blocks_per_sm", &en->per_sm);   /* absent but for hermite: 0 */
    en->ms = num_item(best, "ms", &d) ? d : -1;
    en->interactions_per_s = num_item(best, "interactions_per_s", &d) ? d : 0;
    const cJSON *tr;
    cJSON_ArrayForEach(tr, cJSON_GetObjectItemCaseSensitive(e, "trials")) {
        en->ntrials++;
        en->nfailed += !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(tr, "ok"));
    }
}

static void iso_now(char *buf, size_t size)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The JSON of a tuning and its trials, stamped now (NULL when out of
 * memory). */
static cJSON *entry_json(const orr_tune_entry *en, const orr_tune_stored_trial *trials,
                         int ntrials)
{
    cJSON *e = cJSON_CreateObject();
    char when[32];
    iso_now(when, sizeof when);
    int bad = !e || !cJSON_AddStringToObject(e, "device", en->device) ||
              !cJSON_AddStringToObject(e, "kernel", en->kernel) ||
              !cJSON_AddStringToObject(e, "backend", en->backend) ||
              !cJSON_AddNumberToObject(e, "n_bucket", (double)en->n_bucket) ||
              (en->targets_bucket &&
               !cJSON_AddNumberToObject(e, "targets_bucket", (double)en->targets_bucket)) ||
              (en->integrator[0] && !cJSON_AddStringToObject(e, "integrator", en->integrator)) ||
              !cJSON_AddStringToObject(e, "precision", en->precision) ||
              !cJSON_AddStringToObject(e, "force", en->force) ||
              !cJSON_AddBoolToObject(e, "exhaustive", en->exhaustive != 0) ||
              !cJSON_AddNumberToObject(e, "budget_s", en->budget_s);
    cJSON *best = bad ? NULL : cJSON_AddObjectToObject(e, "best");
    bad = bad || !best || !cJSON_AddNumberToObject(best, "block", en->block) ||
          !cJSON_AddNumberToObject(best, "unroll", en->unroll) ||
          !cJSON_AddNumberToObject(best, "split", en->split) ||
          !cJSON_AddNumberToObject(best, "threads", en->threads) ||
          !cJSON_AddNumberToObject(best, "ranges", en->ranges) ||
          !cJSON_AddNumberToObject(best, "ipt", en->ipt > 0 ? en->ipt : 1) ||
          (en->prefetch && !cJSON_AddNumberToObject(best, "prefetch", en->prefetch)) ||
          (en->per_sm > 0 && !cJSON_AddNumberToObject(best, "blocks_per_sm", en->per_sm)) ||
          !cJSON_AddNumberToObject(best, "ms", en->ms) ||
          !cJSON_AddNumberToObject(best, "interactions_per_s", en->interactions_per_s);
    cJSON *list = bad ? NULL : cJSON_AddArrayToObject(e, "trials");
    bad = bad || !list;
    for (int k = 0; !bad && k < ntrials; k++) {
        const orr_tune_stored_trial *tr = &trials[k];
        cJSON *o = cJSON_CreateObject();
        bad = !o || !cJSON_AddItemToArray(list, o);
        if (bad) {
            cJSON_Delete(o);
            break;
        }
        bad = !cJSON_AddNumberToObject(o, "block", tr->block) ||
              !cJSON_AddNumberToObject(o, "unroll", tr->unroll) ||
              !cJSON_AddNumberToObject(o, "split", tr->split) ||
              !cJSON_AddNumberToObject(o, "threads", tr->threads) ||
              !cJSON_AddNumberToObject(o, "ranges", tr->ranges) ||
              !cJSON_AddNumberToObject(o, "ipt", tr->ipt > 0 ? tr->ipt : 1) ||
              (tr->prefetch && !cJSON_AddNumberToObject(o, "prefetch", tr->prefetch)) ||
              (tr->per_sm > 0 && !cJSON_AddNumberToObject(o, "blocks_per_sm", tr->per_sm)) ||
              !cJSON_AddNumberToObject(o, "ms", tr->ms) ||
              !cJSON_AddNumberToObject(o, "max_rel_err", tr->max_rel_err) ||
              !cJSON_AddBoolToObject(o, "ok", tr->ok) ||
              !cJSON_AddStringToObject(o, "why", tr->why ? tr->why : "");
    }
    bad = bad || !cJSON_AddStringToObject(e, "when", when);
    if (bad) {
        cJSON_Delete(e);
        return NULL;
    }
    return e;
}

/* ---- public -------------------------------------------------------------- */

orr_status orr_tune_store_path(char *buf, size_t size, orr_error *err)
{
    store s;
    memset(&s, 0, sizeof s);
    orr_status st = store_locate(&s, err);
    if (st)
        return st;
    if ((size_t)snprintf(buf, size, "%s", s.path) >= size)
        return orr_fail(err, ORR_ERR_ARG, "buffer too small for the tuning store path %s", s.path);
    return ORR_OK;
}

orr_status orr_tune_store_get(const char *device, const char *kernel, orr_tune_entry *e,
                              int *found, orr_tune_store_file *file, orr_error *err)
{
    *found = 0;
    if (file)
        memset(file, 0, sizeof *file);
    store s;
    orr_error lerr = {0};
    orr_status st = store_load(&s, &lerr);
    if (st == ORR_ERR_NOMEM) {
        orr_fail(err, st, "%s", lerr.msg);
        orr_error_clear(&lerr);
        return st;
    }
    if (st) {   /* the cache directory is unusable: a miss that says why */
        if (file)
            snprintf(file->unreadable, sizeof file->unreadable, "%s", lerr.msg);
        orr_error_clear(&lerr);
        return ORR_OK;
    }
    if (file) {
        snprintf(file->path, sizeof file->path, "%s", s.path);
        snprintf(file->corrupt, sizeof file->corrupt, "%s", s.corrupt);
        if (s.unreadable[0])
            snprintf(file->unreadable, sizeof file->unreadable,
                     "cannot read tuning store %s: %s", s.path, s.unreadable);
    }
    const cJSON *hit = store_find(&s, device, kernel, NULL);
    if (hit) {
        entry_of(hit, e);
        *found = 1;
    }
    store_free(&s);
    return ORR_OK;
}

orr_status orr_tune_store_put(const orr_tune_entry *e, const orr_tune_stored_trial *trials,
                              int ntrials, char *note, size_t note_size, orr_error *err)
{
    cJSON *entry = entry_json(e, trials, ntrials);
    if (!entry)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    return save_entry(entry, e->device, e->kernel, note, note_size, err);
}

orr_status orr_tune_store_list(void (*fn)(const orr_tune_entry *e, void *ctx), void *ctx,
                               orr_error *err)
{
    store s;
    orr_status st = store_load(&s, err);
    if (st)
        return st;
    if (s.unreadable[0] || s.corrupt[0]) {
        if (s.unreadable[0])
            st = orr_fail(err, ORR_ERR_IO, "cannot read tuning store %s: %s", s.path,
                          s.unreadable);
        else
            st = orr_fail(err, ORR_ERR_CACHE, "tuning store %s is corrupt (%s)", s.path,
                          s.corrupt);
        store_free(&s);
        return st;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, s.entries) {
        orr_tune_entry en;
        entry_of(e, &en);
        fn(&en, ctx);
    }
    store_free(&s);
    return ORR_OK;
}

/* Why clear leaves the item with these attributes (lstat), or NULL for a
 * regular file of one's own, orrery's to remove; buf holds the reason. */
static const char *not_own(const struct stat *sb, char *buf, size_t size)
{
    if (S_ISREG(sb->st_mode) && sb->st_uid == geteuid())
        return NULL;
    if (S_ISLNK(sb->st_mode))
        snprintf(buf, size, "a symbolic link");
    else if (S_ISDIR(sb->st_mode))
        snprintf(buf, size, "a directory");
    else if (!S_ISREG(sb->st_mode))
        snprintf(buf, size, "not a regular file");
    else
        snprintf(buf, size, "not owned by you (uid %lu)", (unsigned long)sb->st_uid);
    return buf;
}

orr_status orr_tune_store_clear(size_t *removed,
                                void (*on_left)(const char *path, const char *why, void *ctx),
                                void *ctx, orr_error *err)
{
    if (removed)
        *removed = 0;
    store s;
    memset(&s, 0, sizeof s);
    store_lock lk;
    orr_status st = store_locate(&s, err);
    if (st)
        return st;
    struct stat sb;
    if ((st = store_lock_take(s.dir, &lk, NULL, 0, err)) != ORR_OK) {
        if (lstat(s.path, &sb) != 0 && errno == ENOENT) {
            orr_error_clear(err);   /* no store: nothing to clear (a read-only directory) */
            return ORR_OK;
        }
        return st;
    }
    st = store_load(&s, err);
    if (st) {
        store_lock_release(&lk);
        return st;
    }
    size_t count = s.corrupt[0] || s.unreadable[0] ? 0 : (size_t)cJSON_GetArraySize(s.entries);
    /* the store and the temporaries of interrupted saves, where they are
     * orrery's own (regular files of the user's); anything else there is
     * left and named, never followed */
    char why[64];
    if (lstat(s.path, &sb) == 0 && not_own(&sb, why, sizeof why)) {
        count = 0;
        if (on_left)
            on_left(s.path, why, ctx);
    } else if (unlink(s.path) != 0 && errno != ENOENT) {
        st = orr_fail(err, ORR_ERR_IO, "cannot remove %s: %s", s.path, strerror(errno));
        store_lock_release(&lk);
        store_free(&s);
        return st;
    }
    DIR *d = opendir(s.dir);
    if (d) {
        struct dirent *de;
        while ((de = readdir(d))) {
            if (strncmp(de->d_name, STORE_TMP, strlen(STORE_TMP)) != 0 ||
                fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0)
                continue;
            if (!not_own(&sb, why, sizeof why)) {
                unlinkat(dirfd(d), de->d_name, 0);
            } else if (on_left) {
                char tmp[PATH_MAX + 300];
                snprintf(tmp, sizeof tmp, "%s/%s", s.dir, de->d_name);
                on_left(tmp, why, ctx);
            }
        }
        closedir(d);
    }
    /* the lock file too, while it is held (or where there are no locks): a
     * save waiting on it finds it gone once it has it, and starts again on
     * a new one */
    char lock[PATH_MAX + 32];
    snprintf(lock, sizeof lock, "%s/%s", s.dir, STORE_LOCK);
    unlink(lock);
    store_lock_release(&lk);
    if (removed)
        *removed = count;
    store_free(&s);
    return ORR_OK;
}
