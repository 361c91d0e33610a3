/* prelude: definitions shared by the GPU kernels (compiled by NVRTC as CUDA
 * C++) and the CPU kernels (compiled by the host C compiler as C11), so one
 * force-law source serves both.
 *
 * The generated header placed before this file defines the baked constants:
 *   ORR_BLOCK                          tile size
 *   ORR_UNROLL, ORR_SPLIT, ORR_IPT     GPU only: unroll factor, threads per body,
 *                                      bodies per thread
 *   ORR_SOFTENING, ORR_EPS2, ORR_G     softening length, its square, coupling G
 *   ORR_SOFTENED                       1 when ORR_EPS2 > 0
 *   ORR_BOX_X/Y/Z, ORR_INV_BOX_X/Y/Z   periodic box lengths and inverses (0 = open)
 *   ORR_PERIODIC                       1 when any axis is periodic
 *   ORR_DOUBLE                         CPU only: 1 for double, 0 for float
 * On the GPU `real` is a template parameter of every kernel; on the CPU it is
 * a typedef, since each shared object is compiled for one precision.
 *
 * Force laws are written with:
 *   ORR_LAW        before each law function (template on the GPU, inline on CPU)
 *   real           the floating type
 *   orr_sqrt, orr_rsqrt, orr_rsqrt3 (x^(-3/2)), orr_rsqrt_nz and
 *   orr_rsqrt3_nz (0 at 0), orr_exp, orr_log, orr_pow,
 *   orr_fabs, orr_floor, orr_erf, orr_erfc, orr_tanh, orr_fmin, orr_fmax   math in `real`
 *   orr_rsqrt_g, orr_rsqrt3_g   rsqrt and its cube, 0 at 0 (always guarded: a
 *                  field's r2, which no softening keeps from 0)
 *   orr_gammainc(s, g, x), orr_gammaincc(s, g, x)   the lower and upper
 *                  incomplete gamma functions (not regularised) of s > 0
 *                  at x >= 0, g = Gamma(s) given as a constant */

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define ORR_GPU 1
#define ORR_LAW template <typename real> static __device__ __forceinline__
#define ORR_HELPER static __device__ __forceinline__
#define ORR_MATH1(name, ff, df)                                   \
    ORR_HELPER float name(float x) { return ff(x); }              \
    ORR_HELPER double name(double x) { return df(x); }
#define ORR_MATH2(name, ff, df)                                   \
    ORR_HELPER float name(float x, float y) { return ff(x, y); }  \
    ORR_HELPER double name(double x, double y) { return df(x, y); }
ORR_MATH1(orr_sqrt, sqrtf, sqrt)
/* Double rsqrt and rsqrt cubed: the hardware approximation y (MUFU.RSQ64H,
 * which reads the top 32 bits of x and returns the top 32 bits of y, so y
 * has 21 significant bits and y*y is exact) refined once.  With
 * e = 1 - x y^2 (small: about 2^-20),
 *   x^(-1/2) = y (1 - e)^(-1/2) = y (1 + e/2 + 3e^2/8 + ...)
 *   x^(-3/2) = y^3 (1 - e)^(-3/2) = y^3 (1 + 3e/2 + 15e^2/8 + ...)
 * ORR_RSQRT64_NEWTON 2 (the default, full double accuracy) keeps the e^2
 * term: the truncation error, about 17 e^3/8, is below 1e-17.  It costs 5
 * FP64 operations for rsqrt and 6 for rsqrt cubed, where two Newton steps
 * and a cube cost 8 and 10.  ORR_RSQRT64_NEWTON 1 (opt-in) stops at the e
 * term, one Newton step: relative error about 3e^2/2, near 1e-12.  Much
 * shorter than the general rsqrt(double), which guards special cases that a
 * softened r2 never is.  Denormal arguments flush to zero (infinite
 * result). */
