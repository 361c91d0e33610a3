/* engine: the calls every backend shares (see engine.h): dispatch through
 * the backend's table, argument and range checks, what the engine tells
 * about itself, which backend a name or "auto" means, the Hermite launch
 * shapes and the host's arithmetic of the pictures' cloud-in-cell deposit.
 * It names no backend: backends.c makes an engine on one. */
#include "engine_impl.h"
#include "cuda.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *orr_backend_name(orr_backend_kind k)
{
    return k == ORR_BACKEND_CUDA ? "cuda" : k == ORR_BACKEND_CPU ? "cpu" : "auto";
}

orr_status orr_backend_parse(const char *name, orr_backend_kind *k, orr_error *err)
{
    if (strcmp(name, "auto") == 0)
        *k = ORR_BACKEND_AUTO;
    else if (strcmp(name, "cuda") == 0 || strcmp(name, "gpu") == 0)
        *k = ORR_BACKEND_CUDA;
    else if (strcmp(name, "cpu") == 0)
        *k = ORR_BACKEND_CPU;
    else
        return orr_fail(err, ORR_ERR_ARG, "invalid backend '%s' (expected auto, cuda or cpu)", name);
    return ORR_OK;
}

orr_status orr_cuda_usable(int device, orr_error *err)
{
    orr_status st = orr_cuda_open(err);
    if (st)
        return st;
    int count = 0;
    st = orr_cuda_device_count(&count, err);
    if (st)
        return st;
    if (count <= 0)
        return orr_fail(err, ORR_ERR_NODEVICE, "driver loaded but no CUDA device found");
    if (device < 0 || device >= count)
        return orr_fail(err, ORR_ERR_NODEVICE, "no CUDA device %d (%d device%s present)", device,
                        count, count == 1 ? "" : "s");
    return ORR_OK;
}

orr_status orr_backend_resolve(orr_backend_kind asked, int device, orr_backend_kind *out,
                               char *notice, size_t notice_size, orr_error *err)
{
    if (notice && notice_size)
        notice[0] = '\0';
    *out = asked;
    if (asked == ORR_BACKEND_CPU)
        return ORR_OK;
    orr_error why = {0};
    orr_status st = orr_cuda_usable(device, &why);
    if (asked == ORR_BACKEND_CUDA) {
        if (st)
            orr_fail(err, st, "backend 'cuda': no usable GPU (%s)", why.msg);
    } else {
        *out = st ? ORR_BACKEND_CPU : ORR_BACKEND_CUDA;
        if (st && notice && notice_size)
            snprintf(notice, notice_size, "no usable GPU (%s); using the CPU backend", why.msg);
        st = ORR_OK;
    }
    orr_error_clear(&why);
    return st;
}

void orr_engine_destroy(orr_engine *e)
{
    if (!e)
        return;
    e->ops->destroy(e);
    orr_law_free(&e->law);
    orr_fieldset_free(&e->fields);
    free(e);
}

orr_status orr_engine_set_state(orr_engine *e, const double *pos, const double *vel, orr_error *err)
{
    return e->ops->set_state(e, pos, vel, err);
}

orr_status orr_engine_get_state(orr_engine *e, double *pos, double *vel, orr_error *err)
{
    return e->ops->get_state(e, pos, vel, err);
}

const orr_kspec *orr_engine_spec(const orr_engine *e)
{
    return &e->spec;
}

long orr_engine_n(const orr_engine *e)
{
    return e->n;
}

const char *orr_engine_backend_name(const orr_engine *e)
{
    return e->ops->name;
}

orr_backend_kind orr_engine_backend(const orr_engine *e)
{
    return e->ops->kind;
}

int orr_engine_ranges(const orr_engine *e)
{
    return e->ranges;
}

long orr_engine_wave_targets(const orr_engine *e)
{
    return e->wave_targets;
}

int orr_engine_nattr(const orr_engine *e)
{
    return e->nattr;
}

const orr_build_info *orr_engine_build_info(const orr_engine *e)
{
    return &e->build;
}

orr_range orr_engine_all(const orr_engine *e)
{
    orr_range r = {0, e->n};
    return r;
}

