/* reference_cpu: the yardstick for the CPU backend's speed, not a kernel
 * orrery runs: the straightforward vectorised structure-of-arrays gravity
 * loop (OpenMP threads over i, `omp simd` over j, no tiling, no compensated
 * sums), compiled with -O3 -march=native -fopenmp -ffast-math.  `orrery bench
 * --backend cpu --variant reference` times it in the same run as the
 * backend's own kernel, on the same bodies.  Float, Plummer-softened
 * gravity with the softening and G baked in as the backend's are. */
#include <math.h>

#define ORR_EXPORT __attribute__((visibility("default")))

ORR_EXPORT void orr_ref_accel(long n, const float *restrict x, const float *restrict y,
                              const float *restrict z, const float *restrict m,
                              float *restrict ax, float *restrict ay, float *restrict az);

void orr_ref_accel(long n, const float *restrict x, const float *restrict y,
                   const float *restrict z, const float *restrict m, float *restrict ax,
                   float *restrict ay, float *restrict az)
{
    const float eps2 = (float)ORR_EPS2, g = (float)ORR_G;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        const float xi = x[i], yi = y[i], zi = z[i];
        float sx = 0, sy = 0, sz = 0;
#pragma omp simd reduction(+ : sx, sy, sz)
        for (long j = 0; j < n; j++) {
            const float dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;
            const float r2 = dx * dx + dy * dy + dz * dz + eps2;
            const float inv = 1.0f / sqrtf(r2);
            const float s = m[j] * inv * inv * inv;
            sx += dx * s;
            sy += dy * s;
            sz += dz * s;
        }
        ax[i] = g * sx;
        ay[i] = g * sy;
        az[i] = g * sz;
    }
}
