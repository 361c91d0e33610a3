/* lennard_jones: the 12-6 Lennard-Jones pair force, cut off at
 * rc = cutoff * sigma, with the potential shifted so that it is zero at rc
 * (the force is not shifted).  Softening does not apply: the r^-12 wall keeps
 * bodies apart.  The acceleration is force over mass (m > 0).
 *   phi(r)  = 4 epsilon ((sigma/r)^12 - (sigma/r)^6) - phi_LJ(rc)   for r < rc, else 0
 *   a_i    += -24 epsilon (2 (sigma/r)^12 - (sigma/r)^6) / (m_i r^2) (x_j - x_i)
 * The force is zero at r = 2^(1/6) sigma, repulsive inside, attractive out to rc.
 * In a periodic box keep rc below half the box length. */
//@law Lennard-Jones 12-6, cut off at cutoff*sigma and energy-shifted
//@param epsilon 1 depth of the potential well
//@param sigma 1 distance at which the unshifted potential is zero
//@param cutoff 2.5 cut-off radius in units of sigma
//@pair
const real s2 = sigma * sigma, rc2 = cutoff * cutoff * s2, inv_mi = (real)1 / mi;
if (d2 < rc2) {
    real sr2 = s2 / d2, sr6 = sr2 * sr2 * sr2;
    f = -((real)24 * epsilon) * sr6 * ((real)2 * sr6 - (real)1) / d2 * inv_mi;
}
//@potential
const real s2 = sigma * sigma, rc2 = cutoff * cutoff * s2;
if (d2 < rc2) {
    real sr2 = s2 / d2, sr6 = sr2 * sr2 * sr2;
    real sc2 = (real)1 / (cutoff * cutoff), sc6 = sc2 * sc2 * sc2;
    u = (real)4 * epsilon * (sr6 * (sr6 - (real)1) - sc6 * (sc6 - (real)1));
}
