/* fuzz_tunestore: libFuzzer target for the tuning store's reader
 * (tunestore.h): the input is tuning.json in the cache directory, listed
 * whole and looked up by the device and kernel of the seed's entry. */
#include "fuzz.h"
#include "tunestore.h"

static void count(const orr_tune_entry *e, void *ctx)
{
    (void)e;
    (*(int *)ctx)++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_file("tuning.json", data, size);
    orr_error err = {0};
    int n = 0, found = 0;
    orr_tune_store_list(count, &n, &err);
    orr_error_clear(&err);
    orr_tune_entry e;
    orr_tune_store_file file;
    orr_tune_store_get("fuzz-device", "0123456789abcdef0123456789abcdef", &e, &found, &file, &err);
    orr_error_clear(&err);
    return 0;
}
