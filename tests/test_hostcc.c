/* test_hostcc: the CPU backend's compiler: a temporary directory whose path
 * has blanks and quotes (the command is an argument vector, not a string
 * split on blanks) and $CC carrying flags of its own. */
#include "testutil.h"

#include "hostcc.h"

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

int main(void)
{
    tu_private_cache();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_tmpdir_with_blanks, env_restore),
        cmocka_unit_test_teardown(test_cc_with_flags, env_restore),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
