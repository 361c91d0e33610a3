/* direct: the GPU all-pairs kernel family, compiled at run time by NVRTC.
 * Every kernel is a template over the precision `real` (float or double),
 * instantiated by name expression (orr_accel<float>, ...).  Positions and
 * masses are packed as real4 (x, y, z, m); velocities and accelerations as
 * real4 with w unused.
 *
 * Targets and sources are apart: every kernel works on `count` targets
 * (a rank's slice, a block step's active bodies), the force and potential
 * kernels summing over all n bodies as sources.  orr_accel takes the
 * targets as arrays of their own (ipos, iattr, and acc with rows of stride
 * n), the other kernels as the range [first, first + count) of the bodies.
 * A target's sum runs over the same tiles in the same order whatever the
 * range, so splitting the targets changes no bit.
 *
 *   orr_accel      shared-memory tiles of ORR_BLOCK bodies, `#pragma unroll`
 *                  ORR_UNROLL on the inner loop; each thread computes ORR_IPT
 *                  target bodies (register blocking: one shared-memory load
 *                  serves ORR_IPT interactions); ORR_SPLIT adjacent threads
 *                  share one body, each taking every ORR_SPLIT-th body of a
 *                  tile, and combine their partial sums with warp shuffles
 *                  (fills the GPU when N is small).  Tile sums are added with
 *                  compensation, which keeps float error at the level of one
 *                  tile rather than growing with N.  With ORR_PREFETCH
 *                  the next tile is staged through registers while this
 *                  one is summed (the tuner's choice: it pays for some
 *                  shapes and costs for others).  Block row y = y0 +
 *                  blockIdx.y sums the j-range [y jlen, (y + 1) jlen) and
 *                  writes its partial accelerations to acc + y n (a launch
 *                  may cover some of the ranges: those whose sources are
 *                  in place while the rest arrive): with several ranges
 *                  the grid has more, shorter blocks, so the last wave of
 *                  blocks leaves fewer SMs idle (the host picks the count).
 *   orr_combine    acc[i] = the sum of the ranges' partials, in a fixed order
 *                  and in double, so results do not depend on scheduling.
 *   orr_accel_naive  one thread per body reading j-bodies from global memory:
 *                  the baseline that `orrery bench --variant naive` runs.
 *   orr_kick, orr_drift   v = (v + a dt) * damping;  x += v dt, wrapped into
 *                  the periodic box on periodic axes.
 *   orr_potential  pair potential summed per target (in double), halved,
 *                  reduced per block; the host adds the per-block sums.
 *   orr_field_potential  the external fields' m_i Phi(x_i) of the targets,
 *                  reduced per block the same way.
 *
 * The force law's generated section comes before this file and provides
 * orr_pair_accel / orr_pair_potential / orr_law_scale, ORR_NATTR per-body
 * attributes (attr[i * ORR_NATTR + a], staged in shared memory next to the
 * positions) and ORR_NRT runtime params (the kernel argument rtp, converted
 * to `real` once per thread); then the external fields' section (field.h:
 * orr_fields_accel, ...; ORR_NFIELDS), whose acceleration (and jerk) a
 * target gains once, in the row of j-range 0, after the law's scale: its
 * params and the time are in rtp from ORR_RT_FIELD on. */

static constexpr int orr_unroll = ORR_UNROLL;
static_assert(ORR_BLOCK % ORR_SPLIT == 0, "ORR_BLOCK must be a multiple of ORR_SPLIT");
static_assert(ORR_SPLIT >= 1 && ORR_SPLIT <= 32 && (ORR_SPLIT & (ORR_SPLIT - 1)) == 0,
              "ORR_SPLIT must be a power of two from 1 to 32");

template <typename real> struct orr_vec4;
template <> struct orr_vec4<float> { typedef float4 type; };
template <> struct orr_vec4<double> { typedef double4 type; };

/* The runtime values as passed (ORR_RT_SLOTS doubles, from the generated
 * section): the law's runtime params, the fields' from ORR_RT_FIELD, the
 * time ORR_RT_T0 and the block steps' tick ORR_RT_UNIT (field.h). */
struct orr_rtparams {
    double v[ORR_RT_SLOTS];
};

/* The runtime params converted to real, once per thread. */
#define ORR_RT_LOAD(rt, rtp)                 \
    real rt[ORR_NRTS];                       \
    _Pragma("unroll") for (int q_ = 0; q_ < ORR_NRTS; q_++) rt[q_] = (real)(rtp).v[q_]

/* One interaction of body i (pi, attributes ai) with body j (pj, aj),
 * accumulated into s. */
template <typename real>
static __device__ __forceinline__ void orr_interact(const typename orr_vec4<real>::type &pi,
                                                    const typename orr_vec4<real>::type &pj,
                                                    const real *ai, const real *aj,
                                                    const real *rt, real &sx, real &sy, real &sz)
{
    real dx = orr_min_image(pj.x - pi.x, X), dy = orr_min_image(pj.y - pi.y, Y),
         dz = orr_min_image(pj.z - pi.z, Z);
    real r2 = fma(dz, dz, fma(dy, dy, fma(dx, dx, (real)ORR_EPS2)));
    real d2 = fma(dz, dz, fma(dy, dy, dx * dx));
    real f = orr_pair_accel<real>(dx, dy, dz, d2, r2, pi.w, pj.w, ai, aj, 1, rt);
    sx = fma(dx, f, sx);
    sy = fma(dy, f, sy);
    sz = fma(dz, f, sz);
}

/* s += t with Kahan compensation c. */
template <typename real>
static __device__ __forceinline__ void orr_kahan_add(real &s, real &c, real t)
{
    real y = t - c;
    real u = s + y;
    c = (u - s) - y;
    s = u;
}

template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_accel(const typename orr_vec4<real>::type *__restrict__ pos, const real *__restrict__ attr,
          const typename orr_vec4<real>::type *__restrict__ ipos, const real *__restrict__ iattr,
          orr_rtparams rtp, typename orr_vec4<real>::type *__restrict__ acc, int n, int jlen,
          int count, int y0)
{
    typedef typename orr_vec4<real>::type vec4;
    constexpr int groups = ORR_BLOCK / ORR_SPLIT;   /* body groups per block */
    __shared__ vec4 tile[ORR_BLOCK];
    __shared__ real tattr[ORR_NATTR > 0 ? ORR_BLOCK * ORR_NATTR : 1];
    ORR_RT_LOAD(rt, rtp);
    real ai[ORR_IPT][ORR_NATTRS];
    const int t = threadIdx.x;
    const int part = t % ORR_SPLIT;
    const int first = blockIdx.x * groups * ORR_IPT + t / ORR_SPLIT;
    /* count <= n always; saying so lets the compiler schedule the tile loop
     * as it did when the targets were all n bodies (measured on the H100:
     * without it block 256 / unroll 32 at N = 262144 ran 3.7% slower) */
    count = min(count, n);
    const vec4 zero = {0, 0, 0, 0};
    vec4 pi[ORR_IPT];
    real ax[ORR_IPT], ay[ORR_IPT], az[ORR_IPT], cx[ORR_IPT], cy[ORR_IPT], cz[ORR_IPT];
#pragma unroll
    for (int r = 0; r < ORR_IPT; r++) {
        const int i = first + r * groups;
        pi[r] = i < count ? ipos[i] : zero;
        ax[r] = ay[r] = az[r] = cx[r] = cy[r] = cz[r] = 0;
#pragma unroll
        for (int a = 0; a < ORR_NATTRS; a++)
            ai[r][a] = ORR_NATTR > 0 && i < count ? iattr[i * ORR_NATTR + a] : (real)0;
    }

    const int y = y0 + blockIdx.y;
    const int jbeg = y * jlen, jend = min(n, jbeg + jlen);
    /* ORR_PREFETCH: each thread loads its source of the next tile into
     * registers right after the barrier that publishes this one, so the
     * load's latency passes behind this tile's sums (the same sums in the
     * same order: no bit changes) */
    vec4 next = zero;
    real nattr[ORR_NATTRS];
    if (ORR_PREFETCH) {
        next = jbeg + t < jend ? pos[jbeg + t] : zero;
#pragma unroll
        for (int a = 0; a < ORR_NATTR; a++)
            nattr[a] = jbeg + t < jend ? attr[(jbeg + t) * ORR_NATTR + a] : (real)0;
    }
    for (int base = jbeg; base < jend; base += ORR_BLOCK) {
        const int j = base + t;
        tile[t] = ORR_PREFETCH ? next : j < jend ? pos[j] : zero;
#pragma unroll
        for (int a = 0; a < ORR_NATTR; a++)
            tattr[t * ORR_NATTR + a] = ORR_PREFETCH ? nattr[a] : j < jend ? attr[j * ORR_NATTR + a] : (real)0;
        __syncthreads();
        if (ORR_PREFETCH) {
            const int jn = j + ORR_BLOCK;
            next = jn < jend ? pos[jn] : zero;
#pragma unroll
            for (int a = 0; a < ORR_NATTR; a++)
                nattr[a] = jn < jend ? attr[jn * ORR_NATTR + a] : (real)0;
        }
        real sx[ORR_IPT], sy[ORR_IPT], sz[ORR_IPT];
#pragma unroll
        for (int r = 0; r < ORR_IPT; r++)
            sx[r] = sy[r] = sz[r] = 0;
        if (base + ORR_BLOCK <= jend) {
#pragma unroll orr_unroll
            for (int k = 0; k < ORR_BLOCK / ORR_SPLIT; k++) {
                const vec4 pj = tile[k * ORR_SPLIT + part];
                const real *aj = &tattr[ORR_NATTR > 0 ? (k * ORR_SPLIT + part) * ORR_NATTR : 0];
#pragma unroll
                for (int r = 0; r < ORR_IPT; r++)
                    orr_interact<real>(pi[r], pj, ai[r], aj, rt, sx[r], sy[r], sz[r]);
            }
        } else {
            for (int k = part; k < jend - base; k += ORR_SPLIT) {
                const vec4 pj = tile[k];
                const real *aj = &tattr[ORR_NATTR > 0 ? k * ORR_NATTR : 0];
#pragma unroll
                for (int r = 0; r < ORR_IPT; r++)
                    orr_interact<real>(pi[r], pj, ai[r], aj, rt, sx[r], sy[r], sz[r]);
            }
        }
#pragma unroll
        for (int r = 0; r < ORR_IPT; r++) {
            orr_kahan_add(ax[r], cx[r], sx[r]);
            orr_kahan_add(ay[r], cy[r], sy[r]);
            orr_kahan_add(az[r], cz[r], sz[r]);
        }
        __syncthreads();
    }
    const real g = orr_law_scale<real>(rt);
#pragma unroll
    for (int r = 0; r < ORR_IPT; r++) {
#pragma unroll
        for (int off = ORR_SPLIT / 2; off > 0; off /= 2) {
            ax[r] += __shfl_xor_sync(0xffffffffu, ax[r], off);
            ay[r] += __shfl_xor_sync(0xffffffffu, ay[r], off);
            az[r] += __shfl_xor_sync(0xffffffffu, az[r], off);
        }
        const int i = first + r * groups;
        if (part == 0 && i < count) {
            const vec4 a = {g * ax[r], g * ay[r], g * az[r], 0};
            acc[(size_t)y * n + i] = a;   /* the fields after, by orr_fields_add */
        }
    }
}

/* The fields' acceleration added to the targets' total (after orr_accel
 * and orr_combine): a kernel of its own, so that a field's code (milky_way
 * in double: 30 registers more) does not take registers from the pair
 * loop. */
template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_fields_add(const typename orr_vec4<real>::type *__restrict__ ipos, orr_rtparams rtp,
               typename orr_vec4<real>::type *__restrict__ acc, int count)
{
    const int i = blockIdx.x * ORR_BLOCK + threadIdx.x;
    if (ORR_NFIELDS == 0 || i >= count)
        return;
    const typename orr_vec4<real>::type p = ipos[i];
    typename orr_vec4<real>::type a = acc[i];
    orr_fields_accel<real>(p.x, p.y, p.z, rtp.v + ORR_RT_FIELD, rtp.v[ORR_RT_T0], &a.x, &a.y,
                           &a.z);
    acc[i] = a;
}

