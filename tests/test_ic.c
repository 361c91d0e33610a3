/* test_ic: the initial-condition generators: body counts, total mass, centre
 * of mass, determinism per seed, and the physics each promises (Plummer in
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

static void test_bad_params(void **state)
{
    const orr_ic_generator *g = orr_ic_find("kepler");
    double p[5] = {1, 1, 1, 1.5, 1}, pos[8], vel[6];
    orr_error err = {0};
    assert_int_equal(g->generate(2, 1, p, pos, vel, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "kepler: e must be in [0, 1) (got 1.5)");
    g = orr_ic_find("plummer");
    double m = -1;
    assert_int_equal(g->generate(10, 1, &m, pos, vel, &err), ORR_ERR_ARG);
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
        cmocka_unit_test(test_bad_params),
    };
    return cmocka_run_group_tests_name("ic", tests, NULL, NULL);
}
