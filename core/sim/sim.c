/* sim: a simulation on one backend engine (see sim.h).  The bodies live on
 * the engine in its precision; the host keeps a double mirror that is
 * downloaded only when read (orr_sim_pos/vel, diagnostics, output) and
 * uploaded before the next use of the engine only when written (after
 * orr_sim_touch).  On upload 2D runs get z = vz = 0 and periodic axes are
 * wrapped into [0, L).  The integrator (integrator.h) steps the engine;
 * the simulation keeps the clock, asks the integrator to synchronise
 * before the state is read, and clears env.acc_valid whenever the state,
 * the attributes or the force law change. */
#include "sim.h"
#include "frame.h"
#include "trial.h"
#include "dist.h"
#include "tune.h"
#include "util.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <strings.h>
#include <unistd.h>

struct orr_sim {
    orr_sim_config cfg;            /* strings point into this struct / the vtable */
    const orr_integrator *integ;
    char force[64];
    orr_law law;                   /* the force law, own copy; the engine's spec points here */
    orr_fieldset fields;           /* the external fields, own copy (params as now) */
    orr_frame *frame;              /* the frame that follows the bodies (frame.h), or NULL */
    double *attr;                  /* host mirror of the law's attributes: attr[a * n + i] */
    double *attr_up;               /* the attributes as last uploaded (an integrator with
                                      state of its own only: see unchanged()) */
    orr_engine *engine;
    double *pos;                   /* host mirror, 4n: x y z m */
    double *vel;                   /* 3n */
    int host_valid;                /* mirror matches (or is newer than) the engine */
    int host_dirty;                /* mirror written, engine needs an upload */
    long serial;                   /* this process's simulations over the ranks (config.comm
                                      set) in the order made (the same on every rank:
                                      creation is collective); 0 for one made alone */
    int stop_all;                  /* the last agreed stop: every rank had its own stop flag */
    long writes, attr_writes;      /* the script's writes of the bodies and of the attributes
                                      since the ranks last compared (steps_agree) */
    int attr_dirty;                /* attribute mirror written, engine needs an upload (the
                                      attribute mirror is always current: steps never
                                      change attributes) */
    orr_integ_env env;             /* what the integrator works on; env.acc_valid: the
                                      engine's accelerations match its positions */
    void *istate;                  /* the integrator's own state (NULL for none) */
    orr_dist *dist;                /* the slices of the ranks (NULL: this process alone) */
    double time, time_c;           /* clock, with Kahan compensation */
    long steps;
    int mid;                       /* block steps: an interval of mid_h from time is under
                                      way (orr_sim_block_steps), its last block at mid_at
                                      of it; the state may not be read or changed */
    double mid_at, mid_h;
    char kspec_source[16];         /* "tuned", "store" or "default" */
    double kspec_ms;               /* its tuned force time on this rank's targets; < 0 */
    orr_sim_rank *ranks;           /* every rank's configuration (orr_sim_ranks) */
    int nranks;
    int hermite_tuned;             /* 1: hermite below holds the engine's force + jerk
                                      launches (block steps on the GPU) */
    orr_htune_result hermite;      /* their tuning (or their checkpoint's) */
    double *agreed;                /* every rank's settings at a stepping call (steps_agree),
                                      made at the first */
    char tune_note[2048];          /* what the last tuning said, every rank's
                                      (orr_sim_tune_note) */
};

static orr_status switch_engine(orr_sim *s, const orr_kspec *spec, orr_error *err);
static orr_status mid_interval(const orr_sim *s, const char *what, orr_error *err);
static orr_status check_dt_max(const orr_integrator *integ, double dt, double dt_min,
                               orr_error *err);

/* 64-bit FNV-1a of a string, in two exactly representable halves. */
static void text_hash(const char *s, double out[2])
{
    unsigned long long h = 1469598103934665603ull;
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    out[0] = (double)(h >> 32);
    out[1] = (double)(h & 0xffffffffull);
}

/* Every rank must make the same simulation: the settings that shape it are
 * compared with rank 0's (an all-gather, so every rank sees a mismatch and
 * fails alike) and the first difference is named.  The law's source (its
 * baked params with it) is compared as a hash, its params' values (the
 * runtime ones are kernel arguments, not in the source) one by one. */
static orr_status ranks_agree(orr_sim *s, orr_comm *comm, orr_error *err)
{
    enum { F_N, F_PREC, F_DIMS, F_EPS, F_G, F_BX, F_BY, F_BZ, F_DT, F_DAMP, F_ETA, F_ETA0,
           F_DTMIN, F_LEN, F_MASS, F_LAW, F_LAW2, F_INTEG, F_INTEG2, F_FIELDS, F_FIELDS2,
           F_PARAM,
           F_COUNT = F_PARAM + ORR_LAW_MAX_PARAMS };
    static const char *const names[F_PARAM] = {
        "n", "precision", "dims", "softening", "G", "box x", "box y", "box z", "dt", "damping",
        "eta", "eta_start", "dt_min", "units length_cm", "units mass_g", "force law",
        "force law", "integrator", "integrator", "set of external fields (or params of them)",
        "set of external fields (or params of them)"};
    double mine[F_COUNT] = {(double)s->cfg.n, (double)s->cfg.precision, (double)s->cfg.dims,
                            s->cfg.softening, s->cfg.G, s->cfg.box[0], s->cfg.box[1],
                            s->cfg.box[2], s->cfg.dt, s->cfg.damping, s->cfg.eta,
                            s->cfg.eta_start, s->cfg.dt_min, s->cfg.units.length_cm,
                            s->cfg.units.mass_g};
    orr_buf law = {0}, fields = {0};
    int bad = orr_law_emit(&s->law, &law) || orr_fieldset_emit(&s->fields, 1, &fields);
    for (int f = 0; !bad && f < s->fields.n; f++)   /* the fields' runtime values too */
        for (int k = 0; !bad && k < s->fields.f[f].nparams; k++)
            bad = orr_buf_printf(&fields, "%a\n", s->fields.f[f].params[k].value) != 0;
    for (int d = 0; !bad && s->cfg.frame && d < 3; d++)   /* and the frame's start */
        bad = orr_buf_printf(&fields, "%a %a\n", s->cfg.frame_center[d],
                             s->cfg.frame_velocity[d]) != 0;
    if (!bad) {
        text_hash(law.data, mine + F_LAW);
        text_hash(fields.data, mine + F_FIELDS);
    }
    orr_buf_free(&law);
    orr_buf_free(&fields);
    if (bad)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    text_hash(s->integ->name, mine + F_INTEG);
    for (int k = 0; k < s->law.nparams && k < ORR_LAW_MAX_PARAMS; k++)
        mine[F_PARAM + k] = s->law.params[k].value;
    const int ranks = orr_comm_size(comm);
    double *all = malloc(sizeof mine * (size_t)ranks);
    if (!all)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    orr_status st = orr_comm_allgather(comm, mine, all, sizeof mine, err);
    for (int r = 1; !st && r < ranks; r++)
        for (int f = 0; f < F_COUNT; f++) {
            const double a = all[f], b = all[(size_t)r * F_COUNT + f];
            if (a == b || (a != a && b != b))
                continue;
            char va[32], vb[32], pname[64];
            if (f >= F_PARAM)
                snprintf(pname, sizeof pname, "param '%s'", s->law.params[f - F_PARAM].name);
            if (f == F_PREC)
                st = orr_fail(err, ORR_ERR_ARG, "the ranks disagree: rank %d has precision %s, "
                              "rank 0 has %s (every rank must create the same simulation)", r,
                              orr_precision_name((orr_precision)b),
                              orr_precision_name((orr_precision)a));
            else if (f == F_LAW || f == F_LAW2 || f == F_INTEG || f == F_INTEG2 ||
                     f == F_FIELDS || f == F_FIELDS2)
                st = orr_fail(err, ORR_ERR_ARG, "the ranks disagree: rank %d has another %s "
                              "than rank 0 (every rank must create the same simulation)", r,
                              names[f]);
            else
                st = orr_fail(err, ORR_ERR_ARG, "the ranks disagree: rank %d has %s = %s, "
                              "rank 0 has %s (every rank must create the same simulation)",
                              r, f >= F_PARAM ? pname
                                 : f == F_DT && s->integ->blocks ? "dt_max" : names[f],
                              orr_shortest(vb, sizeof vb, b),
                              orr_shortest(va, sizeof va, a));
            break;
        }
    if (st == ORR_ERR_ARG && err)
        err->shared = 1;   /* every rank compared the same gathered settings */
    free(all);
    return st;
}

/* The force + jerk kernel's launches per bucket of active bodies
 * (htune.h), tuned or found stored, set on the engine.  Over several
 * ranks they take turns, so no two time candidates on one GPU at once; a
 * rank with the same kind of GPU as an earlier one finds its choice in
 * the store. */
static orr_status hermite_tune(orr_sim *s, double budget, int retune, orr_error *err)
{
    orr_comm *comm = s->dist ? orr_dist_comm(s->dist) : s->cfg.comm;
    const int ranks = comm ? orr_comm_size(comm) : 1, me = comm ? orr_comm_rank(comm) : 0;
    orr_htune_options o;
    orr_htune_options_default(&o);
    o.budget_s = budget;
    o.retune = retune;
    o.device = s->cfg.device;
    orr_kspec spec = *orr_engine_spec(s->engine);
    spec.phys.law = &s->law;
    orr_status st = ORR_OK;
    for (int turn = 0; !st && turn < ranks; turn++) {
        orr_status mine = ORR_OK;
        if (me == turn && !(mine = orr_htune(&spec, s->cfg.n, &o, &s->hermite, err)))
            mine = orr_htune_apply(&s->hermite, s->engine, err);
        st = ranks > 1 ? orr_comm_all_ok(comm, mine, err, "tune its Hermite kernel") : mine;
    }
    s->hermite_tuned = !st;
    if (!st)   /* each rank tuned its own: what any of them said */
        st = orr_dist_notes(ranks > 1 ? comm : NULL, s->hermite.note, s->tune_note,
                            sizeof s->tune_note, err);
    return st;
}

const char *orr_sim_tune_note(const orr_sim *s)
{
    return s->tune_note;
}

const orr_htune_result *orr_sim_hermite_tuning(const orr_sim *s)
{
    return s->hermite_tuned ? &s->hermite : NULL;
}

orr_status orr_sim_set_hermite_launch(orr_sim *s, const orr_hlaunch *launch, int nbuckets,
                                      const char *source, orr_error *err)
{
    if (s->mid)
        return mid_interval(s, "setting the force + jerk launches", err);
    if (orr_engine_backend(s->engine) != ORR_BACKEND_CUDA || !s->integ->blocks)
        return ORR_OK;   /* the CPU has no such launches */
    if (nbuckets != orr_hbucket(s->cfg.n) + 1)
        return orr_fail(err, ORR_ERR_ARG, "%d force + jerk launches for %ld bodies: expected %d",
                        nbuckets, s->cfg.n, orr_hbucket(s->cfg.n) + 1);
    orr_htune_result r = s->hermite;
    r.nbuckets = nbuckets;
    for (int k = 0; k < nbuckets; k++) {
        r.launch[k] = launch[k];
        r.ms[k] = -1;
        r.active[k] = orr_hbucket_top(k) < s->cfg.n ? orr_hbucket_top(k) : s->cfg.n;
        snprintf(r.from[k], sizeof r.from[k], "%s", source);
    }
    snprintf(r.source, sizeof r.source, "%s", source);
    orr_status st = orr_htune_apply(&r, s->engine, err);
    if (!st) {
        s->hermite = r;
        s->hermite_tuned = 1;
    }
    return st;
}

