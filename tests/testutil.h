/* testutil: shared helpers for the cmocka tests: a private cache directory
 * per test binary, deterministic random bodies, and the GPU skip rule. */
#ifndef ORR_TESTUTIL_H
#define ORR_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "err.h"

/* Points ORRERY_CACHE_DIR at a fresh temporary directory; returns its path. */
static inline const char *tu_private_cache(void)
{
    static char dir[256];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/orrery-test-XXXXXX");
        if (!mkdtemp(dir)) {
            perror("mkdtemp");
            abort();
        }
        setenv("ORRERY_CACHE_DIR", dir, 1);
    }
    return dir;
}

/* Fails the test with the error message and log when st is not ORR_OK. */
#define TU_OK(st, errp)                                                              \
    do {                                                                             \
        orr_status tu_st_ = (st);                                                    \
        if (tu_st_ != ORR_OK)                                                        \
            fail_msg("%s failed: %s\n%s", #st, (errp)->msg, (errp)->log ? (errp)->log : ""); \
    } while (0)

/* splitmix64: deterministic, fresh-looking test inputs. */
static inline double tu_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

#endif
