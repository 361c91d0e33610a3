/* tune: the autotuner: candidates, verification, timing and the search
 * (see tune.h); the store it keeps its winners in is tunestore.c. */
#include "tune.h"
#include "kfamily.h"
#include "util.h"
#include "trial.h"
#include "cuda.h"
#include "hostcc.h"
#include "ic.h"
#include "kcache.h"
#include "law.h"
#include "rtc.h"

#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SAMPLE_MAX 256           /* bodies whose accelerations are verified */
#define REPS 5                   /* timed runs per candidate (median) */
#define LONG_REPS 3              /* the same for a long evaluation (>= LONG_MS): */
#define LONG_MS 20.0             /* its timing varies little, and the budget buys more candidates */
#define MIN_RUN_MS 2.0           /* one timed run lasts at least this long */
#define FINALISTS 3              /* at most this many re-timed alternately at the end, */
#define FINALIST_SPREAD 1.10     /* those within 10% of the best */
#define EARLY_OUT 1.15           /* stop timing a candidate this much slower than the best */
#define CHECK_MARGIN 0.02        /* a winner beats the default by this, timed alternately */
#define NOISY 0.25               /* runs spreading more than this are not to be trusted */
#define STALE 1.10               /* a stored choice this much slower than the default is redone */
#define DEFAULT_BUDGET_S 2.0
#define WALL_FACTOR 3.0          /* the search's wall clock, building one by one included
                                    (the parallel prebuild of a grid is not), at most this
                                    many budgets: a small N times a candidate in
                                    microseconds, so device time alone would let it build
                                    hundreds, a second each */
#define LAUNCH_BOUND_MS 0.005    /* a default pass this short is launch latency: no search */

/* Canonical tuned values for the kernel identity (fixed, independent of the
 * defaults, so a change of defaults does not invalidate stored tunings). */
#define CANON_GPU_BLOCK 256
#define CANON_CPU_BLOCK 1024
#define CANON_UNROLL 4
#define MAX_TUNED_RANGES 16      /* j-ranges the tuner tries: 1..16 or automatic */
#define MAX_IPT 4                /* GPU bodies per thread the tuner tries: 1, 2, 4 */
#define IPT_BLOCKS 2.0           /* ... where there are this many blocks per SM (before j-ranges) */
#define SAMPLE_INTERACTIONS 2e11 /* GPU force passes of more pairs are timed on a share of */
#define SAMPLE_WAVES 1           /* the targets: this many whole waves of blocks at least, */
#define SAMPLE_SPAN 32768        /* and the first this many (the verified bodies' span) */

/* ---- identity ------------------------------------------------------------ */

typedef struct {
    orr_backend_kind kind;   /* resolved: CUDA or CPU */
    orr_target target;
    int device;              /* GPU ordinal */
    orr_kspec base;          /* base spec with the tuned parameters at their defaults */
    const orr_kfamily *family;   /* the kernels tuned: their source and what may vary */
    long n, n_bucket;
    long targets;            /* bodies whose forces are timed: [0, targets) against all n */
    long t_bucket;           /* next power of two >= targets; 0 when targets = n */
    orr_gpu_info gpu;        /* GPU only */
    int nproc;               /* CPU only */
    char ident[512];         /* device identity */
    char kernel[33];         /* kernel identity */
} ident;

static long bucket_of(long n)
{
    long b = 1;
    while (b < n)
        b <<= 1;
    return b;
}

static int online_cpus(void)
{
    long p = sysconf(_SC_NPROCESSORS_ONLN);
    return p < 1 ? 1 : p > 4096 ? 4096 : (int)p;
}

/* Resolves the backend and computes both identities. */
static orr_status identify(orr_backend_kind kind, const orr_kspec *base_spec, long n, int device,
                           long targets, ident *id, orr_error *err)
{
    memset(id, 0, sizeof *id);
    id->family = &orr_family_direct;
    if (!base_spec)
        return orr_fail(err, ORR_ERR_ARG, "tuning needs a base kernel spec");
    if (n < 1 || n > (1L << 30))
        return orr_fail(err, ORR_ERR_ARG, "invalid body count %ld: must be from 1 to 2^30", n);
    orr_status st;
    if (kind == ORR_BACKEND_AUTO) {
        orr_error why = {0};
        kind = orr_cuda_usable(device, &why) == ORR_OK ? ORR_BACKEND_CUDA : ORR_BACKEND_CPU;
        orr_error_clear(&why);
    } else if (kind == ORR_BACKEND_CUDA && (st = orr_cuda_usable(device, err)) != ORR_OK) {
        return st;
    }
    id->kind = kind;
    id->target = kind == ORR_BACKEND_CUDA ? ORR_TARGET_GPU : ORR_TARGET_CPU;
    id->device = device;
    if (targets < 0 || targets > n)
        return orr_fail(err, ORR_ERR_ARG, "invalid target count %ld: must be from 1 to the %ld "
                        "bodies (0 for all)", targets, n);
    id->n = n;
    id->n_bucket = bucket_of(n);
    id->targets = targets ? targets : n;
    id->t_bucket = id->targets < n ? bucket_of(id->targets) : 0;

    /* base = the target's default configuration with the base spec's fields */
    orr_kspec def;
    orr_kspec_default(&def, id->target);
    id->base = *base_spec;
    id->base.launch.block = def.launch.block;
    id->base.launch.unroll = def.launch.unroll;
    id->base.launch.split = def.launch.split;
    id->base.launch.threads = def.launch.threads;
    id->base.launch.ranges = def.launch.ranges;
    id->base.launch.ipt = def.launch.ipt;
    id->base.launch.prefetch = def.launch.prefetch;
    if ((st = orr_kspec_validate(&id->base, id->target, err)) != ORR_OK)
        return st;

    if (id->target == ORR_TARGET_GPU) {
        int major = 0, minor = 0;
        if ((st = orr_cuda_device_info(device, &id->gpu, err)) != ORR_OK ||
            (st = orr_rtc_version(&major, &minor, err)) != ORR_OK)
            return st;
        char arch[32];
        orr_cuda_arch_name(&id->gpu, arch, sizeof arch);
        snprintf(id->ident, sizeof id->ident, "%s|%s|%d|driver %d|nvrtc %d.%d", id->gpu.name, arch,
                 id->gpu.sm_count, orr_cuda_driver_version(), major, minor);
    } else {
        const char *compiler = NULL, *cpu = NULL;
        if ((st = orr_hostcc_identity(&compiler, &cpu, err)) != ORR_OK)
            return st;
        id->nproc = online_cpus();
        snprintf(id->ident, sizeof id->ident, "cpu|%s|%s|threads %d", cpu, compiler, id->nproc);
    }

    /* kernel identity: the source with canonical tuned values, and what the
     * source does not show */
    orr_kspec canon = id->base;
    canon.launch.block = id->target == ORR_TARGET_GPU ? CANON_GPU_BLOCK : CANON_CPU_BLOCK;
    canon.launch.unroll = CANON_UNROLL;
    canon.launch.split = 1;
    canon.launch.threads = 0;
    canon.launch.ipt = 1;
    canon.launch.prefetch = 0;
    char *src = NULL;
    if ((st = orr_kspec_source(&canon, id->family, id->target, &src, err)) != ORR_OK)
        return st;
    orr_kkey_builder kb;
    if ((st = orr_kkey_begin(&kb, err)) != ORR_OK) {
        free(src);
        return st;
    }
    char bucket[32];
    snprintf(bucket, sizeof bucket, "%ld", id->n_bucket);
    orr_kkey_add_str(&kb, "orrery-tune-1");
    orr_kkey_add_str(&kb, id->target == ORR_TARGET_GPU ? "gpu" : "cpu");
    orr_kkey_add_str(&kb, id->family->name);
    orr_kkey_add_str(&kb, src);
    orr_kkey_add_str(&kb, orr_precision_name(id->base.phys.precision));
    orr_kkey_add_str(&kb, bucket);
    if (id->t_bucket) {   /* a slice shape (absent for all n: those keys stay as they were) */
        snprintf(bucket, sizeof bucket, "targets %ld", id->t_bucket);
        orr_kkey_add_str(&kb, bucket);
    }
    if (id->target == ORR_TARGET_GPU) {
        const char *opts[ORR_KSPEC_MAX_OPTS];
        int nopts = orr_kspec_nvrtc_options(&id->base, opts);
        for (int k = 0; k < nopts; k++)
            orr_kkey_add_str(&kb, opts[k]);
    }
    orr_kkey key;
    orr_kkey_finish(&kb, &key);
    free(src);
    memcpy(id->kernel, key.hex, sizeof id->kernel);
    return ORR_OK;
}

