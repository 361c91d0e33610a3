/* test_gpu: the CUDA backend against the CPU backend in double, on fresh
 * random bodies: float and double, several N (including ones that fill no
 * whole tile), block, unroll, split, ipt and prefetch values (prefetch
 * bitwise the same as without), the naive variant, the
 * potential, kick and drift, the kernel cache, and the errors a user meets
 * (invalid block for the device, device out of memory).  Without a GPU every
 * test skips and says why; with ORRERY_REQUIRE_GPU=1 (make gpu-test) a
 * missing GPU is a failure instead. */
#include "testutil.h"

#include <math.h>

#include "bench.h"
#include "trial.h"
#include "cuda.h"
#include "engine.h"
#include "ic.h"
#include "htune.h"
#include "law.h"
#include "field.h"
#include "sim.h"
#include "tune.h"

static int gpu_present(void)
{
    static int known = -1;
    if (known < 0) {
        orr_error err = {0};
        known = orr_cuda_usable(0, &err) == ORR_OK;
        if (!known) {
            const char *req = getenv("ORRERY_REQUIRE_GPU");
            if (req && *req == '1')
                fail_msg("ORRERY_REQUIRE_GPU=1 but no usable GPU: %s", err.msg);
            print_message("no usable GPU (%s): GPU tests skipped\n", err.msg);
        }
        orr_error_clear(&err);
    }
    return known;
}

#define NEED_GPU()         \
    do {                   \
        if (!gpu_present()) \
            skip();        \
    } while (0)

/* Accelerations of engine `kind` for spec vs the CPU backend in double. */
static double compare(const orr_kspec *spec, orr_variant variant, long n, uint64_t seed)
{
    orr_error err = {0};
    double *pos = malloc(sizeof(double) * 4 * n), *acc = malloc(sizeof(double) * 3 * n),
           *ref = malloc(sizeof(double) * 3 * n);
    tu_random_bodies(n, seed, pos, NULL);
    orr_kspec rs;
    orr_kspec_default(&rs, ORR_TARGET_CPU);
    rs.phys.precision = ORR_DOUBLE;
    rs.phys.softening = spec->phys.softening;
    rs.phys.G = spec->phys.G;
    orr_engine *g = NULL, *c = NULL;
    TU_OK(orr_engine_create(&g, ORR_BACKEND_CUDA, spec, variant, n, 0, NULL, 0, &err), &err);
    TU_OK(orr_engine_create(&c, ORR_BACKEND_CPU, &rs, ORR_VARIANT_TILED, n, 0, NULL, 0, &err), &err);
    TU_OK(orr_engine_set_state(g, pos, NULL, &err), &err);
    TU_OK(orr_engine_set_state(c, pos, NULL, &err), &err);
    /* poison the output first, so an unwritten body shows */
    for (long i = 0; i < 3 * n; i++)
        acc[i] = NAN;
    TU_OK(orr_engine_accel(g, acc, &err), &err);
    TU_OK(orr_engine_accel(c, ref, &err), &err);
    double rel = orr_max_rel_err(acc, ref, n);
    print_message("gpu %s %s n=%ld block=%d unroll=%d split=%d ipt=%d prefetch=%d ftz=%d "
                  "ranges=%d: max rel err %.3e\n", orr_precision_name(spec->phys.precision),
                  orr_variant_name(variant), n, spec->launch.block, spec->launch.unroll,
                  spec->launch.split, spec->launch.ipt, spec->launch.prefetch, spec->launch.ftz,
                  orr_engine_ranges(g), rel);
    orr_engine_destroy(g);
    orr_engine_destroy(c);
    free(pos);
    free(acc);
    free(ref);
    return rel;
}

static void sweep(orr_precision prec, double tol)
{
    /* from {20011, ...}: j-ranges, partial sums over shares of the bodies j,
     * combined (the last range short; 64 asked of 20011 bodies in tiles of
     * 128 gives 53); the last five prefetch the next tile (a one-tile range,
     * a short last tile, split, ipt 4) */
    static const struct { long n; int block, unroll, split, ipt, ranges, prefetch; } cases[] = {
        {1, 32, 1, 1, 1, 0, 0},        {100, 64, 4, 1, 2, 0, 0},      {1000, 128, 8, 2, 1, 0, 0},
        {4097, 256, 4, 1, 4, 0, 0},    {4097, 256, 16, 4, 2, 0, 0},   {20000, 512, 2, 8, 1, 0, 0},
        {20000, 1024, 4, 32, 3, 0, 0}, {65536, 256, 4, 1, 1, 0, 0},   {65536, 128, 8, 1, 4, 0, 0},
        {3000, 96, 32, 1, 8, 0, 0},    {777, 64, 1, 16, 2, 0, 0},     {5001, 64, 16, 2, 5, 0, 0},
        {20011, 128, 16, 1, 1, 2, 0},  {20011, 128, 16, 1, 1, 64, 0}, {4097, 256, 16, 4, 1, 3, 0},
        {65536, 256, 16, 1, 2, 5, 0},  {100, 64, 4, 1, 2, 0, 1},      {20011, 128, 16, 1, 1, 64, 1},
        {4097, 256, 32, 1, 2, 9, 1},   {5001, 64, 16, 2, 4, 0, 1},    {65536, 512, 32, 1, 2, 0, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        orr_kspec s;
        orr_kspec_default(&s, ORR_TARGET_GPU);
        s.phys.precision = prec;
        s.launch.block = cases[k].block;
        s.launch.unroll = cases[k].unroll;
        s.launch.split = cases[k].split;
        s.launch.ipt = cases[k].ipt;
        s.launch.ranges = cases[k].ranges;
        s.launch.prefetch = cases[k].prefetch;
        s.launch.ftz = (int)(k % 2);
        s.phys.softening = 0.01 + 0.01 * (double)k;
        s.phys.G = 0.75;
        double rel = compare(&s, ORR_VARIANT_TILED, cases[k].n, 4242 + k);
        assert_true(rel <= tol);
    }
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_GPU);
    s.phys.precision = prec;
    assert_true(compare(&s, ORR_VARIANT_NAIVE, 5000, 99) <= tol);
    if (prec == ORR_DOUBLE) {   /* one Newton step: faster, documented at up to ~1e-11 */
        s.launch.newton = 1;
        assert_true(compare(&s, ORR_VARIANT_TILED, 30000, 98) <= 1e-11);
    }
}

static void test_accel_float(void **state)
{
    NEED_GPU();
    sweep(ORR_FLOAT, 1e-5);
}

static void test_accel_double(void **state)
{
    NEED_GPU();
    sweep(ORR_DOUBLE, 1e-12);
}

/* Double rsqrt on the GPU (the hardware approximation refined once, see
 * prelude.h): the acceleration and potential of one pair, unsoftened, at
 * separations from 1e-9 to 1e9 in random directions, against the host's
 * libm in long double.  The default refinement keeps full double accuracy
 * (a few ulp); --newton 1 stays within 1e-11. */
static void test_double_rsqrt_range(void **state)
{
    NEED_GPU();
    orr_error err = {0};
    for (int newton = 2; newton >= 1; newton--) {
        orr_kspec s;
        orr_kspec_default(&s, ORR_TARGET_GPU);
        s.phys.precision = ORR_DOUBLE;
        s.phys.softening = 0;
        s.launch.newton = newton;
        orr_engine *g = NULL;
        TU_OK(orr_engine_create(&g, ORR_BACKEND_CUDA, &s, ORR_VARIANT_TILED, 2, 0, NULL, 0, &err),
              &err);
        uint64_t seed = 77 + (uint64_t)newton;
        double worst_a = 0, worst_u = 0;
        for (int k = 0; k < 400; k++) {
            const double r = pow(10.0, -9 + 18 * tu_rand(&seed));
            double d[3], n2 = 0;
            for (int c = 0; c < 3; c++) {
                d[c] = 2 * tu_rand(&seed) - 1;
                n2 += d[c] * d[c];
            }
            double pos[8] = {0.3 * r, -0.2 * r, 0.1 * r, 0.5 + tu_rand(&seed), 0, 0, 0, 1.25};
            for (int c = 0; c < 3; c++)
                pos[4 + c] = pos[c] + r * d[c] / sqrt(n2);
            double acc[6], u;
            TU_OK(orr_engine_set_state(g, pos, NULL, &err), &err);
            TU_OK(orr_engine_accel(g, acc, &err), &err);
            TU_OK(orr_engine_potential(g, &u, &err), &err);
            long double dx[3], r2 = 0;
            for (int c = 0; c < 3; c++) {
                dx[c] = (long double)pos[4 + c] - pos[c];
                r2 += dx[c] * dx[c];
            }
            const long double inv = 1.0L / sqrtl(r2), a0 = 1.25L * inv * inv * inv;
            for (int c = 0; c < 3; c++) {
                double e = (double)(fabsl(acc[c] - a0 * dx[c]) / (a0 * sqrtl(r2)));
                worst_a = e > worst_a ? e : worst_a;
            }
            const long double u0 = -(long double)pos[3] * 1.25L * inv;
            double eu = (double)fabsl((u - u0) / u0);
            worst_u = eu > worst_u ? eu : worst_u;
        }
        print_message("double rsqrt, newton %d, separations 1e-9..1e9: max rel err accel %.2e, "
                      "potential %.2e\n", newton, worst_a, worst_u);
        assert_true(worst_a <= (newton == 2 ? 2e-15 : 1e-11));
        assert_true(worst_u <= (newton == 2 ? 2e-15 : 1e-11));
        orr_engine_destroy(g);
    }
}

