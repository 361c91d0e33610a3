/* groups: close pairs and compact groups taken out of the Hermite block
 * steps and regularised (issue 29), as NBODY6++ does with KS pairs and
 * chains and PeTar with slow-down AR groups.
 *
 * A group of 2 .. ORR_AR_MAX bodies is one body in the block steps: its
 * centre of mass, with the group's mass, in the slot of its member with the
 * smallest index; the other members' slots are ghosts (mass 0, far away,
 * never active).  Its members' motion about the centre is integrated by
 * algorithmic regularisation (ar.h: the logarithmic-Hamiltonian leapfrog
 * with Gragg-Bulirsch-Stoer extrapolation), perturbed by the tides of the
 * bodies around it (its perturbers: those closer than the distance where
 * their tide falls below gamma of the group's own force), predicted along
 * their Hermite polynomials.  Forces between a group and its perturbers are
 * exact both ways: the engine sees the centre of mass, and the difference
 * between the members and their centre is added on the host to the
 * centre's force and jerk and to each perturber's.  A group's motion is
 * advanced at its centre's steps; at a perturber's step its members are
 * carried on without tides from its state (predict_group).  On the GPU's
 * own block loop (hermite.c's watch) the perturbers of a pair step there,
 * its members placed by their Kepler motion (orr_groups_watch).
 *
 * Two bodies (singles or groups' centres) active in the same block, closer
 * than r_close and approaching or bound, become a group; a group whose
 * member has no other member within 2 r_close dissolves (its close pairs
 * form again at once).  At an interval's end every group is resolved: its
 * members are bodies again, at the interval's end, so outputs,
 * diagnostics, energies (the binaries' binding energy included) and
 * checkpoints see every body; the next interval collapses them again.
 * Regularisation is for Newtonian gravity without softening. */
#ifndef ORR_GROUPS_H
#define ORR_GROUPS_H

#include "ar.h"
#include "engine.h"

/* The Hermite state the groups work on (hermite.c's arrays). */
typedef struct {
    long n;
    double G;
    double *pos, *vel;     /* 4n (x y z m), 3n: each body's corrected state at its time */
    double *a, *j;         /* 3n: its acceleration and jerk there */
    long long *tick;       /* n: its time, in ticks of unit */
    int *level;            /* n */
    double unit;           /* a tick's length of time */
    double *xp, *vp;       /* 4n, 3n: predicted to the block time */
    double eta;            /* the step criterion's accuracy (a group's centre's passage cap) */
    char *touched;         /* n or NULL: set where the groups wrote a body's state (a new
                              centre, a ghost, a former member), for hermite.c to copy on */
} orr_hview;

/* A ghost's time: never the next block's (hermite.c adds a step to it). */
#define ORR_GHOST_TICK (1LL << 60)

typedef struct orr_groups orr_groups;

/* Settings: r_close (0: 4 r_h / N, recomputed each interval), gamma, the
 * smallest relative tide a perturber is counted for, and encounter: an
 * unbound encounter forms a group where its pericentre is within
 * encounter r_close (a bound one reaching past r_close, within r_close / 4
 * or encounter r_close, the more). */
orr_status orr_groups_create(orr_groups **out, long n, double r_close, double gamma,
                             double encounter, orr_error *err);
void orr_groups_destroy(orr_groups *g);

/* Groups now, and bodies in them. */
int orr_groups_count(const orr_groups *g);
/* Groups formed (a group joined by another body again) and come apart
 * (taken back as they formed included) since creation. */
void orr_groups_made(const orr_groups *g, long *formed, long *parted);
/* Forgets every group (the state was changed from outside). */
void orr_groups_clear(orr_groups *g);
/* The membership as a checkpoint field: per body the slot of its group's
 * centre plus 1, or 0 (out[n]); set from one (checked). */
void orr_groups_get_field(const orr_groups *g, double *out);
orr_status orr_groups_set_field(orr_groups *g, const double *in, orr_error *err);

/* An interval begins (every body resolved, at time 0): each group becomes
 * its centre of mass and ghosts, its internal motion started afresh. */
orr_status orr_groups_collapse(orr_groups *g, orr_hview *h, orr_error *err);
/* A block at time t (active bodies act[nact], the others predicted in
 * xp, vp): the groups the block needs are advanced to t. */
orr_status orr_groups_advance(orr_groups *g, const orr_hview *h, const char *active,
                              double t, orr_error *err);
/* The exact forces: the listed bodies' (list[count], at the block time in
 * xp, vp) accelerations an[3 count] and jerks jn from the engine, which saw
 * every group as its centre of mass, corrected by the members. */
void orr_groups_correct(const orr_groups *g, const orr_hview *h, const long *list, long count,
                        double *an, double *jn);
/* After a block's corrector at tick `tick` (time t): groups whose centre was
 * active dissolve when they came apart, and active bodies that came close
 * form groups (with everyone, every body at t is looked at; else those
 * pulled hard enough to have a neighbour within r_close).  The bodies that
 * need new forces and steps (new centres, former members) into fresh[]
 * (*nfresh). */
orr_status orr_groups_update(orr_groups *g, orr_hview *h, const char *active, long tick,
                             double t, int everyone, long *fresh, long *nfresh,
                             orr_error *err);
/* The longest step body i may take now: where it is a group's centre
 * with perturbers near, half the time the nearest takes to pass, and under
 * a tide above GAMMA_STEP a fraction of the group's internal time and of
 * its tide's; else infinite. */
double orr_groups_step_cap(const orr_groups *g, const orr_hview *h, long i);
/* The same for a block at tick: a group's centre made ready for it
 * (orr_groups_ready) keeps the cap found then. */
double orr_groups_block_cap(const orr_groups *g, const orr_hview *h, long i, long long tick);
/* What the host must step itself where the block steps run elsewhere (the
 * GPU's loop, hermite.c; engine.h's orr_block_watch): the earliest next
 * time (ticks) of a group's centre, or a perturber of a group the loop
 * does not resolve (-1: no group); the pairs it resolves (the first
 * ORR_WATCH_PAIRS: their members' state and the perturbers' distance),
 * fast where no other group is among their perturbers nor they among
 * another's (their centres' blocks the loop's too, the host moving the
 * pair on to each first: orr_groups_ready); and the bodies after whose
 * block a close pair may form (orr_groups_update's tests, with margins:
 * they are made on the predicted state). */
void orr_groups_watch(const orr_groups *g, const orr_hview *h, orr_block_watch *w);
/* Before the block at tick `tick` (time t; every body predicted there in
 * xp, vp): the groups whose centre's block it is moved on to it, tested
 * for coming apart, their perturbers listed anew and their centre's next
 * step cap found (orr_groups_block_cap), counted in *readied; a group
 * come apart keeps its list and is parted after the block
 * (orr_groups_update), *apart set.  With `every` 0, only the fast pairs
 * that the engine's loop is to run (orr_groups_watch's; the watch hands
 * the list and the cap on), stopping at one come apart (the block is then
 * the host's); with `every`, all (a host block: the same steps as the
 * loop's). */
orr_status orr_groups_ready(orr_groups *g, const orr_hview *h, long long tick, double t,
                            int every, int *readied, int *apart, orr_error *err);
/* Whether orr_groups_ready would find a fast pair due at tick. */
int orr_groups_due(const orr_groups *g, const orr_hview *h, long long tick);
/* The interval's end at time t: every group advanced there and resolved
 * into its members' slots. */
orr_status orr_groups_resolve(orr_groups *g, orr_hview *h, double t, orr_error *err);

#endif
