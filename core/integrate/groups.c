/* groups: regularised close pairs and compact groups inside the Hermite
 * block steps (groups.h). */
#include "groups.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GHOST_AT 1e18   /* a ghost's position on every axis: no force reaches it */
/* Perturbers whose tide is above this are summed member by member; the
 * others' tide is their tidal tensor (the octupole left out is below
 * GAMMA_NEAR / 27 of the group's own force) */
#define GAMMA_NEAR 1e-4
/* A group under a tide above this comes apart: the group is too open to
 * be one (tested: N = 64 clusters keep their energy as well as without
 * groups at 0.1, not at 0.25; without this rule they lose 20-40% of it by
 * t = 60) */
#define GAMMA_APART 0.1
/* and forms only under a tide of at most this (hysteresis) */
#define GAMMA_FORM 0.05
/* A group under a tide above GAMMA_STEP: its centre's steps at most
 * STEP_FRACTION of its internal time and of its tide's (the tides on the
 * centre change with the members' motion and with the perturbers', which
 * the centre's steps must follow), and under a tide above GAMMA_STRONG
 * less by sqrt(GAMMA_STRONG / gamma): the members and their perturbers see
 * each other along predictions over a centre's step, whose errors grow as
 * gamma (step / time)^2 (seed 5 of the N = 64 clusters lost 9.3e-5 of the
 * energy in one interval so, a hyperbolic pair among 40 perturbers parted
 * under a tide of 0.12 after steps of 0.05 of its time; 4.4e-8 with this,
 * the same blocks) */
#define GAMMA_STEP 1e-4
#define GAMMA_STRONG 1e-2
#define STEP_FRACTION 0.1
/* Under any tide, its centre's steps at most PASS_FRACTION (at eta =
 * PASS_ETA; as sqrt(eta), as Aarseth's criterion's steps go) of the time
 * its nearest perturbers take to pass (each near one's distance over its
 * speed, and its free-fall time): else a perturber whose tide is below
 * GAMMA_STEP where the centre steps, or whose pulls on the centre cancel
 * another's (then the centre's own criterion sees only rounding: the
 * noise floor), comes in, or passes, within one of its steps, the members
 * moved on with tides that have changed.  A binary (a = 0.01, e = 0.3)
 * between two bodies passing point-symmetrically, against
 * orrery.fewbody: with half the passage time, e off by 4.4e-4 (bodies of
 * 0.1 at speed 2) and 5e-5 (0.01 at speed 1), the same at eta 0.002; with
 * this, 1.4e-7 and 2.5e-6, and 4.9e-8 and 1.4e-6 at eta 0.002 (the rest
 * is the tides below gamma left out: 1.3e-8 with gamma 1e-8). */
#define PASS_FRACTION 0.1
#define PASS_ETA 0.02
/* A bound pair within r_close whose pericentre is within this fraction of
 * r_close is tight (tight()) */
#define TIGHT_FRACTION 0.25

typedef struct {
    int n;
    long mem[ORR_AR_MAX];   /* ascending: mem[0] holds the centre of mass */
    orr_ar ar;              /* the members about the centre; ar.t the group's time */
    long *pert, npert, cap; /* its perturbers: the first nnear near ones, whose pull on
                               each member is summed, then the far ones, whose tide is
                               the tidal tensor at the centre (T0 at t0, T1 at t1 of an
                               advance, linear between) */
    long nnear;
    double R;               /* the perturbers' distance from the centre, as last listed */
    int born;               /* formed in this orr_groups_update */
    long long ready;        /* a fast pair moved on to its centre's next block, at this tick
                               (orr_groups_ready; else -1), its next step at most
                               step_cap */
    double step_cap;
    double T0[9], T1[9], t0, t1;
    /* the members about the centre at the block time, for the forces
     * between them and the perturbers: the group's own state where its
     * centre is active, else its unperturbed motion on from it */
    double px[ORR_AR_MAX][3], pv[ORR_AR_MAX][3];
    /* its regularised state as it was before the groups were last moved on
     * together (freeze): what other groups' tides see of its members */
    orr_ar was;
} group;

struct orr_groups {
    long n;
    double r_set, gamma;    /* as asked (r_set 0: automatic) */
    double encounter;       /* an unbound encounter forms where its pericentre is within
                               encounter r_close (wanted) */
    double r_close;         /* this interval's */
    double m_min, m_max;    /* the bodies' masses at the interval's start */
    group *g;
    int ng, cap;
    int *gid;               /* n: a body's group, or -1 */
    long *where;            /* n: a body's place in the list corrected, or -1 */
    long *at, nat;          /* the formation passes' bodies at their tick (at_tick) */
    /* ... in cells of r_close (where they are many: at_tick), for partner:
     * cell[3k] body at[k]'s, head[hash] the first of a cell's, next[k] the
     * next; grid 0 where not made or the bodies moved since (a merge) */
    long long *cell;
    long *head, *next, nhead;
    int grid;
    orr_watch_decline dec[ORR_WATCH_DECLINED];   /* pairs a tide holds apart (decline) */
    int ndec;
    long formed, parted;    /* groups made and come apart, since creation */
};

/* A larger group's members (more than 2) about its centre along a group's
 * advance, for its tides (members_of): nodes DENSE_FRACTION of its pairs'
 * shortest time apart, quintic Hermite interpolation between (positions,
 * velocities, accelerations), made as the tides ask for later times (the
 * last step's search for its end goes past the advance's end).  One AR
 * integration an advance instead of one a tide (N = 64 clusters: those
 * took half the run time); against it, at most 3.4e-9 of the members'
 * offsets in a 64-body run (seed 3 to t = 60).  At most DENSE_MAX nodes
 * (then members_at). */
#define DENSE_MAX 65536
#define DENSE_FRACTION 0.1

typedef struct {
    const group *o;
    int resolve;            /* pulls member by member (else from its centre) */
    double chi;             /* a pair: its last Kepler solution (kepler's guess), or NaN */
    orr_ar a;               /* a larger group: its unperturbed copy, at the last node */
    double t1;              /* the advance's end: a node there */
    int nn, cap;            /* nodes made, room for; nn 0: none (members_at) */
    int failed;             /* no more nodes: members_at past the last */
    double *node;           /* per node t, x[3n], v[3n], acc[3n] */
} dense;

typedef struct {
    const orr_groups *g;
    const orr_hview *h;
    const group *gr;
    dense *dense;           /* ndense of them: the groups near */
    int ndense;
    /* the near perturbers gathered (NEAR_REC doubles each: position,
     * velocity, acceleration, jerk, the time of those, G m), and which of
     * the dense a perturber pulls with its members (-1: from its centre):
     * read at every kick, so the tide walks one array */
    double *near;
    int *dn;
} tide_ctx;
#define NEAR_REC 14

orr_status orr_groups_create(orr_groups **out, long n, double r_close, double gamma,
                             double encounter, orr_error *err)
{
    orr_groups *g = calloc(1, sizeof *g);
    if (g) {
        g->n = n;
        g->r_set = r_close;
        g->gamma = gamma;
        g->encounter = encounter;
        g->gid = malloc(sizeof(int) * (size_t)n);
        g->where = malloc(sizeof(long) * (size_t)n);
        g->at = malloc(sizeof(long) * (size_t)n);
    }
    if (!g || !g->gid || !g->where || !g->at) {
        orr_groups_destroy(g);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory for the regularised groups of %ld "
                        "bodies", n);
    }
    for (long i = 0; i < n; i++)
        g->gid[i] = -1, g->where[i] = -1;
    *out = g;
    return ORR_OK;
}

void orr_groups_destroy(orr_groups *g)
{
    if (!g)
        return;
    for (int k = 0; k < g->cap; k++)
        free(g->g[k].pert);
    free(g->g), free(g->gid), free(g->where), free(g->at);
    free(g->cell), free(g->head), free(g->next);
    free(g);
}

int orr_groups_count(const orr_groups *g)
{
    return g ? g->ng : 0;
}

void orr_groups_made(const orr_groups *g, long *formed, long *parted)
{
    *formed = g->formed, *parted = g->parted;
}

void orr_groups_clear(orr_groups *g)
{
    for (int k = 0; k < g->ng; k++)
        for (int i = 0; i < g->g[k].n; i++)
            g->gid[g->g[k].mem[i]] = -1;
    g->ng = 0;
    g->ndec = 0;
}

void orr_groups_get_field(const orr_groups *g, double *out)
{
    for (long i = 0; i < g->n; i++)
        out[i] = g->gid[i] < 0 ? 0 : (double)g->g[g->gid[i]].mem[0] + 1;
}

/* A new group (its members' slots set by the caller), or NULL. */
static group *add_group(orr_groups *g)
{
    if (g->ng == g->cap) {
        const int cap = g->cap ? 2 * g->cap : 8;
        group *ng = realloc(g->g, sizeof(group) * (size_t)cap);
        if (!ng)
            return NULL;
        memset(ng + g->cap, 0, sizeof(group) * (size_t)(cap - g->cap));
        g->g = ng;
        g->cap = cap;
    }
    group *gr = &g->g[g->ng++];
    gr->n = 0;
    gr->npert = gr->nnear = 0;
    gr->ready = -1;
    return gr;
}

/* Group k removed (the last moves into its place; its perturber list's
 * memory stays with the slot). */
static void drop_group(orr_groups *g, int k)
{
    for (int i = 0; i < g->g[k].n; i++)
        g->gid[g->g[k].mem[i]] = -1;
    const int last = g->ng - 1;
    if (k != last) {
        group t = g->g[k];
        g->g[k] = g->g[last];
        g->g[last] = t;
        for (int i = 0; i < g->g[k].n; i++)
            g->gid[g->g[k].mem[i]] = k;
    }
    g->ng--;
}

orr_status orr_groups_set_field(orr_groups *g, const double *in, orr_error *err)
{
    orr_groups_clear(g);
    for (long i = 0; i < g->n; i++) {
        const double v = in[i];
        if (!(v >= 0 && v <= (double)g->n && v == floor(v)))
            return orr_fail(err, ORR_ERR_ARG, "group of body %ld is %g: it must be 0 or the "
                            "body number of its group's first member", i + 1, v);
        if (v > 0 && (long)v - 1 > i)
            return orr_fail(err, ORR_ERR_ARG, "group of body %ld is %g: a group is named by "
                            "its first member, which comes before its others", i + 1, v);
    }
    for (long i = 0; i < g->n; i++) {
        const long c = (long)in[i] - 1;
        if (c < 0)
            continue;
        if (c == i) {
            group *gr = add_group(g);
            if (!gr)
                return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
            gr->mem[gr->n++] = i;
            g->gid[i] = g->ng - 1;
            continue;
        }
        const int k = g->gid[c];
        if (k < 0 || g->g[k].mem[0] != c)
            return orr_fail(err, ORR_ERR_ARG, "group of body %ld is %ld, whose own group is "
                            "not itself", i + 1, c + 1);
        if (g->g[k].n == ORR_AR_MAX)
            return orr_fail(err, ORR_ERR_ARG, "group %ld has more than %d members", c + 1,
                            ORR_AR_MAX);
        g->g[k].mem[g->g[k].n++] = i;
        g->gid[i] = k;
    }
    for (int k = 0; k < g->ng; k++)
        if (g->g[k].n < 2)
            return orr_fail(err, ORR_ERR_ARG, "group %ld has one member", g->g[k].mem[0] + 1);
    return ORR_OK;
}

