/* test_render: pictures of the bodies: the density grid (cloud in cell
 * conserves mass, the projection axes, row 0 at the top), the colour maps'
 * ends, the view fixed by the first frame, option checks, and PNG files
 * read back with libpng: the right size, brighter where bodies are denser,
 * and an old frame kept when a write fails (a full disk named with the
 * file); frames written by worker threads: the same bytes, and failures
 * reported in queue order. */
#include "testutil.h"

#include <dirent.h>

#include <errno.h>
#include <png.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include "engine.h"
#include "frames.h"
#include "render.h"

static char dir[256];

static const char *tmp_path(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* A CPU simulation of the n bodies pos (x y z m) in precision prec. */
static orr_sim *make_sim_in(long n, const double *pos, orr_precision prec)
{
    orr_sim_config c;
    orr_sim_config_default(&c);
    c.n = n;
    c.precision = prec;
    c.backend = ORR_BACKEND_CPU;
    c.tune = ORR_SIM_TUNE_OFF;
    orr_error err = {0};
    orr_sim *s = NULL;
    TU_OK(orr_sim_create(&s, &c, NULL, 0, &err), &err);
    double *p;
    TU_OK(orr_sim_pos(s, &p, &err), &err);
    memcpy(p, pos, sizeof(double) * 4 * (size_t)n);
    orr_sim_touch(s);
    return s;
}

static orr_sim *make_sim(long n, const double *pos)
{
    return make_sim_in(n, pos, ORR_DOUBLE);
}

/* Reads a PNG back as 8-bit RGB (heap); fails the test when libpng cannot. */
static uint8_t *read_png(const char *path, int *w, int *h)
{
    png_image img;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path))
        fail_msg("libpng cannot read %s: %s", path, img.message);
    img.format = PNG_FORMAT_RGB;
    uint8_t *buf = malloc(PNG_IMAGE_SIZE(img));
    assert_non_null(buf);
    if (!png_image_finish_read(&img, NULL, buf, 0, NULL))
        fail_msg("libpng cannot decode %s: %s", path, img.message);
    *w = (int)img.width;
    *h = (int)img.height;
    png_image_free(&img);
    return buf;
}

static void test_density(void **state)
{
    (void)state;
    /* a body at a pixel centre lands in that pixel; one between four shares */
    const double pos[] = {
        -0.75, 0.75, 0, 2,   /* pixel (0, 0) of a 4x4 grid over [-1, 1]^2 */
        0.0, 0.0, 0.5, 1,    /* the corner shared by the four middle pixels */
        5, 5, 5, 7,          /* outside */
    };
    orr_render_options o;
    orr_render_options_default(&o);
    o.width = o.height = 4;
    o.extent_mode = ORR_EXTENT_BOX;
    o.box[0] = o.box[2] = -1;
    o.box[1] = o.box[3] = 1;
    orr_render_view v;
    memset(&v, 0, sizeof v);
    double d[16], ext[4];
    orr_error err = {0};
    TU_OK(orr_render_density(3, pos, &o, &v, d, ext, &err), &err);
    const double area = 0.5 * 0.5;
    assert_true(d[0] == 2 / area);
    assert_true(d[5] == 0.25 / area && d[6] == 0.25 / area);
    assert_true(d[9] == 0.25 / area && d[10] == 0.25 / area);
    double total = 0;
    for (int k = 0; k < 16; k++)
        total += d[k] * area;
    assert_true(fabs(total - 3) < 1e-12);   /* the body outside adds nothing */

    /* xz: horizontal x, vertical z; yz: horizontal y, vertical z (pixel
     * centres, so one pixel takes all) */
    const double up[] = {0.25, -0.75, 0.75, 1};
    o.axis = ORR_AXIS_XZ;
    TU_OK(orr_render_density(1, up, &o, &v, d, ext, &err), &err);
    assert_true(d[2] == 1 / area);   /* row 0 (top), column 2 */
    o.axis = ORR_AXIS_YZ;
    TU_OK(orr_render_density(1, up, &o, &v, d, ext, &err), &err);
    assert_true(d[0] == 1 / area);   /* row 0, column 0 */
    o.axis = ORR_AXIS_XY;
    TU_OK(orr_render_density(1, up, &o, &v, d, ext, &err), &err);
    assert_true(d[14] == 1 / area);   /* row 3 (bottom, y = -0.75), column 2 */
}

