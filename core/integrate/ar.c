/* ar: the logarithmic-Hamiltonian leapfrog with Gragg-Bulirsch-Stoer
 * extrapolation for a few bodies (ar.h). */
#include "ar.h"

#include <math.h>
#include <string.h>

#define KMAX 10          /* substep counts 2, 4, ..., 2 KMAX */
#define NY (6 * ORR_AR_MAX + 3)
#define ROUNDING_FLOOR 1e-12   /* an extrapolation this close at the last column is converged */

/* The state as one vector: positions, velocities, the time since the
 * step began (0 at its start: no rounding of the clock's large value in
 * the extrapolation), B, and W = T + B, the drift's divisor (below). */
typedef struct {
    double y[NY];
} vec;

static int ny(const orr_ar *a)
{
    return 6 * a->n + 2;
}

/* U = sum G m_i m_j / r_ij and, where acc is given, the accelerations. */
static double force(const orr_ar *a, const double *x, double *acc)
{
    const int n = a->n;
    double u = 0;
    if (acc)
        memset(acc, 0, sizeof(double) * 3 * (size_t)n);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            const double dx = x[3 * j] - x[3 * i], dy = x[3 * j + 1] - x[3 * i + 1],
                         dz = x[3 * j + 2] - x[3 * i + 2];
            const double r2 = dx * dx + dy * dy + dz * dz, r = sqrt(r2);
            u += a->G * a->m[i] * a->m[j] / r;
            if (acc) {
                const double f = a->G / (r2 * r);
                acc[3 * i] += f * a->m[j] * dx, acc[3 * i + 1] += f * a->m[j] * dy,
                    acc[3 * i + 2] += f * a->m[j] * dz;
                acc[3 * j] -= f * a->m[i] * dx, acc[3 * j + 1] -= f * a->m[i] * dy,
                    acc[3 * j + 2] -= f * a->m[i] * dz;
            }
        }
    return u;
}

static double kinetic(const orr_ar *a, const double *v)
{
    double k = 0;
    for (int i = 0; i < a->n; i++)
        k += 0.5 * a->m[i] * (v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] +
                              v[3 * i + 2] * v[3 * i + 2]);
    return k;
}

/* One leapfrog of `steps` substeps of h from y (drift h/2, kick h, drift h,
 * ..., kick h, drift h/2): y's positions and time drift by dt = h / (T + B),
 * its velocities kick by dt = h / U.  Where B < 0 (unbound) T + B is not
 * formed as the sum: far from pericentre T and -B are both far above their
 * sum (= U), and the sum's rounding, eps T / U of it (1e-12 at a distance
 * of 0.3 after a pericentre of 1e-5, e = 1.5: T = 6250.8, B = -6250), made
 * the time of leapfrogs with different substep counts differ by that much
 * whatever the step: the extrapolation never converged and the steps
 * halved down to s ~ 5e-15.  There it is W, carried along (the
 * time-transformed leapfrog's auxiliary variable, Mikkola & Aarseth 2002):
 * U at the step's start (= T + B there, store() holds it), each kick adding
 * T + B's exact change dk sum m v_mean . acc (the tides' work goes to T and
 * out of B: none to W), with no cancellation; the same leapfrog in exact
 * arithmetic.  Where B >= 0 the sum has none either (T, B >= 0) and W's
 * rounding would remember a pericentre's U within the step (e = 0.9999:
 * 10 times the phase error): T + B as before.  Chosen by the step's B at
 * its start, the same for all its leapfrogs. */
