/* engine_impl: the inside of an engine, shared by engine.c and the backends
 * (backend_cuda.c, backend_cpu.c) only.  Everything above the engine uses
 * the orr_engine_* functions of engine.h.  A backend is a const table of
 * functions; each works on the targets of an orr_range (the bodies that
 * feel a force or are updated), against all n bodies as sources. */
#ifndef ORR_ENGINE_IMPL_H
#define ORR_ENGINE_IMPL_H

#include "engine.h"
#include "field.h"
#include "kfamily.h"
#include "rtc.h"

typedef struct {
    const char *name;                                           /* "cuda" or "cpu" */
    orr_backend_kind kind;
    orr_status (*create)(orr_engine *e, orr_error *err);        /* compile, load, allocate */
    void (*destroy)(orr_engine *e);
    orr_status (*set_state)(orr_engine *e, const double *pos, const double *vel, orr_error *err);
    orr_status (*get_state)(orr_engine *e, double *pos, double *vel, orr_error *err);
    /* Accelerations of the targets from all bodies, into the engine's buffer. */
    orr_status (*accel)(orr_engine *e, orr_range t, orr_force_part part, orr_error *err);
    orr_status (*get_accel)(orr_engine *e, orr_range t, double *acc, orr_error *err);
    /* accelerations and jerks (3 ni each) of the bodies idx[k]; NULL where
     * the backend has no such kernel yet */
    orr_status (*accel_jerk)(orr_engine *e, long ni, const long *idx, double *acc, double *jerk,
                             orr_error *err);
    /* reps force + jerk passes of the bodies idx, ms per pass (NULL: not timed) */
    orr_status (*time_accel_jerk)(orr_engine *e, long ni, const long *idx, int reps, double *ms,
                                  orr_error *err);
    /* the blow-up flag (engine.h: orr_engine_blowup): step << 32 | body,
     * all ones when none; cleared to that with clear */
    orr_status (*blowup)(orr_engine *e, unsigned long long *key, int clear, orr_error *err);
    /* block time steps held by the backend (engine.h: orr_engine_block*);
     * NULL where the integrator keeps them on the host */
    orr_status (*blocks_begin)(orr_engine *e, const orr_block_params *p, int fresh,
                               int keep_steps, orr_error *err);
    orr_status (*block)(orr_engine *e, const orr_block_params *p, long long *t, long *nact,
                        orr_error *err);
    orr_status (*blocks_run)(orr_engine *e, const orr_block_params *p, long long *t,
                             long *blocks, long *active, orr_error *err);
    orr_status (*blocks_field)(orr_engine *e, int k, double *io, int set, int *deepest,
                               orr_error *err);
    orr_status (*blocks_levels)(orr_engine *e, int *level, int set, orr_error *err);
    orr_status (*blocks_abort)(orr_engine *e, orr_error *err);
    orr_status (*blocks_watch)(orr_engine *e, const orr_block_watch *w, orr_error *err);
    int (*blocks_why)(const orr_engine *e);
    orr_status (*blocks_state)(orr_engine *e, double *pos, double *vel, double *acc,
                               double *jerk, long long *tick, int *level, int set,
                               orr_error *err);
    orr_status (*blocks_some)(orr_engine *e, double *pos, double *vel, double *acc, double *jerk,
                              long long *tick, int *level, int set, long *list, long *count,
                              long long since, long most, orr_error *err);
    orr_status (*set_predicted)(orr_engine *e, const double *xp, const double *vp,
                                orr_error *err);
    orr_status (*blocks_predict)(orr_engine *e, long long tick, orr_error *err);
    orr_status (*blocks_split)(orr_engine *e, const orr_block_split *s, orr_error *err);
    void (*blocks_stats)(const orr_engine *e, orr_blocks_stats *out);
    orr_status (*kick)(orr_engine *e, orr_range t, double dt, double damping, orr_error *err);
    orr_status (*drift)(orr_engine *e, orr_range t, double dt, orr_error *err);
    /* The targets' share of the pair potential: half of each target's sum
     * over all other bodies, so the shares of disjoint ranges add up. */
    orr_status (*potential)(orr_engine *e, orr_range t, double *u, orr_error *err);
    /* The targets' energy in the external fields, sum of m_i Phi(x_i). */
    orr_status (*field_potential)(orr_engine *e, orr_range t, double *u, orr_error *err);
    /* Per-body attributes of the force law: attr[a * n + i], e->nattr of them. */
    orr_status (*set_attr)(orr_engine *e, const double *attr, orr_error *err);
    /* Accelerations of the bodies idx[0..ni) only (3 ni values). */
    orr_status (*accel_sample)(orr_engine *e, long ni, const long *idx, double *acc,
                               orr_error *err);
    /* Runs `steps` steps on the targets t (their accel from all bodies,
     * kick, drift; or accel only) and gives the time per step in ms,
     * measured on the backend's own clock. */
    orr_status (*time_steps)(orr_engine *e, orr_range t, int steps, int force_only, double *ms,
                             orr_error *err);
    /* the deposit of every body into density (checked; engine.h: orr_engine_deposit) */
    orr_status (*deposit)(orr_engine *e, const orr_deposit *d, double *density, orr_error *err);
    orr_status (*buffer)(orr_engine *e, orr_buffer_id id, orr_buffer *out, orr_error *err);
    /* the live view's subsample (checked; engine.h: orr_engine_sample) */
    orr_status (*sample)(orr_engine *e, long first, long stride, long count, float *out,
                         orr_error *err);
    orr_status (*sync)(orr_engine *e, orr_error *err);
} orr_backend_ops;

