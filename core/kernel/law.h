/* law: force laws.  A law is a pair snippet (C that sets `f`, so that the
 * acceleration of body i gains scale * f * (x_j - x_i)), a potential snippet
 * (sets `u`, the pair energy; the total is scale * sum over pairs), a scale
 * expression applied once per body, named parameters and per-body
 * attributes.  Built-in laws are files kernels_src/forces/NAME.h in that same
 * form, with their metadata in `//@` lines; user laws come from Lua
 * (orrery.force{}).  Both become one generated C section that NVRTC and the
 * host compiler compile alike, with #line directives so a compiler message
 * names the snippet's origin and line.
 *
 * Parameters are baked into the source as exact hex-float constants, or,
 * when marked runtime, read from a kernel argument so changing them needs no
 * recompile. */
#ifndef ORR_LAW_H
#define ORR_LAW_H

#include <stddef.h>
#include "err.h"
#include "util.h"

#define ORR_LAW_MAX_PARAMS 16
#define ORR_LAW_MAX_RUNTIME 8
#define ORR_LAW_MAX_ATTRS 4
#define ORR_LAW_NAME_MAX 32

typedef struct {
    char name[ORR_LAW_NAME_MAX];
    double value;
    int runtime;        /* 1: a kernel argument (slot = its index among the runtime ones) */
    char doc[96];
} orr_law_param;

typedef struct orr_law {
    char name[64];                      /* lowercase letters, digits, '_' */
    char doc[160];                      /* one line */
    int builtin;                        /* 1: kernels_src/forces/<name>.h */
    char *origin;                       /* heap: "forces/gravity.h", or "script.lua:12"
                                           (a script's path in full, any length) */
    int nparams;
    orr_law_param params[ORR_LAW_MAX_PARAMS];
    int nattrs;
    char attrs[ORR_LAW_MAX_ATTRS][ORR_LAW_NAME_MAX];
    char attr_doc[ORR_LAW_MAX_ATTRS][96];
    char scale[256];                    /* C expression of params, G, eps ("1") */
    int finite_at_zero;                 /* 1: f is finite at d2 == 0, no guard needed */
    char *pair;                         /* heap: the pair snippet (sets f) */
    char *potential;                    /* heap: the potential snippet (sets u) */
    char *jerk;                         /* heap: the jerk snippet (sets g = df/d(d2), with
                                           the pair's f in scope); "" when none */
    int pair_line, potential_line;      /* first line of each snippet in its origin (1) */
    int jerk_line;
} orr_law;

/* Loads built-in law `name` from kernels_src/forces/<name>.h (embedded, or
 * $ORRERY_KERNELS_DIR).  Unknown name: ORR_ERR_ARG "unknown force law 'x'
 * (built in: ...)". */
orr_status orr_law_builtin(const char *name, orr_law *law, orr_error *err);
/* Names of the built-in laws (NULL-terminated, static), sorted. */
const char *const *orr_law_builtin_names(void);

/* An empty user law: name, snippets (copied), origin "file:line".  Add
 * params and attributes, then validate. */
orr_status orr_law_init(orr_law *law, const char *name, const char *pair, const char *potential,
                        const char *origin, orr_error *err);
orr_status orr_law_add_param(orr_law *law, const char *name, double value, orr_error *err);
orr_status orr_law_add_attr(orr_law *law, const char *name, orr_error *err);
/* Marks a param runtime (a kernel argument). */
orr_status orr_law_set_runtime(orr_law *law, const char *name, orr_error *err);
/* The param's index, or -1. */
int orr_law_param_index(const orr_law *law, const char *name);
int orr_law_attr_index(const orr_law *law, const char *name);
/* Sets a param's value (finite). */
orr_status orr_law_set_param(orr_law *law, const char *name, double value, orr_error *err);
/* Number of runtime params, and their values in slot order (out[ORR_LAW_MAX_RUNTIME]). */
int orr_law_runtime_count(const orr_law *law);
void orr_law_runtime_values(const orr_law *law, double out[ORR_LAW_MAX_RUNTIME]);

/* 1 when the potential snippet has code (energies need it). */
int orr_law_has_potential(const orr_law *law);
/* 1 when the jerk snippet has code (the Hermite integrator needs it):
 * with g = df/d(d2) the jerk of body i gains scale * (f v + 2 g (d.v) d),
 * d = x_j - x_i, v = v_j - v_i. */
