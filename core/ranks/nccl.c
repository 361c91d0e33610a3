/* nccl: NVIDIA's collective library between the ranks' GPUs (see nccl.h),
 * reached through dlopen("libnccl.so.2") and a table of dlsym'd function
 * pointers, like libcuda in cuda.c and libmpi in comm.c: nothing of NCCL is
 * linked, so the program starts, and explains itself, without it.
 * Making a communicator is a sequence of steps, each followed by an
 * agreement over MPI (orr_comm_max of "the lowest failing rank", then that
 * rank's message broadcast), so a step that fails on one rank fails on every
 * rank with one message, "rank R: ...", and no rank waits in a collective
 * that another rank never reaches.  The last step, NCCL's own handshake,
 * runs without blocking while the ranks' outcomes are exchanged without
 * waiting (orr_comm_vote), so that no rank waits in it for a rank that
 * failed. */
#include "nccl.h"

/* The toolkit's header, for the types only (the build names the project's
 * headers with -iquote, so <nccl.h> is never core/ranks/nccl.h).  It declares
 * ncclGroupStart() and a few others without prototypes. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Pointer types, declared by hand with full prototypes (nccl.h's own
 * ncclGroupStart() has none). */
typedef ncclResult_t (*pfn_ncclGetVersion)(int *);
typedef ncclResult_t (*pfn_ncclGetUniqueId)(ncclUniqueId *);
typedef ncclResult_t (*pfn_ncclCommInitRank)(ncclComm_t *, int, ncclUniqueId, int);
typedef ncclResult_t (*pfn_ncclCommInitRankConfig)(ncclComm_t *, int, ncclUniqueId, int,
                                                   ncclConfig_t *);
typedef ncclResult_t (*pfn_ncclCommFinalize)(ncclComm_t);
typedef ncclResult_t (*pfn_ncclCommDestroy)(ncclComm_t);
typedef ncclResult_t (*pfn_ncclCommAbort)(ncclComm_t);
typedef const char *(*pfn_ncclGetErrorString)(ncclResult_t);
typedef const char *(*pfn_ncclGetLastError)(ncclComm_t);
typedef ncclResult_t (*pfn_ncclGroupStart)(void);
typedef ncclResult_t (*pfn_ncclGroupEnd)(void);
typedef ncclResult_t (*pfn_ncclBroadcast)(const void *, void *, size_t, ncclDataType_t, int,
                                          ncclComm_t, cudaStream_t);
typedef ncclResult_t (*pfn_ncclCommGetAsyncError)(ncclComm_t, ncclResult_t *);

static pfn_ncclGetVersion p_ncclGetVersion;
static pfn_ncclGetUniqueId p_ncclGetUniqueId;
static pfn_ncclCommInitRank p_ncclCommInitRank;
static pfn_ncclCommInitRankConfig p_ncclCommInitRankConfig;
static pfn_ncclCommFinalize p_ncclCommFinalize;
static pfn_ncclCommDestroy p_ncclCommDestroy;
static pfn_ncclCommAbort p_ncclCommAbort;
static pfn_ncclGetErrorString p_ncclGetErrorString;
static pfn_ncclGetLastError p_ncclGetLastError;
static pfn_ncclGroupStart p_ncclGroupStart;
static pfn_ncclGroupEnd p_ncclGroupEnd;
static pfn_ncclBroadcast p_ncclBroadcast;
static pfn_ncclCommGetAsyncError p_ncclCommGetAsyncError;

/* The symbol each pointer is loaded from; optional ones may be missing
 * (older NCCL 2 releases) and stay NULL. */
typedef struct {
    void **slot;
    const char *sym;
    int optional;
} nccl_sym;

