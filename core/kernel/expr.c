/* expr: force laws from an energy, external fields from a potential (see
 * expr.h).  The expression is parsed into a tree (its identifiers as text,
 * with their places), resolved into a shared graph of nodes (identical
 * nodes made once, constants folded), differentiated with the chain rule
 * (each node's derivative made once per variable: r2 for a pair energy; x,
 * y, z and the motion along (vx, vy, vz, 1) in (x, y, z, t) for a field),
 * and written out as C, a temporary per node. */
#include "expr.h"
#include "field.h"

#include "util.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* N_VAR: a field's coordinate (fn: 0 x, 1 y, 2 z, 3 t); N_R2: a pair's
 * softened r2, or a field's x^2 + y^2 + z^2 */
enum { N_CONST, N_R2, N_NAME, N_NEG, N_ADD, N_SUB, N_MUL, N_DIV, N_POW, N_FN, N_IDENT, N_VAR };
_Static_assert(N_SUB == N_ADD + 1 && N_DIV == N_MUL + 1, "parse_chain takes pairs of operators");
enum { F_SQRT, F_EXP, F_LOG, F_ABS, F_ERF, F_ERFC, F_TANH, F_STEP, F_MIN, F_MAX, F_SELECT,
       F_GAMMAINC, F_GAMMAINCC, F_COUNT };
static const struct {
    const char *name;
    int arity;
} fns[F_COUNT] = {{"sqrt", 1}, {"exp", 1},  {"log", 1},  {"abs", 1}, {"erf", 1},    {"erfc", 1},
                  {"tanh", 1}, {"step", 1}, {"min", 2},  {"max", 2}, {"select", 3},
                  {"gammainc", 2}, {"gammaincc", 2}};
#define FN_LIST "sqrt, exp, log, abs, erf, erfc, tanh, step, min, max, select, gammainc, gammaincc"

#define NAME_MAX_LEN 40
#define MAX_DEFS 64
/* Limits that keep the recursion of the parser, the derivative and the
 * writer far inside the stack: brackets and unary signs nested, and the
 * parts of the whole expression. */
#define MAX_DEPTH 200
#define MAX_PARTS 5000

typedef struct {
    int op, fn, a, b, c;
    double v;
    char name[NAME_MAX_LEN];
    int at;   /* raw nodes: the offset in the source */
} node;

typedef struct {
    node *n;
    int count, cap;
} nodes;

typedef struct {
    const char *src;
    const char *p;
    const orr_law *law;        /* a pair energy's law, or NULL */
    const orr_field *field;    /* a field's potential: its field, or NULL */
    const char *what;          /* "energy" or "potential": errors' prefix */
    orr_error *err;
    int failed;
    nodes raw;                 /* the parse */
    nodes g;                   /* the resolved, shared graph */
    struct {
        char name[NAME_MAX_LEN];
        int raw, at, state, node;   /* state: 0 not yet, 1 resolving, 2 done */
    } defs[MAX_DEFS];
    int ndefs;
    int *memo;                 /* raw node -> graph node (-1: not yet) */
    int *dmemo;                /* graph node -> its derivative (-1: not yet) */
    int dcap;
    int dl[5];                 /* the derivative's leaves: of r2, x, y, z, t (nodes) */
    int plain;                 /* mk makes products as given (product() rebuilding one) */
    int depth;                 /* the parser's nesting */
    int cur_at;                /* the place being resolved (for errors found there) */
} ctx;

/* ---- errors -------------------------------------------------------------- */

/* The line and column (from 1) of offset at. */
static void line_col(const ctx *c, int at, int *line, int *col)
{
    *line = *col = 1;
    for (int k = 0; k < at && c->src[k]; k++) {
        if (c->src[k] == '\n')
            ++*line, *col = 1;
        else
            ++*col;
    }
}