/* Whether t lies within the engine's bodies; the message names the range. */
static orr_status check_range(const orr_engine *e, orr_range t, orr_error *err)
{
    if (t.first < 0 || t.count < 0 || t.first > e->n || t.count > e->n - t.first)
        return orr_fail(err, ORR_ERR_ARG, "invalid body range [%ld, %ld) (n = %ld)", t.first,
                        t.first + t.count, e->n);
    return ORR_OK;
}

orr_status orr_engine_force(orr_engine *e, orr_range t, orr_error *err)
{
    return orr_engine_force_part(e, t, ORR_FORCE_WHOLE, err);
}

orr_status orr_engine_force_part(orr_engine *e, orr_range t, orr_force_part part,
                                 orr_error *err)
{
    orr_status st = check_range(e, t, err);
    if (!st && (part < ORR_FORCE_WHOLE || part > ORR_FORCE_REST))
        st = orr_fail(err, ORR_ERR_ARG, "invalid force part %d", (int)part);
    return st || !t.count ? st : e->ops->accel(e, t, part, err);
}

/* Every index of idx[0..ni) names one of the engine's bodies. */
static orr_status check_indices(const orr_engine *e, long ni, const long *idx, const char *what,
                                orr_error *err)
{
    for (long k = 0; k < ni; k++)
        if (idx[k] < 0 || idx[k] >= e->n)
            return orr_fail(err, ORR_ERR_ARG, "%s index %ld out of range (n = %ld)", what, idx[k],
                            e->n);
    return ORR_OK;
}

orr_status orr_engine_accel_jerk(orr_engine *e, long ni, const long *idx, double *acc,
                                 double *jerk, orr_error *err)
{
    orr_status st = check_indices(e, ni, idx, "body", err);
    if (st)
        return st;
    if (!e->ops->accel_jerk)
        return orr_fail(err, ORR_ERR_ARG, "the %s backend has no force + jerk kernel "
                        "yet: integrator \"hermite\" runs on the CPU backend (backend = \"cpu\")",
                        e->ops->name);
    return ni ? e->ops->accel_jerk(e, ni, idx, acc, jerk, err) : ORR_OK;
}

int orr_hbucket(long nact)
{
    int k = 0;
    while (k < ORR_HBUCKETS - 1 && nact > orr_hbucket_top(k))
        k++;
    return k;
}

long orr_hbucket_top(int k)
{
    return 64L << (2 * k);
}

int orr_hlaunch_shape(long n, long nact, orr_hlaunch l, int sms, int *split, long *iblocks,
                      long *jlen)
{
    const long tiles = (n + l.tile - 1) / l.tile, want = (long)l.per_sm * sms;
    int sp = 1;
    while (sp < 32 && (nact * sp + l.tile - 1) / l.tile * tiles < want)
        sp *= 2;
    const long per = l.tile / sp, ib = (nact + per - 1) / per;
    long r = (want + ib - 1) / ib;
    r = r > 256 ? 256 : r;
    r = r > tiles ? tiles : r;
    r = r > 4 * n / nact ? 4 * n / nact : r;
    r = r < 1 ? 1 : r;
    /* the j-ranges as even as the bodies allow, not whole tiles: a range
     * rounded up to a tile left items out (342 active of 32768 at 2 per SM:
     * 64 ranges of 512 sources, 192 items for 264 blocks, where 88 ranges
     * of 373 make 264) and gave each thread up to a tile more to sum; the
     * last tile of a range is a part of one */
    const long len = (n + r - 1) / r;
    if (split)
        *split = sp;
    if (iblocks)
        *iblocks = ib;
    if (jlen)
        *jlen = len;
    return (int)((n + len - 1) / len);
}

int orr_hlaunch_ranges(long n, long nact, orr_hlaunch l, int sms, long *jlen)
{
    return orr_hlaunch_shape(n, nact, l, sms, NULL, NULL, jlen);
}

static int tile_ok(int t)
{
    return t == 64 || t == 128 || t == 256;
}

