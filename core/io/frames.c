/* frames: PNG frames written by worker threads (see frames.h).  A writer is
 * a ring of slots, each one frame: its density, its RGB picture and what
 * colouring and writing it need (the path, the options, the view with its
 * range fixed).  A slot is free, filled by the caller, queued, or busy on
 * a worker; one mutex guards the states and one condition variable says
 * that one changed.  A worker takes the oldest queued frame whose path no
 * busy worker is writing, so frames for one path are committed in queue
 * order and the last one queued is the one that stays. */
#include "frames.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 16

enum { FREE, FILLING, QUEUED, BUSY };

typedef struct {
    int state;
    unsigned long long seq;    /* queue order */
    char *path;                /* heap */
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
};

/* Colours and writes a slot's frame: what orr_render_sim does after the
 * deposit. */
static orr_status write_slot(slot *sl, orr_error *err)
{
    orr_status st = orr_render_colorize(sl->density, &sl->o, &sl->view, sl->rgb, err);
    return st ? st : orr_render_write_png(sl->path, sl->o.width, sl->o.height, sl->rgb, err);
}

/* The oldest queued slot whose path no busy slot has, or NULL.  Locked. */
static slot *next_job(orr_frames *f)
{
    slot *best = NULL;
    for (int k = 0; k < f->depth; k++) {
        slot *q = &f->slots[k];
        if (q->state != QUEUED || (best && best->seq < q->seq))
            continue;
        int clash = 0;
        for (int j = 0; j < f->depth && !clash; j++)
            clash = f->slots[j].state == BUSY && strcmp(f->slots[j].path, q->path) == 0;
        if (!clash)
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

orr_status orr_frames_render(orr_frames *f, orr_sim *s, const char *path,
                             const orr_render_options *o, orr_render_view *view, orr_error *err)
{
    orr_status st = orr_render_check(o, err);
    if (st)
        return st;
    if (strlen(o->colormap) >= sizeof f->slots[0].cmap)
        return orr_fail(err, ORR_ERR_ARG, "render: unknown colormap '%s'", o->colormap);
    /* a free slot (an earlier failure first) */
    pthread_mutex_lock(&f->mu);
    slot *sl = NULL;
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
    if (sl)
        sl->state = FILLING;
    pthread_mutex_unlock(&f->mu);
    if (st)
        return st;
    /* the deposit and the series' range, here */
    double ext[4];
    char *copy = strdup(path);
    st = copy ? ORR_OK : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (!st)
        st = fit(sl, (size_t)o->width * (size_t)o->height, o->width, o->height, err);
    if (!st)
        st = orr_render_density_sim(s, o, view, sl->density, ext, err);
    if (!st) {
        orr_render_choose_range(sl->density, o, view);
        free(sl->path);
        sl->path = copy;
        copy = NULL;
        sl->o = *o;
        snprintf(sl->cmap, sizeof sl->cmap, "%s", o->colormap);
        sl->o.colormap = sl->cmap;
        sl->view = *view;
    }
    free(copy);
    if (!st && !f->nthreads) {   /* no workers: written here */
        st = write_slot(sl, err);
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

orr_status orr_frames_flush(orr_frames *f, orr_error *err)
{
    pthread_mutex_lock(&f->mu);
    for (;;) {
        int pending = 0;
        for (int k = 0; k < f->depth; k++)
            pending |= f->slots[k].state == QUEUED || f->slots[k].state == BUSY;
        if (!pending)
            break;
        pthread_cond_wait(&f->changed, &f->mu);
    }
    orr_status st = take_failure(f, err);
    pthread_mutex_unlock(&f->mu);
    return st;
}
