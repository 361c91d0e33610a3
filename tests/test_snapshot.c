/* test_snapshot: HDF5 snapshots and checkpoints on the CPU backend: numbered
 * paths, the GADGET-4 layout as written, exact round trips (HDF5 and text),
 * GADGET files of other shapes (several particle types, float data, masses
 * from MassTable), every kind of bad input with its message, atomic writes
 * that leave the old file when they fail, and restarts that continue a run
 * bit for bit (leapfrog, yoshida4, euler; float and double; a periodic 2D
 * box; a non-default kernel configuration), and physical units as the
 * snapshots and checkpoints state them. */
#include "testutil.h"
#include "textio.h"

#include <dirent.h>
#include <errno.h>
#include <hdf5.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "outfile.h"
#include "snapshot.h"

static char dir[256];

static const char *tmp_path(const char *name)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* A simulation of config c (on the CPU, untuned) with random bodies. */
static orr_sim *sim_of(orr_sim_config *c, uint64_t seed)
{
    c->backend = ORR_BACKEND_CPU;
    c->tune = ORR_SIM_TUNE_OFF;
    orr_error err = {0};
    orr_sim *s = NULL;
    TU_OK(orr_sim_create(&s, c, NULL, 0, &err), &err);
    double *pos, *vel;
    TU_OK(orr_sim_pos(s, &pos, &err), &err);
    TU_OK(orr_sim_vel(s, &vel, &err), &err);
    tu_random_bodies(c->n, seed, pos, vel);
    orr_sim_touch(s);
    return s;
}

static orr_sim *make_sim(long n, orr_precision prec, const char *integ, double damping,
                         uint64_t seed)
{
    orr_sim_config c;
    orr_sim_config_default(&c);
    c.n = n;
    c.precision = prec;
    c.integrator = integ;
    c.damping = damping;
    return sim_of(&c, seed);
}

/* The engine's state in the mirror (after a zero-step flush). */
static void state(orr_sim *s, double **pos, double **vel)
{
    orr_error err = {0};
    TU_OK(orr_sim_step(s, 0, NULL, &err), &err);
    TU_OK(orr_sim_pos(s, pos, &err), &err);
    TU_OK(orr_sim_vel(s, vel, &err), &err);
}

static int count_temp_files(void)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int count = 0;
    for (struct dirent *e; (e = readdir(d));)
        count += strstr(e->d_name, ".tmp.") != NULL;
    closedir(d);
    return count;
}

/* ---- numbered paths ---------------------------------------------------------- */

static void expect_expand(const char *pattern, long k, const char *want, int want_numbered)
{
    char out[256];
    int numbered = -1;
    orr_error err = {0};
    TU_OK(orr_outfile_expand(pattern, k, out, sizeof out, &numbered, &err), &err);
    assert_string_equal(out, want);
    assert_int_equal(numbered, want_numbered);
}

static void expect_expand_error(const char *pattern, const char *msg)
{
    char out[256];
    orr_error err = {0};
    assert_int_equal(orr_outfile_expand(pattern, 1, out, sizeof out, NULL, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, msg);
}

static void test_expand(void **state_)
{
    (void)state_;
    expect_expand("out/snap_%03d.hdf5", 7, "out/snap_007.hdf5", 1);
    expect_expand("snap_%d.h5", 1234, "snap_1234.h5", 1);
    expect_expand("f_%5i.png", 42, "f_   42.png", 1);
    expect_expand("f_%-4d|.png", 42, "f_42  |.png", 1);
    expect_expand("plain.hdf5", 9, "plain.hdf5", 0);
    expect_expand("100%%_%02d.h5", 3, "100%_03.h5", 1);
    expect_expand("100%%.h5", 3, "100%.h5", 0);
    expect_expand_error("a_%s.h5", "output path 'a_%s.h5': '%s' is not allowed (use one integer "
                                   "conversion such as %03d, or %% for a literal %)");
    expect_expand_error("a_%ld.h5", "output path 'a_%ld.h5': '%ld' is not allowed (use one "
                                    "integer conversion such as %03d, or %% for a literal %)");
    expect_expand_error("a_%.2f.h5", "output path 'a_%.2f.h5': '%.2f' is not allowed (use one "
                                     "integer conversion such as %03d, or %% for a literal %)");
    expect_expand_error("a_%", "output path 'a_%': '%' is not allowed (use one integer "
                               "conversion such as %03d, or %% for a literal %)");
    expect_expand_error("a_%d_%03d.h5", "output path 'a_%d_%03d.h5': more than one number "
                                        "conversion ('%d' and '%03d'); use one, or %% for a "
                                        "literal %");
    char small[8];
    orr_error err = {0};
    assert_int_equal(orr_outfile_expand("snap_%03d.h5", 1, small, sizeof small, NULL, &err),
                     ORR_ERR_ARG);
    assert_string_equal(err.msg, "output path 'snap_%03d.h5': too long");
}

/* ---- the layout as written ------------------------------------------------------- */

static void attr_llongs(hid_t loc, const char *name, long long *v, int count)
{
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    assert_true(a >= 0);
    hid_t sp = H5Aget_space(a);
    assert_int_equal(H5Sget_simple_extent_npoints(sp), count);
    assert_true(H5Aread(a, H5T_NATIVE_LLONG, v) >= 0);
    H5Sclose(sp);
    H5Aclose(a);
}

static double attr_double(hid_t loc, const char *name)
{
    double v = -1;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Aread(a, H5T_NATIVE_DOUBLE, &v) >= 0);
    H5Aclose(a);
    return v;
}

