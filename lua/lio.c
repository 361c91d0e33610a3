/* lio: files from Lua.  orrery.read(path) loads the bodies of a snapshot
 * (HDF5 or text) as an orrery.Bodies; orrery.restore(path) makes a
 * simulation from a checkpoint; the Sim methods write (text, or HDF5
 * snapshots with numbered paths such as "snap_%03d.hdf5"), checkpoint,
 * render (PNG frames, MP4 movies) and flush.  What a simulation's outputs
 * share, the next snapshot and frame numbers and the frames' view, is an
 * orr_output_state kept per simulation in a registry table with weak keys,
 * so it goes with the simulation and into its checkpoints.  Its frames are
 * written in the background by a writer (frames.h) kept the same way,
 * made on its first frame: flushed by sim:flush, sim:checkpoint, sim:run's
 * end, closing the simulation and the end of the script, whose errors are
 * raised there; a writer collected with its simulation, or flushed by
 * os.exit (lrun.c), prints its error, and the run exits non-zero.  The
 * writer also encodes the frames given to a movie (movie.h); sim:flush,
 * closing, collection, os.exit and the end of the script finish the
 * movies, while sim:run's end, sim:checkpoint and sim:flush{finish =
 * false} leave them open for more frames. */
#include "lorrery.h"
#include "textio.h"
#include "checkpoint.h"
#include "frames.h"
#include "outfile.h"
#include "render.h"
#include "snapshot.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define STATE_KEY "orrery.io.state"
#define SNAPSHOT_GUARD "orrery.io.snapshot"
#define CHECKPOINT_GUARD "orrery.io.checkpoint"
#define FRAMES_KEY "orrery.io.frames"
#define FRAMES_META "orrery.io.Frames"
#define PENDING_KEY "orrery.io.pending"
#define MOVIES_KEY "orrery.io.movies"
#define PATH_SIZE 4096

/* ---- per-simulation output state ----------------------------------------------- */

/* The registry table at key (weak keys: a simulation's entry goes with
 * it), made on first use, pushed. */
static void push_weak_table(lua_State *L, const char *key)
{
    if (lua_getfield(L, LUA_REGISTRYINDEX, key) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        lua_createtable(L, 0, 1);
        lua_pushliteral(L, "k");
        lua_setfield(L, -2, "__mode");
        lua_setmetatable(L, -2);
        lua_pushvalue(L, -1);
        lua_setfield(L, LUA_REGISTRYINDEX, key);
    }
}

/* The output state of the Sim userdata at index sim (created zeroed). */
static orr_output_state *state_of(lua_State *L, int sim)
{
    sim = lua_absindex(L, sim);
    push_weak_table(L, STATE_KEY);
    lua_pushvalue(L, sim);
    if (lua_rawget(L, -2) != LUA_TUSERDATA) {
        lua_pop(L, 1);
        orr_output_state *o = lua_newuserdatauv(L, sizeof *o, 0);
        memset(o, 0, sizeof *o);
        lua_pushvalue(L, sim);
        lua_pushvalue(L, -2);
        lua_rawset(L, -4);
    }
    orr_output_state *o = lua_touserdata(L, -1);
    lua_pop(L, 2);   /* the table keeps it while the sim lives */
    return o;
}

/* ---- per-simulation frame writer ------------------------------------------------- */

int orr_lua_frame_failures = 0;

typedef struct {
    orr_frames *f;   /* NULL once closed */
} frames_box;

/* The registry table FRAMES_KEY (weak keys), pushed. */
static void push_frames_table(lua_State *L)
{
    push_weak_table(L, FRAMES_KEY);
}

/* Worker threads of a new writer: ORRERY_FRAME_THREADS, else 2; -1 with
 * err set when it is not a number from 0 to 16. */
static int frame_threads(orr_error *err)
{
    const char *v = getenv("ORRERY_FRAME_THREADS");
    if (!v || !*v)
        return 2;
    char *end;
    long t = strtol(v, &end, 10);
    if (*end || t < 0 || t > 16) {
        orr_fail(err, ORR_ERR_ARG, "ORRERY_FRAME_THREADS must be an integer from 0 to 16 (got "
                 "\"%.100s\")", v);
        return -1;
    }
    return (int)t;
}

