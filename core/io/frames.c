/* frames: PNG frames and movies written by worker threads (see frames.h).
 * A writer is a ring of slots, each one frame: its density, its RGB
 * picture and what colouring and writing it need (the PNG's path and the
 * movie it goes to, the options, the view with its range fixed).  A slot
 * is free, filled by the caller, queued, or busy on a worker; one mutex
 * guards the states and one condition variable says that one changed.  A
 * worker takes the oldest queued frame whose PNG or movie no busy worker
 * is writing, so frames for one path are committed in queue order and the
 * last one queued is the one that stays, and a movie's frames are encoded
 * one at a time, in order.  A movie is a record the writer keeps until it
 * is destroyed: open (its encoder made on a worker by its first frame),
 * failed (its later frames fail too) or finished (by a flush). */
#include "frames.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 16

enum { FREE, FILLING, QUEUED, BUSY };
enum { MOVIE_OPEN, MOVIE_FAILED, MOVIE_FINISHED };

/* A movie frames go to.  Its encoder is a worker's while a frame of it is
 * busy (one at a time), the flush's once every frame is done. */
typedef struct movie_rec {
    char *path;                /* heap */
    int state;                 /* MOVIE_*; changed under the lock */
    orr_movie *m;              /* the encoder, from the first frame written; NULL after */
    int width, height;         /* its first frame's */
    orr_movie_options o;       /* its first frame's */
    long queued;               /* frames given to it */
    char *why;                 /* the failure that ended it (heap), for its later frames */
    long why_frame;            /* which frame (1-based) failed */
    int flushed;               /* a flush came after it ended */
    struct movie_rec *next;
} movie_rec;

typedef struct {
    int state;
    unsigned long long seq;    /* queue order */
    char *path;                /* the PNG (heap), or NULL */
    movie_rec *movie;          /* the movie it goes to, or NULL */
    long movie_frame;          /* its number in the movie (1-based) */
    orr_render_options o;      /* colormap points at cmap */
    char cmap[32];
    orr_render_view view;      /* the series' view as queued: its range fixed */
    double *density;           /* cap pixels */
    uint8_t *rgb;              /* 3 cap bytes */
    size_t cap;
} slot;

struct orr_frames {
    pthread_mutex_t mu;
    pthread_cond_t changed;    /* a slot changed state, or stop */
    pthread_t threads[MAX_THREADS];
    int nthreads;
    int depth;
    slot *slots;
    unsigned long long next_seq;
    int stop;
    orr_error failed;          /* the first failure by queue order, not yet reported */
    unsigned long long failed_seq;
    long failed_more;          /* later failures, not yet reported */
    movie_rec *movies;         /* every movie given frames, newest first */
};

/* Ends the slot's movie after its frame failed (err, st): its file
 * dropped, the reason kept for its later frames (without "cannot write
 * 'PATH': ", which their messages say). */
static void end_movie(slot *sl, const orr_error *err, orr_status st)
{
    movie_rec *mv = sl->movie;
    orr_movie_abort(mv->m);
    mv->m = NULL;
    const char *why = err && err->msg[0] ? err->msg : orr_status_name(st);
    char head[64];
    snprintf(head, sizeof head, "cannot write '");
    size_t len = strlen(head), plen = strlen(mv->path);
    if (strncmp(why, head, len) == 0 && strncmp(why + len, mv->path, plen) == 0 &&
        strncmp(why + len + plen, "': ", 3) == 0)
        why += len + plen + 3;
    mv->why = strdup(why);
    mv->why_frame = sl->movie_frame;
}

/* Appends the slot's picture to its movie: the movie opened first by its
 * first frame; a failure ends it (its temporary file removed) and fails
 * its later frames.  The worker holding the slot is the movie's alone. */
