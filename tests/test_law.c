/* test_law: force laws on the CPU backend: the built-in laws' metadata,
 * force = -grad potential for every built-in law (central differences, in
 * double), the analytic two-body Coulomb force (also across a periodic
 * boundary), the Lennard-Jones zero at 2^(1/6) sigma and its cut-off, Yukawa
 * tending to gravity, a user copy of gravity giving bitwise the built-in's
 * accelerations, runtime vs baked params and the kernel cache, compile
 * errors naming the snippet's origin and line (host compiler and NVRTC), and
 * the errors for bad names and values. */
#include "testutil.h"

#include "trial.h"
#include "engine.h"
#include "kcache.h"
#include "kfamily.h"
#include "law.h"
#include "lawcheck.h"
#include "expr.h"
#include "util.h"
#include "rtc.h"
#include "sim.h"

/* Bodies on a jittered 3-D lattice of spacing 1.1 (so no two are closer
 * than about 0.8), masses in [0.5, 1.5), attributes of both signs with
 * magnitudes in [0.5, 1.5) (attr[a * n + i]); float-representable. */
static void lattice_bodies(long n, uint64_t seed, double *pos, double *attr, int nattr)
{
    long side = (long)ceil(cbrt((double)n));
    for (long i = 0; i < n; i++) {
        long c[3] = {i % side, (i / side) % side, i / (side * side)};
        for (int k = 0; k < 3; k++)
            pos[4 * i + k] = (float)(1.1 * c[k] + 0.3 * (tu_rand(&seed) - 0.5));
        pos[4 * i + 3] = (float)(0.5 + tu_rand(&seed));
    }
    for (long k = 0; k < n * nattr; k++) {
        double v = 0.5 + tu_rand(&seed);
        attr[k] = (float)(tu_rand(&seed) < 0.5 ? -v : v);
    }
}

static orr_engine *cpu_engine(const orr_law *law, orr_precision p, double eps, long n,
                              const double *pos, const double *attr)
{
    orr_error err = {0};
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_CPU);
    snprintf(s.phys.force, sizeof s.phys.force, "%s", law->name);
    s.phys.law = law;
    s.phys.precision = p;
    s.phys.softening = eps;
    orr_engine *e = NULL;
    TU_OK(orr_engine_create(&e, ORR_BACKEND_CPU, &s, ORR_VARIANT_TILED, n, 0, NULL, 0, &err), &err);
    TU_OK(orr_engine_set_state(e, pos, NULL, &err), &err);
    if (law->nattrs)
        TU_OK(orr_engine_set_attr(e, attr, &err), &err);
    return e;
}

static void test_builtin_metadata(void **state)
{
    const char *const *names = orr_law_builtin_names();
    const char *want[] = {"coulomb", "gravity", "gravity_spline", "lennard_jones", "yukawa", NULL};
    for (int k = 0; want[k] || names[k]; k++) {
        assert_non_null(names[k]);
        assert_string_equal(names[k], want[k]);
    }
    orr_error err = {0};
    orr_law l;
    TU_OK(orr_law_builtin("lennard_jones", &l, &err), &err);
    assert_int_equal(l.nparams, 3);
    assert_string_equal(l.params[0].name, "epsilon");
    assert_string_equal(l.params[2].name, "cutoff");
    assert_true(l.params[2].value == 2.5);
    assert_int_equal(l.nattrs, 0);
    assert_string_equal(l.scale, "1");
    assert_true(orr_law_has_potential(&l));
    orr_law_free(&l);
    TU_OK(orr_law_builtin("coulomb", &l, &err), &err);
    assert_int_equal(l.nattrs, 1);
    assert_string_equal(l.attrs[0], "charge");
    assert_string_equal(l.scale, "k");
    orr_law_free(&l);
    TU_OK(orr_law_builtin("gravity", &l, &err), &err);
    assert_int_equal(l.nparams, 0);
    assert_string_equal(l.scale, "G");
    assert_int_equal(l.finite_at_zero, 1);
    assert_int_equal(l.pair_line, 14);
    orr_law_free(&l);
    assert_int_equal(orr_law_builtin("nope", &l, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "unknown force law 'nope' (built in: coulomb, gravity, "
                                 "gravity_spline, lennard_jones, yukawa)");
    /* ORRERY_KERNELS_DIR without the law's file: the read error, not
     * "unknown force law" */
    char dir[256];
    tu_temp_dir(dir, sizeof dir, "orrery-law-kdir");
    tu_remove_at_exit(dir);
    setenv("ORRERY_KERNELS_DIR", dir, 1);
    assert_int_equal(orr_law_builtin("gravity", &l, &err), ORR_ERR_IO);
    char expect[600];
    snprintf(expect, sizeof expect, "cannot open %s/forces/gravity.h", dir);
    assert_non_null(strstr(err.msg, expect));
    assert_null(strstr(err.msg, "unknown force law"));
    assert_int_equal(orr_law_builtin("nope", &l, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "unknown force law 'nope'"));
    unsetenv("ORRERY_KERNELS_DIR");
    orr_error_clear(&err);
}

/* m_i a_i = -dU/dx_i by central differences, every body and axis, in double. */
static void gradient_check(const char *name, double eps, const char *param, double value)
{
    enum { N = 27 };
    orr_error err = {0};
    orr_law law;
    TU_OK(orr_law_builtin(name, &law, &err), &err);
    if (param)
        TU_OK(orr_law_set_param(&law, param, value, &err), &err);
    double pos[4 * N], attr[ORR_LAW_MAX_ATTRS * N], acc[3 * N];
    lattice_bodies(N, 0x5eed + (uint64_t)strlen(name), pos, attr, law.nattrs);
    orr_engine *e = cpu_engine(&law, ORR_DOUBLE, eps, N, pos, attr);
    TU_OK(orr_engine_accel(e, acc, &err), &err);
    double scale = 0, worst = 0;
    for (long i = 0; i < N; i++)
        for (int k = 0; k < 3; k++)
            scale = fmax(scale, fabs(pos[4 * i + 3] * acc[3 * i + k]));
    const double h = 1e-5;
    for (long i = 0; i < N; i++)
        for (int k = 0; k < 3; k++) {
            double x0 = pos[4 * i + k], up, dn;
            pos[4 * i + k] = x0 + h;
            TU_OK(orr_engine_set_state(e, pos, NULL, &err), &err);
            TU_OK(orr_engine_potential(e, &up, &err), &err);
            pos[4 * i + k] = x0 - h;
            TU_OK(orr_engine_set_state(e, pos, NULL, &err), &err);
            TU_OK(orr_engine_potential(e, &dn, &err), &err);
            pos[4 * i + k] = x0;
            double force = -(up - dn) / (2 * h);
            worst = fmax(worst, fabs(force - pos[4 * i + 3] * acc[3 * i + k]) / scale);
        }
    print_message("%-14s max |m a + dU/dx| / max |m a| = %.2e (max |m a| = %.3g)\n", name, worst,
                  scale);
    assert_true(scale > 0);
    assert_true(worst < 1e-7);
    orr_engine_destroy(e);
    orr_law_free(&law);
}

static void test_gradient_builtins(void **state)
{
    gradient_check("gravity", 0.3, NULL, 0);
    gradient_check("gravity", 0.0, NULL, 0);
    gradient_check("gravity_spline", 0.6, NULL, 0);   /* h = 1.68: pairs in both spline ranges */
    gradient_check("coulomb", 0.2, NULL, 0);
    gradient_check("lennard_jones", 0.0, NULL, 0);
    gradient_check("lennard_jones", 0.0, "sigma", 0.9);
    gradient_check("yukawa", 0.1, "lambda", 0.7);
}

/* Two charges: the exact Coulomb acceleration, and the same across a
 * periodic boundary (minimum image). */
static void test_coulomb_two_body(void **state)
{
    orr_error err = {0};
    orr_law law;
    TU_OK(orr_law_builtin("coulomb", &law, &err), &err);
    TU_OK(orr_law_set_param(&law, "k", 8.5, &err), &err);
    const double q1 = 2, q2 = -3, m1 = 1.5;
    double pos[8] = {0.25, -0.5, 1.0, m1, 1.75, 1.5, -1.0, 0.5}, attr[2] = {q1, q2}, acc[6];
    orr_engine *e = cpu_engine(&law, ORR_DOUBLE, 0.0, 2, pos, attr);
    TU_OK(orr_engine_accel(e, acc, &err), &err);
    double d[3] = {1.5, 2.0, -2.0}, r = sqrt(1.5 * 1.5 + 4 + 4);
    for (int k = 0; k < 3; k++) {
        double want = -8.5 * q1 * q2 / m1 * d[k] / (r * r * r);   /* opposite charges attract */
        assert_true(fabs(acc[k] - want) <= 1e-14 * fabs(want));
        assert_true(acc[k] * d[k] > 0);
    }
    double u;
    TU_OK(orr_engine_potential(e, &u, &err), &err);
    assert_true(fabs(u - 8.5 * q1 * q2 / r) <= 1e-14 * fabs(u));
    orr_engine_destroy(e);

    /* box of 10: bodies at x = 0.5 and 9.5 are 1 apart through the boundary */
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_CPU);
    snprintf(s.phys.force, sizeof s.phys.force, "coulomb");
    s.phys.law = &law;
    s.phys.precision = ORR_DOUBLE;
    s.phys.softening = 0;
    s.phys.box[0] = s.phys.box[1] = s.phys.box[2] = 10;
    double bp[8] = {0.5, 5, 5, 1, 9.5, 5, 5, 1}, like[2] = {1, 1};
    TU_OK(orr_engine_create(&e, ORR_BACKEND_CPU, &s, ORR_VARIANT_TILED, 2, 0, NULL, 0, &err), &err);
    TU_OK(orr_engine_set_state(e, bp, NULL, &err), &err);
    TU_OK(orr_engine_set_attr(e, like, &err), &err);
    TU_OK(orr_engine_accel(e, acc, &err), &err);
    /* like charges repel: body 1 is pushed from its image neighbour at x = -0.5 to +x */
    assert_true(fabs(acc[0] - 8.5) <= 1e-14 * 8.5);
    assert_true(fabs(acc[3] + 8.5) <= 1e-14 * 8.5);
    assert_true(acc[1] == 0 && acc[2] == 0);
    orr_engine_destroy(e);
    orr_law_free(&law);
}

/* Lennard-Jones: zero force at 2^(1/6) sigma, repulsive inside, attractive
 * outside, nothing beyond the cut-off; the potential is shifted to 0 there. */
static void test_lennard_jones(void **state)
{
    orr_error err = {0};
    orr_law law;
    TU_OK(orr_law_builtin("lennard_jones", &law, &err), &err);
    TU_OK(orr_law_set_param(&law, "sigma", 1.3, &err), &err);
    TU_OK(orr_law_set_param(&law, "epsilon", 0.7, &err), &err);
    const double r0 = pow(2.0, 1.0 / 6.0) * 1.3, typical = 24 * 0.7 / 1.3;
    const double at[] = {r0, 0.95 * r0, 1.2 * r0, 2.5 * 1.3 * 1.001};
    for (int c = 0; c < 4; c++) {
        double pos[8] = {1, 2, 3, 1, 1 + at[c], 2, 3, 1}, acc[6], u;
        orr_engine *e = cpu_engine(&law, ORR_DOUBLE, 0.0, 2, pos, NULL);
        TU_OK(orr_engine_accel(e, acc, &err), &err);
        TU_OK(orr_engine_potential(e, &u, &err), &err);
        print_message("r = %.6f: a_x = %.3e, U = %.6f\n", at[c], acc[0], u);
        if (c == 0) {
            assert_true(fabs(acc[0]) < 1e-13 * typical);
            double sc6 = pow(2.5, -6), want = 4 * 0.7 * (0.25 - 0.5) - 4 * 0.7 * (sc6 * sc6 - sc6);
            assert_true(fabs(u - want) < 1e-14);   /* well depth, shifted */
        } else if (c == 1) {
            assert_true(acc[0] < -1e-3 * typical);   /* pushed away from j (+x) */
        } else if (c == 2) {
            assert_true(acc[0] > 1e-3 * typical);
        } else {
            assert_true(acc[0] == 0 && u == 0);
        }
        assert_true(acc[0] == -acc[3]);
        orr_engine_destroy(e);
    }
    orr_law_free(&law);
}

