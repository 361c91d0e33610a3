/* hostcc: run-time compilation with the host C compiler (see hostcc.h). */
#include "hostcc.h"
#include "util.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <limits.h>
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

/* The warnings that mean a snippet is wrong are errors, so the compiler
 * reports them at the snippet's line instead of making a kernel that fails
 * to load (an undeclared function: an undefined symbol), returns garbage
 * or traps (a constant division by zero: GCC plants a trap).  Only
 * warnings of the compiler's front end, which do not depend on the
 * optimiser or the compiler's version: flow-sensitive ones (uninitialized,
 * array-bounds) may fire on correct code and would stop orrery's kernels
 * too. */
#define HOSTCC_ERRORS "-Werror=implicit-function-declaration -Werror=implicit-int " \
                      "-Werror=return-type -Werror=div-by-zero -Werror=int-conversion " \
                      "-Werror=incompatible-pointer-types"
#define HOSTCC_FLAGS "-std=gnu11 -O3 -march=native -fopenmp -fno-math-errno -fno-trapping-math " \
                     "-fPIC -shared -Wall " HOSTCC_ERRORS
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
    char *msg;   /* heap, for good: why not (the command in full); NULL: out of memory */
    char compiler[256];
    char cpu[320];
} ident = {PTHREAD_ONCE_INIT, ORR_OK, NULL, "", ""};

