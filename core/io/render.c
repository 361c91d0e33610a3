/* render: surface-density pictures and PNG output (see render.h). */
#include "render.h"
#include "outfile.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PIXELS 16384

void orr_render_options_default(orr_render_options *o)
{
    memset(o, 0, sizeof *o);
    o->width = 1024;
    o->height = 1024;
    o->axis = ORR_AXIS_XY;
    o->extent_mode = ORR_EXTENT_AUTO;
    o->log = 1;
    o->colormap = "inferno";
}

/* ---- colour maps ------------------------------------------------------------ */

/* Each map is a few anchor colours at equal spacing, interpolated linearly:
 * close enough to the perceptual maps of the same names for pictures. */
typedef struct {
    const char *name;
    int count;
    unsigned char rgb[10][3];
} cmap;

static const cmap cmaps[] = {
    {"inferno", 8, {{0, 0, 4}, {40, 11, 84}, {101, 21, 110}, {159, 42, 99}, {212, 72, 66},
                    {245, 125, 21}, {250, 193, 39}, {252, 255, 164}}},
    {"viridis", 9, {{68, 1, 84}, {71, 44, 122}, {59, 81, 139}, {44, 113, 142}, {33, 144, 141},
                    {39, 173, 129}, {92, 200, 99}, {170, 220, 50}, {253, 231, 37}}},
    {"gray", 2, {{0, 0, 0}, {255, 255, 255}}},
};

static const cmap *find_cmap(const char *name)
{
    for (size_t k = 0; k < sizeof cmaps / sizeof cmaps[0]; k++)
        if (name && strcmp(cmaps[k].name, name) == 0)
            return &cmaps[k];
    return NULL;
}

static void cmap_color(const cmap *m, double t, uint8_t rgb[3])
{
    if (!(t > 0))
        t = 0;
    if (t > 1)
        t = 1;
    double x = t * (m->count - 1);
    int i = (int)x;
    if (i >= m->count - 1)
        i = m->count - 2;
    double f = x - i;
    for (int c = 0; c < 3; c++)
        rgb[c] = (uint8_t)lround(m->rgb[i][c] + f * (m->rgb[i + 1][c] - m->rgb[i][c]));
}

orr_status orr_render_colormap(const char *name, double t, uint8_t rgb[3], orr_error *err)
{
    const cmap *m = find_cmap(name);
    if (!m)
        return orr_fail(err, ORR_ERR_ARG,
                        "render: unknown colormap '%s' (expected inferno, viridis or gray)",
                        name ? name : "(null)");
    cmap_color(m, t, rgb);
    return ORR_OK;
}

/* ---- checks ------------------------------------------------------------------- */

orr_status orr_render_check(const orr_render_options *o, orr_error *err)
{
    if (o->width < 1 || o->width > MAX_PIXELS)
        return orr_fail(err, ORR_ERR_ARG, "render: width must be 1..%d (got %d)", MAX_PIXELS,
                        o->width);
    if (o->height < 1 || o->height > MAX_PIXELS)
        return orr_fail(err, ORR_ERR_ARG, "render: height must be 1..%d (got %d)", MAX_PIXELS,
                        o->height);
    if (o->axis != ORR_AXIS_XY && o->axis != ORR_AXIS_XZ && o->axis != ORR_AXIS_YZ)
        return orr_fail(err, ORR_ERR_ARG, "render: axis must be xy, xz or yz (got %d)",
                        (int)o->axis);
    if (o->extent_mode == ORR_EXTENT_HALF && !(o->half_width > 0 && isfinite(o->half_width)))
        return orr_fail(err, ORR_ERR_ARG, "render: extent must be a positive half-width (got %g)",
                        o->half_width);
    if (o->extent_mode == ORR_EXTENT_BOX) {
        for (int k = 0; k < 4; k++)
            if (!isfinite(o->box[k]))
                return orr_fail(err, ORR_ERR_ARG, "render: extent values must be finite");
        if (!(o->box[0] < o->box[1]) || !(o->box[2] < o->box[3]))
            return orr_fail(err, ORR_ERR_ARG,
                            "render: extent must be {xmin, xmax, ymin, ymax} with xmin < xmax "
                            "and ymin < ymax (got {%g, %g, %g, %g})",
                            o->box[0], o->box[1], o->box[2], o->box[3]);
    }
    if (o->extent_mode < ORR_EXTENT_AUTO || o->extent_mode > ORR_EXTENT_BOX)
        return orr_fail(err, ORR_ERR_ARG, "render: unknown extent mode %d", o->extent_mode);
    if (!find_cmap(o->colormap))
        return orr_fail(err, ORR_ERR_ARG,
                        "render: unknown colormap '%s' (expected inferno, viridis or gray)",
                        o->colormap ? o->colormap : "(null)");
    return ORR_OK;
}

