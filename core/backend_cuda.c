/* backend_cuda: the GPU backend.  The kernel spec becomes CUDA C++ source,
 * NVRTC compiles it to CUBIN for the device's own architecture (through the
 * kernel cache), the driver API loads and launches it.  Bodies live on the
 * device as real4 arrays (x, y, z, m), (vx, vy, vz, -), (ax, ay, az, -) and
 * stay there between steps; nothing is copied unless asked for. */
#include "engine.h"
#include "util.h"
#include "cuda.h"
#include "rtc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


typedef struct {
    int ctx_held;
    orr_gpu_info info;
    void *module;
    void *fn[ORR_K_COUNT];
    orr_devptr pos, vel, acc, partial;
    orr_devptr attr;      /* n * nattr reals, attr[i * nattr + a]; 0 without attributes */
    orr_devptr parts;     /* e->ranges * n real4 partial accelerations; 0 with one range */
    int jlen;             /* bodies j per range of the accel kernel */
    unsigned npartial;
    size_t elem;          /* sizeof(real) */
    void *ev0, *ev1;
} cuda_impl;

typedef struct {
    const char *src, *arch;
    const char *exprs[ORR_K_COUNT];
    const char *opts[ORR_KSPEC_MAX_OPTS];
    int nopts;
} cuda_build_ctx;

/* Cache payload: "orrery-cubin <count>\n", one lowered name per line, then
 * the CUBIN bytes. */
