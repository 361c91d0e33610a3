/* cli: the orrery command line's own commands, info, compile, bench, tune and
 * cache, with --help and --version, behind orr_cli_main (main() is the
 * program's: lua/main.c adds the Lua layer's run).  The only module besides
 * the Lua layer that talks to the user.  Usage errors exit 2 with a one-line
 * hint; run-time errors exit 1. */
#include "cli.h"
#include "field.h"
#include "bench.h"
#include "comm.h"
#include "dist.h"
#include "cuda.h"
#include "engine.h"
#include "hostcc.h"
#include "kcache.h"
#include "kspec.h"
#include "law.h"
#include "movie.h"
#include "outfile.h"
#include "rtc.h"
#include "tune.h"
#include "htune.h"
#include "tunestore.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef ORR_VERSION
#define ORR_VERSION "dev"
#endif

/* The usage text: usage_head, the added commands' lines (orr_cli_command
 * usage), usage_commands. */
static const char *usage_head =
    "usage: orrery COMMAND [OPTIONS]\n"
    "\n"
    "Direct (all-pairs) N-body simulation with kernels compiled at run time.\n"
    "\n"
    "commands:\n";

static const char *usage_commands =
    "  info [--forces|--fields]  GPUs, NVRTC, host compiler, kernel cache, tunings;\n"
    "                            --forces: the built-in force laws with their params;\n"
    "                            --fields: the built-in external fields with theirs\n"
    "  bench [OPTIONS]           time steps and check accuracy against the CPU in double\n"
    "      --backend auto|cuda|cpu   (auto)      --precision float|double (float)\n"
    "      --n LIST              body counts, e.g. 16384,65536 (GPU: 16384,65536,262144;\n"
    "                            CPU: 1024,4096,16384)\n"
    "      --steps K             timed steps per row (default: about 0.25 s worth)\n"
    "      --variant tiled|naive|reference|both   (tiled; naive: the GPU baseline; reference:\n"
    "                            the CPU's plain float gravity loop; both: tiled + the baseline)\n"
    "      --tune                use the stored tuning per N, tuning first where there is none\n"
    "                            (under mpirun: the one-rank figure with the one-GPU tuning,\n"
    "                            the ranks with their slice's)\n"
    "      --integrator hermite  time Hermite block steps instead: one block of --active\n"
    "                            bodies (LIST, 'all' for N; default all) against all N (60\n"
    "                            flops each; one rank only);\n"
    "                            with --tune, the force + jerk launches tuned per N\n"
    "      --integrator hermite --run T   a real run instead: per N a Plummer sphere (seed\n"
    "                            --seed K, 7; softening 4/N unless --softening; precision\n"
    "                            double unless --precision) run as `orrery run` runs it (on\n"
    "                            the GPU the tuned force + jerk launches): one interval of\n"
    "                            --dt-max H (1/16) untimed, then T time units (a multiple of\n"
    "                            H) timed, eta --eta E (0 to 1; 0.02): wall s, s per time\n"
    "                            unit, blocks, active bodies per block, interactions/s, the\n"
    "                            all-active block's rate (best of --steps, 3) and the\n"
    "                            fraction of it sustained, |dE/E| (nan where the law has no\n"
    "                            potential or the energy is 0); under mpirun over the\n"
    "                            ranks, with each rank's time communicating and the speedup\n"
    "                            against rank 0 alone (no --active; of the kernel options\n"
    "                            --force, --softening, --G and --threads)\n"
    "      --csv                 machine-readable rows\n"
    "      and the kernel options below\n"
    "  tune [OPTIONS]            autotune the kernels for this device; results are stored\n"
    "      --backend auto|cuda|cpu  --precision P  --n LIST (as bench), kernel options\n"
    "      --budget SECONDS (2)  --exhaustive  --retune (ignore the stored result)\n"
    "      --integrator hermite  the force + jerk kernel of block steps instead (GPU): its\n"
    "                            tile and j-split per bucket of active bodies\n"
    "  compile [OPTIONS]         generate and compile a kernel, print or write it\n"
    "      --target gpu|cpu (gpu)   --arch sm_XY (the GPU's own, else sm_90)\n"
    "      --emit source|ptx|cubin (GPU) or source|so (CPU)   -o FILE\n"
    "      --precision float|double (float), kernel options\n"
    "  cache list|clear          list or remove compiled kernels (clear: tunings too)\n"
    "  movie OUT.mp4 PATTERN     a numbered series of PNG files (frames/f_%04d.png, from 0\n"
    "                            or 1 up to the first missing) as an MP4 (H.264) movie\n"
    "      --fps N (30)          frames per second   --crf N (20) quality, 0 (lossless)..51\n"
    "      --start N             the series' first number\n"
    "  --help (also COMMAND --help), --version\n"
    "\n"
    "kernel options (bench, tune, compile):\n"
    "  --force NAME|LAW.lua      a built-in force law (orrery info --forces) or a law script\n"
    "                            (gravity)\n"
    "  --softening EPS (0.01)    0, or with EPS^2 a normal number in the precision\n"
    "  --G G (1)                 the coupling constant\n"
    "  --block B                 GPU: threads per block, a multiple of 32 up to 1024 (512);\n"
    "                            CPU: the j-tile, 16 to 1048576 (1024)\n"
    "  GPU only (a usage error on the CPU):\n"
    "  --unroll U (16)           inner-loop unroll, 1 to 64\n"
    "  --split S (1)             threads per body, 1, 2, 4, ..., 32\n"
    "  --ipt R (1)               bodies per thread (register blocking), 1 to 8\n"
    "  --prefetch 0|1 (0)        stage the next tile through registers while one is summed\n"
    "  --ftz 0|1 (1)             float: flush denormals to zero\n"
    "  --newton 1|2 (2)          double rsqrt refinement: 2 full accuracy, 1 faster, ~1e-12\n"
    "  --ranges R (0)            blocks sharing each body's j-loop, up to 64; 0: from occupancy\n"
    "  CPU only:\n"
    "  --threads T (0)           OpenMP threads, 0 for the OpenMP default\n"
    "\n"
    "environment: ORRERY_CACHE_DIR (kernel cache), ORRERY_KERNELS_DIR (read kernel\n"
    "sources from disk), CC (host compiler for the CPU backend), CUDA_PATH.\n";

/* 1 while a rank other than 0 of a launched bench reads its arguments:
 * their usage errors are rank 0's to say (every rank exits 2). */
static int usage_quiet;

int orr_cli_usage_error(const char *fmt, ...)
{
    if (usage_quiet)
        return 2;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "orrery: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'orrery --help')\n");
    return 2;
}

/* A run-time error: message, compiler log if any, exit 1; err is cleared. */
static int report(orr_error *err)
{
    fprintf(stderr, "orrery: %s\n", err->msg);
    if (err->log && *err->log)
        fprintf(stderr, "%s%s", err->log, err->log[strlen(err->log) - 1] == '\n' ? "" : "\n");
    orr_error_clear(err);   /* the log is on the heap */
    return 1;
}

/* ---- option parsing ---------------------------------------------------- */

typedef struct {
    int argc, pos;
    char **argv;
    const char *cmd;
    orr_cli_law_loader load_law;   /* for --force LAW.lua, or NULL */
} args_t;

/* Matches "--name VALUE" or "--name=VALUE" at the current position. */
static int opt_value(args_t *a, const char *name, const char **value, int *bad)
{
    const char *arg = a->argv[a->pos];
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0)
        return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return 1;
    }
    if (arg[len] != '\0')
        return 0;
    if (a->pos + 1 >= a->argc) {
        *bad = orr_cli_usage_error("%s: option %s needs a value", a->cmd, name);
        return 1;
    }
    *value = a->argv[++a->pos];
    return 1;
}

/* Whether arg is the option name, as "--name" or "--name=VALUE". */
static int is_option(const char *arg, const char *name)
{
    size_t len = strlen(name);
    return strncmp(arg, name, len) == 0 && (arg[len] == '\0' || arg[len] == '=');
}

static int parse_int(const char *cmd, const char *opt, const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return orr_cli_usage_error("%s: %s expects an integer from %ld to %ld, got '%s'", cmd,
                                   opt, lo, hi, s);
    *out = v;
    return 0;
}

static int parse_double(const char *cmd, const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return orr_cli_usage_error("%s: %s expects a number, got '%s'", cmd, opt, s);
    *out = v;
    return 0;
}

/* --force NAME (a built-in law) or SCRIPT.lua (a law script that returns
 * an orrery.Force, loaded by a->load_law); the law lives as long as the
 * process. */
static int set_force(const args_t *a, orr_kspec *s, const char *v)
{
    static orr_law law;
    size_t len = strlen(v);
    if (len > 4 && strcmp(v + len - 4, ".lua") == 0) {
        orr_error e = {0};
        orr_law_free(&law);
        orr_status st = a->load_law ? a->load_law(v, &law, &e)
                                    : orr_fail(&e, ORR_ERR_ARG, "law scripts need the Lua layer");
        if (st || orr_law_validate(&law, &e)) {
            fprintf(stderr, "orrery: %s: --force %s: %s\n", a->cmd, v, e.msg);
            orr_error_clear(&e);
            return 1;
        }
        s->phys.law = &law;
        snprintf(s->phys.force, sizeof s->phys.force, "%s", law.name);
    } else {
        s->phys.law = NULL;
        snprintf(s->phys.force, sizeof s->phys.force, "%s", v);
    }
    return 0;
}

/* Kernel-spec options shared by bench and compile; returns 1 when the current
 * argument was one of them (and *bad != 0 on a usage error). */
static int spec_option(args_t *a, orr_kspec *s, int *set_block, int *bad)
{
    const char *v;
    long iv;
    orr_error e = {0};
    if (opt_value(a, "--precision", &v, bad)) {
        if (!*bad && orr_precision_parse(v, &s->phys.precision, &e))
            *bad = orr_cli_usage_error("%s: %s", a->cmd, e.msg);
    } else if (opt_value(a, "--block", &v, bad)) {
        if (!*bad && !(*bad = parse_int(a->cmd, "--block", v, 1, 1 << 20, &iv))) {
            s->launch.block = (int)iv;
            *set_block = 1;
        }
    } else if (opt_value(a, "--unroll", &v, bad)) {
        if (!*bad && !(*bad = parse_int(a->cmd, "--unroll", v, 1, 1024, &iv)))
            s->launch.unroll = (int)iv;
    } else if (opt_value(a, "--split", &v, bad)) {
        if (!*bad && !(*bad = parse_int(a->cmd, "--split", v, 1, 1024, &iv)))
            s->launch.split = (int)iv;
    } else if (opt_value(a, "--ipt", &v, bad)) {
        if (!*bad && !(*bad = parse_int(a->cmd, "--ipt", v, 1, 1024, &iv)))
            s->launch.ipt = (int)iv;
    } else if (opt_value(a, "--prefetch", &v, bad)) {
        if (!*bad && !(*bad = parse_int(a->cmd, "--prefetch", v, 0, 1, &iv)))
            s->launch.prefetch = (int)iv;
    } else if (opt_value(a, "--ftz", &v, bad)) {
        if (!*bad && !(*bad = parse_int(a->cmd, "--ftz", v, 0, 1, &iv)))
            s->launch.ftz = (int)iv;
    } else if (opt_value(a, "--newton", &v, bad)) {
        if (!*bad && !(*bad = parse_int(a->cmd, "--newton", v, 1, 2, &iv)))
            s->launch.newton = (int)iv;
    } else if (opt_value(a, "--ranges", &v, bad)) {
        if (!*bad && !(*bad = parse_int(a->cmd, "--ranges", v, 0, ORR_KSPEC_MAX_RANGES, &iv)))
            s->launch.ranges = (int)iv;
    } else if (opt_value(a, "--threads", &v, bad)) {
        if (!*bad && !(*bad = parse_int(a->cmd, "--threads", v, 0, 4096, &iv)))
            s->launch.threads = (int)iv;
    } else if (opt_value(a, "--softening", &v, bad)) {
        if (!*bad)
            *bad = parse_double(a->cmd, "--softening", v, &s->phys.softening);
    } else if (opt_value(a, "--G", &v, bad)) {
        if (!*bad)
            *bad = parse_double(a->cmd, "--G", v, &s->phys.G);
    } else if (opt_value(a, "--force", &v, bad)) {
        if (!*bad)
            *bad = set_force(a, s, v);
    } else {
        return 0;
    }
    return 1;
}

