/* kspec: kernel specifications -> generated source (see kspec.h). */
#include "kspec.h"
#include "kfamily.h"
#include "ksrc.h"
#include "law.h"
#include "field.h"
#include "util.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void orr_physics_default(orr_physics *p)
{
    memset(p, 0, sizeof *p);
    snprintf(p->force, sizeof p->force, "gravity");
    p->precision = ORR_FLOAT;
    p->softening = 0.01;
    p->G = 1.0;
}

void orr_launch_default(orr_launch *l, orr_target target)
{
    memset(l, 0, sizeof *l);
    l->block = target == ORR_TARGET_GPU ? 512 : 1024;
    l->unroll = target == ORR_TARGET_GPU ? 16 : 4;
    l->split = 1;
    l->ipt = 1;
    l->ftz = 1;
    l->newton = 2;
}

void orr_kspec_default(orr_kspec *s, orr_target target)
{
    orr_physics_default(&s->phys);
    orr_launch_default(&s->launch, target);
}

void orr_kspec_reference(const orr_physics *p, orr_kspec *out)
{
    out->phys = *p;
    out->phys.precision = ORR_DOUBLE;
    orr_launch_default(&out->launch, ORR_TARGET_CPU);
}

orr_status orr_kspec_validate(const orr_kspec *s, orr_target target, orr_error *err)
{
    if (s->phys.law && strcmp(s->phys.law->name, s->phys.force) != 0)
        return orr_fail(err, ORR_ERR_ARG, "kernel spec names force law '%s' but carries law '%s'",
                        s->phys.force, s->phys.law->name);
    if (!s->phys.force[0] || strspn(s->phys.force, "abcdefghijklmnopqrstuvwxyz0123456789_") != strlen(s->phys.force))
        return orr_fail(err, ORR_ERR_ARG,
                        "invalid force law name '%s' (lowercase letters, digits, '_')", s->phys.force);
    if (target == ORR_TARGET_GPU) {
        if (s->launch.block < 32 || s->launch.block > 1024 || s->launch.block % 32)
            return orr_fail(err, ORR_ERR_ARG,
                            "invalid block size %d: must be a multiple of 32 from 32 to 1024",
                            s->launch.block);
        if (s->launch.split < 1 || s->launch.split > 32 || (s->launch.split & (s->launch.split - 1)))
            return orr_fail(err, ORR_ERR_ARG,
                            "invalid split %d: threads per body must be 1, 2, 4, 8, 16 or 32",
                            s->launch.split);
        if (s->launch.unroll < 1 || s->launch.unroll > 64)
            return orr_fail(err, ORR_ERR_ARG, "invalid unroll %d: must be from 1 to 64", s->launch.unroll);
        if (s->launch.ipt < 1 || s->launch.ipt > 8)
            return orr_fail(err, ORR_ERR_ARG,
                            "invalid bodies per thread %d: must be from 1 to 8", s->launch.ipt);
        if (s->launch.prefetch != 0 && s->launch.prefetch != 1)
            return orr_fail(err, ORR_ERR_ARG, "invalid prefetch %d: must be 0 or 1",
                            s->launch.prefetch);
        if (s->launch.ftz != 0 && s->launch.ftz != 1)
            return orr_fail(err, ORR_ERR_ARG, "invalid ftz %d: must be 0 or 1", s->launch.ftz);
        if (s->launch.newton != 1 && s->launch.newton != 2)
            return orr_fail(err, ORR_ERR_ARG, "invalid newton %d: must be 1 or 2", s->launch.newton);
        if (s->launch.ranges < 0 || s->launch.ranges > ORR_KSPEC_MAX_RANGES)
            return orr_fail(err, ORR_ERR_ARG,
                            "invalid ranges %d: must be from 0 (automatic) to %d", s->launch.ranges,
                            ORR_KSPEC_MAX_RANGES);
    } else if (s->launch.block < 16 || s->launch.block > (1 << 20)) {
        return orr_fail(err, ORR_ERR_ARG, "invalid CPU tile size %d: must be from 16 to 1048576",
                        s->launch.block);
    } else if (s->launch.threads < 0 || s->launch.threads > 4096) {
        return orr_fail(err, ORR_ERR_ARG, "invalid thread count %d: must be from 0 (all) to 4096",
                        s->launch.threads);
    }
    if (!isfinite(s->phys.softening) || s->phys.softening < 0)
        return orr_fail(err, ORR_ERR_ARG, "invalid softening %g: must be finite and >= 0",
                        s->phys.softening);
    /* eps^2 is baked in the spec's precision: it must be 0 or a normal
     * number there, else it flushes to 0 (unsoftened r2 = 0 divides by
     * zero) or overflows */
    const char *pname = orr_precision_name(s->phys.precision);
    double lo = ORR_STORED_DOUBLE(s->phys.precision) ? DBL_MIN : FLT_MIN;
    double hi = ORR_STORED_DOUBLE(s->phys.precision) ? DBL_MAX : FLT_MAX;
    double eps2 = s->phys.softening * s->phys.softening;
    if (s->phys.softening > 0 && !(eps2 >= lo && eps2 <= hi))
        return orr_fail(err, ORR_ERR_ARG, "invalid softening %g: its square %s in %s (softening "
                        "must be 0 or from %.3g to %.3g)", s->phys.softening,
                        eps2 < lo ? "underflows" : "overflows", pname, sqrt(lo), sqrt(hi));
    if (!isfinite(s->phys.G) || fabs(s->phys.G) > hi)
        return orr_fail(err, ORR_ERR_ARG, "invalid G %g: must be finite and at most %.3g in "
                        "magnitude in %s", s->phys.G, hi, pname);
    for (int k = 0; k < 3; k++)
        if (!isfinite(s->phys.box[k]) || s->phys.box[k] < 0 || s->phys.box[k] > hi)
            return orr_fail(err, ORR_ERR_ARG, "invalid box length %g on axis %c: must be finite, "
                            ">= 0 (0 = open) and at most %.3g in %s", s->phys.box[k], "xyz"[k],
                            hi, pname);
    /* the law's params are constants (or kernel arguments) in the precision */
    for (int k = 0; s->phys.law && k < s->phys.law->nparams; k++)
        if (!(fabs(s->phys.law->params[k].value) <= hi))
            return orr_fail(err, ORR_ERR_ARG, "invalid param '%s' = %g: must be finite and at "
                            "most %.3g in magnitude in %s", s->phys.law->params[k].name,
                            s->phys.law->params[k].value, hi, pname);
    for (int f = 0; s->phys.fields && f < s->phys.fields->n; f++)
        for (int k = 0; k < s->phys.fields->f[f].nparams; k++)
            if (!(fabs(s->phys.fields->f[f].params[k].value) <= hi))
                return orr_fail(err, ORR_ERR_ARG, "invalid param '%s' = %g of field '%s': must "
                                "be finite and at most %.3g in magnitude in %s",
                                s->phys.fields->f[f].params[k].name,
                                s->phys.fields->f[f].params[k].value, s->phys.fields->f[f].name,
                                hi, pname);
    return ORR_OK;
}

