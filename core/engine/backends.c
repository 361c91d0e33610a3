/* backends: an engine made on a backend (orr_engine_create: the CUDA or the
 * CPU backend's table, the engine's own copy of the law) and kernels
 * compiled for a target without an engine (orr_engine_compile).  The one
 * module that names the backends; they, like everything above, use
 * engine.c's shared calls (engine.h). */
#include "engine_impl.h"
#include "cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

orr_status orr_engine_create(orr_engine **out, orr_backend_kind kind, const orr_kspec *spec,
                             orr_variant variant, long n, int device, char *notice,
                             size_t notice_size, orr_error *err)
{
    orr_trace("engine create");
    *out = NULL;
    if (notice && notice_size)
        notice[0] = '\0';
    if (n < 1 || n > (1L << 30))
        return orr_fail(err, ORR_ERR_ARG, "invalid body count %ld: must be from 1 to 2^30", n);
    if (kind == ORR_BACKEND_CUDA) {
        orr_status st = orr_cuda_usable(device, err);   /* the driver's own words */
        if (st)
            return st;
    } else {
        orr_status st = orr_backend_resolve(kind, device, &kind, notice, notice_size, err);
        if (st)
            return st;
    }
    orr_target target = kind == ORR_BACKEND_CUDA ? ORR_TARGET_GPU : ORR_TARGET_CPU;
    orr_engine *e = calloc(1, sizeof *e);
    if (!e)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    e->ops = kind == ORR_BACKEND_CUDA ? &orr_backend_cuda : &orr_backend_cpu;
    e->family = &orr_family_direct;
    if (spec)
        e->spec = *spec;
    else
        orr_kspec_default(&e->spec, target);
    e->variant = variant;
    e->n = n;
    e->ranges = 1;
    e->device = device;
    orr_status st = orr_kspec_validate(&e->spec, target, err);
    /* the engine's own copy of the law (a built-in one is read once), so its
     * spec stays valid whatever becomes of the caller's */
    int have_law = !st && (st = orr_kspec_law(&e->spec, &e->law, err)) == ORR_OK;
    if (have_law && (st = orr_fieldset_copy(&e->fields, spec ? spec->phys.fields : NULL, err))) {
        orr_law_free(&e->law);
        have_law = 0;
    }
    if (have_law) {
        e->spec.phys.law = &e->law;
        e->spec.phys.fields = e->fields.n ? &e->fields : NULL;
        e->nattr = e->law.nattrs;
        e->nrt = orr_law_runtime_count(&e->law);
        orr_law_runtime_values(&e->law, e->rt);
        e->nfrt = orr_fieldset_runtime_count(&e->fields);
        orr_fieldset_runtime_values(&e->fields, e->rt + ORR_RT_FIELD);
        st = e->ops->create(e, err);
        orr_trace("engine create: backend done");
        if (st == ORR_ERR_COMPILE || st == ORR_ERR_LOAD) {
            /* the field whose snippet the compiler names (its #line), else the law */
            const orr_field *f = NULL;
            for (int k = 0; !f && k < e->fields.n; k++) {
                char tag[96];
                snprintf(tag, sizeof tag, "(field '%s',", e->fields.f[k].name);
                f = strstr(err->msg, tag) ? &e->fields.f[k] : NULL;
            }
            if (f)
                orr_error_context(err, "field '%s' (%s %s)", f->name,
                                  f->builtin ? "from" : "defined at", f->origin);
            else
                orr_error_context(err, "force law '%s' (%s %s)", e->law.name,
                                  e->law.builtin ? "from" : "defined at", e->law.origin);
        }
    }
    if (st) {
        if (have_law) {
            orr_law_free(&e->law);
            orr_fieldset_free(&e->fields);
        }
        free(e);
        return st;
    }
    *out = e;
    return ORR_OK;
}

orr_status orr_engine_compile(const orr_kspec *spec, orr_target target, const char *emit,
                              const char *arch, orr_compiled *out, orr_error *err)
{
    memset(out, 0, sizeof *out);
    orr_status st = orr_kspec_validate(spec, target, err);
    if (st)
        return st;
    if (strcmp(emit, "source") == 0) {
        char *src = NULL;
        st = orr_kspec_source(spec, &orr_family_direct, target, &src, err);
        if (!st) {
            out->data = src;
            out->len = strlen(src);
        }
        return st;
    }
    if (target == ORR_TARGET_CPU) {
        if (strcmp(emit, "so") != 0)
            return orr_fail(err, ORR_ERR_ARG, "invalid output '%s' for the CPU (source or so)",
                            emit);
        return orr_cpu_compile(spec, &orr_family_direct, out, err);
    }
    int ptx = strcmp(emit, "ptx") == 0;
    if (!ptx && strcmp(emit, "cubin") != 0)
        return orr_fail(err, ORR_ERR_ARG, "invalid output '%s' for the GPU (source, ptx or cubin)",
                        emit);
    char own[32] = "sm_90";
    if (!arch) {
        orr_gpu_info g;
        orr_error ignore = {0};
        if (orr_cuda_usable(0, &ignore) == ORR_OK && orr_cuda_device_info(0, &g, &ignore) == ORR_OK)
            orr_cuda_arch_name(&g, own, sizeof own);
        orr_error_clear(&ignore);
        arch = own;
    }
    return orr_cuda_compile(spec, &orr_family_direct, arch, ptx ? ORR_EMIT_PTX : ORR_EMIT_CUBIN,
                            out, err);
}
