/* err: status codes and the error object every library call fills on failure.
 * The library never prints or exits; it records what went wrong (message and,
 * for compilers, the full log) and returns a status for the caller to report. */
#ifndef ORR_ERR_H
#define ORR_ERR_H

#include <stddef.h>

typedef enum {
    ORR_OK = 0,
    ORR_ERR_ARG,         /* invalid argument or configuration */
    ORR_ERR_NOMEM,       /* host allocation failed */
    ORR_ERR_IO,          /* file system error */
    ORR_ERR_NODRIVER,    /* libcuda.so.1 could not be opened */
    ORR_ERR_NODEVICE,    /* driver present but no usable GPU */
    ORR_ERR_CUDA,        /* a driver API call failed */
    ORR_ERR_DEVMEM,      /* device out of memory */
    ORR_ERR_NONVRTC,     /* NVRTC could not be opened */
    ORR_ERR_COMPILE,     /* kernel source did not compile (NVRTC or host cc) */
    ORR_ERR_CACHE,       /* kernel cache refused or failed */
    ORR_ERR_LOAD,        /* compiled code could not be loaded */
    ORR_ERR_INTERRUPTED, /* stopped on request (Ctrl-C) */
    ORR_ERR_COMM         /* MPI missing, or an MPI call between ranks failed */
} orr_status;

/* The longest message an error keeps, with its NUL: room for two paths of
 * PATH_MAX bytes (a law's origin and a compiler's line naming it).  A
 * longer one ends in ORR_ERR_CUT, never cut silently. */
#define ORR_ERR_MSG_MAX 9216
#define ORR_ERR_CUT " [... cut: the message is longer than orrery keeps]"
/* A note (a build's, a tuning's): an error's message and a few words. */
#define ORR_NOTE_MAX (ORR_ERR_MSG_MAX + 256)

typedef struct {
    orr_status code;   /* ORR_OK when nothing failed */
    char msg[ORR_ERR_MSG_MAX];   /* one-paragraph description, no trailing newline */
    char *log;         /* compiler log or other long detail (heap, may be NULL) */
    int shared;        /* over several ranks: every rank holds this same error (a
                          collective found it), so it is reported once, by rank 0,
                          and no rank needs ending (orr_fail clears it) */
} orr_error;

/* Records a failure in err (may be NULL) and returns code. printf-style.
 * The error is this rank's own (shared = 0). */
orr_status orr_fail(orr_error *err, orr_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Records "cannot read 'PATH': " and the printf-style rest (ORR_ERR_IO,
 * returned): how every reader of a file reports. */
orr_status orr_read_failed(const char *path, orr_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Attaches a copy of log (may be NULL) to err, replacing any earlier one. */
void orr_error_set_log(orr_error *err, const char *log);
/* Prefixes err->msg with "prefix: " (printf-style) to add context. */
void orr_error_context(orr_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Frees the log and resets err to ORR_OK. */
void orr_error_clear(orr_error *err);
/* A short name for a status, e.g. "compile error". */
const char *orr_status_name(orr_status s);

#endif