/* Body k's position predicted to time t along its Hermite polynomial (as
 * hermite.c's blocks do; the tides want no velocity: at every kick of a
 * group's advance, for each near perturber). */
static void taylor_x(const double *x0, const double *u, const double *a, const double *j,
                     double dt, double *x)
{
    const double dt2 = dt * dt / 2, dt3 = dt2 * dt / 3;
    for (int d = 0; d < 3; d++)
        x[d] = x0[d] + u[d] * dt + a[d] * dt2 + j[d] * dt3;
}

static void predict_x(const orr_hview *h, long k, double t, double *x)
{
    taylor_x(h->pos + 4 * k, h->vel + 3 * k, h->a + 3 * k, h->j + 3 * k,
             t - (double)h->tick[k] * h->unit, x);
}

static double mass_of(const group *gr)
{
    double M = 0;
    for (int i = 0; i < gr->n; i++)
        M += gr->ar.m[i];
    return M;
}

/* The group whose centre is body b, or NULL (a single, or a ghost). */
static const group *centre_of(const orr_groups *g, long b)
{
    const int k = g->gid[b];
    return k >= 0 && g->g[k].mem[0] == b ? &g->g[k] : NULL;
}

/* Stumpff's functions c2(z) = (1 - cos sqrt z) / z and c3(z) = (sqrt z -
 * sin sqrt z) / z^3/2 (cosh and sinh for z < 0), by their series near 0. */
static void stumpff(double z, double *c2, double *c3)
{
    if (fabs(z) < 1) {
        double t2 = 0.5, t3 = 1.0 / 6;
        *c2 = t2, *c3 = t3;
        for (int k = 1; k < 16; k++) {
            t2 *= -z / ((2 * k + 1) * (2 * k + 2));
            t3 *= -z / ((2 * k + 2) * (2 * k + 3));
            *c2 += t2, *c3 += t3;
        }
    } else if (z > 0) {
        const double w = sqrt(z);
        *c2 = (1 - cos(w)) / z, *c3 = (w - sin(w)) / (z * w);
    } else {
        const double w = sqrt(-z);
        *c2 = (cosh(w) - 1) / -z, *c3 = (sinh(w) - w) / (-z * w);
    }
}

/* Two bodies of G (m1 + m2) = mu, the second at r0 from the first with
 * velocity v0, moved on by dt along their Kepler orbit (any eccentricity,
 * either way in time) into r: universal variables, Kepler's equation
 * solved by Laguerre-Conway, whose iteration converges from any start
 * (*guess where it is finite: the last solution for a nearby dt, which
 * takes 1 or 2 iterations instead of 4 to 6; the solution into it).  A
 * bound orbit's whole periods are taken off dt first. */
static void kepler(double mu, const double *r0, const double *v0, double dt, double *r,
                   double *guess)
{
    const double r0n = sqrt(r0[0] * r0[0] + r0[1] * r0[1] + r0[2] * r0[2]);
    const double v2 = v0[0] * v0[0] + v0[1] * v0[1] + v0[2] * v0[2];
    const double smu = sqrt(mu), sig = (r0[0] * v0[0] + r0[1] * v0[1] + r0[2] * v0[2]) / smu;
    const double alpha = 2 / r0n - v2 / mu, beta = 1 - alpha * r0n;
    if (alpha > 0) {
        const double P = 2 * M_PI / (alpha * sqrt(alpha * mu));
        dt -= P * nearbyint(dt / P);
    }
    double chi = isfinite(*guess) ? *guess : alpha > 0 ? smu * dt * alpha : smu * dt / r0n, c2, c3;
    for (int it = 0; it < 64; it++) {
        const double z = alpha * chi * chi;
        stumpff(z, &c2, &c3);
        const double F = sig * chi * chi * c2 + beta * chi * chi * chi * c3 + r0n * chi - smu * dt;
        const double dF = sig * chi * (1 - z * c3) + beta * chi * chi * c2 + r0n;
        const double ddF = sig * (1 - z * c2) + beta * chi * (1 - z * c3);
        const double root = sqrt(fabs(16 * dF * dF - 20 * F * ddF));
        const double delta = 5 * F / (dF + (dF < 0 ? -root : root));
        chi -= delta;
        if (!(fabs(delta) > 1e-15 * fabs(chi)))
            break;
    }
    *guess = chi;
    stumpff(alpha * chi * chi, &c2, &c3);
    const double f = 1 - chi * chi * c2 / r0n, gt = dt - chi * chi * chi * c3 / smu;
    for (int q = 0; q < 3; q++)
        r[q] = f * r0[q] + gt * v0[q];
}

/* Group o's members about its centre at time t, as other groups' tides see
 * them: its unperturbed motion from its state before the groups were last
 * moved on together (`was`), the motion orr_groups_correct's px gives the
 * block steps (predict_group).  From `was`, not from its state now: within
 * one round of advances a group earlier in the list may already be at the
 * block time and a later one not, and the bits must not depend on the
 * groups' order (a restored checkpoint lists them anew).  A pair, most
 * groups, moves on its Kepler orbit in closed form (a few Laguerre
 * iterations a tide, against an AR integration); a larger group by a copy
 * of its regularised motion without tides (backwards in time by its
 * velocities reversed); should that copy fail, its members stay where
 * they were.  *guess: kepler's, for a pair. */
static void members_at(const group *o, double t, double x[ORR_AR_MAX][3], double *guess)
{
    const orr_ar *w = &o->was;
    if (t == w->t) {
        memcpy(x, w->x, sizeof(double) * 3 * (size_t)w->n);
        return;
    }
    if (w->n == 2) {
        const double M = w->m[0] + w->m[1];
        double r0[3], v0[3], r[3];
        for (int q = 0; q < 3; q++)
            r0[q] = w->x[1][q] - w->x[0][q], v0[q] = w->v[1][q] - w->v[0][q];
        kepler(w->G * M, r0, v0, t - w->t, r, guess);
        for (int q = 0; q < 3; q++)
            x[0][q] = -w->m[1] / M * r[q], x[1][q] = w->m[0] / M * r[q];
        return;
    }
    orr_ar a = *w;
    a.perturb = NULL, a.perturb_ctx = NULL;
    const int back = t < a.t;
    for (int i = 0; back && i < a.n; i++)
        for (int q = 0; q < 3; q++)
            a.v[i][q] = -a.v[i][q];
    orr_error ignored = {0};
    const orr_status st = orr_ar_advance(&a, back ? a.t + (a.t - t) : t, &ignored);
    orr_error_clear(&ignored);
    memcpy(x, st ? w->x : a.x, sizeof(double) * 3 * (size_t)w->n);
}

/* The shortest time of a group's pairs: their separation over their
 * speed, or their free-fall time. */
static double pair_time(const orr_ar *w)
{
    double tdyn = INFINITY;
    for (int i = 0; i < w->n; i++)
        for (int k = i + 1; k < w->n; k++) {
            double r2 = 0, u2 = 0;
            for (int q = 0; q < 3; q++) {
                r2 += (w->x[k][q] - w->x[i][q]) * (w->x[k][q] - w->x[i][q]);
                u2 += (w->v[k][q] - w->v[i][q]) * (w->v[k][q] - w->v[i][q]);
            }
            const double r = sqrt(r2);
            tdyn = fmin(tdyn, sqrt(r2 * r / (w->G * (w->m[i] + w->m[k]))));
            if (u2 > 0)
                tdyn = fmin(tdyn, r / sqrt(u2));
        }
    return tdyn;
}

/* Doubles a node of a group of n takes: t, x, v, acc. */
static size_t node_size(int n)
{
    return 1 + 9 * (size_t)n;
}

/* A node of d from its copy, at the end of its list (0: no room). */
static int put_node(dense *d)
{
    const orr_ar *a = &d->a;
    const size_t sz = node_size(a->n);
    if (d->nn == d->cap) {
        if (d->cap >= DENSE_MAX)
            return 0;
        const int cap = d->cap ? 2 * d->cap : 16;
        double *nd = realloc(d->node, sizeof(double) * sz * (size_t)cap);
        if (!nd)
            return 0;
        d->node = nd;
        d->cap = cap;
    }
    double *nd = d->node + sz * (size_t)d->nn++;
    double *x = nd + 1, *v = x + 3 * a->n, *acc = v + 3 * a->n;
    nd[0] = a->t;
    memcpy(x, a->x, sizeof(double) * 3 * (size_t)a->n);
    memcpy(v, a->v, sizeof(double) * 3 * (size_t)a->n);
    memset(acc, 0, sizeof(double) * 3 * (size_t)a->n);
    for (int i = 0; i < a->n; i++)
        for (int k = i + 1; k < a->n; k++) {
            double r[3], r2 = 0;
            for (int q = 0; q < 3; q++) {
                r[q] = a->x[k][q] - a->x[i][q];
                r2 += r[q] * r[q];
            }
            const double f = a->G / (r2 * sqrt(r2));
            for (int q = 0; q < 3; q++) {
                acc[3 * i + q] += f * a->m[k] * r[q];
                acc[3 * k + q] -= f * a->m[i] * r[q];
            }
        }
    return 1;
}

/* Group o's members (more than 2) from t0 for an advance to t1, into d:
 * a copy of its unperturbed motion from `was` taken to t0 (backwards by
 * its velocities reversed where t0 is before it), its first node there.
 * Where the copy fails, d->nn is 0 and members_of asks members_at. */
static void start_dense(const group *o, double t0, double t1, dense *d)
{
    orr_ar *a = &d->a;
    orr_error ignored = {0};
    orr_status st = ORR_OK;
    *a = o->was;
    d->o = o;
    d->chi = NAN;
    d->t1 = t1;
    d->nn = d->cap = d->failed = 0;
    d->node = NULL;
    if (t0 > a->t) {
        st = orr_ar_advance(a, t0, &ignored);
    } else if (t0 < a->t) {
        for (int i = 0; i < a->n; i++)
            for (int q = 0; q < 3; q++)
                a->v[i][q] = -a->v[i][q];
        st = orr_ar_advance(a, a->t + (a->t - t0), &ignored);
        for (int i = 0; i < a->n; i++)
            for (int q = 0; q < 3; q++)
                a->v[i][q] = -a->v[i][q];
        a->t = t0;
    }
    orr_error_clear(&ignored);
    if (!st)
        put_node(d);
}

/* d's nodes on until the last is at t or later: each DENSE_FRACTION of
 * the copy's pairs' shortest time after the one before (taken anew at each
 * node, so they close up at a pericentre), one at the advance's end.  The
 * nodes depend on t0 and t1 alone, not on which times were asked for
 * first, so neither do the bits.  0 where the nodes cannot reach t. */