/* Appends kernels_src/<name> under a #line directive naming it. */
static orr_status append_file(orr_buf *b, const char *name, orr_error *err)
{
    char *text = NULL;
    orr_status st = orr_ksrc_get(name, &text, NULL, 0, err);
    if (st)
        return st;
    int bad = orr_buf_printf(b, "#line 1 \"%s\"\n", name) || orr_buf_put(b, text, strlen(text)) ||
              orr_buf_put(b, "\n", 1);
    free(text);
    return bad ? orr_fail(err, ORR_ERR_NOMEM, "out of memory generating source") : ORR_OK;
}

orr_status orr_kspec_law(const orr_kspec *s, orr_law *out, orr_error *err)
{
    return s->phys.law ? orr_law_copy(out, s->phys.law, err) : orr_law_builtin(s->phys.force, out, err);
}

orr_status orr_kspec_source(const orr_kspec *s, const orr_kfamily *f, orr_target target,
                            char **src, orr_error *err)
{
    orr_status st = orr_kspec_validate(s, target, err);
    if (st)
        return st;
    const char *file = target == ORR_TARGET_GPU ? f->gpu_source : f->cpu_source;
    if (!file)
        return orr_fail(err, ORR_ERR_ARG, "kernel family '%s' has no %s source", f->name,
                        target == ORR_TARGET_GPU ? "GPU" : "CPU");
    /* validated: e2 is 0 or normal in the spec's precision, so ORR_SOFTENED
     * says exactly whether r2 = d2 + ORR_EPS2 can be 0 */
    const double e2 = s->phys.softening * s->phys.softening;
    char eps[64], eps2[64], g[64];
    orr_hexfloat(eps, sizeof eps, s->phys.softening);
    orr_hexfloat(eps2, sizeof eps2, e2);
    orr_hexfloat(g, sizeof g, s->phys.G);
    orr_buf b = {0};
    int bad = orr_buf_printf(
        &b,
        "/* orrery generated kernel source: %s law, %s target */\n"
        "#define ORR_BLOCK %d\n"
        "#define ORR_SOFTENING %s /* %.17g */\n#define ORR_EPS2 %s\n"
        "#define ORR_SOFTENED %d\n#define ORR_G %s /* %.17g */\n"
        "#define ORR_LAW_MAX_RUNTIME %d\n#define ORR_RT_FIELD %d\n#define ORR_RT_T0 %d\n"
        "#define ORR_RT_UNIT %d\n#define ORR_RT_FRAME %d\n#define ORR_RT_SLOTS %d\n",
        s->phys.force, target == ORR_TARGET_GPU ? "GPU" : "CPU", s->launch.block, eps, s->phys.softening, eps2,
        e2 > 0 ? 1 : 0, g, s->phys.G, ORR_LAW_MAX_RUNTIME, ORR_RT_FIELD, ORR_RT_T0, ORR_RT_UNIT,
        ORR_RT_FRAME, ORR_RT_SLOTS);
    for (int k = 0; k < 3; k++) {
        char l[64], inv[64];
        orr_hexfloat(l, sizeof l, s->phys.box[k]);
        orr_hexfloat(inv, sizeof inv, s->phys.box[k] > 0 ? 1.0 / s->phys.box[k] : 0.0);
        bad = bad || orr_buf_printf(&b, "#define ORR_BOX_%c %s\n#define ORR_INV_BOX_%c %s\n",
                                    "XYZ"[k], l, "XYZ"[k], inv);
    }
    bad = bad || orr_buf_printf(&b, "#define ORR_MIXED %d\n", s->phys.precision == ORR_MIXED);
    bad = bad || orr_buf_printf(&b, "#define ORR_PERIODIC %d\n",
                                s->phys.box[0] > 0 || s->phys.box[1] > 0 || s->phys.box[2] > 0);
    if (target == ORR_TARGET_CPU)
        bad = bad || orr_buf_printf(&b, "#define ORR_DOUBLE %d\n#define ORR_THREADS %d\n",
                                    ORR_STORED_DOUBLE(s->phys.precision), s->launch.threads);
    else   /* GPU-only constants stay out of CPU sources (and their cache keys) */
        bad = bad || orr_buf_printf(&b, "#define ORR_UNROLL %d\n#define ORR_SPLIT %d\n"
                                    "#define ORR_IPT %d\n#define ORR_PREFETCH %d\n"
                                    "#define ORR_RSQRT64_NEWTON %d\n",
                                    s->launch.unroll, s->launch.split, s->launch.ipt,
                                    s->launch.prefetch, s->launch.newton);
    if (bad) {
        orr_buf_free(&b);
        return orr_fail(err, ORR_ERR_NOMEM, "out of memory generating source");
    }
    st = append_file(&b, "prelude.h", err);
    if (!st)
        st = append_file(&b, "special.h", err);
    orr_law law;
    if (!st && (st = orr_kspec_law(s, &law, err)) == ORR_OK) {
        if ((st = orr_law_validate(&law, err)) == ORR_OK && orr_law_emit(&law, &b))
            st = orr_fail(err, ORR_ERR_NOMEM, "out of memory generating source");
        orr_law_free(&law);
    }
    if (!st && (st = orr_fieldset_validate(s->phys.fields, err)) == ORR_OK &&
        orr_fieldset_emit(s->phys.fields, target == ORR_TARGET_CPU, &b))
        st = orr_fail(err, ORR_ERR_NOMEM, "out of memory generating source");
    if (!st && target == ORR_TARGET_GPU && f->gpu_header)
        st = append_file(&b, f->gpu_header, err);
    if (!st)
        st = append_file(&b, file, err);
    if (st) {
        orr_buf_free(&b);
        return st;
    }
    *src = b.data;
    return ORR_OK;
}