/* ---- density ------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The first frame: the centre of mass in the plane and an extent that holds
 * 99% of the bodies with a margin, with the picture's aspect. */
static orr_status choose_view(long n, const double *pos, const orr_render_options *o,
                              orr_render_view *v, orr_error *err)
{
    const int ax = o->axis == ORR_AXIS_YZ ? 1 : 0, ay = o->axis == ORR_AXIS_XY ? 1 : 2;
    double mt = 0, c[2] = {0, 0}, u[2] = {0, 0};
    for (long i = 0; i < n; i++) {
        const double *p = pos + 4 * i;
        mt += p[3];
        c[0] += p[3] * p[ax];
        c[1] += p[3] * p[ay];
        u[0] += p[ax];
        u[1] += p[ay];
    }
    for (int k = 0; k < 2; k++)
        c[k] = mt > 0 ? c[k] / mt : n > 0 ? u[k] / n : 0;
    const double aspect = (double)o->width / o->height;
    double *d = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!d)
        return orr_fail(err, ORR_ERR_NOMEM, "render: out of memory");
    for (long i = 0; i < n; i++) {
        double dx = fabs(pos[4 * i + ax] - c[0]), dy = fabs(pos[4 * i + ay] - c[1]) * aspect;
        d[i] = dx > dy ? dx : dy;
    }
    double half = 0;
    if (n > 0) {
        qsort(d, (size_t)n, sizeof *d, cmp_double);
        half = 1.15 * d[(size_t)floor(0.99 * (double)(n - 1))];
    }
    free(d);
    if (!(half > 0) || !isfinite(half))
        half = 1;
    v->have_view = 1;
    v->axis = o->axis;
    v->centre[0] = c[0];
    v->centre[1] = c[1];
    v->extent[0] = c[0] - half;
    v->extent[1] = c[0] + half;
    v->extent[2] = c[1] - half / aspect;
    v->extent[3] = c[1] + half / aspect;
    return ORR_OK;
}

/* The extent of a frame (xmin, xmax, ymin, ymax) from the options and the
 * view (chosen already). */
static void frame_extent(const orr_render_options *o, const orr_render_view *view, double ext[4])
{
    if (o->extent_mode == ORR_EXTENT_BOX) {
        memcpy(ext, o->box, 4 * sizeof(double));
    } else if (o->extent_mode == ORR_EXTENT_HALF) {
        double hy = o->half_width * o->height / o->width;
        ext[0] = view->centre[0] - o->half_width;
        ext[1] = view->centre[0] + o->half_width;
        ext[2] = view->centre[1] - hy;
        ext[3] = view->centre[1] + hy;
    } else {
        memcpy(ext, view->extent, 4 * sizeof(double));
    }
}

/* The deposit of a frame over ext. */
static orr_deposit frame_deposit(const orr_render_options *o, const double ext[4])
{
    orr_deposit d;
    d.width = o->width;
    d.height = o->height;
    d.ax = o->axis == ORR_AXIS_YZ ? 1 : 0;
    d.ay = o->axis == ORR_AXIS_XY ? 1 : 2;
    memcpy(d.ext, ext, sizeof d.ext);
    return d;
}

/* Whether the deposit's extent is finite and not empty: a view chosen
 * from bodies that had blown up is not, and its frames are empty. */