static orr_status add_to_movie(slot *sl, orr_error *err)
{
    movie_rec *mv = sl->movie;
    if (mv->why)
        return orr_fail(err, ORR_ERR_IO, "cannot write '%s': frame %ld not added: the movie "
                        "failed at frame %ld (%s)", mv->path, sl->movie_frame, mv->why_frame,
                        mv->why);
    orr_status st = ORR_OK;
    if (!mv->m)
        st = orr_movie_open(&mv->m, mv->path, sl->o.width, sl->o.height, &mv->o, err);
    if (!st)
        st = orr_movie_add(mv->m, sl->rgb, err);
    if (st)
        end_movie(sl, err, st);
    return st;
}

/* Colours and writes a slot's frame: what orr_render_sim does after the
 * deposit. */
static orr_status write_slot(slot *sl, orr_error *err)
{
    orr_status st = orr_render_colorize(sl->density, &sl->o, &sl->view, sl->rgb, err);
    if (st && sl->movie && !sl->movie->why)   /* its frame is missing: the movie ends */
        end_movie(sl, err, st);
    if (st)
        return st;
    if (sl->path)
        st = orr_render_write_png(sl->path, sl->o.width, sl->o.height, sl->rgb, err);
    if (sl->movie) {   /* the movie takes the frame even when its PNG failed */
        orr_error me = {0};
        orr_status mst = add_to_movie(sl, st ? &me : err);
        if (st && mst && err) {   /* both failed: one failure of this frame, saying both */
            size_t len = strlen(err->msg);
            snprintf(err->msg + len, sizeof err->msg - len, "; and %s", me.msg);
        }
        orr_error_clear(&me);
        if (!st)
            st = mst;
    }
    return st;
}

/* Whether two slots write the same file (a PNG or a movie). */
static int clash(const slot *a, const slot *b)
{
    return (a->path && b->path && strcmp(a->path, b->path) == 0) ||
           (a->movie && a->movie == b->movie);
}

/* The oldest queued slot whose path no busy slot has, or NULL.  Locked. */
static slot *next_job(orr_frames *f)
{
    slot *best = NULL;
    for (int k = 0; k < f->depth; k++) {
        slot *q = &f->slots[k];
        if (q->state != QUEUED || (best && best->seq < q->seq))
            continue;
        int busy = 0;
        for (int j = 0; j < f->depth && !busy; j++)
            busy = f->slots[j].state == BUSY && clash(&f->slots[j], q);
        if (!busy)
            best = q;
    }
    return best;
}

/* Keeps a failure: the first by queue order is reported, the others
 * counted.  Locked. */
static void keep_failure(orr_frames *f, unsigned long long seq, orr_error *e)
{
    if (f->failed.code == ORR_OK || seq < f->failed_seq) {
        if (f->failed.code != ORR_OK)
            f->failed_more++;
        orr_error_clear(&f->failed);
        f->failed = *e;   /* its log moves along */
        f->failed_seq = seq;
        memset(e, 0, sizeof *e);
    } else {
        f->failed_more++;
        orr_error_clear(e);
    }
}

static void *worker(void *arg)
{
    orr_frames *f = arg;
    pthread_mutex_lock(&f->mu);
    for (;;) {
        slot *sl = next_job(f);
        if (!sl) {
            int queued = 0;
            for (int k = 0; k < f->depth; k++)
                queued |= f->slots[k].state == QUEUED;
            if (f->stop && !queued)
                break;
            pthread_cond_wait(&f->changed, &f->mu);
            continue;
        }
        sl->state = BUSY;
        pthread_mutex_unlock(&f->mu);
        orr_error e = {0};
        orr_status st = write_slot(sl, &e);
        pthread_mutex_lock(&f->mu);
        if (st)
            keep_failure(f, sl->seq, &e);
        if (sl->movie && sl->movie->why)
            sl->movie->state = MOVIE_FAILED;
        sl->state = FREE;
        pthread_cond_broadcast(&f->changed);
    }
    pthread_mutex_unlock(&f->mu);
    return NULL;
}

/* Whether the failure kept is the first by queue order for good: no frame
 * queued before it is still queued or being written (one of those may
 * fail too, and it would come first).  Locked. */
static int failure_settled(const orr_frames *f)
{
    for (int k = 0; k < f->depth; k++) {
        const slot *q = &f->slots[k];
        if ((q->state == QUEUED || q->state == BUSY) && q->seq < f->failed_seq)
            return 0;
    }
    return 1;
}