/* Bodies for the deposit tests: a clump, a spread, some outside the
 * extent, on pixel edges, massless or not finite. */
static double *deposit_bodies(long n, uint64_t seed)
{
    double *pos = malloc(sizeof(double) * 4 * (size_t)n);
    assert_non_null(pos);
    for (long i = 0; i < n; i++) {
        double *p = pos + 4 * i, r = i % 3 == 0 ? 0.05 : 1.3;
        for (int k = 0; k < 3; k++)
            p[k] = r * (2 * tu_rand(&seed) - 1) + (i % 3 == 0 ? 0.3 : 0);
        p[3] = (0.5 + tu_rand(&seed)) / (double)n;
    }
    pos[3] = 0;                                /* massless */
    pos[4 + 0] = NAN;                          /* not finite */
    pos[8 + 0] = pos[8 + 1] = pos[8 + 2] = -1; /* on the lower-left corner */
    pos[12 + 0] = pos[12 + 1] = pos[12 + 2] = 1;
    pos[16 + 0] = 0.25;                        /* on a pixel edge of the 64 x 48 grid */
    pos[16 + 1] = 0.5;
    return pos;
}

/* The engine's deposit (CPU backend) is the host's, bit for bit, in float
 * and double, on every axis, for grids with and without the same aspect. */
static void test_deposit_engine_cpu(void **state)
{
    (void)state;
    const long n = 5000;
    double *pos = deposit_bodies(n, 99);
    const int sizes[][2] = {{64, 48}, {17, 33}, {1, 1}};
    for (int prec = 0; prec < 2; prec++) {
        orr_kspec spec;
        orr_kspec_default(&spec, ORR_TARGET_CPU);
        spec.phys.precision = prec ? ORR_DOUBLE : ORR_FLOAT;
        orr_engine *e = NULL;
        orr_error err = {0};
        TU_OK(orr_engine_create(&e, ORR_BACKEND_CPU, &spec, ORR_VARIANT_TILED, n, 0, NULL, 0,
                                &err), &err);
        TU_OK(orr_engine_set_state(e, pos, NULL, &err), &err);
        double *held = malloc(sizeof(double) * 4 * (size_t)n);   /* in the engine's precision */
        TU_OK(orr_engine_get_state(e, held, NULL, &err), &err);
        for (int sz = 0; sz < 3; sz++)
            for (int axis = 0; axis < 3; axis++) {
                orr_render_options o;
                orr_render_options_default(&o);
                o.width = sizes[sz][0];
                o.height = sizes[sz][1];
                o.axis = (orr_render_axis)axis;
                o.extent_mode = ORR_EXTENT_BOX;
                o.box[0] = o.box[2] = -1;
                o.box[1] = o.box[3] = 1;
                orr_render_view v;
                memset(&v, 0, sizeof v);
                const size_t npix = (size_t)o.width * (size_t)o.height;
                double *a = malloc(sizeof(double) * npix), *b = malloc(sizeof(double) * npix);
                double ext[4];
                TU_OK(orr_render_density(n, held, &o, &v, a, ext, &err), &err);
                orr_deposit d = {o.width, o.height, axis == ORR_AXIS_YZ ? 1 : 0,
                                 axis == ORR_AXIS_XY ? 1 : 2, {-1, 1, -1, 1}};
                for (size_t k = 0; k < npix; k++)
                    b[k] = NAN;   /* every pixel must be written */
                TU_OK(orr_engine_deposit(e, &d, b, &err), &err);
                assert_memory_equal(a, b, sizeof(double) * npix);
                double total = 0;
                for (size_t k = 0; k < npix; k++)
                    total += a[k];
                assert_true(total > 0);
                free(a);
                free(b);
            }
        orr_deposit bad = {8, 8, 0, 0, {-1, 1, -1, 1}};
        double grid[64];
        assert_int_equal(orr_engine_deposit(e, &bad, grid, &err), ORR_ERR_ARG);
        assert_string_equal(err.msg, "deposit: invalid axes 0, 0 (two of 0, 1, 2)");
        bad.ay = 1;
        bad.ext[1] = -2;
        assert_int_equal(orr_engine_deposit(e, &bad, grid, &err), ORR_ERR_ARG);
        assert_string_equal(err.msg, "deposit: the extent must have xmin < xmax and ymin < ymax "
                                     "(got {-1, -2, -1, 1})");
        free(held);
        orr_engine_destroy(e);
    }
    free(pos);
}

