/* direct_cpu: the CPU all-pairs loops around the same force law as the GPU
 * kernels, compiled at run time by the host C compiler into a shared object
 * (one precision per object).  Structure of arrays; OpenMP threads over the
 * target bodies i, and the j-loop in tiles of ORR_BLOCK bodies that `omp simd`
 * vectorises.  Tile sums are added with compensation, as on the GPU.
 * ORR_THREADS > 0 caps the number of OpenMP threads (the tuner varies it);
 * a loop uses fewer when its work is small (orr_omp_threads).
 *
 * The force law's generated section comes before this file (orr_pair_accel,
 * orr_pair_potential, orr_law_scale; ORR_NATTR attributes stored as arrays
 * attr[a * n + i], passed to the law with stride n; ORR_NRT runtime params),
 * then the external fields' (field.h: orr_fields_accel, ...; ORR_NFIELDS),
 * which each target's acceleration gains once, after the law's scale.  rtp
 * holds ORR_RT_SLOTS values: the law's runtime params, the fields' from
 * ORR_RT_FIELD, the time at ORR_RT_T0.
 *
 * Entry points (all exported, looked up with dlsym):
 *   orr_cpu_accel      accelerations of ni targets (idx[k], or first + k when
 *                      idx is NULL) from all n bodies as sources, into
 *                      ax[k], ay[k], az[k]
 *   orr_cpu_potential  the pair potential energy of the targets
 *                      [first, first + count) with all n bodies, self-pairs
 *                      excluded, halved (each pair is seen from both ends)
 *   orr_cpu_accel_jerk accelerations and jerks of the ni targets idx[k] from
 *                      all n bodies (positions and velocities: the predicted
 *                      ones of a block step), for the Hermite integrator;
 *                      returns 1 without touching anything when the law has
 *                      no jerk snippet
 *   orr_cpu_field_potential  sum of m_i Phi(x_i) of the external fields over the
 *                      targets [first, first + count)
 *   orr_cpu_kick       v = (v + a dt) * damping
 *   orr_cpu_drift      x += v dt, wrapped into the box on periodic axes
 *                      (kick and drift take the arrays of the targets) */

#include <omp.h>

#define ORR_EXPORT __attribute__((visibility("default")))

/* A loop of `work` pair interactions runs on one thread for each
 * ORR_OMP_GRAIN of them, up to ORR_THREADS (or OpenMP's default): a small
 * block step (64 targets of 2048 bodies) runs on the calling thread alone.
 * Every parallel region ends in a barrier that waits for its slowest
 * thread, and on a machine whose cores are busy with other processes a
 * worker that is not running makes the region cost a scheduler time slice
 * (several milliseconds, whatever its size): a region too small to gain
 * from threads must not pay that.  ORR_OMP_GRAIN is about 0.1 ms of one
 * thread's work (accelerations and jerks in double: 1.3e9 pairs/s on one
 * core of the development machine), so a region's start (a few us) stays
 * a small part of it. */
#define ORR_OMP_GRAIN 131072
static inline int orr_omp_threads(double work)
{
    const int most = ORR_THREADS > 0 ? ORR_THREADS : omp_get_max_threads();
    const double want = work / ORR_OMP_GRAIN;
    return want >= most ? most : want >= 1 ? (int)want : 1;
}
#define ORR_OMP_FOR _Pragma("omp parallel for schedule(static) num_threads(orr_nt_)")

ORR_EXPORT void orr_cpu_accel(long n, const real *restrict x, const real *restrict y,
                              const real *restrict z, const real *restrict m,
                              const real *restrict attr, const double *restrict rtp, long ni,
                              long first, const long *restrict idx, real *restrict ax,
                              real *restrict ay, real *restrict az);
ORR_EXPORT int orr_cpu_accel_jerk(long n, const real *restrict x, const real *restrict y,
                                  const real *restrict z, const real *restrict m,
                                  const real *restrict vx, const real *restrict vy,
                                  const real *restrict vz, const real *restrict attr,
                                  const double *restrict rtp, long ni, const long *restrict idx,
                                  real *restrict acc, real *restrict jerk);
ORR_EXPORT double orr_cpu_field_potential(long n, const real *restrict x, const real *restrict y,
                                          const real *restrict z, const real *restrict m,
                                          const double *restrict rtp, long first, long count);
ORR_EXPORT double orr_cpu_potential(long n, const real *restrict x, const real *restrict y,
                                    const real *restrict z, const real *restrict m,
                                    const real *restrict attr, const double *restrict rtp,
                                    long first, long count);
ORR_EXPORT /* The fields' potential energy of the targets: in fixed parts, like the
 * pair potential, so the sum does not depend on the threads. */