static void test_potential_kick_drift(void **state)
{
    NEED_GPU();
    orr_error err = {0};
    const long n = 5003;
    double *pos = malloc(sizeof(double) * 4 * n), *vel = malloc(sizeof(double) * 3 * n),
           *acc = malloc(sizeof(double) * 3 * n), *pos2 = malloc(sizeof(double) * 4 * n),
           *vel2 = malloc(sizeof(double) * 3 * n);
    tu_random_bodies(n, 31337, pos, vel);
    for (int prec = 0; prec < 2; prec++) {
        orr_kspec gs, cs;
        orr_kspec_default(&gs, ORR_TARGET_GPU);
        orr_kspec_default(&cs, ORR_TARGET_CPU);
        gs.phys.precision = prec;
        cs.phys.precision = ORR_DOUBLE;
        gs.phys.softening = cs.phys.softening = 0.03;
        orr_engine *g = NULL, *c = NULL;
        TU_OK(orr_engine_create(&g, ORR_BACKEND_CUDA, &gs, ORR_VARIANT_TILED, n, 0, NULL, 0, &err), &err);
        TU_OK(orr_engine_create(&c, ORR_BACKEND_CPU, &cs, ORR_VARIANT_TILED, n, 0, NULL, 0, &err), &err);
        TU_OK(orr_engine_set_state(g, pos, vel, &err), &err);
        TU_OK(orr_engine_set_state(c, pos, vel, &err), &err);
        double ug = 0, uc = 0;
        TU_OK(orr_engine_potential(g, &ug, &err), &err);
        TU_OK(orr_engine_potential(c, &uc, &err), &err);
        double tol = prec == ORR_DOUBLE ? 1e-12 : 1e-6;
        print_message("gpu %s potential %.15g, cpu double %.15g\n", orr_precision_name(prec), ug, uc);
        assert_true(fabs(ug - uc) <= tol * fabs(uc));
        const double dt = 0.0625;
        TU_OK(orr_engine_accel(g, acc, &err), &err);
        TU_OK(orr_engine_kick(g, dt, 1.0, &err), &err);
        TU_OK(orr_engine_drift(g, dt, &err), &err);
        TU_OK(orr_engine_get_state(g, pos2, vel2, &err), &err);
        double tol2 = prec == ORR_DOUBLE ? 1e-14 : 1e-6;
        for (long i = 0; i < n; i++)
            for (int k = 0; k < 3; k++) {
                double v = vel[3 * i + k] + acc[3 * i + k] * dt;
                double x = pos[4 * i + k] + v * dt;
                assert_true(fabs(vel2[3 * i + k] - v) <= tol2 * (1 + fabs(v)));
                assert_true(fabs(pos2[4 * i + k] - x) <= tol2 * (1 + fabs(x)));
            }
        orr_engine_destroy(g);
        orr_engine_destroy(c);
    }
    free(pos);
    free(vel);
    free(acc);
    free(pos2);
    free(vel2);
}

/* Targets apart from sources on the GPU, with one j-range and with
 * several (combine pass), threads per body and bodies per thread. */
static void test_target_ranges(void **state)
{
    NEED_GPU();
    orr_kspec spec;
    orr_kspec_default(&spec, ORR_TARGET_GPU);
    for (int p = 0; p < 2; p++) {
        spec.phys.precision = p;
        spec.launch.block = 512;
        spec.launch.split = spec.launch.ipt = 1;
        spec.launch.ranges = 0;
        tu_check_target_ranges(ORR_BACKEND_CUDA, &spec);
        spec.launch.block = 128;
        spec.launch.split = 4;
        spec.launch.ipt = 2;
        spec.launch.ranges = 3;
        tu_check_target_ranges(ORR_BACKEND_CUDA, &spec);
    }
}

static void test_cache_second_start(void **state)
{
    NEED_GPU();
    orr_error err = {0};
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_GPU);
    s.phys.softening = 0.0371;
    orr_engine *a = NULL, *b = NULL;
    TU_OK(orr_engine_create(&a, ORR_BACKEND_CUDA, &s, ORR_VARIANT_TILED, 64, 0, NULL, 0, &err), &err);
    TU_OK(orr_engine_create(&b, ORR_BACKEND_CUDA, &s, ORR_VARIANT_TILED, 64, 0, NULL, 0, &err), &err);
    print_message("first start compiled in %.3f s; second start from cache: %d, loaded in %.2f ms\n",
                  orr_engine_build_info(a)->compile_s, orr_engine_build_info(b)->cached, orr_engine_build_info(b)->load_s * 1e3);
    assert_int_equal(orr_engine_build_info(a)->cached, 0);
    assert_int_equal(orr_engine_build_info(b)->cached, 1);
    assert_true(strncmp(orr_engine_build_info(b)->target, "sm_", 3) == 0);
    orr_engine_destroy(a);
    orr_engine_destroy(b);
    /* the primary context outlives its engines: a third engine made after
     * both were destroyed retains none (a context costs ~110 ms to make and
     * ~90 ms to destroy on an H100) */
    const int retains = orr_cuda_ctx_retains();
    assert_int_equal(retains, 1);
    TU_OK(orr_engine_create(&a, ORR_BACKEND_CUDA, &s, ORR_VARIANT_TILED, 64, 0, NULL, 0, &err), &err);
    orr_engine_destroy(a);
    assert_int_equal(orr_cuda_ctx_retains(), retains);
}

static void test_errors(void **state)
{
    NEED_GPU();
    orr_error err = {0};
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_GPU);
    orr_engine *e = NULL;
    /* an engine the device has no room for: the device's memory taken
     * first, 1 GiB at a time, then 2^24 bodies in double (1.5 GiB) asked
     * for (the body count alone cannot do it: 2^30 bodies fit an H200) */
    TU_OK(orr_cuda_ctx_acquire(0, &err), &err);
    orr_devptr held[1024];
    int nheld = 0;
    while (nheld < 1024 && orr_cuda_alloc(&held[nheld], (size_t)1 << 30, &err) == ORR_OK)
        nheld++;
    orr_error_clear(&err);
    s.phys.precision = ORR_DOUBLE;
    const long n = 1L << 24;
    orr_status got = orr_engine_create(&e, ORR_BACKEND_CUDA, &s, ORR_VARIANT_TILED, n, 0, NULL,
                                       0, &err);
    for (int k = 0; k < nheld; k++)
        orr_cuda_free(held[k]);
    print_message("%d GiB held: %s\n", nheld, err.msg);
    assert_int_equal(got, ORR_ERR_DEVMEM);
    assert_non_null(strstr(err.msg, "16777216 bodies"));
    assert_non_null(strstr(err.msg, "device out of memory"));
    assert_null(e);
    /* a block the spec allows but a tile of which does not fit shared memory is
     * impossible at 1024 x 32 B, so test the split/block rule instead */
    s.launch.block = 64;
    s.launch.split = 128;
    assert_int_equal(orr_engine_create(&e, ORR_BACKEND_CUDA, &s, ORR_VARIANT_TILED, 100, 0, NULL,
                                       0, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "invalid split 128"));
    orr_error_clear(&err);
}

/* The same scenario on both backends: a Plummer sphere, 100 steps of each
 * integrator; positions agree within 1e-9 (double) / 1e-4 (float) of the
 * system's unit length, and the energies within 1e-12 / 1e-5 relative. */
