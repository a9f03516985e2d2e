/* A small, strict reader and writer of NumPy .npy files, for the tools' --in and
 * --out options.
 *
 * Read: format versions 1.0 and 2.0 (2-byte or 4-byte header length; 3.0 differs
 * only by a UTF-8 header and is rejected), C order only, the little-endian or
 * byte-order-free dtypes below.  The header is parsed as the Python dict literal
 * np.save writes: exactly the keys 'descr', 'fortran_order' and 'shape', in any
 * order, followed by spaces and a newline.  The data must be exactly
 * prod(shape) * itemsize bytes (no more, no less); nothing past the end of the
 * file is ever read.
 *
 *     descr        dtype     element                              itemsize
 *     '|u1' '<u1'  U1        uint8 (packed e2m1 pairs, scale bytes)     1
 *     '|i1'        I1        int8 (read as the same bytes)              1
 *     '<u2'        U2        uint16 (bf16 bit patterns)                 2
 *     '<i2'        I2        int16 (bf16 bit patterns)                  2
 *     '|V2' '<V2'  V2        2 opaque bytes (bf16: np.save of an        2
 *                            ml_dtypes.bfloat16 array writes '<V2')
 *     '<f4'        F4        float32                                    4
 *     '<f8'        F8        float64 (the tools write reference values) 8
 *     '<i8'        I8        int64 (the tools write row indices)        8
 *
 * ml_dtypes' bfloat16 has no descr of its own: np.save(f, x) with x.dtype ==
 * ml_dtypes.bfloat16 writes descr '<V2', and np.load gives back a 'V2' array
 * that x.view(ml_dtypes.bfloat16) turns into bf16 again.
 *
 * Rejections are FP4LR_E_INVALID (FP4LR_E_IO for open/read/write failures and
 * FP4LR_E_NOMEM) with a message naming the file, the rule and what was found:
 *     NPY_OPEN, NPY_READ      the file cannot be opened / read (E_IO)
 *     NPY_MAGIC               the file does not start with "\x93NUMPY"
 *     NPY_VERSION             version other than 1.0 or 2.0
 *     NPY_HEADER_TRUNCATED    the file ends inside the preamble or the header
 *     NPY_HEADER_SIZE         header length above FP4LR_NPY_HEADER_MAX
 *     NPY_HEADER_SYNTAX       the header is not a dict literal of the form above
 *     NPY_HEADER_KEYS         a key missing, repeated or unknown
 *     NPY_FORTRAN_ORDER       'fortran_order': True
 *     NPY_BIG_ENDIAN          a descr starting with '>' (or '!')
 *     NPY_DTYPE               any other descr (e.g. '<f2', '<c8', a structured list)
 *     NPY_SHAPE               more than FP4LR_NPY_MAX_DIMS dimensions, a negative
 *                             or overflowing extent
 *     NPY_DATA_TRUNCATED      fewer data bytes than the shape needs
 *     NPY_DATA_SIZE           more data bytes than the shape needs
 *     NPY_WRITE               the writer cannot create or fill the file (E_IO)
 *     NPY_EXPECT_DTYPE, NPY_EXPECT_SHAPE   fp4lr_npy_expect's checks */
#ifndef FP4LR_CLI_NPY_H
#define FP4LR_CLI_NPY_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

#define FP4LR_NPY_MAX_DIMS 8
#define FP4LR_NPY_HEADER_MAX ((size_t)1 << 20)

typedef enum fp4lr_npy_dtype {
    FP4LR_NPY_U1 = 0,
    FP4LR_NPY_I1,
    FP4LR_NPY_U2,
    FP4LR_NPY_I2,
    FP4LR_NPY_V2,
    FP4LR_NPY_F4,
    FP4LR_NPY_F8,
    FP4LR_NPY_I8,
    FP4LR_NPY_NUM_DTYPES,
} fp4lr_npy_dtype;

/* Masks of dtypes for fp4lr_npy_expect. */
#define FP4LR_NPY_MASK(d) (1u << (d))
#define FP4LR_NPY_BYTES (FP4LR_NPY_MASK(FP4LR_NPY_U1) | FP4LR_NPY_MASK(FP4LR_NPY_I1))
#define FP4LR_NPY_BF16_BITS \
    (FP4LR_NPY_MASK(FP4LR_NPY_U2) | FP4LR_NPY_MASK(FP4LR_NPY_I2) | FP4LR_NPY_MASK(FP4LR_NPY_V2))

/* One array.  `data` holds count * itemsize bytes (64-byte aligned; NULL when
 * count is 0) and is owned: release with fp4lr_npy_free. */
typedef struct fp4lr_npy {
    fp4lr_npy_dtype dtype;
    int itemsize;
    int version;      /* 1 or 2 (the major version read; 1 for arrays to write) */
    int ndim;         /* 0 for a scalar */
    int64_t shape[FP4LR_NPY_MAX_DIMS];
    int64_t count;    /* product of the extents (1 for a scalar) */
    void *data;
} fp4lr_npy;

/* Reads `path` into *out (zeroed first; on failure nothing stays allocated). */
fp4lr_status fp4lr_npy_read(const char *path, fp4lr_npy *out);

void fp4lr_npy_free(fp4lr_npy *a);

/* Writes a version 1.0 C-order file of `descr` (one of the accepted descrs; the
 * canonical ones are fp4lr_npy_descr's), `ndim` extents (0..FP4LR_NPY_MAX_DIMS,
 * ndim 0 is a scalar) and prod(shape) * itemsize bytes of `data`.  The header is
 * padded with spaces to a multiple of 64 bytes, as np.save does. */
fp4lr_status fp4lr_npy_write(const char *path, const char *descr, int ndim, const int64_t *shape,
                             const void *data);

/* The descr the writer uses for a dtype ("|u1", "|i1", "<u2", "<i2", "|V2", "<f4",
 * "<f8", "<i8") and its item size. */
const char *fp4lr_npy_descr(fp4lr_npy_dtype d);
int fp4lr_npy_itemsize(fp4lr_npy_dtype d);

/* Parses a descr string (without quotes): 0 with *d set, or -1 (unsupported). */
int fp4lr_npy_parse_descr(const char *descr, fp4lr_npy_dtype *d);

/* "(3, 4)", "(3,)" or "()" into buf (always terminated). */
void fp4lr_npy_shape_text(int ndim, const int64_t *shape, char *buf, size_t n);

/* Checks an array read from `path`: its dtype is in the mask `dtypes`
 * (FP4LR_NPY_MASK bits; `type_text` names them, e.g. "uint8") and, when ndim >= 0,
 * its shape is `want` (FP4LR_NPY_ANY matches any extent; `want_text` shows the
 * expected shape, e.g. "(M, K/2) = (300, 224)").  Rules NPY_EXPECT_DTYPE,
 * NPY_EXPECT_SHAPE; the message names the file, the expectation and what was found. */
#define FP4LR_NPY_ANY (-1)
fp4lr_status fp4lr_npy_expect(const fp4lr_npy *a, const char *path, unsigned dtypes, const char *type_text,
                              int ndim, const int64_t *want, const char *want_text);

#endif
