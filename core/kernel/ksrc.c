/* ksrc: embedded kernel sources and the ORRERY_KERNELS_DIR override. */
#include "ksrc.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

orr_status orr_ksrc_get(const char *name, char **text, char *origin, size_t origin_size,
                        orr_error *err)
{
    const char *dir = getenv("ORRERY_KERNELS_DIR");
    if (dir && *dir) {
        char *path = orr_asprintf("%s/%s", dir, name);
        if (!path)
            return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
        if (origin)
            snprintf(origin, origin_size, "%s", path);
        orr_status st = orr_read_file(path, text, NULL, err);
        if (st)
            orr_error_context(err, "ORRERY_KERNELS_DIR is set");
        free(path);
        return st;
    }
    for (const orr_ksrc_file *f = orr_ksrc_embedded; f->name; f++) {
        if (strcmp(f->name, name) == 0) {
            *text = malloc(f->len + 1);
            if (!*text)
                return orr_fail(err, ORR_ERR_NOMEM, "out of memory");
            memcpy(*text, f->text, f->len + 1);
            if (origin)
                snprintf(origin, origin_size, "embedded:%s", name);
            return ORR_OK;
        }
    }
    return orr_fail(err, ORR_ERR_ARG, "no kernel source named '%s'", name);
}

orr_status orr_ksrc_builtin(const char *dir, const char *name, const char *what,
                            const char *const *names, char **text, orr_error *err)
{
    char file[128];
    snprintf(file, sizeof file, "%s/%s.h", dir, name);
    orr_error e = {0};
    orr_status st = orr_ksrc_get(file, text, NULL, 0, &e);
    if (!st)
        return ORR_OK;
    for (const orr_ksrc_file *f = orr_ksrc_embedded; f->name; f++)
        if (strcmp(f->name, file) == 0) {
            orr_fail(err, st, "%s", e.msg);
            orr_error_clear(&e);
            return st;
        }
    orr_error_clear(&e);
    char list[512] = "";
    size_t used = 0;
    for (int k = 0; names[k] && used < sizeof list; k++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", k ? ", " : "", names[k]);
    return orr_fail(err, ORR_ERR_ARG, "unknown %s '%s' (built in: %s)", what, name, list);
}