/* Every rank's configuration to every rank (s->ranks); collective. */
static orr_status gather_ranks(orr_sim *s, orr_error *err)
{
    orr_comm *comm = s->dist ? orr_dist_comm(s->dist) : NULL;
    const int ranks = comm ? orr_comm_size(comm) : 1, me = comm ? orr_comm_rank(comm) : 0;
    orr_sim_rank mine;
    memset(&mine, 0, sizeof mine);
    mine.launch = orr_engine_spec(s->engine)->launch;
    mine.launch.ranges = orr_engine_ranges(s->engine);
    memcpy(mine.source, s->kspec_source, sizeof mine.source);
    mine.slice = comm ? orr_dist_slice(s->dist, me) : orr_engine_all(s->engine);
    mine.device = s->cfg.backend == ORR_BACKEND_CUDA ? s->cfg.device : -1;
    mine.ms = s->kspec_ms;
    if (comm)
        snprintf(mine.host, sizeof mine.host, "%s", orr_comm_host(comm));
    else if (gethostname(mine.host, sizeof mine.host) != 0)
        snprintf(mine.host, sizeof mine.host, "?");
    mine.host[sizeof mine.host - 1] = '\0';
    if (s->nranks != ranks) {
        orr_sim_rank *r = realloc(s->ranks, sizeof *r * (size_t)ranks);
        if (!r)
            return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        s->ranks = r;
        s->nranks = ranks;
    }
    if (!comm) {
        s->ranks[0] = mine;
        return ORR_OK;
    }
    return orr_comm_allgather(comm, &mine, s->ranks, sizeof mine, err);
}

const orr_sim_rank *orr_sim_ranks(const orr_sim *s, int *ranks)
{
    *ranks = s->nranks;
    return s->ranks;
}

/* After a drift of this rank's slice: every rank's positions everywhere. */
/* A block's corrected bodies between the GPUs (hermite over ranks). */
static orr_status gather_records(void *ctx, orr_devptr buf, const long *counts,
                                 const long *displs, size_t elem, orr_error *err)
{
    orr_sim *s = ctx;
    return orr_dist_gather_records(s->dist, s->engine, buf, counts, displs, elem, err);
}

static orr_status exchange_positions(orr_integ_env *env, void *ctx, int force, orr_error *err)
{
    orr_sim *s = ctx;
    return force ? orr_dist_gather_force(s->dist, env->engine, err)
                 : orr_dist_gather(s->dist, env->engine, ORR_ENGINE_POS, err);
}

/* ---- creation -------------------------------------------------------------- */

/* Regularisation (groups.h) follows Kepler orbits: Newtonian gravity,
 * unsoftened, in open space, with positions a hard binary's digits fit. */
static orr_status check_regularize(const orr_sim_config *c, const orr_integrator *integ,
                                   const char *force, orr_error *err)
{
    if (!integ->blocks)
        return orr_fail(err, ORR_ERR_ARG, "regularize is for integrator \"hermite\" (got "
                        "\"%s\")", integ->name);
    if (c->law && !c->law->builtin)
        return orr_fail(err, ORR_ERR_ARG, "regularize is for the built-in force \"gravity\" (got "
                        "a force law of one's own, \"%s\"): a regularised pair follows a Kepler "
                        "orbit, which the law need not have", c->law->name);
    if (strcmp(force, "gravity") != 0)
        return orr_fail(err, ORR_ERR_ARG, "regularize is for force \"gravity\" (got \"%s\"): "
                        "a regularised pair follows its Kepler orbit, which other laws do not "
                        "have", force);
    if (c->softening != 0)
        return orr_fail(err, ORR_ERR_ARG, "regularize needs softening = 0 (got %g): a softened "
                        "pair has no singularity to regularise", c->softening);
    if (!ORR_STORED_DOUBLE(c->precision))
        return orr_fail(err, ORR_ERR_ARG, "regularize needs precision \"double\" or "
                        "\"mixed\": a hard binary's separation is below a float position's "
                        "resolution");
    if (c->box[0] > 0 || c->box[1] > 0 || c->box[2] > 0)
        return orr_fail(err, ORR_ERR_ARG, "regularize is for open space, not a periodic box");
    if (!(c->reg_r_close >= 0) || !isfinite(c->reg_r_close))
        return orr_fail(err, ORR_ERR_ARG, "regularize's r_close must be a length >= 0 (0: "
                        "automatic; got %g)", c->reg_r_close);
    if (!(c->reg_gamma > 0 && c->reg_gamma < 1))
        return orr_fail(err, ORR_ERR_ARG, "regularize's gamma must be in (0, 1) (got %g)",
                        c->reg_gamma);
    if (!(c->reg_encounter >= 0 && c->reg_encounter <= 1))
        return orr_fail(err, ORR_ERR_ARG, "regularize's encounter must be in [0, 1] (a "
                        "fraction of r_close; got %g)", c->reg_encounter);
    return ORR_OK;
}

void orr_sim_config_default(orr_sim_config *c)
{
    memset(c, 0, sizeof *c);
    c->n = 0;
    c->precision = ORR_FLOAT;
    c->G = 1.0;
    c->softening = 0.01;
    c->dt = 0.01;
    c->damping = 1.0;
    c->eta = 0.02;
    c->eta_start = 0.01;
    c->reg_gamma = 1e-6;
    c->reg_encounter = ORR_REG_ENCOUNTER;
    c->dt_min = 0;
    c->integrator = "leapfrog";
    c->force = "gravity";
    c->backend = ORR_BACKEND_AUTO;
    c->dims = 3;
    c->device = 0;
    c->tune = ORR_SIM_TUNE_AUTO;
    c->tune_budget = 2.0;
}

static orr_status check_dt(double dt, orr_error *err)
{
    if (!(dt > 0) || !isfinite(dt))
        return orr_fail(err, ORR_ERR_ARG, "dt must be positive and finite (got %g)", dt);
    return ORR_OK;
}

static orr_status validate(const orr_sim_config *c, const orr_integrator **integ, orr_error *err)
{
    if (c->n < 1)
        return orr_fail(err, ORR_ERR_ARG, "n must be at least 1 (got %ld)", c->n);
    if (c->precision != ORR_FLOAT && c->precision != ORR_DOUBLE && c->precision != ORR_MIXED)
        return orr_fail(err, ORR_ERR_ARG, "precision must be float, double or mixed (got %d)",
                        (int)c->precision);
    if (c->backend != ORR_BACKEND_AUTO && c->backend != ORR_BACKEND_CUDA &&
        c->backend != ORR_BACKEND_CPU)
        return orr_fail(err, ORR_ERR_ARG, "backend must be auto, cuda or cpu (got %d)",
                        (int)c->backend);
    orr_status st = check_dt(c->dt, err);
    if (st)
        return st;
    if (!(c->damping > 0 && c->damping <= 1))
        return orr_fail(err, ORR_ERR_ARG, "damping must be in (0, 1] (got %g)", c->damping);
    if (!(c->eta > 0 && c->eta <= 1) || !(c->eta_start > 0 && c->eta_start <= 1))
        return orr_fail(err, ORR_ERR_ARG, "eta and eta_start must be in (0, 1] (got %g, %g)",
                        c->eta, c->eta_start);
    if (!(c->dt_min >= 0 && c->dt_min <= c->dt))
        return orr_fail(err, ORR_ERR_ARG, "dt_min must be from 0 to dt_max = %g (got %g)", c->dt,
                        c->dt_min);
    if (!(c->softening >= 0) || !isfinite(c->softening))
        return orr_fail(err, ORR_ERR_ARG, "softening must be >= 0 and finite (got %g)",
                        c->softening);
    if (!isfinite(c->G))
        return orr_fail(err, ORR_ERR_ARG, "G must be finite (got %g)", c->G);
    if (c->dims != 2 && c->dims != 3)
        return orr_fail(err, ORR_ERR_ARG, "dims must be 2 or 3 (got %d)", c->dims);
    if ((st = orr_units_check(&c->units, c->G, err)))
        return st;
    if (c->tune < ORR_SIM_TUNE_AUTO || c->tune > ORR_SIM_TUNE_ON)
        return orr_fail(err, ORR_ERR_ARG, "tune must be auto, off or on (got %d)", c->tune);
    if (!(c->tune_budget > 0) || !isfinite(c->tune_budget))
        return orr_fail(err, ORR_ERR_ARG, "tune budget must be a positive number of seconds (got %g)",
                        c->tune_budget);
    const orr_launch *kl = &c->kernel;
    if (kl->block < 0 || kl->unroll < 0 || kl->split < 0 || kl->ipt < 0 || kl->ranges < 0 ||
        kl->threads < 0 || kl->prefetch < 0)
        return orr_fail(err, ORR_ERR_ARG, "kernel settings must not be negative (block %d, unroll "
                        "%d, split %d, ipt %d, ranges %d, threads %d, prefetch %d)", kl->block,
                        kl->unroll, kl->split, kl->ipt, kl->ranges, kl->threads, kl->prefetch);
    if (c->tune == ORR_SIM_TUNE_ON && (kl->block || kl->unroll || kl->split || kl->ipt ||
                                       kl->ranges || kl->threads || kl->prefetch))
        return orr_fail(err, ORR_ERR_ARG, "a kernel configuration of one's own and tune = on "
                        "exclude each other (the tuner would replace it)");
    for (int k = 0; k < 3; k++)
        if (!(c->box[k] >= 0) || !isfinite(c->box[k]))
            return orr_fail(err, ORR_ERR_ARG,
                            "box length on axis %c must be finite and >= 0 (got %g)", "xyz"[k],
                            c->box[k]);
    const char *iname = c->integrator ? c->integrator : "leapfrog";
    *integ = c->integrator_impl ? c->integrator_impl : orr_integrator_find(iname);
    if (!*integ) {
        char list[256] = "";
        size_t used = 0;
        int count = 0;
        const orr_integrator *const *all = orr_integrators();
        while (all[count])
            count++;
        for (int k = 0; k < count && used < sizeof list; k++) {
            const char *sep = k == 0 ? "" : k == count - 1 ? " or " : ", ";
            int w = snprintf(list + used, sizeof list - used, "%s%s", sep, all[k]->name);
            if (w < 0)
                break;
            used += (size_t)w;
        }
        return orr_fail(err, ORR_ERR_ARG, "unknown integrator '%s' (expected %s)", iname, list);
    }
    if (c->damping != 1 && strcmp((*integ)->name, "euler") != 0)
        return orr_fail(err, ORR_ERR_ARG, "damping applies to the euler integrator only");
    if (c->precision == ORR_MIXED && !(*integ)->blocks)
        return orr_fail(err, ORR_ERR_ARG, "precision \"mixed\" is for integrator \"hermite\" "
                        "(its force + jerk kernel); %s runs in float or double",
                        (*integ)->name);
    const char *force = c->law ? c->law->name : c->force ? c->force : "gravity";
    if (!force[0] || strlen(force) >= sizeof(((orr_kspec *)0)->phys.force))
        return orr_fail(err, ORR_ERR_ARG, "force must be a name of 1 to %zu characters (got '%s')",
                        sizeof(((orr_kspec *)0)->phys.force) - 1, force);
    if ((st = check_dt_max(*integ, c->dt, c->dt_min, err)) != ORR_OK)
        return st;
    if (c->regularize && (st = check_regularize(c, *integ, force, err)) != ORR_OK)
        return st;
    return ORR_OK;
}

/* Test hook: ORRERY_TEST_RANK_BACKEND="R=cuda" (or "R=cpu") makes rank R
 * resolve backend "auto" to that backend, as if its host alone had (or
 * lacked) a usable GPU, so that tests without a GPU see the ranks disagree
 * (tests/mpi/choices.lua). */
static void test_rank_backend(const orr_comm *comm, orr_backend_kind *kind)
{
    const char *v = getenv("ORRERY_TEST_RANK_BACKEND");
    char *end = NULL;
    long r = v && *v ? strtol(v, &end, 10) : -1;
    if (r < 0 || !end || *end != '=' || r != (comm ? orr_comm_rank(comm) : 0))
        return;
    if (strcmp(end + 1, "cuda") == 0)
        *kind = ORR_BACKEND_CUDA;
    else if (strcmp(end + 1, "cpu") == 0)
        *kind = ORR_BACKEND_CPU;
}

