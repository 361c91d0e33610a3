/* snapshot: the bodies in HDF5 files (libhdf5) that other tools read, and
 * checkpoints to continue a run from.
 *
 * Snapshots use the GADGET-4 layout, so yt (gadget_hdf5), h5py scripts and
 * GADGET tools open them: group Header (NumPart_ThisFile, NumPart_Total,
 * NumPart_Total_HighWord, MassTable, Time, Redshift, BoxSize,
 * NumFilesPerSnapshot, Omega0, OmegaLambda, HubbleParam, Flag_*), group
 * Units (orrery's N-body units, G = the simulation's G, expressed in cgs:
 * see docs/LUA_API.md) and group PartType1 holding every body: Coordinates
 * (n x 3), Velocities (n x 3), Masses (n; MassTable[1] = 0), ParticleIDs
 * (n, uint64, 1-based like the text output's id column) and any extra
 * per-body datasets the caller passes (orr_snapshot_field).
 *
 * A checkpoint is a snapshot plus what it takes to continue the run bit for
 * bit: group Run (clock, step count, integrator, dt, damping, precision,
 * backend, softening, G, box, dims), group Kernel (the kernel configuration
 * in use), group Force (the force law) and group Output (the numbered
 * series' counters and the render view).
 *
 * Every file is written atomically (outfile.h), in the HDF5 1.8 file format
 * (checksummed metadata: damage is reported, not parsed; HDF5 1.8 and later
 * read it).  The reader takes GADGET
 * layout files from any tool (PartType0..5, float or double, masses from
 * MassTable where a type has no Masses) and orrery's .txt/.csv output, and
 * rejects bad input with a message naming the file and the problem.
 * HDF5's own error printing is switched off on first use. */
#ifndef ORR_SNAPSHOT_H
#define ORR_SNAPSHOT_H

#include <stddef.h>
#include "render.h"
#include "sim.h"
#include "law.h"

/* An extra per-body dataset for PartType1, e.g. {"charge", q} with n values
 * in body order.  Names: 1..63 letters, digits or '_', not one of the
 * standard datasets, no duplicates. */
typedef struct {
    const char *name;
    const double *values;
} orr_snapshot_field;

/* Writes the bodies of s as a GADGET-4 HDF5 snapshot with the extra
 * datasets extra[0..nextra) (extra may be NULL when nextra is 0). */
orr_status orr_snapshot_write(orr_sim *s, const char *path, const orr_snapshot_field *extra,
                              int nextra, orr_error *err);

/* A per-body column read back (heap). */
typedef struct {
    char name[64];
    double *values;   /* n values */
} orr_snapshot_column;

/* Bodies read from a file (all heap; orr_snapshot_free). */
typedef struct {
    long n;
    double *pos;                  /* 4n: x y z m */
    double *vel;                  /* 3n */
    double time;                  /* Header Time (0 for text files) */
    int nextra;
    orr_snapshot_column *extra;   /* the other per-body datasets, when all bodies are of one
                                     particle type (1-D numeric, n rows) */
} orr_snapshot;

/* Reads a GADGET-layout HDF5 file (.hdf5, .h5 or any name HDF5 recognises)
 * or orrery's text output (.txt, .csv).  Messages start "cannot read
 * 'PATH': " and say what is wrong ("PartType1/Coordinates has 99 rows but
 * NumPart_ThisFile[1] is 100", "PartType1/Masses[3] is nan", ...). */
orr_status orr_snapshot_read(const char *path, orr_snapshot *out, orr_error *err);
void orr_snapshot_free(orr_snapshot *snap);

/* ---- checkpoints ------------------------------------------------------------ */

/* What a run carries from one output to the next, per simulation. */
typedef struct {
    long snapshot;          /* the next number for a snapshot path pattern (0) */
    long frame;             /* the next number for a frame path pattern (0) */
    orr_render_view view;   /* the frames' extent and colour range */
} orr_output_state;

/* Writes a checkpoint of s (out may be NULL: counters 0, no view). */
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
    double time;
    double time_c;           /* the clock's rounding compensation (0 when absent) */
    long steps;
    orr_output_state output;
    orr_snapshot bodies;
    orr_law law;             /* the force law as stored (config.law points here) */
    int have_law;            /* 0 for a checkpoint that names its law only */
} orr_checkpoint;

orr_status orr_checkpoint_read(const char *path, orr_checkpoint *ck, orr_error *err);
void orr_checkpoint_free(orr_checkpoint *ck);

/* Creates the simulation ck describes (with ck->config, whose backend the
 * caller may change first): no tuning, the stored kernel configuration, the
 * bodies, the clock and the step count.  notice as for orr_sim_create. */
orr_status orr_checkpoint_restore(const orr_checkpoint *ck, orr_sim **out, char *notice,
                                  size_t notice_size, orr_error *err);

#endif
