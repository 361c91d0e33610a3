/* hostcc: run-time compilation with the host C compiler (see hostcc.h). */
#include "hostcc.h"
#include "util.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

extern char **environ;

#define HOSTCC_FLAGS "-std=gnu11 -O3 -march=native -fopenmp -fno-math-errno -fno-trapping-math -fPIC -shared -Wall"
#define HOSTCC_LIBS "-lm"

const char *orr_hostcc_flags(void)
{
    return HOSTCC_FLAGS;
}

const char *orr_hostcc_command(void)
{
    const char *cc = getenv("CC");
    return cc && *cc ? cc : "cc";
}

/* A command's argument vector, built element by element: flag strings are
 * split on blanks (the words of $CC, which may carry flags as make's CC
 * does, and orrery's own flags), paths go in whole whatever they hold (a
 * temporary directory may have blanks). */
enum { CMD_MAX_ARGS = 96 };
typedef struct {
    char *argv[CMD_MAX_ARGS + 1];   /* NULL-terminated */
    int n;
    char words[8192];               /* the split copies of flag strings */
    size_t used;
    int overflow;                   /* 1: something did not fit */
} cmdline;

/* Appends one element (not copied: it must outlive the command). */
static void add_arg(cmdline *c, const char *arg)
{
    if (c->n >= CMD_MAX_ARGS) {
        c->overflow = 1;
        return;
    }
    c->argv[c->n++] = (char *)arg;
    c->argv[c->n] = NULL;
}

