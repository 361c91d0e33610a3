/* lsim: the orrery.Sim type (a simulation) and its constructor
 * orrery.simulation{...}.  The userdata is allocated (empty) before the
 * simulation is created, so __gc is safe after any error; close, __gc and
 * __close all free it (its frames written first), and any later use raises
 * "simulation is closed".
 * Fields (sim.n, sim.time, sim.pos, ...) come from __index after the method
 * table, which the module exposes as orrery.Sim so Lua code can add methods. */
#include "lorrery.h"
#include "lview.h"
#include "textio.h"
#include "diag.h"
#include "dist.h"
#include "tune.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHO "orrery.simulation"

static const char *const body_keys[] = {"x", "y", "z", "vx", "vy", "vz", "m", NULL};

orr_sim *orr_lua_checksim(lua_State *L, int arg)
{
    orr_lua_sim *p = luaL_checkudata(L, arg, ORR_LUA_SIM);
    if (!p->sim)
        orr_lua_error(L, "orrery.Sim: simulation is closed");
    return p->sim;
}

void orr_lua_sim_notes(const orr_sim *s)
{
    orr_lua_note(orr_engine_build_info(orr_sim_engine(s))->note);
    orr_lua_note(orr_sim_tune_note(s));
}

/* ---- bodies as tables ------------------------------------------------------ */

/* Reads the body table at idx over b[7] = x y z vx vy vz m (fields present
 * replace the values there).  Returns NULL, or pushes and returns a message. */
static const char *read_body(lua_State *L, int idx, double b[7])
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) != LUA_TTABLE)
        return lua_pushfstring(L, "table expected, got %s", orr_lua_describe(L, idx));
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        int k = -1;
        if (lua_type(L, -2) == LUA_TSTRING) {
            const char *key = lua_tostring(L, -2);
            for (int i = 0; body_keys[i]; i++)
                if (strcmp(key, body_keys[i]) == 0)
                    k = i;
        }
        if (k < 0 && lua_type(L, -2) == LUA_TSTRING)
            return lua_pushfstring(L, "unknown key '%s' (valid: x, y, z, vx, vy, vz, m)",
                                   lua_tostring(L, -2));
        if (k < 0)
            return lua_pushfstring(L, "unknown key [%s] (valid: x, y, z, vx, vy, vz, m)",
                                   orr_lua_describe(L, -2));
        double v = lua_tonumber(L, -1);
        if (lua_type(L, -1) != LUA_TNUMBER || !isfinite(v) || (k == 6 && v < 0))
            return lua_pushfstring(L, "'%s' must be a %sfinite number (got %s)", body_keys[k],
                                   k == 6 ? "non-negative " : "", orr_lua_describe(L, -1));
        b[k] = v;
        lua_pop(L, 1);
    }
    return NULL;
}

/* NULL when body i's values b[7] fit what s stores (float: the float
 * range), else pushes and returns "body i: 'x' = 1e+39 is beyond the float
 * range (...)". */
static const char *body_range(lua_State *L, const orr_sim *s, long i, const double b[7])
{
    if (ORR_STORED_DOUBLE(orr_sim_config_of(s)->precision))
        return NULL;
    for (int k = 0; k < 7; k++)
        if (!(fabs(b[k]) <= FLT_MAX)) {
            char what[48];
            snprintf(what, sizeof what, "body %ld: '%s'", i + 1, body_keys[k]);
            return orr_lua_float_range(L, s, what, b[k]);
        }
    return NULL;
}

static void get_body(const double *pos, const double *vel, long i, double b[7])
{
    b[0] = pos[4 * i];
    b[1] = pos[4 * i + 1];
    b[2] = pos[4 * i + 2];
    b[3] = vel[3 * i];
    b[4] = vel[3 * i + 1];
    b[5] = vel[3 * i + 2];
    b[6] = pos[4 * i + 3];
}

static void put_body(double *pos, double *vel, long i, const double b[7])
{
    pos[4 * i] = b[0];
    pos[4 * i + 1] = b[1];
    pos[4 * i + 2] = b[2];
    vel[3 * i] = b[3];
    vel[3 * i + 1] = b[4];
    vel[3 * i + 2] = b[5];
    pos[4 * i + 3] = b[6];
}

static void push_body(lua_State *L, const double b[7])
{
    lua_createtable(L, 0, 7);
    for (int k = 0; k < 7; k++) {
        lua_pushnumber(L, b[k]);
        lua_setfield(L, -2, body_keys[k]);
    }
}

static void mirror(lua_State *L, orr_sim *s, double **pos, double **vel)
{
    orr_error err = {0};
    if (orr_sim_pos(s, pos, &err) || orr_sim_vel(s, vel, &err))
        orr_lua_fail(L, &err, NULL);
}

/* The number of bodies in the value at idx (orrery.Bodies or a list of body
 * tables), or -1 when it is neither. */
static long count_of(lua_State *L, int idx)
{
    orr_lua_bodies *b = luaL_testudata(L, idx, ORR_LUA_BODIES);
    if (b)
        return b->n;
    if (lua_type(L, idx) == LUA_TTABLE)
        return (long)lua_rawlen(L, idx);
    return -1;
}

/* Replaces every body by those of the orrery.Bodies or list at idx (its
 * count already checked); missing table fields are 0.  Returns NULL or a
 * pushed message (nothing changed then). */
static const char *load_from(lua_State *L, orr_sim *s, int idx)
{
    long n = orr_sim_n(s);
    double *pos, *vel;
    orr_lua_bodies *bd = luaL_testudata(L, idx, ORR_LUA_BODIES);
    if (bd) {
        /* checked like body tables: orrery.read can hand over a file's nan */
        for (long i = 0; i < n; i++) {
            double b[7];
            get_body(bd->data, bd->data + 4 * n, i, b);
            for (int k = 0; k < 7; k++)
                if (!isfinite(b[k]) || (k == 6 && b[k] < 0)) {
                    lua_pushnumber(L, b[k]);
                    return lua_pushfstring(L, "body %I: '%s' must be a %sfinite number (got %s)",
                                           (lua_Integer)i + 1, body_keys[k],
                                           k == 6 ? "non-negative " : "",
                                           orr_lua_describe(L, -1));
                }
            const char *msg = body_range(L, s, i, b);
            if (msg)
                return msg;
        }
        mirror(L, s, &pos, &vel);
        memcpy(pos, bd->data, sizeof(double) * 4 * (size_t)n);
        memcpy(vel, bd->data + 4 * n, sizeof(double) * 3 * (size_t)n);
        orr_sim_touch(s);
        return NULL;
    }
    /* validate everything into a scratch copy first */
    idx = lua_absindex(L, idx);
    double *tmp = lua_newuserdatauv(L, sizeof(double) * 7 * (size_t)n, 0);
    for (long i = 0; i < n; i++) {
        double *b = tmp + 7 * i;
        memset(b, 0, 7 * sizeof(double));
        lua_rawgeti(L, idx, (lua_Integer)i + 1);
        const char *msg = read_body(L, -1, b);
        if (msg)
            return lua_pushfstring(L, "body %I: %s", (lua_Integer)i + 1, msg);
        if ((msg = body_range(L, s, i, b)) != NULL)
            return msg;
        lua_pop(L, 1);
    }
    mirror(L, s, &pos, &vel);
    for (long i = 0; i < n; i++)
        put_body(pos, vel, i, tmp + 7 * i);
    orr_sim_touch(s);
    lua_pop(L, 1);
    return NULL;
}

/* ---- orrery.simulation{} ----------------------------------------------------- */

static const char *const sim_keys[] = {"n",       "bodies",     "precision", "G",     "softening",
                                       "dt",      "integrator", "damping",   "force", "backend",
                                       "box",     "dims",       "device",    "tune",
                                       "tune_budget", "params", "kernel", "eta", "eta_start",
                                       "dt_max", "dt_min", "units", "fields", "frame",
                                       "regularize", NULL};

/* regularize = true | false | {r_close = R, gamma = G, encounter = F}: close pairs and
 * compact groups leave the block steps (groups.h). */
static void opt_regularize(lua_State *L, orr_sim_config *c)
{
    const int t = lua_getfield(L, 1, "regularize");
    if (t == LUA_TBOOLEAN) {
        c->regularize = lua_toboolean(L, -1);
    } else if (t == LUA_TTABLE) {
        static const char *const keys[] = {"r_close", "gamma", "encounter", NULL};
        const int at = lua_gettop(L);
        orr_lua_checkkeys(L, at, WHO ": regularize", keys, 1);
        c->regularize = 1;
        if (lua_getfield(L, at, "r_close") != LUA_TNIL)
            c->reg_r_close = orr_lua_checkfinite(L, -1, WHO, "regularize.r_close",
                                                 "a length >= 0 (0: automatic)");
        lua_pop(L, 1);
        if (lua_getfield(L, at, "gamma") != LUA_TNIL)
            c->reg_gamma = orr_lua_checkfinite(L, -1, WHO, "regularize.gamma",
                                               "a number in (0, 1)");
        lua_pop(L, 1);
        if (lua_getfield(L, at, "encounter") != LUA_TNIL)
            c->reg_encounter = orr_lua_checkfinite(L, -1, WHO, "regularize.encounter",
                                                   "a fraction of r_close in [0, 1]");
        lua_pop(L, 1);
    } else if (t != LUA_TNIL) {
        orr_lua_error(L, WHO ": 'regularize' must be true, false or a table {r_close = R, "
                      "gamma = G, encounter = F} (got %s)", orr_lua_describe(L, -1));
    }
    lua_pop(L, 1);
}