/* Over several ranks, before any rank acts on them: every rank's checks of
 * its configuration, its backend (resolved on each rank: "auto" takes the
 * GPU where its host has a usable one) and whether it tunes at creation
 * (the tuning is collective) are the same on every rank, or every rank
 * fails alike, naming the ranks. */
static orr_status creation_agree(const orr_sim_config *c, const orr_integrator *integ,
                                 orr_status st, orr_backend_kind kind, orr_error *err)
{
    if (!c->comm || orr_comm_size(c->comm) == 1)
        return st;
    st = orr_comm_agree(c->comm, st, 1, err);
    if (!st)
        st = orr_comm_same(c->comm, orr_backend_name(kind), "the backend",
                           c->backend == ORR_BACKEND_AUTO
                               ? "backend = \"auto\" takes the GPU where a rank's host has a "
                                 "usable one: make every host's GPU usable, or name the backend"
                               : NULL, err);
    if (st)
        return st;
    const orr_launch *own = &c->kernel;
    const int fixed = own->block || own->unroll || own->split || own->ipt || own->ranges ||
                      own->threads || own->prefetch;
    const int tuning = !fixed && (c->tune == ORR_SIM_TUNE_ON ||
                                  (c->tune == ORR_SIM_TUNE_AUTO && kind == ORR_BACKEND_CUDA));
    return orr_comm_same(c->comm, !tuning ? "no tuning" : integ->blocks && kind == ORR_BACKEND_CUDA
                                                    ? "the force + jerk kernel" : "the force kernel",
                         "what to tune at creation", "tune and kernel must be alike on every rank",
                         err);
}

orr_status orr_sim_create(orr_sim **out, const orr_sim_config *c, char *notice,
                          size_t notice_size, orr_error *err)
{
    orr_trace("simulation create");
    *out = NULL;
    if (notice && notice_size)
        notice[0] = '\0';
    const orr_integrator *integ = NULL;
    orr_status st = validate(c, &integ, err);

    /* resolved here, before tuning, so a message says what was asked */
    orr_backend_kind kind = ORR_BACKEND_CPU;
    if (!st)
        st = orr_backend_resolve(c->backend, c->device, &kind, notice, notice_size, err);
    if (!st && c->backend == ORR_BACKEND_AUTO)
        test_rank_backend(c->comm, &kind);
    if (!st)   /* with one rank too: a value that is no exchange is not taken as automatic */
        st = orr_dist_exchange_check(err);
    if (!st) {   /* so are the block steps' choices, on any backend */
        int mode = 0;
        long split = 0;
        st = orr_hblocks_env(&mode, &split, err);
    }
    st = creation_agree(c, integ, st, kind, err);   /* before any rank acts on them */
    if (st)
        return st;

    orr_sim *s = calloc(1, sizeof *s);
    if (!s)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    /* the same count on every rank: every rank makes every simulation over
     * the ranks (one a rank makes alone, without config.comm, is not
     * counted: bench's one-rank figure) */
    static long made;
    s->serial = c->comm ? ++made : 0;
    s->cfg = *c;
    s->integ = integ;
    st = c->law ? orr_law_copy(&s->law, c->law, err)
                : orr_law_builtin(c->force ? c->force : "gravity", &s->law, err);
    if (!st)
        st = orr_law_validate(&s->law, err);
    /* where the mistake is, not at the first step (the backends say the same) */
    if (!st && integ->blocks && !orr_law_has_jerk(&s->law))
        st = orr_fail(err, ORR_ERR_ARG, "force law '%s' has no jerk: the Hermite integrator needs one "
                      "(a 'jerk' snippet setting g = df/d(d2))", s->law.name);
    if (!st)
        st = orr_fieldset_copy(&s->fields, c->fields, err);
    s->fields.planar = c->dims == 2;   /* in the plane: no z from the fields */
    s->fields.frame = c->frame != 0;
    if (!st && c->frame && s->fields.n == 0)
        st = orr_fail(err, ORR_ERR_ARG, "frame: there are no fields for its centre to move in "
                      "(give fields = {...})");
    if (!st && c->frame && (c->box[0] > 0 || c->box[1] > 0 || c->box[2] > 0))
        st = orr_fail(err, ORR_ERR_ARG, "frame: not in a periodic box");
    if (!st)
        st = orr_fieldset_validate(&s->fields, err);
    for (int f = 0; !st && integ->blocks && f < s->fields.n; f++)
        if (!orr_field_has_jerk(&s->fields.f[f]))
            st = orr_fail(err, ORR_ERR_ARG, "field '%s' has no jerk: the Hermite integrator "
                          "needs one (a 'jerk' snippet setting jx, jy, jz, or the field's "
                          "potential as an expression)", s->fields.f[f].name);
    if (!st && orr_units_physical(&c->units)) {   /* params in physical units follow them */
        double cgs[4];
        orr_units_cgs(&c->units, c->G, &cgs[0], &cgs[1], &cgs[2], &cgs[3]);
        st = orr_fieldset_units(&s->fields, cgs[0], cgs[2], cgs[1], err);
    }
    if (!st && c->frame) {
        double fv[ORR_FIELD_MAX_RUNTIME];
        orr_fieldset_runtime_values(&s->fields, fv);
        st = orr_frame_create(&s->frame, &s->fields, fv, c->G, 0, c->frame_center,
                              c->frame_velocity, c->frame_step, err);
    }
    if (st) {
        orr_frame_destroy(s->frame);
        orr_law_free(&s->law);   /* NULL or its own copies, whatever failed */
        orr_fieldset_free(&s->fields);
        free(s);
        return st;
    }
    snprintf(s->force, sizeof s->force, "%s", s->law.name);
    s->cfg.integrator = integ->name;
    s->cfg.force = s->force;
    s->cfg.law = &s->law;
    s->cfg.fields = &s->fields;
    s->cfg.backend = kind;

    s->pos = calloc((size_t)c->n, 4 * sizeof(double));
    s->vel = calloc((size_t)c->n, 3 * sizeof(double));
    if (s->law.nattrs)
        s->attr = calloc((size_t)c->n * (size_t)s->law.nattrs, sizeof(double));
    if (!s->pos || !s->vel || (s->law.nattrs && !s->attr)) {
        orr_sim_destroy(s);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory for %ld bodies", c->n);
    }

    orr_kspec spec;
    orr_kspec_default(&spec, kind == ORR_BACKEND_CUDA ? ORR_TARGET_GPU : ORR_TARGET_CPU);
    snprintf(spec.phys.force, sizeof spec.phys.force, "%s", s->force);
    spec.phys.law = &s->law;
    spec.phys.fields = s->fields.n ? &s->fields : NULL;
    spec.phys.precision = c->precision;
    spec.phys.softening = c->softening;
    spec.phys.G = c->G;
    memcpy(spec.phys.box, c->box, sizeof spec.phys.box);
    snprintf(s->kspec_source, sizeof s->kspec_source, "default");
    s->kspec_ms = -1;
    const orr_launch *own = &c->kernel;
    const int fixed = own->block || own->unroll || own->split || own->ipt || own->ranges ||
                      own->threads || own->prefetch;
    if (fixed) {
        spec.launch.block = own->block ? own->block : spec.launch.block;
        spec.launch.unroll = own->unroll ? own->unroll : spec.launch.unroll;
        spec.launch.split = own->split ? own->split : spec.launch.split;
        spec.launch.ipt = own->ipt ? own->ipt : spec.launch.ipt;
        spec.launch.prefetch = own->prefetch;
        spec.launch.ranges = own->ranges;
        spec.launch.threads = own->threads;
        snprintf(s->kspec_source, sizeof s->kspec_source, "given");
    }
    const int tuning = !fixed && (c->tune == ORR_SIM_TUNE_ON ||
                                  (c->tune == ORR_SIM_TUNE_AUTO && kind == ORR_BACKEND_CUDA));
    /* block steps on the GPU run the force + jerk kernel, tuned below once
     * the engine is there, not the force pass */
    const int htuning = tuning && integ->blocks && kind == ORR_BACKEND_CUDA;
    if (tuning && !htuning) {
        orr_tune_options o;
        orr_tune_options_default(&o);
        o.budget_s = c->tune_budget;
        o.device = c->device;
        orr_tune_result r;
        st = orr_dist_tune(c->comm, kind, &spec, c->n, o, &r, err);
        if (!st)   /* what every rank's tuning said (collective: every rank is here) */
            st = orr_dist_notes(c->comm, r.note, s->tune_note, sizeof s->tune_note, err);
        if (st) {
            orr_error_context(err, "tuning kernels for %ld bodies", c->n);
            orr_sim_destroy(s);
            return st;
        }
        spec.launch = r.best.launch;
        s->kspec_ms = r.best_ms;
        snprintf(s->kspec_source, sizeof s->kspec_source, "%s", r.source);
    }
    /* CPU ranks on one host share its cores, unless the threads were set */
    if (kind == ORR_BACKEND_CPU && c->comm && spec.launch.threads == 0)
        spec.launch.threads = orr_dist_cpu_threads(c->comm);
    st = orr_engine_create(&s->engine, kind, &spec, ORR_VARIANT_TILED, c->n, c->device, NULL, 0,
                           err);
    if (!st && s->frame)
        orr_engine_set_frame(s->engine, orr_frame_slots, s->frame);
    if (!st && integ->create)
        st = integ->create(&s->istate, c->n, err);
    if (c->comm && orr_comm_size(c->comm) > 1 &&   /* every rank has its engine, or none goes on */
        (st = orr_comm_agree(c->comm, st, 1, err)) == ORR_OK &&
        (st = ranks_agree(s, c->comm, err)) == ORR_OK)
        st = orr_dist_create(&s->dist, c->comm, c->n, err);
    if (!st && c->comm && !s->dist && orr_dist_exchange_asked() == ORR_EXCHANGE_NCCL &&
        kind == ORR_BACKEND_CUDA)
        st = orr_dist_create(&s->dist, c->comm, c->n, err);   /* one rank over NCCL */
    if (!st && s->dist)
        st = orr_dist_attach(s->dist, s->engine, c->device, err);
    if (st) {
        orr_sim_destroy(s);
        return st;
    }
    if (htuning && (st = hermite_tune(s, c->tune_budget, 0, err)) != ORR_OK) {
        orr_error_context(err, "tuning the Hermite force + jerk kernel for %ld bodies", c->n);
        orr_sim_destroy(s);
        return st;
    }
    if ((st = gather_ranks(s, err)) != ORR_OK) {
        orr_sim_destroy(s);
        return st;
    }
    s->env.targets = s->dist ? orr_dist_mine(s->dist) : orr_engine_all(s->engine);
    if (s->dist) {
        s->env.exchange = exchange_positions;
        s->env.exchange_ctx = s;
        s->env.comm = orr_dist_comm(s->dist);
        if (orr_dist_gpu_blocks(s->dist)) {
            s->env.block_gather = gather_records;
            s->env.block_gather_ctx = s;
        }
    }
    /* all bodies at the origin, at rest, mass 0: uploaded before first use */
    s->host_valid = 1;
    s->host_dirty = 1;
    s->attr_dirty = 1;
    s->env.acc_valid = 0;
    *out = s;
    orr_trace("simulation created");
    return ORR_OK;
}

void orr_sim_destroy(orr_sim *s)
{
    if (!s)
        return;
    orr_trace("simulation destroy");
    if (s->istate && s->integ->destroy)
        s->integ->destroy(s->istate);
    orr_engine_destroy(s->engine);
    orr_dist_destroy(s->dist);
    free(s->ranks);
    free(s->pos);
    free(s->vel);
    free(s->attr);
    free(s->attr_up);
    free(s->agreed);
    orr_law_free(&s->law);
    orr_fieldset_free(&s->fields);
    orr_frame_destroy(s->frame);
    free(s);
}

