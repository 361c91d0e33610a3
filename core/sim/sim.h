/* sim: a simulation: N bodies on a backend engine, its force law and
 * external fields (field.h), an integrator (see
 * integrator.h, chosen by name), the clock, an optional periodic box, 2D or 3D, and
 * the diagnostics (energy, momentum, angular momentum, centre of mass, virial
 * ratio) and text output.  The state lives on the backend; the host keeps a
 * double-precision mirror (pos[4n] = x, y, z, m; vel[3n]) that is fetched
 * only when read and uploaded before the next step only when written.
 * Over several ranks (config.comm) each rank advances its slice of the
 * bodies (dist.h) and every rank's mirror shows all of them. */
#ifndef ORR_SIM_H
#define ORR_SIM_H

#include <stddef.h>
#include "comm.h"
#include "engine.h"
#include "field.h"
#include "htune.h"
#include "integrator.h"
#include "units.h"

/* regularize's default encounter: unbound encounters regularised to a
 * pericentre of this fraction of r_close (wider ones the GPU's block steps
 * follow for less than a group costs: docs/PERFORMANCE.md) */
#define ORR_REG_ENCOUNTER 0.05

typedef struct orr_sim orr_sim;

typedef struct {
    long n;                    /* bodies (required, >= 1) */
    orr_precision precision;   /* ORR_FLOAT */
    double G;                  /* 1 */
    double softening;          /* 0.01 */
    double dt;                 /* 0.01 */
    double damping;            /* 1: velocity factor per step of dt (euler only; a
                                  shortened step of h: damping^(h / dt)) */
    double eta;                /* hermite: Aarseth's accuracy parameter, inside the square
                                  root as in NBODY6++ (0.02) */
    double eta_start;          /* hermite: a body's first step is eta_start |a| / |jerk|
                                  (0.01) */
    double dt_min;             /* hermite: the smallest step (dt / 2^40 at the finest;
                                  0) */
    int regularize;            /* hermite: close pairs and compact groups leave the block
                                  steps for algorithmic regularisation (groups.h; gravity
                                  without softening, positions in double) (0) */
    double reg_r_close;        /* ... bodies closer than this form a group (0: 4 r_h / N,
                                  each interval's) */
    double reg_gamma;          /* ... a group's perturbers: down to a tide of gamma of its
                                  own force (1e-6) */
    double reg_encounter;      /* ... an unbound encounter forms one where its pericentre is
                                  within encounter r_close (ORR_REG_ENCOUNTER; a bound one
                                  reaching past r_close within r_close / 4, or this if more) */
    const char *integrator;    /* "leapfrog" */
    const orr_integrator *integrator_impl;   /* or an integrator table of one's own
                                  (overrides integrator; it must outlive the
                                  simulation) (NULL) */
    const char *force;         /* "gravity": a built-in law with its default params */
    const orr_law *law;        /* or the law itself (copied; overrides force) (NULL) */
    const struct orr_fieldset *fields;   /* external fields beside the law (copied; NULL:
                                  none): with units, a built-in's params that have a
                                  physical unit (milky_way's ro, vo) follow them */
    int frame;                 /* 1: the bodies' positions and velocities are relative to
                                  a frame whose centre moves in the fields (frame.h),
                                  from frame_center and frame_velocity at the start (0) */
    double frame_center[3], frame_velocity[3];
    double frame_step;         /* the centre's orbit step (0: its dynamical time / 1024) */
    orr_backend_kind backend;  /* ORR_BACKEND_AUTO */
    double box[3];             /* periodic box lengths; 0 = open axis (all 0) */
    int dims;                  /* 3, or 2 (z and vz held at 0) */
    int device;                /* GPU ordinal, 0 */
    int tune;                  /* ORR_SIM_TUNE_AUTO: on the GPU, the stored tuning for
                                  this device, law, precision and N bucket, else tune
                                  now and store it (CPU: defaults); ORR_SIM_TUNE_OFF:
                                  defaults; ORR_SIM_TUNE_ON: as auto, on the CPU too */
    double tune_budget;        /* seconds for a tuning on start-up (2); over several
                                  ranks each rank tunes its slice shape, one rank per
                                  shape (orr_sim_ranks) */
    orr_launch kernel;         /* a kernel configuration of one's own: its block,
                                  unroll, split, ipt, ranges, threads and prefetch override the
                                  default where not 0, and then nothing is tuned (tune
                                  ORR_SIM_TUNE_ON is an error); the same on every rank,
                                  so P ranks give the bits of one (all 0) */
    orr_units units;           /* the physical units of lengths and masses (units.h; time
                                  and velocity follow from them and G); all 0: N-body
                                  units (all 0) */
    orr_comm *comm;            /* the ranks the bodies are spread over (borrowed; NULL or
                                  one rank: this process alone).  Every rank runs the
                                  same calls; rank 0's bodies, written to its mirror,
                                  are what every rank starts from (NULL) */
} orr_sim_config;

