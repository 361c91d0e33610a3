/* trial: what benchmarks (bench), the tuners (tune, htune) and verification
 * (sim:verify, --verify) share: the bodies a kernel is timed and checked on,
 * and the measures of its error against the CPU backend in double.  Below
 * the tuner and the distribution layer, so that they need nothing of
 * bench. */
#ifndef ORR_TRIAL_H
#define ORR_TRIAL_H

#include <stdint.h>
#include "err.h"
#include "kspec.h"

/* The bodies benchmarks and the tuner run on, for spec's law: laws scaled by
 * G (gravity-like) a Plummer sphere, others a uniform cube of unit mean
 * spacing (short-range laws such as Lennard-Jones see neighbours at their own
 * scale); when the law has attributes, *attr (heap, caller frees; else NULL)
 * holds deterministic values of both signs with magnitudes in [0.5, 1.5),
 * attr[a * n + i].  In float every value is rounded to float, so reference
 * and candidates see the same bodies. */
orr_status orr_trial_bodies(const orr_kspec *spec, long n, uint64_t seed, double *pos,
                            double *vel, double **attr, orr_error *err);

/* The largest per-body relative error |a - a_ref| / |a_ref| (|a - a_ref|
 * where a_ref = 0; NaN counts as infinite): the bench tables' "max rel err". */
double orr_max_rel_err(const double *acc, const double *ref, long ni);
/* The verification error: the largest |a - a_ref| / max(|a_ref|, rms |a_ref|)
 * over the ni bodies.  Like orr_max_rel_err, but a body whose net
 * acceleration is a small remainder of large cancelling terms (the centre of
 * a cluster, an ion in a neutral plasma) is judged against the typical
 * acceleration instead of its own: the tuner, sim:verify and --verify use it. */
double orr_accel_err(const double *acc, const double *ref, long ni);
/* The largest orr_accel_err a correct kernel of precision p may show
 * against the double reference: 1e-5 in float, 1e-12 in double.  sim:verify,
 * --verify and the tuner all judge by it. */
double orr_accel_tolerance(orr_precision p);

#endif
