/* engine: one backend instance (CUDA or CPU) holding N bodies in its own
 * precision and layout, with the kernels of one family compiled for one
 * kernel spec.  This header is the engine's whole public face: the engine
 * is opaque, its backends (backend_cuda.c, backend_cpu.c) and their shared
 * inside are in engine_impl.h.  Host-side data is always double: positions
 * as pos[4n] = (x, y, z, m) per body, velocities and accelerations as 3n.
 *
 * Targets and sources are apart: a force pass computes the accelerations
 * of a range of target bodies (a rank's slice, a block step's active
 * bodies) from all n bodies as sources; kick, drift and the potential work
 * on a range too.  A body's sum over the sources runs in the same order
 * whatever range it is computed in, so the results do not depend on how
 * the bodies are split.  The functions without a range work on all bodies.
 *
 * A communication layer can reach the engine's own buffers (device memory
 * on the GPU, in the engine's precision and layout) and queue work on its
 * stream, so positions can be exchanged without a trip through the host. */
#ifndef ORR_ENGINE_H
#define ORR_ENGINE_H

#include <stddef.h>
#include "err.h"
#include "kspec.h"
#include "kcache.h"
#include "law.h"
#include "cuda.h"

typedef enum { ORR_BACKEND_AUTO = 0, ORR_BACKEND_CUDA, ORR_BACKEND_CPU } orr_backend_kind;

typedef struct orr_engine orr_engine;

/* A run of the engine's bodies [first, first + count). */
typedef struct {
    long first;
    long count;
} orr_range;

/* The engine's buffers a communication layer can fill or read, in the
 * engine's precision (elem bytes a value).  On the GPU (on_device = 1) body
 * i's record (x, y, z, m for positions; vx, vy, vz, - for velocities)
 * starts at dptr + i * stride; on the CPU (on_device = 0) each component is
 * an array host[c] of n values.  Valid until the engine is destroyed or
 * rebuilt. */
typedef enum { ORR_ENGINE_POS = 0, ORR_ENGINE_VEL = 1, ORR_ENGINE_ACC = 2 } orr_buffer_id;
typedef struct {
    int on_device;     /* 1: GPU memory at dptr; 0: host arrays */
    orr_devptr dptr;
    void *host[4];
    int ncomp;         /* components used: 4 for positions (with the mass), else 3 */
    size_t elem;       /* bytes per value: 4 (float) or 8 (double) */
    size_t stride;     /* bytes from one body's record to the next (GPU) */
} orr_buffer;

/* The force law whose compiled CPU code is running now, as "force law 'x'
 * (defined at script.lua:3)" (a built-in one: "(from forces/x.h)"), or
 * NULL: the CPU backend sets it around each call into a law's code (a
 * force pass, the potential, the jerk, a sample), so that a crash there (a
 * snippet reading out of bounds: SIGSEGV in an OpenMP thread) can be
 * reported naming the law.  One atomic load of a static pointer to a string
 * the engine keeps until it is destroyed: async-signal-safe, for a signal
 * handler (the CLI's; the library never prints).  With CPU engines running
 * on several threads at once, one of them or NULL. */
const char *orr_engine_cpu_running(void);

/* Why CUDA cannot be used here (driver, device), or ORR_OK when it can. */
orr_status orr_cuda_usable(int device, orr_error *err);

/* Creates an engine for n bodies.  Under ORR_BACKEND_AUTO it uses CUDA when a
 * usable device exists, else the CPU, and writes a one-line notice saying why
 * into notice (may be NULL).  When spec is NULL the backend's defaults apply. */
orr_status orr_engine_create(orr_engine **out, orr_backend_kind kind, const orr_kspec *spec,
                             orr_variant variant, long n, int device, char *notice,
                             size_t notice_size, orr_error *err);
void orr_engine_destroy(orr_engine *e);

/* What the engine is: its spec (as created; its law is the engine's own
 * copy with the params as built, the runtime ones as orr_engine_runtime
 * gives them), its body count, its backend's name ("cuda" or "cpu") and
 * kind, the j-ranges its GPU force pass runs with (the automatic choice
 * resolved; 1 on the CPU), the number of the law's attributes, and how its
 * kernels were obtained. */