static int gpu_fits(const ident *id, int block)
{
    size_t elem = ORR_STORED_DOUBLE(id->base.phys.precision) ? sizeof(double) : sizeof(float);
    int maxb = id->gpu.max_threads_per_block < 1024 ? id->gpu.max_threads_per_block : 1024;
    return block >= 32 && block <= maxb && block % 32 == 0 &&
           (size_t)block * 4 * elem <= (size_t)id->gpu.max_shared_per_block;
}

/* The spec a stored tuning describes, if it is valid for this identity. */
static int entry_spec(const ident *id, const orr_tune_entry *e, orr_kspec *spec)
{
    *spec = id->base;
    spec->launch.block = e->block;
    spec->launch.unroll = e->unroll;
    spec->launch.split = e->split;
    spec->launch.threads = e->threads;
    spec->launch.ranges = e->ranges;
    spec->launch.ipt = e->ipt > 0 ? e->ipt : 1;
    spec->launch.prefetch = e->prefetch;
    if (orr_kspec_validate(spec, id->target, NULL) != ORR_OK)
        return 0;
    return id->target == ORR_TARGET_CPU || gpu_fits(id, spec->launch.block);
}

/* Whether id's force passes are long enough to be timed on a share of the
 * targets (timed_targets). */
static int sampled(const ident *id)
{
    return id->target == ORR_TARGET_GPU &&
           (double)id->targets * (double)id->n > SAMPLE_INTERACTIONS;
}

/* The targets a force pass of eng is timed on: all of them; or, when the
 * pass is long (sampled), the first whole waves of its blocks (the blocks
 * the full pass runs, without its last partial wave), SAMPLE_WAVES at
 * least and SAMPLE_SPAN targets at least, where that is at most half of
 * them.  At N = 1M that is one wave, a twentieth of a full pass. */
static long timed_targets(const ident *id, const orr_engine *eng)
{
    const long w = orr_engine_wave_targets(eng);
    if (!sampled(id) || w <= 0)
        return id->targets;
    long waves = SAMPLE_WAVES;
    while (waves * w < SAMPLE_SPAN)
        waves++;
    return 2 * waves * w <= id->targets ? waves * w : id->targets;
}

/* Pair interactions per second of one timed force pass of ms milliseconds. */
static double interactions(const ident *id, double ms)
{
    return (double)id->targets * (double)id->n / (ms * 1e-3);
}

/* One timing run: k force passes on the targets (timed_targets, the time
 * scaled to all of them), ms per pass (passed through the options' timing
 * hook, which tests use to stand for a busy machine). */
static orr_status time_force(const ident *id, const orr_tune_options *o, const orr_kspec *cand,
                             int phase, orr_engine *eng, int k, double *ms, orr_error *err)
{
    const orr_range t = {0, timed_targets(id, eng)};
    orr_status st = orr_engine_time_range(eng, t, k, 1, ms, err);
    if (!st)
        *ms *= (double)id->targets / (double)t.count;
    if (!st && o->time_hook)
        *ms = o->time_hook(cand, phase, *ms, o->ctx);
    return st;
}

static void result_init(orr_tune_result *r, const ident *id)
{
    memset(r, 0, sizeof *r);
    r->best = id->base;
    r->best_ms = -1;
    snprintf(r->source, sizeof r->source, "default");
    r->n_bucket = id->n_bucket;
    r->targets_bucket = id->t_bucket;
    snprintf(r->backend, sizeof r->backend, "%s", orr_backend_name(id->kind));
    snprintf(r->device, sizeof r->device, "%s", id->ident);
    memcpy(r->kernel, id->kernel, sizeof r->kernel);
}

/* Store lookup shared by orr_tune (tuning = 1: a corrupt store will be
 * rewritten, an invalid entry retuned) and orr_tune_lookup.  need_exhaustive:
 * a stored budgeted tuning does not answer an exhaustive request. */
static orr_status lookup(const ident *id, int tuning, int need_exhaustive, orr_tune_result *r,
                         int *found, orr_error *err)
{
    *found = 0;
    orr_tune_entry e;
    orr_tune_store_file file;
    int hit = 0;
    orr_status st = orr_tune_store_get(id->ident, id->kernel, &e, &hit, &file, err);
    if (st)
        return st;
    if (file.corrupt[0])
        orr_note_add(r->note, sizeof r->note, "tuning store %s is corrupt (%s)%s", file.path,
                 file.corrupt, tuning ? "; rewriting" : "");
    else if (file.unreadable[0] && !tuning)   /* when tuning, a failed save says it */
        orr_note_add(r->note, sizeof r->note, "%s", file.unreadable);
    orr_kspec spec;
    if (hit && need_exhaustive && !e.exhaustive) {
        hit = 0;
    } else if (hit && !entry_spec(id, &e, &spec)) {
        orr_note_add(r->note, sizeof r->note, "stored tuning in %s is invalid for this device%s",
                 file.path, tuning ? "; retuning" : "");
        hit = 0;
    }
    if (hit) {
        *found = 1;
        r->best = spec;
        r->best_ms = e.ms;
        r->best_interactions_per_s = e.ms > 0 ? interactions(id, e.ms) : 0;
        snprintf(r->source, sizeof r->source, "store");
    }
    return ORR_OK;
}

/* ---- candidates ---------------------------------------------------------- */

typedef struct {
    int block, unroll, split, threads;
    int ranges;   /* GPU j-ranges; 0 = the engine's automatic choice */
    int ipt;      /* GPU target bodies per thread */
    int prefetch; /* GPU: the next tile staged through registers */
} params;

static const int gpu_unrolls[] = {1, 2, 4, 8, 16, 32};
static const int cpu_blocks[] = {256, 512, 1024, 2048, 4096, 8192};

typedef struct {
    ident id;
    const orr_tune_options *o;
    orr_tune_result *r;
    double *pos, *vel;          /* n bodies, rounded to the precision */
    double *attr;               /* the law's attributes, attr[a * n + i]; NULL without */
    long ni;                    /* sample size */
    long span;                  /* the sample lies in the first span targets */
    double *span_acc;           /* sampled tunings: their accelerations (3 span) */
    long *idx;                  /* sample indices */
    double *ref, *got;          /* 3 ni accelerations */
    double tol;
    double budget_s, spent_s;   /* seconds of device work on candidates: verify, time */
    double search_s0;           /* when the search began (its wall clock: WALL_FACTOR) */
    int walled;                 /* the search stopped at its wall-clock limit */
    int launch_bound;           /* the default's pass is launch latency: no search */
    orr_tune_trial *trials;
    params *tried;
    int ntrials, cap;
    int best;                   /* index of the fastest verified trial, -1 */
    int cpu_threads[32];        /* CPU thread counts, 0 (all) last */
    int nthreads;
} tuner;

