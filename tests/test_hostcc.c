/* test_hostcc: the CPU backend's compiler: a temporary directory whose path
 * has blanks and quotes (the command is an argument vector, not a string
 * split on blanks), $CC carrying flags of its own, and the CPU identity
 * that keeps -march=native objects apart, from recorded /proc/cpuinfo files
 * (tests/data/cpuinfo-*: an x86-64 Xeon, an NVIDIA Grace = Neoverse V2 and
 * an Ampere Altra = Neoverse N1) and variations of them. */
#include "testutil.h"

#include "hostcc.h"

static char *read_text(const char *path)
{
    char *text = NULL;
    orr_error err = {0};
    TU_OK(orr_read_file(path, &text, NULL, &err), &err);
    return text;
}

static void identity_of(const char *path, char *out, size_t size)
{
    char *text = read_text(path);
    orr_hostcc_cpu_identity(text, out, size);
    free(text);
}

/* Compiles src in the current $TMPDIR, loads it and returns orr_answer(). */
static int compile_and_call(const char *src)
{
    orr_error err = {0};
    void *so = NULL;
    size_t len = 0;
    TU_OK(orr_hostcc_compile(src, "answer.c", "-O1", &so, &len, NULL, &err), &err);
    orr_hostcc_lib lib;
    TU_OK(orr_hostcc_load(so, len, &lib, &err), &err);
    free(so);
    int (*fn)(void) = (int (*)(void))orr_hostcc_sym(&lib, "orr_answer");
    assert_non_null(fn);
    int v = fn();
    orr_hostcc_unload(&lib);
    return v;
}

/* The environment variable a test changes, put back after it whatever the
 * outcome (teardown). */
static struct {
    const char *name;
    char *value;   /* heap, or NULL: it was unset */
} saved_env;

static void env_set(const char *name, const char *value)
{
    const char *old = getenv(name);
    saved_env.name = name;
    saved_env.value = old ? strdup(old) : NULL;
    setenv(name, value, 1);
}

static int env_restore(void **state)
{
    if (saved_env.value)
        setenv(saved_env.name, saved_env.value, 1);
    else
        unsetenv(saved_env.name);
    free(saved_env.value);
    saved_env.value = NULL;
    return 0;
}

/* TMPDIR="/tmp/.../my tmp \"dir\"": the paths in the command stay whole;
 * a compile error names the source without the temporary directory. */
static void test_tmpdir_with_blanks(void **state)
{
    char base[256], dir[512];
    tu_temp_dir(base, sizeof base, "orrery-hostcc");
    tu_remove_at_exit(base);
    snprintf(dir, sizeof dir, "%s/my tmp \"dir\"", base);
    assert_int_equal(mkdir(dir, 0700), 0);
    env_set("TMPDIR", dir);
    assert_int_equal(compile_and_call("int orr_answer(void);\nint orr_answer(void) { return 42; }\n"),
                     42);
    orr_error err = {0};
    void *so = NULL;
    size_t len = 0;
    assert_int_equal(orr_hostcc_compile("int orr_answer(void)\n{ return 42 +; }\n", "answer.c",
                                        NULL, &so, &len, NULL, &err), ORR_ERR_COMPILE);
    print_message("%s\n", err.msg);
    assert_non_null(strstr(err.msg, "host C compiler failed on answer.c: answer.c:2:"));
    assert_non_null(err.log);
    assert_null(strstr(err.log, "my tmp"));
    orr_error_clear(&err);
    assert_int_equal(rmdir(dir), 0);   /* nothing was left behind in it */
}

/* $CC is words: a compiler with flags of its own ("cc -DX=7") still works. */
static void test_cc_with_flags(void **state)
{
    char cc[512];
    snprintf(cc, sizeof cc, "%s  -DORR_FROM_CC=7\t-O2", orr_hostcc_command());
    env_set("CC", cc);
    assert_string_equal(orr_hostcc_command(), cc);
    assert_int_equal(compile_and_call("int orr_answer(void);\n"
                                      "int orr_answer(void) { return ORR_FROM_CC; }\n"), 7);
}

/* x86-64: the model name and a hash of the flags line, as always (kernel
 * caches and tuning stores keyed by it stay valid). */
static void test_cpu_identity_x86(void **state)
{
    char id[512];
    identity_of("tests/data/cpuinfo-x86_64", id, sizeof id);
    print_message("x86-64: %s\n", id);
    assert_string_equal(id, "Intel(R) Xeon(R) Platinum 8480+ (features 64c85c6f07462dcf)");
    /* another flag (a newer microcode, a different CPU): another identity */
    char *text = read_text("tests/data/cpuinfo-x86_64"), other[512];
    char *f = strstr(text, " avx512f ");
    assert_non_null(f);
    memcpy(f + 1, "avx512x", 7);
    orr_hostcc_cpu_identity(text, other, sizeof other);
    assert_string_not_equal(id, other);
    free(text);
}

/* aarch64 has no `model name` or `flags`: the identity comes from the CPU
 * implementer, part (and variant) and Features of every core type, so a
 * Grace node (Neoverse V2, SVE2) and a Neoverse N1 node differ. */
