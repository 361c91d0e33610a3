/* field: external fields.  A field is a potential Phi(x, y, z, t) per unit
 * mass that every body feels beside the pair forces (a galaxy, a central
 * mass, a tidal field): its acceleration -grad Phi is added to each target's
 * in the force pass, its jerk (for Hermite) is the time derivative of that
 * along the body's motion, and sum_i m_i Phi(x_i) is its share of the
 * potential energy.  A field is three C snippets (accel sets ax, ay, az;
 * potential sets phi; jerk sets jx, jy, jz with the accel snippet's values
 * in scope), written by hand or made from a potential expression (expr.h:
 * orr_expr_field), with named params, baked as exact hex floats or runtime
 * (kernel arguments, changed between steps without a recompile).  Built-in
 * fields are files kernels_src/fields/NAME.h (`//@` metadata, then the
 * expression or the snippets).
 *
 * A simulation's fields (orr_fieldset, any number up to ORR_FIELD_MAX) are
 * one generated section after the force law's: orr_fields_accel,
 * orr_fields_accel_jerk, orr_fields_potential, each adding the fields in
 * order, every field's snippets under #line directives naming its origin.
 *
 * The runtime values the kernels get (double rt[ORR_RT_SLOTS], the law's
 * first): the law's runtime params in slots [0, ORR_LAW_MAX_RUNTIME), the
 * fields' runtime params from ORR_RT_FIELD on (field after field, each's in
 * param order), the time ORR_RT_T0 and the tick ORR_RT_UNIT: a force
 * evaluation is at time t0 (a block step on the GPU at t0 + tick * unit,
 * tick its block's time in ticks of the interval). */
#ifndef ORR_FIELD_H
#define ORR_FIELD_H

#include "law.h"

#define ORR_FIELD_MAX 8            /* fields in one simulation */
#define ORR_FIELD_MAX_PARAMS 16    /* params of one field */
#define ORR_FIELD_MAX_RUNTIME 16   /* runtime params of all the fields of a simulation */
#define ORR_RT_FIELD ORR_LAW_MAX_RUNTIME
#define ORR_RT_T0 (ORR_RT_FIELD + ORR_FIELD_MAX_RUNTIME)
#define ORR_RT_UNIT (ORR_RT_T0 + 1)
/* A frame that follows a cluster (frame.h): its centre's path over the span
 * of times a launch evaluates, per axis a polynomial of degree 5 in t - tref:
 * slot ORR_RT_FRAME holds tref, then x's six coefficients (constant first),
 * y's, z's. */
#define ORR_FRAME_DEGREE 5
#define ORR_FRAME_SLOTS (1 + 3 * (ORR_FRAME_DEGREE + 1))
#define ORR_RT_FRAME (ORR_RT_UNIT + 1)
#define ORR_RT_SLOTS (ORR_RT_FRAME + ORR_FRAME_SLOTS)

typedef struct {
    char name[ORR_LAW_NAME_MAX];
    double value;       /* in the simulation's units */
    int runtime;        /* 1: a kernel argument */
    char doc[96];
    char unit[12];      /* "length", "velocity" or "mass": with physical units the value
                           becomes cgs / the unit, unless given ("": none) */
    double cgs;         /* the value in cgs, for unit */
    int given;          /* 1: set by the user (not a built-in's default) */
} orr_field_param;

typedef struct orr_field {
    char name[64];                      /* lowercase letters, digits, '_' */
    char doc[160];
    int builtin;                        /* 1: kernels_src/fields/<name>.h */
    char *origin;                       /* heap: "fields/plummer.h" or "script.lua:12" */
    int nparams;
    orr_field_param params[ORR_FIELD_MAX_PARAMS];
    char *accel;                        /* heap: sets ax, ay, az */
    char *potential;                    /* heap: sets phi; "" when none */
    char *jerk;                         /* heap: sets jx, jy, jz; "" when none */
    char *expr;                         /* heap: the potential expression it was made from,
                                           "" for hand-written snippets */
    int accel_line, potential_line, jerk_line, expr_line;   /* first lines in the origin */
} orr_field;

/* A simulation's fields, in the order they are added. */
typedef struct orr_fieldset {
    int n;
    int planar;   /* 1: the bodies move in the plane z = 0 (dims 2): the fields' z
                     acceleration and jerk are not applied */
    int frame;    /* 1: the bodies' positions and velocities are relative to a centre
                     that moves in the fields (frame.h): each field adds the
                     difference of its acceleration (and jerk) at the centre plus
                     the body and at the centre, its potential is that at the
                     centre plus the body; all of it in double, whatever the
                     kernels' precision */
    orr_field f[ORR_FIELD_MAX];
} orr_fieldset;

/* An empty field called name (lowercase letters, digits, '_'), origin
 * "file:line"; add params, then code (orr_field_set_code or
 * orr_field_set_expr), then validate. */