static const nccl_sym nccl_syms[] = {
    {(void **)&p_ncclGetVersion, "ncclGetVersion", 0},
    {(void **)&p_ncclGetUniqueId, "ncclGetUniqueId", 0},
    {(void **)&p_ncclCommInitRank, "ncclCommInitRank", 0},
    {(void **)&p_ncclCommDestroy, "ncclCommDestroy", 0},
    {(void **)&p_ncclGetErrorString, "ncclGetErrorString", 0},
    {(void **)&p_ncclGroupStart, "ncclGroupStart", 0},
    {(void **)&p_ncclGroupEnd, "ncclGroupEnd", 0},
    {(void **)&p_ncclBroadcast, "ncclBroadcast", 0},
    {(void **)&p_ncclCommFinalize, "ncclCommFinalize", 1},       /* NCCL 2.14 */
    {(void **)&p_ncclCommInitRankConfig, "ncclCommInitRankConfig", 1}, /* NCCL 2.14 */
    {(void **)&p_ncclCommAbort, "ncclCommAbort", 1},             /* NCCL 2.4 */
    {(void **)&p_ncclCommGetAsyncError, "ncclCommGetAsyncError", 1}, /* NCCL 2.4 */
    {(void **)&p_ncclGetLastError, "ncclGetLastError", 1},       /* NCCL 2.13 */
};

struct orr_nccl {
    ncclComm_t comm;   /* this rank's communicator */
    int rank, size;    /* as in the orr_comm it was made over */
    int nonblocking;   /* made with blocking = 0: calls may return ncclInProgress */
};

/* ncclConfig_t as NCCL 2.14 laid it out, the first fields of every later
 * one: NCCL copies a config up to its size and reads the fields its
 * version knows, so this one means the same to 2.14 and every later
 * release, whatever the header this was built with. */
typedef struct {
    size_t size;
    unsigned int magic;
    unsigned int version;
    int blocking;
    int cga_cluster_size;
    int min_ctas;
    int max_ctas;
    const char *net_name;
} config_2_14;

/* The first result of orr_nccl_open, handed to every later caller. */
static pthread_once_t nccl_once = PTHREAD_ONCE_INIT;
static void *nccl_lib;               /* dlopen handle, NULL when absent */
static orr_status nccl_status;
static char nccl_msg[sizeof ((orr_error *)0)->msg];

static void nccl_open_once(void)
{
    orr_error e = {0};
    const char *name = getenv("ORRERY_NCCL_LIB");
    if (!name || !*name)
        name = "libnccl.so.2";
    dlerror();
    nccl_lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!nccl_lib) {
        const char *why = dlerror();
        size_t n = strlen(name);
        if (why && strncmp(why, name, n) == 0 && strncmp(why + n, ": ", 2) == 0)
            why += n + 2;   /* dlerror repeats the name */
        nccl_status = orr_fail(&e, ORR_ERR_COMM, "%s: %s", name,
                               why ? why : "unknown dlopen error");
    } else {
        for (size_t i = 0; i < sizeof nccl_syms / sizeof nccl_syms[0]; i++) {
            void *f = dlsym(nccl_lib, nccl_syms[i].sym);
            if (!f && !nccl_syms[i].optional) {
                nccl_status = orr_fail(&e, ORR_ERR_COMM,
                                       "%s lacks %s: not NCCL 2 (libnccl.so.2)", name,
                                       nccl_syms[i].sym);
                for (size_t j = 0; j < i; j++)
                    *nccl_syms[j].slot = NULL;
                dlclose(nccl_lib);
                nccl_lib = NULL;
                break;
            }
            *nccl_syms[i].slot = f;
        }
    }
    if (nccl_status != ORR_OK)
        snprintf(nccl_msg, sizeof nccl_msg, "%s", e.msg);
}

orr_status orr_nccl_open(orr_error *err)
{
    pthread_once(&nccl_once, nccl_open_once);
    if (nccl_status != ORR_OK)
        return orr_fail(err, nccl_status, "%s", nccl_msg);
    return ORR_OK;
}

int orr_nccl_version(void)
{
    int v = 0;
    if (orr_nccl_open(NULL) != ORR_OK || p_ncclGetVersion(&v) != ncclSuccess)
        return 0;
    return v;
}

/* Records "call: <ncclGetErrorString>", with NCCL's own last message in
 * parentheses when it has one, and returns ORR_ERR_COMM. */
