/* lawcheck: a force law checked against itself (see lawcheck.h). */
#include "lawcheck.h"

#include "engine.h"
#include "kspec.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void orr_lawcheck_default(orr_lawcheck_opts *o)
{
    memset(o, 0, sizeof *o);
    o->mi = 0.6;
    o->mj = 1.7;
    for (int a = 0; a < ORR_LAW_MAX_ATTRS; a++)
        o->attr_i[a] = 0.75, o->attr_j[a] = 1.25;
    o->rmin = 0.01;
    o->rmax = 100;
    o->samples = 41;
    o->tol = 1e-6;
}

/* The two bodies: i at the origin, j at (s, 0, 0) moving along x at 1. */
typedef struct {
    orr_engine *e;
    double mi, mj;
    int jerk, energy;
    double third[2];
} probe;

/* At separation s: *F = scale f, and where asked (not NULL) and the law
 * has them *U = scale u (energy) and *Gj = scale g (jerk); p->third: m_i
 * a_i + m_j a_j along x, and the larger of the two. */
static orr_status at(probe *p, double s, double *F, double *U, double *Gj, orr_error *err)
{
    const double pos[8] = {0, 0, 0, p->mi, s, 0, 0, p->mj}, vel[6] = {0, 0, 0, 1, 0, 0};
    double acc[6];
    orr_status st = orr_engine_set_state(p->e, pos, vel, err);
    if (!st)
        st = orr_engine_accel(p->e, acc, err);
    if (st)
        return st;
    *F = acc[0] / s;   /* a_i = scale f (x_j - x_i) */
    p->third[0] = p->mi * acc[0] + p->mj * acc[3];
    p->third[1] = fmax(fabs(p->mi * acc[0]), fabs(p->mj * acc[3]));
    if (U && p->energy && (st = orr_engine_potential(p->e, U, err)) != ORR_OK)
        return st;
    if (Gj && p->jerk) {   /* j_i = scale (f v + 2 g (d . v) d), v = (1, 0, 0), d = (s, 0, 0) */
        const long idx = 0;
        double a[3], j[3];
        if ((st = orr_engine_accel_jerk(p->e, 1, &idx, a, j, err)) != ORR_OK)
            return st;
        *Gj = (j[0] - a[0] / s) / (2 * s * s);
    }
    return ORR_OK;
}

/* The derivative in d2 of what k (0: U, 1: F) is at d2 +- h, by central
 * differences with steps h and h / 2 (Richardson's estimate from both);
 * *rough: the two differ by more than 1e-4 of mag (a piece's edge inside,
 * or a value not finite; a smooth law's differ by about 1e-8); *noise: the
 * rounding the differences carry (the values' size times the machine
 * epsilon over the step, amplified by Richardson's rule). */
static orr_status slope(probe *p, double d2, double h, int k, double mag, double *out,
                        int *rough, double *noise, orr_error *err)
{
    double v[4], F, U;
    const double at2[4] = {d2 + h, d2 - h, d2 + h / 2, d2 - h / 2};
    for (int q = 0; q < 4; q++) {   /* the energy, or the force, alone */
        orr_status st = at(p, sqrt(at2[q]), &F, k == 0 ? &U : NULL, NULL, err);
        if (st)
            return st;
        v[q] = k == 0 ? U : F;
    }
    const double wide = (v[0] - v[1]) / (2 * h), narrow = (v[2] - v[3]) / h;
    *out = (4 * narrow - wide) / 3;
    *rough = !isfinite(*out) || fabs(wide - narrow) > 1e-4 * mag;
    double big = 0;
    for (int q = 0; q < 4; q++)
        big = fabs(v[q]) > big ? fabs(v[q]) : big;
    *noise = 16 * 2.2e-16 * big / h;
    return ORR_OK;
}

/* Appends a finding to r->message, after "; " where one is there. */
static void say(orr_lawcheck_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(orr_lawcheck_result *r, const char *fmt, ...)
{
    size_t used = strlen(r->message);
    if (used && used + 2 < sizeof r->message)
        used += (size_t)snprintf(r->message + used, sizeof r->message - used, "; ");
    if (used + 1 >= sizeof r->message)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->message + used, sizeof r->message - used, fmt, ap);
    va_end(ap);
}