/* Yukawa with a huge screening length is gravity. */
static void test_yukawa_to_gravity(void **state)
{
    enum { N = 200 };
    orr_error err = {0};
    orr_law y, g;
    TU_OK(orr_law_builtin("yukawa", &y, &err), &err);
    TU_OK(orr_law_builtin("gravity", &g, &err), &err);
    double pos[4 * N], a1[3 * N], a2[3 * N], worst[3];
    tu_random_bodies(N, 77, pos, NULL);
    const double lambdas[] = {1.0, 1e3, 1e9};
    orr_engine *eg = cpu_engine(&g, ORR_DOUBLE, 0.05, N, pos, NULL);
    TU_OK(orr_engine_accel(eg, a2, &err), &err);
    for (int c = 0; c < 3; c++) {
        TU_OK(orr_law_set_param(&y, "lambda", lambdas[c], &err), &err);
        orr_engine *ey = cpu_engine(&y, ORR_DOUBLE, 0.05, N, pos, NULL);
        TU_OK(orr_engine_accel(ey, a1, &err), &err);
        orr_engine_destroy(ey);
        worst[c] = 0;
        for (long i = 0; i < N; i++) {
            double d = 0, m = 0;
            for (int k = 0; k < 3; k++) {
                d += (a1[3 * i + k] - a2[3 * i + k]) * (a1[3 * i + k] - a2[3 * i + k]);
                m += a2[3 * i + k] * a2[3 * i + k];
            }
            worst[c] = fmax(worst[c], sqrt(d / m));
        }
        print_message("lambda %g: max rel difference from gravity %.2e\n", lambdas[c], worst[c]);
    }
    assert_true(worst[0] > 1e-2);
    assert_true(worst[1] < 1e-5 && worst[1] < worst[0]);
    assert_true(worst[2] < 1e-10);
    orr_engine_destroy(eg);
    orr_law_free(&y);
    orr_law_free(&g);
}

/* Every built-in law on the CPU in float (compiled with -ffast-math) agrees
 * with double within 1e-5 (orr_accel_err), zero-separation guard included. */
static void test_float_vs_double(void **state)
{
    enum { N = 343 };
    orr_error err = {0};
    const char *const *names = orr_law_builtin_names();
    double pos[4 * N], attr[ORR_LAW_MAX_ATTRS * N], af[3 * N], ad[3 * N];
    for (int l = 0; names[l]; l++) {
        orr_law law;
        TU_OK(orr_law_builtin(names[l], &law, &err), &err);
        lattice_bodies(N, 31 + (uint64_t)l, pos, attr, law.nattrs);
        for (int eps = 0; eps < 2; eps++) {
            orr_engine *f = cpu_engine(&law, ORR_FLOAT, eps ? 0.1 : 0.0, N, pos, attr);
            orr_engine *d = cpu_engine(&law, ORR_DOUBLE, eps ? 0.1 : 0.0, N, pos, attr);
            TU_OK(orr_engine_accel(f, af, &err), &err);
            TU_OK(orr_engine_accel(d, ad, &err), &err);
            double e = orr_accel_err(af, ad, N);
            print_message("%-14s eps %.1f: float vs double %.2e\n", names[l], eps ? 0.1 : 0.0, e);
            assert_true(e < 1e-5);
            orr_engine_destroy(f);
            orr_engine_destroy(d);
        }
        orr_law_free(&law);
    }
}

static const char grav_pair[] = "f = mj * orr_rsqrt3_nz(r2);\n";
static const char grav_pot[] = "u = -(mi * mj) * orr_rsqrt_nz(r2);\n";

/* Asserts that `user` gives bitwise the built-in gravity's accelerations
 * and potential on the CPU, in float and double. */
static void assert_gravity_bitwise(const orr_law *user)
{
    enum { N = 777 };
    orr_error err = {0};
    orr_law g;
    TU_OK(orr_law_builtin("gravity", &g, &err), &err);
    static double pos[4 * N], a1[3 * N], a2[3 * N];
    tu_random_bodies(N, 4242, pos, NULL);
    for (int p = 0; p < 2; p++) {
        orr_engine *eu = cpu_engine(user, (orr_precision)p, 0.02, N, pos, NULL);
        orr_engine *eg = cpu_engine(&g, (orr_precision)p, 0.02, N, pos, NULL);
        TU_OK(orr_engine_accel(eu, a1, &err), &err);
        TU_OK(orr_engine_accel(eg, a2, &err), &err);
        assert_memory_equal(a1, a2, sizeof a1);
        double u1, u2;
        TU_OK(orr_engine_potential(eu, &u1, &err), &err);
        TU_OK(orr_engine_potential(eg, &u2, &err), &err);
        assert_true(u1 == u2);
        orr_engine_destroy(eu);
        orr_engine_destroy(eg);
    }
    orr_law_free(&g);
}

/* Compiles the law's GPU source with NVRTC (no GPU needed), float; returns
 * its status (the message in err), or -1 when NVRTC is not there. */
static int nvrtc_law(const orr_law *law, orr_error *err)
{
    orr_error rerr = {0};
    int major, minor;
    if (orr_rtc_version(&major, &minor, &rerr) != ORR_OK) {
        print_message("NVRTC unavailable (%s): GPU half skipped\n", rerr.msg);
        orr_error_clear(&rerr);
        return -1;
    }
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_GPU);
    snprintf(s.phys.force, sizeof s.phys.force, "%s", law->name);
    s.phys.law = law;
    char *src = NULL;
    orr_status st = orr_kspec_source(&s, &orr_family_direct, ORR_TARGET_GPU, &src, err);
    if (st)
        return st;
    const char *opts[ORR_KSPEC_MAX_OPTS];
    orr_kexprs exprs;
    orr_kexprs_make(&exprs, &orr_family_direct, s.phys.precision);
    int nopts = orr_kspec_nvrtc_options(&s, opts);
    orr_rtc_result r = {0};
    st = orr_rtc_compile(src, "orrery_gen.cu", "sm_90", opts, nopts, exprs.expr, exprs.count,
                         ORR_EMIT_PTX, &r, err);
    orr_rtc_result_free(&r);
    free(src);
    return st;
}

/* A user law with gravity's code (and, like gravity.h, finite_at_zero) gives
 * bitwise the built-in's accelerations, in float and double. */
static void test_user_copy_bitwise(void **state)
{
    orr_error err = {0};
    orr_law user;
    TU_OK(orr_law_init(&user, "mygravity", grav_pair, grav_pot, "copy.lua:3", &err), &err);
    snprintf(user.scale, sizeof user.scale, "G");
    user.finite_at_zero = 1;
    assert_gravity_bitwise(&user);
    orr_law_free(&user);
}

/* Issue 25, item 7: the origin (a script's path) goes into the generated
 * source escaped: a directory named odd*, quotes, backslashes, a newline
 * compile on both compilers, and a compiler's message names the path as
 * it is (the newline as \n, on one line). */
static void test_origin_escaped(void **state)
{
    static const char *const origins[] = {
        "odd*/law.lua:2", "q\"uo\\te/law.lua:3", "new\nline/*x*/law.lua:4", "tab\there/a\\:5",
        "[string \"return orrery.force{ pair = \\\"f = 0;\\\" }\"]:1", NULL};
    orr_error err = {0};
    for (int k = 0; origins[k]; k++) {
        orr_law user;
        TU_OK(orr_law_init(&user, "escaped", grav_pair, grav_pot, origins[k], &err), &err);
        snprintf(user.scale, sizeof user.scale, "G");
        user.finite_at_zero = 1;
        assert_gravity_bitwise(&user);
        int st = nvrtc_law(&user, &err);
        if (st > 0)
            print_message("NVRTC: %s\n", err.msg);
        assert_true(st <= 0);
        orr_law_free(&user);
    }
    /* a compile error names the origin as written, on one line */
    orr_law bad;
    TU_OK(orr_law_init(&bad, "escaped", "real x = r2;\nf = x *;\n", "", "odd*/my \"law\\\n.lua:7",
                       &err), &err);
    orr_engine *e = NULL;
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_CPU);
    snprintf(s.phys.force, sizeof s.phys.force, "escaped");
    s.phys.law = &bad;
    assert_int_equal(orr_engine_create(&e, ORR_BACKEND_CPU, &s, ORR_VARIANT_TILED, 10, 0, NULL, 0,
                                       &err), ORR_ERR_COMPILE);
    print_message("host cc: %s\n", err.msg);
    const char *cc = strstr(err.msg, "host C compiler failed on orrery_gen.c: ");
    assert_non_null(cc);
    assert_non_null(strstr(cc, "orrery_gen.c: odd*/my \"law\\\\n.lua:7 (force 'escaped', pair):2:"));
    assert_null(strchr(cc, '\n'));
    if (nvrtc_law(&bad, &err) >= 0) {
        print_message("NVRTC: %s\n", err.msg);
        assert_non_null(strstr(err.msg, "odd*/my \"law\\\\n.lua:7 (force 'escaped', pair)(2): "
                                        "error"));
    }
    orr_error_clear(&err);
    orr_law_free(&bad);
}

/* Issue 25, item 8: params named after macros that the host compiler
 * (GNU C: linux, unix), math.h (M_PI, NAN, INFINITY, HUGE_VAL, isnan) or
 * CUDA's headers (NULL, assert) define are the law's own on both
 * compilers; attributes too. */
static void test_macro_param_names(void **state)
{
    static const char *const names[] = {"linux", "unix", "M_PI", "NAN", "INFINITY", "HUGE_VAL",
                                        "isnan", "NULL", "assert", "FP_NAN", "M_E", NULL};
    orr_error err = {0};
    orr_law user;
    TU_OK(orr_law_init(&user, "macros", grav_pair, grav_pot, "macros.lua:1", &err), &err);
    user.finite_at_zero = 1;
    snprintf(user.scale, sizeof user.scale, "G * (0");   /* the values add up to 1: gravity */
    for (int k = 0; names[k]; k++) {
        snprintf(user.scale + strlen(user.scale), sizeof user.scale - strlen(user.scale), " + %s",
                 names[k]);
        TU_OK(orr_law_add_param(&user, names[k], k == 0 ? 1 : 0, &err), &err);
    }
    snprintf(user.scale + strlen(user.scale), sizeof user.scale - strlen(user.scale), ")");
    TU_OK(orr_law_set_runtime(&user, "NAN", &err), &err);
    TU_OK(orr_law_validate(&user, &err), &err);
    assert_gravity_bitwise(&user);
    int st = nvrtc_law(&user, &err);
    if (st > 0)
        print_message("NVRTC: %s\n", err.msg);
    assert_true(st <= 0);
    orr_law_free(&user);
    /* an attribute's NAME_i and NAME_j are undefined alike */
    TU_OK(orr_law_init(&user, "attrs", grav_pair, grav_pot, "macros.lua:9", &err), &err);
    TU_OK(orr_law_add_attr(&user, "x", &err), &err);
    orr_buf b = {0};
    assert_int_equal(orr_law_emit(&user, &b), 0);
    assert_non_null(strstr(b.data, "#undef x_i\n#undef x_j\n"));
    orr_buf_free(&b);
    orr_law_free(&user);
    /* names no compiler takes, refused where the law is defined */
    TU_OK(orr_law_init(&user, "mine", "f = 0;", "", "x.lua:1", &err), &err);
    static const char *const refused[] = {"and", "not", "defined", "nullptr", "typeof", "g",
                                          "_Bool", "_Pragma", "constexpr", NULL};
    for (int k = 0; refused[k]; k++) {
        assert_int_equal(orr_law_add_param(&user, refused[k], 1, &err), ORR_ERR_ARG);
        assert_non_null(strstr(err.msg, refused[k][0] == '_' ? "are reserved" : "already in scope"));
    }
    orr_law_free(&user);
    orr_error_clear(&err);
}

