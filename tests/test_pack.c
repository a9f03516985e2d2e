/* Packed FP4 rows (OPERATOR.md §2): element 2i in the low nibble of byte i. */
#include <criterion/criterion.h>

#include <string.h>

#include "fp4_pack.h"

Test(pack, nibble_order_low_first)
{
    const uint8_t codes[4] = {0x1, 0x2, 0xA, 0xF};
    uint8_t row[2];
    fp4lr_fp4_pack_row(codes, 4, row);
    cr_expect_eq(row[0], 0x21); /* element 0 low, element 1 high */
    cr_expect_eq(row[1], 0xFA);
}

Test(pack, get_reads_the_right_nibble)
{
    const uint8_t row[3] = {0x21, 0xFA, 0x07};
    cr_expect_eq(fp4lr_fp4_get(row, 0), 0x1);
    cr_expect_eq(fp4lr_fp4_get(row, 1), 0x2);
    cr_expect_eq(fp4lr_fp4_get(row, 2), 0xA);
    cr_expect_eq(fp4lr_fp4_get(row, 3), 0xF);
    cr_expect_eq(fp4lr_fp4_get(row, 4), 0x7);
    cr_expect_eq(fp4lr_fp4_get(row, 5), 0x0);
}

Test(pack, set_leaves_the_other_nibble_alone)
{
    uint8_t row[2] = {0xFF, 0x00};
    fp4lr_fp4_set(row, 0, 0x3);
    cr_expect_eq(row[0], 0xF3);
    fp4lr_fp4_set(row, 1, 0x5);
    cr_expect_eq(row[0], 0x53);
    fp4lr_fp4_set(row, 3, 0xFC); /* upper bits of the code are ignored */
    cr_expect_eq(row[1], 0xC0);
    fp4lr_fp4_set(row, 2, 0x9);
    cr_expect_eq(row[1], 0xC9);
}

Test(pack, round_trip_all_codes_long_row)
{
    enum { K = 1000 };
    uint8_t codes[K], back[K], row[K / 2];
    for (int k = 0; k < K; k++)
        codes[k] = (uint8_t)((k * 7 + k / 16) & 0xF);
    fp4lr_fp4_pack_row(codes, K, row);
    fp4lr_fp4_unpack_row(row, K, back);
    cr_expect_eq(memcmp(codes, back, K), 0);
    for (int k = 0; k < K; k++)
        cr_assert_eq(fp4lr_fp4_get(row, k), codes[k], "k = %d", k);
}

Test(pack, pack_masks_upper_bits)
{
    const uint8_t codes[2] = {0xF1, 0x3E};
    uint8_t row[1];
    fp4lr_fp4_pack_row(codes, 2, row);
    cr_expect_eq(row[0], 0xE1);
}

Test(pack, odd_length_last_byte_has_zero_high_nibble)
{
    const uint8_t codes[3] = {0x4, 0x5, 0x6};
    uint8_t row[2] = {0xEE, 0xEE}, back[3];
    fp4lr_fp4_pack_row(codes, 3, row);
    cr_expect_eq(row[0], 0x54);
    cr_expect_eq(row[1], 0x06);
    fp4lr_fp4_unpack_row(row, 3, back);
    cr_expect_eq(memcmp(codes, back, 3), 0);
}

Test(pack, bytes)
{
    cr_expect_eq(fp4lr_fp4_bytes(1, 64), 32u);
    cr_expect_eq(fp4lr_fp4_bytes(7, 128), 448u);
    cr_expect_eq(fp4lr_fp4_bytes(4096, 8192), 4096u * 4096u);
    cr_expect_eq(fp4lr_fp4_bytes(3, 5), 9u); /* odd K: ceil(K/2) per row */
    cr_expect_eq(fp4lr_fp4_bytes(0, 64), 0u);
    cr_expect_eq(fp4lr_fp4_bytes(5, -2), 0u);
}
