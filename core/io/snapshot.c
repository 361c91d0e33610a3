/* snapshot: GADGET-4 HDF5 snapshots of the bodies, written and read back
 * (see snapshot.h); text files go through textio.c, checkpoints
 * (checkpoint.c) extend the same layout, the HDF5 helpers are h5util.c's. */
#include "snapshot.h"
#include "h5util.h"
#include "law.h"
#include "textio.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTYPES 6              /* GADGET particle types */

#define GYR_S 3.15576e16        /* 1e9 Julian years */

static const char *const standard_sets[] = {"Coordinates", "Velocities", "Masses", "ParticleIDs",
                                            NULL};

/* ---- writing ------------------------------------------------------------------ */

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

/* The unit attributes of dataset name of g, for readers that convert it:
 * GADGET-4's (a_scaling, h_scaling, length_scaling, mass_scaling,
 * velocity_scaling, to_cgs) and those of OWLS and EAGLE, which pynbody
 * reads (VarDescription, CGSConversionFactor, aexp-scale-exponent,
 * h-scale-exponent).  The values are physical, never comoving: no factors
 * of a or h.  l, m, v: the powers of the length, mass and velocity units;
 * cgs: the unit of the values in cgs. */
static herr_t put_units(hid_t g, const char *name, double l, double m, double v, double cgs,
                        const char *description)
{
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    herr_t r = d < 0 ? -1 : orr_h5_put_double(d, "a_scaling", 0);
    if (r >= 0)
        r = orr_h5_put_double(d, "h_scaling", 0);
    if (r >= 0)
        r = orr_h5_put_double(d, "length_scaling", l);
    if (r >= 0)
        r = orr_h5_put_double(d, "mass_scaling", m);
    if (r >= 0)
        r = orr_h5_put_double(d, "velocity_scaling", v);
    if (r >= 0)
        r = orr_h5_put_double(d, "to_cgs", cgs);
    if (r >= 0)
        r = orr_h5_put_string(d, "VarDescription", description);
    if (r >= 0)
        r = orr_h5_put_double(d, "CGSConversionFactor", cgs);
    if (r >= 0)
        r = orr_h5_put_double(d, "aexp-scale-exponent", 0);
    if (r >= 0)
        r = orr_h5_put_double(d, "h-scale-exponent", 0);
    orr_h5_close(&d, H5Dclose);
    return r;
}

