/* test_kepler: kernels_src/kepler.h's two-body drift (the GPU places a
 * regularised pair's members with it) on the host, against Kepler's
 * equation solved apart by bisection (ellipses of e = 0 to 0.999,
 * hyperbolae), over many periods and backwards, and the energy and
 * angular momentum of near-parabolic and radial-ish orbits kept. */
#include "testutil.h"

#include <math.h>

#include "ar.h"

#define ORR_KEPLER static inline
#include "../kernels_src/kepler.h"

/* E - e sin E = M (ellipse) or e sinh H - H = M (hyperbola), by bisection:
 * no Newton step shared with the code under test. */
static double anomaly(double e, double M)
{
    double lo, hi;
    if (e < 1) {
        const double P = 2 * M_PI, k = floor(M / P);
        M -= k * P;
        lo = 0, hi = P;
        for (int it = 0; it < 200; it++) {
            const double mid = 0.5 * (lo + hi);
            *(mid - e * sin(mid) < M ? &lo : &hi) = mid;
        }
        return 0.5 * (lo + hi) + k * P;
    }
    lo = -50, hi = 50;
    for (int it = 0; it < 200; it++) {
        const double mid = 0.5 * (lo + hi);
        *(e * sinh(mid) - mid < M ? &lo : &hi) = mid;
    }
    return 0.5 * (lo + hi);
}

/* A conic of semi-major axis a (> 0) and eccentricity e about mu, its
 * pericentre on +x, at time dt from pericentre (plane z = 0, tilted by a
 * rotation about x so that every component is used). */
static void conic(double mu, double a, double e, double dt, double *r, double *v)
{
    const double n = sqrt(mu / (a * a * a));
    double x, y, vx, vy;
    if (e < 1) {
        const double E = anomaly(e, n * dt), b = a * sqrt(1 - e * e);
        const double rr = a * (1 - e * cos(E)), Ed = n * a / rr;
        x = a * (cos(E) - e), y = b * sin(E), vx = -a * sin(E) * Ed, vy = b * cos(E) * Ed;
    } else {
        const double H = anomaly(e, n * dt), b = a * sqrt(e * e - 1);
        const double rr = a * (e * cosh(H) - 1), Hd = n * a / rr;
        x = a * (e - cosh(H)), y = b * sinh(H), vx = -a * sinh(H) * Hd, vy = b * cosh(H) * Hd;
    }
    const double c = cos(0.7), s = sin(0.7);
    r[0] = x, r[1] = c * y, r[2] = s * y;
    v[0] = vx, v[1] = c * vy, v[2] = s * vy;
}

static double diff(const double *a, const double *b)
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                (a[2] - b[2]) * (a[2] - b[2]));
}

static double norm(const double *a)
{
    return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
}

/* From a point of the orbit to others, forwards and back, many periods
 * on: the positions within tol of the orbit's size, the velocities of its
 * speed at pericentre. */
static void check_conic(double mu, double a, double e, double t0, const double *dts, int ndt,
                        double tol)
{
    double r0[3], v0[3], r[3], v[3], rw[3], vw[3];
    conic(mu, a, e, t0, r0, v0);
    const double vp = sqrt(mu * (1 + e) / (a * fabs(1 - e))), P = 2 * M_PI * sqrt(a * a * a / mu);
    for (int k = 0; k < ndt; k++) {
        orr_kepler_drift(mu, r0, v0, dts[k], r, v);
        conic(mu, a, e, t0 + dts[k], rw, vw);
        /* the start's rounding (1 - e, the energy 2 mu / r - v^2) moves the
         * orbit's period by about 1e-16 / |1 - e|: its error grows with the
         * periods gone by (the test's conditioning, not the drift's) */
        const double slack = (1 + fabs(dts[k]) / P) * (1 + 1e-3 / fabs(1 - e));
        const double size = fmax(norm(r0), norm(rw));
        const double dr = diff(r, rw) / size / slack, dv = diff(v, vw) / vp / slack;
        if (!(dr < tol && dv < tol))
            print_error("a %g e %g from t %g by %g: |dr| %.3g, |dv| %.3g of the orbit's\n", a, e,
                        t0, dts[k], dr, dv);
        assert_true(dr < tol);
        assert_true(dv < tol);
    }
}