static int fail_at(ctx *c, int at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_at(ctx *c, int at, const char *fmt, ...)
{
    if (c->failed)
        return -1;
    c->failed = 1;
    int line, col;
    line_col(c, at, &line, &col);
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    orr_fail(c->err, ORR_ERR_ARG, "%s:%d:%d: %s", c->what, line, col, msg);
    return -1;
}

/* "column C", or "line L, column C" in an expression of several lines. */
static const char *place(const ctx *c, int at, char *buf, size_t size)
{
    int line, col;
    line_col(c, at, &line, &col);
    if (strchr(c->src, '\n'))
        snprintf(buf, size, "line %d, column %d", line, col);
    else
        snprintf(buf, size, "column %d", col);
    return buf;
}

/* An unexpected character, as printed: itself, or its byte value. */
static const char *shown(char ch, char *buf, size_t size)
{
    const unsigned char u = (unsigned char)ch;
    if (u >= 0x20 && u < 0x7f)
        snprintf(buf, size, "'%c'", ch);
    else
        snprintf(buf, size, "the byte 0x%02x", u);
    return buf;
}

static int add(ctx *c, nodes *ns, node x)
{
    if (c->failed)
        return -1;
    if (ns->count == ns->cap) {
        int cap = ns->cap ? 2 * ns->cap : 64;
        node *p = realloc(ns->n, sizeof *p * (size_t)cap);
        if (!p) {
            c->failed = 1;
            orr_fail(c->err, ORR_ERR_NOMEM, "out of memory");
            return -1;
        }
        ns->n = p, ns->cap = cap;
    }
    ns->n[ns->count] = x;
    return ns->count++;
}

/* ---- parsing ----------------------------------------------------------- */

static void skip(ctx *c)
{
    while (isspace((unsigned char)*c->p))
        c->p++;
}

static int at(const ctx *c)
{
    return (int)(c->p - c->src);
}

static int raw(ctx *c, int op, int fn, int a, int b, int d, double v, const char *name, int pos)
{
    if (c->raw.count >= MAX_PARTS)
        return fail_at(c, pos, "the expression has more than %d parts (numbers, names and "
                       "operations): write it with intermediate values", MAX_PARTS);
    node x = {op, fn, a, b, d, v, "", pos};
    if (name)
        snprintf(x.name, sizeof x.name, "%s", name);
    return add(c, &c->raw, x);
}

static int parse_sum(ctx *c);

static int parse_ident(ctx *c, char *name)
{
    int len = 0;
    while (isalnum((unsigned char)*c->p) || *c->p == '_') {
        if (len < NAME_MAX_LEN - 1)
            name[len] = *c->p;
        len++;
        c->p++;
    }
    name[len < NAME_MAX_LEN ? len : NAME_MAX_LEN - 1] = '\0';
    return len;
}

static int parse_primary(ctx *c)
{
    skip(c);
    const int pos = at(c);
    if (c->depth > MAX_DEPTH)
        return fail_at(c, pos, "brackets, functions and signs nested more than %d deep",
                       MAX_DEPTH);
    if (*c->p == '(') {
        c->p++;
        c->depth++;
        int e = parse_sum(c);
        c->depth--;
        skip(c);
        if (e < 0)
            return -1;
        char where[48];
        if (*c->p != ')')
            return fail_at(c, at(c), "expected ')' to close the '(' at %s",
                           place(c, pos, where, sizeof where));
        c->p++;
        return e;
    }
    if (isdigit((unsigned char)*c->p) || (*c->p == '.' && isdigit((unsigned char)c->p[1]))) {
        char *end = NULL;
        const double v = strtod(c->p, &end);
        if (isalpha((unsigned char)*end) || *end == '_' || (end - c->p > 1 && c->p[1] == 'x'))
            return fail_at(c, (int)(end - c->src), "a number followed by '%c' (numbers are "
                           "decimal: 12, 2.5, 1e-3)", end - c->p > 1 && c->p[1] == 'x' ? 'x' : *end);
        if (!isfinite(v))
            return fail_at(c, pos, "the number is out of range");
        c->p = end;
        return raw(c, N_CONST, 0, -1, -1, -1, v, NULL, pos);
    }
    if (isalpha((unsigned char)*c->p) || *c->p == '_') {
        char name[NAME_MAX_LEN];
        if (parse_ident(c, name) >= NAME_MAX_LEN)
            return fail_at(c, pos, "the name '%.20s...' is too long", name);
        skip(c);
        if (*c->p != '(')
            return raw(c, N_IDENT, 0, -1, -1, -1, 0, name, pos);
        int f = 0;
        while (f < F_COUNT && strcmp(fns[f].name, name) != 0)
            f++;
        if (f == F_COUNT)
            return fail_at(c, pos, "unknown function '%s' (the functions: " FN_LIST ")", name);
        c->p++;
        int args[3] = {-1, -1, -1}, n = 0;
        skip(c);
        c->depth++;
        if (*c->p != ')')
            for (;;) {
                const int e = parse_sum(c);
                if (e < 0)
                    return -1;
                if (n < 3)
                    args[n] = e;
                n++;
                skip(c);
                if (*c->p == ',') {
                    c->p++;
                    continue;
                }
                break;
            }
        c->depth--;
        if (*c->p != ')')
            return fail_at(c, at(c), "expected ',' or ')' in the arguments of '%s'", name);
        c->p++;
        if (n != fns[f].arity)
            return fail_at(c, pos, "function '%s' takes %d argument%s (got %d)", name,
                           fns[f].arity, fns[f].arity == 1 ? "" : "s", n);
        return raw(c, N_FN, f, args[0], args[1], args[2], 0, name, pos);
    }
    if (!*c->p || *c->p == ';')
        return fail_at(c, pos, "an expression ends too early");
    char ch[24];
    return fail_at(c, pos, "unexpected %s", shown(*c->p, ch, sizeof ch));
}

static int parse_unary(ctx *c);

static int parse_power(ctx *c)
{
    int a = parse_primary(c);
    skip(c);
    if (a < 0 || *c->p != '^')
        return a;
    const int pos = at(c);
    c->p++;
    const int b = parse_unary(c);   /* right-associative: a^b^c = a^(b^c), a^-b */
    return b < 0 ? -1 : raw(c, N_POW, 0, a, b, -1, 0, NULL, pos);
}

static int parse_unary(ctx *c)
{
    skip(c);
    const int pos = at(c);
    if (*c->p == '-' || *c->p == '+') {
        const int neg = *c->p == '-';
        c->p++;
        if (++c->depth > MAX_DEPTH)
            return fail_at(c, pos, "brackets, functions and signs nested more than %d deep",
                           MAX_DEPTH);
        const int a = parse_unary(c);
        c->depth--;
        return a < 0 || !neg ? a : raw(c, N_NEG, 0, a, -1, -1, 0, NULL, pos);
    }
    return parse_power(c);
}

/* Operands of next joined left to right by the operators ops[0] (node
 * op0) and ops[1] (node op0 + 1): a sum's terms, a term's factors. */
static int parse_chain(ctx *c, const char ops[2], int op0, int (*next)(ctx *))
{
    int a = next(c);
    for (;;) {
        skip(c);
        if (a < 0 || (*c->p != ops[0] && *c->p != ops[1]))
            return a;
        const int op = *c->p == ops[0] ? op0 : op0 + 1, pos = at(c);
        c->p++;
        const int b = next(c);
        a = b < 0 ? -1 : raw(c, op, 0, a, b, -1, 0, NULL, pos);
    }
}

static int parse_term(ctx *c)
{
    return parse_chain(c, "*/", N_MUL, parse_unary);   /* N_MUL, N_DIV */
}

static int parse_sum(ctx *c)
{
    return parse_chain(c, "+-", N_ADD, parse_term);   /* N_ADD, N_SUB */
}

/* What name already is, or NULL: an intermediate value may not hide it. */
static int has_param(const ctx *c, const char *name)
{
    return c->field ? orr_field_param_index(c->field, name) >= 0
                    : orr_law_param_index(c->law, name) >= 0;
}

static const char *taken_name(const ctx *c, const char *name)
{
    if (c->field) {
        static const char *const vars[][2] = {{"x", "a coordinate"}, {"y", "a coordinate"},
                                              {"z", "a coordinate"}, {"t", "the time"},
                                              {"r", "the distance from the origin"},
                                              {"r2", "the squared distance from the origin"},
                                              {"G", "the simulation's G"}};
        for (size_t k = 0; k < sizeof vars / sizeof vars[0]; k++)
            if (strcmp(name, vars[k][0]) == 0)
                return vars[k][1];
        if (has_param(c, name))
            return "a param of the field";
        for (int f = 0; f < F_COUNT; f++)
            if (strcmp(name, fns[f].name) == 0)
                return "a function";
        return NULL;
    }
    static const char *const fixed[][2] = {{"r", "the separation"},
                                           {"r2", "the squared separation"},
                                           {"mi", "the mass of body i"},
                                           {"mj", "the mass of body j"},
                                           {"G", "the simulation's G"},
                                           {"eps", "the softening"}};
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        if (strcmp(name, fixed[k][0]) == 0)
            return fixed[k][1];
    if (orr_law_param_index(c->law, name) >= 0)
        return "a param of the law";
    const size_t len = strlen(name);
    char attr[NAME_MAX_LEN];
    snprintf(attr, sizeof attr, "%.*s", len > 2 ? (int)len - 2 : 0, name);
    if (orr_law_attr_index(c->law, name) >= 0 ||
        (len > 2 && name[len - 2] == '_' && (name[len - 1] == 'i' || name[len - 1] == 'j') &&
         orr_law_attr_index(c->law, attr) >= 0))
        return "an attribute of the law";
    for (int f = 0; f < F_COUNT; f++)
        if (strcmp(name, fns[f].name) == 0)
            return "a function";
    return NULL;
}

/* The energy, then "; name = expression" definitions. */
static int parse_all(ctx *c)
{
    const int e = parse_sum(c);
    skip(c);
    while (e >= 0 && *c->p == ';') {
        c->p++;
        skip(c);
        if (!*c->p)   /* a trailing ';' */
            break;
        const int pos = at(c);
        char name[NAME_MAX_LEN];
        if (!isalpha((unsigned char)*c->p) && *c->p != '_')
            return fail_at(c, pos, "expected 'name = expression' after ';'");
        if (parse_ident(c, name) >= NAME_MAX_LEN)
            return fail_at(c, pos, "the name '%.20s...' is too long", name);
        skip(c);
        if (*c->p != '=')
            return fail_at(c, at(c), "expected '=' after '%s'", name);
        c->p++;
        char where[48];
        for (int k = 0; k < c->ndefs; k++)
            if (strcmp(c->defs[k].name, name) == 0)
                return fail_at(c, pos, "'%s' is defined twice (first at %s)", name,
                               place(c, c->defs[k].at, where, sizeof where));
        const char *taken = taken_name(c, name);
        if (taken)
            return fail_at(c, pos, "'%s' is a name already (%s): an intermediate value needs a "
                           "name of its own", name, taken);
        if (c->ndefs == MAX_DEFS)
            return fail_at(c, pos, "more than %d intermediate values", MAX_DEFS);
        const int d = parse_sum(c);
        if (d < 0)
            return -1;
        snprintf(c->defs[c->ndefs].name, NAME_MAX_LEN, "%s", name);
        c->defs[c->ndefs].raw = d;
        c->defs[c->ndefs].at = pos;
        c->defs[c->ndefs].state = 0;
        c->ndefs++;
        skip(c);
    }
    char ch[24];
    if (e >= 0 && *c->p)
        return fail_at(c, at(c), "unexpected %s (an operator or ';' was expected)",
                       shown(*c->p, ch, sizeof ch));
    return e;
}

/* ---- the shared graph ---------------------------------------------------- */

static int is_const(const ctx *c, int i, double v)
{
    return i >= 0 && c->g.n[i].op == N_CONST && c->g.n[i].v == v;
}

static int cst(ctx *c, double v);
static int mk(ctx *c, int op, int fn, int a, int b, int d, double v, const char *name);
static double fold_fn(int fn, double a, double b, double d);

/* The power of r2 node i is (r2: 1, r2^p: p), or NAN.  Powers of r2 (which
 * is never negative) are combined: r = r2^0.5, r2^p r2^q = r2^(p+q), so a
 * law of r and its derivatives come out as a few powers of r2. */
static double r2pow(const ctx *c, int i)
{
    const node *x = i >= 0 ? &c->g.n[i] : NULL;
    if (!x)
        return NAN;
    if (x->op == N_R2)
        return 1;
    if (x->op == N_POW && c->g.n[x->a].op == N_R2 && c->g.n[x->b].op == N_CONST)
        return c->g.n[x->b].v;
    return NAN;
}

static int r2_to(ctx *c, double p)
{
    if (p == 0)
        return cst(c, 1);
    const int r2 = mk(c, N_R2, 0, -1, -1, -1, 0, NULL);
    return p == 1 ? r2 : mk(c, N_POW, 0, r2, cst(c, p), -1, 0, NULL);
}

/* ---- products: a coefficient times powers of distinct factors -------------
 * A product or quotient is flattened into its constant and its factors
 * with their exponents (those of one factor added: exactly for whole
 * exponents, and for any exponent of r2, which is never negative), then
 * made again in one order: the constant first, the factors by node, those
 * with negative exponents below one division.  So mass factors cancel
 * ((2 / mi) (-mi mj) ... is mj ...) and the derivative of -mi mj / r is
 * mj r2^(-3/2), the built-in gravity's own arithmetic. */
#define MAX_FACTORS 64
typedef struct {
    int base;
    double e;
} factor;

static int flatten(ctx *c, int i, double e, double *coef, factor *f, int *nf)
{
    const node *x = &c->g.n[i];
    int base = i;
    double p = 1;
    switch (x->op) {
    case N_CONST:
        if (x->v == 0 && e < 0)
            return -1;
        *coef *= e > 0 ? x->v : 1 / x->v;
        return 0;
    case N_NEG:
        *coef = -*coef;
        return flatten(c, x->a, e, coef, f, nf);
    case N_MUL:
    case N_DIV: {
        const int a = x->a, b = x->b, div = x->op == N_DIV;
        return flatten(c, a, e, coef, f, nf) || flatten(c, b, div ? -e : e, coef, f, nf);
    }
    case N_POW: {
        const node *q = &c->g.n[x->b];
        if (q->op == N_CONST && (c->g.n[x->a].op == N_R2 || q->v == rint(q->v)))
            base = x->a, p = q->v;
        break;
    }
    default:
        break;
    }
    for (int k = 0; k < *nf; k++)
        if (f[k].base == base) {
            f[k].e += p * e;
            return 0;
        }
    if (*nf == MAX_FACTORS)
        return -1;
    f[*nf].base = base, f[*nf].e = p * e;
    (*nf)++;
    return 0;
}

static int by_base(const void *a, const void *b)
{
    return ((const factor *)a)->base - ((const factor *)b)->base;
}

/* a * b (div: a / b) as a normalised product; -2 where it cannot be
 * (too many factors, a division by the constant 0): made as given then. */
static int product(ctx *c, int a, int b, int div)
{
    factor f[MAX_FACTORS];
    int nf = 0;
    double coef = 1;
    if (flatten(c, a, 1, &coef, f, &nf) || flatten(c, b, div ? -1 : 1, &coef, f, &nf) ||
        !isfinite(coef))
        return -2;
    if (coef == 0)
        return cst(c, 0);
    qsort(f, (size_t)nf, sizeof f[0], by_base);
    c->plain++;
    int num = -1, den = -1;
    for (int k = 0; k < nf && !c->failed; k++) {
        const double e = f[k].e;
        if (e == 0)
            continue;
        int t;
        if (c->g.n[f[k].base].op == N_R2 || e > 0) {
            t = c->g.n[f[k].base].op == N_R2 ? r2_to(c, e)
                : e == 1 ? f[k].base : mk(c, N_POW, 0, f[k].base, cst(c, e), -1, 0, NULL);
            num = num < 0 ? t : mk(c, N_MUL, 0, num, t, -1, 0, NULL);
        } else {
            t = e == -1 ? f[k].base : mk(c, N_POW, 0, f[k].base, cst(c, -e), -1, 0, NULL);
            den = den < 0 ? t : mk(c, N_MUL, 0, den, t, -1, 0, NULL);
        }
    }
    int r;
    if (num < 0)
        r = cst(c, coef);
    else
        r = coef == 1 ? num : mk(c, N_MUL, 0, cst(c, coef), num, -1, 0, NULL);
    if (den >= 0)
        r = mk(c, N_DIV, 0, r, den, -1, 0, NULL);
    c->plain--;
    return c->failed ? -1 : r;
}

/* The incomplete gamma functions of s > 0 at x >= 0, not regularised, in
 * double: the lower gamma(s, x) by its series where x < s + 1, else
 * Gamma(s) less the upper one, which is a continued fraction there
 * (modified Lentz); the same method as the kernels' orr_gammainc
 * (prelude.h), here for constants folded on the host. */
static double upper_cf(double s, double x)
{
    const double tiny = 1e-300;
    double b = x + 1 - s, cc = 1 / tiny, dd = 1 / b, h = dd;
    for (int i = 1; i < 1000; i++) {
        const double an = -i * (i - s);
        b += 2;
        dd = an * dd + b;
        dd = fabs(dd) < tiny ? tiny : dd;
        cc = b + an / cc;
        cc = fabs(cc) < tiny ? tiny : cc;
        dd = 1 / dd;
        const double del = dd * cc;
        h *= del;
        if (fabs(del - 1) < 1e-16)
            break;
    }
    return exp(s * log(x) - x) * h;
}

static double lower_series(double s, double x)
{
    double term = 1 / s, sum = term;
    for (int n = 1; n < 1000; n++) {
        term *= x / (s + n);
        sum += term;
        if (fabs(term) < fabs(sum) * 1e-17)
            break;
    }
    return x > 0 ? sum * exp(s * log(x) - x) : 0;
}

static double gamma_lower(double s, double x)
{
    return x < s + 1 ? lower_series(s, x) : tgamma(s) - upper_cf(s, x);
}

static double gamma_upper(double s, double x)
{
    return x < s + 1 ? tgamma(s) - lower_series(s, x) : upper_cf(s, x);
}

/* Function fn of constants (NAN where it has no value: refused by cst). */
static double fold_fn(int fn, double a, double b, double d)
{
    switch (fn) {
    case F_SQRT: return a >= 0 ? sqrt(a) : NAN;
    case F_EXP: return exp(a);
    case F_LOG: return a > 0 ? log(a) : NAN;
    case F_ABS: return fabs(a);
    case F_ERF: return erf(a);
    case F_ERFC: return erfc(a);
    case F_TANH: return tanh(a);
    case F_STEP: return a >= 0 ? 1 : 0;
    case F_MIN: return a < b ? a : b;
    case F_MAX: return a > b ? a : b;
    case F_SELECT: return a != 0 ? b : d;
    case F_GAMMAINC: return b >= 0 ? gamma_lower(a, b) : NAN;
    case F_GAMMAINCC: return b >= 0 ? gamma_upper(a, b) : NAN;
    }
    return NAN;
}

/* A graph node, simplified, and shared with an identical one made before. */
static int mk(ctx *c, int op, int fn, int a, int b, int d, double v, const char *name)
{
    if (c->failed || (op != N_CONST && op != N_R2 && op != N_NAME && op != N_VAR && a < 0))
        return -1;
    if ((op == N_MUL || op == N_DIV) && !c->plain && b >= 0) {
        const int p = product(c, a, b, op == N_DIV);
        if (p != -2)
            return p;
    }
    const node *A = a >= 0 ? &c->g.n[a] : NULL, *B = b >= 0 ? &c->g.n[b] : NULL;
    const int ca = A && A->op == N_CONST, cb = B && B->op == N_CONST;
    switch (op) {
    case N_NEG:
        if (ca)
            return cst(c, -A->v);
        if (A->op == N_NEG)
            return A->a;
        break;
    case N_ADD:
        if (ca && cb)
            return cst(c, A->v + B->v);
        if (is_const(c, a, 0))
            return b;
        if (is_const(c, b, 0))
            return a;
        break;
    case N_SUB:
        if (ca && cb)
            return cst(c, A->v - B->v);
        if (is_const(c, b, 0))
            return a;
        if (is_const(c, a, 0))
            return mk(c, N_NEG, 0, b, -1, -1, 0, NULL);
        if (a == b)
            return cst(c, 0);
        break;
    case N_MUL:
        if (ca && cb)
            return cst(c, A->v * B->v);
        if (!isnan(r2pow(c, a)) && !isnan(r2pow(c, b)))
            return r2_to(c, r2pow(c, a) + r2pow(c, b));
        if (is_const(c, a, 0) || is_const(c, b, 0))
            return cst(c, 0);
        if (is_const(c, a, 1))
            return b;
        if (is_const(c, b, 1))
            return a;
        if (is_const(c, a, -1))
            return mk(c, N_NEG, 0, b, -1, -1, 0, NULL);
        if (is_const(c, b, -1))
            return mk(c, N_NEG, 0, a, -1, -1, 0, NULL);
        if (cb && !ca) {   /* constants first: 2 * x, so equal products are shared */
            const int t = a;
            a = b, b = t;
        }
        break;
    case N_DIV:
        if (ca && cb)
            return cst(c, A->v / B->v);   /* x/0: refused by cst */
        if (!isnan(r2pow(c, a)) && !isnan(r2pow(c, b)))
            return r2_to(c, r2pow(c, a) - r2pow(c, b));
        if (!isnan(r2pow(c, b)))   /* a / r2^q = a r2^-q */
            return mk(c, N_MUL, 0, a, r2_to(c, -r2pow(c, b)), -1, 0, NULL);
        if (is_const(c, b, 0))
            return cst(c, NAN);   /* refused: a division by 0 */
        if (is_const(c, a, 0))
            return cst(c, 0);
        if (is_const(c, b, 1))
            return a;
        if (a == b)
            return cst(c, 1);
        break;
    case N_POW:
        if (ca && cb)
            return cst(c, pow(A->v, B->v));
        if (cb && A->op == N_POW && !isnan(r2pow(c, a)))   /* (r2^p)^q = r2^(p q) */
            return r2_to(c, r2pow(c, a) * B->v);
        if (is_const(c, b, 1))
            return a;
        if (is_const(c, b, 0))
            return cst(c, 1);
        break;
    case N_FN:
        if (fn == F_SQRT && !isnan(r2pow(c, a)))
            return r2_to(c, r2pow(c, a) / 2);
        if (ca && (b < 0 || cb) && (d < 0 || c->g.n[d].op == N_CONST))
            return cst(c, fold_fn(fn, A->v, B ? B->v : 0, d >= 0 ? c->g.n[d].v : 0));
        break;
    default:
        break;
    }
    for (int k = 0; k < c->g.count; k++) {   /* shared */
        const node *x = &c->g.n[k];
        if (x->op == op && x->fn == fn && x->a == a && x->b == b && x->c == d &&
            (op != N_CONST || x->v == v) && (op != N_NAME || strcmp(x->name, name) == 0))
            return k;
    }
    node x = {op, fn, a, b, d, v, "", 0};
    if (name)
        snprintf(x.name, sizeof x.name, "%s", name);
    return add(c, &c->g, x);
}

static int cst(ctx *c, double v)
{
    if (!isfinite(v))
        return fail_at(c, c->cur_at, "this part is a constant that is %s (0^-1, 1e200*1e200, "
                       "(-8)^(1/3), 0/0 and the like have no value)", isnan(v) ? "not a number"
                                                                               : "infinite");
    return mk(c, N_CONST, 0, -1, -1, -1, v + 0.0, NULL);   /* -0 as 0 */
}

static int fn1(ctx *c, int f, int a)
{
    return mk(c, N_FN, f, a, -1, -1, 0, NULL);
}

static int bin(ctx *c, int op, int a, int b)
{
    return mk(c, op, 0, a, b, -1, 0, NULL);
}

/* What a name in the expression is: r2, r, a param, an attribute of i or
 * j, mi, mj, G, eps, or an intermediate value (resolved in turn). */
static int resolve(ctx *c, int i);

/* The names of energies and fields alike: an intermediate value (resolved
 * in turn), r2 and r; NO_NAME for another. */
#define NO_NAME (-2)
static int shared_name(ctx *c, const node *x)
{
    const char *s = x->name;
    for (int k = 0; k < c->ndefs; k++) {
        if (strcmp(c->defs[k].name, s) != 0)
            continue;
        if (c->defs[k].state == 1)
            return fail_at(c, x->at, "the intermediate value '%s' depends on itself", s);
        if (c->defs[k].state == 0) {
            c->defs[k].state = 1;
            c->defs[k].node = resolve(c, c->defs[k].raw);
            c->defs[k].state = 2;
        }
        return c->defs[k].node;
    }
    if (strcmp(s, "r2") == 0)
        return mk(c, N_R2, 0, -1, -1, -1, 0, NULL);
    if (strcmp(s, "r") == 0)
        return fn1(c, F_SQRT, mk(c, N_R2, 0, -1, -1, -1, 0, NULL));
    return NO_NAME;
}

static int name_node(ctx *c, const node *x)
{
    const char *s = x->name;
    if (c->field) {   /* a field's names: x, y, z, t, r, r2, G, its params */
        static const char vars[] = "xyzt";
        if (s[0] && !s[1] && strchr(vars, s[0]))
            return mk(c, N_VAR, (int)(strchr(vars, s[0]) - vars), -1, -1, -1, 0, NULL);
        const int d = shared_name(c, x);
        if (d != NO_NAME)
            return d;
        const int k = orr_field_param_index(c->field, s);
        if (k >= 0 && !c->field->params[k].runtime)   /* baked: its value, folded */
            return cst(c, c->field->params[k].value);
        if (strcmp(s, "G") == 0 || k >= 0)
            return mk(c, N_NAME, 0, -1, -1, -1, 0, s);
        return fail_at(c, x->at, "unknown name '%s' (the names: x, y, z, t, r, r2, G, the "
                       "field's params, and the intermediate values after ';')", s);
    }
    const int d = shared_name(c, x);
    if (d != NO_NAME)
        return d;
    static const char *const fixed[] = {"mi", "mj", "G", "eps"};
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++)
        if (strcmp(s, fixed[k]) == 0)
            return mk(c, N_NAME, 0, -1, -1, -1, 0, s);
    if (orr_law_param_index(c->law, s) >= 0)
        return mk(c, N_NAME, 0, -1, -1, -1, 0, s);
    const size_t len = strlen(s);
    if (len > 2 && s[len - 2] == '_' && (s[len - 1] == 'i' || s[len - 1] == 'j')) {
        char attr[NAME_MAX_LEN];
        snprintf(attr, sizeof attr, "%.*s", (int)len - 2, s);
        if (orr_law_attr_index(c->law, attr) >= 0)
            return mk(c, N_NAME, 0, -1, -1, -1, 0, s);
    }
    if (orr_law_attr_index(c->law, s) >= 0)
        return fail_at(c, x->at, "'%s' is an attribute: write %s_i or %s_j", s, s, s);
    return fail_at(c, x->at, "unknown name '%s' (the names: r, r2, the law's params and "
                   "attributes (NAME_i, NAME_j), mi, mj, G, eps, and the intermediate values "
                   "after ';')", s);
}

