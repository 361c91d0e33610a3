/* kepler: two-body motion in closed form, for the GPU's block steps to
 * place a regularised pair's members at a block's time between its
 * centre's steps (direct.cu: orr_pair_pulls; hermite.c and groups.c: the
 * perturbers of a pair are stepped on the GPU, resolved member by member).
 * Universal variables (Danby, "Fundamentals of Celestial Mechanics", 6.9;
 * Stumpff's functions), Kepler's equation solved by Laguerre's method as
 * Conway (1986) gives it, convergent from any start for every conic.
 * Plain C that both NVRTC and the host compiler take: ORR_KEPLER is the
 * functions' qualifiers (the GPU's by default; tests/test_kepler.c checks
 * the functions on the host against Kepler's equation solved apart). */
#ifndef ORR_KEPLER
#define ORR_KEPLER static __device__ __forceinline__
#endif

/* Stumpff's c2(z) = (1 - cos sqrt z) / z and c3(z) = (sqrt z - sin sqrt z)
 * / sqrt(z)^3, continued to z < 0 by cosh and sinh; by their series where
 * |z| is small (no cancellation). */
ORR_KEPLER void orr_stumpff(double z, double *c2, double *c3)
{
    if (z > 0.1) {
        const double s = sqrt(z);
        *c2 = (1 - cos(s)) / z;
        *c3 = (s - sin(s)) / (z * s);
    } else if (z < -0.1) {
        const double s = sqrt(-z);
        *c2 = (cosh(s) - 1) / -z;
        *c3 = (sinh(s) - s) / (-z * s);
    } else {   /* c2 = sum (-z)^k / (2k + 2)!, c3 = sum (-z)^k / (2k + 3)! */
        double t2 = 0.5, t3 = 1.0 / 6, s2 = 0, s3 = 0;
        for (int k = 0; k < 10; k++) {
            s2 += t2, s3 += t3;
            t2 *= -z / ((2 * k + 3) * (2 * k + 4));
            t3 *= -z / ((2 * k + 4) * (2 * k + 5));
        }
        *c2 = s2, *c3 = s3;
    }
}

/* The G-functions G[k] = s^k ck(beta s^2), k = 0 .. 3 (c0 = 1 - z c2,
 * c1 = 1 - z c3). */
ORR_KEPLER void orr_kepler_g(double beta, double s, double *G)
{
    const double z = beta * s * s;
    double c2, c3;
    orr_stumpff(z, &c2, &c3);
    G[0] = 1 - z * c2, G[1] = s * (1 - z * c3), G[2] = s * s * c2, G[3] = s * s * s * c3;
}

/* The relative position r0 and velocity v0 of a pair (G times its mass:
 * mu) carried along its orbit by dt (either sign) into r, v.  A bound
 * orbit's whole periods are skipped first.  The universal anomaly s
 * solves r0 s + eta0 G2 + zeta0 G3 = dt (eta0 = r0.v0, beta = 2 mu / |r0|
 * - v0^2, zeta0 = mu - beta |r0|, Gk = s^k ck(beta s^2)); then Lagrange's
 * f and g. */
ORR_KEPLER void orr_kepler_drift(double mu, const double *r0, const double *v0, double dt,
                                 double *r, double *v)
{
    const double rn0 = sqrt(r0[0] * r0[0] + r0[1] * r0[1] + r0[2] * r0[2]);
    const double v2 = v0[0] * v0[0] + v0[1] * v0[1] + v0[2] * v0[2];
    const double eta0 = r0[0] * v0[0] + r0[1] * v0[1] + r0[2] * v0[2];
    const double beta = 2 * mu / rn0 - v2, zeta0 = mu - beta * rn0;
    /* f(s) rises with s (its slope is r): the root is bracketed by [lo, hi],
     * narrowed at every step, and a Laguerre step that leaves it, or is
     * longer than half the step before the last (rtsafe's rule, Numerical
     * Recipes 9.4), is replaced by the bracket's midpoint: on a hyperbola a
     * step past the root lands where f grows as exp(s sqrt(-beta)), from
     * where Laguerre's steps come back by a constant 0.0075 in s (e = 1.5,
     * q = 1e-5, dt = 6e-4 from r = 0.05: f = 1e86, 130 steps), and the 100
     * steps ran out there, the positions 1e17 */
    double s, lo = -1e308, hi = 1e308, ds1 = 1e308, ds2 = 1e308;
    if (beta > 0) {   /* bound: the period 2 pi a^1.5 / sqrt(mu), a = mu / beta */
        const double a = mu / beta, P = 6.283185307179586 * a * sqrt(a / mu);
        dt = fmod(dt, P);
        hi = 6.283185307179586 / sqrt(beta), lo = -hi;   /* a period in s */
        s = beta * dt / mu;   /* the eccentric anomaly moves as the mean one, to e */
        s = s > hi ? hi : s < lo ? lo : s;
    } else {   /* not beyond where cosh(s sqrt(-beta)) overflows: s grows as log dt */
        s = dt / rn0;
        const double w = sqrt(-beta), top = log(2 * -beta * w * fabs(dt) / mu + 2) + 1;
        if (fabs(s) * w > top)
            s = (s > 0 ? top : -top) / w;
    }
    double G[4];
    for (int it = 0; it < 100; it++) {
        orr_kepler_g(beta, s, G);
        const double f = rn0 * s + eta0 * G[2] + zeta0 * G[3] - dt;
        if (f == 0)
            break;
        if (f < 0)
            lo = s > lo ? s : lo;
        else
            hi = s < hi ? s : hi;
        const double f1 = rn0 * G[0] + eta0 * G[1] + mu * G[2];   /* = r(s) */
        const double f2 = eta0 * G[0] + zeta0 * G[1];
        const double d = 16 * f1 * f1 - 20 * f * f2;   /* Laguerre, n = 5 */
        const double q = sqrt(d > 0 ? d : -d);
        const double den = f1 > 0 ? f1 + q : f1 - q;
        double next = den != 0 ? s - 5 * f / den : s;
        if ((!(next >= lo && next <= hi) || fabs(next - s) > 0.5 * ds2) && lo > -1e308 &&
            hi < 1e308)
            next = 0.5 * (lo + hi);
        const double ds = next - s;
        ds2 = ds1, ds1 = fabs(ds);
        s = next;
        if (!(fabs(ds) > 1e-15 * fabs(s)))
            break;
    }
    orr_kepler_g(beta, s, G);   /* at the last s */
    const double rn = rn0 * G[0] + eta0 * G[1] + mu * G[2];
    const double f = 1 - mu * G[2] / rn0, g = rn0 * G[1] + eta0 * G[2];
    const double fd = -mu * G[1] / (rn * rn0), gd = 1 - mu * G[2] / rn;
    for (int q = 0; q < 3; q++) {
        r[q] = f * r0[q] + g * v0[q];
        v[q] = fd * r0[q] + gd * v0[q];
    }
}
