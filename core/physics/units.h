/* units: the physical units a simulation's numbers are in.  A simulation
 * holds plain numbers; with units its length unit is length_cm centimetres
 * and its mass unit mass_g grams, and the simulation's G (1 by default)
 * fixes the rest: the velocity unit is sqrt(G_cgs M / (G L)) and the time
 * unit L / velocity.  Without units (both 0) the numbers are N-body
 * (Henon) units, and the snapshots state the usual galactic reading of
 * them (1 kpc, 1e10 Msun) marked as a convention.  The named units use the
 * IAU values: au = 1.495978707e13 cm, pc = au * 648000 / pi, Rsun =
 * 6.957e10 cm; Msun, Mearth and Mjup are the IAU nominal GM divided by
 * G_cgs (CODATA 2018), so G * M, which sets the time unit, is the IAU one. */
#ifndef ORR_UNITS_H
#define ORR_UNITS_H

#include <stddef.h>
#include "err.h"

#define ORR_G_CGS 6.67430e-8   /* cm^3 g^-1 s^-2, CODATA 2018 */

typedef struct {
    double length_cm;   /* the length unit in cm; 0 with mass_g 0: N-body units (0) */
    double mass_g;      /* the mass unit in g (0) */
    char length[16];    /* its name ("pc"), or "" when given in cm ("") */
    char mass[16];      /* its name ("Msun"), or "" when given in g ("") */
} orr_units;

/* Whether u states physical units (not N-body units). */
int orr_units_physical(const orr_units *u);

/* A named length ("pc", "kpc", "Mpc", "au", "Rsun", "km", "m", "cm") or
 * mass ("Msun", "Mearth", "Mjup", "kg", "g") in cgs; 0 for an unknown name. */
double orr_units_length_cm(const char *name);
double orr_units_mass_g(const char *name);
/* The known names, NULL-terminated, in the order above (for messages). */
const char *const *orr_units_length_names(void);
const char *const *orr_units_mass_names(void);

/* Checks u for a simulation with constant G: N-body units (everything 0),
 * or positive finite length_cm and mass_g with G > 0, names NUL-terminated
 * and, where given, known and of that size.  Messages name the field
 * ("units: length_cm must be a positive finite number (got -1)"). */
orr_status orr_units_check(const orr_units *u, double G, orr_error *err);

/* The four units in cgs for a simulation with constant G: u's, or for
 * N-body units the galactic convention (1 kpc, 1e10 Msun; velocity 1 km/s
 * when G <= 0).  Any of the pointers may be NULL. */
void orr_units_cgs(const orr_units *u, double G, double *length_cm, double *mass_g,
                   double *velocity_cm_s, double *time_s);

/* One line saying what the units are (every number the shortest that reads
 * back exactly), for headers and messages, e.g. "length 1 pc =
 * 3.0856775814913674e+18 cm; mass 1 Msun = 1.988409870698051e+33 g;
 * velocity 6558.137898852296 cm/s; time 470511237958472.2 s (G = 1)"; ""
 * for N-body units.  Returns buf. */
const char *orr_units_describe(const orr_units *u, double G, char *buf, size_t size);

#endif
