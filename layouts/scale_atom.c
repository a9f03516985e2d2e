/* The 128x4 scale atom layout: offsets, sizes, packing to and from row-major. */
#include "scale_atom.h"

#include <string.h>

size_t fp4lr_sf_offset(int64_t row, int64_t col, int64_t kv)
{
    return fp4lr_sf_offset_inline(row, col, kv);
}

size_t fp4lr_sf_bytes(int64_t rows, int64_t kv)
{
    if (rows < 1 || kv < 1)
        return 0;
    return (size_t)((rows + 127) / 128) * (size_t)((kv + 3) / 4) * 512u;
}

void fp4lr_sf_pack(const uint8_t *rowmajor, int64_t rows, int64_t kv, uint8_t *atoms)
{
    /* Zero everything first so the padding rows/columns of partial atoms are 0. */
    memset(atoms, 0, fp4lr_sf_bytes(rows, kv));
    for (int64_t i = 0; i < rows; i++)
        for (int64_t c = 0; c < kv; c++)
            atoms[fp4lr_sf_offset_inline(i, c, kv)] = rowmajor[i * kv + c];
}

void fp4lr_sf_unpack(const uint8_t *atoms, int64_t rows, int64_t kv, uint8_t *rowmajor)
{
    for (int64_t i = 0; i < rows; i++)
        for (int64_t c = 0; c < kv; c++)
            rowmajor[i * kv + c] = atoms[fp4lr_sf_offset_inline(i, c, kv)];
}