static int usable(const orr_deposit *d)
{
    for (int k = 0; k < 4; k++)
        if (!isfinite(d->ext[k]))
            return 0;
    return d->ext[0] < d->ext[1] && d->ext[2] < d->ext[3];
}

/* The frame's extent (ext) and its deposit (*d); 0, with the grid zeroed,
 * when nothing can fall in it. */
static int frame_grid(const orr_render_options *o, const orr_render_view *view, double ext[4],
                      double *density, orr_deposit *d)
{
    frame_extent(o, view, ext);
    *d = frame_deposit(o, ext);
    if (usable(d))
        return 1;
    memset(density, 0, sizeof(double) * (size_t)o->width * (size_t)o->height);
    return 0;
}

orr_status orr_render_density(long n, const double *pos, const orr_render_options *o,
                              orr_render_view *view, double *density, double ext[4],
                              orr_error *err)
{
    orr_status st = orr_render_check(o, err);
    if (st)
        return st;
    if (!view->have_view || view->axis != (int)o->axis) {
        st = choose_view(n, pos, o, view, err);
        if (st)
            return st;
    }
    orr_deposit d;
    return frame_grid(o, view, ext, density, &d) ? orr_deposit_host(&d, n, pos, density, err)
                                                  : ORR_OK;
}

orr_status orr_render_density_sim(orr_sim *s, const orr_render_options *o,
                                  orr_render_view *view, double *density, double ext[4],
                                  orr_error *err)
{
    orr_status st = orr_render_check(o, err);
    if (st)
        return st;
    const long n = orr_sim_n(s);
    if (!view->have_view || view->axis != (int)o->axis) {   /* the bodies, once */
        double *pos = malloc(sizeof(double) * 4 * (size_t)n);
        if (!pos)
            return orr_fail(err, ORR_ERR_NOMEM, "render: out of memory");
        st = orr_sim_copy_pos(s, pos, err);
        if (!st)
            st = choose_view(n, pos, o, view, err);
        free(pos);
        if (st)
            return st;
    }
    orr_deposit d;
    return frame_grid(o, view, ext, density, &d) ? orr_sim_deposit(s, &d, density, err) : ORR_OK;
}

/* ---- colour -------------------------------------------------------------------- */

/* The first frame with mass in view fixes the range: log: three decades
 * down from the densest pixel; linear: 0 to the densest. */
static void choose_range(const double *density, size_t npix, int log_scale, orr_render_view *v)
{
    double vmax = 0;
    for (size_t k = 0; k < npix; k++)
        if (density[k] > vmax)
            vmax = density[k];
    if (!(vmax > 0) || !isfinite(vmax))
        return;   /* nothing in view: choose on a later frame */
    v->have_range = 1;
    v->range_log = log_scale;
    v->range[0] = log_scale ? vmax * 1e-3 : 0;
    v->range[1] = vmax;
}

void orr_render_choose_range(const double *density, const orr_render_options *o,
                             orr_render_view *view)
{
    if (!view->have_range || view->range_log != o->log) {
        view->have_range = 0;
        choose_range(density, (size_t)o->width * (size_t)o->height, o->log, view);
    }
}

orr_status orr_render_colorize(const double *density, const orr_render_options *o,
                               orr_render_view *view, uint8_t *rgb, orr_error *err)
{
    orr_status st = orr_render_check(o, err);
    if (st)
        return st;
    const cmap *m = find_cmap(o->colormap);
    const size_t npix = (size_t)o->width * (size_t)o->height;
    orr_render_choose_range(density, o, view);
    uint8_t lut[256][3];
    for (int k = 0; k < 256; k++)
        cmap_color(m, k / 255.0, lut[k]);
    double lo = view->range[0], hi = view->range[1];
    double l0 = lo > 0 ? log10(lo) : 0, lspan = hi > lo && lo > 0 ? log10(hi) - l0 : 1;
    for (size_t k = 0; k < npix; k++) {
        double d = density[k], t = 0;
        if (view->have_range && d > 0)
            t = o->log ? (log10(d) - l0) / lspan : (d - lo) / (hi - lo);
        int idx = t > 0 ? (t < 1 ? (int)lround(t * 255) : 255) : 0;
        memcpy(rgb + 3 * k, lut[idx], 3);
    }
    return ORR_OK;
}

