/* logarithmic: the logarithmic halo (Binney & Tremaine 2008, eq. 2.71;
 * galpy's LogarithmicHaloPotential), flat rotation curve v0 outside the
 * core rc, flattened by q along z:
 *   Phi = v0^2 / 2 log(x^2 + y^2 + (z / q)^2 + rc^2). */
//@field logarithmic halo: Phi = v0^2 / 2 log(R^2 + (z/q)^2 + rc^2)
//@param v0 1 the circular velocity far out
//@param rc 0.1 the core radius
//@param q 1 the flattening along z
//@expr
v0^2/2*log(x^2 + y^2 + (z/q)^2 + rc^2)
