/* hermite: the 4th-order Hermite predictor-corrector with individual block
 * time steps (Makino & Aarseth 1992), the integrator of collisional
 * direct-summation codes (NBODY6++, phi-GPU).  One step of the simulation
 * (env->dt = H, the synchronisation interval, dt_max) is many block steps:
 *
 *   - every body i has its own step H / 2^level_i and its own time within
 *     the interval, counted exactly in ticks of H / 2^40 (ORR_BLOCK_MAX_LEVEL);
 *   - a block is the bodies whose next time is the smallest (the active
 *     ones); all bodies are predicted to it (x to 3rd order, v to 2nd),
 *     the engine computes the active bodies' accelerations and jerks from
 *     all predicted bodies (orr_engine_accel_jerk), and the active bodies
 *     are corrected to 4th order with the snap and crackle the two
 *     force evaluations give;
 *   - the next step is Aarseth's criterion, with eta inside the square root
 *     as in NBODY6++:  dt = sqrt(eta (|a||a2| + |j|^2) / (|j||a3| + |a2|^2)),
 *     quantised down to a power-of-two fraction of H, at most twice the
 *     last step, at least dt_min (when that is coarser than the criterion
 *     the step is dt_min's level: the criterion is not met there), and
 *     aligned so that the body's time is a multiple of it; a body starts
 *     (or restarts after its state was changed) with eta_start |a| / |j|;
 *   - after the last block every body is at the end of the interval: the
 *     state is synchronised, which is what outputs and diagnostics read.
 *
 * Where the engine keeps block steps itself (the GPU backend:
 * orr_engine_blocks_begin / orr_engine_blocks_run / orr_engine_block,
 * kernels in direct.cu) the same steps run there, an interval's blocks
 * queued without the host waiting on each (orr_engine_blocks_run; one
 * block at a time for sim:step(), its time and count read back);
 * otherwise (the CPU backend) they run here on the host, the engine giving
 * the active bodies' forces and jerks (orr_engine_accel_jerk).
 *
 * Over several ranks (env->comm) where every rank has a GPU of its own
 * and an exchange on it (env->block_gather: NCCL), the block steps stay
 * on the GPUs: every GPU holds every body and runs the same blocks; a
 * block of at least a crossover of active bodies (split_at) is shared out
 * between the GPUs and their corrected bodies all-gathered, a smaller one
 * is computed whole by every GPU without communication (engine.h:
 * orr_engine_blocks_split).  Otherwise (CPU ranks, ranks sharing a GPU)
 * the host path runs over the ranks: every rank keeps every body's state
 * and so chooses the same blocks; each computes the forces of, and
 * corrects, the active bodies of its own slice, and the corrected ones
 * are gathered (MPI) before the next block.  Each body's arithmetic is
 * what one rank does, so on the CPU backend P ranks give the bits of
 * one.
 *
 * With env->regularize (groups.h) close pairs and compact groups leave the
 * block steps: each is its centre of mass here, its members' motion
 * regularised; groups form and dissolve after a block's corrector
 * (regroup), their forces are corrected to the members' after the
 * engine's, and at the interval's end every group is resolved into its
 * members, so outside an interval every body is itself.  The blocks that
 * hold a group's centre or perturber run on the host path; on one GPU (in
 * double) the others run in the engine's own loop, which stops for the host
 * before such a block and after one where a close pair may have come
 * together (watched: what changed goes to the host and back at each stop);
 * elsewhere every block is the host's (the GPU computing its forces).  A
 * pair's perturbers step in the loop, and so does its centre where no other
 * group is near (a fast pair, orr_groups_watch): the loop stops before the
 * centre's block, the host moves the pair's own motion on to it with its
 * perturbers' tides, lists them anew and cuts the centre's next step
 * (orr_groups_ready, as a host block does first for every group whose
 * centre it holds: the same steps either way), and the loop runs the
 * block, the perturbers pulling the members, until the centre's next.
 *
 * Host path: the state (positions, velocities) is read from the engine at the start
 * of each interval and written back at its end, so it is held in the
 * engine's precision between intervals; the accelerations, jerks and steps
 * are the integrator's own (checkpoint fields "acc", "jerk", "step"), which
 * makes a restored run continue bit for bit.  Block statistics: blocks,
 * active bodies summed over blocks, and the smallest step in use.
 *
 * Between intervals a body's step is a time (step[i]), not a level: an
 * interval that sim:advance shortens to land on an output time gives each
 * body the coarsest power-of-two fraction of the short interval that is
 * not longer than its step, and the next full interval the coarsest
 * fraction of dt_max not longer than the step it ended with.  So an
 * output at any time shortens some steps (by at most half) and never
 * lengthens one.  The fields describe the state only while env->acc_valid
 * holds (set at the end of an interval and by a complete restore; the
 * simulation clears it when anything changes): otherwise the next interval
 * starts afresh, and a checkpoint stores no fields.  An interval that
 * fails (a stall, a non-finite force) puts the bodies back where it began. */
#include "integrator.h"

#include "comm.h"
#include "dist.h"
#include "groups.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LEVEL ORR_BLOCK_MAX_LEVEL   /* steps down to H / 2^40 */
#define END (1LL << MAX_LEVEL)
/* More blocks than this in one interval is a run that has stalled (a pair
 * closer than the softening allows for, at steps near H / 2^40): it stops
 * with a message rather than crawling on. */
#define MAX_BLOCKS 20000000L

static orr_status stalled(const orr_integ_env *env, long long t, orr_error *err)
{
    return orr_fail(err, ORR_ERR_ARG, "block steps stalled: %ld blocks in one interval of %g, "
                    "at %.6g of it, with steps down to %g (a close encounter? %s bounds the "
                    "steps); the bodies are back where the interval began", MAX_BLOCKS, env->dt,
                    (double)t / (double)END, env->dt_min > 0 ? env->dt_min : env->dt / (double)END,
                    env->regularize ? "dt_min" : "a larger softening or dt_min");
}