#define ORR_CLI_MAX_N 32   /* body counts in one --n list */

/* ---- info ---------------------------------------------------------------- */

/* orrery info --forces: the built-in laws, their params and attributes. */
static int list_forces(void)
{
    orr_error e = {0};
    printf("built-in force laws (kernels_src/forces/; docs/FORCE_LAWS.md):\n");
    for (const char *const *n = orr_law_builtin_names(); *n; n++) {
        orr_law law;
        if (orr_law_builtin(*n, &law, &e)) {
            printf("  %s: unreadable: %s\n", *n, e.msg);
            orr_error_clear(&e);
            continue;
        }
        printf("  %s: %s\n    scale: %s\n", law.name, law.doc, law.scale);
        for (int k = 0; k < law.nparams; k++)
            printf("    param %-10s = %-8g %s\n", law.params[k].name, law.params[k].value,
                   law.params[k].doc);
        for (int k = 0; k < law.nattrs; k++)
            printf("    attribute %-7s %s\n", law.attrs[k], law.attr_doc[k]);
        orr_law_free(&law);
    }
    return 0;
}

/* orrery info --fields: the built-in external fields, their params (with
 * the physical unit a param follows) and potentials. */
static int list_fields(void)
{
    orr_error e = {0};
    printf("built-in external fields (kernels_src/fields/; docs/FORCE_LAWS.md, \"External "
           "fields\"):\n");
    for (const char *const *n = orr_field_builtin_names(); *n; n++) {
        orr_field f;
        if (orr_field_builtin(*n, &f, &e)) {
            printf("  %s: unreadable: %s\n", *n, e.msg);
            orr_error_clear(&e);
            continue;
        }
        printf("  %s: %s\n", f.name, f.doc);
        for (int k = 0; k < f.nparams; k++)
            printf("    param %-10s = %-10g %s%s%s%s\n", f.params[k].name, f.params[k].value,
                   f.params[k].doc, f.params[k].unit[0] ? " (a " : "", f.params[k].unit,
                   f.params[k].unit[0] ? ": follows units)" : "");
        if (f.expr && f.expr[0]) {   /* one line: its own lines joined, no trailing space */
            size_t len = strlen(f.expr);
            while (len > 0 && isspace((unsigned char)f.expr[len - 1]))
                len--;
            printf("    potential: ");
            for (size_t c = 0; c < len; c++)
                putchar(f.expr[c] == '\n' ? ' ' : f.expr[c]);
            putchar('\n');
        }
        orr_field_free(&f);
    }
    return 0;
}

static void list_tuning(const orr_tune_entry *t, void *ctx)
{
    if (strcmp(t->integrator, "hermite") == 0) {
        printf("  %s %s %s N<=%ld hermite force + jerk, <=%ld active: tile %d, %d blocks per SM "
               "(%d ranges), %.4g ms (%d tried, %d rejected, %s)\n    on %s\n", t->backend,
               t->force, t->precision, t->n_bucket, t->targets_bucket, t->block, t->per_sm,
               t->ranges, t->ms, t->ntrials, t->nfailed, t->when, t->device);
        ++*(int *)ctx;
        return;
    }
    char slice[48] = "";
    if (t->targets_bucket)
        snprintf(slice, sizeof slice, " (slices of <=%ld)", t->targets_bucket);
    printf("  %s %s %s N<=%ld%s: block %d unroll %d split %d ipt %d%s threads %d ranges %d, %.4g "
           "ms, %.3g interactions/s (%d tried, %d rejected, %s)\n    on %s\n", t->backend,
           t->force, t->precision, t->n_bucket, slice, t->block, t->unroll, t->split,
           t->ipt > 0 ? t->ipt : 1, t->prefetch ? " prefetch" : "", t->threads, t->ranges, t->ms,
           t->interactions_per_s, t->ntrials, t->nfailed, t->when, t->device);
    ++*(int *)ctx;
}

static int rank_device(orr_comm *c, orr_backend_kind kind);
static int rank_failed(orr_comm *c, orr_error *e);

/* info under mpirun: one line per rank, its host and the device it uses
 * (GPU local rank mod visible GPUs, with its UUID, else the CPU), printed
 * by rank 0. */
static int list_ranks(orr_comm *c)
{
    enum { LINE = 640 };
    const int ranks = orr_comm_size(c);
    char mine[LINE], *all = malloc((size_t)ranks * LINE);
    if (!all)
        return 1;
    orr_error e = {0};
    orr_gpu_info g;
    int count = 0;
    if (orr_cuda_usable(0, &e) == ORR_OK && orr_cuda_device_count(&count, &e) == ORR_OK &&
        orr_cuda_device_info(rank_device(c, ORR_BACKEND_CUDA), &g, &e) == ORR_OK)
        snprintf(mine, sizeof mine, "%s, local rank %d: GPU %d of %d, %s (%s)",
                 orr_comm_host(c), orr_comm_local_rank(c), g.ordinal, count, g.name, g.uuid);
    else
        snprintf(mine, sizeof mine, "%s, local rank %d: CPU (no usable GPU: %.200s)",
                 orr_comm_host(c), orr_comm_local_rank(c), e.msg);
    orr_error_clear(&e);
    int rc = 0;
    if (orr_comm_allgather(c, mine, all, LINE, &e)) {
        rc = rank_failed(c, &e);
    } else if (orr_comm_rank(c) == 0) {
        printf("Ranks (mpirun): %d\n", ranks);
        for (int r = 0; r < ranks; r++)
            printf("  rank %d: %.*s\n", r, LINE, all + (size_t)r * LINE);
    }
    free(all);
    return rc;
}

static int cmd_info(args_t *a)
{
    int forces = 0, fields = 0;
    for (int k = 2; k < a->argc; k++) {
        if (strcmp(a->argv[k], "--forces") == 0 && !forces && !fields)
            forces = 1;
        else if (strcmp(a->argv[k], "--fields") == 0 && !forces && !fields)
            fields = 1;
        else
            return orr_cli_usage_error("info: unexpected argument '%s' (orrery info "
                                       "[--forces|--fields])", a->argv[k]);
    }
    if (forces)
        return list_forces();
    if (fields)
        return list_fields();
    orr_error e = {0};
    if (orr_comm_launched()) {   /* under mpirun: every rank's host and device, then rank 0 goes on */
        orr_comm *c = NULL;
        if (orr_comm_world(&c, &e))
            return report(&e);
        int rank0 = orr_comm_rank(c) == 0;
        int rc = list_ranks(c);
        orr_comm_finalize();
        if (rc || !rank0)
            return rc;
    }
    printf("orrery %s\n", ORR_VERSION);
    printf("GPUs:\n");
    int count = 0;
    if (orr_cuda_open(&e) || orr_cuda_device_count(&count, &e)) {
        printf("  none: %s\n", e.msg);
        orr_error_clear(&e);
    } else {
        int dv = orr_cuda_driver_version();
        for (int d = 0; d < count; d++) {
            orr_gpu_info g;
            if (orr_cuda_device_info(d, &g, &e)) {
                printf("  %d: %s\n", d, e.msg);
                orr_error_clear(&e);
                continue;
            }
            char arch[16];
            orr_cuda_arch_name(&g, arch, sizeof arch);
            printf("  %d: %s, compute capability %d.%d (%s), %d SMs, %.1f GiB, %.2f GHz, "
                   "driver %d.%d\n", d, g.name, g.cc_major, g.cc_minor, arch, g.sm_count,
                   g.total_mem / 1073741824.0, g.clock_khz * 1e-6, dv / 1000, (dv % 1000) / 10);
        }
        if (count == 0)
            printf("  none: driver loaded but no CUDA device found\n");
    }
    int major, minor;
    if (orr_rtc_version(&major, &minor, &e)) {
        printf("NVRTC: missing: %s\n", e.msg);
        orr_error_clear(&e);
    } else {
        printf("NVRTC: %d.%d\n", major, minor);
    }
    const char *cc, *cpu;
    if (orr_hostcc_identity(&cc, &cpu, &e)) {
        printf("host C compiler: unusable: %s\n", e.msg);
        orr_error_clear(&e);
    } else {
        printf("host C compiler: %s\n  command: %s%s\n  flags: %s (float kernels add %s)\n"
               "  CPU: %s, %ld threads\n", cc, orr_hostcc_command(),
               getenv("CC") && *getenv("CC") ? " ($CC)" : " (set CC to change)",
               orr_hostcc_flags(), orr_hostcc_precision_flags(0), cpu,
               sysconf(_SC_NPROCESSORS_ONLN));
    }
    char dir[4096], why[4096 + 128];
    size_t entries = 0, bytes = 0;
    const orr_kcache_state ks = orr_kcache_check(dir, sizeof dir, why, sizeof why);
    if (ks == ORR_KCACHE_UNUSABLE) {
        printf("kernel cache: unusable: %s\n", why);
    } else if (orr_kcache_usage(&entries, &bytes, &e)) {
        printf("kernel cache: unusable: %s\n", e.msg);
        orr_error_clear(&e);
    } else {
        printf("kernel cache: %s, %zu entr%s, %.1f MiB\n", dir, entries,
               entries == 1 ? "y" : "ies", bytes / 1048576.0);
        if (ks == ORR_KCACHE_READONLY)   /* lookups work: what is there is used */
            printf("  read-only: %s; its kernels and tunings are used, new ones not stored\n",
                   why);
    }
    int tunings = 0;
    printf("stored tunings:\n");
    if (orr_tune_store_list(list_tuning, &tunings, &e)) {
        printf("  unreadable: %s\n", e.msg);
        orr_error_clear(&e);
    } else if (tunings == 0) {
        printf("  none (orrery tune, or a GPU simulation's first start, makes them)\n");
    }
    return 0;
}

/* ---- cache --------------------------------------------------------------- */

static void list_entry(const orr_kcache_entry *en, void *ctx)
{
    time_t t = (time_t)en->mtime;
    char when[32];
    strftime(when, sizeof when, "%Y-%m-%d %H:%M", localtime(&t));
    if (en->refused)
        printf("%-44s %10zu  %s  (refused: %s; %s)\n", en->name, en->bytes, when, en->refused,
               en->advice);
    else
        printf("%-44s %10zu  %s%s\n", en->name, en->bytes, when, en->valid ? "" : "  (corrupt)");
    ++*(int *)ctx;
}

/* What cache clear leaves (not orrery's own: orr_kcache_clear), a line
 * each, before the count. */