enum { ORR_SIM_TUNE_AUTO = 0, ORR_SIM_TUNE_OFF = 1, ORR_SIM_TUNE_ON = 2 };

void orr_sim_config_default(orr_sim_config *c);

/* Creates a simulation with all bodies at the origin, at rest, mass 0.
 * notice (may be NULL) receives the auto-backend notice.  Validates every
 * field; messages name the field ("dt must be positive (got -1)").  Over
 * several ranks (collective): every rank's checks, its backend (resolved
 * per rank) and what it tunes are compared before any rank acts on them,
 * and whether every rank made its engine; a difference or a failure on
 * some ranks fails every rank alike (err->shared), naming the ranks.  Test
 * hook: ORRERY_TEST_RANK_BACKEND=R=cuda (or =cpu) makes rank R resolve
 * backend auto to that backend, as if its host alone had (or lacked) a
 * usable GPU. */
orr_status orr_sim_create(orr_sim **out, const orr_sim_config *c, char *notice,
                          size_t notice_size, orr_error *err);
void orr_sim_destroy(orr_sim *s);

const orr_sim_config *orr_sim_config_of(const orr_sim *s);
const orr_engine *orr_sim_engine(const orr_sim *s);
long orr_sim_n(const orr_sim *s);
double orr_sim_time(const orr_sim *s);
long orr_sim_steps(const orr_sim *s);

/* The host mirror, brought up to date from the backend first.  Pointers stay
 * valid for the simulation's life.  After writing through them call
 * orr_sim_touch, so the next step uploads them (and forces are recomputed).
 * The values are current until the next step: write only after calling
 * orr_sim_pos / orr_sim_vel since the last step (orr_sim_touch takes the
 * bodies only when they are current, so a stale mirror never rolls the
 * bodies back behind the clock; it takes the attributes always).  In
 * precision float every value written must fit a float (at most FLT_MAX in
 * magnitude): else the upload (before the next step, diagnostic or
 * output) fails, naming the body and the value, with nothing uploaded. */
orr_status orr_sim_pos(orr_sim *s, double **pos, orr_error *err);   /* 4n: x y z m */
orr_status orr_sim_vel(orr_sim *s, double **vel, orr_error *err);   /* 3n */
void orr_sim_touch(orr_sim *s);
/* After writing attributes only (orr_sim_attr): they are uploaded before
 * the next step; the bodies stay the engine's. */
void orr_sim_touch_attr(orr_sim *s);
/* The writes of the bodies and attributes so far are the same on every
 * rank (the bodies a simulation is created with, a restore that the ranks
 * compared): the next comparison (orr_sim_agree_call) counts afresh. */
void orr_sim_writes_agreed(orr_sim *s);

/* Pictures (render.h): the deposit of every body (engine.h:
 * orr_engine_deposit) where the bodies are: on the engine (with CUDA on
 * the GPU, only the grid is copied to the host), or from the mirror when
 * it was written and not yet uploaded.  No exchange between ranks: one
 * rank alone may call it. */
