/* point_mass: the Kepler potential of a mass M at the origin,
 *   Phi = -G M / r,
 * its acceleration -G M x / r^3 (0 at the origin itself). */
//@field a point mass M at the origin: Phi = -G M / r
//@param M 1 the mass
//@expr
-G*M/r