static int params_eq(params a, params b)
{
    return a.block == b.block && a.unroll == b.unroll && a.split == b.split &&
           a.threads == b.threads && a.ranges == b.ranges && a.ipt == b.ipt &&
           a.prefetch == b.prefetch;
}

static int max_split(const tuner *t, int ipt)
{
    /* blocks launched = ceil(n split / (block ipt)) may be at most ~8x the
     * blocks that fill the GPU (sm_count * 2048 / block): the block size
     * cancels, so the limit is on n split / ipt */
    double fill = 8.0 * t->id.gpu.sm_count * 2048.0 * ipt;
    int s = 1;
    while (s < 32 && (double)t->id.targets * (2 * s) <= fill)
        s *= 2;
    return s;
}

/* Whether p varies only what the family lets the tuner vary. */
static int family_allows(const tuner *t, params p)
{
    const unsigned tuned = t->id.family->tuned;
    const orr_launch *b = &t->id.base.launch;
    return ((tuned & ORR_TUNE_BLOCK) || p.block == b->block) &&
           ((tuned & ORR_TUNE_UNROLL) || p.unroll == b->unroll) &&
           ((tuned & ORR_TUNE_SPLIT) || p.split == b->split) &&
           ((tuned & ORR_TUNE_RANGES) || p.ranges == b->ranges) &&
           ((tuned & ORR_TUNE_IPT) || p.ipt == b->ipt) &&
           ((tuned & ORR_TUNE_PREFETCH) || p.prefetch == b->prefetch) &&
           ((tuned & ORR_TUNE_THREADS) || p.threads == b->threads);
}

static int valid(const tuner *t, params p)
{
    if (!family_allows(t, p))
        return 0;
    if (t->id.target == ORR_TARGET_CPU) {
        int okb = 0, okt = 0;
        for (size_t k = 0; k < sizeof cpu_blocks / sizeof cpu_blocks[0]; k++)
            okb |= cpu_blocks[k] == p.block;
        for (int k = 0; k < t->nthreads; k++)
            okt |= t->cpu_threads[k] == p.threads;
        return okb && okt && p.unroll == 4 && p.split == 1 && p.ranges == 0 &&
               p.ipt == t->id.base.launch.ipt && p.prefetch == 0;
    }
    if (!gpu_fits(&t->id, p.block) || p.threads != 0 || p.ranges < 0 ||
        p.ranges > MAX_TUNED_RANGES)
        return 0;
    if (p.split < 1 || p.split > max_split(t, p.ipt) || (p.split & (p.split - 1)) || p.block % p.split)
        return 0;
    if (p.prefetch != 0 && p.prefetch != 1)
        return 0;
    /* more bodies per thread only where the blocks launched, targets split
     * / (block ipt), number IPT_BLOCKS per SM before the j-ranges multiply
     * them: large N (on the H100, from N = 262144 at block 256, ipt 2; the
     * rule was every SM's 2048 threads twice over, 1.1M at ipt 2, which
     * left out the 262144 and 1M where ipt 2 with prefetch wins) */
    if (p.ipt != t->id.base.launch.ipt &&
        (p.ipt < 1 || p.ipt > MAX_IPT || (p.ipt & (p.ipt - 1)) ||
         (double)t->id.targets * p.split / ((double)p.block * p.ipt) <
             IPT_BLOCKS * t->id.gpu.sm_count))
        return 0;
    int oku = 0;
    for (size_t k = 0; k < sizeof gpu_unrolls / sizeof gpu_unrolls[0]; k++)
        oku |= gpu_unrolls[k] == p.unroll;
    return oku && p.unroll <= p.block / p.split;
}

static int find_tried(const tuner *t, params p)
{
    for (int k = 0; k < t->ntrials; k++)
        if (params_eq(t->tried[k], p))
            return k;
    return -1;
}

/* Timed runs for a candidate whose evaluation takes ms. */
static int reps_for(double ms)
{
    return ms >= LONG_MS ? LONG_REPS : REPS;
}

/* k evaluations per timed run so that a run takes >= MIN_RUN_MS. */
static int evals_per_run(double ms)
{
    if (!(ms > 0))
        return 1;
    double k = ceil(MIN_RUN_MS / ms);
    return k < 1 ? 1 : k > 100000 ? 100000 : (int)k;
}

static void set_why(orr_tune_trial *tr, const char *msg)
{
    size_t len = strlen(msg);
    if (len >= sizeof tr->why)
        len = sizeof tr->why - 1;
    memcpy(tr->why, msg, len);
    tr->why[len] = '\0';
    for (char *c = tr->why; *c; c++)
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
}

/* The fastest verified trials (at most FINALISTS, within FINALIST_SPREAD of
 * the best), fastest first; returns how many. */
static int finalists(const tuner *t, int fin[FINALISTS])
{
    int nf = 0;
    for (int k = 0; k < t->ntrials; k++) {   /* insertion into a sorted top list */
        if (!t->trials[k].ok)
            continue;
        int at = nf < FINALISTS ? nf++ : FINALISTS;
        while (at > 0 && t->trials[fin[at - 1]].ms > t->trials[k].ms) {
            if (at < FINALISTS)
                fin[at] = fin[at - 1];
            at--;
        }
        if (at < FINALISTS)
            fin[at] = k;
    }
    while (nf > 1 && t->trials[fin[nf - 1]].ms > FINALIST_SPREAD * t->trials[fin[0]].ms)
        nf--;
    return nf;
}

/* Seconds the final re-timing is expected to take, kept out of the search. */
static double reserve_s(const tuner *t)
{
    int fin[FINALISTS], nf = finalists(t, fin);
    if (nf < 2)
        return 0;
    const orr_tune_trial *b = &t->trials[fin[0]];
    return nf * (reps_for(b->ms) + 1) * b->ms * b->timed_share * evals_per_run(b->ms) * 1e-3;
}

static int budget_left(tuner *t)
{
    if (t->o->exhaustive)
        return 1;
    if (t->ntrials == 1 && t->trials[0].ok && t->trials[0].ms < LAUNCH_BOUND_MS)
        t->launch_bound = 1;
    if (!t->launch_bound && orr_now_s() - t->search_s0 >= WALL_FACTOR * t->budget_s)
        t->walled = 1;
    return !t->launch_bound && !t->walled && t->spent_s + reserve_s(t) < t->budget_s;
}

/* Builds, verifies and times one candidate; records it as a trial.  Only an
 * interruption or a host allocation failure is returned as an error. */
/* The complete spec of a candidate. */
static orr_kspec spec_of(const tuner *t, params p)
{
    orr_kspec s = t->id.base;
    s.launch.block = p.block;
    s.launch.unroll = p.unroll;
    s.launch.split = p.split;
    s.launch.threads = p.threads;
    s.launch.ranges = p.ranges;
    s.launch.ipt = p.ipt;
    s.launch.prefetch = p.prefetch;
    return s;
}

/* Parallel compilation of GPU candidates into the kernel cache, before they
 * are timed one by one: NVRTC is thread-safe and the cache writes are
 * atomic.  A candidate that fails here is compiled again (and its error
 * recorded) when measured. */
typedef struct {
    const tuner *t;
    const params *list;
    int count, next;
    char arch[16];
    pthread_mutex_t lock;
} prebuild_pool;

static void *prebuild_worker(void *arg)
{
    prebuild_pool *pool = arg;
    for (;;) {
        pthread_mutex_lock(&pool->lock);
        int k = pool->next++;
        pthread_mutex_unlock(&pool->lock);
        if (k >= pool->count || (pool->t->o->stop && *pool->t->o->stop))
            return NULL;
        orr_kspec spec = spec_of(pool->t, pool->list[k]);
        orr_error e = {0};
        orr_cuda_prebuild(&spec, pool->arch, &e);
        orr_error_clear(&e);
    }
}

