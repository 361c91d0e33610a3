/* test_kspec: generated kernel source and its run-time compilation without a
 * GPU: baked constants (exact hex floats), PTX for sm_90 in both precisions
 * through name expressions, the unroll factor visible in the PTX, and a
 * broken kernel source reported with its file and line by NVRTC and by the
 * host compiler, with nothing written to the cache; softening and G limits
 * in each precision. */
#include "testutil.h"

#include <sys/stat.h>
#include <unistd.h>

#include "engine.h"
#include "hostcc.h"
#include "kcache.h"
#include "kfamily.h"
#include "kspec.h"
#include "rtc.h"

static const char *const opts[] = {"-std=c++17"};

static orr_rtc_result ptx_for(const orr_kspec *s)
{
    orr_error err = {0};
    char *src = NULL;
    TU_OK(orr_kspec_source(s, &orr_family_direct, ORR_TARGET_GPU, &src, &err), &err);
    orr_kexprs exprs;
    orr_kexprs_make(&exprs, &orr_family_direct, s->phys.precision);
    orr_rtc_result r = {0};
    TU_OK(orr_rtc_compile(src, "orrery_gen.cu", "sm_90", opts, 1, exprs.expr, exprs.count, ORR_EMIT_PTX,
                          &r, &err), &err);
    free(src);
    return r;
}

static int count(const char *hay, const char *needle)
{
    int c = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        c++;
    return c;
}

static void test_baked_constants(void **state)
{
    orr_error err = {0};
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_GPU);
    s.launch.block = 128;
    s.launch.unroll = 8;
    s.launch.split = 2;
    s.phys.softening = 0.1;
    s.phys.G = 6.674e-11;
    char *src = NULL;
    TU_OK(orr_kspec_source(&s, &orr_family_direct, ORR_TARGET_GPU, &src, &err), &err);
    assert_non_null(strstr(src, "#define ORR_BLOCK 128\n"));
    assert_non_null(strstr(src, "#define ORR_UNROLL 8\n"));
    assert_non_null(strstr(src, "#define ORR_SPLIT 2\n"));
    assert_non_null(strstr(src, "#define ORR_SOFTENING 0x1.999999999999ap-4"));
    /* the literals read back bit-exactly */
    const char *g = strstr(src, "#define ORR_G ");
    assert_non_null(g);
    assert_true(strtod(g + strlen("#define ORR_G "), NULL) == 6.674e-11);
    const char *e2 = strstr(src, "#define ORR_EPS2 ");
    assert_true(strtod(e2 + strlen("#define ORR_EPS2 "), NULL) == 0.1 * 0.1);
    /* every kernels_src file is under a #line directive */
    assert_non_null(strstr(src, "#line 1 \"prelude.h\""));
    assert_non_null(strstr(src, "\"forces/gravity.h\"\nf = mj * orr_rsqrt3_nz(r2);"));
    assert_non_null(strstr(src, "#line 1 \"direct.cu\""));
    free(src);
    TU_OK(orr_kspec_source(&s, &orr_family_direct, ORR_TARGET_CPU, &src, &err), &err);
    assert_non_null(strstr(src, "#define ORR_DOUBLE 0\n"));
    assert_non_null(strstr(src, "#line 1 \"direct_cpu.c\""));
    free(src);
}

static void test_ptx_both_precisions(void **state)
{
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_GPU);
    for (int p = 0; p < 2; p++) {
        s.phys.precision = p;
        orr_rtc_result r = ptx_for(&s);
        assert_int_equal(r.nlowered, orr_family_direct.ngpu);
        const char *text = r.image;
        assert_non_null(strstr(text, ".target sm_90"));
        for (int k = 0; k < r.nlowered; k++) {
            char entry[512];
            snprintf(entry, sizeof entry, ".entry %s(", r.lowered[k]);
            assert_non_null(strstr(text, entry));
        }
        if (p == ORR_DOUBLE)
            assert_true(count(text, "rsqrt.approx.f64") + count(text, "rsqrt.approx.ftz.f64") > 0);
        else
            assert_true(count(text, "rsqrt.approx.f32") > 0);
        orr_rtc_result_free(&r);
    }
}

