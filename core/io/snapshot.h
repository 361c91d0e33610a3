/* snapshot: the bodies in HDF5 files (libhdf5) that other tools read.
 *
 * Snapshots use the GADGET-4 layout, so yt (gadget_hdf5), h5py scripts and
 * GADGET tools open them: group Header (NumPart_ThisFile, NumPart_Total,
 * NumPart_Total_HighWord, MassTable, Time, Redshift, BoxSize,
 * NumFilesPerSnapshot, Omega0, OmegaLambda, HubbleParam,
 * ComovingIntegrationOn = 0, Time_GYR, the units in cgs, Flag_*), group
 * Units (UnitLength_in_cm, UnitMass_in_g, UnitVelocity_in_cm_per_s,
 * UnitTime_in_s: the simulation's physical units, or for N-body units the
 * galactic reading of them, UnitSystem "physical" or "nbody"; units.h) and
 * group PartType1 holding every body: Coordinates (n x 3), Velocities
 * (n x 3), Masses (n; MassTable[1] = 0), ParticleIDs (n, uint64, 1-based
 * like the text output's id column), each with its unit in attributes as
 * GADGET-4 and EAGLE write them (never comoving, no factors of h), the
 * force law's per-body attributes and any extra per-body datasets the
 * caller passes (orr_snapshot_field).  Checkpoints (checkpoint.h) extend
 * this layout.
 *
 * Every file is written atomically (outfile.h), in the HDF5 1.8 file format
 * (checksummed metadata: damage is reported, not parsed; HDF5 1.8 and later
 * read it).  The reader takes GADGET layout files from any tool
 * (PartType0..5, float or double, masses from MassTable where a type has no
 * Masses) and orrery's .txt/.csv output (textio.h), and rejects bad input
 * with a message naming the file and the problem.  HDF5's own error
 * printing is switched off on first use. */
#ifndef ORR_SNAPSHOT_H
#define ORR_SNAPSHOT_H

#include <stddef.h>
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
 * datasets extra[0..nextra) (extra may be NULL when nextra is 0).  Over
 * several ranks every rank calls it, rank 0 writes, and every rank returns
 * rank 0's result (orr_sim_write_once). */
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
    int frame;                    /* 1: positions and velocities relative to a frame's
                                     centre (Header FrameCenter, FrameVelocity) */
    double frame_center[3], frame_velocity[3];
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

#endif
