/* util: byte buffers, file reads, exact literals (see util.h). */
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int buf_reserve(orr_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p)
        return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

int orr_buf_put(orr_buf *b, const void *p, size_t len)
{
    if (buf_reserve(b, len))
        return -1;
    memcpy(b->data + b->len, p, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

int orr_buf_printf(orr_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || buf_reserve(b, (size_t)n))
        return -1;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void orr_buf_free(orr_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

char *orr_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return s;
}

orr_status orr_read_file(const char *path, char **out, size_t *len, orr_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return orr_fail(err, ORR_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    orr_buf b = {0};
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (orr_buf_put(&b, chunk, n)) {
            fclose(f);
            orr_buf_free(&b);
            return orr_fail(err, ORR_ERR_NOMEM, "out of memory reading %s", path);
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        orr_buf_free(&b);
        return orr_fail(err, ORR_ERR_IO, "cannot read %s", path);
    }
    if (!b.data && orr_buf_put(&b, "", 0))
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory reading %s", path);
    *out = b.data;
    if (len)
        *len = b.len;
    return ORR_OK;
}

void orr_hexfloat(char *buf, size_t size, double v)
{
    snprintf(buf, size, "%a", v);
}

const char *orr_shortest(char *buf, size_t size, double v)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, size, "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    return buf;
}

double orr_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

enum { TRACE_MAX = 256 };
static struct {
    int on;           /* -1 not yet asked, 0 off, 1 on */
    int count;
    double origin;    /* monotonic seconds at the process's start */
    const char *what[TRACE_MAX];
    double ms[TRACE_MAX];
} trace = {-1, 0, 0, {0}, {0}};

/* The monotonic time the process started at: /proc/self/stat's field 22
 * (clock ticks since boot; CLOCK_BOOTTIME counts from boot too), or now. */
static double process_start_s(void)
{
    double now = orr_now_s(), origin = now;
    FILE *f = fopen("/proc/self/stat", "r");
    char line[1024];
    struct timespec bt;
    if (f && fgets(line, sizeof line, f) && clock_gettime(CLOCK_BOOTTIME, &bt) == 0) {
        const char *p = strrchr(line, ')');   /* the command name may hold spaces */
        unsigned long long ticks = 0;
        int field = 2;
        for (; p && *p && field < 22; p++)
            field += *p == ' ';
        if (p && sscanf(p, "%llu", &ticks) == 1 && sysconf(_SC_CLK_TCK) > 0) {
            const double boot = (double)bt.tv_sec + 1e-9 * (double)bt.tv_nsec;
            const double age = boot - (double)ticks / (double)sysconf(_SC_CLK_TCK);
            if (age >= 0 && age < 3600)
                origin = now - age;
        }
    }
    if (f)
        fclose(f);
    return origin;
}

void orr_trace(const char *what)
{
    if (trace.on < 0) {
        const char *v = getenv("ORRERY_TRACE");
        trace.on = v && strcmp(v, "1") == 0;
        if (trace.on)
            trace.origin = process_start_s();
    }
    if (!trace.on || trace.count >= TRACE_MAX)
        return;
    trace.what[trace.count] = what;
    trace.ms[trace.count++] = 1e3 * (orr_now_s() - trace.origin);
}

int orr_trace_count(void)
{
    return trace.on > 0 ? trace.count : 0;
}

const char *orr_trace_mark(int k, double *ms)
{
    if (k < 0 || k >= orr_trace_count())
        return NULL;
    *ms = trace.ms[k];
    return trace.what[k];
}

long orr_sample_index(long k, long n, long ni)
{
    return (long)((double)k * (double)n / (double)ni);
}

double orr_median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

const char *orr_note_flat(const char *note, char *buf, size_t size)
{
    size_t k = 0;
    for (const char *c = note; size && *c && k + 1 < size; c++) {
        if (*c != '\n') {
            buf[k++] = *c;
        } else if (k + 2 < size) {
            buf[k++] = ';';
            buf[k++] = ' ';
        } else {
            break;
        }
    }
    if (size)
        buf[k] = '\0';
    return buf;
}

void orr_note_add(char *note, size_t size, const char *fmt, ...)
{
    size_t len = strlen(note);
    if (len + 2 >= size)
        return;
    if (len) {
        memcpy(note + len, "\n", 2);
        len += 1;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(note + len, size - len, fmt, ap);
    va_end(ap);
    if ((n < 0 || (size_t)n >= size - len) && size - len > 4)
        memcpy(note + size - 4, "...", 4);   /* cut, and says so */
}

int orr_line_is_new(orr_seen_lines *seen, const char *line, size_t len)
{
    if (len == 0)
        return 0;
    unsigned long long h = 1469598103934665603ull;
    for (size_t k = 0; k < len; k++)
        h = (h ^ (unsigned char)line[k]) * 1099511628211ull;
    for (int k = 0; k < seen->n; k++)
        if (seen->hash[k] == h)
            return 0;
    if (seen->n < (int)(sizeof seen->hash / sizeof seen->hash[0]))
        seen->hash[seen->n++] = h;
    return 1;
}