orr_status orr_sim_deposit(orr_sim *s, const orr_deposit *d, double *density, orr_error *err);
/* Every body's position and mass as orr_sim_deposit sees them, copied into
 * pos[4n], also without an exchange between ranks (orr_sim_pos gathers the
 * velocities of every rank's slice). */
orr_status orr_sim_copy_pos(orr_sim *s, double *pos, orr_error *err);

/* The live view's subsample (engine.h: orr_engine_sample, the same
 * layout of 5 count floats): from the engine, or from the mirror when it
 * was written and not yet uploaded.  Over several ranks collective: each
 * rank's speeds are current on its slice only, so they are summed over
 * the ranks (the positions are every rank's).  Refused between block
 * steps (the bodies are not at one time then). */
orr_status orr_sim_sample(orr_sim *s, long first, long stride, long count, float *out,
                          orr_error *err);

/* How the ranks exchange the bodies: "nccl", "host" or "none" (one rank),
 * and in *note (may be NULL) the choice and why, in one line. */
const char *orr_sim_exchange(const orr_sim *s, const char **note);

/* Brings the backend and the mirror into agreement: pending writes
 * uploaded, then the state read back (what the writers do first).  Over
 * several ranks every rank calls the state-reading functions at the same
 * points (they exchange the slices), so a rank that does not write calls
 * this where the writing rank writes. */
orr_status orr_sim_sync(orr_sim *s, orr_error *err);

/* Block time steps (integrator hermite): their statistics since creation
 * (integrator.h's orr_block_stats: blocks, active bodies summed over them,
 * the smallest step in the last interval, groups formed and parted, the
 * GPU loop's stops).  Returns 0 (and zeros) for fixed-step integrators. */
int orr_sim_blocks(const orr_sim *s, orr_block_stats *out);

/* This rank's kernel configuration and where it came from: "tuned" (tuned
 * now), "store" (a stored tuning), "default" or "checkpoint". */
const orr_kspec *orr_sim_kspec(const orr_sim *s, const char **source);

/* One rank's kernel configuration, as every rank knows it. */
typedef struct {
    orr_launch launch;   /* its kernels' launch settings (ranges as run: resolved) */
    char source[16];     /* where they came from, as orr_sim_kspec says */
    orr_range slice;     /* its bodies (all of them for one rank) */
    int device;          /* its GPU; -1 on the CPU */
    char host[64];       /* its host's name */
    double ms;           /* its tuned force time on its slice in ms; < 0 when not known */
} orr_sim_rank;

/* Every rank's configuration, in rank order (*ranks entries; one without
 * ranks): each rank tunes its own slice shape on its own device (ranks of
 * the same device kind and slice bucket share one tuning), so they may
 * differ.  Gathered when they change (creation, orr_sim_tune,
 * orr_sim_set_kspec). */
const orr_sim_rank *orr_sim_ranks(const orr_sim *s, int *ranks);

/* Block steps on the GPU (integrator hermite): the force + jerk kernel's
 * launch per bucket of active bodies as the Hermite tuner chose it
 * (htune.h: at creation when tuning, by orr_sim_tune, or from a
 * checkpoint: source "checkpoint"); NULL where the launches are the
 * defaults (the CPU, other integrators, tune = off, a kernel of one's
 * own). */
const orr_htune_result *orr_sim_hermite_tuning(const orr_sim *s);
/* Sets those launches (nbuckets of them, as many as n reaches: a
 * checkpoint's); nothing on the CPU or for other integrators. */
orr_status orr_sim_set_hermite_launch(orr_sim *s, const orr_hlaunch *launch, int nbuckets,
                                      const char *source, orr_error *err);

/* What the last tuning (at creation or orr_sim_tune, the force pass's or
 * the Hermite kernel's) said: a tuning not saved and why (the store
 * unreadable, its lock held past the wait, the cache directory unusable or
 * read-only), a corrupt store rewritten, the defaults kept; over several
 * ranks every rank's, each text once (orr_dist_notes), alike on every
 * rank.  "" when nothing was said or nothing was tuned.  Owned by s, valid
 * until the next tuning. */