const orr_kspec *orr_engine_spec(const orr_engine *e);
long orr_engine_n(const orr_engine *e);
const char *orr_engine_backend_name(const orr_engine *e);
orr_backend_kind orr_engine_backend(const orr_engine *e);
int orr_engine_ranges(const orr_engine *e);
/* GPU: the targets whose force blocks, over all the j-ranges, fill every
 * SM's resident block slots once (a wave; rounded down, one block's
 * targets at least): a force pass on k times as many runs k whole waves.
 * 0 on the CPU. */
long orr_engine_wave_targets(const orr_engine *e);
int orr_engine_nattr(const orr_engine *e);
const orr_build_info *orr_engine_build_info(const orr_engine *e);
/* All of the engine's bodies as a range. */
orr_range orr_engine_all(const orr_engine *e);

orr_status orr_engine_set_state(orr_engine *e, const double *pos, const double *vel, orr_error *err);
orr_status orr_engine_get_state(orr_engine *e, double *pos, double *vel, orr_error *err);
orr_status orr_engine_accel(orr_engine *e, double *acc, orr_error *err); /* compute + fetch */
/* Accelerations of the targets t from all bodies into the engine's own
 * buffer (nothing is fetched); get_accel fetches them (3 t.count values). */
orr_status orr_engine_force(orr_engine *e, orr_range t, orr_error *err);
/* Blow-ups.  Kick and drift flag the first body whose acceleration or new
 * position is not finite, with the step number last set here (the lowest
 * step, then the lowest body, is kept), at no cost worth measuring.
 * orr_engine_blowup reads the flag (on the GPU, an 8-byte read: it waits
 * for the queued work) into *step and *body (-1 for none), and clears it. */
void orr_engine_set_step(orr_engine *e, long step);
orr_status orr_engine_blowup(orr_engine *e, long *step, long *body, orr_error *err);

/* The force on t in two parts, so that it can start while other sources
 * are still arriving (dist.h): ORR_FORCE_LOCAL sums the sources that lie in
 * t itself (on the GPU: the j-ranges wholly inside t; nothing on the CPU),
 * ORR_FORCE_REST the others and completes the accelerations.  LOCAL then
 * REST, with nothing between that moves a body, give the bits of
 * orr_engine_force(e, t) (ORR_FORCE_WHOLE). */
typedef enum { ORR_FORCE_WHOLE, ORR_FORCE_LOCAL, ORR_FORCE_REST } orr_force_part;
orr_status orr_engine_force_part(orr_engine *e, orr_range t, orr_force_part part,
                                 orr_error *err);
orr_status orr_engine_get_accel(orr_engine *e, orr_range t, double *acc, orr_error *err);
/* Accelerations and jerks of the ni bodies idx[k] (3 ni values each, in
 * double) from all n bodies' positions and velocities as they are in the
 * engine: the Hermite integrator's force.  The law must have a jerk snippet
 * (orr_law_has_jerk), else ORR_ERR_ARG naming the law. */
orr_status orr_engine_accel_jerk(orr_engine *e, long ni, const long *idx, double *acc,
                                 double *jerk, orr_error *err);

/* Block time steps kept by the engine itself (the GPU backend: every
 * body's acceleration, jerk, step and time stay on the device, and an
 * interval's blocks are queued without a read-back per block; hermite.c).  A step of body
 * i is H / 2^level_i, its time counted in ticks of H / 2^40. */
#define ORR_BLOCK_MAX_LEVEL 40
/* The shortest block step, 2^-320 (about 4.7e-97): its cube, which the
 * Hermite correction divides by, stays a normal double.  dt_max may not be
 * shorter, and the finest level stops there. */