/* frame = {center = {x, y, z}, velocity = {vx, vy, vz}, step = h}: the
 * bodies relative to a centre that moves in the fields (frame.h); the table
 * at index t. */
static void frame_vec(lua_State *L, int t, const char *key, double out[3])
{
    lua_getfield(L, t, key);
    if (lua_type(L, -1) != LUA_TTABLE)
        orr_lua_error(L, WHO ": frame.%s must be {x, y, z}, three finite numbers (got %s)", key,
                      orr_lua_describe(L, -1));
    const size_t len = lua_rawlen(L, -1);
    if (len != 3)
        orr_lua_error(L, WHO ": frame.%s must be {x, y, z}, three finite numbers (got %d)", key,
                      (int)len);
    for (int k = 0; k < 3; k++) {
        lua_rawgeti(L, -1, k + 1);
        out[k] = lua_tonumber(L, -1);
        if (lua_type(L, -1) != LUA_TNUMBER || !isfinite(out[k]))
            orr_lua_error(L, WHO ": frame.%s[%d] must be a finite number (got %s)", key, k + 1,
                          orr_lua_describe(L, -1));
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

static void opt_frame(lua_State *L, int t, orr_sim_config *c)
{
    static const char *const keys[] = {"center", "velocity", "step", NULL};
    if (lua_type(L, t) != LUA_TTABLE)
        orr_lua_error(L, WHO ": 'frame' must be a table {center = {x, y, z}, velocity = {vx, "
                      "vy, vz}} (got %s)", orr_lua_describe(L, t));
    lua_pushnil(L);
    while (lua_next(L, t)) {
        int known = 0;
        for (int k = 0; keys[k] && !known; k++)
            known = lua_type(L, -2) == LUA_TSTRING && strcmp(lua_tostring(L, -2), keys[k]) == 0;
        if (!known)
            orr_lua_error(L, WHO ": frame: unknown key %s (known: center, velocity, step)",
                          orr_lua_describe(L, -2));
        lua_pop(L, 1);
    }
    frame_vec(L, t, "center", c->frame_center);
    frame_vec(L, t, "velocity", c->frame_velocity);
    lua_getfield(L, t, "step");
    if (!lua_isnil(L, -1)) {
        c->frame_step = lua_tonumber(L, -1);
        if (lua_type(L, -1) != LUA_TNUMBER || !(c->frame_step > 0) || !isfinite(c->frame_step))
            orr_lua_error(L, WHO ": frame.step must be a positive number (got %s)",
                          orr_lua_describe(L, -1));
    }
    lua_pop(L, 1);
    c->frame = 1;
}

/* kernel = {block =, unroll =, split =, ipt =, ranges =, threads =,
 * prefetch =}: a configuration of one's own (the table at index t); sim.c
 * validates the values against the backend. */
static void opt_kernel(lua_State *L, int t, orr_launch *k)
{
    static const char *const keys[] = {"block",  "unroll",  "split",    "ipt",
                                       "ranges", "threads", "prefetch", NULL};
    if (lua_type(L, t) != LUA_TTABLE)
        orr_lua_error(L, WHO ": 'kernel' must be a table {block =, unroll =, split =, ipt =, "
                      "ranges =, threads =, prefetch =} (got %s)", orr_lua_describe(L, t));
    orr_lua_checkkeys(L, t, WHO ": kernel", keys, 1);
    /* in the order of keys; ranges and threads 0 = automatic */
    const struct {
        int *field;
        int lo, hi;
    } f[] = {{&k->block, 1, 1 << 20},  {&k->unroll, 1, 1 << 20}, {&k->split, 1, 1 << 20},
             {&k->ipt, 1, 1 << 20},    {&k->ranges, 0, 1 << 20}, {&k->threads, 0, 1 << 20},
             {&k->prefetch, 0, 1}};
    for (int i = 0; keys[i]; i++) {
        if (lua_getfield(L, t, keys[i]) != LUA_TNIL) {
            int isint = 0;
            lua_Integer v = lua_tointegerx(L, -1, &isint);
            if (!isint || v < f[i].lo || v > f[i].hi)
                orr_lua_error(L, WHO ": 'kernel.%s' must be an integer from %d to %d (got %s)",
                              keys[i], f[i].lo, f[i].hi, orr_lua_describe(L, -1));
            *f[i].field = (int)v;
        }
        lua_pop(L, 1);
    }
}

/* One of the units at table t: the name at key (one of names, sizes
 * from find) or the size at key_cgs, exactly one of them; into *cgs and
 * name[16]. */
static void opt_unit(lua_State *L, int t, const char *key, const char *key_cgs,
                     const char *const *names, double (*find)(const char *), double *cgs,
                     char name[16])
{
    int have_name = lua_getfield(L, t, key) != LUA_TNIL;
    int have_cgs = lua_getfield(L, t, key_cgs) != LUA_TNIL;
    if (have_name && have_cgs)
        orr_lua_error(L, WHO ": 'units' takes '%s' or '%s', not both", key, key_cgs);
    if (!have_name && !have_cgs)
        orr_lua_error(L, WHO ": 'units' needs '%s' (a name) or '%s'", key, key_cgs);
    if (have_cgs) {
        lua_Number v = lua_tonumber(L, -1);
        if (lua_type(L, -1) != LUA_TNUMBER || !(v > 0) || !isfinite(v))
            orr_lua_error(L, WHO ": 'units.%s' must be a positive number (got %s)", key_cgs,
                          orr_lua_describe(L, -1));
        *cgs = v;
        name[0] = '\0';
    } else {
        const char *s = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
        *cgs = s ? find(s) : 0;
        if (*cgs == 0) {
            luaL_Buffer b;
            const char *got = orr_lua_describe(L, -2);
            luaL_buffinit(L, &b);
            for (int i = 0; names[i]; i++) {
                luaL_addstring(&b, i == 0 ? "\"" : names[i + 1] ? ", \"" : " or \"");
                luaL_addstring(&b, names[i]);
                luaL_addchar(&b, '"');
            }
            luaL_pushresult(&b);
            orr_lua_error(L, WHO ": 'units.%s' must be %s, or give '%s' (got %s)", key,
                          lua_tostring(L, -1), key_cgs, got);
        }
        snprintf(name, 16, "%s", s);
    }
    lua_pop(L, 2);
}

/* units = {length = "pc" or length_cm = ..., mass = "Msun" or mass_g = ...}
 * (the table at index t). */
static void opt_units(lua_State *L, int t, orr_units *u)
{
    static const char *const keys[] = {"length", "length_cm", "mass", "mass_g", NULL};
    if (lua_type(L, t) != LUA_TTABLE)
        orr_lua_error(L, WHO ": 'units' must be a table {length = NAME or length_cm = CM, "
                      "mass = NAME or mass_g = G} (got %s)", orr_lua_describe(L, t));
    orr_lua_checkkeys(L, t, WHO ": units", keys, 1);
    opt_unit(L, t, "length", "length_cm", orr_units_length_names(), orr_units_length_cm,
             &u->length_cm, u->length);
    opt_unit(L, t, "mass", "mass_g", orr_units_mass_names(), orr_units_mass_g, &u->mass_g,
             u->mass);
}

/* t[key] as an integer in lo..hi, or def when absent. */
static lua_Integer opt_integer(lua_State *L, const char *key, lua_Integer lo, lua_Integer hi,
                               lua_Integer def, const char *what)
{
    lua_Integer v = def;
    int isint = 0;
    if (lua_getfield(L, 1, key) != LUA_TNIL) {
        if (lua_type(L, -1) == LUA_TNUMBER)
            v = lua_tointegerx(L, -1, &isint);
        if (!isint || v < lo || v > hi)
            orr_lua_error(L, WHO ": '%s' must be %s (got %s)", key, what,
                          orr_lua_describe(L, -1));
    }
    lua_pop(L, 1);
    return v;
}

/* t[key] as a finite number accepted by ok(), or def when absent. */
static double opt_number(lua_State *L, const char *key, double def, int (*ok)(double),
                         const char *what)
{
    double v = def;
    if (lua_getfield(L, 1, key) != LUA_TNIL) {
        v = orr_lua_checkfinite(L, -1, WHO, key, what);
        if (ok && !ok(v))
            orr_lua_error(L, WHO ": '%s' must be %s (got %s)", key, what,
                          orr_lua_describe(L, -1));
    }
    lua_pop(L, 1);
    return v;
}

/* t[key] as one of the NULL-terminated names; returns its index, or def
 * when absent.  The message lists the names: "a", "b" or "c". */
static int opt_choice(lua_State *L, const char *key, const char *const *names, int def)
{
    int found = def;
    if (lua_getfield(L, 1, key) != LUA_TNIL) {
        found = -1;
        if (lua_type(L, -1) == LUA_TSTRING)
            for (int i = 0; names[i]; i++)
                if (strcmp(names[i], lua_tostring(L, -1)) == 0)
                    found = i;
        if (found < 0) {
            luaL_Buffer b;
            int count = 0;
            while (names[count])
                count++;
            const char *got = orr_lua_describe(L, -1);
            luaL_buffinit(L, &b);
            for (int i = 0; i < count; i++) {
                luaL_addstring(&b, i == 0 ? "\"" : i == count - 1 ? " or \"" : ", \"");
                luaL_addstring(&b, names[i]);
                luaL_addchar(&b, '"');
            }
            luaL_pushresult(&b);
            orr_lua_error(L, WHO ": '%s' must be %s (got %s)", key, lua_tostring(L, -1), got);
        }
    }
    lua_pop(L, 1);
    return found;
}

static int positive(double v)
{
    return v > 0;
}

static int nonnegative(double v)
{
    return v >= 0;
}

static int unit_interval(double v)
{
    return v > 0 && v <= 1;
}

int orr_lua_default_device(void)
{
    return orr_lua_comm ? orr_dist_device(orr_lua_comm) : 0;
}

static int l_simulation(lua_State *L)
{
    static const char *const precisions[] = {"float", "double", "mixed", NULL};
    static const char *const backends[] = {"auto", "cuda", "cpu", NULL};
    static int notice_shown = 0;
    const orr_integrator *const *integs = orr_integrators();
    const char *integ_names[8] = {NULL};
    for (int i = 0; i < 7 && integs[i]; i++)
        integ_names[i] = integs[i]->name;

    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 1);
    orr_lua_checkkeys(L, 1, WHO, sim_keys, 0);
    orr_sim_config c;
    orr_sim_config_default(&c);

    long nb = -1;
    lua_getfield(L, 1, "bodies");   /* stays at index 2 */
    if (!lua_isnil(L, 2)) {
        nb = count_of(L, 2);
        if (nb < 0)
            orr_lua_error(L, WHO ": 'bodies' must be an orrery.Bodies or a list of body tables "
                          "(got %s)", orr_lua_describe(L, 2));
        if (nb == 0)
            orr_lua_error(L, WHO ": 'bodies' is empty");
        if (nb > INT_MAX)
            orr_lua_error(L, WHO ": 'bodies' has too many bodies (%I)", (lua_Integer)nb);
    }
    c.n = (long)opt_integer(L, "n", 1, INT_MAX, 0, "an integer from 1 to 2147483647");
    if (c.n == 0 && nb < 0)
        orr_lua_error(L, WHO ": 'n' or 'bodies' is required");
    if (c.n != 0 && nb >= 0 && c.n != nb)
        orr_lua_error(L, WHO ": 'n' is %I but 'bodies' has %I bodies", (lua_Integer)c.n,
                      (lua_Integer)nb);
    if (nb >= 0)
        c.n = nb;
    const int pi = opt_choice(L, "precision", precisions, 0);
    c.precision = pi == 2 ? ORR_MIXED : pi == 1 ? ORR_DOUBLE : ORR_FLOAT;
    c.G = opt_number(L, "G", c.G, NULL, "a finite number");
    c.softening = opt_number(L, "softening", c.softening, nonnegative, "a non-negative number");
    c.dt = opt_number(L, "dt", c.dt, positive, "a positive number");
    int ii = opt_choice(L, "integrator", integ_names, -1);
    if (ii >= 0)
        c.integrator = integ_names[ii];
    /* block time steps: dt_max is the synchronisation interval, the dt of
     * one sim:step() */
    const int blocks = c.integrator && strcmp(c.integrator, "hermite") == 0;
    static const char *const block_keys[] = {"eta", "eta_start", "dt_max", "dt_min",
                                             "regularize"};
    for (int k = 0; !blocks && k < 5; k++) {
        if (lua_getfield(L, 1, block_keys[k]) != LUA_TNIL)
            orr_lua_error(L, WHO ": '%s' is for block time steps (integrator = \"hermite\")",
                          block_keys[k]);
        lua_pop(L, 1);
    }
    if (blocks) {
        if (lua_getfield(L, 1, "dt") != LUA_TNIL)
            orr_lua_error(L, WHO ": integrator \"hermite\" takes dt_max (its synchronisation "
                          "interval: outputs and sim:run's steps come at its multiples; "
                          "sim:step() is one block step), not dt");
        lua_pop(L, 1);
        c.dt = opt_number(L, "dt_max", 1.0 / 16, positive, "a positive number");
        c.dt_min = opt_number(L, "dt_min", 0, NULL, "a number from 0 to dt_max");
        c.eta = opt_number(L, "eta", c.eta, positive, "a positive number");
        /* the starting steps scale with eta (their error would otherwise be a
         * floor: a 1024-body Plummer sphere to t = 10 at eta 0.005 gave
         * |dE/E0| 7.6e-9 with eta_start 0.01, 2.8e-9 with 0.0025) */
        c.eta_start = opt_number(L, "eta_start", c.eta / 2, positive, "a positive number");
        opt_regularize(L, &c);
    }
    c.damping = opt_number(L, "damping", c.damping, unit_interval, "a number in (0, 1]");
    c.law = orr_lua_sim_law(L, 1, WHO);   /* its orrery.Force stays on the stack */
    c.fields = orr_lua_sim_fields(L, 1, WHO);   /* and its fields' holder */
    int bi = opt_choice(L, "backend", backends, 0);
    c.backend = bi == 1 ? ORR_BACKEND_CUDA : bi == 2 ? ORR_BACKEND_CPU : ORR_BACKEND_AUTO;
    c.dims = (int)opt_integer(L, "dims", 2, 3, 3, "2 or 3");
    c.device = (int)opt_integer(L, "device", 0, INT_MAX, orr_lua_default_device(),
                                "a non-negative integer");
    c.comm = orr_lua_comm;
    if (lua_getfield(L, 1, "tune") != LUA_TNIL) {
        if (lua_type(L, -1) == LUA_TBOOLEAN)
            c.tune = lua_toboolean(L, -1) ? ORR_SIM_TUNE_ON : ORR_SIM_TUNE_OFF;
        else if (lua_type(L, -1) == LUA_TSTRING && strcmp(lua_tostring(L, -1), "auto") == 0)
            c.tune = ORR_SIM_TUNE_AUTO;
        else
            orr_lua_error(L, WHO ": 'tune' must be \"auto\", true or false (got %s)",
                          orr_lua_describe(L, -1));
    }
    lua_pop(L, 1);
    c.tune_budget = opt_number(L, "tune_budget", c.tune_budget, positive,
                               "a positive number of seconds");
    if (lua_getfield(L, 1, "kernel") != LUA_TNIL)
        opt_kernel(L, lua_gettop(L), &c.kernel);
    lua_pop(L, 1);
    if (lua_getfield(L, 1, "units") != LUA_TNIL)
        opt_units(L, lua_gettop(L), &c.units);
    lua_pop(L, 1);
    if (lua_getfield(L, 1, "box") != LUA_TNIL) {
        size_t len = lua_type(L, -1) == LUA_TTABLE ? lua_rawlen(L, -1) : 0;
        int ok = len == 2 || len == 3;
        for (size_t k = 0; ok && k < len; k++) {
            lua_rawgeti(L, -1, (lua_Integer)k + 1);
            c.box[k] = lua_tonumber(L, -1);
            ok = lua_type(L, -1) == LUA_TNUMBER && isfinite(c.box[k]) && c.box[k] >= 0;
            lua_pop(L, 1);
        }
        if (!ok)
            orr_lua_error(L, WHO ": 'box' must be {Lx, Ly} or {Lx, Ly, Lz} of non-negative "
                          "numbers, 0 for an open axis (got %s)", orr_lua_describe(L, -1));
    }
    lua_pop(L, 1);

    if (lua_getfield(L, 1, "frame") != LUA_TNIL)
        opt_frame(L, lua_gettop(L), &c);
    lua_pop(L, 1);

    orr_lua_sim *p = lua_newuserdatauv(L, sizeof *p, ORR_LUA_SIM_UV);
    p->sim = NULL;
    luaL_setmetatable(L, ORR_LUA_SIM);
    char notice[1024];
    orr_error err = {0};
    if (orr_sim_create(&p->sim, &c, notice, sizeof notice, &err))
        return orr_lua_fail(L, &err, WHO);
    if (notice[0] && !notice_shown && orr_lua_rank0()) {
        notice_shown = 1;
        fprintf(stderr, "orrery: %s\n", notice);
    }
    orr_lua_sim_notes(p->sim);
    /* how the ranks exchange the bodies: once per process for the same
     * words (a script making many simulations says it once) */
    static char exchange_said[8][600];
    const char *note = NULL;
    if (strcmp(orr_sim_exchange(p->sim, &note), "none") != 0 && orr_lua_rank0()) {
        char line[sizeof exchange_said[0]];
        snprintf(line, sizeof line, "orrery: %d rank%s; %s", orr_comm_size(orr_lua_comm),
                 orr_comm_size(orr_lua_comm) == 1 ? "" : "s", note);
        int k = 0;
        while (k < 8 && exchange_said[k][0] && strcmp(exchange_said[k], line) != 0)
            k++;
        if (k == 8 || !exchange_said[k][0]) {
            if (k < 8)
                memcpy(exchange_said[k], line, sizeof line);
            fprintf(stderr, "%s\n", line);
        }
    }
    if (nb >= 0) {
        const char *msg = load_from(L, p->sim, 2);
        if (msg)
            orr_lua_error(L, WHO ": 'bodies': %s", msg);
    }
    orr_sim_writes_agreed(p->sim);   /* creation is compared over the ranks */
    return 1;
}

/* ---- methods ------------------------------------------------------------------- */

/* The 1-based body index at arg, checked against n; returns it 0-based. */
static long checkindex(lua_State *L, int arg, long n)
{
    lua_Integer i = luaL_checkinteger(L, arg);
    if (i < 1 || i > n)
        luaL_argerror(L, arg,
                      lua_pushfstring(L, "index %I out of range 1..%I", i, (lua_Integer)n));
    return (long)i - 1;
}

/* sim:close() and __close: its frames on disk first (a failure raised
 * after the simulation is freed).  Every rank takes the outcome of rank
 * 0's frames where frames were queued since their last flush (every rank
 * knows; with none, that flush raised every failure); else closing is no
 * collective, so a rank that leaves a scope alone (an error on that rank,
 * caught by pcall) leaves no other rank waiting.  While an error unwinds
 * (__close's second argument, the error object) the error goes on, with
 * no collective either (this rank may be unwinding alone): a frame that
 * failed is not raised in its place (Lua would replace the error with it)
 * but printed, by rank 0 (whose frames they are), and counted for the
 * exit status. */
static int sim_close(lua_State *L)
{
    orr_lua_sim *p = luaL_checkudata(L, 1, ORR_LUA_SIM);
    const int unwinding = !lua_isnoneornil(L, 2);
    const int together = !unwinding && orr_lua_frames_pending(L, 1);
    orr_error err = {0};
    orr_status st = orr_lua_frames_close(L, 1, &err);
    if (together)   /* rank 0's frames: every rank takes their outcome */
        st = orr_comm_agree(orr_lua_comm, st, 0, &err);
    if (p->sim) {
        orr_sim_destroy(p->sim);
        p->sim = NULL;
    }
    if (st && unwinding) {
        orr_error_context(&err, "note: while an error closed its simulation (the error goes "
                          "on)");
        orr_lua_frames_lost(&err);
        return 0;
    }
    return st ? orr_lua_fail(L, &err, NULL) : 0;
}

/* __gc: the same, with nobody left to raise a failure to. */
static int sim_gc(lua_State *L)
{
    orr_lua_sim *p = luaL_checkudata(L, 1, ORR_LUA_SIM);
    orr_error err = {0};
    if (orr_lua_frames_close(L, 1, &err))
        orr_lua_frames_lost(&err);
    if (p->sim) {
        orr_sim_destroy(p->sim);
        p->sim = NULL;
    }
    return 0;
}

/* A stepping call's failure raised; the ranks' agreed stop told to the
 * runner first (orr_lua_stop_agreed). */
static int step_failed(lua_State *L, const orr_sim *s, orr_error *err)
{
    if (err->code == ORR_ERR_INTERRUPTED && err->shared)
        orr_lua_stop_agreed(orr_sim_stop_everywhere(s));
    return orr_lua_fail(L, err, NULL);
}

/* k steps: of dt, or with block time steps (hermite) block steps; with
 * intervals = 1 (sim:_steps, for sim:run) of dt_max with block steps too. */
static int steps(lua_State *L, int intervals)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    lua_Integer k = luaL_optinteger(L, 2, 1);
    orr_error err = {0};
    if (orr_lua_verify_mode && k > 0 && orr_sim_steps(s) == 0 && orr_sim_synchronized(s))
        orr_lua_verify_report(L, s, "before the first step");
    const int blocks = !intervals && orr_sim_integrator(s)->block;
    if ((blocks ? orr_sim_block_steps : orr_sim_step)(s, (long)k, orr_lua_stop, &err)) {
        /* a count below 0 is refused there, after the ranks have compared
         * the call (one rank alone may have it): every rank alike */
        if (k < 0 && !err.shared) {
            orr_error_clear(&err);
            luaL_argerror(L, 2, lua_pushfstring(L, "step count must be >= 0 (got %I)", k));
        }
        return step_failed(L, s, &err);
    }
    orr_lua_view_after(L, 1);   /* the live view, if any, between steps */
    return 0;
}

