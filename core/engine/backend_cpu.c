/* backend_cpu: the CPU backend.  The force-law source is compiled at run time
 * by the host C compiler (hostcc) into a shared object, cached, loaded, and
 * run with OpenMP.  Bodies are kept as structure-of-arrays in the spec's
 * precision.  In double precision it is also the reference that GPU results
 * are checked against.  Its buffers are host memory: a communication layer
 * reads and fills the arrays directly, and there is no stream. */
#include "engine_impl.h"
#include "util.h"
#include "hostcc.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*accel_fn)(long, const void *, const void *, const void *, const void *,
                         const void *, const double *, long, long, const long *, void *, void *,
                         void *);
typedef double (*potential_fn)(long, const void *, const void *, const void *, const void *,
                               const void *, const double *, long, long);
typedef void (*kick_fn)(long, void *, void *, void *, const void *, const void *, const void *,
                        double, double);
typedef void (*drift_fn)(long, void *, void *, void *, const void *, const void *, const void *,
                         double);
typedef double (*field_potential_fn)(long, const void *, const void *, const void *,
                                     const void *, const double *, long, long);
typedef int (*accel_jerk_fn)(long, const void *, const void *, const void *, const void *,
                             const void *, const void *, const void *, const void *,
                             const double *, long, const long *, void *, void *);

enum { X, Y, Z, M, VX, VY, VZ, AX, AY, AZ, NARR };

typedef struct {
    orr_hostcc_lib lib;
    accel_fn accel;
    potential_fn potential;
    kick_fn kick;
    drift_fn drift;
    accel_jerk_fn accel_jerk;
    field_potential_fn field_potential;
    size_t elem;          /* sizeof(real) */
    void *a[NARR];        /* SoA arrays of n reals */
    void *attr;           /* nattr arrays of n reals (NULL without attributes) */
    unsigned long long flag;   /* the first blow-up, step << 32 | body; all ones: none */
    char *law;            /* "force law 'x' (defined at s.lua:3)": orr_engine_cpu_running */
} cpu_impl;

/* The law whose code runs now (orr_engine_cpu_running): set by law_begin,
 * cleared by law_end only while it is still this engine's, so it never
 * points at a destroyed engine's text. */
static _Atomic(const char *) running_law;

const char *orr_engine_cpu_running(void)
{
    return atomic_load(&running_law);
}

static void law_begin(const cpu_impl *c)
{
    atomic_store(&running_law, (const char *)c->law);
}

static void law_end(const cpu_impl *c)
{
    const char *mine = c->law;
    atomic_compare_exchange_strong(&running_law, &mine, NULL);
}

static double get(const cpu_impl *c, int arr, long i)
{
    return c->elem == sizeof(double) ? ((const double *)c->a[arr])[i]
                                     : (double)((const float *)c->a[arr])[i];
}

static void put(cpu_impl *c, int arr, long i, double v)
{
    if (c->elem == sizeof(double))
        ((double *)c->a[arr])[i] = v;
    else
        ((float *)c->a[arr])[i] = (float)v;
}

/* Loads a kernel object into c and finds the family's entry points. */
static orr_status cpu_load(cpu_impl *c, const orr_kfamily *f, const void *so, size_t len,
                           double *seconds, orr_error *err)
{
    double t0 = orr_now_s();
    orr_status st = orr_hostcc_load(so, len, &c->lib, err);
    *seconds = orr_now_s() - t0;
    void *sym[ORR_KFAMILY_MAX_KERNELS] = {NULL};
    for (int k = 0; !st && k < f->ncpu; k++)
        if (!(sym[k] = orr_hostcc_sym(&c->lib, f->cpu_entries[k])))
            st = orr_fail(err, ORR_ERR_LOAD, "compiled CPU kernel lacks its entry point %s",
                          f->cpu_entries[k]);
    if (st) {
        orr_hostcc_unload(&c->lib);
        return st;
    }
    c->accel = (accel_fn)sym[ORR_KC_ACCEL];
    c->potential = (potential_fn)sym[ORR_KC_POTENTIAL];
    c->kick = (kick_fn)sym[ORR_KC_KICK];
    c->drift = (drift_fn)sym[ORR_KC_DRIFT];
    c->accel_jerk = (accel_jerk_fn)sym[ORR_KC_ACCEL_JERK];
    c->field_potential = (field_potential_fn)sym[ORR_KC_FIELD_POTENTIAL];
    return ORR_OK;
}