int orr_hlaunch_valid(orr_hlaunch l)
{
    return tile_ok(l.tile) && l.per_sm >= 1 && l.per_sm <= 64;
}

orr_hlaunch orr_hlaunch_default(int block)
{
    return (orr_hlaunch){block > 256 ? 256 : block >= 128 ? 128 : 64, 16};
}

orr_status orr_engine_set_hlaunch(orr_engine *e, int k, orr_hlaunch l, orr_error *err)
{
    if (k < 0 || k >= ORR_HBUCKETS)
        return orr_fail(err, ORR_ERR_ARG, "active-body bucket %d out of range (0 to %d)", k,
                        ORR_HBUCKETS - 1);
    if (l.tile != 0 && !tile_ok(l.tile))
        return orr_fail(err, ORR_ERR_ARG, "force + jerk tile %d: must be 64, 128 or 256",
                        l.tile);
    if (l.per_sm < 0 || l.per_sm > 64)
        return orr_fail(err, ORR_ERR_ARG, "force + jerk j-split of %d blocks per SM: must be "
                        "from 1 to 64", l.per_sm);
    e->hlaunch[k] = l;
    return ORR_OK;
}

orr_hlaunch orr_engine_hlaunch(const orr_engine *e, int k)
{
    orr_hlaunch l = e->hlaunch[k < 0 ? 0 : k >= ORR_HBUCKETS ? ORR_HBUCKETS - 1 : k];
    const orr_hlaunch d = orr_hlaunch_default(e->spec.launch.block);
    if (!l.tile)
        l.tile = d.tile;
    if (!l.per_sm)
        l.per_sm = d.per_sm;
    return l;
}

orr_status orr_engine_time_accel_jerk(orr_engine *e, long ni, const long *idx, int reps,
                                      double *ms, orr_error *err)
{
    orr_status st = check_indices(e, ni, idx, "body", err);
    if (st)
        return st;
    if (ni < 1 || reps < 1)
        return orr_fail(err, ORR_ERR_ARG, "timing the force + jerk kernel needs bodies and "
                        "passes (got %ld, %d)", ni, reps);
    if (!e->ops->time_accel_jerk)
        return orr_fail(err, ORR_ERR_ARG, "the %s backend does not time its force + jerk "
                        "kernel (the Hermite tuner is for the GPU)", e->ops->name);
    return e->ops->time_accel_jerk(e, ni, idx, reps, ms, err);
}

void orr_engine_set_step(orr_engine *e, long step)
{
    e->step = step;
}

orr_status orr_engine_blowup(orr_engine *e, long *step, long *body, orr_error *err)
{
    unsigned long long key = ~0ULL;
    orr_status st = e->ops->blowup(e, &key, 1, err);
    *step = *body = -1;
    if (!st && key != ~0ULL) {
        *step = (long)(key >> 32);
        *body = (long)(key & 0xffffffffu);
    }
    return st;
}

int orr_engine_has_blocks(const orr_engine *e)
{
    return e->ops->blocks_begin != NULL;
}

double orr_engine_force_noise(const orr_engine *e)
{
    switch (e->spec.phys.precision) {
    case ORR_DOUBLE:
        return 1e-13;
    case ORR_MIXED:   /* the CPU sums a mixed pair in double */
        return e->stream ? 1e-7 : 1e-13;
    default:
        return 1e-5;
    }
}

orr_status orr_engine_blocks_begin(orr_engine *e, const orr_block_params *p, int fresh,
                                   int keep_steps, orr_error *err)
{
    if (!e->ops->blocks_begin)
        return orr_fail(err, ORR_ERR_ARG, "the %s backend keeps no block steps", e->ops->name);
    return e->ops->blocks_begin(e, p, fresh, keep_steps, err);
}

orr_status orr_engine_block(orr_engine *e, const orr_block_params *p, long long *t, long *nact,
                            orr_error *err)
{
    if (!e->ops->block)
        return orr_fail(err, ORR_ERR_ARG, "the %s backend keeps no block steps", e->ops->name);
    return e->ops->block(e, p, t, nact, err);
}