/* A runtime param changes the forces without a new kernel; a baked one
 * builds (and caches) a new kernel. */
static void test_runtime_and_baked_params(void **state)
{
    enum { N = 64 };
    orr_error err = {0};
    orr_law law;
    TU_OK(orr_law_init(&law, "screened",
                       "real inv = orr_rsqrt_nz(r2), r = r2 * inv;\n"
                       "f = -(charge_i / mi) * charge_j * orr_exp(-r / lambda) * (1 + r / lambda) * inv * inv * inv;\n",
                       "real inv = orr_rsqrt_nz(r2);\nu = charge_i * charge_j * orr_exp(-r2 * inv / lambda) * inv;\n",
                       "screened.lua:1", &err), &err);
    TU_OK(orr_law_add_attr(&law, "charge", &err), &err);
    TU_OK(orr_law_add_param(&law, "lambda", 0.5, &err), &err);
    TU_OK(orr_law_add_param(&law, "k", 1.0, &err), &err);
    TU_OK(orr_law_set_runtime(&law, "k", &err), &err);
    snprintf(law.scale, sizeof law.scale, "k");
    orr_sim_config c;
    orr_sim_config_default(&c);
    c.n = N;
    c.law = &law;
    c.backend = ORR_BACKEND_CPU;
    c.precision = ORR_DOUBLE;
    orr_sim *s = NULL;
    TU_OK(orr_sim_create(&s, &c, NULL, 0, &err), &err);
    double *pos, *q;
    TU_OK(orr_sim_pos(s, &pos, &err), &err);
    TU_OK(orr_sim_attr(s, 0, &q, &err), &err);
    double attr[N];
    lattice_bodies(N, 99, pos, attr, 1);
    memcpy(q, attr, sizeof attr);
    orr_sim_touch(s);
    double u1, u2, u3, saved[4 * N];
    memcpy(saved, pos, sizeof saved);
    TU_OK(orr_sim_energy(s, NULL, &u1, &err), &err);
    size_t before, after, bytes;
    TU_OK(orr_kcache_usage(&before, &bytes, &err), &err);
    int recompiled = -1;
    TU_OK(orr_sim_set_param(s, "k", 2.0, &recompiled, &err), &err);
    assert_int_equal(recompiled, 0);
    TU_OK(orr_sim_energy(s, NULL, &u2, &err), &err);
    TU_OK(orr_kcache_usage(&after, &bytes, &err), &err);
    assert_int_equal(after, before);   /* no new kernel */
    assert_true(u2 == 2 * u1);        /* the scale doubled exactly */
    TU_OK(orr_sim_set_param(s, "lambda", 0.75, &recompiled, &err), &err);
    assert_int_equal(recompiled, 1);
    TU_OK(orr_kcache_usage(&after, &bytes, &err), &err);
    assert_int_equal(after, before + 1);   /* one new kernel, cached */
    TU_OK(orr_sim_energy(s, NULL, &u3, &err), &err);
    assert_true(fabs(u3) > fabs(u2));     /* longer screening length: more energy */
    assert_true(orr_sim_law(s)->params[orr_law_param_index(orr_sim_law(s), "k")].value == 2.0);
    /* the state survived the rebuild */
    double *p2;
    TU_OK(orr_sim_pos(s, &p2, &err), &err);
    assert_memory_equal(p2, saved, sizeof saved);
    /* unknown params and bad values */
    assert_int_equal(orr_sim_set_param(s, "kappa", 1, NULL, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "force law 'screened' has no param 'kappa' (params: lambda, k)");
    assert_int_equal(orr_sim_set_param(s, "k", NAN, NULL, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "force law 'screened': param 'k' must be a finite number (got nan)");
    orr_error_clear(&err);
    orr_sim_destroy(s);
    orr_law_free(&law);
}

/* A snippet that does not compile: both compilers name the origin and the
 * snippet line; nothing is cached. */
static void test_bad_snippet(void **state)
{
    orr_error err = {0};
    orr_law law;
    TU_OK(orr_law_init(&law, "broken", "real inv = orr_rsqrt(r2);\nf = mj * inv *;\n", "",
                       "plasma.lua:7", &err), &err);
    size_t before, after, bytes;
    TU_OK(orr_kcache_usage(&before, &bytes, &err), &err);
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_CPU);
    snprintf(s.phys.force, sizeof s.phys.force, "broken");
    s.phys.law = &law;
    orr_engine *e = NULL;
    assert_int_equal(orr_engine_create(&e, ORR_BACKEND_CPU, &s, ORR_VARIANT_TILED, 10, 0, NULL, 0,
                                       &err), ORR_ERR_COMPILE);
    print_message("host cc: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "force law 'broken' (defined at plasma.lua:7): "));
    assert_non_null(strstr(err.msg, "plasma.lua:7 (force 'broken', pair):2:"));
    assert_null(e);
    orr_error_clear(&err);
    TU_OK(orr_kcache_usage(&after, &bytes, &err), &err);
    assert_int_equal(before, after);

    /* NVRTC (no GPU needed to compile) */
    orr_error rerr = {0};
    int major, minor;
    if (orr_rtc_version(&major, &minor, &rerr) != ORR_OK) {
        print_message("NVRTC unavailable (%s): GPU half skipped\n", rerr.msg);
        orr_error_clear(&rerr);
    } else {
        orr_kspec_default(&s, ORR_TARGET_GPU);
        snprintf(s.phys.force, sizeof s.phys.force, "broken");
        s.phys.law = &law;
        char *src = NULL;
        TU_OK(orr_kspec_source(&s, &orr_family_direct, ORR_TARGET_GPU, &src, &err), &err);
        const char *opts[ORR_KSPEC_MAX_OPTS];
        orr_kexprs exprs;
        orr_kexprs_make(&exprs, &orr_family_direct, s.phys.precision);
        int nopts = orr_kspec_nvrtc_options(&s, opts);
        orr_rtc_result r = {0};
        assert_int_equal(orr_rtc_compile(src, "orrery_gen.cu", "sm_90", opts, nopts, exprs.expr,
                                         exprs.count, ORR_EMIT_PTX, &r, &err), ORR_ERR_COMPILE);
        print_message("NVRTC: %s\n", err.msg);
        assert_non_null(strstr(err.msg, "plasma.lua:7 (force 'broken', pair)(2): error"));
        free(src);
        orr_error_clear(&err);
    }
    orr_law_free(&law);
}

/* Issue 25, item 10: what would run past a snippet's end or bring in
 * other text is found before compiling and reported at the snippet's own
 * line (as the compilers' messages are), not at orrery's lines. */
static void test_snippet_checks(void **state)
{
    static const struct {
        const char *what, *code, *msg;
    } bad[] = {
        {"pair", "f = 1; }", "b.lua:4 (force 'b', pair):1: '}' without a matching '{'"},
        {"pair", "real x = r2;\nif (x > 0) {\n  f = x;\n",
         "b.lua:4 (force 'b', pair):2: '{' is never closed"},
        {"pair", "f = (1;\n}", "b.lua:4 (force 'b', pair):2: '}' does not match the '(' at line 1"},
        {"pair", "f = mj;\n/* to do\n", "b.lua:4 (force 'b', pair):2: a /* comment is not closed"},
        {"pair", "f = mj;\nif (d2 > 1) return;", "b.lua:4 (force 'b', pair):2: 'return' in a "
         "snippet would skip the code orrery puts after it: set the snippet's values and let it "
         "end"},
        {"pair", "f = mj;\ngoto out;\nout: ;", "b.lua:4 (force 'b', pair):2: 'goto' in a "
         "snippet would skip the code orrery puts after it: set the snippet's values and let it "
         "end"},
        {"pair", "#include <math.h>\nf = 1;",
         "b.lua:4 (force 'b', pair):1: #include is not allowed in a snippet: what a snippet may "
         "use is in scope already (real, its variables, the orr_ math), and NVRTC has no system "
         "headers"},
        {"pair", "f = 1;\n  #  include \"x.h\"", "b.lua:4 (force 'b', pair):2: #include is not"},
        {"pair", "#line 7\nf = 1;", "b.lua:4 (force 'b', pair):1: #line is not allowed"},
        {"pair", "# 7 \"x\"\nf = 1;", "b.lua:4 (force 'b', pair):1: a line marker"},
        {"pair", "#if ORR_DOUBLE\nf = 1;", "b.lua:4 (force 'b', pair):1: #if without #endif in "
                                          "the snippet"},
        {"pair", "f = 1;\n#endif", "b.lua:4 (force 'b', pair):2: #endif without #if in the snippet"},
        {"pair", "#if 1\n#else\n#else\n#endif", "b.lua:4 (force 'b', pair):3: #else after the "
                                                "#else of the #if at line 1"},
        {"pair", "#defin X 1\nf = 1;", "b.lua:4 (force 'b', pair):1: #defin is not a directive"},
        {"pair", "#define orr_exp(x) (x)\nf = 1;", "b.lua:4 (force 'b', pair):1: #define orr_exp: "
                                                   "a snippet may not define"},
        {"pair", "f = 1; \\", "b.lua:4 (force 'b', pair):1: the last line ends with a backslash"},
        {"pair", "f = 1; // the end \\", "b.lua:4 (force 'b', pair):1: the last line ends with a "
                                         "backslash"},
        {"pair", "f = 1;\nreal s = \"}\n;", "b.lua:4 (force 'b', pair):2: a string literal is not "
                                            "closed on its line"},
        {"pair", "real x = r2;\nf = x * mj  // no semicolon\n\n",
         "b.lua:4 (force 'b', pair):2: the last statement does not end with ';'"},
        {"potential", "u = 0; }", "b.lua:4 (force 'b', potential):1: '}' without a matching '{'"},
        {"jerk", "\n\n{ g = 0;", "b.lua:4 (force 'b', jerk):3: '{' is never closed"},
        {"scale", "G)", "b.lua:4 (force 'b', scale):1: ')' without a matching '('"},
        {"scale", "(G", "b.lua:4 (force 'b', scale):1: '(' is never closed"},
        {"scale", "G; return 0", "b.lua:4 (force 'b', scale):1: ';' in the scale expression"},
        {"scale", "G // Newton", "b.lua:4 (force 'b', scale):1: a // comment in the scale "
                                 "expression"},
        {"scale", "G /* Newton", "b.lua:4 (force 'b', scale):1: a /* comment is not closed"},
        {NULL, NULL, NULL}};
    orr_error err = {0};
    for (int k = 0; bad[k].what; k++) {
        orr_law law;
        const int pair = strcmp(bad[k].what, "pair") == 0;
        TU_OK(orr_law_init(&law, "b", pair ? bad[k].code : grav_pair, "", "b.lua:4", &err), &err);
        if (strcmp(bad[k].what, "potential") == 0) {
            free(law.potential);
            law.potential = strdup(bad[k].code);
        } else if (strcmp(bad[k].what, "jerk") == 0) {
            TU_OK(orr_law_set_jerk(&law, bad[k].code, 1, &err), &err);
        } else if (strcmp(bad[k].what, "scale") == 0) {
            snprintf(law.scale, sizeof law.scale, "%s", bad[k].code);
        }
        assert_int_equal(orr_law_validate(&law, &err), ORR_ERR_COMPILE);
        if (strncmp(err.msg, bad[k].msg, strlen(bad[k].msg)) != 0)
            fail_msg("%s snippet \"%s\":\n  got  %s\n  want %s...", bad[k].what, bad[k].code,
                     err.msg, bad[k].msg);
        orr_law_free(&law);
    }
    print_message("e.g. %s\n", err.msg);

    /* these keep to themselves: both branches of an #if open a brace,
     * brackets in strings, characters and comments, a lone quote in an
     * #error, a macro's body, a line continuation inside, a macro of the
     * snippet's own ending the last statement, a directive after it */
    static const char *const good[] = {
        "#if ORR_GPU\nif (d2 > 0) {\n#else\nif (d2 >= 0) {\n#endif\n  f = mj;\n}\n",
        "/* } */ f = mj; // )\nchar c = '}'; (void)c;\nconst char *s = \"{[(\"; (void)s;\n",
        "#if 0\n#error don't\n#endif\nf = mj;",
        "#define SQ(x) ((x) * (x))\n  f = SQ(mj);\n",
        "real x = 1 + \\\n  2;\nf = x * mj;\n",
        "f = mj; /* a comment\n  over lines } */\n# /* the null directive */\n",
        "#define END ;\nf = mj END\n",
        "if (d2 > 0) {\n  f = mj;\n}\n#pragma unused\n",
        NULL};
    for (int k = 0; good[k]; k++) {
        orr_law law;
        TU_OK(orr_law_init(&law, "g", good[k], "", "g.lua:1", &err), &err);
        TU_OK(orr_law_validate(&law, &err), &err);
        orr_law_free(&law);
    }

    /* a built-in law's snippet (an ORRERY_KERNELS_DIR edit) at its file's line */
    orr_law law;
    TU_OK(orr_law_builtin("gravity", &law, &err), &err);
    free(law.pair);
    law.pair = strdup("f = mj;\n}\n");
    assert_int_equal(orr_law_validate(&law, &err), ORR_ERR_COMPILE);
    assert_string_equal(err.msg, "forces/gravity.h:15: '}' without a matching '{'");
    orr_law_free(&law);

    /* at a simulation's start: refused before compiling, nothing cached */
    size_t before, after, bytes;
    TU_OK(orr_kcache_usage(&before, &bytes, &err), &err);
    TU_OK(orr_law_init(&law, "broken", "f = mj * orr_rsqrt3_nz(r2); }\n", "", "plasma.lua:7",
                       &err), &err);
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_CPU);
    snprintf(s.phys.force, sizeof s.phys.force, "broken");
    s.phys.law = &law;
    orr_engine *e = NULL;
    assert_int_equal(orr_engine_create(&e, ORR_BACKEND_CPU, &s, ORR_VARIANT_TILED, 10, 0, NULL, 0,
                                       &err), ORR_ERR_COMPILE);
    assert_string_equal(err.msg, "force law 'broken' (defined at plasma.lua:7): plasma.lua:7 "
                                 "(force 'broken', pair):1: '}' without a matching '{'");
    TU_OK(orr_kcache_usage(&after, &bytes, &err), &err);
    assert_int_equal(before, after);
    orr_law_free(&law);
    orr_error_clear(&err);
}

/* Issue 25, item 10: a snippet's macros are its own: `#define real int` in
 * the pair snippet changes nothing outside it (it leaked into the kernel,
 * which then stopped with non-finite accelerations), and a macro one
 * snippet defines is not defined in the next. */
static void test_snippet_macros_scoped(void **state)
{
    orr_error err = {0};
    orr_law user;
    TU_OK(orr_law_init(&user, "realint", "#define real int\nf = mj * orr_rsqrt3_nz(r2);\n",
                       grav_pot, "scoped.lua:1", &err), &err);
    snprintf(user.scale, sizeof user.scale, "G");
    user.finite_at_zero = 1;
    TU_OK(orr_law_validate(&user, &err), &err);
    assert_gravity_bitwise(&user);
    orr_law_free(&user);
    /* names of the bindings, of macros the headers define, undefined */
    TU_OK(orr_law_init(&user, "scoped",
                       "#define real int\n#define G 0\n#undef mj\n"
                       "#ifndef M_PI\n#define M_PI 3\n#endif\nf = mj * orr_rsqrt3_nz(r2);\n",
                       "#ifdef G\n#error the pair snippet's G leaked\n#endif\n"
                       "u = -(mi * mj) * orr_rsqrt_nz(r2);\n", "scoped.lua:2", &err), &err);
    snprintf(user.scale, sizeof user.scale, "G");
    user.finite_at_zero = 1;
    TU_OK(orr_law_validate(&user, &err), &err);
    assert_gravity_bitwise(&user);
    int st = nvrtc_law(&user, &err);
    if (st > 0)
        print_message("NVRTC: %s\n", err.msg);
    assert_true(st <= 0);
    orr_law_free(&user);
    orr_error_clear(&err);
}

/* B4: the digraphs %: (#), <: :> <% %> ([ ] { }) are what they stand for
 * to both compilers, so to the checks too: a %:define is a snippet's macro
 * (undefined around it: `%:define real int` leaked and gave wrong numbers),
 * %:include, %:line and a reserved name are refused, %:if must be closed,
 * and the digraph brackets are counted. */
static void test_snippet_digraphs(void **state)
{
    static const struct {
        const char *code, *msg;
    } bad[] = {
        {"%:define orr_rsqrt3_nz(x) 0\nf = mj * orr_rsqrt3_nz(r2);",
         "d.lua:2 (force 'd', pair):1: #define orr_rsqrt3_nz: a snippet may not define"},
        {"%:include <stdio.h>\nf = mj;", "d.lua:2 (force 'd', pair):1: #include is not allowed"},
        {"f = mj;\n  %:  include \"x.h\"", "d.lua:2 (force 'd', pair):2: #include is not allowed"},
        {"%:if 1\nf = mj;", "d.lua:2 (force 'd', pair):1: #if without #endif in the snippet"},
        {"f = mj;\n%:endif", "d.lua:2 (force 'd', pair):2: #endif without #if"},
        {"%:line 7\nf = mj;", "d.lua:2 (force 'd', pair):1: #line is not allowed"},
        {"%: 7 \"x\"\nf = mj;", "d.lua:2 (force 'd', pair):1: a line marker"},
        {"f = mj; %>", "d.lua:2 (force 'd', pair):1: '%>' (the digraph of '}') without a "
                       "matching '{'"},
        {"f = (mj;\n:>", "d.lua:2 (force 'd', pair):2: ':>' (the digraph of ']') does not match "
                         "the '(' at line 1"},
        {"if (d2 > 0) <%\n  f = mj;\n", "d.lua:2 (force 'd', pair):1: '<%' (the digraph of '{') "
                                        "is never closed"},
        {"real a<:2) = {0, 1};\nf = mj * a<:1:>;", "d.lua:2 (force 'd', pair):1: ')' does not "
                                                   "match the '<:' (the digraph of '[') at line 1"},
        {NULL, NULL}};
    orr_error err = {0};
    for (int k = 0; bad[k].code; k++) {
        orr_law law;
        TU_OK(orr_law_init(&law, "d", bad[k].code, "", "d.lua:2", &err), &err);
        orr_error_clear(&err);
        if (orr_law_validate(&law, &err) != ORR_ERR_COMPILE ||
            strncmp(err.msg, bad[k].msg, strlen(bad[k].msg)) != 0)
            fail_msg("pair snippet \"%s\":\n  got  %s\n  want %s...", bad[k].code,
                     err.code ? err.msg : "(accepted)", bad[k].msg);
        orr_law_free(&law);
    }
    /* the scale: a digraph brace is a brace, a %: at a line's start a directive */
    static const struct {
        const char *scale, *msg;
    } bad_scale[] = {
        {"G <% 1", "d.lua:2 (force 'd', scale):1: '<%' (the digraph of '{') in the scale"},
        {"G\n%:define X", "d.lua:2 (force 'd', scale):2: a preprocessor directive in the scale"},
        {NULL, NULL}};
    for (int k = 0; bad_scale[k].scale; k++) {
        orr_law law;
        TU_OK(orr_law_init(&law, "d", grav_pair, "", "d.lua:2", &err), &err);
        snprintf(law.scale, sizeof law.scale, "%s", bad_scale[k].scale);
        orr_error_clear(&err);
        if (orr_law_validate(&law, &err) != ORR_ERR_COMPILE ||
            strncmp(err.msg, bad_scale[k].msg, strlen(bad_scale[k].msg)) != 0)
            fail_msg("scale \"%s\":\n  got  %s\n  want %s...", bad_scale[k].scale,
                     err.code ? err.msg : "(accepted)", bad_scale[k].msg);
        orr_law_free(&law);
    }
    /* a %:define is the snippet's own, as a #define is: gravity, bitwise,
     * and NVRTC compiles it; digraph brackets and %:%: work on both */
    static const char *const good[] = {
        "%:define real int\nf = mj * orr_rsqrt3_nz(r2);\n",
        "  %:  define G 0\n%:undef mj\n%:define CAT(a, b) a %:%: b\n"
        "const real CAT(x, y) = orr_rsqrt3_nz(r2); real a<:2] = <% 0, 1 %>;\n"
        "if (a<:1:> > 0) <% f = xy * mj; %>\n",
        NULL};
    for (int k = 0; good[k]; k++) {
        orr_law user;
        TU_OK(orr_law_init(&user, "digraph", good[k], grav_pot, "d.lua:9", &err), &err);
        snprintf(user.scale, sizeof user.scale, "G");
        user.finite_at_zero = 1;
        TU_OK(orr_law_validate(&user, &err), &err);
        assert_gravity_bitwise(&user);
        int st = nvrtc_law(&user, &err);
        if (st > 0)
            print_message("NVRTC: %s\n", err.msg);
        assert_true(st <= 0);
        orr_law_free(&user);
    }
    /* trigraphs are off in both compilers' modes (GNU C11, C++17): ??= is
     * no directive but an error at the snippet's line */
    orr_law tri;
    TU_OK(orr_law_init(&tri, "tri", "?\?=define X 1\nf = mj;\n", "", "t.lua:5", &err), &err);
    TU_OK(orr_law_validate(&tri, &err), &err);
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_CPU);
    snprintf(s.phys.force, sizeof s.phys.force, "tri");
    s.phys.law = &tri;
    orr_engine *e = NULL;
    assert_int_equal(orr_engine_create(&e, ORR_BACKEND_CPU, &s, ORR_VARIANT_TILED, 10, 0, NULL, 0,
                                       &err), ORR_ERR_COMPILE);
    assert_non_null(strstr(err.msg, "t.lua:5 (force 'tri', pair):1:1: error"));
    if (nvrtc_law(&tri, &err) >= 0)
        assert_non_null(strstr(err.msg, "t.lua:5 (force 'tri', pair)(1): error"));
    orr_law_free(&tri);
    orr_error_clear(&err);
}

