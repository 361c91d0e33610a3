/* diag: cluster diagnostics (see diag.h): a k-d tree for the k nearest
 * neighbours, Casertano & Hut densities, Lagrangian radii, the half-mass
 * relaxation time. */
#include "diag.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LEAF 8
#define MAX_K 64
#define MAX_COORD 1e100   /* |x|, |y|, |z|: squared distances stay far from overflow */

static const double default_fractions[] = {0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9};

void orr_diag_options_default(orr_diag_options *o)
{
    memset(o, 0, sizeof *o);
    o->k = 6;
    o->about_density = 1;
    o->G = 1;
    o->gamma = 0.11;
}

/* ---- k-d tree ---------------------------------------------------------------- */

typedef struct {
    const double *pos;
    long *idx;       /* the bodies, reordered so every node is a contiguous range */
    long *lo, *hi;   /* node ranges; node 0 is the root, children 2i+1, 2i+2 */
    int *axis;       /* split axis, -1 for a leaf */
    double *split;   /* split coordinate */
    long nodes;
} kdtree;

static double coord(const kdtree *t, long i, int a)
{
    return t->pos[4 * i + a];
}

/* Quickselect: idx[lo..hi) partially ordered so idx[mid] has the median
 * coordinate on axis a (ties by index, so the tree does not depend on luck). */
static int less(const kdtree *t, long i, long j, int a)
{
    double x = coord(t, i, a), y = coord(t, j, a);
    return x < y || (x == y && i < j);
}

static void select_mid(kdtree *t, long lo, long hi, long mid, int a)
{
    long *v = t->idx;
    while (hi - lo > 1) {
        long p = v[lo + (hi - lo) / 2], i = lo, j = hi - 1;
        while (i <= j) {
            while (less(t, v[i], p, a))
                i++;
            while (less(t, p, v[j], a))
                j--;
            if (i <= j) {
                long s = v[i];
                v[i] = v[j];
                v[j] = s;
                i++;
                j--;
            }
        }
        if (mid <= j)
            hi = j + 1;
        else if (mid >= i)
            lo = i;
        else
            return;
    }
}

static void build(kdtree *t, long node, long lo, long hi)
{
    t->lo[node] = lo;
    t->hi[node] = hi;
    t->axis[node] = -1;
    if (hi - lo <= LEAF || 2 * node + 2 >= t->nodes)
        return;
    double mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (long k = lo; k < hi; k++)
        for (int a = 0; a < 3; a++) {
            double x = coord(t, t->idx[k], a);
            mn[a] = x < mn[a] ? x : mn[a];
            mx[a] = x > mx[a] ? x : mx[a];
        }
    int a = 0;
    for (int d = 1; d < 3; d++)
        if (mx[d] - mn[d] > mx[a] - mn[a])
            a = d;
    long mid = lo + (hi - lo) / 2;
    select_mid(t, lo, hi, mid, a);
    t->axis[node] = a;
    t->split[node] = coord(t, t->idx[mid], a);
    build(t, 2 * node + 1, lo, mid);
    build(t, 2 * node + 2, mid, hi);
}

static void tree_free(kdtree *t)
{
    free(t->idx), free(t->lo), free(t->hi), free(t->axis), free(t->split);
}

static orr_status tree_make(kdtree *t, const double *pos, long n, orr_error *err)
{
    memset(t, 0, sizeof *t);
    t->pos = pos;
    t->nodes = 1;
    while (t->nodes < 4 * (n / LEAF + 1))
        t->nodes *= 2;
    t->idx = malloc(sizeof(long) * (size_t)n);
    t->lo = malloc(sizeof(long) * (size_t)t->nodes);
    t->hi = malloc(sizeof(long) * (size_t)t->nodes);
    t->axis = malloc(sizeof(int) * (size_t)t->nodes);
    t->split = malloc(sizeof(double) * (size_t)t->nodes);
    if (!t->idx || !t->lo || !t->hi || !t->axis || !t->split) {
        tree_free(t);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory for the neighbour tree of %ld bodies",
                        n);
    }
    for (long i = 0; i < n; i++)
        t->idx[i] = i;
    for (long k = 0; k < t->nodes; k++)
        t->axis[k] = -2;   /* unused */
    build(t, 0, 0, n);
    return ORR_OK;
}