/* The kernel spec in use with the simulation's own law (current params):
 * the base of every engine the simulation builds or compares with. */
static orr_kspec current_spec(const orr_sim *s)
{
    orr_kspec k = *orr_engine_spec(s->engine);
    k.phys.law = &s->law;
    k.phys.fields = s->fields.n ? &s->fields : NULL;
    return k;
}

int orr_sim_blocks(const orr_sim *s, orr_block_stats *out)
{
    *out = (orr_block_stats){0};
    if (!s->integ->blocks)
        return 0;
    s->integ->blocks(s->istate, out);
    return 1;
}

const orr_kspec *orr_sim_kspec(const orr_sim *s, const char **source)
{
    if (source)
        *source = s->kspec_source;
    return orr_engine_spec(s->engine);
}

typedef struct {
    void (*report)(const void *trial, void *ctx);
    void *ctx;
} report_relay;

static void relay(const orr_tune_trial *t, void *ctx)
{
    report_relay *r = ctx;
    r->report(t, r->ctx);
}

orr_status orr_sim_tune(orr_sim *s, double budget, int exhaustive,
                        void (*report)(const void *trial, void *ctx), void *ctx, orr_error *err)
{
    orr_status pre = !(budget > 0) || !isfinite(budget)
                         ? orr_fail(err, ORR_ERR_ARG, "budget must be a positive number of "
                                    "seconds (got %g)", budget)
                         : mid_interval(s, "tuning", err);
    const int htuning = s->integ->blocks && orr_engine_backend(s->engine) == ORR_BACKEND_CUDA;
    orr_comm *comm = s->dist ? orr_dist_comm(s->dist) : NULL;
    if (comm && orr_comm_size(comm) > 1) {   /* every rank takes the same path, or none */
        pre = orr_comm_agree(comm, pre, 1, err);
        if (!pre)
            pre = orr_comm_same(comm, htuning ? "the force + jerk kernel" : "the force kernel",
                                "what to tune", NULL, err);
    }
    if (pre)
        return pre;
    if (htuning)
        return hermite_tune(s, budget, 1, err);   /* block steps run the force + jerk kernel */
    orr_kspec base = current_spec(s);
    orr_tune_options o;
    orr_tune_options_default(&o);
    o.budget_s = budget;
    o.exhaustive = exhaustive;
    o.retune = 1;
    o.device = s->cfg.device;
    report_relay rr = {report, ctx};
    if (report) {
        o.report = relay;
        o.ctx = &rr;
    }
    orr_tune_result r;
    orr_status st = orr_dist_tune(comm, s->cfg.backend, &base, s->cfg.n, o, &r, err);
    if (!st)   /* collective: before anything that may fail on one rank alone */
        st = orr_dist_notes(comm, r.note, s->tune_note, sizeof s->tune_note, err);
    orr_kspec k = base;
    k.launch = r.best.launch;
    if (!st)
        st = switch_engine(s, &k, err);
    if (st)
        return st;
    snprintf(s->kspec_source, sizeof s->kspec_source, "%s", r.source);
    s->kspec_ms = r.best_ms;
    return gather_ranks(s, err);
}

const orr_sim_config *orr_sim_config_of(const orr_sim *s)
{
    return &s->cfg;
}

const orr_engine *orr_sim_engine(const orr_sim *s)
{
    return s->engine;
}

long orr_sim_n(const orr_sim *s)
{
    return s->cfg.n;
}

/* The clock is a Kahan sum: time, less what its last roundings added
 * (time_c), is the sum of the steps to within a rounding. */
double orr_sim_time(const orr_sim *s)
{
    const double t = s->time - s->time_c;
    return s->mid ? t + s->mid_at * s->mid_h : t;
}

double orr_sim_clock(const orr_sim *s)
{
    return s->time;
}

int orr_sim_synchronized(const orr_sim *s)
{
    return !s->mid;
}

double orr_sim_sync_time(const orr_sim *s)
{
    const double t = s->time - s->time_c;
    return s->mid ? t + s->mid_h : t;
}

/* Between the block steps of an interval the bodies are at times of their
 * own: nothing may read or change them (what says what was asked). */
static orr_status mid_interval(const orr_sim *s, const char *what, orr_error *err)
{
    if (!s->mid)
        return ORR_OK;
    return orr_fail(err, ORR_ERR_ARG, "%s between block steps: the bodies are at times of "
                    "their own (the last block step is at t = %.17g, inside the interval of "
                    "dt_max from %.17g to %.17g), and they are read and changed only at its "
                    "end: step on to it, or advance to %.17g", what, orr_sim_time(s), s->time,
                    s->time + s->mid_h, s->time + s->mid_h);
}

long orr_sim_steps(const orr_sim *s)
{
    return s->steps;
}

/* ---- host mirror ----------------------------------------------------------- */

/* x wrapped into [0, L); never L itself (x just below 0 can round up to it). */
static double wrap(double x, double l)
{
    double w = x - l * floor(x / l);
    if (!(w < l) || w < 0)
        w = 0;
    return w;
}

/* Over several ranks: rank 0's mirror (what was written of it) to every
 * rank, so every rank starts from the same bodies (a script's unseeded
 * random numbers differ). */
static orr_status share_mirror(orr_sim *s, orr_error *err)
{
    orr_comm *c = orr_dist_comm(s->dist);
    const size_t n = (size_t)s->cfg.n;
    orr_status st = ORR_OK;
    if (s->host_dirty)
        st = orr_comm_bcast(c, s->pos, sizeof(double) * 4 * n, 0, err);
    if (!st && s->host_dirty)
        st = orr_comm_bcast(c, s->vel, sizeof(double) * 3 * n, 0, err);
    if (!st && s->attr && s->attr_dirty)
        st = orr_comm_bcast(c, s->attr, sizeof(double) * n * (size_t)s->law.nattrs, 0, err);
    return st;
}

/* In precision float the engine stores floats: a value of the mirror beyond
 * their range would become inf there.  The first such value of what is to
 * be uploaded, named (its body, its field), as an error. */
static orr_status check_float_range(const orr_sim *s, orr_error *err)
{
    if (ORR_STORED_DOUBLE(s->cfg.precision))
        return ORR_OK;
    static const char *const names[7] = {"x", "y", "z", "m", "vx", "vy", "vz"};
    const long n = s->cfg.n;
    const char *what = NULL;
    double v = 0;
    long body = -1;
    for (long i = 0; s->host_dirty && body < 0 && i < n; i++)
        for (int k = 0; body < 0 && k < 7; k++) {
            v = k < 4 ? s->pos[4 * i + k] : s->vel[3 * i + k - 4];
            if (!(fabs(v) <= FLT_MAX))
                body = i, what = names[k];
        }
    for (int a = 0; s->attr_dirty && s->attr && body < 0 && a < s->law.nattrs; a++)
        for (long i = 0; body < 0 && i < n; i++) {
            v = s->attr[(size_t)a * (size_t)n + (size_t)i];
            if (!(fabs(v) <= FLT_MAX))
                body = i, what = s->law.attrs[a];
        }
    if (body < 0)
        return ORR_OK;
    return orr_fail(err, ORR_ERR_ARG, "body %ld: '%s' = %g is beyond the float range (at most "
                    "%.9g in magnitude; precision \"double\" holds it): nothing was uploaded",
                    body + 1, what, v, FLT_MAX);
}

/* 1 when what is about to be uploaded (the mirror after its fix-ups) is
 * what the engine holds already, in the engine's precision: a write of
 * unchanged values, which must change nothing.  Asked only where it
 * matters (an integrator with state of its own, whose fields are current:
 * Hermite would otherwise start afresh); over several ranks every rank
 * agrees. */
static int unchanged(orr_sim *s)
{
    int same = s->env.acc_valid && s->integ->nfields > 0;
    const size_t n = (size_t)s->cfg.n;
    if (same && s->host_dirty) {
        double *p = malloc(sizeof(double) * 7 * n);
        orr_error ignored = {0};
        same = p && orr_engine_get_state(s->engine, p, p + 4 * n, &ignored) == ORR_OK;
        orr_error_clear(&ignored);
        const int dbl = ORR_STORED_DOUBLE(s->cfg.precision);
        for (size_t k = 0; same && k < 7 * n; k++) {
            const double m = k < 4 * n ? s->pos[k] : s->vel[k - 4 * n];
            if (dbl) {
                same = memcmp(&m, p + k, sizeof m) == 0;
            } else {
                const float a = (float)m, b = (float)p[k];
                same = memcmp(&a, &b, sizeof a) == 0;
            }
        }
        free(p);
    }
    if (same && s->attr_dirty && s->attr)
        same = s->attr_up &&
               memcmp(s->attr, s->attr_up, sizeof(double) * n * (size_t)s->law.nattrs) == 0;
    if (s->dist) {   /* the lowest verdict of any rank */
        double v = !same;
        orr_error ignored = {0};
        if (orr_comm_max(orr_dist_comm(s->dist), &v, 1, &ignored) != ORR_OK)
            v = 1;
        orr_error_clear(&ignored);
        same = v == 0;
    }
    return same;
}

/* Uploads the mirror when it was written (the bodies after the 2D and box
 * fix-ups, the attributes), each part only when written; in float only when
 * every value fits a float.  A write of the values the engine holds
 * already changes nothing: the integrator goes on as if it had not been
 * made; any other clears env.acc_valid (the integrator starts afresh). */
static orr_status flush(orr_sim *s, orr_error *err)
{
    if (!s->host_dirty && !s->attr_dirty)
        return ORR_OK;
    if (s->dist) {
        orr_status st = share_mirror(s, err);
        if (st)
            return st;
    }
    orr_status rc = check_float_range(s, err);   /* rank 0's values: on every rank alike */
    if (rc) {
        err->shared = s->dist != NULL;   /* every rank found it: said once */
        return rc;
    }
    const long n = s->cfg.n;
    for (long i = 0; s->host_dirty && i < n; i++) {
        if (s->cfg.dims == 2) {
            s->pos[4 * i + 2] = 0;
            s->vel[3 * i + 2] = 0;
        }
        for (int k = 0; k < 3; k++)
            if (s->cfg.box[k] > 0)
                s->pos[4 * i + k] = wrap(s->pos[4 * i + k], s->cfg.box[k]);
    }
    const int same = unchanged(s);
    orr_status st = s->host_dirty && !same ? orr_engine_set_state(s->engine, s->pos, s->vel, err)
                                           : ORR_OK;
    if (!st && s->attr && s->attr_dirty && !same)
        st = orr_engine_set_attr(s->engine, s->attr, err);
    if (st)
        return st;
    if (s->attr && s->attr_dirty && s->integ->nfields > 0) {
        if (!s->attr_up)
            s->attr_up = malloc(sizeof(double) * (size_t)n * (size_t)s->law.nattrs);
        if (s->attr_up)
            memcpy(s->attr_up, s->attr, sizeof(double) * (size_t)n * (size_t)s->law.nattrs);
    }
    /* in float the engine holds the values rounded: read them back when next
     * asked, so the mirror always shows the state being integrated */
    if (s->host_dirty)
        s->host_valid = ORR_STORED_DOUBLE(s->cfg.precision);
    s->host_dirty = 0;
    s->attr_dirty = 0;
    if (!same)
        s->env.acc_valid = 0;
    return ORR_OK;
}

/* The environment the integrator steps in, current with the simulation's
 * engine and settings. */
