/* dist: slices of the bodies per rank and their exchange (see dist.h). */
#include "dist.h"
#include "cuda.h"
#include "nccl.h"
#include "util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct orr_dist {
    orr_comm *comm;
    int rank, ranks;
    long n;
    long *counts, *displs;   /* per rank, in bodies */
    void *stage;             /* host copy of a GPU buffer (n records), made when first needed */
    size_t stage_bytes;
    int stage_pinned;        /* stage is page-locked (orr_cuda_host_alloc) */
    orr_nccl *nccl;          /* the GPU exchange, or NULL: through the host */
    void *side;              /* NCCL with overlap: the stream the all-gather runs on */
    void *ev_moved, *ev_arrived;   /* the drift done (engine stream); the bodies in (side) */
    int overlap;             /* orr_dist_gather_force overlaps (see dist.h) */
    int overlap_asked;       /* ORRERY_OVERLAP: 1 on, 0 off, -1 unset (automatic) */
    long seq;                /* its number, the same on every rank (set by orr_dist_attach) */
    int stand_in;            /* ORRERY_TEST_COLLECTIVE_TEARDOWN: a stand-in for NCCL's
                                communicator, torn down by a collective */
    int same_gpus;           /* NCCL, and every rank's GPU the same model (orr_dist_gpu_blocks) */
    char note[512];          /* which exchange, and why */
};

/* ---- collective teardown ----------------------------------------------------
 * What an exchange keeps over the ranks (NCCL's communicator: its teardown
 * is a barrier between the ranks of a host) outlives its dist:
 * orr_dist_destroy, which the Lua layer reaches from the garbage collector
 * at a different moment on each rank, only retires it.  Retired parts are
 * torn down where every rank is at the same point of its collectives: the
 * next orr_dist_attach, and orr_comm_finalize; those retired on every rank
 * by then, in the order their exchanges were made. */

typedef struct retired {
    long seq;              /* the exchange's number */
    orr_comm *comm;
    orr_nccl *nccl;        /* or NULL */
    int stand_in;          /* the test hook's stand-in */
    struct retired *next;
} retired;

static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;
static retired *retired_list;
static long next_seq;      /* the next exchange's number: agreed at attach */

/* The test hook's stand-in for ncclCommFinalize: a collective, which finds
 * ranks tearing down different exchanges. */
static orr_status stand_in_teardown(orr_comm *c, long seq, orr_error *err)
{
    const int ranks = orr_comm_size(c);
    long *all = malloc(sizeof(long) * (size_t)ranks);
    orr_status st = orr_comm_agree(c, all ? ORR_OK : orr_fail(err, ORR_ERR_NOMEM, "out of memory"),
                                   1, err);
    if (!st)
        st = orr_comm_allgather(c, &seq, all, sizeof seq, err);
    for (int r = 0; !st && r < ranks; r++)
        if (all[r] != seq)
            st = orr_fail(err, ORR_ERR_COMM, "the ranks tore down different exchanges: rank %d "
                          "exchange %ld, rank %d exchange %ld", orr_comm_rank(c), seq, r, all[r]);
    free(all);
    return st;
}

/* One retired exchange, torn down (collective where it was made over
 * several ranks); frees it. */
static orr_status teardown(retired *t, orr_error *err)
{
    orr_status st = t->stand_in ? stand_in_teardown(t->comm, t->seq, err) : ORR_OK;
    orr_nccl_destroy(t->nccl);
    orr_trace("exchange torn down");
    free(t);
    return st;
}

/* Collective over c: tears down the exchanges that every rank has retired,
 * in the order they were made. */