template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_combine(const typename orr_vec4<real>::type *__restrict__ part,
            typename orr_vec4<real>::type *__restrict__ acc, int n, int ranges, int first,
            int count)
{
    const int i = first + blockIdx.x * ORR_BLOCK + threadIdx.x;
    if (i >= first + count)
        return;
    double x = 0, y = 0, z = 0;
    for (int r = 0; r < ranges; r++) {
        const typename orr_vec4<real>::type p = part[(size_t)r * n + i];
        x += p.x;
        y += p.y;
        z += p.z;
    }
    const typename orr_vec4<real>::type a = {(real)x, (real)y, (real)z, 0};
    acc[i] = a;
}

template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_accel_naive(const typename orr_vec4<real>::type *__restrict__ pos,
                const real *__restrict__ attr, orr_rtparams rtp,
                typename orr_vec4<real>::type *__restrict__ acc, int n, int first, int count)
{
    typedef typename orr_vec4<real>::type vec4;
    const int i = first + blockIdx.x * ORR_BLOCK + threadIdx.x;
    if (i >= first + count)
        return;
    ORR_RT_LOAD(rt, rtp);
    const vec4 pi = pos[i];
    const real *ai = ORR_NATTR > 0 ? attr + (size_t)i * ORR_NATTR : attr;
    real ax = 0, ay = 0, az = 0;
    for (int j = 0; j < n; j++)
        orr_interact<real>(pi, pos[j], ai, ORR_NATTR > 0 ? attr + (size_t)j * ORR_NATTR : attr, rt,
                           ax, ay, az);
    const real g = orr_law_scale<real>(rt);
    vec4 a = {g * ax, g * ay, g * az, 0};
    if (ORR_NFIELDS > 0)
        orr_fields_accel<real>(pi.x, pi.y, pi.z, rtp.v + ORR_RT_FIELD, rtp.v[ORR_RT_T0], &a.x,
                               &a.y, &a.z);
    acc[i] = a;
}

/* Blow-ups: the first body (lowest step, then lowest index) whose
 * acceleration (kick) or new position (drift) is not finite, as
 * step << 32 | body in *flag (all ones: none). */
static __device__ __forceinline__ void orr_flag_body(unsigned long long *flag, unsigned step,
                                                     int i)
{
    atomicMin(flag, (unsigned long long)step << 32 | (unsigned)i);
}

template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_kick(typename orr_vec4<real>::type *__restrict__ vel,
         const typename orr_vec4<real>::type *__restrict__ acc, real dt, real damping, int first,
         int count, unsigned long long *flag, unsigned step)
{
    const int i = first + blockIdx.x * ORR_BLOCK + threadIdx.x;
    if (i < first + count) {
        const typename orr_vec4<real>::type a = acc[i];
        if (!isfinite(a.x) || !isfinite(a.y) || !isfinite(a.z))
            orr_flag_body(flag, step, i);
        vel[i].x = fma(a.x, dt, vel[i].x) * damping;
        vel[i].y = fma(a.y, dt, vel[i].y) * damping;
        vel[i].z = fma(a.z, dt, vel[i].z) * damping;
    }
}

template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_drift(typename orr_vec4<real>::type *__restrict__ pos,
          const typename orr_vec4<real>::type *__restrict__ vel, real dt, int first, int count,
          unsigned long long *flag, unsigned step)
{
    const int i = first + blockIdx.x * ORR_BLOCK + threadIdx.x;
    if (i < first + count) {
        const real x = orr_wrap(fma(vel[i].x, dt, pos[i].x), X),
                   y = orr_wrap(fma(vel[i].y, dt, pos[i].y), Y),
                   z = orr_wrap(fma(vel[i].z, dt, pos[i].z), Z);
        if (!isfinite(x) || !isfinite(y) || !isfinite(z))
            orr_flag_body(flag, step, i);
        pos[i].x = x;
        pos[i].y = y;
        pos[i].z = z;
    }
}

/* The block's threads' values summed (by warps, then the first warp) into
 * partial[blockIdx.x], times scale: the potential kernels' per-block sums. */
static __device__ __forceinline__ void orr_block_sum(double v, double *warp_sum,
                                                     double *__restrict__ partial, double scale)
{
    const int t = threadIdx.x;
    for (int off = 16; off > 0; off /= 2)
        v += __shfl_down_sync(0xffffffffu, v, off);
    if (t % 32 == 0)
        warp_sum[t / 32] = v;
    __syncthreads();
    if (t < 32) {
        v = t < ORR_BLOCK / 32 ? warp_sum[t] : 0.0;
        for (int off = 16; off > 0; off /= 2)
            v += __shfl_down_sync(0xffffffffu, v, off);
        if (t == 0)
            partial[blockIdx.x] = v * scale;
    }
}

template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_potential(const typename orr_vec4<real>::type *__restrict__ pos, const real *__restrict__ attr,
              orr_rtparams rtp, double *__restrict__ partial, int n, int first, int count)
{
    typedef typename orr_vec4<real>::type vec4;
    __shared__ vec4 tile[ORR_BLOCK];
    __shared__ real tattr[ORR_NATTR > 0 ? ORR_BLOCK * ORR_NATTR : 1];
    ORR_RT_LOAD(rt, rtp);
    __shared__ double warp_sum[ORR_BLOCK / 32];
    const int t = threadIdx.x;
    const int i = first + blockIdx.x * ORR_BLOCK + t;
    const bool target = i < first + count;
    const vec4 zero = {0, 0, 0, 0};
    const vec4 pi = target ? pos[i] : zero;
    real ai[ORR_NATTRS];
#pragma unroll
    for (int a = 0; a < ORR_NATTRS; a++)
        ai[a] = ORR_NATTR > 0 && target ? attr[i * ORR_NATTR + a] : (real)0;
    double phi = 0;
    for (int base = 0; base < n; base += ORR_BLOCK) {
        const int j = base + t;
        tile[t] = j < n ? pos[j] : zero;
#pragma unroll
        for (int a = 0; a < ORR_NATTR; a++)
            tattr[t * ORR_NATTR + a] = j < n ? attr[j * ORR_NATTR + a] : (real)0;
        __syncthreads();
        const int m = min(ORR_BLOCK, n - base);
        for (int k = 0; k < m; k++) {
            const vec4 pj = tile[k];
            real dx = orr_min_image(pj.x - pi.x, X), dy = orr_min_image(pj.y - pi.y, Y),
                 dz = orr_min_image(pj.z - pi.z, Z);
            real d2 = fma(dz, dz, fma(dy, dy, dx * dx));
            real r2 = fma(dz, dz, fma(dy, dy, fma(dx, dx, (real)ORR_EPS2)));
            if (base + k != i)
                phi += (double)orr_pair_potential<real>(
                    dx, dy, dz, d2, r2, pi.w, pj.w, ai,
                    &tattr[ORR_NATTR > 0 ? k * ORR_NATTR : 0], 1, rt);
        }
        __syncthreads();
    }
    phi = target ? 0.5 * phi : 0.0;   /* each pair is seen from both ends */
    orr_block_sum(phi, warp_sum, partial, (double)orr_law_scale<real>(rt));
}

/* The external fields' potential energy of the targets, m_i Phi(x_i)
 * summed in double per block, as orr_potential's. */
template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_field_potential(const typename orr_vec4<real>::type *__restrict__ pos, orr_rtparams rtp,
                    double *__restrict__ partial, int first, int count)
{
    __shared__ double warp_sum[ORR_BLOCK / 32];
    const int t = threadIdx.x;
    const int i = first + blockIdx.x * ORR_BLOCK + t;
    double phi = 0;
    if (ORR_NFIELDS > 0 && i < first + count) {
        const typename orr_vec4<real>::type p = pos[i];
        phi = (double)p.w * (double)orr_fields_potential<real>(p.x, p.y, p.z, rtp.v + ORR_RT_FIELD,
                                                               rtp.v[ORR_RT_T0]);
    }
    orr_block_sum(phi, warp_sum, partial, 1.0);
}

/* ---- block time steps: the Hermite integrator (core/hermite.c) ---------------
 * Every body has its own time tick[i] within the interval (ticks of
 * H / 2^ORR_HMAX) and its own step END >> level[i].  A block step is a few
 * kernels whose launches never depend on the block, so that the host
 * queues a whole interval of them in batches without reading anything
 * back between blocks (backend_cuda.c; docs/PERFORMANCE.md has what was
 * measured against the alternatives):
 *
 *   orr_hnext      the smallest next time, into the control words (orr_hctl);
 *   orr_hpredict   every body predicted to it (xp, vp; positions to 3rd
 *                  order, velocities to 2nd) and the active bodies listed
 *                  (act, count: in any order, each body's sums do not depend
 *                  on it); for a small n one block does both
 *                  (orr_hnext_predict);
 *   orr_accel_jerk{64,128,256}  the active bodies' accelerations and jerks
 *                  from all predicted bodies: each kernel reads the active
 *                  count and finds its shape (orr_hshape_of: the bucket's
 *                  tile and j-split, and how many adjacent threads share a
 *                  body: engine.c's orr_hlaunch_shape), does nothing unless
 *                  the tile is its own, and walks the shape's (i-block,
 *                  j-range) items with however many blocks it was launched
 *                  with (partials pa, pj at row y, stride count);
 *   orr_hcorrect   the active bodies corrected (in double; adding the
 *                  j-ranges' rows in a fixed order) and their next steps
 *                  chosen (Aarseth's criterion);
 *   orr_hloop      the block's statistics, the control words reset for the
 *                  next one, and `done` once the interval has ended, which
 *                  every kernel reads first: the launches queued after the
 *                  last block do nothing.
 *
 * The shape of a block depends on its active count only, whatever queued
 * it, so every path gives the same bits (and those of the host path in
 * hermite.c, to the rounding of the predictor). */
#define ORR_HMAX 40
#define ORR_HBUCKETS 13   /* engine.h's; backend_cuda.c checks that they agree */
typedef unsigned long long orr_tick;

/* The block steps' control words (device memory; backend_cuda.c's hctl). */
struct orr_hctl {
    orr_tick next;               /* the block's time: the smallest next time */
    unsigned count;              /* its active bodies */
    int deepest;                 /* the finest level used since the interval began */
    orr_tick last;               /* the last finished block's time */
    unsigned long long blocks;   /* blocks finished since the interval began */
    unsigned long long active;   /* their active bodies, summed */
    unsigned last_count;         /* the last finished block's active bodies */
    unsigned done;               /* no block is left: the interval ended or max_blocks */
    unsigned bar[2];             /* orr_hinterval's grid barrier: arrivals ever, and their
                                    count as the launch began (orr_grid_sync) */
    unsigned split;              /* orr_hinterval stopped at a block to split between GPUs
                                    (next and count are its time and active bodies) */
    unsigned stop;               /* orr_hinterval stopped for the host (the regularised
                                    groups, hermite.c): 1 before a block at or after
                                    hparams.stop or cstop, 2 after a block in which a
                                    corrected body's acceleration reached hparams.pull */
    unsigned long long phase[4]; /* orr_hinterval's phases, ns summed (its block 0's clock):
                                    the first next time, prediction, force + jerk, correction
                                    with the next block's time */
    orr_tick ahead[2];           /* orr_hinterval: the next block's time, found as a block
                                    ends (by the parity of the block within the launch) */
    orr_tick cstop;              /* orr_hinterval_watched stops before a block at this time
                                    too: the next of a fast pair's centre it corrected (the
                                    host moves the pair on first; reset at each launch) */
};

