/* test_tune: the autotuner on the CPU backend: the store round trip (tune,
 * look up, a second start from the store without any timing), a corrupt or
 * misshapen store, identity mismatches (softening, precision, N bucket,
 * force-law source, device) as misses, a planted wrong answer rejected, the
 * all-wrong case falling back to the default, the exhaustive search, the
 * report callback seeing every trial, clearing the store, the winner
 * checked against a plain double loop written here, and the store shared:
 * processes and threads saving at once, the lock's bounded wait (and the
 * hook told of it as it goes on), a store that cannot be read, a FIFO in
 * its place, a cache directory that cannot be made or written (said in the
 * kernel cache's words, on a line of the note's own). */
#include "testutil.h"

#include <cjson/cJSON.h>
#include <fcntl.h>
#include <grp.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trial.h"
#include "engine.h"
#include "kcache.h"
#include "ksrc.h"
#include "tune.h"

#define N 2048
#define MAX_SEEN 512

typedef struct {
    orr_tune_trial seen[MAX_SEEN];  /* search reports, in order */
    int nseen;
    int nretimed;                   /* reports of the final re-timing */
    int plant_block, plant_threads; /* tamper this candidate (block 0: none) */
    int plant_all;                  /* tamper every candidate */
    int tampered;                   /* how often tamper changed something */
} recorder;

static void on_report(const orr_tune_trial *t, void *ctx)
{
    recorder *r = ctx;
    if (t->retimed) {
        r->nretimed++;
        return;
    }
    if (r->nseen < MAX_SEEN)
        r->seen[r->nseen++] = *t;
}

static void on_tamper(const orr_kspec *c, double *acc, long ni, void *ctx)
{
    recorder *r = ctx;
    if (!r->plant_all && !(c->launch.block == r->plant_block && c->launch.threads == r->plant_threads))
        return;
    for (long k = 0; k < 3 * ni; k++)
        acc[k] *= 1.01;
    r->tampered++;
}

typedef struct {
    int count;
    orr_tune_entry last;
} lister;

static void on_entry(const orr_tune_entry *e, void *ctx)
{
    lister *l = ctx;
    l->count++;
    l->last = *e;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void base_spec(orr_kspec *s)
{
    orr_kspec_default(s, ORR_TARGET_CPU);
}

static void options(orr_tune_options *o, recorder *r, double budget)
{
    orr_tune_options_default(o);
    o->budget_s = budget;
    o->report = on_report;
    o->tamper = on_tamper;
    o->ctx = r;
}

/* An unloaded machine for a start that finds its tuning stored: the CPU
 * re-check times the stored choice and the default alike, so a busy
 * machine (another suite running beside this one) cannot make it tune
 * again; the re-check's verdicts have tests of their own with fixed times
 * (test_stale_store). */
static double steady_recheck(const orr_kspec *c, int phase, double ms, void *ctx)
{
    (void)c;
    (void)ctx;
    return phase == ORR_TUNE_PHASE_RECHECK ? 1.0 : ms;
}

static void clear_store(void)
{
    orr_error err = {0};
    TU_OK(orr_tune_store_clear(NULL, NULL, NULL, &err), &err);
}

static void store_path(char *buf, size_t size)
{
    orr_error err = {0};
    TU_OK(orr_tune_store_path(buf, size, &err), &err);
}

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, 0600);
}

/* The store parsed (caller deletes). */
static cJSON *read_store(void)
{
    char path[4200];
    store_path(path, sizeof path);
    char *text = tu_slurp(path);
    cJSON *root = cJSON_Parse(text);
    free(text);
    assert_non_null(root);
    return root;
}

static int same_tuned(const orr_kspec *a, const orr_kspec *b)
{
    return a->launch.block == b->launch.block && a->launch.unroll == b->launch.unroll && a->launch.split == b->launch.split &&
           a->launch.threads == b->launch.threads;
}

static void print_result(const char *what, const orr_tune_result *r)
{
    print_message("%s: source %s, block %d threads %d, %.4f ms (%.3g interactions/s), "
                  "%d trials (%d failed), %.3f s%s%s\n", what, r->source, r->best.launch.block,
                  r->best.launch.threads, r->best_ms, r->best_interactions_per_s, r->ntrials,
                  r->nfailed, r->elapsed_s, r->note[0] ? "; note: " : "", r->note);
}

/* 1 when one line of note (entries one per line, util.h) is exactly line. */
static int has_line(const char *note, const char *line)
{
    size_t n = strlen(line);
    for (const char *p = note; (p = strstr(p, line)) != NULL; p++)
        if ((p == note || p[-1] == '\n') && (p[n] == '\0' || p[n] == '\n'))
            return 1;
    return 0;
}

static void print_trials(const recorder *rec)
{
    for (int k = 0; k < rec->nseen; k++) {
        const orr_tune_trial *t = &rec->seen[k];
        print_message("  block %5d threads %d: %s %.4f ms %.3g/s err %.2e%s%s\n", t->spec.launch.block,
                      t->spec.launch.threads, t->ok ? "ok      " : "REJECTED", t->ms,
                      t->interactions_per_s, t->max_rel_err, t->why[0] ? " why: " : "", t->why);
    }
}

/* Float-representable random bodies in a cube, masses 1/n-ish. */
/* Runs spec on the CPU backend and compares every acceleration with a plain
 * double loop; returns the max relative error. */
static double check_spec(const orr_kspec *spec, long n)
{
    orr_error err = {0};
    double *pos = malloc(sizeof(double) * 4 * n), *acc = malloc(sizeof(double) * 3 * n);
    tu_random_bodies(n, 4242, pos, NULL);
    orr_engine *e = NULL;
    TU_OK(orr_engine_create(&e, ORR_BACKEND_CPU, spec, ORR_VARIANT_TILED, n, 0, NULL, 0, &err),
          &err);
    TU_OK(orr_engine_set_state(e, pos, NULL, &err), &err);
    TU_OK(orr_engine_accel(e, acc, &err), &err);
    double *ref = malloc(sizeof(double) * 3 * n);
    tu_plain_accel(n, pos, spec->phys.softening, spec->phys.G, ref);
    double worst = orr_max_rel_err(acc, ref, n);
    free(ref);
    orr_engine_destroy(e);
    free(pos);
    free(acc);
    return worst;
}

static void test_round_trip(void **state)
{
    clear_store();
    orr_error err = {0};
    orr_kspec base;
    base_spec(&base);
    static recorder rec;
    memset(&rec, 0, sizeof rec);
    orr_tune_options o;
    options(&o, &rec, 1.5);
    orr_tune_result r;
    TU_OK(orr_tune(ORR_BACKEND_CPU, &base, N, &o, &r, &err), &err);
    print_trials(&rec);
    print_result("first tune", &r);
    assert_string_equal(r.source, "tuned");
    assert_string_equal(r.backend, "cpu");
    assert_int_equal(r.n_bucket, N);
    assert_true(r.ntrials >= 2);
    assert_true(r.best_ms > 0);
    assert_non_null(strstr(r.device, "cpu|"));
    assert_int_equal((int)strlen(r.kernel), 32);

    /* the report callback saw every trial, each once, consistent with the counts */
    assert_int_equal(rec.nseen, r.ntrials);
    assert_true(rec.nretimed != 1 && rec.nretimed <= 3);   /* 0: a clear winner */
    int failed = 0, has_default = 0, has_best = 0;
    for (int k = 0; k < rec.nseen; k++) {
        const orr_tune_trial *t = &rec.seen[k];
        failed += !t->ok;
        has_default |= t->spec.launch.block == 1024 && t->spec.launch.threads == 0;
        has_best |= same_tuned(&t->spec, &r.best) && t->ok;
        if (t->ok) {
            assert_true(t->ms > 0 && t->interactions_per_s > 0);
            assert_true(t->max_rel_err >= 0 && t->max_rel_err <= 1e-5);
        }
        for (int j = 0; j < k; j++)
            assert_false(same_tuned(&t->spec, &rec.seen[j].spec));
    }
    assert_int_equal(failed, r.nfailed);
    assert_true(has_default);   /* the default is always a candidate */
    assert_true(has_best);

    /* the store: valid JSON, mode 0600, one entry holding every trial */
    char path[4200];
    store_path(path, sizeof path);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    cJSON *root = read_store();
    cJSON *entries = cJSON_GetObjectItem(root, "entries");
    assert_int_equal(cJSON_GetArraySize(entries), 1);
    cJSON *e0 = cJSON_GetArrayItem(entries, 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(e0, "trials")), r.ntrials);
    assert_string_equal(cJSON_GetObjectItem(e0, "device")->valuestring, r.device);
    assert_string_equal(cJSON_GetObjectItem(e0, "kernel")->valuestring, r.kernel);
    cJSON *best = cJSON_GetObjectItem(e0, "best");
    assert_int_equal((int)cJSON_GetObjectItem(best, "block")->valuedouble, r.best.launch.block);
    assert_int_equal((int)cJSON_GetObjectItem(best, "ipt")->valuedouble, r.best.launch.ipt);
    assert_int_equal(r.best.launch.ipt, 1);   /* bodies per thread: a GPU parameter */
    cJSON_Delete(root);

    /* lookup finds the same winner, also for another n in the same bucket */
    orr_tune_result l;
    int found = 0;
    TU_OK(orr_tune_lookup(ORR_BACKEND_CPU, &base, N, &l, &found, &err), &err);
    assert_int_equal(found, 1);
    assert_string_equal(l.source, "store");
    assert_true(same_tuned(&l.best, &r.best));
    assert_true(fabs(l.best_ms - r.best_ms) <= 1e-12 * r.best_ms);   /* through JSON text */
    TU_OK(orr_tune_lookup(ORR_BACKEND_CPU, &base, N / 2 + 1, &l, &found, &err), &err);
    assert_int_equal(found, 1);
    /* auto resolves to the CPU where there is no GPU */
    if (orr_cuda_usable(0, &err) != ORR_OK) {
        orr_error_clear(&err);
        TU_OK(orr_tune_lookup(ORR_BACKEND_AUTO, &base, N, &l, &found, &err), &err);
        assert_int_equal(found, 1);
    }
    orr_error_clear(&err);

    /* a second start: from the store, nothing searched, fast (a CPU choice
     * other than the default is timed against it once: a few ms more) */
    memset(&rec, 0, sizeof rec);
    o.time_hook = steady_recheck;
    orr_tune_result s;
    double t0 = now_s();
    TU_OK(orr_tune(ORR_BACKEND_CPU, &base, N, &o, &s, &err), &err);
    double dt = now_s() - t0;
    print_result("second start", &s);
    print_message("second start took %.2f ms\n", dt * 1e3);
    assert_string_equal(s.source, "store");
    assert_int_equal(s.ntrials, 0);
    assert_int_equal(rec.nseen + rec.nretimed, 0);
    assert_true(same_tuned(&s.best, &r.best));
    const int is_default = s.best.launch.block == 1024 && s.best.launch.threads == 0;
    assert_true(dt < (is_default ? 0.050 : 0.250));

    /* listing */
    lister ls;
    memset(&ls, 0, sizeof ls);
    TU_OK(orr_tune_store_list(on_entry, &ls, &err), &err);
    assert_int_equal(ls.count, 1);
    assert_string_equal(ls.last.device, r.device);
    assert_string_equal(ls.last.kernel, r.kernel);
    assert_string_equal(ls.last.backend, "cpu");
    assert_string_equal(ls.last.precision, "float");
    assert_string_equal(ls.last.force, "gravity");
    assert_int_equal(ls.last.n_bucket, N);
    assert_int_equal(ls.last.block, r.best.launch.block);
    assert_int_equal(ls.last.threads, r.best.launch.threads);
    assert_int_equal(ls.last.ntrials, r.ntrials);
    assert_int_equal(ls.last.nfailed, r.nfailed);
    assert_true(ls.last.when[0] != '\0');

    /* the winner computes the right forces (its own check, a plain double loop) */
    double rel = check_spec(&r.best, 1500);
    print_message("winner vs plain double loop: max rel err %.3e\n", rel);
    assert_true(rel <= 1e-5);
}

