/* fuzz_kcache: libFuzzer target for the kernel cache's entry reader
 * (kcache.h): the input is the entry file of one fixed key, fetched with
 * orr_kcache_get and checked by orr_kcache_list. */
#include "fuzz.h"
#include "kcache.h"

#define KEY "0123456789abcdef0123456789abcdef"

static void seen(const orr_kcache_entry *e, void *ctx)
{
    (void)e;
    (*(int *)ctx)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_file(KEY ".so", data, size);
    orr_kkey key;
    memcpy(key.hex, KEY, sizeof key.hex);
    void *payload = NULL;
    size_t len = 0;
    int hit = 0, n = 0;
    char *note = NULL;
    orr_error err = {0};
    orr_kcache_get(&key, "so", &payload, &len, &hit, &note, &err);
    free(payload);
    free(note);
    orr_error_clear(&err);
    orr_kcache_list(seen, &n, &err);
    orr_error_clear(&err);
    return 0;
}
