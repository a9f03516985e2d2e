"""The transform warps of the _t kernels: fp4 W stage -> 16-bit W slot, swizzled for wgmma."""
from ptxgen import advance

from . import kstate as K
from .flags import WATCHDOG, ASSIST, EXPERIMENTS, FORMATS, MXONE, PRODROT, TPREFETCH, TW8
from .sync import arrive
from .convert import (emit_lut_setup, fp4x8_to, mul_x2, mx_big_scales, mx_scales, scale_mx, scale_mx_fast,
    scales_nv4)
from .walk import CUR, PCUR, produce_next, producer_unit_start, unit_first, unit_next
from .watch import WATCH


def transform_rows_of_thread():
    """The W rows thread tt converts per chunk: tt and tt+128 alone, 128*rank+tt in a pair;
    with tw8 (256 transform threads) row tt."""
    assert not (TW8 and K.SPLIT)
    return ["128*rank+tt"] if K.SPLIT else (["tt"] if TW8 else ["tt", "tt+128"])


def row_invariants(e, fmt, L, p, row, tmp):
    """Address parts of W row `row` (a register) that never change, into %wrow{p},
    %wsf{p}, %wst{p} (the tiles are 512/1024-byte aligned, so a swizzle is an XOR on
    bits 4-6 of the address and can be applied last):
      %wrow{p} = W offset + row*64 + (64B swizzle phase << 4)   (loads: ^ (chunk << 4))
      %wsf{p}  = SFW offset + rb*KA*512 + (row%32)*16 + ((row%128)/32)*4
      %wst{p}  = row*128 + ((row & 7) << 4)                     (stores: ^ (chunk << 4))"""
    blk, ka, _, _ = FORMATS[fmt]
    e(f"""\tshr.u32 {tmp}, {row}, 1;
\tand.b32 {tmp}, {tmp}, 3;
\tshl.b32 {tmp}, {tmp}, 4;
\tshl.b32 %wrow{p}, {row}, 6;
\tor.b32 %wrow{p}, %wrow{p}, {tmp};
\tadd.u32 %wrow{p}, %wrow{p}, {L['w']};
\tshr.u32 %wsf{p}, {row}, 7;
\tmul.lo.u32 %wsf{p}, %wsf{p}, {ka * 512};
\tand.b32 {tmp}, {row}, 31;
\tshl.b32 {tmp}, {tmp}, 4;
\tadd.u32 %wsf{p}, %wsf{p}, {tmp};
\tshr.u32 {tmp}, {row}, 5;
\tand.b32 {tmp}, {tmp}, 3;
\tshl.b32 {tmp}, {tmp}, 2;
\tadd.u32 %wsf{p}, %wsf{p}, {tmp};
\tadd.u32 %wsf{p}, %wsf{p}, {L['sfw']};
\tand.b32 {tmp}, {row}, 7;
\tshl.b32 {tmp}, {tmp}, 4;
\tshl.b32 %wst{p}, {row}, 7;
\tor.b32 %wst{p}, %wst{p}, {tmp};""")


def transform_invariants(e, fmt, L):
    """The per-row invariants of the rows this transform thread converts."""
    e("\t// ---- per-row invariants of the transform ----")
    for p, name in enumerate(transform_rows_of_thread()):
        e(f"\t// row {name}")
        if not K.SPLIT:
            e(f"\tadd.u32 %r43, %r40, {128 * p};")
        else:
            e("\tadd.u32 %r43, %r40, %mrank;")
        row_invariants(e, fmt, L, p, "%r43", "%r44")


TRANSFORM_REGS = dict(stage="%r41", slot="%r42", peer="%r39", t=("%r44", "%r45", "%r46", "%r47", "%r48"))
ASSIST_REGS = dict(stage="%r41", slot="%ca5", peer=None, t=("%ca0", "%ca1", "%ca2", "%ca3", "%ca4"))


