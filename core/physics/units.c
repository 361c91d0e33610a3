/* units: the named units, the check and the derived velocity and time
 * units of a simulation's physical units (see units.h). */
#include "units.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the N-body convention the snapshots state: 1 kpc and 1e10 Msun */
#define NBODY_LENGTH_CM 3.0856775814913673e21
#define NBODY_MASS_G 1.988409870698051e43

/* IAU 2012 au, IAU 2015 parsec and nominal solar radius; masses are the IAU
 * 2015 nominal GM (1.3271244e26, 3.986004e20, 1.2668653e23 cm^3 s^-2) over
 * ORR_G_CGS.  Names (NULL-terminated, for messages too) and their sizes in
 * cgs, in the same order. */
static const char *const length_names[] = {"pc", "kpc", "Mpc", "au", "Rsun", "km", "m", "cm",
                                           NULL};
static const double length_cgs[] = {3.0856775814913673e18, 3.0856775814913673e21,
                                    3.0856775814913673e24, 1.495978707e13, 6.957e10, 1e5, 1e2,
                                    1};
static const char *const mass_names[] = {"Msun", "Mearth", "Mjup", "kg", "g", NULL};
static const double mass_cgs[] = {1.988409870698051e33, 5.972167867791379e27,
                                  1.89812459733605e30, 1e3, 1};

static double lookup(const char *const *names, const double *cgs, const char *name)
{
    for (int k = 0; name && names[k]; k++)
        if (strcmp(names[k], name) == 0)
            return cgs[k];
    return 0;
}

double orr_units_length_cm(const char *name)
{
    return lookup(length_names, length_cgs, name);
}

double orr_units_mass_g(const char *name)
{
    return lookup(mass_names, mass_cgs, name);
}

const char *const *orr_units_length_names(void)
{
    return length_names;
}

const char *const *orr_units_mass_names(void)
{
    return mass_names;
}

int orr_units_physical(const orr_units *u)
{
    return u->length_cm != 0 || u->mass_g != 0;
}

/* v with the fewest significant digits (15 to 17) that read back as v. */
static const char *shortest(double v, char buf[32])
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, 32, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

/* One of the two units: value positive and finite, name (may be "")
 * terminated and, where given, known and of that value. */
static orr_status check_one(const char *what, const char *suffix, double value, const char *name,
                            size_t size, double (*find)(const char *), orr_error *err)
{
    if (!(value > 0) || !isfinite(value))
        return orr_fail(err, ORR_ERR_ARG, "units: %s_%s must be a positive finite number (got %g)",
                        what, suffix, value);
    if (!memchr(name, '\0', size))
        return orr_fail(err, ORR_ERR_ARG, "units: the %s unit's name is not terminated", what);
    if (name[0] && find(name) == 0)
        return orr_fail(err, ORR_ERR_ARG, "units: unknown %s unit '%s'", what, name);
    char a[32], b[32];
    if (name[0] && find(name) != value)
        return orr_fail(err, ORR_ERR_ARG, "units: %s '%s' is %s %s, not %s", what, name,
                        shortest(find(name), a), suffix, shortest(value, b));
    return ORR_OK;
}

orr_status orr_units_check(const orr_units *u, double G, orr_error *err)
{
    if (!orr_units_physical(u))
        return u->length[0] || u->mass[0]
                   ? orr_fail(err, ORR_ERR_ARG, "units: names without sizes")
                   : ORR_OK;
    orr_status st = check_one("length", "cm", u->length_cm, u->length, sizeof u->length,
                              orr_units_length_cm, err);
    if (!st)
        st = check_one("mass", "g", u->mass_g, u->mass, sizeof u->mass, orr_units_mass_g, err);
    if (!st && !(G > 0))
        st = orr_fail(err, ORR_ERR_ARG,
                      "units need a positive G to fix the time unit (got G = %g)", G);
    return st;
}

void orr_units_cgs(const orr_units *u, double G, double *length_cm, double *mass_g,
                   double *velocity_cm_s, double *time_s)
{
    const int phys = orr_units_physical(u);
    const double L = phys ? u->length_cm : NBODY_LENGTH_CM;
    const double M = phys ? u->mass_g : NBODY_MASS_G;
    const double V = G > 0 ? sqrt(ORR_G_CGS * M / (G * L)) : 1e5;
    if (length_cm)
        *length_cm = L;
    if (mass_g)
        *mass_g = M;
    if (velocity_cm_s)
        *velocity_cm_s = V;
    if (time_s)
        *time_s = L / V;
}

const char *orr_units_describe(const orr_units *u, double G, char *buf, size_t size)
{
    if (size)
        buf[0] = '\0';
    if (!orr_units_physical(u) || !size)
        return buf;
    double L, M, V, T;
    orr_units_cgs(u, G, &L, &M, &V, &T);
    char l[40] = "", m[40] = "";
    if (u->length[0])
        snprintf(l, sizeof l, "1 %.16s = ", u->length);
    if (u->mass[0])
        snprintf(m, sizeof m, "1 %.16s = ", u->mass);
    char n[5][32];
    snprintf(buf, size, "length %s%s cm; mass %s%s g; velocity %s cm/s; time %s s (G = %s)", l,
             shortest(L, n[0]), m, shortest(M, n[1]), shortest(V, n[2]), shortest(T, n[3]),
             shortest(G, n[4]));
    return buf;
}