int orr_kspec_nvrtc_options(const orr_kspec *s, const char *opts[ORR_KSPEC_MAX_OPTS])
{
    int n = 0;
    opts[n++] = "-std=c++17";
    opts[n++] = "--fmad=true";
    opts[n++] = s->launch.ftz ? "--ftz=true" : "--ftz=false";
    return n;
}

const char *orr_precision_name(orr_precision p)
{
    return p == ORR_MIXED ? "mixed" : p == ORR_DOUBLE ? "double" : "float";
}

const char *orr_precision_ctype(orr_precision p)
{
    return ORR_STORED_DOUBLE(p) ? "double" : "float";
}

orr_status orr_precision_parse(const char *name, orr_precision *p, orr_error *err)
{
    if (strcmp(name, "float") == 0)
        *p = ORR_FLOAT;
    else if (strcmp(name, "double") == 0)
        *p = ORR_DOUBLE;
    else if (strcmp(name, "mixed") == 0)
        *p = ORR_MIXED;
    else
        return orr_fail(err, ORR_ERR_ARG, "invalid precision '%s' (expected float, double or "
                        "mixed)", name);
    return ORR_OK;
}

const char *orr_variant_name(orr_variant v)
{
    return v == ORR_VARIANT_NAIVE ? "naive" : v == ORR_VARIANT_REFERENCE ? "reference" : "tiled";
}

