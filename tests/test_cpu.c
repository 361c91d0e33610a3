/* test_cpu: the CPU backend against a plain double loop written here, on
 * fresh random bodies, for several N (including ones not divisible by the
 * tile), both precisions; the potential, kick and drift; the kernel cache
 * on a second start; and the auto backend falling back to the CPU. */
#include "testutil.h"

#include <math.h>
#include <sys/stat.h>

#include "trial.h"
#include "engine.h"
#include "kcache.h"

static double plain_potential(long n, const double *pos, double eps, double G)
{
    double u = 0;
    for (long i = 0; i < n; i++)
        for (long j = i + 1; j < n; j++) {
            double r2 = eps * eps;
            for (int k = 0; k < 3; k++)
                r2 += (pos[4 * j + k] - pos[4 * i + k]) * (pos[4 * j + k] - pos[4 * i + k]);
            if (r2 > 0)
                u -= G * pos[4 * i + 3] * pos[4 * j + 3] / sqrt(r2);
        }
    return u;
}

static void check_accel(orr_precision prec, long n, int tile, double eps, double tol)
{
    orr_error err = {0};
    orr_kspec spec;
    orr_kspec_default(&spec, ORR_TARGET_CPU);
    spec.phys.precision = prec;
    spec.launch.block = tile;
    spec.phys.softening = eps;
    spec.phys.G = 1.5;
    double *pos = malloc(sizeof(double) * 4 * n), *acc = malloc(sizeof(double) * 3 * n),
           *ref = malloc(sizeof(double) * 3 * n);
    tu_random_bodies(n, 1000 + (uint64_t)n + (uint64_t)tile, pos, NULL);
    tu_plain_accel(n, pos, eps, spec.phys.G, ref);
    orr_engine *e = NULL;
    TU_OK(orr_engine_create(&e, ORR_BACKEND_CPU, &spec, ORR_VARIANT_TILED, n, 0, NULL, 0, &err), &err);
    TU_OK(orr_engine_set_state(e, pos, NULL, &err), &err);
    TU_OK(orr_engine_accel(e, acc, &err), &err);
    double rel = orr_max_rel_err(acc, ref, n);
    print_message("cpu %s n=%ld tile=%d eps=%g: max rel err %.3e (tolerance %.0e)\n",
                  orr_precision_name(prec), n, tile, eps, rel, tol);
    assert_true(rel <= tol);
    /* the sampled path gives the same numbers as the full one */
    long idx[3] = {n - 1, 0, n / 2};
    double samp[9];
    TU_OK(orr_engine_accel_sample(e, 3, idx, samp, &err), &err);
    for (int k = 0; k < 3; k++)
        for (int d = 0; d < 3; d++)
            assert_true(samp[3 * k + d] == acc[3 * idx[k] + d]);
    orr_engine_destroy(e);
    free(pos);
    free(acc);
    free(ref);
}

static void test_accel_float(void **state)
{
    long ns[] = {1, 7, 1000, 1500, 3001};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        check_accel(ORR_FLOAT, ns[k], 1024, 0.01, 1e-5);
    check_accel(ORR_FLOAT, 2500, 64, 0.05, 1e-5);
}

static void test_accel_double(void **state)
{
    long ns[] = {2, 999, 1500, 3001};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        check_accel(ORR_DOUBLE, ns[k], 1024, 0.01, 1e-12);
    check_accel(ORR_DOUBLE, 2500, 96, 0.05, 1e-12);
}

static void test_unsoftened(void **state)
{
    /* eps = 0: the self-pair must give 0, not NaN */
    check_accel(ORR_DOUBLE, 300, 1024, 0.0, 1e-12);
    check_accel(ORR_FLOAT, 300, 128, 0.0, 1e-5);
}

