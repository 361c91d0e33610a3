/* powerlaw_cutoff: a power-law density with a Gaussian cut-off (galpy's
 * PowerSphericalPotentialwCutoff), rho = amp (1/r)^alpha exp(-(r/rc)^2),
 *   Phi = 2 pi G amp rc^(3 - alpha) (gamma(1 - alpha/2, (r/rc)^2) / rc
 *                                    - gamma(3/2 - alpha/2, (r/rc)^2) / r)
 * with gamma the lower incomplete gamma function (galpy's zero point: Phi
 * tends to 2 pi G amp rc^(2 - alpha) Gamma(1 - alpha/2) far out, not 0).
 * alpha < 2, and baked: the gamma functions' order is a constant. */
//@field power law with a Gaussian cut-off: rho = amp r^-alpha exp(-(r/rc)^2)
//@param amp 1 the density amplitude
//@param alpha 1 the inner power (below 2)
//@param rc 1 the cut-off radius
//@expr
2*3.14159265358979323846*G*amp*rc^(3 - alpha)*(gammainc(1 - alpha/2, w)/rc - gammainc(1.5 - alpha/2, w)/r)
; w = r2/rc^2