const char *orr_sim_tune_note(const orr_sim *s);

/* Retunes the kernels for this simulation (budget seconds, or every
 * candidate when exhaustive) and switches to the winner; the state is kept.
 * report (may be NULL) sees every candidate (an orr_tune_trial, see tune.h).
 * Block steps on the GPU retune the force + jerk kernel instead
 * (orr_sim_hermite_tuning; report and exhaustive unused). */
orr_status orr_sim_tune(orr_sim *s, double budget, int exhaustive,
                        void (*report)(const void *trial, void *ctx), void *ctx, orr_error *err);

/* The force law in use (the simulation's own copy, with current params). */
const orr_law *orr_sim_law(const orr_sim *s);
/* The frame's centre and velocity now (frame.h): 1, 0 without a frame (R
 * and V untouched), -1 where its orbit cannot be made to now (err says
 * why). */
int orr_sim_frame(orr_sim *s, double R[3], double V[3], orr_error *err);
/* The frame's orbit so far (frame.h: orr_frame_nodes), for a checkpoint;
 * *count 0 without a frame.  And a checkpoint's back. */
orr_status orr_sim_frame_nodes(orr_sim *s, double **nodes, long *count, orr_error *err);
orr_status orr_sim_set_frame_nodes(orr_sim *s, const double *nodes, long count, orr_error *err);
/* The simulation's external fields (params as they are now; n = 0: none). */
const struct orr_fieldset *orr_sim_fields(const orr_sim *s);
/* The potential energy's two parts: the pair potential and the energy in
 * the external fields (sum of m_i Phi(x_i, t)), at the simulation's time;
 * orr_sim_energy's potential is their sum.  Either may be NULL. */
orr_status orr_sim_energy_parts(orr_sim *s, double *kinetic, double *pair, double *field,
                                orr_error *err);

/* The values of attribute a (0-based, in the law's order) of all bodies: n
 * doubles of the host mirror, 0 until set (always current: steps do not
 * change them).  After writing, call orr_sim_touch_attr (or orr_sim_touch)
 * so the next step uploads them. */
orr_status orr_sim_attr(orr_sim *s, int a, double **values, orr_error *err);

/* Sets a force-law param.  A runtime param takes effect at the next force
 * evaluation with no recompile (*recompiled = 0); a baked one builds the
 * kernels anew (through the kernel cache) and keeps the state
 * (*recompiled = 1).  recompiled may be NULL.  On failure the old value and
 * kernels stay. */
orr_status orr_sim_set_param(orr_sim *s, const char *name, double value, int *recompiled,
                             orr_error *err);

/* Compares the accelerations of the current backend on the current state
 * with the CPU backend in double for a sample of up to max_sample bodies
 * spread over the set (all when n <= max_sample; max_sample <= 0 means
 * 1024): *max_rel_err is orr_accel_err (bench.h): the largest
 * |a - a_ref| / max(|a_ref|, rms |a_ref|); *nsample the bodies compared (may
 * be NULL). */
orr_status orr_sim_verify(orr_sim *s, long max_sample, double *max_rel_err, long *nsample,
                          orr_error *err);

/* Sets the integration step; dt > 0 and finite. */
orr_status orr_sim_set_dt(orr_sim *s, double dt, orr_error *err);

/* Sets the clock and step count (restarts from a checkpoint); time finite,
 * steps >= 0.  The clock's rounding compensation starts anew. */
orr_status orr_sim_set_clock(orr_sim *s, double time, long steps, orr_error *err);
/* The clock's (Kahan) rounding compensation, so a checkpoint can carry it
 * and a restart continue the clock bit for bit; set it after the clock. */
double orr_sim_time_compensation(const orr_sim *s);
/* The clock's running sum itself (orr_sim_time less the compensation's
 * correction), for a checkpoint to carry with the compensation. */