static void test_potential_kick_drift(void **state)
{
    orr_error err = {0};
    const long n = 777;
    double *pos = malloc(sizeof(double) * 4 * n), *vel = malloc(sizeof(double) * 3 * n),
           *acc = malloc(sizeof(double) * 3 * n), *pos2 = malloc(sizeof(double) * 4 * n),
           *vel2 = malloc(sizeof(double) * 3 * n);
    tu_random_bodies(n, 77, pos, vel);
    for (int prec = 0; prec < 2; prec++) {
        orr_kspec spec;
        orr_kspec_default(&spec, ORR_TARGET_CPU);
        spec.phys.precision = prec;
        spec.phys.softening = 0.02;
        orr_engine *e = NULL;
        TU_OK(orr_engine_create(&e, ORR_BACKEND_CPU, &spec, ORR_VARIANT_TILED, n, 0, NULL, 0, &err),
              &err);
        TU_OK(orr_engine_set_state(e, pos, vel, &err), &err);
        double u = 0, uref = plain_potential(n, pos, 0.02, 1.0);
        TU_OK(orr_engine_potential(e, &u, &err), &err);
        double tol = prec == ORR_DOUBLE ? 1e-12 : 1e-6;
        print_message("cpu %s potential %.15g vs %.15g\n", orr_precision_name(prec), u, uref);
        assert_true(fabs(u - uref) <= tol * fabs(uref));
        /* kick then drift: x' = x + (v + a dt) dt */
        const double dt = 0.125;
        TU_OK(orr_engine_accel(e, acc, &err), &err);
        TU_OK(orr_engine_kick(e, dt, 1.0, &err), &err);
        TU_OK(orr_engine_drift(e, dt, &err), &err);
        TU_OK(orr_engine_get_state(e, pos2, vel2, &err), &err);
        double tol2 = prec == ORR_DOUBLE ? 1e-14 : 1e-6;
        for (long i = 0; i < n; i++) {
            for (int k = 0; k < 3; k++) {
                double v = vel[3 * i + k] + acc[3 * i + k] * dt;
                assert_true(fabs(vel2[3 * i + k] - v) <= tol2 * (1 + fabs(v)));
                double x = pos[4 * i + k] + v * dt;
                assert_true(fabs(pos2[4 * i + k] - x) <= tol2 * (1 + fabs(x)));
            }
            assert_true(pos2[4 * i + 3] == (prec == ORR_DOUBLE ? pos[4 * i + 3] : (float)pos[4 * i + 3]));
        }
        orr_engine_destroy(e);
    }
    free(pos);
    free(vel);
    free(acc);
    free(pos2);
    free(vel2);
}

/* The potential is the same to the last bit whatever the number of threads
 * (its rows are summed in fixed parts, then in order), and accelerations too. */
static void test_thread_count_bitwise(void **state)
{
    enum { N = 3001 };
    orr_error err = {0};
    double *pos = malloc(sizeof(double) * 4 * N), *a[2], u[2];
    tu_random_bodies(N, 31337, pos, NULL);
    static const int threads[2] = {1, 7};
    for (int p = 0; p < 2; p++) {
        for (int k = 0; k < 2; k++) {
            orr_kspec spec;
            orr_kspec_default(&spec, ORR_TARGET_CPU);
            spec.phys.precision = (orr_precision)p;
            spec.launch.threads = threads[k];
            orr_engine *e = NULL;
            TU_OK(orr_engine_create(&e, ORR_BACKEND_CPU, &spec, ORR_VARIANT_TILED, N, 0, NULL, 0,
                                    &err), &err);
            TU_OK(orr_engine_set_state(e, pos, NULL, &err), &err);
            a[k] = malloc(sizeof(double) * 3 * N);
            TU_OK(orr_engine_accel(e, a[k], &err), &err);
            TU_OK(orr_engine_potential(e, &u[k], &err), &err);
            orr_engine_destroy(e);
        }
        print_message("%s: potential %.17g with 1 thread, %.17g with 7\n",
                      orr_precision_name((orr_precision)p), u[0], u[1]);
        assert_true(u[0] == u[1]);
        assert_memory_equal(a[0], a[1], sizeof(double) * 3 * N);
        free(a[0]);
        free(a[1]);
    }
    free(pos);
}

static void test_target_ranges(void **state)
{
    orr_kspec spec;
    orr_kspec_default(&spec, ORR_TARGET_CPU);
    spec.launch.block = 128;   /* several tiles per body */
    for (int p = 0; p < 2; p++) {
        spec.phys.precision = p;
        tu_check_target_ranges(ORR_BACKEND_CPU, &spec);
    }
}