static void left_entry(const char *path, const char *why, void *ctx)
{
    printf("left %s: %s; remove it yourself\n", path, why);
    ++*(size_t *)ctx;
}

static int cmd_cache(args_t *a)
{
    if (a->argc != 3 || (strcmp(a->argv[2], "list") && strcmp(a->argv[2], "clear")))
        return orr_cli_usage_error("cache: expected 'cache list' or 'cache clear'");
    orr_error e = {0};
    char dir[4096];
    if (orr_kcache_dir(dir, sizeof dir, &e))
        return report(&e);
    if (strcmp(a->argv[2], "list") == 0) {
        int count = 0;
        if (orr_kcache_list(list_entry, &count, &e))
            return report(&e);
        printf("%d entr%s in %s\n", count, count == 1 ? "y" : "ies", dir);
        return 0;
    }
    size_t removed = 0, tunings = 0, left = 0;
    if (orr_kcache_clear(&removed, NULL, left_entry, &left, &e) ||
        orr_tune_store_clear(&tunings, left_entry, &left, &e))
        return report(&e);
    printf("removed %zu entr%s and %zu stored tuning%s from %s", removed,
           removed == 1 ? "y" : "ies", tunings, tunings == 1 ? "" : "s", dir);
    if (left)
        printf("; left %zu item%s that %s not orrery's own (above)", left, left == 1 ? "" : "s",
               left == 1 ? "is" : "are");
    printf("\n");
    return 0;
}

/* ---- compile ------------------------------------------------------------- */

/* Writes data to path atomically (outfile.h), or to stdout. */
static int write_output(const char *path, const void *data, size_t len)
{
    if (!path || strcmp(path, "-") == 0) {
        fwrite(data, 1, len, stdout);
        return 0;
    }
    orr_error e = {0};
    if (orr_outfile_write(path, data, len, 0, &e)) {
        fprintf(stderr, "orrery: %s\n", e.msg);
        orr_error_clear(&e);
        return 1;
    }
    return 0;
}

/* Checks, before anything is compiled, that -o FILE can be written: not a
 * directory, in a directory that exists.  Returns 0, or 1 after saying why. */
static int check_output(const char *path)
{
    if (!path || strcmp(path, "-") == 0)
        return 0;
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "orrery: compile: cannot write %s: it is a directory\n", path);
        return 1;
    }
    const char *slash = strrchr(path, '/');
    /* the directory as written, however long: "/k.ptx" lives in "/" */
    char *dir = !slash ? strdup(".") : strndup(path, (size_t)(slash - path) + (slash == path));
    int rc = 0;
    if (!dir) {
        fprintf(stderr, "orrery: compile: out of memory\n");
        rc = 1;
    } else if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "orrery: compile: cannot write %s: no directory %s\n", path, dir);
        rc = 1;
    } else if (access(dir, W_OK) != 0) {
        fprintf(stderr, "orrery: compile: cannot write %s: directory %s is not writable\n", path,
                dir);
        rc = 1;
    }
    free(dir);
    return rc;
}

/* --arch: sm_XY or compute_XY (an optional a or f suffix: sm_90a) that this
 * NVRTC supports, when it can list them (without NVRTC only the form is
 * checked; compiling then says what is missing).  Returns 0 or a usage exit
 * code. */
static int check_arch(const char *arch)
{
    const char *num = strncmp(arch, "sm_", 3) == 0        ? arch + 3
                      : strncmp(arch, "compute_", 8) == 0 ? arch + 8
                                                          : NULL;
    size_t digits = num ? strspn(num, "0123456789") : 0;
    if (!num || digits < 2 || digits > 4 ||
        (num[digits] && ((num[digits] != 'a' && num[digits] != 'f') || num[digits + 1])))
        return orr_cli_usage_error("compile: --arch expects sm_XY or compute_XY (e.g. sm_90), "
                                   "got '%s'", arch);
    int archs[128], n = 0, major = 0, minor = 0, want = atoi(num);
    orr_error e = {0};
    if (orr_rtc_supported_archs(archs, 128, &n, &e) || orr_rtc_version(&major, &minor, &e)) {
        orr_error_clear(&e);
        return 0;
    }
    char list[1024] = "";
    size_t used = 0;
    for (int k = 0; k < n; k++) {
        if (archs[k] == want)
            return 0;
        if (used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%ssm_%d", k ? ", " : "",
                                     archs[k]);
    }
    return orr_cli_usage_error("compile: --arch %s is not supported by NVRTC %d.%d (it supports "
                               "%s)", arch, major, minor, list);
}

/* The GPU-only kernel option that arg is ("--unroll" for "--unroll=8"),
 * or NULL: the CPU backend has no unroll, threads per body, bodies per
 * thread, prefetch, ftz, double rsqrt refinement or j-ranges. */
static const char *gpu_only_option(const char *arg)
{
    static const char *const names[] = {"--unroll", "--split",  "--ipt",   "--prefetch",
                                        "--ftz",    "--newton", "--ranges"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        size_t len = strlen(names[k]);
        if (strncmp(arg, names[k], len) == 0 && (arg[len] == '\0' || arg[len] == '='))
            return names[k];
    }
    return NULL;
}

static int gpu_only_error(const char *cmd, const char *opt)
{
    return orr_cli_usage_error("%s: %s applies to the GPU kernels only; the CPU backend takes "
                               "--block (its j-tile) and --threads", cmd, opt);
}

static int cmd_compile(args_t *a)
{
    orr_kspec spec;
    orr_kspec_default(&spec, ORR_TARGET_GPU);
    const char *arch = NULL, *emit = "source", *out = NULL, *target = "gpu", *v, *gpu_only = NULL;
    int bad = 0, set_block = 0;
    for (a->pos = 2; a->pos < a->argc && !bad; a->pos++) {
        const char *arg = a->argv[a->pos];
        if (spec_option(a, &spec, &set_block, &bad)) {
            if (!gpu_only)
                gpu_only = gpu_only_option(arg);
            continue;
        }
        if (opt_value(a, "--arch", &v, &bad))
            arch = v;
        else if (opt_value(a, "--emit", &v, &bad))
            emit = v;
        else if (opt_value(a, "--target", &v, &bad))
            target = v;
        else if (opt_value(a, "-o", &v, &bad))
            out = v;
        else
            bad = orr_cli_usage_error("compile: unknown option '%s'", a->argv[a->pos]);
    }
    if (bad)
        return bad;
    orr_target t;
    if (strcmp(target, "gpu") == 0)
        t = ORR_TARGET_GPU;
    else if (strcmp(target, "cpu") == 0)
        t = ORR_TARGET_CPU;
    else
        return orr_cli_usage_error("compile: --target expects gpu or cpu, got '%s'", target);
    if (t == ORR_TARGET_CPU && gpu_only)
        return gpu_only_error("compile --target cpu", gpu_only);
    if (t == ORR_TARGET_CPU && !set_block)
        spec.launch.block = 1024;
    int is_src = strcmp(emit, "source") == 0;
    if (t == ORR_TARGET_GPU && !is_src && strcmp(emit, "ptx") && strcmp(emit, "cubin"))
        return orr_cli_usage_error("compile: --emit expects source, ptx or cubin, got '%s'", emit);
    if (t == ORR_TARGET_CPU && !is_src && strcmp(emit, "so"))
        return orr_cli_usage_error("compile: --emit expects source or so for --target cpu, got "
                                   "'%s'", emit);
    if (arch && (bad = check_arch(arch)))
        return bad;
    if (strcmp(emit, "cubin") == 0 && !out && isatty(1))
        return orr_cli_usage_error("compile: --emit cubin writes binary; give -o FILE");

    orr_error e = {0};
    if (orr_kspec_validate(&spec, t, &e))
        return orr_cli_usage_error("compile: %s", e.msg);
    if (check_output(out))
        return 1;
    orr_compiled c;
    if (orr_engine_compile(&spec, t, emit, arch, &c, &e))
        return report(&e);
    int rc = write_output(out, c.data, c.len);
    if (!rc && !is_src && t == ORR_TARGET_CPU)
        fprintf(stderr, "orrery: compiled CPU kernel (%zu bytes) in %.2f s\n", c.len, c.seconds);
    else if (!rc && !is_src)
        fprintf(stderr, "orrery: compiled %s for %s in %.2f s; kernels: %s\n", emit, c.arch,
                c.seconds, c.kernels);
    orr_compiled_free(&c);
    orr_error_clear(&e);
    return rc;
}

/* ---- bench --------------------------------------------------------------- */

/* Parses a comma-separated LIST of opt (--n, --active) into out; with
 * all_ok, the word `all` is 0 (every body).  Returns a usage exit code, or 0. */
static int parse_list(const char *cmd, const char *opt, const char *s, int all_ok, long *out,
                      int max, int *count)
{
    *count = 0;
    char buf[1024];
    if (snprintf(buf, sizeof buf, "%s", s) >= (int)sizeof buf)
        return orr_cli_usage_error("%s: %s: the list is longer than %zu characters", cmd, opt,
                                   sizeof buf - 1);
    const size_t len = strlen(buf);
    if (len && (buf[0] == ',' || buf[len - 1] == ',' || strstr(buf, ",,")))
        return orr_cli_usage_error("%s: %s has an empty item in '%s'", cmd, opt, s);
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (*count >= max)
            return orr_cli_usage_error("%s: %s takes at most %d values", cmd, opt, max);
        if (all_ok && strcmp(w, "all") == 0)
            out[(*count)++] = 0;
        else if (parse_int(cmd, opt, w, 1, 1L << 30, &out[(*count)++]))
            return 2;
    }
    if (*count == 0)
        return orr_cli_usage_error("%s: %s needs at least one %s", cmd, opt,
                                   all_ok ? "count of bodies (or all)" : "body count");
    return 0;
}

/* "  note: LINE" for each line of a note (util.h: one entry per line) not
 * printed before by this process (a read-only cache directory is said
 * once, not for every body count), told by 64-bit FNV-1a hashes of the
 * lines (a full table prints every later line: none is dropped wrongly). */
static void print_note_lines(FILE *f, const char *note)
{
    static orr_seen_lines seen;
    while (*note) {
        size_t len = strcspn(note, "\n");
        if (orr_line_is_new(&seen, note, len))
            fprintf(f, "  note: %.*s\n", (int)len, note);
        note += len + (note[len] == '\n');
    }
}

static void print_build(FILE *info, const orr_bench_row *r)
{
    const orr_build_info *b = &r->build;
    if (b->cached)
        fprintf(info, "  kernels for %s: from cache (key %.12s), loaded in %.1f ms\n", b->target,
                b->key, b->load_s * 1e3);
    else
        fprintf(info, "  kernels for %s: compiled in %.2f s (key %.12s), loaded in %.1f ms\n",
                b->target, b->compile_s, b->key, b->load_s * 1e3);
    print_note_lines(info, b->note);
}

/* Options shared by bench and tune: kernel spec, backend, body counts. */
typedef struct {
    orr_kspec spec;
    orr_backend_kind kind;
    long ns[ORR_CLI_MAX_N];
    int nn, set_block;
    const char *gpu_only;   /* the first GPU-only kernel option given, or NULL */
} run_opts;

static void run_opts_init(run_opts *r)
{
    memset(r, 0, sizeof *r);
    orr_kspec_default(&r->spec, ORR_TARGET_GPU);
    r->kind = ORR_BACKEND_AUTO;
}

