/* movie: a series of 8-bit RGB pictures as an MP4 file (H.264), through
 * FFmpeg's libraries: libswscale turns each picture into YUV 4:2:0
 * (BT.709, limited range, tagged so in the stream), libavcodec's libx264
 * encoder compresses it at a constant quality (CRF), libavformat muxes the
 * packets into MP4 with the index at the front (faststart, so a player
 * can start before it has the whole file).  Pictures are appended in
 * order, each shown 1/fps seconds; the file is written like every other
 * output (outfile.h): into a temporary file renamed over the target when
 * the movie is finished, so a failed or abandoned movie leaves no partial
 * file and the old one as it was.  One thread at a time per movie (the
 * frame writer, frames.h, appends on its worker threads).  Errors name
 * the file ("cannot write 'out.mp4': ..."); FFmpeg's own log never
 * reaches stderr (its last error goes into the message instead).  Also
 * the command line's job: a movie from a numbered series of PNG files. */
#ifndef ORR_MOVIE_H
#define ORR_MOVIE_H

#include <stdint.h>
#include "err.h"

typedef struct orr_movie orr_movie;

typedef struct {
    double fps;   /* pictures per second, ORR_MOVIE_MIN_FPS..ORR_MOVIE_MAX_FPS (30) */
    int crf;      /* libx264's constant rate factor, 0 (lossless) .. 51; lower is better
                     and larger (20) */
} orr_movie_options;

/* The frame rates a movie takes: a frame lasts 1/fps, at most 100 s (the
 * time base 1/fps is a fraction with a denominator of at most 100000, and
 * slower rates make durations libavformat refuses) and at least 1 ms. */
#define ORR_MOVIE_MIN_FPS 0.01
#define ORR_MOVIE_MAX_FPS 1000

void orr_movie_options_default(orr_movie_options *o);

/* Checks what a movie of width x height pictures into path needs: o in
 * range, an even width and height of 2..16384 (4:2:0 halves both) and an
 * H.264 encoder (libx264) in the libavcodec at hand.  Messages name the
 * file: "cannot write 'out.mp4': H.264 needs an even width and height
 * (got 801x600)". */
orr_status orr_movie_check(const char *path, int width, int height, const orr_movie_options *o,
                           orr_error *err);

/* Starts a movie into path (its temporary file made now, its parent
 * directories created); *out is freed by orr_movie_finish or
 * orr_movie_abort. */
orr_status orr_movie_open(orr_movie **out, const char *path, int width, int height,
                          const orr_movie_options *o, orr_error *err);

/* Appends one picture, rgb[3 * width * height] (rows top to bottom).  The
 * encoder keeps a few pictures back (lookahead): they reach the file when
 * the movie is finished.  After a failure the movie can only be aborted. */
orr_status orr_movie_add(orr_movie *m, const uint8_t *rgb, orr_error *err);

/* Pictures appended so far. */
long orr_movie_frames(const orr_movie *m);

/* Encodes the pictures held back, writes the index and puts the file in
 * place (fsync, rename); frees m either way (a failure leaves no file). */
orr_status orr_movie_finish(orr_movie *m, orr_error *err);

/* Drops the movie: the temporary file removed, the target untouched;
 * frees m (NULL is fine). */
void orr_movie_abort(orr_movie *m);

/* The command line's `orrery movie`: the PNG files pattern names (one
 * integer conversion, as frame paths have: "frames/f_%04d.png"), from
 * number start (-1: the first of 0 and 1 that exists) up to the first
 * number missing, as a movie into out.  Every picture must have the first
 * one's size.  *frames, *width and *height (any may be NULL) tell what was
 * written.  Errors name the file: "cannot read 'frames/f_0000.png': No
 * such file or directory", "'frames/f_0007.png' is 640x480 but the first
 * frame 'frames/f_0000.png' is 800x600 (every frame of a movie has one
 * size)". */
orr_status orr_movie_from_pngs(const char *out, const char *pattern, long start,
                               const orr_movie_options *o, long *frames, int *width,
                               int *height, orr_error *err);

#endif
