/* The 128x4 scale-factor atom layout (OPERATOR.md §4): the layout cuBLAS,
 * CUTLASS and PyTorch's to_blocked use.  One 512-byte atom holds 128 rows x
 * 4 block columns; atoms are ordered K-atom fastest, then row-atom. */
#ifndef FP4LR_SCALE_ATOM_H
#define FP4LR_SCALE_ATOM_H

#include <stddef.h>
#include <stdint.h>

/* Byte offset of scale (row, col) in a matrix with kv block columns:
 * ((row/128)*ceil(kv/4) + col/4)*512 + (row%32)*16 + ((row%128)/32)*4 + col%4. */
static inline size_t fp4lr_sf_offset_inline(int64_t row, int64_t col, int64_t kv)
{
    int64_t katoms = (kv + 3) / 4;
    return (size_t)(((row / 128) * katoms + col / 4) * 512 + (row % 32) * 16 +
                    ((row % 128) / 32) * 4 + (col % 4));
}

/* Same as fp4lr_sf_offset_inline (out-of-line, for callers that want a symbol). */
size_t fp4lr_sf_offset(int64_t row, int64_t col, int64_t kv);

/* Allocation size: ceil(rows/128) * ceil(kv/4) * 512 bytes; 0 if rows or kv < 1. */
size_t fp4lr_sf_bytes(int64_t rows, int64_t kv);

/* Row-major rows x kv scale bytes -> atom layout (fp4lr_sf_bytes bytes);
 * every padding byte (rows beyond `rows`, columns beyond `kv`) is written 0. */
void fp4lr_sf_pack(const uint8_t *rowmajor, int64_t rows, int64_t kv, uint8_t *atoms);
/* Atom layout -> row-major rows x kv (padding ignored). */
void fp4lr_sf_unpack(const uint8_t *atoms, int64_t rows, int64_t kv, uint8_t *rowmajor);

/* Scale (row, col) read from an atom-layout buffer. */
static inline uint8_t fp4lr_sf_get(const uint8_t *atoms, int64_t row, int64_t col, int64_t kv)
{
    return atoms[fp4lr_sf_offset_inline(row, col, kv)];
}

#endif