orr_status orr_engine_blocks_run(orr_engine *e, const orr_block_params *p, long long *t,
                                 long *blocks, long *active, orr_error *err)
{
    if (!e->ops->blocks_run)
        return orr_fail(err, ORR_ERR_ARG, "the %s backend keeps no block steps", e->ops->name);
    return e->ops->blocks_run(e, p, t, blocks, active, err);
}

orr_status orr_engine_blocks_field(orr_engine *e, int k, double *io, int set, int *deepest,
                                   orr_error *err)
{
    if (!e->ops->blocks_field)
        return orr_fail(err, ORR_ERR_ARG, "the %s backend keeps no block steps", e->ops->name);
    return e->ops->blocks_field(e, k, io, set, deepest, err);
}

/* Every body's level from 0 to ORR_BLOCK_MAX_LEVEL, or ORR_ERR_ARG naming
 * the first that is not. */
static orr_status check_levels(const orr_engine *e, const int *level, orr_error *err)
{
    for (long i = 0; i < e->n; i++)
        if (level[i] < 0 || level[i] > ORR_BLOCK_MAX_LEVEL)
            return orr_fail(err, ORR_ERR_ARG, "block step level %d of body %ld: levels are 0 "
                            "to %d", level[i], i + 1, ORR_BLOCK_MAX_LEVEL);
    return ORR_OK;
}

orr_status orr_engine_blocks_levels(orr_engine *e, int *level, int set, orr_error *err)
{
    if (!e->ops->blocks_levels)
        return orr_fail(err, ORR_ERR_ARG, "the %s backend keeps no block steps", e->ops->name);
    orr_status st = set ? check_levels(e, level, err) : ORR_OK;
    return st ? st : e->ops->blocks_levels(e, level, set, err);
}

orr_status orr_engine_blocks_watch(orr_engine *e, const orr_block_watch *w, orr_error *err)
{
    if (!e->ops->blocks_watch)
        return orr_fail(err, ORR_ERR_ARG, "the %s backend's block steps cannot be watched",
                        e->ops->name);
    return e->ops->blocks_watch(e, w, err);
}

int orr_engine_blocks_why(const orr_engine *e)
{
    return e->ops->blocks_why ? e->ops->blocks_why(e) : 0;
}

orr_status orr_engine_blocks_state(orr_engine *e, double *pos, double *vel, double *acc,
                                   double *jerk, long long *tick, int *level, int set,
                                   orr_error *err)
{
    if (!e->ops->blocks_state)
        return orr_fail(err, ORR_ERR_ARG, "the %s backend keeps no block steps", e->ops->name);
    orr_status st = set ? check_levels(e, level, err) : ORR_OK;
    return st ? st : e->ops->blocks_state(e, pos, vel, acc, jerk, tick, level, set, err);
}

orr_status orr_engine_blocks_some(orr_engine *e, double *pos, double *vel, double *acc,
                                  double *jerk, long long *tick, int *level, int set,
                                  long *list, long *count, long long since, long most,
                                  orr_error *err)
{
    if (!e->ops->blocks_some)
        return orr_fail(err, ORR_ERR_ARG, "the %s backend keeps no block steps", e->ops->name);
    if (set) {
        for (long k = 0; k < *count; k++)
            if (list[k] < 0 || list[k] >= e->n)
                return orr_fail(err, ORR_ERR_ARG, "block-step state: body %ld of %ld", list[k] + 1,
                                e->n);
        orr_status st = check_levels(e, level, err);
        if (st)
            return st;
    }
    return e->ops->blocks_some(e, pos, vel, acc, jerk, tick, level, set, list, count, since, most,
                               err);
}

orr_status orr_engine_set_predicted(orr_engine *e, const double *xp, const double *vp,
                                    orr_error *err)
{
    return e->ops->set_predicted ? e->ops->set_predicted(e, xp, vp, err)
                                 : e->ops->set_state(e, xp, vp, err);
}

orr_status orr_engine_blocks_predict(orr_engine *e, long long tick, orr_error *err)
{
    if (!e->ops->blocks_predict)
        return orr_fail(err, ORR_ERR_ARG, "the %s backend keeps no block steps to predict",
                        e->ops->name);
    return e->ops->blocks_predict(e, tick, err);
}