static void leapfrog(orr_ar *a, vec *y, double H, int steps)
{
    const int n = a->n;
    double *x = y->y, *v = y->y + 3 * n, *t = y->y + 6 * n, B = y->y[6 * n + 1],
           W = y->y[6 * n + 2];
    const int carried = B < 0;
    const double h = H / steps;
    double acc[3 * ORR_AR_MAX];
    /* compensated sums (Kahan): the many small increments of a long step
     * keep their low bits */
    double cx[3 * ORR_AR_MAX] = {0}, cv[3 * ORR_AR_MAX] = {0}, ct = 0;
    for (int k = 0; k <= steps; k++) {
        const double hd = (k == 0 || k == steps) ? 0.5 * h : h;
        const double dt = hd / (carried ? W : kinetic(a, v) + B);
        for (int q = 0; q < 3 * n; q++) {
            const double d = dt * v[q] - cx[q], s = x[q] + d;
            cx[q] = (s - x[q]) - d;
            x[q] = s;
        }
        {
            const double d = dt - ct, s = *t + d;
            ct = (s - *t) - d;
            *t = s;
        }
        if (k == steps)
            break;
        const double u = force(a, x, acc);
        const double dk = h / u;
        if (a->perturb) {   /* the tides: kicked with the rest, their work into B */
            double f[3 * ORR_AR_MAX], w = 0, wu = 0;
            a->perturb(a->perturb_ctx, (a->t - a->tc) + *t, a, x, f);
            for (int q = 0; q < 3 * n; q++) {
                const double v0 = v[q];
                const double d = dk * (acc[q] + f[q]) - cv[q], s = v[q] + d;
                cv[q] = (s - v[q]) - d;
                v[q] = s;
                w += a->m[q / 3] * 0.5 * (v0 + v[q]) * f[q];
                wu += a->m[q / 3] * 0.5 * (v0 + v[q]) * acc[q];
            }
            B -= dk * w;
            W += dk * wu;
            y->y[6 * n + 1] = B;
        } else {
            double wu = 0;
            for (int q = 0; q < 3 * n; q++) {
                const double v0 = v[q];
                const double d = dk * acc[q] - cv[q], s = v[q] + d;
                cv[q] = (s - v[q]) - d;
                v[q] = s;
                wu += a->m[q / 3] * 0.5 * (v0 + v[q]) * acc[q];
            }
            W += dk * wu;
        }
        y->y[6 * n + 2] = W;
        a->kicks++;
    }
}

/* One extrapolated step of H from *y into *out: 0 when the extrapolations
 * agreed within a->tol (*kused the column), else -1; *err the estimate. */
static int gbs_step(orr_ar *a, const vec *y, double H, vec *out, int *kused, double *errest)
{
    vec table[KMAX];
    const int m = ny(a), n = a->n;
    /* the scales: positions by the largest separation from the centre,
     * velocities by the largest speed, the time by the step's length */
    double xs = 0, vs = 0;
    for (int q = 0; q < 3 * n; q++) {
        xs = fmax(xs, fabs(y->y[q]));
        vs = fmax(vs, fabs(y->y[3 * n + q]));
    }
    xs = xs > 0 ? xs : 1, vs = vs > 0 ? vs : 1;
    for (int k = 0; k < KMAX; k++) {
        const int nk = 2 * (k + 1);
        table[k] = *y;
        leapfrog(a, &table[k], H, nk);
        /* Aitken-Neville in h^2: table[k - j] is column j of row k */
        for (int j = 1; j <= k; j++) {
            const int nj = 2 * (k - j + 1);
            const double r = (double)nk * nk / ((double)nj * nj) - 1;
            for (int q = 0; q < m; q++)
                table[k - j].y[q] = table[k - j + 1].y[q] + (table[k - j + 1].y[q] -
                                                              table[k - j].y[q]) / r;
        }
        if (k >= 2) {   /* the last two extrapolations: table[0] (column k) and before */
            double e = 0;
            const double ts = fabs(table[0].y[6 * n]);   /* the step's time (from 0) */
            for (int q = 0; q < 3 * n; q++) {
                e = fmax(e, fabs(table[0].y[q] - table[1].y[q]) / xs);
                e = fmax(e, fabs(table[0].y[3 * n + q] - table[1].y[3 * n + q]) / vs);
            }
            e = fmax(e, fabs(table[0].y[6 * n] - table[1].y[6 * n]) / (ts > 0 ? ts : 1));
            *errest = e;
            if (e <= a->tol) {
                *out = table[0];
                *kused = k;
                return 0;
            }
        }
    }
    /* the last column still apart by no more than rounding allows (with a
     * perturbation, its kicks' work on B and the tides' own rounding leave
     * a floor near 1e-14): taken */
    if (*errest <= ROUNDING_FLOOR) {
        *out = table[0];
        *kused = KMAX - 1;
        return 0;
    }
    return -1;
}