static orr_status nccl_fail(orr_error *err, ncclResult_t r, const char *call, ncclComm_t comm)
{
    const char *s = p_ncclGetErrorString ? p_ncclGetErrorString(r) : NULL;
    const char *last = p_ncclGetLastError ? p_ncclGetLastError(comm) : NULL;
    char what[64];
    if (!s || !*s) {
        snprintf(what, sizeof what, "NCCL error %d", (int)r);
        s = what;
    }
    if (last && *last)
        return orr_fail(err, ORR_ERR_COMM, "%s: %s (%.600s)", call, s, last);
    return orr_fail(err, ORR_ERR_COMM, "%s: %s", call, s);
}

/* One NCCL call, written NCCL_CHECK(ncclXxx, (args), comm): on failure
 * records "ncclXxx: <error string>", sets st and jumps to `done`. */
#define NCCL_CHECK(fn, args, comm)                                            \
    do {                                                                      \
        ncclResult_t nccl_r_ = p_##fn args;                                   \
        if (nccl_r_ != ncclSuccess) {                                         \
            st = nccl_fail(err, nccl_r_, #fn, comm);                          \
            goto done;                                                        \
        }                                                                     \
    } while (0)

/* Collective over c: every rank hands in its own result of one step (st,
 * and mine's message when st is not ORR_OK).  ORR_OK on every rank when
 * every rank succeeded; otherwise, on every rank, the status of the lowest
 * failing rank R and its message as "rank R: message".  A failing MPI call
 * gives its own error. */
static orr_status agree(orr_comm *c, orr_status st, const orr_error *mine, orr_error *err)
{
    int size = orr_comm_size(c), rank = orr_comm_rank(c);
    double v = st != ORR_OK ? (double)(size - rank) : 0.0;   /* the largest is the lowest rank */
    orr_status cst = orr_comm_max(c, &v, 1, err);
    if (cst != ORR_OK)
        return cst;
    if (v <= 0)
        return ORR_OK;
    int who = size - (int)v;
    struct {
        int code;
        char msg[sizeof mine->msg];
    } m;
    memset(&m, 0, sizeof m);
    if (who == rank) {
        m.code = (int)st;
        snprintf(m.msg, sizeof m.msg, "%s", mine->msg);
    }
    cst = orr_comm_bcast(c, &m, sizeof m, who, err);
    if (cst != ORR_OK)
        return cst;
    m.msg[sizeof m.msg - 1] = '\0';
    return orr_fail(err, m.code != ORR_OK ? (orr_status)m.code : ORR_ERR_COMM, "rank %d: %s",
                    who, m.msg);
}

/* A short pause between polls of work in progress. */
static void nap(void)
{
    struct timespec t = {0, 200000};   /* 0.2 ms */
    nanosleep(&t, NULL);
}

/* Waits until a nonblocking communicator's last call is no longer in
 * progress: ORR_OK, or its error as a failure of call. */
static orr_status settle(ncclComm_t comm, orr_error *err, const char *call)
{
    ncclResult_t state = ncclInProgress;
    while (state == ncclInProgress) {
        ncclResult_t q = p_ncclCommGetAsyncError(comm, &state);
        if (q != ncclSuccess)
            state = q;
        if (state == ncclInProgress)
            nap();
    }
    return state == ncclSuccess ? ORR_OK : nccl_fail(err, state, call, comm);
}

/* Frees a communicator that never became usable on every rank: aborted
 * (nothing flushed, nothing waited for) where NCCL can. */
static void comm_drop(ncclComm_t comm)
{
    if (!comm)
        return;
    if (p_ncclCommAbort)
        p_ncclCommAbort(comm);
    else
        p_ncclCommDestroy(comm);
}

/* What each rank tells the others of its init (orr_comm_vote codes). */
enum { JOINED = 0, FAILED = 1, GAVE_UP = 2 };

/* Step 4, every rank's ncclCommInitRank: without blocking where NCCL can
 * (ncclCommInitRankConfig with blocking = 0, NCCL 2.14), and each rank's
 * outcome told to every rank the moment it has one (orr_comm_vote), so a
 * rank still in NCCL's handshake, which waits for every rank and so for
 * ever for one that failed, hears of the failure and aborts its own.  Every
 * rank then returns the status and message of the lowest rank that failed
 * by itself, "rank R: ...".  simulate >= 0 (ORRERY_TEST_NCCL_INIT) makes
 * no NCCL call: rank `simulate` fails at once, every other rank stays in a
 * handshake that never ends by itself. */
static orr_status join(orr_nccl *n, orr_comm *c, const ncclUniqueId *id, int simulate,
                       orr_error *err)
{
    const int rank = orr_comm_rank(c), size = orr_comm_size(c);
    orr_error mine = {0};
    orr_comm_vote *v = NULL;
    orr_status st = orr_comm_vote_begin(c, &v, err);   /* collective: all or none */
    if (st)
        return st;
    ncclComm_t comm = NULL;
    int code = JOINED, pending = 0;
    if (simulate >= 0) {
        pending = rank != simulate;
        if (!pending) {
            code = FAILED;
            orr_fail(&mine, ORR_ERR_COMM, "ncclCommInitRank: simulated failure "
                     "(ORRERY_TEST_NCCL_INIT=fail=%d)", simulate);
        }
    } else {
        ncclResult_t r;
        if (p_ncclCommInitRankConfig && p_ncclCommGetAsyncError) {
            config_2_14 cfg = {sizeof cfg, 0xcafebeef, NCCL_VERSION(2, 14, 0), 0,
                               NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_INT,
                               NCCL_CONFIG_UNDEF_INT, NCCL_CONFIG_UNDEF_PTR};
            r = p_ncclCommInitRankConfig(&comm, size, *id, rank, (ncclConfig_t *)&cfg);
            n->nonblocking = 1;
            pending = r == ncclInProgress;
        } else {   /* before NCCL 2.14: blocking, so a peer's failure is heard after */
            r = p_ncclCommInitRank(&comm, size, *id, rank);
        }
        if (r != ncclSuccess && r != ncclInProgress) {
            code = FAILED;
            nccl_fail(&mine, r, "ncclCommInitRank", NULL);
            comm = NULL;   /* as NCCL left it: not ours to free */
        }
    }
    if (!pending)
        st = orr_comm_vote_cast(v, code, err);
    for (int complete = 0; !st && (pending || !complete);) {
        if (pending && simulate < 0) {   /* has NCCL finished, either way? */
            ncclResult_t state = ncclInProgress, q = p_ncclCommGetAsyncError(comm, &state);
            if (q != ncclSuccess)
                state = q;
            if (state != ncclInProgress) {
                pending = 0;
                if (state != ncclSuccess) {
                    code = FAILED;
                    nccl_fail(&mine, state, "ncclCommInitRank", comm);
                }
                st = orr_comm_vote_cast(v, code, err);
            }
        }
        int lowest = -1;
        if (!st)
            st = orr_comm_vote_test(v, &lowest, &complete, err);
        if (!st && pending && lowest >= 0) {   /* a peer failed: this handshake never ends */
            comm_drop(comm);
            comm = NULL;
            pending = 0;
            code = GAVE_UP;
            orr_fail(&mine, ORR_ERR_COMM, "ncclCommInitRank: given up, rank %d failed", lowest);
            st = orr_comm_vote_cast(v, code, err);
        }
        if (!st && (pending || !complete))
            nap();
    }
    int *codes = calloc((size_t)size, sizeof(int));
    orr_status est = orr_comm_vote_end(v, codes, err);
    if (!st)
        st = est ? est : codes ? ORR_OK : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (st) {   /* MPI itself failed: nothing can be agreed any more */
        comm_drop(comm);
        free(codes);
        orr_error_clear(&mine);
        return st;
    }
    /* the lowest rank that failed by itself, as every rank heard it */
    int who = -1;
    for (int pass = FAILED; who < 0 && pass <= GAVE_UP; pass++)
        for (int r = 0; who < 0 && r < size; r++)
            if (codes[r] == pass)
                who = r;
    free(codes);
    if (who < 0) {
        n->comm = comm;
        return ORR_OK;
    }
    comm_drop(comm);   /* made here, but not on every rank */
    struct {
        char msg[sizeof mine.msg];
    } m;
    memset(&m, 0, sizeof m);
    if (who == rank)
        snprintf(m.msg, sizeof m.msg, "%s", mine.msg);
    orr_error_clear(&mine);
    st = orr_comm_bcast(c, &m, sizeof m, who, err);
    if (st)
        return st;
    m.msg[sizeof m.msg - 1] = '\0';
    return orr_fail(err, ORR_ERR_COMM, "rank %d: %s", who, m.msg);
}

/* ORRERY_TEST_NCCL_INIT=fail=R: the rank whose init fails (join); -1 when
 * unset. */
static int simulated_failure(void)
{
    const char *v = getenv("ORRERY_TEST_NCCL_INIT");
    if (!v || strncmp(v, "fail=", 5) != 0)
        return -1;
    return atoi(v + 5) < 0 ? 0 : atoi(v + 5);
}

orr_status orr_nccl_create(orr_nccl **out, orr_comm *c, int device, orr_error *err)
{
    orr_status st, mine_st;
    orr_error mine = {0};
    orr_nccl *n = NULL;
    ncclUniqueId id;

    *out = NULL;
    if (!c)
        return orr_fail(err, ORR_ERR_ARG, "orr_nccl_create: no communicator (orr_comm)");
    int rank = orr_comm_rank(c), size = orr_comm_size(c);
    const int simulate = simulated_failure();
    if (simulate >= 0) {   /* the test hook: no NCCL, no device */
        orr_nccl sim = {NULL, rank, size, 0};
        memset(&id, 0, sizeof id);
        st = join(&sim, c, &id, simulate < size ? simulate : size - 1, err);
        return st ? st : orr_fail(err, ORR_ERR_COMM, "ORRERY_TEST_NCCL_INIT: no rank failed");
    }

    /* 1: NCCL loads on every rank */
    mine_st = orr_nccl_open(&mine);
    st = agree(c, mine_st, &mine, err);
    if (st != ORR_OK)
        goto done;

    /* 2: this rank's device, its primary context current here */
    mine_st = orr_cuda_ctx_acquire(device, &mine);
    if (mine_st == ORR_OK) {
        n = calloc(1, sizeof *n);
        if (!n)
            mine_st = orr_fail(&mine, ORR_ERR_NOMEM, "no memory for an NCCL communicator");
    }
    st = agree(c, mine_st, &mine, err);
    if (st != ORR_OK)
        goto done;
    n->rank = rank;
    n->size = size;

    /* 3: rank 0's unique id, handed to every rank */
    memset(&id, 0, sizeof id);
    mine_st = ORR_OK;
    if (rank == 0) {
        ncclResult_t r = p_ncclGetUniqueId(&id);
        if (r != ncclSuccess)
            mine_st = nccl_fail(&mine, r, "ncclGetUniqueId", NULL);
    }
    st = agree(c, mine_st, &mine, err);
    if (st == ORR_OK)
        st = orr_comm_bcast(c, &id, sizeof id, 0, err);
    if (st != ORR_OK)
        goto done;

    /* 4: every rank joins, each hearing at once of a peer that failed */
    st = join(n, c, &id, -1, err);
    if (st != ORR_OK)
        goto done;
    *out = n;
    n = NULL;

done:
    if (n) {
        comm_drop(n->comm);
        free(n);
    }
    orr_error_clear(&mine);
    return st;
}

void orr_nccl_destroy(orr_nccl *n)
{
    if (!n)
        return;
    if (n->comm) {
        /* Finalize flushes what was queued and waits for the peers (without
         * blocking, until the communicator is no longer in progress); then
         * Destroy frees locally. */
        if (p_ncclCommFinalize && p_ncclCommFinalize(n->comm) == ncclInProgress && n->nonblocking)
            settle(n->comm, NULL, "ncclCommFinalize");
        p_ncclCommDestroy(n->comm);
    }
    free(n);
}

orr_status orr_nccl_allgatherv(orr_nccl *n, orr_devptr buf, const long *counts,
                               const long *displs, size_t elem, void *stream, orr_error *err)
{
    orr_status st = ORR_OK;
    int any = 0;   /* some block has bytes */

    /* Every check before the first NCCL call, so a refused call queues nothing. */
    if (!n)
        return orr_fail(err, ORR_ERR_ARG, "orr_nccl_allgatherv: no communicator");
    if (!counts || !displs)
        return orr_fail(err, ORR_ERR_ARG, "orr_nccl_allgatherv: counts or displs is NULL");
    for (int r = 0; r < n->size; r++) {
        if (counts[r] < 0 || displs[r] < 0)
            return orr_fail(err, ORR_ERR_ARG,
                            "orr_nccl_allgatherv: negative count %ld or displacement %ld "
                            "for rank %d", counts[r], displs[r], r);
        if (elem > 0 && ((size_t)counts[r] > SIZE_MAX / elem ||
                         (size_t)displs[r] > (SIZE_MAX - (size_t)counts[r] * elem) / elem))
            return orr_fail(err, ORR_ERR_ARG,
                            "orr_nccl_allgatherv: rank %d's block (%ld + %ld elements of %zu "
                            "bytes) overflows the address space", r, displs[r], counts[r], elem);
        size_t end = ((size_t)displs[r] + (size_t)counts[r]) * elem;
        if (end > ULLONG_MAX - buf)
            return orr_fail(err, ORR_ERR_ARG,
                            "orr_nccl_allgatherv: rank %d's block (%ld + %ld elements of %zu "
                            "bytes) ends past the device address space from 0x%llx", r,
                            displs[r], counts[r], elem, buf);
        if (counts[r] > 0 && elem > 0)
            any = 1;
    }
    if (!any)
        return ORR_OK;
    if (!buf)
        return orr_fail(err, ORR_ERR_ARG, "orr_nccl_allgatherv: buffer is device address 0");

    /* An error NCCL met in earlier work (a peer gone, a network failure)
     * would otherwise show only as a hang. */
    if (p_ncclCommGetAsyncError) {
        ncclResult_t async = ncclSuccess;
        NCCL_CHECK(ncclCommGetAsyncError, (n->comm, &async), n->comm);
        if (async == ncclInProgress && n->nonblocking)   /* the last call still being queued */
            st = settle(n->comm, err, "ncclCommGetAsyncError");
        else if (async != ncclSuccess && async != ncclInProgress)
            st = nccl_fail(err, async, "ncclCommGetAsyncError", n->comm);
        if (st)
            goto done;
    }
    NCCL_CHECK(ncclGroupStart, (), n->comm);
    for (int r = 0; r < n->size && st == ORR_OK; r++) {
        if (counts[r] == 0 || elem == 0)
            continue;
        void *p = (void *)(uintptr_t)(buf + (size_t)displs[r] * elem);
        ncclResult_t br = p_ncclBroadcast(p, p, (size_t)counts[r] * elem, ncclUint8, r, n->comm,
                                          (cudaStream_t)stream);
        if (br != ncclSuccess && !(br == ncclInProgress && n->nonblocking))   /* settled below */
            st = nccl_fail(err, br, "ncclBroadcast", n->comm);
    }
    /* The group is closed on every path, or this thread's next NCCL call
     * would join it. */
    ncclResult_t gr = p_ncclGroupEnd();
    if (st == ORR_OK && gr == ncclInProgress && n->nonblocking)   /* queued once it settles */
        st = settle(n->comm, err, "ncclGroupEnd");
    else if (st == ORR_OK && gr != ncclSuccess)
        st = nccl_fail(err, gr, "ncclGroupEnd", n->comm);
done:
    return st;
}