double orr_cpu_field_potential(long n, const real *restrict x, const real *restrict y,
                               const real *restrict z, const real *restrict m,
                               const double *restrict rtp, long first, long count)
{
    if (ORR_NFIELDS == 0)
        return 0;
    enum { ORR_POT_PARTS = 256 };
    double part[ORR_POT_PARTS];
    const int orr_nt_ = orr_omp_threads((double)count * 64);
    ORR_OMP_FOR
    for (int p = 0; p < ORR_POT_PARTS; p++) {
        const long lo = first + (long)((double)count * p / ORR_POT_PARTS),
                   hi = first + (long)((double)count * (p + 1) / ORR_POT_PARTS);
        double sum = 0;
        for (long i = lo; i < hi; i++)
            sum += (double)m[i] *
                   (double)orr_fields_potential(x[i], y[i], z[i], rtp + ORR_RT_FIELD,
                                                rtp[ORR_RT_T0]);
        part[p] = sum;
    }
    double total = 0;
    for (int p = 0; p < ORR_POT_PARTS; p++)
        total += part[p];
    return total;
}

void orr_cpu_kick(long n, real *restrict vx, real *restrict vy, real *restrict vz,
                             const real *restrict ax, const real *restrict ay,
                             const real *restrict az, double dt, double damping);
ORR_EXPORT void orr_cpu_drift(long n, real *restrict x, real *restrict y, real *restrict z,
                              const real *restrict vx, const real *restrict vy,
                              const real *restrict vz, double dt);

/* s += t with compensation c.  Float kernels are compiled with -ffast-math
 * (for the vectorised approximate rsqrt); this function is kept out of it,
 * since reassociation would cancel the compensation.  Called once per tile. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-fast-math"))) static void kahan_add(real *s, real *c, real t)
#else
static inline void kahan_add(real *s, real *c, real t)
#endif
{
    real yv = t - *c;
    real u = *s + yv;
    *c = (u - *s) - yv;
    *s = u;
}

/* The runtime params in real. */
#define ORR_RT_LOAD(rt, rtp)                \
    real rt[ORR_NRTS];                      \
    for (int q_ = 0; q_ < ORR_NRTS; q_++)   \
        rt[q_] = (real)(ORR_NRT > 0 ? (rtp)[q_] : 0)

void orr_cpu_accel(long n, const real *restrict x, const real *restrict y,
                   const real *restrict z, const real *restrict m, const real *restrict attr,
                   const double *restrict rtp, long ni, long first, const long *restrict idx,
                   real *restrict ax, real *restrict ay, real *restrict az)
{
    ORR_RT_LOAD(rt, rtp);
    const real g = orr_law_scale(rt);
    const int orr_nt_ = orr_omp_threads((double)ni * (double)n);
    ORR_OMP_FOR
    for (long k = 0; k < ni; k++) {
        const long i = idx ? idx[k] : first + k;
        const real xi = x[i], yi = y[i], zi = z[i], mi = m[i];
        const real *ai = ORR_NATTR > 0 ? attr + i : rt;
        real sx = 0, sy = 0, sz = 0, cx = 0, cy = 0, cz = 0;
        for (long jb = 0; jb < n; jb += ORR_BLOCK) {
            const long je = jb + ORR_BLOCK < n ? jb + ORR_BLOCK : n;
            real tx = 0, ty = 0, tz = 0;
#pragma omp simd reduction(+ : tx, ty, tz)
            for (long j = jb; j < je; j++) {
                const real dx = orr_min_image(x[j] - xi, X), dy = orr_min_image(y[j] - yi, Y),
                           dz = orr_min_image(z[j] - zi, Z);
                const real d2 = dx * dx + dy * dy + dz * dz;
                const real r2 = d2 + (real)ORR_EPS2;
                const real f = orr_pair_accel(dx, dy, dz, d2, r2, mi, m[j], ai,
                                              ORR_NATTR > 0 ? attr + j : rt, n, rt);
                tx += dx * f;
                ty += dy * f;
                tz += dz * f;
            }
            kahan_add(&sx, &cx, tx);
            kahan_add(&sy, &cy, ty);
            kahan_add(&sz, &cz, tz);
        }
        real fx = 0, fy = 0, fz = 0;
        if (ORR_NFIELDS > 0)
            orr_fields_accel(xi, yi, zi, rtp + ORR_RT_FIELD, rtp[ORR_RT_T0], &fx, &fy, &fz);
        ax[k] = g * sx + fx;
        ay[k] = g * sy + fy;
        az[k] = g * sz + fz;
    }
}

