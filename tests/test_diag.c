/* test_diag: cluster diagnostics (core/physics/diag.h) against what does not depend
 * on them: the k-d tree's neighbours against brute force, bit for bit; the
 * Lagrangian radii of a 100000-body Plummer sphere against the model's
 * analytic mass profile; the Casertano & Hut density of a uniform sphere
 * against its true density; Spitzer's t_rh against the formula by hand;
 * degenerate bodies (many on one spot, separations of 1e-120, masses of
 * 1e300); and the messages for bad options. */
#include "testutil.h"

#include <math.h>

#include "diag.h"
#include "ic.h"

static void test_knn_brute_force(void **state)
{
    enum { N = 3000, K = 6 };
    double *pos = malloc(sizeof(double) * 4 * N), *rk = malloc(sizeof(double) * N),
           *mk = malloc(sizeof(double) * N);
    orr_rng r;
    orr_rng_seed(&r, 77);
    for (long i = 0; i < N; i++) {   /* clumpy: half in a small ball, some duplicates */
        const double s = i % 2 ? 1.0 : 0.01;
        for (int a = 0; a < 3; a++)
            pos[4 * i + a] = s * (orr_rng_uniform(&r) - 0.5);
        pos[4 * i + 3] = 0.5 + orr_rng_uniform(&r);
    }
    memcpy(pos + 4 * 10, pos + 4 * 11, sizeof(double) * 3);
    orr_error err = {0};
    TU_OK(orr_diag_knn(pos, N, K, rk, mk, &err), &err);
    double *d = malloc(sizeof(double) * N);
    long *who = malloc(sizeof(long) * N);
    for (long q = 0; q < N; q += 7) {
        long m = 0;
        for (long j = 0; j < N; j++) {
            if (j == q)
                continue;
            double dx = pos[4 * j] - pos[4 * q], dy = pos[4 * j + 1] - pos[4 * q + 1],
                   dz = pos[4 * j + 2] - pos[4 * q + 2];
            d[m] = dx * dx + dy * dy + dz * dz;
            who[m++] = j;
        }
        /* the K smallest by selection (ties by index) */
        double mass = 0, kth = 0;
        for (int k = 0; k < K; k++) {
            long best = -1;
            for (long j = 0; j < m; j++)
                if (who[j] >= 0 && (best < 0 || d[j] < d[best] || (d[j] == d[best] && who[j] < who[best])))
                    best = j;
            kth = d[best];
            if (k < K - 1)
                mass += pos[4 * who[best] + 3];
            who[best] = -1;
        }
        assert_true(rk[q] == sqrt(kth));
        assert_true(fabs(mk[q] - mass) <= 1e-12 * mass);
    }
    free(pos), free(rk), free(mk), free(d), free(who);
}

/* Plummer: M(r) / M = r^3 / (r^2 + a^2)^(3/2), the sampled mass cut at
 * 0.999 of it; r(f) / r(1/2) does not depend on the scale a. */
static double plummer_r(double f)
{
    return 1 / sqrt(pow(0.999 * f, -2.0 / 3.0) - 1);
}

static void test_plummer_lagrangian(void **state)
{
    enum { N = 100000 };
    double *pos = malloc(sizeof(double) * 4 * N), *vel = malloc(sizeof(double) * 3 * N);
    orr_error err = {0};
    TU_OK(orr_ic_plummer(N, 2026, 1.0, pos, vel, &err), &err);
    const double fr[] = {0.01, 0.1, 0.25, 0.5, 0.75, 0.9};
    orr_diag_options o;
    orr_diag_options_default(&o);
    o.fractions = fr;
    o.nfractions = 6;
    o.about_density = 0;
    orr_diag d;
    TU_OK(orr_diag_cluster(pos, N, &o, &d, &err), &err);
    print_message("total mass %.15g\n", d.mass);
    assert_true(fabs(d.mass - 1) < 1e-9);
    assert_true(d.r_half == d.lagrangian[3]);
    /* sampling noise of a radius at fraction f: sqrt(f (1 - f) / N) in mass,
     * divided by dlnM/dlnr (3 a^2 / (r^2 + a^2), at least 0.25 here): 1.3%
     * at f = 0.01, under 0.7% elsewhere; allowed 4x */
    for (int f = 0; f < 6; f++) {
        double want = plummer_r(fr[f]) / plummer_r(0.5), got = d.lagrangian[f] / d.r_half;
        double tol = 4 * sqrt(fr[f] * (1 - fr[f]) / N) / fr[f] /
                     (3 / (1 + plummer_r(fr[f]) * plummer_r(fr[f])));
        print_message("f %.2f: r/r_h %.5f, model %.5f (tolerance %.3f)\n", fr[f], got, want, tol);
        assert_true(fabs(got / want - 1) < tol);
    }
    /* the density centre of a sphere centred on its centre of mass is near it,
     * well inside the core */
    double off = 0;
    for (int a = 0; a < 3; a++)
        off += (d.density_centre[a] - d.com[a]) * (d.density_centre[a] - d.com[a]);
    print_message("core radius %.4f, r_h %.4f, density centre %.2e from the com, t_rh %.2f\n",
                  d.core_radius, d.r_half, sqrt(off), d.t_rh);
    assert_true(sqrt(off) < 0.1 * d.core_radius);
    assert_true(d.core_radius > 0.2 * d.r_half && d.core_radius < d.r_half);
    /* Spitzer's t_rh by hand */
    double want = 0.138 * sqrt((double)N) * pow(d.r_half, 1.5) / (sqrt(1.0 / N) * log(0.11 * N));
    assert_true(fabs(d.t_rh / want - 1) < 1e-12);
    free(pos), free(vel);
}