/* The interval's parameters (device memory, written as it begins). */
#define ORR_HDECLINED 16   /* engine.h's ORR_WATCH_DECLINED */
struct orr_hparams {
    double H, eta, unit;             /* unit = H / 2^ORR_HMAX */
    double anoise;                   /* the step criterion's noise floor (orr_hnoise; engine.h's
                                        orr_block_params) */
    unsigned long long max_blocks;   /* done after this many blocks (a stall) */
    int hi;                          /* the finest level dt_min allows */
    int npairs;                      /* orr_hinterval_watched: the pairs after these params */
    orr_tick stop;                   /* orr_hinterval stops before a block at this time ... */
    double pull, near2;              /* ... or after one where a corrected body's |a| reached
                                        pull with another active body within sqrt(near2) at the
                                        block's time, predicted, bound to it or approaching to
                                        a pericentre within peri (unbound) or peri_b (bound;
                                        the host's watch: ~0, infinity and 0 when none) */
    double peri, peri_b, G;
    int ndec, pad;                   /* pairs the host declined to form (a tide holds them
                                        apart; groups.c): their pull stops no block before
                                        dec_until */
    int dec_a[ORR_HDECLINED], dec_b[ORR_HDECLINED];
    orr_tick dec_until[ORR_HDECLINED];
};

/* A regularised pair whose perturbers orr_hinterval_watched resolves
 * itself (engine.h: orr_watch_pair; backend_cuda.c's hpair), npairs of
 * them right after the orr_hparams in its buffer. */
struct orr_hpair {
    int centre, other;   /* the centre's body (member 0) and member 1's (a ghost) */
    int fast;            /* fast: the centre's block is the loop's too, the pair moved on to
                            it by the host (t0 its time), the pull of its perturbers (npl
                            bodies from pl0 in the lists after the pairs) on its members
                            (orr_centre_pull), its next step at most cap; the loop stops
                            before its next (hctl.cstop) */
    int pl0, npl, pad;
    double m0, m1;       /* the members' masses */
    double t0;           /* the time of r and v: tick * unit, the interval's */
    double r[3], v[3];   /* member 1's position and velocity less member 0's */
    double R2;           /* an active body closer than sqrt(R2) to the centre is resolved */
    double cap;          /* a fast pair: its centre's longest next step */
};

/* The force + jerk launch per bucket of active bodies (engine.h:
 * orr_hlaunch, the defaults resolved), and the SMs. */
struct orr_hplan {
    int tile[ORR_HBUCKETS], per_sm[ORR_HBUCKETS];
    int sms;
};

/* A block's force + jerk shape: the tile, the blocks of active bodies, the
 * j-ranges and the bodies of each. */
struct orr_hshape {
    int tile, split, iblocks, ranges, jlen;
};

/* a / b for a >= 0, b > 0: a 32-bit division where both fit (the same
 * quotient; a 64-bit division is a long subroutine, and the shape is
 * found on every block's path) */
static __device__ __forceinline__ long long orr_qdiv(long long a, long long b)
{
    return (((unsigned long long)a | (unsigned long long)b) >> 32) == 0
               ? (long long)((unsigned)a / (unsigned)b)
               : a / b;
}

/* The shape for nact active bodies of n: engine.c's orr_hbucket and
 * orr_hlaunch_ranges, in the same integer arithmetic (j-ranges as even as
 * the bodies allow, not whole tiles). */
static __device__ __forceinline__ orr_hshape orr_hshape_of(const orr_hplan &p, int n, int nact)
{
    int k = 0;
    while (k < ORR_HBUCKETS - 1 && (long long)nact > (64LL << (2 * k)))
        k++;
    orr_hshape s;
    s.tile = p.tile[k];
    s.split = 1;
    if (nact < 1) {
        s.iblocks = 0, s.ranges = 1, s.jlen = n;
        return s;
    }
    const long long tiles = orr_qdiv((long long)n + s.tile - 1, s.tile),
                    want = (long long)p.per_sm[k] * p.sms;
    while (s.split < 32 && orr_qdiv((long long)nact * s.split + s.tile - 1, s.tile) * tiles < want)
        s.split *= 2;
    const int per = s.tile / s.split;
    s.iblocks = (nact + per - 1) / per;
    long long r = orr_qdiv(want + s.iblocks - 1, s.iblocks);
    r = r > 256 ? 256 : r;
    r = r > tiles ? tiles : r;
    const long long most = orr_qdiv(4LL * n, nact);
    r = r > most ? most : r;
    r = r < 1 ? 1 : r;
    const long long len = orr_qdiv((long long)n + r - 1, r);
    s.jlen = (int)len;
    s.ranges = (int)orr_qdiv((long long)n + len - 1, len);
    return s;
}

#ifndef ORR_HPREFETCH
#define ORR_HPREFETCH 1   /* the force + jerk tiles' sources loaded a tile ahead */
#endif

/* A pair's acceleration (scale f d) and jerk (f v + 2 g (d . v) d) into u[6]. */
template <typename T>
static __device__ __forceinline__ void orr_jerk_add(T *u, T dx, T dy, T dz, T du, T dv, T dw, T f,
                                                    T g)
{
    const T w = 2 * g * (dx * du + dy * dv + dz * dw);
    u[0] += dx * f;
    u[1] += dy * f;
    u[2] += dz * f;
    u[3] += f * du + w * dx;
    u[4] += f * dv + w * dy;
    u[5] += f * dw + w * dz;
}

template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_hnext(const orr_tick *__restrict__ tick, const int *__restrict__ level, orr_hctl *hc, int n)
{
    if (hc->done)
        return;
    const int i = blockIdx.x * ORR_BLOCK + threadIdx.x;
    orr_tick t = i < n ? tick[i] + ((1ULL << ORR_HMAX) >> level[i]) : ~0ULL;
    for (int off = 16; off > 0; off /= 2) {
        const orr_tick o = __shfl_down_sync(0xffffffffu, t, off);
        t = o < t ? o : t;
    }
    if (threadIdx.x % 32 == 0)
        atomicMin(&hc->next, t);
}

/* Body i predicted to time t (x to 3rd order, v to 2nd) into xp, vp; and
 * whether it is active then. */
template <typename real>
static __device__ __forceinline__ bool
orr_predict_one(int i, orr_tick t, const typename orr_vec4<real>::type *__restrict__ pos,
                const typename orr_vec4<real>::type *__restrict__ vel,
                const typename orr_vec4<real>::type *__restrict__ acc,
                const typename orr_vec4<real>::type *__restrict__ jerk,
                const orr_tick *__restrict__ tick, const int *__restrict__ level, double unit,
                typename orr_vec4<real>::type *__restrict__ xp,
                typename orr_vec4<real>::type *__restrict__ vp)
{
    typedef typename orr_vec4<real>::type vec4;
    const real dt = (real)((double)(t - tick[i]) * unit), dt2 = dt * dt / 2, dt3 = dt2 * dt / 3;
    const vec4 x = pos[i], v = vel[i], a = acc[i], j = jerk[i];
    vec4 px = {x.x + v.x * dt + a.x * dt2 + j.x * dt3, x.y + v.y * dt + a.y * dt2 + j.y * dt3,
               x.z + v.z * dt + a.z * dt2 + j.z * dt3, x.w};
    vec4 pv = {v.x + a.x * dt + j.x * dt2, v.y + a.y * dt + j.y * dt2, v.z + a.z * dt + j.z * dt2,
               0};
    xp[i] = px;
    vp[i] = pv;
    return tick[i] + ((1ULL << ORR_HMAX) >> level[i]) == t;
}

template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_hpredict(const typename orr_vec4<real>::type *__restrict__ pos,
             const typename orr_vec4<real>::type *__restrict__ vel,
             const typename orr_vec4<real>::type *__restrict__ acc,
             const typename orr_vec4<real>::type *__restrict__ jerk,
             const orr_tick *__restrict__ tick, const int *__restrict__ level, orr_hctl *hc,
             const orr_hparams *__restrict__ hp, typename orr_vec4<real>::type *__restrict__ xp,
             typename orr_vec4<real>::type *__restrict__ vp, int *__restrict__ act, int n)
{
    if (hc->done)
        return;
    const int i = blockIdx.x * ORR_BLOCK + threadIdx.x;
    if (i < n &&
        orr_predict_one<real>(i, hc->next, pos, vel, acc, jerk, tick, level, hp->unit, xp, vp))
        act[atomicAdd(&hc->count, 1u)] = i;
}

/* orr_hnext and orr_hpredict in one block, for a small n (the host's
 * choice): the smallest next time by a block reduction, then every body
 * predicted to it and the active ones listed; the same values as the
 * pair. */
template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_hnext_predict(const typename orr_vec4<real>::type *__restrict__ pos,
                  const typename orr_vec4<real>::type *__restrict__ vel,
                  const typename orr_vec4<real>::type *__restrict__ acc,
                  const typename orr_vec4<real>::type *__restrict__ jerk,
                  const orr_tick *__restrict__ tick, const int *__restrict__ level, orr_hctl *hc,
                  const orr_hparams *__restrict__ hp,
                  typename orr_vec4<real>::type *__restrict__ xp,
                  typename orr_vec4<real>::type *__restrict__ vp, int *__restrict__ act, int n)
{
    if (hc->done)
        return;
    __shared__ orr_tick wmin[ORR_BLOCK / 32];
    __shared__ unsigned listed;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    orr_tick t = ~0ULL;
    for (int i = threadIdx.x; i < n; i += ORR_BLOCK) {
        const orr_tick ti = tick[i] + ((1ULL << ORR_HMAX) >> level[i]);
        t = ti < t ? ti : t;
    }
    for (int off = 16; off > 0; off /= 2) {
        const orr_tick o = __shfl_down_sync(0xffffffffu, t, off);
        t = o < t ? o : t;
    }
    if (lane == 0)
        wmin[warp] = t;
    if (threadIdx.x == 0)
        listed = 0;
    __syncthreads();
    if (warp == 0) {
        t = lane < ORR_BLOCK / 32 ? wmin[lane] : ~0ULL;
        for (int off = 16; off > 0; off /= 2) {
            const orr_tick o = __shfl_down_sync(0xffffffffu, t, off);
            t = o < t ? o : t;
        }
        if (lane == 0)
            wmin[0] = t;
    }
    __syncthreads();
    t = wmin[0];
    const double unit = hp->unit;
    for (int i = threadIdx.x; i < n; i += ORR_BLOCK)
        if (orr_predict_one<real>(i, t, pos, vel, acc, jerk, tick, level, unit, xp, vp))
            act[atomicAdd(&listed, 1u)] = i;
    __syncthreads();
    if (threadIdx.x == 0) {
        hc->next = t;
        hc->count = listed;
    }
}

/* A force + jerk tile's shared memory: the sources' positions and
 * velocities (and attributes) of a tile of TILE bodies. */
template <typename real>
struct orr_jtile {
#if ORR_MIXED
    float4 *th, *tl, *tv;
#else
    typename orr_vec4<real>::type *tx, *tv;
#endif
    real *tattr;
};

/* Its bytes, and the tile laid out from base (32-byte aligned). */
template <typename real>
static __host__ __device__ constexpr int orr_jtile_bytes(int tile)
{
    return tile * (ORR_MIXED ? 3 * (int)sizeof(float4)
                             : 2 * (int)sizeof(typename orr_vec4<real>::type)) +
           tile * ORR_NATTR * (int)sizeof(real);
}

template <typename real>
static __device__ __forceinline__ orr_jtile<real> orr_jtile_at(unsigned char *base, int tile)
{
    orr_jtile<real> sh;
#if ORR_MIXED
    sh.th = (float4 *)base;
    sh.tl = sh.th + tile;
    sh.tv = sh.tl + tile;
    sh.tattr = (real *)(sh.tv + tile);
#else
    sh.tx = (typename orr_vec4<real>::type *)base;
    sh.tv = sh.tx + tile;
    sh.tattr = (real *)(sh.tv + tile);
#endif
    return sh;
}

