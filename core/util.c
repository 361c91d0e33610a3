/* util: byte buffers, file reads, exact literals (see util.h). */
#include "util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

double orr_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

long orr_sample_index(long k, long n, long ni)
{
    return (long)((double)k * (double)n / (double)ni);
}