orr_status orr_ar_init(orr_ar *a, int n, double G, const double *m, const double *pos,
                       const double *vel, double t, orr_error *err)
{
    memset(a, 0, sizeof *a);
    if (n < 2 || n > ORR_AR_MAX)
        return orr_fail(err, ORR_ERR_ARG, "regularised group: 2 to %d bodies (got %d)",
                        ORR_AR_MAX, n);
    if (!(G > 0) || !isfinite(G))
        return orr_fail(err, ORR_ERR_ARG, "regularised group: G must be positive (got %g)", G);
    if (!isfinite(t))
        return orr_fail(err, ORR_ERR_ARG, "regularised group: the time must be finite");
    double M = 0;
    for (int i = 0; i < n; i++) {
        if (!(m[i] > 0) || !isfinite(m[i]))
            return orr_fail(err, ORR_ERR_ARG, "regularised group: body %d's mass must be "
                            "positive (got %g)", i + 1, m[i]);
        for (int k = 0; k < 3; k++)
            if (!isfinite(pos[3 * i + k]) || !isfinite(vel[3 * i + k]))
                return orr_fail(err, ORR_ERR_ARG, "regularised group: body %d's position and "
                                "velocity must be finite", i + 1);
        M += m[i];
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (pos[3 * i] == pos[3 * j] && pos[3 * i + 1] == pos[3 * j + 1] &&
                pos[3 * i + 2] == pos[3 * j + 2])
                return orr_fail(err, ORR_ERR_ARG, "regularised group: bodies %d and %d are at "
                                "the same place", i + 1, j + 1);
    a->n = n;
    a->G = G;
    a->t = t;
    a->tol = 1e-14;
    for (int i = 0; i < n; i++) {
        a->m[i] = m[i];
        for (int k = 0; k < 3; k++) {
            a->com_x[k] += m[i] * pos[3 * i + k] / M;
            a->com_v[k] += m[i] * vel[3 * i + k] / M;
        }
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            a->x[i][k] = pos[3 * i + k] - a->com_x[k];
            a->v[i][k] = vel[3 * i + k] - a->com_v[k];
        }
    a->B = -orr_ar_energy(a);
    return ORR_OK;
}

double orr_ar_energy(const orr_ar *a)
{
    return kinetic(a, &a->v[0][0]) - force(a, &a->x[0][0], NULL);
}

void orr_ar_state(const orr_ar *a, double *pos, double *vel)
{
    for (int i = 0; i < a->n; i++)
        for (int k = 0; k < 3; k++) {
            pos[3 * i + k] = a->x[i][k] + a->com_x[k];
            vel[3 * i + k] = a->v[i][k] + a->com_v[k];
        }
}

/* The group's state into y; its U returned, its own pull into acc. */
static double load(const orr_ar *a, vec *y, double *acc)
{
    const int n = a->n;
    memcpy(y->y, a->x, sizeof(double) * 3 * (size_t)n);
    memcpy(y->y + 3 * n, a->v, sizeof(double) * 3 * (size_t)n);
    y->y[6 * n] = 0;
    y->y[6 * n + 1] = a->B;
    return y->y[6 * n + 2] = force(a, y->y, acc);   /* W = T + B = U on the orbit */
}

static void store(orr_ar *a, const vec *y)
{
    const int n = a->n;
    const double dt = y->y[6 * n];
    for (int k = 0; !a->perturb && k < 3; k++)   /* the centre of mass goes on uniformly */
        a->com_x[k] += a->com_v[k] * dt;
    a->B = y->y[6 * n + 1];
    memcpy(a->x, y->y, sizeof(double) * 3 * (size_t)n);
    memcpy(a->v, y->y + 3 * n, sizeof(double) * 3 * (size_t)n);
    const double dk = dt - a->tc, sum = a->t + dk;   /* compensated (Kahan) */
    a->tc = (sum - a->t) - dk;
    a->t = sum;
    /* the energy held at -B: the velocities scaled so that T = U - B.  At a
     * pericentre of e = 0.99, T and U are 200 times |E|, and each step's
     * rounding of the state would change E by that much more than its own
     * rounding: 1e-9 over 1e4 orbits, 1e-13 with this.  Not where T is
     * below 1e-4 of U: U - B, the difference of two numbers far larger than
     * T, carries eps U / T of itself (bodies released from rest: their
     * velocities 4.4e-5 off after 1e-6 of the time), and the scale as much */
    const double u = force(a, &a->x[0][0], NULL), k = kinetic(a, &a->v[0][0]);
    if (u - a->B > 0 && k > 1e-4 * u) {
        const double f = sqrt((u - a->B) / k);
        for (int i = 0; i < n; i++)
            for (int q = 0; q < 3; q++)
                a->v[i][q] *= f;
    }
}

/* The shortest time of the group's pairs at state y: the least of their
 * distances over their relative speeds and their free-fall times (bodies
 * at rest have the second alone). */
static double shortest_time(const orr_ar *a, const double *y)
{
    const int n = a->n;
    double tau = INFINITY;
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            double r2 = 0, v2 = 0;
            for (int q = 0; q < 3; q++) {
                const double d = y[3 * j + q] - y[3 * i + q],
                             u = y[3 * n + 3 * j + q] - y[3 * n + 3 * i + q];
                r2 += d * d, v2 += u * u;
            }
            tau = fmin(tau, fmin(sqrt(r2 / v2), sqrt(r2 * sqrt(r2) / (a->G * (a->m[i] + a->m[j])))));
        }
    return tau;
}

