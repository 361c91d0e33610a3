/* kfamily: kernel families described by data.  A family is one kernels_src
 * file per target (CUDA C++ for NVRTC, C for the host compiler), the kernels
 * it exports, the per-body buffers they work on, the launch settings the
 * tuner searches for it and its name in the tuning store and the kernel
 * cache key.  Adding a family is adding a description here and its source
 * files; kspec generates its source, the backends load its kernels by
 * index, the tuner and the cache key it by name.
 *
 * Two families: "direct", all-pairs accelerations of a range of target
 * bodies from all bodies, kick, drift, potential (direct.cu, direct_cpu.c),
 * the engine's own; and "render", the pictures' deposit on the GPU
 * (render.cu; the CPU deposits in backend_cpu.c), built by the CUDA
 * backend when first used (for the default spec in the bodies' precision:
 * it uses nothing else), and never tuned. */
#ifndef ORR_KFAMILY_H
#define ORR_KFAMILY_H

#include <stddef.h>
#include "kspec.h"

#define ORR_KFAMILY_MAX_KERNELS 32
#define ORR_KFAMILY_MAX_BUFFERS 8

/* Launch settings a family's tuner searches (orr_kfamily.tuned). */
enum {
    ORR_TUNE_BLOCK = 1 << 0,
    ORR_TUNE_UNROLL = 1 << 1,
    ORR_TUNE_SPLIT = 1 << 2,
    ORR_TUNE_IPT = 1 << 3,
    ORR_TUNE_RANGES = 1 << 4,
    ORR_TUNE_THREADS = 1 << 5,
    ORR_TUNE_PREFETCH = 1 << 6,
};

typedef struct {
    const char *name;   /* "pos" */
    int comps;          /* values per body used (the GPU stores real4 records) */
} orr_kbuffer;

typedef struct orr_kfamily {
    const char *name;          /* "direct": also its key in the tuning store and cache */
    const char *gpu_source;    /* kernels_src file for NVRTC: "direct.cu" */
    const char *gpu_header;    /* a kernels_src file put before it (NULL: none) */
    const char *cpu_source;    /* kernels_src file for the host compiler: "direct_cpu.c"
                                  (NULL: a GPU-only family) */
    int ngpu;                  /* GPU kernels: templates over the precision, */
    const char *gpu_kernels[ORR_KFAMILY_MAX_KERNELS];   /* instantiated as name<real> */
    int ncpu;                  /* CPU entry points (exported, found with dlsym) */
    const char *cpu_entries[ORR_KFAMILY_MAX_KERNELS];
    int nbuffers;              /* per-body buffers the kernels work on */
    orr_kbuffer buffers[ORR_KFAMILY_MAX_BUFFERS];
    unsigned tuned;            /* ORR_TUNE_* bits */
} orr_kfamily;

/* The direct family and its kernels' indices. */
extern const orr_kfamily orr_family_direct;
enum { ORR_K_ACCEL, ORR_K_ACCEL_NAIVE, ORR_K_KICK, ORR_K_DRIFT, ORR_K_POTENTIAL, ORR_K_COMBINE,
       ORR_K_HNEXT, ORR_K_HPREDICT, ORR_K_HNEXT_PREDICT, ORR_K_ACCEL_JERK64, ORR_K_ACCEL_JERK128,
       ORR_K_ACCEL_JERK256, ORR_K_JERK_COMBINE, ORR_K_HCORRECT, ORR_K_HSTART,
       ORR_K_HLOOP, ORR_K_HINTERVAL, ORR_K_HCHUNKS, ORR_K_HLIST, ORR_K_HPACK,
       ORR_K_HUNPACK, ORR_K_ACCEL_JERK_GROUPS, ORR_K_FIELD_POTENTIAL, ORR_K_FIELDS_ADD,
       ORR_K_HINTERVAL_WATCHED, ORR_K_HSINCE, ORR_K_HPUT, ORR_K_HNOISE };
/* The render family (GPU only: no CPU source or entries, no buffers). */
extern const orr_kfamily orr_family_render;
enum { ORR_K_DEPOSIT_CLEAR, ORR_K_DEPOSIT, ORR_K_VIEW_SAMPLE };
enum { ORR_KC_ACCEL, ORR_KC_POTENTIAL, ORR_KC_KICK, ORR_KC_DRIFT, ORR_KC_ACCEL_JERK,
       ORR_KC_FIELD_POTENTIAL };
enum { ORR_BUF_POS, ORR_BUF_VEL, ORR_BUF_ACC };

/* The family called name, or NULL. */
const orr_kfamily *orr_kfamily_find(const char *name);

/* The name expressions of a family's GPU kernels in precision p
 * ("orr_accel<float>", ...), in the family's order: NVRTC instantiates and
 * lowers them. */
typedef struct {
    int count;
    const char *expr[ORR_KFAMILY_MAX_KERNELS];   /* point into text */
    char text[ORR_KFAMILY_MAX_KERNELS][96];
} orr_kexprs;
void orr_kexprs_make(orr_kexprs *x, const orr_kfamily *f, orr_precision p);

#endif
