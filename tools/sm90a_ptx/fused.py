"""The fused family: kernel parameters, the low-rank ring (L and U chunks), the wc / beta
slices, the affine in registers and the low-rank wgmmas onto the same accumulators."""
import ptxgen
from ptxgen import advance

from . import kstate as K
from .flags import CWG0, LORA_SLOTS, LUNI, TLPRO, TRANSFORM_THREADS, TW8
from .timeline import tline
from .layout import acc_list
from .sync import arrive
from .convert import alpha_mul, alpha_paths


def fused_params():
    """Kernel parameters of the fused family (after the dense ones)."""
    n = "M" if K.YT else "N"   # _yt: wc and beta index this kernel's rows (Y's columns)
    return f"""\t.param .align 128 .b8 p_tmL[128],     // L   BF16 {{r, M}}, box {{wk, 128}}, swizzle 2*wk bytes
\t.param .align 128 .b8 p_tmU[128],     // U   BF16 {{r, N}}, box {{wk, {K.BN}}}, swizzle 2*wk bytes
\t.param .u64 p_wc,                    // fp32 [{n}] or 0 (absent: 1)
\t.param .u64 p_beta,                  // fp32 [{n}] or 0 (absent: 0)
\t.param .u32 p_N,{"                     // M: the length of wc and beta" if K.YT else ""}
\t.param .u32 p_lora_chunks,           // low-rank chunks per tile, ceil(r / rc); 0 = none
\t.param .u32 p_lora_slots,            // low-rank ring slots used (<= LORA_SLOTS)
\t.param .u32 p_lora_sub,              // boxes per chunk, rc / wk
\t.param .u32 p_lora_ksteps,           // k16 steps per box, wk / 16
\t.param .u32 p_lora_wk,               // ranks per box: 16, 32 or 64
\t.param .u32 p_lora_deschi,           // wgmma descriptor high word for 2*wk-byte rows
""".replace("LORA_SLOTS", str(LORA_SLOTS))


def fused_setup(L, stages):
    return f"""\tadd.u32 %bar_lfull, %bar_tempty, {8 * K.TSLOTS};
\tadd.u32 %bar_lempty, %bar_lfull, {8 * LORA_SLOTS};
\tadd.u32 %lbase, %sbase, {L['lora']};              // low-rank ring (slot size set at run time)
"""


def lraff_offs(L):
    """lraff: `afull` and `aempty` at %bar_full + these, the first two of the barrier area's
    spare words (skbulk's and xdone's, which only the _x kernels use)."""
    assert not K.SKBULK_ON and not K.XDBUF and not K.XCONV
    return 8 * L['nbar'], 8 * (L['nbar'] + 1)


def lraff_init(L):
    """lraff: thread 0's init of afull (32: one arrive per producer lane, when its copies
    have landed) and aempty (8: one per consumer warp)."""
    full, empty = lraff_offs(L)
    return (f"\tmbarrier.init.shared::cta.b64 [%bar_full+{full}], 32;   // lraff: afull\n"
            f"\tmbarrier.init.shared::cta.b64 [%bar_full+{empty}], 8;    // lraff: aempty")