/* The barrier of a tile's threads: the block's own where a block is one
 * tile, else the named barrier of its group (1 + group; 0 is the
 * block's). */
template <int TILE, int GROUPS>
static __device__ __forceinline__ void orr_tile_sync(int group)
{
    if (GROUPS == 1)
        __syncthreads();
    else
        asm volatile("bar.sync %0, %1;" ::"r"(group + 1), "r"(TILE) : "memory");
}

template <typename real, int TILE, int GROUPS>
static __device__ __forceinline__ void
orr_accel_jerk_tile(const typename orr_vec4<real>::type *__restrict__ xp,
                    const typename orr_vec4<real>::type *__restrict__ vp,
                    const real *__restrict__ attr, const int *__restrict__ act, int nact,
                    const orr_rtparams &rtp, typename orr_vec4<real>::type *__restrict__ pa,
                    typename orr_vec4<real>::type *__restrict__ pj, int n, int jlen, int stride,
                    int split, int iblocks, int ib, int y, const orr_jtile<real> &sh, int group,
                    double tf)
{
    typedef typename orr_vec4<real>::type vec4;
#if ORR_MIXED
    /* positions as double-single pairs (hi + lo floats), velocities in float */
    float4 *const th = sh.th, *const tl = sh.tl, *const tv = sh.tv;
#else
    vec4 *const tx = sh.tx, *const tv = sh.tv;
#endif
    real *const tattr = sh.tattr;
    ORR_RT_LOAD(rt, rtp);
    /* split adjacent threads share a body, each taking every split-th
     * source of a tile; their sums are added by shuffles at the end */
    /* the active bodies spread evenly over the i-blocks (i-block ib holds
     * those from ib nact / iblocks on, at most TILE / split of them): every
     * item has about as many busy warps, so no SM has twice the pairs of
     * another (433 active in two tile-256 i-blocks were 256 and 177, and the
     * SMs whose two items were both full set the pace); each body's sums are
     * the same whichever thread makes them */
    const int t = GROUPS > 1 ? threadIdx.x % TILE : threadIdx.x, part = t % split,
              k = (int)orr_qdiv((long long)ib * nact, iblocks) + t / split;
    const bool active = k < (int)orr_qdiv((long long)(ib + 1) * nact, iblocks);
    /* a warp without an active body loads and waits with the others but
     * leaves the pairs alone: the SM's FP64 pipes go to the busy warps (a
     * block of 433 active bodies fills 14 of the 16 warps of two tile-256
     * items; the active bodies' bits are the same) */
    const bool busy = __any_sync(0xffffffffu, active);
    const int i = active ? act[k] : 0;
    const vec4 pi = xp[i], vi = vp[i];
    real ai[ORR_NATTRS];
#pragma unroll
    for (int a = 0; a < ORR_NATTRS; a++)
        ai[a] = ORR_NATTR > 0 ? attr[i * ORR_NATTR + a] : (real)0;
    real s[6] = {0, 0, 0, 0, 0, 0}, c[6] = {0, 0, 0, 0, 0, 0};
    const vec4 zero = {0, 0, 0, 0};
    const int jbeg = y * jlen, jend = min(n, jbeg + jlen);
#if ORR_MIXED
    float aif[ORR_NATTRS], rtf[ORR_NRTS];
#pragma unroll
    for (int a = 0; a < ORR_NATTRS; a++)
        aif[a] = (float)ai[a];
#pragma unroll
    for (int q = 0; q < ORR_NRTS; q++)
        rtf[q] = (float)rt[q];
    const float xh = (float)pi.x, yh = (float)pi.y, zh = (float)pi.z;
    const float xl = (float)(pi.x - (double)xh), yl = (float)(pi.y - (double)yh),
                zl = (float)(pi.z - (double)zh);
    const float ux = (float)vi.x, uy = (float)vi.y, uz = (float)vi.z;
#endif
    /* ORR_HPREFETCH: each thread's source of the next tile is loaded into
     * registers right after the barrier that publishes this one, so the
     * load's latency passes behind this tile's pairs (as orr_accel's
     * ORR_PREFETCH; the same sums in the same order) */
    vec4 np = zero, nv = zero;
    real nat[ORR_NATTRS];
    if (ORR_HPREFETCH) {
        const bool in = jbeg + t < jend;
        np = in ? xp[jbeg + t] : zero;
        nv = in ? vp[jbeg + t] : zero;
#pragma unroll
        for (int a = 0; a < ORR_NATTR; a++)
            nat[a] = in ? attr[(jbeg + t) * ORR_NATTR + a] : (real)0;
    }
    for (int base = jbeg; base < jend; base += TILE) {
        const int j = base + t;
#if ORR_MIXED
        {
            const vec4 p = ORR_HPREFETCH ? np : j < jend ? xp[j] : zero,
                       v = ORR_HPREFETCH ? nv : j < jend ? vp[j] : zero;
            const float4 h = {(float)p.x, (float)p.y, (float)p.z, (float)p.w};
            const float4 l = {(float)(p.x - (double)h.x), (float)(p.y - (double)h.y),
                              (float)(p.z - (double)h.z), 0.f};
            const float4 w = {(float)v.x, (float)v.y, (float)v.z, 0.f};
            th[t] = h;
            tl[t] = l;
            tv[t] = w;
        }
#else
        tx[t] = ORR_HPREFETCH ? np : j < jend ? xp[j] : zero;
        tv[t] = ORR_HPREFETCH ? nv : j < jend ? vp[j] : zero;
#endif
#pragma unroll
        for (int a = 0; a < ORR_NATTR; a++)
            tattr[t * ORR_NATTR + a] = ORR_HPREFETCH ? nat[a] : j < jend ? attr[j * ORR_NATTR + a]
                                                                         : (real)0;
        orr_tile_sync<TILE, GROUPS>(group);
        if (ORR_HPREFETCH) {
            const int jn = j + TILE;
            const bool in = jn < jend;
            np = in ? xp[jn] : zero;
            nv = in ? vp[jn] : zero;
#pragma unroll
            for (int a = 0; a < ORR_NATTR; a++)
                nat[a] = in ? attr[jn * ORR_NATTR + a] : (real)0;
        }
#if ORR_MIXED
        /* the separation from the double-single pairs: the difference of
         * the hi parts is exact for close bodies (Sterbenz), so a close
         * pair keeps the separation that double positions give; the rest
         * of the pair, and the tile's sums, in float; the tiles' in double */
        float u[6] = {0, 0, 0, 0, 0, 0};
        const int m = min(TILE, jend - base);
        /* stride 1 where a body has a thread of its own: the loop the
         * compiler unrolls best (a runtime stride is suspected of the
         * all-active block's loss at 70e6697: to be measured) */
        auto pair = [&](int q) {
            const float4 h = th[q], l = tl[q], vj = tv[q];
            float ajf[ORR_NATTRS];
#pragma unroll
            for (int a = 0; a < ORR_NATTRS; a++)
                ajf[a] = ORR_NATTR > 0 ? (float)tattr[q * ORR_NATTR + a] : 0.f;
            const float dx = (float)orr_min_image((h.x - xh) + (l.x - xl), X),
                        dy = (float)orr_min_image((h.y - yh) + (l.y - yl), Y),
                        dz = (float)orr_min_image((h.z - zh) + (l.z - zl), Z);
            const float du = vj.x - ux, dv = vj.y - uy, dw = vj.z - uz;
            const float d2 = dx * dx + dy * dy + dz * dz, r2 = d2 + (float)ORR_EPS2;
            const float f = orr_pair_accel<float>(dx, dy, dz, d2, r2, (float)pi.w, h.w, aif, ajf,
                                                  1, rtf);
            const float g = orr_pair_jerk<float>(dx, dy, dz, d2, r2, (float)pi.w, h.w, aif, ajf,
                                                 1, rtf, f);
            orr_jerk_add<float>(u, dx, dy, dz, du, dv, dw, f, g);
        };
        if (!busy) {
        } else if (split == 1 && m == TILE) {   /* a whole tile: unrolled (as in double) */
#pragma unroll 16
            for (int q = 0; q < TILE; q++)
                pair(q);
        } else if (split == 1) {
            for (int q = 0; q < m; q++)
                pair(q);
        } else {
            for (int q = part; q < m; q += split)
                pair(q);
        }
#pragma unroll
        for (int d = 0; d < 6; d++)
            orr_kahan_add(s[d], c[d], (real)u[d]);
#else
        real u[6] = {0, 0, 0, 0, 0, 0};
        const int m = min(TILE, jend - base);
        /* stride 1 where a body has a thread of its own: the loop the
         * compiler unrolls best (a runtime stride is suspected of the
         * all-active block's loss at 70e6697: to be measured) */
        auto pair = [&](int q) {
            const vec4 pj4 = tx[q], vj = tv[q];
            const real *aj = &tattr[ORR_NATTR > 0 ? q * ORR_NATTR : 0];
            const real dx = orr_min_image(pj4.x - pi.x, X), dy = orr_min_image(pj4.y - pi.y, Y),
                       dz = orr_min_image(pj4.z - pi.z, Z);
            const real du = vj.x - vi.x, dv = vj.y - vi.y, dw = vj.z - vi.z;
            const real d2 = dx * dx + dy * dy + dz * dz, r2 = d2 + (real)ORR_EPS2;
            const real f = orr_pair_accel<real>(dx, dy, dz, d2, r2, pi.w, pj4.w, ai, aj, 1, rt);
            const real g =
                orr_pair_jerk<real>(dx, dy, dz, d2, r2, pi.w, pj4.w, ai, aj, 1, rt, f);
            orr_jerk_add<real>(u, dx, dy, dz, du, dv, dw, f, g);
        };
        if (!busy) {
        } else if (split == 1 && m == TILE) {   /* a whole tile: unrolled, the same sums in
                                                   order (docs/PERFORMANCE.md: by 8, N = 65536
                                                   at 78.9% of the all-active rate against
                                                   77.3%; by 16, N = 32768 1% faster again; by
                                                   4 the split tiles too: slower) */
#pragma unroll 16
            for (int q = 0; q < TILE; q++)
                pair(q);
        } else if (split == 1) {
            for (int q = 0; q < m; q++)
                pair(q);
        } else {
            for (int q = part; q < m; q += split)
                pair(q);
        }
#pragma unroll
        for (int d = 0; d < 6; d++)
            orr_kahan_add(s[d], c[d], u[d]);
#endif
        orr_tile_sync<TILE, GROUPS>(group);
    }
    for (int off = split / 2; off > 0; off /= 2)
#pragma unroll
        for (int d = 0; d < 6; d++)
            s[d] += __shfl_xor_sync(0xffffffffu, s[d], off);
    if (active && part == 0) {
        const real g = orr_law_scale<real>(rt);
        const size_t at = (size_t)y * stride + k;
        vec4 a = {g * s[0], g * s[1], g * s[2], 0}, jk = {g * s[3], g * s[4], g * s[5], 0};
        if (ORR_NFIELDS > 0 && y == 0)   /* the fields once, in row 0, at the block's time tf */
            orr_fields_accel_jerk<real>(pi.x, pi.y, pi.z, vi.x, vi.y, vi.z, rtp.v + ORR_RT_FIELD,
                                        tf, &a.x, &a.y, &a.z, &jk.x, &jk.y, &jk.z);
        pa[at] = a;
        pj[at] = jk;
    }
}


/* A block's time for the fields: the interval's start plus its tick
 * (ORR_RT_UNIT 0 where the host gives the time itself; next ~0: a
 * host-driven pass). */
static __device__ __forceinline__ double orr_block_time(const orr_hctl *__restrict__ hc,
                                                        const orr_rtparams &rtp)
{
    const orr_tick tk = hc->next == ~0ULL ? 0 : hc->next;
    return fma((double)tk, rtp.v[ORR_RT_UNIT], rtp.v[ORR_RT_T0]);
}

