/* ic: deterministic initial-condition generators (see ic.h). */
#include "ic.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void orr_rng_seed(orr_rng *r, uint64_t seed)
{
    for (int k = 0; k < 4; k++)
        r->s[k] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

double orr_rng_uniform(orr_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return (double)(result >> 11) * 0x1.0p-53;
}

/* A random direction scaled to length len, into v[0..2]. */
static void isotropic(orr_rng *r, double len, double *v)
{
    double z = 2 * orr_rng_uniform(r) - 1, phi = 2 * M_PI * orr_rng_uniform(r);
    double s = sqrt(1 - z * z);
    v[0] = len * s * cos(phi);
    v[1] = len * s * sin(phi);
    v[2] = len * z;
}

static void recentre(long n, double *pos, double *vel)
{
    double m = 0, c[6] = {0};
    for (long i = 0; i < n; i++) {
        m += pos[4 * i + 3];
        for (int k = 0; k < 3; k++) {
            c[k] += pos[4 * i + 3] * pos[4 * i + k];
            c[3 + k] += pos[4 * i + 3] * vel[3 * i + k];
        }
    }
    for (long i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            pos[4 * i + k] -= c[k] / m;
            vel[3 * i + k] -= c[3 + k] / m;
        }
}

/* Scale parameters (masses, lengths, G, factors) are kept within
 * 1e-100..1e100, so that their squares and products stay finite in double. */
#define SCALE_MIN 1e-100
#define SCALE_MAX 1e100

static orr_status check_positive(const char *gen, const char *name, double v, orr_error *err)
{
    if (!(v > 0) || !isfinite(v))
        return orr_fail(err, ORR_ERR_ARG, "%s: %s must be positive (got %g)", gen, name, v);
    if (v < SCALE_MIN || v > SCALE_MAX)
        return orr_fail(err, ORR_ERR_ARG, "%s: %s must be from %g to %g (got %g)", gen, name,
                        SCALE_MIN, SCALE_MAX, v);
    return ORR_OK;
}

/* A parameter that may be 0: in 0..1e100. */
static orr_status check_nonnegative(const char *gen, const char *name, double v, orr_error *err)
{
    if (!(v >= 0) || !isfinite(v))
        return orr_fail(err, ORR_ERR_ARG, "%s: %s must be >= 0 (got %g)", gen, name, v);
    if (v > SCALE_MAX)
        return orr_fail(err, ORR_ERR_ARG, "%s: %s must be from 0 to %g (got %g)", gen, name,
                        SCALE_MAX, v);
    return ORR_OK;
}

orr_status orr_ic_plummer(long n, uint64_t seed, double mass, double *pos, double *vel,
                          orr_error *err)
{
    if (n < 1)
        return orr_fail(err, ORR_ERR_ARG, "plummer: n must be at least 1 (got %ld)", n);
    orr_status st = check_positive("plummer", "mass", mass, err);
    if (st)
        return st;
    orr_rng r;
    orr_rng_seed(&r, seed);
    const double rscale = 3 * M_PI / 16, vscale = sqrt(mass / rscale);
    for (long i = 0; i < n; i++) {
        double x1;
        do
            x1 = orr_rng_uniform(&r) * 0.999;
        while (x1 <= 0);
        double rad = 1 / sqrt(pow(x1, -2.0 / 3.0) - 1);
        isotropic(&r, rad * rscale, pos + 4 * i);
        pos[4 * i + 3] = mass / n;
        double q, g;
        do {
            q = orr_rng_uniform(&r);
            g = 0.1 * orr_rng_uniform(&r);
        } while (g > q * q * pow(1 - q * q, 3.5));
        double speed = q * sqrt(2.0) * pow(1 + rad * rad, -0.25);
        isotropic(&r, speed * vscale, vel + 3 * i);
    }
    recentre(n, pos, vel);
    return ORR_OK;
}

orr_status orr_ic_uniform_cube(long n, uint64_t seed, double side, double *pos, double *vel,
                               orr_error *err)
{
    if (n < 1)
        return orr_fail(err, ORR_ERR_ARG, "uniform_cube: n must be at least 1 (got %ld)", n);
    orr_status st = check_positive("uniform_cube", "side", side, err);
    if (st)
        return st;
    orr_rng r;
    orr_rng_seed(&r, seed);
    for (long i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            pos[4 * i + k] = side * (orr_rng_uniform(&r) - 0.5);
            vel[3 * i + k] = 0;
        }
        pos[4 * i + 3] = 1.0 / n;
    }
    return ORR_OK;
}