static int sim_step(lua_State *L)
{
    return steps(L, 0);
}

static int sim_intervals(lua_State *L)
{
    return steps(L, 1);
}

/* sim:advance(t): integrates to time t (>= sim.time) in steps of dt, the
 * last one shortened to land on t. */
static int sim_advance(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    lua_Number t = luaL_checknumber(L, 2);
    const double now = orr_sim_time(s);
    orr_error err = {0};
    /* a time a rounding before the clock is the clock's own: no step */
    if (!isfinite(t) ||
        (t < now && now - t > orr_sim_time_tolerance(orr_sim_config_of(s)->dt, now, t))) {
        /* refused by orr_sim_advance too, after the ranks have compared the
         * call (one rank alone may have it): every rank alike */
        if (orr_sim_advance(s, (double)t, orr_lua_stop, &err) && err.shared)
            return step_failed(L, s, &err);
        orr_error_clear(&err);
        char a[32], b[32], msg[160];
        snprintf(msg, sizeof msg, "time must be finite and >= the current time %s (got %s)",
                 orr_lua_number(a, sizeof a, now), orr_lua_number(b, sizeof b, (double)t));
        luaL_argerror(L, 2, msg);
    }
    if (orr_lua_verify_mode && orr_sim_steps(s) == 0 && t > now)
        orr_lua_verify_report(L, s, "before the first step");
    if (orr_sim_advance(s, (double)t, orr_lua_stop, &err))
        return step_failed(L, s, &err);
    orr_lua_view_after(L, 1);
    return 0;
}

