/* lawcheck: a force law checked against itself.  Its pair snippet's f
 * against the derivative of its potential snippet's u, and its jerk
 * snippet's g against the derivative of f, by central finite differences
 * at separations sampled over a range, on the CPU backend in double (the
 * law compiled as a simulation compiles it, with its params as they are).
 * For a central law with pair energy U = scale u and d2 = |x_j - x_i|^2,
 * the acceleration -(1/m_i) dU/dx_i is scale f (x_j - x_i) with
 *
 *     scale f = (2 / m_i) dU/d(d2),      scale g = d(scale f)/d(d2),
 *
 * the softening entering both sides alike (through r2 = d2 + eps^2 as the
 * snippets use it).  A snippet that disagrees is named, with where and by
 * how much: a jerk off by a factor 2 runs Hermite silently with 190 times
 * the block steps (issue 28), a wrong sign or a missing 1/m_i breaks the
 * energy. */
#ifndef ORR_LAWCHECK_H
#define ORR_LAWCHECK_H

#include "err.h"
#include "law.h"

typedef struct {
    double eps;             /* softening length (0) */
    double mi, mj;          /* the two bodies' masses (0.6, 1.7: unequal, so a swapped
                               m_i and m_j shows) */
    double attr_i[ORR_LAW_MAX_ATTRS], attr_j[ORR_LAW_MAX_ATTRS];   /* (0.75 and 1.25) */
    double rmin, rmax;      /* separations, spaced evenly in log r (0.01 to 100) */
    int samples;            /* how many (41) */
    double tol;             /* the largest relative difference passed (1e-6) */
} orr_lawcheck_opts;

void orr_lawcheck_default(orr_lawcheck_opts *o);

typedef struct {
    int force_checked;      /* 0: no potential snippet to check f against */
    int jerk_checked;       /* 0: no jerk snippet */
    double force_err, jerk_err;   /* the largest relative difference found (0 when not
                                     checked or nothing compared) */
    double force_r, jerk_r;       /* the separation of each */
    double force_value, force_fd; /* there: scale f, and (2 / m_i) dU/d(d2) */
    double jerk_value, jerk_fd;   /* there: scale g, and d(scale f)/d(d2) */
    double newton_err;      /* the largest |m_i a_i + m_j a_j| / max(|m_i a_i|, |m_j a_j|):
                               Newton's third law (a law not symmetric in i and j) */
    double newton_r, newton_i, newton_j;   /* there: the separation, m_i a_i and -m_j a_j */
    int compared;           /* separations compared */
    int skipped;            /* separations left out: a value not finite there, or the law
                               not smooth there (a piece's edge within the difference) */
    int ok;                 /* every check passed */
    char message[640];      /* "" when ok; else what disagrees, where and by how much */
} orr_lawcheck_result;

/* Checks law (G its coupling) as above.  ORR_ERR_ARG for options out of
 * range (rmin > 0, rmax > rmin, 3 to 10000 samples, masses positive and
 * finite, eps >= 0, tol > 0), and the law's own errors (compiling it); a
 * law that fails its check is ORR_OK with r->ok 0 and r->message. */
orr_status orr_law_check(const orr_law *law, double G, const orr_lawcheck_opts *o,
                         orr_lawcheck_result *r, orr_error *err);

#endif