/* A quick budgeted tuning that must succeed. */
static void quick_tune(const orr_kspec *base, long n, double budget, orr_tune_result *r)
{
    orr_error err = {0};
    static recorder rec;
    memset(&rec, 0, sizeof rec);
    orr_tune_options o;
    options(&o, &rec, budget);
    o.retune = 1;
    TU_OK(orr_tune(ORR_BACKEND_CPU, base, n, &o, r, &err), &err);
    assert_string_equal(r->source, "tuned");
}

static int lookup_found(const orr_kspec *base, long n, orr_tune_result *r)
{
    orr_error err = {0};
    int found = -1;
    TU_OK(orr_tune_lookup(ORR_BACKEND_CPU, base, n, r, &found, &err), &err);
    assert_true(found == 0 || found == 1);
    return found;
}

/* A store of one entry that is whole but for its n_bucket, given as text. */
#define NBUCKET(text)                                                                          \
    "{\"format\": \"orrery-tuning\", \"version\": 1, \"entries\": [{\"device\": \"x\", "           \
    "\"kernel\": \"0123456789abcdef0123456789abcdef\", \"n_bucket\": " text ", \"best\": "         \
    "{\"block\": 64, \"unroll\": 4, \"split\": 1, \"threads\": 1}, \"trials\": []}]}"

#define LACKS "entry 0 lacks device, kernel, n_bucket, best or trials"

static void test_corrupt_store(void **state)
{
    clear_store();
    orr_error err = {0};
    orr_kspec base;
    base_spec(&base);
    char path[4200];
    store_path(path, sizeof path);
    static const char *bad[] = {
        "this is {not json",
        "[1, 2, 3]",
        "{\"format\": \"orrery-tuning\", \"version\": 1, \"entries\": [{\"device\": \"x\"}]}",
        "{\"format\": \"orrery-tuning\", \"version\": 99, \"entries\": []}",
        /* n_bucket a whole number from 0 to LONG_MAX (the first was found by make fuzz:
           converting it to long was undefined behaviour) */
        NBUCKET("1024777777777777777777777777777777777777777777777777777777777777777777777777"
                "7777777777777777777777777777777777777777"),
        NBUCKET("-1024"), NBUCKET("1024.5"), NBUCKET("9223372036854775808"),
    };
    static const char *why[] = {"not valid JSON", "not a JSON object", "entry 0 lacks",
                                "\"version\" is not 1", LACKS, LACKS, LACKS, LACKS};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        spit(path, bad[k]);
        /* lookup: a miss that says why, and leaves the file alone */
        orr_tune_result r;
        assert_int_equal(lookup_found(&base, N, &r), 0);
        print_message("lookup note: %s\n", r.note);
        assert_non_null(strstr(r.note, "is corrupt"));
        assert_non_null(strstr(r.note, path));
        assert_non_null(strstr(r.note, why[k]));
        assert_null(strstr(r.note, "rewriting"));
        char *text = tu_slurp(path);
        assert_string_equal(text, bad[k]);
        free(text);
        /* list refuses with the same reason */
        lister ls = {0};
        assert_int_equal(orr_tune_store_list(on_entry, &ls, &err), ORR_ERR_CACHE);
        assert_non_null(strstr(err.msg, why[k]));
        assert_int_equal(ls.count, 0);
        orr_error_clear(&err);
    }
    /* tuning proceeds, says so, and rewrites the store as valid JSON */
    static recorder rec;
    memset(&rec, 0, sizeof rec);
    orr_tune_options o;
    options(&o, &rec, 0.3);
    orr_tune_result r;
    spit(path, bad[0]);
    TU_OK(orr_tune(ORR_BACKEND_CPU, &base, N, &o, &r, &err), &err);
    print_result("tune over a corrupt store", &r);
    assert_string_equal(r.source, "tuned");
    assert_non_null(strstr(r.note, "is corrupt (not valid JSON"));
    assert_non_null(strstr(r.note, "; rewriting"));
    cJSON *root = read_store();
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "entries")), 1);
    cJSON_Delete(root);
    orr_tune_result l;
    assert_int_equal(lookup_found(&base, N, &l), 1);
    assert_string_equal(l.note, "");
    assert_true(same_tuned(&l.best, &r.best));
}

/* Writes the embedded kernel sources into dir; with modify = 1,
 * forces/gravity.h gets an extra comment (same physics, different source);
 * with modify = 2, it fails to compile for the CPU tile 4096 alone. */
static void write_kernels(const char *dir, int modify)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/forces", dir);
    mkdir(path, 0700);
    snprintf(path, sizeof path, "%s/fields", dir);
    mkdir(path, 0700);
    for (const orr_ksrc_file *f = orr_ksrc_embedded; f->name; f++) {
        snprintf(path, sizeof path, "%s/%s", dir, f->name);
        FILE *out = fopen(path, "wb");
        assert_non_null(out);
        fwrite(f->text, 1, f->len, out);
        if (modify == 1 && strcmp(f->name, "forces/gravity.h") == 0)
            fputs("/* a comment that changes nothing but the source */\n", out);
        if (modify == 2 && strcmp(f->name, "forces/gravity.h") == 0)
            fputs("#if !ORR_GPU && ORR_BLOCK == 4096\n#error planted compile error\n#endif\n", out);
        fclose(out);
    }
}

