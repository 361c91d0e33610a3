/* test_sim: the simulation layer on the CPU backend: Kepler orbits closing
 * after one period, energy conservation in a Plummer sphere, the order of
 * each integrator (errors falling 2x, 4x, 16x when dt halves), momentum and
 * angular momentum, Euler damping, the 2D and 3D periodic boxes, the host mirror,
 * text output, validation messages and interruption. */
#include "testutil.h"
#include "textio.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "ic.h"
#include "sim.h"

static orr_sim_config base_config(long n, orr_precision prec, const char *integ, double eps,
                                  double dt)
{
    orr_sim_config c;
    orr_sim_config_default(&c);
    c.n = n;
    c.precision = prec;
    c.integrator = integ;
    c.softening = eps;
    c.dt = dt;
    c.backend = ORR_BACKEND_CPU;
    return c;
}

static orr_sim *make_sim(const orr_sim_config *c)
{
    orr_error err = {0};
    orr_sim *s = NULL;
    TU_OK(orr_sim_create(&s, c, NULL, 0, &err), &err);
    assert_non_null(s);
    return s;
}

/* Copies pos[4n] and vel[3n] into the simulation's mirror and marks it. */
static void load_state(orr_sim *s, const double *pos, const double *vel)
{
    orr_error err = {0};
    double *p = NULL, *v = NULL;
    TU_OK(orr_sim_pos(s, &p, &err), &err);
    TU_OK(orr_sim_vel(s, &v, &err), &err);
    long n = orr_sim_n(s);
    memcpy(p, pos, sizeof(double) * 4 * (size_t)n);
    memcpy(v, vel, sizeof(double) * 3 * (size_t)n);
    orr_sim_touch(s);
}

static double total_energy(orr_sim *s)
{
    orr_error err = {0};
    double k = 0, u = 0;
    TU_OK(orr_sim_energy(s, &k, &u, &err), &err);
    return k + u;
}

/* ---- Kepler ---------------------------------------------------------------- */

/* Two bodies on a Kepler orbit of semi-major axis a and eccentricity e, at
 * true anomaly f, in the centre-of-mass frame, G = 1. */
static void kepler_setup(double m1, double m2, double a, double e, double f, double *pos,
                         double *vel)
{
    const double mt = m1 + m2, p = a * (1 - e * e);
    const double r = p / (1 + e * cos(f)), vs = sqrt(mt / p);
    const double rel[3] = {r * cos(f), r * sin(f), 0};
    const double relv[3] = {-vs * sin(f), vs * (e + cos(f)), 0};
    for (int k = 0; k < 3; k++) {
        pos[k] = -m2 / mt * rel[k];
        pos[4 + k] = m1 / mt * rel[k];
        vel[k] = -m2 / mt * relv[k];
        vel[3 + k] = m1 / mt * relv[k];
    }
    pos[3] = m1;
    pos[7] = m2;
}

/* Integrates one period in nsteps steps; returns max |x - x0| / a. */
static double kepler_error(const char *integ, double m2, double e, double f, long nsteps)
{
    orr_error err = {0};
    const double m1 = 1, a = 1, period = 2 * M_PI * sqrt(a * a * a / (m1 + m2));
    double pos0[8], vel0[6];
    kepler_setup(m1, m2, a, e, f, pos0, vel0);
    orr_sim_config c = base_config(2, ORR_DOUBLE, integ, 0, period / (double)nsteps);
    orr_sim *s = make_sim(&c);
    load_state(s, pos0, vel0);
    TU_OK(orr_sim_step(s, nsteps, NULL, &err), &err);
    assert_int_equal(orr_sim_steps(s), nsteps);
    assert_true(fabs(orr_sim_time(s) - period) <= 1e-12 * period);
    double *pos = NULL;
    TU_OK(orr_sim_pos(s, &pos, &err), &err);
    double worst = 0;
    for (int b = 0; b < 2; b++) {
        double d2 = 0;
        for (int k = 0; k < 3; k++)
            d2 += (pos[4 * b + k] - pos0[4 * b + k]) * (pos[4 * b + k] - pos0[4 * b + k]);
        if (sqrt(d2) / a > worst)
            worst = sqrt(d2) / a;
    }
    orr_sim_destroy(s);
    return worst;
}

/* Leapfrog's phase error grows as dt^2 and is made mostly at pericentre: the
 * circular orbit closes to ~2e-7 with T/dt = 20000, the e = 0.5 one needs
 * T/dt = 100000 for the same (4.4e-6 at 20000). */
static void test_kepler_closes(void **state)
{
    const double masses[] = {1e-3, 1.0}, eccs[] = {0.0, 0.5};
    const long nsteps[] = {20000, 100000};
    for (int im = 0; im < 2; im++)
        for (int ie = 0; ie < 2; ie++) {
            double rel = kepler_error("leapfrog", masses[im], eccs[ie], 0.0, nsteps[ie]);
            print_message("kepler leapfrog m2=%g e=%g, T/dt=%ld: |x - x0|/a = %.3e\n",
                          masses[im], eccs[ie], nsteps[ie], rel);
            assert_true(rel < 1e-6);
        }
}

/* Advancing to a time that is not a whole number of steps lands on it: a
 * circular orbit (yoshida4, T/dt = 5000) advanced to 0.3719 T sits where
 * the analytic orbit is, rotated by 2 pi 0.3719 about the centre of mass;
 * going back in time is refused. */
static void test_advance_to_time(void **state)
{
    orr_error err = {0};
    const double m1 = 1, m2 = 1e-3, period = 2 * M_PI / sqrt(m1 + m2), t_end = 0.3719 * period;
    double pos0[8], vel0[6];
    kepler_setup(m1, m2, 1.0, 0.0, 0.0, pos0, vel0);
    orr_sim_config c = base_config(2, ORR_DOUBLE, "yoshida4", 0, period / 5000);
    orr_sim *s = make_sim(&c);
    load_state(s, pos0, vel0);
    TU_OK(orr_sim_advance(s, t_end, NULL, &err), &err);
    assert_int_equal(orr_sim_steps(s), 1860);   /* 1859 whole steps and a shortened one */
    assert_true(fabs(orr_sim_time(s) - t_end) <= 1e-12 * t_end);
    double *pos = NULL;
    TU_OK(orr_sim_pos(s, &pos, &err), &err);
    const double phi = 2 * M_PI * 0.3719;
    for (int b = 0; b < 2; b++) {
        const double x = pos0[4 * b] * cos(phi) - pos0[4 * b + 1] * sin(phi);
        const double y = pos0[4 * b] * sin(phi) + pos0[4 * b + 1] * cos(phi);
        assert_true(hypot(pos[4 * b] - x, pos[4 * b + 1] - y) < 1e-9);
    }
    TU_OK(orr_sim_advance(s, t_end, NULL, &err), &err);   /* already there: no step */
    assert_int_equal(orr_sim_steps(s), 1860);
    assert_int_equal(orr_sim_advance(s, 0.5 * t_end, NULL, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "time to advance to must be finite and not before the "
                                    "current time"));
    orr_error_clear(&err);
    orr_sim_destroy(s);
}

