/* special: the kernels' helper functions that a force law or a field may
 * call, apart from the prelude's target definitions so that a source can
 * hold them twice: in `real` for the law and, on the CPU, in double for the
 * fields of a simulation whose frame follows a cluster (field.h: the
 * fields' section of such a source defines `real` as double and these
 * names with the suffix _d around a second copy; on the GPU the templates
 * serve both precisions).  Appended after the prelude (kspec.c). */

#if !ORR_GPU
/* x^(-3/2) in `real` (the GPU's is in the prelude: refined hardware rsqrt) */
ORR_HELPER real orr_rsqrt3(real x)
{
    const real y = orr_rsqrt(x);
    return y * y * y;
}
#endif

/* The incomplete gamma functions, not regularised, of an order s > 0 at x
 * >= 0 (the power law with a cut-off: fields/powerlaw_cutoff.h), g =
 * Gamma(s) a constant the caller bakes in: the lower gamma(s, x) by its
 * series x^s e^-x sum x^n / (s (s+1) ... (s+n)) where x < s + 1, the upper
 * Gamma(s, x) by its continued fraction (evaluated by the modified Lentz
 * method) elsewhere, each the other's complement to g.  Both converge
 * fastest where they are used (a few to a few tens of terms); the loops
 * stop at the precision's rounding. */
ORR_LAW real orr_gamma_eps(real x)
{
    return sizeof(x) == sizeof(float) ? (real)6e-8 : (real)1.2e-16;
}
ORR_LAW real orr_gamma_series(real s, real x)
{
    real term = (real)1 / s, sum = term;
    for (int n = 1; n < 1000; n++) {
        term *= x / (s + (real)n);
        sum += term;
        if (orr_fabs(term) <= orr_fabs(sum) * orr_gamma_eps(x))
            break;
    }
    return x > 0 ? sum * orr_exp(s * orr_log(x) - x) : (real)0;
}
ORR_LAW real orr_gamma_cf(real s, real x)
{
    const real tiny = sizeof(x) == sizeof(float) ? (real)1e-30 : (real)1e-300;
    real b = x + 1 - s, c = 1 / tiny, d = 1 / b, h = d;
    for (int i = 1; i < 1000; i++) {
        const real an = -(real)i * ((real)i - s);
        b += 2;
        d = an * d + b;
        d = orr_fabs(d) < tiny ? tiny : d;
        c = b + an / c;
        c = orr_fabs(c) < tiny ? tiny : c;
        d = 1 / d;
        const real del = d * c;
        h *= del;
        if (orr_fabs(del - 1) <= orr_gamma_eps(x))
            break;
    }
    return orr_exp(s * orr_log(x) - x) * h;
}
ORR_LAW real orr_gammainc(real s, real g, real x)
{
    return x < s + 1 ? orr_gamma_series(s, x) : g - orr_gamma_cf(s, x);
}
ORR_LAW real orr_gammaincc(real s, real g, real x)
{
    return x < s + 1 ? g - orr_gamma_series(s, x) : orr_gamma_cf(s, x);
}
