"""The producers of the W-prepared kernels (_w, _x, _yt): thread 0's A / SFA stages, thread 32's
W ring of prepared W by bulk copies (the launch-dependency wait, the first fill's skip, the
low-rank tail through the ring) and, in the _x kernels, the branch to the converter warps."""
from ptxgen import advance

from . import kstate as K
from .flags import WATCHDOG, APREFETCH, BK, BM, EXPERIMENTS, FORMATS, TLINE, XSELF_KB
from .timeline import tline
from .instances import prep_name
from .layout import k_param
from .walk import PCUR, producer_unit_start, producer_walk, tile_coords, unit_first, unit_next
from .fused import lora_consts, lora_slot_load, lowrank_boxes, lraff_copies
from .selffill import self_fill_has_half
from .xconv import emit_xconv, xconv_branch, xconv_wait
from .watch import WATCH


def wparam_doc():
    """The p_tmW parameter's comment: fp4 W, or the prepared W of a W-prepared kernel."""
    if K.WPRE:
        fmt = "nvfp4" if K.F16 else "mxfp4"
        by = f"{prep_name(fmt, True)} (or _wprep)" if K.GDWAIT_ON else prep_name(fmt)
        return (f"// W   {'FLOAT16' if K.F16 else 'BFLOAT16'} {{K, N}}: W prepared by {by}, "
                f"box {{64, {K.BN}}}, swizzle 128B")
    return f"// W   UINT8 {{K/2, N}}, box {{64, {K.BN}}}, swizzle 64B"