static int resolve(ctx *c, int i)
{
    if (c->failed || i < 0)
        return -1;
    if (c->memo[i] >= 0)
        return c->memo[i];
    const node x = c->raw.n[i];
    int r = -1;
    const int outer = c->cur_at;
    c->cur_at = x.at;
    switch (x.op) {
    case N_CONST:
        r = cst(c, x.v);
        break;
    case N_IDENT:
        r = name_node(c, &x);
        break;
    case N_NEG:
        r = mk(c, N_NEG, 0, resolve(c, x.a), -1, -1, 0, NULL);
        break;
    case N_FN: {
        {
            const int a = resolve(c, x.a), b = x.b >= 0 ? resolve(c, x.b) : -1,
                      d = x.c >= 0 ? resolve(c, x.c) : -1;
            if ((x.fn == F_GAMMAINC || x.fn == F_GAMMAINCC) && a >= 0 &&
                (c->g.n[a].op != N_CONST || !(c->g.n[a].v > 0)))
                return fail_at(c, c->raw.n[x.a].at, "the first argument of %s (its order s) must "
                               "be a constant above 0 (numbers and baked params, not runtime "
                               "ones)", fns[x.fn].name);
            r = (x.b >= 0 && b < 0) || (x.c >= 0 && d < 0) ? -1 : mk(c, N_FN, x.fn, a, b, d, 0, NULL);
        }
        break;
    }
    default: {
        const int a = resolve(c, x.a), b = resolve(c, x.b);
        r = b < 0 ? -1 : bin(c, x.op, a, b);
    }
    }
    c->memo[i] = r;
    c->cur_at = outer;
    return r;
}