/* The failure kept, into err (and forgotten), once it is settled; ORR_OK
 * while there is none or frames queued before it are still in flight.
 * Locked. */
static orr_status take_failure(orr_frames *f, orr_error *err)
{
    if (f->failed.code == ORR_OK || !failure_settled(f))
        return ORR_OK;
    orr_status st = f->failed.code;
    char *msg = f->failed.msg;
    size_t len = strlen(msg);
    if (f->failed_more)
        snprintf(msg + len, sizeof f->failed.msg - len, " (a frame written in the background; "
                 "%ld later frame%s failed too)", f->failed_more, f->failed_more == 1 ? "" : "s");
    else
        snprintf(msg + len, sizeof f->failed.msg - len, " (a frame written in the background)");
    if (err) {
        orr_error_clear(err);
        *err = f->failed;
    } else {
        orr_error_clear(&f->failed);
    }
    memset(&f->failed, 0, sizeof f->failed);
    f->failed_more = 0;
    return st;
}

orr_status orr_frames_create(orr_frames **out, int threads, int depth, orr_error *err)
{
    *out = NULL;
    if (threads < 0 || threads > MAX_THREADS)
        return orr_fail(err, ORR_ERR_ARG, "frames: threads must be 0..%d (got %d)", MAX_THREADS,
                        threads);
    if (depth == 0)
        depth = threads + 1;
    if (depth < 1 || depth < threads || depth > 64)
        return orr_fail(err, ORR_ERR_ARG, "frames: depth must be %d..64 (got %d)",
                        threads > 1 ? threads : 1, depth);
    orr_frames *f = calloc(1, sizeof *f);
    slot *slots = calloc((size_t)depth, sizeof *slots);
    if (!f || !slots) {
        free(f);
        free(slots);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    f->slots = slots;
    f->depth = depth;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->changed, NULL);
    for (int k = 0; k < threads; k++) {
        int rc = pthread_create(&f->threads[k], NULL, worker, f);
        if (rc) {
            orr_frames_destroy(f);
            return orr_fail(err, ORR_ERR_NOMEM, "frames: cannot start a writer thread: %s",
                            strerror(rc));
        }
        f->nthreads++;
    }
    *out = f;
    return ORR_OK;
}

void orr_frames_destroy(orr_frames *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->mu);
    f->stop = 1;
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->mu);
    for (int k = 0; k < f->nthreads; k++)   /* they write what is queued first */
        pthread_join(f->threads[k], NULL);
    for (movie_rec *mv = f->movies, *next; mv; mv = next) {
        next = mv->next;
        if (mv->m)   /* finished: its failure, if any, is lost (flush first) */
            orr_movie_finish(mv->m, NULL);
        free(mv->path);
        free(mv->why);
        free(mv);
    }
    for (int k = 0; k < f->depth; k++) {
        free(f->slots[k].path);
        free(f->slots[k].density);
        free(f->slots[k].rgb);
    }
    orr_error_clear(&f->failed);
    pthread_cond_destroy(&f->changed);
    pthread_mutex_destroy(&f->mu);
    free(f->slots);
    free(f);
}

int orr_frames_threads(const orr_frames *f)
{
    return f->nthreads;
}

/* Room in sl for npix pixels (its old frame's buffers dropped). */
static orr_status fit(slot *sl, size_t npix, int w, int h, orr_error *err)
{
    if (sl->cap >= npix)
        return ORR_OK;
    free(sl->density);
    free(sl->rgb);
    sl->density = malloc(sizeof(double) * npix);
    sl->rgb = malloc(3 * npix);
    sl->cap = sl->density && sl->rgb ? npix : 0;
    if (!sl->cap) {
        free(sl->density);
        free(sl->rgb);
        sl->density = NULL;
        sl->rgb = NULL;
        return orr_fail(err, ORR_ERR_NOMEM, "render: out of memory for %dx%d pixels", w, h);
    }
    return ORR_OK;
}

/* The movie at path that takes frames now (the newest record of it), or
 * NULL.  Locked. */