static void prebuild(tuner *t, const params *list, int count)
{
    enum { MAX_WORKERS = 64 };
    const double t0 = orr_now_s();
    orr_error e = {0};
    char dir[PATH_MAX];
    int workers = online_cpus();
    workers = workers > MAX_WORKERS ? MAX_WORKERS : workers;
    /* without a usable cache a prebuilt kernel would be compiled again */
    if (t->id.target != ORR_TARGET_GPU || count < 2 || workers < 2 || orr_rtc_open(&e) ||
        orr_kcache_dir(dir, sizeof dir, &e)) {
        orr_error_clear(&e);
        return;
    }
    (void)orr_law_builtin_names();   /* its one-time setup, before the threads */
    prebuild_pool pool = {.t = t, .list = list, .count = count};
    orr_cuda_arch_name(&t->id.gpu, pool.arch, sizeof pool.arch);
    pthread_mutex_init(&pool.lock, NULL);
    pthread_t tid[MAX_WORKERS];
    int started = 0;
    for (int k = 0; k < workers; k++)
        started += pthread_create(&tid[started], NULL, prebuild_worker, &pool) == 0;
    for (int k = 0; k < started; k++)
        pthread_join(tid[k], NULL);
    pthread_mutex_destroy(&pool.lock);
    t->search_s0 += orr_now_s() - t0;   /* the wall clock counts candidates built one by one */
}

/* The sample's accelerations from eng into t->got: from a whole force
 * pass, or in a sampled tuning from the pass on the targets it times. */
static orr_status sample_accel(tuner *t, orr_engine *eng, orr_error *err)
{
    if (!t->span_acc)
        return orr_engine_accel_sample(eng, t->ni, t->idx, t->got, err);
    const orr_range timed = {0, timed_targets(&t->id, eng)}, span = {0, t->span};
    orr_status st = orr_engine_force_part(eng, timed, ORR_FORCE_WHOLE, err);
    if (!st)
        st = orr_engine_get_accel(eng, span, t->span_acc, err);
    for (long k = 0; !st && k < t->ni; k++)
        memcpy(t->got + 3 * k, t->span_acc + 3 * t->idx[k], 3 * sizeof(double));
    return st;
}

static orr_status measure(tuner *t, params p, orr_error *err)
{
    if (t->o->stop && *t->o->stop)
        return orr_fail(err, ORR_ERR_INTERRUPTED, "tuning interrupted after %d candidates",
                        t->ntrials);
    if (t->ntrials == t->cap) {
        int cap = t->cap ? 2 * t->cap : 64;
        orr_tune_trial *tr = realloc(t->trials, sizeof *tr * (size_t)cap);
        if (tr)
            t->trials = tr;
        params *pp = realloc(t->tried, sizeof *pp * (size_t)cap);
        if (pp)
            t->tried = pp;
        if (!tr || !pp)
            return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        t->cap = cap;
    }
    orr_tune_trial tr;
    memset(&tr, 0, sizeof tr);
    tr.spec = spec_of(t, p);
    tr.ms = -1;
    tr.max_rel_err = -1;

    orr_error e = {0};
    orr_engine *eng = NULL;
    orr_status st = orr_engine_create(&eng, t->id.kind, &tr.spec, ORR_VARIANT_TILED, t->id.n,
                                      t->id.device, NULL, 0, &e);
    if (eng) {
        tr.compile_s = orr_engine_build_info(eng)->compile_s;
        tr.timed_share = (double)timed_targets(&t->id, eng) / (double)t->id.targets;
    }
    double t0 = orr_now_s();   /* the budget is device time: building does not count */
    if (!st)
        st = orr_engine_set_state(eng, t->pos, t->vel, &e);
    if (!st && t->attr)
        st = orr_engine_set_attr(eng, t->attr, &e);
    if (!st)   /* the verification run is also the warm-up */
        st = sample_accel(t, eng, &e);
    if (!st) {
        if (t->o->tamper)
            t->o->tamper(&tr.spec, t->got, t->ni, t->o->ctx);
        tr.max_rel_err = orr_accel_err(t->got, t->ref, t->ni);
        if (!(tr.max_rel_err <= t->tol)) {
            snprintf(tr.why, sizeof tr.why, "max rel err %.1e > %.0e", tr.max_rel_err, t->tol);
            st = ORR_ERR_ARG;
        }
    }
    if (!st) {
        /* one evaluation sizes the runs; when it alone lasts MIN_RUN_MS it is
         * the first run (large N: saves an evaluation per candidate) */
        double ms0 = 0, runs[REPS];
        int nruns = 0;
        st = time_force(&t->id, t->o, &tr.spec, ORR_TUNE_PHASE_SEARCH, eng, 1, &ms0, &e);
        int k = evals_per_run(ms0);
        if (k == 1)
            runs[nruns++] = ms0;
        double best_ms = t->best >= 0 ? t->trials[t->best].ms : INFINITY;
        double fastest = nruns ? ms0 : INFINITY;
        const int reps = reps_for(ms0);
        while (!st && nruns < reps) {
            /* a candidate clearly slower than the best needs no median */
            if (nruns >= 2 && fastest > EARLY_OUT * best_ms)
                break;
            st = time_force(&t->id, t->o, &tr.spec, ORR_TUNE_PHASE_SEARCH, eng, k, &runs[nruns],
                            &e);
            if (!st) {
                fastest = runs[nruns] < fastest ? runs[nruns] : fastest;
                nruns++;
            }
        }
        if (!st) {
            tr.ms = orr_median(runs, nruns);
            tr.interactions_per_s = interactions(&t->id, tr.ms);
            tr.ok = tr.ms > 0;
            if (!tr.ok)
                snprintf(tr.why, sizeof tr.why, "timing gave %g ms", tr.ms);
        }
    }
    t->spent_s += orr_now_s() - t0;   /* verifying and timing */
    if (st && !tr.why[0])
        set_why(&tr, e.msg[0] ? e.msg : orr_status_name(st));
    orr_engine_destroy(eng);
    orr_error_clear(&e);

    int at = t->ntrials++;
    t->trials[at] = tr;
    t->tried[at] = p;
    if (!tr.ok)
        t->r->nfailed++;
    else if (t->best < 0 || tr.ms < t->trials[t->best].ms)
        t->best = at;
    t->r->ntrials = t->ntrials;
    if (t->o->report)
        t->o->report(&tr, t->o->ctx);
    if (st == ORR_ERR_NOMEM)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory while tuning");
    return ORR_OK;
}

/* Measures p when it is valid, untried and the budget allows.  *stop_search
 * is set when the budget is spent. */
static orr_status try_params(tuner *t, params p, int *spent, orr_error *err)
{
    if (*spent || !valid(t, p) || find_tried(t, p) >= 0)
        return ORR_OK;
    if (t->ntrials > 0 && !budget_left(t)) {   /* the first (default) always runs */
        *spent = 1;
        return ORR_OK;
    }
    return measure(t, p, err);
}

static params params_of(const orr_kspec *k)
{
    params p = {k->launch.block, k->launch.unroll, k->launch.split, k->launch.threads,
                k->launch.ranges, k->launch.ipt, k->launch.prefetch};
    return p;
}

static params default_params(const tuner *t)
{
    const orr_launch *b = &t->id.base.launch;
    params p = {b->block, b->unroll, b->split, b->threads, 0, b->ipt, b->prefetch};
    return p;
}

