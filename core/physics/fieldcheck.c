/* fieldcheck: an external field checked against itself (see fieldcheck.h). */
#include "fieldcheck.h"

#include "engine.h"
#include "kspec.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void orr_fieldcheck_default(orr_fieldcheck_opts *o)
{
    memset(o, 0, sizeof *o);
    o->t = 0.3;
    o->rmin = 0.01;
    o->rmax = 100;
    o->samples = 41;
    o->tol = 1e-6;
}

typedef struct {
    orr_engine *e;
    int jerk;
} probe;

/* At x (time t, velocity v): a, and where asked Phi and j. */
static orr_status at(probe *p, const double x[3], const double v[3], double t, double a[3],
                     double *phi, double j[3], orr_error *err)
{
    const double pos[4] = {x[0], x[1], x[2], 1};
    orr_engine_set_time(p->e, t, 0);
    orr_status st = orr_engine_set_state(p->e, pos, v, err);
    if (!st)
        st = orr_engine_accel(p->e, a, err);
    if (!st && phi)
        st = orr_engine_field_potential_range(p->e, orr_engine_all(p->e), phi, err);
    if (!st && j && p->jerk) {
        const long idx = 0;
        double a2[3];
        st = orr_engine_accel_jerk(p->e, 1, &idx, a2, j, err);
    }
    return st;
}

static double norm(const double v[3])
{
    return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
}

/* |a - b| / max(|a|, |b|) of vectors (0 for two zeros), less b's rounding
 * noise (per component) where a is exact. */
static double rel3(const double a[3], const double b[3], double noise)
{
    const double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    const double m = fmax(norm(a), norm(b));
    return m > 0 ? fmax(norm(d) - sqrt(3) * noise, 0) / m : 0;
}

