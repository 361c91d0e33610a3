/* lrun: `orrery run SCRIPT.lua [ARGS...]` in the manner of lua.c: a fresh
 * state with the standard libraries, the orrery module in package.preload
 * (the C core and the embedded lua/orrery/NAME.lua), `arg`, the script run
 * under a message handler that adds a traceback, and Ctrl-C turned into a
 * clean stop: the SIGINT handler sets the flag orr_sim_step polls and a
 * count hook (lua.c's laction) that stops pure-Lua loops.  os.exit is
 * Lua's with the frames still being written put on disk first. */
#include "lrun.h"
#include "cli.h"
#include "comm.h"
#include "law.h"

#include "lorrery.h"
#include "lview.h"
#include "lvoice.h"

#include <errno.h>
#include <lualib.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "outfile.h"

static volatile int interrupted;
static volatile sig_atomic_t stop_signal;   /* SIGINT or SIGTERM: which one stopped the run */

/* The exit status of a stopped run: 128 + the signal (SIGINT where this
 * rank had none of its own). */
static int stop_status(void)
{
    return 128 + (stop_signal ? (int)stop_signal : SIGINT);
}

/* Over several ranks a stop can leave a rank waiting in a collective for
 * one that already stopped (each rank sees the signal between steps of
 * its own).  The watchdog, a thread that the signal handler wakes, gives
 * the run GRACE_MS to end cleanly (stopped_ranks: its movies finished);
 * past that it removes the files still being written (outfile.h), says
 * "interrupted" on rank 0 and ends the process, before mpirun's SIGKILL
 * (odls_base_sigkill_timeout: 1 s after its SIGTERM). */
#define GRACE_MS 700
#define LINGER_MS 3000
static sem_t watch_sem;
static int watch_on, watch_rank;
static volatile int watch_quit;
static pthread_t watch_thread;
static atomic_int said;   /* "interrupted" printed (once a process) */

/* Sleeps ms milliseconds, in slices of 10, returning early once *until
 * is set (until may be NULL). */