/* Creates a CPU engine for law, which must fail with status `want`;
 * returns the message (err) and asserts that nothing was cached. */
static void cpu_create_fails(const orr_law *law, orr_status want, orr_error *err)
{
    size_t before, after, bytes;
    TU_OK(orr_kcache_usage(&before, &bytes, err), err);
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_CPU);
    snprintf(s.phys.force, sizeof s.phys.force, "%s", law->name);
    s.phys.law = law;
    orr_engine *e = NULL;
    orr_status st = orr_engine_create(&e, ORR_BACKEND_CPU, &s, ORR_VARIANT_TILED, 10, 0, NULL, 0,
                                      err);
    if (st != want)
        fail_msg("law '%s': status %d (want %d): %s", law->name, st, want, err->msg);
    assert_null(e);
    char msg[sizeof err->msg];
    memcpy(msg, err->msg, sizeof msg);
    TU_OK(orr_kcache_usage(&after, &bytes, err), err);
    assert_int_equal(before, after);
    memcpy(err->msg, msg, sizeof msg);
}

/* B5: the warnings that mean a snippet is wrong are the CPU compiler's
 * errors, at the snippet's line: a typo'd function name (GCC only warned,
 * and the kernel then failed to load: "undefined symbol: rsqrt3", no law,
 * no line, and cached), implicit int, a
 * constant division by zero (GCC plants a trap: SIGILL), int-to-pointer
 * and incompatible pointers.  NVRTC (C++) refuses them too.  An object
 * that does not load is an error that names the law, and is not cached. */