/* The k nearest of body q: a sorted list (d2[], who[]) of at most k. */
typedef struct {
    int k, count;
    double d2[MAX_K];
    long who[MAX_K];
} nearest;

static void offer(nearest *b, double d2, long j)
{
    if (b->count == b->k && !(d2 < b->d2[b->k - 1] || (d2 == b->d2[b->k - 1] && j < b->who[b->k - 1])))
        return;
    int at = b->count < b->k ? b->count++ : b->k - 1;
    while (at > 0 && (d2 < b->d2[at - 1] || (d2 == b->d2[at - 1] && j < b->who[at - 1]))) {
        b->d2[at] = b->d2[at - 1];
        b->who[at] = b->who[at - 1];
        at--;
    }
    b->d2[at] = d2;
    b->who[at] = j;
}

static void search(const kdtree *t, long node, long q, const double *x, nearest *b)
{
    if (t->axis[node] == -1) {
        for (long k = t->lo[node]; k < t->hi[node]; k++) {
            long j = t->idx[k];
            if (j == q)
                continue;
            double dx = coord(t, j, 0) - x[0], dy = coord(t, j, 1) - x[1],
                   dz = coord(t, j, 2) - x[2];
            offer(b, dx * dx + dy * dy + dz * dz, j);
        }
        return;
    }
    const int a = t->axis[node];
    const double d = x[a] - t->split[node];
    long near = d < 0 ? 2 * node + 1 : 2 * node + 2, far = d < 0 ? 2 * node + 2 : 2 * node + 1;
    search(t, near, q, x, b);
    if (b->count < b->k || d * d <= b->d2[b->k - 1])
        search(t, far, q, x, b);
}

/* orr_diag_knn with the masses of the neighbours summed times mscale (a
 * power of two: the cluster diagnostics scale them near 1, so no sum
 * overflows). */
static orr_status knn(const double *pos, long n, int k, double mscale, double *rk, double *mk,
                      orr_error *err)
{
    if (k < 2 || k > MAX_K || k >= n)
        return orr_fail(err, ORR_ERR_ARG, "k must be from 2 to %d and less than the %ld bodies "
                        "(got %d)", MAX_K, n, k);
    kdtree t;
    orr_status st = tree_make(&t, pos, n, err);
    if (st)
        return st;
    for (long q = 0; q < n; q++) {
        nearest b;
        b.k = k;
        b.count = 0;
        search(&t, 0, q, pos + 4 * q, &b);
        rk[q] = sqrt(b.d2[k - 1]);
        if (mk) {
            double m = 0;
            for (int j = 0; j < k - 1; j++)
                m += pos[4 * b.who[j] + 3] * mscale;
            mk[q] = m;
        }
    }
    tree_free(&t);
    return ORR_OK;
}

orr_status orr_diag_knn(const double *pos, long n, int k, double *rk, double *mk, orr_error *err)
{
    return knn(pos, n, k, 1, rk, mk, err);
}

/* ---- the diagnostics ------------------------------------------------------------ */

typedef struct {
    double r2, m;
} shell;

static int by_r2(const void *a, const void *b)
{
    const shell *x = a, *y = b;
    return x->r2 < y->r2 ? -1 : x->r2 > y->r2;
}