static void sleep_ms(int ms, volatile int *until)
{
    for (int left = ms; left > 0 && !(until && *until); left -= 10) {
        struct timespec ts = {0, (left < 10 ? left : 10) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
}

static void *watchdog(void *arg)
{
    (void)arg;
    while (sem_wait(&watch_sem) != 0)
        if (errno != EINTR)
            return NULL;
    if (watch_quit)
        return NULL;
    /* rank 0 writes the movies; the others wait longer (one that ended
     * first would make mpirun end rank 0 at once) */
    sleep_ms(watch_rank == 0 ? GRACE_MS : LINGER_MS, &watch_quit);   /* (the run may end first) */
    if (watch_quit)   /* the stop was handled (one rank left) */
        return NULL;
    int removed = orr_outfile_remove_temporaries();
    if (watch_rank == 0 && !atomic_exchange(&said, 1)) {
        if (removed > 0)
            fprintf(stderr, "interrupted (the ranks did not stop together: %d unfinished "
                    "file%s removed)\n", removed, removed == 1 ? "" : "s");
        else
            fprintf(stderr, "interrupted\n");
    }
    fflush(NULL);
    _exit(stop_status());
    return NULL;
}
static lua_State *running;

/* The ranks agreed on a stop.  Another rank's signal stops this one as
 * its own would (the run finishes its movies and says "interrupted"; not
 * an error that ends the job).  Where some rank had no signal of its own,
 * the signal was sent to some ranks alone (kill PID), not by mpirun's
 * Ctrl-C, which ends the job a second after it: the watchdog, which ends
 * the ranks ahead of that, stands down, and the stop goes as with one rank
 * (rank 0 finishes its movies however long they take; a script that
 * catches "interrupted" goes on).  Every rank signalled: it stays. */
void orr_lua_stop_agreed(int everywhere)
{
    interrupted = 1;
    if (!everywhere && watch_on)
        watch_quit = 1;   /* (the watchdog looks after its wait) */
}

/* The hook set by the SIGINT handler: raises "interrupted" at the next Lua
 * call, return or instruction (and removes itself, like lua.c's lstop). */
static void lstop(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    lua_sethook(L, NULL, 0, 0);
    orr_lua_error(L, "interrupted");
}

/* lua_sethook is safe in a signal handler; SA_RESETHAND makes a second
 * Ctrl-C kill the process as usual.  SIGTERM stops the same way (exit
 * 143): it is what mpirun sends every rank on Ctrl-C (the ranks are not
 * in the terminal's process group), a second after a SIGCONT and a second
 * before a SIGKILL, so that the frames and movies are put on disk. */
static void on_sigint(int sig)
{
    if (!stop_signal)
        stop_signal = sig;
    interrupted = 1;
    if (watch_on)   /* over several ranks: the steps stop where the ranks agree (sim.h) */
        sem_post(&watch_sem);   /* async-signal-safe */
    else
        lua_sethook(running, lstop, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
}

/* After the script (its frames and movies being finished, the state
 * closed): a signal is noted, not acted on, so that what the script made
 * reaches the disk whole (a second one still ends the process: the
 * handler resets); the run then says "interrupted" and exits 128 + it. */
static void on_signal_finishing(int sig)
{
    if (!stop_signal)
        stop_signal = sig;
    interrupted = 1;
}

static void handle_signal(int sig, void (*fn)(int), struct sigaction *old)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fn;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, old);
}

/* SIGINT and SIGTERM noted from now on (on_signal_finishing), each whose
 * handler is still the run's (one its signal has reset stays so). */
static void finishing_handlers(void)
{
    static const int sigs[2] = {SIGINT, SIGTERM};
    for (int k = 0; k < 2; k++) {
        struct sigaction now;
        if (sigaction(sigs[k], NULL, &now) == 0 && now.sa_handler == on_sigint)
            handle_signal(sigs[k], on_signal_finishing, NULL);
    }
    if (running)   /* a Ctrl-C hook set as the script ended would stop the finishing */
        lua_sethook(running, NULL, 0, 0);
}

/* lua.c's msghandler: the message plus a traceback (none after Ctrl-C),
 * scripts named in full (lsource.c). */
static int msghandler(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
            return 1;
        msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    if (interrupted) {
        lua_sethook(L, NULL, 0, 0);
        lua_pushstring(L, msg);
        orr_lua_source_expand(L, -1);
        return 1;
    }
    luaL_traceback(L, L, msg, 1);
    orr_lua_source_expand(L, -1);
    return 1;
}

/* os.exit([code [, close]]) as Lua's (the status: true 0, false 1, a
 * number itself; close: the state closed first, its simulations with it),
 * but the frames still being written reach the disk first, where C's exit()
 * would end their writer threads mid-file.  A frame that cannot be written
 * is printed, once, and a status of 0 becomes 1; so does one printed
 * earlier (a simulation collected with a failed frame).  No collective:
 * over several ranks one rank may exit alone (rank 0 writes the frames). */
static int os_exit(lua_State *L)
{
    int status;
    if (lua_isboolean(L, 1))
        status = lua_toboolean(L, 1) ? EXIT_SUCCESS : EXIT_FAILURE;
    else
        status = (int)luaL_optinteger(L, 1, EXIT_SUCCESS);
    int close = lua_toboolean(L, 2);
    finishing_handlers();   /* on_sigint would hook the state being closed, or wake the watchdog */
    orr_lua_frames_settle(L);
    const int rank0 = !orr_lua_comm || orr_comm_rank(orr_lua_comm) == 0;
    if (close) {   /* the simulations freed (their frames are on disk) */
        running = NULL;
        lua_close(L);
    }
    if (status == EXIT_SUCCESS && orr_lua_frame_failures)
        status = EXIT_FAILURE;
    if (interrupted) {   /* a signal while the frames were finished: said, as a stop */
        if (rank0 && !atomic_exchange(&said, 1))
            fprintf(stderr, "interrupted\n");
        status = stop_status();
    }
    /* one rank under mpirun: MPI finalised, so the launcher takes the status
     * as given (over several ranks MPI_Finalize would wait for every rank,
     * and os.exit waits for none: the launcher ends the job) */
    if (orr_lua_comm && orr_comm_size(orr_lua_comm) == 1)
        orr_comm_finalize();
    exit(status);
}

/* package.preload["orrery.core"] = the C module; "init.lua" becomes
 * "orrery" and "X.lua" "orrery.X", with chunk names "=orrery/X.lua". */
static void install_preloads(lua_State *L)
{
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
    lua_pushcfunction(L, orr_lua_open_core);
    lua_setfield(L, -2, "orrery.core");
    for (const orr_ksrc_file *f = orr_lua_embedded; f->name; f++) {
        char mod[128], chunk[160];
        int len = (int)strlen(f->name);
        if (len > 4 && strcmp(f->name + len - 4, ".lua") == 0)
            len -= 4;
        if (len == 4 && strncmp(f->name, "init", 4) == 0)
            snprintf(mod, sizeof mod, "orrery");
        else
            snprintf(mod, sizeof mod, "orrery.%.*s", len, f->name);
        snprintf(chunk, sizeof chunk, "=orrery/%s", f->name);
        if (luaL_loadbuffer(L, f->text, f->len, chunk) != LUA_OK)
            lua_error(L);
        lua_setfield(L, -2, mod);
    }
    lua_pop(L, 1);
}

/* Protected setup: libraries, preloads and the global arg. */
static int setup(lua_State *L)
{
    const char *script = lua_touserdata(L, 1);
    int argc = (int)lua_tointeger(L, 2);
    char **argv = lua_touserdata(L, 3);
    luaL_openlibs(L);
    lua_getglobal(L, "os");
    lua_pushcfunction(L, os_exit);
    lua_setfield(L, -2, "exit");
    lua_pop(L, 1);
    orr_lua_source_install(L);
    install_preloads(L);
    if (script && strcmp(script, "-") != 0) {
        lua_pushfstring(L, "@%s", script);   /* the chunk name luaL_loadfile gives it */
        orr_lua_source_add(L, lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    lua_createtable(L, argc, 1);
    lua_pushstring(L, script);
    lua_rawseti(L, -2, 0);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setglobal(L, "arg");
    return 0;
}

static const char *resume_path;   /* orr_lua_set_resume */

void orr_lua_set_resume(const char *checkpoint)
{
    resume_path = checkpoint;
}

/* Protected: orrery.resumed = orrery.restore(checkpoint), before the script. */
static int resume(lua_State *L)
{
    const char *path = lua_touserdata(L, 1);
    lua_getglobal(L, "require");
    lua_pushliteral(L, "orrery");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "restore");
    lua_pushstring(L, path);
    lua_call(L, 1, 1);
    lua_setfield(L, -2, "resumed");
    return 0;
}

/* A script's error: printed (with the rank when there are several), and
 * over several ranks every rank ended at once, so none waits in a
 * collective for this one.  An error that every rank holds alike (a
 * collective found it: orr_lua_shared_error) is printed once, by rank 0,
 * and every rank ends on its own. */
static void report_error(const char *msg)
{
    if (orr_lua_comm && orr_comm_size(orr_lua_comm) > 1 && msg && orr_lua_shared_error[0] &&
        strstr(msg, orr_lua_shared_error)) {
        /* every rank raised it, but one may have caught it (pcall) and gone
         * on to a collective that no other rank will reach: rank 0 says it
         * and ends the job; the others give rank 0 time to say it, then
         * end it too (a rank that only returned would leave a rank that
         * caught it waiting, or wait itself in MPI's finalize) */
        orr_lua_voice_end();
        if (orr_comm_rank(orr_lua_comm) == 0) {
            fprintf(stderr, "%s\n", msg);
            fflush(stderr);
        } else {
            sleep(2);
        }
        orr_comm_abort(orr_lua_comm, 1);
        return;
    }
    if (orr_lua_comm && orr_comm_size(orr_lua_comm) > 1) {
        orr_lua_voice_end();   /* the lines the script wrote, out before the abort */
        fprintf(stderr, "orrery: rank %d of %d (%s): %s\n", orr_comm_rank(orr_lua_comm),
                orr_comm_size(orr_lua_comm), orr_comm_host(orr_lua_comm), msg ? msg : "error");
        fflush(stderr);
        orr_comm_abort(orr_lua_comm, 1);
    }
    fprintf(stderr, "%s\n", msg ? msg : "error");
}

/* A run over several ranks stopped by a signal (mpirun's SIGTERM on
 * Ctrl-C, every rank at once): each rank puts its frames on disk and its
 * movies finished (rank 0 writes them; no collective: the other ranks may
 * be gone or stuck in an exchange), rank 0 alone says "interrupted", and
 * each exits 128 + the signal without MPI's finalize, which would wait
 * for every rank (mpirun is ending the job).  The ranks but rank 0 first
 * wait LINGER_MS (mpirun's SIGKILL ends them sooner): a rank that ended
 * first, with a status not 0, would make mpirun end rank 0 at once, its
 * movie unfinished. */
static void stopped_ranks(lua_State *L, const char *msg)
{
    orr_lua_frames_settle(L);
    fflush(stdout);
    orr_lua_voice_end();
    if (orr_comm_rank(orr_lua_comm) == 0 && !atomic_exchange(&said, 1))
        fprintf(stderr, "%s\n", msg ? msg : "interrupted");
    fflush(NULL);
    if (orr_comm_rank(orr_lua_comm) != 0)
        sleep_ms(LINGER_MS, NULL);
    _exit(stop_status());
}

int orr_lua_run(const char *script, int argc, char **argv)
{
    lua_State *L = luaL_newstate();
    if (!L) {
        fprintf(stderr, "orrery: cannot create a Lua state: out of memory\n");
        return 1;
    }
    interrupted = 0;
    stop_signal = 0;
    orr_lua_shared_error[0] = '\0';
    orr_lua_frame_failures = 0;
    /* under mpirun: the rank as the launcher gives it, before the script
     * writes anything (MPI itself starts when the script requires orrery) */
    int rank, size;
    orr_comm_env_rank(&rank, &size);
    if (size == 0)   /* a rank without a size (PMIx alone): several where it is not 0 */
        size = rank > 0 ? rank + 1 : 2;
    if (orr_lua_voice_begin(rank, size) != 0)
        fprintf(stderr, "orrery: rank %d: standard output left as it is (every rank's shows): "
                "%s\n", rank, strerror(errno));
    lua_pushcfunction(L, setup);
    lua_pushlightuserdata(L, (void *)script);
    lua_pushinteger(L, argc);
    lua_pushlightuserdata(L, argv);
    if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
        lua_pushfstring(L, "orrery: %s", lua_tostring(L, -1));
        report_error(lua_tostring(L, -1));
        lua_close(L);
        return 1;
    }
    if (resume_path) {
        lua_pushcfunction(L, resume);
        lua_pushlightuserdata(L, (void *)resume_path);
        if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
            lua_pushfstring(L, "orrery: --resume: %s", lua_tostring(L, -1));
            report_error(lua_tostring(L, -1));
            lua_close(L);
            return 1;
        }
    }

    int rc = 0;
    struct sigaction old_int, old_term;
    int handlers_set = 0;
    lua_pushcfunction(L, msghandler);
    int st = luaL_loadfile(L, strcmp(script, "-") == 0 ? NULL : script);
    if (st == LUA_ERRFILE) {
        lua_pushfstring(L, "orrery: %s", lua_tostring(L, -1));
        report_error(lua_tostring(L, -1));
        rc = 1;
    } else if (st != LUA_OK) {
        report_error(orr_lua_source_expand(L, -1));   /* file.lua:LINE: syntax error */
        rc = 1;
    } else {
        /* the script gets its arguments as ... too, as under lua.c */
        luaL_checkstack(L, argc + 1, "too many arguments to script");
        for (int i = 0; i < argc; i++)
            lua_pushstring(L, argv[i]);
        running = L;
        orr_lua_stop = &interrupted;
        watch_on = 0;
        if (size > 1 && sem_init(&watch_sem, 0, 0) == 0) {
            watch_quit = 0;
            watch_rank = rank;
            watch_on = pthread_create(&watch_thread, NULL, watchdog, NULL) == 0;
            if (!watch_on)
                sem_destroy(&watch_sem);
        }
        handle_signal(SIGINT, on_sigint, &old_int);
        handle_signal(SIGTERM, on_sigint, &old_term);
        handlers_set = 1;
        orr_trace("script start");
        st = lua_pcall(L, argc, 0, 1);
        orr_trace("script end");
        if (st != LUA_OK && interrupted && orr_lua_comm && orr_comm_size(orr_lua_comm) > 1)
            stopped_ranks(L, lua_tostring(L, -1));   /* does not return */
        finishing_handlers();
        if (watch_on) {   /* the watchdog ends (a stop handled below, on one rank) */
            watch_on = 0;
            watch_quit = 1;
            sem_post(&watch_sem);
            pthread_join(watch_thread, NULL);
            sem_destroy(&watch_sem);
        }
        if (st != LUA_OK) {
            fflush(stdout);
            report_error(lua_tostring(L, -1));
            rc = 1;
        } else {   /* the frames still being written, on disk (no traceback: no script left) */
            lua_pushcfunction(L, orr_lua_frames_finish);
            if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
                fflush(stdout);
                lua_pushfstring(L, "orrery: %s", lua_tostring(L, -1));
                report_error(lua_tostring(L, -1));
                rc = 1;
            }
        }
    }
    lua_close(L);   /* closes the simulations left open */
    orr_trace("Lua state closed");
    orr_lua_voice_end();
    if (rc == 0 && orr_lua_frame_failures)   /* printed as their simulations were collected */
        rc = 1;
    /* over several ranks a signal that one rank alone had after the ranks'
     * last stepping call stops every rank alike: said once, by rank 0 (the
     * ranks all get here unless one ended the job: os.exit, an error of its
     * own; MPI's finalize would wait for them the same) */
    if (orr_lua_comm && orr_comm_size(orr_lua_comm) > 1) {
        double any = interrupted ? 1 : 0;
        orr_error e = {0};
        if (orr_comm_max(orr_lua_comm, &any, 1, &e) == ORR_OK && any > 0)
            interrupted = 1;
        const int rank0 = orr_comm_rank(orr_lua_comm) == 0;
        /* stopped: said by rank 0 before any rank ends (one that ended first,
         * not 0, would have mpirun end the others at once), then each ends
         * without MPI's finalize, which does not return in a job whose
         * ranks were signalled (as stopped_ranks) */
        if (interrupted) {
            if (st == LUA_OK && rank0 && !atomic_exchange(&said, 1))
                fprintf(stderr, "interrupted\n");
            fflush(NULL);
            orr_comm_barrier(orr_lua_comm, &e);
            orr_error_clear(&e);
            _exit(stop_status());
        }
        orr_error_clear(&e);
    }
    orr_comm_finalize();
    orr_lua_stop = NULL;
    running = NULL;
    if (handlers_set) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
    }
    if (interrupted) {   /* (one rank: several have ended above) */
        if (st == LUA_OK)
            fprintf(stderr, "interrupted\n");
        rc = stop_status();
    }
    if (rc == 0 && orr_lua_verify_mode && orr_lua_verify_failures) {
        fprintf(stderr, "orrery: --verify: %d check%s above tolerance\n", orr_lua_verify_failures,
                orr_lua_verify_failures == 1 ? "" : "s");
        rc = 1;
    }
    return rc;
}

