/* htune: the Hermite integrator's tuner of the force + jerk kernel's
 * launch per bucket of active bodies (see htune.h). */
#include "htune.h"
#include "trial.h"
#include "kcache.h"
#include "tune.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HT_SAMPLE 256          /* active bodies verified per candidate */
#define HT_REPS 5              /* timed runs per candidate (median) */
#define HT_RUN_MS 2.0          /* one run lasts at least this long */
#define HT_MARGIN 0.02         /* a winner beats the default by this, timed alternately */
#define HT_BUDGET_S 2.0

static const int tiles[] = {64, 128, 256};
static const int per_sms[] = {2, 4, 8, 16, 32, 64};
#define NCAND ((int)(sizeof tiles / sizeof tiles[0] * sizeof per_sms / sizeof per_sms[0]))

typedef struct {
    const orr_htune_options *o;
    orr_htune_result *r;
    orr_kspec spec;
    long n, n_bucket;       /* bodies, and the next power of two >= n */
    int sms;
    double tol;
    orr_engine *gpu;        /* the candidates' engine (launches set per candidate) */
    orr_engine *cpu;        /* the reference: the CPU backend in double */
    long *act, *sample;     /* the active bodies; the sampled ones among them */
    long *sample_at;        /* where each sampled body is in act */
    double *ref, *got;      /* 6 HT_SAMPLE each: acc, jerk */
    double *acc, *jerk;     /* 3 n each: a candidate's whole answer */
    double spent_s, budget_s;
    double last_ms;         /* the last bucket's default, ms per pass (0: none yet) */
    long last_active;       /* and its active count */
} htuner;

/* The kernel identity of bucket k: the force tuner's and the bucket. */
static orr_status bucket_key(const char *kernel, int k, char out[33], orr_error *err)
{
    orr_kkey_builder kb;
    orr_status st = orr_kkey_begin(&kb, err);
    if (st)
        return st;
    char b[32];
    snprintf(b, sizeof b, "active %ld", orr_hbucket_top(k));
    orr_kkey_add_str(&kb, "orrery-htune-3");
    orr_kkey_add_str(&kb, kernel);
    orr_kkey_add_str(&kb, b);
    orr_kkey key;
    orr_kkey_finish(&kb, &key);
    memcpy(out, key.hex, 33);
    return ORR_OK;
}

/* One timed run of about HT_RUN_MS: ms per pass with launch l. */
static orr_status timed_run(htuner *t, int k, long active, orr_hlaunch l, int passes, double *ms,
                            orr_error *err)
{
    orr_status st = orr_engine_set_hlaunch(t->gpu, k, l, err);
    if (!st)
        st = orr_engine_time_accel_jerk(t->gpu, active, t->act, passes, ms, err);
    return st;
}

static int passes_for(double ms)
{
    return ms >= HT_RUN_MS ? 1 : (int)ceil(HT_RUN_MS / (ms > 1e-4 ? ms : 1e-4));
}