static void test_uniform_density(void **state)
{
    enum { N = 20000 };
    double *pos = malloc(sizeof(double) * 4 * N);
    orr_rng r;
    orr_rng_seed(&r, 5);
    for (long i = 0; i < N;) {   /* uniform in the unit sphere, masses 1/N */
        double x = 2 * orr_rng_uniform(&r) - 1, y = 2 * orr_rng_uniform(&r) - 1,
               z = 2 * orr_rng_uniform(&r) - 1;
        if (x * x + y * y + z * z > 1)
            continue;
        pos[4 * i] = x, pos[4 * i + 1] = y, pos[4 * i + 2] = z, pos[4 * i + 3] = 1.0 / N;
        i++;
    }
    double *rk = malloc(sizeof(double) * N), *mk = malloc(sizeof(double) * N);
    orr_error err = {0};
    TU_OK(orr_diag_knn(pos, N, 6, rk, mk, &err), &err);
    /* bodies well inside: the estimate is unbiased, variance rho^2 / (k - 2) */
    double sum = 0;
    long m = 0;
    for (long i = 0; i < N; i++) {
        double r2 = pos[4 * i] * pos[4 * i] + pos[4 * i + 1] * pos[4 * i + 1] +
                    pos[4 * i + 2] * pos[4 * i + 2];
        if (r2 < 0.7 * 0.7) {
            sum += mk[i] / (4.0 / 3.0 * M_PI * rk[i] * rk[i] * rk[i]);
            m++;
        }
    }
    const double rho = 1 / (4.0 / 3.0 * M_PI), mean = sum / m;
    print_message("mean density inside 0.7: %.5f, true %.5f (%ld bodies)\n", mean, rho, m);
    assert_true(fabs(mean / rho - 1) < 0.03);   /* noise sqrt(1/(4 m)) ~ 0.6% */
    free(pos), free(rk), free(mk);
}

/* Ten bodies spread in a cube of side 40 about the origin, mass 1, into
 * pos[4 * 10] (deterministic). */
static void spread_ten(double *pos)
{
    orr_rng r;
    orr_rng_seed(&r, 31);
    for (int i = 0; i < 10; i++) {
        for (int a = 0; a < 3; a++)
            pos[4 * i + a] = 40 * (orr_rng_uniform(&r) - 0.5);
        pos[4 * i + 3] = 1;
    }
}

/* Degenerate bodies: more than k - 1 at one spot have an infinite density
 * (r_k = 0), and the densest spot is theirs: 10 bodies at (5, 5, 5) among
 * 10 spread out give the density centre (5, 5, 5), core radius 0 and core
 * density inf.  Separations of 1e-120 (densities beyond the double range)
 * and masses of 1e300 give finite radii: those of separations of 1e-3 and
 * masses of 1, scaled (the core density inf where it is beyond the double
 * range). */