/* The force + jerk kernel in each tile (64, 128, 256) and j-split, for
 * one, some and all bodies active, against the CPU backend in double; and
 * the Hermite tuner (htune.h): every bucket tuned and verified, stored and
 * found again, a planted wrong answer rejected. */
typedef struct {
    int seen, rejected, tampered;
    int bad_tile;   /* tamper this tile's answers */
} htrecorder;

static void ht_report(const orr_htune_trial *t, void *ctx)
{
    htrecorder *r = ctx;
    r->seen++;
    r->rejected += !t->ok;
    if (!t->ok && t->launch.tile == r->bad_tile)
        assert_non_null(strstr(t->why, "max rel err"));
}

static void ht_tamper(const orr_htune_trial *t, double *acc, double *jerk, long ni, void *ctx)
{
    htrecorder *r = ctx;
    if (t->launch.tile != r->bad_tile)
        return;
    jerk[3 * (ni / 2)] *= 1.001;
    r->tampered++;
}

static void test_hermite_launches(void **state)
{
    NEED_GPU();
    const long n = 5001;
    orr_error err = {0};
    double *pos = malloc(sizeof(double) * 4 * n), *vel = malloc(sizeof(double) * 3 * n);
    double *acc = malloc(sizeof(double) * 6 * n), *ref = malloc(sizeof(double) * 6 * n);
    long *idx = malloc(sizeof(long) * n);
    TU_OK(orr_ic_plummer(n, 777, 1.0, pos, vel, &err), &err);
    orr_kspec gs, cs;
    orr_kspec_default(&gs, ORR_TARGET_GPU);
    gs.phys.precision = ORR_DOUBLE;
    gs.phys.softening = 0.003;
    orr_kspec_reference(&gs.phys, &cs);
    orr_engine *g = NULL, *c = NULL;
    TU_OK(orr_engine_create(&g, ORR_BACKEND_CUDA, &gs, ORR_VARIANT_TILED, n, 0, NULL, 0, &err), &err);
    TU_OK(orr_engine_create(&c, ORR_BACKEND_CPU, &cs, ORR_VARIANT_TILED, n, 0, NULL, 0, &err), &err);
    TU_OK(orr_engine_set_state(g, pos, vel, &err), &err);
    TU_OK(orr_engine_set_state(c, pos, vel, &err), &err);
    const long counts[] = {1, 37, 1500, n};
    const int tiles[] = {64, 128, 256}, per_sm[] = {1, 64};
    for (size_t a = 0; a < 4; a++) {
        const long na = counts[a];
        for (long i = 0; i < na; i++) {   /* spread, not in order */
            const long v = (long)((double)i * n / na);
            idx[i] = (v ^ 1) < n ? v ^ 1 : v;
        }
        TU_OK(orr_engine_accel_jerk(c, na, idx, ref, ref + 3 * na, &err), &err);
        for (int t = 0; t < 3; t++)
            for (int p = 0; p < 2; p++) {
                TU_OK(orr_engine_set_hlaunch(g, orr_hbucket(na), (orr_hlaunch){tiles[t], per_sm[p]},
                                             &err), &err);
                for (long i = 0; i < 6 * na; i++)
                    acc[i] = NAN;
                TU_OK(orr_engine_accel_jerk(g, na, idx, acc, acc + 3 * na, &err), &err);
                const double ea = orr_accel_err(acc, ref, na),
                             ej = orr_accel_err(acc + 3 * na, ref + 3 * na, na);
                print_message("force + jerk, %ld active of %ld, tile %d, %d per SM (%d ranges): "
                              "acc %.2e jerk %.2e\n", na, n, tiles[t], per_sm[p],
                              orr_hlaunch_ranges(n, na, (orr_hlaunch){tiles[t], per_sm[p]}, 132,
                                                 NULL), ea, ej);
                assert_true(ea <= 1e-12);
                assert_true(ej <= 1e-12);
            }
        double ms = -1;
        TU_OK(orr_engine_time_accel_jerk(g, na, idx, 3, &ms, &err), &err);
        assert_true(ms > 0 && ms < 1000);
    }
    orr_engine_destroy(g);
    orr_engine_destroy(c);

    /* the tuner: n = 3000 reaches 4 buckets (64, 256, 1024, 3000) */
    orr_htune_options o;
    orr_htune_options_default(&o);
    o.budget_s = 1.0;
    o.retune = 1;
    htrecorder rec = {0};
    o.report = ht_report;
    o.ctx = &rec;
    orr_htune_result r, again;
    TU_OK(orr_htune(&gs, 3000, &o, &r, &err), &err);
    print_message("hermite tuning, 3000 bodies: %s in %.2f s, %d tried, %d rejected; %s\n",
                  r.source, r.elapsed_s, r.ntrials, r.nfailed, r.note);
    assert_string_equal(r.source, "tuned");
    assert_int_equal(r.nbuckets, 4);
    assert_int_equal(r.active[3], 3000);
    assert_int_equal(r.active[1], 256);
    assert_int_equal(rec.seen, r.ntrials);
    assert_true(r.ntrials >= 8);
    assert_int_equal(rec.rejected, 0);
    for (int k = 0; k < 4; k++) {
        print_message("  <=%ld active: tile %d, %d per SM, %.4g ms (%s)\n", r.active[k],
                      r.launch[k].tile, r.launch[k].per_sm, r.ms[k], r.from[k]);
        assert_string_equal(r.from[k], "tuned");
        assert_true(r.ms[k] > 0);
    }
    o.retune = 0;
    o.report = NULL;
    TU_OK(orr_htune(&gs, 3000, &o, &again, &err), &err);
    assert_string_equal(again.source, "store");
    assert_int_equal(again.ntrials, 0);
    for (int k = 0; k < 4; k++) {
        assert_int_equal(again.launch[k].tile, r.launch[k].tile);
        assert_int_equal(again.launch[k].per_sm, r.launch[k].per_sm);
        assert_string_equal(again.from[k], "store");
    }
    /* a tile whose jerks are planted wrong is rejected and never chosen */
    memset(&rec, 0, sizeof rec);
    rec.bad_tile = 128;
    o.retune = 1;
    o.report = ht_report;
    o.tamper = ht_tamper;
    TU_OK(orr_htune(&gs, 3000, &o, &r, &err), &err);
    assert_true(rec.tampered > 0);
    assert_int_equal(rec.rejected, rec.tampered);
    for (int k = 0; k < 4; k++)
        assert_int_not_equal(r.launch[k].tile, 128);
    free(pos);
    free(vel);
    free(acc);
    free(ref);
    free(idx);
}

/* bench --integrator hermite on the GPU: one block of some and of all
 * bodies, on the engine's own block steps (its levels set per body) */
static void test_bench_hermite(void **state)
{
    NEED_GPU();
    orr_error err = {0};
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_GPU);
    s.phys.precision = ORR_DOUBLE;
    for (long active = 64; active <= 4096; active *= 64) {
        double ms = 0;
        TU_OK(orr_bench_hermite(ORR_BACKEND_CUDA, &s, 4096, active, NULL, 5, &ms, &err), &err);
        print_message("bench hermite, 4096 bodies, %ld active: %.4f ms a block\n", active, ms);
        assert_true(ms > 0 && ms < 100);
    }
}

/* The Hermite integrator's restored steps on the GPU (testutil.h). */
static void test_hermite_restored_steps(void **state)
{
    NEED_GPU();
    tu_check_restored_steps(ORR_BACKEND_CUDA);
}

/* An interval's blocks queued three ways (backend_cuda.c, ORRERY_HBLOCKS):
 * one block at a time with the host reading each back, batches of
 * launches with nothing read back between blocks, and one persistent
 * kernel for the interval (grid barriers between the phases); and the
 * persistent kernel with blocks split as between GPUs (one rank: the
 * split path alone, every block, or those of 40 active bodies or more,
 * stopping the persistent kernel there); the same bits, the same
 * blocks and active counts, in double and mixed, for a small n (one GPU
 * block predicts) and a larger one, with launches per bucket of every
 * tile (so each tile's kernel does work and the others stand aside). */
