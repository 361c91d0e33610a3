/* field: external fields from kernels_src/fields/ or from Lua, and the
 * generated source section a simulation's fields become (see field.h). */
#include "field.h"
#include "expr.h"
#include "ksrc.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a field's snippets have in scope, which no param may be called. */
static const char *const in_scope[] = {"x",   "y",   "z",   "t",   "vx",  "vy", "vz", "ax",
                                       "ay",  "az",  "jx",  "jy",  "jz",  "phi", "r",  "r2",
                                       "fp",  "G",   "real", "oax", "oay", "oaz", "ojx", "ojy",
                                       "ojz", NULL};

static char *dupstr(const char *s)
{
    const size_t len = strlen(s ? s : "") + 1;
    char *d = malloc(len);
    if (d)
        memcpy(d, s ? s : "", len);
    return d;
}

static int valid_name(const char *name, size_t size)
{
    return name && name[0] && strlen(name) < size &&
           strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(name);
}

/* "field 'x'", for messages and #line names. */
static void label_of(const orr_field *f, char *buf, size_t size)
{
    snprintf(buf, size, "field '%s'", f->name);
}

orr_status orr_field_init(orr_field *f, const char *name, const char *origin, orr_error *err)
{
    memset(f, 0, sizeof *f);
    if (!valid_name(name, sizeof f->name))
        return orr_fail(err, ORR_ERR_ARG, "invalid field name '%s' (lowercase letters, digits, "
                        "'_'; at most %zu)", name ? name : "", sizeof f->name - 1);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->accel_line = f->potential_line = f->jerk_line = f->expr_line = 1;
    f->origin = dupstr(origin ? origin : name);
    f->accel = dupstr("");
    f->potential = dupstr("");
    f->jerk = dupstr("");
    f->expr = dupstr("");
    if (!f->origin || !f->accel || !f->potential || !f->jerk || !f->expr) {
        orr_field_free(f);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    return ORR_OK;
}

void orr_field_free(orr_field *f)
{
    free(f->origin), free(f->accel), free(f->potential), free(f->jerk), free(f->expr);
    f->origin = f->accel = f->potential = f->jerk = f->expr = NULL;
}

orr_status orr_field_copy(orr_field *dst, const orr_field *src, orr_error *err)
{
    *dst = *src;
    dst->origin = dupstr(src->origin);
    dst->accel = dupstr(src->accel);
    dst->potential = dupstr(src->potential);
    dst->jerk = dupstr(src->jerk);
    dst->expr = dupstr(src->expr);
    if (!dst->origin || !dst->accel || !dst->potential || !dst->jerk || !dst->expr) {
        orr_field_free(dst);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    return ORR_OK;
}

int orr_field_param_index(const orr_field *f, const char *name)
{
    for (int k = 0; k < f->nparams; k++)
        if (strcmp(f->params[k].name, name) == 0)
            return k;
    return -1;
}

/* Why name cannot name a field's param, or NULL. */
static const char *param_why(const char *name)
{
    for (int k = 0; in_scope[k]; k++)
        if (strcmp(in_scope[k], name) == 0)
            return "it is a variable already in scope in a field's code";
    return orr_name_why_field(name);
}

orr_status orr_field_add_param(orr_field *f, const char *name, double value, orr_error *err)
{
    const char *why = param_why(name);
    if (why)
        return orr_fail(err, ORR_ERR_ARG, "field '%s': invalid param name '%s': %s", f->name,
                        name, why);
    if (orr_field_param_index(f, name) >= 0)
        return orr_fail(err, ORR_ERR_ARG, "field '%s': param '%s' is defined twice", f->name,
                        name);
    if (!isfinite(value))
        return orr_fail(err, ORR_ERR_ARG, "field '%s': param '%s' must be a finite number "
                        "(got %g)", f->name, name, value);
    if (f->nparams >= ORR_FIELD_MAX_PARAMS)
        return orr_fail(err, ORR_ERR_ARG, "field '%s': too many params (at most %d)", f->name,
                        ORR_FIELD_MAX_PARAMS);
    orr_field_param *p = &f->params[f->nparams++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->value = value;
    p->given = 1;
    return ORR_OK;
}

/* "a, b, c" of the field's params, or "none". */
static void param_list(const orr_field *f, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (int q = 0; q < f->nparams && used < size; q++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", q ? ", " : "",
                                 f->params[q].name);
    if (!f->nparams)
        snprintf(buf, size, "none");
}

static orr_status no_param(const orr_field *f, const char *name, orr_error *err)
{
    char list[512];
    param_list(f, list, sizeof list);
    return orr_fail(err, ORR_ERR_ARG, "field '%s' has no param '%s' (params: %s)", f->name, name,
                    list);
}

int orr_field_runtime_count(const orr_field *f)
{
    int n = 0;
    for (int k = 0; k < f->nparams; k++)
        n += f->params[k].runtime;
    return n;
}

orr_status orr_field_set_runtime(orr_field *f, const char *name, orr_error *err)
{
    const int k = orr_field_param_index(f, name);
    if (k < 0)
        return no_param(f, name, err);
    if (f->params[k].runtime)
        return ORR_OK;
    f->params[k].runtime = 1;
    orr_status st = ORR_OK;
    if (f->expr[0]) {   /* it was folded into the code: made again, reading it */
        char *expr = dupstr(f->expr);
        st = expr ? orr_field_set_expr(f, expr, f->expr_line, err)
                  : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        free(expr);
        if (st)
            f->params[k].runtime = 0;
    }
    return st;
}

orr_status orr_field_set_param(orr_field *f, const char *name, double value, orr_error *err)
{
    const int k = orr_field_param_index(f, name);
    if (k < 0)
        return no_param(f, name, err);
    if (!isfinite(value))
        return orr_fail(err, ORR_ERR_ARG, "field '%s': param '%s' must be a finite number "
                        "(got %g)", f->name, name, value);
    const double old = f->params[k].value;
    f->params[k].value = value;
    f->params[k].given = 1;
    orr_status st = ORR_OK;
    if (f->expr[0] && !f->params[k].runtime && old != value) {   /* folded: made again */
        char *expr = dupstr(f->expr);
        st = expr ? orr_field_set_expr(f, expr, f->expr_line, err)
                  : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        free(expr);
        if (st)
            f->params[k].value = old;
    }
    return st;
}

static orr_status replace(char **slot, const char *text, orr_error *err)
{
    char *d = dupstr(text);
    if (!d)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    free(*slot);
    *slot = d;
    return ORR_OK;
}

orr_status orr_field_set_code(orr_field *f, const char *accel, const char *potential,
                              const char *jerk, orr_error *err)
{
    orr_status st = replace(&f->accel, accel, err);
    if (!st)
        st = replace(&f->potential, potential, err);
    if (!st)
        st = replace(&f->jerk, jerk, err);
    if (!st)
        st = replace(&f->expr, "", err);
    f->accel_line = f->potential_line = f->jerk_line = 1;
    return st;
}

orr_status orr_field_set_expr(orr_field *f, const char *expr, int line, orr_error *err)
{
    char *code[3];
    orr_error e = {0};
    orr_status st = orr_expr_field(f, expr, &code[0], &code[1], &code[2], &e);
    if (st) {
        orr_fail(err, st, "field '%s': %s", f->name, e.msg);
        orr_error_clear(&e);
        return st;
    }
    free(f->accel), free(f->potential), free(f->jerk);
    f->accel = code[0], f->potential = code[1], f->jerk = code[2];
    f->accel_line = f->potential_line = f->jerk_line = 1;
    f->expr_line = line;
    return replace(&f->expr, expr, err);
}

int orr_field_has_potential(const orr_field *f)
{
    return orr_snippet_has_code(f->potential);
}

int orr_field_has_jerk(const orr_field *f)
{
    return orr_snippet_has_code(f->jerk);
}

orr_status orr_field_validate(const orr_field *f, orr_error *err)
{
    if (!valid_name(f->name, sizeof f->name))
        return orr_fail(err, ORR_ERR_ARG, "invalid field name '%s' (lowercase letters, digits, "
                        "'_')", f->name);
    if (!orr_snippet_has_code(f->accel))
        return orr_fail(err, ORR_ERR_ARG, "field '%s': the accel snippet is empty (it must set "
                        "ax, ay, az; or give the potential as an expression)", f->name);
    for (int k = 0; k < f->nparams; k++) {
        const char *why = param_why(f->params[k].name);
        if (why)
            return orr_fail(err, ORR_ERR_ARG, "field '%s': invalid param name '%s': %s",
                            f->name, f->params[k].name, why);
        if (!isfinite(f->params[k].value))
            return orr_fail(err, ORR_ERR_ARG, "field '%s': param '%s' must be a finite number "
                            "(got %g)", f->name, f->params[k].name, f->params[k].value);
    }
    char label[96];
    label_of(f, label, sizeof label);
    orr_status st = orr_snippet_check(f->origin, label, f->builtin, "accel", f->accel,
                                      f->accel_line, err);
    if (!st)
        st = orr_snippet_check(f->origin, label, f->builtin, "potential", f->potential,
                               f->potential_line, err);
    if (!st)
        st = orr_snippet_check(f->origin, label, f->builtin, "jerk", f->jerk, f->jerk_line, err);
    return st;
}

/* ---- built-in fields --------------------------------------------------------- */

const char *const *orr_field_builtin_names(void)
{
    static const char *names[32];
    static char store[32][64];
    static int done;
    if (!done) {
        int n = 0;
        for (const orr_ksrc_file *f = orr_ksrc_embedded; f->name && n < 31; f++) {
            const size_t len = strlen(f->name);
            if (strncmp(f->name, "fields/", 7) == 0 && len > 9 &&
                strcmp(f->name + len - 2, ".h") == 0) {
                snprintf(store[n], sizeof store[n], "%.*s", (int)(len - 9), f->name + 7);
                names[n] = store[n];
                n++;
            }
        }
        for (int a = 1; a < n; a++)   /* insertion sort: a handful of names */
            for (int b = a; b > 0 && strcmp(names[b - 1], names[b]) > 0; b--) {
                const char *t = names[b];
                names[b] = names[b - 1];
                names[b - 1] = t;
            }
        names[n] = NULL;
        done = 1;
    }
    return names;
}

enum { SEC_EXPR, SEC_ACCEL, SEC_POTENTIAL, SEC_JERK, SEC_COUNT };

/* A field file: `//@` metadata lines, then an `//@expr` section (the
 * potential as an expression) or `//@accel`, `//@potential`, `//@jerk`
 * (snippets). */
static orr_status parse_builtin(orr_field *f, const char *name, const char *text,
                                orr_error *err)
{
    char file[96];
    snprintf(file, sizeof file, "fields/%s.h", name);
    orr_status st = orr_field_init(f, name, file, err);
    if (st)
        return st;
    f->builtin = 1;
    orr_buf sec[SEC_COUNT] = {{0}, {0}, {0}, {0}};
    int first[SEC_COUNT] = {1, 1, 1, 1};
    int cur = -1, line = 0, bad = 0;
    for (const char *p = text; *p && !st && !bad;) {
        const char *eol = strchr(p, '\n');
        const size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char ln[512];
        line++;
        snprintf(ln, sizeof ln, "%.*s", (int)(len < sizeof ln ? len : sizeof ln - 1), p);
        if (strncmp(ln, "//@", 3) == 0) {
            char key[32] = "", a[64] = "", kind[16] = "";
            int off = 0;
            sscanf(ln + 3, "%31s%n", key, &off);
            const char *rest = ln + 3 + off;
            while (*rest == ' ')
                rest++;
            static const char *const secs[SEC_COUNT] = {"expr", "accel", "potential", "jerk"};
            int s = 0;
            while (s < SEC_COUNT && strcmp(key, secs[s]) != 0)
                s++;
            if (s < SEC_COUNT) {
                cur = s;
                first[s] = line + 1;
            } else if (strcmp(key, "field") == 0) {
                snprintf(f->doc, sizeof f->doc, "%s", rest);
            } else if (strcmp(key, "param") == 0) {
                double v;
                int used = 0;
                if (sscanf(rest, "%63s %lf %n", a, &v, &used) < 2)
                    st = orr_fail(err, ORR_ERR_ARG, "%s:%d: expected //@param NAME VALUE DOC",
                                  file, line);
                else if (!(st = orr_field_add_param(f, a, v, err))) {
                    orr_field_param *q = &f->params[f->nparams - 1];
                    snprintf(q->doc, sizeof q->doc, "%s", rest + used);
                    q->given = 0;
                }
            } else if (strcmp(key, "unit") == 0) {   /* //@unit NAME length|velocity|mass CGS */
                double v;
                const int k = sscanf(rest, "%63s %15s %lf", a, kind, &v) == 3
                                  ? orr_field_param_index(f, a) : -2;
                if (k < 0 || (strcmp(kind, "length") && strcmp(kind, "velocity") &&
                              strcmp(kind, "mass")) || !(v > 0))
                    st = orr_fail(err, ORR_ERR_ARG, "%s:%d: expected //@unit PARAM "
                                  "length|velocity|mass CGS (after the param's //@param)", file,
                                  line);
                else
                    snprintf(f->params[k].unit, sizeof f->params[k].unit, "%s", kind),
                        f->params[k].cgs = v;
            } else {
                st = orr_fail(err, ORR_ERR_ARG, "%s:%d: unknown directive //@%s", file, line,
                              key);
            }
        } else if (cur >= 0) {
            bad = orr_buf_put(&sec[cur], p, len) || orr_buf_put(&sec[cur], "\n", 1);
        }
        p = eol ? eol + 1 : p + len;
    }
    if (!st && bad)
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (!st && !sec[SEC_EXPR].data && !sec[SEC_ACCEL].data)
        st = orr_fail(err, ORR_ERR_ARG, "%s: no //@expr or //@accel section", file);
    if (!st && sec[SEC_EXPR].data) {
        orr_error e = {0};
        char *code[3] = {NULL, NULL, NULL};
        st = orr_expr_field(f, sec[SEC_EXPR].data, &code[0], &code[1], &code[2], &e);
        if (!st) {   /* in place of the empty snippets orr_field_init made */
            free(f->accel), free(f->potential), free(f->jerk);
            f->accel = code[0], f->potential = code[1], f->jerk = code[2];
        }
        if (st) {   /* the expression's first line in the file, then the place in it */
            orr_fail(err, st, "%s:%d: %s", file, first[SEC_EXPR], e.msg);
            orr_error_clear(&e);
        }
        if (!st) {
            free(f->expr);
            f->expr = sec[SEC_EXPR].data;
            sec[SEC_EXPR].data = NULL;
            f->expr_line = first[SEC_EXPR];
        }
    } else if (!st) {
        char *const text3[3] = {sec[SEC_ACCEL].data, sec[SEC_POTENTIAL].data, sec[SEC_JERK].data};
        st = orr_field_set_code(f, text3[0], text3[1], text3[2], err);
        f->accel_line = first[SEC_ACCEL];
        f->potential_line = first[SEC_POTENTIAL];
        f->jerk_line = first[SEC_JERK];
    }
    for (int s = 0; s < SEC_COUNT; s++)
        orr_buf_free(&sec[s]);
    if (st)
        orr_field_free(f);
    return st;
}

orr_status orr_field_builtin(const char *name, orr_field *f, orr_error *err)
{
    memset(f, 0, sizeof *f);
    if (!valid_name(name, 60))
        return orr_fail(err, ORR_ERR_ARG, "invalid field name '%s' (lowercase letters, digits, "
                        "'_')", name ? name : "");
    char *text = NULL;
    orr_status st = orr_ksrc_builtin("fields", name, "field", orr_field_builtin_names(), &text,
                                     err);
    if (st)
        return st;
    st = parse_builtin(f, name, text, err);
    free(text);
    return st;
}

/* ---- a simulation's fields --------------------------------------------------- */

orr_status orr_fieldset_add(orr_fieldset *s, const orr_field *f, orr_error *err)
{
    if (s->n >= ORR_FIELD_MAX)
        return orr_fail(err, ORR_ERR_ARG, "too many fields (at most %d)", ORR_FIELD_MAX);
    for (int k = 0; k < s->n; k++)
        if (strcmp(s->f[k].name, f->name) == 0)
            return orr_fail(err, ORR_ERR_ARG, "two fields are called '%s': give one another "
                            "name (orrery.field{base = \"%s\", name = ...})", f->name, f->name);
    orr_status st = orr_field_copy(&s->f[s->n], f, err);
    if (!st)
        s->n++;
    return st;
}

orr_status orr_fieldset_copy(orr_fieldset *dst, const orr_fieldset *src, orr_error *err)
{
    dst->n = 0;
    dst->planar = src ? src->planar : 0;
    dst->frame = src ? src->frame : 0;
    for (int k = 0; src && k < src->n; k++) {
        orr_status st = orr_field_copy(&dst->f[k], &src->f[k], err);
        if (st) {
            orr_fieldset_free(dst);
            return st;
        }
        dst->n = k + 1;
    }
    return ORR_OK;
}

void orr_fieldset_free(orr_fieldset *s)
{
    for (int k = 0; k < s->n; k++)
        orr_field_free(&s->f[k]);
    s->n = 0;
}

int orr_fieldset_runtime_count(const orr_fieldset *s)
{
    int n = 0;
    for (int k = 0; s && k < s->n; k++)
        n += orr_field_runtime_count(&s->f[k]);
    return n;
}

void orr_fieldset_runtime_values(const orr_fieldset *s, double out[ORR_FIELD_MAX_RUNTIME])
{
    int slot = 0;
    memset(out, 0, sizeof(double) * ORR_FIELD_MAX_RUNTIME);
    for (int k = 0; s && k < s->n; k++)
        for (int q = 0; q < s->f[k].nparams && slot < ORR_FIELD_MAX_RUNTIME; q++)
            if (s->f[k].params[q].runtime)
                out[slot++] = s->f[k].params[q].value;
}

orr_status orr_fieldset_validate(const orr_fieldset *s, orr_error *err)
{
    if (!s)
        return ORR_OK;
    if (s->n > ORR_FIELD_MAX)
        return orr_fail(err, ORR_ERR_ARG, "too many fields (at most %d)", ORR_FIELD_MAX);
    for (int k = 0; k < s->n; k++) {
        orr_status st = orr_field_validate(&s->f[k], err);
        if (st)
            return st;
        for (int q = 0; q < k; q++)
            if (strcmp(s->f[q].name, s->f[k].name) == 0)
                return orr_fail(err, ORR_ERR_ARG, "two fields are called '%s'", s->f[k].name);
    }
    if (orr_fieldset_runtime_count(s) > ORR_FIELD_MAX_RUNTIME)
        return orr_fail(err, ORR_ERR_ARG, "the fields have %d runtime params (at most %d in "
                        "all)", orr_fieldset_runtime_count(s), ORR_FIELD_MAX_RUNTIME);
    return ORR_OK;
}

int orr_fieldset_find(const orr_fieldset *s, const char *dotted, int *field, int *param)
{
    const char *dot = strchr(dotted, '.');
    if (!s || !dot)
        return -1;
    for (int k = 0; k < s->n; k++)
        if (strlen(s->f[k].name) == (size_t)(dot - dotted) &&
            strncmp(s->f[k].name, dotted, (size_t)(dot - dotted)) == 0) {
            *field = k;
            *param = orr_field_param_index(&s->f[k], dot + 1);
            return *param >= 0 ? 0 : -1;
        }
    *field = -1;
    return -1;
}

int orr_fieldset_has_potential(const orr_fieldset *s)
{
    for (int k = 0; s && k < s->n; k++)
        if (!orr_field_has_potential(&s->f[k]))
            return 0;
    return 1;
}

int orr_fieldset_has_jerk(const orr_fieldset *s)
{
    for (int k = 0; s && k < s->n; k++)
        if (!orr_field_has_jerk(&s->f[k]))
            return 0;
    return 1;
}

orr_status orr_fieldset_units(orr_fieldset *s, double length_cm, double velocity_cm_s,
                              double mass_g, orr_error *err)
{
    for (int k = 0; s && k < s->n; k++)
        for (int q = 0; q < s->f[k].nparams; q++) {
            orr_field_param *p = &s->f[k].params[q];
            const double u = strcmp(p->unit, "length") == 0     ? length_cm
                             : strcmp(p->unit, "velocity") == 0 ? velocity_cm_s
                             : strcmp(p->unit, "mass") == 0     ? mass_g : 0;
            if (u > 0 && !p->given) {
                orr_status st = orr_field_set_param(&s->f[k], p->name, p->cgs / u, err);
                p->given = 0;   /* still the built-in's default, in these units */
                if (st)
                    return st;
            }
        }
    return ORR_OK;
}

/* ---- generated source ----------------------------------------------------------- */

/* The declarations a field's snippet sees: G, r2 and the params (runtime
 * ones from fp, its slots from 0). */
static int emit_bindings(const orr_field *f, orr_buf *b)
{
    int bad = orr_buf_printf(b, "    const real G = (real)ORR_G, r2 = x * x + y * y + z * z;\n"
                                "    (void)G; (void)r2; (void)t; (void)fp;\n");
    int slot = 0;
    for (int k = 0; k < f->nparams && !bad; k++) {
        const orr_field_param *p = &f->params[k];
        if (p->runtime) {
            bad = orr_buf_printf(b, "    const real %s = (real)fp[%d]; (void)%s;\n", p->name,
                                 slot++, p->name);
        } else {
            char hex[64];
            orr_hexfloat(hex, sizeof hex, p->value);
            bad = orr_buf_printf(b, "    const real %s = (real)%s; /* %.17g */ (void)%s;\n",
                                 p->name, hex, p->value, p->name);
        }
    }
    return bad;
}

static int emit_field(const orr_field *f, int k, orr_buf *b)
{
    char label[96], after[96];
    label_of(f, label, sizeof label);
    snprintf(after, sizeof after, "<field %s: generated>", f->name);
    int bad = orr_buf_printf(b, "#line 1 \"%s\"\n/* field '%s' (", after, f->name) ||
              orr_put_escaped(b, f->origin, 1) || orr_buf_printf(b, ") */\n");
    for (int q = 0; q < f->nparams && !bad; q++)   /* its names are its own (see law.c) */
        bad = orr_buf_printf(b, "#undef %s\n", f->params[q].name);
    static const char pos[] = "real x, real y, real z, real t, const double *fp";
    bad = bad || orr_buf_printf(b, "ORR_FIELD_FN void orr_field%d_accel(%s, real *oax, real *oay, "
                                   "real *oaz)\n{\n", k, pos);
    bad = bad || emit_bindings(f, b) ||
          orr_buf_printf(b, "    real ax = 0, ay = 0, az = 0;\n    {\n") ||
          orr_snippet_emit(b, f->origin, label, f->builtin, "accel", f->accel, f->accel_line,
                           after) ||
          orr_buf_printf(b, "    }\n    *oax += ax;\n    *oay += ay;\n    *oaz += az;\n}\n");
    bad = bad || orr_buf_printf(b, "ORR_FIELD_FN void orr_field%d_accel_jerk(real x, real y, real z, "
                                   "real vx, real vy, real vz, real t, const double *fp, real "
                                   "*oax, real *oay, real *oaz, real *ojx, real *ojy, real "
                                   "*ojz)\n{\n", k);
    /* the jerk inside the accel's block: its values (and an expression's
     * temporaries) in scope */
    bad = bad || emit_bindings(f, b) ||
          orr_buf_printf(b, "    (void)vx; (void)vy; (void)vz;\n    real ax = 0, ay = 0, az = 0, "
                            "jx = 0, jy = 0, jz = 0;\n    {\n") ||
          orr_snippet_emit(b, f->origin, label, f->builtin, "accel", f->accel, f->accel_line,
                           after) ||
          orr_buf_printf(b, "    {\n") ||
          orr_snippet_emit(b, f->origin, label, f->builtin, "jerk", f->jerk, f->jerk_line,
                           after) ||
          orr_buf_printf(b, "    }\n    }\n    *oax += ax;\n    *oay += ay;\n    *oaz += az;\n"
                            "    *ojx += jx;\n    *ojy += jy;\n    *ojz += jz;\n}\n");
    bad = bad || orr_buf_printf(b, "ORR_FIELD_FN real orr_field%d_potential(%s)\n{\n", k, pos);
    bad = bad || emit_bindings(f, b) || orr_buf_printf(b, "    real phi = 0;\n    {\n") ||
          orr_snippet_emit(b, f->origin, label, f->builtin, "potential", f->potential,
                           f->potential_line, after) ||
          orr_buf_printf(b, "    }\n    return phi;\n}\n");
    return bad;
}

/* The helpers of special.h that the CPU's double copy renames (field.h). */
static const char *const special_names[] = {"orr_rsqrt3", "orr_gamma_eps", "orr_gamma_series",
                                            "orr_gamma_cf", "orr_gammainc", "orr_gammaincc"};
enum { NSPECIAL = sizeof special_names / sizeof special_names[0] };

/* The CPU's fields in double for a frame: `real` and the math in double
 * around the per-field functions and a second copy of special.h (opening
 * 1), then put back (0). */
static int emit_cpu_double(orr_buf *b, int opening)
{
    int bad = 0;
    if (opening) {
        bad = orr_buf_printf(b, "#define real double\n#undef ORR_SFX\n#define ORR_SFX(fn) fn\n");
        for (int k = 0; k < NSPECIAL && !bad; k++)
            bad = orr_buf_printf(b, "#define %s %s_d\n", special_names[k], special_names[k]);
        char *text = NULL;
        orr_error e = {0};
        if (!bad && orr_ksrc_get("special.h", &text, NULL, 0, &e) != ORR_OK)
            bad = 1;
        bad = bad || orr_buf_printf(b, "#line 1 \"special.h\"\n%s\n", text);
        free(text);
        orr_error_clear(&e);
        return bad;
    }
    bad = orr_buf_printf(b, "#undef real\n#undef ORR_SFX\n#if ORR_DOUBLE\n#define ORR_SFX(fn) fn\n"
                            "#else\n#define ORR_SFX(fn) fn##f\n#endif\n");
    for (int k = 0; k < NSPECIAL && !bad; k++)
        bad = orr_buf_printf(b, "#undef %s\n", special_names[k]);
    return bad;
}

/* The frame's sums (field.h): each field at the centre plus the body and at
 * the centre, in double; w: 0 accel, 1 accel + jerk, 2 potential. */
static int emit_frame_sum(const orr_fieldset *s, int w, orr_buf *b)
{
    const int planar = s->planar;
    int bad = orr_buf_printf(b, "    double c[3], u[3];\n    orr_frame_centre(fp + %d, t, c, u);\n"
                                "    (void)u;\n    const double X = c[0] + (double)x, Y = c[1] + "
                                "(double)y, Z = c[2] + (double)z;\n",
                             ORR_RT_FRAME - ORR_RT_FIELD);
    if (w == 1)
        bad = bad || orr_buf_printf(b, "    const double VX = u[0] + (double)vx, VY = u[1] + "
                                       "(double)vy, VZ = u[2] + (double)vz;\n");
    bad = bad || orr_buf_printf(b, w == 2 ? "    double phi = 0;\n"
                                          : "    double dx = 0, dy = 0, dz = 0, ex = 0, ey = 0, "
                                            "ez = 0;\n    (void)ex; (void)ey; (void)ez;\n");
    int off = 0;
    for (int k = 0; k < s->n && !bad; k++) {
        if (w == 0)
            bad = orr_buf_printf(b, "    {\n        double p[3] = {0, 0, 0}, q[3] = {0, 0, 0};\n"
                                    "        ORR_FD(orr_field%d_accel)(X, Y, Z, t, fp + %d, &p[0], "
                                    "&p[1], &p[2]);\n        ORR_FD(orr_field%d_accel)(c[0], c[1], "
                                    "c[2], t, fp + %d, &q[0], &q[1], &q[2]);\n        dx += p[0] - "
                                    "q[0];\n        dy += p[1] - q[1];\n        dz += p[2] - q[2];\n"
                                    "    }\n", k, off, k, off);
        else if (w == 1)
            bad = orr_buf_printf(b, "    {\n        double p[6] = {0, 0, 0, 0, 0, 0}, q[6] = {0, 0, "
                                    "0, 0, 0, 0};\n        ORR_FD(orr_field%d_accel_jerk)(X, Y, Z, VX, "
                                    "VY, VZ, t, fp + %d, &p[0], &p[1], &p[2], &p[3], &p[4], &p[5]);\n"
                                    "        ORR_FD(orr_field%d_accel_jerk)(c[0], c[1], c[2], u[0], "
                                    "u[1], u[2], t, fp + %d, &q[0], &q[1], &q[2], &q[3], &q[4], "
                                    "&q[5]);\n        dx += p[0] - q[0];\n        dy += p[1] - q[1];\n"
                                    "        dz += p[2] - q[2];\n        ex += p[3] - q[3];\n        "
                                    "ey += p[4] - q[4];\n        ez += p[5] - q[5];\n    }\n",
                                    k, off, k, off);
        else
            bad = orr_buf_printf(b, "    phi += ORR_FD(orr_field%d_potential)(X, Y, Z, t, fp + %d);\n",
                                 k, off);
        off += orr_field_runtime_count(&s->f[k]);
    }
    if (w == 2)
        return bad || orr_buf_printf(b, "    return phi;\n}\n");
    bad = bad || orr_buf_printf(b, "    *ax += (real)dx;\n    *ay += (real)dy;\n%s",
                                planar ? "" : "    *az += (real)dz;\n");
    if (w == 1)
        bad = bad || orr_buf_printf(b, "    *jx += (real)ex;\n    *jy += (real)ey;\n%s",
                                    planar ? "" : "    *jz += (real)ez;\n");
    return bad || orr_buf_printf(b, "}\n");
}

int orr_fieldset_emit(const orr_fieldset *s, int cpu, orr_buf *b)
{
    const int n = s ? s->n : 0, frame = n > 0 && s->frame;
    /* in a frame each field runs twice a body, at the centre plus the body
     * and at the centre: out of line, so that both go through the same
     * instructions (inlined, the compiler may contract them into FMAs
     * differently, and a body at the centre would get a noise of 1e-16 of
     * the field's pull instead of exactly 0) */
    int bad = orr_buf_printf(b, "#line 1 \"<fields: generated>\"\n#define ORR_NFIELDS %d\n"
                                "#define ORR_FRAME %d\n", n, frame);
    bad = bad || orr_buf_printf(b, frame ? "#if ORR_GPU\n#define ORR_FIELD_FN template <typename "
                                           "real> static __device__ __noinline__\n#else\n#define "
                                           "ORR_FIELD_FN static __attribute__((noinline))\n#endif\n"
                                         : "#define ORR_FIELD_FN ORR_LAW\n");
    if (frame)   /* the per-field functions in double: the GPU's templates, the CPU's copy */
        bad = bad || orr_buf_printf(b, "#if ORR_GPU\n#define ORR_FD(f) f<double>\n#else\n"
                                       "#define ORR_FD(f) f\n#endif\n") ||
              (cpu && emit_cpu_double(b, 1));
    for (int k = 0; k < n && !bad; k++)
        bad = emit_field(&s->f[k], k, b);
    if (frame && cpu)
        bad = bad || emit_cpu_double(b, 0);
    bad = bad || orr_buf_printf(b, "#line 1 \"<fields: generated>\"\n");
    if (frame)   /* the centre and its velocity at t, from the launch's polynomials */
        bad = bad || orr_buf_printf(
            b, "ORR_HELPER void orr_frame_centre(const double *fr, double t, double *c, double *u)\n"
               "{\n    const double s = t - fr[0];\n    for (int d = 0; d < 3; d++) {\n"
               "        const double *k = fr + 1 + 6 * d;\n"
               "        c[d] = k[0] + s * (k[1] + s * (k[2] + s * (k[3] + s * (k[4] + s * k[5]))));\n"
               "        u[d] = k[1] + s * (2 * k[2] + s * (3 * k[3] + s * (4 * k[4] + s * 5 * k[5])));\n"
               "    }\n}\n");
    /* the sums over the fields, in order; fp from ORR_RT_FIELD on */
    static const char *const head[3] = {
        "ORR_LAW void orr_fields_accel(real x, real y, real z, const double *fp, double t, real "
        "*ax, real *ay, real *az)\n{\n    (void)x; (void)y; (void)z; (void)fp; (void)t; "
        "(void)ax; (void)ay; (void)az;\n",
        "ORR_LAW void orr_fields_accel_jerk(real x, real y, real z, real vx, real vy, real vz, "
        "const double *fp, double t, real *ax, real *ay, real *az, real *jx, real *jy, real "
        "*jz)\n{\n    (void)x; (void)y; (void)z; (void)vx; (void)vy; (void)vz; (void)fp; "
        "(void)t; (void)ax; (void)ay; (void)az; (void)jx; (void)jy; (void)jz;\n",
        "ORR_LAW double orr_fields_potential(real x, real y, real z, const double *fp, double t)\n"
        "{\n    (void)x; (void)y; (void)z; (void)fp; (void)t;\n"};
    const int planar = s && s->planar && n > 0;   /* z's parts put back as they were */
    for (int w = 0; w < 3 && !bad; w++) {
        bad = orr_buf_printf(b, "%s", head[w]);
        if (frame) {
            bad = bad || emit_frame_sum(s, w, b);
            continue;
        }
        if (!bad && w == 2)
            bad = orr_buf_printf(b, "    double phi = 0;\n");
        if (!bad && planar && w < 2)
            bad = orr_buf_printf(b, w == 0 ? "    const real az0 = *az;\n"
                                           : "    const real az0 = *az, jz0 = *jz;\n");
        int off = 0;
        for (int k = 0; k < n && !bad; k++) {
            if (w == 0)
                bad = orr_buf_printf(b, "    orr_field%d_accel(x, y, z, (real)t, fp + %d, ax, ay, "
                                        "az);\n", k, off);
            else if (w == 1)
                bad = orr_buf_printf(b, "    orr_field%d_accel_jerk(x, y, z, vx, vy, vz, (real)t, "
                                        "fp + %d, ax, ay, az, jx, jy, jz);\n", k, off);
            else
                bad = orr_buf_printf(b, "    phi += (double)orr_field%d_potential(x, y, z, (real)t, "
                                        "fp + %d);\n", k, off);
            off += orr_field_runtime_count(&s->f[k]);
        }
        if (!bad && planar && w < 2)
            bad = orr_buf_printf(b, w == 0 ? "    *az = az0;\n" : "    *az = az0;\n    *jz = jz0;\n");
        bad = bad || orr_buf_printf(b, w == 2 ? "    return phi;\n}\n" : "}\n");
    }
    return bad ? -1 : 0;
}
