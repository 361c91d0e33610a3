/* bench: one row of `orrery bench`: builds an engine for N bodies of a
 * Plummer sphere, times whole steps (force, kick, drift) and the force kernel
 * alone, and checks a sample of accelerations against the double-precision
 * CPU backend. */
#ifndef ORR_BENCH_H
#define ORR_BENCH_H

#include "engine.h"

typedef struct {
    long n;
    const char *backend;     /* "cuda" or "cpu" */
    orr_kspec spec;          /* as run */
    orr_variant variant;
    int steps;               /* timed steps */
    double ms_per_step;      /* force + kick + drift */
    double ms_force;         /* force kernel alone */
    double interactions_per_s;   /* N^2 / step time */
    double gflops;           /* 20 (float) or 30 (double) flops per interaction */
    double max_rel_err;      /* max |a - a_ref| / |a_ref| over the sample */
    long sample;             /* bodies in the accuracy sample */
    orr_build_info build;    /* how the kernels were obtained */
} orr_bench_row;

/* Runs one row.  steps <= 0 picks a count that takes about a quarter of a
 * second.  notice gets the backend-selection notice under auto. */
orr_status orr_bench_run(orr_backend_kind kind, const orr_kspec *spec, orr_variant variant,
                         long n, int steps, orr_bench_row *row, char *notice,
                         size_t notice_size, orr_error *err);

/* Max relative error of acc against ref over ni bodies (3 ni values each). */
double orr_max_rel_err(const double *acc, const double *ref, long ni);

#endif