static int extend_dense(dense *d, double t)
{
    orr_ar *a = &d->a;
    while (!d->failed && a->t < t) {
        double next = a->t + DENSE_FRACTION * pair_time(a);
        if (a->t < d->t1 && next > d->t1)
            next = d->t1;
        orr_error ignored = {0};
        if (!(next > a->t) || orr_ar_advance(a, next, &ignored) != ORR_OK || !put_node(d))
            d->failed = 1;
        orr_error_clear(&ignored);
    }
    return a->t >= t;
}

/* Group o's members about its centre at t for a tide (d: o's entry): a
 * pair's in closed form (from its last solution along this advance), a
 * larger group's from its nodes along this advance (t is not before their
 * first: an advance's steps go forward from its start), else members_at. */
static void members_of(dense *d, const group *o, double t, double x[ORR_AR_MAX][3])
{
    if (o->was.n == 2 || !d->nn || !(t >= d->node[0]) || !extend_dense(d, t)) {
        members_at(o, t, x, &d->chi);
        return;
    }
    const size_t sz = node_size(o->was.n);
    int j = 0, hi = d->nn - 1;   /* node j's time <= t <= node hi's */
    while (hi - j > 1) {
        const int mid = (j + hi) / 2;
        if (t >= d->node[sz * (size_t)mid])
            j = mid;
        else
            hi = mid;
    }
    if (hi == j) {   /* one node, at t */
        for (int i = 0; i < o->was.n; i++)
            for (int q = 0; q < 3; q++)
                x[i][q] = d->node[1 + 3 * i + q];
        return;
    }
    const double *n0 = d->node + sz * (size_t)j, *n1 = n0 + sz;
    const int m = 3 * o->was.n;
    const double h = n1[0] - n0[0], s = (t - n0[0]) / h;
    const double s2 = s * s, s3 = s2 * s, s4 = s3 * s, s5 = s4 * s;
    const double H0 = 1 - 10 * s3 + 15 * s4 - 6 * s5, H1 = 10 * s3 - 15 * s4 + 6 * s5;
    const double G0 = s - 6 * s3 + 8 * s4 - 3 * s5, G1 = -4 * s3 + 7 * s4 - 3 * s5;
    const double K0 = 0.5 * (s2 - 3 * s3 + 3 * s4 - s5), K1 = 0.5 * (s3 - 2 * s4 + s5);
    for (int i = 0; i < o->was.n; i++)
        for (int q = 0; q < 3; q++) {
            const int e = 1 + 3 * i + q;
            x[i][q] = H0 * n0[e] + H1 * n1[e] + h * (G0 * n0[m + e] + G1 * n1[m + e]) +
                      h * h * (K0 * n0[2 * m + e] + K1 * n1[2 * m + e]);
        }
}

/* Every group's state now is what the others' tides see of it (members_at)
 * until the next freeze: called before the groups are moved on together. */
static void freeze(orr_groups *g)
{
    for (int k = 0; k < g->ng; k++) {
        g->g[k].was = g->g[k].ar;
        g->g[k].was.perturb = NULL, g->g[k].was.perturb_ctx = NULL;
    }
}

/* A body of G m = gm at xk pulls the n members at X + x: into f. */
static void pull_members(double gm, const double *xk, const double *X, const double *x, int n,
                         double *f)
{
    for (int i = 0; i < n; i++) {
        double d[3], r2 = 0;
        for (int q = 0; q < 3; q++) {
            d[q] = xk[q] - (X[q] + x[3 * i + q]);
            r2 += d[q] * d[q];
        }
        const double s = gm / (r2 * sqrt(r2));
        for (int q = 0; q < 3; q++)
            f[3 * i + q] += s * d[q];
    }
}

/* The tides on a group's members at time t: its perturbers' pull on each
 * member less their pull on the centre of mass (the mass-weighted mean).
 * A near perturber that is another group's centre pulls with each of its
 * members, at its centre predicted to t plus their place about it at t
 * (members_of): a binary passing another is felt as two bodies, not one;
 * unless its members' own tide (resolved()) is below gamma.  A far one
 * pulls from its centre: its members' quadrupole is (size / distance)^2 of
 * a tide already below GAMMA_NEAR. */
static void tide(void *ctx, double t, const orr_ar *a, const double *x, double *f)
{
    tide_ctx *c = ctx;
    const orr_hview *h = c->h;
    const group *gr = c->gr;
    const int n = a->n;
    double X[3];
    predict_x(h, gr->mem[0], t, X);
    memset(f, 0, sizeof(double) * 3 * (size_t)n);
    for (long p = 0; p < gr->nnear; p++) {
        /* as predict_x, from the gathered record */
        const double *q = c->near + NEAR_REC * p;
        double xk[3];
        taylor_x(q, q + 3, q + 6, q + 9, t - q[12], xk);
        if (c->dn[p] < 0) {
            pull_members(q[13], xk, X, x, n, f);
            continue;
        }
        dense *d = &c->dense[c->dn[p]];
        const group *o = d->o;
        double xo[ORR_AR_MAX][3];
        members_of(d, o, t, xo);
        for (int j = 0; j < o->was.n; j++) {
            const double xj[3] = {xk[0] + xo[j][0], xk[1] + xo[j][1], xk[2] + xo[j][2]};
            pull_members(h->G * o->was.m[j], xj, X, x, n, f);
        }
    }
    double mean[3] = {0, 0, 0}, M = 0;
    for (int i = 0; i < n; i++) {
        M += a->m[i];
        for (int q = 0; q < 3; q++)
            mean[q] += a->m[i] * f[3 * i + q];
    }
    /* the far perturbers' tidal tensor: it pulls the centre not at all */
    const double w = gr->t1 > gr->t0 ? (t - gr->t0) / (gr->t1 - gr->t0) : 0;
    double T[9];
    for (int q = 0; q < 9; q++)
        T[q] = gr->T0[q] + w * (gr->T1[q] - gr->T0[q]);
    for (int i = 0; i < n; i++)
        for (int q = 0; q < 3; q++)
            f[3 * i + q] += T[3 * q] * x[3 * i] + T[3 * q + 1] * x[3 * i + 1] +
                            T[3 * q + 2] * x[3 * i + 2] - mean[q] / M;
}

/* The far perturbers' tidal tensor at the group's centre at time t:
 * sum G m (3 d d^T - r^2 I) / r^5, d from the centre to the perturber. */
static void tidal_tensor(const orr_hview *h, const group *gr, double t, double *T)
{
    double X[3];
    predict_x(h, gr->mem[0], t, X);
    memset(T, 0, 9 * sizeof(double));
    for (long p = gr->nnear; p < gr->npert; p++) {
        const long k = gr->pert[p];
        double xk[3], d[3];
        predict_x(h, k, t, xk);
        for (int q = 0; q < 3; q++)
            d[q] = xk[q] - X[q];
        const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        const double s = h->G * h->pos[4 * k + 3] / (r2 * r2 * sqrt(r2));
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                T[3 * a + b] += s * (3 * d[a] * d[b] - (a == b ? r2 : 0));
    }
}

static double size_of(const orr_hview *h, const group *gr);
static double ar_size(const orr_ar *a);

/* Whether group o, a near perturber of group gr, pulls gr's members
 * member by member inside gr's motion: where the tide of o's members about
 * their centre, its quadrupole, gamma_o (s_o / d)^2 with gamma_o = 2 M_o
 * s^3 / (M d^3) o's tide on gr, is above gamma, the smallest tide a
 * perturber is counted for; else o pulls from its centre.  Following o's
 * members costs gr steps (and a larger o nodes) a fraction of o's orbit
 * apart: seed 2 of the N = 64 clusters from t = 48, a wide pair 0.8 to 1.1
 * from a triple whose inner binary is 700 times faster, its quadrupole
 * 1e-7 to 2e-5 of the pair's force, took 5.9 s a time unit instead of 2.4
 * s (main, from its centre always: 1.1 s), the energy alike (|dE/E0|
 * 9.3e-8, 9.0e-8, 8.0e-8).  (Weighing the quadrupole by how much faster
 * o's members move, t_o / t of their pairs' shortest times, halved that
 * again but lost 2e-4 of the energy in one of 464 such windows: the
 * shortest time of an eccentric pair jumps along its orbit.)  From o's
 * state before the round (`was`) and the block's positions, so the groups'
 * order does not matter. */
static int resolved(const orr_groups *g, const orr_hview *h, const group *gr, const group *o)
{
    double d2 = 0;
    for (int q = 0; q < 3; q++) {
        const double dq = h->xp[4 * o->mem[0] + q] - h->xp[4 * gr->mem[0] + q];
        d2 += dq * dq;
    }
    const double s = size_of(h, gr), so = ar_size(&o->was);
    const double gam_o = 2 * mass_of(o) * s * s * s / (mass_of(gr) * d2 * sqrt(d2));
    return gam_o * so * so / d2 > g->gamma;
}
static double strongest_tide(const orr_groups *g, const orr_hview *h, const double *X, double s,
                             double M, const long *list, long count, int own, long a, long b,
                             double join, long long at);

/* Whole periods of a bound pair's orbit (2 pi tdyn) between its time and
 * t: its time moved on by them, its state as it was. */
static void skip_orbits(orr_ar *a, double tdyn, double t)
{
    const double P = 2 * M_PI * tdyn, span = t - a->t;
    if (P > 0 && span > P)
        a->t += floor(span / P) * P;
}

/* A bound pair none of whose perturbers' tides reaches gamma moves on its
 * Kepler orbit: its state comes back after each period, so whole periods
 * are skipped (the time alone moves on) and the rest integrated without
 * tides.  A hard binary in a cluster's core can make 10^6 orbits a time
 * unit; NBODY6 treats such pairs as unperturbed two-body motion too. */
static int unperturbed_orbits(const orr_groups *g, const orr_hview *h, group *gr, double t)
{
    if (gr->n != 2 || !(gr->ar.B > 0))
        return 0;
    const double M = mass_of(gr), Gm = h->G * M;
    const double a = h->G * gr->ar.m[0] * gr->ar.m[1] / (2 * gr->ar.B);
    /* the perturbers where the block has them */
    if (strongest_tide(g, h, h->xp + 4 * gr->mem[0], size_of(h, gr), M, gr->pert, gr->npert, -1,
                       -1, -1, 0, 0) >= g->gamma)
        return 0;
    skip_orbits(&gr->ar, sqrt(a * a * a / Gm), t);
    return 1;
}

/* A failure inside group gr named by its members (1-based, ascending):
 * "the group of bodies 3 and 9", "the group of bodies 3, 9 and 12". */
static void group_context(orr_error *err, const group *gr)
{
    char who[32 * ORR_AR_MAX] = "";
    size_t at = 0;
    for (int i = 0; i < gr->n && at < sizeof who; i++)
        at += (size_t)snprintf(who + at, sizeof who - at, "%s%ld",
                               i == 0 ? "" : i == gr->n - 1 ? " and " : ", ", gr->mem[i] + 1);
    orr_error_context(err, "the group of bodies %s", who);
}