/* sim:_advance(t, k) -> steps taken: at most k steps of sim:advance(t)
 * (for sim:run{until = t}, which goes in chunks: the same steps and bits);
 * 0 once on t. */
static int sim_advance_chunk(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    lua_Number t = luaL_checknumber(L, 2);
    lua_Integer k = luaL_checkinteger(L, 3);
    long taken = 0;
    orr_error err = {0};
    if (orr_sim_advance_steps(s, (double)t, (long)k, &taken, orr_lua_stop, &err))
        return step_failed(L, s, &err);
    orr_lua_view_after(L, 1);
    lua_pushinteger(L, (lua_Integer)taken);
    return 1;
}

/* sim:sync(): waits for the steps queued on the backend and brings the
 * host copy up to date (as reading any body does); for timing. */
static int sim_sync(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    double *pos, *vel;
    mirror(L, s, &pos, &vel);
    return 0;
}

static int sim_body(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    long i = checkindex(L, 2, orr_sim_n(s));
    double *pos, *vel, b[7];
    mirror(L, s, &pos, &vel);
    get_body(pos, vel, i, b);
    push_body(L, b);
    return 1;
}

static int sim_set_body(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    long i = checkindex(L, 2, orr_sim_n(s));
    double *pos, *vel, b[7];
    mirror(L, s, &pos, &vel);
    get_body(pos, vel, i, b);
    const char *msg = read_body(L, 3, b);
    if (!msg)
        msg = body_range(L, s, i, b);
    if (msg)
        return luaL_argerror(L, 3, msg);
    put_body(pos, vel, i, b);
    orr_sim_touch(s);
    return 0;
}