#ifndef ORR_RSQRT64_NEWTON
#define ORR_RSQRT64_NEWTON 2
#endif
ORR_HELPER double orr_rsqrt_f64_approx(double x)
{
    double y;
    asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
    return y;
}
ORR_HELPER double orr_rsqrt_f64(double x)
{
    const double y = orr_rsqrt_f64_approx(x), e = fma(-x, y * y, 1.0);
    const double c = ORR_RSQRT64_NEWTON >= 2 ? fma(e, 0.375, 0.5) : 0.5;
    return fma(y * e, c, y);
}
ORR_HELPER double orr_rsqrt3_f64(double x)
{
    const double y = orr_rsqrt_f64_approx(x), y2 = y * y, y3 = y2 * y, e = fma(-x, y2, 1.0);
    const double c = ORR_RSQRT64_NEWTON >= 2 ? fma(e, 1.875, 1.5) : 1.5;
    return fma(y3 * e, c, y3);
}
ORR_HELPER float orr_rsqrt3_f32(float x)
{
    const float y = rsqrtf(x);
    return y * y * y;
}
ORR_MATH1(orr_rsqrt, rsqrtf, orr_rsqrt_f64)
ORR_MATH1(orr_rsqrt3, orr_rsqrt3_f32, orr_rsqrt3_f64)
ORR_MATH1(orr_exp, expf, exp)
ORR_MATH1(orr_log, logf, log)
ORR_MATH1(orr_fabs, fabsf, fabs)
ORR_MATH1(orr_floor, floorf, floor)
ORR_MATH1(orr_rint, rintf, rint)
ORR_MATH1(orr_erf, erff, erf)
ORR_MATH1(orr_erfc, erfcf, erfc)
ORR_MATH1(orr_tanh, tanhf, tanh)
ORR_MATH2(orr_pow, powf, pow)
ORR_MATH2(orr_fmin, fminf, fmin)
ORR_MATH2(orr_fmax, fmaxf, fmax)
#else
#define ORR_GPU 0
#include <math.h>
#define ORR_LAW static inline
#define ORR_HELPER static inline
#if ORR_DOUBLE
typedef double real;
#define ORR_SFX(fn) fn
#else
typedef float real;
#define ORR_SFX(fn) fn##f
#endif
#define orr_sqrt(x) ORR_SFX(sqrt)(x)
#define orr_rsqrt(x) ((real)1 / ORR_SFX(sqrt)(x))
#define orr_exp(x) ORR_SFX(exp)(x)
#define orr_log(x) ORR_SFX(log)(x)
#define orr_fabs(x) ORR_SFX(fabs)(x)
#define orr_floor(x) ORR_SFX(floor)(x)
#define orr_rint(x) ORR_SFX(rint)(x)
#define orr_erf(x) ORR_SFX(erf)(x)
#define orr_erfc(x) ORR_SFX(erfc)(x)
#define orr_tanh(x) ORR_SFX(tanh)(x)
#define orr_pow(x, y) ORR_SFX(pow)(x, y)
#define orr_fmin(x, y) ORR_SFX(fmin)(x, y)
#define orr_fmax(x, y) ORR_SFX(fmax)(x, y)
#endif

/* Periodic box (ORR_BOX_X/Y/Z > 0 on periodic axes, baked in): the minimum
 * image of a separation, and a coordinate wrapped into [0, L).  On open axes
 * the constant condition folds away and they cost nothing. */
#define orr_min_image(d, axis) \
    (ORR_BOX_##axis > 0 ? (d) - (real)ORR_BOX_##axis * orr_rint((d) * (real)ORR_INV_BOX_##axis) : (d))
#define orr_wrap(x, axis) \
    (ORR_BOX_##axis > 0 ? orr_wrap_to((x), (real)ORR_BOX_##axis, (real)ORR_INV_BOX_##axis) : (x))

/* x wrapped into [0, L): a tiny negative x can round to exactly L, which
 * belongs at 0. */
ORR_LAW real orr_wrap_to(real x, real len, real inv)
{
    real w = x - len * orr_floor(x * inv);
    return w >= len ? w - len : w;
}

/* rsqrt (and its cube) that give 0 instead of infinity at r2 == 0; with softening the
 * argument is never 0, so it is the plain rsqrt and costs nothing extra. */
#if ORR_SOFTENED
#define orr_rsqrt_nz(r2) orr_rsqrt(r2)
#define orr_rsqrt3_nz(r2) orr_rsqrt3(r2)
#else
#define orr_rsqrt_nz(r2) ((r2) > 0 ? orr_rsqrt(r2) : 0)
#define orr_rsqrt3_nz(r2) ((r2) > 0 ? orr_rsqrt3(r2) : 0)
#endif

/* rsqrt and its cube, 0 at 0, whatever the softening (external fields). */
#define orr_rsqrt_g(r2) ((r2) > 0 ? orr_rsqrt(r2) : (real)0)
#define orr_rsqrt3_g(r2) ((r2) > 0 ? orr_rsqrt3(r2) : (real)0)