orr_status orr_diag_cluster(const double *pos, long n, const orr_diag_options *o, orr_diag *out,
                            orr_error *err)
{
    orr_diag_options d;
    orr_diag_options_default(&d);
    if (!o)
        o = &d;
    memset(out, 0, sizeof *out);
    const double *fr = o->fractions ? o->fractions : default_fractions;
    const int nf = o->fractions ? o->nfractions
                                : (int)(sizeof default_fractions / sizeof default_fractions[0]);
    if (nf < 1 || nf > ORR_DIAG_MAX_FRACTIONS)
        return orr_fail(err, ORR_ERR_ARG, "give 1 to %d mass fractions (got %d)",
                        ORR_DIAG_MAX_FRACTIONS, nf);
    for (int f = 0; f < nf; f++)
        if (!(fr[f] > 0 && fr[f] <= 1))
            return orr_fail(err, ORR_ERR_ARG, "mass fraction %d is %g: fractions must be in (0, 1]",
                            f + 1, fr[f]);
    if (!(o->G > 0) || !(o->gamma > 0))
        return orr_fail(err, ORR_ERR_ARG, "G and gamma must be positive (got %g, %g)", o->G,
                        o->gamma);
    if (n < 3 || o->k < 2 || o->k >= n)
        return orr_fail(err, ORR_ERR_ARG, "the density needs 2 <= k < n: k = %d, n = %ld",
                        o->k, n);
    double mmax = 0;
    for (long i = 0; i < n; i++) {
        const double *x = pos + 4 * i;
        if (!(x[3] > 0) || !isfinite(x[3]) || !isfinite(x[0]) || !isfinite(x[1]) ||
            !isfinite(x[2]))
            return orr_fail(err, ORR_ERR_ARG, "body %ld has mass %g at (%g, %g, %g): cluster "
                            "diagnostics need positive masses and finite positions", i + 1, x[3],
                            x[0], x[1], x[2]);
        if (fabs(x[0]) > MAX_COORD || fabs(x[1]) > MAX_COORD || fabs(x[2]) > MAX_COORD)
            return orr_fail(err, ORR_ERR_ARG, "body %ld is at (%g, %g, %g): cluster diagnostics "
                            "need coordinates of at most %g in magnitude (squared distances "
                            "would overflow)", i + 1, x[0], x[1], x[2], MAX_COORD);
        mmax = x[3] > mmax ? x[3] : mmax;
    }
    /* masses in units of a power of two near the largest (exact: every
     * result is as without it), so that no sum of them overflows; densities
     * as logarithms and weights relative to the largest, so that neither
     * tiny separations nor huge masses overflow */
    int e;
    frexp(mmax, &e);
    const double mscale = ldexp(1, e < -1000 ? 1000 : -e);
    double *rk = malloc(sizeof(double) * (size_t)n), *mk = malloc(sizeof(double) * (size_t)n);
    shell *sh = malloc(sizeof(shell) * (size_t)n);
    orr_status st = rk && mk && sh ? knn(pos, n, o->k, mscale, rk, mk, err)
                                   : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (!st) {
        out->n = n;
        /* centres as a body's position plus a weighted mean of offsets from
         * it: exact for bodies on one spot, and no rounding of far-away
         * coordinates in the sums */
        double mass = 0, s1 = 0, s2 = 0, xd[3] = {0, 0, 0};
        const double *ref = pos;
        for (long i = 0; i < n; i++) {
            const double m = pos[4 * i + 3] * mscale;
            mass += m;
            for (int a = 0; a < 3; a++)
                out->com[a] += m * (pos[4 * i + a] - ref[a]);
        }
        for (int a = 0; a < 3; a++)
            out->com[a] = ref[a] + out->com[a] / mass;
        out->mass = mass / mscale;
        /* log rho_j; r_k = 0 (more than k - 1 bodies on one spot, or closer
         * than the square root of the smallest double): infinite density.
         * Then those bodies alone carry the weight, each by the mass of its
         * neighbours (the limit of equal tiny r_k), and the core density is
         * inf; else weight rho_j / max rho. */
        double lmax = -INFINITY, mkmax = 0;
        long on_spot = 0;
        for (long i = 0; i < n; i++) {   /* log rho_j into rk */
            if (rk[i] == 0) {
                on_spot++;
                mkmax = mk[i] > mkmax ? mk[i] : mkmax;
                rk[i] = INFINITY;
                continue;
            }
            rk[i] = log(mk[i]) - log(4.0 / 3.0 * M_PI) - 3 * log(rk[i]);
            lmax = rk[i] > lmax ? rk[i] : lmax;
        }
        for (long i = 0; i < n; i++) {   /* weights into rk */
            if (on_spot)
                rk[i] = rk[i] == INFINITY ? mk[i] / mkmax : 0;
            else
                rk[i] = isfinite(lmax) ? exp(rk[i] - lmax) : 0;
        }
        long top = 0;   /* the offsets from the densest body */
        for (long i = 1; i < n; i++)
            top = rk[i] > rk[top] ? i : top;
        ref = pos + 4 * top;
        for (long i = 0; i < n; i++) {
            s1 += rk[i];
            s2 += rk[i] * rk[i];
            for (int a = 0; a < 3; a++)
                xd[a] += rk[i] * (pos[4 * i + a] - ref[a]);
        }
        for (int a = 0; a < 3; a++)
            out->density_centre[a] = s1 > 0 ? ref[a] + xd[a] / s1 : out->com[a];
        double rc2 = 0;
        for (long i = 0; i < n; i++) {
            double dx = pos[4 * i] - out->density_centre[0], dy = pos[4 * i + 1] - out->density_centre[1],
                   dz = pos[4 * i + 2] - out->density_centre[2];
            rc2 += rk[i] * rk[i] * (dx * dx + dy * dy + dz * dz);
        }
        out->core_radius = s2 > 0 ? sqrt(rc2 / s2) : 0;
        /* max rho (in units of mmax) times the weighted mean of rho / max rho */
        out->core_density = on_spot ? INFINITY
                            : s1 > 0 ? exp(lmax + log(s2 / s1) - log(mscale)) : 0;
        /* Lagrangian radii */
        const double *c = o->about_density ? out->density_centre : out->com;
        for (long i = 0; i < n; i++) {
            double dx = pos[4 * i] - c[0], dy = pos[4 * i + 1] - c[1], dz = pos[4 * i + 2] - c[2];
            sh[i].r2 = dx * dx + dy * dy + dz * dz;
            sh[i].m = pos[4 * i + 3] * mscale;
        }
        qsort(sh, (size_t)n, sizeof *sh, by_r2);
        out->nfractions = nf;
        for (int f = 0; f <= nf; f++) {
            const double want = (f < nf ? fr[f] : 0.5) * mass;
            double m = 0;
            long i = 0;
            while (i < n - 1 && m + sh[i].m < want * (1 - 1e-15))
                m += sh[i++].m;
            const double r = sqrt(sh[i].r2);
            if (f < nf) {
                out->fractions[f] = fr[f];
                out->lagrangian[f] = r;
            } else {
                out->r_half = r;
            }
        }
        const double N = (double)n;
        const double lnl = log(o->gamma * N);
        /* the mean mass's root as sqrt(mass / n in units of mmax) / sqrt(mscale) */
        out->t_rh = lnl > 0 ? 0.138 * sqrt(N) * pow(out->r_half, 1.5) * sqrt(mscale) /
                                  (sqrt(mass / N) * sqrt(o->G) * lnl)
                            : INFINITY;
    }
    free(rk);
    free(mk);
    free(sh);
    return st;
}