/* GPU bodies per thread (register blocking: each thread keeps ipt bodies'
 * sums, so a source loaded once serves ipt of them) on the two fastest
 * shapes so far: 2 and 4, where N still gives every SM two blocks (valid),
 * each with the next tile prefetched through registers and without
 * (prefetch 1 first: on the H100 at N = 262144 and 1M, block 256 or 512
 * with unroll 32 and ipt 2 ran 3-5% faster with it, while other shapes
 * ran up to 3% slower and 512 / 16 / ipt 2 6.5% slower; at 1M 512 / 16
 * was the fastest shape at ipt 1 and 256 / 32 the second, hence two).
 * Refinement goes on from there.  It pays at large N (issue: 1M float). */
static orr_status ipt_pass(tuner *t, int *spent, orr_error *err)
{
    orr_status st = ORR_OK;
    if (t->id.target != ORR_TARGET_GPU || t->best < 0 ||
        !(t->id.family->tuned & ORR_TUNE_IPT))
        return st;
    int top[2] = {-1, -1};   /* the fastest two verified shapes at the base ipt */
    for (int k = 0; k < t->ntrials; k++) {
        const params q = t->tried[k];
        if (!t->trials[k].ok || q.ipt != t->id.base.launch.ipt || q.prefetch || q.ranges)
            continue;
        if (top[0] < 0 || t->trials[k].ms < t->trials[top[0]].ms) {
            top[1] = top[0];
            top[0] = k;
        } else if (top[1] < 0 || t->trials[k].ms < t->trials[top[1]].ms) {
            top[1] = k;
        }
    }
    static const int tries[][2] = {{2, 1}, {2, 0}, {4, 0}, {4, 1}};   /* ipt, prefetch */
    for (size_t k = 0; !st && k < sizeof tries / sizeof tries[0]; k++)
        for (int b = 0; !st && b < 2 && top[b] >= 0; b++) {
            params p = t->tried[top[b]];
            p.ipt = tries[k][0];
            p.prefetch = tries[k][1];
            st = try_params(t, p, spent, err);
        }
    return st;
}

/* GPU j-ranges for the best so far (no compiling: a launch setting).  The
 * engine's automatic choice (0) is what the other candidates ran with; this
 * tries fixed counts, where each range keeps at least 4 tiles.  The
 * likeliest gains first: on the H100 at N = 262144, block 256, unroll 32,
 * ipt 2 with prefetch ran 2.03e12 interactions/s with 6 to 8 ranges and
 * 2.09e12 with 9, 2.08e12 with 10, 2.07e12 with 12, 2.065e12 with 16 (the
 * automatic choice).  A sampled tuning (timed_targets) keeps the automatic
 * choice: it times whole waves, and the last partial wave is what ranges
 * mend. */
static orr_status ranges_pass(tuner *t, int *spent, orr_error *err)
{
    static const int counts[] = {9, 12, 6, 16, 4, 2, 8, 1};
    orr_status st = ORR_OK;
    if (t->id.target != ORR_TARGET_GPU || t->best < 0 || sampled(&t->id))
        return st;
    params base = t->tried[t->best];
    long tiles = (t->id.n + base.block - 1) / base.block;
    for (size_t k = 0; !st && k < sizeof counts / sizeof counts[0]; k++) {
        params p = base;
        p.ranges = counts[k];
        if (4L * counts[k] <= tiles)
            st = try_params(t, p, spent, err);
    }
    return st;
}

/* Coarse pass.  GPU: threads per body first (the coarse set for N at block
 * 256, unroll 4; none when N fills the GPU alone), then blocks
 * {64,128,256,512} x unroll {1,4,8,16,32} (a subset) at the best split, most
 * promising first (from the H100 sweeps: unroll 8-32 for gravity-like laws,
 * 4 for laws with branches or exponentials), so a small budget still sees
 * the main axes; coarse() tries the first COARSE_HEAD of them (and
 * prebuilds all), coarse_rest() the others after the ipt and j-range
 * passes.  CPU: thread counts at the default tile, then tiles {256, 4096}
 * (1024 is the default). */
static const int coarse_order[][2] = {{256, 16}, {512, 4},  {256, 32}, {512, 8},  {128, 4},
                                      {128, 16}, {256, 4},  {512, 16}, {64, 4},   {64, 16},
                                      {256, 1},  {128, 1},  {512, 1},  {64, 1}};
enum { NORDER = sizeof coarse_order / sizeof coarse_order[0] };
#define COARSE_HEAD 3   /* the coarse pass's first part: its likeliest winners */

static orr_status coarse(tuner *t, int *spent, orr_error *err)
{
    orr_status st = try_params(t, default_params(t), spent, err);
    if (st)
        return st;
    if (t->id.target == ORR_TARGET_GPU) {
        /* sfill: the split that gives the GPU half its resident threads
         * (1024 per SM; enough for this compute-bound kernel), and 4x that;
         * when N alone does that, split 1 only (refinement may still try 2) */
        int smax = max_split(t, t->id.base.launch.ipt), sfill = 1;
        double half = (double)t->id.gpu.sm_count * 1024.0 * t->id.base.launch.ipt;
        while (sfill < smax && (double)t->id.targets * sfill < half)
            sfill *= 2;
        int splits[3] = {sfill, smax < 4 * sfill ? smax : 4 * sfill, 1};
        const int (*order)[2] = coarse_order;
        /* compile the whole coarse grid at once, in parallel, unless the
         * default's pass already ended the search (launch-bound: a first
         * start of a 48-body simulation built the grid for 77 s on a 2 x H100
         * machine and then tried none of it) */
        if (online_cpus() >= 4 && budget_left(t)) {
            params list[3 + 3 * NORDER];
            int count = 0;
            for (int k = 0; k < 3; k++) {
                if (sfill > 1)
                    list[count++] = (params){256, 4, splits[k], 0, 0, t->id.base.launch.ipt, 0};
                for (int q = 0; q < NORDER && (k == 0 || splits[k] != splits[k - 1]); q++)
                    list[count++] = (params){order[q][0], order[q][1], splits[k], 0, 0, t->id.base.launch.ipt, 0};
            }
            prebuild(t, list, count);
        }
        for (int k = 0; !st && sfill > 1 && k < 3; k++) {
            params p = {256, 4, splits[k], 0, 0, t->id.base.launch.ipt, 0};
            st = try_params(t, p, spent, err);
        }
        int split = t->best >= 0 ? t->tried[t->best].split : 1;
        for (size_t k = 0; !st && k < COARSE_HEAD; k++) {
            params p = {order[k][0], order[k][1], split, 0, 0, t->id.base.launch.ipt, 0};
            st = try_params(t, p, spent, err);
        }
        return st;
    }
    int half = 1;
    while (half * 2 <= t->id.nproc / 2)
        half *= 2;
    int threads[3] = {1, half, t->id.nproc};
    for (int k = 0; !st && k < 3; k++) {
        params p = {t->id.base.launch.block, 4, 1, threads[k], 0, t->id.base.launch.ipt, 0};
        st = try_params(t, p, spent, err);
    }
    int th = t->best >= 0 ? t->tried[t->best].threads : 0;
    static const int blocks[] = {256, 4096};
    for (size_t k = 0; !st && k < sizeof blocks / sizeof blocks[0]; k++) {
        params p = {blocks[k], 4, 1, th, 0, t->id.base.launch.ipt, 0};
        st = try_params(t, p, spent, err);
    }
    return st;
}

/* The rest of the GPU coarse pass (after the ipt and j-range passes, which
 * pay most at large N, where a candidate takes longest), at the split of
 * the best so far. */
static orr_status coarse_rest(tuner *t, int *spent, orr_error *err)
{
    orr_status st = ORR_OK;
    if (t->id.target != ORR_TARGET_GPU)
        return st;
    int split = t->best >= 0 ? t->tried[t->best].split : 1;
    for (size_t k = COARSE_HEAD; !st && k < NORDER; k++) {
        params p = {coarse_order[k][0], coarse_order[k][1], split, 0, 0, t->id.base.launch.ipt, 0};
        st = try_params(t, p, spent, err);
    }
    return st;
}