orr_status orr_variant_parse(const char *name, orr_variant *v, orr_error *err)
{
    if (strcmp(name, "tiled") == 0)
        *v = ORR_VARIANT_TILED;
    else if (strcmp(name, "naive") == 0)
        *v = ORR_VARIANT_NAIVE;
    else if (strcmp(name, "reference") == 0)
        *v = ORR_VARIANT_REFERENCE;
    else
        return orr_fail(err, ORR_ERR_ARG,
                        "invalid variant '%s' (expected tiled, naive or reference)", name);
    return ORR_OK;
}

void orr_kspec_describe(const orr_kspec *s, char *buf, size_t size)
{
    int n = snprintf(buf, size, "%s %s block=%d unroll=%d split=%d ipt=%d%s eps=%g G=%g",
                     s->phys.force, orr_precision_name(s->phys.precision), s->launch.block,
                     s->launch.unroll, s->launch.split, s->launch.ipt,
                     s->launch.prefetch ? " prefetch=1" : "", s->phys.softening, s->phys.G);
    if (n >= 0 && (size_t)n < size && (s->phys.box[0] > 0 || s->phys.box[1] > 0 || s->phys.box[2] > 0))
        snprintf(buf + n, size - (size_t)n, " box=%g,%g,%g", s->phys.box[0], s->phys.box[1], s->phys.box[2]);
}

void orr_launch_describe(const orr_launch *l, char *buf, size_t size)
{
    snprintf(buf, size, "block %d, unroll %d, split %d, ipt %d, threads %d, ranges %d%s", l->block,
             l->unroll, l->split, l->ipt, l->threads, l->ranges, l->prefetch ? ", prefetch" : "");
}
