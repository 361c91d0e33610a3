/* checkpoint: a snapshot (snapshot.h) plus what it takes to continue the
 * run bit for bit: group Run (clock, step count, integrator, dt, damping,
 * precision, backend, softening, G, box, dims, physical units), group Kernel (the kernel
 * configuration in use), group Force (the force law, complete), group
 * Output (the numbered series' counters and the render view) and, for an
 * integrator with state of its own, group Integrator (attribute current:
 * whether the fields describe the state; one dataset per checkpoint field
 * of the integrator, n x comps doubles, when they do).  Written
 * atomically like every snapshot; read back (rejecting text files and plain
 * snapshots with a message saying so) and turned into a simulation again. */
#ifndef ORR_CHECKPOINT_H
#define ORR_CHECKPOINT_H

#include <stddef.h>
#include "law.h"
#include "render.h"
#include "sim.h"
#include "snapshot.h"

/* What a run carries from one output to the next, per simulation. */
typedef struct {
    long snapshot;          /* the next number for a snapshot path pattern (0) */
    long frame;             /* the next number for a frame path pattern (0) */
    orr_render_view view;   /* the frames' extent and colour range */
} orr_output_state;

/* Writes a checkpoint of s (out may be NULL: counters 0, no view), its
 * external fields and frame included (groups Fields and Frame: every field's
 * code, params and flags as they are, the frame's start and its centre's
 * orbit so far, so a restart compiles the same kernels and follows the same
 * centre).  Over
 * several ranks every rank calls it, rank 0 writes, and every rank returns
 * rank 0's result (orr_sim_write_once). */
orr_status orr_checkpoint_write(orr_sim *s, const char *path, const orr_output_state *out,
                                orr_error *err);

/* A checkpoint read back. */
typedef struct {
    orr_sim_config config;   /* as the run was made (tune off); strings point below */
    char integrator[32];
    char force[64];
    char backend[16];        /* where it ran: "cpu" or "cuda" (config.backend the same) */
    orr_kspec kspec;         /* the kernel configuration it ran with */
    char kspec_source[16];   /* where that came from: "tuned", "store", "default" */
    int nhlaunch;            /* block steps on the GPU: the force + jerk launches per
                                bucket of active bodies (htune.h), 0 when absent */
    orr_hlaunch hlaunch[ORR_HBUCKETS];
    double time;
    double time_c;           /* the clock's rounding compensation (0 when absent) */
    long steps;
    orr_output_state output;
    orr_snapshot bodies;
    orr_law law;             /* the force law as stored (config.law points here) */
    orr_fieldset fields;     /* the external fields as stored (config.fields points here) */
    double *frame_nodes;     /* the frame's centre's orbit (frame.h: ORR_FRAME_NODE doubles
                                a node; heap), NULL without a frame */
    long frame_count;
    int have_law;            /* 0 for a checkpoint that names its law only */
    int integ_current;       /* its fields describe the state (Integrator/current; 1 when
                                absent); 0: none stored, the integrator starts afresh */
    int nfields;             /* the integrator's checkpoint fields (group Integrator) */
    char field_name[ORR_INTEG_MAX_FIELDS][32];
    int field_comps[ORR_INTEG_MAX_FIELDS];
    double *field[ORR_INTEG_MAX_FIELDS];   /* n * comps values each (heap) */
} orr_checkpoint;

orr_status orr_checkpoint_read(const char *path, orr_checkpoint *ck, orr_error *err);
void orr_checkpoint_free(orr_checkpoint *ck);

/* Creates the simulation ck describes (with ck->config, whose backend, or
 * integrator_impl for an integrator of one's own, the caller may change
 * first): no tuning, the stored kernel configuration, the bodies, the
 * clock, the step count and the integrator's fields.  notice as for
 * orr_sim_create. */
orr_status orr_checkpoint_restore(const orr_checkpoint *ck, orr_sim **out, char *notice,
                                  size_t notice_size, orr_error *err);

#endif
