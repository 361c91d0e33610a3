/* h5desc.h: the HDF5 fuzz targets' input language.  libhdf5's own parser is
 * not ours to fuzz (damaged files reach its bugs, which no change of ours
 * can fix), so fuzz_snapshot and fuzz_checkpoint take a description of an
 * HDF5 file instead of its bytes, build that file with libhdf5 (always a
 * well-formed file, of any content) and hand it to orrery's reader: the
 * fuzzer explores what the reader does with groups, attributes and datasets
 * of any name, type, shape and value.  tests/fuzz/h5desc.py turns an HDF5
 * file into a description (the seeds in tests/fuzz/corpus/).
 *
 *   input  := item*                     (an item that cannot be made is skipped)
 *   item   := 0 name                    group in the current group; enter it (depth <= 4)
 *           | 1                         leave the current group
 *           | 2 name type shape values  attribute of the current group
 *           | 3 name type shape values  dataset in the current group
 *           | 4 name len:u8 bytes       fixed-length string attribute (len >= 1)
 *           | 5 name len:u8 bytes       variable-length string attribute
 *   name   := len:u8 (<= 63) bytes
 *   type   := u8 % 8: 0 f64, 1 f32, 2 i64, 3 i32, 4 u64, 5 u8, 6 8-byte string, 7 f64 big-endian
 *   shape  := rank:u8 % 3 (0 scalar), then rank dims:u8 % 33
 *   values := 8 bytes per element (a double for float types, an int64 for
 *             the others, raw bytes for strings); missing bytes read as 0
 * The op byte counts modulo 6.  The result is at most a few hundred KiB. */
#ifndef ORR_FUZZ_H5DESC_H
#define ORR_FUZZ_H5DESC_H

#include <hdf5.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const uint8_t *p, *end;
} h5d_in;

static int h5d_byte(h5d_in *in)
{
    return in->p < in->end ? *in->p++ : -1;
}

/* name into out[64]; 0 at the end of the input */
static int h5d_name(h5d_in *in, char *out)
{
    int len = h5d_byte(in);
    if (len < 0)
        return 0;
    len %= 64;
    int k = 0;
    for (int i = 0; i < len && in->p < in->end; i++) {
        char c = (char)*in->p++;
        if (c != '\0' && c != '/' && c != '.')   /* HDF5 link names */
            out[k++] = c;
    }
    out[k] = '\0';
    if (k == 0)
        strcpy(out, "_");
    return 1;
}

static hid_t h5d_type(int code)
{
    static const hid_t *types[] = {&H5T_IEEE_F64LE_g, &H5T_IEEE_F32LE_g, &H5T_STD_I64LE_g,
                                   &H5T_STD_I32LE_g, &H5T_STD_U64LE_g, &H5T_STD_U8LE_g,
                                   NULL, &H5T_IEEE_F64BE_g};
    (void)H5open();   /* the H5T_* globals */
    if (code == 6) {
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, 8);
        return t;
    }
    return H5Tcopy(*types[code]);
}

/* One attribute (ds 0) or dataset (ds 1) of numeric or string type. */
static void h5d_data(h5d_in *in, hid_t loc, int ds)
{
    char name[64];
    if (!h5d_name(in, name))
        return;
    int code = h5d_byte(in), rank = h5d_byte(in);
    if (code < 0 || rank < 0)
        return;
    code %= 8;
    rank %= 3;
    hsize_t dims[2] = {1, 1}, n = 1;
    for (int r = 0; r < rank; r++) {
        int d = h5d_byte(in);
        dims[r] = d < 0 ? 0 : (hsize_t)(d % 33);
        n *= dims[r];
    }
    uint8_t *raw = calloc((size_t)(n ? n : 1), 8);
    for (hsize_t i = 0; i < n * 8 && in->p < in->end; i++)
        raw[i] = *in->p++;
    hid_t sp = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t ft = h5d_type(code);
    int isfloat = code == 0 || code == 1 || code == 7;
    hid_t mt = H5Tcopy(code == 6 ? ft : isfloat ? H5T_NATIVE_DOUBLE : H5T_NATIVE_LLONG);
    if (ds) {
        hid_t d = H5Dcreate2(loc, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (d >= 0) {
            H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw);
            H5Dclose(d);
        }
    } else {
        hid_t a = H5Acreate2(loc, name, ft, sp, H5P_DEFAULT, H5P_DEFAULT);
        if (a >= 0) {
            H5Awrite(a, mt, raw);
            H5Aclose(a);
        }
    }
    H5Tclose(mt);
    H5Tclose(ft);
    H5Sclose(sp);
    free(raw);
}

/* A string attribute: fixed length (vlen 0) or variable length. */
static void h5d_string(h5d_in *in, hid_t loc, int vlen)
{
    char name[64], text[257];
    if (!h5d_name(in, name))
        return;
    int len = h5d_byte(in);
    if (len < 0)
        return;
    int k = 0;
    for (int i = 0; i < len && in->p < in->end; i++)
        text[k++] = (char)*in->p++;
    text[k] = '\0';
    hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
    H5Tset_size(t, vlen ? H5T_VARIABLE : (size_t)(k ? k : 1));
    hid_t a = H5Acreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    if (a >= 0) {
        const char *p = text;
        H5Awrite(a, t, vlen ? (const void *)&p : (const void *)text);
        H5Aclose(a);
    }
    H5Sclose(sp);
    H5Tclose(t);
}

/* Writes the file that data[0..size) describes to path; 0 when it could not
 * be created. */
static int h5d_build(const char *path, const uint8_t *data, size_t size)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);   /* items that fail are skipped quietly */
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return 0;
    hid_t stack[5] = {f};
    int depth = 0;
    h5d_in in = {data, data + size};
    for (int op; (op = h5d_byte(&in)) >= 0;) {
        hid_t loc = stack[depth];
        switch (op % 6) {
        case 0: {
            char name[64];
            if (!h5d_name(&in, name))
                break;
            hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            if (g >= 0 && depth < 4)
                stack[++depth] = g;
            else if (g >= 0)
                H5Gclose(g);
            break;
        }
        case 1:
            if (depth > 0)
                H5Gclose(stack[depth--]);
            break;
        case 2:
        case 3:
            h5d_data(&in, loc, op % 6 == 3);
            break;
        default:
            h5d_string(&in, loc, op % 6 == 5);
            break;
        }
    }
    while (depth > 0)
        H5Gclose(stack[depth--]);
    H5Fclose(f);
    return 1;
}

#endif