/* Returns 1 when the current argument was a shared option. */
static int run_option(args_t *a, run_opts *r, int *bad)
{
    const char *v, *arg = a->argv[a->pos];
    orr_error e = {0};
    if (spec_option(a, &r->spec, &r->set_block, bad)) {
        if (!r->gpu_only)
            r->gpu_only = gpu_only_option(arg);
        return 1;
    }
    if (opt_value(a, "--backend", &v, bad)) {
        if (!*bad && orr_backend_parse(v, &r->kind, &e))
            *bad = orr_cli_usage_error("%s: %s", a->cmd, e.msg);
        return 1;
    }
    if (opt_value(a, "--n", &v, bad)) {
        if (!*bad)
            *bad = parse_list(a->cmd, "--n", v, 0, r->ns, ORR_CLI_MAX_N, &r->nn);
        return 1;
    }
    return 0;
}

/* Resolves the auto backend (saying so when it falls back to the CPU), the
 * backend's default tile and body counts, and validates the spec (GPU-only
 * options on the CPU are usage errors).  Returns a usage exit code, or 0. */
static int resolve_run(const char *cmd, run_opts *r)
{
    orr_error e = {0};
    if (r->kind == ORR_BACKEND_AUTO) {
        if (orr_cuda_usable(0, &e) == ORR_OK) {
            r->kind = ORR_BACKEND_CUDA;
        } else {
            fprintf(stderr, "orrery: no usable GPU (%s); using the CPU backend\n", e.msg);
            r->kind = ORR_BACKEND_CPU;
        }
        orr_error_clear(&e);
    }
    orr_target t = r->kind == ORR_BACKEND_CUDA ? ORR_TARGET_GPU : ORR_TARGET_CPU;
    if (t == ORR_TARGET_CPU && r->gpu_only)
        return gpu_only_error(cmd, r->gpu_only);
    if (t == ORR_TARGET_CPU) {
        /* the CPU's defaults, also for the GPU-only fields it does not use */
        orr_kspec d;
        orr_kspec_default(&d, ORR_TARGET_CPU);
        if (!r->set_block)
            r->spec.launch.block = d.launch.block;
        r->spec.launch.unroll = d.launch.unroll;
        r->spec.launch.split = d.launch.split;
        r->spec.launch.ipt = d.launch.ipt;
        r->spec.launch.prefetch = d.launch.prefetch;
    }
    if (orr_kspec_validate(&r->spec, t, &e))
        return orr_cli_usage_error("%s: %s", cmd, e.msg);
    if (r->nn == 0) {
        static const long gpu_ns[] = {16384, 65536, 262144}, cpu_ns[] = {1024, 4096, 16384};
        for (int k = 0; k < 3; k++)
            r->ns[r->nn++] = t == ORR_TARGET_GPU ? gpu_ns[k] : cpu_ns[k];
    }
    return 0;
}

/* Why the reference variant (kernels_src/reference_cpu.c: float, built-in
 * gravity) cannot run spec, or NULL when it can. */
static const char *reference_unfit(const orr_kspec *s)
{
    if (s->phys.precision != ORR_FLOAT)
        return "double precision";
    if (strcmp(s->phys.force, "gravity") != 0 || s->phys.law)
        return "another force law";
    return NULL;
}

/* bench's options, and the variants they resolve to. */
typedef struct {
    run_opts run;              /* backend, kernel spec, body counts */
    long steps;                /* --steps: timed steps per row; 0: about 0.25 s worth */
    const char *variant_arg;   /* --variant as given (tiled) */
    int csv, tune;             /* --csv, --tune */
    int hermite;               /* --integrator hermite: block steps (orr_bench_hermite) */
    long active[ORR_CLI_MAX_N];   /* --active: bodies per block (none, or 0 for all: N) */
    int nactive;
    int run_mode;              /* --run T: a real run of block steps (orr_bench_hermite_run) */
    const char *run_arg;       /* T as given */
    orr_bench_hrun_config hrun;   /* --run's model and settings (--eta, --dt-max, --seed) */
    const char *run_only;      /* the first of --eta, --dt-max, --seed given, or NULL */
    const char *launch_opt;    /* the first kernel launch option given but --threads, or NULL */
    int set_precision, set_softening, set_variant;
    orr_variant variants[2];   /* what runs, in order (bench_resolve) */
    int nv;
    FILE *info;                /* notes: stdout, or stderr under --csv (machine-readable rows) */
} bench_opts;

/* Parses bench's arguments into b.  Returns a usage exit code, or 0. */
static int bench_parse(args_t *a, bench_opts *b)
{
    const char *v;
    int bad = 0;
    memset(b, 0, sizeof *b);
    run_opts_init(&b->run);
    orr_bench_hrun_default(&b->hrun);
    b->variant_arg = "tiled";
    for (a->pos = 2; a->pos < a->argc && !bad; a->pos++) {
        const char *arg = a->argv[a->pos];
        if (run_option(a, &b->run, &bad)) {
            static const char *const launch[] = {"--block", "--unroll", "--split", "--ipt",
                                                 "--prefetch", "--ftz", "--newton", "--ranges"};
            for (size_t k = 0; k < sizeof launch / sizeof launch[0] && !b->launch_opt; k++)
                if (is_option(arg, launch[k]))
                    b->launch_opt = launch[k];
            b->set_precision |= is_option(arg, "--precision");
            b->set_softening |= is_option(arg, "--softening");
            continue;
        }
        if (opt_value(a, "--steps", &v, &bad)) {
            if (!bad)
                bad = parse_int("bench", "--steps", v, 1, 1000000, &b->steps);
        } else if (opt_value(a, "--variant", &v, &bad)) {
            b->variant_arg = v;
            b->set_variant = 1;
        } else if (strcmp(a->argv[a->pos], "--csv") == 0) {
            b->csv = 1;
        } else if (strcmp(a->argv[a->pos], "--tune") == 0) {
            b->tune = 1;
        } else if (opt_value(a, "--integrator", &v, &bad)) {
            if (!bad && strcmp(v, "hermite") != 0)
                bad = orr_cli_usage_error("bench: --integrator takes hermite (block steps; the "
                                          "fixed-step integrators time the force pass)");
            b->hermite = 1;
        } else if (opt_value(a, "--active", &v, &bad)) {
            if (!bad)
                bad = parse_list("bench", "--active", v, 1, b->active, ORR_CLI_MAX_N, &b->nactive);
        } else if (opt_value(a, "--run", &v, &bad)) {
            if (!bad && !(bad = parse_double("bench", "--run", v, &b->hrun.T)) && !(b->hrun.T > 0))
                bad = orr_cli_usage_error("bench: --run expects a positive time (T time units, "
                                          "a multiple of --dt-max), got '%s'", v);
            b->run_mode = 1;
            b->run_arg = v;
        } else if (opt_value(a, "--eta", &v, &bad)) {
            if (!bad && !(bad = parse_double("bench", "--eta", v, &b->hrun.eta)) &&
                !(b->hrun.eta > 0))
                bad = orr_cli_usage_error("bench: --eta expects a positive number, got '%s'", v);
            else if (!bad && b->hrun.eta > 1)   /* as orrery.simulation{} takes it */
                bad = orr_cli_usage_error("bench: --eta expects a number in (0, 1], got '%s'", v);
            b->run_only = b->run_only ? b->run_only : "--eta";
        } else if (opt_value(a, "--dt-max", &v, &bad)) {
            if (!bad && !(bad = parse_double("bench", "--dt-max", v, &b->hrun.dt_max)) &&
                !(b->hrun.dt_max > 0))
                bad = orr_cli_usage_error("bench: --dt-max expects a positive number, got '%s'",
                                          v);
            b->run_only = b->run_only ? b->run_only : "--dt-max";
        } else if (opt_value(a, "--seed", &v, &bad)) {
            long seed = 0;
            if (!bad && !(bad = parse_int("bench", "--seed", v, 0, LONG_MAX, &seed)))
                b->hrun.seed = (uint64_t)seed;
            b->run_only = b->run_only ? b->run_only : "--seed";
        } else {
            bad = orr_cli_usage_error("bench: unknown option '%s'", a->argv[a->pos]);
        }
    }
    if (!bad && b->nactive && !b->hermite)
        bad = orr_cli_usage_error("bench: --active is for --integrator hermite (the bodies of "
                                  "one block step)");
    if (!bad && b->run_mode && !b->hermite)
        bad = orr_cli_usage_error("bench: --run is for --integrator hermite (a real run of "
                                  "Hermite block steps)");
    if (!bad && b->run_only && !b->run_mode)
        bad = orr_cli_usage_error("bench: %s is for --integrator hermite --run T (a real run "
                                  "of block steps)", b->run_only);
    if (!bad && b->run_mode && b->nactive)
        bad = orr_cli_usage_error("bench: --run times a whole run, whose blocks have the active "
                                  "bodies the run gives them; --active (one block step) does not "
                                  "go with it");
    if (!bad && b->run_mode && b->launch_opt)
        bad = orr_cli_usage_error("bench: --run times the kernels a run uses (on the GPU the "
                                  "force + jerk launches tuned per N); %s is not taken with it "
                                  "(--force, --softening, --G and --threads are)", b->launch_opt);
    if (!bad && b->hermite && b->set_variant)
        bad = orr_cli_usage_error("bench: --variant is for the force pass (tiled, naive, "
                                  "reference, both), not --integrator hermite (block steps)");
    if (!bad && b->run_mode && b->hrun.dt_max < ORR_BLOCK_MIN_STEP)
        bad = orr_cli_usage_error("bench: --dt-max %g is too short for block steps: at least "
                                  "%.3g", b->hrun.dt_max, ORR_BLOCK_MIN_STEP);
    if (!bad && b->run_mode && !orr_bench_hermite_intervals(b->hrun.T, b->hrun.dt_max)) {
        const double k = b->hrun.T / b->hrun.dt_max;
        if (k < 1)
            bad = orr_cli_usage_error("bench: --run %s is shorter than --dt-max %g (T / dt_max "
                                      "whole intervals are timed, one at least)", b->run_arg,
                                      b->hrun.dt_max);
        else if (!(k <= 1e12))
            bad = orr_cli_usage_error("bench: --run %s over --dt-max %g is %.3g intervals: at "
                                      "most 1e12 are timed", b->run_arg, b->hrun.dt_max, k);
        else
            bad = orr_cli_usage_error("bench: --run %s is not a multiple of --dt-max %g (T / "
                                      "dt_max whole intervals are timed)", b->run_arg,
                                      b->hrun.dt_max);
    }
    if (!bad && b->run_mode && !b->set_precision)   /* as scripts/cluster_hermite.lua */
        b->run.spec.phys.precision = ORR_DOUBLE;
    b->info = b->csv ? stderr : stdout;
    return bad;
}

/* Resolves --variant, the backend (resolve_run) and the variants to run:
 * both is the tiled kernel and its baseline, the naive kernel on the GPU and
 * the -ffast-math reference loop on the CPU.  Returns a usage exit code, or
 * 0. */
