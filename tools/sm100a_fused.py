"""sm100a_fused.py -- the fused family's parts of the sm_100a kernels (tools/gen_sm100a.py).

The fused kernel is the dense one plus three things, all in the same warp-specialised
skeleton:

  * warp 3 becomes the low-rank producer: per tile it writes the tile's wc and beta columns
    into a shared-memory slice (1 and 0 where absent) and loads the tile's L and U chunks
    (rc ranks each) through their own ring (lfull / lempty);
  * after the main K loop the MMA issuer waits until the epilogue has applied the affine to
    the accumulator in tensor memory (`affdone`), then adds L . U^T onto it with kind::f16
    MMAs (bf16 operands, fp32 accumulate), chunk by chunk, and commits `lrdone`;
  * the epilogue warps apply wc * (alpha * acc) + beta in fp32 and store it back into the
    accumulator columns (tcgen05.st), release the slice, wait for `lrdone`, then run the
    dense epilogue without alpha.  With r = 0 there is no low-rank pass: the affine is
    applied in registers on the way out.

Tensor memory: the low-rank term accumulates in place (host/budget.c's TMEM plan for N = 256:
a second 256-column accumulator does not fit next to the scale factors).

Every function takes the generator's Kernel object K; nothing here executes on a GPU.
"""
import ptxgen

LORA_SLOTS = 4           # low-rank ring slots compiled in (the host passes how many it uses)


def kind_f16_idesc(m, n):
    """32-bit idesc of kind::f16 with bf16 A and B, fp32 D, both K-major, dense: D format F32
    (1) at bits 4-5, A and B format BF16 (1) at 7-9 and 10-12, N>>3 at 17-22, M>>4 at 24-28
    (CUTLASS UMMA::InstrDescriptor; the PTX table for kind::f16 has the same fields).
    host/sm100a_desc.c's fp4lr_sm100a_idesc_f16 computes the same and is tested."""
    return (1 << 4) | (1 << 7) | (1 << 10) | ((n >> 3) << 17) | ((m >> 4) << 24)


assert kind_f16_idesc(128, 256) == 0x08400490 and kind_f16_idesc(256, 256) == 0x10400490


def params():
    """Kernel parameters of the fused family (after the dense ones): the sm_90a fused list."""
    return f"""\t.param .align 128 .b8 p_tmL[128],     // L   BF16 {{r, M}}, box {{wk, 128}}, swizzle 2*wk bytes
\t.param .align 128 .b8 p_tmU[128],     // U   BF16 {{r, N}}, box {{wk, 256 / cluster}}, swizzle 2*wk bytes
\t.param .u64 p_wc,                    // fp32 [N] or 0 (absent: 1)
\t.param .u64 p_beta,                  // fp32 [N] or 0 (absent: 0)
\t.param .u32 p_N,
\t.param .u32 p_lora_chunks,           // low-rank chunks per tile, ceil(r / rc); 0 = none
\t.param .u32 p_lora_slots,            // low-rank ring slots used (<= {LORA_SLOTS})
\t.param .u32 p_lora_sub,              // boxes per chunk: 1 (rc <= 64)
\t.param .u32 p_lora_ksteps,           // kind::f16 MMAs (K = 16) per chunk, rc / 16
\t.param .u32 p_lora_wk,               // ranks per box: 16, 32 or 64
\t.param .u32 p_lora_deschi            // smem descriptor high word for 2*wk-byte rows
"""


def regs():
    return """\t.reg .b64 %tmL, %tmU, %wcp, %betap;
\t.reg .b32 %bar_lfull, %bar_lempty, %bar_affd, %bar_lrd, %bar_affr, %bar_affe, %lbase, %slice;
\t.reg .b32 %lchunks, %lslots, %lsub, %lksteps, %lwk, %ldeschi, %lbytes_l, %lslot, %ncols, %ls, %lph, %fph, %lc;
\t.reg .b32 %idesc_lr;
\t.reg .pred %pwc, %pbeta, %plr;
\t.reg .f32 %aw<4>, %ab<4>, %fwc, %fbeta;"""


def layout(K, L):
    """The wc/beta slice after the writeback buffers; the low-rank ring after the fixed area
    (its slot size is set at run time by the host)."""
    L["aff"] = L["fixed"]
    L["fixed"] = L["aff"] + 2 * K.bn * 4
    return L


def ring_after_fixed(L):
    L["lora"] = L["total"]


