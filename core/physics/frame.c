/* frame: the centre of a frame that follows a cluster, its orbit in the
 * external fields integrated in double (frame.h). */
#include "frame.h"
#include "engine.h"
#include "kspec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS_PER_TAU 1024.0   /* the default step: the dynamical time / this */
#define MAX_STEP_SHARE 16.0    /* a given step at most the dynamical time / this */
#define MAX_STEPS 1e9          /* steps to reach a time at most (a step far too small) */
#define KEEP 4096              /* nodes kept behind the latest time asked for */

typedef struct {
    double t, x[3], v[3], a[3];
} node;

struct orr_frame {
    orr_fieldset fields;   /* the frame's copy (no frame of their own) */
    orr_engine *e;         /* one body, CPU, double */
    double h;              /* the orbit's step */
    int given;             /* h was given (else each node's step is its dynamical
                              time's share) */
    double latest;         /* the latest time asked for: nodes well before it go */
    int planar;            /* in the plane z = 0 (dims 2): no z acceleration */
    node *nodes;           /* nodes[0 .. count), h apart, increasing */
    long count, cap;
    char error[256];       /* orr_frame_slots' first failure */
};

/* The fields' acceleration at x, time t. */
static orr_status accel(orr_frame *f, double t, const double x[3], double a[3], orr_error *err)
{
    const double pos[4] = {x[0], x[1], x[2], 0};
    const double vel[3] = {0, 0, 0};
    orr_engine_set_time(f->e, t, 0);
    orr_status st = orr_engine_set_state(f->e, pos, vel, err);
    if (!st)
        st = orr_engine_accel(f->e, a, err);
    if (!st && f->planar)   /* in the plane (dims 2), as the bodies: no z */
        a[2] = 0;
    if (!st && !(isfinite(a[0]) && isfinite(a[1]) && isfinite(a[2])))
        st = orr_fail(err, ORR_ERR_ARG, "frame: the fields' acceleration at its centre (%.17g, "
                      "%.17g, %.17g), time %.17g, is not finite", x[0], x[1], x[2], t);
    return st;
}

/* One Runge-Kutta step of dt from n to *out (its acceleration too). */
static orr_status rk4(orr_frame *f, const node *n, double dt, node *out, orr_error *err)
{
    double k1x[3], k1v[3], k2x[3], k2v[3], k3x[3], k3v[3], k4x[3], k4v[3], y[3];
    for (int d = 0; d < 3; d++)
        k1x[d] = n->v[d], k1v[d] = n->a[d], y[d] = n->x[d] + 0.5 * dt * k1x[d];
    orr_status st = accel(f, n->t + 0.5 * dt, y, k2v, err);
    for (int d = 0; !st && d < 3; d++)
        k2x[d] = n->v[d] + 0.5 * dt * k1v[d], y[d] = n->x[d] + 0.5 * dt * k2x[d];
    if (!st)
        st = accel(f, n->t + 0.5 * dt, y, k3v, err);
    for (int d = 0; !st && d < 3; d++)
        k3x[d] = n->v[d] + 0.5 * dt * k2v[d], y[d] = n->x[d] + dt * k3x[d];
    if (!st)
        st = accel(f, n->t + dt, y, k4v, err);
    if (st)
        return st;
    out->t = n->t + dt;
    for (int d = 0; d < 3; d++) {
        k4x[d] = n->v[d] + dt * k3v[d];
        out->x[d] = n->x[d] + dt / 6 * (k1x[d] + 2 * k2x[d] + 2 * k3x[d] + k4x[d]);
        out->v[d] = n->v[d] + dt / 6 * (k1v[d] + 2 * k2v[d] + 2 * k3v[d] + k4v[d]);
    }
    return accel(f, out->t, out->x, out->a, err);
}

/* The quintic on [a.t, a.t + h] matching x, v and acceleration at both
 * ends, as coefficients c[d][0..5] of (t - a.t)^k per axis. */
static void quintic(const node *a, const node *b, double c[3][6])
{
    const double h = b->t - a->t;
    for (int d = 0; d < 3; d++) {
        c[d][0] = a->x[d];
        c[d][1] = a->v[d];
        c[d][2] = 0.5 * a->a[d];
        if (!(h != 0)) {
            c[d][3] = c[d][4] = c[d][5] = 0;
            continue;
        }
        const double P = b->x[d] - (a->x[d] + h * (a->v[d] + h * 0.5 * a->a[d])),
                     W = (b->v[d] - (a->v[d] + h * a->a[d])) * h, Q = (b->a[d] - a->a[d]) * h * h;
        const double x3 = 10 * P - 4 * W + 0.5 * Q, x4 = -15 * P + 7 * W - Q,
                     x5 = 6 * P - 3 * W + 0.5 * Q;
        c[d][3] = x3 / (h * h * h);
        c[d][4] = x4 / (h * h * h * h);
        c[d][5] = x5 / (h * h * h * h * h);
    }
}