/* Neighbours of p; returns how many were written to out (at most 11). */
static int neighbours(const tuner *t, params p, params out[11])
{
    int n = 0;
    params q;
    if (t->id.target == ORR_TARGET_GPU) {
        const int blocks[4] = {p.block - 32, p.block + 32, p.block * 2, p.block / 2};
        for (int k = 0; k < 4; k++) {
            q = p;
            q.block = blocks[k];
            out[n++] = q;
        }
        const int unrolls[2] = {p.unroll * 2, p.unroll / 2};
        const int splits[2] = {p.split * 2, p.split / 2};
        for (int k = 0; k < 2; k++) {
            q = p;
            q.unroll = unrolls[k];
            out[n++] = q;
            q = p;
            q.split = splits[k];
            out[n++] = q;
        }
        if (p.ipt > 1 || (t->id.family->tuned & ORR_TUNE_IPT)) {
            const int ipts[2] = {p.ipt * 2, p.ipt / 2};
            for (int k = 0; k < 2; k++) {
                q = p;
                q.ipt = ipts[k];
                out[n++] = q;
            }
        }
        if (p.ipt > 1 || p.prefetch) {   /* prefetch where it has paid: ipt 2 and 4 */
            q = p;
            q.prefetch = !p.prefetch;
            out[n++] = q;
        }
        return n;
    }
    const int blocks[2] = {p.block * 2, p.block / 2};
    for (int k = 0; k < 2; k++) {
        q = p;
        q.block = blocks[k];
        out[n++] = q;
    }
    for (int k = 0; k < t->nthreads; k++)
        if (t->cpu_threads[k] == p.threads) {   /* the adjacent thread counts */
            for (int d = -1; d <= 1; d += 2)
                if (k + d >= 0 && k + d < t->nthreads) {
                    q = p;
                    q.threads = t->cpu_threads[k + d];
                    out[n++] = q;
                }
            break;
        }
    return n;
}

/* Hill climbing from the best until no neighbour improves or the budget is spent. */
static orr_status refine(tuner *t, int *spent, orr_error *err)
{
    orr_status st = ORR_OK;
    while (!st && !*spent && t->best >= 0) {
        int from = t->best;
        params nb[11];
        int nn = neighbours(t, t->tried[from], nb);
        for (int k = 0; !st && k < nn; k++)
            st = try_params(t, nb[k], spent, err);
        if (t->best == from)
            break;
    }
    return st;
}

static orr_status exhaustive(tuner *t, orr_error *err)
{
    int spent = 0;
    orr_status st = try_params(t, default_params(t), &spent, err);
    if (t->id.target == ORR_TARGET_CPU) {
        for (size_t b = 0; !st && b < sizeof cpu_blocks / sizeof cpu_blocks[0]; b++)
            for (int k = 0; !st && k < t->nthreads; k++) {
                params p = {cpu_blocks[b], 4, 1, t->cpu_threads[k], 0, t->id.base.launch.ipt, 0};
                st = try_params(t, p, &spent, err);
            }
        return st;
    }
    params *list = malloc(sizeof *list * 2 * 3 * 6 * 32 *
                          (sizeof gpu_unrolls / sizeof gpu_unrolls[0]));
    if (!list)
        return st ? st : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    int count = 0;
    for (int pf = 0; pf <= 1; pf++)
        for (int ipt = 1; ipt <= MAX_IPT; ipt *= 2)
            for (int split = 1; split <= 32; split *= 2)
                for (int block = 32; block <= 1024; block += 32)
                    for (size_t u = 0; u < sizeof gpu_unrolls / sizeof gpu_unrolls[0]; u++) {
                        params p = {block, gpu_unrolls[u], split, 0, 0, ipt, pf};
                        if (valid(t, p) && find_tried(t, p) < 0)
                            list[count++] = p;
                    }
    if (!st)
        prebuild(t, list, count);
    for (int k = 0; !st && k < count; k++)
        st = try_params(t, list[k], &spent, err);
    free(list);
    return st ? st : ranges_pass(t, &spent, err);
}

/* Re-times the finalists alternately (A B C A B C ...), REPS rounds
 * (LONG_REPS for long evaluations), and
 * makes the best median the winner (with one finalist, its search median).  Returns the
 * winner's index and its median in *ms. */
static orr_status retime(tuner *t, int *winner, double *ms, orr_error *err)
{
    int fin[FINALISTS], nf = finalists(t, fin);
    *winner = t->best;
    *ms = t->best >= 0 ? t->trials[t->best].ms : -1;
    if (nf < 2)
        return ORR_OK;

    orr_engine *eng[FINALISTS] = {NULL};
    int evals[FINALISTS];
    double runs[FINALISTS][REPS];
    int live[FINALISTS];
    orr_error e = {0};
    for (int f = 0; f < nf; f++) {
        double warm = 0;
        live[f] = orr_engine_create(&eng[f], t->id.kind, &t->trials[fin[f]].spec,
                                    ORR_VARIANT_TILED, t->id.n, t->id.device, NULL, 0, &e) ==
                      ORR_OK &&
                  orr_engine_set_state(eng[f], t->pos, t->vel, &e) == ORR_OK &&
                  (!t->attr || orr_engine_set_attr(eng[f], t->attr, &e) == ORR_OK) &&
                  time_force(&t->id, t->o, &t->trials[fin[f]].spec, ORR_TUNE_PHASE_RETIME, eng[f], 1,
                             &warm, &e) == ORR_OK;
        evals[f] = evals_per_run(t->trials[fin[f]].ms);
        orr_error_clear(&e);
    }
    const int reps = reps_for(t->trials[fin[0]].ms);
    for (int r = 0; r < reps; r++)
        for (int f = 0; f < nf; f++)
            if (live[f] && time_force(&t->id, t->o, &t->trials[fin[f]].spec, ORR_TUNE_PHASE_RETIME,
                                     eng[f], evals[f], &runs[f][r], &e) != ORR_OK) {
                live[f] = 0;
                orr_error_clear(&e);
            }
    double best = INFINITY;
    for (int f = 0; f < nf; f++) {
        orr_engine_destroy(eng[f]);
        if (!live[f])
            continue;
        orr_tune_trial tr = t->trials[fin[f]];
        tr.ms = orr_median(runs[f], reps);
        tr.interactions_per_s = interactions(&t->id, tr.ms);
        tr.retimed = 1;
        if (t->o->report)
            t->o->report(&tr, t->o->ctx);
        if (tr.ms < best) {
            best = tr.ms;
            *winner = fin[f];
            *ms = tr.ms;
        }
    }
    if (t->o->stop && *t->o->stop)
        return orr_fail(err, ORR_ERR_INTERRUPTED, "tuning interrupted");
    return ORR_OK;
}

/* Times specs a and b alternately (A B A B ...), `pairs` runs each of
 * about MIN_RUN_MS: their medians into ms[2] and their spreads into
 * spread[2]: (second slowest - second fastest) / median, so one stray run
 * does not count (with 3 runs or fewer: slowest - fastest). */
