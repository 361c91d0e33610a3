/* kfamily: the kernel families' descriptions (see kfamily.h). */
#include "kfamily.h"

#include <stdio.h>
#include <string.h>

const orr_kfamily orr_family_direct = {
    .name = "direct",
    .gpu_source = "direct.cu",
    .gpu_header = "kepler.h",
    .cpu_source = "direct_cpu.c",
    .ngpu = 28,
    .gpu_kernels = {"orr_accel", "orr_accel_naive", "orr_kick", "orr_drift", "orr_potential",
                    "orr_combine", "orr_hnext", "orr_hpredict", "orr_hnext_predict",
                    "orr_accel_jerk64",
                    "orr_accel_jerk128", "orr_accel_jerk256", "orr_jerk_combine",
                    "orr_hcorrect", "orr_hstart", "orr_hloop",
                    "orr_hinterval", "orr_hchunks", "orr_hlist", "orr_hpack", "orr_hunpack",
                    "orr_accel_jerk_groups", "orr_field_potential", "orr_fields_add",
                    "orr_hinterval_watched", "orr_hsince", "orr_hput", "orr_hnoise"},
    .ncpu = 6,
    .cpu_entries = {"orr_cpu_accel", "orr_cpu_potential", "orr_cpu_kick", "orr_cpu_drift",
                    "orr_cpu_accel_jerk", "orr_cpu_field_potential"},
    .nbuffers = 3,
    .buffers = {{"pos", 4}, {"vel", 3}, {"acc", 3}},
    .tuned = ORR_TUNE_BLOCK | ORR_TUNE_UNROLL | ORR_TUNE_SPLIT | ORR_TUNE_IPT | ORR_TUNE_RANGES |
             ORR_TUNE_THREADS | ORR_TUNE_PREFETCH,
};

const orr_kfamily orr_family_render = {
    .name = "render",
    .gpu_source = "render.cu",
    .ngpu = 3,
    .gpu_kernels = {"orr_deposit_clear", "orr_deposit", "orr_view_sample"},
};

static const orr_kfamily *const families[] = {&orr_family_direct, &orr_family_render};

const orr_kfamily *orr_kfamily_find(const char *name)
{
    for (size_t k = 0; k < sizeof families / sizeof families[0]; k++)
        if (strcmp(families[k]->name, name) == 0)
            return families[k];
    return NULL;
}

void orr_kexprs_make(orr_kexprs *x, const orr_kfamily *f, orr_precision p)
{
    x->count = f->ngpu;
    for (int k = 0; k < f->ngpu; k++) {
        snprintf(x->text[k], sizeof x->text[k], "%s<%s>", f->gpu_kernels[k],
                 orr_precision_ctype(p));
        x->expr[k] = x->text[k];
    }
}
