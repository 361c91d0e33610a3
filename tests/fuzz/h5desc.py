#!/usr/bin/env python3
# h5desc: writes the description (tests/fuzz/h5desc.h) of an HDF5 file, for
# the seeds of the HDF5 fuzz targets: groups, attributes (numbers, strings)
# and datasets, in h5py's order, up to 32 x 32 elements each.
#   /usr/bin/python3 tests/fuzz/h5desc.py FILE.hdf5 > tests/fuzz/corpus/NAME/SEED
import struct
import sys

import h5py
import numpy as np

TYPES = {np.dtype('<f8'): 0, np.dtype('<f4'): 1, np.dtype('<i8'): 2, np.dtype('<i4'): 3,
         np.dtype('<u8'): 4, np.dtype('u1'): 5, np.dtype('>f8'): 7}


def name(n):
    b = n.encode()[:63]
    return bytes([len(b)]) + b


def numbers(op, n, value):
    a = np.asarray(value)
    code = TYPES.get(a.dtype)
    if code is None:                      # other integer widths: as int64, floats as f64
        code = 2 if a.dtype.kind in 'iub' else 0
    shape = a.shape[:2] if a.ndim <= 2 else (a.size,)
    out = bytes([op]) + name(n) + bytes([code, len(shape)]) + bytes(min(d, 32) for d in shape)
    flat = a.reshape(shape)[tuple(slice(0, 32) for _ in shape)].ravel() if shape else a.ravel()
    for v in flat:
        out += struct.pack('<d', float(v)) if code in (0, 1, 7) else struct.pack('<q', int(v))
    return out


def attribute(n, value, dtype):
    if dtype.kind in 'SUO' or isinstance(value, (bytes, str)):
        text = value.encode() if isinstance(value, str) else bytes(value)
        vlen = h5py.check_string_dtype(dtype) is not None and \
            h5py.check_string_dtype(dtype).length is None
        return bytes([5 if vlen else 4]) + name(n) + bytes([min(len(text), 255)]) + text[:255]
    return numbers(2, n, value)


def group(g):
    out = b''
    for n in g.attrs:
        out += attribute(n, g.attrs[n], g.attrs.get_id(n).dtype)
    for n, item in g.items():
        if isinstance(item, h5py.Group):
            out += bytes([0]) + name(n) + group(item) + bytes([1])
        else:
            out += numbers(3, n, item[()])
            for an in item.attrs:
                pass                      # dataset attributes: not read by orrery
    return out


with h5py.File(sys.argv[1], 'r') as f:
    sys.stdout.buffer.write(group(f))
