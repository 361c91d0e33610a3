/* test_ic: the initial-condition generators: body counts, total mass, centre
 * of mass (every generator), parameter ranges, determinism per seed, and the physics each promises (Plummer in
 * virial equilibrium with E = -1/4, the Kepler orbit's energy, the solar
 * system's Earth at 1 AU moving at 1 in G = 1 units). */
#include "testutil.h"

#include <math.h>

#include "ic.h"

typedef struct {
    long n;
    double *pos, *vel;
} bodies;

static bodies make(const char *name, long n, uint64_t seed, const double *override, int nov)
{
    const orr_ic_generator *g = orr_ic_find(name);
    assert_non_null(g);
    double p[ORR_IC_MAX_PARAMS];
    memcpy(p, g->defaults, sizeof p);
    for (int k = 0; k < nov; k++)
        p[k] = override[k];
    bodies b;
    b.n = g->count(n, p);
    b.pos = malloc(sizeof(double) * 4 * b.n);
    b.vel = malloc(sizeof(double) * 3 * b.n);
    orr_error err = {0};
    TU_OK(g->generate(n, seed, p, b.pos, b.vel, &err), &err);
    return b;
}

static void done(bodies *b)
{
    free(b->pos);
    free(b->vel);
}

static double total_mass(const bodies *b)
{
    double m = 0;
    for (long i = 0; i < b->n; i++)
        m += b->pos[4 * i + 3];
    return m;
}

static void com(const bodies *b, double x[3], double v[3])
{
    double m = total_mass(b);
    for (int k = 0; k < 3; k++) {
        x[k] = v[k] = 0;
        for (long i = 0; i < b->n; i++) {
            x[k] += b->pos[4 * i + 3] * b->pos[4 * i + k] / m;
            v[k] += b->pos[4 * i + 3] * b->vel[3 * i + k] / m;
        }
    }
}

static void energies(const bodies *b, double *kin, double *pot)
{
    *kin = *pot = 0;
    for (long i = 0; i < b->n; i++) {
        const double *v = b->vel + 3 * i;
        *kin += 0.5 * b->pos[4 * i + 3] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (long j = i + 1; j < b->n; j++) {
            double r2 = 0;
            for (int k = 0; k < 3; k++)
                r2 += (b->pos[4 * i + k] - b->pos[4 * j + k]) * (b->pos[4 * i + k] - b->pos[4 * j + k]);
            *pot -= b->pos[4 * i + 3] * b->pos[4 * j + 3] / sqrt(r2);
        }
    }
}

static void test_every_generator_counts_mass_and_is_deterministic(void **state)
{
    for (const orr_ic_generator *const *g = orr_ic_generators(); *g; g++) {
        bodies a = make((*g)->name, 300, 7, NULL, 0), b = make((*g)->name, 300, 7, NULL, 0);
        assert_int_equal(a.n, (*g)->takes_n ? 300 : (*g)->count(0, (*g)->defaults));
        assert_memory_equal(a.pos, b.pos, sizeof(double) * 4 * a.n);
        assert_memory_equal(a.vel, b.vel, sizeof(double) * 3 * a.n);
        double m = total_mass(&a);
        print_message("%-16s n=%ld total mass %.15g\n", (*g)->name, a.n, m);
        if (strcmp((*g)->name, "kepler") == 0)
            assert_true(fabs(m - 1.001) < 1e-12);
        else if (strcmp((*g)->name, "solar_system") == 0)
            assert_true(fabs(m - 1.00134) < 1e-4);
        else
            assert_true(fabs(m - 1.0) < 1e-12);
        if ((*g)->takes_n) {
            bodies c = make((*g)->name, 300, 8, NULL, 0);
            assert_true(memcmp(a.pos, c.pos, sizeof(double) * 4 * a.n) != 0);
            done(&c);
        }
        done(&a);
        done(&b);
    }
}

static void test_plummer_equilibrium(void **state)
{
    bodies b = make("plummer", 4000, 3, NULL, 0);
    double x[3], v[3], kin, pot;
    com(&b, x, v);
    for (int k = 0; k < 3; k++) {
        assert_true(fabs(x[k]) < 1e-12);
        assert_true(fabs(v[k]) < 1e-12);
    }
    energies(&b, &kin, &pot);
    print_message("plummer n=4000: K=%.4f U=%.4f E=%.4f Q=K/|U|=%.4f\n", kin, pot, kin + pot,
                  kin / fabs(pot));
    assert_true(fabs(kin / fabs(pot) - 0.5) < 0.05);
    assert_true(fabs((kin + pot) + 0.25) < 0.02);
    done(&b);
}

static void test_kepler_energy(void **state)
{
    double p[5] = {2.0, 0.5, 1.5, 0.3, 1.0};
    bodies b = make("kepler", 0, 1, p, 5);
    double kin, pot;
    energies(&b, &kin, &pot);
    double want = -p[0] * p[1] / (2 * p[2]);
    assert_true(fabs(kin + pot - want) < 1e-12 * fabs(want));
    double x[3], v[3];
    com(&b, x, v);
    assert_true(fabs(x[0]) < 1e-15 && fabs(v[1]) < 1e-15);
    /* pericentre distance a (1 - e) */
    assert_true(fabs(b.pos[4] - b.pos[0] - p[2] * (1 - p[3])) < 1e-14);
    done(&b);
}

