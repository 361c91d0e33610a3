/* textio: the text output's writer and reader and their one column list
 * (see textio.h). */
#include "textio.h"
#include "outfile.h"
#include "units.h"
#include "util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* The columns, in file order: the one list the writer and the reader use. */
enum { COL_ID, COL_X, COL_Y, COL_Z, COL_VX, COL_VY, COL_VZ, COL_M, NCOLS };
static const char *const columns[NCOLS] = {"id", "x", "y", "z", "vx", "vy", "vz", "m"};

/* The header line (no newline) with separator sep: "id x y z vx vy vz m". */
static void header_line(char sep, char *buf, size_t size)
{
    const char between[2] = {sep, '\0'};
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < NCOLS && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", k ? between : "", columns[k]);
}

char orr_text_sep(const char *path)
{
    const char *base = strrchr(path, '/');
    const char *ext = strrchr(base ? base + 1 : path, '.');
    if (ext && strcasecmp(ext, ".txt") == 0)
        return ' ';
    if (ext && strcasecmp(ext, ".csv") == 0)
        return ',';
    return 0;
}

/* ---- writing ------------------------------------------------------------------ */

orr_status orr_text_write(const char *path, long n, const double *pos, const double *vel,
                          const char *comment, orr_error *err)
{
    char sep = orr_text_sep(path);
    if (!sep)
        return orr_fail(err, ORR_ERR_ARG,
                        "cannot write '%s': unknown format (expected .txt or .csv)", path);
    orr_outfile out;
    FILE *f = NULL;
    orr_status st = orr_outfile_begin_stream(&out, path, 0, &f, err);
    if (st)
        return st;
    char head[64];
    header_line(sep, head, sizeof head);
    if (comment && comment[0])
        fprintf(f, "# %s\n", comment);
    fprintf(f, "%s\n", head);
    for (long i = 0; i < n; i++) {
        const double *x = pos + 4 * i, *v = vel + 3 * i;
        double val[NCOLS];
        val[COL_X] = x[0], val[COL_Y] = x[1], val[COL_Z] = x[2], val[COL_M] = x[3];
        val[COL_VX] = v[0], val[COL_VY] = v[1], val[COL_VZ] = v[2];
        fprintf(f, "%ld", i + 1);   /* COL_ID */
        for (int k = COL_ID + 1; k < NCOLS; k++)
            fprintf(f, "%c%.17g", sep, val[k]);
        fputc('\n', f);
    }
    return orr_outfile_commit(&out, err);   /* checks the stream's errors */
}

/* ---- reading ------------------------------------------------------------------ */

/* The next field of line at *p (sep ' ': runs of blanks; else sep and blanks
 * around it); NULL at the end of the line. */
static char *next_field(char **p, char sep)
{
    char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s)
        return NULL;
    char *e = s;
    if (sep == ' ') {
        while (*e && *e != ' ' && *e != '\t')
            e++;
    } else {
        while (*e && *e != sep)
            e++;
    }
    char *next = *e ? e + 1 : e;
    char *end = e;
    while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    *end = '\0';
    *p = next;
    return s;
}

