#!/usr/bin/env python3
"""gen_sm90a_pp.py -- the sm_90a ping-pong kernels (W prepared, 128 x 128 tiles).

    fp4lr_sm90a_nvfp4_<dense|fused>_m128n128k128_c1_s<S>_w<W>_pp

Two consumer warpgroups each own WHOLE 128 x 128 tiles and take turns: while one runs its
tile's K loop on the tensor cores, the other finishes its previous tile (alpha, bf16, the
bulk store).  The _w<n> kernels of tools/gen_sm90a.py split one 128 x 256 tile between the
two warpgroups, so their epilogues leave the tensor cores idle at every tile's end; this is
the layout that question is about (bench/results/experiments/pingpong-plan.md, the probe
bench/probes/wgmma_rs.py).  Opt-in: a plan asks for it with tile_n = 128 (NVFP4, one CTA,
W prepared).  Measured (H100, 2026-12-05): correct, and 0.83x (dense) / 0.85x (fused) of the
256-wide _w kernels: one warpgroup converting A in registers runs the tensor cores at 0.83 of
two, more than the hidden epilogue gives back.  AUTO never picks it.  The fused
family's tile end (the affine, the low-rank wgmmas) runs under the other warpgroup's K loop as
the epilogue does; each consumer has its own low-rank ring, loaded by its own thread 0.

The producers (thread 0: A and SFA; thread 32: the prepared W ring) are sm90a_ptx.wprepared's
(emit_wpre_producers, at this tile width); the consumers, the turn protocol and the epilogue
are written here.  Every tile is walked whole: the stream-K parameters are declared (the
kernels stay in the sm90a_dense_c1 / sm90a_fused_c1 ABI families) and ignored.

    tools/gen_sm90a_pp.py [--check] [--list] [--outdir DIR]

FP4LR_GEN_PP_FAULT plants a fault (never committed: the generator refuses to write one into
ptx/sm90a/):
  noturn   (tests/test_gemm_pp.c) the consumers skip the turn barrier, so a warpgroup that
           starts its unit while the slot's previous fill is still outstanding reads a stage
           that is not there yet (wrong results or a hang);
  noleave  (tests/test_watchdog.c) each consumer waits at its end for `cdone`, which it has
           not yet arrived on: neither ever leaves, and the watcher must trap.
FP4LR_GEN_EXPERIMENT must be unset (its flags change the shared producer code).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
if os.environ.get("FP4LR_GEN_EXPERIMENT"):
    sys.exit("gen_sm90a_pp: FP4LR_GEN_EXPERIMENT is set; the ping-pong kernels have no gen_sm90a "
             "experiments (unset it; planted faults: FP4LR_GEN_PP_FAULT)")
# (after the check: the import of sm90a_ptx reads the variable)
from sm90a_ptx import kstate as K, walk   # noqa: E402
from sm90a_ptx.flags import APREFETCH, FORMATS, LORA_SLOTS as sm90a_LORA_SLOTS, PLACED, TLINE   # noqa: E402
from sm90a_ptx.layout import BAR_EXTRA, layout as sm90a_layout, setup_addresses   # noqa: E402
from sm90a_ptx.convert import alpha_mul, alpha_paths, fp4x8_to_placed, scale_nv   # noqa: E402
from sm90a_ptx.walk import emit_tile_coords_doc, tile_coords   # noqa: E402
from sm90a_ptx.fused import affine_group, fused_params, lora_consts, lora_issue, lowrank_chunk_slot   # noqa: E402
from sm90a_ptx.wprepared import emit_wpre_producers, wparam_doc   # noqa: E402
from sm90a_ptx.streamk import SK_PARAMS   # noqa: E402
from sm90a_ptx.consumer import SFA_ROW_OFFSET, release_prev_slot   # noqa: E402
from sm90a_ptx.flags import WATCHDOG   # noqa: E402
from sm90a_ptx.watch import cdone_doc, cdone_init, cdone_map, cdone_off, consumers_leave, emit_watch   # noqa: E402
import ptxgen           # noqa: E402
from ptxgen import Emitter, advance   # noqa: E402

FAULTS = {"noturn", "noleave"}
FAULT = os.environ.get("FP4LR_GEN_PP_FAULT", "")
if FAULT and FAULT not in FAULTS:
    sys.exit(f"gen_sm90a_pp: unknown FP4LR_GEN_PP_FAULT '{FAULT}'; known: {', '.join(sorted(FAULTS))}")

BM, BN, BK = 128, 128, 128
THREADS = 512
# setmaxnreg (WG0 and WG1: two producer threads, the rest leave; the consumers), by family:
# 128 * (2 * producers + 2 * consumers) = 65536.  A consumer holds 128 accumulators and two
# sets of 32 fragment registers (the chunk in the tensor core and the next one).  ptxas 13.0
# serialises every wgmma (C7512, "insufficient register resources": one wgmma in flight, and
# the two fragment sets in the same registers) with consumers at 216 or fewer, dense and
# fused; at 232 both gate clean, once the tile count and the grid stride are computed after
# the roles split (live across setmaxnreg.dec they spilled 8 bytes in the fused kernels).
REGS = {"dense": (24, 232), "fused": (24, 232)}
assert all(128 * (2 * p + 2 * c) <= 65536 for p, c in REGS.values())
REG_PRODUCERS, REG_CONSUMER = REGS["dense"]   # set per kernel by emit_kernel
TURN_BAR = 5   # named barriers 5 (consumer 0 done waiting for its unit) and 6 (consumer 1)
OUTDIR = os.path.join(os.path.dirname(HERE), "ptx", "sm90a")

# (format, family, main stages, W slots).  Dense: s3_w10 is what the solver plans (the deepest
# W ring beside 3 main stages, 220 KiB); s4_w8 keeps both rings' leads equal (4 stages of K
# each), for the A/B (--stages 4 --transform-slots 8).  Fused: the solver's plans over every
# rank (host/budget.c charges a low-rank ring per consumer): s3_w10 affine only, s3_w9 r = 16,
# s3_w8 from r = 32 (chunks of 32, or of 16 in two slots from r = 48).
INSTANCES = [("nvfp4", "dense", 3, 10), ("nvfp4", "dense", 4, 8),
             ("nvfp4", "fused", 3, 10), ("nvfp4", "fused", 3, 9), ("nvfp4", "fused", 3, 8)]
LORA_SLOTS = sm90a_LORA_SLOTS   # low-rank slots a consumer has barriers for (the host passes <= this)
AFF_SLICE = 2 * BN * 4      # a consumer's wc (128 fp32) and beta (at +512) slice


def entry_name(fmt, family, stages, slots):
    return f"fp4lr_sm90a_{fmt}_{family}_m{BM}n{BN}k{BK}_c1_s{stages}_w{slots}_pp"


def configure(fmt, slots):
    """The generator's per-kernel state (sm90a_ptx.kstate) for its W-prepared producers at this tile: one CTA, dense,
    W prepared (no conversion in the kernel), not transposed, 128 columns, `slots` W slots,
    two 128 x 64 writeback buffers."""
    assert fmt == "nvfp4", "the ping-pong kernels exist for NVFP4 (f16 operands)"
    K.CL, K.SPLIT, K.BULK, K.FUSED = 1, False, False, False
    K.WPRE, K.XCONV, K.YT, K.HALFK, K.GDWAIT_ON = True, False, False, False, False
    K.XSELF_ON, K.TSPLIT, K.F16 = False, False, True
    K.WPAIR, K.PAIR_CTA, K.LTAIL = False, False, False
    K.BN, K.TSLOTS, K.NAME_TSLOTS, K.WB_STAGES, K.EPI_COLS = BN, slots, slots, 2, 64
    assert not (TLINE or APREFETCH or PLACED is False)


def whole_tiles_consts(e):
    """Replaces sm90a_ptx.walk.sk_consts in the producers' walk: no split tiles (skdp = ntiles),
    whatever p_sk_* say, so their units are the whole tiles %tile0, +G, ... (the consumers'
    walk below)."""
    e("""\tmov.u32 %skdp, %ntiles;                    // ping-pong: every tile whole (p_sk_* ignored)
