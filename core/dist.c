/* dist: slices of the bodies per rank and their exchange (see dist.h). */
#include "dist.h"
#include "cuda.h"

#include <stdlib.h>
#include <string.h>

struct orr_dist {
    orr_comm *comm;
    int rank, ranks;
    long n;
    long *counts, *displs;   /* per rank, in bodies */
    void *stage;             /* host copy of a GPU buffer (n records), made when first needed */
    size_t stage_bytes;
};

orr_status orr_dist_create(orr_dist **out, orr_comm *c, long n, orr_error *err)
{
    *out = NULL;
    orr_dist *d = calloc(1, sizeof *d);
    if (!d)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    d->comm = c;
    d->rank = orr_comm_rank(c);
    d->ranks = orr_comm_size(c);
    d->n = n;
    d->counts = calloc((size_t)d->ranks, sizeof(long));
    d->displs = calloc((size_t)d->ranks, sizeof(long));
    if (!d->counts || !d->displs) {
        orr_dist_destroy(d);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    }
    for (int r = 0; r < d->ranks; r++) {
        orr_range s = orr_dist_slice(d, r);
        d->displs[r] = s.first;
        d->counts[r] = s.count;
    }
    *out = d;
    return ORR_OK;
}

void orr_dist_destroy(orr_dist *d)
{
    if (!d)
        return;
    free(d->counts);
    free(d->displs);
    free(d->stage);
    free(d);
}

int orr_dist_rank(const orr_dist *d)
{
    return d->rank;
}

int orr_dist_ranks(const orr_dist *d)
{
    return d->ranks;
}

orr_comm *orr_dist_comm(const orr_dist *d)
{
    return d->comm;
}

orr_range orr_dist_slice(const orr_dist *d, int r)
{
    const long long n = d->n, p = d->ranks;
    orr_range s = {(long)(n * r / p), (long)(n * (r + 1) / p - n * r / p)};
    return s;
}

orr_range orr_dist_mine(const orr_dist *d)
{
    return orr_dist_slice(d, d->rank);
}

/* A GPU buffer through the host: this rank's slice out, the all-gather in
 * place, every slice back in, all on the engine's stream. */
static orr_status gather_device(orr_dist *d, orr_engine *e, const orr_buffer *b, orr_error *err)
{
    const size_t bytes = (size_t)d->n * b->stride;
    if (d->stage_bytes < bytes) {
        void *p = realloc(d->stage, bytes);
        if (!p)
            return orr_fail(err, ORR_ERR_NOMEM, "out of memory for %zu bytes of staging", bytes);
        d->stage = p;
        d->stage_bytes = bytes;
    }
    const orr_range mine = orr_dist_mine(d);
    const size_t off = (size_t)mine.first * b->stride;
    void *stream = orr_engine_stream(e);
    orr_status st = orr_cuda_dtoh_async((char *)d->stage + off, b->dptr + off,
                                        (size_t)mine.count * b->stride, stream, err);
    if (!st)
        st = orr_cuda_stream_sync(stream, err);
    if (!st)
        st = orr_comm_allgatherv(d->comm, d->stage, d->counts, d->displs, b->stride, err);
    if (!st)
        st = orr_cuda_htod_async(b->dptr, d->stage, bytes, stream, err);
    if (!st)   /* the stage is reused by the next exchange */
        st = orr_cuda_stream_sync(stream, err);
    return st;
}

orr_status orr_dist_gather(orr_dist *d, orr_engine *e, orr_buffer_id id, orr_error *err)
{
    if (d->ranks == 1)
        return ORR_OK;
    orr_buffer b;
    orr_status st = orr_engine_buffer(e, id, &b, err);
    if (st)
        return st;
    if (b.on_device)
        return gather_device(d, e, &b, err);
    for (int k = 0; !st && k < b.ncomp; k++)
        st = orr_comm_allgatherv(d->comm, b.host[k], d->counts, d->displs, b.elem, err);
    return st;
}
