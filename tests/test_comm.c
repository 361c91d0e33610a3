/* test_comm: the ranks of a distributed run (core/ranks/comm.c).
 *
 * Run plainly (make test): the one-rank world without MPI (rank 0 of 1,
 * collectives leave the data as given, argument checks), which launcher
 * variables count as launched, and, in child processes of this binary that
 * claim to be launched (OMPI_COMM_WORLD_SIZE=1), the documented error when
 * the MPI library cannot be loaded or is not Open MPI (ORRERY_MPI_LIB).
 *
 * Run under mpirun (tests/test_mpi.sh, 2 and 3 ranks): rank, size and local
 * rank against the launcher's variables and across ranks, allgatherv of
 * blocks of different sizes (the rank count not dividing the total, an
 * empty block, gaps left untouched), allgather, sum, max and bcast with
 * exact expected values, each also through the piecewise path (a lowered
 * message limit), the seconds spent in collectives (orr_comm_busy_s), agreement on a result some ranks reach (orr_comm_agree)
 * and on a choice (orr_comm_same; orr_comm_same_text, a path of any
 * length), every rank's notes gathered (orr_dist_notes), a vote heard without waiting (orr_comm_vote), two ranks on one GPU told by the GPUs' UUIDs
 * (orr_dist_shared_gpu), then finalize.  Every rank runs the same tests and prints
 * its own cmocka summary.  Each test makes all its collective calls before
 * its first assertion, so a failure on one rank does not leave the others
 * waiting in a collective of the next test. */
#include "testutil.h"

#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include "comm.h"
#include "dist.h"
#include "util.h"

/* ---- one rank, no launcher ------------------------------------------------ */

static void test_one_world(void **state)
{
    (void)state;
    orr_error err = {0};
    orr_comm *c = NULL, *again = NULL;
    assert_int_equal(orr_comm_launched(), 0);
    TU_OK(orr_comm_world(&c, &err), &err);
    TU_OK(orr_comm_world(&again, &err), &err);
    assert_ptr_equal(c, again);
    assert_int_equal(orr_comm_rank(c), 0);
    assert_int_equal(orr_comm_size(c), 1);
    assert_int_equal(orr_comm_local_rank(c), 0);
    assert_int_equal(orr_comm_uses_mpi(c), 0);
    char host[256] = "";
    assert_int_equal(gethostname(host, sizeof host - 1), 0);
    assert_string_equal(orr_comm_host(c), host);
}

static void test_one_collectives(void **state)
{
    (void)state;
    orr_error err = {0};
    orr_comm *c = NULL;
    TU_OK(orr_comm_world(&c, &err), &err);

    double buf[10], want[10];
    for (int i = 0; i < 10; i++)
        buf[i] = want[i] = 0.5 + i;
    long counts[1] = {5}, displs[1] = {3};
    TU_OK(orr_comm_allgatherv(c, buf, counts, displs, sizeof(double), &err), &err);
    assert_memory_equal(buf, want, sizeof buf);

    int mine[3] = {7, 8, 9}, all[3] = {0, 0, 0};
    TU_OK(orr_comm_allgather(c, mine, all, sizeof mine, &err), &err);
    assert_memory_equal(all, mine, sizeof mine);
    TU_OK(orr_comm_allgather(c, all, all, sizeof all, &err), &err);   /* in place */
    assert_memory_equal(all, mine, sizeof mine);

    double v[3] = {-1.25, 0, 3e300};
    TU_OK(orr_comm_sum(c, v, 3, &err), &err);
    assert_true(v[0] == -1.25 && v[1] == 0 && v[2] == 3e300);
    TU_OK(orr_comm_max(c, v, 3, &err), &err);
    assert_true(v[0] == -1.25 && v[1] == 0 && v[2] == 3e300);
    TU_OK(orr_comm_sum(c, v, 0, &err), &err);

    TU_OK(orr_comm_bcast(c, buf, sizeof buf, 0, &err), &err);
    assert_memory_equal(buf, want, sizeof buf);
    TU_OK(orr_comm_barrier(c, &err), &err);
    assert_true(orr_comm_busy_s(c) == 0);   /* no MPI: no time in collectives */

    /* finalize and abort do nothing without MPI; the world still works */
    orr_comm_finalize();
    orr_comm_finalize();
    orr_comm_abort(c, 3);
    orr_comm_abort(NULL, 3);
    TU_OK(orr_comm_barrier(c, &err), &err);
    TU_OK(orr_comm_sum(c, v, 3, &err), &err);
}