typedef struct {
    long n;
    double *pos, *vel;    /* 4n (x y z m) and 3n: the state, corrected */
    double *xp, *vp;      /* 4n and 3n: predicted to the block time */
    double *a, *j;        /* 3n: acceleration and jerk at each body's own time */
    double *an, *jn;      /* 3n: the active bodies' new ones */
    double *step;         /* n: each body's step (a time) at the end of the last interval,
                             or restored: the next interval's levels come from it */
    double *pos0, *vel0;  /* 4n, 3n: the interval's start (host path, made when first
                             needed), put back on failure */
    long long *tick;      /* n: each body's time within the interval */
    int *level;           /* n: each body's step is H / 2^level */
    long *act;            /* the active bodies of a block */
    unsigned restored;    /* checkpoint fields set: 1 acc, 2 jerk, 4 step (on the GPU, not
                             yet on the device) */
    long blocks, active;  /* statistics since creation */
    long stops, host;     /* the engine's block loop's stops for the host, the host's blocks
                             meanwhile (watched) */
    int deepest;          /* the finest level used in the last interval */
    double H;             /* that interval's length (dt_max, or less for a shortened one) */
    int busy;             /* an interval is under way (sim:step() stops between blocks) */
    int on_engine;        /* ... and its blocks run on the engine (the GPU) */
    long long t;          /* ... and its last block's time, in ticks */
    long nb;              /* ... and its blocks so far */
    long nact;            /* ... and their active bodies, summed (on the engine) */
    int hi;               /* ... and the finest level dt_min allows in it */
    double anoise;        /* ... and its step criterion's noise floor (orr_block_params;
                             the host's blocks: noise_floor) */
    /* over several ranks: the gathered records of a block's corrected bodies
     * (REC doubles each), and each rank's count and offset of them */
    int ranks, rank;
    double *rec;
    long *counts, *displs;
    /* regularisation (env->regularize, groups.h; the host path): the groups,
     * a block's active bodies marked, the bodies that need new forces and
     * their forces */
    orr_groups *grp;
    char *mark;
    long *fresh;
    double *fa, *fj;
    /* ... and on an engine that keeps block steps (the GPU): its loop runs
     * the blocks no group needs, watched (rest_watched) */
    int watch;            /* the interval runs so */
    int push;             /* the host's state is newer than the engine's */
    long dnb, dact;       /* the engine's blocks and active bodies since the interval began */
    /* ... the engine's state as last exchanged (shadow set: SHREC doubles
     * a body): then only the bodies that changed cross (push_state,
     * watch_pull), listed in chg */
    int shadow;
    double *sh;
    long *chg;
    /* ... the bodies the host changed since the engine last had them (a
     * host block's, the groups': touched), copied on before the engine
     * predicts the state for a host block's force + jerk itself
     * (check_sync, ORRERY_CHECK_SYNC set: every body is compared, and one
     * changed but not marked is an error) */
    char *touched;
    int check_sync;
} herm;

#define REC 13   /* x y z, vx vy vz, acceleration, jerk, level */

/* The first body with a non-finite acceleration or jerk (the GPU path, at
 * the end of an interval) or position (the host path, after a block), as
 * an error like the fixed-step integrators' (sim.c). */
static orr_status nonfinite(const herm *h, const orr_integ_env *env, double t, const long *idx,
                            long count, int with_pos, orr_error *err)
{
    for (long k = 0; k < count; k++) {
        const long i = idx ? idx[k] : k;
        const double *a = h->a + 3 * i, *j = h->j + 3 * i, *x = h->pos + 4 * i;
        if (isfinite(a[0] + a[1] + a[2]) && isfinite(j[0] + j[1] + j[2]) &&
            (!with_pos || isfinite(x[0] + x[1] + x[2])))
            continue;
        char where[64];   /* every rank holds every body: all find it */
        orr_dist_owner_note(where, sizeof where, h->n, i, h->ranks);
        orr_fail(err, ORR_ERR_ARG, "body %ld%s has a non-finite acceleration or position at "
                 "%.9g of the step of %g: the run is stopped (a force law that divides by "
                 "zero, bodies on one spot at softening 0, or too long a step); the bodies are "
                 "back where the interval began", i + 1, where,
                 t, env->dt);
        err->shared = h->ranks > 1;
        return ORR_ERR_ARG;
    }
    return ORR_OK;
}

/* Over several ranks: the counts and offsets of each rank's bodies among
 * the first nact of list (ascending), in records. */
static void rank_counts(herm *h, const long *list, long nact)
{
    long k = 0;
    for (int r = 0; r < h->ranks; r++) {
        const orr_range sl = orr_dist_slice_of(h->n, r, h->ranks);
        h->displs[r] = k;
        while (k < nact && list[k] < sl.first + sl.count)
            k++;
        h->counts[r] = k - h->displs[r];
    }
}

/* Over several ranks: this rank's corrected bodies among act[0 .. nact)
 * (those of its slice, [k0, k1), as rank_counts found) to every rank. */
static orr_status gather_block(herm *h, const orr_integ_env *env, long nact, long k0, long k1,
                               orr_error *err)
{
    for (long k = k0; k < k1; k++) {
        const long i = h->act[k];
        double *r = h->rec + REC * k;
        memcpy(r, h->pos + 4 * i, 3 * sizeof(double));
        memcpy(r + 3, h->vel + 3 * i, 3 * sizeof(double));
        memcpy(r + 6, h->a + 3 * i, 3 * sizeof(double));
        memcpy(r + 9, h->j + 3 * i, 3 * sizeof(double));
        r[12] = h->level[i];
    }
    orr_status st = orr_comm_allgatherv(env->comm, h->rec, h->counts, h->displs,
                                        REC * sizeof(double), err);
    for (long k = 0; !st && k < nact; k++) {
        if (k >= k0 && k < k1)   /* this rank's own, already in place */
            continue;
        const long i = h->act[k];
        const double *r = h->rec + REC * k;
        memcpy(h->pos + 4 * i, r, 3 * sizeof(double));
        memcpy(h->vel + 3 * i, r + 3, 3 * sizeof(double));
        memcpy(h->a + 3 * i, r + 6, 3 * sizeof(double));
        memcpy(h->j + 3 * i, r + 9, 3 * sizeof(double));
        h->level[i] = (int)r[12];
        memcpy(h->xp + 4 * i, r, 3 * sizeof(double));
        memcpy(h->vp + 3 * i, r + 3, 3 * sizeof(double));
    }
    return st;
}

static void h_destroy(void *state)
{
    herm *h = state;
    if (!h)
        return;
    free(h->pos), free(h->vel), free(h->xp), free(h->vp), free(h->a), free(h->j);
    free(h->an), free(h->jn), free(h->step), free(h->tick), free(h->level), free(h->act);
    free(h->pos0), free(h->vel0);
    free(h->rec), free(h->counts), free(h->displs);
    orr_groups_destroy(h->grp);
    free(h->mark), free(h->fresh), free(h->fa), free(h->fj);
    free(h->sh), free(h->chg), free(h->touched);
    free(h);
}

static orr_status h_create(void **state, long n, orr_error *err)
{
    herm *h = calloc(1, sizeof *h);
    if (h) {
        const size_t n3 = 3 * (size_t)n, n4 = 4 * (size_t)n;
        h->n = n;
        h->pos = malloc(sizeof(double) * n4), h->vel = malloc(sizeof(double) * n3);
        h->xp = malloc(sizeof(double) * n4), h->vp = malloc(sizeof(double) * n3);
        h->a = calloc(n3, sizeof(double)), h->j = calloc(n3, sizeof(double));
        h->an = malloc(sizeof(double) * n3), h->jn = malloc(sizeof(double) * n3);
        h->step = calloc((size_t)n, sizeof(double));
        h->tick = calloc((size_t)n, sizeof(long long));
        h->level = calloc((size_t)n, sizeof(int));
        h->act = malloc(sizeof(long) * (size_t)n);
    }
    if (!h || !h->pos || !h->vel || !h->xp || !h->vp || !h->a || !h->j || !h->an || !h->jn ||
        !h->step || !h->tick || !h->level || !h->act) {
        h_destroy(h);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory for the Hermite state of %ld bodies",
                        n);
    }
    *state = h;
    return ORR_OK;
}

