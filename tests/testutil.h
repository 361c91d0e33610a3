/* testutil: shared helpers for the cmocka tests: a private cache directory
 * per test binary (removed at exit, like any directory handed to
 * tu_remove_at_exit), deterministic random bodies, and the GPU skip rule. */
#ifndef ORR_TESTUTIL_H
#define ORR_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <math.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "checkpoint.h"
#include "err.h"
#include "engine.h"
#include "ic.h"
#include "sim.h"
#include "util.h"

/* Makes a fresh directory $TMPDIR/PREFIX-XXXXXX (TMPDIR defaults to /tmp)
 * into dir (size bytes); aborts the test binary when it cannot. */
static inline void tu_temp_dir(char *dir, size_t size, const char *prefix)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, size, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        abort();
    }
}

#define TU_MAX_CLEANUP 8

/* The directories to remove at exit, and the process that registered them
 * (a forked child exiting must not remove its parent's directories). */
static inline char (*tu_cleanup_list(pid_t **owner))[256]
{
    static char dirs[TU_MAX_CLEANUP][256];
    static pid_t pid;
    if (owner)
        *owner = &pid;
    return dirs;
}

static inline int tu_rm_item(const char *path, const struct stat *sb, int flag, struct FTW *f)
{
    (void)sb;
    (void)flag;
    (void)f;
    remove(path);
    return 0;
}

static inline void tu_cleanup(void)
{
    pid_t *owner;
    char (*dirs)[256] = tu_cleanup_list(&owner);
    if (getpid() != *owner)
        return;
    for (int k = 0; k < TU_MAX_CLEANUP; k++)
        if (dirs[k][0])
            nftw(dirs[k], tu_rm_item, 16, FTW_DEPTH | FTW_PHYS);
}

/* Removes dir and everything in it when the test binary exits. */
static inline void tu_remove_at_exit(const char *dir)
{
    pid_t *owner;
    char (*dirs)[256] = tu_cleanup_list(&owner);
    if (*owner == 0) {
        *owner = getpid();
        atexit(tu_cleanup);
    }
    for (int k = 0; k < TU_MAX_CLEANUP; k++)
        if (!dirs[k][0]) {
            snprintf(dirs[k], sizeof dirs[k], "%s", dir);
            return;
        }
}

/* Points ORRERY_CACHE_DIR at a fresh temporary directory, removed at exit;
 * returns its path. */
static inline const char *tu_private_cache(void)
{
    static char dir[256];
    if (!dir[0]) {
        tu_temp_dir(dir, sizeof dir, "orrery-test");
        tu_remove_at_exit(dir);
        setenv("ORRERY_CACHE_DIR", dir, 1);
    }
    return dir;
}

/* Fails the test with the error message and log when st is not ORR_OK. */
#define TU_OK(st, errp)                                                              \
    do {                                                                             \
        orr_status tu_st_ = (st);                                                    \
        if (tu_st_ != ORR_OK)                                                        \
            fail_msg("%s failed: %s\n%s", #st, (errp)->msg, (errp)->log ? (errp)->log : ""); \
    } while (0)

/* splitmix64: deterministic, fresh-looking test inputs. */
static inline double tu_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

/* Random bodies in the cube [-1, 1)^3 with masses in [0.5, 1.5) / n and,
 * when vel is not NULL, velocities in [-0.5, 0.5).  Values are representable
 * in float, so float kernels see exactly the inputs a double reference sees
 * and a comparison measures arithmetic alone. */
static inline void tu_random_bodies(long n, uint64_t seed, double *pos, double *vel)
{
    for (long i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++)
            pos[4 * i + k] = (float)(2 * tu_rand(&seed) - 1);
        pos[4 * i + 3] = (float)((0.5 + tu_rand(&seed)) / n);
        if (vel)
            for (int k = 0; k < 3; k++)
                vel[3 * i + k] = tu_rand(&seed) - 0.5;
    }
}