orr_status orr_field_check(const orr_field *f, double G, const orr_fieldcheck_opts *o,
                           orr_fieldcheck_result *r, orr_error *err)
{
    memset(r, 0, sizeof *r);
    if (!(o->rmin > 0) || !(o->rmax > o->rmin) || !isfinite(o->rmax))
        return orr_fail(err, ORR_ERR_ARG, "the distances must run from rmin > 0 to a finite "
                        "rmax > rmin (got %g to %g)", o->rmin, o->rmax);
    if (o->samples < 3 || o->samples > 10000)
        return orr_fail(err, ORR_ERR_ARG, "3 to 10000 samples (got %d)", o->samples);
    if (!(o->tol > 0) || !isfinite(o->t) || !isfinite(G))
        return orr_fail(err, ORR_ERR_ARG, "tol must be positive, t and G finite");
    orr_fieldset set = {0};
    orr_status st = orr_fieldset_add(&set, f, err);
    if (st)
        return st;
    orr_kspec spec;
    orr_kspec_default(&spec, ORR_TARGET_CPU);
    spec.phys.precision = ORR_DOUBLE;
    spec.phys.softening = 0;
    spec.phys.G = G;
    spec.phys.fields = &set;
    probe p = {NULL, orr_field_has_jerk(f)};
    st = orr_engine_create(&p.e, ORR_BACKEND_CPU, &spec, ORR_VARIANT_TILED, 1, 0, NULL, 0, err);
    if (st) {
        orr_fieldset_free(&set);
        return st;
    }
    double fv[ORR_FIELD_MAX_RUNTIME];
    orr_fieldset_runtime_values(&set, fv);
    orr_engine_set_field_runtime(p.e, fv);
    r->accel_checked = orr_field_has_potential(f);
    r->jerk_checked = p.jerk;
    for (int s = 0; !st && s < o->samples; s++) {
        const double rad = o->rmin * pow(o->rmax / o->rmin, (double)s / (o->samples - 1));
        /* a direction off every axis and plane, turning from point to point */
        const double th = 0.7 + 2.1 * s, ph = 0.3 + 1.3 * s;
        const double dir[3] = {sin(th) * cos(ph), sin(th) * sin(ph), cos(th)};
        const double x[3] = {rad * dir[0], rad * dir[1], rad * dir[2]};
        /* a velocity of the size that r / t gives, in another direction */
        const double v[3] = {0.6 * rad * cos(ph), -0.5 * rad * sin(th), 0.4 * rad};
        double a[3], j[3] = {0, 0, 0}, phi;
        if ((st = at(&p, x, v, o->t, a, NULL, j, err)) != ORR_OK)
            break;
        /* Richardson's rule on central differences of steps h and h/2; a point
         * is rough (skipped) where the two differ by more than their rounding
         * and 1e-4 of the values (not smooth there); noise: the differences'
         * rounding, 32 ulps of the values differenced over the step */
        int rough = 0;
        double fa[3] = {0, 0, 0}, fj[3] = {0, 0, 0}, gap[3] = {0, 0, 0}, anoise = 0,
               jnoise = 0;
        const double h = 1e-4 * rad;
        for (int d = 0; r->accel_checked && d < 3 && !st; d++) {   /* -dPhi/dx_d */
            double ph4[4], xs[3], tmp[3];
            const double off[4] = {h, -h, h / 2, -h / 2};
            for (int q = 0; q < 4 && !st; q++) {
                memcpy(xs, x, sizeof xs);
                xs[d] += off[q];
                st = at(&p, xs, v, o->t, tmp, &phi, NULL, err);
                ph4[q] = phi;
            }
            const double wide = (ph4[0] - ph4[1]) / (2 * h), narrow = (ph4[2] - ph4[3]) / h;
            fa[d] = -(4 * narrow - wide) / 3;
            gap[d] = fabs(wide - narrow);
            const double pmax = fmax(fmax(fabs(ph4[0]), fabs(ph4[1])),
                                     fmax(fabs(ph4[2]), fabs(ph4[3])));
            anoise = fmax(anoise, 32 * DBL_EPSILON * pmax / (h / 2));
        }
        for (int d = 0; r->accel_checked && d < 3; d++)
            rough |= !isfinite(fa[d]) || gap[d] > 1e-4 * fmax(norm(a), norm(fa)) + anoise;
        /* the jerk: d a / d tau along (x + v tau, t + tau), tau of a 1e-4 of the time
         * the motion takes to cross r; a kink on the point itself (the one-sided
         * differences apart) is rough too */
        const double tau = 1e-4 * rad / fmax(norm(v), 1e-300);
        double jgap[3] = {0, 0, 0}, kink[3] = {0, 0, 0}, side = 0;
        for (int q = 0; p.jerk && q < 2 && !st; q++) {
            double ap[3], am[3];
            const double w = q ? tau / 2 : tau;
            const double xp[3] = {x[0] + v[0] * w, x[1] + v[1] * w, x[2] + v[2] * w},
                         xm[3] = {x[0] - v[0] * w, x[1] - v[1] * w, x[2] - v[2] * w};
            st = at(&p, xp, v, o->t + w, ap, NULL, NULL, err);
            if (!st)
                st = at(&p, xm, v, o->t - w, am, NULL, NULL, err);
            jnoise = fmax(jnoise, 32 * DBL_EPSILON * fmax(norm(ap), norm(am)) / w);
            for (int d = 0; d < 3 && !st; d++) {
                const double diff = (ap[d] - am[d]) / (2 * w);
                if (q == 0) {
                    fj[d] = diff;
                    kink[d] = fabs((ap[d] - a[d]) - (a[d] - am[d])) / w;
                    side = fmax(side, fmax(fabs(ap[d] - a[d]), fabs(a[d] - am[d])) / w);
                } else {
                    jgap[d] = fabs(diff - fj[d]);
                    fj[d] = (4 * diff - fj[d]) / 3;
                }
            }
        }
        for (int d = 0; p.jerk && d < 3; d++)
            rough |= jgap[d] > 1e-4 * fmax(norm(j), norm(fj)) + jnoise ||
                     kink[d] > 1e-2 * side + jnoise ? 2 : 0;
        if (st)
            break;
        if (rough || !isfinite(norm(a)) || !isfinite(norm(j))) {
            r->skipped++;
            continue;
        }
        r->compared++;
        const double ea = r->accel_checked ? rel3(a, fa, anoise) : 0,
                     ej = p.jerk ? rel3(j, fj, jnoise) : 0;
        if (ea > r->accel_err)
            r->accel_err = ea, memcpy(r->accel_at, x, sizeof r->accel_at);
        if (ej > r->jerk_err)
            r->jerk_err = ej, memcpy(r->jerk_at, x, sizeof r->jerk_at);
    }
    orr_engine_destroy(p.e);
    orr_fieldset_free(&set);
    if (st)
        return st;
    r->ok = 1;
    if (r->compared * 2 < o->samples) {
        r->ok = 0;
        snprintf(r->message, sizeof r->message, "field '%s': only %d of %d points could be "
                 "compared (values not finite or not smooth there): the check says nothing",
                 f->name, r->compared, o->samples);
    } else if (r->accel_err > o->tol) {
        r->ok = 0;
        snprintf(r->message, sizeof r->message, "field '%s': the accel snippet's a disagrees "
                 "with -grad Phi of the potential snippet by %.3g (relative) at (%g, %g, %g)",
                 f->name, r->accel_err, r->accel_at[0], r->accel_at[1], r->accel_at[2]);
    } else if (r->jerk_err > o->tol) {
        r->ok = 0;
        snprintf(r->message, sizeof r->message, "field '%s': the jerk snippet's j disagrees "
                 "with d a/dt along the motion by %.3g (relative) at (%g, %g, %g)", f->name,
                 r->jerk_err, r->jerk_at[0], r->jerk_at[1], r->jerk_at[2]);
    }
    return ORR_OK;
}
