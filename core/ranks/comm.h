/* comm: the ranks of a distributed run.  MPI (Open MPI, libmpi.so.40) is
 * opened with dlopen at run time, like libcuda and NVRTC, so the program
 * starts on machines without MPI and says what is missing only when a run
 * was started by an MPI launcher.  Without a launcher there is one rank and
 * no MPI call is made.  Every collective is called by every rank in the
 * same order; a failing MPI call records "MPI_Xxx: <MPI error string>"
 * (ORR_ERR_COMM).  The library never aborts by itself: the CLI and the Lua
 * layer call orr_comm_abort after reporting an error, so no rank waits in a
 * collective for a rank that has stopped. */
#ifndef ORR_COMM_H
#define ORR_COMM_H

#include <stddef.h>
#include "err.h"

typedef struct orr_comm orr_comm;

/* Whether this process was started by an MPI launcher (mpirun, mpiexec,
 * srun): one of OMPI_COMM_WORLD_SIZE (Open MPI's mpirun), PMIX_RANK (PMIx
 * launchers: Open MPI, srun --mpi=pmix), PMI_RANK or PMI_SIZE (PMI-1/2:
 * srun --mpi=pmi2) is set and not empty.  SLURM_PROCID alone does not count:
 * a Slurm job step without an MPI plugin runs independent one-rank worlds. */
int orr_comm_launched(void);

/* This process's rank and the number of ranks as the launcher's environment
 * gives them, without starting MPI (OMPI_COMM_WORLD_RANK/SIZE, PMIX_RANK,
 * PMI_RANK/SIZE): *rank 0 and *size 1 when not launched; *size 0 where the
 * launcher gives a rank but no size (PMIx alone).  MPI's own numbering,
 * once started, is the same. */
void orr_comm_env_rank(int *rank, int *size);

/* The process's communicator over all ranks, made on the first call (MPI
 * initialised there when launched) and the same object on later calls.
 * Not launched: one rank, rank 0, without MPI.  Launched but libmpi.so.40
 * cannot be loaded: ORR_ERR_COMM, "started by an MPI launcher but MPI cannot
 * be loaded (libmpi.so.40: ...); install Open MPI (Debian: openmpi-bin)".
 * Launched: MPI_Init_thread(MPI_THREAD_FUNNELED) unless the program
 * initialised MPI already (OpenMP threads may run inside a rank; MPI is
 * called only from the thread that made the world), and the communicator is
 * a duplicate of MPI_COMM_WORLD with the error handler MPI_ERRORS_RETURN.
 * The first result, failure included, is the result of every later call.
 * The object is owned by the library; it is never freed.
 * ORRERY_MPI_LIB, when set, names the library opened instead of
 * libmpi.so.40 (for tests: a missing path gives the error above, with that
 * name in it). */
orr_status orr_comm_world(orr_comm **out, orr_error *err);

int orr_comm_rank(const orr_comm *c);         /* 0 .. size - 1 */
int orr_comm_size(const orr_comm *c);         /* ranks */
int orr_comm_local_rank(const orr_comm *c);   /* among the ranks on this host */
int orr_comm_local_size(const orr_comm *c);   /* ranks on this host */
int orr_comm_uses_mpi(const orr_comm *c);     /* 0 for the one-rank world without MPI */
const char *orr_comm_host(const orr_comm *c); /* this rank's host name */
/* Seconds this rank has spent inside MPI's collectives (all-gathers,
 * reductions, broadcasts, barriers: every collective below, whoever called
 * it) since the world was made, waiting for the other ranks included; for
 * a measure of the communication over a stretch of a run, take the
 * difference.  0 without MPI.  The votes' point-to-point messages are not
 * counted. */
double orr_comm_busy_s(const orr_comm *c);

/* Every collective below: ORR_ERR_ARG for arguments that no rank could use
 * (checked before any MPI call, the same way on every rank), ORR_ERR_COMM
 * for a failing MPI call or, with MPI, a call after orr_comm_finalize.
 * Without MPI each is a no-op apart from its copy (allgather) and its
 * checks. */

/* In-place all-gather of variable blocks: rank r's block is
 * buf[displs[r] .. displs[r] + counts[r]) in units of elem bytes; on return
 * every rank holds every block.  counts and displs have size() entries, the
 * same on every rank, none negative.  Blocks whose byte counts or offsets
 * pass what one MPI call takes (an int; see orr_comm_set_max_message) are
 * broadcast from their ranks in pieces instead, so any size that fits in
 * memory works. */
orr_status orr_comm_allgatherv(orr_comm *c, void *buf, const long *counts, const long *displs,
                               size_t elem, orr_error *err);
/* Fixed-size all-gather: rank r's `bytes` bytes from mine land at
 * all + r * bytes on every rank (mine may be that very place). */
orr_status orr_comm_allgather(orr_comm *c, const void *mine, void *all, size_t bytes,
                              orr_error *err);
/* Element-wise sums and maxima of count doubles (count >= 0), in place,
 * over all ranks. */
orr_status orr_comm_sum(orr_comm *c, double *v, int count, orr_error *err);
orr_status orr_comm_max(orr_comm *c, double *v, int count, orr_error *err);
/* Rank root's bytes to every rank (in pieces past an int).  root must be a
 * rank. */
