/* The 128x4 scale atom layout (OPERATOR.md §4), checked against an
 * independent, step-by-step emulation of PyTorch's to_blocked:
 *
 *   padded.view(nrb, 128, ncb, 4).permute(0, 2, 1, 3)
 *         .reshape(-1, 4, 32, 4).transpose(1, 2).reshape(-1, 32, 16).flatten()
 *
 * Each view/permute/reshape is materialised with its own index arithmetic; the
 * offset formula is never used by the emulation. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "scale_atom.h"

/* to_blocked on a rows x cols matrix of uint32 values (zero padded to
 * 128-row / 4-column multiples); returns a new array of nrb*ncb*512 values. */
static uint32_t *to_blocked_u32(const uint32_t *m, int64_t rows, int64_t cols, int64_t *out_len)
{
    int64_t nrb = (rows + 127) / 128, ncb = (cols + 3) / 4;
    int64_t pr = nrb * 128, pc = ncb * 4, n = pr * pc;

    /* padded = zeros(pr, pc); padded[:rows, :cols] = m */
    uint32_t *padded = calloc((size_t)n, sizeof *padded);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
            padded[r * pc + c] = m[r * cols + c];

    /* view(nrb, 128, ncb, 4): V[a][b][c][d] = padded[(a*128 + b)*pc + c*4 + d]
     * permute(0, 2, 1, 3):   T[a][c][b][d] = V[a][b][c][d], T contiguous. */
    uint32_t *t = malloc((size_t)n * sizeof *t);
    for (int64_t a = 0; a < nrb; a++)
        for (int64_t b = 0; b < 128; b++)
            for (int64_t c = 0; c < ncb; c++)
                for (int64_t d = 0; d < 4; d++)
                    t[((a * ncb + c) * 128 + b) * 4 + d] = padded[(a * 128 + b) * pc + c * 4 + d];

    /* reshape(-1, 4, 32, 4) of contiguous T: R[g][h][i][j] = t[((g*4 + h)*32 + i)*4 + j]
     * transpose(1, 2):       S[g][i][h][j] = R[g][h][i][j], S contiguous. */
    int64_t groups = n / 512;
    uint32_t *s = malloc((size_t)n * sizeof *s);
    for (int64_t g = 0; g < groups; g++)
        for (int64_t h = 0; h < 4; h++)
            for (int64_t i = 0; i < 32; i++)
                for (int64_t j = 0; j < 4; j++)
                    s[((g * 32 + i) * 4 + h) * 4 + j] = t[((g * 4 + h) * 32 + i) * 4 + j];

    /* reshape(-1, 32, 16).flatten() of contiguous S is S itself. */
    free(padded);
    free(t);
    *out_len = n;
    return s;
}

static const int64_t shape_rows[] = {1, 2, 7, 31, 32, 33, 100, 127, 128, 129, 255, 256, 257, 300, 1000};
static const int64_t shape_kv[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33};
#define NROWS (sizeof shape_rows / sizeof shape_rows[0])
#define NKV (sizeof shape_kv / sizeof shape_kv[0])

/* Deterministic non-zero bytes (so zero padding is distinguishable). */
static uint8_t test_byte(int64_t r, int64_t c) { return (uint8_t)(1 + (r * 131 + c * 29 + (r * c) % 7) % 255); }

