/* comm: the ranks of a distributed run (see comm.h).  Open MPI's libmpi.so.40
 * is reached through dlopen and a table of dlsym'd function pointers, like
 * libcuda in cuda.c; the predefined handles (MPI_COMM_WORLD, MPI_BYTE, ...)
 * are the addresses of Open MPI's global objects, found with dlsym too, so
 * nothing of MPI is linked and the program starts without MPI installed.
 * Without a launcher the world is one rank and no MPI call is made. */
#include "comm.h"
#include "util.h"

/* Open MPI's header, for the types, the prototypes (through __typeof__) and
 * plain constants (MPI_SUCCESS, MPI_IN_PLACE, MPI_THREAD_FUNNELED) only: its
 * handle macros name link-time symbols and are never used here. */
#include <mpi.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

/* Pointers with the types of mpi.h's own prototypes. */
#define MPI_FN(name) static __typeof__(&name) p_##name
MPI_FN(MPI_Initialized);
MPI_FN(MPI_Finalized);
MPI_FN(MPI_Init_thread);
MPI_FN(MPI_Finalize);
MPI_FN(MPI_Abort);
MPI_FN(MPI_Error_string);
MPI_FN(MPI_Comm_set_errhandler);
MPI_FN(MPI_Comm_dup);
MPI_FN(MPI_Comm_free);
MPI_FN(MPI_Comm_rank);
MPI_FN(MPI_Comm_size);
MPI_FN(MPI_Comm_split_type);
MPI_FN(MPI_Allgatherv);
MPI_FN(MPI_Allgather);
MPI_FN(MPI_Allreduce);
MPI_FN(MPI_Bcast);
MPI_FN(MPI_Barrier);
MPI_FN(MPI_Isend);
MPI_FN(MPI_Irecv);
MPI_FN(MPI_Test);
MPI_FN(MPI_Wait);

/* The predefined handles: addresses of Open MPI's global objects (what the
 * MPI_COMM_WORLD, MPI_BYTE, ... macros of mpi.h expand to). */
static void *o_comm_world, *o_byte, *o_int, *o_double, *o_op_sum, *o_op_max,
            *o_errors_return, *o_info_null;

/* The symbol each slot is loaded from. */
typedef struct {
    void **slot;
    const char *sym;
} mpi_sym;

static const mpi_sym mpi_syms[] = {
    {(void **)&p_MPI_Initialized, "MPI_Initialized"},
    {(void **)&p_MPI_Finalized, "MPI_Finalized"},
    {(void **)&p_MPI_Init_thread, "MPI_Init_thread"},
    {(void **)&p_MPI_Finalize, "MPI_Finalize"},
    {(void **)&p_MPI_Abort, "MPI_Abort"},
    {(void **)&p_MPI_Error_string, "MPI_Error_string"},
    {(void **)&p_MPI_Comm_set_errhandler, "MPI_Comm_set_errhandler"},
    {(void **)&p_MPI_Comm_dup, "MPI_Comm_dup"},
    {(void **)&p_MPI_Comm_free, "MPI_Comm_free"},
    {(void **)&p_MPI_Comm_rank, "MPI_Comm_rank"},
    {(void **)&p_MPI_Comm_size, "MPI_Comm_size"},
    {(void **)&p_MPI_Comm_split_type, "MPI_Comm_split_type"},
    {(void **)&p_MPI_Allgatherv, "MPI_Allgatherv"},
    {(void **)&p_MPI_Allgather, "MPI_Allgather"},
    {(void **)&p_MPI_Allreduce, "MPI_Allreduce"},
    {(void **)&p_MPI_Bcast, "MPI_Bcast"},
    {(void **)&p_MPI_Barrier, "MPI_Barrier"},
    {(void **)&p_MPI_Isend, "MPI_Isend"},
    {(void **)&p_MPI_Irecv, "MPI_Irecv"},
    {(void **)&p_MPI_Test, "MPI_Test"},
    {(void **)&p_MPI_Wait, "MPI_Wait"},
    {&o_comm_world, "ompi_mpi_comm_world"},
    {&o_byte, "ompi_mpi_byte"},
    {&o_int, "ompi_mpi_int"},
    {&o_double, "ompi_mpi_double"},
    {&o_op_sum, "ompi_mpi_op_sum"},
    {&o_op_max, "ompi_mpi_op_max"},
    {&o_errors_return, "ompi_mpi_errors_return"},
    {&o_info_null, "ompi_mpi_info_null"},
};