def lraff_copies(e, L):
    """lraff, every lane of warp 2 for a unit that starts its tile: after `aempty` (parity
    %lph ^ 1: the consumers read the previous tile's values; the first lap passes), lane l
    copies wc / beta of tile rows l, l + 32, l + 64, l + 96 (row i into slice i / 64 at
    4 (i % 64), beta at +1024: the layout aff_fill_rows writes) with cp.async, zero past
    p_N, sources clamped; nothing where wc / beta are absent (the consumers take 1 and 0 then:
    lraff_consumer_release).  Then its one arrive on `afull`, cp.async.mbarrier.arrive.noinc:
    counted when its copies have landed (one arrive per lane and phase: synccheck reports a
    lane's second arrive in a phase, e.g. a plain arrive after the non-noinc form)."""
    full, empty = lraff_offs(L)
    e(f"""\t// ---- lraff: this tile's wc / beta into the consumer WGs' slices ----
\tadd.u32 %r11, %bar_full, {empty};
\txor.b32 %r12, %lph, 1;                     // first lap passes""")
    e.wait("%r11", "%r12", "aempty")
    e(f"\tsub.u32 %r21, %ncols, 1;")
    for j in range(4):
        g = j // 2
        e(f"""\tadd.u32 %r22, %lane, {32 * j};                // tile row i
\tadd.u32 %r23, %pcm0, %r22;                 // kernel row m = m0 + i
\tsetp.lt.u32 %p2, %r23, %ncols;
\tselp.u32 %r24, 4, 0, %p2;                   // bytes read (0: zero fill)
\tmin.u32 %r23, %r23, %r21;                   // source clamped inside the arrays
\tmul.wide.u32 %rd2, %r23, 4;
\tand.b32 %r22, %r22, 63;
\tshl.b32 %r22, %r22, 2;
\tadd.u32 %r22, %r22, %sbase;
\tadd.u32 %r22, %r22, {L['aff'] + g * K.AFF_SLICE};           // slice {g}, row i % 64""")
        for ptr, pred, off in (("%wcp", "%pwc", 0), ("%betap", "%pbeta", 1024)):
            e(f"""\tadd.s64 %rd4, {ptr}, %rd2;
\t@{pred} cp.async.ca.shared.global [%r22+{off}], [%rd4], 4, %r24;""")
    e(f"""\tadd.u32 %r11, %bar_full, {full};
\tcp.async.mbarrier.arrive.noinc.shared::cta.b64 [%r11];   // afull: counted once these copies landed
\txor.b32 %lph, %lph, 1;""")


def lraff_consumer_wait(e, L):
    """lraff, a consumer thread before the affine: wait for `afull` (parity %liph, flipped
    per tile: the consumers issue no low-rank loads, so the issue cursor's phase is free)."""
    full, _ = lraff_offs(L)
    e(f"""\t// lraff: warp 2 copied this tile's wc / beta (afull)
\tadd.u32 %r46, %bar_full, {full};""")
    e.wait("%r46", "%liph", "afull")


def lraff_consumer_release(e, L):
    """lraff, after the thread read its wc / beta: 1 and 0 where they are absent (warp 2
    copied nothing then), one arrive per warp on `aempty`, after every lane's loads
    (bar.warp.sync), and the next tile's afull parity."""
    _, empty = lraff_offs(L)
    e(f"""\t@!%pwc mov.f32 %f4, 0f3F800000;            // wc absent: 1
\t@!%pwc mov.f32 %f5, 0f3F800000;
\t@!%pbeta mov.f32 %f6, 0f00000000;           // beta absent: 0
\t@!%pbeta mov.f32 %f7, 0f00000000;
\tbar.warp.sync 0xffffffff;
\tadd.u32 %r46, %bar_full, {empty};
\t@%p1 mbarrier.arrive.shared::cta.b64 _, [%r46];   // lraff: aempty, the slice read
\txor.b32 %liph, %liph, 1;""")


def lora_consts(e):
    """The low-rank ring geometry and the affine operands, read from the parameters where
    they are used (after a K loop, at a low-rank load) so that none of them is live
    through the K loop: the fused consumer is at its register limit."""
    e("""\t// ---- fused: low-rank ring geometry, affine operands (from the parameters) ----
""" + ptxgen.LOWRANK_PARAMS + """\tshl.b32 %lrowb, %lwk, 1;                   // bytes per row of a box
\tshl.b32 %lsub_l, %lwk, 8;                  // L box: 128 rows * 2*wk bytes
""" + u_box_bytes() + """\tmul.lo.u32 %lbytes_l, %lsub_l, %lsub;
\tmul.lo.u32 %lbytes_u, %lsub_u, %lsub;""")


def u_box_bytes():
    """%lsub_u: the bytes of a U box, BN rows of 2*wk bytes."""
    if K.BN == 256:
        return "\tshl.b32 %lsub_u, %lwk, 9;                  // U box: 256 rows * 2*wk bytes\n"
    return f"\tmul.lo.u32 %lsub_u, %lwk, {2 * K.BN};              // U box: {K.BN} rows * 2*wk bytes\n"


