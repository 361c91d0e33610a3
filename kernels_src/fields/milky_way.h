/* milky_way: galpy's MWPotential2014 (Bovy 2015, ApJS 216, 29), the
 * sum of
 *   a bulge: power law alpha = 1.8 with a Gaussian cut-off at rc = 1.9 kpc
 *            (PowerSphericalPotentialwCutoff, normalize = 0.05),
 *   a disc:  Miyamoto-Nagai, a = 3 kpc, b = 280 pc (normalize = 0.6),
 *   a halo:  NFW, a = 16 kpc (normalize = 0.35),
 * in galpy's natural units: lengths in ro = 8 kpc, velocities in vo = 220
 * km/s, each part's amplitude set as galpy's `normalize` sets it (its
 * radial force at R = ro, z = 0 that fraction of vo^2 / ro: the three
 * together give a circular velocity vo at ro).  Phi(x) = vo^2
 * Phi_galpy(x / ro).  ro and vo are the simulation's units of 8 kpc and
 * 220 km/s: with physical units (units = {...}) they follow from them
 * (//@unit); without, they are 1 (galpy's natural units). */
//@field galpy's MWPotential2014 (bulge + disc + halo); ro = 8 kpc, vo = 220 km/s
//@param ro 1 8 kpc in the simulation's length unit
//@unit ro length 2.4685420651930938e22
//@param vo 1 220 km/s in the simulation's velocity unit
//@unit vo velocity 2.2e7
//@expr
vo^2*(bulge + disc + halo)
; X = x/ro ; Y = y/ro ; Z = z/ro ; R2 = r2/ro^2 ; R = sqrt(R2)
; pi = 3.14159265358979323846
; al = 1.8 ; rc = 1.9/8
; ab = 0.05/(2*pi*rc^(3 - al)*gammainc(1.5 - al/2, 1/rc^2))
; bulge = 2*pi*ab*rc^(3 - al)*(gammainc(1 - al/2, R2/rc^2)/rc - gammainc(1.5 - al/2, R2/rc^2)/R)
; ad = 3/8 ; bd = 0.28/8
; disc = -0.6*(1 + (ad + bd)^2)^1.5/sqrt(X^2 + Y^2 + (ad + sqrt(Z^2 + bd^2))^2)
; ah = 2
; u = R/ah
; halo = -0.35/(log(1 + 1/ah) - 1/(1 + ah))/ah*select(step(u - 0.05), log(1 + u)/u, s)
; s = 1 - u*(1/2 - u*(1/3 - u*(1/4 - u*(1/5 - u*(1/6 - u*(1/7 - u*(1/8 - u*(1/9 - u*(1/10 - u*(1/11 - u/12))))))))))