/* The reference: Plummer-softened gravity as a plain double loop. */
static inline void tu_plain_accel(long n, const double *pos, double eps, double G, double *acc)
{
    for (long i = 0; i < n; i++) {
        double a[3] = {0, 0, 0};
        for (long j = 0; j < n; j++) {
            double d[3], r2 = eps * eps;
            for (int k = 0; k < 3; k++) {
                d[k] = pos[4 * j + k] - pos[4 * i + k];
                r2 += d[k] * d[k];
            }
            if (r2 == 0)
                continue;
            double s = G * pos[4 * j + 3] / (r2 * sqrt(r2));
            for (int k = 0; k < 3; k++)
                a[k] += s * d[k];
        }
        memcpy(acc + 3 * i, a, sizeof a);
    }
}

/* Targets apart from sources, on one backend: the accelerations of the
 * n = 1000 bodies computed in three target ranges (of odd sizes, not tile
 * multiples) are bitwise those of one pass over all bodies; kick and drift
 * by ranges give bitwise the whole-set state; the potential shares of the
 * ranges add up to the whole (to rounding); a range past the end is
 * refused with a message naming it. */
static inline void tu_check_target_ranges(orr_backend_kind kind, const orr_kspec *spec)
{
    enum { N = 1000 };
    const orr_range parts[3] = {{0, 333}, {333, 367}, {700, 300}};
    double *pos = malloc(sizeof(double) * 4 * N), *vel = malloc(sizeof(double) * 3 * N);
    double *all = malloc(sizeof(double) * 3 * N), *split = malloc(sizeof(double) * 3 * N);
    double *p1 = malloc(sizeof(double) * 4 * N), *p2 = malloc(sizeof(double) * 4 * N);
    assert_true(pos && vel && all && split && p1 && p2);
    tu_random_bodies(N, 4242, pos, vel);
    orr_error err = {0};
    orr_engine *a = NULL, *b = NULL;
    TU_OK(orr_engine_create(&a, kind, spec, ORR_VARIANT_TILED, N, 0, NULL, 0, &err), &err);
    TU_OK(orr_engine_create(&b, kind, spec, ORR_VARIANT_TILED, N, 0, NULL, 0, &err), &err);
    TU_OK(orr_engine_set_state(a, pos, vel, &err), &err);
    TU_OK(orr_engine_set_state(b, pos, vel, &err), &err);
    TU_OK(orr_engine_accel(a, all, &err), &err);
    double u_all = 0, u_sum = 0;
    TU_OK(orr_engine_potential(a, &u_all, &err), &err);
    for (int k = 0; k < 3; k++) {
        double u = 0;
        TU_OK(orr_engine_force(b, parts[k], &err), &err);
        TU_OK(orr_engine_get_accel(b, parts[k], split + 3 * parts[k].first, &err), &err);
        TU_OK(orr_engine_potential_range(b, parts[k], &u, &err), &err);
        u_sum += u;
    }
    assert_memory_equal(all, split, sizeof(double) * 3 * N);
    assert_true(fabs(u_sum - u_all) <= 1e-12 * fabs(u_all));
    /* in two parts (the sources inside the targets, then the rest), as a
     * rank does while the others' positions arrive: the same bits, also
     * with every part's first half queued before any second half */
    const orr_range halves[2] = {{0, 400}, {400, 600}};
    for (int order = 0; order < 2; order++) {
        memset(split, 0, sizeof(double) * 3 * N);
        for (int k = 0; k < 2; k++) {
            TU_OK(orr_engine_force_part(b, halves[k], ORR_FORCE_LOCAL, &err), &err);
            if (order == 0)
                TU_OK(orr_engine_force_part(b, halves[k], ORR_FORCE_REST, &err), &err);
        }
        for (int k = 0; order == 1 && k < 2; k++)
            TU_OK(orr_engine_force_part(b, halves[k], ORR_FORCE_REST, &err), &err);
        TU_OK(orr_engine_get_accel(b, orr_engine_all(b), split, &err), &err);
        assert_memory_equal(all, split, sizeof(double) * 3 * N);
    }
    TU_OK(orr_engine_kick(a, 0.01, 1.0, &err), &err);
    TU_OK(orr_engine_drift(a, 0.01, &err), &err);
    for (int k = 0; k < 3; k++) {
        TU_OK(orr_engine_kick_range(b, parts[k], 0.01, 1.0, &err), &err);
        TU_OK(orr_engine_drift_range(b, parts[k], 0.01, &err), &err);
    }
    TU_OK(orr_engine_get_state(a, p1, NULL, &err), &err);
    TU_OK(orr_engine_get_state(b, p2, NULL, &err), &err);
    assert_memory_equal(p1, p2, sizeof(double) * 4 * N);
    orr_range past = {900, 200};
    assert_int_equal(orr_engine_force(b, past, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "invalid body range [900, 1100) (n = 1000)");
    orr_error_clear(&err);
    orr_engine_destroy(a);
    orr_engine_destroy(b);
    free(pos), free(vel), free(all), free(split), free(p1), free(p2);
}

/* Runs this test binary again as `SELF mode` with the environment variables
 * name1=value1 (and name2=value2 when name2 is not NULL) added, and returns
 * what it printed on stdout and stderr (in out, size bytes); fails the test
 * unless it exits 0.  For checks that must start in a fresh process. */
static inline const char *tu_run_self(const char *mode, const char *name1, const char *value1,
                                      const char *name2, const char *value2, char *out,
                                      size_t size)
{
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    int fd[2];
    assert_int_equal(pipe(fd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        setenv(name1, value1, 1);
        if (name2)
            setenv(name2, value2, 1);
        execl(self, self, mode, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t len = 0;
    ssize_t k;
    while (len < size - 1 && (k = read(fd[0], out + len, size - 1 - len)) > 0)
        len += (size_t)k;
    out[len] = '\0';
    close(fd[0]);
    int ws = 0;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
        fail_msg("child exited with status %d, output: %s", ws, out);
    return out;
}

/* A whole file as a NUL-terminated heap string; fails the test if unreadable. */
static inline char *tu_slurp(const char *path)
{
    char *text = NULL;
    orr_error err = {0};
    if (orr_read_file(path, &text, NULL, &err) != ORR_OK)
        fail_msg("%s", err.msg);
    return text;
}

/* The temporaries an atomic write (outfile.h: "*.tmp.*") left in dir,
 * counted. */
static inline int tu_temporaries(const char *dir)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "ls -a '%s' | grep -c '\\.tmp\\.'", dir);
    FILE *fp = popen(cmd, "r");
    assert_non_null(fp);
    int n = -1;
    assert_int_equal(fscanf(fp, "%d", &n), 1);
    pclose(fp);
    return n;
}

/* The Hermite integrator's restored steps, on one backend: a checkpoint's
 * steps are checked alike on every backend (a positive finite time; an
 * acceleration or jerk finite), each error naming the body, and a step far
 * below dt_max / 2^40 (as 1e-300) starts at the finest level and runs on
 * (it used to give the GPU steps of zero ticks, a stall).  A checkpoint of
 * an older orrery (steps as fractions of dt_max in dataset "dt") continues
 * bit for bit. */
static inline void tu_check_restored_steps(orr_backend_kind kind)
{
    enum { N = 40 };
    orr_error err = {0};
    double pos[4 * N], vel[3 * N], *p = NULL, *v = NULL;
    TU_OK(orr_ic_plummer(N, 17, 1.0, pos, vel, &err), &err);
    orr_sim_config c;
    orr_sim_config_default(&c);
    c.n = N, c.precision = ORR_DOUBLE, c.integrator = "hermite", c.softening = 0.01;
    c.dt = 1.0 / 16, c.backend = kind, c.tune = ORR_SIM_TUNE_OFF;
    orr_sim *s = NULL;
    TU_OK(orr_sim_create(&s, &c, NULL, 0, &err), &err);
    TU_OK(orr_sim_pos(s, &p, &err), &err);
    TU_OK(orr_sim_vel(s, &v, &err), &err);
    memcpy(p, pos, sizeof pos), memcpy(v, vel, sizeof vel);
    orr_sim_touch(s);
    TU_OK(orr_sim_step(s, 2, NULL, &err), &err);
    char dir[4096], path[4200];
    tu_temp_dir(dir, sizeof dir, "orrery-hsteps");
    snprintf(path, sizeof path, "%s/ck.hdf5", dir);
    TU_OK(orr_checkpoint_write(s, path, NULL, &err), &err);
    TU_OK(orr_sim_step(s, 2, NULL, &err), &err);
    orr_checkpoint ck;
    TU_OK(orr_checkpoint_read(path, &ck, &err), &err);
    assert_int_equal(ck.integ_current, 1);
    int fa = -1, fs = -1;
    for (int k = 0; k < ck.nfields; k++) {
        fa = strcmp(ck.field_name[k], "acc") == 0 ? k : fa;
        fs = strcmp(ck.field_name[k], "step") == 0 ? k : fs;
    }
    assert_true(fa >= 0 && fs >= 0);
    orr_sim *r = NULL;
    /* an older checkpoint: dataset "dt", fractions of dt_max */
    double keep[N];
    memcpy(keep, ck.field[fs], sizeof keep);
    for (int i = 0; i < N; i++)
        ck.field[fs][i] = keep[i] * 16;
    snprintf(ck.field_name[fs], sizeof ck.field_name[fs], "dt");
    TU_OK(orr_checkpoint_restore(&ck, &r, NULL, 0, &err), &err);
    TU_OK(orr_sim_step(r, 2, NULL, &err), &err);
    double *pr = NULL, *ps = NULL;
    TU_OK(orr_sim_pos(r, &pr, &err), &err);
    TU_OK(orr_sim_pos(s, &ps, &err), &err);
    assert_memory_equal(pr, ps, sizeof(double) * 4 * N);
    orr_sim_destroy(r);
    snprintf(ck.field_name[fs], sizeof ck.field_name[fs], "step");
    /* the checks, and the message naming the body */
    static const struct {
        int field, body;
        double value;
        const char *msg;
    } bad[] = {
        {1, 5, 0, "Hermite step of body 6 is 0: a step must be a positive finite time"},
        {1, 0, -1e-3, "Hermite step of body 1 is -0.001: a step must be a positive finite time"},
        {1, 39, INFINITY, "Hermite step of body 40 is inf: a step must be a positive finite time"},
        {0, 3 * 7 + 2, NAN, "Hermite acceleration of body 8 is nan: it must be finite"},
    };
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        double *f = ck.field[bad[b].field ? fs : fa], old = f[bad[b].body];
        f[bad[b].body] = bad[b].value;
        assert_int_equal(orr_checkpoint_restore(&ck, &r, NULL, 0, &err), ORR_ERR_ARG);
        assert_null(r);
        if (!strstr(err.msg, bad[b].msg))
            fail_msg("expected '%s' in '%s'", bad[b].msg, err.msg);
        orr_error_clear(&err);
        f[bad[b].body] = old;
    }
    /* far below dt_max / 2^40: the finest level, then steps that grow */
    for (int i = 0; i < N; i++)
        ck.field[fs][i] = i % 2 ? 1e-300 : keep[i];
    TU_OK(orr_checkpoint_restore(&ck, &r, NULL, 0, &err), &err);
    TU_OK(orr_sim_step(r, 2, NULL, &err), &err);
    orr_block_stats bs;
    orr_sim_blocks(r, &bs);
    const long blocks = bs.blocks;
    assert_true(blocks < 20000);
    assert_true(fabs(orr_sim_time(r) - 0.25) < 1e-15);
    double k0, u0, k1, u1;
    TU_OK(orr_sim_energy(r, &k1, &u1, &err), &err);
    TU_OK(orr_sim_energy(s, &k0, &u0, &err), &err);
    print_message("%s: restored steps of 1e-300: %ld blocks, energy %.12g against %.12g\n",
                  kind == ORR_BACKEND_CUDA ? "cuda" : "cpu", blocks, k1 + u1, k0 + u0);
    assert_true(fabs((k1 + u1) / (k0 + u0) - 1) < 1e-6);
    orr_sim_destroy(r);
    orr_checkpoint_free(&ck);
    orr_sim_destroy(s);
}

#endif