def aff_copies(e, second, guard):
    """The two wc and two beta values of a thread into the WG's slice at %r52 (wc) and
    %r52 + 1024 (beta), the second value `second` bytes after the first: cp.async from
    %wcp / %betap + %rd2 / %rd3 with %r57 / %r58 bytes (0: zero fill), or 1 and 0 stored when
    absent; `guard` predicates the writes ("" or "@%p2 ").  Then one commit group."""
    for name, ptr, pred, absent, off in (("wc", "%wcp", "%pwc", "0f3F800000", 0),
                                         ("beta", "%betap", "%pbeta", "0f00000000", 1024)):
        if second == 4 and not guard:   # adjacent columns: one 8-byte store
            stores = f"\tst.shared.v2.f32 [%r52+{off}], {{%f4, %f4}};"
        else:
            stores = f"\t{guard}st.shared.f32 [%r52+{off}], %f4;\n\t{guard}st.shared.f32 [%r52+{off + second}], %f4;"
        e(f"""\t@!{pred} bra L_aff_{name}_absent;
\tadd.s64 %rd4, {ptr}, %rd2;
\t{guard}cp.async.ca.shared.global [%r52+{off}], [%rd4], 4, %r57;
\tadd.s64 %rd4, {ptr}, %rd3;
\t{guard}cp.async.ca.shared.global [%r52+{off + second}], [%rd4], 4, %r58;
\tbra L_aff_{name}_done;
L_aff_{name}_absent:
\tmov.f32 %f4, {absent};
{stores}
L_aff_{name}_done:""")
    e("\tcp.async.commit_group;")


def aff_fill_rows(e, L):
    """_yt: wc and beta index this kernel's rows (Y's columns).  Lane c = 0 of each row's
    four threads copies wc / beta of rows m0 + r and m0 + r + 8 into the WG's slice (row i
    of the WG at 4i, beta at +1024), zero filled past p_N, sources clamped; 1 and 0 stored
    when absent."""
    e(f"""\t// ---- fused (Y transposed): wc / beta of this thread's rows into the WG's slice ----
\tmad.lo.u32 %r52, %r42, {K.AFF_SLICE}, %sbase;
\tand.b32 %r53, %r20, 63;                     // row in the WG: 16w + l/4
\tshl.b32 %r53, %r53, 2;
\tadd.u32 %r52, %r52, %r53;
\tadd.u32 %r52, %r52, {L['aff']};                 // &wc slot of row r (r + 8 at +32)
\tadd.u32 %r53, %m0, %r20;                   // kernel row m = m0 + r
\tsub.u32 %r54, %ncols, 1;
\tmin.u32 %r55, %r53, %r54;                   // sources clamped inside the arrays
\tadd.u32 %r56, %r53, 8;
\tmin.u32 %r56, %r56, %r54;
\tsetp.lt.u32 %p2, %r53, %ncols;
\tselp.u32 %r57, 4, 0, %p2;                   // bytes read for m (0: zero fill)
\tadd.u32 %r54, %r53, 8;
\tsetp.lt.u32 %p2, %r54, %ncols;
\tselp.u32 %r58, 4, 0, %p2;                   // for m + 8
\tmul.wide.u32 %rd2, %r55, 4;
\tmul.wide.u32 %rd3, %r56, 4;
\tsetp.eq.u32 %p2, %r21, 0;                   // one lane of the row's four copies""")
    aff_copies(e, 32, "@%p2 ")


def aff_fill(e, L):
    """A unit that starts a tile: this consumer thread's part of its WG's wc / beta slice,
    columns n0 + 2t and n0 + 2t + 1 (t = thread in the WG), by cp.async (4 bytes each, zero
    filled past N, the source clamped inside the array); 1 and 0 stored when wc / beta are
    absent.  Read after the K loop (emit_affine_and_lowrank)."""
    if K.YT:
        aff_fill_rows(e, L)
        return
    e(f"""\t// ---- fused: this thread's columns of the WG's wc / beta slice (read by the affine) ----
\tmad.lo.u32 %r52, %r42, {K.AFF_SLICE}, %sbase;
\tshl.b32 %r53, %r43, 3;
\tadd.u32 %r52, %r52, %r53;
\tadd.u32 %r52, %r52, {L['aff']};                 // &wc slot of column 2t
\tshl.b32 %r53, %r43, 1;
\tadd.u32 %r53, %r53, %n0;                    // column n = n0 + 2t
\tsub.u32 %r54, %ncols, 1;
\tmin.u32 %r55, %r53, %r54;                   // sources clamped inside the arrays
\tadd.u32 %r56, %r53, 1;
\tmin.u32 %r56, %r56, %r54;
\tsetp.lt.u32 %p2, %r53, %ncols;
\tselp.u32 %r57, 4, 0, %p2;                   // bytes read for n (0: zero fill)
\tadd.u32 %r54, %r53, 1;
\tsetp.lt.u32 %p2, %r54, %ncols;
\tselp.u32 %r58, 4, 0, %p2;                   // for n + 1
\tmul.wide.u32 %rd2, %r55, 4;
\tmul.wide.u32 %rd3, %r56, 4;""")
    aff_copies(e, 4, "")