/* ---- the derivative in r2 -------------------------------------------------- */

static int deriv(ctx *c, int i)
{
    if (c->failed || i < 0)
        return -1;
    if (i >= c->dcap) {
        int cap = c->dcap ? 2 * c->dcap : 256;
        while (cap <= i)
            cap *= 2;
        int *p = realloc(c->dmemo, sizeof *p * (size_t)cap);
        if (!p) {
            c->failed = 1;
            orr_fail(c->err, ORR_ERR_NOMEM, "out of memory");
            return -1;
        }
        for (int k = c->dcap; k < cap; k++)
            p[k] = -1;
        c->dmemo = p, c->dcap = cap;
    }
    if (c->dmemo[i] >= 0)
        return c->dmemo[i];
    const node x = c->g.n[i];
    int r = -1;
    switch (x.op) {
    case N_CONST:
    case N_NAME:
        r = cst(c, 0);
        break;
    case N_R2:
        r = c->dl[0] >= 0 ? c->dl[0] : cst(c, 0);
        break;
    case N_VAR:
        r = c->dl[1 + x.fn] >= 0 ? c->dl[1 + x.fn] : cst(c, 0);
        break;
    case N_NEG:
        r = mk(c, N_NEG, 0, deriv(c, x.a), -1, -1, 0, NULL);
        break;
    case N_ADD:
    case N_SUB:
        r = bin(c, x.op, deriv(c, x.a), deriv(c, x.b));
        break;
    case N_MUL:
        r = bin(c, N_ADD, bin(c, N_MUL, deriv(c, x.a), x.b), bin(c, N_MUL, x.a, deriv(c, x.b)));
        break;
    case N_DIV:   /* a' / b - a b' / b^2 */
        r = bin(c, N_SUB, bin(c, N_DIV, deriv(c, x.a), x.b),
                bin(c, N_DIV, bin(c, N_MUL, x.a, deriv(c, x.b)), bin(c, N_MUL, x.b, x.b)));
        break;
    case N_POW:
        if (c->g.n[x.b].op == N_CONST)   /* b a^(b-1) a' */
            r = bin(c, N_MUL, bin(c, N_MUL, x.b, bin(c, N_POW, x.a, cst(c, c->g.n[x.b].v - 1))),
                    deriv(c, x.a));
        else   /* a^b (b' log a + b a' / a) */
            r = bin(c, N_MUL, i,
                    bin(c, N_ADD, bin(c, N_MUL, deriv(c, x.b), fn1(c, F_LOG, x.a)),
                        bin(c, N_DIV, bin(c, N_MUL, x.b, deriv(c, x.a)), x.a)));
        break;
    case N_FN: {
        const int da = deriv(c, x.a);
        switch (x.fn) {
        case F_SQRT:
            r = bin(c, N_DIV, da, bin(c, N_MUL, cst(c, 2), i));
            break;
        case F_EXP:
            r = bin(c, N_MUL, i, da);
            break;
        case F_LOG:
            r = bin(c, N_DIV, da, x.a);
            break;
        case F_ABS:   /* the sign of a, times a' */
            r = bin(c, N_MUL,
                    mk(c, N_FN, F_SELECT, fn1(c, F_STEP, x.a), cst(c, 1), cst(c, -1), 0, NULL),
                    da);
            break;
        case F_ERF:    /* 2/sqrt(pi) exp(-a^2) a' */
        case F_ERFC:   /* its negative */
            r = bin(c, N_MUL,
                    bin(c, N_MUL, cst(c, (x.fn == F_ERF ? 2 : -2) / sqrt(M_PI)),
                        fn1(c, F_EXP, mk(c, N_NEG, 0, bin(c, N_MUL, x.a, x.a), -1, -1, 0, NULL))),
                    da);
            break;
        case F_TANH:
            r = bin(c, N_MUL, bin(c, N_SUB, cst(c, 1), bin(c, N_MUL, i, i)), da);
            break;
        case F_STEP:
            r = cst(c, 0);
            break;
        case F_MIN:   /* a' where a <= b */
            r = mk(c, N_FN, F_SELECT, fn1(c, F_STEP, bin(c, N_SUB, x.b, x.a)), da, deriv(c, x.b),
                   0, NULL);
            break;
        case F_MAX:
            r = mk(c, N_FN, F_SELECT, fn1(c, F_STEP, bin(c, N_SUB, x.a, x.b)), da, deriv(c, x.b),
                   0, NULL);
            break;
        case F_SELECT:
            r = mk(c, N_FN, F_SELECT, x.a, deriv(c, x.b), deriv(c, x.c), 0, NULL);
            break;
        case F_GAMMAINC:    /* d/dx of the lower gamma(s, x): x^(s-1) e^-x */
        case F_GAMMAINCC: { /* of the upper: its negative */
            const double sv = c->g.n[x.a].v;
            const int db = deriv(c, x.b);
            const int k = bin(c, N_MUL, bin(c, N_POW, x.b, cst(c, sv - 1)),
                              fn1(c, F_EXP, mk(c, N_NEG, 0, x.b, -1, -1, 0, NULL)));
            r = bin(c, N_MUL, x.fn == F_GAMMAINC ? k : mk(c, N_NEG, 0, k, -1, -1, 0, NULL), db);
            break;
        }
        }
        break;
    }
    }
    c->dmemo[i] = r;
    return r;
}

