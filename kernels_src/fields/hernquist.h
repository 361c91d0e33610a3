/* hernquist: Hernquist's (1990) sphere of mass M and scale length a,
 *   Phi = -G M / (r + a). */
//@field Hernquist sphere: Phi = -G M / (r + a)
//@param M 1 the mass
//@param a 1 the scale length
//@expr
-G*M/(r + a)