def fused_consumer_setup(e):
    e(f"""\t// ---- fused: the low-rank ring cursors ----
\tmov.u32 %ls, 0;
\tmov.u32 %lph, 0;
\tmov.u32 %lis, 0;
\tmov.u32 %liph, 0;""" + ("" if K.LRP64_ON else f"""
\tsetp.eq.u32 %plissue, %r40, 0;            // thread 0 of {CWG0} issues the low-rank loads""" if not K.LRW_ON else """
\t// lrw: the W producer loads the low-rank ring; the consumers keep the issue code with its
\t// arrive and copies predicated off for every thread (no consumer is thread 2^32 - 1 of its
\t// WGs): without that code ptxas spills 4-8 bytes in the consumers of the 256-wide _x kernels
\tsetp.eq.u32 %plissue, %r40, 0xffffffff;"""))


def u_load(tag, pred=""):
    """The U box of a low-rank chunk: one CTA loads its own; in the pair rank 0 multicasts
    it to both CTAs (same slot offset; each CTA's lfull, armed by its own issuer with the
    L + U bytes, receives them), like W.  `pred` ("" or "@%plissue ") predicates the copy."""
    copy = f"\t{pred}cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
    if K.CL == 1:
        return f"{copy} [%r16], [%tmU, {{%r17, %n0}}], [%r13];\n"
    return (f"\t@!%prank0 bra L_lissue_nou_{tag};\n"
            f"{copy}.multicast::cluster [%r16], [%tmU, {{%r17, %n0}}], [%r13], %mask;\n"
            f"L_lissue_nou_{tag}:\n")


def lowrank_boxes(chunk, box, label, m0, u_copy, pred=""):
    """The bulk copies of low-rank chunk `chunk`: its %lsub L boxes to %r15 and U boxes to
    %r16 on (U by `u_copy`, which uses %r16, %r17 and the barrier %r13), rows from `m0`, the
    box counter in `box`; %r17 = the box's first rank.  `pred` predicates the L copy."""
    return f"""\tmul.lo.u32 %r17, {chunk}, %lsub;
\tmul.lo.u32 %r17, %r17, %lwk;                 // first rank of the chunk
\tmov.u32 {box}, 0;
{label}:
\t{pred}cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r15], [%tmL, {{%r17, {m0}}}], [%r13];
{u_copy}\tadd.u32 %r15, %r15, %lsub_l;
\tadd.u32 %r16, %r16, %lsub_u;
\tadd.u32 %r17, %r17, %lwk;
\tadd.u32 {box}, {box}, 1;
\tsetp.lt.u32 %p5, {box}, %lsub;
\t@%p5 bra {label};
"""


