/* tune: the autotuner.  For one backend, force law, precision and body count
 * it searches the kernel parameters that are baked into the generated source
 * (GPU: block size, unroll, threads per body; CPU: j-tile length, OpenMP
 * threads), times every candidate on the real body count, checks its
 * accelerations against a double-precision reference, and remembers the
 * winner per device and kernel in a JSON store (tunestore.h), so the next
 * start with the same identity costs no compiling and no timing.
 *
 * Identity.  Device: GPU "NAME|sm_XY|SMs|driver D|nvrtc M.m", CPU
 * "cpu|<cpu model (features hash)>|<compiler --version line>|threads <nproc>".
 * Kernel: a hash of the generated source with the tuned parameters set to
 * fixed canonical values (so it covers the force-law source and every baked
 * constant: softening, G, box, bodies per thread, Newton steps), the NVRTC
 * options (GPU), the precision and the N bucket (the next power of two >= n);
 * for a slice shape (options.targets < n: one rank of several, timed on its
 * targets against all n) also the bucket of the target count.
 * A stored tuning is used only when both match exactly.
 *
 * Store.  The winner goes into the tuning store (tunestore.h: one JSON
 * file in the kernel-cache directory, saved atomically), with every trial;
 * a corrupt store is ignored (the result's note says so) and rewritten on
 * the next save.
 *
 * Search.  Every candidate: engine created through the kernel cache on n
 * bodies of a Plummer sphere (fixed seed, rounded to the precision), one
 * force evaluation on a sample of up to 256 bodies compared with the CPU
 * backend in double (orr_accel_err, the error relative to max(|a_ref|, rms
 * |a_ref|), within orr_accel_tolerance (1e-5 in float, 1e-12 in double);
 * a candidate that disagrees is rejected and not timed), then 5 timed runs
 * of k force-only evaluations (k so that one run takes >= ~2 ms), the
 * median; a candidate whose first two runs are both 15% slower than the
 * best so far stops there (it cannot win; its ms is the median of those).
 * Invalid combinations are never built; one that fails to compile or
 * launch is recorded as failed and the search goes on.
 * Long passes (GPU, more than 2e11 pairs: N above about 450000) are timed
 * on a share of the targets, the first whole waves of the candidate's
 * blocks (one at least, and at least the first 32768 targets, among which
 * the verified sample then lies), the time scaled to all of them: the same
 * blocks as the full pass without its last partial wave, a twentieth of
 * its time at N = 1M (12 candidates in 2 s on the H100 instead of 2), so
 * the budget buys a search there too (the result's note says so; such a
 * tuning keeps the automatic j-ranges).
 *
 * Candidates.  GPU: block a multiple of 32 up to min(1024, device limit)
 * whose tile fits in shared memory; unroll 1..32 (powers of two, <= block /
 * split); split 1..32 (powers of two) while the blocks launched stay within
 * ~8x what fills the GPU (sm_count * 2048 / block), so small N gets larger
 * splits; bodies per thread 1, 2, 4 where the blocks still number two per
 * SM, each with and without the next tile prefetched through registers;
 * j-ranges 1..16 or automatic.  CPU: tile 256..8192 (powers of two) and
 * threads 1, 2, 4, ..., nproc, 0 (all).  The default configuration is
 * always tried first.
 * Parallel compiling (GPU, 4 or more CPU cores): the coarse grid (for each
 * split it may settle on) and, in an exhaustive search, every candidate are
 * compiled into the kernel cache first by one thread per core (NVRTC is
 * thread-safe, cache writes are atomic).
 * Coarse pass: GPU: the split that gives the GPU half its resident threads
 * (and 4x that; skipped when N does that alone) at block 256, unroll 4,
 * then (block, unroll) (256, 16), (512, 4), (256, 32) at the best split,
 * then ipt 2 and 4 on the best, with prefetch and without, then fixed
 * j-ranges {9, 12, 6, 16, 4, 2, 8, 1} on the best (those two first: at
 * large N a candidate takes longest and they pay most), then the rest of
 * the coarse grid, most promising first ((512, 8), (128, 4), (128, 16),
 * (256, 4), (512, 16), (64, 4), (64, 16), then unroll 1); CPU: threads
 * {1, nproc/2, nproc} at the default tile, then tiles {256, 4096}.  Then
 * hill climbing over the
 * neighbours of the best (block +-32, x2, /2; unroll x2, /2; split x2, /2;
 * ipt x2, /2; prefetch on or off where ipt > 1;
 * CPU: tile x2, /2 and the adjacent thread counts) until nothing improves or
 * the budget is spent.  exhaustive = 1 tries every valid candidate.  Finally
 * the best (up to three, those within 10% of the fastest) are re-timed
 * alternately (A B C A B C ...) and the best median wins, so clock boost
 * early in the search cannot pick the winner.
 *
 * Under load.  A winner that looked fast while the machine was busy with
 * something else must still win: it is timed against the default
 * configuration alternately (A B A B ..., 5 runs each) and kept only when
 * its median is 2% or more below the default's; otherwise the default is
 * stored, and the note says "the winner (...) took X ms against the
 * default's Y ms when timed alternately with it: the default is kept".
 * When the runs of either spread by more than 25% (second slowest less
 * second fastest, over the median) the timings are not trusted: the
 * default is kept and the note says "timings too noisy to trust (...)".
 * On the CPU a stored choice other than the default is timed against the
 * default again at every start (3 runs each, a few ms): one that has become
 * 10% slower is tuned again ("the stored tuning (...) took X ms against
 * the default's Y ms now: tuning again").  GPU starts skip that check, so
 * a cached start stays near the driver's floor; sim:tune{} retunes. */
