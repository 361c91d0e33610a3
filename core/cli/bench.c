/* bench: timing and accuracy of one configuration (see bench.h). */
#include "bench.h"
#include "trial.h"
#include "dist.h"
#include "law.h"
#include "ic.h"
#include "util.h"
#include "ksrc.h"
#include "hostcc.h"
#include "sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Compares the engine's accelerations on its current state with the CPU
 * backend in double on a sample of up to 512 bodies spread over the set. */
static orr_status check_accuracy(orr_engine *e, const double *attr, orr_bench_row *row,
                                 orr_error *err)
{
    long ni = orr_engine_n(e) < 512 ? orr_engine_n(e) : 512;
    long *idx = malloc(sizeof(long) * (size_t)ni);
    double *pos = malloc(sizeof(double) * 4 * (size_t)orr_engine_n(e));
    double *got = malloc(sizeof(double) * 3 * (size_t)ni);
    double *ref = malloc(sizeof(double) * 3 * (size_t)ni);
    orr_engine *cpu = NULL;
    orr_status st = ORR_OK;
    if (!idx || !pos || !got || !ref) {
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (long k = 0; k < ni; k++)
        idx[k] = orr_sample_index(k, orr_engine_n(e), ni);
    orr_kspec ref_spec;
    orr_kspec_reference(&orr_engine_spec(e)->phys, &ref_spec);
    st = orr_engine_accel_sample(e, ni, idx, got, err);
    if (!st)
        st = orr_engine_get_state(e, pos, NULL, err);
    if (!st)
        st = orr_engine_create(&cpu, ORR_BACKEND_CPU, &ref_spec, ORR_VARIANT_TILED, orr_engine_n(e), 0, NULL,
                               0, err);
    if (!st) {
        orr_engine_set_runtime(cpu, orr_engine_runtime(e));
        st = orr_engine_set_state(cpu, pos, NULL, err);
    }
    if (!st && attr)
        st = orr_engine_set_attr(cpu, attr, err);
    if (!st)
        st = orr_engine_accel_sample(cpu, ni, idx, ref, err);
    if (st) {
        orr_error_context(err, "accuracy reference (CPU backend, double)");
        goto done;
    }
    row->sample = ni;
    row->max_rel_err = orr_max_rel_err(got, ref, ni);
done:
    orr_engine_destroy(cpu);
    free(idx);
    free(pos);
    free(got);
    free(ref);
    return st;
}

typedef struct {
    const char *src;
} ref_ctx;

static orr_status ref_build(void *ctx, void **data, size_t *len, double *seconds, orr_error *err)
{
    return orr_hostcc_compile(((ref_ctx *)ctx)->src, "reference_cpu.c", "-ffast-math", data, len,
                              seconds, err);
}

/* The reference loop (kernels_src/reference_cpu.c) on the benchmark's bodies:
 * compiled (through the kernel cache) with -ffast-math, timed force-only,
 * checked against the CPU backend in double like the other rows. */
static orr_status run_reference(const orr_kspec *spec, long n, int steps, orr_bench_row *row,
                                orr_error *err)
{
    if (spec->phys.precision != ORR_FLOAT || strcmp(spec->phys.force, "gravity") != 0 ||
        (spec->phys.law && !spec->phys.law->builtin) || spec->phys.box[0] > 0 || spec->phys.box[1] > 0 ||
        spec->phys.box[2] > 0)
        return orr_fail(err, ORR_ERR_ARG, "the reference variant is float gravity in an open "
                        "box on the CPU only");
    const char *compiler, *cpu;
    orr_status st = orr_hostcc_identity(&compiler, &cpu, err);
    if (st)
        return st;
    char *text = NULL, eps2[64], g[64];
    if ((st = orr_ksrc_get("reference_cpu.c", &text, NULL, 0, err)) != ORR_OK)
        return st;
    orr_hexfloat(eps2, sizeof eps2, spec->phys.softening * spec->phys.softening);
    orr_hexfloat(g, sizeof g, spec->phys.G);
    orr_buf b = {0};
    if (orr_buf_printf(&b, "#define ORR_EPS2 %s\n#define ORR_G %s\n#line 1 \"reference_cpu.c\"\n%s",
                       eps2, g, text)) {
        free(text);
        orr_buf_free(&b);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    free(text);
    const char *parts[] = {"orrery-ref-1", b.data, orr_hostcc_command(), compiler,
                           orr_hostcc_flags(), "-ffast-math", cpu};
    ref_ctx ctx = {b.data};
    void *so = NULL;
    size_t len = 0;
    orr_hostcc_lib lib = {NULL, -1};
    float *f = malloc(sizeof(float) * 7 * (size_t)n);
    double *pos = malloc(sizeof(double) * 4 * (size_t)n), *attr = NULL;
    double *vel = malloc(sizeof(double) * 3 * (size_t)n);
    long ni = n < 512 ? n : 512;
    long *idx = malloc(sizeof(long) * (size_t)ni);
    double *got = malloc(sizeof(double) * 3 * (size_t)ni), *ref = malloc(sizeof(double) * 3 * (size_t)ni);
    orr_engine *dbl = NULL;
    if (!f || !pos || !vel || !idx || !got || !ref)
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory for %ld bodies", n);
    snprintf(row->build.target, sizeof row->build.target, "cpu (reference loop)");
    if (!st)
        st = orr_kcache_build(parts, 7, "so", ref_build, &ctx, &so, &len, &row->build, err);
    if (!st)
        st = orr_hostcc_load(so, len, &lib, err);
    void (*accel)(long, const float *, const float *, const float *, const float *, float *,
                  float *, float *) = NULL;
    if (!st && !(accel = (void (*)(long, const float *, const float *, const float *,
                                   const float *, float *, float *, float *))
                     orr_hostcc_sym(&lib, "orr_ref_accel")))
        st = orr_fail(err, ORR_ERR_LOAD, "compiled reference loop lacks orr_ref_accel");
    if (!st)
        st = orr_trial_bodies(spec, n, 20261122u + (uint64_t)n, pos, vel, &attr, err);
    if (!st) {
        for (long i = 0; i < n; i++)
            for (int k = 0; k < 4; k++)
                f[(size_t)k * (size_t)n + (size_t)i] = (float)pos[4 * i + k];
        float *x = f, *y = f + n, *z = f + 2 * n, *m = f + 3 * n, *ax = f + 4 * n,
              *ay = f + 5 * n, *az = f + 6 * n;
        double t0 = orr_now_s();
        accel(n, x, y, z, m, ax, ay, az);   /* warm-up and first estimate */
        double warm = (orr_now_s() - t0) * 1e3;
        if (steps <= 0) {
            steps = warm > 0 ? (int)(250.0 / warm) : 100;
            steps = steps < 3 ? 3 : steps > 200 ? 200 : steps;
        }
        t0 = orr_now_s();
        for (int s = 0; s < steps; s++)
            accel(n, x, y, z, m, ax, ay, az);
        double ms = (orr_now_s() - t0) * 1e3 / steps;
        row->n = n;
        row->backend = "cpu";
        row->spec = *spec;
        row->spec.launch.block = row->spec.launch.unroll = row->spec.launch.split = 0;
        row->spec.launch.ipt = row->spec.launch.prefetch = row->spec.launch.ranges = 0;
        row->variant = ORR_VARIANT_REFERENCE;
        row->steps = steps;
        row->ms_per_step = row->ms_force = ms;
        row->interactions_per_s = (double)n * (double)n / (ms * 1e-3);
        row->gflops = row->interactions_per_s * 20 * 1e-9;
        for (long k = 0; k < ni; k++) {
            idx[k] = orr_sample_index(k, n, ni);
            got[3 * k] = ax[idx[k]];
            got[3 * k + 1] = ay[idx[k]];
            got[3 * k + 2] = az[idx[k]];
        }
        orr_kspec ds;
        orr_kspec_reference(&spec->phys, &ds);
        st = orr_engine_create(&dbl, ORR_BACKEND_CPU, &ds, ORR_VARIANT_TILED, n, 0, NULL, 0, err);
        if (!st)
            st = orr_engine_set_state(dbl, pos, NULL, err);
        if (!st)
            st = orr_engine_accel_sample(dbl, ni, idx, ref, err);
        if (!st) {
            row->sample = ni;
            row->max_rel_err = orr_max_rel_err(got, ref, ni);
        }
    }
    orr_engine_destroy(dbl);
    if (lib.dl)
        orr_hostcc_unload(&lib);
    free(so);
    orr_buf_free(&b);
    free(f);
    free(pos);
    free(vel);
    free(attr);
    free(idx);
    free(got);
    free(ref);
    return st;
}

/* The benchmark's engine for n bodies on device, its bodies and
 * attributes set (*attr heap, may be NULL). */
static orr_status bench_engine(orr_backend_kind kind, const orr_kspec *spec, orr_variant variant,
                               long n, int device, char *notice, size_t notice_size,
                               orr_engine **e, double **attr, orr_error *err)
{
    double *pos = malloc(sizeof(double) * 4 * (size_t)n);
    double *vel = malloc(sizeof(double) * 3 * (size_t)n);
    orr_status st = pos && vel ? ORR_OK
                               : orr_fail(err, ORR_ERR_NOMEM, "out of memory for %ld bodies", n);
    if (!st)
        st = orr_trial_bodies(spec, n, 20261122u + (uint64_t)n, pos, vel, attr, err);
    if (!st)
        st = orr_engine_create(e, kind, spec, variant, n, device, notice, notice_size, err);
    if (!st)
        st = orr_engine_set_state(*e, pos, vel, err);
    if (!st && *attr)
        st = orr_engine_set_attr(*e, *attr, err);
    free(pos);
    free(vel);
    return st;
}

orr_status orr_bench_run(orr_backend_kind kind, const orr_kspec *spec, orr_variant variant,
                         long n, int steps, orr_bench_row *row, char *notice,
                         size_t notice_size, orr_error *err)
{
    memset(row, 0, sizeof *row);
    if (variant == ORR_VARIANT_REFERENCE) {
        if (kind == ORR_BACKEND_CUDA)
            return orr_fail(err, ORR_ERR_ARG, "the reference variant runs on the CPU backend only");
        return run_reference(spec, n, steps, row, err);
    }
    double *attr = NULL;
    orr_engine *e = NULL;
    orr_status st = bench_engine(kind, spec, variant, n, 0, notice, notice_size, &e, &attr, err);
    double warm = 0;
    if (!st)   /* warm-up, and a first estimate for choosing the step count */
        st = orr_engine_time_steps(e, 1, 0, &warm, err);
    if (st)
        goto done;
    if (steps <= 0) {
        steps = warm > 0 ? (int)(250.0 / warm) : 100;
        steps = steps < 3 ? 3 : steps > 200 ? 200 : steps;
    }
    row->n = n;
    row->backend = orr_engine_backend_name(e);
    row->spec = *orr_engine_spec(e);
    row->spec.phys.law = spec->phys.law;   /* the caller's, which outlives the engine */
    row->spec.launch.ranges = orr_engine_ranges(e);   /* as run: the automatic choice resolved */
    row->variant = variant;
    row->steps = steps;
    row->build = *orr_engine_build_info(e);
    st = orr_engine_time_steps(e, steps, 0, &row->ms_per_step, err);
    if (!st)
        st = orr_engine_time_steps(e, steps, 1, &row->ms_force, err);
    if (st)
        goto done;
    double inter = (double)n * (double)n;
    row->interactions_per_s = inter / (row->ms_per_step * 1e-3);
    row->gflops = row->interactions_per_s * (ORR_STORED_DOUBLE(orr_engine_spec(e)->phys.precision) ? 30 : 20) * 1e-9;
    st = check_accuracy(e, attr, row, err);
done:
    orr_engine_destroy(e);
    free(attr);
    return st;
}

/* This rank's slice: force, kick and drift; the exchange timed apart. */
/* How dist_steps steps: the compute alone, the exchange then the force,
 * or the two overlapped (orr_dist_gather_force). */
enum { STEP_COMPUTE, STEP_PLAIN, STEP_OVERLAP };

/* steps steps of this rank's slice from a common start (a barrier); *ms
 * per step, *comm_ms the exchange alone per step (STEP_PLAIN). */
static orr_status dist_steps(orr_dist *d, orr_engine *e, int steps, int how, double *ms,
                             double *comm_ms, orr_error *err)
{
    const orr_range mine = orr_dist_mine(d);
    double tc = 0;
    orr_status st = orr_comm_barrier(orr_dist_comm(d), err);
    double t0 = orr_now_s();
    for (int s = 0; !st && s < steps; s++) {
        if (how == STEP_OVERLAP) {
            st = orr_dist_gather_force(d, e, err);
        } else {
            st = how == STEP_PLAIN ? orr_engine_sync(e, err) : ORR_OK;
            double t1 = orr_now_s();
            if (!st && how == STEP_PLAIN)
                st = orr_dist_gather(d, e, ORR_ENGINE_POS, err);
            if (!st && how == STEP_PLAIN)   /* an NCCL exchange is only queued */
                st = orr_engine_sync(e, err);
            tc += orr_now_s() - t1;
            if (!st)
                st = orr_engine_force(e, mine, err);
        }
        if (!st)
            st = orr_engine_kick_range(e, mine, 1e-6, 1.0, err);
        if (!st)
            st = orr_engine_drift_range(e, mine, 1e-6, err);
        if (!st)
            st = orr_engine_sync(e, err);
    }
    *ms = (orr_now_s() - t0) * 1e3 / steps;
    if (comm_ms)
        *comm_ms = tc * 1e3 / steps;
    return st;
}

/* The part of a step of ms that the compute alone (force_ms) leaves. */
static double share_over(double ms, double force_ms)
{
    return ms > force_ms ? (ms - force_ms) / ms : 0;
}

/* ms per step of one rank alone on the whole problem with the kernel
 * configuration single, in an engine of its own (*ranges: its j-ranges). */
static orr_status single_steps(orr_backend_kind kind, const orr_kspec *single, long n, int device,
                               int steps, double *ms, int *ranges, orr_error *err)
{
    double *attr = NULL;
    orr_engine *e = NULL;
    orr_status st = bench_engine(kind, single, ORR_VARIANT_TILED, n, device, NULL, 0, &e, &attr,
                                 err);
    double warm = 0;
    if (!st)
        st = orr_engine_time_steps(e, 1, 0, &warm, err);
    if (!st)
        st = orr_engine_time_steps(e, steps, 0, ms, err);
    if (!st)
        *ranges = orr_engine_ranges(e);
    orr_engine_destroy(e);
    free(attr);
    return st;
}

orr_status orr_bench_run_dist(orr_comm *c, orr_backend_kind kind, const orr_kspec *spec,
                              const orr_kspec *single_spec, long n, int device, int steps,
                              orr_bench_row *row, orr_bench_dist *out, orr_error *err)
{
    memset(row, 0, sizeof *row);
    memset(out, 0, sizeof *out);
    const int rank = orr_comm_rank(c), ranks = orr_comm_size(c);
    if (ranks > ORR_BENCH_MAX_RANKS)
        return orr_fail(err, ORR_ERR_ARG, "bench over %d ranks: at most %d", ranks,
                        ORR_BENCH_MAX_RANKS);
    double *attr = NULL;
    orr_engine *e = NULL;
    orr_dist *d = NULL;
    orr_kspec k = *spec;   /* CPU ranks of one host share its cores, as in a simulation */
    if (kind == ORR_BACKEND_CPU && k.launch.threads == 0)
        k.launch.threads = orr_dist_cpu_threads(c);
    orr_status st = bench_engine(kind, &k, ORR_VARIANT_TILED, n, device, NULL, 0, &e, &attr,
                                 err);
    /* every rank agrees that every rank has its engine before any collective */
    st = orr_comm_all_ok(c, st, err, "make its engine");
    if (!st)
        st = orr_dist_create(&d, c, n, err);
    if (!st)
        st = orr_dist_attach(d, e, device, err);
    if (!st)
        snprintf(out->exchange, sizeof out->exchange, "%s", orr_dist_exchange_note(d));
    double warm = 0;
    if (!st)
        st = orr_engine_time_steps(e, 1, 0, &warm, err);
    double v[3] = {warm, 0, 0};
    if (!st)
        st = orr_comm_max(c, v, 1, err);   /* one step count for every rank */
    if (!st && steps <= 0) {
        steps = v[0] > 0 ? (int)(250.0 / v[0]) : 100;
        steps = steps < 3 ? 3 : steps > 200 ? 200 : steps;
    }
    /* one rank alone first: rank 0 times the whole problem, the others wait */
    double single = 0;
    orr_kspec k1 = single_spec ? *single_spec : k;
    if (kind == ORR_BACKEND_CPU && k1.launch.threads == 0)
        k1.launch.threads = k.launch.threads;
    if (!st && rank == 0 && single_spec)
        st = single_steps(kind, &k1, n, device, steps, &single, &out->single_ranges, err);
    else if (!st && rank == 0)
        st = orr_engine_time_steps(e, steps, 0, &single, err);
    st = orr_comm_all_ok(c, st, err, "time one rank alone");
    if (!st)
        st = orr_comm_bcast(c, &single, sizeof single, 0, err);
    /* a warm-up exchange, then the timed steps: the exchange overlapped
     * with the force, the exchange first and the force after, the compute
     * alone; the row's step is the one runs take (orr_dist_overlap) */
    double over_ms = 0, plain_ms = 0, force_ms = 0, comm_ms = 0, unused = 0;
    const int overlap = d ? orr_dist_overlap(d) : 0;
    if (!st)
        st = dist_steps(d, e, 1, STEP_PLAIN, &unused, NULL, err);
    if (!st) {
        orr_dist_set_overlap(d, 1);
        st = dist_steps(d, e, steps, STEP_OVERLAP, &over_ms, NULL, err);
        orr_dist_set_overlap(d, overlap);
    }
    if (!st)
        st = dist_steps(d, e, steps, STEP_PLAIN, &plain_ms, &comm_ms, err);
    if (!st)
        st = dist_steps(d, e, steps, STEP_COMPUTE, &force_ms, NULL, err);
    double mine[4] = {over_ms, force_ms, comm_ms, plain_ms}, all[4 * ORR_BENCH_MAX_RANKS];
    if (!st)
        st = orr_comm_allgather(c, mine, all, sizeof mine, err);
    if (!st) {
        row->n = n;
        row->backend = orr_engine_backend_name(e);
        row->spec = *orr_engine_spec(e);
        row->spec.phys.law = spec->phys.law;
        row->spec.launch.ranges = orr_engine_ranges(e);
        row->variant = ORR_VARIANT_TILED;
        row->steps = steps;
        row->build = *orr_engine_build_info(e);
        out->ranks = ranks;
        for (int r = 0; r < ranks; r++) {   /* the slowest rank's */
            const double *t = all + 4 * r;
            out->rank_force_ms[r] = t[1];
            out->rank_comm_ms[r] = t[2];
            out->overlap_ms = t[0] > out->overlap_ms ? t[0] : out->overlap_ms;
            row->ms_force = t[1] > row->ms_force ? t[1] : row->ms_force;
            out->plain_ms = t[3] > out->plain_ms ? t[3] : out->plain_ms;
        }
        out->overlap = overlap;
        row->ms_per_step = overlap ? out->overlap_ms : out->plain_ms;
        out->ms_comm = row->ms_per_step > row->ms_force ? row->ms_per_step - row->ms_force : 0;
        out->comm_share = out->ms_comm / row->ms_per_step;
        out->overlap_comm_share = share_over(out->overlap_ms, row->ms_force);
        out->plain_comm_share = share_over(out->plain_ms, row->ms_force);
        out->single_ms = single;
        out->single_interactions_per_s = (double)n * (double)n / (single * 1e-3);
        row->interactions_per_s = (double)n * (double)n / (row->ms_per_step * 1e-3);
        row->gflops = row->interactions_per_s *
                      (ORR_STORED_DOUBLE(row->spec.phys.precision) ? 30 : 20) * 1e-9;
        out->efficiency = single / (ranks * row->ms_per_step);
        row->max_rel_err = -1;   /* not checked here: the one-rank rows check it */
    }
    orr_dist_destroy(d);
    orr_engine_destroy(e);
    free(attr);
    return st;
}

/* ---- Hermite block steps ------------------------------------------------------ */

orr_status orr_bench_hermite(orr_backend_kind kind, const orr_kspec *spec, long n, long active,
                             const orr_hlaunch *launch, int reps, double *ms, orr_error *err)
{
    if (active < 1 || active > n)
        return orr_fail(err, ORR_ERR_ARG, "active bodies must be from 1 to N = %ld (got %ld)", n,
                        active);
    double *attr = NULL;
    int *level = malloc(sizeof(int) * (size_t)n);
    long *idx = malloc(sizeof(long) * (size_t)active);
    orr_engine *e = NULL;
    orr_status st = level && idx ? ORR_OK : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (!st)
        st = bench_engine(kind, spec, ORR_VARIANT_TILED, n, 0, NULL, 0, &e, &attr, err);
    /* every body a step of H, the `active` ones (spread over the set) H / 2:
     * the first block is those, against all n predicted bodies */
    const orr_block_params p = {1.0 / 16, 0.02, 0.01, 40, 0, 0, 0};   /* no noise floor */
    for (long i = 0; !st && i < active; i++)
        idx[i] = (long)((double)i * n / active);
    for (int k = 0; !st && launch && k < ORR_HBUCKETS; k++)
        st = orr_engine_set_hlaunch(e, k, launch[k], err);
    const int blocks = !st && orr_engine_has_blocks(e);
    if (blocks) {
        st = orr_engine_blocks_begin(e, &p, 1, 1, err);
        for (long i = 0; !st && i < n; i++)
            level[i] = 0;
        for (long i = 0; !st && i < active; i++)
            level[idx[i]] = active == n ? 0 : 1;
        if (!st)
            st = orr_engine_blocks_levels(e, level, 1, err);
    }
    double *acc = blocks || st ? NULL : malloc(sizeof(double) * 6 * (size_t)active);
    if (!st && !blocks && !acc)
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    double best = INFINITY;
    for (int r = -1; !st && r < reps; r++) {   /* r = -1: the warm-up */
        double dt = 0;
        if (blocks) {
            long long t = 0;
            long nact = 0;
            st = orr_engine_blocks_begin(e, &p, 0, 1, err);
            const double t0 = orr_now_s();
            if (!st)
                st = orr_engine_block(e, &p, &t, &nact, err);
            if (!st)
                st = orr_engine_sync(e, err);
            dt = orr_now_s() - t0;
            if (!st && nact != active)
                st = orr_fail(err, ORR_ERR_ARG, "the block had %ld active bodies, not %ld", nact,
                              active);
            if (!st)   /* the same steps again next time */
                st = orr_engine_blocks_levels(e, level, 1, err);
        } else {
            const double t0 = orr_now_s();
            st = orr_engine_accel_jerk(e, active, idx, acc, acc + 3 * active, err);
            dt = orr_now_s() - t0;
        }
        if (r >= 0 && dt < best)
            best = dt;
    }
    *ms = best * 1e3;
    free(acc);
    free(level);
    free(idx);
    free(attr);
    orr_engine_destroy(e);
    return st;
}

/* ---- A real Hermite run ---------------------------------------------------- */

void orr_bench_hrun_default(orr_bench_hrun_config *c)
{
    memset(c, 0, sizeof *c);
    c->backend = ORR_BACKEND_CPU;
    c->precision = ORR_DOUBLE;
    c->force = "gravity";
    c->G = 1;
    c->softening = -1;
    c->eta = 0.02;
    c->dt_max = 1.0 / 16;
    c->T = 1;
    c->seed = 7;
    c->reps = 3;
}

long orr_bench_hermite_intervals(double T, double dt_max)
{
    if (!(T > 0) || !(dt_max > 0) || !isfinite(T) || !isfinite(dt_max))
        return 0;
    const double k = T / dt_max, r = nearbyint(k);
    if (r < 1 || r > 1e12 || fabs(k - r) > 1e-9 * r)
        return 0;
    return (long)r;
}

/* What one timed run gave. */
typedef struct {
    double wall_s, comm_s;   /* the timed part; this rank's seconds in collectives */
    long blocks, active;     /* over the timed part */
    double de_over_e;
    const char *no_de;       /* why de_over_e is NaN, or NULL */
    orr_blocks_stats gpu;    /* the engine's block steps over the timed part (differences) */
} hrun_timing;

/* A simulation of the Plummer sphere pos/vel as orrery.simulation{}
 * makes one (integrator hermite, eta_start eta / 2, tune auto), over the
 * ranks of comm (NULL: alone); threads (CPU, not 0) its OpenMP threads. */
static orr_status hrun_sim(const orr_bench_hrun_config *cfg, long n, orr_comm *comm, int device,
                           int threads, const double *pos, const double *vel, orr_sim **out,
                           orr_error *err)
{
    orr_sim_config sc;
    orr_sim_config_default(&sc);
    sc.n = n;
    sc.precision = cfg->precision;
    sc.G = cfg->G;
    sc.softening = cfg->softening < 0 ? 4.0 / (double)n : cfg->softening;
    sc.dt = cfg->dt_max;
    sc.eta = cfg->eta;
    sc.eta_start = cfg->eta / 2;
    sc.integrator = "hermite";
    sc.force = cfg->force;
    sc.law = cfg->law;
    sc.backend = cfg->backend;
    sc.device = device;
    sc.tune = ORR_SIM_TUNE_AUTO;
    if (cfg->backend == ORR_BACKEND_CPU)
        sc.kernel.threads = threads;
    sc.comm = comm;
    orr_sim *s = NULL;
    orr_status st = orr_sim_create(&s, &sc, NULL, 0, err);
    double *p = NULL, *v = NULL;
    if (!st)   /* every rank writes the same bodies, as a script does */
        st = orr_sim_pos(s, &p, err);
    if (!st)
        st = orr_sim_vel(s, &v, err);
    if (!st) {
        memcpy(p, pos, sizeof(double) * 4 * (size_t)n);
        memcpy(v, vel, sizeof(double) * 3 * (size_t)n);
        orr_sim_touch(s);
        orr_sim_writes_agreed(s);
    }
    if (st) {
        orr_sim_destroy(s);
        return st;
    }
    *out = s;
    return ORR_OK;
}

/* One interval of warm-up, then `intervals` timed (from a common start
 * over the ranks of comm), the energy before and after. */
static orr_status hrun_time(orr_sim *s, orr_comm *comm, long intervals, hrun_timing *t,
                            orr_error *err)
{
    memset(t, 0, sizeof *t);
    double k0 = 0, u0 = 0, k1 = 0, u1 = 0;
    /* a law without a potential snippet runs; its energy is not defined */
    const int energy = orr_law_has_potential(orr_sim_law(s));
    orr_status st = orr_sim_step(s, 1, NULL, err);
    if (!st && energy)
        st = orr_sim_energy(s, &k0, &u0, err);
    if (!st && comm)
        st = orr_comm_barrier(comm, err);
    if (st)
        return st;
    orr_block_stats s0, s1;
    orr_sim_blocks(s, &s0);
    orr_blocks_stats g0, g1;
    orr_engine_blocks_stats(orr_sim_engine(s), &g0);
    const double busy0 = comm ? orr_comm_busy_s(comm) : 0;
    const double t0 = orr_now_s();
    /* the interval's end reads the device back (hermite.c: finish), so the
     * step returns with the work done */
    st = orr_sim_step(s, intervals, NULL, err);
    t->wall_s = orr_now_s() - t0;
    t->comm_s = comm ? orr_comm_busy_s(comm) - busy0 : 0;
    if (st)
        return st;
    orr_engine_blocks_stats(orr_sim_engine(s), &g1);
    for (int k = 0; k < 4; k++)
        t->gpu.phase_s[k] = g1.phase_s[k] - g0.phase_s[k];
    t->gpu.split_min = g1.split_min;
    t->gpu.split_blocks = g1.split_blocks - g0.split_blocks;
    t->gpu.split_active = g1.split_active - g0.split_active;
    t->gpu.comm_s = g1.comm_s - g0.comm_s;
    t->comm_s += t->gpu.comm_s;
    orr_sim_blocks(s, &s1);
    t->blocks = s1.blocks - s0.blocks;
    t->active = s1.active - s0.active;
    t->de_over_e = NAN;
    t->no_de = energy ? NULL : "the force law has no potential snippet";
    if (energy)
        st = orr_sim_energy(s, &k1, &u1, err);
    if (!st && energy && k0 + u0 == 0)   /* one body at rest */
        t->no_de = "the energy at the start is 0";
    else if (!st && energy)
        t->de_over_e = fabs((k1 + u1) - (k0 + u0)) / fabs(k0 + u0);
    return st;
}

/* One block of all n bodies with the kernels and launches of s (its
 * engine's configuration, its law, its Hermite tuning), in ms. */
static orr_status hrun_all_active(orr_sim *s, const orr_bench_hrun_config *cfg, long n,
                                  double *ms, orr_error *err)
{
    orr_kspec spec = *orr_sim_kspec(s, NULL);
    spec.phys.law = orr_sim_law(s);
    const orr_htune_result *h = orr_sim_hermite_tuning(s);
    orr_status st = orr_bench_hermite(orr_engine_backend(orr_sim_engine(s)), &spec, n, n,
                                      h ? h->launch : NULL, cfg->reps > 0 ? cfg->reps : 3, ms,
                                      err);
    if (st)
        orr_error_context(err, "the all-active block");
    return st;
}

/* The run's configuration and the tuning it used, into out. */
static void hrun_describe(orr_sim *s, const orr_bench_hrun_config *cfg, long n, long intervals,
                          orr_bench_hrun *out)
{
    const orr_sim_config *sc = orr_sim_config_of(s);
    out->n = n;
    out->backend = orr_engine_backend_name(orr_sim_engine(s));
    out->precision = sc->precision;
    out->softening = sc->softening;
    out->eta = sc->eta;
    out->dt_max = sc->dt;
    out->T = cfg->T;
    out->intervals = intervals;
    const orr_htune_result *h = orr_sim_hermite_tuning(s);
    out->tuned = h != NULL;
    if (h)
        out->hermite = *h;
    snprintf(out->note, sizeof out->note, "%s", orr_sim_tune_note(s));
}

orr_status orr_bench_hermite_run(orr_comm *c, const orr_bench_hrun_config *cfg, long n,
                                 int device, orr_bench_hrun *out, orr_error *err)
{
    memset(out, 0, sizeof *out);
    const int ranks = c ? orr_comm_size(c) : 1, rank = c ? orr_comm_rank(c) : 0;
    const long intervals = orr_bench_hermite_intervals(cfg->T, cfg->dt_max);
    if (!intervals)
        return orr_fail(err, ORR_ERR_ARG, "the timed time T (%g) must be a positive multiple of "
                        "dt_max (%g)", cfg->T, cfg->dt_max);
    if (ranks > ORR_BENCH_MAX_RANKS)
        return orr_fail(err, ORR_ERR_ARG, "bench over %d ranks: at most %d", ranks,
                        ORR_BENCH_MAX_RANKS);
    if (n < 1)
        return orr_fail(err, ORR_ERR_ARG, "N must be at least 1 (got %ld)", n);
    double *pos = malloc(sizeof(double) * 4 * (size_t)n);
    double *vel = malloc(sizeof(double) * 3 * (size_t)n);
    orr_status st = pos && vel ? ORR_OK
                               : orr_fail(err, ORR_ERR_NOMEM, "out of memory for %ld bodies", n);
    if (!st)
        st = orr_ic_plummer(n, cfg->seed, 1.0, pos, vel, err);
    orr_sim *s = NULL;
    hrun_timing t, one;
    memset(&one, 0, sizeof one);
    double all_ms = 0;
    /* over several ranks, rank 0 alone first (the others wait): its own
     * simulation on its device, on the CPU with one rank's share of the
     * cores, as orr_bench_run_dist's one-rank figure; and the all-active
     * block with its kernels */
    if (ranks > 1) {
        if (!st && rank == 0) {
            int threads = cfg->threads;
            if (cfg->backend == ORR_BACKEND_CPU && threads == 0)
                threads = orr_dist_cpu_threads(c);
            st = hrun_sim(cfg, n, NULL, device, threads, pos, vel, &s, err);
            if (!st)
                st = hrun_time(s, NULL, intervals, &one, err);
            if (!st)
                st = hrun_all_active(s, cfg, n, &all_ms, err);
            if (st)
                orr_error_context(err, "rank 0 alone");
            orr_sim_destroy(s);
            s = NULL;
        }
        /* rank 0's outcome, every rank's: its error said once (shared) */
        st = orr_comm_agree(c, st, 0, err);
        double v[5] = {one.wall_s, (double)one.blocks, (double)one.active, all_ms, 0};
        if (!st)
            st = orr_comm_bcast(c, v, sizeof v, 0, err);
        one.wall_s = v[0];
        one.blocks = (long)v[1];
        one.active = (long)v[2];
        all_ms = v[3];
    }
    /* the run itself, over every rank of c */
    if (!st)
        st = hrun_sim(cfg, n, c, device, cfg->threads, pos, vel, &s, err);
    if (!st)
        st = hrun_time(s, ranks > 1 ? c : NULL, intervals, &t, err);
    if (!st && ranks == 1)
        st = hrun_all_active(s, cfg, n, &all_ms, err);
    double mine[2] = {t.wall_s, t.comm_s}, all[2 * ORR_BENCH_MAX_RANKS] = {0};
    if (!st && ranks > 1)
        st = orr_comm_allgather(c, mine, all, sizeof mine, err);
    else
        memcpy(all, mine, sizeof mine);
    if (!st) {
        hrun_describe(s, cfg, n, intervals, out);
        out->ranks = ranks;
        out->blocks = t.blocks;
        out->active = t.active;
        out->mean_active = t.blocks ? (double)t.active / (double)t.blocks : 0;
        out->de_over_e = t.de_over_e;
        out->no_de = t.no_de;
        for (int r = 0; r < ranks; r++) {   /* the slowest rank's wall, the largest share */
            const double w = all[2 * r], cs = all[2 * r + 1];
            out->rank_wall_s[r] = w;
            out->rank_comm_s[r] = cs;
            out->wall_s = w > out->wall_s ? w : out->wall_s;
            out->comm_s = cs > out->comm_s ? cs : out->comm_s;
            if (ranks > 1 && w > 0 && cs / w > out->comm_share)
                out->comm_share = cs / w;
        }
        out->split_min = t.gpu.split_min;
        out->split_blocks = t.gpu.split_blocks;
        out->split_active = t.gpu.split_active;
        out->gpu_comm_s = t.gpu.comm_s;
        memcpy(out->phase_s, t.gpu.phase_s, sizeof out->phase_s);
        out->s_per_time_unit = out->wall_s / cfg->T;
        out->interactions_per_s = (double)t.active * (double)n / out->wall_s;
        out->all_active_ms = all_ms;
        out->all_active_interactions_per_s = (double)n * (double)n / (all_ms * 1e-3);
        out->fraction = out->interactions_per_s / (ranks * out->all_active_interactions_per_s);
        if (ranks > 1) {
            out->single_wall_s = one.wall_s;
            out->single_interactions_per_s = (double)one.active * (double)n / one.wall_s;
            out->speedup = one.wall_s / out->wall_s;
            out->efficiency = out->speedup / ranks;
        }
    }
    orr_sim_destroy(s);
    free(pos);
    free(vel);
    return st;
}
