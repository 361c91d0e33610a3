/* fuzz_checkpoint: libFuzzer target for the checkpoint reader
 * (checkpoint.h: a snapshot plus groups Run, Kernel, Force, Output and
 * Integrator).  The input describes the file (h5desc.h), which is built
 * with libhdf5 and read. */
#include "checkpoint.h"
#include "fuzz.h"
#include "h5desc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("in.hdf5");
    if (!h5d_build(path, data, size))
        abort();
    orr_checkpoint ck;
    memset(&ck, 0, sizeof ck);
    orr_error err = {0};
    orr_checkpoint_read(path, &ck, &err);
    orr_checkpoint_free(&ck);
    orr_error_clear(&err);
    return 0;
}
