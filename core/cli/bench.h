/* bench: one row of `orrery bench`: builds an engine for N bodies (a
 * Plummer sphere for gravity-like laws, see orr_trial_bodies), times whole
 * steps (force, kick, drift) and the force kernel alone, and checks a sample
 * of accelerations against the double-precision CPU backend. */
#ifndef ORR_BENCH_H
#define ORR_BENCH_H

#include <stdint.h>
#include "comm.h"
#include "engine.h"

typedef struct {
    long n;
    const char *backend;     /* "cuda" or "cpu" */
    orr_kspec spec;          /* as run (ranges: the count the engine chose) */
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

/* What a benchmark over several ranks adds to its row. */
#define ORR_BENCH_MAX_RANKS 256
typedef struct {
    int ranks;
    double ms_comm;            /* the exchange's share of the row's step that the force did
                                  not hide: the step less the compute alone (the row's
                                  ms_force), the slowest rank's */
    double comm_share;         /* ms_comm / the row's ms_per_step */
    int overlap;               /* runs overlap exchange and force (orr_dist_overlap): the
                                  row's step is overlap_ms, else plain_ms */
    double overlap_ms;         /* a step with the exchange overlapped with the force
                                  (orr_dist_gather_force), the slowest rank's */
    double overlap_comm_share; /* (overlap_ms - ms_force) / overlap_ms */
    double plain_ms;           /* a step with the exchange first, then the force (no
                                  overlap), the slowest rank's */
    double plain_comm_share;   /* (plain_ms - ms_force) / plain_ms */
    double single_ms;          /* one rank (rank 0) on the whole problem, same build and
                                  device, measured first in the same call */
    double single_interactions_per_s;
    int single_ranges;         /* the j-ranges of the one-rank engine, when it had a
                                  configuration of its own (single_spec) */
    double efficiency;         /* single_ms / (ranks * ms_per_step) */
    char exchange[512];        /* how the positions went between the ranks, and why */
    double rank_force_ms[ORR_BENCH_MAX_RANKS];   /* each rank's force, kick and drift alone */
    double rank_comm_ms[ORR_BENCH_MAX_RANKS];    /* each rank's exchange alone (in the
                                                    steps without overlap) */
} orr_bench_dist;

/* A row over the ranks of c (every rank calls it): each rank's engine on
 * its device holds all n bodies and times steps of its slice (force, kick,
 * drift) with the exchange of positions (dist.h) overlapped with the force,
 * then the same steps with the exchange first, then the compute alone; the
 * row's ms_per_step is the slowest rank's whole step as runs take it
 * (orr_dist_overlap), interactions_per_s the aggregate n^2 over it,
 * ms_force the slowest rank's compute.  Before them rank 0 times the whole
 * problem alone, with the configuration single_spec in an engine of its own
 * (the one-GPU tuning, where the ranks run their slice's), or with spec
 * when single_spec is NULL.  On the CPU the ranks of one host share its
 * cores (cores / ranks threads each, unless the spec or OMP_NUM_THREADS
 * sets them), the one-rank figure too.  The accuracy is not checked
 * (max_rel_err -1): the kernels are those of the one-rank rows. */
orr_status orr_bench_run_dist(orr_comm *c, orr_backend_kind kind, const orr_kspec *spec,
                              const orr_kspec *single_spec, long n, int device, int steps,
                              orr_bench_row *row, orr_bench_dist *out, orr_error *err);

/* One Hermite block step (integrator hermite) of `active` bodies, spread
 * over the n, against all n predicted bodies: the best of reps, in ms, of
 * what a block costs where the engine keeps the blocks (the GPU:
 * prediction of all, force + jerk, correction, the read-back); on the CPU
 * the force + jerk of the active bodies.  launch (GPU; may be NULL: the
 * defaults) holds the force + jerk kernel's launch per bucket of active
 * bodies, ORR_HBUCKETS of them (htune.h). */
orr_status orr_bench_hermite(orr_backend_kind kind, const orr_kspec *spec, long n, long active,
                             const orr_hlaunch *launch, int reps, double *ms, orr_error *err);

#endif
