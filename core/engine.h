/* engine: one backend instance (CUDA or CPU) holding N bodies in its own
 * precision and layout, with its kernels compiled for one kernel spec.  Each
 * backend is a const vtable (backend_cuda.c, backend_cpu.c); callers use the
 * orr_engine_* functions.  Host-side data is always double: positions as
 * pos[4n] = (x, y, z, m) per body, velocities and accelerations as 3n. */
#ifndef ORR_ENGINE_H
#define ORR_ENGINE_H

#include <stddef.h>
#include "err.h"
#include "kspec.h"
#include "law.h"

typedef enum { ORR_BACKEND_AUTO = 0, ORR_BACKEND_CUDA, ORR_BACKEND_CPU } orr_backend_kind;

/* How the engine's kernels were obtained, for reports. */
typedef struct {
    int cached;            /* 1: kernel object came from the cache */
    double compile_s;      /* seconds compiling (0 when cached) */
    double load_s;         /* seconds loading the module / shared object */
    char key[33];          /* cache key */
    char note[512];        /* e.g. a corrupt cache entry that was rebuilt */
    char target[64];       /* "sm_90" or "cpu" */
} orr_build_info;

typedef struct orr_engine orr_engine;

typedef struct {
    const char *name;                                           /* "cuda" or "cpu" */
    orr_status (*create)(orr_engine *e, orr_error *err);        /* compile, load, allocate */
    void (*destroy)(orr_engine *e);
    orr_status (*set_state)(orr_engine *e, const double *pos, const double *vel, orr_error *err);
    orr_status (*get_state)(orr_engine *e, double *pos, double *vel, orr_error *err);
    orr_status (*accel)(orr_engine *e, orr_error *err);         /* into the engine's buffer */
    orr_status (*get_accel)(orr_engine *e, double *acc, orr_error *err);
    orr_status (*kick)(orr_engine *e, double dt, double damping, orr_error *err);
    orr_status (*drift)(orr_engine *e, double dt, orr_error *err);
    orr_status (*potential)(orr_engine *e, double *u, orr_error *err);
    /* Per-body attributes of the force law: attr[a * n + i], e->nattr of them. */
    orr_status (*set_attr)(orr_engine *e, const double *attr, orr_error *err);
    /* Accelerations of the bodies idx[0..ni) only (3 ni values). */
    orr_status (*accel_sample)(orr_engine *e, long ni, const long *idx, double *acc,
                               orr_error *err);
    /* Runs `steps` steps (accel, kick, drift; or accel only) and gives the
     * time per step in ms, measured on the backend's own clock. */
    orr_status (*time_steps)(orr_engine *e, int steps, int force_only, double *ms,
                             orr_error *err);
} orr_backend_ops;

struct orr_engine {
    const orr_backend_ops *ops;
    orr_kspec spec;
    orr_variant variant;   /* which accel kernel the GPU launches */
    long n;                /* bodies */
    int nattr;             /* the law's per-body attributes (0 for gravity) */
    int nrt;               /* the law's runtime params */
    double rt[ORR_LAW_MAX_RUNTIME];   /* their values, passed at every launch */
    int device;            /* GPU ordinal */
    int ranges;            /* j-ranges the GPU accel kernel runs with (see
                              orr_kspec.ranges); 1 on the CPU */
    orr_build_info build;
    void *impl;            /* backend state */
};

extern const orr_backend_ops orr_backend_cpu;
extern const orr_backend_ops orr_backend_cuda;

/* Why CUDA cannot be used here (driver, device), or ORR_OK when it can. */
orr_status orr_cuda_usable(int device, orr_error *err);

/* Creates an engine for n bodies.  Under ORR_BACKEND_AUTO it uses CUDA when a
 * usable device exists, else the CPU, and writes a one-line notice saying why
 * into notice (may be NULL).  When spec is NULL the backend's defaults apply. */
orr_status orr_engine_create(orr_engine **out, orr_backend_kind kind, const orr_kspec *spec,
                             orr_variant variant, long n, int device, char *notice,
                             size_t notice_size, orr_error *err);
void orr_engine_destroy(orr_engine *e);

orr_status orr_engine_set_state(orr_engine *e, const double *pos, const double *vel, orr_error *err);
orr_status orr_engine_get_state(orr_engine *e, double *pos, double *vel, orr_error *err);
orr_status orr_engine_accel(orr_engine *e, double *acc, orr_error *err); /* compute + fetch */
/* v = (v + a dt) * damping, with a from the last accel call. */
orr_status orr_engine_kick(orr_engine *e, double dt, double damping, orr_error *err);
/* x += v dt, wrapped into the spec's periodic box on periodic axes. */
orr_status orr_engine_drift(orr_engine *e, double dt, orr_error *err);
orr_status orr_engine_potential(orr_engine *e, double *u, orr_error *err);
/* Uploads the attributes (attr[a * n + i], e->nattr * n values); all 0 until set. */
orr_status orr_engine_set_attr(orr_engine *e, const double *attr, orr_error *err);
/* Sets the runtime params (e->nrt values, slot order); they apply from the
 * next launch, with no recompile. */
void orr_engine_set_runtime(orr_engine *e, const double *values);
orr_status orr_engine_accel_sample(orr_engine *e, long ni, const long *idx, double *acc,
                                   orr_error *err);
orr_status orr_engine_time_steps(orr_engine *e, int steps, int force_only, double *ms,
                                 orr_error *err);

const char *orr_backend_name(orr_backend_kind k);
orr_status orr_backend_parse(const char *name, orr_backend_kind *k, orr_error *err);

/* Compiles the spec's GPU kernels for arch ("sm_90") into the kernel cache
 * unless they are there already, without a device or context: a later
 * engine for the same spec loads them at once.  Safe to call from several
 * threads at a time (the tuner compiles candidates in parallel). */
orr_status orr_cuda_prebuild(const orr_kspec *spec, const char *arch, orr_error *err);

/* Shared by the backends: fetch key from the kernel cache or run build() and
 * store its result; fills info (cached, compile time, key, note). */
typedef orr_status (*orr_build_fn)(void *ctx, void **data, size_t *len, double *seconds,
                                   orr_error *err);
orr_status orr_engine_cached_build(const char *const *key_parts, int nparts, const char *kind,
                                   orr_build_fn build, void *ctx, void **data, size_t *len,
                                   orr_build_info *info, orr_error *err);

#endif