#ifndef ORR_TUNE_H
#define ORR_TUNE_H

#include <stddef.h>
#include "engine.h"
#include "err.h"
#include "kspec.h"
#include "tunestore.h"   /* the store's listing and clearing, for the tuner's callers */

/* The seed of the Plummer sphere every tuning runs on (this tuner's and
 * the Hermite tuner's, htune.h). */
#define ORR_TUNE_SEED 20261122u

/* When a timing is taken (orr_tune_options.time_hook). */
enum {
    ORR_TUNE_PHASE_SEARCH,    /* candidates, one by one */
    ORR_TUNE_PHASE_RETIME,    /* the finalists, alternately */
    ORR_TUNE_PHASE_DEFAULT,   /* the winner against the default, alternately */
    ORR_TUNE_PHASE_RECHECK,   /* a stored CPU choice against the default, at a later start */
};

/* One candidate as measured (or rejected). */
typedef struct {
    orr_kspec spec;             /* the complete candidate spec */
    double ms;                  /* median force-evaluation time in ms; < 0 if not timed */
    double interactions_per_s;  /* n^2 / (ms * 1e-3); 0 if not timed */
    double max_rel_err;         /* against the reference; < 0 if not checked */
    double compile_s;           /* seconds compiling its kernels (0 when cached) */
    int ok;                     /* 1: built, verified and timed */
    double timed_share;         /* the share of the targets its timed passes ran, ms
                                   scaled from it: 1, or less for a long pass (see
                                   Search) */
    int retimed;                /* 1: a report from the final interleaved re-timing
                                   of the top three (ms is that median); 0: search */
    char why[160];              /* why rejected (compile error, invalid for the device,
                                   "max rel err 3e-02 > 1e-05"); "" when ok */
} orr_tune_trial;

typedef struct {
    double budget_s;     /* seconds of device work on candidates: verifying and timing
                            them, the final re-timing included; compiling (a one-off
                            the kernel cache keeps, done in parallel where it can) and
                            the reference are not counted; <= 0 means the default
                            (2.0) */
    int exhaustive;      /* 1: every valid candidate, ignoring the budget (0) */
    int retune;          /* 1: ignore a stored tuning and tune anew (0) */
    int recheck;         /* 1: a stored CPU choice other than the default is timed against
                            the default once more, and tuned again when slower (1; see
                            "Under load" above) */
    int device;          /* GPU ordinal (0) */
    long targets;        /* bodies whose forces are timed, [0, targets) of the n against
                            all n: the slice shape of one rank of several (dist.h); a
                            shape of its own in the identity (its bucket, the next power
                            of two); 0 = all n (0) */
    volatile int *stop;  /* checked between candidates; non-zero stops the search with
                            ORR_ERR_INTERRUPTED (NULL) */
    /* Called for every candidate as it is measured or rejected, and once more
     * for each re-timed finalist with retimed = 1 (none when only one
     * candidate was within 10% of the fastest).  The
     * trial is only valid during the call.  May be NULL. */
    void (*report)(const orr_tune_trial *t, void *ctx);
    void *ctx;           /* passed to report and tamper */
    /* Test hook: applied to a candidate's sample accelerations (3 ni values)
     * before they are verified.  NULL in normal use. */
    void (*tamper)(const orr_kspec *candidate, double *acc, long ni, void *ctx);
    /* Test hook: every timed run's ms per pass goes through it (phase: one
     * of ORR_TUNE_PHASE_*), to stand for a machine busy at one moment and
     * not at another.  NULL in normal use. */
    double (*time_hook)(const orr_kspec *candidate, int phase, double ms, void *ctx);
} orr_tune_options;

