/* kspec: a kernel specification, the physics (force law, precision,
 * softening, G, box) and the launch configuration (block size, unroll,
 * threads per body, ...), and the generated source it becomes.
 * Block, unroll, split, softening and G are baked in as compile-time
 * constants (floating values as exact hex-float literals); on the GPU the
 * precision is a template parameter chosen by name expression, on the CPU a
 * typedef.  The source is the generated header followed by kernels_src files,
 * each under a #line directive so compiler messages name the original file
 * and line. */
#ifndef ORR_KSPEC_H
#define ORR_KSPEC_H

#include <stddef.h>
#include "err.h"

/* ORR_MIXED: the Hermite integrator's fast mode (phi-GPU, HiGPUs): every
 * value is kept in double, and its force + jerk kernel takes the
 * differences of positions and velocities in double and the rest of the
 * pair in float; the other kernels run in double. */
typedef enum { ORR_FLOAT = 0, ORR_DOUBLE = 1, ORR_MIXED = 2 } orr_precision;
/* 1 when values are stored in double (double and mixed). */
#define ORR_STORED_DOUBLE(p) ((p) != ORR_FLOAT)
typedef enum { ORR_TARGET_GPU = 0, ORR_TARGET_CPU = 1 } orr_target;
/* Accel kernel variants: tiled (orrery's), naive (the GPU baseline), and
 * reference (CPU float gravity only: the plain -ffast-math loop of
 * kernels_src/reference_cpu.c, the yardstick for the CPU backend). */
typedef enum { ORR_VARIANT_TILED = 0, ORR_VARIANT_NAIVE = 1, ORR_VARIANT_REFERENCE = 2 } orr_variant;

struct orr_law;       /* law.h */
struct orr_fieldset;  /* field.h */
struct orr_kfamily;   /* kfamily.h */

/* The physics a kernel computes: the same whatever the launch settings,
 * and the same on every rank of a distributed run. */
typedef struct {
    char force[64];           /* law name: kernels_src/forces/<force>.h; "gravity" */
    const struct orr_law *law; /* the law (borrowed: it must outlive the spec), or NULL:
                                 the built-in `force` with its default params */
    orr_precision precision;  /* ORR_FLOAT */
    double softening;         /* Plummer softening length epsilon (0.01) */
    double G;                 /* coupling constant (1) */
    double box[3];            /* periodic box lengths per axis; 0 = open (0, 0, 0).
                                 Bodies live in [0, L); separations use the
                                 minimum image. */
    const struct orr_fieldset *fields;   /* external fields (borrowed: they must outlive
                                 the spec), or NULL: none */
} orr_physics;

/* How the kernels are built and launched: what the tuner varies.  None of
 * it changes the physics (ftz and newton change the last bits). */
typedef struct {
    int block;                /* GPU: threads per block = bodies per tile (512);
                                 CPU: j-tile length (1024) */
    int unroll;               /* GPU inner-loop unroll factor (16) */
    int split;                /* GPU threads per body, power of two 1..32 (1) */
    int ipt;                  /* GPU target bodies per thread (register blocking), 1..8 (1) */
    int prefetch;             /* GPU: the next tile's sources loaded into registers while
                                 this tile is summed, 0/1 (0); no bit changes */
    int ftz;                  /* GPU float: flush denormals to zero (--ftz=true), 0/1 (1) */
    int newton;               /* GPU double: refinement of the hardware rsqrt:
                                 2 = one third-order correction, full double
                                 accuracy; 1 = one Newton step, faster but
                                 only ~1e-12 to 1e-11 relative (2) */
    int ranges;               /* GPU: j-ranges, blocks that each sum over a share of the
                                 bodies j, their partial sums combined in a fixed
                                 order; a launch setting, not in the source.
                                 0 = chosen from the kernel's occupancy so the
                                 last wave of blocks fills the GPU (0) */
    int threads;              /* CPU OpenMP threads; 0 = the OpenMP default (0) */
} orr_launch;

/* A kernel specification: the physics and the launch configuration. */
typedef struct {
    orr_physics phys;
    orr_launch launch;
} orr_kspec;

#define ORR_KSPEC_MAX_RANGES 64

/* Fill the defaults (see the field comments); the launch defaults depend
 * on the target. */
void orr_physics_default(orr_physics *p);
void orr_launch_default(orr_launch *l, orr_target target);
void orr_kspec_default(orr_kspec *s, orr_target target);

/* The reference spec for physics p: the CPU backend in double with its
 * default launch settings (what verification and the tuner compare with). */
void orr_kspec_reference(const orr_physics *p, orr_kspec *out);

/* Checks the device-independent limits: block a multiple of 32 (GPU) from 32
 * to 1024, split dividing block, unroll 1..64, softening 0 or with a square
 * that is a normal number in the spec's precision (float: about 1.08e-19 to
 * 1.84e19), G finite and representable in that precision, force a plain
 * name.  Messages say which value and the limit. */
orr_status orr_kspec_validate(const orr_kspec *s, orr_target target, orr_error *err);

/* A copy of the spec's force law into *out: s->law, or the built-in law
 * s->force with its default params.  Free it with orr_law_free. */
orr_status orr_kspec_law(const orr_kspec *s, struct orr_law *out, orr_error *err);

/* The complete generated source of kernel family f for the target (heap,
 * caller frees): the generated constants, prelude.h, the force law and the
 * family's source file for the target. */
orr_status orr_kspec_source(const orr_kspec *s, const struct orr_kfamily *f, orr_target target,
                            char **src, orr_error *err);

/* The NVRTC options the spec compiles with (static strings, at most
 * ORR_KSPEC_MAX_OPTS): the language standard, FMA contraction, and
 * --ftz=true|false from s->ftz.  Returns how many. */
#define ORR_KSPEC_MAX_OPTS 4
int orr_kspec_nvrtc_options(const orr_kspec *s, const char *opts[ORR_KSPEC_MAX_OPTS]);

/* "float" / "double"; parse returns ORR_ERR_ARG for anything else. */
const char *orr_precision_name(orr_precision p);   /* "float", "double", "mixed" */
/* The C type name the kernels are instantiated with: "float" or "double". */
const char *orr_precision_ctype(orr_precision p);
orr_status orr_precision_parse(const char *name, orr_precision *p, orr_error *err);
const char *orr_variant_name(orr_variant v);
orr_status orr_variant_parse(const char *name, orr_variant *v, orr_error *err);

/* A one-line description, "gravity float block=256 unroll=4 split=1 eps=0.01". */
void orr_kspec_describe(const orr_kspec *s, char *buf, size_t size);
/* The tuned launch parameters in words, "block 256, unroll 4, split 1, ipt
 * 1, threads 0, ranges 0". */
void orr_launch_describe(const orr_launch *l, char *buf, size_t size);

#endif