/* Verifies and times one candidate of bucket k into tr. */
static orr_status measure(htuner *t, int k, long active, long ns, orr_htune_trial *tr,
                          orr_error *err)
{
    orr_error e = {0};
    double t0 = orr_now_s();
    orr_status st = orr_engine_set_hlaunch(t->gpu, k, tr->launch, &e);
    if (!st)   /* the verification is also the warm-up */
        st = orr_engine_accel_jerk(t->gpu, active, t->act, t->acc, t->jerk, &e);
    if (!st) {
        for (long s = 0; s < ns; s++)
            for (int d = 0; d < 3; d++) {
                t->got[3 * s + d] = t->acc[3 * t->sample_at[s] + d];
                t->got[3 * (ns + s) + d] = t->jerk[3 * t->sample_at[s] + d];
            }
        if (t->o->tamper)
            t->o->tamper(tr, t->got, t->got + 3 * ns, ns, t->o->ctx);
        const double ea = orr_accel_err(t->got, t->ref, ns),
                     ej = orr_accel_err(t->got + 3 * ns, t->ref + 3 * ns, ns);
        tr->max_rel_err = isnan(ea) || isnan(ej) ? NAN : ea > ej ? ea : ej;
        if (!(tr->max_rel_err <= t->tol)) {
            snprintf(tr->why, sizeof tr->why, "max rel err %.1e > %.0e (acceleration %.1e, "
                     "jerk %.1e)", tr->max_rel_err, t->tol, ea, ej);
            st = ORR_ERR_ARG;
        }
    }
    double ms0 = 0, runs[HT_REPS];
    if (!st)
        st = timed_run(t, k, active, tr->launch, 1, &ms0, &e);
    const int passes = st ? 1 : passes_for(ms0);
    for (int r = 0; !st && r < HT_REPS; r++)
        st = timed_run(t, k, active, tr->launch, passes, &runs[r], &e);
    if (!st) {
        tr->ms = orr_median(runs, HT_REPS);
        tr->ok = tr->ms > 0;
    }
    if (st && !tr->why[0])
        snprintf(tr->why, sizeof tr->why, "%.159s", e.msg[0] ? e.msg : orr_status_name(st));
    orr_error_clear(&e);
    t->spent_s += orr_now_s() - t0;
    t->r->ntrials++;
    t->r->nfailed += !tr->ok;
    if (t->o->report)
        t->o->report(tr, t->o->ctx);
    return st == ORR_ERR_NOMEM ? orr_fail(err, ORR_ERR_NOMEM, "out of memory while tuning")
                               : ORR_OK;
}

/* The winner against the default, alternately (A B A B ...): *keep = 1
 * when it still wins by HT_MARGIN. */
static orr_status against_default(htuner *t, int k, long active, orr_hlaunch w, orr_hlaunch d,
                                  double w_ms, double *ms, int *keep, orr_error *err)
{
    const int passes = passes_for(w_ms);
    double runs[2][HT_REPS];
    orr_status st = ORR_OK;
    for (int r = 0; !st && r < HT_REPS; r++) {
        st = timed_run(t, k, active, w, passes, &runs[0][r], err);
        if (!st)
            st = timed_run(t, k, active, d, passes, &runs[1][r], err);
    }
    if (st)
        return st;
    ms[0] = orr_median(runs[0], HT_REPS);
    ms[1] = orr_median(runs[1], HT_REPS);
    *keep = ms[0] < ms[1] * (1 - HT_MARGIN);
    return ORR_OK;
}

/* Saves bucket k's choice and its trials. */
static orr_status save(const htuner *t, int k, const char *kernel, const orr_htune_trial *trials,
                       int ntrials, orr_error *err)
{
    orr_tune_stored_trial st[NCAND + 1];
    for (int c = 0; c < ntrials; c++)
        st[c] = (orr_tune_stored_trial){trials[c].launch.tile, 0, 1, 0, trials[c].ranges, 1,
                                        trials[c].launch.per_sm, trials[c].ms,
                                        trials[c].max_rel_err, trials[c].ok, trials[c].why, 0};
    orr_tune_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.device, sizeof e.device, "%s", t->r->device);
    memcpy(e.kernel, kernel, sizeof e.kernel);
    snprintf(e.backend, sizeof e.backend, "cuda");
    snprintf(e.precision, sizeof e.precision, "%s", orr_precision_name(t->spec.phys.precision));
    snprintf(e.force, sizeof e.force, "%s", t->spec.phys.force);
    snprintf(e.integrator, sizeof e.integrator, "hermite");
    e.n_bucket = t->n_bucket;
    e.targets_bucket = t->r->active[k];
    e.budget_s = t->budget_s;
    e.block = t->r->launch[k].tile;
    e.per_sm = t->r->launch[k].per_sm;
    e.split = e.ipt = 1;
    e.ranges = orr_hlaunch_ranges(t->n, t->r->active[k], t->r->launch[k], t->sms, NULL);
    e.ms = t->r->ms[k];
    e.interactions_per_s = e.ms > 0 ? (double)t->r->active[k] * (double)t->n / (e.ms * 1e-3) : 0;
    return orr_tune_store_put(&e, st, ntrials, t->r->note, sizeof t->r->note, err);
}

/* save(), a failure said in the note (not an error: the run goes on),
 * once however many buckets it stops; a directory not usable or not
 * writable in the kernel cache's words. */
