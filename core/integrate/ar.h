/* ar: algorithmic regularisation of a few bodies under their own gravity,
 * the method close pairs and compact groups will leave the block steps for
 * (issue 29; this is its integrator, standalone).
 *
 * The logarithmic-Hamiltonian leapfrog (Mikkola & Tanikawa 1999; Preto &
 * Tremaine 1999): in a fictitious time s, the drift advances the positions
 * and the time by dt = ds / (T + B) and the kick the velocities by dt = ds /
 * U, where T is the kinetic energy, U = sum G m_i m_j / r_ij the force
 * function and B = -E the binding energy (constant without perturbations).
 * For two bodies it follows a Kepler orbit of any eccentricity with no
 * error in its shape (only in the time along it), and a step costs the same
 * whatever the bodies' separation: pericentres at 1e-3 of the semi-major
 * axis take no more steps than the rest.  Its steps are made exact by
 * Gragg-Bulirsch-Stoer extrapolation (Mikkola & Merritt 2006, 2008: AR-CHAIN):
 * a step of s is taken with 2, 4, 6, ... leapfrog substeps and the results
 * extrapolated to zero substep (the leapfrog is time-symmetric: in h^2) until
 * two successive extrapolations agree within the tolerance.  Positions are
 * kept about the centre of mass, whose uniform motion is added back on
 * output (AR-CHAIN's chain of separations, which keeps a close pair's
 * digits in a wide group, is not done yet).
 *
 * Exact output times: the last step's s is found by the secant method on
 * t(s), so orr_ar_advance ends at t_end to rounding. */
#ifndef ORR_AR_H
#define ORR_AR_H

#include "err.h"

#define ORR_AR_MAX 16   /* bodies */

typedef struct orr_ar orr_ar;

/* An external perturbation of a group's internal motion (issue 29: the
 * tides of the bodies around a group in the block steps): the accelerations
 * f[3n] of its bodies at time t, their positions x[3n] about the centre of
 * mass, the centre's own acceleration taken out by the caller. */
typedef void (*orr_ar_perturb)(void *ctx, double t, const orr_ar *a, const double *x,
                               double *f);

struct orr_ar {
    int n;
    double G;
    double m[ORR_AR_MAX];
    double x[ORR_AR_MAX][3], v[ORR_AR_MAX][3];   /* about the centre of mass */
    double com_x[3], com_v[3];                   /* the centre of mass's (moving) */
    double t;           /* the time (the steps' sum is t - tc: Kahan's compensation, so
                           that steps near t's rounding do not drift its phase) */
    double tc;
    double B;           /* -E, the binding energy */
    double ds;          /* the next step in s (0: from the state) */
    double tol;         /* the extrapolation's relative tolerance (1e-14) */
    long steps;         /* accepted steps */
    long kicks;         /* force evaluations */
    long rejected;      /* steps taken again smaller */
    /* with a perturbation (NULL: none) the kicks add it and B follows the
     * work it does, dB/dt = -sum m v.f (Mikkola & Aarseth 2002: the mean
     * of a kick's velocities before and after, so the leapfrog stays
     * time-symmetric); the centre of mass then stays where it is (its
     * motion is the caller's: com_x, com_v unused) */
    orr_ar_perturb perturb;
    void *perturb_ctx;
};

/* n bodies (2 .. ORR_AR_MAX): masses m[n] (positive), positions pos[3n],
 * velocities vel[3n], at time t; G > 0.  Errors name what is wrong. */
orr_status orr_ar_init(orr_ar *a, int n, double G, const double *m, const double *pos,
                       const double *vel, double t, orr_error *err);

/* Advances to t_end >= a->t exactly (to rounding). */
orr_status orr_ar_advance(orr_ar *a, double t_end, orr_error *err);

/* The bodies' positions and velocities (absolute, the centre of mass's
 * motion added): pos[3n], vel[3n]. */
void orr_ar_state(const orr_ar *a, double *pos, double *vel);

/* The energy T - U now. */
double orr_ar_energy(const orr_ar *a);

#endif