def transform_rows(e, fmt, h, L, rows=None, halves=(0, 1), regs=TRANSFORM_REGS, part="all", store=None,
                   mx_fast=True):
    """Chunk h of the stage at regs['stage'] into the slot at regs['slot'] (the peer's
    slot at regs['peer'] in a pair): each row's 32 fp4 bytes and 4 scales -> 32 bf16x2
    words, written as logical 16-byte chunks q = { W_0[q], W_1[q], W_2[q], W_3[q] }.
    Words u with u%2 == half give the chunks 4*half..4*half+3, so the work goes in two
    halves (16 live outputs a row) and can be shared out by half; the rows'
    independent chains are emitted side by side for the scheduler.  part: "all", or
    "loads" (the fp4 words and scales alone) then "convert" (the rest).  With mxone
    (MXFP4) the loads keep each row's two raw scale bytes in %sc{4p+3} and the conversion
    is emitted twice, one multiply an output where the warp's scales allow, two where not.
    store(e, p, q, vec), when given, writes logical chunk q of row p instead of the slot
    (the W preparation kernel).  mx_fast=False: MXFP4 always takes the two multiplies (no
    warp vote, one copy of the code)."""
    if rows is None:
        rows = range(len(transform_rows_of_thread()))
    stage, slot, peer = regs["stage"], regs["slot"], regs["peer"]
    t0, t1, t2, t3, t4 = regs["t"]
    mxone = MXONE and fmt == "mxfp4" and mx_fast
    assert not (mxone and ASSIST)
    for p in (rows if part != "convert" else ()):
        e(f"""\tadd.u32 {t0}, {stage}, %wrow{p};               // row {p}: W bytes
\txor.b32 {t1}, {t0}, {(2 * h) << 4};
\tld.shared.v4.b32 {{%wi{8*p}, %wi{8*p+1}, %wi{8*p+2}, %wi{8*p+3}}}, [{t1}];
\txor.b32 {t1}, {t0}, {(2 * h + 1) << 4};
\tld.shared.v4.b32 {{%wi{8*p+4}, %wi{8*p+5}, %wi{8*p+6}, %wi{8*p+7}}}, [{t1}];
\tadd.u32 {t2}, {stage}, %wsf{p};""")
        sc = [f"%sc{4*p + c}" for c in range(4)]
        if fmt == "nvfp4":
            e(f"\tld.shared.u32 {t3}, [{t2}+{h * 512}];          // scales of groups c = 0..3")
            scales_nv4(e, t3, sc, p)
        elif mxone:
            e(f"\tld.shared.u16 {sc[3]}, [{t2}+{2 * h}];            // raw scales: groups 0,1 | 2,3")
        else:
            e(f"\tld.shared.u16 {t3}, [{t2}+{2 * h}];            // scales: groups 0,1 | 2,3")
            mx_scales(e, t3, sc, t4, scale_mx)
    if part == "loads":
        return

    def convert(undo):
        for half in halves:
            outs = {}
            for c in range(4):
                u = 2 * c + half
                for p in rows:
                    regs_out = [f"%tw{16 * p + 4 * c + i}" for i in range(4)]
                    tmp = [f"%cv{6 * p + k}" for k in range(6)]
                    fp4x8_to(e, f"%wi{8 * p + u}", regs_out, tmp, undo)
                    for i in range(4):
                        e(f"\t{mul_x2()} {regs_out[i]}, {regs_out[i]}, %sc{4 * p + c};")
                        outs[(p, c, i)] = regs_out[i]
            for p in rows:
                if store:
                    for i in range(4):
                        store(e, p, 4 * half + i, ", ".join(outs[(p, c, i)] for c in range(4)))
                    continue
                e(f"\tadd.u32 {t0}, {slot}, %wst{p};")
                if K.SPLIT and not K.BULK:
                    e(f"\tadd.u32 {t2}, {peer}, %wst{p};")
                for i in range(4):
                    q = 4 * half + i
                    vec = ", ".join(outs[(p, c, i)] for c in range(4))
                    e(f"""\txor.b32 {t1}, {t0}, {q << 4};
\tst.shared.v4.b32 [{t1}], {{{vec}}};""")
                    if K.SPLIT and not K.BULK:
                        e(f"""\txor.b32 {t1}, {t2}, {q << 4};
\tst.shared::cluster.v4.b32 [{t1}], {{{vec}}};""")

    if not mxone:
        convert(True)
        return
    slow, done = e.label("mx_slow"), e.label("mx_done")
    mx_big_scales(e, [(f"%sc{4 * p + 3}", k) for p in rows for k in (0, 8)])
    e(f"\t@%pmx bra {slow};")
    e("\t// every scale of the warp <= 2: one multiply an output, by 2^(E-1)")
    for p in rows:
        mx_scales(e, f"%sc{4 * p + 3}", [f"%sc{4 * p + c}" for c in range(4)], t4, scale_mx_fast)
    convert(False)
    e(f"\tbra {done};\n{slow}:")
    e("\t// a scale above 2 (or NaN) in the warp: * 2^126, then * 2^(E-127)")
    for p in rows:
        mx_scales(e, f"%sc{4 * p + 3}", [f"%sc{4 * p + c}" for c in range(4)], t4, scale_mx)
    convert(True)
    e(f"{done}:")