orr_status orr_text_read(const char *path, orr_snapshot *out, orr_error *err)
{
    char sep = orr_text_sep(path);
    if (!sep)
        return orr_read_failed(path, err, "not a text file (.txt or .csv)");
    struct stat sb;
    if (stat(path, &sb) != 0)
        return orr_read_failed(path, err, "%s", strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return orr_read_failed(path, err, "is a directory");
    char *text = NULL;
    orr_error rerr = {0};
    if (orr_read_file(path, &text, NULL, &rerr)) {
        orr_error_clear(&rerr);
        return orr_read_failed(path, err, "%s", strerror(errno ? errno : EIO));
    }
    long lines = 1;
    for (char *c = text; *c; c++)
        lines += *c == '\n';
    out->pos = malloc(sizeof(double) * 4 * (size_t)lines);
    out->vel = malloc(sizeof(double) * 3 * (size_t)lines);
    if (!out->pos || !out->vel) {
        free(text);
        return orr_fail(err, ORR_ERR_NOMEM, "cannot read '%s': out of memory", path);
    }
    orr_status st = ORR_OK;
    int header = 0;
    long n = 0, lineno = 0;
    char expected[64];
    header_line(sep, expected, sizeof expected);
    for (char *line = text; line && !st;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r')
            line[len - 1] = '\0';
        if (line[strspn(line, " \t")] == '#') {   /* a comment: a frame's centre, else skipped */
            double q[6];
            if (sscanf(line + strspn(line, " \t"), "# frame: center %lf %lf %lf velocity %lf %lf "
                       "%lf", &q[0], &q[1], &q[2], &q[3], &q[4], &q[5]) == 6) {
                out->frame = 1;
                memcpy(out->frame_center, q, sizeof out->frame_center);
                memcpy(out->frame_velocity, q + 3, sizeof out->frame_velocity);
            }
            line = nl ? nl + 1 : NULL;
            continue;
        }
        char *p = line, *f[NCOLS + 1];
        int nf = 0;
        for (char *tok; nf < NCOLS + 1 && (tok = next_field(&p, sep));)
            f[nf++] = tok;
        if (nf == 0) {
            line = nl ? nl + 1 : NULL;
            continue;
        }
        if (!header) {
            int ok = nf == NCOLS;
            for (int k = 0; ok && k < NCOLS; k++)
                ok = strcasecmp(f[k], columns[k]) == 0;
            if (!ok)
                st = orr_read_failed(path, err, "line %ld: expected the header line '%s'", lineno,
                                     expected);
            header = 1;
            line = nl ? nl + 1 : NULL;
            continue;
        }
        if (nf != NCOLS) {
            if (nf > NCOLS)
                st = orr_read_failed(path, err, "line %ld: more than %d columns (expected %s)", lineno,
                                     NCOLS, expected);
            else
                st = orr_read_failed(path, err, "line %ld: %d column%s (expected %d: %s)", lineno, nf,
                                     nf == 1 ? "" : "s", NCOLS, expected);
            break;
        }
        double v[NCOLS];
        for (int k = 0; k < NCOLS && !st; k++) {
            char *e;
            errno = 0;
            v[k] = strtod(f[k], &e);
            if (e == f[k] || *e)
                st = orr_read_failed(path, err, "line %ld: %s is '%.40s', not a number", lineno,
                                     columns[k], f[k]);
            else if (!isfinite(v[k]))
                st = orr_read_failed(path, err, "line %ld: %s is not finite (%s)", lineno, columns[k],
                                     f[k]);
            else if (k == COL_M && v[k] < 0)
                st = orr_read_failed(path, err, "line %ld: m is negative (%s)", lineno, f[k]);
        }
        if (!st) {
            double *x = out->pos + 4 * n, *u = out->vel + 3 * n;
            x[0] = v[COL_X], x[1] = v[COL_Y], x[2] = v[COL_Z], x[3] = v[COL_M];
            u[0] = v[COL_VX], u[1] = v[COL_VY], u[2] = v[COL_VZ];
            n++;
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    if (!st && !header)
        st = orr_read_failed(path, err, "empty file (expected a header line and one line per body)");
    else if (!st && n == 0)
        st = orr_read_failed(path, err, "no bodies (only a header line)");
    out->n = n;
    return st;
}

static orr_status write_sim(orr_sim *s, void *ctx, orr_error *err)
{
    const orr_sim_config *c = orr_sim_config_of(s);
    char units[256], comment[800] = "";
    if (orr_units_describe(&c->units, c->G, units, sizeof units)[0])
        snprintf(comment, sizeof comment, "units: %s", units);
    double fc[3], fv[3];   /* bodies relative to a frame's centre: where it is, read back */
    const int frame = orr_sim_frame(s, fc, fv, err);
    if (frame < 0) {
        orr_error_context(err, "cannot write '%s'", (const char *)ctx);
        return err->code;
    }
    if (frame) {
        const size_t used = strlen(comment);
        snprintf(comment + used, sizeof comment - used,
                 "%sframe: center %.17g %.17g %.17g velocity %.17g %.17g %.17g (the bodies are "
                 "relative to it)", used ? "\n# " : "", fc[0], fc[1], fc[2], fv[0], fv[1], fv[2]);
    }
    double *pos, *vel;
    orr_status st = orr_sim_pos(s, &pos, err);
    if (!st)
        st = orr_sim_vel(s, &vel, err);
    return st ? st : orr_text_write(ctx, orr_sim_n(s), pos, vel, comment, err);
}

orr_status orr_text_write_sim(orr_sim *s, const char *path, orr_error *err)
{
    /* an unknown format fails (in orr_text_write, before it needs the
     * bodies) before the state is read */
    orr_status st = orr_text_sep(path) ? ORR_OK : orr_text_write(path, 0, NULL, NULL, NULL, err);
    return orr_sim_write_once(s, st, path, write_sim, (void *)path, err);
}