/* The render family (the pictures' deposit) compiles for sm_90 in every
 * precision, to PTX and CUBIN, with double atomic adds and no fused
 * multiply-add (its arithmetic is the host's, operation for operation). */
static void test_render_family(void **state)
{
    const orr_precision precs[] = {ORR_FLOAT, ORR_DOUBLE, ORR_MIXED};
    for (int p = 0; p < 3; p++) {
        orr_kspec s;
        orr_kspec_default(&s, ORR_TARGET_GPU);
        s.phys.precision = precs[p];
        orr_error err = {0};
        char *src = NULL;
        TU_OK(orr_kspec_source(&s, &orr_family_render, ORR_TARGET_GPU, &src, &err), &err);
        assert_non_null(strstr(src, "#line 1 \"render.cu\""));
        orr_kexprs exprs;
        orr_kexprs_make(&exprs, &orr_family_render, s.phys.precision);
        const char *const o[] = {"-std=c++17", "--fmad=true", "--ftz=true"};
        for (int emit = 0; emit < 2; emit++) {
            orr_rtc_result r = {0};
            TU_OK(orr_rtc_compile(src, "orrery_gen.cu", "sm_90", o, 3, exprs.expr, exprs.count,
                                  emit ? ORR_EMIT_CUBIN : ORR_EMIT_PTX, &r, &err), &err);
            assert_int_equal(r.nlowered, orr_family_render.ngpu);
            if (!emit) {
                const char *text = r.image;
                assert_true(count(text, "atom.global.add.f64") == 4);
                assert_int_equal(count(text, "fma.rn.f64"), 0);
                for (int k = 0; k < r.nlowered; k++) {
                    char entry[512];
                    snprintf(entry, sizeof entry, ".entry %s(", r.lowered[k]);
                    assert_non_null(strstr(text, entry));
                }
            }
            orr_rtc_result_free(&r);
        }
        free(src);
    }
    /* a GPU-only family has no CPU source */
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_CPU);
    orr_error err = {0};
    char *src = NULL;
    assert_int_equal(orr_kspec_source(&s, &orr_family_render, ORR_TARGET_CPU, &src, &err),
                     ORR_ERR_ARG);
    assert_string_equal(err.msg, "kernel family 'render' has no CPU source");
}

static void test_unroll_in_ptx(void **state)
{
    /* the tiled kernel's full-tile loop has UNROLL copies of the interaction */
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_GPU);
    s.launch.unroll = 1;
    orr_rtc_result r1 = ptx_for(&s);
    s.launch.unroll = 16;
    orr_rtc_result r16 = ptx_for(&s);
    int c1 = count(r1.image, "rsqrt.approx"), c16 = count(r16.image, "rsqrt.approx");
    print_message("rsqrt instructions: unroll 1 -> %d, unroll 16 -> %d\n", c1, c16);
    assert_true(c16 >= c1 + 15);
    orr_rtc_result_free(&r1);
    orr_rtc_result_free(&r16);
}

/* A copy of kernels_src with line 14 of forces/gravity.h (the pair snippet) broken. */
static const char *broken_kernels(void)
{
    static char dir[256];
    if (dir[0])
        return dir;
    tu_temp_dir(dir, sizeof dir, "orrery-ksrc");
    tu_remove_at_exit(dir);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "cp -r kernels_src/. %s/ && sed -i '14s/.*/f = mj * orr_rsqrt3_nz(r2) +;/' "
             "%s/forces/gravity.h", dir, dir);
    assert_int_equal(system(cmd), 0);
    return dir;
}