static int grow(orr_frame *f, long want)
{
    if (want <= f->cap)
        return 0;
    long cap = f->cap ? 2 * f->cap : 64;
    while (cap < want)
        cap *= 2;
    node *n = realloc(f->nodes, sizeof *n * (size_t)cap);
    if (!n)
        return -1;
    f->nodes = n;
    f->cap = cap;
    return 0;
}

/* The centre's dynamical time at node n: the smaller of sqrt(|R| / |a|)
 * and |V| / |a| (infinite without an acceleration). */
static double tau_at(const node *n)
{
    const double r = sqrt(n->x[0] * n->x[0] + n->x[1] * n->x[1] + n->x[2] * n->x[2]),
                 v = sqrt(n->v[0] * n->v[0] + n->v[1] * n->v[1] + n->v[2] * n->v[2]),
                 a = sqrt(n->a[0] * n->a[0] + n->a[1] * n->a[1] + n->a[2] * n->a[2]);
    double tau = INFINITY;
    if (a > 0 && r > 0)
        tau = sqrt(r / a);
    if (a > 0 && v > 0 && v / a < tau)
        tau = v / a;
    return tau;
}

/* The step from node n: the given one, or its dynamical time's share
 * (tau_at / STEPS_PER_TAU), so that an eccentric orbit takes short steps
 * near its pericentre; f->h where that time is not defined. */
static double step_at(const orr_frame *f, const node *n)
{
    if (f->given)
        return f->h;
    const double tau = tau_at(n);
    return isfinite(tau) ? tau / STEPS_PER_TAU : f->h;
}

/* One node from n by a step of h (signed) into *out, refused where the
 * step no longer moves the time (t + h == t: a step below the clock's
 * resolution there). */
static orr_status next_node(orr_frame *f, const node *n, double h, node *out, orr_error *err)
{
    if (n->t + h == n->t)
        return orr_fail(err, ORR_ERR_ARG, "frame: its step %g is below the time's resolution "
                        "at t = %g (give a larger frame.step)", fabs(h), n->t);
    return rk4(f, n, h, out, err);
}

/* Refuses to go from node n to time t where that would take more than
 * MAX_STEPS steps of h. */
static orr_status too_far(const node *n, double t, double h, orr_error *err)
{
    if (fabs(t - n->t) > MAX_STEPS * fabs(h))
        return orr_fail(err, ORR_ERR_ARG, "frame: reaching t = %g from %g would take more than "
                        "%g steps of %g (a step far too small for the run?)", t, n->t,
                        MAX_STEPS, fabs(h));
    return ORR_OK;
}

/* Nodes made (or kept) so that t lies within them: its interval's first
 * node index into *k. */
static orr_status reach(orr_frame *f, double t, long *k, orr_error *err)
{
    if (!isfinite(t))
        return orr_fail(err, ORR_ERR_ARG, "frame: time %g is not finite", t);
    orr_status st = ORR_OK;
    while (!st && t < f->nodes[0].t) {   /* before the first: backwards, prepended */
        if (grow(f, f->count + 1))
            return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        node n;
        const double h = step_at(f, &f->nodes[0]);
        st = too_far(&f->nodes[0], t, h, err);
        if (!st)
            st = next_node(f, &f->nodes[0], -h, &n, err);
        if (!st) {
            memmove(f->nodes + 1, f->nodes, sizeof *f->nodes * (size_t)f->count);
            f->nodes[0] = n;
            f->count++;
        }
    }
    while (!st && t > f->nodes[f->count - 1].t) {   /* beyond the last: onwards */
        if (f->count > 2 * KEEP && f->nodes[KEEP].t < f->latest) {   /* drop the oldest */
            memmove(f->nodes, f->nodes + KEEP, sizeof *f->nodes * (size_t)(f->count - KEEP));
            f->count -= KEEP;
        }
        if (grow(f, f->count + 1))
            return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        const node *last = &f->nodes[f->count - 1];
        const double h = step_at(f, last);
        st = too_far(last, t, h, err);
        if (!st)
            st = next_node(f, last, h, &f->nodes[f->count], err);
        if (!st)
            f->count++;
    }
    if (st)
        return st;
    long lo = 0, hi = f->count - 1;   /* the last node at or before t (nodes increase) */
    while (hi - lo > 1) {
        const long mid = lo + (hi - lo) / 2;
        if (f->nodes[mid].t <= t)
            lo = mid;
        else
            hi = mid;
    }
    *k = lo < f->count - 1 ? lo : f->count - 2 > 0 ? f->count - 2 : 0;
    if (t > f->latest)
        f->latest = t;
    return ORR_OK;
}