static void remove_kernels(const char *dir)
{
    char path[4200];
    for (const orr_ksrc_file *f = orr_ksrc_embedded; f->name; f++) {
        snprintf(path, sizeof path, "%s/%s", dir, f->name);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/forces", dir);
    rmdir(path);
    rmdir(dir);
}

static void test_identity_mismatch(void **state)
{
    clear_store();
    orr_kspec base, other;
    base_spec(&base);
    orr_tune_result r, l;
    quick_tune(&base, N, 0.3, &r);
    assert_int_equal(lookup_found(&base, N, &l), 1);

    other = base;
    other.phys.softening = 0.02;
    assert_int_equal(lookup_found(&other, N, &l), 0);
    assert_string_equal(l.source, "default");
    other = base;
    other.phys.G = 2.0;
    assert_int_equal(lookup_found(&other, N, &l), 0);
    other = base;
    other.phys.box[0] = 10;
    assert_int_equal(lookup_found(&other, N, &l), 0);
    other = base;
    other.phys.precision = ORR_DOUBLE;
    assert_int_equal(lookup_found(&other, N, &l), 0);
    assert_int_equal(lookup_found(&base, 2 * N, &l), 0);    /* bucket 4096 */
    assert_int_equal(lookup_found(&base, N + 1, &l), 0);    /* bucket 4096 */
    assert_int_equal(lookup_found(&base, N / 2, &l), 0);    /* bucket 1024 */
    assert_int_equal(lookup_found(&base, N / 2 + 1, &l), 1); /* bucket 2048 */
    /* the tuned parameters of the base spec are not part of the identity */
    other = base;
    other.launch.block = 256;
    other.launch.threads = 1;
    assert_int_equal(lookup_found(&other, N, &l), 1);

    /* a different force-law source (ORRERY_KERNELS_DIR) is a miss; an
     * unmodified copy is a hit, so it is the source that counts */
    char dir[] = "/tmp/orrery-tune-kernels-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_kernels(dir, 0);
    setenv("ORRERY_KERNELS_DIR", dir, 1);
    assert_int_equal(lookup_found(&base, N, &l), 1);
    write_kernels(dir, 1);
    assert_int_equal(lookup_found(&base, N, &l), 0);
    unsetenv("ORRERY_KERNELS_DIR");
    remove_kernels(dir);

    /* a different device is a miss */
    char path[4200];
    store_path(path, sizeof path);
    cJSON *root = read_store();
    cJSON *e0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "entries"), 0);
    cJSON_ReplaceItemInObject(e0, "device",
                              cJSON_CreateString("cpu|Another CPU (features 0)|cc 1|threads 64"));
    char *text = cJSON_Print(root);
    spit(path, text);
    free(text);
    cJSON_Delete(root);
    assert_int_equal(lookup_found(&base, N, &l), 0);
    assert_string_equal(l.note, "");   /* a miss, not corruption */

    /* double precision tunes on its own and is found; both entries are kept */
    other = base;
    other.phys.precision = ORR_DOUBLE;
    quick_tune(&other, 1024, 0.3, &r);
    print_result("double, n 1024", &r);
    assert_int_equal(lookup_found(&other, 1024, &l), 1);
    assert_int_equal(l.best.phys.precision, ORR_DOUBLE);
    root = read_store();
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(root, "entries")), 2);
    cJSON_Delete(root);
}

static void test_planted_wrong_answer(void **state)
{
    clear_store();
    orr_error err = {0};
    orr_kspec base;
    base_spec(&base);
    static recorder rec;
    memset(&rec, 0, sizeof rec);
    rec.plant_block = base.launch.block;   /* the default: always a candidate */
    rec.plant_threads = base.launch.threads;
    orr_tune_options o;
    options(&o, &rec, 0.8);
    orr_tune_result r;
    TU_OK(orr_tune(ORR_BACKEND_CPU, &base, N, &o, &r, &err), &err);
    print_trials(&rec);
    print_result("planted wrong answer", &r);
    assert_int_equal(rec.tampered, 1);
    assert_string_equal(r.source, "tuned");
    assert_true(r.nfailed >= 1);
    assert_false(r.best.launch.block == base.launch.block && r.best.launch.threads == base.launch.threads);
    int planted = 0;
    for (int k = 0; k < rec.nseen; k++) {
        const orr_tune_trial *t = &rec.seen[k];
        if (t->spec.launch.block == base.launch.block && t->spec.launch.threads == base.launch.threads) {
            planted++;
            assert_int_equal(t->ok, 0);
            assert_non_null(strstr(t->why, "max rel err"));
            assert_non_null(strstr(t->why, "> 1e-05"));
            assert_true(t->max_rel_err > 0.009 && t->max_rel_err < 0.011);
            assert_true(t->ms < 0);   /* rejected before timing */
        } else {
            assert_int_equal(t->ok, 1);
        }
    }
    assert_int_equal(planted, 1);
    /* the stored trial says so too */
    cJSON *root = read_store();
    cJSON *trials = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "entries"), 0),
                                        "trials");
    cJSON *t0 = cJSON_GetArrayItem(trials, 0);   /* the default comes first */
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(t0, "ok")));
    assert_non_null(strstr(cJSON_GetObjectItem(t0, "why")->valuestring, "max rel err"));
    cJSON_Delete(root);
}

static void test_compile_error_recorded(void **state)
{
    clear_store();
    orr_error err = {0};
    orr_kspec base;
    base_spec(&base);
    char dir[] = "/tmp/orrery-tune-kernels-XXXXXX";
    assert_non_null(mkdtemp(dir));
    write_kernels(dir, 2);
    setenv("ORRERY_KERNELS_DIR", dir, 1);
    static recorder rec;
    memset(&rec, 0, sizeof rec);
    orr_tune_options o;
    options(&o, &rec, 10.0);   /* enough to reach tile 4096 with every kernel compiled anew */
    orr_tune_result r;
    orr_status st = orr_tune(ORR_BACKEND_CPU, &base, N, &o, &r, &err);
    unsetenv("ORRERY_KERNELS_DIR");
    remove_kernels(dir);
    TU_OK(st, &err);
    print_trials(&rec);
    print_result("tile 4096 does not compile", &r);
    assert_string_equal(r.source, "tuned");
    assert_int_not_equal(r.best.launch.block, 4096);
    /* every tile-4096 candidate (one per thread count the search reached)
       failed to compile, and nothing else failed */
    int seen = 0;
    for (int k = 0; k < rec.nseen; k++)
        if (rec.seen[k].spec.launch.block == 4096) {
            seen++;
            assert_int_equal(rec.seen[k].ok, 0);
            assert_non_null(strstr(rec.seen[k].why, "planted compile error"));
            assert_true(rec.seen[k].ms < 0 && rec.seen[k].max_rel_err < 0);
        } else {
            assert_int_equal(rec.seen[k].ok, 1);
        }
    assert_true(seen >= 1);
    assert_int_equal(r.nfailed, seen);
}

static void test_nothing_verifies(void **state)
{
    clear_store();
    orr_error err = {0};
    orr_kspec base;
    base_spec(&base);
    static recorder rec;
    memset(&rec, 0, sizeof rec);
    rec.plant_all = 1;
    orr_tune_options o;
    options(&o, &rec, 0.3);
    orr_tune_result r;
    TU_OK(orr_tune(ORR_BACKEND_CPU, &base, N, &o, &r, &err), &err);
    print_result("every answer wrong", &r);
    assert_string_equal(r.source, "default");
    assert_true(r.ntrials >= 1);
    assert_int_equal(r.nfailed, r.ntrials);
    assert_int_equal(rec.nretimed, 0);
    assert_true(same_tuned(&r.best, &base));
    assert_non_null(strstr(r.note, "no candidate verified"));
    orr_tune_result l;
    assert_int_equal(lookup_found(&base, N, &l), 0);   /* nothing was saved */
}

static void test_exhaustive(void **state)
{
    clear_store();
    orr_error err = {0};
    orr_kspec base;
    base_spec(&base);
    orr_tune_result r;
    quick_tune(&base, N, 0.2, &r);   /* a budgeted entry does not answer an exhaustive request */

    static recorder rec;
    memset(&rec, 0, sizeof rec);
    orr_tune_options o;
    options(&o, &rec, 0.01);   /* ignored */
    o.exhaustive = 1;
    TU_OK(orr_tune(ORR_BACKEND_CPU, &base, N, &o, &r, &err), &err);
    print_trials(&rec);
    print_result("exhaustive", &r);
    assert_string_equal(r.source, "tuned");

    int threads[32], nthreads = 0;
    long nproc = sysconf(_SC_NPROCESSORS_ONLN);
    for (int t = 1; t < nproc; t *= 2)
        threads[nthreads++] = t;
    threads[nthreads++] = (int)nproc;
    threads[nthreads++] = 0;
    static const int blocks[] = {256, 512, 1024, 2048, 4096, 8192};
    assert_int_equal(r.ntrials, 6 * nthreads);
    assert_int_equal(rec.nseen, r.ntrials);
    assert_int_equal(r.nfailed, 0);
    double fastest = INFINITY;
    for (int b = 0; b < 6; b++)
        for (int t = 0; t < nthreads; t++) {
            int times = 0;
            for (int k = 0; k < rec.nseen; k++)
                if (rec.seen[k].spec.launch.block == blocks[b] && rec.seen[k].spec.launch.threads == threads[t]) {
                    times++;
                    assert_int_equal(rec.seen[k].spec.launch.unroll, 4);
                    assert_int_equal(rec.seen[k].spec.launch.split, 1);
                    fastest = rec.seen[k].ms < fastest ? rec.seen[k].ms : fastest;
                }
            assert_int_equal(times, 1);
        }
    /* the winner is re-timed, so it need not be the fastest single search
     * measurement, but it must be near it */
    print_message("exhaustive: fastest search median %.4f ms, winner re-timed %.4f ms\n",
                  fastest, r.best_ms);
    assert_true(r.best_ms > 0);

    /* stored as exhaustive: a budgeted request is answered from the store */
    cJSON *root = read_store();
    cJSON *e0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "entries"), 0);
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(e0, "exhaustive")));
    cJSON_Delete(root);
    orr_tune_result s;
    memset(&rec, 0, sizeof rec);
    o.exhaustive = 0;
    TU_OK(orr_tune(ORR_BACKEND_CPU, &base, N, &o, &s, &err), &err);
    assert_string_equal(s.source, "store");
    assert_true(same_tuned(&s.best, &r.best));
}

