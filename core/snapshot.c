/* snapshot: GADGET-4 HDF5 snapshots, checkpoints and reading them back, and
 * reading orrery's text output (see snapshot.h).  Every HDF5 call is
 * checked; a failure becomes a message naming the file, the object and
 * HDF5's own innermost reason, and every handle is closed on every path. */
#include "snapshot.h"
#include "law.h"
#include "outfile.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define NTYPES 6              /* GADGET particle types */
#define CHECKPOINT_FORMAT 1   /* Run/format: bump when the layout changes */

/* orrery's units expressed in cgs for the Units group: 1 kpc, 1e10 solar
 * masses and the velocity that makes G (the simulation's) hold. */
#define KPC_CM 3.0856775814913673e21
#define MASS_G 1.988409870698051e43
#define G_CGS 6.67430e-8

static const char *const standard_sets[] = {"Coordinates", "Velocities", "Masses", "ParticleIDs",
                                            NULL};

/* HDF5 prints its error stack by default: the library never prints. */
static void h5_quiet(void)
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
static const char *h5_reason(char *buf)
{
    buf[0] = '\0';
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_error, buf);
    H5Eclear2(H5E_DEFAULT);
    if (!buf[0])
        snprintf(buf, 200, "HDF5 error");
    return buf;
}

static void close_id(hid_t *id, herr_t (*closer)(hid_t))
{
    if (*id >= 0)
        closer(*id);
    *id = -1;
}

/* ---- writing ------------------------------------------------------------------ */

static herr_t put_attr(hid_t loc, const char *name, hid_t ftype, hid_t mtype, hsize_t count,
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

static herr_t put_double(hid_t loc, const char *name, double v)
{
    return put_attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, &v);
}

static herr_t put_doubles(hid_t loc, const char *name, const double *v, hsize_t count)
{
    return put_attr(loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, count, v);
}

static herr_t put_int(hid_t loc, const char *name, int v)
{
    return put_attr(loc, name, H5T_STD_I32LE, H5T_NATIVE_INT, 0, &v);
}

static herr_t put_long(hid_t loc, const char *name, long v)
{
    long long x = v;
    return put_attr(loc, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, 0, &x);
}

static herr_t put_string(hid_t loc, const char *name, const char *v)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return -1;
    herr_t r = H5Tset_size(t, strlen(v) + 1);
    if (r >= 0)
        r = H5Tset_strpad(t, H5T_STR_NULLTERM);
    if (r >= 0)
        r = put_attr(loc, name, t, t, 0, v);
    H5Tclose(t);
    return r;
}

