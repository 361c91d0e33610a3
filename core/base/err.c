/* err: filling and clearing the error object (see err.h). */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ends msg with ORR_ERR_CUT when the text it was given (n bytes) did not
 * fit. */
static void mark_cut(char *msg, size_t size, int n)
{
    const size_t cut = sizeof ORR_ERR_CUT;
    if (n >= 0 && (size_t)n < size)
        return;
    memcpy(msg + size - cut, ORR_ERR_CUT, cut);
}

orr_status orr_fail(orr_error *err, orr_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        mark_cut(err->msg, sizeof err->msg, n);
        err->code = code;
        err->shared = 0;
    }
    return code;
}

void orr_error_set_log(orr_error *err, const char *log)
{
    if (!err)
        return;
    free(err->log);
    err->log = log ? strdup(log) : NULL;
}

void orr_error_context(orr_error *err, const char *fmt, ...)
{
    if (!err)
        return;
    char old[sizeof err->msg];
    memcpy(old, err->msg, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof err->msg)
        n += snprintf(err->msg + n, sizeof err->msg - (size_t)n, ": %s", old);
    mark_cut(err->msg, sizeof err->msg, n);
}

void orr_error_clear(orr_error *err)
{
    if (!err)
        return;
    free(err->log);
    err->log = NULL;
    err->msg[0] = '\0';
    err->code = ORR_OK;
    err->shared = 0;
}

const char *orr_status_name(orr_status s)
{
    switch (s) {
    case ORR_OK: return "ok";
    case ORR_ERR_ARG: return "invalid argument";
    case ORR_ERR_NOMEM: return "out of memory";
    case ORR_ERR_IO: return "I/O error";
    case ORR_ERR_NODRIVER: return "no CUDA driver";
    case ORR_ERR_NODEVICE: return "no GPU";
    case ORR_ERR_CUDA: return "CUDA error";
    case ORR_ERR_DEVMEM: return "device out of memory";
    case ORR_ERR_NONVRTC: return "NVRTC missing";
    case ORR_ERR_COMPILE: return "compile error";
    case ORR_ERR_CACHE: return "kernel cache error";
    case ORR_ERR_LOAD: return "load error";
    case ORR_ERR_INTERRUPTED: return "interrupted";
    case ORR_ERR_COMM: return "communication error";
    }
    return "unknown error";
}

orr_status orr_read_failed(const char *path, orr_error *err, const char *fmt, ...)
{
    char what[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return orr_fail(err, ORR_ERR_IO, "cannot read '%s': %s", path, what);
}