static void test_ellipses(void **state)
{
    (void)state;
    const double P = 2 * M_PI;   /* a = 1, mu = 1 */
    const double dts[] = {1e-6, 0.3, -0.3, 1.7, P / 2, -2.9, 10 * P + 0.41, -37.3 * P, 1000.25 * P};
    const double es[] = {0, 0.1, 0.5, 0.9, 0.99, 0.999};
    for (size_t k = 0; k < sizeof es / sizeof es[0]; k++) {
        /* from pericentre, from apocentre, from between: the positions to
         * 1e-9 of the distance (the slack of check_conic aside) */
        check_conic(1, 1, es[k], 0, dts, 9, 1e-9);
        check_conic(1, 1, es[k], P / 2, dts, 9, 1e-9);
        check_conic(1, 1, es[k], 0.77, dts, 9, 1e-9);
    }
    /* other units: a hard binary of a cluster (a = 1e-4, mu = 2 / 4096) */
    const double mu = 2.0 / 4096, a = 1e-4, Pb = 2 * M_PI * sqrt(a * a * a / mu);
    const double db[] = {0.01 * Pb, 0.37 * Pb, -5.5 * Pb, 123.4 * Pb};
    check_conic(mu, a, 0.97, 0.2 * Pb, db, 4, 1e-9);
}

static void test_hyperbolae(void **state)
{
    (void)state;
    const double dts[] = {1e-6, 0.5, -0.5, 3, -3, 40, -40, 500};
    const double es[] = {1.0001, 1.01, 1.5, 3, 30};
    for (size_t k = 0; k < sizeof es / sizeof es[0]; k++) {
        check_conic(1, 1, es[k], 0, dts, 8, 1e-10);
        check_conic(1, 1, es[k], -2.5, dts, 8, 1e-10);
    }
    /* from r = 0.05 in on a hyperbola of pericentre 1e-5 (e = 1.5) past the
     * pericentre and out to r = 1: a Laguerre step past the root landed
     * where f(s) is 1e86 and its steps back took 130 iterations of the 100
     * allowed (r 1e17 at dt = 6e-4 and 1.8e-3); to 1e-8 of r (this orbit's
     * conditioning: its start is 2500 semi-major axes out) */
    const double e = 1.5, a = 1e-5 / (e - 1), n = sqrt(1 / (a * a * a));
    const double H0 = -acosh((0.05 / a + 1) / e), t0 = (e * sinh(H0) - H0) / n;
    double r0[3], v0[3];
    conic(1, a, e, t0, r0, v0);
    for (int k = 1; k <= 50; k++) {
        const double dt = 1.2e-4 * k;
        double r[3], v[3], rw[3], vw[3];
        orr_kepler_drift(1, r0, v0, dt, r, v);
        conic(1, a, e, t0 + dt, rw, vw);
        if (!(diff(r, rw) < 1e-8 * norm(rw) && diff(v, vw) < 1e-8 * norm(vw)))
            print_error("q 1e-5, e 1.5, from r 0.05 by %g: |dr| %.3g of r, |dv| %.3g of v\n", dt,
                        diff(r, rw) / norm(rw), diff(v, vw) / norm(vw));
        assert_true(diff(r, rw) < 1e-8 * norm(rw));
        assert_true(diff(v, vw) < 1e-8 * norm(vw));
    }
}

/* Near-parabolic and almost radial orbits: there and back again, with the
 * energy and angular momentum they started with. */
