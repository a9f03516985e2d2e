"""The consumer warpgroups: A fragments converted in registers, the wgmma K loop over the W
slots, the slot releases, and the tile's end (stream-K fix-up, affine, low-rank, epilogue)."""
from ptxgen import advance

from . import kstate as K
from .flags import (FAULT, WATCHDOG, ASSIST, CHOIST, CSTAG_NS, CSTAG_SETUP, CWG0, CWG1, EXPERIMENTS, FORMATS, LORA_SLOTS,
    FPROLATE, LPREFETCH, MXONE, TLINE, TLPRO, TRANSFORM_THREADS, TW8)
from .timeline import tline
from .layout import acc_list, k_param
from .sync import arrive, spin_ns
from .convert import emit_lut_setup, fp4x8_to, mul_x2, mx_big_scales, scale_mx, scale_mx_fast, scale_nv
from .walk import CUR, NCUR, tile_coords, unit_first, unit_next
from .fused import (aff_fill, emit_affine_and_lowrank, fused_consumer_setup, lora_consts, lora_issue,
    lora_l2_prefetch)
from .transform import ASSIST_REGS, row_invariants, transform_rows
from .selffill import emit_self_fill
from .streamk import emit_stream_k_fixup, emit_stream_k_owner_init
from .epilogue import emit_epilogue
from .watch import consumers_leave


def load_a_chunk(e, fmt, h, xr, xq, L):
    """Load and dequantize this thread's A bytes of chunk h of stage base %r41:
    rows %r20 (r) and r+8, group c = %r21 -> 8 bf16x2 words each."""
    blk, ka, _, _ = FORMATS[fmt]
    if CHOIST:
        e(f"\t// A chunk {h}: 8 bytes (16 elements 16c..16c+15) of rows r and r+8, and their scales")
        if h:
            e("\txor.b32 %r25, %caoff0, 32;                 // chunk 1's logical chunk: chunk 0's + 2")
            e("\tadd.u32 %r25, %r25, %r41;                   // + stage base (A at offset 0)")
        else:
            e("\tadd.u32 %r25, %caoff0, %r41;                // + stage base (A at offset 0)")
    else:
        e(f"""\t// A chunk {h}: 8 bytes (16 elements 16c..16c+15) of rows r and r+8, and their scales
\tshr.u32 %r24, %r20, 1;
\tand.b32 %r24, %r24, 3;                     // 64B swizzle phase (same for r and r+8)
\tshr.u32 %r25, %r21, 1;
\tadd.u32 %r25, %r25, {2 * h};               // logical 16-byte chunk
\txor.b32 %r25, %r25, %r24;
\tshl.b32 %r25, %r25, 4;
\tand.b32 %r26, %r21, 1;
\tshl.b32 %r26, %r26, 3;
\tadd.u32 %r25, %r25, %r26;
\tshl.b32 %r26, %r20, 6;
\tadd.u32 %r25, %r25, %r26;
\tadd.u32 %r25, %r25, %r41;                   // + stage base (A at offset 0)""")
    e("""\tld.shared.v2.b32 {%r0, %r1}, [%r25];
\tld.shared.v2.b32 {%r2, %r3}, [%r25+512];     // row r+8 (8 rows x 64 B)""")
    if fmt == "nvfp4":
        e(f"""\tadd.u32 %r26, %r22, %r21;
\tadd.u32 %r26, %r26, %r41;                   // + stage base
\tld.shared.u8 %r4, [%r26+{L['sfa'] + 512 * h}];
\tld.shared.u8 %r5, [%r26+{L['sfa'] + 512 * h + 128}];   // row r+8: (r%32)+8 -> +128""")
    else:
        e(f"""\tshr.u32 %r26, %r21, 1;
\tadd.u32 %r26, %r26, %r22;
\tadd.u32 %r26, %r26, %r41;                   // + stage base
\tld.shared.u8 %r4, [%r26+{L['sfa'] + 2 * h}];
\tld.shared.u8 %r5, [%r26+{L['sfa'] + 2 * h + 128}];""")
    tmp = ["%r9", "%r10", "%r11", "%r12", "%r13", "%r14"]

    def convert(scale, undo):
        for i, reg in enumerate(("%r4", "%r5")):
            scale(e, reg, f"%r{6 + i}", "%r8")
        if "cnoconv" in EXPERIMENTS:   # measurement only: the raw words as fragments
            for i in range(8):
                e(f"\tmov.b32 {xr[i]}, %r{i % 2};\n\tmov.b32 {xq[i]}, %r{2 + i % 2};")
            return
        fp4x8_to(e, "%r0", xr[0:4], tmp, undo)
        fp4x8_to(e, "%r1", xr[4:8], tmp, undo)
        fp4x8_to(e, "%r2", xq[0:4], tmp, undo)
        fp4x8_to(e, "%r3", xq[4:8], tmp, undo)
        for i in range(8):
            e(f"\t{mul_x2()} {xr[i]}, {xr[i]}, %r6;")
            e(f"\t{mul_x2()} {xq[i]}, {xq[i]}, %r7;")

    if fmt == "nvfp4":
        convert(scale_nv, True)
    elif not MXONE:
        convert(scale_mx, True)
    else:   # mxone: one multiply an output where every scale of the warp is <= 2
        slow, done = e.label("mxa_slow"), e.label("mxa_done")
        mx_big_scales(e, [("%r4", 0), ("%r5", 0)])
        e(f"\t@%pmx bra {slow};")
        convert(scale_mx_fast, False)
        e(f"\tbra {done};\n{slow}:")
        convert(scale_mx, True)
        e(f"{done}:")



