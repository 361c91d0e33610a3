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

/* Every generator, described uniformly so the Lua layer can expose them as
 * orrery.ic.NAME{n=, seed=, <param>=...}.  Parameters are numbers with
 * defaults; n and seed are separate (fixed-size generators ignore n). */
#define ORR_IC_MAX_PARAMS 8
typedef struct {
    const char *name;                        /* "plummer" */
    const char *summary;                     /* one line for docs and errors */
    int takes_n;                             /* 0: fixed body count (kepler, solar_system) */
    int nparams;
    const char *params[ORR_IC_MAX_PARAMS];   /* parameter names */
    double defaults[ORR_IC_MAX_PARAMS];      /* their defaults */
    /* Bodies generate() produces for n (and params). */
    long (*count)(long n, const double *p);
    /* Fills pos[4 count] and vel[3 count]; validates params, messages name them. */
    orr_status (*generate)(long n, uint64_t seed, const double *p, double *pos, double *vel,
                           orr_error *err);
} orr_ic_generator;

/* Runs g->generate and checks that every value it made is finite: a
 * combination of parameters that overflows is an ORR_ERR_ARG naming them
 * ("kepler: body 2 would have vy = inf with m1=1, ..."). */
orr_status orr_ic_generate(const orr_ic_generator *g, long n, uint64_t seed, const double *p,
                           double *pos, double *vel, orr_error *err);

const orr_ic_generator *orr_ic_find(const char *name);
/* NULL-terminated list of all generators. */
const orr_ic_generator *const *orr_ic_generators(void);

#endif
