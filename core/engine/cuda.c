/* cuda: the CUDA driver API reached through dlopen("libcuda.so.1") and a
 * table of dlsym'd function pointers (see cuda.h).  libcuda is never linked,
 * so the program starts, and explains itself, on machines without a driver.
 * Every failing driver call records "cuXxx: CUDA_ERROR_NAME (description)". */
#include "cuda.h"
#include "util.h"

/* The toolkit's header, for the types only (the build names the project's
 * headers with -iquote, so <cuda.h> is never core/engine/cuda.h). */
#include <cuda.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* Pointer types, declared by hand: cuda.h renames several entry points to
 * versioned symbols with #define, so the names below are always prefixed. */
typedef CUresult (*pfn_cuInit)(unsigned);
typedef CUresult (*pfn_cuDriverGetVersion)(int *);
typedef CUresult (*pfn_cuGetErrorName)(CUresult, const char **);
typedef CUresult (*pfn_cuGetErrorString)(CUresult, const char **);
typedef CUresult (*pfn_cuDeviceGet)(CUdevice *, int);
typedef CUresult (*pfn_cuDeviceGetCount)(int *);
typedef CUresult (*pfn_cuDeviceGetName)(char *, int, CUdevice);
typedef CUresult (*pfn_cuDeviceGetUuid)(CUuuid *, CUdevice);
typedef CUresult (*pfn_cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*pfn_cuDeviceTotalMem)(size_t *, CUdevice);
typedef CUresult (*pfn_cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
typedef CUresult (*pfn_cuDevicePrimaryCtxRelease)(CUdevice);
typedef CUresult (*pfn_cuCtxSetCurrent)(CUcontext);
typedef CUresult (*pfn_cuCtxSynchronize)(void);
typedef CUresult (*pfn_cuMemAlloc)(CUdeviceptr *, size_t);
typedef CUresult (*pfn_cuMemFree)(CUdeviceptr);
typedef CUresult (*pfn_cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
typedef CUresult (*pfn_cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
typedef CUresult (*pfn_cuMemsetD32)(CUdeviceptr, unsigned, size_t);
typedef CUresult (*pfn_cuModuleLoadData)(CUmodule *, const void *);
typedef CUresult (*pfn_cuModuleUnload)(CUmodule);
typedef CUresult (*pfn_cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
typedef CUresult (*pfn_cuFuncGetAttribute)(int *, CUfunction_attribute, CUfunction);
typedef CUresult (*pfn_cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
typedef CUresult (*pfn_cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                       unsigned, unsigned, unsigned, CUstream, void **, void **);
typedef CUresult (*pfn_cuLaunchCooperativeKernel)(CUfunction, unsigned, unsigned, unsigned,
                                                  unsigned, unsigned, unsigned, unsigned,
                                                  CUstream, void **);
typedef CUresult (*pfn_cuEventCreate)(CUevent *, unsigned);
typedef CUresult (*pfn_cuEventDestroy)(CUevent);
typedef CUresult (*pfn_cuEventRecord)(CUevent, CUstream);
typedef CUresult (*pfn_cuEventSynchronize)(CUevent);
typedef CUresult (*pfn_cuEventElapsedTime)(float *, CUevent, CUevent);
typedef CUresult (*pfn_cuMemHostAlloc)(void **, size_t, unsigned);
typedef CUresult (*pfn_cuMemFreeHost)(void *);
typedef CUresult (*pfn_cuStreamCreate)(CUstream *, unsigned);
typedef CUresult (*pfn_cuStreamDestroy)(CUstream);
typedef CUresult (*pfn_cuStreamSynchronize)(CUstream);
typedef CUresult (*pfn_cuStreamWaitEvent)(CUstream, CUevent, unsigned);
typedef CUresult (*pfn_cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
typedef CUresult (*pfn_cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
typedef CUresult (*pfn_cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);

static pfn_cuInit p_cuInit;
static pfn_cuDriverGetVersion p_cuDriverGetVersion;
static pfn_cuGetErrorName p_cuGetErrorName;
static pfn_cuGetErrorString p_cuGetErrorString;
static pfn_cuDeviceGet p_cuDeviceGet;
static pfn_cuDeviceGetCount p_cuDeviceGetCount;
static pfn_cuDeviceGetName p_cuDeviceGetName;
static pfn_cuDeviceGetUuid p_cuDeviceGetUuid;
static pfn_cuDeviceGetAttribute p_cuDeviceGetAttribute;
static pfn_cuDeviceTotalMem p_cuDeviceTotalMem;
static pfn_cuDevicePrimaryCtxRetain p_cuDevicePrimaryCtxRetain;
static pfn_cuDevicePrimaryCtxRelease p_cuDevicePrimaryCtxRelease;
static pfn_cuCtxSetCurrent p_cuCtxSetCurrent;
static pfn_cuCtxSynchronize p_cuCtxSynchronize;
static pfn_cuMemAlloc p_cuMemAlloc;
static pfn_cuMemFree p_cuMemFree;
static pfn_cuMemcpyHtoD p_cuMemcpyHtoD;
static pfn_cuMemcpyDtoH p_cuMemcpyDtoH;
static pfn_cuMemsetD32 p_cuMemsetD32;
static pfn_cuModuleLoadData p_cuModuleLoadData;
static pfn_cuModuleUnload p_cuModuleUnload;
static pfn_cuModuleGetFunction p_cuModuleGetFunction;
static pfn_cuFuncGetAttribute p_cuFuncGetAttribute;
static pfn_cuOccupancyMaxActiveBlocksPerMultiprocessor p_cuOccupancyMaxActiveBlocksPerMultiprocessor;
static pfn_cuLaunchKernel p_cuLaunchKernel;
static pfn_cuLaunchCooperativeKernel p_cuLaunchCooperativeKernel;
static pfn_cuEventCreate p_cuEventCreate;
static pfn_cuEventDestroy p_cuEventDestroy;
static pfn_cuEventRecord p_cuEventRecord;
static pfn_cuEventSynchronize p_cuEventSynchronize;
static pfn_cuEventElapsedTime p_cuEventElapsedTime;
static pfn_cuMemHostAlloc p_cuMemHostAlloc;
static pfn_cuMemFreeHost p_cuMemFreeHost;
static pfn_cuStreamCreate p_cuStreamCreate;
static pfn_cuStreamDestroy p_cuStreamDestroy;
static pfn_cuStreamSynchronize p_cuStreamSynchronize;
static pfn_cuStreamWaitEvent p_cuStreamWaitEvent;
static pfn_cuMemcpyHtoDAsync p_cuMemcpyHtoDAsync;
static pfn_cuMemcpyDtoHAsync p_cuMemcpyDtoHAsync;
static pfn_cuMemcpyDtoDAsync p_cuMemcpyDtoDAsync;

/* The symbol each pointer is loaded from: the name libcuda really exports. */
typedef struct {
    void **slot;
    const char *sym;
    const char *alt;   /* fallback symbol for older drivers, or NULL */
} cu_sym;

static const cu_sym cu_syms[] = {
    {(void **)&p_cuInit, "cuInit", NULL},
    {(void **)&p_cuDriverGetVersion, "cuDriverGetVersion", NULL},
    {(void **)&p_cuGetErrorName, "cuGetErrorName", NULL},
    {(void **)&p_cuGetErrorString, "cuGetErrorString", NULL},
    {(void **)&p_cuDeviceGet, "cuDeviceGet", NULL},
    {(void **)&p_cuDeviceGetCount, "cuDeviceGetCount", NULL},
    {(void **)&p_cuDeviceGetName, "cuDeviceGetName", NULL},
    {(void **)&p_cuDeviceGetUuid, "cuDeviceGetUuid_v2", "cuDeviceGetUuid"},
    {(void **)&p_cuDeviceGetAttribute, "cuDeviceGetAttribute", NULL},
    {(void **)&p_cuDeviceTotalMem, "cuDeviceTotalMem_v2", NULL},
    {(void **)&p_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", NULL},
    {(void **)&p_cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2", NULL},
    {(void **)&p_cuCtxSetCurrent, "cuCtxSetCurrent", NULL},
    {(void **)&p_cuCtxSynchronize, "cuCtxSynchronize", NULL},
    {(void **)&p_cuMemAlloc, "cuMemAlloc_v2", NULL},
    {(void **)&p_cuMemFree, "cuMemFree_v2", NULL},
    {(void **)&p_cuMemcpyHtoD, "cuMemcpyHtoD_v2", NULL},
    {(void **)&p_cuMemcpyDtoH, "cuMemcpyDtoH_v2", NULL},
    {(void **)&p_cuMemsetD32, "cuMemsetD32_v2", NULL},
    {(void **)&p_cuModuleLoadData, "cuModuleLoadData", NULL},
    {(void **)&p_cuModuleUnload, "cuModuleUnload", NULL},
    {(void **)&p_cuModuleGetFunction, "cuModuleGetFunction", NULL},
    {(void **)&p_cuFuncGetAttribute, "cuFuncGetAttribute", NULL},
    {(void **)&p_cuOccupancyMaxActiveBlocksPerMultiprocessor,
     "cuOccupancyMaxActiveBlocksPerMultiprocessor", NULL},
    {(void **)&p_cuLaunchKernel, "cuLaunchKernel", NULL},
    {(void **)&p_cuLaunchCooperativeKernel, "cuLaunchCooperativeKernel", NULL},
    {(void **)&p_cuEventCreate, "cuEventCreate", NULL},
    {(void **)&p_cuEventDestroy, "cuEventDestroy_v2", NULL},
    {(void **)&p_cuEventRecord, "cuEventRecord", NULL},
    {(void **)&p_cuEventSynchronize, "cuEventSynchronize", NULL},
    {(void **)&p_cuEventElapsedTime, "cuEventElapsedTime_v2", "cuEventElapsedTime"},
    {(void **)&p_cuMemHostAlloc, "cuMemHostAlloc", NULL},
    {(void **)&p_cuMemFreeHost, "cuMemFreeHost", NULL},
    {(void **)&p_cuStreamCreate, "cuStreamCreate", NULL},
    {(void **)&p_cuStreamDestroy, "cuStreamDestroy_v2", NULL},
    {(void **)&p_cuStreamSynchronize, "cuStreamSynchronize", NULL},
    {(void **)&p_cuStreamWaitEvent, "cuStreamWaitEvent", NULL},
    {(void **)&p_cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2", NULL},
    {(void **)&p_cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2", NULL},
    {(void **)&p_cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2", NULL},
};

/* The first result of orr_cuda_open, handed to every later caller. */
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;
static void *cu_lib;                 /* dlopen handle, NULL when absent */
static int cu_ready;                 /* symbols resolved (cuDriverGetVersion usable) */
static orr_status cu_status;
static char cu_msg[sizeof ((orr_error *)0)->msg];

/* Records "call: CUDA_ERROR_NAME (description)" and returns ORR_ERR_CUDA. */
static orr_status cu_fail(orr_error *err, CUresult r, const char *call)
{
    const char *name = NULL, *desc = NULL;
    if (p_cuGetErrorName && p_cuGetErrorName(r, &name) != CUDA_SUCCESS)
        name = NULL;
    if (p_cuGetErrorString && p_cuGetErrorString(r, &desc) != CUDA_SUCCESS)
        desc = NULL;
    if (name)
        return orr_fail(err, ORR_ERR_CUDA, "%s: %s (%s)", call, name,
                        desc ? desc : "no description");
    return orr_fail(err, ORR_ERR_CUDA, "%s: CUDA error %d (%s)", call, (int)r,
                    desc ? desc : "unknown error");
}

/* One driver call, written CU_CHECK(cuXxx, (args)): on failure records
 * "cuXxx: CUDA_ERROR_NAME (description)" (the API's name, without the p_ of
 * the pointer), sets st and jumps to the function's `done` label. */
#define CU_CHECK(fn, args)                                                    \
    do {                                                                      \
        CUresult cu_r_ = p_##fn args;                                         \
        if (cu_r_ != CUDA_SUCCESS) {                                          \
            st = cu_fail(err, cu_r_, #fn);                                    \
            goto done;                                                        \
        }                                                                     \
    } while (0)

/* Opens the driver before a call; returns the remembered status on failure. */
#define CU_ENSURE()                                                           \
    do {                                                                      \
        orr_status cu_e_ = orr_cuda_open(err);                                \
        if (cu_e_ != ORR_OK)                                                  \
            return cu_e_;                                                     \
    } while (0)

static void cu_open_once(void)
{
    orr_error e = {0};
    orr_error *err = &e;
    orr_status st = ORR_OK;

    dlerror();
    orr_trace("dlopen libcuda.so.1");
    cu_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    orr_trace("dlopen libcuda.so.1 done");
    if (!cu_lib) {
        const char *why = dlerror();
        if (why && strncmp(why, "libcuda.so.1: ", 14) == 0)
            why += 14;   /* dlerror repeats the name */
        st = orr_fail(err, ORR_ERR_NODRIVER,
                      "cannot load the CUDA driver (libcuda.so.1: %s): no NVIDIA driver installed",
                      why ? why : "unknown dlopen error");
        goto done;
    }
    for (size_t i = 0; i < sizeof cu_syms / sizeof cu_syms[0]; i++) {
        void *f = dlsym(cu_lib, cu_syms[i].sym);
        if (!f && cu_syms[i].alt)
            f = dlsym(cu_lib, cu_syms[i].alt);
        if (!f) {
            st = orr_fail(err, ORR_ERR_NODRIVER,
                          "the CUDA driver libcuda.so.1 lacks %s: driver too old", cu_syms[i].sym);
            for (size_t j = 0; j < i; j++)
                *cu_syms[j].slot = NULL;
            dlclose(cu_lib);
            cu_lib = NULL;
            goto done;
        }
        *cu_syms[i].slot = f;
    }
    cu_ready = 1;

    CUresult r = p_cuInit(0);
    orr_trace("cuInit done");
    if (r == CUDA_ERROR_NO_DEVICE)
        st = orr_fail(err, ORR_ERR_NODEVICE, "driver loaded but no CUDA device found");
    else if (r != CUDA_SUCCESS)
        st = cu_fail(err, r, "cuInit");

done:
    cu_status = st;
    if (st != ORR_OK)
        snprintf(cu_msg, sizeof cu_msg, "%s", e.msg);
}

orr_status orr_cuda_open(orr_error *err)
{
    pthread_once(&cu_once, cu_open_once);
    if (cu_status != ORR_OK)
        return orr_fail(err, cu_status, "%s", cu_msg);
    return ORR_OK;
}

int orr_cuda_driver_version(void)
{
    pthread_once(&cu_once, cu_open_once);
    int v = 0;
    if (!cu_ready || p_cuDriverGetVersion(&v) != CUDA_SUCCESS)
        return 0;
    return v;
}

orr_status orr_cuda_device_count(int *count, orr_error *err)
{
    orr_status st = ORR_OK;
    *count = 0;
    CU_ENSURE();
    CU_CHECK(cuDeviceGetCount, (count));
done:
    return st;
}

orr_status orr_cuda_device_info(int ordinal, orr_gpu_info *info, orr_error *err)
{
    orr_status st = ORR_OK;
    CUdevice dev;
    memset(info, 0, sizeof *info);
    info->ordinal = ordinal;
    CU_ENSURE();
    CU_CHECK(cuDeviceGet, (&dev, ordinal));
    CU_CHECK(cuDeviceGetName, (info->name, (int)sizeof info->name, dev));
    info->name[sizeof info->name - 1] = '\0';
    CUuuid id;
    CU_CHECK(cuDeviceGetUuid, (&id, dev));
    orr_cuda_uuid_format((const unsigned char *)id.bytes, info->uuid, sizeof info->uuid);
    CU_CHECK(cuDeviceGetAttribute, (&info->cc_major,
             CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
    CU_CHECK(cuDeviceGetAttribute, (&info->cc_minor,
             CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
    CU_CHECK(cuDeviceGetAttribute, (&info->sm_count,
             CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    CU_CHECK(cuDeviceGetAttribute, (&info->max_threads_per_block,
             CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, dev));
    CU_CHECK(cuDeviceGetAttribute, (&info->max_shared_per_block,
             CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, dev));
    CU_CHECK(cuDeviceGetAttribute, (&info->max_shared_per_block_optin,
             CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev));
    CU_CHECK(cuDeviceGetAttribute, (&info->max_regs_per_block,
             CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK, dev));
    CU_CHECK(cuDeviceGetAttribute, (&info->clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev));
    CU_CHECK(cuDeviceTotalMem, (&info->total_mem, dev));
done:
    if (st != ORR_OK)
        orr_error_context(err, "device %d", ordinal);
    return st;
}

void orr_cuda_uuid_format(const unsigned char bytes[16], char *buf, size_t size)
{
    char hex[33];
    for (int i = 0; i < 16; i++)
        snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
    snprintf(buf, size, "GPU-%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16,
             hex + 20);
}

void orr_cuda_arch_name(const orr_gpu_info *g, char *buf, size_t size)
{
    snprintf(buf, size, "sm_%d%d", g->cc_major, g->cc_minor);
}

/* Each device's primary context, once retained (ordinals below MAX_HELD). */
enum { MAX_HELD = 64 };
static CUcontext held[MAX_HELD];
static int retains;   /* primary contexts retained by this process */

int orr_cuda_ctx_retains(void)
{
    return retains;
}

orr_status orr_cuda_ctx_acquire(int ordinal, orr_error *err)
{
    orr_status st = ORR_OK;
    CUdevice dev;
    CUcontext ctx = ordinal >= 0 && ordinal < MAX_HELD ? held[ordinal] : NULL;
    int retained = 0;
    CU_ENSURE();
    if (!ctx) {
        CU_CHECK(cuDeviceGet, (&dev, ordinal));
        orr_trace("primary context");
        CU_CHECK(cuDevicePrimaryCtxRetain, (&ctx, dev));
        retained = 1;
        retains++;
        orr_trace("primary context done");
    }
    CU_CHECK(cuCtxSetCurrent, (ctx));
    if (retained && ordinal >= 0 && ordinal < MAX_HELD)
        held[ordinal] = ctx;
    retained = 0;
done:
    if (st != ORR_OK) {
        if (retained)
            p_cuDevicePrimaryCtxRelease(dev);
        orr_error_context(err, "device %d", ordinal);
    }
    return st;
}

orr_status orr_cuda_alloc(orr_devptr *p, size_t bytes, orr_error *err)
{
    orr_status st = ORR_OK;
    CUdeviceptr d = 0;
    *p = 0;
    CU_ENSURE();
    CUresult r = p_cuMemAlloc(&d, bytes);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        return orr_fail(err, ORR_ERR_DEVMEM, "device out of memory: asked for %zu bytes (%.1f MiB)",
                        bytes, (double)bytes / (1024.0 * 1024.0));
    if (r != CUDA_SUCCESS)
        return cu_fail(err, r, "cuMemAlloc");
    *p = (orr_devptr)d;
    return st;
}

void orr_cuda_free(orr_devptr p)
{
    if (p && orr_cuda_open(NULL) == ORR_OK)
        p_cuMemFree((CUdeviceptr)p);
}

orr_status orr_cuda_htod(orr_devptr dst, const void *src, size_t bytes, orr_error *err)
{
    orr_status st = ORR_OK;
    CU_ENSURE();
    CU_CHECK(cuMemcpyHtoD, ((CUdeviceptr)dst, src, bytes));
done:
    return st;
}

orr_status orr_cuda_dtoh(void *dst, orr_devptr src, size_t bytes, orr_error *err)
{
    orr_status st = ORR_OK;
    CU_ENSURE();
    CU_CHECK(cuMemcpyDtoH, (dst, (CUdeviceptr)src, bytes));
done:
    return st;
}

orr_status orr_cuda_memset32(orr_devptr dst, unsigned value, size_t count, orr_error *err)
{
    orr_status st = ORR_OK;
    CU_ENSURE();
    CU_CHECK(cuMemsetD32, ((CUdeviceptr)dst, value, count));
done:
    return st;
}

orr_status orr_cuda_sync(orr_error *err)
{
    orr_status st = ORR_OK;
    CU_ENSURE();
    CU_CHECK(cuCtxSynchronize, ());
done:
    return st;
}

orr_status orr_cuda_host_alloc(void **p, size_t bytes, orr_error *err)
{
    orr_status st = ORR_OK;
    *p = NULL;
    CU_ENSURE();
    CUresult r = p_cuMemHostAlloc(p, bytes, 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY)
        return orr_fail(err, ORR_ERR_NOMEM, "out of page-locked host memory: asked for %zu bytes",
                        bytes);
    if (r != CUDA_SUCCESS)
        return cu_fail(err, r, "cuMemHostAlloc");
    return st;
}

void orr_cuda_host_free(void *p)
{
    if (p && orr_cuda_open(NULL) == ORR_OK)
        p_cuMemFreeHost(p);
}

orr_status orr_cuda_stream_create(void **stream, orr_error *err)
{
    orr_status st = ORR_OK;
    CUstream s = NULL;
    *stream = NULL;
    CU_ENSURE();
    CU_CHECK(cuStreamCreate, (&s, CU_STREAM_DEFAULT));
    *stream = s;
done:
    return st;
}

void orr_cuda_stream_destroy(void *stream)
{
    if (stream && orr_cuda_open(NULL) == ORR_OK)
        p_cuStreamDestroy((CUstream)stream);
}

orr_status orr_cuda_stream_sync(void *stream, orr_error *err)
{
    orr_status st = ORR_OK;
    CU_ENSURE();
    CU_CHECK(cuStreamSynchronize, ((CUstream)stream));
done:
    return st;
}

orr_status orr_cuda_stream_wait(void *stream, void *ev, orr_error *err)
{
    orr_status st = ORR_OK;
    CU_ENSURE();
    CU_CHECK(cuStreamWaitEvent, ((CUstream)stream, (CUevent)ev, 0u));
done:
    return st;
}

orr_status orr_cuda_htod_async(orr_devptr dst, const void *src, size_t bytes, void *stream,
                               orr_error *err)
{
    orr_status st = ORR_OK;
    CU_ENSURE();
    CU_CHECK(cuMemcpyHtoDAsync, ((CUdeviceptr)dst, src, bytes, (CUstream)stream));
done:
    return st;
}

orr_status orr_cuda_dtoh_async(void *dst, orr_devptr src, size_t bytes, void *stream,
                               orr_error *err)
{
    orr_status st = ORR_OK;
    CU_ENSURE();
    CU_CHECK(cuMemcpyDtoHAsync, (dst, (CUdeviceptr)src, bytes, (CUstream)stream));
done:
    return st;
}

orr_status orr_cuda_dtod_async(orr_devptr dst, orr_devptr src, size_t bytes, void *stream,
                               orr_error *err)
{
    orr_status st = ORR_OK;
    CU_ENSURE();
    CU_CHECK(cuMemcpyDtoDAsync, ((CUdeviceptr)dst, (CUdeviceptr)src, bytes, (CUstream)stream));
done:
    return st;
}

orr_status orr_cuda_module_load(const void *image, void **module, orr_error *err)
{
    orr_status st = ORR_OK;
    CUmodule m = NULL;
    *module = NULL;
    CU_ENSURE();
    orr_trace("cuModuleLoadData");
    CU_CHECK(cuModuleLoadData, (&m, image));
    orr_trace("cuModuleLoadData done");
    *module = m;
done:
    if (st == ORR_ERR_CUDA) {   /* e.g. no code for this GPU: a load error */
        st = ORR_ERR_LOAD;
        if (err)
            err->code = st;
    }
    return st;
}

void orr_cuda_module_unload(void *module)
{
    if (module && orr_cuda_open(NULL) == ORR_OK)
        p_cuModuleUnload((CUmodule)module);
}

orr_status orr_cuda_function(void *module, const char *name, void **fn, orr_error *err)
{
    orr_status st = ORR_OK;
    CUfunction f = NULL;
    *fn = NULL;
    CU_ENSURE();
    CU_CHECK(cuModuleGetFunction, (&f, (CUmodule)module, name));
    *fn = f;
done:
    if (st != ORR_OK)
        orr_error_context(err, "kernel %s", name);
    return st;
}

orr_status orr_cuda_function_limits(void *fn, int *regs, int *max_threads, orr_error *err)
{
    orr_status st = ORR_OK;
    CU_ENSURE();
    CU_CHECK(cuFuncGetAttribute, (regs, CU_FUNC_ATTRIBUTE_NUM_REGS, (CUfunction)fn));
    CU_CHECK(cuFuncGetAttribute, (max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                  (CUfunction)fn));
done:
    return st;
}

orr_status orr_cuda_occupancy(void *fn, int block, int *blocks_per_sm, orr_error *err)
{
    orr_status st = ORR_OK;
    CU_ENSURE();
    CU_CHECK(cuOccupancyMaxActiveBlocksPerMultiprocessor,
             (blocks_per_sm, (CUfunction)fn, block, (size_t)0));
done:
    return st;
}

orr_status orr_cuda_launch_2d(void *fn, unsigned grid_x, unsigned grid_y, unsigned block,
                              unsigned shared_bytes, void *stream, void **args, orr_error *err)
{
    orr_status st = ORR_OK;
    CU_ENSURE();
    CU_CHECK(cuLaunchKernel, ((CUfunction)fn, grid_x, grid_y, 1, block, 1, 1, shared_bytes,
                              (CUstream)stream, args, (void **)NULL));
done:
    if (st != ORR_OK)
        orr_error_context(err, "launch of %u x %u blocks of %u threads, %u bytes shared", grid_x,
                          grid_y, block, shared_bytes);
    return st;
}

orr_status orr_cuda_launch_cooperative(void *fn, unsigned grid, unsigned block, void *stream,
                                       void **args, orr_error *err)
{
    orr_status st = ORR_OK;
    CU_ENSURE();
    CU_CHECK(cuLaunchCooperativeKernel, ((CUfunction)fn, grid, 1, 1, block, 1, 1, 0,
                                         (CUstream)stream, args));
done:
    if (st != ORR_OK)
        orr_error_context(err, "cooperative launch of %u blocks of %u threads", grid, block);
    return st;
}

orr_status orr_cuda_launch(void *fn, unsigned grid, unsigned block, unsigned shared_bytes,
                           void *stream, void **args, orr_error *err)
{
    return orr_cuda_launch_2d(fn, grid, 1, block, shared_bytes, stream, args, err);
}

orr_status orr_cuda_event_create(void **ev, orr_error *err)
{
    orr_status st = ORR_OK;
    CUevent e = NULL;
    *ev = NULL;
    CU_ENSURE();
    CU_CHECK(cuEventCreate, (&e, CU_EVENT_DEFAULT));
    *ev = e;
done:
    return st;
}

void orr_cuda_event_destroy(void *ev)
{
    if (ev && orr_cuda_open(NULL) == ORR_OK)
        p_cuEventDestroy((CUevent)ev);
}

orr_status orr_cuda_event_record(void *ev, void *stream, orr_error *err)
{
    orr_status st = ORR_OK;
    CU_ENSURE();
    CU_CHECK(cuEventRecord, ((CUevent)ev, (CUstream)stream));
done:
    return st;
}

orr_status orr_cuda_event_sync(void *ev, orr_error *err)
{
    orr_status st = ORR_OK;
    CU_ENSURE();
    CU_CHECK(cuEventSynchronize, ((CUevent)ev));
done:
    return st;
}

orr_status orr_cuda_event_elapsed(void *start, void *end, float *ms, orr_error *err)
{
    orr_status st = ORR_OK;
    *ms = 0.0f;
    CU_ENSURE();
    CU_CHECK(cuEventSynchronize, ((CUevent)end));
    CU_CHECK(cuEventElapsedTime, (ms, (CUevent)start, (CUevent)end));
done:
    return st;
}