static void test_store_clear(void **state)
{
    clear_store();
    orr_error err = {0};
    orr_kspec base;
    base_spec(&base);
    orr_tune_result r;
    quick_tune(&base, N, 0.2, &r);
    char path[4200], stale[4300];
    store_path(path, sizeof path);
    snprintf(stale, sizeof stale, "%s.tmp.AbC123", path);
    spit(stale, "half a save");
    assert_int_equal(access(path, F_OK), 0);

    size_t removed = 99;
    TU_OK(orr_tune_store_clear(&removed, NULL, NULL, &err), &err);
    assert_int_equal(removed, 1);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(access(stale, F_OK), -1);
    orr_tune_result l;
    assert_int_equal(lookup_found(&base, N, &l), 0);
    assert_string_equal(l.note, "");   /* missing is empty, not corrupt */
    lister ls = {0};
    TU_OK(orr_tune_store_list(on_entry, &ls, &err), &err);
    assert_int_equal(ls.count, 0);
    TU_OK(orr_tune_store_clear(&removed, NULL, NULL, &err), &err);
    assert_int_equal(removed, 0);
}

/* One rank's slice shape (options.targets: its bodies against all N) is a
 * tuning of its own: its own identity and store entry, timed on the targets,
 * shared by every target count of its bucket. */
static void test_slice_shape(void **state)
{
    clear_store();
    orr_error err = {0};
    orr_kspec base;
    base_spec(&base);
    static recorder rec;
    memset(&rec, 0, sizeof rec);
    orr_tune_options o;
    options(&o, &rec, 0.4);
    orr_tune_result all, r, again, other;
    TU_OK(orr_tune_identify(ORR_BACKEND_CPU, &base, N, &o, &all, &err), &err);
    assert_int_equal(all.targets_bucket, 0);
    o.targets = 700;   /* bucket 1024 */
    TU_OK(orr_tune(ORR_BACKEND_CPU, &base, N, &o, &r, &err), &err);
    print_result("slice of 700", &r);
    assert_string_equal(r.source, "tuned");
    assert_int_equal(r.targets_bucket, 1024);
    assert_int_equal(r.n_bucket, N);
    assert_string_not_equal(r.kernel, all.kernel);
    assert_string_equal(r.device, all.device);
    assert_true(r.best_ms > 0);
    assert_true(fabs(r.best_interactions_per_s - 700.0 * N / (r.best_ms * 1e-3)) <=
                1e-9 * r.best_interactions_per_s);
    cJSON *root = read_store();
    cJSON *e0 = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "entries"), 0);
    assert_int_equal((int)cJSON_GetObjectItem(e0, "targets_bucket")->valuedouble, 1024);
    cJSON_Delete(root);
    /* the whole set is another identity: not answered by the slice's entry */
    orr_tune_result l;
    int found = 1;
    TU_OK(orr_tune_lookup(ORR_BACKEND_CPU, &base, N, &l, &found, &err), &err);
    assert_int_equal(found, 0);
    /* another count of the same bucket is: from the store */
    o.targets = 1000;
    o.time_hook = steady_recheck;
    TU_OK(orr_tune(ORR_BACKEND_CPU, &base, N, &o, &again, &err), &err);
    assert_string_equal(again.source, "store");
    assert_true(same_tuned(&again.best, &r.best));
    o.targets = 1025;
    TU_OK(orr_tune_identify(ORR_BACKEND_CPU, &base, N, &o, &other, &err), &err);
    assert_int_equal(other.targets_bucket, 2048);
    assert_string_not_equal(other.kernel, r.kernel);
    /* a count past the bodies */
    o.targets = N + 1;
    assert_int_equal(orr_tune(ORR_BACKEND_CPU, &base, N, &o, &l, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "invalid target count 2049: must be from 1 to the 2048 bodies "
                                 "(0 for all)");
    orr_error_clear(&err);
}

/* A machine busy at one moment and not at another (issue: a CPU tuning
 * stored under load picked threads 1): the timing hook gives the one-thread
 * candidates `fast` ms in the phases in fast_phases (a bit mask) and `slow`
 * ms in the others, every other candidate about 1 ms. */
typedef struct {
    unsigned fast_phases;
    double fast, slow;
    int alternate;   /* phase DEFAULT: every other run of every candidate doubled */
    int calls;
} load;

static double on_time(const orr_kspec *c, int phase, double ms, void *ctx)
{
    load *l = ctx;   /* fixed times, so the test does not depend on this machine's load */
    if (l->alternate == 1 && phase == ORR_TUNE_PHASE_DEFAULT)
        return l->calls++ % 4 < 2 ? 1.0 : 2.0;   /* A B, then A B doubled, ... */
    if (l->alternate == 2 && phase == ORR_TUNE_PHASE_RECHECK && c->launch.threads == 1)
        return l->calls++ % 3 == 2 ? 0.5 : 5.0;  /* the stored one on a busy machine */
    if (c->launch.threads != 1)
        return 1.0 + 0.001 * c->launch.block / 1024;   /* the default 1024 the best of them */
    return (l->fast_phases >> phase) & 1 ? l->fast : l->slow;
}

/* A tuning of the CPU base spec at N bodies, the times from l (store cleared
 * first when fresh). */
static void tune_loaded(load *l, int fresh, orr_tune_result *r)
{
    if (fresh)
        clear_store();
    orr_error err = {0};
    orr_kspec base;
    base_spec(&base);
    orr_tune_options o;
    orr_tune_options_default(&o);
    o.budget_s = 0.4;
    o.time_hook = on_time;
    o.ctx = l;
    TU_OK(orr_tune(ORR_BACKEND_CPU, &base, N, &o, r, &err), &err);
}

static void test_winner_under_load(void **state)
{
    /* fast while searching, three times slower when timed against the default */
    load l = {1u << ORR_TUNE_PHASE_SEARCH | 1u << ORR_TUNE_PHASE_RETIME, 0.5, 3.0, 0, 0};
    orr_tune_result r;
    tune_loaded(&l, 1, &r);
    print_result("under load", &r);
    assert_string_equal(r.source, "tuned");
    assert_int_equal(r.best.launch.threads, 0);   /* the default */
    assert_int_equal(r.best.launch.block, 1024);
    assert_non_null(strstr(r.note, "the winner (block "));
    assert_non_null(strstr(r.note, ", threads 1, ranges 0) took "));
    assert_non_null(strstr(r.note, " ms when timed alternately with it: the default is kept"));
    orr_tune_result l2;
    int found = 0;
    orr_error err = {0};
    orr_kspec base;
    base_spec(&base);
    TU_OK(orr_tune_lookup(ORR_BACKEND_CPU, &base, N, &l2, &found, &err), &err);
    assert_int_equal(found, 1);
    assert_int_equal(l2.best.launch.threads, 0);   /* what is stored is the default */
}

/* A pass that takes microseconds is launch overhead: the default is kept
 * after one trial (a first start of a small simulation compiled hundreds of
 * candidates, 40 s on the H100, before this). */
static double tiny_time(const orr_kspec *c, int phase, double ms, void *ctx)
{
    (void)c, (void)phase, (void)ms, (void)ctx;
    return 0.004;
}

static void test_launch_bound(void **state)
{
    (void)state;
    clear_store();
    orr_error err = {0};
    orr_kspec base;
    base_spec(&base);
    orr_tune_options o;
    orr_tune_options_default(&o);
    o.time_hook = tiny_time;
    orr_tune_result r;
    TU_OK(orr_tune(ORR_BACKEND_CPU, &base, 64, &o, &r, &err), &err);
    print_result("launch-bound", &r);
    assert_int_equal(r.ntrials, 1);
    assert_int_equal(r.best.launch.block, base.launch.block);
    assert_non_null(strstr(r.note, "a force pass of the default takes 0.004 ms at 64 bodies, "
                                   "launch overhead: nothing to tune, the default kept"));
}

/* Building counts against the search's wall clock (WALL_FACTOR budgets):
 * candidates that take long to build stop it however little device time
 * they used.  The report callback stands in for a slow build. */
static void slow_report(const orr_tune_trial *t, void *ctx)
{
    (void)t, (void)ctx;
    const struct timespec nap = {0, 150000000};
    nanosleep(&nap, NULL);
}

static void test_wall_limit(void **state)
{
    (void)state;
    clear_store();
    orr_error err = {0};
    orr_kspec base;
    base_spec(&base);
    orr_tune_options o;
    orr_tune_options_default(&o);
    o.budget_s = 0.2;
    o.report = slow_report;
    orr_tune_result r;
    const double t0 = now_s();
    TU_OK(orr_tune(ORR_BACKEND_CPU, &base, N, &o, &r, &err), &err);
    const double took = now_s() - t0;
    print_result("wall limit", &r);
    assert_true(r.ntrials >= 1 && r.ntrials <= 6);
    assert_non_null(strstr(r.note, "the search stopped at its wall-clock limit (0.6 s, candidates built "
                                   "one by one included) after "));
    assert_true(took < 5.0);
}

static void test_noisy_timings(void **state)
{
    load l = {1u << ORR_TUNE_PHASE_SEARCH | 1u << ORR_TUNE_PHASE_RETIME, 0.5, 1.0, 1, 0};
    orr_tune_result r;
    tune_loaded(&l, 1, &r);
    print_result("noisy", &r);
    assert_int_equal(r.best.launch.threads, 0);
    /* every other pair of runs doubled: spreads of 50% or more, over NOISY */
    assert_non_null(strstr(r.note, "timings too noisy to trust (runs spread "));
    assert_non_null(strstr(r.note, "% for the winner, block "));
    assert_non_null(strstr(r.note, "% for the default): the default is kept"));
}