static movie_rec *find_movie(orr_frames *f, const char *path)
{
    for (movie_rec *mv = f->movies; mv; mv = mv->next)
        if (strcmp(mv->path, path) == 0)
            return mv;
    return NULL;
}

/* The movie at path for one more frame of o's size with options mo,
 * checked here on the caller's thread: a new record for a new movie (or
 * one that failed and was flushed), the open one after checking that the
 * frame has its first frame's size and options.  Locked. */
static orr_status movie_for(orr_frames *f, const char *path, const orr_movie_options *mo,
                            const orr_render_options *o, movie_rec **out, orr_error *err)
{
    movie_rec *mv = find_movie(f, path);
    if (mv && mv->state == MOVIE_FINISHED)
        return orr_fail(err, ORR_ERR_ARG, "cannot add a frame to '%s': the movie was finished "
                        "(by a flush) with %ld frame%s; a finished movie takes no more (give "
                        "another path)", path, mv->queued, mv->queued == 1 ? "" : "s");
    if (mv && mv->state == MOVIE_FAILED && mv->flushed)
        mv = NULL;   /* its failure reported by a flush: the path starts a new movie */
    orr_status st;
    if (mv && mv->state == MOVIE_OPEN && mv->queued == 0) {   /* its first frame never came */
        if ((st = orr_movie_check(path, o->width, o->height, mo, err)) != ORR_OK)
            return st;
        mv->width = o->width;
        mv->height = o->height;
        mv->o = *mo;
        *out = mv;
        return ORR_OK;
    }
    if (mv) {   /* open, or failed (this frame then fails too, after the failure) */
        if (o->width != mv->width || o->height != mv->height)
            return orr_fail(err, ORR_ERR_ARG, "cannot add frame %ld to '%s': it is %dx%d but "
                            "the movie's frames are %dx%d (every frame of a movie has its "
                            "first frame's size)", mv->queued + 1, path, o->width, o->height,
                            mv->width, mv->height);
        if (mo->fps != mv->o.fps)
            return orr_fail(err, ORR_ERR_ARG, "cannot add frame %ld to '%s': fps %g differs from "
                            "the movie's (%g, its first frame's)", mv->queued + 1, path, mo->fps,
                            mv->o.fps);
        if (mo->crf != mv->o.crf)
            return orr_fail(err, ORR_ERR_ARG, "cannot add frame %ld to '%s': crf %d differs from "
                            "the movie's (%d, its first frame's)", mv->queued + 1, path, mo->crf,
                            mv->o.crf);
        *out = mv;
        return ORR_OK;
    }
    if ((st = orr_movie_check(path, o->width, o->height, mo, err)) != ORR_OK)
        return st;
    mv = calloc(1, sizeof *mv);
    if (!mv || !(mv->path = strdup(path))) {
        free(mv);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    mv->width = o->width;
    mv->height = o->height;
    mv->o = *mo;
    mv->next = f->movies;
    f->movies = mv;
    *out = mv;
    return ORR_OK;
}

orr_status orr_frames_render(orr_frames *f, orr_sim *s, const char *path,
                             const orr_render_options *o, orr_render_view *view, orr_error *err)
{
    return orr_frames_render_to(f, s, path, NULL, NULL, o, view, err);
}

orr_status orr_frames_render_to(orr_frames *f, orr_sim *s, const char *path, const char *movie,
                                const orr_movie_options *mo, const orr_render_options *o,
                                orr_render_view *view, orr_error *err)
{
    orr_status st = orr_render_check(o, err);
    if (st)
        return st;
    if (strlen(o->colormap) >= sizeof f->slots[0].cmap)
        return orr_fail(err, ORR_ERR_ARG, "render: unknown colormap '%s'", o->colormap);
    if (!path && !movie)
        return orr_fail(err, ORR_ERR_ARG, "render: neither a PNG path nor a movie given");
    orr_movie_options mdef;
    if (movie && !mo) {
        orr_movie_options_default(&mdef);
        mo = &mdef;
    }
    /* a free slot (an earlier failure first) */
    pthread_mutex_lock(&f->mu);
    slot *sl = NULL;
    movie_rec *mv = NULL;
    for (;;) {
        if ((st = take_failure(f, err)) != ORR_OK)
            break;
        for (int k = 0; k < f->depth && !sl; k++)
            if (f->slots[k].state == FREE)
                sl = &f->slots[k];
        if (sl)
            break;
        pthread_cond_wait(&f->changed, &f->mu);
    }
    if (sl && movie)   /* the frame's movie, checked once the frame has its slot */
        st = movie_for(f, movie, mo, o, &mv, err);
    if (sl && !st)
        sl->state = FILLING;
    pthread_mutex_unlock(&f->mu);
    if (st)
        return st;
    /* the deposit and the series' range, here */
    double ext[4];
    char *copy = path ? strdup(path) : NULL;
    st = copy || !path ? ORR_OK : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (!st)
        st = fit(sl, (size_t)o->width * (size_t)o->height, o->width, o->height, err);
    if (!st)
        st = orr_render_density_sim(s, o, view, sl->density, ext, err);
    if (!st) {
        orr_render_choose_range(sl->density, o, view);
        free(sl->path);
        sl->path = copy;
        copy = NULL;
        sl->movie = mv;
        sl->o = *o;
        snprintf(sl->cmap, sizeof sl->cmap, "%s", o->colormap);
        sl->o.colormap = sl->cmap;
        sl->view = *view;
    }
    free(copy);
    pthread_mutex_lock(&f->mu);
    if (!st && mv)
        sl->movie_frame = ++mv->queued;
    pthread_mutex_unlock(&f->mu);
    if (!st && !f->nthreads) {   /* no workers: written here */
        st = write_slot(sl, err);
        if (mv && mv->why)
            mv->state = MOVIE_FAILED;
        sl->state = FREE;
        return st;
    }
    pthread_mutex_lock(&f->mu);
    if (st) {
        sl->state = FREE;
    } else {
        sl->state = QUEUED;
        sl->seq = f->next_seq++;
    }
    pthread_cond_broadcast(&f->changed);
    pthread_mutex_unlock(&f->mu);
    return st;
}

/* Waits until no frame is queued or being written.  Locked. */
static void wait_idle(orr_frames *f)
{
    for (;;) {
        int pending = 0;
        for (int k = 0; k < f->depth; k++)
            pending |= f->slots[k].state == QUEUED || f->slots[k].state == BUSY;
        if (!pending)
            break;
        pthread_cond_wait(&f->changed, &f->mu);
    }
}

orr_status orr_frames_wait(orr_frames *f, orr_error *err)
{
    pthread_mutex_lock(&f->mu);
    wait_idle(f);
    orr_status st = take_failure(f, err);
    pthread_mutex_unlock(&f->mu);
    return st;
}

orr_status orr_frames_flush(orr_frames *f, orr_error *err)
{
    pthread_mutex_lock(&f->mu);
    wait_idle(f);
    /* every movie open is finished, after its frames: a failure comes after theirs */
    for (movie_rec *mv = f->movies; mv; mv = mv->next) {
        mv->flushed = 1;
        if (mv->state == MOVIE_OPEN && mv->queued == 0)
            mv->state = MOVIE_FAILED;   /* no frame came (its render failed): no movie */
        if (mv->state != MOVIE_OPEN)
            continue;
        orr_error e = {0};
        orr_status st = mv->m ? orr_movie_finish(mv->m, &e) : ORR_OK;
        mv->m = NULL;
        mv->state = MOVIE_FINISHED;
        if (st) {
            mv->state = MOVIE_FAILED;
            keep_failure(f, f->next_seq++, &e);
        }
    }
    orr_status st = take_failure(f, err);
    pthread_mutex_unlock(&f->mu);
    return st;
}

int orr_frames_movies_open(orr_frames *f)
{
    pthread_mutex_lock(&f->mu);
    int open = 0;
    for (movie_rec *mv = f->movies; mv; mv = mv->next)
        open += mv->state == MOVIE_OPEN;
    pthread_mutex_unlock(&f->mu);
    return open;
}