static void test_cpu_identity_arm(void **state)
{
    char v2[512], n1[512];
    identity_of("tests/data/cpuinfo-neoverse-v2", v2, sizeof v2);
    identity_of("tests/data/cpuinfo-neoverse-n1", n1, sizeof n1);
    print_message("Neoverse V2: %s\nNeoverse N1: %s\n", v2, n1);
    assert_string_not_equal(v2, n1);
    /* fixed: kernel caches and tuning stores are keyed by them */
    assert_string_equal(v2, "ARM Neoverse-V2 (features 1a43e23f73f03659)");
    assert_string_equal(n1, "ARM Neoverse-N1 (features ba9c4be7bd30cc2f)");

    /* the same part without SVE2 (a kernel that hides it): another identity */
    char *text = read_text("tests/data/cpuinfo-neoverse-v2"), tmp[512];
    for (char *p = text; (p = strstr(p, " sve2 ")); p += 5)
        memcpy(p + 1, "xxx2", 4);
    orr_hostcc_cpu_identity(text, tmp, sizeof tmp);
    assert_string_not_equal(tmp, v2);
    free(text);

    /* another variant of the same part: another identity, the same name */
    text = read_text("tests/data/cpuinfo-neoverse-n1");
    for (char *p = text; (p = strstr(p, "CPU variant\t: 0x3")); p++)
        p[strlen("CPU variant\t: 0x")] = '1';
    orr_hostcc_cpu_identity(text, tmp, sizeof tmp);
    assert_string_not_equal(tmp, n1);
    assert_non_null(strstr(tmp, "ARM Neoverse-N1 (features "));
    free(text);

    /* an unknown part is named by its numbers */
    text = read_text("tests/data/cpuinfo-neoverse-n1");
    for (char *p = text; (p = strstr(p, "0xd0c")); p++)
        memcpy(p, "0xfff", 5);
    orr_hostcc_cpu_identity(text, tmp, sizeof tmp);
    assert_non_null(strstr(tmp, "CPU 0x41:0xfff (features "));
    free(text);

    /* big.LITTLE: both core types, whatever their order */
    char *a = read_text("tests/data/cpuinfo-neoverse-n1"), *b = read_text("tests/data/cpuinfo-neoverse-v2");
    size_t la = strlen(a), lb = strlen(b);
    char *ab = malloc(la + lb + 1), *ba = malloc(la + lb + 1), id1[512], id2[512];
    memcpy(ab, a, la);
    memcpy(ab + la, b, lb + 1);
    memcpy(ba, b, lb);
    memcpy(ba + lb, a, la + 1);
    orr_hostcc_cpu_identity(ab, id1, sizeof id1);
    orr_hostcc_cpu_identity(ba, id2, sizeof id2);
    print_message("big.LITTLE: %s\n", id1);
    assert_string_equal(id1, id2);
    assert_non_null(strstr(id1, "ARM Neoverse-N1 + ARM Neoverse-V2 (features "));
    assert_string_not_equal(id1, v2);
    assert_string_not_equal(id1, n1);
    free(a);
    free(b);
    free(ab);
    free(ba);
}

/* Neither layout (POWER, RISC-V): the lines that describe the CPU still
 * separate two models; clocks do not. */
static void test_cpu_identity_other(void **state)
{
    static const char p9[] = "processor\t: 0\ncpu\t\t: POWER9, altivec supported\n"
                             "clock\t\t: 2166.000000MHz\nrevision\t: 2.2 (pvr 004e 1202)\n\n"
                             "processor\t: 1\ncpu\t\t: POWER9, altivec supported\n"
                             "clock\t\t: 3800.000000MHz\nrevision\t: 2.2 (pvr 004e 1202)\n\n"
                             "timebase\t: 512000000\nplatform\t: PowerNV\n";
    static const char p10[] = "processor\t: 0\ncpu\t\t: POWER10, altivec supported\n"
                              "clock\t\t: 2166.000000MHz\nrevision\t: 2.0 (pvr 0080 1200)\n\n"
                              "timebase\t: 512000000\nplatform\t: PowerNV\n";
    char a[512], b[512], c[512];
    orr_hostcc_cpu_identity(p9, a, sizeof a);
    orr_hostcc_cpu_identity(p10, b, sizeof b);
    print_message("POWER9: %s\nPOWER10: %s\n", a, b);
    assert_string_not_equal(a, b);
    assert_non_null(strstr(a, "POWER9, altivec supported (features "));
    /* one CPU of the same model at another clock: the same identity */
    char one[sizeof p9];
    snprintf(one, sizeof one, "%s", p9);
    char *second = strstr(one, "processor\t: 1");
    memmove(second, strstr(p9, "timebase"), strlen(strstr(p9, "timebase")) + 1);
    char *clock = strstr(one, "2166.0");
    memcpy(clock, "3100.0", 6);
    orr_hostcc_cpu_identity(one, c, sizeof c);
    assert_string_equal(a, c);
    orr_hostcc_cpu_identity("", c, sizeof c);
    assert_string_equal(c, "unknown CPU (features 0000000000000000)");
}

int main(void)
{
    tu_private_cache();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_tmpdir_with_blanks, env_restore),
        cmocka_unit_test_teardown(test_cc_with_flags, env_restore),
        cmocka_unit_test(test_cpu_identity_x86),
        cmocka_unit_test(test_cpu_identity_arm),
        cmocka_unit_test(test_cpu_identity_other),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