static void test_stale_store(void **state)
{
    /* stored while one thread really looked fastest */
    load l = {1u << ORR_TUNE_PHASE_SEARCH | 1u << ORR_TUNE_PHASE_RETIME |
                  1u << ORR_TUNE_PHASE_DEFAULT | 1u << ORR_TUNE_PHASE_RECHECK,
              0.5, 1.0, 0, 0};
    orr_tune_result r;
    tune_loaded(&l, 1, &r);
    assert_int_equal(r.best.launch.threads, 1);
    tune_loaded(&l, 0, &r);   /* still fast: kept */
    assert_string_equal(r.source, "store");
    assert_int_equal(r.best.launch.threads, 1);
    /* re-timed on a machine too busy to tell (a warm-up, then runs of 5,
     * 0.5 and 5 ms: slower by the median, spread 90%): kept, and said */
    l.alternate = 2;
    l.calls = 0;
    tune_loaded(&l, 0, &r);
    print_result("busy recheck", &r);
    assert_string_equal(r.source, "store");
    assert_int_equal(r.best.launch.threads, 1);
    assert_non_null(strstr(r.note, "re-timed against the default on a machine too busy to tell "
                                   "(runs spread "));
    l.alternate = 0;
    /* a later start on which one thread is five times slower: noticed, redone */
    l.fast_phases = 0;
    l.slow = 5.0;
    tune_loaded(&l, 0, &r);
    print_result("stale", &r);
    assert_string_equal(r.source, "tuned");
    assert_int_not_equal(r.best.launch.threads, 1);
    assert_non_null(strstr(r.note, "the stored tuning (block "));
    assert_non_null(strstr(r.note, ", threads 1, ranges 0) took "));
    assert_non_null(strstr(r.note, " ms now: tuning again"));
}

static void test_bad_arguments(void **state)
{
    orr_error err = {0};
    orr_kspec base;
    base_spec(&base);
    orr_tune_result r;
    int found;
    assert_int_equal(orr_tune(ORR_BACKEND_CPU, &base, 0, NULL, &r, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "invalid body count 0"));
    orr_error_clear(&err);
    base.phys.softening = -1;
    assert_int_equal(orr_tune_lookup(ORR_BACKEND_CPU, &base, N, &r, &found, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "softening"));
    orr_error_clear(&err);
    base_spec(&base);
    snprintf(base.phys.force, sizeof base.phys.force, "no_such_law");
    assert_int_equal(orr_tune(ORR_BACKEND_CPU, &base, N, NULL, &r, &err), ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "no_such_law"));
    orr_error_clear(&err);
}

/* The H100's device identity (tune.h) in the entries below. */
static const char h100_device[] = "NVIDIA H100 80GB HBM3|sm_90|132|driver 13000|nvrtc 13.0";

/* A store entry for gravity as tuned on the H100: its identity only. */
static void h100_entry(orr_tune_entry *e, const char *kernel, const char *precision, long n_bucket)
{
    memset(e, 0, sizeof *e);
    snprintf(e->device, sizeof e->device, "%s", h100_device);
    snprintf(e->kernel, sizeof e->kernel, "%s", kernel);
    snprintf(e->backend, sizeof e->backend, "cuda");
    snprintf(e->precision, sizeof e->precision, "%s", precision);
    snprintf(e->force, sizeof e->force, "gravity");
    e->n_bucket = n_bucket;
}

/* A GPU tuning with bodies per thread and the next tile prefetched: both
 * kept through the store ("prefetch" written only when 1), and an entry
 * without them (stores before ipt and prefetch) reads as ipt 1, no
 * prefetch. */
static void test_prefetch_entry(void **state)
{
    clear_store();
    orr_error err = {0};
    orr_tune_entry e, got;
    h100_entry(&e, "fedcba9876543210fedcba9876543210", "float", 1048576);
    e.block = 256;
    e.unroll = 32;
    e.split = 1;
    e.ipt = 2;
    e.prefetch = 1;
    e.ms = 526.2;
    const orr_tune_stored_trial trials[2] = {
        {512, 16, 1, 0, 0, 1, 0, 549.3, 8.7e-8, 1, "", 0},
        {256, 32, 1, 0, 0, 2, 0, 526.2, 7.2e-8, 1, "", 1}};
    TU_OK(orr_tune_store_put(&e, trials, 2, NULL, 0, &err), &err);
    int found = 0;
    TU_OK(orr_tune_store_get(e.device, e.kernel, &got, &found, NULL, &err), &err);
    assert_int_equal(found, 1);
    assert_int_equal(got.ipt, 2);
    assert_int_equal(got.prefetch, 1);
    cJSON *root = read_store();   /* the default's trial has no prefetch key, the other 1 */
    cJSON *tr = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(root, "entries"), 0),
                                    "trials");
    assert_null(cJSON_GetObjectItem(cJSON_GetArrayItem(tr, 0), "prefetch"));
    assert_int_equal((int)cJSON_GetObjectItem(cJSON_GetArrayItem(tr, 1), "prefetch")->valuedouble, 1);
    cJSON_Delete(root);

    e.prefetch = 0;
    e.ipt = 0;   /* as an older store has it: absent */
    TU_OK(orr_tune_store_put(&e, trials, 1, NULL, 0, &err), &err);
    TU_OK(orr_tune_store_get(e.device, e.kernel, &got, &found, NULL, &err), &err);
    assert_int_equal(found, 1);
    assert_int_equal(got.ipt, 1);
    assert_int_equal(got.prefetch, 0);
    char path[4200];
    store_path(path, sizeof path);
    char *text = tu_slurp(path);
    assert_null(strstr(text, "\"prefetch\""));
    free(text);
}

/* The Hermite tuner's store entries (htune.h): integrator, active bucket,
 * tile and j-split kept whole, beside the force pass's entries; and the
 * engine's launch table it fills: buckets, the j-split rule, the checks. */