/* A simulation's frames come from the engine's deposit (after steps) or
 * from the mirror (written, not uploaded): both the bits of the host path
 * on the positions orr_sim_pos reads, with the same view chosen. */
static void test_density_sim(void **state)
{
    (void)state;
    const long n = 3000;
    double *start = deposit_bodies(n, 5);
    start[4] = 0.1;   /* no blow-up in the steps below */
    for (int prec = 0; prec < 2; prec++) {
        orr_error err = {0};
        orr_sim *s = make_sim_in(n, start, prec ? ORR_DOUBLE : ORR_FLOAT);
        double *p;
        for (int round = 0; round < 2; round++) {   /* the mirror newer; then the engine */
            if (round)
                TU_OK(orr_sim_step(s, 2, NULL, &err), &err);
            orr_render_options o;
            orr_render_options_default(&o);
            o.width = 50;
            o.height = 70;
            o.axis = ORR_AXIS_XZ;
            orr_render_view va, vb;
            memset(&va, 0, sizeof va);
            memset(&vb, 0, sizeof vb);
            double a[50 * 70], b[50 * 70], ea[4], eb[4];
            TU_OK(orr_render_density_sim(s, &o, &vb, b, eb, &err), &err);
            TU_OK(orr_sim_pos(s, &p, &err), &err);
            TU_OK(orr_render_density(n, p, &o, &va, a, ea, &err), &err);
            assert_memory_equal(&va, &vb, sizeof va);
            assert_memory_equal(ea, eb, sizeof ea);
            assert_memory_equal(a, b, sizeof a);
        }
        orr_sim_destroy(s);
    }
    free(start);
}

