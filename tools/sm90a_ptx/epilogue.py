"""The writeback: accumulators -> bf16 / f16 via stmatrix into swizzled staging buffers, bulk
tensor stores (plain, transposed for _yt, or direct for epistg)."""
from . import kstate as K
from .flags import EXPERIMENTS, TRANSFORM_THREADS
from .timeline import tline
from .convert import alpha_mul, alpha_paths
from .layout import xdone_off


EPI_WG_FIRST_ROW = """\tadd.u32 %r51, %m0, 0;
\tshl.b32 %r52, %r42, 6;
\tadd.u32 %r51, %r51, %r52;                   // {}
\tsetp.eq.u32 %p2, %r43, 0;"""


def epilogue_chunk_begin(e, q, L):
    """Chunk q of an epilogue: wait until the bulk store that last read its staging buffer
    has read it, synchronise the WG, %r53 = the WG's half of the buffer, %r54 = + %r49.
    FP4LR_GEN_EXPERIMENT=epinowait (timing only, Y may be wrong): no wait for the reads, to
    bound what more writeback buffers could gain (the stores themselves stay)."""
    if "epinowait" in EXPERIMENTS:
        def e(text, e=e):
            e("\n".join("\t// epinowait: no wait for the store's reads (timing only)"
                        if "cp.async.bulk.wait_group.read" in line else line for line in text.split("\n")))
    buf = q % K.WB_STAGES
    if K.XDBUF and q == 0:
        # the WG's issuing thread picks the epilogue's buffers: two once the converters left
        # (xdone's phase 0 complete); its word tells the WG (read after this chunk's barrier;
        # the previous epilogue's reads were before its last barrier).  Everything this thread
        # stored last tile was read long ago: wait for all.
        e(f"""\t// chunk 0 (XDBUF: the WG's word = 0, one buffer; or the converters' staging - own buffer, two)
\t@%p2 mbarrier.test_wait.parity.shared::cta.b64 %pxd, [%bar_full+{xdone_off(L)}], 0;
\t@%p2 selp.u32 %r54, {L['xstage'] - L['wb']}, 0, %pxd;
\tmad.lo.u32 %r53, %r42, 4, %bar_full;
\t@%p2 st.shared.u32 [%r53+{xdone_off(L) + 8}], %r54;
\t@%p2 cp.async.bulk.wait_group.read 0;
\tbar.sync %r46, 128;
\tadd.u32 %r53, %sbase, {L['wb']};
\tmad.lo.u32 %r53, %r42, {L['wbuf'] // 2}, %r53;   // this WG's half
\tadd.u32 %r54, %r53, %r49;""")
    elif K.XDBUF:
        # the word is read where it is used (a register live through the epilogue spills the
        # consumer).  Two buffers: chunk q - 1 used the other, so at most one store may still
        # read; one buffer: none may
        e(f"""\t// chunk {q} (XDBUF: {"the second buffer if two" if q % 2 else "the own buffer"})
\tmad.lo.u32 %r53, %r42, 4, %bar_full;
\tld.shared.u32 %r53, [%r53+{xdone_off(L) + 8}];   // the WG's word
\tsetp.eq.and.u32 %pxd, %r53, 0, %p2;
\t@%pxd cp.async.bulk.wait_group.read 0;
\t@%p2 cp.async.bulk.wait_group.read 1;
\tbar.sync %r46, 128;""" + ("\n\tadd.u32 %r53, %r53, %sbase;\n\tadd.u32 %r53, %r53, " + str(L['wb']) + ";" if q % 2 else
                            "\n\tadd.u32 %r53, %sbase, " + str(L['wb']) + ";") + f"""
\tmad.lo.u32 %r53, %r42, {L['wbuf'] // 2}, %r53;   // this WG's half
\tadd.u32 %r54, %r53, %r49;""")
    else:
        keep = wb_wait_keep(q)
        e(f"""\t// chunk {q}{"" if keep == K.WB_STAGES - 1 else f" (the previous tile's last store read this buffer: wait for all)"}
\t@%p2 cp.async.bulk.wait_group.read {keep};
\tbar.sync %r46, 128;
\tadd.u32 %r53, %sbase, {L['wb'] + buf * L['wbuf']};
\tmad.lo.u32 %r53, %r42, {L['wbuf'] // 2}, %r53;   // this WG's half
\tadd.u32 %r54, %r53, %r49;""")
    per = epi_chunks() // 4   # the timeline's four chunk events: every per-th chunk
    if q % per == 0:
        tline(e, 36 + q // per, TRANSFORM_THREADS, "%tl0")


def epilogue_chunk_store(e, q, coords):
    """Chunk q's staging written: make it visible to the async proxy, synchronise the WG,
    and the WG's thread 0 issues its bulk tensor store at `coords` (%r58 = n0 + EPI_COLS q)."""
    if "epinostore" in EXPERIMENTS:
        # timing only (Y never written): the epilogue's work and barriers without its stores
        e(f"""\tfence.proxy.async.shared::cta;
\tbar.sync %r46, 128;
\tadd.u32 %r58, %n0, {K.EPI_COLS * q};   // epinostore: no bulk store""")
    else:
        e(f"""\tfence.proxy.async.shared::cta;
\tbar.sync %r46, 128;
\tadd.u32 %r58, %n0, {K.EPI_COLS * q};
\t@%p2 cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%tmY, {{{coords}}}], [%r53];
\t@%p2 cp.async.bulk.commit_group;""")
    if q == epi_chunks() - 1:
        tline(e, 40, TRANSFORM_THREADS, "%tl0")


CHUNK_WORDS = {4: "Four", 5: "Five", 8: "Eight"}


def epi_buffers_doc(L):
    """Which staging buffer an epilogue chunk uses, for the epilogue's comment."""
    half = f"this WG's {L['wbuf'] // 2 // 1024} KiB half"
    if K.XDBUF:
        return (f"chunk q uses the own buffer ({half}), odd chunks\n\t// the converters' staging "
                "instead once they have left (xdone; two buffers)")
    return f"chunk q uses staging buffer q%{K.WB_STAGES} ({half})"


def wb_wait_keep(q):
    """The bulk groups chunk q's wait may leave outstanding: those committed after the last
    store that read its buffer (q % WB_STAGES).  WB_STAGES - 1 inside a tile; for the first
    chunks of a tile, the previous tile's stores after that buffer's last use there, plus this
    tile's before chunk q (0 for chunk 0 of the narrow tile: five chunks over two buffers end
    on buffer 0).  tools/writeback_check.py checks the result from the PTX."""
    if q >= K.WB_STAGES:
        return K.WB_STAGES - 1
    e = epi_chunks()
    last = q + K.WB_STAGES * ((e - 1 - q) // K.WB_STAGES)   # the previous tile's last chunk on q's buffer
    return min(K.WB_STAGES - 1, (e - 1 - last) + q)


def wb_wait_doc():
    """wait_group.read's count in the plain epilogue's header comment."""
    keeps = [wb_wait_keep(q) for q in range(epi_chunks())]
    if len(set(keeps)) == 1:
        return str(keeps[0])
    return ", ".join(f"{k} at chunk {q}" for q, k in enumerate(keeps) if k != K.WB_STAGES - 1) + \
        f", else {K.WB_STAGES - 1}"


def epi_chunks():
    """The epilogue's chunks: the tile's BN columns in EPI_COLS-column pieces."""
    return K.BN // K.EPI_COLS


Y_PARAMS = """\t.param .u64 p_y,                      // epistg: Y (16-byte aligned), for the direct stores
\t.param .u32 p_ldy,                    // Y's row stride in elements (a multiple of 8, below 2^32)
\t.param .u32 p_ym                      // Y's rows (M)
"""


def emit_epilogue_direct(e, L):
    """The epistg epilogue (see EPISTG): per 64-column chunk q, each warp (its 16 tile rows)
    converts its accumulators to bf16, writes them with four stmatrix.x4 into its 2 KiB of
    scratch (16 rows x 128 bytes, 16-byte unit u of row R at u ^ R%8: conflict-free both
    ways), reads them back 16 bytes a lane (8 lanes a row, four rows an instruction) and
    stores them to Y; columns past N are stored element by element, rows past M not at all."""
    assert K.BN == 256 and not K.YT
    assert K.WB_STAGES * L['wbuf'] >= 8 * 2048, "epistg: the scratch is the staging's first 16 KiB"
    e(f"""\t// ---- epilogue (epistg): alpha * acc -> bf16 -> stmatrix into the warp's 2 KiB scratch
\t// -> 16-byte global stores (8 lanes a row); no named barrier, proxy fence or bulk store ----
\t{{
\t.reg .b32 %eo<2>, %el<2>, %ev<4>, %et<4>;
\t.reg .b64 %eg, %eg4, %ea;
\t.reg .pred %erow<4>, %efull, %epart, %ecol;
\tbar.warp.sync -1;
\tshr.u32 %et0, %r40, 5;                      // consumer warp 0-7 = 4 WG + w
\tmad.lo.u32 %et0, %et0, 2048, %sbase;
\tadd.u32 %et0, %et0, {L['wb']};              // this warp's scratch
\t// stmatrix: lane l addresses row 8((l/8)%2) + l%8 of matrix l/8, unit 2p + l/16
\tshr.u32 %et1, %lane, 3;
\tand.b32 %et1, %et1, 1;
\tand.b32 %et2, %lane, 7;                     // l%8: the row's swizzle phase (and U below)
\tmad.lo.u32 %et1, %et1, 8, %et2;
\tmad.lo.u32 %et1, %et1, 128, %et0;            // the row's address
\t// unit (2p + l/16) ^ (l%8) = (2p ^ (l%8 & 6)) + (l/16 ^ (l%8 & 1)): %eo0 = the row's address
\t// + 16 (l/16 ^ (l%8 & 1)), %eo1 = l%8 & 6; pair p at %eo0 + 16 (2p ^ %eo1)
\tshr.u32 %et3, %lane, 4;
\tand.b32 %ev0, %et2, 1;
\txor.b32 %et3, %et3, %ev0;
\tmad.lo.u32 %eo0, %et3, 16, %et1;
\tand.b32 %eo1, %et2, 6;""")
    e("""\t// read-back: lane l reads row 4i + l/8, unit U = l%8 (at U ^ (4i + l/8)%8)
\tshr.u32 %et1, %lane, 3;
\txor.b32 %ev0, %et2, %et1;
\tmad.lo.u32 %ev1, %et1, 128, %et0;
\tmad.lo.u32 %el0, %ev0, 16, %ev1;            // i even
\txor.b32 %ev0, %ev0, 4;
\tmad.lo.u32 %el1, %ev0, 16, %ev1;            // i odd
\t// global: row m0 + 64 WG + 16 w + 4i + l/8, column n0 + 64q + 8U
\tld.param.u64 %eg, [p_y];
\tcvta.to.global.u64 %eg, %eg;
\tld.param.u32 %ev0, [p_ldy];
\tld.param.u32 %ev2, [p_ym];
\tld.param.u32 %ev3, [p_x_N];
\tshr.u32 %ev1, %r40, 5;
\tmad.lo.u32 %ev1, %ev1, 16, %m0;
\tadd.u32 %ev1, %ev1, %et1;                   // row of i = 0""")
    for i in range(4):
        if i:
            e(f"\tadd.u32 %et0, %ev1, {4 * i};\n\tsetp.lt.u32 %erow{i}, %et0, %ev2;")
        else:
            e("\tsetp.lt.u32 %erow0, %ev1, %ev2;")
    e("""\tmul.wide.u32 %ea, %ev1, %ev0;               // row * ldY
\tmad.lo.u32 %et0, %et2, 8, %n0;              // column n0 + 8U (chunk 0)
\tcvt.u64.u32 %eg4, %et0;
\tadd.u64 %ea, %ea, %eg4;
\tshl.b64 %ea, %ea, 1;
\tadd.u64 %eg, %eg, %ea;                      // chunk 0, i = 0
\tmul.wide.u32 %eg4, %ev0, 8;                 // four rows: 8 ldY bytes""")
    regs = ("%r55", "%r56", "%r57", "%r59")
    for q in range(4):
        def chunk_body(folded, q=q):
            for p in range(4):
                for k, reg in enumerate(regs):
                    i = 32 * q + 8 * p + 2 * k
                    if K.FUSED:
                        e(f"\tcvt.rn.bf16x2.f32 {reg}, %acc{i+1}, %acc{i};")
                    else:
                        e(f"{alpha_mul(i, '%f0', folded)}{alpha_mul(i + 1, '%f1', folded)}"
                          f"\tcvt.rn.bf16x2.f32 {reg}, %f1, %f0;")
                e(f"""\txor.b32 %et3, %eo1, {2 * p};
\tmad.lo.u32 %et3, %et3, 16, %eo0;            // pair {p}: 8-column groups {2 * p}, {2 * p + 1} of the chunk
\tstmatrix.sync.aligned.m8n8.x4.shared.b16 [%et3], {{{', '.join(regs)}}};""")
        e(f"\t// chunk {q}: columns {64 * q}..{64 * q + 63}")
        if K.FUSED:
            chunk_body(False)
        else:
            alpha_paths(e, f"epd{q}", chunk_body)
        e(f"""\tbar.warp.sync -1;
\tadd.u32 %et1, %et0, {64 * q + 8};
\tsetp.le.u32 %efull, %et1, %ev3;            // the lane's 8 columns all below N
\tadd.u64 %ea, %eg, {128 * q};""")
        for i in range(4):
            skip = e.label(f"epd_edge{q}{i}")
            e(f"""\tld.shared.v4.b32 {{{', '.join(regs)}}}, [%el{i % 2}+{512 * i}];
\tand.pred %ecol, %erow{i}, %efull;
\t@%ecol st.global.v4.b32 [%ea], {{{', '.join(regs)}}};
\tadd.u32 %et1, %et0, {64 * q};
\tsetp.lt.u32 %epart, %et1, %ev3;
\tand.pred %epart, %epart, %erow{i};
\tand.pred %epart, %epart, !%efull;
\t@!%epart bra {skip};                       // N edge: element by element""")
            for w in range(4):
                e(f"\tmov.b32 {{%h{2 * w}, %h{2 * w + 1}}}, {regs[w]};")
            for el in range(8):
                e(f"""\tadd.u32 %et1, %et0, {64 * q + el};
\tsetp.lt.u32 %ecol, %et1, %ev3;
\t@%ecol st.global.b16 [%ea+{2 * el}], %h{el};""")
            e(f"{skip}:")
            if i < 3:
                e("\tadd.u64 %ea, %ea, %eg4;")
        e("\tbar.warp.sync -1;                          // the scratch is read: the next chunk may write it")
    e("\t}")


def emit_epilogue(e, L):
    if K.EPISTG_ON:
        emit_epilogue_direct(e, L)
        return
    if K.YT:
        emit_epilogue_transposed(e, L)
        return
    # the 16-byte unit u of staging row r sits at u ^ phase: 128B swizzle (128-byte rows)
    # phase = r % 8; 64B swizzle (64-byte rows, four units) phase = (r / 2) % 4
    if K.EPI_COLS == 64:
        phase, rowshift = "\tand.b32 %r48, %r47, 7;                      // 128B swizzle phase", 7
    else:
        assert K.EPI_COLS == 32
        phase = ("\tshr.u32 %r48, %r47, 1;\n"
                 "\tand.b32 %r48, %r48, 3;                      // 64B swizzle phase: (row / 2) % 4")
        rowshift = 6
    e(f"""\t// ---- epilogue: alpha * acc -> bf16 -> swizzled staging -> bulk tensor store ----
\t// {CHUNK_WORDS[epi_chunks()]} {K.EPI_COLS}-column chunks; {epi_buffers_doc(L)}.
\t// Before writing a buffer the WG's issuing thread waits until the store that used it
\t// last has finished reading (wait_group.read {"1, or 0 with one buffer" if K.XDBUF else wb_wait_doc()}), then the WG synchronises.
\tadd.u32 %r46, %r42, 1;                      // named barrier id 1 / 2
\tand.b32 %r47, %r20, 63;                     // row inside the WG's 64 rows
{phase}
\tshl.b32 %r49, %r47, {rowshift};                      // row * {2 * K.EPI_COLS}
\tshl.b32 %r50, %r21, 2;                      // 4c
\tadd.u32 %r49, %r49, %r50;
{EPI_WG_FIRST_ROW.format("first row of the WG's store")}""")
    for q in range(epi_chunks()):
        epilogue_chunk_begin(e, q, L)

        def chunk_body(folded, q=q):
            for j in range(K.EPI_COLS // 8):
                i = K.EPI_COLS // 2 * q + 4 * j
                if K.FUSED:   # alpha was applied with the affine
                    e(f"""\tcvt.rn.bf16x2.f32 %r55, %acc{i+1}, %acc{i};
\tcvt.rn.bf16x2.f32 %r56, %acc{i+3}, %acc{i+2};""")
                else:
                    e("".join(alpha_mul(i + k, f"%f{k}", folded) for k in range(4)) +
                      """\tcvt.rn.bf16x2.f32 %r55, %f1, %f0;
\tcvt.rn.bf16x2.f32 %r56, %f3, %f2;""")
                e(f"""
\txor.b32 %r57, %r48, {j};
\tshl.b32 %r57, %r57, 4;
\tadd.u32 %r57, %r57, %r54;
\tst.shared.b32 [%r57], %r55;                 // row r
\tst.shared.b32 [%r57+{16 * K.EPI_COLS}], %r56;            // row r+8 (same swizzle phase)""")
        if K.FUSED:
            chunk_body(False)
        else:
            alpha_paths(e, f"epi{q}", chunk_body)
        epilogue_chunk_store(e, q, "%r58, %r51")


def emit_epilogue_transposed(e, L):
    """The _yt kernels' epilogue: the tile C (this kernel's M x N) is Y^T, so chunk q of a
    WG (its 64 C rows x C columns cq..cq+c-1, c = EPI_COLS) is the c x 64 block of Y at rows
    n0 + cq.., columns m0 + 64 wg..  stmatrix .trans writes each 8 x 8 accumulator block transposed: a
    staging row is a C column (a Y row), 128 bytes of 64 C rows (Y columns), 128-byte
    swizzled as the store's box wants.  Lane l of an x4 addresses row l%8 of matrix l/8:
    matrices 0-3 = (C columns 16p..+7, rows 16w..+7), (the same, rows 16w+8..), (columns
    16p+8.., rows 16w..), (16p+8.., 16w+8..); their fragments are the accumulators
    32q + 8p + {0,1}, {2,3}, {4,5}, {6,7} (row l/4, columns 2(l%4), +1)."""
    e(f"""\t// ---- epilogue (Y transposed): alpha * acc -> bf16 -> stmatrix.trans staging -> bulk tensor store ----
\t// {CHUNK_WORDS[epi_chunks()]} {K.EPI_COLS}-column chunks of C ({K.EPI_COLS}-row blocks of Y); {epi_buffers_doc(L)},
\t// with the same wait_group.read / named-barrier protocol as the plain epilogue.
\tadd.u32 %r46, %r42, 1;                      // named barrier id 1 / 2
\tshr.u32 %r47, %lane, 3;                     // m: the {"x2 matrix (lanes 16-31: as 0-15)" if K.FUSED else "x4 matrix"} whose row this lane addresses
\tand.b32 %r48, %lane, 7;                     // rho: that row (a C column, a Y row)""")
    if K.FUSED:
        e("\tshl.b32 %r49, %r48, 7;                      // staging row rho (+ 8j below), * 128 bytes")
    else:
        e("""\tshr.u32 %r49, %r47, 1;
\tshl.b32 %r49, %r49, 3;
\tadd.u32 %r49, %r49, %r48;                   // staging row 8(m/2) + rho (+ 16p below)
\tshl.b32 %r49, %r49, 7;                      // * 128 bytes""")
    e(f"""\tshr.u32 %r50, %r43, 5;                      // warp in WG
\tshl.b32 %r50, %r50, 1;
\tand.b32 %r47, %r47, 1;
\tadd.u32 %r50, %r50, %r47;                   // 16-byte unit 2w + m%2: C rows 16w + 8(m%2)..+7
\txor.b32 %r50, %r50, %r48;                   // 128B swizzle: unit ^ (staging row % 8 = rho)
\tshl.b32 %r50, %r50, 4;
\tadd.u32 %r49, %r49, %r50;                   // this lane's row address in a chunk's buffer
{EPI_WG_FIRST_ROW.format("the WG's first C row = first Y column of its store")}""")
    regs = ("%r55", "%r56", "%r57", "%r59")
    for q in range(epi_chunks()):
        epilogue_chunk_begin(e, q, L)
        if K.FUSED:
            # alpha was applied with the affine; one x2 (rows r, r+8 of columns 8j..) at a
            # time: the fused consumer has no registers for four
            for j in range(K.EPI_COLS // 8):
                i = K.EPI_COLS // 2 * q + 4 * j
                e(f"""\tcvt.rn.bf16x2.f32 %r55, %acc{i+1}, %acc{i};
\tcvt.rn.bf16x2.f32 %r56, %acc{i+3}, %acc{i+2};
\tstmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%r54+{1024 * j}], {{%r55, %r56}};""")
            epilogue_chunk_store(e, q, "%r51, %r58")
            continue
        # the dense family: EPI_COLS / 16 x4 stores a chunk (four, or two in the narrow tile)

        def chunk_body(folded, q=q):
            for p in range(K.EPI_COLS // 16):
                for k, reg in enumerate(regs):
                    i = K.EPI_COLS // 2 * q + 8 * p + 2 * k
                    e(f"""{alpha_mul(i, f"%f{2*k}", folded)}{alpha_mul(i + 1, f"%f{2*k+1}", folded)}\tcvt.rn.bf16x2.f32 {reg}, %f{2*k+1}, %f{2*k};""")
                e(f"\tstmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%r54+{2048 * p}], {{{', '.join(regs)}}};")
        alpha_paths(e, f"epi{q}", chunk_body)
        epilogue_chunk_store(e, q, "%r51, %r58")
