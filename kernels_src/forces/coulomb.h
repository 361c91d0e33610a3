/* coulomb: the electrostatic force between charged bodies, Plummer-softened
 * like gravity; like charges repel.  The acceleration is force over mass, so
 * every charged body needs a mass > 0.
 *   a_i    += -k (q_i / m_i) q_j (x_j - x_i) / (|x_j - x_i|^2 + eps^2)^(3/2)
 *   phi_ij  = k q_i q_j / sqrt(|x_j - x_i|^2 + eps^2)
 * k is the scale.  In a periodic box the sum runs over minimum images only
 * (no Ewald sum): use a neutral, screened or short-range setting. */
//@law Coulomb force between charges (Plummer-softened); like charges repel
//@param k 1 Coulomb constant 1/(4 pi eps0) in the run's units
//@attribute charge electric charge of the body
//@scale k
//@pair
const real qm = charge_i / mi;
f = -(qm * charge_j) * orr_rsqrt3_nz(r2);
//@potential
u = (charge_i * charge_j) * orr_rsqrt_nz(r2);
