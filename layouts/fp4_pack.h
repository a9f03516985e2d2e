/* Packed FP4 rows (OPERATOR.md §2): two e2m1 codes per byte, element 2i in
 * the LOW nibble of byte i, element 2i+1 in the high nibble. */
#ifndef FP4LR_FP4_PACK_H
#define FP4LR_FP4_PACK_H

#include <stddef.h>
#include <stdint.h>

/* Element k of a packed row. */
static inline uint8_t fp4lr_fp4_get(const uint8_t *row, int64_t k)
{
    uint8_t b = row[k >> 1];
    return (uint8_t)((k & 1) ? (b >> 4) : (b & 0x0F));
}

/* Store code (low 4 bits) as element k, leaving the other nibble alone. */
static inline void fp4lr_fp4_set(uint8_t *row, int64_t k, uint8_t code)
{
    uint8_t *b = &row[k >> 1];
    code &= 0x0F;
    *b = (uint8_t)((k & 1) ? ((*b & 0x0F) | (code << 4)) : ((*b & 0xF0) | code));
}

/* Bytes of a rows x K packed matrix: rows * ceil(K/2) (= rows*K/2 for even K,
 * which every operand has); 0 when rows or K is not positive. */
size_t fp4lr_fp4_bytes(int64_t rows, int64_t K);

/* Pack K codes (one per byte, low 4 bits used) into ceil(K/2) bytes.  For odd
 * K the high nibble of the last byte is written as 0. */
void fp4lr_fp4_pack_row(const uint8_t *codes, int64_t K, uint8_t *row);
/* Unpack ceil(K/2) bytes into K codes, one per byte (0..15). */
void fp4lr_fp4_unpack_row(const uint8_t *row, int64_t K, uint8_t *codes);

#endif