#define H_BYTE ((MPI_Datatype)o_byte)
#define H_INT ((MPI_Datatype)o_int)
#define H_DOUBLE ((MPI_Datatype)o_double)

/* The tag of orr_comm_vote's messages, the only point-to-point traffic on
 * the library's communicator (its collectives never match them). */
enum { VOTE_TAG = 0x6f72 };

struct orr_comm {
    int rank, size;         /* this rank, ranks */
    int local_rank;         /* rank among the ranks on this host */
    int local_size;         /* ranks on this host */
    int mpi;                /* 1 when MPI carries the collectives */
    MPI_Comm comm;          /* private duplicate of MPI_COMM_WORLD (MPI only) */
    size_t max_message;     /* largest single MPI transfer, bytes (INT_MAX) */
    int *counts, *displs;   /* allgatherv scratch, size entries each (MPI only) */
    char host[256];         /* gethostname, NUL-terminated */
    double busy_s;          /* seconds inside MPI collectives so far (orr_comm_busy_s) */
};

/* The first result of orr_comm_world, handed to every later caller. */
static pthread_once_t world_once = PTHREAD_ONCE_INIT;
static orr_comm world;
static orr_status world_status;
static char world_msg[sizeof ((orr_error *)0)->msg];
static void *mpi_lib;          /* dlopen handle, NULL when MPI is not used */
static int mpi_initialised;    /* MPI_Init_thread was called here */
static int mpi_finalised;      /* orr_comm_finalize has run MPI_Finalize */
static int world_made;         /* orr_comm_world succeeded */

/* orr_comm_at_finalize's functions, in the order registered. */
enum { MAX_AT_FINALIZE = 8 };
static void (*at_finalize[MAX_AT_FINALIZE])(orr_comm *c);
static int n_at_finalize;
static pthread_mutex_t at_finalize_lock = PTHREAD_MUTEX_INITIALIZER;

/* Records "call: <MPI error string>" and returns ORR_ERR_COMM. */
static orr_status mpi_fail(orr_error *err, int code, const char *call)
{
    char s[MPI_MAX_ERROR_STRING + 1];
    int len = 0;
    if (!p_MPI_Error_string || p_MPI_Error_string(code, s, &len) != MPI_SUCCESS || len <= 0)
        snprintf(s, sizeof s, "MPI error %d", code);
    else
        s[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING] = '\0';
    return orr_fail(err, ORR_ERR_COMM, "%s: %s", call, s);
}

/* One MPI call, written MPI_CHECK(MPI_Xxx, (args)): on failure records
 * "MPI_Xxx: <MPI error string>", sets st and jumps to the function's `done`
 * label. */
