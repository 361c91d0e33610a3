/* bench: timing and accuracy of one configuration (see bench.h). */
#include "bench.h"
#include "law.h"
#include "ic.h"

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

orr_status orr_bench_bodies(const orr_kspec *spec, long n, uint64_t seed, double *pos,
                            double *vel, double **attr, orr_error *err)
{
    *attr = NULL;
    orr_law builtin;
    const orr_law *law = spec->law;
    orr_status st = ORR_OK;
    if (!law && (st = orr_law_builtin(spec->force, &builtin, err)) == ORR_OK)
        law = &builtin;
    if (st)
        return st;
    if (strcmp(law->scale, "G") == 0)
        st = orr_ic_plummer(n, seed, 1.0, pos, vel, err);
    else
        st = orr_ic_uniform_cube(n, seed, cbrt((double)n), pos, vel, err);
    int nattr = law->nattrs;
    if (law == &builtin)
        orr_law_free(&builtin);
    if (!st && nattr) {
        *attr = malloc(sizeof(double) * (size_t)nattr * (size_t)n);
        if (!*attr)
            return orr_fail(err, ORR_ERR_NOMEM, "out of memory for %ld bodies", n);
        for (long k = 0; k < nattr * n; k++) {
            double v = 0.5 + (double)((uint64_t)k * 2654435761u % 1000) / 1000.0;
            (*attr)[k] = k % 2 ? -v : v;
        }
    }
    if (!st && spec->precision == ORR_FLOAT) {
        for (long k = 0; k < 4 * n; k++)
            pos[k] = (float)pos[k];
        for (long k = 0; vel && k < 3 * n; k++)
            vel[k] = (float)vel[k];
        for (long k = 0; *attr && k < nattr * n; k++)
            (*attr)[k] = (float)(*attr)[k];
    }
    return st;
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

/* Compares the engine's accelerations on its current state with the CPU
 * backend in double on a sample of up to 512 bodies spread over the set. */
static orr_status check_accuracy(orr_engine *e, const double *attr, orr_bench_row *row,
                                 orr_error *err)
{
    long ni = e->n < 512 ? e->n : 512;
    long *idx = malloc(sizeof(long) * (size_t)ni);
    double *pos = malloc(sizeof(double) * 4 * (size_t)e->n);
    double *got = malloc(sizeof(double) * 3 * (size_t)ni);
    double *ref = malloc(sizeof(double) * 3 * (size_t)ni);
    orr_engine *cpu = NULL;
    orr_status st = ORR_OK;
    if (!idx || !pos || !got || !ref) {
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        goto done;
    }
    for (long k = 0; k < ni; k++)
        idx[k] = (long)((double)k * e->n / ni);
    orr_kspec ref_spec;
    orr_kspec_default(&ref_spec, ORR_TARGET_CPU);
    memcpy(ref_spec.force, e->spec.force, sizeof ref_spec.force);
    ref_spec.law = e->spec.law;
    ref_spec.precision = ORR_DOUBLE;
    ref_spec.softening = e->spec.softening;
    ref_spec.G = e->spec.G;
    memcpy(ref_spec.box, e->spec.box, sizeof ref_spec.box);
    st = orr_engine_accel_sample(e, ni, idx, got, err);
    if (!st)
        st = orr_engine_get_state(e, pos, NULL, err);
    if (!st)
        st = orr_engine_create(&cpu, ORR_BACKEND_CPU, &ref_spec, ORR_VARIANT_TILED, e->n, 0, NULL,
                               0, err);
    if (!st) {
        orr_engine_set_runtime(cpu, e->rt);
        st = orr_engine_set_state(cpu, pos, NULL, err);
    }
    if (!st && attr)
        st = orr_engine_set_attr(cpu, attr, err);
    if (!st)
        st = orr_engine_accel_sample(cpu, ni, idx, ref, err);
    if (st) {
        orr_error_context(err, "accuracy reference (CPU backend, double)");
        goto done;
    }
    row->sample = ni;
    row->max_rel_err = orr_max_rel_err(got, ref, ni);
done:
    orr_engine_destroy(cpu);
    free(idx);
    free(pos);
    free(got);
    free(ref);
    return st;
}

orr_status orr_bench_run(orr_backend_kind kind, const orr_kspec *spec, orr_variant variant,
                         long n, int steps, orr_bench_row *row, char *notice,
                         size_t notice_size, orr_error *err)
{
    memset(row, 0, sizeof *row);
    double *pos = malloc(sizeof(double) * 4 * (size_t)n);
    double *vel = malloc(sizeof(double) * 3 * (size_t)n), *attr = NULL;
    orr_engine *e = NULL;
    orr_status st = ORR_OK;
    if (!pos || !vel) {
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory for %ld bodies", n);
        goto done;
    }
    st = orr_bench_bodies(spec, n, 20261122u + (uint64_t)n, pos, vel, &attr, err);
    if (!st)
        st = orr_engine_create(&e, kind, spec, variant, n, 0, notice, notice_size, err);
    if (!st)
        st = orr_engine_set_state(e, pos, vel, err);
    if (!st && attr)
        st = orr_engine_set_attr(e, attr, err);
    double warm = 0;
    if (!st)   /* warm-up, and a first estimate for choosing the step count */
        st = orr_engine_time_steps(e, 1, 0, &warm, err);
    if (st)
        goto done;
    if (steps <= 0) {
        steps = warm > 0 ? (int)(250.0 / warm) : 100;
        steps = steps < 3 ? 3 : steps > 200 ? 200 : steps;
    }
    row->n = n;
    row->backend = e->ops->name;
    row->spec = e->spec;
    row->variant = variant;
    row->steps = steps;
    row->build = e->build;
    st = orr_engine_time_steps(e, steps, 0, &row->ms_per_step, err);
    if (!st)
        st = orr_engine_time_steps(e, steps, 1, &row->ms_force, err);
    if (st)
        goto done;
    double inter = (double)n * (double)n;
    row->interactions_per_s = inter / (row->ms_per_step * 1e-3);
    row->gflops = row->interactions_per_s * (e->spec.precision == ORR_DOUBLE ? 30 : 20) * 1e-9;
    st = check_accuracy(e, attr, row, err);
done:
    orr_engine_destroy(e);
    free(pos);
    free(vel);
    free(attr);
    return st;
}
