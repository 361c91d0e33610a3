/* h5util: the HDF5 helpers that snapshots and checkpoints share (see
 * h5util.h). */
#include "h5util.h"
#include "outfile.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* HDF5 prints its error stack by default: the library never prints. */
void orr_h5_quiet(void)
{
    static int done;
    if (!done) {
        H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
        done = 1;
    }
}

static herr_t first_error(unsigned n, const H5E_error2_t *e, void *data)
{
    char *buf = data;
    (void)n;
    if (!buf[0] && e->desc && e->desc[0])
        snprintf(buf, 200, "%s", e->desc);
    return 0;
}

/* The innermost message on HDF5's error stack (buf[200]), then cleared. */
const char *orr_h5_reason(char *buf)
{
    buf[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_error, buf);
    H5Eclear2(H5E_DEFAULT);
    if (!buf[0])
        snprintf(buf, 200, "HDF5 error");
    return buf;
}

void orr_h5_close(hid_t *id, herr_t (*closer)(hid_t))
{
    if (*id >= 0)
        closer(*id);
    *id = -1;
}

/* ---- writing ------------------------------------------------------------------ */

herr_t orr_h5_put_attr(hid_t loc, const char *name, hid_t ftype, hid_t mtype, hsize_t count,
                       const void *v)
{
    hid_t space = count ? H5Screate_simple(1, &count, NULL) : H5Screate(H5S_SCALAR);
    if (space < 0)
        return -1;
    hid_t a = H5Acreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = a < 0 ? -1 : H5Awrite(a, mtype, v);
    if (a >= 0 && H5Aclose(a) < 0)
        r = -1;
    H5Sclose(space);
    return r;
}

herr_t orr_h5_put_double(hid_t loc, const char *name, double v)
{
    return orr_h5_put_attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, &v);
}

herr_t orr_h5_put_doubles(hid_t loc, const char *name, const double *v, hsize_t count)
{
    return orr_h5_put_attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, count, v);
}

herr_t orr_h5_put_int(hid_t loc, const char *name, int v)
{
    return orr_h5_put_attr(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT, 0, &v);
}

herr_t orr_h5_put_long(hid_t loc, const char *name, long v)
{
    long long x = v;
    return orr_h5_put_attr(loc, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, 0, &x);
}

herr_t orr_h5_put_string(hid_t loc, const char *name, const char *v)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return -1;
    herr_t r = H5Tset_size(t, strlen(v) + 1);
    if (r >= 0)
        r = H5Tset_strpad(t, H5T_STR_NULLTERM);
    if (r >= 0)
        r = orr_h5_put_attr(loc, name, t, t, 0, v);
    H5Tclose(t);
    return r;
}

/* A rows x cols (cols 0: 1-D) dataset from data in mtype. */
herr_t orr_h5_put_dataset(hid_t g, const char *name, hid_t ftype, hid_t mtype, hsize_t rows,
                          hsize_t cols, const void *data)
{
    hsize_t dims[2] = {rows, cols};
    hid_t space = H5Screate_simple(cols ? 2 : 1, dims, NULL);
    if (space < 0)
        return -1;
    hid_t d = H5Dcreate2(g, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = d < 0 ? -1 : H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    if (d >= 0 && H5Dclose(d) < 0)
        r = -1;
    H5Sclose(space);
    return r;
}

/* Records an HDF5 failure while writing: "cannot write 'p': what: reason". */
orr_status orr_h5_write_failed(const char *path, const char *what, orr_error *err)
{
    char why[200];
    return orr_fail(err, ORR_ERR_IO, "cannot write '%s': %s: %s", path, what, orr_h5_reason(why));
}

orr_status orr_h5_write_atomic(const char *path, orr_h5_fill_fn fill, void *ctx, orr_error *err)
{
    orr_h5_quiet();
    orr_outfile f;
    orr_status st = orr_outfile_begin(&f, path, 0, err);
    if (st)
        return st;
    /* the 1.8 file format: metadata with checksums, so damage is detected
     * rather than parsed; readable by HDF5 1.8 and later */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0)
        H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18);
    hid_t file = H5Fcreate(orr_outfile_name(&f), H5F_ACC_TRUNC, H5P_DEFAULT,
                           fapl >= 0 ? fapl : H5P_DEFAULT);
    orr_h5_close(&fapl, H5Pclose);
    if (file < 0) {
        st = orr_h5_write_failed(path, "cannot create the temporary file", err);
        orr_outfile_abort(&f);
        return st;
    }
    st = fill(file, ctx, err);
    if (!st && H5Fflush(file, H5F_SCOPE_GLOBAL) < 0)
        st = orr_h5_write_failed(path, "flushing", err);
    if (H5Fclose(file) < 0 && !st)
        st = orr_h5_write_failed(path, "closing", err);
    if (st) {
        orr_outfile_abort(&f);
        return st;
    }
    return orr_outfile_commit(&f, err);
}

