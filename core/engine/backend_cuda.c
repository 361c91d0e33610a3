/* backend_cuda: the GPU backend.  The kernel spec becomes CUDA C++ source,
 * NVRTC compiles it to CUBIN for the device's own architecture (through the
 * kernel cache), the driver API loads and launches it.  Bodies live on the
 * device as real4 arrays (x, y, z, m), (vx, vy, vz, -), (ax, ay, az, -) and
 * stay there between steps; nothing is copied unless asked for (a
 * picture's density is deposited on the device, and only its grid comes
 * back: render.cu, built when first used).  Every
 * launch and copy goes to the engine's own stream (a blocking one, so the
 * default stream still waits for it), where a communication layer can
 * queue its own work on the engine's buffers. */
#include "engine_impl.h"
#include "util.h"
#include "cuda.h"
#include "rtc.h"

#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#define HPERSIST 256   /* direct.cu's ORR_HPERSIST: orr_hinterval's threads per block */

typedef struct {
    orr_gpu_info info;
    void *module;
    void *fn[ORR_KFAMILY_MAX_KERNELS];   /* the family's kernels, in its order */
    void *stream;         /* the engine's stream: every launch and copy goes here */
    orr_devptr buf[ORR_KFAMILY_MAX_BUFFERS];   /* the family's per-body buffers, real4 each */
    orr_devptr partial;   /* per-block potential sums */
    orr_devptr attr;      /* n * nattr reals, attr[i * nattr + a]; 0 without attributes */
    orr_devptr parts;     /* e->ranges * n real4 partial accelerations; 0 with one range */
    int jlen;             /* bodies j per range of the accel kernel */
    unsigned npartial;
    size_t elem;          /* sizeof(real) */
    void *ev0, *ev1;
    /* block time steps (orr_engine_block*), made when first used */
    orr_devptr hxp, hvp, hjerk;   /* predicted positions, velocities; jerks: real4 each */
    orr_devptr hpos0, hvel0;      /* the positions and velocities as the interval began */
    orr_devptr hpa, hpj;          /* 4n real4 each: partial accelerations, jerks */
    orr_devptr htick, hlevel, hact, hiota;   /* n each: u64, int, int, int (0 .. n-1) */
    orr_devptr hcnt;              /* the control words (hctl, direct.cu's orr_hctl) */
    orr_devptr hpar;              /* the interval's parameters (hpar, orr_hparams) */
    int hmode;                    /* how an interval's blocks are queued (HMODE_*) */
    int hgroups;                  /* orr_accel_jerk_groups' blocks (0: not yet known) */
    int hwatched;                 /* the host watches the blocks (orr_engine_blocks_watch) */
    int hwhy;                     /* why the last orr_engine_blocks_run returned */
    long hgrid[3];                /* blocks of the force + jerk launch of tile 64, 128, 256 */
    int hgrid_key[2 * ORR_HBUCKETS];   /* the launches per bucket hgrid was made for */
    int hgrid_ok;                 /* ... once made */
    /* blocks split between GPUs (orr_engine_blocks_split), made when first asked for */
    orr_block_split split;        /* min_active 0: none */
    orr_devptr hsc;               /* a share's control words (hctl): its count, the block's time */
    orr_devptr hchunk, hlist, hrec;   /* active per chunk; the ordered list; the records */
    orr_devptr hsome;             /* u32: the bodies cuda_blocks_some found (hlist, hrec) */
    int pred_set;                 /* hxp, hvp hold what cuda_set_predicted wrote */
    long *scounts, *sdispls;      /* each rank's share of a split block: records, offset */
    void *evc0, *evc1;            /* around the exchange on the stream */
    int comm_queued;              /* ... an exchange was timed and not yet added */
    double phase_s[4], comm_s;    /* orr_engine_blocks_stats */
    long split_blocks, split_active;
    orr_devptr flag;              /* u64: the first blow-up, step << 32 | body; all ones: none */
    /* pictures (orr_engine_deposit): the render family, built when first used */
    void *rmodule;
    void *rfn[ORR_KFAMILY_MAX_KERNELS];
    orr_devptr grid;              /* the deposit grid, grid_bytes of doubles */
    size_t grid_bytes;
    /* page-locked staging of the copies between host and device (stage_of) */
    void *stage;
    size_t stage_bytes;
    /* page-locked room of the watched loop's small copies (ctl_pin): the
     * watch's parameters, the control words written before a launch and
     * read after it; pin_queued: a copy from it not yet waited for */
    void *pin;
    int pin_queued;
    int persist_per_sm[2];        /* orr_hinterval's, orr_hinterval_watched's blocks per SM
                                     (0: not yet asked) */
} cuda_impl;

typedef struct {
    const char *src, *arch;
    orr_kexprs exprs;
    const char *opts[ORR_KSPEC_MAX_OPTS];
    int nopts;
    orr_emit emit;
} cuda_build_ctx;

/* Compiles with NVRTC into r. */
static orr_status rtc_build(const cuda_build_ctx *b, orr_rtc_result *r, orr_error *err)
{
    return orr_rtc_compile(b->src, "orrery_gen.cu", b->arch, b->opts, b->nopts, b->exprs.expr,
                           b->exprs.count, b->emit, r, err);
}

/* Cache payload: "orrery-cubin <count>\n", one lowered name per line, then
 * the CUBIN bytes. */