#define ORR_BLOCK_MIN_STEP 0x1p-320
typedef struct {
    double H;           /* the interval: dt_max, or less for the last of an advance */
    double eta;         /* Aarseth's parameter (inside the root) */
    double eta_start;   /* first steps: eta_start |a| / |jerk| */
    int hi;             /* the finest level dt_min allows */
    long max_blocks;    /* an interval stops after this many blocks (a stall); 0: no limit */
    /* The step criterion's noise floor: a snap or crackle whose change of
     * the acceleration over the step is below 32 anoise counts as 0 (a
     * body whose pulls cancel, at rest between symmetric bodies, would
     * otherwise halve its step on rounding noise down to the floor).
     * anoise >= 0: given (the host's, as its own blocks take it); < 0: the
     * engine finds it as its blocks begin, noise times the median |a| of
     * every body (orr_engine_force_noise). */
    double anoise, noise;
} orr_block_params;
/* The rounding of the engine's force + jerk sums relative to the forces
 * summed: 1e-13 where they are summed in double, 1e-7 in mixed precision
 * on the GPU (each tile's sums in float), 1e-5 in float. */
double orr_engine_force_noise(const orr_engine *e);
/* 1 when the engine keeps block steps itself (else the integrator does,
 * through orr_engine_accel_jerk). */
int orr_engine_has_blocks(const orr_engine *e);
/* Starts an interval: every body's time to 0, and the positions and
 * velocities kept as they are (orr_engine_blocks_abort puts them back);
 * with fresh, the accelerations and jerks of every body at the current
 * state, and (unless keep_steps) the first steps. */
orr_status orr_engine_blocks_begin(orr_engine *e, const orr_block_params *p, int fresh,
                                   int keep_steps, orr_error *err);
/* One block step: *t the block's time (ticks), *nact its active bodies. */
orr_status orr_engine_block(orr_engine *e, const orr_block_params *p, long long *t, long *nact,
                            orr_error *err);
/* The interval's blocks until its end, without the host waiting on any
 * (the GPU: in batches of launches; ORRERY_HBLOCKS, backend_cuda.c):
 * they stop at the block that reaches the interval's end or at
 * p->max_blocks blocks since orr_engine_blocks_begin.  *t is the last
 * block's time (ticks: 2^40 at the end), *blocks and *active the blocks
 * and their active bodies summed since orr_engine_blocks_begin.  The same
 * steps, bit for bit, as orr_engine_block one at a time. */
orr_status orr_engine_blocks_run(orr_engine *e, const orr_block_params *p, long long *t,
                                 long *blocks, long *active, orr_error *err);
/* The environment's choices for block steps on the GPU (docs/LUA_API.md):
 * ORRERY_HBLOCKS into *mode (0 persist: unset, empty or "persist"; 1
 * batch; 2 block), ORRERY_HSPLIT into *split (-1 unset or empty; 0 "off"
 * or 0; else the smallest count of active bodies of a block split between
 * GPUs).  ORR_ERR_ARG naming the variable and its value otherwise. */
orr_status orr_hblocks_env(int *mode, long *split, orr_error *err);

/* Several GPUs, one per rank (hermite.c over ranks; every GPU holds every
 * body and runs the same blocks): orr_engine_blocks_run gives a block of
 * at least min_active active bodies to the ranks in shares (rank r the
 * r-th share of its active bodies in index order: force + jerk and
 * correction), and gather, queued on the engine's stream (orr_engine_stream),
 * brings every rank's corrected records (counts[r] records of elem bytes
 * at displs[r] of buf, in place) to every rank; smaller blocks run whole
 * on every GPU without communication.  min_active 0: no block is split
 * (the default).  With one rank gather may be NULL: the split path runs
 * alone (the same bits as no split: tests).  The GPU only (else
 * ORR_ERR_ARG). */
typedef struct orr_block_split {
    long min_active;
    int rank, ranks;
    orr_status (*gather)(void *ctx, orr_devptr buf, const long *counts, const long *displs,
                         size_t elem, orr_error *err);
    void *ctx;
} orr_block_split;
orr_status orr_engine_blocks_split(orr_engine *e, const orr_block_split *s, orr_error *err);
/* What the engine's block steps did since it was made: the time of the
 * phases of its device-side loop (next time, prediction, force + jerk,
 * correction, s; the GPU's persistent kernel, else 0), the blocks split
 * between GPUs and their active bodies (and the split's min_active), and
 * the time their exchange took on the stream (s). */