/* ---- reading ------------------------------------------------------------------ */

static const char *class_name(H5T_class_t c)
{
    switch (c) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "floating point";
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    case H5T_ARRAY: return "array";
    default: return "non-numeric";
    }
}

/* Attribute where/name as count values of mtype (numeric in the file).
 * Returns 1, 0 when absent, -1 with err set. */
int orr_h5_get_attr(hid_t loc, const char *where, const char *name, hid_t mtype, hssize_t count,
                    void *out, const char *path, orr_error *err)
{
    char why[200];
    htri_t ex = H5Aexists(loc, name);
    if (ex == 0)
        return 0;
    hid_t a = ex > 0 ? H5Aopen(loc, name, H5P_DEFAULT) : -1;
    hid_t t = a >= 0 ? H5Aget_type(a) : -1, sp = a >= 0 ? H5Aget_space(a) : -1;
    int rc = -1;
    if (t < 0 || sp < 0) {
        orr_read_failed(path, err, "%s/%s: %s", where, name, orr_h5_reason(why));
    } else if (H5Tget_class(t) != H5T_INTEGER && H5Tget_class(t) != H5T_FLOAT) {
        orr_read_failed(path, err, "%s/%s is %s (expected a number)", where, name,
                        class_name(H5Tget_class(t)));
    } else if (H5Sget_simple_extent_npoints(sp) != count) {
        orr_read_failed(path, err, "%s/%s has %lld values (expected %lld)", where, name,
                        (long long)H5Sget_simple_extent_npoints(sp), (long long)count);
    } else if (H5Aread(a, mtype, out) < 0) {
        orr_read_failed(path, err, "%s/%s: %s", where, name, orr_h5_reason(why));
    } else {
        rc = 1;
    }
    orr_h5_close(&sp, H5Sclose);
    orr_h5_close(&t, H5Tclose);
    orr_h5_close(&a, H5Aclose);
    return rc;
}

/* A string attribute (fixed or variable length) into out[size]. */
/* s into out[size], or -1 with err set when it does not fit (never cut). */
static int put_string(char *out, size_t size, const char *s, const char *where, const char *name,
                      const char *path, orr_error *err)
{
    size_t len = strlen(s);
    if (len >= size) {
        orr_read_failed(path, err, "%s/%s is too long (%zu bytes; at most %zu)", where, name, len,
                        size ? size - 1 : 0);
        return -1;
    }
    memcpy(out, s, len + 1);
    return 1;
}

int orr_h5_get_string(hid_t loc, const char *where, const char *name, char *out, size_t size,
                      const char *path, orr_error *err)
{
    char why[200];
    htri_t ex = H5Aexists(loc, name);
    if (ex == 0)
        return 0;
    hid_t a = ex > 0 ? H5Aopen(loc, name, H5P_DEFAULT) : -1;
    hid_t t = a >= 0 ? H5Aget_type(a) : -1, mt = -1, sp = a >= 0 ? H5Aget_space(a) : -1;
    int rc = -1;
    if (t < 0 || sp < 0) {
        orr_read_failed(path, err, "%s/%s: %s", where, name, orr_h5_reason(why));
    } else if (H5Tget_class(t) != H5T_STRING || H5Sget_simple_extent_npoints(sp) != 1) {
        orr_read_failed(path, err, "%s/%s is not a string", where, name);
    } else if (H5Tis_variable_str(t) > 0) {
        char *p = NULL;
        mt = H5Tcopy(H5T_C_S1);
        if (mt >= 0 && H5Tset_size(mt, H5T_VARIABLE) >= 0 && H5Aread(a, mt, &p) >= 0 && p) {
            rc = put_string(out, size, p, where, name, path, err);
            H5free_memory(p);
        } else {
            orr_read_failed(path, err, "%s/%s: %s", where, name, orr_h5_reason(why));
        }
    } else {
        size_t len = H5Tget_size(t);
        char *buf = calloc(1, len + 1);
        if (buf && H5Aread(a, t, buf) >= 0) {
            while (len > 0 && (buf[len - 1] == ' ' || buf[len - 1] == '\0'))
                buf[--len] = '\0';
            rc = put_string(out, size, buf, where, name, path, err);
        } else {
            orr_read_failed(path, err, "%s/%s: %s", where, name,
                            buf ? orr_h5_reason(why) : "out of memory");
        }
        free(buf);
    }
    orr_h5_close(&mt, H5Tclose);
    orr_h5_close(&sp, H5Sclose);
    orr_h5_close(&t, H5Tclose);
    orr_h5_close(&a, H5Aclose);
    return rc;
}

