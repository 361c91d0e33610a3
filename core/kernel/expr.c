/* expr: force laws from an energy (see expr.h).  The expression is parsed
 * into a tree (its identifiers as text, with their places), resolved into
 * a shared graph of nodes (identical nodes made once, constants folded),
 * differentiated in r2 with the chain rule (each node's derivative made
 * once), and written out as C, a temporary per node. */
#include "expr.h"

#include "util.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N_CONST, N_R2, N_NAME, N_NEG, N_ADD, N_SUB, N_MUL, N_DIV, N_POW, N_FN, N_IDENT };
_Static_assert(N_SUB == N_ADD + 1 && N_DIV == N_MUL + 1, "parse_chain takes pairs of operators");
enum { F_SQRT, F_EXP, F_LOG, F_ABS, F_ERF, F_ERFC, F_TANH, F_STEP, F_MIN, F_MAX, F_SELECT,
       F_COUNT };
static const struct {
    const char *name;
    int arity;
} fns[F_COUNT] = {{"sqrt", 1}, {"exp", 1},  {"log", 1},  {"abs", 1}, {"erf", 1},    {"erfc", 1},
                  {"tanh", 1}, {"step", 1}, {"min", 2},  {"max", 2}, {"select", 3}};

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
    const orr_law *law;
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
    int *dmemo;                /* graph node -> its derivative in r2 (-1: not yet) */
    int dcap;
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
    orr_fail(c->err, ORR_ERR_ARG, "energy:%d:%d: %s", line, col, msg);
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
            return fail_at(c, pos, "unknown function '%s' (the functions: sqrt, exp, log, abs, "
                           "erf, erfc, tanh, step, min, max, select)", name);
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
static const char *taken_name(const ctx *c, const char *name)
{
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

/* A graph node, simplified, and shared with an identical one made before. */
static int mk(ctx *c, int op, int fn, int a, int b, int d, double v, const char *name)
{
    if (c->failed || (op != N_CONST && op != N_R2 && op != N_NAME && a < 0))
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

static int name_node(ctx *c, const node *x)
{
    const char *s = x->name;
    if (strcmp(s, "r2") == 0)
        return mk(c, N_R2, 0, -1, -1, -1, 0, NULL);
    if (strcmp(s, "r") == 0)
        return fn1(c, F_SQRT, mk(c, N_R2, 0, -1, -1, -1, 0, NULL));
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
        r = cst(c, 1);
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
    if (x->op == N_NAME)
        return orr_buf_printf(b, "%s", x->name);
    return orr_buf_printf(b, "orr_t%d", i);
}

/* Node i's value from its operands' names. */
static int put_node(const ctx *c, orr_buf *b, int i)
{
    const node *x = &c->g.n[i];
    int rc = 0;
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
                TXT(q ? " * " : ""), TXT("(orr_rsqrt_nz(r2) * orr_rsqrt_nz(r2))");
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
            TXT(v == -0.5 ? (nz ? "orr_rsqrt_nz(" : "orr_rsqrt(")
                          : (nz ? "orr_rsqrt3_nz(" : "orr_rsqrt3(")),
                REF(x->a), TXT(")");
            for (int q = 0; nz && q < k; q++)   /* times rsqrt(r2)^2 k times: 0 at 0 */
                TXT(" * (orr_rsqrt_nz(r2) * orr_rsqrt_nz(r2))");
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

/* "out = <root>;" with a temporary per node it needs, in order (a node
 * is made after its operands). */
static char *emit(ctx *c, int root, const char *out)
{
    if (c->failed || root < 0)
        return NULL;
    char *used = calloc((size_t)c->g.count, 1);
    orr_buf b = {0};
    int rc = used ? orr_buf_printf(&b, "/* made from the energy by orrery (expr.c) */\n") : -1;
    if (used)
        mark(c, root, used);
    for (int i = 0; !rc && i < c->g.count; i++) {
        const int op = c->g.n[i].op;
        if (!used[i] || op == N_CONST || op == N_R2 || op == N_NAME)
            continue;
        rc |= orr_buf_printf(&b, "const real orr_t%d = ", i);
        rc |= put_node(c, &b, i);
        rc |= orr_buf_printf(&b, ";\n");
    }
    if (!rc) {
        rc |= orr_buf_printf(&b, "%s = ", out);
        rc |= put_ref(c, &b, root);
        rc |= orr_buf_printf(&b, ";\n");
    }
    free(used);
    if (rc) {
        orr_buf_free(&b);
        c->failed = 1;
        orr_fail(c->err, ORR_ERR_NOMEM, "out of memory");
        return NULL;
    }
    return b.data;
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
    c.src = c.p = energy ? energy : "";
    c.law = law;
    c.err = err;
    skip(&c);
    if (!*c.p) {
        fail_at(&c, 0, "the energy is empty");
        return ORR_ERR_ARG;
    }
    const int top = parse_all(&c);
    if (!c.failed && !(c.memo = malloc(sizeof(int) * (size_t)(c.raw.count + 1)))) {
        c.failed = 1;
        orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; !c.failed && k < c.raw.count; k++)
        c.memo[k] = -1;
    const int E = resolve(&c, top);
    for (int k = 0; !c.failed && k < c.ndefs; k++)   /* every definition is checked */
        if (c.defs[k].state == 0) {
            c.defs[k].state = 1;
            c.defs[k].node = resolve(&c, c.defs[k].raw);
            c.defs[k].state = 2;
        }
    /* f = (2 / m_i) dE/d(r2), g = df/d(r2) */
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