static void test_degenerate(void **state)
{
    double pos[4 * 20];
    spread_ten(pos);
    for (int i = 10; i < 20; i++)
        pos[4 * i] = pos[4 * i + 1] = pos[4 * i + 2] = 5, pos[4 * i + 3] = 1;
    orr_diag d;
    orr_error err = {0};
    TU_OK(orr_diag_cluster(pos, 20, NULL, &d, &err), &err);
    print_message("10 bodies on (5, 5, 5): density centre (%g, %g, %g), core radius %g, core "
                  "density %g, r_half %g\n", d.density_centre[0], d.density_centre[1],
                  d.density_centre[2], d.core_radius, d.core_density, d.r_half);
    for (int a = 0; a < 3; a++)
        assert_true(d.density_centre[a] == 5);
    assert_true(d.core_radius == 0);
    assert_true(isinf(d.core_density) && d.core_density > 0);
    assert_true(d.r_half == 0);   /* half the mass is on the spot */
    assert_true(isfinite(d.lagrangian[6]) && d.lagrangian[6] > 0);

    /* a tight group of 8 with separations s among 10 spread out, masses m:
     * with s = 1e-120 and m = 1e300 every radius is finite and, the spread
     * bodies' distances aside, that of s = 1, m = 1 scaled */
    const double seps[] = {1e-3, 1e-120, 1e-3, 1e-3}, masses[] = {1, 1, 1e300, 1e290};
    orr_diag ref = {0};
    for (int c = 0; c < 4; c++) {
        double p[4 * 18];
        spread_ten(p);
        for (int i = 0; i < 10; i++)
            p[4 * i + 3] = masses[c];
        for (int i = 10; i < 18; i++) {
            const int j = i - 10;   /* corners of a cube of side s at the origin */
            p[4 * i] = seps[c] * (j & 1);
            p[4 * i + 1] = seps[c] * ((j >> 1) & 1);
            p[4 * i + 2] = seps[c] * ((j >> 2) & 1);
            p[4 * i + 3] = masses[c];
        }
        orr_diag_options o;
        orr_diag_options_default(&o);
        o.k = 4;
        TU_OK(orr_diag_cluster(p, 18, &o, &d, &err), &err);
        print_message("8 bodies %g apart, masses %g: density centre (%.17g, %.17g, %.17g), "
                      "core radius %g, core density %g, r_half %g, t_rh %g\n", seps[c],
                      masses[c], d.density_centre[0], d.density_centre[1], d.density_centre[2],
                      d.core_radius, d.core_density, d.r_half, d.t_rh);
        assert_true(isfinite(d.core_radius) && isfinite(d.r_half) && isfinite(d.t_rh));
        for (int f = 0; f < d.nfractions; f++)
            assert_true(isfinite(d.lagrangian[f]));
        assert_true(fabs(d.mass / (18 * masses[c]) - 1) < 1e-15);
        if (c == 0) {
            ref = d;
            continue;
        }
        /* the group's corners: centre s/2 on each axis (the spread bodies
         * weigh next to nothing), core radius s sqrt(3)/2 */
        const double s = seps[c];
        for (int a = 0; a < 3; a++)
            assert_true(fabs(d.density_centre[a] / (s / 2) - 1) < 1e-3);
        if (c == 1) {
            assert_true(fabs(d.core_radius / (s * sqrt(3) / 2) - 1) < 1e-3);
            assert_true(isinf(d.core_density));   /* 1e360: beyond the double range */
        } else {
            const double m = masses[c];
            assert_true(fabs(d.core_radius / ref.core_radius - 1) < 1e-12);
            if (c == 2)   /* 2.5e308: beyond the double range */
                assert_true(isinf(d.core_density));
            else
                assert_true(fabs(d.core_density / (ref.core_density * m) - 1) < 1e-12);
            assert_true(fabs(d.r_half / ref.r_half - 1) < 1e-12);
            assert_true(fabs(d.t_rh / (ref.t_rh / sqrt(m)) - 1) < 1e-12);
            for (int f = 0; f < d.nfractions; f++)
                assert_true(d.lagrangian[f] == ref.lagrangian[f]);
        }
    }
}

static void test_errors(void **state)
{
    double pos[4 * 8];
    for (int i = 0; i < 8; i++)
        pos[4 * i] = i, pos[4 * i + 1] = pos[4 * i + 2] = 0, pos[4 * i + 3] = 1;
    orr_diag_options o;
    orr_diag_options_default(&o);
    orr_diag d;
    orr_error err = {0};
    const double bad[] = {0.5, 1.5};
    o.fractions = bad;
    o.nfractions = 2;
    assert_int_equal(orr_diag_cluster(pos, 8, &o, &d, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "mass fraction 2 is 1.5: fractions must be in (0, 1]");
    orr_error_clear(&err);
    o.fractions = NULL;
    o.k = 8;
    assert_int_equal(orr_diag_cluster(pos, 8, &o, &d, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "the density needs 2 <= k < n: k = 8, n = 8");
    orr_error_clear(&err);
    o.k = 6;
    pos[4 * 3 + 3] = 0;
    assert_int_equal(orr_diag_cluster(pos, 8, &o, &d, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "body 4 has mass 0 at (3, 0, 0): cluster diagnostics need "
                                 "positive masses and finite positions");
    orr_error_clear(&err);
    pos[4 * 3 + 3] = 1;
    pos[4 * 5 + 1] = -2e100;
    assert_int_equal(orr_diag_cluster(pos, 8, &o, &d, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "body 6 is at (5, -2e+100, 0): cluster diagnostics need "
                                 "coordinates of at most 1e+100 in magnitude (squared distances "
                                 "would overflow)");
    orr_error_clear(&err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_knn_brute_force),
        cmocka_unit_test(test_plummer_lagrangian),
        cmocka_unit_test(test_uniform_density),
        cmocka_unit_test(test_degenerate),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