orr_status orr_diag_groups(const double *pos, const double *vel, long n, const double *group,
                           double G, orr_diag_group *out, int max, int *count, orr_error *err)
{
    int k = 0;
    *count = 0;
    for (long i = 0; i < n; i++) {
        if (group[i] != (double)(i + 1))   /* a group's first member names it */
            continue;
        if (k == max)
            return orr_fail(err, ORR_ERR_ARG, "more than %d groups", max);
        orr_diag_group *g = &out[k++];
        memset(g, 0, sizeof *g);
        for (long j = i; j < n; j++)
            if (group[j] == (double)(i + 1)) {
                if (g->n == ORR_DIAG_GROUP_MAX)
                    return orr_fail(err, ORR_ERR_ARG, "group %ld has more than %d members",
                                    i + 1, ORR_DIAG_GROUP_MAX);
                g->members[g->n++] = j;
            }
        for (int a = 0; a < g->n; a++) {
            const long b = g->members[a];
            const double m = pos[4 * b + 3];
            g->mass += m;
            for (int q = 0; q < 3; q++)
                g->com[q] += m * pos[4 * b + q], g->com_vel[q] += m * vel[3 * b + q];
        }
        for (int q = 0; q < 3; q++)
            g->com[q] /= g->mass, g->com_vel[q] /= g->mass;
        double kin = 0, pot = 0;
        for (int a = 0; a < g->n; a++) {
            const long b = g->members[a];
            double v2 = 0;
            for (int q = 0; q < 3; q++)
                v2 += (vel[3 * b + q] - g->com_vel[q]) * (vel[3 * b + q] - g->com_vel[q]);
            kin += 0.5 * pos[4 * b + 3] * v2;
            for (int c = a + 1; c < g->n; c++) {
                const long o = g->members[c];
                double r2 = 0;
                for (int q = 0; q < 3; q++)
                    r2 += (pos[4 * o + q] - pos[4 * b + q]) * (pos[4 * o + q] - pos[4 * b + q]);
                pot += G * pos[4 * b + 3] * pos[4 * o + 3] / sqrt(r2);
            }
        }
        g->energy = kin - pot;
        if (g->n == 2) {   /* the pair's orbit: a from the energy, e from L */
            const long b = g->members[0], o = g->members[1];
            const double m1 = pos[4 * b + 3], m2 = pos[4 * o + 3], mu = m1 * m2 / g->mass;
            double r[3], v[3], L[3];
            for (int q = 0; q < 3; q++)
                r[q] = pos[4 * o + q] - pos[4 * b + q], v[q] = vel[3 * o + q] - vel[3 * b + q];
            L[0] = r[1] * v[2] - r[2] * v[1];
            L[1] = r[2] * v[0] - r[0] * v[2];
            L[2] = r[0] * v[1] - r[1] * v[0];
            g->a = -G * m1 * m2 / (2 * g->energy);
            const double l2 = L[0] * L[0] + L[1] * L[1] + L[2] * L[2];
            const double e2 = 1 + 2 * (g->energy / mu) * l2 / (G * G * g->mass * g->mass);
            g->e = sqrt(e2 > 0 ? e2 : 0);
        }
    }
    *count = k;
    return ORR_OK;
}