/* At a large clock the stop test is the clock's resolution, not 1e-12 dt
 * (below the spacing of doubles there): from t = 300 with dt = 1e-3, every
 * advance by 0.1 takes 100 steps, none a 101st tiny one, and lands on its
 * time; a time within the resolution takes no step. */
static void test_advance_large_clock(void **state)
{
    orr_error err = {0};
    orr_sim_config c = base_config(1, ORR_DOUBLE, "leapfrog", 0, 1e-3);
    orr_sim *s = make_sim(&c);
    TU_OK(orr_sim_set_clock(s, 300, 0, &err), &err);
    long other = 0;
    for (int k = 0; k < 300; k++) {
        const long s0 = orr_sim_steps(s);
        const double t_end = orr_sim_time(s) + 0.1;
        TU_OK(orr_sim_advance(s, t_end, NULL, &err), &err);
        other += orr_sim_steps(s) - s0 != 100;
        assert_true(fabs(orr_sim_time(s) - t_end) <= 1e-12);
    }
    assert_int_equal(other, 0);
    assert_int_equal(orr_sim_steps(s), 30000);
    TU_OK(orr_sim_advance(s, nextafter(orr_sim_time(s), INFINITY), NULL, &err), &err);
    assert_int_equal(orr_sim_steps(s), 30000);
    assert_true(orr_sim_time_tolerance(1e-3, 300, 300.1) > 1e-13);
    assert_true(orr_sim_time_tolerance(1e-3, 300, 300.1) < 1e-12);
    assert_true(orr_sim_time_tolerance(0.1, 0, 0.35) == 1e-13);
    orr_sim_destroy(s);
}

/* Block time steps (hermite): every body's step is a power-of-two fraction
 * of dt_max (its checkpoint field "step", a time), the steps in use
 * differ, and after each step every body is at the same time, a multiple of
 * dt_max (or the end of a shortened last interval, whose steps are
 * power-of-two fractions of it). */
static void test_block_steps(void **state)
{
    enum { N = 200 };
    orr_error err = {0};
    double pos[4 * N], vel[3 * N];
    TU_OK(orr_ic_plummer(N, 31, 1.0, pos, vel, &err), &err);
    orr_sim_config c = base_config(N, ORR_DOUBLE, "hermite", 1e-3, 1.0 / 16);
    c.backend = ORR_BACKEND_CPU;
    orr_sim *s = make_sim(&c);
    load_state(s, pos, vel);
    TU_OK(orr_sim_step(s, 3, NULL, &err), &err);
    assert_true(orr_sim_time(s) == 3.0 / 16);
    double dt[N], smallest = 1;
    TU_OK(orr_sim_integ_field(s, 2, dt, &err), &err);
    int distinct = 0;
    for (int i = 0; i < N; i++) {
        int e;
        dt[i] *= 16;   /* as a fraction of dt_max */
        assert_true(frexp(dt[i], &e) == 0.5);   /* a power of two */
        assert_true(dt[i] <= 1 && dt[i] >= ldexp(1, -40));
        distinct += dt[i] != dt[0];
        smallest = dt[i] < smallest ? dt[i] : smallest;
    }
    assert_true(distinct > 0);
    orr_block_stats bs;
    assert_int_equal(orr_sim_blocks(s, &bs), 1);
    const long blocks = bs.blocks, active = bs.active;
    const double small = bs.smallest;
    print_message("%ld blocks, %.1f active each, smallest step %g of dt_max now, %g in the last "
                  "interval\n", blocks, (double)active / blocks, smallest, small * 16);
    assert_true(blocks > 3 && active < (long)N * blocks);
    /* a shortened last interval still ends with every body at its end */
    TU_OK(orr_sim_advance(s, 0.2, NULL, &err), &err);
    assert_true(fabs(orr_sim_time(s) - 0.2) <= 1e-15);
    TU_OK(orr_sim_integ_field(s, 2, dt, &err), &err);
    const double h = 0.2 - 3.0 / 16;   /* the shortened interval */
    for (int i = 0; i < N; i++) {
        int e;
        assert_true(frexp(dt[i] / h, &e) == 0.5);
    }
    orr_sim_destroy(s);
}

static void test_restored_steps(void **state)
{
    tu_check_restored_steps(ORR_BACKEND_CPU);
}

/* An integrator of one's own, with state: it counts each body's steps (its
 * checkpoint field) and how often it was asked to synchronise. */
typedef struct {
    long n;
    double *count;
    int syncs;
} counting_state;

static int counting_destroyed;

static orr_status counting_create(void **state, long n, orr_error *err)
{
    counting_state *c = calloc(1, sizeof *c);
    c->n = n;
    c->count = calloc((size_t)n, sizeof(double));
    *state = c;
    return ORR_OK;
}

static void counting_destroy(void *state)
{
    counting_state *c = state;
    free(c->count);
    free(c);
    counting_destroyed++;
}

static orr_status counting_step(void *state, orr_integ_env *env, orr_error *err)
{
    counting_state *c = state;
    orr_status st = orr_engine_force(env->engine, orr_engine_all(env->engine), err);
    if (!st)
        st = orr_engine_kick(env->engine, env->dt, 1.0, err);
    if (!st)
        st = orr_engine_drift(env->engine, env->dt, err);
    for (long i = 0; i < c->n; i++)
        c->count[i] += 1;
    return st;
}

static orr_status counting_sync(void *state, orr_integ_env *env, orr_error *err)
{
    ((counting_state *)state)->syncs++;
    return ORR_OK;
}

static orr_status counting_get(void *state, int k, double *out, orr_error *err)
{
    counting_state *c = state;
    memcpy(out, c->count, sizeof(double) * (size_t)c->n);
    return ORR_OK;
}

static orr_status counting_set(void *state, orr_integ_env *env, int k, int legacy,
                               const double *in, orr_error *err)
{
    counting_state *c = state;
    memcpy(c->count, in, sizeof(double) * (size_t)c->n);
    return ORR_OK;
}

static const orr_integrator counting = {
    .name = "counting", .order = 1, .forces_per_step = 1, .create = counting_create,
    .destroy = counting_destroy, .step = counting_step, .synchronize = counting_sync,
    .nfields = 1, .fields = {{"count", 1, NULL}}, .get_field = counting_get, .set_field = counting_set};