/* ---- more generators ------------------------------------------------------ */

/* Uniform ball of radius r at rest, total mass `mass`. */
static void fill_ball(orr_rng *r, long n, double radius, double mass, double *pos, double *vel)
{
    for (long i = 0; i < n; i++) {
        double rad = radius * cbrt(orr_rng_uniform(r));
        isotropic(r, rad, pos + 4 * i);
        pos[4 * i + 3] = mass / n;
        vel[3 * i] = vel[3 * i + 1] = vel[3 * i + 2] = 0;
    }
}

static orr_status gen_uniform_sphere(long n, uint64_t seed, const double *p, double *pos,
                                     double *vel, orr_error *err)
{
    orr_status st = check_positive("uniform_sphere", "radius", p[0], err);
    if (!st)
        st = check_positive("uniform_sphere", "mass", p[1], err);
    if (st)
        return st;
    orr_rng r;
    orr_rng_seed(&r, seed);
    fill_ball(&r, n, p[0], p[1], pos, vel);
    return ORR_OK;
}

/* A standard normal deviate (Box-Muller). */
static double gaussian(orr_rng *r)
{
    double u = 1 - orr_rng_uniform(r), v = orr_rng_uniform(r);
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* Uniform ball with random isotropic velocities giving virial ratio
 * Q = K / |U| against the analytic potential of a uniform sphere,
 * U = -3/5 G M^2 / R (Q = 0: a cold collapse; 0.5: virial equilibrium). */
static orr_status gen_cold_collapse(long n, uint64_t seed, const double *p, double *pos,
                                    double *vel, orr_error *err)
{
    double radius = p[0], mass = p[1], q = p[2], G = p[3];
    orr_status st = check_positive("cold_collapse", "radius", radius, err);
    if (!st)
        st = check_positive("cold_collapse", "mass", mass, err);
    if (!st)
        st = check_nonnegative("cold_collapse", "virial", q, err);
    if (!st)
        st = check_positive("cold_collapse", "G", G, err);
    if (st)
        return st;
    orr_rng r;
    orr_rng_seed(&r, seed);
    fill_ball(&r, n, radius, mass, pos, vel);
    if (q > 0 && n > 1) {
        double k = 0;
        for (long i = 0; i < 3 * n; i++) {
            vel[i] = gaussian(&r);
            k += 0.5 * (mass / n) * vel[i] * vel[i];
        }
        double want = q * 0.6 * G * mass * mass / radius, f = sqrt(want / k);
        for (long i = 0; i < 3 * n; i++)
            vel[i] *= f;
    }
    recentre(n, pos, vel);
    return ORR_OK;
}

static orr_status gen_random_box_2d(long n, uint64_t seed, const double *p, double *pos,
                                    double *vel, orr_error *err)
{
    orr_status st = check_positive("random_box_2d", "side", p[0], err);
    if (!st)
        st = check_positive("random_box_2d", "mass", p[1], err);
    if (st)
        return st;
    orr_rng r;
    orr_rng_seed(&r, seed);
    for (long i = 0; i < n; i++) {
        pos[4 * i] = p[0] * orr_rng_uniform(&r);
        pos[4 * i + 1] = p[0] * orr_rng_uniform(&r);
        pos[4 * i + 2] = 0;
        pos[4 * i + 3] = p[1] / n;
        vel[3 * i] = vel[3 * i + 1] = vel[3 * i + 2] = 0;
    }
    return ORR_OK;
}

/* Two bodies on a Kepler orbit in the xy plane, at pericentre, in the
 * centre-of-mass frame. */
static orr_status gen_kepler(long n, uint64_t seed, const double *p, double *pos, double *vel,
                             orr_error *err)
{
    double m1 = p[0], m2 = p[1], a = p[2], e = p[3], G = p[4];
    orr_status st = check_positive("kepler", "m1", m1, err);
    if (!st)
        st = check_positive("kepler", "m2", m2, err);
    if (!st)
        st = check_positive("kepler", "a", a, err);
    if (!st && (!(e >= 0 && e < 1)))
        st = orr_fail(err, ORR_ERR_ARG, "kepler: e must be in [0, 1) (got %g)", e);
    if (!st)
        st = check_positive("kepler", "G", G, err);
    if (st)
        return st;
    double M = m1 + m2, rp = a * (1 - e), vp = sqrt(G * M * (1 + e) / (a * (1 - e)));
    double b1[4] = {-m2 / M * rp, 0, 0, m1}, b2[4] = {m1 / M * rp, 0, 0, m2};
    memcpy(pos, b1, sizeof b1);
    memcpy(pos + 4, b2, sizeof b2);
    double v1[3] = {0, -m2 / M * vp, 0}, v2[3] = {0, m1 / M * vp, 0};
    memcpy(vel, v1, sizeof v1);
    memcpy(vel + 3, v2, sizeof v2);
    return ORR_OK;
}

/* The Sun and eight planets from J2000 mean orbital elements (a in AU, e,
 * inclination, mean longitude, longitude of perihelion, longitude of the
 * ascending node in degrees; masses in solar masses).  Units: AU, solar
 * masses, and time in years / 2 pi, so that G = 1. */
static const struct {
    double m, a, e, inc, lon, peri, node;
} planets[8] = {
    {1.66012e-7, 0.38709927, 0.20563593, 7.00497902, 252.25032350, 77.45779628, 48.33076593},
    {2.44784e-6, 0.72333566, 0.00677672, 3.39467605, 181.97909950, 131.60246718, 76.67984255},
    {3.04043e-6, 1.00000261, 0.01671123, -0.00001531, 100.46457166, 102.93768193, 0.0},
    {3.22715e-7, 1.52371034, 0.09339410, 1.84969142, -4.55343205, -23.94362959, 49.55953891},
    {9.54792e-4, 5.20288700, 0.04838624, 1.30439695, 34.39644051, 14.72847983, 100.47390909},
    {2.85886e-4, 9.53667594, 0.05386179, 2.48599187, 49.95424423, 92.59887831, 113.66242448},
    {4.36624e-5, 19.18916464, 0.04725744, 0.77263783, 313.23810451, 170.95427630, 74.01692503},
    {5.15139e-5, 30.06992276, 0.00859048, 1.77004347, -55.12002969, 44.96476227, 131.78422574},
};

static orr_status gen_solar_system(long n, uint64_t seed, const double *p, double *pos,
                                   double *vel, orr_error *err)
{
    const double deg = M_PI / 180;
    memset(pos, 0, sizeof(double) * 4 * 9);
    memset(vel, 0, sizeof(double) * 3 * 9);
    pos[3] = 1.0;   /* the Sun */
    for (int k = 0; k < 8; k++) {
        double a = planets[k].a, e = planets[k].e, mu = 1.0 + planets[k].m;
        double w = (planets[k].peri - planets[k].node) * deg, node = planets[k].node * deg;
        double inc = planets[k].inc * deg, M = fmod((planets[k].lon - planets[k].peri) * deg, 2 * M_PI);
        double E = M;
        for (int it = 0; it < 50; it++)   /* Kepler's equation by Newton's method */
            E -= (E - e * sin(E) - M) / (1 - e * cos(E));
        double xo = a * (cos(E) - e), yo = a * sqrt(1 - e * e) * sin(E);
        double edot = sqrt(mu / (a * a * a)) / (1 - e * cos(E));
        double vxo = -a * sin(E) * edot, vyo = a * sqrt(1 - e * e) * cos(E) * edot;
        /* rotate by argument of perihelion, inclination, node */
        double cw = cos(w), sw = sin(w), ci = cos(inc), si = sin(inc), cn = cos(node), sn = sin(node);
        double r[3][3] = {{cn * cw - sn * sw * ci, -cn * sw - sn * cw * ci, 0},
                          {sn * cw + cn * sw * ci, -sn * sw + cn * cw * ci, 0},
                          {sw * si, cw * si, 0}};
        double *b = pos + 4 * (k + 1), *v = vel + 3 * (k + 1);
        for (int d = 0; d < 3; d++) {
            b[d] = r[d][0] * xo + r[d][1] * yo;
            v[d] = r[d][0] * vxo + r[d][1] * vyo;
        }
        b[3] = planets[k].m;
    }
    recentre(9, pos, vel);
    return ORR_OK;
}

/* Two Plummer spheres (masses in ratio q, total 1, bodies of equal mass)
 * approaching on a bound orbit: separation d along x, impact parameter b
 * along y, relative speed v_ratio times the escape speed of two point masses
 * at their distance sqrt(d^2 + b^2), so bound for v_ratio < 1. */
static orr_status gen_galaxy_collision(long n, uint64_t seed, const double *p, double *pos,
                                       double *vel, orr_error *err)
{
    double q = p[0], d = p[1], b = p[2], vr = p[3];
    orr_status st = check_positive("galaxy_collision", "mass_ratio", q, err);
    if (!st)
        st = check_positive("galaxy_collision", "separation", d, err);
    if (!st)
        st = check_nonnegative("galaxy_collision", "impact", b, err);
    /* relative energy (v_ratio^2 - 1) G M / r: bound (as point masses) below 1 */
    if (!st && (!(vr >= 0 && vr < 1)))
        st = orr_fail(err, ORR_ERR_ARG,
                      "galaxy_collision: v_ratio must be in [0, 1) for a bound orbit (got %g)", vr);
    if (!st && n < 2)
        st = orr_fail(err, ORR_ERR_ARG, "galaxy_collision: n must be at least 2 (got %ld)", n);
    if (st)
        return st;
    long n1 = (long)llround(n / (1 + q));
    n1 = n1 < 1 ? 1 : n1 > n - 1 ? n - 1 : n1;
    long n2 = n - n1;
    double m1 = (double)n1 / n, m2 = (double)n2 / n;   /* equal-mass bodies */
    st = orr_ic_plummer(n1, seed, m1, pos, vel, err);
    if (!st)
        st = orr_ic_plummer(n2, seed + 0x9e3779b97f4a7c15ull, m2, pos + 4 * n1, vel + 3 * n1, err);
    if (st)
        return st;
    double v = vr * sqrt(2.0 * (m1 + m2) / sqrt(d * d + b * b));
    double off[2][4] = {{-d * m2, -b * m2, v * m2, 0}, {d * m1, b * m1, -v * m1, 0}};
    for (long i = 0; i < n; i++) {
        const double *o = off[i < n1 ? 0 : 1];
        pos[4 * i] += o[0];
        pos[4 * i + 1] += o[1];
        vel[3 * i] += o[2];
    }
    return ORR_OK;
}

/* Henon units scaled to a virial radius p[1] and a coupling p[2]: lengths
 * x radius, velocities x sqrt(G / radius). */
static orr_status gen_plummer(long n, uint64_t seed, const double *p, double *pos, double *vel,
                              orr_error *err)
{
    orr_status st = check_positive("plummer", "radius", p[1], err);
    if (!st)
        st = check_positive("plummer", "G", p[2], err);
    if (!st)
        st = orr_ic_plummer(n, seed, p[0], pos, vel, err);
    const double vs = sqrt(p[2] / p[1]);
    for (long i = 0; !st && i < n; i++)
        for (int k = 0; k < 3; k++) {
            pos[4 * i + k] *= p[1];
            vel[3 * i + k] *= vs;
        }
    return st;
}

static orr_status gen_uniform_cube(long n, uint64_t seed, const double *p, double *pos,
                                   double *vel, orr_error *err)
{
    orr_status st = orr_ic_uniform_cube(n, seed, p[0], pos, vel, err);
    if (!st)
        st = check_positive("uniform_cube", "mass", p[1], err);
    for (long i = 0; !st && i < n; i++)
        pos[4 * i + 3] = p[1] / n;
    return st;
}

static long count_n(long n, const double *p)
{
    return n;
}

static long count_two(long n, const double *p)
{
    return 2;
}

static long count_nine(long n, const double *p)
{
    return 9;
}

static const orr_ic_generator generators[] = {
    {"plummer", "Plummer sphere in Henon units (Aarseth, Henon & Wielen 1974), scaled to a "
     "virial radius and G", 1, 3, {"mass", "radius", "G"}, {1.0, 1.0, 1.0}, count_n, gen_plummer},
    {"uniform_cube", "uniform cube centred on the origin, at rest", 1, 2, {"side", "mass"},
     {1.0, 1.0}, count_n, gen_uniform_cube},
    {"uniform_sphere", "uniform ball centred on the origin, at rest", 1, 2, {"radius", "mass"},
     {1.0, 1.0}, count_n, gen_uniform_sphere},
    {"random_box_2d", "uniform in the 2D box [0, side)^2 (z = 0), at rest", 1, 2,
     {"side", "mass"}, {1.0, 1.0}, count_n, gen_random_box_2d},
    {"kepler", "two bodies at pericentre of a Kepler orbit in the xy plane", 0, 5,
     {"m1", "m2", "a", "e", "G"}, {1.0, 1e-3, 1.0, 0.0, 1.0}, count_two, gen_kepler},
    {"solar_system", "Sun and eight planets, J2000 elements; AU, solar masses, G = 1", 0, 0,
     {NULL}, {0}, count_nine, gen_solar_system},
    {"cold_collapse", "uniform ball with virial ratio `virial` (0: at rest)", 1, 4,
     {"radius", "mass", "virial", "G"}, {1.0, 1.0, 0.0, 1.0}, count_n, gen_cold_collapse},
    {"galaxy_collision", "two Plummer spheres on a bound orbit", 1, 4,
     {"mass_ratio", "separation", "impact", "v_ratio"}, {1.0, 10.0, 1.0, 0.7}, count_n,
     gen_galaxy_collision},
};

const orr_ic_generator *orr_ic_find(const char *name)
{
    for (size_t k = 0; k < sizeof generators / sizeof generators[0]; k++)
        if (strcmp(generators[k].name, name) == 0)
            return &generators[k];
    return NULL;
}

const orr_ic_generator *const *orr_ic_generators(void)
{
    static const orr_ic_generator *list[sizeof generators / sizeof generators[0] + 1];
    for (size_t k = 0; k < sizeof generators / sizeof generators[0]; k++)
        list[k] = &generators[k];
    return list;
}

/* v in the fewest digits that read back as v ("0.999999999999", "1e+100"). */
static void shortest(double v, char *out, size_t size)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(out, size, "%.*g", prec, v);
        if (strtod(out, NULL) == v)
            return;
    }
}