static orr_integ_env *env_of(orr_sim *s)
{
    s->env.engine = s->engine;
    s->env.damping = s->cfg.damping;
    s->env.eta = s->cfg.eta;
    s->env.eta_start = s->cfg.eta_start;
    s->env.dt_min = s->cfg.dt_min;
    s->env.regularize = s->cfg.regularize;
    s->env.reg_r_close = s->cfg.reg_r_close;
    s->env.reg_gamma = s->cfg.reg_gamma;
    s->env.reg_encounter = s->cfg.reg_encounter;
    s->env.G = s->cfg.G;
    s->env.dt_max = s->cfg.dt;
    s->env.time = s->time - s->time_c;
    return &s->env;
}

/* Downloads the engine's state when the mirror is stale, after the
 * integrator brought every body to the simulation's time. */
/* The calls the ranks compare: the stepping calls, and any other (a call
 * of the script named by its text: orr_sim_agree_call). */
enum { CALL_STEP, CALL_ADVANCE, CALL_BLOCKS, CALL_OTHER };

static orr_status steps_agree(orr_sim *s, int call, long k, double t_end, const char *text,
                              volatile int *stop, orr_error *err);

static orr_status fetch(orr_sim *s, orr_error *err)
{
    if (s->host_valid)
        return ORR_OK;
    if (s->mid)
        return mid_interval(s, "reading the bodies", err);
    /* over several ranks a read is collective (the velocities gathered):
     * compared first, as a call, so that a read on one rank alone (a
     * buffer read after a step) fails every rank instead of waiting */
    orr_status ast = steps_agree(s, CALL_OTHER, 0, 0, "a read of the bodies after a step", NULL,
                                    err);
    if (ast)
        return ast;
    orr_status st = s->integ->synchronize ? s->integ->synchronize(s->istate, env_of(s), err)
                                          : ORR_OK;
    if (!st && s->dist)   /* each rank's velocities are current on its slice only */
        st = orr_dist_gather(s->dist, s->engine, ORR_ENGINE_VEL, err);
    if (!st)
        st = orr_engine_get_state(s->engine, s->pos, s->vel, err);
    if (st)
        return st;
    s->host_valid = 1;
    return ORR_OK;
}

/* Engine and mirror agree: for the diagnostics. */
static orr_status sync_state(orr_sim *s, orr_error *err)
{
    orr_status st = flush(s, err);
    return st ? st : fetch(s, err);
}

const char *orr_sim_exchange(const orr_sim *s, const char **note)
{
    if (note)
        *note = s->dist ? orr_dist_exchange_note(s->dist) : "one rank: no exchange";
    return s->dist ? orr_dist_exchange(s->dist) : "none";
}

orr_status orr_sim_sync(orr_sim *s, orr_error *err)
{
    return sync_state(s, err);
}

orr_status orr_sim_pos(orr_sim *s, double **pos, orr_error *err)
{
    orr_status st = fetch(s, err);
    if (st)
        return st;
    *pos = s->pos;
    return ORR_OK;
}

orr_status orr_sim_vel(orr_sim *s, double **vel, orr_error *err)
{
    orr_status st = fetch(s, err);
    if (st)
        return st;
    *vel = s->vel;
    return ORR_OK;
}

/* The integrator brings every body to the simulation's time, as fetch does
 * before it reads the engine, when the mirror is not current. */
static orr_status synchronized(orr_sim *s, orr_error *err)
{
    if (s->mid)
        return mid_interval(s, "reading the bodies", err);
    if (s->host_valid || !s->integ->synchronize)
        return ORR_OK;
    return s->integ->synchronize(s->istate, env_of(s), err);
}

orr_status orr_sim_deposit(orr_sim *s, const orr_deposit *d, double *density, orr_error *err)
{
    if (s->host_dirty)   /* the mirror is newer than the engine */
        return orr_deposit_host(d, s->cfg.n, s->pos, density, err);
    orr_status st = synchronized(s, err);
    return st ? st : orr_engine_deposit(s->engine, d, density, err);
}

orr_status orr_sim_copy_pos(orr_sim *s, double *pos, orr_error *err)
{
    if (s->host_valid) {
        memcpy(pos, s->pos, sizeof(double) * 4 * (size_t)s->cfg.n);
        return ORR_OK;
    }
    orr_status st = synchronized(s, err);
    return st ? st : orr_engine_get_state(s->engine, pos, NULL, err);
}

orr_status orr_sim_sample(orr_sim *s, long first, long stride, long count, float *out,
                          orr_error *err)
{
    const long n = s->cfg.n;
    if (first < 0 || stride < 1 || count < 0 || (count > 0 && first + (count - 1) * stride >= n))
        return orr_fail(err, ORR_ERR_ARG, "sample: bodies %ld + k %ld (k < %ld) beyond the %ld "
                        "bodies", first, stride, count, n);
    if (s->host_dirty) {   /* the mirror is newer than the engine (on every rank) */
        for (long k = 0; k < count; k++) {
            const double *p = s->pos + 4 * (first + k * stride), *v = s->vel + 3 * (first + k * stride);
            for (int a = 0; a < 3; a++)
                out[3 * k + a] = (float)p[a];
            out[3 * count + k] = (float)sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
            out[4 * count + k] = (float)p[3];
        }
        return ORR_OK;
    }
    orr_status st = synchronized(s, err);
    if (!st)
        st = orr_engine_sample(s->engine, first, stride, count, out, err);
    if (st || !s->dist || orr_dist_ranks(s->dist) == 1 || count == 0)
        return st;
    double *speed = malloc(sizeof(double) * (size_t)count);
    if (!speed)
        return orr_fail(err, ORR_ERR_NOMEM, "sample: out of memory");
    const orr_range mine = orr_dist_mine(s->dist);
    for (long k = 0; k < count; k++) {
        const long i = first + k * stride;
        speed[k] = i >= mine.first && i < mine.first + mine.count ? out[3 * count + k] : 0;
    }
    for (long k = 0; !st && k < count; k += INT_MAX / 2) {
        const long part = count - k < INT_MAX / 2 ? count - k : INT_MAX / 2;
        st = orr_comm_sum(orr_dist_comm(s->dist), speed + k, (int)part, err);
    }
    for (long k = 0; !st && k < count; k++)
        out[3 * count + k] = (float)speed[k];
    free(speed);
    return st;
}

/* The mirror becomes the authority where it is current: the bodies when
 * they were fetched since the last step (a stale mirror would roll the
 * bodies back to the time of its last read while the clock goes on, so
 * then only the attributes are taken), and the attributes. */
void orr_sim_touch(orr_sim *s)
{
    if (s->host_valid)
        s->host_dirty = 1;
    s->attr_dirty = 1;
    s->writes++;
}

void orr_sim_writes_agreed(orr_sim *s)
{
    s->writes = s->attr_writes = 0;
}

void orr_sim_touch_attr(orr_sim *s)
{
    s->attr_dirty = 1;
    s->attr_writes++;
}

/* ---- force law --------------------------------------------------------------- */

const orr_fieldset *orr_sim_fields(const orr_sim *s)
{
    return &s->fields;
}

const orr_law *orr_sim_law(const orr_sim *s)
{
    return &s->law;
}

orr_status orr_sim_attr(orr_sim *s, int a, double **values, orr_error *err)
{
    if (s->mid)
        return mid_interval(s, "attributes", err);
    if (a < 0 || a >= s->law.nattrs)
        return orr_fail(err, ORR_ERR_ARG, "force law '%s' has no attribute #%d", s->law.name, a);
    *values = s->attr + (size_t)a * (size_t)s->cfg.n;
    return ORR_OK;
}

/* Replaces the engine by one built for spec (same backend, device, N); the
 * state goes over through the host mirror. */
static orr_status switch_engine(orr_sim *s, const orr_kspec *spec, orr_error *err)
{
    double *pos, *vel;
    orr_status st = orr_sim_pos(s, &pos, err);
    if (!st)
        st = orr_sim_vel(s, &vel, err);
    orr_engine *e = NULL;
    if (!st)
        st = orr_engine_create(&e, s->cfg.backend, spec, ORR_VARIANT_TILED, s->cfg.n,
                               s->cfg.device, NULL, 0, err);
    if (st)
        return st;   /* the old engine and the state stay as they were */
    if (s->frame)
        orr_engine_set_frame(e, orr_frame_slots, s->frame);
    if (s->hermite_tuned && (st = orr_htune_apply(&s->hermite, e, err)) != ORR_OK) {
        orr_engine_destroy(e);
        return st;
    }
    orr_engine_destroy(s->engine);
    s->engine = e;
    s->host_dirty = 1;   /* the mirror is current; the new engine gets it */
    s->attr_dirty = 1;
    s->env.acc_valid = 0;
    return ORR_OK;
}

/* A frame in the fields as they are now, its centre where the current
 * one's is at the simulation's time. */
static orr_status renew_frame(orr_sim *s, orr_frame **out, orr_error *err)
{
    double R[3], V[3], fv[ORR_FIELD_MAX_RUNTIME];
    const double t = orr_sim_time(s);
    orr_status st = orr_frame_at(s->frame, t, R, V, NULL, err);
    orr_fieldset_runtime_values(&s->fields, fv);
    return st ? st : orr_frame_create(out, &s->fields, fv, s->cfg.G, t, R, V, s->cfg.frame_step,
                                      err);
}

int orr_sim_frame(orr_sim *s, double R[3], double V[3], orr_error *err)
{
    if (!s->frame)
        return 0;
    return orr_frame_at(s->frame, orr_sim_time(s), R, V, NULL, err) ? -1 : 1;
}

orr_status orr_sim_frame_nodes(orr_sim *s, double **nodes, long *count, orr_error *err)
{
    *nodes = NULL;
    *count = 0;
    return s->frame ? orr_frame_nodes(s->frame, nodes, count, err) : ORR_OK;
}

orr_status orr_sim_set_frame_nodes(orr_sim *s, const double *nodes, long count, orr_error *err)
{
    if (!s->frame)
        return orr_fail(err, ORR_ERR_ARG, "the simulation has no frame to restore");
    return orr_frame_set_nodes(s->frame, nodes, count, err);
}

/* A step that failed where the frame's centre could not be followed: the
 * frame's reason, not what its NaN did to the bodies. */
static orr_status frame_reason(orr_sim *s, orr_status st, orr_error *err)
{
    char why[512];
    if (st && s->frame && orr_frame_take_error(s->frame, why, sizeof why))
        return orr_fail(err, ORR_ERR_ARG, "%s", why);
    return st;
}

/* A field's param: runtime (the engine's runtime values) or baked (a new
 * engine, through the cache). */
static orr_status set_field_param(orr_sim *s, const char *name, double value, int *recompiled,
                                  orr_error *err)
{
    int f = -1, k = -1;
    if (orr_fieldset_find(&s->fields, name, &f, &k)) {
        if (f >= 0)
            return orr_field_set_param(&s->fields.f[f], strchr(name, '.') + 1, value, err);
        char list[512] = "";
        size_t used = 0;
        for (int q = 0; q < s->fields.n && used < sizeof list; q++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", q ? ", " : "",
                                     s->fields.f[q].name);
        return orr_fail(err, ORR_ERR_ARG, "no field called '%.*s' (fields: %s)",
                        (int)(strchr(name, '.') - name), name, s->fields.n ? list : "none");
    }
    orr_field_param *p = &s->fields.f[f].params[k];
    if (!ORR_STORED_DOUBLE(s->cfg.precision) && !(fabs(value) <= FLT_MAX))
        return orr_fail(err, ORR_ERR_ARG, "invalid param '%s' = %g: must be finite and at "
                        "most %.3g in magnitude in float", name, value, FLT_MAX);
    const double old = p->value;
    const int old_given = p->given;
    orr_status st = orr_field_set_param(&s->fields.f[f], p->name, value, err);
    if (st)
        return st;
    if (p->runtime) {
        double v[ORR_FIELD_MAX_RUNTIME];
        orr_fieldset_runtime_values(&s->fields, v);
        if (s->frame && (st = orr_frame_set_field_runtime(s->frame, v, orr_sim_time(s),
                                                           err)) != ORR_OK) {
            p->value = old;
            p->given = old_given;
            orr_fieldset_runtime_values(&s->fields, v);
            orr_frame_set_field_runtime(s->frame, v, orr_sim_time(s), NULL);
            return st;
        }
        orr_engine_set_field_runtime(s->engine, v);
        if (memcmp(&old, &value, sizeof old) != 0)
            s->env.acc_valid = 0;
        return ORR_OK;
    }
    if (old == value && signbit(old) == signbit(value))
        return ORR_OK;
    orr_frame *frame = NULL;   /* the centre's orbit goes on in the new fields */
    if (s->frame)
        st = renew_frame(s, &frame, err);
    orr_frame *was = s->frame;
    if (frame)
        s->frame = frame;
    orr_kspec spec = current_spec(s);
    if (!st)
        st = switch_engine(s, &spec, err);
    if (st) {
        if (frame) {
            s->frame = was;
            orr_frame_destroy(frame);
        }
        p->value = old;
        p->given = old_given;
        orr_error_context(err, "param '%s' = %g", name, value);
        return st;
    }
    if (frame)
        orr_frame_destroy(was);
    if (recompiled)
        *recompiled = 1;
    return ORR_OK;
}