/* Item (i-block ib, j-range y) of a block's force + jerk: the active
 * bodies' count read from the control words, the shape from the plan;
 * nothing unless the shape's tile is TILE.  Launched with any number of
 * blocks: they walk the items. */
template <typename real, int TILE>
static __device__ __forceinline__ void
orr_accel_jerk_items(const typename orr_vec4<real>::type *__restrict__ xp,
                     const typename orr_vec4<real>::type *__restrict__ vp,
                     const real *__restrict__ attr, const int *__restrict__ act,
                     const orr_hctl *__restrict__ hc, const orr_rtparams &rtp,
                     const orr_hplan &plan, typename orr_vec4<real>::type *__restrict__ pa,
                     typename orr_vec4<real>::type *__restrict__ pj, int n)
{
    if (hc->done)
        return;
    const int nact = (int)hc->count;
    const orr_hshape s = orr_hshape_of(plan, n, nact);
    if (s.tile != TILE)
        return;
    __shared__ __align__(32) unsigned char smem[orr_jtile_bytes<real>(TILE) > 0
                                                     ? orr_jtile_bytes<real>(TILE) : 32];
    const orr_jtile<real> sh = orr_jtile_at<real>(smem, TILE);
    const int items = s.iblocks * s.ranges;
    const double tf = orr_block_time(hc, rtp);
    for (int w = blockIdx.x; w < items; w += gridDim.x)
        orr_accel_jerk_tile<real, TILE, 1>(xp, vp, attr, act, nact, rtp, pa, pj, n, s.jlen, nact,
                                           s.split, s.iblocks, w % s.iblocks, w / s.iblocks, sh,
                                           0, tf);
}

/* The force + jerk kernel in three tile sizes (threads per block, bodies
 * per shared-memory tile): the Hermite tuner (htune.h) picks one and the
 * j-split per bucket of active bodies. */
#define ORR_ACCEL_JERK_KERNEL(TILE)                                                             \
    template <typename real>                                                                    \
    __global__ void __launch_bounds__(TILE) orr_accel_jerk##TILE(                               \
        const typename orr_vec4<real>::type *__restrict__ xp,                                   \
        const typename orr_vec4<real>::type *__restrict__ vp, const real *__restrict__ attr,    \
        const int *__restrict__ act, const orr_hctl *__restrict__ hc, orr_rtparams rtp,        \
        orr_hplan plan, typename orr_vec4<real>::type *__restrict__ pa,                         \
        typename orr_vec4<real>::type *__restrict__ pj, int n)                                  \
    {                                                                                           \
        orr_accel_jerk_items<real, TILE>(xp, vp, attr, act, hc, rtp, plan, pa, pj, n);          \
    }
ORR_ACCEL_JERK_KERNEL(64)
ORR_ACCEL_JERK_KERNEL(128)
ORR_ACCEL_JERK_KERNEL(256)

/* Active body k's acceleration and jerk: the sum of its `ranges` rows of
 * partials (stride apart), by `lanes` adjacent lanes of a warp (1 or 32):
 * lane l adds rows l, l + lanes, ... in double, then the lanes' sums are
 * added by a fixed tree, so the result does not depend on scheduling. */
template <typename real>
static __device__ __forceinline__ void
orr_jerk_sum(const typename orr_vec4<real>::type *__restrict__ pa,
             const typename orr_vec4<real>::type *__restrict__ pj, int k, int ranges, int stride,
             int lane, int lanes, typename orr_vec4<real>::type &a,
             typename orr_vec4<real>::type &j)
{
    double s[6] = {0, 0, 0, 0, 0, 0};
    /* unrolled: the rows' loads issued together (each lane's sum in the
     * same order) */
#pragma unroll 4
    for (int r = lane; r < ranges; r += lanes) {
        const typename orr_vec4<real>::type u = pa[(size_t)r * stride + k],
                                            w = pj[(size_t)r * stride + k];
        s[0] += u.x, s[1] += u.y, s[2] += u.z, s[3] += w.x, s[4] += w.y, s[5] += w.z;
    }
#pragma unroll
    for (int d = 0; d < 6; d++)
        for (int off = lanes / 2; off > 0; off /= 2)
            s[d] += __shfl_xor_sync(0xffffffffu, s[d], off);
    a = {(real)s[0], (real)s[1], (real)s[2], 0};
    j = {(real)s[3], (real)s[4], (real)s[5], 0};
}

/* The j-ranges' rows of every active body added into row 0 (a warp per
 * body, as the correction adds them). */
template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_jerk_combine(typename orr_vec4<real>::type *__restrict__ pa,
                 typename orr_vec4<real>::type *__restrict__ pj, const orr_hctl *__restrict__ hc,
                 int ranges, int stride)
{
    const int k = (blockIdx.x * ORR_BLOCK + threadIdx.x) / 32, lane = threadIdx.x % 32;
    if (k >= (int)hc->count)
        return;
    typename orr_vec4<real>::type a, j;
    orr_jerk_sum<real>(pa, pj, k, ranges, stride, lane, 32, a, j);
    __syncwarp();   /* every lane has read row 0 before lane 0 writes it */
    if (lane == 0) {
        pa[k] = a;
        pj[k] = j;
    }
}

/* Up to this many active bodies the correction gives each a warp. */
#define ORR_HWARP_BODIES 8192

/* The correction of the nact active bodies by the threads numbered first
 * among `threads` (a block's threads in a whole number of warps): the
 * finest level any of them chose is returned. */
/* A unit mass's pull towards relative position d, relative velocity u
 * (gm: G times the pulling mass): added to acc and jerk (groups.c's pull). */
static __device__ __forceinline__ void orr_pull(const double *d, const double *u, double gm,
                                                double *acc, double *jerk)
{
    const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    const double ri3 = gm / (r2 * sqrt(r2));
    const double rv = 3 * (d[0] * u[0] + d[1] * u[1] + d[2] * u[2]) / r2;
    for (int q = 0; q < 3; q++) {
        acc[q] += ri3 * d[q];
        jerk[q] += ri3 * (u[q] - rv * d[q]);
    }
}

/* Active body i at x, v (predicted to the block's time tb) near a
 * regularised pair: the pull of its two members less that of their
 * centre, which the force phase counted (groups.c: orr_groups_correct's
 * perturber), added to a and j.  The members are where their Kepler
 * motion from the pair's state at t0 has taken them (the host's
 * predict_group carries them so, by its unperturbed regularised motion). */
template <typename real>
static __device__ __forceinline__ void orr_pairs_pull(int i, const double *x, const double *v,
                                      const typename orr_vec4<real>::type *__restrict__ xp,
                                      const typename orr_vec4<real>::type *__restrict__ vp,
                                      const orr_hparams *__restrict__ hp, double tb, double *a,
                                      double *j)
{
    const orr_hpair *pairs = (const orr_hpair *)(hp + 1);
    const double G = hp->G;
    for (int k = 0; k < hp->npairs; k++) {
        const orr_hpair &p = pairs[k];
        if (i == p.centre || i == p.other)
            continue;
        const typename orr_vec4<real>::type X4 = xp[p.centre], V4 = vp[p.centre];
        double d[3] = {(double)X4.x - x[0], (double)X4.y - x[1], (double)X4.z - x[2]};
        if (!(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] < p.R2))
            continue;
        double u[3] = {(double)V4.x - v[0], (double)V4.y - v[1], (double)V4.z - v[2]};
        const double M = p.m0 + p.m1;
        double r[3], w[3];
        orr_kepler_drift(G * M, p.r, p.v, tb - p.t0, r, w);
        orr_pull(d, u, -G * M, a, j);   /* the centre's pull, taken back */
        double dm[3], um[3];
        for (int q = 0; q < 3; q++)
            dm[q] = d[q] - p.m1 / M * r[q], um[q] = u[q] - p.m1 / M * w[q];
        orr_pull(dm, um, G * p.m0, a, j);
        for (int q = 0; q < 3; q++)
            dm[q] = d[q] + p.m0 / M * r[q], um[q] = u[q] + p.m0 / M * w[q];
        orr_pull(dm, um, G * p.m1, a, j);
    }
}

/* The watch's pairs after its parameters (backend_cuda.c: ORR_WATCH_PAIRS),
 * then the fast pairs' perturbers. */
#define ORR_HPAIRS 64

/* A fast pair's centre i at X, V, in its block at the pair's time t0: the
 * pull of its perturbers on its two members (r and v apart) less that on
 * the centre, which the force phase counted (groups.c: orr_groups_correct's
 * centre), added to a and j.  The perturbers are shared between the lanes
 * of the warp (lane of lanes), each summing its own in order, and the
 * lanes' sums added in a fixed order: the same bits each time. */
template <typename real>
static __device__ __noinline__ void orr_centre_pull(const orr_hpair &p, const int *__restrict__ pl,
                                       int i, const double *X, const double *V,
                                       const typename orr_vec4<real>::type *__restrict__ xp,
                                       const typename orr_vec4<real>::type *__restrict__ vp,
                                       double G, int lane, int lanes, double *a, double *j)
{
    const double M = p.m0 + p.m1;
    const double *r = p.r, *w = p.v;
    double sa[3] = {0, 0, 0}, sj[3] = {0, 0, 0};
    for (int k = lane; k < p.npl; k += lanes) {
        const int b = pl[p.pl0 + k];
        const typename orr_vec4<real>::type y = xp[b];
        const double mb = (double)y.w;
        const double d[3] = {(double)y.x - X[0], (double)y.y - X[1], (double)y.z - X[2]};
        if (b == i || mb == 0)
            continue;
        const typename orr_vec4<real>::type u4 = vp[b];
        const double u[3] = {(double)u4.x - V[0], (double)u4.y - V[1], (double)u4.z - V[2]};
        const double gm = G * mb;
        double dm[3], um[3];
        for (int q = 0; q < 3; q++)   /* member 0, then member 1 */
            dm[q] = d[q] + p.m1 / M * r[q], um[q] = u[q] + p.m1 / M * w[q];
        orr_pull(dm, um, gm * p.m0 / M, sa, sj);
        for (int q = 0; q < 3; q++)
            dm[q] = d[q] - p.m0 / M * r[q], um[q] = u[q] - p.m0 / M * w[q];
        orr_pull(dm, um, gm * p.m1 / M, sa, sj);
        orr_pull(d, u, -gm, sa, sj);
    }
    for (int off = lanes / 2; off > 0; off /= 2)
        for (int q = 0; q < 3; q++) {
            sa[q] += __shfl_down_sync(0xffffffffu, sa[q], off);
            sj[q] += __shfl_down_sync(0xffffffffu, sj[q], off);
        }
    for (int q = 0; q < 3; q++)
        a[q] += sa[q], j[q] += sj[q];
}

/* H / 2^l (0 <= l <= ORR_HMAX), exactly as the division gives it (a
 * power of two scales exactly) but by a multiplication: the division is a
 * subroutine on the correction's path. */
static __device__ __forceinline__ double orr_pow2_scale(double H, int l)
{
    return H * __longlong_as_double((long long)(1023 - l) << 52);
}

/* A snap (scale dt^2) or crackle (dt^3) for Aarseth's criterion: 0 where
 * the change of the acceleration it makes over the step is below 32
 * times the noise floor anoise (hermite.c's above_noise: the same test). */
static __device__ __forceinline__ double orr_above_noise(double s, double scale, double anoise)
{
    return s * scale < 32 * anoise ? 0.0 : s;
}