static void save_noted(const htuner *t, int k, const char *kernel, const orr_htune_trial *trials,
                       int ntrials)
{
    orr_error se = {0};
    if (save(t, k, kernel, trials, ntrials, &se) != ORR_OK) {
        char text[ORR_NOTE_MAX];
        snprintf(text, sizeof text, se.code == ORR_ERR_CACHE ? "%s" : "Hermite tuning not saved: %s",
                 se.msg);
        if (!strstr(t->r->note, text))
            orr_note_add(t->r->note, sizeof t->r->note, "%s", text);
    }
    orr_error_clear(&se);
}

/* Bucket k keeps the default: stored so (no trials), so later starts do
 * not try again; a retune with a larger budget does. */
static orr_status keep_default(htuner *t, int k, const char *kernel)
{
    snprintf(t->r->from[k], sizeof t->r->from[k], "default");
    save_noted(t, k, kernel, NULL, 0);
    return ORR_OK;
}

/* Bucket k: every distinct candidate, the winner against the default. */
static orr_status tune_bucket(htuner *t, int k, const char *kernel, orr_error *err)
{
    orr_htune_result *r = t->r;
    const long active = r->active[k];
    const orr_hlaunch def = r->launch[k];   /* the default, resolved */
    /* the active bodies spread over all n, and a sample of them */
    for (long a = 0; a < active; a++)
        t->act[a] = (long)((double)a * (double)t->n / (double)active);
    const long ns = active < HT_SAMPLE ? active : HT_SAMPLE;
    for (long s = 0; s < ns; s++) {
        t->sample_at[s] = orr_sample_index(s, active, ns);
        t->sample[s] = t->act[t->sample_at[s]];
    }
    /* the bucket's share of the budget left must hold three candidates'
     * runs: judged before anything runs from the last bucket's default
     * (a pass grows with the active count), then from its own */
    const int left = r->nbuckets - k;
    const double share = (t->budget_s - t->spent_s) / (left > 0 ? left : 1);
    const double runs_s = 3 * (HT_REPS + 2) * 1e-3;
    orr_htune_trial trials[NCAND];
    int ntr = 0;
    const double guess = t->last_ms > 0 ? t->last_ms * (double)active / (double)t->last_active : 0;
    if (guess * runs_s > share) {
        orr_note_add(r->note, sizeof r->note, "%ld active: a pass would take about %.3g ms, over "
                 "the budget left (%.2g s): the default is kept, untimed", active, guess, share);
        return keep_default(t, k, kernel);
    }
    /* the reference, once the bucket is to be timed */
    orr_status st = orr_engine_accel_jerk(t->cpu, ns, t->sample, t->ref, t->ref + 3 * ns, err);
    if (st) {
        orr_error_context(err, "Hermite tuning reference (CPU backend, double)");
        return st;
    }
    memset(&trials[0], 0, sizeof trials[0]);
    trials[0] = (orr_htune_trial){.bucket = k, .active = active, .launch = def, .ms = -1,
                                  .max_rel_err = -1, .is_default = 1};
    trials[0].ranges = orr_hlaunch_ranges(t->n, active, def, t->sms, NULL);
    if ((st = measure(t, k, active, ns, &trials[ntr++], err)) != ORR_OK)
        return st;
    if (trials[0].ok) {
        t->last_ms = trials[0].ms;
        t->last_active = active;
    }
    if (trials[0].ok && trials[0].ms * runs_s > share) {
        orr_note_add(r->note, sizeof r->note, "%ld active: one pass takes %.3g ms, over the budget "
                 "left (%.2g s): the default is kept", active, trials[0].ms, share);
        r->ms[k] = trials[0].ms;
        return keep_default(t, k, kernel);
    }
    int best = trials[0].ok ? 0 : -1;
    for (size_t a = 0; a < sizeof tiles / sizeof tiles[0]; a++)
        for (size_t b = 0; b < sizeof per_sms / sizeof per_sms[0]; b++) {
            if (t->o->stop && *t->o->stop)
                return orr_fail(err, ORR_ERR_INTERRUPTED, "Hermite tuning interrupted");
            orr_hlaunch l = {tiles[a], per_sms[b]};
            int sp = 1;
            const int rg = orr_hlaunch_shape(t->n, active, l, t->sms, &sp, NULL, NULL);
            int seen = 0;   /* a launch that another candidate already makes */
            for (int c = 0; c < ntr; c++) {
                int sc = 1;
                orr_hlaunch_shape(t->n, active, trials[c].launch, t->sms, &sc, NULL, NULL);
                seen |= trials[c].launch.tile == l.tile && trials[c].ranges == rg && sc == sp;
            }
            if (seen || t->spent_s > t->budget_s)
                continue;
            orr_htune_trial *tr = &trials[ntr++];
            *tr = (orr_htune_trial){.bucket = k, .active = active, .launch = l, .ranges = rg,
                                    .ms = -1, .max_rel_err = -1};
            if ((st = measure(t, k, active, ns, tr, err)) != ORR_OK)
                return st;
            if (tr->ok && (best < 0 || tr->ms < trials[best].ms))
                best = ntr - 1;
        }
    if (best < 0) {
        orr_note_add(r->note, sizeof r->note, "%ld active: no candidate verified (%d tried): the "
                 "default is kept", active, ntr);
        return ORR_OK;   /* nothing stored: the next start tries again */
    }
    double w_ms = trials[best].ms;
    if (best > 0) {
        double ms[2];
        int keep = 0;
        double t0 = orr_now_s();
        st = against_default(t, k, active, trials[best].launch, def, w_ms, ms, &keep, err);
        t->spent_s += orr_now_s() - t0;
        if (st)
            return st;
        if (!keep) {
            orr_note_add(r->note, sizeof r->note, "%ld active: the winner (tile %d, %d per SM) took "
                     "%.4g ms against the default's %.4g ms when timed alternately with it: the "
                     "default is kept", active, trials[best].launch.tile,
                     trials[best].launch.per_sm, ms[0], ms[1]);
            best = 0;
        }
        w_ms = ms[keep ? 0 : 1];
    }
    r->launch[k] = trials[best].launch;
    r->ms[k] = w_ms;
    snprintf(r->from[k], sizeof r->from[k], "tuned");
    save_noted(t, k, kernel, trials, ntr);
    return ORR_OK;
}