static orr_status advance(const orr_groups *g, const orr_hview *h, group *gr, double t,
                          orr_error *err)
{
    if (!(t > gr->ar.t))
        return ORR_OK;
    if (unperturbed_orbits(g, h, gr, t)) {
        gr->ar.perturb = NULL;
        orr_status st = gr->ar.t < t ? orr_ar_advance(&gr->ar, t, err) : ORR_OK;
        if (st)
            group_context(err, gr);
        return st;
    }
    tide_ctx ctx = {g, h, gr, NULL, 0, NULL, NULL};
    int near = 0;   /* groups near: a pair's Kepler solution, a larger group's nodes */
    for (long p = 0; p < gr->nnear; p++)
        near += centre_of(g, gr->pert[p]) != NULL;
    const size_t nn = (size_t)gr->nnear;
    if ((near && !(ctx.dense = malloc(sizeof(dense) * (size_t)near))) ||
        (nn && (!(ctx.near = malloc(sizeof(double) * NEAR_REC * nn)) ||
                !(ctx.dn = malloc(sizeof(int) * nn))))) {
        free(ctx.dense), free(ctx.near), free(ctx.dn);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory for a group's tides");
    }
    for (long p = 0; p < gr->nnear; p++) {
        const long k = gr->pert[p];
        double *q = ctx.near + NEAR_REC * p;
        for (int e = 0; e < 3; e++) {
            q[e] = h->pos[4 * k + e];
            q[3 + e] = h->vel[3 * k + e];
            q[6 + e] = h->a[3 * k + e];
            q[9 + e] = h->j[3 * k + e];
        }
        q[12] = (double)h->tick[k] * h->unit;
        q[13] = h->G * h->pos[4 * k + 3];
        const group *o = centre_of(g, k);
        dense *d = o ? &ctx.dense[ctx.ndense++] : NULL;
        const int res = d && resolved(g, h, gr, o);
        ctx.dn[p] = res ? ctx.ndense - 1 : -1;
        if (res && o->was.n > 2) {
            start_dense(o, gr->ar.t, t, d);
        } else if (d) {
            d->o = o, d->chi = NAN;
            d->nn = d->cap = d->failed = 0;
            d->node = NULL;
        }
        if (d)
            d->resolve = res;
    }
    gr->t0 = gr->ar.t, gr->t1 = t;
    tidal_tensor(h, gr, gr->t0, gr->T0);
    tidal_tensor(h, gr, gr->t1, gr->T1);
    gr->ar.perturb = tide;
    gr->ar.perturb_ctx = &ctx;
    orr_status st = orr_ar_advance(&gr->ar, t, err);
    gr->ar.perturb_ctx = NULL;
    for (int k = 0; k < ctx.ndense; k++)
        free(ctx.dense[k].node);
    free(ctx.dense), free(ctx.near), free(ctx.dn);
    if (st)
        group_context(err, gr);
    return st;
}

/* A pair's size: its separation r, or where it is bound and goes out
 * farther, its apocentre a (1 + e). */
static double pair_size(double G, double m1, double m2, const double *r, const double *v)
{
    const double M = m1 + m2;
    const double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2], d = sqrt(r2);
    const double v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    const double eps = 0.5 * v2 - G * M / d;   /* energy per reduced mass */
    if (!(eps < 0))
        return d;
    const double a = -G * M / (2 * eps);
    double L[3] = {r[1] * v[2] - r[2] * v[1], r[2] * v[0] - r[0] * v[2],
                   r[0] * v[1] - r[1] * v[0]};
    const double e2 = 1 + 2 * eps * (L[0] * L[0] + L[1] * L[1] + L[2] * L[2]) / (G * G * M * M);
    return fmax(d, a * (1 + sqrt(e2 > 0 ? e2 : 0)));
}

/* The pericentre within which an encounter forms: fraction f of r_close
 * (any, where r_close is unbounded: few bodies are regularised whole). */
static double reach(const orr_groups *g, double f)
{
    return isinf(g->r_close) ? INFINITY : f * g->r_close;
}

/* ... an unbound one (encounter r_close), or a bound one reaching past
 * r_close, which comes back every orbit (r_close / 4, or more) */
static double unbound_reach(const orr_groups *g)
{
    return reach(g, g->encounter);
}

static double bound_reach(const orr_groups *g)
{
    return reach(g, fmax(g->encounter, TIGHT_FRACTION));
}

/* Whether a pair (eps its energy per reduced mass, size as pair_size's,
 * peri its pericentre) is bound, its apocentre within r_close and its
 * pericentre within TIGHT_FRACTION r_close: one the block steps must
 * not follow (their steps would go as its pericentre's time), so no tide
 * parts it or keeps it from forming, only its members' separation
 * (apart_now).  The tides' rules are for open groups, whose perturbers
 * matter as much as their own pull (a bound encounter reaching out past
 * r_close among them: kept whatever the tide, a 64-body cluster's stalled
 * on one of apocentre 18 r_close with a body at its centre): a hard
 * binary (224 kT) in a collapsing N = 4096 core, parted by a body passing
 * two of its sizes away (the tide above GAMMA_APART) and then kept from
 * forming again, went on in the block steps at steps of 1.8e-12 and took
 * the energy error from 1.5e-6 to 5.7e-6 in half a time unit. */
static int tight(const orr_groups *g, double eps, double size, double peri)
{
    return eps < 0 && size <= g->r_close && peri < TIGHT_FRACTION * g->r_close;
}

/* A pair's pericentre, L^2 / (GM (1 + e)), from its energy per reduced
 * mass eps (r, v as for tight). */
static double pericentre(double GM, double eps, const double *r, const double *v)
{
    const double L[3] = {r[1] * v[2] - r[2] * v[1], r[2] * v[0] - r[0] * v[2],
                         r[0] * v[1] - r[1] * v[0]};
    const double L2 = L[0] * L[0] + L[1] * L[1] + L[2] * L[2];
    const double e = sqrt(fmax(1 + 2 * eps * L2 / (GM * GM), 0.0));
    return L2 / (GM * (1 + e));
}

/* A pair group's member 1 less member 0: position r, velocity v. */
static void relative(const group *gr, double *r, double *v)
{
    for (int q = 0; q < 3; q++) {
        r[q] = gr->ar.x[1][q] - gr->ar.x[0][q];
        v[q] = gr->ar.v[1][q] - gr->ar.v[0][q];
    }
}

/* A group that is a tight pair (tight). */
static int tight_group(const orr_groups *g, double G, const group *gr)
{
    if (gr->n != 2)
        return 0;
    double r[3], v[3];
    relative(gr, r, v);
    const double GM = G * (gr->ar.m[0] + gr->ar.m[1]);
    const double eps = 0.5 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) -
                       GM / sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    return tight(g, eps, pair_size(G, gr->ar.m[0], gr->ar.m[1], r, v), pericentre(GM, eps, r, v));
}

/* The size of a group in regularised state a: its largest separation, or
 * a bound pair's apocentre. */
static double ar_size(const orr_ar *a)
{
    double s = 0;
    for (int i = 0; i < a->n; i++)
        for (int k = i + 1; k < a->n; k++) {
            double r2 = 0;
            for (int q = 0; q < 3; q++)
                r2 += (a->x[i][q] - a->x[k][q]) * (a->x[i][q] - a->x[k][q]);
            s = fmax(s, sqrt(r2));
        }
    if (a->n == 2) {
        double r[3], v[3];
        for (int q = 0; q < 3; q++)
            r[q] = a->x[1][q] - a->x[0][q], v[q] = a->v[1][q] - a->v[0][q];
        s = pair_size(a->G, a->m[0], a->m[1], r, v);
    }
    return s;
}

/* A group's size now. */
static double size_of(const orr_hview *h, const group *gr)
{
    (void)h;
    return ar_size(&gr->ar);
}

/* The strongest tide on something of size s and mass M centred at X, from
 * the bodies of list[count] (all n bodies where count is -1), skipping
 * ghosts, members of group `own`, bodies a and b, and bodies at tick `at`
 * closer than `join` (those may join it: 0 for none): max 2 m (s / d)^3
 * / M. */
static double strongest_tide_of(const orr_groups *g, const orr_hview *h, const double *X,
                                double s, double M, const long *list, long count, int own, long a,
                                long b, double join, long long at, long *which)
{
    double worst = 0;
    *which = -1;
    for (long p = 0; p < (count < 0 ? h->n : count); p++) {
        const long k = count < 0 ? p : list[p];
        const double m = h->pos[4 * k + 3];
        if (k == a || k == b || m == 0 || (own >= 0 && g->gid[k] == own))
            continue;
        double r2 = 0;
        for (int q = 0; q < 3; q++)
            r2 += (h->xp[4 * k + q] - X[q]) * (h->xp[4 * k + q] - X[q]);
        if (r2 < join * join && h->tick[k] == at)
            continue;
        const double tide = 2 * m * s * s * s / (M * r2 * sqrt(r2));
        if (tide > worst)
            worst = tide, *which = k;
    }
    return worst;
}

static double strongest_tide(const orr_groups *g, const orr_hview *h, const double *X, double s,
                             double M, const long *list, long count, int own, long a, long b,
                             double join, long long at)
{
    long which;
    return strongest_tide_of(g, h, X, s, M, list, count, own, a, b, join, at, &which);
}

/* Pairs held apart by a third body's tide: a pair that wanted() refuses
 * for its tide, or a group taken back for one (orr_groups_update), is not
 * tested again until that body could have taken its tide below
 * GAMMA_FORM: gone out to cbrt(gamma / GAMMA_FORM) times its distance d
 * at its speed v relative to the pair, and never later than its free-fall
 * time onto the pair, sqrt(d^3 / (G (M + m))), within which it may have
 * swung past and away.  Without this, a pair beside a third body at the
 * same block time within r_close (one that may join it, so left out of
 * wanted's tide, but does not) formed and was taken back at every block:
 * 59 times in 2077 blocks of a collapsing N = 4096 core; and on the GPU
 * every such block stopped the device's loop (engine.h: the watch's
 * declined pairs, which it skips the same way).  The list is the
 * interval's (emptied as it begins: no checkpoint holds one), at most
 * ORR_WATCH_DECLINED pairs, the same on every rank and path.  A held pair
 * that has become tight (wanted) is formed all the same: a pair of
 * an N = 512 core held apart at a size of 2.6 r_close by a third body's
 * tide fell to a hard binary within its hold, and the block steps
 * followed it at steps down to 1e-9 (38305 blocks in 0.02 time units) and
 * lost 8.4e-6 of the energy; formed, 9324 blocks and 4.3e-7
 * (tests/lua/test_regular.lua).  Over N = 512 clusters through core
 * collapse (docs/PERFORMANCE.md) the largest energy change in 2 time
 * units was above 1e-5 in 5 runs of 11 before, in 3 of 15 after. */
static int declined(const orr_groups *g, long b, long o, long long tick)
{
    const long lo = b < o ? b : o, hi = b < o ? o : b;
    for (int k = 0; k < g->ndec; k++)
        if (g->dec[k].a == lo && g->dec[k].b == hi && tick < g->dec[k].until)
            return 1;
    return 0;
}