/* The frame writer of the Sim userdata at index sim: made when create is
 * set and it has none, else NULL.  A writer that cannot be made gives NULL
 * with err set (raised by the caller, after the ranks agree). */
static orr_frames *frames_of(lua_State *L, int sim, int create, orr_error *err)
{
    sim = lua_absindex(L, sim);
    push_frames_table(L);
    lua_pushvalue(L, sim);
    frames_box *b = lua_rawget(L, -2) == LUA_TUSERDATA ? luaL_testudata(L, -1, FRAMES_META)
                                                       : NULL;
    lua_pop(L, 1);
    if ((!b || !b->f) && create) {
        int threads = frame_threads(err);
        b = lua_newuserdatauv(L, sizeof *b, 0);
        b->f = NULL;
        luaL_setmetatable(L, FRAMES_META);
        if (threads < 0 || orr_frames_create(&b->f, threads, 0, err)) {
            orr_error_context(err, "sim:render");
            lua_pop(L, 2);
            return NULL;
        }
        lua_pushvalue(L, sim);
        lua_pushvalue(L, -2);
        lua_rawset(L, -4);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return b ? b->f : NULL;   /* the table keeps it while the sim lives */
}

/* Whether the simulation at index sim has frames queued since they were
 * last flushed (sim:render, before sim:flush and the like), the same on
 * every rank: rank 0 alone has a writer, but every rank counts its frames
 * (a registry table with weak keys). */
static void set_pending(lua_State *L, int sim, int pending)
{
    sim = lua_absindex(L, sim);
    push_weak_table(L, PENDING_KEY);
    lua_pushvalue(L, sim);
    if (pending)
        lua_pushboolean(L, 1);
    else
        lua_pushnil(L);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

int orr_lua_frames_pending(lua_State *L, int sim)
{
    sim = lua_absindex(L, sim);
    push_weak_table(L, PENDING_KEY);
    lua_pushvalue(L, sim);
    const int pending = lua_rawget(L, -2) != LUA_TNIL;
    lua_pop(L, 2);
    return pending;
}

/* Whether the simulation at index sim has a movie open (frames given to a
 * movie since the last flush that finishes movies), the same on every
 * rank; set/cleared like the pending frames. */
static int movie_open(lua_State *L, int sim, int set)
{
    sim = lua_absindex(L, sim);
    push_weak_table(L, MOVIES_KEY);
    lua_pushvalue(L, sim);
    if (set >= 0) {
        if (set)
            lua_pushboolean(L, 1);
        else
            lua_pushnil(L);
        lua_rawset(L, -3);
        lua_pop(L, 1);
        return set;
    }
    const int open = lua_rawget(L, -2) != LUA_TNIL;
    lua_pop(L, 2);
    return open;
}

void orr_lua_frames_lost(orr_error *err)
{
    fprintf(stderr, "orrery: %s\n", err->msg);
    fflush(stderr);
    orr_error_clear(err);
    orr_lua_frame_failures++;
}

/* A writer collected (with its simulation, or at the end of a script
 * that failed): its frames written, a failure printed. */
static int frames_gc(lua_State *L)
{
    frames_box *b = luaL_checkudata(L, 1, FRAMES_META);
    if (b->f) {
        orr_error err = {0};
        if (orr_frames_flush(b->f, &err))
            orr_lua_frames_lost(&err);
        orr_frames_destroy(b->f);
        b->f = NULL;
    }
    return 0;
}

orr_status orr_lua_frames_close(lua_State *L, int sim, orr_error *err)
{
    sim = lua_absindex(L, sim);
    orr_frames *f = frames_of(L, sim, 0, NULL);
    if (!f)
        return ORR_OK;
    orr_status st = orr_frames_flush(f, err);
    push_frames_table(L);
    lua_pushvalue(L, sim);
    lua_rawget(L, -2);
    ((frames_box *)lua_touserdata(L, -1))->f = NULL;
    lua_pop(L, 1);
    lua_pushvalue(L, sim);
    lua_pushnil(L);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    set_pending(L, sim, 0);
    movie_open(L, sim, 0);
    orr_frames_destroy(f);
    return st;
}

/* Over several ranks only rank 0 draws and writes frames: every rank
 * takes its outcome (orr_comm_agree), so a failure is raised on every rank
 * alike and none goes on alone.  Every rank calls these at the same
 * points. */

/* Every frame of the simulation at index sim on disk, and with finish its
 * movies finished (else they stay open for more frames); raises the first
 * failure not reported yet. */
static void flush_frames(lua_State *L, int sim, int finish)
{
    orr_frames *f = frames_of(L, sim, 0, NULL);
    orr_error err = {0};
    orr_status st = f ? finish ? orr_frames_flush(f, &err) : orr_frames_wait(f, &err) : ORR_OK;
    if (finish)
        movie_open(L, sim, 0);
    /* every frame done, its failure reported here; a movie open is still to finish */
    set_pending(L, sim, movie_open(L, sim, -1));
    if (orr_comm_agree(orr_lua_comm, st, 0, &err))
        orr_lua_fail(L, &err, NULL);
}

int orr_lua_frames_finish(lua_State *L)
{
    orr_error err = {0};
    orr_status st = ORR_OK;
    push_frames_table(L);
    lua_pushnil(L);
    while (!st && lua_next(L, -2)) {
        frames_box *b = luaL_testudata(L, -1, FRAMES_META);
        if (b && b->f)
            st = orr_frames_flush(b->f, &err);
        lua_pop(L, 1);
    }
    if (orr_comm_agree(orr_lua_comm, st, 0, &err))
        return orr_lua_fail(L, &err, NULL);
    return 0;
}

void orr_lua_frames_settle(lua_State *L)
{
    push_frames_table(L);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        frames_box *b = luaL_testudata(L, -1, FRAMES_META);
        orr_error err = {0};
        if (b && b->f && orr_frames_flush(b->f, &err))
            orr_lua_frames_lost(&err);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* sim:flush([{finish = true}]): every frame sim:render queued is on disk
 * when it returns, and every movie finished (finish = false: the movies
 * stay open for more frames); a frame that could not be written raises
 * its error, naming the file. */
static int io_flush(lua_State *L)
{
    static const char *const keys[] = {"finish", NULL};
    orr_lua_checksim(L, 1);
    int finish = 1;
    if (!lua_isnoneornil(L, 2)) {
        if (lua_type(L, 2) != LUA_TTABLE)
            return orr_lua_error(L, "sim:flush: expected nothing or a table {finish = true or "
                                 "false} (got %s)", orr_lua_describe(L, 2));
        orr_lua_checkkeys(L, 2, "sim:flush", keys, 1);
        if (lua_getfield(L, 2, "finish") != LUA_TNIL) {
            if (lua_type(L, -1) != LUA_TBOOLEAN)
                return orr_lua_error(L, "sim:flush: 'finish' must be true or false (got %s)",
                                     orr_lua_describe(L, -1));
            finish = lua_toboolean(L, -1);
        }
        lua_pop(L, 1);
    }
    flush_frames(L, 1, finish);
    return 0;
}

/* ---- guards: C results freed by __gc even when a Lua error intervenes ------------ */

static int snapshot_gc(lua_State *L)
{
    orr_snapshot_free(luaL_checkudata(L, 1, SNAPSHOT_GUARD));
    return 0;
}

static int checkpoint_gc(lua_State *L)
{
    orr_checkpoint_free(luaL_checkudata(L, 1, CHECKPOINT_GUARD));
    return 0;
}

static void *push_guard(lua_State *L, size_t size, const char *meta)
{
    void *p = lua_newuserdatauv(L, size, 0);
    memset(p, 0, size);
    luaL_setmetatable(L, meta);
    return p;
}

static const char *extension(const char *path)
{
    const char *base = strrchr(path, '/');
    return strrchr(base ? base + 1 : path, '.');
}

static int is_ext(const char *path, const char *a, const char *b)
{
    const char *e = extension(path);
    return e && (strcasecmp(e, a) == 0 || (b && strcasecmp(e, b) == 0));
}

/* Over several ranks rank 0 writes the file for every rank, so every rank
 * must name the same one: the path (or pattern) as given is compared
 * first, before any check a rank could fail alone, and a difference
 * raised on every rank alike, naming the ranks of each path. */
static void same_path(lua_State *L, const char *who, const char *path)
{
    char what[64];
    snprintf(what, sizeof what, "the path of %s", who);
    orr_error err = {0};
    if (orr_comm_same_text(orr_lua_comm, path, what, "rank 0 writes the file for every rank: "
                           "give every rank the same path; orrery.rank is for the script's "
                           "own files", &err))
        orr_lua_fail(L, &err, NULL);
}

/* ---- orrery.read ---------------------------------------------------------------- */

/* orrery.read(path) -> bodies, extra, time[, frame]: an orrery.Bodies (what
 * sim:load and orrery.simulation{bodies=} take), a table of the file's other
 * per-body datasets (name -> list of n numbers; empty for text), the file's
 * time, and where the bodies are relative to a frame's centre, {center =,
 * velocity =}. */
static int l_read(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    orr_snapshot *snap = push_guard(L, sizeof *snap, SNAPSHOT_GUARD);
    orr_error err = {0};
    if (orr_snapshot_read(path, snap, &err))
        return orr_lua_fail(L, &err, NULL);
    if (snap->n > INT_MAX)
        return orr_lua_error(L, "cannot read '%s': %I bodies is too many", path,
                             (lua_Integer)snap->n);
    const long n = snap->n;
    orr_lua_bodies *b = lua_newuserdatauv(L, sizeof *b + sizeof(double) * 7 * (size_t)n, 0);
    b->n = n;
    memcpy(b->data, snap->pos, sizeof(double) * 4 * (size_t)n);
    memcpy(b->data + 4 * n, snap->vel, sizeof(double) * 3 * (size_t)n);
    luaL_setmetatable(L, ORR_LUA_BODIES);
    lua_createtable(L, 0, snap->nextra);
    for (int k = 0; k < snap->nextra; k++) {
        lua_createtable(L, (int)n, 0);
        for (long i = 0; i < n; i++) {
            lua_pushnumber(L, snap->extra[k].values[i]);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        lua_setfield(L, -2, snap->extra[k].name);
    }
    lua_pushnumber(L, snap->time);
    if (!snap->frame)
        return 3;
    lua_createtable(L, 0, 2);   /* the frame's centre the bodies are relative to */
    for (int w = 0; w < 2; w++) {
        lua_createtable(L, 3, 0);
        for (int k = 0; k < 3; k++) {
            lua_pushnumber(L, w ? snap->frame_velocity[k] : snap->frame_center[k]);
            lua_rawseti(L, -2, k + 1);
        }
        lua_setfield(L, -2, w ? "velocity" : "center");
    }
    return 4;
}

/* ---- sim:write ------------------------------------------------------------------ */

/* The extra datasets in the table at idx (name -> list of n numbers) as
 * fields over a scratch buffer left on the stack; returns how many. */
static int check_extra(lua_State *L, int idx, long n, orr_snapshot_field **fields)
{
    idx = lua_absindex(L, idx);
    int count = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        count++;
    }
    orr_snapshot_field *f = lua_newuserdatauv(
        L, sizeof *f * (size_t)(count ? count : 1) + sizeof(double) * (size_t)n * (size_t)count, 0);
    double *values = (double *)(f + (count ? count : 1));
    int k = 0;
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        if (lua_type(L, -2) != LUA_TSTRING)
            orr_lua_error(L, "sim:write: extra dataset names must be strings (got %s)",
                          orr_lua_describe(L, -2));
        const char *name = lua_tostring(L, -2);
        if (lua_type(L, -1) != LUA_TTABLE || lua_rawlen(L, -1) != (lua_Unsigned)n)
            orr_lua_error(L, "sim:write: extra dataset '%s' must be a list of %I numbers (got %s)",
                          name, (lua_Integer)n, orr_lua_describe(L, -1));
        double *v = values + (size_t)k * (size_t)n;
        for (long i = 0; i < n; i++) {
            lua_rawgeti(L, -1, (lua_Integer)i + 1);
            if (lua_type(L, -1) != LUA_TNUMBER)
                orr_lua_error(L, "sim:write: extra dataset '%s': value %I must be a number (got %s)",
                              name, (lua_Integer)i + 1, orr_lua_describe(L, -1));
            v[i] = lua_tonumber(L, -1);
            lua_pop(L, 1);
        }
        f[k].name = name;   /* the key stays in the caller's table */
        f[k].values = v;
        k++;
        lua_pop(L, 1);
    }
    *fields = f;
    return count;
}

/* Over several ranks the files are written by rank 0 alone, with every
 * body in them; every rank calls the writer, which gathers the state on
 * every rank and gives every rank rank 0's outcome (orr_sim_write_once),
 * so a failed write raises the same error on every rank.
 *
 * sim:write(path [, extra]) -> path written.  .hdf5/.h5: a GADGET-4 HDF5
 * snapshot (extra: name -> list of n numbers, more PartType1 datasets);
 * .txt/.csv: text.  A %d in path takes the simulation's next snapshot
 * number. */
static int io_write(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    const char *pattern = luaL_checkstring(L, 2);
    same_path(L, "sim:write", pattern);
    if (!lua_isnoneornil(L, 3))
        luaL_checktype(L, 3, LUA_TTABLE);
    orr_output_state *o = state_of(L, 1);
    char path[PATH_SIZE];
    int numbered = 0;
    orr_error err = {0};
    if (orr_outfile_expand(pattern, o->snapshot, path, sizeof path, &numbered, &err))
        return orr_lua_fail(L, &err, NULL);
    orr_status st;
    if (is_ext(path, ".hdf5", ".h5")) {
        orr_snapshot_field *fields = NULL;
        int nf = lua_isnoneornil(L, 3) ? 0 : check_extra(L, 3, orr_sim_n(s), &fields);
        st = orr_snapshot_write(s, path, fields, nf, &err);
    } else if (is_ext(path, ".txt", ".csv")) {
        if (!lua_isnoneornil(L, 3))
            return orr_lua_error(L, "sim:write: extra datasets need an HDF5 file (.hdf5 or .h5), "
                                 "not '%s'", path);
        st = orr_text_write_sim(s, path, &err);
    } else {
        return orr_lua_error(L, "cannot write '%s': unknown format (expected .txt, .csv, .hdf5 "
                             "or .h5)", path);
    }
    if (st)
        return orr_lua_fail(L, &err, NULL);
    if (numbered)
        o->snapshot++;
    lua_pushstring(L, path);
    return 1;
}

/* ---- checkpoints ---------------------------------------------------------------- */

/* sim:checkpoint(path) -> path: everything to continue this run exactly. */
static int io_checkpoint(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    const char *path = luaL_checkstring(L, 2);
    same_path(L, "sim:checkpoint", path);
    if (!is_ext(path, ".hdf5", ".h5"))
        return orr_lua_error(L, "sim:checkpoint: the path must end in .hdf5 or .h5 (got \"%s\")",
                             path);
    orr_output_state *o = state_of(L, 1);
    orr_error err = {0};
    flush_frames(L, 1, 0);   /* the frames it counts are on disk (movies stay open) */
    if (orr_checkpoint_write(s, path, o, &err))   /* rank 0 writes, every rank its outcome */
        return orr_lua_fail(L, &err, NULL);
    lua_pushstring(L, path);
    return 1;
}

/* orrery.restore(path [, {backend=}]) -> a new simulation where the
 * checkpoint left off (on the backend it ran on unless backend is given). */
static int l_restore(lua_State *L)
{
    static const char *const keys[] = {"backend", NULL};
    static const char *const backends[] = {"auto", "cuda", "cpu", NULL};
    static int notice_shown = 0;
    const char *path = luaL_checkstring(L, 1);
    int backend = -1;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        orr_lua_checkkeys(L, 2, "orrery.restore", keys, 1);
        if (lua_getfield(L, 2, "backend") != LUA_TNIL) {
            for (int i = 0; backends[i] && backend < 0; i++)
                if (lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), backends[i]) == 0)
                    backend = i;
            if (backend < 0)
                return orr_lua_error(L, "orrery.restore: 'backend' must be \"auto\", \"cuda\" or "
                                     "\"cpu\" (got %s)", orr_lua_describe(L, -1));
        }
        lua_pop(L, 1);
    }
    lua_settop(L, 1);
    orr_checkpoint *ck = push_guard(L, sizeof *ck, CHECKPOINT_GUARD);
    orr_error err = {0};
    /* every rank reads it: where one cannot (a file another host does not
     * see), every rank fails alike, naming it */
    if (orr_comm_agree(orr_lua_comm, orr_checkpoint_read(path, ck, &err), 1, &err))
        return orr_lua_fail(L, &err, "orrery.restore");
    if (ck->bodies.n > INT_MAX)
        return orr_lua_error(L, "orrery.restore: '%s' has too many bodies", path);
    if (backend >= 0)
        ck->config.backend = backend == 1 ? ORR_BACKEND_CUDA
                             : backend == 2 ? ORR_BACKEND_CPU : ORR_BACKEND_AUTO;
    ck->config.comm = orr_lua_comm;   /* a checkpoint continues on any number of ranks */
    if (orr_comm_size(orr_lua_comm) > 1)
        ck->config.device = orr_lua_default_device();
    orr_lua_sim *p = lua_newuserdatauv(L, sizeof *p, 3);
    p->sim = NULL;
    luaL_setmetatable(L, ORR_LUA_SIM);
    char notice[1024];
    if (orr_checkpoint_restore(ck, &p->sim, notice, sizeof notice, &err))
        return orr_lua_fail(L, &err, "orrery.restore");
    if (notice[0] && !notice_shown) {
        notice_shown = 1;
        fprintf(stderr, "orrery: %s\n", notice);
    }
    orr_lua_sim_notes(p->sim);
    *state_of(L, -1) = ck->output;
    return 1;
}