template <typename real, bool WATCH>
static __device__ __forceinline__ int
orr_hcorrect_all(typename orr_vec4<real>::type *__restrict__ pos,
                 typename orr_vec4<real>::type *__restrict__ vel,
                 typename orr_vec4<real>::type *__restrict__ acc,
                 typename orr_vec4<real>::type *__restrict__ jerk, orr_tick *__restrict__ tick,
                 int *__restrict__ level, const typename orr_vec4<real>::type *__restrict__ xp,
                 const typename orr_vec4<real>::type *__restrict__ vp,
                 const typename orr_vec4<real>::type *__restrict__ an,
                 const typename orr_vec4<real>::type *__restrict__ jn, const int *__restrict__ act,
                 int nact, int ranges, orr_tick t, double H, double eta, int hi, int first,
                 int threads, orr_tick &tnext, double pull, double near2, double peri, double G,
                 bool &pulled, orr_tick &cnext, const orr_hparams *__restrict__ hp)
{
    typedef typename orr_vec4<real>::type vec4;
    const int stride = nact;
    const orr_tick end = 1ULL << ORR_HMAX;
    int deepest = 0;
    /* a warp per active body (its lanes add the j-ranges' rows, lane 0
     * corrects) where they are few, else a thread per body: decided by the
     * count alone (the order of the sum follows), so every launch gives
     * the same bits */
    const int lanes = ranges > 1 && nact <= ORR_HWARP_BODIES ? 32 : 1,
              lane = threadIdx.x % lanes, step = threads / lanes;
    for (int k = first / lanes; k < nact; k += step) {
        /* the body's own state read first, its latency under the rows' */
        const int i = act[k], li = level[i];
        const vec4 a04 = acc[i], j04 = jerk[i], x4 = xp[i], v4 = vp[i];
        vec4 a14, j14;
        if (ranges > 1)
            orr_jerk_sum<real>(an, jn, k, ranges, stride, lane, lanes, a14, j14);
        else
            a14 = an[k], j14 = jn[k];
        /* a fast pair's centre: its members' pull, the warp's lanes sharing it */
        double ca[3] = {0, 0, 0}, cj[3] = {0, 0, 0};
        int fq = -1;
        if (WATCH) {
            const orr_hpair *pairs = (const orr_hpair *)(hp + 1);
            for (int q = 0; q < hp->npairs; q++)
                fq = pairs[q].fast && pairs[q].centre == i ? q : fq;
            if (fq >= 0) {
                const double X[3] = {x4.x, x4.y, x4.z}, V[3] = {v4.x, v4.y, v4.z};
                orr_centre_pull<real>(pairs[fq], (const int *)(pairs + ORR_HPAIRS), i, X, V, xp,
                                      vp, hp->G, lane, lanes, ca, cj);
            }
        }
        const bool centre = WATCH && fq >= 0;
        bool hard = false;   /* pulled to the host's watch */
        if (lane == 0) {   /* the others wait at the end: no lane runs ahead into a shuffle */
            const double dt = (double)(end >> li) * orr_pow2_scale(H, ORR_HMAX);
            const double a0[3] = {a04.x, a04.y, a04.z}, j0[3] = {j04.x, j04.y, j04.z};
            double a1[3] = {a14.x, a14.y, a14.z}, j1[3] = {j14.x, j14.y, j14.z};
            const double xq[3] = {x4.x, x4.y, x4.z}, vq[3] = {v4.x, v4.y, v4.z};
            if (WATCH && hp->npairs > 0) {   /* the regularised pairs near it, resolved */
                orr_pairs_pull<real>(i, xq, vq, xp, vp, hp, (double)t * hp->unit, a1, j1);
                for (int q = 0; q < 3; q++)
                    a1[q] += ca[q], j1[q] += cj[q];
                a14.x = (real)a1[0], a14.y = (real)a1[1], a14.z = (real)a1[2];
                j14.x = (real)j1[0], j14.y = (real)j1[1], j14.z = (real)j1[2];
            }
            double x[3], v[3], a2[3], a3[3];
            const double dt3 = dt * dt * dt, dt4 = dt3 * dt;
            for (int d = 0; d < 3; d++) {
                const double da = a0[d] - a1[d];
                a2[d] = (-6 * da - dt * (4 * j0[d] + 2 * j1[d])) / (dt * dt);
                a3[d] = (12 * da + 6 * dt * (j0[d] + j1[d])) / dt3;
                x[d] = xq[d] + dt4 / 24 * a2[d] + dt4 * dt / 120 * a3[d];
                v[d] = vq[d] + dt3 / 6 * a2[d] + dt4 / 24 * a3[d];
                a2[d] += dt * a3[d];
            }
            vec4 px = {(real)x[0], (real)x[1], (real)x[2], x4.w},
                 pv = {(real)v[0], (real)v[1], (real)v[2], 0};
            pos[i] = px;
            vel[i] = pv;
            acc[i] = a14;
            jerk[i] = j14;
            const double an_ = sqrt(a1[0] * a1[0] + a1[1] * a1[1] + a1[2] * a1[2]),
                         jn_ = sqrt(j1[0] * j1[0] + j1[1] * j1[1] + j1[2] * j1[2]),
                         sn = orr_above_noise(sqrt(a2[0] * a2[0] + a2[1] * a2[1] + a2[2] * a2[2]),
                                              dt * dt, hp->anoise),
                         cn = orr_above_noise(sqrt(a3[0] * a3[0] + a3[1] * a3[1] + a3[2] * a3[2]),
                                              dt3, hp->anoise);
            const double den = jn_ * cn + sn * sn;
            const double crit = den > 0 ? sqrt(eta * (an_ * sn + jn_ * jn_) / den) : H;
            hard = WATCH && an_ >= pull;
            int l = li > 0 ? li - 1 : 0;
            while (l < hi && orr_pow2_scale(H, l) > crit)
                l++;
            if (centre) {   /* a fast pair's centre: its step cut as the host would */
                const double cap = ((const orr_hpair *)(hp + 1))[fq].cap;
                while (l < hi && orr_pow2_scale(H, l) > cap)
                    l++;
            }
            while (l < ORR_HMAX && (t & ((end >> l) - 1)) != 0)
                l++;
            level[i] = l;
            tick[i] = t;
            deepest = l > deepest ? l : deepest;
            const orr_tick ti = t + (end >> l);
            tnext = ti < tnext ? ti : tnext;
            if (centre)
                cnext = ti < cnext ? ti : cnext;
        }
        /* a body pulled hard: the host is wanted where another active
         * body is near it (a close pair may form; hermite.c) */
        if (WATCH && lanes > 1)
            hard = __shfl_sync(0xffffffffu, hard, 0);
        if (WATCH && hard) {
            bool near = false;
            for (int q = lane; q < nact && !near; q += lanes) {
                const int o = act[q];
                const vec4 y = xp[o];
                const double d[3] = {(double)y.x - x4.x, (double)y.y - x4.y, (double)y.z - x4.z};
                const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                if (o == i || !(r2 < near2))
                    continue;
                bool held = false;   /* declined by the host, for now */
                for (int q = 0; q < hp->ndec; q++)
                    held = held || (hp->dec_a[q] == min(i, o) && hp->dec_b[q] == max(i, o) &&
                                    t < hp->dec_until[q]);
                const vec4 w = vp[o];
                const double u[3] = {(double)w.x - v4.x, (double)w.y - v4.y, (double)w.z - v4.z};
                const double rv = d[0] * u[0] + d[1] * u[1] + d[2] * u[2],
                             v2 = u[0] * u[0] + u[1] * u[1] + u[2] * u[2],
                             gm = G * ((double)y.w + (double)x4.w),
                             eps = 0.5 * v2 - gm / sqrt(r2), L2 = fmax(r2 * v2 - rv * rv, 0.0),
                             e = sqrt(fmax(1 + 2 * eps * L2 / (gm * gm), 0.0));
                /* bound, its apocentre within near; or approaching to a
                 * pericentre L^2 / (GM (1 + e)) within peri, or peri_b where
                 * bound.  A pair the host holds apart only where it is
                 * tight (groups.c: bound within near, its pericentre within
                 * peri_b), which forms whatever held it */
                const bool inside = eps < 0 && -gm / (2 * eps) * (1 + e) < sqrt(near2);
                near = (inside && (!held || L2 < hp->peri_b * gm * (1 + e))) ||
                       (!held && rv < 0 && L2 < (eps < 0 ? hp->peri_b : peri) * gm * (1 + e));
            }
            if (lanes > 1)
                near = __any_sync(0xffffffffu, near);
            pulled = pulled || near;
        }
        if (lanes > 1)
            __syncwarp();
    }
    return deepest;
}

template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_hcorrect(typename orr_vec4<real>::type *__restrict__ pos,
             typename orr_vec4<real>::type *__restrict__ vel,
             typename orr_vec4<real>::type *__restrict__ acc,
             typename orr_vec4<real>::type *__restrict__ jerk, orr_tick *__restrict__ tick,
             int *__restrict__ level, const typename orr_vec4<real>::type *__restrict__ xp,
             const typename orr_vec4<real>::type *__restrict__ vp,
             const typename orr_vec4<real>::type *__restrict__ an,
             const typename orr_vec4<real>::type *__restrict__ jn, const int *__restrict__ act,
             orr_hctl *hc, const orr_hparams *__restrict__ hp, orr_hplan plan, int n)
{
    if (hc->done)
        return;
    const int nact = (int)hc->count;
    orr_tick unused = ~0ULL;
    bool pulled = false;   /* the host's watch is orr_hinterval_watched's alone */
    orr_tick cnext = ~0ULL;
    const int deepest = orr_hcorrect_all<real, false>(
        pos, vel, acc, jerk, tick, level, xp, vp, an, jn, act, nact,
        orr_hshape_of(plan, n, nact).ranges, hc->next, hp->H, hp->eta, hp->hi,
        blockIdx.x * ORR_BLOCK + threadIdx.x, gridDim.x * ORR_BLOCK, unused, 0.0, 0.0, 0.0, 0.0,
        pulled, cnext, hp);
    if (deepest > 0)
        atomicMax(&hc->deepest, deepest);
}


/* The block's end (one thread): its time and count into the statistics,
 * the control words reset for the next block, and whether one is left
 * (done: the launches already queued after it do nothing). */
template <typename real>
__global__ void orr_hloop(orr_hctl *hc, const orr_hparams *__restrict__ hp)
{
    if (hc->done)
        return;
    const orr_tick t = hc->next;
    hc->last = t;
    hc->last_count = hc->count;
    hc->blocks += 1;
    hc->active += hc->count;
    hc->next = ~0ULL;
    hc->count = 0;
    hc->done = t >= (1ULL << ORR_HMAX) || hc->blocks >= hp->max_blocks;
}

/* The smallest of a warp's values, in every lane. */
static __device__ __forceinline__ orr_tick orr_warp_min(orr_tick t)
{
    for (int off = 16; off > 0; off /= 2) {
        const orr_tick o = __shfl_xor_sync(0xffffffffu, t, off);
        t = o < t ? o : t;
    }
    return t;
}

/* The GPU's nanosecond clock, and a phase's time added to *acc by the
 * first thread (orr_hinterval's profile, hctl.phase). */
static __device__ __forceinline__ unsigned long long orr_now()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
static __device__ __forceinline__ void orr_lap(int first, unsigned long long &acc,
                                               unsigned long long &clock)
{
    if (first == 0) {
        const unsigned long long t = orr_now();
        acc += t - clock;
        clock = t;
    }
}

/* A barrier of every block of the grid (orr_hinterval's; the launch is
 * cooperative, so every block is resident).  bar[0] counts every arrival
 * there has been, never reset (it wraps: no block is ever more than one
 * barrier ahead of another); bar[1] is what it held as the launch began
 * (the host zeroes both as an interval begins, and the launch's block 0
 * leaves bar[1] at the count it ends with).  A block's k-th barrier of the
 * launch is passed once the count reaches bar[1] + k blocks: an arrival
 * is one add with release semantics (this block's writes visible before
 * it counts) that nobody waits on, the wait a spinning load with acquire
 * semantics (the others' writes visible after it).  Nobody resets the
 * count nor reads a generation first: each was a round trip to the L2 on
 * every block step's path. */
