/* fuzz_text: libFuzzer target for orrery's text reader (textio.h), the
 * input read both as a .txt and as a .csv file. */
#include "fuzz.h"
#include "textio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *names[] = {"in.txt", "in.csv"};
    for (int k = 0; k < 2; k++) {
        orr_snapshot snap = {0};
        orr_error err = {0};
        orr_text_read(fuzz_file(names[k], data, size), &snap, &err);
        orr_snapshot_free(&snap);
        orr_error_clear(&err);
    }
    return 0;
}
