/* trial: the bodies that benchmarks and the tuner run on, and the accuracy
 * measures that judge a kernel against the CPU in double (see trial.h). */
#include "trial.h"
#include "ic.h"
#include "law.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double orr_max_rel_err(const double *acc, const double *ref, long ni)
{
    double worst = 0;
    for (long k = 0; k < ni; k++) {
        const double *a = acc + 3 * k, *r = ref + 3 * k;
        double d = sqrt((a[0] - r[0]) * (a[0] - r[0]) + (a[1] - r[1]) * (a[1] - r[1]) +
                        (a[2] - r[2]) * (a[2] - r[2]));
        double m = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
        double e = m > 0 ? d / m : d;
        if (!(e <= worst))   /* NaN counts as the worst */
            worst = isnan(e) ? INFINITY : e;
    }
    return worst;
}

orr_status orr_trial_bodies(const orr_kspec *spec, long n, uint64_t seed, double *pos,
                            double *vel, double **attr, orr_error *err)
{
    *attr = NULL;
    orr_law law;
    orr_status st = orr_kspec_law(spec, &law, err);
    if (st)
        return st;
    if (strcmp(law.scale, "G") == 0)
        st = orr_ic_plummer(n, seed, 1.0, pos, vel, err);
    else
        st = orr_ic_uniform_cube(n, seed, cbrt((double)n), pos, vel, err);
    int nattr = law.nattrs;
    orr_law_free(&law);
    if (!st && nattr) {
        *attr = malloc(sizeof(double) * (size_t)nattr * (size_t)n);
        if (!*attr)
            return orr_fail(err, ORR_ERR_NOMEM, "out of memory for %ld bodies", n);
        for (long k = 0; k < nattr * n; k++) {
            double v = 0.5 + (double)((uint64_t)k * 2654435761u % 1000) / 1000.0;
            (*attr)[k] = k % 2 ? -v : v;
        }
    }
    if (!st && spec->phys.precision == ORR_FLOAT) {
        for (long k = 0; k < 4 * n; k++)
            pos[k] = (float)pos[k];
        for (long k = 0; k < 3 * n; k++)
            vel[k] = (float)vel[k];
        for (long k = 0; *attr && k < nattr * n; k++)
            (*attr)[k] = (float)(*attr)[k];
    }
    return st;
}

double orr_accel_tolerance(orr_precision p)
{
    return ORR_STORED_DOUBLE(p) ? 1e-12 : 1e-5;
}

double orr_accel_err(const double *acc, const double *ref, long ni)
{
    double ss = 0, worst = 0;
    for (long k = 0; k < ni; k++)
        ss += ref[3 * k] * ref[3 * k] + ref[3 * k + 1] * ref[3 * k + 1] +
              ref[3 * k + 2] * ref[3 * k + 2];
    double rms = ni > 0 ? sqrt(ss / (double)ni) : 0;
    for (long k = 0; k < ni; k++) {
        const double *a = acc + 3 * k, *r = ref + 3 * k;
        double d = sqrt((a[0] - r[0]) * (a[0] - r[0]) + (a[1] - r[1]) * (a[1] - r[1]) +
                        (a[2] - r[2]) * (a[2] - r[2]));
        double m = fmax(sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]), rms);
        double e = m > 0 ? d / m : d;
        if (!(e <= worst))   /* NaN counts as the worst */
            worst = isnan(e) ? INFINITY : e;
    }
    return worst;
}