static void test_cpu_warnings_are_errors(void **state)
{
    static const struct {
        const char *code, *cpu, *nvrtc;
    } bad[] = {
        {"real x = r2;\nf = mj * rsqrt3(x);", "w.lua:3 (force 'w', pair):2:10: error: implicit "
                                              "declaration of function 'rsqrt3'",
         "w.lua:3 (force 'w', pair)(2): error: identifier \"rsqrt3\" is undefined"},
        {"const y = 2;\nf = mj * y;", "w.lua:3 (force 'w', pair):1:7: error: type defaults to "
                                      "'int'", "w.lua:3 (force 'w', pair)(1): error"},
        {"f = mj * (1 / 0);", "w.lua:3 (force 'w', pair):1:13: error: division by zero", NULL},
        {"int *p = 5; (void)p;\nf = mj;", "w.lua:3 (force 'w', pair):1:10: error: initialization "
                                          "of 'int *' from 'int' makes pointer from integer",
         "w.lua:3 (force 'w', pair)(1): error"},
        {"int i = 1; double *q = &i; (void)q;\nf = mj;", "w.lua:3 (force 'w', pair):1:24: error: "
                                                        "initialization of 'double *' from "
                                                        "incompatible pointer type",
         "w.lua:3 (force 'w', pair)(1): error"},
        {NULL, NULL, NULL}};
    orr_error err = {0};
    for (int k = 0; bad[k].code; k++) {
        orr_law law;
        TU_OK(orr_law_init(&law, "w", bad[k].code, "", "w.lua:3", &err), &err);
        TU_OK(orr_law_validate(&law, &err), &err);
        cpu_create_fails(&law, ORR_ERR_COMPILE, &err);
        /* GCC quotes names with typographic quotes in a UTF-8 locale */
        char plain[sizeof err.msg];
        size_t n = 0;
        for (const char *p = err.msg; *p && n + 1 < sizeof plain; p++) {
            if (strncmp(p, "\xe2\x80\x98", 3) == 0 || strncmp(p, "\xe2\x80\x99", 3) == 0) {
                plain[n++] = '\'';
                p += 2;
            } else {
                plain[n++] = *p;
            }
        }
        plain[n] = '\0';
        if (!strstr(plain, "force law 'w' (defined at w.lua:3): host C compiler failed on "
                           "orrery_gen.c: ") || !strstr(plain, bad[k].cpu))
            fail_msg("snippet \"%s\":\n  got  %s\n  want %s", bad[k].code, plain, bad[k].cpu);
        if (bad[k].nvrtc && nvrtc_law(&law, &err) >= 0 && !strstr(err.msg, bad[k].nvrtc))
            fail_msg("NVRTC, snippet \"%s\":\n  got  %s\n  want %s", bad[k].code, err.msg,
                     bad[k].nvrtc);
        orr_law_free(&law);
    }
    /* an extern that nothing defines compiles, but does not load */
    orr_law law;
    TU_OK(orr_law_init(&law, "unlinked", "extern double orr_test_nowhere;\nf = mj * "
                       "orr_test_nowhere;", "", "u.lua:8", &err), &err);
    TU_OK(orr_law_validate(&law, &err), &err);
    cpu_create_fails(&law, ORR_ERR_LOAD, &err);
    assert_string_equal(err.msg, "force law 'unlinked' (defined at u.lua:8): the compiled CPU "
                                 "kernel does not load: undefined symbol: orr_test_nowhere");
    cpu_create_fails(&law, ORR_ERR_LOAD, &err);   /* again: compiled again, not from the cache */
    orr_law_free(&law);
    orr_error_clear(&err);
}

/* B6: the scale expression is checked for what it may use (numbers, the
 * params, G, eps, eps2, real, the orr_ math functions), and compiled under
 * a #line of its own, so a compiler's message about it names the script's
 * line, not "<law x: generated>:10:23" (host compiler and NVRTC). */
static void test_scale_checks(void **state)
{
    static const struct {
        const char *scale, *msg;
    } bad[] = {
        {"G * mi", "s.lua:4 (force 's', scale):1: 'mi' is not in scope in the scale expression, "
                   "which may use numbers, the law's params (k), G, eps, eps2, real and the orr_ "
                   "math functions: it is evaluated once per body, and this is a pair's (use it "
                   "in the pair snippet)"},
        {"nan", "s.lua:4 (force 's', scale):1: 'nan' is not in scope in the scale expression, "
                "which may use numbers, the law's params (k), G, eps, eps2, real and the orr_ "
                "math functions"},
        {"q_i * G", "s.lua:4 (force 's', scale):1: 'q_i' is not in scope in the scale "
                    "expression"},
        {"G ?", "s.lua:4 (force 's', scale):1: the scale expression ends with '?': an operand "
                "is missing"},
        {"k *\n  G +", "s.lua:4 (force 's', scale):2: the scale expression ends with '+'"},
        {"[G]", "s.lua:4 (force 's', scale):1: '[' in the scale expression: no array is in "
                "scope there"},
        {"G[0]", "s.lua:4 (force 's', scale):1: '[' in the scale expression"},
        {"G <:0:>", "s.lua:4 (force 's', scale):1: '<:' (the digraph of '[') in the scale"},
        {"\"G\"", "s.lua:4 (force 's', scale):1: a string literal in the scale expression"},
        {"G # 2", "s.lua:4 (force 's', scale):1: '#' in the scale expression"},
        {"G @ 2", "s.lua:4 (force 's', scale):1: '@' in the scale expression"},
        {"sqrt(G)", "s.lua:4 (force 's', scale):1: 'sqrt' is not in scope"},
        {NULL, NULL}};
    orr_error err = {0};
    for (int k = 0; bad[k].scale; k++) {
        orr_law law;
        TU_OK(orr_law_init(&law, "s", grav_pair, "", "s.lua:4", &err), &err);
        TU_OK(orr_law_add_param(&law, "k", 2, &err), &err);
        TU_OK(orr_law_add_attr(&law, "q", &err), &err);
        snprintf(law.scale, sizeof law.scale, "%s", bad[k].scale);
        orr_error_clear(&err);
        if (orr_law_validate(&law, &err) != ORR_ERR_COMPILE ||
            strncmp(err.msg, bad[k].msg, strlen(bad[k].msg)) != 0)
            fail_msg("scale \"%s\":\n  got  %s\n  want %s...", bad[k].scale,
                     err.code ? err.msg : "(accepted)", bad[k].msg);
        orr_law_free(&law);
    }
    /* what passes the checks: G, eps, eps2, params, numbers, casts, the
     * orr_ math functions; gravity scaled by exactly 1 */
    orr_law law;
    TU_OK(orr_law_init(&law, "scaled", grav_pair, grav_pot, "s.lua:4", &err), &err);
    TU_OK(orr_law_add_param(&law, "k", 4, &err), &err);
    law.finite_at_zero = 1;
    snprintf(law.scale, sizeof law.scale, "G * (real)0.25 * k * orr_fmax(eps2 * 0, (real).5e+0) * "
             "(double)2 /* a comment */ * orr_pow((real)0x1p+1, (real)0) * (eps >= 0 ? 1.0f : 2)");
    TU_OK(orr_law_validate(&law, &err), &err);
    assert_gravity_bitwise(&law);
    int st = nvrtc_law(&law, &err);
    if (st > 0)
        print_message("NVRTC: %s\n", err.msg);
    assert_true(st <= 0);
    orr_law_free(&law);
    /* what only a compiler sees, at the scale's own line */
    static const struct {
        const char *scale, *cpu, *nvrtc;
    } compiled[] = {
        {"1/0", "s.lua:4 (force 's', scale):1:2: error: division by zero", NULL},
        {"G ? 1", "s.lua:4 (force 's', scale):1:", "s.lua:4 (force 's', scale)(1): error"},
        {"orr_pow(G)", "s.lua:4 (force 's', scale):1:", "s.lua:4 (force 's', scale)(1): error"},
        {"G *\n(k k)", "s.lua:4 (force 's', scale):2:", "s.lua:4 (force 's', scale)(2): error"},
        {NULL, NULL, NULL}};
    for (int k = 0; compiled[k].scale; k++) {
        TU_OK(orr_law_init(&law, "s", grav_pair, "", "s.lua:4", &err), &err);
        TU_OK(orr_law_add_param(&law, "k", 2, &err), &err);
        snprintf(law.scale, sizeof law.scale, "%s", compiled[k].scale);
        TU_OK(orr_law_validate(&law, &err), &err);
        cpu_create_fails(&law, ORR_ERR_COMPILE, &err);
        if (!strstr(err.msg, compiled[k].cpu) || strstr(err.msg, "generated>"))
            fail_msg("scale \"%s\":\n  got  %s\n  want %s", compiled[k].scale, err.msg,
                     compiled[k].cpu);
        if (compiled[k].nvrtc && nvrtc_law(&law, &err) >= 0 &&
            (!strstr(err.msg, compiled[k].nvrtc) || strstr(err.msg, "generated>")))
            fail_msg("NVRTC, scale \"%s\":\n  got  %s\n  want %s", compiled[k].scale, err.msg,
                     compiled[k].nvrtc);
        orr_law_free(&law);
    }
    orr_error_clear(&err);
}

/* B7: a macro that opens or closes a bracket for the code around it
 * (#define END }) made the compilers report errors at orrery's lines, and
 * so did `#define defined 1` (on NVRTC too): refused at the #define's
 * line.  Brackets that balance in the body, or sit in its strings and
 * comments, are fine. */