\tmov.u32 %skT, 0;
\tmov.u32 %skit0, 0;
\tmov.u32 %skit1, 0;""")


def layout(fmt, stages, slots, fused):
    """sm90a_ptx.layout's W-prepared map at this width (A stages, W ring, two writeback buffers),
    then the barriers (full, empty, tfull, tempty; fused: lfull[LORA_SLOTS] and
    lempty[LORA_SLOTS] of consumer 0, then consumer 1's), the fused family's two wc / beta
    slices and, 1024-aligned, the low-rank rings (consumer 0's, then 1's; sized at run time)."""
    L = sm90a_layout(fmt, stages)
    assert L['tslot'] == BN * 64 * 2 and L['wbuf'] == BM * 64 * 2
    L['nbar'] = 2 * stages + 2 * slots + (4 * LORA_SLOTS if fused else 0)
    L['total'] = L['bar'] + 8 * (L['nbar'] + BAR_EXTRA)   # (the last of the extra words: cdone)
    assert L['total'] - L['bar'] <= 1024, "the barriers take the budget's 1024-byte fixed area"
    L['aff'] = (L['total'] + 1023) // 1024 * 1024
    if fused:
        L['total'] = L['aff'] + 2 * AFF_SLICE
    L['lora'] = (L['total'] + 1023) // 1024 * 1024
    return L


DENSE_WHAT = """// What it computes (OPERATOR.md, r = 0, no affine):
//     Y[m,n] = bf16_rne( alpha * sum_k deq(A)[m,k] * deq(W)[n,k] )"""
FUSED_WHAT = """// What it computes (OPERATOR.md 1, in its order):
//     Y[m,n] = bf16_rne( wc[n] * (alpha * main[m,n]) + beta[n] + sum_j L[m,j] * U[n,j] )
//     main[m,n] = sum_k deq(A)[m,k] * deq(W)[n,k]
// (wc absent: 1, beta absent: 0; r = p_lora_chunks * rc ranks, none when 0).  After a unit's
// K loop the consumer applies alpha * wc and beta in fp32 in its accumulators, then adds
// L . U^T with bf16 SS wgmmas (m64n128k16, rows 0-63 and 64-127 of its tile) onto them,
// chunk by chunk from its own low-rank ring, then stores bf16."""


def header(e, fmt, family, stages, slots, L):
    name = entry_name(fmt, family, stages, slots)
    fused = family == "fused"
    e(f"""//
// {name}
//
// GENERATED by tools/gen_sm90a_pp.py -- edit the generator, then run it; a test checks
// that this file equals the generator's output.
//
{FUSED_WHAT if fused else DENSE_WHAT}
// A: M x K e2m1 (K contiguous, element 2i in the low nibble of byte i), SFA: ue4m3 scales
// per 16 elements in the 128x4 atom layout.  W arrives prepared (f16, exact, in the K order
// below) by fp4lr_sm90a_nvfp4_wprep, as for the _w<n> kernels.  A is dequantized exactly to
// f16 by bit placement (value * 2^-14, times its scale: exact), so the accumulators hold
// sum * 2^-28 and each is multiplied by 2^28 (exact) before alpha.  f16 wgmma, fp32 sums.
//
// Tile: 128 x 128 outputs, K in stages of 128 (64 bytes of A a row), multiplied 64 at a
// time (two W chunks a stage).  Persistent: the CTA's work units are the tiles %tile0 =
// blockIdx.x, + gridDim.x, ... of the grouped raster (groups of `group` tile rows share W
// tiles in L2), every tile whole: the stream-K parameters are declared (ABI family
// sm90a_{family}_c1) and ignored.  Unit u of the CTA belongs to consumer warpgroup u % 2.
//
// Warp roles ({THREADS} threads, four warpgroups; registers moved with setmaxnreg):
//   WG0 thread 0        producer of the main stages: per stage of every unit, in unit order,
//                       waits `empty`, arms `full` with {L['stage']} bytes, issues the A and SFA copies.
//   WG0 thread 32       producer of the W ring: per chunk of every unit, waits `tempty[t]`, arms
//                       `tfull[t]` with {L['tslot']} bytes, issues one bulk copy of the prepared W
//                       chunk (128 rows x 64 f16, 128-byte swizzle) into slot t.
//                       Both at {REG_PRODUCERS} registers; every other thread of WG0 and WG1 exits.
//   WG2, WG3            consumers 0 and 1 ({REG_CONSUMER} registers), ping-pong: consumer c takes
//                       units c, c+2, ...  A thread (warp w of its WG, lane l) owns tile rows
//                       r = 16w + l/4, r+8 (accumulators 0-63) and r+64, r+72 (64-127), k group
//                       c = l%4; per chunk it dequantizes its A bytes of the four rows into 32
//                       fragment registers and issues, per k16 step, two m64n128k16 RS wgmmas
//                       (rows 0-63, rows 64-127) on the same W slot.  After the K loop: alpha
//                       {"* wc + beta and the low-rank wgmmas (above)" if fused else "in fp32"}, bf16, swizzled staging, four 64 x 64 bulk
//                       tensor stores.{LORA_ROLE if fused else ""}
//
// Ring positions: both rings are filled in unit order, so unit u's stages are main-ring
// positions u*nks .. u*nks+nks-1 and its chunks W-ring positions 2*u*nks ..; a consumer
// starts each of its units at slot = position % ring size, parity = (position / size) % 2.
//
// Turns (named barriers {TURN_BAR} and {TURN_BAR + 1}, 256 threads: the owner arrives, the other consumer
// syncs): consumer c arrives on barrier {TURN_BAR}+c once it has waited for every stage and
// chunk of its unit u (after issuing its last wgmma, before waiting for it), if unit u+1
// exists; the other consumer syncs on it before its first wait of unit u+1.  So a consumer
// never waits on a ring slot whose previous fill has not completed: a one-bit parity wait
// for a lap's fill also passes while the slot's fill of the lap before is still outstanding,
// and a consumer that skipped the other's unit could otherwise be that far ahead of the
// ring (tests/pp_protocol.py checks the protocol, with and without).  It is also the hand-over:
// the next unit's K loop starts while the last wgmmas of this one drain and its epilogue runs.
//
// Barrier protocol (mbarriers in shared memory; phases tracked by parity bits):
//   full[s]   count 1  main producer arrive.expect_tx({L['stage']}); TMA complete_tx.  Waited by the
//                      stage's owner.
//   empty[s]  count 4  one arrive per warp of the owning consumer (after it read its A bytes and
//                      fenced them with fence.proxy.async: the refill is a bulk copy).
//   tfull[t]  count 1  W producer arrive.expect_tx({L['tslot']}); TMA complete_tx.
//   tempty[t] count 4  one arrive per warp of the owning consumer once the wgmmas reading slot t
//                      completed (wgmma.wait_group).{cdone_doc(L) if WATCHDOG else ""}
{LORA_BARS if fused else ""}//   Named barriers 1 and 2: the 128 threads of WG2 / WG3 around their writeback staging
//   (and the wc / beta slice); {TURN_BAR} and {TURN_BAR + 1}: the turns.
//
// Shared memory map (dynamic, 1024-byte aligned), {stages} main stages, {slots} W slots:
//   [{L['a']:6} + s*{L['stage']}]  A fp4     128 x 64 B, TMA swizzle 64B   (8192 B)
//   [{L['sfa']:6} + s*{L['stage']}]  SFA       2 atoms x 1 row block       (1024 B)
//   [{L['t']:6} + t*{L['tslot']}]  W ring, {slots} slots of 128 x 64 prepared f16, TMA swizzle 128B
//   [{L['wb']:6} + b*{L['wbuf']}]  writeback staging, 2 buffers of 128 x 64 bf16, swizzle 128B
//                                  (consumer 0's 64 x 64 half at +0, consumer 1's at +{L['wbuf'] // 2})
//   [{L['bar']:6}]  mbarriers: full[{stages}], empty[{stages}], tfull[{slots}], tempty[{slots}]{f", lfull[{LORA_SLOTS}], lempty[{LORA_SLOTS}] of consumer 0, then of 1" if fused else ""}{cdone_map(L)}{lora_map(L) if fused else ""}
//   total {L['total']} bytes (host/budget.c charges the same objects{", and the rings" if fused else ""}).
//
// K permutation (as in every W-prepared kernel): consumer thread c = lane%4 takes the 16
// consecutive elements 16c..16c+15 of the chunk and feeds elements 16c+8(j/2)+2(j%2)+{{0,4,1,5}}
// to k16 step j at fragment columns {{2c,2c+1,2c+8,2c+9}}; the preparation wrote W's elements
// to the same logical columns.
//""")


LORA_ROLE = """
//                       Fused: thread 0 of each consumer loads its unit's L and U chunks
//                       (boxes of wk ranks x 128 rows) into its own low-rank ring: the first
//                       p_lora_slots at the unit's start (they land during the K loop), each
//                       later one as soon as a chunk's wgmmas have freed a slot."""
LORA_BARS = f"""//   lfull[i]  count 1  (a consumer's own ring) its thread 0 arrive.expect_tx(the chunk's L + U
//                      bytes); TMA complete_tx.  Waited by that consumer after its affine.
//   lempty[i] count 4  one arrive per warp of that consumer once its chunk's wgmmas completed;
//                      every thread of the consumer waits on it before a load (thread 0 alone arms
//                      lfull and copies, predicated: no branch, sm90a_ptx/flags.py LUNI).
"""


def lora_map(L):
    return f"""
//   [{L['aff']:6} + c*{AFF_SLICE}]  wc / beta slices of consumer c: wc[n0..n0+{BN - 1}] at +0, beta at +{AFF_SLICE // 2} (fp32)
//   [{L['lora']:6}]  low-rank ring at {L['lora']}: consumer 0's p_lora_slots x (128 + {BN}) x wk x 2 bytes, then
//                     consumer 1's, set by the host"""


def params(e, fmt, family, stages, slots):
    ka = FORMATS[fmt][1]
    e(f""".version 8.0
.target sm_90a
.address_size 64

.extern .shared .align 1024 .b8 smem[];

.visible .entry {entry_name(fmt, family, stages, slots)}(
\t.param .align 128 .b8 p_tmA[128],     // A   UINT8 {{K/2, M}}, box {{64, {BM}}}, swizzle 64B
\t.param .align 128 .b8 p_tmW[128],     {wparam_doc().replace(f"box {{64, {BN}}}", f"box {{64, {BN}}} (the _pp tile)")}
\t.param .align 128 .b8 p_tmSFA[128],   // SFA UINT8 {{256, 2*KA, ceil(M/128)}}, box {{256, {2 * ka}, 1}}
\t.param .align 128 .b8 p_tmSFW[128],   // SFW UINT8 {{256, 2*KA, ceil(N/128)}}, box {{256, {2 * ka}, 2}}
\t.param .align 128 .b8 p_tmY[128],     // Y   BF16  {{N, M}}, box {{64, 64}}, swizzle 128B
\t.param .u32 p_num_k_stages,          // ceil(K / {BK})
\t.param .f32 p_alpha,
\t.param .u32 p_tiles_m,               // ceil(M / {BM}): cluster tiles
\t.param .u32 p_tiles_n,               // ceil(N / {BN}): the _pp tile
\t.param .u32 p_group,                 // tile rows per raster group (>= 1)
{fused_params() if family == "fused" else ""}{SK_PARAMS.replace("or 0: every tile whole", "or 0: every tile whole (the _pp kernels: ignored, every tile whole)")})
.maxntid {THREADS}, 1, 1
.minnctapersm 1
{{
\t.reg .pred %pw, %p<8>, %ptrue, %pacc, %ppend, %pafold, %pnext, %psk, %pthr0;
\t.reg .b32 %r<64>;
\t.reg .b64 %rd<16>;
\t.reg .b16 %h<2>;
\t.reg .f32 %f<8>, %alpha, %alpha28;
\t.reg .b32 %thr, %warp, %lane, %wg;
\t.reg .b32 %sbase, %bar_full, %bar_empty, %bar_tfull, %bar_tempty;
\t.reg .b32 %tile, %ntiles, %tiles_m, %tiles_n, %group, %nks, %ks, %m0, %n0, %u;
\t.reg .b32 %s, %ph, %t, %tph, %tprev;
\t.reg .b32 %ptile, %pks, %ps, %pph, %pcm0, %pcn0, %pkb, %pke;   // a producer's cursor
\t.reg .b32 %tile0, %tstride, %mrank;
\t.reg .b32 %skdp, %skT, %skit0, %skit1, %skit;   // the producers' unit walk (no split tiles)
\t.reg .b64 %skws;
\t.reg .b64 %tmA, %tmW, %tmSFA, %tmSFW, %tmY;
\t.reg .b32 %caoff0, %cdesc0;                      // chunk 0's A offset, slot 0's descriptor start
\t.reg .b32 %xa<8>, %xb<8>, %xc<8>, %xd<8>;        // set X (chunk 0): rows r, r+8, r+64, r+72
\t.reg .b32 %ya<8>, %yb<8>, %yc<8>, %yd<8>;        // set Y (chunk 1)
\t.reg .f32 %acc<128>;                             // rows 0-63: 0-63; rows 64-127: 64-127""")
    if WATCHDOG:
        e(ptxgen.WATCHDOG_REGS.rstrip("\n"))
    if family == "fused":
        e("""\t.reg .b64 %tmL, %tmU, %wcp, %betap;
\t.reg .b32 %bar_lfull, %bar_lempty, %lbase, %lchunks, %lslots, %lsub, %lksteps, %lbytes_l, %lbytes_u;
\t.reg .b32 %lsub_l, %lsub_u, %lrowb, %ldeschi, %lwk, %ncols, %ls, %lph, %li, %lis, %liph;
\t.reg .pred %pwc, %pbeta, %plissue;""")


def setup(e, stages, slots, L, fused):
    assert K.TSLOTS == slots
    split = "\tmul.lo.u32 %ntiles, %tiles_m, %tiles_n;\n"
    assert split in setup_addresses(L, stages)
    e(f"""{setup_addresses(L, stages).replace(split, "")}
\tsetp.eq.u32 %ptrue, 0, 0;
\tmov.u32 %tile0, %ctaid.x;
\tmov.u32 %mrank, 0;
\t// ---- barrier init (thread 0), made visible to the async proxy, then one CTA barrier ----
\tsetp.ne.u32 %p0, %thr, 0;
\t@%p0 bra L_init_done;""")
    for i in range(stages):
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_full+{8 * i}], 1;")
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_empty+{8 * i}], 4;")
    for i in range(slots):
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_tfull+{8 * i}], 1;")
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_tempty+{8 * i}], 4;")
    if fused:
        e(f"\tadd.u32 %r10, %bar_tempty, {8 * slots};      // lfull[{LORA_SLOTS}], lempty[{LORA_SLOTS}] of consumer 0, then of 1")
    for i in range(2 * LORA_SLOTS if fused else 0):   # consumer i // LORA_SLOTS's slot i % LORA_SLOTS
        off = 16 * LORA_SLOTS * (i // LORA_SLOTS) + 8 * (i % LORA_SLOTS)
        e(f"\tmbarrier.init.shared::cta.b64 [%r10+{off}], 1;      // lfull")
        e(f"\tmbarrier.init.shared::cta.b64 [%r10+{off + 8 * LORA_SLOTS}], 4;      // lempty")
    if WATCHDOG:
        e(cdone_init(L))
    e(f"""\tfence.mbarrier_init.release.cluster;
\tfence.proxy.async.shared::cta;
L_init_done:
\tbar.sync 0;

\tsetp.ge.u32 %p0, %wg, 2;
\t@%p0 bra L_consumer;

\t// WG0 and WG1 give registers back (all eight warps execute the same setmaxnreg)
\tsetmaxnreg.dec.sync.aligned.u32 {REG_PRODUCERS};
{AFTER_SPLIT}""")


# Computed on each side of the roles' split, not before it: a value live across setmaxnreg.dec
# must fit the producers' 24 registers, and ptxas spilled these two there.
AFTER_SPLIT = """\tmul.lo.u32 %ntiles, %tiles_m, %tiles_n;       // (after the split: see AFTER_SPLIT)
\tmov.u32 %tstride, %nctaid.x;"""


def load_a_chunk(e, h, sets, L):
    """This thread's A bytes of chunk h of the stage at %r41, rows r, r+8, r+64, r+72 ->
    the four fragment lists `sets` (8 f16x2 words each), dequantized and scaled.
    Row r+64 lies 4096 bytes on (64 rows of 64 B; the 64B swizzle phase (r/2)%4 is the same),
    its scale byte 8 on ((r+64)/32 = r/32 + 2 atom columns of 4 bytes); r+8: +512 / +128."""
    e(f"\t// A chunk {h}: 8 bytes (16 elements 16c..16c+15) of rows r, r+8, r+64, r+72 and their scales")
    if h:
        e("\txor.b32 %r25, %caoff0, 32;                 // chunk 1's logical 16-byte chunk: chunk 0's + 2")
        e("\tadd.u32 %r25, %r25, %r41;                   // + stage base (A at offset 0)")
    else:
        e("\tadd.u32 %r25, %caoff0, %r41;                // + stage base (A at offset 0)")
    e("""\tadd.u32 %r26, %r22, %r21;
\tadd.u32 %r26, %r26, %r41;                   // scale byte of row r, group c (+ stage base)""")
    tmp = ["%r9", "%r10", "%r11", "%r12", "%r13", "%r14"]
    for half in range(2):
        a_off, s_off = 4096 * half, L['sfa'] + 512 * h + 8 * half
        rows = ("r", "r+8") if half == 0 else ("r+64", "r+72")
        e(f"""\tld.shared.v2.b32 {{%r0, %r1}}, [%r25+{a_off}];        // row {rows[0]}
\tld.shared.v2.b32 {{%r2, %r3}}, [%r25+{a_off + 512}];      // row {rows[1]}
\tld.shared.u8 %r4, [%r26+{s_off}];
\tld.shared.u8 %r5, [%r26+{s_off + 128}];""")
        scale_nv(e, "%r4", "%r6", "%r8")
        scale_nv(e, "%r5", "%r7", "%r8")
        lo, hi = sets[2 * half], sets[2 * half + 1]
        fp4x8_to_placed(e, "%r0", lo[0:4], tmp)
        fp4x8_to_placed(e, "%r1", lo[4:8], tmp)
        fp4x8_to_placed(e, "%r2", hi[0:4], tmp)
        fp4x8_to_placed(e, "%r3", hi[4:8], tmp)
        for i in range(8):
            e(f"\tmul.rn.f16x2 {lo[i]}, {lo[i]}, %r6;")
            e(f"\tmul.rn.f16x2 {hi[i]}, {hi[i]}, %r7;")


def acc_list(lo, hi):
    return "{" + ", ".join(f"%acc{i}" for i in range(lo, hi)) + "}"


def wgmma_chunk(e, h, sets, slots, L, first_pred):
    """Chunk h of the stage: wait for W slot t, then per k16 step j two m64n128k16 RS wgmmas
    on it (rows 0-63 from sets 0/1, rows 64-127 from sets 2/3; the same B descriptor),
    one commit; wait_group 1 (the previous chunk's wgmmas are done: free its slot)."""
    e(f"""\t// ---- chunk {h} of stage s: wait for W slot t ----
\tmul.lo.u32 %r12, %t, 8;
\tadd.u32 %r13, %bar_tfull, %r12;""")
    e.wait("%r13", "%tph", "tfull")
    e(f"""\tmad.lo.u32 %r31, %t, {L['tslot'] // 16}, %cdesc0;   // slot t's start address >> 4
\t// B descriptor: K-major, 128B swizzle, SBO 1024 (encoded 64), start = slot >> 4
\tmov.b32 %r33, 0x40000040;                   // SBO 1024 (64 << 32), swizzle 128B (1 << 62)
\tmov.b64 %rd1, {{%r31, %r33}};
\twgmma.fence.sync.aligned;""")
    for j in range(4):
        if j:
            e("\tadd.s64 %rd1, %rd1, 2;                      // next k16: +32 bytes")
        pred = first_pred if j == 0 else "%ptrue"
        for half in range(2):
            lo, hi = sets[2 * half], sets[2 * half + 1]
            frag = f"{{{lo[2 * j]}, {hi[2 * j]}, {lo[2 * j + 1]}, {hi[2 * j + 1]}}}"
            e(f"\twgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {acc_list(64 * half, 64 * half + 64)}, "
              f"{frag}, %rd1, {pred}, 1, 1, 0;")
    e("\twgmma.commit_group.sync.aligned;")
    if h == 0:
        e("\tsetp.eq.u32 %pacc, 0, 0;")
    e("\twgmma.wait_group.sync.aligned 1;")
    release_prev_slot(e)   # lane 0 of each warp frees the previous chunk's slot
    e("""\tmov.u32 %tprev, %t;
\tsetp.eq.u32 %ppend, 0, 0;""")
    advance(e, "%t", "%tph", slots)


def wait_stage(e, L):
    e("""\tmul.lo.u32 %r10, %s, 8;
\tadd.u32 %r11, %bar_full, %r10;""")
    e.wait("%r11", "%ph", "full")
    e(f"\tmad.lo.u32 %r41, %s, {L['stage']}, %sbase;")


def consumer(e, fmt, family, stages, slots, L):
    X = [[f"%x{k}{i}" for i in range(8)] for k in "abcd"]
    Y = [[f"%y{k}{i}" for i in range(8)] for k in "abcd"]
    turn = FAULT != "noturn"
    e(f"""
// =====================================================================================
// Consumers 0 (WG2) and 1 (WG3), ping-pong.  Consumer c takes the CTA's units c, c+2, ...
// Per unit: the turn (sync on the other consumer's barrier, but for unit 0), the ring
// positions, then the K loop: per chunk wait tfull, eight wgmmas, commit, wait_group 1
// (free the previous chunk's slot), and dequantize the next chunk's A while the tensor
// core works; once every wait of the unit is done, hand the turn over; the epilogue.
// =====================================================================================
L_consumer:
\tsetmaxnreg.inc.sync.aligned.u32 {REG_CONSUMER};
{AFTER_SPLIT}
\tld.param.f32 %alpha, [p_alpha];
\tsub.u32 %r40, %thr, 256;
\tshr.u32 %r42, %r40, 7;                     // consumer index 0/1
\tand.b32 %r43, %r40, 127;                   // thread in WG
\tshr.u32 %r44, %r43, 5;                     // warp in WG
\tshl.b32 %r20, %r44, 4;
\tshr.u32 %r45, %lane, 2;
\tadd.u32 %r20, %r20, %r45;                   // r (row of the first 64; the other set: r + 64)
\tand.b32 %r21, %lane, 3;                     // c
{SFA_ROW_OFFSET}\tsetp.eq.u32 %p1, %lane, 0;
\t// the loop-invariant parts of the A address and of the B descriptor
\tshr.u32 %r24, %r20, 1;
\tand.b32 %r24, %r24, 3;                     // 64B swizzle phase (the same for r, r+8, r+64, r+72)
\tand.b32 %r26, %r21, 1;
\tshl.b32 %r26, %r26, 3;
\tshl.b32 %r27, %r20, 6;
\tadd.u32 %r26, %r26, %r27;                   // row r: 64 B, + 8 B for odd c
\tshr.u32 %r25, %r21, 1;                     // logical 16-byte chunk of chunk 0
\txor.b32 %r25, %r25, %r24;
\tshl.b32 %r25, %r25, 4;
\tadd.u32 %caoff0, %r25, %r26;
\tadd.u32 %r25, %sbase, {L['t']};
\tshr.u32 %cdesc0, %r25, 4;                  // slot 0's start address >> 4 (< 2^14)
\tsetp.ne.u32 %ppend, 0, 0;""")
    fused = family == "fused"
    if fused:
        fused_consumer_setup(e, slots, L)
    e("""\tmov.u32 %u, %r42;                          // this consumer's first unit
L_c_tile:
\tmad.lo.u32 %tile, %u, %tstride, %tile0;
\tsetp.ge.u32 %p0, %tile, %ntiles;
\t@%p0 bra L_c_done;""")
    if turn:
        e(f"""\t// the turn: unit u - 1 (the other consumer's) has waited for all its stages and chunks
\tsetp.eq.u32 %p0, %u, 0;
\tsub.u32 %r10, {TURN_BAR + 1}, %r42;                   // the other consumer's barrier
\t@!%p0 bar.sync %r10, 256;""")
    else:
        e("\t// FAULT noturn (planted, never committed): no turn")
    e(f"""\t// ring positions of unit u: main stage u*nks, W chunk 2*u*nks
\tmul.lo.u32 %r10, %u, %nks;
\trem.u32 %s, %r10, {stages};
\tdiv.u32 %ph, %r10, {stages};
\tand.b32 %ph, %ph, 1;
\tshl.b32 %r10, %r10, 1;
\trem.u32 %t, %r10, {slots};
\tdiv.u32 %tph, %r10, {slots};
\tand.b32 %tph, %tph, 1;
\t// does unit u + 1 exist (then this consumer hands the turn over after its waits)?
\tadd.u32 %r10, %tile, %tstride;
\tsetp.lt.u32 %pnext, %r10, %ntiles;""")
    tile_coords(e)
    if fused:
        fused_unit_start(e, L)
    e("\t// prologue: A chunk 0 of the first stage")
    wait_stage(e, L)
    load_a_chunk(e, 0, X, L)
    e("""\tsetp.ne.u32 %pacc, 0, 0;                    // the unit's first wgmma overwrites
\tmov.u32 %ks, %nks;                          // stages of the unit (counted down)
L_c_k:""")
    wgmma_chunk(e, 0, X, slots, L, "%pacc")
    load_a_chunk(e, 1, Y, L)
    e("""\tfence.proxy.async.shared::cta;              // the stage's reads before its refill (WAR)
\t// this warp has read all its A bytes of stage s: release it
\tbar.warp.sync 0xffffffff;
\tmul.lo.u32 %r10, %s, 8;
\tadd.u32 %r11, %bar_empty, %r10;
\t@%p1 mbarrier.arrive.shared::cta.b64 _, [%r11];""")
    wgmma_chunk(e, 1, Y, slots, L, "%ptrue")
    advance(e, "%s", "%ph", stages)
    e("""\tsub.u32 %ks, %ks, 1;
\tsetp.eq.u32 %p0, %ks, 0;
\t@%p0 bra L_c_kdone;""")
    wait_stage(e, L)
    load_a_chunk(e, 0, X, L)
    e("\tbra L_c_k;\nL_c_kdone:")
    if turn:
        e(f"""\t// every wait of the unit done: the other consumer may start unit u + 1
\tadd.u32 %r10, %r42, {TURN_BAR};
\t@%pnext bar.arrive %r10, 256;""")
    e("""\t// end of the K loop: every wgmma of the tile done, free the last slot
\twgmma.wait_group.sync.aligned 0;""")
    release_prev_slot(e)   # lane 0 of each warp frees the previous chunk's slot
    e("\tsetp.ne.u32 %ppend, 0, 0;")
    if fused:
        affine_and_lowrank(e, L)
    epilogue(e, L, fused)
    e("""L_c_next:
\tadd.u32 %u, %u, 2;
\tbra L_c_tile;
L_c_done:
\t// the last bulk stores must finish reading shared memory before the CTA exits
\tsetp.eq.u32 %p0, %r43, 0;
\t@%p0 cp.async.bulk.wait_group 0;""")
    if FAULT == "noleave":
        e(f"""\t// FAULT noleave (planted, never committed): wait for cdone before arriving on it
\tadd.u32 %r11, %bar_full, {cdone_off(L)};""")
        e.wait("%r11", "0", "fault_noleave")
    if WATCHDOG:
        consumers_leave(e, L)
    e("""L_exit:
\tret;
}""")


def fused_consumer_setup(e, slots, L):
    """This consumer's low-rank barriers (consumer 1's follow consumer 0's), its ring (after
    consumer 0's p_lora_slots slots), its cursors; its thread 0 issues its loads.  (Set here,
    after setmaxnreg, not before the roles split: live there, they spill the producers.)"""
    lora_consts(e)
    e(f"""\t// ---- fused: this consumer's low-rank barriers, ring and cursors ----
\tadd.u32 %bar_lfull, %bar_tempty, {8 * slots};
\tmad.lo.u32 %bar_lfull, %r42, {16 * LORA_SLOTS}, %bar_lfull;
\tadd.u32 %bar_lempty, %bar_lfull, {8 * LORA_SLOTS};
\tadd.u32 %r10, %lbytes_l, %lbytes_u;
\tmul.lo.u32 %r10, %r10, %lslots;             // a ring: p_lora_slots x (L + U box bytes)
\tadd.u32 %lbase, %sbase, {L['lora']};
\tmad.lo.u32 %lbase, %r42, %r10, %lbase;
\tmov.u32 %ls, 0;
\tmov.u32 %lph, 0;
\tmov.u32 %lis, 0;
\tmov.u32 %liph, 0;
\tsetp.eq.u32 %plissue, %r43, 0;            // thread 0 of the consumer issues its loads""")


def fused_unit_start(e, L):
    """A unit's start: this thread's column of the consumer's wc / beta slice by cp.async
    (read by the affine after the K loop), and the first p_lora_slots low-rank chunks of the
    tile into the consumer's ring, so that they land during the K loop."""
    lora_consts(e)
    e(f"""\t// ---- fused: column n0 + t of this consumer's wc / beta slice (t: thread in the WG) ----
\tmad.lo.u32 %r52, %r42, {AFF_SLICE}, %sbase;
\tshl.b32 %r53, %r43, 2;
\tadd.u32 %r52, %r52, %r53;
\tadd.u32 %r52, %r52, {L['aff']};                 // &wc of column t; beta at +{AFF_SLICE // 2}
\tadd.u32 %r53, %n0, %r43;                    // column n = n0 + t
\tsub.u32 %r54, %ncols, 1;
\tmin.u32 %r55, %r53, %r54;                   // the source clamped inside the arrays
\tsetp.lt.u32 %p2, %r53, %ncols;
\tselp.u32 %r57, 4, 0, %p2;                   // bytes read (0: zero fill past N)
\tmul.wide.u32 %rd2, %r55, 4;""")
    for name, ptr, pred, absent, off in (("wc", "%wcp", "%pwc", "0f3F800000", 0),
                                         ("beta", "%betap", "%pbeta", "0f00000000", AFF_SLICE // 2)):
        e(f"""\t@!{pred} bra L_afill_{name}_absent;
\tadd.s64 %rd4, {ptr}, %rd2;
\tcp.async.ca.shared.global [%r52+{off}], [%rd4], 4, %r57;
\tbra L_afill_{name}_done;
L_afill_{name}_absent:
\tmov.f32 %f4, {absent};                   // {name} absent
\tst.shared.f32 [%r52+{off}], %f4;
L_afill_{name}_done:""")
    e("""\tcp.async.commit_group;
\t// ---- fused: the tile's first low-rank chunks into this consumer's ring ----
\tmov.u32 %li, 0;""")
    # the bound is the slot number, not %li: only the issuing lane advances %li, and every
    # lane of its warp must meet the same number of bar.warp.sync in lora_issue
    for k in range(LORA_SLOTS):
        e(f"\tsetp.le.u32 %p5, %lslots, {k};\n\t@%p5 bra L_lissue_pro_done;")
        lora_issue(e, f"pro{k}")
    e("L_lissue_pro_done:")


def affine_and_lowrank(e, L):
    """After the unit's K loop: acc = wc[n] * (alpha * acc) + beta[n] in fp32 from the slice
    (a thread's columns 8j + 2c, +1 serve both row halves), then acc += L . U^T chunk by chunk
    from the consumer's ring: per k16 step two bf16 SS wgmmas, L rows 0-63 / 64-127 against
    all 128 U rows; each chunk's slot freed, then refilled with a later chunk."""
    lora_consts(e)
    e(f"""\t// ---- affine: acc = wc[n] * (alpha * acc) + beta[n], from this consumer's slice ----
\tcp.async.wait_group 0;
\tadd.u32 %r46, %r42, 1;                      // named barrier id 1 / 2
\tbar.sync %r46, 128;                         // every thread's copies of the slice are in
\tmad.lo.u32 %r50, %r42, {AFF_SLICE}, %sbase;
\tshl.b32 %r51, %r21, 3;
\tadd.u32 %r50, %r50, %r51;
\tadd.u32 %r50, %r50, {L['aff']};                 // wc[2c]; beta at +{AFF_SLICE // 2}""")

    def body(folded):
        for j in range(BN // 8):
            e(f"""\tld.shared.v2.f32 {{%f4, %f5}}, [%r50+{32 * j}];           // wc of columns 8*{j} + 2c, +1
\tld.shared.v2.f32 {{%f6, %f7}}, [%r50+{AFF_SLICE // 2 + 32 * j}];""")
            affine_group(e, j, folded)            # rows r, r+8
            affine_group(e, BN // 8 + j, folded)  # rows r+64, r+72
    alpha_paths(e, "aff", body)
    e("""\t// ---- low-rank: acc += L . U^T, chunk by chunk through this consumer's ring ----
\tmov.u32 %r53, 0;                            // chunk
L_lr_chunk:""")
    lowrank_chunk_slot(e, "L slot (rows 0-63)")
    e("""\tshl.b32 %r54, %lrowb, 6;
\tadd.u32 %r54, %r54, %r55;                   // L rows 64-127: 64 rows of 2*wk bytes on
\t// one box per chunk (wk ranks): 1, 2 or 4 k16 steps, each path unrolled
\tsetp.eq.u32 %p5, %lksteps, 1;
\t@%p5 bra L_lr_k1;
\tsetp.eq.u32 %p5, %lksteps, 2;
\t@%p5 bra L_lr_k2;""")
    for steps in (4, 2, 1):
        e(f"L_lr_k{steps}:\n\twgmma.fence.sync.aligned;")
        for kk in range(steps):
            for reg, base, rd in (("%r60", "%r55", "%rd4"), ("%r61", "%r54", "%rd5"), ("%r62", "%r56", "%rd6")):
                e(f"""\tadd.u32 {reg}, {base}, {32 * kk};
\tshr.u32 {reg}, {reg}, 4;
\tand.b32 {reg}, {reg}, 0x3FFF;
\tmov.b64 {rd}, {{{reg}, %ldeschi}};""")
            e(f"""\twgmma.mma_async.sync.aligned.m64n{BN}k16.f32.bf16.bf16 {acc_list(0, 64)}, %rd4, %rd6, %ptrue, 1, 1, 0, 0;
\twgmma.mma_async.sync.aligned.m64n{BN}k16.f32.bf16.bf16 {acc_list(64, 128)}, %rd5, %rd6, %ptrue, 1, 1, 0, 0;""")
        e("\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;")
        if steps != 1:
            e("\tbra L_lr_kdone;")
    e("""L_lr_kdone:
\t// the slot read: one arrive per warp, then the issuer refills it with a later chunk
\tbar.warp.sync 0xffffffff;
\tmul.lo.u32 %r10, %ls, 8;
\tadd.u32 %r11, %bar_lempty, %r10;
\t@%p1 mbarrier.arrive.shared::cta.b64 _, [%r11];
\tadd.u32 %ls, %ls, 1;
\tsetp.eq.u32 %p5, %ls, %lslots;
\t@%p5 mov.u32 %ls, 0;
\t@%p5 xor.b32 %lph, %lph, 1;""")
    lora_issue(e, "stream")
    e("""\tadd.u32 %r53, %r53, 1;
\tbra L_lr_chunk;
L_lr_done:""")


def epilogue(e, L, fused):
    """Four 64 x 64 pieces: piece p = accumulators 32p..32p+31 = rows 64(p/2).., columns
    64(p%2)..  Piece p uses staging buffer p%2 (this consumer's 8 KiB half).  Fused: alpha
    was applied with the affine."""
    e(f"""\t// ---- epilogue: {"acc" if fused else "alpha * acc"} -> bf16 -> swizzled staging -> bulk tensor store ----
\t// Four 64 x 64 pieces: piece p holds accumulators 32p..32p+31 (rows 64(p/2).., columns
\t// 64(p%2)..) and uses staging buffer p%2 (this consumer's 8 KiB half).  Before writing a
\t// buffer the issuing thread waits until the store that used it last has read it
\t// (wait_group.read 1: the only younger store used the other buffer), then the WG syncs.
\tadd.u32 %r46, %r42, 1;                      // named barrier id 1 / 2
\tand.b32 %r48, %r20, 7;                      // 128B swizzle phase (r < 64: r % 8)
\tshl.b32 %r49, %r20, 7;                      // row * 128
\tshl.b32 %r50, %r21, 2;                      // 4c
\tadd.u32 %r49, %r49, %r50;
\tsetp.eq.u32 %p2, %r43, 0;""")
    for p in range(4):
        e(f"""\t// piece {p}
\t@%p2 cp.async.bulk.wait_group.read 1;
\tbar.sync %r46, 128;
\tadd.u32 %r53, %sbase, {L['wb'] + (p % 2) * L['wbuf']};
\tmad.lo.u32 %r53, %r42, {L['wbuf'] // 2}, %r53;   // this consumer's half
\tadd.u32 %r54, %r53, %r49;""")

        def body(folded, p=p):
            for j in range(8):
                i = 32 * p + 4 * j
                if fused:
                    cvt = f"""\tcvt.rn.bf16x2.f32 %r55, %acc{i + 1}, %acc{i};
\tcvt.rn.bf16x2.f32 %r56, %acc{i + 3}, %acc{i + 2};"""
                else:
                    cvt = "".join(alpha_mul(i + k, f"%f{k}", folded) for k in range(4)) + """\tcvt.rn.bf16x2.f32 %r55, %f1, %f0;
\tcvt.rn.bf16x2.f32 %r56, %f3, %f2;"""
                e(cvt + f"""
\txor.b32 %r57, %r48, {j};
\tshl.b32 %r57, %r57, 4;
\tadd.u32 %r57, %r57, %r54;
\tst.shared.b32 [%r57], %r55;                 // row r
\tst.shared.b32 [%r57+1024], %r56;            // row r+8 (same swizzle phase)""")
        if fused:
            body(False)
        else:
            alpha_paths(e, f"epi{p}", body)
        e(f"""\tfence.proxy.async.shared::cta;
\tbar.sync %r46, 128;
\tadd.u32 %r58, %n0, {64 * (p % 2)};
\tadd.u32 %r51, %m0, {64 * (p // 2)};
\t@%p2 cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%tmY, {{%r58, %r51}}], [%r53];
\t@%p2 cp.async.bulk.commit_group;""")


def emit_kernel(fmt, family, stages, slots):
    global REG_PRODUCERS, REG_CONSUMER
    REG_PRODUCERS, REG_CONSUMER = REGS[family]
    configure(fmt, slots)
    fused = family == "fused"
    L = layout(fmt, stages, slots, fused)
    e = Emitter(1, watchdog=WATCHDOG)
    header(e, fmt, family, stages, slots, L)
    params(e, fmt, family, stages, slots)
    setup(e, stages, slots, L, fused)
    emit_tile_coords_doc(e)
    saved = walk.sk_consts
    walk.sk_consts = whole_tiles_consts
    try:
        emit_wpre_producers(e, fmt, stages, L)
    finally:
        walk.sk_consts = saved
    if WATCHDOG:
        emit_watch(e, L)
        e.watchdog = False          # the consumers wait unbounded: watched (sm90a_ptx/watch.py)
    consumer(e, fmt, family, stages, slots, L)
    return "\n".join(e.lines) + "\n"


def main():
    if FAULT and not ptxgen.writes_elsewhere(sys.argv[1:], OUTDIR):
        print(f"gen_sm90a_pp: FP4LR_GEN_PP_FAULT={FAULT} plants a fault: write it elsewhere (--outdir DIR), "
              f"never into {os.path.relpath(OUTDIR)}", file=sys.stderr)
        return 2
    return ptxgen.main("gen_sm90a_pp", __doc__, INSTANCES, lambda i: entry_name(*i),
                       lambda i: emit_kernel(*i), OUTDIR)


if __name__ == "__main__":
    sys.exit(main())