static int sim_bodies(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    long n = orr_sim_n(s);
    double *pos, *vel, b[7];
    mirror(L, s, &pos, &vel);
    lua_createtable(L, n < INT_MAX ? (int)n : INT_MAX, 0);
    for (long i = 0; i < n; i++) {
        get_body(pos, vel, i, b);
        push_body(L, b);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

/* sim:set_bodies(list): bodies 1..#list; missing fields keep their values;
 * all or nothing. */
static int sim_set_bodies(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_settop(L, 2);
    long n = orr_sim_n(s);
    lua_Unsigned m = lua_rawlen(L, 2);
    if (m > (lua_Unsigned)n)
        luaL_argerror(L, 2, lua_pushfstring(L, "%I bodies given, simulation has %I",
                                            (lua_Integer)m, (lua_Integer)n));
    double *pos, *vel;
    mirror(L, s, &pos, &vel);
    double *tmp = lua_newuserdatauv(L, sizeof(double) * 7 * (size_t)(m ? m : 1), 0);
    for (long i = 0; i < (long)m; i++) {
        get_body(pos, vel, i, tmp + 7 * i);
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        const char *msg = read_body(L, -1, tmp + 7 * i);
        if (msg)
            return luaL_argerror(L, 2, lua_pushfstring(L, "body %I: %s", (lua_Integer)i + 1, msg));
        if ((msg = body_range(L, s, i, tmp + 7 * i)) != NULL)
            return luaL_argerror(L, 2, msg);
        lua_pop(L, 1);
    }
    for (long i = 0; i < (long)m; i++)
        put_body(pos, vel, i, tmp + 7 * i);
    if (m)
        orr_sim_touch(s);
    return 0;
}

/* sim:load(bodies): an orrery.Bodies or a list of body tables (missing
 * fields 0), exactly n of them. */
static int sim_load(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    long m = count_of(L, 2);
    if (m < 0)
        return luaL_typeerror(L, 2, "orrery.Bodies or table");
    if (m != orr_sim_n(s))
        return orr_lua_error(L, "sim:load: %I bodies given, simulation has %I", (lua_Integer)m,
                             (lua_Integer)orr_sim_n(s));
    const char *msg = load_from(L, s, 2);
    if (msg)
        return luaL_argerror(L, 2, msg);
    return 0;
}

static void push_vec(lua_State *L, const double v[3])
{
    lua_createtable(L, 0, 3);
    lua_pushnumber(L, v[0]);
    lua_setfield(L, -2, "x");
    lua_pushnumber(L, v[1]);
    lua_setfield(L, -2, "y");
    lua_pushnumber(L, v[2]);
    lua_setfield(L, -2, "z");
}

static int sim_energy(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    double k, u, uf;
    orr_error err = {0};
    if (orr_sim_energy_parts(s, &k, &u, &uf, &err))
        return orr_lua_fail(L, &err, NULL);
    /* potential: the pair potential and the external fields' energy
     * together (total is conserved); external: the fields' part */
    lua_createtable(L, 0, 4);
    lua_pushnumber(L, k);
    lua_setfield(L, -2, "kinetic");
    lua_pushnumber(L, u + uf);
    lua_setfield(L, -2, "potential");
    lua_pushnumber(L, uf);
    lua_setfield(L, -2, "external");
    lua_pushnumber(L, k + (u + uf));
    lua_setfield(L, -2, "total");
    return 1;
}

static int sim_momentum(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    double p[3];
    orr_error err = {0};
    if (orr_sim_momentum(s, p, &err))
        return orr_lua_fail(L, &err, NULL);
    push_vec(L, p);
    return 1;
}

static int sim_angular_momentum(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    double l[3];
    orr_error err = {0};
    if (orr_sim_angular_momentum(s, l, &err))
        return orr_lua_fail(L, &err, NULL);
    push_vec(L, l);
    return 1;
}

static int sim_center_of_mass(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    double x[3], v[3], m;
    orr_error err = {0};
    if (orr_sim_center_of_mass(s, x, v, &m, &err))
        return orr_lua_fail(L, &err, NULL);
    push_vec(L, x);
    push_vec(L, v);
    lua_pushnumber(L, m);
    return 3;
}

static int sim_virial_ratio(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    double q;
    orr_error err = {0};
    if (orr_sim_virial_ratio(s, &q, &err))
        return orr_lua_fail(L, &err, NULL);
    lua_pushnumber(L, q);
    return 1;
}

/* sim:cluster{fractions = {...}, k = 6, about = "density" | "mass", gamma = 0.11}:
 * Lagrangian radii, the Casertano & Hut core, the half-mass radius and
 * relaxation time (core/physics/diag.h). */
/* The regularised groups' membership (groups.h: per body its group's first
 * member's number, or 0), in a userdata left on the stack, or NULL (and
 * nothing pushed) for a run without regularisation. */
static const double *groups_of(lua_State *L, orr_sim *s, const char *who)
{
    const orr_integrator *in = orr_sim_integrator(s);
    int k = -1;
    /* groups describe the state only while it is the integrator's (a body
     * written since: they are formed anew at the next step) */
    for (int f = 0; orr_sim_config_of(s)->regularize && orr_sim_integ_current(s) &&
                    f < in->nfields; f++)
        if (strcmp(in->fields[f].name, "group") == 0)
            k = f;
    if (k < 0)
        return NULL;
    double *g = lua_newuserdatauv(L, sizeof(double) * (size_t)orr_sim_n(s), 0);
    orr_error err = {0};
    if (orr_sim_integ_field(s, k, g, &err))
        orr_lua_fail(L, &err, who);
    return g;
}

/* sim:binaries(): the regularised groups now, hardest first: {count =, kT =,
 * energy = their binding energy summed, [k] = {bodies = {...}, mass =,
 * energy = binding energy, kT = in units of kT, a =, e =, period =, com =}}
 * (a, e, period for pairs; kT = 2/3 of the mean kinetic energy a body). */
static int by_binding(const void *a, const void *b)
{
    const double x = ((const orr_diag_group *)a)->energy, y = ((const orr_diag_group *)b)->energy;
    return x < y ? -1 : x > y;
}

static int sim_binaries(lua_State *L)
{
    static const char *const who = "sim:binaries";
    orr_sim *s = orr_lua_checksim(L, 1);
    const double G = orr_sim_config_of(s)->G;
    const long n = orr_sim_n(s);
    const double *group = groups_of(L, s, who);
    double *pos, *vel, kin = 0, pot = 0;
    orr_error err = {0};
    if (orr_sim_pos(s, &pos, &err) || orr_sim_vel(s, &vel, &err) ||
        orr_sim_energy(s, &kin, &pot, &err))
        return orr_lua_fail(L, &err, who);
    int count = 0;
    orr_diag_group *g = NULL;
    if (group) {
        long most = 0;
        for (long i = 0; i < n; i++)
            most += group[i] == (double)(i + 1);
        g = lua_newuserdatauv(L, sizeof *g * (size_t)(most ? most : 1), 0);
        if (orr_diag_groups(pos, vel, n, group, G, g, (int)most, &count, &err))
            return orr_lua_fail(L, &err, who);
        qsort(g, (size_t)count, sizeof *g, by_binding);
    }
    /* kT from the bodies' motion with each group as one body at its
     * centre of mass (a binary's own motion is its binding, not heat) */
    double kT = 2 * kin / (3 * (double)n);
    if (count > 0) {
        double *mp = lua_newuserdatauv(L, sizeof(double) * 7 * (size_t)n, 0), *mv = mp + 4 * n;
        long m = 0;
        orr_diag_merge_groups(pos, vel, n, group, mp, mv, &m);
        double M = 0, P[3] = {0, 0, 0}, K = 0;
        for (long i = 0; i < m; i++) {
            M += mp[4 * i + 3];
            for (int q = 0; q < 3; q++)
                P[q] += mp[4 * i + 3] * mv[3 * i + q];
        }
        for (long i = 0; i < m; i++)
            for (int q = 0; q < 3; q++) {
                const double u = mv[3 * i + q] - (M > 0 ? P[q] / M : 0);
                K += 0.5 * mp[4 * i + 3] * u * u;
            }
        kT = 2 * K / (3 * (double)m);
        lua_pop(L, 1);
    }
    double total = 0;
    lua_createtable(L, count, 3);
    for (int k = 0; k < count; k++) {
        const orr_diag_group *q = &g[k];
        total += q->energy < 0 ? -q->energy : 0;
        lua_createtable(L, 0, 8);
        lua_createtable(L, q->n, 0);
        for (int m = 0; m < q->n; m++) {
            lua_pushinteger(L, q->members[m] + 1);
            lua_rawseti(L, -2, m + 1);
        }
        lua_setfield(L, -2, "bodies");
        lua_pushnumber(L, q->mass);
        lua_setfield(L, -2, "mass");
        lua_pushnumber(L, -q->energy);
        lua_setfield(L, -2, "energy");
        lua_pushnumber(L, kT > 0 ? -q->energy / kT : 0);
        lua_setfield(L, -2, "kT");
        if (q->n == 2) {
            lua_pushnumber(L, q->a);
            lua_setfield(L, -2, "a");
            lua_pushnumber(L, q->e);
            lua_setfield(L, -2, "e");
            lua_pushnumber(L, q->a > 0 ? 2 * M_PI * sqrt(q->a * q->a * q->a / (G * q->mass))
                                       : 0);
            lua_setfield(L, -2, "period");
        }
        push_vec(L, q->com);
        lua_setfield(L, -2, "com");
        lua_rawseti(L, -2, k + 1);
    }
    lua_pushinteger(L, count);
    lua_setfield(L, -2, "count");
    lua_pushnumber(L, kT);
    lua_setfield(L, -2, "kT");
    lua_pushnumber(L, total);
    lua_setfield(L, -2, "energy");
    return 1;
}

static int sim_cluster(lua_State *L)
{
    static const char *const who = "sim:cluster";
    static const char *const keys[] = {"fractions", "k", "about", "gamma", NULL};
    orr_sim *s = orr_lua_checksim(L, 1);
    orr_diag_options o;
    orr_diag_options_default(&o);
    double fr[ORR_DIAG_MAX_FRACTIONS];
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        orr_lua_checkkeys(L, 2, who, keys, 1);
        if (lua_getfield(L, 2, "fractions") != LUA_TNIL) {
            size_t len = lua_type(L, -1) == LUA_TTABLE ? lua_rawlen(L, -1) : 0;
            if (len < 1 || len > ORR_DIAG_MAX_FRACTIONS)
                orr_lua_error(L, "%s: 'fractions' must be a list of 1 to %d mass fractions (got "
                              "%s)", who, ORR_DIAG_MAX_FRACTIONS, orr_lua_describe(L, -1));
            for (size_t k = 0; k < len; k++) {
                lua_rawgeti(L, -1, (lua_Integer)k + 1);
                if (lua_type(L, -1) != LUA_TNUMBER)
                    orr_lua_error(L, "%s: fraction %d must be a number (got %s)", who,
                                  (int)k + 1, orr_lua_describe(L, -1));
                fr[k] = lua_tonumber(L, -1);
                lua_pop(L, 1);
            }
            o.fractions = fr;
            o.nfractions = (int)len;
        }
        lua_pop(L, 1);
        if (lua_getfield(L, 2, "k") != LUA_TNIL) {
            int isint = 0;
            lua_Integer k = lua_tointegerx(L, -1, &isint);
            if (!isint || k < 2 || k > 64)
                orr_lua_error(L, "%s: 'k' must be an integer from 2 to 64 (got %s)", who,
                              orr_lua_describe(L, -1));
            o.k = (int)k;
        }
        lua_pop(L, 1);
        if (lua_getfield(L, 2, "about") != LUA_TNIL) {
            const char *a = lua_tostring(L, -1);
            if (lua_type(L, -1) != LUA_TSTRING || (strcmp(a, "density") && strcmp(a, "mass")))
                orr_lua_error(L, "%s: 'about' must be \"density\" or \"mass\" (got %s)", who,
                              orr_lua_describe(L, -1));
            o.about_density = strcmp(a, "density") == 0;
        }
        lua_pop(L, 1);
        if (lua_getfield(L, 2, "gamma") != LUA_TNIL)
            o.gamma = orr_lua_checkfinite(L, -1, who, "gamma", "a positive number");
        lua_pop(L, 1);
    }
    o.G = orr_sim_config_of(s)->G;
    double *pos, *vel;
    orr_diag d;
    orr_error err = {0};
    long n = orr_sim_n(s), ngroups = 0;
    const double *group = groups_of(L, s, who);
    if (orr_sim_pos(s, &pos, &err) || orr_sim_vel(s, &vel, &err))
        return orr_lua_fail(L, &err, who);
    const long bodies = n;
    if (group) {   /* a regularised group counts once, at its centre of mass */
        double *mp = lua_newuserdatauv(L, sizeof(double) * 7 * (size_t)n, 0);
        long m = 0;
        orr_diag_merge_groups(pos, vel, n, group, mp, mp + 4 * (size_t)n, &m);
        for (long i = 0; i < n; i++)
            ngroups += group[i] == (double)(i + 1);
        memmove(mp + 4 * (size_t)m, mp + 4 * (size_t)n, sizeof(double) * 3 * (size_t)m);
        pos = mp, vel = mp + 4 * (size_t)m, n = m;
    }
    if (orr_diag_cluster(pos, n, &o, &d, &err)) {
        if (ngroups > 0)   /* what the groups left of the bodies */
            orr_error_context(&err, "%ld bodies, %ld regularised group%s counted once at %s "
                              "centre of mass (%ld in all)", bodies, ngroups,
                              ngroups == 1 ? "" : "s", ngroups == 1 ? "its" : "their", n);
        return orr_lua_fail(L, &err, who);
    }
    const long escapers = orr_diag_escapers(pos, vel, n, o.about_density ? d.density_centre
                                            : d.com, 10 * d.r_half, o.G);
    lua_createtable(L, 0, 12);
    lua_pushinteger(L, ngroups);
    lua_setfield(L, -2, "binaries");
    lua_pushinteger(L, escapers);
    lua_setfield(L, -2, "escapers");
    lua_pushinteger(L, d.n);
    lua_setfield(L, -2, "n");
    lua_pushnumber(L, d.mass);
    lua_setfield(L, -2, "mass");
    push_vec(L, d.com);
    lua_setfield(L, -2, "com");
    push_vec(L, d.density_centre);
    lua_setfield(L, -2, "density_centre");
    lua_pushnumber(L, d.core_radius);
    lua_setfield(L, -2, "core_radius");
    lua_pushnumber(L, d.core_density);
    lua_setfield(L, -2, "core_density");
    lua_pushnumber(L, d.r_half);
    lua_setfield(L, -2, "r_half");
    lua_pushnumber(L, d.t_rh);
    lua_setfield(L, -2, "t_rh");
    lua_createtable(L, d.nfractions, 0);
    lua_createtable(L, d.nfractions, 0);
    for (int f = 0; f < d.nfractions; f++) {
        lua_pushnumber(L, d.fractions[f]);
        lua_rawseti(L, -3, f + 1);
        lua_pushnumber(L, d.lagrangian[f]);
        lua_rawseti(L, -2, f + 1);
    }
    lua_setfield(L, -3, "lagrangian");
    lua_setfield(L, -2, "fractions");
    return 1;
}

static int sim_write(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    const char *path = luaL_checkstring(L, 2);
    orr_error err = {0};
    if (orr_text_write_sim(s, path, &err))
        return orr_lua_fail(L, &err, NULL);
    return 0;
}

/* ---- metamethods ------------------------------------------------------------- */

static int sim_tostring(lua_State *L)
{
    orr_lua_sim *p = luaL_checkudata(L, 1, ORR_LUA_SIM);
    if (!p->sim) {
        lua_pushliteral(L, "orrery.Sim (closed)");
        return 1;
    }
    const orr_sim_config *c = orr_sim_config_of(p->sim);
    lua_pushfstring(L, "orrery.Sim (n=%I, %s, %s, %s, t=%f)", (lua_Integer)c->n,
                    orr_engine_backend_name(orr_sim_engine(p->sim)), orr_precision_name(c->precision),
                    c->integrator, (lua_Number)orr_sim_time(p->sim));
    return 1;
}

/* sim:tune{budget=2, exhaustive=false, verbose=false}: retunes the kernels
 * for this simulation and switches to the winner; returns sim.config. */
static void tune_line(const void *trial, void *ctx)
{
    const orr_tune_trial *t = trial;
    if (t->ok)
        fprintf(stderr, "  %sblock %d unroll %d split %d threads %d: %.4g ms, %.3e "
                "interactions/s, verified\n", t->retimed ? "re-timed " : "", t->spec.launch.block,
                t->spec.launch.unroll, t->spec.launch.split, t->spec.launch.threads, t->ms, t->interactions_per_s);
    else
        fprintf(stderr, "  block %d unroll %d split %d threads %d: rejected: %s\n", t->spec.launch.block,
                t->spec.launch.unroll, t->spec.launch.split, t->spec.launch.threads, t->why);
}

static int sim_tune(lua_State *L)
{
    static const char *const keys[] = {"budget", "exhaustive", "verbose", NULL};
    orr_sim *s = orr_lua_checksim(L, 1);
    double budget = 2.0;
    int exhaustive = 0, verbose = 0;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        orr_lua_checkkeys(L, 2, "orrery.Sim.tune", keys, 0);
        if (lua_getfield(L, 2, "budget") != LUA_TNIL) {
            budget = orr_lua_checkfinite(L, -1, "orrery.Sim.tune", "budget", "a positive number");
            if (!(budget > 0))
                orr_lua_error(L, "orrery.Sim.tune: 'budget' must be a positive number (got %s)",
                              orr_lua_describe(L, -1));
        }
        lua_getfield(L, 2, "exhaustive");
        exhaustive = lua_toboolean(L, -1);
        lua_getfield(L, 2, "verbose");
        verbose = lua_toboolean(L, -1);
        lua_pop(L, 3);
    }
    orr_error err = {0};
    if (orr_sim_tune(s, budget, exhaustive, verbose ? tune_line : NULL, NULL, &err))
        return orr_lua_fail(L, &err, "orrery.Sim.tune");
    orr_lua_sim_notes(s);
    lua_pushliteral(L, "config");
    lua_gettable(L, 1);
    return 1;
}