Test(scale_atom, offset_matches_to_blocked_for_165_shapes)
{
    for (size_t a = 0; a < NROWS; a++)
        for (size_t b = 0; b < NKV; b++) {
            int64_t rows = shape_rows[a], kv = shape_kv[b];
            /* Tag each element with 1 + its row-major index, then find where
             * to_blocked moved it. */
            uint32_t *m = malloc((size_t)(rows * kv) * sizeof *m);
            for (int64_t i = 0; i < rows * kv; i++)
                m[i] = (uint32_t)(i + 1);
            int64_t n;
            uint32_t *blk = to_blocked_u32(m, rows, kv, &n);
            cr_assert_eq((size_t)n, fp4lr_sf_bytes(rows, kv), "rows %lld kv %lld", (long long)rows,
                         (long long)kv);
            int64_t *where = malloc((size_t)(rows * kv) * sizeof *where);
            int64_t tagged = 0;
            for (int64_t p = 0; p < n; p++)
                if (blk[p]) {
                    where[blk[p] - 1] = p;
                    tagged++;
                }
            cr_assert_eq(tagged, rows * kv);
            for (int64_t r = 0; r < rows; r++)
                for (int64_t c = 0; c < kv; c++)
                    cr_assert_eq((int64_t)fp4lr_sf_offset(r, c, kv), where[r * kv + c],
                                 "rows %lld kv %lld: (%lld, %lld)", (long long)rows, (long long)kv,
                                 (long long)r, (long long)c);
            free(m);
            free(blk);
            free(where);
        }
}

Test(scale_atom, pack_equals_to_blocked_bytes_with_zero_padding)
{
    for (size_t a = 0; a < NROWS; a++)
        for (size_t b = 0; b < NKV; b++) {
            int64_t rows = shape_rows[a], kv = shape_kv[b];
            uint8_t *m8 = malloc((size_t)(rows * kv));
            uint32_t *m32 = malloc((size_t)(rows * kv) * sizeof *m32);
            for (int64_t r = 0; r < rows; r++)
                for (int64_t c = 0; c < kv; c++)
                    m32[r * kv + c] = m8[r * kv + c] = test_byte(r, c);
            int64_t n;
            uint32_t *want = to_blocked_u32(m32, rows, kv, &n);
            uint8_t *atoms = malloc((size_t)n);
            memset(atoms, 0xAA, (size_t)n); /* garbage: pack must overwrite the padding */
            fp4lr_sf_pack(m8, rows, kv, atoms);
            for (int64_t p = 0; p < n; p++)
                cr_assert_eq(atoms[p], want[p], "rows %lld kv %lld byte %lld", (long long)rows,
                             (long long)kv, (long long)p);
            free(m8);
            free(m32);
            free(want);
            free(atoms);
        }
}

Test(scale_atom, hand_checked_offsets)
{
    cr_expect_eq(fp4lr_sf_offset(0, 0, 4), 0u);
    cr_expect_eq(fp4lr_sf_offset(0, 1, 4), 1u);
    cr_expect_eq(fp4lr_sf_offset(0, 3, 4), 3u);
    cr_expect_eq(fp4lr_sf_offset(1, 0, 4), 16u);
    cr_expect_eq(fp4lr_sf_offset(32, 0, 4), 4u);
    cr_expect_eq(fp4lr_sf_offset(64, 0, 4), 8u);
    cr_expect_eq(fp4lr_sf_offset(96, 2, 4), 14u);
    cr_expect_eq(fp4lr_sf_offset(31, 3, 4), 499u);
    cr_expect_eq(fp4lr_sf_offset(127, 3, 4), 511u);
    cr_expect_eq(fp4lr_sf_offset(128, 0, 4), 512u);
    cr_expect_eq(fp4lr_sf_offset(0, 4, 8), 512u);
    cr_expect_eq(fp4lr_sf_offset(128, 0, 8), 1024u);
    cr_expect_eq(fp4lr_sf_offset(130, 5, 8), 1569u); /* (1*2+1)*512 + 2*16 + 1 */
    cr_expect_eq(fp4lr_sf_offset(0, 4, 5), 512u);    /* kv 5 -> 2 K-atoms per row atom */
    cr_expect_eq(fp4lr_sf_offset(128, 0, 5), 1024u);
}