double orr_sim_clock(const orr_sim *s);
void orr_sim_set_time_compensation(orr_sim *s, double c);

/* Switches to the kernel configuration of spec (its block, unroll, split,
 * ipt, prefetch, ftz, newton and threads; law, precision, softening, G and box stay
 * the simulation's), keeping the state; sim.config's source becomes source
 * (at most 15 characters; unchanged where the configuration already was
 * spec's).  On failure the old kernels stay.  Over several ranks every rank
 * calls it (the configurations are gathered again). */
orr_status orr_sim_set_kspec(orr_sim *s, const orr_kspec *spec, const char *source,
                             orr_error *err);

/* Over several ranks the stepping calls below are collective, and each
 * first compares what shapes its steps with rank 0's (one all-gather per
 * call): the call and its arguments, the clock, dt, damping, eta,
 * eta_start, dt_min, the law's param values and whether the bodies or
 * attributes were written since the last step.  A difference (a setting
 * changed on some ranks only) fails every rank alike before any step,
 * err->shared, naming it and the ranks of each value: "the ranks disagree
 * on dt: \"0.01\" on ranks 0 and 2, \"0.02\" on rank 1 (...)". */

/* Over several ranks, at the start of a call of the script that is
 * collective (sim:energy(), sim:write(path), ...: call is its text, e.g.
 * "sim:energy()", the arguments in words): the call, the settings that
 * shape what follows (dt, params, the clock, the writes of the bodies and
 * attributes since the last comparison) compared over the ranks, as at
 * every stepping call; a difference fails every rank alike (err->shared),
 * naming it and the ranks ("the ranks disagree on the call: \"sim:step(1)\"
 * on rank 0, \"sim:step(2.5)\" on rank 1"), and writes the ranks disagree
 * on are dropped on every rank.  Nothing with one rank. */
orr_status orr_sim_agree_call(orr_sim *s, const char *call, orr_error *err);

/* After a stepping call over several ranks failed with
 * ORR_ERR_INTERRUPTED (the ranks agreed on a stop): whether every rank had
 * a stop flag of its own (mpirun's Ctrl-C signals every rank, and ends the
 * job a second later) or only some (a signal sent to one rank). */
int orr_sim_stop_everywhere(const orr_sim *s);

/* Advances k >= 0 steps (with block time steps: intervals of dt_max, the
 * first one ending the interval that orr_sim_block_steps left under way).
 * Checks *stop (may be NULL) between steps and returns ORR_ERR_INTERRUPTED
 * when it became non-zero.  Over several ranks (each with a flag of its
 * own, set by a signal at a moment of its own) *stop is read only at the
 * call's start, where the ranks compare the call: set on any rank, every
 * rank returns ORR_ERR_INTERRUPTED there (err->shared), so that no rank
 * stops between steps while another waits for it in the next exchange.
 * orr_sim_block_steps and orr_sim_advance take *stop alike. */
orr_status orr_sim_step(orr_sim *s, long k, volatile int *stop, orr_error *err);

/* Block time steps (hermite): k >= 0 block steps, each the active bodies'
 * (those whose next time is the earliest) from all bodies predicted to
 * it.  Between the blocks of an interval of dt_max the bodies are at
 * times of their own: orr_sim_time is the last block's, orr_sim_synchronized
 * is 0, and reading or changing the state (diagnostics, outputs,
 * checkpoints, bodies, attributes, params, dt, kernels) is an error naming
 * the interval, until a block step, orr_sim_step or orr_sim_advance ends
 * it.  An error for a fixed-step integrator. */
orr_status orr_sim_block_steps(orr_sim *s, long k, volatile int *stop, orr_error *err);
/* 1 when every body is at orr_sim_time (always, but between block steps). */
int orr_sim_synchronized(const orr_sim *s);
/* The time every body is next at: the end of the interval under way
 * between block steps, else orr_sim_time. */
