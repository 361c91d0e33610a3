/* nfw: the Navarro-Frenk-White halo, rho = rho0 / ((r/a) (1 + r/a)^2),
 *   Phi = -G M log(1 + r/a) / r,   M = 4 pi rho0 a^3
 * (galpy's NFWPotential with amp = G M).  log(1 + u) / u with u = r/a is
 * its series 1 - u/2 + u^2/3 - ... (to u^11, below 1e-16 relative) where
 * u < 0.05: the log form's derivative loses 2/u of its digits there to
 * cancellation, and it is 0/0 at the centre. */
//@field NFW halo: Phi = -G M log(1 + r/a) / r (M = 4 pi rho0 a^3)
//@param M 1 the mass scale 4 pi rho0 a^3
//@param a 1 the scale radius
//@expr
-G*M/a*select(step(u - 0.05), log(1 + u)/u, s)
; u = r/a
; s = 1 - u*(1/2 - u*(1/3 - u*(1/4 - u*(1/5 - u*(1/6 - u*(1/7 - u*(1/8 - u*(1/9 - u*(1/10 - u*(1/11 - u/12))))))))))
