/* test_field: external fields (field.h, expr.h's orr_expr_field,
 * fieldcheck.h): fields made from potential expressions against the
 * formulas by hand (accelerations, potentials and jerks, double, on the
 * CPU backend), the incomplete gamma functions against their closed forms
 * (gamma(1/2, x) = sqrt(pi) erf(sqrt x), gamma(1, x) = 1 - e^-x) on both
 * branches and in float, the generated source (#line directives naming
 * the field, ORR_NFIELDS, the runtime slots) and its NVRTC compile in
 * every precision, several fields summed, runtime params and the time
 * through the engine, baked params folded and made again, and errors
 * (places in the expression, nothing compiled). */
#include "testutil.h"

#include <math.h>

#include "engine.h"
#include "expr.h"
#include "field.h"
#include "fieldcheck.h"
#include "frame.h"
#include "kfamily.h"
#include "kspec.h"
#include "rtc.h"

static void make(orr_field *f, const char *name, const char *expr, const char *const *pn,
                 const double *pv, int np)
{
    orr_error err = {0};
    TU_OK(orr_field_init(f, name, "test_field.c:1", &err), &err);
    for (int k = 0; k < np; k++)
        TU_OK(orr_field_add_param(f, pn[k], pv[k], &err), &err);
    TU_OK(orr_field_set_expr(f, expr, 1, &err), &err);
    TU_OK(orr_field_validate(f, &err), &err);
}

/* A CPU engine of one body (mass 1) in the fields s, precision p. */
static orr_engine *engine_for(const orr_fieldset *s, orr_precision p)
{
    orr_kspec spec;
    orr_kspec_default(&spec, ORR_TARGET_CPU);
    spec.phys.precision = p;
    spec.phys.softening = 0;
    spec.phys.G = 1.5;
    spec.phys.fields = s;
    orr_engine *e = NULL;
    orr_error err = {0};
    TU_OK(orr_engine_create(&e, ORR_BACKEND_CPU, &spec, ORR_VARIANT_TILED, 1, 0, NULL, 0, &err),
          &err);
    return e;
}

static void eval(orr_engine *e, const double x[3], const double v[3], double a[3], double j[3],
                 double *phi)
{
    orr_error err = {0};
    const double pos[4] = {x[0], x[1], x[2], 1};
    TU_OK(orr_engine_set_state(e, pos, v, &err), &err);
    const long idx = 0;
    double a2[3];
    TU_OK(orr_engine_accel(e, a, &err), &err);
    TU_OK(orr_engine_accel_jerk(e, 1, &idx, a2, j, &err), &err);
    for (int d = 0; d < 3; d++)   /* the same snippet: the same value but for contraction */
        assert_true(fabs(a2[d] - a[d]) <= 1e-6 * fabs(a[d]));
    TU_OK(orr_engine_field_potential_range(e, orr_engine_all(e), phi, &err), &err);
}

static double rel(double a, double b)
{
    const double m = fmax(fabs(a), fabs(b));
    return m > 0 ? fabs(a - b) / m : 0;
}

/* |a - b| / |b| of vectors */
static double rel3(const double a[3], const double b[3])
{
    const double d = sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                          (a[2] - b[2]) * (a[2] - b[2]));
    const double m = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
    return m > 0 ? d / m : d;
}

/* Plummer from its expression against the formulas: a = -G M x / s^3, j =
 * -G M (v / s^3 - 3 (x.v) x / s^5), s^2 = r^2 + b^2. */