orr_status orr_hblocks_env(int *mode, long *split, orr_error *err)
{
    const char *m = getenv("ORRERY_HBLOCKS"), *k = getenv("ORRERY_HSPLIT");
    *mode = !m || !*m || strcmp(m, "persist") == 0 ? 0 : strcmp(m, "batch") == 0 ? 1
            : strcmp(m, "block") == 0 ? 2 : -1;
    if (*mode < 0)
        return orr_fail(err, ORR_ERR_ARG, "ORRERY_HBLOCKS=\"%.64s\" is not a way to queue block "
                        "steps (expected \"persist\", the default, \"batch\" or \"block\")", m);
    *split = -1;
    if (!k || !*k)
        return ORR_OK;
    if (strcmp(k, "off") == 0) {
        *split = 0;
        return ORR_OK;
    }
    char *end = NULL;
    errno = 0;
    const long v = strtol(k, &end, 10);
    if (end == k || *end || errno || v < 0)
        return orr_fail(err, ORR_ERR_ARG, "ORRERY_HSPLIT=\"%.64s\" is not a count of active "
                        "bodies (expected a whole number from 0, or \"off\")", k);
    *split = v;
    return ORR_OK;
}

orr_status orr_engine_blocks_split(orr_engine *e, const orr_block_split *s, orr_error *err)
{
    if (!e->ops->blocks_split)
        return orr_fail(err, ORR_ERR_ARG, "the %s backend does not split block steps between "
                        "GPUs", orr_engine_backend_name(e));
    if (s->min_active < 0 || s->ranks < 1 || s->rank < 0 || s->rank >= s->ranks ||
        (s->ranks > 1 && !s->gather))
        return orr_fail(err, ORR_ERR_ARG, "block split: min_active %ld, rank %d of %d%s",
                        s->min_active, s->rank, s->ranks,
                        s->ranks > 1 && !s->gather ? ", no exchange" : "");
    return e->ops->blocks_split(e, s, err);
}

void orr_engine_blocks_stats(const orr_engine *e, orr_blocks_stats *out)
{
    memset(out, 0, sizeof *out);
    if (e->ops->blocks_stats)
        e->ops->blocks_stats(e, out);
}

orr_status orr_engine_blocks_abort(orr_engine *e, orr_error *err)
{
    if (!e->ops->blocks_abort)
        return orr_fail(err, ORR_ERR_ARG, "the %s backend keeps no block steps", e->ops->name);
    return e->ops->blocks_abort(e, err);
}

orr_status orr_engine_get_accel(orr_engine *e, orr_range t, double *acc, orr_error *err)
{
    orr_status st = check_range(e, t, err);
    return st || !t.count ? st : e->ops->get_accel(e, t, acc, err);
}

orr_status orr_engine_accel(orr_engine *e, double *acc, orr_error *err)
{
    orr_status st = orr_engine_force(e, orr_engine_all(e), err);
    return st ? st : orr_engine_get_accel(e, orr_engine_all(e), acc, err);
}

orr_status orr_engine_set_attr(orr_engine *e, const double *attr, orr_error *err)
{
    return e->nattr ? e->ops->set_attr(e, attr, err) : ORR_OK;
}

const double *orr_engine_runtime(const orr_engine *e)
{
    return e->rt;
}

void orr_engine_set_runtime(orr_engine *e, const double *values)
{
    for (int k = 0; k < e->nrt && k < ORR_LAW_MAX_RUNTIME; k++)
        e->rt[k] = values[k];
}

void orr_engine_set_field_runtime(orr_engine *e, const double *values)
{
    for (int k = 0; k < e->nfrt && k < ORR_FIELD_MAX_RUNTIME; k++)
        e->rt[ORR_RT_FIELD + k] = values[k];
}

void orr_engine_set_time(orr_engine *e, double t0, double unit)
{
    e->rt[ORR_RT_T0] = t0;
    e->rt[ORR_RT_UNIT] = unit;
    if (e->frame)
        e->frame(e->frame_ctx, t0, unit * (double)(1LL << ORR_BLOCK_MAX_LEVEL),
                 e->rt + ORR_RT_FRAME);
}