/* sim.config.hermite: block steps on the GPU, the force + jerk kernel's
 * launch per bucket of active bodies, { source =, {active =, tile =,
 * per_sm =, ms =, from =}, ... } (htune.h); nil where they are the
 * defaults. */
static void push_hermite(lua_State *L, const orr_sim *s)
{
    const orr_htune_result *h = orr_sim_hermite_tuning(s);
    if (!h) {
        lua_pushnil(L);
        return;
    }
    lua_createtable(L, h->nbuckets, 1);
    lua_pushstring(L, h->source);
    lua_setfield(L, -2, "source");
    for (int k = 0; k < h->nbuckets; k++) {
        lua_createtable(L, 0, 5);
        lua_pushinteger(L, h->active[k]);
        lua_setfield(L, -2, "active");
        lua_pushinteger(L, h->launch[k].tile);
        lua_setfield(L, -2, "tile");
        lua_pushinteger(L, h->launch[k].per_sm);
        lua_setfield(L, -2, "per_sm");
        if (h->ms[k] >= 0) {
            lua_pushnumber(L, h->ms[k]);
            lua_setfield(L, -2, "ms");
        }
        lua_pushstring(L, h->from[k]);
        lua_setfield(L, -2, "from");
        lua_rawseti(L, -2, k + 1);
    }
}