/* One rank: a vote is local, and agreements and choices pass st as it is. */
static void test_one_vote_agree(void **state)
{
    (void)state;
    orr_error err = {0};
    orr_comm *c = NULL;
    TU_OK(orr_comm_world(&c, &err), &err);
    orr_comm_vote *v = NULL;
    int codes[1] = {-1}, lowest = -2, complete = 0;
    TU_OK(orr_comm_vote_begin(c, &v, &err), &err);
    TU_OK(orr_comm_vote_test(v, &lowest, &complete, &err), &err);
    assert_int_equal(lowest, -1);
    assert_int_equal(complete, 0);   /* not cast yet */
    TU_OK(orr_comm_vote_cast(v, 3, &err), &err);
    assert_int_equal(orr_comm_vote_cast(v, 3, &err), ORR_ERR_ARG);
    TU_OK(orr_comm_vote_test(v, &lowest, &complete, &err), &err);
    assert_int_equal(lowest, 0);
    assert_int_equal(complete, 1);
    TU_OK(orr_comm_vote_end(v, codes, &err), &err);
    assert_int_equal(codes[0], 3);
    orr_fail(&err, ORR_ERR_IO, "mine");
    assert_int_equal(orr_comm_agree(c, ORR_ERR_IO, 1, &err), ORR_ERR_IO);
    assert_string_equal(err.msg, "mine");
    assert_int_equal(err.shared, 0);
    TU_OK(orr_comm_same(c, "x", "y", NULL, &err), &err);
    TU_OK(orr_comm_same_text(c, "x", "y", NULL, &err), &err);
}