/* |a - b| over the larger of |a|, |b| and floor. */
static double rel(double a, double b, double floor)
{
    double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    m = m > floor ? m : floor;
    return m > 0 ? fabs(a - b) / m : 0;
}

static orr_status check_opts(const orr_lawcheck_opts *o, orr_error *err)
{
    if (!(o->rmin > 0) || !(o->rmax > o->rmin) || !isfinite(o->rmax))
        return orr_fail(err, ORR_ERR_ARG, "the separations must run from rmin > 0 to "
                        "a finite rmax > rmin (got %g to %g)", o->rmin, o->rmax);
    if (o->samples < 3 || o->samples > 10000)
        return orr_fail(err, ORR_ERR_ARG, "3 to 10000 samples (got %d)", o->samples);
    if (!(o->mi > 0) || !(o->mj > 0) || !isfinite(o->mi) || !isfinite(o->mj))
        return orr_fail(err, ORR_ERR_ARG, "the masses must be positive and finite "
                        "(got %g and %g)", o->mi, o->mj);
    if (!(o->eps >= 0) || !isfinite(o->eps))
        return orr_fail(err, ORR_ERR_ARG, "the softening must be 0 or more (got %g)",
                        o->eps);
    if (!(o->tol > 0) || !isfinite(o->tol))
        return orr_fail(err, ORR_ERR_ARG, "the tolerance must be positive (got %g)",
                        o->tol);
    if (o->rmax / o->rmin < 1.001)
        return orr_fail(err, ORR_ERR_ARG, "rmax must be at least 1.001 rmin, so the separations "
                        "differ (got %g and %g)", o->rmin, o->rmax);
    for (int a = 0; a < ORR_LAW_MAX_ATTRS; a++)
        if (!isfinite(o->attr_i[a]) || !isfinite(o->attr_j[a]))
            return orr_fail(err, ORR_ERR_ARG, "attribute values must be finite");
    return ORR_OK;
}

/* The probe's engine: two bodies, the CPU in double. */
static orr_status probe_make(probe *p, const orr_law *law, double G, const orr_lawcheck_opts *o,
                             orr_error *err)
{
    orr_physics phys;
    orr_physics_default(&phys);
    snprintf(phys.force, sizeof phys.force, "%s", law->name);
    phys.law = law;
    phys.precision = ORR_DOUBLE;
    phys.softening = o->eps;
    phys.G = G;
    orr_kspec spec;
    orr_kspec_reference(&phys, &spec);
    orr_status st = orr_engine_create(&p->e, ORR_BACKEND_CPU, &spec, ORR_VARIANT_TILED, 2, 0, NULL,
                                      0, err);
    if (!st && law->nattrs > 0) {
        double attr[2 * ORR_LAW_MAX_ATTRS];
        for (int a = 0; a < law->nattrs; a++)
            attr[2 * a] = o->attr_i[a], attr[2 * a + 1] = o->attr_j[a];
        st = orr_engine_set_attr(p->e, attr, err);
    }
    if (!st) {
        double rt[ORR_LAW_MAX_RUNTIME];
        orr_law_runtime_values(law, rt);
        orr_engine_set_runtime(p->e, rt);
    }
    p->mi = o->mi;
    p->mj = o->mj;
    p->energy = orr_law_has_potential(law);
    p->jerk = orr_law_has_jerk(law);
    return st;
}