def wgmma_half(e, xr, xq, j, half, desc, pred):
    """One m64n(BN/2)k16 RS wgmma of k16 step j on columns BN/2*half.. (slot rows BN/2*half..,
    descriptor `desc`)."""
    ab = "f16.f16" if K.F16 else "bf16.bf16"
    frag = f"{{{xr[2*j]}, {xq[2*j]}, {xr[2*j+1]}, {xq[2*j+1]}}}"
    q = K.BN // 4   # accumulators of a half
    e(f"\twgmma.mma_async.sync.aligned.m64n{K.BN // 2}k16.f32.{ab} {acc_list(q * half, q * half + q)}, "
      f"{frag}, {desc}, {pred}, 1, 1, 0;")


def wgmma_chunk(e, xr, xq, first_pred):
    """Four k16 steps of RS wgmma over slot t: the descriptor's start field is %r31 (the
    slot's shared address >> 4; without choist computed here from the address in %r30)."""
    e("""\t// B descriptor: K-major, 128B swizzle, SBO 1024 (encoded 64), start = slot >> 4""")
    if not CHOIST:
        e("""\tshr.u32 %r31, %r30, 4;
\tand.b32 %r31, %r31, 0x3FFF;""")
    e("""\tmov.b32 %r33, 0x40000040;                   // SBO 1024 (64 << 32), swizzle 128B (1 << 62)
\tmov.b64 %rd1, {%r31, %r33};""")
    e("\twgmma.fence.sync.aligned;")
    if K.TSPLIT:
        # all four k16 steps of columns 0-127, then (after tfull_hi) those of columns 128-255
        for half in range(2):
            if half:
                e("""\t// tsplit: the slot's rows 128-255 (columns 128-255) once warps 4-7 have written them
\tadd.u32 %r13, %bar_tfullhi, %r12;""")
                e.wait("%r13", "%tph", "tfullhi")
                e("\twgmma.fence.sync.aligned;                   // (after the wait's branch)")
            else:
                e("\tadd.s64 %rd15, %rd1, 1024;                   // rows 128-255: +16384 bytes")
            d = "%rd15" if half else "%rd1"
            for j in range(4):
                if j:
                    e(f"\tadd.s64 {d}, {d}, 2;                      // next k16: +32 bytes")
                wgmma_half(e, xr, xq, j, half, d, first_pred if j == 0 else "%ptrue")
        e("\twgmma.commit_group.sync.aligned;")
        return
    for j in range(4):
        if j:
            e(f"\tadd.s64 %rd1, %rd1, 2;                      // next k16: +32 bytes")
        pred = first_pred if j == 0 else "%ptrue"
        if TW8 and K.WHOLE_N:
            # the narrow tile: one m64n160k16 on all the slot's rows (the same registers and
            # layout as the two halves: accumulator i is column 8*(i/4) + ..., so 0-39 are
            # columns 0-79 and 40-79 columns 80-159)
            ab = "f16.f16" if K.F16 else "bf16.bf16"
            frag = f"{{{xr[2*j]}, {xq[2*j]}, {xr[2*j+1]}, {xq[2*j+1]}}}"
            e(f"\twgmma.mma_async.sync.aligned.m64n{K.BN}k16.f32.{ab} {acc_list(0, K.BN // 2)}, "
              f"{frag}, %rd1, {pred}, 1, 1, 0;")
            continue
        if TW8:
            # columns 0-127 on slot rows 0-127, columns 128-255 on rows 128-255
            # (+16384 bytes: +1024 in the descriptor's start field; BN/2 rows of 128 bytes
            # in the narrow tile)
            wgmma_half(e, xr, xq, j, 0, "%rd1", pred)
            e(f"\tadd.s64 %rd15, %rd1, {K.BN // 2 * 128 // 16};")
            wgmma_half(e, xr, xq, j, 1, "%rd15", pred)
            continue
        ab = "f16.f16" if K.F16 else "bf16.bf16"
        frag = f"{{{xr[2*j]}, {xq[2*j]}, {xr[2*j+1]}, {xq[2*j+1]}}}"
        e(f"\twgmma.mma_async.sync.aligned.m64n256k16.f32.{ab} {acc_list()}, "
          f"{frag}, %rd1, {pred}, 1, 1, 0;")
    e("\twgmma.commit_group.sync.aligned;")