/* The units in cgs, as attributes of g (Header and Units). */
static herr_t put_unit_sizes(hid_t g, double L, double M, double V)
{
    herr_t r = orr_h5_put_double(g, "UnitLength_in_cm", L);
    if (r >= 0)
        r = orr_h5_put_double(g, "UnitMass_in_g", M);
    if (r >= 0)
        r = orr_h5_put_double(g, "UnitVelocity_in_cm_per_s", V);
    return r;
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
    double fc[3], fv[3];   /* bodies relative to a frame's centre: where it is */
    const int frame = orr_sim_frame(s, fc, fv, err);
    if (frame < 0) {
        orr_error_context(err, "cannot write '%s'", path);
        return err->code;
    }
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
    double L, M, V, T;   /* the units in cgs: the simulation's, or the N-body convention */
    orr_units_cgs(&c->units, c->G, &L, &M, &V, &T);
    double boxsize = 0;
    for (int k = 2; k >= 0; k--)
        if (c->box[k] > 0)
            boxsize = c->box[k];   /* x's, else the first periodic axis' */
    g = H5Gcreate2(file, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = g < 0 ? -1 : orr_h5_put_attr(g, "NumPart_ThisFile", H5T_STD_I32LE, H5T_NATIVE_INT,
                                            NTYPES, npart);
    if (r >= 0)
        r = orr_h5_put_attr(g, "NumPart_Total", H5T_STD_U64LE, H5T_NATIVE_ULLONG, NTYPES, total);
    if (r >= 0)
        r = orr_h5_put_attr(g, "NumPart_Total_HighWord", H5T_STD_U32LE, H5T_NATIVE_UINT, NTYPES,
                            high);
    if (r >= 0)
        r = orr_h5_put_doubles(g, "MassTable", masstab, NTYPES);
    if (r >= 0)
        r = orr_h5_put_double(g, "Time", orr_sim_time(s));
    if (r >= 0)
        r = orr_h5_put_double(g, "Redshift", 0);
    if (r >= 0)
        r = orr_h5_put_double(g, "BoxSize", boxsize);
    if (r >= 0)
        r = orr_h5_put_int(g, "NumFilesPerSnapshot", 1);
    if (r >= 0)
        r = orr_h5_put_double(g, "Omega0", 0);
    if (r >= 0)
        r = orr_h5_put_double(g, "OmegaLambda", 0);
    if (r >= 0)
        r = orr_h5_put_double(g, "HubbleParam", 1);
    if (r >= 0)   /* physical coordinates, Time a time (not an expansion factor) */
        r = orr_h5_put_int(g, "ComovingIntegrationOn", 0);
    if (r >= 0)   /* the time in Gyr, which pynbody takes over its cosmology's age */
        r = orr_h5_put_double(g, "Time_GYR", orr_sim_time(s) * T / GYR_S);
    if (r >= 0)
        r = put_unit_sizes(g, L, M, V);
    static const char *const flags[] = {"Flag_Sfr", "Flag_Cooling", "Flag_Feedback",
                                        "Flag_StellarAge", "Flag_Metals", "Flag_Entropy_ICs",
                                        "Flag_IC_Info", NULL};
    for (int k = 0; r >= 0 && flags[k]; k++)
        r = orr_h5_put_int(g, flags[k], 0);
    if (r >= 0)
        r = orr_h5_put_int(g, "Flag_DoublePrecision", 1);
    if (r >= 0)
        r = orr_h5_put_string(g, "Code", "orrery");
    if (r >= 0 && frame) {
        r = orr_h5_put_doubles(g, "FrameCenter", fc, 3);
        if (r >= 0)
            r = orr_h5_put_doubles(g, "FrameVelocity", fv, 3);
    }
    orr_h5_close(&g, H5Gclose);

    /* Units: the simulation's physical units, or N-body units read as 1 kpc,
     * 1e10 Msun and the velocity sqrt(G_cgs M / (G L)) (units.h) */
    if (r >= 0) {
        what = "Units";
        g = H5Gcreate2(file, "Units", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        r = g < 0 ? -1 : 0;
        if (r >= 0)
            r = put_unit_sizes(g, L, M, V);
        if (r >= 0)
            r = orr_h5_put_double(g, "UnitTime_in_s", T);
        if (r >= 0)
            r = orr_h5_put_string(g, "UnitSystem",
                                  orr_units_physical(&c->units) ? "physical" : "nbody");
        if (r >= 0)
            r = orr_h5_put_double(g, "G", c->G);
        orr_h5_close(&g, H5Gclose);
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
        r = orr_h5_put_dataset(g, "Coordinates", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, (hsize_t)n, 3,
                               buf);
        if (r >= 0)
            r = put_units(g, "Coordinates", 1, 0, 0, L, "Positions: r = Coordinates U_L [cm]");
    }
    if (r >= 0) {
        what = "PartType1/Velocities";
        r = orr_h5_put_dataset(g, "Velocities", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, (hsize_t)n, 3,
                               vel);
        if (r >= 0)
            r = put_units(g, "Velocities", 0, 0, 1, V, "Velocities: v = Velocities U_V [cm s^-1]");
    }
    if (r >= 0) {
        what = "PartType1/Masses";
        for (long i = 0; i < n; i++)
            buf[i] = pos[4 * i + 3];
        r = orr_h5_put_dataset(g, "Masses", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, (hsize_t)n, 0, buf);
        if (r >= 0)
            r = put_units(g, "Masses", 0, 1, 0, M, "Masses: m = Masses U_M [g]");
    }
    if (r >= 0) {
        what = "PartType1/ParticleIDs";
        for (long i = 0; i < n; i++)
            ids[i] = (uint64_t)i + 1;
        r = orr_h5_put_dataset(g, "ParticleIDs", H5T_STD_U64LE, H5T_NATIVE_UINT64, (hsize_t)n, 0,
                               ids);
        if (r >= 0)
            r = put_units(g, "ParticleIDs", 0, 0, 0, 1, "Body numbers, 1-based, no unit");
    }
    char whatbuf[96];
    for (int k = 0; r >= 0 && k < nextra; k++) {
        snprintf(whatbuf, sizeof whatbuf, "PartType1/%s", extra[k].name);
        what = whatbuf;
        r = orr_h5_put_dataset(g, extra[k].name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, (hsize_t)n, 0,
                               extra[k].values);
    }
    orr_h5_close(&g, H5Gclose);
    free(buf);
    free(ids);
    return r < 0 ? orr_h5_write_failed(path, what, err) : ORR_OK;
}

/* What fill_bodies writes (orr_h5_write_atomic's ctx). */
typedef struct {
    orr_sim *s;
    const char *path;
    const orr_snapshot_field *extra;
    int nextra;
    orr_h5_fill_fn more;
    void *ctx;
} bodies_job;

static orr_status fill_bodies(hid_t file, void *ctx, orr_error *err)
{
    const bodies_job *j = ctx;
    orr_status st = write_gadget(file, j->s, j->path, j->extra, j->nextra, err);
    if (!st && j->more)
        st = j->more(file, j->ctx, err);
    return st;
}

/* The file itself (orr_sim_write_once's writer; ctx a bodies_job). */
static orr_status write_bodies(orr_sim *s, void *ctx, orr_error *err)
{
    bodies_job *j = ctx;
    (void)s;
    return orr_h5_write_atomic(j->path, fill_bodies, j, err);
}

orr_status orr_snapshot_write_with(orr_sim *s, const char *path, const orr_snapshot_field *extra,
                                   int nextra, orr_h5_fill_fn more, void *ctx, orr_error *err)
{
    orr_h5_quiet();
    /* the force law's attributes go with the bodies, one dataset each */
    const orr_law *law = orr_sim_law(s);
    orr_snapshot_field *all = malloc(sizeof *all * (size_t)(nextra + law->nattrs + 1));
    orr_status st = all ? ORR_OK : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (all && nextra > 0 && extra)
        memcpy(all, extra, sizeof *all * (size_t)nextra);
    for (int a = 0; all && a < law->nattrs; a++) {
        double *v = NULL;
        orr_sim_attr(s, a, &v, NULL);
        all[nextra + a] = (orr_snapshot_field){law->attrs[a], v};
    }
    int nall = nextra < 0 ? nextra : nextra + law->nattrs;
    if (!st)
        st = check_fields(path, orr_sim_n(s), all, nall, err);
    /* the state being integrated (pending writes uploaded: 2D and box
     * fix-ups, float rounding; then read back) on every rank, the file by
     * rank 0, its outcome every rank's */
    bodies_job job = {s, path, all, nall, more, ctx};
    st = orr_sim_write_once(s, st, path, write_bodies, &job, err);
    free(all);
    return st;
}

orr_status orr_snapshot_write(orr_sim *s, const char *path, const orr_snapshot_field *extra,
                              int nextra, orr_error *err)
{
    return orr_snapshot_write_with(s, path, extra, nextra, NULL, NULL, err);
}

/* ---- reading ------------------------------------------------------------------ */

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
    orr_h5_close(&sp, H5Sclose);
    orr_h5_close(&d, H5Dclose);
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
        return orr_read_failed(path, err, "%s: %s", where, orr_h5_reason(why));
    for (hsize_t i = 0; i < info.nlinks; i++) {
        char name[256];
        ssize_t len = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name,
                                         H5P_DEFAULT);
        if (len < 0)
            return orr_read_failed(path, err, "%s: %s", where, orr_h5_reason(why));
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
        orr_h5_close(&sp, H5Sclose);
        orr_h5_close(&t, H5Tclose);
        orr_h5_close(&d, H5Dclose);
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
        if (orr_h5_get_dataset(g, where, name, rows, 0, 1, 0, x->values, path, err) < 0)
            return err ? err->code : ORR_ERR_IO;
    }
    return ORR_OK;
}

