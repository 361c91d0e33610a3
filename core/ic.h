/* ic: deterministic initial conditions in C (the bench uses them; the Lua
 * layer exposes them).  A generator fills pos[4n] = (x, y, z, m) and
 * vel[3n]; the same seed always gives the same bodies. */
#ifndef ORR_IC_H
#define ORR_IC_H

#include <stdint.h>
#include "err.h"

typedef struct {
    uint64_t s[4];   /* xoshiro256** state */
} orr_rng;

void orr_rng_seed(orr_rng *r, uint64_t seed);
double orr_rng_uniform(orr_rng *r);   /* in [0, 1) */

/* Plummer sphere, Aarseth-Henon-Wielen (1974): total mass `mass`, radii drawn
 * with the mass cut off at 0.999, velocities by rejection sampling, centred
 * on the centre of mass, scaled to Henon units (G = 1, E = -mass^2/4). */
orr_status orr_ic_plummer(long n, uint64_t seed, double mass, double *pos, double *vel,
                          orr_error *err);

/* Uniform cube of side `side` centred on the origin, at rest, total mass 1. */
orr_status orr_ic_uniform_cube(long n, uint64_t seed, double side, double *pos, double *vel,
                               orr_error *err);

#endif