static void test_hermite_queueing(void **state)
{
    NEED_GPU();
    static const char *modes[] = {"block", "batch", "persist", "persist", "persist"};
    static const long split[] = {0, 0, 0, 1, 40};
    static const long ns[] = {300, 5000};
    for (int k = 0; k < 2; k++)
        for (int prec = 0; prec < 2; prec++) {
            const long n = ns[k];
            double *first = NULL;
            long blocks0 = 0, active0 = 0;
            for (int m = 0; m < 5; m++) {
                setenv("ORRERY_HBLOCKS", modes[m], 1);
                orr_error err = {0};
                orr_sim_config c;
                orr_sim_config_default(&c);
                c.n = n;
                c.precision = prec ? ORR_MIXED : ORR_DOUBLE;
                c.integrator = "hermite";
                c.dt = 1.0 / 16;
                c.softening = 4.0 / n;
                c.backend = ORR_BACKEND_CUDA;
                c.tune = ORR_SIM_TUNE_OFF;
                orr_sim *s = NULL;
                TU_OK(orr_sim_create(&s, &c, NULL, 0, &err), &err);
                orr_hlaunch l[ORR_HBUCKETS];
                for (int b = 0; b < ORR_HBUCKETS; b++)
                    l[b] = (orr_hlaunch){b == 0 ? 64 : b == 1 ? 128 : 256, b == 1 ? 8 : 16};
                TU_OK(orr_sim_set_hermite_launch(s, l, orr_hbucket(n) + 1, "test", &err), &err);
                orr_engine *e = (orr_engine *)orr_sim_engine(s);
                const orr_block_split bs = {split[m], 0, 1, NULL, NULL};
                TU_OK(orr_engine_blocks_split(e, &bs, &err), &err);
                double *sp, *sv;
                TU_OK(orr_sim_pos(s, &sp, &err), &err);
                TU_OK(orr_sim_vel(s, &sv, &err), &err);
                TU_OK(orr_ic_plummer(n, 4242, 1.0, sp, sv, &err), &err);
                orr_sim_touch(s);
                TU_OK(orr_sim_step(s, 3, NULL, &err), &err);
                orr_block_stats got;
                orr_sim_blocks(s, &got);
                const long blocks = got.blocks, active = got.active;
                double *p;
                TU_OK(orr_sim_pos(s, &p, &err), &err);
                orr_blocks_stats bst;
                orr_engine_blocks_stats(e, &bst);
                print_message("hermite %s (split at %ld) n=%ld %s: %ld blocks, %ld active, %ld "
                              "split (%ld active)\n", modes[m], split[m], n,
                              prec ? "mixed" : "double", blocks, active, bst.split_blocks,
                              bst.split_active);
                assert_true(blocks > 3 && active > blocks);
                if (split[m] == 1) {   /* every block of the intervals, the first's start aside */
                    assert_int_equal(bst.split_blocks, blocks);
                    assert_int_equal(bst.split_active, active);
                } else if (split[m] > 1) {
                    assert_true(bst.split_blocks > 0 && bst.split_blocks < blocks);
                } else {
                    assert_int_equal(bst.split_blocks, 0);
                }
                if (m == 2)
                    assert_true(bst.phase_s[2] > 0);
                if (!first) {
                    first = malloc(sizeof(double) * 4 * n);
                    memcpy(first, p, sizeof(double) * 4 * n);
                    blocks0 = blocks, active0 = active;
                } else {
                    assert_int_equal(blocks, blocks0);
                    assert_int_equal(active, active0);
                    assert_memory_equal(p, first, sizeof(double) * 4 * n);
                }
                orr_sim_destroy(s);
            }
            free(first);
        }
    unsetenv("ORRERY_HBLOCKS");
}

/* The host's watch over the block steps (orr_engine_blocks_watch, the
 * regularised groups on the GPU): a run stops before the block at the
 * stop tick, or after a block once every body counts as pulled near
 * another; the state read at a stop and written back changes nothing
 * (whole, or in part: orr_engine_blocks_some finds the bodies corrected
 * since a tick and writes listed ones), and the watched interval ends with
 * the bits of one never stopped. */
static void test_hermite_watch(void **state)
{
    NEED_GPU();
    const long n = 3001, end = 1L << 40;
    orr_error err = {0};
    double *pos = malloc(sizeof(double) * 4 * n), *vel = malloc(sizeof(double) * 3 * n);
    double *ref = malloc(sizeof(double) * 4 * n), *got = malloc(sizeof(double) * 4 * n);
    double *v = malloc(sizeof(double) * 3 * n), *a = malloc(sizeof(double) * 3 * n);
    double *j = malloc(sizeof(double) * 3 * n);
    long long *tick = malloc(sizeof(long long) * n);
    int *level = malloc(sizeof(int) * n);
    TU_OK(orr_ic_plummer(n, 515, 1.0, pos, vel, &err), &err);
    orr_kspec gs;
    orr_kspec_default(&gs, ORR_TARGET_GPU);
    gs.phys.precision = ORR_DOUBLE;
    gs.phys.softening = 4.0 / n;
    const orr_block_params p = {1.0 / 16, 0.02, 0.01, 40, 0, -1, 1e-13};   /* noise floor found on the GPU */
    long refblocks = 0;
    double *pos2 = malloc(sizeof(double) * 4 * n), *v2 = malloc(sizeof(double) * 3 * n);
    double *a2 = malloc(sizeof(double) * 3 * n), *j2 = malloc(sizeof(double) * 3 * n);
    long long *tick2 = malloc(sizeof(long long) * n);
    int *level2 = malloc(sizeof(int) * n);
    long *list = malloc(sizeof(long) * n);
    /* never stopped; stopped at a tick; after blocks; stopped twice, the
     * state between exchanged in part (orr_engine_blocks_some) */
    for (int run = 0; run < 4; run++) {
        orr_engine *g = NULL;
        TU_OK(orr_engine_create(&g, ORR_BACKEND_CUDA, &gs, ORR_VARIANT_TILED, n, 0, NULL, 0, &err),
              &err);
        TU_OK(orr_engine_set_state(g, pos, vel, &err), &err);
        orr_engine_set_time(g, 0, p.H / (double)end);
        TU_OK(orr_engine_blocks_begin(g, &p, 1, 0, &err), &err);
        long long t = 0;
        long blocks = 0, active = 0, before = 0;
        if (run == 1) {   /* stop before the block at or after half the interval */
            const orr_block_watch w = {.stop = end / 2 + 12345, .G = 1};
            TU_OK(orr_engine_blocks_watch(g, &w, &err), &err);
            TU_OK(orr_engine_blocks_run(g, &p, &t, &blocks, &active, &err), &err);
            assert_int_equal(orr_engine_blocks_why(g), 1);
            assert_true(t < w.stop && blocks > 1);
            TU_OK(orr_engine_blocks_state(g, got, v, a, j, tick, level, 0, &err), &err);
            long long next = end;
            for (long i = 0; i < n; i++) {
                assert_true(tick[i] <= t && level[i] >= 0 && level[i] <= 40);
                const long long ti = tick[i] + (end >> level[i]);
                next = ti < next ? ti : next;
            }
            assert_true(next >= w.stop);   /* the next block is the host's */
            TU_OK(orr_engine_blocks_state(g, got, v, a, j, tick, level, 1, &err), &err);
            const orr_block_watch none = {.stop = -1, .G = 1};
            TU_OK(orr_engine_blocks_watch(g, &none, &err), &err);
        } else if (run == 3) {
            orr_block_watch w = {.stop = end / 4 + 777, .G = 1};
            TU_OK(orr_engine_blocks_watch(g, &w, &err), &err);
            TU_OK(orr_engine_blocks_run(g, &p, &t, &blocks, &active, &err), &err);
            assert_int_equal(orr_engine_blocks_why(g), 1);
            const long long t1 = t;
            const long active1 = active;
            TU_OK(orr_engine_blocks_state(g, got, v, a, j, tick, level, 0, &err), &err);
            w.stop = end / 2 + 12345;
            TU_OK(orr_engine_blocks_watch(g, &w, &err), &err);
            TU_OK(orr_engine_blocks_run(g, &p, &t, &blocks, &active, &err), &err);
            assert_int_equal(orr_engine_blocks_why(g), 1);
            /* the bodies corrected since t1, into the first stop's copy */
            long m = 0;
            TU_OK(orr_engine_blocks_some(g, got, v, a, j, tick, level, 0, list, &m, t1,
                                         active - active1, &err), &err);
            assert_true(m > 0 && m < n);
            TU_OK(orr_engine_blocks_state(g, pos2, v2, a2, j2, tick2, level2, 0, &err), &err);
            long later = 0;
            for (long i = 0; i < n; i++)
                later += tick2[i] > t1;
            assert_int_equal(later, m);
            for (long k = 0; k < m; k++)
                assert_true(tick2[list[k]] > t1 && tick2[list[k]] <= t);
            assert_memory_equal(got, pos2, sizeof(double) * 4 * n);
            assert_memory_equal(v, v2, sizeof(double) * 3 * n);
            assert_memory_equal(a, a2, sizeof(double) * 3 * n);
            assert_memory_equal(j, j2, sizeof(double) * 3 * n);
            assert_memory_equal(tick, tick2, sizeof(long long) * n);
            assert_memory_equal(level, level2, sizeof(int) * n);
            /* fewer expected than there are: read whole, the same list */
            long m2 = 0;
            TU_OK(orr_engine_blocks_some(g, got, v, a, j, tick, level, 0, list, &m2, t1, 1, &err),
                  &err);
            assert_int_equal(m2, m);
            /* three bodies written (one of them changed, then put back) */
            const long some[3] = {7, n / 2, n - 1};
            for (int k = 0; k < 3; k++)
                list[k] = some[k];
            long three = 3;
            got[4 * some[1]] += 0.5;
            TU_OK(orr_engine_blocks_some(g, got, v, a, j, tick, level, 1, list, &three, 0, 0, &err),
                  &err);
            TU_OK(orr_engine_blocks_state(g, pos2, v2, a2, j2, tick2, level2, 0, &err), &err);
            assert_memory_equal(got, pos2, sizeof(double) * 4 * n);
            assert_memory_equal(tick, tick2, sizeof(long long) * n);
            assert_memory_equal(level, level2, sizeof(int) * n);
            got[4 * some[1]] -= 0.5;
            TU_OK(orr_engine_blocks_some(g, got, v, a, j, tick, level, 1, list, &three, 0, 0, &err),
                  &err);
            const orr_block_watch none = {.stop = -1, .G = 1};
            TU_OK(orr_engine_blocks_watch(g, &none, &err), &err);
        } else if (run == 2) {   /* every body pulled and near: a stop after each block */
            const orr_block_watch w = {.stop = -1, .pull = 1e-300, .near = 1e300, .peri = 1e300, .G = 1};
            TU_OK(orr_engine_blocks_watch(g, &w, &err), &err);
            for (int k = 0; k < 5; k++) {
                TU_OK(orr_engine_blocks_run(g, &p, &t, &blocks, &active, &err), &err);
                assert_int_equal(orr_engine_blocks_why(g), 2);
                assert_true(blocks > before && t < end);   /* a lone active body is not near */
                before = blocks;
            }
            const orr_block_watch none = {.stop = -1, .G = 1};
            TU_OK(orr_engine_blocks_watch(g, &none, &err), &err);
        }
        TU_OK(orr_engine_blocks_run(g, &p, &t, &blocks, &active, &err), &err);
        assert_int_equal(orr_engine_blocks_why(g), 0);
        assert_int_equal(t, end);
        TU_OK(orr_engine_get_state(g, run ? got : ref, NULL, &err), &err);
        print_message("hermite watch run %d: %ld blocks\n", run, blocks);
        if (run == 0)
            refblocks = blocks;
        else {
            assert_int_equal(blocks, refblocks);
            assert_memory_equal(got, ref, sizeof(double) * 4 * n);
        }
        orr_engine_destroy(g);
    }
    /* mixed precision keeps float positions on the GPU: not watched */
    gs.phys.precision = ORR_MIXED;
    orr_engine *m = NULL;
    TU_OK(orr_engine_create(&m, ORR_BACKEND_CUDA, &gs, ORR_VARIANT_TILED, n, 0, NULL, 0, &err), &err);
    const orr_block_watch w = {.stop = -1, .G = 1};
    assert_int_equal(orr_engine_blocks_watch(m, &w, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "watched only in double"));
    orr_error_clear(&err);
    orr_engine_destroy(m);
    free(pos), free(vel), free(ref), free(got), free(v), free(a), free(j), free(tick), free(level);
    free(pos2), free(v2), free(a2), free(j2), free(tick2), free(level2), free(list);
}