Test(scale_atom, bytes_formula)
{
    cr_expect_eq(fp4lr_sf_bytes(1, 1), 512u);
    cr_expect_eq(fp4lr_sf_bytes(128, 4), 512u);
    cr_expect_eq(fp4lr_sf_bytes(129, 4), 1024u);
    cr_expect_eq(fp4lr_sf_bytes(128, 5), 1024u);
    cr_expect_eq(fp4lr_sf_bytes(256, 8), 2048u);
    cr_expect_eq(fp4lr_sf_bytes(1000, 33), 36864u); /* 8 * 9 * 512 */
    cr_expect_eq(fp4lr_sf_bytes(4096, 4096 / 16), 4096u / 128 * 64 * 512);
    cr_expect_eq(fp4lr_sf_bytes(0, 4), 0u);
    cr_expect_eq(fp4lr_sf_bytes(4, 0), 0u);
    cr_expect_eq(fp4lr_sf_bytes(-1, 4), 0u);
}

/* One full atom seen as 32 rows of 16 bytes: row i is
 * [SF(i,0..3) | SF(i+32,0..3) | SF(i+64,0..3) | SF(i+96,0..3)]. */
Test(scale_atom, atom_is_32_rows_of_16_bytes)
{
    uint8_t m[128 * 4], atom[512];
    for (int r = 0; r < 128; r++)
        for (int c = 0; c < 4; c++)
            m[r * 4 + c] = (uint8_t)(r * 2 + (c & 1) + (c >> 1) * 7);
    fp4lr_sf_pack(m, 128, 4, atom);
    for (int i = 0; i < 32; i++)
        for (int q = 0; q < 4; q++)
            for (int c = 0; c < 4; c++)
                cr_assert_eq(atom[i * 16 + q * 4 + c], m[(i + 32 * q) * 4 + c], "atom row %d quarter %d col %d", i, q, c);
}

Test(scale_atom, offsets_are_a_bijection_on_the_padded_buffer)
{
    const int64_t rows = 257, kv = 9;
    int64_t pr = 384, pc = 12;
    size_t n = fp4lr_sf_bytes(rows, kv);
    cr_assert_eq(n, (size_t)(pr * pc));
    unsigned char *seen = calloc(n, 1);
    for (int64_t r = 0; r < pr; r++)
        for (int64_t c = 0; c < pc; c++) {
            size_t o = fp4lr_sf_offset(r, c, kv);
            cr_assert_lt(o, n);
            cr_assert_eq(seen[o], 0, "offset %zu used twice", o);
            seen[o] = 1;
        }
    free(seen);
}

Test(scale_atom, pack_unpack_round_trip_and_get)
{
    const int64_t rows = 300, kv = 7;
    uint8_t *m = malloc(rows * kv), *back = malloc(rows * kv), *atoms = malloc(fp4lr_sf_bytes(rows, kv));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < kv; c++)
            m[r * kv + c] = test_byte(r, c);
    fp4lr_sf_pack(m, rows, kv, atoms);
    memset(back, 0, rows * kv);
    fp4lr_sf_unpack(atoms, rows, kv, back);
    cr_expect_eq(memcmp(m, back, rows * kv), 0);
    cr_expect_eq(fp4lr_sf_get(atoms, 299, 6, kv), test_byte(299, 6));
    cr_expect_eq(fp4lr_sf_get(atoms, 130, 5, kv), test_byte(130, 5));
    free(m);
    free(back);
    free(atoms);
}

Test(scale_atom, padding_bytes_are_zero)
{
    const int64_t rows = 129, kv = 5; /* 2 x 2 atoms, mostly padding */
    uint8_t m[129 * 5], atoms[2048];
    memset(m, 0xFF, sizeof m);
    memset(atoms, 0x55, sizeof atoms);
    fp4lr_sf_pack(m, rows, kv, atoms);
    int nonzero = 0;
    for (int i = 0; i < 2048; i++)
        nonzero += atoms[i] != 0;
    cr_expect_eq(nonzero, 129 * 5);
    cr_expect_eq(atoms[fp4lr_sf_offset(129, 0, kv)], 0); /* row 129 is padding */
    cr_expect_eq(atoms[fp4lr_sf_offset(0, 5, kv)], 0);   /* column 5 is padding */
}