double orr_sim_sync_time(const orr_sim *s);

/* The integrator, and its checkpoint fields (integrator.h): field k of all
 * bodies, n * fields[k].comps doubles, read after the integrator has
 * synchronised, or restored (legacy: as stored under fields[k].legacy);
 * restoring uploads pending writes first, so that the fields go with the
 * state the engine holds.  A change of the state, attributes, params or
 * kernels after a restore makes the integrator start afresh, as it does
 * without one. */
const orr_integrator *orr_sim_integrator(const orr_sim *s);
orr_status orr_sim_integ_field(orr_sim *s, int k, double *out, orr_error *err);
orr_status orr_sim_set_integ_field(orr_sim *s, int k, int legacy, const double *in,
                                   orr_error *err);
/* 1 when the integrator's checkpoint fields describe the state as it is
 * (integrator.h: current): after orr_sim_sync, what a checkpoint stores. */
int orr_sim_integ_current(orr_sim *s);

/* Advances to time t_end >= the current time in steps of dt, the last one
 * shortened so the run ends on t_end (to rounding; euler's damping is
 * damping^(h / dt) on a step of h); no step when t_end is within
 * orr_sim_time_tolerance of the current time.  Between block steps the
 * interval under way ends first (an error when t_end is inside it).  *stop
 * as for orr_sim_step. */
orr_status orr_sim_advance(orr_sim *s, double t_end, volatile int *stop, orr_error *err);
/* The same, stopping after max_steps >= 0 steps (*taken, may be NULL, the
 * steps taken: 0 once on t_end); a run to t_end in chunks takes the steps,
 * and the bits, of one orr_sim_advance. */
orr_status orr_sim_advance_steps(orr_sim *s, double t_end, long max_steps, long *taken,
                                 volatile int *stop, orr_error *err);
/* How near t_end a clock at t (steps of dt) counts as there: 1e-12 dt, or
 * the clock's resolution there (4 DBL_EPSILON max(|t|, |t_end|), a few
 * spacings of doubles) where that is more. */
double orr_sim_time_tolerance(double dt, double t, double t_end);

/* Diagnostics, on the current state (synchronised by the integrator). */
orr_status orr_sim_energy(orr_sim *s, double *kinetic, double *potential, orr_error *err);
orr_status orr_sim_momentum(orr_sim *s, double p[3], orr_error *err);
orr_status orr_sim_angular_momentum(orr_sim *s, double l[3], orr_error *err);
/* Centre of mass position and velocity; total mass in *mass (may be NULL). */
orr_status orr_sim_center_of_mass(orr_sim *s, double x[3], double v[3], double *mass,
                                  orr_error *err);
/* The virial ratio K / |U| (0.5 in virial equilibrium). */
orr_status orr_sim_virial_ratio(orr_sim *s, double *q, orr_error *err);

/* A writer of a file of s, called with the state in the host mirror
 * (orr_sim_pos and orr_sim_vel then exchange nothing). */
typedef orr_status (*orr_sim_writer)(orr_sim *s, void *ctx, orr_error *err);
/* Writes the file path once, over any number of ranks: the state is
 * gathered on every rank (orr_sim_sync), then rank 0 alone calls write(s,
 * ctx, err), and every rank returns the same result, rank 0's
 * (orr_comm_agree: the message as it is, err->shared set).  st is what the
 * caller found before (its checks of the arguments): where it or the
 * gathering fails on any rank nothing is written and every rank returns
 * the lowest such rank's error ("rank R: ...").  Every rank names the same
 * path (rank 0 writes it for all): a difference fails every rank alike
 * before anything is written, naming the ranks of each path
 * (orr_comm_same_text).  Every rank calls it, at the same point; with one
 * rank it is st, else the sync, then write.  The writers below (and
 * snapshot.h's, checkpoint.h's) go through it. */
orr_status orr_sim_write_once(orr_sim *s, orr_status st, const char *path, orr_sim_writer write,
                              void *ctx, orr_error *err);

#endif