/* ---- C ------------------------------------------------------------------- */

static int put_ref(const ctx *c, orr_buf *b, int i)
{
    const node *x = &c->g.n[i];
    if (x->op == N_CONST)
        return orr_buf_printf(b, x->v < 0 ? "(-(real)%a)" : "(real)%a", fabs(x->v));
    if (x->op == N_R2)
        return orr_buf_printf(b, "r2");
    if (x->op == N_VAR)
        return orr_buf_printf(b, "%c", "xyzt"[x->fn]);
    if (x->op == N_NAME)
        return orr_buf_printf(b, "%s", x->name);
    return orr_buf_printf(b, "orr_t%d", i);
}

/* Node i's value from its operands' names. */
static int put_node(const ctx *c, orr_buf *b, int i)
{
    const node *x = &c->g.n[i];
    int rc = 0;
    /* 1/sqrt of r2, 0 at 0: a pair's r2 is softened where it can be (the
     * prelude's _nz forms cost nothing then); a field's never is */
    const char *rs = c->field ? "orr_rsqrt_g(" : "orr_rsqrt_nz(",
               *rs3 = c->field ? "orr_rsqrt3_g(" : "orr_rsqrt3_nz(",
               *rs2 = c->field ? "(orr_rsqrt_g(r2) * orr_rsqrt_g(r2))"
                               : "(orr_rsqrt_nz(r2) * orr_rsqrt_nz(r2))";
#define REF(k) (rc |= put_ref(c, b, (k)))
#define TXT(s) (rc |= orr_buf_printf(b, "%s", (s)))
    switch (x->op) {
    case N_NEG:
        TXT("-"), REF(x->a);
        break;
    case N_ADD:
    case N_SUB:
    case N_MUL:
    case N_DIV:
        REF(x->a), TXT(x->op == N_ADD ? " + " : x->op == N_SUB ? " - " : x->op == N_MUL ? " * " : " / "),
            REF(x->b);
        break;
    case N_POW: {
        const node *e = &c->g.n[x->b];
        const double v = e->op == N_CONST ? e->v : NAN;
        /* whole and half powers as products, rsqrt and rsqrt3 */
        const int whole = v == rint(v) && fabs(v) <= 8, half = !whole && v * 2 == rint(v * 2);
        if (whole && v < 0 && c->g.n[x->a].op == N_R2) {   /* 0 at 0, as rsqrt_nz */
            for (int q = 0; q < (int)-v; q++)
                TXT(q ? " * " : ""), TXT(rs2);
        } else if (whole) {
            const int k = (int)fabs(v);
            TXT(v < 0 ? "(real)1 / (" : "(");
            for (int q = 0; q < k; q++)
                q ? (TXT(" * "), REF(x->a)) : REF(x->a);
            TXT(")");
        } else if (half && v > 0 && v <= 4.5) {   /* a^(k + 1/2) = a^k sqrt(a) */
            TXT("orr_sqrt("), REF(x->a), TXT(")");
            for (int q = 0; q < (int)v; q++)
                TXT(" * "), REF(x->a);
        } else if (half && v < 0 && v >= -4.5) {   /* rsqrt(a) or rsqrt3(a), over a^k */
            const int k = v == -0.5 ? 0 : (int)(-v - 1.5);
            /* of r2: the _nz forms (0 at 0, exactly rsqrt when softened), so
             * a law like gravity stays finite at zero separation */
            const int nz = c->g.n[x->a].op == N_R2;
            TXT(v == -0.5 ? (nz ? rs : "orr_rsqrt(") : (nz ? rs3 : "orr_rsqrt3(")),
                REF(x->a), TXT(")");
            for (int q = 0; nz && q < k; q++)   /* times rsqrt(r2)^2 k times: 0 at 0 */
                TXT(" * "), TXT(rs2);
            if (!nz && k > 0) {
                TXT(" / (");
                for (int q = 0; q < k; q++)
                    q ? (TXT(" * "), REF(x->a)) : REF(x->a);
                TXT(")");
            }
        } else
            TXT("orr_pow("), REF(x->a), TXT(", "), REF(x->b), TXT(")");
        break;
    }
    case N_FN:
        switch (x->fn) {
        case F_STEP:
            TXT("("), REF(x->a), TXT(" >= 0 ? (real)1 : (real)0)");
            break;
        case F_SELECT:
            TXT("("), REF(x->a), TXT(" != 0 ? "), REF(x->b), TXT(" : "), REF(x->c), TXT(")");
            break;
        case F_MIN:
        case F_MAX:
            TXT(x->fn == F_MIN ? "orr_fmin(" : "orr_fmax("), REF(x->a), TXT(", "), REF(x->b),
                TXT(")");
            break;
        case F_GAMMAINC:
        case F_GAMMAINCC:   /* with Gamma(s), a constant */
            TXT(x->fn == F_GAMMAINC ? "orr_gammainc(" : "orr_gammaincc("), REF(x->a);
            rc |= orr_buf_printf(b, ", (real)%a, ", tgamma(c->g.n[x->a].v));
            REF(x->b), TXT(")");
            break;
        default: {
            static const char *const cname[F_COUNT] = {
                [F_SQRT] = "orr_sqrt", [F_EXP] = "orr_exp", [F_LOG] = "orr_log",
                [F_ABS] = "orr_fabs", [F_ERF] = "orr_erf", [F_ERFC] = "orr_erfc",
                [F_TANH] = "orr_tanh"};
            TXT(cname[x->fn]), TXT("("), REF(x->a), TXT(")");
        }
        }
        break;
    }
#undef REF
#undef TXT
    return rc;
}

