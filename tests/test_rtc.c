/* test_rtc: NVRTC run-time compilation without a GPU (version, PTX and
 * CUBIN for sm_90, template instantiation by name expression, compile errors
 * reported with file and line, #line directives honoured) and the CUDA
 * driver module's behaviour on a machine without libcuda (and its
 * architecture names). */
#include "testutil.h"

#include "cuda.h"
#include "rtc.h"

static const char axpy_src[] =
    "template <typename real>\n"
    "__global__ void axpy(real a, const real *x, real *y, int n)\n"
    "{\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n)\n"
    "        y[i] = a * x[i] + y[i];\n"
    "}\n";

static void test_version(void **state)
{
    (void)state;
    orr_error err = {0};
    int major = 0, minor = -1;
    TU_OK(orr_rtc_version(&major, &minor, &err), &err);
    print_message("NVRTC %d.%d\n", major, minor);
    assert_true(major >= 12);
    assert_true(minor >= 0);
    orr_error_clear(&err);
}

static void test_ptx_templates(void **state)
{
    (void)state;
    orr_error err = {0};
    orr_rtc_result r = {0};
    const char *opts[] = {"-std=c++17"};
    const char *exprs[] = {"axpy<float>", "axpy<double>"};
    TU_OK(orr_rtc_compile(axpy_src, "axpy.cu", "sm_90", opts, 1, exprs, 2, ORR_EMIT_PTX, &r, &err),
          &err);
    assert_non_null(r.image);
    assert_true(r.size > 1);
    const char *ptx = r.image;
    assert_int_equal(ptx[r.size - 1], '\0');
    assert_int_equal(strlen(ptx), r.size - 1);
    assert_non_null(strstr(ptx, ".target sm_90"));
    assert_non_null(r.log);
    assert_true(r.seconds > 0.0);

    assert_int_equal(r.nlowered, 2);
    for (int k = 0; k < 2; k++) {
        assert_non_null(r.lowered[k]);
        assert_true(strlen(r.lowered[k]) > 0);
        char entry[512];
        snprintf(entry, sizeof entry, ".entry %s(", r.lowered[k]);
        assert_non_null(strstr(ptx, entry));
    }
    assert_string_not_equal(r.lowered[0], r.lowered[1]);
    /* The double instantiation computes in f64, the float one in f32. */
    assert_non_null(strstr(ptx, "fma.rn.f64"));
    assert_non_null(strstr(ptx, "fma.rn.f32"));

    orr_rtc_result_free(&r);
    assert_null(r.image);
    assert_null(r.lowered);
    assert_null(r.log);
    assert_int_equal(r.nlowered, 0);
    orr_error_clear(&err);
}

static void test_cubin(void **state)
{
    (void)state;
    orr_error err = {0};
    orr_rtc_result r = {0};
    const char *exprs[] = {"axpy<float>"};
    TU_OK(orr_rtc_compile(axpy_src, "axpy.cu", "sm_90", NULL, 0, exprs, 1, ORR_EMIT_CUBIN, &r, &err),
          &err);
    assert_true(r.size > 4);
    assert_memory_equal(r.image, "\x7f" "ELF", 4);
    assert_int_equal(r.nlowered, 1);
    assert_true(strlen(r.lowered[0]) > 0);
    orr_rtc_result_free(&r);

    /* CUBIN needs a real architecture. */
    assert_int_equal(orr_rtc_compile(axpy_src, "axpy.cu", "compute_90", NULL, 0, exprs, 1,
                                     ORR_EMIT_CUBIN, &r, &err),
                     ORR_ERR_ARG);
    assert_null(r.image);
    orr_error_clear(&err);
}

static void test_syntax_error(void **state)
{
    (void)state;
    orr_error err = {0};
    orr_rtc_result r = {0};
    static const char bad[] =
        "__global__ void k(float *p)\n"
        "{\n"
        "    float x = 1.0f;\n"
        "    p[0] = x +* ;\n"
        "}\n";
    assert_int_equal(orr_rtc_compile(bad, "bad_kernel.cu", "sm_90", NULL, 0, NULL, 0, ORR_EMIT_PTX,
                                     &r, &err),
                     ORR_ERR_COMPILE);
    print_message("NVRTC: %s\n", err.msg);
    assert_int_equal(err.code, ORR_ERR_COMPILE);
    assert_non_null(strstr(err.msg, "NVRTC failed to compile bad_kernel.cu: "));
    assert_non_null(strstr(err.msg, "bad_kernel.cu(4)"));
    assert_non_null(strstr(err.msg, "error"));
    assert_null(strchr(err.msg, '\n'));
    assert_non_null(err.log);
    assert_true(strlen(err.log) > 0);
    assert_non_null(strstr(err.log, "bad_kernel.cu(4): error"));
    /* Nothing is left in the result on failure. */
    assert_null(r.image);
    assert_null(r.log);
    assert_int_equal(r.nlowered, 0);
    orr_error_clear(&err);
}

