/* outfile: atomic output files and numbered paths (see outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

orr_status orr_outfile_begin(orr_outfile *f, const char *path, orr_error *err)
{
    f->path = f->tmp = NULL;
    if (!path[0])
        return orr_fail(err, ORR_ERR_ARG, "cannot write '': empty path");
    orr_status st = make_parents(path, err);
    if (st)
        return st;
    size_t len = strlen(path) + 32;
    f->path = strdup(path);
    f->tmp = malloc(len);
    if (!f->path || !f->tmp) {
        orr_outfile_abort(f);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    snprintf(f->tmp, len, "%s.tmp.%ld", path, (long)getpid());
    return ORR_OK;
}

void orr_outfile_abort(orr_outfile *f)
{
    if (f->tmp)
        unlink(f->tmp);
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
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

orr_status orr_outfile_commit(orr_outfile *f, orr_error *err)
{
    int e = 0;
    int fd = open(f->tmp, O_RDONLY);
    if (fd < 0)
        e = errno;
    else {
        if (fsync(fd) != 0)
            e = errno;
        close(fd);
    }
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
    sync_dir(f->path);
    free(f->tmp);
    free(f->path);
    f->tmp = f->path = NULL;
    return ORR_OK;
}