typedef struct {
    const char *src, *extra;
    cpu_impl *c;                 /* receives the object, loaded */
    const orr_kfamily *family;
    int loaded;                  /* 1: the build loaded it */
    double load_s;
} cpu_build_ctx;

/* Compiles, then loads what was compiled before the cache stores it: an
 * object that cannot load (a snippet's extern that nothing defines) is an
 * error, never a cache entry. */
static orr_status cpu_build(void *ctx, void **data, size_t *len, double *seconds, orr_error *err)
{
    cpu_build_ctx *b = ctx;
    orr_status st = orr_hostcc_compile(b->src, "orrery_gen.c", b->extra, data, len, seconds, err);
    if (st || !b->c)
        return st;
    st = cpu_load(b->c, b->family, *data, *len, &b->load_s, err);
    if (st) {
        free(*data);
        *data = NULL;
        return st;
    }
    b->loaded = 1;
    return ORR_OK;
}

static void cpu_destroy(orr_engine *e)
{
    cpu_impl *c = e->impl;
    if (!c)
        return;
    orr_hostcc_unload(&c->lib);
    for (int k = 0; k < NARR; k++)
        free(c->a[k]);
    free(c->attr);
    law_end(c);
    free(c->law);
    free(c);
    e->impl = NULL;
}