static orr_status cuda_build(void *ctx, void **data, size_t *len, double *seconds, orr_error *err)
{
    cuda_build_ctx *b = ctx;
    orr_rtc_result r = {0};
    orr_status st = rtc_build(b, &r, err);
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

/* Splits a payload into the family's lowered names (NUL-terminated in
 * place) and CUBIN. */
static orr_status parse_payload(char *p, size_t len, const orr_kfamily *f,
                                char *names[ORR_KFAMILY_MAX_KERNELS], const void **cubin,
                                orr_error *err)
{
    int count = 0;
    char *end = p + len, *nl;
    if (sscanf(p, "orrery-cubin %d", &count) != 1 || count != f->ngpu ||
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
    if (c->stream)   /* nothing may still run on the buffers freed below */
        orr_cuda_stream_sync(c->stream, NULL);
    for (int k = 0; k < ORR_KFAMILY_MAX_BUFFERS; k++)
        orr_cuda_free(c->buf[k]);
    orr_cuda_free(c->partial);
    orr_cuda_free(c->flag);
    orr_cuda_free(c->attr);
    orr_cuda_free(c->parts);
    orr_cuda_free(c->grid);
    orr_devptr h[] = {c->hxp, c->hvp, c->hjerk, c->hpos0, c->hvel0, c->hpa, c->hpj, c->htick,
                      c->hlevel, c->hact, c->hiota, c->hcnt, c->hpar, c->hsc, c->hchunk,
                      c->hlist, c->hrec, c->hsome};
    for (size_t k = 0; k < sizeof h / sizeof h[0]; k++)
        orr_cuda_free(h[k]);
    if (c->ev0)
        orr_cuda_event_destroy(c->ev0);
    if (c->ev1)
        orr_cuda_event_destroy(c->ev1);
    if (c->evc0)
        orr_cuda_event_destroy(c->evc0);
    if (c->evc1)
        orr_cuda_event_destroy(c->evc1);
    orr_cuda_stream_destroy(c->stream);
    orr_cuda_host_free(c->stage);
    orr_cuda_host_free(c->pin);
    if (c->module)
        orr_cuda_module_unload(c->module);
    if (c->rmodule)
        orr_cuda_module_unload(c->rmodule);
    free(c->scounts), free(c->sdispls);
    free(c);
    e->impl = NULL;
    e->stream = NULL;
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
 * The automatic choice aims at 16 waves, with at most 16 ranges and at least
 * 16 tiles in each (so small N, where the extra launch would show, keep one
 * range and leave filling the GPU to threads per body).  The cap was 8
 * until the H100 showed more paying: the default 512 / 16 at N = 262144
 * ran 1.968e12 with 8 and 2.015e12 with 13, 256 / 32 at 131072 1.966e12
 * with 8 and 2.004e12 with 16, 512 / 32 / ipt 2 / prefetch at 524288
 * 2.037e12 with 8 and 2.095e12 with 9. */
static int choose_ranges(const orr_engine *e, int blocks_per_sm, int sm_count)
{
    const long tiles = (e->n + e->spec.launch.block - 1) / e->spec.launch.block;
    if (e->spec.launch.ranges > 0)
        return (int)(e->spec.launch.ranges < tiles ? e->spec.launch.ranges : tiles);
    const double iblocks = (double)blocks_for(
        e->n, e->spec.launch.block / e->spec.launch.split * e->spec.launch.ipt);
    const double wave = (double)blocks_per_sm * sm_count;
    double want = wave > 0 ? ceil(16.0 * wave / iblocks) : 1;
    long r = want > 16 ? 16 : (long)want;
    r = r > tiles / 16 ? tiles / 16 : r;
    return r < 1 ? 1 : (int)r;
}

static orr_status alloc_buffers(orr_engine *e, cuda_impl *c, orr_error *err)
{
    size_t vec = 4 * c->elem * (size_t)e->n;
    size_t parts = e->ranges > 1 ? vec * (size_t)e->ranges : 0;
    c->npartial = blocks_for(e->n, e->spec.launch.block);
    orr_status st = ORR_OK;
    for (int k = 0; !st && k < e->family->nbuffers; k++)
        if (!(st = orr_cuda_alloc(&c->buf[k], vec, err)))
            st = orr_cuda_memset32(c->buf[k], 0, vec / 4, err);
    if (!st && parts)
        st = orr_cuda_alloc(&c->parts, parts, err);
    if (!st)
        st = orr_cuda_alloc(&c->partial, sizeof(double) * c->npartial, err);
    if (!st)
        st = orr_cuda_alloc(&c->flag, 8, err);
    if (!st)
        st = orr_cuda_memset32(c->flag, 0xffffffffu, 2, err);
    size_t attr = c->elem * (size_t)e->n * (size_t)e->nattr;
    if (!st && attr)
        st = orr_cuda_alloc(&c->attr, attr, err);
    if (!st && attr)
        st = orr_cuda_memset32(c->attr, 0, attr / 4, err);
    if (st == ORR_ERR_DEVMEM)
        orr_error_context(err, "%ld bodies in %s need %zu bytes of device memory", e->n,
                          orr_precision_name(e->spec.phys.precision),
                          (size_t)e->family->nbuffers * vec + parts + attr);
    return st;
}

/* The build context of a spec's family for arch: its source, name
 * expressions and options.  *src is heap (caller frees). */
static orr_status build_ctx(const orr_kspec *spec, const orr_kfamily *f, const char *arch,
                            orr_emit emit, cuda_build_ctx *ctx, char **src, orr_error *err)
{
    orr_status st = orr_kspec_source(spec, f, ORR_TARGET_GPU, src, err);
    if (st)
        return st;
    memset(ctx, 0, sizeof *ctx);
    ctx->src = *src;
    ctx->arch = arch;
    ctx->emit = emit;
    orr_kexprs_make(&ctx->exprs, f, spec->phys.precision);
    ctx->nopts = orr_kspec_nvrtc_options(spec, ctx->opts);
    return ORR_OK;
}

/* The spec's kernels of family f for arch as a cache payload: from the
 * kernel cache, or compiled by NVRTC and cached. */
static orr_status build_kernels(const orr_kspec *spec, const orr_kfamily *f, const char *arch,
                                void **data, size_t *len, orr_build_info *info, orr_error *err)
{
    int major = 0, minor = 0;
    char *src = NULL, nvrtc_id[64];
    cuda_build_ctx ctx;
    orr_status st = orr_rtc_version(&major, &minor, err);
    if (!st)
        st = build_ctx(spec, f, arch, ORR_EMIT_CUBIN, &ctx, &src, err);
    if (st)
        return st;
    snprintf(nvrtc_id, sizeof nvrtc_id, "nvrtc %d.%d", major, minor);
    const char *parts[6 + ORR_KSPEC_MAX_OPTS + ORR_KFAMILY_MAX_KERNELS] = {
        "orrery-cuda-1", f->name, src, arch, nvrtc_id, "cubin"};
    int np = 6;
    for (int k = 0; k < ctx.nopts; k++)
        parts[np++] = ctx.opts[k];
    for (int k = 0; k < ctx.exprs.count; k++)
        parts[np++] = ctx.exprs.expr[k];
    orr_trace("kernel cache lookup");
    st = orr_kcache_build(parts, np, "cubin", cuda_build, &ctx, data, len, info, err);
    orr_trace("kernel cache lookup done");
    free(src);
    return st;
}

orr_status orr_cuda_prebuild(const orr_kspec *spec, const char *arch, orr_error *err)
{
    void *data = NULL;
    size_t len = 0;
    orr_build_info info;
    memset(&info, 0, sizeof info);
    orr_status st = build_kernels(spec, &orr_family_direct, arch, &data, &len, &info, err);
    free(data);
    return st;
}

orr_status orr_cuda_compile(const orr_kspec *spec, const orr_kfamily *f, const char *arch,
                            orr_emit emit, orr_compiled *out, orr_error *err)
{
    char *src = NULL;
    cuda_build_ctx ctx;
    orr_rtc_result r = {0};
    orr_status st = build_ctx(spec, f, arch, emit, &ctx, &src, err);
    if (!st)
        st = rtc_build(&ctx, &r, err);
    free(src);
    if (st)
        return st;
    /* PTX comes with its NUL, which the file does not get */
    out->len = emit == ORR_EMIT_PTX && r.size ? r.size - 1 : r.size;
    out->data = r.image;
    r.image = NULL;
    out->seconds = r.seconds;
    snprintf(out->arch, sizeof out->arch, "%s", arch);
    size_t used = 0;
    out->kernels[0] = '\0';
    for (int k = 0; k < r.nlowered && used < sizeof out->kernels; k++) {
        int w = snprintf(out->kernels + used, sizeof out->kernels - used, "%s%s", k ? " " : "",
                         r.lowered[k]);
        used += w > 0 ? (size_t)w : 0;
    }
    orr_rtc_result_free(&r);
    return ORR_OK;
}

static orr_status cuda_create(orr_engine *e, orr_error *err)
{
    cuda_impl *c = calloc(1, sizeof *c);
    if (!c)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    e->impl = c;
    c->elem = ORR_STORED_DOUBLE(e->spec.phys.precision) ? sizeof(double) : sizeof(float);
    orr_status st = orr_cuda_device_info(e->device, &c->info, err);
    if (!st)
        st = orr_cuda_ctx_acquire(e->device, err);
    if (st) {
        cuda_destroy(e);
        return st;
    }
    const int block = e->spec.launch.block;
    if (block > c->info.max_threads_per_block) {
        cuda_destroy(e);
        return orr_fail(err, ORR_ERR_ARG, "invalid block size %d for %s: the limit is %d threads",
                        block, c->info.name, c->info.max_threads_per_block);
    }
    size_t shared = (size_t)block * (4 + (size_t)e->nattr) * c->elem;
    if (shared > (size_t)c->info.max_shared_per_block) {
        cuda_destroy(e);
        return orr_fail(err, ORR_ERR_ARG,
                        "invalid block size %d: a tile needs %zu bytes of shared memory, the "
                        "limit on %s is %d", block, shared, c->info.name,
                        c->info.max_shared_per_block);
    }

    char arch[32];
    orr_cuda_arch_name(&c->info, arch, sizeof arch);
    snprintf(e->build.target, sizeof e->build.target, "%s", arch);
    void *data = NULL;
    size_t len = 0;
    st = build_kernels(&e->spec, e->family, arch, &data, &len, &e->build, err);
    if (st) {
        cuda_destroy(e);
        return st;
    }
    char *names[ORR_KFAMILY_MAX_KERNELS];
    const void *cubin = NULL;
    double t0 = orr_now_s();
    st = parse_payload(data, len, e->family, names, &cubin, err);
    if (!st)
        st = orr_cuda_module_load(cubin, &c->module, err);
    for (int k = 0; !st && k < e->family->ngpu; k++)
        st = orr_cuda_function(c->module, names[k], &c->fn[k], err);
    e->build.load_s = orr_now_s() - t0;
    free(data);
    if (!st) {
        int regs = 0, max_threads = 0;
        st = orr_cuda_function_limits(c->fn[ORR_K_ACCEL], &regs, &max_threads, err);
        if (!st && block > max_threads)
            st = orr_fail(err, ORR_ERR_ARG,
                          "invalid block size %d: the compiled kernel uses %d registers per "
                          "thread and can run at most %d threads per block",
                          block, regs, max_threads);
        int per_sm = 0;
        if (!st)
            st = orr_cuda_occupancy(c->fn[ORR_K_ACCEL], block, &per_sm, err);
        if (!st) {
            int r = e->variant == ORR_VARIANT_TILED ? choose_ranges(e, per_sm, c->info.sm_count)
                                                    : 1;
            long per = (e->n + r - 1) / r;
            c->jlen = (int)((per + block - 1) / block * block);
            e->ranges = (int)((e->n + c->jlen - 1) / c->jlen);   /* the last one short */
            const long wave = (long)per_sm * c->info.sm_count / e->ranges;
            e->wave_targets = (wave > 0 ? wave : 1) * (long)(block / e->spec.launch.split *
                                                             e->spec.launch.ipt);
        }
    }
    orr_trace("kernels loaded");
    if (!st)
        st = orr_cuda_stream_create(&c->stream, err);
    e->stream = c->stream;
    if (!st)
        st = alloc_buffers(e, c, err);
    orr_trace("stream and buffers");
    if (!st)
        st = orr_cuda_event_create(&c->ev0, err);
    if (!st)
        st = orr_cuda_event_create(&c->ev1, err);
    if (st)
        cuda_destroy(e);
    return st;
}

/* Converts n bodies between host doubles (stride hs) and the device layout. */
static void pack_into(const cuda_impl *c, void *buf, const double *src, int hs, int comps, long n)
{
    for (long i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) {
            double v = src && k < comps ? src[hs * i + k] : 0.0;
            if (c->elem == sizeof(double))
                ((double *)buf)[4 * i + k] = v;
            else
                ((float *)buf)[4 * i + k] = (float)v;
        }
}

static void unpack(const cuda_impl *c, const void *buf, double *dst, int hs, int comps, long n)
{
    for (long i = 0; i < n; i++)
        for (int k = 0; k < comps; k++)
            dst[hs * i + k] = c->elem == sizeof(double) ? ((const double *)buf)[4 * i + k]
                                                        : (double)((const float *)buf)[4 * i + k];
}

/* The staging buffer, page-locked, of at least `bytes`: the copies of a
 * call are queued from and into it together and waited for once (the
 * host's blocks of regularised runs copy the state at every stop,
 * hermite.c). */
static orr_status stage_of(cuda_impl *c, size_t bytes, void **buf, orr_error *err)
{
    if (bytes > c->stage_bytes) {
        orr_cuda_host_free(c->stage);
        c->stage = NULL, c->stage_bytes = 0;
        const size_t want = bytes + bytes / 4;
        orr_status st = orr_cuda_host_alloc(&c->stage, want, err);
        if (st)
            return st;
        c->stage_bytes = want;
    }
    *buf = c->stage;
    return ORR_OK;
}

/* A copy of the arrays of a transfer: k of them, each n bodies of real4
 * (device) against host doubles (stride hs, comps components). */
typedef struct {
    orr_devptr dev;
    double *host;
    int hs, comps;
} vec_copy;

/* A raw array's room in the stage: its bytes rounded up to 16. */
static size_t padded(size_t bytes)
{
    return (bytes + 15) / 16 * 16;
}

/* Copies in (set) or out of k real4 arrays of n bodies, plus raw bytes
 * (raw_n of them: device, host, size), through the stage: queued on the
 * engine's stream in order with its kernels, waited for once. */
static orr_status transfer(cuda_impl *c, int set, const vec_copy *v, int k, long n,
                           const orr_devptr *raw_dev, void *const *raw_host,
                           const size_t *raw_size, int raw_n, orr_error *err)
{
    const size_t vec = (size_t)n * 4 * c->elem;
    size_t bytes = vec * (size_t)k;
    for (int r = 0; r < raw_n; r++)
        bytes += padded(raw_size[r]);
    void *buf = NULL;
    orr_status st = stage_of(c, bytes, &buf, err);
    size_t off = 0;
    for (int q = 0; !st && q < k; q++, off += vec) {
        char *b = (char *)buf + off;
        if (set) {
            pack_into(c, b, v[q].host, v[q].hs, v[q].comps, n);
            st = orr_cuda_htod_async(v[q].dev, b, vec, c->stream, err);
        } else {
            st = orr_cuda_dtoh_async(b, v[q].dev, vec, c->stream, err);
        }
    }
    size_t roff = off;
    for (int r = 0; !st && r < raw_n; r++) {
        char *b = (char *)buf + roff;
        if (set) {
            memcpy(b, raw_host[r], raw_size[r]);
            st = orr_cuda_htod_async(raw_dev[r], b, raw_size[r], c->stream, err);
        } else {
            st = orr_cuda_dtoh_async(b, raw_dev[r], raw_size[r], c->stream, err);
        }
        roff += padded(raw_size[r]);
    }
    if (!st)
        st = orr_cuda_stream_sync(c->stream, err);
    if (st || set)
        return st;
    for (int q = 0; q < k; q++)
        unpack(c, (char *)buf + vec * (size_t)q, v[q].host, v[q].hs, v[q].comps, n);
    roff = off;
    for (int r = 0; r < raw_n; r++) {
        memcpy(raw_host[r], (char *)buf + roff, raw_size[r]);
        roff += padded(raw_size[r]);
    }
    return ORR_OK;
}

/* Copies in and out go through the engine's stream, in order with its
 * kernels; the host buffer is free again when the call returns. */
static orr_status upload(cuda_impl *c, orr_devptr dst, const double *src, int hs, int comps, long n,
                         orr_error *err)
{
    const vec_copy v = {dst, (double *)src, hs, comps};
    return transfer(c, 1, &v, 1, n, NULL, NULL, NULL, 0, err);
}

static orr_status download(cuda_impl *c, orr_devptr src, double *dst, int hs, int comps, long n,
                           orr_error *err)
{
    const vec_copy v = {src, dst, hs, comps};
    return transfer(c, 0, &v, 1, n, NULL, NULL, NULL, 0, err);
}

/* Body `first` of buffer b. */
static orr_devptr rec(const cuda_impl *c, orr_devptr b, long first)
{
    return b + (orr_devptr)(4 * c->elem * (size_t)first);
}

static orr_status cuda_set_state(orr_engine *e, const double *pos, const double *vel, orr_error *err)
{
    cuda_impl *c = e->impl;
    const vec_copy v[2] = {{c->buf[ORR_BUF_POS], (double *)pos, 4, 4},
                           {c->buf[ORR_BUF_VEL], (double *)vel, 3, 3}};
    c->pred_set = 0;   /* the force + jerk reads these again */
    return transfer(c, 1, v, 2, e->n, NULL, NULL, NULL, 0, err);
}

static orr_status cuda_get_state(orr_engine *e, double *pos, double *vel, orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = pos ? download(c, c->buf[ORR_BUF_POS], pos, 4, 4, e->n, err) : ORR_OK;
    return st || !vel ? st : download(c, c->buf[ORR_BUF_VEL], vel, 3, 3, e->n, err);
}

/* The runtime params as the kernels take them (struct orr_rtparams). */
typedef struct {
    double v[ORR_RT_SLOTS];
} rtparams;

static rtparams runtime_params(const orr_engine *e)
{
    rtparams p;
    memcpy(p.v, e->rt, sizeof p.v);
    return p;
}

/* The tiled accel kernel for the targets t over the j-ranges [y0, y1). */
static orr_status launch_ranges(orr_engine *e, orr_range t, int y0, int y1, orr_error *err)
{
    cuda_impl *c = e->impl;
    if (y0 >= y1)
        return ORR_OK;
    int n = (int)e->n, first = (int)t.first, count = (int)t.count;
    const int block = e->spec.launch.block;
    rtparams rtp = runtime_params(e);
    /* the targets as arrays of their own: their positions, attributes and
     * outputs from body `first` on (the outputs' rows keep stride n) */
    orr_devptr pos = c->buf[ORR_BUF_POS];
    orr_devptr ipos = rec(c, pos, first);
    orr_devptr out = rec(c, e->ranges > 1 ? c->parts : c->buf[ORR_BUF_ACC], first);
    orr_devptr iattr = c->attr ? c->attr + (orr_devptr)((size_t)first * (size_t)e->nattr * c->elem)
                               : 0;
    void *args[] = {&pos, &c->attr, &ipos, &iattr, &rtp, &out, &n, &c->jlen, &count, &y0};
    return orr_cuda_launch_2d(
        c->fn[ORR_K_ACCEL], blocks_for(count, block / e->spec.launch.split * e->spec.launch.ipt),
        (unsigned)(y1 - y0), (unsigned)block, 0, c->stream, args, err);
}

/* The j-ranges [*y0, *y1) that lie wholly inside the targets t (the last
 * range ends at n, short). */
static void local_ranges(const orr_engine *e, const cuda_impl *c, orr_range t, int *y0, int *y1)
{
    const long jlen = c->jlen, end = t.first + t.count;
    *y0 = (int)((t.first + jlen - 1) / jlen);
    *y1 = end == e->n ? e->ranges : (int)(end / jlen);
    if (*y1 < *y0)
        *y1 = *y0;
}

static orr_status cuda_accel(orr_engine *e, orr_range t, orr_force_part part, orr_error *err)
{
    cuda_impl *c = e->impl;
    int n = (int)e->n, first = (int)t.first, count = (int)t.count;
    const int block = e->spec.launch.block;
    orr_devptr acc = c->buf[ORR_BUF_ACC];
    if (e->variant == ORR_VARIANT_NAIVE) {
        if (part == ORR_FORCE_LOCAL)   /* one pass over every source: all of it in REST */
            return ORR_OK;
        rtparams rtp = runtime_params(e);
        orr_devptr pos = c->buf[ORR_BUF_POS];
        void *args[] = {&pos, &c->attr, &rtp, &acc, &n, &first, &count};
        return orr_cuda_launch(c->fn[ORR_K_ACCEL_NAIVE], blocks_for(count, block),
                               (unsigned)block, 0, c->stream, args, err);
    }
    int y0 = 0, y1 = 0;
    local_ranges(e, c, t, &y0, &y1);
    orr_status st;
    if (part == ORR_FORCE_WHOLE)
        st = launch_ranges(e, t, 0, e->ranges, err);
    else if (part == ORR_FORCE_LOCAL)
        return launch_ranges(e, t, y0, y1, err);
    else if ((st = launch_ranges(e, t, 0, y0, err)) == ORR_OK)
        st = launch_ranges(e, t, y1, e->ranges, err);
    if (!st && e->ranges > 1) {
        void *cargs[] = {&c->parts, &acc, &n, &e->ranges, &first, &count};
        st = orr_cuda_launch(c->fn[ORR_K_COMBINE], blocks_for(count, block), (unsigned)block, 0,
                             c->stream, cargs, err);
    }
    if (!st && e->fields.n > 0 && count > 0) {   /* the fields on the total */
        rtparams rtp = runtime_params(e);
        orr_devptr ipos = rec(c, c->buf[ORR_BUF_POS], first), iacc = rec(c, acc, first);
        void *fargs[] = {&ipos, &rtp, &iacc, &count};
        st = orr_cuda_launch(c->fn[ORR_K_FIELDS_ADD], blocks_for(count, block), (unsigned)block,
                             0, c->stream, fargs, err);
    }
    return st;
}

static orr_status cuda_get_accel(orr_engine *e, orr_range t, double *acc, orr_error *err)
{
    cuda_impl *c = e->impl;
    return download(c, rec(c, c->buf[ORR_BUF_ACC], t.first), acc, 3, 3, t.count, err);
}

/* kick and drift: x updated from y for the targets; kick also takes the
 * damping factor.  Scalars are passed in the kernel's precision. */
static orr_status cuda_update(orr_engine *e, int kernel, orr_range t, orr_devptr x, orr_devptr y,
                              double dt, double damping, orr_error *err)
{
    cuda_impl *c = e->impl;
    int first = (int)t.first, count = (int)t.count, dbl = c->elem == sizeof(double);
    float dtf = (float)dt, dampf = (float)damping;
    void *dtp = dbl ? (void *)&dt : (void *)&dtf, *dp = dbl ? (void *)&damping : (void *)&dampf;
    unsigned step = (unsigned)e->step;
    void *kick_args[] = {&x, &y, dtp, dp, &first, &count, &c->flag, &step};
    void *drift_args[] = {&x, &y, dtp, &first, &count, &c->flag, &step};
    return orr_cuda_launch(c->fn[kernel], blocks_for(count, e->spec.launch.block),
                           (unsigned)e->spec.launch.block, 0, c->stream,
                           kernel == ORR_K_KICK ? kick_args : drift_args, err);
}

static orr_status cuda_kick(orr_engine *e, orr_range t, double dt, double damping, orr_error *err)
{
    cuda_impl *c = e->impl;
    return cuda_update(e, ORR_K_KICK, t, c->buf[ORR_BUF_VEL], c->buf[ORR_BUF_ACC], dt, damping,
                       err);
}

static orr_status cuda_drift(orr_engine *e, orr_range t, double dt, orr_error *err)
{
    cuda_impl *c = e->impl;
    return cuda_update(e, ORR_K_DRIFT, t, c->buf[ORR_BUF_POS], c->buf[ORR_BUF_VEL], dt, 1.0, err);
}

/* A per-block sum kernel over the targets t (args: its arguments, the
 * partial sums' buffer among them), the blocks' sums added on the host. */
static orr_status partial_sum(orr_engine *e, cuda_impl *c, int kernel, orr_range t, void **args,
                              double *u, orr_error *err)
{
    const unsigned blocks = blocks_for(t.count, e->spec.launch.block);
    orr_status st = blocks ? orr_cuda_launch(c->fn[kernel], blocks,
                                             (unsigned)e->spec.launch.block, 0, c->stream, args,
                                             err)
                           : ORR_OK;
    double *part = st ? NULL : malloc(sizeof(double) * (blocks ? blocks : 1));
    if (!st && !part)
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (!st && blocks)
        st = orr_cuda_dtoh_async(part, c->partial, sizeof(double) * blocks, c->stream, err);
    if (!st)
        st = orr_cuda_stream_sync(c->stream, err);
    if (!st) {
        double sum = 0;
        for (unsigned b = 0; b < blocks; b++)
            sum += part[b];
        *u = sum;
    }
    free(part);
    return st;
}

static orr_status cuda_potential(orr_engine *e, orr_range t, double *u, orr_error *err)
{
    cuda_impl *c = e->impl;
    int n = (int)e->n, first = (int)t.first, count = (int)t.count;
    rtparams rtp = runtime_params(e);
    void *args[] = {&c->buf[ORR_BUF_POS], &c->attr, &rtp, &c->partial, &n, &first, &count};
    return partial_sum(e, c, ORR_K_POTENTIAL, t, args, u, err);
}

static orr_status cuda_field_potential(orr_engine *e, orr_range t, double *u, orr_error *err)
{
    cuda_impl *c = e->impl;
    int first = (int)t.first, count = (int)t.count;
    rtparams rtp = runtime_params(e);
    void *args[] = {&c->buf[ORR_BUF_POS], &rtp, &c->partial, &first, &count};
    return partial_sum(e, c, ORR_K_FIELD_POTENTIAL, t, args, u, err);
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
    orr_status st = orr_cuda_htod_async(c->attr, buf, count * c->elem, c->stream, err);
    if (!st)
        st = orr_cuda_stream_sync(c->stream, err);
    free(buf);
    return st;
}

static orr_status cuda_accel_sample(orr_engine *e, long ni, const long *idx, double *acc,
                                    orr_error *err)
{
    /* the acceleration buffer is an integrator's state (leapfrog's last
     * force, Hermite's accelerations): kept aside and put back, so a
     * diagnostic changes nothing */
    cuda_impl *c = e->impl;
    const size_t vec = 4 * c->elem * (size_t)e->n;
    double *all = malloc(sizeof(double) * 3 * (size_t)e->n);
    orr_devptr keep = 0;
    orr_status st = all ? orr_cuda_alloc(&keep, vec, err)
                        : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (!st)
        st = orr_cuda_dtod_async(keep, c->buf[ORR_BUF_ACC], vec, c->stream, err);
    const orr_range whole = orr_engine_all(e);
    if (!st)
        st = cuda_accel(e, whole, ORR_FORCE_WHOLE, err);
    if (!st)
        st = cuda_get_accel(e, whole, all, err);
    for (long k = 0; !st && k < ni; k++)
        memcpy(acc + 3 * k, all + 3 * idx[k], 3 * sizeof(double));
    if (keep) {
        orr_status back = orr_cuda_dtod_async(c->buf[ORR_BUF_ACC], keep, vec, c->stream,
                                              st ? NULL : err);
        if (!back)
            back = orr_cuda_stream_sync(c->stream, st ? NULL : err);
        st = st ? st : back;
        orr_cuda_free(keep);
    }
    free(all);
    return st;
}

/* The end of a timing begun with ev0 recorded on the stream: ms per pass
 * of `passes` passes. */
static orr_status timed_end(cuda_impl *c, int passes, double *ms, orr_error *err)
{
    float total = 0;
    orr_status st = orr_cuda_event_record(c->ev1, c->stream, err);
    if (!st)
        st = orr_cuda_event_elapsed(c->ev0, c->ev1, &total, err);
    if (!st)
        *ms = total / passes;
    return st;
}

static orr_status cuda_time_steps(orr_engine *e, orr_range all, int steps, int force_only,
                                  double *ms, orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = orr_cuda_event_record(c->ev0, c->stream, err);
    for (int s = 0; !st && s < steps; s++) {
        st = cuda_accel(e, all, ORR_FORCE_WHOLE, err);
        if (!st && !force_only)
            st = cuda_kick(e, all, 1e-6, 1.0, err);
        if (!st && !force_only)
            st = cuda_drift(e, all, 1e-6, err);
    }
    return st ? st : timed_end(c, steps, ms, err);
}

/* ---- block time steps (the Hermite integrator; kernels in direct.cu) ---- */

#define HMAX 40
_Static_assert(ORR_HBUCKETS == 13, "direct.cu's ORR_HBUCKETS must be engine.h's");

/* direct.cu's orr_hctl, orr_hparams and orr_hplan, as the host sees them. */
typedef struct {
    unsigned long long next;
    unsigned count;
    int deepest;
    unsigned long long last, blocks, active;
    unsigned last_count, done, bar[2];
    unsigned split, stop;
    unsigned long long phase[4], ahead[2], cstop;
} hctl;
typedef struct {
    double H, eta, unit, anoise;
    unsigned long long max_blocks;
    int hi, npairs;
    unsigned long long stop;
    double pull, near2, peri, peri_b, G;
    int ndec, pad;
    int dec_a[ORR_WATCH_DECLINED], dec_b[ORR_WATCH_DECLINED];
    unsigned long long dec_until[ORR_WATCH_DECLINED];
} hpar;
typedef struct {   /* direct.cu's orr_hpair: after hpar in its buffer, ORR_WATCH_PAIRS of them */
    int centre, other, fast, pl0, npl, pad;
    double m0, m1, t0, r[3], v[3], R2, cap;
} hpair;
_Static_assert(sizeof(hpar) % 8 == 0 && sizeof(hpair) == 112, "direct.cu's orr_hparams, orr_hpair");
_Static_assert(ORR_WATCH_DECLINED == 16, "direct.cu's ORR_HDECLINED");
/* after the pairs (ORR_WATCH_PAIRS of them: direct.cu's ORR_HPAIRS), the
 * fast pairs' perturbers, ORR_WATCH_PERT_MAX ints a pair at the most */
_Static_assert(ORR_WATCH_PAIRS == 64 && ORR_WATCH_PERT_MAX == 1024, "direct.cu's ORR_HPAIRS");
#define HPAR_BYTES (sizeof(hpar) + ORR_WATCH_PAIRS * sizeof(hpair) + \
                    4 * (size_t)ORR_WATCH_PAIRS * ORR_WATCH_PERT_MAX)

/* The watched loop's page-locked room (PIN_BYTES) in parts: 0 the watch's
 * parameters (PIN_WATCH bytes from 0), 1 the control words written before
 * a launch (from PIN_WATCH), 2 those read after it (PIN_WATCH + 256).  Its
 * copies are queued without waiting; a part with one still queued is
 * waited for before it is written again (pin_queued, a bit a part; every
 * run waits for its launch). */
#define PIN_WATCH (HPAR_BYTES + 64)
#define PIN_BYTES (PIN_WATCH + 1024)
static orr_status ctl_pin(cuda_impl *c, int part, char **pin, orr_error *err)
{
    orr_status st = c->pin ? ORR_OK : orr_cuda_host_alloc(&c->pin, PIN_BYTES, err);
    if (!st && (c->pin_queued >> part & 1)) {
        st = orr_cuda_stream_sync(c->stream, err);
        c->pin_queued = 0;
    }
    if (st)
        return st;
    c->pin_queued |= 1 << part;   /* the caller queues a copy of it */
    *pin = (char *)c->pin + (part == 0 ? 0 : part == 1 ? PIN_WATCH : PIN_WATCH + 256);
    return ORR_OK;
}
typedef struct {
    int tile[ORR_HBUCKETS], per_sm[ORR_HBUCKETS];
    int sms;
} hplan;

/* How an interval's blocks are queued (ORRERY_HBLOCKS; docs/PERFORMANCE.md
 * has the measurements, and those of a CUDA graph with conditional nodes,
 * which was slower than either of the first two): one persistent kernel
 * for the whole interval, its phases apart by grid barriers (persist:
 * orr_hinterval, a cooperative launch; the default, the fastest measured);
 * batches of plain launches, every kernel of every tile in use, which do
 * nothing once the interval is done (batch); or one block at a time with
 * its time and count read back (block). */
enum { HMODE_UNSET, HMODE_BATCH, HMODE_BLOCK, HMODE_PERSIST };

static orr_status hmode_of(int *mode, orr_error *err)
{
    int m = 0;
    long split = 0;
    orr_status st = orr_hblocks_env(&m, &split, err);
    *mode = m == 1 ? HMODE_BATCH : m == 2 ? HMODE_BLOCK : HMODE_PERSIST;
    return st;
}


static orr_status blocks_alloc(orr_engine *e, cuda_impl *c, orr_error *err)
{
    if (c->hcnt)
        return ORR_OK;
    const size_t vec = 4 * c->elem * (size_t)e->n, n = (size_t)e->n;
    int mode = 0;
    orr_status st = hmode_of(&mode, err);   /* before anything is made */
    if (st)
        return st;
    orr_devptr *v[] = {&c->hxp, &c->hvp, &c->hjerk, &c->hpos0, &c->hvel0};
    for (int k = 0; !st && k < 5; k++)
        if (!(st = orr_cuda_alloc(v[k], vec, err)))
            st = orr_cuda_memset32(*v[k], 0, vec / 4, err);
    if (!st)
        st = orr_cuda_alloc(&c->hpa, 4 * vec, err);
    if (!st)
        st = orr_cuda_alloc(&c->hpj, 4 * vec, err);
    if (!st)
        st = orr_cuda_alloc(&c->htick, 8 * n, err);
    if (!st && !(st = orr_cuda_alloc(&c->hlevel, 4 * n, err)))
        st = orr_cuda_memset32(c->hlevel, 0, n, err);
    if (!st)
        st = orr_cuda_alloc(&c->hact, 4 * n, err);
    if (!st)
        st = orr_cuda_alloc(&c->hiota, 4 * n, err);
    const size_t parbytes = HPAR_BYTES;
    if (!st && !(st = orr_cuda_alloc(&c->hpar, parbytes, err)))
        st = orr_cuda_memset32(c->hpar, 0, parbytes / 4, err);
    if (!st && !(st = orr_cuda_alloc(&c->hcnt, sizeof(hctl), err)))
        st = orr_cuda_memset32(c->hcnt, 0, sizeof(hctl) / 4, err);
    int *iota = st ? NULL : malloc(4 * n);
    if (!st && !iota)
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    for (size_t i = 0; !st && i < n; i++)
        iota[i] = (int)i;
    if (!st)
        st = orr_cuda_htod(c->hiota, iota, 4 * n, err);
    free(iota);
    if (st == ORR_ERR_DEVMEM)
        orr_error_context(err, "the Hermite integrator's state of %ld bodies", e->n);
    if (!st)
        c->hmode = mode;
    return st;
}

/* The force + jerk launches per bucket, as the kernels take them. */
static hplan plan_of(const orr_engine *e, const cuda_impl *c)
{
    hplan p;
    memset(&p, 0, sizeof p);
    for (int k = 0; k < ORR_HBUCKETS; k++) {
        const orr_hlaunch l = orr_engine_hlaunch(e, k);
        p.tile[k] = l.tile;
        p.per_sm[k] = l.per_sm;
    }
    p.sms = c->info.sm_count;
    return p;
}

static int tile_kernel(int tile)
{
    return tile == 64 ? ORR_K_ACCEL_JERK64 : tile == 128 ? ORR_K_ACCEL_JERK128
                                                         : ORR_K_ACCEL_JERK256;
}

/* The force + jerk kernel on the nact bodies act[] (count in the control
 * words), from all predicted bodies, with the launch of nact's bucket
 * (orr_engine_hlaunch: the tile, and the j-split: ranges until the blocks
 * number about per_sm per SM, so a block with few active bodies still
 * fills the GPU; at most 256 ranges, and at most 4n partials), one block
 * per item; then (combine) the combine of its j-ranges into row 0 of hpa,
 * hpj.  Where the persistent kernel runs the blocks (the default), the
 * items are run as its force phase runs them (orr_accel_jerk_groups: the
 * same bits, its speed), so the tuner times what the blocks will do. */
static orr_status accel_jerk(orr_engine *e, cuda_impl *c, orr_devptr act, orr_devptr ctl,
                             long nact, int combine, orr_error *err)
{
    const orr_hlaunch l = orr_engine_hlaunch(e, orr_hbucket(nact));
    int n = (int)e->n, stride = (int)nact;
    long iblocks = 0;
    int ranges = orr_hlaunch_shape(e->n, nact, l, c->info.sm_count, NULL, &iblocks, NULL);
    const long items = iblocks * ranges;
    rtparams rtp = runtime_params(e);
    hplan plan = plan_of(e, c);
    void *args[] = {&c->hxp, &c->hvp, &c->attr, &act, &ctl, &rtp, &plan, &c->hpa, &c->hpj, &n};
    orr_status st;
    if (c->hmode == HMODE_PERSIST) {   /* as orr_hinterval's force phase runs them */
        st = ORR_OK;
        if (!c->hgroups) {   /* its blocks per SM, no more than orr_hinterval's */
            int a = 0, b = 0;
            st = orr_cuda_occupancy(c->fn[ORR_K_ACCEL_JERK_GROUPS], HPERSIST, &a, err);
            if (!st)
                st = orr_cuda_occupancy(c->fn[ORR_K_HINTERVAL], HPERSIST, &b, err);
            a = b > 0 && b < a ? b : a;
            c->hgroups = (a > 0 ? a : 1) * c->info.sm_count;
        }
        if (!st)
            st = orr_cuda_launch(c->fn[ORR_K_ACCEL_JERK_GROUPS], (unsigned)c->hgroups, HPERSIST,
                                 0, c->stream, args, err);
    } else {
        st = orr_cuda_launch(c->fn[tile_kernel(l.tile)], (unsigned)items, (unsigned)l.tile, 0,
                             c->stream, args, err);
    }
    if (st || ranges == 1 || !combine)
        return st;
    void *cargs[] = {&c->hpa, &c->hpj, &ctl, &ranges, &stride};
    return orr_cuda_launch(c->fn[ORR_K_JERK_COMBINE], blocks_for(32 * nact, e->spec.launch.block),
                           (unsigned)e->spec.launch.block, 0, c->stream, cargs, err);
}

/* The control words as an interval begins: no block yet. */
static orr_status ctl_reset(cuda_impl *c, orr_error *err)
{
    const hctl h = {.next = ~0ULL};
    return orr_cuda_htod_async(c->hcnt, &h, sizeof h, c->stream, err);
}

/* The control words' block time and active count, and not done; the
 * interval's statistics are left as they are (a tuning between the
 * blocks of an interval: orr_sim_tune after sim:step()). */
static orr_status set_ctl(cuda_impl *c, unsigned long long next, unsigned count, orr_error *err)
{
    const hctl h = {.next = next, .count = count};
    orr_status st = orr_cuda_htod_async(c->hcnt, &h, offsetof(hctl, deepest), c->stream, err);
    return st ? st : orr_cuda_htod_async(c->hcnt + offsetof(hctl, done), &h.done,
                                         sizeof h.done, c->stream, err);
}

/* The ni bodies idx as the active list, and the positions and
 * velocities as set as the predicted ones: what the force + jerk kernel
 * reads. */
static orr_status jerk_inputs(orr_engine *e, cuda_impl *c, long ni, const long *idx,
                              orr_error *err)
{
    orr_status st = blocks_alloc(e, c, err);
    const size_t vec = 4 * c->elem * (size_t)e->n;
    unsigned *ix = st ? NULL : malloc(4 * ((size_t)ni + 1));
    if (!st && !ix)
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    for (long k = 0; !st && k < ni; k++)
        ix[k] = (unsigned)idx[k];
    if (!st && !(st = orr_cuda_htod_async(c->hact, ix, 4 * (size_t)ni, c->stream, err)) &&
        !(st = set_ctl(c, ~0ULL, (unsigned)ni, err)) && !c->pred_set &&
        !(st = orr_cuda_dtod_async(c->hxp, c->buf[ORR_BUF_POS], vec, c->stream, err)))
        st = orr_cuda_dtod_async(c->hvp, c->buf[ORR_BUF_VEL], vec, c->stream, err);
    c->pred_set = 0;   /* once: the next force + jerk reads the state unless set again */
    free(ix);   /* pageable: the driver has staged it when the copy call returns */
    return st;
}

/* The host-driven form (hermite.c's path over several ranks): the force
 * and jerk of the ni bodies idx from the positions and velocities as set,
 * with the kernels of the engine's own block steps. */
static orr_status cuda_accel_jerk(orr_engine *e, long ni, const long *idx, double *acc,
                                  double *jerk, orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = jerk_inputs(e, c, ni, idx, err);
    if (!st)
        st = accel_jerk(e, c, c->hact, c->hcnt, ni, 1, err);
    const vec_copy v[2] = {{c->hpa, acc, 3, 3}, {c->hpj, jerk, 3, 3}};
    return st ? st : transfer(c, 0, v, 2, ni, NULL, NULL, NULL, 0, err);
}

static orr_status cuda_time_accel_jerk(orr_engine *e, long ni, const long *idx, int reps,
                                       double *ms, orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = jerk_inputs(e, c, ni, idx, err);
    if (!st)
        st = orr_cuda_event_record(c->ev0, c->stream, err);
    for (int k = 0; !st && k < reps; k++)
        st = accel_jerk(e, c, c->hact, c->hcnt, ni, 1, err);
    return st ? st : timed_end(c, reps, ms, err);
}

static orr_status cuda_blocks_begin(orr_engine *e, const orr_block_params *p, int fresh,
                                    int keep_steps, orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = blocks_alloc(e, c, err);
    const size_t vec = 4 * c->elem * (size_t)e->n;
    const hpar par = {p->H, p->eta, p->H / (double)(1LL << HMAX), p->anoise,
                      p->max_blocks > 0 ? (unsigned long long)p->max_blocks : ~0ULL, p->hi, 0,
                      ~0ULL, INFINITY, 0, 0, 0, 0, 0, 0, {0}, {0}, {0}};   /* no watch */
    c->hwatched = 0;
    c->hwhy = 0;
    if (!st)
        st = orr_cuda_memset32(c->htick, 0, 2 * (size_t)e->n, err);
    if (!st)
        st = orr_cuda_htod_async(c->hpar, &par, sizeof par, c->stream, err);
    if (!st)   /* the start, for cuda_blocks_abort */
        st = orr_cuda_dtod_async(c->hpos0, c->buf[ORR_BUF_POS], vec, c->stream, err);
    if (!st)
        st = orr_cuda_dtod_async(c->hvel0, c->buf[ORR_BUF_VEL], vec, c->stream, err);
    if (!st && fresh) {   /* the accelerations and jerks of every body at the synchronised state */
        if (!(st = orr_cuda_dtod_async(c->hxp, c->buf[ORR_BUF_POS], vec, c->stream, err)) &&
            !(st = orr_cuda_dtod_async(c->hvp, c->buf[ORR_BUF_VEL], vec, c->stream, err)) &&
            !(st = set_ctl(c, ~0ULL, (unsigned)e->n, err)))
            st = accel_jerk(e, c, c->hiota, c->hcnt, e->n, 1, err);
        int n = (int)e->n, hi = p->hi, keep = keep_steps;
        double H = p->H, eta_start = p->eta_start;
        void *args[] = {&c->hpa, &c->hpj, &c->buf[ORR_BUF_ACC], &c->hjerk, &c->hlevel, &H,
                        &eta_start, &hi, &keep, &n};
        if (!st)
            st = orr_cuda_launch(c->fn[ORR_K_HSTART], blocks_for(e->n, e->spec.launch.block),
                                 (unsigned)e->spec.launch.block, 0, c->stream, args, err);
    }
    if (!st && p->anoise < 0) {   /* the step criterion's noise floor, from every body's |a| */
        int n = (int)e->n;
        double rel = p->noise;
        void *args[] = {&c->buf[ORR_BUF_ACC], &n, &rel, &c->hpar};
        st = orr_cuda_launch(c->fn[ORR_K_HNOISE], 1, 256, 0, c->stream, args, err);
    }
    if (!st)
        st = ctl_reset(c, err);
    return st ? st : orr_cuda_stream_sync(c->stream, err);
}

/* Up to this many bodies one block finds the next time and predicts
 * (orr_hnext_predict): one launch instead of two.  Above it one block's
 * loop over every body costs more than the launch it saves (H100, double,
 * 16-256 active: 4096 bodies 0.071-0.077 ms a block step with the
 * grid-wide pair against 0.076-0.084 with one block; 1536 and 2048 bodies
 * 0.066-0.070 with one block against 0.072-0.102 over the grid;
 * docs/PERFORMANCE.md). */
#define HSMALL_N 2048

/* The blocks of the force + jerk kernel of each tile when the host does
 * not know the active count: the most items any count of its buckets
 * makes, but no more than fit on the GPU at once (the blocks walk the
 * items, each item's arithmetic whichever block does it, so the bits do
 * not change; a launch of a tile the block does not have costs a wave of
 * blocks that return at once, not its largest grid). */
static void force_grids(const orr_engine *e, const cuda_impl *c, long grid[3])
{
    grid[0] = grid[1] = grid[2] = 0;   /* 0: no bucket has the tile */
    for (long nact = 1; nact <= e->n; nact++) {
        const orr_hlaunch l = orr_engine_hlaunch(e, orr_hbucket(nact));
        long iblocks = 0;
        const long items =
            orr_hlaunch_shape(e->n, nact, l, c->info.sm_count, NULL, &iblocks, NULL) * iblocks;
        const int k = l.tile == 64 ? 0 : l.tile == 128 ? 1 : 2;
        grid[k] = items > grid[k] ? items : grid[k];
    }
    for (int k = 0; k < 3; k++) {
        int per_sm = 0;
        orr_error ignored = {0};
        if (grid[k] > 0 &&
            orr_cuda_occupancy(c->fn[tile_kernel(64 << k)], 64 << k, &per_sm, &ignored) ==
                ORR_OK &&
            per_sm > 0 && grid[k] > (long)per_sm * c->info.sm_count)
            grid[k] = (long)per_sm * c->info.sm_count;
        orr_error_clear(&ignored);
    }
}

/* The arguments of a block's kernels, held while they are queued. */
typedef struct {
    int n;
    rtparams rtp;
    hplan plan;
    void *pargs[12], *fargs[10], *cargs[15], *largs[2], *nargs[4];
} block_args;

static void block_args_make(orr_engine *e, cuda_impl *c, block_args *a)
{
    a->n = (int)e->n;
    a->rtp = runtime_params(e);
    a->plan = plan_of(e, c);
    void *p[] = {&c->buf[ORR_BUF_POS], &c->buf[ORR_BUF_VEL], &c->buf[ORR_BUF_ACC], &c->hjerk,
                 &c->htick, &c->hlevel, &c->hcnt, &c->hpar, &c->hxp, &c->hvp, &c->hact, &a->n};
    void *f[] = {&c->hxp, &c->hvp, &c->attr, &c->hact, &c->hcnt, &a->rtp, &a->plan, &c->hpa,
                 &c->hpj, &a->n};
    void *k[] = {&c->buf[ORR_BUF_POS], &c->buf[ORR_BUF_VEL], &c->buf[ORR_BUF_ACC], &c->hjerk,
                 &c->htick, &c->hlevel, &c->hxp, &c->hvp, &c->hpa, &c->hpj, &c->hact, &c->hcnt,
                 &c->hpar, &a->plan, &a->n};
    void *l[] = {&c->hcnt, &c->hpar};
    void *x[] = {&c->htick, &c->hlevel, &c->hcnt, &a->n};
    memcpy(a->pargs, p, sizeof p);
    memcpy(a->fargs, f, sizeof f);
    memcpy(a->cargs, k, sizeof k);
    memcpy(a->largs, l, sizeof l);
    memcpy(a->nargs, x, sizeof x);
}

/* The blocks of the correction (their warps walk the active bodies, one
 * each). */
static unsigned correct_grid(const orr_engine *e, const cuda_impl *c)
{
    const unsigned all = blocks_for(32 * e->n, e->spec.launch.block),
                   most = 4 * (unsigned)(c->info.sm_count > 0 ? c->info.sm_count : 1);
    return all < most ? all : most;
}

/* One block's kernels queued on the stream, the force + jerk kernel of
 * every tile in use among them (the one whose tile the block has does the
 * work). */
static orr_status queue_block(orr_engine *e, cuda_impl *c, block_args *a, orr_error *err)
{
    const unsigned block = (unsigned)e->spec.launch.block, grid = blocks_for(e->n, block);
    orr_status st;
    if (e->n <= HSMALL_N) {
        st = orr_cuda_launch(c->fn[ORR_K_HNEXT_PREDICT], 1, block, 0, c->stream, a->pargs, err);
    } else {
        st = orr_cuda_launch(c->fn[ORR_K_HNEXT], grid, block, 0, c->stream, a->nargs, err);
        if (!st)
            st = orr_cuda_launch(c->fn[ORR_K_HPREDICT], grid, block, 0, c->stream, a->pargs,
                                 err);
    }
    static const int tiles[3] = {64, 128, 256};
    for (int k = 0; !st && k < 3; k++)
        if (c->hgrid[k] > 0)
            st = orr_cuda_launch(c->fn[tile_kernel(tiles[k])], (unsigned)c->hgrid[k],
                                 (unsigned)tiles[k], 0, c->stream, a->fargs, err);
    if (!st)
        st = orr_cuda_launch(c->fn[ORR_K_HCORRECT], correct_grid(e, c), block, 0, c->stream,
                             a->cargs, err);
    if (!st)
        st = orr_cuda_launch(c->fn[ORR_K_HLOOP], 1, 1, 0, c->stream, a->largs, err);
    return st;
}

/* The grids of the force + jerk kernels, made again when the launches
 * per bucket change. */
static void hgrid_update(orr_engine *e, cuda_impl *c)
{
    const hplan plan = plan_of(e, c);
    int key[2 * ORR_HBUCKETS];
    memcpy(key, plan.tile, sizeof plan.tile);
    memcpy(key + ORR_HBUCKETS, plan.per_sm, sizeof plan.per_sm);
    if (c->hgrid_ok && memcmp(key, c->hgrid_key, sizeof key) == 0)
        return;
    force_grids(e, c, c->hgrid);
    memcpy(c->hgrid_key, key, sizeof key);
    c->hgrid_ok = 1;
}

static orr_status read_ctl(cuda_impl *c, hctl *h, orr_error *err)
{
    orr_status st = orr_cuda_dtoh_async(h, c->hcnt, sizeof *h, c->stream, err);
    return st ? st : orr_cuda_stream_sync(c->stream, err);
}

/* read_ctl through the page-locked room (the watched loop's). */
static orr_status read_ctl_pinned(cuda_impl *c, hctl *h, orr_error *err)
{
    char *pin = NULL;
    orr_status st = ctl_pin(c, 2, &pin, err);
    if (!st)
        st = orr_cuda_dtoh_async(pin, c->hcnt, sizeof *h, c->stream, err);
    if (!st)
        st = orr_cuda_stream_sync(c->stream, err);
    c->pin_queued = 0;   /* every copy queued before is done */
    if (!st)
        memcpy(h, pin, sizeof *h);
    return st;
}

/* One block step: queued, then its time and count read back. */
static orr_status cuda_block(orr_engine *e, const orr_block_params *p, long long *t, long *nact,
                             orr_error *err)
{
    (void)p;
    cuda_impl *c = e->impl;
    block_args a;
    memset(&a, 0, sizeof a);
    block_args_make(e, c, &a);
    hgrid_update(e, c);
    hctl h;
    orr_status st = queue_block(e, c, &a, err);
    if (!st)
        st = read_ctl(c, &h, err);
    if (st)
        return st;
    *t = (long long)h.last;
    *nact = (long)h.last_count;
    if (*nact < 1 || *nact > e->n)
        return orr_fail(err, ORR_ERR_CUDA, "block step: %ld active bodies of %ld", *nact, e->n);
    return ORR_OK;
}


/* The rest of the interval in one cooperative launch of orr_hinterval,
 * as many blocks as fit on the GPU at once, stopping before a block of
 * at least split_at active bodies (hctl.split); 0 blocks fit: *launched 0. */
static orr_status persist_run(orr_engine *e, cuda_impl *c, unsigned split_at, int *launched,
                              orr_error *err)
{
    *launched = 0;
    const int k = c->hwatched ? ORR_K_HINTERVAL_WATCHED : ORR_K_HINTERVAL;
    int *per = &c->persist_per_sm[c->hwatched != 0];   /* asked once */
    orr_status st = *per ? ORR_OK : orr_cuda_occupancy(c->fn[k], HPERSIST, per, err);
    const int per_sm = *per;
    if (st || per_sm < 1)
        return st;
    int n = (int)e->n;
    rtparams rtp = runtime_params(e);
    hplan plan = plan_of(e, c);
    void *args[] = {&c->buf[ORR_BUF_POS], &c->buf[ORR_BUF_VEL], &c->buf[ORR_BUF_ACC], &c->hjerk,
                    &c->htick, &c->hlevel, &c->hcnt, &c->hpar, &c->hxp, &c->hvp, &c->hact,
                    &c->attr, &rtp, &plan, &c->hpa, &c->hpj, &n, &split_at};
    st = orr_cuda_launch_cooperative(c->fn[k],
                                     (unsigned)(per_sm * c->info.sm_count), HPERSIST, c->stream,
                                     args, err);
    *launched = !st;
    return st;
}

/* A corrected body's record between the host and the GPUs (direct.cu's
 * ORR_HREC real4: position, velocity, acceleration, jerk, level and tick). */
#define HREC 5

/* The buffers of blocks split between GPUs. */
static orr_status split_alloc(orr_engine *e, cuda_impl *c, orr_error *err)
{
    if (c->hrec)
        return ORR_OK;
    const unsigned block = (unsigned)e->spec.launch.block;
    orr_status st = orr_cuda_alloc(&c->hsc, sizeof(hctl), err);
    if (!st)
        st = orr_cuda_memset32(c->hsc, 0, sizeof(hctl) / 4, err);
    if (!st)
        st = orr_cuda_alloc(&c->hchunk, 4 * (size_t)blocks_for(e->n, (int)block), err);
    if (!st && !(st = orr_cuda_alloc(&c->hlist, 4 * (size_t)e->n, err)))
        st = orr_cuda_memset32(c->hlist, 0, (size_t)e->n, err);
    if (!st && !c->evc0 && !(st = orr_cuda_event_create(&c->evc0, err)))
        st = orr_cuda_event_create(&c->evc1, err);
    /* cleared: cuda_blocks_some reads back as many records as it expects,
     * of which those found are written */
    if (!st && !(st = orr_cuda_alloc(&c->hrec, HREC * 4 * c->elem * (size_t)e->n, err)))
        st = orr_cuda_memset32(c->hrec, 0, HREC * c->elem * (size_t)e->n, err);
    if (!st && !(st = orr_cuda_alloc(&c->hsome, 16, err)))
        st = orr_cuda_memset32(c->hsome, 0, 4, err);
    if (st == ORR_ERR_DEVMEM)
        orr_error_context(err, "the exchange of block steps between GPUs (%ld bodies)", e->n);
    return st;
}

static orr_status cuda_blocks_split(orr_engine *e, const orr_block_split *sp, orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = sp->min_active > 0 ? split_alloc(e, c, err) : ORR_OK;
    long *counts = NULL, *displs = NULL;
    if (!st && (!(counts = malloc(sizeof(long) * (size_t)sp->ranks)) ||
                !(displs = malloc(sizeof(long) * (size_t)sp->ranks))))
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (st) {
        free(counts);
        return st;
    }
    free(c->scounts), free(c->sdispls);
    c->scounts = counts, c->sdispls = displs;
    c->split = *sp;
    return ORR_OK;
}

static void cuda_blocks_stats(const orr_engine *e, orr_blocks_stats *out)
{
    const cuda_impl *c = e->impl;
    memcpy(out->phase_s, c->phase_s, sizeof out->phase_s);
    /* batches and single blocks split none */
    out->split_min = c->hmode && c->hmode != HMODE_PERSIST ? 0 : c->split.min_active;
    out->split_blocks = c->split_blocks;
    out->split_active = c->split_active;
    out->comm_s = c->comm_s;
}

/* The exchange timed by the split block before (its events are done once
 * the stream was waited for), into comm_s. */
static void comm_time_add(cuda_impl *c)
{
    float ms = 0;
    orr_error ignored = {0};
    if (c->comm_queued && orr_cuda_event_elapsed(c->evc0, c->evc1, &ms, &ignored) == ORR_OK)
        c->comm_s += ms / 1e3;
    orr_error_clear(&ignored);
    c->comm_queued = 0;
}

/* The block orr_hinterval stopped at (h: its time, its count), split
 * between the ranks (direct.cu's "a block split between GPUs"): the
 * ordered list, this rank's share's force + jerk and correction, its
 * records out and every rank's in, then the block's bookkeeping
 * (orr_hloop).  Queued; the next launch of orr_hinterval follows it on
 * the stream. */
static orr_status split_block(orr_engine *e, cuda_impl *c, const hctl *h, orr_error *err)
{
    const orr_block_split *sp = &c->split;
    const long count = (long)h->count, P = sp->ranks;
    if (count < 1 || count > e->n)
        return orr_fail(err, ORR_ERR_CUDA, "block step: %ld active bodies of %ld", count, e->n);
    long *counts = c->scounts, *displs = c->sdispls;
    for (long r = 0; r < P; r++) {
        displs[r] = count * r / P;
        counts[r] = count * (r + 1) / P - displs[r];
    }
    int n = (int)e->n, k0 = (int)displs[sp->rank], k1 = k0 + (int)counts[sp->rank];
    const unsigned block = (unsigned)e->spec.launch.block, grid = blocks_for(e->n, (int)block);
    void *a1[] = {&c->htick, &c->hlevel, &c->hcnt, &c->hchunk, &n};
    void *a2[] = {&c->htick, &c->hlevel, &c->hcnt, &c->hchunk, &c->hlist, &n};
    orr_status st = orr_cuda_launch(c->fn[ORR_K_HCHUNKS], grid, block, 0, c->stream, a1, err);
    if (!st)
        st = orr_cuda_launch(c->fn[ORR_K_HLIST], grid, block, 0, c->stream, a2, err);
    const hctl share = {.next = h->next, .count = (unsigned)(k1 - k0)};
    orr_devptr mine = c->hlist + 4 * (size_t)k0;
    if (!st && k1 > k0 &&
        !(st = orr_cuda_htod_async(c->hsc, &share, sizeof share, c->stream, err)) &&
        !(st = accel_jerk(e, c, mine, c->hsc, k1 - k0, 0, err))) {
        hplan plan = plan_of(e, c);
        void *k[] = {&c->buf[ORR_BUF_POS], &c->buf[ORR_BUF_VEL], &c->buf[ORR_BUF_ACC], &c->hjerk,
                     &c->htick, &c->hlevel, &c->hxp, &c->hvp, &c->hpa, &c->hpj, &mine, &c->hsc,
                     &c->hpar, &plan, &n};
        st = orr_cuda_launch(c->fn[ORR_K_HCORRECT], correct_grid(e, c), block, 0, c->stream, k,
                             err);
        void *pk[] = {&c->buf[ORR_BUF_POS], &c->buf[ORR_BUF_VEL], &c->buf[ORR_BUF_ACC],
                      &c->hjerk, &c->hlevel, &c->hlist, &k0, &k1, &c->hrec};
        if (!st)
            st = orr_cuda_launch(c->fn[ORR_K_HPACK], blocks_for(k1 - k0, (int)block), block, 0,
                                 c->stream, pk, err);
    }
    if (!st && sp->gather) {
        if (!(st = orr_cuda_event_record(c->evc0, c->stream, err)) &&
            !(st = sp->gather(sp->ctx, c->hrec, counts, displs, HREC * 4 * c->elem, err)))
            st = orr_cuda_event_record(c->evc1, c->stream, err);
        c->comm_queued = !st;
    }
    void *u[] = {&c->buf[ORR_BUF_POS], &c->buf[ORR_BUF_VEL], &c->buf[ORR_BUF_ACC], &c->hjerk,
                 &c->htick, &c->hlevel, &c->hlist, &k0, &k1, &c->hrec, &c->hcnt};
    if (!st)
        st = orr_cuda_launch(c->fn[ORR_K_HUNPACK], blocks_for(count, (int)block), block, 0,
                             c->stream, u, err);
    void *l[] = {&c->hcnt, &c->hpar};
    if (!st)
        st = orr_cuda_launch(c->fn[ORR_K_HLOOP], 1, 1, 0, c->stream, l, err);
    c->split_blocks++;
    c->split_active += count;
    return st;
}

/* The interval's blocks until it ends (or max_blocks), queued as
 * c->hmode says: one persistent kernel (stopping at the blocks split
 * between GPUs, which the host queues, then going on); or in batches (8
 * blocks, then twice as many each time, up to 256), the control words
 * read back once a batch. */
static orr_status cuda_blocks_run(orr_engine *e, const orr_block_params *p, long long *t,
                                  long *blocks, long *active, orr_error *err)
{
    cuda_impl *c = e->impl;
    hctl h;
    memset(&h, 0, sizeof h);
    orr_status st = ORR_OK;
    c->hwhy = 0;
    if (c->hmode == HMODE_PERSIST) {
        const unsigned split_at = c->split.min_active > 0 && c->split.min_active < UINT_MAX
                                      ? (unsigned)c->split.min_active : UINT_MAX;
        if (c->hwatched) {   /* from where the host left it: no block under way, no stop:
                                the control words so from the page-locked room, queued */
            char *pin = NULL;
            if (!(st = ctl_pin(c, 1, &pin, err))) {
                hctl *w = (hctl *)pin;
                memset(w, 0, sizeof *w);
                w->next = ~0ULL, w->cstop = ~0ULL;
                const size_t at[4] = {0, offsetof(hctl, done), offsetof(hctl, stop),
                                      offsetof(hctl, cstop)};
                const size_t len[4] = {offsetof(hctl, deepest), sizeof w->done, sizeof w->stop,
                                       sizeof w->cstop};
                for (int q = 0; !st && q < 4; q++)
                    st = orr_cuda_htod_async(c->hcnt + at[q], (char *)w + at[q], len[q],
                                             c->stream, err);
            }
        }
        for (;;) {
            if (st)
                break;
            int launched = 0;
            st = persist_run(e, c, split_at, &launched, err);
            if (!st && !launched) {   /* not one block fits: batches instead */
                c->hmode = HMODE_BATCH;
                break;
            }
            if (!st)
                st = c->hwatched ? read_ctl_pinned(c, &h, err) : read_ctl(c, &h, err);
            comm_time_add(c);
            if (!st && h.stop)
                c->hwhy = (int)h.stop;
            if (st || !h.split)
                break;
            st = split_block(e, c, &h, err);
            if (st)
                break;
        }
        for (int k = 0; !st && k < 4; k++)   /* summed over the interval's launches */
            c->phase_s[k] += (double)h.phase[k] / 1e9;
    }
    if (!st && c->hmode == HMODE_BATCH) {
        block_args a;
        memset(&a, 0, sizeof a);
        block_args_make(e, c, &a);
        hgrid_update(e, c);
        for (int batch = 8; !st; batch = batch < 256 ? 2 * batch : 256) {
            for (int k = 0; !st && k < batch; k++)
                st = queue_block(e, c, &a, err);
            if (!st)
                st = read_ctl(c, &h, err);
            if (st || h.done)
                break;
        }
    }
    if (!st && c->hmode == HMODE_BLOCK) {
        long long at = 0;
        long nact = 0, nb = 0;
        const long most = p->max_blocks > 0 ? p->max_blocks : LONG_MAX;
        while (!st && at < (1LL << HMAX) && nb < most) {
            st = cuda_block(e, p, &at, &nact, err);
            nb++;
        }
        if (!st)
            st = read_ctl(c, &h, err);
    }
    if (st)
        return st;
    *t = (long long)h.last;
    *blocks = (long)h.blocks;
    *active = (long)h.active;
    return ORR_OK;
}

static orr_status cuda_blocks_field(orr_engine *e, int k, double *io, int set, int *deepest,
                                    orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = blocks_alloc(e, c, err);
    if (st)
        return st;
    if (deepest) {
        int d = 0;
        st = orr_cuda_dtoh_async(&d, c->hcnt + 12, 4, c->stream, err);
        if (!st)
            st = orr_cuda_stream_sync(c->stream, err);
        *deepest = d;
        return st;
    }
    if (k < 2) {
        orr_devptr b = k == 0 ? c->buf[ORR_BUF_ACC] : c->hjerk;
        return set ? upload(c, b, io, 3, 3, e->n, err) : download(c, b, io, 3, 3, e->n, err);
    }
    return orr_fail(err, ORR_ERR_ARG, "no block step field %d", k);
}

static orr_status cuda_blocks_levels(orr_engine *e, int *level, int set, orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = blocks_alloc(e, c, err);
    if (st || set)
        return st ? st : orr_cuda_htod(c->hlevel, level, 4 * (size_t)e->n, err);
    st = orr_cuda_dtoh_async(level, c->hlevel, 4 * (size_t)e->n, c->stream, err);
    return st ? st : orr_cuda_stream_sync(c->stream, err);
}

/* The host's watch (orr_engine_blocks_watch): the persistent loop alone
 * stops so, and the host takes over the state only in double. */
static orr_status cuda_blocks_watch(orr_engine *e, const orr_block_watch *w, orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = blocks_alloc(e, c, err);
    if (st)
        return st;
    if (c->hmode != HMODE_PERSIST || e->spec.phys.precision != ORR_DOUBLE)
        return orr_fail(err, ORR_ERR_ARG, "the GPU's block steps are watched only in double, "
                        "in one persistent kernel (ORRERY_HBLOCKS unset)");
    if (w->npairs < 0 || w->npairs > ORR_WATCH_PAIRS)
        return orr_fail(err, ORR_ERR_ARG, "%d regularised pairs to resolve: from 0 to %d",
                        w->npairs, ORR_WATCH_PAIRS);
    /* the parameters from npairs on (the watch's, hpar's last words), and
     * the pairs after them: copied through the stage, waited for */
    hpar d = {0};
    d.npairs = w->npairs;
    d.stop = w->stop < 0 ? ~0ULL : (unsigned long long)w->stop;
    d.pull = w->pull > 0 ? w->pull : INFINITY;
    d.near2 = w->near * w->near, d.peri = w->peri, d.peri_b = w->peri_bound, d.G = w->G;
    if (w->ndeclined < 0 || w->ndeclined > ORR_WATCH_DECLINED)
        return orr_fail(err, ORR_ERR_ARG, "%d declined pairs: from 0 to %d", w->ndeclined,
                        ORR_WATCH_DECLINED);
    d.ndec = w->ndeclined;
    for (int k = 0; k < w->ndeclined; k++) {
        const orr_watch_decline *q = &w->declined[k];
        if (q->a < 0 || q->b >= e->n || q->a >= q->b || q->until < 0)
            return orr_fail(err, ORR_ERR_ARG, "declined pair %d: bodies %ld and %ld of %ld", k,
                            q->a + 1, q->b + 1, e->n);
        d.dec_a[k] = (int)q->a, d.dec_b[k] = (int)q->b;
        d.dec_until[k] = (unsigned long long)q->until;
    }
    const size_t head = sizeof(hpar) - offsetof(hpar, npairs),
                 lists = sizeof(hpar) + ORR_WATCH_PAIRS * sizeof(hpair);
    char *buf = NULL;
    orr_status s2 = ctl_pin(c, 0, &buf, err);
    if (s2)
        return s2;
    hpair p[ORR_WATCH_PAIRS];
    int *pl = (int *)(buf + lists - offsetof(hpar, npairs)), npl = 0;
    for (int k = 0; k < w->npairs; k++) {
        const orr_watch_pair *q = &w->pairs[k];
        if (q->centre < 0 || q->centre >= e->n || q->other < 0 || q->other >= e->n)
            return orr_fail(err, ORR_ERR_ARG, "regularised pair %d: bodies %ld and %ld of %ld", k,
                            q->centre + 1, q->other + 1, e->n);
        const long np = q->fast ? q->npert : 0;
        if (np < 0 || np > ORR_WATCH_PERT_MAX)
            return orr_fail(err, ORR_ERR_ARG, "regularised pair %d: %ld perturbers, at most %d",
                            k, np, ORR_WATCH_PERT_MAX);
        p[k] = (hpair){(int)q->centre, (int)q->other, q->fast != 0, npl, (int)np, 0, q->m[0],
                       q->m[1], q->t0, {q->r[0], q->r[1], q->r[2]}, {q->v[0], q->v[1], q->v[2]},
                       q->R * q->R, q->cap > 0 ? q->cap : INFINITY};
        for (long b = 0; b < np; b++) {
            if (q->pert[b] < 0 || q->pert[b] >= e->n)
                return orr_fail(err, ORR_ERR_ARG, "regularised pair %d: perturber %ld of %ld",
                                k, q->pert[b] + 1, e->n);
            pl[npl++] = (int)q->pert[b];
        }
    }
    memcpy(buf, (const char *)&d + offsetof(hpar, npairs), head);
    memcpy(buf + head, p, (size_t)w->npairs * sizeof(hpair));
    c->hwatched = 1;
    /* queued: the launch after it reads them in the stream's order */
    s2 = orr_cuda_htod_async(c->hpar + offsetof(hpar, npairs), buf,
                             head + (size_t)w->npairs * sizeof(hpair), c->stream, err);
    if (!s2 && npl > 0)
        s2 = orr_cuda_htod_async(c->hpar + lists, pl, 4 * (size_t)npl, c->stream, err);
    return s2;
}

static int cuda_blocks_why(const orr_engine *e)
{
    const cuda_impl *c = e->impl;
    return c->hwhy;
}

static orr_status cuda_blocks_state(orr_engine *e, double *pos, double *vel, double *acc,
                                    double *jerk, long long *tick, int *level, int set,
                                    orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = blocks_alloc(e, c, err);
    const long n = e->n;
    const vec_copy v[4] = {{c->buf[ORR_BUF_POS], pos, 4, 4}, {c->buf[ORR_BUF_VEL], vel, 3, 3},
                           {c->buf[ORR_BUF_ACC], acc, 3, 3}, {c->hjerk, jerk, 3, 3}};
    const orr_devptr rd[2] = {c->htick, c->hlevel};
    void *const rh[2] = {tick, level};
    const size_t rs[2] = {8 * (size_t)n, 4 * (size_t)n};
    return st ? st : transfer(c, set, v, 4, n, rd, rh, rs, 2, err);
}

/* Part of the block-step state (orr_engine_blocks_some): records of
 * orr_hpack's layout (HREC real4 each) and the bodies' numbers, through
 * the stage; written by orr_hput, found by orr_hsince. */
static orr_status cuda_blocks_some(orr_engine *e, double *pos, double *vel, double *acc,
                                   double *jerk, long long *tick, int *level, int set,
                                   long *list, long *count, long long since, long most,
                                   orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = blocks_alloc(e, c, err);
    if (!st)
        st = split_alloc(e, c, err);
    if (st)
        return st;
    const long n = e->n;
    const size_t real = c->elem, rbytes = HREC * 4 * real;
    const unsigned block = (unsigned)e->spec.launch.block;
    const long k = set ? *count : (most < n ? (most > 0 ? most : 0) : n);
    const size_t recs = padded(rbytes * (size_t)k), idxs = padded(4 * (size_t)k + 4);
    void *buf = NULL;
    if ((st = stage_of(c, recs + idxs, &buf, err)) != ORR_OK)
        return st;
    char *rb = buf;
    int *ib = (int *)(rb + recs);
    double *const host[4] = {pos, vel, acc, jerk};
    const int hs[4] = {4, 3, 3, 3};
    if (set) {
        for (long q = 0; q < k; q++) {
            const long i = list[q];
            char *r = rb + rbytes * (size_t)q;
            for (int a = 0; a < 4; a++)
                pack_into(c, r + 4 * real * (size_t)a, host[a] + hs[a] * i, hs[a], hs[a], 1);
            const double l4[4] = {(double)level[i], (double)(tick[i] >> 20),
                                  (double)(tick[i] & 0xfffff), 0};
            pack_into(c, r + 16 * real, l4, 4, 4, 1);
            ib[q] = (int)i;
        }
        if (k == 0)
            return ORR_OK;
        int cnt = (int)k;
        void *args[] = {&c->buf[ORR_BUF_POS], &c->buf[ORR_BUF_VEL], &c->buf[ORR_BUF_ACC],
                        &c->hjerk, &c->htick, &c->hlevel, &cnt, &c->hlist, &c->hrec};
        if (!(st = orr_cuda_htod_async(c->hrec, rb, rbytes * (size_t)k, c->stream, err)) &&
            !(st = orr_cuda_htod_async(c->hlist, ib, 4 * (size_t)k, c->stream, err)) &&
            !(st = orr_cuda_launch(c->fn[ORR_K_HPUT], blocks_for(k, (int)block), block, 0,
                                   c->stream, args, err)))
            st = orr_cuda_stream_sync(c->stream, err);
        return st;
    }
    int nn = (int)n, mk = (int)k;
    unsigned long long s = (unsigned long long)since;
    void *args[] = {&c->buf[ORR_BUF_POS], &c->buf[ORR_BUF_VEL], &c->buf[ORR_BUF_ACC],
                    &c->hjerk, &c->htick, &c->hlevel, &nn, &s, &c->hsome, &mk, &c->hlist,
                    &c->hrec};
    ib[k] = 0;
    if (!(st = orr_cuda_htod_async(c->hsome, ib + k, 4, c->stream, err)) &&
        !(st = orr_cuda_launch(c->fn[ORR_K_HSINCE], blocks_for(n, (int)block), block, 0,
                               c->stream, args, err)) &&
        !(st = orr_cuda_dtoh_async(ib + k, c->hsome, 4, c->stream, err)) &&
        (k == 0 || (!(st = orr_cuda_dtoh_async(rb, c->hrec, rbytes * (size_t)k, c->stream, err)) &&
                    !(st = orr_cuda_dtoh_async(ib, c->hlist, 4 * (size_t)k, c->stream, err)))))
        st = orr_cuda_stream_sync(c->stream, err);
    if (st)
        return st;
    const long found = (long)(unsigned)ib[k];
    if (found > k) {   /* more than expected: the whole state */
        if ((st = cuda_blocks_state(e, pos, vel, acc, jerk, tick, level, 0, err)) != ORR_OK)
            return st;
        long m = 0;
        for (long i = 0; i < n; i++)
            if (tick[i] > since && tick[i] <= (1LL << ORR_BLOCK_MAX_LEVEL))
                list[m++] = i;
        *count = m;
        return ORR_OK;
    }
    for (long q = 0; q < found; q++) {
        const long i = ib[q];
        const char *r = rb + rbytes * (size_t)q;
        for (int a = 0; a < 4; a++)
            unpack(c, r + 4 * real * (size_t)a, host[a] + hs[a] * i, hs[a], hs[a], 1);
        double l4[4];
        unpack(c, r + 16 * real, l4, 4, 4, 1);
        level[i] = (int)l4[0];
        tick[i] = (long long)l4[1] << 20 | (long long)l4[2];
        list[q] = i;
    }
    *count = found;
    return ORR_OK;
}

/* The predicted positions and velocities for the next force + jerk, into
 * hxp, hvp directly (jerk_inputs leaves them), the state as it is. */
static orr_status cuda_set_predicted(orr_engine *e, const double *xp, const double *vp,
                                     orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = blocks_alloc(e, c, err);
    const vec_copy v[2] = {{c->hxp, (double *)xp, 4, 4}, {c->hvp, (double *)vp, 3, 3}};
    if (!st)
        st = transfer(c, 1, v, 2, e->n, NULL, NULL, NULL, 0, err);
    c->pred_set = !st;
    return st;
}

/* Every body of the block-step state predicted to tick `tick` into hxp,
 * hvp by orr_hpredict (the blocks' own prediction), for the next
 * host-driven force + jerk: the copy of the host's prediction
 * (cuda_set_predicted) was a regularised run's largest cost of a host
 * block after the groups' own (76 of 269 us in a collapsed N = 4096 core
 * on an H100).  Its list of active bodies is the force + jerk's to set. */
static orr_status cuda_blocks_predict(orr_engine *e, long long tick, orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = blocks_alloc(e, c, err);
    if (st)
        return st;
    int n = (int)e->n;
    void *args[] = {&c->buf[ORR_BUF_POS], &c->buf[ORR_BUF_VEL], &c->buf[ORR_BUF_ACC], &c->hjerk,
                    &c->htick, &c->hlevel, &c->hcnt, &c->hpar, &c->hxp, &c->hvp, &c->hact, &n};
    const unsigned block = (unsigned)e->spec.launch.block;
    if (!(st = set_ctl(c, (unsigned long long)tick, 0, err)))
        st = orr_cuda_launch(c->fn[ORR_K_HPREDICT], blocks_for(e->n, (int)block), block, 0,
                             c->stream, args, err);
    c->pred_set = !st;
    return st;
}

/* The positions and velocities as the interval began (kept by
 * cuda_blocks_begin), back in place. */
static orr_status cuda_blocks_abort(orr_engine *e, orr_error *err)
{
    cuda_impl *c = e->impl;
    const size_t vec = 4 * c->elem * (size_t)e->n;
    if (!c->hpos0)
        return ORR_OK;
    orr_status st = orr_cuda_dtod_async(c->buf[ORR_BUF_POS], c->hpos0, vec, c->stream, err);
    if (!st)
        st = orr_cuda_dtod_async(c->buf[ORR_BUF_VEL], c->hvel0, vec, c->stream, err);
    return st ? st : orr_cuda_stream_sync(c->stream, err);
}

static orr_status cuda_blowup(orr_engine *e, unsigned long long *key, int clear, orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = orr_cuda_dtoh_async(key, c->flag, 8, c->stream, err);
    if (!st)
        st = orr_cuda_stream_sync(c->stream, err);
    if (!st && clear)
        st = orr_cuda_memset32(c->flag, 0xffffffffu, 2, err);
    return st;
}

/* ---- pictures: the deposit (kernels in render.cu) ---- */

#define DEPOSIT_BLOCK 256

/* The render family, from the kernel cache or compiled, loaded the first
 * time a frame is deposited.  Its kernels use nothing of a spec but the
 * precision of the bodies, so they are built for the default spec in that
 * precision: one cache entry per precision and GPU architecture, whatever
 * the law, the softening or the tuned launch settings. */
static orr_status render_load(orr_engine *e, cuda_impl *c, orr_error *err)
{
    if (c->rmodule)
        return ORR_OK;
    const orr_kfamily *f = &orr_family_render;
    char arch[32];
    orr_cuda_arch_name(&c->info, arch, sizeof arch);
    orr_kspec spec;
    orr_kspec_default(&spec, ORR_TARGET_GPU);
    spec.phys.precision = ORR_STORED_DOUBLE(e->spec.phys.precision) ? ORR_DOUBLE : ORR_FLOAT;
    void *data = NULL, *module = NULL;
    size_t len = 0;
    orr_build_info info;
    memset(&info, 0, sizeof info);
    orr_status st = build_kernels(&spec, f, arch, &data, &len, &info, err);
    char *names[ORR_KFAMILY_MAX_KERNELS];
    const void *cubin = NULL;
    if (!st)
        st = parse_payload(data, len, f, names, &cubin, err);
    if (!st)
        st = orr_cuda_module_load(cubin, &module, err);
    for (int k = 0; !st && k < f->ngpu; k++)
        st = orr_cuda_function(module, names[k], &c->rfn[k], err);
    free(data);
    if (st && module)
        orr_cuda_module_unload(module);
    if (!st)
        c->rmodule = module;
    return st;
}

/* The scratch buffer of the deposit and the view's sample, grown to bytes. */
static orr_status grid_reserve(cuda_impl *c, size_t bytes, orr_error *err)
{
    if (bytes <= c->grid_bytes)
        return ORR_OK;
    orr_cuda_free(c->grid);
    c->grid = 0;
    c->grid_bytes = 0;
    orr_status st = orr_cuda_alloc(&c->grid, bytes, err);
    if (!st)
        c->grid_bytes = bytes;
    return st;
}

/* The grid cleared and deposited on the device, then copied out: the
 * bodies stay where they are. */
static orr_status cuda_deposit(orr_engine *e, const orr_deposit *d, double *density,
                               orr_error *err)
{
    cuda_impl *c = e->impl;
    orr_status st = render_load(e, c, err);
    const size_t count = (size_t)d->width * (size_t)d->height, bytes = sizeof(double) * count;
    if (!st && (st = grid_reserve(c, bytes, err)) == ORR_ERR_DEVMEM)
        orr_error_context(err, "a %d x %d picture", d->width, d->height);
    if (st)
        return st;
    long long cells = (long long)count;
    void *cargs[] = {&c->grid, &cells};
    unsigned cblocks = blocks_for((long)count, DEPOSIT_BLOCK);
    st = orr_cuda_launch(c->rfn[ORR_K_DEPOSIT_CLEAR], cblocks < 4096 ? cblocks : 4096,
                         DEPOSIT_BLOCK, 0, c->stream, cargs, err);
    double cell[3];
    orr_deposit_cell(d, cell);
    int n = (int)e->n, ax = d->ax, ay = d->ay, w = d->width, h = d->height;
    double e0 = d->ext[0], e3 = d->ext[3];
    void *args[] = {&c->buf[ORR_BUF_POS], &n, &ax, &ay, &w, &h, &e0, &e3, &cell[0], &cell[1],
                    &cell[2], &c->grid};
    if (!st)
        st = orr_cuda_launch(c->rfn[ORR_K_DEPOSIT], blocks_for(e->n, DEPOSIT_BLOCK),
                             DEPOSIT_BLOCK, 0, c->stream, args, err);
    if (!st)
        st = orr_cuda_dtoh_async(density, c->grid, bytes, c->stream, err);
    return st ? st : orr_cuda_stream_sync(c->stream, err);
}

/* The view's subsample gathered on the device into the scratch buffer
 * (5 count floats), then only that copied out (kernel in render.cu). */
static orr_status cuda_sample(orr_engine *e, long first, long stride, long count, float *out,
                              orr_error *err)
{
    cuda_impl *c = e->impl;
    const size_t bytes = sizeof(float) * 5 * (size_t)count;
    orr_status st = render_load(e, c, err);
    if (!st)
        st = grid_reserve(c, bytes, err);
    if (st)
        return st;
    long long f = first, s = stride;
    int cnt = (int)count;
    void *args[] = {&c->buf[ORR_BUF_POS], &c->buf[ORR_BUF_VEL], &f, &s, &cnt, &c->grid};
    st = orr_cuda_launch(c->rfn[ORR_K_VIEW_SAMPLE], blocks_for(count, DEPOSIT_BLOCK),
                         DEPOSIT_BLOCK, 0, c->stream, args, err);
    if (!st)
        st = orr_cuda_dtoh_async(out, c->grid, bytes, c->stream, err);
    return st ? st : orr_cuda_stream_sync(c->stream, err);
}

static orr_status cuda_buffer(orr_engine *e, orr_buffer_id id, orr_buffer *out, orr_error *err)
{
    cuda_impl *c = e->impl;
    static const int which[] = {ORR_BUF_POS, ORR_BUF_VEL, ORR_BUF_ACC};
    memset(out, 0, sizeof *out);
    out->on_device = 1;
    out->dptr = c->buf[which[id]];
    out->ncomp = id == ORR_ENGINE_POS ? 4 : 3;
    out->elem = c->elem;
    out->stride = 4 * c->elem;
    return ORR_OK;
}

static orr_status cuda_sync(orr_engine *e, orr_error *err)
{
    cuda_impl *c = e->impl;
    return orr_cuda_stream_sync(c->stream, err);
}

const orr_backend_ops orr_backend_cuda = {
    .name = "cuda",
    .kind = ORR_BACKEND_CUDA,
    .create = cuda_create,
    .destroy = cuda_destroy,
    .set_state = cuda_set_state,
    .get_state = cuda_get_state,
    .accel = cuda_accel,
    .accel_jerk = cuda_accel_jerk,
    .time_accel_jerk = cuda_time_accel_jerk,
    .blowup = cuda_blowup,
    .blocks_begin = cuda_blocks_begin,
    .block = cuda_block,
    .blocks_run = cuda_blocks_run,
    .blocks_field = cuda_blocks_field,
    .blocks_levels = cuda_blocks_levels,
    .blocks_abort = cuda_blocks_abort,
    .blocks_watch = cuda_blocks_watch,
    .blocks_why = cuda_blocks_why,
    .blocks_state = cuda_blocks_state,
    .blocks_some = cuda_blocks_some,
    .set_predicted = cuda_set_predicted,
    .blocks_predict = cuda_blocks_predict,
    .blocks_split = cuda_blocks_split,
    .blocks_stats = cuda_blocks_stats,
    .get_accel = cuda_get_accel,
    .kick = cuda_kick,
    .drift = cuda_drift,
    .potential = cuda_potential,
    .field_potential = cuda_field_potential,
    .set_attr = cuda_set_attr,
    .accel_sample = cuda_accel_sample,
    .time_steps = cuda_time_steps,
    .buffer = cuda_buffer,
    .deposit = cuda_deposit,
    .sample = cuda_sample,
    .sync = cuda_sync,
};