/* Methods first (upvalue 1, the table exposed as orrery.Sim), then fields. */
/* sim.config.ranks: every rank's configuration, { {rank =, first =, count =,
 * block =, unroll =, split =, ipt =, prefetch =, threads =, ranges =, source =, ms =,
 * device =, host = }, ... }, the same on every rank. */
static void push_ranks(lua_State *L, const orr_sim *s)
{
    int ranks = 0;
    const orr_sim_rank *r = orr_sim_ranks(s, &ranks);
    lua_createtable(L, ranks, 0);
    for (int k = 0; k < ranks; k++) {
        lua_createtable(L, 0, 14);
        const struct {
            const char *name;
            lua_Integer v;
        } ints[] = {{"rank", k}, {"first", r[k].slice.first}, {"count", r[k].slice.count},
                    {"block", r[k].launch.block}, {"unroll", r[k].launch.unroll},
                    {"split", r[k].launch.split}, {"ipt", r[k].launch.ipt},
                    {"prefetch", r[k].launch.prefetch}, {"threads", r[k].launch.threads},
                    {"ranges", r[k].launch.ranges}};
        for (size_t f = 0; f < sizeof ints / sizeof ints[0]; f++) {
            lua_pushinteger(L, ints[f].v);
            lua_setfield(L, -2, ints[f].name);
        }
        if (r[k].device >= 0) {
            lua_pushinteger(L, r[k].device);
            lua_setfield(L, -2, "device");
        }
        if (r[k].ms > 0) {
            lua_pushnumber(L, r[k].ms);
            lua_setfield(L, -2, "ms");
        }
        lua_pushstring(L, r[k].source);
        lua_setfield(L, -2, "source");
        lua_pushstring(L, r[k].host);
        lua_setfield(L, -2, "host");
        lua_rawseti(L, -2, k + 1);
    }
}

static int sim_index(lua_State *L)
{
    luaL_checkudata(L, 1, ORR_LUA_SIM);
    lua_settop(L, 2);
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL || lua_type(L, 2) != LUA_TSTRING)
        return 1;
    const char *key = lua_tostring(L, 2);
    orr_sim *s = orr_lua_checksim(L, 1);
    const orr_sim_config *c = orr_sim_config_of(s);
    if (strcmp(key, "n") == 0)
        lua_pushinteger(L, (lua_Integer)c->n);
    else if (strcmp(key, "time") == 0)
        lua_pushnumber(L, orr_sim_time(s));
    else if (strcmp(key, "steps") == 0)
        lua_pushinteger(L, (lua_Integer)orr_sim_steps(s));
    else if (strcmp(key, "synchronized") == 0)
        lua_pushboolean(L, orr_sim_synchronized(s));
    else if (strcmp(key, "_sync_time") == 0)   /* for sim:run */
        lua_pushnumber(L, orr_sim_sync_time(s));
    else if (strcmp(key, "dt") == 0)
        lua_pushnumber(L, c->dt);
    else if (strcmp(key, "backend") == 0)
        lua_pushstring(L, orr_engine_backend_name(orr_sim_engine(s)));
    else if (strcmp(key, "exchange") == 0)
        lua_pushstring(L, orr_sim_exchange(s, NULL));
    else if (strcmp(key, "fields") == 0) {   /* the external fields' names, in order */
        const orr_fieldset *fs = orr_sim_fields(s);
        lua_createtable(L, fs->n, 0);
        for (int k = 0; k < fs->n; k++) {
            lua_pushstring(L, fs->f[k].name);
            lua_rawseti(L, -2, k + 1);
        }
    }
    else if (strcmp(key, "blocks") == 0) {   /* block time steps: {blocks, active, ...} */
        orr_block_stats b;
        if (!orr_sim_blocks(s, &b)) {
            lua_pushnil(L);
        } else {
            lua_createtable(L, 0, 8);
            lua_pushinteger(L, b.blocks);
            lua_setfield(L, -2, "blocks");
            lua_pushinteger(L, b.active);
            lua_setfield(L, -2, "active");
            lua_pushnumber(L, b.blocks ? (double)b.active / (double)b.blocks : 0);
            lua_setfield(L, -2, "mean_active");
            lua_pushnumber(L, b.smallest);
            lua_setfield(L, -2, "smallest_dt");
            lua_pushinteger(L, b.formed);
            lua_setfield(L, -2, "formed");
            lua_pushinteger(L, b.parted);
            lua_setfield(L, -2, "parted");
            lua_pushinteger(L, b.stops);
            lua_setfield(L, -2, "stops");
            lua_pushinteger(L, b.host);
            lua_setfield(L, -2, "host");
        }
    } else if (strcmp(key, "eta") == 0)
        lua_pushnumber(L, c->eta);
    else if (strcmp(key, "eta_start") == 0)
        lua_pushnumber(L, c->eta_start);
    else if (strcmp(key, "dt_min") == 0)
        lua_pushnumber(L, c->dt_min);
    else if (strcmp(key, "regularize") == 0) {
        if (!c->regularize)
            lua_pushboolean(L, 0);
        else {
            lua_createtable(L, 0, 3);
            lua_pushnumber(L, c->reg_r_close);
            lua_setfield(L, -2, "r_close");
            lua_pushnumber(L, c->reg_gamma);
            lua_setfield(L, -2, "gamma");
            lua_pushnumber(L, c->reg_encounter);
            lua_setfield(L, -2, "encounter");
        }
    }
    else if (strcmp(key, "dt_max") == 0)
        lua_pushnumber(L, c->dt);
    else if (strcmp(key, "precision") == 0)
        lua_pushstring(L, orr_precision_name(c->precision));
    else if (strcmp(key, "integrator") == 0)
        lua_pushstring(L, c->integrator);
    else if (strcmp(key, "force") == 0)
        lua_pushstring(L, c->force);
    else if (strcmp(key, "G") == 0)
        lua_pushnumber(L, c->G);
    else if (strcmp(key, "softening") == 0)
        lua_pushnumber(L, c->softening);
    else if (strcmp(key, "damping") == 0)
        lua_pushnumber(L, c->damping);
    else if (strcmp(key, "dims") == 0)
        lua_pushinteger(L, c->dims);
    else if (strcmp(key, "box") == 0) {
        if (c->box[0] > 0 || c->box[1] > 0 || c->box[2] > 0) {
            lua_createtable(L, 3, 0);
            for (int k = 0; k < 3; k++) {
                lua_pushnumber(L, c->box[k]);
                lua_rawseti(L, -2, k + 1);
            }
        } else {
            lua_pushnil(L);
        }
    } else if (strcmp(key, "frame") == 0) {   /* the centre and its velocity now */
        double R[3], V[3];
        orr_error err = {0};
        const int fr = orr_sim_frame(s, R, V, &err);
        if (fr < 0)
            return orr_lua_fail(L, &err, "sim.frame");
        if (fr) {
            lua_createtable(L, 0, 3);
            for (int w = 0; w < 2; w++) {
                lua_createtable(L, 3, 0);
                for (int k = 0; k < 3; k++) {
                    lua_pushnumber(L, w ? V[k] : R[k]);
                    lua_rawseti(L, -2, k + 1);
                }
                lua_setfield(L, -2, w ? "velocity" : "center");
            }
            lua_pushnumber(L, orr_sim_time(s));
            lua_setfield(L, -2, "time");
        } else {
            lua_pushnil(L);
        }
    } else if (strcmp(key, "units") == 0) {
        if (orr_units_physical(&c->units)) {
            double cgs[4];   /* length, mass, velocity, time */
            orr_units_cgs(&c->units, c->G, &cgs[0], &cgs[1], &cgs[2], &cgs[3]);
            lua_createtable(L, 0, 6);
            if (c->units.length[0]) {
                lua_pushstring(L, c->units.length);
                lua_setfield(L, -2, "length");
            }
            if (c->units.mass[0]) {
                lua_pushstring(L, c->units.mass);
                lua_setfield(L, -2, "mass");
            }
            static const char *const names[4] = {"length_cm", "mass_g", "velocity_cm_s",
                                                 "time_s"};
            for (int k = 0; k < 4; k++) {
                lua_pushnumber(L, cgs[k]);
                lua_setfield(L, -2, names[k]);
            }
        } else {
            lua_pushnil(L);
        }
    } else if (strcmp(key, "config") == 0) {
        const char *source;
        const orr_kspec *k = orr_sim_kspec(s, &source);
        lua_createtable(L, 0, 9);
        lua_pushinteger(L, k->launch.block);
        lua_setfield(L, -2, "block");
        lua_pushinteger(L, k->launch.unroll);
        lua_setfield(L, -2, "unroll");
        lua_pushinteger(L, k->launch.split);
        lua_setfield(L, -2, "split");
        lua_pushinteger(L, k->launch.ipt);
        lua_setfield(L, -2, "ipt");
        lua_pushinteger(L, k->launch.prefetch);
        lua_setfield(L, -2, "prefetch");
        lua_pushinteger(L, k->launch.threads);
        lua_setfield(L, -2, "threads");
        lua_pushinteger(L, orr_engine_ranges(orr_sim_engine(s)));   /* as run (the automatic choice resolved) */
        lua_setfield(L, -2, "ranges");
        lua_pushstring(L, source);
        lua_setfield(L, -2, "source");
        push_ranks(L, s);
        lua_setfield(L, -2, "ranks");
        push_hermite(L, s);
        lua_setfield(L, -2, "hermite");
    } else if (strcmp(key, "attr") == 0) {
        const orr_law *law = orr_sim_law(s);
        lua_createtable(L, 0, law->nattrs);
        for (int a = 0; a < law->nattrs; a++) {
            orr_lua_push_buffer(L, 1, 3 + a);
            lua_setfield(L, -2, law->attrs[a]);
        }
    } else if (strcmp(key, "pos") == 0)
        orr_lua_push_buffer(L, 1, 0);
    else if (strcmp(key, "vel") == 0)
        orr_lua_push_buffer(L, 1, 1);
    else if (strcmp(key, "mass") == 0)
        orr_lua_push_buffer(L, 1, 2);
    else
        lua_pushnil(L);
    return 1;
}