static void test_hermite_entries(void **state)
{
    clear_store();
    orr_error err = {0};
    orr_tune_entry e, got;
    h100_entry(&e, "0123456789abcdef0123456789abcdef", "mixed", 262144);
    snprintf(e.integrator, sizeof e.integrator, "hermite");
    e.targets_bucket = 4096;
    e.block = 128;
    e.per_sm = 32;
    e.split = e.ipt = 1;
    e.ranges = 17;
    e.ms = 1.25;
    const orr_tune_stored_trial trials[2] = {
        {256, 0, 1, 0, 9, 1, 16, 1.5, 2e-7, 1, "", 0},
        {128, 0, 1, 0, 17, 1, 32, -1, 0.5, 0, "max rel err 5.0e-01 > 1e-05", 0}};
    TU_OK(orr_tune_store_put(&e, trials, 2, NULL, 0, &err), &err);
    int found = 0;
    TU_OK(orr_tune_store_get(e.device, e.kernel, &got, &found, NULL, &err), &err);
    assert_int_equal(found, 1);
    assert_string_equal(got.integrator, "hermite");
    assert_string_equal(got.precision, "mixed");
    assert_int_equal(got.targets_bucket, 4096);
    assert_int_equal(got.block, 128);
    assert_int_equal(got.per_sm, 32);
    assert_int_equal(got.ranges, 17);
    assert_true(got.ms == 1.25);
    assert_int_equal(got.ntrials, 2);
    assert_int_equal(got.nfailed, 1);
    char path[4200];
    store_path(path, sizeof path);
    char *text = tu_slurp(path);
    assert_non_null(strstr(text, "\"blocks_per_sm\":\t16"));   /* the first trial's */
    free(text);

    /* a force-pass tuning beside it has neither field */
    orr_kspec base;
    base_spec(&base);
    orr_tune_result r;
    quick_tune(&base, N, 0.2, &r);
    lister ls = {0};
    TU_OK(orr_tune_store_list(on_entry, &ls, &err), &err);
    assert_int_equal(ls.count, 2);
    assert_string_equal(ls.last.integrator, "");
    assert_int_equal(ls.last.per_sm, 0);

    /* buckets of active bodies: up to 64, 256, 1024, ... */
    assert_int_equal(orr_hbucket(1), 0);
    assert_int_equal(orr_hbucket(64), 0);
    assert_int_equal(orr_hbucket(65), 1);
    assert_int_equal(orr_hbucket(1024), 2);
    assert_int_equal(orr_hbucket(1025), 3);
    assert_int_equal(orr_hbucket(1L << 20), 7);
    assert_int_equal(orr_hbucket_top(3), 4096);
    assert_int_equal(orr_hbucket(1L << 30), ORR_HBUCKETS - 1);
    /* the j-split: about per_sm blocks per SM, at most 256 ranges, one tile
     * each at least, at most 4n partials */
    long jlen = 0;
    assert_int_equal(orr_hlaunch_ranges(4096, 113, (orr_hlaunch){256, 16}, 132, &jlen), 16);
    assert_int_equal(jlen, 256);
    /* all of 65536 active: 256 blocks want 9 ranges, the partials allow 4 */
    assert_int_equal(orr_hlaunch_ranges(65536, 65536, (orr_hlaunch){256, 16}, 132, &jlen), 4);
    assert_int_equal(jlen, 16384);
    assert_int_equal(orr_hlaunch_ranges(1048576, 1024, (orr_hlaunch){256, 16}, 132, &jlen), 256);
    assert_int_equal(jlen, 4096);
    /* 4 active of 100: 4n / nact = 100 ranges, but no more than the tiles: 2,
     * of 50 (ranges are not rounded up to whole tiles) */
    assert_int_equal(orr_hlaunch_ranges(100, 4, (orr_hlaunch){64, 64}, 132, &jlen), 2);
    assert_int_equal(jlen, 50);
    /* 342 active of 32768, 2 per SM: split 2, 3 blocks of 128 bodies, 88
     * ranges of 373 (whole tiles made 64 ranges of 512: 192 items for 264) */
    assert_int_equal(orr_hlaunch_ranges(32768, 342, (orr_hlaunch){256, 2}, 132, &jlen), 88);
    assert_int_equal(jlen, 373);
    assert_int_equal(orr_hlaunch_ranges(262144, 4096, (orr_hlaunch){128, 4}, 132, NULL), 17);

    /* the engine's table: defaults resolved, checked values, the GPU only times */
    orr_engine *eng = NULL;
    TU_OK(orr_engine_create(&eng, ORR_BACKEND_CPU, NULL, ORR_VARIANT_TILED, 100, 0, NULL, 0, &err),
          &err);
    orr_hlaunch l = orr_engine_hlaunch(eng, 2);
    assert_int_equal(l.tile, 256);   /* the CPU's default block is 1024: tile 256 */
    assert_int_equal(l.per_sm, 16);
    TU_OK(orr_engine_set_hlaunch(eng, 2, (orr_hlaunch){64, 8}, &err), &err);
    l = orr_engine_hlaunch(eng, 2);
    assert_int_equal(l.tile, 64);
    assert_int_equal(l.per_sm, 8);
    assert_int_equal(orr_engine_set_hlaunch(eng, 1, (orr_hlaunch){96, 8}, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "force + jerk tile 96: must be 64, 128 or 256");
    orr_error_clear(&err);
    assert_int_equal(orr_engine_set_hlaunch(eng, 1, (orr_hlaunch){64, 65}, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "force + jerk j-split of 65 blocks per SM: must be from 1 to 64");
    orr_error_clear(&err);
    assert_int_equal(orr_engine_set_hlaunch(eng, ORR_HBUCKETS, (orr_hlaunch){64, 8}, &err),
                     ORR_ERR_ARG);
    assert_non_null(strstr(err.msg, "active-body bucket 13 out of range"));
    orr_error_clear(&err);
    const long idx[2] = {3, 50};
    double ms = 0;
    assert_int_equal(orr_engine_time_accel_jerk(eng, 2, idx, 3, &ms, &err), ORR_ERR_ARG);
    assert_string_equal(err.msg, "the cpu backend does not time its force + jerk kernel (the "
                                 "Hermite tuner is for the GPU)");
    orr_error_clear(&err);
    orr_engine_destroy(eng);
}

/* ---- the store as several processes share it (issue 25, items 1 and 6) ---- */

/* One stored H100 tuning of kernel identity kernel, without trials (the
 * concurrency tests need only distinct identities). */
static orr_status put_entry(const char *kernel, char *note, size_t note_size, orr_error *err)
{
    orr_tune_entry e;
    h100_entry(&e, kernel, "float", 1024);
    e.block = 256, e.unroll = 4, e.split = 1, e.ipt = 1, e.ms = 1.5;
    return orr_tune_store_put(&e, NULL, 0, note, note_size, err);
}

/* The distinct kernel identity of save k of process p. */
static void conc_kernel(char *kernel, int p, int k)
{
    snprintf(kernel, 33, "%016x%016x", (unsigned)p + 1, (unsigned)k + 1);
}

/* Processes that save at once, each tunings of its own identities, keep
 * every one of them: saves hold a lock on tuning.json.lock while they read,
 * add and rename (before, the last writer won: 8 processes saving one entry
 * each left 1 to 3). */
#define CONC_PROCS 8
#define CONC_SAVES 4
static void test_concurrent_saves(void **state)
{
    clear_store();
    int go[2];
    assert_int_equal(pipe(go), 0);
    fflush(NULL);
    pid_t pids[CONC_PROCS];
    for (int p = 0; p < CONC_PROCS; p++) {
        pids[p] = fork();
        assert_true(pids[p] >= 0);
        if (pids[p] == 0) {
            close(go[1]);
            char c;
            if (read(go[0], &c, 1) < 0)   /* returns at end of file: all start together */
                _exit(2);
            int bad = 0;
            for (int k = 0; k < CONC_SAVES; k++) {
                char kernel[33];
                conc_kernel(kernel, p, k);
                orr_error err = {0};
                if (put_entry(kernel, NULL, 0, &err) != ORR_OK) {
                    fprintf(stderr, "process %d save %d: %s\n", p, k, err.msg);
                    bad = 1;
                }
                orr_error_clear(&err);
            }
            _exit(bad);
        }
    }
    close(go[0]);
    close(go[1]);
    int ok = 0;
    for (int p = 0; p < CONC_PROCS; p++) {
        int ws;
        assert_int_equal(waitpid(pids[p], &ws, 0), pids[p]);
        ok += WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
    }
    assert_int_equal(ok, CONC_PROCS);
    orr_error err = {0};
    lister ls = {0};
    TU_OK(orr_tune_store_list(on_entry, &ls, &err), &err);
    print_message("%d processes saved %d tunings each: %d stored\n", CONC_PROCS, CONC_SAVES,
                  ls.count);
    assert_int_equal(ls.count, CONC_PROCS * CONC_SAVES);
    for (int p = 0; p < CONC_PROCS; p++)
        for (int k = 0; k < CONC_SAVES; k++) {
            char kernel[33];
            conc_kernel(kernel, p, k);
            orr_tune_entry got;
            int found = 0;
            TU_OK(orr_tune_store_get(h100_device, kernel, &got, &found, NULL, &err), &err);
            assert_int_equal(found, 1);
        }
}

/* Threads of one process saving at once keep every tuning too (the
 * lock's mutex; fcntl() locks alone would not keep them apart). */
static void *thread_saves(void *arg)
{
    const int p = (int)(intptr_t)arg;
    long bad = 0;
    for (int k = 0; k < CONC_SAVES; k++) {
        char kernel[33];
        conc_kernel(kernel, 100 + p, k);
        orr_error err = {0};
        if (put_entry(kernel, NULL, 0, &err) != ORR_OK) {
            fprintf(stderr, "thread %d save %d: %s\n", p, k, err.msg);
            bad = 1;
        }
        orr_error_clear(&err);
    }
    return (void *)bad;
}

static void test_concurrent_threads(void **state)
{
    clear_store();
    pthread_t th[4];
    for (int p = 0; p < 4; p++)
        assert_int_equal(pthread_create(&th[p], NULL, thread_saves, (void *)(intptr_t)p), 0);
    for (int p = 0; p < 4; p++) {
        void *bad = NULL;
        assert_int_equal(pthread_join(th[p], &bad), 0);
        assert_null(bad);
    }
    orr_error err = {0};
    lister ls = {0};
    TU_OK(orr_tune_store_list(on_entry, &ls, &err), &err);
    assert_int_equal(ls.count, 4 * CONC_SAVES);
}

/* The lock's wait is bounded: a save (or a clear) that finds it held by a
 * process that never lets go fails after the wait with a message naming
 * the lock file, while lookups never wait; once it is free, saves go on.
 * Where the file system keeps no locks (ENOLCK, simulated), a save goes
 * ahead without one and its note says so. */
static void test_lock_bounded(void **state)
{
    clear_store();
    char path[4200], lock[4300];
    store_path(path, sizeof path);
    snprintf(lock, sizeof lock, "%s.lock", path);
    const char *a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", *b = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    orr_error err = {0};
    TU_OK(put_entry(a, NULL, 0, &err), &err);
    int locked[2], release[2];
    assert_int_equal(pipe(locked), 0);
    assert_int_equal(pipe(release), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {   /* holds a classic POSIX lock on the lock file until told */
        close(release[1]);
        close(locked[0]);
        int fd = open(lock, O_RDWR | O_CREAT, 0600);
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        if (fd < 0 || fcntl(fd, F_SETLK, &fl) != 0)
            _exit(1);
        char c = 'l';
        if (write(locked[1], &c, 1) != 1 || read(release[0], &c, 1) < 0)
            _exit(1);
        _exit(0);
    }
    close(locked[1]);
    close(release[0]);
    char c;
    assert_int_equal(read(locked[0], &c, 1), 1);
    setenv("ORRERY_TEST_LOCK_TIMEOUT", "0.3", 1);
    double t0 = now_s();
    assert_int_equal(put_entry(b, NULL, 0, &err), ORR_ERR_IO);
    double waited = now_s() - t0;
    print_message("after %.2f s: %s\n", waited, err.msg);
    char want[4500];
    snprintf(want, sizeof want, "the tuning store is locked: waited 0.3 s for %s", lock);
    assert_non_null(strstr(err.msg, want));
    assert_true(waited >= 0.25 && waited < 10);
    orr_error_clear(&err);
    assert_int_equal(orr_tune_store_clear(NULL, NULL, NULL, &err), ORR_ERR_IO);
    assert_non_null(strstr(err.msg, want));
    orr_error_clear(&err);
    orr_tune_entry got;
    int found = 0;
    TU_OK(orr_tune_store_get(h100_device, a, &got, &found, NULL, &err), &err);   /* no wait */
    assert_int_equal(found, 1);
    TU_OK(orr_tune_store_get(h100_device, b, &got, &found, NULL, &err), &err);
    assert_int_equal(found, 0);
    close(release[1]);   /* the holder exits: its lock goes with it */
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    close(locked[0]);
    TU_OK(put_entry(b, NULL, 0, &err), &err);
    TU_OK(orr_tune_store_get(h100_device, b, &got, &found, NULL, &err), &err);
    assert_int_equal(found, 1);
    unsetenv("ORRERY_TEST_LOCK_TIMEOUT");

    /* no locks on this file system: saved all the same, and said */
    setenv("ORRERY_TEST_NOLOCK", "1", 1);
    char note[512] = "";
    const char *k3 = "cccccccccccccccccccccccccccccccc";
    TU_OK(put_entry(k3, note, sizeof note, &err), &err);
    unsetenv("ORRERY_TEST_NOLOCK");
    print_message("note: %s\n", note);
    assert_non_null(strstr(note, "this file system keeps no locks (No locks available), so the "
                                 "save went ahead without one"));
    TU_OK(orr_tune_store_get(h100_device, k3, &got, &found, NULL, &err), &err);
    assert_int_equal(found, 1);
    lister ls = {0};
    TU_OK(orr_tune_store_list(on_entry, &ls, &err), &err);
    assert_int_equal(ls.count, 3);

    /* a clear removes the lock file with the store */
    assert_int_equal(access(lock, F_OK), 0);
    size_t removed = 0;
    TU_OK(orr_tune_store_clear(&removed, NULL, NULL, &err), &err);
    assert_int_equal(removed, 3);
    assert_int_equal(access(lock, F_OK), -1);
    assert_int_equal(access(path, F_OK), -1);
}

/* A store that cannot be read (EACCES here; EMFILE and EIO alike) is not
 * corrupt: a lookup misses and says why, a save fails rather than replace
 * it, and its tunings are there once it can be read again.  Run in a child
 * process, as nobody when this is root (root reads any file). */
static int unreadable_child(const char *cache)
{
    int bad = 0;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "unreadable store: line %d: %s fails\n", __LINE__, #cond); \
            bad = 1;                                                                 \
        }                                                                            \
    } while (0)
    setenv("ORRERY_CACHE_DIR", cache, 1);
    orr_error err = {0};
    const char *a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", *b = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    CHECK(put_entry(a, NULL, 0, &err) == ORR_OK);
    char path[4200];
    CHECK(orr_tune_store_path(path, sizeof path, &err) == ORR_OK);
    CHECK(chmod(path, 0) == 0);
    CHECK(access(path, R_OK) != 0);
    orr_tune_entry got;
    orr_tune_store_file file;
    int found = 1;
    CHECK(orr_tune_store_get(h100_device, a, &got, &found, &file, &err) == ORR_OK);
    CHECK(found == 0);
    CHECK(file.corrupt[0] == '\0');
    fprintf(stderr, "lookup in an unreadable store: %s\n", file.unreadable);
    CHECK(strstr(file.unreadable, path) && strstr(file.unreadable, "Permission denied"));
    /* the save fails, naming the file and why, and leaves it alone */
    orr_error_clear(&err);
    CHECK(put_entry(b, NULL, 0, &err) == ORR_ERR_IO);
    fprintf(stderr, "save over an unreadable store: %s\n", err.msg);
    CHECK(strstr(err.msg, path) && strstr(err.msg, "Permission denied"));
    orr_error_clear(&err);
    lister ls = {0};
    CHECK(orr_tune_store_list(on_entry, &ls, &err) == ORR_ERR_IO);
    CHECK(strstr(err.msg, path) && strstr(err.msg, "Permission denied"));
    orr_error_clear(&err);
    CHECK(chmod(path, 0600) == 0);
    CHECK(orr_tune_store_get(h100_device, a, &got, &found, NULL, &err) == ORR_OK && found == 1);
    CHECK(orr_tune_store_get(h100_device, b, &got, &found, NULL, &err) == ORR_OK && found == 0);
#undef CHECK
    return bad;
}

static void test_unreadable_store(void **state)
{
    char dir[256], cache[300];
    tu_temp_dir(dir, sizeof dir, "orrery-eacces");
    tu_remove_at_exit(dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    const uid_t nobody = 65534;
    if (geteuid() == 0) {
        assert_int_equal(chown(dir, nobody, nobody), 0);
        assert_int_equal(chmod(dir, 0700), 0);
    }
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0 && (setgid(nobody) != 0 || setuid(nobody) != 0))
            _exit(3);
        if (access(dir, W_OK | X_OK) != 0)
            _exit(4);   /* a TMPDIR that nobody cannot reach */
        _exit(unreadable_child(cache));
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    if (WEXITSTATUS(ws) == 3 || WEXITSTATUS(ws) == 4) {
        print_message("cannot run as an unprivileged user here: skipped\n");
        skip();
    }
    assert_int_equal(WEXITSTATUS(ws), 0);
}

/* A FIFO named tuning.json: lookups and listings do not block on it (they
 * open without waiting for a writer) and call it what it is; the next save
 * replaces it, as it does any store that is not a regular file. */
static void test_fifo_store(void **state)
{
    clear_store();
    char path[4200];
    store_path(path, sizeof path);
    assert_int_equal(mkfifo(path, 0600), 0);
    alarm(30);   /* a hang fails the test */
    orr_error err = {0};
    orr_tune_entry got;
    orr_tune_store_file file;
    int found = 1;
    const char *a = "0123456789abcdef0123456789abcdef";
    TU_OK(orr_tune_store_get(h100_device, a, &got, &found, &file, &err), &err);
    assert_int_equal(found, 0);
    assert_string_equal(file.corrupt, "not a regular file");
    lister ls = {0};
    assert_int_equal(orr_tune_store_list(on_entry, &ls, &err), ORR_ERR_CACHE);
    assert_non_null(strstr(err.msg, "not a regular file"));
    orr_error_clear(&err);
    TU_OK(put_entry(a, NULL, 0, &err), &err);
    TU_OK(orr_tune_store_get(h100_device, a, &got, &found, &file, &err), &err);
    assert_int_equal(found, 1);
    alarm(0);
}

/* What clear left, a line each: "PATH: WHY\n". */
static void on_left(const char *path, const char *why, void *ctx)
{
    char *out = ctx;
    size_t len = strlen(out);
    snprintf(out + len, 8192 - len, "%s: %s\n", path, why);
}

/* Clearing a store that is not orrery's own (a directory, a symbolic link
 * to a store elsewhere, a FIFO, named like the store or its temporaries)
 * leaves it as it is, never followed, and says so; a save's regular
 * temporary of one's own goes, as the store does once it is a file. */
static void test_store_clear_leaves(void **state)
{
    clear_store();
    char path[4200], dir[4200], target[4300], ftmp[4300], rtmp[4300];
    store_path(path, sizeof path);
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    snprintf(target, sizeof target, "%s/elsewhere.json", dir);
    snprintf(ftmp, sizeof ftmp, "%s.tmp.Fa1fo0", path);
    snprintf(rtmp, sizeof rtmp, "%s.tmp.Rg1ar0", path);
    orr_error err = {0};
    const char *a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    TU_OK(put_entry(a, NULL, 0, &err), &err);
    assert_int_equal(rename(path, target), 0);   /* a store of one entry, elsewhere */
    alarm(30);   /* a FIFO waited on fails the test */
    for (int kind = 0; kind < 3; kind++) {
        const char *why = kind == 0 ? "a directory" : kind == 1 ? "a symbolic link"
                                                                : "not a regular file";
        if (kind == 0)
            assert_int_equal(mkdir(path, 0700), 0);
        else if (kind == 1)
            assert_int_equal(symlink(target, path), 0);
        else
            assert_int_equal(mkfifo(path, 0600), 0);
        assert_int_equal(mkfifo(ftmp, 0600), 0);
        spit(rtmp, "{");
        size_t removed = 9;
        char said[8192] = "", want[9000];
        TU_OK(orr_tune_store_clear(&removed, on_left, said, &err), &err);
        print_message("left:\n%s", said);
        assert_int_equal(removed, 0);
        snprintf(want, sizeof want, "%s: %s\n%s: not a regular file\n", path, why, ftmp);
        assert_string_equal(said, want);
        struct stat sb;
        assert_int_equal(lstat(path, &sb), 0);   /* left as it was */
        assert_int_equal(sb.st_mode & S_IFMT, kind == 0 ? S_IFDIR : kind == 1 ? S_IFLNK : S_IFIFO);
        assert_int_equal(lstat(ftmp, &sb), 0);
        assert_int_equal(lstat(rtmp, &sb), -1);   /* orrery's own temporary */
        assert_int_equal(stat(target, &sb), 0);   /* a link's target untouched */
        assert_int_equal(kind == 0 ? rmdir(path) : unlink(path), 0);
        assert_int_equal(unlink(ftmp), 0);
    }
    alarm(0);
    /* the store itself, a file again: removed, its tuning counted */
    assert_int_equal(rename(target, path), 0);
    size_t removed = 0;
    char said[8192] = "";
    TU_OK(orr_tune_store_clear(&removed, on_left, said, &err), &err);
    assert_int_equal(removed, 1);
    assert_string_equal(said, "");
    assert_int_equal(access(path, F_OK), -1);
}

/* A cache directory that cannot be made (here under a regular file, which
 * stops root too): lookups miss without an error, and a tuning runs
 * uncached and says that it was not saved. */
static void test_unusable_cache_dir(void **state)
{
    char dir[256], file[300], cache[320];
    tu_temp_dir(dir, sizeof dir, "orrery-nocache");
    tu_remove_at_exit(dir);
    snprintf(file, sizeof file, "%s/file", dir);
    snprintf(cache, sizeof cache, "%s/x", file);
    spit(file, "");
    char *old = strdup(getenv("ORRERY_CACHE_DIR"));
    setenv("ORRERY_CACHE_DIR", cache, 1);
    orr_error err = {0};
    orr_tune_entry got;
    orr_tune_store_file sf;
    int found = 1;
    orr_status st = orr_tune_store_get(h100_device, "0123456789abcdef0123456789abcdef", &got,
                                       &found, &sf, &err);
    if (st)
        print_message("lookup: %s\n", err.msg);
    assert_int_equal(st, ORR_OK);
    assert_int_equal(found, 0);
    orr_kspec base;
    base_spec(&base);
    static recorder rec;
    memset(&rec, 0, sizeof rec);
    orr_tune_options o;
    options(&o, &rec, 0.1);
    orr_tune_result r;
    st = orr_tune(ORR_BACKEND_CPU, &base, 100, &o, &r, &err);
    if (st)
        print_message("tune: %s\n", err.msg);
    assert_int_equal(st, ORR_OK);
    print_result("tune without a cache directory", &r);
    char want[600];   /* in the kernel cache's words, one line */
    snprintf(want, sizeof want, ORR_KCACHE_UNUSABLE_NOTE "cannot create cache directory %s: "
             "Not a directory", cache);
    assert_true(has_line(r.note, want));
    setenv("ORRERY_CACHE_DIR", old, 1);
    free(old);
}

/* A save that waits for the lock says so to the wait hook once, before it
 * fails, and not at all when it does not wait. */
typedef struct {
    int calls;
    double at;
    char msg[4400];
} waited;

static void on_wait(const char *msg, void *ctx)
{
    waited *w = ctx;
    w->calls++;
    w->at = now_s();
    snprintf(w->msg, sizeof w->msg, "%s", msg);
}

static void test_lock_wait_told(void **state)
{
    clear_store();
    char path[4200], lock[4300];
    store_path(path, sizeof path);
    snprintf(lock, sizeof lock, "%s.lock", path);
    const char *a = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", *b = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
    orr_error err = {0};
    static waited w;
    memset(&w, 0, sizeof w);
    orr_tune_store_on_wait(on_wait, &w);
    TU_OK(put_entry(a, NULL, 0, &err), &err);
    assert_int_equal(w.calls, 0);   /* no wait, nothing told */
    int locked[2], release[2];
    assert_int_equal(pipe(locked), 0);
    assert_int_equal(pipe(release), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {   /* holds the lock until told */
        close(release[1]);
        close(locked[0]);
        int fd = open(lock, O_RDWR | O_CREAT, 0600);
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        if (fd < 0 || fcntl(fd, F_SETLK, &fl) != 0)
            _exit(1);
        char c = 'l';
        if (write(locked[1], &c, 1) != 1 || read(release[0], &c, 1) < 0)
            _exit(1);
        _exit(0);
    }
    close(locked[1]);
    close(release[0]);
    char c;
    assert_int_equal(read(locked[0], &c, 1), 1);
    setenv("ORRERY_TEST_LOCK_TIMEOUT", "1", 1);
    double t0 = now_s();
    assert_int_equal(put_entry(b, NULL, 0, &err), ORR_ERR_IO);
    double t1 = now_s();
    unsetenv("ORRERY_TEST_LOCK_TIMEOUT");
    print_message("told after %.2f s: %s\nfailed after %.2f s: %s\n", w.at - t0, w.msg, t1 - t0,
                  err.msg);
    assert_int_equal(w.calls, 1);
    char want[4500];
    snprintf(want, sizeof want,
             "the tuning store is locked by another process: waiting up to 1 s for %s", lock);
    assert_string_equal(w.msg, want);
    assert_true(w.at - t0 >= 0.45 && w.at < t1);
    snprintf(want, sizeof want, "the tuning store is locked: waited 1 s for %s", lock);
    assert_non_null(strstr(err.msg, want));
    orr_error_clear(&err);
    close(release[1]);
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    close(locked[0]);
    orr_tune_store_on_wait(NULL, NULL);
}

/* A cache directory of one's own that one may not write (mode 0500): the
 * tuning runs from what it can read and says, in the kernel cache's words
 * and on a line of its own, that nothing is stored (not "cannot lock the
 * tuning store: ... Permission denied"); the directory is left as it was. */
static int readonly_child(const char *base)
{
    int bad = 0;
#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "read-only store: line %d: %s fails\n", __LINE__, #cond); \
            bad = 1;                                                                 \
        }                                                                            \
    } while (0)
    char cache[300];
    snprintf(cache, sizeof cache, "%s/cache", base);
    setenv("ORRERY_CACHE_DIR", cache, 1);
    CHECK(mkdir(cache, 0500) == 0);
    orr_kspec base_s;
    base_spec(&base_s);
    static recorder rec;
    memset(&rec, 0, sizeof rec);
    orr_tune_options o;
    options(&o, &rec, 0.1);
    orr_tune_result r;
    orr_error err = {0};
    CHECK(orr_tune(ORR_BACKEND_CPU, &base_s, 100, &o, &r, &err) == ORR_OK);
    fprintf(stderr, "note: %s\n", r.note);
    char want[700];
    snprintf(want, sizeof want, ORR_KCACHE_READONLY_NOTE "cache directory %s is not writable "
             "(Permission denied)", cache);
    CHECK(has_line(r.note, want));
    CHECK(!strstr(r.note, "tuning not saved"));
    CHECK(access(cache, F_OK) == 0);
    char lock[400];
    snprintf(lock, sizeof lock, "%s/tuning.json.lock", cache);
    CHECK(access(lock, F_OK) != 0);
#undef CHECK
    return bad;
}