typedef struct {
    double phase_s[4];
    long split_min;   /* the split's min_active now */
    long split_blocks, split_active;
    double comm_s;
} orr_blocks_stats;
void orr_engine_blocks_stats(const orr_engine *e, orr_blocks_stats *out);
/* Field k of every body (0 acceleration, 1 jerk: 3n values), read into io
 * or (set) written from it; *deepest (when not NULL, instead) the finest
 * level used since the interval began. */
orr_status orr_engine_blocks_field(orr_engine *e, int k, double *io, int set, int *deepest,
                                   orr_error *err);
/* Every body's level (its step is H / 2^level), read into level or (set)
 * written from it: each from 0 to 40 (ORR_ERR_ARG naming the body
 * otherwise, nothing written). */
orr_status orr_engine_blocks_levels(orr_engine *e, int *level, int set, orr_error *err);
/* The host's watch over the engine's block steps (hermite.c: regularised
 * groups on the GPU, whose centres and perturbers the host steps itself):
 * the orr_engine_blocks_run calls that follow stop before a block at or
 * after tick `stop`, or after a block in which a corrected body's
 * acceleration reached `pull` while another of the block's bodies was
 * within `near` of it at the block's time, as predicted, and bound to it
 * with an apocentre within `near`, or approaching it to a pericentre
 * within `peri` (unbound) or `peri_bound` (bound; G: the constant of
 * gravitation).  orr_engine_blocks_why
 * says which, after each run (0 the interval's end or max_blocks, 1 the
 * stop, 2 the pull).  The engine's blocks resolve the regularised pairs
 * listed, so that their perturbers need not stop it: a body active closer
 * than R to a pair's centre (predicted) feels the two members instead of
 * the centre, with acceleration and jerk, the members carried from their
 * state at t0 to the block's time along their Kepler orbit
 * (kernels_src/kepler.h).  A fast pair's centre steps there too, where
 * its block is at t0: its perturbers, listed, pull its members instead of
 * it, and the run stops (1) before its next block, for the caller to move
 * the pair's own motion on to it.  orr_engine_blocks_begin clears the
 * watch.
 * ORR_ERR_ARG where the engine cannot stop so (only its persistent loop
 * can, in double): the caller runs the blocks itself. */
#define ORR_WATCH_PAIRS 64
typedef struct {
    long centre, other;   /* the bodies of the pair's centre (member 0) and of member 1 */
    double m[2];          /* the members' masses */
    double t0;            /* the time of r and v: tick * (H / 2^40), the interval's */
    double r[3], v[3];    /* member 1's position and velocity less member 0's at t0 */
    double R;             /* active bodies closer to the centre are resolved */
    int fast;             /* its centre's block at t0 runs in the engine's loop too (r and v
                             moved on to it by the caller): its perturbers pert[0 .. npert)
                             (at most ORR_WATCH_PERT_MAX) pull the members instead of the
                             centre, its next step is at most cap (<= 0: any), and the run
                             stops before its next block */
    double cap;
    const long *pert;
    long npert;
} orr_watch_pair;
#define ORR_WATCH_PERT_MAX 1024
/* A pair the caller declined to form (a third body's tide holds it apart;
 * groups.c): a pull between a and b does not stop the run at a block
 * before tick `until`. */
#define ORR_WATCH_DECLINED 16
typedef struct {
    long a, b;   /* a < b */
    long long until;
} orr_watch_decline;
typedef struct {
    long long stop;   /* < 0: none */
    double pull;      /* <= 0: none */
    double near, peri, peri_bound, G;
    int npairs;       /* pairs[0 .. npairs) resolved by the engine's blocks */
    orr_watch_pair pairs[ORR_WATCH_PAIRS];
    int ndeclined;    /* declined[0 .. ndeclined) */
    orr_watch_decline declined[ORR_WATCH_DECLINED];
} orr_block_watch;
orr_status orr_engine_blocks_watch(orr_engine *e, const orr_block_watch *w, orr_error *err);
int orr_engine_blocks_why(const orr_engine *e);
/* The whole block-step state, read into or (set) written from the host:
 * positions and masses pos[4n], velocities vel[3n], accelerations and
 * jerks acc, jerk[3n] at each body's own time tick[n] (ticks of the
 * interval), levels level[n]. */
orr_status orr_engine_blocks_state(orr_engine *e, double *pos, double *vel, double *acc,
                                   double *jerk, long long *tick, int *level, int set,
                                   orr_error *err);