int orr_law_has_jerk(const orr_law *law);
/* Sets the jerk snippet (copied) and the line it starts on in the origin. */
orr_status orr_law_set_jerk(orr_law *law, const char *jerk, int line, orr_error *err);

/* Checks names (C identifiers, no clash with the variables in scope or each
 * other), values (finite), snippets (non-empty pair), scale; ORR_ERR_ARG.
 * Then that each snippet and the scale expression keep to themselves, which
 * the compilers would otherwise report at orrery's lines or at lines the
 * snippet does not have: brackets balanced, comments and literals closed,
 * the last statement ended by ';' (or '}'), #if balanced, only #define,
 * #undef, #if..#endif, #error and #pragma (no #include, #line or #warning),
 * ASCII outside comments, literals and the text of #error and #pragma
 * (NVRTC takes no UTF-8 names: "a non-ASCII character 'é' ..."), no
 * reserved macro names (nor `defined`), macro bodies with balanced
 * brackets, no backslash ending the last line; the scale one
 * expression (no ';', braces, // or directives) of numbers, params, G, eps,
 * eps2, real and the orr_ math functions, not ending in an operator.  The digraphs %: <: :> <%
 * %> are # [ ] { }, as both compilers read them.
 * ORR_ERR_COMPILE "script.lua:31 (force 'x', pair):2: '}' without a
 * matching '{'" (a built-in law: "forces/x.h:15: ..."). */
orr_status orr_law_validate(const orr_law *law, orr_error *err);

/* Refuses a NUL byte in the len bytes of code (the snippet `what`, "pair",
 * "potential", "jerk" or "scale", starting at line `first` of the origin),
 * which a C string would end at, dropping what follows: where the law is
 * read from counted strings (Lua).  ORR_ERR_COMPILE "script.lua:31 (force
 * 'x', pair):2: a NUL byte: ...", at the NUL's line. */
orr_status orr_law_check_bytes(const orr_law *law, const char *what, const char *code,
                               size_t len, int first, orr_error *err);

/* Deep copy (dst must not alias src); free releases the snippets and the
 * origin. */
orr_status orr_law_copy(orr_law *dst, const orr_law *src, orr_error *err);
void orr_law_free(orr_law *law);

/* Appends the law's generated section (ORR_NATTR, ORR_NRT, orr_law_scale,
 * orr_pair_accel, orr_pair_potential, orr_pair_jerk) to b.  Each snippet and
 * the scale expression are under #line directives naming their origin
 * ("script.lua:3 (force 'x', pair)", "... scale)").  The origin is
 * escaped wherever it appears (a #line file name, a comment).  The section
 * undefines the law's param and attribute names (NAME_i, NAME_j) before
 * using them, and each snippet's macros before and after it, so the code
 * that follows (the kernel files) must use no macro outside orr_, ORR_ and
 * __ names.  Returns 0 or -1 (memory). */
int orr_law_emit(const orr_law *law, orr_buf *b);

/* The snippet machinery, shared with external fields (field.h).  `label`
 * names the snippet's owner as the #line directives do ("force 'x'",
 * "field 'x'"); a built-in's snippets are named by origin:line alone.
 * orr_snippet_check: the checks of orr_law_validate for one snippet
 * (brackets, comments, directives, ASCII, macros), ORR_ERR_COMPILE
 * "script.lua:3 (field 'x', accel):2: ...".  orr_snippet_check_bytes: a
 * NUL byte refused at its line.  orr_snippet_emit: the snippet under #line
 * directives, its macros undefined before and after it, then "#line 1
 * after".  orr_put_escaped: s as the inside of a C string (in_comment: of a
 * block comment).  orr_name_why: why a name cannot name a param (C and C++
 * keywords, the math functions, the law snippets' variables, reserved
 * prefixes), or NULL; orr_name_why_field the same without the law
 * snippets' variables (dx, f, g, mi, ...: not in a field's scope).
 * orr_snippet_has_code: not blank. */
orr_status orr_snippet_check(const char *origin, const char *label, int builtin,
                             const char *what, const char *code, int first, orr_error *err);
orr_status orr_snippet_check_bytes(const char *origin, const char *label, int builtin,
                                   const char *what, const char *code, size_t len, int first,
                                   orr_error *err);
int orr_snippet_emit(orr_buf *b, const char *origin, const char *label, int builtin,
                     const char *what, const char *code, int line, const char *after);
int orr_put_escaped(orr_buf *b, const char *s, int in_comment);
const char *orr_name_why(const char *name);
const char *orr_name_why_field(const char *name);
int orr_snippet_has_code(const char *s);

#endif
