"""One sm_90a GEMM kernel: sets the per-kernel state (kstate) for an instantiation and emits
its parameters, setup and every role."""
import os

from ptxgen import WATCHDOG_REGS, Emitter

from . import kstate as K
from .flags import (WATCHDOG, GTRIG, ASSIST, BK, BM, BN_NARROW, CHOIST, CSTAG_NS, EPISTG, EXPERIMENTS, FILLASYNC, FILLDEP,
    FORMATS, LORA_SLOTS, LRAFF, LRPROD, LRW, MXONE, PRODROT, REG_NARROW, REG_WIDE, SKBULK, SKINIT, SKORDER, SK_SLOT, THREADS, TLINE,
    TLINE_CTAS, TLINE_EVENTS, TRANSFORM_WARPS, TSPLIT_FORCED, TW8, W3WB, WALKPRE, XCONV_WARPS,
    XPRE, XSELF, XSELF_KB)
from .timeline import tline
from .instances import entry_name
from .layout import WYT_PARAMS, cluster_setup, layout, setup_addresses, tsplit_setup, xdone_off
from .convert import alpha_folds
from .walk import emit_tile_coords_doc
from .fused import fused_params, fused_setup, lraff_init
from .transform import emit_transform
from .xconv import x_params
from .docs import header
from .wprepared import emit_wpre_producers, wparam_doc
from .streamk import SK_PARAMS
from .epilogue import Y_PARAMS
from .consumer import emit_consumer
from .watch import cdone_init, emit_watch