def release_prev_slot(e):
    """After wgmma.wait_group: the previous chunk's wgmmas are done; lane 0 of each
    warp frees its slot (tempty counts one arrive per consumer warp)."""
    e("""\tmul.lo.u32 %r32, %tprev, 8;
\tadd.u32 %r32, %r32, %bar_tempty;
\tand.pred %p4, %ppend, %p1;""")
    arrive(e, "%p4", "%r32", "%r34", remote=K.SPLIT or K.WPAIR)


def assist_convert(e, fmt, h, L):
    """Consumer assist: this consumer thread converts half 1 of W row (thread index in
    the two consumer WGs) of chunk h of stage %r41 into the slot of the next chunk to be
    multiplied (cursor %t, %tph), once every consumer warp has released that slot."""
    e(f"""\t// ---- consumer assist: half 1 of this thread's W row, chunk {h}, into slot t ----
\tmul.lo.u32 %ca0, %t, 8;
\tadd.u32 %ca1, %bar_tempty, %ca0;
\txor.b32 %ca2, %tph, 1;""")
    e.wait("%ca1", "%ca2", "atempty")
    e(f"""\tmad.lo.u32 %ca5, %t, {L['tslot']}, %sbase;
\tadd.u32 %ca5, %ca5, {L['t']};""")
    transform_rows(e, fmt, h, L, rows=[0], halves=(1,), regs=ASSIST_REGS)
    e("""\tfence.proxy.async.shared::cta;
\tbar.warp.sync 0xffffffff;
\tmul.lo.u32 %ca0, %t, 8;
\tadd.u32 %ca1, %bar_tfull, %ca0;
\t@%p1 mbarrier.arrive.shared::cta.b64 _, [%ca1];""")


# %r22 = the SFA byte offset of the consumer thread's row r (%r20) in a stage's 128 x 4 atom
SFA_ROW_OFFSET = """\t// SFA byte offset of row r: (r%32)*16 + (r/32)*4
\tand.b32 %r22, %r20, 31;
\tshl.b32 %r22, %r22, 4;
\tshr.u32 %r45, %r20, 5;
\tshl.b32 %r45, %r45, 2;
\tadd.u32 %r22, %r22, %r45;
"""