def emit_wpre_producers(e, fmt, stages, L):
    """W prepared: thread 0 issues the main stages (A and SFA), thread 32 fills the W ring
    from the prepared W, every other thread of WG0 and WG1 leaves; each producer walks the
    same work units as the consumers (unit_first / unit_next on its own cursor)."""
    blk, ka, _, _ = FORMATS[fmt]
    e(f"""
// =====================================================================================
// Producers (WG0).  Thread 0: main stages.  Per stage of the unit's K range it waits
// `empty[s]` (the consumers have read the stage's A), arms `full[s]` with the stage's
// {BM * BK // 2 + L['sfa_bytes']} bytes and issues the A and SFA bulk copies.  Thread 32: the W ring.  Per
// chunk (two a stage) it waits `tempty[t]` (the consumers' wgmmas on slot t completed),
// arms `tfull[t]` with {L['tslot']} bytes and issues one bulk copy of the prepared W chunk
// (rows n0..n0+{K.BN - 1}, K elements 128*ks + 64*h ..+63; rows past N and K past K read zero).
// Both run ahead as far as their rings allow; {"thread 32 first waits for the item's conversion." if K.XCONV else "no thread converts anything."}
// =====================================================================================
L_transform:
\tsetp.eq.u32 %pthr0, %thr, 0;
\tsetp.eq.u32 %p0, %thr, 32;
\t@%pthr0 prefetch.tensormap [%tmA];
\t@%pthr0 prefetch.tensormap [%tmSFA];
\t@%p0 prefetch.tensormap [%tmW];
\t@%p0 bra L_wprod;{xconv_branch()}{lrprod_branch()}
\t@!%pthr0 bra L_exit;                        // nothing else to do in WG0 and WG1
\t// ---- thread 0: the main stages ----
\tmov.u32 %ps, 0;
\tmov.u32 %pph, 0;""")
    if K.GDWAIT_ON and "pgdwait" in EXPERIMENTS:
        # pgdwait (measurement): the A stages wait for the preparation grid too, so that none
        # of this kernel's loads competes with its DRAM traffic.  H100, SANA, sustained A/B
        # (2026-12-06): dense 0.977, fused 1.000: the A stages' overlap with the preparation
        # pays (bench/results/experiments/README.md, "The preparation launch on SANA")
        e("\tgriddepcontrol.wait;                        // pgdwait: after the preparation grid")

    def main_stage():
        e("""\tmul.lo.u32 %r10, %ps, 8;
\tadd.u32 %r11, %bar_empty, %r10;
\txor.b32 %r12, %pph, 1;                     // first lap passes""")
        e.wait("%r11", "%r12", "empty")
        if "anocopy" in EXPERIMENTS:   # timing only: the stage keeps what it held
            e("""\tadd.u32 %r13, %bar_full, %r10;
\tmbarrier.arrive.shared::cta.b64 _, [%r13];   // anocopy: no bulk copies""")
            advance(e, "%ps", "%pph", stages)
            return
        if TLINE:
            tline(e, 47, 0, cond="%tlq1")
            e("\tmov.u32 %tlq1, 0;")
            e("""\t{
\t.reg .b32 %tlq8;
\t.reg .pred %tlpq8;
\tsetp.eq.u32 %tlpq8, %pks, 8;
\tselp.u32 %tlq8, %tlu0, 0, %tlpq8;""")
            tline(e, 45, 0, cond="%tlq8")
            e("\t}")
        e(f"""\tadd.u32 %r13, %bar_full, %r10;
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r13], {BM * BK // 2 + L['sfa_bytes']};
\tmad.lo.u32 %r14, %ps, {L['stage']}, %sbase;  // stage base
\tshl.b32 %r15, %pks, 6;                     // K byte coordinate = ks * 64
\tmul.lo.u32 %r16, %pks, {2 * ka};             // SF half-atom coordinate
\tshr.u32 %r8, %pcm0, 7;                      // SFA row block
\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r14], [%tmA, {{%r15, %pcm0}}], [%r13];
\tadd.u32 %r17, %r14, {L['sfa']};
\tcp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r17], [%tmSFA, {{0, %r16, %r8}}], [%r13];""")
        advance(e, "%ps", "%pph", stages)

    def w_chunks():
        if K.XCONV:
            xconv_wait(e)
            if TLINE:
                tline(e, 28, 32, "%tlx")
                e("\tmov.u32 %tlx, 0;")
        for h in range(2):
            past = None
            if h == 1 and K.HALFK:
                past = e.label("wp_halfk")
                e(f"""\t// halfk: no chunk 1 where it lies wholly past K (K % 128 = 64, the last K block)
\tshl.b32 %r15, %pks, 7;
\tadd.u32 %r15, %r15, 64;
\tld.param.u32 %r14, [{k_param()}];
\tsetp.ge.u32 %p5, %r15, %r14;
\t@%p5 bra {past};""")
            e(f"""\t// chunk {h} of stage ks
\tmul.lo.u32 %r12, %t, 8;
\tadd.u32 %r13, %bar_tempty, %r12;
\txor.b32 %r14, %tph, 1;                     // first lap passes""")
            e.wait("%r13", "%r14", "tempty")
            if "wnocopy" in EXPERIMENTS:   # timing only: the slot keeps what it held
                e("""\tadd.u32 %r13, %bar_tfull, %r12;
\tmbarrier.arrive.shared::cta.b64 _, [%r13];   // wnocopy: no bulk copy""")
                advance(e, "%t", "%tph", K.TSLOTS)
                if past:
                    e(f"{past}:")
                continue
            e(f"""\tadd.u32 %r13, %bar_tfull, %r12;
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r13], {L['tslot']};
\tmad.lo.u32 %r42, %t, {L['tslot']}, %sbase;
\tadd.u32 %r42, %r42, {L['t']};              // slot base
\tshl.b32 %r15, %pks, 7;
\tadd.u32 %r15, %r15, {64 * h};                 // K element coordinate = 128 ks + {64 * h}""")
            if K.WPAIR:
                # rank 0 copies the chunk into both CTAs' slot t (same offset), onto each
                # CTA's tfull[t]; rank 1 only armed its own.  Both waited for tempty[t], which
                # counts the consumer warps of both CTAs, so neither slot is still being read.
                e("""\t@%prank0 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r42], [%tmW, {%r15, %pcn0}], [%r13], %mask;""")
            else:
                e("\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r42], [%tmW, {%r15, %pcn0}], [%r13];")
            advance(e, "%t", "%tph", K.TSLOTS)
            if past:
                e(f"{past}:")

    def a_prefetch(tag):
        """aprefetch (measurement): at each unit's start, the next unit's first 4 stages of
        A and SFA into L2 (the timeline has a unit's first stage full 5-6 us after the main
        producer issued it, 0.8-1 us after the previous epilogue ended).  Measured (H200,
        2026-12-04, 2 rounds, 5 shapes): 0.993 / 0.996 (NVFP4 dense / fused), 1.000 / 0.999
        (MXFP4): the wait is not an L2 miss."""
        e("""\t// aprefetch: the next unit's first stages into L2, a unit ahead
\t{
\t.reg .b32 %pxt, %pxb, %pxe;
\tmov.u32 %pxt, %ptile;
\tmov.u32 %pxb, %pkb;
\tmov.u32 %pxe, %pke;""")
        unit_next(e, PCUR, f"apf{tag}")
        e(f"""\tsetp.ge.u32 %p5, %ptile, %ntiles;
\t@%p5 bra L_apf_{tag};""")
        tile_coords(e, "%ptile", "%r20", "%r21")
        for j in range(4):
            e(f"""\tadd.u32 %r22, %pkb, {j};
\tsetp.ge.u32 %p5, %r22, %pke;
\t@%p5 bra L_apf_{tag};
\tshl.b32 %r15, %r22, 6;
\tmul.lo.u32 %r16, %r22, {2 * ka};
\tshr.u32 %r8, %r20, 7;
\tcp.async.bulk.prefetch.tensor.2d.L2.global.tile [%tmA, {{%r15, %r20}}];
\tcp.async.bulk.prefetch.tensor.3d.L2.global.tile [%tmSFA, {{0, %r16, %r8}}];""")
        e(f"""L_apf_{tag}:
\tmov.u32 %ptile, %pxt;
\tmov.u32 %pkb, %pxb;
\tmov.u32 %pke, %pxe;
\t}}""")

    # the A producer issues the last stage of the CTA: it watches the consumers (watch.py)
    producer_walk(e, "L_mprod", "pfirst", "pm", main_stage, at_unit=a_prefetch if APREFETCH else None,
                  leave=WATCH if WATCHDOG else "L_exit")
    e("""\t// ---- thread 32: the W ring ----
L_wprod:
\tmov.u32 %t, 0;
\tmov.u32 %tph, 0;""")
    if K.LRW_ON:
        lora_consts(e)   # %tmL / %tmU for the prefetches (ltail_issue reads the rest again)
        e("""\tmov.u32 %lis, 0;                           // lrw: this thread loads the low-rank ring too
\tmov.u32 %liph, 0;
\tprefetch.tensormap [%tmL];
\tprefetch.tensormap [%tmU];""")
    if K.GDWAIT_ON:
        e("""\t// _w_yt: Wp is written by this launch's preparation kernel, of which the host launches
\t// this kernel as the programmatic dependent: wait until that grid has completed and its
\t// stores are visible (without such a launch, nothing to wait for)
\tgriddepcontrol.wait;""")
        tline(e, 28, 32)   # the prepared operand is there: the _x kernels' "first item ready"
    if K.XCONV:
        e("""\tld.param.u64 %xflags, [p_x_flags];
\tcvta.to.global.u64 %xflags, %xflags;
\tmov.u32 %xrn, -1;                          // no item known converted yet
\tmov.u32 %xall, 0;
\tld.param.u32 %xepoch, [p_x_epoch];""")
        if TLINE:
            e("\t.reg .b32 %tlx;\n\tmov.u32 %tlx, 1;")
    def skip_self_filled():
        """xself: the consumers fill the first unit's first XSELF_KB K blocks (their slots and
        tfull phases): step over them, to the next unit if that was all of the first."""
        e(f"""\t// xself: the consumers convert the first unit's first {XSELF_KB} K blocks into slots 0..{2 * XSELF_KB - 1}
\tsetp.ge.u32 %p5, %ptile, %ntiles;
\t@%p5 bra L_exit;
\tsub.u32 %r10, %pke, %pks;
\tmin.u32 %r10, %r10, {XSELF_KB};""")
        if K.HALFK:
            e(f"""\t// halfk: no first fill where it would reach a half K block (as the consumers decide)
{self_fill_has_half("%pks", "%r10", "%r13", "%r14", "%p5")}
\t@%p5 bra L_wprod_k;""")
        e("\tadd.u32 %pks, %pks, %r10;")
        assert XSELF_KB in (1, 2)
        one = e.label("xself_one")

        advance(e, "%t", "%tph", K.TSLOTS)
        advance(e, "%t", "%tph", K.TSLOTS)
        if XSELF_KB == 2:
            e(f"\tsetp.lt.u32 %p5, %r10, 2;\n\t@%p5 bra {one};")
            advance(e, "%t", "%tph", K.TSLOTS)
            advance(e, "%t", "%tph", K.TSLOTS)
        e(f"""{one}:
\tsetp.lt.u32 %p5, %pks, %pke;
\t@%p5 bra L_wprod_k;""")
        if K.LTAIL:
            # the whole first unit was filled by the consumers: its tile's low-rank tail still
            # comes through the W ring (producer_walk's unit_end is not reached for it)
            ltail_issue(e, L)
        unit_next(e, PCUR, "pwself")
        producer_unit_start(e)

    producer_walk(e, "L_wprod_k", "wfirst", "pw", w_chunks,
                  skip_first=skip_self_filled if K.XSELF_ON else None,
                  unit_end=(lambda: ltail_issue(e, L)) if K.LTAIL else None)
    e("")
    if K.LRP64_ON:
        emit_lowrank_producer(e, L)
    if K.XCONV:
        emit_xconv(e, fmt, L)