static __device__ __forceinline__ unsigned orr_ld_acquire(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
static __device__ __forceinline__ unsigned orr_ld_relaxed(const unsigned *p)
{
    unsigned v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
static __device__ __forceinline__ void orr_red_release(unsigned *p, unsigned v)
{
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
struct orr_gbar {
    unsigned *count;   /* hctl.bar[0] */
    unsigned target;   /* the count that ends this block's next barrier, less gridDim.x */
};
static __device__ __forceinline__ orr_gbar orr_gbar_begin(orr_hctl *hc)
{
    return {hc->bar, ((volatile unsigned *)hc->bar)[1]};
}
static __device__ __forceinline__ void orr_grid_sync(orr_gbar &b)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        b.target += gridDim.x;
        orr_red_release(b.count, 1u);
        /* polled without acquire semantics (each acquiring load invalidates
         * the SM's L1, under the other block's feet), then one load that
         * acquires the count seen */
        while ((int)(orr_ld_relaxed(b.count) - b.target) < 0) {
        }
        orr_ld_acquire(b.count);
    }
    __syncthreads();
}
/* The launch's end (block 0's first thread, after a barrier: every block
 * has read bar[1]): where the next launch's count begins. */
static __device__ __forceinline__ void orr_gbar_end(orr_hctl *hc, const orr_gbar &b)
{
    hc->bar[1] = b.target;
}

/* The force + jerk items of a block's shape by the groups of TILE threads
 * of the persistent blocks (ORR_HPERSIST threads, GROUPS tiles each), each
 * group an item at a time with the tile's arithmetic, so the bits are
 * those of orr_accel_jerk{64,128,256}. */
#define ORR_HPERSIST 256
template <typename real, int TILE>
static __device__ __forceinline__ void
orr_hinterval_items(const typename orr_vec4<real>::type *__restrict__ xp,
                    const typename orr_vec4<real>::type *__restrict__ vp,
                    const real *__restrict__ attr, const int *__restrict__ act, int nact,
                    const orr_rtparams &rtp, const orr_hshape &s,
                    typename orr_vec4<real>::type *__restrict__ pa,
                    typename orr_vec4<real>::type *__restrict__ pj, int n, unsigned char *smem,
                    double tf)
{
    constexpr int GROUPS = ORR_HPERSIST / TILE;
    const int g = threadIdx.x / TILE;
    const orr_jtile<real> sh = orr_jtile_at<real>(smem + g * orr_jtile_bytes<real>(TILE), TILE);
    const int items = s.iblocks * s.ranges;
    for (int w = blockIdx.x * GROUPS + g; w < items; w += gridDim.x * GROUPS)
        orr_accel_jerk_tile<real, TILE, GROUPS>(xp, vp, attr, act, nact, rtp, pa, pj, n, s.jlen,
                                                nact, s.split, s.iblocks, w % s.iblocks,
                                                w / s.iblocks, sh, g, tf);
}

/* A block's force + jerk items as orr_hinterval's force phase runs them
 * (its 256-thread blocks, as many as fit on the GPU, groups of a tile's
 * threads walking the items): the same bits as orr_accel_jerk{64,128,256},
 * at the speed the persistent kernel gets, which the Hermite tuner times
 * and the host-driven force + jerk uses. */
template <typename real>
__global__ void __launch_bounds__(ORR_HPERSIST, 2)
orr_accel_jerk_groups(const typename orr_vec4<real>::type *__restrict__ xp,
                      const typename orr_vec4<real>::type *__restrict__ vp,
                      const real *__restrict__ attr, const int *__restrict__ act,
                      const orr_hctl *__restrict__ hc, orr_rtparams rtp, orr_hplan plan,
                      typename orr_vec4<real>::type *__restrict__ pa,
                      typename orr_vec4<real>::type *__restrict__ pj, int n)
{
    __shared__ __align__(32) unsigned char smem[orr_jtile_bytes<real>(ORR_HPERSIST) > 0
                                                     ? orr_jtile_bytes<real>(ORR_HPERSIST) : 32];
    if (hc->done)
        return;
    const int nact = (int)hc->count;
    const orr_hshape s = orr_hshape_of(plan, n, nact);
    const double tf = orr_block_time(hc, rtp);
    if (s.tile == 64)
        orr_hinterval_items<real, 64>(xp, vp, attr, act, nact, rtp, s, pa, pj, n, smem, tf);
    else if (s.tile == 128)
        orr_hinterval_items<real, 128>(xp, vp, attr, act, nact, rtp, s, pa, pj, n, smem, tf);
    else
        orr_hinterval_items<real, 256>(xp, vp, attr, act, nact, rtp, s, pa, pj, n, smem, tf);
}

/* A whole interval's blocks in one launch (cooperative: every block
 * resident), the phases of a block step apart by grid barriers: the
 * smallest next time; the prediction and the active list; the force +
 * jerk items; the correction and the block's bookkeeping (as orr_hloop).
 * It stops when the next time is past the interval's end or after
 * max_blocks blocks; the control words say where it got to, as the other
 * kernels leave them.  The same arithmetic as the block-by-block kernels,
 * so the same bits. */
#define ORR_HINTERVAL_PARAMS                                                                     \
    typename orr_vec4<real>::type *__restrict__ pos, typename orr_vec4<real>::type *__restrict__ vel, \
        typename orr_vec4<real>::type *__restrict__ acc,                                          \
        typename orr_vec4<real>::type *__restrict__ jerk, orr_tick *__restrict__ tick,             \
        int *__restrict__ level, orr_hctl *hc, const orr_hparams *__restrict__ hp,                 \
        typename orr_vec4<real>::type *__restrict__ xp,                                            \
        typename orr_vec4<real>::type *__restrict__ vp, int *__restrict__ act,                     \
        const real *__restrict__ attr, orr_rtparams rtp, orr_hplan plan,                           \
        typename orr_vec4<real>::type *__restrict__ pa,                                            \
        typename orr_vec4<real>::type *__restrict__ pj, int n, unsigned split_at
template <typename real, bool WATCH>
static __device__ __forceinline__ void orr_hinterval_run(ORR_HINTERVAL_PARAMS)
{
    __shared__ __align__(32) unsigned char smem[orr_jtile_bytes<real>(ORR_HPERSIST) > 0
                                                     ? orr_jtile_bytes<real>(ORR_HPERSIST) : 32];
    const int first = blockIdx.x * ORR_HPERSIST + threadIdx.x, threads = gridDim.x * ORR_HPERSIST;
    const orr_tick end = 1ULL << ORR_HMAX;
    const double H = hp->H, eta = hp->eta, unit = hp->unit;
    const int hi = hp->hi;
    const unsigned long long most = hp->max_blocks;
    const orr_tick stop = hp->stop;
    const double pull = hp->pull, near2 = hp->near2, peri = hp->peri, G = hp->G;
    unsigned long long nb = hc->blocks;
    volatile orr_hctl *vc = hc;
    int deepest = 0;
    bool split = false;
    unsigned halt = 0;   /* why the host is wanted (hctl.stop) */
    /* held in shared memory (registers are what the force loop needs): the
     * phases' times (the first thread's), the waiting bodies' smallest next
     * time per warp */
    __shared__ unsigned long long ph[5];
    __shared__ orr_tick waiting[ORR_HPERSIST / 32];
    unsigned long long &clock = ph[4];
    if (first == 0)
        ph[0] = ph[1] = ph[2] = ph[3] = 0, clock = orr_now();
    if (first == 0)   /* read by the host alone, after the launch */
        hc->split = 0;
    orr_gbar gb = orr_gbar_begin(hc);
    /* the first block's time: the smallest next time of all */
    orr_tick tmin = ~0ULL;
    for (int i = first; i < n; i += threads) {
        const orr_tick ti = tick[i] + (end >> level[i]);
        tmin = ti < tmin ? ti : tmin;
    }
    tmin = orr_warp_min(tmin);
    if (threadIdx.x % 32 == 0 && tmin != ~0ULL)
        atomicMin(&hc->next, tmin);
    orr_grid_sync(gb);
    orr_lap(first, ph[0], clock);
    orr_tick t = vc->next;
    /* then each block finds the next one's time as it ends: the waiting
     * bodies' next times (seen as they are predicted) and the corrected
     * ones' new ones, into ahead[nb % 2] (reset as block nb begins: its
     * last reader, block nb - 1, is past the barrier that ended block
     * nb - 2) */
    for (;;) {
        if (t > end || nb >= most)
            break;
        if (WATCH && (t >= stop || t >= vc->cstop)) {   /* the host runs this one, or moves
                                                         a fast pair on to it first */
            halt = 1;
            break;
        }
        if (first == 0)
            hc->ahead[nb % 2] = ~0ULL;
        orr_tick tw = ~0ULL;   /* the waiting bodies' smallest next time */
        for (int i = first; i < n; i += threads) {
            const orr_tick ti = tick[i] + (end >> level[i]);
            if (orr_predict_one<real>(i, t, pos, vel, acc, jerk, tick, level, unit, xp, vp))
                act[atomicAdd(&hc->count, 1u)] = i;
            else
                tw = ti < tw ? ti : tw;
        }
        tw = orr_warp_min(tw);
        if (threadIdx.x % 32 == 0)
            waiting[threadIdx.x / 32] = tw;
        orr_grid_sync(gb);
        orr_lap(first, ph[1], clock);
        const int nact = (int)vc->count;
        if ((unsigned)nact >= split_at) {   /* the host splits this one between the GPUs */
            if (first == 0)
                hc->next = t;
            split = true;
            break;
        }
        const orr_hshape s = orr_hshape_of(plan, n, nact);
        const double tf = fma((double)t, rtp.v[ORR_RT_UNIT], rtp.v[ORR_RT_T0]);
        if (s.tile == 64)
            orr_hinterval_items<real, 64>(xp, vp, attr, act, nact, rtp, s, pa, pj, n, smem, tf);
        else if (s.tile == 128)
            orr_hinterval_items<real, 128>(xp, vp, attr, act, nact, rtp, s, pa, pj, n, smem, tf);
        else
            orr_hinterval_items<real, 256>(xp, vp, attr, act, nact, rtp, s, pa, pj, n, smem, tf);
        orr_grid_sync(gb);
        orr_lap(first, ph[2], clock);
        orr_tick tc = ~0ULL;   /* the corrected bodies' smallest next time */
        bool pulled = false;
        orr_tick cnext = ~0ULL;
        const int d = orr_hcorrect_all<real, WATCH>(pos, vel, acc, jerk, tick, level, xp, vp, pa, pj,
                                             act, nact, s.ranges, t, H, eta, hi, first, threads,
                                             tc, pull, near2, peri, G, pulled, cnext, hp);
        if (WATCH && pulled)
            vc->stop = 2;
        if (WATCH && cnext != ~0ULL)
            atomicMin(&hc->cstop, cnext);
        deepest = d > deepest ? d : deepest;
        tc = orr_warp_min(tc);
        if (threadIdx.x % 32 == 0) {
            tc = waiting[threadIdx.x / 32] < tc ? waiting[threadIdx.x / 32] : tc;
            if (tc != ~0ULL)
                atomicMin(&hc->ahead[nb % 2], tc);
        }
        nb++;
        if (first == 0) {   /* the bookkeeping: every other thread has read count */
            hc->last = t;
            hc->last_count = (unsigned)nact;
            hc->blocks = nb;
            hc->active += (unsigned long long)nact;
            hc->count = 0;
        }
        orr_grid_sync(gb);
        orr_lap(first, ph[3], clock);
        t = vc->ahead[(nb - 1) % 2];
        if (WATCH && vc->stop) {   /* the host looks at this block's close bodies */
            halt = 2;
            break;
        }
    }
    if (deepest > 0)
        atomicMax(&hc->deepest, deepest);
    if (first == 0) {
        orr_gbar_end(hc, gb);
        for (int k = 0; k < 4; k++)
            hc->phase[k] += ph[k];
        if (split) {
            hc->split = 1;
        } else if (halt) {   /* the next launch goes on from here (the host resets count) */
            hc->stop = halt;
            hc->next = ~0ULL;
        } else {   /* as the block-by-block kernels leave it */
            hc->next = ~0ULL;
            hc->done = 1;
        }
    }
}

/* The interval's blocks (orr_hinterval_run), and the same watched by the
 * host (hctl.stop, hparams.stop and pull: the regularised groups,
 * hermite.c), apart so that the watch costs the blocks nothing where
 * nobody watches. */
#define ORR_HINTERVAL_KERNEL(name, watch)                                                        \
    template <typename real>                                                                     \
    __global__ void __launch_bounds__(ORR_HPERSIST, 2) name(ORR_HINTERVAL_PARAMS)                \
    {                                                                                            \
        orr_hinterval_run<real, watch>(pos, vel, acc, jerk, tick, level, hc, hp, xp, vp, act,    \
                                       attr, rtp, plan, pa, pj, n, split_at);                    \
    }
ORR_HINTERVAL_KERNEL(orr_hinterval, false)
ORR_HINTERVAL_KERNEL(orr_hinterval_watched, true)

/* ---- a block split between GPUs (backend_cuda.c's split_block) -------------
 * Every GPU holds every body and runs the blocks below the crossover whole;
 * orr_hinterval stops at a larger one, whose active bodies are listed in
 * index order (orr_hchunks, orr_hlist: the same list on every GPU), rank r
 * takes the r-th share of the list (force + jerk and correction with the
 * kernels above, its own control words holding the share's count), packs
 * its corrected bodies (orr_hpack: position, velocity, acceleration, jerk,
 * level; five real4 each) at their places in the list, the records are
 * all-gathered (NCCL), and every GPU writes the others' bodies into its
 * state (orr_hunpack).  Each body's bits come from the one GPU that
 * corrected it, so the GPUs never disagree. */
#define ORR_HREC 5

/* The active bodies of each chunk of ORR_BLOCK bodies. */
template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_hchunks(const orr_tick *__restrict__ tick, const int *__restrict__ level,
            const orr_hctl *__restrict__ hc, int *__restrict__ chunk, int n)
{
    const int i = blockIdx.x * ORR_BLOCK + threadIdx.x;
    const orr_tick t = hc->next;
    const int on = i < n && tick[i] + ((1ULL << ORR_HMAX) >> level[i]) == t;
    const int c = __syncthreads_count(on);
    if (threadIdx.x == 0)
        chunk[blockIdx.x] = c;
}

/* The active bodies in index order into list: chunk b's after those of
 * chunks 0 .. b-1, in order within it. */
template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_hlist(const orr_tick *__restrict__ tick, const int *__restrict__ level,
          const orr_hctl *__restrict__ hc, const int *__restrict__ chunk, int *__restrict__ list,
          int n)
{
    __shared__ int wsum[ORR_BLOCK / 32];
    __shared__ int base;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    int s = 0;
    for (int b = threadIdx.x; b < (int)blockIdx.x; b += ORR_BLOCK)
        s += chunk[b];
    for (int off = 16; off > 0; off /= 2)
        s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0)
        wsum[warp] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        int b = 0;
        for (int w = 0; w < ORR_BLOCK / 32; w++)
            b += wsum[w];
        base = b;
    }
    __syncthreads();
    const int i = blockIdx.x * ORR_BLOCK + threadIdx.x;
    const orr_tick t = hc->next;
    const bool on = i < n && tick[i] + ((1ULL << ORR_HMAX) >> level[i]) == t;
    const unsigned m = __ballot_sync(0xffffffffu, on);
    if (lane == 0)
        wsum[warp] = __popc(m);
    __syncthreads();
    if (on) {
        int at = base + __popc(m & ((1u << lane) - 1u));
        for (int w = 0; w < warp; w++)
            at += wsum[w];
        list[at] = i;
    }
}

