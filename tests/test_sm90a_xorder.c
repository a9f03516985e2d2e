/* CPU suite: the _x kernels' conversion order (host/sm90a_xorder.c): a permutation of the
 * items, band by band, and the first wave of the W-prepared walk finds the W of its K block
 * kb among the first (kb + 1) * S ranks (the K-major order over every N tile did not). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sm90a_xorder.h"

static uint32_t *order_of(int tiles_n, int nks, int band)
{
    uint32_t *o = malloc((size_t)tiles_n * (size_t)nks * sizeof *o);
    cr_assert(o);
    fp4lr_sm90a_xorder_fill(o, tiles_n, nks, band);
    return o;
}

Test(sm90a_xorder, band_is_the_first_waves_n_tiles)
{
    cr_expect_eq(fp4lr_sm90a_xorder_band(132, 36, 36, 12), 4);  /* flux-out: 36 tile rows */
    cr_expect_eq(fp4lr_sm90a_xorder_band(132, 64, 64, 32), 3);  /* 8192^3 */
    cr_expect_eq(fp4lr_sm90a_xorder_band(132, 8, 8, 27), 17);   /* sana-qkv */
    cr_expect_eq(fp4lr_sm90a_xorder_band(132, 8, 8, 9), 9);     /* clipped to tiles_n */
    cr_expect_eq(fp4lr_sm90a_xorder_band(132, 300, 300, 9), 1); /* a wave inside one N tile */
    cr_expect_eq(fp4lr_sm90a_xorder_band(132, 64, 16, 32), 9);  /* groups of 16 rows */
    cr_expect_eq(fp4lr_sm90a_xorder_band(0, 8, 8, 9), 1);
    cr_expect_eq(fp4lr_sm90a_xorder_band(132, 0, 8, 9), 1);
    cr_expect_eq(fp4lr_sm90a_xorder_band(132, 8, -1, 9), 1);
    cr_expect_eq(fp4lr_sm90a_xorder_band(132, 8, 8, 0), 1);
}

Test(sm90a_xorder, fill_is_a_permutation_band_by_band)
{
    const int shapes[][3] = {{12, 24, 4}, {27, 18, 17}, {32, 64, 3}, {5, 7, 2}, {1, 1, 1}, {9, 3, 9}, {7, 4, 1}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int tn = shapes[s][0], nks = shapes[s][1], band = shapes[s][2];
        const size_t items = (size_t)tn * (size_t)nks;
        uint32_t *o = order_of(tn, nks, band);
        unsigned char *seen = calloc(items, 1);
        cr_assert(seen);
        size_t rank = 0;
        for (int n0 = 0; n0 < tn; n0 += band) {
            const int w = tn - n0 < band ? tn - n0 : band;
            for (int kb = 0; kb < nks; kb++)
                for (int nt = n0; nt < n0 + w; nt++, rank++) {
                    cr_assert_lt(o[rank], items, "shape %zu rank %zu: item %u out of range", s, rank, o[rank]);
                    cr_expect_eq(o[rank], (uint32_t)(kb * tn + nt), "shape %zu rank %zu", s, rank);
                    cr_expect_eq(seen[o[rank]], 0, "shape %zu: item %u twice", s, o[rank]);
                    seen[o[rank]] = 1;
                }
        }
        cr_expect_eq(rank, items);
        free(seen);
        free(o);
    }
}

/* The W-prepared walk (a raster group holds all tiles_m rows, so tile t is N tile
 * t / tiles_m) on `grid` CTAs: every tile of the first wave needs item (kb, its N tile) at
 * its K block kb, after the first wave's kb earlier K blocks; the order must have it among
 * the first (kb + 1) * band ranks (band = the first wave's N tiles). */
static int first_wave_is_served(const uint32_t *o, int tiles_m, int tiles_n, int nks, int grid, int band)
{
    const size_t items = (size_t)tiles_n * (size_t)nks;
    size_t *rank = malloc(items * sizeof *rank);
    cr_assert(rank);
    for (size_t i = 0; i < items; i++)
        rank[o[i]] = i;
    int ok = 1;
    const int tiles = tiles_m * tiles_n;
    for (int t = 0; t < grid && t < tiles; t++)
        for (int kb = 0; kb < nks; kb++)
            if (rank[(size_t)kb * tiles_n + t / tiles_m] >= (size_t)(kb + 1) * band)
                ok = 0;
    free(rank);
    return ok;
}