def lrprod_branch():
    """lrprod: thread 64 (warp 2, idle in these kernels) to the low-rank producer; lraff: all
    of warp 2."""
    who = "%warp, 2" if K.LRAFF_ON else "%thr, 64"
    return f"""
\tsetp.eq.u32 %p1, {who};
\t@%p1 bra L_lprod;                          // lrprod: the low-rank ring's producer""" if K.LRP64_ON else ""


def producer_u_copy(pred=""):
    """The U box copy of a low-rank chunk issued by a producer (lowrank_boxes' `u_copy`): U rows
    from the producer's tile origin %pcn0, into %r16 on the barrier at %r13; `pred` predicates
    it ("" or "@%plissue ")."""
    return (f"\t{pred}cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
            "[%r16], [%tmU, {%r17, %pcn0}], [%r13];\n")


def emit_lowrank_producer(e, L):
    """lrprod (flags.LRPROD), thread 64: walks the work units on its own cursor (PCUR, as the
    other producers); for a unit that starts its tile (kb = 0: the unit that finishes it) it
    loads the tile's low-rank chunks into the ring in order, each after `lempty` frees its
    slot: chunks 0 .. min(lslots, lchunks)-1 where the rest come through the W ring (LTAIL),
    every chunk otherwise (the ring streams: a slot is refilled as soon as both consumer
    WGs have read it).  The consumers read the chunks in the same order on their own cursor."""
    who = "warp 2 (lraff): wc / beta and" if K.LRAFF_ON else "thread 64 (lrprod):"
    e(f"""\t// ---- {who} the low-rank ring ----
L_lprod:""")
    lora_consts(e)
    pred = "@%plissue " if K.LRAFF_ON else ""
    e(f"""\tsetp.eq.u32 %plissue, %lane, 0;            // the lane that arms and copies
\t{pred}prefetch.tensormap [%tmL];
\t{pred}prefetch.tensormap [%tmU];
\tmov.u32 %lis, 0;
\tmov.u32 %liph, 0;
\tmov.u32 %lph, 0;""")
    unit_first(e, PCUR, "lfirst")
    bound = ("\tmin.u32 %r19, %lslots, %lchunks;           // ltail: the ring's chunks only" if K.LTAIL
             else "\tmov.u32 %r19, %lchunks;                    // the ring streams every chunk")
    leave = "L_lprod_exit" if K.LRAFF_ON else "L_exit"
    e(f"""L_lprod_unit:
\tsetp.ge.u32 %p5, %ptile, %ntiles;
\t@%p5 bra {leave};
\tsetp.ne.u32 %p5, %pkb, 0;
\t@%p5 bra L_lprod_next;                    // a stream-K contributor: the owner applies the low rank""")
    tile_coords(e, "%ptile", "%pcm0", "%pcn0")
    if K.LRAFF_ON:
        lraff_copies(e, L)
    e(f"""{bound}
\tmov.u32 %r18, 0;
L_lprod_chunk:
\tsetp.ge.u32 %p5, %r18, %r19;
\t@%p5 bra L_lprod_next;""")
    u_copy = producer_u_copy(pred)
    # lraff: every lane polls `lempty`, lane 0 alone arms lfull: reconverge after the wait, so
    # that no lane can fall a whole phase behind the one that drives the ring
    lora_slot_load(e, "%r18", "%r20", "L_lprod_box", "%pcm0", u_copy, pred, "lempty_p", reconverge=K.LRAFF_ON)
    advance(e, "%lis", "%liph", "%lslots")
    e("""\tadd.u32 %r18, %r18, 1;
\tbra L_lprod_chunk;
L_lprod_next:""")
    unit_next(e, PCUR, "lnext")
    e("\tbra L_lprod_unit;")
    if K.LRAFF_ON:
        e("""L_lprod_exit:
\tcp.async.wait_all;                          // lraff: the last wc / beta copies landed before the warp leaves
\tbra L_exit;""")


