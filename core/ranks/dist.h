/* dist: the bodies of one simulation spread over the ranks of a comm
 * (comm.h).  Rank r owns the contiguous slice [n r / P, n (r + 1) / P) of
 * the n bodies: it computes the forces on its slice from all n bodies,
 * kicks and drifts its slice, and after every drift the slices' positions
 * are gathered so that every rank holds every body again.  Since a body's
 * force sum does not depend on which range it is computed in, P ranks give
 * the bits of one.  On GPUs, one per rank, the exchange is an NCCL
 * all-gather queued on the engine's stream (nccl.h); otherwise (the CPU
 * backend, no NCCL, ranks sharing a GPU, or ORRERY_EXCHANGE=host) it is
 * staged through the host: the rank's slice copied out, an MPI all-gather
 * in place, every slice copied back in.  With one rank every call is a
 * no-op. */
#ifndef ORR_DIST_H
#define ORR_DIST_H

#include "comm.h"
#include "engine.h"
#include "tune.h"

typedef struct orr_dist orr_dist;

/* The exchange asked for by ORRERY_EXCHANGE: "host", "nccl" (even for one
 * rank, to measure the path), else automatic (unset or empty; another
 * value too here: orr_dist_exchange_check refuses it). */
typedef enum { ORR_EXCHANGE_AUTO, ORR_EXCHANGE_HOST, ORR_EXCHANGE_NCCL } orr_exchange_ask;
orr_exchange_ask orr_dist_exchange_asked(void);
/* ORR_OK where ORRERY_EXCHANGE is unset, empty, "host" or "nccl", else
 * ORR_ERR_ARG naming the variable, its value and the values it takes
 * (orr_sim_create and orr_dist_attach check it; this rank's environment
 * alone, no collective). */
orr_status orr_dist_exchange_check(orr_error *err);

/* The GPU this rank uses: its local rank modulo the visible devices (0
 * with one rank on the host, or no GPU). */
int orr_dist_device(const orr_comm *c);
/* OpenMP threads for a CPU rank: the host's cores shared among its ranks,
 * or 0 (the OpenMP default) with one rank on the host or OMP_NUM_THREADS
 * set. */
int orr_dist_cpu_threads(const orr_comm *c);

/* Spreads n bodies over the ranks of c (borrowed: it must outlive d). */
orr_status orr_dist_create(orr_dist **out, orr_comm *c, long n, orr_error *err);
/* Frees d at once, but for what its exchange keeps over several ranks
 * (NCCL's communicator, whose teardown is a barrier between the ranks of a
 * host): that is retired, and torn down where every rank is at the same
 * point of its collectives, the next orr_dist_attach or orr_comm_finalize,
 * once every rank has retired it, in the order the exchanges were made.
 * So it may be called at any moment, on each rank at a different one (the
 * Lua layer's garbage collector does).  ORRERY_TEST_COLLECTIVE_TEARDOWN
 * (set, not empty, on every rank) gives every exchange over several ranks
 * a stand-in with a collective teardown, for tests without NCCL. */
void orr_dist_destroy(orr_dist *d);

int orr_dist_rank(const orr_dist *d);
int orr_dist_ranks(const orr_dist *d);
orr_comm *orr_dist_comm(const orr_dist *d);
/* Rank r's slice of n bodies over `ranks` ranks (no dist needed). */
orr_range orr_dist_slice_of(long n, int r, int ranks);
/* " (in rank R's slice)", R the rank whose slice holds body (0 .. n - 1),
 * as messages name it over ranks > 1; "" with one rank. */
void orr_dist_owner_note(char *buf, size_t size, long n, long body, int ranks);
/* Rank r's slice, and this rank's. */
orr_range orr_dist_slice(const orr_dist *d, int r);
orr_range orr_dist_mine(const orr_dist *d);

/* The kernels tuned for this rank's shape, its slice's targets against all
 * n (orr_tune_options targets), on its own GPU (o.device), into res; with
 * comm NULL or one rank, orr_tune for all n.  Ranks whose tunings have the
 * same identity (the same kind of device and slice bucket) form a group
 * whose lowest rank tunes, or finds the stored tuning, and gives it to the
 * rest; the groups take turns, so no two ranks time candidates on one
 * device at once.  A rank that fails makes every rank fail.  res->note is
 * this rank's own (its group's leader's tuning, the leader's alone);
 * orr_dist_notes gathers them.  Collective. */
orr_status orr_dist_tune(orr_comm *comm, orr_backend_kind kind, const orr_kspec *base, long n,
                        orr_tune_options o, orr_tune_result *res, orr_error *err);

