/* gravity: Plummer-softened Newtonian gravity, the default law.
 *   a_i    += G m_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2)
 *   phi_ij  = -G m_i m_j / sqrt(|x_j - x_i|^2 + eps^2)
 * G is the scale, applied once per body rather than once per interaction.
 * On the GPU, in float, the pair is one MUFU.RSQ and three multiplies; with
 * the separation, r2 (softening folded into the first FMA) and the
 * accumulation it is 12 FP32 instructions and the rsqrt.  In double,
 * orr_rsqrt3 refines the hardware rsqrt and cubes it in 6 FP64 operations
 * (16 per interaction in all). */
//@law Plummer-softened Newtonian gravity (the default)
//@scale G
//@finite_at_zero
//@pair
f = mj * orr_rsqrt3_nz(r2);
//@potential
u = -(mi * mj) * orr_rsqrt_nz(r2);
//@jerk
const real ir = orr_rsqrt_nz(r2);
g = (real)-1.5 * f * ir * ir;
