/* The order in which the _x kernels' converter warps convert W (p_x_order).
 *
 * An item is one (K block kb, N tile nt) of W, index kb * tiles_n + nt; the kernel's
 * converter warps take ranks 0, 1, 2, ... in turn, and the table maps each rank to its
 * item.  The order is the one in which the tile walk first needs the items: the W-prepared
 * walk is N-tile-major (a raster group holds every tile row), so its first wave of tiles
 * covers N tiles 0..S-1, S = ceil(grid / rows), the next wave the next S, and every tile
 * starts at K block 0.  Hence bands of S N tiles, K-major inside a band.  Converting
 * K-major over all N tiles instead made the first wave wait for W it did not need yet
 * (bench/results/experiments/README.md, "the _x kernels' conversion order"). */
#ifndef FP4LR_SM90A_XORDER_H
#define FP4LR_SM90A_XORDER_H

#include <stddef.h>
#include <stdint.h>

/* The _x kernels' converter warps a CTA (warps 2-7: tools/sm90a_ptx/flags.py XCONV_WARPS; a CPU test
 * reads it from the kernels).  Unit u of the order is converted by warp u % 6 of CTA u / 6 %
 * grid, in round u / (6 grid). */
#define FP4LR_SM90A_XCONV_WARPS 6

/* The band width S: ceil(grid / rows) N tiles, rows = min(group, tiles_m), clipped to
 * [1, tiles_n]; 1 for arguments below 1. */
int fp4lr_sm90a_xorder_band(int grid, int tiles_m, int group, int tiles_n);

/* Writes the tiles_n * nks ranks' items into order[] (a permutation of 0 .. tiles_n*nks-1):
 * band by band (the last may be narrower), inside a band K block by K block, N tiles in
 * increasing order.  Nothing is written for arguments below 1. */
void fp4lr_sm90a_xorder_fill(uint32_t *order, int tiles_n, int nks, int band);

/* The narrow tile's table (FP4LR_SM90A_TILE_N_NARROW: 5 converter units of 32 rows an item):
 * one entry a unit, so that the converters need no division by 5.  Item by item in
 * fp4lr_sm90a_xorder_fill's order, its units b = 0 .. units-1 as 8 * item + b (the unit's
 * flag index: an item's flags stay 8 words apart).  tiles_n * nks * units entries; nothing
 * is written for arguments below 1 or units above 8. */
void fp4lr_sm90a_xorder_fill_units(uint32_t *order, int tiles_n, int nks, int band, int units);

/* 1 where the launch takes the identity order (item = rank; the host passes p_x_order = 0 and
 * the kernels load no table at the head of their converters' first chain, a cold load about
 * 1 us into a launch): where one band holds every N tile (band >= tiles_n: the table would be
 * the identity), or where the grid's converter warps take every unit in their first round
 * (tiles_n * nks * units_per_item <= grid * FP4LR_SM90A_XCONV_WARPS: all are converted at once,
 * and the order only says which warp converts which).  units_per_item: 8 (256-wide tile) or 5
 * (the narrow tile).  0 for arguments below 1.  Measured on the H200 (2026-12-04, the identity
 * everywhere against the tables, 3 rounds): SANA 1.003-1.012 (sana-out, where both are the
 * identity, 1.007-1.012: the load alone), flux-out (three rounds of units) 0.999-1.005. */
int fp4lr_sm90a_xorder_identity(int grid, int tiles_n, int nks, int band, int units_per_item);

#endif
