/* render: pictures of the bodies.  The projected surface density (mass per
 * unit area) on a width x height grid, deposited with cloud-in-cell weights
 * (by the engine, where the bodies are: engine.h, orr_engine_deposit),
 * coloured through a colour map ("inferno", "viridis", "gray") on a
 * logarithmic or linear scale, written as an 8-bit RGB PNG with libpng,
 * atomically (see outfile.h).  What a series of frames must share, the
 * extent of the picture and the colour range, is chosen on the first frame
 * when not given and kept in an orr_render_view that the caller holds
 * between frames (the Lua layer keeps one per simulation). */
#ifndef ORR_RENDER_H
#define ORR_RENDER_H

#include <stdint.h>
#include "sim.h"

typedef enum { ORR_AXIS_XY = 0, ORR_AXIS_XZ = 1, ORR_AXIS_YZ = 2 } orr_render_axis;

enum {
    ORR_EXTENT_AUTO = 0,   /* the view's; chosen from the bodies on the first frame */
    ORR_EXTENT_HALF = 1,   /* half_width around the view's centre */
    ORR_EXTENT_BOX = 2     /* box = xmin, xmax, ymin, ymax */
};

typedef struct {
    int width, height;       /* pixels, 1..16384 (1024 x 1024) */
    orr_render_axis axis;    /* projection plane: horizontal, vertical axis (ORR_AXIS_XY) */
    int extent_mode;         /* ORR_EXTENT_* (ORR_EXTENT_AUTO) */
    double half_width;       /* ORR_EXTENT_HALF: half the picture's width; the height
                                follows from the pixel aspect */
    double box[4];           /* ORR_EXTENT_BOX: xmin, xmax, ymin, ymax of the plane */
    int log;                 /* logarithmic colour scale (1) */
    const char *colormap;    /* "inferno", "viridis" or "gray" ("inferno") */
} orr_render_options;

/* What the frames of one series share; zero it before the first frame. */
typedef struct {
    int have_view;           /* centre and extent chosen (on the first frame) */
    int axis;                /* the plane they were chosen for */
    double centre[2];        /* centre of mass in the plane on the first frame */
    double extent[4];        /* xmin, xmax, ymin, ymax used by ORR_EXTENT_AUTO */
    int have_range;          /* colour range chosen (first frame with mass in view) */
    int range_log;           /* the scale it was chosen for */
    double range[2];         /* surface densities at the ends of the colour map */
} orr_render_view;

void orr_render_options_default(orr_render_options *o);

/* Checks the options; messages name the option ("render: width must be
 * 1..16384 (got 0)"). */
orr_status orr_render_check(const orr_render_options *o, orr_error *err);

/* The surface density of the n bodies at pos[4n] (x y z m) on o's grid:
 * density[height * width], row 0 at the top (largest vertical coordinate).
 * Fills the view on first use and the extent used into ext[4]. */
orr_status orr_render_density(long n, const double *pos, const orr_render_options *o,
                              orr_render_view *view, double *density, double ext[4],
                              orr_error *err);

/* The same for the bodies of s, deposited where they are (sim.h:
 * orr_sim_deposit; with CUDA on the GPU, and only the grid is copied to the
 * host): the bits of orr_render_density on the CPU backend, a relative
 * 1e-16 or so per body in a pixel on the GPU.  The first frame of a view
 * reads the bodies once to choose it.  No exchange between ranks. */
orr_status orr_render_density_sim(orr_sim *s, const orr_render_options *o,
                                  orr_render_view *view, double *density, double ext[4],
                                  orr_error *err);

/* Chooses the view's colour range from density when it has none for o's
 * scale (the first frame with mass in view fixes it): what
 * orr_render_colorize does first, so that a caller can fix the range of a
 * series on its own thread and colour the frames elsewhere. */
void orr_render_choose_range(const double *density, const orr_render_options *o,
                             orr_render_view *view);

/* Colours density (as above) into rgb[3 * width * height] with the view's
 * range, choosing the range first when the view has none for this scale. */
orr_status orr_render_colorize(const double *density, const orr_render_options *o,
                               orr_render_view *view, uint8_t *rgb, orr_error *err);

/* The colour of t in [0, 1] in the named map (rgb[3]); ORR_ERR_ARG for an
 * unknown name. */
orr_status orr_render_colormap(const char *name, double t, uint8_t rgb[3], orr_error *err);

/* Writes an 8-bit RGB image (rows top to bottom) as a PNG, atomically: a
 * failed write leaves no temporary file and the old file as it was, and
 * names the file and the system's reason ("cannot write 'f.png': No space
 * left on device"). */
orr_status orr_render_write_png(const char *path, int width, int height, const uint8_t *rgb,
                                orr_error *err);

/* All of the above for the bodies of s (orr_render_density_sim): renders
 * and writes path on the caller's thread (frames.h writes in the
 * background). */
orr_status orr_render_sim(orr_sim *s, const char *path, const orr_render_options *o,
                          orr_render_view *view, orr_error *err);

#endif
