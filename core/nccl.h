/* nccl: NVIDIA's collective library for GPU-to-GPU traffic between the
 * ranks of a distributed run, opened with dlopen("libnccl.so.2") at run
 * time like libcuda (nccl.h from the CUDA toolkit gives the types only).
 * The communicator's unique id goes from rank 0 to every rank through MPI
 * (comm.h).  NCCL refuses two ranks on one GPU: dist.h then keeps the
 * exchange staged through the host.  Every failing call records
 * "ncclXxx: <ncclGetErrorString>" (ORR_ERR_COMM). */
#ifndef ORR_NCCL_H
#define ORR_NCCL_H

#include <stddef.h>
#include "comm.h"
#include "cuda.h"

typedef struct orr_nccl orr_nccl;

/* ORR_OK when libnccl.so.2 loads here; else ORR_ERR_COMM saying why
 * ("libnccl.so.2: cannot open shared object file ..."). */
orr_status orr_nccl_open(orr_error *err);
/* NCCL's version as ncclGetVersion gives it (e.g. 22805), or 0. */
int orr_nccl_version(void);

/* A communicator over every rank of c, each rank on its CUDA device
 * `device` (its primary context current on the calling thread).
 * Collective over c: rank 0 makes the unique id, orr_comm_bcast hands it
 * out, every rank calls ncclCommInitRank. */
orr_status orr_nccl_create(orr_nccl **out, orr_comm *c, int device, orr_error *err);
void orr_nccl_destroy(orr_nccl *n);

/* In place, on device memory: rank r's block, bytes
 * [displs[r] * elem, (displs[r] + counts[r]) * elem) of buf, to every rank
 * (one ncclBroadcast per rank inside a group), queued on stream (a
 * CUstream; NULL the default stream).  Returns when queued. */
orr_status orr_nccl_allgatherv(orr_nccl *n, orr_devptr buf, const long *counts,
                               const long *displs, size_t elem, void *stream, orr_error *err);

#endif
