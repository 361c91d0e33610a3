/* ksrc: the kernel sources of kernels_src/, embedded at build time, or read
 * from $ORRERY_KERNELS_DIR when set (so kernel work needs no rebuild). */
#ifndef ORR_KSRC_H
#define ORR_KSRC_H

#include <stddef.h>
#include "err.h"

typedef struct {
    const char *name;   /* path relative to kernels_src/, e.g. "forces/gravity.h" */
    const char *text;
    size_t len;
} orr_ksrc_file;

extern const orr_ksrc_file orr_ksrc_embedded[];   /* NULL-name terminated */

/* Gets a kernel source by name into *text (heap, caller frees): from
 * $ORRERY_KERNELS_DIR/name when that variable is set, else the embedded copy.
 * *origin (may be NULL) gets the path it came from, e.g. "embedded:prelude.h". */
orr_status orr_ksrc_get(const char *name, char **text, char *origin, size_t origin_size,
                        orr_error *err);

/* A built-in's source dir/NAME.h (forces/, fields/) into *text, as
 * orr_ksrc_get.  A file that is not there: ORR_ERR_ARG "unknown WHAT
 * 'NAME' (built in: names...)", unless it is embedded (ORRERY_KERNELS_DIR
 * lacks it, or cannot be read): then the read error, which says what is
 * wrong. */
orr_status orr_ksrc_builtin(const char *dir, const char *name, const char *what,
                            const char *const *names, char **text, orr_error *err);

#endif
