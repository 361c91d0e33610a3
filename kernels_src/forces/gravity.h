/* gravity: Plummer-softened Newtonian gravity (the default law).
 *   a_i    += G m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2)
 *   phi_ij  = -G m_i m_j / sqrt(|x_j - x_i|^2 + eps^2)
 * A law is two functions of d2 = |x_j - x_i|^2, r2 = d2 + eps^2 and the
 * masses: orr_pair_accel returns f with a_i += f (x_j - x_i), and
 * orr_pair_potential returns the pair energy.  Constant factors common to
 * every pair go into ORR_ACCEL_SCALE / ORR_POTENTIAL_SCALE, applied once per
 * body instead of once per interaction. */
#define ORR_ACCEL_SCALE ORR_G
#define ORR_POTENTIAL_SCALE ORR_G

ORR_LAW real orr_pair_accel(real d2, real r2, real mi, real mj)
{
    real inv = orr_rsqrt_nz(r2);
    return mj * (inv * inv * inv);
}

ORR_LAW real orr_pair_potential(real d2, real r2, real mi, real mj)
{
    return -(mi * mj) * orr_rsqrt_nz(r2);
}