orr_status orr_frame_at(orr_frame *f, double t, double R[3], double V[3], double A[3],
                        orr_error *err)
{
    long k = 0;
    orr_status st = reach(f, t, &k, err);
    if (st)
        return st;
    if (f->count == 1) {
        for (int d = 0; d < 3; d++) {
            if (R)
                R[d] = f->nodes[0].x[d];
            if (V)
                V[d] = f->nodes[0].v[d];
            if (A)
                A[d] = f->nodes[0].a[d];
        }
        return ORR_OK;
    }
    double c[3][6], Rt[3];
    quintic(&f->nodes[k], &f->nodes[k + 1], c);
    const double s = t - f->nodes[k].t;
    R = R ? R : Rt;
    for (int d = 0; d < 3; d++) {
        const double *q = c[d];
        R[d] = q[0] + s * (q[1] + s * (q[2] + s * (q[3] + s * (q[4] + s * q[5]))));
        if (V)
            V[d] = q[1] + s * (2 * q[2] + s * (3 * q[3] + s * (4 * q[4] + s * 5 * q[5])));
    }
    /* the field's at R (the interpolant's second derivative would carry
     * the rounding of positions h apart, eps |R| / h^2: 1e-9 relative) */
    return A ? accel(f, t, R, A, err) : ORR_OK;
}

void orr_frame_slots(void *ctx, double t0, double span, double *slots)
{
    orr_frame *f = ctx;
    node a = {t0, {0}, {0}, {0}}, b = {t0 + span, {0}, {0}, {0}};
    orr_error e = {0};
    /* the accelerations (a field evaluation each) only where a span needs
     * them: a fixed step's launches take the centre and its velocity alone */
    orr_status st = orr_frame_at(f, t0, a.x, a.v, span > 0 ? a.a : NULL, &e);
    if (!st && span > 0)
        st = orr_frame_at(f, b.t, b.x, b.v, b.a, &e);
    double c[3][6];
    if (!st && span > 0) {
        quintic(&a, &b, c);
    } else {
        for (int d = 0; d < 3; d++) {   /* one time: where the centre is, and its velocity */
            c[d][0] = a.x[d];
            c[d][1] = a.v[d];
            c[d][2] = c[d][3] = c[d][4] = c[d][5] = 0;
        }
    }
    slots[0] = t0;
    for (int d = 0; d < 3; d++)
        for (int q = 0; q <= ORR_FRAME_DEGREE; q++)
            slots[1 + d * (ORR_FRAME_DEGREE + 1) + q] = st ? NAN : c[d][q];
    if (st && !f->error[0]) {   /* the message, cut to fit */
        const size_t len = strnlen(e.msg, sizeof f->error - 1);
        memcpy(f->error, e.msg, len);
        f->error[len] = '\0';
    }
    orr_error_clear(&e);
}

int orr_frame_take_error(orr_frame *f, char *buf, size_t size)
{
    if (!f->error[0])
        return 0;
    snprintf(buf, size, "%s", f->error);
    f->error[0] = '\0';
    return 1;
}

orr_status orr_frame_nodes(const orr_frame *f, double **out, long *count, orr_error *err)
{
    double *d = malloc(sizeof(double) * ORR_FRAME_NODE * (size_t)(f->count > 0 ? f->count : 1));
    if (!d)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    for (long k = 0; k < f->count; k++) {
        const node *n = &f->nodes[k];
        double *q = d + ORR_FRAME_NODE * k;
        q[0] = n->t;
        memcpy(q + 1, n->x, sizeof n->x);
        memcpy(q + 4, n->v, sizeof n->v);
        memcpy(q + 7, n->a, sizeof n->a);
    }
    *out = d;
    *count = f->count;
    return ORR_OK;
}

orr_status orr_frame_set_nodes(orr_frame *f, const double *nodes, long count, orr_error *err)
{
    if (count < 1)
        return orr_fail(err, ORR_ERR_ARG, "frame: no nodes to restore");
    for (long k = 0; k < count; k++) {
        for (int q = 0; q < ORR_FRAME_NODE; q++)
            if (!isfinite(nodes[ORR_FRAME_NODE * k + q]))
                return orr_fail(err, ORR_ERR_ARG, "frame: node %ld is not finite", k);
        if (k > 0 && !(nodes[ORR_FRAME_NODE * k] > nodes[ORR_FRAME_NODE * (k - 1)]))
            return orr_fail(err, ORR_ERR_ARG, "frame: its nodes' times do not increase (node %ld)",
                            k);
    }
    if (grow(f, count))
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    for (long k = 0; k < count; k++) {
        node *n = &f->nodes[k];
        const double *q = nodes + ORR_FRAME_NODE * k;
        n->t = q[0];
        memcpy(n->x, q + 1, sizeof n->x);
        memcpy(n->v, q + 4, sizeof n->v);
        memcpy(n->a, q + 7, sizeof n->a);
    }
    f->count = count;
    f->latest = nodes[ORR_FRAME_NODE * (count - 1)];
    f->error[0] = '\0';
    return ORR_OK;
}

