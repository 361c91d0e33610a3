/* hostcc: the CPU backend's compiler.  The generated C source goes through
 * the host C compiler ($CC, else cc) with -O3 -march=native -fopenmp into a
 * shared object, which is loaded from memory (memfd + dlopen), so cached
 * objects never need a file of their own. */
#ifndef ORR_HOSTCC_H
#define ORR_HOSTCC_H

#include <stddef.h>
#include "err.h"

/* The compile flags used for every kernel object. */
const char *orr_hostcc_flags(void);
/* The compiler command as given: $CC (with any flags it carries, e.g.
 * "gcc -O2": words split on blanks, no quoting), else "cc".  Part of the
 * kernel cache key, next to the compiler's identity, since the same
 * compiler run differently makes different objects.  The command run is an
 * argument vector: its words, the flags, then the paths of the temporary
 * files whole (a $TMPDIR with blanks is fine). */
const char *orr_hostcc_command(void);
/* The flags added for kernels of one precision: "-ffast-math" for float
 * (approximate rsqrt with a Newton step, as a GPU has; the compensated tile
 * sums are kept out of it), none for double, which stays the exact
 * reference. */
const char *orr_hostcc_precision_flags(int is_double);

/* Identity for cache keys and `orrery info`: the compiler's first --version
 * line, and the CPU's (orr_hostcc_cpu_identity of /proc/cpuinfo), since code
 * built with -march=native on one CPU may not run on another.  Computed
 * once. */
orr_status orr_hostcc_identity(const char **compiler, const char **cpu, orr_error *err);
/* The CPU part of that identity from the text of a /proc/cpuinfo, into out
 * (size bytes): "NAME (features HASH)".  x86: the first `model name` and a
 * hash of the first `flags` line.  Arm (aarch64 has neither): one name per
 * kind of core ("ARM Neoverse-V2", or "CPU 0x41:0xd4f" for a part not in
 * orrery's table; big.LITTLE kinds joined by " + "), the hash over each
 * kind's `CPU implementer`, `CPU part`, `CPU variant` and `Features`.
 * Other layouts: a `cpu`/`uarch` line as the name, the hash over the
 * distinct lines but for clocks and core numbers. */
void orr_hostcc_cpu_identity(const char *cpuinfo, char *out, size_t size);

/* Compiles src (named `name` in diagnostics) with the kernel flags and
 * `extra` (more flags, may be NULL) into a shared object; *so (heap) and *len
 * receive its bytes.  On a compile error returns ORR_ERR_COMPILE with the
 * first error line in msg and the full compiler output in err->log. */
orr_status orr_hostcc_compile(const char *src, const char *name, const char *extra, void **so,
                              size_t *len, double *seconds, orr_error *err);

typedef struct {
    void *dl;   /* dlopen handle */
    int fd;     /* memfd holding the object, open while loaded */
} orr_hostcc_lib;

/* Loads shared-object bytes; unload closes both handle and memfd. */
orr_status orr_hostcc_load(const void *so, size_t len, orr_hostcc_lib *lib, orr_error *err);
void *orr_hostcc_sym(orr_hostcc_lib *lib, const char *name);
void orr_hostcc_unload(orr_hostcc_lib *lib);

#endif
