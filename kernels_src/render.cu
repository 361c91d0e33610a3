/* render: the GPU kernels of pictures (kernel family "render"), compiled by
 * NVRTC after a generated header, prelude and force law as the direct
 * family is (none of which they use: the CUDA backend builds them for the
 * default spec, once per precision, on the first frame, through the
 * kernel cache; orr_engine_deposit).  Templates over the precision `real`
 * of the bodies, instantiated by name expression (orr_deposit<float>,
 * ...).
 *
 *   orr_deposit_clear  grid[k] = 0 for k < count.
 *   orr_deposit        one thread per body: the cloud-in-cell deposit of
 *                      its mass per unit pixel area on the four pixel
 *                      centres around it, added to the grid (double) with
 *                      atomicAdd.  The arithmetic is the host's
 *                      (core/engine.c: orr_deposit_one), in double,
 *                      operation for operation (the rounding intrinsics
 *                      keep the compiler from fusing any of them), so a
 *                      pixel differs from the host's only by the order of
 *                      its sum.
 *
 *   orr_view_sample    one thread per sampled body (the live view): body
 *                      first + k stride's position, speed and mass as
 *                      floats, out[3k..3k+2], out[3 count + k], out[4 count
 *                      + k] (core/engine.h: orr_engine_sample).
 *
 * The grid is width x height, row 0 at the top (the largest vertical
 * coordinate e3); ax, ay pick the coordinates (0 x, 1 y, 2 z) along the
 * columns and the rows; cell = dx, dy, 1 / (dx dy) as the host computed
 * them. */

template <typename real> struct orr_render_vec4;
template <> struct orr_render_vec4<float> { typedef float4 type; };
template <> struct orr_render_vec4<double> { typedef double4 type; };

template <typename real>
__global__ void orr_deposit_clear(double *__restrict__ grid, long long count)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < count; k += stride)
        grid[k] = 0;
}

template <typename real>
static __device__ __forceinline__ double orr_render_coord(const typename orr_render_vec4<real>::type &p,
                                                          int axis)
{
    return axis == 0 ? (double)p.x : axis == 1 ? (double)p.y : (double)p.z;
}

template <typename real>
__global__ void orr_deposit(const typename orr_render_vec4<real>::type *__restrict__ pos, int n,
                            int ax, int ay, int w, int h, double e0, double e3, double dx,
                            double dy, double inv_area, double *__restrict__ grid)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const typename orr_render_vec4<real>::type p = pos[i];
    const double hc = orr_render_coord<real>(p, ax), vc = orr_render_coord<real>(p, ay);
    const double m = (double)p.w;
    if (!(m > 0) || !isfinite(hc) || !isfinite(vc))
        return;
    const double fx = __dsub_rn(__ddiv_rn(__dsub_rn(hc, e0), dx), 0.5),
                 fy = __dsub_rn(__ddiv_rn(__dsub_rn(e3, vc), dy), 0.5);
    if (!(fx > -1 && fx < w && fy > -1 && fy < h))
        return;
    const double x0 = floor(fx), y0 = floor(fy);
    const double wx = __dsub_rn(fx, x0), wy = __dsub_rn(fy, y0);
    const int ix = (int)x0, iy = (int)y0;
    const double mm = __dmul_rn(m, inv_area);
#pragma unroll
    for (int a = 0; a < 2; a++) {
        const int row = iy + a;
        if (row < 0 || row >= h)
            continue;
        const double ma = __dmul_rn(mm, a ? wy : __dsub_rn(1.0, wy));
#pragma unroll
        for (int b = 0; b < 2; b++) {
            const int col = ix + b;
            if (col >= 0 && col < w)
                atomicAdd(grid + (size_t)row * w + col, __dmul_rn(ma, b ? wx : __dsub_rn(1.0, wx)));
        }
    }
}

template <typename real>
__global__ void orr_view_sample(const typename orr_render_vec4<real>::type *__restrict__ pos,
                                const typename orr_render_vec4<real>::type *__restrict__ vel,
                                long long first, long long stride, int count,
                                float *__restrict__ out)
{
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count)
        return;
    const long long i = first + (long long)k * stride;
    const typename orr_render_vec4<real>::type p = pos[i], v = vel[i];
    out[3 * k] = (float)p.x;
    out[3 * k + 1] = (float)p.y;
    out[3 * k + 2] = (float)p.z;
    const double vx = (double)v.x, vy = (double)v.y, vz = (double)v.z;
    /* unfused, as the host's (no fused multiply-add in this family) */
    out[3 * count + k] =
        (float)sqrt(__dadd_rn(__dadd_rn(__dmul_rn(vx, vx), __dmul_rn(vy, vy)), __dmul_rn(vz, vz)));
    out[4 * count + k] = (float)p.w;
}