def ltail_issue(e, L):
    """LTAIL, thread 32 after a unit's last W chunk: when the unit starts its tile (kb = 0:
    the unit that finishes it), the tile's low-rank chunks %lslots .. %lchunks-1, each into the
    next W slot (L boxes, then U boxes, as in a low-rank slot), onto tfull with the chunk's
    bytes.  The consumers read them after the ring's chunks, in the same order.  With lrw
    (K.LRW_ON) the ring's chunks 0 .. min(lslots, lchunks)-1 first (lrw_ring_issue)."""
    chunk, done, box = e.label("wtail_chunk"), e.label("wtail_done"), e.label("wtail_box")
    e(f"""\t// ---- ltail: the tile's low-rank chunks past the ring, into the next W slots ----
\tsetp.ne.u32 %p5, %pkb, 0;
\t@%p5 bra {done};                     // a stream-K contributor: the owner applies the low rank""")
    lora_consts(e)
    if K.LRW_ON:
        lrw_ring_issue(e)
    e(f"""\tmov.u32 %r18, %lslots;                     // the first chunk the ring does not carry
{chunk}:
\tsetp.ge.u32 %p5, %r18, %lchunks;
\t@%p5 bra {done};
\tmul.lo.u32 %r12, %t, 8;
\tadd.u32 %r13, %bar_tempty, %r12;
\txor.b32 %r14, %tph, 1;""")
    e.wait("%r13", "%r14", "tempty_lt")
    e(f"""\tadd.u32 %r13, %bar_tfull, %r12;
\tadd.u32 %r14, %lbytes_l, %lbytes_u;
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r13], %r14;
\tmad.lo.u32 %r15, %t, {L['tslot']}, %sbase;
\tadd.u32 %r15, %r15, {L['t']};              // the slot: L boxes
\tadd.u32 %r16, %r15, %lbytes_l;             // U boxes after them""")
    u_copy = producer_u_copy()
    e(lowrank_boxes("%r18", "%r19", box, "%pcm0", u_copy).rstrip("\n"))
    advance(e, "%t", "%tph", K.TSLOTS)
    e(f"""\tadd.u32 %r18, %r18, 1;
\tbra {chunk};
{done}:""")


def lrw_ring_issue(e):
    """lrw (K.LRW_ON), in ltail_issue after the owner check and lora_consts: the tile's ring
    chunks 0 .. min(lslots, lchunks)-1 into the low-rank ring, each after `lempty` frees its
    slot (the consumers are inside this unit, so the last tile's slots are free), on this
    thread's cursor (%lis, %liph); the consumers read them on theirs, then the tail's."""
    chunk, done = e.label("lrw_chunk"), e.label("lrw_done")
    e(f"""\t// lrw: the ring's chunks first (the consumers issue none)
\tmin.u32 %r19, %lslots, %lchunks;
\tmov.u32 %r18, 0;
{chunk}:
\tsetp.ge.u32 %p5, %r18, %r19;
\t@%p5 bra {done};""")
    u_copy = producer_u_copy()
    lora_slot_load(e, "%r18", "%r20", e.label("lrw_box"), "%pcm0", u_copy, "", "lempty_w")
    advance(e, "%lis", "%liph", "%lslots")
    e(f"""\tadd.u32 %r18, %r18, 1;
\tbra {chunk};
{done}:""")