static void test_layout(void **state_)
{
    (void)state_;
    orr_sim *s = make_sim(11, ORR_DOUBLE, "leapfrog", 1, 5);
    orr_error err = {0};
    TU_OK(orr_sim_step(s, 3, NULL, &err), &err);
    const char *p = tmp_path("layout.hdf5");
    TU_OK(orr_snapshot_write(s, p, NULL, 0, &err), &err);
    hid_t f = H5Fopen(p, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
    assert_true(h >= 0);
    long long np[6], tot[6], high[6], nf;
    attr_llongs(h, "NumPart_ThisFile", np, 6);
    attr_llongs(h, "NumPart_Total", tot, 6);
    attr_llongs(h, "NumPart_Total_HighWord", high, 6);
    attr_llongs(h, "NumFilesPerSnapshot", &nf, 1);
    for (int k = 0; k < 6; k++) {
        assert_int_equal(np[k], k == 1 ? 11 : 0);
        assert_int_equal(tot[k], k == 1 ? 11 : 0);
        assert_int_equal(high[k], 0);
    }
    assert_int_equal(nf, 1);
    assert_true(attr_double(h, "Time") == orr_sim_time(s));
    assert_true(attr_double(h, "Redshift") == 0);
    assert_true(attr_double(h, "BoxSize") == 0);
    assert_true(attr_double(h, "OmegaLambda") == 0);
    assert_true(attr_double(h, "HubbleParam") == 1);
    /* NumPart_ThisFile is int32 as older readers expect, NumPart_Total uint64 */
    hid_t a = H5Aopen(h, "NumPart_ThisFile", H5P_DEFAULT);
    hid_t t = H5Aget_type(a);
    assert_int_equal(H5Tget_size(t), 4);
    H5Tclose(t);
    H5Aclose(a);
    a = H5Aopen(h, "NumPart_Total", H5P_DEFAULT);
    t = H5Aget_type(a);
    assert_int_equal(H5Tget_size(t), 8);
    assert_int_equal(H5Tget_sign(t), H5T_SGN_NONE);
    H5Tclose(t);
    H5Aclose(a);
    H5Gclose(h);
    hid_t u = H5Gopen2(f, "Units", H5P_DEFAULT);
    assert_true(u >= 0);
    assert_true(attr_double(u, "UnitLength_in_cm") == 3.0856775814913673e21);
    assert_true(attr_double(u, "UnitMass_in_g") == 1.988409870698051e43);
    double v = attr_double(u, "UnitVelocity_in_cm_per_s");
    assert_true(fabs(v * v * 3.0856775814913673e21 / 1.988409870698051e43 - 6.6743e-8) < 1e-15);
    H5Gclose(u);
    /* ParticleIDs 1..n, uint64 */
    hid_t d = H5Dopen2(f, "PartType1/ParticleIDs", H5P_DEFAULT);
    assert_true(d >= 0);
    t = H5Dget_type(d);
    assert_int_equal(H5Tget_size(t), 8);
    unsigned long long ids[11];
    assert_true(H5Dread(d, H5T_NATIVE_ULLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, ids) >= 0);
    for (int i = 0; i < 11; i++)
        assert_int_equal(ids[i], i + 1);
    H5Tclose(t);
    H5Dclose(d);
    H5Fclose(f);
    orr_sim_destroy(s);
}

/* ---- round trips ----------------------------------------------------------------- */

static void expect_same_bodies(const orr_snapshot *got, orr_sim *s)
{
    double *pos, *vel;
    state(s, &pos, &vel);
    long n = orr_sim_n(s);
    assert_int_equal(got->n, n);
    assert_memory_equal(got->pos, pos, sizeof(double) * 4 * (size_t)n);
    assert_memory_equal(got->vel, vel, sizeof(double) * 3 * (size_t)n);
}

static void test_roundtrip(void **state_)
{
    (void)state_;
    for (int prec = 0; prec < 2; prec++) {
        orr_sim *s = make_sim(37, prec ? ORR_DOUBLE : ORR_FLOAT, "leapfrog", 1, 11);
        orr_error err = {0};
        TU_OK(orr_sim_step(s, 3, NULL, &err), &err);
        double charge[37], spin[37];
        for (int i = 0; i < 37; i++) {
            charge[i] = i * 0.1 - 1;
            spin[i] = 1.0 / (i + 1);
        }
        orr_snapshot_field extra[2] = {{"charge", charge}, {"spin_z", spin}};
        const char *p = tmp_path("round.h5");
        TU_OK(orr_snapshot_write(s, p, extra, 2, &err), &err);
        orr_snapshot snap;
        TU_OK(orr_snapshot_read(p, &snap, &err), &err);
        expect_same_bodies(&snap, s);
        assert_true(snap.time == orr_sim_time(s));
        assert_int_equal(snap.nextra, 2);
        assert_string_equal(snap.extra[0].name, "charge");
        assert_string_equal(snap.extra[1].name, "spin_z");
        assert_memory_equal(snap.extra[0].values, charge, sizeof charge);
        assert_memory_equal(snap.extra[1].values, spin, sizeof spin);
        orr_snapshot_free(&snap);

        /* the text output reads back exactly too */
        for (int k = 0; k < 2; k++) {
            p = tmp_path(k ? "round.csv" : "round.txt");
            TU_OK(orr_text_write_sim(s, p, &err), &err);
            TU_OK(orr_snapshot_read(p, &snap, &err), &err);
            expect_same_bodies(&snap, s);
            assert_true(snap.time == 0);
            assert_int_equal(snap.nextra, 0);
            orr_snapshot_free(&snap);
        }
        orr_sim_destroy(s);
    }
}

static void test_extra_names(void **state_)
{
    (void)state_;
    orr_sim *s = make_sim(3, ORR_DOUBLE, "leapfrog", 1, 1);
    double v[3] = {1, 2, 3};
    orr_error err = {0};
    assert_int_equal(chdir(dir), 0);
    orr_snapshot_field bad[] = {{"two words", v}};
    assert_int_equal(orr_snapshot_write(s, "names.h5", bad, 1, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "cannot write 'names.h5': extra dataset name 'two words' must "
                                 "be 1 to 63 letters, digits or '_', with values");
    orr_snapshot_field reserved[] = {{"Masses", v}};
    assert_int_equal(orr_snapshot_write(s, "names.h5", reserved, 1, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "cannot write 'names.h5': extra dataset 'Masses' would replace "
                                 "the standard one");
    orr_snapshot_field twice[] = {{"q", v}, {"q", v}};
    assert_int_equal(orr_snapshot_write(s, "names.h5", twice, 2, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "cannot write 'names.h5': extra dataset 'q' given twice");
    assert_int_equal(access("names.h5", F_OK), -1);   /* nothing written */
    orr_sim_destroy(s);
}

/* ---- hand-made GADGET files ------------------------------------------------------- */

typedef struct {
    int header;                 /* write a Header group */
    int numpart;                /* write NumPart_ThisFile */
    long long np[6];
    double masstab[6];
    int nfiles;
    long long rows[6];          /* Coordinates/Velocities rows per type (-1: as np) */
    int cols;                   /* Coordinates columns (3) */
    hid_t coord_type;           /* file type of Coordinates (H5T_IEEE_F64LE) */
    int masses;                 /* write Masses datasets (2: as n x 1) */
    double nan_at;              /* >= 0: Velocities value at this flat index is NaN */
    double negative_mass_at;    /* >= 0: a negative mass */
} gadget_spec;

static void spec_default(gadget_spec *g)
{
    memset(g, 0, sizeof *g);
    g->header = g->numpart = g->masses = 1;
    g->np[1] = 10;
    g->nfiles = 1;
    for (int k = 0; k < 6; k++)
        g->rows[k] = -1;
    g->cols = 3;
    g->coord_type = H5T_IEEE_F64LE;
    g->nan_at = g->negative_mass_at = -1;
}

static void put_attr(hid_t loc, const char *name, hid_t mt, hsize_t count, const void *v)
{
    hid_t sp = count ? H5Screate_simple(1, &count, NULL) : H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, mt, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0);
    assert_true(H5Awrite(a, mt, v) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
}

static void put_data(hid_t g, const char *name, hid_t ftype, hsize_t rows, hsize_t cols,
                     const double *v)
{
    hsize_t dims[2] = {rows, cols};
    hid_t sp = H5Screate_simple(cols ? 2 : 1, dims, NULL);
    hid_t d = H5Dcreate2(g, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(d >= 0);
    assert_true(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Dclose(d);
    H5Sclose(sp);
}

/* Body i of type k: x = 100 k + i + 0.25, y = -x, z = 0.5; v = x / 10; m = k + 1. */
static void make_gadget(const char *path, const gadget_spec *g)
{
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(f >= 0);
    if (g->header) {
        hid_t h = H5Gcreate2(f, "Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (g->numpart)
            put_attr(h, "NumPart_ThisFile", H5T_NATIVE_LLONG, 6, g->np);
        put_attr(h, "MassTable", H5T_NATIVE_DOUBLE, 6, g->masstab);
        put_attr(h, "NumFilesPerSnapshot", H5T_NATIVE_INT, 0, &g->nfiles);
        double t = 2.5;
        put_attr(h, "Time", H5T_NATIVE_DOUBLE, 0, &t);
        H5Gclose(h);
    }
    long flat = 0;
    for (int k = 0; k < 6; k++) {
        long long rows = g->rows[k] >= 0 ? g->rows[k] : g->np[k];
        if (rows == 0)
            continue;
        char name[16];
        snprintf(name, sizeof name, "PartType%d", k);
        hid_t grp = H5Gcreate2(f, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        double *x = calloc((size_t)rows * 3, sizeof(double));
        double *v = calloc((size_t)rows * 3, sizeof(double));
        double *m = calloc((size_t)rows, sizeof(double));
        for (long long i = 0; i < rows; i++) {
            double xi = 100.0 * k + (double)i + 0.25;
            double c[3] = {xi, -xi, 0.5};
            for (int j = 0; j < g->cols && j < 3; j++)
                x[i * g->cols + j] = c[j];
            for (int j = 0; j < 3; j++) {
                v[3 * i + j] = c[j] / 10;
                if (flat == (long)g->nan_at)
                    v[3 * i + j] = NAN;
                flat++;
            }
            m[i] = k + 1;
            if ((long)i == (long)g->negative_mass_at)
                m[i] = -1;
        }
        put_data(grp, "Coordinates", g->coord_type, (hsize_t)rows, (hsize_t)g->cols, x);
        put_data(grp, "Velocities", H5T_IEEE_F64LE, (hsize_t)rows, 3, v);
        if (g->masses)
            put_data(grp, "Masses", H5T_IEEE_F32LE, (hsize_t)rows, g->masses == 2 ? 1 : 0, m);
        free(x);
        free(v);
        free(m);
        H5Gclose(grp);
    }
    H5Fclose(f);
}

static void expect_read_error(const char *path, const char *msg)
{
    orr_snapshot snap;
    orr_error err = {0};
    orr_status st = orr_snapshot_read(path, &snap, &err);
    if (st == ORR_OK)
        fail_msg("reading %s succeeded; expected: %s", path, msg);
    assert_string_equal(err.msg, msg);
    assert_null(snap.pos);
    assert_int_equal(snap.n, 0);
}

static void test_other_gadget_files(void **state_)
{
    (void)state_;
    gadget_spec g;
    orr_snapshot snap;
    orr_error err = {0};
    const char *p = tmp_path("other.hdf5");

    /* two particle types, float coordinates, masses from MassTable for one */
    spec_default(&g);
    g.np[0] = 2;
    g.np[1] = 0;
    g.np[3] = 3;
    g.masses = 0;
    g.masstab[0] = 0.5;
    g.masstab[3] = 0.25;
    g.coord_type = H5T_IEEE_F32LE;
    make_gadget(p, &g);
    TU_OK(orr_snapshot_read(p, &snap, &err), &err);
    assert_int_equal(snap.n, 5);
    assert_true(snap.time == 2.5);
    const double xs[5] = {0.25, 1.25, 300.25, 301.25, 302.25};
    const double ms[5] = {0.5, 0.5, 0.25, 0.25, 0.25};
    for (int i = 0; i < 5; i++) {
        assert_true(snap.pos[4 * i] == xs[i]);
        assert_true(snap.pos[4 * i + 1] == -xs[i]);
        assert_true(snap.pos[4 * i + 2] == 0.5);
        assert_true(snap.pos[4 * i + 3] == ms[i]);
        assert_true(snap.vel[3 * i] == xs[i] / 10);
    }
    assert_int_equal(snap.nextra, 0);   /* several types: no extras */
    orr_snapshot_free(&snap);

    /* per-particle masses in float */
    spec_default(&g);
    make_gadget(p, &g);
    TU_OK(orr_snapshot_read(p, &snap, &err), &err);
    assert_int_equal(snap.n, 10);
    assert_true(snap.pos[4 * 9 + 3] == 2);
    orr_snapshot_free(&snap);
}

static void test_bad_files(void **state_)
{
    (void)state_;
    gadget_spec g;
    char msg[1024];
    const char *p = tmp_path("bad.hdf5");
    const char *rel = "bad.hdf5";   /* messages name the path as given */
    assert_int_equal(chdir(dir), 0);

    expect_read_error("nope.hdf5", "cannot read 'nope.hdf5': No such file or directory");
    expect_read_error("nope.txt", "cannot read 'nope.txt': No such file or directory");

    FILE *f = fopen(p, "w");
    fputs("this is not HDF5\n", f);
    fclose(f);
    expect_read_error(rel, "cannot read 'bad.hdf5': not an HDF5 file (nor .txt or .csv text "
                           "output)");

    spec_default(&g);
    g.header = 0;
    make_gadget(p, &g);
    expect_read_error(rel, "cannot read 'bad.hdf5': no Header group (not a GADGET-layout "
                           "snapshot)");

    spec_default(&g);
    g.numpart = 0;
    make_gadget(p, &g);
    expect_read_error(rel, "cannot read 'bad.hdf5': Header has no NumPart_ThisFile attribute");

    spec_default(&g);
    g.np[0] = 2;
    g.np[1] = 0;
    g.rows[1] = 4;
    make_gadget(p, &g);
    expect_read_error(rel, "cannot read 'bad.hdf5': PartType1/Coordinates has 4 rows but "
                           "NumPart_ThisFile[1] is 0");

    spec_default(&g);
    g.rows[1] = 9;
    make_gadget(p, &g);
    expect_read_error(rel, "cannot read 'bad.hdf5': PartType1/Coordinates has 9 rows but the "
                           "header gives 10 bodies");

    spec_default(&g);
    g.np[2] = 5;
    g.rows[2] = 0;
    make_gadget(p, &g);
    expect_read_error(rel, "cannot read 'bad.hdf5': NumPart_ThisFile[2] is 5 but there is no "
                           "PartType2 group");

    /* a header that claims 2^39 bodies of a type (a damaged count, found by make fuzz):
       named before memory for them is asked for, not "out of memory" */
    spec_default(&g);
    g.np[1] = 1LL << 39;
    g.rows[1] = 10;
    make_gadget(p, &g);
    expect_read_error(rel, "cannot read 'bad.hdf5': PartType1/Coordinates has 10 rows but the "
                           "header gives 549755813888 bodies");
    spec_default(&g);
    g.np[2] = 1LL << 39;
    g.rows[2] = 0;
    make_gadget(p, &g);
    expect_read_error(rel, "cannot read 'bad.hdf5': NumPart_ThisFile[2] is 549755813888 but "
                           "there is no PartType2 group");

    spec_default(&g);
    g.cols = 2;
    make_gadget(p, &g);
    expect_read_error(rel, "cannot read 'bad.hdf5': PartType1/Coordinates has shape (10, 2) "
                           "(expected (10, 3))");

    spec_default(&g);
    g.masses = 2;
    make_gadget(p, &g);
    expect_read_error(rel, "cannot read 'bad.hdf5': PartType1/Masses has shape (10, 1) "
                           "(expected (10))");

    spec_default(&g);
    g.coord_type = H5T_STD_I32LE;
    make_gadget(p, &g);
    expect_read_error(rel, "cannot read 'bad.hdf5': PartType1/Coordinates is integer (expected "
                           "floating point)");

    spec_default(&g);
    g.nan_at = 13;   /* row 4, column 1 */
    make_gadget(p, &g);
    expect_read_error(rel, "cannot read 'bad.hdf5': PartType1/Velocities row 4 is not finite "
                           "(nan)");

    spec_default(&g);
    g.negative_mass_at = 6;
    make_gadget(p, &g);
    expect_read_error(rel, "cannot read 'bad.hdf5': PartType1/Masses row 6 is negative (-1)");

    spec_default(&g);
    g.masses = 0;
    make_gadget(p, &g);
    expect_read_error(rel, "cannot read 'bad.hdf5': PartType1 has no Masses dataset and "
                           "Header/MassTable[1] is 0");

    spec_default(&g);
    g.nfiles = 4;
    make_gadget(p, &g);
    expect_read_error(rel, "cannot read 'bad.hdf5': the snapshot is split over 4 files; only "
                           "single-file snapshots can be read");

    spec_default(&g);
    g.np[1] = 0;
    make_gadget(p, &g);
    expect_read_error(rel, "cannot read 'bad.hdf5': the file holds no particles "
                           "(NumPart_ThisFile is all 0)");

    /* a truncated snapshot of ours: HDF5 notices, and says so */
    orr_sim *s = make_sim(500, ORR_DOUBLE, "leapfrog", 1, 3);
    orr_error err = {0};
    TU_OK(orr_snapshot_write(s, rel, NULL, 0, &err), &err);
    struct stat sb;
    assert_int_equal(stat(rel, &sb), 0);
    assert_int_equal(truncate(rel, sb.st_size / 2), 0);
    orr_snapshot snap;
    assert_int_not_equal(orr_snapshot_read(rel, &snap, &err), ORR_OK);
    print_message("truncated: %s\n", err.msg);
    snprintf(msg, sizeof msg, "cannot read 'bad.hdf5': damaged or truncated HDF5 file (");
    assert_memory_equal(err.msg, msg, strlen(msg));
    assert_non_null(strstr(err.msg, "truncated"));
    orr_error_clear(&err);
    orr_sim_destroy(s);

    /* text files */
    static const struct {
        const char *name, *text, *msg;
    } texts[] = {
        {"t.txt", "", "cannot read 't.txt': empty file (expected a header line and one line per "
                      "body)"},
        {"t.txt", "id x y z vx vy vz m\n", "cannot read 't.txt': no bodies (only a header line)"},
        {"t.txt", "x y z\n1 2 3\n", "cannot read 't.txt': line 1: expected the header line 'id "
                                    "x y z vx vy vz m'"},
        {"t.csv", "id x y z vx vy vz m\n", "cannot read 't.csv': line 1: expected the header "
                                           "line 'id,x,y,z,vx,vy,vz,m'"},
        {"t.txt", "id x y z vx vy vz m\n1 0 0 0 0 0 0 1\n2 0 0 0 0 0 1\n",
         "cannot read 't.txt': line 3: 7 columns (expected 8: id x y z vx vy vz m)"},
        {"t.txt", "id x y z vx vy vz m\n1 0 0 0 0 0 0 1 9\n",
         "cannot read 't.txt': line 2: more than 8 columns (expected id x y z vx vy vz m)"},
        {"t.csv", "id,x,y,z,vx,vy,vz,m\n1,0,0,zero,0,0,0,1\n",
         "cannot read 't.csv': line 2: z is 'zero', not a number"},
        {"t.csv", "id,x,y,z,vx,vy,vz,m\n1, 0, 0, 0, nan, 0, 0, 1\n",
         "cannot read 't.csv': line 2: vx is not finite (nan)"},
        {"t.txt", "id x y z vx vy vz m\r\n1 0 0 0 0 0 0 -2\r\n",
         "cannot read 't.txt': line 2: m is negative (-2)"},
    };
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        f = fopen(texts[k].name, "w");
        fputs(texts[k].text, f);
        fclose(f);
        expect_read_error(texts[k].name, texts[k].msg);
    }
    /* blank lines and CRLF are fine */
    f = fopen("ok.csv", "w");
    fputs("id,x,y,z,vx,vy,vz,m\r\n\r\n1, 1.5, -2, 3, 0.25, 0, 0, 2\r\n\r\n", f);
    fclose(f);
    TU_OK(orr_snapshot_read("ok.csv", &snap, &err), &err);
    assert_int_equal(snap.n, 1);
    assert_true(snap.pos[0] == 1.5 && snap.pos[1] == -2 && snap.pos[2] == 3 && snap.pos[3] == 2);
    assert_true(snap.vel[0] == 0.25);
    orr_snapshot_free(&snap);
}

/* ---- atomic writes ------------------------------------------------------------------ */

static char *slurp_bytes(const char *path, size_t *len)
{
    char *text = NULL;
    orr_error err = {0};
    TU_OK(orr_read_file(path, &text, len, &err), &err);
    return text;
}

static void test_atomic(void **state_)
{
    (void)state_;
    orr_sim *s = make_sim(40, ORR_DOUBLE, "leapfrog", 1, 9);
    orr_error err = {0};
    for (int ck = 0; ck < 2; ck++) {
        const char *p = tmp_path(ck ? "atomic.ckpt.hdf5" : "atomic.hdf5");
        TU_OK(ck ? orr_checkpoint_write(s, p, NULL, &err) : orr_snapshot_write(s, p, NULL, 0, &err),
              &err);
        size_t len0, len1;
        char *before = slurp_bytes(p, &len0);
        TU_OK(orr_sim_step(s, 2, NULL, &err), &err);   /* a different state */
        setenv("ORRERY_TEST_WRITE_FAIL", "1", 1);
        orr_status st = ck ? orr_checkpoint_write(s, p, NULL, &err)
                           : orr_snapshot_write(s, p, NULL, 0, &err);
        unsetenv("ORRERY_TEST_WRITE_FAIL");
        assert_int_equal(st, ORR_ERR_IO);
        char want[600];
        snprintf(want, sizeof want,
                 "cannot write '%s': simulated failure (ORRERY_TEST_WRITE_FAIL is set)", p);
        assert_string_equal(err.msg, want);
        orr_error_clear(&err);
        char *after = slurp_bytes(p, &len1);
        assert_int_equal(len0, len1);
        assert_memory_equal(before, after, len0);   /* the old file, untouched */
        free(before);
        free(after);
        assert_int_equal(count_temp_files(), 0);
        orr_snapshot snap;
        TU_OK(orr_snapshot_read(p, &snap, &err), &err);   /* and still readable */
        assert_int_equal(snap.n, 40);
        orr_snapshot_free(&snap);
    }
    /* rename onto a directory fails: the temporary file goes */
    const char *d = tmp_path("adir.h5");
    assert_int_equal(mkdir(d, 0777), 0);
    assert_int_equal(orr_snapshot_write(s, d, NULL, 0, &err), ORR_ERR_IO);
    char want[1400];
    snprintf(want, sizeof want, "cannot write '%s': %s", d, strerror(EISDIR));
    assert_string_equal(err.msg, want);
    assert_int_equal(count_temp_files(), 0);
    /* a parent that is a file */
    const char *p = tmp_path("afile");
    FILE *f = fopen(p, "w");
    fclose(f);
    char sub[600];
    snprintf(sub, sizeof sub, "%s/x.h5", p);
    assert_int_equal(orr_snapshot_write(s, sub, NULL, 0, &err), ORR_ERR_IO);
    snprintf(want, sizeof want, "cannot write '%s': '%s' is not a directory", sub, p);
    assert_string_equal(err.msg, want);
    /* missing parents are created */
    snprintf(sub, sizeof sub, "%s/new/deeper/x.h5", dir);
    TU_OK(orr_snapshot_write(s, sub, NULL, 0, &err), &err);
    assert_int_equal(access(sub, R_OK), 0);
    orr_sim_destroy(s);
}

/* outfile from several threads at once (the tuner fills the kernel cache
 * so): every write succeeds with its own temporary file, the target ends
 * whole, nothing is left behind; and the modes. */
#define OF_THREADS 8
#define OF_WRITES 25
#define OF_BYTES 8192

static char of_target[512];   /* set before the threads start (tmp_path is not thread-safe) */

static void *outfile_worker(void *arg)
{
    long id = (long)(intptr_t)arg;
    static char data[OF_THREADS][OF_BYTES];
    memset(data[id], 'a' + (int)id, OF_BYTES);
    long failed = 0;
    for (int k = 0; k < OF_WRITES; k++) {
        orr_error err = {0};
        failed += orr_outfile_write(of_target, data[id], OF_BYTES, id % 2 ? 0600 : 0, &err) !=
                  ORR_OK;
    }
    return (void *)(intptr_t)failed;
}

static void test_outfile_threads(void **state_)
{
    (void)state_;
    snprintf(of_target, sizeof of_target, "%s", tmp_path("shared/target.bin"));
    pthread_t t[OF_THREADS];
    for (long i = 0; i < OF_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, outfile_worker, (void *)(intptr_t)i), 0);
    long failed = 0;
    for (int i = 0; i < OF_THREADS; i++) {
        void *r;
        pthread_join(t[i], &r);
        failed += (long)(intptr_t)r;
    }
    assert_int_equal(failed, 0);
    size_t len;
    char *got = slurp_bytes(of_target, &len);
    assert_int_equal(len, OF_BYTES);
    for (size_t k = 0; k < len; k++)
        assert_int_equal(got[k], got[0]);   /* one writer's bytes, whole */
    free(got);
    DIR *d = opendir(tmp_path("shared"));
    assert_non_null(d);
    int entries = 0;
    for (struct dirent *e; (e = readdir(d));)
        entries += e->d_name[0] != '.';
    closedir(d);
    assert_int_equal(entries, 1);   /* no temporary file left */

    /* mode 0: 0666 less the umask; any other mode exactly */
    mode_t old = umask(027);
    orr_error err = {0};
    struct stat sb;
    TU_OK(orr_outfile_write(tmp_path("shared/public"), "x", 1, 0, &err), &err);
    assert_int_equal(stat(tmp_path("shared/public"), &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0640);
    TU_OK(orr_outfile_write(tmp_path("shared/private"), "x", 1, 0600, &err), &err);
    assert_int_equal(stat(tmp_path("shared/private"), &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    umask(0277);
    TU_OK(orr_outfile_write(tmp_path("shared/private"), "y", 1, 0600, &err), &err);
    assert_int_equal(stat(tmp_path("shared/private"), &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    umask(old);
}

/* The names in directory d that start with prefix, into names (at most 8),
 * sorted; returns how many. */
static int names_with(const char *d, const char *prefix, char names[8][256])
{
    DIR *dd = opendir(d);
    assert_non_null(dd);
    int n = 0;
    for (struct dirent *e; (e = readdir(dd));)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && n < 8)
            snprintf(names[n++], 256, "%s", e->d_name);
    closedir(dd);
    qsort(names, (size_t)n, 256, (int (*)(const void *, const void *))strcmp);
    return n;
}

/* A child process that begins writing path and then dies without a word
 * (as kill -9 or MPI_Abort would end it), or, with pipes (ready, hold),
 * tells ready it has begun and lives until hold's writing end closes (in
 * the parent, or with it). */
static pid_t writer(const char *path, const int ready[2], const int hold[2])
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        orr_outfile f;
        orr_error err = {0};
        if (orr_outfile_begin(&f, path, 0, &err) || orr_outfile_put(&f, "half", 4, &err))
            _exit(3);
        if (ready) {
            char c = 'x';
            close(ready[0]);
            close(hold[1]);
            if (write(ready[1], &c, 1) != 1)
                _exit(4);
            while (read(hold[0], &c, 1) > 0)
                ;
        }
        _exit(0);   /* no commit, no abort: the temporary file stays */
    }
    return pid;
}

/* A temporary file left by a writer that died goes with the next write of
 * the same file; a live writer's, another file's, another host's and the
 * former format's (which names no process) stay. */
static void test_stale_temporaries(void **state_)
{
    (void)state_;
    const char *p = tmp_path("stale/target.bin"), *q = tmp_path("stale/target.bin2");
    const char *sd = tmp_path("stale");
    char names[8][256], prefix[64] = "target.bin.tmp.";
    int status = 0;
    assert_int_equal(mkdir(sd, 0777), 0);
    /* a live writer of p */
    int ready[2], hold[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(hold), 0);
    pid_t live = writer(p, ready, hold);
    char c;
    close(hold[0]);
    assert_int_equal(read(ready[0], &c, 1), 1);
    assert_int_equal(names_with(sd, prefix, names), 1);
    char live_name[256];
    snprintf(live_name, sizeof live_name, "%s", names[0]);
    /* a writer of p that died (beginning, it left the live one's file),
     * and one of q */
    pid_t dead = writer(p, NULL, NULL), other = writer(q, NULL, NULL);
    assert_int_equal(waitpid(dead, &status, 0), dead);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_int_equal(waitpid(other, &status, 0), other);
    assert_int_equal(names_with(sd, prefix, names), 2);
    char left[256];
    snprintf(left, sizeof left, "%s", strcmp(names[0], live_name) == 0 ? names[1] : names[0]);
    /* the dead writer's name from another host (or container), and in the
     * format before this one */
    char elsewhere[512], former[512];
    const char *tag = left + strlen(prefix);   /* HOST.PID.XXXXXX */
    snprintf(elsewhere, sizeof elsewhere, "%s/%s%c%s", sd, prefix, tag[0] == '0' ? '1' : '0',
             tag + 1);
    snprintf(former, sizeof former, "%s/%sAb12Cd", sd, prefix);
    orr_error err = {0};
    TU_OK(orr_outfile_write(elsewhere, "x", 1, 0, &err), &err);
    TU_OK(orr_outfile_write(former, "x", 1, 0, &err), &err);

    TU_OK(orr_outfile_write(p, "whole", 5, 0, &err), &err);
    int n = names_with(sd, prefix, names);
    int found_left = 0, found_live = 0;
    for (int k = 0; k < n; k++) {
        found_left |= strcmp(names[k], left) == 0;
        found_live |= strcmp(names[k], live_name) == 0;
    }
    assert_int_equal(found_left, 0);   /* the dead writer's: gone */
    assert_int_equal(found_live, 1);   /* the live writer's: kept */
    assert_int_equal(n, 3);            /* and the other host's and the former format's */
    assert_int_equal(names_with(sd, "target.bin2.tmp.", names), 1);   /* another file's */

    /* once the live writer dies too, the next write takes its file away */
    close(hold[1]);
    kill(live, SIGKILL);
    assert_int_equal(waitpid(live, &status, 0), live);
    TU_OK(orr_outfile_write(p, "again", 5, 0, &err), &err);
    n = names_with(sd, prefix, names);
    assert_int_equal(n, 2);
    for (int k = 0; k < n; k++)
        assert_string_not_equal(names[k], live_name);
    close(ready[0]);
    close(ready[1]);
}

/* ---- checkpoints ------------------------------------------------------------------ */

/* Runs `total` steps uninterrupted and, from a checkpoint after `at` steps,
 * the rest in a restored simulation; the states must agree bit for bit. */
static void restart_case(orr_sim *a, long at, long total)
{
    orr_error err = {0};
    const char *p = tmp_path("restart.ckpt.hdf5");
    TU_OK(orr_sim_step(a, at, NULL, &err), &err);
    orr_output_state out = {.snapshot = 3, .frame = 7};
    out.view.have_view = 1;
    out.view.extent[1] = 2.5;
    TU_OK(orr_checkpoint_write(a, p, &out, &err), &err);
    TU_OK(orr_sim_step(a, total - at, NULL, &err), &err);

    orr_checkpoint ck;
    TU_OK(orr_checkpoint_read(p, &ck, &err), &err);
    assert_int_equal(ck.output.snapshot, 3);
    assert_int_equal(ck.output.frame, 7);
    assert_int_equal(ck.output.view.have_view, 1);
    assert_true(ck.output.view.extent[1] == 2.5);
    const orr_sim_config *ca = orr_sim_config_of(a);
    assert_string_equal(ck.config.integrator, ca->integrator);
    assert_string_equal(ck.config.force, ca->force);
    assert_int_equal(ck.config.precision, ca->precision);
    assert_true(ck.config.dt == ca->dt && ck.config.damping == ca->damping);
    assert_true(ck.config.softening == ca->softening && ck.config.G == ca->G);
    assert_memory_equal(ck.config.box, ca->box, sizeof ca->box);
    assert_int_equal(ck.config.dims, ca->dims);
    assert_string_equal(ck.backend, "cpu");
    assert_int_equal(ck.steps, at);
    orr_sim *b = NULL;
    TU_OK(orr_checkpoint_restore(&ck, &b, NULL, 0, &err), &err);
    orr_checkpoint_free(&ck);
    assert_int_equal(orr_sim_steps(b), at);
    TU_OK(orr_sim_step(b, total - at, NULL, &err), &err);

    double *pa, *va, *pb, *vb;
    state(a, &pa, &va);
    state(b, &pb, &vb);
    long n = orr_sim_n(a);
    for (long i = 0; i < 4 * n; i++)
        if (memcmp(&pa[i], &pb[i], sizeof(double)) != 0)
            fail_msg("%s: pos[%ld] differs: %.17g vs %.17g", ca->integrator, i, pa[i], pb[i]);
    for (long i = 0; i < 3 * n; i++)
        if (memcmp(&va[i], &vb[i], sizeof(double)) != 0)
            fail_msg("%s: vel[%ld] differs: %.17g vs %.17g", ca->integrator, i, va[i], vb[i]);
    assert_true(orr_sim_time(a) == orr_sim_time(b));
    assert_int_equal(orr_sim_steps(a), orr_sim_steps(b));
    orr_sim_destroy(b);
}

static void test_restart_exact(void **state_)
{
    (void)state_;
    static const char *const integs[] = {"leapfrog", "yoshida4", "euler"};
    for (int prec = 0; prec < 2; prec++)
        for (int k = 0; k < 3; k++) {
            orr_sim *a = make_sim(200, prec ? ORR_DOUBLE : ORR_FLOAT, integs[k],
                                  k == 2 ? 0.98 : 1, 21 + (uint64_t)k);
            restart_case(a, 7, 19);
            orr_sim_destroy(a);
        }
}

static void test_restart_box_2d(void **state_)
{
    (void)state_;
    orr_sim_config c;
    orr_sim_config_default(&c);
    c.n = 64;
    c.dims = 2;
    c.box[0] = 1.5;
    c.box[1] = 2;
    c.dt = 0.05;
    c.softening = 0.05;
    c.G = 0.5;
    c.precision = ORR_DOUBLE;
    orr_sim *a = sim_of(&c, 4);
    restart_case(a, 10, 30);
    /* BoxSize is the x length */
    hid_t f = H5Fopen(tmp_path("restart.ckpt.hdf5"), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
    assert_true(attr_double(h, "BoxSize") == 1.5);
    H5Gclose(h);
    H5Fclose(f);
    orr_sim_destroy(a);
}

static void test_restart_kspec(void **state_)
{
    (void)state_;
    orr_sim *a = make_sim(300, ORR_FLOAT, "leapfrog", 1, 8);
    orr_error err = {0};
    orr_kspec k = *orr_sim_kspec(a, NULL);
    k.launch.block = 128;
    k.launch.threads = 1;
    TU_OK(orr_sim_set_kspec(a, &k, "test", &err), &err);
    const char *source;
    assert_int_equal(orr_sim_kspec(a, &source)->launch.block, 128);
    assert_string_equal(source, "test");
    restart_case(a, 5, 12);
    orr_checkpoint ck;
    TU_OK(orr_checkpoint_read(tmp_path("restart.ckpt.hdf5"), &ck, &err), &err);
    assert_int_equal(ck.kspec.launch.block, 128);
    assert_int_equal(ck.kspec.launch.threads, 1);
    assert_string_equal(ck.kspec_source, "test");
    orr_sim *b = NULL;
    TU_OK(orr_checkpoint_restore(&ck, &b, NULL, 0, &err), &err);
    const orr_kspec *kb = orr_sim_kspec(b, &source);
    assert_int_equal(kb->launch.block, 128);
    assert_int_equal(kb->launch.threads, 1);
    assert_string_equal(source, "checkpoint");
    orr_sim_destroy(b);
    orr_checkpoint_free(&ck);
    orr_sim_destroy(a);
}

static void test_checkpoint_errors(void **state_)
{
    (void)state_;
    orr_sim *s = make_sim(5, ORR_DOUBLE, "leapfrog", 1, 2);
    orr_error err = {0};
    assert_int_equal(chdir(dir), 0);
    TU_OK(orr_snapshot_write(s, "plain.hdf5", NULL, 0, &err), &err);
    orr_checkpoint ck;
    assert_int_not_equal(orr_checkpoint_read("plain.hdf5", &ck, &err), ORR_OK);
    assert_string_equal(err.msg, "cannot read 'plain.hdf5': no Run group (a snapshot, not a "
                                 "checkpoint: orrery.read loads its bodies)");
    assert_int_not_equal(orr_checkpoint_read("x.txt", &ck, &err), ORR_OK);
    assert_string_equal(err.msg, "cannot read 'x.txt': a text file is not a checkpoint "
                                 "(checkpoints are HDF5)");
    assert_int_not_equal(orr_checkpoint_read("none.hdf5", &ck, &err), ORR_OK);
    assert_string_equal(err.msg, "cannot read 'none.hdf5': No such file or directory");

    /* a checkpoint with an attribute gone */
    TU_OK(orr_checkpoint_write(s, "ck.hdf5", NULL, &err), &err);
    hid_t f = H5Fopen("ck.hdf5", H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(H5Adelete_by_name(f, "Run", "dt", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    assert_int_not_equal(orr_checkpoint_read("ck.hdf5", &ck, &err), ORR_OK);
    assert_string_equal(err.msg, "cannot read 'ck.hdf5': Run has no 'dt' attribute");

    /* regularize's encounter: kept; a checkpoint written before the
     * setting restores with the 0.25 its run had */
    TU_OK(orr_checkpoint_write(s, "ck.hdf5", NULL, &err), &err);
    TU_OK(orr_checkpoint_read("ck.hdf5", &ck, &err), &err);
    assert_true(ck.config.reg_encounter == ORR_REG_ENCOUNTER);
    orr_checkpoint_free(&ck);
    f = H5Fopen("ck.hdf5", H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(H5Adelete_by_name(f, "Run", "reg_encounter", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    TU_OK(orr_checkpoint_read("ck.hdf5", &ck, &err), &err);
    assert_true(ck.config.reg_encounter == 0.25);
    orr_checkpoint_free(&ck);

    /* the Hermite force + jerk launches a GPU run keeps (htune.h): read
     * back, and checked (5 bodies: one bucket) */
    TU_OK(orr_checkpoint_write(s, "ck.hdf5", NULL, &err), &err);
    f = H5Fopen("ck.hdf5", H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t kg = H5Gopen2(f, "Kernel", H5P_DEFAULT);
    const int good[2] = {128, 32};
    put_attr(kg, "hermite_launch", H5T_NATIVE_INT, 2, good);
    H5Gclose(kg);
    H5Fclose(f);
    TU_OK(orr_checkpoint_read("ck.hdf5", &ck, &err), &err);
    assert_int_equal(ck.nhlaunch, 1);
    assert_int_equal(ck.hlaunch[0].tile, 128);
    assert_int_equal(ck.hlaunch[0].per_sm, 32);
    orr_checkpoint_free(&ck);
    f = H5Fopen("ck.hdf5", H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(H5Adelete_by_name(f, "Kernel", "hermite_launch", H5P_DEFAULT) >= 0);
    kg = H5Gopen2(f, "Kernel", H5P_DEFAULT);
    const int bad[2] = {96, 32};
    put_attr(kg, "hermite_launch", H5T_NATIVE_INT, 2, bad);
    H5Gclose(kg);
    H5Fclose(f);
    assert_int_not_equal(orr_checkpoint_read("ck.hdf5", &ck, &err), ORR_OK);
    assert_string_equal(err.msg, "cannot read 'ck.hdf5': Kernel/hermite_launch: bucket 0 has "
                                 "tile 96 and 32 blocks per SM (tiles are 64, 128 or 256; 1 to "
                                 "64 blocks per SM)");

    /* a clock compensation larger than a rounding of the time (it would
     * move the clock) is refused */
    TU_OK(orr_checkpoint_write(s, "ck.hdf5", NULL, &err), &err);
    f = H5Fopen("ck.hdf5", H5F_ACC_RDWR, H5P_DEFAULT);
    assert_true(H5Adelete_by_name(f, "Run", "time_compensation", H5P_DEFAULT) >= 0);
    hid_t rg = H5Gopen2(f, "Run", H5P_DEFAULT);
    const double huge_c = 1e10;
    put_attr(rg, "time_compensation", H5T_NATIVE_DOUBLE, 0, &huge_c);
    H5Gclose(rg);
    H5Fclose(f);
    assert_int_not_equal(orr_checkpoint_read("ck.hdf5", &ck, &err), ORR_OK);
    if (!strstr(err.msg, "Run has a bad clock (time 0, compensation 1e+10, steps 0)"))
        fail_msg("got: %s", err.msg);
    orr_error_clear(&err);

    /* Integrator/current is 0 or 1 exactly (a Hermite checkpoint) */
    orr_sim_config hc;
    orr_sim_config_default(&hc);
    hc.n = 5, hc.backend = ORR_BACKEND_CPU, hc.integrator = "hermite", hc.precision = ORR_DOUBLE;
    orr_sim *h = NULL;
    TU_OK(orr_sim_create(&h, &hc, NULL, 0, &err), &err);
    double *hp = NULL;
    TU_OK(orr_sim_pos(h, &hp, &err), &err);
    for (int i = 0; i < 5; i++)
        hp[4 * i] = i, hp[4 * i + 1] = i * i % 3, hp[4 * i + 3] = 0.2;
    orr_sim_touch(h);
    TU_OK(orr_sim_step(h, 1, NULL, &err), &err);
    static const double currents[] = {0.99, 1.7, -1};
    for (int k = 0; k < 3; k++) {
        TU_OK(orr_checkpoint_write(h, "ck.hdf5", NULL, &err), &err);
        f = H5Fopen("ck.hdf5", H5F_ACC_RDWR, H5P_DEFAULT);
        assert_true(H5Adelete_by_name(f, "Integrator", "current", H5P_DEFAULT) >= 0);
        hid_t ig = H5Gopen2(f, "Integrator", H5P_DEFAULT);
        put_attr(ig, "current", H5T_NATIVE_DOUBLE, 0, &currents[k]);
        H5Gclose(ig);
        H5Fclose(f);
        assert_int_not_equal(orr_checkpoint_read("ck.hdf5", &ck, &err), ORR_OK);
        char want[96];
        snprintf(want, sizeof want, "cannot read 'ck.hdf5': Integrator/current must be 0 or 1 "
                 "(got %g)", currents[k]);
        assert_string_equal(err.msg, want);
        orr_error_clear(&err);
    }
    orr_sim_destroy(h);

    /* the checkpoint is a snapshot too */
    TU_OK(orr_checkpoint_write(s, "ck.hdf5", NULL, &err), &err);
    orr_snapshot snap;
    TU_OK(orr_snapshot_read("ck.hdf5", &snap, &err), &err);
    expect_same_bodies(&snap, s);
    orr_snapshot_free(&snap);
    orr_sim_destroy(s);
}

/* ---- physical units ---------------------------------------------------------------- */

static void expect_units_error(const orr_units *u, double G, const char *msg)
{
    orr_sim_config c;
    orr_sim_config_default(&c);
    c.n = 2;
    c.backend = ORR_BACKEND_CPU;
    c.tune = ORR_SIM_TUNE_OFF;
    c.units = *u;
    c.G = G;
    orr_error err = {0};
    orr_sim *s = NULL;
    assert_int_equal(orr_sim_create(&s, &c, NULL, 0, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, msg);
    assert_null(s);
}

static void test_units(void **state_)
{
    (void)state_;
    const double pc = 3.0856775814913673e18, msun = 1.988409870698051e33;
    assert_true(orr_units_length_cm("pc") == pc);
    assert_true(orr_units_mass_g("Msun") == msun);
    assert_true(orr_units_length_cm("parsec") == 0);
    expect_units_error(&(orr_units){-1, msun, "", "Msun"}, 1,
                       "units: length_cm must be a positive finite number (got -1)");
    expect_units_error(&(orr_units){pc, 0, "pc", ""}, 1,
                       "units: mass_g must be a positive finite number (got 0)");
    expect_units_error(&(orr_units){pc, msun, "parsec", ""}, 1,
                       "units: unknown length unit 'parsec'");
    expect_units_error(&(orr_units){pc, 1e33, "", "Msun"}, 1,
                       "units: mass 'Msun' is 1.988409870698051e+33 g, not 1e+33");
    expect_units_error(&(orr_units){pc, msun, "pc", "Msun"}, -1,
                       "units need a positive G to fix the time unit (got G = -1)");
    expect_units_error(&(orr_units){0, 0, "pc", ""}, 1, "units: names without sizes");

    /* the snapshot states them: Header, Units and every standard dataset */
    orr_sim_config c;
    orr_sim_config_default(&c);
    c.n = 4;
    c.precision = ORR_DOUBLE;
    c.G = 2;
    c.units = (orr_units){pc, msun, "pc", "Msun"};
    orr_error err = {0};
    orr_sim *s = sim_of(&c, 3);
    TU_OK(orr_sim_step(s, 5, NULL, &err), &err);
    const char *p = tmp_path("units.hdf5");
    TU_OK(orr_snapshot_write(s, p, NULL, 0, &err), &err);
    const double v = sqrt(6.67430e-8 * msun / (2 * pc)), t = pc / v;
    hid_t f = H5Fopen(p, H5F_ACC_RDONLY, H5P_DEFAULT);
    assert_true(f >= 0);
    hid_t h = H5Gopen2(f, "Header", H5P_DEFAULT);
    long long comoving;
    attr_llongs(h, "ComovingIntegrationOn", &comoving, 1);
    assert_int_equal(comoving, 0);
    assert_true(attr_double(h, "Time") == orr_sim_time(s));
    assert_true(fabs(attr_double(h, "Time_GYR") - orr_sim_time(s) * t / 3.15576e16) <=
                1e-15 * attr_double(h, "Time_GYR"));
    assert_true(attr_double(h, "UnitLength_in_cm") == pc);
    H5Gclose(h);
    hid_t u = H5Gopen2(f, "Units", H5P_DEFAULT);
    assert_true(attr_double(u, "UnitLength_in_cm") == pc);
    assert_true(attr_double(u, "UnitMass_in_g") == msun);
    assert_true(fabs(attr_double(u, "UnitVelocity_in_cm_per_s") - v) <= 1e-15 * v);
    assert_true(fabs(attr_double(u, "UnitTime_in_s") - t) <= 1e-15 * t);
    assert_true(attr_double(u, "G") == 2);
    char sys[16] = "";
    hid_t a = H5Aopen(u, "UnitSystem", H5P_DEFAULT), ty = H5Aget_type(a);
    assert_true(H5Tget_size(ty) < sizeof sys && H5Aread(a, ty, sys) >= 0);
    assert_string_equal(sys, "physical");
    H5Tclose(ty);
    H5Aclose(a);
    H5Gclose(u);
    static const char *const sets[] = {"Coordinates", "Velocities", "Masses", "ParticleIDs"};
    const double cgs[] = {pc, v, msun, 1};
    for (int k = 0; k < 4; k++) {
        char name[64];
        snprintf(name, sizeof name, "PartType1/%s", sets[k]);
        hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
        assert_true(d >= 0);
        assert_true(fabs(attr_double(d, "to_cgs") - cgs[k]) <= 1e-15 * cgs[k]);
        assert_true(attr_double(d, "CGSConversionFactor") == attr_double(d, "to_cgs"));
        assert_true(attr_double(d, "a_scaling") == 0 && attr_double(d, "h_scaling") == 0);
        assert_true(attr_double(d, "aexp-scale-exponent") == 0);
        assert_true(attr_double(d, "h-scale-exponent") == 0);
        assert_true(attr_double(d, "length_scaling") == (k == 0));
        assert_true(attr_double(d, "velocity_scaling") == (k == 1));
        assert_true(attr_double(d, "mass_scaling") == (k == 2));
        H5Dclose(d);
    }
    H5Fclose(f);

    /* a checkpoint keeps them; a damaged one is named */
    assert_int_equal(chdir(dir), 0);
    TU_OK(orr_checkpoint_write(s, "cku.hdf5", NULL, &err), &err);
    orr_checkpoint ck;
    TU_OK(orr_checkpoint_read("cku.hdf5", &ck, &err), &err);
    assert_true(ck.config.units.length_cm == pc && ck.config.units.mass_g == msun);
    assert_string_equal(ck.config.units.length, "pc");
    assert_string_equal(ck.config.units.mass, "Msun");
    orr_checkpoint_free(&ck);
    f = H5Fopen("cku.hdf5", H5F_ACC_RDWR, H5P_DEFAULT);
    h = H5Gopen2(f, "Run", H5P_DEFAULT);
    assert_true(H5Adelete(h, "units_mass_g") >= 0);
    double bad = -3;
    hid_t sp = H5Screate(H5S_SCALAR);
    a = H5Acreate2(h, "units_mass_g", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT);
    assert_true(a >= 0 && H5Awrite(a, H5T_NATIVE_DOUBLE, &bad) >= 0);
    H5Aclose(a);
    H5Sclose(sp);
    H5Gclose(h);
    H5Fclose(f);
    assert_int_not_equal(orr_checkpoint_read("cku.hdf5", &ck, &err), ORR_OK);
    assert_string_equal(err.msg, "cannot read 'cku.hdf5': Run: units: mass_g must be a positive "
                                 "finite number (got -3)");
    orr_sim_destroy(s);
}

int main(void)
{
    tu_private_cache();
    tu_temp_dir(dir, sizeof dir, "orrery-snapshot");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_expand),
        cmocka_unit_test(test_layout),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_extra_names),
        cmocka_unit_test(test_other_gadget_files),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_atomic),
        cmocka_unit_test(test_outfile_threads),
        cmocka_unit_test(test_stale_temporaries),
        cmocka_unit_test(test_restart_exact),
        cmocka_unit_test(test_restart_box_2d),
        cmocka_unit_test(test_restart_kspec),
        cmocka_unit_test(test_checkpoint_errors),
        cmocka_unit_test(test_units),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