static void htuner_free(htuner *t)
{
    orr_engine_destroy(t->gpu);
    orr_engine_destroy(t->cpu);
    free(t->act);
    free(t->sample);
    free(t->sample_at);
    free(t->ref);
    free(t->got);
    free(t->acc);
    free(t->jerk);
}

/* The engines and buffers of a search, bodies set. */
static orr_status htuner_init(htuner *t, orr_error *err)
{
    const long n = t->n;
    t->act = malloc(sizeof(long) * (size_t)n);
    t->sample = malloc(sizeof(long) * HT_SAMPLE);
    t->sample_at = malloc(sizeof(long) * HT_SAMPLE);
    t->ref = malloc(sizeof(double) * 6 * HT_SAMPLE);
    t->got = malloc(sizeof(double) * 6 * HT_SAMPLE);
    t->acc = malloc(sizeof(double) * 3 * (size_t)n);
    t->jerk = malloc(sizeof(double) * 3 * (size_t)n);
    double *pos = malloc(sizeof(double) * 4 * (size_t)n), *vel = malloc(sizeof(double) * 3 * (size_t)n);
    double *attr = NULL;
    orr_status st = ORR_OK;
    if (!t->act || !t->sample || !t->sample_at || !t->ref || !t->got || !t->acc || !t->jerk ||
        !pos || !vel)
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory for tuning %ld bodies", n);
    if (!st)
        st = orr_trial_bodies(&t->spec, n, ORR_TUNE_SEED, pos, vel, &attr, err);
    orr_kspec rs;
    orr_kspec_reference(&t->spec.phys, &rs);
    if (!st)
        st = orr_engine_create(&t->cpu, ORR_BACKEND_CPU, &rs, ORR_VARIANT_TILED, n, 0, NULL, 0,
                               err);
    if (!st && !(st = orr_engine_set_state(t->cpu, pos, vel, err)) && attr)
        st = orr_engine_set_attr(t->cpu, attr, err);
    if (st && st != ORR_ERR_NOMEM)
        orr_error_context(err, "Hermite tuning reference (CPU backend, double)");
    if (!st)
        st = orr_engine_create(&t->gpu, ORR_BACKEND_CUDA, &t->spec, ORR_VARIANT_TILED, n,
                               t->o->device, NULL, 0, err);
    if (!st && !(st = orr_engine_set_state(t->gpu, pos, vel, err)) && attr)
        st = orr_engine_set_attr(t->gpu, attr, err);
    free(pos);
    free(vel);
    free(attr);
    return st;
}