def lora_issue(e, tag):
    """Thread 0 of the first consumer WG loads chunk %li of this tile's L and U into ring slot %lis (after
    both warpgroups released it), onto lfull with the chunk's byte count.  (luni) Every
    consumer thread walks the issue, the issuer alone arrives and copies (flags.LUNI; noluni: the
    issuer alone behind a branch)."""
    pred = "@%plissue " if LUNI else ""
    if K.LRW_ON:   # the code, for the register allocator only (fused_consumer_setup)
        e(f"""\t// ---- low-rank load ({tag}), predicated off for every thread (lrw): no wait, no copy ----""")
    elif LUNI:   # the default
        e(f"""\t// ---- low-rank load ({tag}): chunk %li of the tile into slot %lis ----
\t// every consumer thread walks it (a branch that one thread takes would cost the K loop its
\t// uniform registers: flags.LUNI); thread 0 of {CWG0} alone arms lfull and copies""")
    else:
        e(f"""\t// ---- low-rank load ({tag}): chunk %li of the tile into slot %lis ----
\t@!%plissue bra L_lissue_skip_{tag};""")
    lora_consts(e)
    e(f"""
\tsetp.ge.u32 %p5, %li, %lchunks;
\t@%p5 bra L_lissue_skip_{tag};""")
    lora_slot_load(e, "%li", "%r18", f"L_lissue_box_{tag}", "%m0", u_load(tag, pred), pred, "lempty",
                   wait=not K.LRW_ON)
    e(f"""\tadd.u32 %li, %li, 1;
\tadd.u32 %lis, %lis, 1;
\tsetp.eq.u32 %p5, %lis, %lslots;
\t@%p5 mov.u32 %lis, 0;
\t@%p5 xor.b32 %liph, %liph, 1;
L_lissue_skip_{tag}:""")
    if not LUNI:
        e("""\t// the issuing lane may have waited alone: reconverge the warp before any .aligned op
\tbar.warp.sync 0xffffffff;""")


def lora_slot_load(e, chunk, box, label, m0, u_copy, pred, wait_tag, reconverge=False, wait=True):
    """Low-rank chunk `chunk` into ring slot %lis: wait for `lempty` (parity %liph ^ 1: the
    first lap passes), arm `lfull` with the chunk's bytes and issue its boxes (lowrank_boxes:
    L rows from `m0`, U by `u_copy`); `pred` predicates the arm and the copies, `reconverge`
    reconverges the warp after the wait (every lane polls, one arms); `wait` False leaves the
    wait out (lrw: the consumers' issue, predicated off, kept only for ptxas).  The cursor
    (%lis, %liph) is the caller's to advance.  The consumer issuer (lora_issue), the low-rank
    producer (wprepared.emit_lowrank_producer) and lrw's W producer (wprepared.lrw_ring_issue)
    load through it."""
    e("""\tmul.lo.u32 %r10, %lis, 8;
\tadd.u32 %r11, %bar_lempty, %r10;
\txor.b32 %r12, %liph, 1;""")
    if wait:
        e.wait("%r11", "%r12", wait_tag)
    if reconverge:
        e("\tbar.warp.sync 0xffffffff;")
    e(f"""\tadd.u32 %r13, %bar_lfull, %r10;
\tadd.u32 %r14, %lbytes_l, %lbytes_u;
\t{pred}mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r13], %r14;
\tmad.lo.u32 %r15, %lis, %r14, %lbase;         // L slot; U follows it
\tadd.u32 %r16, %r15, %lbytes_l;
{lowrank_boxes(chunk, box, label, m0, u_copy, pred).rstrip(chr(10))}""")


def lora_l2_prefetch(e):
    """(lprefetch) The issuer asks L2 for this tile's chunks %lslots .. %lchunks-1 (L and U
    boxes; the ring's first fill is loaded right after), then its warp reconverges."""
    e("""\t// ---- (lprefetch) the tile's later low-rank chunks into L2 ----
\t@!%plissue bra L_lpf_done;
\tmov.u32 %r16, %lslots;                     // the first chunk the prologue does not load
L_lpf_chunk:
\tsetp.ge.u32 %p5, %r16, %lchunks;
\t@%p5 bra L_lpf_done;
\tmul.lo.u32 %r17, %r16, %lsub;
\tmul.lo.u32 %r17, %r17, %lwk;                 // first rank of the chunk
\tmov.u32 %r15, 0;
L_lpf_box:
\tcp.async.bulk.prefetch.tensor.2d.L2.global.tile [%tmL, {%r17, %m0}];
\tcp.async.bulk.prefetch.tensor.2d.L2.global.tile [%tmU, {%r17, %n0}];
\tadd.u32 %r17, %r17, %lwk;
\tadd.u32 %r15, %r15, 1;
\tsetp.lt.u32 %p5, %r15, %lsub;
\t@%p5 bra L_lpf_box;
\tadd.u32 %r16, %r16, 1;
\tbra L_lpf_chunk;
L_lpf_done:
\tbar.warp.sync 0xffffffff;""")