/* Appends the blank-separated words of s (copied). */
static void add_words(cmdline *c, const char *s)
{
    size_t len = strlen(s);
    if (c->used + len + 1 > sizeof c->words) {
        c->overflow = 1;
        return;
    }
    char *w = memcpy(c->words + c->used, s, len + 1);
    c->used += len + 1;
    for (char *save = NULL, *t = strtok_r(w, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
        add_arg(c, t);
}

/* Runs argv with stdout and stderr going to log_path; *status gets the exit
 * status (or -1 when it could not start). */
static orr_status run_logged(char **argv, const char *log_path, int *status, orr_error *err)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return orr_fail(err, ORR_ERR_COMPILE, "cannot run the host C compiler '%s': %s (set CC)",
                        argv[0], strerror(rc));
    int ws;
    while (waitpid(pid, &ws, 0) < 0)
        if (errno != EINTR)
            return orr_fail(err, ORR_ERR_COMPILE, "waiting for %s: %s", argv[0], strerror(errno));
    *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + (WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
    return ORR_OK;
}

static struct {
    pthread_once_t once;
    orr_status st;
    char msg[512];
    char compiler[256];
    char cpu[320];
} ident = {PTHREAD_ONCE_INIT, ORR_OK, "", "", ""};

static void identify(void)
{
    char dir[] = "/tmp/orrery-ccid-XXXXXX";
    const char *tmp = getenv("TMPDIR");
    char dirbuf[4096];
    snprintf(dirbuf, sizeof dirbuf, "%s/orrery-ccid-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char *d = mkdtemp(dirbuf);
    if (!d)
        d = mkdtemp(dir);
    if (!d) {
        ident.st = ORR_ERR_IO;
        snprintf(ident.msg, sizeof ident.msg, "cannot create a temporary directory: %s",
                 strerror(errno));
        return;
    }
    char log[4200];
    snprintf(log, sizeof log, "%s/version.txt", d);
    cmdline cmd = {.n = 0};
    add_words(&cmd, orr_hostcc_command());
    add_arg(&cmd, "--version");
    int status = -1;
    orr_error e = {0};
    if (cmd.overflow || cmd.n < 2)
        orr_fail(&e, ORR_ERR_COMPILE, "%s", cmd.overflow ? "it has too many words" : "it names "
                 "no program");
    if (e.msg[0] || run_logged(cmd.argv, log, &status, &e) || status != 0) {
        ident.st = ORR_ERR_COMPILE;
        snprintf(ident.msg, sizeof ident.msg, "host C compiler '%.64s' not usable%s%.400s (set CC)",
                 orr_hostcc_command(), e.msg[0] ? ": " : "", e.msg);
    } else {
        char *text = NULL;
        if (orr_read_file(log, &text, NULL, NULL) == ORR_OK) {
            text[strcspn(text, "\n")] = '\0';
            snprintf(ident.compiler, sizeof ident.compiler, "%s", text);
            free(text);
        }
    }
    unlink(log);
    rmdir(d);
    orr_error_clear(&e);

    char model[200] = "unknown CPU", *info = NULL;
    unsigned long long flags_hash = 0;
    if (orr_read_file("/proc/cpuinfo", &info, NULL, NULL) == ORR_OK) {
        char *m = strstr(info, "model name");
        if (m && (m = strchr(m, ':'))) {
            m += 1 + strspn(m + 1, " \t");
            snprintf(model, sizeof model, "%.*s", (int)strcspn(m, "\n"), m);
        }
        char *f = strstr(info, "\nflags");
        if (f)
            flags_hash = XXH3_64bits(f, strcspn(f + 1, "\n") + 1);
        free(info);
    }
    snprintf(ident.cpu, sizeof ident.cpu, "%s (features %016llx)", model, flags_hash);
}

orr_status orr_hostcc_identity(const char **compiler, const char **cpu, orr_error *err)
{
    pthread_once(&ident.once, identify);
    if (ident.st)
        return orr_fail(err, ident.st, "%s", ident.msg);
    if (compiler)
        *compiler = ident.compiler;
    if (cpu)
        *cpu = ident.cpu;
    return ORR_OK;
}

static orr_status write_all(const char *path, const void *data, size_t len, orr_error *err)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        if (f)
            fclose(f);
        return orr_fail(err, ORR_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    }
    if (fclose(f))
        return orr_fail(err, ORR_ERR_IO, "cannot write %s: %s", path, strerror(errno));
    return ORR_OK;
}

/* The first line of a compiler log that reports an error. */
static void first_error_line(const char *log, char *out, size_t size)
{
    const char *p = strstr(log, "error:");
    if (!p) {
        snprintf(out, size, "%.*s", (int)strcspn(log, "\n"), log);
        return;
    }
    while (p > log && p[-1] != '\n')
        p--;
    snprintf(out, size, "%.*s", (int)strcspn(p, "\n"), p);
}

const char *orr_hostcc_precision_flags(int is_double)
{
    return is_double ? "" : "-ffast-math";
}

orr_status orr_hostcc_compile(const char *src, const char *name, const char *extra, void **so,
                              size_t *len, double *seconds, orr_error *err)
{
    orr_status st = orr_hostcc_identity(NULL, NULL, err);
    if (st)
        return st;
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/orrery-cc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        return orr_fail(err, ORR_ERR_IO, "cannot create a temporary directory in %s: %s",
                        tmp && *tmp ? tmp : "/tmp", strerror(errno));
    char src_path[4200], so_path[4200], log_path[4200];
    snprintf(src_path, sizeof src_path, "%s/%s", dir, name);
    snprintf(so_path, sizeof so_path, "%s/kernel.so", dir);
    snprintf(log_path, sizeof log_path, "%s/log.txt", dir);
    char *log = NULL;
    st = write_all(src_path, src, strlen(src), err);
    if (st)
        goto done;
    /* The #line directives make diagnostics name kernels_src files; the
     * temporary directory is stripped from the log below. */
    cmdline cmd = {.n = 0};
    add_words(&cmd, orr_hostcc_command());
    add_words(&cmd, HOSTCC_FLAGS);
    add_words(&cmd, extra ? extra : "");
    add_arg(&cmd, "-o");
    add_arg(&cmd, so_path);
    add_arg(&cmd, src_path);
    add_words(&cmd, HOSTCC_LIBS);
    if (cmd.overflow) {
        st = orr_fail(err, ORR_ERR_COMPILE, "the host C compiler command '%.200s' has too many "
                      "words (at most %d in all)", orr_hostcc_command(), CMD_MAX_ARGS);
        goto done;
    }
    int status = -1;
    double t0 = orr_now_s();
    st = run_logged(cmd.argv, log_path, &status, err);
    if (seconds)
        *seconds = orr_now_s() - t0;
    if (st)
        goto done;
    if (orr_read_file(log_path, &log, NULL, NULL) != ORR_OK)
        log = strdup("");
    if (log) {
        /* strip the temporary directory from paths in the log */
        size_t dl = strlen(dir) + 1;
        char *p;
        while ((p = strstr(log, dir)) && p[dl - 1] == '/')
            memmove(p, p + dl, strlen(p + dl) + 1);
    }
    if (status != 0) {
        char line[600];
        first_error_line(log ? log : "", line, sizeof line);
        st = orr_fail(err, ORR_ERR_COMPILE, "host C compiler failed on %s: %s", name, line);
        orr_error_set_log(err, log);
        goto done;
    }
    st = orr_read_file(so_path, (char **)so, len, err);
done:
    free(log);
    unlink(src_path);
    unlink(so_path);
    unlink(log_path);
    rmdir(dir);
    return st;
}

/* The OpenMP runtime that a kernel object pulls in must outlive it: its
 * worker threads stay parked inside the runtime after a parallel region, and
 * unloading it with the last kernel object would pull the code out from
 * under them.  So it is loaded once, for good, before the first object. */
static pthread_once_t omp_once = PTHREAD_ONCE_INIT;

static void pin_openmp_runtime(void)
{
    static const char *const names[] = {"libgomp.so.1", "libomp.so.5", "libomp.so"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (dlopen(names[k], RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE))
            return;
}

orr_status orr_hostcc_load(const void *so, size_t len, orr_hostcc_lib *lib, orr_error *err)
{
    pthread_once(&omp_once, pin_openmp_runtime);
    lib->dl = NULL;
    lib->fd = memfd_create("orrery-kernel", MFD_CLOEXEC);
    if (lib->fd < 0)
        return orr_fail(err, ORR_ERR_LOAD, "memfd_create: %s", strerror(errno));
    const char *p = so;
    for (size_t done = 0; done < len;) {
        ssize_t w = write(lib->fd, p + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(lib->fd);
            return orr_fail(err, ORR_ERR_LOAD, "writing kernel object to memory: %s",
                            strerror(errno));
        }
        done += (size_t)w;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", lib->fd);
    /* Float kernels are compiled with -ffast-math, and GCC then links
     * crtfastmath.o into the object, whose constructor sets flush-to-zero and
     * denormals-are-zero in MXCSR when it is loaded: that would change the
     * arithmetic of the whole process (a Lua script's 1e-310 would read as 0).
     * So the floating-point environment is put back as it was.  OpenMP
     * worker threads inherit the environment of the thread that creates them,
     * which is this one after the restore; those that already exist never see
     * the constructor, which runs only in the loading thread. */
    fenv_t fe;
    int saved = fegetenv(&fe) == 0;
    lib->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (saved)
        fesetenv(&fe);
    if (!lib->dl) {
        orr_status st = orr_fail(err, ORR_ERR_LOAD, "cannot load compiled CPU kernel: %s", dlerror());
        close(lib->fd);
        lib->fd = -1;
        return st;
    }
    return ORR_OK;
}

void *orr_hostcc_sym(orr_hostcc_lib *lib, const char *name)
{
    return lib->dl ? dlsym(lib->dl, name) : NULL;
}

void orr_hostcc_unload(orr_hostcc_lib *lib)
{
    if (lib->dl)
        dlclose(lib->dl);
    if (lib->fd >= 0)
        close(lib->fd);
    lib->dl = NULL;
    lib->fd = -1;
}