static void identify(void)
{
    char dir[] = "/tmp/orrery-ccid-XXXXXX";
    const char *tmp = getenv("TMPDIR");
    char *dirbuf = orr_asprintf("%s/orrery-ccid-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    char *d = dirbuf ? mkdtemp(dirbuf) : NULL;
    if (!d)
        d = mkdtemp(dir);
    char *log = d ? orr_asprintf("%s/version.txt", d) : NULL;
    if (!log) {
        ident.st = d ? ORR_ERR_NOMEM : ORR_ERR_IO;
        ident.msg = orr_asprintf("cannot create a temporary directory: %s",
                                 d ? "out of memory" : strerror(errno));
        if (d)
            rmdir(d);
        free(dirbuf);
        return;
    }
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
        ident.msg = orr_asprintf("host C compiler '%s' not usable%s%s (set CC)",
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
    free(log);
    free(dirbuf);
    orr_error_clear(&e);

    char *info = NULL;
    if (orr_read_file("/proc/cpuinfo", &info, NULL, NULL) != ORR_OK)
        info = NULL;
    orr_hostcc_cpu_identity(info ? info : "", ident.cpu, sizeof ident.cpu);
    free(info);
}

/* ---- the CPU's identity ------------------------------------------------------
 *
 * -march=native objects built on one CPU may not run on another (SIGILL), so
 * the identity must separate every pair of CPUs that -march=native tells
 * apart.  x86 has `model name` and `flags` lines; aarch64 has neither, but
 * `CPU implementer`, `CPU variant`, `CPU part` and `Features` per core, which
 * are what the compilers' -march=native reads there. */

/* One line of /proc/cpuinfo: its key (before ':', trailing blanks dropped)
 * and value (after ':', leading blanks dropped), both not NUL-terminated. */
typedef struct {
    const char *key, *val;
    int klen, vlen;
} cpuinfo_line;

/* Reads the line at *p into *ln and moves *p past it; 0 at the end. */
static int next_line(const char **p, cpuinfo_line *ln)
{
    const char *s = *p;
    if (!*s)
        return 0;
    size_t len = strcspn(s, "\n");
    *p = s + len + (s[len] == '\n');
    const char *colon = memchr(s, ':', len);
    size_t klen = colon ? (size_t)(colon - s) : len;
    while (klen > 0 && (s[klen - 1] == ' ' || s[klen - 1] == '\t'))
        klen--;
    ln->key = s;
    ln->klen = (int)klen;
    ln->val = colon ? colon + 1 + strspn(colon + 1, " \t") : s + len;
    ln->vlen = (int)(s + len - ln->val);
    return 1;
}

static int key_is(const cpuinfo_line *ln, const char *key)
{
    return (size_t)ln->klen == strlen(key) && memcmp(ln->key, key, (size_t)ln->klen) == 0;
}

/* Names of Arm cores by implementer and part (as in /proc/cpuinfo); others
 * are named by their numbers.  Only for people: the hash has the numbers. */
static const struct {
    unsigned impl, part;
    const char *name;
} arm_cores[] = {
    {0x41, 0xd03, "ARM Cortex-A53"},     {0x41, 0xd05, "ARM Cortex-A55"},
    {0x41, 0xd07, "ARM Cortex-A57"},     {0x41, 0xd08, "ARM Cortex-A72"},
    {0x41, 0xd0b, "ARM Cortex-A76"},     {0x41, 0xd0c, "ARM Neoverse-N1"},
    {0x41, 0xd0d, "ARM Cortex-A77"},     {0x41, 0xd40, "ARM Neoverse-V1"},
    {0x41, 0xd41, "ARM Cortex-A78"},     {0x41, 0xd44, "ARM Cortex-X1"},
    {0x41, 0xd46, "ARM Cortex-A510"},    {0x41, 0xd47, "ARM Cortex-A710"},
    {0x41, 0xd48, "ARM Cortex-X2"},      {0x41, 0xd49, "ARM Neoverse-N2"},
    {0x41, 0xd4a, "ARM Neoverse-E1"},    {0x41, 0xd4f, "ARM Neoverse-V2"},
    {0x41, 0xd80, "ARM Cortex-A520"},    {0x41, 0xd81, "ARM Cortex-A720"},
    {0x41, 0xd82, "ARM Cortex-X4"},      {0x41, 0xd84, "ARM Neoverse-V3"},
    {0x41, 0xd8e, "ARM Neoverse-N3"},    {0x46, 0x001, "Fujitsu A64FX"},
    {0x48, 0xd01, "HiSilicon TaiShan-v110"}, {0xc0, 0xac3, "Ampere-1"},
    {0xc0, 0xac4, "Ampere-1a"},
};

enum { ARM_MAX_KINDS = 8 };

/* One kind of core: "implementer part variant" and its Features. */
typedef struct {
    char regs[64];
    char features[1024];
    unsigned impl, part;
} arm_core;

static int arm_core_cmp(const void *a, const void *b)
{
    const arm_core *x = a, *y = b;
    int c = strcmp(x->regs, y->regs);
    return c ? c : strcmp(x->features, y->features);
}

/* Adds the core described so far (if any) to kinds[] unless already there. */
static void arm_flush(arm_core *cur, arm_core *kinds, int *n, int *full)
{
    if (!cur->regs[0] && !cur->features[0])
        return;
    int k = 0;
    while (k < *n && arm_core_cmp(&kinds[k], cur) != 0)
        k++;
    if (k == *n) {
        if (*n < ARM_MAX_KINDS)
            kinds[(*n)++] = *cur;
        else
            *full = 1;
    }
    memset(cur, 0, sizeof *cur);
}

/* aarch64 (and 32-bit Arm): every kind of core, sorted, by name and in the
 * hash with its variant and Features. */
static void arm_identity(const char *text, char *out, size_t size)
{
    arm_core kinds[ARM_MAX_KINDS], cur;
    int n = 0, full = 0;
    char impl[24] = "", var[24] = "", part[24] = "";
    memset(&cur, 0, sizeof cur);
    cpuinfo_line ln;
    for (const char *p = text; next_line(&p, &ln);) {
        if (key_is(&ln, "processor")) {
            arm_flush(&cur, kinds, &n, &full);
            impl[0] = var[0] = part[0] = '\0';
        } else if (key_is(&ln, "Features")) {
            snprintf(cur.features, sizeof cur.features, "%.*s", ln.vlen, ln.val);
        } else if (key_is(&ln, "CPU implementer") || key_is(&ln, "CPU variant") ||
                   key_is(&ln, "CPU part")) {
            char *dst = ln.key[4] == 'i' ? impl : ln.key[4] == 'v' ? var : part;
            snprintf(dst, sizeof impl, "%.*s", ln.vlen, ln.val);
            snprintf(cur.regs, sizeof cur.regs, "%s %s %s", impl, part, var);
            cur.impl = (unsigned)strtoul(impl, NULL, 0);
            cur.part = (unsigned)strtoul(part, NULL, 0);
        }
    }
    arm_flush(&cur, kinds, &n, &full);
    qsort(kinds, (size_t)n, sizeof kinds[0], arm_core_cmp);
    XXH3_state_t *h = XXH3_createState();
    unsigned long long hash = 0;
    if (h && XXH3_64bits_reset(h) == XXH_OK) {
        for (int k = 0; k < n; k++) {
            XXH3_64bits_update(h, kinds[k].regs, strlen(kinds[k].regs) + 1);
            XXH3_64bits_update(h, kinds[k].features, strlen(kinds[k].features) + 1);
        }
        hash = XXH3_64bits_digest(h);
    }
    XXH3_freeState(h);
    size_t used = 0;
    out[0] = '\0';
    for (int k = 0; k < n && used < size; k++) {
        /* one name per implementer and part (variants share it) */
        int seen = 0;
        for (int q = 0; q < k; q++)
            seen |= kinds[q].impl == kinds[k].impl && kinds[q].part == kinds[k].part;
        if (seen)
            continue;
        const char *name = NULL;
        for (size_t c = 0; c < sizeof arm_cores / sizeof arm_cores[0]; c++)
            if (arm_cores[c].impl == kinds[k].impl && arm_cores[c].part == kinds[k].part)
                name = arm_cores[c].name;
        used += (size_t)snprintf(out + used, size - used, "%s", used ? " + " : "");
        if (used >= size)
            break;
        if (name)
            used += (size_t)snprintf(out + used, size - used, "%s", name);
        else
            used += (size_t)snprintf(out + used, size - used, "CPU 0x%02x:0x%03x", kinds[k].impl,
                                     kinds[k].part);
    }
    if (used < size)
        snprintf(out + used, size - used, "%s%s (features %016llx)", full ? " + ..." : "",
                 n ? "" : "unknown Arm CPU", hash);
}

static int line_ptr_cmp(const void *a, const void *b)
{
    const char *x = *(const char *const *)a, *y = *(const char *const *)b;
    size_t lx = strcspn(x, "\n"), ly = strcspn(y, "\n");
    int c = memcmp(x, y, lx < ly ? lx : ly);
    return c ? c : (lx > ly) - (lx < ly);
}

/* Does the key name something that changes while the machine runs, or from
 * one core to another (a clock, a core's number)? */
static int volatile_key(const cpuinfo_line *ln)
{
    static const char *const words[] = {"mhz", "bogomips", "clock", "processor", "hart",
                                        "core id", "apicid", NULL};
    char key[64];
    int len = ln->klen < (int)sizeof key - 1 ? ln->klen : (int)sizeof key - 1;
    for (int k = 0; k < len; k++)
        key[k] = (char)tolower((unsigned char)ln->key[k]);
    key[len] = '\0';
    for (int w = 0; words[w]; w++)
        if (strstr(key, words[w]))
            return 1;
    return 0;
}

/* Other layouts (POWER, RISC-V, ...): the model from a `cpu`, `uarch` or
 * `model name` line, the hash over the distinct lines that stay the same
 * (not clocks, not core numbers). */
static void other_identity(const char *text, char *out, size_t size)
{
    char model[200] = "unknown CPU";
    size_t count = 0;
    cpuinfo_line ln;
    for (const char *p = text; next_line(&p, &ln);)
        count++;
    const char **lines = calloc(count ? count : 1, sizeof *lines);
    size_t nl = 0;
    int have_model = 0;
    for (const char *p = text, *start = p; next_line(&p, &ln); start = p) {
        if (ln.klen == 0 || volatile_key(&ln))
            continue;
        if (!have_model && (key_is(&ln, "cpu") || key_is(&ln, "uarch") ||
                            key_is(&ln, "model name"))) {
            snprintf(model, sizeof model, "%.*s", ln.vlen, ln.val);
            have_model = 1;
        }
        if (lines)
            lines[nl++] = start;
    }
    unsigned long long hash = 0;
    if (lines && nl) {
        qsort(lines, nl, sizeof *lines, line_ptr_cmp);
        XXH3_state_t *h = XXH3_createState();
        if (h && XXH3_64bits_reset(h) == XXH_OK) {
            for (size_t k = 0; k < nl; k++)
                if (k == 0 || line_ptr_cmp(&lines[k - 1], &lines[k]) != 0)
                    XXH3_64bits_update(h, lines[k], strcspn(lines[k], "\n") + 1);
            hash = XXH3_64bits_digest(h);
        }
        XXH3_freeState(h);
    }
    free(lines);
    snprintf(out, size, "%s (features %016llx)", model, hash);
}

void orr_hostcc_cpu_identity(const char *cpuinfo, char *out, size_t size)
{
    if (!size)
        return;
    cpuinfo_line ln;
    int arm = 0, x86 = 0;
    for (const char *p = cpuinfo; next_line(&p, &ln) && !arm;) {
        arm = key_is(&ln, "CPU implementer");
        x86 |= key_is(&ln, "flags") || key_is(&ln, "model name");
    }
    if (arm) {
        arm_identity(cpuinfo, out, size);
        return;
    }
    if (!x86) {
        other_identity(cpuinfo, out, size);
        return;
    }
    /* x86: as it always was, so stored kernels and tunings stay valid: the
     * first model name, and the hash of the first flags line (from the
     * newline before it) */
    char model[200] = "unknown CPU";
    unsigned long long flags_hash = 0;
    const char *m = strstr(cpuinfo, "model name");
    if (m && (m = strchr(m, ':'))) {
        m += 1 + strspn(m + 1, " \t");
        snprintf(model, sizeof model, "%.*s", (int)strcspn(m, "\n"), m);
    }
    const char *f = strstr(cpuinfo, "\nflags");
    if (f)
        flags_hash = XXH3_64bits(f, strcspn(f + 1, "\n") + 1);
    snprintf(out, size, "%s (features %016llx)", model, flags_hash);
}

orr_status orr_hostcc_identity(const char **compiler, const char **cpu, orr_error *err)
{
    pthread_once(&ident.once, identify);
    if (ident.st)
        return orr_fail(err, ident.st, "%s", ident.msg ? ident.msg : "out of memory");
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

/* The first line of a compiler log that reports an error (else its first
 * line), in full: its start, and its length in *len. */
static const char *first_error_line(const char *log, int *len)
{
    const char *p = strstr(log, "error:");
    if (!p)
        p = log;
    while (p > log && p[-1] != '\n')
        p--;
    size_t n = strcspn(p, "\n");
    *len = n > INT_MAX ? INT_MAX : (int)n;
    return p;
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
    /* the paths are as long as $TMPDIR makes them: never cut */
    const char *tmp = getenv("TMPDIR");
    tmp = tmp && *tmp ? tmp : "/tmp";
    char *dir = orr_asprintf("%s/orrery-cc-XXXXXX", tmp);
    if (!dir)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (!mkdtemp(dir)) {
        st = orr_fail(err, ORR_ERR_IO, "cannot create a temporary directory in %s: %s", tmp,
                      strerror(errno));
        free(dir);
        return st;
    }
    char *src_path = orr_asprintf("%s/%s", dir, name);
    char *so_path = orr_asprintf("%s/kernel.so", dir);
    char *log_path = orr_asprintf("%s/log.txt", dir);
    char *log = NULL;
    if (!src_path || !so_path || !log_path) {
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        goto done;
    }
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
        int ll;
        const char *line = first_error_line(log ? log : "", &ll);
        st = orr_fail(err, ORR_ERR_COMPILE, "host C compiler failed on %s: %.*s", name, ll, line);
        orr_error_set_log(err, log);
        goto done;
    }
    st = orr_read_file(so_path, (char **)so, len, err);
done:
    free(log);
    if (src_path)
        unlink(src_path);
    if (so_path)
        unlink(so_path);
    if (log_path)
        unlink(log_path);
    rmdir(dir);
    free(src_path);
    free(so_path);
    free(log_path);
    free(dir);
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
        /* dlerror() names the memfd ("/proc/self/fd/3: undefined symbol:
         * x"), which means nothing to the user: only the reason is kept */
        const char *why = dlerror(), *tail = why ? strstr(why, path) : NULL;
        if (tail && tail[strlen(path)] == ':')
            why = tail + strlen(path) + 1 + (tail[strlen(path) + 1] == ' ');
        orr_status st = orr_fail(err, ORR_ERR_LOAD, "the compiled CPU kernel does not load: %s",
                                 why ? why : "unknown reason");
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