static void mark(const ctx *c, int i, char *used)
{
    if (i < 0 || used[i])
        return;
    used[i] = 1;
    const node *x = &c->g.n[i];
    mark(c, x->a, used);
    mark(c, x->b, used);
    mark(c, x->c, used);
}

/* "outs[k] = <roots[k]>;" for each of the n roots, with a temporary per
 * node they need, in order (a node is made after its operands), but those
 * that done (NULL: none) marks: the code is placed where their
 * temporaries are in scope (a field's jerk inside its accel's block).  The
 * nodes written are marked in done. */
static char *emit_n(ctx *c, int n, const int *roots, const char *const *outs, char *done)
{
    for (int k = 0; k < n; k++)
        if (c->failed || roots[k] < 0)
            return NULL;
    char *used = calloc((size_t)c->g.count, 1);
    orr_buf b = {0};
    int rc = used ? orr_buf_printf(&b, "/* made from the %s by orrery (expr.c) */\n", c->what)
                  : -1;
    for (int k = 0; used && k < n; k++)
        mark(c, roots[k], used);
    for (int i = 0; !rc && i < c->g.count; i++) {
        const int op = c->g.n[i].op;
        if (!used[i] || (done && done[i]) || op == N_CONST || op == N_R2 || op == N_NAME ||
            op == N_VAR)
            continue;
        rc |= orr_buf_printf(&b, "const real orr_t%d = ", i);
        rc |= put_node(c, &b, i);
        rc |= orr_buf_printf(&b, ";\n");
    }
    for (int k = 0; !rc && k < n; k++) {
        rc |= orr_buf_printf(&b, "%s = ", outs[k]);
        rc |= put_ref(c, &b, roots[k]);
        rc |= orr_buf_printf(&b, ";\n");
    }
    for (int i = 0; !rc && done && i < c->g.count; i++)
        done[i] |= used[i];
    free(used);
    if (rc) {
        orr_buf_free(&b);
        c->failed = 1;
        orr_fail(c->err, ORR_ERR_NOMEM, "out of memory");
        return NULL;
    }
    return b.data;
}

