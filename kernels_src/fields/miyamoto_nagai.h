/* miyamoto_nagai: Miyamoto & Nagai's (1975) disc of mass M, scale length a
 * and scale height b (in the plane z = 0),
 *   Phi = -G M / sqrt(x^2 + y^2 + (a + sqrt(z^2 + b^2))^2). */
//@field Miyamoto-Nagai disc: Phi = -G M / sqrt(R^2 + (a + sqrt(z^2 + b^2))^2)
//@param M 1 the mass
//@param a 1 the scale length
//@param b 0.1 the scale height
//@expr
-G*M/sqrt(x^2 + y^2 + (a + sqrt(z^2 + b^2))^2)