/* y moved on by dt along its motion to second order (x + v dt + a dt^2 /
 * 2, v + a dt, a the group's own pull and the perturbation's, whose work
 * goes into B), its time with it: for the last part of a landing, |dt|
 * below 1e-8 of the shortest time of its pairs (the terms left out below
 * 1e-16 of it).  Newton's trials towards a block's time end a trial
 * sooner: the third of a landing in a collapsing core only took |t -
 * t_end| from 1e-10 of the advance to its rounding.  (Without the tides
 * here, a perturbed binary's 1000 advances of 1.5% of its period strayed
 * 1e-8 of its size from one advance: a breaker's harness.) */
static void shift(const orr_ar *a, vec *y, double dt)
{
    const int n = a->n;
    double acc[3 * ORR_AR_MAX];
    force(a, y->y, acc);
    if (a->perturb) {
        double f[3 * ORR_AR_MAX], w = 0;
        a->perturb(a->perturb_ctx, (a->t - a->tc) + y->y[6 * n], a, y->y, f);
        for (int q = 0; q < 3 * n; q++) {
            w += a->m[q / 3] * y->y[3 * n + q] * f[q];
            acc[q] += f[q];
        }
        y->y[6 * n + 1] -= w * dt;
    }
    for (int q = 0; q < 3 * n; q++) {
        y->y[q] += (y->y[3 * n + q] + 0.5 * acc[q] * dt) * dt;
        y->y[3 * n + q] += acc[q] * dt;
    }
    y->y[6 * n] += dt;
}

/* One accepted step of at most H (smaller where the extrapolation does not
 * converge): *y advanced, *taken the s it took; the next step's s into
 * a->ds. */
static orr_status step(orr_ar *a, vec *y, double H, double *taken, orr_error *err)
{
    for (int tries = 0; tries < 60; tries++) {
        vec out;
        int k = 0;
        double e = 0;
        if (gbs_step(a, y, H, &out, &k, &e) == 0) {
            *y = out;
            *taken = H;
            a->steps++;
            /* aim at convergence in about 6 columns */
            a->ds = H * (k < 5 ? 1.5 : k > 6 ? 0.7 : 1.0);
            return ORR_OK;
        }
        a->rejected++;
        H *= 0.5;
    }
    return orr_fail(err, ORR_ERR_ARG, "regularised group: the steps did not converge at t = %g "
                    "(a collision?)", a->t);
}