static void test_line_directive(void **state)
{
    (void)state;
    orr_error err = {0};
    orr_rtc_result r = {0};
    static const char src[] =
        "__device__ float ok(float x) { return x; }\n"
        "#line 7 \"forces/user.h\"\n"
        "__device__ float f(float r2)\n"                 /* forces/user.h(7) */
        "{\n"                                           /* 8 */
        "    return undefined_symbol * r2;\n"           /* 9 */
        "}\n";
    assert_int_equal(orr_rtc_compile(src, "orrery_gen.cu", "sm_90", NULL, 0, NULL, 0,
                                     ORR_EMIT_PTX, &r, &err),
                     ORR_ERR_COMPILE);
    print_message("NVRTC: %s\n", err.msg);
    assert_non_null(strstr(err.msg, "forces/user.h(9)"));
    assert_non_null(err.log);
    assert_non_null(strstr(err.log, "forces/user.h(9): error"));
    assert_null(strstr(err.log, "orrery_gen.cu(5)"));
    orr_error_clear(&err);
}

static void test_name_expression_missing(void **state)
{
    (void)state;
    orr_error err = {0};
    orr_rtc_result r = {0};
    const char *exprs[] = {"no_such_kernel<float>"};
    orr_status st = orr_rtc_compile(axpy_src, "axpy.cu", "sm_90", NULL, 0, exprs, 1,
                                    ORR_EMIT_PTX, &r, &err);
    print_message("NVRTC: %s\n", err.msg);
    assert_int_not_equal(st, ORR_OK);
    assert_int_equal(err.code, st);
    assert_null(r.image);
    assert_int_equal(r.nlowered, 0);
    orr_error_clear(&err);
}

static void test_cuda_without_driver(void **state)
{
    (void)state;
    orr_error err = {0};
    orr_status st = orr_cuda_open(&err);
    if (st == ORR_OK || st == ORR_ERR_NODEVICE || st == ORR_ERR_CUDA) {
        print_message("a CUDA driver is present (%s); skipping\n", orr_status_name(st));
        orr_error_clear(&err);
        skip();
    }
    print_message("cuda: %s\n", err.msg);
    assert_int_equal(st, ORR_ERR_NODRIVER);
    assert_int_equal(err.code, ORR_ERR_NODRIVER);
    assert_non_null(strstr(err.msg, "libcuda.so.1"));
    assert_int_equal(orr_cuda_driver_version(), 0);

    orr_error again = {0};
    assert_int_equal(orr_cuda_open(&again), st);
    assert_string_equal(again.msg, err.msg);

    /* Everything else reports the same missing driver. */
    int count = -1;
    orr_error third = {0};
    assert_int_equal(orr_cuda_device_count(&count, &third), ORR_ERR_NODRIVER);
    assert_int_equal(count, 0);
    assert_non_null(strstr(third.msg, "libcuda.so.1"));
    orr_devptr p = 1;
    assert_int_equal(orr_cuda_alloc(&p, 1024, NULL), ORR_ERR_NODRIVER);
    assert_int_equal(p, 0);
    orr_cuda_free(0);
    orr_cuda_module_unload(NULL);
    orr_cuda_event_destroy(NULL);

    orr_error_clear(&err);
    orr_error_clear(&again);
    orr_error_clear(&third);
}

/* The architecture name NVRTC and the kernel cache use: "sm_" and the
 * compute capability's digits. */
static void test_cuda_arch_name(void **state)
{
    (void)state;
    orr_gpu_info g = {0};
    char buf[16];
    g.cc_major = 9;
    g.cc_minor = 0;
    orr_cuda_arch_name(&g, buf, sizeof buf);
    assert_string_equal(buf, "sm_90");
    g.cc_major = 12;
    orr_cuda_arch_name(&g, buf, sizeof buf);
    assert_string_equal(buf, "sm_120");
    orr_cuda_arch_name(&g, buf, 4);
    assert_string_equal(buf, "sm_");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_ptx_templates),
        cmocka_unit_test(test_cubin),
        cmocka_unit_test(test_syntax_error),
        cmocka_unit_test(test_line_directive),
        cmocka_unit_test(test_name_expression_missing),
        cmocka_unit_test(test_cuda_without_driver),
        cmocka_unit_test(test_cuda_arch_name),
    };
    return cmocka_run_group_tests_name("rtc", tests, NULL, NULL);
}