/* Protected: runs the law script and copies the orrery.Force it returns. */
static int load_law(lua_State *L)
{
    const char *path = lua_touserdata(L, 1);
    orr_law *out = lua_touserdata(L, 2);
    if (luaL_loadfile(L, path) != LUA_OK)
        return lua_error(L);
    lua_call(L, 0, 1);
    if (!luaL_testudata(L, -1, ORR_LUA_FORCE))
        return luaL_error(L, "%s must return an orrery.Force (return orrery.force{...}); it "
                          "returned %s", path, luaL_typename(L, -1));
    orr_error err = {0};
    if (orr_law_copy(out, orr_lua_checklaw(L, -1), &err))
        return luaL_error(L, "%s", err.msg);
    return 0;
}

orr_status orr_lua_load_law(const char *path, orr_law *law, orr_error *err)
{
    lua_State *L = luaL_newstate();
    if (!L)
        return orr_fail(err, ORR_ERR_NOMEM, "cannot create a Lua state: out of memory");
    memset(law, 0, sizeof *law);
    lua_pushcfunction(L, setup);
    lua_pushlightuserdata(L, (void *)path);
    lua_pushinteger(L, 0);
    lua_pushlightuserdata(L, NULL);
    orr_status st = ORR_OK;
    if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
        st = orr_fail(err, ORR_ERR_ARG, "%s", lua_tostring(L, -1));
    } else {
        lua_pushcfunction(L, load_law);
        lua_pushlightuserdata(L, (void *)path);
        lua_pushlightuserdata(L, law);
        if (lua_pcall(L, 2, 0, 0) != LUA_OK)
            st = orr_fail(err, ORR_ERR_ARG, "%s", orr_lua_source_expand(L, -1));
    }
    lua_close(L);
    return st;
}