/* ---- sim:render ----------------------------------------------------------------- */

#define RWHO "sim:render"

static int opt_pixels(lua_State *L, int t, const char *key, int def)
{
    int v = def;
    if (lua_getfield(L, t, key) != LUA_TNIL) {
        int isint = 0;
        lua_Integer x = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &isint) : 0;
        if (!isint || x < 1 || x > 16384)
            orr_lua_error(L, RWHO ": '%s' must be an integer from 1 to 16384 (got %s)", key,
                          orr_lua_describe(L, -1));
        v = (int)x;
    }
    lua_pop(L, 1);
    return v;
}

/* The movie options of the table at t (movie, fps, crf) into mo; returns
 * the movie's path, or NULL without one. */
static const char *movie_options(lua_State *L, int t, orr_movie_options *mo)
{
    const char *movie = NULL;
    int mt = lua_getfield(L, t, "movie");
    if (mt == LUA_TSTRING)
        movie = lua_tostring(L, -1);   /* stays in the table */
    else if (mt != LUA_TNIL)
        orr_lua_error(L, RWHO ": 'movie' must be a file name ending in .mp4 (got %s)",
                      orr_lua_describe(L, -1));
    lua_pop(L, 1);
    if (lua_getfield(L, t, "fps") != LUA_TNIL) {
        mo->fps = lua_tonumber(L, -1);
        if (lua_type(L, -1) != LUA_TNUMBER ||
            !(mo->fps >= ORR_MOVIE_MIN_FPS && mo->fps <= ORR_MOVIE_MAX_FPS))
            orr_lua_error(L, RWHO ": 'fps' must be a number from %f to %d (a frame lasts "
                          "at most 100 s; got %s)", (double)ORR_MOVIE_MIN_FPS, ORR_MOVIE_MAX_FPS,
                          orr_lua_describe(L, -1));
        if (!movie)
            orr_lua_error(L, RWHO ": 'fps' is a movie's option: give movie = \"out.mp4\" too");
    }
    lua_pop(L, 1);
    if (lua_getfield(L, t, "crf") != LUA_TNIL) {
        int isint = 0;
        lua_Integer x = lua_type(L, -1) == LUA_TNUMBER ? lua_tointegerx(L, -1, &isint) : 0;
        if (!isint || x < 0 || x > 51)
            orr_lua_error(L, RWHO ": 'crf' must be an integer from 0 (lossless) to 51 (got %s)",
                          orr_lua_describe(L, -1));
        if (!movie)
            orr_lua_error(L, RWHO ": 'crf' is a movie's option: give movie = \"out.mp4\" too");
        mo->crf = (int)x;
    }
    lua_pop(L, 1);
    return movie;
}