static orr_status reap(orr_comm *c, orr_error *err)
{
    const int ranks = orr_comm_size(c);
    long mine = 0, *seqs = NULL;
    pthread_mutex_lock(&retired_lock);
    for (retired *t = retired_list; t; t = t->next)
        mine += t->comm == c;
    seqs = malloc(sizeof(long) * (size_t)(mine + 1));
    long k = 0;
    for (retired *t = retired_list; seqs && t; t = t->next)
        if (t->comm == c)
            seqs[k++] = t->seq;
    pthread_mutex_unlock(&retired_lock);
    long *counts = calloc((size_t)ranks, sizeof(long)), *displs = calloc((size_t)ranks, sizeof(long));
    long *all = NULL, total = 0;
    orr_status st = seqs && counts && displs ? ORR_OK
                                             : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    st = orr_comm_agree(c, st, 1, err);
    /* every rank's retired exchanges, to every rank */
    if (!st)
        st = orr_comm_allgather(c, &mine, counts, sizeof mine, err);
    for (int r = 0; !st && r < ranks; r++) {
        displs[r] = total;
        total += counts[r];
    }
    if (!st && !(all = malloc(sizeof(long) * (size_t)(total + 1))))
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    st = orr_comm_agree(c, st, 1, err);
    if (!st) {
        memcpy(all + displs[orr_comm_rank(c)], seqs, sizeof(long) * (size_t)mine);
        st = orr_comm_allgatherv(c, all, counts, displs, sizeof(long), err);
    }
    /* those on every rank's list, lowest number first: the same on every rank */
    for (long next = -1; !st;) {
        long best = -1;
        for (long i = 0; i < counts[0]; i++) {
            const long q = all[i];
            int everywhere = q > next;
            for (int r = 1; everywhere && r < ranks; r++) {
                int found = 0;
                for (long j = displs[r]; !found && j < displs[r] + counts[r]; j++)
                    found = all[j] == q;
                everywhere = found;
            }
            if (everywhere && (best < 0 || q < best))
                best = q;
        }
        if (best < 0)
            break;
        next = best;
        retired *t = NULL;
        pthread_mutex_lock(&retired_lock);
        for (retired **p = &retired_list; *p; p = &(*p)->next)
            if ((*p)->comm == c && (*p)->seq == best) {
                t = *p;
                *p = t->next;
                break;
            }
        pthread_mutex_unlock(&retired_lock);
        if (t)
            st = teardown(t, err);
    }
    free(seqs);
    free(counts);
    free(displs);
    free(all);
    return st;
}

/* orr_comm_finalize's teardown: whatever every rank retired. */
static void reap_at_finalize(orr_comm *c)
{
    orr_error e = {0};
    reap(c, &e);
    orr_error_clear(&e);
}

/* Hands d's collective parts to the retired list (or tears them down now
 * where they are this rank's alone). */
static void retire(orr_dist *d)
{
    if (!d->nccl && !d->stand_in)
        return;
    retired *t = d->ranks > 1 ? malloc(sizeof *t) : NULL;
    if (!t) {
        /* one rank: nothing to wait for.  (No memory over several ranks: the
         * communicator is left as it is, rather than torn down out of step.) */
        if (d->ranks == 1)
            orr_nccl_destroy(d->nccl);
        d->nccl = NULL;
        return;
    }
    *t = (retired){d->seq, d->comm, d->nccl, d->stand_in, NULL};
    d->nccl = NULL;
    pthread_mutex_lock(&retired_lock);
    retired **p = &retired_list;
    while (*p)
        p = &(*p)->next;
    *p = t;
    pthread_mutex_unlock(&retired_lock);
    orr_trace("exchange retired");
}

orr_exchange_ask orr_dist_exchange_asked(void)
{
    const char *v = getenv("ORRERY_EXCHANGE");
    return !v || !*v ? ORR_EXCHANGE_AUTO : strcmp(v, "host") == 0 ? ORR_EXCHANGE_HOST
           : strcmp(v, "nccl") == 0                     ? ORR_EXCHANGE_NCCL
                                                        : ORR_EXCHANGE_AUTO;
}

orr_status orr_dist_exchange_check(orr_error *err)
{
    const char *v = getenv("ORRERY_EXCHANGE");
    if (!v || !*v || strcmp(v, "host") == 0 || strcmp(v, "nccl") == 0)
        return ORR_OK;
    return orr_fail(err, ORR_ERR_ARG, "ORRERY_EXCHANGE=\"%.100s\" is not an exchange (expected "
                    "\"host\" or \"nccl\"; unset or empty: automatic)", v);
}