void orr_htune_options_default(orr_htune_options *o)
{
    memset(o, 0, sizeof *o);
    o->budget_s = HT_BUDGET_S;
}

orr_status orr_htune(const orr_kspec *spec, long n, const orr_htune_options *options,
                     orr_htune_result *result, orr_error *err)
{
    const double t0 = orr_now_s();
    orr_htune_options defaults;
    orr_htune_options_default(&defaults);
    const orr_htune_options *o = options ? options : &defaults;
    memset(result, 0, sizeof *result);
    if (!spec)
        return orr_fail(err, ORR_ERR_ARG, "Hermite tuning needs a kernel spec");
    if (n < 2 || n > (1L << 30))
        return orr_fail(err, ORR_ERR_ARG, "invalid body count %ld for Hermite tuning: must be "
                        "from 2 to 2^30", n);
    orr_tune_options to;
    orr_tune_options_default(&to);
    to.device = o->device;
    orr_tune_result id;
    orr_status st = orr_tune_identify(ORR_BACKEND_CUDA, spec, n, &to, &id, err);
    if (st)
        return st;
    orr_gpu_info gpu;
    if ((st = orr_cuda_device_info(o->device, &gpu, err)) != ORR_OK)
        return st;
    snprintf(result->device, sizeof result->device, "%s", id.device);
    memcpy(result->kernel, id.kernel, sizeof result->kernel);
    snprintf(result->source, sizeof result->source, "store");

    htuner t;
    memset(&t, 0, sizeof t);
    t.o = o;
    t.r = result;
    t.spec = *spec;
    t.n = n;
    t.n_bucket = id.n_bucket;
    t.sms = gpu.sm_count;
    t.tol = spec->phys.precision == ORR_MIXED ? 1e-5 : orr_accel_tolerance(spec->phys.precision);
    t.budget_s = o->budget_s > 0 ? o->budget_s : HT_BUDGET_S;
    result->nbuckets = orr_hbucket(n) + 1;
    char keys[ORR_HBUCKETS][33];
    int missing = 0;
    for (int k = 0; !st && k < result->nbuckets; k++) {
        long top = orr_hbucket_top(k);
        result->active[k] = top < n ? top : n;
        result->launch[k] = orr_hlaunch_default(spec->launch.block);
        result->ms[k] = -1;
        snprintf(result->from[k], sizeof result->from[k], "default");
        if ((st = bucket_key(id.kernel, k, keys[k], err)) != ORR_OK)
            break;
        orr_tune_entry e;
        memset(&e, 0, sizeof e);
        int hit = 0;
        orr_tune_store_file file;
        if (!o->retune && (st = orr_tune_store_get(id.device, keys[k], &e, &hit, &file, err)))
            break;
        orr_hlaunch l = {e.block, e.per_sm};
        if (hit && orr_hlaunch_valid(l)) {
            result->launch[k] = l;
            result->ms[k] = e.ms;
            snprintf(result->from[k], sizeof result->from[k], "store");
        } else {
            missing++;
        }
    }
    if (st || !missing) {
        result->elapsed_s = orr_now_s() - t0;
        return st;
    }
    snprintf(result->source, sizeof result->source, "tuned");
    st = htuner_init(&t, err);
    for (int k = 0; !st && k < result->nbuckets; k++)
        if (strcmp(result->from[k], "store") != 0)
            st = tune_bucket(&t, k, keys[k], err);
    htuner_free(&t);
    result->elapsed_s = orr_now_s() - t0;
    return st;
}

orr_status orr_htune_apply(const orr_htune_result *r, orr_engine *e, orr_error *err)
{
    orr_status st = ORR_OK;
    for (int k = 0; !st && k < r->nbuckets; k++)
        st = orr_engine_set_hlaunch(e, k, r->launch[k], err);
    return st;
}