static void test_there_and_back(void **state)
{
    (void)state;
    const double mu = 1.3;
    const double starts[][6] = {
        {1, 0, 0, 0, 1.6124515496597098, 0},        /* v^2 = 2 mu / r: parabolic */
        {1, 0, 0, 0, 1.61245155, 1e-9},             /* barely unbound */
        {0.3, 0.2, -0.1, -1.1, 0.9, 0.4},           /* an ellipse, tilted */
        {1, 1e-3, 0, -1.5, 1e-4, 0},                /* falling in almost radially */
        {-2, 0.5, 0.25, 1.2, -0.1, 0.05},           /* a flyby */
    };
    for (size_t k = 0; k < sizeof starts / sizeof starts[0]; k++) {
        const double *r0 = starts[k], *v0 = starts[k] + 3;
        const double E0 = 0.5 * (v0[0] * v0[0] + v0[1] * v0[1] + v0[2] * v0[2]) - mu / norm(r0);
        const double L0[3] = {r0[1] * v0[2] - r0[2] * v0[1], r0[2] * v0[0] - r0[0] * v0[2],
                              r0[0] * v0[1] - r0[1] * v0[0]};
        for (double dt = 0.01; dt < 200; dt *= 3.7) {
            double r[3], v[3], rb[3], vb[3];
            orr_kepler_drift(mu, r0, v0, dt, r, v);
            orr_kepler_drift(mu, r, v, -dt, rb, vb);
            const double E = 0.5 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) - mu / norm(r);
            const double L[3] = {r[1] * v[2] - r[2] * v[1], r[2] * v[0] - r[0] * v[2],
                                 r[0] * v[1] - r[1] * v[0]};
            const double scale = mu / norm(r0) + fabs(E0);
            if (!(fabs(E - E0) < 1e-11 * scale && diff(L, L0) < 1e-11 * (norm(L0) + norm(r0)) &&
                  diff(rb, r0) < 1e-9 * (norm(r0) + norm(r))))
                print_error("start %zu dt %g: dE %.3g, dL %.3g, back by %.3g\n", k, dt,
                            fabs(E - E0) / scale, diff(L, L0), diff(rb, r0));
            assert_true(fabs(E - E0) < 1e-11 * scale);
            assert_true(diff(L, L0) < 1e-11 * (norm(L0) + norm(r0)));
            assert_true(diff(rb, r0) < 1e-9 * (norm(r0) + norm(r)));
        }
    }
}

/* A two-body group advanced to t exactly: member 1's position less
 * member 0's into r, which must be within tol of rw (as a fraction of
 * |rw|). */
static void advance_near(orr_ar *ar, double t, const double *rw, double tol, double *r)
{
    orr_error err = {0};
    TU_OK(orr_ar_advance(ar, t, &err), &err);
    assert_true(ar->t == t);
    double p[6], v[6];
    orr_ar_state(ar, p, v);
    for (int q = 0; q < 3; q++)
        r[q] = p[3 + q] - p[q];
    if (!(diff(r, rw) < tol * norm(rw)))
        print_error("t %g: |dr| %.3g of r %.3g\n", t, diff(r, rw), norm(rw));
    assert_true(diff(r, rw) < tol * norm(rw));
}

/* A regularised pair (core/integrate/ar.c) on a hyperbola of pericentre
 * 1e-5, stopped at 29 times around the pericentre as block steps stop it:
 * each end landed on (the last step's length in s found by iterating
 * t(s)), its members where Kepler's drift puts them (to 1e-8 of their
 * distance: the orbit from 2500 times its semi-major axis is that well
 * conditioned), and the landings few: the iteration used to stall at the
 * rounding of t, 100 trial steps a landing (20 s for this orbit), where
 * |t - t_end| cannot reach the ulps of t_end. */
static void test_ar_landing(void **state)
{
    (void)state;
    const double e = 1.5, q = 1e-5, mu = 1, a = q / (e - 1), r0n = 0.05;
    /* the start: incoming at r0n, the pericentre 1.6e-4 later */
    const double n = sqrt(mu / (a * a * a));
    const double H0 = -acosh((r0n / a + 1) / e), t0 = (e * sinh(H0) - H0) / n;
    double r0[3], v0[3];
    conic(mu, a, e, t0, r0, v0);
    const double m[2] = {0.5, 0.5};
    const double pos[6] = {-r0[0] / 2, -r0[1] / 2, -r0[2] / 2, r0[0] / 2, r0[1] / 2, r0[2] / 2};
    const double vel[6] = {-v0[0] / 2, -v0[1] / 2, -v0[2] / 2, v0[0] / 2, v0[1] / 2, v0[2] / 2};
    orr_ar ar;
    orr_error err = {0};
    TU_OK(orr_ar_init(&ar, 2, 1, m, pos, vel, 0, &err), &err);
    /* from r = 0.05 in (t = 0) to r = 0.05 out (t = 4.46e-4) */
    for (int k = 1; k <= 29; k++) {
        const double t = k / 65536.0;
        double r[3], rw[3], vw[3];
        orr_kepler_drift(mu, r0, v0, t, rw, vw);
        advance_near(&ar, t, rw, 1e-8, r);
    }
    print_message("29 landings: %ld steps, %ld force evaluations\n", ar.steps, ar.kicks);
    assert_true(ar.kicks < 20000);
    /* on, out to r = 0.84 (t = 0.004): T and -B there 7800 times U; the
     * drift's T + B, formed as a sum, lost 1e-12 of itself, the
     * extrapolation never converged and the steps shrank to s ~ 5e-15 past
     * r = 0.3 (a stall); with T + B carried as its own variable, 10 more
     * landings */
    const long kicks0 = ar.kicks;
    for (int k = 1; k <= 10; k++) {
        const double t = 29 / 65536.0 + k * (0.004 - 29 / 65536.0) / 10;
        double r[3], rw[3], vw[3];
        conic(mu, a, e, t0 + t, rw, vw);
        advance_near(&ar, t, rw, 1e-8, r);
        if (k == 10)
            print_message("out to r = %.3g: |dr| %.3g of r, %ld force evaluations\n", norm(rw),
                          diff(r, rw) / norm(rw), ar.kicks - kicks0);
    }
    assert_true(ar.kicks - kicks0 < 20000);
}