static int bench_resolve(bench_opts *b)
{
    run_opts *r = &b->run;
    /* the variant before the backend: a bad one is reported before any
     * notice about falling back to the CPU */
    int both = strcmp(b->variant_arg, "both") == 0, bad;
    orr_variant one = ORR_VARIANT_TILED;
    if (!both && orr_variant_parse(b->variant_arg, &one, NULL))
        return orr_cli_usage_error("bench: invalid variant '%s' (expected tiled, naive, reference "
                                   "or both)", b->variant_arg);
    const char *unfit = reference_unfit(&r->spec);
    if (!both && one == ORR_VARIANT_REFERENCE) {
        if (r->kind == ORR_BACKEND_CUDA)
            return orr_cli_usage_error("bench: the reference variant is a CPU loop; use --backend "
                                       "cpu");
        if (unfit)
            return orr_cli_usage_error("bench: the reference variant is the float gravity loop "
                                       "of the CPU; it cannot run %s", unfit);
        r->kind = ORR_BACKEND_CPU;   /* under auto too: it runs nowhere else */
    }
    if ((bad = resolve_run("bench", r)))
        return bad;
    if (!both && one == ORR_VARIANT_NAIVE && r->kind == ORR_BACKEND_CPU)
        return orr_cli_usage_error("bench: the naive variant is GPU only; on the CPU use "
                                   "--variant reference or both");
    if (both && r->kind == ORR_BACKEND_CPU && unfit)
        return orr_cli_usage_error("bench: --variant both on the CPU adds the float gravity "
                                   "reference loop, which cannot run %s; use --variant tiled",
                                   unfit);
    b->nv = 0;
    if (both) {
        b->variants[b->nv++] = ORR_VARIANT_TILED;
        b->variants[b->nv++] =
            r->kind == ORR_BACKEND_CUDA ? ORR_VARIANT_NAIVE : ORR_VARIANT_REFERENCE;
    } else {
        b->variants[b->nv++] = one;
    }
    return 0;
}

/* The lines above the table: the device (GPU, or CPU and its threads),
 * precision and law.  Returns 0, or 1 after reporting why the device cannot
 * be used. */
static int bench_describe(const bench_opts *b)
{
    const orr_kspec *spec = &b->run.spec;
    orr_error e = {0};
    if (b->run.kind == ORR_BACKEND_CUDA) {
        orr_gpu_info g;
        char arch[16];
        if (orr_cuda_usable(0, &e) || orr_cuda_device_info(0, &g, &e))
            return report(&e);
        orr_cuda_arch_name(&g, arch, sizeof arch);
        fprintf(b->info, "orrery bench: cuda on %s (%s, %d SMs), %s\n", g.name, arch, g.sm_count,
                orr_precision_name(spec->phys.precision));
    } else {
        const char *cc, *cpu;
        if (orr_hostcc_identity(&cc, &cpu, &e))
            return report(&e);
        fprintf(b->info, "orrery bench: cpu on %s, %ld threads, %s\n", cpu,
                sysconf(_SC_NPROCESSORS_ONLN), orr_precision_name(spec->phys.precision));
    }
    if (b->run_mode) {
        char soft[32] = "4/N";
        if (b->set_softening)
            snprintf(soft, sizeof soft, "%g", spec->phys.softening);
        const long k = orr_bench_hermite_intervals(b->hrun.T, b->hrun.dt_max);
        fprintf(b->info, "  law %s, softening %s, G %g; Plummer sphere (seed %llu); Hermite block "
                "steps, eta %g, dt_max %g: one interval untimed, then T = %g timed (%ld "
                "interval%s)\n", spec->phys.force, soft, spec->phys.G,
                (unsigned long long)b->hrun.seed, b->hrun.eta, b->hrun.dt_max, b->hrun.T, k,
                k == 1 ? "" : "s");
        return 0;
    }
    fprintf(b->info, "  law %s, softening %g, G %g; Plummer sphere; error vs CPU double on up to "
            "512 bodies\n", spec->phys.force, spec->phys.softening, spec->phys.G);
    return 0;
}

/* The table's header, or the CSV header row. */
static void print_header(int csv)
{
    if (csv)
        printf("n,backend,precision,variant,block,unroll,split,ms_per_step,interactions_per_s,"
               "gflops,max_rel_err,ipt,prefetch,ranges\n");
    else
        printf("%9s %-7s %5s %6s %5s %3s %2s %6s %10s %10s %10s %14s %10s %11s\n", "N",
               "variant", "block", "unroll", "split", "ipt", "pf", "ranges", "ms/step",
               "force ms", "steps/s",
               "interactions/s", "GFLOP/s", "max rel err");
    fflush(stdout);
}

/* Runs variant v for n bodies into *row; under --tune the tiled variant
 * runs the stored configuration for n (tuning first where there is none).
 * Returns 0, or 1 after reporting. */
static int bench_one(const bench_opts *b, orr_variant v, long n, orr_bench_row *row)
{
    orr_error e = {0};
    orr_kspec spec = b->run.spec;
    if (b->tune && v == ORR_VARIANT_TILED) {
        orr_tune_result tr;
        if (orr_tune(b->run.kind, &b->run.spec, n, NULL, &tr, &e)) {
            orr_error_context(&e, "tuning for N=%ld", n);
            report(&e);
            orr_error_clear(&e);
            return 1;
        }
        spec = tr.best;
        char flat[sizeof tr.note + 64];
        fprintf(b->info, "  N=%ld: %s configuration (%d candidates tried now)%s%s\n", n,
                tr.source, tr.ntrials, tr.note[0] ? "; " : "",
                orr_note_flat(tr.note, flat, sizeof flat));
    }
    if (orr_bench_run(b->run.kind, &spec, v, n, (int)b->steps, row, NULL, 0, &e)) {
        orr_error_context(&e, "bench N=%ld %s", n, orr_variant_name(v));
        report(&e);
        orr_error_clear(&e);
        return 1;
    }
    return 0;
}

/* One row of the table, or of the CSV. */
static void print_row(const orr_bench_row *row, int csv)
{
    const orr_launch *l = &row->spec.launch;
    if (csv)
        printf("%ld,%s,%s,%s,%d,%d,%d,%.6g,%.6g,%.6g,%.3g,%d,%d,%d\n", row->n, row->backend,
               orr_precision_name(row->spec.phys.precision), orr_variant_name(row->variant),
               l->block, l->unroll, l->split, row->ms_per_step, row->interactions_per_s,
               row->gflops, row->max_rel_err, l->ipt, l->prefetch, l->ranges);
    else
        printf("%9ld %-7s %5d %6d %5d %3d %2d %6d %10.4f %10.4f %10.1f %14.3e %10.1f %11.2e\n",
               row->n, orr_variant_name(row->variant), l->block, l->unroll, l->split, l->ipt,
               l->prefetch, l->ranges,
               row->ms_per_step, row->ms_force, 1e3 / row->ms_per_step, row->interactions_per_s,
               row->gflops, row->max_rel_err);
}

/* Returns 1 after saying so when the row's accuracy check met non-finite
 * accelerations, else 0. */
static int check_finite(const orr_bench_row *row)
{
    if (isfinite(row->max_rel_err))
        return 0;
    fflush(stdout);
    fprintf(stderr, "orrery: bench N=%ld %s: max rel err is %g: non-finite accelerations in %s "
            "(overflow or NaN; G %g, softening %g)\n", row->n, orr_variant_name(row->variant),
            row->max_rel_err, orr_precision_name(row->spec.phys.precision), row->spec.phys.G,
            row->spec.phys.softening);
    return 1;
}

/* This rank's GPU: its local rank modulo the visible devices (0 on the CPU
 * or with one rank). */
static int rank_device(orr_comm *c, orr_backend_kind kind)
{
    return kind == ORR_BACKEND_CUDA ? orr_dist_device(c) : 0;
}

/* An error on one rank of several: said with the rank, then every rank
 * ends (none may wait in a collective for this one).  An error every rank
 * holds (e->shared: a collective found it) is said once, by rank 0, and
 * every rank ends on its own. */
static int rank_failed(orr_comm *c, orr_error *e)
{
    fflush(stdout);
    if (e->shared) {
        if (orr_comm_rank(c) == 0)
            return report(e);
        orr_error_clear(e);
        return 1;
    }
    fprintf(stderr, "orrery: rank %d of %d (%s): %s\n", orr_comm_rank(c), orr_comm_size(c),
            orr_comm_host(c), e->msg);
    fflush(stderr);
    orr_comm_abort(c, 1);
    return 1;
}

/* bench --tune over ranks: the configuration one GPU runs n with (rank 0
 * tunes it, or finds it stored), then each rank's for its slice, tuned as a
 * simulation tunes it (orr_dist_tune); rank 0 says where both came from. */
static orr_status ranks_tuning(const bench_opts *b, orr_comm *c, long n, int device,
                               orr_kspec *single, orr_kspec *sliced, orr_error *err)
{
    const int rank0 = orr_comm_rank(c) == 0, ranks = orr_comm_size(c);
    orr_tune_options o;
    orr_tune_options_default(&o);
    o.device = device;
    orr_tune_result r1, rs;
    orr_status st = rank0 ? orr_tune(b->run.kind, &b->run.spec, n, &o, &r1, err) : ORR_OK;
    st = orr_comm_all_ok(c, st, err, "tune the one-rank configuration");
    if (!st)
        st = orr_dist_tune(c, b->run.kind, &b->run.spec, n, o, &rs, err);
    char notes[2048];   /* what every group's tuning said */
    if (!st)
        st = orr_dist_notes(c, rs.note, notes, sizeof notes, err);
    if (st)
        return st;
    *single = *sliced = b->run.spec;
    single->launch = rank0 ? r1.best.launch : b->run.spec.launch;
    sliced->launch = rs.best.launch;
    if (rank0) {
        char l1[160], ls[160], flat[sizeof notes + 64];
        orr_launch_describe(&single->launch, l1, sizeof l1);
        orr_launch_describe(&sliced->launch, ls, sizeof ls);
        fprintf(b->info, "  N=%ld: one rank: %s configuration (%s)%s%s\n", n, r1.source, l1,
                r1.note[0] ? "; " : "", orr_note_flat(r1.note, flat, sizeof flat));
        fprintf(b->info, "  N=%ld: each of %d ranks, its slice against all N: %s configuration "
                "(%s)%s%s\n", n, ranks, rs.source, ls, notes[0] ? "; " : "",
                orr_note_flat(notes, flat, sizeof flat));
    }
    return ORR_OK;
}

/* bench under mpirun with several ranks: the tiled kernels, each rank its
 * slice on its device (orr_bench_run_dist); rank 0 prints the rows with
 * the communication and the efficiency against one rank measured first.
 * Under --tune one rank runs the one-GPU tuning and the ranks their
 * slice's (ranks_tuning). */