/* Dataset where/name as rows x cols doubles (cols 0: 1-D), every value
 * finite, and >= 0 when nonneg.  Integer data only when ints.  Returns 1,
 * 0 when absent, -1 with err set.  out NULL: type and shape only. */
int orr_h5_get_dataset(hid_t g, const char *where, const char *name, long long rows, int cols,
                       int ints, int nonneg, double *out, const char *path, orr_error *err)
{
    char why[200];
    htri_t ex = H5Lexists(g, name, H5P_DEFAULT);
    if (ex == 0)
        return 0;
    hid_t d = ex > 0 ? H5Dopen2(g, name, H5P_DEFAULT) : -1;
    if (d < 0) {
        H5Eclear2(H5E_DEFAULT);
        orr_read_failed(path, err, "%s/%s is not a dataset", where, name);
        return -1;
    }
    hid_t t = H5Dget_type(d), sp = H5Dget_space(d);
    int rc = -1, rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    hsize_t dims[2] = {0, 0};
    H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    if (rank >= 1 && rank <= 2)
        H5Sget_simple_extent_dims(sp, dims, NULL);
    if (t < 0 || sp < 0 || rank < 0) {
        orr_read_failed(path, err, "%s/%s: %s", where, name, orr_h5_reason(why));
    } else if (cls != H5T_FLOAT && !(ints && cls == H5T_INTEGER)) {
        orr_read_failed(path, err, "%s/%s is %s (expected floating point)", where, name,
                        class_name(cls));
    } else if (cols ? rank != 2 || dims[1] != (hsize_t)cols : rank != 1) {
        char shape[64] = "scalar";
        if (rank >= 1 && rank <= 2)
            snprintf(shape, sizeof shape, rank == 1 ? "(%llu)" : "(%llu, %llu)",
                     (unsigned long long)dims[0], (unsigned long long)dims[1]);
        else if (rank > 2)
            snprintf(shape, sizeof shape, "%d dimensions", rank);
        if (cols)
            orr_read_failed(path, err, "%s/%s has shape %s (expected (%lld, %d))", where, name,
                            shape, rows, cols);
        else
            orr_read_failed(path, err, "%s/%s has shape %s (expected (%lld))", where, name,
                            shape, rows);
    } else if ((long long)dims[0] != rows) {
        orr_read_failed(path, err, "%s/%s has %llu rows but the header gives %lld bodies", where,
                        name, (unsigned long long)dims[0], rows);
    } else if (!out) {
        rc = 1;   /* checked, not read */
    } else if (rows > 0 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0) {
        orr_read_failed(path, err, "%s/%s: %s", where, name, orr_h5_reason(why));
    } else {
        rc = 1;
        const int w = cols ? cols : 1;
        for (long long i = 0; rc > 0 && i < rows * w; i++) {
            if (!isfinite(out[i])) {
                orr_read_failed(path, err, "%s/%s row %lld is not finite (%g)", where, name,
                                i / w, out[i]);
                rc = -1;
            } else if (nonneg && out[i] < 0) {
                orr_read_failed(path, err, "%s/%s row %lld is negative (%.17g)", where, name,
                                i / w, out[i]);
                rc = -1;
            }
        }
    }
    orr_h5_close(&sp, H5Sclose);
    orr_h5_close(&t, H5Tclose);
    orr_h5_close(&d, H5Dclose);
    return rc;
}

/* Opens an existing HDF5 file for reading. */
orr_status orr_h5_open_read(const char *path, hid_t *file, orr_error *err)
{
    char why[200];
    struct stat sb;
    *file = -1;
    if (stat(path, &sb) != 0)
        return orr_read_failed(path, err, "%s", strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return orr_read_failed(path, err, "is a directory");
    htri_t is = H5Fis_hdf5(path);
    if (is <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return orr_read_failed(path, err, "not an HDF5 file (nor .txt or .csv text output)");
    }
    *file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (*file < 0)
        return orr_read_failed(path, err, "damaged or truncated HDF5 file (%s)",
                               orr_h5_reason(why));
    return ORR_OK;
}