struct orr_engine {
    const orr_backend_ops *ops;
    const orr_kfamily *family;   /* the kernels' family (orr_family_direct) */
    orr_kspec spec;        /* as created, its law pointing at `law` */
    orr_law law;           /* the engine's own copy of the force law (params as built) */
    orr_variant variant;   /* which accel kernel the GPU launches */
    long n;                /* bodies */
    int nattr;             /* the law's per-body attributes (0 for gravity) */
    orr_fieldset fields;   /* the engine's own copy of the external fields (params as built) */
    int nrt;               /* the law's runtime params */
    int nfrt;              /* the fields' runtime params */
    double rt[ORR_RT_SLOTS];   /* the runtime values passed at every launch (field.h): the
                                  law's params, the fields' from ORR_RT_FIELD, the time
                                  ORR_RT_T0 and the block steps' tick ORR_RT_UNIT */
    orr_frame_fn frame;    /* the frame's slots for a time (orr_engine_set_frame), or NULL */
    void *frame_ctx;
    int device;            /* GPU ordinal */
    int ranges;            /* j-ranges the GPU accel kernel runs with (see
                              orr_launch.ranges); 1 on the CPU */
    long wave_targets;     /* GPU: the targets whose accel blocks fill every SM's
                              resident slots once (0 on the CPU) */
    void *stream;          /* the engine's work queue (CUstream), NULL on the CPU */
    long step;             /* the step number kick and drift flag blow-ups with */
    orr_hlaunch hlaunch[ORR_HBUCKETS];   /* the force + jerk launch per active bucket
                                            (zeros: the defaults) */
    orr_build_info build;
    void *impl;            /* backend state */
};

/* A deposit's pixel size and inverse pixel area: cell = dx, dy, 1 / (dx dy). */
void orr_deposit_cell(const orr_deposit *d, double cell[3]);
/* The deposit of one body (the horizontal and vertical coordinates h, v
 * and the mass m) into density, zeroed before the first: the host's
 * arithmetic, shared by orr_deposit_host and the CPU backend so that they
 * agree bit for bit (the GPU kernel, kernels_src/render.cu, does the same
 * operations in the same order). */
void orr_deposit_one(const orr_deposit *d, const double cell[3], double h, double v, double m,
                     double *density);

extern const orr_backend_ops orr_backend_cpu;
extern const orr_backend_ops orr_backend_cuda;

/* The backends' halves of orr_engine_compile: family f's kernels for the
 * GPU (NVRTC, for arch) or the CPU (the host compiler), without the cache. */
orr_status orr_cuda_compile(const orr_kspec *spec, const orr_kfamily *f, const char *arch,
                            orr_emit emit, orr_compiled *out, orr_error *err);
orr_status orr_cpu_compile(const orr_kspec *spec, const orr_kfamily *f, orr_compiled *out,
                           orr_error *err);

#endif