/* Records k0 .. k1 of the list: the corrected bodies this GPU holds. */
template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_hpack(const typename orr_vec4<real>::type *__restrict__ pos,
          const typename orr_vec4<real>::type *__restrict__ vel,
          const typename orr_vec4<real>::type *__restrict__ acc,
          const typename orr_vec4<real>::type *__restrict__ jerk, const int *__restrict__ level,
          const int *__restrict__ list, int k0, int k1,
          typename orr_vec4<real>::type *__restrict__ rec)
{
    const int k = k0 + blockIdx.x * ORR_BLOCK + threadIdx.x;
    if (k >= k1)
        return;
    const int i = list[k];
    typename orr_vec4<real>::type *r = rec + (size_t)ORR_HREC * k;
    r[0] = pos[i];
    r[1] = vel[i];
    r[2] = acc[i];
    r[3] = jerk[i];
    r[4] = {(real)level[i], 0, 0, 0};
}

/* Every record but k0 .. k1 (this GPU's own) into the state at the block's
 * time; the finest level of all into the control words. */
template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_hunpack(typename orr_vec4<real>::type *__restrict__ pos,
            typename orr_vec4<real>::type *__restrict__ vel,
            typename orr_vec4<real>::type *__restrict__ acc,
            typename orr_vec4<real>::type *__restrict__ jerk, orr_tick *__restrict__ tick,
            int *__restrict__ level, const int *__restrict__ list, int k0, int k1,
            const typename orr_vec4<real>::type *__restrict__ rec, orr_hctl *hc)
{
    const int k = blockIdx.x * ORR_BLOCK + threadIdx.x;
    int l = 0;
    if (k < (int)hc->count) {
        const typename orr_vec4<real>::type *r = rec + (size_t)ORR_HREC * k;
        l = (int)r[4].x;
        if (k < k0 || k >= k1) {
            const int i = list[k];
            pos[i] = r[0];
            vel[i] = r[1];
            acc[i] = r[2];
            jerk[i] = r[3];
            level[i] = l;
            tick[i] = hc->next;
        }
    }
    for (int off = 16; off > 0; off /= 2) {
        const int o = __shfl_down_sync(0xffffffffu, l, off);
        l = o > l ? o : l;
    }
    if (threadIdx.x % 32 == 0 && l > 0)
        atomicMax(&hc->deepest, l);
}

/* ---- part of the state between the host and the GPU (backend_cuda.c's
 * cuda_blocks_some) ---------------------------------------------------------
 * A record is orr_hpack's five real4 (position, velocity, acceleration,
 * jerk; then the level and the tick in two parts of 20 bits and above, so
 * that float holds them exactly too). */
template <typename real>
static __device__ __forceinline__ void
orr_hrec_put(typename orr_vec4<real>::type *__restrict__ r,
             const typename orr_vec4<real>::type &p, const typename orr_vec4<real>::type &v,
             const typename orr_vec4<real>::type &a, const typename orr_vec4<real>::type &j,
             orr_tick t, int l)
{
    r[0] = p;
    r[1] = v;
    r[2] = a;
    r[3] = j;
    r[4] = {(real)l, (real)(t >> 20), (real)(t & 0xfffffULL), 0};
}

/* The bodies corrected since tick `since` (a tick past it and not a
 * group's member's), in no particular order: their numbers into idx and
 * their records into rec, the first `most` of them; cnt counts them all. */
template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_hsince(const typename orr_vec4<real>::type *__restrict__ pos,
           const typename orr_vec4<real>::type *__restrict__ vel,
           const typename orr_vec4<real>::type *__restrict__ acc,
           const typename orr_vec4<real>::type *__restrict__ jerk,
           const orr_tick *__restrict__ tick, const int *__restrict__ level, int n,
           orr_tick since, unsigned *cnt, int most, int *__restrict__ idx,
           typename orr_vec4<real>::type *__restrict__ rec)
{
    const int i = blockIdx.x * ORR_BLOCK + threadIdx.x;
    if (i >= n || tick[i] <= since || tick[i] > (1ULL << ORR_HMAX))
        return;
    const unsigned k = atomicAdd(cnt, 1u);
    if ((int)k >= most)
        return;
    idx[k] = i;
    orr_hrec_put<real>(rec + (size_t)ORR_HREC * k, pos[i], vel[i], acc[i], jerk[i], tick[i],
                       level[i]);
}

/* count records written into the state at their bodies idx[k]. */
template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_hput(typename orr_vec4<real>::type *__restrict__ pos,
         typename orr_vec4<real>::type *__restrict__ vel,
         typename orr_vec4<real>::type *__restrict__ acc,
         typename orr_vec4<real>::type *__restrict__ jerk, orr_tick *__restrict__ tick,
         int *__restrict__ level, int count, const int *__restrict__ idx,
         const typename orr_vec4<real>::type *__restrict__ rec)
{
    const int k = blockIdx.x * ORR_BLOCK + threadIdx.x;
    if (k >= count)
        return;
    const int i = idx[k];
    const typename orr_vec4<real>::type *r = rec + (size_t)ORR_HREC * k;
    pos[i] = r[0];
    vel[i] = r[1];
    acc[i] = r[2];
    jerk[i] = r[3];
    level[i] = (int)r[4].x;
    tick[i] = ((orr_tick)r[4].y << 20) | (orr_tick)r[4].z;
}

/* Start of an interval where the accelerations and jerks are new (xp, vp =
 * the state; act = every body): a and j from an, jn, and the first steps
 * eta_start |a| / |j| (keep: the steps stay). */
template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_hstart(const typename orr_vec4<real>::type *__restrict__ an,
           const typename orr_vec4<real>::type *__restrict__ jn,
           typename orr_vec4<real>::type *__restrict__ acc,
           typename orr_vec4<real>::type *__restrict__ jerk, int *__restrict__ level, double H,
           double eta_start, int hi, int keep, int n)
{
    const int i = blockIdx.x * ORR_BLOCK + threadIdx.x;
    if (i >= n)
        return;
    const typename orr_vec4<real>::type a = an[i], j = jn[i];
    acc[i] = a;
    jerk[i] = j;
    if (keep)
        return;
    const double am = sqrt((double)a.x * a.x + (double)a.y * a.y + (double)a.z * a.z),
                 jm = sqrt((double)j.x * j.x + (double)j.y * j.y + (double)j.z * j.z);
    const double dt = jm > 0 ? eta_start * am / jm : H;
    int l = 0;
    while (l < hi && H / (double)(1ULL << l) > dt)
        l++;
    level[i] = l;
}

/* The step criterion's noise floor of an interval (orr_hparams.anoise):
 * rel times the median |a| of the n bodies, to a power of 2 (hermite.c's
 * noise_floor: the bodies counted by the exponent of their |a|, 2^(k -
 * ORR_NOISE_BIAS) in bin k, 0 in bin 0, up to the bin that passes half; counts, so
 * the same on every GPU); one block of 256 threads. */
#define ORR_NOISE_BINS 2200
#define ORR_NOISE_BIAS 1100
template <typename real>
__global__ void __launch_bounds__(256)
orr_hnoise(const typename orr_vec4<real>::type *__restrict__ acc, int n, double rel,
           orr_hparams *hp)
{
    __shared__ unsigned hist[ORR_NOISE_BINS];
    for (int k = threadIdx.x; k < ORR_NOISE_BINS; k += 256)
        hist[k] = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += 256) {
        const typename orr_vec4<real>::type a = acc[i];
        const double x = sqrt((double)a.x * a.x + (double)a.y * a.y + (double)a.z * a.z);
        int k = 0;
        if (x > 0) {
            k = ilogb(x) + ORR_NOISE_BIAS;
            k = k < 1 ? 1 : k > ORR_NOISE_BINS - 1 ? ORR_NOISE_BINS - 1 : k;
        }
        atomicAdd(&hist[k], 1u);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long cum = 0;
        int k = 0;
        for (; k < ORR_NOISE_BINS; k++)
            if (2 * (cum += hist[k]) > (unsigned long long)n)
                break;
        hp->anoise = k == 0 || k >= ORR_NOISE_BINS ? 0.0 : rel * ldexp(1.0, k - ORR_NOISE_BIAS);
    }
}
