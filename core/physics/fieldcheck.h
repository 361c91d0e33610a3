/* fieldcheck: an external field checked against itself, as lawcheck
 * checks a force law: its accel snippet's a against -grad Phi of its
 * potential snippet (central differences in x, y and z), and its jerk
 * snippet's j against the derivative of a along a straight path through
 * space and time, d/dtau a(x + v tau, t + tau) (central differences in
 * tau), at points spread over radii evenly in log r and over directions,
 * on the CPU backend in double (the field compiled as a simulation
 * compiles it: one body of mass 1, the pair forces none).  A snippet that
 * disagrees is named with where and by how much. */
#ifndef ORR_FIELDCHECK_H
#define ORR_FIELDCHECK_H

#include "err.h"
#include "field.h"

typedef struct {
    double t;               /* the time of the check (0.3: a field's t enters) */
    double rmin, rmax;      /* distances from the origin, evenly in log r (0.01 to 100) */
    int samples;            /* how many points (41) */
    double tol;             /* the largest relative difference passed (1e-6) */
} orr_fieldcheck_opts;

void orr_fieldcheck_default(orr_fieldcheck_opts *o);

typedef struct {
    int accel_checked;      /* 0: no potential snippet to check a against */
    int jerk_checked;       /* 0: no jerk snippet */
    double accel_err, jerk_err;   /* the largest relative difference (|a - b| over the
                                     larger of |a|, |b|, per point as vectors) */
    double accel_at[3], jerk_at[3];   /* where */
    int compared, skipped;  /* points compared; left out (not finite, or not smooth there) */
    int ok;
    char message[640];      /* "" when ok; else what disagrees, where and by how much */
} orr_fieldcheck_result;

/* Checks field f (G the simulation's) as above.  ORR_ERR_ARG for options
 * out of range and the field's own errors (compiling it); a field that
 * fails is ORR_OK with r->ok 0 and r->message. */
orr_status orr_field_check(const orr_field *f, double G, const orr_fieldcheck_opts *o,
                           orr_fieldcheck_result *r, orr_error *err);

#endif