static void test_one_arguments(void **state)
{
    (void)state;
    orr_error err = {0};
    orr_comm *c = NULL;
    TU_OK(orr_comm_world(&c, &err), &err);
    double buf[4] = {0};
    long counts[1] = {-2}, displs[1] = {0};
    assert_int_equal(orr_comm_allgatherv(c, buf, counts, displs, 8, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "orr_comm_allgatherv: negative count -2 or displacement 0 "
                                 "for rank 0");
    counts[0] = 1L << 62;
    assert_int_equal(orr_comm_allgatherv(c, buf, counts, displs, 8, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "orr_comm_allgatherv: rank 0's block (0 + 4611686018427387904 "
                                 "elements of 8 bytes) overflows the address space");
    assert_int_equal(orr_comm_bcast(c, buf, sizeof buf, 1, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "orr_comm_bcast: root 1 is not a rank (0 to 0)");
    assert_int_equal(orr_comm_max(c, buf, -1, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "orr_comm_max: negative count -1");
    assert_string_equal(orr_status_name(ORR_ERR_COMM), "communication error");
}

/* Sets NAME=VALUE (unset when VALUE is NULL) and returns orr_comm_launched(). */
static int launched_with(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
    int l = orr_comm_launched();
    unsetenv(name);
    return l;
}

static void test_launcher_variables(void **state)
{
    (void)state;
    assert_int_equal(launched_with("OMPI_COMM_WORLD_SIZE", "4"), 1);
    assert_int_equal(launched_with("PMIX_RANK", "0"), 1);
    assert_int_equal(launched_with("PMI_RANK", "2"), 1);
    assert_int_equal(launched_with("PMI_SIZE", "3"), 1);
    assert_int_equal(launched_with("PMI_SIZE", ""), 0);       /* empty: not set */
    assert_int_equal(launched_with("SLURM_PROCID", "1"), 0);  /* Slurm alone: no MPI */
    assert_int_equal(orr_comm_launched(), 0);
}

/* Runs this binary as "--world" in a fresh process, as launched, with
 * ORRERY_MPI_LIB=lib; returns what it printed (static). */
static const char *child_world(const char *lib)
{
    static char out[4096];
    return tu_run_self("--world", "OMPI_COMM_WORLD_SIZE", "1", "ORRERY_MPI_LIB", lib, out,
                       sizeof out);
}

static void test_launched_without_mpi(void **state)
{
    (void)state;
    assert_string_equal(child_world("/nonexistent/libmpi.so.40"),
                        "communication error: started by an MPI launcher but MPI cannot be "
                        "loaded (/nonexistent/libmpi.so.40: cannot open shared object file: "
                        "No such file or directory); install Open MPI (Debian: openmpi-bin)\n"
                        "again: same\n");
}

static void test_launched_not_open_mpi(void **state)
{
    (void)state;
    assert_string_equal(child_world("libc.so.6"),
                        "communication error: the MPI library libc.so.6 lacks MPI_Initialized: "
                        "not Open MPI (libmpi.so.40)\n"
                        "again: same\n");
}

/* The child's side: prints orr_comm_world's result, then whether a second
 * call gives the same one. */
static int world_mode(void)
{
    orr_error err = {0}, again = {0};
    orr_comm *c = NULL, *c2 = NULL;
    orr_status st = orr_comm_world(&c, &err);
    if (st == ORR_OK)
        printf("rank %d of %d\n", orr_comm_rank(c), orr_comm_size(c));
    else
        printf("%s: %s\n", orr_status_name(st), err.msg);
    orr_status st2 = orr_comm_world(&c2, &again);
    printf("again: %s\n", st2 == st && c2 == c && strcmp(err.msg, again.msg) == 0 ? "same"
                                                                                : "different");
    orr_comm_finalize();
    return 0;
}

/* ---- N ranks under mpirun ------------------------------------------------- */

static orr_comm *world(void)
{
    orr_error err = {0};
    orr_comm *c = NULL;
    TU_OK(orr_comm_world(&c, &err), &err);
    return c;
}

static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

typedef struct {
    int rank, local_rank;
    char host[64];
} rank_info;

static void test_mpi_world(void **state)
{
    (void)state;
    orr_comm *c = world(), *again = NULL;
    orr_error err = {0};
    int n = orr_comm_size(c), me = orr_comm_rank(c);
    rank_info mine = {me, orr_comm_local_rank(c), ""}, *all = calloc((size_t)n, sizeof mine);
    snprintf(mine.host, sizeof mine.host, "%s", orr_comm_host(c));
    orr_status st = orr_comm_allgather(c, &mine, all, sizeof mine, &err);

    TU_OK(st, &err);
    TU_OK(orr_comm_world(&again, &err), &err);
    assert_ptr_equal(again, c);
    assert_int_equal(orr_comm_launched(), 1);
    assert_int_equal(orr_comm_uses_mpi(c), 1);
    assert_true(n >= 1 && me >= 0 && me < n);
    assert_int_equal(n, env_int("OMPI_COMM_WORLD_SIZE", n));
    assert_int_equal(me, env_int("OMPI_COMM_WORLD_RANK", me));
    assert_int_equal(orr_comm_local_rank(c), env_int("OMPI_COMM_WORLD_LOCAL_RANK",
                                                     orr_comm_local_rank(c)));
    /* every rank is listed once, in order; on each host the local ranks
     * count 0, 1, ... in rank order */
    for (int r = 0; r < n; r++) {
        assert_int_equal(all[r].rank, r);
        int before = 0;
        for (int q = 0; q < r; q++)
            before += strcmp(all[q].host, all[r].host) == 0;
        assert_int_equal(all[r].local_rank, before);
    }
    free(all);
}

/* One body: four doubles, each exact: 4 * global index + k. */
typedef struct {
    double x[4];
} body;

/* Allgatherv of blocks counts[r] at displs[r] (gaps between them marked
 * -7), each rank filling only its own block; returns the status and counts
 * the wrong elements (blocks and gaps) into *wrong. */
static orr_status gather_blocks(orr_comm *c, const long *counts, const long *displs, long total,
                                long *wrong, orr_error *err)
{
    int me = orr_comm_rank(c), n = orr_comm_size(c);
    size_t cap = (size_t)(total > 0 ? total : 1);
    body *b = malloc(sizeof(body) * cap);
    signed char *owner = malloc(cap);
    memset(owner, -1, cap);
    for (long i = 0; i < total; i++)
        for (int k = 0; k < 4; k++)
            b[i].x[k] = -7;
    for (int r = 0; r < n; r++)
        for (long i = displs[r]; i < displs[r] + counts[r]; i++) {
            owner[i] = (signed char)r;
            if (r == me)
                for (int k = 0; k < 4; k++)
                    b[i].x[k] = 4.0 * (double)i + k;
        }
    orr_status st = orr_comm_allgatherv(c, b, counts, displs, sizeof(body), err);
    for (long i = 0; i < total; i++)
        for (int k = 0; k < 4; k++) {
            double want = owner[i] >= 0 ? 4.0 * (double)i + k : -7;
            if (b[i].x[k] != want) {
                if (*wrong == 0)
                    print_error("rank %d: element %ld.%d is %g, want %g\n", me, i, k,
                                b[i].x[k], want);
                ++*wrong;
            }
        }
    free(b);
    free(owner);
    return st;
}

static void test_mpi_allgatherv(void **state)
{
    (void)state;
    orr_comm *c = world();
    orr_error err = {0};
    int n = orr_comm_size(c);
    long *counts = calloc((size_t)n, sizeof(long)), *displs = calloc((size_t)n, sizeof(long));
    /* whole calls, then pieces of 40 bytes (1.25 bodies) */
    const size_t limits[2] = {INT_MAX, 40};
    orr_status st[4];
    long wrong = 0;

    /* an even split of 10 n + 1 bodies: n never divides it */
    long total = 10L * n + 1;
    for (int r = 0, at = 0; r < n; r++) {
        counts[r] = total / n + (r < total % n);
        displs[r] = at;
        at += (int)counts[r];
    }
    for (int k = 0; k < 2; k++) {
        orr_comm_set_max_message(c, limits[k]);
        st[k] = gather_blocks(c, counts, displs, total, &wrong, &err);
    }
    /* blocks of very different sizes, rank 1's empty, a gap of r bodies
     * before rank r's block */
    total = 0;
    for (int r = 0; r < n; r++) {
        counts[r] = r == 1 ? 0 : 3 * r + 2;
        displs[r] = total + r;
        total = displs[r] + counts[r];
    }
    for (int k = 0; k < 2; k++) {
        orr_comm_set_max_message(c, limits[k]);
        st[2 + k] = gather_blocks(c, counts, displs, total, &wrong, &err);
    }
    orr_comm_set_max_message(c, INT_MAX);
    free(counts);
    free(displs);

    for (int k = 0; k < 4; k++)
        TU_OK(st[k], &err);
    assert_int_equal(wrong, 0);
}

static void test_mpi_allgather(void **state)
{
    (void)state;
    orr_comm *c = world();
    orr_error err = {0};
    int n = orr_comm_size(c), me = orr_comm_rank(c);
    int mine[3] = {me, me * me, 100 + me};
    int *out = calloc((size_t)n * 3, sizeof(int)), *inplace = calloc((size_t)n * 3, sizeof(int));
    int *pieces = calloc((size_t)n * 3, sizeof(int));
    orr_status st[3];
    st[0] = orr_comm_allgather(c, mine, out, sizeof mine, &err);
    memcpy(inplace + 3 * me, mine, sizeof mine);
    st[1] = orr_comm_allgather(c, inplace + 3 * me, inplace, sizeof mine, &err);
    orr_comm_set_max_message(c, 5);   /* 12 bytes in pieces of 5 */
    st[2] = orr_comm_allgather(c, mine, pieces, sizeof mine, &err);
    orr_comm_set_max_message(c, INT_MAX);

    for (int k = 0; k < 3; k++)
        TU_OK(st[k], &err);
    for (int r = 0; r < n; r++) {
        int want[3] = {r, r * r, 100 + r};
        assert_memory_equal(out + 3 * r, want, sizeof want);
        assert_memory_equal(inplace + 3 * r, want, sizeof want);
        assert_memory_equal(pieces + 3 * r, want, sizeof want);
    }
    free(out);
    free(inplace);
    free(pieces);
}

static void test_mpi_sum_max(void **state)
{
    (void)state;
    orr_comm *c = world();
    orr_error err = {0};
    int n = orr_comm_size(c), me = orr_comm_rank(c);
    enum { K = 5 };
    double s[K], m[K];
    for (int k = 0; k < K; k++) {
        s[k] = 1000.0 * me + k + 0.25;
        m[k] = k % n == me ? 1e6 + k : -(double)me - 0.5;
    }
    orr_status st[3];
    st[0] = orr_comm_sum(c, s, K, &err);
    st[1] = orr_comm_max(c, m, K, &err);
    st[2] = orr_comm_sum(c, s, 0, &err);

    for (int k = 0; k < 3; k++)
        TU_OK(st[k], &err);
    for (int k = 0; k < K; k++) {
        double want = 1000.0 * n * (n - 1) / 2 + n * (k + 0.25);
        if (s[k] != want)
            fail_msg("rank %d: sum[%d] = %.17g, want %.17g", me, k, s[k], want);
        if (m[k] != 1e6 + k)
            fail_msg("rank %d: max[%d] = %.17g, want %.17g", me, k, m[k], 1e6 + k);
    }
}

/* The seconds in collectives (orr_comm_busy_s) grow with every collective,
 * the waiting for a late rank included: rank 0 sleeps 50 ms before a
 * barrier, so every other rank spends about that long inside it, and the
 * rank's wall over the stretch bounds its time in collectives. */
static void test_mpi_busy(void **state)
{
    (void)state;
    orr_comm *c = world();
    orr_error err = {0};
    const int me = orr_comm_rank(c);
    orr_status st[3];
    st[0] = orr_comm_barrier(c, &err);
    const double b0 = orr_comm_busy_s(c), t0 = orr_now_s();
    if (me == 0)
        usleep(50000);
    st[1] = orr_comm_barrier(c, &err);
    double v = me;
    st[2] = orr_comm_max(c, &v, 1, &err);
    const double b1 = orr_comm_busy_s(c), wall = orr_now_s() - t0;

    for (int k = 0; k < 3; k++)
        TU_OK(st[k], &err);
    assert_true(b0 >= 0);
    if (!(b1 > b0 && b1 - b0 <= wall))
        fail_msg("rank %d: %.6f s in collectives over a wall of %.6f s", me, b1 - b0, wall);
    if (me != 0 && b1 - b0 < 0.04)
        fail_msg("rank %d: %.6f s in collectives while rank 0 slept 0.05 s", me, b1 - b0);
}

static void test_mpi_bcast(void **state)
{
    (void)state;
    orr_comm *c = world();
    orr_error err = {0};
    int n = orr_comm_size(c), me = orr_comm_rank(c);
    enum { B = 1001 };
    unsigned char a[B], b[B];
    for (int i = 0; i < B; i++) {
        a[i] = me == n - 1 ? (unsigned char)(i * 7 + 3) : 0;
        b[i] = me == 0 ? (unsigned char)(i ^ 0x5a) : 0xff;
    }
    orr_status st[3];
    st[0] = orr_comm_bcast(c, a, B, n - 1, &err);
    orr_comm_set_max_message(c, 7);   /* 1001 bytes in 143 pieces */
    st[1] = orr_comm_bcast(c, b, B, 0, &err);
    orr_comm_set_max_message(c, INT_MAX);
    st[2] = orr_comm_barrier(c, &err);

    for (int k = 0; k < 3; k++)
        TU_OK(st[k], &err);
    for (int i = 0; i < B; i++) {
        assert_int_equal(a[i], (unsigned char)(i * 7 + 3));
        assert_int_equal(b[i], (unsigned char)(i ^ 0x5a));
    }
}

/* Refused before any MPI call, alike on every rank: nothing waits. */
static void test_mpi_arguments(void **state)
{
    (void)state;
    orr_comm *c = world();
    orr_error err = {0};
    int n = orr_comm_size(c);
    char buf[8] = {0};
    assert_int_equal(orr_comm_bcast(c, buf, sizeof buf, n, &err), ORR_ERR_ARG);
    char want[128];
    snprintf(want, sizeof want, "orr_comm_bcast: root %d is not a rank (0 to %d)", n, n - 1);
    assert_string_equal(err.msg, want);
    long *counts = calloc((size_t)n, sizeof(long)), *displs = calloc((size_t)n, sizeof(long));
    displs[n - 1] = -1;
    assert_int_equal(orr_comm_allgatherv(c, buf, counts, displs, 1, &err), ORR_ERR_ARG);
    snprintf(want, sizeof want, "orr_comm_allgatherv: negative count 0 or displacement -1 "
             "for rank %d", n - 1);
    assert_string_equal(err.msg, want);
    free(counts);
    free(displs);
}

/* A result some ranks reach: every rank returns the lowest failing rank's
 * status and message, shared; all fine gives ORR_OK everywhere. */
static void test_mpi_agree(void **state)
{
    (void)state;
    orr_comm *c = world();
    int n = orr_comm_size(c), me = orr_comm_rank(c);
    orr_error e[4] = {{0}};
    orr_status st[4];
    st[0] = orr_comm_agree(c, ORR_OK, 1, &e[0]);
    /* ranks 1 and up fail, each with its own status and message */
    orr_status mine = me == 0 ? ORR_OK : me == 1 ? ORR_ERR_IO : ORR_ERR_ARG;
    for (int k = 1; k < 3; k++) {
        if (mine)
            orr_fail(&e[k], mine, "cannot do it on rank %d", me);
        st[k] = orr_comm_agree(c, mine, k == 1, &e[k]);
    }
    /* every rank: the lowest's message, without its rank */
    orr_error all = {0};
    orr_fail(&all, ORR_ERR_ARG, "dt must be positive (rank %d)", me);
    orr_status st_all = orr_comm_agree(c, ORR_ERR_ARG, 1, &all);
    /* the last rank alone */
    if (me == n - 1)
        orr_fail(&e[3], ORR_ERR_NOMEM, "rank %d ran out", me);
    st[3] = orr_comm_agree(c, me == n - 1 ? ORR_ERR_NOMEM : ORR_OK, 0, &e[3]);

    TU_OK(st[0], &e[0]);
    assert_int_equal(st[1], ORR_ERR_IO);
    assert_string_equal(e[1].msg, "rank 1: cannot do it on rank 1");
    assert_int_equal(e[1].shared, 1);
    assert_int_equal(st[2], ORR_ERR_IO);
    assert_string_equal(e[2].msg, "cannot do it on rank 1");
    assert_int_equal(e[2].shared, 1);
    assert_int_equal(st_all, ORR_ERR_ARG);
    assert_string_equal(all.msg, "dt must be positive (rank 0)");
    assert_int_equal(all.shared, 1);
    assert_int_equal(st[3], ORR_ERR_NOMEM);
    char want[64];
    snprintf(want, sizeof want, "rank %d ran out", n - 1);
    assert_string_equal(e[3].msg, want);
    assert_int_equal(e[3].shared, 1);
}

/* A choice every rank must share: the same everywhere passes; otherwise
 * every rank fails alike, naming the ranks of each value. */
static void test_mpi_same(void **state)
{
    (void)state;
    orr_comm *c = world();
    int n = orr_comm_size(c), me = orr_comm_rank(c);
    orr_error e[3] = {{0}};
    orr_status st[3];
    st[0] = orr_comm_same(c, "cuda", "the backend", NULL, &e[0]);
    st[1] = orr_comm_same(c, me == 1 ? "cpu" : "cuda", "the backend", "resolved per rank", &e[1]);
    char mine[16];
    snprintf(mine, sizeof mine, "v%d", me);   /* all different */
    st[2] = orr_comm_same(c, mine, "x", NULL, &e[2]);

    TU_OK(st[0], &e[0]);
    assert_int_equal(st[1], ORR_ERR_ARG);
    assert_int_equal(e[1].shared, 1);
    if (n == 2)
        assert_string_equal(e[1].msg, "the ranks disagree on the backend: \"cuda\" on rank 0, "
                                      "\"cpu\" on rank 1 (resolved per rank)");
    else if (n == 3)
        assert_string_equal(e[1].msg, "the ranks disagree on the backend: \"cuda\" on ranks 0 "
                                      "and 2, \"cpu\" on rank 1 (resolved per rank)");
    assert_int_equal(st[2], ORR_ERR_ARG);
    if (n == 3)
        assert_string_equal(e[2].msg, "the ranks disagree on x: \"v0\" on rank 0, \"v1\" on "
                                      "rank 1, \"v2\" on rank 2");
}

/* Every rank's notes on every rank (orr_dist_notes): each line once, in
 * rank order, another rank's named; "" from all is ""; lines that do not
 * fit whole are left out and counted.  Collectives first, then checks. */
static void test_mpi_notes(void **state)
{
    (void)state;
    orr_comm *c = world();
    int n = orr_comm_size(c), me = orr_comm_rank(c);
    orr_error e[3] = {{0}};
    orr_status st[3];
    char mine[512], out[2048], none[64] = "x", small[512];
    snprintf(mine, sizeof mine, "said by all\nsaid by rank %d\nsaid by all", me);
    st[0] = orr_dist_notes(c, mine, out, sizeof out, &e[0]);
    st[1] = orr_dist_notes(c, "", none, sizeof none, &e[1]);
    char line[301];   /* a line per rank, 300 bytes: only rank 0's fits in 512 */
    memset(line, 'a' + me, 300);
    line[300] = '\0';
    st[2] = orr_dist_notes(c, line, small, sizeof small, &e[2]);

    for (int k = 0; k < 3; k++)
        TU_OK(st[k], &e[k]);
    char want[2048] = "said by all\nsaid by rank 0";
    for (int r = 1; r < n; r++)
        snprintf(want + strlen(want), sizeof want - strlen(want), "\nrank %d: said by rank %d",
                 r, r);
    assert_string_equal(out, want);
    assert_string_equal(none, "");
    memset(line, 'a', 300);
    snprintf(want, sizeof want, "%s\n(%d more note%s from other ranks not shown)", line, n - 1,
             n == 2 ? "" : "s");
    assert_string_equal(small, want);
}

/* A text of any length (a path) every rank must share: compared in full,
 * so texts alike in their first 63 bytes (what orr_comm_same compares) and
 * apart in the last are told apart; a long one is shown by its head and
 * tail. */
static void test_mpi_same_text(void **state)
{
    (void)state;
    orr_comm *c = world();
    int n = orr_comm_size(c), me = orr_comm_rank(c);
    char longpath[400];
    memset(longpath, 'd', sizeof longpath);
    memcpy(longpath, "/nfs/", 5);
    snprintf(longpath + 300, sizeof longpath - 300, "/out_rank%d.csv", me == 1);
    orr_error e[3] = {{0}};
    orr_status st[3];
    st[0] = orr_comm_same_text(c, "/same/everywhere.csv", "the path", NULL, &e[0]);
    st[1] = orr_comm_same_text(c, longpath, "the path", "one file", &e[1]);
    st[2] = orr_comm_same_text(c, me == 1 ? "b.csv" : "a.csv", "the path", NULL, &e[2]);

    TU_OK(st[0], &e[0]);
    assert_int_equal(st[1], ORR_ERR_ARG);
    assert_int_equal(e[1].shared, 1);
    assert_non_null(strstr(e[1].msg, "the ranks disagree on the path: \"/nfs/ddd"));
    assert_non_null(strstr(e[1].msg, "ddd...ddd"));   /* the middle left out */
    assert_non_null(strstr(e[1].msg, "ddd/out_rank0.csv\" on rank"));
    assert_non_null(strstr(e[1].msg, "ddd/out_rank1.csv\" on rank 1 (one file)"));
    assert_int_equal(st[2], ORR_ERR_ARG);
    if (n == 2)
        assert_string_equal(e[2].msg, "the ranks disagree on the path: \"a.csv\" on rank 0, "
                                      "\"b.csv\" on rank 1");
    else if (n == 3)
        assert_string_equal(e[2].msg, "the ranks disagree on the path: \"a.csv\" on ranks 0 "
                                      "and 2, \"b.csv\" on rank 1");
}

/* A vote: rank 1 fails at once while the others are "at work" until they
 * hear of it (as ranks inside NCCL's handshake would be), then give up;
 * every rank ends with every rank's code.  A second vote right after, all
 * fine, pairs with its own messages. */
static void test_mpi_vote(void **state)
{
    (void)state;
    orr_comm *c = world();
    int n = orr_comm_size(c), me = orr_comm_rank(c);
    orr_error err = {0};
    orr_comm_vote *v = NULL;
    int codes[2][16], heard = -1, polls = 0;
    orr_status st[6] = {ORR_OK};
    st[0] = orr_comm_vote_begin(c, &v, &err);
    if (me == 1)
        st[1] = orr_comm_vote_cast(v, 1, &err);
    else   /* at work until a failure is heard: never ends without one */
        while (!st[1] && heard < 0 && polls++ < 20000000)
            st[1] = orr_comm_vote_test(v, &heard, NULL, &err);
    if (me != 1 && !st[1])
        st[1] = orr_comm_vote_cast(v, 2, &err);
    st[2] = orr_comm_vote_end(v, codes[0], &err);
    st[3] = orr_comm_vote_begin(c, &v, &err);
    st[4] = orr_comm_vote_cast(v, 0, &err);
    st[5] = orr_comm_vote_end(v, codes[1], &err);

    for (int k = 0; k < 6; k++)
        TU_OK(st[k], &err);
    if (me != 1)   /* rank 1's failure, or a rank that gave up on hearing it */
        assert_true(heard >= 0 && heard != me && heard < n);
    for (int r = 0; r < n; r++) {
        assert_int_equal(codes[0][r], r == 1 ? 1 : 2);
        assert_int_equal(codes[1][r], 0);
    }
}

/* Two ranks on one GPU are told by the GPUs' UUIDs, not by their device
 * numbers and hosts: with CUDA_VISIBLE_DEVICES set per rank every rank's
 * GPU is device 0 (different GPUs, NCCL wanted), and one GPU may have
 * different numbers in two ranks (one GPU, NCCL refused). */
static void test_mpi_shared_gpu(void **state)
{
    (void)state;
    orr_comm *c = world();
    int n = orr_comm_size(c), me = orr_comm_rank(c);
    orr_error err = {0};
    char own[64], where[3][320];
    int a[3], b[3];
    orr_status st[3];
    snprintf(own, sizeof own, "GPU-0000000%d-aaaa-bbbb-cccc-dddddddddddd", me);
    st[0] = orr_dist_shared_gpu(c, own, 0, &a[0], &b[0], where[0], sizeof where[0], &err);
    st[1] = orr_dist_shared_gpu(c, me <= 1 ? "GPU-the-same-one" : own, me, &a[1], &b[1],
                                where[1], sizeof where[1], &err);
    st[2] = orr_dist_shared_gpu(c, "", 0, &a[2], &b[2], where[2], sizeof where[2], &err);

    for (int k = 0; k < 3; k++)
        TU_OK(st[k], &err);
    assert_int_equal(a[0], -1);   /* every rank's device 0, all different GPUs */
    assert_int_equal(b[0], -1);
    assert_string_equal(where[0], "");
    assert_int_equal(a[1], 0);    /* one GPU, device 0 in rank 0 and 1 in rank 1 */
    assert_int_equal(b[1], 1);
    char want[320];
    snprintf(want, sizeof want, "GPU 0 on %s", orr_comm_host(c));
    assert_string_equal(where[1], want);
    assert_int_equal(a[2], -1);   /* unknown GPUs match nothing */
    (void)n;
}

/* Last: after finalize, collectives are refused, a second finalize and an
 * abort do nothing. */
static void test_mpi_finalize(void **state)
{
    (void)state;
    orr_comm *c = world();
    orr_error err = {0};
    orr_status st = orr_comm_barrier(c, &err);
    orr_comm_finalize();
    orr_comm_finalize();
    orr_comm_abort(c, 5);

    TU_OK(st, &err);
    assert_int_equal(orr_comm_barrier(c, &err), ORR_ERR_COMM);
    assert_string_equal(err.msg, "orr_comm_barrier: MPI was finalised (orr_comm_finalize)");
    double v = 1;
    assert_int_equal(orr_comm_sum(c, &v, 1, &err), ORR_ERR_COMM);
    assert_string_equal(err.msg, "orr_comm_sum: MPI was finalised (orr_comm_finalize)");
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--world") == 0)
        return world_mode();
    if (orr_comm_launched()) {
        /* every rank must reach MPI before cmocka starts counting */
        orr_comm *c = NULL;
        orr_error err = {0};
        if (orr_comm_world(&c, &err) != ORR_OK) {
            printf("[  FAILED  ] 1 test(s): orr_comm_world: %s\n", err.msg);
            return 1;
        }
        const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_mpi_world),
            cmocka_unit_test(test_mpi_allgatherv),
            cmocka_unit_test(test_mpi_allgather),
            cmocka_unit_test(test_mpi_sum_max),
            cmocka_unit_test(test_mpi_busy),
            cmocka_unit_test(test_mpi_bcast),
            cmocka_unit_test(test_mpi_arguments),
            cmocka_unit_test(test_mpi_agree),
            cmocka_unit_test(test_mpi_same),
            cmocka_unit_test(test_mpi_same_text),
            cmocka_unit_test(test_mpi_notes),
            cmocka_unit_test(test_mpi_vote),
            cmocka_unit_test(test_mpi_shared_gpu),
            cmocka_unit_test(test_mpi_finalize),
        };
        int failed = cmocka_run_group_tests(tests, NULL, NULL);
        orr_comm_finalize();
        return failed;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_world),
        cmocka_unit_test(test_one_collectives),
        cmocka_unit_test(test_one_vote_agree),
        cmocka_unit_test(test_one_arguments),
        cmocka_unit_test(test_launcher_variables),
        cmocka_unit_test(test_launched_without_mpi),
        cmocka_unit_test(test_launched_not_open_mpi),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
