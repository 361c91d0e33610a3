/* fuzz_snapshot: libFuzzer target for the HDF5 snapshot reader
 * (snapshot.h: the GADGET layout, orrery's own and other tools').  The input
 * describes the file (h5desc.h), which is built with libhdf5 and read. */
#include "fuzz.h"
#include "h5desc.h"
#include "snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_path("in.hdf5");
    if (!h5d_build(path, data, size))
        abort();
    orr_snapshot snap = {0};
    orr_error err = {0};
    orr_snapshot_read(path, &snap, &err);
    orr_snapshot_free(&snap);
    orr_error_clear(&err);
    return 0;
}