static void test_compile_error_names_line(void **state)
{
    orr_error err = {0};
    size_t before = 0, after = 0, bytes = 0;
    TU_OK(orr_kcache_usage(&before, &bytes, &err), &err);
    setenv("ORRERY_KERNELS_DIR", broken_kernels(), 1);
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_GPU);
    char *src = NULL;
    TU_OK(orr_kspec_source(&s, &orr_family_direct, ORR_TARGET_GPU, &src, &err), &err);
    orr_kexprs exprs;
    orr_kexprs_make(&exprs, &orr_family_direct, s.phys.precision);
    orr_rtc_result r = {0};
    assert_int_equal(orr_rtc_compile(src, "orrery_gen.cu", "sm_90", opts, 1, exprs.expr, exprs.count,
                                     ORR_EMIT_PTX, &r, &err), ORR_ERR_COMPILE);
    print_message("NVRTC: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "forces/gravity.h(14)"));
    assert_non_null(err.log);
    assert_non_null(strstr(err.log, "forces/gravity.h(14): error"));
    free(src);
    orr_error_clear(&err);

    /* the CPU backend: the host compiler names the same file and line, and
     * engine creation fails without caching anything */
    orr_kspec c;
    orr_kspec_default(&c, ORR_TARGET_CPU);
    orr_engine *e = NULL;
    assert_int_equal(orr_engine_create(&e, ORR_BACKEND_CPU, &c, ORR_VARIANT_TILED, 10, 0, NULL, 0,
                                       &err), ORR_ERR_COMPILE);
    print_message("host cc: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "forces/gravity.h:14:"));
    assert_null(e);
    orr_error_clear(&err);
    unsetenv("ORRERY_KERNELS_DIR");
    TU_OK(orr_kcache_usage(&after, &bytes, &err), &err);
    assert_int_equal(before, after);
}

static void test_performance_options(void **state)
{
    orr_error err = {0};
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_GPU);
    s.launch.ipt = 4;
    s.launch.newton = 1;
    s.launch.ftz = 0;
    char *src = NULL;
    TU_OK(orr_kspec_source(&s, &orr_family_direct, ORR_TARGET_GPU, &src, &err), &err);
    assert_non_null(strstr(src, "#define ORR_IPT 4\n"));
    assert_non_null(strstr(src, "#define ORR_RSQRT64_NEWTON 1\n"));
    free(src);
    const char *o[ORR_KSPEC_MAX_OPTS];
    int n = orr_kspec_nvrtc_options(&s, o);
    assert_int_equal(n, 3);
    assert_string_equal(o[2], "--ftz=false");
    s.launch.ftz = 1;
    orr_kspec_nvrtc_options(&s, o);
    assert_string_equal(o[2], "--ftz=true");
    s.launch.ipt = 9;
    assert_int_equal(orr_kspec_validate(&s, ORR_TARGET_GPU, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "invalid bodies per thread 9: must be from 1 to 8");
    s.launch.ipt = 1;
    s.launch.newton = 3;
    assert_int_equal(orr_kspec_validate(&s, ORR_TARGET_GPU, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "invalid newton 3: must be 1 or 2");
    orr_kspec_default(&s, ORR_TARGET_CPU);
    s.launch.threads = 1;
    TU_OK(orr_kspec_source(&s, &orr_family_direct, ORR_TARGET_CPU, &src, &err), &err);
    assert_non_null(strstr(src, "#define ORR_THREADS 1\n"));
    free(src);
    orr_error_clear(&err);
}

static void test_invalid_specs(void **state)
{
    orr_error err = {0};
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_GPU);
    s.launch.block = 100;
    assert_int_equal(orr_kspec_validate(&s, ORR_TARGET_GPU, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "invalid block size 100: must be a multiple of 32 from 32 to 1024");
    s.launch.block = 256;
    s.launch.split = 3;
    assert_int_equal(orr_kspec_validate(&s, ORR_TARGET_GPU, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "invalid split 3: threads per body must be 1, 2, 4, 8, 16 or 32");
    s.launch.split = 1;
    s.launch.unroll = 0;
    assert_int_equal(orr_kspec_validate(&s, ORR_TARGET_GPU, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "invalid unroll 0: must be from 1 to 64");
    s.launch.unroll = 4;
    snprintf(s.phys.force, sizeof s.phys.force, "../etc");
    assert_int_equal(orr_kspec_validate(&s, ORR_TARGET_GPU, &err), ORR_ERR_ARG);
    orr_error_clear(&err);
}

/* eps^2 is baked in the spec's precision: 0 or a normal number there; G
 * finite and representable.  ORR_SOFTENED follows eps^2. */
static void test_softening_and_G_range(void **state)
{
    orr_error err = {0};
    orr_kspec s;
    orr_kspec_default(&s, ORR_TARGET_GPU);
    s.phys.softening = 1e-30;   /* 1e-60 underflows in float, fine in double */
    assert_int_equal(orr_kspec_validate(&s, ORR_TARGET_GPU, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "invalid softening 1e-30: its square underflows in float "
                                 "(softening must be 0 or from 1.08e-19 to 1.84e+19)");
    char *src = NULL;
    assert_int_equal(orr_kspec_source(&s, &orr_family_direct, ORR_TARGET_CPU, &src, &err), ORR_ERR_ARG);
    assert_null(src);
    s.phys.precision = ORR_DOUBLE;
    TU_OK(orr_kspec_validate(&s, ORR_TARGET_GPU, &err), &err);
    TU_OK(orr_kspec_source(&s, &orr_family_direct, ORR_TARGET_GPU, &src, &err), &err);
    assert_non_null(strstr(src, "#define ORR_SOFTENED 1\n"));
    free(src);
    s.phys.softening = 1e-160;   /* underflows in double too */
    assert_int_equal(orr_kspec_validate(&s, ORR_TARGET_CPU, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "underflows in double (softening must be 0 or from 1.49e-154 "
                                    "to 1.34e+154)"));
    s.phys.softening = 1e-320;   /* denormal: its square is 0 in double, yet it is not 0 */
    assert_int_equal(orr_kspec_validate(&s, ORR_TARGET_CPU, &err), ORR_ERR_ARG);
    s.phys.precision = ORR_FLOAT;
    s.phys.softening = 1e20;
    assert_int_equal(orr_kspec_validate(&s, ORR_TARGET_GPU, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "invalid softening 1e+20: its square overflows in float"));
    /* the edges: the smallest and largest softening with a normal square */
    s.phys.softening = 1.1e-19;
    TU_OK(orr_kspec_validate(&s, ORR_TARGET_GPU, &err), &err);
    s.phys.softening = 1.8e19;
    TU_OK(orr_kspec_validate(&s, ORR_TARGET_GPU, &err), &err);
    /* no softening: ORR_SOFTENED 0, so r2 = 0 is guarded */
    s.phys.softening = 0;
    TU_OK(orr_kspec_source(&s, &orr_family_direct, ORR_TARGET_CPU, &src, &err), &err);
    assert_non_null(strstr(src, "#define ORR_SOFTENED 0\n"));
    free(src);
    /* G: finite, and within the precision's range */
    s.phys.softening = 0.01;
    s.phys.G = 1e39;
    assert_int_equal(orr_kspec_validate(&s, ORR_TARGET_GPU, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "invalid G 1e+39: must be finite and at most 3.4e+38 in "
                                 "magnitude in float");
    s.phys.G = -1e39;
    assert_int_equal(orr_kspec_validate(&s, ORR_TARGET_CPU, &err), ORR_ERR_ARG);
    s.phys.precision = ORR_DOUBLE;
    TU_OK(orr_kspec_validate(&s, ORR_TARGET_GPU, &err), &err);
    s.phys.G = INFINITY;
    assert_int_equal(orr_kspec_validate(&s, ORR_TARGET_GPU, &err), ORR_ERR_ARG);
    s.phys.G = NAN;
    assert_int_equal(orr_kspec_validate(&s, ORR_TARGET_GPU, &err), ORR_ERR_ARG);
    orr_error_clear(&err);
}

int main(void)
{
    tu_private_cache();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_baked_constants),
        cmocka_unit_test(test_ptx_both_precisions),
        cmocka_unit_test(test_unroll_in_ptx),
        cmocka_unit_test(test_render_family),
        cmocka_unit_test(test_compile_error_names_line),
        cmocka_unit_test(test_performance_options),
        cmocka_unit_test(test_invalid_specs),
        cmocka_unit_test(test_softening_and_G_range),
    };
    return cmocka_run_group_tests_name("kspec", tests, NULL, NULL);
}