static void decline(orr_groups *g, const orr_hview *h, long b, long o, const double *X,
                    const double *V, double M, double sz, double u, long k, double gamma,
                    long long tick)
{
    if (k < 0 || !(gamma > GAMMA_FORM))
        return;
    double d2 = 0, v2 = 0;
    for (int q = 0; q < 3; q++) {
        d2 += (h->xp[4 * k + q] - X[q]) * (h->xp[4 * k + q] - X[q]);
        v2 += (h->vp[3 * k + q] - V[q]) * (h->vp[3 * k + q] - V[q]);
    }
    const double d = sqrt(d2), ff = sqrt(d2 * d / (h->G * (M + h->pos[4 * k + 3])));
    const double out = v2 > 0 ? d * (cbrt(gamma / GAMMA_FORM) - 1) / sqrt(v2) : INFINITY;
    /* nor later than the pair's own size sz (its separation, where that is
     * what it is) could have shrunk as far at its members' relative speed
     * u, or its own free-fall time: a hyperbolic encounter refused far out
     * was held to the block steps down to a separation of 1e-6 */
    const double in = u > 0 ? sz * (1 - cbrt(GAMMA_FORM / gamma)) / u : INFINITY,
                 own = sqrt(sz * sz * sz / (h->G * M));
    const double ticks = fmin(fmin(fmin(out, ff), fmin(in, own)) / h->unit, 0x1p41);
    if (!(ticks >= 2))   /* (NaN too) nothing to gain */
        return;
    const long lo = b < o ? b : o, hi = b < o ? o : b;
    int w = 0;   /* the list kept: the live ones but this pair's */
    for (int q = 0; q < g->ndec; q++)
        if (g->dec[q].until > tick && !(g->dec[q].a == lo && g->dec[q].b == hi))
            g->dec[w++] = g->dec[q];
    g->ndec = w;
    if (w < ORR_WATCH_DECLINED)
        g->dec[g->ndec++] = (orr_watch_decline){lo, hi, tick + (long long)ticks};
}

/* The perturbers of a group whose centre is at x (every other body now at
 * x_of: positions with 4 values a body): those whose tide, 2 m_max (s/d)^3
 * / M, is above gamma, and at least every body within 2 r_close. */
static orr_status perturbers(const orr_groups *g, const orr_hview *h, group *gr,
                             const double *xs, orr_error *err)
{
    const long c = gr->mem[0];
    const double s = size_of(h, gr), M = mass_of(gr);
    const double R = fmax(2 * g->r_close, s * cbrt(2 * g->m_max / (M * g->gamma)));
    const double Rn = fmin(R, fmax(2 * g->r_close, s * cbrt(2 * g->m_max / (M * GAMMA_NEAR))));
    gr->npert = gr->nnear = 0;
    gr->R = R;
    for (long k = 0; k < h->n; k++) {
        if (k == c || (g->gid[k] >= 0 && g->g[g->gid[k]].mem[0] != k))
            continue;   /* itself, or a ghost */
        if (g->gid[k] >= 0 && &g->g[g->gid[k]] == gr)
            continue;
        double r2 = 0;
        for (int q = 0; q < 3; q++)
            r2 += (xs[4 * k + q] - xs[4 * c + q]) * (xs[4 * k + q] - xs[4 * c + q]);
        if (r2 >= R * R)
            continue;
        if (gr->npert == gr->cap) {
            const long cap = gr->cap ? 2 * gr->cap : 16;
            long *p = realloc(gr->pert, sizeof(long) * (size_t)cap);
            if (!p)
                return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
            gr->pert = p;
            gr->cap = cap;
        }
        gr->pert[gr->npert++] = k;
        if (r2 < Rn * Rn) {   /* a near one: among the first */
            gr->pert[gr->npert - 1] = gr->pert[gr->nnear];
            gr->pert[gr->nnear++] = k;
        }
    }
    return ORR_OK;
}

/* Body k's state written here (orr_hview's touched). */
static void touch(const orr_hview *h, long k)
{
    if (h->touched)
        h->touched[k] = 1;
}

/* Body k made a ghost. */
static void ghost(orr_hview *h, long k)
{
    touch(h, k);
    for (int q = 0; q < 3; q++) {
        h->pos[4 * k + q] = h->xp[4 * k + q] = GHOST_AT;
        h->vel[3 * k + q] = h->vp[3 * k + q] = 0;
        h->a[3 * k + q] = h->j[3 * k + q] = 0;
    }
    h->pos[4 * k + 3] = h->xp[4 * k + 3] = 0;
    h->tick[k] = ORR_GHOST_TICK;
    h->level[k] = 0;
}

/* A group's regularised motion started from its members' absolute states
 * (pos, vel of n bodies, masses m) at time t; its centre into slot
 * mem[0], the others ghosts. */
static orr_status start_group(orr_hview *h, group *gr, const double *m, const double *pos,
                              const double *vel, double t, orr_error *err)
{
    orr_status st = orr_ar_init(&gr->ar, gr->n, h->G, m, pos, vel, t, err);
    if (st) {
        group_context(err, gr);
        return st;
    }
    const long c = gr->mem[0];
    double M = 0;
    gr->ready = -1;
    for (int i = 0; i < gr->n; i++)
        M += m[i];
    for (int i = 1; i < gr->n; i++)
        ghost(h, gr->mem[i]);
    touch(h, c);
    for (int q = 0; q < 3; q++) {
        h->pos[4 * c + q] = h->xp[4 * c + q] = gr->ar.com_x[q];
        h->vel[3 * c + q] = h->vp[3 * c + q] = gr->ar.com_v[q];
    }
    h->pos[4 * c + 3] = h->xp[4 * c + 3] = M;
    memcpy(gr->px, gr->ar.x, sizeof gr->px);
    memcpy(gr->pv, gr->ar.v, sizeof gr->pv);
    gr->was = gr->ar;
    return ORR_OK;
}

/* The half-mass radius about the centre of mass, for r_close = 4 r_h / N. */
typedef struct {
    double r, m;
} rm;

static int by_r(const void *a, const void *b)
{
    const double x = ((const rm *)a)->r, y = ((const rm *)b)->r;
    return x < y ? -1 : x > y;
}

static double half_mass_radius(const orr_hview *h, orr_error *err, int *fail)
{
    rm *v = malloc(sizeof(rm) * (size_t)h->n);
    if (!v) {
        *fail = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        return 0;
    }
    double c[3] = {0, 0, 0}, M = 0;
    for (long i = 0; i < h->n; i++) {
        M += h->pos[4 * i + 3];
        for (int q = 0; q < 3; q++)
            c[q] += h->pos[4 * i + 3] * h->pos[4 * i + q];
    }
    for (long i = 0; i < h->n; i++) {
        double r2 = 0;
        for (int q = 0; q < 3; q++)
            r2 += (h->pos[4 * i + q] - c[q] / M) * (h->pos[4 * i + q] - c[q] / M);
        v[i].r = sqrt(r2);
        v[i].m = h->pos[4 * i + 3];
    }
    qsort(v, (size_t)h->n, sizeof *v, by_r);
    double sum = 0, rh = v[h->n - 1].r;
    for (long i = 0; i < h->n; i++)
        if ((sum += v[i].m) >= 0.5 * M) {
            rh = v[i].r;
            break;
        }
    free(v);
    return rh;
}

orr_status orr_groups_collapse(orr_groups *g, orr_hview *h, orr_error *err)
{
    int fail = 0;
    g->ndec = 0;   /* an interval's ticks are its own (and a checkpoint holds none) */
    g->m_min = INFINITY, g->m_max = 0;
    for (long i = 0; i < h->n; i++) {
        g->m_min = fmin(g->m_min, h->pos[4 * i + 3]);
        g->m_max = fmax(g->m_max, h->pos[4 * i + 3]);
    }
    long massive = 0;
    for (long i = 0; i < h->n; i++)
        massive += h->pos[4 * i + 3] > 0;
    if (g->r_set > 0)
        g->r_close = g->r_set;
    else if (massive <= ORR_AR_MAX)   /* a few bodies: regularised whole */
        g->r_close = INFINITY;
    else
        g->r_close = 4 * half_mass_radius(h, err, &fail) / (double)h->n;
    if (fail)
        return fail;
    if (!(g->r_close > 0))
        return orr_fail(err, ORR_ERR_ARG, "regularize: the automatic r_close, 4 r_h / N, is 0: "
                        "the bodies' half-mass radius is 0 (give regularize = {r_close = R})");
    /* in the order of their first members, as a checkpoint's restore makes
     * them (orr_groups_set_field): what the groups do after depends on
     * their order in sums (a body near two of them) */
    for (int k = 1; k < g->ng; k++)
        for (int q = k; q > 0 && g->g[q - 1].mem[0] > g->g[q].mem[0]; q--) {
            const group tg = g->g[q];
            g->g[q] = g->g[q - 1];
            g->g[q - 1] = tg;
        }
    for (int k = 0; k < g->ng; k++)
        for (int i = 0; i < g->g[k].n; i++)
            g->gid[g->g[k].mem[i]] = k;
    for (int k = 0; k < g->ng; k++) {
        group *gr = &g->g[k];
        double m[ORR_AR_MAX], x[3 * ORR_AR_MAX], v[3 * ORR_AR_MAX];
        for (int i = 0; i < gr->n; i++) {
            const long b = gr->mem[i];
            m[i] = h->pos[4 * b + 3];
            memcpy(x + 3 * i, h->pos + 4 * b, 3 * sizeof(double));
            memcpy(v + 3 * i, h->vel + 3 * b, 3 * sizeof(double));
        }
        orr_status st = start_group(h, gr, m, x, v, 0, err);
        if (st)
            return st;
    }
    for (int k = 0; k < g->ng; k++) {
        orr_status st = perturbers(g, h, &g->g[k], h->pos, err);
        if (st)
            return st;
    }
    return ORR_OK;
}

/* The group's members at time t into px, pv: its own state when it is
 * there, else carried on from it without the tides (a copy of its
 * regularised motion; the tides act at its centre's steps). */
static orr_status predict_group(group *gr, double t, orr_error *err)
{
    if (gr->ar.t == t) {
        memcpy(gr->px, gr->ar.x, sizeof gr->px);
        memcpy(gr->pv, gr->ar.v, sizeof gr->pv);
        return ORR_OK;
    }
    orr_ar a = gr->ar;
    a.perturb = NULL;
    if (a.n == 2 && a.B > 0) {   /* a bound pair: whole orbits skipped */
        const double ax = a.G * a.m[0] * a.m[1] / (2 * a.B);
        skip_orbits(&a, sqrt(ax * ax * ax / (a.G * (a.m[0] + a.m[1]))), t);
    }
    orr_status st = a.t < t ? orr_ar_advance(&a, t, err) : ORR_OK;
    if (st) {
        group_context(err, gr);
        return st;
    }
    memcpy(gr->px, a.x, sizeof gr->px);
    memcpy(gr->pv, a.v, sizeof gr->pv);
    return ORR_OK;
}

/* Whether group gr lists body b among its perturbers. */
static int lists(const group *gr, long b)
{
    for (long p = 0; p < gr->npert; p++)
        if (gr->pert[p] == b)
            return 1;
    return 0;
}

