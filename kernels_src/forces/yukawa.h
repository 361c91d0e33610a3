/* yukawa: screened (Yukawa) gravity, Plummer-softened: the Newtonian pair
 * potential times exp(-r / lambda).  It tends to plain gravity as lambda
 * grows.  With s = sqrt(|x_j - x_i|^2 + eps^2):
 *   phi_ij  = -G m_i m_j exp(-s / lambda) / s
 *   a_i    += G m_j exp(-s / lambda) (1 + s / lambda) (x_j - x_i) / s^3
 * G is the scale. */
//@law Yukawa (screened) gravity: -G m_i m_j exp(-r/lambda) / r, Plummer-softened
//@param lambda 1 screening length
//@scale G
//@finite_at_zero
//@pair
const real inv_lambda = (real)1 / lambda;
real inv = orr_rsqrt_nz(r2), x = r2 * inv * inv_lambda;
f = mj * orr_exp(-x) * ((real)1 + x) * (inv * inv * inv);
//@potential
real inv = orr_rsqrt_nz(r2);
u = -(mi * mj) * orr_exp(-r2 * inv / lambda) * inv;
