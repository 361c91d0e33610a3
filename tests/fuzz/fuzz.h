/* fuzz.h: what the libFuzzer targets (tests/fuzz/fuzz_*.c, `make fuzz`)
 * share.  orrery's readers take file paths, so each input is written to a
 * file in a private directory made on first use (under TMPDIR; removed at a
 * normal exit, else by tests/fuzz/run.sh; ORRERY_CACHE_DIR points there
 * too, for the readers of the cache directory) and the reader is called on
 * that path.  A reader must return (any status) without crashing, leaking
 * or undefined behaviour. */
#ifndef ORR_FUZZ_H
#define ORR_FUZZ_H

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char fuzz_dir[256];

static void fuzz_cleanup(void)
{
    DIR *d = opendir(fuzz_dir);
    if (d) {
        char path[600];
        for (struct dirent *e; (e = readdir(d));) {
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(path, sizeof path, "%s/%s", fuzz_dir, e->d_name);
                unlink(path);
            }
        }
        closedir(d);
    }
    rmdir(fuzz_dir);
}

/* The private directory (made on the first call; aborts when it cannot be). */
static inline const char *fuzz_tmpdir(void)
{
    if (!fuzz_dir[0]) {
        const char *t = getenv("TMPDIR");
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/orrery-fuzz-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(fuzz_dir))
            abort();
        setenv("ORRERY_CACHE_DIR", fuzz_dir, 1);
        atexit(fuzz_cleanup);
    }
    return fuzz_dir;
}

/* The path of NAME in the private directory (static storage, overwritten
 * by the next call). */
static inline const char *fuzz_path(const char *name)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/%s", fuzz_tmpdir(), name);
    return path;
}

/* Writes data to NAME in the private directory (mode 0600, as orrery's own
 * files) and returns its path (static storage, overwritten by the next
 * call). */
static inline const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
    const char *path = fuzz_path(name);
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || close(fd) != 0)
        abort();
    return path;
}

#endif