static void test_sim_cuda_matches_cpu(void **state)
{
    NEED_GPU();
    const long n = 3000;
    double *pos = malloc(sizeof(double) * 4 * n), *vel = malloc(sizeof(double) * 3 * n);
    orr_error err = {0};
    TU_OK(orr_ic_plummer(n, 2026, 1.0, pos, vel, &err), &err);
    const char *integrators[] = {"leapfrog", "yoshida4", "euler"};
    for (int prec = 0; prec < 2; prec++)
        for (int k = 0; k < 3; k++) {
            orr_sim *s[2];
            double e[2], *p[2];
            for (int b = 0; b < 2; b++) {
                orr_sim_config c;
                orr_sim_config_default(&c);
                c.n = n;
                c.precision = prec;
                c.integrator = integrators[k];
                c.dt = 1.0 / 256;
                c.backend = b ? ORR_BACKEND_CPU : ORR_BACKEND_CUDA;
                TU_OK(orr_sim_create(&s[b], &c, NULL, 0, &err), &err);
                double *sp, *sv;
                TU_OK(orr_sim_pos(s[b], &sp, &err), &err);
                TU_OK(orr_sim_vel(s[b], &sv, &err), &err);
                memcpy(sp, pos, sizeof(double) * 4 * n);
                memcpy(sv, vel, sizeof(double) * 3 * n);
                orr_sim_touch(s[b]);
                TU_OK(orr_sim_step(s[b], 100, NULL, &err), &err);
                double kin, pot;
                TU_OK(orr_sim_energy(s[b], &kin, &pot, &err), &err);
                e[b] = kin + pot;
                TU_OK(orr_sim_pos(s[b], &p[b], &err), &err);
            }
            double worst = 0;
            for (long i = 0; i < n; i++)
                for (int d = 0; d < 3; d++)
                    worst = fmax(worst, fabs(p[0][4 * i + d] - p[1][4 * i + d]));
            double de = fabs(e[0] - e[1]) / fabs(e[1]);
            print_message("sim %s %s, 100 steps: max |x_cuda - x_cpu| = %.2e, energy rel diff %.2e\n",
                          orr_precision_name(prec), integrators[k], worst, de);
            assert_true(worst <= (prec == ORR_DOUBLE ? 1e-9 : 1e-4));
            assert_true(de <= (prec == ORR_DOUBLE ? 1e-12 : 1e-5));
            orr_sim_destroy(s[0]);
            orr_sim_destroy(s[1]);
        }
    free(pos);
    free(vel);
}

/* The field tests' fields: milky_way and "wave", k (x^2 - y^2)(1 + t)
 * with k a runtime param. */
static void wave_fields(orr_fieldset *fs)
{
    orr_error err = {0};
    memset(fs, 0, sizeof *fs);
    TU_OK(orr_field_builtin("milky_way", &fs->f[0], &err), &err);
    TU_OK(orr_field_init(&fs->f[1], "wave", "test_gpu.c", &err), &err);
    TU_OK(orr_field_add_param(&fs->f[1], "k", 0.01, &err), &err);
    TU_OK(orr_field_set_runtime(&fs->f[1], "k", &err), &err);
    TU_OK(orr_field_set_expr(&fs->f[1], "k*(x*x - y*y)*(1 + t)", 1, &err), &err);
    fs->n = 2;
}

/* One run of the field tests: n bodies (pos, vel) with the fields fs
 * (frame: about a centre at (1, 0, 0) moving at (0, 1, 0)), integrator
 * `integ` (hermite: 2 intervals of 1/16, else 50 steps of 1/256), wave.k
 * changed to 0.02 (runtime: no recompile), as many again; the fields'
 * energy into *u and the positions into *p (the simulation's). */
static orr_sim *field_run(long n, const double *pos, const double *vel, orr_precision prec,
                          const char *integ, orr_backend_kind backend, const orr_fieldset *fs,
                          int frame, double *u, double **p)
{
    orr_error err = {0};
    const int blocks = strcmp(integ, "hermite") == 0;
    orr_sim_config c;
    orr_sim_config_default(&c);
    c.n = n;
    c.precision = prec;
    c.integrator = integ;
    c.softening = 1e-3;
    c.G = 1e-3;
    c.dt = blocks ? 1.0 / 16 : 1.0 / 256;
    c.fields = fs;
    c.frame = frame;
    if (frame)
        c.frame_center[0] = 1, c.frame_velocity[1] = 1;
    c.backend = backend;
    c.tune = ORR_SIM_TUNE_OFF;
    orr_sim *s = NULL;
    TU_OK(orr_sim_create(&s, &c, NULL, 0, &err), &err);
    double *sp, *sv;
    TU_OK(orr_sim_pos(s, &sp, &err), &err);
    TU_OK(orr_sim_vel(s, &sv, &err), &err);
    memcpy(sp, pos, sizeof(double) * 4 * n);
    memcpy(sv, vel, sizeof(double) * 3 * n);
    orr_sim_touch(s);
    TU_OK(orr_sim_step(s, blocks ? 2 : 50, NULL, &err), &err);
    int re = 1;
    TU_OK(orr_sim_set_param(s, "wave.k", 0.02, &re, &err), &err);
    assert_int_equal(re, 0);
    TU_OK(orr_sim_step(s, blocks ? 2 : 50, NULL, &err), &err);
    double kin, pair;
    TU_OK(orr_sim_energy_parts(s, &kin, &pair, u, &err), &err);
    TU_OK(orr_sim_pos(s, p, &err), &err);
    return s;
}