Test(sm90a_xorder, the_first_wave_finds_its_w_first)
{
    const int cases[][4] = {{36, 12, 24, 132}, {64, 32, 64, 132}, {8, 27, 18, 132}, {56, 36, 24, 132},
                            {3, 50, 10, 132},  {200, 4, 8, 132},  {36, 12, 24, 64}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int tm = cases[c][0], tn = cases[c][1], nks = cases[c][2], grid = cases[c][3];
        const int band = fp4lr_sm90a_xorder_band(grid, tm, tm, tn);
        uint32_t *o = order_of(tn, nks, band);
        cr_expect(first_wave_is_served(o, tm, tn, nks, grid, band), "case %zu: band %d", c, band);
        free(o);
        /* the K-major order over every N tile (band = tiles_n) fails wherever the first wave
         * leaves N tiles out and there is more than one K block: the check can fail */
        if (band < tn && nks > 1) {
            uint32_t *k = order_of(tn, nks, tn);
            cr_expect_not(first_wave_is_served(k, tm, tn, nks, grid, band), "case %zu: K-major passed", c);
            free(k);
        }
    }
}

Test(sm90a_xorder, bad_arguments_write_nothing)
{
    uint32_t o[4] = {7, 7, 7, 7};
    fp4lr_sm90a_xorder_fill(o, 0, 2, 1);
    fp4lr_sm90a_xorder_fill(o, 2, 0, 1);
    fp4lr_sm90a_xorder_fill(o, 2, 2, 0);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(o[i], 7u);
}

/* The narrow tile's per-unit table: item by item in the plain order, units 0..4 of each as
 * 8 item + b (built in place: the plain order first in the tail). */
Test(sm90a_xorder, unit_table_spreads_each_item_over_its_units)
{
    static const int cases[][3] = {{7, 18, 7}, {7, 18, 3}, {1, 1, 1}, {4, 35, 2}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int tn = cases[c][0], nks = cases[c][1], band = cases[c][2];
        for (int units = 1; units <= 8; units++) {
            uint32_t *plain = order_of(tn, nks, band);
            const size_t items = (size_t)tn * (size_t)nks;
            uint32_t *u = malloc(items * (size_t)units * sizeof *u);
            cr_assert(u);
            fp4lr_sm90a_xorder_fill_units(u, tn, nks, band, units);
            for (size_t i = 0; i < items; i++)
                for (int b = 0; b < units; b++)
                    cr_expect_eq(u[i * (size_t)units + (size_t)b], 8u * plain[i] + (uint32_t)b,
                                 "tiles_n %d nks %d band %d units %d: entry %zu", tn, nks, band, units,
                                 i * (size_t)units + (size_t)b);
            free(u);
            free(plain);
        }
    }
    uint32_t o[4] = {7, 7, 7, 7};
    fp4lr_sm90a_xorder_fill_units(o, 2, 2, 1, 0);
    fp4lr_sm90a_xorder_fill_units(o, 2, 2, 1, 9);
    fp4lr_sm90a_xorder_fill_units(o, 0, 2, 1, 1);
    for (int i = 0; i < 4; i++)
        cr_expect_eq(o[i], 7u);
}

/* The identity rule: where the table would be the identity (one band holds every N tile) the
 * host passes none; where the grid's converter warps convert every unit in their first round
 * the order cannot matter; elsewhere (a band narrower than tiles_n and more units than one
 * round) the table stays.  And where the rule says "identity" because of the band, the table
 * really is the identity, for both table layouts (what the kernels compute instead). */
