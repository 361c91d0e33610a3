/* integrator: how a simulation advances in time.  An integrator is a const
 * table of functions (one per scheme, found by name), with state of its
 * own when it needs it (per-body times, steps, jerks for block time steps),
 * in the way REBOUND's integrators carry theirs.  It works on an engine
 * through orr_integ_env and never sees the simulation itself:
 *
 *   create / destroy   its state for n bodies (NULL create: none);
 *   step               one step of env->dt from a synchronised state (the
 *                      simulation advances its clock by env->dt after it);
 *                      with block steps, the rest of an interval that
 *                      block left under way;
 *   block              block time steps only (NULL: none): one block step,
 *                      beginning an interval of env->dt when none is under
 *                      way; between its blocks the bodies are at times of
 *                      their own, so nothing may read or change the state;
 *   synchronize        brings every body to the simulation's time before
 *                      diagnostics and output read the state (NULL: the
 *                      state is always synchronised, as for fixed steps);
 *   fields             what its state adds to a checkpoint: named per-body
 *                      arrays, read and restored through get/set_field;
 *   current            whether those fields describe the state as it is
 *                      (NULL: always): a checkpoint stores them only then,
 *                      and a run restored without them starts afresh.
 *
 * The fixed-step schemes here (euler, leapfrog, yoshida4) keep no state: a
 * force evaluation at the end of a step is reused at the start of the next
 * while env->acc_valid says the engine's accelerations still match its
 * positions (the simulation clears it whenever the state, the attributes
 * or the force law change). */
#ifndef ORR_INTEGRATOR_H
#define ORR_INTEGRATOR_H

#include "engine.h"

/* Block time steps' statistics since the simulation was made (or
 * restored). */
typedef struct {
    long blocks, active;   /* blocks done, active bodies summed over them */
    double smallest;       /* the smallest step used in the last interval (a time:
                              that interval may have been shortened) */
    long formed, parted;   /* regularised groups formed, and come apart (those taken
                              back as they formed among them) */
    long stops, host;      /* on the GPU's own block loop: its stops for the host, and
                              the blocks the host ran meanwhile (0 and 0 elsewhere) */
} orr_block_stats;

/* What an integrator works on.  It computes forces on, kicks and drifts
 * the targets only (all bodies, or this rank's slice of a distributed run)
 * and calls orr_integ_moved after every drift, which brings the other
 * ranks' positions in before the next force evaluation. */
typedef struct orr_integ_env {
    orr_engine *engine;   /* the bodies and their kernels */
    orr_range targets;    /* the bodies this process advances */
    double dt;            /* the step asked for (the last step of an advance may be shorter) */
    double time;          /* the time of the positions: the simulation's clock as a step (an
                             interval) begins; a fixed-step scheme moves it on with each
                             drift, and every force evaluation is at it (external fields
                             that depend on time: orr_engine_set_time) */
    double time_end;      /* the simulation's clock after this step (its compensated sum):
                             a fixed-step scheme's last force evaluation is at it, not at
                             its own sum of the drifts, so that a run restored there
                             computes the same forces (fields that depend on time, a
                             frame) */
    double dt_max;        /* the simulation's step (dt): what dt is when not shortened */
    double damping;       /* velocity factor for this step (euler only; 1 = none): the
                             simulation's damping^(dt / its dt) */
    double eta, eta_start, dt_min;   /* block time steps (hermite): Aarseth's accuracy
                                        parameter, the starting one, the smallest step */
    int regularize;       /* hermite: close pairs and compact groups regularised (groups.h) */
    double reg_r_close, reg_gamma;   /* ... closer than r_close (0: 4 r_h / N), perturbers
                                        down to a tide of gamma */
    double reg_encounter;            /* ... encounters to a pericentre of encounter r_close */
    double G;             /* the gravitational constant (the groups' own forces) */
    int acc_valid;        /* the engine's accelerations of the targets match the positions */
    /* called by orr_integ_moved: every rank's targets' positions to every
     * rank (NULL with one rank); with force (orr_integ_moved_force) also
     * the forces on the targets, overlapped with the exchange where it can */
    orr_status (*exchange)(struct orr_integ_env *env, void *ctx, int force, orr_error *err);
    void *exchange_ctx;
    /* the ranks, for an integrator that exchanges more than positions
     * (hermite: each block's corrected bodies); NULL with one rank */
    struct orr_comm *comm;
    /* over several ranks each with a GPU of its own (NULL otherwise): a
     * block's corrected records to every rank, queued on the engine's
     * stream (engine.h: orr_block_split), so hermite keeps its block steps
     * on the GPUs */
    orr_status (*block_gather)(void *ctx, orr_devptr buf, const long *counts,
                               const long *displs, size_t elem, orr_error *err);
    void *block_gather_ctx;
} orr_integ_env;

/* The targets' positions changed: the exchange, when there is one. */
orr_status orr_integ_moved(orr_integ_env *env, orr_error *err);
/* The same, followed at once by the forces on the targets (into the
 * engine's accelerations): over several GPUs the force's first part runs
 * while the other ranks' positions arrive.  Bitwise orr_integ_moved then
 * orr_engine_force. */
orr_status orr_integ_moved_force(orr_integ_env *env, orr_error *err);

/* A per-body array an integrator's state adds to a checkpoint. */
typedef struct {
    const char *name;     /* dataset name: "time", "step", "jerk", ... */
    int comps;            /* values per body: 1 or 3 */
    const char *legacy;   /* the name an older checkpoint stored it under, read when name
                             is absent (set_field is told), or NULL */
    int optional;         /* a checkpoint without it is restored without it */
} orr_integ_field;

#define ORR_INTEG_MAX_FIELDS 8

typedef struct orr_integrator {
    const char *name;     /* "euler", "leapfrog", "yoshida4" */
    int order;            /* 1, 2, 4 */
    int forces_per_step;  /* force evaluations per step once started */
    orr_status (*create)(void **state, long n, orr_error *err);
    void (*destroy)(void *state);
    orr_status (*step)(void *state, orr_integ_env *env, orr_error *err);
    /* *synced = 1 when the block ended the interval (every body at its end,
     * as after step), *at the block's time as a fraction of the interval */
    orr_status (*block)(void *state, orr_integ_env *env, int *synced, double *at,
                        orr_error *err);
    orr_status (*synchronize)(void *state, orr_integ_env *env, orr_error *err);
    int nfields;
    orr_integ_field fields[ORR_INTEG_MAX_FIELDS];
    /* field k of all n bodies: out / in hold n * comps doubles; set_field
     * checks them (an error names the body) and, with legacy, reads them as
     * stored under fields[k].legacy */
    orr_status (*get_field)(void *state, int k, double *out, orr_error *err);
    orr_status (*set_field)(void *state, orr_integ_env *env, int k, int legacy,
                            const double *in, orr_error *err);
    int (*current)(const void *state, const orr_integ_env *env);
    /* Block time steps (NULL for fixed steps): orr_block_stats. */
    void (*blocks)(const void *state, orr_block_stats *out);
} orr_integrator;

/* The 4th-order Hermite integrator with block time steps (hermite.c). */
extern const orr_integrator orr_integrator_hermite;

/* The integrator with this name, or NULL. */
const orr_integrator *orr_integrator_find(const char *name);
/* NULL-terminated list of all integrators, for messages and docs. */
const orr_integrator *const *orr_integrators(void);

#endif