orr_status orr_comm_bcast(orr_comm *c, void *buf, size_t bytes, int root, orr_error *err);
orr_status orr_comm_barrier(orr_comm *c, orr_error *err);
/* Collective: whether every rank reached this point with ORR_OK, so that a
 * rank that failed alone makes all fail and none waits in a later
 * collective.  Returns st where this rank failed (err untouched), ORR_OK
 * where all did fine, else ORR_ERR_COMM "rank R could not WHAT" naming the
 * lowest rank that failed (what: printf-style). */
orr_status orr_comm_all_ok(orr_comm *c, orr_status st, orr_error *err, const char *what, ...)
    __attribute__((format(printf, 4, 5)));

/* Collective: every rank hands in its own result st (with its message in
 * err where st is not ORR_OK), and every rank returns the same: ORR_OK
 * where every rank did fine, else the status and message of the lowest
 * failing rank R ("rank R: message" where name_rank is set and some rank
 * did fine, the message as it is otherwise), with err->shared set, so that it is said once (by rank
 * 0) and no rank needs ending.  The way for a step that may fail on some
 * ranks only (a write on rank 0, a device on one host) to fail on all
 * alike.  A failing MPI call gives its own error (not shared).  One rank
 * (or c NULL): st, err untouched. */
orr_status orr_comm_agree(orr_comm *c, orr_status st, int name_rank, orr_error *err);

/* The longest choice orr_comm_same compares, with its NUL. */
enum { ORR_COMM_CHOICE = 64 };
/* Collective: whether every rank made the same choice, mine (a short
 * string such as "cuda"; compared in its first ORR_COMM_CHOICE - 1 bytes),
 * before any rank acts on it.  ORR_OK where all agree; otherwise every rank
 * returns ORR_ERR_ARG (err->shared set) naming the ranks of each choice:
 * "the ranks disagree on WHAT: \"cuda\" on ranks 0 and 2, \"cpu\" on rank 1
 * (HINT)" (hint may be NULL; a long list names its first eight ranks and
 * how many more).  One rank (or c NULL): ORR_OK. */
orr_status orr_comm_same(orr_comm *c, const char *mine, const char *what, const char *hint,
                         orr_error *err);
/* The same for a text of any length (a file's path), compared in full:
 * every rank's length and 64-bit hash (XXH3) are gathered, and only where
 * they differ the texts themselves, to name them (a text of 200 bytes or
 * more shown as its first 60 and last 136).  Collective. */
orr_status orr_comm_same_text(orr_comm *c, const char *mine, const char *what, const char *hint,
                              orr_error *err);

/* A vote: every rank's result of a step that each rank finishes in its own
 * time, heard without waiting, so that a rank still at work (inside a
 * library's own handshake, say, which would wait for ever for a rank that
 * failed) learns of a peer's failure and can give up.  Every rank begins
 * one (the votes of the ranks pair up in the order they are begun), casts
 * its code once (0: done, > 0: failed, however the caller counts), tests
 * meanwhile as often as it likes, and ends it, which waits for every
 * rank's code.  Beginning is collective (every rank has its vote, or
 * every rank fails alike); the rest is point-to-point messages on the
 * communicator: a rank casts, tests and ends in its own time.  Without MPI
 * every call is local. */
typedef struct orr_comm_vote orr_comm_vote;
orr_status orr_comm_vote_begin(orr_comm *c, orr_comm_vote **out, orr_error *err);
/* This rank's code (>= 0), to every rank; once per vote. */
orr_status orr_comm_vote_cast(orr_comm_vote *v, int code, orr_error *err);
/* Without waiting: *lowest the lowest rank heard so far (this one once
 * cast) with a code > 0, or -1; *complete (may be NULL) 1 once every code
 * has been heard and this rank's has gone to every rank. */
orr_status orr_comm_vote_test(orr_comm_vote *v, int *lowest, int *complete, orr_error *err);
/* Waits for every rank's code (this rank must have cast), copies them to
 * codes (size() entries; may be NULL) and frees v, on every path. */
orr_status orr_comm_vote_end(orr_comm_vote *v, int *codes, orr_error *err);

/* The largest transfer one MPI call makes, in bytes (default and ceiling
 * INT_MAX, floor 1); larger transfers go in pieces.  Every rank must set the
 * same value.  Lowered by tests to take the piecewise paths with small data. */
void orr_comm_set_max_message(orr_comm *c, size_t bytes);

/* Ends every rank at once with exit code code (MPI_Abort); with one rank
 * without MPI it returns, and the caller exits as usual.  c may be NULL (a
 * launched rank whose orr_comm_world failed after MPI was initialised). */
void orr_comm_abort(orr_comm *c, int code);
/* Finalises MPI at the end of a run that initialised it (idempotent; MPI
 * initialised by the program itself is left to it).  First it calls the
 * functions given to orr_comm_at_finalize (with or without MPI, once each).
 * With MPI, collectives called after it fail with ORR_ERR_COMM; without,
 * it does nothing more.  The library registers nothing with atexit: the
 * program calls this, on every rank, at the end of its run (not after an
 * error that ends the ranks with orr_comm_abort). */
void orr_comm_finalize(void);
/* Registers fn (once, however often it is given; at most 8 functions) to
 * be called with the world by orr_comm_finalize, before MPI is finalised:
 * the collective teardown of what the layers above keep over the ranks
 * (dist.h's retired exchanges).  Every rank reaches orr_comm_finalize at
 * the same point with respect to every collective, so fn may make
 * collective calls. */
void orr_comm_at_finalize(void (*fn)(orr_comm *c));

#endif