orr_status orr_field_init(orr_field *f, const char *name, const char *origin, orr_error *err);
orr_status orr_field_add_param(orr_field *f, const char *name, double value, orr_error *err);
/* Marks a param runtime (a kernel argument). */
orr_status orr_field_set_runtime(orr_field *f, const char *name, orr_error *err);
int orr_field_param_index(const orr_field *f, const char *name);
/* Sets a param's value (finite); marks it given.  An unknown name is an
 * error listing the params.  A field made from an expression folds its
 * baked params into its code: a new value makes the code again (an error
 * there, a constant with no value, keeps the old value). */
orr_status orr_field_set_param(orr_field *f, const char *name, double value, orr_error *err);
int orr_field_runtime_count(const orr_field *f);
/* The hand-written snippets (copied; NULL: none), each starting at line 1
 * of the origin. */
orr_status orr_field_set_code(orr_field *f, const char *accel, const char *potential,
                              const char *jerk, orr_error *err);
/* The snippets made from a potential expression of x, y, z, t, r, r2, G
 * and the params (expr.h), starting at line `line` of the origin; the
 * runtime params must be marked first.  ORR_ERR_ARG "field 'x':
 * potential:1:7: unknown name 'q' (...)". */
orr_status orr_field_set_expr(orr_field *f, const char *expr, int line, orr_error *err);
int orr_field_has_potential(const orr_field *f);
int orr_field_has_jerk(const orr_field *f);
/* Names (C identifiers clear of what is in scope: x, y, z, t, vx, vy, vz,
 * ax ... jz, phi, r, r2, G and the law names), values (finite), an accel
 * snippet, and each snippet as orr_law_validate checks a law's. */
orr_status orr_field_validate(const orr_field *f, orr_error *err);
orr_status orr_field_copy(orr_field *dst, const orr_field *src, orr_error *err);
void orr_field_free(orr_field *f);

/* Built-in field `name` (kernels_src/fields/<name>.h), with its default
 * params.  Unknown: ORR_ERR_ARG "unknown field 'x' (built in: ...)". */
orr_status orr_field_builtin(const char *name, orr_field *f, orr_error *err);
/* The built-in fields' names (NULL-terminated, static), sorted. */
const char *const *orr_field_builtin_names(void);

/* Adds a copy of f to s (the names must differ). */
orr_status orr_fieldset_add(orr_fieldset *s, const orr_field *f, orr_error *err);
orr_status orr_fieldset_copy(orr_fieldset *dst, const orr_fieldset *src, orr_error *err);
void orr_fieldset_free(orr_fieldset *s);
/* Every field valid, names distinct, runtime params within ORR_FIELD_MAX_RUNTIME. */
orr_status orr_fieldset_validate(const orr_fieldset *s, orr_error *err);
/* The fields' runtime param values in slot order (out[ORR_FIELD_MAX_RUNTIME]). */
int orr_fieldset_runtime_count(const orr_fieldset *s);
void orr_fieldset_runtime_values(const orr_fieldset *s, double out[ORR_FIELD_MAX_RUNTIME]);
/* "NAME.PARAM": the field and param it names, or -1 (*field, *param). */
int orr_fieldset_find(const orr_fieldset *s, const char *dotted, int *field, int *param);
/* 1 when every field has a potential snippet. */
int orr_fieldset_has_potential(const orr_fieldset *s);
int orr_fieldset_has_jerk(const orr_fieldset *s);
/* Params with a physical unit that the user did not give: value = cgs /
 * the simulation's unit (length_cm, velocity_cm_s or mass_g). */
orr_status orr_fieldset_units(orr_fieldset *s, double length_cm, double velocity_cm_s,
                              double mass_g, orr_error *err);

/* Appends the fields' generated section (s may be NULL: no fields): ORR_NFIELDS
 * and, templated over real on the GPU,
 *   orr_fields_accel(x, y, z, fp, t, &ax, &ay, &az)           adds -grad Phi
 *   orr_fields_accel_jerk(x, y, z, vx, vy, vz, fp, t, &ax, &ay, &az, &jx, &jy, &jz)
 *   orr_fields_potential(x, y, z, fp, t) -> Phi in double (0 with no potential)
 * fp = the runtime values from ORR_RT_FIELD on (double), t the time.  With
 * s->frame the section also defines ORR_FRAME 1 and evaluates the fields in
 * double at the frame's centre (fp + ORR_RT_FRAME - ORR_RT_FIELD) plus the
 * body; for the CPU (cpu 1) it holds a double copy of special.h's helpers
 * (suffix _d) for them.  Returns 0 or -1 (memory). */
int orr_fieldset_emit(const orr_fieldset *s, int cpu, orr_buf *b);

#endif