/* Every rank's note (mine, this rank's, up to 511 bytes: entries one per
 * line, util.h; "" for none) into out (size bytes; may be mine) on every
 * rank: each distinct line once, in rank order, one per line, a line first
 * given by a rank R > 0 as "rank R: LINE"; lines that do not fit whole are
 * left out, said in a last line "(K more notes from other ranks not
 * shown)"; mine itself with comm NULL or one rank.  Tunings over ranks say
 * so what any rank's tuner said.  Collective: every rank calls it, or none
 * (after a collective that every rank passed). */
orr_status orr_dist_notes(orr_comm *comm, const char *mine, char *out, size_t size,
                          orr_error *err);

/* Whether two ranks of c use one GPU (NCCL refuses them), told by the
 * GPUs themselves: gpu is this rank's GPU's identity (its UUID,
 * orr_gpu_info.uuid; "" matches nothing) and device its CUDA device number,
 * which says nothing across ranks (with CUDA_VISIBLE_DEVICES set per rank,
 * as Slurm's --gpus-per-task does, every rank's GPU is its device 0, and
 * one GPU may have different numbers in different ranks).  *a < *b are the
 * first two ranks on one GPU, -1 where no two are; where (may be NULL)
 * receives "GPU D on HOST" as rank *a numbers it.  Collective. */
orr_status orr_dist_shared_gpu(orr_comm *c, const char *gpu, int device, int *a, int *b,
                               char *where, size_t size, orr_error *err);

/* Chooses the exchange for engine e (on GPU `device` when it is a CUDA
 * engine): NCCL where every rank has a GPU of its own (orr_dist_shared_gpu)
 * and NCCL loads, else through the host.  The environment variable
 * ORRERY_EXCHANGE=host forces the host path, =nccl the NCCL path (even for
 * one rank, to measure what it costs; an error when NCCL cannot be used).  Collective; every rank
 * chooses alike: a value of ORRERY_EXCHANGE other than those (and unset
 * or empty) fails every rank, naming the variable, the value and the rank
 * whose environment has it; the engines' backends and ORRERY_EXCHANGE as
 * each rank read it are compared (a difference fails on every rank,
 * naming the ranks), then the exchanges retired on every rank are torn down
 * (orr_dist_destroy).  The choice and why, in words, is
 * orr_dist_exchange_note. */
orr_status orr_dist_attach(orr_dist *d, orr_engine *e, int device, orr_error *err);
/* "nccl", "host" or "none" (one rank without ORRERY_EXCHANGE=nccl). */
const char *orr_dist_exchange(const orr_dist *d);
/* One line: "positions exchanged over NCCL 22805 (a GPU per rank)" or
 * "positions exchanged through the host (MPI): ranks 0 and 1 share GPU 0
 * on HOST". */
const char *orr_dist_exchange_note(const orr_dist *d);

/* The positions gathered (as orr_dist_gather does), then the force on
 * this rank's slice from all n: on the GPU the two overlap, the part of the
 * force whose sources are the slice itself (orr_engine_force_part,
 * ORR_FORCE_LOCAL) running while the other slices arrive, the rest after;
 * the bits are those of the plain exchange and force.  By default only
 * where the exchange is staged through the host with a GPU per rank
 * (2 x H200, N = 65536: 1.23 ms a step against 1.34 with the exchange
 * first).  Not over NCCL (over NVLink the all-gather takes 0.03 ms, and
 * the force cut in two launches sharing the SMs with NCCL's costs more:
 * 1.37 ms against 1.16), not where ranks share a GPU (their kernels take
 * turns on it anyway, and in two parts they switch more), nor on the CPU.
 * ORRERY_OVERLAP=off turns the overlap off everywhere, =on on everywhere
 * on the GPU. */
orr_status orr_dist_gather_force(orr_dist *d, orr_engine *e, orr_error *err);
/* Whether block steps (hermite) can stay on the GPUs: the exchange is NCCL
 * and every rank's GPU is the same model (the same kernels give the same
 * bits on each, so every GPU runs the same blocks). */
int orr_dist_gpu_blocks(const orr_dist *d);
/* Every rank's records (counts[r] of elem bytes at displs[r] of the device
 * buffer buf) to every rank in place, queued on the engine's stream
 * (NCCL; ORR_ERR_ARG without it). */
orr_status orr_dist_gather_records(orr_dist *d, orr_engine *e, orr_devptr buf,
                                   const long *counts, const long *displs, size_t elem,
                                   orr_error *err);
/* Whether orr_dist_gather_force overlaps (set by orr_dist_attach, see
 * above), and setting it (the bench measures both). */
int orr_dist_overlap(const orr_dist *d);
void orr_dist_set_overlap(orr_dist *d, int on);

/* Every rank's slice of the engine's buffer id (positions with masses, or
 * velocities) to every rank, in the engine's precision, bit for bit. */
orr_status orr_dist_gather(orr_dist *d, orr_engine *e, orr_buffer_id id, orr_error *err);

#endif
