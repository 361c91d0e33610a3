/* rtc: run-time compilation of CUDA C++ with NVRTC, opened with dlopen (never
 * linked) and reached through a table of dlsym'd function pointers (see
 * rtc.h).  Turns a source string into PTX or CUBIN for one architecture,
 * instantiating templates by name expression, and keeps the compiler log. */
#include "rtc.h"

#include <nvrtc.h>

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

typedef nvrtcResult (*pfn_nvrtcVersion)(int *, int *);
typedef const char *(*pfn_nvrtcGetErrorString)(nvrtcResult);
typedef nvrtcResult (*pfn_nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *, int,
                                              const char *const *, const char *const *);
typedef nvrtcResult (*pfn_nvrtcDestroyProgram)(nvrtcProgram *);
typedef nvrtcResult (*pfn_nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
typedef nvrtcResult (*pfn_nvrtcGetPTXSize)(nvrtcProgram, size_t *);
typedef nvrtcResult (*pfn_nvrtcGetPTX)(nvrtcProgram, char *);
typedef nvrtcResult (*pfn_nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
typedef nvrtcResult (*pfn_nvrtcGetCUBIN)(nvrtcProgram, char *);
typedef nvrtcResult (*pfn_nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
typedef nvrtcResult (*pfn_nvrtcGetProgramLog)(nvrtcProgram, char *);
typedef nvrtcResult (*pfn_nvrtcAddNameExpression)(nvrtcProgram, const char *const);
typedef nvrtcResult (*pfn_nvrtcGetLoweredName)(nvrtcProgram, const char *const, const char **);
typedef nvrtcResult (*pfn_nvrtcGetNumSupportedArchs)(int *);
typedef nvrtcResult (*pfn_nvrtcGetSupportedArchs)(int *);

static pfn_nvrtcVersion p_nvrtcVersion;
static pfn_nvrtcGetErrorString p_nvrtcGetErrorString;
static pfn_nvrtcCreateProgram p_nvrtcCreateProgram;
static pfn_nvrtcDestroyProgram p_nvrtcDestroyProgram;
static pfn_nvrtcCompileProgram p_nvrtcCompileProgram;
static pfn_nvrtcGetPTXSize p_nvrtcGetPTXSize;
static pfn_nvrtcGetPTX p_nvrtcGetPTX;
static pfn_nvrtcGetCUBINSize p_nvrtcGetCUBINSize;
static pfn_nvrtcGetCUBIN p_nvrtcGetCUBIN;
static pfn_nvrtcGetProgramLogSize p_nvrtcGetProgramLogSize;
static pfn_nvrtcGetProgramLog p_nvrtcGetProgramLog;
static pfn_nvrtcAddNameExpression p_nvrtcAddNameExpression;
static pfn_nvrtcGetLoweredName p_nvrtcGetLoweredName;
/* optional (NVRTC 11.2 and later): NULL when the library lacks them */
static pfn_nvrtcGetNumSupportedArchs p_nvrtcGetNumSupportedArchs;
static pfn_nvrtcGetSupportedArchs p_nvrtcGetSupportedArchs;

typedef struct {
    void **slot;
    const char *sym;
} nv_sym;

static const nv_sym nv_syms[] = {
    {(void **)&p_nvrtcVersion, "nvrtcVersion"},
    {(void **)&p_nvrtcGetErrorString, "nvrtcGetErrorString"},
    {(void **)&p_nvrtcCreateProgram, "nvrtcCreateProgram"},
    {(void **)&p_nvrtcDestroyProgram, "nvrtcDestroyProgram"},
    {(void **)&p_nvrtcCompileProgram, "nvrtcCompileProgram"},
    {(void **)&p_nvrtcGetPTXSize, "nvrtcGetPTXSize"},
    {(void **)&p_nvrtcGetPTX, "nvrtcGetPTX"},
    {(void **)&p_nvrtcGetCUBINSize, "nvrtcGetCUBINSize"},
    {(void **)&p_nvrtcGetCUBIN, "nvrtcGetCUBIN"},
    {(void **)&p_nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize"},
    {(void **)&p_nvrtcGetProgramLog, "nvrtcGetProgramLog"},
    {(void **)&p_nvrtcAddNameExpression, "nvrtcAddNameExpression"},
    {(void **)&p_nvrtcGetLoweredName, "nvrtcGetLoweredName"},
};

static const nv_sym nv_optional_syms[] = {
    {(void **)&p_nvrtcGetNumSupportedArchs, "nvrtcGetNumSupportedArchs"},
    {(void **)&p_nvrtcGetSupportedArchs, "nvrtcGetSupportedArchs"},
};

/* The first result of orr_rtc_open, handed to every later caller. */
static pthread_once_t nv_once = PTHREAD_ONCE_INIT;
static void *nv_lib;
static orr_status nv_status;
static char nv_msg[sizeof ((orr_error *)0)->msg];

/* Records "call: NVRTC_ERROR_NAME" with a status fitting the failure. */
static orr_status nv_fail(orr_error *err, nvrtcResult r, const char *call)
{
    orr_status code;
    switch (r) {
    case NVRTC_ERROR_OUT_OF_MEMORY:
        code = ORR_ERR_NOMEM;
        break;
    case NVRTC_ERROR_INVALID_INPUT:
    case NVRTC_ERROR_INVALID_OPTION:
    case NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID:
        code = ORR_ERR_ARG;
        break;
    default:
        code = ORR_ERR_COMPILE;
        break;
    }
    const char *name = p_nvrtcGetErrorString ? p_nvrtcGetErrorString(r) : NULL;
    if (name)
        return orr_fail(err, code, "%s: %s", call, name);
    return orr_fail(err, code, "%s: NVRTC error %d", call, (int)r);
}

/* One NVRTC call, written NV_CHECK(nvrtcXxx, (args)): on failure records
 * "nvrtcXxx: NVRTC_ERROR_NAME", sets st and jumps to the `done` label. */
#define NV_CHECK(fn, args)                                                    \
    do {                                                                      \
        nvrtcResult nv_r_ = p_##fn args;                                      \
        if (nv_r_ != NVRTC_SUCCESS) {                                         \
            st = nv_fail(err, nv_r_, #fn);                                    \
            goto done;                                                        \
        }                                                                     \
    } while (0)

static void nv_open_once(void)
{
    /* $CUDA_PATH's library by its full name, however long (heap) */
    const char *cuda_path = getenv("CUDA_PATH");
    char *in_cuda_path = cuda_path && *cuda_path
                             ? orr_asprintf("%s/lib64/libnvrtc.so.13", cuda_path) : NULL;
    const char *paths[4];
    int n = 0;
    paths[n++] = "libnvrtc.so.13";
    paths[n++] = "libnvrtc.so";
    if (in_cuda_path)
        paths[n++] = in_cuda_path;
    paths[n++] = "/usr/local/cuda/lib64/libnvrtc.so.13";

    char first_why[512] = "";
    int used = -1;
    orr_trace("dlopen NVRTC");
    for (int i = 0; i < n && !nv_lib; i++) {
        dlerror();
        nv_lib = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (nv_lib) {
            used = i;
        } else if (!first_why[0]) {
            const char *why = dlerror();
            snprintf(first_why, sizeof first_why, "%s", why ? why : "unknown dlopen error");
        }
    }
    if (!nv_lib) {
        orr_buf tried = {0};
        int bad = 0;
        for (int i = 0; i < n && !bad; i++)
            bad = orr_buf_printf(&tried, "%s%s", i ? ", " : "", paths[i]);
        orr_error e = {0};
        nv_status = orr_fail(&e, ORR_ERR_NONVRTC,
                             "cannot load NVRTC (tried %s): %s; install the CUDA toolkit's NVRTC "
                             "or set CUDA_PATH",
                             bad ? "(out of memory)" : tried.data, first_why);
        snprintf(nv_msg, sizeof nv_msg, "%s", e.msg);
        orr_buf_free(&tried);
        free(in_cuda_path);
        return;
    }
    for (size_t i = 0; i < sizeof nv_syms / sizeof nv_syms[0]; i++) {
        void *f = dlsym(nv_lib, nv_syms[i].sym);
        if (!f) {
            orr_error e = {0};
            nv_status = orr_fail(&e, ORR_ERR_NONVRTC, "NVRTC library %s lacks %s: too old",
                                 paths[used], nv_syms[i].sym);
            snprintf(nv_msg, sizeof nv_msg, "%s", e.msg);
            for (size_t j = 0; j < i; j++)
                *nv_syms[j].slot = NULL;
            dlclose(nv_lib);
            nv_lib = NULL;
            free(in_cuda_path);
            return;
        }
        *nv_syms[i].slot = f;
    }
    for (size_t i = 0; i < sizeof nv_optional_syms / sizeof nv_optional_syms[0]; i++)
        *nv_optional_syms[i].slot = dlsym(nv_lib, nv_optional_syms[i].sym);
    nv_status = ORR_OK;
    free(in_cuda_path);
}

orr_status orr_rtc_open(orr_error *err)
{
    pthread_once(&nv_once, nv_open_once);
    if (nv_status != ORR_OK)
        return orr_fail(err, nv_status, "%s", nv_msg);
    return ORR_OK;
}

orr_status orr_rtc_version(int *major, int *minor, orr_error *err)
{
    orr_status st = orr_rtc_open(err);
    *major = *minor = 0;
    if (st != ORR_OK)
        return st;
    NV_CHECK(nvrtcVersion, (major, minor));
done:
    return st;
}

orr_status orr_rtc_supported_archs(int *archs, int max, int *count, orr_error *err)
{
    int n = 0;
    *count = 0;
    orr_status st = orr_rtc_open(err);
    if (st != ORR_OK)
        return st;
    if (!p_nvrtcGetNumSupportedArchs || !p_nvrtcGetSupportedArchs)
        return orr_fail(err, ORR_ERR_NONVRTC,
                        "this NVRTC cannot list its architectures (nvrtcGetSupportedArchs is "
                        "missing)");
    int *all = NULL;
    NV_CHECK(nvrtcGetNumSupportedArchs, (&n));
    all = malloc(sizeof *all * (size_t)(n > 0 ? n : 1));
    if (!all) {
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        goto done;
    }
    NV_CHECK(nvrtcGetSupportedArchs, (all));
    for (int i = 0; i < n && i < max; i++)
        archs[i] = all[i];
    *count = n < max ? n : max;
done:
    free(all);
    return st;
}

/* The first line of log containing "error" (else the first non-empty line);
 * sets *len to its length without the line ending.  NULL when empty. */
static const char *first_error_line(const char *log, int *len)
{
    const char *fallback = NULL;
    int fallback_len = 0;
    for (const char *p = log; p && *p;) {
        const char *end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == ' '))
            n--;
        if (n > 0) {
            /* the whole line, however long (a law's origin is a path) */
            const int m = n > INT_MAX ? INT_MAX : (int)n;
            if (memmem(p, n, "error", 5)) {
                *len = m;
                return p;
            }
            if (!fallback) {
                fallback = p;
                fallback_len = (int)m;
            }
        }
        p = end ? end + 1 : NULL;
    }
    *len = fallback_len;
    return fallback;
}

orr_status orr_rtc_compile(const char *src, const char *name, const char *arch,
                           const char *const *opts, int nopts,
                           const char *const *name_exprs, int nexprs,
                           orr_emit emit, orr_rtc_result *out, orr_error *err)
{
    orr_status st = ORR_OK;
    nvrtcProgram prog = NULL;
    const char **argv = NULL;
    char *archopt = NULL;

    if (!out)
        return orr_fail(err, ORR_ERR_ARG, "orr_rtc_compile: no result object");
    memset(out, 0, sizeof *out);
    if (!src || !name || !arch || !*arch || nopts < 0 || nexprs < 0 || (nopts > 0 && !opts) ||
        (nexprs > 0 && !name_exprs))
        return orr_fail(err, ORR_ERR_ARG, "orr_rtc_compile: invalid arguments");
    if (emit == ORR_EMIT_CUBIN && strncmp(arch, "compute_", 8) == 0)
        return orr_fail(err, ORR_ERR_ARG,
                        "cannot emit CUBIN for the virtual architecture %s: use a real one "
                        "such as sm_%s",
                        arch, arch + 8);
    st = orr_rtc_open(err);
    if (st != ORR_OK)
        return st;

    if (asprintf(&archopt, "-arch=%s", arch) < 0) {
        archopt = NULL;
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        goto done;
    }
    argv = malloc(sizeof *argv * (size_t)(nopts + 1));
    if (!argv) {
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        goto done;
    }
    argv[0] = archopt;
    for (int i = 0; i < nopts; i++)
        argv[i + 1] = opts[i];

    NV_CHECK(nvrtcCreateProgram, (&prog, src, name, 0, NULL, NULL));
    for (int i = 0; i < nexprs; i++)
        NV_CHECK(nvrtcAddNameExpression, (prog, name_exprs[i]));

    double t0 = orr_now_s();
    nvrtcResult cr = p_nvrtcCompileProgram(prog, nopts + 1, argv);
    out->seconds = orr_now_s() - t0;

    /* The log first, whatever the result: it holds warnings on success. */
    size_t log_size = 0;
    NV_CHECK(nvrtcGetProgramLogSize, (prog, &log_size));
    out->log = malloc(log_size + 1);
    if (!out->log) {
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory for a %zu-byte compiler log", log_size);
        goto done;
    }
    out->log[0] = '\0';
    if (log_size > 0)
        NV_CHECK(nvrtcGetProgramLog, (prog, out->log));
    out->log[log_size] = '\0';

    if (cr == NVRTC_ERROR_COMPILATION) {
        int len = 0;
        const char *line = first_error_line(out->log, &len);
        if (line)
            st = orr_fail(err, ORR_ERR_COMPILE, "NVRTC failed to compile %s: %.*s", name, len, line);
        else
            st = orr_fail(err, ORR_ERR_COMPILE, "NVRTC failed to compile %s (empty log)", name);
        orr_error_set_log(err, out->log);
        goto done;
    }
    if (cr != NVRTC_SUCCESS) {
        orr_buf all = {0};
        for (int i = 0; i < nopts + 1; i++)
            orr_buf_printf(&all, "%s%s", i ? " " : "", argv[i]);
        st = nv_fail(err, cr, "nvrtcCompileProgram");
        orr_error_context(err, "compiling %s with options %s", name, all.data ? all.data : "");
        orr_buf_free(&all);
        if (out->log[0])
            orr_error_set_log(err, out->log);
        goto done;
    }

    if (emit == ORR_EMIT_PTX) {
        NV_CHECK(nvrtcGetPTXSize, (prog, &out->size));
        out->image = malloc(out->size + 1);
        if (!out->image) {
            st = orr_fail(err, ORR_ERR_NOMEM, "out of memory for %zu bytes of PTX", out->size);
            goto done;
        }
        NV_CHECK(nvrtcGetPTX, (prog, out->image));
        ((char *)out->image)[out->size] = '\0';
        if (out->size == 0 || ((char *)out->image)[out->size - 1] != '\0')
            out->size++;   /* keep the promise: size counts the NUL */
    } else {
        NV_CHECK(nvrtcGetCUBINSize, (prog, &out->size));
        if (out->size == 0) {
            st = orr_fail(err, ORR_ERR_COMPILE, "NVRTC produced no CUBIN for %s (arch %s)", name,
                          arch);
            goto done;
        }
        out->image = malloc(out->size);
        if (!out->image) {
            st = orr_fail(err, ORR_ERR_NOMEM, "out of memory for %zu bytes of CUBIN", out->size);
            goto done;
        }
        NV_CHECK(nvrtcGetCUBIN, (prog, out->image));
    }

    if (nexprs > 0) {
        out->lowered = calloc((size_t)nexprs, sizeof *out->lowered);
        if (!out->lowered) {
            st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
            goto done;
        }
    }
    for (int i = 0; i < nexprs; i++) {
        const char *lowered = NULL;   /* owned by the program */
        NV_CHECK(nvrtcGetLoweredName, (prog, name_exprs[i], &lowered));
        out->lowered[i] = strdup(lowered ? lowered : "");
        if (!out->lowered[i]) {
            st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
            goto done;
        }
        out->nlowered = i + 1;
    }

done:
    if (prog)
        p_nvrtcDestroyProgram(&prog);
    free(argv);
    free(archopt);
    /* On failure nothing is left in out; the log travels in err->log. */
    if (st != ORR_OK)
        orr_rtc_result_free(out);
    return st;
}

void orr_rtc_result_free(orr_rtc_result *r)
{
    if (!r)
        return;
    free(r->image);
    for (int i = 0; i < r->nlowered; i++)
        free(r->lowered[i]);
    free(r->lowered);
    free(r->log);
    memset(r, 0, sizeof *r);
}
