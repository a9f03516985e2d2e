"""The shared-memory map of a kernel, its barrier and slot addresses (the tsplit and XDBUF
barriers' included), the cluster setup, the accumulator register lists and the K parameter of
the HALFK kernels."""
import ptxgen

from . import kstate as K
from .flags import BK, BM, CHUNK_K, FORMATS, LORA_SLOTS, XCONV_STAGE, XCONV_WARPS


# the 8-byte words after the rings' barriers (layout's comment says which)
BAR_EXTRA = 4


def acc_list(lo=0, hi=None):
    hi = K.BN // 2 if hi is None else hi
    return "{" + ", ".join(f"%acc{i}" for i in range(lo, hi)) + "}"


def layout(fmt, stages):
    _, _, sfa, sfw = FORMATS[fmt]
    a_off, w_off = 0, BM * BK // 2
    sfa_off = w_off + K.BN * BK // 2
    sfw_off = sfa_off + sfa
    stage = sfw_off + sfw
    if K.WPRE:   # a stage holds A and SFA alone (MXFP4: 8704 B, A stays 512-byte aligned)
        sfa_off = w_off
        w_off = sfw_off = None
        stage = sfa_off + sfa
    main = stage * stages
    tslot = K.BN * CHUNK_K * 2
    t_off = (main + 1023) // 1024 * 1024
    wb_off = t_off + K.TSLOTS * tslot
    wb = BM * K.EPI_COLS * 2
    bar_off = wb_off + K.WB_STAGES * wb
    nbar = 2 * stages + 2 * K.TSLOTS + (2 * LORA_SLOTS if K.FUSED else 0) + (K.TSLOTS if K.TSPLIT else 0)
    # after the rings' nbar barriers, four more 8-byte words, used or not: skbulk's barrier,
    # xdone, the XDBUF epilogue words and the watchdog's cdone (streamk.py, xdone_off, watch.py)
    total = bar_off + (nbar + BAR_EXTRA) * 8
    xstage = (total + 1023) // 1024 * 1024    # _x: the converter warps' staging blocks
    if K.XCONV:
        total = xstage + XCONV_WARPS * XCONV_STAGE
    aff = (total + 1023) // 1024 * 1024    # fused: wc / beta slices, one per consumer WG
    if K.FUSED:
        total = aff + 2 * K.AFF_SLICE
    lora = (total + 1023) // 1024 * 1024   # fused: the low-rank ring, sized at run time
    return dict(a=a_off, w=w_off, sfa=sfa_off, sfw=sfw_off, stage=stage, tslot=tslot,
                t=t_off, wb=wb_off, wbuf=wb, bar=bar_off, nbar=nbar, aff=aff, total=total, lora=lora, xstage=xstage,
                sfa_bytes=sfa, sfw_bytes=sfw)


def setup_addresses(L, stages):
    """The kernel's first lines: thread identity, the tensor maps' and parameters' registers,
    shared memory's base and the four rings' mbarrier arrays (stages main, TSLOTS W)."""
    return f"""\t// ---- setup: thread identity, tensor-map addresses, shared-memory addresses ----
\tmov.u32 %thr, %tid.x;
\tshr.u32 %warp, %thr, 5;
\tand.b32 %lane, %thr, 31;
\tshr.u32 %wg, %thr, 7;
{ptxgen.COMMON_PARAMS}\tmov.u32 %sbase, smem;
\tadd.u32 %bar_full, %sbase, {L['bar']};
\tadd.u32 %bar_empty, %bar_full, {8 * stages};
\tadd.u32 %bar_tfull, %bar_empty, {8 * stages};
\tadd.u32 %bar_tempty, %bar_tfull, {8 * K.TSLOTS};"""


def cluster_setup():
    """Tile walk and cluster identity.  A cluster of two computes vertically adjacent
    128-row halves of a 256-row tile: rank v owns rows 128v..128v+127."""
    if K.CL == 1:
        return """\tmov.u32 %tile0, %ctaid.x;
\tmov.u32 %tstride, %nctaid.x;
\tmov.u32 %crank, 0;
\tmov.u32 %mrank, 0;
\tsetp.eq.u32 %prank0, 0, 0;
"""
    return """\tmov.u32 %tile0, %clusterid.x;
\tmov.u32 %tstride, %nclusterid.x;
\tmov.u32 %crank, %cluster_ctarank;
\txor.b32 %peer, %crank, 1;
\tshl.b32 %mrank, %crank, 7;
\tsetp.eq.u32 %prank0, %crank, 0;
\tmov.b16 %mask, 3;
"""


def tsplit_setup(L):
    """tsplit: the tfull_hi barriers sit after every other barrier."""
    return f"\tadd.u32 %bar_tfullhi, %sbase, {L['bar'] + 8 * (L['nbar'] - K.TSLOTS)};   // tfull_hi[{K.TSLOTS}]\n"


def xdone_off(L):
    """XDBUF: mbarrier `xdone` at %bar_full + this, after the kernel's barriers and skbulk's
    (nbar + 1); the two WGs' epilogue mode words follow it (+8 + 4 wg), all inside the
    barriers' 1024 bytes, before the converters' staging."""
    off = 8 * (L['nbar'] + 1)
    assert L['xstage'] >= L['bar'] + off + 16
    # the second writeback buffer lives in the staging: whole, and 1024-aligned (128B swizzle)
    assert XCONV_WARPS * XCONV_STAGE >= L['wbuf'] and L['xstage'] % 1024 == 0
    return off


# the _w<n>_yt kernels' last parameter: K, for HALFK (read by the NVFP4 ones; the family's
# MXFP4 kernels declare it too, so that both formats share one parameter list)
WYT_PARAMS = """\t.param .u32 p_K                        // K (a multiple of 64 / 128): where the last K block ends
"""


def k_param():
    """The parameter that holds K (HALFK's test): the _x kernels' p_x_K, the _w_yt kernels' p_K."""
    return "p_x_K" if K.XCONV else "p_K"
