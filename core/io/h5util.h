/* h5util: what orrery's HDF5 files share, private to snapshot.c and
 * checkpoint.c (this header is not part of the library's interface).
 * HDF5's own error printing is switched off (the library never prints) and
 * its innermost reason goes into messages that name the file; typed
 * attribute and dataset writers; checked readers that say what is wrong
 * ("PartType1/Masses row 3 is not finite (nan)"); an HDF5 file written
 * atomically (outfile.h) in the 1.8 file format; and the GADGET-layout
 * bodies that snapshots are and checkpoints extend (snapshot.c).  Every
 * HDF5 call is checked and every handle closed on every path. */
#ifndef ORR_H5UTIL_H
#define ORR_H5UTIL_H

#include <hdf5.h>
#include "err.h"
#include "snapshot.h"

/* Switches HDF5's error printing off (once; before the first HDF5 call). */
void orr_h5_quiet(void);
/* The innermost message on HDF5's error stack, copied into buf (200 bytes),
 * the stack then cleared; "HDF5 error" when there is none.  Returns buf. */
const char *orr_h5_reason(char *buf);
/* Closes *id with closer when it is open (>= 0) and sets it to -1. */
void orr_h5_close(hid_t *id, herr_t (*closer)(hid_t));

/* ---- writing (each returns < 0 on failure; the caller reports it) ---------- */

/* Attribute name of loc: count values (0: a scalar) of mtype in memory,
 * stored as ftype. */
herr_t orr_h5_put_attr(hid_t loc, const char *name, hid_t ftype, hid_t mtype, hsize_t count,
                       const void *v);
herr_t orr_h5_put_double(hid_t loc, const char *name, double v);
herr_t orr_h5_put_doubles(hid_t loc, const char *name, const double *v, hsize_t count);
herr_t orr_h5_put_int(hid_t loc, const char *name, int v);
herr_t orr_h5_put_long(hid_t loc, const char *name, long v);
/* A fixed-length, NUL-terminated string attribute. */
herr_t orr_h5_put_string(hid_t loc, const char *name, const char *v);
/* A rows x cols (cols 0: 1-D) dataset from data in mtype. */
herr_t orr_h5_put_dataset(hid_t g, const char *name, hid_t ftype, hid_t mtype, hsize_t rows,
                          hsize_t cols, const void *data);
/* Records an HDF5 failure while writing: "cannot write 'PATH': WHAT: REASON"
 * (ORR_ERR_IO, returned). */
orr_status orr_h5_write_failed(const char *path, const char *what, orr_error *err);

/* What orr_h5_write_atomic's caller puts in the file. */
typedef orr_status (*orr_h5_fill_fn)(hid_t file, void *ctx, orr_error *err);
/* Writes the HDF5 file path atomically (outfile.h: missing directories
 * created, a temporary file renamed into place, removed on failure) in the
 * HDF5 1.8 file format (checksummed metadata, so damage is reported rather
 * than parsed; readable by HDF5 1.8 and later): creates it, calls
 * fill(file, ctx, err), flushes, closes and commits. */
orr_status orr_h5_write_atomic(const char *path, orr_h5_fill_fn fill, void *ctx, orr_error *err);

/* ---- reading ------------------------------------------------------------------ */

/* Opens an existing HDF5 file for reading into *file (-1 on failure):
 * "cannot read 'PATH': No such file or directory", "is a directory", "not an
 * HDF5 file (nor .txt or .csv text output)", "damaged or truncated HDF5 file
 * (REASON)". */
orr_status orr_h5_open_read(const char *path, hid_t *file, orr_error *err);
/* Attribute where/name of loc as count values of mtype (numeric in the
 * file) into out.  Returns 1, 0 when absent, -1 with err set. */
int orr_h5_get_attr(hid_t loc, const char *where, const char *name, hid_t mtype, hssize_t count,
                    void *out, const char *path, orr_error *err);
/* A string attribute (fixed or variable length) into out[size]; 1, 0, -1
 * as orr_h5_get_attr (-1 too for a string that does not fit: never cut). */
int orr_h5_get_string(hid_t loc, const char *where, const char *name, char *out, size_t size,
                      const char *path, orr_error *err);
/* Dataset where/name of g as rows x cols doubles (cols 0: 1-D) into out,
 * every value finite, and >= 0 when nonneg; integer data only when ints.
 * Returns 1, 0 when absent, -1 with err set.  With out NULL only the type
 * and the shape are checked (nothing is read). */
int orr_h5_get_dataset(hid_t g, const char *where, const char *name, long long rows, int cols,
                       int ints, int nonneg, double *out, const char *path, orr_error *err);

/* ---- the GADGET layout (snapshot.c), which checkpoints extend ---------------- */

/* Writes the bodies of s to path as a GADGET-4 snapshot (orr_snapshot_write),
 * with the force law's attributes as PartType1 datasets after extra, and
 * then, when more is not NULL, more(file, ctx, err) for further groups. */
orr_status orr_snapshot_write_with(orr_sim *s, const char *path, const orr_snapshot_field *extra,
                                   int nextra, orr_h5_fill_fn more, void *ctx, orr_error *err);
/* Reads the bodies of an open GADGET-layout file (orr_snapshot_read's HDF5
 * half) into out (the caller frees it on failure too). */
orr_status orr_snapshot_read_h5(hid_t file, const char *path, orr_snapshot *out, orr_error *err);

#endif
