/* bench: one row of `orrery bench`: builds an engine for N bodies (a
 * Plummer sphere for gravity-like laws, see orr_trial_bodies), times whole
 * steps (force, kick, drift) and the force kernel alone, and checks a sample
 * of accelerations against the double-precision CPU backend; over several
 * ranks the same with the exchange.  For the Hermite integrator: one block
 * step of a given number of active bodies (orr_bench_hermite), or a real
 * run of block steps through the simulation object that `orrery run` uses,
 * on one rank or over several (orr_bench_hermite_run). */
#ifndef ORR_BENCH_H
#define ORR_BENCH_H

#include <stdint.h>
#include "comm.h"
#include "engine.h"
#include "htune.h"
#include "law.h"

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

/* ---- A real Hermite run (bench --integrator hermite --run T) ---------------- */

/* What the run is: the model of scripts/cluster_hermite.lua (a Plummer
 * sphere of n bodies in Henon units, G = 1) and its integration settings. */
typedef struct {
    orr_backend_kind backend;  /* ORR_BACKEND_CUDA or ORR_BACKEND_CPU (resolved; auto is
                                  taken too, as orr_sim_create takes it) (CPU) */
    orr_precision precision;   /* ORR_DOUBLE (or ORR_MIXED) */
    const char *force;         /* "gravity": a built-in law with a jerk */
    const orr_law *law;        /* or a law of one's own (borrowed; overrides force) (NULL) */
    double G;                  /* 1 */
    double softening;          /* < 0: 4 / n, as cluster_hermite.lua (-1) */
    double eta;                /* Aarseth's parameter (0.02); the first steps take eta / 2,
                                  as orrery.simulation{} does */
    double dt_max;             /* the synchronisation interval (1/16) */
    double T;                  /* time units timed, a positive multiple of dt_max
                                  (orr_bench_hermite_intervals) (1) */
    uint64_t seed;             /* the Plummer sphere's, as orrery.ic.plummer{seed =} (7) */
    int threads;               /* CPU: OpenMP threads per rank; 0: the simulation's choice
                                  (the cores, shared by the ranks of a host) (0) */
    int reps;                  /* the all-active block: the best of reps (3) */
} orr_bench_hrun_config;

void orr_bench_hrun_default(orr_bench_hrun_config *c);

/* The number of intervals of dt_max in T when T is a positive whole
 * multiple of dt_max (to 1e-9 relative), else 0. */
long orr_bench_hermite_intervals(double T, double dt_max);

/* One row of the run mode: the run, then what it sustained against what
 * the same kernels do with every body active. */
typedef struct {
    long n;
    const char *backend;          /* "cuda" or "cpu" */
    orr_precision precision;
    double softening, eta, dt_max, T;   /* as run (softening resolved) */
    long intervals;               /* T / dt_max */
    double wall_s;                /* the T time units, after one interval of warm-up (the
                                     slowest rank's over several) */
    double s_per_time_unit;       /* wall_s / T */
    long blocks;                  /* block steps over the timed part (sim.blocks' difference) */
    long active;                  /* active bodies summed over them */
    double mean_active;           /* active / blocks */
    double interactions_per_s;    /* active * n / wall_s: sustained, all ranks together */
    double all_active_ms;         /* one block of all n bodies active (orr_bench_hermite,
                                     the run's kernels and launches): the best of reps, one
                                     rank (rank 0) on its device */
    double all_active_interactions_per_s;   /* n^2 / all_active_ms */
    double fraction;              /* interactions_per_s / (ranks * all-active rate): the part
                                     of the peak of the devices in use the run sustained */
    double de_over_e;             /* |E(end) - E(start)| / |E(start)| over the timed part;
                                     NaN where it is not defined (no_de says why) */
    const char *no_de;            /* NULL, or why: "the force law has no potential
                                     snippet", "the energy at the start is 0" (one body) */
    int tuned;                    /* 1: hermite holds the force + jerk launches the run used
                                     (the GPU, tuned or stored at creation); 0: the CPU */
    orr_htune_result hermite;     /* (rank 0's) */
    char note[ORR_NOTE_MAX];      /* what the run's tuning said (orr_sim_tune_note), or "" */
    /* over several ranks (ranks > 1; else ranks 1 and the rest 0) */
    int ranks;
    double comm_s;                /* the most seconds any rank spent in MPI collectives
                                     over the timed part (orr_comm_busy_s' difference) and
                                     in the GPUs' block exchange (gpu_comm_s) */
    double comm_share;            /* the largest rank_comm_s / rank_wall_s */
    double single_wall_s;         /* rank 0 alone, first: the same run (its own simulation,
                                     without the ranks, its device; on the CPU the threads
                                     of one rank) */
    double single_interactions_per_s;   /* its active * n / single_wall_s */
    double speedup;               /* single_wall_s / wall_s */
    double efficiency;            /* speedup / ranks */
    double rank_wall_s[ORR_BENCH_MAX_RANKS];   /* each rank's wall over the timed part */
    double rank_comm_s[ORR_BENCH_MAX_RANKS];   /* each rank's seconds in collectives in it */
    /* block steps on the GPUs (rank 0's engine, over the timed part) */
    long split_min;               /* blocks of this many active bodies or more are split
                                     between the GPUs (0: none) */
    long split_blocks, split_active;   /* the blocks split, their active bodies */
    double gpu_comm_s;            /* their exchange on the GPU's stream (NCCL), also in
                                     comm_s and rank_comm_s */
    double phase_s[4];            /* the device loop's phases (next time, prediction, force +
                                     jerk, correction; the persistent kernel's, else 0) */
} orr_bench_hrun;

/* A real run of Hermite block steps of n bodies (every rank of c calls
 * it; c may be NULL: this process alone): the Plummer sphere of cfg made
 * into a simulation as `orrery run` makes one (orr_sim_create, integrator
 * hermite, tune auto: on the GPU the force + jerk launches tuned or found
 * stored, as a run uses them; over the ranks of c the host path with an
 * all-gather per block), one interval of dt_max run untimed, then T time
 * units timed, with the energy before and after.  Then, with the run's
 * kernels and launches, one block of all n bodies (orr_bench_hermite).
 * Over several ranks, rank 0 first runs the same alone (the others wait)
 * for the speedup; every rank's wall and time in collectives is gathered,
 * so every rank's row is the same; where rank 0 alone fails, every rank
 * returns its error (shared: said once).  ORR_ERR_ARG when T is no
 * positive multiple of dt_max. */
orr_status orr_bench_hermite_run(orr_comm *c, const orr_bench_hrun_config *cfg, long n,
                                 int device, orr_bench_hrun *out, orr_error *err);

#endif
