/* test_nccl: NCCL through dlopen (core/ranks/nccl.c).
 *
 * Run plainly (make test), without a GPU: nothing of NCCL is mapped before
 * the first call (it is never linked); in child processes of this binary
 * that set ORRERY_NCCL_LIB before their first call, the documented errors of
 * orr_nccl_open, orr_nccl_version and orr_nccl_create on the one-rank world
 * when the library is missing or is not NCCL; the checks that need no
 * communicator; and a create whose device cannot be had failing with that
 * device's own error as "rank 0: ..." (where NCCL loads).
 *
 * With a GPU and NCCL (make gpu-test on the GPU machine; skipped otherwise,
 * saying why; ORRERY_REQUIRE_GPU=1 makes a missing GPU, ORRERY_REQUIRE_NCCL=1
 * a missing NCCL, a failure): a one-rank communicator (no launcher) on
 * device 0, allgatherv of a block through device memory leaving every byte
 * as it was, on the default stream and on a stream of its own; the argument
 * checks of orr_nccl_allgatherv on a real communicator, each refused call
 * queuing nothing (a later call still works); create again after destroy.
 *
 * Run as "--create [missing=R] [device=local] [init-fail=R]" under mpirun
 * (tests/test_mpi.sh): rank R gets a missing ORRERY_NCCL_LIB, every rank
 * creates a communicator on device 0 (or its local rank's device) and
 * prints the result, which must be the same on every rank; where it works,
 * an allgatherv of blocks of different sizes is checked byte for byte.
 * init-fail=R sets the test hook ORRERY_TEST_NCCL_INIT=fail=R on every
 * rank: rank R's ncclCommInitRank fails at once while the others stay in
 * a handshake that waits for it (no GPU needed); every rank must come back
 * with rank R's error, in seconds.  no-network=R gives rank R alone a
 * network interface that does not exist (NCCL_SOCKET_IFNAME), so that its
 * real ncclCommInitRank fails in NCCL's bootstrap while the others wait
 * there for it (on a GPU machine). */
#include "testutil.h"

#include <limits.h>
#include <sys/wait.h>

#include "comm.h"
#include "cuda.h"
#include "nccl.h"

/* libnccl mapped into this process when main() started. */
static int nccl_mapped_at_start;

static int nccl_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    if (!f)
        return 0;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, "libnccl") != NULL;
    fclose(f);
    return found;
}

/* ---- no GPU needed ---------------------------------------------------------- */

static void test_not_linked(void **state)
{
    (void)state;
    assert_int_equal(nccl_mapped_at_start, 0);
}

/* Runs this binary as "--open" in a fresh process with ORRERY_NCCL_LIB=lib;
 * returns what it printed (static). */
static const char *child_open(const char *lib)
{
    static char out[4096];
    return tu_run_self("--open", "ORRERY_NCCL_LIB", lib, NULL, NULL, out, sizeof out);
}

/* The child's side: orr_nccl_open's result, whether a second call gives the
 * same, the version, and orr_nccl_create's result on the one-rank world. */
static int open_mode(void)
{
    orr_error err = {0}, again = {0};
    orr_status st = orr_nccl_open(&err);
    if (st == ORR_OK)
        printf("open: ok\n");
    else
        printf("open: %s: %s\n", orr_status_name(st), err.msg);
    orr_status st2 = orr_nccl_open(&again);
    printf("again: %s\n", st2 == st && strcmp(err.msg, again.msg) == 0 ? "same" : "different");
    printf("version: %d\n", orr_nccl_version());
    orr_comm *c = NULL;
    orr_nccl *n = NULL;
    if (orr_comm_world(&c, &err) != ORR_OK) {
        printf("world: %s\n", err.msg);
        return 0;
    }
    st = orr_nccl_create(&n, c, 0, &err);
    if (st == ORR_OK)
        printf("create: ok\n");
    else
        printf("create: %s: %s%s\n", orr_status_name(st), err.msg, n ? " (not NULL)" : "");
    orr_nccl_destroy(n);
    return 0;
}

