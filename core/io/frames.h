/* frames: PNG frames and movies written off the caller's thread.  A frame's density is
 * deposited on the caller's thread, where the bodies are (render.h:
 * orr_render_density_sim, on the GPU for the CUDA backend), and the
 * series' colour range fixed there; the colour mapping, the PNG encoding
 * and the atomic write (outfile.h) run on worker threads.  At most `depth`
 * frames are in flight (queued or being written): with all of them taken
 * the caller waits for one to finish, so no frame is ever dropped.  The
 * bytes written are orr_render_sim's (the same functions on the same
 * values), and frames for one path reach it in the order they were queued.
 *
 * A worker's failure (a full disk, a directory that cannot be made) is
 * kept, the message naming the file and the system's reason.  Failures
 * are returned in queue order, each once: the first frame by queue order
 * that failed, with a count of the later ones that failed by then, and
 * only once every frame queued before it is done (one of those may fail
 * too and then comes first).  orr_frames_flush returns it always; an
 * orr_frames_render that finds it so settled returns it instead of
 * rendering, and one that finds earlier frames still in flight renders
 * and leaves it for a later call.  With 0 threads the writer works on the
 * caller's thread: each frame is on disk, or its failure returned, when
 * orr_frames_render returns.  One caller thread at a time.
 *
 * Frames in flight live in the workers: a process that exits (exit(),
 * returning from main) while frames are still queued or being written
 * loses them and leaves their temporary files (outfile.h; the next write
 * of the same path removes them).  Flush first; the Lua layer does at the
 * end of a script and at os.exit.
 *
 * Movies (movie.h): a frame may go to a movie (an MP4 file) as well as or
 * instead of a PNG.  Everything above holds for a movie's frames: they are
 * appended in queue order (one at a time: colouring, conversion to YUV and
 * H.264 encoding on a worker), never dropped, and a failure is reported
 * in queue order, once.  What a frame can be told at once is checked on
 * the caller's thread: the movie's first frame checks its size (even),
 * options and encoder; every later frame must have the first one's size
 * and options (an error naming the frame).  The movie's file is made by
 * its first frame (on a worker) and finished (the encoder's delayed
 * frames, the index, the file put in place) by orr_frames_flush, after
 * its frames; a finished movie refuses more frames.  A frame of a movie
 * that failed fails too; after a flush the path starts a new movie. */
#ifndef ORR_FRAMES_H
#define ORR_FRAMES_H

#include "movie.h"
#include "render.h"

typedef struct orr_frames orr_frames;

/* A writer with `threads` workers (0..16; 0: none) and at most `depth`
 * frames in flight (at least 1 and at least threads; 0: threads + 1). */
orr_status orr_frames_create(orr_frames **out, int threads, int depth, orr_error *err);

/* Flushes, movies finished (a failure not reported yet is lost: flush
 * first to see it), stops the workers and frees f (NULL is fine). */
void orr_frames_destroy(orr_frames *f);

/* Renders the bodies of s into path as orr_render_sim does, the view
 * updated here: deposits now, then queues the rest (waiting while every
 * slot is taken).  An earlier frame's failure comes first once it is
 * settled (every frame queued before it done): it is returned (and
 * forgotten) and this frame is not rendered. */
orr_status orr_frames_render(orr_frames *f, orr_sim *s, const char *path,
                             const orr_render_options *o, orr_render_view *view, orr_error *err);

/* orr_frames_render for a PNG at path (NULL: none) and a frame of the
 * movie at movie (NULL: none; mo NULL: the default options), at least one
 * of them.  A frame the movie cannot take (another size, other options,
 * a finished movie, an odd size) is an ORR_ERR_ARG naming the movie and
 * the frame, and nothing is rendered. */
orr_status orr_frames_render_to(orr_frames *f, orr_sim *s, const char *path, const char *movie,
                                const orr_movie_options *mo, const orr_render_options *o,
                                orr_render_view *view, orr_error *err);

/* Waits until every frame queued is on disk (or in its movie) or failed,
 * and finishes every open movie; returns the first failure by queue order
 * not reported yet (and forgets it), with the count of the later ones (a
 * movie that cannot be finished comes after every frame). */
orr_status orr_frames_flush(orr_frames *f, orr_error *err);

/* orr_frames_flush but for finishing the movies: they stay open for more
 * frames. */
orr_status orr_frames_wait(orr_frames *f, orr_error *err);

/* How many movies are open (have frames and are not finished nor failed). */
int orr_frames_movies_open(orr_frames *f);

/* The writer's workers (0: it writes on the caller's thread). */
int orr_frames_threads(const orr_frames *f);

#endif
