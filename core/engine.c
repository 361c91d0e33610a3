/* engine: backend selection and the calls every backend shares (see
 * engine.h): dispatch, argument checks, and the kernel-cache build step. */
#include "engine.h"
#include "cuda.h"
#include "kcache.h"

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

orr_status orr_engine_create(orr_engine **out, orr_backend_kind kind, const orr_kspec *spec,
                             orr_variant variant, long n, int device, char *notice,
                             size_t notice_size, orr_error *err)
{
    *out = NULL;
    if (notice && notice_size)
        notice[0] = '\0';
    if (n < 1 || n > (1L << 30))
        return orr_fail(err, ORR_ERR_ARG, "invalid body count %ld: must be from 1 to 2^30", n);
    if (kind == ORR_BACKEND_AUTO) {
        orr_error why = {0};
        if (orr_cuda_usable(device, &why) == ORR_OK) {
            kind = ORR_BACKEND_CUDA;
        } else {
            kind = ORR_BACKEND_CPU;
            if (notice)
                snprintf(notice, notice_size, "no usable GPU (%s); using the CPU backend", why.msg);
        }
        orr_error_clear(&why);
    } else if (kind == ORR_BACKEND_CUDA) {
        orr_status st = orr_cuda_usable(device, err);
        if (st)
            return st;
    }
    orr_target target = kind == ORR_BACKEND_CUDA ? ORR_TARGET_GPU : ORR_TARGET_CPU;
    orr_engine *e = calloc(1, sizeof *e);
    if (!e)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    e->ops = kind == ORR_BACKEND_CUDA ? &orr_backend_cuda : &orr_backend_cpu;
    if (spec)
        e->spec = *spec;
    else
        orr_kspec_default(&e->spec, target);
    e->variant = variant;
    e->n = n;
    e->ranges = 1;
    e->device = device;
    orr_status st = orr_kspec_validate(&e->spec, target, err);
    orr_law law;
    if (!st && (st = orr_kspec_law(&e->spec, &law, err)) == ORR_OK) {
        /* the backend generates its source from this copy: a built-in law
         * is read once; the caller's law pointer is put back afterwards */
        const struct orr_law *given = e->spec.phys.law;
        e->spec.phys.law = &law;
        e->nattr = law.nattrs;
        e->nrt = orr_law_runtime_count(&law);
        orr_law_runtime_values(&law, e->rt);
        st = e->ops->create(e, err);
        if (st == ORR_ERR_COMPILE)
            orr_error_context(err, "force law '%s' (%s %s)", law.name,
                              law.builtin ? "from" : "defined at", law.origin);
        e->spec.phys.law = given;
        orr_law_free(&law);
    }
    if (st) {
        free(e);
        return st;
    }
    *out = e;
    return ORR_OK;
}

void orr_engine_destroy(orr_engine *e)
{
    if (!e)
        return;
    e->ops->destroy(e);
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

orr_status orr_engine_accel(orr_engine *e, double *acc, orr_error *err)
{
    orr_status st = e->ops->accel(e, err);
    return st ? st : e->ops->get_accel(e, acc, err);
}

orr_status orr_engine_set_attr(orr_engine *e, const double *attr, orr_error *err)
{
    return e->nattr ? e->ops->set_attr(e, attr, err) : ORR_OK;
}

void orr_engine_set_runtime(orr_engine *e, const double *values)
{
    for (int k = 0; k < e->nrt && k < ORR_LAW_MAX_RUNTIME; k++)
        e->rt[k] = values[k];
}

orr_status orr_engine_kick(orr_engine *e, double dt, double damping, orr_error *err)
{
    return e->ops->kick(e, dt, damping, err);
}

orr_status orr_engine_drift(orr_engine *e, double dt, orr_error *err)
{
    return e->ops->drift(e, dt, err);
}

orr_status orr_engine_potential(orr_engine *e, double *u, orr_error *err)
{
    return e->ops->potential(e, u, err);
}

orr_status orr_engine_accel_sample(orr_engine *e, long ni, const long *idx, double *acc,
                                   orr_error *err)
{
    for (long k = 0; k < ni; k++)
        if (idx[k] < 0 || idx[k] >= e->n)
            return orr_fail(err, ORR_ERR_ARG, "sample index %ld out of range (n = %ld)", idx[k],
                            e->n);
    return e->ops->accel_sample(e, ni, idx, acc, err);
}

orr_status orr_engine_time_steps(orr_engine *e, int steps, int force_only, double *ms,
                                 orr_error *err)
{
    if (steps < 1)
        return orr_fail(err, ORR_ERR_ARG, "invalid step count %d: must be at least 1", steps);
    return e->ops->time_steps(e, steps, force_only, ms, err);
}

orr_status orr_engine_cached_build(const char *const *key_parts, int nparts, const char *kind,
                                   orr_build_fn build, void *ctx, void **data, size_t *len,
                                   orr_build_info *info, orr_error *err)
{
    orr_kkey_builder kb;
    orr_kkey key;
    orr_status st = orr_kkey_begin(&kb, err);
    if (st)
        return st;
    for (int k = 0; k < nparts; k++)
        orr_kkey_add_str(&kb, key_parts[k]);
    orr_kkey_finish(&kb, &key);
    memcpy(info->key, key.hex, sizeof info->key);

    int hit = 0;
    char *note = NULL;
    st = orr_kcache_get(&key, kind, data, len, &hit, &note, err);
    if (note) {
        snprintf(info->note, sizeof info->note, "%s", note);
        free(note);
    }
    if (st)
        return st;
    if (hit) {
        info->cached = 1;
        info->compile_s = 0;
        return ORR_OK;
    }
    info->cached = 0;
    st = build(ctx, data, len, &info->compile_s, err);
    if (st)
        return st;   /* nothing is written to the cache for a failed build */
    orr_error put_err = {0};
    if (orr_kcache_put(&key, kind, *data, *len, &put_err) != ORR_OK && !info->note[0])
        snprintf(info->note, sizeof info->note, "kernel not cached: %.480s", put_err.msg);
    orr_error_clear(&put_err);
    return ORR_OK;
}