static double norm3(const double *v)
{
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

/* The Hermite state as the groups see it (ticks of H / 2^40). */
static orr_hview view_of(herm *h, const orr_integ_env *env)
{
    const orr_hview v = {h->n, env->G, h->pos, h->vel, h->a, h->j, h->tick, h->level,
                         env->dt / (double)END, h->xp, h->vp, env->eta, h->touched};
    return v;
}

/* The groups' state, made when regularisation is first used. */
static orr_status groups_setup(herm *h, const orr_integ_env *env, orr_error *err)
{
    if (h->grp)
        return ORR_OK;
    orr_status st = orr_groups_create(&h->grp, h->n, env->reg_r_close, env->reg_gamma,
                                        env->reg_encounter, err);
    if (st)
        return st;
    h->mark = calloc((size_t)h->n, 1);
    h->touched = calloc((size_t)h->n, 1);
    h->fresh = malloc(sizeof(long) * (size_t)h->n);
    h->fa = malloc(sizeof(double) * 3 * (size_t)h->n);
    h->fj = malloc(sizeof(double) * 3 * (size_t)h->n);
    const char *cs = getenv("ORRERY_CHECK_SYNC");
    h->check_sync = cs && *cs && strcmp(cs, "0") != 0;
    if (h->mark && h->touched && h->fresh && h->fa && h->fj)
        return ORR_OK;
    return orr_fail(err, ORR_ERR_NOMEM, "out of memory for the regularised groups of %ld "
                    "bodies", h->n);
}

/* The level of a step dt within H: the coarsest H / 2^level <= dt, within
 * [lo, hi]. */
static int level_of(double dt, double H, int lo, int hi)
{
    int l = lo;
    while (l < hi && H / (double)(1LL << l) > dt)
        l++;
    return l;
}

/* The finest level dt_min (and the shortest step a double allows,
 * ORR_BLOCK_MIN_STEP) allows. */
static int finest(const orr_integ_env *env)
{
    const double floor = env->dt_min > ORR_BLOCK_MIN_STEP ? env->dt_min : ORR_BLOCK_MIN_STEP;
    int l = 0;
    while (l < MAX_LEVEL && env->dt / (double)(1LL << (l + 1)) >= floor)
        l++;
    return l;
}

/* The noise floor of an interval's step criterion (orr_block_params): the
 * force sums' relative rounding times the median |a| of every body, as the
 * interval begins, to a power of 2 (the bodies counted by the exponent of
 * their |a| up to the one that passes half: direct.cu's orr_hnoise, the same
 * rule).  Where the pulls on a body cancel (at rest between symmetric
 * bodies, the centre of a ring), its acceleration is rounding noise, and
 * the snap and crackle found from its change over a step grow as the step
 * shrinks: Aarseth's criterion would halve the step down to the floor.  A
 * change below the floor counts as none (above_noise), as IAS15 takes its
 * step from global rather than per-body ratios.  The median, not the mean:
 * one body pulled hard (a comet at a pericentre of 1e-7, |a| 1e14) would
 * raise a mean so far that every other body's snap counted as none. */
#define NOISE_BINS 2200   /* |a| by its exponent, 2^(k - NOISE_BIAS); bin 0: |a| = 0 */
#define NOISE_BIAS 1100
static int noise_bin(double x)
{
    if (!(x > 0))
        return 0;
    const int k = ilogb(x) + NOISE_BIAS;
    return k < 1 ? 1 : k > NOISE_BINS - 1 ? NOISE_BINS - 1 : k;
}

static double noise_floor(const herm *h, const orr_integ_env *env)
{
    long hist[NOISE_BINS] = {0}, cum = 0;
    for (long i = 0; i < h->n; i++)
        hist[noise_bin(norm3(h->a + 3 * i))]++;
    int k = 0;
    for (; k < NOISE_BINS; k++)
        if (2 * (cum += hist[k]) > h->n)
            break;
    return k == 0 || k >= NOISE_BINS ? 0 : orr_engine_force_noise(env->engine) *
                                              ldexp(1.0, k - NOISE_BIAS);
}

/* A snap (scale dt^2) or crackle (dt^3) for the criterion: 0 where the
 * change of the acceleration it makes over the step is below 32 times the
 * noise floor (direct.cu's orr_above_noise: the same test). */
static double above_noise(double s, double scale, double anoise)
{
    return s * scale < 32 * anoise ? 0.0 : s;
}

/* Accelerations and jerks of every body, and their starting steps. */
static orr_status start(herm *h, orr_integ_env *env, int keep_steps, orr_error *err)
{
    for (long i = 0; i < h->n; i++)
        h->act[i] = i;
    /* over several ranks, each its own slice, then gathered */
    const orr_range me = h->ranks > 1 ? env->targets : (orr_range){0, h->n};
    orr_engine_set_time(env->engine, env->time, 0);
    orr_status st = orr_engine_accel_jerk(env->engine, me.count, h->act + me.first,
                                          h->a + 3 * me.first, h->j + 3 * me.first, err);
    if (!st && h->ranks > 1) {
        rank_counts(h, h->act, h->n);
        st = orr_comm_allgatherv(env->comm, h->a, h->counts, h->displs, 3 * sizeof(double),
                                 err);
        if (!st)
            st = orr_comm_allgatherv(env->comm, h->j, h->counts, h->displs,
                                     3 * sizeof(double), err);
    }
    if (!st && h->grp && orr_groups_count(h->grp)) {   /* the groups' members, exactly */
        const orr_hview v = view_of(h, env);
        orr_groups_correct(h->grp, &v, h->act, h->n, h->a, h->j);
        for (long i = 0; i < h->n; i++)
            if (h->tick[i] == ORR_GHOST_TICK)
                memset(h->a + 3 * i, 0, 3 * sizeof(double)), memset(h->j + 3 * i, 0,
                                                                      3 * sizeof(double));
    }
    if (st || keep_steps)
        return st;
    const int hi = finest(env);
    const orr_hview v = view_of(h, env);
    for (long i = 0; i < h->n; i++) {
        const double an = norm3(h->a + 3 * i), jn = norm3(h->j + 3 * i);
        const double dt = jn > 0 ? env->eta_start * an / jn : env->dt;
        int l = level_of(dt, env->dt, 0, hi);
        if (h->grp) {   /* a perturbed group's centre, as in regroup and block */
            const double cap = orr_groups_step_cap(h->grp, &v, i);
            while (l < hi && env->dt / (double)(1LL << l) > cap)
                l++;
        }
        h->level[i] = l;
    }
    return ORR_OK;
}

/* After a block at tick next: groups dissolve and form (groups.h), and the
 * bodies that changed (new centres of mass, former members) get their
 * forces, jerks and starting steps there; over several ranks each
 * computes its slice's and they are gathered. */
static int by_index(const void *a, const void *b)
{
    const long x = *(const long *)a, y = *(const long *)b;
    return x < y ? -1 : x > y;
}

static int shadow_take(herm *h, long i);

/* The bodies the host changed since the engine last had its state
 * (touched) onto the engine, and into the shadow. */
static orr_status sync_touched(herm *h, orr_engine *e, orr_error *err)
{
    long m = 0;
    for (long i = 0; i < h->n; i++)
        if (h->touched[i]) {
            h->touched[i] = 0;
            if (shadow_take(h, i))
                h->chg[m++] = i;
        }
    for (long i = 0; h->check_sync && i < h->n; i++)
        if (shadow_take(h, i))
            return orr_fail(err, ORR_ERR_ARG, "ORRERY_CHECK_SYNC: body %ld changed on the host "
                            "without being marked as touched", i + 1);
    orr_status st = m > 0 ? orr_engine_blocks_some(e, h->pos, h->vel, h->a, h->j, h->tick,
                                                   h->level, 1, h->chg, &m, 0, 0, err)
                          : ORR_OK;
    if (st)
        h->shadow = 0;
    return st;
}

/* The predicted state at tick t for a host-driven force + jerk: where the
 * engine's loop is watched and the shadow kept, the bodies the host
 * changed copied on and every body predicted by the engine itself (a copy
 * of the whole predicted state cost a host block in a collapsed core more
 * than its force); else beside the engine's own block-step state (which
 * then stays as the shadow says), or as the engine's state. */
static orr_status predicted_to_engine(herm *h, orr_integ_env *env, long long t, orr_error *err)
{
    if (h->watch && h->shadow) {
        orr_status st = sync_touched(h, env->engine, err);
        return st ? st : orr_engine_blocks_predict(env->engine, t, err);
    }
    return h->watch ? orr_engine_set_predicted(env->engine, h->xp, h->vp, err)
                    : orr_engine_set_state(env->engine, h->xp, h->vp, err);
}

static orr_status regroup(herm *h, orr_integ_env *env, long long next, int hi, long *changed,
                          orr_error *err)
{
    const double unit = env->dt / (double)END;
    orr_hview v = view_of(h, env);
    long nf = 0;
    orr_status st = orr_groups_update(h->grp, &v, h->mark, next, (double)next * unit, 0,
                                      h->fresh, &nf, err);
    *changed = nf;
    if (st || !nf)
        return st;
    qsort(h->fresh, (size_t)nf, sizeof(long), by_index);
    long k0 = 0, k1 = nf;
    if (h->ranks > 1) {
        rank_counts(h, h->fresh, nf);
        k0 = h->displs[h->rank];
        k1 = k0 + h->counts[h->rank];
    }
    st = predicted_to_engine(h, env, next, err);
    if (!st)
        st = orr_engine_accel_jerk(env->engine, k1 - k0, h->fresh + k0, h->fa + 3 * k0,
                                   h->fj + 3 * k0, err);
    if (!st && h->ranks > 1)
        st = orr_comm_allgatherv(env->comm, h->fa, h->counts, h->displs, 3 * sizeof(double),
                                 err);
    if (!st && h->ranks > 1)
        st = orr_comm_allgatherv(env->comm, h->fj, h->counts, h->displs, 3 * sizeof(double),
                                 err);
    if (st)
        return st;
    orr_groups_correct(h->grp, &v, h->fresh, nf, h->fa, h->fj);
    for (long k = 0; k < nf; k++) {
        const long i = h->fresh[k];
        memcpy(h->a + 3 * i, h->fa + 3 * k, 3 * sizeof(double));
        memcpy(h->j + 3 * i, h->fj + 3 * k, 3 * sizeof(double));
        const double an = norm3(h->a + 3 * i), jn = norm3(h->j + 3 * i);
        int l = level_of(jn > 0 ? env->eta_start * an / jn : env->dt, env->dt, 0, hi);
        const double cap = orr_groups_step_cap(h->grp, &v, i);
        while (l < hi && env->dt / (double)(1LL << l) > cap)
            l++;
        while (l < MAX_LEVEL && next % (END >> l) != 0)   /* aligned with its time */
            l++;
        h->level[i] = l;
        h->tick[i] = next;
        h->deepest = l > h->deepest ? l : h->deepest;
        if (h->touched)
            h->touched[i] = 1;
    }
    return nonfinite(h, env, (double)next * unit, h->fresh, nf, 1, err);
}

/* Every body predicted to tick t (x to 3rd order, v to 2nd) into xp, vp:
 * one pass with the arrays apart (restrict), which the compiler keeps in
 * registers (each block predicts every body: on the CPU the largest share
 * of a small block's cost after the force). */
static void predict_all(herm *h, long long t, double unit)
{
    const long n = h->n;
    const long long *restrict tick = h->tick;
    const double *restrict pos = h->pos, *restrict vel = h->vel, *restrict acc = h->a,
                 *restrict jerk = h->j;
    double *restrict xp = h->xp, *restrict vp = h->vp;
    for (long i = 0; i < n; i++) {
        const double dt = (double)(t - tick[i]) * unit, dt2 = dt * dt / 2, dt3 = dt2 * dt / 3;
        for (int d = 0; d < 3; d++) {
            const double a = acc[3 * i + d], j = jerk[3 * i + d], v = vel[3 * i + d];
            xp[4 * i + d] = pos[4 * i + d] + v * dt + a * dt2 + j * dt3;
            vp[3 * i + d] = v + a * dt + j * dt2;
        }
        xp[4 * i + 3] = pos[4 * i + 3];
    }
}

/* One block: the active bodies at the smallest next time *t, advanced to
 * it.  Returns with *t the block's time. */
static orr_status block(herm *h, orr_integ_env *env, int hi, long long *t, orr_error *err)
{
    const long n = h->n;
    const double H = env->dt, unit = H / (double)END;
    long long next = END;
    for (long i = 0; i < n; i++) {
        const long long ti = h->tick[i] + (END >> h->level[i]);
        next = ti < next ? ti : next;
    }
    long nact = 0;
    for (long i = 0; i < n; i++)
        if (h->tick[i] + (END >> h->level[i]) == next) {
            h->act[nact++] = i;
            if (h->grp)
                h->mark[i] = 1;
        }
    predict_all(h, next, unit);   /* to the block time */
    /* over several ranks, the active bodies of this rank's slice: act[k0 .. k1) */
    long k0 = 0, k1 = nact;
    if (h->ranks > 1) {
        rank_counts(h, h->act, nact);
        k0 = h->displs[h->rank];
        k1 = k0 + h->counts[h->rank];
    }
    const orr_hview gv = view_of(h, env);
    int readied = 0, apart = 0;
    orr_status st = h->grp ? orr_groups_ready(h->grp, &gv, next, (double)next * unit, 1,
                                              &readied, &apart, err)
                           : ORR_OK;
    if (!st && h->grp)
        st = orr_groups_advance(h->grp, &gv, h->mark, (double)next * unit, err);
    if (!st)
        st = predicted_to_engine(h, env, next, err);
    /* the block's time as the GPU's block steps take it (direct.cu) */
    orr_engine_set_time(env->engine, fma((double)next, unit, env->time), 0);
    if (!st)
        st = orr_engine_accel_jerk(env->engine, k1 - k0, h->act + k0, h->an + 3 * k0,
                                   h->jn + 3 * k0, err);
    if (st)
        return st;
    if (h->grp)
        orr_groups_correct(h->grp, &gv, h->act + k0, k1 - k0, h->an + 3 * k0, h->jn + 3 * k0);
    for (long k = k0; k < k1; k++) {
        const long i = h->act[k];
        const double dt = (double)(END >> h->level[i]) * unit;
        double a2[3], a3[3], *a0 = h->a + 3 * i, *j0 = h->j + 3 * i;
        const double *a1 = h->an + 3 * k, *j1 = h->jn + 3 * k;
        for (int d = 0; d < 3; d++) {
            const double da = a0[d] - a1[d];
            a2[d] = (-6 * da - dt * (4 * j0[d] + 2 * j1[d])) / (dt * dt);
            a3[d] = (12 * da + 6 * dt * (j0[d] + j1[d])) / (dt * dt * dt);
            const double dt3 = dt * dt * dt, dt4 = dt3 * dt;
            h->pos[4 * i + d] = h->xp[4 * i + d] + dt4 / 24 * a2[d] + dt4 * dt / 120 * a3[d];
            h->vel[3 * i + d] = h->vp[3 * i + d] + dt3 / 6 * a2[d] + dt4 / 24 * a3[d];
            h->xp[4 * i + d] = h->pos[4 * i + d];
            h->vp[3 * i + d] = h->vel[3 * i + d];
            a0[d] = a1[d];
            j0[d] = j1[d];
            a2[d] += dt * a3[d];   /* the snap at the new time */
        }
        /* Aarseth's criterion, eta inside the square root */
        const double an = norm3(a0), jn = norm3(j0),
                     sn = above_noise(norm3(a2), dt * dt, h->anoise),
                     cn = above_noise(norm3(a3), dt * dt * dt, h->anoise);
        const double den = jn * cn + sn * sn;
        const double crit = den > 0 ? sqrt(env->eta * (an * sn + jn * jn) / den) : H;
        int l = level_of(crit, H, h->level[i] > 0 ? h->level[i] - 1 : 0, hi);
        if (h->grp) {   /* a perturbed group's centre follows its members' motion */
            const double cap = orr_groups_block_cap(h->grp, &gv, i, next);
            while (l < hi && H / (double)(1LL << l) > cap)
                l++;
        }
        while (l < MAX_LEVEL && next % (END >> l) != 0)   /* aligned with its time */
            l++;
        h->level[i] = l;
    }
    if (h->ranks > 1 && (st = gather_block(h, env, nact, k0, k1, err)) != ORR_OK)
        return st;
    for (long k = 0; k < nact; k++) {
        const long i = h->act[k];
        h->tick[i] = next;
        h->deepest = h->level[i] > h->deepest ? h->level[i] : h->deepest;
        if (h->touched)
            h->touched[i] = 1;
    }
    h->blocks++;
    h->active += nact;
    *t = next;
    st = nonfinite(h, env, (double)next * unit, h->act, nact, 1, err);
    long changed = 0;
    if (!st && h->grp)
        st = regroup(h, env, next, hi, &changed, err);
    for (long k = 0; h->grp && k < nact; k++)
        h->mark[h->act[k]] = 0;
    return st;
}

/* The exchange buffers of a run over several ranks, made once. */
static orr_status ranks_setup(herm *h, const orr_integ_env *env, orr_error *err)
{
    h->ranks = env->comm ? orr_comm_size(env->comm) : 1;
    h->rank = env->comm ? orr_comm_rank(env->comm) : 0;
    if (h->ranks == 1 || h->rec)
        return ORR_OK;
    h->rec = malloc(sizeof(double) * REC * (size_t)h->n);
    h->counts = malloc(sizeof(long) * (size_t)h->ranks);
    h->displs = malloc(sizeof(long) * (size_t)h->ranks);
    if (h->rec && h->counts && h->displs)
        return ORR_OK;
    free(h->rec), free(h->counts), free(h->displs);
    h->rec = NULL;
    return orr_fail(err, ORR_ERR_NOMEM, "out of memory for the Hermite exchange of %ld bodies",
                    h->n);
}

/* The crossover of blocks split between GPUs: a block is split where its
 * force + jerk work saved, nact n (1 - 1/P) interactions, outweighs the
 * exchange's cost, SPLIT_WORK interactions' worth (measured on 2 H200s:
 * docs/PERFORMANCE.md, "Several GPUs").  ORRERY_HSPLIT sets the smallest
 * block split instead: a count of active bodies, or "off". */
#define SPLIT_WORK 3.4e7

static orr_status split_at(const herm *h, long *min_active, orr_error *err)
{
    int mode = 0;
    long k = -1;
    orr_status st = orr_hblocks_env(&mode, &k, err);
    if (st)
        return st;
    if (k < 0) {
        const double w = ceil(SPLIT_WORK / ((double)h->n * (1.0 - 1.0 / h->ranks)));
        k = w < 2 * h->ranks ? 2 * h->ranks : w > (double)h->n ? 0 : (long)w;
    }
    *min_active = k > h->n ? 0 : k;   /* 0: no block is that large, none is split */
    return ORR_OK;
}

/* Over several GPUs: every GPU takes rank 0's force + jerk launches (each
 * block's shape, so its bits, follows them) and the split of blocks
 * between the ranks; agreed over the ranks. */
static orr_status gpus_setup(herm *h, orr_integ_env *env, orr_error *err)
{
    orr_engine *e = env->engine;
    orr_hlaunch l[ORR_HBUCKETS];
    for (int k = 0; k < ORR_HBUCKETS; k++)
        l[k] = orr_engine_hlaunch(e, k);
    orr_status st = orr_comm_bcast(env->comm, l, sizeof l, 0, err);
    for (int k = 0; !st && k < ORR_HBUCKETS; k++) {
        const orr_hlaunch m = orr_engine_hlaunch(e, k);
        if (m.tile != l[k].tile || m.per_sm != l[k].per_sm)
            st = orr_engine_set_hlaunch(e, k, l[k], err);
    }
    orr_block_split sp = {0, h->rank, h->ranks, env->block_gather, env->block_gather_ctx};
    if (!st)
        st = split_at(h, &sp.min_active, err);
    if (!st)
        st = orr_engine_blocks_split(e, &sp, err);
    return orr_comm_agree(env->comm, st, 1, err);
}

/* The block parameters of an engine that keeps the block steps itself. */
/* The time of the engine's block steps: the interval's start, and its
 * tick (a block's time is start + tick * H / 2^40: direct.cu). */
static void engine_time(orr_integ_env *env)
{
    orr_engine_set_time(env->engine, env->time, env->dt / (double)END);
}

static orr_block_params engine_params(const herm *h, const orr_integ_env *env)
{
    /* the engine's own blocks find the noise floor as they begin; where the
     * host steps blocks too (watched), they take the host's */
    const orr_block_params p = {env->dt, env->eta, env->eta_start, h->hi, MAX_BLOCKS,
                                h->on_engine ? -1 : h->anoise,
                                orr_engine_force_noise(env->engine)};
    return p;
}

/* The levels of an interval of H from the bodies' steps (times): the
 * coarsest H / 2^level not longer than the step, at most hi. */
static void levels_from_steps(const herm *h, double H, int hi, int *level)
{
    for (long i = 0; i < h->n; i++)
        level[i] = level_of(h->step[i], H, 0, hi);
}

/* Regularised groups on an engine that keeps block steps (the GPU): its
 * loop runs the blocks that hold no group's centre or perturber, and stops
 * for the host before one that does and after one in which a body was
 * pulled hard enough to have a close neighbour (orr_groups_watch); the
 * host steps those blocks (block, regroup) on the whole state, read from
 * the engine and written back.  Where the engine cannot be watched so
 * (ORRERY_HBLOCKS set, or not double) every block is the host's. */
static orr_status watch_begin(herm *h, orr_integ_env *env, orr_error *err)
{
    const orr_block_params p = engine_params(h, env);
    engine_time(env);
    orr_status st = orr_engine_blocks_begin(env->engine, &p, 0, 1, err);
    if (st)
        return st;
    orr_error quiet = {0};
    const orr_block_watch none = {.stop = -1};
    h->watch = orr_engine_blocks_watch(env->engine, &none, &quiet) == ORR_OK;
    orr_error_clear(&quiet);
    h->push = 1;
    h->shadow = 0;
    h->dnb = h->dact = 0;
    return ORR_OK;
}

/* Body i's record in the shadow: what the engine holds of it (a tick is
 * exact in a double: at most 2^40, or a group member's 2^60).  Returns
 * whether it differed. */
#define SHREC 15
static int shadow_take(herm *h, long i)
{
    double r[SHREC], *s = h->sh + SHREC * i;
    memcpy(r, h->pos + 4 * i, 4 * sizeof(double));
    memcpy(r + 4, h->vel + 3 * i, 3 * sizeof(double));
    memcpy(r + 7, h->a + 3 * i, 3 * sizeof(double));
    memcpy(r + 10, h->j + 3 * i, 3 * sizeof(double));
    r[13] = (double)h->level[i];
    r[14] = (double)h->tick[i];
    if (memcmp(r, s, sizeof r) == 0)
        return 0;
    memcpy(s, r, sizeof r);
    return 1;
}

/* The host's state to the engine (watched: the groups made touched):
 * where the shadow holds what the engine has, the bodies touched since;
 * else all of it, the shadow made then. */
static orr_status push_state(herm *h, orr_engine *e, orr_error *err)
{
    if (h->shadow)
        return sync_touched(h, e, err);
    orr_status st = orr_engine_blocks_state(e, h->pos, h->vel, h->a, h->j, h->tick, h->level, 1,
                                            err);
    if (st)
        return st;
    if (!h->sh) {   /* without room for it, every exchange is whole */
        h->sh = calloc((size_t)h->n * SHREC, sizeof(double));
        h->chg = malloc(sizeof(long) * (size_t)h->n);
        if (!h->sh || !h->chg) {
            free(h->sh), free(h->chg);
            h->sh = NULL, h->chg = NULL;
            return ORR_OK;
        }
    }
    for (long i = 0; i < h->n; i++)
        shadow_take(h, i);
    h->shadow = 1;
    memset(h->touched, 0, (size_t)h->n);   /* the engine has every body */
    return ORR_OK;
}

/* The engine's state after its blocks up to tick t, onto the host, with
 * `predicted` every body predicted to t (as a host block leaves them, for
 * the groups; a host block to come predicts them itself): with the shadow,
 * only the bodies corrected since tick `since` (at most `most` of them
 * expected), whose records the shadow takes. */
static orr_status watch_pull(herm *h, orr_integ_env *env, long long t, long long since,
                             long most, int predicted, orr_error *err)
{
    orr_status st;
    long m = -1;   /* the bodies read: h->chg[0 .. m), or (-1) all */
    if (h->shadow) {
        m = 0;
        st = orr_engine_blocks_some(env->engine, h->pos, h->vel, h->a, h->j, h->tick, h->level,
                                    0, h->chg, &m, since, most, err);
        for (long k = 0; !st && k < m; k++)
            shadow_take(h, h->chg[k]);
        if (st)
            h->shadow = 0;
    } else {
        st = orr_engine_blocks_state(env->engine, h->pos, h->vel, h->a, h->j, h->tick, h->level, 0,
                                     err);
    }
    if (st)
        return st;
    const double unit = env->dt / (double)END;
    if (predicted)
        predict_all(h, t, unit);
    return nonfinite(h, env, (double)t * unit, m < 0 ? NULL : h->chg, m < 0 ? h->n : m, 1, err);
}

/* The finest level the engine's blocks used (the statistics'), read
 * where a watched stretch ends: the interval's end, or a sim:step(). */
static orr_status watch_deepest(herm *h, orr_integ_env *env, orr_error *err)
{
    int deepest = 0;
    orr_status st = orr_engine_blocks_field(env->engine, 0, NULL, 0, &deepest, err);
    h->deepest = deepest > h->deepest ? deepest : h->deepest;
    return st;
}

/* The rest of the interval watched (watch_begin), or with one its next
 * block: on the engine where no group needs it, else the host's. */
static orr_status watched(herm *h, orr_integ_env *env, int one, orr_error *err)
{
    orr_engine *e = env->engine;
    const double unit = env->dt / (double)END;
    orr_status st = ORR_OK;
    while (!st && h->t < END) {
        if (h->nb >= MAX_BLOCKS)
            return stalled(env, h->t, err);
        const orr_hview v = view_of(h, env);
        orr_block_watch w;
        long long next = END;
        orr_groups_watch(h->grp, &v, &w);
        for (long i = 0; (w.stop >= 0 || one) && i < h->n; i++) {
            const long long ti = h->tick[i] + (END >> h->level[i]);
            next = ti < next ? ti : next;
        }
        if (w.stop == next && orr_groups_due(h->grp, &v, next)) {   /* fast pairs due: moved
                                                                       on, their block the
                                                                       engine's */
            int readied = 0, apart = 0;
            predict_all(h, next, unit);
            if ((st = orr_groups_ready(h->grp, &v, next, (double)next * unit, 0, &readied, &apart,
                                       err)) != ORR_OK)
                return st;
            if (readied && !apart)
                continue;   /* the watch anew: the host may still be wanted there */
        }
        if (w.stop < 0 || w.stop > next) {   /* the engine's blocks until the host is wanted */
            if (one)   /* no further than the next block */
                w.stop = next + 1;
            if (h->push && (st = push_state(h, e, err)) != ORR_OK)
                return st;
            h->push = 0;
            const long long since = h->t;
            const orr_block_params p = engine_params(h, env);
            engine_time(env);
            long long t = 0;
            long nb = 0, nact = 0;
            if ((st = orr_engine_blocks_watch(e, &w, err)) != ORR_OK ||
                (st = orr_engine_blocks_run(e, &p, &t, &nb, &nact, err)) != ORR_OK)
                return st;
            const int why = orr_engine_blocks_why(e);
            h->stops += why != 0;
            const long ran = nb - h->dnb, acted = nact - h->dact;
            h->blocks += ran, h->nb += ran, h->active += acted;
            h->dnb = nb, h->dact = nact;
            if (ran > 0) {
                h->t = t;
                if ((st = watch_pull(h, env, t, since, acted, why != 1, err)) != ORR_OK)
                    return st;
            }
            if (why == 0 && h->t < END)   /* max_blocks */
                return stalled(env, h->t, err);
            if (why == 2) {   /* a body pulled hard by a near one: a close pair may form */
                long nf = 0;
                for (long i = 0; i < h->n; i++)
                    h->mark[i] = h->tick[i] == t;
                orr_engine_set_time(e, fma((double)t, unit, env->time), 0);
                st = regroup(h, env, t, h->hi, &nf, err);
                memset(h->mark, 0, (size_t)h->n);
                h->push = h->push || nf > 0;
            }
            if (why != 1 || ran > 0) {
                if (one)
                    return st ? st : watch_deepest(h, env, err);
                continue;
            }
        }
        h->nb++;   /* a block the groups need: the host's */
        h->host++;
        st = block(h, env, h->hi, &h->t, err);
        h->push = 1;
        if (one)
            return st ? st : watch_deepest(h, env, err);
    }
    return st ? st : watch_deepest(h, env, err);
}

/* An interval begins: from the synchronised state, every body at tick 0.
 * With the fields current (env->acc_valid) the accelerations and jerks go
 * on from the last interval (or the checkpoint's) and each body's level
 * comes from its step; otherwise every body starts afresh.  On an engine
 * that keeps the block steps itself (the GPU) the same steps run there,
 * the rest of the interval queued at once (rest_on_engine); otherwise the
 * state is read from the engine and the blocks run here. */
static orr_status begin(herm *h, orr_integ_env *env, orr_error *err)
{
    orr_status st = ranks_setup(h, env, err);
    if (st)
        return st;
    h->on_engine = orr_engine_has_blocks(env->engine) && (h->ranks == 1 || env->block_gather) &&
                   !env->regularize;   /* the groups are the host's */
    int mode = 0;
    long asked = -1;   /* ORRERY_HSPLIT set: with one rank too, the split path alone */
    if (h->on_engine && env->block_gather && h->ranks == 1 &&
        (st = orr_hblocks_env(&mode, &asked, err)) != ORR_OK)
        return st;
    if (h->on_engine && env->block_gather && (h->ranks > 1 || asked >= 0) &&
        (st = gpus_setup(h, env, err)) != ORR_OK)
        return st;
    h->t = 0;
    h->nb = 0;
    h->nact = 0;
    h->hi = finest(env);
    h->H = env->dt;
    const int fresh = !env->acc_valid || (h->restored && (h->restored & 7) != 7);
    const int restored = !fresh && (h->restored & 7) == 7;
    h->restored = 0;
    const int hi = h->hi;
    if (h->on_engine) {
        orr_engine *e = env->engine;
        const orr_block_params p = engine_params(h, env);
        engine_time(env);
        if (!fresh) {   /* levels of this interval; uploaded where they changed */
            int *lv = malloc(sizeof(int) * (size_t)h->n);
            if (!lv)
                return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
            levels_from_steps(h, env->dt, hi, lv);
            const int changed = restored || memcmp(lv, h->level, sizeof(int) * (size_t)h->n);
            memcpy(h->level, lv, sizeof(int) * (size_t)h->n);
            free(lv);
            if (restored) {   /* the checkpoint's accelerations and jerks onto the engine */
                st = orr_engine_blocks_field(e, 0, h->a, 1, NULL, err);
                if (!st)
                    st = orr_engine_blocks_field(e, 1, h->j, 1, NULL, err);
            }
            if (!st && changed)
                st = orr_engine_blocks_levels(e, h->level, 1, err);
        }
        if (!st)
            st = orr_engine_blocks_begin(e, &p, fresh, 0, err);
        if (h->ranks > 1)   /* every GPU goes on into the interval's collectives, or none */
            st = orr_comm_agree(env->comm, st, 1, err);
        h->busy = !st;
        return st;
    }
    if (!h->pos0) {
        h->pos0 = malloc(sizeof(double) * 4 * (size_t)h->n);
        h->vel0 = malloc(sizeof(double) * 3 * (size_t)h->n);
        if (!h->pos0 || !h->vel0) {
            free(h->pos0), free(h->vel0);
            h->pos0 = h->vel0 = NULL;
            return orr_fail(err, ORR_ERR_NOMEM, "out of memory for the Hermite state of %ld "
                            "bodies", h->n);
        }
    }
    st = orr_engine_get_state(env->engine, h->pos, h->vel, err);
    if (st)
        return st;
    memcpy(h->pos0, h->pos, sizeof(double) * 4 * (size_t)h->n);
    memcpy(h->vel0, h->vel, sizeof(double) * 3 * (size_t)h->n);
    memset(h->tick, 0, sizeof(long long) * (size_t)h->n);
    if (!fresh)
        levels_from_steps(h, env->dt, hi, h->level);
    if (env->regularize) {   /* the groups go on (or, the state changed, start anew) */
        if ((st = groups_setup(h, env, err)) != ORR_OK)
            return st;
        if (fresh)   /* the state was changed (or never stepped): groups anew */
            orr_groups_clear(h->grp);
        orr_hview v = view_of(h, env);
        if ((st = orr_groups_collapse(h->grp, &v, err)) != ORR_OK)
            return st;
        memcpy(h->xp, h->pos, sizeof(double) * 4 * (size_t)h->n);
        memcpy(h->vp, h->vel, sizeof(double) * 3 * (size_t)h->n);
        if (fresh) {   /* close pairs as they are now: groups before the first step */
            long nf = 0;
            memset(h->mark, 1, (size_t)h->n);
            st = orr_groups_update(h->grp, &v, h->mark, 0, 0, 1, h->fresh, &nf, err);
            memset(h->mark, 0, (size_t)h->n);
        }
        if (!st && fresh && orr_groups_count(h->grp))
            st = orr_engine_set_state(env->engine, h->xp, h->vp, err);
    }
    if (!st && fresh)
        st = start(h, env, 0, err);
    if (st)
        return st;
    h->anoise = noise_floor(h, env);
    h->deepest = 0;
    for (long i = 0; i < h->n; i++)
        h->deepest = h->level[i] > h->deepest ? h->level[i] : h->deepest;
    h->watch = 0;
    if (h->grp && h->ranks == 1 && orr_engine_has_blocks(env->engine) &&
        (st = watch_begin(h, env, err)) != ORR_OK)
        return st;
    h->busy = 1;
    return ORR_OK;
}

/* The next block of the interval under way. */
static orr_status next_block(herm *h, orr_integ_env *env, orr_error *err)
{
    if (h->nb >= MAX_BLOCKS)
        return stalled(env, h->t, err);
    if (h->watch)
        return watched(h, env, 1, err);
    h->nb++;
    if (!h->on_engine)
        return block(h, env, h->hi, &h->t, err);
    const orr_block_params p = engine_params(h, env);
    engine_time(env);
    long nact = 0;
    orr_status st = orr_engine_block(env->engine, &p, &h->t, &nact, err);
    if (h->ranks > 1)   /* every GPU ran the same block */
        st = orr_comm_agree(env->comm, st, 1, err);
    h->blocks++;
    h->active += nact;
    h->nact += nact;
    return st;
}

/* The rest of the interval under way on the engine, without the host
 * waiting on each block (orr_engine_blocks_run). */
static orr_status rest_on_engine(herm *h, orr_integ_env *env, orr_error *err)
{
    const orr_block_params p = engine_params(h, env);
    engine_time(env);
    long nb = 0, nact = 0;
    orr_status st = orr_engine_blocks_run(env->engine, &p, &h->t, &nb, &nact, err);
    if (h->ranks > 1)   /* every GPU ran the same blocks: a failure on one is every rank's */
        st = orr_comm_agree(env->comm, st, 1, err);
    if (st)
        return st;
    h->blocks += nb - h->nb;
    h->active += nact - h->nact;
    h->nb = nb;
    h->nact = nact;
    return h->t < END ? stalled(env, h->t, err) : ORR_OK;
}

/* The interval's last block is done: every body is at its end, and its
 * step becomes a time.  From the engine (the GPU) the accelerations, jerks
 * and levels are read once, for the checkpoint fields and the next
 * interval's levels; the host path writes the state back. */
static orr_status finish(herm *h, orr_integ_env *env, orr_error *err)
{
    orr_status st = ORR_OK;
    if (h->on_engine) {
        orr_engine *e = env->engine;
        st = orr_engine_blocks_field(e, 0, NULL, 0, &h->deepest, err);
        if (!st)
            st = orr_engine_blocks_field(e, 0, h->a, 0, NULL, err);
        if (!st)
            st = orr_engine_blocks_field(e, 1, h->j, 0, NULL, err);
        if (!st)
            st = orr_engine_blocks_levels(e, h->level, 0, err);
        if (!st)   /* the positions stay on the device: its a and j tell */
            st = nonfinite(h, env, env->dt, NULL, h->n, 0, err);
    } else {
        if (h->grp) {   /* every body itself again, at the interval's end */
            orr_hview v = view_of(h, env);
            st = orr_groups_resolve(h->grp, &v, env->dt, err);
        }
        if (!st)
            st = orr_engine_set_state(env->engine, h->pos, h->vel, err);
    }
    for (long i = 0; !st && i < h->n; i++)
        h->step[i] = ldexp(env->dt, -h->level[i]);
    if (!st)   /* the integrator's own a and j match the synchronised state */
        env->acc_valid = 1;
    return st;
}

/* Something failed: an interval under way is given up and the bodies go
 * back to where it began (the error stays the first one); the next
 * interval starts afresh. */
static orr_status failed(herm *h, orr_integ_env *env, orr_status st)
{
    env->acc_valid = 0;
    if (h->grp)   /* the bodies go back to where they were, each itself */
        orr_groups_clear(h->grp);
    if (!h->busy)   /* before an interval began: nothing moved */
        return st;
    h->busy = 0;
    orr_error ignored = {0};
    if (h->on_engine)
        orr_engine_blocks_abort(env->engine, &ignored);
    else
        orr_engine_set_state(env->engine, h->pos0, h->vel0, &ignored);
    orr_error_clear(&ignored);
    return st;
}

/* The rest of the interval under way, or a whole one. */
static orr_status h_step(void *state, orr_integ_env *env, orr_error *err)
{
    herm *h = state;
    orr_status st = h->busy ? ORR_OK : begin(h, env, err);
    if (!st && h->on_engine && h->t < END)
        st = rest_on_engine(h, env, err);
    if (!st && h->watch && h->t < END)
        st = watched(h, env, 0, err);
    while (!st && h->t < END)
        st = next_block(h, env, err);
    if (!st)
        st = finish(h, env, err);
    if (st)
        return failed(h, env, st);
    h->busy = 0;
    return ORR_OK;
}

/* One block step (an interval begins first when none is under way). */
static orr_status h_block(void *state, orr_integ_env *env, int *synced, double *at,
                          orr_error *err)
{
    herm *h = state;
    orr_status st = h->busy ? ORR_OK : begin(h, env, err);
    if (!st)
        st = next_block(h, env, err);
    *synced = !st && h->t >= END;
    *at = (double)h->t / (double)END;
    if (*synced)
        st = finish(h, env, err);
    if (st) {
        *synced = 0;
        *at = 0;
        return failed(h, env, st);
    }
    if (*synced)
        h->busy = 0;
    return ORR_OK;
}

/* Fields 0 and 1: the accelerations and jerks (3 per body); 2: the steps,
 * as times (see the header: the next interval's levels come from them). */
static orr_status h_get_field(void *state, int k, double *out, orr_error *err)
{
    herm *h = state;
    if (k == 3) {   /* the regularised groups' membership */
        if (h->grp)
            orr_groups_get_field(h->grp, out);
        else
            memset(out, 0, sizeof(double) * (size_t)h->n);
        return ORR_OK;
    }
    memcpy(out, k == 0 ? h->a : k == 1 ? h->j : h->step,
           sizeof(double) * (k == 2 ? 1 : 3) * (size_t)h->n);
    return ORR_OK;
}

static orr_status h_set_field(void *state, orr_integ_env *env, int k, int legacy,
                              const double *in, orr_error *err)
{
    herm *h = state;
    if (k == 3) {   /* the groups: kept for the next interval when the rest is current */
        int any = 0;
        for (long i = 0; i < h->n && !any; i++)
            any = in[i] != 0;
        if ((h->restored & 7) == 7)   /* the rest came first: still current */
            env->acc_valid = 1;
        if (!any && !h->grp)
            return ORR_OK;
        if (any && !env->regularize)
            return orr_fail(err, ORR_ERR_ARG, "regularised groups in a run without "
                            "regularisation (regularize = true restores them)");
        orr_status st = groups_setup(h, env, err);
        if (!st)
            st = orr_groups_set_field(h->grp, in, err);
        return st;
    }
    const int comps = k == 2 ? 1 : 3;
    for (long i = 0; i < h->n * comps; i++) {
        /* a step is a positive time; the levels come from it clamped to
         * dt_min and 2^-40 of the interval, on every backend alike */
        const double x = k == 2 && legacy ? in[i] * env->dt_max : in[i];
        if (k == 2 ? !(x > 0 && isfinite(x)) : !isfinite(x))
            return orr_fail(err, ORR_ERR_ARG, "Hermite %s of body %ld is %g: %s", k == 0
                            ? "acceleration" : k == 1 ? "jerk" : "step", i / comps + 1, in[i],
                            k == 2 ? "a step must be a positive finite time"
                                   : "it must be finite");
    }
    if (k == 2)
        for (long i = 0; i < h->n; i++)   /* an old checkpoint's: fractions of dt_max */
            h->step[i] = legacy ? in[i] * env->dt_max : in[i];
    else
        memcpy(k == 0 ? h->a : h->j, in, sizeof(double) * 3 * (size_t)h->n);
    h->restored |= 1u << k;
    if ((h->restored & 7) == 7)   /* complete: they describe the state as it is now */
        env->acc_valid = 1;
    return ORR_OK;
}

static int h_current(const void *state, const orr_integ_env *env)
{
    return env->acc_valid;
}

static void h_blocks(const void *state, orr_block_stats *out)
{
    const herm *h = state;
    *out = (orr_block_stats){.blocks = h->blocks, .active = h->active,
                             .smallest = ldexp(h->H, -h->deepest), .stops = h->stops,
                             .host = h->host};
    if (h->grp)
        orr_groups_made(h->grp, &out->formed, &out->parted);
}

const orr_integrator orr_integrator_hermite = {
    .name = "hermite",
    .order = 4,
    .forces_per_step = 0,   /* per block, on its active bodies */
    .create = h_create,
    .destroy = h_destroy,
    .step = h_step,
    .block = h_block,
    .nfields = 4,
    .fields = {{"acc", 3, NULL, 0}, {"jerk", 3, NULL, 0}, {"step", 1, "dt", 0},
               {"group", 1, NULL, 1}},
    .current = h_current,
    .get_field = h_get_field,
    .set_field = h_set_field,
    .blocks = h_blocks,
};