/* Part of that state (the same whole-n host arrays): set, the *count
 * bodies list[] written from the host; else those the engine's blocks
 * corrected since tick `since` (a later tick) read into the host arrays,
 * their numbers into list (n long) and how many into *count, `most` at the
 * most expected (more are read whole).  A watched run's host and GPU so
 * exchange only what changed (hermite.c). */
orr_status orr_engine_blocks_some(orr_engine *e, double *pos, double *vel, double *acc,
                                  double *jerk, long long *tick, int *level, int set,
                                  long *list, long *count, long long since, long most,
                                  orr_error *err);
/* The predicted positions and velocities the next orr_engine_accel_jerk
 * reads, leaving the engine's block-step state as it is (where the engine
 * keeps one; else orr_engine_set_state). */
orr_status orr_engine_set_predicted(orr_engine *e, const double *xp, const double *vp,
                                    orr_error *err);
/* Every body of the engine's block-step state predicted to tick `tick`
 * of the interval under way, as its own blocks predict them: what the
 * next orr_engine_accel_jerk reads (as orr_engine_set_predicted sets it,
 * without the copy).  ORR_ERR_ARG where the engine keeps no block steps. */
orr_status orr_engine_blocks_predict(orr_engine *e, long long tick, orr_error *err);
/* The interval under way is given up: the positions and velocities go
 * back to where orr_engine_blocks_begin found them. */
orr_status orr_engine_blocks_abort(orr_engine *e, orr_error *err);
/* The force + jerk kernel's launch per bucket of active bodies (GPU; the
 * Hermite tuner's choice, htune.h): the tile (threads per block and bodies
 * per shared-memory tile: 64, 128 or 256) and the j-split, as a target of
 * blocks per SM (1..64: the j-range of all n bodies is split until the
 * blocks of the active bodies number about per_sm times the SMs).  Bucket
 * k holds the blocks of up to 64 * 4^k active bodies (orr_hbucket); a zero
 * field is the default (tile min(block, 256), 16 blocks per SM). */
#define ORR_HBUCKETS 13
typedef struct {
    int tile, per_sm;
} orr_hlaunch;
int orr_hbucket(long nact);      /* the bucket of nact active bodies */
/* 1 when l is a launch (tile 64, 128 or 256; 1 to 64 blocks per SM) */
int orr_hlaunch_valid(orr_hlaunch l);
/* The default launch for the spec's block size: tile min(block, 256)
 * rounded down to 64, 128 or 256, and 16 blocks per SM. */
orr_hlaunch orr_hlaunch_default(int block);
long orr_hbucket_top(int k);     /* its largest count, 64 * 4^k */
/* The j-ranges a launch l splits n source bodies into for nact active
 * bodies on a GPU of sms SMs (the backend's rule, shared with the tuner):
 * about per_sm blocks per SM, at most 256 ranges, no more ranges than
 * tiles, and at most 4n partial sums; *jlen (may be NULL) gets the bodies
 * of each (ceil(n / ranges), not rounded to whole tiles: the last tile of
 * a range may be part of one). */
int orr_hlaunch_ranges(long n, long nact, orr_hlaunch l, int sms, long *jlen);
/* The whole shape (kernels_src/direct.cu: orr_hshape_of does the same):
 * *split adjacent threads share an active body, each taking every
 * split-th source (1 to 32: doubled while the blocks, at one tile per
 * range, would be fewer than per_sm per SM), so a block holds tile /
 * split active bodies; *iblocks such blocks hold them all; the j-ranges
 * are returned, as orr_hlaunch_ranges.  Any pointer may be NULL. */
int orr_hlaunch_shape(long n, long nact, orr_hlaunch l, int sms, int *split, long *iblocks,
                      long *jlen);
/* Validates and sets bucket k's launch (ORR_ERR_ARG naming the bad field),
 * or reads it back (the defaults resolved). */
orr_status orr_engine_set_hlaunch(orr_engine *e, int k, orr_hlaunch l, orr_error *err);
orr_hlaunch orr_engine_hlaunch(const orr_engine *e, int k);
/* Times `reps` force + jerk passes of the ni bodies idx (from the bodies
 * as set, with the launch of ni's bucket), ms per pass on the backend's
 * clock; the GPU only (else ORR_ERR_ARG). */