orr_status orr_groups_advance(orr_groups *g, const orr_hview *h, const char *active, double t,
                              orr_error *err)
{
    freeze(g);
    for (int k = 0; k < g->ng; k++) {
        group *gr = &g->g[k];
        const int own = active[gr->mem[0]];
        int touched = own;
        for (long p = 0; !touched && p < gr->npert; p++)
            touched = active[gr->pert[p]];
        /* or a perturber of an active group: its members pull that one */
        for (int o = 0; !touched && o < g->ng; o++)
            touched = o != k && active[g->g[o].mem[0]] && lists(&g->g[o], gr->mem[0]);
        orr_status st = own ? advance(g, h, gr, t, err) : ORR_OK;
        if (!st && touched)
            st = predict_group(gr, t, err);
        if (st)
            return st;
    }
    return ORR_OK;
}

/* The pull of a unit mass at relative position d (from the pulled body
 * to it) and relative velocity u: acceleration and jerk, added times gm. */
static void pull(const double *d, const double *u, double gm, double *acc, double *jerk)
{
    const double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    const double ri3 = gm / (r2 * sqrt(r2));
    const double rv = 3 * (d[0] * u[0] + d[1] * u[1] + d[2] * u[2]) / r2;
    for (int q = 0; q < 3; q++) {
        acc[q] += ri3 * d[q];
        jerk[q] += ri3 * (u[q] - rv * d[q]);
    }
}

/* Groups A (centre at X, V) and B (at XB, VB), B among A's perturbers:
 * the pull between their members less that between their centres, on A's
 * centre (into ac, jc) where mine is set, and on B's (into ab, jb) where
 * theirs is (B's own correction does it where B lists A). */
static void group_pair(const orr_hview *h, const group *A, const double *X, const double *V,
                       const group *B, const double *XB, const double *VB, int mine, int theirs,
                       double *ac, double *jc, double *ab, double *jb)
{
    const double MA = mass_of(A), MB = mass_of(B);
    double d[3], u[3];
    for (int i = 0; i < A->n; i++)
        for (int j = 0; j < B->n; j++) {
            for (int q = 0; q < 3; q++) {
                d[q] = (XB[q] + B->px[j][q]) - (X[q] + A->px[i][q]);
                u[q] = (VB[q] + B->pv[j][q]) - (V[q] + A->pv[i][q]);
            }
            if (mine)
                pull(d, u, h->G * B->ar.m[j] * A->ar.m[i] / MA, ac, jc);
            if (theirs) {
                for (int q = 0; q < 3; q++)
                    d[q] = -d[q], u[q] = -u[q];
                pull(d, u, h->G * A->ar.m[i] * B->ar.m[j] / MB, ab, jb);
            }
        }
    for (int q = 0; q < 3; q++)
        d[q] = XB[q] - X[q], u[q] = VB[q] - V[q];
    if (mine)
        pull(d, u, -h->G * MB, ac, jc);
    if (theirs) {
        for (int q = 0; q < 3; q++)
            d[q] = -d[q], u[q] = -u[q];
        pull(d, u, -h->G * MA, ab, jb);
    }
}

void orr_groups_correct(const orr_groups *g, const orr_hview *h, const long *list, long count,
                        double *an, double *jn)
{
    if (!g->ng)
        return;
    for (long k = 0; k < count; k++)
        g->where[list[k]] = k;
    for (int k = 0; k < g->ng; k++) {
        const group *gr = &g->g[k];
        const long c = gr->mem[0];
        const double *X = h->xp + 4 * c, *V = h->vp + 3 * c;
        const double M = mass_of(gr);
        double xm[ORR_AR_MAX][3], vm[ORR_AR_MAX][3];
        for (int i = 0; i < gr->n; i++)
            for (int q = 0; q < 3; q++) {
                xm[i][q] = X[q] + gr->px[i][q];
                vm[i][q] = V[q] + gr->pv[i][q];
            }
        const long wc = g->where[c];
        double ac[3] = {0, 0, 0}, jc[3] = {0, 0, 0};
        for (long p = 0; p < gr->npert; p++) {
            const long b = gr->pert[p], wb = g->where[b];
            if (wc < 0 && wb < 0)
                continue;
            const double *xb = h->xp + 4 * b, *vb = h->vp + 3 * b;
            double d[3], u[3];
            const group *ob = centre_of(g, b);
            if (ob) {   /* another group: member with member, each side once */
                group_pair(h, gr, X, V, ob, xb, vb, wc >= 0, wb >= 0 && !lists(ob, c), ac, jc,
                           wb >= 0 ? an + 3 * wb : NULL, wb >= 0 ? jn + 3 * wb : NULL);
                continue;
            }
            if (wb >= 0) {   /* the perturber: the members, not their centre */
                double da[3] = {0, 0, 0}, dj[3] = {0, 0, 0};
                for (int i = 0; i < gr->n; i++) {
                    for (int q = 0; q < 3; q++)
                        d[q] = xm[i][q] - xb[q], u[q] = vm[i][q] - vb[q];
                    pull(d, u, h->G * gr->ar.m[i], da, dj);
                }
                for (int q = 0; q < 3; q++)
                    d[q] = X[q] - xb[q], u[q] = V[q] - vb[q];
                pull(d, u, -h->G * M, da, dj);
                for (int q = 0; q < 3; q++)
                    an[3 * wb + q] += da[q], jn[3 * wb + q] += dj[q];
            }
            if (wc >= 0) {   /* the centre: the perturber's pull on the members */
                const double gm = h->G * h->pos[4 * b + 3];
                for (int i = 0; i < gr->n; i++) {
                    for (int q = 0; q < 3; q++)
                        d[q] = xb[q] - xm[i][q], u[q] = vb[q] - vm[i][q];
                    pull(d, u, gm * gr->ar.m[i] / M, ac, jc);
                }
                for (int q = 0; q < 3; q++)
                    d[q] = xb[q] - X[q], u[q] = vb[q] - V[q];
                pull(d, u, -gm, ac, jc);
            }
        }
        if (wc >= 0)
            for (int q = 0; q < 3; q++)
                an[3 * wc + q] += ac[q], jn[3 * wc + q] += jc[q];
    }
    for (long k = 0; k < count; k++)
        g->where[list[k]] = -1;
}

/* Group k's members as bodies again, at its centre's state (slot mem[0])
 * plus their own about it; the group is dropped when drop is set. */
static void resolve_group(orr_groups *g, orr_hview *h, int k)
{
    group *gr = &g->g[k];
    const long c = gr->mem[0];
    double X[4], V[3];
    memcpy(X, h->pos + 4 * c, sizeof X);
    memcpy(V, h->vel + 3 * c, sizeof V);
    for (int i = 0; i < gr->n; i++) {
        const long b = gr->mem[i];
        touch(h, b);
        for (int q = 0; q < 3; q++) {
            h->pos[4 * b + q] = h->xp[4 * b + q] = X[q] + gr->ar.x[i][q];
            h->vel[3 * b + q] = h->vp[3 * b + q] = V[q] + gr->ar.v[i][q];
        }
        h->pos[4 * b + 3] = h->xp[4 * b + 3] = gr->ar.m[i];
    }
}

static void add_fresh(long *fresh, long *nfresh, long b)
{
    for (long k = 0; k < *nfresh; k++)
        if (fresh[k] == b)
            return;
    fresh[(*nfresh)++] = b;
}

static void drop_fresh(long *fresh, long *nfresh, long b)
{
    for (long k = 0; k < *nfresh; k++)
        if (fresh[k] == b) {
            fresh[k] = fresh[--*nfresh];
            return;
        }
}

/* Group k parted: its members single bodies at tick, fresh (their forces
 * to be found), the group dropped. */
static void part(orr_groups *g, orr_hview *h, int k, long tick, long *fresh, long *nfresh)
{
    const group *gr = &g->g[k];
    resolve_group(g, h, k);
    for (int i = 0; i < gr->n; i++) {
        const long b = gr->mem[i];
        memset(h->a + 3 * b, 0, 3 * sizeof(double));
        memset(h->j + 3 * b, 0, 3 * sizeof(double));
        h->tick[b] = tick;
        add_fresh(fresh, nfresh, b);
    }
    drop_group(g, k);
    g->parted++;
}

/* Bodies b and o (singles or centres, both at time t) merged into one
 * group; 0 when it would have too many members. */
static orr_status merge(orr_groups *g, orr_hview *h, long b, long o, double t, long *fresh,
                        long *nfresh, int *merged, orr_error *err)
{
    long mem[2 * ORR_AR_MAX];
    double m[2 * ORR_AR_MAX], x[6 * ORR_AR_MAX], v[6 * ORR_AR_MAX];
    int n = 0;
    const long two[2] = {b, o};
    for (int s = 0; s < 2; s++) {
        const long c = two[s];
        const int k = g->gid[c];
        if (k < 0) {
            mem[n] = c;
            m[n] = h->pos[4 * c + 3];
            memcpy(x + 3 * n, h->pos + 4 * c, 3 * sizeof(double));
            memcpy(v + 3 * n, h->vel + 3 * c, 3 * sizeof(double));
            n++;
            continue;
        }
        const group *gr = &g->g[k];
        if (n + gr->n > ORR_AR_MAX)
            return ORR_OK;
        for (int i = 0; i < gr->n; i++, n++) {
            mem[n] = gr->mem[i];
            m[n] = gr->ar.m[i];
            for (int q = 0; q < 3; q++) {
                x[3 * n + q] = h->pos[4 * c + q] + gr->ar.x[i][q];
                v[3 * n + q] = h->vel[3 * c + q] + gr->ar.v[i][q];
            }
        }
    }
    if (n > ORR_AR_MAX)
        return ORR_OK;
    for (int s = 0; s < 2; s++)
        if (g->gid[two[s]] >= 0)
            drop_group(g, g->gid[two[s]]);
    /* members in ascending order */
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && mem[k - 1] > mem[k]; k--) {
            long tl = mem[k];
            mem[k] = mem[k - 1], mem[k - 1] = tl;
            double td = m[k];
            m[k] = m[k - 1], m[k - 1] = td;
            for (int q = 0; q < 3; q++) {
                td = x[3 * k + q], x[3 * k + q] = x[3 * k - 3 + q], x[3 * k - 3 + q] = td;
                td = v[3 * k + q], v[3 * k + q] = v[3 * k - 3 + q], v[3 * k - 3 + q] = td;
            }
        }
    group *gr = add_group(g);
    if (!gr)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    g->formed++;
    gr->n = n;
    gr->born = 1;
    memcpy(gr->mem, mem, sizeof(long) * (size_t)n);
    for (int i = 0; i < n; i++)
        g->gid[mem[i]] = g->ng - 1;
    orr_status st = start_group(h, gr, m, x, v, t, err);
    if (st)
        return st;
    for (int i = 1; i < n; i++)
        drop_fresh(fresh, nfresh, mem[i]);
    add_fresh(fresh, nfresh, mem[0]);
    *merged = 1;
    return ORR_OK;
}

/* Whether bodies b and o (singles or groups' centres, closer than r_close
 * and approaching or bound) become a group: a bound pair whose apocentre
 * is within r_close (a wider one is soft: the block steps follow it as
 * they do the others), or an unbound encounter whose pericentre is within
 * encounter r_close (a farther one costs the GPU's block steps less than
 * a group's stops: docs/PERFORMANCE.md), or a bound one reaching past
 * r_close whose pericentre is within r_close / 4, or encounter r_close if
 * more (it comes back every orbit: one of apocentre 1.14 r_close and
 * pericentre 0.06 r_close lost 1.1e-3 of its energy in 100 orbits in the
 * block steps; one of e = 0.9999999 and a pericentre of 1e-6 lost 10
 * times its energy at the pericentre); and not where
 * any other body's tide is above GAMMA_FORM (half of what parts a group).
 * A pair held apart (held: declined) forms only where it is tight. */