static orr_status cpu_create(orr_engine *e, orr_error *err)
{
    const char *compiler, *cpu;
    orr_status st = orr_hostcc_identity(&compiler, &cpu, err);
    if (st)
        return st;
    cpu_impl *c = calloc(1, sizeof *c);
    if (!c)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    c->lib.fd = -1;
    c->flag = ~0ULL;
    e->impl = c;
    c->law = orr_asprintf("force law '%s' (%s %s)", e->law.name,
                          e->law.builtin ? "from" : "defined at",
                          e->law.origin ? e->law.origin : "?");
    if (!c->law) {
        cpu_destroy(e);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    c->elem = ORR_STORED_DOUBLE(e->spec.phys.precision) ? sizeof(double) : sizeof(float);
    for (int k = 0; k < NARR; k++) {
        c->a[k] = calloc((size_t)e->n, c->elem);
        if (!c->a[k]) {
            size_t bytes = (size_t)e->n * c->elem * NARR;
            cpu_destroy(e);
            return orr_fail(err, ORR_ERR_NOMEM, "out of memory for %ld bodies (%zu bytes)", e->n,
                            bytes);
        }
    }
    if (e->nattr && !(c->attr = calloc((size_t)e->n * (size_t)e->nattr, c->elem))) {
        cpu_destroy(e);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory for the attributes of %ld bodies", e->n);
    }
    char *src = NULL;
    st = orr_kspec_source(&e->spec, e->family, ORR_TARGET_CPU, &src, err);
    if (st) {
        cpu_destroy(e);
        return st;
    }
    snprintf(e->build.target, sizeof e->build.target, "cpu");
    const char *extra = orr_hostcc_precision_flags(ORR_STORED_DOUBLE(e->spec.phys.precision));
    const char *parts[] = {"orrery-cpu-1", e->family->name, src, orr_hostcc_command(), compiler,
                           orr_hostcc_flags(), extra, cpu};
    cpu_build_ctx ctx = {src, extra, c, e->family, 0, 0};
    void *so = NULL;
    size_t len = 0;
    st = orr_kcache_build(parts, 8, "so", cpu_build, &ctx, &so, &len, &e->build, err);
    free(src);
    if (!st && !ctx.loaded)   /* from the cache */
        st = cpu_load(c, e->family, so, len, &ctx.load_s, err);
    free(so);
    e->build.load_s = ctx.load_s;
    if (st)
        cpu_destroy(e);
    return st;
}

orr_status orr_cpu_compile(const orr_kspec *spec, const orr_kfamily *f, orr_compiled *out,
                           orr_error *err)
{
    char *src = NULL;
    orr_status st = orr_kspec_source(spec, f, ORR_TARGET_CPU, &src, err);
    if (!st)
        st = orr_hostcc_compile(src, "orrery_gen.c",
                                orr_hostcc_precision_flags(ORR_STORED_DOUBLE(spec->phys.precision)),
                                &out->data, &out->len, &out->seconds, err);
    free(src);
    return st;
}

/* The state (pos: x, y, z, m; vel: vx, vy, vz, or none: 0) into the SoA
 * arrays: in double, one pass with the arrays apart (block steps on the
 * host write it before every block's force). */
static orr_status cpu_set_state(orr_engine *e, const double *pos, const double *vel, orr_error *err)
{
    cpu_impl *c = e->impl;
    if (c->elem != sizeof(double)) {
        for (long i = 0; i < e->n; i++) {
            for (int k = 0; k < 4; k++)
                put(c, X + k, i, pos[4 * i + k]);
            for (int k = 0; k < 3; k++)
                put(c, VX + k, i, vel ? vel[3 * i + k] : 0.0);
        }
        return ORR_OK;
    }
    double *restrict x = c->a[X], *restrict y = c->a[Y], *restrict z = c->a[Z],
                     *restrict m = c->a[M], *restrict vx = c->a[VX], *restrict vy = c->a[VY],
                     *restrict vz = c->a[VZ];
    for (long i = 0; i < e->n; i++) {
        x[i] = pos[4 * i];
        y[i] = pos[4 * i + 1];
        z[i] = pos[4 * i + 2];
        m[i] = pos[4 * i + 3];
    }
    for (long i = 0; i < e->n; i++) {
        vx[i] = vel ? vel[3 * i] : 0.0;
        vy[i] = vel ? vel[3 * i + 1] : 0.0;
        vz[i] = vel ? vel[3 * i + 2] : 0.0;
    }
    return ORR_OK;
}

static orr_status cpu_get_state(orr_engine *e, double *pos, double *vel, orr_error *err)
{
    cpu_impl *c = e->impl;
    for (long i = 0; i < e->n; i++) {
        if (pos)
            for (int k = 0; k < 4; k++)
                pos[4 * i + k] = get(c, X + k, i);
        if (vel)
            for (int k = 0; k < 3; k++)
                vel[3 * i + k] = get(c, VX + k, i);
    }
    return ORR_OK;
}

/* Array arr from body `first` on. */
static void *at(const cpu_impl *c, int arr, long first)
{
    return (char *)c->a[arr] + (size_t)first * c->elem;
}

static orr_status cpu_accel(orr_engine *e, orr_range t, orr_force_part part, orr_error *err)
{
    if (part == ORR_FORCE_LOCAL)   /* one pass over every source: all of it in REST */
        return ORR_OK;
    cpu_impl *c = e->impl;
    law_begin(c);
    c->accel(e->n, c->a[X], c->a[Y], c->a[Z], c->a[M], c->attr, e->rt, t.count, t.first, NULL,
             at(c, AX, t.first), at(c, AY, t.first), at(c, AZ, t.first));
    law_end(c);
    return ORR_OK;
}

static orr_status cpu_get_accel(orr_engine *e, orr_range t, double *acc, orr_error *err)
{
    cpu_impl *c = e->impl;
    for (long i = 0; i < t.count; i++)
        for (int k = 0; k < 3; k++)
            acc[3 * i + k] = get(c, AX + k, t.first + i);
    return ORR_OK;
}

/* The first body of t with a non-finite value in arrays a..a+2, flagged
 * as on the GPU (step << 32 | body, the lowest kept): a scan of the range,
 * O(n) against the force pass's O(n^2). */
static void flag_range(orr_engine *e, cpu_impl *c, orr_range t, int a)
{
    for (long i = t.first; i < t.first + t.count; i++)
        if (!isfinite(get(c, a, i)) || !isfinite(get(c, a + 1, i)) ||
            !isfinite(get(c, a + 2, i))) {
            unsigned long long key = (unsigned long long)(unsigned)e->step << 32 | (unsigned)i;
            c->flag = key < c->flag ? key : c->flag;
            return;
        }
}

static orr_status cpu_kick(orr_engine *e, orr_range t, double dt, double damping, orr_error *err)
{
    cpu_impl *c = e->impl;
    flag_range(e, c, t, AX);
    c->kick(t.count, at(c, VX, t.first), at(c, VY, t.first), at(c, VZ, t.first),
            at(c, AX, t.first), at(c, AY, t.first), at(c, AZ, t.first), dt, damping);
    return ORR_OK;
}

static orr_status cpu_drift(orr_engine *e, orr_range t, double dt, orr_error *err)
{
    cpu_impl *c = e->impl;
    c->drift(t.count, at(c, X, t.first), at(c, Y, t.first), at(c, Z, t.first),
             at(c, VX, t.first), at(c, VY, t.first), at(c, VZ, t.first), dt);
    flag_range(e, c, t, X);
    return ORR_OK;
}

static orr_status cpu_blowup(orr_engine *e, unsigned long long *key, int clear, orr_error *err)
{
    cpu_impl *c = e->impl;
    *key = c->flag;
    if (clear)
        c->flag = ~0ULL;
    return ORR_OK;
}

static orr_status cpu_potential(orr_engine *e, orr_range t, double *u, orr_error *err)
{
    cpu_impl *c = e->impl;
    law_begin(c);
    *u = c->potential(e->n, c->a[X], c->a[Y], c->a[Z], c->a[M], c->attr, e->rt, t.first,
                      t.count);
    law_end(c);
    return ORR_OK;
}

static orr_status cpu_field_potential(orr_engine *e, orr_range t, double *u, orr_error *err)
{
    cpu_impl *c = e->impl;
    law_begin(c);
    *u = c->field_potential(e->n, c->a[X], c->a[Y], c->a[Z], c->a[M], e->rt, t.first, t.count);
    law_end(c);
    return ORR_OK;
}

static orr_status cpu_set_attr(orr_engine *e, const double *attr, orr_error *err)
{
    cpu_impl *c = e->impl;
    for (long k = 0; k < e->n * e->nattr; k++) {
        if (c->elem == sizeof(double))
            ((double *)c->attr)[k] = attr[k];
        else
            ((float *)c->attr)[k] = (float)attr[k];
    }
    return ORR_OK;
}

static orr_status cpu_accel_sample(orr_engine *e, long ni, const long *idx, double *acc,
                                   orr_error *err)
{
    cpu_impl *c = e->impl;
    void *out = malloc((size_t)(3 * ni) * c->elem);
    if (!out)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    char *o = out;
    law_begin(c);
    c->accel(e->n, c->a[X], c->a[Y], c->a[Z], c->a[M], c->attr, e->rt, ni, 0, idx, o,
             o + ni * c->elem, o + 2 * ni * c->elem);
    law_end(c);
    for (long k = 0; k < ni; k++)
        for (int d = 0; d < 3; d++)
            acc[3 * k + d] = c->elem == sizeof(double) ? ((double *)out)[d * ni + k]
                                                       : (double)((float *)out)[d * ni + k];
    free(out);
    return ORR_OK;
}

static orr_status cpu_time_steps(orr_engine *e, orr_range all, int steps, int force_only,
                                 double *ms, orr_error *err)
{
    double t0 = orr_now_s();
    for (int s = 0; s < steps; s++) {
        cpu_accel(e, all, ORR_FORCE_WHOLE, err);
        if (!force_only) {
            cpu_kick(e, all, 1e-6, 1.0, err);
            cpu_drift(e, all, 1e-6, err);
        }
    }
    *ms = (orr_now_s() - t0) * 1e3 / steps;
    return ORR_OK;
}

static orr_status cpu_accel_jerk(orr_engine *e, long ni, const long *idx, double *acc,
                                 double *jerk, orr_error *err)
{
    cpu_impl *c = e->impl;
    void *out = malloc(c->elem * 6 * (size_t)(ni ? ni : 1));
    if (!out)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    char *o = out;
    law_begin(c);
    const int no_jerk = c->accel_jerk(e->n, c->a[X], c->a[Y], c->a[Z], c->a[M], c->a[VX],
                                      c->a[VY], c->a[VZ], c->attr, e->rt, ni, idx, o,
                                      o + c->elem * 3 * (size_t)ni);
    law_end(c);
    if (no_jerk) {
        free(out);
        return orr_fail(err, ORR_ERR_ARG, "force law '%s' has no jerk: the Hermite integrator "
                        "needs one (a 'jerk' snippet setting g = df/d(d2))", e->spec.phys.force);
    }
    for (long k = 0; k < 3 * ni; k++) {
        const int dbl = c->elem == sizeof(double);
        acc[k] = dbl ? ((double *)out)[k] : (double)((float *)out)[k];
        jerk[k] = dbl ? ((double *)out)[3 * ni + k] : (double)((float *)out)[3 * ni + k];
    }
    free(out);
    return ORR_OK;
}

static orr_status cpu_buffer(orr_engine *e, orr_buffer_id id, orr_buffer *out, orr_error *err)
{
    cpu_impl *c = e->impl;
    static const int first[] = {X, VX, AX};
    memset(out, 0, sizeof *out);
    out->ncomp = id == ORR_ENGINE_POS ? 4 : 3;
    out->elem = c->elem;
    out->stride = c->elem;
    for (int k = 0; k < out->ncomp; k++)
        out->host[k] = c->a[first[id] + k];
    return ORR_OK;
}

/* The deposit in body order, each body as orr_deposit_host takes it (its
 * values in double). */
static orr_status cpu_deposit(orr_engine *e, const orr_deposit *d, double *density,
                              orr_error *err)
{
    cpu_impl *c = e->impl;
    double cell[3];
    orr_deposit_cell(d, cell);
    memset(density, 0, sizeof(double) * (size_t)d->width * (size_t)d->height);
    for (long i = 0; i < e->n; i++)
        orr_deposit_one(d, cell, get(c, X + d->ax, i), get(c, X + d->ay, i), get(c, M, i),
                        density);
    return ORR_OK;
}

/* The view's subsample: a strided copy. */
static orr_status cpu_sample(orr_engine *e, long first, long stride, long count, float *out,
                             orr_error *err)
{
    cpu_impl *c = e->impl;
    for (long k = 0; k < count; k++) {
        const long i = first + k * stride;
        const double vx = get(c, VX, i), vy = get(c, VY, i), vz = get(c, VZ, i);
        for (int a = 0; a < 3; a++)
            out[3 * k + a] = (float)get(c, X + a, i);
        out[3 * count + k] = (float)sqrt(vx * vx + vy * vy + vz * vz);
        out[4 * count + k] = (float)get(c, M, i);
    }
    return ORR_OK;
}

static orr_status cpu_sync(orr_engine *e, orr_error *err)
{
    return ORR_OK;   /* every call has finished when it returns */
}

const orr_backend_ops orr_backend_cpu = {
    .name = "cpu",
    .kind = ORR_BACKEND_CPU,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .set_state = cpu_set_state,
    .get_state = cpu_get_state,
    .accel = cpu_accel,
    .blowup = cpu_blowup,
    .accel_jerk = cpu_accel_jerk,
    .get_accel = cpu_get_accel,
    .kick = cpu_kick,
    .drift = cpu_drift,
    .potential = cpu_potential,
    .field_potential = cpu_field_potential,
    .set_attr = cpu_set_attr,
    .accel_sample = cpu_accel_sample,
    .time_steps = cpu_time_steps,
    .buffer = cpu_buffer,
    .deposit = cpu_deposit,
    .sample = cpu_sample,
    .sync = cpu_sync,
};