/* ---- output -------------------------------------------------------------------- */

/* libpng's output goes to the temporary file's stream (outfile.h), and a
 * write that fails keeps the file's name and the system's reason (a full
 * disk: "cannot write 'f.png': No space left on device") where libpng
 * would say only "Write Error".  libpng reports through these hooks,
 * never on stderr. */
typedef struct {
    FILE *fp;
    const char *path;
    orr_error *err;    /* the caller's: the write's failure */
    int failed;        /* a write failed (err set) */
    char why[128];     /* libpng's own message */
} png_out;

static void png_put(png_structp png, png_bytep data, size_t len)
{
    png_out *o = png_get_io_ptr(png);
    errno = 0;
    if (fwrite(data, 1, len, o->fp) != len) {
        int e = errno ? errno : EIO;
        orr_fail(o->err, ORR_ERR_IO, "cannot write '%s': %s", o->path, strerror(e));
        o->failed = 1;
        png_error(png, "write failed");
    }
}

static void png_noflush(png_structp png)
{
    (void)png;   /* commit flushes */
}

static void png_fail(png_structp png, png_const_charp msg)
{
    png_out *o = png_get_error_ptr(png);
    snprintf(o->why, sizeof o->why, "%s", msg);
    png_longjmp(png, 1);
}

static void png_warn(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

/* The PNG stream of rgb into png: what png_image_write gives an 8-bit RGB
 * picture (the sRGB chunk, no interlace, libpng's default compression).
 * 0 when libpng failed (longjmp from png_fail); nothing here outlives it. */
static int png_encode(png_structp png, png_infop info, int width, int height,
                      const uint8_t *rgb)
{
    if (setjmp(png_jmpbuf(png)))
        return 0;
    png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
    png_set_sRGB(png, info, PNG_sRGB_INTENT_PERCEPTUAL);
    png_write_info(png, info);
    for (int y = 0; y < height; y++)
        png_write_row(png, rgb + 3 * (size_t)width * (size_t)y);
    png_write_end(png, info);
    return 1;
}

orr_status orr_render_write_png(const char *path, int width, int height, const uint8_t *rgb,
                                orr_error *err)
{
    orr_outfile f;
    FILE *fp = NULL;
    orr_status st = orr_outfile_begin_stream(&f, path, 0, &fp, err);
    if (st)
        return st;
    png_out out = {fp, path, err, 0, ""};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &out, png_fail, png_warn);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    const int made = info != NULL;
    int ok = 0;
    if (made) {
        png_set_write_fn(png, &out, png_put, png_noflush);
        ok = png_encode(png, info, width, height, rgb);
    }
    png_destroy_write_struct(&png, &info);   /* either may be NULL */
    if (!ok) {
        orr_outfile_abort(&f);
        if (out.failed)   /* err names the file and the system's reason */
            return ORR_ERR_IO;
        if (!made)
            return orr_fail(err, ORR_ERR_NOMEM, "cannot write '%s': out of memory", path);
        return orr_fail(err, ORR_ERR_IO, "cannot write '%s': libpng: %s", path, out.why);
    }
    return orr_outfile_commit(&f, err);
}

orr_status orr_render_sim(orr_sim *s, const char *path, const orr_render_options *o,
                          orr_render_view *view, orr_error *err)
{
    orr_status st = orr_render_check(o, err);
    if (st)
        return st;
    const size_t npix = (size_t)o->width * (size_t)o->height;
    double *density = malloc(sizeof(double) * npix);
    uint8_t *rgb = malloc(3 * npix);
    double ext[4];
    if (!density || !rgb) {
        free(density);
        free(rgb);
        return orr_fail(err, ORR_ERR_NOMEM, "render: out of memory for %dx%d pixels", o->width,
                        o->height);
    }
    st = orr_render_density_sim(s, o, view, density, ext, err);
    if (!st)
        st = orr_render_colorize(density, o, view, rgb, err);
    if (!st)
        st = orr_render_write_png(path, o->width, o->height, rgb, err);
    free(density);
    free(rgb);
    return st;
}