static void test_plummer_by_hand(void **state)
{
    static const char *const pn[] = {"M", "b"};
    static const double pv[] = {2.5, 0.7};
    orr_fieldset s = {0};
    make(&s.f[0], "pl", "-G*M/sqrt(r2 + b^2)", pn, pv, 2);
    s.n = 1;
    orr_engine *e = engine_for(&s, ORR_DOUBLE);
    double worst = 0;
    for (int k = 0; k < 50; k++) {
        const double x[3] = {0.03 * k - 0.4, 0.5 * sin(k), 0.2 * cos(3.0 * k)},
                     v[3] = {0.3, -0.2 * k / 50.0, 0.1};
        double a[3], j[3], phi;
        eval(e, x, v, a, j, &phi);
        const double GM = 1.5 * 2.5, s2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2] + 0.49;
        const double s3 = s2 * sqrt(s2), xv = x[0] * v[0] + x[1] * v[1] + x[2] * v[2];
        worst = fmax(worst, rel(phi, -GM / sqrt(s2)));
        double ah[3], jh[3];
        for (int d = 0; d < 3; d++) {
            ah[d] = -GM * x[d] / s3;
            jh[d] = -GM * (v[d] / s3 - 3 * xv * x[d] / (s3 * s2));
        }
        worst = fmax(worst, fmax(rel3(a, ah), rel3(j, jh)));
    }
    printf("plummer from its expression: worst relative difference %.2e\n", worst);
    assert_true(worst < 1e-14);
    /* at the origin: r2 = 0, finite, a = 0 */
    double a[3], j[3], phi;
    eval(e, (double[3]){0, 0, 0}, (double[3]){1, 0, 0}, a, j, &phi);
    assert_true(a[0] == 0 && a[1] == 0 && a[2] == 0 && isfinite(j[0]));
    orr_engine_destroy(e);
    orr_fieldset_free(&s);
}

/* gammainc(1/2, r2) = sqrt(pi) erf(r); gammaincc(1, r2) = e^-r2: the
 * series (x < s + 1) and the continued fraction, double and float. */
static void test_gamma(void **state)
{
    orr_fieldset s = {0};
    make(&s.f[0], "g", "gammainc(0.5, r2) + gammaincc(1, r2)/4 + gammainc(2.5, r2)/8", NULL,
         NULL, 0);
    s.n = 1;
    for (int p = 0; p < 2; p++) {
        orr_engine *e = engine_for(&s, p ? ORR_DOUBLE : ORR_FLOAT);
        double worst = 0;
        for (int k = 1; k <= 60; k++) {
            const double r = 0.1 * k, x2 = r * r;
            double a[3], j[3], phi;
            eval(e, (double[3]){r, 0, 0}, (double[3]){0, 0, 0}, a, j, &phi);
            /* gamma(5/2, x) = 3/4 gamma(1/2, x) - (x^(3/2) + 3/2 x^(1/2)) e^-x */
            const double g05 = sqrt(M_PI) * erf(r),
                         g25 = 0.75 * g05 - (x2 * r + 1.5 * r) * exp(-x2);
            worst = fmax(worst, rel(phi, g05 + exp(-x2) / 4 + g25 / 8));
            /* a_x = -d/dx: -(x^(-1/2) e^-x - e^-x / 4 + x^(3/2) e^-x / 8) 2 r */
            const double dphi = (exp(-x2) / r - exp(-x2) / 4 + x2 * r * exp(-x2) / 8) * 2 * r;
            worst = fmax(worst, rel(a[0], -dphi));
        }
        printf("incomplete gamma (%s): worst relative difference %.2e\n", p ? "double" : "float",
               worst);
        assert_true(worst < (p ? 1e-14 : 1e-5));
        orr_engine_destroy(e);
    }
    orr_fieldset_free(&s);
}

/* Two fields add; their runtime params and the time come through the
 * engine's runtime values. */
static void test_sum_runtime_time(void **state)
{
    static const char *const pn[] = {"M", "w"};
    static const double pv[] = {1, 0.5};
    orr_fieldset s = {0};
    make(&s.f[0], "a", "-G*M/r", pn, pv, 1);
    make(&s.f[1], "b", "w*x*(1 + t)", pn + 1, pv + 1, 1);
    orr_error err = {0};
    TU_OK(orr_field_set_runtime(&s.f[0], "M", &err), &err);
    TU_OK(orr_field_set_runtime(&s.f[1], "w", &err), &err);
    TU_OK(orr_field_set_expr(&s.f[1], "w*x*(1 + t)", 1, &err), &err);
    s.n = 2;
    assert_int_equal(orr_fieldset_runtime_count(&s), 2);
    orr_engine *e = engine_for(&s, ORR_DOUBLE);
    const double x[3] = {2, 0, 0}, v[3] = {0, 0, 0};
    double a[3], j[3], phi;
    eval(e, x, v, a, j, &phi);
    assert_true(rel(a[0], -1.5 / 4 - 0.5) < 1e-15 && rel(phi, -0.75 + 1.0) < 1e-15);
    orr_engine_set_field_runtime(e, (double[2]){3, 2});
    orr_engine_set_time(e, 1, 0);
    eval(e, x, v, a, j, &phi);
    assert_true(rel(a[0], -4.5 / 4 - 4) < 1e-15 && rel(phi, -2.25 + 8) < 1e-15);
    assert_true(rel(j[0], -2) < 1e-15);   /* d a_x / dt of the time's factor: -w */
    orr_engine_destroy(e);
    orr_fieldset_free(&s);
}