orr_status orr_sim_set_param(orr_sim *s, const char *name, double value, int *recompiled,
                             orr_error *err)
{
    if (recompiled)
        *recompiled = 0;
    if (s->mid)
        return mid_interval(s, "setting a param", err);
    if (strchr(name, '.'))   /* "FIELD.PARAM": an external field's */
        return set_field_param(s, name, value, recompiled, err);
    int k = orr_law_param_index(&s->law, name);
    double old = k >= 0 ? s->law.params[k].value : 0;
    if (k >= 0 && !ORR_STORED_DOUBLE(s->cfg.precision) && !(fabs(value) <= FLT_MAX))
        return orr_fail(err, ORR_ERR_ARG, "invalid param '%s' = %g: must be finite and at "
                        "most %.3g in magnitude in float", name, value, FLT_MAX);
    orr_status st = orr_law_set_param(&s->law, name, value, err);
    if (st)
        return st;
    if (s->law.params[k].runtime) {
        double v[ORR_LAW_MAX_RUNTIME];
        orr_law_runtime_values(&s->law, v);
        orr_engine_set_runtime(s->engine, v);
        if (memcmp(&old, &value, sizeof old) != 0)   /* the same value changes nothing */
            s->env.acc_valid = 0;
        return ORR_OK;
    }
    if (old == value && signbit(old) == signbit(value))
        return ORR_OK;
    orr_kspec spec = current_spec(s);   /* s->law has the new value */
    st = switch_engine(s, &spec, err);
    if (st) {
        s->law.params[k].value = old;
        orr_error_context(err, "param '%s' = %g", name, value);
        return st;
    }
    if (recompiled)
        *recompiled = 1;
    return ORR_OK;
}

orr_status orr_sim_verify(orr_sim *s, long max_sample, double *max_rel_err, long *nsample,
                          orr_error *err)
{
    const long n = s->cfg.n;
    if (max_sample <= 0)
        max_sample = 1024;
    long ni = n < max_sample ? n : max_sample;
    orr_status st = sync_state(s, err);
    if (st)
        return st;
    long *idx = malloc(sizeof(long) * (size_t)ni);
    double *got = malloc(sizeof(double) * 3 * (size_t)ni);
    double *ref = malloc(sizeof(double) * 3 * (size_t)ni);
    orr_engine *cpu = NULL;
    if (!idx || !got || !ref)
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    for (long k = 0; !st && k < ni; k++)
        idx[k] = orr_sample_index(k, n, ni);
    orr_engine_set_time(s->engine, orr_sim_time(s), 0);   /* set again before any step */
    if (!st)
        st = orr_engine_accel_sample(s->engine, ni, idx, got, err);
    orr_kspec spec;
    const orr_kspec cur = current_spec(s);
    orr_kspec_reference(&cur.phys, &spec);
    if (!st)
        st = orr_engine_create(&cpu, ORR_BACKEND_CPU, &spec, ORR_VARIANT_TILED, n, 0, NULL, 0, err);
    if (!st && s->frame)
        orr_engine_set_frame(cpu, orr_frame_slots, s->frame);
    if (!st) {
        double v[ORR_LAW_MAX_RUNTIME], fv[ORR_FIELD_MAX_RUNTIME];
        orr_law_runtime_values(&s->law, v);
        orr_engine_set_runtime(cpu, v);
        orr_fieldset_runtime_values(&s->fields, fv);
        orr_engine_set_field_runtime(cpu, fv);
        orr_engine_set_time(cpu, orr_sim_time(s), 0);   /* the fields', as the backend's */
        st = orr_engine_set_state(cpu, s->pos, NULL, err);
    }
    if (!st && s->attr)
        st = orr_engine_set_attr(cpu, s->attr, err);
    if (!st)
        st = orr_engine_accel_sample(cpu, ni, idx, ref, err);
    if (!st) {
        *max_rel_err = orr_accel_err(got, ref, ni);
        if (nsample)
            *nsample = ni;
    } else {
        orr_error_context(err, "verifying against the CPU backend in double");
    }
    orr_engine_destroy(cpu);
    free(idx);
    free(got);
    free(ref);
    return st;
}

/* Block steps: dt_max from dt_min (a checkpoint must restore) and from the
 * shortest step a double allows. */
static orr_status check_dt_max(const orr_integrator *integ, double dt, double dt_min,
                               orr_error *err)
{
    if (!integ->blocks)
        return ORR_OK;
    if (dt < dt_min)
        return orr_fail(err, ORR_ERR_ARG, "dt_max must be at least dt_min = %g (got %g)", dt_min,
                        dt);
    if (dt < ORR_BLOCK_MIN_STEP)
        return orr_fail(err, ORR_ERR_ARG, "dt_max = %g is too short for block steps: at least "
                        "%.3g (the Hermite correction divides by a step's cube, which must stay "
                        "a normal double)", dt, ORR_BLOCK_MIN_STEP);
    return ORR_OK;
}

orr_status orr_sim_set_dt(orr_sim *s, double dt, orr_error *err)
{
    orr_status st = s->mid ? mid_interval(s, "setting dt", err) : check_dt(dt, err);
    if (!st)
        st = check_dt_max(s->integ, dt, s->cfg.dt_min, err);
    if (st)
        return st;
    s->cfg.dt = dt;
    return ORR_OK;
}

/* For restarts (snapshot.c): the clock and step count of a checkpoint. */
orr_status orr_sim_set_clock(orr_sim *s, double time, long steps, orr_error *err)
{
    if (!isfinite(time) || steps < 0)
        return orr_fail(err, ORR_ERR_ARG,
                        "clock must be a finite time and a step count >= 0 (got %g, %ld)", time,
                        steps);
    if (s->mid)
        return mid_interval(s, "setting the clock", err);
    s->time = time;
    s->time_c = 0;
    s->steps = steps;
    return ORR_OK;
}

double orr_sim_time_tolerance(double dt, double t, double t_end)
{
    const double res = 4 * DBL_EPSILON * fmax(fabs(t), fabs(t_end));
    return fmax(1e-12 * dt, res);
}

double orr_sim_time_compensation(const orr_sim *s)
{
    return s->time_c;
}

void orr_sim_set_time_compensation(orr_sim *s, double c)
{
    s->time_c = isfinite(c) ? c : 0;
}

/* For restarts: the tuning fields of spec, the rest (law, precision,
 * softening, G, box) staying the simulation's own. */
orr_status orr_sim_set_kspec(orr_sim *s, const orr_kspec *spec, const char *source,
                             orr_error *err)
{
    if (s->mid)
        return mid_interval(s, "switching kernels", err);
    orr_kspec k = current_spec(s);
    const orr_launch *a = &k.launch, *b = &spec->launch;
    const int same = a->block == b->block && a->unroll == b->unroll && a->split == b->split &&
                     a->ipt == b->ipt && a->prefetch == b->prefetch && a->ftz == b->ftz &&
                     a->newton == b->newton &&
                     a->threads == b->threads && a->ranges == b->ranges;
    orr_status st = ORR_OK;
    if (!same) {
        k.launch = spec->launch;
        st = switch_engine(s, &k, err);
    }
    if (s->dist)
        st = orr_comm_all_ok(orr_dist_comm(s->dist), st, err, "switch its kernels");
    if (st)
        return st;
    if (!same) {
        snprintf(s->kspec_source, sizeof s->kspec_source, "%s", source);
        s->kspec_ms = -1;
    }
    return gather_ranks(s, err);
}

/* ---- stepping -------------------------------------------------------------- */

const orr_integrator *orr_sim_integrator(const orr_sim *s)
{
    return s->integ;
}

static orr_status check_field(const orr_sim *s, int k, orr_error *err)
{
    if (k < 0 || k >= s->integ->nfields || !s->integ->get_field || !s->integ->set_field)
        return orr_fail(err, ORR_ERR_ARG, "integrator '%s' has no checkpoint field %d",
                        s->integ->name, k);
    return ORR_OK;
}

orr_status orr_sim_integ_field(orr_sim *s, int k, double *out, orr_error *err)
{
    orr_status st = check_field(s, k, err);
    if (!st)
        st = sync_state(s, err);   /* the fields of the synchronised state */
    return st ? st : s->integ->get_field(s->istate, k, out, err);
}

orr_status orr_sim_set_integ_field(orr_sim *s, int k, int legacy, const double *in,
                                   orr_error *err)
{
    orr_status st = s->mid ? mid_interval(s, "setting the integrator's state", err)
                           : check_field(s, k, err);
    if (!st && legacy && !s->integ->fields[k].legacy)
        st = orr_fail(err, ORR_ERR_ARG, "integrator '%s' has no older form of field '%s'",
                      s->integ->name, s->integ->fields[k].name);
    if (!st)   /* what the engine holds is the mirror's (the integrator sees them together) */
        st = flush(s, err);
    if (st)
        return st;
    s->env.acc_valid = 0;
    return s->integ->set_field(s->istate, env_of(s), k, legacy, in, err);
}

int orr_sim_integ_current(orr_sim *s)
{
    return !s->host_dirty && !s->mid &&
           (!s->integ->current || s->integ->current(s->istate, env_of(s)));
}

/* The clock on by h (with Kahan compensation), and the step count. */
static void clock_add(orr_sim *s, double h)
{
    double y = h - s->time_c, t = s->time + y;
    s->time_c = (t - s->time) - y;
    s->time = t;
    s->steps++;
}

/* One step of h: the integrator's, then the clock.  The damping (a factor
 * per step of dt) is damping^(h / dt) on a shortened step, so it stays the
 * same per unit of time. */
static orr_status one_step(orr_sim *s, double h, orr_error *err)
{
    orr_integ_env *env = env_of(s);
    env->dt = h;
    {   /* the clock after the step, as env_of will give it then (clock_add) */
        const double y = h - s->time_c, t = s->time + y, c = (t - s->time) - y;
        env->time_end = t - c;
    }
    if (h != s->cfg.dt && s->cfg.damping != 1)
        env->damping = pow(s->cfg.damping, h / s->cfg.dt);
    s->host_valid = 0;
    orr_engine_set_step(s->engine, s->steps + 1);
    orr_status st = s->integ->step(s->istate, env, err);
    if (st) {
        env->acc_valid = 0;
        return st;
    }
    clock_add(s, h);
    return ORR_OK;
}

/* After steps from (steps0, t0) of h each (the last ends at t_end at the
 * latest): the first body whose acceleration or position went non-finite,
 * on any rank, as an error naming it, the step and the time.  One small
 * read of the engine's flag per call, not per step. */
