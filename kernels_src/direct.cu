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
 *                  tile rather than growing with N.  Block row y = y0 +
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
 *
 * The force law's generated section comes before this file and provides
 * orr_pair_accel / orr_pair_potential / orr_law_scale, ORR_NATTR per-body
 * attributes (attr[i * ORR_NATTR + a], staged in shared memory next to the
 * positions) and ORR_NRT runtime params (the kernel argument rtp, converted
 * to `real` once per thread). */

static constexpr int orr_unroll = ORR_UNROLL;
static_assert(ORR_BLOCK % ORR_SPLIT == 0, "ORR_BLOCK must be a multiple of ORR_SPLIT");
static_assert(ORR_SPLIT >= 1 && ORR_SPLIT <= 32 && (ORR_SPLIT & (ORR_SPLIT - 1)) == 0,
              "ORR_SPLIT must be a power of two from 1 to 32");

template <typename real> struct orr_vec4;
template <> struct orr_vec4<float> { typedef float4 type; };
template <> struct orr_vec4<double> { typedef double4 type; };

/* The runtime params as passed (ORR_LAW_MAX_RUNTIME doubles, from the
 * generated section). */
struct orr_rtparams {
    double v[ORR_LAW_MAX_RUNTIME];
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
    for (int base = jbeg; base < jend; base += ORR_BLOCK) {
        const int j = base + t;
        tile[t] = j < jend ? pos[j] : zero;
#pragma unroll
        for (int a = 0; a < ORR_NATTR; a++)
            tattr[t * ORR_NATTR + a] = j < jend ? attr[j * ORR_NATTR + a] : (real)0;
        __syncthreads();
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
            vec4 a = {g * ax[r], g * ay[r], g * az[r], 0};
            acc[(size_t)y * n + i] = a;
        }
    }
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
    acc[i] = a;
}

template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_kick(typename orr_vec4<real>::type *__restrict__ vel,
         const typename orr_vec4<real>::type *__restrict__ acc, real dt, real damping, int first,
         int count)
{
    const int i = first + blockIdx.x * ORR_BLOCK + threadIdx.x;
    if (i < first + count) {
        vel[i].x = fma(acc[i].x, dt, vel[i].x) * damping;
        vel[i].y = fma(acc[i].y, dt, vel[i].y) * damping;
        vel[i].z = fma(acc[i].z, dt, vel[i].z) * damping;
    }
}

template <typename real>
__global__ void __launch_bounds__(ORR_BLOCK)
orr_drift(typename orr_vec4<real>::type *__restrict__ pos,
          const typename orr_vec4<real>::type *__restrict__ vel, real dt, int first, int count)
{
    const int i = first + blockIdx.x * ORR_BLOCK + threadIdx.x;
    if (i < first + count) {
        pos[i].x = orr_wrap(fma(vel[i].x, dt, pos[i].x), X);
        pos[i].y = orr_wrap(fma(vel[i].y, dt, pos[i].y), Y);
        pos[i].z = orr_wrap(fma(vel[i].z, dt, pos[i].z), Z);
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
    for (int off = 16; off > 0; off /= 2)
        phi += __shfl_down_sync(0xffffffffu, phi, off);
    if (t % 32 == 0)
        warp_sum[t / 32] = phi;
    __syncthreads();
    if (t < 32) {
        phi = t < ORR_BLOCK / 32 ? warp_sum[t] : 0.0;
        for (int off = 16; off > 0; off /= 2)
            phi += __shfl_down_sync(0xffffffffu, phi, off);
        if (t == 0)
            partial[blockIdx.x] = phi * (double)orr_law_scale<real>(rt);
    }
}