static int wanted(orr_groups *g, const orr_hview *h, long b, long o, int held)
{
    const double mb = h->pos[4 * b + 3], mo = h->pos[4 * o + 3], M = mb + mo, GM = h->G * M;
    double X[3], V[3], r[3], v[3];
    for (int q = 0; q < 3; q++) {
        X[q] = (mb * h->pos[4 * b + q] + mo * h->pos[4 * o + q]) / M;
        V[q] = (mb * h->vel[3 * b + q] + mo * h->vel[3 * o + q]) / M;
        r[q] = h->pos[4 * o + q] - h->pos[4 * b + q];
        v[q] = h->vel[3 * o + q] - h->vel[3 * b + q];
    }
    const double d = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    const double eps = 0.5 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) - GM / d;
    double sz = pair_size(h->G, mb, mo, r, v);
    const double peri = pericentre(GM, eps, r, v);
    if ((eps >= 0 && peri > unbound_reach(g)) ||
        (eps < 0 && sz > g->r_close && peri > bound_reach(g)))
        return 0;   /* an encounter too wide */
    if (g->gid[b] < 0 && g->gid[o] < 0 && tight(g, eps, sz, peri))
        return 1;   /* whatever the tides, and whatever held them apart before */
    if (held)
        return 0;
    if (g->gid[b] >= 0)
        sz = fmax(sz, size_of(h, &g->g[g->gid[b]]));
    if (g->gid[o] >= 0)
        sz = fmax(sz, size_of(h, &g->g[g->gid[o]]));
    /* a body at this time within r_close may join the group in a later
     * pass: its tide is judged once the passes are done (orr_groups_update) */
    long k;
    const double tide = strongest_tide_of(g, h, X, sz, M, NULL, -1, -1, b, o, g->r_close,
                                          h->tick[b], &k);
    if (tide <= GAMMA_FORM)
        return 1;
    decline(g, h, b, o, X, V, M, sz, sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), k, tide,
            h->tick[b]);   /* (the pair's own tick) */
    return 0;
}

/* Where as many bodies as this are at a tick (a block of many, an
 * interval's first), partner looks in cells of r_close around each (a
 * scan of all of them for each candidate was a tenth of a collapsing core's
 * run on the CPU) */
#define GRID_MIN 128

/* Body b's cell: its position over r_close (a little more, so that a body
 * within r_close is in a cell next to its own whatever the roundings). */
static int cell_of(const orr_groups *g, const double *x, long long *c)
{
    const double w = g->r_close * (1 + 1e-9);
    for (int q = 0; q < 3; q++) {
        const double f = floor(x[q] / w);
        if (!(fabs(f) < 1e15))
            return 0;
        c[q] = (long long)f;
    }
    return 1;
}

static long cell_hash(const orr_groups *g, const long long *c)
{
    const unsigned long long k = (unsigned long long)c[0] * 73856093ULL ^
                                 (unsigned long long)c[1] * 19349663ULL ^
                                 (unsigned long long)c[2] * 83492791ULL;
    return (long)(k & (unsigned long long)(g->nhead - 1));
}

/* The cells of the bodies in g->at (g->grid set where made). */
static void make_grid(orr_groups *g, const orr_hview *h)
{
    g->grid = 0;
    if (g->nat < GRID_MIN || !(g->r_close > 0) || isinf(g->r_close))
        return;
    if (!g->cell) {
        g->cell = malloc(sizeof(long long) * 3 * (size_t)g->n);
        g->next = malloc(sizeof(long) * (size_t)g->n);
        g->nhead = 1;
        while (g->nhead < 2 * g->n)
            g->nhead *= 2;
        g->head = malloc(sizeof(long) * (size_t)g->nhead);
        if (!g->cell || !g->next || !g->head) {   /* without room, the scan */
            free(g->cell), free(g->next), free(g->head);
            g->cell = NULL, g->next = NULL, g->head = NULL;
            return;
        }
    }
    for (long q = 0; q < g->nhead; q++)
        g->head[q] = -1;
    for (long k = g->nat - 1; k >= 0; k--) {
        long long *c = g->cell + 3 * k;
        if (!cell_of(g, h->pos + 4 * g->at[k], c))
            return;
        const long q = cell_hash(g, c);
        g->next[k] = g->head[q];
        g->head[q] = k;
    }
    g->grid = 1;
}

/* The bodies of mass at tick (singles and groups' centres), in index
 * order, into g->at: the formation passes' candidates and partners (a
 * block's few active bodies, where a scan of every body for each of them
 * cost as much as the rest of the test). */
static void at_tick(orr_groups *g, const orr_hview *h, long long tick)
{
    g->nat = 0;
    for (long o = 0; o < h->n; o++)
        if (h->tick[o] == tick && h->pos[4 * o + 3] != 0)
            g->at[g->nat++] = o;
    make_grid(g, h);
}

/* Whether o, at tick, is a closer partner for b than best (at r2 *bestr2):
 * approaching it or bound to it (the nearest such, the lowest index of
 * the nearest: the order of a scan). */
static int closer(const orr_groups *g, const orr_hview *h, long b, long o, long long tick,
                  long best, double *bestr2)
{
    if (o == b || h->tick[o] != tick || h->pos[4 * o + 3] == 0)
        return 0;   /* (a merge in this pass leaves its others ghosts) */
    double d[3], u[3], r2 = 0, rv = 0, v2 = 0;
    for (int q = 0; q < 3; q++) {
        d[q] = h->pos[4 * o + q] - h->pos[4 * b + q];
        u[q] = h->vel[3 * o + q] - h->vel[3 * b + q];
        r2 += d[q] * d[q], rv += d[q] * u[q], v2 += u[q] * u[q];
    }
    if (r2 > *bestr2 || (r2 == *bestr2 && (best < 0 || o > best)))
        return 0;
    const double e = 0.5 * v2 - h->G * (h->pos[4 * b + 3] + h->pos[4 * o + 3]) / sqrt(r2);
    if (!(rv < 0 || e < 0))
        return 0;
    *bestr2 = r2;
    return 1;
}

/* Body b's nearest among the bodies at tick (g->at, made by at_tick at
 * the pass's start: a merge's group takes its lowest member's place, one
 * of them) closer than r_close and approaching it or bound to it, or -1:
 * from the cells next to its own where made, else by a scan. */
static long partner(const orr_groups *g, const orr_hview *h, long b, long long tick)
{
    long best = -1;
    double bestr2 = g->r_close * g->r_close;
    long long c[3];
    if (!g->grid || !cell_of(g, h->pos + 4 * b, c)) {
        for (long k = 0; k < g->nat; k++)
            if (closer(g, h, b, g->at[k], tick, best, &bestr2))
                best = g->at[k];
        return best;
    }
    for (int dx = -1; dx <= 1; dx++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dz = -1; dz <= 1; dz++) {
                const long long n[3] = {c[0] + dx, c[1] + dy, c[2] + dz};
                for (long k = g->head[cell_hash(g, n)]; k >= 0; k = g->next[k]) {
                    const long long *ck = g->cell + 3 * k;
                    if (ck[0] == n[0] && ck[1] == n[1] && ck[2] == n[2] &&
                        closer(g, h, b, g->at[k], tick, best, &bestr2))
                        best = g->at[k];
                }
            }
    return best;
}

/* Before anything changes: every group at t, along its perturbers' paths
 * as they were. */
static orr_status sync_all(orr_groups *g, const orr_hview *h, double t, int *synced,
                           orr_error *err)
{
    if (!*synced)
        freeze(g);
    for (int k = 0; !*synced && k < g->ng; k++) {
        orr_status st = advance(g, h, &g->g[k], t, err);
        if (st)
            return st;
    }
    *synced = 1;
    return ORR_OK;
}

/* An active body pulled this hard may have a neighbour within r_close. */
static double pull_at(const orr_groups *g, double G)
{
    return 0.25 * G * g->m_min / (g->r_close * g->r_close);
}

static int apart_now(const orr_groups *g, const orr_hview *h, int k);

/* Whether group k, a pair among the first ORR_WATCH_PAIRS, is fast: at
 * most ORR_WATCH_PERT_MAX perturbers, no other group among them nor it
 * among another's (then their members pull each other member by member,
 * which is the host's; letting another watched pair among them pull in the
 * loop with its members made more stops than the host blocks it saved:
 * docs/PERFORMANCE.md). */
static int fast_pair(const orr_groups *g, int k)
{
    const group *gr = &g->g[k];
    if (gr->npert > ORR_WATCH_PERT_MAX)
        return 0;
    for (long p = 0; p < gr->npert; p++)
        if (g->gid[gr->pert[p]] >= 0)
            return 0;
    for (int o = 0; o < g->ng; o++)
        if (o != k && lists(&g->g[o], gr->mem[0]))
            return 0;
    return 1;
}

/* Whether group k is a fast pair (the k-th group, pairs before it among
 * the watch's) whose centre's next block, not yet readied, is at tick. */
static int due(const orr_groups *g, const orr_hview *h, int k, int pairs, long long tick)
{
    const long long end = 1LL << ORR_BLOCK_MAX_LEVEL;
    const group *gr = &g->g[k];
    const long c = gr->mem[0];
    return gr->n == 2 && pairs < ORR_WATCH_PAIRS && gr->ready != tick &&
           h->tick[c] + (end >> h->level[c]) == tick && fast_pair(g, k);
}

int orr_groups_due(const orr_groups *g, const orr_hview *h, long long tick)
{
    for (int k = 0, pairs = 0; k < g->ng; pairs += g->g[k].n == 2, k++)
        if (due(g, h, k, pairs, tick))
            return 1;
    return 0;
}

orr_status orr_groups_ready(orr_groups *g, const orr_hview *h, long long tick, double t,
                            int every, int *readied, int *apart, orr_error *err)
{
    const long long end = 1LL << ORR_BLOCK_MAX_LEVEL;
    *readied = *apart = 0;
    if (every)   /* moved on together, as orr_groups_advance does */
        freeze(g);
    for (int k = 0, pairs = 0; k < g->ng; pairs += g->g[k].n == 2, k++) {
        group *gr = &g->g[k];
        const long c = gr->mem[0];
        if (every ? gr->ready == tick || h->tick[c] + (end >> h->level[c]) != tick
                  : !due(g, h, k, pairs, tick))
            continue;
        /* moved on, apart?, its perturbers anew, its step cut: before its
         * centre's block, wherever that runs (so the same steps on the
         * host and on the GPU's loop) */
        orr_status st = advance(g, h, gr, t, err);
        if (st)
            return st;
        if (apart_now(g, h, k)) {   /* parted after the block (orr_groups_update) */
            *apart = 1;
            if (every)
                continue;
            return ORR_OK;
        }
        if ((st = perturbers(g, h, gr, h->xp, err)) != ORR_OK ||
            (st = predict_group(gr, t, err)) != ORR_OK)
            return st;
        gr->step_cap = orr_groups_step_cap(g, h, c);
        gr->ready = tick;
        ++*readied;
    }
    return ORR_OK;
}

