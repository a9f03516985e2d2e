/* The _x kernels' conversion order (sm90a_xorder.h). */
#include "sm90a_xorder.h"

int fp4lr_sm90a_xorder_band(int grid, int tiles_m, int group, int tiles_n)
{
    if (grid < 1 || tiles_m < 1 || group < 1 || tiles_n < 1)
        return 1;
    const int rows = group < tiles_m ? group : tiles_m;
    const int s = (grid + rows - 1) / rows;
    return s > tiles_n ? tiles_n : s;
}

void fp4lr_sm90a_xorder_fill(uint32_t *order, int tiles_n, int nks, int band)
{
    if (tiles_n < 1 || nks < 1 || band < 1)
        return;
    size_t rank = 0;
    for (int n0 = 0; n0 < tiles_n; n0 += band) {
        const int width = tiles_n - n0 < band ? tiles_n - n0 : band;
        for (int kb = 0; kb < nks; kb++)
            for (int nt = n0; nt < n0 + width; nt++)
                order[rank++] = (uint32_t)kb * (uint32_t)tiles_n + (uint32_t)nt;
    }
}

void fp4lr_sm90a_xorder_fill_units(uint32_t *order, int tiles_n, int nks, int band, int units)
{
    if (tiles_n < 1 || nks < 1 || band < 1 || units < 1 || units > 8)
        return;
    const size_t items = (size_t)tiles_n * (size_t)nks;
    /* the items' order first, in the table's tail, then spread into units from the front
     * (entry i*units+b >= i: an item is read before its slot is overwritten) */
    uint32_t *tail = order + items * (size_t)(units - 1);
    fp4lr_sm90a_xorder_fill(tail, tiles_n, nks, band);
    for (size_t i = 0; i < items; i++) {
        const uint32_t item = tail[i];
        for (int b = 0; b < units; b++)
            order[i * (size_t)units + (size_t)b] = 8u * item + (uint32_t)b;
    }
}

int fp4lr_sm90a_xorder_identity(int grid, int tiles_n, int nks, int band, int units_per_item)
{
    if (grid < 1 || tiles_n < 1 || nks < 1 || band < 1 || units_per_item < 1)
        return 0;
    if (band >= tiles_n)
        return 1;
    const long long units = (long long)tiles_n * nks * units_per_item;
    return units <= (long long)grid * FP4LR_SM90A_XCONV_WARPS;
}
