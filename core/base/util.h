/* util: small shared helpers: growable byte buffers, whole-file reads,
 * a formatted-append string builder, and start-up trace marks. */
#ifndef ORR_UTIL_H
#define ORR_UTIL_H

#include <stddef.h>
#include "err.h"

typedef struct {
    char *data;   /* heap, NUL-terminated when used as text */
    size_t len;   /* bytes in use, not counting the NUL */
    size_t cap;   /* bytes allocated */
} orr_buf;

/* Appends len bytes; returns 0 on success, -1 when out of memory. */
int orr_buf_put(orr_buf *b, const void *p, size_t len);
/* Appends printf-style text; returns 0 or -1. */
int orr_buf_printf(orr_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Frees the buffer and zeroes it. */
void orr_buf_free(orr_buf *b);
/* printf-style text in a new heap string (the caller frees it), or NULL
 * when out of memory: for text of any length (paths), never cut. */
char *orr_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Reads a whole file into *out (heap, NUL-terminated, *len bytes). */
orr_status orr_read_file(const char *path, char **out, size_t *len, orr_error *err);

/* Seconds on the monotonic clock (CLOCK_MONOTONIC): for intervals. */
double orr_now_s(void);

/* Start-up tracing, for finding where a start's time goes: with the
 * environment variable ORRERY_TRACE=1, orr_trace records what (a static
 * string) and the time since the process started (from /proc/self/stat's
 * start time; else since the first mark); otherwise it does nothing.  At
 * most 256 marks are kept; the CLI prints them at exit. */
void orr_trace(const char *what);
int orr_trace_count(void);
/* Mark k: its label, and its time in milliseconds. */
const char *orr_trace_mark(int k, double *ms);

/* The k-th of ni sample indices spread evenly over n bodies (k < ni <= n):
 * floor(k n / ni).  Verification, benchmarks and the tuner sample alike. */
long orr_sample_index(long k, long n, long ni);

/* The median of v[0..n) (sorted in place; a few values: insertion sort). */
double orr_median(double *v, int n);

/* Appends printf-style text to a note buffer of size bytes, one entry per
 * line ("\n" between entries, none at the end), so a caller can show each
 * statement on a line of its own, or once where several notes repeat it
 * (orr_note_flat joins them for one line); text that does not fit is cut,
 * ending in "...". */
void orr_note_add(char *note, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* note's entries on one line, "; " between them, into buf (size bytes, cut
 * to fit); returns buf. */
const char *orr_note_flat(const char *note, char *buf, size_t size);

/* Formats a double as an exact C hex-float literal ("0x1.99999999999ap-4"). */
void orr_hexfloat(char *buf, size_t size, double v);
/* v in the fewest significant digits (15 to 17) that read back as v
 * ("0.03", not "0.029999999999999999"), for messages; returns buf. */
const char *orr_shortest(char *buf, size_t size, double v);

/* The lines of notes shown so far (each note line said once per process):
 * 64-bit FNV-1a hashes of their text; a full set calls every later line
 * new, so none is ever dropped wrongly. */
typedef struct {
    unsigned long long hash[256];
    int n;
} orr_seen_lines;
/* 1 when the line (len bytes) is new to seen (and now remembered), 0 when
 * it was seen before or is empty. */
int orr_line_is_new(orr_seen_lines *seen, const char *line, size_t len);

#endif