orr_status orr_ar_advance(orr_ar *a, double t_end, orr_error *err)
{
    if (!(t_end >= a->t) || !isfinite(t_end))
        return orr_fail(err, ORR_ERR_ARG, "regularised group: cannot advance to %g from %g",
                        t_end, a->t);
    vec y;
    const int n = a->n, it = 6 * n;
    if (!(a->ds > 0)) {   /* a first step: a small part of the closest pair's time */
        const double k = kinetic(a, &a->v[0][0]);
        double rmin = INFINITY;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                double d2 = 0;
                for (int q = 0; q < 3; q++)
                    d2 += (a->x[j][q] - a->x[i][q]) * (a->x[j][q] - a->x[i][q]);
                rmin = fmin(rmin, sqrt(d2));
            }
        /* dt ~ 0.05 of the closest pair's dynamical time, ds = dt (T + B)
         * (unbound: = dt U, without T + B's cancellation) */
        double M = 0;
        for (int i = 0; i < n; i++)
            M += a->m[i];
        const double tdyn = sqrt(rmin * rmin * rmin / (a->G * M));
        a->ds = 0.05 * tdyn * (a->B < 0 ? force(a, &a->x[0][0], NULL) : k + a->B);
    }
    orr_status st = ORR_OK;
    int retries = 0, again = 0, still = 0, stepped = 0;
    while (!st && a->t < t_end) {
        double acc[3 * ORR_AR_MAX], ud = 0;   /* U and dU/dt = sum m acc . v at the start */
        const double u0 = load(a, &y, acc), want = (t_end - a->t) + a->tc;
        vec trial = y;
        double taken = INFINITY;
        /* an end nearer than a step's reach (at ds / U, U at the start) and
         * the orbit bending little on the way (dU/dt (t_end - t) < U / 10):
         * no step first, the landing's trials from here (Newton's method
         * from s = 0); else a step, and the landing where it went past
         * t_end.  A block's advance of a pair is most often a small part of
         * its step: the binary's centre of a collapsing core (N = 4096 at t
         * = 880, 0.1 time units, 2475 advances) had 2804 steps, 2475 of
         * them past their end, then 8687 landing trials; 4.6 extrapolated
         * steps and 144 force evaluations an advance, 2.8 and 85 now (with
         * the second-order first trial and the last part moved, below) */
        for (int q = 0; q < 3 * n; q++)
            ud += a->m[q / 3] * acc[q] * y.y[3 * n + q];
        if (stepped || !(want * u0 < a->ds) || !(fabs(ud) * want < 0.1 * u0)) {
            stepped = 0;
            st = step(a, &trial, a->ds, &taken, err);
            if (st)
                break;
        }
        if (isfinite(taken) && trial.y[it] <= want) {
            const double t_was = a->t;
            store(a, &trial);
            /* steps that no longer move the time (below its rounding) would
             * never reach t_end: said, not a hang (a cancellation in the
             * drift's T + B once made them so) */
            if (!(a->t > t_was) && ++still >= 1000)
                st = orr_fail(err, ORR_ERR_ARG, "regularised group: its steps no longer move "
                              "its time (t = %.17g, steps of %.3g in s, t_end %.17g)", a->t,
                              taken, t_end);
            else if (a->t > t_was)
                still = 0;
            continue;
        }
        /* past t_end: the s that lands on it, found inside the bracket
         * [0, taken] by Newton's method on t(s), whose slope dt/ds is 1 / U
         * (the drift's 1 / (T + B), T + B = U on the orbit) at the state a
         * trial reached, from the bracket's end nearer in time; where that
         * leaves the bracket, false position (the Illinois rule: the end
         * that stays has its value halved), as also after a Newton step
         * that did not halve |t - t_end| (near the rounding of t, Newton's
         * steps stall).  Newton's method took 3.5 trial steps a landing
         * where false position alone took 6.0 (a hard binary in a cluster's
         * core) */
        double s0 = 0, t0 = -want, s1 = taken,
               t1 = isfinite(taken) ? trial.y[it] - want : INFINITY;   /* (no step: no end above) */
        const int lower = fabs(t0) < fabs(t1);   /* the nearer end in time */
        double sn = lower ? s0 : s1, tn = lower ? t0 : t1,
               un = lower ? u0 : force(a, trial.y, NULL);
        int side = 0, newton = 1, stale = 0, found = isfinite(taken);
        vec best = trial;
        double tbest = isfinite(taken) ? t1 : t0;
        for (int k = 0; k < 100 && !st; k++) {
            double s2 = sn - tn * un;   /* Newton from the last trial (first: the nearer end) */
            /* from the start, to second order: dt/ds = 1 / U (= 1 / (T + B)
             * on the orbit) and d2t/ds2 = -dU/dt / U^3, so t = want at s =
             * want U + want^2 dU/dt / 2 (the first trial's |t - t_end| 2e-4
             * of the advance where the first order left 5e-4 to 7e-3) */
            if (k == 0 && lower) {
                const double s2b = s2 + 0.5 * ud * want * want;
                s2 = s2b > 0 ? s2b : s2;
            }
            /* no end above yet (every trial fell short, and Newton's step
             * from one is longer): Newton's steps where they converge fast,
             * within a step's reach; else (an end past a close pericentre:
             * t(s) bends too much) a step first, as for a far end */
            if (!isfinite(s1) && (k >= 3 || !(s2 <= a->ds) || (k > 0 && !newton))) {
                stepped = 1;
                break;
            }
            if (isfinite(s1) && (!newton || !(s2 > s0 && s2 < s1) || !(un > 0))) {
                s2 = (s0 * t1 - s1 * t0) / (t1 - t0);
                if (!(s2 > s0 && s2 < s1))
                    s2 = 0.5 * (s0 + s1);
            }
            /* no s left between the ends, or, once the closest |t - t_end|
             * is below 1e-10 of the span, three trials in a row that did
             * not halve it: the closest trial is as near as t's rounding
             * lets it come (a pericentre of 1e-5 left |t - t_end| at 1e-16,
             * far above the ulps of t_end, and the trials went on to the
             * hundredth: 20 s for one orbit) */
            if (!(s2 > s0 && s2 < s1) || stale >= 3)
                break;
            vec z = y;
            int kk = 0;
            double e = 0;
            if (gbs_step(a, &y, s2, &z, &kk, &e) != 0) {
                /* no convergence inside the bracket (near a close pericentre):
                 * the steps towards t_end begin again from here, shorter */
                if (++retries > 60)
                    st = orr_fail(err, ORR_ERR_ARG, "regularised group: the last step to t = "
                                  "%g did not converge", t_end);
                a->ds = fmin(a->ds, 0.5 * s2);
                stepped = !isfinite(taken);   /* (from the start: a step first) */
                again = 1;
                break;
            }
            const double t2 = z.y[it] - want;
            stale = fabs(t2) < 0.5 * fabs(tbest) || fabs(tbest) > 1e-10 * want ? 0 : stale + 1;
            if (fabs(t2) <= fabs(tbest))
                best = z, tbest = t2, found = 1;
            if (t2 == 0 || fabs(t2) <= 4 * 2.3e-16 * fmax(fabs(t_end), 1e-300) || s1 - s0 <= 0)
                break;
            if (fabs(tbest) <= 1e-8 * shortest_time(a, best.y)) {   /* moved the rest of the way */
                shift(a, &best, -tbest);
                break;
            }
            newton = fabs(t2) < 0.5 * fabs(tn);
            sn = s2, tn = t2, un = force(a, z.y, NULL);
            if ((t2 < 0) == (t0 < 0)) {   /* s2 replaces the lower end */
                s0 = s2, t0 = t2;
                if (side == -1)
                    t1 *= 0.5;
                side = -1;
            } else {
                s1 = s2, t1 = t2;
                if (side == 1)
                    t0 *= 0.5;
                side = 1;
            }
        }
        if (st)
            break;
        if (again) {
            again = 0;
            continue;
        }
        if (stepped || !found) {   /* the end too far for Newton's steps from the start (or
                                     no trial nearer than it): a step first */
            stepped = 1;
            continue;
        }
        store(a, &best);
        a->t = t_end, a->tc = 0;   /* within rounding of it */
        a->steps++;
    }
    return st;
}