void orr_lua_set_verify(int on)
{
    orr_lua_verify_mode = on;
    orr_lua_verify_failures = 0;
}

/* `orrery run`: --verify, --resume CKPT and --all-ranks before the script,
 * in any order; ORRERY_ALL_RANKS=1 is --all-ranks. */
static int run_main(int argc, char **argv)
{
    int first = 2, rank, size;
    orr_comm_env_rank(&rank, &size);
    /* a usage error under mpirun: every rank exits 2, rank 0 says it; the
     * others exit a second later (one that ended first would have mpirun
     * end rank 0 before it had said it: Open MPI 5's prterun does) */
#define USAGE(...) (rank ? (sleep_ms(1000, NULL), 2) : orr_cli_usage_error(__VA_ARGS__))
    const char *env = getenv("ORRERY_ALL_RANKS");
    if (env && *env && strcmp(env, "0") != 0 && strcmp(env, "1") != 0)   /* said by rank 0 */
        return USAGE("run: ORRERY_ALL_RANKS must be 0 or 1 (got '%s')",
                                              env);
    orr_lua_voice_all(env && strcmp(env, "1") == 0);
    for (; argc > first && strncmp(argv[first], "--", 2) == 0; first++) {
        if (strcmp(argv[first], "--verify") == 0) {
            orr_lua_set_verify(1);
        } else if (strcmp(argv[first], "--view") == 0 || strncmp(argv[first], "--view=", 7) == 0) {
            const char *p = argv[first][6] ? argv[first] + 7 : "0";
            char *end;
            long port = strtol(p, &end, 10);
            if (!*p || *end || port < 0 || port > 65535)
                return USAGE("run: --view=PORT: the port must be 0..65535 (0: a free one); "
                             "got '%s' (argument %d)", p, first);
            orr_lua_view_port = (int)port;
        } else if (strcmp(argv[first], "--all-ranks") == 0) {
            orr_lua_voice_all(1);
        } else if (strcmp(argv[first], "--resume") == 0) {
            if (argc <= first + 1 || strncmp(argv[first + 1], "--", 2) == 0)
                return USAGE("run: --resume needs a checkpoint file (orrery run "
                                           "--resume CKPT SCRIPT.lua [ARGS...])%s%s%s",
                                           argc > first + 1 ? "; got the option '" : "",
                                           argc > first + 1 ? argv[first + 1] : "",
                                           argc > first + 1 ? "'" : "");
            orr_lua_set_resume(argv[++first]);
        } else {
            return USAGE("run: unknown option '%s' (before the script: --verify, "
                                       "--resume CKPT, --all-ranks, --view[=PORT])", argv[first]);
        }
    }
    if (argc <= first)
        return USAGE("run: missing script (orrery run [--verify] [--resume CKPT] "
                                   "[--all-ranks] [--view[=PORT]] SCRIPT.lua [ARGS...])");
    /* mpirun gives standard input to rank 0 alone: the others would run an
     * empty script and rank 0 wait for them in the first collective */
    if (strcmp(argv[first], "-") == 0 && (size > 1 || rank > 0))
        return USAGE("run: a script from standard input ('-') runs on "
                                              "one rank only (mpirun gives standard input to "
                                              "rank 0 alone); pass the script's path");
    return orr_lua_run(argv[first], argc - first - 1, argv + first + 1);
}

#undef USAGE

const orr_cli_command orr_lua_run_command = {
    .name = "run",
    .usage =
        "  run SCRIPT.lua [ARGS...]  run a Lua scenario (docs/LUA_API.md); ARGS in the global arg\n"
        "      --verify              (before SCRIPT) check every simulation against the CPU in\n"
        "                            double before its first step and after each sim:run, and\n"
        "                            its force law against itself (law:check)\n"
        "      --resume CKPT         (before SCRIPT) the checkpoint CKPT restored as\n"
        "                            orrery.resumed for the script to continue\n"
        "      --all-ranks           (before SCRIPT) under mpirun, every rank's standard output\n"
        "                            shown, each line behind '[rank R] ' (default: rank 0's\n"
        "                            alone; also ORRERY_ALL_RANKS=1)\n"
        "      --view[=PORT]         (before SCRIPT) a live view of the simulation in a browser,\n"
        "                            served on 127.0.0.1:PORT (default: a free port); its URL,\n"
        "                            with its token, is printed (sim:view{} in LUA_API.md)\n",
    .script_args = 1,   /* what follows the script is the script's */
    .main = run_main,
};