static int bench_ranks(bench_opts *b, orr_comm *c)
{
    if (b->nv != 1 || b->variants[0] != ORR_VARIANT_TILED)
        return orr_cli_usage_error("bench: over several ranks only the tiled variant runs");
    if (b->hermite)   /* never time something other than what was asked; said once */
        return orr_comm_rank(c) ? 2
                                : orr_cli_usage_error("bench: --integrator hermite times block "
                                                      "steps on one rank only; over several "
                                                      "ranks a real run is timed with --run T "
                                                      "(or run it without mpirun)");
    const int rank0 = orr_comm_rank(c) == 0, ranks = orr_comm_size(c);
    const int device = rank_device(c, b->run.kind);
    orr_error ae = {0};   /* each rank resolved its backend: agreed before any rank acts on it */
    if (orr_comm_same(c, orr_backend_name(b->run.kind), "the backend",
                      "--backend auto takes the GPU where a rank's host has a usable one: make "
                      "every host's GPU usable, or name the backend", &ae))
        return rank_failed(c, &ae);
    if (rank0 && b->csv)
        printf("n,backend,precision,variant,block,unroll,split,ms_per_step,interactions_per_s,"
               "gflops,max_rel_err,ranks,ms_force,ms_comm,comm_share,"
               "single_rank_interactions_per_s,efficiency,ms_per_step_no_overlap,"
               "comm_share_no_overlap,ms_per_step_overlap,comm_share_overlap,overlap,ranges,"
               "single_block,single_unroll,single_split,single_ranges,ipt,prefetch,single_ipt,"
               "single_prefetch\n");
    else if (rank0)
        printf("%9s %5s %5s %6s %5s %6s %10s %10s %9s %7s %14s %14s %10s %12s %7s %12s %7s\n",
               "N", "ranks", "block", "unroll", "split", "ranges", "ms/step", "force ms",
               "comm ms", "comm %", "interactions/s", "one rank", "efficiency", "overlapped",
               "comm %", "exch. first", "comm %");
    for (int k = 0; k < b->run.nn; k++) {
        const long n = b->run.ns[k];
        orr_bench_row row;
        static orr_bench_dist d;
        orr_error e = {0};
        orr_kspec single = b->run.spec, sliced = b->run.spec;
        if ((b->tune && ranks_tuning(b, c, n, device, &single, &sliced, &e)) ||
            orr_bench_run_dist(c, b->run.kind, &sliced, b->tune ? &single : NULL, n, device,
                               (int)b->steps, &row, &d, &e)) {
            orr_error_context(&e, "bench N=%ld over %d ranks", n, ranks);
            return rank_failed(c, &e);
        }
        if (!rank0)
            continue;
        if (k == 0)
            fprintf(b->info, "  %s\n", d.exchange);
        const orr_launch *l = &row.spec.launch, *l1 = b->tune ? &single.launch : l;
        const int r1 = b->tune ? d.single_ranges : l->ranges;
        if (b->csv)
            printf("%ld,%s,%s,tiled,%d,%d,%d,%.6g,%.6g,%.6g,-1,%d,%.6g,%.6g,%.4g,%.6g,%.4g,%.6g,"
                   "%.4g,%.6g,%.4g,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d\n",
                   row.n, row.backend, orr_precision_name(row.spec.phys.precision), l->block,
                   l->unroll, l->split, row.ms_per_step, row.interactions_per_s, row.gflops,
                   ranks, row.ms_force, d.ms_comm, d.comm_share, d.single_interactions_per_s,
                   d.efficiency, d.plain_ms, d.plain_comm_share, d.overlap_ms,
                   d.overlap_comm_share, d.overlap, l->ranges, l1->block, l1->unroll, l1->split,
                   r1, l->ipt, l->prefetch, l1->ipt, l1->prefetch);
        else
            printf("%9ld %5d %5d %6d %5d %6d %10.4f %10.4f %9.4f %6.1f%% %14.3e %14.3e %9.1f%% "
                   "%12.4f %6.1f%% %12.4f %6.1f%%\n",
                   row.n, ranks, l->block, l->unroll, l->split, l->ranges, row.ms_per_step,
                   row.ms_force, d.ms_comm, 100 * d.comm_share, row.interactions_per_s,
                   d.single_interactions_per_s, 100 * d.efficiency, d.overlap_ms,
                   100 * d.overlap_comm_share, d.plain_ms, 100 * d.plain_comm_share);
        if (k == 0 && !b->csv)
            fprintf(b->info, "  ms/step: a step as runs take it, the exchange %s; comm ms: the "
                    "part of it the force does not hide (ms/step - force ms); one rank: rank 0 "
                    "alone on all N%s; overlapped / exch. first: the step both ways\n",
                    d.overlap ? "overlapped with the force"
                              : "first, then the force (ORRERY_OVERLAP=on overlaps them)",
                    b->tune ? ", its own tuning" : "");
        for (int r = 0; r < ranks && !b->csv; r++)
            fprintf(b->info, "  N=%ld rank %d: force, kick, drift alone %.4f ms; exchange alone "
                    "%.4f ms\n", row.n, r, d.rank_force_ms[r], d.rank_comm_ms[r]);
        fflush(stdout);
    }
    return 0;
}

/* The Hermite tuner's choice for n, a line per bucket of active bodies. */
static void print_hermite_choice(const orr_htune_result *h, long n)
{
    char flat[sizeof h->note + 64];
    printf("# force + jerk launches for N=%ld (%s, %.2f s; %d tried, %d rejected)%s%s\n", n,
           h->source, h->elapsed_s, h->ntrials, h->nfailed, h->note[0] ? ": " : "",
           orr_note_flat(h->note, flat, sizeof flat));
    for (int k = 0; k < h->nbuckets; k++) {
        char ms[32] = "-";
        if (h->ms[k] >= 0)
            snprintf(ms, sizeof ms, "%.4g ms", h->ms[k]);
        printf("#   <=%-9ld active: tile %3d, %2d blocks per SM (%s, %s)\n", h->active[k],
               h->launch[k].tile, h->launch[k].per_sm, h->from[k], ms);
    }
    fflush(stdout);
}

/* bench --integrator hermite: one block step of --active bodies (all by
 * default) against all N, the best of a few; 60 flops per interaction as
 * phi-GPU, NBODY6++GPU and Sapporo count them. */
static int bench_hermite(const bench_opts *b)
{
    const int csv = b->csv;
    if (csv)
        printf("n,backend,precision,active,ms_per_block,interactions_per_s,gflops\n");
    else
        printf("%9s %9s %8s %12s %14s %10s\n", "N", "active", "precision", "ms/block",
               "interactions/s", "GFLOP/s");
    int rc = 0;
    for (int k = 0; k < b->run.nn; k++) {
        const long n = b->run.ns[k];
        const int na = b->nactive ? b->nactive : 1;
        /* --tune on the GPU: the force + jerk launches tuned (or stored) for n */
        orr_htune_result h;
        const int tuned = b->tune && b->run.kind == ORR_BACKEND_CUDA;
        orr_error he = {0};
        if (tuned && orr_htune(&b->run.spec, n, NULL, &h, &he)) {
            orr_error_context(&he, "bench --integrator hermite --tune N=%ld", n);
            rc = report(&he);
            orr_error_clear(&he);
            continue;
        }
        if (tuned && !csv)
            print_hermite_choice(&h, n);
        for (int j = 0; j < na; j++) {
            const long act = b->nactive && b->active[j] ? b->active[j] : n;
            if (act > n) {   /* said, never skipped in silence */
                fprintf(stderr, "orrery: bench: --active %ld is more than N = %ld: no row\n", act,
                        n);
                rc = 1;
                continue;
            }
            double ms = 0;
            orr_error e = {0};
            if (orr_bench_hermite(b->run.kind, &b->run.spec, n, act, tuned ? h.launch : NULL,
                                  b->steps > 0 ? (int)b->steps : 5, &ms, &e)) {
                orr_error_context(&e, "bench --integrator hermite N=%ld active %ld", n, act);
                const int every_row = e.code == ORR_ERR_ARG;   /* the law, not the row */
                report(&e);
                orr_error_clear(&e);
                rc = 1;
                if (every_row)
                    return rc;
                continue;
            }
            const double rate = (double)act * (double)n / (ms * 1e-3);
            if (csv)
                printf("%ld,%s,%s,%ld,%.6g,%.6g,%.6g\n", n, orr_backend_name(b->run.kind),
                       orr_precision_name(b->run.spec.phys.precision), act, ms, rate,
                       rate * 60e-9);
            else
                printf("%9ld %9ld %8s %12.4f %14.3e %10.1f\n", n, act,
                       orr_precision_name(b->run.spec.phys.precision), ms, rate, rate * 60e-9);
            fflush(stdout);
        }
    }
    return rc;
}

/* bench --integrator hermite --run T: a real run per N
 * (orr_bench_hermite_run), on one rank or over the ranks of c (size > 1:
 * rank 0 alone first, for the speedup); rank 0 prints.  The CSV's columns
 * (one rank): n, ranks, backend, precision, eta, softening, dt_max, T,
 * wall_s, s_per_time_unit, blocks, mean_active, interactions_per_s,
 * gflops, all_active_interactions_per_s, fraction, dE_over_E, launches;
 * over several ranks after them comm_s, comm_share, single_wall_s,
 * single_interactions_per_s, speedup, efficiency, rank_wall_s and
 * rank_comm_s (each rank's, in rank order, joined by ';'). */
