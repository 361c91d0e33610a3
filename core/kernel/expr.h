/* expr: force laws from an energy, external fields from a potential.  A pair energy written as an expression
 * (OpenMM's custom-force style) is parsed, differentiated symbolically and
 * emitted as the C snippets of a hand-written law (law.h): the potential
 * u = E, the pair's f = (2 / m_i) dE/d(r2) and the jerk's g =
 * (2 / m_i) d2E/d(r2)^2, r2 = d2 + eps^2 being the softened squared
 * separation (so the softening enters as in a hand-written law) and r its
 * square root.  The language:
 *
 *   numbers (1, 2.5, 1e-3), names, + - * / ^ (right-associative), unary -,
 *   parentheses; functions sqrt exp log abs erf erfc tanh step(x) (1 where
 *   x >= 0, else 0), min max (2 arguments), select(c, a, b) (a where
 *   c != 0, else b); the energy first, then intermediate values after
 *   ';':  "4*eps0*(s^12 - s^6); s = sigma/r"  (each may use the others,
 *   not itself).
 *
 * Names: r, r2, the law's params (baked or runtime) and attributes
 * (NAME_i, NAME_j), mi, mj, G, eps, and the intermediates.  Errors name
 * the place in the expression ("energy:1:14: unknown name 'sigm' ...").
 * The derivative of step, select's condition, abs at 0 and min/max where
 * they switch is taken as 0 / one-sided (the energy's pieces meet there).
 * Common subexpressions are shared within each snippet (one temporary per
 * distinct node); constants are folded and written as exact hex floats. */
#ifndef ORR_EXPR_H
#define ORR_EXPR_H

#include "err.h"
#include "law.h"

/* The snippets of law's energy expression: *pair, *potential and *jerk
 * (heap strings, the caller frees them), resolving names against law's
 * params and attributes.  ORR_ERR_ARG with the place in the expression. */
orr_status orr_expr_law(const orr_law *law, const char *energy, char **pair, char **potential,
                        char **jerk, orr_error *err);

/* An external field from its potential per unit mass (field.h): the same
 * language, with the names x, y, z, t (the body's coordinates and the
 * time), r2 = x^2 + y^2 + z^2 and r = sqrt(r2) (not softened: a power of
 * r2 below 0 is 0 at the origin), G, the field's params and the
 * intermediates; and the functions gammainc(s, x) and gammaincc(s, x), the
 * lower and upper incomplete gamma functions (not regularised) of a
 * constant order s > 0.  The snippets: *potential "phi = Phi;", *accel
 * "ax = -dPhi/dx; ..." and *jerk "jx = ...;", the derivative of the
 * acceleration along the motion (x + vx tau, ..., t + tau), which reuses
 * the accel snippet's temporaries (it is placed inside the accel's block,
 * orr_fieldset_emit).  Errors: "potential:1:7: ...". */
struct orr_field;
orr_status orr_expr_field(const struct orr_field *field, const char *potential, char **accel,
                          char **pot, char **jerk, orr_error *err);

#endif
