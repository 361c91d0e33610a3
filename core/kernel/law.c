/* law: force laws from kernels_src/forces/ or from Lua, and the generated
 * source section they become (see law.h). */
#include "law.h"
#include "ksrc.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names a law's params and attributes may not take: the variables in scope
 * inside a snippet, the keywords of C (GNU C11, the host compiler's
 * dialect) and of C++17 (NVRTC's), C++'s alternative operator names and
 * `defined`, which no C++ compiler takes as a name, and the math functions
 * the prelude's helpers expand to.  Names that are only macros somewhere
 * (`linux` and `unix` in GNU C, math.h's M_PI and NAN, CUDA's NULL) are
 * fine: the generated law section undefines them (orr_law_emit). */
/* the pair snippets' own variables (not in a field's scope) */
static const char *const law_vars[] = {"dx", "dy", "dz", "d2", "mi", "mj", "ai", "aj", "as", "rt",
                                       "f", "u", "g", "eps", "eps2", NULL};
static const char *const reserved[] = {
    "r2", "G", "real",
    /* C */
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
    "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
    "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch", "typedef",
    "union", "unsigned", "void", "volatile", "while", "asm", "typeof",
    /* C++ (and C23) */
    "alignas", "alignof", "bool", "catch", "char8_t", "char16_t", "char32_t", "class", "concept",
    "consteval", "constexpr", "constinit", "const_cast", "co_await", "co_return", "co_yield",
    "decltype", "delete", "dynamic_cast", "explicit", "export", "false", "friend", "mutable",
    "namespace", "new", "noexcept", "nullptr", "operator", "private", "protected", "public",
    "reinterpret_cast", "requires", "static_assert", "static_cast", "template", "this",
    "thread_local", "throw", "true", "try", "typeid", "typename", "using", "virtual", "wchar_t",
    "and", "and_eq", "bitand", "bitor", "compl", "not", "not_eq", "or", "or_eq", "xor", "xor_eq",
    "defined",
    /* what the prelude's math expands to */
    "sqrt", "sqrtf", "rsqrt", "rsqrtf", "exp", "expf", "log", "logf", "pow", "powf", "fabs",
    "fabsf", "floor", "floorf", "rint", "rintf", "erf", "erff", "erfc", "erfcf", "tanh", "tanhf", "fmin", "fminf",
    "fmax", "fmaxf", "fma", "fmaf", "min", "max", NULL,
};

/* Names orrery and the compilers keep for themselves: orr_, ORR_, __, and
 * _ followed by a capital (C's reserved identifiers: _Bool, _Pragma). */
static int reserved_prefix(const char *name)
{
    return strncmp(name, "orr_", 4) == 0 || strncmp(name, "ORR_", 4) == 0 ||
           strncmp(name, "__", 2) == 0 || (name[0] == '_' && isupper((unsigned char)name[1]));
}

static int is_ident(const char *s)
{
    if (!(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return 0;
    return 1;
}

/* Why `name` cannot name a param or attribute (suffix "" or "_i"/"_j"
 * applied by the caller), or NULL when it can; law 0 leaves the pair
 * snippets' own variables to a field. */
static const char *bad_name_in(const char *name, int law)
{
    if (!name[0])
        return "it is empty";
    if (strlen(name) >= ORR_LAW_NAME_MAX - 2)
        return "it is too long (at most 29 characters)";
    if (!is_ident(name))
        return "it is not a C identifier (letters, digits, '_', not starting with a digit)";
    if (reserved_prefix(name))
        return "names starting with orr_, ORR_, __ or _ and a capital letter are reserved";
    for (int k = 0; reserved[k]; k++)
        if (strcmp(reserved[k], name) == 0)
            return "it is a variable, keyword or function already in scope in the snippets";
    for (int k = 0; law && law_vars[k]; k++)
        if (strcmp(law_vars[k], name) == 0)
            return "it is a variable, keyword or function already in scope in the snippets";
    return NULL;
}

static const char *bad_name(const char *name)
{
    return bad_name_in(name, 1);
}

const char *orr_name_why(const char *name)
{
    return bad_name(name);
}

const char *orr_name_why_field(const char *name)
{
    return bad_name_in(name, 0);
}

int orr_law_param_index(const orr_law *law, const char *name)
{
    for (int k = 0; k < law->nparams; k++)
        if (strcmp(law->params[k].name, name) == 0)
            return k;
    return -1;
}

int orr_law_attr_index(const orr_law *law, const char *name)
{
    for (int k = 0; k < law->nattrs; k++)
        if (strcmp(law->attrs[k], name) == 0)
            return k;
    return -1;
}

/* Does `name` collide with an attribute's name_i / name_j? */
static int clashes_attr(const orr_law *law, const char *name)
{
    size_t len = strlen(name);
    if (len < 3 || name[len - 2] != '_' || (name[len - 1] != 'i' && name[len - 1] != 'j'))
        return 0;
    for (int k = 0; k < law->nattrs; k++)
        if (strlen(law->attrs[k]) == len - 2 && strncmp(law->attrs[k], name, len - 2) == 0)
            return 1;
    return 0;
}

orr_status orr_law_add_param(orr_law *law, const char *name, double value, orr_error *err)
{
    const char *why = bad_name(name);
    if (why)
        return orr_fail(err, ORR_ERR_ARG, "force law '%s': invalid param name '%s': %s", law->name,
                        name, why);
    if (orr_law_param_index(law, name) >= 0 || orr_law_attr_index(law, name) >= 0 ||
        clashes_attr(law, name))
        return orr_fail(err, ORR_ERR_ARG, "force law '%s': param '%s' is defined twice",
                        law->name, name);
    if (!isfinite(value))
        return orr_fail(err, ORR_ERR_ARG,
                        "force law '%s': param '%s' must be a finite number (got %g)", law->name,
                        name, value);
    if (law->nparams >= ORR_LAW_MAX_PARAMS)
        return orr_fail(err, ORR_ERR_ARG, "force law '%s': too many params (at most %d)",
                        law->name, ORR_LAW_MAX_PARAMS);
    orr_law_param *p = &law->params[law->nparams++];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->value = value;
    return ORR_OK;
}

orr_status orr_law_add_attr(orr_law *law, const char *name, orr_error *err)
{
    const char *why = bad_name(name);
    if (why)
        return orr_fail(err, ORR_ERR_ARG, "force law '%s': invalid attribute name '%s': %s",
                        law->name, name, why);
    if (orr_law_attr_index(law, name) >= 0)
        return orr_fail(err, ORR_ERR_ARG, "force law '%s': attribute '%s' is defined twice",
                        law->name, name);
    for (int k = 0; k < law->nparams; k++) {
        const char *p = law->params[k].name;
        size_t len = strlen(name);
        if (strcmp(p, name) == 0 || (strncmp(p, name, len) == 0 && p[len] == '_' &&
                                     (p[len + 1] == 'i' || p[len + 1] == 'j') && !p[len + 2]))
            return orr_fail(err, ORR_ERR_ARG,
                            "force law '%s': attribute '%s' clashes with param '%s'", law->name,
                            name, p);
    }
    if (law->nattrs >= ORR_LAW_MAX_ATTRS)
        return orr_fail(err, ORR_ERR_ARG, "force law '%s': too many attributes (at most %d)",
                        law->name, ORR_LAW_MAX_ATTRS);
    snprintf(law->attrs[law->nattrs], ORR_LAW_NAME_MAX, "%s", name);
    law->attr_doc[law->nattrs][0] = 0;
    law->nattrs++;
    return ORR_OK;
}

int orr_law_runtime_count(const orr_law *law)
{
    int n = 0;
    for (int k = 0; k < law->nparams; k++)
        n += law->params[k].runtime;
    return n;
}

void orr_law_runtime_values(const orr_law *law, double out[ORR_LAW_MAX_RUNTIME])
{
    int slot = 0;
    memset(out, 0, sizeof(double) * ORR_LAW_MAX_RUNTIME);
    for (int k = 0; k < law->nparams && slot < ORR_LAW_MAX_RUNTIME; k++)
        if (law->params[k].runtime)
            out[slot++] = law->params[k].value;
}

orr_status orr_law_set_runtime(orr_law *law, const char *name, orr_error *err)
{
    int k = orr_law_param_index(law, name);
    if (k < 0)
        return orr_fail(err, ORR_ERR_ARG,
                        "force law '%s': runtime param '%s' is not one of its params", law->name,
                        name);
    if (!law->params[k].runtime && orr_law_runtime_count(law) >= ORR_LAW_MAX_RUNTIME)
        return orr_fail(err, ORR_ERR_ARG, "force law '%s': too many runtime params (at most %d)",
                        law->name, ORR_LAW_MAX_RUNTIME);
    law->params[k].runtime = 1;
    return ORR_OK;
}

orr_status orr_law_set_param(orr_law *law, const char *name, double value, orr_error *err)
{
    int k = orr_law_param_index(law, name);
    if (k < 0) {
        char list[512] = "";
        size_t used = 0;
        for (int q = 0; q < law->nparams && used < sizeof list; q++)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", q ? ", " : "",
                                     law->params[q].name);
        return orr_fail(err, ORR_ERR_ARG, "force law '%s' has no param '%s' (params: %s)",
                        law->name, name, law->nparams ? list : "none");
    }
    if (!isfinite(value))
        return orr_fail(err, ORR_ERR_ARG,
                        "force law '%s': param '%s' must be a finite number (got %g)", law->name,
                        name, value);
    law->params[k].value = value;
    return ORR_OK;
}

static char *dupstr(const char *s)
{
    size_t len = strlen(s) + 1;
    char *d = malloc(len);
    if (d)
        memcpy(d, s, len);
    return d;
}

orr_status orr_law_init(orr_law *law, const char *name, const char *pair, const char *potential,
                        const char *origin, orr_error *err)
{
    memset(law, 0, sizeof *law);
    if (!name || !name[0] || strlen(name) >= sizeof law->name ||
        strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(name))
        return orr_fail(err, ORR_ERR_ARG,
                        "invalid force law name '%s' (lowercase letters, digits, '_'; at most %zu)",
                        name ? name : "", sizeof law->name - 1);
    snprintf(law->name, sizeof law->name, "%s", name);
    snprintf(law->scale, sizeof law->scale, "1");
    law->pair_line = law->potential_line = 1;
    law->jerk_line = 1;
    law->origin = dupstr(origin ? origin : name);
    law->pair = dupstr(pair ? pair : "");
    law->potential = dupstr(potential ? potential : "");
    law->jerk = dupstr("");
    if (!law->origin || !law->pair || !law->potential || !law->jerk) {
        orr_law_free(law);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    return ORR_OK;
}

void orr_law_free(orr_law *law)
{
    free(law->pair);
    free(law->potential);
    free(law->jerk);
    free(law->origin);
    law->pair = law->potential = law->jerk = law->origin = NULL;
}

orr_status orr_law_copy(orr_law *dst, const orr_law *src, orr_error *err)
{
    *dst = *src;
    dst->pair = dupstr(src->pair ? src->pair : "");
    dst->potential = dupstr(src->potential ? src->potential : "");
    dst->jerk = dupstr(src->jerk ? src->jerk : "");
    dst->origin = dupstr(src->origin ? src->origin : "");
    if (!dst->pair || !dst->potential || !dst->jerk || !dst->origin) {
        orr_law_free(dst);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    return ORR_OK;
}

/* Non-blank? */
static int has_code(const char *s)
{
    for (; s && *s; s++)
        if (!isspace((unsigned char)*s))
            return 1;
    return 0;
}

int orr_snippet_has_code(const char *s)
{
    return has_code(s);
}

int orr_law_has_potential(const orr_law *law)
{
    return has_code(law->potential);
}

int orr_law_has_jerk(const orr_law *law)
{
    return has_code(law->jerk);
}

orr_status orr_law_set_jerk(orr_law *law, const char *jerk, int line, orr_error *err)
{
    char *j = dupstr(jerk ? jerk : "");
    if (!j)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    free(law->jerk);
    law->jerk = j;
    law->jerk_line = line;
    return ORR_OK;
}

/* ---- snippet checks ----------------------------------------------------------
 *
 * A snippet is pasted between orrery's own lines of generated source, so
 * what runs past its end (an unclosed brace, parenthesis, comment, string or
 * #if, a line continuation on its last line) or brings in other text
 * (#include, #line) would make a compiler report errors at orrery's lines,
 * or at lines the snippet does not have.  scan_code finds these before
 * anything is compiled, so they are reported at the snippet's own line.  It
 * also lists the names a snippet #defines or #undefs: the generated source
 * undefines them before and after the snippet, so its macros are its own. */

enum { SCAN_MAX_DEPTH = 64, SCAN_MAX_IF = 16, SCAN_MAX_MACROS = 32, SCAN_NAME_MAX = 64 };

typedef struct {
    struct {
        char c;       /* an opening bracket: '(', '{' or '[' */
        char tok[3];  /* as written: "{", or the digraph "<%" */
        int line;     /* where it is */
    } open[SCAN_MAX_DEPTH];
    int depth;
} brackets;

typedef struct {
    char names[SCAN_MAX_MACROS][SCAN_NAME_MAX];
    int n;
} macro_list;

typedef struct {
    const char *p;       /* the next character */
    int line;            /* its line, from 1 */
    int expr;            /* 1: the scale expression, not a snippet */
    const orr_law *law;  /* the law (the names the scale expression may use) */
    macro_list *macros;  /* receives the #define and #undef names, or NULL */
    int at;              /* the problem's line */
    char why[512];       /* the problem, "" when none */
} scanner;

static int scan_fail(scanner *sc, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int scan_fail(scanner *sc, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(sc->why, sizeof sc->why, fmt, ap);
    va_end(ap);
    sc->at = line;
    return -1;
}

/* Skips backslash-newlines (line continuations) at sc->p; -1 for a
 * backslash that ends the code, which would splice orrery's next line onto
 * the snippet's last. */
static int skip_splices(scanner *sc)
{
    for (;;) {
        const char *p = sc->p;
        if (p[0] != '\\')
            return 0;
        if (!p[1 + strspn(p + 1, " \t")])
            return scan_fail(sc, sc->line, "the last line ends with a backslash, which would "
                             "continue it into orrery's code");
        if (p[1] == '\n' || (p[1] == '\r' && p[2] == '\n')) {
            sc->p += p[1] == '\n' ? 2 : 3;
            sc->line++;
        } else {
            return 0;
        }
    }
}

/* Reads a C identifier at sc->p into name (size bytes; "" when none). */
static void scan_ident(scanner *sc, char *name, size_t size)
{
    size_t n = 0;
    while (isalnum((unsigned char)*sc->p) || *sc->p == '_') {
        if (n + 1 < size)
            name[n++] = *sc->p;
        sc->p++;
    }
    name[n] = '\0';
}

/* The non-ASCII character at sc->p (a byte >= 0x80) as a failure: GCC
 * takes UTF-8 in names, NVRTC does not, so a snippet that worked on the CPU
 * would not compile on the GPU.  The character is named as written when it
 * is well-formed UTF-8, else by its first byte. */
static int non_ascii(scanner *sc)
{
    const unsigned char *p = (const unsigned char *)sc->p;
    int len = p[0] >= 0xc2 && p[0] <= 0xdf ? 2 : p[0] >= 0xe0 && p[0] <= 0xef ? 3
            : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : 0;
    /* the second byte's range excludes overlong forms, surrogates and
     * code points past U+10FFFF */
    const unsigned char lo = p[0] == 0xe0 ? 0xa0 : p[0] == 0xf0 ? 0x90 : 0x80,
                        hi = p[0] == 0xed ? 0x9f : p[0] == 0xf4 ? 0x8f : 0xbf;
    if (len && (p[1] < lo || p[1] > hi))
        len = 0;
    for (int k = 2; k < len; k++)
        if (p[k] < 0x80 || p[k] > 0xbf)
            len = 0;
    static const char why[] = "outside comments and strings: NVRTC refuses it (names and "
                              "operators are ASCII)";
    if (len)
        return scan_fail(sc, sc->line, "a non-ASCII character '%.*s' %s", len, sc->p, why);
    return scan_fail(sc, sc->line, "a non-ASCII character (the byte 0x%02x) %s", p[0], why);
}

/* A string or character literal from its opening quote; in_dir: inside a
 * directive, where the compiler tolerates a lone quote (#error don't). */
static int scan_literal(scanner *sc, int in_dir)
{
    const char q = *sc->p++;
    const int line = sc->line;
    for (;;) {
        if (skip_splices(sc))
            return -1;
        const char c = *sc->p;
        if (c == q) {
            sc->p++;
            return 0;
        }
        if (c == '\n' || !c) {
            if (in_dir)
                return 0;
            return scan_fail(sc, line, "%s literal is not closed on its line",
                             q == '"' ? "a string" : "a character");
        }
        sc->p++;
        if (c == '\\' && *sc->p && *sc->p != '\n')
            sc->p++;
    }
}

/* p past any backslash-newlines (line splices, which the compilers remove
 * before they see comments: "*\\<newline>/" ends a comment), *lines
 * counting them (NULL: not counted). */
static const char *past_splices(const char *p, int *lines)
{
    while (p[0] == '\\' && (p[1] == '\n' || (p[1] == '\r' && p[2] == '\n'))) {
        p += p[1] == '\n' ? 2 : 3;
        if (lines)
            (*lines)++;
    }
    return p;
}

/* The character after the one at p, as the compilers see it (line splices
 * removed): a comment may open as "/\\<newline>*". */
static char next_char(const char *p)
{
    return *past_splices(p + 1, NULL);
}

/* A block comment from its opening slash (splices between its characters
 * as the compilers take them). */
static int scan_comment(scanner *sc)
{
    const int line = sc->line;
    int n = 0;
    sc->p = past_splices(sc->p + 1, &n) + 1;   /* past the '*' */
    sc->line += n;
    for (; *sc->p; sc->p++) {
        if (sc->p[0] == '*') {
            n = 0;
            const char *q = past_splices(sc->p + 1, &n);
            if (*q == '/') {
                sc->line += n;
                sc->p = q + 1;
                return 0;
            }
        }
        sc->line += *sc->p == '\n';
    }
    return scan_fail(sc, line, "a /* comment is not closed");
}

static int macro_add(scanner *sc, const char *name)
{
    if (!sc->macros || !name[0])
        return 0;
    for (int k = 0; k < sc->macros->n; k++)
        if (strcmp(sc->macros->names[k], name) == 0)
            return 0;
    if (sc->macros->n >= SCAN_MAX_MACROS)
        return scan_fail(sc, sc->line, "too many macros (at most %d)", SCAN_MAX_MACROS);
    snprintf(sc->macros->names[sc->macros->n++], SCAN_NAME_MAX, "%s", name);
    return 0;
}

/* The rest of a logical line (a // comment, a directive from after its
 * name).  Comments and literals are read in a directive (a comment may
 * span lines), brackets are not counted (scan_macro_body counts a macro's);
 * raw: its text is free (// comments, #error, #pragma). */
static int scan_rest_of_line(scanner *sc, int raw)
{
    for (;;) {
        if (skip_splices(sc))
            return -1;
        const char c = *sc->p;
        if (!c || c == '\n')
            return 0;
        if (!raw && c == '/' && next_char(sc->p) == '*') {
            if (scan_comment(sc))
                return -1;
        } else if (!raw && c == '/' && next_char(sc->p) == '/') {
            return scan_rest_of_line(sc, 1);
        } else if (!raw && (c == '"' || c == '\'')) {
            if (scan_literal(sc, 1))
                return -1;
        } else if (!raw && (unsigned char)c >= 0x80) {
            return non_ascii(sc);
        } else {
            sc->p++;
        }
    }
}

/* The bracket at p, if any: its kind ('(', ')', '{', '}', '[' or ']') in *c,
 * its spelling in tok, and its length: 1, or 2 for the digraphs <: :> <% %>,
 * which both compilers read as [ ] { } (C99 and C++ alike); 0 when p is no
 * bracket. */
static int bracket_at(const char *p, char *c, char tok[3])
{
    static const char digraphs[][3] = {"<:", ":>", "<%", "%>"}, as[] = "[]{}";
    for (int k = 0; k < 4; k++)
        if (p[0] == digraphs[k][0] && p[1] == digraphs[k][1]) {
            *c = as[k];
            memcpy(tok, digraphs[k], 3);
            return 2;
        }
    if (!p[0] || !strchr("(){}[]", p[0]))
        return 0;
    *c = tok[0] = p[0];
    tok[1] = '\0';
    return 1;
}

/* A bracket for a message: "'}'", or "'%>' (the digraph of '}')". */
static const char *bracket_name(char c, const char *tok, char *buf, size_t size)
{
    if (tok[1])
        snprintf(buf, size, "'%s' (the digraph of '%c')", tok, c);
    else
        snprintf(buf, size, "'%c'", c);
    return buf;
}

/* Counts the bracket at sc->p (of length len, kind c, spelled tok) into
 * br; -1 when it closes nothing or the wrong bracket. */
static int count_bracket(scanner *sc, brackets *br, char c, const char *tok, const char *what)
{
    static const char opens[] = "({[", closes[] = ")}]";
    const char *o = strchr(opens, c), *k = strchr(closes, c);
    char a[48], b[48];
    if (o) {
        if (br->depth >= SCAN_MAX_DEPTH)
            return scan_fail(sc, sc->line, "brackets nested too deep (at most %d)",
                             SCAN_MAX_DEPTH);
        br->open[br->depth].c = c;
        memcpy(br->open[br->depth].tok, tok, 3);
        br->open[br->depth].line = sc->line;
        br->depth++;
    } else if (k) {
        const char want = opens[k - closes];
        if (!br->depth)
            return scan_fail(sc, sc->line, "%s%s without a matching '%c'", what,
                             bracket_name(c, tok, a, sizeof a), want);
        br->depth--;
        if (br->open[br->depth].c != want)
            return scan_fail(sc, sc->line, "%s%s does not match the %s at line %d", what,
                             bracket_name(c, tok, a, sizeof a),
                             bracket_name(br->open[br->depth].c, br->open[br->depth].tok, b,
                                          sizeof b),
                             br->open[br->depth].line);
    }
    return 0;
}

/* A #define from after its name: the parameter list of a function-like
 * macro, then its body, whose brackets must balance.  A macro that opens
 * or closes a bracket for the code around it (#define END }) would make the
 * compilers report the snippet's brackets at orrery's lines. */
static int scan_macro_body(scanner *sc, const char *macro)
{
    if (*sc->p == '(')   /* parameters: no brackets inside but the closing one */
        sc->p += strcspn(sc->p, ")\n") + (sc->p[strcspn(sc->p, ")\n")] == ')');
    brackets br = {.depth = 0};
    char what[SCAN_NAME_MAX + 96];
    snprintf(what, sizeof what, "#define %s: a macro's body must balance its brackets, and this "
             "one has ", macro);
    for (;;) {
        if (skip_splices(sc))
            return -1;
        const char c = *sc->p;
        char bc, tok[3];
        int len;
        if (!c || c == '\n')
            break;
        if (c == '/' && next_char(sc->p) == '*') {
            if (scan_comment(sc))
                return -1;
        } else if (c == '/' && next_char(sc->p) == '/') {
            if (scan_rest_of_line(sc, 1))
                return -1;
        } else if (c == '"' || c == '\'') {
            if (scan_literal(sc, 1))
                return -1;
        } else if ((unsigned char)c >= 0x80) {
            return non_ascii(sc);
        } else if ((len = bracket_at(sc->p, &bc, tok)) > 0) {
            if (count_bracket(sc, &br, bc, tok, what))
                return -1;
            sc->p += len;
        } else {
            sc->p++;
        }
    }
    if (br.depth) {
        char nm[48];
        const int d = br.depth - 1;
        return scan_fail(sc, br.open[d].line, "%s%s never closed", what,
                         bracket_name(br.open[d].c, br.open[d].tok, nm, sizeof nm));
    }
    return 0;
}

/* The operators of C expressions (and the '.' of a number). */
static const char expr_ops[] = "+-*/%<>=!&|^~?:,.";

/* Why the scale expression may not use `name` (into buf), or NULL when it
 * may: it is evaluated once per body, so it sees the params, G, eps, eps2,
 * real (and float, double: casts) and the orr_ math functions, not a
 * pair's variables or attributes. */
static const char *scale_name_why(const orr_law *law, const char *name, char *buf, size_t size)
{
    static const char *const ok[] = {
        "G", "eps", "eps2", "real", "float", "double", "orr_sqrt", "orr_rsqrt", "orr_rsqrt3",
        "orr_rsqrt_nz", "orr_rsqrt3_nz", "orr_exp", "orr_log", "orr_pow", "orr_fabs",
        "orr_floor", "orr_rint", "orr_erf", "orr_erfc", "orr_tanh", "orr_fmin", "orr_fmax", NULL};
    static const char *const per_pair[] = {"dx", "dy", "dz", "d2", "r2", "mi", "mj", "f", "u",
                                           "g", NULL};
    for (int k = 0; ok[k]; k++)
        if (strcmp(ok[k], name) == 0)
            return NULL;
    if (law && orr_law_param_index(law, name) >= 0)
        return NULL;
    int pair = 0;
    for (int k = 0; per_pair[k]; k++)
        pair |= strcmp(per_pair[k], name) == 0;
    const size_t len = strlen(name);
    for (int a = 0; law && a < law->nattrs; a++) {
        const size_t al = strlen(law->attrs[a]);
        pair |= strcmp(law->attrs[a], name) == 0 ||
                (len == al + 2 && strncmp(law->attrs[a], name, al) == 0 && name[al] == '_' &&
                 (name[al + 1] == 'i' || name[al + 1] == 'j'));
    }
    char params[ORR_LAW_MAX_PARAMS * (ORR_LAW_NAME_MAX + 2) + 16] = "";
    size_t used = 0;
    for (int k = 0; law && k < law->nparams; k++)
        used += (size_t)snprintf(params + used, sizeof params - used, "%s%s", k ? ", " : " (",
                                 law->params[k].name);
    snprintf(params + used, sizeof params - used, "%s", used ? ")" : " (none)");
    snprintf(buf, size, "is not in scope in the scale expression, which may use numbers, the "
             "law's params%s, G, eps, eps2, real and the orr_ math functions%s", params,
             pair ? ": it is evaluated once per body, and this is a pair's (use it in the pair "
                    "snippet)" : "");
    return buf;
}

/* Scans code; 0 when it keeps to itself, else -1 with sc->at and sc->why. */
static int scan_code(scanner *sc)
{
    brackets br = {.depth = 0};
    struct {
        int line, saw_else;
        brackets at_if;   /* each branch starts from the brackets before the #if */
    } ifs[SCAN_MAX_IF];
    int nif = 0, bol = 1, last_line = 0;
    char last = 0;   /* the last character of code (not of a comment or directive) */
    while (*sc->p) {
        if (skip_splices(sc))
            return -1;
        const char c = *sc->p;
        if (!c)
            break;
        if (c == '\n') {
            sc->line++;
            sc->p++;
            bol = 1;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            sc->p++;
        } else if (c == '/' && next_char(sc->p) == '*') {
            if (scan_comment(sc))
                return -1;
        } else if (c == '/' && next_char(sc->p) == '/') {
            if (sc->expr)
                return scan_fail(sc, sc->line, "a // comment in the scale expression would "
                                 "hide the code after it (write /* */)");
            if (scan_rest_of_line(sc, 1))
                return -1;
        } else if (c == '"' || c == '\'') {
            if (sc->expr)
                return scan_fail(sc, sc->line, "a %s literal in the scale expression",
                                 c == '"' ? "string" : "character");
            if (scan_literal(sc, 0))
                return -1;
            bol = 0;
            last = '"';
            last_line = sc->line;
        } else if ((unsigned char)c >= 0x80) {
            return non_ascii(sc);
        } else if (bol && (c == '#' || (c == '%' && sc->p[1] == ':'))) {
            /* a directive: # or its digraph %: (both compilers take either) */
            const int line = sc->line;
            char name[SCAN_NAME_MAX];
            if (sc->expr)
                return scan_fail(sc, line, "a preprocessor directive in the scale expression");
            sc->p += c == '#' ? 1 : 2;
            sc->p += strspn(sc->p, " \t");
            if (isdigit((unsigned char)*sc->p))
                return scan_fail(sc, line, "a line marker (# NUMBER) is not allowed in a "
                                 "snippet: orrery's #line directives number its lines");
            scan_ident(sc, name, sizeof name);
            if ((unsigned char)*sc->p >= 0x80)
                return non_ascii(sc);
            bol = 0;
            int free_text = 0;
            if (strcmp(name, "define") == 0 || strcmp(name, "undef") == 0) {
                char macro[SCAN_NAME_MAX];
                sc->p += strspn(sc->p, " \t");
                scan_ident(sc, macro, sizeof macro);
                if (reserved_prefix(macro))
                    return scan_fail(sc, line, "#%s %s: a snippet may not define or undefine "
                                     "names starting with orr_, ORR_, __ or _ and a capital "
                                     "letter", name, macro);
                if (strcmp(macro, "defined") == 0)
                    return scan_fail(sc, line, "#%s defined: 'defined' is the preprocessor's "
                                     "operator, not a macro name", name);
                if (macro_add(sc, macro))
                    return -1;
                if (name[0] == 'd' && scan_macro_body(sc, macro))
                    return -1;
            } else if (strcmp(name, "if") == 0 || strcmp(name, "ifdef") == 0 ||
                       strcmp(name, "ifndef") == 0) {
                if (nif >= SCAN_MAX_IF)
                    return scan_fail(sc, line, "#if nested too deep (at most %d)", SCAN_MAX_IF);
                ifs[nif].line = line;
                ifs[nif].saw_else = 0;
                ifs[nif].at_if = br;
                nif++;
            } else if (strcmp(name, "elif") == 0 || strcmp(name, "else") == 0) {
                if (!nif)
                    return scan_fail(sc, line, "#%s without #if in the snippet", name);
                if (ifs[nif - 1].saw_else)
                    return scan_fail(sc, line, "#%s after the #else of the #if at line %d", name,
                                     ifs[nif - 1].line);
                ifs[nif - 1].saw_else = name[2] == 's';
                br = ifs[nif - 1].at_if;
            } else if (strcmp(name, "endif") == 0) {
                if (!nif)
                    return scan_fail(sc, line, "#endif without #if in the snippet");
                nif--;
            } else if (strcmp(name, "error") == 0 || strcmp(name, "pragma") == 0) {
                free_text = 1;
            } else if (strcmp(name, "warning") == 0) {
                return scan_fail(sc, line, "#warning is not allowed in a snippet: a compiler's "
                                 "output is shown only when compiling fails, so its message "
                                 "would never be seen (#error stops the compile with its "
                                 "message)");
            } else if (strcmp(name, "include") == 0 || strcmp(name, "include_next") == 0 ||
                       strcmp(name, "import") == 0 || strcmp(name, "embed") == 0) {
                return scan_fail(sc, line, "#%s is not allowed in a snippet: what a snippet may "
                                 "use is in scope already (real, its variables, the orr_ "
                                 "math), and NVRTC has no system headers", name);
            } else if (strcmp(name, "line") == 0) {
                return scan_fail(sc, line, "#line is not allowed in a snippet: orrery's #line "
                                 "directives number its lines");
            } else if (name[0] || (*sc->p && !isspace((unsigned char)*sc->p) &&
                                    !(sc->p[0] == '/' && (sc->p[1] == '*' || sc->p[1] == '/')))) {
                return scan_fail(sc, line, "#%s is not a directive a snippet may use (#define, "
                                 "#undef, #if, #ifdef, #ifndef, #elif, #else, #endif, #error, "
                                 "#pragma)", name[0] ? name : "");
            }
            if (scan_rest_of_line(sc, free_text))
                return -1;
        } else if (sc->expr && (isalnum((unsigned char)c) || c == '_' ||
                                (c == '.' && isdigit((unsigned char)sc->p[1])))) {
            /* the scale's operands: numbers, and the names it may use */
            const int line = sc->line;
            if (isdigit((unsigned char)c) || c == '.') {
                /* a number as the preprocessor reads one (a pp-number):
                 * digits, letters, '_', '.', and a sign after an exponent */
                for (sc->p++; isalnum((unsigned char)*sc->p) || *sc->p == '_' || *sc->p == '.' ||
                              ((*sc->p == '+' || *sc->p == '-') && strchr("eEpP", sc->p[-1]));
                     sc->p++)
                    ;
                last = '0';
            } else {
                char id[SCAN_NAME_MAX], why[400];
                scan_ident(sc, id, sizeof id);
                if (scale_name_why(sc->law, id, why, sizeof why))
                    return scan_fail(sc, line, "'%s' %s", id, why);
                last = 'a';
            }
            bol = 0;
            last_line = line;
        } else if (!sc->expr && (isalpha((unsigned char)c) || c == '_')) {
            /* a name: a return or goto would skip what orrery adds after the
             * snippet (a field's sums; a law's guard) */
            char id[SCAN_NAME_MAX];
            const int line = sc->line;
            scan_ident(sc, id, sizeof id);
            if (strcmp(id, "return") == 0 || strcmp(id, "goto") == 0)
                return scan_fail(sc, line, "'%s' in a snippet would skip the code orrery puts "
                                 "after it: set the snippet's values and let it end", id);
            bol = 0;
            last = id[0] ? id[strlen(id) - 1] : c;
            last_line = line;
        } else {
            char bc = 0, tok[3], nm[48];
            const int len = bracket_at(sc->p, &bc, tok);
            bol = 0;
            last = len ? bc : c;
            last_line = sc->line;
            if (sc->expr && (c == ';' || bc == '{' || bc == '}'))
                return scan_fail(sc, sc->line, "%s in the scale expression (it is one C "
                                 "expression)", c == ';' ? "';'" : bracket_name(bc, tok, nm,
                                                                                  sizeof nm));
            if (sc->expr && (bc == '[' || bc == ']'))
                return scan_fail(sc, sc->line, "%s in the scale expression: no array is in "
                                 "scope there", bracket_name(bc, tok, nm, sizeof nm));
            if (sc->expr && !len && !strchr(expr_ops, c)) {
                if (isprint((unsigned char)c))
                    return scan_fail(sc, sc->line, "'%c' in the scale expression (it is one C "
                                     "expression of numbers, names and operators)", c);
                return scan_fail(sc, sc->line, "the byte 0x%02x in the scale expression (it is "
                                 "one C expression of numbers, names and operators)",
                                 (unsigned char)c);
            }
            if (len && count_bracket(sc, &br, bc, tok, ""))
                return -1;
            sc->p += len ? len : 1;
        }
    }
    if (nif)
        return scan_fail(sc, ifs[nif - 1].line, "#if without #endif in the snippet");
    if (br.depth) {
        char nm[48];
        const int d = br.depth - 1;
        return scan_fail(sc, br.open[d].line, "%s is never closed",
                         bracket_name(br.open[d].c, br.open[d].tok, nm, sizeof nm));
    }
    /* a statement must end the snippet (the compilers would name orrery's
     * next line); a name at the end may be a macro of the snippet's own */
    if (sc->expr && last && strchr(expr_ops, last))
        return scan_fail(sc, last_line, "the scale expression ends with '%c': an operand is "
                         "missing", last);
    const int name_last = isalnum((unsigned char)last) || last == '_';
    if (!sc->expr && last && last != ';' && last != '}' &&
        !(name_last && sc->macros && sc->macros->n))
        return scan_fail(sc, last_line, "the last statement does not end with ';'");
    return 0;
}

/* Where line `line` of a snippet (from 1) is, as its #line directive names
 * it: "script.lua:31 (force 'x', pair):2", or "forces/x.h:15" in a
 * built-in law's file (label "force 'x'", or "field 'x'" for a field). */
static char *code_at(const char *origin, const char *label, int builtin, const char *what,
                     int first, int line)
{
    if (builtin && strcmp(what, "scale") != 0)
        return orr_asprintf("%s:%d", origin, first + line - 1);
    return orr_asprintf("%s (%s, %s):%d", origin, label, what, first + line - 1);
}

static orr_status check_scanned(const char *origin, const char *label, int builtin,
                                const char *what, const char *code, int first, const orr_law *law,
                                orr_error *err)
{
    scanner sc = {.p = code ? code : "", .line = 1, .expr = law && strcmp(what, "scale") == 0,
                  .law = law};
    macro_list m = {.n = 0};
    sc.macros = &m;
    if (!scan_code(&sc))
        return ORR_OK;
    char *at = code_at(origin, label, builtin, what, first, sc.at);
    if (!at)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    orr_fail(err, ORR_ERR_COMPILE, "%s: %s", at, sc.why);
    free(at);
    return ORR_ERR_COMPILE;
}

static orr_status check_code(const orr_law *law, const char *what, const char *code, int first,
                             orr_error *err)
{
    char label[96];
    snprintf(label, sizeof label, "force '%s'", law->name);
    return check_scanned(law->origin, label, law->builtin, what, code, first, law, err);
}

orr_status orr_snippet_check(const char *origin, const char *label, int builtin,
                             const char *what, const char *code, int first, orr_error *err)
{
    return check_scanned(origin, label, builtin, what, code, first, NULL, err);
}

orr_status orr_snippet_check_bytes(const char *origin, const char *label, int builtin,
                                   const char *what, const char *code, size_t len, int first,
                                   orr_error *err)
{
    const char *nul = code ? memchr(code, '\0', len) : NULL;
    if (!nul)
        return ORR_OK;
    int line = 1;
    for (const char *p = code; p < nul; p++)
        line += *p == '\n';
    char *at = code_at(origin, label, builtin, what, first, line);
    if (!at)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    orr_fail(err, ORR_ERR_COMPILE, "%s: a NUL byte: a snippet is text, and what follows the NUL "
             "would be dropped", at);
    free(at);
    return ORR_ERR_COMPILE;
}

orr_status orr_law_check_bytes(const orr_law *law, const char *what, const char *code,
                               size_t len, int first, orr_error *err)
{
    char label[96];
    snprintf(label, sizeof label, "force '%s'", law->name);
    return orr_snippet_check_bytes(law->origin, label, law->builtin, what, code, len, first, err);
}

orr_status orr_law_validate(const orr_law *law, orr_error *err)
{
    if (!has_code(law->pair))
        return orr_fail(err, ORR_ERR_ARG, "force law '%s': the pair snippet is empty (it must set f)",
                        law->name);
    if (!has_code(law->scale))
        return orr_fail(err, ORR_ERR_ARG, "force law '%s': the scale expression is empty",
                        law->name);
    for (int k = 0; k < law->nparams; k++)
        if (!isfinite(law->params[k].value))
            return orr_fail(err, ORR_ERR_ARG,
                            "force law '%s': param '%s' must be a finite number (got %g)",
                            law->name, law->params[k].name, law->params[k].value);
    orr_status st = check_code(law, "pair", law->pair, law->pair_line, err);
    if (!st)
        st = check_code(law, "potential", law->potential, law->potential_line, err);
    if (!st)
        st = check_code(law, "jerk", law->jerk, law->jerk_line, err);
    if (!st)
        st = check_code(law, "scale", law->scale, 1, err);
    return st;
}

/* ---- built-in laws --------------------------------------------------------- */

/* Parses a law file: `//@` metadata lines, then `//@pair` and `//@potential`
 * sections. */
static orr_status parse_builtin(orr_law *law, const char *name, const char *text, orr_error *err)
{
    char file[96];
    snprintf(file, sizeof file, "forces/%s.h", name);
    orr_status st = orr_law_init(law, name, "", "", file, err);
    if (st)
        return st;
    law->builtin = 1;
    orr_buf sec[3] = {{0}, {0}, {0}};
    int cur = -1, line = 0, bad = 0;
    for (const char *p = text; *p && !st && !bad;) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char ln[512];
        line++;
        snprintf(ln, sizeof ln, "%.*s", (int)(len < sizeof ln ? len : sizeof ln - 1), p);
        if (strncmp(ln, "//@", 3) == 0) {
            char key[32] = "", a[64] = "";
            int off = 0;
            sscanf(ln + 3, "%31s%n", key, &off);
            const char *rest = ln + 3 + off;
            while (*rest == ' ')
                rest++;
            if (strcmp(key, "pair") == 0) {
                cur = 0;
                law->pair_line = line + 1;
            } else if (strcmp(key, "potential") == 0) {
                cur = 1;
                law->potential_line = line + 1;
            } else if (strcmp(key, "jerk") == 0) {
                cur = 2;
                law->jerk_line = line + 1;
            } else if (strcmp(key, "law") == 0) {
                snprintf(law->doc, sizeof law->doc, "%s", rest);
            } else if (strcmp(key, "scale") == 0) {
                snprintf(law->scale, sizeof law->scale, "%s", rest);
            } else if (strcmp(key, "finite_at_zero") == 0) {
                law->finite_at_zero = 1;
            } else if (strcmp(key, "param") == 0) {
                double v;
                int used = 0;
                if (sscanf(rest, "%63s %lf %n", a, &v, &used) < 2) {
                    st = orr_fail(err, ORR_ERR_ARG, "%s:%d: expected //@param NAME VALUE DOC",
                                  file, line);
                } else if (!(st = orr_law_add_param(law, a, v, err))) {
                    snprintf(law->params[law->nparams - 1].doc, sizeof law->params[0].doc, "%s",
                             rest + used);
                }
            } else if (strcmp(key, "attribute") == 0) {
                int used = 0;
                if (sscanf(rest, "%63s %n", a, &used) < 1) {
                    st = orr_fail(err, ORR_ERR_ARG, "%s:%d: expected //@attribute NAME DOC", file,
                                  line);
                } else if (!(st = orr_law_add_attr(law, a, err))) {
                    snprintf(law->attr_doc[law->nattrs - 1], sizeof law->attr_doc[0], "%s",
                             rest + used);
                }
            } else {
                st = orr_fail(err, ORR_ERR_ARG, "%s:%d: unknown directive //@%s", file, line, key);
            }
        } else if (cur >= 0) {
            bad = orr_buf_put(&sec[cur], p, len) || orr_buf_put(&sec[cur], "\n", 1);
        }
        p = eol ? eol + 1 : p + len;
    }
    if (!st && bad)
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (!st && cur < 0)
        st = orr_fail(err, ORR_ERR_ARG, "%s: no //@pair section", file);
    if (!st) {
        free(law->pair);
        free(law->potential);
        law->pair = sec[0].data ? sec[0].data : dupstr("");
        law->potential = sec[1].data ? sec[1].data : dupstr("");
        free(law->jerk);
        law->jerk = sec[2].data ? sec[2].data : dupstr("");
        sec[0].data = sec[1].data = sec[2].data = NULL;
        if (!law->pair || !law->potential || !law->jerk)
            st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    orr_buf_free(&sec[0]);
    orr_buf_free(&sec[1]);
    orr_buf_free(&sec[2]);
    if (st)
        orr_law_free(law);
    return st;
}

const char *const *orr_law_builtin_names(void)
{
    static const char *names[32];
    static int done;
    if (!done) {
        int n = 0;
        for (const orr_ksrc_file *f = orr_ksrc_embedded; f->name && n < 31; f++) {
            size_t len = strlen(f->name);
            if (strncmp(f->name, "forces/", 7) == 0 && len > 9 && strcmp(f->name + len - 2, ".h") == 0)
                names[n++] = f->name;
        }
        for (int a = 1; a < n; a++)   /* insertion sort: a handful of names */
            for (int b = a; b > 0 && strcmp(names[b - 1], names[b]) > 0; b--) {
                const char *t = names[b];
                names[b] = names[b - 1];
                names[b - 1] = t;
            }
        /* strip "forces/" and ".h" into static storage */
        static char store[32][64];
        for (int k = 0; k < n; k++) {
            snprintf(store[k], sizeof store[k], "%.*s", (int)(strlen(names[k]) - 9), names[k] + 7);
            names[k] = store[k];
        }
        names[n] = NULL;
        done = 1;
    }
    return names;
}

orr_status orr_law_builtin(const char *name, orr_law *law, orr_error *err)
{
    memset(law, 0, sizeof *law);
    char *text = NULL;
    if (!name || !name[0] || strlen(name) > 60 ||
        strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(name))
        return orr_fail(err, ORR_ERR_ARG,
                        "invalid force law name '%s' (lowercase letters, digits, '_')",
                        name ? name : "");
    orr_status st = orr_ksrc_builtin("forces", name, "force law", orr_law_builtin_names(),
                                     &text, err);
    if (st)
        return st;
    st = parse_builtin(law, name, text, err);
    free(text);
    return st;
}

/* ---- generated source ------------------------------------------------------ */

/* The declarations a snippet sees: G, eps, eps2, the params and (with_attrs)
 * the attributes of i and j, each also cast to void so unused ones do not
 * warn. */
static int emit_bindings(const orr_law *law, orr_buf *b, int with_attrs)
{
    int bad = orr_buf_printf(b, "    const real G = (real)ORR_G, eps = (real)ORR_SOFTENING, "
                                "eps2 = (real)ORR_EPS2;\n    (void)G; (void)eps; (void)eps2;\n");
    int slot = 0;
    for (int k = 0; k < law->nparams; k++) {
        const orr_law_param *p = &law->params[k];
        if (p->runtime) {
            bad = bad || orr_buf_printf(b, "    const real %s = rt[%d]; (void)%s;\n", p->name,
                                        slot++, p->name);
        } else {
            char hex[64];
            orr_hexfloat(hex, sizeof hex, p->value);
            bad = bad || orr_buf_printf(b, "    const real %s = (real)%s; /* %.17g */ (void)%s;\n",
                                        p->name, hex, p->value, p->name);
        }
    }
    for (int a = 0; with_attrs && a < law->nattrs; a++)
        bad = bad || orr_buf_printf(b,
                                    "    const real %s_i = ai[%d * as], %s_j = aj[%d * as]; "
                                    "(void)%s_i; (void)%s_j;\n",
                                    law->attrs[a], a, law->attrs[a], a, law->attrs[a],
                                    law->attrs[a]);
    return bad;
}

/* Appends s as the inside of a C string literal that the compilers read
 * back as s (GCC and NVRTC both decode the escapes in a #line file name):
 * backslashes and quotes escaped, control characters as visible escapes
 * ("\n" reads back as a backslash and an n, so a message stays one line).
 * in_comment: for a block comment instead, where no delimiter may form. */
static int put_escaped(orr_buf *b, const char *s, int in_comment)
{
    int bad = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && !bad; p++) {
        static const char ctl[] = "\a\b\f\n\r\t\v", ltr[] = "abfnrtv";
        const char *c = strchr(ctl, *p);
        if (*p == '\\' || *p == '"')
            bad = orr_buf_printf(b, "\\%c", *p);
        else if (c)
            bad = orr_buf_printf(b, "%s%c", in_comment ? "\\" : "\\\\", ltr[c - ctl]);
        else if (*p < 0x20 || *p == 0x7f)
            bad = orr_buf_printf(b, "%sx%02x", in_comment ? "\\" : "\\\\", *p);
        else if (in_comment && *p == '*' && p[1] == '/')
            bad = orr_buf_put(b, "*\\", 2);
        else if (in_comment && *p == '/' && p[1] == '*')
            bad = orr_buf_put(b, "/\\", 2);
        else
            bad = orr_buf_put(b, p, 1);
    }
    return bad;
}

/* "#undef NAME" for each of a snippet's macros. */
static int put_undefs(orr_buf *b, const macro_list *m)
{
    int bad = 0;
    for (int k = 0; k < m->n && !bad; k++)
        bad = orr_buf_printf(b, "#undef %s\n", m->names[k]);
    return bad;
}

/* One snippet under #line directives naming its origin, its macros
 * undefined before and after it; then a #line naming `after` (orrery's own
 * generated lines). */
int orr_snippet_emit(orr_buf *b, const char *origin, const char *label, int builtin,
                     const char *what, const char *code, int line, const char *after)
{
    macro_list m = {.n = 0};
    scanner sc = {.p = code, .line = 1, .macros = &m};
    (void)scan_code(&sc);   /* validated: only its macros are wanted here */
    int bad = put_undefs(b, &m) || orr_buf_printf(b, "#line %d \"", line) ||
              put_escaped(b, origin, 0);
    if (!builtin)
        bad = bad || orr_buf_printf(b, " (%s, %s)", label, what);
    bad = bad || orr_buf_printf(b, "\"\n%s\n", code) || put_undefs(b, &m);
    return bad || orr_buf_printf(b, "#line 1 \"") || put_escaped(b, after, 0) ||
           orr_buf_printf(b, "\"\n");
}

static int emit_snippet(const orr_law *law, orr_buf *b, const char *what, const char *code,
                        int line)
{
    char label[96], after[128];
    snprintf(label, sizeof label, "force '%s'", law->name);
    snprintf(after, sizeof after, "<law %s: generated>", law->name);
    return orr_snippet_emit(b, law->origin, label, law->builtin, what, code, line, after);
}

int orr_put_escaped(orr_buf *b, const char *s, int in_comment)
{
    return put_escaped(b, s, in_comment);
}

int orr_law_emit(const orr_law *law, orr_buf *b)
{
    int nrt = orr_law_runtime_count(law);
    int bad = orr_buf_printf(b, "#line 1 \"<law %s: generated>\"\n/* force law '%s' (", law->name,
                             law->name) ||
              put_escaped(b, law->origin, 1) ||
              orr_buf_printf(b, ") */\n#define ORR_NATTR %d\n#define ORR_NATTRS %d\n"
                             "#define ORR_NRT %d\n#define ORR_NRTS %d\n",
                             law->nattrs, law->nattrs ? law->nattrs : 1, nrt, nrt ? nrt : 1);
    /* the law's names are its own, whatever macros the headers or the
     * compiler define (GNU C's linux and unix, math.h's M_PI and NAN, CUDA's
     * NULL): code after this section uses no macro but orr_, ORR_ and __ ones */
    for (int k = 0; k < law->nparams; k++)
        bad = bad || orr_buf_printf(b, "#undef %s\n", law->params[k].name);
    for (int a = 0; a < law->nattrs; a++)
        bad = bad || orr_buf_printf(b, "#undef %s_i\n#undef %s_j\n", law->attrs[a], law->attrs[a]);
    bad = bad || orr_buf_printf(b, "ORR_LAW real orr_law_scale(const real *rt)\n{\n");
    bad = bad || emit_bindings(law, b, 0);
    /* the scale under a #line of its own ("script.lua:3 (force 'x', scale)"),
     * the closing parenthesis on its last line, so that a compiler's
     * message about it (an incomplete expression too) names that line */
    bad = bad || orr_buf_printf(b, "    return (real)(\n#line 1 \"") ||
          put_escaped(b, law->origin, 0) ||
          orr_buf_printf(b, " (force '%s', scale)\"\n%s);\n#line 1 \"<law %s: generated>\"\n}\n",
                         law->name, law->scale, law->name);
    static const char args[] = "(real dx, real dy, real dz, real d2, real r2, real mi, real mj, "
                               "const real *ai, const real *aj, long as, const real *rt)\n{\n";
    bad = bad || orr_buf_printf(b, "ORR_LAW real orr_pair_accel%s", args);
    bad = bad || emit_bindings(law, b, 1);
    bad = bad || orr_buf_printf(b, "    real f = 0;\n    {\n");
    bad = bad || emit_snippet(law, b, "pair", law->pair, law->pair_line);
    bad = bad || orr_buf_printf(b, "    }\n    return %s;\n}\n",
                                law->finite_at_zero ? "f" : "d2 > 0 ? f : (real)0");
    bad = bad || orr_buf_printf(b, "ORR_LAW real orr_pair_potential%s", args);
    bad = bad || emit_bindings(law, b, 1);
    bad = bad || orr_buf_printf(b, "    real u = 0;\n    {\n");
    bad = bad || emit_snippet(law, b, "potential", has_code(law->potential) ? law->potential : "",
                              law->potential_line);
    bad = bad || orr_buf_printf(b, "    }\n    return u;\n}\n");
    /* g = df/d(d2) at the pair's f: the jerk (orrery's Hermite integrator) */
    bad = bad || orr_buf_printf(b, "#define ORR_HAS_JERK %d\nORR_LAW real orr_pair_jerk(real dx, "
                                   "real dy, real dz, real d2, real r2, real mi, real mj, const "
                                   "real *ai, const real *aj, long as, const real *rt, real f)\n{\n",
                                orr_law_has_jerk(law));
    bad = bad || emit_bindings(law, b, 1);
    bad = bad || orr_buf_printf(b, "    real g = 0; (void)f;\n    {\n");
    bad = bad || emit_snippet(law, b, "jerk", law->jerk, law->jerk_line);
    bad = bad || orr_buf_printf(b, "    }\n    return %s;\n}\n",
                                law->finite_at_zero ? "g" : "d2 > 0 ? g : (real)0");
    return bad ? -1 : 0;
}