static int bench_hermite_run(const bench_opts *b, orr_comm *c)
{
    const int ranks = c ? orr_comm_size(c) : 1, rank0 = !c || orr_comm_rank(c) == 0;
    const int device = c ? rank_device(c, b->run.kind) : 0, csv = b->csv;
    if (ranks > 1) {
        orr_error ae = {0};   /* each rank resolved its backend: agreed before any acts on it */
        if (orr_comm_same(c, orr_backend_name(b->run.kind), "the backend",
                          "--backend auto takes the GPU where a rank's host has a usable one: "
                          "make every host's GPU usable, or name the backend", &ae))
            return rank_failed(c, &ae);
    }
    orr_bench_hrun_config cfg = b->hrun;
    cfg.backend = b->run.kind;
    cfg.precision = b->run.spec.phys.precision;
    cfg.force = b->run.spec.phys.force;
    cfg.law = b->run.spec.phys.law;
    cfg.G = b->run.spec.phys.G;
    cfg.softening = b->set_softening ? b->run.spec.phys.softening : -1;
    cfg.threads = b->run.spec.launch.threads;
    cfg.reps = b->steps > 0 ? (int)b->steps : 3;
    if (rank0 && csv)
        printf("n,ranks,backend,precision,eta,softening,dt_max,T,wall_s,s_per_time_unit,blocks,"
               "mean_active,interactions_per_s,gflops,all_active_interactions_per_s,fraction,"
               "dE_over_E,launches%s\n", ranks > 1 ? ",comm_s,comm_share,single_wall_s,"
               "single_interactions_per_s,speedup,efficiency,rank_wall_s,rank_comm_s,split_min,"
               "split_blocks,split_active,gpu_comm_s" : "");
    else if (rank0)
        printf("%9s %5s %8s %7s %10s %12s %8s %10s %14s %14s %8s %9s%s\n", "N", "ranks",
               "precision", "T", "wall s", "s/time unit", "blocks", "active/blk",
               "interactions/s", "all active/s", "fraction", "|dE/E|",
               ranks > 1 ? "    comm s  comm %  one rank s  speedup efficiency" : "");
    fflush(stdout);
    int rc = 0;
    for (int k = 0; k < b->run.nn; k++) {
        const long n = b->run.ns[k];
        static orr_bench_hrun row;
        orr_error e = {0};
        if (orr_bench_hermite_run(c, &cfg, n, device, &row, &e)) {
            orr_error_context(&e, "bench --integrator hermite --run N=%ld", n);
            if (ranks > 1)
                return rank_failed(c, &e);
            const int every_row = e.code == ORR_ERR_ARG;   /* the law or settings, not N */
            rc = report(&e);
            if (every_row)
                return rc;
            continue;
        }
        if (!rank0)
            continue;
        if (row.tuned && !csv)
            print_hermite_choice(&row.hermite, n);
        print_note_lines(b->info, row.note);
        if (row.no_de)
            fprintf(b->info, "  N=%ld: |dE/E| not measured (nan): %s\n", n, row.no_de);
        const char *launches = row.tuned ? row.hermite.source : "-";
        const double gflops = row.interactions_per_s * 60e-9;
        if (csv) {
            printf("%ld,%d,%s,%s,%g,%.6g,%g,%g,%.6g,%.6g,%ld,%.6g,%.6g,%.6g,%.6g,%.4g,%.3g,%s", n,
                   row.ranks, row.backend, orr_precision_name(row.precision), row.eta,
                   row.softening, row.dt_max, row.T, row.wall_s, row.s_per_time_unit,
                   row.blocks, row.mean_active, row.interactions_per_s, gflops,
                   row.all_active_interactions_per_s, row.fraction, row.de_over_e, launches);
            if (ranks > 1) {
                printf(",%.6g,%.4g,%.6g,%.6g,%.4g,%.4g,", row.comm_s, row.comm_share,
                       row.single_wall_s, row.single_interactions_per_s, row.speedup,
                       row.efficiency);
                for (int r = 0; r < ranks; r++)
                    printf("%s%.6g", r ? ";" : "", row.rank_wall_s[r]);
                printf(",");
                for (int r = 0; r < ranks; r++)
                    printf("%s%.6g", r ? ";" : "", row.rank_comm_s[r]);
                printf(",%ld,%ld,%ld,%.6g", row.split_min, row.split_blocks, row.split_active,
                       row.gpu_comm_s);
            }
            printf("\n");
        } else {
            printf("%9ld %5d %8s %7g %10.4f %12.4f %8ld %10.1f %14.3e %14.3e %7.1f%% %9.2e", n,
                   row.ranks, orr_precision_name(row.precision), row.T, row.wall_s,
                   row.s_per_time_unit, row.blocks, row.mean_active, row.interactions_per_s,
                   row.all_active_interactions_per_s, 100 * row.fraction, row.de_over_e);
            if (ranks > 1)
                printf(" %9.4f %6.1f%% %11.4f %8.3f %9.1f%%", row.comm_s, 100 * row.comm_share,
                       row.single_wall_s, row.speedup, 100 * row.efficiency);
            printf("\n");
            for (int r = 0; r < ranks && ranks > 1; r++)
                fprintf(b->info, "  N=%ld rank %d: wall %.4f s, communicating %.4f s "
                        "(%.1f%%)\n", n, r, row.rank_wall_s[r], row.rank_comm_s[r],
                        row.rank_wall_s[r] > 0 ? 100 * row.rank_comm_s[r] / row.rank_wall_s[r]
                                               : 0);
            const double ph = row.phase_s[0] + row.phase_s[1] + row.phase_s[2] + row.phase_s[3];
            if (ph > 0)
                fprintf(b->info, "  N=%ld: the device loop's phases (rank 0): next time %.1f%%, "
                        "prediction %.1f%%, force + jerk %.1f%%, correction %.1f%% of %.4f s\n",
                        n, 100 * row.phase_s[0] / ph, 100 * row.phase_s[1] / ph,
                        100 * row.phase_s[2] / ph, 100 * row.phase_s[3] / ph, ph);
            if (row.split_min > 0)
                fprintf(b->info, "  N=%ld: blocks of %ld active bodies or more split between the "
                        "GPUs: %ld of %ld blocks, %.1f%% of the active bodies; their exchange "
                        "%.4f s on the GPU's stream\n", n, row.split_min, row.split_blocks,
                        row.blocks, row.active ? 100.0 * row.split_active / row.active : 0,
                        row.gpu_comm_s);
            if (k == 0)
                fprintf(b->info, "  interactions/s: active bodies x N summed over the blocks / "
                        "wall s%s; all active/s: one block of all N with the run's kernels "
                        "(best of %d%s); fraction: interactions/s / %sall active/s%s\n",
                        ranks > 1 ? " (the slowest rank's)" : "", cfg.reps,
                        ranks > 1 ? ", rank 0 alone" : "", ranks > 1 ? "(ranks x " : "",
                        ranks > 1 ? ")" : "");
            if (k == 0 && ranks > 1)
                fprintf(b->info, "  comm: the most time a rank spent in MPI collectives and "
                        "the GPUs' block exchange; comm "
                        "%%: the largest rank's share of its wall; one rank s: rank 0 alone, "
                        "first; speedup: one rank s / wall s; efficiency: speedup / ranks\n");
        }
        fflush(stdout);
    }
    return rc;
}

static int bench_main(args_t *a);

/* bench, then MPI finalised whatever the path (a run under mpirun -np 1
 * that left it open ended "improperly", exit 1, after its rows) */
static int cmd_bench(args_t *a)
{
    int rc = bench_main(a);
    orr_comm_finalize();
    return rc;
}