static char *emit(ctx *c, int root, const char *out)
{
    return emit_n(c, 1, &root, &out, NULL);
}

/* k x, k multiplied into each term of the sums and pieces of x, so a
 * factor of k cancels in each (2 / mi of a sum of terms in mi mj: a body
 * of mass 0 stays finite). */
static int scaled(ctx *c, int k, int x)
{
    if (c->failed || x < 0)
        return -1;
    const node n = c->g.n[x];
    if (n.op == N_ADD || n.op == N_SUB)
        return bin(c, n.op, scaled(c, k, n.a), scaled(c, k, n.b));
    if (n.op == N_NEG)
        return mk(c, N_NEG, 0, scaled(c, k, n.a), -1, -1, 0, NULL);
    if (n.op == N_FN && n.fn == F_SELECT)
        return mk(c, N_FN, F_SELECT, n.a, scaled(c, k, n.b), scaled(c, k, n.c), 0, NULL);
    return bin(c, N_MUL, k, x);
}

/* The context set for an expression src (what: "energy", "potential", the
 * messages' name for it); nonzero (said in err) when it is empty. */
static int begin(ctx *c, const char *src, const char *what, orr_error *err)
{
    c->src = c->p = src ? src : "";
    c->what = what;
    c->err = err;
    for (int k = 0; k < 5; k++)
        c->dl[k] = -1;
    skip(c);
    if (!*c->p) {
        fail_at(c, 0, "the %s is empty", what);
        return 1;
    }
    return 0;
}