/* A rows x cols (cols 0: 1-D) dataset from data in mtype. */
static herr_t put_dataset(hid_t g, const char *name, hid_t ftype, hid_t mtype, hsize_t rows,
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

static orr_status check_fields(const char *path, long n, const orr_snapshot_field *extra,
                               int nextra, orr_error *err)
{
    (void)n;
    if (nextra < 0 || (nextra > 0 && !extra))
        return orr_fail(err, ORR_ERR_ARG, "cannot write '%s': bad extra dataset list", path);
    for (int k = 0; k < nextra; k++) {
        const char *name = extra[k].name;
        size_t len = name ? strlen(name) : 0;
        int ok = len >= 1 && len <= 63 && extra[k].values;
        for (size_t i = 0; ok && i < len; i++)
            ok = isalnum((unsigned char)name[i]) || name[i] == '_';
        if (!ok)
            return orr_fail(err, ORR_ERR_ARG,
                            "cannot write '%s': extra dataset name '%s' must be 1 to 63 letters, "
                            "digits or '_', with values",
                            path, name ? name : "(null)");
        for (int i = 0; standard_sets[i]; i++)
            if (strcmp(name, standard_sets[i]) == 0)
                return orr_fail(err, ORR_ERR_ARG,
                                "cannot write '%s': extra dataset '%s' would replace the "
                                "standard one",
                                path, name);
        for (int j = 0; j < k; j++)
            if (strcmp(name, extra[j].name) == 0)
                return orr_fail(err, ORR_ERR_ARG,
                                "cannot write '%s': extra dataset '%s' given twice", path, name);
    }
    return ORR_OK;
}

/* Records an HDF5 failure while writing: "cannot write 'p': what: reason". */
static orr_status write_failed(const char *path, const char *what, orr_error *err)
{
    char why[200];
    return orr_fail(err, ORR_ERR_IO, "cannot write '%s': %s: %s", path, what, h5_reason(why));
}

/* Header, Units and PartType1 of the bodies of s (state already synced). */
static orr_status write_gadget(hid_t file, orr_sim *s, const char *path,
                               const orr_snapshot_field *extra, int nextra, orr_error *err)
{
    const orr_sim_config *c = orr_sim_config_of(s);
    const long n = orr_sim_n(s);
    double *pos, *vel;
    orr_status st = orr_sim_pos(s, &pos, err);
    if (!st)
        st = orr_sim_vel(s, &vel, err);
    if (st)
        return st;
    hid_t g = -1;
    const char *what = "Header";
    double *buf = malloc(sizeof(double) * 3 * (size_t)n);
    uint64_t *ids = malloc(sizeof(uint64_t) * (size_t)n);
    if (!buf || !ids) {
        free(buf);
        free(ids);
        return orr_fail(err, ORR_ERR_NOMEM, "cannot write '%s': out of memory", path);
    }

    /* Header */
    int npart[NTYPES] = {0, (int)n, 0, 0, 0, 0};
    unsigned long long total[NTYPES] = {0, (unsigned long long)n, 0, 0, 0, 0};
    unsigned high[NTYPES] = {0, (unsigned)((unsigned long long)n >> 32), 0, 0, 0, 0};
    double masstab[NTYPES] = {0, 0, 0, 0, 0, 0};
    double boxsize = 0;
    for (int k = 2; k >= 0; k--)
        if (c->box[k] > 0)
            boxsize = c->box[k];   /* x's, else the first periodic axis' */
    g = H5Gcreate2(file, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = g < 0 ? -1 : put_attr(g, "NumPart_ThisFile", H5T_STD_I32LE, H5T_NATIVE_INT, NTYPES,
                                     npart);
    if (r >= 0)
        r = put_attr(g, "NumPart_Total", H5T_STD_U64LE, H5T_NATIVE_ULLONG, NTYPES, total);
    if (r >= 0)
        r = put_attr(g, "NumPart_Total_HighWord", H5T_STD_U32LE, H5T_NATIVE_UINT, NTYPES, high);
    if (r >= 0)
        r = put_doubles(g, "MassTable", masstab, NTYPES);
    if (r >= 0)
        r = put_double(g, "Time", orr_sim_time(s));
    if (r >= 0)
        r = put_double(g, "Redshift", 0);
    if (r >= 0)
        r = put_double(g, "BoxSize", boxsize);
    if (r >= 0)
        r = put_int(g, "NumFilesPerSnapshot", 1);
    if (r >= 0)
        r = put_double(g, "Omega0", 0);
    if (r >= 0)
        r = put_double(g, "OmegaLambda", 0);
    if (r >= 0)
        r = put_double(g, "HubbleParam", 1);
    static const char *const flags[] = {"Flag_Sfr", "Flag_Cooling", "Flag_Feedback",
                                        "Flag_StellarAge", "Flag_Metals", "Flag_Entropy_ICs",
                                        "Flag_IC_Info", NULL};
    for (int k = 0; r >= 0 && flags[k]; k++)
        r = put_int(g, flags[k], 0);
    if (r >= 0)
        r = put_int(g, "Flag_DoublePrecision", 1);
    if (r >= 0)
        r = put_string(g, "Code", "orrery");
    close_id(&g, H5Gclose);

    /* Units: N-body units with the simulation's G, as 1 kpc, 1e10 Msun and
     * the velocity sqrt(G_cgs M / (G L)) */
    if (r >= 0) {
        what = "Units";
        double v = c->G > 0 ? sqrt(G_CGS * MASS_G / (c->G * KPC_CM)) : 1e5;
        g = H5Gcreate2(file, "Units", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        r = g < 0 ? -1 : 0;
        if (r >= 0)
            r = put_double(g, "UnitLength_in_cm", KPC_CM);
        if (r >= 0)
            r = put_double(g, "UnitMass_in_g", MASS_G);
        if (r >= 0)
            r = put_double(g, "UnitVelocity_in_cm_per_s", v);
        if (r >= 0)
            r = put_double(g, "UnitTime_in_s", KPC_CM / v);
        if (r >= 0)
            r = put_string(g, "UnitSystem", "nbody");
        if (r >= 0)
            r = put_double(g, "G", c->G);
        close_id(&g, H5Gclose);
    }

    /* PartType1: every body */
    if (r >= 0) {
        what = "PartType1";
        g = H5Gcreate2(file, "PartType1", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        r = g < 0 ? -1 : 0;
    }
    if (r >= 0) {
        what = "PartType1/Coordinates";
        for (long i = 0; i < n; i++)
            memcpy(buf + 3 * i, pos + 4 * i, 3 * sizeof(double));
        r = put_dataset(g, "Coordinates", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, (hsize_t)n, 3, buf);
    }
    if (r >= 0) {
        what = "PartType1/Velocities";
        r = put_dataset(g, "Velocities", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, (hsize_t)n, 3, vel);
    }
    if (r >= 0) {
        what = "PartType1/Masses";
        for (long i = 0; i < n; i++)
            buf[i] = pos[4 * i + 3];
        r = put_dataset(g, "Masses", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, (hsize_t)n, 0, buf);
    }
    if (r >= 0) {
        what = "PartType1/ParticleIDs";
        for (long i = 0; i < n; i++)
            ids[i] = (uint64_t)i + 1;
        r = put_dataset(g, "ParticleIDs", H5T_STD_U64LE, H5T_NATIVE_UINT64, (hsize_t)n, 0, ids);
    }
    char whatbuf[96];
    for (int k = 0; r >= 0 && k < nextra; k++) {
        snprintf(whatbuf, sizeof whatbuf, "PartType1/%s", extra[k].name);
        what = whatbuf;
        r = put_dataset(g, extra[k].name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, (hsize_t)n, 0,
                        extra[k].values);
    }
    close_id(&g, H5Gclose);
    free(buf);
    free(ids);
    return r < 0 ? write_failed(path, what, err) : ORR_OK;
}

/* Run: the clock and everything orr_sim_create needs. */
static orr_status write_run(hid_t file, orr_sim *s, const char *path, orr_error *err)
{
    const orr_sim_config *c = orr_sim_config_of(s);
    hid_t g = H5Gcreate2(file, "Run", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = g < 0 ? -1 : put_int(g, "format", CHECKPOINT_FORMAT);
    if (r >= 0)
        r = put_double(g, "time", orr_sim_time(s));
    if (r >= 0)
        r = put_double(g, "time_compensation", orr_sim_time_compensation(s));
    if (r >= 0)
        r = put_long(g, "steps", orr_sim_steps(s));
    if (r >= 0)
        r = put_double(g, "dt", c->dt);
    if (r >= 0)
        r = put_string(g, "integrator", c->integrator);
    if (r >= 0)
        r = put_double(g, "damping", c->damping);
    if (r >= 0)
        r = put_string(g, "precision", orr_precision_name(c->precision));
    if (r >= 0)
        r = put_string(g, "backend", orr_sim_engine(s)->ops->name);
    if (r >= 0)
        r = put_int(g, "device", c->device);
    if (r >= 0)
        r = put_double(g, "softening", c->softening);
    if (r >= 0)
        r = put_double(g, "G", c->G);
    if (r >= 0)
        r = put_doubles(g, "box", c->box, 3);
    if (r >= 0)
        r = put_int(g, "dims", c->dims);
    close_id(&g, H5Gclose);
    return r < 0 ? write_failed(path, "Run", err) : ORR_OK;
}

/* Kernel: the configuration the kernels were built with. */
static orr_status write_kernel(hid_t file, orr_sim *s, const char *path, orr_error *err)
{
    const char *source;
    const orr_kspec *k = orr_sim_kspec(s, &source);
    hid_t g = H5Gcreate2(file, "Kernel", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = g < 0 ? -1 : put_int(g, "block", k->launch.block);
    if (r >= 0)
        r = put_int(g, "unroll", k->launch.unroll);
    if (r >= 0)
        r = put_int(g, "split", k->launch.split);
    if (r >= 0)
        r = put_int(g, "ipt", k->launch.ipt);
    if (r >= 0)
        r = put_int(g, "ftz", k->launch.ftz);
    if (r >= 0)
        r = put_int(g, "newton", k->launch.newton);
    if (r >= 0)
        r = put_int(g, "threads", k->launch.threads);
    if (r >= 0)
        r = put_int(g, "ranges", k->launch.ranges);
    if (r >= 0)
        r = put_string(g, "source", source);
    close_id(&g, H5Gclose);
    return r < 0 ? write_failed(path, "Kernel", err) : ORR_OK;
}

/* Names joined by commas ("" for none). */
static void join_names(char *buf, size_t size, int count, const char *(*name)(const orr_law *, int),
                       const orr_law *law)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < count && used < size; k++)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", k ? "," : "", name(law, k));
}

static const char *param_name(const orr_law *law, int k)
{
    return law->params[k].name;
}

static const char *attr_name(const orr_law *law, int k)
{
    return law->attrs[k];
}

/* Force: the force law, complete (name, snippets with their origin and
 * lines, scale, params with values and runtime flags, attribute names), so
 * a restart compiles exactly the same kernels; the attribute values are
 * PartType1 datasets. */
static orr_status write_force(hid_t file, orr_sim *s, const char *path, orr_error *err)
{
    const orr_law *law = orr_sim_law(s);
    char names[ORR_LAW_MAX_PARAMS * ORR_LAW_NAME_MAX + 1];
    hid_t g = H5Gcreate2(file, "Force", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = g < 0 ? -1 : put_string(g, "name", law->name);
    if (r >= 0)
        r = put_int(g, "builtin", law->builtin);
    if (r >= 0)
        r = put_string(g, "origin", law->origin);
    if (r >= 0)
        r = put_string(g, "doc", law->doc);
    if (r >= 0)
        r = put_string(g, "scale", law->scale);
    if (r >= 0)
        r = put_int(g, "finite_at_zero", law->finite_at_zero);
    if (r >= 0)
        r = put_string(g, "pair", law->pair);
    if (r >= 0)
        r = put_int(g, "pair_line", law->pair_line);
    if (r >= 0)
        r = put_string(g, "potential", law->potential);
    if (r >= 0)
        r = put_int(g, "potential_line", law->potential_line);
    join_names(names, sizeof names, law->nparams, param_name, law);
    if (r >= 0)
        r = put_string(g, "params", names);
    if (r >= 0 && law->nparams) {
        double v[ORR_LAW_MAX_PARAMS];
        int rt[ORR_LAW_MAX_PARAMS];
        for (int k = 0; k < law->nparams; k++) {
            v[k] = law->params[k].value;
            rt[k] = law->params[k].runtime;
        }
        r = put_doubles(g, "param_values", v, (hsize_t)law->nparams);
        if (r >= 0)
            r = put_attr(g, "param_runtime", H5T_STD_I32LE, H5T_NATIVE_INT,
                         (hsize_t)law->nparams, rt);
    }
    join_names(names, sizeof names, law->nattrs, attr_name, law);
    if (r >= 0)
        r = put_string(g, "attributes", names);
    close_id(&g, H5Gclose);
    return r < 0 ? write_failed(path, "Force", err) : ORR_OK;
}

/* Output: the numbered series' counters and the render view. */
static orr_status write_output(hid_t file, const orr_output_state *o, const char *path,
                               orr_error *err)
{
    orr_output_state zero;
    if (!o) {
        memset(&zero, 0, sizeof zero);
        o = &zero;
    }
    const orr_render_view *v = &o->view;
    hid_t g = H5Gcreate2(file, "Output", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = g < 0 ? -1 : put_long(g, "snapshot", o->snapshot);
    if (r >= 0)
        r = put_long(g, "frame", o->frame);
    if (r >= 0)
        r = put_int(g, "view", v->have_view);
    if (r >= 0)
        r = put_int(g, "view_axis", v->axis);
    if (r >= 0)
        r = put_doubles(g, "view_centre", v->centre, 2);
    if (r >= 0)
        r = put_doubles(g, "view_extent", v->extent, 4);
    if (r >= 0)
        r = put_int(g, "range", v->have_range);
    if (r >= 0)
        r = put_int(g, "range_log", v->range_log);
    if (r >= 0)
        r = put_doubles(g, "range_values", v->range, 2);
    close_id(&g, H5Gclose);
    return r < 0 ? write_failed(path, "Output", err) : ORR_OK;
}

static orr_status write_all(orr_sim *s, const char *path, const orr_snapshot_field *extra,
                            int nextra, int checkpoint, const orr_output_state *out,
                            orr_error *err);

/* A snapshot, or with checkpoint set a checkpoint, written atomically. */
static orr_status write_file(orr_sim *s, const char *path, const orr_snapshot_field *extra,
                             int nextra, int checkpoint, const orr_output_state *out,
                             orr_error *err)
{
    h5_quiet();
    /* the force law's attributes go with the bodies, one dataset each */
    const orr_law *law = orr_sim_law(s);
    orr_snapshot_field *all = malloc(sizeof *all * (size_t)(nextra + law->nattrs + 1));
    if (!all)
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (nextra > 0 && extra)
        memcpy(all, extra, sizeof *all * (size_t)nextra);
    for (int a = 0; a < law->nattrs; a++) {
        double *v = NULL;
        orr_sim_attr(s, a, &v, NULL);
        all[nextra + a] = (orr_snapshot_field){law->attrs[a], v};
    }
    orr_status st = write_all(s, path, all, nextra < 0 ? nextra : nextra + law->nattrs,
                              checkpoint, out, err);
    free(all);
    return st;
}

/* write_file with the attribute datasets added. */
static orr_status write_all(orr_sim *s, const char *path, const orr_snapshot_field *extra,
                            int nextra, int checkpoint, const orr_output_state *out,
                            orr_error *err)
{
    orr_status st = check_fields(path, orr_sim_n(s), extra, nextra, err);
    /* the state being integrated: pending writes uploaded (2D and box
     * fix-ups, float rounding), then read back */
    if (!st)
        st = orr_sim_step(s, 0, NULL, err);
    if (st)
        return st;
    orr_outfile f;
    st = orr_outfile_begin(&f, path, 0, err);
    if (st)
        return st;
    /* the 1.8 file format: metadata with checksums, so damage is detected
     * rather than parsed; readable by HDF5 1.8 and later */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0)
        H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18);
    hid_t file = H5Fcreate(orr_outfile_name(&f), H5F_ACC_TRUNC, H5P_DEFAULT,
                           fapl >= 0 ? fapl : H5P_DEFAULT);
    close_id(&fapl, H5Pclose);
    if (file < 0) {
        st = write_failed(path, "cannot create the temporary file", err);
        orr_outfile_abort(&f);
        return st;
    }
    st = write_gadget(file, s, path, extra, nextra, err);
    if (!st && checkpoint)
        st = write_run(file, s, path, err);
    if (!st && checkpoint)
        st = write_kernel(file, s, path, err);
    if (!st && checkpoint)
        st = write_force(file, s, path, err);
    if (!st && checkpoint)
        st = write_output(file, out, path, err);
    if (!st && H5Fflush(file, H5F_SCOPE_GLOBAL) < 0)
        st = write_failed(path, "flushing", err);
    if (H5Fclose(file) < 0 && !st)
        st = write_failed(path, "closing", err);
    if (st) {
        orr_outfile_abort(&f);
        return st;
    }
    return orr_outfile_commit(&f, err);
}

orr_status orr_snapshot_write(orr_sim *s, const char *path, const orr_snapshot_field *extra,
                              int nextra, orr_error *err)
{
    return write_file(s, path, extra, nextra, 0, NULL, err);
}

orr_status orr_checkpoint_write(orr_sim *s, const char *path, const orr_output_state *out,
                                orr_error *err)
{
    return write_file(s, path, NULL, 0, 1, out, err);
}

/* ---- reading ------------------------------------------------------------------ */

static orr_status read_failed(const char *path, orr_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static orr_status read_failed(const char *path, orr_error *err, const char *fmt, ...)
{
    char what[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return orr_fail(err, ORR_ERR_IO, "cannot read '%s': %s", path, what);
}

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
static int get_attr(hid_t loc, const char *where, const char *name, hid_t mtype, hssize_t count,
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
        read_failed(path, err, "%s/%s: %s", where, name, h5_reason(why));
    } else if (H5Tget_class(t) != H5T_INTEGER && H5Tget_class(t) != H5T_FLOAT) {
        read_failed(path, err, "%s/%s is %s (expected a number)", where, name,
                    class_name(H5Tget_class(t)));
    } else if (H5Sget_simple_extent_npoints(sp) != count) {
        read_failed(path, err, "%s/%s has %lld values (expected %lld)", where, name,
                    (long long)H5Sget_simple_extent_npoints(sp), (long long)count);
    } else if (H5Aread(a, mtype, out) < 0) {
        read_failed(path, err, "%s/%s: %s", where, name, h5_reason(why));
    } else {
        rc = 1;
    }
    close_id(&sp, H5Sclose);
    close_id(&t, H5Tclose);
    close_id(&a, H5Aclose);
    return rc;
}

/* A string attribute (fixed or variable length) into out[size]. */
static int get_string(hid_t loc, const char *where, const char *name, char *out, size_t size,
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
        read_failed(path, err, "%s/%s: %s", where, name, h5_reason(why));
    } else if (H5Tget_class(t) != H5T_STRING || H5Sget_simple_extent_npoints(sp) != 1) {
        read_failed(path, err, "%s/%s is not a string", where, name);
    } else if (H5Tis_variable_str(t) > 0) {
        char *p = NULL;
        mt = H5Tcopy(H5T_C_S1);
        if (mt >= 0 && H5Tset_size(mt, H5T_VARIABLE) >= 0 && H5Aread(a, mt, &p) >= 0 && p) {
            snprintf(out, size, "%s", p);
            H5free_memory(p);
            rc = 1;
        } else {
            read_failed(path, err, "%s/%s: %s", where, name, h5_reason(why));
        }
    } else {
        size_t len = H5Tget_size(t);
        char *buf = calloc(1, len + 1);
        if (buf && H5Aread(a, t, buf) >= 0) {
            while (len > 0 && (buf[len - 1] == ' ' || buf[len - 1] == '\0'))
                buf[--len] = '\0';
            snprintf(out, size, "%s", buf);
            rc = 1;
        } else {
            read_failed(path, err, "%s/%s: %s", where, name, buf ? h5_reason(why) : "out of memory");
        }
        free(buf);
    }
    close_id(&mt, H5Tclose);
    close_id(&sp, H5Sclose);
    close_id(&t, H5Tclose);
    close_id(&a, H5Aclose);
    return rc;
}

/* Dataset where/name as rows x cols doubles (cols 0: 1-D), every value
 * finite, and >= 0 when nonneg.  Integer data only when ints.  Returns 1,
 * 0 when absent, -1 with err set. */
static int get_dataset(hid_t g, const char *where, const char *name, long long rows, int cols,
                       int ints, int nonneg, double *out, const char *path, orr_error *err)
{
    char why[200];
    htri_t ex = H5Lexists(g, name, H5P_DEFAULT);
    if (ex == 0)
        return 0;
    hid_t d = ex > 0 ? H5Dopen2(g, name, H5P_DEFAULT) : -1;
    if (d < 0) {
        H5Eclear2(H5E_DEFAULT);
        read_failed(path, err, "%s/%s is not a dataset", where, name);
        return -1;
    }
    hid_t t = H5Dget_type(d), sp = H5Dget_space(d);
    int rc = -1, rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    hsize_t dims[2] = {0, 0};
    H5T_class_t cls = t >= 0 ? H5Tget_class(t) : H5T_NO_CLASS;
    if (rank >= 1 && rank <= 2)
        H5Sget_simple_extent_dims(sp, dims, NULL);
    if (t < 0 || sp < 0 || rank < 0) {
        read_failed(path, err, "%s/%s: %s", where, name, h5_reason(why));
    } else if (cls != H5T_FLOAT && !(ints && cls == H5T_INTEGER)) {
        read_failed(path, err, "%s/%s is %s (expected floating point)", where, name,
                    class_name(cls));
    } else if (cols ? rank != 2 || dims[1] != (hsize_t)cols : rank != 1) {
        char shape[64] = "scalar";
        if (rank >= 1 && rank <= 2)
            snprintf(shape, sizeof shape, rank == 1 ? "(%llu)" : "(%llu, %llu)",
                     (unsigned long long)dims[0], (unsigned long long)dims[1]);
        else if (rank > 2)
            snprintf(shape, sizeof shape, "%d dimensions", rank);
        if (cols)
            read_failed(path, err, "%s/%s has shape %s (expected (%lld, %d))", where, name, shape,
                        rows, cols);
        else
            read_failed(path, err, "%s/%s has shape %s (expected (%lld))", where, name, shape,
                        rows);
    } else if ((long long)dims[0] != rows) {
        read_failed(path, err, "%s/%s has %llu rows but the header gives %lld bodies", where, name,
                    (unsigned long long)dims[0], rows);
    } else if (rows > 0 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0) {
        read_failed(path, err, "%s/%s: %s", where, name, h5_reason(why));
    } else {
        rc = 1;
        const int w = cols ? cols : 1;
        for (long long i = 0; rc > 0 && i < rows * w; i++) {
            if (!isfinite(out[i])) {
                read_failed(path, err, "%s/%s row %lld is not finite (%g)", where, name, i / w,
                            out[i]);
                rc = -1;
            } else if (nonneg && out[i] < 0) {
                read_failed(path, err, "%s/%s row %lld is negative (%.17g)", where, name, i / w,
                            out[i]);
                rc = -1;
            }
        }
    }
    close_id(&sp, H5Sclose);
    close_id(&t, H5Tclose);
    close_id(&d, H5Dclose);
    return rc;
}

/* The rows of where/Coordinates (or -1 when absent or not 2-D). */
static long long coordinate_rows(hid_t g)
{
    if (H5Lexists(g, "Coordinates", H5P_DEFAULT) <= 0)
        return -1;
    hid_t d = H5Dopen2(g, "Coordinates", H5P_DEFAULT);
    hid_t sp = d >= 0 ? H5Dget_space(d) : -1;
    hsize_t dims[2] = {0, 0};
    long long rows = -1;
    if (sp >= 0 && H5Sget_simple_extent_ndims(sp) >= 1) {
        H5Sget_simple_extent_dims(sp, dims, NULL);
        rows = (long long)dims[0];
    }
    close_id(&sp, H5Sclose);
    close_id(&d, H5Dclose);
    H5Eclear2(H5E_DEFAULT);
    return rows;
}

/* The other 1-D numeric datasets of group g with rows rows. */
static orr_status read_extras(hid_t g, const char *where, long long rows, orr_snapshot *out,
                              const char *path, orr_error *err)
{
    H5G_info_t info;
    char why[200];
    if (H5Gget_info(g, &info) < 0)
        return read_failed(path, err, "%s: %s", where, h5_reason(why));
    for (hsize_t i = 0; i < info.nlinks; i++) {
        char name[256];
        ssize_t len = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name,
                                         H5P_DEFAULT);
        if (len < 0)
            return read_failed(path, err, "%s: %s", where, h5_reason(why));
        if (len >= 64)
            continue;
        int standard = 0;
        for (int k = 0; standard_sets[k]; k++)
            standard |= strcmp(name, standard_sets[k]) == 0;
        if (standard)
            continue;
        /* only plain 1-D numeric datasets of the right length (not groups) */
        hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
        hid_t t = d >= 0 ? H5Dget_type(d) : -1, sp = d >= 0 ? H5Dget_space(d) : -1;
        hsize_t dims[2] = {0, 0};
        int ok = t >= 0 && sp >= 0 && H5Sget_simple_extent_ndims(sp) == 1 &&
                 (H5Tget_class(t) == H5T_FLOAT || H5Tget_class(t) == H5T_INTEGER);
        if (ok)
            H5Sget_simple_extent_dims(sp, dims, NULL);
        ok = ok && (long long)dims[0] == rows;
        close_id(&sp, H5Sclose);
        close_id(&t, H5Tclose);
        close_id(&d, H5Dclose);
        H5Eclear2(H5E_DEFAULT);
        if (!ok)
            continue;
        orr_snapshot_column *x = realloc(out->extra, sizeof *x * (size_t)(out->nextra + 1));
        if (!x)
            return orr_fail(err, ORR_ERR_NOMEM, "cannot read '%s': out of memory", path);
        out->extra = x;
        x += out->nextra;
        memcpy(x->name, name, (size_t)len + 1);   /* len < 64 */
        x->values = malloc(sizeof(double) * (size_t)(rows > 0 ? rows : 1));
        if (!x->values)
            return orr_fail(err, ORR_ERR_NOMEM, "cannot read '%s': out of memory", path);
        out->nextra++;
        if (get_dataset(g, where, name, rows, 0, 1, 0, x->values, path, err) < 0)
            return err ? err->code : ORR_ERR_IO;
    }
    return ORR_OK;
}

/* The bodies of a GADGET-layout file: PartType0..5 in order. */
static orr_status read_gadget(hid_t file, const char *path, orr_snapshot *out, orr_error *err)
{
    char why[200];
    htri_t ex = H5Lexists(file, "Header", H5P_DEFAULT);
    if (ex <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return read_failed(path, err, "no Header group (not a GADGET-layout snapshot)");
    }
    hid_t h = H5Gopen2(file, "Header", H5P_DEFAULT);
    if (h < 0)
        return read_failed(path, err, "Header: %s", h5_reason(why));
    long long np[NTYPES];
    double masstab[NTYPES] = {0, 0, 0, 0, 0, 0};
    int nfiles = 1;
    int rc = get_attr(h, "Header", "NumPart_ThisFile", H5T_NATIVE_LLONG, NTYPES, np, path, err);
    if (rc == 0)
        read_failed(path, err, "Header has no NumPart_ThisFile attribute");
    if (rc > 0)
        rc = get_attr(h, "Header", "MassTable", H5T_NATIVE_DOUBLE, NTYPES, masstab, path, err) < 0
                 ? -1 : 1;
    if (rc > 0)
        rc = get_attr(h, "Header", "Time", H5T_NATIVE_DOUBLE, 1, &out->time, path, err) < 0 ? -1 : 1;
    if (rc > 0)
        rc = get_attr(h, "Header", "NumFilesPerSnapshot", H5T_NATIVE_INT, 1, &nfiles, path, err) < 0
                 ? -1 : 1;
    H5Gclose(h);
    if (rc <= 0)
        return err ? err->code : ORR_ERR_IO;
    if (nfiles > 1)
        return read_failed(path, err,
                           "the snapshot is split over %d files; only single-file snapshots can "
                           "be read", nfiles);
    long long n = 0;
    int types = 0, last = -1;
    for (int k = 0; k < NTYPES; k++) {
        if (np[k] < 0 || np[k] > (1LL << 40))
            return read_failed(path, err, "Header/NumPart_ThisFile[%d] is %lld", k, np[k]);
        if (!isfinite(masstab[k]) || masstab[k] < 0)
            return read_failed(path, err, "Header/MassTable[%d] is %g", k, masstab[k]);
        n += np[k];
        if (np[k] > 0) {
            types++;
            last = k;
        }
    }
    if (n == 0)
        return read_failed(path, err, "the file holds no particles (NumPart_ThisFile is all 0)");
    if (!isfinite(out->time))
        return read_failed(path, err, "Header/Time is %g", out->time);
    out->pos = malloc(sizeof(double) * 4 * (size_t)n);
    out->vel = malloc(sizeof(double) * 3 * (size_t)n);
    double *tmp = malloc(sizeof(double) * 3 * (size_t)n);
    if (!out->pos || !out->vel || !tmp) {
        free(tmp);
        return orr_fail(err, ORR_ERR_NOMEM, "cannot read '%s': out of memory for %lld bodies",
                        path, n);
    }
    out->n = (long)n;
    orr_status st = ORR_OK;
    long long off = 0;
    for (int k = 0; k < NTYPES && !st; k++) {
        char gname[16];
        snprintf(gname, sizeof gname, "PartType%d", k);
        ex = H5Lexists(file, gname, H5P_DEFAULT);
        hid_t g = ex > 0 ? H5Gopen2(file, gname, H5P_DEFAULT) : -1;
        H5Eclear2(H5E_DEFAULT);
        if (ex > 0 && g < 0) {
            st = read_failed(path, err, "%s is not a group", gname);
            break;
        }
        if (np[k] == 0) {
            long long rows = g >= 0 ? coordinate_rows(g) : -1;
            if (rows > 0)
                st = read_failed(path, err,
                                 "%s/Coordinates has %lld rows but NumPart_ThisFile[%d] is 0",
                                 gname, rows, k);
            close_id(&g, H5Gclose);
            continue;
        }
        if (g < 0) {
            st = read_failed(path, err, "NumPart_ThisFile[%d] is %lld but there is no %s group",
                             k, np[k], gname);
            break;
        }
        rc = get_dataset(g, gname, "Coordinates", np[k], 3, 0, 0, tmp, path, err);
        if (rc == 0)
            read_failed(path, err, "%s has no Coordinates dataset", gname);
        for (long long i = 0; rc > 0 && i < np[k]; i++) {
            memcpy(out->pos + 4 * (off + i), tmp + 3 * i, 3 * sizeof(double));
            out->pos[4 * (off + i) + 3] = masstab[k];
        }
        if (rc > 0) {
            rc = get_dataset(g, gname, "Velocities", np[k], 3, 0, 0, out->vel + 3 * off, path, err);
            if (rc == 0)
                read_failed(path, err, "%s has no Velocities dataset", gname);
        }
        if (rc > 0) {
            rc = get_dataset(g, gname, "Masses", np[k], 0, 0, 1, tmp, path, err);
            if (rc == 0 && masstab[k] == 0) {
                read_failed(path, err, "%s has no Masses dataset and Header/MassTable[%d] is 0",
                            gname, k);
                rc = -1;
            }
            for (long long i = 0; rc > 0 && i < np[k]; i++)
                out->pos[4 * (off + i) + 3] = tmp[i];
            rc = rc < 0 ? -1 : 1;
        }
        if (rc > 0 && types == 1 && k == last)
            st = read_extras(g, gname, np[k], out, path, err);
        if (rc < 0)
            st = err ? err->code : ORR_ERR_IO;
        off += np[k];
        close_id(&g, H5Gclose);
    }
    free(tmp);
    return st;
}

/* Opens an existing HDF5 file for reading. */
static orr_status open_hdf5(const char *path, hid_t *file, orr_error *err)
{
    char why[200];
    struct stat sb;
    *file = -1;
    if (stat(path, &sb) != 0)
        return read_failed(path, err, "%s", strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return read_failed(path, err, "is a directory");
    htri_t is = H5Fis_hdf5(path);
    if (is <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return read_failed(path, err, "not an HDF5 file (nor .txt or .csv text output)");
    }
    *file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (*file < 0)
        return read_failed(path, err, "damaged or truncated HDF5 file (%s)", h5_reason(why));
    return ORR_OK;
}

/* ---- text files ------------------------------------------------------------- */

/* The next field of line at *p (sep ' ': runs of blanks; else sep and blanks
 * around it); NULL at the end of the line. */
static char *next_field(char **p, char sep)
{
    char *s = *p;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!*s)
        return NULL;
    char *e = s;
    if (sep == ' ') {
        while (*e && *e != ' ' && *e != '\t')
            e++;
    } else {
        while (*e && *e != sep)
            e++;
    }
    char *next = *e ? e + 1 : e;
    char *end = e;
    while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    *end = '\0';
    *p = next;
    return s;
}

static const char *const text_cols[] = {"id", "x", "y", "z", "vx", "vy", "vz", "m"};

static orr_status read_text(const char *path, char sep, orr_snapshot *out, orr_error *err)
{
    char *text = NULL;
    orr_error rerr = {0};
    if (orr_read_file(path, &text, NULL, &rerr)) {
        orr_error_clear(&rerr);
        return read_failed(path, err, "%s", strerror(errno ? errno : EIO));
    }
    long lines = 1;
    for (char *c = text; *c; c++)
        lines += *c == '\n';
    out->pos = malloc(sizeof(double) * 4 * (size_t)lines);
    out->vel = malloc(sizeof(double) * 3 * (size_t)lines);
    if (!out->pos || !out->vel) {
        free(text);
        return orr_fail(err, ORR_ERR_NOMEM, "cannot read '%s': out of memory", path);
    }
    orr_status st = ORR_OK;
    int header = 0;
    long n = 0, lineno = 0;
    const char *expected = sep == ',' ? "id,x,y,z,vx,vy,vz,m" : "id x y z vx vy vz m";
    for (char *line = text; line && !st;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\r')
            line[len - 1] = '\0';
        char *p = line, *f[9];
        int nf = 0;
        for (char *tok; nf < 9 && (tok = next_field(&p, sep));)
            f[nf++] = tok;
        if (nf == 0) {
            line = nl ? nl + 1 : NULL;
            continue;
        }
        if (!header) {
            int ok = nf == 8;
            for (int k = 0; ok && k < 8; k++)
                ok = strcasecmp(f[k], text_cols[k]) == 0;
            if (!ok)
                st = read_failed(path, err, "line %ld: expected the header line '%s'", lineno,
                                 expected);
            header = 1;
            line = nl ? nl + 1 : NULL;
            continue;
        }
        if (nf != 8) {
            if (nf > 8)
                st = read_failed(path, err, "line %ld: more than 8 columns (expected %s)", lineno,
                                 expected);
            else
                st = read_failed(path, err, "line %ld: %d column%s (expected 8: %s)", lineno, nf,
                                 nf == 1 ? "" : "s", expected);
            break;
        }
        double v[8];
        for (int k = 0; k < 8 && !st; k++) {
            char *e;
            errno = 0;
            v[k] = strtod(f[k], &e);
            if (e == f[k] || *e)
                st = read_failed(path, err, "line %ld: %s is '%.40s', not a number", lineno,
                                 text_cols[k], f[k]);
            else if (!isfinite(v[k]))
                st = read_failed(path, err, "line %ld: %s is not finite (%s)", lineno,
                                 text_cols[k], f[k]);
            else if (k == 7 && v[k] < 0)
                st = read_failed(path, err, "line %ld: m is negative (%s)", lineno, f[k]);
        }
        if (!st) {
            double *x = out->pos + 4 * n, *u = out->vel + 3 * n;
            x[0] = v[1], x[1] = v[2], x[2] = v[3], x[3] = v[7];
            u[0] = v[4], u[1] = v[5], u[2] = v[6];
            n++;
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    if (!st && !header)
        st = read_failed(path, err, "empty file (expected a header line and one line per body)");
    else if (!st && n == 0)
        st = read_failed(path, err, "no bodies (only a header line)");
    out->n = n;
    return st;
}

/* ---- public readers ------------------------------------------------------------ */

static const char *extension(const char *path)
{
    const char *base = strrchr(path, '/');
    return strrchr(base ? base + 1 : path, '.');
}

orr_status orr_snapshot_read(const char *path, orr_snapshot *out, orr_error *err)
{
    memset(out, 0, sizeof *out);
    h5_quiet();
    const char *ext = extension(path);
    orr_status st;
    if (ext && (strcasecmp(ext, ".txt") == 0 || strcasecmp(ext, ".csv") == 0)) {
        struct stat sb;
        if (stat(path, &sb) != 0)
            st = read_failed(path, err, "%s", strerror(errno));
        else if (S_ISDIR(sb.st_mode))
            st = read_failed(path, err, "is a directory");
        else
            st = read_text(path, strcasecmp(ext, ".csv") == 0 ? ',' : ' ', out, err);
    } else {
        hid_t file;
        st = open_hdf5(path, &file, err);
        if (!st)
            st = read_gadget(file, path, out, err);
        close_id(&file, H5Fclose);
    }
    if (st)
        orr_snapshot_free(out);
    return st;
}

void orr_snapshot_free(orr_snapshot *snap)
{
    if (!snap)
        return;
    free(snap->pos);
    free(snap->vel);
    for (int k = 0; k < snap->nextra; k++)
        free(snap->extra[k].values);
    free(snap->extra);
    memset(snap, 0, sizeof *snap);
}

/* ---- checkpoints read back -------------------------------------------------------- */

/* Opens group name of file, or fails naming it as required. */
static hid_t open_group(hid_t file, const char *name, const char *why_needed, const char *path,
                        orr_error *err)
{
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        read_failed(path, err, "no %s group (%s)", name, why_needed);
        return -1;
    }
    hid_t g = H5Gopen2(file, name, H5P_DEFAULT);
    if (g < 0) {
        H5Eclear2(H5E_DEFAULT);
        read_failed(path, err, "%s is not a group", name);
    }
    return g;
}

/* Required numeric attribute: 1, or -1 with err set. */
static int need_attr(hid_t g, const char *where, const char *name, hid_t mtype, hssize_t count,
                     void *out, const char *path, orr_error *err)
{
    int rc = get_attr(g, where, name, mtype, count, out, path, err);
    if (rc == 0)
        read_failed(path, err, "%s has no '%s' attribute", where, name);
    return rc > 0 ? 1 : -1;
}

static int need_string(hid_t g, const char *where, const char *name, char *out, size_t size,
                       const char *path, orr_error *err)
{
    int rc = get_string(g, where, name, out, size, path, err);
    if (rc == 0)
        read_failed(path, err, "%s has no '%s' attribute", where, name);
    return rc > 0 ? 1 : -1;
}

static orr_status read_run(hid_t file, const char *path, orr_checkpoint *ck, orr_error *err)
{
    hid_t g = open_group(file, "Run", "a snapshot, not a checkpoint: orrery.read loads its bodies",
                         path, err);
    if (g < 0)
        return err ? err->code : ORR_ERR_IO;
    orr_sim_config *c = &ck->config;
    int format = 0;
    long long steps = 0;
    char precision[16] = "";
    int rc = need_attr(g, "Run", "format", H5T_NATIVE_INT, 1, &format, path, err);
    if (rc > 0 && format > CHECKPOINT_FORMAT) {
        read_failed(path, err, "checkpoint format %d is newer than this orrery's (%d)", format,
                    CHECKPOINT_FORMAT);
        rc = -1;
    }
    if (rc > 0)
        rc = need_attr(g, "Run", "time", H5T_NATIVE_DOUBLE, 1, &ck->time, path, err);
    if (rc > 0 && get_attr(g, "Run", "time_compensation", H5T_NATIVE_DOUBLE, 1, &ck->time_c,
                           path, err) < 0)
        rc = -1;
    if (rc > 0)
        rc = need_attr(g, "Run", "steps", H5T_NATIVE_LLONG, 1, &steps, path, err);
    if (rc > 0)
        rc = need_attr(g, "Run", "dt", H5T_NATIVE_DOUBLE, 1, &c->dt, path, err);
    if (rc > 0)
        rc = need_string(g, "Run", "integrator", ck->integrator, sizeof ck->integrator, path, err);
    if (rc > 0)
        rc = need_attr(g, "Run", "damping", H5T_NATIVE_DOUBLE, 1, &c->damping, path, err);
    if (rc > 0)
        rc = need_string(g, "Run", "precision", precision, sizeof precision, path, err);
    if (rc > 0)
        rc = need_string(g, "Run", "backend", ck->backend, sizeof ck->backend, path, err);
    if (rc > 0)
        rc = need_attr(g, "Run", "device", H5T_NATIVE_INT, 1, &c->device, path, err);
    if (rc > 0)
        rc = need_attr(g, "Run", "softening", H5T_NATIVE_DOUBLE, 1, &c->softening, path, err);
    if (rc > 0)
        rc = need_attr(g, "Run", "G", H5T_NATIVE_DOUBLE, 1, &c->G, path, err);
    if (rc > 0)
        rc = need_attr(g, "Run", "box", H5T_NATIVE_DOUBLE, 3, c->box, path, err);
    if (rc > 0)
        rc = need_attr(g, "Run", "dims", H5T_NATIVE_INT, 1, &c->dims, path, err);
    H5Gclose(g);
    if (rc < 0)
        return err ? err->code : ORR_ERR_IO;
    orr_error perr = {0};
    if (!isfinite(ck->time) || !isfinite(ck->time_c) || steps < 0)
        return read_failed(path, err, "Run has a bad clock (time %g, steps %lld)", ck->time, steps);
    ck->steps = (long)steps;
    if (!orr_integrator_find(ck->integrator))
        return read_failed(path, err, "Run/integrator '%s' is not an integrator of this orrery",
                           ck->integrator);
    if (orr_precision_parse(precision, &c->precision, &perr) ||
        orr_backend_parse(ck->backend, &c->backend, &perr)) {
        orr_error_clear(&perr);
        return read_failed(path, err, "Run has an unknown precision '%s' or backend '%s'",
                           precision, ck->backend);
    }
    c->integrator = ck->integrator;
    return ORR_OK;
}

static orr_status read_kernel(hid_t file, const char *path, orr_checkpoint *ck, orr_error *err)
{
    hid_t g = open_group(file, "Kernel", "not an orrery checkpoint", path, err);
    if (g < 0)
        return err ? err->code : ORR_ERR_IO;
    orr_kspec *k = &ck->kspec;
    int rc = need_attr(g, "Kernel", "block", H5T_NATIVE_INT, 1, &k->launch.block, path, err);
    if (rc > 0)
        rc = need_attr(g, "Kernel", "unroll", H5T_NATIVE_INT, 1, &k->launch.unroll, path, err);
    if (rc > 0)
        rc = need_attr(g, "Kernel", "split", H5T_NATIVE_INT, 1, &k->launch.split, path, err);
    if (rc > 0)
        rc = need_attr(g, "Kernel", "ipt", H5T_NATIVE_INT, 1, &k->launch.ipt, path, err);
    if (rc > 0)
        rc = need_attr(g, "Kernel", "ftz", H5T_NATIVE_INT, 1, &k->launch.ftz, path, err);
    if (rc > 0)
        rc = need_attr(g, "Kernel", "newton", H5T_NATIVE_INT, 1, &k->launch.newton, path, err);
    if (rc > 0)
        rc = need_attr(g, "Kernel", "threads", H5T_NATIVE_INT, 1, &k->launch.threads, path, err);
    if (rc > 0 && get_attr(g, "Kernel", "ranges", H5T_NATIVE_INT, 1, &k->launch.ranges, path, err) < 0)
        rc = -1;   /* absent (checkpoints before j-ranges): 0, automatic */
    if (rc > 0 && get_string(g, "Kernel", "source", ck->kspec_source, sizeof ck->kspec_source,
                             path, err) < 0)
        rc = -1;
    H5Gclose(g);
    return rc < 0 ? (err ? err->code : ORR_ERR_IO) : ORR_OK;
}

/* A string attribute of any length (heap, caller frees), or NULL with err set. */
static char *get_long_string(hid_t g, const char *where, const char *name, const char *path,
                             orr_error *err)
{
    enum { MAX = 1 << 20 };
    char *buf = malloc(MAX);
    if (!buf) {
        orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        return NULL;
    }
    if (need_string(g, where, name, buf, MAX, path, err) < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Splits a comma-separated list of names into fn(law, name) calls. */
static orr_status each_name(orr_law *law, const char *list,
                            orr_status (*fn)(orr_law *, const char *, orr_error *),
                            orr_error *err)
{
    char copy[ORR_LAW_MAX_PARAMS * ORR_LAW_NAME_MAX + 1], *save = NULL;
    snprintf(copy, sizeof copy, "%s", list);
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        orr_status st = fn(law, t, err);
        if (st)
            return st;
    }
    return ORR_OK;
}

static orr_status add_param0(orr_law *law, const char *name, orr_error *err)
{
    return orr_law_add_param(law, name, 0.0, err);
}

/* The force law (see write_force).  A checkpoint that names the law only
 * (from before the law was stored whole) restores it as the built-in law of
 * that name. */
static orr_status read_force(hid_t file, const char *path, orr_checkpoint *ck, orr_error *err)
{
    hid_t g = open_group(file, "Force", "not an orrery checkpoint", path, err);
    if (g < 0)
        return err ? err->code : ORR_ERR_IO;
    int rc = need_string(g, "Force", "name", ck->force, sizeof ck->force, path, err);
    ck->config.force = ck->force;
    if (rc < 0 || H5Aexists(g, "pair") <= 0) {
        H5Gclose(g);
        return rc < 0 ? (err ? err->code : ORR_ERR_IO) : ORR_OK;
    }
    orr_status st = ORR_OK;
    char origin[256], doc[160], scale[256], list[ORR_LAW_MAX_PARAMS * ORR_LAW_NAME_MAX + 1];
    int builtin = 0, finite = 0, pl = 1, ul = 1;
    char *pair = get_long_string(g, "Force", "pair", path, err);
    char *pot = pair ? get_long_string(g, "Force", "potential", path, err) : NULL;
    if (!pair || !pot || need_string(g, "Force", "origin", origin, sizeof origin, path, err) < 0 ||
        need_string(g, "Force", "scale", scale, sizeof scale, path, err) < 0 ||
        need_attr(g, "Force", "builtin", H5T_NATIVE_INT, 1, &builtin, path, err) < 0 ||
        need_attr(g, "Force", "finite_at_zero", H5T_NATIVE_INT, 1, &finite, path, err) < 0 ||
        need_attr(g, "Force", "pair_line", H5T_NATIVE_INT, 1, &pl, path, err) < 0 ||
        need_attr(g, "Force", "potential_line", H5T_NATIVE_INT, 1, &ul, path, err) < 0)
        st = err ? err->code : ORR_ERR_IO;
    if (!st && (st = orr_law_init(&ck->law, ck->force, pair, pot, origin, err)) == ORR_OK)
        ck->have_law = 1;
    if (!st) {
        ck->law.builtin = builtin;
        ck->law.finite_at_zero = finite;
        ck->law.pair_line = pl;
        ck->law.potential_line = ul;
        snprintf(ck->law.scale, sizeof ck->law.scale, "%s", scale);
        if (get_string(g, "Force", "doc", doc, sizeof doc, path, err) > 0)
            snprintf(ck->law.doc, sizeof ck->law.doc, "%s", doc);
        if (need_string(g, "Force", "params", list, sizeof list, path, err) < 0)
            st = err ? err->code : ORR_ERR_IO;
    }
    if (!st)
        st = each_name(&ck->law, list, add_param0, err);
    if (!st && ck->law.nparams) {
        double v[ORR_LAW_MAX_PARAMS];
        int rt[ORR_LAW_MAX_PARAMS];
        if (need_attr(g, "Force", "param_values", H5T_NATIVE_DOUBLE, ck->law.nparams, v, path,
                      err) < 0 ||
            need_attr(g, "Force", "param_runtime", H5T_NATIVE_INT, ck->law.nparams, rt, path,
                      err) < 0)
            st = err ? err->code : ORR_ERR_IO;
        for (int k = 0; !st && k < ck->law.nparams; k++) {
            ck->law.params[k].value = v[k];
            ck->law.params[k].runtime = rt[k] != 0;
        }
    }
    if (!st && need_string(g, "Force", "attributes", list, sizeof list, path, err) < 0)
        st = err ? err->code : ORR_ERR_IO;
    if (!st)
        st = each_name(&ck->law, list, orr_law_add_attr, err);
    if (!st && (st = orr_law_validate(&ck->law, err)) != ORR_OK)
        orr_error_context(err, "checkpoint '%s'", path);
    free(pair);
    free(pot);
    H5Gclose(g);
    if (!st)
        ck->config.law = &ck->law;
    return st;
}

/* Output: optional (all 0 when absent). */
static orr_status read_output(hid_t file, const char *path, orr_checkpoint *ck, orr_error *err)
{
    if (H5Lexists(file, "Output", H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return ORR_OK;
    }
    hid_t g = open_group(file, "Output", "", path, err);
    if (g < 0)
        return err ? err->code : ORR_ERR_IO;
    orr_output_state *o = &ck->output;
    orr_render_view *v = &o->view;
    long long snap = 0, frame = 0;
    int rc = get_attr(g, "Output", "snapshot", H5T_NATIVE_LLONG, 1, &snap, path, err);
    if (rc >= 0)
        rc = get_attr(g, "Output", "frame", H5T_NATIVE_LLONG, 1, &frame, path, err);
    if (rc >= 0)
        rc = get_attr(g, "Output", "view", H5T_NATIVE_INT, 1, &v->have_view, path, err);
    if (rc >= 0)
        rc = get_attr(g, "Output", "view_axis", H5T_NATIVE_INT, 1, &v->axis, path, err);
    if (rc >= 0)
        rc = get_attr(g, "Output", "view_centre", H5T_NATIVE_DOUBLE, 2, v->centre, path, err);
    if (rc >= 0)
        rc = get_attr(g, "Output", "view_extent", H5T_NATIVE_DOUBLE, 4, v->extent, path, err);
    if (rc >= 0)
        rc = get_attr(g, "Output", "range", H5T_NATIVE_INT, 1, &v->have_range, path, err);
    if (rc >= 0)
        rc = get_attr(g, "Output", "range_log", H5T_NATIVE_INT, 1, &v->range_log, path, err);
    if (rc >= 0)
        rc = get_attr(g, "Output", "range_values", H5T_NATIVE_DOUBLE, 2, v->range, path, err);
    H5Gclose(g);
    if (rc < 0)
        return err ? err->code : ORR_ERR_IO;
    if (snap < 0 || frame < 0)
        return read_failed(path, err, "Output has negative counters (%lld, %lld)", snap, frame);
    o->snapshot = (long)snap;
    o->frame = (long)frame;
    return ORR_OK;
}

orr_status orr_checkpoint_read(const char *path, orr_checkpoint *ck, orr_error *err)
{
    memset(ck, 0, sizeof *ck);
    h5_quiet();
    orr_sim_config_default(&ck->config);
    ck->config.tune = ORR_SIM_TUNE_OFF;
    orr_kspec_default(&ck->kspec, ORR_TARGET_CPU);
    snprintf(ck->kspec_source, sizeof ck->kspec_source, "checkpoint");
    const char *ext = extension(path);
    if (ext && (strcasecmp(ext, ".txt") == 0 || strcasecmp(ext, ".csv") == 0))
        return read_failed(path, err, "a text file is not a checkpoint (checkpoints are HDF5)");
    hid_t file;
    orr_status st = open_hdf5(path, &file, err);
    if (!st)
        st = read_gadget(file, path, &ck->bodies, err);
    if (!st)
        st = read_run(file, path, ck, err);
    if (!st)
        st = read_kernel(file, path, ck, err);
    if (!st)
        st = read_force(file, path, ck, err);
    if (!st)
        st = read_output(file, path, ck, err);
    close_id(&file, H5Fclose);
    if (st)
        orr_checkpoint_free(ck);
    else
        ck->config.n = ck->bodies.n;
    return st;
}

void orr_checkpoint_free(orr_checkpoint *ck)
{
    if (!ck)
        return;
    orr_snapshot_free(&ck->bodies);
    if (ck->have_law)
        orr_law_free(&ck->law);
    ck->have_law = 0;
    ck->config.law = NULL;
}

orr_status orr_checkpoint_restore(const orr_checkpoint *ck, orr_sim **out, char *notice,
                                  size_t notice_size, orr_error *err)
{
    *out = NULL;
    orr_sim_config c = ck->config;
    c.n = ck->bodies.n;
    c.tune = ORR_SIM_TUNE_OFF;
    orr_sim *s = NULL;
    orr_status st = orr_sim_create(&s, &c, notice, notice_size, err);
    if (st)
        return st;
    double *pos, *vel;
    st = orr_sim_pos(s, &pos, err);
    if (!st)
        st = orr_sim_vel(s, &vel, err);
    if (!st) {
        memcpy(pos, ck->bodies.pos, sizeof(double) * 4 * (size_t)c.n);
        memcpy(vel, ck->bodies.vel, sizeof(double) * 3 * (size_t)c.n);
        orr_sim_touch(s);
        st = orr_sim_set_clock(s, ck->time, ck->steps, err);
        orr_sim_set_time_compensation(s, ck->time_c);
    }
    /* the law's attributes, from their PartType1 datasets */
    const orr_law *law = orr_sim_law(s);
    for (int a = 0; !st && a < law->nattrs; a++) {
        const orr_snapshot_column *col = NULL;
        for (int k = 0; k < ck->bodies.nextra; k++)
            if (strcmp(ck->bodies.extra[k].name, law->attrs[a]) == 0)
                col = &ck->bodies.extra[k];
        double *v = NULL;
        if (!col)
            st = orr_fail(err, ORR_ERR_ARG, "checkpoint has no dataset PartType1/%s for the "
                          "force law's attribute '%s'", law->attrs[a], law->attrs[a]);
        else if ((st = orr_sim_attr(s, a, &v, err)) == ORR_OK)
            memcpy(v, col->values, sizeof(double) * (size_t)c.n);
    }
    if (!st)
        orr_sim_touch(s);
    /* the stored kernel configuration, where it is meant for this backend */
    const orr_kspec *k = orr_sim_kspec(s, NULL);
    const orr_kspec *w = &ck->kspec;
    if (!st && strcmp(orr_sim_engine(s)->ops->name, ck->backend) == 0 &&
        (k->launch.block != w->launch.block || k->launch.unroll != w->launch.unroll || k->launch.split != w->launch.split ||
         k->launch.ipt != w->launch.ipt || k->launch.ftz != w->launch.ftz || k->launch.newton != w->launch.newton ||
         k->launch.threads != w->launch.threads || k->launch.ranges != w->launch.ranges))
        st = orr_sim_set_kspec(s, w, "checkpoint", err);
    if (st) {
        orr_sim_destroy(s);
        return st;
    }
    *out = s;
    return ORR_OK;
}