def barriers(K):
    """Extra mbarriers after the dense ones: lfull[4], lempty[4], affdone[acc], lrdone[acc],
    affready, affempty."""
    return 2 * LORA_SLOTS + 2 * K.acc + 2


def setup(e, K):
    L = K.L
    e(f"""\tadd.u32 %bar_lfull, %bar_acce, {8 * K.acc};
\tadd.u32 %bar_lempty, %bar_lfull, {8 * LORA_SLOTS};
\tadd.u32 %bar_affd, %bar_lempty, {8 * LORA_SLOTS};
\tadd.u32 %bar_lrd, %bar_affd, {8 * K.acc};
\tadd.u32 %bar_affr, %bar_lrd, {8 * K.acc};
\tadd.u32 %bar_affe, %bar_affr, 8;
\tadd.u32 %slice, %sbase, {L['aff']};             // wc at +0, beta at +{4 * K.bn}
\tadd.u32 %lbase, %sbase, {L['lora']};            // low-rank ring
{ptxgen.LOWRANK_PARAMS}\tmin.u32 %lslots, %lslots, {LORA_SLOTS};              // no more slots than barriers compiled in
\tmax.u32 %lslots, %lslots, 1;
\tsetp.ne.u32 %plr, %lchunks, 0;
\tshl.b32 %lbytes_l, %lwk, 8;                 // L box: 128 rows x 2*wk bytes
\tmul.lo.u32 %lslot, %lwk, {2 * (128 + K.bn_cta)};   // slot: L box + U box ({K.bn_cta} rows)""")


def init_barriers(e, K):
    for i in range(LORA_SLOTS):
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_lfull+{8 * i}], 1;")
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_lempty+{8 * i}], 1;")
    for i in range(K.acc):
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_affd+{8 * i}], {4 * K.cl};")
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_lrd+{8 * i}], 1;")
    e("\tmbarrier.init.shared::cta.b64 [%bar_affr], 32;")
    e("\tmbarrier.init.shared::cta.b64 [%bar_affe], 4;")


def ring_advance(e, idx, phase):
    """Next slot of the low-rank ring (its size %lslots is a kernel parameter)."""
    e(f"""\tadd.u32 {idx}, {idx}, 1;
\tsetp.eq.u32 %p7, {idx}, %lslots;
\t@%p7 mov.u32 {idx}, 0;
\t@%p7 xor.b32 {phase}, {phase}, 1;""")