static orr_status cuda_build(void *ctx, void **data, size_t *len, double *seconds, orr_error *err)
{
    cuda_build_ctx *b = ctx;
    orr_rtc_result r = {0};
    orr_status st = orr_rtc_compile(b->src, "orrery_gen.cu", b->arch, b->opts, b->nopts, b->exprs,
                                    ORR_K_COUNT, ORR_EMIT_CUBIN, &r, err);
    if (st)
        return st;
    *seconds = r.seconds;
    size_t head = 64;
    for (int k = 0; k < r.nlowered; k++)
        head += strlen(r.lowered[k]) + 1;
    char *p = malloc(head + r.size);
    if (!p) {
        orr_rtc_result_free(&r);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    size_t off = (size_t)sprintf(p, "orrery-cubin %d\n", r.nlowered);
    for (int k = 0; k < r.nlowered; k++)
        off += (size_t)sprintf(p + off, "%s\n", r.lowered[k]);
    memcpy(p + off, r.image, r.size);
    *data = p;
    *len = off + r.size;
    orr_rtc_result_free(&r);
    return ORR_OK;
}

/* Splits a payload into lowered names (NUL-terminated in place) and CUBIN. */
static orr_status parse_payload(char *p, size_t len, char *names[ORR_K_COUNT], const void **cubin,
                                orr_error *err)
{
    int count = 0;
    char *end = p + len, *nl;
    if (sscanf(p, "orrery-cubin %d", &count) != 1 || count != ORR_K_COUNT ||
        !(nl = memchr(p, '\n', len)))
        return orr_fail(err, ORR_ERR_CACHE, "cached GPU kernel has an unknown layout");
    p = nl + 1;
    for (int k = 0; k < count; k++) {
        if (p >= end || !(nl = memchr(p, '\n', (size_t)(end - p))))
            return orr_fail(err, ORR_ERR_CACHE, "cached GPU kernel is missing kernel names");
        *nl = '\0';
        names[k] = p;
        p = nl + 1;
    }
    *cubin = p;
    return ORR_OK;
}

static void cuda_destroy(orr_engine *e)
{
    cuda_impl *c = e->impl;
    if (!c)
        return;
    orr_cuda_free(c->pos);
    orr_cuda_free(c->vel);
    orr_cuda_free(c->acc);
    orr_cuda_free(c->partial);
    orr_cuda_free(c->attr);
    orr_cuda_free(c->parts);
    if (c->ev0)
        orr_cuda_event_destroy(c->ev0);
    if (c->ev1)
        orr_cuda_event_destroy(c->ev1);
    if (c->module)
        orr_cuda_module_unload(c->module);
    if (c->ctx_held)
        orr_cuda_ctx_release(e->device);
    free(c);
    e->impl = NULL;
}

static unsigned blocks_for(long items, int per_block)
{
    return (unsigned)((items + per_block - 1) / per_block);
}

/* j-ranges of the accel kernel.  With R ranges the grid has R times the
 * blocks, each summing over 1/R of the bodies (whole tiles), and a combine
 * pass adds the R partial sums.  Blocks run in waves of blocks_per_sm * SMs
 * and all take the same time, so with few waves the last one leaves SMs
 * idle: on the H100, float gravity at N = 262144 (1.3 waves of block 256)
 * went from 1.93e12 to 2.00e12-2.02e12 interactions/s with 5 to 8 ranges.
 * The automatic choice aims at 16 waves, with at most 8 ranges and at least
 * 16 tiles in each (so small N, where the extra launch would show, keep one
 * range and leave filling the GPU to threads per body). */
static int choose_ranges(const orr_engine *e, int blocks_per_sm, int sm_count)
{
    const long tiles = (e->n + e->spec.launch.block - 1) / e->spec.launch.block;
    if (e->spec.launch.ranges > 0)
        return (int)(e->spec.launch.ranges < tiles ? e->spec.launch.ranges : tiles);
    const double iblocks = (double)blocks_for(e->n, e->spec.launch.block / e->spec.launch.split * e->spec.launch.ipt);
    const double wave = (double)blocks_per_sm * sm_count;
    double want = wave > 0 ? ceil(16.0 * wave / iblocks) : 1;
    long r = want > 8 ? 8 : (long)want;
    r = r > tiles / 16 ? tiles / 16 : r;
    return r < 1 ? 1 : (int)r;
}

static orr_status alloc_buffers(orr_engine *e, cuda_impl *c, orr_error *err)
{
    size_t vec = 4 * c->elem * (size_t)e->n;
    size_t parts = e->ranges > 1 ? vec * (size_t)e->ranges : 0;
    c->npartial = blocks_for(e->n, e->spec.launch.block);
    orr_status st = orr_cuda_alloc(&c->pos, vec, err);
    if (!st && parts)
        st = orr_cuda_alloc(&c->parts, parts, err);
    if (!st)
        st = orr_cuda_alloc(&c->vel, vec, err);
    if (!st)
        st = orr_cuda_alloc(&c->acc, vec, err);
    if (!st)
        st = orr_cuda_alloc(&c->partial, sizeof(double) * c->npartial, err);
    if (!st)
        st = orr_cuda_memset32(c->vel, 0, vec / 4, err);
    size_t attr = c->elem * (size_t)e->n * (size_t)e->nattr;
    if (!st && attr)
        st = orr_cuda_alloc(&c->attr, attr, err);
    if (!st && attr)
        st = orr_cuda_memset32(c->attr, 0, attr / 4, err);
    if (st == ORR_ERR_DEVMEM)
        orr_error_context(err, "%ld bodies in %s need %zu bytes of device memory", e->n,
                          orr_precision_name(e->spec.phys.precision), 3 * vec + parts + attr);
    return st;
}

/* The spec's kernels for arch as a cache payload: from the kernel cache, or
 * compiled by NVRTC and cached. */
static orr_status build_kernels(const orr_kspec *spec, const char *arch, void **data, size_t *len,
                                orr_build_info *info, orr_error *err)
{
    int major = 0, minor = 0;
    char *src = NULL, nvrtc_id[64];
    orr_status st = orr_rtc_version(&major, &minor, err);
    if (!st)
        st = orr_kspec_source(spec, ORR_TARGET_GPU, &src, err);
    if (st)
        return st;
    snprintf(nvrtc_id, sizeof nvrtc_id, "nvrtc %d.%d", major, minor);
    cuda_build_ctx ctx = {.src = src, .arch = arch};
    orr_kspec_name_exprs(spec, ctx.exprs);
    ctx.nopts = orr_kspec_nvrtc_options(spec, ctx.opts);
    const char *parts[5 + ORR_KSPEC_MAX_OPTS + ORR_K_COUNT] = {"orrery-cuda-1", src, arch, nvrtc_id,
                                                                "cubin"};
    int np = 5;
    for (int k = 0; k < ctx.nopts; k++)
        parts[np++] = ctx.opts[k];
    for (int k = 0; k < ORR_K_COUNT; k++)
        parts[np++] = ctx.exprs[k];
    st = orr_engine_cached_build(parts, np, "cubin", cuda_build, &ctx, data, len, info, err);
    free(src);
    return st;
}

orr_status orr_cuda_prebuild(const orr_kspec *spec, const char *arch, orr_error *err)
{
    void *data = NULL;
    size_t len = 0;
    orr_build_info info;
    memset(&info, 0, sizeof info);
    orr_status st = build_kernels(spec, arch, &data, &len, &info, err);
    free(data);
    return st;
}

static orr_status cuda_create(orr_engine *e, orr_error *err)
{
    cuda_impl *c = calloc(1, sizeof *c);
    if (!c)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    e->impl = c;
    c->elem = e->spec.phys.precision == ORR_DOUBLE ? sizeof(double) : sizeof(float);
    orr_status st = orr_cuda_device_info(e->device, &c->info, err);
    if (!st)
        st = orr_cuda_ctx_acquire(e->device, err);
    if (st) {
        cuda_destroy(e);
        return st;
    }
    c->ctx_held = 1;
    if (e->spec.launch.block > c->info.max_threads_per_block) {
        cuda_destroy(e);
        return orr_fail(err, ORR_ERR_ARG, "invalid block size %d for %s: the limit is %d threads",
                        e->spec.launch.block, c->info.name, c->info.max_threads_per_block);
    }
    size_t shared = (size_t)e->spec.launch.block * (4 + (size_t)e->nattr) * c->elem;
    if (shared > (size_t)c->info.max_shared_per_block) {
        cuda_destroy(e);
        return orr_fail(err, ORR_ERR_ARG,
                        "invalid block size %d: a tile needs %zu bytes of shared memory, the "
                        "limit on %s is %d", e->spec.launch.block, shared, c->info.name,
                        c->info.max_shared_per_block);
    }

    char arch[32];
    snprintf(arch, sizeof arch, "sm_%d%d", c->info.cc_major, c->info.cc_minor);
    snprintf(e->build.target, sizeof e->build.target, "%s", arch);
    void *data = NULL;
    size_t len = 0;
    st = build_kernels(&e->spec, arch, &data, &len, &e->build, err);
    if (st) {
        cuda_destroy(e);
        return st;
    }
    char *names[ORR_K_COUNT];
    const void *cubin = NULL;
    double t0 = orr_now_s();
    if (!st)
        st = parse_payload(data, len, names, &cubin, err);
    if (!st)
        st = orr_cuda_module_load(cubin, &c->module, err);
    for (int k = 0; !st && k < ORR_K_COUNT; k++)
        st = orr_cuda_function(c->module, names[k], &c->fn[k], err);
    e->build.load_s = orr_now_s() - t0;
    free(data);
    if (!st) {
        int regs = 0, max_threads = 0;
        st = orr_cuda_function_limits(c->fn[ORR_K_ACCEL], &regs, &max_threads, err);
        if (!st && e->spec.launch.block > max_threads)
            st = orr_fail(err, ORR_ERR_ARG,
                          "invalid block size %d: the compiled kernel uses %d registers per "
                          "thread and can run at most %d threads per block",
                          e->spec.launch.block, regs, max_threads);
        int per_sm = 0;
        if (!st)
            st = orr_cuda_occupancy(c->fn[ORR_K_ACCEL], e->spec.launch.block, &per_sm, err);
        if (!st) {
            int r = e->variant == ORR_VARIANT_TILED ? choose_ranges(e, per_sm, c->info.sm_count)
                                                    : 1;
            long per = (e->n + r - 1) / r;
            c->jlen = (int)((per + e->spec.launch.block - 1) / e->spec.launch.block * e->spec.launch.block);
            e->ranges = (int)((e->n + c->jlen - 1) / c->jlen);   /* the last one short */
        }
    }
    if (!st)
        st = alloc_buffers(e, c, err);
    if (!st)
        st = orr_cuda_event_create(&c->ev0, err);
    if (!st)
        st = orr_cuda_event_create(&c->ev1, err);
    if (st)
        cuda_destroy(e);
    return st;
}

/* Converts n bodies between host doubles (stride hs) and the device layout. */
static void *pack(const cuda_impl *c, const double *src, int hs, int comps, long n)
{
    void *buf = calloc((size_t)n * 4, c->elem);
    if (!buf)
        return NULL;
    for (long i = 0; i < n; i++)
        for (int k = 0; k < comps; k++) {
            double v = src ? src[hs * i + k] : 0.0;
            if (c->elem == sizeof(double))
                ((double *)buf)[4 * i + k] = v;
            else
                ((float *)buf)[4 * i + k] = (float)v;
        }
    return buf;
}

static void unpack(const cuda_impl *c, const void *buf, double *dst, int hs, int comps, long n)
{
    for (long i = 0; i < n; i++)
        for (int k = 0; k < comps; k++)
            dst[hs * i + k] = c->elem == sizeof(double) ? ((const double *)buf)[4 * i + k]
                                                        : (double)((const float *)buf)[4 * i + k];
}

static orr_status upload(cuda_impl *c, orr_devptr dst, const double *src, int hs, int comps, long n,
                         orr_error *err)
{
    void *buf = pack(c, src, hs, comps, n);
    if (!buf)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    orr_status st = orr_cuda_htod(dst, buf, (size_t)n * 4 * c->elem, err);
    free(buf);
    return st;
}

static orr_status download(cuda_impl *c, orr_devptr src, double *dst, int hs, int comps, long n,
                           orr_error *err)
{
    void *buf = malloc((size_t)n * 4 * c->elem);
    if (!buf)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    orr_status st = orr_cuda_dtoh(buf, src, (size_t)n * 4 * c->elem, err);
    if (!st)
        unpack(c, buf, dst, hs, comps, n);
    free(buf);
    return st;
}

static orr_status cuda_set_state(orr_engine *e, const double *pos, const double *vel, orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = upload(c, c->pos, pos, 4, 4, e->n, err);
    return st ? st : upload(c, c->vel, vel, 3, 3, e->n, err);
}

static orr_status cuda_get_state(orr_engine *e, double *pos, double *vel, orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = pos ? download(c, c->pos, pos, 4, 4, e->n, err) : ORR_OK;
    return st || !vel ? st : download(c, c->vel, vel, 3, 3, e->n, err);
}

/* The runtime params as the kernels take them (struct orr_rtparams). */
typedef struct {
    double v[ORR_LAW_MAX_RUNTIME];
} rtparams;

static rtparams runtime_params(const orr_engine *e)
{
    rtparams p;
    memcpy(p.v, e->rt, sizeof p.v);
    return p;
}

static orr_status cuda_accel(orr_engine *e, orr_error *err)
{
    cuda_impl *c = e->impl;
    int n = (int)e->n;
    rtparams rtp = runtime_params(e);
    if (e->variant == ORR_VARIANT_NAIVE) {
        void *args[] = {&c->pos, &c->attr, &rtp, &c->acc, &n};
        return orr_cuda_launch(c->fn[ORR_K_ACCEL_NAIVE], blocks_for(n, e->spec.launch.block),
                               (unsigned)e->spec.launch.block, 0, args, err);
    }
    orr_devptr out = e->ranges > 1 ? c->parts : c->acc;
    void *args[] = {&c->pos, &c->attr, &rtp, &out, &n, &c->jlen};
    orr_status st = orr_cuda_launch_2d(c->fn[ORR_K_ACCEL],
                                       blocks_for(n, e->spec.launch.block / e->spec.launch.split * e->spec.launch.ipt),
                                       (unsigned)e->ranges, (unsigned)e->spec.launch.block, 0, args, err);
    if (st || e->ranges == 1)
        return st;
    void *cargs[] = {&c->parts, &c->acc, &n, &e->ranges};
    return orr_cuda_launch(c->fn[ORR_K_COMBINE], blocks_for(n, e->spec.launch.block),
                           (unsigned)e->spec.launch.block, 0, cargs, err);
}

static orr_status cuda_get_accel(orr_engine *e, double *acc, orr_error *err)
{
    cuda_impl *c = e->impl;
    return download(c, c->acc, acc, 3, 3, e->n, err);
}

/* kick and drift: x updated from y over the n real4 elements; kick also
 * takes the damping factor.  Scalars are passed in the kernel's precision. */
static orr_status cuda_update(orr_engine *e, int kernel, orr_devptr x, orr_devptr y, double dt,
                              double damping, orr_error *err)
{
    cuda_impl *c = e->impl;
    int n = (int)e->n, dbl = c->elem == sizeof(double);
    float dtf = (float)dt, dampf = (float)damping;
    void *dtp = dbl ? (void *)&dt : (void *)&dtf, *dp = dbl ? (void *)&damping : (void *)&dampf;
    void *kick_args[] = {&x, &y, dtp, dp, &n}, *drift_args[] = {&x, &y, dtp, &n};
    return orr_cuda_launch(c->fn[kernel], blocks_for(n, e->spec.launch.block), (unsigned)e->spec.launch.block, 0,
                           kernel == ORR_K_KICK ? kick_args : drift_args, err);
}

static orr_status cuda_kick(orr_engine *e, double dt, double damping, orr_error *err)
{
    cuda_impl *c = e->impl;
    return cuda_update(e, ORR_K_KICK, c->vel, c->acc, dt, damping, err);
}

static orr_status cuda_drift(orr_engine *e, double dt, orr_error *err)
{
    cuda_impl *c = e->impl;
    return cuda_update(e, ORR_K_DRIFT, c->pos, c->vel, dt, 1.0, err);
}

static orr_status cuda_potential(orr_engine *e, double *u, orr_error *err)
{
    cuda_impl *c = e->impl;
    int n = (int)e->n;
    rtparams rtp = runtime_params(e);
    void *args[] = {&c->pos, &c->attr, &rtp, &c->partial, &n};
    orr_status st = orr_cuda_launch(c->fn[ORR_K_POTENTIAL], c->npartial, (unsigned)e->spec.launch.block, 0,
                                    args, err);
    double *part = st ? NULL : malloc(sizeof(double) * c->npartial);
    if (!st && !part)
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (!st)
        st = orr_cuda_dtoh(part, c->partial, sizeof(double) * c->npartial, err);
    if (!st) {
        double sum = 0;
        for (unsigned b = 0; b < c->npartial; b++)
            sum += part[b];
        *u = sum;
    }
    free(part);
    return st;
}

/* Attributes go to the device as attr[i * nattr + a] (the host gives a * n + i). */
static orr_status cuda_set_attr(orr_engine *e, const double *attr, orr_error *err)
{
    cuda_impl *c = e->impl;
    size_t count = (size_t)e->n * (size_t)e->nattr;
    void *buf = malloc(count * c->elem);
    if (!buf)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    for (long i = 0; i < e->n; i++)
        for (int a = 0; a < e->nattr; a++) {
            double v = attr[(size_t)a * (size_t)e->n + (size_t)i];
            size_t k = (size_t)i * (size_t)e->nattr + (size_t)a;
            if (c->elem == sizeof(double))
                ((double *)buf)[k] = v;
            else
                ((float *)buf)[k] = (float)v;
        }
    orr_status st = orr_cuda_htod(c->attr, buf, count * c->elem, err);
    free(buf);
    return st;
}

static orr_status cuda_accel_sample(orr_engine *e, long ni, const long *idx, double *acc,
                                    orr_error *err)
{
    double *all = malloc(sizeof(double) * 3 * (size_t)e->n);
    if (!all)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    orr_status st = cuda_accel(e, err);
    if (!st)
        st = cuda_get_accel(e, all, err);
    for (long k = 0; !st && k < ni; k++)
        memcpy(acc + 3 * k, all + 3 * idx[k], 3 * sizeof(double));
    free(all);
    return st;
}

static orr_status cuda_time_steps(orr_engine *e, int steps, int force_only, double *ms,
                                  orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = orr_cuda_event_record(c->ev0, err);
    for (int s = 0; !st && s < steps; s++) {
        st = cuda_accel(e, err);
        if (!st && !force_only)
            st = cuda_kick(e, 1e-6, 1.0, err);
        if (!st && !force_only)
            st = cuda_drift(e, 1e-6, err);
    }
    float total = 0;
    if (!st)
        st = orr_cuda_event_record(c->ev1, err);
    if (!st)
        st = orr_cuda_event_elapsed(c->ev0, c->ev1, &total, err);
    if (!st)
        *ms = total / steps;
    return st;
}

const orr_backend_ops orr_backend_cuda = {
    .name = "cuda",
    .create = cuda_create,
    .destroy = cuda_destroy,
    .set_state = cuda_set_state,
    .get_state = cuda_get_state,
    .accel = cuda_accel,
    .get_accel = cuda_get_accel,
    .kick = cuda_kick,
    .drift = cuda_drift,
    .potential = cuda_potential,
    .set_attr = cuda_set_attr,
    .accel_sample = cuda_accel_sample,
    .time_steps = cuda_time_steps,
};