static void test_macro_brackets(void **state)
{
    static const struct {
        const char *code, *msg;
    } bad[] = {
        {"#define END }\nf = mj; END", "m.lua:6 (force 'm', pair):1: #define END: a macro's "
                                       "body must balance its brackets, and this one has '}' "
                                       "without a matching '{'"},
        {"f = mj;\n#define OPEN {\nOPEN }", "m.lua:6 (force 'm', pair):2: #define OPEN: a "
                                             "macro's body must balance its brackets, and this "
                                             "one has '{' never closed"},
        {"#define P (\nf = P mj);", "m.lua:6 (force 'm', pair):1: #define P: a macro's body must "
                                    "balance its brackets, and this one has '(' never closed"},
        {"#define F(x) ((x)\nf = F(mj));", "m.lua:6 (force 'm', pair):1: #define F: a macro's "
                                           "body must balance its brackets, and this one has "
                                           "'(' never closed"},
        {"#define W(x) (x]\nf = W(mj);", "m.lua:6 (force 'm', pair):1: #define W: a macro's "
                                         "body must balance its brackets, and this one has ']' "
                                         "does not match the '(' at line 1"},
        {"#define CLOSE \\\n  ]\nf = mj;", "m.lua:6 (force 'm', pair):2: #define CLOSE: a "
                                            "macro's body must balance its brackets, and this "
                                            "one has ']' without a matching '['"},
        {"%:define END %>\nf = mj; END", "m.lua:6 (force 'm', pair):1: #define END: a macro's "
                                         "body must balance its brackets, and this one has '%>' "
                                         "(the digraph of '}') without a matching '{'"},
        {"#define defined 1\nf = mj;", "m.lua:6 (force 'm', pair):1: #define defined: 'defined' "
                                       "is the preprocessor's operator, not a macro name"},
        {"f = mj;\n#undef defined", "m.lua:6 (force 'm', pair):2: #undef defined: 'defined' is "
                                    "the preprocessor's operator"},
        {"#define __VA_ARGS__ 1\nf = mj;", "m.lua:6 (force 'm', pair):1: #define __VA_ARGS__: a "
                                           "snippet may not define"},
        {"#define _Pragma(x)\nf = mj;", "m.lua:6 (force 'm', pair):1: #define _Pragma: a "
                                        "snippet may not define"},
        /* line splices, which the compilers remove before they see comments:
         * "*\\<newline>/" ends a comment, "/\\<newline>*" opens one (a tester's
         * '}' went past the check as comment text and broke orrery's code) */
        {"f = mj; /* end *\\\n/ } /* */", "m.lua:6 (force 'm', pair):2: '}' without a "
                                          "matching '{'"},
        {"f = mj; /\\\n* { */ }", "m.lua:6 (force 'm', pair):2: '}' without a matching '{'"},
        {"f = mj; /\\\n/ {\n}", "m.lua:6 (force 'm', pair):3: '}' without a matching '{'"},
        {NULL, NULL}};
    orr_error err = {0};
    for (int k = 0; bad[k].code; k++) {
        orr_law law;
        TU_OK(orr_law_init(&law, "m", bad[k].code, "", "m.lua:6", &err), &err);
        orr_error_clear(&err);
        if (orr_law_validate(&law, &err) != ORR_ERR_COMPILE ||
            strncmp(err.msg, bad[k].msg, strlen(bad[k].msg)) != 0)
            fail_msg("pair snippet \"%s\":\n  got  %s\n  want %s...", bad[k].code,
                     err.code ? err.msg : "(accepted)", bad[k].msg);
        orr_law_free(&law);
    }
    /* balanced bodies, brackets in a body's strings and comments, a
     * function-like macro's parameters: gravity on both compilers */
    orr_law law;
    TU_OK(orr_law_init(&law, "macros",
                       "#define SQ(x) ((x) * (x))\n#define ARR(a, b) { a, b }\n"
                       "#define S \"}\" /* ( */\n#define C ']' // {\n#define BLOCK(s) { s }\n"
                       "const char *str = S; char ch = C; (void)str; (void)ch;\n"
                       "real v[2] = ARR(0, 1);\n"
                       "BLOCK(f = v[1] * SQ(mj) / (mj * mj) * mj * orr_rsqrt3_nz(r2););\n",
                       grav_pot, "m.lua:9", &err), &err);
    snprintf(law.scale, sizeof law.scale, "G");
    law.finite_at_zero = 1;
    TU_OK(orr_law_validate(&law, &err), &err);
    double pos[4 * 8], acc[3 * 8];
    tu_random_bodies(8, 99, pos, NULL);
    orr_engine *e = cpu_engine(&law, ORR_DOUBLE, 0.1, 8, pos, NULL);
    TU_OK(orr_engine_accel(e, acc, &err), &err);
    orr_engine_destroy(e);
    int st = nvrtc_law(&law, &err);
    if (st > 0)
        print_message("NVRTC: %s\n", err.msg);
    assert_true(st <= 0);
    orr_law_free(&law);
    orr_error_clear(&err);
}

/* B10: a non-ASCII character outside comments and strings worked on the
 * CPU (GCC takes UTF-8 names) but NVRTC refused it: both backends refuse
 * it alike, before compiling, at its line.  In comments, strings and the
 * text of #error it is fine.  #warning is refused: its message would
 * never be seen (compiler output is shown only for a failure). */
static void test_snippet_non_ascii(void **state)
{
    static const struct {
        const char *what, *code, *msg;
    } bad[] = {
        {"pair", "real \xc3\xa9 = 1;\nf = mj * \xc3\xa9;",
         "n.lua:2 (force 'n', pair):1: a non-ASCII character '\xc3\xa9' outside comments and "
         "strings: NVRTC refuses it (names and operators are ASCII)"},
        {"pair", "f = mj * 2 \xc3\x97 1;", "n.lua:2 (force 'n', pair):1: a non-ASCII character "
                                           "'\xc3\x97'"},
        {"pair", "f = mj;\n#define X \xe2\x88\x9a", "n.lua:2 (force 'n', pair):2: a non-ASCII "
                                                     "character '\xe2\x88\x9a'"},
        {"pair", "#if \xc3\xa9\n#endif\nf = mj;", "n.lua:2 (force 'n', pair):1: a non-ASCII "
                                                   "character '\xc3\xa9'"},
        {"pair", "f = mj; \xff", "n.lua:2 (force 'n', pair):1: a non-ASCII character (the byte "
                                 "0xff)"},
        {"potential", "\n\nu = 0; \xc2\xb5", "n.lua:2 (force 'n', potential):3: a non-ASCII "
                                              "character '\xc2\xb5'"},
        {"scale", "G \xc2\xb7 2", "n.lua:2 (force 'n', scale):1: a non-ASCII character '\xc2\xb7'"},
        {"pair", "#warning this law is slow\nf = mj;", "n.lua:2 (force 'n', pair):1: #warning "
                                                        "is not allowed in a snippet"},
        {"pair", "%:warning this law is slow\nf = mj;", "n.lua:2 (force 'n', pair):1: #warning "
                                                         "is not allowed"},
        {NULL, NULL, NULL}};
    orr_error err = {0};
    for (int k = 0; bad[k].what; k++) {
        orr_law law;
        const int pair = strcmp(bad[k].what, "pair") == 0;
        TU_OK(orr_law_init(&law, "n", pair ? bad[k].code : grav_pair, "", "n.lua:2", &err), &err);
        if (strcmp(bad[k].what, "potential") == 0) {
            free(law.potential);
            law.potential = strdup(bad[k].code);
        } else if (strcmp(bad[k].what, "scale") == 0) {
            snprintf(law.scale, sizeof law.scale, "%s", bad[k].code);
        }
        orr_error_clear(&err);
        if (orr_law_validate(&law, &err) != ORR_ERR_COMPILE ||
            strncmp(err.msg, bad[k].msg, strlen(bad[k].msg)) != 0)
            fail_msg("%s \"%s\":\n  got  %s\n  want %s...", bad[k].what, bad[k].code,
                     err.code ? err.msg : "(accepted)", bad[k].msg);
        orr_law_free(&law);
    }
    /* in comments, strings and #error's text: fine on both compilers */
    orr_law law;
    TU_OK(orr_law_init(&law, "utf8", "/* \xc3\xa9t\xc3\xa9 */ f = mj * orr_rsqrt3_nz(r2); "
                       "// \xc2\xb5\nconst char *s = \"\xc3\xa9\"; (void)s;\n"
                       "#if 0\n#error \xc3\xa9\n#endif\n", grav_pot, "n.lua:7", &err), &err);
    snprintf(law.scale, sizeof law.scale, "G /* \xc3\x97 1 */");
    law.finite_at_zero = 1;
    TU_OK(orr_law_validate(&law, &err), &err);
    assert_gravity_bitwise(&law);
    int st = nvrtc_law(&law, &err);
    if (st > 0)
        print_message("NVRTC: %s\n", err.msg);
    assert_true(st <= 0);
    orr_law_free(&law);
    orr_error_clear(&err);
}

/* B9: a law's origin (a script's path) is kept in full, however long: the
 * checks' messages, the host compiler's and NVRTC's name it whole (4000
 * bytes, near PATH_MAX: it was cut at 255), and a message longer than an
 * error keeps ends in ORR_ERR_CUT, never cut silently. */
static void test_long_origin(void **state)
{
    char origin[4100];
    size_t used = 0;
    for (int k = 0; used < 3990; k++)
        used += (size_t)snprintf(origin + used, sizeof origin - used, "/dir%04d", k);
    snprintf(origin + used, sizeof origin - used, "/law.lua:3");
    char want[4300];
    orr_error err = {0};
    orr_law law;
    TU_OK(orr_law_init(&law, "lo", "f = mj;\n}", "", origin, &err), &err);
    assert_string_equal(law.origin, origin);
    assert_int_equal(orr_law_validate(&law, &err), ORR_ERR_COMPILE);
    snprintf(want, sizeof want, "%s (force 'lo', pair):2: '}' without a matching '{'", origin);
    assert_string_equal(err.msg, want);
    orr_error_clear(&err);
    orr_law copy;
    TU_OK(orr_law_copy(&copy, &law, &err), &err);
    assert_string_equal(copy.origin, origin);
    orr_law_free(&copy);
    orr_law_free(&law);

    TU_OK(orr_law_init(&law, "lo", "f = mj * nope;", "", origin, &err), &err);
    TU_OK(orr_law_validate(&law, &err), &err);
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_CPU);
    snprintf(s.phys.force, sizeof s.phys.force, "lo");
    s.phys.law = &law;
    orr_engine *e = NULL;
    assert_int_equal(orr_engine_create(&e, ORR_BACKEND_CPU, &s, ORR_VARIANT_TILED, 10, 0, NULL, 0,
                                       &err), ORR_ERR_COMPILE);
    snprintf(want, sizeof want, "force law 'lo' (defined at %s): host C compiler failed on ", origin);
    assert_non_null(strstr(err.msg, want));
    snprintf(want, sizeof want, "%s (force 'lo', pair):1:", origin);
    assert_non_null(strstr(err.msg, want));
    assert_null(strstr(err.msg, ORR_ERR_CUT));
    orr_error_clear(&err);
    int major, minor;
    if (orr_rtc_version(&major, &minor, &err) != ORR_OK) {
        print_message("NVRTC unavailable (%s): GPU half skipped\n", err.msg);
        orr_error_clear(&err);
    } else {
        orr_kspec_default(&s, ORR_TARGET_GPU);
        snprintf(s.phys.force, sizeof s.phys.force, "lo");
        s.phys.law = &law;
        char *src = NULL;
        TU_OK(orr_kspec_source(&s, &orr_family_direct, ORR_TARGET_GPU, &src, &err), &err);
        const char *opts[ORR_KSPEC_MAX_OPTS];
        orr_kexprs exprs;
        orr_kexprs_make(&exprs, &orr_family_direct, s.phys.precision);
        int nopts = orr_kspec_nvrtc_options(&s, opts);
        orr_rtc_result r = {0};
        assert_int_equal(orr_rtc_compile(src, "orrery_gen.cu", "sm_90", opts, nopts, exprs.expr,
                                         exprs.count, ORR_EMIT_PTX, &r, &err), ORR_ERR_COMPILE);
        snprintf(want, sizeof want, "NVRTC failed to compile orrery_gen.cu: %s (force 'lo', "
                 "pair)(1): error", origin);
        assert_non_null(strstr(err.msg, want));
        free(src);
        orr_error_clear(&err);
    }
    orr_law_free(&law);

    /* longer than an error keeps: cut, and it says so (orr_fail and
     * orr_error_context alike) */
    char *big = malloc(ORR_ERR_MSG_MAX + 100);
    assert_non_null(big);
    memset(big, 'x', ORR_ERR_MSG_MAX + 99);
    big[ORR_ERR_MSG_MAX + 99] = '\0';
    orr_fail(&err, ORR_ERR_ARG, "%s", big);
    assert_int_equal(strlen(err.msg), ORR_ERR_MSG_MAX - 1);
    assert_string_equal(err.msg + strlen(err.msg) - strlen(ORR_ERR_CUT), ORR_ERR_CUT);
    big[ORR_ERR_MSG_MAX - 200] = '\0';
    orr_fail(&err, ORR_ERR_ARG, "%s", big);
    assert_null(strstr(err.msg, ORR_ERR_CUT));
    orr_error_context(&err, "%s", big);
    assert_string_equal(err.msg + strlen(err.msg) - strlen(ORR_ERR_CUT), ORR_ERR_CUT);
    orr_error_clear(&err);
    orr_fail(&err, ORR_ERR_ARG, "inner");
    orr_error_context(&err, "%s", origin);
    snprintf(want, sizeof want, "%s: inner", origin);
    assert_string_equal(err.msg, want);
    orr_error_clear(&err);
    free(big);
}