def emit_consumer(e, fmt, stages, L):
    xr = [f"%xr{i}" for i in range(8)]
    xq = [f"%xq{i}" for i in range(8)]
    yr = [f"%yr{i}" for i in range(8)]
    yq = [f"%yq{i}" for i in range(8)]
    e(f"""
// =====================================================================================
// Consumers ({CWG0}: tile rows 0-63, {CWG1}: rows 64-127).  Thread: warp w of its WG, lane l,
// row r = 64*(consumer WG 0 or 1) + 16w + l/4 (and r+8), group c = l%4.
// Per chunk: wait tfull, fence, four wgmmas on the slot with the chunk's A fragments{" (tsplit:" + chr(10) + "// columns 0-127 after tfull_lo, then columns 128-255 after tfull_hi)" if K.TSPLIT else ""},
// commit; wait_group 1 (the previous chunk is done -> free its slot); then load and
// dequantize the next chunk's A while the tensor core works.
// =====================================================================================
L_consumer:
\tsetmaxnreg.inc.sync.aligned.u32 {K.REG_CONSUMER};""")
    emit_lut_setup(e)
    e(f"""\tld.param.f32 %alpha, [p_alpha];
\tsub.u32 %r40, %thr, {TRANSFORM_THREADS};
\tshr.u32 %r42, %r40, 7;                     // consumer WG index 0/1
{CSTAG_SETUP if K.CSTAG_ON else ""}\tand.b32 %r43, %r40, 127;                   // thread in WG
\tshr.u32 %r44, %r43, 5;                     // warp in WG
\tshl.b32 %r20, %r42, 6;
\tshl.b32 %r45, %r44, 4;
\tadd.u32 %r20, %r20, %r45;
\tshr.u32 %r45, %lane, 2;
\tadd.u32 %r20, %r20, %r45;                   // r (tile row)
\tand.b32 %r21, %lane, 3;                     // c
{SFA_ROW_OFFSET}\tsetp.eq.u32 %p1, %lane, 0;""")
    if CHOIST:
        e(f"""\t// choist: the loop-invariant parts of the A address and of the B descriptor
\tshr.u32 %r24, %r20, 1;
\tand.b32 %r24, %r24, 3;                     // 64B swizzle phase (same for r and r+8)
\tand.b32 %r26, %r21, 1;
\tshl.b32 %r26, %r26, 3;
\tshl.b32 %r27, %r20, 6;
\tadd.u32 %r26, %r26, %r27;                   // row r: 64 B, + 8 B for odd c""")
        e(f"""\tshr.u32 %r25, %r21, 1;                   // logical 16-byte chunk of chunk 0
\txor.b32 %r25, %r25, %r24;
\tshl.b32 %r25, %r25, 4;
\tadd.u32 %caoff0, %r25, %r26;                // chunk 1: ^ 32 (its logical chunk is chunk 0's + 2, no carry)""")
        e(f"""\tadd.u32 %r25, %sbase, {L['t']};
\tshr.u32 %cdesc0, %r25, 4;                  // slot 0's start address >> 4 (< 2^14)""")
    e("""\tmov.u32 %s, 0;
\tmov.u32 %ph, 0;
\tmov.u32 %t, 0;
\tmov.u32 %tph, 0;
\tsetp.ne.u32 %ppend, 0, 0;""")
    if K.CL == 2 and (K.SPLIT or K.WPAIR):
        # release_prev_slot's mapa runs on every chunk, also the first, whose arrive is
        # predicated off (%ppend): give it a valid slot barrier to map (PTX asks mapa for
        # a valid shared::cta address)
        e("\tmov.u32 %tprev, 0;")
    if K.XSELF_ON:
        e("\tmov.u32 %cself, 1;                          // xself: the first unit's first K blocks still to convert")
    if TLINE:
        e(("\t.reg .b32 %tlpu;\n" if TLPRO else "") + "\t.reg .b32 %tlu, %tlf, %tl0;\n\tmov.u32 %tlu, 2;                           // tline: unit u's first event, 2 + 4u\n\tmov.u32 %tlf, 1;")
    if K.FUSED:
        fused_consumer_setup(e)
    if ASSIST:
        assert not K.SPLIT
        e("\t// consumer assist: this thread converts W row (thread - 128), half 1, of every chunk")
        row_invariants(e, fmt, L, 0, "%r40", "%ca0")
    if K.GDWAIT_ON and "lrgdwait" in EXPERIMENTS:
        # lrgdwait (measurement): the consumers' first loads (wc / beta, L and U) wait for the
        # preparation grid, so that they do not compete with its DRAM traffic.  H100, SANA,
        # sustained A/B (2026-12-06): dense 1.001, fused 1.008: not kept
        # (bench/results/experiments/README.md, "The preparation launch on SANA")
        e("\tgriddepcontrol.wait;                        // lrgdwait: after the preparation grid")
    unit_first(e, CUR, "cfirst")
    if K.WALKPRE_ON:
        e("\t.reg .b32 %ntl, %nkb, %nke, %nm0, %nn0;   // walkpre: the next unit")
    e("""L_c_tile:
\tsetp.ge.u32 %p0, %tile, %ntiles;
\t@%p0 bra L_c_done;""")
    tile_coords(e)
    if K.WALKPRE_ON:
        e("L_c_tile2:")
    if TLPRO:
        e("\tset.eq.u32.u32 %tlpu, %tlu, 6;              // tlpro: unit 1")
        tline(e, 41, TRANSFORM_THREADS, "%tlpu")
    if K.SKINIT_ON:
        emit_stream_k_owner_init(e, L)
    def fused_prologue():
        if K.LRAFF_ON:   # warp 2 copies wc / beta and loads the low-rank ring: nothing here
            return
        what = ("this tile's wc / beta copies (lrprod: thread 64 loads the low-rank ring)" if K.LRP64_ON else
                "this tile's wc / beta copies; the low-rank issue below is predicated off for every\n"
                "\t// consumer thread (lrw: the W producer loads the ring after the unit's last W chunk)" if K.LRW_ON else
                "request this tile's first low-rank chunks now, so they land during the K loop")
        e(f"""\t// {what}
\t// (only a unit that starts the tile finishes it: a stream-K contributor skips them)
\tsetp.ne.u32 %p5, %kb, 0;
\t@%p5 bra L_lissue_pro_done;""")
        lora_consts(e)
        if TLPRO:
            tline(e, 34, TRANSFORM_THREADS, "%tlpu")
        aff_fill(e, L)
        if TLPRO:
            tline(e, 44, TRANSFORM_THREADS, "%tlpu")
        if K.LRP64_ON:   # thread 64 loads the low-rank ring (wprepared.emit_lowrank_producer)
            e("L_lissue_pro_done:")
            return
        if LPREFETCH:
            lora_l2_prefetch(e)
        # The bound is the block number, not %li: only the issuing lane advances %li, and
        # every lane of its warp must meet the same number of bar.warp.sync in lora_issue.
        for k in range(LORA_SLOTS):
            e(f"\tsetp.le.u32 %p5, %lslots, {k};\n\t@%p5 bra L_lissue_pro_done;")
            lora_issue(e, f"pro{k}")
        e("L_lissue_pro_done:")

    # fprolate (measurement): the fused prologue after the unit's first wgmmas are issued,
    # under them, instead of before the unit's first A stage is waited for
    prolate = FPROLATE and K.FUSED
    assert not (prolate and K.SKINIT_ON), "fprolate keys on %pacc, which skinit sets"
    if K.FUSED:
        if not K.LRP64_ON:   # lrprod: the consumers issue no low-rank loads
            e("\tmov.u32 %li, 0;")
        if not prolate:
            fused_prologue()
    if K.XSELF_ON:
        emit_self_fill(e, fmt, L)
    if TLPRO:
        tline(e, 42, TRANSFORM_THREADS, "%tlpu")
    e("""\t// prologue: A chunk 0 of the first stage
\tmul.lo.u32 %r10, %s, 8;
\tadd.u32 %r11, %bar_full, %r10;""")
    e.wait("%r11", "%ph", "full_c0")
    tline(e, ("%tlu", 0), TRANSFORM_THREADS)
    e(f"\tmad.lo.u32 %r41, %s, {L['stage']}, %sbase;")
    if ASSIST:
        assist_convert(e, fmt, 0, L)
    load_a_chunk(e, fmt, 0, xr, xq, L)
    if not K.SKINIT_ON:
        e("\tsetp.ne.u32 %pacc, 0, 0;                    // first wgmma of the unit overwrites")
    e("""\tsub.u32 %ks, %ke, %kb;                      // stages of the unit (counted down)
L_c_k:""")
    for h in range(2):
        a_r, a_q = (xr, xq) if h == 0 else (yr, yq)
        if h == 1 and K.HALFK:
            e("""\t// halfk: the unit's last stage may end at K - 64 (tested out of line: two
\t// instructions a stage here)
\tsetp.eq.u32 %p0, %ks, 1;
\t@%p0 bra L_c_halfk_test;
L_c_halfk_back:""")
        e(f"\t// ---- chunk {h} of stage s: wait for its bf16 W slot ----")
        e("""\tmul.lo.u32 %r12, %t, 8;
\tadd.u32 %r13, %bar_tfull, %r12;""")
        e.wait("%r13", "%tph", "tfull")
        if h == 0 and K.CSTAG_ON:
            e("\t@%pcst bra L_cstag;\nL_cstag_back:")
        if h == 0 and TLINE:
            tline(e, 1, TRANSFORM_THREADS, "%tlf")
            e("\tmov.u32 %tlf, 0;")
        if CHOIST:
            e(f"\tmad.lo.u32 %r31, %t, {L['tslot'] // 16}, %cdesc0;   // slot t's start address >> 4")
        else:
            e(f"""\tmad.lo.u32 %r30, %t, {L['tslot']}, %sbase;
\tadd.u32 %r30, %r30, {L['t']};""")
        wgmma_chunk(e, a_r, a_q, "%pacc" if h == 0 else "%ptrue")
        if h == 0 and prolate:
            e("\t@%pacc bra L_fpro_skip;                    // fprolate: the unit's first stage only")
            fused_prologue()
            e("L_fpro_skip:")
        if h == 0:
            e("\tsetp.eq.u32 %pacc, 0, 0;")
        e("\twgmma.wait_group.sync.aligned 1;")
        release_prev_slot(e)
        e("""\tmov.u32 %tprev, %t;
\tsetp.eq.u32 %ppend, 0, 0;""")
        advance(e, "%t", "%tph", K.TSLOTS)
        if h == 0:
            if ASSIST:
                assist_convert(e, fmt, 1, L)
            load_a_chunk(e, fmt, 1, yr, yq, L)
            # The stage's A and SFA were read by ld.shared (generic proxy); the refill that
            # `empty` lets through is a bulk copy (async proxy).  The mbarrier's release
            # orders the reads only within the generic proxy: without the proxy fence the
            # copy could land before the loads had read the stage.  It did on the H200 (in
            # SASS the arrive followed the LDS directly): the _w kernels, whose refill only
            # the consumers gate, gave a different Y in 10 % (dense) to 100 % (fused) of
            # stream-K launches of flux-out (fp4lr-check --repeat); with the fence 0 of 2700,
            # at no measurable cost (A/B 0.998-1.002; bench/results/experiments/README.md).
            # In SASS: MEMBAR.ALL.CTA; FENCE.VIEW.ASYNC.S before the arrive.
            e("\tfence.proxy.async.shared::cta;              // the stage's reads before its refill (WAR)")
            e("""\t// this warp has read all its A bytes of stage s: release it
\tbar.warp.sync 0xffffffff;
\tmul.lo.u32 %r10, %s, 8;
\tadd.u32 %r11, %bar_empty, %r10;
""")
            # (the pair's A is each CTA's own: its stages are refilled by its own producer)
            if FAULT == "norelease":
                e("\t// FAULT norelease (planted, never committed): the stage is never released")
            else:
                arrive(e, "%p1", "%r11", "%r12", remote=not K.WPAIR)
        else:
            advance(e, "%s", "%ph", stages)
            e("""\tsub.u32 %ks, %ks, 1;
\tsetp.eq.u32 %p0, %ks, 0;
\t@%p0 bra L_c_kdone;
\tmul.lo.u32 %r10, %s, 8;
\tadd.u32 %r11, %bar_full, %r10;""")
            e.wait("%r11", "%ph", "full_c")
            if TLINE:
                # unit 0's stage 8 (its A latency against event 45, the producer's issue)
                e("""\t{
\t.reg .b32 %tls8;
\t.reg .pred %tlps8;
\tsub.u32 %tls8, %ke, %ks;
\tsetp.eq.u32 %tlps8, %tls8, 8;
\tsetp.eq.and.u32 %tlps8, %tlu, 2, %tlps8;
\tselp.u32 %tls8, 1, 0, %tlps8;""")
                tline(e, 46, TRANSFORM_THREADS, cond="%tls8")
                e("\t}")
            e(f"\tmad.lo.u32 %r41, %s, {L['stage']}, %sbase;")
            if ASSIST:
                assist_convert(e, fmt, 0, L)
            load_a_chunk(e, fmt, 0, xr, xq, L)
            e("\tbra L_c_k;")
    if K.HALFK:
        e(f"""L_c_halfk_test:
\t// halfk: is chunk 1 of the unit's last stage (K block ke - 1) wholly past K?  It is when
\t// K % 128 = 64 and the unit ends the tile
\tsub.u32 %r12, %ke, 1;
\tshl.b32 %r12, %r12, 7;
\tadd.u32 %r12, %r12, 64;
\tld.param.u32 %r13, [{k_param()}];
\tsetp.lt.u32 %p0, %r12, %r13;
\t@%p0 bra L_c_halfk_back;""")
        e("\t// halfk: the stage ends after chunk 0 (its slot is released at L_c_kdone)")
        advance(e, "%s", "%ph", stages)
        e("\tsub.u32 %ks, %ks, 1;")
    e("L_c_kdone:")
    if K.WALKPRE_ON:
        # walkpre: the next unit and its tile coordinates while the last wgmmas run (the walk
        # took 0.5 us after the epilogue, with the tensor cores idle)
        e("""\t// walkpre: the next unit (cursor %ntl / %nkb / %nke, origin %nm0 / %nn0), computed now
\tmov.u32 %ntl, %tile;""")
        unit_next(e, NCUR, "cpre", bounds=True)
        tile_coords(e, "%ntl", "%nm0", "%nn0")
    e("""\t// end of the K loop: every wgmma of the tile done, free the last slot
\twgmma.wait_group.sync.aligned 0;""")
    tline(e, ("%tlu", 1), TRANSFORM_THREADS)
    release_prev_slot(e)
    e("\tsetp.ne.u32 %ppend, 0, 0;")
    emit_stream_k_fixup(e, L)
    tline(e, ("%tlu", 2), TRANSFORM_THREADS)
    if K.FUSED:
        emit_affine_and_lowrank(e, L)
    if TLPRO:
        tline(e, 43, TRANSFORM_THREADS, "%tlpu")
    # FP4LR_GEN_EXPERIMENT=noepi (measurement only: Y is never written): no epilogue, to time
    # what the tiles' epilogues cost (small-M shapes, where a CTA finishes few tiles).  Dense
    # kernels only: the fused s1 kernel fails the ptxas gate with it.
    if TLINE:
        e("\tset.eq.u32.u32 %tl0, %tlu, 2;              // tline: unit 0's epilogue")
    if "noepi" not in EXPERIMENTS:
        emit_epilogue(e, L)
    e("L_c_next:")
    tline(e, ("%tlu", 3), TRANSFORM_THREADS)
    if TLINE:
        e("\tadd.u32 %tlu, %tlu, 4;\n\tmin.u32 %tlu, %tlu, 22;")
    if K.WALKPRE_ON:
        e("""\tmov.u32 %tile, %ntl;                        // walkpre: the next unit, computed after the K loop
\tmov.u32 %kb, %nkb;
\tmov.u32 %ke, %nke;
\tsetp.ge.u32 %p0, %tile, %ntiles;
\t@%p0 bra L_c_done;
\tmov.u32 %m0, %nm0;
\tmov.u32 %n0, %nn0;
\tbra L_c_tile2;""")
    else:
        unit_next(e, CUR, "c", bounds=True)
        e("\tbra L_c_tile;")
    if K.CSTAG_ON:
        e(f"""L_cstag:
\t// cstag: {CSTAG_NS} ns once, after the first W slot is full (out of line: never falls through)""")
        spin_ns(e, "L_cstag_wait", CSTAG_NS, 64, "%cst0", "%cst1", "%pcst")
        e("\tbra L_cstag_back;")
    e("L_c_done:")
    tline(e, 26, TRANSFORM_THREADS)
    e("""\t// the last bulk stores must finish reading shared memory before the CTA exits
\tsetp.eq.u32 %p0, %r43, 0;
\t@%p0 cp.async.bulk.wait_group 0;""")
    if FAULT == "noleave":
        e("""\t// FAULT noleave (planted, never committed): wait for a main stage nobody issues
\tmul.lo.u32 %r10, %s, 8;
\tadd.u32 %r11, %bar_full, %r10;""")
        e.wait("%r11", "%ph", "fault_noleave")
    if WATCHDOG:
        consumers_leave(e, L)
    tline(e, 27, TRANSFORM_THREADS)
    e("L_exit:")
    if K.CL == 2:
        # (the W-prepared pair's producer threads 0 and 32 reach it apart from their warps,
        # which left at once: not .aligned there)
        al = "" if K.WPAIR else ".aligned"
        e(f"""\t// teardown: no CTA leaves while its peer may still write its slots or arrive on
\t// its barriers
\tbarrier.cluster.arrive.release{al};
\tbarrier.cluster.wait.acquire{al};""")
    e("\tret;")
