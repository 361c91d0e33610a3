/* checkpoint: a snapshot plus what it takes to continue the run bit for
 * bit, written, read back and turned into a simulation again (see
 * checkpoint.h).  The bodies are snapshot.c's GADGET layout; the HDF5
 * helpers are h5util.c's. */
#include "checkpoint.h"
#include "h5util.h"
#include "law.h"
#include "field.h"
#include "frame.h"
#include "textio.h"
#include "util.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define CHECKPOINT_FORMAT 1   /* Run/format: bump when the layout changes */

/* ---- writing ------------------------------------------------------------------ */

/* Run: the clock and everything orr_sim_create needs. */
static orr_status write_run(hid_t file, orr_sim *s, const char *path, orr_error *err)
{
    const orr_sim_config *c = orr_sim_config_of(s);
    hid_t g = H5Gcreate2(file, "Run", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = g < 0 ? -1 : orr_h5_put_int(g, "format", CHECKPOINT_FORMAT);
    if (r >= 0)
        r = orr_h5_put_double(g, "time", orr_sim_clock(s));
    if (r >= 0)
        r = orr_h5_put_double(g, "time_compensation", orr_sim_time_compensation(s));
    if (r >= 0)
        r = orr_h5_put_long(g, "steps", orr_sim_steps(s));
    if (r >= 0)
        r = orr_h5_put_double(g, "dt", c->dt);
    if (r >= 0)
        r = orr_h5_put_string(g, "integrator", c->integrator);
    if (r >= 0)
        r = orr_h5_put_double(g, "damping", c->damping);
    if (r >= 0)   /* block time steps (hermite) */
        r = orr_h5_put_double(g, "eta", c->eta);
    if (r >= 0)
        r = orr_h5_put_double(g, "eta_start", c->eta_start);
    if (r >= 0)
        r = orr_h5_put_double(g, "dt_min", c->dt_min);
    if (r >= 0)   /* regularisation (hermite: groups.h) */
        r = orr_h5_put_int(g, "regularize", c->regularize);
    if (r >= 0)
        r = orr_h5_put_double(g, "reg_r_close", c->reg_r_close);
    if (r >= 0)
        r = orr_h5_put_double(g, "reg_gamma", c->reg_gamma);
    if (r >= 0)
        r = orr_h5_put_double(g, "reg_encounter", c->reg_encounter);
    if (r >= 0)
        r = orr_h5_put_string(g, "precision", orr_precision_name(c->precision));
    if (r >= 0)
        r = orr_h5_put_string(g, "backend", orr_engine_backend_name(orr_sim_engine(s)));
    if (r >= 0)
        r = orr_h5_put_int(g, "device", c->device);
    if (r >= 0)
        r = orr_h5_put_double(g, "softening", c->softening);
    if (r >= 0)
        r = orr_h5_put_double(g, "G", c->G);
    if (r >= 0)
        r = orr_h5_put_doubles(g, "box", c->box, 3);
    if (r >= 0)
        r = orr_h5_put_int(g, "dims", c->dims);
    if (r >= 0 && orr_units_physical(&c->units)) {   /* absent: N-body units */
        r = orr_h5_put_double(g, "units_length_cm", c->units.length_cm);
        if (r >= 0)
            r = orr_h5_put_double(g, "units_mass_g", c->units.mass_g);
        if (r >= 0)
            r = orr_h5_put_string(g, "units_length", c->units.length);
        if (r >= 0)
            r = orr_h5_put_string(g, "units_mass", c->units.mass);
    }
    orr_h5_close(&g, H5Gclose);
    return r < 0 ? orr_h5_write_failed(path, "Run", err) : ORR_OK;
}

/* Kernel: the configuration the kernels were built with. */
static orr_status write_kernel(hid_t file, orr_sim *s, const char *path, orr_error *err)
{
    const char *source;
    const orr_kspec *k = orr_sim_kspec(s, &source);
    hid_t g = H5Gcreate2(file, "Kernel", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = g < 0 ? -1 : orr_h5_put_int(g, "block", k->launch.block);
    if (r >= 0)
        r = orr_h5_put_int(g, "unroll", k->launch.unroll);
    if (r >= 0)
        r = orr_h5_put_int(g, "split", k->launch.split);
    if (r >= 0)
        r = orr_h5_put_int(g, "ipt", k->launch.ipt);
    if (r >= 0)
        r = orr_h5_put_int(g, "ftz", k->launch.ftz);
    if (r >= 0)
        r = orr_h5_put_int(g, "newton", k->launch.newton);
    if (r >= 0)
        r = orr_h5_put_int(g, "threads", k->launch.threads);
    if (r >= 0)
        r = orr_h5_put_int(g, "ranges", k->launch.ranges);
    if (r >= 0)
        r = orr_h5_put_int(g, "prefetch", k->launch.prefetch);
    if (r >= 0)
        r = orr_h5_put_string(g, "source", source);
    const orr_htune_result *h = orr_sim_hermite_tuning(s);
    if (r >= 0 && h) {   /* tile, blocks per SM of each bucket */
        int v[2 * ORR_HBUCKETS];
        for (int b = 0; b < h->nbuckets; b++)
            v[2 * b] = h->launch[b].tile, v[2 * b + 1] = h->launch[b].per_sm;
        r = orr_h5_put_attr(g, "hermite_launch", H5T_STD_I32LE, H5T_NATIVE_INT,
                            (hsize_t)(2 * h->nbuckets), v);
    }
    orr_h5_close(&g, H5Gclose);
    return r < 0 ? orr_h5_write_failed(path, "Kernel", err) : ORR_OK;
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
    herr_t r = g < 0 ? -1 : orr_h5_put_string(g, "name", law->name);
    if (r >= 0)
        r = orr_h5_put_int(g, "builtin", law->builtin);
    if (r >= 0)
        r = orr_h5_put_string(g, "origin", law->origin);
    if (r >= 0)
        r = orr_h5_put_string(g, "doc", law->doc);
    if (r >= 0)
        r = orr_h5_put_string(g, "scale", law->scale);
    if (r >= 0)
        r = orr_h5_put_int(g, "finite_at_zero", law->finite_at_zero);
    if (r >= 0)
        r = orr_h5_put_string(g, "pair", law->pair);
    if (r >= 0)
        r = orr_h5_put_int(g, "pair_line", law->pair_line);
    if (r >= 0)
        r = orr_h5_put_string(g, "potential", law->potential);
    if (r >= 0)
        r = orr_h5_put_int(g, "potential_line", law->potential_line);
    if (r >= 0 && orr_law_has_jerk(law))
        r = orr_h5_put_string(g, "jerk", law->jerk);
    if (r >= 0 && orr_law_has_jerk(law))
        r = orr_h5_put_int(g, "jerk_line", law->jerk_line);
    join_names(names, sizeof names, law->nparams, param_name, law);
    if (r >= 0)
        r = orr_h5_put_string(g, "params", names);
    if (r >= 0 && law->nparams) {
        double v[ORR_LAW_MAX_PARAMS];
        int rt[ORR_LAW_MAX_PARAMS];
        for (int k = 0; k < law->nparams; k++) {
            v[k] = law->params[k].value;
            rt[k] = law->params[k].runtime;
        }
        r = orr_h5_put_doubles(g, "param_values", v, (hsize_t)law->nparams);
        if (r >= 0)
            r = orr_h5_put_attr(g, "param_runtime", H5T_STD_I32LE, H5T_NATIVE_INT,
                                (hsize_t)law->nparams, rt);
    }
    join_names(names, sizeof names, law->nattrs, attr_name, law);
    if (r >= 0)
        r = orr_h5_put_string(g, "attributes", names);
    orr_h5_close(&g, H5Gclose);
    return r < 0 ? orr_h5_write_failed(path, "Force", err) : ORR_OK;
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
    herr_t r = g < 0 ? -1 : orr_h5_put_long(g, "snapshot", o->snapshot);
    if (r >= 0)
        r = orr_h5_put_long(g, "frame", o->frame);
    if (r >= 0)
        r = orr_h5_put_int(g, "view", v->have_view);
    if (r >= 0)
        r = orr_h5_put_int(g, "view_axis", v->axis);
    if (r >= 0)
        r = orr_h5_put_doubles(g, "view_centre", v->centre, 2);
    if (r >= 0)
        r = orr_h5_put_doubles(g, "view_extent", v->extent, 4);
    if (r >= 0)
        r = orr_h5_put_int(g, "range", v->have_range);
    if (r >= 0)
        r = orr_h5_put_int(g, "range_log", v->range_log);
    if (r >= 0)
        r = orr_h5_put_doubles(g, "range_values", v->range, 2);
    orr_h5_close(&g, H5Gclose);
    return r < 0 ? orr_h5_write_failed(path, "Output", err) : ORR_OK;
}

/* What fill_checkpoint writes after the bodies. */
typedef struct {
    orr_sim *s;
    const char *path;
    const orr_output_state *out;
} checkpoint_job;

/* Group Integrator: the integrator's checkpoint fields, when it has any,
 * and whether they describe the state (attribute "current"): a checkpoint
 * taken when they do not (before the first step, after a change of the
 * bodies) stores none, and its run starts the integrator afresh, as the
 * run it was taken from does. */
static orr_status write_integrator(hid_t file, orr_sim *s, const char *path, orr_error *err)
{
    const orr_integrator *in = orr_sim_integrator(s);
    if (in->nfields == 0)
        return ORR_OK;
    const long n = orr_sim_n(s);
    orr_status st = orr_sim_sync(s, err);
    if (st)
        return st;
    const int current = orr_sim_integ_current(s);
    hid_t g = H5Gcreate2(file, "Integrator", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = g < 0 ? -1 : orr_h5_put_string(g, "name", in->name);
    if (r >= 0)
        r = orr_h5_put_int(g, "current", current);
    for (int k = 0; current && r >= 0 && !st && k < in->nfields; k++) {
        const int comps = in->fields[k].comps;
        double *v = malloc(sizeof(double) * (size_t)n * (size_t)comps);
        if (!v) {
            st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
            break;
        }
        st = orr_sim_integ_field(s, k, v, err);
        if (!st)
            r = orr_h5_put_dataset(g, in->fields[k].name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                                   (hsize_t)n, comps > 1 ? (hsize_t)comps : 0, v);
        free(v);
    }
    orr_h5_close(&g, H5Gclose);
    if (st)
        return st;
    return r < 0 ? orr_h5_write_failed(path, "Integrator", err) : ORR_OK;
}

/* Fields: every external field as it is now (name, origin, doc, its code and
 * expression with their lines, its params with their values, runtime
 * flags, units and docs), so a restart builds the same source. */
static orr_status write_fields(hid_t file, orr_sim *s, const char *path, orr_error *err)
{
    const orr_fieldset *fs = orr_sim_fields(s);
    if (fs->n == 0)
        return ORR_OK;
    hid_t g = H5Gcreate2(file, "Fields", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = g < 0 ? -1 : orr_h5_put_int(g, "count", fs->n);
    for (int k = 0; r >= 0 && k < fs->n; k++) {
        const orr_field *f = &fs->f[k];
        char name[32];
        snprintf(name, sizeof name, "field%d", k);
        hid_t h = H5Gcreate2(g, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        r = h < 0 ? -1 : orr_h5_put_string(h, "name", f->name);
        const char *strs[][2] = {{"doc", f->doc},           {"origin", f->origin},
                                 {"accel", f->accel},       {"potential", f->potential},
                                 {"jerk", f->jerk},         {"expr", f->expr}};
        for (size_t q = 0; r >= 0 && q < sizeof strs / sizeof strs[0]; q++)
            r = orr_h5_put_string(h, strs[q][0], strs[q][1] ? strs[q][1] : "");
        const int ints[] = {f->builtin, f->accel_line, f->potential_line, f->jerk_line,
                            f->expr_line, f->nparams};
        if (r >= 0)
            r = orr_h5_put_attr(h, "flags", H5T_STD_I32LE, H5T_NATIVE_INT, 6, ints);
        if (r >= 0 && f->nparams) {
            double v[ORR_FIELD_MAX_PARAMS], cgs[ORR_FIELD_MAX_PARAMS];
            int rt[ORR_FIELD_MAX_PARAMS], given[ORR_FIELD_MAX_PARAMS];
            char names[ORR_FIELD_MAX_PARAMS * (ORR_LAW_NAME_MAX + 1) + 1] = "",
                 units[ORR_FIELD_MAX_PARAMS * 13 + 1] = "",
                 docs[ORR_FIELD_MAX_PARAMS * 97 + 1] = "";
            for (int q = 0; q < f->nparams; q++) {
                const orr_field_param *p = &f->params[q];
                v[q] = p->value, cgs[q] = p->cgs, rt[q] = p->runtime, given[q] = p->given;
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                         q ? "," : "", p->name);
                snprintf(units + strlen(units), sizeof units - strlen(units), "%s%s",
                         q ? "," : "", p->unit);
                snprintf(docs + strlen(docs), sizeof docs - strlen(docs), "%s%s",
                         q ? "\n" : "", p->doc);
            }
            r = orr_h5_put_string(h, "param_names", names);
            if (r >= 0)
                r = orr_h5_put_string(h, "param_units", units);
            if (r >= 0)
                r = orr_h5_put_string(h, "param_docs", docs);
            if (r >= 0)
                r = orr_h5_put_doubles(h, "param_values", v, (hsize_t)f->nparams);
            if (r >= 0)
                r = orr_h5_put_doubles(h, "param_cgs", cgs, (hsize_t)f->nparams);
            if (r >= 0)
                r = orr_h5_put_attr(h, "param_runtime", H5T_STD_I32LE, H5T_NATIVE_INT,
                                    (hsize_t)f->nparams, rt);
            if (r >= 0)
                r = orr_h5_put_attr(h, "param_given", H5T_STD_I32LE, H5T_NATIVE_INT,
                                    (hsize_t)f->nparams, given);
        }
        orr_h5_close(&h, H5Gclose);
    }
    orr_h5_close(&g, H5Gclose);
    return r < 0 ? orr_h5_write_failed(path, "Fields", err) : ORR_OK;
}

/* Frame: where it started (the config) and its centre's orbit so far. */
static orr_status write_frame(hid_t file, orr_sim *s, const char *path, orr_error *err)
{
    const orr_sim_config *c = orr_sim_config_of(s);
    if (!c->frame)
        return ORR_OK;
    double *nodes = NULL;
    long count = 0;
    orr_status st = orr_sim_frame_nodes(s, &nodes, &count, err);
    if (st)
        return st;
    hid_t g = H5Gcreate2(file, "Frame", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = g < 0 ? -1 : orr_h5_put_doubles(g, "center", c->frame_center, 3);
    if (r >= 0)
        r = orr_h5_put_doubles(g, "velocity", c->frame_velocity, 3);
    if (r >= 0)
        r = orr_h5_put_double(g, "step", c->frame_step);
    if (r >= 0)
        r = orr_h5_put_long(g, "node_count", count);
    if (r >= 0)
        r = orr_h5_put_dataset(g, "nodes", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, (hsize_t)count,
                               ORR_FRAME_NODE, nodes);
    free(nodes);
    orr_h5_close(&g, H5Gclose);
    return r < 0 ? orr_h5_write_failed(path, "Frame", err) : ORR_OK;
}

static orr_status fill_checkpoint(hid_t file, void *ctx, orr_error *err)
{
    const checkpoint_job *j = ctx;
    orr_status st = write_run(file, j->s, j->path, err);
    if (!st)
        st = write_kernel(file, j->s, j->path, err);
    if (!st)
        st = write_force(file, j->s, j->path, err);
    if (!st)
        st = write_output(file, j->out, j->path, err);
    if (!st)
        st = write_integrator(file, j->s, j->path, err);
    if (!st)
        st = write_fields(file, j->s, j->path, err);
    if (!st)
        st = write_frame(file, j->s, j->path, err);
    return st;
}

orr_status orr_checkpoint_write(orr_sim *s, const char *path, const orr_output_state *out,
                                orr_error *err)
{
    checkpoint_job job = {s, path, out};
    return orr_snapshot_write_with(s, path, NULL, 0, fill_checkpoint, &job, err);
}

/* ---- reading ------------------------------------------------------------------ */

/* Opens group name of file, or fails naming it as required. */
static hid_t open_group(hid_t file, const char *name, const char *why_needed, const char *path,
                        orr_error *err)
{
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        orr_read_failed(path, err, "no %s group (%s)", name, why_needed);
        return -1;
    }
    hid_t g = H5Gopen2(file, name, H5P_DEFAULT);
    if (g < 0) {
        H5Eclear2(H5E_DEFAULT);
        orr_read_failed(path, err, "%s is not a group", name);
    }
    return g;
}

/* Required numeric attribute: 1, or -1 with err set. */
static int need_attr(hid_t g, const char *where, const char *name, hid_t mtype, hssize_t count,
                     void *out, const char *path, orr_error *err)
{
    int rc = orr_h5_get_attr(g, where, name, mtype, count, out, path, err);
    if (rc == 0)
        orr_read_failed(path, err, "%s has no '%s' attribute", where, name);
    return rc > 0 ? 1 : -1;
}

static int need_string(hid_t g, const char *where, const char *name, char *out, size_t size,
                       const char *path, orr_error *err)
{
    int rc = orr_h5_get_string(g, where, name, out, size, path, err);
    if (rc == 0)
        orr_read_failed(path, err, "%s has no '%s' attribute", where, name);
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
        orr_read_failed(path, err, "checkpoint format %d is newer than this orrery's (%d)",
                        format, CHECKPOINT_FORMAT);
        rc = -1;
    }
    if (rc > 0)
        rc = need_attr(g, "Run", "time", H5T_NATIVE_DOUBLE, 1, &ck->time, path, err);
    if (rc > 0 && orr_h5_get_attr(g, "Run", "time_compensation", H5T_NATIVE_DOUBLE, 1, &ck->time_c,
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
    /* absent from checkpoints written before block time steps: the defaults */
    if (rc > 0 && H5Aexists(g, "eta") > 0)
        rc = need_attr(g, "Run", "eta", H5T_NATIVE_DOUBLE, 1, &c->eta, path, err);
    if (rc > 0 && H5Aexists(g, "eta_start") > 0)
        rc = need_attr(g, "Run", "eta_start", H5T_NATIVE_DOUBLE, 1, &c->eta_start, path, err);
    if (rc > 0 && H5Aexists(g, "dt_min") > 0)
        rc = need_attr(g, "Run", "dt_min", H5T_NATIVE_DOUBLE, 1, &c->dt_min, path, err);
    /* absent from checkpoints written before regularisation: off */
    if (rc > 0 && H5Aexists(g, "regularize") > 0)
        rc = need_attr(g, "Run", "regularize", H5T_NATIVE_INT, 1, &c->regularize, path, err);
    if (rc > 0 && H5Aexists(g, "reg_r_close") > 0)
        rc = need_attr(g, "Run", "reg_r_close", H5T_NATIVE_DOUBLE, 1, &c->reg_r_close, path,
                       err);
    if (rc > 0 && H5Aexists(g, "reg_gamma") > 0)
        rc = need_attr(g, "Run", "reg_gamma", H5T_NATIVE_DOUBLE, 1, &c->reg_gamma, path, err);
    if (rc > 0 && H5Aexists(g, "reg_encounter") > 0)
        rc = need_attr(g, "Run", "reg_encounter", H5T_NATIVE_DOUBLE, 1, &c->reg_encounter,
                       path, err);
    else if (rc > 0)   /* written before the setting: the 0.25 such runs had, to go on alike */
        c->reg_encounter = 0.25;
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
    /* physical units (absent from checkpoints in N-body units, and from
     * those written before units) */
    if (rc > 0 && H5Aexists(g, "units_length_cm") > 0) {
        orr_units *u = &c->units;
        rc = need_attr(g, "Run", "units_length_cm", H5T_NATIVE_DOUBLE, 1, &u->length_cm, path,
                       err);
        if (rc > 0)
            rc = need_attr(g, "Run", "units_mass_g", H5T_NATIVE_DOUBLE, 1, &u->mass_g, path, err);
        if (rc > 0)
            rc = need_string(g, "Run", "units_length", u->length, sizeof u->length, path, err);
        if (rc > 0)
            rc = need_string(g, "Run", "units_mass", u->mass, sizeof u->mass, path, err);
    }
    H5Gclose(g);
    if (rc < 0)
        return err ? err->code : ORR_ERR_IO;
    orr_error perr = {0};
    /* the compensation is what the last rounding of the clock lost: at most
     * about an ulp of the time */
    if (!isfinite(ck->time) || !isfinite(ck->time_c) || steps < 0 ||
        !(fabs(ck->time_c) <= 2 * DBL_EPSILON * fabs(ck->time)))
        return orr_read_failed(path, err, "Run has a bad clock (time %g, compensation %g, "
                               "steps %lld)", ck->time, ck->time_c,
                               steps);
    ck->steps = (long)steps;
    /* the integrator is looked up on restore: it may be one of the caller's own */
    if (orr_precision_parse(precision, &c->precision, &perr) ||
        orr_backend_parse(ck->backend, &c->backend, &perr)) {
        orr_error_clear(&perr);
        return orr_read_failed(path, err, "Run has an unknown precision '%s' or backend '%s'",
                               precision, ck->backend);
    }
    if (orr_units_check(&c->units, c->G, &perr)) {
        orr_read_failed(path, err, "Run: %s", perr.msg);
        orr_error_clear(&perr);
        return err ? err->code : ORR_ERR_IO;
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
    if (rc > 0 &&
        orr_h5_get_attr(g, "Kernel", "ranges", H5T_NATIVE_INT, 1, &k->launch.ranges, path, err) < 0)
        rc = -1;   /* absent (checkpoints before j-ranges): 0, automatic */
    if (rc > 0 && orr_h5_get_attr(g, "Kernel", "prefetch", H5T_NATIVE_INT, 1, &k->launch.prefetch,
                                  path, err) < 0)
        rc = -1;   /* absent (checkpoints before prefetch): 0 */
    if (rc > 0 && orr_h5_get_string(g, "Kernel", "source", ck->kspec_source,
                                    sizeof ck->kspec_source, path, err) < 0)
        rc = -1;
    /* absent but for block steps on the GPU (and before them): none */
    const int nb = orr_hbucket(ck->bodies.n) + 1;
    int v[2 * ORR_HBUCKETS];
    int got = rc > 0 ? orr_h5_get_attr(g, "Kernel", "hermite_launch", H5T_NATIVE_INT, 2 * nb, v,
                                       path, err)
                     : 0;
    if (got < 0)
        rc = -1;
    for (int b = 0; got > 0 && b < nb; b++) {
        ck->hlaunch[b] = (orr_hlaunch){v[2 * b], v[2 * b + 1]};
        if (!orr_hlaunch_valid(ck->hlaunch[b])) {
            orr_read_failed(path, err, "Kernel/hermite_launch: bucket %d has tile %d and %d "
                            "blocks per SM (tiles are 64, 128 or 256; 1 to 64 blocks per SM)",
                            b, v[2 * b], v[2 * b + 1]);
            rc = -1;
            break;
        }
    }
    ck->nhlaunch = got > 0 && rc > 0 ? nb : 0;
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
    char doc[sizeof ck->law.doc], scale[sizeof ck->law.scale],
        list[ORR_LAW_MAX_PARAMS * ORR_LAW_NAME_MAX + 1];
    int builtin = 0, finite = 0, pl = 1, ul = 1;
    char *pair = get_long_string(g, "Force", "pair", path, err);
    char *pot = pair ? get_long_string(g, "Force", "potential", path, err) : NULL;
    char *origin = pot ? get_long_string(g, "Force", "origin", path, err) : NULL;
    if (!pair || !pot || !origin ||
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
        if (H5Aexists(g, "jerk") > 0) {   /* laws with a jerk (the Hermite integrator) */
            char *jerk = get_long_string(g, "Force", "jerk", path, err);
            int jl = 1;
            if (!jerk || need_attr(g, "Force", "jerk_line", H5T_NATIVE_INT, 1, &jl, path, err) < 0)
                st = err ? err->code : ORR_ERR_IO;
            if (!st)
                st = orr_law_set_jerk(&ck->law, jerk, jl, err);
            free(jerk);
        }
        if (!st && orr_h5_get_string(g, "Force", "doc", doc, sizeof doc, path, err) > 0)
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
    free(origin);
    H5Gclose(g);
    if (!st)
        ck->config.law = &ck->law;
    return st;
}

/* The part of list (separated by sep) numbered k into out[size]. */
static void nth(const char *list, char sep, int k, char *out, size_t size)
{
    const char *p = list;
    for (int i = 0; i < k && p; i++) {
        p = strchr(p, sep);
        p = p ? p + 1 : NULL;
    }
    size_t len = 0;
    if (p) {
        const char *e = strchr(p, sep);
        len = e ? (size_t)(e - p) : strlen(p);
    }
    len = len < size - 1 ? len : size - 1;
    if (p)
        memcpy(out, p, len);
    out[len] = '\0';
}

/* One field of group Fields, as stored. */
static orr_status read_one_field(hid_t h, const char *where, const char *path, orr_field *f,
                                 orr_error *err)
{
    char name[sizeof f->name], doc[sizeof f->doc];
    int flags[6];
    char *txt[5] = {NULL, NULL, NULL, NULL, NULL};   /* origin accel potential jerk expr */
    static const char *const keys[5] = {"origin", "accel", "potential", "jerk", "expr"};
    orr_status st = ORR_OK;
    if (need_string(h, where, "name", name, sizeof name, path, err) < 0 ||
        need_string(h, where, "doc", doc, sizeof doc, path, err) < 0 ||
        need_attr(h, where, "flags", H5T_NATIVE_INT, 6, flags, path, err) < 0)
        return err ? err->code : ORR_ERR_IO;
    for (int q = 0; !st && q < 5; q++)
        if (!(txt[q] = get_long_string(h, where, keys[q], path, err)))
            st = err ? err->code : ORR_ERR_IO;
    if (!st && (flags[5] < 0 || flags[5] > ORR_FIELD_MAX_PARAMS))
        st = orr_read_failed(path, err, "%s has %d params", where, flags[5]);
    for (int q = 1; !st && q <= 4; q++)   /* the code's first lines */
        if (flags[q] < 1)
            st = orr_read_failed(path, err, "%s: line %d of its code is not a line number", where,
                                 flags[q]);
    if (!st)
        st = orr_field_init(f, name, txt[0], err);
    if (!st) {
        snprintf(f->doc, sizeof f->doc, "%s", doc);
        f->builtin = flags[0];
    }
    if (!st && flags[5] > 0) {
        char names[ORR_FIELD_MAX_PARAMS * (ORR_LAW_NAME_MAX + 1) + 1],
            units[ORR_FIELD_MAX_PARAMS * 13 + 1], docs[ORR_FIELD_MAX_PARAMS * 97 + 1];
        double v[ORR_FIELD_MAX_PARAMS], cgs[ORR_FIELD_MAX_PARAMS];
        int rt[ORR_FIELD_MAX_PARAMS], given[ORR_FIELD_MAX_PARAMS];
        const int np = flags[5];
        if (need_string(h, where, "param_names", names, sizeof names, path, err) < 0 ||
            need_string(h, where, "param_units", units, sizeof units, path, err) < 0 ||
            need_string(h, where, "param_docs", docs, sizeof docs, path, err) < 0 ||
            need_attr(h, where, "param_values", H5T_NATIVE_DOUBLE, np, v, path, err) < 0 ||
            need_attr(h, where, "param_cgs", H5T_NATIVE_DOUBLE, np, cgs, path, err) < 0 ||
            need_attr(h, where, "param_runtime", H5T_NATIVE_INT, np, rt, path, err) < 0 ||
            need_attr(h, where, "param_given", H5T_NATIVE_INT, np, given, path, err) < 0)
            st = err ? err->code : ORR_ERR_IO;
        for (int q = 0; !st && q < np; q++) {
            char pn[ORR_LAW_NAME_MAX];
            nth(names, ',', q, pn, sizeof pn);
            st = orr_field_add_param(f, pn, v[q], err);
            if (!st && rt[q])
                st = orr_field_set_runtime(f, pn, err);
            if (!st) {
                orr_field_param *p = &f->params[q];
                p->cgs = cgs[q];
                p->given = given[q];
                nth(units, ',', q, p->unit, sizeof p->unit);
                nth(docs, '\n', q, p->doc, sizeof p->doc);
            }
        }
    }
    if (!st)   /* the code as it was (an expression's too, folded as it was) */
        st = orr_field_set_code(f, txt[1], txt[2], txt[3], err);
    if (!st && txt[4][0]) {
        free(f->expr);
        f->expr = txt[4];
        txt[4] = NULL;
    }
    if (!st) {
        f->accel_line = flags[1], f->potential_line = flags[2], f->jerk_line = flags[3];
        f->expr_line = flags[4];
        st = orr_field_validate(f, err);
    }
    for (int q = 0; q < 5; q++)
        free(txt[q]);
    return st;
}

/* Fields and Frame: optional (a run without fields or frame). */
static orr_status read_fields(hid_t file, const char *path, orr_checkpoint *ck, orr_error *err)
{
    orr_status st = ORR_OK;
    if (H5Lexists(file, "Fields", H5P_DEFAULT) > 0) {
        hid_t g = H5Gopen2(file, "Fields", H5P_DEFAULT);
        int count = 0;
        if (g < 0 || need_attr(g, "Fields", "count", H5T_NATIVE_INT, 1, &count, path, err) < 0)
            st = err && err->code ? err->code : orr_read_failed(path, err, "Fields cannot be read");
        if (!st && (count < 1 || count > ORR_FIELD_MAX))
            st = orr_read_failed(path, err, "Fields has %d fields", count);
        for (int k = 0; !st && k < count; k++) {
            char name[32], where[48];
            snprintf(name, sizeof name, "field%d", k);
            snprintf(where, sizeof where, "Fields/%s", name);
            hid_t h = H5Lexists(g, name, H5P_DEFAULT) > 0 ? H5Gopen2(g, name, H5P_DEFAULT) : -1;
            orr_field f;
            memset(&f, 0, sizeof f);
            st = h < 0 ? orr_read_failed(path, err, "no group %s", where)
                       : read_one_field(h, where, path, &f, err);
            if (!st)
                st = orr_fieldset_add(&ck->fields, &f, err);
            orr_field_free(&f);
            orr_h5_close(&h, H5Gclose);
        }
        orr_h5_close(&g, H5Gclose);
        if (!st)
            ck->config.fields = &ck->fields;
    }
    H5Eclear2(H5E_DEFAULT);
    if (!st && H5Lexists(file, "Frame", H5P_DEFAULT) > 0) {
        hid_t g = H5Gopen2(file, "Frame", H5P_DEFAULT);
        long count = 0;
        if (g < 0 ||
            need_attr(g, "Frame", "center", H5T_NATIVE_DOUBLE, 3, ck->config.frame_center, path,
                      err) < 0 ||
            need_attr(g, "Frame", "velocity", H5T_NATIVE_DOUBLE, 3, ck->config.frame_velocity,
                      path, err) < 0 ||
            need_attr(g, "Frame", "step", H5T_NATIVE_DOUBLE, 1, &ck->config.frame_step, path,
                      err) < 0 ||
            need_attr(g, "Frame", "node_count", H5T_NATIVE_LONG, 1, &count, path, err) < 0)
            st = err && err->code ? err->code : orr_read_failed(path, err, "Frame cannot be read");
        if (!st && (count < 1 || count > 100000000L))
            st = orr_read_failed(path, err, "Frame has %ld nodes", count);
        if (!st && !(ck->frame_nodes = malloc(sizeof(double) * ORR_FRAME_NODE * (size_t)count)))
            st = orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        if (!st && orr_h5_get_dataset(g, "Frame", "nodes", count, ORR_FRAME_NODE, 0, 0,
                                      ck->frame_nodes, path, err) != 1)
            st = err && err->code ? err->code : orr_read_failed(path, err, "Frame/nodes cannot be "
                                                                "read");
        orr_h5_close(&g, H5Gclose);
        if (!st) {
            ck->frame_count = count;
            ck->config.frame = 1;
        }
    }
    H5Eclear2(H5E_DEFAULT);
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
    int rc = orr_h5_get_attr(g, "Output", "snapshot", H5T_NATIVE_LLONG, 1, &snap, path, err);
    if (rc >= 0)
        rc = orr_h5_get_attr(g, "Output", "frame", H5T_NATIVE_LLONG, 1, &frame, path, err);
    if (rc >= 0)
        rc = orr_h5_get_attr(g, "Output", "view", H5T_NATIVE_INT, 1, &v->have_view, path, err);
    if (rc >= 0)
        rc = orr_h5_get_attr(g, "Output", "view_axis", H5T_NATIVE_INT, 1, &v->axis, path, err);
    if (rc >= 0)
        rc = orr_h5_get_attr(g, "Output", "view_centre", H5T_NATIVE_DOUBLE, 2, v->centre, path,
                             err);
    if (rc >= 0)
        rc = orr_h5_get_attr(g, "Output", "view_extent", H5T_NATIVE_DOUBLE, 4, v->extent, path,
                             err);
    if (rc >= 0)
        rc = orr_h5_get_attr(g, "Output", "range", H5T_NATIVE_INT, 1, &v->have_range, path, err);
    if (rc >= 0)
        rc = orr_h5_get_attr(g, "Output", "range_log", H5T_NATIVE_INT, 1, &v->range_log, path, err);
    if (rc >= 0)
        rc = orr_h5_get_attr(g, "Output", "range_values", H5T_NATIVE_DOUBLE, 2, v->range, path,
                             err);
    H5Gclose(g);
    if (rc < 0)
        return err ? err->code : ORR_ERR_IO;
    if (snap < 0 || frame < 0)
        return orr_read_failed(path, err, "Output has negative counters (%lld, %lld)", snap,
                               frame);
    o->snapshot = (long)snap;
    o->frame = (long)frame;
    return ORR_OK;
}

/* What reading group Integrator's datasets needs. */
typedef struct {
    orr_checkpoint *ck;
    const char *path;
    orr_error *err;
} field_job;

/* One dataset of group Integrator into the next field of ck. */
static herr_t read_field(hid_t g, const char *name, const H5L_info_t *info, void *ctx)
{
    field_job *j = ctx;
    orr_checkpoint *ck = j->ck;
    if (ck->nfields >= ORR_INTEG_MAX_FIELDS || strlen(name) >= sizeof ck->field_name[0]) {
        orr_read_failed(j->path, j->err, "Integrator/%s: too many fields or too long a name",
                        name);
        return -1;
    }
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT), space = d < 0 ? -1 : H5Dget_space(d);
    hsize_t dims[2] = {0, 0};
    int rank = space < 0 ? -1 : H5Sget_simple_extent_dims(space, dims, NULL);
    orr_h5_close(&space, H5Sclose);
    orr_h5_close(&d, H5Dclose);
    const int comps = rank == 2 ? (int)dims[1] : 1;
    if (rank < 1 || rank > 2 || comps < 1 || comps > 3) {
        orr_read_failed(j->path, j->err, "Integrator/%s is not an n x 1..3 dataset", name);
        return -1;
    }
    const long n = ck->bodies.n;
    double *v = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1) * (size_t)comps);
    if (!v) {
        orr_fail(j->err, ORR_ERR_NOMEM, "out of memory");
        return -1;
    }
    if (orr_h5_get_dataset(g, "Integrator", name, n, rank == 2 ? comps : 0, 0, 0, v, j->path,
                           j->err) != 1) {
        free(v);
        if (!j->err->msg[0])
            orr_read_failed(j->path, j->err, "Integrator/%s cannot be read", name);
        return -1;
    }
    snprintf(ck->field_name[ck->nfields], sizeof ck->field_name[0], "%s", name);
    ck->field_comps[ck->nfields] = comps;
    ck->field[ck->nfields++] = v;
    return 0;
}

/* Group Integrator, when there is one: every dataset in it, and whether
 * they describe the state (1 when the attribute is absent: a checkpoint
 * from before it was written). */
static orr_status read_integrator(hid_t file, const char *path, orr_checkpoint *ck,
                                  orr_error *err)
{
    ck->integ_current = 1;
    if (H5Lexists(file, "Integrator", H5P_DEFAULT) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return ORR_OK;
    }
    hid_t g = open_group(file, "Integrator", "", path, err);
    if (g < 0)
        return err->code ? err->code : ORR_ERR_IO;
    double current = 1;   /* read as a double: 0.99 is not 0, nor 1.7 1 */
    const int rc = orr_h5_get_attr(g, "Integrator", "current", H5T_NATIVE_DOUBLE, 1, &current,
                                   path, err);
    if (rc < 0 || (current != 0 && current != 1)) {
        orr_h5_close(&g, H5Gclose);
        return rc < 0 ? err->code
                      : orr_read_failed(path, err, "Integrator/current must be 0 or 1 (got %g)",
                                        current);
    }
    ck->integ_current = (int)current;
    field_job job = {ck, path, err};
    herr_t r = H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, read_field, &job);
    orr_h5_close(&g, H5Gclose);
    if (r < 0)
        return err->code ? err->code : orr_read_failed(path, err, "Integrator cannot be read");
    return ORR_OK;
}

/* The integrator's fields of s from ck, each by name (or its legacy
 * name), when they describe the state; else none, and the integrator
 * starts afresh.  Pending writes go to the engine first (the fields are
 * the state's as the engine holds it). */
static orr_status restore_fields(const orr_checkpoint *ck, orr_sim *s, orr_error *err)
{
    const orr_integrator *in = orr_sim_integrator(s);
    orr_status st = orr_sim_sync(s, err);
    for (int k = 0; !st && ck->integ_current && k < in->nfields; k++) {
        int f = -1, legacy = 0;
        for (int pass = 0; f < 0 && pass < 2; pass++) {
            const char *want = pass ? in->fields[k].legacy : in->fields[k].name;
            for (int m = 0; want && f < 0 && m < ck->nfields; m++)
                if (strcmp(ck->field_name[m], want) == 0)
                    f = m, legacy = pass;
        }
        if (f < 0 && in->fields[k].optional)
            continue;
        if (f < 0)
            return orr_fail(err, ORR_ERR_ARG, "checkpoint has no dataset Integrator/%s for the "
                            "integrator '%s'", in->fields[k].name, in->name);
        if (ck->field_comps[f] != in->fields[k].comps)
            return orr_fail(err, ORR_ERR_ARG, "checkpoint dataset Integrator/%s has %d values "
                            "per body; the integrator '%s' keeps %d", ck->field_name[f],
                            ck->field_comps[f], in->name, in->fields[k].comps);
        st = orr_sim_set_integ_field(s, k, legacy, ck->field[f], err);
        if (st)
            orr_error_context(err, "checkpoint dataset Integrator/%s", ck->field_name[f]);
    }
    return st;
}

orr_status orr_checkpoint_read(const char *path, orr_checkpoint *ck, orr_error *err)
{
    memset(ck, 0, sizeof *ck);
    orr_h5_quiet();
    orr_sim_config_default(&ck->config);
    ck->config.tune = ORR_SIM_TUNE_OFF;
    orr_kspec_default(&ck->kspec, ORR_TARGET_CPU);
    snprintf(ck->kspec_source, sizeof ck->kspec_source, "checkpoint");
    if (orr_text_sep(path))
        return orr_read_failed(path, err,
                               "a text file is not a checkpoint (checkpoints are HDF5)");
    hid_t file;
    orr_status st = orr_h5_open_read(path, &file, err);
    if (!st)
        st = orr_snapshot_read_h5(file, path, &ck->bodies, err);
    if (!st)
        st = read_run(file, path, ck, err);
    if (!st)
        st = read_kernel(file, path, ck, err);
    if (!st)
        st = read_force(file, path, ck, err);
    if (!st)
        st = read_output(file, path, ck, err);
    if (!st)
        st = read_integrator(file, path, ck, err);
    if (!st)
        st = read_fields(file, path, ck, err);
    orr_h5_close(&file, H5Fclose);
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
    for (int k = 0; k < ck->nfields; k++)
        free(ck->field[k]);
    ck->nfields = 0;
    if (ck->have_law)
        orr_law_free(&ck->law);
    ck->have_law = 0;
    ck->config.law = NULL;
    orr_fieldset_free(&ck->fields);
    ck->config.fields = NULL;
    free(ck->frame_nodes);
    ck->frame_nodes = NULL;
    ck->frame_count = 0;
}

/* Over several ranks, each having read the checkpoint for itself (one node
 * may see an older copy of the file): what it brings is the same on every
 * rank, or every rank fails alike (err->shared), naming the ranks of each
 * version.  The clock is compared as it reads; the rest (the clock's
 * compensation, the bodies, their attributes and the integrator's fields)
 * as a 64-bit hash.  Collective. */
static orr_status same_checkpoint(const orr_checkpoint *ck, orr_comm *comm, orr_error *err)
{
    static const char hint[] = "every rank must restore the same checkpoint: does a rank see "
                               "another copy of the file, an older one?";
    char clock[ORR_COMM_CHOICE], t[32];
    snprintf(clock, sizeof clock, "t = %s, step %ld",
             orr_shortest(t, sizeof t, ck->time - ck->time_c), ck->steps);
    orr_status st = orr_comm_same(comm, clock, "the checkpoint's clock", hint, err);
    if (st)
        return st;
    XXH3_state_t *h = XXH3_createState();
    st = h ? ORR_OK : orr_fail(err, ORR_ERR_NOMEM, "out of memory");
    if (h) {
        const size_t n = (size_t)ck->bodies.n;
        const long counts[3] = {ck->bodies.n, ck->nfields, ck->integ_current};
        XXH3_64bits_reset(h);
        XXH3_64bits_update(h, &ck->time_c, sizeof ck->time_c);
        XXH3_64bits_update(h, counts, sizeof counts);
        XXH3_64bits_update(h, ck->bodies.pos, sizeof(double) * 4 * n);
        XXH3_64bits_update(h, ck->bodies.vel, sizeof(double) * 3 * n);
        for (int k = 0; k < ck->bodies.nextra; k++) {
            XXH3_64bits_update(h, ck->bodies.extra[k].name, strlen(ck->bodies.extra[k].name) + 1);
            XXH3_64bits_update(h, ck->bodies.extra[k].values, sizeof(double) * n);
        }
        for (int k = 0; k < ck->nfields; k++) {
            XXH3_64bits_update(h, ck->field_name[k], strlen(ck->field_name[k]) + 1);
            XXH3_64bits_update(h, ck->field[k], sizeof(double) * n * (size_t)ck->field_comps[k]);
        }
    }
    char hash[ORR_COMM_CHOICE] = "";
    if (h)
        snprintf(hash, sizeof hash, "%016llx", (unsigned long long)XXH3_64bits_digest(h));
    XXH3_freeState(h);
    st = orr_comm_agree(comm, st, 1, err);
    return st ? st : orr_comm_same(comm, hash, "the checkpoint's bodies and integrator state "
                                   "(a hash of them)", hint, err);
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
    if (ck->frame_count &&   /* the centre's orbit as it was, before anything reads it */
        (st = orr_sim_set_frame_nodes(s, ck->frame_nodes, ck->frame_count, err)) != ORR_OK) {
        orr_error_context(err, "checkpoint's Frame");
        orr_sim_destroy(s);
        return st;
    }
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
    /* over several ranks, each having read the file for itself: every rank
     * got this far, and takes the same path below */
    if (c.comm && orr_comm_size(c.comm) > 1) {
        st = orr_comm_agree(c.comm, st, 1, err);
        if (!st)
            st = orr_comm_same(c.comm, ck->backend, "the checkpoint's backend",
                               "every rank must restore the same checkpoint", err);
        if (!st)
            st = same_checkpoint(ck, c.comm, err);
    }
    if (!st)   /* the same checkpoint on every rank: its writes are alike */
        orr_sim_writes_agreed(s);
    /* the stored kernel configuration, where it is meant for this backend
     * (every rank: it may differ from some ranks' own, and over several
     * ranks the call is collective) */
    if (!st && strcmp(orr_engine_backend_name(orr_sim_engine(s)), ck->backend) == 0)
        st = orr_sim_set_kspec(s, &ck->kspec, "checkpoint", err);
    if (!st && ck->nhlaunch && strcmp(orr_engine_backend_name(orr_sim_engine(s)), ck->backend) == 0)
        st = orr_sim_set_hermite_launch(s, ck->hlaunch, ck->nhlaunch, "checkpoint", err);
    if (!st)
        st = restore_fields(ck, s, err);
    if (st) {
        orr_sim_destroy(s);
        return st;
    }
    *out = s;
    return ORR_OK;
}
