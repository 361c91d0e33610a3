/* htune: the Hermite integrator's tuner.  A block step computes the
 * accelerations and jerks of its active bodies, anything from one body to
 * all n, against all n predicted bodies; the GPU kernel that does it
 * (kernels_src/direct.cu: orr_accel_jerk64/128/256) has two settings that
 * suit one count and not another: the tile (threads per block and bodies
 * per shared-memory tile: 64, 128 or 256) and the j-split (the source
 * range cut into ranges, summed by blocks of their own and combined, until
 * the blocks number about per_sm per SM: 2, 4, 8, 16, 32 or 64).  Both are
 * chosen at launch time (engine.h: orr_hlaunch), so the tuner needs no
 * compiling.  Where the persistent kernel runs the blocks (the default),
 * the passes timed are its force phase's (orr_accel_jerk_groups: its
 * blocks, groups of a tile's threads walking the items).
 *
 * For n bodies it tunes every bucket of active bodies that n reaches
 * (engine.h: bucket k = up to 64 * 4^k active bodies), smallest first:
 * the bucket's largest count (at most n) of active bodies, spread evenly
 * over the n bodies of a Plummer sphere (the force tuner's), with every
 * (tile, per_sm) that gives a different launch.  Each candidate's
 * accelerations and jerks, on a sample of up to 256 of the active bodies,
 * are checked against the CPU backend in double (orr_accel_err of each,
 * within orr_accel_tolerance of the precision, float's for mixed), then
 * timed: runs of k passes (k so that a run lasts >= 2 ms), the median of
 * 5.  The fastest is timed against the default (tile min(block, 256), 16
 * per SM) alternately, 5 runs each, and kept only when it is 2% or more
 * faster (else the default is stored, and the note says so).  The budget
 * (seconds of device time, 2 by default) is shared by the buckets left; a
 * bucket whose default's runs (7 passes, judged first from the last
 * bucket's, scaled by the active count, then from its own) would not fit
 * three times into its share keeps the default, stored as such (so large
 * all-active blocks of a large n, which fill the GPU whatever the launch,
 * cost next to nothing to tune, and later starts do not try again).
 *
 * Every bucket's choice is stored in the tuning store (tunestore.h) as an
 * entry of its own, integrator "hermite", targets_bucket its active count,
 * block its tile, blocks_per_sm its j-split, under the force tuner's device
 * identity and a kernel identity made of the force tuner's (the source,
 * the precision, the N bucket, the NVRTC options) and the bucket.  A start
 * that finds every bucket stored tunes nothing. */
#ifndef ORR_HTUNE_H
#define ORR_HTUNE_H

#include "engine.h"
#include "err.h"
#include "kspec.h"

/* One candidate as measured (or rejected). */
typedef struct {
    int bucket;          /* active-body bucket (engine.h) */
    long active;         /* active bodies timed */
    orr_hlaunch launch;
    int ranges;          /* the j-ranges it launches with */
    double ms;           /* median ms per force + jerk pass; < 0 if not timed */
    double max_rel_err;  /* the larger of the acceleration's and the jerk's; < 0 unchecked */
    int ok;              /* 1: verified and timed */
    int is_default;      /* 1: the default launch */
    char why[160];       /* why rejected; "" when ok */
} orr_htune_trial;

typedef struct {
    double budget_s;     /* seconds of device time; <= 0: 2 */
    int retune;          /* 1: ignore stored choices (0) */
    int device;          /* GPU ordinal (0) */
    volatile int *stop;  /* non-zero stops with ORR_ERR_INTERRUPTED (NULL) */
    void (*report)(const orr_htune_trial *t, void *ctx);   /* every candidate (NULL) */
    void *ctx;
    /* Test hook: applied to a candidate's sample (acc then jerk, 3 ni each)
     * before it is verified.  NULL in normal use. */
    void (*tamper)(const orr_htune_trial *t, double *acc, double *jerk, long ni, void *ctx);
} orr_htune_options;

typedef struct {
    int nbuckets;                       /* buckets n reaches: orr_hbucket(n) + 1 */
    orr_hlaunch launch[ORR_HBUCKETS];   /* the choice per bucket (defaults resolved) */
    double ms[ORR_HBUCKETS];            /* its ms per pass; < 0 when not timed */
    long active[ORR_HBUCKETS];          /* the active count it was timed with */
    char from[ORR_HBUCKETS][8];         /* "tuned", "store" or "default" (not timed) */
    char source[16];     /* "store" (every bucket stored), "tuned" (some tuned now) */
    int ntrials, nfailed;
    double elapsed_s;
    char device[512];    /* device identity */
    char kernel[33];     /* the force tuner's kernel identity it extends */
    char note[ORR_NOTE_MAX]; /* defaults kept and why, a store not saved; "" when none */
} orr_htune_result;

void orr_htune_options_default(orr_htune_options *o);

/* Tunes (or finds stored) the force + jerk launches for spec (its law,
 * precision, softening, block) at n bodies on GPU options->device.  The
 * GPU only: ORR_ERR_ARG on the CPU backend.  Returns ORR_OK with result
 * written when every bucket has a choice (tuned, stored, or the default
 * where nothing verified or fitted the budget, said in the note); an
 * error for invalid arguments, no usable GPU, no reference, memory, or
 * ORR_ERR_INTERRUPTED. */
orr_status orr_htune(const orr_kspec *spec, long n, const orr_htune_options *options,
                     orr_htune_result *result, orr_error *err);

/* Sets the result's launches on an engine of the same n. */
orr_status orr_htune_apply(const orr_htune_result *r, orr_engine *e, orr_error *err);

#endif