static void test_solar_system(void **state)
{
    bodies b = make("solar_system", 0, 1, NULL, 0);
    assert_int_equal(b.n, 9);
    double d[3], v[3], r = 0, s = 0;
    for (int k = 0; k < 3; k++) {
        d[k] = b.pos[4 * 3 + k] - b.pos[k];   /* Earth - Sun */
        v[k] = b.vel[3 * 3 + k] - b.vel[k];
        r += d[k] * d[k];
        s += v[k] * v[k];
    }
    print_message("Earth: %.5f AU from the Sun, speed %.5f (G = 1 units)\n", sqrt(r), sqrt(s));
    assert_true(fabs(sqrt(r) - 1) < 0.02);
    assert_true(fabs(sqrt(s) - 1) < 0.02);
    double jr = 0;
    for (int k = 0; k < 3; k++)
        jr += (b.pos[4 * 5 + k] - b.pos[k]) * (b.pos[4 * 5 + k] - b.pos[k]);
    assert_true(sqrt(jr) > 4.9 && sqrt(jr) < 5.5);   /* Jupiter */
    done(&b);
}

static void test_box_and_collapse(void **state)
{
    bodies b = make("random_box_2d", 500, 2, NULL, 0);
    for (long i = 0; i < b.n; i++) {
        assert_true(b.pos[4 * i] >= 0 && b.pos[4 * i] < 1);
        assert_true(b.pos[4 * i + 1] >= 0 && b.pos[4 * i + 1] < 1);
        assert_true(b.pos[4 * i + 2] == 0);
    }
    done(&b);
    double p[4] = {1.0, 1.0, 0.3, 1.0};
    bodies c = make("cold_collapse", 3000, 5, p, 4);
    double kin, pot;
    energies(&c, &kin, &pot);
    print_message("cold_collapse virial=0.3: K/|U| = %.3f\n", kin / fabs(pot));
    assert_true(fabs(kin / fabs(pot) - 0.3) < 0.03);
    done(&c);
    bodies g = make("galaxy_collision", 1000, 4, NULL, 0);
    double x[3], v[3];
    com(&g, x, v);
    assert_true(fabs(x[0]) < 1e-12 && fabs(v[0]) < 1e-12);
    done(&g);
}

/* Total mass and centre of mass (position and velocity) of every generator,
 * with parameters other than the defaults.  The recentred ones (and the
 * two-body and galaxy frames) are exact to rounding; the uniform ones are
 * random around the centre of their region: 5 standard deviations of the
 * mean position (sigma^2 = side^2 / 12 per axis in a cube or square,
 * radius^2 / 5 in a ball), at rest exactly. */
static void test_centre_of_mass(void **state)
{
    static const struct {
        const char *name;
        long n;
        int np;
        double p[5];
        double mass, x[3], sigma;   /* sigma 0: exact */
    } cases[] = {
        {"plummer", 1000, 1, {2}, 2, {0, 0, 0}, 0},
        {"uniform_cube", 2000, 2, {2, 3}, 3, {0, 0, 0}, 2 / 6.0},
        {"uniform_sphere", 2000, 2, {2, 3}, 3, {0, 0, 0}, 2 / 2.2360679775},
        {"random_box_2d", 2000, 2, {2, 3}, 3, {1, 1, 0}, 2 / 3.4641016151},
        {"cold_collapse", 2000, 4, {2, 3, 0.3, 1}, 3, {0, 0, 0}, 0},
        {"solar_system", 0, 0, {0}, 1.0013418, {0, 0, 0}, 0},
        {"kepler", 0, 5, {2, 0.5, 1.5, 0.3, 1}, 2.5, {0, 0, 0}, 0},
        {"galaxy_collision", 1000, 4, {3, 10, 2, 0.5}, 1, {0, 0, 0}, 0},
    };
    int covered = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bodies b = make(cases[c].name, cases[c].n, 5, cases[c].p, cases[c].np);
        double m = total_mass(&b), x[3], v[3];
        com(&b, x, v);
        double tol = cases[c].sigma > 0 ? 5 * cases[c].sigma / sqrt((double)b.n) : 1e-12;
        print_message("%-16s mass %.9g, centre (%.3g, %.3g, %.3g) within %.3g, velocity "
                      "(%.3g, %.3g, %.3g)\n", cases[c].name, m, x[0], x[1], x[2], tol, v[0],
                      v[1], v[2]);
        assert_true(fabs(m - cases[c].mass) < 1e-7 * cases[c].mass);
        for (int k = 0; k < 3; k++) {
            assert_true(fabs(x[k] - cases[c].x[k]) < tol);
            assert_true(fabs(v[k]) < 1e-12);
        }
        if (strcmp(cases[c].name, "random_box_2d") == 0)
            assert_true(x[2] == 0);
        done(&b);
        covered++;
    }
    /* every generator has a case */
    int count = 0;
    for (const orr_ic_generator *const *g = orr_ic_generators(); *g; g++)
        count++;
    assert_int_equal(covered, count);
}