orr_status orr_engine_time_accel_jerk(orr_engine *e, long ni, const long *idx, int reps,
                                      double *ms, orr_error *err);
/* kick, drift and the potential on the targets t only; the potential of a
 * range is its share of the total (half of each target's pair sum), so the
 * shares of disjoint ranges add up to the whole. */
orr_status orr_engine_kick_range(orr_engine *e, orr_range t, double dt, double damping,
                                 orr_error *err);
orr_status orr_engine_drift_range(orr_engine *e, orr_range t, double dt, orr_error *err);
orr_status orr_engine_potential_range(orr_engine *e, orr_range t, double *u, orr_error *err);
/* v = (v + a dt) * damping, with a from the last accel call. */
orr_status orr_engine_kick(orr_engine *e, double dt, double damping, orr_error *err);
/* x += v dt, wrapped into the spec's periodic box on periodic axes. */
orr_status orr_engine_drift(orr_engine *e, double dt, orr_error *err);
orr_status orr_engine_potential(orr_engine *e, double *u, orr_error *err);
/* Uploads the attributes (attr[a * n + i], e->nattr * n values); all 0 until set. */
orr_status orr_engine_set_attr(orr_engine *e, const double *attr, orr_error *err);
/* Sets the runtime params (e->nrt values, slot order); they apply from the
 * next launch, with no recompile. */
void orr_engine_set_runtime(orr_engine *e, const double *values);
/* The runtime values in use (ORR_RT_SLOTS values: the law's params in
 * slot order, the fields' from ORR_RT_FIELD, the time at ORR_RT_T0;
 * field.h). */
const double *orr_engine_runtime(const orr_engine *e);
/* Sets the external fields' runtime params (in slot order, field after
 * field: orr_fieldset_runtime_values); they apply from the next launch. */
void orr_engine_set_field_runtime(orr_engine *e, const double *values);
/* The time of the next force evaluations, for fields that depend on it: t0,
 * and on the GPU's block steps t0 + tick * unit, tick the block's time in
 * ticks of the interval (unit 0 everywhere else). */
void orr_engine_set_time(orr_engine *e, double t0, double unit);
/* A frame that follows a cluster (field.h: orr_fieldset.frame; physics/
 * frame.h): fn fills the launches' ORR_FRAME_SLOTS values for the times t0
 * to t0 + span that they evaluate (span 0: t0 alone), called by
 * orr_engine_set_time with span = unit * 2^ORR_BLOCK_MAX_LEVEL (a Hermite
 * interval's) .  NULL: none (the slots stay 0: the centre at the origin). */
typedef void (*orr_frame_fn)(void *ctx, double t0, double span, double *slots);
void orr_engine_set_frame(orr_engine *e, orr_frame_fn fn, void *ctx);
/* The engine's external fields (0: none). */
int orr_engine_nfields(const orr_engine *e);
/* The targets' energy in the external fields, sum over t of m_i Phi(x_i)
 * (0 without fields): the shares of disjoint ranges add up. */
orr_status orr_engine_field_potential_range(orr_engine *e, orr_range t, double *u,
                                            orr_error *err);
orr_status orr_engine_accel_sample(orr_engine *e, long ni, const long *idx, double *acc,
                                   orr_error *err);
orr_status orr_engine_time_steps(orr_engine *e, int steps, int force_only, double *ms,
                                 orr_error *err);
/* The same on the targets t only (the force on them from all n; kick and
 * drift of t): what one rank of several does per step (dist.h). */
orr_status orr_engine_time_range(orr_engine *e, orr_range t, int steps, int force_only,
                                 double *ms, orr_error *err);

/* Pictures (render.h): the cloud-in-cell deposit of every body's mass on a
 * width x height grid over a plane of two coordinates, ax along the
 * columns (left to right from ext[0] to ext[1]) and ay along the rows (top
 * to bottom, from ext[3] down to ext[2]).  Each body with mass m > 0 and
 * finite coordinates adds its mass per unit pixel area to the four pixel
 * centres around it, with weights linear in the distance; pixels outside
 * the grid get nothing. */