void orr_engine_set_frame(orr_engine *e, orr_frame_fn fn, void *ctx)
{
    e->frame = fn;
    e->frame_ctx = ctx;
    if (fn)
        fn(ctx, e->rt[ORR_RT_T0], 0, e->rt + ORR_RT_FRAME);
}

int orr_engine_nfields(const orr_engine *e)
{
    return e->fields.n;
}

orr_status orr_engine_field_potential_range(orr_engine *e, orr_range t, double *u,
                                            orr_error *err)
{
    *u = 0;
    orr_status st = check_range(e, t, err);
    return st || !t.count || !e->fields.n ? st : e->ops->field_potential(e, t, u, err);
}

orr_status orr_engine_kick_range(orr_engine *e, orr_range t, double dt, double damping,
                                 orr_error *err)
{
    orr_status st = check_range(e, t, err);
    return st || !t.count ? st : e->ops->kick(e, t, dt, damping, err);
}

orr_status orr_engine_drift_range(orr_engine *e, orr_range t, double dt, orr_error *err)
{
    orr_status st = check_range(e, t, err);
    return st || !t.count ? st : e->ops->drift(e, t, dt, err);
}

orr_status orr_engine_potential_range(orr_engine *e, orr_range t, double *u, orr_error *err)
{
    *u = 0;
    orr_status st = check_range(e, t, err);
    return st || !t.count ? st : e->ops->potential(e, t, u, err);
}

orr_status orr_engine_kick(orr_engine *e, double dt, double damping, orr_error *err)
{
    return orr_engine_kick_range(e, orr_engine_all(e), dt, damping, err);
}

orr_status orr_engine_drift(orr_engine *e, double dt, orr_error *err)
{
    return orr_engine_drift_range(e, orr_engine_all(e), dt, err);
}

orr_status orr_engine_potential(orr_engine *e, double *u, orr_error *err)
{
    return orr_engine_potential_range(e, orr_engine_all(e), u, err);
}

orr_status orr_engine_accel_sample(orr_engine *e, long ni, const long *idx, double *acc,
                                   orr_error *err)
{
    orr_status st = check_indices(e, ni, idx, "sample", err);
    return st ? st : e->ops->accel_sample(e, ni, idx, acc, err);
}

orr_status orr_engine_time_steps(orr_engine *e, int steps, int force_only, double *ms,
                                 orr_error *err)
{
    if (steps < 1)
        return orr_fail(err, ORR_ERR_ARG, "invalid step count %d: must be at least 1", steps);
    return e->ops->time_steps(e, orr_engine_all(e), steps, force_only, ms, err);
}

orr_status orr_engine_time_range(orr_engine *e, orr_range t, int steps, int force_only,
                                 double *ms, orr_error *err)
{
    orr_status st = check_range(e, t, err);
    if (st)
        return st;
    if (steps < 1)
        return orr_fail(err, ORR_ERR_ARG, "invalid step count %d: must be at least 1", steps);
    return e->ops->time_steps(e, t, steps, force_only, ms, err);
}

orr_status orr_engine_buffer(orr_engine *e, orr_buffer_id id, orr_buffer *out, orr_error *err)
{
    if (id != ORR_ENGINE_POS && id != ORR_ENGINE_VEL && id != ORR_ENGINE_ACC)
        return orr_fail(err, ORR_ERR_ARG, "invalid engine buffer %d", (int)id);
    return e->ops->buffer(e, id, out, err);
}

void *orr_engine_stream(const orr_engine *e)
{
    return e->stream;
}

orr_status orr_engine_sync(orr_engine *e, orr_error *err)
{
    return e->ops->sync(e, err);
}

void orr_compiled_free(orr_compiled *c)
{
    free(c->data);
    c->data = NULL;
    c->len = 0;
}

/* ---- pictures: the cloud-in-cell deposit ------------------------------------------- */