orr_status orr_law_check(const orr_law *law, double G, const orr_lawcheck_opts *o,
                         orr_lawcheck_result *r, orr_error *err)
{
    memset(r, 0, sizeof *r);
    orr_status st = check_opts(o, err);
    if (!st && !(G != 0 && isfinite(G)))
        st = orr_fail(err, ORR_ERR_ARG, "G must be finite and not 0 (got %g): every force "
                      "would be 0", G);
    probe p;
    memset(&p, 0, sizeof p);
    if (!st)
        st = probe_make(&p, law, G, o, err);
    r->force_checked = p.energy;
    r->jerk_checked = p.jerk;
    const double eps2 = o->eps * o->eps;
    for (int k = 0; !st && k < o->samples; k++) {
        const double s = o->rmin * pow(o->rmax / o->rmin, (double)k / (o->samples - 1)),
                     d2 = s * s, h = 1e-4 * d2, r2 = d2 + eps2;
        double F = 0, U = 0, Gj = 0;
        if ((st = at(&p, s, &F, &U, &Gj, err)) != ORR_OK)
            break;
        if (!isfinite(F) || (p.energy && !isfinite(U)) || (p.jerk && !isfinite(Gj))) {
            r->skipped++;
            continue;
        }
        /* each side's natural size there: a force from the energy's size,
         * a jerk from the force's, so a value crossing zero is judged
         * against them */
        const double fmag = 2 * fabs(U) / (o->mi * r2), gmag = fabs(F) / r2;
        double fd_f = 0, fd_g = 0, noise_f = 0, noise_g = 0;
        int rough_f = 0, rough_g = 0;
        if (p.energy) {
            st = slope(&p, d2, h, 0, (fabs(F) > fmag ? fabs(F) : fmag) * o->mi / 2, &fd_f,
                       &rough_f, &noise_f, err);
            fd_f *= 2 / o->mi;
            noise_f *= 2 / o->mi;
        }
        if (!st && p.jerk)
            st = slope(&p, d2, h, 1, fabs(Gj) > gmag ? fabs(Gj) : gmag, &fd_g, &rough_g,
                       &noise_g, err);
        if (st)
            break;
        if (rough_f || rough_g) {
            r->skipped++;
            continue;
        }
        r->compared++;
        /* Newton's third law: an energy or force not symmetric in i and j */
        const double e3 = p.third[1] > 0 ? fabs(p.third[0]) / p.third[1] : 0;
        if (e3 > r->newton_err) {
            r->newton_err = e3, r->newton_r = s;
            r->newton_i = p.mi * F * s, r->newton_j = p.mi * F * s - p.third[0];
        }
        /* a difference within the rounding the finite differences carry
         * passes whatever the values' own size (a jerk of 0, say) */
        const double ef = p.energy ? rel(F, fd_f, fmax(1e-6 * fmag, noise_f / o->tol)) : 0,
                     eg = p.jerk ? rel(Gj, fd_g, fmax(1e-6 * gmag, noise_g / o->tol)) : 0;
        if (ef > r->force_err || (r->compared == 1 && p.energy)) {
            r->force_err = ef, r->force_r = s, r->force_value = F, r->force_fd = fd_f;
        }
        if (eg > r->jerk_err || (r->compared == 1 && p.jerk)) {
            r->jerk_err = eg, r->jerk_r = s, r->jerk_value = Gj, r->jerk_fd = fd_g;
        }
    }
    orr_engine_destroy(p.e);
    if (st)
        return st;
    const int bad_f = r->force_err > o->tol, bad_g = r->jerk_err > o->tol,
              bad_n = r->newton_err > o->tol;
    /* most separations compared, or nothing is said of the law */
    const int few = (p.energy || p.jerk) && r->compared < (o->samples + 1) / 2;
    r->ok = !bad_f && !bad_g && !few && !bad_n;
    if (few)
        say(r, "force law '%s': only %d of %d separations from %g to %g could be compared (at "
            "the others a value is not finite, or the law is not smooth within the "
            "differences' steps): the check says nothing there", law->name, r->compared,
            o->samples, o->rmin, o->rmax);
    if (bad_n)
        say(r, "force law '%s' breaks Newton's third law: at r = %.6g m_i a_i = %.9g but "
            "-m_j a_j = %.9g (relative %.3g): its force (or energy) is not symmetric in i and j",
            law->name, r->newton_r, r->newton_i, r->newton_j, r->newton_err);
    if (bad_f)
        say(r, "force law '%s': the pair snippet's f disagrees with the potential snippet's "
            "(2/m_i) dU/d(d2) by %.3g (relative) at r = %.6g: scale f = %.9g against %.9g "
            "(ratio %.6g)", law->name, r->force_err, r->force_r, r->force_value, r->force_fd,
            r->force_fd != 0 ? r->force_value / r->force_fd : NAN);
    if (bad_g)
        say(r, "force law '%s': the jerk snippet's g disagrees with df/d(d2) of the pair snippet "
            "by %.3g (relative) at r = %.6g: scale g = %.9g against %.9g (ratio %.6g)",
            law->name, r->jerk_err, r->jerk_r, r->jerk_value, r->jerk_fd,
            r->jerk_fd != 0 ? r->jerk_value / r->jerk_fd : NAN);
    return ORR_OK;
}