/* The header's counts against the groups and their Coordinates (type and
 * shape), before memory for the bodies is taken: a damaged count is named
 * as such, not met as "out of memory" (or as gigabytes taken for a file of
 * a few kilobytes).  The messages are those of the reading loop. */
static orr_status check_counts(hid_t file, const long long *np, const char *path,
                               orr_error *err)
{
    for (int k = 0; k < NTYPES; k++) {
        if (np[k] == 0)
            continue;
        char gname[16];
        snprintf(gname, sizeof gname, "PartType%d", k);
        htri_t ex = H5Lexists(file, gname, H5P_DEFAULT);
        hid_t g = ex > 0 ? H5Gopen2(file, gname, H5P_DEFAULT) : -1;
        H5Eclear2(H5E_DEFAULT);
        if (g < 0)
            return ex > 0 ? orr_read_failed(path, err, "%s is not a group", gname)
                          : orr_read_failed(path, err, "NumPart_ThisFile[%d] is %lld but there "
                                            "is no %s group", k, np[k], gname);
        int rc = orr_h5_get_dataset(g, gname, "Coordinates", np[k], 3, 0, 0, NULL, path, err);
        orr_h5_close(&g, H5Gclose);
        if (rc == 0)
            return orr_read_failed(path, err, "%s has no Coordinates dataset", gname);
        if (rc < 0)
            return err ? err->code : ORR_ERR_IO;
    }
    return ORR_OK;
}