def emit_lowrank_producer(e, K, tile_coords, walk_start, walk_next):
    """Warp 3: the tile's wc/beta slice (all 32 lanes), then lane 0 loads its L and U chunks."""
    pair = K.cl == 2
    cta = ".cta_group::2" if pair else ""
    op = f"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes{cta}"
    e(f"""
// =====================================================================================
// Low-rank producer (warp 3).  Per tile: wait `affempty` (the epilogue has read the last
// slice), write wc[n] and beta[n] of the tile's {K.bn} columns into the slice (1 and 0 where
// absent or n >= N; lane l takes columns l, l+32, ...), one arrive per lane on `affready`.
// Then lane 0 loads the tile's low-rank chunks: wait `lempty[j]`, {"(even CTA) " if pair else ""}arm `lfull[j]`
// with {"both CTAs' " if pair else "the "}L and U boxes, issue them{" onto the even CTA's barrier" if pair else ""}.
// =====================================================================================
L_lowrank:
\tand.pred %p1, %plane0, %plr;               // with r = 0 the host leaves L and U unencoded
\t@%p1 prefetch.tensormap [%tmL];
\t@%p1 prefetch.tensormap [%tmU];""")
    walk_start(e, "l", ["%ls", "%lph", "%fph"])
    tile_coords(e, K, "%tile", "%m0", "%n0")
    e("""\t// the slice of the previous tile has been read by the four epilogue warps
\txor.b32 %r12, %fph, 1;""")
    e.wait("%bar_affe", "%r12", "affempty")
    for j in range(K.bn // 32):
        e(f"""\tadd.u32 %r13, %lane, {32 * j};             // column of the tile
\tadd.u32 %r14, %r13, %n0;
\tsetp.lt.u32 %p1, %r14, %ncols;
\tmul.wide.u32 %rd1, %r14, 4;
\tmov.f32 %fwc, 0f3F800000;
\tmov.f32 %fbeta, 0f00000000;
\tand.pred %p2, %p1, %pwc;
\tadd.s64 %rd2, %wcp, %rd1;
\t@%p2 ld.global.nc.f32 %fwc, [%rd2];
\tand.pred %p2, %p1, %pbeta;
\tadd.s64 %rd2, %betap, %rd1;
\t@%p2 ld.global.nc.f32 %fbeta, [%rd2];
\tshl.b32 %r15, %r13, 2;
\tadd.u32 %r15, %r15, %slice;
\tst.shared.f32 [%r15], %fwc;
\tst.shared.f32 [%r15+{4 * K.bn}], %fbeta;""")
    e("""\tmbarrier.arrive.shared::cta.b64 _, [%bar_affr];   // this lane's columns are written
\txor.b32 %fph, %fph, 1;
\t// low-rank chunks of the tile (lane 0)
\t@!%plane0 bra L_l_chunks_done;
\tmov.u32 %lc, 0;
L_l_chunk:
\tsetp.ge.u32 %p0, %lc, %lchunks;
\t@%p0 bra L_l_chunks_done;
\tmul.lo.u32 %r10, %ls, 8;
\tadd.u32 %r11, %bar_lempty, %r10;
\txor.b32 %r12, %lph, 1;                     // first lap passes""")
    e.wait("%r11", "%r12", "lempty")
    e(f"""\tadd.u32 %r13, %bar_lfull, %r10;
\tmul.lo.u32 %r16, %lslot, {K.cl};                 // bytes landing on the barrier""")
    if pair:
        e("""\t@%plead mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r13], %r16;
\tmapa.shared::cluster.u32 %r13, %r13, %lead;""")
    else:
        e("\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r13], %r16;")
    e(f"""\tmad.lo.u32 %r14, %ls, %lslot, %lbase;       // L box of the slot
\tadd.u32 %r15, %r14, %lbytes_l;              // U box
\tmul.lo.u32 %r17, %lc, %lwk;                 // first rank of the chunk
\tmad.lo.u32 %r18, %crank, {K.bn_cta}, %n0;       // U rows of this CTA{" (its N half)" if pair else ""}
\t{op} [%r14], [%tmL, {{%r17, %m0}}], [%r13];
\t{op} [%r15], [%tmU, {{%r17, %r18}}], [%r13];""")
    ring_advance(e, "%ls", "%lph")
    e("""\tadd.u32 %lc, %lc, 1;
\tbra L_l_chunk;
L_l_chunks_done:
\tbar.warp.sync 0xffffffff;""")
    walk_next(e, "l")
    e("""L_l_done:
\t// tail (lane 0): every low-rank slot released, so no commit towards this CTA is in flight
\t@!%plane0 bra L_teardown;
\tmov.u32 %cnt, 0;
L_l_tail:
\tsetp.ge.u32 %p0, %cnt, %lslots;
\t@%p0 bra L_teardown;
\tmul.lo.u32 %r10, %ls, 8;
\tadd.u32 %r11, %bar_lempty, %r10;
\txor.b32 %r12, %lph, 1;""")
    e.wait("%r11", "%r12", "l_tail")
    ring_advance(e, "%ls", "%lph")
    e("""\tadd.u32 %cnt, %cnt, 1;
\tbra L_l_tail;""")


def emit_mma_lowrank(e, K, commit):
    """MMA issuer, after the tile's `accfull` commit: wait `affdone[a]` (the affine is in the
    accumulator), add L . U^T chunk by chunk (kind::f16, K = 16 per MMA), commit `lrdone[a]`."""
    e(f"""\t// ---- low-rank term onto the accumulator (skipped when r = 0) ----
\t@!%plr bra L_m_nolr;
\tmul.lo.u32 %r10, %a, 8;
\tadd.u32 %r11, %bar_affd, %r10;""")
    # affdone stays at cluster scope in the paircta build too: the peer's tcgen05.st into this
    # pair's accumulator, then its generic arrive, then this MMA reading those columns (item 12)
    e.wait("%r11", "%aph", "affdone", scope="cluster" if K.cl == 2 else None)
    e("""\ttcgen05.fence::after_thread_sync;
\tmov.u32 %lc, 0;
L_m_lchunk:
\tsetp.ge.u32 %p0, %lc, %lchunks;
\t@%p0 bra L_m_lrend;
\tmul.lo.u32 %r10, %ls, 8;
\tadd.u32 %r11, %bar_lfull, %r10;""")
    e.wait("%r11", "%lph", "lfull")
    e("""\ttcgen05.fence::after_thread_sync;
\tmad.lo.u32 %r13, %ls, %lslot, %lbase;
\tshr.u32 %r15, %r13, 4;
\tand.b32 %r15, %r15, 0x3FFF;                 // L descriptor start
\tadd.u32 %r13, %r13, %lbytes_l;
\tshr.u32 %r16, %r13, 4;
\tand.b32 %r16, %r16, 0x3FFF;                 // U descriptor start
\t// rc / 16 MMAs of K = 16 (32 bytes of a 2*rc-byte swizzled row); each count unrolled
\tsetp.eq.u32 %p0, %lksteps, 1;
\t@%p0 bra L_m_lk1;
\tsetp.eq.u32 %p0, %lksteps, 2;
\t@%p0 bra L_m_lk2;
\tsetp.ne.u32 %p0, %lksteps, 4;
\t@%p0 trap;                                  // rc is 16, 32 or 64: a host contract violation""")
    for steps in (4, 2, 1):
        e(f"L_m_lk{steps}:")
        for k in range(steps):
            e(f"""\tadd.u32 %r17, %r15, {2 * k};
\tmov.b64 %ad, {{%r17, %ldeschi}};
\tadd.u32 %r17, %r16, {2 * k};
\tmov.b64 %bd, {{%r17, %ldeschi}};
\ttcgen05.mma.{K.cg}.kind::f16 [%tacc], %ad, %bd, %idesc_lr, %ptrue;""")
        if steps != 1:
            e("\tbra L_m_lkdone;")
    e(f"""L_m_lkdone:
\tmul.lo.u32 %r10, %ls, 8;
\tadd.u32 %r11, %bar_lempty, %r10;
\t{commit.format('%r11')}   // slot free when these finish""")
    ring_advance(e, "%ls", "%lph")
    e(f"""\tadd.u32 %lc, %lc, 1;
\tbra L_m_lchunk;
L_m_lrend:
\tmul.lo.u32 %r10, %a, 8;
\tadd.u32 %r11, %bar_lrd, %r10;
\t{commit.format('%r11')}   // low-rank term added
L_m_nolr:""")


def affine_chunk(e, K, q):
    """Registers %v0..%v63 (TMEM columns 64q..64q+63 of this row) <- wc * (alpha * v) + beta,
    wc and beta from the slice (broadcast reads: every lane needs the same columns)."""
    for g in range(16):
        col = 64 * q + 4 * g
        e(f"""\tld.shared.v4.f32 {{%aw0, %aw1, %aw2, %aw3}}, [%slice+{4 * col}];
\tld.shared.v4.f32 {{%ab0, %ab1, %ab2, %ab3}}, [%slice+{4 * K.bn + 4 * col}];""")
        for i in range(4):
            v = f"%v{4 * g + i}"
            e(f"""\tmul.f32 {v}, {v}, %alpha;
\tfma.rn.f32 {v}, {v}, %aw{i}, %ab{i};""")


def emit_affine_pass(e, K):
    """Epilogue, r > 0: the affine goes back into the accumulator (tcgen05.st), then the
    slice is released and `affdone` lets the MMA issuer add the low-rank term."""
    pair = K.cl == 2
    e("\t// ---- affine pass: acc = wc * (alpha * acc) + beta, back into tensor memory ----")
    for q in range(K.bn // 64):
        c0 = 64 * q
        e(f"""\tadd.u32 %r27, %r26, {c0};
\ttcgen05.ld.sync.aligned.32x32b.x32.b32 {{{", ".join(f"%v{i}" for i in range(32))}}}, [%r27];
\tadd.u32 %r28, %r26, {c0 + 32};
\ttcgen05.ld.sync.aligned.32x32b.x32.b32 {{{", ".join(f"%v{i}" for i in range(32, 64))}}}, [%r28];
\ttcgen05.wait::ld.sync.aligned;""")
        affine_chunk(e, K, q)
        e(f"""\ttcgen05.st.sync.aligned.32x32b.x32.b32 [%r27], {{{", ".join(f"%v{i}" for i in range(32))}}};
\ttcgen05.st.sync.aligned.32x32b.x32.b32 [%r28], {{{", ".join(f"%v{i}" for i in range(32, 64))}}};""")
    e("""\ttcgen05.wait::st.sync.aligned;
\ttcgen05.fence::before_thread_sync;
\tbar.warp.sync 0xffffffff;""")
    if pair:
        e("""\tadd.u32 %r12, %r19, %r10;                  // the even CTA's affdone[a]
\t@%plane0 mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r12];""")
    else:
        e("""\tadd.u32 %r11, %bar_affd, %r10;
\t@%plane0 mbarrier.arrive.shared::cta.b64 _, [%r11];""")
    e("""\t@%plane0 mbarrier.arrive.shared::cta.b64 _, [%bar_affe];   // slice read
\t// wait for the low-rank MMAs
\tadd.u32 %r11, %bar_lrd, %r10;""")
    e.wait("%r11", "%aph", "lrdone")
    e("""\tbar.warp.sync 0xffffffff;
\ttcgen05.fence::after_thread_sync;""")


def header_doc(K):
    pair = K.cl == 2
    return f"""
//
// Family: fused, the whole operator in OPERATOR.md section 1's order:
//     Y = bf16_rne( wc[n] * (alpha * main) + beta[n] + L . U^T )
//   warp 3           low-rank producer: per tile waits `affempty`, writes the tile's wc and beta
//                    columns into the slice (1 / 0 where absent or past N), arrives `affready`
//                    (32 lanes); lane 0 then loads each low-rank chunk (rc ranks): waits
//                    `lempty[j]`, {"(even CTA) " if pair else ""}arms `lfull[j]`, L box (128 x rc) and U box ({K.bn_cta} x rc{", its N half" if pair else ""}).
//   MMA issuer       after the main loop commits `accfull[a]`; when r > 0 waits `affdone[a]`, then
//                    per chunk waits `lfull[j]` and issues rc/16 tcgen05.mma.{K.cg}.kind::f16
//                    (idesc 0x{kind_f16_idesc(128 * K.cl, K.bn):08X}: bf16 x bf16 -> fp32, M = {128 * K.cl}, N = {K.bn}) onto the same
//                    accumulator, commits `lempty[j]`, finally `lrdone[a]`{" (multicast)" if pair else ""}.
//   epilogue         r > 0: tcgen05.ld, wc * (alpha * acc) + beta in fp32, tcgen05.st back,
//                    wait::st, arrive `affdone[a]`{" (the even CTA's)" if pair else ""} and `affempty`, wait `lrdone[a]`, then the
//                    dense epilogue without alpha.  r = 0: the affine in registers on the way out.
//   lfull[j]    count 1  {"even CTA: " if pair else ""}the producer's expect_tx (L + U of the chunk{", both CTAs" if pair else ""}).
//   lempty[j]   count 1  tcgen05.commit after the chunk's MMAs{" (multicast)" if pair else ""}.
//   affdone[a]  count {4 * K.cl}  one arrive per epilogue warp{" of both CTAs" if pair else ""} after its tcgen05.st and wait::st.
//   lrdone[a]   count 1  tcgen05.commit after the tile's low-rank MMAs{" (multicast)" if pair else ""}.
//   affready    count 32 warp 3's lanes, the slice written.  affempty count 4: the epilogue warps, slice read.
//   Low-rank ring at {K.L['lora']} (after the fixed area): slots x (128 + {K.bn_cta}) x rc x 2 bytes, rc and the
//   slot count from the host (<= {LORA_SLOTS} slots, rc in 16, 32, 64; smem descriptor high word p_lora_deschi:
//   K-major, 2*rc-byte rows with the 32/64/128-byte swizzle, SBO = 8 rows).
//   wc/beta slice at {K.L['aff']}: {K.bn} fp32 wc, then {K.bn} fp32 beta."""


def assumptions(K):
    return [
        "kind::f16 idesc (bf16 x bf16 -> fp32, K-major): D format at bits 4-5, A/B format at 7-9 /\n"
        "  10-12, N>>3 at 17-22, M>>4 at 24-28 (CUTLASS UMMA::InstrDescriptor; not in the fact sheet).",
        "tcgen05.st.32x32b then tcgen05.wait::st and fence::before_thread_sync make the stored\n"
        "  accumulator visible to an MMA issued after the barrier (fact sheet sec. 4, canonical pattern).",
        "An MMA with enable_input_d accumulates onto columns last written by tcgen05.st (in-place\n"
        "  low-rank, host/budget.c's TMEM plan).",
        "32B / 64B swizzled K-major bf16 operands (rc = 16 / 32): swizzle codes 6 / 4, SBO = 8 rows\n"
        "  (fact sheet sec. 3), the K step of 32 bytes inside the row as for 128B.",
    ]
