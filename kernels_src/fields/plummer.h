/* plummer: Plummer's sphere of mass M and scale length b,
 *   Phi = -G M / sqrt(r^2 + b^2). */
//@field Plummer sphere: Phi = -G M / sqrt(r^2 + b^2)
//@param M 1 the mass
//@param b 1 the scale length
//@expr
-G*M/sqrt(r2 + b^2)