orr_status orr_ic_generate(const orr_ic_generator *g, long n, uint64_t seed, const double *p,
                           double *pos, double *vel, orr_error *err)
{
    orr_status st = g->generate(n, seed, p, pos, vel, err);
    if (st)
        return st;
    /* a last check that the parameters, each in range, did not combine into
     * an overflow (kepler with a tiny a and e near 1, say) */
    static const char *const fields[7] = {"x", "y", "z", "m", "vx", "vy", "vz"};
    long count = g->count(n, p);
    for (long i = 0; i < count; i++)
        for (int k = 0; k < 7; k++) {
            double v = k < 4 ? pos[4 * i + k] : vel[3 * i + k - 4];
            if (isfinite(v))
                continue;
            char list[512] = "";
            size_t used = 0;
            for (int j = 0; j < g->nparams && used < sizeof list; j++) {
                char num[32];
                shortest(p[j], num, sizeof num);
                int w = snprintf(list + used, sizeof list - used, "%s%s=%s", j ? ", " : "",
                                 g->params[j], num);
                if (w < 0)
                    break;
                used += (size_t)w;
            }
            return orr_fail(err, ORR_ERR_ARG,
                            "%s: body %ld would have %s = %g with %s: use less extreme values",
                            g->name, i + 1, fields[k], v, list);
        }
    return ORR_OK;
}