/* The bodies of a GADGET-layout file: PartType0..5 in order. */
orr_status orr_snapshot_read_h5(hid_t file, const char *path, orr_snapshot *out, orr_error *err)
{
    char why[200];
    htri_t ex = H5Lexists(file, "Header", H5P_DEFAULT);
    if (ex <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return orr_read_failed(path, err, "no Header group (not a GADGET-layout snapshot)");
    }
    hid_t h = H5Gopen2(file, "Header", H5P_DEFAULT);
    if (h < 0)
        return orr_read_failed(path, err, "Header: %s", orr_h5_reason(why));
    long long np[NTYPES];
    double masstab[NTYPES] = {0, 0, 0, 0, 0, 0};
    int nfiles = 1;
    int rc = orr_h5_get_attr(h, "Header", "NumPart_ThisFile", H5T_NATIVE_LLONG, NTYPES, np, path,
                             err);
    if (rc == 0)
        orr_read_failed(path, err, "Header has no NumPart_ThisFile attribute");
    if (rc > 0)
        rc = orr_h5_get_attr(h, "Header", "MassTable", H5T_NATIVE_DOUBLE, NTYPES, masstab, path,
                             err) < 0 ? -1 : 1;
    if (rc > 0)
        rc = orr_h5_get_attr(h, "Header", "Time", H5T_NATIVE_DOUBLE, 1, &out->time, path,
                             err) < 0 ? -1 : 1;
    if (rc > 0)
        rc = orr_h5_get_attr(h, "Header", "NumFilesPerSnapshot", H5T_NATIVE_INT, 1, &nfiles,
                             path, err) < 0 ? -1 : 1;
    if (rc > 0) {   /* a frame's centre, where the bodies are relative to one */
        int fc = orr_h5_get_attr(h, "Header", "FrameCenter", H5T_NATIVE_DOUBLE, 3,
                                 out->frame_center, path, err);
        int fv = fc <= 0 ? fc : orr_h5_get_attr(h, "Header", "FrameVelocity", H5T_NATIVE_DOUBLE,
                                                3, out->frame_velocity, path, err);
        rc = fc < 0 || fv < 0 ? -1 : 1;
        out->frame = fc > 0 && fv > 0;
    }
    H5Gclose(h);
    if (rc <= 0)
        return err ? err->code : ORR_ERR_IO;
    if (nfiles > 1)
        return orr_read_failed(path, err,
                               "the snapshot is split over %d files; only single-file "
                               "snapshots can be read", nfiles);
    long long n = 0;
    int types = 0, last = -1;
    for (int k = 0; k < NTYPES; k++) {
        if (np[k] < 0 || np[k] > (1LL << 40))
            return orr_read_failed(path, err, "Header/NumPart_ThisFile[%d] is %lld", k, np[k]);
        if (!isfinite(masstab[k]) || masstab[k] < 0)
            return orr_read_failed(path, err, "Header/MassTable[%d] is %g", k, masstab[k]);
        n += np[k];
        if (np[k] > 0) {
            types++;
            last = k;
        }
    }
    if (n == 0)
        return orr_read_failed(path, err,
                               "the file holds no particles (NumPart_ThisFile is all 0)");
    if (!isfinite(out->time))
        return orr_read_failed(path, err, "Header/Time is %g", out->time);
    orr_status st = check_counts(file, np, path, err);
    if (st)
        return st;
    out->pos = malloc(sizeof(double) * 4 * (size_t)n);
    out->vel = malloc(sizeof(double) * 3 * (size_t)n);
    double *tmp = malloc(sizeof(double) * 3 * (size_t)n);
    if (!out->pos || !out->vel || !tmp) {
        free(tmp);
        return orr_fail(err, ORR_ERR_NOMEM, "cannot read '%s': out of memory for %lld bodies",
                        path, n);
    }
    out->n = (long)n;
    long long off = 0;
    for (int k = 0; k < NTYPES && !st; k++) {
        char gname[16];
        snprintf(gname, sizeof gname, "PartType%d", k);
        ex = H5Lexists(file, gname, H5P_DEFAULT);
        hid_t g = ex > 0 ? H5Gopen2(file, gname, H5P_DEFAULT) : -1;
        H5Eclear2(H5E_DEFAULT);
        if (ex > 0 && g < 0) {
            st = orr_read_failed(path, err, "%s is not a group", gname);
            break;
        }
        if (np[k] == 0) {
            long long rows = g >= 0 ? coordinate_rows(g) : -1;
            if (rows > 0)
                st = orr_read_failed(path, err, "%s/Coordinates has %lld rows but "
                                     "NumPart_ThisFile[%d] is 0", gname, rows, k);
            orr_h5_close(&g, H5Gclose);
            continue;
        }
        if (g < 0) {
            st = orr_read_failed(path, err,
                                 "NumPart_ThisFile[%d] is %lld but there is no %s group", k,
                                 np[k], gname);
            break;
        }
        rc = orr_h5_get_dataset(g, gname, "Coordinates", np[k], 3, 0, 0, tmp, path, err);
        if (rc == 0)
            orr_read_failed(path, err, "%s has no Coordinates dataset", gname);
        for (long long i = 0; rc > 0 && i < np[k]; i++) {
            memcpy(out->pos + 4 * (off + i), tmp + 3 * i, 3 * sizeof(double));
            out->pos[4 * (off + i) + 3] = masstab[k];
        }
        if (rc > 0) {
            rc = orr_h5_get_dataset(g, gname, "Velocities", np[k], 3, 0, 0, out->vel + 3 * off,
                                    path, err);
            if (rc == 0)
                orr_read_failed(path, err, "%s has no Velocities dataset", gname);
        }
        if (rc > 0) {
            rc = orr_h5_get_dataset(g, gname, "Masses", np[k], 0, 0, 1, tmp, path, err);
            if (rc == 0 && masstab[k] == 0) {
                orr_read_failed(path, err,
                                "%s has no Masses dataset and Header/MassTable[%d] is 0",
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
        orr_h5_close(&g, H5Gclose);
    }
    free(tmp);
    return st;
}

orr_status orr_snapshot_read(const char *path, orr_snapshot *out, orr_error *err)
{
    memset(out, 0, sizeof *out);
    orr_h5_quiet();
    orr_status st;
    if (orr_text_sep(path)) {
        st = orr_text_read(path, out, err);
    } else {
        hid_t file;
        st = orr_h5_open_read(path, &file, err);
        if (!st)
            st = orr_snapshot_read_h5(file, path, out, err);
        orr_h5_close(&file, H5Fclose);
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
