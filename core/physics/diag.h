/* diag: the diagnostics collisional N-body users read every day, from the
 * bodies' positions and masses (x y z m per body, in double):
 *
 *   - the density centre and core of Casertano & Hut (1985): each body's
 *     local density from its k nearest neighbours,
 *         rho_j = (mass of the k - 1 nearest, the body excluded)
 *                 / (4/3 pi r_k^3),
 *     r_k the distance to the k-th nearest (CH85's unbiased estimator; k = 6
 *     as they chose); the density centre is the rho-weighted mean position;
 *     the core radius is the rho^2-weighted rms distance from it,
 *         r_c = sqrt(sum rho_j^2 |x_j - x_d|^2 / sum rho_j^2),
 *     and the core density the rho-weighted mean density,
 *         rho_c = sum rho_j^2 / sum rho_j
 *     (the conventions of NBODY6's core routine and of Aarseth's book);
 *   - Lagrangian radii about the density centre or the centre of mass: for
 *     a mass fraction f, the distance of the first body (nearest first) at
 *     which the enclosed mass reaches f of the total;
 *   - the half-mass radius r_h (f = 1/2) and Spitzer's (1987) half-mass
 *     relaxation time
 *         t_rh = 0.138 N^(1/2) r_h^(3/2) / (m^(1/2) G^(1/2) ln(gamma N)),
 *     m the mean mass, gamma = 0.11 (Giersz & Heggie 1994, equal masses).
 *
 * Degenerate bodies: more than k - 1 on one spot (r_k = 0) have an infinite
 * density, so they alone weigh in the density centre (each by its
 * neighbours' mass) and the core radius, and the core density is inf;
 * densities are taken as logarithms and masses scaled by a power of two,
 * so tiny separations and huge masses give finite radii (the core density
 * inf where it is beyond the double range).
 *
 * Nearest neighbours come from a k-d tree (O(n log n) to build, about
 * O(log n) per query). */
#ifndef ORR_DIAG_H
#define ORR_DIAG_H

#include "err.h"

#define ORR_DIAG_MAX_FRACTIONS 32

typedef struct {
    const double *fractions;   /* mass fractions in (0, 1], increasing or not (NULL: the
                                  defaults 0.01 0.05 0.1 0.25 0.5 0.75 0.9) */
    int nfractions;
    int k;                     /* neighbours for the local density, 2 <= k < n (6) */
    int about_density;         /* 1: Lagrangian radii about the density centre (1);
                                  0: about the centre of mass */
    double G;                  /* for t_rh (1) */
    double gamma;              /* in the Coulomb logarithm (0.11) */
} orr_diag_options;

typedef struct {
    long n;
    double mass;                        /* total */
    double com[3];                      /* centre of mass */
    double density_centre[3];
    double core_radius, core_density;
    int nfractions;
    double fractions[ORR_DIAG_MAX_FRACTIONS];
    double lagrangian[ORR_DIAG_MAX_FRACTIONS];
    double r_half;                      /* half-mass radius (about the same centre) */
    double t_rh;                        /* half-mass relaxation time */
} orr_diag;

void orr_diag_options_default(orr_diag_options *o);

/* The diagnostics of n bodies (pos: 4n, x y z m; masses positive and
 * finite, coordinates at most 1e100 in magnitude).  Errors name the option
 * or the body that is wrong. */
orr_status orr_diag_cluster(const double *pos, long n, const orr_diag_options *o, orr_diag *out,
                            orr_error *err);

/* The k-th nearest neighbour distance of every body (the body itself
 * excluded) into rk[n], and the mass of its k - 1 nearest into mk[n] (may be
 * NULL); for tests and for callers of the density estimate. */
orr_status orr_diag_knn(const double *pos, long n, int k, double *rk, double *mk,
                        orr_error *err);

/* Regularised groups (binaries, compact groups: the Hermite integrator's
 * groups.h) read from the bodies: group[i] is the number (1-based) of the
 * first member of body i's group, or 0 for a single body. */
#define ORR_DIAG_GROUP_MAX 16

typedef struct {
    int n;                               /* members */
    long members[ORR_DIAG_GROUP_MAX];    /* 0-based, ascending */
    double mass;
    double com[3], com_vel[3];           /* its centre of mass */
    double energy;                       /* internal: kinetic about the centre minus the
                                            members' mutual potential (< 0: bound) */
    double a, e;                         /* a pair's semi-major axis (< 0: unbound) and
                                            eccentricity; 0 for larger groups */
} orr_diag_group;

/* The groups of n bodies (pos 4n x y z m, vel 3n) into out[max] (*count of
 * them; more than max is an error), in the order of their first members. */
orr_status orr_diag_groups(const double *pos, const double *vel, long n, const double *group,
                           double G, orr_diag_group *out, int max, int *count, orr_error *err);

/* Bodies with group members replaced by their groups' centres of mass:
 * pos 4n into out (4 * m values: x y z mass) and, with vel, vel 3n into
 * outv (3 * m), *m of them; the cluster diagnostics of a run with
 * binaries take these. */
void orr_diag_merge_groups(const double *pos, const double *vel, long n, const double *group,
                           double *out, double *outv, long *m);

/* Escapers among n bodies (pos 4n, vel 3n): farther than `radius` from
 * centre and with positive energy, kinetic in the centre of mass's frame
 * plus the potential of all the others (summed for those far ones only). */
long orr_diag_escapers(const double *pos, const double *vel, long n, const double *centre,
                       double radius, double G);

#endif