/* Parameters out of range are named; so is a combination that overflows. */
static void test_extreme_params(void **state)
{
    double pos[4 * 16], vel[3 * 16];
    orr_error err = {0};
    const orr_ic_generator *g = orr_ic_find("plummer");
    double m[3] = {1e300, 1, 1};   /* mass, radius, G */
    assert_int_equal(orr_ic_generate(g, 16, 1, m, pos, vel, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "plummer: mass must be from 1e-100 to 1e+100 (got 1e+300)");
    m[0] = 1e-320;
    assert_int_equal(orr_ic_generate(g, 16, 1, m, pos, vel, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "plummer: mass must be from 1e-100 to 1e+100 (got 9.99989e-321)");
    m[0] = 1, m[1] = 1e300;
    assert_int_equal(orr_ic_generate(g, 16, 1, m, pos, vel, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "plummer: radius must be from 1e-100 to 1e+100 (got 1e+300)");
    m[1] = 1, m[2] = 0;
    assert_int_equal(orr_ic_generate(g, 16, 1, m, pos, vel, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "plummer: G must be positive (got 0)");
    g = orr_ic_find("galaxy_collision");
    double gc[4] = {1, 10, 1, 5};
    assert_int_equal(orr_ic_generate(g, 16, 1, gc, pos, vel, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "galaxy_collision: v_ratio must be in [0, 1) for a bound orbit "
                                 "(got 5)");
    g = orr_ic_find("kepler");
    double kp[5] = {1e100, 1e100, 1e-100, 0.999999999999, 1e100};
    assert_int_equal(orr_ic_generate(g, 0, 1, kp, pos, vel, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "kepler: body 1 would have vy = -inf with m1=1e+100, m2=1e+100, "
                                 "a=1e-100, e=0.999999999999, G=1e+100: use less extreme values");
    /* the extremes of the range still give finite bodies */
    g = orr_ic_find("plummer");
    for (double x = 1e-100; x < 1e101; x *= 1e100) {
        double q[3] = {x, 1 / x, x};
        TU_OK(orr_ic_generate(g, 16, 1, q, pos, vel, &err), &err);
        for (int i = 0; i < 4 * 16; i++)
            assert_true(isfinite(pos[i]));
        for (int i = 0; i < 3 * 16; i++)
            assert_true(isfinite(vel[i]));
    }
    orr_error_clear(&err);
}

/* plummer's radius and G scale Henon units: lengths by radius, velocities
 * by sqrt(G / radius), masses untouched, bit for bit the unscaled sphere's
 * times those factors. */
static void test_plummer_scaled(void **state)
{
    double p0[4 * 64], v0[3 * 64], p1[4 * 64], v1[3 * 64];
    orr_error err = {0};
    const orr_ic_generator *g = orr_ic_find("plummer");
    double a[3] = {2e4, 1, 1}, b[3] = {2e4, 12, 4.3e-3};
    TU_OK(orr_ic_generate(g, 64, 9, a, p0, v0, &err), &err);
    TU_OK(orr_ic_generate(g, 64, 9, b, p1, v1, &err), &err);
    const double vs = sqrt(4.3e-3 / 12);
    for (int i = 0; i < 64; i++) {
        for (int k = 0; k < 3; k++) {
            assert_true(p1[4 * i + k] == p0[4 * i + k] * 12);
            assert_true(v1[3 * i + k] == v0[3 * i + k] * vs);
        }
        assert_true(p1[4 * i + 3] == p0[4 * i + 3]);
    }
}

static void test_bad_params(void **state)
{
    const orr_ic_generator *g = orr_ic_find("kepler");
    double p[5] = {1, 1, 1, 1.5, 1}, pos[8], vel[6];
    orr_error err = {0};
    assert_int_equal(g->generate(2, 1, p, pos, vel, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "kepler: e must be in [0, 1) (got 1.5)");
    g = orr_ic_find("plummer");
    double m[3] = {-1, 1, 1};   /* mass, radius, G */
    assert_int_equal(g->generate(10, 1, m, pos, vel, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "plummer: mass must be positive (got -1)");
    assert_null(orr_ic_find("nope"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_generator_counts_mass_and_is_deterministic),
        cmocka_unit_test(test_plummer_equilibrium),
        cmocka_unit_test(test_kepler_energy),
        cmocka_unit_test(test_solar_system),
        cmocka_unit_test(test_box_and_collapse),
        cmocka_unit_test(test_centre_of_mass),
        cmocka_unit_test(test_extreme_params),
        cmocka_unit_test(test_plummer_scaled),
        cmocka_unit_test(test_bad_params),
    };
    return cmocka_run_group_tests_name("ic", tests, NULL, NULL);
}