static orr_status interleave(tuner *t, const orr_kspec *a, const orr_kspec *b, int phase,
                             int pairs, double ms[2], double spread[2], orr_error *err)
{
    const orr_kspec *spec[2] = {a, b};
    orr_engine *eng[2] = {NULL, NULL};
    double runs[2][REPS], warm[2] = {0, 0};
    int evals[2];
    pairs = pairs > REPS ? REPS : pairs;
    orr_status st = ORR_OK;
    for (int k = 0; k < 2 && !st; k++) {
        st = orr_engine_create(&eng[k], t->id.kind, spec[k], ORR_VARIANT_TILED, t->id.n,
                               t->id.device, NULL, 0, err);
        if (!st)
            st = orr_engine_set_state(eng[k], t->pos, t->vel, err);
        if (!st && t->attr)
            st = orr_engine_set_attr(eng[k], t->attr, err);
        if (!st)
            st = time_force(&t->id, t->o, spec[k], phase, eng[k], 1, &warm[k], err);
        evals[k] = evals_per_run(warm[k]);
    }
    for (int r = 0; !st && r < pairs; r++)
        for (int k = 0; !st && k < 2; k++)
            st = time_force(&t->id, t->o, spec[k], phase, eng[k], evals[k], &runs[k][r], err);
    for (int k = 0; k < 2; k++) {
        orr_engine_destroy(eng[k]);
        if (st)
            continue;
        ms[k] = orr_median(runs[k], pairs);   /* sorts the runs */
        const int cut = pairs > 3;
        const double lo = runs[k][cut], hi = runs[k][pairs - 1 - cut];
        spread[k] = ms[k] > 0 ? (hi - lo) / ms[k] : INFINITY;
    }
    return st;
}

/* The winner against the default configuration, timed alternately: a
 * winner that looked fast while the machine was busy (another build,
 * another job) must still beat the default by CHECK_MARGIN.  *winner
 * becomes the default's trial when it does not, and also when the runs
 * spread too much to tell (over NOISY): then the note says so, and the
 * default is what is stored. */
static orr_status check_default(tuner *t, int *winner, double *win_ms, orr_error *err)
{
    const int def = find_tried(t, default_params(t));
    if (*winner < 0 || def < 0 || def == *winner || !t->trials[def].ok)
        return ORR_OK;
    double ms[2], spread[2];
    orr_status st = interleave(t, &t->trials[*winner].spec, &t->trials[def].spec,
                               ORR_TUNE_PHASE_DEFAULT, REPS, ms, spread, err);
    if (st)
        return st;
    char w[128];
    orr_launch_describe(&t->trials[*winner].spec.launch, w, sizeof w);
    if (spread[0] > NOISY || spread[1] > NOISY) {
        orr_note_add(t->r->note, sizeof t->r->note,
                 "timings too noisy to trust (runs spread %.0f%% for the winner, %s, and %.0f%% "
                 "for the default): the default is kept",
                 100 * spread[0], w, 100 * spread[1]);
        *winner = def;
        *win_ms = ms[1];
    } else if (!(ms[0] < ms[1] * (1 - CHECK_MARGIN))) {
        orr_note_add(t->r->note, sizeof t->r->note,
                 "the winner (%s) took %.4g ms against the default's %.4g ms when timed "
                 "alternately with it: the default is kept",
                 w, ms[0], ms[1]);
        *winner = def;
        *win_ms = ms[1];
    } else {
        *win_ms = ms[0];
    }
    return ORR_OK;
}

/* The reference accelerations: the CPU backend in double on the same
 * (precision-rounded) bodies.  For a GPU run without a usable host compiler
 * the GPU's default configuration in double stands in, with a note. */
static orr_status reference(tuner *t, orr_error *err)
{
    orr_kspec rs;
    orr_kspec_reference(&t->id.base.phys, &rs);
    const char *which = "CPU";
    orr_engine *eng = NULL;
    orr_status st = orr_engine_create(&eng, ORR_BACKEND_CPU, &rs, ORR_VARIANT_TILED, t->id.n, 0,
                                      NULL, 0, err);
    if (st && t->id.target == ORR_TARGET_GPU && st != ORR_ERR_NOMEM) {
        orr_note_add(t->r->note, sizeof t->r->note,
                 "CPU reference unavailable (%.200s); verified against the GPU default "
                 "configuration in double", err->msg);
        orr_error_clear(err);
        which = "CUDA";
        rs = t->id.base;
        rs.phys.precision = ORR_DOUBLE;
        rs.launch.newton = 2;
        st = orr_engine_create(&eng, ORR_BACKEND_CUDA, &rs, ORR_VARIANT_TILED, t->id.n,
                               t->id.device, NULL, 0, err);
    }
    if (!st)
        st = orr_engine_set_state(eng, t->pos, NULL, err);
    if (!st && t->attr)
        st = orr_engine_set_attr(eng, t->attr, err);
    if (!st)
        st = orr_engine_accel_sample(eng, t->ni, t->idx, t->ref, err);
    orr_engine_destroy(eng);
    if (st)
        orr_error_context(err, "tuning reference (%s backend, double)", which);
    return st;
}

static void tuner_free(tuner *t)
{
    free(t->attr);
    free(t->pos);
    free(t->vel);
    free(t->idx);
    free(t->span_acc);
    free(t->ref);
    free(t->got);
    free(t->trials);
    free(t->tried);
}

/* Saves the winner and every trial in the store (tunestore.h); what the
 * save could not promise goes to the result's note. */
static orr_status save(const tuner *t, int winner, double ms, orr_error *err)
{
    orr_tune_stored_trial *trials = malloc(sizeof *trials * (size_t)(t->ntrials + 1));
    if (!trials)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    for (int k = 0; k < t->ntrials; k++) {
        const orr_tune_trial *tr = &t->trials[k];
        trials[k] = (orr_tune_stored_trial){tr->spec.launch.block, tr->spec.launch.unroll,
                                            tr->spec.launch.split, tr->spec.launch.threads,
                                            tr->spec.launch.ranges, tr->spec.launch.ipt, 0,
                                            tr->ms, tr->max_rel_err,
                                            tr->ok, tr->why, tr->spec.launch.prefetch};
    }
    const orr_kspec *w = &t->trials[winner].spec;
    orr_tune_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.device, sizeof e.device, "%s", t->id.ident);
    snprintf(e.kernel, sizeof e.kernel, "%s", t->id.kernel);
    snprintf(e.backend, sizeof e.backend, "%s", orr_backend_name(t->id.kind));
    snprintf(e.precision, sizeof e.precision, "%s", orr_precision_name(t->id.base.phys.precision));
    snprintf(e.force, sizeof e.force, "%s", t->id.base.phys.force);
    e.n_bucket = t->id.n_bucket;
    e.exhaustive = t->o->exhaustive != 0;
    e.budget_s = t->budget_s;
    e.block = w->launch.block;
    e.unroll = w->launch.unroll;
    e.split = w->launch.split;
    e.threads = w->launch.threads;
    e.ranges = w->launch.ranges;
    e.ipt = w->launch.ipt;
    e.prefetch = w->launch.prefetch;
    e.ms = ms;
    e.interactions_per_s = interactions(&t->id, ms);
    e.targets_bucket = t->id.t_bucket;
    orr_status st = orr_tune_store_put(&e, trials, t->ntrials, t->r->note, sizeof t->r->note,
                                       err);
    free(trials);
    return st;
}

/* ---- public -------------------------------------------------------------- */

void orr_tune_options_default(orr_tune_options *o)
{
    memset(o, 0, sizeof *o);
    o->budget_s = DEFAULT_BUDGET_S;
    o->recheck = 1;
}

orr_status orr_tune_identify(orr_backend_kind kind, const orr_kspec *base_spec, long n,
                             const orr_tune_options *options, orr_tune_result *result,
                             orr_error *err)
{
    orr_tune_options defaults;
    orr_tune_options_default(&defaults);
    const orr_tune_options *o = options ? options : &defaults;
    ident id;
    memset(result, 0, sizeof *result);
    orr_status st = identify(kind, base_spec, n, o->device, o->targets, &id, err);
    if (!st)
        result_init(result, &id);
    return st;
}

