/* Packing of e2m1 codes into rows, two per byte, element 2i in the low nibble. */
#include "fp4_pack.h"

size_t fp4lr_fp4_bytes(int64_t rows, int64_t K)
{
    if (rows < 1 || K < 1)
        return 0;
    return (size_t)rows * (size_t)((K + 1) / 2);
}

void fp4lr_fp4_pack_row(const uint8_t *codes, int64_t K, uint8_t *row)
{
    int64_t k = 0;
    for (; k + 1 < K; k += 2)
        row[k / 2] = (uint8_t)((codes[k] & 0x0F) | ((codes[k + 1] & 0x0F) << 4));
    if (k < K) /* odd K: last element alone in the low nibble, high nibble 0 */
        row[k / 2] = (uint8_t)(codes[k] & 0x0F);
}

void fp4lr_fp4_unpack_row(const uint8_t *row, int64_t K, uint8_t *codes)
{
    for (int64_t k = 0; k < K; k++)
        codes[k] = fp4lr_fp4_get(row, k);
}