typedef struct {
    orr_kspec best;          /* base spec with the chosen tuned parameters */
    double best_ms;          /* its force-evaluation time in ms (re-timed median; from
                                the store on a hit; < 0 when not measured) */
    double best_interactions_per_s;   /* n^2 / best_ms, or 0 */
    char source[16];         /* "tuned", "store" or "default" (nothing verified) */
    int ntrials;             /* candidates tried in this call (0 on a store hit) */
    int nfailed;             /* of which rejected */
    double elapsed_s;        /* wall seconds spent in the call */
    long n_bucket;           /* next power of two >= n */
    long targets_bucket;     /* next power of two >= options->targets; 0 for all n */
    char backend[8];         /* "cuda" or "cpu" (auto resolved) */
    char device[512];        /* device identity string */
    char kernel[33];         /* kernel identity (hash, 32 hex digits) */
    char note[ORR_NOTE_MAX]; /* e.g. "tuning store PATH is corrupt (REASON); rewriting";
                                "" when there is nothing to say */
} orr_tune_result;

/* Fills the defaults (see the field comments). */
void orr_tune_options_default(orr_tune_options *o);

/* Tunes block/unroll/split (GPU) or tile/threads (CPU) for base_spec's force
 * law, precision, softening, G, box (and, on the GPU, bodies per thread, ftz,
 * Newton steps, which stay as given) at n bodies.  kind AUTO resolves like
 * orr_engine_create (CUDA when usable, else CPU).  options may be NULL
 * (defaults).  With a stored tuning for the same identity (and no retune) it
 * returns at once with source "store": no engine, no compiling, no timing
 * (an exhaustive request is answered only by a stored exhaustive tuning).
 * Otherwise it searches, saves the winner and returns source "tuned"; when no
 * candidate verifies, result->best is the default configuration and source
 * "default" (nothing is saved).  A failure to save is not an error: it goes
 * into result->note.  Returns ORR_OK in all these cases; an error for invalid
 * arguments, a missing reference (no usable compiler or force law), memory, or
 * ORR_ERR_INTERRUPTED.  result is always written; the caller owns it. */
orr_status orr_tune(orr_backend_kind kind, const orr_kspec *base_spec, long n,
                    const orr_tune_options *options, orr_tune_result *result, orr_error *err);

/* The device and kernel identities (and backend, buckets) a tuning with
 * these options is stored under, in result (source "default"); nothing is
 * looked up, compiled or timed.  Ranks compare them to find which of them
 * share one tuning (sim.c). */
orr_status orr_tune_identify(orr_backend_kind kind, const orr_kspec *base_spec, long n,
                             const orr_tune_options *options, orr_tune_result *result,
                             orr_error *err);

/* Looks the identity up in the store only (no compiling, no timing).  On a
 * hit *found = 1 and result holds the stored winner with source "store"; on
 * a miss *found = 0 and result->best is the default configuration with source
 * "default".  A corrupt store is a miss, with result->note saying so (the
 * file is left alone).  GPU identities are those of device 0.  Returns an
 * error only when the identity cannot be computed (invalid spec, unknown
 * force law, no usable device for CUDA, no host compiler for the CPU). */
orr_status orr_tune_lookup(orr_backend_kind kind, const orr_kspec *base_spec, long n,
                           orr_tune_result *result, int *found, orr_error *err);

#endif