/* The source: each field under #line directives naming it; with no fields
 * ORR_NFIELDS 0; NVRTC compiles it in every precision. */
static void test_source_and_nvrtc(void **state)
{
    orr_fieldset s = {0};
    orr_error err = {0};
    TU_OK(orr_field_builtin("milky_way", &s.f[0], &err), &err);
    TU_OK(orr_field_init(&s.f[1], "push", "script.lua:7", &err), &err);
    TU_OK(orr_field_add_param(&s.f[1], "k", 0.5, &err), &err);
    TU_OK(orr_field_set_runtime(&s.f[1], "k", &err), &err);
    TU_OK(orr_field_set_code(&s.f[1], "ax = k;", "phi = -k * x;", "jx = 0;", &err), &err);
    s.n = 2;
    orr_kspec spec;
    orr_kspec_default(&spec, ORR_TARGET_GPU);
    char *src = NULL, *none = NULL;
    TU_OK(orr_kspec_source(&spec, &orr_family_direct, ORR_TARGET_GPU, &none, &err), &err);
    assert_non_null(strstr(none, "#define ORR_NFIELDS 0\n"));
    spec.phys.fields = &s;
    TU_OK(orr_kspec_source(&spec, &orr_family_direct, ORR_TARGET_GPU, &src, &err), &err);
    assert_non_null(strstr(src, "#define ORR_NFIELDS 2\n"));
    assert_non_null(strstr(src, "#line 1 \"script.lua:7 (field 'push', accel)\"\nax = k;"));
    assert_non_null(strstr(src, "const real k = (real)fp[0];"));
    assert_non_null(strstr(src, "orr_field0_accel(x, y, z, (real)t, fp + 0, ax, ay, az);"));
    assert_true(strcmp(src, none) != 0);   /* the cache key is the whole source */
    free(none);
    /* dims 2 (planar): the sums keep z's parts as they were; compiled too */
    assert_null(strstr(src, "const real az0 = *az;"));
    for (int p = 0; p < 6; p++) {
        spec.phys.precision = (orr_precision)(p % 3);
        s.planar = p >= 3;
        free(src);
        TU_OK(orr_kspec_source(&spec, &orr_family_direct, ORR_TARGET_GPU, &src, &err), &err);
        if (s.planar) {
            assert_non_null(strstr(src, "    const real az0 = *az;\n"));
            assert_non_null(strstr(src, "    *az = az0;\n    *jz = jz0;\n}\n"));
        }
        orr_kexprs exprs;
        orr_kexprs_make(&exprs, &orr_family_direct, spec.phys.precision);
        orr_rtc_result r = {0};
        static const char *const opts[] = {"-std=c++17"};
        orr_status st = orr_rtc_compile(src, "orrery_gen.cu", "sm_90", opts, 1, exprs.expr,
                                        exprs.count, ORR_EMIT_PTX, &r, &err);
        if (st && strstr(err.msg, "NVRTC")) {   /* no NVRTC here: what can be checked was */
            printf("NVRTC not usable: %s\n", err.msg);
            orr_error_clear(&err);
            break;
        }
        TU_OK(st, &err);
        assert_int_equal(r.nlowered, orr_family_direct.ngpu);
        orr_rtc_result_free(&r);
    }
    free(src);
    orr_fieldset_free(&s);
}