/* External fields on the GPU against the CPU (field.h): a cluster of 3000
 * bodies in milky_way (in galpy's natural units, the cluster at R = 1) and
 * a time-dependent field with a runtime param, every integrator, Hermite's
 * block steps included (on the device; its jerk is the fields' too), float,
 * double and mixed: positions after the steps within 1e-9 (double, mixed)
 * and 1e-4 (float) of the CPU's, the energies' field part within 1e-12 and
 * 1e-5; then the runtime param changed between steps on both. */
static void test_sim_fields(void **state)
{
    NEED_GPU();
    const long n = 3000;
    double *pos = malloc(sizeof(double) * 4 * n), *vel = malloc(sizeof(double) * 3 * n);
    orr_error err = {0};
    TU_OK(orr_ic_plummer(n, 2027, 1.0, pos, vel, &err), &err);
    for (long i = 0; i < n; i++) {   /* a small cluster on a circular orbit at R = 1 */
        for (int d = 0; d < 3; d++)
            pos[4 * i + d] *= 0.01, vel[3 * i + d] *= 0.01;
        pos[4 * i] += 1, vel[3 * i + 1] += 1, pos[4 * i + 3] *= 1e-6;
    }
    orr_fieldset fs;
    wave_fields(&fs);
    const char *integrators[] = {"leapfrog", "yoshida4", "hermite"};
    for (int prec = 0; prec < 3; prec++)
        for (int k = 0; k < 3; k++) {
            if (prec == ORR_MIXED && k < 2)
                continue;   /* mixed is Hermite's */
            orr_sim *s[2];
            double u[2], *p[2];
            for (int b = 0; b < 2; b++)
                s[b] = field_run(n, pos, vel, prec, integrators[k],
                                 b ? ORR_BACKEND_CPU : ORR_BACKEND_CUDA, &fs, 0, &u[b], &p[b]);
            double worst = 0;
            for (long i = 0; i < n; i++)
                for (int d = 0; d < 3; d++)
                    worst = fmax(worst, fabs(p[0][4 * i + d] - p[1][4 * i + d]));
            const double du = fabs(u[0] - u[1]) / fabs(u[1]);
            print_message("fields, %s %s: max |x_cuda - x_cpu| = %.2e, field energy rel diff "
                          "%.2e\n", orr_precision_name(prec), integrators[k], worst, du);
            assert_true(worst <= (prec == ORR_FLOAT ? 1e-4 : 1e-9));
            assert_true(du <= (prec == ORR_FLOAT ? 1e-5 : 1e-12));
            orr_sim_destroy(s[0]);
            orr_sim_destroy(s[1]);
        }
    orr_fieldset_free(&fs);
    free(pos);
    free(vel);
}

/* A frame that follows the cluster (frame.h): the small cluster of
 * test_sim_fields in coordinates relative to a centre on its orbit, on the
 * GPU in each precision against the CPU in double, every integrator (the
 * Hermite interval's span polynomials on the device), a runtime param
 * changed mid-run: positions within float's rounding of the cluster's size
 * (not of its 1 kpc radius), the galaxy's field energy alike. */
static void test_sim_frame(void **state)
{
    NEED_GPU();
    const long n = 3000;
    double *pos = malloc(sizeof(double) * 4 * n), *vel = malloc(sizeof(double) * 3 * n);
    orr_error err = {0};
    TU_OK(orr_ic_plummer(n, 2027, 1.0, pos, vel, &err), &err);
    for (long i = 0; i < n; i++) {
        for (int d = 0; d < 3; d++)
            pos[4 * i + d] *= 0.01, vel[3 * i + d] *= 0.01;
        pos[4 * i + 3] *= 1e-6;
    }
    orr_fieldset fs;
    wave_fields(&fs);
    const char *integrators[] = {"leapfrog", "yoshida4", "hermite"};
    for (int prec = 0; prec < 3; prec++)
        for (int k = 0; k < 3; k++) {
            if (prec == ORR_MIXED && k < 2)
                continue;
            orr_sim *s[2];
            double u[2], *p[2];
            for (int b = 0; b < 2; b++)   /* the GPU in prec, the CPU in double */
                s[b] = field_run(n, pos, vel, b ? ORR_DOUBLE : prec, integrators[k],
                                 b ? ORR_BACKEND_CPU : ORR_BACKEND_CUDA, &fs, 1, &u[b], &p[b]);
            double worst = 0, R[2][3], V[3];
            for (long i = 0; i < n; i++)
                for (int d = 0; d < 3; d++)
                    worst = fmax(worst, fabs(p[0][4 * i + d] - p[1][4 * i + d]));
            assert_int_equal(orr_sim_frame(s[0], R[0], V, &err), 1);
            assert_int_equal(orr_sim_frame(s[1], R[1], V, &err), 1);
            const double du = fabs(u[0] - u[1]) / fabs(u[1]);
            print_message("frame, %s %s: max |x_cuda - x_cpu(double)| = %.2e (cluster 0.01), "
                          "field energy rel diff %.2e\n", orr_precision_name(prec),
                          integrators[k], worst, du);
            assert_true(worst <= (prec == ORR_FLOAT ? 1e-7 : 1e-12));
            assert_true(du <= (prec == ORR_FLOAT ? 1e-7 : 1e-13));
            assert_memory_equal(R[0], R[1], sizeof R[0]);   /* the same centre, bit for bit */
            orr_sim_destroy(s[0]);
            orr_sim_destroy(s[1]);
        }
    orr_fieldset_free(&fs);
    free(pos);
    free(vel);
}

/* Every built-in law and a user law (runtime param, attribute) on the GPU
 * against the CPU backend in double: accelerations within 1e-5 (float) and
 * 1e-12 (double), the potential too; a user copy of gravity bitwise equal to
 * the built-in on the GPU. */
/* The live view's subsample on the GPU (render.cu: orr_view_sample) against
 * the values the engine holds: positions and masses the stored values as
 * floats, speeds the host's unfused double arithmetic, bit for bit, for
 * float and double bodies, every body, a stride with an offset, and the
 * last body alone.  Prints the time of a sample of 65536 of 131075 bodies
 * (gather and copy to the host). */