static void test_integrator_with_state(void **state)
{
    orr_error err = {0};
    enum { N = 37 };
    double pos[4 * N], vel[3 * N], *p = NULL, got[N], back[N];
    tu_random_bodies(N, 99, pos, vel);
    orr_sim_config c = base_config(N, ORR_DOUBLE, NULL, 0.05, 1e-3);
    c.integrator_impl = &counting;
    counting_destroyed = 0;
    orr_sim *s = make_sim(&c);
    assert_string_equal(orr_sim_config_of(s)->integrator, "counting");
    assert_ptr_equal(orr_sim_integrator(s), &counting);
    load_state(s, pos, vel);
    TU_OK(orr_sim_step(s, 3, NULL, &err), &err);
    TU_OK(orr_sim_pos(s, &p, &err), &err);
    TU_OK(orr_sim_pos(s, &p, &err), &err);   /* up to date: no second synchronisation */
    TU_OK(orr_sim_integ_field(s, 0, got, &err), &err);
    for (int i = 0; i < N; i++)
        assert_true(got[i] == 3);
    for (int i = 0; i < N; i++)
        back[i] = i;
    TU_OK(orr_sim_set_integ_field(s, 0, 0, back, &err), &err);
    TU_OK(orr_sim_step(s, 1, NULL, &err), &err);
    TU_OK(orr_sim_integ_field(s, 0, got, &err), &err);
    for (int i = 0; i < N; i++)
        assert_true(got[i] == i + 1);
    assert_int_equal(orr_sim_integ_field(s, 1, got, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "integrator 'counting' has no checkpoint field 1");
    orr_error_clear(&err);

    /* a checkpoint carries the field (group Integrator) and restores it;
     * restored with leapfrog instead, the unused field is ignored */
    char dir[4096], path[4200];
    tu_temp_dir(dir, sizeof dir, "orrery-integ");
    snprintf(path, sizeof path, "%s/ck.hdf5", dir);
    TU_OK(orr_checkpoint_write(s, path, NULL, &err), &err);
    orr_checkpoint ck;
    TU_OK(orr_checkpoint_read(path, &ck, &err), &err);
    assert_int_equal(ck.nfields, 1);
    assert_string_equal(ck.field_name[0], "count");
    ck.config.integrator_impl = &counting;
    orr_sim *r = NULL;
    TU_OK(orr_checkpoint_restore(&ck, &r, NULL, 0, &err), &err);
    TU_OK(orr_sim_integ_field(r, 0, back, &err), &err);
    assert_memory_equal(got, back, sizeof got);
    TU_OK(orr_sim_step(r, 2, NULL, &err), &err);
    TU_OK(orr_sim_step(s, 2, NULL, &err), &err);
    double *pr = NULL;
    TU_OK(orr_sim_pos(s, &p, &err), &err);
    TU_OK(orr_sim_pos(r, &pr, &err), &err);
    assert_memory_equal(p, pr, sizeof(double) * 4 * N);   /* bitwise continuation */
    orr_sim_destroy(r);
    ck.config.integrator_impl = NULL;   /* "counting" is not a built-in name: */
    assert_int_equal(orr_checkpoint_restore(&ck, &r, NULL, 0, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "unknown integrator 'counting'"));
    orr_error_clear(&err);
    orr_checkpoint_free(&ck);
    orr_sim_destroy(s);
    assert_int_equal(counting_destroyed, 2);
}

/* ---- order of the integrators ---------------------------------------------- */

static void test_convergence(void **state)
{
    struct {
        const char *integ;
        double f;          /* starting true anomaly */
        long nsteps;
        double lo, hi;     /* accepted error ratio for dt -> dt/2 */
    } cases[] = {
        {"yoshida4", 0.0, 200, 12, 1e9},
        {"leapfrog", 0.0, 1000, 3, 1e9},
        {"euler", M_PI / 2, 2000, 1.5, 2.5},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        double e1 = kepler_error(cases[k].integ, 1e-3, 0.5, cases[k].f, cases[k].nsteps);
        double e2 = kepler_error(cases[k].integ, 1e-3, 0.5, cases[k].f, 2 * cases[k].nsteps);
        double ratio = e1 / e2;
        print_message("%s on kepler e=0.5: error %.3e at T/%ld, %.3e at T/%ld: ratio %.2f\n",
                      cases[k].integ, e1, cases[k].nsteps, e2, 2 * cases[k].nsteps, ratio);
        assert_true(ratio >= cases[k].lo && ratio <= cases[k].hi);
    }
}

/* ---- conservation ---------------------------------------------------------- */

static void test_energy_plummer(void **state)
{
    orr_error err = {0};
    const long n = 1024, steps = 1000;
    double *pos = malloc(sizeof(double) * 4 * n), *vel = malloc(sizeof(double) * 3 * n);
    TU_OK(orr_ic_plummer(n, 1, 1.0, pos, vel, &err), &err);
    orr_sim_config c = base_config(n, ORR_FLOAT, "leapfrog", 0.05, 0.002);
    orr_sim *s = make_sim(&c);
    load_state(s, pos, vel);
    double e0 = total_energy(s);
    TU_OK(orr_sim_step(s, steps, NULL, &err), &err);
    double e1 = total_energy(s);
    double drift = fabs(e1 - e0) / fabs(e0);
    print_message("plummer n=%ld float leapfrog eps=0.05 dt=0.002, %ld steps: E0 = %.8f, "
                  "|dE/E0| = %.3e\n", n, steps, e0, drift);
    assert_true(drift < 1e-4);
    assert_true(fabs(orr_sim_time(s) - steps * 0.002) < 1e-12);
    orr_sim_destroy(s);
    free(pos);
    free(vel);
}

static double norm3(const double v[3])
{
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

static void test_momentum(void **state)
{
    orr_error err = {0};
    const long n = 512;
    double *pos = malloc(sizeof(double) * 4 * n), *vel = malloc(sizeof(double) * 3 * n);
    TU_OK(orr_ic_plummer(n, 2, 1.0, pos, vel, &err), &err);
    orr_sim_config c = base_config(n, ORR_DOUBLE, "leapfrog", 0.01, 0.005);
    orr_sim *s = make_sim(&c);
    load_state(s, pos, vel);
    /* recentre in the simulation's own arithmetic */
    double cx[3], cv[3], mass = 0;
    TU_OK(orr_sim_center_of_mass(s, cx, cv, &mass, &err), &err);
    assert_true(fabs(mass - 1) < 1e-12);
    for (long i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            pos[4 * i + k] -= cx[k];
            vel[3 * i + k] -= cv[k];
        }
    load_state(s, pos, vel);
    double p0[3], l0[3], p1[3], l1[3];
    TU_OK(orr_sim_momentum(s, p0, &err), &err);
    TU_OK(orr_sim_angular_momentum(s, l0, &err), &err);
    TU_OK(orr_sim_step(s, 200, NULL, &err), &err);
    TU_OK(orr_sim_momentum(s, p1, &err), &err);
    TU_OK(orr_sim_angular_momentum(s, l1, &err), &err);
    double dl[3] = {l1[0] - l0[0], l1[1] - l0[1], l1[2] - l0[2]};
    double lrel = norm3(dl) / norm3(l0);
    print_message("plummer n=%ld double leapfrog, 200 steps: |P| %.3e -> %.3e, |L| = %.6e, "
                  "|dL|/|L| = %.3e\n", n, norm3(p0), norm3(p1), norm3(l0), lrel);
    assert_true(norm3(p0) < 1e-14);
    assert_true(norm3(p1) < 1e-12);
    assert_true(lrel < 1e-10);
    orr_sim_destroy(s);
    free(pos);
    free(vel);
}

/* ---- Euler damping ------------------------------------------------------------ */

static double kinetic(orr_sim *s)
{
    orr_error err = {0};
    double k = 0;
    TU_OK(orr_sim_energy(s, &k, NULL, &err), &err);
    return k;
}

static void test_euler_damping(void **state)
{
    orr_error err = {0};
    const long n = 256;
    double *pos = malloc(sizeof(double) * 4 * n), *vel = malloc(sizeof(double) * 3 * n);
    TU_OK(orr_ic_uniform_cube(n, 3, 1.0, pos, vel, &err), &err);
    orr_sim_config c = base_config(n, ORR_DOUBLE, "euler", 0.05, 0.01);
    orr_sim *free_run = make_sim(&c);
    c.damping = 0.95;
    orr_sim *damped = make_sim(&c);
    load_state(free_run, pos, vel);
    load_state(damped, pos, vel);
    /* from rest: v = a dt d, so one step gives exactly d^2 the kinetic energy */
    TU_OK(orr_sim_step(free_run, 1, NULL, &err), &err);
    TU_OK(orr_sim_step(damped, 1, NULL, &err), &err);
    double kf = kinetic(free_run), kd = kinetic(damped);
    print_message("cold cube, one euler step: K %.6e free, %.6e damped (ratio %.6f)\n", kf, kd,
                  kd / kf);
    assert_true(kf > 0);
    assert_true(fabs(kd / kf - 0.95 * 0.95) < 1e-12);
    TU_OK(orr_sim_step(free_run, 49, NULL, &err), &err);
    TU_OK(orr_sim_step(damped, 49, NULL, &err), &err);
    kf = kinetic(free_run);
    kd = kinetic(damped);
    print_message("cold cube, 50 euler steps: K %.6e free, %.6e damped\n", kf, kd);
    assert_true(kd < 0.5 * kf);
    orr_sim_destroy(free_run);
    orr_sim_destroy(damped);

    /* without forces (G = 0) damping alone takes d^2 of K every step */
    for (long i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            vel[3 * i + k] = (double)((i * 7 + k * 3) % 11) - 5;
    c.G = 0;
    orr_sim *s = make_sim(&c);
    load_state(s, pos, vel);
    double k0 = kinetic(s);
    for (int step = 0; step < 5; step++) {
        TU_OK(orr_sim_step(s, 1, NULL, &err), &err);
        double k1 = kinetic(s);
        assert_true(fabs(k1 / k0 - 0.95 * 0.95) < 1e-12);
        k0 = k1;
    }
    orr_sim_destroy(s);
    free(pos);
    free(vel);
}

/* ---- periodic box, 2D -------------------------------------------------------- */

/* One step of the pair pos2 (bodies 0 and 1, at rest, unsoftened) with the
 * box on `axis` as in c (periodic) and with that axis open: the velocity
 * components along `axis`, v[0] in the box, v[1] open; every other
 * component must stay exactly 0.  c->n, softening and dt are set here. */
static void pull_across(orr_sim_config *c, const double pos2[8], int axis, double v[2][2])
{
    orr_error err = {0};
    const double vel2[6] = {0}, len = c->box[axis];
    c->n = 2;
    c->softening = 0;
    c->dt = 1e-4;
    for (int open = 0; open < 2; open++) {
        c->box[axis] = open ? 0 : len;
        orr_sim *s = make_sim(c);
        load_state(s, pos2, vel2);
        TU_OK(orr_sim_step(s, 1, NULL, &err), &err);
        double *vv = NULL;
        TU_OK(orr_sim_vel(s, &vv, &err), &err);
        v[open][0] = vv[axis];
        v[open][1] = vv[3 + axis];
        for (int k = 0; k < 3; k++)
            assert_true(k == axis || (vv[k] == 0 && vv[3 + k] == 0));
        orr_sim_destroy(s);
    }
    c->box[axis] = len;
}

static void test_periodic_2d(void **state)
{
    orr_error err = {0};
    const long n = 64;
    double pos[4 * 64], vel[3 * 64];
    uint64_t seed = 6;
    for (long i = 0; i < n; i++) {
        int axis = (int)(i % 2), low = (int)((i / 2) % 2);
        double *x = pos + 4 * i, *v = vel + 3 * i;
        x[axis] = low ? 0.02 * tu_rand(&seed) : 1 - 0.02 * tu_rand(&seed);
        x[1 - axis] = tu_rand(&seed);
        x[2] = tu_rand(&seed) - 0.5;                 /* dropped: the run is 2D */
        x[3] = 1e-6 / n;                            /* light: the motion is ballistic */
        v[axis] = low ? -0.5 : 0.5;                  /* outward */
        v[1 - axis] = 0.2 * (tu_rand(&seed) - 0.5);
        v[2] = 1.0;                                  /* dropped too */
    }
    orr_sim_config c = base_config(n, ORR_DOUBLE, "leapfrog", 0.01, 0.01);
    c.dims = 2;
    c.box[0] = c.box[1] = 1;
    orr_sim *s = make_sim(&c);
    load_state(s, pos, vel);
    TU_OK(orr_sim_step(s, 30, NULL, &err), &err);
    double *p = NULL, *v = NULL;
    TU_OK(orr_sim_pos(s, &p, &err), &err);
    TU_OK(orr_sim_vel(s, &v, &err), &err);
    long crossed = 0;
    for (long i = 0; i < n; i++) {
        for (int k = 0; k < 2; k++) {
            assert_true(p[4 * i + k] >= 0 && p[4 * i + k] < 1);
        }
        assert_true(p[4 * i + 2] == 0);
        assert_true(v[3 * i + 2] == 0);
        int axis = (int)(i % 2);
        if (fabs(p[4 * i + axis] - pos[4 * i + axis]) > 0.5)
            crossed++;
    }
    print_message("2D box: %ld of %ld bodies crossed an edge in 30 steps\n", crossed, n);
    assert_int_equal(crossed, n);
    orr_sim_destroy(s);

    /* two bodies at x = 0.05 and 0.95: the nearest image is across the edge */
    const double pos2[8] = {0.05, 0.5, 0, 0.5, 0.95, 0.5, 0, 0.5};
    double vx[2][2];
    pull_across(&c, pos2, 0, vx);
    print_message("pair across the edge: vx = %.6e, %.6e in the box; %.6e, %.6e open\n",
                  vx[0][0], vx[0][1], vx[1][0], vx[1][1]);
    assert_true(vx[0][0] < 0 && vx[0][1] > 0);
    assert_true(vx[1][0] > 0 && vx[1][1] < 0);
    /* separation 0.1 against 0.9: 81 times the pull */
    assert_true(fabs(vx[0][0] / vx[1][0] + 81) < 1e-4 * 81);
}

/* ---- periodic box, 3D -------------------------------------------------------- */

/* A 3D box of different lengths on each axis, float and double: bodies
 * leaving through each face come back in [0, L) on every axis, and a pair
 * across the z faces attracts through the boundary (minimum image). */
static void test_periodic_3d(void **state)
{
    orr_error err = {0};
    const double L[3] = {1, 1.5, 2};
    const long n = 96;
    double pos[4 * 96], vel[3 * 96];
    for (int prec = 0; prec < 2; prec++) {
        uint64_t seed = 11;
        for (long i = 0; i < n; i++) {
            int axis = (int)(i % 3), low = (int)((i / 3) % 2);
            double *x = pos + 4 * i, *v = vel + 3 * i;
            for (int k = 0; k < 3; k++) {
                x[k] = L[k] * (0.1 + 0.8 * tu_rand(&seed));
                v[k] = 0.2 * (tu_rand(&seed) - 0.5);
            }
            x[axis] = low ? 0.02 * tu_rand(&seed) : L[axis] - 0.02 * tu_rand(&seed);
            v[axis] = low ? -0.5 : 0.5;   /* outward */
            x[3] = 1e-6 / n;              /* light: the motion is ballistic */
        }
        orr_sim_config c = base_config(n, prec ? ORR_DOUBLE : ORR_FLOAT, "leapfrog", 0.01, 0.01);
        memcpy(c.box, L, sizeof L);
        orr_sim *s = make_sim(&c);
        load_state(s, pos, vel);
        TU_OK(orr_sim_step(s, 30, NULL, &err), &err);
        double *p = NULL;
        TU_OK(orr_sim_pos(s, &p, &err), &err);
        long crossed = 0;
        for (long i = 0; i < n; i++) {
            for (int k = 0; k < 3; k++) {
                if (!(p[4 * i + k] >= 0 && p[4 * i + k] < L[k]))
                    fail_msg("%s: body %ld axis %d at %.9g, outside [0, %g)",
                             prec ? "double" : "float", i, k, p[4 * i + k], L[k]);
            }
            int axis = (int)(i % 3);
            if (fabs(p[4 * i + axis] - pos[4 * i + axis]) > 0.5 * L[axis])
                crossed++;
        }
        print_message("3D box (%s): %ld of %ld bodies crossed a face in 30 steps\n",
                      prec ? "double" : "float", crossed, n);
        assert_int_equal(crossed, n);
        orr_sim_destroy(s);

        /* z = 0.1 and 1.9 in a box of Lz = 2: the nearest image is across the
         * z faces, 0.2 away instead of 1.8 (81 times the pull) */
        const double pos2[8] = {0.5, 0.75, 0.1, 0.5, 0.5, 0.75, 1.9, 0.5};
        double vz[2][2];
        pull_across(&c, pos2, 2, vz);
        print_message("%s pair across the z faces: vz = %.6e, %.6e in the box; %.6e, %.6e "
                      "open\n", prec ? "double" : "float", vz[0][0], vz[0][1], vz[1][0],
                      vz[1][1]);
        assert_true(vz[0][0] < 0 && vz[0][1] > 0);
        assert_true(vz[1][0] > 0 && vz[1][1] < 0);
        assert_true(fabs(vz[0][0] / vz[1][0] + 81) < (prec ? 1e-4 : 1e-3) * 81);
    }
}

/* ---- host mirror ------------------------------------------------------------- */

static void test_host_mirror(void **state)
{
    orr_error err = {0};
    const long n = 300;
    double *pos = malloc(sizeof(double) * 4 * n), *vel = malloc(sizeof(double) * 3 * n);
    double *pos_b = malloc(sizeof(double) * 4 * n), *vel_b = malloc(sizeof(double) * 3 * n);
    TU_OK(orr_ic_plummer(n, 7, 1.0, pos, vel, &err), &err);
    orr_sim_config c = base_config(n, ORR_FLOAT, "leapfrog", 0.02, 0.005);
    orr_sim *a = make_sim(&c), *ref = make_sim(&c), *b = make_sim(&c);
    load_state(a, pos, vel);
    load_state(ref, pos, vel);
    TU_OK(orr_sim_step(a, 10, NULL, &err), &err);
    TU_OK(orr_sim_step(ref, 10, NULL, &err), &err);

    /* edit body 3 through the mirror of a */
    double *p = NULL, *v = NULL;
    TU_OK(orr_sim_pos(a, &p, &err), &err);
    TU_OK(orr_sim_vel(a, &v, &err), &err);
    p[4 * 3 + 0] += 0.25;
    v[3 * 3 + 1] -= 0.125;
    orr_sim_touch(a);
    memcpy(pos_b, p, sizeof(double) * 4 * n);
    memcpy(vel_b, v, sizeof(double) * 3 * n);
    load_state(b, pos_b, vel_b);   /* the same state from scratch */

    TU_OK(orr_sim_step(a, 10, NULL, &err), &err);
    TU_OK(orr_sim_step(ref, 10, NULL, &err), &err);
    TU_OK(orr_sim_step(b, 10, NULL, &err), &err);
    double *pa, *va, *pb, *vb, *pr;
    TU_OK(orr_sim_pos(a, &pa, &err), &err);
    TU_OK(orr_sim_vel(a, &va, &err), &err);
    TU_OK(orr_sim_pos(b, &pb, &err), &err);
    TU_OK(orr_sim_vel(b, &vb, &err), &err);
    TU_OK(orr_sim_pos(ref, &pr, &err), &err);
    assert_memory_equal(pa, pb, sizeof(double) * 4 * n);
    assert_memory_equal(va, vb, sizeof(double) * 3 * n);
    double moved = pa[4 * 3] - pr[4 * 3];
    print_message("mirror edit: body 3 ends %.4f further in x than without the edit\n", moved);
    assert_true(fabs(moved - 0.25) < 0.05);
    assert_int_equal(orr_sim_steps(a), 20);
    assert_int_equal(orr_sim_steps(b), 10);

    /* reading twice without stepping gives the same pointers and values */
    double *pa2;
    TU_OK(orr_sim_pos(a, &pa2, &err), &err);
    assert_ptr_equal(pa, pa2);
    orr_sim_destroy(a);
    orr_sim_destroy(b);
    orr_sim_destroy(ref);
    free(pos);
    free(vel);
    free(pos_b);
    free(vel_b);
}

/* orr_sim_touch after steps without a read since (the mirror is stale)
 * must not roll the bodies back behind the clock: 10 steps, a touch, 10
 * steps are bit for bit 20 steps.  The attributes written then
 * (orr_sim_touch_attr, and orr_sim_touch) reach the engine, the bodies
 * staying at the clock's state: a charge set to the value it had changes
 * nothing. */
static void test_touch_after_steps(void **state)
{
    orr_error err = {0};
    const long n = 64;
    double *pos = malloc(sizeof(double) * 4 * n), *vel = malloc(sizeof(double) * 3 * n);
    TU_OK(orr_ic_plummer(n, 5, 1.0, pos, vel, &err), &err);
    for (int prec = 0; prec < 2; prec++) {
        orr_sim_config c = base_config(n, prec ? ORR_DOUBLE : ORR_FLOAT, "leapfrog", 0.05, 0.01);
        c.force = "coulomb";
        orr_sim *a = make_sim(&c), *ref = make_sim(&c);
        orr_sim *sims[2] = {a, ref};
        for (int k = 0; k < 2; k++) {
            load_state(sims[k], pos, vel);
            double *q = NULL;
            TU_OK(orr_sim_attr(sims[k], 0, &q, &err), &err);
            for (long i = 0; i < n; i++)
                q[i] = i % 2 ? 1 : -1;
            orr_sim_touch_attr(sims[k]);
            TU_OK(orr_sim_step(sims[k], 10, NULL, &err), &err);
        }
        orr_sim_touch(a);   /* nothing read since the steps */
        TU_OK(orr_sim_step(a, 5, NULL, &err), &err);
        double *q = NULL;
        TU_OK(orr_sim_attr(a, 0, &q, &err), &err);
        q[3] = 1;   /* the value it has */
        orr_sim_touch_attr(a);
        TU_OK(orr_sim_step(a, 3, NULL, &err), &err);
        q[4] = -1;
        orr_sim_touch(a);
        TU_OK(orr_sim_step(a, 2, NULL, &err), &err);
        TU_OK(orr_sim_step(ref, 10, NULL, &err), &err);
        assert_true(orr_sim_time(a) == orr_sim_time(ref));
        double *pa, *va, *pr, *vr;
        TU_OK(orr_sim_pos(a, &pa, &err), &err);
        TU_OK(orr_sim_vel(a, &va, &err), &err);
        TU_OK(orr_sim_pos(ref, &pr, &err), &err);
        TU_OK(orr_sim_vel(ref, &vr, &err), &err);
        assert_memory_equal(pa, pr, sizeof(double) * 4 * n);
        assert_memory_equal(va, vr, sizeof(double) * 3 * n);
        /* a real change of a charge after steps goes on from the clock's
         * state: as a simulation started there with that charge */
        TU_OK(orr_sim_step(a, 1, NULL, &err), &err);
        TU_OK(orr_sim_step(ref, 1, NULL, &err), &err);
        TU_OK(orr_sim_pos(ref, &pr, &err), &err);
        TU_OK(orr_sim_vel(ref, &vr, &err), &err);
        orr_sim *b = make_sim(&c);
        load_state(b, pr, vr);
        double *qa = NULL, *qb = NULL;
        TU_OK(orr_sim_attr(a, 0, &qa, &err), &err);
        TU_OK(orr_sim_attr(b, 0, &qb, &err), &err);
        qa[0] = 3;
        orr_sim_touch_attr(a);
        memcpy(qb, qa, sizeof(double) * (size_t)n);
        orr_sim_touch_attr(b);
        TU_OK(orr_sim_step(a, 5, NULL, &err), &err);
        TU_OK(orr_sim_step(b, 5, NULL, &err), &err);
        TU_OK(orr_sim_step(ref, 5, NULL, &err), &err);
        double *pb;
        TU_OK(orr_sim_pos(a, &pa, &err), &err);
        TU_OK(orr_sim_pos(b, &pb, &err), &err);
        TU_OK(orr_sim_pos(ref, &pr, &err), &err);
        assert_memory_equal(pa, pb, sizeof(double) * 4 * n);
        assert_true(pa[0] != pr[0]);
        orr_sim_destroy(a);
        orr_sim_destroy(b);
        orr_sim_destroy(ref);
    }
    free(pos);
    free(vel);
}

/* Precision float stores floats: a mirror value beyond their range (a C
 * caller's; the Lua layer refuses it before) fails the upload, naming the
 * body and the value, before anything is uploaded (the engine keeps its
 * bodies); double holds it. */
static void test_float_range(void **state)
{
    orr_error err = {0};
    const double pos[8] = {-1, 0, 0, 1, 1, 0, 0, 1}, vel[6] = {0};
    orr_sim_config c = base_config(2, ORR_FLOAT, "leapfrog", 0.1, 0.01);
    c.force = "coulomb";
    orr_sim *s = make_sim(&c);
    load_state(s, pos, vel);
    TU_OK(orr_sim_step(s, 2, NULL, &err), &err);
    double *p, *v, *q, engine_before[8], engine_after[8];
    orr_engine *e = (orr_engine *)orr_sim_engine(s);
    TU_OK(orr_engine_get_state(e, engine_before, NULL, &err), &err);
    TU_OK(orr_sim_pos(s, &p, &err), &err);
    TU_OK(orr_sim_vel(s, &v, &err), &err);
    p[0] = 0.5;   /* a good value first: not uploaded either */
    v[3 + 1] = -1e39;
    orr_sim_touch(s);
    assert_int_equal(orr_sim_step(s, 1, NULL, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "body 2: 'vy' = -1e+39 is beyond the float range (at most "
                                 "3.40282347e+38 in magnitude; precision \"double\" holds it): "
                                 "nothing was uploaded");
    orr_error_clear(&err);
    TU_OK(orr_engine_get_state(e, engine_after, NULL, &err), &err);
    assert_memory_equal(engine_before, engine_after, sizeof engine_before);
    assert_int_equal(orr_sim_steps(s), 2);
    v[3 + 1] = 0;
    TU_OK(orr_sim_attr(s, 0, &q, &err), &err);
    q[0] = 3.5e38;
    orr_sim_touch_attr(s);
    double k, u;
    assert_int_equal(orr_sim_energy(s, &k, &u, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "body 1: 'charge' = 3.5e+38 is beyond the float range (at most "
                                 "3.40282347e+38 in magnitude; precision \"double\" holds it): "
                                 "nothing was uploaded");
    orr_error_clear(&err);
    q[0] = 1;
    TU_OK(orr_sim_step(s, 1, NULL, &err), &err);   /* fixed: the writes go up */
    TU_OK(orr_engine_get_state(e, engine_after, NULL, &err), &err);
    assert_true(engine_after[0] > 0.4);
    orr_sim_destroy(s);

    c.precision = ORR_DOUBLE;
    s = make_sim(&c);
    load_state(s, pos, vel);
    TU_OK(orr_sim_vel(s, &v, &err), &err);
    v[3 + 1] = -1e39;
    orr_sim_touch(s);
    TU_OK(orr_sim_step(s, 1, NULL, &err), &err);
    orr_sim_destroy(s);
}

/* ---- output ------------------------------------------------------------------ */

/* No leftover temporary files in dir. */
static void assert_no_temps(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *de;
    while ((de = readdir(d)))
        if (strstr(de->d_name, ".tmp."))
            fail_msg("temporary file left behind: %s/%s", dir, de->d_name);
    closedir(d);
}

static void test_write(void **state)
{
    orr_error err = {0};
    const long n = 17;
    double pos[4 * 17], vel[3 * 17];
    uint64_t seed = 8;
    for (long i = 0; i < 4 * n; i++)
        pos[i] = (tu_rand(&seed) - 0.5) * 1e3 / 7;
    for (long i = 0; i < 3 * n; i++)
        vel[i] = (tu_rand(&seed) - 0.5) / 3;
    pos[3] = 1e-300;
    vel[0] = -0.0;
    orr_sim_config c = base_config(n, ORR_DOUBLE, "leapfrog", 0.01, 0.01);
    orr_sim *s = make_sim(&c);
    load_state(s, pos, vel);

    char dir[] = "/tmp/orr-sim-write-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *exts[] = {"txt", "csv"};
    for (int f = 0; f < 2; f++) {
        char path[256];
        snprintf(path, sizeof path, "%s/bodies.%s", dir, exts[f]);
        TU_OK(orr_text_write_sim(s, path, &err), &err);
        char *text = tu_slurp(path);
        const char sep = f ? ',' : ' ';
        char *save = NULL, *line = strtok_r(text, "\n", &save);
        assert_string_equal(line, f ? "id,x,y,z,vx,vy,vz,m" : "id x y z vx vy vz m");
        long lines = 0;
        while ((line = strtok_r(NULL, "\n", &save))) {
            char *q = line, *end;
            long id = strtol(q, &end, 10);
            assert_int_equal(id, lines + 1);
            double want[7] = {pos[4 * lines], pos[4 * lines + 1], pos[4 * lines + 2],
                              vel[3 * lines], vel[3 * lines + 1], vel[3 * lines + 2],
                              pos[4 * lines + 3]};
            for (int k = 0; k < 7; k++) {
                assert_int_equal(*end, sep);
                q = end + 1;
                double got = strtod(q, &end);
                assert_true(end != q);
                assert_memory_equal(&got, &want[k], sizeof got);   /* bit for bit */
            }
            assert_int_equal(*end, '\0');
            lines++;
        }
        assert_int_equal(lines, n);
        free(text);
        unlink(path);
    }

    /* an unknown extension */
    assert_int_equal(orr_text_write_sim(s, "x.dat", &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "cannot write 'x.dat': unknown format (expected .txt or .csv)");
    assert_int_equal(orr_text_write_sim(s, "noext", &err), ORR_ERR_ARG);

    /* a missing directory is created, as for HDF5 snapshots */
    char path[320], sub[256];
    for (int f = 0; f < 2; f++) {
        snprintf(sub, sizeof sub, "%s/missing%d/deeper", dir, f);
        snprintf(path, sizeof path, "%s/out.%s", sub, exts[f]);
        TU_OK(orr_text_write_sim(s, path, &err), &err);
        char *text = tu_slurp(path);
        assert_true(strncmp(text, f ? "id,x," : "id x ", 5) == 0);
        free(text);
        assert_no_temps(sub);
        assert_int_equal(unlink(path), 0);
        assert_int_equal(rmdir(sub), 0);
        snprintf(sub, sizeof sub, "%s/missing%d", dir, f);
        assert_int_equal(rmdir(sub), 0);
    }
    /* ... unless a file is in the way */
    snprintf(path, sizeof path, "%s/plain", dir);
    FILE *plain = fopen(path, "w");
    assert_non_null(plain);
    fclose(plain);
    snprintf(path, sizeof path, "%s/plain/out.txt", dir);
    assert_int_equal(orr_text_write_sim(s, path, &err), ORR_ERR_IO);
    print_message("write under a file: %s\n", err.msg);
    assert_non_null(strstr(err.msg, path));
    snprintf(path, sizeof path, "%s/plain", dir);
    assert_int_equal(unlink(path), 0);

    /* the rename fails (a directory is in the way): the temporary goes */
    snprintf(path, sizeof path, "%s/taken.csv", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    assert_int_equal(orr_text_write_sim(s, path, &err), ORR_ERR_IO);
    print_message("write over a directory: %s\n", err.msg);
    assert_non_null(strstr(err.msg, path));
    assert_no_temps(dir);
    rmdir(path);
    assert_int_equal(rmdir(dir), 0);   /* nothing else was left in it */
    orr_error_clear(&err);
    orr_sim_destroy(s);
}

/* A text write that fails (ORRERY_TEST_WRITE_FAIL) leaves the previous file
 * as it was and no temporary file. */
static void test_write_fail(void **state)
{
    orr_error err = {0};
    orr_sim_config c = base_config(9, ORR_DOUBLE, "leapfrog", 0.01, 0.01);
    orr_sim *s = make_sim(&c);
    double pos[4 * 9], vel[3 * 9];
    uint64_t seed = 3;
    for (int i = 0; i < 4 * 9; i++)
        pos[i] = tu_rand(&seed) + (i % 4 == 3);
    for (int i = 0; i < 3 * 9; i++)
        vel[i] = tu_rand(&seed) - 0.5;
    load_state(s, pos, vel);
    char dir[] = "/tmp/orr-sim-fail-XXXXXX";
    assert_non_null(mkdtemp(dir));
    const char *exts[] = {"txt", "csv"};
    for (int f = 0; f < 2; f++) {
        char path[256];
        snprintf(path, sizeof path, "%s/keep.%s", dir, exts[f]);
        TU_OK(orr_text_write_sim(s, path, &err), &err);
        char *before = tu_slurp(path);
        TU_OK(orr_sim_step(s, 3, NULL, &err), &err);   /* a different state */
        setenv("ORRERY_TEST_WRITE_FAIL", "1", 1);
        orr_status st = orr_text_write_sim(s, path, &err);
        unsetenv("ORRERY_TEST_WRITE_FAIL");
        assert_int_equal(st, ORR_ERR_IO);
        char want[400];
        snprintf(want, sizeof want,
                 "cannot write '%s': simulated failure (ORRERY_TEST_WRITE_FAIL is set)", path);
        assert_string_equal(err.msg, want);
        orr_error_clear(&err);
        char *after = tu_slurp(path);
        assert_string_equal(before, after);   /* the old file, untouched */
        free(before);
        free(after);
        assert_no_temps(dir);
        assert_int_equal(unlink(path), 0);
    }
    assert_int_equal(rmdir(dir), 0);   /* nothing else was left in it */
    orr_sim_destroy(s);
}

/* ---- validation, interruption, diagnostics ----------------------------------- */

static void expect_invalid(const orr_sim_config *c, const char *msg)
{
    orr_error err = {0};
    orr_sim *s = (orr_sim *)&err;   /* must be reset to NULL */
    assert_int_equal(orr_sim_create(&s, c, NULL, 0, &err), ORR_ERR_ARG);
    assert_null(s);
    assert_string_equal(err.msg, msg);
    orr_error_clear(&err);
}

static void test_validation(void **state)
{
    orr_sim_config c = base_config(10, ORR_FLOAT, "leapfrog", 0.01, 0.01);
    c.n = 0;
    expect_invalid(&c, "n must be at least 1 (got 0)");
    c = base_config(10, ORR_FLOAT, "leapfrog", 0.01, -1);
    expect_invalid(&c, "dt must be positive and finite (got -1)");
    c.dt = INFINITY;
    expect_invalid(&c, "dt must be positive and finite (got inf)");
    c = base_config(10, ORR_FLOAT, "leapfrog", 0.01, 0.01);
    c.dims = 4;
    expect_invalid(&c, "dims must be 2 or 3 (got 4)");
    c = base_config(10, ORR_FLOAT, "rk4", 0.01, 0.01);
    expect_invalid(&c, "unknown integrator 'rk4' (expected euler, leapfrog, yoshida4 or hermite)");
    c = base_config(10, ORR_FLOAT, "euler", 0.01, 0.01);
    c.damping = 2;
    expect_invalid(&c, "damping must be in (0, 1] (got 2)");
    c.damping = 0;
    expect_invalid(&c, "damping must be in (0, 1] (got 0)");
    c = base_config(10, ORR_FLOAT, "leapfrog", 0.01, 0.01);
    c.damping = 0.9;
    expect_invalid(&c, "damping applies to the euler integrator only");
    c.integrator = "yoshida4";
    expect_invalid(&c, "damping applies to the euler integrator only");
    c = base_config(10, ORR_FLOAT, "leapfrog", -1, 0.01);
    expect_invalid(&c, "softening must be >= 0 and finite (got -1)");
    c = base_config(10, ORR_FLOAT, "leapfrog", 0.01, 0.01);
    c.G = NAN;
    expect_invalid(&c, "G must be finite (got nan)");
    c = base_config(10, ORR_FLOAT, "leapfrog", 0.01, 0.01);
    c.box[1] = -2;
    expect_invalid(&c, "box length on axis y must be finite and >= 0 (got -2)");

    /* accepted: euler with damping; and set_dt / step count checks */
    orr_error err = {0};
    c = base_config(10, ORR_FLOAT, "euler", 0.01, 0.01);
    c.damping = 0.9;
    orr_sim *s = make_sim(&c);
    assert_int_equal(orr_sim_set_dt(s, 0, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "dt must be positive and finite (got 0)");
    assert_int_equal(orr_sim_step(s, -1, NULL, &err), ORR_ERR_ARG);
    TU_OK(orr_sim_set_dt(s, 0.5, &err), &err);
    assert_true(orr_sim_config_of(s)->dt == 0.5);
    orr_error_clear(&err);
    orr_sim_destroy(s);
}

static void test_interrupt(void **state)
{
    orr_error err = {0};
    orr_sim_config c = base_config(8, ORR_DOUBLE, "leapfrog", 0.01, 0.01);
    orr_sim *s = make_sim(&c);
    volatile int stop = 1;
    assert_int_equal(orr_sim_step(s, 5, &stop, &err), ORR_ERR_INTERRUPTED);
    assert_string_equal(err.msg, "interrupted after 0 steps");
    assert_int_equal(orr_sim_steps(s), 0);
    assert_true(orr_sim_time(s) == 0);
    stop = 0;
    TU_OK(orr_sim_step(s, 5, &stop, &err), &err);
    assert_int_equal(orr_sim_steps(s), 5);
    assert_true(fabs(orr_sim_time(s) - 0.05) < 1e-15);
    orr_error_clear(&err);
    orr_sim_destroy(s);
}

static void test_diagnostics(void **state)
{
    orr_error err = {0};
    /* the integrator table */
    const orr_integrator *const *list = orr_integrators();
    const char *names[] = {"euler", "leapfrog", "yoshida4", "hermite"};
    const int orders[] = {1, 2, 4, 4}, forces[] = {1, 1, 3, 0};
    for (int k = 0; k < 4; k++) {
        assert_non_null(list[k]);
        assert_string_equal(list[k]->name, names[k]);
        assert_int_equal(list[k]->order, orders[k]);
        assert_int_equal(list[k]->forces_per_step, forces[k]);
        assert_ptr_equal(orr_integrator_find(names[k]), list[k]);
    }
    assert_null(list[4]);
    assert_null(orr_integrator_find("rk4"));

    /* a fresh simulation: everything at rest at the origin with mass 0 */
    char iname[16] = "yoshida4";
    orr_sim_config c = base_config(4, ORR_DOUBLE, iname, 0.01, 0.01);
    orr_sim *s = make_sim(&c);
    strcpy(iname, "garbage");
    assert_string_equal(orr_sim_config_of(s)->integrator, "yoshida4");
    assert_string_equal(orr_sim_config_of(s)->force, "gravity");
    assert_string_equal(orr_engine_backend_name(orr_sim_engine(s)), "cpu");
    double x[3] = {1, 1, 1}, v[3] = {1, 1, 1}, m = 1, q = 0;
    TU_OK(orr_sim_center_of_mass(s, x, v, &m, &err), &err);
    assert_true(m == 0 && x[0] == 0 && x[1] == 0 && x[2] == 0 && v[0] == 0);
    assert_int_equal(orr_sim_virial_ratio(s, &q, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "virial ratio undefined: potential energy is 0");
    orr_error_clear(&err);
    orr_sim_destroy(s);

    /* a Plummer sphere in Henon units: E = -1/4, K/|U| = 1/2 */
    const long n = 2048;
    double *pos = malloc(sizeof(double) * 4 * n), *vel = malloc(sizeof(double) * 3 * n);
    TU_OK(orr_ic_plummer(n, 4, 1.0, pos, vel, &err), &err);
    c = base_config(n, ORR_DOUBLE, "leapfrog", 0, 0.01);
    s = make_sim(&c);
    load_state(s, pos, vel);
    double k = 0, u = 0;
    TU_OK(orr_sim_energy(s, &k, &u, &err), &err);
    TU_OK(orr_sim_virial_ratio(s, &q, &err), &err);
    TU_OK(orr_sim_center_of_mass(s, x, v, &m, &err), &err);
    print_message("plummer n=%ld: K = %.4f, U = %.4f, E = %.4f, K/|U| = %.4f, mass %.6f\n", n, k,
                  u, k + u, q, m);
    assert_true(fabs(k + u + 0.25) < 0.03);
    assert_true(fabs(q - 0.5) < 0.1);
    assert_true(fabs(q - k / fabs(u)) < 1e-15);
    assert_true(fabs(m - 1) < 1e-12 && norm3(x) < 1e-12 && norm3(v) < 1e-12);
    orr_sim_destroy(s);
    free(pos);
    free(vel);

    /* the auto backend without a GPU says why */
    if (orr_cuda_usable(0, &err) != ORR_OK) {
        char notice[512] = "stale";
        c = base_config(4, ORR_FLOAT, "leapfrog", 0.01, 0.01);
        c.backend = ORR_BACKEND_AUTO;
        TU_OK(orr_sim_create(&s, &c, notice, sizeof notice, &err), &err);
        print_message("auto: %s\n", notice);
        assert_true(strncmp(notice, "no usable GPU (", 15) == 0);
        assert_non_null(strstr(notice, "); using the CPU backend"));
        assert_string_equal(orr_engine_backend_name(orr_sim_engine(s)), "cpu");
        assert_int_equal(orr_sim_config_of(s)->backend, ORR_BACKEND_CPU);
        orr_sim_destroy(s);
    }
    orr_error_clear(&err);
}

int main(void)
{
    tu_private_cache();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kepler_closes),
        cmocka_unit_test(test_advance_to_time),
        cmocka_unit_test(test_advance_large_clock),
        cmocka_unit_test(test_block_steps),
        cmocka_unit_test(test_restored_steps),
        cmocka_unit_test(test_integrator_with_state),
        cmocka_unit_test(test_convergence),
        cmocka_unit_test(test_energy_plummer),
        cmocka_unit_test(test_momentum),
        cmocka_unit_test(test_euler_damping),
        cmocka_unit_test(test_periodic_2d),
        cmocka_unit_test(test_periodic_3d),
        cmocka_unit_test(test_host_mirror),
        cmocka_unit_test(test_touch_after_steps),
        cmocka_unit_test(test_float_range),
        cmocka_unit_test(test_write),
        cmocka_unit_test(test_write_fail),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_interrupt),
        cmocka_unit_test(test_diagnostics),
    };
    return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