/* A baked param is folded into an expression field's code: setting it
 * makes the code again; a value that gives a constant without a value
 * keeps the old one. */
static void test_baked_refold(void **state)
{
    static const char *const pn[] = {"M", "a"};
    static const double pv[] = {1, 2};
    orr_field f;
    make(&f, "h", "-G*M/(r + a)", pn, pv, 2);
    assert_non_null(strstr(f.potential, "0x1p+1"));   /* a = 2 */
    orr_error err = {0};
    TU_OK(orr_field_set_param(&f, "a", 3, &err), &err);
    assert_non_null(strstr(f.potential, "0x1.8p+1"));
    orr_field g;
    static const double one[] = {1};
    make(&g, "q", "1/a + r", pn + 1, one, 1);
    assert_int_equal(orr_field_set_param(&g, "a", 0, &err), ORR_ERR_ARG);
    if (!strstr(err.msg, "field 'q': potential:1:2: this part is a constant that is infinite"))
        fail_msg("got \"%s\"", err.msg);
    assert_true(g.params[0].value == 1);
    orr_error_clear(&err);
    orr_field_free(&f);
    orr_field_free(&g);
}

/* Errors: the place in the expression; names in scope refused. */
static void test_errors(void **state)
{
    orr_field f;
    orr_error err = {0};
    TU_OK(orr_field_init(&f, "e", "x.lua:3", &err), &err);
    static const struct {
        const char *expr, *msg;
    } bad[] = {
        {"-G/(1 + q)", "field 'e': potential:1:9: unknown name 'q'"},
        {"exp(r, 2)", "field 'e': potential:1:1: function 'exp' takes 1 argument (got 2)"},
        {"1 +", "field 'e': potential:1:4: an expression ends too early"},
        {"mi*r", "field 'e': potential:1:1: unknown name 'mi'"},
        {"gammainc(x, r)", "potential:1:10: the first argument of gammainc (its order s)"},
        {"r; t = 1", "potential:1:4: 't' is a name already (the time)"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        assert_int_equal(orr_field_set_expr(&f, bad[k].expr, 1, &err), ORR_ERR_ARG);
        if (!strstr(err.msg, bad[k].msg))
            fail_msg("%s: got \"%s\"", bad[k].expr, err.msg);
        orr_error_clear(&err);
    }
    assert_int_equal(orr_field_add_param(&f, "vx", 1, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "invalid param name 'vx'"));
    orr_error_clear(&err);
    assert_int_equal(orr_field_validate(&f, &err), ORR_ERR_ARG);   /* no code yet */
    assert_non_null(strstr(err.msg, "the accel snippet is empty"));
    orr_error_clear(&err);
    orr_field_free(&f);
}

/* field check: a jerk snippet off by a factor 2 is named. */
static void test_check_finds_jerk(void **state)
{
    orr_field f;
    orr_error err = {0};
    TU_OK(orr_field_init(&f, "spring", "x.lua:1", &err), &err);
    TU_OK(orr_field_set_code(&f, "ax = -x; ay = -y; az = -z;", "phi = r2 / 2;",
                             "jx = -2 * vx; jy = -2 * vy; jz = -2 * vz;", &err), &err);
    orr_fieldcheck_opts o;
    orr_fieldcheck_default(&o);
    orr_fieldcheck_result r;
    TU_OK(orr_field_check(&f, 1, &o, &r, &err), &err);
    assert_false(r.ok);
    assert_true(r.accel_err < 1e-8);
    assert_non_null(strstr(r.message, "field 'spring': the jerk snippet's j disagrees"));
    TU_OK(orr_field_set_code(&f, "ax = -x; ay = -y; az = -z;", "phi = r2 / 2;",
                             "jx = -vx; jy = -vy; jz = -vz;", &err), &err);
    TU_OK(orr_field_check(&f, 1, &o, &r, &err), &err);
    assert_true(r.ok);
    orr_field_free(&f);
}

/* A frame's centre on a Kepler ellipse (point mass, G M = 1): its energy
 * and angular momentum kept over two orbits forwards and back before its
 * start; a launch's span polynomial matches the orbit at both ends and in
 * between; the CPU source of a frame holds the fields in double. */
static void test_frame_centre(void **state)
{
    (void)state;
    orr_error err = {0};
    orr_fieldset set = {0};
    orr_field pm;
    TU_OK(orr_field_builtin("point_mass", &pm, &err), &err);
    TU_OK(orr_fieldset_add(&set, &pm, &err), &err);
    orr_field_free(&pm);
    double fv[ORR_FIELD_MAX_RUNTIME] = {0};
    const double R0[3] = {1, 0, 0}, V0[3] = {0, 1.2, 0.1};
    orr_frame *f = NULL;
    TU_OK(orr_frame_create(&f, &set, fv, 1.0, 0.0, R0, V0, 0, &err), &err);
    const double e0 = 0.5 * (1.2 * 1.2 + 0.1 * 0.1) - 1, l0 = 1.2;
    for (int k = -40; k <= 60; k++) {
        const double t = 0.37 * k;
        double R[3], V[3], A[3];
        TU_OK(orr_frame_at(f, t, R, V, A, &err), &err);
        const double r = sqrt(R[0] * R[0] + R[1] * R[1] + R[2] * R[2]);
        const double e = 0.5 * (V[0] * V[0] + V[1] * V[1] + V[2] * V[2]) - 1 / r;
        if (!(fabs(e - e0) < 1e-11 * fabs(e0)))
            print_message("t %g: energy off by %.2e\n", t, fabs(e - e0) / fabs(e0));
        assert_true(fabs(e - e0) < 1e-11 * fabs(e0));
        assert_true(fabs((R[0] * V[1] - R[1] * V[0]) - l0) < 1e-11);
        for (int d = 0; d < 3; d++)   /* the field's acceleration there */
            assert_true(fabs(A[d] + R[d] / (r * r * r)) < 1e-14);
    }
    /* a span of 0.05 from t = 3.3: the quintic at its end and middle */
    double slots[ORR_FRAME_SLOTS];
    orr_frame_slots(f, 3.3, 0.05, slots);
    char why[256];
    assert_int_equal(orr_frame_take_error(f, why, sizeof why), 0);
    assert_true(slots[0] == 3.3);
    for (int w = 0; w < 3; w++) {
        const double s = 0.025 * w, t = 3.3 + s;
        double R[3], V[3];
        TU_OK(orr_frame_at(f, t, R, V, NULL, &err), &err);
        for (int d = 0; d < 3; d++) {
            const double *c = slots + 1 + 6 * d;
            const double x = c[0] + s * (c[1] + s * (c[2] + s * (c[3] + s * (c[4] + s * c[5])))),
                         v = c[1] + s * (2 * c[2] + s * (3 * c[3] + s * (4 * c[4] + s * 5 * c[5])));
            assert_true(fabs(x - R[d]) < 1e-13);
            assert_true(fabs(v - V[d]) < 1e-11);
        }
    }
    orr_frame_destroy(f);
    /* the source: per-field functions in double on the CPU, templates on the GPU */
    set.frame = 1;
    orr_kspec k;
    orr_kspec_default(&k, ORR_TARGET_CPU);
    k.phys.fields = &set;
    char *src = NULL;
    TU_OK(orr_kspec_source(&k, &orr_family_direct, ORR_TARGET_CPU, &src, &err), &err);
    assert_non_null(strstr(src, "#define ORR_FRAME 1"));
    assert_non_null(strstr(src, "#define real double\n"));
    assert_non_null(strstr(src, "#define orr_gammainc orr_gammainc_d"));
    assert_non_null(strstr(src, "orr_frame_centre(fp + "));
    free(src);
    orr_fieldset_free(&set);
}

int main(void)
{
    tu_private_cache();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plummer_by_hand),
        cmocka_unit_test(test_gamma),
        cmocka_unit_test(test_sum_runtime_time),
        cmocka_unit_test(test_source_and_nvrtc),
        cmocka_unit_test(test_baked_refold),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_check_finds_jerk),
        cmocka_unit_test(test_frame_centre),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
