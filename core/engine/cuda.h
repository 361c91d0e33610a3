/* cuda: the CUDA driver API, opened with dlopen("libcuda.so.1") at run time,
 * never linked, so orrery starts on machines without a driver and says what
 * is missing.  Devices, primary contexts, memory (device and page-locked
 * host memory), streams, asynchronous copies, modules, launches, events.
 * A stream argument NULL means the default stream.
 * Every failing call records "cuXxx: CUDA_ERROR_NAME (description)". */
#ifndef ORR_CUDA_H
#define ORR_CUDA_H

#include <stddef.h>
#include "err.h"

typedef unsigned long long orr_devptr;   /* CUdeviceptr */

typedef struct {
    int ordinal;
    char name[256];
    char uuid[48];                 /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" as nvidia-smi
                                      -L shows it: the GPU itself, whatever its ordinal
                                      (CUDA_VISIBLE_DEVICES renumbers them per process) */
    int cc_major, cc_minor;        /* compute capability */
    int sm_count;                  /* multiprocessors */
    int max_threads_per_block;
    int max_shared_per_block;      /* bytes, default limit */
    int max_shared_per_block_optin;/* bytes, after raising the attribute */
    int max_regs_per_block;
    int clock_khz;                 /* peak SM clock */
    size_t total_mem;              /* bytes */
} orr_gpu_info;

/* Opens libcuda.so.1 and calls cuInit once; later calls return the first
 * result.  ORR_ERR_NODRIVER when the library is absent, ORR_ERR_NODEVICE
 * when cuInit reports no device. */
orr_status orr_cuda_open(orr_error *err);
/* Driver version as reported by cuDriverGetVersion (e.g. 13000), or 0. */
int orr_cuda_driver_version(void);
orr_status orr_cuda_device_count(int *count, orr_error *err);
orr_status orr_cuda_device_info(int ordinal, orr_gpu_info *info, orr_error *err);
/* 16 bytes of a UUID (cuDeviceGetUuid) as orr_gpu_info.uuid spells it,
 * into buf (41 bytes suffice). */
void orr_cuda_uuid_format(const unsigned char bytes[16], char *buf, size_t size);
/* The device's architecture name as NVRTC and the kernel cache spell it,
 * "sm_" and the compute capability ("sm_90", "sm_120"), written into buf
 * (truncated to size - 1 characters; 16 bytes always suffice). */
void orr_cuda_arch_name(const orr_gpu_info *g, char *buf, size_t size);

/* Retains the device's primary context (once per process) and makes it
 * current on this thread.  It is never released: the driver destroys it
 * when the process ends.  Creating a context costs about 110 ms and
 * destroying one about 90 ms on an H100, which a script that closes and
 * makes simulations, or a tuning before the engine, would otherwise pay
 * each time. */
orr_status orr_cuda_ctx_acquire(int ordinal, orr_error *err);
/* How many times this process has retained a primary context (once per
 * device used, however many engines were made and destroyed). */
int orr_cuda_ctx_retains(void);

/* Device memory.  alloc failing for lack of memory returns ORR_ERR_DEVMEM
 * with the bytes asked for in the message. */
orr_status orr_cuda_alloc(orr_devptr *p, size_t bytes, orr_error *err);
void orr_cuda_free(orr_devptr p);
orr_status orr_cuda_htod(orr_devptr dst, const void *src, size_t bytes, orr_error *err);
orr_status orr_cuda_dtoh(void *dst, orr_devptr src, size_t bytes, orr_error *err);
orr_status orr_cuda_memset32(orr_devptr dst, unsigned value, size_t count, orr_error *err);
orr_status orr_cuda_sync(orr_error *err);
/* Page-locked host memory, which asynchronous copies need to overlap. */
orr_status orr_cuda_host_alloc(void **p, size_t bytes, orr_error *err);
void orr_cuda_host_free(void *p);

/* Streams (opaque CUstream).  An engine's stream is created blocking, so
 * work on the default stream still waits for it. */
orr_status orr_cuda_stream_create(void **stream, orr_error *err);
void orr_cuda_stream_destroy(void *stream);
orr_status orr_cuda_stream_sync(void *stream, orr_error *err);
/* Work queued on stream after this waits until ev has happened. */
orr_status orr_cuda_stream_wait(void *stream, void *ev, orr_error *err);
/* Copies queued on stream; host memory must be page-locked to overlap. */
orr_status orr_cuda_htod_async(orr_devptr dst, const void *src, size_t bytes, void *stream,
                               orr_error *err);
orr_status orr_cuda_dtoh_async(void *dst, orr_devptr src, size_t bytes, void *stream,
                               orr_error *err);
orr_status orr_cuda_dtod_async(orr_devptr dst, orr_devptr src, size_t bytes, void *stream,
                               orr_error *err);

/* Modules and kernels (opaque CUmodule / CUfunction). */
orr_status orr_cuda_module_load(const void *image, void **module, orr_error *err);
void orr_cuda_module_unload(void *module);
orr_status orr_cuda_function(void *module, const char *name, void **fn, orr_error *err);
/* Registers used and the largest block the function can be launched with. */
orr_status orr_cuda_function_limits(void *fn, int *regs, int *max_threads, orr_error *err);
/* How many blocks of `block` threads of fn an SM holds at once. */
orr_status orr_cuda_occupancy(void *fn, int block, int *blocks_per_sm, orr_error *err);
/* Launches on stream; 1D grid and block; args as for cuLaunchKernel. */
orr_status orr_cuda_launch(void *fn, unsigned grid, unsigned block, unsigned shared_bytes,
                           void *stream, void **args, orr_error *err);
/* The same with a 2D grid (grid_x x grid_y blocks). */
orr_status orr_cuda_launch_2d(void *fn, unsigned grid_x, unsigned grid_y, unsigned block,
                              unsigned shared_bytes, void *stream, void **args, orr_error *err);

/* A cooperative launch: every block resident at once (so the blocks may
 * wait for each other), or an error when they cannot all be. */
orr_status orr_cuda_launch_cooperative(void *fn, unsigned grid, unsigned block, void *stream,
                                       void **args, orr_error *err);
/* Events, for timing and for ordering work between streams. */
orr_status orr_cuda_event_create(void **ev, orr_error *err);
void orr_cuda_event_destroy(void *ev);
orr_status orr_cuda_event_record(void *ev, void *stream, orr_error *err);
orr_status orr_cuda_event_sync(void *ev, orr_error *err);
/* Waits for end, then gives the milliseconds between start and end. */
orr_status orr_cuda_event_elapsed(void *start, void *end, float *ms, orr_error *err);

#endif