int orr_cpu_accel_jerk(long n, const real *restrict x, const real *restrict y,
                       const real *restrict z, const real *restrict m, const real *restrict vx,
                       const real *restrict vy, const real *restrict vz, const real *restrict attr,
                       const double *restrict rtp, long ni, const long *restrict idx,
                       real *restrict acc, real *restrict jerk)
{
    if (!ORR_HAS_JERK)
        return 1;
    ORR_RT_LOAD(rt, rtp);
    const real g = orr_law_scale(rt);
    const int orr_nt_ = orr_omp_threads((double)ni * (double)n);
    ORR_OMP_FOR
    for (long k = 0; k < ni; k++) {
        const long i = idx[k];
        const real xi = x[i], yi = y[i], zi = z[i], mi = m[i], ui = vx[i], vi = vy[i], wi = vz[i];
        const real *ai = ORR_NATTR > 0 ? attr + i : rt;
        real s[6] = {0}, c[6] = {0};
        for (long jb = 0; jb < n; jb += ORR_BLOCK) {
            const long je = jb + ORR_BLOCK < n ? jb + ORR_BLOCK : n;
            real tx = 0, ty = 0, tz = 0, kx = 0, ky = 0, kz = 0;
#pragma omp simd reduction(+ : tx, ty, tz, kx, ky, kz)
            for (long j = jb; j < je; j++) {
                const real dx = orr_min_image(x[j] - xi, X), dy = orr_min_image(y[j] - yi, Y),
                           dz = orr_min_image(z[j] - zi, Z);
                const real du = vx[j] - ui, dv = vy[j] - vi, dw = vz[j] - wi;
                const real d2 = dx * dx + dy * dy + dz * dz;
                const real r2 = d2 + (real)ORR_EPS2;
                const real *aj = ORR_NATTR > 0 ? attr + j : rt;
                const real f = orr_pair_accel(dx, dy, dz, d2, r2, mi, m[j], ai, aj, n, rt);
                const real gg = orr_pair_jerk(dx, dy, dz, d2, r2, mi, m[j], ai, aj, n, rt, f);
                const real q = 2 * gg * (dx * du + dy * dv + dz * dw);
                tx += dx * f;
                ty += dy * f;
                tz += dz * f;
                kx += f * du + q * dx;
                ky += f * dv + q * dy;
                kz += f * dw + q * dz;
            }
            const real t[6] = {tx, ty, tz, kx, ky, kz};
            for (int d = 0; d < 6; d++)
                kahan_add(&s[d], &c[d], t[d]);
        }
        real f[6] = {0, 0, 0, 0, 0, 0};
        if (ORR_NFIELDS > 0)
            orr_fields_accel_jerk(xi, yi, zi, ui, vi, wi, rtp + ORR_RT_FIELD, rtp[ORR_RT_T0],
                                  &f[0], &f[1], &f[2], &f[3], &f[4], &f[5]);
        for (int d = 0; d < 3; d++) {
            acc[3 * k + d] = g * s[d] + f[d];
            jerk[3 * k + d] = g * s[3 + d] + f[3 + d];
        }
    }
    return 0;
}

double orr_cpu_potential(long n, const real *restrict x, const real *restrict y,
                         const real *restrict z, const real *restrict m, const real *restrict attr,
                         const double *restrict rtp, long first, long count)
{
    ORR_RT_LOAD(rt, rtp);
    /* The rows are summed in ORR_POT_PARTS fixed parts, then the parts in
     * order: the same total whatever the number of threads (an OpenMP
     * reduction adds the threads' sums in any order, so its last bits
     * changed from run to run on a 16-core machine). */
    enum { ORR_POT_PARTS = 256 };
    double part[ORR_POT_PARTS];
    const int orr_nt_ = orr_omp_threads((double)count * (double)n);
    ORR_OMP_FOR
    for (int p = 0; p < ORR_POT_PARTS; p++) {
        const long lo = first + (long)((double)count * p / ORR_POT_PARTS),
                   hi = first + (long)((double)count * (p + 1) / ORR_POT_PARTS);
        double sum = 0;
        for (long i = lo; i < hi; i++) {
            double phi = 0;
            for (long j = 0; j < n; j++) {
                if (j == i)
                    continue;
                const real dx = orr_min_image(x[j] - x[i], X),
                           dy = orr_min_image(y[j] - y[i], Y),
                           dz = orr_min_image(z[j] - z[i], Z);
                const real d2 = dx * dx + dy * dy + dz * dz;
                phi += (double)orr_pair_potential(dx, dy, dz, d2, d2 + (real)ORR_EPS2, m[i],
                                                  m[j], ORR_NATTR > 0 ? attr + i : rt,
                                                  ORR_NATTR > 0 ? attr + j : rt, n, rt);
            }
            sum += phi;
        }
        part[p] = sum;
    }
    double total = 0;
    for (int p = 0; p < ORR_POT_PARTS; p++)
        total += part[p];
    return 0.5 * total * (double)orr_law_scale(rt);
}

void orr_cpu_kick(long n, real *restrict vx, real *restrict vy, real *restrict vz,
                  const real *restrict ax, const real *restrict ay, const real *restrict az,
                  double dt, double damping)
{
    const real h = (real)dt, d = (real)damping;
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < n; i++) {
        vx[i] = (vx[i] + ax[i] * h) * d;
        vy[i] = (vy[i] + ay[i] * h) * d;
        vz[i] = (vz[i] + az[i] * h) * d;
    }
}

void orr_cpu_drift(long n, real *restrict x, real *restrict y, real *restrict z,
                   const real *restrict vx, const real *restrict vy, const real *restrict vz,
                   double dt)
{
    const real h = (real)dt;
#pragma omp parallel for simd schedule(static)
    for (long i = 0; i < n; i++) {
        x[i] = orr_wrap(x[i] + vx[i] * h, X);
        y[i] = orr_wrap(y[i] + vy[i] * h, Y);
        z[i] = orr_wrap(z[i] + vz[i] * h, Z);
    }
}