void orr_diag_merge_groups(const double *pos, const double *vel, long n, const double *group,
                           double *out, double *outv, long *m)
{
    long k = 0;
    for (long i = 0; i < n; i++) {
        const long first = group ? (long)group[i] - 1 : -1;
        if (first >= 0 && first != i)
            continue;   /* a later member: in its group's centre */
        double *o = out + 4 * k, *ov = vel ? outv + 3 * k : NULL;
        k++;
        memcpy(o, pos + 4 * i, 4 * sizeof(double));
        if (ov)
            memcpy(ov, vel + 3 * i, 3 * sizeof(double));
        if (first != i)
            continue;
        double c[3] = {0, 0, 0}, cv[3] = {0, 0, 0}, M = 0;
        for (long j = i; j < n; j++)
            if ((long)group[j] - 1 == i) {
                M += pos[4 * j + 3];
                for (int q = 0; q < 3; q++) {
                    c[q] += pos[4 * j + 3] * pos[4 * j + q];
                    if (ov)
                        cv[q] += pos[4 * j + 3] * vel[3 * j + q];
                }
            }
        for (int q = 0; q < 3; q++) {
            o[q] = c[q] / M;
            if (ov)
                ov[q] = cv[q] / M;
        }
        o[3] = M;
    }
    *m = k;
}

long orr_diag_escapers(const double *pos, const double *vel, long n, const double *centre,
                       double radius, double G)
{
    double M = 0, v0[3] = {0, 0, 0};
    for (long i = 0; i < n; i++) {
        M += pos[4 * i + 3];
        for (int q = 0; q < 3; q++)
            v0[q] += pos[4 * i + 3] * vel[3 * i + q];
    }
    long count = 0;
    for (long i = 0; i < n && M > 0; i++) {
        double r2 = 0;
        for (int q = 0; q < 3; q++)
            r2 += (pos[4 * i + q] - centre[q]) * (pos[4 * i + q] - centre[q]);
        if (r2 <= radius * radius)
            continue;
        double v2 = 0, phi = 0;
        for (int q = 0; q < 3; q++)
            v2 += (vel[3 * i + q] - v0[q] / M) * (vel[3 * i + q] - v0[q] / M);
        for (long j = 0; j < n; j++) {
            if (j == i)
                continue;
            double d2 = 0;
            for (int q = 0; q < 3; q++)
                d2 += (pos[4 * j + q] - pos[4 * i + q]) * (pos[4 * j + q] - pos[4 * i + q]);
            if (d2 > 0)
                phi -= G * pos[4 * j + 3] / sqrt(d2);
        }
        count += 0.5 * v2 + phi > 0;
    }
    return count;
}