#define MPI_CHECK(fn, args)                                                   \
    do {                                                                      \
        int mpi_r_ = p_##fn args;                                             \
        if (mpi_r_ != MPI_SUCCESS) {                                          \
            st = mpi_fail(err, mpi_r_, #fn);                                  \
            goto done;                                                        \
        }                                                                     \
    } while (0)

/* MPI_CHECK for a collective on c: the time inside the call is added to
 * c->busy_s (orr_comm_busy_s). */
#define MPI_COLL(fn, args)                                                    \
    do {                                                                      \
        const double mpi_t0_ = orr_now_s();                                   \
        int mpi_r_ = p_##fn args;                                             \
        c->busy_s += orr_now_s() - mpi_t0_;                                   \
        if (mpi_r_ != MPI_SUCCESS) {                                          \
            st = mpi_fail(err, mpi_r_, #fn);                                  \
            goto done;                                                        \
        }                                                                     \
    } while (0)

int orr_comm_launched(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
                                       "PMI_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return 1;
    }
    return 0;
}

static int env_int(const char *const *vars, int fallback)
{
    for (; *vars; vars++) {
        const char *v = getenv(*vars);
        char *end;
        long x = v && *v ? strtol(v, &end, 10) : -1;
        if (v && *v && !*end && x >= 0 && x < (1L << 30))
            return (int)x;
    }
    return fallback;
}

void orr_comm_env_rank(int *rank, int *size)
{
    static const char *const ranks[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", NULL};
    static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};
    const int launched = orr_comm_launched();
    *rank = launched ? env_int(ranks, 0) : 0;
    *size = launched ? env_int(sizes, 0) : 1;
}

/* Opens the MPI library and fills the table; on failure nothing stays open. */
static orr_status mpi_load(orr_error *err)
{
    const char *name = getenv("ORRERY_MPI_LIB");
    if (!name || !*name)
        name = "libmpi.so.40";
    dlerror();
    /* GLOBAL: the plugins Open MPI opens itself need libmpi's symbols. */
    mpi_lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    if (!mpi_lib) {
        const char *why = dlerror();
        size_t n = strlen(name);
        if (why && strncmp(why, name, n) == 0 && strncmp(why + n, ": ", 2) == 0)
            why += n + 2;   /* dlerror repeats the name */
        return orr_fail(err, ORR_ERR_COMM,
                        "started by an MPI launcher but MPI cannot be loaded (%s: %s); "
                        "install Open MPI (Debian: openmpi-bin)",
                        name, why ? why : "unknown dlopen error");
    }
    for (size_t i = 0; i < sizeof mpi_syms / sizeof mpi_syms[0]; i++) {
        void *f = dlsym(mpi_lib, mpi_syms[i].sym);
        if (!f) {
            for (size_t j = 0; j < i; j++)
                *mpi_syms[j].slot = NULL;
            dlclose(mpi_lib);
            mpi_lib = NULL;
            return orr_fail(err, ORR_ERR_COMM,
                            "the MPI library %s lacks %s: not Open MPI (libmpi.so.40)", name,
                            mpi_syms[i].sym);
        }
        *mpi_syms[i].slot = f;
    }
    return ORR_OK;
}

/* Initialises MPI (unless the program did already) and fills world. */
static orr_status mpi_world(orr_error *err)
{
    orr_status st = ORR_OK;
    MPI_Comm node = NULL;
    int flag = 0, provided = 0;

    MPI_CHECK(MPI_Initialized, (&flag));
    if (!flag) {
        /* FUNNELED: OpenMP threads run inside a rank; MPI is called from
         * the thread that called orr_comm_world. */
        MPI_CHECK(MPI_Init_thread, (NULL, NULL, MPI_THREAD_FUNNELED, &provided));
        mpi_initialised = 1;
        MPI_CHECK(MPI_Comm_set_errhandler, ((MPI_Comm)o_comm_world,
                                            (MPI_Errhandler)o_errors_return));
        if (provided < MPI_THREAD_FUNNELED) {
            st = orr_fail(err, ORR_ERR_COMM,
                          "MPI_Init_thread: MPI provides thread level %d, below "
                          "MPI_THREAD_FUNNELED (%d)", provided, MPI_THREAD_FUNNELED);
            goto done;
        }
    }
    /* A duplicate of the world: the errors-return handler and the messages
     * stay apart from whatever else in the process uses MPI_COMM_WORLD. */
    MPI_CHECK(MPI_Comm_dup, ((MPI_Comm)o_comm_world, &world.comm));
    MPI_CHECK(MPI_Comm_set_errhandler, (world.comm, (MPI_Errhandler)o_errors_return));
    MPI_CHECK(MPI_Comm_rank, (world.comm, &world.rank));
    MPI_CHECK(MPI_Comm_size, (world.comm, &world.size));
    MPI_CHECK(MPI_Comm_split_type, (world.comm, MPI_COMM_TYPE_SHARED, world.rank,
                                    (MPI_Info)o_info_null, &node));
    MPI_CHECK(MPI_Comm_rank, (node, &world.local_rank));
    MPI_CHECK(MPI_Comm_size, (node, &world.local_size));
    world.counts = malloc(sizeof(int) * (size_t)world.size);
    world.displs = malloc(sizeof(int) * (size_t)world.size);
    if (!world.counts || !world.displs) {
        st = orr_fail(err, ORR_ERR_NOMEM, "no memory for %d ranks' counts", world.size);
        goto done;
    }
    world.mpi = 1;
done:
    if (node)
        p_MPI_Comm_free(&node);
    return st;
}

static void world_once_init(void)
{
    orr_error e = {0};
    orr_status st = ORR_OK;

    world.rank = 0;
    world.size = 1;
    world.local_rank = 0;
    world.local_size = 1;
    world.max_message = INT_MAX;
    if (gethostname(world.host, sizeof world.host) != 0)
        snprintf(world.host, sizeof world.host, "localhost");
    world.host[sizeof world.host - 1] = '\0';
    if (orr_comm_launched()) {
        st = mpi_load(&e);
        if (st == ORR_OK)
            st = mpi_world(&e);
    }
    world_status = st;
    world_made = st == ORR_OK;
    if (st != ORR_OK)
        snprintf(world_msg, sizeof world_msg, "%s", e.msg);
}

orr_status orr_comm_world(orr_comm **out, orr_error *err)
{
    *out = NULL;
    pthread_once(&world_once, world_once_init);
    if (world_status != ORR_OK)
        return orr_fail(err, world_status, "%s", world_msg);
    *out = &world;
    return ORR_OK;
}

int orr_comm_rank(const orr_comm *c) { return c->rank; }
int orr_comm_size(const orr_comm *c) { return c->size; }
int orr_comm_local_rank(const orr_comm *c) { return c->local_rank; }
int orr_comm_local_size(const orr_comm *c) { return c->local_size; }
int orr_comm_uses_mpi(const orr_comm *c) { return c->mpi; }
const char *orr_comm_host(const orr_comm *c) { return c->host; }
double orr_comm_busy_s(const orr_comm *c) { return c->busy_s; }

void orr_comm_set_max_message(orr_comm *c, size_t bytes)
{
    c->max_message = bytes < 1 ? 1 : bytes > INT_MAX ? (size_t)INT_MAX : bytes;
}

/* Refuses collectives over MPI after orr_comm_finalize. */
static orr_status usable(const orr_comm *c, const char *what, orr_error *err)
{
    if (c->mpi && mpi_finalised)
        return orr_fail(err, ORR_ERR_COMM, "%s: MPI was finalised (orr_comm_finalize)", what);
    return ORR_OK;
}

/* Rank root's n bytes at p to every rank, in messages of at most
 * c->max_message bytes. */
static orr_status bcast_bytes(orr_comm *c, char *p, size_t n, int root, orr_error *err)
{
    orr_status st = ORR_OK;
    while (n > 0) {
        size_t k = n < c->max_message ? n : c->max_message;
        MPI_COLL(MPI_Bcast, (p, (int)k, H_BYTE, root, c->comm));
        p += k;
        n -= k;
    }
done:
    return st;
}

orr_status orr_comm_allgatherv(orr_comm *c, void *buf, const long *counts, const long *displs,
                               size_t elem, orr_error *err)
{
    orr_status st = usable(c, "orr_comm_allgatherv", err);
    if (st != ORR_OK)
        return st;
    int small = 1;   /* every count and displacement fits one MPI_Allgatherv */
    for (int r = 0; r < c->size; r++) {
        if (counts[r] < 0 || displs[r] < 0)
            return orr_fail(err, ORR_ERR_ARG,
                            "orr_comm_allgatherv: negative count %ld or displacement %ld "
                            "for rank %d", counts[r], displs[r], r);
        if (elem > 0 && ((size_t)counts[r] > SIZE_MAX / elem ||
                         (size_t)displs[r] > (SIZE_MAX - (size_t)counts[r] * elem) / elem))
            return orr_fail(err, ORR_ERR_ARG,
                            "orr_comm_allgatherv: rank %d's block (%ld + %ld elements of %zu "
                            "bytes) overflows the address space", r, displs[r], counts[r], elem);
        if ((size_t)counts[r] * elem > c->max_message || (size_t)displs[r] * elem > INT_MAX)
            small = 0;
    }
    if (!c->mpi)
        return ORR_OK;   /* one rank, in place: its block is already there */
    if (small) {
        for (int r = 0; r < c->size; r++) {
            c->counts[r] = (int)((size_t)counts[r] * elem);
            c->displs[r] = (int)((size_t)displs[r] * elem);
        }
        MPI_COLL(MPI_Allgatherv, (MPI_IN_PLACE, 0, H_BYTE, buf, c->counts, c->displs, H_BYTE,
                                   c->comm));
    } else {
        /* Counts past an int (or the message limit): each block broadcast
         * from its rank, in pieces. */
        for (int r = 0; r < c->size && st == ORR_OK; r++)
            st = bcast_bytes(c, (char *)buf + (size_t)displs[r] * elem,
                             (size_t)counts[r] * elem, r, err);
        if (st != ORR_OK)
            orr_error_context(err, "orr_comm_allgatherv");
    }
done:
    return st;
}

orr_status orr_comm_allgather(orr_comm *c, const void *mine, void *all, size_t bytes,
                              orr_error *err)
{
    orr_status st = usable(c, "orr_comm_allgather", err);
    if (st != ORR_OK)
        return st;
    if (bytes > 0 && (size_t)c->size > SIZE_MAX / bytes)
        return orr_fail(err, ORR_ERR_ARG,
                        "orr_comm_allgather: %d blocks of %zu bytes overflow the address space",
                        c->size, bytes);
    char *slot = (char *)all + (size_t)c->rank * bytes;
    if (!c->mpi || bytes > c->max_message) {
        if (slot != (const char *)mine)
            memmove(slot, mine, bytes);
        if (!c->mpi)
            return ORR_OK;
        for (int r = 0; r < c->size && st == ORR_OK; r++)
            st = bcast_bytes(c, (char *)all + (size_t)r * bytes, bytes, r, err);
        if (st != ORR_OK)
            orr_error_context(err, "orr_comm_allgather");
        return st;
    }
    MPI_COLL(MPI_Allgather, (slot == (const char *)mine ? MPI_IN_PLACE : mine, (int)bytes,
                              H_BYTE, all, (int)bytes, H_BYTE, c->comm));
done:
    return st;
}

/* Element-wise reduction of count doubles in place with the operation op. */
static orr_status reduce(orr_comm *c, double *v, int count, void *op, const char *what,
                         orr_error *err)
{
    orr_status st = usable(c, what, err);
    if (st != ORR_OK)
        return st;
    if (count < 0)
        return orr_fail(err, ORR_ERR_ARG, "%s: negative count %d", what, count);
    if (!c->mpi)
        return ORR_OK;
    MPI_COLL(MPI_Allreduce, (MPI_IN_PLACE, v, count, H_DOUBLE, (MPI_Op)op, c->comm));
done:
    return st;
}

orr_status orr_comm_sum(orr_comm *c, double *v, int count, orr_error *err)
{
    return reduce(c, v, count, o_op_sum, "orr_comm_sum", err);
}

orr_status orr_comm_max(orr_comm *c, double *v, int count, orr_error *err)
{
    return reduce(c, v, count, o_op_max, "orr_comm_max", err);
}

orr_status orr_comm_bcast(orr_comm *c, void *buf, size_t bytes, int root, orr_error *err)
{
    orr_status st = usable(c, "orr_comm_bcast", err);
    if (st != ORR_OK)
        return st;
    if (root < 0 || root >= c->size)
        return orr_fail(err, ORR_ERR_ARG, "orr_comm_bcast: root %d is not a rank (0 to %d)",
                        root, c->size - 1);
    if (!c->mpi)
        return ORR_OK;
    return bcast_bytes(c, buf, bytes, root, err);
}

orr_status orr_comm_all_ok(orr_comm *c, orr_status st, orr_error *err, const char *what, ...)
{
    double v = st != ORR_OK ? (double)(c->size - c->rank) : 0;   /* the lowest rank wins */
    orr_error e = {0};
    orr_status cst = orr_comm_max(c, &v, 1, st ? &e : err);
    orr_error_clear(&e);
    if (st || cst)
        return st ? st : cst;
    if (v == 0)
        return ORR_OK;
    char text[256];
    va_list ap;
    va_start(ap, what);
    vsnprintf(text, sizeof text, what, ap);
    va_end(ap);
    return orr_fail(err, ORR_ERR_COMM, "rank %d could not %s", c->size - (int)v, text);
}

orr_status orr_comm_agree(orr_comm *c, orr_status st, int name_rank, orr_error *err)
{
    if (!c || c->size == 1)
        return st;
    /* every rank's status: the lowest failing rank, and whether all failed */
    int *all = malloc(sizeof(int) * (size_t)c->size), mine = (int)st;
    orr_error e = {0};
    orr_status cst = all ? orr_comm_allgather(c, &mine, all, sizeof mine, st ? &e : err)
                         : orr_fail(st ? &e : err, ORR_ERR_NOMEM, "out of memory");
    int who = -1, failed = 0;
    for (int r = 0; !cst && r < c->size; r++)
        if (all[r] != ORR_OK) {
            who = who < 0 ? r : who;
            failed++;
        }
    free(all);
    struct {
        int code;
        char msg[sizeof err->msg];
    } m;
    memset(&m, 0, sizeof m);
    if (!cst && who >= 0) {
        if (who == c->rank) {
            m.code = (int)st;
            snprintf(m.msg, sizeof m.msg, "%s", err ? err->msg : "unknown error");
        }
        cst = orr_comm_bcast(c, &m, sizeof m, who, st ? &e : err);
    }
    if (cst) {
        orr_error_clear(&e);   /* where this rank failed, its own error stands */
        return st ? st : cst;
    }
    if (who < 0)
        return ORR_OK;
    m.msg[sizeof m.msg - 1] = '\0';
    orr_status code = m.code != ORR_OK ? (orr_status)m.code : ORR_ERR_COMM;
    if (name_rank && failed < c->size)
        orr_fail(err, code, "rank %d: %s", who, m.msg);
    else
        orr_fail(err, code, "%s", m.msg);
    if (err)
        err->shared = 1;
    return code;
}

/* Appends printf-style text at *used in buf (size bytes), never past it. */
static void append(char *buf, size_t size, size_t *used, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    if (*used >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *used, size - *used, fmt, ap);
    va_end(ap);
    *used = w < 0 ? size : *used + (size_t)w >= size ? size : *used + (size_t)w;
}

/* The message of a disagreement: group[r] is the lowest rank whose choice
 * is rank r's, shown[r * w ..] (w bytes, NUL-padded) each rank's choice
 * as the message shows it.  Every rank builds the same one (shared). */
static orr_status disagree(const orr_comm *c, const int *group, const char *shown, int w,
                           const char *what, const char *hint, orr_error *err)
{
    char text[sizeof err->msg];
    size_t used = 0;
    append(text, sizeof text, &used, "the ranks disagree on %s:", what);
    for (int g = 0, seen = 0; g < c->size; g++) {
        if (group[g] != g)
            continue;
        int members = 0, listed = 0;
        for (int r = g; r < c->size; r++)
            members += group[r] == g;
        const char *v = shown + (size_t)g * (size_t)w;
        append(text, sizeof text, &used, "%s \"%.*s\" on rank%s", seen++ ? "," : "", w - 1, v,
               members > 1 ? "s" : "");
        for (int r = g; r < c->size; r++) {
            if (group[r] != g)
                continue;
            if (listed == 8 && members > 9) {   /* long lists: the first eight */
                append(text, sizeof text, &used, " and %d more", members - listed);
                break;
            }
            const char *sep = listed == 0 ? " " : listed == members - 1 ? " and " : ", ";
            append(text, sizeof text, &used, "%s%d", sep, r);
            listed++;
        }
    }
    if (hint && *hint)
        append(text, sizeof text, &used, " (%s)", hint);
    orr_status st = orr_fail(err, ORR_ERR_ARG, "%s", text);
    if (err)
        err->shared = 1;   /* every rank found the same */
    return st;
}

/* group[r]: the lowest rank whose key (w bytes at keys + r * w) is rank
 * r's; returns how many groups. */
static int group_keys(const orr_comm *c, const char *keys, size_t w, int *group)
{
    int groups = 0;
    for (int r = 0; r < c->size; r++) {
        group[r] = r;
        for (int q = 0; q < r && group[r] == r; q++)
            if (memcmp(keys + (size_t)q * w, keys + (size_t)r * w, w) == 0)
                group[r] = group[q];
        groups += group[r] == r;
    }
    return groups;
}

orr_status orr_comm_same(orr_comm *c, const char *mine, const char *what, const char *hint,
                         orr_error *err)
{
    enum { W = ORR_COMM_CHOICE };
    if (!c || c->size == 1)
        return ORR_OK;
    char own[W] = {0};
    snprintf(own, sizeof own, "%s", mine ? mine : "");
    char *all = malloc((size_t)c->size * W);
    int *group = malloc(sizeof(int) * (size_t)c->size);
    orr_status st = all && group ? ORR_OK : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    /* every rank takes part in the all-gather, whatever happened before */
    st = orr_comm_agree(c, st, 1, err);
    if (!st)
        st = orr_comm_allgather(c, own, all, W, err);
    if (!st && group_keys(c, all, W, group) > 1)
        st = disagree(c, group, all, W, what, hint, err);
    free(all);
    free(group);
    return st;
}

orr_status orr_comm_same_text(orr_comm *c, const char *mine, const char *what, const char *hint,
                              orr_error *err)
{
    enum { SHOWN = 200 };   /* a text's bytes a message shows: its head and tail */
    if (!c || c->size == 1)
        return ORR_OK;
    if (!mine)
        mine = "";
    const size_t len = strlen(mine);
    /* the key: the text's length and a 64-bit hash of it */
    uint64_t key[2] = {(uint64_t)len, (uint64_t)XXH3_64bits(mine, len)};
    uint64_t *keys = malloc(sizeof key * (size_t)c->size);
    int *group = malloc(sizeof(int) * (size_t)c->size);
    char *shown = NULL;
    orr_status st = keys && group ? ORR_OK : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    st = orr_comm_agree(c, st, 1, err);
    if (!st)
        st = orr_comm_allgather(c, key, keys, sizeof key, err);
    if (!st && group_keys(c, (const char *)keys, sizeof key, group) > 1) {
        /* only where they differ: every rank's text as the message shows it */
        char own[SHOWN] = {0};
        if (len < SHOWN)
            memcpy(own, mine, len);
        else
            snprintf(own, sizeof own, "%.60s...%s", mine, mine + len - (SHOWN - 64));
        shown = malloc((size_t)c->size * SHOWN);
        st = orr_comm_agree(c, shown ? ORR_OK : orr_fail(err, ORR_ERR_NOMEM, "out of memory"),
                            1, err);
        if (!st)
            st = orr_comm_allgather(c, own, shown, SHOWN, err);
        if (!st)
            st = disagree(c, group, shown, SHOWN, what, hint, err);
    }
    free(keys);
    free(group);
    free(shown);
    return st;
}

/* ---- votes --------------------------------------------------------------- */

struct orr_comm_vote {
    orr_comm *c;
    int *codes;            /* every rank's code, -1 until heard */
    MPI_Request *recv;     /* from each other rank (MPI only) */
    MPI_Request *send;     /* to each other rank, once cast (MPI only) */
    char *recv_done, *send_done;
    int cast;              /* this rank's code was sent */
};

static void vote_free(orr_comm_vote *v)
{
    if (!v)
        return;
    free(v->codes);
    free(v->recv);
    free(v->send);
    free(v->recv_done);
    free(v->send_done);
    free(v);
}

orr_status orr_comm_vote_begin(orr_comm *c, orr_comm_vote **out, orr_error *err)
{
    *out = NULL;
    orr_status st = usable(c, "orr_comm_vote_begin", err);
    if (st)
        return st;
    const size_t n = (size_t)c->size;
    orr_comm_vote *v = calloc(1, sizeof *v);
    if (v) {
        v->c = c;
        v->codes = malloc(sizeof(int) * n);
        v->recv = calloc(n, sizeof(MPI_Request));
        v->send = calloc(n, sizeof(MPI_Request));
        v->recv_done = calloc(n, 1);
        v->send_done = calloc(n, 1);
    }
    if (!v || !v->codes || !v->recv || !v->send || !v->recv_done || !v->send_done)
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory for a vote of %d ranks", c->size);
    /* every rank has its vote before any posts a receive: a receive left
     * posted would take the next vote's messages */
    st = orr_comm_agree(c, st, 1, err);
    if (st) {
        vote_free(v);
        return st;
    }
    for (int r = 0; r < c->size; r++) {
        v->codes[r] = -1;
        v->recv_done[r] = v->send_done[r] = r == c->rank || !c->mpi;
    }
    for (int r = 0; c->mpi && r < c->size; r++)
        if (r != c->rank)
            MPI_CHECK(MPI_Irecv, (&v->codes[r], 1, H_INT, r, VOTE_TAG, c->comm, &v->recv[r]));
done:
    if (st) {   /* receives already posted stay posted: MPI is unusable now anyway */
        vote_free(v);
        return st;
    }
    *out = v;
    return ORR_OK;
}

orr_status orr_comm_vote_cast(orr_comm_vote *v, int code, orr_error *err)
{
    orr_status st = ORR_OK;
    orr_comm *c = v->c;
    if (v->cast)
        return orr_fail(err, ORR_ERR_ARG, "orr_comm_vote_cast: this rank has voted already");
    if (code < 0)
        return orr_fail(err, ORR_ERR_ARG, "orr_comm_vote_cast: negative code %d", code);
    v->codes[c->rank] = code;
    v->cast = 1;
    for (int r = 0; c->mpi && r < c->size; r++)
        if (r != c->rank)
            MPI_CHECK(MPI_Isend, (&v->codes[c->rank], 1, H_INT, r, VOTE_TAG, c->comm,
                                  &v->send[r]));
done:
    return st;
}

/* Completes what has arrived or gone (wait: everything); 1 when all has. */
static orr_status vote_progress(orr_comm_vote *v, int wait, int *complete, orr_error *err)
{
    orr_status st = ORR_OK;
    orr_comm *c = v->c;
    int all = 1;
    for (int r = 0; r < c->size; r++) {
        int flag = 0;
        if (!v->recv_done[r]) {
            if (wait)
                MPI_CHECK(MPI_Wait, (&v->recv[r], MPI_STATUS_IGNORE));
            else
                MPI_CHECK(MPI_Test, (&v->recv[r], &flag, MPI_STATUS_IGNORE));
            v->recv_done[r] = (char)(wait || flag);
        }
        if (v->cast && !v->send_done[r]) {
            if (wait)
                MPI_CHECK(MPI_Wait, (&v->send[r], MPI_STATUS_IGNORE));
            else
                MPI_CHECK(MPI_Test, (&v->send[r], &flag, MPI_STATUS_IGNORE));
            v->send_done[r] = (char)(wait || flag);
        }
        all = all && v->recv_done[r] && v->send_done[r];
    }
done:
    *complete = all && v->cast;
    return st;
}

orr_status orr_comm_vote_test(orr_comm_vote *v, int *lowest, int *complete, orr_error *err)
{
    int done = 0;
    orr_status st = vote_progress(v, 0, &done, err);
    *lowest = -1;
    for (int r = 0; r < v->c->size && *lowest < 0; r++)
        if (v->recv_done[r] && v->codes[r] > 0)
            *lowest = r;
    if (complete)
        *complete = done;
    return st;
}

orr_status orr_comm_vote_end(orr_comm_vote *v, int *codes, orr_error *err)
{
    if (!v)
        return ORR_OK;
    orr_status st = v->cast ? ORR_OK
                            : orr_fail(err, ORR_ERR_ARG, "orr_comm_vote_end: this rank has not "
                                       "voted (orr_comm_vote_cast)");
    int done = 0;
    if (!st)
        st = vote_progress(v, 1, &done, err);
    if (!st && codes)
        memcpy(codes, v->codes, sizeof(int) * (size_t)v->c->size);
    vote_free(v);
    return st;
}

orr_status orr_comm_barrier(orr_comm *c, orr_error *err)
{
    orr_status st = usable(c, "orr_comm_barrier", err);
    if (st != ORR_OK || !c->mpi)
        return st;
    MPI_COLL(MPI_Barrier, (c->comm));
done:
    return st;
}

void orr_comm_abort(orr_comm *c, int code)
{
    /* Every rank of the job, whether or not this rank's world was made:
     * a rank may fail between MPI_Init_thread and the end of orr_comm_world. */
    int up = 0;
    if (!mpi_lib || mpi_finalised || p_MPI_Initialized(&up) != MPI_SUCCESS || !up)
        return;
    p_MPI_Abort(c && c->mpi ? c->comm : (MPI_Comm)o_comm_world, code);
}

void orr_comm_at_finalize(void (*fn)(orr_comm *c))
{
    pthread_mutex_lock(&at_finalize_lock);
    int known = 0;
    for (int k = 0; k < n_at_finalize; k++)
        known |= at_finalize[k] == fn;
    if (!known && n_at_finalize < MAX_AT_FINALIZE)
        at_finalize[n_at_finalize++] = fn;
    pthread_mutex_unlock(&at_finalize_lock);
}

void orr_comm_finalize(void)
{
    /* what the layers above keep over the ranks, torn down while the
     * collectives still work (each function once) */
    pthread_mutex_lock(&at_finalize_lock);
    int n = n_at_finalize;
    void (*fns[MAX_AT_FINALIZE])(orr_comm *c);
    memcpy(fns, at_finalize, sizeof fns);
    n_at_finalize = 0;
    pthread_mutex_unlock(&at_finalize_lock);
    for (int k = 0; k < n && world_made && !mpi_finalised; k++)
        fns[k](&world);
    if (!mpi_initialised || mpi_finalised)
        return;
    int done = 0;
    if (p_MPI_Finalized(&done) == MPI_SUCCESS && done) {
        mpi_finalised = 1;
        return;
    }
    if (world.comm)
        p_MPI_Comm_free(&world.comm);
    p_MPI_Finalize();
    mpi_finalised = 1;
}