double orr_frame_step(const orr_frame *f)
{
    return f->h;
}

/* The orbit afresh from (t, R, V). */
static orr_status restart(orr_frame *f, double t, const double R[3], const double V[3],
                          orr_error *err)
{
    if (grow(f, 1))
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    node *n = &f->nodes[0];
    n->t = t;
    memcpy(n->x, R, sizeof n->x);
    memcpy(n->v, V, sizeof n->v);
    f->count = 1;
    return accel(f, t, n->x, n->a, err);
}

orr_status orr_frame_set_field_runtime(orr_frame *f, const double *fv, double t,
                                       orr_error *err)
{
    double R[3], V[3];
    orr_status st = orr_frame_at(f, t, R, V, NULL, err);
    if (st)
        return st;
    orr_engine_set_field_runtime(f->e, fv);
    return restart(f, t, R, V, err);
}

orr_status orr_frame_create(orr_frame **out, const orr_fieldset *fields, const double *fv,
                            double G, double t, const double R[3], const double V[3], double h,
                            orr_error *err)
{
    *out = NULL;
    for (int d = 0; d < 3; d++)
        if (!isfinite(R[d]) || !isfinite(V[d]))
            return orr_fail(err, ORR_ERR_ARG, "frame: its centre and velocity must be finite "
                            "(got (%g, %g, %g) and (%g, %g, %g))", R[0], R[1], R[2], V[0], V[1],
                            V[2]);
    if (!(h >= 0) || !isfinite(h))
        return orr_fail(err, ORR_ERR_ARG, "frame: step must be positive (got %g)", h);
    if (!fields || fields->n == 0)
        return orr_fail(err, ORR_ERR_ARG, "frame: there are no fields for its centre to move in");
    orr_frame *f = calloc(1, sizeof *f);
    if (!f)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    orr_status st = orr_fieldset_copy(&f->fields, fields, err);
    f->planar = fields->planar;
    if (!st && f->planar && (R[2] != 0 || V[2] != 0))
        st = orr_fail(err, ORR_ERR_ARG, "frame: in the plane (dims 2) its centre and velocity "
                      "must have z = 0 (got %g and %g)", R[2], V[2]);
    f->fields.frame = 0;
    f->fields.planar = 0;
    orr_kspec spec;
    orr_kspec_default(&spec, ORR_TARGET_CPU);
    spec.phys.precision = ORR_DOUBLE;
    spec.phys.softening = 0;
    spec.phys.G = G;
    spec.phys.fields = &f->fields;
    spec.launch.threads = 1;
    if (!st)
        st = orr_engine_create(&f->e, ORR_BACKEND_CPU, &spec, ORR_VARIANT_TILED, 1, 0, NULL, 0,
                               err);
    if (!st) {
        orr_engine_set_field_runtime(f->e, fv);
        f->h = 1;   /* until the first node says better */
        st = restart(f, t, R, V, err);
    }
    f->given = h > 0;
    const double tau = st ? 0 : tau_at(&f->nodes[0]);
    if (!st && h == 0 && !isfinite(tau))
        st = orr_fail(err, ORR_ERR_ARG, "frame: the fields give its centre no acceleration "
                      "(at (%g, %g, %g)): give it a step", R[0], R[1], R[2]);
    if (!st && h > tau / MAX_STEP_SHARE)
        st = orr_fail(err, ORR_ERR_ARG, "frame: step %g is more than 1/%g of the centre's "
                      "dynamical time there (%g): its orbit would be wrong (the default is 1/%g "
                      "of it, made again at every step)", h, MAX_STEP_SHARE, tau,
                      STEPS_PER_TAU);
    if (!st && h == 0)
        h = tau / STEPS_PER_TAU;
    if (st) {
        orr_frame_destroy(f);
        return st;
    }
    f->h = h;
    *out = f;
    return ORR_OK;
}

void orr_frame_destroy(orr_frame *f)
{
    if (!f)
        return;
    orr_engine_destroy(f->e);
    orr_fieldset_free(&f->fields);
    free(f->nodes);
    free(f);
}
