/* rtc: NVRTC opened with dlopen at run time (libnvrtc.so.13, falling back to
 * libnvrtc.so): CUDA C++ source + options -> PTX or CUBIN for a named
 * architecture, with template instantiation by name expression
 * (nvrtcAddNameExpression / nvrtcGetLoweredName).  Needs no GPU. */
#ifndef ORR_RTC_H
#define ORR_RTC_H

#include <stddef.h>
#include "err.h"

typedef enum { ORR_EMIT_PTX, ORR_EMIT_CUBIN } orr_emit;

typedef struct {
    void *image;          /* PTX text (NUL-terminated) or CUBIN bytes; heap */
    size_t size;          /* bytes (PTX: including the NUL) */
    char **lowered;       /* lowered (mangled) name for each name expression; heap */
    int nlowered;
    char *log;            /* compiler log, possibly empty; heap */
    double seconds;       /* wall time spent in nvrtcCompileProgram */
} orr_rtc_result;

/* Opens NVRTC once; ORR_ERR_NONVRTC with the libraries tried when absent. */
orr_status orr_rtc_open(orr_error *err);
/* NVRTC version; opens the library if needed. */
orr_status orr_rtc_version(int *major, int *minor, orr_error *err);
/* The architectures NVRTC compiles for, as numbers (75 for sm_75), in its
 * order (ascending), at most max of them into archs; *count gets how many.
 * ORR_ERR_NONVRTC when NVRTC is missing or too old to list them (the
 * nvrtcGetSupportedArchs symbols are optional). */
orr_status orr_rtc_supported_archs(int *archs, int max, int *count, orr_error *err);

/* Compiles src (file name `name` is used in diagnostics) for arch
 * ("sm_90", "compute_90"; "-arch=" is added here) with extra options,
 * instantiating each of name_exprs (e.g. "orr_accel<float>").  On a compile
 * error returns ORR_ERR_COMPILE, msg holds the first error line of the log
 * and err->log the full log.  Destroys the NVRTC program on every path. */
orr_status orr_rtc_compile(const char *src, const char *name, const char *arch,
                           const char *const *opts, int nopts,
                           const char *const *name_exprs, int nexprs,
                           orr_emit emit, orr_rtc_result *out, orr_error *err);
void orr_rtc_result_free(orr_rtc_result *r);

#endif