typedef struct {
    int width, height;   /* pixels, 1..16384 */
    int ax, ay;          /* coordinates along the columns and the rows: 0 x, 1 y, 2 z */
    double ext[4];       /* xmin, xmax, ymin, ymax of the plane (finite, min < max) */
} orr_deposit;

/* density[height * width] (row 0 at the top) = the deposit of the engine's
 * bodies, as they are in the engine now.  Only the grid leaves the engine:
 * on the GPU a kernel adds the weights in double with atomic adds and the
 * grid is copied to the host (the bodies are not); on the CPU it runs in
 * body order, the arithmetic of orr_deposit_host bit for bit.  On the GPU
 * a pixel differs from orr_deposit_host only by the order of its sum (a
 * relative 1e-16 times the bodies in it).  The first call on a GPU builds
 * the deposit kernels (through the kernel cache). */
orr_status orr_engine_deposit(orr_engine *e, const orr_deposit *d, double *density,
                              orr_error *err);
/* The same for n bodies at pos[4n] (x y z m) on the host, in body order. */
orr_status orr_deposit_host(const orr_deposit *d, long n, const double *pos, double *density,
                            orr_error *err);

/* The live view's subsample (io/view.h): the bodies first, first + stride,
 * ... (count of them, all below n) as floats: out[3k .. 3k + 2] the k-th's
 * position, out[3 count + k] its speed, out[4 count + k] its mass.  Only
 * the sample leaves the engine: on the GPU a gather kernel fills a buffer
 * of 5 count floats that is copied to the host; on the CPU a strided copy.
 * The first call on a GPU builds the render kernels (as the deposit). */
orr_status orr_engine_sample(orr_engine *e, long first, long stride, long count, float *out,
                             orr_error *err);

/* The engine's buffer id (see orr_buffer). */
orr_status orr_engine_buffer(orr_engine *e, orr_buffer_id id, orr_buffer *out, orr_error *err);
/* The engine's work queue: its CUDA stream (a CUstream) on the GPU, NULL on
 * the CPU.  Work queued there runs in order with the engine's kernels. */
void *orr_engine_stream(const orr_engine *e);
/* Waits until everything queued on the engine has finished. */
orr_status orr_engine_sync(orr_engine *e, orr_error *err);

/* The backend a request resolves to: CUDA or CPU as asked (CUDA checked
 * usable: the message says why not), and under ORR_BACKEND_AUTO CUDA when
 * a usable device exists, else the CPU with a one-line notice saying why
 * (notice may be NULL). */
orr_status orr_backend_resolve(orr_backend_kind asked, int device, orr_backend_kind *out,
                               char *notice, size_t notice_size, orr_error *err);

const char *orr_backend_name(orr_backend_kind k);
orr_status orr_backend_parse(const char *name, orr_backend_kind *k, orr_error *err);

/* Compiles the spec's GPU kernels for arch ("sm_90") into the kernel cache
 * unless they are there already, without a device or context: a later
 * engine for the same spec loads them at once.  Safe to call from several
 * threads at a time (the tuner compiles candidates in parallel). */
orr_status orr_cuda_prebuild(const orr_kspec *spec, const char *arch, orr_error *err);

/* What orr_engine_compile produced. */
typedef struct {
    void *data;           /* heap: source or PTX text (no NUL counted), CUBIN or shared object */
    size_t len;           /* bytes */
    double seconds;       /* compile time (0 for source) */
    char arch[32];        /* GPU: the architecture compiled for ("sm_90") */
    char kernels[1024];   /* GPU: the lowered kernel names, space-separated */
} orr_compiled;

/* Builds the spec's direct-family kernels for a target the way the
 * backends do, without the cache or a device: emit "source" (the generated
 * source), "ptx" or "cubin" (GPU, for arch, NULL = this machine's device 0,
 * else sm_90) or "so" (CPU shared object).  Free with orr_compiled_free. */
orr_status orr_engine_compile(const orr_kspec *spec, orr_target target, const char *emit,
                              const char *arch, orr_compiled *out, orr_error *err);
void orr_compiled_free(orr_compiled *c);

#endif