orr_status orr_tune_lookup(orr_backend_kind kind, const orr_kspec *base_spec, long n,
                           orr_tune_result *result, int *found, orr_error *err)
{
    orr_trace("tuning store lookup");
    double t0 = orr_now_s();
    ident id;
    *found = 0;
    memset(result, 0, sizeof *result);
    orr_status st = identify(kind, base_spec, n, 0, 0, &id, err);
    if (st)
        return st;
    result_init(result, &id);
    st = lookup(&id, 0, 0, result, found, err);
    result->elapsed_s = orr_now_s() - t0;
    return st;
}

orr_status orr_tune(orr_backend_kind kind, const orr_kspec *base_spec, long n,
                    const orr_tune_options *options, orr_tune_result *result, orr_error *err)
{
    double t0 = orr_now_s();
    orr_tune_options defaults;
    orr_tune_options_default(&defaults);
    const orr_tune_options *o = options ? options : &defaults;
    memset(result, 0, sizeof *result);

    tuner t;
    memset(&t, 0, sizeof t);
    t.o = o;
    t.r = result;
    t.best = -1;
    orr_status st = identify(kind, base_spec, n, o->device, o->targets, &t.id, err);
    if (st)
        return st;
    result_init(result, &t.id);

    /* the store: a hit ends here; with retune it is read for its note only */
    int found = 0;
    orr_tune_result stored = *result;
    if ((st = lookup(&t.id, 1, o->exhaustive, &stored, &found, err)) != ORR_OK)
        return st;
    /* a CPU choice other than the default is timed against it once more on
     * every start (a few ms): one stored while the machine was busy is
     * noticed and redone (GPU starts stay at the driver's floor) */
    const int recheck = found && !o->retune && o->recheck && t.id.target == ORR_TARGET_CPU &&
                        !params_eq(params_of(&stored.best), default_params(&t));
    if (found && !o->retune && !recheck) {
        *result = stored;
        result->elapsed_s = orr_now_s() - t0;
        return ORR_OK;
    }
    memcpy(result->note, stored.note, sizeof result->note);

    t.budget_s = o->budget_s > 0 ? o->budget_s : DEFAULT_BUDGET_S;
    t.tol = orr_accel_tolerance(t.id.base.phys.precision);
    if (t.id.target == ORR_TARGET_CPU) {
        for (int th = 1; th < t.id.nproc && t.nthreads < 30; th *= 2)
            t.cpu_threads[t.nthreads++] = th;
        t.cpu_threads[t.nthreads++] = t.id.nproc;
        t.cpu_threads[t.nthreads++] = 0;
    }
    /* a sampled tuning verifies bodies among the first targets, which every
     * timed pass covers */
    t.span = sampled(&t.id) && t.id.targets > SAMPLE_SPAN ? SAMPLE_SPAN : n;
    t.ni = t.span < SAMPLE_MAX ? t.span : SAMPLE_MAX;
    t.pos = malloc(sizeof(double) * 4 * (size_t)n);
    t.vel = malloc(sizeof(double) * 3 * (size_t)n);
    t.idx = malloc(sizeof(long) * (size_t)t.ni);
    t.ref = malloc(sizeof(double) * 3 * (size_t)t.ni);
    t.got = malloc(sizeof(double) * 3 * (size_t)t.ni);
    if (!t.pos || !t.vel || !t.idx || !t.ref || !t.got) {
        tuner_free(&t);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory for tuning %ld bodies", n);
    }
    for (long k = 0; k < t.ni; k++)
        t.idx[k] = orr_sample_index(k, t.span, t.ni);
    if (t.span < n && !(t.span_acc = malloc(sizeof(double) * 3 * (size_t)t.span))) {
        tuner_free(&t);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory for tuning %ld bodies", n);
    }
    st = orr_trial_bodies(&t.id.base, n, ORR_TUNE_SEED, t.pos, t.vel, &t.attr, err);
    if (!st && t.id.target == ORR_TARGET_GPU)   /* one context across all candidates */
        st = orr_cuda_ctx_acquire(t.id.device, err);
    if (!st && recheck) {
        double ms[2], spread[2];
        st = interleave(&t, &stored.best, &t.id.base, ORR_TUNE_PHASE_RECHECK, 3, ms, spread, err);
        /* still good, too close to tell, or timed on a machine too busy to
         * tell (runs spread over NOISY, as the search's own rule): a loaded
         * machine made a stored choice look 3.5x slower than the default
         * and tuned again */
        char w[128];
        orr_launch_describe(&stored.best.launch, w, sizeof w);
        const int slower = !st && ms[0] > ms[1] * STALE,
                  busy = !st && (spread[0] > NOISY || spread[1] > NOISY);
        if (!st && (!slower || busy)) {
            if (slower)
                orr_note_add(stored.note, sizeof stored.note,
                             "the stored tuning (%s) re-timed against the default on a machine "
                             "too busy to tell (runs spread %.0f%% and %.0f%%): kept", w,
                             100 * spread[0], 100 * spread[1]);
            tuner_free(&t);
            *result = stored;
            result->elapsed_s = orr_now_s() - t0;
            return ORR_OK;
        }
        if (!st)
            orr_note_add(result->note, sizeof result->note,
                     "the stored tuning (%s) took %.4g ms against the default's %.4g ms now: "
                     "tuning again", w, ms[0], ms[1]);
    }
    if (!st)
        st = reference(&t, err);
    t.search_s0 = orr_now_s();
    if (!st && sampled(&t.id))
        orr_note_add(result->note, sizeof result->note,
                     "long force passes: each candidate timed on whole waves of its blocks, the "
                     "first %ld targets at least, and scaled to all %ld; automatic j-ranges",
                     t.span, t.id.targets);

    int spent = 0, winner = -1;
    double win_ms = -1;
    if (!st && o->exhaustive) {
        st = exhaustive(&t, err);
    } else if (!st) {
        st = coarse(&t, &spent, err);
        if (!st)
            st = ipt_pass(&t, &spent, err);
        if (!st)
            st = ranges_pass(&t, &spent, err);
        if (!st)
            st = coarse_rest(&t, &spent, err);
        if (!st)
            st = refine(&t, &spent, err);
    }
    if (!st && t.launch_bound)
        orr_note_add(result->note, sizeof result->note,
                     "a force pass of the default takes %.3g ms at %ld bodies, launch overhead: "
                     "nothing to tune, the default kept", t.trials[0].ms, t.id.n);
    else if (!st && t.walled)
        orr_note_add(result->note, sizeof result->note,
                     "the search stopped at its wall-clock limit (%.3g s, candidates built one by one "
                     "included) "
                     "after %d candidates", WALL_FACTOR * t.budget_s, t.ntrials);
    if (!st)
        st = retime(&t, &winner, &win_ms, err);
    if (!st)
        st = check_default(&t, &winner, &win_ms, err);
    if (st) {
        tuner_free(&t);
        result->elapsed_s = orr_now_s() - t0;
        return st;
    }

    if (winner < 0) {
        orr_note_add(result->note, sizeof result->note,
                 "no candidate verified (%d tried); using the default configuration",
                 t.ntrials);
    } else {
        result->best = t.trials[winner].spec;
        result->best_ms = win_ms;
        result->best_interactions_per_s = interactions(&t.id, win_ms);
        snprintf(result->source, sizeof result->source, "tuned");
        orr_error serr = {0};
        if (save(&t, winner, win_ms, &serr) != ORR_OK)   /* a directory not usable or not
                                                            writable: its own words */
            orr_note_add(result->note, sizeof result->note,
                         serr.code == ORR_ERR_CACHE ? "%s" : "tuning not saved: %s",
                         serr.msg);
        orr_error_clear(&serr);
    }
    result->ntrials = t.ntrials;
    tuner_free(&t);
    result->elapsed_s = orr_now_s() - t0;
    return ORR_OK;
}
