/* integrator: the fixed-step schemes and the table of integrators (see
 * integrator.h).  Each drives the engine's force, kick and drift kernels on
 * the environment's targets. */
#include "integrator.h"

#include <math.h>
#include <string.h>

orr_status orr_integ_moved(orr_integ_env *env, orr_error *err)
{
    return env->exchange ? env->exchange(env, env->exchange_ctx, 0, err) : ORR_OK;
}

orr_status orr_integ_moved_force(orr_integ_env *env, orr_error *err)
{
    return env->exchange ? env->exchange(env, env->exchange_ctx, 1, err)
                         : orr_engine_force(env->engine, env->targets, err);
}

/* Accelerations of the targets into the engine's buffer only: nothing is
 * downloaded; at the positions' time. */
static orr_status force(orr_integ_env *env, orr_error *err)
{
    orr_engine_set_time(env->engine, env->time, 0);
    return orr_engine_force(env->engine, env->targets, err);
}

static orr_status kick(orr_integ_env *env, double h, double damping, orr_error *err)
{
    return orr_engine_kick_range(env->engine, env->targets, h, damping, err);
}

/* x += v h on the targets, then every rank's positions to every rank; the
 * positions' time on by h. */
static orr_status drift(orr_integ_env *env, double h, orr_error *err)
{
    orr_status st = orr_engine_drift_range(env->engine, env->targets, h, err);
    env->time += h;
    return st ? st : orr_integ_moved(env, err);
}

static orr_status step_euler(void *state, orr_integ_env *env, orr_error *err)
{
    orr_status st = force(env, err);
    if (!st)
        st = kick(env, env->dt, env->damping, err);
    if (!st)
        st = drift(env, env->dt, err);
    env->acc_valid = 0;
    return st;
}

/* kick-drift-kick with the accelerations valid on entry and exit; the first
 * and last half kicks are given separately so yoshida4 can merge them. */
static orr_status kdk(orr_integ_env *env, double k1, double d, double k2, int last,
                      orr_error *err)
{
    orr_status st = ORR_OK;
    if (!env->acc_valid) {
        st = force(env, err);
        if (st)
            return st;
        env->acc_valid = 1;
    }
    if (k1 != 0)
        st = kick(env, k1, 1.0, err);
    if (!st) {   /* drift, exchange and the next force (overlapped over several GPUs) */
        env->acc_valid = 0;
        st = orr_engine_drift_range(env->engine, env->targets, d, err);
        env->time = last ? env->time_end : env->time + d;
    }
    if (!st) {
        orr_engine_set_time(env->engine, env->time, 0);
        st = orr_integ_moved_force(env, err);
    }
    if (!st) {
        env->acc_valid = 1;
        if (k2 != 0)
            st = kick(env, k2, 1.0, err);
    }
    return st;
}

static orr_status step_leapfrog(void *state, orr_integ_env *env, orr_error *err)
{
    double h = env->dt;
    return kdk(env, 0.5 * h, h, 0.5 * h, 1, err);
}

/* Yoshida (1990): three leapfrog substeps of w1 h, w0 h, w1 h, adjacent half
 * kicks merged: K D A K D A K D A K, three force evaluations. */
static orr_status step_yoshida4(void *state, orr_integ_env *env, orr_error *err)
{
    const double c = cbrt(2.0), w1 = 1.0 / (2.0 - c), w0 = -c / (2.0 - c);
    const double h = env->dt;
    orr_status st = kdk(env, 0.5 * w1 * h, w1 * h, 0.5 * (w1 + w0) * h, 0, err);
    if (!st)
        st = kdk(env, 0, w0 * h, 0.5 * (w0 + w1) * h, 0, err);
    if (!st)
        st = kdk(env, 0, w1 * h, 0.5 * w1 * h, 1, err);
    return st;
}

static const orr_integrator integ_euler = {
    .name = "euler", .order = 1, .forces_per_step = 1, .step = step_euler};
static const orr_integrator integ_leapfrog = {
    .name = "leapfrog", .order = 2, .forces_per_step = 1, .step = step_leapfrog};
static const orr_integrator integ_yoshida4 = {
    .name = "yoshida4", .order = 4, .forces_per_step = 3, .step = step_yoshida4};

static const orr_integrator *const integ_list[] = {&integ_euler, &integ_leapfrog, &integ_yoshida4,
                                                   &orr_integrator_hermite, NULL};

const orr_integrator *const *orr_integrators(void)
{
    return integ_list;
}

const orr_integrator *orr_integrator_find(const char *name)
{
    if (!name)
        return NULL;
    for (int k = 0; integ_list[k]; k++)
        if (strcmp(integ_list[k]->name, name) == 0)
            return integ_list[k];
    return NULL;
}
