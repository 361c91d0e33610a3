/* gravity_spline: Newtonian gravity with the compact cubic-spline softening
 * of GADGET (Springel 2005, eq. 4; the kernel of Monaghan & Lattanzio 1985).
 * The spline length is h = 2.8 eps, so the potential at zero separation is
 * -G m / eps as for Plummer softening of length eps, and the force is exactly
 * Newtonian beyond h.  With q = r / h:
 *   q < 1/2:  a = G m_j (x_j - x_i) / h^3 (32/3 + q^2 (32 q - 38.4))
 *             phi = G m_i m_j / h (-2.8 + q^2 (16/3 + q^2 (6.4 q - 9.6)))
 *   q < 1:    a = G m_j (x_j - x_i) / h^3 (64/3 - 48 q + 38.4 q^2 - 32/3 q^3 - 1/(15 q^3))
 *             phi = G m_i m_j / h (-3.2 + 1/(15 q) + q^2 (32/3 + q (-16 + q (9.6 - 32/15 q))))
 *   q >= 1:   Newtonian.
 * The constants are the exact fractions (GADGET writes them as 13-digit
 * decimals), so the force is exactly minus the gradient of the potential. */
//@law Newtonian gravity with GADGET's cubic-spline softening (h = 2.8 eps; Newtonian beyond h)
//@scale G
//@finite_at_zero
//@pair
const real h = (real)2.8 * eps, h2 = h * h, hinv = h > 0 ? (real)1 / h : (real)0;
if (d2 >= h2) {
    f = mj * orr_rsqrt3_nz(d2);
} else {
    real q = orr_sqrt(d2) * hinv, q2 = q * q, hinv3 = hinv * hinv * hinv;
    if (q < (real)0.5)
        f = mj * hinv3 * ((real)(32.0 / 3.0) + q2 * ((real)32 * q - (real)38.4));
    else
        f = mj * hinv3 * ((real)(64.0 / 3.0) - (real)48 * q + (real)38.4 * q2 -
                          (real)(32.0 / 3.0) * q2 * q - (real)(1.0 / 15.0) / (q2 * q));
}
//@jerk
const real h = (real)2.8 * eps, h2 = h * h, hinv = h > 0 ? (real)1 / h : (real)0;
if (d2 >= h2) {
    const real ir = orr_rsqrt_nz(d2);
    g = (real)-1.5 * f * ir * ir;
} else {
    real q = orr_sqrt(d2) * hinv, hinv5 = hinv * hinv * hinv * hinv * hinv;
    if (q < (real)0.5)
        g = mj * hinv5 * ((real)48 * q - (real)38.4);
    else
        g = mj * hinv5 * ((real)38.4 - (real)24 / q - (real)16 * q +
                          (real)0.1 / (q * q * q * q * q));
}
//@potential
const real h = (real)2.8 * eps, h2 = h * h, hinv = h > 0 ? (real)1 / h : (real)0;
if (d2 >= h2) {
    u = -(mi * mj) * orr_rsqrt_nz(d2);
} else {
    real q = orr_sqrt(d2) * hinv, q2 = q * q, w;
    if (q < (real)0.5)
        w = (real)-2.8 + q2 * ((real)(16.0 / 3.0) + q2 * ((real)6.4 * q - (real)9.6));
    else
        w = (real)-3.2 + (real)(1.0 / 15.0) / q +
            q2 * ((real)(32.0 / 3.0) + q * ((real)-16 + q * ((real)9.6 - (real)(32.0 / 15.0) * q)));
    u = (mi * mj) * hinv * w;
}