/* Options table at t into o (and the movie's into *movie and mo); returns
 * the path pattern, or NULL when there is only a movie. */
static const char *render_options(lua_State *L, int t, orr_render_options *o,
                                  const char **movie, orr_movie_options *mo)
{
    static const char *const keys[] = {"path", "width", "height", "axis", "extent", "log",
                                       "colormap", "movie", "fps", "crf", NULL};
    static const char *const axes[] = {"xy", "xz", "yz", NULL};
    static const char *const maps[] = {"inferno", "viridis", "gray", NULL};
    orr_lua_checkkeys(L, t, RWHO, keys, 1);
    *movie = movie_options(L, t, mo);
    const int pt = lua_getfield(L, t, "path");
    if (pt != LUA_TSTRING && !(pt == LUA_TNIL && *movie))
        orr_lua_error(L, RWHO ": 'path' must be a file name ending in .png (got %s)%s",
                      orr_lua_describe(L, -1), *movie ? "" : "; or give a movie = \"out.mp4\"");
    const char *path = lua_tostring(L, -1);   /* stays in the table; NULL when nil */
    lua_pop(L, 1);
    o->width = opt_pixels(L, t, "width", o->width);
    o->height = opt_pixels(L, t, "height", o->height);
    if (lua_getfield(L, t, "axis") != LUA_TNIL) {
        int found = -1;
        for (int i = 0; axes[i]; i++)
            if (lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), axes[i]) == 0)
                found = i;
        if (found < 0)
            orr_lua_error(L, RWHO ": 'axis' must be \"xy\", \"xz\" or \"yz\" (got %s)",
                          orr_lua_describe(L, -1));
        o->axis = (orr_render_axis)found;
    }
    lua_pop(L, 1);
    int et = lua_getfield(L, t, "extent");
    if (et == LUA_TNUMBER) {
        o->extent_mode = ORR_EXTENT_HALF;
        o->half_width = lua_tonumber(L, -1);
        if (!(o->half_width > 0) || !isfinite(o->half_width))
            orr_lua_error(L, RWHO ": 'extent' must be a positive half-width or {xmin, xmax, ymin, "
                          "ymax} (got %s)", orr_lua_describe(L, -1));
    } else if (et == LUA_TTABLE) {
        int ok = lua_rawlen(L, -1) == 4;
        for (int k = 0; ok && k < 4; k++) {
            ok = lua_rawgeti(L, -1, k + 1) == LUA_TNUMBER && isfinite(lua_tonumber(L, -1));
            o->box[k] = lua_tonumber(L, -1);
            lua_pop(L, 1);
        }
        if (!ok || !(o->box[0] < o->box[1]) || !(o->box[2] < o->box[3]))
            orr_lua_error(L, RWHO ": 'extent' must be {xmin, xmax, ymin, ymax} with xmin < xmax "
                          "and ymin < ymax");
        o->extent_mode = ORR_EXTENT_BOX;
    } else if (et != LUA_TNIL) {
        orr_lua_error(L, RWHO ": 'extent' must be a positive half-width or {xmin, xmax, ymin, "
                      "ymax} (got %s)", orr_lua_describe(L, -1));
    }
    lua_pop(L, 1);
    if (lua_getfield(L, t, "log") != LUA_TNIL) {
        if (lua_type(L, -1) != LUA_TBOOLEAN)
            orr_lua_error(L, RWHO ": 'log' must be true or false (got %s)",
                          orr_lua_describe(L, -1));
        o->log = lua_toboolean(L, -1);
    }
    lua_pop(L, 1);
    if (lua_getfield(L, t, "colormap") != LUA_TNIL) {
        int found = -1;
        for (int i = 0; maps[i]; i++)
            if (lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), maps[i]) == 0)
                found = i;
        if (found < 0)
            orr_lua_error(L, RWHO ": 'colormap' must be \"inferno\", \"viridis\" or \"gray\" "
                          "(got %s)", orr_lua_describe(L, -1));
        o->colormap = maps[found];
    }
    lua_pop(L, 1);
    return path;
}