static orr_status check_blowup(orr_sim *s, long steps0, double t0, double h, double t_end,
                               orr_error *err)
{
    long step = -1, body = -1;
    char why[512];
    if (s->frame && orr_frame_take_error(s->frame, why, sizeof why))
        return orr_fail(err, ORR_ERR_ARG, "%s", why);
    orr_status st = orr_engine_blowup(s->engine, &step, &body, err);
    if (!st && s->dist) {   /* the lowest step, then body, over the ranks */
        double key[2] = {step < 0 ? -INFINITY : -(double)step, body < 0 ? -INFINITY : -(double)body};
        double k0 = key[0];
        if ((st = orr_comm_max(orr_dist_comm(s->dist), key, 1, err)) == ORR_OK) {
            key[1] = k0 == key[0] ? key[1] : -INFINITY;   /* only ranks at that step */
            st = orr_comm_max(orr_dist_comm(s->dist), key + 1, 1, err);
        }
        step = isfinite(key[0]) ? (long)-key[0] : -1;
        body = isfinite(key[1]) ? (long)-key[1] : -1;
    }
    if (st || step < 0)
        return st;
    double t = t0 + (double)(step - steps0) * h;
    t = t > t_end ? t_end : t;
    s->env.acc_valid = 0;
    char where[64];
    orr_dist_owner_note(where, sizeof where, s->cfg.n, body, s->dist ? orr_dist_ranks(s->dist) : 1);
    orr_fail(err, ORR_ERR_ARG, "body %ld%s has a non-finite acceleration or position at "
             "step %ld (t = %.9g): the run is stopped (a force law that divides by zero, "
             "bodies on one spot at softening 0, %stoo long a step)", body + 1, where, step, t,
             s->fields.n ? "an external field singular where a body is, " : "or ");
    err->shared = s->dist != NULL;   /* every rank found it: said once */
    return ORR_ERR_ARG;
}

/* The rest of an interval that block steps left under way: the clock goes
 * to its end. */
static orr_status end_interval(orr_sim *s, orr_error *err)
{
    if (!s->mid)
        return ORR_OK;
    s->mid = 0;
    return one_step(s, s->mid_h, err);
}


/* Over several ranks, at the start of every stepping call and of every
 * other collective call (orr_sim_agree_call, a read of the bodies in
 * fetch; every rank makes the same calls, so every rank reaches it at the
 * same point): the simulation, the call (text: its words, hashed), what
 * shapes the steps, set on each rank for itself (dt, a param, the clock of
 * a restore) and the writes since the last comparison, compared with rank
 * 0's; the first difference fails every rank alike (err->shared), naming
 * it and the ranks.  One all-gather of a few doubles per call, not per
 * step.  call is CALL_*, k the steps or block steps asked (advance: at
 * most), t_end advance's end. */
static orr_status steps_compare(orr_sim *s, int call, long k, double t_end, const char *text,
                                 int stop_mine, int *writes_apart, int *stop_any, int *stop_all,
                                 orr_error *err);

/* Whether the simulation runs over several ranks: a stop (Ctrl-C) is then
 * taken only where the ranks agree on it (steps_agree), never by one
 * rank between two steps, which would leave the others waiting for it in
 * the next step's exchange. */
static int over_ranks(const orr_sim *s)
{
    return s->dist && orr_dist_ranks(s->dist) > 1;
}

/* The ranks compare the call (text for CALL_OTHER) and its stop flag (a
 * stepping call's, or NULL): set on any rank, every rank stops here
 * (ORR_ERR_INTERRUPTED), at the same step. */
static orr_status steps_agree(orr_sim *s, int call, long k, double t_end, const char *text,
                              volatile int *stop, orr_error *err)
{
    if (!over_ranks(s))
        return ORR_OK;
    int apart = 0, stop_any = 0, stop_all = 1;
    orr_status st = steps_compare(s, call, k, t_end, text, stop && *stop, &apart, &stop_any,
                                  &stop_all, err);
    /* writes compared, counted afresh; where the ranks disagreed on them,
     * every rank takes rank 0's mirror at the next upload (reads are
     * collective, so the mirrors are current on every rank or on none),
     * so that no rank uploads alone and the next call finds them alike */
    if (apart) {   /* now, so that a read before the upload shows them too */
        s->host_dirty = s->host_valid;
        s->attr_dirty = 1;
        orr_error scratch = {0};
        if (share_mirror(s, &scratch) && !st)
            st = orr_fail(err, scratch.code, "%s", scratch.msg);
        orr_error_clear(&scratch);
    }
    s->writes = s->attr_writes = 0;
    if (!st && stop_any) {   /* a stepping call's: a rank's stop flag, every rank's stop */
        s->stop_all = stop_all;
        st = orr_fail(err, ORR_ERR_INTERRUPTED, "interrupted");
        if (err)
            err->shared = 1;
    }
    return st;
}

static orr_status steps_compare(orr_sim *s, int call, long k, double t_end, const char *text,
                                int stop_mine, int *writes_apart, int *stop_any, int *stop_all,
                                orr_error *err)
{
    orr_comm *comm = orr_dist_comm(s->dist);
    enum { A_CALL, A_K, A_TEND, A_TEXT, A_TIME, A_TIMEC, A_STEPS, A_MID, A_MIDH, A_DT, A_DAMP,
           A_ETA, A_ETA0, A_DTMIN, A_BODIES, A_ATTRS, A_SIM, A_STOP, A_PARAM,
           A_COUNT = A_PARAM + ORR_LAW_MAX_PARAMS };
    /* a call's text by its hash (53 bits: a double holds them exactly) */
    const double hash = text ? (double)(XXH3_64bits(text, strlen(text)) >> 11) : 0;
    double mine[A_COUNT] = {call, (double)k, call == CALL_ADVANCE ? t_end : 0, hash, s->time,
                            s->time_c, (double)s->steps, s->mid, s->mid ? s->mid_h : 0, s->cfg.dt,
                            s->cfg.damping, s->cfg.eta, s->cfg.eta_start, s->cfg.dt_min,
                            (double)s->writes, (double)s->attr_writes, (double)s->serial,
                            stop_mine ? 1 : 0};
    for (int p = 0; p < s->law.nparams && p < ORR_LAW_MAX_PARAMS; p++)
        mine[A_PARAM + p] = s->law.params[p].value;
    const int ranks = orr_comm_size(comm);
    orr_status st = ORR_OK;
    /* the room at the first call, with no collective of its own: a rank
     * whose first call on this simulation is another rank's call on
     * another simulation still meets it in the all-gather below (a few
     * kilobytes; out of memory here, this rank stops the job) */
    if (!s->agreed && !(s->agreed = malloc(sizeof mine * (size_t)ranks)))
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    double *all = s->agreed;
    st = orr_comm_allgather(comm, mine, all, sizeof mine, err);
    int f = -1;   /* the first field that differs from rank 0's on some rank */
    for (int r = 0; !st && r < ranks; r++) {   /* a stop: not a difference */
        *stop_any = *stop_any || all[(size_t)r * A_COUNT + A_STOP] != 0;
        *stop_all = *stop_all && all[(size_t)r * A_COUNT + A_STOP] != 0;
    }
    for (int a = 0; !st && f < 0 && a < A_COUNT; a++)
        for (int r = 1; f < 0 && r < ranks && a != A_STOP; r++) {
            const double x = all[a], y = all[(size_t)r * A_COUNT + a];
            if (memcmp(&x, &y, sizeof x) != 0 && !(x != x && y != y))
                f = a;
        }
    for (int r = 1; !st && r < ranks; r++)   /* whatever differs first */
        *writes_apart = *writes_apart || all[A_BODIES] != all[(size_t)r * A_COUNT + A_BODIES] ||
                        all[A_ATTRS] != all[(size_t)r * A_COUNT + A_ATTRS];
    for (int r = 1; !st && r < ranks && f >= 0; r++)   /* another simulation: said first */
        if (all[A_SIM] != all[(size_t)r * A_COUNT + A_SIM])
            f = A_SIM;
    if (st || f < 0)
        return st;
    /* every rank found the same field: its value on each rank, in words,
     * compared once more to name the ranks of each */
    static const char *const what[A_PARAM] = {
        "the steps asked", "the steps asked", "the steps asked", "the call", "the clock",
        "the clock's rounding compensation", "the clock", "the block steps under way",
        "the block steps under way", "dt", "damping", "eta", "eta_start", "dt_min",
        "the bodies (written since the ranks last compared?)",
        ("the attributes (written since the ranks last compared?)"), "the simulation",
        "a stop"};
    const char *hint = "every rank must set it alike: was it set on some ranks only?";
    char words[ORR_COMM_CHOICE], a[32], name[ORR_COMM_CHOICE];
    const char *about = f < A_PARAM ? what[f] : name;
    if (f >= A_PARAM)
        snprintf(name, sizeof name, "param '%s'", s->law.params[f - A_PARAM].name);
    /* a call of the script and a stepping call, or two calls apart: each in words */
    int other = call == CALL_OTHER;
    for (int r = 0; r < ranks; r++)
        other = other || all[(size_t)r * A_COUNT + A_CALL] == CALL_OTHER;
    if (f != A_SIM && f <= A_TEXT && other) {
        char own[ORR_COMM_CHOICE];
        if (!text)
            snprintf(own, sizeof own, "sim:%s", call == CALL_ADVANCE ? "advance" : "step");
        st = orr_comm_same_text(comm, text ? text : own, "the call",
                                "every rank must make the same calls with the same arguments",
                                err);
        if (!st)   /* texts alike, hashes apart: not seen; said in general */
            st = orr_fail(err, ORR_ERR_ARG, "the ranks disagree on the call (every rank must "
                          "make the same calls with the same arguments)");
        if (err)
            err->shared = 1;
        return st;
    }
    switch (f) {
    case A_CALL: case A_K: case A_TEND:
        if (call == CALL_ADVANCE && k == LONG_MAX)
            snprintf(words, sizeof words, "advance to t = %s", orr_shortest(a, sizeof a, t_end));
        else if (call == CALL_ADVANCE)
            snprintf(words, sizeof words, "advance to t = %s, at most %ld steps",
                     orr_shortest(a, sizeof a, t_end), k);
        else
            snprintf(words, sizeof words, "%ld %sstep%s", k, call == CALL_BLOCKS ? "block " : "",
                     k == 1 ? "" : "s");
        hint = "every rank must make the same calls with the same arguments";
        break;
    case A_TIME: case A_STEPS:
        snprintf(words, sizeof words, "t = %s, step %ld",
                 orr_shortest(a, sizeof a, s->time - s->time_c), s->steps);
        hint = "every rank must restore the same checkpoint and make the same calls";
        break;
    case A_TIMEC:
        orr_shortest(words, sizeof words, s->time_c);
        hint = "every rank must restore the same checkpoint and make the same calls";
        break;
    case A_MID: case A_MIDH:
        if (s->mid)
            snprintf(words, sizeof words, "an interval to t = %s",
                     orr_shortest(a, sizeof a, s->time + s->mid_h));
        else
            snprintf(words, sizeof words, "none");
        hint = "every rank must make the same calls";
        break;
    case A_SIM:
        snprintf(words, sizeof words, "simulation %ld (in the order made)", s->serial);
        hint = "every rank must make the same calls on the same simulations";
        break;
    case A_BODIES: case A_ATTRS: {
        const long w = f == A_BODIES ? s->writes : s->attr_writes;
        if (w)
            snprintf(words, sizeof words, "written (%ld change%s)", w, w == 1 ? "" : "s");
        else
            snprintf(words, sizeof words, "not written");
        hint = "every rank must make the same writes; rank 0's values are taken";
        break;
    }
    default:
        orr_shortest(words, sizeof words, mine[f]);
        if (f == A_DT && s->integ->blocks)
            about = "dt_max";
        break;
    }
    st = orr_comm_same(comm, words, about, hint, err);
    if (!st) {   /* values apart that read the same */
        st = orr_fail(err, ORR_ERR_ARG, "the ranks disagree on %s (%s)", about, hint);
        if (err)
            err->shared = 1;
    }
    return st;
}