void orr_groups_watch(const orr_groups *g, const orr_hview *h, orr_block_watch *w)
{
    const long long end = 1LL << ORR_BLOCK_MAX_LEVEL;
    long long t = -1;
    w->npairs = 0;
    for (int k = 0; k < g->ng; k++) {
        const group *gr = &g->g[k];
        /* a pair's perturbers, the engine's blocks resolve (as
         * orr_groups_correct would with the members where predict_group
         * puts them, by their Kepler motion): its centre's steps alone are
         * the host's.  A larger group's perturbers are the host's too. */
        const int resolved = gr->n == 2 && w->npairs < ORR_WATCH_PAIRS;
        /* a fast pair's centre's block too, once the pair is moved on to it
         * (orr_groups_ready; after it the engine stops before its next) */
        const long c = gr->mem[0];
        const int ready = resolved && gr->ready == h->tick[c] + (end >> h->level[c]) &&
                          fast_pair(g, k);
        if (resolved) {
            orr_watch_pair *q = &w->pairs[w->npairs++];
            q->fast = ready;
            q->cap = ready ? gr->step_cap : 0;
            q->pert = gr->pert, q->npert = ready ? gr->npert : 0;
            q->centre = gr->mem[0], q->other = gr->mem[1];
            q->m[0] = gr->ar.m[0], q->m[1] = gr->ar.m[1];
            q->t0 = gr->ar.t;
            for (int d = 0; d < 3; d++) {
                q->r[d] = gr->ar.x[1][d] - gr->ar.x[0][d];
                q->v[d] = gr->ar.v[1][d] - gr->ar.v[0][d];
            }
            q->R = gr->R;
        }
        for (long p = ready ? 0 : -1; p < (resolved ? 0 : gr->npert); p++) {
            const long b = p < 0 ? gr->mem[0] : gr->pert[p];
            const long long tb = h->tick[b] + (end >> h->level[b]);
            t = t < 0 || tb < t ? tb : t;
        }
    }
    w->stop = t;
    w->pull = pull_at(g, h->G);
    /* partner's and wanted's tests are on the corrected state; on the
     * predicted one, a tenth more and a fifth */
    w->near = 1.1 * g->r_close;
    w->peri = 1.2 * unbound_reach(g);
    w->peri_bound = 1.2 * bound_reach(g);
    w->G = h->G;
    w->ndeclined = g->ndec;
    memcpy(w->declined, g->dec, sizeof(orr_watch_decline) * (size_t)g->ndec);
}

/* Whether group k has come apart: a member with no other within 2
 * r_close, or torn at by a tide above GAMMA_APART (its perturbers all
 * summed member by member, but a group so open is not what it is for). */
static int apart_now(const orr_groups *g, const orr_hview *h, int k)
{
    const group *gr = &g->g[k];
    const double rc = g->r_close;
    for (int i = 0; i < gr->n; i++) {
        double near = INFINITY;
        for (int o = 0; o < gr->n; o++) {
            if (o == i)
                continue;
            double r2 = 0;
            for (int q = 0; q < 3; q++)
                r2 += (gr->ar.x[i][q] - gr->ar.x[o][q]) * (gr->ar.x[i][q] - gr->ar.x[o][q]);
            near = fmin(near, r2);
        }
        if (near > 4 * rc * rc)
            return 1;
    }
    return !tight_group(g, h->G, gr) &&
           strongest_tide(g, h, h->xp + 4 * gr->mem[0], size_of(h, gr), mass_of(gr), gr->pert,
                          gr->nnear, k, -1, -1, 0, 0) > GAMMA_APART;
}

orr_status orr_groups_update(orr_groups *g, orr_hview *h, const char *active, long tick,
                             double t, int everyone, long *fresh, long *nfresh, orr_error *err)
{
    *nfresh = 0;
    int changed = 0, synced = 0;
    orr_status st = ORR_OK;
    for (int k = 0; k < g->ng; k++)
        g->g[k].born = 0;
    /* groups whose centre moved on: apart, or their perturbers anew */
    for (int k = 0; k < g->ng; k++) {   /* (those made ready were tested before) */
        if (!active[g->g[k].mem[0]] || g->g[k].ready == tick || !apart_now(g, h, k))
            continue;
        if ((st = sync_all(g, h, t, &synced, err)) != ORR_OK)
            return st;
        part(g, h, k, tick, fresh, nfresh);
        k--;
        changed = 1;
    }
    /* close pairs among the bodies at t: the active ones pulled hard
     * enough to have a neighbour within r_close, and the former members;
     * each with its nearest, where that one's nearest is it too (the
     * tightest pairs first: a binary is not split by a body passing one
     * of its members), and again with the groups so made */
    const double pull_min = pull_at(g, h->G);
    for (int pass = 0; pass < ORR_AR_MAX; pass++) {
        int merged_any = 0;
        at_tick(g, h, tick);
        for (long kb = 0; kb < g->nat; kb++) {
            const long b = g->at[kb];
            if (h->tick[b] != tick || h->pos[4 * b + 3] == 0)   /* merged in this pass */
                continue;
            int candidate = 0;
            for (long k = 0; k < *nfresh && !candidate; k++)
                candidate = fresh[k] == b;
            const double *ab = h->a + 3 * b;
            if (!candidate && !everyone &&
                sqrt(ab[0] * ab[0] + ab[1] * ab[1] + ab[2] * ab[2]) < pull_min)
                continue;
            const long o = partner(g, h, b, tick);
            if (o < 0 || partner(g, h, o, tick) != b ||
                !wanted(g, h, b, o, declined(g, b, o, tick)))
                continue;
            int merged = 0;
            g->grid = 0;   /* the bodies move: the cells are stale */
            if ((st = sync_all(g, h, t, &synced, err)) != ORR_OK)
                return st;
            if ((st = merge(g, h, b, o, t, fresh, nfresh, &merged, err)) != ORR_OK)
                return st;
            merged_any = merged_any || merged;
        }
        changed = changed || merged_any;
        if (!merged_any)
            break;
    }
    /* a group just formed beside a body that did not join it, whose tide
     * is above GAMMA_FORM, is taken back: it would come apart at its
     * centre's next step and form again, step after step, its members
     * restarting the block steps each time (a 64-body cluster lost 2.5e-3
     * of its energy in 1/128 time unit so) */
    for (int k = 0; k < g->ng; k++) {
        group *gr = &g->g[k];
        if (!gr->born)
            continue;
        if ((st = perturbers(g, h, gr, h->xp, err)) != ORR_OK)
            return st;
        if (tight_group(g, h->G, gr))
            continue;
        long by;
        const double tide = strongest_tide_of(g, h, h->xp + 4 * gr->mem[0], size_of(h, gr),
                                              mass_of(gr), gr->pert, gr->nnear, k, -1, -1, 0, 0,
                                              &by);
        if (tide <= GAMMA_FORM)
            continue;
        if (gr->n == 2) {   /* not formed again while that body holds it apart */
            double r[3], v[3];
            relative(gr, r, v);
            decline(g, h, gr->mem[0], gr->mem[1], h->xp + 4 * gr->mem[0],
                    h->vp + 3 * gr->mem[0], mass_of(gr), size_of(h, gr),
                    sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]), by, tide, tick);
        }
        part(g, h, k, tick, fresh, nfresh);
        k--;
    }
    /* every group at t with its perturbers anew where anything changed, else
     * those whose centre moved and was not made ready before its block */
    freeze(g);
    for (int k = 0; k < g->ng; k++) {
        group *gr = &g->g[k];
        if (!changed && (!active[gr->mem[0]] || gr->ready == tick))
            continue;
        st = advance(g, h, gr, t, err);
        if (!st)
            st = perturbers(g, h, gr, h->xp, err);
        if (!st)
            st = predict_group(gr, t, err);
        if (st)
            return st;
    }
    return ORR_OK;
}

orr_status orr_groups_resolve(orr_groups *g, orr_hview *h, double t, orr_error *err)
{
    freeze(g);
    for (int k = 0; k < g->ng; k++) {
        orr_status st = advance(g, h, &g->g[k], t, err);
        if (st)
            return st;
    }
    for (int k = 0; k < g->ng; k++)
        resolve_group(g, h, k);
    return ORR_OK;
}

double orr_groups_block_cap(const orr_groups *g, const orr_hview *h, long i, long long tick)
{
    const int k = g->gid[i];
    if (k >= 0 && g->g[k].mem[0] == i && g->g[k].ready == tick)
        return g->g[k].step_cap;
    return orr_groups_step_cap(g, h, i);
}

double orr_groups_step_cap(const orr_groups *g, const orr_hview *h, long i)
{
    const int k = g->gid[i];
    if (k < 0 || g->g[k].mem[0] != i)
        return INFINITY;
    const group *gr = &g->g[k];
    const double s = size_of(h, gr), M = mass_of(gr);
    /* the tide (strongest_tide's) and its time: each near perturber's
     * distance over its speed and its free-fall time, where its own tide
     * is above GAMMA_STEP; the shortest such time of every perturber, near
     * or far, its passage */
    double gam = 0, ttide = INFINITY, tpass = INFINITY;
    for (long p = 0; p < gr->npert; p++) {
        const long b = gr->pert[p];
        const double m = h->pos[4 * b + 3];
        double d2 = 0, u2 = 0;
        for (int q = 0; q < 3; q++) {
            const double d = h->xp[4 * b + q] - h->xp[4 * i + q];
            const double u = h->vp[3 * b + q] - h->vp[3 * i + q];
            d2 += d * d, u2 += u * u;
        }
        const double d = sqrt(d2), gk = 2 * m * s * s * s / (M * d2 * d);
        const double tk = fmin(u2 > 0 ? d / sqrt(u2) : INFINITY, sqrt(d2 * d / (h->G * (M + m))));
        if (gk >= g->gamma)   /* (a body of no mass, or too light to matter, passes unheeded) */
            tpass = fmin(tpass, tk);
        if (p >= gr->nnear)
            continue;
        gam = fmax(gam, gk);
        if (gk > GAMMA_STEP)
            ttide = fmin(ttide, tk);
    }
    const double pass = PASS_FRACTION * sqrt(h->eta / PASS_ETA) * tpass;
    if (gam <= GAMMA_STEP)
        return pass;
    double v2 = 0;   /* the members' speed about the centre, at most */
    for (int m = 0; m < gr->n; m++)
        v2 = fmax(v2, gr->ar.v[m][0] * gr->ar.v[m][0] + gr->ar.v[m][1] * gr->ar.v[m][1] +
                          gr->ar.v[m][2] * gr->ar.v[m][2]);
    const double tdyn = fmin(sqrt(s * s * s / (h->G * M)), v2 > 0 ? s / sqrt(v2) : INFINITY);
    return fmin(STEP_FRACTION * fmin(tdyn, ttide) * (gam > GAMMA_STRONG ? sqrt(GAMMA_STRONG / gam) : 1),
                pass);
}