static void test_law_errors(void **state)
{
    orr_error err = {0};
    orr_law law;
    TU_OK(orr_law_init(&law, "mine", "f = 0;", "", "x.lua:1", &err), &err);
    assert_int_equal(orr_law_add_param(&law, "r2", 1, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "force law 'mine': invalid param name 'r2': it is a variable, "
                                 "keyword or function already in scope in the snippets");
    assert_int_equal(orr_law_add_param(&law, "orr_x", 1, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "force law 'mine': invalid param name 'orr_x': names starting "
                                 "with orr_, ORR_, __ or _ and a capital letter are reserved");
    assert_int_equal(orr_law_add_param(&law, "2x", 1, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "it is not a C identifier"));
    assert_int_equal(orr_law_add_param(&law, "alpha", INFINITY, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "force law 'mine': param 'alpha' must be a finite number (got inf)");
    TU_OK(orr_law_add_param(&law, "alpha", 2, &err), &err);
    assert_int_equal(orr_law_add_param(&law, "alpha", 3, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "force law 'mine': param 'alpha' is defined twice");
    assert_int_equal(orr_law_add_attr(&law, "alpha", &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "force law 'mine': attribute 'alpha' clashes with param 'alpha'");
    TU_OK(orr_law_add_param(&law, "spin_i", 2, &err), &err);
    assert_int_equal(orr_law_add_attr(&law, "spin", &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "force law 'mine': attribute 'spin' clashes with param 'spin_i'");
    TU_OK(orr_law_add_attr(&law, "charge", &err), &err);
    assert_int_equal(orr_law_add_param(&law, "charge_j", 2, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "force law 'mine': param 'charge_j' is defined twice");
    assert_int_equal(orr_law_set_runtime(&law, "beta", &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "force law 'mine': runtime param 'beta' is not one of its params");
    orr_law_free(&law);
    assert_int_equal(orr_law_init(&law, "Bad-Name", "f = 0;", "", "x.lua:1", &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "invalid force law name 'Bad-Name'"));
    TU_OK(orr_law_init(&law, "empty", "  \n", "", "x.lua:1", &err), &err);
    assert_int_equal(orr_law_validate(&law, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "force law 'empty': the pair snippet is empty (it must set f)");
    orr_law_free(&law);
    orr_error_clear(&err);
}

/* The law check (lawcheck.h): every built-in law passes with and without
 * softening; the probe's values are gravity's own; a jerk off by a factor
 * 2, a force without its 1/m_i and a potential of the wrong sign each fail,
 * naming the snippet, where and the ratio; bad options are refused. */
static orr_law user_law(const char *pair, const char *potential, const char *jerk)
{
    orr_error err = {0};
    orr_law law;
    memset(&law, 0, sizeof law);
    TU_OK(orr_law_init(&law, "power", pair, potential, "test_law.c", &err), &err);
    TU_OK(orr_law_add_param(&law, "p", 2.5, &err), &err);
    if (jerk)
        TU_OK(orr_law_set_jerk(&law, jerk, 1, &err), &err);
    return law;
}

static void test_law_check(void **state)
{
    orr_error err = {0};
    orr_lawcheck_opts o;
    orr_lawcheck_default(&o);
    static const char *const names[] = {"gravity", "gravity_spline", "coulomb", "lennard_jones",
                                        "yukawa"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        for (int soft = 0; soft < 2; soft++) {
            orr_law law;
            TU_OK(orr_law_builtin(names[k], &law, &err), &err);
            o.eps = soft ? 0.05 : 0;
            orr_lawcheck_result r;
            TU_OK(orr_law_check(&law, 1.3, &o, &r, &err), &err);
            print_message("%-14s eps %-4g: force %.2e, jerk %.2e (%s), %d compared, %d left out "
                          "%s\n", names[k], o.eps, r.force_err, r.jerk_err,
                          r.jerk_checked ? "checked" : "no jerk", r.compared, r.skipped,
                          r.message);
            assert_true(r.ok);
            assert_true(r.force_checked);
            assert_true(r.compared >= 30);
            assert_true(r.force_err < 1e-7);
            assert_true(r.jerk_checked == orr_law_has_jerk(&law));
            orr_law_free(&law);
        }
    /* the values are gravity's: scale f = G m_j r2^-3/2 at the worst point */
    orr_law grav;
    TU_OK(orr_law_builtin("gravity", &grav, &err), &err);
    o.eps = 0.2;
    orr_lawcheck_result r;
    TU_OK(orr_law_check(&grav, 1.3, &o, &r, &err), &err);
    const double r2 = r.force_r * r.force_r + 0.04, q2 = r.jerk_r * r.jerk_r + 0.04;
    assert_true(fabs(r.force_value - 1.3 * 1.7 * pow(r2, -1.5)) < 1e-13 * r.force_value);
    assert_true(fabs(r.jerk_value + 1.5 * 1.3 * 1.7 * pow(q2, -2.5)) < 1e-13 * fabs(r.jerk_value));
    orr_law_free(&grav);
    o.eps = 0;
    /* the jerk off by a factor 2 (the example of issue 28) */
    orr_law l = user_law("f = mj * orr_pow(r2, -p / 2 - 1);",
                         "u = -mi * mj / p * orr_pow(r2, -p / 2);",
                         "g = (-p / 2 - 1) * f / r2 * 2;");
    TU_OK(orr_law_check(&l, 1, &o, &r, &err), &err);
    print_message("%s\n", r.message);
    assert_false(r.ok);
    assert_true(r.force_err < 1e-7);
    assert_true(fabs(r.jerk_value / r.jerk_fd - 2) < 1e-6);
    assert_non_null(strstr(r.message, "force law 'power': the jerk snippet's g disagrees with "
                                      "df/d(d2) of the pair snippet by "));
    assert_non_null(strstr(r.message, "(ratio 2)"));
    assert_null(strstr(r.message, "pair snippet's f"));
    orr_law_free(&l);
    /* the same law right passes; without its 1/m_i the force fails (ratio m_i) */
    l = user_law("f = mj * orr_pow(r2, -p / 2 - 1);", "u = -mi * mj / p * orr_pow(r2, -p / 2);",
                 "g = (-p / 2 - 1) * f / r2;");
    TU_OK(orr_law_check(&l, 1, &o, &r, &err), &err);
    assert_true(r.ok);
    assert_string_equal(r.message, "");
    orr_law_free(&l);
    l = user_law("f = mi * mj * orr_pow(r2, -p / 2 - 1);",
                 "u = -mi * mj / p * orr_pow(r2, -p / 2);", NULL);
    TU_OK(orr_law_check(&l, 1, &o, &r, &err), &err);
    print_message("%s\n", r.message);
    assert_false(r.ok);
    assert_false(r.jerk_checked);
    assert_true(fabs(r.force_value / r.force_fd - 0.6) < 1e-6);
    assert_non_null(strstr(r.message, "force law 'power': the pair snippet's f disagrees with the "
                                      "potential snippet's (2/m_i) dU/d(d2) by "));
    orr_law_free(&l);
    /* a potential of the wrong sign */
    l = user_law("f = mj * orr_pow(r2, -p / 2 - 1);", "u = mi * mj / p * orr_pow(r2, -p / 2);",
                 NULL);
    TU_OK(orr_law_check(&l, 1, &o, &r, &err), &err);
    assert_false(r.ok);
    assert_true(fabs(r.force_value / r.force_fd + 1) < 1e-6);
    orr_law_free(&l);
    /* a law that is nowhere finite says nothing: not ok */
    orr_law_free(&l);
    l = user_law("f = orr_sqrt(-r2);", "u = orr_log(-r2);", NULL);
    TU_OK(orr_law_check(&l, 1, &o, &r, &err), &err);
    assert_false(r.ok);
    assert_int_equal(r.compared, 0);
    assert_string_equal(r.message, "force law 'power': only 0 of 41 separations from 0.01 to 100 "
                                   "could be compared (at the others a value is not finite, or "
                                   "the law is not smooth within the differences' steps): the "
                                   "check says nothing there");
    orr_law_free(&l);
    /* a jerk of 0 (a spring) passes: the differences' rounding is no error */
    l = user_law("f = p * mj;", "u = (real)0.5 * p * mi * mj * r2;", "g = 0;");
    TU_OK(orr_law_check(&l, 1, &o, &r, &err), &err);
    assert_true(r.ok);
    orr_law_free(&l);
    /* not symmetric in i and j: Newton's third law */
    l = user_law("f = orr_rsqrt3_nz(r2);", "u = -mi * orr_rsqrt_nz(r2);", NULL);
    TU_OK(orr_law_check(&l, 1, &o, &r, &err), &err);
    assert_false(r.ok);
    assert_true(r.newton_err > 0.1);
    assert_non_null(strstr(r.message, "force law 'power' breaks Newton's third law: at r = "));
    orr_law_free(&l);
    /* no potential: the force is not checked, the jerk is */
    l = user_law("f = mj * orr_pow(r2, -p / 2 - 1);", NULL, "g = (-p / 2 - 1) * f / r2;");
    TU_OK(orr_law_check(&l, 1, &o, &r, &err), &err);
    assert_true(r.ok && !r.force_checked && r.jerk_checked && r.compared > 30);
    /* options */
    orr_lawcheck_opts bad = o;
    bad.rmin = 0;
    assert_int_equal(orr_law_check(&l, 1, &bad, &r, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "the separations must run from rmin > 0 to a finite "
                                 "rmax > rmin (got 0 to 100)");
    orr_error_clear(&err);
    bad = o;
    bad.samples = 2;
    assert_int_equal(orr_law_check(&l, 1, &bad, &r, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "3 to 10000 samples (got 2)");
    orr_error_clear(&err);
    orr_law_free(&l);
}

/* A law made from an energy (expr.h): its params and attributes as the
 * built-in's, its snippets from orr_expr_law. */
static orr_law energy_law(const orr_law *like, const char *energy, const char *scale,
                          int finite_at_zero)
{
    orr_error err = {0};
    orr_law law;
    TU_OK(orr_law_init(&law, "from_energy", "f = 0;", NULL, "test_law.c", &err), &err);
    for (int k = 0; k < like->nparams; k++)
        TU_OK(orr_law_add_param(&law, like->params[k].name, like->params[k].value, &err), &err);
    for (int a = 0; a < like->nattrs; a++)
        TU_OK(orr_law_add_attr(&law, like->attrs[a], &err), &err);
    char *code[3];
    TU_OK(orr_expr_law(&law, energy, &code[0], &code[1], &code[2], &err), &err);
    free(law.pair), free(law.potential), free(law.jerk);
    law.pair = code[0], law.potential = code[1], law.jerk = code[2];
    snprintf(law.scale, sizeof law.scale, "%s", scale);
    law.finite_at_zero = finite_at_zero;
    TU_OK(orr_law_validate(&law, &err), &err);
    return law;
}

/* Every built-in law written as an energy gives the hand-written law's
 * accelerations, potential and (where it has one) jerks within 1e-14
 * (double, 64 bodies, with and without softening), and passes law:check
 * (its force and its jerk, both derived). */
static void test_energy_laws(void **state)
{
    static const struct {
        const char *name, *energy, *scale;
        int finite, soft;   /* soft: checked with a softening too */
    } laws[] = {
        {"gravity", "-mi*mj/r", "G", 1, 1},
        {"coulomb", "charge_i*charge_j/r", "k", 0, 1},
        {"yukawa", "-mi*mj*exp(-r/lambda)/r", "G", 1, 1},
        {"lennard_jones",
         "select(step(rc2 - r2), 4*epsilon*(s6*(s6 - 1) - c6*(c6 - 1)), 0); "
         "s6 = (sigma^2/r2)^3; rc2 = (cutoff*sigma)^2; c6 = cutoff^-6", "1", 0, 0},
    };
    enum { N = 64 };
    for (size_t k = 0; k < sizeof laws / sizeof laws[0]; k++)
        for (int soft = 0; soft <= laws[k].soft; soft++) {
            orr_error err = {0};
            orr_law hand;
            TU_OK(orr_law_builtin(laws[k].name, &hand, &err), &err);
            orr_law made = energy_law(&hand, laws[k].energy, laws[k].scale, laws[k].finite);
            const double eps = soft ? 0.3 : 0;
            double pos[4 * N], vel[3 * N], attr[ORR_LAW_MAX_ATTRS * N], a[2][3 * N], u[2];
            double jk[2][3 * N], ak[3 * N];
            lattice_bodies(N, 0xe7e7 + k, pos, attr, hand.nattrs);
            uint64_t seed = 99 + k;
            for (int q = 0; q < 3 * N; q++)
                vel[q] = tu_rand(&seed) - 0.5;
            long idx[N];
            for (long i = 0; i < N; i++)
                idx[i] = i;
            const orr_law *both[2] = {&hand, &made};
            for (int w = 0; w < 2; w++) {
                orr_engine *e = cpu_engine(both[w], ORR_DOUBLE, eps, N, pos, attr);
                TU_OK(orr_engine_set_state(e, pos, vel, &err), &err);
                TU_OK(orr_engine_accel(e, a[w], &err), &err);
                TU_OK(orr_engine_potential(e, &u[w], &err), &err);
                if (orr_law_has_jerk(both[w]))
                    TU_OK(orr_engine_accel_jerk(e, N, idx, ak, jk[w], &err), &err);
                orr_engine_destroy(e);
            }
            double amax = 0, da = 0, jmax = 0, dj = 0;
            for (int q = 0; q < 3 * N; q++) {
                amax = fmax(amax, fabs(a[0][q]));
                da = fmax(da, fabs(a[0][q] - a[1][q]));
            }
            const int jerk = orr_law_has_jerk(&hand);
            for (int q = 0; jerk && q < 3 * N; q++) {
                jmax = fmax(jmax, fabs(jk[0][q]));
                dj = fmax(dj, fabs(jk[0][q] - jk[1][q]));
            }
            print_message("%-14s eps %.1f: accelerations %.2e, potential %.2e, jerks %s%.2e\n",
                          laws[k].name, eps, da / amax, fabs(u[0] - u[1]) / fabs(u[0]),
                          jerk ? "" : "(none by hand) ", jerk ? dj / jmax : 0.0);
            assert_true(amax > 0 && da / amax < 1e-14);
            assert_true(fabs(u[0] - u[1]) <= 1e-14 * fabs(u[0]));
            assert_true(!jerk || dj / jmax < 1e-14);
            orr_lawcheck_opts o;
            orr_lawcheck_default(&o);
            o.eps = eps;
            orr_lawcheck_result r;
            TU_OK(orr_law_check(&made, 1, &o, &r, &err), &err);
            print_message("%-14s from its energy, law check: force %.2e, jerk %.2e, %d left out "
                          "%s\n", laws[k].name, r.force_err, r.jerk_err, r.skipped, r.message);
            assert_true(r.ok && r.force_checked && r.jerk_checked);
            assert_true(r.compared >= 35);
            orr_law_free(&made);
            orr_law_free(&hand);
        }
}

/* The expression's errors name the place: unknown names and functions, a
 * wrong arity, syntax, an attribute without _i/_j, a definition that uses
 * itself or is made twice. */
static void test_energy_errors(void **state)
{
    orr_error err = {0};
    orr_law law;
    TU_OK(orr_law_init(&law, "x", "f = 0;", NULL, "t", &err), &err);
    TU_OK(orr_law_add_param(&law, "sigma", 1, &err), &err);
    TU_OK(orr_law_add_attr(&law, "charge", &err), &err);
    static const char *const cases[][2] = {
        {"-mi*mj/rr", "energy:1:8: unknown name 'rr' (the names: r, r2, the law's params and "
                      "attributes (NAME_i, NAME_j), mi, mj, G, eps, and the intermediate values "
                      "after ';')"},
        {"sin(r)", "energy:1:1: unknown function 'sin' (the functions: sqrt, exp, log, abs, erf, "
                   "erfc, tanh, step, min, max, select, gammainc, gammaincc)"},
        {"max(r, 1, 2)", "energy:1:1: function 'max' takes 2 arguments (got 3)"},
        {"(1 + r", "energy:1:7: expected ')' to close the '(' at column 1"},
        {"1 +", "energy:1:4: an expression ends too early"},
        {"2 r", "energy:1:3: unexpected 'r' (an operator or ';' was expected)"},
        {"charge/r", "energy:1:1: 'charge' is an attribute: write charge_i or charge_j"},
        {"x/r; x = 2*y;\n y = x", "energy:2:6: the intermediate value 'x' depends on itself"},
        {"x; x = 1; x = 2", "energy:1:11: 'x' is defined twice (first at column 4)"},
        {"1/r; 3 = r", "energy:1:6: expected 'name = expression' after ';'"},
        {"   ", "energy:1:1: the energy is empty"},
        {"2e", "energy:1:2: a number followed by 'e' (numbers are decimal: 12, 2.5, 1e-3)"},
        {"0x10/r", "energy:1:5: a number followed by 'x' (numbers are decimal: 12, 2.5, 1e-3)"},
        {"1/r; r = sqrt(r2 + 1)", "energy:1:6: 'r' is a name already (the separation): an "
                                  "intermediate value needs a name of its own"},
        {"-mi*mj/r; mi = 3", "energy:1:11: 'mi' is a name already (the mass of body i): an "
                             "intermediate value needs a name of its own"},
        {"sigma/r; sigma = 2", "energy:1:10: 'sigma' is a name already (a param of the law): an "
                               "intermediate value needs a name of its own"},
        {"1e200*1e200/r", "energy:1:6: this part is a constant that is infinite (0^-1, "
                          "1e200*1e200, (-8)^(1/3), 0/0 and the like have no value)"},
        {"(-8)^(1/3)*r", "energy:1:5: this part is a constant that is not a number (0^-1, "
                         "1e200*1e200, (-8)^(1/3), 0/0 and the like have no value)"},
        {"r/0", "energy:1:2: this part is a constant that is not a number (0^-1, 1e200*1e200, "
                "(-8)^(1/3), 0/0 and the like have no value)"},
        {"1/r + \x01", "energy:1:7: unexpected the byte 0x01"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *p = NULL, *u = NULL, *j = NULL;
        assert_int_equal(orr_expr_law(&law, cases[k][0], &p, &u, &j, &err), ORR_ERR_ARG);
        assert_string_equal(err.msg, cases[k][1]);
        assert_null(p);
        orr_error_clear(&err);
    }
    /* limits that keep the recursion inside the stack */
    char deep[700], *q = deep, *p = NULL, *u = NULL, *j = NULL;
    for (int k = 0; k < 300; k++)
        *q++ = '(';
    *q++ = 'r';
    for (int k = 0; k < 300; k++)
        *q++ = ')';
    *q = '\0';
    assert_int_equal(orr_expr_law(&law, deep, &p, &u, &j, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "energy:1:202: brackets, functions and signs nested more than "
                                 "200 deep");
    orr_error_clear(&err);
    orr_buf big = {0};
    for (int k = 0; k < 3000; k++)
        assert_int_equal(orr_buf_printf(&big, "%sr", k ? "+" : ""), 0);
    assert_int_equal(orr_expr_law(&law, big.data, &p, &u, &j, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, ": the expression has more than 5000 parts (numbers, names "
                                    "and operations): write it with intermediate values"));
    orr_error_clear(&err);
    orr_buf_free(&big);
    orr_law_free(&law);
}

int main(void)
{
    tu_private_cache();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_metadata),
        cmocka_unit_test(test_gradient_builtins),
        cmocka_unit_test(test_coulomb_two_body),
        cmocka_unit_test(test_lennard_jones),
        cmocka_unit_test(test_yukawa_to_gravity),
        cmocka_unit_test(test_float_vs_double),
        cmocka_unit_test(test_user_copy_bitwise),
        cmocka_unit_test(test_origin_escaped),
        cmocka_unit_test(test_macro_param_names),
        cmocka_unit_test(test_runtime_and_baked_params),
        cmocka_unit_test(test_bad_snippet),
        cmocka_unit_test(test_snippet_checks),
        cmocka_unit_test(test_snippet_macros_scoped),
        cmocka_unit_test(test_snippet_digraphs),
        cmocka_unit_test(test_cpu_warnings_are_errors),
        cmocka_unit_test(test_scale_checks),
        cmocka_unit_test(test_macro_brackets),
        cmocka_unit_test(test_snippet_non_ascii),
        cmocka_unit_test(test_long_origin),
        cmocka_unit_test(test_law_errors),
        cmocka_unit_test(test_law_check),
        cmocka_unit_test(test_energy_laws),
        cmocka_unit_test(test_energy_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