/* sim:render{path=, width=1024, height=1024, axis="xy", extent=, log=true,
 * colormap="inferno", movie=, fps=30, crf=20} or sim:render(path) -> the
 * path of the frame (the movie's without a path).  The density is
 * deposited now (where the bodies are); the frame is coloured, encoded
 * and written (a PNG; appended to the movie) by the simulation's writer in
 * the background (on disk after sim:flush, which also finishes the
 * movies).  Rank 0 alone draws, with no exchange between ranks, so the
 * others do nothing but count the frame. */
static int io_render(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    orr_render_options o;
    orr_render_options_default(&o);
    orr_movie_options mo;
    orr_movie_options_default(&mo);
    const char *pattern, *movie = NULL;
    if (lua_type(L, 2) == LUA_TSTRING)
        pattern = lua_tostring(L, 2);
    else if (lua_type(L, 2) == LUA_TTABLE)
        pattern = render_options(L, 2, &o, &movie, &mo);
    else
        return luaL_typeerror(L, 2, "table or string");
    if (pattern)
        same_path(L, RWHO, pattern);
    if (movie)
        same_path(L, RWHO " (its movie)", movie);
    if (pattern && !is_ext(pattern, ".png", NULL))
        return orr_lua_error(L, RWHO ": 'path' must end in .png (got \"%s\")", pattern);
    orr_output_state *st = state_of(L, 1);
    char path[PATH_SIZE], mpath[PATH_SIZE];
    int numbered = 0, mnumbered = 0;
    orr_error err = {0};
    if (pattern && orr_outfile_expand(pattern, st->frame, path, sizeof path, &numbered, &err))
        return orr_lua_fail(L, &err, NULL);
    if (movie) {
        if (!is_ext(movie, ".mp4", NULL))
            return orr_lua_error(L, RWHO ": 'movie' must end in .mp4 (got \"%s\")", movie);
        if (orr_outfile_expand(movie, 0, mpath, sizeof mpath, &mnumbered, &err))
            return orr_lua_fail(L, &err, NULL);
        if (mnumbered)
            return orr_lua_error(L, RWHO ": 'movie' is one file for every frame: no frame "
                                 "number in it (got \"%s\")", movie);
    }
    orr_status rst = ORR_OK;
    set_pending(L, 1, 1);   /* on every rank: sim:close agrees on the frames' outcome */
    if (movie)
        movie_open(L, 1, 1);
    if (orr_lua_rank0()) {
        orr_frames *f = frames_of(L, 1, 1, &err);
        rst = f ? orr_frames_render_to(f, s, pattern ? path : NULL, movie ? mpath : NULL, &mo, &o,
                                       &st->view, &err)
                : err.code;
    }
    if (orr_comm_agree(orr_lua_comm, rst, 0, &err))   /* rank 0's outcome, every rank's */
        return orr_lua_fail(L, &err, NULL);
    if (numbered)
        st->frame++;
    lua_pushstring(L, pattern ? path : mpath);
    return 1;
}

/* ---- registration ------------------------------------------------------------------ */

static const luaL_Reg funcs[] = {
    {"read", l_read},
    {"restore", l_restore},
    {NULL, NULL},
};

static const luaL_Reg sim_methods[] = {
    {"write", io_write},   /* replaces lsim.c's text-only write */
    {"checkpoint", io_checkpoint},
    {"render", io_render},
    {"flush", io_flush},
    {NULL, NULL},
};

void orr_lua_open_io(lua_State *L)
{
    luaL_newmetatable(L, SNAPSHOT_GUARD);
    lua_pushcfunction(L, snapshot_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, CHECKPOINT_GUARD);
    lua_pushcfunction(L, checkpoint_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_newmetatable(L, FRAMES_META);
    lua_pushcfunction(L, frames_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    luaL_setfuncs(L, funcs, 0);
    lua_getfield(L, -1, "Sim");   /* the Sim methods table (orr_lua_open_sim ran first) */
    luaL_setfuncs(L, sim_methods, 0);
    lua_pop(L, 1);
}