int orr_sim_stop_everywhere(const orr_sim *s)
{
    return s->stop_all;
}

orr_status orr_sim_agree_call(orr_sim *s, const char *call, orr_error *err)
{
    return steps_agree(s, CALL_OTHER, 0, 0, call, NULL, err);
}

orr_status orr_sim_step(orr_sim *s, long k, volatile int *stop, orr_error *err)
{
    orr_status st = steps_agree(s, CALL_STEP, k, 0, NULL, stop, err);
    if (st)
        return st;
    if (k < 0)
        return orr_fail(err, ORR_ERR_ARG, "step count must be >= 0 (got %ld)", k);
    st = s->mid ? ORR_OK : flush(s, err);
    if (st)
        return st;
    const long steps0 = s->steps;
    const double t0 = s->time;
    for (long done = 0; !st && done < k; done++) {
        if (stop && *stop && !over_ranks(s))
            st = orr_fail(err, ORR_ERR_INTERRUPTED, "interrupted after %ld steps", done);
        else if (s->mid)   /* the first one ends the interval under way */
            st = end_interval(s, err);
        else
            st = one_step(s, s->cfg.dt, err);
    }
    return st || k == 0 ? frame_reason(s, st, err)
                        : check_blowup(s, steps0, t0, s->cfg.dt, INFINITY, err);
}

orr_status orr_sim_advance_steps(orr_sim *s, double t_end, long max_steps, long *taken,
                                 volatile int *stop, orr_error *err)
{
    if (taken)
        *taken = 0;
    orr_status ast = steps_agree(s, CALL_ADVANCE, max_steps, t_end, NULL, stop, err);
    if (ast)
        return ast;
    const double h = s->cfg.dt, now = orr_sim_time(s);
    /* a time a rounding before the clock is the clock's own (advance to
     * where a run with until = t ended: no step) */
    if (!isfinite(t_end) || (t_end < now && now - t_end > orr_sim_time_tolerance(h, now, t_end)))
        return orr_fail(err, ORR_ERR_ARG,
                        "time to advance to must be finite and not before the current time %.17g "
                        "(got %.17g)", now, t_end);
    if (max_steps < 0)
        return orr_fail(err, ORR_ERR_ARG, "step count must be >= 0 (got %ld)", max_steps);
    /* block steps under way: their interval ends first */
    const double t0 = s->time, end = orr_sim_sync_time(s);
    const long steps0 = s->steps;
    if (s->mid && end - t_end > orr_sim_time_tolerance(h, end, t_end))
        return orr_fail(err, ORR_ERR_ARG, "time to advance to (%.17g) is inside the interval "
                        "of dt_max that block steps are in, from %.17g to %.17g: the bodies "
                        "are synchronised only at its end", t_end, s->time - s->time_c, end);
    orr_status st = s->mid ? ORR_OK : flush(s, err);
    long done = 0;
    while (!st && done < max_steps) {
        if (stop && *stop && !over_ranks(s)) {
            st = orr_fail(err, ORR_ERR_INTERRUPTED, "interrupted after %ld steps", done);
            break;
        }
        if (s->mid) {   /* the interval under way, as one step */
            st = end_interval(s, err);
        } else {
            const double left = t_end - (s->time - s->time_c);
            /* done when within a relative 1e-12 of the step or within the
             * clock's resolution at t_end (a few spacings of doubles there:
             * t_end and the clock each carry a rounding); a last step that
             * would overshoot is shortened to land on t_end */
            if (!(left > orr_sim_time_tolerance(h, s->time, t_end)))
                break;
            st = one_step(s, left < h ? left : h, err);
        }
        done += !st;
    }
    if (taken)
        *taken = done;
    return st ? frame_reason(s, st, err) : check_blowup(s, steps0, t0, h, t_end, err);
}

orr_status orr_sim_advance(orr_sim *s, double t_end, volatile int *stop, orr_error *err)
{
    return orr_sim_advance_steps(s, t_end, LONG_MAX, NULL, stop, err);
}

orr_status orr_sim_block_steps(orr_sim *s, long k, volatile int *stop, orr_error *err)
{
    orr_status ast = steps_agree(s, CALL_BLOCKS, k, 0, NULL, stop, err);
    if (ast)
        return ast;
    if (!s->integ->block)
        return orr_fail(err, ORR_ERR_ARG, "integrator '%s' has fixed steps: block steps are "
                        "hermite's", s->integ->name);
    if (k < 0)
        return orr_fail(err, ORR_ERR_ARG, "step count must be >= 0 (got %ld)", k);
    orr_status st = s->mid ? ORR_OK : flush(s, err);
    const long steps0 = s->steps;
    const double t0 = s->time;
    for (long done = 0; !st && done < k; done++) {
        if (stop && *stop && !over_ranks(s)) {
            st = orr_fail(err, ORR_ERR_INTERRUPTED, "interrupted after %ld block steps", done);
            break;
        }
        orr_integ_env *env = env_of(s);
        if (!s->mid) {   /* a new interval */
            s->mid_h = s->cfg.dt;
            orr_engine_set_step(s->engine, s->steps + 1);
        }
        env->dt = s->mid_h;
        s->host_valid = 0;
        int synced = 0;
        double at = 0;
        st = s->integ->block(s->istate, env, &synced, &at, err);
        if (st) {   /* the interval is given up: the state is that of its start */
            s->mid = 0;
            env->acc_valid = 0;
            break;
        }
        s->mid = !synced;
        s->mid_at = at;
        if (synced)   /* the clock to the interval's end */
            clock_add(s, s->mid_h);
    }
    return st || k == 0 ? frame_reason(s, st, err)
                        : check_blowup(s, steps0, t0, s->cfg.dt, INFINITY, err);
}

/* ---- diagnostics ----------------------------------------------------------- */

orr_status orr_sim_energy_parts(orr_sim *s, double *kinetic, double *pair, double *field,
                                orr_error *err)
{
    if (!orr_law_has_potential(&s->law))
        return orr_fail(err, ORR_ERR_ARG,
                        "force law '%s' has no potential snippet: the energy is not defined",
                        s->law.name);
    for (int f = 0; f < s->fields.n; f++)
        if (!orr_field_has_potential(&s->fields.f[f]))
            return orr_fail(err, ORR_ERR_ARG, "field '%s' (%s %s) has no potential snippet: "
                            "the energy is not defined", s->fields.f[f].name,
                            s->fields.f[f].builtin ? "from" : "defined at",
                            s->fields.f[f].origin);
    orr_status st = sync_state(s, err);
    if (st)
        return st;
    double k = 0, u[2] = {0, 0}, V[3] = {0, 0, 0};
    if (s->frame && (st = orr_frame_at(s->frame, orr_sim_time(s), NULL, V, NULL, err)) != ORR_OK)
        return st;
    /* in a frame, the galaxy's: the bodies' velocities plus the centre's */
    for (long i = 0; i < s->cfg.n; i++) {
        const double *w = s->vel + 3 * i, v[3] = {w[0] + V[0], w[1] + V[1], w[2] + V[2]};
        k += 0.5 * s->pos[4 * i + 3] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    }
    /* the fields at the simulation's time (set again before any step) */
    orr_engine_set_time(s->engine, orr_sim_time(s), 0);
    if (s->dist) {   /* each rank's share, summed */
        st = orr_engine_potential_range(s->engine, s->env.targets, &u[0], err);
        if (!st)
            st = orr_engine_field_potential_range(s->engine, s->env.targets, &u[1], err);
        if (!st)
            st = orr_comm_sum(orr_dist_comm(s->dist), u, 2, err);
    } else {
        st = orr_engine_potential(s->engine, &u[0], err);
        if (!st)
            st = orr_engine_field_potential_range(s->engine, orr_engine_all(s->engine), &u[1],
                                                  err);
    }
    if (st)
        return st;
    if (kinetic)
        *kinetic = k;
    if (pair)
        *pair = u[0];
    if (field)
        *field = u[1];
    return ORR_OK;
}

orr_status orr_sim_energy(orr_sim *s, double *kinetic, double *potential, orr_error *err)
{
    double pair = 0, field = 0;
    orr_status st = orr_sim_energy_parts(s, kinetic, &pair, &field, err);
    if (!st && potential)
        *potential = pair + field;
    return st;
}

orr_status orr_sim_momentum(orr_sim *s, double p[3], orr_error *err)
{
    orr_status st = sync_state(s, err);
    if (st)
        return st;
    double q[3] = {0, 0, 0};
    for (long i = 0; i < s->cfg.n; i++)
        for (int k = 0; k < 3; k++)
            q[k] += s->pos[4 * i + 3] * s->vel[3 * i + k];
    memcpy(p, q, sizeof q);
    return ORR_OK;
}

orr_status orr_sim_angular_momentum(orr_sim *s, double l[3], orr_error *err)
{
    orr_status st = sync_state(s, err);
    if (st)
        return st;
    double q[3] = {0, 0, 0};
    for (long i = 0; i < s->cfg.n; i++) {
        const double *x = s->pos + 4 * i, *v = s->vel + 3 * i, m = x[3];
        q[0] += m * (x[1] * v[2] - x[2] * v[1]);
        q[1] += m * (x[2] * v[0] - x[0] * v[2]);
        q[2] += m * (x[0] * v[1] - x[1] * v[0]);
    }
    memcpy(l, q, sizeof q);
    return ORR_OK;
}

orr_status orr_sim_center_of_mass(orr_sim *s, double x[3], double v[3], double *mass,
                                  orr_error *err)
{
    orr_status st = sync_state(s, err);
    if (st)
        return st;
    double mt = 0, cx[3] = {0, 0, 0}, cv[3] = {0, 0, 0};
    for (long i = 0; i < s->cfg.n; i++) {
        double m = s->pos[4 * i + 3];
        mt += m;
        for (int k = 0; k < 3; k++) {
            cx[k] += m * s->pos[4 * i + k];
            cv[k] += m * s->vel[3 * i + k];
        }
    }
    for (int k = 0; k < 3; k++) {
        if (x)
            x[k] = mt != 0 ? cx[k] / mt : 0;
        if (v)
            v[k] = mt != 0 ? cv[k] / mt : 0;
    }
    if (mass)
        *mass = mt;
    return ORR_OK;
}

orr_status orr_sim_virial_ratio(orr_sim *s, double *q, orr_error *err)
{
    double k = 0, u = 0;
    orr_status st = orr_sim_energy(s, &k, &u, err);
    if (st)
        return st;
    if (u == 0)
        return orr_fail(err, ORR_ERR_ARG, "virial ratio undefined: potential energy is 0");
    *q = k / fabs(u);
    return ORR_OK;
}

/* ---- output ---------------------------------------------------------------- */

orr_status orr_sim_write_once(orr_sim *s, orr_status st, const char *path, orr_sim_writer write,
                              void *ctx, orr_error *err)
{
    orr_comm *c = s->dist ? orr_dist_comm(s->dist) : NULL;
    if (!c || orr_comm_size(c) == 1) {
        if (!st)
            st = sync_state(s, err);
        return st ? st : write(s, ctx, err);
    }
    /* the exchange is collective: every rank takes part, whatever it found */
    orr_error scratch = {0};
    orr_status sst = sync_state(s, st ? &scratch : err);
    orr_error_clear(&scratch);
    st = orr_comm_agree(c, st ? st : sst, 1, err);
    if (!st)
        st = orr_comm_same_text(c, path, "the file to write", "rank 0 writes it for every rank: "
                                "name the same file on every rank", err);
    if (st)
        return st;
    if (orr_comm_rank(c) == 0)
        st = write(s, ctx, err);
    return orr_comm_agree(c, st, 0, err);   /* rank 0's outcome, every rank's */
}

