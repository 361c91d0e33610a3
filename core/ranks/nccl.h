/* nccl: NVIDIA's collective library for GPU-to-GPU traffic between the
 * ranks of a distributed run, opened with dlopen("libnccl.so.2") at run
 * time like libcuda (nccl.h from the CUDA toolkit gives the types only).
 * The communicator's unique id goes from rank 0 to every rank through MPI
 * (comm.h).  NCCL refuses two ranks on one GPU: dist.h then keeps the
 * exchange staged through the host.  Every failing call records
 * "ncclXxx: <ncclGetErrorString>" (ORR_ERR_COMM), followed by NCCL's own
 * last message in parentheses when it has one. */
#ifndef ORR_NCCL_H
#define ORR_NCCL_H

#include <stddef.h>
#include "comm.h"
#include "cuda.h"

typedef struct orr_nccl orr_nccl;

/* ORR_OK when libnccl.so.2 loads here; else ORR_ERR_COMM saying why
 * ("libnccl.so.2: cannot open shared object file ...", or "NAME lacks
 * ncclXxx: not NCCL 2 (libnccl.so.2)").  Opened once (RTLD_LOCAL); the first
 * result, failure included, is the result of every later call.
 * ORRERY_NCCL_LIB, when set, names the library opened instead of
 * libnccl.so.2 (for tests: a missing path gives the error above, with that
 * name in it). */
orr_status orr_nccl_open(orr_error *err);
/* NCCL's version as ncclGetVersion gives it (e.g. 22805), or 0. */
int orr_nccl_version(void);

/* A communicator over every rank of c, each rank on its CUDA device
 * `device` (its primary context made current on the calling thread; see
 * orr_cuda_ctx_acquire).
 * Collective over c: rank 0 makes the unique id, orr_comm_bcast hands it
 * out, every rank calls ncclCommInitRank.  Each step (NCCL loaded, the
 * device's context, the id, the init) is agreed over c before the next, so
 * when it fails on any rank it fails on every rank, with the status of the
 * lowest failing rank R and its message as "rank R: <message>" (e.g. "rank
 * 1: libnccl.so.2: cannot open shared object file ...", ORR_ERR_COMM; a
 * device's error keeps its own status, e.g. ORR_ERR_NODRIVER); nothing is
 * left made then.  The init itself does not block (NCCL 2.14 and later:
 * ncclCommInitRankConfig, blocking = 0): each rank's outcome goes to every
 * rank as soon as it has one (orr_comm_vote), so ranks still inside NCCL's
 * handshake, which would wait for ever for a rank that failed, abort theirs
 * and every rank returns in seconds with the failed rank's error ("rank R:
 * ncclCommInitRank: ...").  (Before 2.14 the init blocks and a rank that
 * fails alone leaves the others in NCCL's handshake.)  A one-rank c without
 * MPI needs no launcher.  Test hook: ORRERY_TEST_NCCL_INIT=fail=R (every
 * rank) makes no NCCL call at all: rank R's init fails at once, every
 * other rank's stays in a handshake that never ends by itself (no GPU
 * needed). */
orr_status orr_nccl_create(orr_nccl **out, orr_comm *c, int device, orr_error *err);
/* Collective over the ranks of the communicator (ncclCommFinalize, where
 * NCCL has it, waits for what was queued and for the peers; then
 * ncclCommDestroy): every rank calls it at the same point of its
 * collectives (dist.h retires its communicators until such a point).
 * NULL: nothing. */
void orr_nccl_destroy(orr_nccl *n);

/* In place, on device memory: rank r's block, bytes
 * [displs[r] * elem, (displs[r] + counts[r]) * elem) of buf, to every rank
 * (one ncclBroadcast per rank with bytes inside a group), queued on stream
 * (a CUstream; NULL the default stream).  Returns when queued.  counts and
 * displs have one entry per rank, the same on every rank.  ORR_ERR_ARG,
 * before any NCCL call, for a NULL n, counts or displs, a negative count or
 * displacement, a block whose byte offset or end overflows size_t or the
 * device address space, or buf 0 with some bytes to move; nothing to move
 * (every block empty, or elem 0) returns ORR_OK at once.  An asynchronous
 * error that NCCL met in earlier work is reported before queuing
 * (ncclCommGetAsyncError, where NCCL has it). */
orr_status orr_nccl_allgatherv(orr_nccl *n, orr_devptr buf, const long *counts,
                               const long *displs, size_t elem, void *stream, orr_error *err);

#endif