Test(sm90a_xorder, identity_where_the_table_is_or_one_round_converts_all)
{
    /* SANA swapped on 132 CTAs: sana-qkv 54 x 4 tiles, 18 K blocks (band 3, 576 units <= 792) */
    cr_expect(fp4lr_sm90a_xorder_identity(132, 4, 18, fp4lr_sm90a_xorder_band(132, 54, 54, 4), 8));
    cr_expect(fp4lr_sm90a_xorder_identity(132, 4, 18, fp4lr_sm90a_xorder_band(132, 88, 88, 4), 8)); /* sana-mlp */
    cr_expect(fp4lr_sm90a_xorder_identity(132, 7, 18, fp4lr_sm90a_xorder_band(132, 18, 18, 7), 5)); /* sana-out */
    /* flux-out: band 4 of 12 N tiles, 2304 units: three rounds; flux-qkv, 8192^3 likewise */
    cr_expect_not(fp4lr_sm90a_xorder_identity(132, 12, 24, fp4lr_sm90a_xorder_band(132, 36, 36, 12), 8));
    cr_expect_not(fp4lr_sm90a_xorder_identity(132, 36, 24, fp4lr_sm90a_xorder_band(132, 36, 36, 36), 8));
    cr_expect_not(fp4lr_sm90a_xorder_identity(132, 32, 64, fp4lr_sm90a_xorder_band(132, 64, 64, 32), 8));
    /* the round's edge: 99 items x 8 units = 792 = 132 x 6 converts in one round, 100 do not */
    cr_expect(fp4lr_sm90a_xorder_identity(132, 9, 11, 3, 8));
    cr_expect_not(fp4lr_sm90a_xorder_identity(132, 10, 10, 3, 8));
    cr_expect(fp4lr_sm90a_xorder_identity(132, 10, 10, 10, 8)); /* one band: the table is the identity */
    cr_expect_not(fp4lr_sm90a_xorder_identity(0, 4, 18, 4, 8));
    cr_expect_not(fp4lr_sm90a_xorder_identity(132, 0, 18, 4, 8));
    cr_expect_not(fp4lr_sm90a_xorder_identity(132, 4, 0, 4, 8));
    cr_expect_not(fp4lr_sm90a_xorder_identity(132, 4, 18, 0, 8));
    cr_expect_not(fp4lr_sm90a_xorder_identity(132, 4, 18, 4, 0));
    static const int cases[][2] = {{7, 18}, {4, 35}, {1, 1}, {27, 3}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int tn = cases[c][0], nks = cases[c][1];
        uint32_t *o = order_of(tn, nks, tn);
        for (size_t i = 0; i < (size_t)tn * (size_t)nks; i++)
            cr_expect_eq(o[i], (uint32_t)i, "tiles_n %d nks %d: rank %zu", tn, nks, i);
        free(o);
        uint32_t *u = malloc((size_t)tn * (size_t)nks * 5 * sizeof *u);
        cr_assert(u);
        fp4lr_sm90a_xorder_fill_units(u, tn, nks, tn, 5);
        for (uint32_t i = 0; i < (uint32_t)tn * (uint32_t)nks * 5; i++)
            cr_expect_eq(u[i], 8 * (i / 5) + i % 5, "tiles_n %d nks %d: unit %u", tn, nks, i);
        free(u);
    }
}

/* FP4LR_SM90A_XCONV_WARPS is the kernels' converter-warp count: every _x kernel numbers its
 * converter warps' first units ctaid * that + warp and steps them by nctaid * that (tests run
 * from the repository root). */
Test(sm90a_xorder, converter_warps_match_the_kernels)
{
    DIR *d = opendir("ptx/sm90a");
    cr_assert(d, "cannot open ptx/sm90a (run the tests from the repository root)");
    char first[64], step[64];
    snprintf(first, sizeof first, "mad.lo.u32 %%xu, %%xu, %d, %%xt;", FP4LR_SM90A_XCONV_WARPS);
    snprintf(step, sizeof step, "mad.lo.u32 %%xu, %%xt, %d, %%xu;", FP4LR_SM90A_XCONV_WARPS);
    int kernels = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strstr(de->d_name, "_x") || !strstr(de->d_name, ".ptx"))
            continue;
        char path[512];
        snprintf(path, sizeof path, "ptx/sm90a/%s", de->d_name);
        FILE *f = fopen(path, "r");
        cr_assert(f, "cannot read %s", path);
        char line[512];
        int firsts = 0, steps = 0, other = 0;
        while (fgets(line, sizeof line, f)) {
            if (!strstr(line, "mad.lo.u32 %xu, "))
                continue;
            if (strstr(line, first))
                firsts++;
            else if (strstr(line, step))
                steps++;
            else
                other++;
        }
        fclose(f);
        cr_expect_eq(firsts, 1, "%s: the first unit is not ctaid * %d + warp", path, FP4LR_SM90A_XCONV_WARPS);
        cr_expect_eq(steps, 1, "%s: the unit step is not nctaid * %d", path, FP4LR_SM90A_XCONV_WARPS);
        cr_expect_eq(other, 0, "%s: another unit computation", path);
        kernels++;
    }
    closedir(d);
    cr_expect_geq(kernels, 16, "the _x kernels (both formats, both families, 256 and 160 wide)");
}
