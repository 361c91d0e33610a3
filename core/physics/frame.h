/* frame: a frame of reference that follows a star cluster through external
 * fields (a galaxy), so that float kernels keep the cluster's parsec-scale
 * structure at kiloparsecs from the galaxy's centre.
 *
 * The frame's centre R(t) moves as a test body in the fields: its orbit is
 * integrated here, in double, by classical Runge-Kutta of order 4, each step
 * 1/1024 of the centre's dynamical time min(sqrt(|R| / |a|), |V| / |a|)
 * where it starts (or a fixed step given: at most 1/16 of that time),
 * the fields evaluated by a one-body CPU engine in double.  The orbit is
 * kept as nodes (t, R, V, a) h apart, made as they are first needed, and
 * between two nodes by the quintic that matches R, V and a at both
 * (relative error about (h / tau)^6: 1e-18 at the default step).
 *
 * The bodies' positions and velocities are relative to the centre.  Each
 * launch gets the centre's path over the times it evaluates as a quintic
 * per axis (ORR_RT_FRAME: orr_frame_slots, the engine's frame hook), and
 * each field adds a(R + x) - a(R) (its jerk likewise, at V + v and V):
 * the tidal acceleration, in double whatever the kernels' precision, so it
 * keeps 16 digits less log10(|R| / |x|), not the 7 that float positions at
 * |R| would leave of it.  A field's potential is taken at R + x: energies
 * are the galaxy's (kinetic with V + v). */
#ifndef ORR_FRAME_H
#define ORR_FRAME_H

#include "err.h"
#include "field.h"

typedef struct orr_frame orr_frame;

/* A frame in `fields` (copied; their runtime values fv[ORR_FIELD_MAX_RUNTIME];
 * G the simulation's), centred at time t on R with velocity V; step h > 0,
 * or 0 for the default.
 * Builds the one-body CPU engine (the host compiler).  Errors: fields with
 * no acceleration at R (none there: nothing to follow) need a step; a
 * non-finite R, V or field. */
orr_status orr_frame_create(orr_frame **out, const orr_fieldset *fields, const double *fv,
                            double G, double t, const double R[3], const double V[3], double h,
                            orr_error *err);
void orr_frame_destroy(orr_frame *f);

/* The centre's position, velocity and acceleration at time t (integrating
 * the orbit on to t first where it is not there yet). */
orr_status orr_frame_at(orr_frame *f, double t, double R[3], double V[3], double A[3],
                        orr_error *err);

/* The fields' runtime values changed at time t: the orbit from t on is made
 * again with them. */
orr_status orr_frame_set_field_runtime(orr_frame *f, const double *fv, double t,
                                       orr_error *err);

/* The orbit as it is made so far, for a checkpoint: count nodes of
 * ORR_FRAME_NODE doubles (t, position, velocity, acceleration), into a heap
 * array *out (free it); and a checkpoint's nodes back (the frame then
 * continues from them bit for bit). */
#define ORR_FRAME_NODE 10
orr_status orr_frame_nodes(const orr_frame *f, double **out, long *count, orr_error *err);
orr_status orr_frame_set_nodes(orr_frame *f, const double *nodes, long count, orr_error *err);

/* The orbit's given step, or the first node's default one. */
double orr_frame_step(const orr_frame *f);

/* The engine's frame hook (engine.h: orr_frame_fn; ctx an orr_frame): the
 * path over t0 .. t0 + span as ORR_FRAME_SLOTS values.  It cannot fail: an
 * orbit that cannot be made (a non-finite field) gives NaN slots, which the
 * simulation's blow-up checks catch, and the frame remembers the error
 * (orr_frame_error). */
void orr_frame_slots(void *ctx, double t0, double span, double *slots);
/* The first error orr_frame_slots met since the last call into buf (size
 * bytes; 1), cleared; 0 when there is none. */
int orr_frame_take_error(orr_frame *f, char *buf, size_t size);

#endif