/* Runs readonly_child(dir) in a fresh process (this binary again, as
 * "--readonly-child DIR"): a child only forked would inherit the OpenMP
 * runtime of the CPU tunings before it, which does not survive fork(), and
 * hang in its first tuning.  As root it runs as nobody (file modes mean
 * nothing to root); skipped where that cannot be done. */
static void test_readonly_cache_dir(void **state)
{
    char dir[256];
    tu_temp_dir(dir, sizeof dir, "orrery-tunero");
    tu_remove_at_exit(dir);
    const uid_t nobody = 65534;
    if (geteuid() == 0) {
        assert_int_equal(chown(dir, nobody, nobody), 0);
        assert_int_equal(chmod(dir, 0700), 0);
    }
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (geteuid() == 0 &&
            (setgroups(0, NULL) != 0 || setgid(nobody) != 0 || setuid(nobody) != 0))
            _exit(3);
        if (access(dir, W_OK | X_OK) != 0)
            _exit(4);   /* a TMPDIR that nobody cannot reach */
        char *args[] = {"test_tune", "--readonly-child", dir, NULL};
        execv("/proc/self/exe", args);
        _exit(5);
    }
    int ws;
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    if (geteuid() == 0)   /* whatever the child left, removable at exit */
        chmod(dir, 0700);
    assert_true(WIFEXITED(ws));
    if (WEXITSTATUS(ws) == 3 || WEXITSTATUS(ws) == 4) {
        print_message("cannot run as an unprivileged user here: skipped\n");
        skip();
    }
    assert_int_equal(WEXITSTATUS(ws), 0);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--readonly-child") == 0)
        return readonly_child(argv[2]);   /* test_readonly_cache_dir's */
    tu_private_cache();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_corrupt_store),
        cmocka_unit_test(test_identity_mismatch),
        cmocka_unit_test(test_planted_wrong_answer),
        cmocka_unit_test(test_compile_error_recorded),
        cmocka_unit_test(test_nothing_verifies),
        cmocka_unit_test(test_exhaustive),
        cmocka_unit_test(test_store_clear),
        cmocka_unit_test(test_slice_shape),
        cmocka_unit_test(test_winner_under_load),
        cmocka_unit_test(test_noisy_timings),
        cmocka_unit_test(test_stale_store),
        cmocka_unit_test(test_launch_bound),
        cmocka_unit_test(test_wall_limit),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_hermite_entries),
        cmocka_unit_test(test_prefetch_entry),
        cmocka_unit_test(test_concurrent_saves),
        cmocka_unit_test(test_concurrent_threads),
        cmocka_unit_test(test_lock_bounded),
        cmocka_unit_test(test_unreadable_store),
        cmocka_unit_test(test_fifo_store),
        cmocka_unit_test(test_store_clear_leaves),
        cmocka_unit_test(test_unusable_cache_dir),
        cmocka_unit_test(test_lock_wait_told),
        cmocka_unit_test(test_readonly_cache_dir),
    };
    return cmocka_run_group_tests_name("tune", tests, NULL, NULL);
}