static void test_colormaps(void **state)
{
    (void)state;
    uint8_t c[3];
    orr_error err = {0};
    TU_OK(orr_render_colormap("inferno", 0, c, &err), &err);
    assert_true(c[0] == 0 && c[1] == 0 && c[2] == 4);
    TU_OK(orr_render_colormap("inferno", 1, c, &err), &err);
    assert_true(c[0] == 252 && c[1] == 255 && c[2] == 164);
    TU_OK(orr_render_colormap("viridis", 0, c, &err), &err);
    assert_true(c[0] == 68 && c[1] == 1 && c[2] == 84);
    TU_OK(orr_render_colormap("viridis", 1, c, &err), &err);
    assert_true(c[0] == 253 && c[1] == 231 && c[2] == 37);
    TU_OK(orr_render_colormap("gray", 0.5, c, &err), &err);
    assert_true(c[0] == 128 && c[1] == 128 && c[2] == 128);
    TU_OK(orr_render_colormap("gray", 7, c, &err), &err);   /* clamped */
    assert_true(c[0] == 255);
    assert_int_equal(orr_render_colormap("jet", 0, c, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "render: unknown colormap 'jet' (expected inferno, viridis or "
                                 "gray)");
}

static void test_options(void **state)
{
    (void)state;
    orr_render_options o;
    orr_error err = {0};
    orr_render_options_default(&o);
    TU_OK(orr_render_check(&o, &err), &err);
    assert_int_equal(o.width, 1024);
    assert_string_equal(o.colormap, "inferno");
    o.width = 0;
    assert_int_equal(orr_render_check(&o, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "render: width must be 1..16384 (got 0)");
    orr_render_options_default(&o);
    o.extent_mode = ORR_EXTENT_BOX;
    o.box[0] = 1;
    o.box[1] = -1;
    o.box[3] = 1;
    assert_int_equal(orr_render_check(&o, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "render: extent must be {xmin, xmax, ymin, ymax} with xmin < "
                                 "xmax and ymin < ymax (got {1, -1, 0, 1})");
    orr_render_options_default(&o);
    o.extent_mode = ORR_EXTENT_HALF;
    o.half_width = -2;
    assert_int_equal(orr_render_check(&o, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "render: extent must be a positive half-width (got -2)");
}

/* A dense clump on the left, a few bodies spread on the right. */
static orr_sim *clump_and_sparse(void)
{
    enum { NC = 400, NS = 20, N = NC + NS };
    static double pos[4 * N];
    uint64_t seed = 17;
    for (int i = 0; i < N; i++) {
        double *p = pos + 4 * i;
        if (i < NC) {
            p[0] = -0.5 + 0.1 * (tu_rand(&seed) - 0.5);
            p[1] = 0.1 * (tu_rand(&seed) - 0.5);
        } else {
            p[0] = 0.2 + 0.7 * tu_rand(&seed);
            p[1] = 1.6 * (tu_rand(&seed) - 0.5);
        }
        p[2] = tu_rand(&seed) - 0.5;
        p[3] = 1.0 / N;
    }
    return make_sim(N, pos);
}

static void test_png(void **state)
{
    (void)state;
    orr_sim *s = clump_and_sparse();
    orr_render_options o;
    orr_render_options_default(&o);
    o.width = 96;
    o.height = 64;
    o.extent_mode = ORR_EXTENT_BOX;
    o.box[0] = -1.5;
    o.box[1] = 1.5;
    o.box[2] = -1;
    o.box[3] = 1;
    o.colormap = "gray";
    orr_render_view v;
    memset(&v, 0, sizeof v);
    orr_error err = {0};
    const char *p = tmp_path("frame.png");
    TU_OK(orr_render_sim(s, p, &o, &v, &err), &err);
    int w, h;
    uint8_t *rgb = read_png(p, &w, &h);
    assert_int_equal(w, 96);
    assert_int_equal(h, 64);
    /* gray: r = g = b; the densest pixel is white, empty ones black */
    int max_left = 0, max_right = 0;
    double sum_left = 0, sum_right = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const uint8_t *c = rgb + 3 * (y * w + x);
            assert_true(c[0] == c[1] && c[1] == c[2]);
            if (x < w / 2) {
                sum_left += c[0];
                max_left = c[0] > max_left ? c[0] : max_left;
            } else {
                sum_right += c[0];
                max_right = c[0] > max_right ? c[0] : max_right;
            }
        }
    print_message("left: max %d sum %.0f; right: max %d sum %.0f\n", max_left, sum_left,
                  max_right, sum_right);
    assert_int_equal(max_left, 255);
    assert_true(max_right < 200);
    assert_true(max_right > 0);   /* the sparse bodies show */
    assert_true(sum_left > sum_right);
    /* the clump's centre pixel (x = -0.5, y = 0) is the brightest region */
    int cx = (int)((-0.5 + 1.5) / 3.0 * w), cy = h / 2;
    int centre = 0;
    for (int dy = -2; dy <= 2; dy++)
        for (int dx = -2; dx <= 2; dx++) {
            int b = rgb[3 * ((cy + dy) * w + cx + dx)];
            centre = b > centre ? b : centre;
        }
    assert_int_equal(centre, 255);
    /* a corner far from every body is black */
    assert_int_equal(rgb[0], 0);
    free(rgb);
    orr_sim_destroy(s);
}

static void test_view_fixed(void **state)
{
    (void)state;
    orr_sim *s = clump_and_sparse();
    orr_render_options o;
    orr_render_options_default(&o);
    o.width = 40;
    o.height = 20;
    orr_render_view v;
    memset(&v, 0, sizeof v);
    orr_error err = {0};
    TU_OK(orr_render_sim(s, tmp_path("v0.png"), &o, &v, &err), &err);
    assert_int_equal(v.have_view, 1);
    assert_int_equal(v.have_range, 1);
    assert_int_equal(v.range_log, 1);
    assert_true(v.range[0] == v.range[1] * 1e-3);
    /* the extent has the picture's aspect and holds the bodies */
    double wx = v.extent[1] - v.extent[0], wy = v.extent[3] - v.extent[2];
    assert_true(fabs(wx / wy - 2) < 1e-12);
    assert_true(v.extent[0] < -0.55 && v.extent[1] > 0.9);
    orr_render_view first = v;
    /* spread the bodies out: the next frame keeps extent and range */
    double *pos;
    TU_OK(orr_sim_pos(s, &pos, &err), &err);
    for (long i = 0; i < orr_sim_n(s); i++)
        pos[4 * i] *= 3;
    orr_sim_touch(s);
    TU_OK(orr_render_sim(s, tmp_path("v1.png"), &o, &v, &err), &err);
    assert_memory_equal(&v, &first, sizeof v);
    /* a linear scale chooses its own range once */
    o.log = 0;
    TU_OK(orr_render_sim(s, tmp_path("v2.png"), &o, &v, &err), &err);
    assert_int_equal(v.range_log, 0);
    assert_true(v.range[0] == 0);
    assert_memory_equal(v.extent, first.extent, sizeof v.extent);
    orr_sim_destroy(s);
}

static void test_png_atomic(void **state)
{
    (void)state;
    orr_sim *s = clump_and_sparse();
    orr_render_options o;
    orr_render_options_default(&o);
    o.width = o.height = 16;
    orr_render_view v;
    memset(&v, 0, sizeof v);
    orr_error err = {0};
    const char *p = tmp_path("keep.png");
    TU_OK(orr_render_sim(s, p, &o, &v, &err), &err);
    o.width = 32;
    setenv("ORRERY_TEST_WRITE_FAIL", "1", 1);
    assert_int_equal(orr_render_sim(s, p, &o, &v, &err), ORR_ERR_IO);
    unsetenv("ORRERY_TEST_WRITE_FAIL");
    char want[700];
    snprintf(want, sizeof want,
             "cannot write '%s': simulated failure (ORRERY_TEST_WRITE_FAIL is set)", p);
    assert_string_equal(err.msg, want);
    int w, h;
    free(read_png(p, &w, &h));
    assert_int_equal(w, 16);   /* the old frame */
    /* no temporary of it left: nothing named keep.png.tmp.* beside it */
    DIR *d = opendir(tmp_path(""));
    assert_non_null(d);
    for (struct dirent *en; (en = readdir(d)) != NULL;)
        if (strncmp(en->d_name, "keep.png.tmp.", 13) == 0)
            fail_msg("a temporary is left: %s", en->d_name);
    closedir(d);
    orr_sim_destroy(s);
}

/* The whole of a file (heap; *len bytes). */
static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        fail_msg("cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    long size = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *buf = malloc((size_t)size + 1);
    assert_int_equal(fread(buf, 1, (size_t)size, fp), (size_t)size);
    fclose(fp);
    *len = (size_t)size;
    return buf;
}

static void assert_same_file(const char *a, const char *b)
{
    size_t la, lb;
    char *x = slurp(a, &la), *y = slurp(b, &lb);
    if (la != lb || memcmp(x, y, la) != 0)
        fail_msg("%s and %s differ", a, b);
    free(x);
    free(y);
}

/* One series of frames: steps between them, two paths that change axis
 * and scale, and one path written over again; by orr_render_sim (w = -1)
 * or a writer with w threads (depth 0: the default). */
static void series(const char *tag, int w, int depth)
{
    const long n = 4000;
    double *start = deposit_bodies(n, 11);
    start[4] = 0.1;
    orr_sim_config c;
    orr_sim_config_default(&c);
    c.n = n;
    c.backend = ORR_BACKEND_CPU;
    c.tune = ORR_SIM_TUNE_OFF;
    c.dt = 1e-3;
    orr_error err = {0};
    orr_sim *s = NULL;
    TU_OK(orr_sim_create(&s, &c, NULL, 0, &err), &err);
    double *p;
    TU_OK(orr_sim_pos(s, &p, &err), &err);
    memcpy(p, start, sizeof(double) * 4 * (size_t)n);
    orr_sim_touch(s);
    free(start);
    orr_frames *f = NULL;
    if (w >= 0)
        TU_OK(orr_frames_create(&f, w, depth, &err), &err);
    orr_render_options a, b;
    orr_render_options_default(&a);
    a.width = 120;
    a.height = 90;
    orr_render_options_default(&b);
    b.width = 64;
    b.height = 64;
    b.axis = ORR_AXIS_YZ;
    b.log = 0;
    b.colormap = "viridis";
    b.extent_mode = ORR_EXTENT_HALF;
    b.half_width = 1.5;
    orr_render_view va, vb;
    memset(&va, 0, sizeof va);
    memset(&vb, 0, sizeof vb);
    for (int k = 0; k < 12; k++) {
        char pa[64], pb[64];
        snprintf(pa, sizeof pa, "%s/a_%02d.png", tag, k);
        snprintf(pb, sizeof pb, "%s/b.png", tag);
        const char *pth[2] = {tmp_path(pa), tmp_path(pb)};
        for (int j = 0; j < 2; j++) {
            orr_render_options *o = j ? &b : &a;
            orr_render_view *v = j ? &vb : &va;
            if (f)
                TU_OK(orr_frames_render(f, s, pth[j], o, v, &err), &err);
            else
                TU_OK(orr_render_sim(s, pth[j], o, v, &err), &err);
        }
        TU_OK(orr_sim_step(s, 1, NULL, &err), &err);
    }
    if (f) {
        TU_OK(orr_frames_flush(f, &err), &err);
        orr_frames_destroy(f);
    }
    orr_sim_destroy(s);
}

/* Frames written by worker threads are the bytes orr_render_sim writes,
 * and a writer on the caller's thread (0 threads) writes them too; with
 * one path written over and over, the last frame stays. */
static void test_frames_identical(void **state)
{
    (void)state;
    series("sync", -1, 0);
    series("w0", 0, 0);
    series("w2", 2, 0);
    series("w3d3", 3, 3);
    series("w1d4", 1, 4);
    const char *tags[] = {"w0", "w2", "w3d3", "w1d4"};
    for (int t = 0; t < 4; t++) {
        char x[64], y[64];
        for (int k = 0; k < 12; k++) {
            snprintf(x, sizeof x, "sync/a_%02d.png", k);
            snprintf(y, sizeof y, "%s/a_%02d.png", tags[t], k);
            assert_same_file(tmp_path(x), tmp_path(y));
        }
        snprintf(y, sizeof y, "%s/b.png", tags[t]);
        assert_same_file(tmp_path("sync/b.png"), tmp_path(y));
    }
    /* the frames differ from one another (the bodies moved) */
    size_t l0, l1;
    char *f0 = slurp(tmp_path("sync/a_00.png"), &l0), *f1 = slurp(tmp_path("sync/a_11.png"), &l1);
    assert_true(l0 != l1 || memcmp(f0, f1, l0) != 0);
    free(f0);
    free(f1);
}

/* A worker's failure comes back, naming the file, at the next render
 * (which then writes nothing) or flush, once; later ones are counted. */
static void test_frames_errors(void **state)
{
    (void)state;
    orr_sim *s = clump_and_sparse();
    orr_frames *f = NULL;
    orr_error err = {0};
    TU_OK(orr_frames_create(&f, 2, 0, &err), &err);
    assert_int_equal(orr_frames_threads(f), 2);
    orr_render_options o;
    orr_render_options_default(&o);
    o.width = o.height = 16;
    orr_render_view v;
    memset(&v, 0, sizeof v);
    /* a directory that cannot be made: its parent is a file */
    FILE *fp = fopen(tmp_path("plain"), "w");
    assert_non_null(fp);
    fclose(fp);
    TU_OK(orr_frames_render(f, s, tmp_path("plain/x.png"), &o, &v, &err), &err);
    assert_int_equal(orr_frames_flush(f, &err), ORR_ERR_IO);
    char want[1200];
    snprintf(want, sizeof want, "cannot write '%s': '%s' is not a directory (a frame written "
             "in the background)", tmp_path("plain/x.png"), tmp_path("plain"));
    assert_string_equal(err.msg, want);
    TU_OK(orr_frames_flush(f, &err), &err);   /* reported once */
    orr_frames_destroy(f);
    /* failed commits.  One slot: the next render waits for the frame
     * before, and reports its failure instead of rendering */
    TU_OK(orr_frames_create(&f, 1, 1, &err), &err);
    setenv("ORRERY_TEST_WRITE_FAIL", "1", 1);
    TU_OK(orr_frames_render(f, s, tmp_path("fail_0.png"), &o, &v, &err), &err);
    assert_int_equal(orr_frames_render(f, s, tmp_path("next.png"), &o, &v, &err), ORR_ERR_IO);
    snprintf(want, sizeof want, "cannot write '%s': simulated failure (ORRERY_TEST_WRITE_FAIL is "
             "set) (a frame written in the background)", tmp_path("fail_0.png"));
    assert_string_equal(err.msg, want);
    /* two more on two workers: the first queued reported, the other counted */
    orr_frames_destroy(f);
    TU_OK(orr_frames_create(&f, 2, 3, &err), &err);
    TU_OK(orr_frames_render(f, s, tmp_path("fail_1.png"), &o, &v, &err), &err);
    TU_OK(orr_frames_render(f, s, tmp_path("fail_2.png"), &o, &v, &err), &err);
    assert_int_equal(orr_frames_flush(f, &err), ORR_ERR_IO);
    unsetenv("ORRERY_TEST_WRITE_FAIL");
    snprintf(want, sizeof want, "cannot write '%s': simulated failure (ORRERY_TEST_WRITE_FAIL is "
             "set) (a frame written in the background; 1 later frame failed too)",
             tmp_path("fail_1.png"));
    assert_string_equal(err.msg, want);
    const char *none[] = {"fail_0.png", "fail_1.png", "fail_2.png", "next.png"};
    for (int k = 0; k < 4; k++)
        assert_int_equal(access(tmp_path(none[k]), F_OK), -1);
    TU_OK(orr_frames_render(f, s, tmp_path("ok.png"), &o, &v, &err), &err);
    TU_OK(orr_frames_flush(f, &err), &err);
    assert_int_equal(access(tmp_path("ok.png"), F_OK), 0);
    orr_frames_destroy(f);
    /* bad writers */
    assert_int_equal(orr_frames_create(&f, 17, 0, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "frames: threads must be 0..16 (got 17)");
    assert_int_equal(orr_frames_create(&f, 3, 2, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "frames: depth must be 3..64 (got 2)");
    orr_sim_destroy(s);
}

/* The temporaries left in the test directory's sub-directory sub (its
 * files named "*.tmp.*"), counted. */
static int temporaries(const char *sub)
{
    return tu_temporaries(tmp_path(sub));
}

/* Frames reported in queue order: a slow frame queued first and a fast
 * one after it both fail; the fast one fails first, yet the first frame's
 * failure is the one reported (by the next render or the flush), the
 * other counted, whatever the order they finished in. */
static void test_frames_error_order(void **state)
{
    (void)state;
    orr_sim *s = clump_and_sparse();
    orr_frames *f = NULL;
    orr_error err = {0};
    /* two workers, two slots: the third render waits for a slot, which the
     * fast frame frees while the slow one is still being written */
    TU_OK(orr_frames_create(&f, 2, 2, &err), &err);
    orr_render_options big, small;
    orr_render_options_default(&big);
    big.width = big.height = 4096;
    orr_render_options_default(&small);
    small.width = small.height = 8;
    orr_render_view vb, vs;
    memset(&vb, 0, sizeof vb);
    memset(&vs, 0, sizeof vs);
    setenv("ORRERY_TEST_WRITE_FAIL", "1", 1);
    TU_OK(orr_frames_render(f, s, tmp_path("order/slow.png"), &big, &vb, &err), &err);
    TU_OK(orr_frames_render(f, s, tmp_path("order/fast.png"), &small, &vs, &err), &err);
    orr_status st = orr_frames_render(f, s, tmp_path("order/third.png"), &small, &vs, &err);
    int third_queued = st == ORR_OK;
    if (st == ORR_OK)   /* not reported yet: the flush does */
        st = orr_frames_flush(f, &err);
    unsetenv("ORRERY_TEST_WRITE_FAIL");
    assert_int_equal(st, ORR_ERR_IO);
    char want[1200];
    snprintf(want, sizeof want, "cannot write '%s': simulated failure (ORRERY_TEST_WRITE_FAIL is "
             "set) (a frame written in the background; %d later frame%s failed too)",
             tmp_path("order/slow.png"), third_queued ? 2 : 1, third_queued ? "s" : "");
    assert_string_equal(err.msg, want);
    TU_OK(orr_frames_flush(f, &err), &err);   /* each reported once */
    orr_frames_destroy(f);
    assert_int_equal(temporaries("order"), 0);
    orr_sim_destroy(s);
}

/* 128 x 96 pixels of noise: a PNG far larger than a stdio buffer, so that
 * libpng itself meets the write's failure. */
static uint8_t *noise(int w, int h)
{
    uint8_t *rgb = malloc(3 * (size_t)w * (size_t)h);
    assert_non_null(rgb);
    uint64_t seed = 5;
    for (size_t k = 0; k < 3 * (size_t)w * (size_t)h; k++)
        rgb[k] = (uint8_t)(256 * tu_rand(&seed));
    return rgb;
}

/* A PNG that meets a full disk (ORRERY_TEST_DISK_FULL: the temporary's
 * writes go to /dev/full, ENOSPC) or the file size limit (RLIMIT_FSIZE:
 * EFBIG, the kernel's own) fails naming the file and the system's reason;
 * the frame before stays as it was and no temporary is left. */
static void test_png_disk_full(void **state)
{
    (void)state;
    const int w = 128, h = 96;
    uint8_t *rgb = noise(w, h);
    orr_error err = {0};
    const char *p = tmp_path("full/f_0003.png");
    TU_OK(orr_render_write_png(p, 16, 8, rgb, &err), &err);   /* the frame before */
    size_t len0;
    char *before = slurp(p, &len0);
    char want[700];

    setenv("ORRERY_TEST_DISK_FULL", "1", 1);
    orr_status st = orr_render_write_png(p, w, h, rgb, &err);
    unsetenv("ORRERY_TEST_DISK_FULL");
    assert_int_equal(st, ORR_ERR_IO);
    snprintf(want, sizeof want, "cannot write '%s': %s", p, strerror(ENOSPC));
    assert_string_equal(err.msg, want);
    assert_int_equal(temporaries("full"), 0);
    /* a small picture fails as well (its bytes meet the disk at the flush) */
    setenv("ORRERY_TEST_DISK_FULL", "1", 1);
    st = orr_render_write_png(p, 2, 2, rgb, &err);
    unsetenv("ORRERY_TEST_DISK_FULL");
    assert_int_equal(st, ORR_ERR_IO);
    assert_string_equal(err.msg, want);
    assert_int_equal(temporaries("full"), 0);

    /* the file size limit: a real write() failing part way */
    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 2000;
    void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    st = orr_render_write_png(p, w, h, rgb, &err);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, was);
    assert_int_equal(st, ORR_ERR_IO);
    snprintf(want, sizeof want, "cannot write '%s': %s", p, strerror(EFBIG));
    assert_string_equal(err.msg, want);
    assert_int_equal(temporaries("full"), 0);

    size_t len1;
    char *after = slurp(p, &len1);   /* the frame before, whole */
    assert_true(len0 == len1 && memcmp(before, after, len0) == 0);
    free(before);
    free(after);
    free(rgb);
}

int main(void)
{
    tu_private_cache();
    tu_temp_dir(dir, sizeof dir, "orrery-render");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_density),
        cmocka_unit_test(test_deposit_engine_cpu),
        cmocka_unit_test(test_density_sim),
        cmocka_unit_test(test_colormaps),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_png),
        cmocka_unit_test(test_view_fixed),
        cmocka_unit_test(test_png_atomic),
        cmocka_unit_test(test_frames_identical),
        cmocka_unit_test(test_frames_errors),
        cmocka_unit_test(test_frames_error_order),
        cmocka_unit_test(test_png_disk_full),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