static void test_missing_library(void **state)
{
    (void)state;
    assert_string_equal(child_open("/nonexistent/libnccl.so.2"),
                        "open: communication error: /nonexistent/libnccl.so.2: cannot open shared "
                        "object file: No such file or directory\n"
                        "again: same\n"
                        "version: 0\n"
                        "create: communication error: rank 0: /nonexistent/libnccl.so.2: cannot "
                        "open shared object file: No such file or directory\n");
}

static void test_not_nccl(void **state)
{
    (void)state;
    assert_string_equal(child_open("libc.so.6"),
                        "open: communication error: libc.so.6 lacks ncclGetVersion: not NCCL 2 "
                        "(libnccl.so.2)\n"
                        "again: same\n"
                        "version: 0\n"
                        "create: communication error: rank 0: libc.so.6 lacks ncclGetVersion: not "
                        "NCCL 2 (libnccl.so.2)\n");
}

/* Checks made before anything else, with no communicator at all. */
static void test_no_communicator(void **state)
{
    (void)state;
    orr_error err = {0};
    long counts[1] = {1}, displs[1] = {0};
    assert_int_equal(orr_nccl_allgatherv(NULL, 4096, counts, displs, 8, NULL, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "orr_nccl_allgatherv: no communicator");
    orr_nccl *n = (orr_nccl *)&err;   /* must not be touched */
    assert_int_equal(orr_nccl_create(&n, NULL, 0, &err), ORR_ERR_ARG);
    assert_null(n);
    assert_string_equal(err.msg, "orr_nccl_create: no communicator (orr_comm)");
    orr_nccl_destroy(NULL);
    assert_int_equal(nccl_mapped(), 0);   /* none of this opened NCCL */
}

/* A device that cannot be had (no driver here, or an ordinal past the
 * last): create fails with the context's own error as "rank 0: ...", and a
 * later create on the same thread is not disturbed by a half-made one. */
static void test_create_bad_device(void **state)
{
    (void)state;
    orr_error err = {0}, why = {0};
    if (orr_nccl_open(&err) != ORR_OK) {
        print_message("NCCL not loadable (%s): skipped\n", err.msg);
        skip();
    }
    assert_true(orr_nccl_version() >= 2000);
    orr_comm *c = NULL;
    TU_OK(orr_comm_world(&c, &err), &err);
    enum { BAD = 9999 };
    orr_status want = orr_cuda_ctx_acquire(BAD, &why);
    assert_int_not_equal(want, ORR_OK);
    char msg[sizeof err.msg + 16];
    snprintf(msg, sizeof msg, "rank 0: %s", why.msg);
    for (int k = 0; k < 2; k++) {
        orr_nccl *n = NULL;
        assert_int_equal(orr_nccl_create(&n, c, BAD, &err), want);
        assert_null(n);
        assert_string_equal(err.msg, msg);
    }
}

/* ---- GPU and NCCL ----------------------------------------------------------- */

static int nccl_ready(void)
{
    static int known = -1;
    if (known < 0) {
        orr_error err = {0};
        const char *req = getenv("ORRERY_REQUIRE_GPU"), *reqn = getenv("ORRERY_REQUIRE_NCCL");
        known = 0;
        if (orr_cuda_usable(0, &err) != ORR_OK) {
            if (req && *req == '1')
                fail_msg("ORRERY_REQUIRE_GPU=1 but no usable GPU: %s", err.msg);
            print_message("no usable GPU (%s): NCCL tests skipped\n", err.msg);
        } else if (orr_nccl_open(&err) != ORR_OK) {
            if (reqn && *reqn == '1')
                fail_msg("ORRERY_REQUIRE_NCCL=1 but NCCL cannot be loaded: %s", err.msg);
            print_message("NCCL cannot be loaded (%s): NCCL tests skipped\n", err.msg);
        } else {
            known = 1;
            print_message("NCCL %d\n", orr_nccl_version());
        }
        orr_error_clear(&err);
    }
    return known;
}

#define NEED_NCCL()          \
    do {                     \
        if (!nccl_ready())   \
            skip();          \
    } while (0)

static orr_nccl *one_rank(void)
{
    orr_error err = {0};
    orr_comm *c = NULL;
    orr_nccl *n = NULL;
    TU_OK(orr_comm_world(&c, &err), &err);
    assert_int_equal(orr_comm_size(c), 1);
    TU_OK(orr_nccl_create(&n, c, 0, &err), &err);
    assert_non_null(n);
    return n;
}

/* Fills bytes with a pattern from seed, none of them zero. */
static void pattern(unsigned char *p, size_t bytes, unsigned seed)
{
    for (size_t i = 0; i < bytes; i++)
        p[i] = (unsigned char)(1 + (i * 37 + seed) % 255);
}

/* One rank: its block, and the bytes around it, come back exactly as they
 * were, on the default stream and on a stream of its own, for a small
 * buffer and one of several MiB. */
static void test_one_rank_allgatherv(void **state)
{
    (void)state;
    NEED_NCCL();
    orr_error err = {0};
    orr_nccl *n = one_rank();
    const size_t sizes[2] = {1024, 6u << 20}, elem = 16;
    void *stream = NULL;
    TU_OK(orr_cuda_stream_create(&stream, &err), &err);
    for (int k = 0; k < 2; k++) {
        size_t bytes = sizes[k];
        unsigned char *want = malloc(bytes), *got = malloc(bytes);
        assert_true(want && got);
        orr_devptr d = 0;
        TU_OK(orr_cuda_alloc(&d, bytes, &err), &err);
        long elems = (long)(bytes / elem);
        long counts[1] = {elems - 12}, displs[1] = {9};   /* gaps either side */
        for (int s = 0; s < 2; s++) {
            pattern(want, bytes, 11u + 7u * (unsigned)(2 * k + s));
            memset(got, 0, bytes);
            TU_OK(orr_cuda_htod(d, want, bytes, &err), &err);
            if (s == 0) {
                TU_OK(orr_nccl_allgatherv(n, d, counts, displs, elem, NULL, &err), &err);
                TU_OK(orr_cuda_sync(&err), &err);
            } else {
                TU_OK(orr_nccl_allgatherv(n, d, counts, displs, elem, stream, &err), &err);
                TU_OK(orr_cuda_stream_sync(stream, &err), &err);
            }
            TU_OK(orr_cuda_dtoh(got, d, bytes, &err), &err);
            assert_memory_equal(got, want, bytes);
        }
        /* the whole buffer as one block */
        counts[0] = elems;
        displs[0] = 0;
        TU_OK(orr_nccl_allgatherv(n, d, counts, displs, elem, stream, &err), &err);
        TU_OK(orr_cuda_stream_sync(stream, &err), &err);
        TU_OK(orr_cuda_dtoh(got, d, bytes, &err), &err);
        assert_memory_equal(got, want, bytes);
        orr_cuda_free(d);
        free(want);
        free(got);
    }
    orr_cuda_stream_destroy(stream);
    orr_nccl_destroy(n);
}

/* Refused before any NCCL call: a later allgatherv still works (no group
 * was left open); empty calls succeed at once. */
static void test_arguments(void **state)
{
    (void)state;
    NEED_NCCL();
    orr_error err = {0};
    orr_nccl *n = one_rank();
    enum { B = 256 };
    unsigned char want[B], got[B];
    orr_devptr d = 0;
    TU_OK(orr_cuda_alloc(&d, B, &err), &err);
    pattern(want, B, 5);
    TU_OK(orr_cuda_htod(d, want, B, &err), &err);

    long counts[1] = {-2}, displs[1] = {0};
    assert_int_equal(orr_nccl_allgatherv(n, d, counts, displs, 8, NULL, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "orr_nccl_allgatherv: negative count -2 or displacement 0 for "
                                 "rank 0");
    counts[0] = 1;
    displs[0] = -1;
    assert_int_equal(orr_nccl_allgatherv(n, d, counts, displs, 8, NULL, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "orr_nccl_allgatherv: negative count 1 or displacement -1 for "
                                 "rank 0");
    counts[0] = 1L << 62;
    displs[0] = 0;
    assert_int_equal(orr_nccl_allgatherv(n, d, counts, displs, 8, NULL, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "orr_nccl_allgatherv: rank 0's block (0 + 4611686018427387904 "
                                 "elements of 8 bytes) overflows the address space");
    counts[0] = 1;
    displs[0] = LONG_MAX;
    assert_int_equal(orr_nccl_allgatherv(n, d, counts, displs, 2, NULL, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "orr_nccl_allgatherv: rank 0's block (9223372036854775807 + 1 "
                                 "elements of 2 bytes) overflows the address space");
    counts[0] = 200;
    displs[0] = 0;
    assert_int_equal(orr_nccl_allgatherv(n, ULLONG_MAX - 100, counts, displs, 1, NULL, &err),
                     ORR_ERR_ARG);
    assert_string_equal(err.msg, "orr_nccl_allgatherv: rank 0's block (0 + 200 elements of 1 "
                                 "bytes) ends past the device address space from "
                                 "0xffffffffffffff9b");
    assert_int_equal(orr_nccl_allgatherv(n, 0, counts, displs, 1, NULL, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "orr_nccl_allgatherv: buffer is device address 0");
    assert_int_equal(orr_nccl_allgatherv(n, d, NULL, displs, 1, NULL, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "orr_nccl_allgatherv: counts or displs is NULL");
    assert_int_equal(orr_nccl_allgatherv(n, d, counts, NULL, 1, NULL, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "orr_nccl_allgatherv: counts or displs is NULL");

    /* nothing to move: fine, even at address 0 */
    TU_OK(orr_nccl_allgatherv(n, d, counts, displs, 0, NULL, &err), &err);
    counts[0] = 0;
    TU_OK(orr_nccl_allgatherv(n, 0, counts, displs, 8, NULL, &err), &err);

    /* and a real one after all that */
    counts[0] = 30;
    displs[0] = 1;
    TU_OK(orr_nccl_allgatherv(n, d, counts, displs, 8, NULL, &err), &err);
    TU_OK(orr_cuda_sync(&err), &err);
    TU_OK(orr_cuda_dtoh(got, d, B, &err), &err);
    assert_memory_equal(got, want, B);
    orr_cuda_free(d);
    orr_nccl_destroy(n);
}

/* Communicators one after another on the same device. */
static void test_create_again(void **state)
{
    (void)state;
    NEED_NCCL();
    for (int k = 0; k < 3; k++)
        orr_nccl_destroy(one_rank());
    orr_nccl *a = one_rank(), *b = one_rank();   /* two at once */
    orr_nccl_destroy(b);
    orr_nccl_destroy(a);
}

/* ---- N ranks under mpirun ------------------------------------------------- */

/* Every rank's blocks of different sizes (rank 1's empty, a gap of r bytes
 * before rank r's block, gaps marked 0xee); returns the wrong bytes. */
static long ranks_allgatherv(orr_nccl *n, int me, int size, orr_error *err, orr_status *st)
{
    long *counts = calloc((size_t)size, sizeof(long)), *displs = calloc((size_t)size, sizeof(long));
    long total = 0, wrong = 0;
    const size_t elem = 12;
    for (int r = 0; r < size; r++) {
        counts[r] = r == 1 ? 0 : 1000L * (r + 1) + 7;
        displs[r] = total + r;
        total = displs[r] + counts[r];
    }
    size_t bytes = (size_t)total * elem;
    unsigned char *h = malloc(bytes), *want = malloc(bytes);
    memset(want, 0xee, bytes);
    for (int r = 0; r < size; r++)
        pattern(want + (size_t)displs[r] * elem, (size_t)counts[r] * elem, 3u + (unsigned)r);
    memset(h, 0xee, bytes);
    memcpy(h + (size_t)displs[me] * elem, want + (size_t)displs[me] * elem,
           (size_t)counts[me] * elem);
    orr_devptr d = 0;
    *st = orr_cuda_alloc(&d, bytes, err);
    if (*st == ORR_OK)
        *st = orr_cuda_htod(d, h, bytes, err);
    /* every rank makes the collective call, whatever happened before */
    orr_status g = orr_nccl_allgatherv(n, d, counts, displs, elem, NULL, err);
    if (*st == ORR_OK)
        *st = g;
    if (*st == ORR_OK)
        *st = orr_cuda_sync(err);
    if (*st == ORR_OK)
        *st = orr_cuda_dtoh(h, d, bytes, err);
    if (*st == ORR_OK)
        for (size_t i = 0; i < bytes; i++)
            wrong += h[i] != want[i];
    orr_cuda_free(d);
    free(h);
    free(want);
    free(counts);
    free(displs);
    return wrong;
}

static int create_mode(int argc, char **argv)
{
    orr_error err = {0};
    orr_comm *c = NULL;
    if (orr_comm_world(&c, &err) != ORR_OK) {
        printf("world: %s\n", err.msg);
        return 1;
    }
    int me = orr_comm_rank(c), size = orr_comm_size(c), device = 0;
    for (int i = 2; i < argc; i++) {
        if (strncmp(argv[i], "missing=", 8) == 0 && atoi(argv[i] + 8) == me)
            setenv("ORRERY_NCCL_LIB", "/nonexistent/libnccl.so.2", 1);
        else if (strncmp(argv[i], "init-fail=", 10) == 0)   /* on every rank: the test hook */
            setenv("ORRERY_TEST_NCCL_INIT", argv[i] + 5, 1);
        else if (strncmp(argv[i], "no-network=", 11) == 0 && atoi(argv[i] + 11) == me)
            setenv("NCCL_SOCKET_IFNAME", "orrery-no-such-interface", 1);
        else if (strcmp(argv[i], "device=local") == 0)
            device = orr_comm_local_rank(c);
    }
    orr_error oe = {0};
    if (orr_nccl_open(&oe) == ORR_OK)
        printf("open: ok\n");
    else
        printf("open: %s\n", oe.msg);
    orr_nccl *n = NULL;
    orr_status st = orr_nccl_create(&n, c, device, &err);
    if (st == ORR_OK)
        printf("create: ok\n");
    else
        printf("create: %s: %s%s\n", orr_status_name(st), err.msg, n ? " (not NULL)" : "");
    if (n) {
        orr_status gst = ORR_OK;
        long wrong = ranks_allgatherv(n, me, size, &err, &gst);
        if (gst != ORR_OK)
            printf("allgatherv: %s\n", err.msg);
        else
            printf("allgatherv: %ld wrong bytes\n", wrong);
        orr_nccl_destroy(n);
        printf("destroy: done\n");
    }
    fflush(stdout);
    orr_comm_finalize();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--open") == 0)
        return open_mode();
    if (argc > 1 && strcmp(argv[1], "--create") == 0)
        return create_mode(argc, argv);
    nccl_mapped_at_start = nccl_mapped();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_linked),
        cmocka_unit_test(test_no_communicator),
        cmocka_unit_test(test_missing_library),
        cmocka_unit_test(test_not_nccl),
        cmocka_unit_test(test_create_bad_device),
        cmocka_unit_test(test_one_rank_allgatherv),
        cmocka_unit_test(test_arguments),
        cmocka_unit_test(test_create_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