static void test_view_sample(void **state)
{
    NEED_GPU();
    const long n = 131075;
    double *pos = malloc(sizeof(double) * 4 * n), *vel = malloc(sizeof(double) * 3 * n);
    double *hp = malloc(sizeof(double) * 4 * n), *hv = malloc(sizeof(double) * 3 * n);
    float *out = malloc(sizeof(float) * 5 * n);
    tu_random_bodies(n, 77, pos, vel);
    for (int prec = 0; prec < 2; prec++) {
        orr_kspec spec;
        orr_kspec_default(&spec, ORR_TARGET_GPU);
        spec.phys.precision = prec ? ORR_DOUBLE : ORR_FLOAT;
        orr_engine *g = NULL;
        orr_error err = {0};
        TU_OK(orr_engine_create(&g, ORR_BACKEND_CUDA, &spec, ORR_VARIANT_TILED, n, 0, NULL, 0,
                                &err), &err);
        TU_OK(orr_engine_set_state(g, pos, vel, &err), &err);
        TU_OK(orr_engine_get_state(g, hp, hv, &err), &err);
        const long cases[][3] = {{0, 1, n}, {5, 13, (n - 6) / 13 + 1}, {n - 1, 1, 1},
                                 {1, 2, 65536}};
        for (int c = 0; c < 4; c++) {
            const long first = cases[c][0], stride = cases[c][1], count = cases[c][2];
            double t0 = orr_now_s();
            TU_OK(orr_engine_sample(g, first, stride, count, out, &err), &err);
            const double ms = (orr_now_s() - t0) * 1e3;
            for (long k = 0; k < count; k++) {
                const long i = first + k * stride;
                for (int a = 0; a < 3; a++)
                    assert_true(out[3 * k + a] == (float)hp[4 * i + a]);
                const double *v = hv + 3 * i;
                assert_true(out[3 * count + k] ==
                            (float)sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
                assert_true(out[4 * count + k] == (float)hp[4 * i + 3]);
            }
            if (c == 3)
                print_message("view sample %s: %ld of %ld bodies in %.3f ms\n",
                              orr_precision_name(spec.phys.precision), count, n, ms);
        }
        /* beyond the bodies: refused, nothing read */
        assert_int_equal(orr_engine_sample(g, n - 1, 1, 2, out, &err), ORR_ERR_ARG);
        orr_engine_destroy(g);
    }
    free(pos);
    free(vel);
    free(hp);
    free(hv);
    free(out);
}

/* The pictures' deposit on the GPU (render.cu) against the host's
 * (orr_deposit_host, on the positions the engine holds): each pixel within
 * a relative 1e-11 (the kernel does the host's operations in double; only
 * the order of each pixel's atomic sum differs, about 1e-16 times the
 * square root of the bodies in it), empty pixels exactly 0,
 * for float and double bodies, every axis, a clump that makes the atomics
 * collide, and a 1 x 1 grid.  Prints the time of one 1024 x 1024 deposit
 * of 131072 bodies, the grid's copy to the host included. */
static void test_deposit(void **state)
{
    NEED_GPU();
    const long n = 131072;
    double *pos = malloc(sizeof(double) * 4 * n), *held = malloc(sizeof(double) * 4 * n);
    tu_random_bodies(n, 321, pos, NULL);
    for (long i = 0; i < n / 2; i++)   /* half of them in a clump a few pixels wide */
        for (int k = 0; k < 3; k++)
            pos[4 * i + k] = 0.3 + 0.01 * pos[4 * i + k];
    pos[3] = 0;
    pos[4] = NAN;
    const int sizes[][2] = {{1024, 1024}, {333, 200}, {1, 1}};
    for (int prec = 0; prec < 2; prec++) {
        orr_kspec spec;
        orr_kspec_default(&spec, ORR_TARGET_GPU);
        spec.phys.precision = prec ? ORR_DOUBLE : ORR_FLOAT;
        orr_engine *g = NULL;
        orr_error err = {0};
        TU_OK(orr_engine_create(&g, ORR_BACKEND_CUDA, &spec, ORR_VARIANT_TILED, n, 0, NULL, 0,
                                &err), &err);
        TU_OK(orr_engine_set_state(g, pos, NULL, &err), &err);
        TU_OK(orr_engine_get_state(g, held, NULL, &err), &err);
        for (int sz = 0; sz < 3; sz++)
            for (int axis = 0; axis < 3; axis++) {
                orr_deposit d = {sizes[sz][0], sizes[sz][1], axis == 2 ? 1 : 0,
                                 axis == 0 ? 1 : 2, {-0.9, 1.1, -1.0, 0.8}};
                const size_t npix = (size_t)d.width * (size_t)d.height;
                double *a = malloc(sizeof(double) * npix), *b = malloc(sizeof(double) * npix);
                for (size_t k = 0; k < npix; k++)
                    b[k] = NAN;
                TU_OK(orr_deposit_host(&d, n, held, a, &err), &err);
                double t0 = orr_now_s();
                TU_OK(orr_engine_deposit(g, &d, b, &err), &err);
                double ms = (orr_now_s() - t0) * 1e3;
                if (sz == 0 && axis == 0) {   /* again: the first call built the kernels */
                    t0 = orr_now_s();
                    TU_OK(orr_engine_deposit(g, &d, b, &err), &err);
                    ms = (orr_now_s() - t0) * 1e3;
                }
                double worst = 0, total = 0;
                for (size_t k = 0; k < npix; k++) {
                    if (a[k] == 0)
                        assert_true(b[k] == 0);
                    else
                        worst = fmax(worst, fabs(b[k] - a[k]) / a[k]);
                    assert_false(isnan(b[k]));
                    total += a[k];
                }
                print_message("deposit %s %dx%d axis %d: max rel err %.3e, %.3f ms\n",
                              orr_precision_name(spec.phys.precision), d.width, d.height, axis,
                              worst, ms);
                assert_true(total > 0);
                assert_true(worst <= 1e-11);
                free(a);
                free(b);
            }
        orr_engine_destroy(g);
    }
    free(pos);
    free(held);
}

static void test_force_laws(void **state)
{
    NEED_GPU();
    enum { N = 3001 };   /* not a multiple of any tile */
    orr_error err = {0};
    orr_law laws[6];
    const char *names[] = {"gravity", "gravity_spline", "coulomb", "lennard_jones", "yukawa"};
    for (int l = 0; l < 5; l++)
        TU_OK(orr_law_builtin(names[l], &laws[l], &err), &err);
    TU_OK(orr_law_init(&laws[5], "screened",
                       "real inv = orr_rsqrt_nz(r2), r = r2 * inv;\n"
                       "f = -(charge_i / mi) * charge_j * orr_exp(-r / lambda) * (1 + r / lambda) * inv * inv * inv;\n",
                       "real inv = orr_rsqrt_nz(r2);\nu = charge_i * charge_j * orr_exp(-r2 * inv / lambda) * inv;\n",
                       "test_gpu.c", &err), &err);
    TU_OK(orr_law_add_attr(&laws[5], "charge", &err), &err);
    TU_OK(orr_law_add_param(&laws[5], "lambda", 2.0, &err), &err);
    TU_OK(orr_law_add_param(&laws[5], "k", 0.75, &err), &err);
    TU_OK(orr_law_set_runtime(&laws[5], "k", &err), &err);
    snprintf(laws[5].scale, sizeof laws[5].scale, "k");
    double *pos = malloc(sizeof(double) * 4 * N), *attr = malloc(sizeof(double) * N),
           *acc = malloc(sizeof(double) * 3 * N), *ref = malloc(sizeof(double) * 3 * N);
    /* a jittered lattice (no two bodies closer than ~0.8: Lennard-Jones stays tame) */
    uint64_t seed = 2026;
    long side = (long)ceil(cbrt((double)N));
    for (long i = 0; i < N; i++) {
        long c[3] = {i % side, (i / side) % side, i / (side * side)};
        for (int k = 0; k < 3; k++)
            pos[4 * i + k] = (float)(1.1 * c[k] + 0.3 * (tu_rand(&seed) - 0.5));
        pos[4 * i + 3] = (float)(0.5 + tu_rand(&seed));
        attr[i] = (float)((i % 2 ? -1 : 1) * (0.5 + tu_rand(&seed)));
    }
    for (int l = 0; l < 6; l++)
        for (int p = 0; p < 2; p++) {
            orr_kspec gs, cs;
            orr_kspec_default(&gs, ORR_TARGET_GPU);
            orr_kspec_default(&cs, ORR_TARGET_CPU);
            memcpy(gs.phys.force, laws[l].name, sizeof gs.phys.force);
            memcpy(cs.phys.force, laws[l].name, sizeof cs.phys.force);
            gs.phys.law = cs.phys.law = &laws[l];
            gs.phys.precision = (orr_precision)p;
            cs.phys.precision = ORR_DOUBLE;
            gs.phys.softening = cs.phys.softening = 0.3;
            orr_engine *g = NULL, *c = NULL;
            TU_OK(orr_engine_create(&g, ORR_BACKEND_CUDA, &gs, ORR_VARIANT_TILED, N, 0, NULL, 0, &err), &err);
            TU_OK(orr_engine_create(&c, ORR_BACKEND_CPU, &cs, ORR_VARIANT_TILED, N, 0, NULL, 0, &err), &err);
            TU_OK(orr_engine_set_state(g, pos, NULL, &err), &err);
            TU_OK(orr_engine_set_state(c, pos, NULL, &err), &err);
            TU_OK(orr_engine_set_attr(g, attr, &err), &err);
            TU_OK(orr_engine_set_attr(c, attr, &err), &err);
            if (l == 5) {   /* a runtime param change reaches both */
                double k2[ORR_LAW_MAX_RUNTIME] = {1.25};
                orr_engine_set_runtime(g, k2);
                orr_engine_set_runtime(c, k2);
            }
            TU_OK(orr_engine_accel(g, acc, &err), &err);
            TU_OK(orr_engine_accel(c, ref, &err), &err);
            double e = orr_accel_err(acc, ref, N), ug, uc;
            TU_OK(orr_engine_potential(g, &ug, &err), &err);
            TU_OK(orr_engine_potential(c, &uc, &err), &err);
            double eu = fabs(ug - uc) / fabs(uc);
            print_message("%-14s %-6s max rel err %.2e, potential rel err %.2e\n", laws[l].name,
                          orr_precision_name((orr_precision)p), e, eu);
            assert_true(e <= (p ? 1e-12 : 1e-5));
            assert_true(eu <= (p ? 1e-12 : 1e-5));
            orr_engine_destroy(g);
            orr_engine_destroy(c);
        }
    /* a user copy of gravity: bitwise the built-in's accelerations */
    orr_law copy;
    TU_OK(orr_law_init(&copy, "mygravity", "f = mj * orr_rsqrt3_nz(r2);\n",
                       "u = -(mi * mj) * orr_rsqrt_nz(r2);\n", "test_gpu.c", &err), &err);
    snprintf(copy.scale, sizeof copy.scale, "G");
    for (int p = 0; p < 2; p++) {
        orr_kspec a, b;
        orr_kspec_default(&a, ORR_TARGET_GPU);
        orr_kspec_default(&b, ORR_TARGET_GPU);
        snprintf(b.phys.force, sizeof b.phys.force, "mygravity");
        b.phys.law = &copy;
        a.phys.precision = b.phys.precision = (orr_precision)p;
        orr_engine *ea = NULL, *eb = NULL;
        TU_OK(orr_engine_create(&ea, ORR_BACKEND_CUDA, &a, ORR_VARIANT_TILED, N, 0, NULL, 0, &err), &err);
        TU_OK(orr_engine_create(&eb, ORR_BACKEND_CUDA, &b, ORR_VARIANT_TILED, N, 0, NULL, 0, &err), &err);
        TU_OK(orr_engine_set_state(ea, pos, NULL, &err), &err);
        TU_OK(orr_engine_set_state(eb, pos, NULL, &err), &err);
        TU_OK(orr_engine_accel(ea, acc, &err), &err);
        TU_OK(orr_engine_accel(eb, ref, &err), &err);
        assert_memory_equal(acc, ref, sizeof(double) * 3 * N);
        orr_engine_destroy(ea);
        orr_engine_destroy(eb);
    }
    orr_law_free(&copy);
    /* the next tile prefetched through registers: the same bits (gravity,
     * coulomb with its charges, the user law with a runtime param) */
    for (int l = 0; l < 6; l += l == 0 ? 2 : 3)
        for (int p = 0; p < 2; p++) {
            orr_engine *e[2] = {NULL, NULL};
            double *out[2] = {acc, ref};
            for (int pf = 0; pf < 2; pf++) {
                orr_kspec s;
                orr_kspec_default(&s, ORR_TARGET_GPU);
                memcpy(s.phys.force, laws[l].name, sizeof s.phys.force);
                s.phys.law = &laws[l];
                s.phys.precision = (orr_precision)p;
                s.phys.softening = 0.3;
                s.launch.block = 128;
                s.launch.unroll = 16;
                s.launch.ipt = 2;
                s.launch.ranges = 3;
                s.launch.prefetch = pf;
                TU_OK(orr_engine_create(&e[pf], ORR_BACKEND_CUDA, &s, ORR_VARIANT_TILED, N, 0,
                                        NULL, 0, &err), &err);
                TU_OK(orr_engine_set_state(e[pf], pos, NULL, &err), &err);
                if (orr_engine_nattr(e[pf]))
                    TU_OK(orr_engine_set_attr(e[pf], attr, &err), &err);
                TU_OK(orr_engine_accel(e[pf], out[pf], &err), &err);
            }
            print_message("%-14s %-6s prefetch: the same bits\n", laws[l].name,
                          orr_precision_name((orr_precision)p));
            assert_memory_equal(acc, ref, sizeof(double) * 3 * N);
            orr_engine_destroy(e[0]);
            orr_engine_destroy(e[1]);
        }
    for (int l = 0; l < 6; l++)
        orr_law_free(&laws[l]);
    free(pos);
    free(attr);
    free(acc);
    free(ref);
}

/* Bodies per thread and prefetch in the tuner where a force pass is long:
 * at N = 1M a pass takes 0.55 s on an H100, so timing whole passes let the
 * 2 s budget see only the default; timed on whole waves of blocks (scaled)
 * the search reaches the ipt and prefetch candidates, every one verified. */
static int saw_ipt_prefetch;
static void count_trial(const orr_tune_trial *t, void *ctx)
{
    (void)ctx;
    if (t->ok && t->spec.launch.ipt > 1 && t->spec.launch.prefetch)
        saw_ipt_prefetch = 1;
    assert_true(!t->ok || (t->max_rel_err >= 0 && t->max_rel_err <= 1e-5));
}

static void test_tune_long_pass(void **state)
{
    NEED_GPU();
    orr_error err = {0};
    orr_kspec spec;
    orr_kspec_default(&spec, ORR_TARGET_GPU);
    orr_tune_options o;
    orr_tune_options_default(&o);
    o.retune = 1;
    o.report = count_trial;
    orr_tune_result r;
    saw_ipt_prefetch = 0;
    TU_OK(orr_tune(ORR_BACKEND_CUDA, &spec, 1048576, &o, &r, &err), &err);
    print_message("N=1048576: %d candidates, winner block %d unroll %d ipt %d prefetch %d, "
                  "%.3e interactions/s, %.1f s; note: %s\n", r.ntrials, r.best.launch.block,
                  r.best.launch.unroll, r.best.launch.ipt, r.best.launch.prefetch,
                  r.best_interactions_per_s, r.elapsed_s, r.note);
    assert_true(r.ntrials >= 6);
    assert_true(saw_ipt_prefetch);
    assert_non_null(strstr(r.note, "each candidate timed on whole waves of its blocks"));
}

/* The GPU's UUID as nvidia-smi -L spells it, the same on every call and
 * different for every device (what tells two ranks on one GPU apart from
 * two GPUs that CUDA_VISIBLE_DEVICES numbers alike); the spelling itself
 * needs no GPU. */
static void test_uuid(void **state)
{
    (void)state;
    const unsigned char bytes[16] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
                                     0xfe, 0xdc, 0xba, 0x98, 0x76, 0x54, 0x32, 0x10};
    char s[48];
    orr_cuda_uuid_format(bytes, s, sizeof s);
    assert_string_equal(s, "GPU-01234567-89ab-cdef-fedc-ba9876543210");
    NEED_GPU();
    orr_error err = {0};
    int count = 0;
    TU_OK(orr_cuda_device_count(&count, &err), &err);
    char first[48] = "";
    for (int d = 0; d < count; d++) {
        orr_gpu_info g, again;
        TU_OK(orr_cuda_device_info(d, &g, &err), &err);
        TU_OK(orr_cuda_device_info(d, &again, &err), &err);
        print_message("device %d: %s %s\n", d, g.name, g.uuid);
        assert_int_equal(strlen(g.uuid), 40);
        assert_memory_equal(g.uuid, "GPU-", 4);
        assert_string_equal(g.uuid, again.uuid);
        if (d == 0)
            snprintf(first, sizeof first, "%s", g.uuid);
        else
            assert_string_not_equal(g.uuid, first);
    }
}

int main(void)
{
    tu_private_cache();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accel_float),
        cmocka_unit_test(test_accel_double),
        cmocka_unit_test(test_double_rsqrt_range),
        cmocka_unit_test(test_potential_kick_drift),
        cmocka_unit_test(test_target_ranges),
        cmocka_unit_test(test_cache_second_start),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_sim_cuda_matches_cpu),
        cmocka_unit_test(test_force_laws),
        cmocka_unit_test(test_deposit),
        cmocka_unit_test(test_view_sample),
        cmocka_unit_test(test_hermite_launches),
        cmocka_unit_test(test_hermite_restored_steps),
        cmocka_unit_test(test_hermite_queueing),
        cmocka_unit_test(test_hermite_watch),
        cmocka_unit_test(test_bench_hermite),
        cmocka_unit_test(test_tune_long_pass),
        cmocka_unit_test(test_uuid),
        cmocka_unit_test(test_sim_fields),
        cmocka_unit_test(test_sim_frame),
    };
    const char *only = getenv("TEST_ONLY");   /* a test's name (or a * pattern) alone */
    if (only && *only)
        cmocka_set_test_filter(only);
    return cmocka_run_group_tests_name("gpu", tests, NULL, NULL);
}