def emit_kernel(fmt, family, cluster, stages, tslots=2, wpre=False, xconv=False, yt=False, bn=256):
    assert family in ("dense", "fused") and cluster in (1, 2)
    # the narrow tile: the swapped _x and _w kernels only (their wc / beta slices hold 64 rows,
    # so a slice of 2 x BN fp32 has room for beta at +1024)
    assert bn == 256 or (bn == BN_NARROW and yt and wpre and cluster == 1 and TW8)
    K.BN = bn
    K.AFF_SLICE = 2 * K.BN * 4
    K.REG_WG0, K.REG_CONSUMER = REG_WIDE if K.BN == 256 else REG_NARROW
    K.WHOLE_N = K.BN == BN_NARROW and "n160one" in EXPERIMENTS
    # W prepared: the 8-warp layout (its consumers are the _t kernels'); the pair (WPAIR) in
    # the plain _w kernels only (no in-kernel conversion, not swapped, 256 wide)
    assert not wpre or (TW8 and not ASSIST)
    assert not (wpre and cluster == 2) or (not xconv and not yt and bn == 256)
    # W converted in the kernel: a W-prepared kernel whose idle warps convert
    assert not xconv or wpre
    # Y transposed: the _x kernels (the swapped plan converts A, the small operand, once inside
    # the kernel) and the _w ones (the swapped plan with w_prep on: A prepared by its own launch)
    assert not yt or wpre
    K.WPRE = wpre
    # The W-prepared pair: A is each CTA's own (main ring local), the prepared W chunk is
    # loaded once by rank 0 and multicast into both CTAs' slot t, so `tempty` counts both
    # CTAs' consumer warps and each CTA's W producer only arms its own `tfull`.
    K.WPAIR = wpre and cluster == 2
    K.XCONV = xconv
    K.YT = yt
    # the _w_yt kernels wait for their preparation launch (nogdwait: a planted fault for
    # tests/test_gemm_swap_wprep.c, the W producer copies Wp at once)
    K.GDWAIT_ON = K.WPRE and K.YT and not K.XCONV and "nogdwait" not in EXPERIMENTS
    # the MXFP4 fused _x kernel (not _yt) spills 12 bytes with the first fill (its 56-register
    # warps, ptxas 13.0): it keeps the producer's first chunks there
    # ... and the measurement flags tline / cstag build the 256-wide _x kernels without it
    # (with both, their consumers spill at 200 registers; the narrow ones keep it)
    K.XSELF_ON = XSELF and xconv and not (fmt == "mxfp4" and family == "fused" and not yt) \
        and not ((TLINE or CSTAG_NS) and bn == 256 and "tlineself" not in EXPERIMENTS)
    K.FILLASYNC_ON = FILLASYNC and K.XSELF_ON and fmt == "nvfp4"
    # the 256-wide fused kernels and MXFP4's 256-wide dense ones spill 4-52 bytes with it
    # (ptxas 13.0; also with two loads batches instead of one): the NVFP4 dense and the
    # narrow kernels
    K.FILLDEP_ON = FILLDEP and K.XSELF_ON and (bn == BN_NARROW or (fmt == "nvfp4" and family == "dense"))
    # the NVFP4 fused kernels with the transform (_t, plain) and the swapped ones spill 8-24
    # bytes with it (ptxas 13.0): all but those
    K.WALKPRE_ON = WALKPRE and not (fmt == "nvfp4" and family == "fused" and cluster == 1 and bn == 256
                                  and (not wpre or yt))
    # the MXFP4 fused _yt consumer spills 4 bytes with it (ptxas 13.0, 32-column epilogue
    # chunks): the _x kernels but that one
    K.SKBULK_ON = SKBULK and xconv and not (fmt == "mxfp4" and family == "fused" and yt) and K.BN == 256
    # the 256-wide fused _x kernels spill with cstag's predicate (8-12 bytes; the MXFP4 non-_yt
    # one since cstag was written, the others since XDBUF and HALFK; the NVFP4 ones spill
    # without the first fill too, so noxself and tline measure the dense and narrow kernels)
    K.CSTAG_ON = CSTAG_NS and not (family == "fused" and xconv and bn == 256)
    # (the MXFP4 fused _x4 kernels, consumers at 192 registers, spill 8 bytes with it)
    K.EPISTG_ON = EPISTG and xconv and not yt and bn == 256 and not (fmt == "mxfp4" and family == "fused")
    # MXFP4's converters (two conversion paths at 56 registers) spill with it: NVFP4 only
    K.XPRE_ON = XPRE and xconv and fmt == "nvfp4"
    K.CL = cluster
    K.FUSED = family == "fused"
    # The fused one-CTA _w and _x kernels (not swapped, 256 wide): a tile's low-rank chunks past the ring
    # come through the W ring, issued by the W producer right after the tile's last W chunk, so
    # they land while the K loop ends instead of one ring round trip each after it
    # (FP4LR_GEN_EXPERIMENT=noltail: through the low-rank ring, as before).
    # In the _x kernels the tail follows the unit's last converted W chunk, or comes at once
    # when the consumers' first fill was the whole first unit (wprepared.py).
    K.LTAIL = K.FUSED and wpre and not yt and cluster == 1 and bn == 256 and "noltail" not in EXPERIMENTS
    # With the low-rank tail every chunk of a tile has its own slot (ring chunks 0 .. lslots-1,
    # the rest one W slot each), so a chunk's slot can be held until the next chunk's wgmmas are
    # issued: the chunks' wgmmas run back to back instead of one wgmma latency apart
    # (FP4LR_GEN_EXPERIMENT=lrserial: wait for each chunk before the next, as before).
    K.LRPIPE = K.LTAIL and "lrserial" not in EXPERIMENTS
    # skbulk's stream-K partials come in through the W ring's slots ("the ring is free then"),
    # where a tile's low-rank tail now lands: not both
    if K.LTAIL:
        K.SKBULK_ON = False
    K.SKORDER_ON = SKORDER and not xconv
    K.SKINIT_ON = SKINIT and K.SKORDER_ON and not K.SKBULK_ON
    # lrprod (the default since 08028d7): a producer thread of its own issues the low-rank ring (flags.LRPROD);
    # warp 2 is idle only where no converter runs, and the pair's U multicast stays with rank 0's issuer
    K.LRP64_ON = LRPROD and K.FUSED and wpre and not xconv and cluster == 1
    K.LRAFF_ON = LRAFF and K.LRP64_ON and yt
    # lrw (flags.LRW): in the _x kernels with the low-rank tail, the W producer issues the ring too
    K.LRW_ON = LRW and K.FUSED and xconv and K.LTAIL
    K.LRPROD_ON = K.LRP64_ON or K.LRW_ON
    # Only the 256-wide _yt kernels (SANA's): with it, on shapes whose K has no half block,
    # the narrow fused kernel ran 5 % slower (sana-out) and the non-swapped fused _x one 0.9 %
    # (flux-qkv, qwen-fc1; A/B at bb5a5e5+1: ptxas schedules the consumers at their register
    # limit differently); the others lose or gain nothing measurable there.
    # (and the _w_yt kernels, whose p_K gives them K: the same SANA plans, prepared)
    K.HALFK = wpre and yt and fmt == "nvfp4" and bn == 256 and "nohalfk" not in EXPERIMENTS
    K.XDBUF = K.FUSED and xconv and K.BN % 64 == 0 and "noxdbuf" not in EXPERIMENTS
    if K.XDBUF and fmt == "mxfp4" and not yt:
        # its converters spill 4 bytes at 56 registers with the 64-column epilogue (ptxas
        # 13.0); at 64 / 192 neither role spills
        K.REG_WG0, K.REG_CONSUMER = REG_NARROW
    # (the _w_yt kernels keep two: host/budget.c yt_prepared)
    K.WB_STAGES = 1 if K.FUSED and ((not xconv and not yt) or K.XDBUF) else 2
    K.EPI_COLS = 32 if (K.FUSED and xconv and not K.XDBUF) or K.BN % 64 else 64
    K.TSLOTS = tslots
    K.NAME_TSLOTS = tslots
    if W3WB and xconv and bn == 256 and tslots == 4:
        # w3wb (measurement): the fourth W slot's 32 KiB as two more 64-column writeback
        # buffers (dense 4; fused 3 of its own, without XDBUF's converter staging); the entry
        # keeps its name and shared-memory size (the barrier area loses two mbarriers)
        assert not K.XSELF_ON or XSELF_KB == 1, "w3wb needs xself1: the first fill takes 2 slots a K block"
        K.TSLOTS, K.WB_STAGES = 3, (3 if K.FUSED else 4)
        K.XDBUF, K.EPI_COLS = False, 64
    K.F16 = fmt == "nvfp4" and "bf16" not in EXPERIMENTS
    # Measured on the H200 (flux-qkv NVFP4): c1 480 TFLOP/s, c2 with both CTAs converting
    # every W row 441, c2 splitting the rows and writing the peer's half with
    # st.shared::cluster 204 (and 349 with the transform skipped: the cross-CTA slot
    # protocol itself costs).  So the committed pair does not split; FP4LR_GEN_C2_SPLIT=1
    # emits the split variant for measurement.  FP4LR_GEN_C2_SPLIT=bulk splits the rows too,
    # but each CTA stores only locally and thread 0 sends its 128 converted rows (16 KiB) to
    # the peer's slot with one cp.async.bulk shared::cta -> shared::cluster per chunk, onto the
    # peer's tfull (expect_tx armed by the peer's thread 0): a measurement variant, not yet run.
    split_mode = os.environ.get("FP4LR_GEN_C2_SPLIT", "")
    K.SPLIT = cluster == 2 and split_mode in ("1", "bulk")
    K.BULK = K.SPLIT and split_mode == "bulk"
    # tsplit needs the 8-warp transform (warps 0-3 own rows 0-127) and one CTA's rows
    K.TSPLIT = ((fmt == "mxfp4" and "notsplit" not in EXPERIMENTS) or TSPLIT_FORCED) and TW8 \
        and not K.SPLIT and not ASSIST and not K.WPRE
    blk, ka, _, _ = FORMATS[fmt]
    L = layout(fmt, stages)
    # every non-split pair waits and arrives at CTA scope: the W-prepared pair (PAIR_SCOPE_DOC)
    # and the transform pair (TPAIR_SCOPE_DOC; 1.33-1.45x its cluster-scope build on the H100,
    # 2026-12-05).  The measurement flag tpaircl emits the transform pair's old cluster scope.
    K.PAIR_CTA = K.CL == 2 and (K.WPAIR or ("tpaircl" not in EXPERIMENTS and not K.SPLIT))
    e = Emitter(K.CL, cluster_scope=False if K.PAIR_CTA else None, watchdog=WATCHDOG)
    header(e, fmt, family, cluster, stages, L)
    name = entry_name(fmt, family, cluster, stages, K.NAME_TSLOTS, K.WPRE, K.XCONV, K.YT, K.BN)
    e(""".version 8.0
.target sm_90a
.address_size 64

.extern .shared .align 1024 .b8 smem[];
""")
    if TLINE:
        e(f".visible .global .align 8 .u64 fp4lr_tline[{TLINE_CTAS * TLINE_EVENTS}];\n")
    # the kernel's M x N result C is Y^T in the _yt kernels: Y's map has N rows of M
    ydoc = "{M, N} (Y = C^T: N rows of M)" if K.YT else "{N, M}"
    # the store's box: one staging buffer's half (a WG's 64 rows by EPI_COLS columns; _yt:
    # EPI_COLS Y rows of 64 columns, 128-byte staging rows)
    ybox = (f"{{64, {K.EPI_COLS}}}, swizzle 128B" if K.YT else
            f"{{{K.EPI_COLS}, 64}}, swizzle {'128B' if K.EPI_COLS == 64 else '64B'}")
    e(f""".visible .entry {name}(
\t.param .align 128 .b8 p_tmA[128],     // A   UINT8 {{K/2, M}}, box {{64, {BM}}}, swizzle 64B
\t.param .align 128 .b8 p_tmW[128],     {wparam_doc()}
\t.param .align 128 .b8 p_tmSFA[128],   // SFA UINT8 {{256, 2*KA, ceil(M/128)}}, box {{256, {2*ka}, 1}}
\t.param .align 128 .b8 p_tmSFW[128],   // SFW UINT8 {{256, 2*KA, ceil(N/128)}}, box {{256, {2*ka}, 2}}
\t.param .align 128 .b8 p_tmY[128],     // Y   BF16  {ydoc}, box {ybox}
\t.param .u32 p_num_k_stages,          // ceil(K / {BK})
\t.param .f32 p_alpha,
\t.param .u32 p_tiles_m,               // ceil(M / {BM * K.CL}): cluster tiles
\t.param .u32 p_tiles_n,               // ceil(N / {K.BN})
\t.param .u32 p_group,                 // tile rows per raster group (>= 1)
{fused_params() if K.FUSED else ""}{SK_PARAMS.replace("p_sk_epoch ", "p_sk_epoch,", 1) + (x_params().replace("p_x_order ", "p_x_order,", 1) + Y_PARAMS if K.EPISTG_ON else x_params()) if K.XCONV else SK_PARAMS.replace("p_sk_epoch ", "p_sk_epoch,", 1) + WYT_PARAMS if K.YT else SK_PARAMS})
.maxntid {THREADS}, 1, 1
.minnctapersm 1
{{""")
    e("""\t.reg .pred %pw, %p<8>, %ptrue, %pacc, %ppend;
\t.reg .b32 %r<64>;
\t.reg .b64 %rd<16>;
\t.reg .b16 %h<8>, %mask;
\t.reg .f32 %f<8>;
\t.reg .b32 %thr, %warp, %lane, %wg;
\t.reg .b32 %sbase, %bar_full, %bar_empty, %bar_tfull, %bar_tempty;
\t.reg .b32 %tile, %ntiles, %tiles_m, %tiles_n, %group, %nks, %ks, %m0, %n0;
\t.reg .b32 %s, %ph, %t, %tph, %tprev;
\t.reg .b32 %ptile, %pks, %ps, %pph, %pcm0, %pcn0;   // producer cursor (thread 0)
\t.reg .pred %pthr0, %prank0;
\t.reg .b32 %tile0, %tstride, %crank, %peer, %mrank;  // tile walk; cluster rank, peer, row offset
\t.reg .b64 %tmA, %tmW, %tmSFA, %tmSFW, %tmY;
\t.reg .b32 %lut0, %lut1, %luth0, %luth1, %bfx126;
\t.reg .b32 %tw<32>, %wi<16>, %sc<8>, %cv<12>;   // transform: outputs, fp4 words, scales, temps
\t.reg .b32 %wrow<2>, %wsf<2>, %wst<2>;           // transform: per-row address invariants
\t.reg .b16 %hs<4>;
\t.reg .f32 %fs<2>;
\t.reg .b32 %xr<8>, %xq<8>, %yr<8>, %yq<8>;   // A fragments: set X (chunk 0), set Y (chunk 1); r = row, q = row+8
\t.reg .f32 %acc<128>;
\t.reg .f32 %alpha;
\t.reg .b32 %kb, %ke, %pkb, %pke;                  // work units: K stage range
\t.reg .b32 %skdp, %skT, %skit0, %skit1, %skit, %skep;   // stream-K walk (short-lived)
\t.reg .b64 %skws;
\t.reg .pred %psk;
\t.reg .f32 %skf<32>;                               // a stream-K owner's partial loads
""")
    if WATCHDOG:
        e(WATCHDOG_REGS.rstrip("\n"))
    if alpha_folds():
        e("\t.reg .f32 %alpha28;                              // alpha * 2^28 (the epilogue's fold)\n\t.reg .pred %pafold;")
    if K.SKBULK_ON:
        e("\t.reg .b32 %skph;                                  // skbulk: the partial barrier's phase")
    if K.XCONV:
        e("""\t.reg .b64 %xflags, %xfa, %xg;                  // _x: item counts, a count's address, a store address
\t.reg .b32 %xepoch, %xv, %xspin, %xN, %xk64, %xu, %xbase, %xitem, %xkb, %xrow0, %xf<8>;
\t.reg .b32 %xrn, %xrk0, %xrk1, %xlim, %xall; // _x W producer: K blocks [xrk0, xrk1) of N tile xrn known converted; all converted
\t.reg .b32 %xt, %xl8, %xsm0, %xsm1, %xj, %xr, %xrl;
\t.reg .pred %px;""")
        if K.XPRE_ON:
            e("\t.reg .b32 %xw<9>;                          // xpre: pass 1's fp4 words and scales")
        if K.XSELF_ON:
            e("\t.reg .b32 %cself, %sw<32>, %ss<4>;         // xself: the first unit still to fill; the fill's loads")
            if K.FILLDEP_ON:
                e("\t.reg .b32 %sdep;                              // xself: every load of the fill, xor-ed")
                e("\t.reg .pred %pself;")
    if K.TSPLIT:
        e("\t.reg .b32 %bar_tfullhi, %bar_tfullw;         // tsplit: tfull_hi base; a transform warp's tfull")
    if CHOIST:
        e("\t.reg .b32 %caoff0, %cdesc0;          // choist: chunk 0's A offset, slot 0's descriptor start")
    if MXONE and fmt == "mxfp4":
        e("\t.reg .b32 %mxt, %mxt2;\n\t.reg .pred %pmx;         // mxone: scale bytes, the warp's path")
    if PRODROT:
        e("\t.reg .b32 %pgs;                              // prodrot: stages issued so far (who issues the next)")
    if ASSIST:
        e("\t.reg .b32 %ca<6>;                         // consumer assist: addresses, slot base")
    if K.FUSED:
        e("""\t.reg .b64 %tmL, %tmU, %wcp, %betap;
\t.reg .b32 %bar_lfull, %bar_lempty, %lbase, %lchunks, %lslots, %lsub, %lksteps, %lbytes_l, %lbytes_u;
\t.reg .b32 %lsub_l, %lsub_u, %lrowb, %ldeschi, %lwk, %ncols, %ls, %lph, %li, %lis, %liph;
\t.reg .pred %pwc, %pbeta, %plissue;""")
        if K.LRPIPE:
            e("\t.reg .b32 %lheld;                           // lrpipe: the held chunk's empty barrier\n\t.reg .pred %plheld;")
        if K.XDBUF:
            e("\t.reg .pred %pxd;                           // XDBUF: the epilogue's buffers")
    e(f"""{setup_addresses(L, stages)}
{tsplit_setup(L) if K.TSPLIT else ""}{fused_setup(L, stages) if K.FUSED else ""}\tsetp.eq.u32 %ptrue, 0, 0;
{cluster_setup()}\t// ---- barrier init (thread 0), made visible to the async proxy, then {"a cluster" if K.CL == 2 else "one CTA"} barrier ----
\tsetp.ne.u32 %p0, %thr, 0;
\t@%p0 bra L_init_done;""")
    tline(e, 0, 0)
    if GTRIG and K.GDWAIT_ON:
        e("\tgriddepcontrol.launch_dependents;           // gtrig: the next launch's preparation may be scheduled")
    if K.SKBULK_ON:
        assert L['xstage'] >= L['bar'] + 8 * (L['nbar'] + 1) and K.TSLOTS * L['tslot'] == SK_SLOT
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_full+{8 * L['nbar']}], 1;   // skbulk: a peer's partial landed")
    for i in range(stages):
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_full+{8*i}], 1;")
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_empty+{8*i}], {(1 if K.WPRE else K.CL) * ((0 if K.WPRE else TRANSFORM_WARPS) + 8)};")
    for i in range(LORA_SLOTS if K.FUSED else 0):
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_lfull+{8*i}], 1;")
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_lempty+{8*i}], {8 * K.CL};")
    for i in range(K.TSLOTS):
        if K.TSPLIT:
            e(f"\tmbarrier.init.shared::cta.b64 [%bar_tfull+{8*i}], {TRANSFORM_WARPS // 2};")
            e(f"\tmbarrier.init.shared::cta.b64 [%bar_tfullhi+{8*i}], {TRANSFORM_WARPS // 2};")
        elif K.WPRE:
            e(f"\tmbarrier.init.shared::cta.b64 [%bar_tfull+{8*i}], 1;")
        else:
            e(f"\tmbarrier.init.shared::cta.b64 [%bar_tfull+{8*i}], {(2 if K.SPLIT and not K.BULK else 1) * TRANSFORM_WARPS + (8 if ASSIST else 0)};")
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_tempty+{8*i}], {(2 if K.SPLIT or K.WPAIR else 1) * 8};")
    if K.XDBUF:
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_full+{xdone_off(L)}], {XCONV_WARPS};   // xdone: the converters left")
    if K.LRAFF_ON:
        e(lraff_init(L))
    if WATCHDOG:
        e(cdone_init(L))
    sync = ("""\tbarrier.cluster.arrive.release.aligned;      // both CTAs' barriers initialised
\tbarrier.cluster.wait.acquire.aligned;""" if K.CL == 2 else "\tbar.sync 0;")
    e(f"""\tfence.mbarrier_init.release.cluster;
\tfence.proxy.async.shared::cta;
L_init_done:
{sync}

\t{"setp.ge.u32 %p0, %wg, 2" if TW8 else "setp.ne.u32 %p0, %wg, 0"};
\t@%p0 bra L_consumer;
""")
    e(f"""\t// {"WG0 and WG1 give" if TW8 else "WG0 gives"} registers back (all {"eight" if TW8 else "four"} warps execute the same setmaxnreg)
\tsetmaxnreg.dec.sync.aligned.u32 {K.REG_WG0};""")
    emit_tile_coords_doc(e)
    (emit_wpre_producers if K.WPRE else emit_transform)(e, fmt, stages, L)
    if WATCHDOG:
        emit_watch(e, L)
        e.watchdog = False          # the consumers wait unbounded: watched (watch.py)
    emit_consumer(e, fmt, stages, L)
    e("}")
    return "\n".join(e.lines) + "\n"