int orr_dist_device(const orr_comm *c)
{
    int count = 0;
    if (orr_comm_local_size(c) < 2 || orr_cuda_open(NULL) != ORR_OK ||
        orr_cuda_device_count(&count, NULL) != ORR_OK || count < 1)
        return 0;
    return orr_comm_local_rank(c) % count;
}

int orr_dist_cpu_threads(const orr_comm *c)
{
    if (orr_comm_local_size(c) < 2 || getenv("OMP_NUM_THREADS"))
        return 0;
    long per = sysconf(_SC_NPROCESSORS_ONLN) / orr_comm_local_size(c);
    return per < 1 ? 1 : per > 4096 ? 4096 : (int)per;
}

orr_status orr_dist_create(orr_dist **out, orr_comm *c, long n, orr_error *err)
{
    *out = NULL;
    orr_dist *d = calloc(1, sizeof *d);
    if (!d)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    d->comm = c;
    d->rank = orr_comm_rank(c);
    d->ranks = orr_comm_size(c);
    d->n = n;
    const char *ov = getenv("ORRERY_OVERLAP");
    d->overlap_asked = !ov ? -1 : strcmp(ov, "off") == 0 || strcmp(ov, "0") == 0 ? 0
                                : strcmp(ov, "on") == 0 || strcmp(ov, "1") == 0  ? 1
                                                                                   : -1;
    d->overlap = d->overlap_asked != 0;
    d->counts = calloc((size_t)d->ranks, sizeof(long));
    d->displs = calloc((size_t)d->ranks, sizeof(long));
    if (!d->counts || !d->displs) {
        orr_dist_destroy(d);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    for (int r = 0; r < d->ranks; r++) {
        orr_range s = orr_dist_slice(d, r);
        d->displs[r] = s.first;
        d->counts[r] = s.count;
    }
    *out = d;
    return ORR_OK;
}

void orr_dist_destroy(orr_dist *d)
{
    if (!d)
        return;
    retire(d);   /* torn down later, where every rank is in step (see above) */
    if (d->side) {
        orr_cuda_stream_sync(d->side, NULL);
        orr_cuda_stream_destroy(d->side);
    }
    orr_cuda_event_destroy(d->ev_moved);
    orr_cuda_event_destroy(d->ev_arrived);
    free(d->counts);
    free(d->displs);
    if (d->stage_pinned)
        orr_cuda_host_free(d->stage);
    else
        free(d->stage);
    free(d);
}

int orr_dist_rank(const orr_dist *d)
{
    return d->rank;
}

int orr_dist_ranks(const orr_dist *d)
{
    return d->ranks;
}

orr_comm *orr_dist_comm(const orr_dist *d)
{
    return d->comm;
}

orr_range orr_dist_slice_of(long n, int r, int ranks)
{
    const long long nn = n, p = ranks;
    orr_range s = {(long)(nn * r / p), (long)(nn * (r + 1) / p - nn * r / p)};
    return s;
}

/* The rank whose slice holds body. */
static int owner_of(long n, long body, int ranks)
{
    int r = (int)((long long)body * ranks / (n > 0 ? n : 1));
    while (r > 0 && body < orr_dist_slice_of(n, r, ranks).first)
        r--;
    while (r < ranks - 1 && body >= orr_dist_slice_of(n, r + 1, ranks).first)
        r++;
    return r;
}

void orr_dist_owner_note(char *buf, size_t size, long n, long body, int ranks)
{
    if (ranks > 1)
        snprintf(buf, size, " (in rank %d's slice)", owner_of(n, body, ranks));
    else if (size)
        buf[0] = '\0';
}

orr_range orr_dist_slice(const orr_dist *d, int r)
{
    return orr_dist_slice_of(d->n, r, d->ranks);
}

orr_range orr_dist_mine(const orr_dist *d)
{
    return orr_dist_slice(d, d->rank);
}

/* The host stage for n records of a GPU buffer: page-locked where it can
 * be (the copies then run at full speed and truly asynchronously). */
static orr_status stage_for(orr_dist *d, size_t bytes, orr_error *err)
{
    if (d->stage_bytes >= bytes)
        return ORR_OK;
    if (d->stage_pinned)
        orr_cuda_host_free(d->stage);
    else
        free(d->stage);
    d->stage = NULL;
    d->stage_bytes = 0;
    orr_error e = {0};
    d->stage_pinned = orr_cuda_host_alloc(&d->stage, bytes, &e) == ORR_OK;
    orr_error_clear(&e);
    if (!d->stage_pinned && !(d->stage = malloc(bytes)))
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory for %zu bytes of staging", bytes);
    d->stage_bytes = bytes;
    return ORR_OK;
}

/* A GPU buffer through the host: this rank's slice out, the all-gather in
 * place, every slice back in, all on the engine's stream.  With force, the
 * local part of the force on the slice runs on the GPU during the
 * all-gather. */
static orr_status gather_device(orr_dist *d, orr_engine *e, const orr_buffer *b, int force,
                                orr_error *err)
{
    const size_t bytes = (size_t)d->n * b->stride;
    orr_status st = stage_for(d, bytes, err);
    if (st)
        return st;
    const orr_range mine = orr_dist_mine(d);
    const size_t off = (size_t)mine.first * b->stride;
    void *stream = orr_engine_stream(e);
    st = orr_cuda_dtoh_async((char *)d->stage + off, b->dptr + off,
                             (size_t)mine.count * b->stride, stream, err);
    if (!st)
        st = orr_cuda_stream_sync(stream, err);
    if (!st && force)
        st = orr_engine_force_part(e, mine, ORR_FORCE_LOCAL, err);
    if (!st)
        st = orr_comm_allgatherv(d->comm, d->stage, d->counts, d->displs, b->stride, err);
    if (!st)
        st = orr_cuda_htod_async(b->dptr, d->stage, bytes, stream, err);
    if (!st)   /* the stage is reused by the next exchange */
        st = orr_cuda_stream_sync(stream, err);
    return st;
}

int orr_dist_gpu_blocks(const orr_dist *d)
{
    return d->nccl && d->same_gpus;
}

orr_status orr_dist_gather_records(orr_dist *d, orr_engine *e, orr_devptr buf,
                                   const long *counts, const long *displs, size_t elem,
                                   orr_error *err)
{
    if (!d->nccl)
        return orr_fail(err, ORR_ERR_ARG, "records between GPUs: no NCCL exchange");
    return orr_nccl_allgatherv(d->nccl, buf, counts, displs, elem, orr_engine_stream(e), err);
}

const char *orr_dist_exchange(const orr_dist *d)
{
    return d->nccl ? "nccl" : d->ranks == 1 ? "none" : "host";
}

const char *orr_dist_exchange_note(const orr_dist *d)
{
    return d->note[0] ? d->note : "positions exchanged through the host (MPI)";
}

orr_status orr_dist_shared_gpu(orr_comm *c, const char *gpu, int device, int *a, int *b,
                               char *where, size_t size, orr_error *err)
{
    typedef struct {
        char gpu[64];    /* the GPU's identity: its UUID */
        char host[256];
        int device;      /* its number as the rank sees it, for the message */
    } rank_gpu;
    *a = *b = -1;
    if (where && size)
        where[0] = '\0';
    const int ranks = orr_comm_size(c);
    rank_gpu mine, *all = malloc(sizeof mine * (size_t)ranks);
    memset(&mine, 0, sizeof mine);
    snprintf(mine.gpu, sizeof mine.gpu, "%s", gpu ? gpu : "");
    snprintf(mine.host, sizeof mine.host, "%s", orr_comm_host(c));
    mine.device = device;
    orr_status st = all ? ORR_OK : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    st = orr_comm_agree(c, st, 1, err);   /* every rank in the all-gather, or none */
    if (!st)
        st = orr_comm_allgather(c, &mine, all, sizeof mine, err);
    for (int i = 0; !st && *a < 0 && i < ranks; i++)
        for (int j = i + 1; *a < 0 && j < ranks; j++)
            if (all[i].gpu[0] && strcmp(all[i].gpu, all[j].gpu) == 0) {
                *a = i, *b = j;
                if (where && size)
                    snprintf(where, size, "GPU %d on %s", all[i].device, all[i].host);
            }
    free(all);
    return st;
}

/* NCCL connects the ranks' GPUs at the first collective that needs each
 * protocol (NCCL 2.22 and later connect at run time, not at init): one
 * all-gather of each size class here, in the set-up, so that the first
 * interval is not charged with it (2 x H100, cluster_hermite.lua 32768:
 * its first quarter time unit stepped in 0.58 s on two GPUs against 0.50
 * on one, the second in 0.40 against 0.48).  Bytes per rank: 64, 64 KiB
 * and 2 MiB (NCCL's LL, LL128 and Simple ranges); the buffer zeroed, so
 * nothing uninitialised is sent. */
static orr_status nccl_warm(orr_dist *d, orr_engine *e, orr_error *err)
{
    static const long sizes[] = {64, 65536, 1L << 21};
    const long most = sizes[2];
    orr_devptr buf = 0;
    long *counts = calloc((size_t)d->ranks * 2, sizeof(long));
    orr_status st = counts ? orr_cuda_alloc(&buf, (size_t)most * (size_t)d->ranks, err)
                           : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (!st)
        st = orr_cuda_memset32(buf, 0, (size_t)most * (size_t)d->ranks / 4, err);
    if (!st)   /* before the engine's stream reads it */
        st = orr_cuda_sync(err);
    st = orr_comm_agree(d->comm, st, 1, err);
    long *displs = counts ? counts + d->ranks : NULL;
    void *stream = orr_engine_stream(e);
    for (size_t k = 0; !st && k < sizeof sizes / sizeof sizes[0]; k++) {
        for (int r = 0; r < d->ranks; r++)
            counts[r] = sizes[k] / 8, displs[r] = (long)r * (sizes[k] / 8);
        st = orr_nccl_allgatherv(d->nccl, buf, counts, displs, 8, stream, err);
    }
    if (!st)
        st = orr_cuda_stream_sync(stream, err);
    if (buf)
        orr_cuda_free(buf);
    free(counts);
    return st;
}

orr_status orr_dist_attach(orr_dist *d, orr_engine *e, int device, orr_error *err)
{
    d->note[0] = '\0';
    const orr_exchange_ask ask = orr_dist_exchange_asked();
    if (d->ranks > 1) {   /* each rank reads its own environment: agreed before acting on it */
        static const char *const asked[] = {"unset (automatic)", "host", "nccl"};
        /* the lowest rank's whose value is no exchange, on every rank */
        orr_status st = orr_comm_agree(d->comm, orr_dist_exchange_check(err), 1, err);
        if (!st)
            st = orr_comm_same(d->comm, orr_engine_backend_name(e), "the backend", NULL, err);
        if (!st)
            st = orr_comm_same(d->comm, asked[ask], "ORRERY_EXCHANGE",
                               "set it alike on every rank: mpirun -x ORRERY_EXCHANGE passes "
                               "it to every host", err);
        /* the GPUs' block steps: every rank must split the same blocks */
        static const char *const hvars[2][2] = {
            {"ORRERY_HBLOCKS", "set it alike on every rank: mpirun -x ORRERY_HBLOCKS passes it "
                               "to every host"},
            {"ORRERY_HSPLIT", "set it alike on every rank: mpirun -x ORRERY_HSPLIT passes it "
                              "to every host"}};
        for (int k = 0; !st && k < 2; k++) {
            const char *v = getenv(hvars[k][0]);
            st = orr_comm_same(d->comm, v && *v ? v : "unset", hvars[k][0], hvars[k][1], err);
        }
        /* the exchanges every rank has retired go first, then this one is
         * numbered alike on every rank */
        if (!st)
            st = reap(d->comm, err);
        double seq = (double)next_seq;
        if (!st)
            st = orr_comm_max(d->comm, &seq, 1, err);
        if (st)
            return st;
        d->seq = (long)seq;
        next_seq = d->seq + 1;
        orr_comm_at_finalize(reap_at_finalize);
        const char *t = getenv("ORRERY_TEST_COLLECTIVE_TEARDOWN");
        d->stand_in = t && *t;
    }
    const int want_nccl = ask == ORR_EXCHANGE_NCCL;
    if ((d->ranks == 1 && !want_nccl) || orr_engine_backend(e) != ORR_BACKEND_CUDA) {
        d->overlap = 0;   /* nothing to overlap: no exchange, or the CPU's (dist.h) */
        return ORR_OK;
    }
    /* the GPU itself, by its UUID: its number says nothing across ranks
     * (with CUDA_VISIBLE_DEVICES set per rank, as Slurm's --gpus-per-task
     * does, every rank's GPU is its device 0) */
    orr_gpu_info g;
    int a = -1, b = -1;
    char where[320];
    orr_status st = orr_comm_agree(d->comm, orr_cuda_device_info(device, &g, err), 1, err);
    if (!st)
        st = orr_dist_shared_gpu(d->comm, g.uuid, device, &a, &b, where, sizeof where, err);
    if (st)
        return st;
    if (a >= 0) {
        /* the ranks' kernels take turns on the GPU anyway: split in two they
         * only switch more (H100, N = 65536: 3.16 ms a step against 2.62) */
        d->overlap = d->overlap_asked == 1;
        snprintf(d->note, sizeof d->note, "positions exchanged through the host (MPI): ranks %d "
                 "and %d share %s (NCCL needs a GPU per rank)%s", a, b, where,
                 d->overlap ? "; overlapped with the force (ORRERY_OVERLAP=on)" : "");
        return ORR_OK;
    }
    if (ask == ORR_EXCHANGE_HOST) {
        snprintf(d->note, sizeof d->note, "positions exchanged through the host (MPI): "
                 "ORRERY_EXCHANGE=host%s", d->overlap ? "; overlapped with the force" : "");
        return ORR_OK;
    }
    orr_error why = {0};
    if (orr_nccl_create(&d->nccl, d->comm, device, &why)) {   /* agreed over every rank */
        if (want_nccl) {
            orr_fail(err, why.code ? why.code : ORR_ERR_COMM,
                     "ORRERY_EXCHANGE=nccl, but NCCL cannot be used: %.800s", why.msg);
            orr_status code = why.code ? why.code : ORR_ERR_COMM;
            orr_error_clear(&why);
            d->nccl = NULL;
            return code;
        }
        snprintf(d->note, sizeof d->note, "positions exchanged through the host (MPI): no NCCL "
                 "(%.400s)%s", why.msg, d->overlap ? "; overlapped with the force" : "");
        orr_error_clear(&why);
        d->nccl = NULL;
        return ORR_OK;
    }
    /* block steps stay on the GPUs only where every GPU gives the same bits */
    char model[96];
    snprintf(model, sizeof model, "%.60s sm_%d%d %d SMs", g.name, g.cc_major, g.cc_minor,
             g.sm_count);
    char *models = calloc((size_t)d->ranks, sizeof model);
    st = orr_comm_agree(d->comm, models ? ORR_OK : orr_fail(err, ORR_ERR_NOMEM, "out of memory"),
                        1, err);
    if (!st)
        st = orr_comm_allgather(d->comm, model, models, sizeof model, err);
    d->same_gpus = !st;
    for (int r = 1; !st && r < d->ranks; r++)
        d->same_gpus &= strcmp(models, models + r * sizeof model) == 0;
    free(models);
    if (st)
        return st;
    /* over NVLink the all-gather costs a few percent of the step at most,
     * and a force pass cut in two launches, sharing the SMs with NCCL's,
     * costs more (2 x H200, N = 65536: 1.42 ms a step against 1.16) */
    d->overlap = d->overlap_asked == 1;
    snprintf(d->note, sizeof d->note, "positions exchanged over NCCL %d (%s)%s; Hermite block "
             "steps on the %s", orr_nccl_version(), want_nccl ? "ORRERY_EXCHANGE=nccl"
             : "a GPU per rank", d->overlap ? "; overlapped with the force (ORRERY_OVERLAP=on)"
             : "", d->same_gpus ? "GPUs" : "host (the ranks' GPUs are not all one model)");
    return d->ranks > 1 ? nccl_warm(d, e, err) : ORR_OK;
}

orr_status orr_dist_gather(orr_dist *d, orr_engine *e, orr_buffer_id id, orr_error *err)
{
    if (d->ranks == 1 && !d->nccl)
        return ORR_OK;
    orr_buffer b;
    orr_status st = orr_engine_buffer(e, id, &b, err);
    if (st)
        return st;
    if (b.on_device && d->nccl)   /* queued on the engine's stream, in order with its kernels */
        return orr_nccl_allgatherv(d->nccl, b.dptr, d->counts, d->displs, b.stride,
                                   orr_engine_stream(e), err);
    if (b.on_device)
        return gather_device(d, e, &b, 0, err);
    for (int k = 0; !st && k < b.ncomp; k++)
        st = orr_comm_allgatherv(d->comm, b.host[k], d->counts, d->displs, b.elem, err);
    return st;
}

/* NCCL, overlapped: the all-gather on a stream of its own once the drift is
 * done, the local part of the force on the engine's stream meanwhile, and
 * the engine's stream waiting for the bodies before the rest. */
static orr_status gather_nccl_overlapped(orr_dist *d, orr_engine *e, const orr_buffer *b,
                                         orr_error *err)
{
    orr_status st = ORR_OK;
    if (!d->side && (st = orr_cuda_stream_create(&d->side, err)) == ORR_OK &&
        (st = orr_cuda_event_create(&d->ev_moved, err)) == ORR_OK)
        st = orr_cuda_event_create(&d->ev_arrived, err);
    if (st)
        return st;
    void *stream = orr_engine_stream(e);
    const orr_range mine = orr_dist_mine(d);
    if (!(st = orr_cuda_event_record(d->ev_moved, stream, err)) &&
        !(st = orr_cuda_stream_wait(d->side, d->ev_moved, err)) &&
        !(st = orr_nccl_allgatherv(d->nccl, b->dptr, d->counts, d->displs, b->stride, d->side,
                                   err)) &&
        !(st = orr_cuda_event_record(d->ev_arrived, d->side, err)) &&
        !(st = orr_engine_force_part(e, mine, ORR_FORCE_LOCAL, err)))
        st = orr_cuda_stream_wait(stream, d->ev_arrived, err);
    return st;
}

orr_status orr_dist_gather_force(orr_dist *d, orr_engine *e, orr_error *err)
{
    const orr_range mine = orr_dist_mine(d);
    orr_buffer b;
    orr_status st = orr_engine_buffer(e, ORR_ENGINE_POS, &b, err);
    if (st)
        return st;
    const int overlap = d->overlap && b.on_device && (d->ranks > 1 || d->nccl);
    if (!overlap)
        st = orr_dist_gather(d, e, ORR_ENGINE_POS, err);
    else if (d->nccl)
        st = gather_nccl_overlapped(d, e, &b, err);
    else
        st = gather_device(d, e, &b, 1, err);
    if (st)
        return st;
    return orr_engine_force_part(e, mine, overlap ? ORR_FORCE_REST : ORR_FORCE_WHOLE, err);
}

int orr_dist_overlap(const orr_dist *d)
{
    return d->overlap;
}

void orr_dist_set_overlap(orr_dist *d, int on)
{
    d->overlap = on != 0;
}

/* Whether text (lines) holds line (len bytes) as a whole line before stop. */
static int has_line(const char *text, const char *stop, const char *line, size_t len)
{
    for (const char *p = text; p < stop && *p;) {
        size_t n = strcspn(p, "\n");
        if (n == len && memcmp(p, line, len) == 0)
            return 1;
        p += n + (p[n] == '\n');
    }
    return 0;
}

/* Every rank's note, each line once (see dist.h). */
orr_status orr_dist_notes(orr_comm *comm, const char *mine, char *out, size_t size,
                          orr_error *err)
{
    enum { NOTE = 512 };
    const int ranks = comm ? orr_comm_size(comm) : 1;
    if (ranks == 1) {
        if (out != mine)
            snprintf(out, size, "%s", mine);
        return ORR_OK;
    }
    char mycopy[NOTE];
    snprintf(mycopy, sizeof mycopy, "%s", mine);
    char *all = calloc((size_t)ranks, NOTE);
    orr_status st = all ? ORR_OK : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    st = orr_comm_all_ok(comm, st, err, "gather the ranks' notes");
    if (!st)
        st = orr_comm_allgather(comm, mycopy, all, NOTE, err);
    if (st) {
        free(all);
        return st;
    }
    /* lines that do not fit whole are left out and counted, with room kept
     * for saying so */
    enum { RESERVE = 64 };
    int dropped = 0;
    if (size)
        out[0] = '\0';
    for (int r = 0; r < ranks; r++) {
        char *text = all + (size_t)r * NOTE;
        text[NOTE - 1] = '\0';
        for (const char *line = text; *line;) {
            size_t len = strcspn(line, "\n");
            int seen = len == 0 || has_line(text, line, line, len);
            for (int q = 0; q < r && !seen; q++)
                seen = has_line(all + (size_t)q * NOTE, all + (size_t)(q + 1) * NOTE, line, len);
            const size_t need = strlen(out) + 1 + len + (r > 0 ? 16 : 0) + RESERVE;
            if (!seen && need > size)
                dropped++;
            else if (!seen && r > 0)
                orr_note_add(out, size, "rank %d: %.*s", r, (int)len, line);
            else if (!seen)
                orr_note_add(out, size, "%.*s", (int)len, line);
            line += len + (line[len] == '\n');
        }
    }
    if (dropped)
        orr_note_add(out, size, "(%d more note%s from other ranks not shown)", dropped,
                     dropped == 1 ? "" : "s");
    free(all);
    return ORR_OK;
}

/* Tuning over the ranks (see dist.h).  The groups are those whose
 * identities the tuning store would answer alike; the wall time stays
 * within one budget per group (one group where the devices match, as the
 * slices differ by one body at most).  No rank waits in a collective for a
 * rank that failed. */
orr_status orr_dist_tune(orr_comm *comm, orr_backend_kind kind, const orr_kspec *base, long n,
                        orr_tune_options o, orr_tune_result *res, orr_error *err)
{
    const int ranks = comm ? orr_comm_size(comm) : 1, me = comm ? orr_comm_rank(comm) : 0;
    if (ranks == 1)
        return orr_tune(kind, base, n, &o, res, err);
    o.targets = orr_dist_slice_of(n, me, ranks).count;
    o.recheck = 0;   /* ranks share the host's cores: no start-up re-timing */
    typedef struct {
        char device[512], kernel[33];
    } identity;
    identity mine, *all = calloc((size_t)ranks, sizeof *all);
    memset(&mine, 0, sizeof mine);
    orr_status st = all ? orr_tune_identify(kind, base, n, &o, res, err)
                        : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (!st) {
        memcpy(mine.device, res->device, sizeof mine.device);
        memcpy(mine.kernel, res->kernel, sizeof mine.kernel);
    }
    st = orr_comm_all_ok(comm, st, err, "compute its tuning identity");
    if (!st)
        st = orr_comm_allgather(comm, &mine, all, sizeof mine, err);
    /* leader[r]: the lowest rank with r's identity; the groups go in the
     * order of their leaders */
    for (int turn = 0; !st && turn < ranks; turn++) {
        int lead = 0;
        while (memcmp(&all[lead], &all[turn], sizeof mine) != 0)
            lead++;
        if (lead != turn)
            continue;   /* not a leader: its group took its turn already */
        orr_status tst = me == turn ? orr_tune(kind, base, n, &o, res, err) : ORR_OK;
        st = orr_comm_all_ok(comm, tst, err, "tune its kernels");
        struct {
            orr_kspec best;
            double ms;
            char source[16];
        } won;
        memset(&won, 0, sizeof won);
        if (me == turn) {
            won.best = res->best;
            won.best.phys.law = NULL;   /* a pointer: this rank's own */
            won.ms = res->best_ms;
            memcpy(won.source, res->source, sizeof won.source);
        }
        if (!st)
            st = orr_comm_bcast(comm, &won, sizeof won, turn, err);
        if (!st && me != turn && memcmp(&all[me], &all[turn], sizeof mine) == 0) {
            res->best.launch = won.best.launch;
            res->best_ms = won.ms;
            memcpy(res->source, won.source, sizeof res->source);
            res->source[sizeof res->source - 1] = '\0';
        }
    }
    free(all);
    return st;
}