static const char *const fields[] = {
    "n",       "time", "steps", "dt",  "backend", "precision", "integrator", "force",
    "G", "softening", "damping", "dims", "box", "pos", "vel", "mass", "config", "attr", "exchange",
    "blocks", "eta", "eta_start", "dt_min", "dt_max", "units", "synchronized", "fields",
    "frame", "regularize", NULL,
};

/* Only dt can be set. */
static int sim_newindex(lua_State *L)
{
    orr_sim *s = orr_lua_checksim(L, 1);
    /* lua_tostring only on strings: it would turn a number key into a string
     * in place, and the message would read "1" for sim[1] */
    const char *key = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "";
    if (strcmp(key, "dt") == 0) {
        if (lua_type(L, 3) != LUA_TNUMBER || !(lua_tonumber(L, 3) > 0) ||
            !isfinite(lua_tonumber(L, 3)))
            return orr_lua_error(L, "orrery.Sim: 'dt' must be a positive number (got %s)",
                                 orr_lua_describe(L, 3));
        orr_error err = {0};
        if (orr_sim_set_dt(s, lua_tonumber(L, 3), &err))
            return orr_lua_fail(L, &err, "orrery.Sim");
        return 0;
    }
    if (lua_type(L, 2) == LUA_TSTRING)
        for (int i = 0; fields[i]; i++)
            if (strcmp(fields[i], key) == 0)
                return orr_lua_error(L, "orrery.Sim: field '%s' is read-only", key);
    return orr_lua_error(L, "orrery.Sim: cannot set field %s (only 'dt' can be set)",
                         orr_lua_describe(L, 2));
}

/* orrery._gate(sim, call): over several ranks, the call (its text: the
 * method and its arguments in words, or an on_step's outcome) and the
 * simulation's settings compared before collective work (sim:run, in
 * lua/orrery/run.lua; the C methods are gated below); a difference raised
 * on every rank alike at the user's line.  Nothing with one rank or a
 * closed simulation (the method says so). */
static int l_gate(lua_State *L)
{
    orr_lua_sim *p = luaL_checkudata(L, 1, ORR_LUA_SIM);
    const char *call = luaL_checkstring(L, 2);
    if (!p->sim || !orr_lua_comm || orr_comm_size(orr_lua_comm) == 1)
        return 0;
    orr_error err = {0};
    if (orr_sim_agree_call(p->sim, call, &err))
        return orr_lua_fail(L, &err, NULL);
    return 0;
}

/* A collective method with its call compared first: upvalues the method's
 * C function, its name ("sim:step") and words (agree.lua: a value in words).
 * The method runs in this very frame (called, not through Lua), so its
 * errors name it as before ("bad argument #1 to 'step'"). */
static int gated(lua_State *L)
{
    lua_CFunction raw = lua_tocfunction(L, lua_upvalueindex(1));
    orr_lua_sim *p = luaL_testudata(L, 1, ORR_LUA_SIM);
    if (p && p->sim && orr_lua_comm && orr_comm_size(orr_lua_comm) > 1) {
        const int n = lua_gettop(L);
        luaL_checkstack(L, 2 * n + 4, "too many arguments");
        lua_pushvalue(L, lua_upvalueindex(2));
        lua_pushliteral(L, "(");
        for (int i = 2; i <= n; i++) {
            if (i > 2)
                lua_pushliteral(L, ", ");
            lua_pushvalue(L, lua_upvalueindex(3));
            lua_pushvalue(L, i);
            lua_pushinteger(L, 0);
            lua_call(L, 2, 1);
        }
        lua_pushliteral(L, ")");
        lua_concat(L, lua_gettop(L) - n);
        orr_error err = {0};
        if (orr_sim_agree_call(p->sim, lua_tostring(L, -1), &err))
            return orr_lua_fail(L, &err, NULL);
        lua_settop(L, n);
    }
    return raw(L);
}

/* orrery._gate_methods(Sim, names, words): each C method named replaced by
 * a gated one (agree.lua, over several ranks). */
static int l_gate_methods(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TFUNCTION);
    for (lua_Integer i = 1; lua_geti(L, 2, i) == LUA_TSTRING; i++) {
        const char *name = lua_tostring(L, -1);
        lua_getfield(L, 1, name);
        if (!lua_tocfunction(L, -1))
            return luaL_error(L, "orrery.Sim.%s is not a C function", name);
        lua_pushfstring(L, "sim:%s", name);
        lua_pushvalue(L, 3);
        lua_pushcclosure(L, gated, 3);
        lua_setfield(L, 1, name);
        lua_pop(L, 1);
    }
    return 0;
}

static const luaL_Reg funcs[] = {
    {"simulation", l_simulation},
    {"_gate", l_gate},
    {"_gate_methods", l_gate_methods},
    {NULL, NULL},
};

static const luaL_Reg meth[] = {
    {"close", sim_close},
    {"step", sim_step},
    {"_steps", sim_intervals},
    {"advance", sim_advance},
    {"_advance", sim_advance_chunk},
    {"sync", sim_sync},
    {"body", sim_body},
    {"set_body", sim_set_body},
    {"bodies", sim_bodies},
    {"set_bodies", sim_set_bodies},
    {"load", sim_load},
    {"energy", sim_energy},
    {"momentum", sim_momentum},
    {"angular_momentum", sim_angular_momentum},
    {"center_of_mass", sim_center_of_mass},
    {"virial_ratio", sim_virial_ratio},
    {"cluster", sim_cluster},
    {"binaries", sim_binaries},
    {"write", sim_write},
    {"tune", sim_tune},
    {NULL, NULL},
};

static const luaL_Reg metameth[] = {
    {"__newindex", sim_newindex},
    {"__gc", sim_gc},
    {"__close", sim_close},
    {"__tostring", sim_tostring},
    {"__index", NULL},   /* placeholder, set below */
    {NULL, NULL},
};

void orr_lua_open_sim(lua_State *L)
{
    luaL_newmetatable(L, ORR_LUA_SIM);
    luaL_setfuncs(L, metameth, 0);
    luaL_newlibtable(L, meth);
    luaL_setfuncs(L, meth, 0);
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, sim_index, 1);
    lua_setfield(L, -3, "__index");
    lua_setfield(L, -3, "Sim");   /* module.Sim = methods */
    lua_pop(L, 1);                /* metatable */
    luaL_setfuncs(L, funcs, 0);
}