static void test_second_start_cached(void **state)
{
    orr_error err = {0};
    orr_kspec spec;
    orr_kspec_default(&spec, ORR_TARGET_CPU);
    spec.phys.softening = 0.0123;   /* a configuration no other test compiles */
    orr_engine *a = NULL, *b = NULL;
    TU_OK(orr_engine_create(&a, ORR_BACKEND_CPU, &spec, ORR_VARIANT_TILED, 10, 0, NULL, 0, &err), &err);
    assert_int_equal(orr_engine_build_info(a)->cached, 0);
    assert_true(orr_engine_build_info(a)->compile_s > 0);
    TU_OK(orr_engine_create(&b, ORR_BACKEND_CPU, &spec, ORR_VARIANT_TILED, 10, 0, NULL, 0, &err), &err);
    assert_int_equal(orr_engine_build_info(b)->cached, 1);
    assert_true(orr_engine_build_info(b)->compile_s == 0);
    assert_string_equal(orr_engine_build_info(a)->key, orr_engine_build_info(b)->key);
    orr_engine_destroy(b);

    /* corrupt the entry: the next start rebuilds it and says so */
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.so", tu_private_cache(), orr_engine_build_info(a)->key);
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 200, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 200, SEEK_SET);
    fputc(c ^ 0x5a, f);
    fclose(f);
    TU_OK(orr_engine_create(&b, ORR_BACKEND_CPU, &spec, ORR_VARIANT_TILED, 10, 0, NULL, 0, &err), &err);
    assert_int_equal(orr_engine_build_info(b)->cached, 0);
    assert_non_null(strstr(orr_engine_build_info(b)->note, "corrupt"));
    orr_engine_destroy(b);
    TU_OK(orr_engine_create(&b, ORR_BACKEND_CPU, &spec, ORR_VARIANT_TILED, 10, 0, NULL, 0, &err), &err);
    assert_int_equal(orr_engine_build_info(b)->cached, 1);
    orr_engine_destroy(b);
    orr_engine_destroy(a);
}

static void test_auto_falls_back(void **state)
{
    orr_error err = {0};
    if (orr_cuda_usable(0, &err) == ORR_OK)
        skip();   /* a GPU is here: auto picks it, nothing to check */
    orr_error_clear(&err);
    char notice[512];
    orr_engine *e = NULL;
    TU_OK(orr_engine_create(&e, ORR_BACKEND_AUTO, NULL, ORR_VARIANT_TILED, 16, 0, notice,
                            sizeof notice, &err), &err);
    assert_string_equal(orr_engine_backend_name(e), "cpu");
    assert_non_null(strstr(notice, "no usable GPU"));
    assert_non_null(strstr(notice, "using the CPU backend"));
    orr_engine_destroy(e);
    /* asking for CUDA explicitly is an error, not a fallback */
    assert_int_not_equal(orr_engine_create(&e, ORR_BACKEND_CUDA, NULL, ORR_VARIANT_TILED, 16, 0,
                                           NULL, 0, &err), ORR_OK);
    assert_null(e);
    orr_error_clear(&err);
}

static void test_bad_spec(void **state)
{
    orr_error err = {0};
    orr_kspec spec;
    orr_kspec_default(&spec, ORR_TARGET_CPU);
    spec.phys.softening = -1;
    orr_engine *e = NULL;
    assert_int_equal(orr_engine_create(&e, ORR_BACKEND_CPU, &spec, ORR_VARIANT_TILED, 10, 0, NULL,
                                       0, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "invalid softening -1"));
    orr_kspec_default(&spec, ORR_TARGET_CPU);
    snprintf(spec.phys.force, sizeof spec.phys.force, "nosuchlaw");
    assert_int_equal(orr_engine_create(&e, ORR_BACKEND_CPU, &spec, ORR_VARIANT_TILED, 10, 0, NULL,
                                       0, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "unknown force law 'nosuchlaw' (built in: coulomb, gravity, "
                                 "gravity_spline, lennard_jones, yukawa)");
    assert_int_equal(orr_engine_create(&e, ORR_BACKEND_CPU, NULL, ORR_VARIANT_TILED, 0, 0, NULL,
                                       0, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "invalid body count 0"));
    orr_error_clear(&err);
}

int main(void)
{
    tu_private_cache();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accel_float),
        cmocka_unit_test(test_accel_double),
        cmocka_unit_test(test_unsoftened),
        cmocka_unit_test(test_potential_kick_drift),
        cmocka_unit_test(test_thread_count_bitwise),
        cmocka_unit_test(test_target_ranges),
        cmocka_unit_test(test_second_start_cached),
        cmocka_unit_test(test_auto_falls_back),
        cmocka_unit_test(test_bad_spec),
    };
    return cmocka_run_group_tests_name("cpu", tests, NULL, NULL);
}
