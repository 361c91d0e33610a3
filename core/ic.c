/* ic: deterministic initial-condition generators (see ic.h). */
#include "ic.h"

#include <math.h>

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

orr_status orr_ic_plummer(long n, uint64_t seed, double mass, double *pos, double *vel,
                          orr_error *err)
{
    if (n < 1)
        return orr_fail(err, ORR_ERR_ARG, "plummer: n must be at least 1 (got %ld)", n);
    if (!(mass > 0) || !isfinite(mass))
        return orr_fail(err, ORR_ERR_ARG, "plummer: mass must be positive (got %g)", mass);
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
    if (!(side > 0) || !isfinite(side))
        return orr_fail(err, ORR_ERR_ARG, "uniform_cube: side must be positive (got %g)", side);
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