def emit_transform(e, fmt, stages, L):
    blk, ka, _, _ = FORMATS[fmt]
    e(f"""
// =====================================================================================
// Transform and producer ({"WG0 and WG1, 256 threads).  Thread tt converts row tt" if TW8 else "WG0, 128 threads).  Thread tt converts rows tt and tt+128"} of
// each W chunk: 32 fp4 bytes (two 16-byte loads through the 64B swizzle) and their
// scales become 32 bf16x2 words, stored as eight 16-byte chunks through the 128B
// swizzle.  Thread 0 is also the producer: it issues the first S-1 stages up front and
// one more each time the transform has released a stage, so the stage it refills
// (the one before) has long been released by the consumers too and the producer's
// `empty` wait does not stall the transform.  With S = 1 (the stage sweep's first
// point) it issues one stage up front and refills that same stage once the consumers
// have read its A: loads and math then alternate, which is what the point measures.
// =====================================================================================
L_transform:""")
    emit_lut_setup(e)
    if K.TSPLIT:
        e("""\t// tsplit: warps 0-3 (rows 0-127) arrive on tfull_lo, warps 4-7 on tfull_hi
\tsetp.lt.u32 %p0, %warp, 4;
\tselp.b32 %bar_tfullw, %bar_tfull, %bar_tfullhi, %p0;""")
    e(f"""\tmov.u32 %r40, %thr;                        // tt
\tsetp.eq.u32 %pthr0, %thr, 0;
\t@%pthr0 prefetch.tensormap [%tmA];
\t@%pthr0 prefetch.tensormap [%tmW];
\t@%pthr0 prefetch.tensormap [%tmSFA];
\t@%pthr0 prefetch.tensormap [%tmSFW];
\tmov.u32 %ps, 0;
\tmov.u32 %pph, 0;
\tmov.u32 %r62, 0;""")
    if PRODROT:
        e("\tmov.u32 %pgs, 0;")
    unit_first(e, PCUR, "pfirst")
    producer_unit_start(e)
    e(f"""L_prod_prologue:
\tsetp.ge.u32 %p5, %r62, {max(stages - 1, 1)};
\t@%p5 bra L_prod_prologue_done;""")
    produce_next(e, fmt, stages, L, "prologue")
    e("""\tadd.u32 %r62, %r62, 1;
\tbra L_prod_prologue;
L_prod_prologue_done:""")
    transform_invariants(e, fmt, L)
    e("""\tmov.u32 %s, 0;
\tmov.u32 %ph, 0;
\tmov.u32 %t, 0;
\tmov.u32 %tph, 0;""")
    unit_first(e, CUR, "tfirst")
    e(f"""L_t_tile:
\tsetp.ge.u32 %p0, %tile, %ntiles;
\t@%p0 bra {"L_t_leave" if WATCHDOG else "L_exit"};
\tsub.u32 %ks, %ke, %kb;                      // stages of the unit (counted down)
L_t_k:
\tmul.lo.u32 %r10, %s, 8;
\tadd.u32 %r11, %bar_full, %r10;""")
    e.wait("%r11", "%ph", "full_t")
    e(f"\tmad.lo.u32 %r41, %s, {L['stage']}, %sbase;   // stage base")
    for h in range(2):
        prefetch = TPREFETCH and "skip_transform" not in EXPERIMENTS
        if prefetch:
            e(f"\t// ---- chunk {h}: its fp4 words and scales (the stage is full) before the slot wait ----")
            transform_rows(e, fmt, h, L, part="loads")
        e(f"\t// ---- chunk {h}: wait for a free slot t ----")
        e("""\tmul.lo.u32 %r12, %t, 8;
\tadd.u32 %r13, %bar_tempty, %r12;
\txor.b32 %r14, %tph, 1;""")
        e.wait("%r13", "%r14", "tempty")
        e(f"\tmad.lo.u32 %r42, %t, {L['tslot']}, %sbase;")
        e(f"\tadd.u32 %r42, %r42, {L['t']};              // slot base")
        if K.SPLIT:
            e("\tmapa.shared::cluster.u32 %r39, %r42, %peer;   // the peer's slot base")
        # one CTA converts rows tt and tt+128; a pair splits them: rank v converts row
        # 128v+tt and writes it into both CTAs' slots
        if "skip_transform" not in EXPERIMENTS:
            # with consumer_assist the consumers convert half 1 of every row
            transform_rows(e, fmt, h, L, halves=(0,) if ASSIST else (0, 1),
                           part="convert" if prefetch else "all")
        if K.BULK:
            e(f"""\t// the 128 converted rows of this CTA -> the same rows of the peer's slot, one bulk
\t// copy (async proxy) onto the peer's tfull; every transform warp has stored its rows
\tfence.proxy.async.shared::cta;
\tbar.sync 3, 128;
\tsetp.eq.u32 %p1, %lane, 0;
\tmul.lo.u32 %r12, %t, 8;
\tadd.u32 %r13, %bar_tfull, %r12;
\t@!%pthr0 bra L_bulk_sent_{h};
\tmad.lo.u32 %r15, %mrank, 128, %r42;          // rows 128v.. of the slot: 128 B a row
\tmapa.shared::cluster.u32 %r16, %r15, %peer;
\tmapa.shared::cluster.u32 %r17, %r13, %peer;
\tcp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r16], [%r15], {128 * K.BN // 2}, [%r17];
\t// this CTA's tfull: the four warps' arrives and the peer's {128 * K.BN // 2} bytes
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r13], {128 * K.BN // 2};
L_bulk_sent_{h}:
\tbar.warp.sync 0xffffffff;
\tand.pred %p2, %p1, !%pthr0;
\t@%p2 mbarrier.arrive.shared::cta.b64 _, [%r13];""")
        else:
            scope = "cluster" if K.SPLIT else "cta"
            fence = (f"fence.proxy.async.shared::{scope};" if "notfence" not in EXPERIMENTS
                     else "// (no fence: measurement only)")
            e(f"""\t// make the generic-proxy stores visible to wgmma, then one arrive per warp
\t{fence}
\tbar.warp.sync 0xffffffff;
\tsetp.eq.u32 %p1, %lane, 0;
\tmul.lo.u32 %r12, %t, 8;
\tadd.u32 %r13, {"%bar_tfullw" if K.TSPLIT else "%bar_tfull"}, %r12;""")
            arrive(e, "%p1", "%r13", "%r14", remote=K.SPLIT)
        advance(e, "%t", "%tph", K.TSLOTS)
    e("""\t// both chunks of the stage read: release it (one arrive per warp)
\tbar.warp.sync 0xffffffff;
\tmul.lo.u32 %r10, %s, 8;
\tadd.u32 %r11, %bar_empty, %r10;""")
    arrive(e, "%p1", "%r11", "%r12")
    produce_next(e, fmt, stages, L, "loop")
    advance(e, "%s", "%ph", stages)
    e("""\tsub.u32 %ks, %ks, 1;
\tsetp.ne.u32 %p0, %ks, 0;
\t@%p0 bra L_t_k;""")
    unit_next(e, CUR, "t", bounds=True)
    e("\tbra L_t_tile;\n")
    if WATCHDOG:
        # warp 0 (it issued stages: prodrot) watches the consumers (watch.py), whole: the
        # cluster teardown at L_exit is .aligned
        e(f"""L_t_leave:
\tsetp.eq.u32 %p0, %warp, 0;
\t@%p0 bra {WATCH};
\tbra L_exit;""")