static int bench_main(args_t *a)
{
    bench_opts b;
    int env_rank, env_size;
    orr_comm_env_rank(&env_rank, &env_size);
    /* under a launcher rank 0 says a usage error of the arguments (the same
     * on every rank); what depends on a rank's host (its backend) each says */
    usage_quiet = env_rank != 0;
    int rc = bench_parse(a, &b);
    usage_quiet = 0;
    if (rc == 2 && env_rank != 0) {
        /* rank 0 exits first, having said it: a rank before it makes the
         * launcher end the job, and rank 0's words were lost (1 run in 15
         * under Open MPI 4.1) */
        const struct timespec pause = {0, 300 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    if (!rc)
        rc = bench_resolve(&b);
    orr_comm *c = NULL;
    orr_error ce = {0};
    /* ORRERY_EXCHANGE=nccl: one rank over NCCL too, to measure the path */
    const int nccl1 = orr_dist_exchange_asked() == ORR_EXCHANGE_NCCL;
    if (!rc && (orr_comm_launched() || nccl1) && orr_comm_world(&c, &ce))
        rc = report(&ce);
    if (!rc && c && (orr_comm_size(c) > 1 || nccl1)) {
        if (orr_comm_rank(c) != 0)
            orr_tune_store_on_wait(NULL, NULL);   /* rank 0 alone talks */
        if (orr_comm_rank(c) == 0)
            rc = bench_describe(&b);
        if (!rc)
            rc = b.run_mode ? bench_hermite_run(&b, c) : bench_ranks(&b, c);
        orr_comm_finalize();
        return rc;
    }
    /* one rank: a value that is no exchange is not taken as automatic
     * (over several ranks orr_dist_attach refuses it on every rank) */
    if (!rc && orr_dist_exchange_check(&ce))
        rc = report(&ce);
    if (!rc)
        rc = bench_describe(&b);
    if (rc)
        return rc;
    if (b.run_mode)
        return bench_hermite_run(&b, c);
    if (b.hermite)
        return bench_hermite(&b);
    print_header(b.csv);
    double tiled_rate[ORR_CLI_MAX_N] = {0};   /* per body count, for tiled / reference */
    for (int vi = 0; vi < b.nv; vi++) {
        for (int k = 0; k < b.run.nn; k++) {
            orr_bench_row row;
            if (bench_one(&b, b.variants[vi], b.run.ns[k], &row)) {
                rc = 1;
                continue;
            }
            if (k == 0)
                print_build(b.info, &row);
            print_row(&row, b.csv);
            if (check_finite(&row))
                rc = 1;
            if (row.variant == ORR_VARIANT_TILED)
                tiled_rate[k] = row.interactions_per_s;
            if (row.variant == ORR_VARIANT_REFERENCE && tiled_rate[k] > 0)
                fprintf(b.info, "  N=%ld: tiled / reference = %.2f\n", row.n,
                        tiled_rate[k] / row.interactions_per_s);
            fflush(stdout);
        }
    }
    return rc;
}

/* ---- tune ---------------------------------------------------------------- */

static void print_trial(const orr_tune_trial *t, void *ctx)
{
    const orr_kspec *s = &t->spec;
    char cfg[96];
    if (s->launch.threads || strcmp((const char *)ctx, "cpu") == 0)
        snprintf(cfg, sizeof cfg, "tile %5d threads %2d", s->launch.block, s->launch.threads);
    else
        snprintf(cfg, sizeof cfg, "block %4d unroll %2d split %2d ipt %d%s ranges %s%.0d",
                 s->launch.block, s->launch.unroll, s->launch.split, s->launch.ipt,
                 s->launch.prefetch ? " prefetch" : "", s->launch.ranges ? "" : "auto",
                 s->launch.ranges);
    if (t->ok)
        printf("  %s %-40s %10.4f ms %12.3e interactions/s  verified (max rel err %.1e)\n",
               t->retimed ? "re-timed" : "        ", cfg, t->ms, t->interactions_per_s,
               t->max_rel_err);
    else
        printf("           %-40s %10s    %12s                 rejected: %s\n", cfg, "-", "-",
               t->why);
    fflush(stdout);
}

static void print_htrial(const orr_htune_trial *t, void *ctx)
{
    char cfg[64];
    snprintf(cfg, sizeof cfg, "%ld active: tile %3d, %2d per SM (%d ranges)", t->active,
             t->launch.tile, t->launch.per_sm, t->ranges);
    if (t->ok)
        printf("  %-46s %10.4f ms  verified (max rel err %.1e)%s\n", cfg, t->ms, t->max_rel_err,
               t->is_default ? ", the default" : "");
    else
        printf("  %-46s %10s      rejected: %s\n", cfg, "-", t->why);
    fflush(stdout);
}

/* tune --integrator hermite: the force + jerk kernel's launches (htune.h). */
static int tune_hermite(const run_opts *ro, const orr_tune_options *to)
{
    if (ro->kind != ORR_BACKEND_CUDA) {
        fprintf(stderr, "orrery: tune --integrator hermite: the Hermite tuner is for the GPU (the "
                "%s backend is in use)\n", orr_backend_name(ro->kind));
        return 1;
    }
    orr_htune_options o;
    orr_htune_options_default(&o);
    o.budget_s = to->budget_s;
    o.retune = to->retune;
    o.report = print_htrial;
    int rc = 0;
    for (int k = 0; k < ro->nn; k++) {
        printf("tuning the Hermite force + jerk kernel, cuda %s %s for N=%ld\n",
               ro->spec.phys.force, orr_precision_name(ro->spec.phys.precision), ro->ns[k]);
        fflush(stdout);
        orr_htune_result h;
        orr_error e = {0};
        if (orr_htune(&ro->spec, ro->ns[k], &o, &h, &e)) {
            orr_error_context(&e, "tune --integrator hermite N=%ld", ro->ns[k]);
            rc = report(&e);
            orr_error_clear(&e);
            continue;
        }
        print_hermite_choice(&h, ro->ns[k]);
    }
    return rc;
}

static int cmd_tune(args_t *a)
{
    run_opts ro;
    int bad = 0;
    const char *v;
    orr_error e = {0};
    orr_tune_options o;
    orr_tune_options_default(&o);
    int hermite = 0;
    run_opts_init(&ro);
    for (a->pos = 2; a->pos < a->argc && !bad; a->pos++) {
        if (run_option(a, &ro, &bad))
            continue;
        if (opt_value(a, "--budget", &v, &bad)) {
            if (!bad && !(bad = parse_double("tune", "--budget", v, &o.budget_s)) &&
                !(o.budget_s > 0))
                bad = orr_cli_usage_error("tune: --budget must be positive, got '%s'", v);
        } else if (strcmp(a->argv[a->pos], "--exhaustive") == 0) {
            o.exhaustive = 1;
        } else if (strcmp(a->argv[a->pos], "--retune") == 0) {
            o.retune = 1;
        } else if (opt_value(a, "--integrator", &v, &bad)) {
            if (!bad && strcmp(v, "hermite") != 0)
                bad = orr_cli_usage_error("tune: --integrator takes hermite (the force + jerk "
                                          "kernel of block steps; the fixed-step integrators "
                                          "tune the force pass)");
            hermite = 1;
        } else {
            bad = orr_cli_usage_error("tune: unknown option '%s'", a->argv[a->pos]);
        }
    }
    if (bad)
        return bad;
    if ((bad = resolve_run("tune", &ro)))
        return bad;
    orr_backend_kind kind = ro.kind;
    const orr_kspec spec = ro.spec;
    const long *ns = ro.ns;
    int nn = ro.nn;
    const char *bname = orr_backend_name(kind);
    if (hermite)
        return tune_hermite(&ro, &o);
    o.report = print_trial;
    o.ctx = (void *)bname;
    int rc = 0;
    for (int k = 0; k < nn; k++) {
        orr_tune_result r;
        printf("tuning %s %s %s for N=%ld%s\n", bname, spec.phys.force,
               orr_precision_name(spec.phys.precision), ns[k],
               o.exhaustive ? " (exhaustive)" : "");
        fflush(stdout);
        if (orr_tune(kind, &spec, ns[k], &o, &r, &e)) {
            orr_error_context(&e, "tune N=%ld", ns[k]);
            rc = report(&e);
            orr_error_clear(&e);
            continue;
        }
        print_note_lines(stdout, r.note);
        const orr_launch *b = &r.best.launch;
        printf("  winner (%s) for N<=%ld: block %d unroll %d split %d ipt %d%s threads %d ranges %d: "
               "%.4g ms, %.3e interactions/s; %d tried, %d rejected, %.2f s\n", r.source,
               r.n_bucket, b->block, b->unroll, b->split, b->ipt, b->prefetch ? " prefetch" : "",
               b->threads, b->ranges, r.best_ms,
               r.best_interactions_per_s, r.ntrials, r.nfailed, r.elapsed_s);
        fflush(stdout);
    }
    return rc;
}

/* ---- movie --------------------------------------------------------------- */

/* movie OUT.mp4 PATTERN [--fps N] [--crf N] [--start N]: a numbered series
 * of PNG files as an MP4 (H.264) movie. */
static int cmd_movie(args_t *a)
{
    orr_movie_options o;
    orr_movie_options_default(&o);
    const char *operand[2] = {NULL, NULL};
    int noperand = 0, bad = 0;
    long start = -1, iv;
    const char *v;
    for (a->pos = 2; a->pos < a->argc && !bad; a->pos++) {
        const char *arg = a->argv[a->pos];
        if (opt_value(a, "--fps", &v, &bad)) {
            if (!bad && !(bad = parse_double("movie", "--fps", v, &o.fps)) &&
                !(o.fps >= ORR_MOVIE_MIN_FPS && o.fps <= ORR_MOVIE_MAX_FPS))
                bad = orr_cli_usage_error("movie: --fps expects a number from %g to %d (a frame "
                                          "lasts at most 100 s), got '%s'", ORR_MOVIE_MIN_FPS,
                                          ORR_MOVIE_MAX_FPS, v);
        } else if (opt_value(a, "--crf", &v, &bad)) {
            if (!bad && !(bad = parse_int("movie", "--crf", v, 0, 51, &iv)))
                o.crf = (int)iv;
        } else if (opt_value(a, "--start", &v, &bad)) {
            if (!bad)
                bad = parse_int("movie", "--start", v, 0, LONG_MAX / 2, &start);
        } else if (arg[0] == '-' && arg[1] != '\0') {
            bad = orr_cli_usage_error("movie: unknown option '%s' (argument %d)", arg,
                                      a->pos - 1);
        } else if (noperand < 2) {
            operand[noperand++] = arg;
        } else {
            bad = orr_cli_usage_error("movie: unexpected argument %d '%s' (orrery movie OUT.mp4 "
                                      "PATTERN [OPTIONS])", a->pos - 1, arg);
        }
    }
    if (bad)
        return bad;
    if (noperand < 2)
        return orr_cli_usage_error("movie: expected the movie and the frames' pattern, e.g. "
                                   "orrery movie out.mp4 frames/f_%%04d.png");
    size_t len = strlen(operand[0]);
    if (len < 4 || strcasecmp(operand[0] + len - 4, ".mp4") != 0)
        return orr_cli_usage_error("movie: the movie (argument 1) must be a file name ending in "
                                   ".mp4, got '%s'", operand[0]);
    orr_error e = {0};
    char first[4096];
    int numbered = 0;
    if (orr_outfile_expand(operand[1], 0, first, sizeof first, &numbered, &e) || !numbered) {
        if (!e.code)
            orr_fail(&e, ORR_ERR_ARG, "'%s' has no frame number (give one integer conversion, "
                     "e.g. frames/f_%%04d.png)", operand[1]);
        int rc = orr_cli_usage_error("movie: the frames' pattern (argument 2): %s", e.msg);
        orr_error_clear(&e);
        return rc;
    }
    long frames = 0;
    int w = 0, h = 0;
    if (orr_movie_from_pngs(operand[0], operand[1], start, &o, &frames, &w, &h, &e)) {
        orr_error_context(&e, "movie");
        return report(&e);
    }
    printf("wrote '%s': %ld frame%s of %dx%d at %g fps (%.3g s), H.264 crf %d\n", operand[0],
           frames, frames == 1 ? "" : "s", w, h, o.fps, frames / o.fps, o.crf);
    return 0;
}

/* The built-in commands. */
static const struct {
    const char *name;
    int (*run)(args_t *a);
} builtins[] = {
    {"info", cmd_info}, {"bench", cmd_bench}, {"compile", cmd_compile},
    {"cache", cmd_cache}, {"tune", cmd_tune},
    {"movie", cmd_movie},
};
#define NBUILTINS (sizeof builtins / sizeof builtins[0])

/* 1 when a command's arguments ask for help (--help or -h): anywhere among
 * its options, and for an added command with script_args (run) before its
 * first operand (what follows the script is the script's own). */
static int wants_help(int argc, char **argv, const orr_cli_command *extra, int nextra)
{
    int known = 0, script_args = 0;
    for (size_t k = 0; k < NBUILTINS; k++)
        known |= strcmp(argv[1], builtins[k].name) == 0;
    for (int k = 0; k < nextra; k++) {
        if (strcmp(argv[1], extra[k].name) == 0) {
            known = 1;
            script_args = extra[k].script_args;
        }
    }
    for (int k = 2; known && k < argc; k++) {
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0)
            return 1;
        if (script_args && argv[k][0] != '-')
            return 0;
    }
    return 0;
}

/* The start-up trace marks (ORRERY_TRACE=1; util.h), printed at the very
 * end: registered before the CUDA driver registers its own exit handlers,
 * this runs after them, so the last mark shows what they took. */
static void print_trace(void)
{
    orr_trace("exit handlers done");
    double last = 0, ms = 0;
    for (int k = 0; k < orr_trace_count(); k++) {
        const char *what = orr_trace_mark(k, &ms);
        fprintf(stderr, "orrery: trace %9.3f ms  (+%8.3f)  %s\n", ms, ms - last, what);
        last = ms;
    }
}

static int cli_main(int argc, char **argv, const orr_cli_command *extra, int nextra,
                    orr_cli_law_loader load_law);

/* ---- a force law that crashes ----------------------------------------------
 *
 * A user's snippet runs as compiled C on the CPU: one that reads out of
 * bounds or divides an integer by zero kills the process with a signal, in
 * one of OpenMP's threads, and the shell said only "Segmentation fault".
 * The handler names the law (orr_engine_cpu_running: the library keeps the
 * text, it does not print) before the process dies of the same signal.  It
 * uses write(2) only.  The first thread in reports; others that crash at the
 * same moment (the threads run the same code) wait for the first to end the
 * process: with SA_RESETHAND they would get the default action at once and
 * could end it before the report is written.  The report made, the default
 * action is put back and the signal raised again: the exit status (128 + N
 * in a shell) and a core dump are the signal's. */

static atomic_flag crash_reported = ATOMIC_FLAG_INIT;

static void put_stderr(const char *s)
{
    size_t len = 0;
    while (s[len])
        len++;
    while (len > 0) {
        ssize_t w = write(STDERR_FILENO, s, len);
        if (w <= 0)
            return;
        s += w;
        len -= (size_t)w;
    }
}

static void on_crash(int sig)
{
    const char *law = orr_engine_cpu_running();
    if (law) {
        if (atomic_flag_test_and_set(&crash_reported))
            for (;;)
                pause();   /* another thread reports, then ends the process */
        const char *name = sig == SIGSEGV  ? "SIGSEGV (invalid memory access)"
                           : sig == SIGBUS ? "SIGBUS (bus error)"
                           : sig == SIGFPE ? "SIGFPE (arithmetic fault: an integer division "
                                             "by zero?)"
                                           : "SIGILL (illegal instruction: GCC compiles some "
                                             "faults, a null pointer's use, into one)";
        put_stderr("orrery: ");
        put_stderr(name);
        put_stderr(" in the CPU code of ");
        put_stderr(law);
        put_stderr(": its snippets crashed the process (a read or write out of bounds, a bad "
                   "pointer?)\n");
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);   /* blocked in the handler: delivered, with the default action, on return */
}

static void install_crash_handler(void)
{
    /* an alternate stack for the main thread, so that a stack overflow
     * there is reported too */
    static char alt[65536];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
    sigaltstack(&ss, NULL);
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t k = 0; k < sizeof sigs / sizeof sigs[0]; k++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_crash;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_ONSTACK;
        sigaction(sigs[k], &sa, NULL);
    }
}

/* A save of a tuning (tune, bench --tune, cache clear) that stands still
 * for the store's lock says so as it waits. */
static void store_wait(const char *msg, void *ctx)
{
    (void)ctx;
    fprintf(stderr, "orrery: note: %s\n", msg);
    fflush(stderr);
}

int orr_cli_main(int argc, char **argv, const orr_cli_command *extra, int nextra,
                 orr_cli_law_loader load_law)
{
    install_crash_handler();
    orr_trace("main");
    if (orr_trace_count() > 0)
        atexit(print_trace);
    int rc = cli_main(argc, argv, extra, nextra, load_law);
    orr_trace("exit");
    return rc;
}

static int cli_main(int argc, char **argv, const orr_cli_command *extra, int nextra,
                    orr_cli_law_loader load_law)
{
    args_t a = {argc, 1, argv, argc > 1 ? argv[1] : "", load_law};
    if (argc < 2)
        return orr_cli_usage_error("missing command");
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0 ||
        wants_help(argc, argv, extra, nextra)) {
        fputs(usage_head, stdout);
        for (int k = 0; k < nextra; k++)
            fputs(extra[k].usage, stdout);
        fputs(usage_commands, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("orrery %s\n", ORR_VERSION);
        return 0;
    }
    for (int k = 0; k < nextra; k++)
        if (strcmp(cmd, extra[k].name) == 0)
            return extra[k].main(argc, argv);
    orr_tune_store_on_wait(store_wait, NULL);
    for (size_t k = 0; k < NBUILTINS; k++)
        if (strcmp(cmd, builtins[k].name) == 0)
            return builtins[k].run(&a);
    return orr_cli_usage_error("unknown command '%s'", cmd);
}