def affine_group(e, jj, folded):
    """acc = fma(alpha * acc, wc, beta) on accumulators 4jj..4jj+3 (columns n, n+1 for
    rows r and r+8), wc in %f4/%f5, beta in %f6/%f7; folded: alpha * 2^28 in %alpha28."""
    for k in range(4):
        i = 4 * jj + k
        w, b = ("%f4", "%f6") if k % 2 == 0 else ("%f5", "%f7")
        e(f"""{alpha_mul(i, f"%acc{i}", folded)}\tfma.rn.f32 %acc{i}, %acc{i}, {w}, {b};""")


def emit_affine_and_lowrank(e, L):
    """After the K loop: acc = fma(alpha*acc, wc[n], beta[n]) in fp32 from the WG's slice
    (absent wc = 1, beta = 0; columns past N hold 0), then acc += L . U^T over the tile's low-rank
    chunks with SS wgmma (L rows of this warpgroup from the slot, U all 256 rows)."""
    lora_consts(e)
    if K.LRAFF_ON:
        lraff_consumer_wait(e, L)
    aff_wait = "" if K.LRAFF_ON else """\tcp.async.wait_group 0;
\tadd.u32 %r46, %r42, 1;                      // named barrier id 1 / 2
\tbar.sync %r46, 128;
"""
    aff_src = ("warp 2's copies, waited for above" if K.LRAFF_ON else
               "the copies this thread issued at the tile start, then every thread's of the WG")
    e(f"""\t// ---- affine: acc = wc[n] * (alpha * acc) + beta[n], wc / beta from this WG's slice ----
\t// ({aff_src})
{aff_wait}\tmad.lo.u32 %r50, %r42, {K.AFF_SLICE}, %sbase;""")
    if K.YT:
        # _yt: wc / beta of the thread's two rows (Y's columns) apply to all its accumulators
        e(f"""\tand.b32 %r51, %r20, 63;
\tshl.b32 %r51, %r51, 2;
\tadd.u32 %r50, %r50, %r51;
\tadd.u32 %r50, %r50, {L['aff']};                 // wc of row r; r + 8 at +32; beta at +1024
\tld.shared.f32 %f4, [%r50];
\tld.shared.f32 %f5, [%r50+32];
\tld.shared.f32 %f6, [%r50+1024];
\tld.shared.f32 %f7, [%r50+1056];""")
        if K.LRAFF_ON:
            lraff_consumer_release(e, L)

        def rows_body(folded):
            for i in range(K.BN // 2):
                w, b = ("%f4", "%f6") if i % 4 < 2 else ("%f5", "%f7")
                e(f"""{alpha_mul(i, f"%acc{i}", folded)}\tfma.rn.f32 %acc{i}, %acc{i}, {w}, {b};""")
        alpha_paths(e, "aff", rows_body)
    else:
        e(f"""\tshl.b32 %r51, %r21, 3;
\tadd.u32 %r50, %r50, %r51;
\tadd.u32 %r50, %r50, {L['aff']};                 // wc[2c] of the slice; beta at +1024""")

        def cols_body(folded):
            for jj in range(32):
                e(f"""\tld.shared.v2.f32 {{%f4, %f5}}, [%r50+{32 * jj}];           // wc of columns 2c + 8*{jj}, +1
\tld.shared.v2.f32 {{%f6, %f7}}, [%r50+{1024 + 32 * jj}];""")
                affine_group(e, jj, folded)
        alpha_paths(e, "aff", cols_body)
    if TLPRO:
        tline(e, 35, TRANSFORM_THREADS, "%tlpu")
    e("""\t// ---- low-rank: acc += L . U^T, chunk by chunk through the ring ----
\tmov.u32 %r53, 0;                          // chunk
""" + ("""\tsetp.ne.u32 %plheld, 0, 0;                  // lrpipe: no chunk's slot held yet
""" if K.LRPIPE else "") + """\tmul.lo.u32 %r54, %r42, %lrowb;
\tshl.b32 %r54, %r54, 6;                     // this warpgroup's 64 rows inside an L box
L_lr_chunk:""")
    lowrank_chunk_slot(e, L=L)
    e("""\tadd.u32 %r55, %r55, %r54;
\t// one box per chunk (rc = wk <= 64): 1, 2 or 4 k16 steps, each path unrolled
\tsetp.eq.u32 %p5, %lksteps, 1;
\t@%p5 bra L_lr_k1;
\tsetp.eq.u32 %p5, %lksteps, 2;
\t@%p5 bra L_lr_k2;""")
    for steps in (4, 2, 1):
        e(f"L_lr_k{steps}:")
        e("\twgmma.fence.sync.aligned;")
        for kk in range(steps):
            e(f"""\tadd.u32 %r60, %r55, {32 * kk};
\tshr.u32 %r60, %r60, 4;
\tand.b32 %r60, %r60, 0x3FFF;
\tmov.b64 %rd4, {{%r60, %ldeschi}};
\tadd.u32 %r61, %r56, {32 * kk};
\tshr.u32 %r61, %r61, 4;
\tand.b32 %r61, %r61, 0x3FFF;
\tmov.b64 %rd5, {{%r61, %ldeschi}};""")
            if TW8:
                # columns 128-255: U rows 128-255 (the A fragments are free after the main
                # loop; %xr0 holds the second half's address)
                half_rows = ("\tshl.b32 %xr0, %lrowb, 7;" if K.BN == 256 else
                             f"\tmul.lo.u32 %xr0, %lrowb, {K.BN // 2};             // U rows {K.BN // 2}..: + {K.BN // 2} rows")
                q = K.BN // 4
                e(f"""\twgmma.mma_async.sync.aligned.m64n{K.BN // 2}k16.f32.bf16.bf16 {acc_list(0, q)}, %rd4, %rd5, %ptrue, 1, 1, 0, 0;
{half_rows}
\tadd.u32 %xr0, %xr0, %r56;
\tadd.u32 %xr0, %xr0, {32 * kk};
\tshr.u32 %xr0, %xr0, 4;
\tand.b32 %xr0, %xr0, 0x3FFF;
\tmov.b64 %rd15, {{%xr0, %ldeschi}};
\twgmma.mma_async.sync.aligned.m64n{K.BN // 2}k16.f32.bf16.bf16 {acc_list(q, 2 * q)}, %rd4, %rd15, %ptrue, 1, 1, 0, 0;""")
                continue
            e(f"\twgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {acc_list()}, %rd4, %rd5, %ptrue, 1, 1, 0, 0;")
        e("\twgmma.commit_group.sync.aligned;" + ("" if K.LRPIPE else "\n\twgmma.wait_group.sync.aligned 0;"))
        e("\tbra L_lr_kdone;" if steps != 1 else "")
    refill = ("the W producer or the next tile's request refills it" if K.LTAIL else
              "the issuer refills it with a later chunk")
    if K.LRPIPE:
        lowrank_pipelined_release(e)
        return
    e(f"""L_lr_kdone:
\t// slot read: one arrive per warp, then {refill}
\tbar.warp.sync 0xffffffff;""")
    if K.LTAIL:
        e("""\tsetp.ge.u32 %p5, %r53, %lslots;
\t@!%p5 bra L_lr_ring_free;
\t// ltail: the chunk's W slot is free for the W producer (tempty: one arrive per warp)
\tmul.lo.u32 %r12, %t, 8;
\tadd.u32 %r13, %bar_tempty, %r12;""")
        arrive(e, "%p1", "%r13", "%r14")
        advance(e, "%t", "%tph", K.TSLOTS)
        e("""\tbra L_lr_next;
L_lr_ring_free:""")
    e("""\tmul.lo.u32 %r10, %ls, 8;
\tadd.u32 %r11, %bar_lempty, %r10;""")
    arrive(e, "%p1", "%r11", "%r12")
    e("""\tadd.u32 %ls, %ls, 1;
\tsetp.eq.u32 %p5, %ls, %lslots;
\t@%p5 mov.u32 %ls, 0;
\t@%p5 xor.b32 %lph, %lph, 1;""")
    if K.LTAIL:
        # the ring carries chunks 0 .. lslots-1 only, all requested when the tile starts
        e("L_lr_next:")
    elif not K.LRP64_ON:   # lrprod: thread 64 refills the slot (wprepared.emit_lowrank_producer)
        lora_issue(e, "stream")
    e("""\tadd.u32 %r53, %r53, 1;
\tbra L_lr_chunk;
L_lr_done:""")


def lowrank_pipelined_release(e):
    """LRPIPE, at L_lr_kdone with chunk %r53's wgmmas committed: wait for the previous chunk's
    (wait_group 1), free its slot (one arrive per warp on the barrier saved in %lheld), then
    hold this chunk's slot and move the cursor on; at L_lr_done wait for the last chunk and
    free its slot.  Every chunk of a tile has a slot of its own (ring chunks 0 .. lslots-1, the
    rest one W slot each, LTAIL), so holding one never keeps the next from landing."""
    e("""L_lr_kdone:
\t// lrpipe: the previous chunk's wgmmas are done: free its slot (one arrive per warp)
\twgmma.wait_group.sync.aligned 1;""")
    free_held_slot(e)
    e("""\t// hold this chunk's slot until the next chunk's wgmmas are issued
\tsetp.ge.u32 %p5, %r53, %lslots;
\t@!%p5 bra L_lr_hold_ring;
\tmul.lo.u32 %r12, %t, 8;
\tadd.u32 %lheld, %bar_tempty, %r12;         // ltail: W slot %t""")
    advance(e, "%t", "%tph", K.TSLOTS)
    e("""\tbra L_lr_next;
L_lr_hold_ring:
\tmul.lo.u32 %r10, %ls, 8;
\tadd.u32 %lheld, %bar_lempty, %r10;         // ring slot %ls
\tadd.u32 %ls, %ls, 1;
\tsetp.eq.u32 %p5, %ls, %lslots;
\t@%p5 mov.u32 %ls, 0;
\t@%p5 xor.b32 %lph, %lph, 1;
L_lr_next:
\tsetp.eq.u32 %plheld, 0, 0;
\tadd.u32 %r53, %r53, 1;
\tbra L_lr_chunk;
L_lr_done:
\t// lrpipe: the last chunk's wgmmas, then its slot
\twgmma.wait_group.sync.aligned 0;""")
    free_held_slot(e)


def free_held_slot(e):
    """LRPIPE: lane 0 of each warp arrives on the held chunk's empty barrier (%lheld), if a
    chunk is held (%plheld).  One CTA only (LTAIL): no peer to tell."""
    e("""\tbar.warp.sync 0xffffffff;
\tand.pred %p4, %plheld, %p1;""")
    arrive(e, "%p4", "%lheld", "%r12", remote=False)


def lowrank_chunk_slot(e, l_what="L slot", L=None):
    """At L_lr_chunk: to L_lr_done once chunk %r53 reaches %lchunks; else wait for ring slot
    %ls (lfull, parity %lph), %r55 = its L box, %r56 = its U box.  LTAIL: chunks from
    %lslots on are in the W ring's next slot %t (tfull, parity %tph) instead."""
    e("""\tsetp.ge.u32 %p5, %r53, %lchunks;
\t@%p5 bra L_lr_done;""")
    if K.LTAIL:
        e(f"""\tsetp.ge.u32 %p5, %r53, %lslots;
\t@!%p5 bra L_lr_ring;
\t// ltail: a chunk past the ring, in W slot %t
\tmul.lo.u32 %r12, %t, 8;
\tadd.u32 %r13, %bar_tfull, %r12;""")
        e.wait("%r13", "%tph", "tfull_lt")
        e(f"""\tmad.lo.u32 %r55, %t, {L['tslot']}, %sbase;
\tadd.u32 %r55, %r55, {L['t']};              // L boxes of the W slot
\tadd.u32 %r56, %r55, %lbytes_l;              // U boxes
\tbra L_lr_have;
L_lr_ring:""")
    e("""\tmul.lo.u32 %r10, %ls, 8;
\tadd.u32 %r11, %bar_lfull, %r10;""")
    e.wait("%r11", "%lph", "lfull")
    e(f"""\tadd.u32 %r14, %lbytes_l, %lbytes_u;
\tmad.lo.u32 %r55, %ls, %r14, %lbase;          // {l_what}
\tadd.u32 %r56, %r55, %lbytes_l;              // U slot""")
    if K.LTAIL:
        e("L_lr_have:")