/* A binary (e = 0.64, as the one of a collapsing core) advanced 1000 times
 * by 1.5% of its period, as its centre's block steps advance it: each
 * advance landed on from its start (Newton's method on t(s) from a
 * second-order first trial, the last part moved in closed form), the
 * members where Kepler's equation puts them, and the cost: 144 force
 * evaluations an advance in the core before, here below 90. */
static void test_ar_short_advances(void **state)
{
    (void)state;
    const double e = 0.64, mu = 1, a = 1, P = 2 * M_PI;
    double r0[3], v0[3];
    conic(mu, a, e, 0.3, r0, v0);
    const double m[2] = {0.3, 0.7};
    const double pos[6] = {-0.7 * r0[0], -0.7 * r0[1], -0.7 * r0[2], 0.3 * r0[0], 0.3 * r0[1],
                           0.3 * r0[2]};
    const double vel[6] = {-0.7 * v0[0], -0.7 * v0[1], -0.7 * v0[2], 0.3 * v0[0], 0.3 * v0[1],
                           0.3 * v0[2]};
    orr_ar ar;
    orr_error err = {0};
    TU_OK(orr_ar_init(&ar, 2, 1, m, pos, vel, 0, &err), &err);
    double worst = 0;
    for (int k = 1; k <= 1000; k++) {
        const double t = k * 0.015 * P;
        double r[3], rw[3], vw[3];
        conic(mu, a, e, 0.3 + t, rw, vw);
        advance_near(&ar, t, rw, 1e-10 * a / norm(rw), r);
        worst = fmax(worst, diff(r, rw) / a);
    }
    /* 15 periods, within 1e-10 of a: the start's rounding moves the phase
     * by about 1e-14 a period */
    print_message("1000 advances of 1.5%% of a period: |dr| %.3g of a at most, %.1f force "
                  "evaluations an advance\n", worst, ar.kicks / 1000.0);
    assert_true(ar.kicks < 90 * 1000);
}

/* A pair whose steps are far below the rounding of its clock (t = 1e20,
 * an ulp 16384, steps of 0.05) cannot reach a later time: an error that
 * says so after a thousand steps that did not move the time, not a hang. */
static void test_ar_still(void **state)
{
    (void)state;
    const double m[2] = {0.5, 0.5}, pos[6] = {-0.5, 0, 0, 0.5, 0, 0},
                 vel[6] = {0, -0.5, 0, 0, 0.5, 0};
    orr_ar ar;
    orr_error err = {0};
    TU_OK(orr_ar_init(&ar, 2, 1, m, pos, vel, 1e20, &err), &err);
    assert_int_equal(orr_ar_advance(&ar, 1e20 + 65536, &err), ORR_ERR_ARG);
    print_message("%s\n", err.msg);
    assert_non_null(strstr(err.msg, "regularised group: its steps no longer move its time "
                                    "(t = 1e+20, steps of "));
    assert_true(ar.steps < 2000);
    orr_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ellipses),
        cmocka_unit_test(test_hyperbolae),
        cmocka_unit_test(test_there_and_back),
        cmocka_unit_test(test_ar_landing),
        cmocka_unit_test(test_ar_short_advances),
        cmocka_unit_test(test_ar_still),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