/* The expression parsed and its names resolved, every intermediate value
 * checked whether used or not: its node (c->failed on an error). */
static int parse_resolved(ctx *c)
{
    const int top = parse_all(c);
    if (!c->failed && !(c->memo = malloc(sizeof(int) * (size_t)(c->raw.count + 1)))) {
        c->failed = 1;
        orr_fail(c->err, ORR_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; !c->failed && k < c->raw.count; k++)
        c->memo[k] = -1;
    const int root = resolve(c, top);
    for (int k = 0; !c->failed && k < c->ndefs; k++)
        if (c->defs[k].state == 0) {
            c->defs[k].state = 1;
            c->defs[k].node = resolve(c, c->defs[k].raw);
            c->defs[k].state = 2;
        }
    return root;
}

orr_status orr_expr_law(const orr_law *law, const char *energy, char **pair, char **potential,
                        char **jerk, orr_error *err)
{
    for (int k = 0; k < law->nparams; k++)   /* r is the separation in an energy */
        if (strcmp(law->params[k].name, "r") == 0)
            return orr_fail(err, ORR_ERR_ARG, "the param 'r' would hide the separation r in the "
                            "energy: give it another name");
    *pair = *potential = *jerk = NULL;
    ctx c;
    memset(&c, 0, sizeof c);
    c.law = law;
    if (begin(&c, energy, "energy", err))
        return ORR_ERR_ARG;
    const int E = parse_resolved(&c);
    /* f = (2 / m_i) dE/d(r2), g = df/d(r2) */
    c.dl[0] = cst(&c, 1);
    const int two_over_mi = bin(&c, N_DIV, cst(&c, 2), mk(&c, N_NAME, 0, -1, -1, -1, 0, "mi"));
    const int F = scaled(&c, two_over_mi, deriv(&c, E));
    const int Gj = deriv(&c, F);
    *potential = emit(&c, E, "u");
    *pair = emit(&c, F, "f");
    *jerk = emit(&c, Gj, "g");
    free(c.raw.n), free(c.g.n), free(c.memo), free(c.dmemo);
    if (!c.failed)
        return ORR_OK;
    free(*pair), free(*potential), free(*jerk);
    *pair = *potential = *jerk = NULL;
    return err->code ? err->code : ORR_ERR_ARG;
}

/* The derivatives of every node made afresh (another variable). */
static void forget_derivs(ctx *c)
{
    for (int k = 0; k < c->dcap; k++)
        c->dmemo[k] = -1;
}

orr_status orr_expr_field(const orr_field *field, const char *potential, char **accel,
                          char **pot, char **jerk, orr_error *err)
{
    *accel = *pot = *jerk = NULL;
    ctx c;
    memset(&c, 0, sizeof c);
    c.field = field;
    if (begin(&c, potential, "potential", err))
        return ORR_ERR_ARG;
    const int P = parse_resolved(&c);
    /* a = -grad Phi: a derivative per coordinate, r2's being 2 x */
    int var[3], a[3], j[3];
    for (int d = 0; d < 3; d++)
        var[d] = mk(&c, N_VAR, d, -1, -1, -1, 0, NULL);
    for (int d = 0; d < 3; d++) {
        for (int k = 0; k < 5; k++)
            c.dl[k] = -1;
        c.dl[1 + d] = cst(&c, 1);
        c.dl[0] = bin(&c, N_MUL, cst(&c, 2), var[d]);
        forget_derivs(&c);
        a[d] = mk(&c, N_NEG, 0, deriv(&c, P), -1, -1, 0, NULL);
    }
    /* the jerk: d a / d tau along (x, y, z, t) + tau (vx, vy, vz, 1) */
    static const char *const vel[3] = {"vx", "vy", "vz"};
    int rate = -1;
    for (int d = 0; d < 3; d++) {
        const int vd = mk(&c, N_NAME, 0, -1, -1, -1, 0, vel[d]);
        c.dl[1 + d] = vd;
        const int t = bin(&c, N_MUL, var[d], vd);
        rate = rate < 0 ? t : bin(&c, N_ADD, rate, t);
    }
    c.dl[4] = cst(&c, 1);
    c.dl[0] = bin(&c, N_MUL, cst(&c, 2), rate);
    forget_derivs(&c);
    for (int d = 0; d < 3; d++)
        j[d] = deriv(&c, a[d]);
    static const char *const aout[3] = {"ax", "ay", "az"}, *const jout[3] = {"jx", "jy", "jz"};
    char *done = c.failed ? NULL : calloc((size_t)c.g.count, 1);
    if (!c.failed && !done) {
        c.failed = 1;
        orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    *pot = emit(&c, P, "phi");
    *accel = emit_n(&c, 3, a, aout, done);
    *jerk = emit_n(&c, 3, j, jout, done);
    free(done);
    if (!c.failed && (!*accel || !*pot || !*jerk)) {   /* every output made, or an error */
        c.failed = 1;
        orr_fail(err, ORR_ERR_ARG, "potential: the expression could not be differentiated");
    }
    free(c.raw.n), free(c.g.n), free(c.memo), free(c.dmemo);
    if (!c.failed)
        return ORR_OK;
    free(*accel), free(*pot), free(*jerk);
    *accel = *pot = *jerk = NULL;
    return err->code ? err->code : ORR_ERR_ARG;
}