static orr_status check_deposit(const orr_deposit *d, orr_error *err)
{
    if (d->width < 1 || d->width > 16384 || d->height < 1 || d->height > 16384)
        return orr_fail(err, ORR_ERR_ARG, "deposit: the grid must be 1..16384 pixels a side "
                        "(got %d x %d)", d->width, d->height);
    if (d->ax < 0 || d->ax > 2 || d->ay < 0 || d->ay > 2 || d->ax == d->ay)
        return orr_fail(err, ORR_ERR_ARG, "deposit: invalid axes %d, %d (two of 0, 1, 2)", d->ax,
                        d->ay);
    for (int k = 0; k < 4; k++)
        if (!isfinite(d->ext[k]))
            return orr_fail(err, ORR_ERR_ARG, "deposit: the extent must be finite");
    if (!(d->ext[0] < d->ext[1]) || !(d->ext[2] < d->ext[3]))
        return orr_fail(err, ORR_ERR_ARG, "deposit: the extent must have xmin < xmax and "
                        "ymin < ymax (got {%g, %g, %g, %g})", d->ext[0], d->ext[1], d->ext[2],
                        d->ext[3]);
    return ORR_OK;
}

void orr_deposit_cell(const orr_deposit *d, double cell[3])
{
    cell[0] = (d->ext[1] - d->ext[0]) / d->width;
    cell[1] = (d->ext[3] - d->ext[2]) / d->height;
    cell[2] = 1.0 / (cell[0] * cell[1]);
}

void orr_deposit_one(const orr_deposit *d, const double cell[3], double h, double v, double m,
                     double *density)
{
    const int w = d->width, ht = d->height;
    if (!(m > 0) || !isfinite(h) || !isfinite(v))
        return;
    /* the pixel whose centre is at or left of / above the body, and the
     * body's offset from that centre in pixels */
    double fx = (h - d->ext[0]) / cell[0] - 0.5, fy = (d->ext[3] - v) / cell[1] - 0.5;
    if (!(fx > -1 && fx < w && fy > -1 && fy < ht))
        return;
    double x0 = floor(fx), y0 = floor(fy);
    double wx = fx - x0, wy = fy - y0;
    int ix = (int)x0, iy = (int)y0;
    double mm = m * cell[2];
    for (int a = 0; a < 2; a++) {
        int row = iy + a;
        if (row < 0 || row >= ht)
            continue;
        double ma = mm * (a ? wy : 1 - wy);
        for (int b = 0; b < 2; b++) {
            int col = ix + b;
            if (col >= 0 && col < w)
                density[(size_t)row * w + col] += ma * (b ? wx : 1 - wx);
        }
    }
}

orr_status orr_deposit_host(const orr_deposit *d, long n, const double *pos, double *density,
                            orr_error *err)
{
    orr_status st = check_deposit(d, err);
    if (st)
        return st;
    double cell[3];
    orr_deposit_cell(d, cell);
    memset(density, 0, sizeof(double) * (size_t)d->width * (size_t)d->height);
    for (long i = 0; i < n; i++)
        orr_deposit_one(d, cell, pos[4 * i + d->ax], pos[4 * i + d->ay], pos[4 * i + 3], density);
    return ORR_OK;
}

orr_status orr_engine_sample(orr_engine *e, long first, long stride, long count, float *out,
                             orr_error *err)
{
    if (first < 0 || stride < 1 || count < 0 || (count > 0 && first + (count - 1) * stride >= e->n))
        return orr_fail(err, ORR_ERR_ARG, "sample: bodies %ld + k %ld (k < %ld) beyond the %ld "
                        "bodies", first, stride, count, e->n);
    if (!e->ops->sample)
        return orr_fail(err, ORR_ERR_ARG, "the %s backend has no sample", e->ops->name);
    return count ? e->ops->sample(e, first, stride, count, out, err) : ORR_OK;
}

orr_status orr_engine_deposit(orr_engine *e, const orr_deposit *d, double *density,
                              orr_error *err)
{
    orr_status st = check_deposit(d, err);
    if (!st && !e->ops->deposit)
        st = orr_fail(err, ORR_ERR_ARG, "the %s backend has no deposit", e->ops->name);
    return st ? st : e->ops->deposit(e, d, density, err);
}
