#!/usr/bin/env python3
"""gen_sm90a.py -- writes the sm_90a PTX kernels of fp4lr.

The kernels are hand-written PTX; this generator only emits the mechanical
parts (the 128-register accumulator lists, the unrolled wgmma and dequant
sequences, one label per wait loop) so that each instantiation (format x stage
count x cluster size) is one reproducible file.  Its output is committed under
ptx/sm90a/ and a test regenerates it and compares (``--check``).

    tools/gen_sm90a.py            write every instantiation into ptx/sm90a/
    tools/gen_sm90a.py --check    regenerate in memory, compare with ptx/sm90a/
    tools/gen_sm90a.py --list     print the entry names
"""
import os
import sys

from ptxgen import Emitter, advance
import ptxgen

HERE = os.path.dirname(os.path.abspath(__file__))
# Measurement-only variants (never committed): FP4LR_GEN_EXPERIMENT=skip_transform makes
# the transform warps skip their conversion, to time everything else; xnowait / xnoconv: the
# _x W producer does not wait for the converters / the converters convert nothing.
EXPERIMENT = os.environ.get("FP4LR_GEN_EXPERIMENT", "")
EXPERIMENTS = set(x for x in EXPERIMENT.split(",") if x)
# every flag the generator reads (a misspelt one would silently build the default kernels)
KNOWN_EXPERIMENTS = {"skip_transform", "consumer_assist", "bf16", "lut", "notfence", "cnoconv", "tw4",
                     "prodfix", "notprefetch", "mxtwo", "lprefetch", "tsplit", "notsplit", "nochoist", "noepi",
                     "xnowait", "xnoconv", "tline", "noxself", "xself1", "xpre", "xnofence",
                     "skbulk", "xstag", "xstagl", "cstag", "cstagl", "noxdbuf", "nohalfk", "n160one", "tlineself", "filldep", "aprefetch", "wnocopy", "anocopy", "walkpre", "epinostore", "epistg", "fillasync", "epinowait",
                     "nogdwait", "w3wb", "slowprep", "noltail", "tpaircta"}
if EXPERIMENTS - KNOWN_EXPERIMENTS:
    sys.exit(f"gen_sm90a: unknown FP4LR_GEN_EXPERIMENT flag(s) {', '.join(sorted(EXPERIMENTS - KNOWN_EXPERIMENTS))}; "
             f"known: {', '.join(sorted(KNOWN_EXPERIMENTS))}")
# FP4LR_GEN_EXPERIMENT=consumer_assist: the consumer warpgroups convert half of every W
# chunk (one row-half per thread) between issuing a chunk's wgmmas and the next chunk's,
# the transform warps the other half (measurement variant until it has run on a GPU).
ASSIST = "consumer_assist" in EXPERIMENTS
# NVFP4 dequantizes both operands to f16 (e2m1 x ue4m3 lies in [2^-10, 2688] with at most 6
# significant bits, so f16 holds it exactly) and multiplies with f16 wgmma: the f16 high byte
# of an e2m1 value comes from one byte-permute table and its low byte is always zero, which
# saves two of the 17 integer operations per 8 elements and the f32 round trip of every
# scale.  Measured on the H200 (commit 677c607, NVFP4, same session): dense +7 %, fused +8-9 %
# over bf16.  MXFP4 stays bf16: ue8m0 scales reach 2^+-127, beyond f16.
# FP4LR_GEN_EXPERIMENT=bf16 emits the NVFP4 bf16 path again, for measurement.
F16 = False   # set per kernel by emit_kernel
# e2m1 -> f16 / bf16 by bit placement (fp4x8_to_placed): half the
# ALU operations of the byte-permute tables, the shifts moved to the FMA pipe.  Measured on
# the H200 (same run, flux-qkv / square-r0 / qwen-fc1-r128): NVFP4 dense +9.4 %, fused +7.3 %;
# MXFP4 dense +8.1 %, fused +5.7 %.  FP4LR_GEN_EXPERIMENT=lut emits the tables again.
PLACED = "lut" not in EXPERIMENTS
OUTDIR = os.path.join(os.path.dirname(HERE), "ptx", "sm90a")

# Tile of one CTA: 128 x BN outputs, a K stage of 128 fp4 elements (64 bytes a row),
# converted and multiplied 64 K at a time ("chunks").  BN is 256 but in the narrow _yt
# kernels (BN_NARROW below), set per kernel by emit_kernel.
BM, BN, BK, CHUNK_K = 128, 256, 128, 64
# The narrow swapped tile: 128 x 160 (wgmma N = 80 a half), for small-M problems whose
# 256-wide grid leaves SMs idle (sana-out: 72 tiles of 128 x 256 on 132 SMs, all split by
# stream-K; 126 of 128 x 160, one whole tile a CTA).  Only the swapped kernels are built
# with it (_x5_yt, and the prepared _w5_yt): in the _x ones the converters' units are 32 rows
# (BN / 32 of them an item); in both the W slots are BN x 64 and the epilogue stores
# 32-column chunks (BN is no multiple of 64).
BN_NARROW = 160
# setmaxnreg budget of the tw4 layout: 384 threads x 168 registers at entry = a pool of
# 64512; WG0 (four transform warps, one of them the producer) 104, two consumer WGs 200
# -> 128*(104 + 2*200) = 64512 (more would make setmaxnreg.inc wait forever).  The default
# layout (TW8 below) re-sets all three.
THREADS = 384
REG_WG0, REG_CONSUMER = 104, 200
TRANSFORM_WARPS = 4
# The transform layout, producer placement, fp4 prefetch and MXFP4 one-multiply path below
# became the default together at e36a593+1 after a same-run A/B on the H200 (driver
# 580.159.04, 2026-12-03, tools/ab_kernels.sh, 2 alternating rounds, flux-qkv / qwen-fc1-r32 /
# flux-out / sana-mlp / square-r0, bench/results/experiments/README.md): tw8 + prodrot
# against the 0a33f42 layout NVFP4 dense +6.9 %, fused +4.3 %, MXFP4 dense +8.9 %, fused
# +8.1 %; prodrot + tprefetch against it +4.0 / +4.2 % (NVFP4); mxone against prodrot on
# small MXFP4 scales (--scales small) dense +7.5 %, fused +10.5 %.  Each flag below emits the
# previous code again, for measurement.
#
# Transform layout (FP4LR_GEN_EXPERIMENT=tw4 emits the old one): two transform warpgroups, 8
# warps of 56 registers converting one W row a thread, beside the two consumer warpgroups at
# 200: 512 threads, 128*(2*56 + 2*200) = 65536.  512 threads give 128 registers at entry, so
# the consumers issue each k16 step as two m64n128k16 wgmmas (accumulators 0-63: columns
# 0-127, 64-127: columns 128-255, the same registers and layout as one m64n256), the fused
# low-rank step likewise.  ptxas: every instance clean at 56 / 200 (64 / 192 spills the
# NVFP4 fused consumer, 72 / 184 every kernel).  Why: ncu on 8c494db (flux-qkv NVFP4 dense,
# H200, bench/results/experiments) showed the one transform warp of each scheduler issuing
# in 22 % of its samples (latency-bound: fixed-latency and short-scoreboard stalls), the
# consumers waiting on `tfull` in 55 % of theirs and the tensor pipe busy 64 %; a second
# transform warp per scheduler hides that latency.  tw4: 4 transform warps at 104 registers
# (two W rows a thread), 384 threads, one m64n256k16 a k16 step; its host needs
# -DFP4LR_SM90A_THREADS=384 (the launch checks MAX_THREADS_PER_BLOCK against it).
TW8 = "tw4" not in EXPERIMENTS
# Producer placement (FP4LR_GEN_EXPERIMENT=prodfix: warp 0 issues every stage): the stage
# issue rotates over the transform warps (stage g by lane 0 of warp g % TRANSFORM_WARPS) and
# the cursor checks the unit's end against %pke instead of recomputing the unit's bounds
# every stage.  Every transform warp runs the cursor (a few instructions a stage), one in
# eight the empty wait and the four bulk copies.  Why: in the 8c494db profile transform warp
# 0, the producer, executed ~110 more instructions a stage than the others (~660): the
# others waited on `tempty` while the consumers waited for warp 0's `tfull` arrive.
PRODROT = "prodfix" not in EXPERIMENTS
# fp4 prefetch (FP4LR_GEN_EXPERIMENT=notprefetch): the transform loads a chunk's fp4 words
# and scales (guarded by `full`) before it waits for a free slot (`tempty`), so their latency
# overlaps the wait (short-scoreboard stalls were 10 % of the transform's samples at 8c494db,
# and it waited on `tempty` in 23 %).
TPREFETCH = "notprefetch" not in EXPERIMENTS
# MXFP4 one-multiply path (FP4LR_GEN_EXPERIMENT=mxtwo: always two multiplies): the bf16
# placement gives value * 2^-126, the scale is 2^(E-127); their product is placed * 2^(E-1),
# one bf16 multiply whenever E <= 128 (scale <= 2; 2^(E-1) then fits bf16).  A warp-uniform
# vote picks that path per chunk; a warp with a larger scale (or the NaN code 255) takes the
# two multiplies.  Same results bit for bit (both exact).  Trained weights' scales sit near
# E = 120; the benchmark's default synthetic scales (centred on 2^0) mostly take the
# two-multiply path, `--scales small` the fast one.
MXONE = "mxtwo" not in EXPERIMENTS
# FP4LR_GEN_EXPERIMENT=lprefetch (measured at 0663df2, H200: r = 128 0.99x, not adopted): when
# a unit starts a fused tile, the low-rank issuer also asks L2 for the tile's later chunks (those beyond the ring's first
# fill) with cp.async.bulk.prefetch.tensor, so the chunks streamed through the ring after the
# K loop come from L2.  Why: at r = 128 (16-rank chunks, 2 slots) the fused kernel runs at
# 0.90x of dense against 0.96x at r = 32; the tail streams 6 of its 8 chunks one ring round
# trip at a time, and deeper rings that cost a main stage lost (df63877: 0.85-0.88x).
LPREFETCH = "lprefetch" in EXPERIMENTS
# `tfull` split by column half (FP4LR_GEN_EXPERIMENT=notsplit: one tfull a slot; `tsplit`
# also splits NVFP4's): transform warps 0-3 (W rows 0-127) arrive on tfull_lo[t], warps 4-7
# (rows 128-255) on tfull_hi[t] (count 4 each); a consumer issues a chunk's four
# column-0-127 wgmmas after tfull_lo and its four column-128-255 wgmmas after tfull_hi, so
# the tensor core starts on a chunk when half of its W rows are converted.  Why: at 777e9dd
# the consumers spent 30 % of their samples in the two tfull waits and the transform warps
# 14 % of theirs in tempty waits (ncu with line information at 5cc9b03).  Measured at
# 5cc9b03+1 (H200, 4 shapes, A/B): MXFP4 dense +2.9 %, fused +2.0 %; NVFP4 dense -0.5 %,
# fused -0.8 %: the default for MXFP4 only (TSPLIT is set per kernel in emit_kernel).
TSPLIT_FORCED = "tsplit" in EXPERIMENTS
TSPLIT = False
# Consumer address hoist (FP4LR_GEN_EXPERIMENT=nochoist: computed every chunk): chunk 0's A
# offset of the thread's rows and the B descriptor's start of slot 0 are computed once
# (two registers, which is what the MXFP4 fused kernel has left); 12 fewer instructions a
# chunk a thread.  Measured at 5cc9b03+1 (H200, 4 shapes, A/B): NVFP4 dense +0.9 %, fused
# +0.0-1.0 %, MXFP4 dense +2.1 %, fused -0.5 %; on top of tsplit: MXFP4 dense +2.2 %, fused
# -0.4 %, NVFP4 dense +2.4 %.
CHOIST = "nochoist" not in EXPERIMENTS
# FP4LR_GEN_EXPERIMENT=tline (measurement only): a timeline of every CTA.  Chosen threads
# store %globaltimer (ns) at the events below into the module's global fp4lr_tline[CTA][48]
# (u64; `fp4lr-check --timeline FILE` zeroes it, runs one launch and writes it out,
# tools/tline_summary.py reads it).  Unit u (0..5) of a consumer's walk has four events.
TLINE = "tline" in EXPERIMENTS
TLINE_EVENTS = 48
TLINE_CTAS = 1024
TLINE_NAMES = {0: "entry (thread 0)", 1: "consumer: first W slot full"}
for _u in range(6):
    TLINE_NAMES.update({2 + 4 * _u: f"unit {_u}: A stage 0 full", 3 + 4 * _u: f"unit {_u}: K loop done",
                        4 + 4 * _u: f"unit {_u}: fixup done (owner / whole)", 5 + 4 * _u: f"unit {_u}: finished"})
TLINE_NAMES.update({26: "consumer: all units done", 27: "consumer: last store drained",
                    28: "W producer: first item ready", 29: "W producer: all converted seen",
                    30: "converter warp 0: first unit published", 31: "converter warp 0: last unit published",
                    32: "converter warp 0: order entry read", 33: "converter warp 0: pass 0 converted",
                    34: "converter warp 0: pass 1 converted", 35: "converter warp 0: unit stored",
                    36: "unit 0 epilogue: chunk 0 begun", 37: "unit 0 epilogue: chunk 1 begun",
                    38: "unit 0 epilogue: chunk 2 begun", 39: "unit 0 epilogue: chunk 3 begun",
                    40: "unit 0 epilogue: chunk 3 store issued",
                    41: "consumer fill: begun", 42: "consumer fill: first loads landed",
                    43: "consumer fill: converted", 44: "consumer fill: handed off",
                    45: "main producer: unit 0's stage 8 issued", 46: "consumer: unit 0's stage 8 full",
                    47: "main producer: unit 1's first stage issued"})


def tline(e, ev, thread, cond=None, dep=None):
    """TLINE: thread `thread` stores the time at event `ev` (a number, or (register,
    offset)); `cond` (a b32 register) must be nonzero as well.  `dep` (a b32 register): the
    store waits for its value (a load's result), so the time is taken after it arrived."""
    if not TLINE:
        return
    evx = ev if not isinstance(ev, tuple) else "%tle"
    pre = "" if not isinstance(ev, tuple) else f"\n\tadd.u32 %tle, {ev[0]}, {ev[1]};"
    cnd = "" if not cond else f"\n\tsetp.ne.u32 %tlq, {cond}, 0;\n\tand.pred %tlp, %tlp, %tlq;"
    if dep:
        cnd += f"\n\tsetp.ne.u32 %tlq, {dep}, 0xfffffffe;\n\tand.pred %tlp, %tlp, %tlq;"
    e(f"""\t{{   // tline: event {ev}
\t.reg .b64 %tla, %tlb, %tlt;
\t.reg .b32 %tlc, %tle;
\t.reg .pred %tlp, %tlq;
\tsetp.eq.u32 %tlp, %thr, {thread};{cnd}{pre}
\tmov.u64 %tlt, 0;
\t@%tlp mov.u64 %tlt, %globaltimer;          // predicated: read after `dep` arrived
\tmov.u32 %tlc, %ctaid.x;
\tmad.lo.u32 %tlc, %tlc, {TLINE_EVENTS}, {evx};
\tmul.wide.u32 %tla, %tlc, 8;
\tmov.u64 %tlb, fp4lr_tline;
\tadd.u64 %tla, %tla, %tlb;
\t@%tlp st.global.u64 [%tla], %tlt;
\t}}""")


# First fill (the default since 2026-12-04; FP4LR_GEN_EXPERIMENT=noxself emits the kernels
# before it): in the _x kernels the consumers convert their first unit's first XSELF_KB K
# blocks of W straight into the W slots (emit_self_fill), so the first wgmmas wait for one load
# of fp4 W, not for the launch's conversion to reach global memory, be flagged, seen and
# copied back.  Measured on the H200 (079d726+1, tools/ab_kernels.sh, 2 rounds, 6 shapes,
# bench/results/experiments): 1.000-1.024, never below (sana-out MXFP4 dense +2.4 %, NVFP4
# +1.2 %; the FLUX and Qwen shapes +0.0-0.8 %).  Until 2026-12-04 it was opt-in: under
# compute-sanitizer racecheck the _x kernels gave a wrong Y (max err/mag 0.28-0.52, 0 hazards
# reported) on stream-K cases such as --mnk 1000x1300x640 --dense --w-prep inline --schedule
# sk.  The cause: when a CTA's first unit has one K block, slots 2 and 3 belong to the W
# producer's copy of the next unit, but the consumers still stored the first unit's second K
# block there (the check that should have skipped it sat where the four-chunk load batch never
# reached it); racecheck's slowdown let those stores land after the bulk copy.  With the check
# in the conversion loop every suite and all three sanitizers pass (the old kernels fail 3 of
# 5 such cases under racecheck, the new ones none).  xself1 converts one K block instead of
# two (0.99x of two on SANA).
XSELF = "noxself" not in EXPERIMENTS
XSELF_KB = 1 if "xself1" in EXPERIMENTS else 2
# The fill's loads at one memory latency (FP4LR_GEN_EXPERIMENT=filldep, measurement only):
# ptxas 13.0 sinks each chunk's loads of the fill's batch to just before that chunk's
# conversion (SASS of 47e3b0f: chunk 1's loads after chunk 0's conversion, chunks 2-3's
# after chunk 1's), so the fill takes three memory latencies, not one (timeline: first loads
# land at 2.1-2.6 us, conversion ends at 4.9-5.1).  With filldep a shared store before the
# slots' stores needs every load of the batch (the xor of the loaded words, stored under a
# condition that is never true and that ptxas cannot decide) and the fill loads 8 bytes at a
# time (16-byte loads of four chunks at once spill 4 bytes); the 256-wide fused and MXFP4
# dense kernels spill even so and keep the plain fill.  Measured (H200, 2026-12-04, 3
# rounds): slower, NVFP4 dense 0.940-0.991 (sana-qkv 0.940), narrow fused 0.963-0.965: the
# loads are one row a thread (uncoalesced), and all twenty at once land at 5.4-5.6 us
# instead of the first chunk's at 2.1-2.3 (bench/results/experiments/README.md).
FILLDEP = "filldep" in EXPERIMENTS
FILLDEP_ON = False   # set per kernel by emit_kernel
# The fill loaded coalesced (FP4LR_GEN_EXPERIMENT=fillasync, NVFP4): the 256 consumer threads
# first copy the fill's fp4 bytes with cp.async, 16 bytes a lane and eight lanes a row (the
# two K blocks are 128 contiguous bytes of each W row), each chunk's 32 bytes and its 4 scale
# bytes into units 0-2 (at u ^ row%8, as the conversion's stores) of the 128-byte row of the
# slot it will be converted into; then wait, synchronise,
# and each thread converts its own row from there (in place: it reads the raw bytes before
# it stores).  One memory latency, and four lines a warp instruction instead of 32.
# Measured (H200, 2026-12-04, with xpre): correct (suite, sanitizers), 256-wide dense
# 0.998-1.005 (the conversion after the copies still ends at 5.1 us and the first converted
# item comes at 8.5-9 us), the narrow tile 0.88 / 0.94 (a few CTAs' copies land at 7 us): opt-in.
FILLASYNC = "fillasync" in EXPERIMENTS
FILLASYNC_ON = False   # set per kernel by emit_kernel
# Converter prefetch (FP4LR_GEN_EXPERIMENT=xpre, NVFP4 only: MXFP4's converters spill with
# it): a converter warp issues both passes' fp4 loads before converting pass 0, one memory
# latency a unit instead of two.  Measured with xself (same A/B): NVFP4 dense 0.994, fused
# 1.000: not adopted.
XPRE = "xpre" in EXPERIMENTS
# Staggered start (FP4LR_GEN_EXPERIMENT=xstag, 1 us / xstagl, 2 us; the _x kernels; the MXFP4
# fused _yt kernel spills with it): a
# converter warp whose first unit is not among the launch's first XSTAG_UNITS (the first 16
# items in the host's order: what the first wave needs first) waits that long before it, so
# that the first units' loads, stores and releases do not queue behind the whole grid's
# first round (the timeline: a unit's release waits 1.5-2 us for its stores).
XSTAG_NS = 2000 if "xstagl" in EXPERIMENTS else 1000 if "xstag" in EXPERIMENTS else 0
XSTAG_UNITS = 128
# Staggered consumers (FP4LR_GEN_EXPERIMENT=cstag, 1 us / cstagl, 2 us; every kernel): the
# second consumer warpgroup waits that long after its first W slot is full, once a launch,
# so that the two warpgroups run offset: one's epilogue (and, fused, affine and low-rank)
# under the other's K loop, the tensor cores never idle for both at once.  Nothing else
# changes: a slot or stage is released only when both warpgroups have used it, so the
# leader runs at most TSLOTS - 1 chunks ahead (the ring bounds the offset).  Measured
# (97ea1f1, H200, 7 shapes, 2 rounds): cstag 0.998-1.010, cstagl 0.991-1.002 (SANA -1.3 to
# -3.2 %): the offset does not pay; opt-in (bench/results/experiments/README.md).
CSTAG_NS = 2000 if "cstagl" in EXPERIMENTS else 1000 if "cstag" in EXPERIMENTS else 0
CSTAG_ON = 0   # set per kernel by emit_kernel
CSTAG_SETUP = ("\t.reg .pred %pcst;\n\t.reg .b64 %cst0, %cst1;\n"
               "\tsetp.eq.u32 %pcst, %r42, 1;                // cstag: the second consumer WG waits once\n"
               if CSTAG_NS else "")
XSELF_BATCH = 4   # chunks whose loads are issued together (all: one memory latency)
XSELF_ON = False  # set per kernel by emit_kernel
XPRE_ON = False   # likewise
if TW8:
    THREADS, TRANSFORM_WARPS = 512, 8
    REG_WG0, REG_CONSUMER = 56, 200
# The narrow tile's consumers hold 80 accumulators, not 128: 8 of their registers go to WG0 and
# WG1 (128 * (2 * 64 + 2 * 192) = 65536), whose MXFP4 fused converters spill 4 bytes at 56
# there (ptxas 13.0; at 80 / 176 the NVFP4 fused consumer spills instead; set per kernel by
# emit_kernel)
REG_NARROW = (64, 192)
REG_WIDE = (REG_WG0, REG_CONSUMER)
TRANSFORM_THREADS = 32 * TRANSFORM_WARPS
# the consumer warpgroups' names in the kernels' comments (rows 0-63, rows 64-127)
CWG0, CWG1 = ("WG2", "WG3") if TW8 else ("WG1", "WG2")
# bf16 transform ring: 2 or 3 slots of BN x 64 bf16 (32 KiB each), set per kernel by
# emit_kernel; host/budget.c takes 3 wherever 3 main stages still fit beside them and the
# entry name then ends in _t3.  Measured (H100, b739920, NVFP4 dense, same run): 3 slots with
# 3 main stages +5 % against 2 slots with 4.
TSLOTS = 2
# Writeback staging: WB_STAGES buffers of BM x EPI_COLS bf16 (set per kernel by emit_kernel;
# host/budget.c charges the same): two 64-column buffers in the dense family; in the fused
# family 16 KiB, which leaves the room that the wc / beta slices and a third low-rank or main
# stage need: one 64-column buffer (measured on the H200 at b739920, _t kernels: one buffer
# cost the dense kernel 0.5 % and the fused kernel nothing); the 256-wide fused _x kernels add
# a second one when they can (XDBUF below), the narrow fused _x tile has two 32-column buffers
# (EPI_COLS below; A/B against one buffer, H200, 2 rounds, ed55e4c, then in all the fused _x
# kernels: r = 32 +1.0-1.5 % on the Qwen and flux-fc1 shapes, 1.003x over the 13 fused
# shapes, but r = 128, whose plans take the _w kernels, 0.988-0.993x: so those keep one).
WB_STAGES = 2
# The epilogue's chunk width in tile columns (set per kernel by emit_kernel): 64 (16 KiB
# buffers, 128-byte staging rows, swizzle 128B); 32 in the narrow fused _x tile (and in every
# fused _x kernel with noxdbuf), whose 16 KiB are two 8 KiB buffers (64-byte rows and swizzle
# 64B in the plain epilogue, half as many 128-byte rows in the transposed one), so that a
# chunk's staging overlaps the previous chunk's store instead of waiting for it to be read.
EPI_COLS = 64
# The fused 256-wide _x kernels' second writeback buffer (XDBUF, set per kernel by emit_kernel;
# FP4LR_GEN_EXPERIMENT=noxdbuf emits the two 32-column buffers again): one 64-column buffer
# of their own (the same 16 KiB) and, once the CTA's converter warps have converted their
# last unit, their 24 KiB of staging as the second (they arrive on mbarrier `xdone` when they
# leave; each WG's issuing thread tests it when an epilogue starts and tells its WG through
# a word in shared memory, so the WG's threads agree on the buffers for the whole epilogue).
# Why: with the rank-32 low-rank ring a second 64-column buffer does not fit (the 2 x 16 KiB
# of the dense kernels).  Measured on the H200 (2c74018, tools/ab_kernels.sh, 2 rounds,
# NVFP4, r = 0 so that both fit): two 64-column buffers against two 32-column ones
# 1.006-1.018 (flux-qkv 1.010, sana-mlp 1.018, flux-out 1.017, 8192^3 1.006); one
# 64-column buffer against two 32-column ones 0.989-1.005 (r = 32, 5 shapes, 0.997); 4 main
# stages with one 32-column buffer against 3 with two 0.980-0.990 (r = 32, 7 shapes).
XDBUF = False
# The half K block (HALFK, set per kernel by emit_kernel: the 256-wide NVFP4 _yt kernels;
# FP4LR_GEN_EXPERIMENT=nohalfk emits them without it): NVFP4's K is a multiple of 64, so when
# K % 128 = 64 the second chunk of the last K block lies wholly past K (zeros from the bulk
# copy's bounds).  The W producer does not copy it, the consumers do not multiply it (nor the
# first fill arrive for its slot): both step over it the same way, chunk (kb, h) existing iff
# 128 kb + 64 h < K.  SANA's K = 2240 is such a K: 1 chunk of 35 a tile.
HALFK = False
GDWAIT_ON = False  # the W producer waits for the preparation grid first (griddepcontrol.wait; set by emit_kernel)
# FP4LR_GEN_EXPERIMENT=w3wb (measurement, with noxself, or xself1 where that builds: the first
# fill needs two slots a K block): the 256-wide _x4 kernels keep 3 W slots
# and give the fourth slot's 32 KiB to two more 64-column writeback buffers: dense four in all,
# so that a tile's four epilogue chunks never wait for the bulk stores' reads (what epinowait
# bounds); fused three of their own instead of one plus the converters' staging (XDBUF).  Same
# entry names and shared-memory size: the committed host runs them.
W3WB = "w3wb" in EXPERIMENTS
NAME_TSLOTS = 2    # the W slots the entry's name says (TSLOTS but under w3wb; set by emit_kernel)
AFF_SLICE = 2 * 256 * 4   # fused: one WG's wc and beta slices of a tile (BN fp32 each; set per kernel)

FORMATS = {
    # name: (scale block, K-atoms per stage, SFA bytes per stage, SFW bytes per stage)
    "nvfp4": (16, 2, 1024, 2048),
    "mxfp4": (32, 1, 512, 1024),
}

# The instantiations the host can pick: (format, family, cluster, main stages).
# The stage counts equal what host/budget.c solves for the tile above (checked by
# tests/test_sm90a_instances.c); lower counts exist for the stage sweep.
INSTANCES = [
    # (format, family, cluster, main stages[, transform slots = 2]).  The solver's default
    # plans use 3 transform slots (_t3) where 3 main stages fit beside them (every rank:
    # r = 128 and up with 16-rank low-rank chunks); the 2-slot instances serve the stage
    # sweep, --stages 4 / 5 and the forced 2-slot ring.  The fused s2_t3 instances serve the
    # forced A/B of a deeper low-rank ring (--stages 2 --transform-slots 3: 2 x 32 or 4 x 16
    # ranks beside 2 main stages).
    ("nvfp4", "dense", 1, 3, 3),
    ("mxfp4", "dense", 1, 3, 3),
    ("nvfp4", "dense", 2, 3, 3),
    ("mxfp4", "dense", 2, 3, 3),
    ("nvfp4", "dense", 1, 4),
    ("mxfp4", "dense", 1, 5),
    ("nvfp4", "dense", 1, 2),
    ("nvfp4", "dense", 1, 3),
    ("nvfp4", "dense", 1, 1),
    ("nvfp4", "dense", 2, 4),
    ("mxfp4", "dense", 2, 5),
    # fused: the solver's stage counts for r = 0 (affine only) .. 1024, both formats
    ("nvfp4", "fused", 1, 4, 3),
    ("nvfp4", "fused", 1, 3, 3),
    ("mxfp4", "fused", 1, 4, 3),
    ("mxfp4", "fused", 1, 3, 3),
    ("nvfp4", "fused", 1, 2, 3),
    ("mxfp4", "fused", 1, 2, 3),
    ("nvfp4", "fused", 1, 4),
    ("nvfp4", "fused", 1, 3),
    ("nvfp4", "fused", 1, 2),
    ("nvfp4", "fused", 1, 1),
    ("mxfp4", "fused", 1, 5),
    ("mxfp4", "fused", 1, 4),
    ("mxfp4", "fused", 1, 3),
    # the fused pair: W and U multicast by rank 0, the same per-CTA budget as one CTA.
    # A pair's default plans keep 2 slots (host/budget.c); its _t3 instances serve the
    # forced A/B (fp4lr_plan_opts.force_transform_stages = 3).
    ("nvfp4", "fused", 2, 4, 3),
    ("nvfp4", "fused", 2, 3, 3),
    ("mxfp4", "fused", 2, 4, 3),
    ("mxfp4", "fused", 2, 3, 3),
    ("nvfp4", "fused", 2, 5),
    ("nvfp4", "fused", 2, 4),
    ("nvfp4", "fused", 2, 3),
    ("mxfp4", "fused", 2, 5),
    ("mxfp4", "fused", 2, 4),
    ("mxfp4", "fused", 2, 3),
    # W prepared (one CTA): dense, 5 W slots beside 3 main stages of A + SFA (NVFP4, 9216 B
    # each) or 4 (MXFP4, 8704 B) is what host/budget.c solves; nvfp4 s4_w4 and mxfp4 s3_w5
    # serve forced A/Bs (--stages 4 / 3)
    ("nvfp4", "dense", 1, 3, 5, True),
    ("mxfp4", "dense", 1, 4, 5, True),
    ("nvfp4", "dense", 1, 4, 4, True),
    ("mxfp4", "dense", 1, 3, 5, True),
    # W prepared, fused (one CTA): the solver's counts for r = 0 .. 1024 (at most 4 main
    # stages; what is left goes to the low-rank ring)
    ("nvfp4", "fused", 1, 4, 5, True),
    ("nvfp4", "fused", 1, 3, 5, True),
    ("nvfp4", "fused", 1, 4, 4, True),
    ("nvfp4", "fused", 1, 3, 4, True),
    ("mxfp4", "fused", 1, 4, 5, True),
    ("mxfp4", "fused", 1, 4, 4, True),
    ("mxfp4", "fused", 1, 3, 4, True),
    # W prepared, the pair (cluster 2, WPAIR): each CTA's budget is one CTA's, so the solver's
    # counts are the one-CTA _w kernels'; rank 0 multicasts each W chunk to both CTAs
    ("nvfp4", "dense", 2, 3, 5, True),
    ("mxfp4", "dense", 2, 4, 5, True),
    ("nvfp4", "fused", 2, 4, 5, True),
    ("nvfp4", "fused", 2, 3, 5, True),
    ("nvfp4", "fused", 2, 4, 4, True),
    ("nvfp4", "fused", 2, 3, 4, True),
    ("mxfp4", "fused", 2, 4, 5, True),
    ("mxfp4", "fused", 2, 4, 4, True),
    ("mxfp4", "fused", 2, 3, 4, True),
    # W converted in the kernel (_x, one CTA; fp4lr_wprep INLINE, AUTO from M = 1536): the converter
    # warps' 24 KiB staging leaves 4 W slots beside 4 main stages (host/budget.c); fused, 3
    # from r = 32 on (with the affine slices)
    ("nvfp4", "dense", 1, 4, 4, True, True),
    ("mxfp4", "dense", 1, 4, 4, True, True),
    ("nvfp4", "fused", 1, 4, 4, True, True),
    ("nvfp4", "fused", 1, 3, 4, True, True),
    ("mxfp4", "fused", 1, 4, 4, True, True),
    ("mxfp4", "fused", 1, 3, 4, True, True),
    # the same dense kernels storing their tile transposed (_yt): the host's swapped plan
    # (fp4lr_swap, AUTO for M < 1536 <= N) binds A and W exchanged, so that the operand converted
    # once per launch is A, and the kernel's C is Y^T
    ("nvfp4", "dense", 1, 4, 4, True, True, True),
    ("mxfp4", "dense", 1, 4, 4, True, True, True),
    ("nvfp4", "fused", 1, 4, 4, True, True, True),
    ("nvfp4", "fused", 1, 3, 4, True, True, True),
    ("mxfp4", "fused", 1, 4, 4, True, True, True),
    ("mxfp4", "fused", 1, 3, 4, True, True, True),
    # the narrow swapped tile (128 x 160, BN_NARROW): 20 KiB W slots leave the solver 4 main
    # stages and 5 slots at every rank (the low-rank ring takes what is left); the host takes it
    # where the 256-wide grid is under one wave and the 160-wide one fills at most one
    ("nvfp4", "dense", 1, 4, 5, True, True, True, BN_NARROW),
    ("mxfp4", "dense", 1, 4, 5, True, True, True, BN_NARROW),
    ("nvfp4", "fused", 1, 4, 5, True, True, True, BN_NARROW),
    ("mxfp4", "fused", 1, 4, 5, True, True, True, BN_NARROW),
    # the W-prepared kernels storing their tile transposed (_w<n>_yt): the swapped plan with
    # w_prep on (host/plan.c), the user's A (the small operand at M = 1024) prepared by its own
    # launch and the kernel launched as that launch's programmatic dependent; the solver's
    # counts for every rank (dense as the _w rows above; fused with two writeback buffers,
    # host/budget.c yt_prepared: r = 0 s3_w5, r >= 16 s4_w4, MXFP4 r = 48 s3_w4)
    ("nvfp4", "dense", 1, 3, 5, True, False, True),
    ("mxfp4", "dense", 1, 4, 5, True, False, True),
    ("nvfp4", "fused", 1, 3, 5, True, False, True),
    ("nvfp4", "fused", 1, 4, 4, True, False, True),
    ("mxfp4", "fused", 1, 3, 5, True, False, True),
    ("mxfp4", "fused", 1, 4, 4, True, False, True),
    ("mxfp4", "fused", 1, 3, 4, True, False, True),
    # ... and their narrow tile (128 x 160: 4 main stages beside 5 W slots of 20 KiB, but 3 in
    # NVFP4 fused from r = 112, whose low-rank chunk grows), where the 256-wide grid is under
    # one wave (sana-out)
    ("nvfp4", "dense", 1, 4, 5, True, False, True, BN_NARROW),
    ("mxfp4", "dense", 1, 4, 5, True, False, True, BN_NARROW),
    ("nvfp4", "fused", 1, 4, 5, True, False, True, BN_NARROW),
    ("nvfp4", "fused", 1, 3, 5, True, False, True, BN_NARROW),
    ("mxfp4", "fused", 1, 4, 5, True, False, True, BN_NARROW),
    # the W preparation kernels of the _w kernels, and (_pdl) the same kernels releasing their
    # programmatic dependents at their start (the _w<n>_yt launches)
    ("nvfp4", "wprep"),
    ("mxfp4", "wprep"),
    ("nvfp4", "wprep_pdl"),
    ("mxfp4", "wprep_pdl"),
]


def entry_name(fmt, family, cluster, stages, tslots=2, wpre=False, xconv=False, yt=False, bn=256):
    deep = f"_x{tslots}" if xconv else f"_w{tslots}" if wpre else "_t3" if tslots == 3 else ""
    return f"fp4lr_sm90a_{fmt}_{family}_m{BM * cluster}n{bn}k{BK}_c{cluster}_s{stages}{deep}{'_yt' if yt else ''}"


def prep_name(fmt, pdl=False):
    """The W preparation kernel of a format (emit_prep); pdl: the one that releases its
    programmatic dependents at its start."""
    return f"fp4lr_sm90a_{fmt}_wprep{'_pdl' if pdl else ''}"


# The cluster size of the kernel being emitted (1 or 2), and whether the pair splits the
# W transform (each CTA converts half the rows into both CTAs' slots); set by emit_kernel.
CL = 1
SPLIT = False
BULK = False   # split pair, the peer's half delivered by one DSMEM bulk copy per chunk
FUSED = False      # the fused family: affine and low-rank after the main loop
LTAIL = False      # fused _w: the low-rank chunks past the ring come through the W ring
WPRE = False       # W prepared: the W ring is filled by bulk copies of the prepared W (set by emit_kernel)
WPAIR = False      # ... by a pair: rank 0 multicasts each W chunk into both CTAs (set by emit_kernel)
PAIR_CTA = False   # the pair's waits / arrives at CTA scope: WPAIR, or the transform pair with tpaircta
XCONV = False      # ... and W is converted inside the kernel by its idle warps (the _x kernels; implies WPRE)
YT = False         # the tile is stored transposed (the _yt kernels: the host binds A and W exchanged, so the
                   # kernel's C = Y^T; set by emit_kernel)
XCONV_WARPS = 6    # the converter warps: warps 2-7 (WG0 and WG1 less the two producers' warps)
XCONV_STAGE = 4096  # a converter warp's staging block: 32 chunks of 128 bytes
XLOOK = 4          # the _x W producer checks up to this many items ahead before one fence
XHEAD = 64         # _x flags workspace: the unit count (word 0), "all converted" (word 1), then the flags
LORA_SLOTS = 4     # low-rank ring slots the kernel has barriers for (the host uses <= this)


def acc_list(lo=0, hi=None):
    hi = BN // 2 if hi is None else hi
    return "{" + ", ".join(f"%acc{i}" for i in range(lo, hi)) + "}"


def layout(fmt, stages):
    _, _, sfa, sfw = FORMATS[fmt]
    a_off, w_off = 0, BM * BK // 2
    sfa_off = w_off + BN * BK // 2
    sfw_off = sfa_off + sfa
    stage = sfw_off + sfw
    if WPRE:   # a stage holds A and SFA alone (MXFP4: 8704 B, A stays 512-byte aligned)
        sfa_off = w_off
        w_off = sfw_off = None
        stage = sfa_off + sfa
    main = stage * stages
    tslot = BN * CHUNK_K * 2
    t_off = (main + 1023) // 1024 * 1024
    wb_off = t_off + TSLOTS * tslot
    wb = BM * EPI_COLS * 2
    bar_off = wb_off + WB_STAGES * wb
    nbar = 2 * stages + 2 * TSLOTS + (2 * LORA_SLOTS if FUSED else 0) + (TSLOTS if TSPLIT else 0)
    total = bar_off + nbar * 8
    xstage = (total + 1023) // 1024 * 1024    # _x: the converter warps' staging blocks
    if XCONV:
        total = xstage + XCONV_WARPS * XCONV_STAGE
    aff = (total + 1023) // 1024 * 1024    # fused: wc / beta slices, one per consumer WG
    if FUSED:
        total = aff + 2 * AFF_SLICE
    lora = (total + 1023) // 1024 * 1024   # fused: the low-rank ring, sized at run time
    return dict(a=a_off, w=w_off, sfa=sfa_off, sfw=sfw_off, stage=stage, tslot=tslot,
                t=t_off, wb=wb_off, wbuf=wb, bar=bar_off, nbar=nbar, aff=aff, total=total, lora=lora, xstage=xstage,
                sfa_bytes=sfa, sfw_bytes=sfw)


def header(e, fmt, family, cluster, stages, L):
    blk, ka, _, _ = FORMATS[fmt]
    name = entry_name(fmt, family, cluster, stages, NAME_TSLOTS, WPRE, XCONV, YT, BN)
    scale = "ue4m3 (e4m3 bits, sign 0)" if fmt == "nvfp4" else "ue8m0 (0xFF = NaN)"
    optype = "f16" if F16 else "bf16"
    optype_why = (": |value| in [2^-10, 2688], at most 6 significant bits" if F16 else
                  "; ue8m0 scales reach 2^+-127, beyond f16")
    optype_note = ("\n// Below, \"bf16\" of W's staging ring and of the fragments reads f16." if F16 else "")
    if PLACED:
        optype_note += ("\n// Conversion by bit placement (fp4x8_to_placed in the generator):\n"
                        "// the sign to bit 15 and (e1 e0 m) to the low exponent / top mantissa bits give the\n"
                        + ("// f16 pattern of value * 2^-14; the scale multiply keeps products exact (the\n"
                           "// smallest, 2^-24, is the f16 subnormal unit), so the accumulators hold\n"
                           "// sum * 2^-28; each is multiplied by 2^28 (exact) before alpha."
                           if F16 else
                           "// bf16 pattern of value * 2^-126; one multiply by 2^126 makes the exact value."))
        kperm_step = "16c+8(j/2)+2(j%2)+{0,4,1,5}"
        kperm_pair = "(16c+8(p/4)+p%4, the same + 4)"
    else:
        kperm_step = "16c+4j+{0,1,2,3}"
        kperm_pair = "(16c+2p, 16c+2p+1)"
    e(f"""//
// {name}
//
// GENERATED by tools/gen_sm90a.py -- edit the generator, then run it; a test checks
// that this file equals the generator's output.
//
// What it computes ({"OPERATOR.md: the main product; the fused family's whole operator is under Family below" if FUSED else "OPERATOR.md, r = 0, no affine"}):
//     {"main[m,n] = sum_k deq(A)[m,k] * deq(W)[n,k]" if FUSED else "Y[m,n] = bf16_rne( alpha * sum_k deq(A)[m,k] * deq(W)[n,k] )"}
// A: M x K e2m1 (K contiguous, element 2i in the low nibble of byte i), W: N x K likewise,
// SFA / SFW: {scale} scales per {blk} elements in the 128x4 atom layout.{yt_doc()}
// Hopper has no 4-bit tensor cores: both operands are dequantized EXACTLY to {optype}
// (e2m1 x scale is always exact in {optype}{optype_why}) and multiplied by {optype} wgmma
// with fp32 accumulation.{optype_note}
//
// Tile: one CTA computes {BM} x {BN} outputs; the K loop moves {BK} elements ({BK//2} bytes
// a row) per main stage, converted and multiplied {CHUNK_K} at a time (two chunks a stage).
// Persistent: each {"cluster walks cluster tiles %clusterid.x, +%nclusterid.x" if CL == 2 else "CTA walks tiles blockIdx.x, +gridDim.x"}, ... of a grouped raster order
// (groups of `group` tile rows along M share W tiles in L2).
//
{wpre_roles_doc() if WPRE else transform_roles_doc(optype)}//                       the K loop: alpha in fp32, bf16, swizzled staging, bulk tensor store.
//
{cluster_doc()}
{fused_doc()}
// Work units (every role walks the same sequence; unit_first / unit_next): with
// p_sk_ws = 0 each cluster takes whole tiles %tile0, +G, ...  With a workspace (stream-K),
// tiles below p_sk_dp_tiles are walked so, and the remaining tiles' K stages are dealt out
// as one contiguous range per cluster (q each, one more for the first r); a unit is the
// part of a range inside one tile (stages kb..ke-1).  After a unit's K loop: kb > 0 ->
// contributor: the raw sums go to the cluster rank's 128 KiB workspace slot and its flag is
// set to p_sk_epoch (st.release.gpu after a 256-thread barrier); kb = 0 and ke < nks ->
// owner: waits (ld.acquire.gpu) for the flags of the clusters whose ranges start inside
// the tile, adds their slots in cluster order, then finishes the tile (affine, low-rank,
// epilogue).  A contributor did its part first in its range and the owner its part last,
// so no cluster waits for one that waits.
//
// K permutation: the product is invariant under any permutation of K applied to both
// operands (each element keeps its own scale).  Consumer thread c = lane%4 takes the 16
// consecutive elements 16c..16c+15 of the chunk (8 bytes, one scale) and feeds elements
// {kperm_step} to k16 step j at fragment columns {{2c,2c+1,2c+8,2c+9}}; the transform
// writes the same W elements to the same logical columns, so that
//     logical 16-byte chunk q of a bf16 W row = {{ W_0[q], W_1[q], W_2[q], W_3[q] }}
// where W_c[p] is the bf16x2 pair {kperm_pair}.
//
{wpre_protocol_doc(L, stages) if WPRE else transform_protocol_doc(L, stages, ka)}//   total {L['total']} bytes (host/budget.c charges the same objects).{lora_doc(L)}
//""")


def yt_doc():
    if not YT:
        return ""
    once = ("""converted once per
// launch (the converters' W) is the user's A.""" if XCONV else """prepared once per
// launch (by its own preparation kernel) is the user's A.""")
    return f"""
// Y transposed (_yt): the host binds the user's W as this kernel's A (and SFW as SFA), the
// user's A as its W, and passes M and N exchanged, so that the operand {once}  The kernel's M x N result C is then Y^T: the
// epilogue writes each 8x8 accumulator block transposed (stmatrix .trans) and stores C's
// block (rows m0.., columns n0..) at Y's rows n0.., columns m0...  Below, M, N, A and W are
// the kernel's (the user's N, M, W and A)""" + ("""; in the fused family L and U likewise (the
// user's U and L), and wc / beta index the kernel's rows, p_N = M of them: the affine applies
// each thread's two rows' values to all its accumulators.""" if FUSED else ".")


def wb_doc(L):
    """The header's line for the writeback staging."""
    if YT:
        what = f"{EPI_COLS} rows (tile columns) x {BM // 2} bf16 (a WG's tile rows) per WG"
    else:
        what = f"{BM} x {EPI_COLS} bf16"
    second = (f"""
//                                   a second buffer (XDBUF): the converters' staging at {L['xstage']} once
//                                   they all left (xdone), the same halves""" if XDBUF else "")
    return f"""//   [{L['wb']:6d} + b*{L['wbuf']}]  writeback staging, {WB_STAGES} buffer{"s" if WB_STAGES > 1 else ""} of {what}, swizzle {epi_swizzle()}
//                                   ({CWG0}'s half at +0, {CWG1}'s at +{L['wbuf'] // 2}){second}"""


def epi_swizzle():
    """The staging's swizzle (and the Y tensor map's: host/sm90a_gemm.c): its rows are
    2 * EPI_COLS bytes, except in the transposed epilogue, whose rows are 64 bf16."""
    return "128B" if YT or EPI_COLS == 64 else "64B"


def transform_protocol_doc(L, stages, ka):
    """The header's barrier protocol and shared-memory map with the W transform."""
    return f"""// Barrier protocol (mbarriers in shared memory; phases tracked by parity bits):
//   full[s]   count 1  producer arrive.expect_tx(stage bytes); TMA complete_tx.  Waited by
//                      transform and consumers.
//   empty[s]  count {CL * (TRANSFORM_WARPS + 8):<2d} one arrive per transform warp (after it read the W chunk pair) and per
//                      consumer warp (after it read its A bytes), each after a fence.proxy.async:
//                      the reads were ld.shared (generic proxy), the refill is a bulk copy (async
//                      proxy).  Waited by the producer.
{tfull_doc()}
//   tempty[t] count 8  one arrive per consumer warp once the wgmma reading slot t completed
//                      (wgmma.wait_group).  Waited by the transform.
//   Named barriers 1 and 2: the 128 threads of {CWG0} / {CWG1} around the writeback staging.
//
// Shared memory map (dynamic, 1024-byte aligned), {stages} main stages:
//   [{L['a']:6d} + s*{L['stage']}]  A fp4     {BM} x {BK//2} B, TMA swizzle 64B   ({BM*BK//2} B)
//   [{L['w']:6d} + s*{L['stage']}]  W fp4     {BN} x {BK//2} B, TMA swizzle 64B   ({BN*BK//2} B)
//   [{L['sfa']:6d} + s*{L['stage']}]  SFA       {ka} atom(s) x 1 row block           ({L['sfa_bytes']} B)
//   [{L['sfw']:6d} + s*{L['stage']}]  SFW       {ka} atom(s) x 2 row blocks          ({L['sfw_bytes']} B)
//   [{L['t']:6d} + t*{L['tslot']}]  W bf16 transform ring, {TSLOTS} slots of {BN} x 64, swizzle 128B
{wb_doc(L)}
//   [{L['bar']:6d}]  mbarriers: full[{stages}], empty[{stages}], tfull[{TSLOTS}], tempty[{TSLOTS}]{f", lfull[{LORA_SLOTS}], lempty[{LORA_SLOTS}]" if FUSED else ""}{f", tfull_hi[{TSLOTS}]" if TSPLIT else ""}{aff_doc(L)}
"""


# Why the W-prepared pair waits and arrives at CTA scope.  The _t pair's waits acquire and its
# remote arrives release at cluster scope; in SASS each such wait is followed by CCTL.IVALL (L1
# invalidated) and each arrive preceded by MEMBAR.ALL.GPU, in the consumers' K loop, twice a
# K stage: the first build of this pair kept them and ran at 0.41-0.44x of cuBLAS bf16, half
# the one-CTA _w kernel's speed (H100, 2026-12-05, 1435ef5).  The pair hands nothing over
# through generic memory: the peer's W bytes are a bulk copy onto the waiter's own mbarrier
# (complete_tx makes them visible to whoever sees the phase complete, as in one CTA), and a
# consumer arrives on the peer's tempty only after wgmma.wait_group saw the wgmmas reading the
# slot complete.  So both are the defaults (acquire / release at CTA scope), as CUTLASS's
# cluster pipelines do.
PAIR_SCOPE_DOC = """// Scope: every wait acquires and every arrive (local or on the peer, by mapa) releases at CTA
// scope: the peer's only writes into this CTA are bulk copies completing on this CTA's own
// mbarriers, and a consumer releases a W slot only after wgmma.wait_group (its reads done)."""

# The transform pair at CTA scope (FP4LR_GEN_EXPERIMENT=tpaircta; built for measurement, not yet
# run on a GPU).  The _t pair's readers of a main stage read it with ld.shared (generic proxy):
# A and SFA by the consumers, W and SFW by the transform warps; rank 0 refills the peer's stage
# with a multicast bulk copy (async proxy), so a release there is a write-after-read across the
# pair.  Every such reader already issues fence.proxy.async.shared::cta after its last read and
# before its arrives (the consumers before releasing A, the transform warps before arriving on
# tfull, which precedes their release of the stage), as in one CTA, where the fence was found
# necessary on the H200.  Across the pair that is the pattern CUTLASS's multicast TMA pipelines
# use: a consumer's release to a producer CTA is a CTA-scope remote arrive.  The known failure
# with CTA scope across a pair (cutlass issue #3643, ../shared/facts/sm100a-tcgen05.md) is a
# read-after-write: a CTA telling its peer that data it saw land is ready, which this pair
# never does (every full barrier is completed by the copy itself, on the reader's own CTA).
TPAIR_SCOPE_DOC = """// Scope (tpaircta): every wait acquires and every arrive releases at CTA scope.  The peer
// writes into this CTA only by rank 0's multicast bulk copies, which complete on this CTA's
// own full barrier; a reader releases a stage after fence.proxy.async (its ld.shared reads
// before the refill's async-proxy writes), and the refill waits for both CTAs' readers."""

# The W-prepared pair's words in the header (wpre_protocol_doc, wpre_roles_doc)
PAIR_RING = """
//   (pair)             tfull[t]'s bytes come from rank 0's one copy, multicast into both CTAs'
//                      slot t; tempty[t] counts the consumer warps of both CTAs (the peer's
//                      arrive by mapa), so neither CTA's slot is still read."""
PAIR_WCOPY = """ (in the
//                       pair rank 0 only, multicast into both CTAs' slot t)"""


def wpre_protocol_doc(L, stages):
    """The header's barrier protocol and shared-memory map of a W-prepared kernel."""
    return f"""// Barrier protocol (mbarriers in shared memory; phases tracked by parity bits):
//   full[s]   count 1  main producer arrive.expect_tx(stage bytes); TMA complete_tx.  Waited
//                      by the consumers.
//   empty[s]  count 8  one arrive per consumer warp (after it read its A bytes and fenced
//                      them with fence.proxy.async: the refill is a bulk copy, async proxy).
//                      Waited by the main producer.
//   tfull[t]  count 1  W producer arrive.expect_tx({L['tslot']}); TMA complete_tx.  Waited by the
//                      consumers (the bulk copy wrote slot t through the async proxy, so no fence).{xself_doc()}
//   tempty[t] count {16 if WPAIR else 8:<2d} one arrive per consumer warp once the wgmma reading slot t completed
//                      (wgmma.wait_group).  Waited by the W producer.{PAIR_RING if WPAIR else ""}{xdone_doc(L)}
//   Named barriers 1 and 2: the 128 threads of {CWG0} / {CWG1} around the writeback staging.
//
// Shared memory map (dynamic, 1024-byte aligned), {stages} main stages:
//   [{L['a']:6d} + s*{L['stage']}]  A fp4     {BM} x {BK//2} B, TMA swizzle 64B   ({BM*BK//2} B)
//   [{L['sfa']:6d} + s*{L['stage']}]  SFA       {FORMATS["nvfp4" if F16 else "mxfp4"][1]} atom(s) x 1 row block           ({L['sfa_bytes']} B)
//   [{L['t']:6d} + t*{L['tslot']}]  W ring, {TSLOTS} slots of {BN} x 64 prepared {"f16" if F16 else "bf16"}, TMA swizzle 128B
{wb_doc(L)}
//   [{L['bar']:6d}]  mbarriers: full[{stages}], empty[{stages}], tfull[{TSLOTS}], tempty[{TSLOTS}]{f", lfull[{LORA_SLOTS}], lempty[{LORA_SLOTS}]" if FUSED else ""}{aff_doc(L)}{xconv_map_doc(L)}
"""


def xself_doc():
    """The first fill's part of the tfull protocol (XSELF_ON kernels)."""
    if not XSELF_ON:
        return ""
    return f"""
//                      xself: phase 0 of tfull[0..{2 * XSELF_KB - 1}] instead comes from consumer thread 0,
//                      after every consumer thread converted its row of the first unit's first
//                      {XSELF_KB} K blocks into those slots, fenced them (fence.proxy.async) and passed
//                      named barrier 4; the W producer skips those K blocks."""


def xdone_doc(L):
    """XDBUF's barrier, in the header's protocol."""
    if not XDBUF:
        return ""
    return f"""
//   xdone     count {XCONV_WARPS}  (at mbarriers + {xdone_off(L)}) one arrive per converter warp when it has no unit left
//                      (its staging then free).  Never waited: when an epilogue starts, each
//                      WG's issuing thread tests phase 0 and writes the result to its WG's word
//                      (+{xdone_off(L) + 8} + 4 wg), which the WG reads after the chunk's barrier: the whole
//                      epilogue then takes chunks 1, 3, .. from the converters' staging (two
//                      buffers, wait_group.read 1) or from the own buffer (one, read 0)."""


def xconv_map_doc(L):
    """The _x kernels' staging blocks, in the header's shared-memory map."""
    if not XCONV:
        return ""
    return (f"\n//   [{L['xstage']:6d} + c*{XCONV_STAGE}]  converter warp c's staging block (32 chunks x 128 B, "
            "16-byte chunk q of row l at q ^ (l % 8))")


def transform_roles_doc(optype):
    """The header's warp roles with the W transform."""
    return f"""// Warp roles ({THREADS} threads, {"four" if TW8 else "three"} warpgroups; registers moved with setmaxnreg):
//   {"WG0, WG1 (8 warps)  transform (" + str(REG_WG0) + " regs, one W row a thread)" if TW8 else "WG0 (4 warps)       transform (" + str(REG_WG0) + " regs)"}: per chunk, converts the W chunk of the
//                       stage (256 rows x 64 fp4) into {optype} times its scale, written K-major
//                       with the 128-byte swizzle into a slot of the transform ring, then
//                       `fence.proxy.async` so the wgmma (async proxy) sees it.
//   {"lane 0 of warp g%" + str(TRANSFORM_WARPS) + "  " if PRODROT else "WG0 thread 0        "}also the producer{" of stage g (every transform warp runs the cursor)" if PRODROT else ""}: per main stage, waits `empty`, arms `full` with
//                       the stage's byte count and issues the four bulk tensor copies
//                       (A, W, SFA, SFW), S-1 stages ahead of the transform.
//   {"WG2, WG3" if TW8 else "WG1, WG2"}            consumers ({REG_CONSUMER} regs): {"WG2" if TW8 else "WG1"} owns tile rows 0-63, {"WG3" if TW8 else "WG2"} rows 64-127.
//                       Each thread loads its A bytes, dequantizes them into the wgmma A
//                       fragment registers and issues {"two m64n128k16 (columns 0-127, 128-255)" if TW8 else "m64n256k16"} RS wgmma on the slot{" (each half after its own tfull)" if TSPLIT else ""}; after
"""


def prepared_roles_doc():
    """The _w kernels' W producer note: W arrives converted."""
    fmt = "nvfp4" if F16 else "mxfp4"
    prep = (f"""{prep_name(fmt, True)} (or
//                       {prep_name(fmt)}) just before this kernel (the same""" if GDWAIT_ON
            else f"""{prep_name(fmt)} (the same""")
    wait = """
//                       The host launches this kernel as the preparation's programmatic dependent:
//                       the thread first waits for that grid (griddepcontrol.wait), so the main
//                       producer's copies and the consumers' first A stages overlap its end.""" if GDWAIT_ON else ""
    return f"""//                       W was converted once per launch by {prep}
//                       values, order and scaling the transform warps of the _t kernels write), so no
//                       thread converts W here.  Every other thread of WG0 and WG1 exits.{wait}
"""


def xconv_roles_doc():
    """The _x kernels' W producer and converter warps, in the header's warp roles."""
    return f"""//                       Before the first chunk of K block kb of N tile nt, unless word 1 of
//                       p_x_flags ("all converted") already held p_x_epoch, it waits until the {upi()}
//                       flags of item kb * tiles_n + nt (p_x_flags + {XHEAD} + 32 item) hold
//                       p_x_epoch (relaxed loads), checks up to {XLOOK - 1} more K blocks of the N tile
//                       without waiting, then fence.acq_rel.gpu and fence.proxy.async.global once
//                       for them all (the converters wrote Wp through the generic proxy).
//   WG0/WG1 warps 2-7   converters ({XCONV_WARPS} warps, {REG_WG0} regs): the launch's W conversion, with the
//                       preparation kernel's code ({prep_name("nvfp4" if F16 else "mxfp4")}).  Item (kb, nt) = W rows
//                       {BN} nt ..+{BN - 1}, K 128 kb ..+127, taken in the host's order p_x_order
//                       (rank -> item; host/sm90a_xorder.h: the order the tile walk first needs
//                       them); unit of rank u = {upi()} i + b: block b of the item of rank i.  Converter
//                       warp c of CTA x takes ranks {XCONV_WARPS}x + c, + {XCONV_WARPS} * gridDim.x, ...: per unit two passes of 16 rows x
//                       2 chunks, one chunk a lane, staged in the warp's 4 KiB and stored as 8
//                       coalesced 512-byte pieces; then every lane fences (fence.proxy.async.global)
//                       and lane 0 stores p_x_epoch to the unit's flag (st.release.gpu) and
//                       counts the unit in word 0 (atom.acq_rel.gpu); the last unit resets the
//                       count and stores p_x_epoch to word 1.  They wait for
//                       nothing, so the W producers' waits always end.  Warp 0 and 1's other
//                       lanes exit.
"""


def halfk_doc():
    """HALFK's line in the header's roles."""
    if not HALFK:
        return ""
    return """
//                       halfk: a chunk wholly past K (K % 128 = 64: the second of the last K
//                       block) exists for nobody: this producer does not copy it, the consumers
//                       neither wait for nor multiply it (their stage ends after chunk 0), and
//                       neither side does the first fill when it would reach that K block."""


def wpre_roles_doc():
    """The header's warp roles of a W-prepared kernel (the W ring filled by bulk copies)."""
    return f"""// Warp roles ({THREADS} threads, four warpgroups; registers moved with setmaxnreg):
//   WG0 thread 0        producer of the main stages: per stage, waits `empty`, arms `full`
//                       with the stage's bytes and issues the A and SFA bulk tensor copies.
//   WG0 thread 32       producer of the W ring: per chunk, waits `tempty[t]`, arms
//                       `tfull[t]` with {BN * CHUNK_K * 2} bytes and issues one bulk tensor copy of
//                       the prepared W chunk ({BN} rows x 64 {"f16" if F16 else "bf16"}, 128-byte swizzle) into slot t{PAIR_WCOPY if WPAIR else ""}.{halfk_doc()}
{xconv_roles_doc() if XCONV else prepared_roles_doc()}//   {CWG0}, {CWG1}            consumers ({REG_CONSUMER} regs): {CWG0} owns tile rows 0-63, {CWG1} rows 64-127.
//                       Each thread loads its A bytes, dequantizes them into the wgmma A
//                       fragment registers and issues {f"one m64n{BN}k16" if WHOLE_N else f"two m64n{BN // 2}k16 (columns 0-{BN // 2 - 1}, {BN // 2}-{BN - 1})"} RS wgmma on the slot; after
"""


def emit_kernel(fmt, family, cluster, stages, tslots=2, wpre=False, xconv=False, yt=False, bn=256):
    global CL, SPLIT, FUSED, BULK, WB_STAGES, TSLOTS, WPRE, XCONV, YT, BN, AFF_SLICE
    assert family in ("dense", "fused") and cluster in (1, 2)
    # the narrow tile: the swapped _x and _w kernels only (their wc / beta slices hold 64 rows,
    # so a slice of 2 x BN fp32 has room for beta at +1024)
    assert bn == 256 or (bn == BN_NARROW and yt and wpre and cluster == 1 and TW8)
    BN = bn
    AFF_SLICE = 2 * BN * 4
    global REG_WG0, REG_CONSUMER
    REG_WG0, REG_CONSUMER = REG_WIDE if BN == 256 else REG_NARROW
    global WHOLE_N
    WHOLE_N = BN == BN_NARROW and "n160one" in EXPERIMENTS
    # W prepared: the 8-warp layout (its consumers are the _t kernels'); the pair (WPAIR) in
    # the plain _w kernels only (no in-kernel conversion, not swapped, 256 wide)
    assert not wpre or (TW8 and not ASSIST)
    assert not (wpre and cluster == 2) or (not xconv and not yt and bn == 256)
    # W converted in the kernel: a W-prepared kernel whose idle warps convert
    assert not xconv or wpre
    # Y transposed: the _x kernels (the swapped plan converts A, the small operand, once inside
    # the kernel) and the _w ones (the swapped plan with w_prep on: A prepared by its own launch)
    assert not yt or wpre
    WPRE = wpre
    global WPAIR
    # The W-prepared pair: A is each CTA's own (main ring local), the prepared W chunk is
    # loaded once by rank 0 and multicast into both CTAs' slot t, so `tempty` counts both
    # CTAs' consumer warps and each CTA's W producer only arms its own `tfull`.
    WPAIR = wpre and cluster == 2
    XCONV = xconv
    YT = yt
    global GDWAIT_ON
    # the _w_yt kernels wait for their preparation launch (nogdwait: a planted fault for
    # tests/test_gemm_swap_wprep.c, the W producer copies Wp at once)
    GDWAIT_ON = WPRE and YT and not XCONV and "nogdwait" not in EXPERIMENTS
    global XSELF_ON
    # the MXFP4 fused _x kernel (not _yt) spills 12 bytes with the first fill (its 56-register
    # warps, ptxas 13.0): it keeps the producer's first chunks there
    # ... and the measurement flags tline / cstag build the 256-wide _x kernels without it
    # (with both, their consumers spill at 200 registers; the narrow ones keep it)
    XSELF_ON = XSELF and xconv and not (fmt == "mxfp4" and family == "fused" and not yt) \
        and not ((TLINE or CSTAG_NS) and bn == 256 and "tlineself" not in EXPERIMENTS)
    global FILLASYNC_ON
    FILLASYNC_ON = FILLASYNC and XSELF_ON and fmt == "nvfp4"
    global FILLDEP_ON
    # the 256-wide fused kernels and MXFP4's 256-wide dense ones spill 4-52 bytes with it
    # (ptxas 13.0; also with two loads batches instead of one): the NVFP4 dense and the
    # narrow kernels
    FILLDEP_ON = FILLDEP and XSELF_ON and (bn == BN_NARROW or (fmt == "nvfp4" and family == "dense"))
    global WALKPRE_ON
    # the NVFP4 fused kernels with the transform (_t, plain) and the swapped ones spill 8-24
    # bytes with it (ptxas 13.0): all but those
    WALKPRE_ON = WALKPRE and not (fmt == "nvfp4" and family == "fused" and cluster == 1 and bn == 256
                                  and (not wpre or yt))
    global SKBULK_ON
    # the MXFP4 fused _yt consumer spills 4 bytes with it (ptxas 13.0, 32-column epilogue
    # chunks): the _x kernels but that one
    SKBULK_ON = SKBULK and xconv and not (fmt == "mxfp4" and family == "fused" and yt) and BN == 256
    # the 256-wide fused _x kernels spill with cstag's predicate (8-12 bytes; the MXFP4 non-_yt
    # one since cstag was written, the others since XDBUF and HALFK; the NVFP4 ones spill
    # without the first fill too, so noxself and tline measure the dense and narrow kernels)
    global CSTAG_ON
    CSTAG_ON = CSTAG_NS and not (family == "fused" and xconv and bn == 256)
    global EPISTG_ON
    # (the MXFP4 fused _x4 kernels, consumers at 192 registers, spill 8 bytes with it)
    EPISTG_ON = EPISTG and xconv and not yt and bn == 256 and not (fmt == "mxfp4" and family == "fused")
    global XPRE_ON
    # MXFP4's converters (two conversion paths at 56 registers) spill with it: NVFP4 only
    XPRE_ON = XPRE and xconv and fmt == "nvfp4"
    global F16
    CL = cluster
    FUSED = family == "fused"
    global LTAIL
    # The fused _w kernels (AUTO's plan for r > 32): a tile's low-rank chunks past the ring
    # come through the W ring, issued by the W producer right after the tile's last W chunk, so
    # they land while the K loop ends instead of one ring round trip each after it
    # (FP4LR_GEN_EXPERIMENT=noltail: through the low-rank ring, as before).
    LTAIL = FUSED and wpre and not xconv and not yt and cluster == 1 and bn == 256 and "noltail" not in EXPERIMENTS
    global EPI_COLS
    global HALFK
    # Only the 256-wide _yt kernels (SANA's): with it, on shapes whose K has no half block,
    # the narrow fused kernel ran 5 % slower (sana-out) and the non-swapped fused _x one 0.9 %
    # (flux-qkv, qwen-fc1; A/B at bb5a5e5+1: ptxas schedules the consumers at their register
    # limit differently); the others lose or gain nothing measurable there.
    # (and the _w_yt kernels, whose p_K gives them K: the same SANA plans, prepared)
    HALFK = wpre and yt and fmt == "nvfp4" and bn == 256 and "nohalfk" not in EXPERIMENTS
    global XDBUF
    XDBUF = FUSED and xconv and BN % 64 == 0 and "noxdbuf" not in EXPERIMENTS
    if XDBUF and fmt == "mxfp4" and not yt:
        # its converters spill 4 bytes at 56 registers with the 64-column epilogue (ptxas
        # 13.0); at 64 / 192 neither role spills
        REG_WG0, REG_CONSUMER = REG_NARROW
    # (the _w_yt kernels keep two: host/budget.c yt_prepared)
    WB_STAGES = 1 if FUSED and ((not xconv and not yt) or XDBUF) else 2
    EPI_COLS = 32 if (FUSED and xconv and not XDBUF) or BN % 64 else 64
    TSLOTS = tslots
    global NAME_TSLOTS
    NAME_TSLOTS = tslots
    if W3WB and xconv and bn == 256 and tslots == 4:
        # w3wb (measurement): the fourth W slot's 32 KiB as two more 64-column writeback
        # buffers (dense 4; fused 3 of its own, without XDBUF's converter staging); the entry
        # keeps its name and shared-memory size (the barrier area loses two mbarriers)
        assert not XSELF_ON or XSELF_KB == 1, "w3wb needs xself1: the first fill takes 2 slots a K block"
        TSLOTS, WB_STAGES = 3, (3 if FUSED else 4)
        XDBUF, EPI_COLS = False, 64
    F16 = fmt == "nvfp4" and "bf16" not in EXPERIMENTS
    # Measured on the H200 (flux-qkv NVFP4): c1 480 TFLOP/s, c2 with both CTAs converting
    # every W row 441, c2 splitting the rows and writing the peer's half with
    # st.shared::cluster 204 (and 349 with the transform skipped: the cross-CTA slot
    # protocol itself costs).  So the committed pair does not split; FP4LR_GEN_C2_SPLIT=1
    # emits the split variant for measurement.  FP4LR_GEN_C2_SPLIT=bulk splits the rows too,
    # but each CTA stores only locally and thread 0 sends its 128 converted rows (16 KiB) to
    # the peer's slot with one cp.async.bulk shared::cta -> shared::cluster per chunk, onto the
    # peer's tfull (expect_tx armed by the peer's thread 0): a measurement variant, not yet run.
    split_mode = os.environ.get("FP4LR_GEN_C2_SPLIT", "")
    SPLIT = cluster == 2 and split_mode in ("1", "bulk")
    BULK = SPLIT and split_mode == "bulk"
    global TSPLIT
    # tsplit needs the 8-warp transform (warps 0-3 own rows 0-127) and one CTA's rows
    TSPLIT = ((fmt == "mxfp4" and "notsplit" not in EXPERIMENTS) or TSPLIT_FORCED) and TW8 \
        and not SPLIT and not ASSIST and not WPRE
    blk, ka, _, _ = FORMATS[fmt]
    L = layout(fmt, stages)
    # the W-prepared pair waits and arrives at CTA scope (PAIR_SCOPE_DOC); the transform pair
    # too with the measurement flag tpaircta (TPAIR_SCOPE_DOC: not yet run on a GPU)
    global PAIR_CTA
    PAIR_CTA = CL == 2 and (WPAIR or ("tpaircta" in EXPERIMENTS and not SPLIT))
    e = Emitter(CL, cluster_scope=False if PAIR_CTA else None)
    header(e, fmt, family, cluster, stages, L)
    name = entry_name(fmt, family, cluster, stages, NAME_TSLOTS, WPRE, XCONV, YT, BN)
    e(""".version 8.0
.target sm_90a
.address_size 64

.extern .shared .align 1024 .b8 smem[];
""")
    if TLINE:
        e(f".visible .global .align 8 .u64 fp4lr_tline[{TLINE_CTAS * TLINE_EVENTS}];\n")
    # the kernel's M x N result C is Y^T in the _yt kernels: Y's map has N rows of M
    ydoc = "{M, N} (Y = C^T: N rows of M)" if YT else "{N, M}"
    # the store's box: one staging buffer's half (a WG's 64 rows by EPI_COLS columns; _yt:
    # EPI_COLS Y rows of 64 columns, 128-byte staging rows)
    ybox = (f"{{64, {EPI_COLS}}}, swizzle 128B" if YT else
            f"{{{EPI_COLS}, 64}}, swizzle {'128B' if EPI_COLS == 64 else '64B'}")
    e(f""".visible .entry {name}(
\t.param .align 128 .b8 p_tmA[128],     // A   UINT8 {{K/2, M}}, box {{64, {BM}}}, swizzle 64B
\t.param .align 128 .b8 p_tmW[128],     {wparam_doc()}
\t.param .align 128 .b8 p_tmSFA[128],   // SFA UINT8 {{256, 2*KA, ceil(M/128)}}, box {{256, {2*ka}, 1}}
\t.param .align 128 .b8 p_tmSFW[128],   // SFW UINT8 {{256, 2*KA, ceil(N/128)}}, box {{256, {2*ka}, 2}}
\t.param .align 128 .b8 p_tmY[128],     // Y   BF16  {ydoc}, box {ybox}
\t.param .u32 p_num_k_stages,          // ceil(K / {BK})
\t.param .f32 p_alpha,
\t.param .u32 p_tiles_m,               // ceil(M / {BM * CL}): cluster tiles
\t.param .u32 p_tiles_n,               // ceil(N / {BN})
\t.param .u32 p_group,                 // tile rows per raster group (>= 1)
{fused_params() if FUSED else ""}{SK_PARAMS.replace("p_sk_epoch ", "p_sk_epoch,", 1) + (x_params().replace("p_x_order ", "p_x_order,", 1) + Y_PARAMS if EPISTG_ON else x_params()) if XCONV else SK_PARAMS.replace("p_sk_epoch ", "p_sk_epoch,", 1) + WYT_PARAMS if YT else SK_PARAMS})
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
    if alpha_folds():
        e("\t.reg .f32 %alpha28;                              // alpha * 2^28 (the epilogue's fold)\n\t.reg .pred %pafold;")
    if SKBULK_ON:
        e("\t.reg .b32 %skph;                                  // skbulk: the partial barrier's phase")
    if XCONV:
        e("""\t.reg .b64 %xflags, %xfa, %xg;                  // _x: item counts, a count's address, a store address
\t.reg .b32 %xepoch, %xv, %xspin, %xN, %xk64, %xu, %xbase, %xitem, %xkb, %xrow0, %xf<8>;
\t.reg .b32 %xrn, %xrk0, %xrk1, %xlim, %xall; // _x W producer: K blocks [xrk0, xrk1) of N tile xrn known converted; all converted
\t.reg .b32 %xt, %xl8, %xsm0, %xsm1, %xj, %xr, %xrl;
\t.reg .pred %px;""")
        if XPRE_ON:
            e("\t.reg .b32 %xw<9>;                          // xpre: pass 1's fp4 words and scales")
        if XSELF_ON:
            e("\t.reg .b32 %cself, %sw<32>, %ss<4>;         // xself: the first unit still to fill; the fill's loads")
            if FILLDEP_ON:
                e("\t.reg .b32 %sdep;                              // xself: every load of the fill, xor-ed")
                e("\t.reg .pred %pself;")
    if TSPLIT:
        e("\t.reg .b32 %bar_tfullhi, %bar_tfullw;         // tsplit: tfull_hi base; a transform warp's tfull")
    if CHOIST:
        e("\t.reg .b32 %caoff0, %cdesc0;          // choist: chunk 0's A offset, slot 0's descriptor start")
    if MXONE and fmt == "mxfp4":
        e("\t.reg .b32 %mxt, %mxt2;\n\t.reg .pred %pmx;         // mxone: scale bytes, the warp's path")
    if PRODROT:
        e("\t.reg .b32 %pgs;                              // prodrot: stages issued so far (who issues the next)")
    if ASSIST:
        e("\t.reg .b32 %ca<6>;                         // consumer assist: addresses, slot base")
    if FUSED:
        e("""\t.reg .b64 %tmL, %tmU, %wcp, %betap;
\t.reg .b32 %bar_lfull, %bar_lempty, %lbase, %lchunks, %lslots, %lsub, %lksteps, %lbytes_l, %lbytes_u;
\t.reg .b32 %lsub_l, %lsub_u, %lrowb, %ldeschi, %lwk, %ncols, %ls, %lph, %li, %lis, %liph;
\t.reg .pred %pwc, %pbeta, %plissue;""")
        if XDBUF:
            e("\t.reg .pred %pxd;                           // XDBUF: the epilogue's buffers")
    e(f"""{setup_addresses(L, stages)}
{tsplit_setup(L) if TSPLIT else ""}{fused_setup(L, stages) if FUSED else ""}\tsetp.eq.u32 %ptrue, 0, 0;
{cluster_setup()}\t// ---- barrier init (thread 0), made visible to the async proxy, then {"a cluster" if CL == 2 else "one CTA"} barrier ----
\tsetp.ne.u32 %p0, %thr, 0;
\t@%p0 bra L_init_done;""")
    tline(e, 0, 0)
    if SKBULK_ON:
        assert L['xstage'] >= L['bar'] + 8 * (L['nbar'] + 1) and TSLOTS * L['tslot'] == SK_SLOT
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_full+{8 * L['nbar']}], 1;   // skbulk: a peer's partial landed")
    for i in range(stages):
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_full+{8*i}], 1;")
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_empty+{8*i}], {(1 if WPRE else CL) * ((0 if WPRE else TRANSFORM_WARPS) + 8)};")
    for i in range(LORA_SLOTS if FUSED else 0):
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_lfull+{8*i}], 1;")
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_lempty+{8*i}], {8 * CL};")
    for i in range(TSLOTS):
        if TSPLIT:
            e(f"\tmbarrier.init.shared::cta.b64 [%bar_tfull+{8*i}], {TRANSFORM_WARPS // 2};")
            e(f"\tmbarrier.init.shared::cta.b64 [%bar_tfullhi+{8*i}], {TRANSFORM_WARPS // 2};")
        elif WPRE:
            e(f"\tmbarrier.init.shared::cta.b64 [%bar_tfull+{8*i}], 1;")
        else:
            e(f"\tmbarrier.init.shared::cta.b64 [%bar_tfull+{8*i}], {(2 if SPLIT and not BULK else 1) * TRANSFORM_WARPS + (8 if ASSIST else 0)};")
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_tempty+{8*i}], {(2 if SPLIT or WPAIR else 1) * 8};")
    if XDBUF:
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_full+{xdone_off(L)}], {XCONV_WARPS};   // xdone: the converters left")
    sync = ("""\tbarrier.cluster.arrive.release.aligned;      // both CTAs' barriers initialised
\tbarrier.cluster.wait.acquire.aligned;""" if CL == 2 else "\tbar.sync 0;")
    e(f"""\tfence.mbarrier_init.release.cluster;
\tfence.proxy.async.shared::cta;
L_init_done:
{sync}

\t{"setp.ge.u32 %p0, %wg, 2" if TW8 else "setp.ne.u32 %p0, %wg, 0"};
\t@%p0 bra L_consumer;
""")
    e(f"""\t// {"WG0 and WG1 give" if TW8 else "WG0 gives"} registers back (all {"eight" if TW8 else "four"} warps execute the same setmaxnreg)
\tsetmaxnreg.dec.sync.aligned.u32 {REG_WG0};""")
    emit_tile_coords_doc(e)
    (emit_wpre_producers if WPRE else emit_transform)(e, fmt, stages, L)
    emit_consumer(e, fmt, stages, L)
    e("}")
    return "\n".join(e.lines) + "\n"


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
\tadd.u32 %bar_tempty, %bar_tfull, {8 * TSLOTS};"""


def cluster_setup():
    """Tile walk and cluster identity.  A cluster of two computes vertically adjacent
    128-row halves of a 256-row tile: rank v owns rows 128v..128v+127."""
    if CL == 1:
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


def aff_doc(L):
    if not FUSED:
        return ""
    what = "wc of its rows m0 + 64g + i at +4i" if YT else f"wc[n0..n0+{BN - 1}] at +0"
    return f"""
//   [{L['aff']:6d} + g*{AFF_SLICE}]  wc / beta slices of consumer WG g: {what}, beta at +1024 (fp32)"""


def lora_doc(L):
    if not FUSED:
        return ""
    return f"""
//   [{L['lora']:6d}]  low-rank ring at {L['lora']}: slots x (128 + {BN}) x rc x 2 bytes, set by the host"""


def wc_what():
    """What a WG's wc / beta slice holds (fused_doc)."""
    return "its 64 rows' values (Y transposed: wc / beta index the kernel's rows)" if YT else f"the tile's {BN} columns"


def wc_who():
    return "lane 0 of each row's four threads: rows r and r + 8" if YT else "thread t: columns 2t, 2t+1"


def fused_doc():
    pair_note = (" (both CTAs'\n//                      warps arrive on both CTAs' lempty, as for `empty`)" if CL == 2 and not WPAIR
                 else " (both CTAs'\n//                      warps arrive on both CTAs' lempty, as on `tempty`)" if WPAIR else "")
    pair_u = ("\n// Pair: each CTA loads its own L rows; rank 0 multicasts the U box to both CTAs (each\n"
              "// still holds a full 256-row U tile: nothing is split on Hopper), like W; rank 1's lfull\n"
              "// is armed by its own issuer with the L + U bytes and receives U from rank 0 (the bytes\n"
              "// may land before the arm: the phase still waits for its one arrival).  Why reuse is\n"
              "// safe: a warp's arrival for lap n+1 of a slot needs that lap's lfull, which needs rank\n"
              "// 0's U, which rank 0 issues only after lempty lap n completed on rank 0; so no phase n of\n"
              "// either CTA's lempty can complete without all 16 lap-n arrivals (reviewed, not yet run).\n"
              "// Cost: the issuer's wait at a tile start now also waits for the peer's low-rank phase.") if CL == 2 else ""
    if not FUSED:
        return "// Family: dense (no low-rank, no affine)."
    return f"""// Family: fused, the whole operator in OPERATOR.md section 1's order:
//     Y = bf16_rne( wc[n] * (alpha * main) + beta[n] + L . U^T )
// After the K loop each consumer thread applies alpha, wc and beta to its accumulators in
// fp32, then accumulates the low-rank
// term onto the same registers with SS wgmma (L from the slot rows of its warpgroup, U all
// {BN} rows), then the usual epilogue.  Low-rank ring (after the barriers, its slot size set at
// run time from the rank chunk rc): slot = L box(es) 128 x rc bf16, then U {BN} x rc bf16,
// one box per chunk (the host caps rc at 64), 2*rc-byte rows with the matching
// 32/64/128-byte swizzle.
//   lfull[j]  count 1  thread 0 of {CWG0} arms it with the chunk's bytes; TMA complete_tx.
//   lempty[j] count {8 * CL:<2d} one arrive per consumer warp after its low-rank wgmmas of the slot{pair_note}.
{lora_stream_doc()}
// wc and beta: when a unit starts a tile, each consumer WG copies {wc_what()} of
// both into its own slice ({wc_who()}; cp.async, zero past {"M" if YT else "N"}; 1 and 0 written
// when absent), so the affine after the K loop reads shared memory (cp.async.wait_group, then
// the WG's named barrier) instead of waiting on global loads at the tile's end (measured:
// those loads cost the fused kernel 5 % at K = 3072).  The epilogue's first WG barrier
// orders the last read before the next tile's copy.{pair_u}"""


def lora_stream_doc():
    """fused_doc: where the chunks past the low-rank ring come from."""
    if LTAIL:
        return """// Thread 0 of {0} requests a tile's first chunks (those the ring holds) when the tile
// starts; they land during the K loop.  The chunks past the ring come through the W ring
// (ltail): the W producer (thread 32), after the last W chunk of a unit that starts its tile,
// loads each into the next W slot (L boxes, U boxes after them; tfull armed with the chunk's
// bytes), so they land while the K loop ends; the consumers read them after the ring's
// chunks and free each slot on tempty, like a W chunk.  Producer and consumers agree on the
// count: chunks lslots .. lchunks-1 of every unit with kb = 0 (the one that finishes its tile).""".format(CWG0)
    return f"""// Thread 0 of {CWG0} requests a tile's first chunks when the tile starts (they land during the
// K loop) and each later chunk as soon as a slot frees (ranks beyond the ring stream)."""


def cluster_doc():
    if CL == 1:
        return f"// Cluster: none (one CTA per {BM}x{BN} tile)."
    if WPAIR:
        return f"""// Cluster of two: the pair computes a 256x256 tile, rank v rows 128v..128v+127.  Each CTA
// loads its own A and SFA (main ring local to the CTA); rank 0 loads each prepared W chunk
// once and multicasts it into both CTAs' W slot, so the W ring's `tempty` counts both CTAs'
// consumer warps.  In the fused family rank 0 multicasts U too (`lempty` counts both).
{PAIR_SCOPE_DOC}"""
    if not SPLIT:
        return """// Cluster of two: the pair computes a 256x256 tile, rank v rows 128v..128v+127.  Rank 0
// loads W and SFW once and multicasts them to both CTAs; each CTA converts all of W for
// its own wgmma.  `empty` counts the readers of both CTAs (rank 0 refills the peer).""" + (
            "\n" + TPAIR_SCOPE_DOC if PAIR_CTA else "")
    if BULK:
        return """// Cluster of two, split transform with a bulk copy: rank v converts W rows 128v..128v+127
// into its own slot, then thread 0 copies those 16 KiB into the peer's slot (cp.async.bulk
// shared::cta -> shared::cluster) onto the peer's tfull; tempty counts both CTAs' consumer warps."""
    return """// Cluster of two, split transform: as above, but rank v converts W rows 128v..128v+127
// and writes them into both CTAs' slots; tfull / tempty count both CTAs' warps."""


def arrive(e, pred, addr, remote_tmp, remote=True):
    """One arrive on a local barrier; in a cluster (when `remote`) also on the peer's
    barrier at the same offset (mapa), with cluster-scope release (PAIR_CTA, the W-prepared
    pair and the tpaircta transform pair: the default release at CTA scope, PAIR_SCOPE_DOC /
    TPAIR_SCOPE_DOC)."""
    if CL == 1 or not remote:
        e(f"\t@{pred} mbarrier.arrive.shared::cta.b64 _, [{addr}];")
    elif PAIR_CTA:
        e(f"""\t@{pred} mbarrier.arrive.shared::cta.b64 _, [{addr}];
\tmapa.shared::cluster.u32 {remote_tmp}, {addr}, %peer;
\t@{pred} mbarrier.arrive.shared::cluster.b64 _, [{remote_tmp}];""")
    else:
        e(f"""\t@{pred} mbarrier.arrive.release.cluster.shared::cta.b64 _, [{addr}];
\tmapa.shared::cluster.u32 {remote_tmp}, {addr}, %peer;
\t@{pred} mbarrier.arrive.release.cluster.shared::cluster.b64 _, [{remote_tmp}];""")


def emit_tile_coords_doc(e):
    walk = "%clusterid.x, += %nclusterid.x (both\n\t// CTAs of the pair)" if CL == 2 else "blockIdx.x, += gridDim.x"
    e(f"""\t// Every role walks the same tile sequence: tile = {walk}.  The grouped
\t// raster maps a linear tile index to (m tile, n tile): groups of `group` tile rows, inside
\t// a group n-major so consecutive CTAs share the same W tile (and A rows stay in L2).""")


def tile_coords(e, tile="%tile", m0="%m0", n0="%n0"):
    """tile index -> m0 (row of the tile's first output), n0 (column)."""
    e(f"""\t// tile coordinates (grouped raster)
{ptxgen.grouped_raster(tile)}\tmul.lo.u32 {m0}, %r5, {BM * CL};
\tadd.u32 {m0}, {m0}, %mrank;                // this CTA's rows of the cluster tile
\tmul.lo.u32 {n0}, %r6, {BN};""")


def sk_consts(e):
    """The stream-K walk's constants, recomputed where a unit boundary needs them (so
    that none stays live through the K loop, and with no division): the data-parallel tile
    count %skdp and this cluster's slice [%skit0, %skit1) of the split tiles' T = (ntiles -
    skdp) * nks K iterations: q = p_sk_q each, one more for the first r = p_sk_r clusters,
    so slice b starts at b*q + min(b, r).  Clipped to T whatever the parameters say.  A
    launch without a workspace (p_sk_ws = 0) walks every tile whole."""
    e("""\tld.param.u64 %skws, [p_sk_ws];
\tld.param.u32 %skdp, [p_sk_dp_tiles];
\tsetp.eq.u64 %psk, %skws, 0;
\t@%psk mov.u32 %skdp, %ntiles;              // no workspace: no split tiles
\tmin.u32 %skdp, %skdp, %ntiles;
\tsub.u32 %skT, %ntiles, %skdp;
\tmul.lo.u32 %skT, %skT, %nks;               // T: K iterations of the split tiles
\tld.param.u32 %skit1, [p_sk_q];
\tld.param.u32 %skit, [p_sk_r];
\tmin.u32 %skit0, %tile0, %skit;
\tmad.lo.u32 %skit0, %tile0, %skit1, %skit0;     // b*q + min(b, r)
\tsetp.lt.u32 %psk, %tile0, %skit;
\tadd.u32 %skit1, %skit1, %skit0;
\t@%psk add.u32 %skit1, %skit1, 1;            // + q (+ 1 for the first r)
\tmin.u32 %skit0, %skit0, %skT;
\tmin.u32 %skit1, %skit1, %skT;""")


def unit_first(e, c, tag):
    """The first work unit of cursor c (dict of register names tile, kb, ke)."""
    e(f"""\t// ---- first work unit: data-parallel tile %tile0, or the start of the split range ----
\tmov.u32 {c['tile']}, %tile0;
\tmov.u32 {c['kb']}, 0;
\tmov.u32 {c['ke']}, %nks;""")
    sk_consts(e)
    e(f"""\tsetp.lt.u32 %psk, {c['tile']}, %skdp;
\t@%psk bra L_unit_done_{tag};
\tmov.u32 %skit, %skit0;
\tbra L_unit_sk_{tag};""")
    unit_split(e, c, tag)


def unit_bounds(e, c):
    """kb and ke of the unit at tile c['tile'] again, from the tile alone (so that they need
    not stay live through the K loop): 0 and nks for a data-parallel tile; for a split tile
    with first iteration base = (tile - skdp)*nks, this cluster's range clipped to the tile.
    Needs sk_consts."""
    lab = e.label("unit_bounds")
    e(f"""\tmov.u32 {c['kb']}, 0;
\tmov.u32 {c['ke']}, %nks;
\tsetp.lt.u32 %psk, {c['tile']}, %skdp;
\t@%psk bra {lab};
\tsub.u32 %skit, {c['tile']}, %skdp;
\tmul.lo.u32 %skit, %skit, %nks;             // the tile's first split iteration
\tmax.u32 {c['kb']}, %skit0, %skit;
\tsub.u32 {c['kb']}, {c['kb']}, %skit;
\tadd.u32 {c['ke']}, %skit, %nks;
\tmin.u32 {c['ke']}, {c['ke']}, %skit1;
\tsub.u32 {c['ke']}, {c['ke']}, %skit;
{lab}:""")


def unit_next(e, c, tag, bounds=False):
    """Advance cursor c to its next work unit; tile = ntiles when none is left.
    Units: the data-parallel tiles b, b+G, ... below %skdp (K 0..nks), then this cluster's
    slice [%skit0, %skit1) of the split tiles' K iterations, one unit per tile it touches
    (the unit after one ending at stage ke of split tile t starts at iteration
    (t - skdp)*nks + ke)."""
    e("\t// ---- next work unit ----")
    sk_consts(e)
    if bounds:
        unit_bounds(e, c)
    e(f"""\tsetp.lt.u32 %psk, {c['tile']}, %skdp;
\t@!%psk bra L_unit_skadv_{tag};
\tadd.u32 {c['tile']}, {c['tile']}, %tstride;     // next data-parallel tile
\tsetp.lt.u32 %psk, {c['tile']}, %skdp;
\t@%psk bra L_unit_done_{tag};
\tmov.u32 %skit, %skit0;                     // data-parallel tiles done: the split range
\tbra L_unit_sk_{tag};
L_unit_skadv_{tag}:
\tsub.u32 %skit, {c['tile']}, %skdp;
\tmad.lo.u32 %skit, %skit, %nks, {c['ke']};""")
    unit_split(e, c, tag)


def unit_split(e, c, tag):
    """The split unit at iteration %skit: tile skdp + it/nks, K from it%nks to the tile's
    end or the end of the range, whichever is first."""
    e(f"""L_unit_sk_{tag}:
\tsetp.ge.u32 %psk, %skit, %skit1;
\t@%psk mov.u32 {c['tile']}, %ntiles;          // range done: no unit left
\t@%psk bra L_unit_done_{tag};
\tdiv.u32 {c['tile']}, %skit, %nks;
\tmul.lo.u32 {c['kb']}, {c['tile']}, %nks;
\tsub.u32 {c['kb']}, %skit, {c['kb']};          // first K stage of the unit
\tadd.u32 {c['tile']}, {c['tile']}, %skdp;
\tsub.u32 {c['ke']}, %skit1, %skit;
\tadd.u32 {c['ke']}, {c['ke']}, {c['kb']};
\tmin.u32 {c['ke']}, {c['ke']}, %nks;              // one past its last K stage
L_unit_done_{tag}:""")


CUR = dict(tile="%tile", kb="%kb", ke="%ke")      # transform and consumers
NCUR = dict(tile="%ntl", kb="%nkb", ke="%nke")    # the consumers' next unit (walkpre)
PCUR = dict(tile="%ptile", kb="%pkb", ke="%pke")  # the producer (thread 0)


def producer_unit_start(e):
    """The producer's cursor at a new unit: K coordinate = its first stage, tile origin
    (the unit's bounds are recomputed at every stage, so none of them stays live)."""
    e("\tmov.u32 %pks, %pkb;")
    tile_coords(e, "%ptile", "%pcm0", "%pcn0")


def produce_next(e, fmt, stages, L, tag):
    """Thread 0 of WG0 issues the next main stage of its own cursor (%ptile, %pks,
    ring slot %ps, parity %pph), if any is left: wait `empty`, arm `full` with the
    stage's bytes, four bulk tensor copies."""
    blk, ka, _, _ = FORMATS[fmt]
    if PRODROT:
        e(f"""\t// ---- producer step ({tag}): every transform warp advances the cursor; lane 0 of
\t// warp (stages issued % {TRANSFORM_WARPS}) issues the stage ----
\tsetp.ge.u32 %p5, %ptile, %ntiles;
\t@%p5 bra L_prod_skip_{tag};
\tand.b32 %r10, %pgs, {TRANSFORM_WARPS - 1};
\tsetp.ne.u32 %p5, %r10, %warp;
\tsetp.ne.or.u32 %p5, %lane, 0, %p5;
\t@%p5 bra L_prod_issued_{tag};""")
    else:
        e(f"""\t// ---- producer step ({tag}): thread 0 issues the next stage of its cursor ----
\t@!%pthr0 bra L_prod_skip_{tag};
\tsetp.ge.u32 %p5, %ptile, %ntiles;
\t@%p5 bra L_prod_skip_{tag};""")
    e(f"""\tmul.lo.u32 %r10, %ps, 8;
\tadd.u32 %r11, %bar_empty, %r10;
\txor.b32 %r12, %pph, 1;                     // first lap passes""")
    e.wait("%r11", "%r12", "empty")
    e(f"""\tadd.u32 %r13, %bar_full, %r10;
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r13], {L['stage']};
\tmad.lo.u32 %r14, %ps, {L['stage']}, %sbase;  // stage base
\tshl.b32 %r15, %pks, 6;                     // K byte coordinate = ks * 64
\tmul.lo.u32 %r16, %pks, {2 * ka};             // SF half-atom coordinate
\tshr.u32 %r8, %pcm0, 7;                      // SFA row block
\tshr.u32 %r9, %pcn0, 7;                      // SFW row block
\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r14], [%tmA, {{%r15, %pcm0}}], [%r13];
\tadd.u32 %r17, %r14, {L['sfa']};
\tcp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r17], [%tmSFA, {{0, %r16, %r8}}], [%r13];""")
    if CL == 1:
        e(f"""\tadd.u32 %r17, %r14, {L['w']};
\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r17], [%tmW, {{%r15, %pcn0}}], [%r13];
\tadd.u32 %r17, %r14, {L['sfw']};
\tcp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r17], [%tmSFW, {{0, %r16, %r9}}], [%r13];""")
    else:
        e(f"""\t// W and SFW: loaded once per pair by rank 0 and multicast to both CTAs (same
\t// offsets; each CTA's `full` receives the bytes).  Rank 0's `empty` counts both
\t// CTAs' readers, so the peer's stage is free too.
\t@!%prank0 bra L_prod_nomc_{tag};
\tadd.u32 %r17, %r14, {L['w']};
\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r17], [%tmW, {{%r15, %pcn0}}], [%r13], %mask;
\tadd.u32 %r17, %r14, {L['sfw']};
\tcp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r17], [%tmSFW, {{0, %r16, %r9}}], [%r13], %mask;
L_prod_nomc_{tag}:""")
    if PRODROT:
        # %pke stays the unit's end: set by unit_first / unit_split, and every
        # data-parallel tile (the only units unit_next leaves it alone for) ends at nks
        e(f"L_prod_issued_{tag}:")
        advance(e, "%ps", "%pph", stages)
        e("\tadd.u32 %pks, %pks, 1;\n\tadd.u32 %pgs, %pgs, 1;")
    else:
        advance(e, "%ps", "%pph", stages)
        e("\tadd.u32 %pks, %pks, 1;")
        sk_consts(e)
        unit_bounds(e, PCUR)
    e(f"""\tsetp.lt.u32 %p5, %pks, %pke;
\t@%p5 bra L_prod_skip_{tag};""")
    unit_next(e, PCUR, f"p{tag}")
    producer_unit_start(e)
    e(f"L_prod_skip_{tag}:")


def emit_lut_setup(e):
    if PLACED:
        if not F16:
            e("\tmov.b32 %bfx126, 0x7E807E80;                // bf16x2 (2^126, 2^126)")
        return
    if F16:
        e("""\t// e2m1 -> f16 high bytes (magnitudes 0..7 = 0, .5, 1, 1.5, 2, 3, 4, 6: 00 38 3C 3E 40 42 44 46);
\t// the low byte of every e2m1 value in f16 is zero.
\tmov.b32 %lut0, 0x3E3C3800;
\tmov.b32 %lut1, 0x46444240;""")
        return
    e("""\t// e2m1 -> bf16 byte-permute tables (magnitudes 0..7 = 0, .5, 1, 1.5, 2, 3, 4, 6):
\t// low bytes of the bf16 patterns 0000 3F00 3F80 3FC0 4000 4040 4080 40C0, and high bytes.
\tmov.b32 %lut0, 0xC0800000;
\tmov.b32 %lut1, 0xC0804000;
\tmov.b32 %luth0, 0x3F3F3F00;
\tmov.b32 %luth1, 0x40404040;""")


def fp4x8_to_bf16(e, w, outs, tmp):
    """8 e2m1 codes in word `w` (element i in nibble i) -> 4 bf16x2 words `outs`
    (outs[p] = elements 2p, 2p+1).  17 instructions; exact."""
    m, s, mh, lo, hi, sg = tmp[:6]
    e(f"""\tand.b32 {m}, {w}, 0x77777777;               // magnitudes
\tand.b32 {s}, {w}, 0x88888888;               // signs
\tprmt.b32 {lo}, %lut0, %lut1, {m};           // low bytes, elements 0..3
\tprmt.b32 {hi}, %luth0, %luth1, {m};         // high bytes, elements 0..3
\tshr.u32 {sg}, {s}, 3;
\tprmt.b32 {sg}, 0x00008000, 0, {sg};         // 0x00 / 0x80 sign bytes, elements 0..3
\tor.b32 {hi}, {hi}, {sg};
\tprmt.b32 {outs[0]}, {lo}, {hi}, 0x5140;
\tprmt.b32 {outs[1]}, {lo}, {hi}, 0x7362;
\tshr.u32 {mh}, {m}, 16;
\tprmt.b32 {lo}, %lut0, %lut1, {mh};          // elements 4..7
\tprmt.b32 {hi}, %luth0, %luth1, {mh};
\tshr.u32 {sg}, {s}, 19;
\tprmt.b32 {sg}, 0x00008000, 0, {sg};
\tor.b32 {hi}, {hi}, {sg};
\tprmt.b32 {outs[2]}, {lo}, {hi}, 0x5140;
\tprmt.b32 {outs[3]}, {lo}, {hi}, 0x7362;""")


def fp4x8_to_f16(e, w, outs, tmp):
    """8 e2m1 codes in word `w` (element i in nibble i) -> 4 f16x2 words `outs`
    (outs[p] = elements 2p, 2p+1).  15 instructions; exact."""
    m, s, mh, hi, sg = tmp[:5]
    e(f"""\tand.b32 {m}, {w}, 0x77777777;               // magnitudes
\tand.b32 {s}, {w}, 0x88888888;               // signs
\tprmt.b32 {hi}, %lut0, %lut1, {m};           // f16 high bytes, elements 0..3
\tshr.u32 {sg}, {s}, 3;
\tprmt.b32 {sg}, 0x00008000, 0, {sg};         // 0x00 / 0x80 sign bytes, elements 0..3
\tor.b32 {hi}, {hi}, {sg};
\tprmt.b32 {outs[0]}, {hi}, 0, 0x1404;        // (0, hi0, 0, hi1): elements 0, 1
\tprmt.b32 {outs[1]}, {hi}, 0, 0x3424;        // elements 2, 3
\tshr.u32 {mh}, {m}, 16;
\tprmt.b32 {hi}, %lut0, %lut1, {mh};          // elements 4..7
\tshr.u32 {sg}, {s}, 19;
\tprmt.b32 {sg}, 0x00008000, 0, {sg};
\tor.b32 {hi}, {hi}, {sg};
\tprmt.b32 {outs[2]}, {hi}, 0, 0x1404;
\tprmt.b32 {outs[3]}, {hi}, 0, 0x3424;""")


def shift_left(e, dst, src, k, why):
    """dst = src << k: a left shift as an integer multiply (IMAD, the FMA pipe), a right
    shift (k < 0) as a shift (the ALU pipe: mul.hi's IMAD.HI made NVFP4 12 % slower)."""
    if k >= 0:
        e(f"\tmul.lo.u32 {dst}, {src}, {1 << k};{' ' * (12 - len(str(1 << k)))}// {why}")
    else:
        e(f"\tshr.u32 {dst}, {src}, {-k};{' ' * (12 - len(str(-k)))}// {why}")


def fp4x8_to_placed(e, w, outs, tmp, undo=True):
    """8 e2m1 codes in word `w` -> 4 f16x2 (F16) or bf16x2 words `outs`, outs[a] = (element a,
    element a+4), by bit placement: the sign bit to bit 15 and the 3 magnitude bits (e1 e0 m)
    to the exponent/mantissa boundary, bits 9-11 in f16 and 6-8 in bf16, which IS the pattern
    of (e2m1 value) * 2^-14 (f16) or * 2^-126 (bf16); code 001 lands on the subnormal half
    unit.  Pairing a with a+4 puts both elements of an output at the same shift (nibbles 16
    bits apart).
    In a nibble the sign is 3 bits above the magnitude's low bit; in the output it is D = 6
    (f16) or 9 (bf16) bits above.  Two selects (lop3, mask c: (a & c) | (b & ~c)) build words
    in which the sign of every element an output needs already sits D bits above its
    magnitude, each serving two outputs:
      f16:  zE = sel(w, w << 3, 0x07070707)   nibbles 0, 2, 4, 6: magnitude in place, sign
                                               3 bits up (bits 6, 14, 22, 30)
            zO = sel(w >> 3, w, 0x0E0E0E0E)   nibbles 1, 3, 5, 7: magnitude 3 bits down,
                                               sign in place (bits 7, 15, 23, 31)
            out0 = (zE << 9) & M, out2 = (zE << 1) & M, out1 = (zO << 8) & M, out3 = zO & M
      bf16: z01 = sel(w, w << 6, 0x00770077)  nibbles 0, 1, 4, 5 (signs 6 bits up)
            z23 = sel(w >> 6, w, 0x01DC01DC)  nibbles 2, 3, 6, 7 (magnitudes 6 bits down)
            out0 = (z01 << 6) & M, out1 = (z01 << 2) & M, out2 = (z23 << 4) & M, out3 = z23 & M
    with M = magnitude | sign bits of both halves: 11 operations a word (6 lop3 on the ALU
    pipe, the left shifts as integer multiplies on the FMA pipe, one right shift), against
    17 for one shift pair and two masks per output.  Bits outside an output's mask may hold
    anything: the masks keep exactly the bits the selects placed (tests/placed_conversion.py
    runs this sequence through a small PTX interpreter against the e2m1 definition).
    f16: the scale multiply that follows leaves products * 2^-14 (exact: the smallest,
    0.5 * 2^-9 * 2^-14 = 2^-24, is the f16 subnormal unit) and the accumulators are multiplied
    by 2^28 before alpha (unscale).  bf16: one multiply by 2^126 makes the exact value (ue8m0
    scales would underflow the 2^-126 otherwise)."""
    zlo, zhi = tmp[0], tmp[1]
    if F16:
        m = 0x8E008E00
        plan = [(zlo, "w", 3, 0x07070707, "nibbles 0 2 4 6: sign 3 bits up"),
                (zhi, "w", -3, 0x0E0E0E0E, "nibbles 1 3 5 7: magnitude 3 bits down")]
        outs_from = [(zlo, 9), (zhi, 8), (zlo, 1), (zhi, 0)]
        unit = "2^-14"
    else:
        m = 0x81C081C0
        plan = [(zlo, "w", 6, 0x00770077, "nibbles 0 1 4 5: sign 6 bits up"),
                (zhi, "w", -6, 0x01DC01DC, "nibbles 2 3 6 7: magnitude 6 bits down")]
        outs_from = [(zlo, 6), (zlo, 2), (zhi, 4), (zhi, 0)]
        unit = "2^-126"
    for z, _, k, c, why in plan:
        shift_left(e, z, w, k, "shifted copy")
        if k > 0:   # sel(w, w << k, c): c's bits from w
            e(f"\tlop3.b32 {z}, {w}, {z}, 0x{c:08X}, 0xE4;    // {why}")
        else:       # sel(w >> k, w, c): c's bits from the shifted copy
            e(f"\tlop3.b32 {z}, {z}, {w}, 0x{c:08X}, 0xE4;    // {why}")
    for a, (z, k) in enumerate(outs_from):
        if k:
            shift_left(e, outs[a], z, k, f"element {a}, element {a + 4}")
            e(f"\tand.b32 {outs[a]}, {outs[a]}, 0x{m:08X};      // (element {a}, element {a + 4}) * {unit}")
        else:
            e(f"\tand.b32 {outs[a]}, {z}, 0x{m:08X};      // (element {a}, element {a + 4}) * {unit}")
        if not F16 and undo:
            e(f"\tmul.rn.bf16x2 {outs[a]}, {outs[a]}, %bfx126;   // * 2^126: exact")


def unscale(i):
    """The multiply by 2^28 that undoes the placed f16 operands' 2^-14 * 2^-14 on accumulator
    i, before alpha (exact: a power of two on sums of products of at least 2^-48)."""
    if F16 and PLACED:
        return f"\tmul.f32 %acc{i}, %acc{i}, 0f4D800000;          // * 2^28 (placed f16 operands)\n"
    return ""


# NVFP4 (f16 placed operands): the accumulators hold sum * 2^-28, so alpha * (acc * 2^28) is two
# multiplies an accumulator.  alpha * 2^28 is exact whenever it is finite (|alpha| < 2^100):
# then (alpha * 2^28) * acc is the same real number as alpha * (acc * 2^28) and rounds to the
# same fp32, so one multiply by it gives the same bits.  The epilogue and the affine test it
# once (alpha_fold_begin) and take the two-multiply code otherwise (alpha >= 2^100, inf, NaN).
def alpha_folds():
    """Whether this kernel's accumulators carry 2^-28 (then the alpha fold applies)."""
    return F16 and PLACED


def alpha_fold_begin(e, tag):
    """%alpha28 = alpha * 2^28; branch to L_{tag}_slow unless it is finite (every thread
    takes the same path: alpha is a parameter)."""
    e(f"""\t// alpha * 2^28 once: exact while finite, then one multiply an accumulator gives the
\t// bits of alpha * (acc * 2^28); otherwise (|alpha| >= 2^100, inf, NaN) the two multiplies
\tmul.f32 %alpha28, %alpha, 0f4D800000;
\ttestp.finite.f32 %pafold, %alpha28;
\t@!%pafold bra L_{tag}_slow;""")


def alpha_mul(i, dst, folded):
    """dst = alpha * (acc_i * 2^28) (NVFP4) / alpha * acc_i: folded uses %alpha28."""
    if folded:
        return f"\tmul.f32 {dst}, %acc{i}, %alpha28;\n"
    return f"{unscale(i)}\tmul.f32 {dst}, %acc{i}, %alpha;\n"


def alpha_paths(e, tag, body):
    """body(folded) emitted twice behind alpha_fold_begin where the fold applies, else once."""
    if not alpha_folds():
        body(False)
        return
    alpha_fold_begin(e, tag)
    body(True)
    e(f"\tbra L_{tag}_done;\nL_{tag}_slow:")
    body(False)
    e(f"L_{tag}_done:")


def fp4x8_to(e, w, outs, tmp, undo=True):
    """The operand type's conversion: f16 (F16) or bf16 (undo=False, mxone's fast path: the
    bf16 placement's 2^-126 is left for the scale, 2^(E-1), to undo)."""
    if PLACED:
        fp4x8_to_placed(e, w, outs, tmp, undo)
        return
    (fp4x8_to_f16 if F16 else fp4x8_to_bf16)(e, w, outs, tmp)


def mul_x2():
    """The packed multiply of the operand type."""
    return "mul.rn.f16x2" if F16 else "mul.rn.bf16x2"


def scale_nv(e, byte_reg, out, tmp):
    """ue4m3 byte (in the low 8 bits of byte_reg) -> bf16x2 (s, s) (f16x2 with F16); exact, NaN kept."""
    h0, h1 = "%h0", "%h1"
    f = "%f0"
    if F16:
        e(f"""\tcvt.u16.u32 {h0}, {byte_reg};
\tcvt.rn.f16x2.e4m3x2 {tmp}, {h0};             // (s, 0) as f16x2 (exact)
\tprmt.b32 {out}, {tmp}, 0, 0x1010;             // (s, s)""")
        return
    e(f"""\tcvt.u16.u32 {h0}, {byte_reg};
\tcvt.rn.f16x2.e4m3x2 {tmp}, {h0};             // e4m3 -> f16 (exact)
\tmov.b32 {{{h0}, {h1}}}, {tmp};
\tcvt.f32.f16 {f}, {h0};
\tcvt.rn.bf16x2.f32 {out}, {f}, {f};            // f16 -> bf16 (exact for e4m3 values)""")


def scale_mx(e, byte_reg, out, tmp):
    """ue8m0 byte -> bf16x2 (2^(E-127), twice); E = 0 -> the bf16 subnormal 0x0040; 0xFF -> NaN."""
    e(f"""\tand.b32 {tmp}, {byte_reg}, 255;
\tshl.b32 {out}, {tmp}, 7;
\tsetp.eq.u32 %p6, {tmp}, 0;
\t@%p6 mov.b32 {out}, 0x0040;
\tsetp.eq.u32 %p6, {tmp}, 255;
\t@%p6 mov.b32 {out}, 0x7FC0;
\tprmt.b32 {out}, {out}, 0, 0x1010;""")


def scale_mx_fast(e, byte_reg, out, tmp):
    """mxone's fast path: ue8m0 byte E <= 128 -> bf16x2 (2^(E-1), twice), the scale times the
    2^126 that undoes the bf16 placement's 2^-126: exponent field E + 126 (126..254, normal)."""
    e(f"""\tand.b32 {tmp}, {byte_reg}, 255;
\tadd.u32 {tmp}, {tmp}, 126;
\tshl.b32 {out}, {tmp}, 7;
\tprmt.b32 {out}, {out}, 0, 0x1010;""")


def mx_big_scales(e, bytes_, pred="%pmx"):
    """pred = some lane of the warp has a ue8m0 scale above 128 among the bytes (registers,
    (reg, shift) pairs); warp-uniform, so the fast and the slow path never diverge."""
    first = True
    for reg, shift in bytes_:
        src = reg
        if shift:
            e(f"\tshr.u32 %mxt, {reg}, {shift};")
            src = "%mxt"
        e(f"\tand.b32 %mxt, {src}, 255;")
        if first:
            e(f"\tsetp.gt.u32 {pred}, %mxt, 128;")
        else:
            e(f"\tsetp.gt.or.u32 {pred}, %mxt, 128, {pred};")
        first = False
    e(f"\tvote.sync.any.pred {pred}, {pred}, 0xffffffff;   // a scale above 2: the two-multiply path")


def transform_rows_of_thread():
    """The W rows thread tt converts per chunk: tt and tt+128 alone, 128*rank+tt in a pair;
    with tw8 (256 transform threads) row tt."""
    assert not (TW8 and SPLIT)
    return ["128*rank+tt"] if SPLIT else (["tt"] if TW8 else ["tt", "tt+128"])


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
        if not SPLIT:
            e(f"\tadd.u32 %r43, %r40, {128 * p};")
        else:
            e("\tadd.u32 %r43, %r40, %mrank;")
        row_invariants(e, fmt, L, p, "%r43", "%r44")


def scales_nv4(e, sreg, outs, p):
    """Four ue4m3 scales (bytes of sreg) -> four bf16x2 (s, s) (f16x2 with F16); two e4m3x2
    conversions."""
    if F16:
        e(f"""\tmov.b32 {{%hs{2*p}, %hs{2*p+1}}}, {sreg};
\tcvt.rn.f16x2.e4m3x2 {outs[1]}, %hs{2*p};       // (s0, s1) as f16x2, exact
\tcvt.rn.f16x2.e4m3x2 {outs[3]}, %hs{2*p+1};     // (s2, s3)
\tprmt.b32 {outs[0]}, {outs[1]}, 0, 0x1010;      // (s0, s0)
\tprmt.b32 {outs[1]}, {outs[1]}, 0, 0x3232;      // (s1, s1)
\tprmt.b32 {outs[2]}, {outs[3]}, 0, 0x1010;
\tprmt.b32 {outs[3]}, {outs[3]}, 0, 0x3232;""")
        return
    e(f"""\tmov.b32 {{%hs{2*p}, %hs{2*p+1}}}, {sreg};
\tcvt.rn.f16x2.e4m3x2 {outs[0]}, %hs{2*p};       // (s0, s1) as f16x2, exact
\tcvt.rn.f16x2.e4m3x2 {outs[2]}, %hs{2*p+1};     // (s2, s3)""")
    for pair in range(2):
        e(f"\tmov.b32 {{%hs{2*p}, %hs{2*p+1}}}, {outs[2*pair]};")
        for j in range(2):
            e(f"""\tcvt.f32.f16 %fs{p}, %hs{2*p+j};
\tcvt.rn.bf16x2.f32 {outs[2*pair+j]}, %fs{p}, %fs{p};""")


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
                if SPLIT and not BULK:
                    e(f"\tadd.u32 {t2}, {peer}, %wst{p};")
                for i in range(4):
                    q = 4 * half + i
                    vec = ", ".join(outs[(p, c, i)] for c in range(4))
                    e(f"""\txor.b32 {t1}, {t0}, {q << 4};
\tst.shared.v4.b32 [{t1}], {{{vec}}};""")
                    if SPLIT and not BULK:
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


def mx_scales(e, raw, sc, tmp, conv):
    """Two ue8m0 bytes (raw, low byte first; raw may be sc[3]) -> sc[0] = sc[1] (group 0 / 1's
    scale pair) and sc[2] = sc[3], through conv (scale_mx or scale_mx_fast)."""
    conv(e, raw, sc[0], tmp)
    e(f"\tshr.u32 %mxt2, {raw}, 8;" if MXONE else f"\tshr.u32 {raw}, {raw}, 8;")
    conv(e, "%mxt2" if MXONE else raw, sc[2], tmp)
    e(f"\tmov.b32 {sc[1]}, {sc[0]};\n\tmov.b32 {sc[3]}, {sc[2]};")


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
    if TSPLIT:
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
    e("""L_t_tile:
\tsetp.ge.u32 %p0, %tile, %ntiles;
\t@%p0 bra L_exit;
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
        if SPLIT:
            e("\tmapa.shared::cluster.u32 %r39, %r42, %peer;   // the peer's slot base")
        # one CTA converts rows tt and tt+128; a pair splits them: rank v converts row
        # 128v+tt and writes it into both CTAs' slots
        if "skip_transform" not in EXPERIMENTS:
            # with consumer_assist the consumers convert half 1 of every row
            transform_rows(e, fmt, h, L, halves=(0,) if ASSIST else (0, 1),
                           part="convert" if prefetch else "all")
        if BULK:
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
\tcp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r16], [%r15], {128 * BN // 2}, [%r17];
\t// this CTA's tfull: the four warps' arrives and the peer's {128 * BN // 2} bytes
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r13], {128 * BN // 2};
L_bulk_sent_{h}:
\tbar.warp.sync 0xffffffff;
\tand.pred %p2, %p1, !%pthr0;
\t@%p2 mbarrier.arrive.shared::cta.b64 _, [%r13];""")
        else:
            scope = "cluster" if SPLIT else "cta"
            fence = (f"fence.proxy.async.shared::{scope};" if "notfence" not in EXPERIMENTS
                     else "// (no fence: measurement only)")
            e(f"""\t// make the generic-proxy stores visible to wgmma, then one arrive per warp
\t{fence}
\tbar.warp.sync 0xffffffff;
\tsetp.eq.u32 %p1, %lane, 0;
\tmul.lo.u32 %r12, %t, 8;
\tadd.u32 %r13, {"%bar_tfullw" if TSPLIT else "%bar_tfull"}, %r12;""")
            arrive(e, "%p1", "%r13", "%r14", remote=SPLIT)
        advance(e, "%t", "%tph", TSLOTS)
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


def wparam_doc():
    """The p_tmW parameter's comment: fp4 W, or the prepared W of a W-prepared kernel."""
    if WPRE:
        fmt = "nvfp4" if F16 else "mxfp4"
        by = f"{prep_name(fmt, True)} (or _wprep)" if GDWAIT_ON else prep_name(fmt)
        return (f"// W   {'FLOAT16' if F16 else 'BFLOAT16'} {{K, N}}: W prepared by {by}, "
                f"box {{64, {BN}}}, swizzle 128B")
    return f"// W   UINT8 {{K/2, N}}, box {{64, {BN}}}, swizzle 64B"


def producer_walk(e, label, first, nxt, stage, skip_first=None, at_unit=None, unit_end=None):
    """One W-prepared producer's loop: its own cursor (PCUR) over the same work units as the
    consumers; `stage` emits the issue of stage %pks of the unit, at label `label`;
    `skip_first` (optional) emits code between the first unit's start and the loop;
    `unit_end` (optional) emits code after a unit's last stage, before the next unit."""
    main = label == "L_mprod"
    if TLINE and main:
        e("""\t.reg .b32 %tlu0, %tlq1;
\tmov.u32 %tlu0, 1;                          // tline: 1 through unit 0 (event 45)
\tmov.u32 %tlq1, 0;                          // tline: 1 at unit 1's first stage (event 47)""")
    unit_first(e, PCUR, first)
    producer_unit_start(e)
    if at_unit:
        at_unit(f"{nxt}0")
    if skip_first:
        skip_first()
    e(f"""{label}:
\tsetp.ge.u32 %p5, %ptile, %ntiles;
\t@%p5 bra L_exit;""")
    stage()
    e(f"""\tadd.u32 %pks, %pks, 1;
\tsetp.lt.u32 %p5, %pks, %pke;
\t@%p5 bra {label};""")
    if unit_end:
        unit_end()
    unit_next(e, PCUR, nxt)
    if TLINE and main:
        e("\tmov.u32 %tlq1, %tlu0;\n\tmov.u32 %tlu0, 0;")
    producer_unit_start(e)
    if at_unit:
        at_unit(f"{nxt}1")
    e(f"\tbra {label};")


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
// (rows n0..n0+{BN - 1}, K elements 128*ks + 64*h ..+63; rows past N and K past K read zero).
// Both run ahead as far as their rings allow; {"thread 32 first waits for the item's conversion." if XCONV else "no thread converts anything."}
// =====================================================================================
L_transform:
\tsetp.eq.u32 %pthr0, %thr, 0;
\tsetp.eq.u32 %p0, %thr, 32;
\t@%pthr0 prefetch.tensormap [%tmA];
\t@%pthr0 prefetch.tensormap [%tmSFA];
\t@%p0 prefetch.tensormap [%tmW];
\t@%p0 bra L_wprod;{xconv_branch()}
\t@!%pthr0 bra L_exit;                        // nothing else to do in WG0 and WG1
\t// ---- thread 0: the main stages ----
\tmov.u32 %ps, 0;
\tmov.u32 %pph, 0;""")

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
        if XCONV:
            xconv_wait(e)
            if TLINE:
                tline(e, 28, 32, "%tlx")
                e("\tmov.u32 %tlx, 0;")
        for h in range(2):
            past = None
            if h == 1 and HALFK:
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
                advance(e, "%t", "%tph", TSLOTS)
                if past:
                    e(f"{past}:")
                continue
            e(f"""\tadd.u32 %r13, %bar_tfull, %r12;
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r13], {L['tslot']};
\tmad.lo.u32 %r42, %t, {L['tslot']}, %sbase;
\tadd.u32 %r42, %r42, {L['t']};              // slot base
\tshl.b32 %r15, %pks, 7;
\tadd.u32 %r15, %r15, {64 * h};                 // K element coordinate = 128 ks + {64 * h}""")
            if WPAIR:
                # rank 0 copies the chunk into both CTAs' slot t (same offset), onto each
                # CTA's tfull[t]; rank 1 only armed its own.  Both waited for tempty[t], which
                # counts the consumer warps of both CTAs, so neither slot is still being read.
                e("""\t@%prank0 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r42], [%tmW, {%r15, %pcn0}], [%r13], %mask;""")
            else:
                e("\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r42], [%tmW, {%r15, %pcn0}], [%r13];")
            advance(e, "%t", "%tph", TSLOTS)
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

    producer_walk(e, "L_mprod", "pfirst", "pm", main_stage, at_unit=a_prefetch if APREFETCH else None)
    e("""\t// ---- thread 32: the W ring ----
L_wprod:
\tmov.u32 %t, 0;
\tmov.u32 %tph, 0;""")
    if GDWAIT_ON:
        e("""\t// _w_yt: Wp is written by this launch's preparation kernel, of which the host launches
\t// this kernel as the programmatic dependent: wait until that grid has completed and its
\t// stores are visible (without such a launch, nothing to wait for)
\tgriddepcontrol.wait;""")
        tline(e, 28, 32)   # the prepared operand is there: the _x kernels' "first item ready"
    if XCONV:
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
        if HALFK:
            e(f"""\t// halfk: no first fill where it would reach a half K block (as the consumers decide)
{self_fill_has_half("%pks", "%r10", "%r13", "%r14", "%p5")}
\t@%p5 bra L_wprod_k;""")
        e("\tadd.u32 %pks, %pks, %r10;")
        assert XSELF_KB in (1, 2)
        one = e.label("xself_one")

        advance(e, "%t", "%tph", TSLOTS)
        advance(e, "%t", "%tph", TSLOTS)
        if XSELF_KB == 2:
            e(f"\tsetp.lt.u32 %p5, %r10, 2;\n\t@%p5 bra {one};")
            advance(e, "%t", "%tph", TSLOTS)
            advance(e, "%t", "%tph", TSLOTS)
        e(f"""{one}:
\tsetp.lt.u32 %p5, %pks, %pke;
\t@%p5 bra L_wprod_k;""")
        unit_next(e, PCUR, "pwself")
        producer_unit_start(e)

    producer_walk(e, "L_wprod_k", "wfirst", "pw", w_chunks,
                  skip_first=skip_self_filled if XSELF_ON else None,
                  unit_end=(lambda: ltail_issue(e, L)) if LTAIL else None)
    e("")
    if XCONV:
        emit_xconv(e, fmt, L)


def ltail_issue(e, L):
    """LTAIL, thread 32 after a unit's last W chunk: when the unit starts its tile (kb = 0:
    the unit that finishes it), the tile's low-rank chunks %lslots .. %lchunks-1, each into the
    next W slot (L boxes, then U boxes, as in a low-rank slot), onto tfull with the chunk's
    bytes.  The consumers read them after the ring's chunks, in the same order."""
    e("""\t// ---- ltail: the tile's low-rank chunks past the ring, into the next W slots ----
\tsetp.ne.u32 %p5, %pkb, 0;
\t@%p5 bra L_wtail_done;                     // a stream-K contributor: the owner applies the low rank""")
    lora_consts(e)
    e("""\tmov.u32 %r18, %lslots;                     // the first chunk the ring does not carry
L_wtail_chunk:
\tsetp.ge.u32 %p5, %r18, %lchunks;
\t@%p5 bra L_wtail_done;
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
    u_copy = ("\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
              "[%r16], [%tmU, {%r17, %pcn0}], [%r13];\n")
    e(lowrank_boxes("%r18", "%r19", "L_wtail_box", "%pcm0", u_copy).rstrip("\n"))
    advance(e, "%t", "%tph", TSLOTS)
    e("""\tadd.u32 %r18, %r18, 1;
\tbra L_wtail_chunk;
L_wtail_done:""")


def xconv_branch():
    return """
\tsetp.ge.u32 %p1, %warp, 2;
\t@%p1 bra L_xconv;                          // warps 2-7: the converters""" if XCONV else ""


XWAITS = [0]


def upi():
    """The converters' units (32-row blocks) of an item: BN / 32 (8, or 5 in the narrow tile);
    an item's flags stay 8 words apart (32 bytes) either way."""
    return BN // 32


def order_entry(item):
    """The unit %xu's item (kb * tiles_n + nt) into `item`, from the host's order p_x_order.
    With 8 units an item the table holds one item a rank (rank u / 8, block u % 8, both taken
    from %xu); in the narrow tile (5 units an item) one entry a unit, 8 item + b (the unit's
    flag index: no division by 5 in the converters, whose 56 registers MXFP4 would spill),
    and the item to %xt.  Then %xkb = the item's K block.  p_x_order = 0 is the identity order
    (item = rank; the host's order wherever one band holds every N tile): no table load at the
    head of the converters' first chain (a cold load, about 1 us into a launch)."""
    load = f"""\tld.param.u64 %rd5, [p_x_order];
\tsetp.ne.u64 %px, %rd5, 0;                   // a table (0: the identity order, nothing to load)
\tcvta.to.global.u64 %rd5, %rd5;
\tmul.wide.u32 %rd6, {item}, 4;
\tadd.u64 %rd5, %rd5, %rd6;
"""
    if upi() == 8:
        return (f"\tshr.u32 {item}, %xu, 3;                     // the item's rank in conversion order\n" + load +
                f"\t@%px ld.global.nc.u32 {item}, [%rd5];        // the item kb * tiles_n + nt of that rank\n"
                f"\tdiv.u32 %xkb, {item}, %tiles_n;\n")
    return (f"\tmov.u32 {item}, %xu;\n" + load +
            f"""\t@%px ld.global.nc.u32 {item}, [%rd5];        // 8 item + b of this unit
{identity_unit(item, "%xt", "%xu", "!%px")}\tshr.u32 %xt, {item}, 3;                     // the item kb * tiles_n + nt
\tdiv.u32 %xkb, %xt, %tiles_n;
""")


def identity_unit(dst, tmp, u, pred):
    """The narrow tile's identity order: dst = 8 (u / 5) + u % 5 under pred (tmp = u / 5)."""
    return (f"""\t@{pred} div.u32 {tmp}, {u}, {upi()};                // identity order: item u / {upi()} ...
\t@{pred} mul.lo.u32 {dst}, {tmp}, {upi()};
\t@{pred} sub.u32 {dst}, {u}, {dst};                // ... unit b = u % {upi()}
\t@{pred} mad.lo.u32 {dst}, {tmp}, 8, {dst};          // 8 item + b
""")


def units_of(dst, items, why):
    """dst = items * upi()."""
    return (f"\tshl.b32 {dst}, {items}, 3;{why}" if upi() == 8 else
            f"\tmul.lo.u32 {dst}, {items}, {upi()};{why}")


def n_tile_of(dst, n0):
    """dst = n0 / BN: the N tile whose first row is n0."""
    return (f"\tshr.u32 {dst}, {n0}, 8;" if BN == 256 else f"\tdiv.u32 {dst}, {n0}, {BN};")


def xconv_wait(e):
    """_x W producer, before K block %pks of N tile %pcn0/256: unless the item is in the range
    of K blocks [%xrk0, %xrk1) of N tile %xrn already known converted, wait until its 8 flags
    hold p_x_epoch (relaxed loads), extend the range over the next items of the N tile whose
    flags already hold it (up to XLOOK items, no waiting), then one fence.acq_rel.gpu (an
    acquire of every release seen) and fence.proxy.async.global (the converters' generic-proxy
    writes before this thread's bulk copies) for the whole range.  One fence per range, not per
    item: the fences cost the producer about a stage's time (bench/results/experiments).
    Flags that never arrive (a broken launch) trap after 2 million polls (seconds) instead of
    hanging."""
    if "xnowait" in EXPERIMENTS or "xnoconv" in EXPERIMENTS:
        return                                  # timing only: W may be read before it is written
    n = XWAITS[0]
    XWAITS[0] += 1

    def flags_ready(item, miss):
        """the upi() flags of item (a register) equal the epoch, else branch to `miss`"""
        n = upi()
        assert n in (5, 8)
        second = ("\tld.relaxed.gpu.global.v4.u32 {%xf4, %xf5, %xf6, %xf7}, " if n == 8 else
                  "\tld.relaxed.gpu.global.u32 %xf4, ")
        e(f"""\tmul.wide.u32 %xfa, {item}, 32;
\tadd.u64 %xfa, %xflags, %xfa;
\tld.relaxed.gpu.global.v4.u32 {{%xf0, %xf1, %xf2, %xf3}}, [%xfa+{XHEAD}];
{second}[%xfa+{XHEAD + 16}];""")
        for i in range(1, n):
            e(f"\tand.b32 %xv, {'%xf0' if i == 1 else '%xv'}, %xf{i};")
        for i in range(1, n):
            e(f"\tor.b32 %xf0, %xf0, %xf{i};")
        e(f"""\tsetp.eq.u32 %px, %xv, %xepoch;             // every flag has all the epoch's bits ...
\tsetp.eq.and.u32 %px, %xf0, %xepoch, %px;   // ... and no other: all {"eight" if n == 8 else "five"} equal it
\t@!%px bra {miss};""")

    e(f"""\t// _x: every item converted (seen once, fenced), or this one known converted (in the range)?
\tsetp.ne.u32 %px, %xall, 0;
\t@%px bra L_xd{n};
\tsetp.eq.u32 %px, %pcn0, %xrn;
\tsetp.ge.and.u32 %px, %pks, %xrk0, %px;
\tsetp.lt.and.u32 %px, %pks, %xrk1, %px;
\t@%px bra L_xd{n};
\tmov.u32 %xspin, 0;
L_xw{n}:
\tld.relaxed.gpu.global.u32 %xv, [%xflags+4];  // the launch's "all converted" word
\tsetp.eq.u32 %px, %xv, %xepoch;
\t@%px bra L_xa{n};
{n_tile_of("%xitem", "%pcn0")}
\tmad.lo.u32 %xitem, %pks, %tiles_n, %xitem;   // item ks * tiles_n + nt""")
    flags_ready("%xitem", f"L_xs{n}")
    e(f"""\tbra L_xr{n};
L_xs{n}:
\tnanosleep.u32 64;
\tadd.u32 %xspin, %xspin, 1;
\tsetp.lt.u32 %px, %xspin, 2000000;
\t@%px bra L_xw{n};
\ttrap;
L_xr{n}:
\t// the range starts here; extend it over the next items already converted (no waiting)
\tmov.u32 %xrn, %pcn0;
\tmov.u32 %xrk0, %pks;
\tadd.u32 %xrk1, %pks, 1;
\tadd.u32 %xlim, %pks, {XLOOK};
\tmin.u32 %xlim, %xlim, %nks;
L_xe{n}:
\tsetp.ge.u32 %px, %xrk1, %xlim;
\t@%px bra L_xf{n};
{n_tile_of("%xitem", "%pcn0")}
\tmad.lo.u32 %xitem, %xrk1, %tiles_n, %xitem;""")
    flags_ready("%xitem", f"L_xf{n}")
    e(f"""\tadd.u32 %xrk1, %xrk1, 1;
\tbra L_xe{n};
L_xa{n}:
\tmov.u32 %xall, 1;                          // no wait again in this launch""")
    tline(e, 29, 32)
    e(f"""L_xf{n}:
\tfence.acq_rel.gpu;                          // with the relaxed loads: an acquire of the releases seen
\tfence.proxy.async.global;                   // the converters' writes before the bulk copies
L_xd{n}:""")


def emit_xconv(e, fmt, L):
    """The _x kernels' converter warps (2-7): the launch's W conversion, unit by unit
    (xconv_roles_doc), with the preparation kernel's chunk code (chunk_to_stage).  They
    run with the producers' {REG_WG0} registers, so across a chunk's conversion only the unit
    (%xu), its K block and first row, the staging block, K and the W / SFW addresses stay
    live; everything else is recomputed or reloaded from the parameters."""
    e(f"""
// =====================================================================================
// Converters (warps 2-7).  Unit of rank u = {upi()} i + b: W rows {BN} nt + 32 b ..+31 x K 128 kb
// ..+127 of item p_x_order[i] = kb * tiles_n + nt, flag 8 p_x_order[i] + b.  Two passes of
// 16 rows: lane l converts row 16p + l/2, chunk 2kb + l%2 (clamped to the last row / chunk,
// then not stored) into its staging row;
// 8 stores of 512 contiguous bytes (2 rows x 2 chunks) each; then the unit is published.
// =====================================================================================
L_xconv:""")
    if "xnoconv" in EXPERIMENTS:
        e("\tbra L_exit;                                // timing only: no conversion")
    emit_lut_setup(e)
    e(f"""\tld.param.u64 %rd0, [p_x_W];
\tcvta.to.global.u64 %rd0, %rd0;
\tld.param.u64 %rd1, [p_x_SFW];
\tcvta.to.global.u64 %rd1, %rd1;
\tld.param.u32 %r1, [p_x_K];
\tsub.u32 %xt, %warp, 2;                     // converter warp 0..{XCONV_WARPS - 1}
\tmov.u32 %xu, %ctaid.x;
\tmad.lo.u32 %xu, %xu, {XCONV_WARPS}, %xt;               // first unit
\tmad.lo.u32 %xbase, %xt, {XCONV_STAGE}, %sbase;
\tadd.u32 %xbase, %xbase, {L['xstage']};            // this warp's staging block""")
    if XSTAG_NS:
        e(f"""\t// xstag: a warp whose first unit comes after the first {XSTAG_UNITS} waits {XSTAG_NS} ns first
\tsetp.lt.u32 %px, %xu, {XSTAG_UNITS};
\t@%px bra L_xstag_done;""")
        spin_ns(e, "L_xstag_wait", XSTAG_NS, 128, "%rd5", "%rd6", "%px")
        e("L_xstag_done:")
    if TLINE:
        e("\t.reg .b32 %tlv;\n\tmov.u32 %tlv, 1;")
    e(f"""L_x_unit:
\tmul.lo.u32 %xt, %tiles_n, %nks;
{units_of("%xt", "%xt", f"                       // units: {upi()} row blocks an item")}
\tsetp.ge.u32 %px, %xu, %xt;
\t@%px bra {"L_x_leave" if XDBUF else "L_exit"};
{order_entry("%xitem").rstrip()}""")
    tline(e, 32, 64, "%tlv", dep="%xkb")
    if upi() == 8:
        e("""\tmul.lo.u32 %xt, %xkb, %tiles_n;
\tsub.u32 %xt, %xitem, %xt;                  // N tile
\tshl.b32 %xrow0, %xt, 8;
\tand.b32 %xt, %xu, 7;                       // row block
\tshl.b32 %xt, %xt, 5;
\tadd.u32 %xrow0, %xrow0, %xt;              // the unit's first row""")
    else:   # %xitem holds 8 item + b (order_entry), %xt the item
        e(f"""\tmul.lo.u32 %xrow0, %xkb, %tiles_n;
\tsub.u32 %xrow0, %xt, %xrow0;              // N tile
\tand.b32 %xt, %xitem, 7;                    // row block b
\tshl.b32 %xt, %xt, 5;
\tmad.lo.u32 %xrow0, %xrow0, {BN}, %xt;        // the unit's first row: {BN} nt + 32 b""")
    def pass_chunk(p):
        """%r5, %r7, %r8: the chunk lane l converts in pass p"""
        e(f"""\tld.param.u32 %xN, [p_x_N];
\tshr.u32 %xk64, %r1, 6;                     // K/64: chunks a row
\tshr.u32 %xt, %lane, 1;
\tadd.u32 %r7, %xrow0, %xt;
\tadd.u32 %r7, %r7, {16 * p};
\tsub.u32 %xt, %xN, 1;
\tmin.u32 %r7, %r7, %xt;                     // row n (clamped)
\tshl.b32 %r8, %xkb, 1;
\tand.b32 %xt, %lane, 1;
\tadd.u32 %r8, %r8, %xt;
\tsub.u32 %xt, %xk64, 1;
\tmin.u32 %r8, %r8, %xt;                     // chunk j (clamped)
\tmad.lo.u32 %r5, %r7, %xk64, %r8;           // chunk g of W""")

    def staging_row(e):
        e("\t// the lane's row of the warp's staging block, chunk q at q ^ (lane % 8)")
        staging_row_address(e, "%lane", "%xbase")

    pre = [f"%xw{i}" for i in range(9)]
    for p in range(2):
        e(f"\t// ---- pass {p}: rows {16 * p}..{16 * p + 15} of the unit ----")
        if not XPRE_ON:
            pass_chunk(p)
            chunk_to_stage(e, fmt, staging_row)
        elif p == 0:
            pass_chunk(0)
            chunk_load(e, fmt)
            e("\t// xpre: pass 1's loads now, under pass 0's conversion")
            pass_chunk(1)
            chunk_load(e, fmt, pre[:8], pre[8])
            chunk_convert(e, fmt, staging_row)
        else:
            e("\t// xpre: pass 1's words and scales, loaded in pass 0")
            for i in range(8):
                e(f"\tmov.b32 %wi{i}, {pre[i]};")
            e(f"\tmov.b32 %r12, {pre[8]};")
            chunk_convert(e, fmt, staging_row)
        tline(e, 33 + p, 64, "%tlv", dep="%wi7")
        e(f"""\tbar.warp.sync 0xffffffff;
\t// the stores: piece l of store s = staging row 4s + l/8 (row R = first + {16 * p} + 2s + l/16,
\t// chunk J = 2kb + (l/8)%2), 16-byte chunk q = l%8 kept at q ^ (l/8 + 4(s%2)); %xrl = rows
\t// from store 0's R on that exist (0 when J is past K)
\tld.param.u32 %xN, [p_x_N];
\tshr.u32 %xk64, %r1, 6;
\tshr.u32 %xl8, %lane, 3;
\tand.b32 %xt, %lane, 7;
\tshl.b32 %xsm0, %xl8, 7;
\tadd.u32 %xsm0, %xsm0, %xbase;
\txor.b32 %xsm1, %xt, %xl8;
\tshl.b32 %xsm1, %xsm1, 4;
\tadd.u32 %xsm1, %xsm1, %xsm0;               // even s (+ 512 s)
\txor.b32 %xt, %xt, %xl8;
\txor.b32 %xt, %xt, 4;
\tshl.b32 %xt, %xt, 4;
\tadd.u32 %xsm0, %xsm0, %xt;                 // odd s (+ 512 s)
\tshr.u32 %xr, %lane, 4;
\tadd.u32 %xr, %xr, %xrow0;
\tadd.u32 %xr, %xr, {16 * p};                 // R of store 0
\tand.b32 %xj, %xl8, 1;
\tshl.b32 %xt, %xkb, 1;
\tadd.u32 %xj, %xj, %xt;                     // chunk J
\tmax.u32 %xrl, %xN, %xr;
\tsub.u32 %xrl, %xrl, %xr;                   // N - R, or 0 past N
\tsetp.ge.u32 %px, %xj, %xk64;
\t@%px mov.u32 %xrl, 0;
\tld.param.u64 %xg, [p_x_Wp];
\tcvta.to.global.u64 %xg, %xg;
\tmul.wide.u32 %rd5, %xr, %r1;
\tshl.b64 %rd5, %rd5, 1;                     // R * 2K
\tadd.u64 %xg, %xg, %rd5;
\tmul.wide.u32 %rd5, %xj, 128;
\tadd.u64 %xg, %xg, %rd5;
\tand.b32 %xt, %lane, 7;
\tmul.wide.u32 %rd5, %xt, 16;
\tadd.u64 %xg, %xg, %rd5;
\tmul.wide.u32 %rd6, %r1, 4;                 // two rows: 4K bytes""")
        for st in range(8):
            e(f"""\tld.shared.v4.b32 {{%r32, %r33, %r34, %r35}}, [{"%xsm1" if st % 2 == 0 else "%xsm0"}+{512 * st}];
\tsetp.gt.u32 %px, %xrl, {2 * st};
\t@%px st.global.v4.b32 [%xg], {{%r32, %r33, %r34, %r35}};""")
            if st < 7:
                e("\tadd.u64 %xg, %xg, %rd6;")
        e("\tbar.warp.sync 0xffffffff;                  // the staging block is free again")
    tline(e, 35, 64, "%tlv")
    # the unit's flag index: from its K block and first row (both still live after the stores),
    # not from the order table again (no load, and p_x_order may be 0: the identity order)
    XRELOAD = ("\tmul.lo.u32 %xt, %xkb, %tiles_n;\n\tshl.b32 %xt, %xt, 3;\n"
               "\tshr.u32 %xv, %xrow0, 5;                    // 8 nt + b: the unit's first row / 32\n"
               "\tadd.u32 %xt, %xt, %xv;                     // flag 8 (kb * tiles_n + nt) + b\n")
    if upi() != 8:   # the per-unit table holds the flag index itself (row / 32 is not 8 nt + b here)
        XRELOAD = ("\tld.param.u64 %rd5, [p_x_order];\n"
                   "\tsetp.ne.u64 %px, %rd5, 0;                   // a table (0: the identity order)\n"
                   "\tcvta.to.global.u64 %rd5, %rd5;\n"
                   "\tmul.wide.u32 %rd6, %xu, 4;\n\tadd.u64 %rd5, %rd5, %rd6;\n"
                   "\t@%px ld.global.nc.u32 %xt, [%rd5];          // flag 8 item + b, again (reloaded: nothing more stays live)\n" +
                   identity_unit("%xt", "%xv", "%xu", "!%px"))
    # FP4LR_GEN_EXPERIMENT=xnofence (timing only, not correct in principle): no proxy fence
    # before the release, to time what the fence costs the publication (with tline)
    pfence = ("\t// xnofence: no fence.proxy.async.global (timing only)" if "xnofence" in EXPERIMENTS
              else "\tfence.proxy.async.global;")
    e(f"""\t// ---- publish the unit: the writes ordered for the bulk copies, then its flag ----
{pfence}
\tbar.warp.sync 0xffffffff;
\tld.param.u64 %xfa, [p_x_flags];
\tcvta.to.global.u64 %xfa, %xfa;
{XRELOAD}\tsetp.eq.u32 %px, %lane, 0;
\tmul.wide.u32 %rd5, %xt, 4;
\tadd.u64 %rd5, %xfa, %rd5;
\tld.param.u32 %xv, [p_x_epoch];
\t@%px st.release.gpu.global.u32 [%rd5+{XHEAD}], %xv;
\t// count the unit (word 0); the launch's last unit sets the count back to 0 for the next
\t// launch and stores the epoch to word 1, "every item converted" (the count's acq_rel
\t// read-modify-writes carry every unit's release to it)
\t@%px atom.acq_rel.gpu.global.add.u32 %xt, [%xfa], 1;
\tadd.u32 %xt, %xt, 1;
\tmul.lo.u32 %xv, %tiles_n, %nks;
{units_of("%xv", "%xv", "                       // units (as at L_x_unit)")}
\tsetp.eq.and.u32 %px, %xt, %xv, %px;        // this was the last unit
\t@%px st.relaxed.gpu.global.u32 [%xfa], 0;
\tld.param.u32 %xv, [p_x_epoch];
\t@%px st.release.gpu.global.u32 [%xfa+4], %xv;""")
    tline(e, 30, 64, "%tlv")
    tline(e, 31, 64)
    if TLINE:
        e("\tmov.u32 %tlv, 0;")
    e(f"""\tmov.u32 %xt, %nctaid.x;
\tmad.lo.u32 %xu, %xt, {XCONV_WARPS}, %xu;               // the next unit of this warp
\tbra L_x_unit;""")
    if XDBUF:
        e(f"""L_x_leave:
\t// no unit left: this warp's staging block is free for the epilogues (XDBUF); every lane's
\t// last staging read happened before the warp barrier, the elected lane's arrive releases them
\tbar.warp.sync -1;
\telect.sync _|%px, -1;                      // one lane (nothing live through the loop for this)
\tmov.u32 %xt, smem;
\t@%px mbarrier.arrive.shared::cta.b64 _, [%xt+{L['bar'] + xdone_off(L)}];
\tbra L_exit;""")


def self_fill_has_half(kb, nkb, t0, t1, pred):
    """halfk: pred = the first fill's K blocks kb .. kb + nkb - 1 reach a chunk wholly past K
    (128 (kb + nkb - 1) + 64 >= K).  Both the consumers and the W producer skip the fill then:
    its slot would be the producer's, for the next unit, and nobody would multiply it."""
    return f"""\tadd.u32 {t0}, {kb}, {nkb};
\tshl.b32 {t0}, {t0}, 7;
\tsub.u32 {t0}, {t0}, 64;
\tld.param.u32 {t1}, [p_x_K];
\tsetp.ge.u32 {pred}, {t0}, {t1};"""


def halfk_no_fill(done):
    """The consumers' side of self_fill_has_half: straight to `done` (the producer copies the
    unit's every chunk), for the rare first unit within two K blocks of a tile's end."""
    if not HALFK:
        return ""
    return f"""
\tsub.u32 %r2, %ke, %kb;
\tmin.u32 %r2, %r2, {XSELF_KB};
{self_fill_has_half("%kb", "%r2", "%r2", "%r3", "%p5")}
\t@%p5 bra {done};                      // halfk: this fill would reach a half K block"""


def self_fill_begin(done):
    """The first fill's start (both emitters): skip unless it is the CTA's first unit (and the
    halfk case), save r, c and the SFA offset, load K, W, SFW and N."""
    return f"""\tsetp.eq.u32 %p5, %cself, 0;
\t@%p5 bra {done};
\tmov.u32 %cself, 0;{halfk_no_fill(done)}
\tmov.b32 %skf0, %r20;                       // r, c and the SFA offset: chunk_to_stage clobbers them
\tmov.b32 %skf1, %r21;
\tmov.b32 %skf2, %r22;
\tld.param.u32 %r1, [p_x_K];
\tld.param.u64 %rd0, [p_x_W];
\tcvta.to.global.u64 %rd0, %rd0;
\tld.param.u64 %rd1, [p_x_SFW];
\tcvta.to.global.u64 %rd1, %rd1;
\tld.param.u32 %r2, [p_x_N];"""


def self_fill_handoff(e, one, done, nch):
    """The first fill's end (both emitters): fence the slots' writes for the async proxy,
    synchronise the consumers, consumer thread 0 completes the filled slots' tfull phase 0
    (slots 2-3 only for a unit of two K blocks or more), restore r, c, the SFA offset."""
    e(f"{one}:")
    tline(e, 43, TRANSFORM_THREADS)
    e(f"""\tfence.proxy.async.shared::cta;              // the slots' writes before the wgmmas read them
\tbar.sync 4, 256;
\tsetp.eq.u32 %p5, %r3, 0;
\tsub.u32 %r2, %ke, %kb;
\tsetp.ge.u32 %p6, %r2, 2;""")
    for c in range(nch):
        pred = "%p5" if c < 2 else "%p6"
        if c == 2:
            e("\tand.pred %p6, %p6, %p5;")
        e(f"\t@{pred} mbarrier.arrive.shared::cta.b64 _, [%bar_tfull+{8 * c}];")
    tline(e, 44, TRANSFORM_THREADS)
    e(f"""\tmov.b32 %r20, %skf0;
\tmov.b32 %r21, %skf1;
\tmov.b32 %r22, %skf2;
{done}:""")


def emit_self_fill(e, fmt, L):
    """XSELF: before the prologue of the CTA's first unit, each consumer thread converts W row
    n0 + (its consumer index) of the unit's first XSELF_KB K blocks straight into W slots
    0 .. 2 XSELF_KB - 1 (chunk_to_stage's code, the slot's 128-byte swizzle: the bytes the
    bulk copy of the converted W would bring), then completes those slots' `tfull` phase 0
    itself; the W producer skips the same K blocks.  Why: the first item of the launch's
    conversion reaches a slot 5-7 us after the launch starts (convert, publish, flag seen,
    bulk copy), the first A stage after 1-2 us (fp4lr-check --timeline, 2026-12-03).  The
    four chunks' loads are issued before any conversion (one memory latency, not four)."""
    if FILLASYNC_ON:
        emit_self_fill_async(e, fmt, L)
        return
    blk = FORMATS[fmt][0]
    nch = 2 * XSELF_KB
    done = e.label("cself_done")
    one = e.label("cself_one")
    # the narrow tile's slots hold BN rows: consumer threads BN.. convert nothing
    narrow_rows = ("" if BN == 256 else
                   f"\n\tsetp.ge.u32 %p5, %r3, {BN};\n\t@%p5 bra {one};                      // no slot row {BN}.. in the narrow tile")
    e(f"""\t// ---- first fill (xself): the first unit's first {XSELF_KB} K blocks, converted here ----
{self_fill_begin(done)}
\tsub.u32 %r2, %r2, 1;
\tsub.u32 %r3, %thr, {TRANSFORM_THREADS};                   // consumer thread = the slot row it converts{narrow_rows}
\tadd.u32 %r7, %n0, %r3;
\tmin.u32 %r7, %r7, %r2;                     // W row (rows past N: the last row's values, never stored)
\tshr.u32 %r4, %r1, 6;                       // K/64: chunks a row
\tsub.u32 %r6, %r4, 1;""")
    tline(e, 41, TRANSFORM_THREADS)
    for b0 in range(0, nch, XSELF_BATCH):
        batch = range(b0, min(nch, b0 + XSELF_BATCH))
        for c in batch:
            s, h = divmod(c, 2)
            e(f"""\t// chunk {c}: K block kb + {s}, half {h} (clamped into K for the load)
\tadd.u32 %r8, %kb, {s};
\tshl.b32 %r8, %r8, 1;
\tadd.u32 %r8, %r8, {h};
\tmin.u32 %r8, %r8, %r6;
\tmad.lo.u32 %r5, %r7, %r4, %r8;""")
            chunk_load(e, fmt, [f"%sw{8 * (c - b0) + i}" for i in range(8)], f"%ss{c - b0}",
                       vec=2 if FILLDEP_ON else 4)
        if FILLDEP_ON:
            # a shared store that needs every load of the batch comes before the slots' stores
            # (never executed: its predicate is K = 0), so ptxas keeps the loads ahead of the
            # first conversion (without it, it sinks each chunk's loads to just before that
            # chunk's conversion: a memory latency a chunk)
            deps = [f"%sw{8 * (c - b0) + i}" for c in batch for i in range(0, 8, 2)] + \
                   [f"%ss{c - b0}" for c in batch]
            e("\t// FILLDEP: all these loads before the first slot store (one memory latency, not one a chunk)")
            e(f"\txor.b32 %sdep, {deps[0]}, {deps[1]};")
            for d in deps[2:]:
                e(f"\txor.b32 %sdep, %sdep, {d};")
            e("""\tsetp.eq.u32 %pself, %r1, 0;                 // K = 0: never launched (ptxas cannot know)
\t@%pself st.shared.u32 [%sbase], %sdep;       // never stored; shared stores stay in order""")
        if b0 == 0:
            tline(e, 42, TRANSFORM_THREADS, dep="%sw0")
        for c in batch:
            s, h = divmod(c, 2)
            if c == 2:
                # (loaded with the others, harmless) a one-K-block unit's slots 2 and 3 are
                # the producer's, for the next unit's first K block: nothing may be stored
                # there.  (Until 2026-12-04 this check sat where the four-chunk batch never
                # reached it: under racecheck the late stores overwrote the producer's copy.)
                e(f"""\tsub.u32 %r2, %ke, %kb;
\tsetp.lt.u32 %p5, %r2, 2;
\t@%p5 bra {one};                      // a one-K-block unit: the producer brings the rest""")
            e(f"\t// chunk {c} -> slot {c}, row = consumer thread")
            for i in range(8):
                e(f"\tmov.b32 %wi{i}, %sw{8 * (c - b0) + i};")
            e(f"\tmov.b32 %r12, %ss{c - b0};")

            def staging_row(e, c=c):
                e(f"\tadd.u32 %r9, %sbase, {L['t'] + c * L['tslot']};")
                staging_row_address(e, "%r3", "%r9")

            # MXFP4: the two-multiply path alone (the one-multiply path's vote and second copy
            # of the code pushed the kernel's 56-register warps into spills)
            chunk_convert(e, fmt, staging_row, mx_fast=False)
            if blk == 16:   # NVFP4: K % 128 may be 64, the last K block's second half is past K
                e(f"""\tadd.u32 %r8, %kb, {s};
\tshl.b32 %r8, %r8, 1;
\tadd.u32 %r8, %r8, {h};
\tsetp.ge.u32 %p6, %r8, %r4;               // past K: zeros (as the bulk copy reads them)""")
                for q in range(8):
                    e(f"\txor.b32 %r23, %r21, {q << 4};\n\t@%p6 st.shared.v4.b32 [%r23], {{0, 0, 0, 0}};")
    self_fill_handoff(e, one, done, nch)


def emit_self_fill_async(e, fmt, L):
    """emit_self_fill with its loads as coalesced cp.async copies into the slots (FILLASYNC)."""
    assert fmt == "nvfp4" and XSELF_KB == 2 and not FILLDEP_ON
    done = e.label("cself_done")
    one = e.label("cself_one")
    e(f"""\t// ---- first fill (xself, fillasync): the first unit's first 2 K blocks, copied coalesced
\t// (cp.async, 16 bytes a lane, 8 lanes a row) into the rows of the slots, then converted here ----
{self_fill_begin(done)}
\tsub.u32 %r2, %r2, 1;                       // the last W row
\tsub.u32 %r3, %thr, {TRANSFORM_THREADS};                   // consumer thread
\tshr.u32 %r4, %r1, 6;                       // K/64: chunks a row
\tsub.u32 %r6, %r4, 1;
\tsub.u32 %r9, %ke, %kb;
\tsetp.ge.u32 %p6, %r9, 2;                   // two K blocks in the unit (else slots 2-3 are the producer's)""")
    tline(e, 41, TRANSFORM_THREADS)
    e(f"""\t// the fp4 bytes: lane piece g = 256 it + thread: row g/8 (+32 an it), chunk c = (g%8)/2,
\t// 16-byte half g%2 -> slot c, the row's bytes 16 (g%2)..
\tand.b32 %r10, %r3, 7;
\tshr.u32 %r11, %r10, 1;                     // c
\tand.b32 %r10, %r10, 1;                     // half
\tsetp.lt.u32 %p5, %r11, 2;
\tor.pred %p5, %p5, %p6;                     // copy this piece
\tshl.b32 %r8, %kb, 1;
\tadd.u32 %r8, %r8, %r11;
\tmin.u32 %r8, %r8, %r6;                     // chunk j (clamped into K)
\tshl.b32 %r5, %r8, 5;
\tshl.b32 %r12, %r10, 4;
\tadd.u32 %r5, %r5, %r12;                    // byte j*32 + 16 half of the row
\tcvt.u64.u32 %rd3, %r5;
\tadd.u64 %rd3, %rd0, %rd3;
\tshr.u32 %r12, %r3, 3;                      // row of it 0 (its row % 8 stays: + 32 an it)
\tand.b32 %r9, %r12, 7;
\txor.b32 %r10, %r10, %r9;
\tshl.b32 %r10, %r10, 4;                     // the half's 16 bytes at unit half ^ row%8 (as chunk_convert's)
\tmul.lo.u32 %r13, %r11, {L['tslot']};
\tadd.u32 %r13, %r13, %r10;
\tmad.lo.u32 %r13, %r12, 128, %r13;
\tadd.u32 %r13, %r13, %sbase;
\tadd.u32 %r13, %r13, {L['t']};                // shared destination of it 0
\tadd.u32 %r12, %r12, %n0;
\tshr.u32 %r7, %r1, 1;                       // K/2: bytes a row""")
    for it in range(BN // 32):
        e(f"""\tadd.u32 %r9, %r12, {32 * it};
\tmin.u32 %r9, %r9, %r2;
\tmul.wide.u32 %rd4, %r9, %r7;
\tadd.u64 %rd4, %rd4, %rd3;
\t@%p5 cp.async.cg.shared.global [%r13+{4096 * it}], [%rd4], 16;""")
    nosc = e.label("cself_nosc")
    e(f"""\t// the scales: thread = row, its chunks' 4 bytes each -> the row's unit 2 ^ row%8 of slot c
\tsetp.ge.u32 %p5, %r3, {BN};
\t@%p5 bra {nosc};
\tadd.u32 %r7, %n0, %r3;
\tmin.u32 %r7, %r7, %r2;                     // W row n (rows past N: the last row's, never stored)
\tshr.u32 %r9, %r1, 6;                       // atoms a 128-row block = K/64
\tshr.u32 %r10, %r7, 7;
\tmul.lo.u32 %r10, %r10, %r9;
\tshl.b32 %r10, %r10, 9;
{ATOM_ROW_BYTES}                  // byte of atom 0
\tand.b32 %r13, %r3, 7;
\txor.b32 %r13, %r13, 2;
\tshl.b32 %r13, %r13, 4;
\tadd.u32 %r13, %r13, %sbase;
\tmad.lo.u32 %r13, %r3, 128, %r13;
\tadd.u32 %r13, %r13, {L['t']};""")
    for c in range(4):
        s_, h = divmod(c, 2)
        e(f"""\tshl.b32 %r8, %kb, 1;
\tadd.u32 %r8, %r8, {c};
\tmin.u32 %r8, %r8, %r6;
\tmad.lo.u32 %r11, %r8, 512, %r10;
\tcvt.u64.u32 %rd4, %r11;
\tadd.u64 %rd4, %rd1, %rd4;""" + (f"\n\tcp.async.ca.shared.global [%r13+{c * L['tslot']}], [%rd4], 4;" if c < 2 else
             f"\n\t@%p6 cp.async.ca.shared.global [%r13+{c * L['tslot']}], [%rd4], 4;"))
    e(f"""{nosc}:
\tcp.async.commit_group;
\tcp.async.wait_group 0;
\tbar.sync 4, 256;                           // every row's bytes landed""")
    tline(e, 42, TRANSFORM_THREADS)
    if BN != 256:
        e(f"\tsetp.ge.u32 %p5, %r3, {BN};\n\t@%p5 bra {one};                      // no slot row {BN}.. in the narrow tile")
    for c in range(4):
        s_, h = divmod(c, 2)
        if c == 2:
            e(f"\t@!%p6 bra {one};                      // a one-K-block unit: the producer brings the rest")
        e(f"""\t// chunk {c}: K block kb + {s_}, half {h}: the row's raw bytes in slot {c}, converted in place
\tadd.u32 %r9, %sbase, {L['t'] + c * L['tslot']};""")
        staging_row_address(e, "%r3", "%r9")
        e("""\tld.shared.v4.b32 {%wi0, %wi1, %wi2, %wi3}, [%r21];   // units 0, 1, 2 at u ^ row%8: conflict-free
\txor.b32 %r23, %r21, 16;
\tld.shared.v4.b32 {%wi4, %wi5, %wi6, %wi7}, [%r23];
\txor.b32 %r23, %r21, 32;
\tld.shared.u32 %r12, [%r23];""")

        def staging_row(e, c=c):
            e(f"\tadd.u32 %r9, %sbase, {L['t'] + c * L['tslot']};")
            staging_row_address(e, "%r3", "%r9")

        chunk_convert(e, fmt, staging_row, mx_fast=False)
        e(f"""\tshl.b32 %r8, %kb, 1;
\tadd.u32 %r8, %r8, {c};
\tsetp.ge.u32 %p5, %r8, %r4;               // past K: zeros (as the bulk copy reads them)""")
        for q in range(8):
            e(f"\txor.b32 %r23, %r21, {q << 4};\n\t@%p5 st.shared.v4.b32 [%r23], {{0, 0, 0, 0}};")
    self_fill_handoff(e, one, done, 4)


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


# The narrow tile's main-loop wgmma as one m64n160k16 a k16 step instead of two m64n80k16
# halves (FP4LR_GEN_EXPERIMENT=n160one, measurement only; the 256-wide tile cannot: ptxas
# needs 158 registers at entry for an m64n256 wgmma, C7602, and 512 threads give 128).
# Measured on sana-out (H200, 2026-12-04, 3 rounds): slower, 0.966-0.990.  ptxas 13.0 serialises
# the narrow FUSED kernels' wgmmas with it (C7511, found 2026-12-05 when tools/ptxas_gate.sh
# began refusing every "serialized" warning), so the fused part of that measurement is not of
# the schedule meant; the dense narrow kernels gate clean.
WHOLE_N = False   # set per kernel by emit_kernel
APREFETCH = "aprefetch" in EXPERIMENTS   # the next unit's first A stages into L2 (a_prefetch)
# FP4LR_GEN_EXPERIMENT=walkpre (measurement): the consumers compute their next unit and its
# tile origin after the K loop's last wgmma issue, before waiting for it, instead of after
# the epilogue (a timeline: that walk took 0.5 us with the tensor cores idle).  The NVFP4
# fused _t and _x4_yt kernels spill 8-24 bytes with it and keep the walk after the epilogue.
# Measured (H200, 2026-12-04, 2
# rounds, 6 shapes, the spilling kernels left as committed): 1.004 / 1.001 (NVFP4 dense /
# fused), 1.000 / 1.002 (MXFP4), within the run-to-run noise; GPU suite and sanitizers clean.
WALKPRE = "walkpre" in EXPERIMENTS
WALKPRE_ON = False   # set per kernel by emit_kernel
# Timing only (the results are wrong by design): FP4LR_GEN_EXPERIMENT=wnocopy makes the W-prepared
# kernels' W producer complete each slot's tfull without its bulk copy, anocopy the main
# producer each stage's full without A and SFA: what the K loop costs without the copies.
# Measured (H200 at 1980 MHz, 2026-12-04, NVFP4 _x4 dense flux-qkv): 813 TFLOP/s committed,
# 847 wnocopy, 842 anocopy, 866 both (81 % of the 1070 TFLOP/s the clock gives).


def wgmma_half(e, xr, xq, j, half, desc, pred):
    """One m64n(BN/2)k16 RS wgmma of k16 step j on columns BN/2*half.. (slot rows BN/2*half..,
    descriptor `desc`)."""
    ab = "f16.f16" if F16 else "bf16.bf16"
    frag = f"{{{xr[2*j]}, {xq[2*j]}, {xr[2*j+1]}, {xq[2*j+1]}}}"
    q = BN // 4   # accumulators of a half
    e(f"\twgmma.mma_async.sync.aligned.m64n{BN // 2}k16.f32.{ab} {acc_list(q * half, q * half + q)}, "
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
    if TSPLIT:
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
        if TW8 and WHOLE_N:
            # the narrow tile: one m64n160k16 on all the slot's rows (the same registers and
            # layout as the two halves: accumulator i is column 8*(i/4) + ..., so 0-39 are
            # columns 0-79 and 40-79 columns 80-159)
            ab = "f16.f16" if F16 else "bf16.bf16"
            frag = f"{{{xr[2*j]}, {xq[2*j]}, {xr[2*j+1]}, {xq[2*j+1]}}}"
            e(f"\twgmma.mma_async.sync.aligned.m64n{BN}k16.f32.{ab} {acc_list(0, BN // 2)}, "
              f"{frag}, %rd1, {pred}, 1, 1, 0;")
            continue
        if TW8:
            # columns 0-127 on slot rows 0-127, columns 128-255 on rows 128-255
            # (+16384 bytes: +1024 in the descriptor's start field; BN/2 rows of 128 bytes
            # in the narrow tile)
            wgmma_half(e, xr, xq, j, 0, "%rd1", pred)
            e(f"\tadd.s64 %rd15, %rd1, {BN // 2 * 128 // 16};")
            wgmma_half(e, xr, xq, j, 1, "%rd15", pred)
            continue
        ab = "f16.f16" if F16 else "bf16.bf16"
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
    arrive(e, "%p4", "%r32", "%r34", remote=SPLIT or WPAIR)


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


def fused_params():
    """Kernel parameters of the fused family (after the dense ones)."""
    n = "M" if YT else "N"   # _yt: wc and beta index this kernel's rows (Y's columns)
    return f"""\t.param .align 128 .b8 p_tmL[128],     // L   BF16 {{r, M}}, box {{wk, 128}}, swizzle 2*wk bytes
\t.param .align 128 .b8 p_tmU[128],     // U   BF16 {{r, N}}, box {{wk, {BN}}}, swizzle 2*wk bytes
\t.param .u64 p_wc,                    // fp32 [{n}] or 0 (absent: 1)
\t.param .u64 p_beta,                  // fp32 [{n}] or 0 (absent: 0)
\t.param .u32 p_N,{"                     // M: the length of wc and beta" if YT else ""}
\t.param .u32 p_lora_chunks,           // low-rank chunks per tile, ceil(r / rc); 0 = none
\t.param .u32 p_lora_slots,            // low-rank ring slots used (<= LORA_SLOTS)
\t.param .u32 p_lora_sub,              // boxes per chunk, rc / wk
\t.param .u32 p_lora_ksteps,           // k16 steps per box, wk / 16
\t.param .u32 p_lora_wk,               // ranks per box: 16, 32 or 64
\t.param .u32 p_lora_deschi,           // wgmma descriptor high word for 2*wk-byte rows
""".replace("LORA_SLOTS", str(LORA_SLOTS))


def tfull_doc():
    if TSPLIT:
        return f"""//   tfull[t]  count {TRANSFORM_WARPS // 2}  (tfull_lo) one arrive per transform warp 0-3 after writing rows 0-127
//                      of slot t and fencing; the consumers' column-0-127 wgmmas wait on it.
//   tfull_hi[t] count {TRANSFORM_WARPS // 2} the same for warps 4-7, rows 128-255, columns 128-255."""
    return (f"//   tfull[t]  count {(2 if SPLIT and not BULK else 1) * TRANSFORM_WARPS + (8 if ASSIST else 0)}  one arrive per transform warp after writing slot t and fencing"
            f"{' (and per consumer warp: consumer assist)' if ASSIST else ''}"
            f"{'; thread 0 also expects the peer' + chr(39) + 's 16384-byte bulk copy' if BULK else ''}.")


def tsplit_setup(L):
    """tsplit: the tfull_hi barriers sit after every other barrier."""
    return f"\tadd.u32 %bar_tfullhi, %sbase, {L['bar'] + 8 * (L['nbar'] - TSLOTS)};   // tfull_hi[{TSLOTS}]\n"


def xdone_off(L):
    """XDBUF: mbarrier `xdone` at %bar_full + this, after the kernel's barriers and skbulk's
    (nbar + 1); the two WGs' epilogue mode words follow it (+8 + 4 wg), all inside the
    barriers' 1024 bytes, before the converters' staging."""
    off = 8 * (L['nbar'] + 1)
    assert L['xstage'] >= L['bar'] + off + 16
    # the second writeback buffer lives in the staging: whole, and 1024-aligned (128B swizzle)
    assert XCONV_WARPS * XCONV_STAGE >= L['wbuf'] and L['xstage'] % 1024 == 0
    return off


def fused_setup(L, stages):
    return f"""\tadd.u32 %bar_lfull, %bar_tempty, {8 * TSLOTS};
\tadd.u32 %bar_lempty, %bar_lfull, {8 * LORA_SLOTS};
\tadd.u32 %lbase, %sbase, {L['lora']};              // low-rank ring (slot size set at run time)
"""


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
    if BN == 256:
        return "\tshl.b32 %lsub_u, %lwk, 9;                  // U box: 256 rows * 2*wk bytes\n"
    return f"\tmul.lo.u32 %lsub_u, %lwk, {2 * BN};              // U box: {BN} rows * 2*wk bytes\n"


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
\tmad.lo.u32 %r52, %r42, {AFF_SLICE}, %sbase;
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
    if YT:
        aff_fill_rows(e, L)
        return
    e(f"""\t// ---- fused: this thread's columns of the WG's wc / beta slice (read by the affine) ----
\tmad.lo.u32 %r52, %r42, {AFF_SLICE}, %sbase;
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
\tmov.u32 %liph, 0;
\tsetp.eq.u32 %plissue, %r40, 0;            // thread 0 of {CWG0} issues the low-rank loads""")


def u_load(tag):
    """The U box of a low-rank chunk: one CTA loads its own; in the pair rank 0 multicasts
    it to both CTAs (same slot offset; each CTA's lfull, armed by its own issuer with the
    L + U bytes, receives them), like W."""
    copy = "\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
    if CL == 1:
        return f"{copy} [%r16], [%tmU, {{%r17, %n0}}], [%r13];\n"
    return (f"\t@!%prank0 bra L_lissue_nou_{tag};\n"
            f"{copy}.multicast::cluster [%r16], [%tmU, {{%r17, %n0}}], [%r13], %mask;\n"
            f"L_lissue_nou_{tag}:\n")


def lowrank_boxes(chunk, box, label, m0, u_copy):
    """The bulk copies of low-rank chunk `chunk`: its %lsub L boxes to %r15 and U boxes to
    %r16 on (U by `u_copy`, which uses %r16, %r17 and the barrier %r13), rows from `m0`, the
    box counter in `box`; %r17 = the box's first rank."""
    return f"""\tmul.lo.u32 %r17, {chunk}, %lsub;
\tmul.lo.u32 %r17, %r17, %lwk;                 // first rank of the chunk
\tmov.u32 {box}, 0;
{label}:
\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r15], [%tmL, {{%r17, {m0}}}], [%r13];
{u_copy}\tadd.u32 %r15, %r15, %lsub_l;
\tadd.u32 %r16, %r16, %lsub_u;
\tadd.u32 %r17, %r17, %lwk;
\tadd.u32 {box}, {box}, 1;
\tsetp.lt.u32 %p5, {box}, %lsub;
\t@%p5 bra {label};
"""


def lora_issue(e, tag):
    """Thread 0 of the first consumer WG loads chunk %li of this tile's L and U into ring slot %lis (after
    both warpgroups released it), onto lfull with the chunk's byte count."""
    e(f"""\t// ---- low-rank load ({tag}): chunk %li of the tile into slot %lis ----
\t@!%plissue bra L_lissue_skip_{tag};""")
    lora_consts(e)
    e(f"""
\tsetp.ge.u32 %p5, %li, %lchunks;
\t@%p5 bra L_lissue_skip_{tag};
\tmul.lo.u32 %r10, %lis, 8;
\tadd.u32 %r11, %bar_lempty, %r10;
\txor.b32 %r12, %liph, 1;""")
    e.wait("%r11", "%r12", "lempty")
    e(f"""\tadd.u32 %r13, %bar_lfull, %r10;
\tadd.u32 %r14, %lbytes_l, %lbytes_u;
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r13], %r14;
\tmad.lo.u32 %r15, %lis, %r14, %lbase;         // L slot; U follows it
\tadd.u32 %r16, %r15, %lbytes_l;
{lowrank_boxes("%li", "%r18", f"L_lissue_box_{tag}", "%m0", u_load(tag))}\tadd.u32 %li, %li, 1;
\tadd.u32 %lis, %lis, 1;
\tsetp.eq.u32 %p5, %lis, %lslots;
\t@%p5 mov.u32 %lis, 0;
\t@%p5 xor.b32 %liph, %liph, 1;
L_lissue_skip_{tag}:
\t// the issuing lane may have waited alone: reconverge the warp before any .aligned op
\tbar.warp.sync 0xffffffff;""")


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
    e(f"""\t// ---- affine: acc = wc[n] * (alpha * acc) + beta[n], wc / beta from this WG's slice ----
\t// (the copies this thread issued at the tile start, then every thread's of the WG)
\tcp.async.wait_group 0;
\tadd.u32 %r46, %r42, 1;                      // named barrier id 1 / 2
\tbar.sync %r46, 128;
\tmad.lo.u32 %r50, %r42, {AFF_SLICE}, %sbase;""")
    if YT:
        # _yt: wc / beta of the thread's two rows (Y's columns) apply to all its accumulators
        e(f"""\tand.b32 %r51, %r20, 63;
\tshl.b32 %r51, %r51, 2;
\tadd.u32 %r50, %r50, %r51;
\tadd.u32 %r50, %r50, {L['aff']};                 // wc of row r; r + 8 at +32; beta at +1024
\tld.shared.f32 %f4, [%r50];
\tld.shared.f32 %f5, [%r50+32];
\tld.shared.f32 %f6, [%r50+1024];
\tld.shared.f32 %f7, [%r50+1056];""")

        def rows_body(folded):
            for i in range(BN // 2):
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
    e("""\t// ---- low-rank: acc += L . U^T, chunk by chunk through the ring ----
\tmov.u32 %r53, 0;                          // chunk
\tmul.lo.u32 %r54, %r42, %lrowb;
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
                half_rows = ("\tshl.b32 %xr0, %lrowb, 7;" if BN == 256 else
                             f"\tmul.lo.u32 %xr0, %lrowb, {BN // 2};             // U rows {BN // 2}..: + {BN // 2} rows")
                q = BN // 4
                e(f"""\twgmma.mma_async.sync.aligned.m64n{BN // 2}k16.f32.bf16.bf16 {acc_list(0, q)}, %rd4, %rd5, %ptrue, 1, 1, 0, 0;
{half_rows}
\tadd.u32 %xr0, %xr0, %r56;
\tadd.u32 %xr0, %xr0, {32 * kk};
\tshr.u32 %xr0, %xr0, 4;
\tand.b32 %xr0, %xr0, 0x3FFF;
\tmov.b64 %rd15, {{%xr0, %ldeschi}};
\twgmma.mma_async.sync.aligned.m64n{BN // 2}k16.f32.bf16.bf16 {acc_list(q, 2 * q)}, %rd4, %rd15, %ptrue, 1, 1, 0, 0;""")
                continue
            e(f"\twgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {acc_list()}, %rd4, %rd5, %ptrue, 1, 1, 0, 0;")
        e("\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 0;")
        e("\tbra L_lr_kdone;" if steps != 1 else "")
    refill = ("the W producer or the next tile's request refills it" if LTAIL else
              "the issuer refills it with a later chunk")
    e(f"""L_lr_kdone:
\t// slot read: one arrive per warp, then {refill}
\tbar.warp.sync 0xffffffff;""")
    if LTAIL:
        e("""\tsetp.ge.u32 %p5, %r53, %lslots;
\t@!%p5 bra L_lr_ring_free;
\t// ltail: the chunk's W slot is free for the W producer (tempty: one arrive per warp)
\tmul.lo.u32 %r12, %t, 8;
\tadd.u32 %r13, %bar_tempty, %r12;""")
        arrive(e, "%p1", "%r13", "%r14")
        advance(e, "%t", "%tph", TSLOTS)
        e("""\tbra L_lr_next;
L_lr_ring_free:""")
    e("""\tmul.lo.u32 %r10, %ls, 8;
\tadd.u32 %r11, %bar_lempty, %r10;""")
    arrive(e, "%p1", "%r11", "%r12")
    e("""\tadd.u32 %ls, %ls, 1;
\tsetp.eq.u32 %p5, %ls, %lslots;
\t@%p5 mov.u32 %ls, 0;
\t@%p5 xor.b32 %lph, %lph, 1;""")
    if LTAIL:
        # the ring carries chunks 0 .. lslots-1 only, all requested when the tile starts
        e("L_lr_next:")
    else:
        lora_issue(e, "stream")
    e("""\tadd.u32 %r53, %r53, 1;
\tbra L_lr_chunk;
L_lr_done:""")


def lowrank_chunk_slot(e, l_what="L slot", L=None):
    """At L_lr_chunk: to L_lr_done once chunk %r53 reaches %lchunks; else wait for ring slot
    %ls (lfull, parity %lph), %r55 = its L box, %r56 = its U box.  LTAIL: chunks from
    %lslots on are in the W ring's next slot %t (tfull, parity %tph) instead."""
    e("""\tsetp.ge.u32 %p5, %r53, %lchunks;
\t@%p5 bra L_lr_done;""")
    if LTAIL:
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
    if LTAIL:
        e("L_lr_have:")


def spin_ns(e, label, ns, nap, t0, t1, pred):
    """Measurement flags' wait: spin on %globaltimer until `ns` nanoseconds have passed
    (nanosleep `nap` between reads); leaves `pred` false."""
    e(f"""\tmov.u64 {t0}, %globaltimer;
{label}:
\tnanosleep.u32 {nap};
\tmov.u64 {t1}, %globaltimer;
\tsub.u64 {t1}, {t1}, {t0};
\tsetp.lt.u64 {pred}, {t1}, {ns};
\t@{pred} bra {label};""")


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
// Per chunk: wait tfull, fence, four wgmmas on the slot with the chunk's A fragments{" (tsplit:" + chr(10) + "// columns 0-127 after tfull_lo, then columns 128-255 after tfull_hi)" if TSPLIT else ""},
// commit; wait_group 1 (the previous chunk is done -> free its slot); then load and
// dequantize the next chunk's A while the tensor core works.
// =====================================================================================
L_consumer:
\tsetmaxnreg.inc.sync.aligned.u32 {REG_CONSUMER};""")
    emit_lut_setup(e)
    e(f"""\tld.param.f32 %alpha, [p_alpha];
\tsub.u32 %r40, %thr, {TRANSFORM_THREADS};
\tshr.u32 %r42, %r40, 7;                     // consumer WG index 0/1
{CSTAG_SETUP if CSTAG_ON else ""}\tand.b32 %r43, %r40, 127;                   // thread in WG
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
    if CL == 2 and (SPLIT or WPAIR):
        # release_prev_slot's mapa runs on every chunk, also the first, whose arrive is
        # predicated off (%ppend): give it a valid slot barrier to map (PTX asks mapa for
        # a valid shared::cta address)
        e("\tmov.u32 %tprev, 0;")
    if XSELF_ON:
        e("\tmov.u32 %cself, 1;                          // xself: the first unit's first K blocks still to convert")
    if TLINE:
        e("\t.reg .b32 %tlu, %tlf, %tl0;\n\tmov.u32 %tlu, 2;                           // tline: unit u's first event, 2 + 4u\n\tmov.u32 %tlf, 1;")
    if FUSED:
        fused_consumer_setup(e)
    if ASSIST:
        assert not SPLIT
        e("\t// consumer assist: this thread converts W row (thread - 128), half 1, of every chunk")
        row_invariants(e, fmt, L, 0, "%r40", "%ca0")
    unit_first(e, CUR, "cfirst")
    if WALKPRE_ON:
        e("\t.reg .b32 %ntl, %nkb, %nke, %nm0, %nn0;   // walkpre: the next unit")
    e("""L_c_tile:
\tsetp.ge.u32 %p0, %tile, %ntiles;
\t@%p0 bra L_c_done;""")
    tile_coords(e)
    if WALKPRE_ON:
        e("L_c_tile2:")
    if FUSED:
        e("\tmov.u32 %li, 0;")
        e("""\t// request this tile's first low-rank chunks now, so they land during the K loop
\t// (only a unit that starts the tile finishes it: a stream-K contributor skips them)
\tsetp.ne.u32 %p5, %kb, 0;
\t@%p5 bra L_lissue_pro_done;""")
        lora_consts(e)
        aff_fill(e, L)
        if LPREFETCH:
            lora_l2_prefetch(e)
        # The bound is the block number, not %li: only the issuing lane advances %li, and
        # every lane of its warp must meet the same number of bar.warp.sync in lora_issue.
        for k in range(LORA_SLOTS):
            e(f"\tsetp.le.u32 %p5, %lslots, {k};\n\t@%p5 bra L_lissue_pro_done;")
            lora_issue(e, f"pro{k}")
        e("L_lissue_pro_done:")
    if XSELF_ON:
        emit_self_fill(e, fmt, L)
    e("""\t// prologue: A chunk 0 of the first stage
\tmul.lo.u32 %r10, %s, 8;
\tadd.u32 %r11, %bar_full, %r10;""")
    e.wait("%r11", "%ph", "full_c0")
    tline(e, ("%tlu", 0), TRANSFORM_THREADS)
    e(f"\tmad.lo.u32 %r41, %s, {L['stage']}, %sbase;")
    if ASSIST:
        assist_convert(e, fmt, 0, L)
    load_a_chunk(e, fmt, 0, xr, xq, L)
    e("""\tsetp.ne.u32 %pacc, 0, 0;                    // first wgmma of the unit overwrites
\tsub.u32 %ks, %ke, %kb;                      // stages of the unit (counted down)
L_c_k:""")
    for h in range(2):
        a_r, a_q = (xr, xq) if h == 0 else (yr, yq)
        if h == 1 and HALFK:
            e("""\t// halfk: the unit's last stage may end at K - 64 (tested out of line: two
\t// instructions a stage here)
\tsetp.eq.u32 %p0, %ks, 1;
\t@%p0 bra L_c_halfk_test;
L_c_halfk_back:""")
        e(f"\t// ---- chunk {h} of stage s: wait for its bf16 W slot ----")
        e("""\tmul.lo.u32 %r12, %t, 8;
\tadd.u32 %r13, %bar_tfull, %r12;""")
        e.wait("%r13", "%tph", "tfull")
        if h == 0 and CSTAG_ON:
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
        if h == 0:
            e("\tsetp.eq.u32 %pacc, 0, 0;")
        e("\twgmma.wait_group.sync.aligned 1;")
        release_prev_slot(e)
        e("""\tmov.u32 %tprev, %t;
\tsetp.eq.u32 %ppend, 0, 0;""")
        advance(e, "%t", "%tph", TSLOTS)
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
            arrive(e, "%p1", "%r11", "%r12", remote=not WPAIR)
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
    if HALFK:
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
    if WALKPRE_ON:
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
    if FUSED:
        emit_affine_and_lowrank(e, L)
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
    if WALKPRE_ON:
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
    if CSTAG_ON:
        e(f"""L_cstag:
\t// cstag: {CSTAG_NS} ns once, after the first W slot is full (out of line: never falls through)""")
        spin_ns(e, "L_cstag_wait", CSTAG_NS, 64, "%cst0", "%cst1", "%pcst")
        e("\tbra L_cstag_back;")
    e("L_c_done:")
    tline(e, 26, TRANSFORM_THREADS)
    e("""\t// the last bulk stores must finish reading shared memory before the CTA exits
\tsetp.eq.u32 %p0, %r43, 0;
\t@%p0 cp.async.bulk.wait_group 0;""")
    tline(e, 27, TRANSFORM_THREADS)
    e("L_exit:")
    if CL == 2:
        # (the W-prepared pair's producer threads 0 and 32 reach it apart from their warps,
        # which left at once: not .aligned there)
        al = "" if WPAIR else ".aligned"
        e(f"""\t// teardown: no CTA leaves while its peer may still write its slots or arrive on
\t// its barriers
\tbarrier.cluster.arrive.release{al};
\tbarrier.cluster.wait.acquire{al};""")
    e("\tret;")


# The _x kernels' own parameters, after the stream-K ones (ptx/ABI.md).
def x_params():
    """The _x kernels' parameters; the narrow tile's order table has an entry a unit."""
    if upi() == 8:
        return X_PARAMS
    return X_PARAMS.replace("tiles_n * nks u32, rank -> item kb * tiles_n + nt",
                            f"tiles_n * nks * {upi()} u32, unit -> 8 item + b")


X_PARAMS = """\t.param .u64 p_x_W,                    // W: N x K e2m1, K/2 bytes a row (the converters' source)
\t.param .u64 p_x_SFW,                  // W's scale atoms (128x4 layout)
\t.param .u64 p_x_Wp,                   // the prepared W the converters write and p_tmW maps
\t.param .u64 p_x_flags,                // unit count, "all converted", pad to 64 B; then per item kb * tiles_n + nt 8 u32 flags
\t.param .u32 p_x_epoch,                // this launch's flag value (nonzero, changes every launch)
\t.param .u32 p_x_N,
\t.param .u32 p_x_K,                    // a multiple of 64 (NVFP4) / 128 (MXFP4)
\t.param .u64 p_x_order                 // the conversion order (0: the identity): tiles_n * nks u32, rank -> item kb * tiles_n + nt
"""

SK_PARAMS = """\t.param .u64 p_sk_ws,                 // stream-K workspace (partial sums, flags) or 0: every tile whole
\t.param .u32 p_sk_dp_tiles,           // tiles walked whole; the rest are split by K iterations
\t.param .u32 p_sk_q,                  // split iterations per cluster (T = G*q + r)
\t.param .u32 p_sk_r,                  // clusters 0..r-1 take q + 1
\t.param .u32 p_sk_epoch               // this launch's flag value (changes every launch)
"""
SK_BATCH = 2             # 16-byte partial loads in flight per owner thread
# FP4LR_GEN_EXPERIMENT=skbulk (the _x kernels): a stream-K owner brings each peer's 128 KiB
# partial into the W ring with bulk copies (one thread, onto an mbarrier in the barrier area's
# slack) and adds it from shared memory, instead of 32 16-byte global loads a thread with
# about ten in flight (2-3 us at the end of every split launch: bench/results/experiments).
# The ring is free then: an owner unit that does not reach its tile's end is the last unit of
# its CTA's range, so no W chunk is in flight or still to come.
SKBULK = "skbulk" in EXPERIMENTS
SKBULK_ON = False   # set per kernel by emit_kernel
SK_SLOT = 256 * 128 * 4    # one cluster rank's partial: 256 consumer threads x 128 fp32


def emit_stream_k_fixup(e, L):
    """After a unit's K loop.  A unit that does not start its tile (kb > 0) is a
    contributor: it stores its raw sums into its cluster rank's partial slot, then sets the
    slot's flag to the launch epoch (release) and goes to its next unit.  A unit that starts
    the tile but does not reach its end is the owner: it waits for the flags of the clusters
    b+1, b+2, ... whose ranges start inside the tile (they did that part first in their
    ranges, the owner does its part last in its range, so nobody waits for a waiter) and adds
    their partials in that order (deterministic), then finishes the tile as usual.
    Workspace: G*CL slots of 128 KiB (thread t's accumulator i at slot + (i/4)*4096 +
    16t + 4(i%4): coalesced), then G*CL u32 flags."""
    skph_init = ("\tmov.u32 %skph, 0;                           // skbulk: this is the CTA's last unit, so once "
                 "a launch\n" if SKBULK_ON else "")
    e("\t// ---- stream-K: a unit that does not start its tile hands its sums to the tile's owner ----")
    sk_consts(e)
    unit_bounds(e, CUR)
    e(f"""\tsetp.eq.u32 %psk, %kb, 0;
\t@%psk bra L_sk_owner;
\tld.param.u32 %skep, [p_sk_epoch];
\tmad.lo.u32 %r10, %tile0, {CL}, %crank;       // this cluster rank's slot
\tsub.u32 %r11, %thr, {TRANSFORM_THREADS};                    // consumer thread 0..255
\tmul.wide.u32 %rd6, %r10, {SK_SLOT};
\tadd.s64 %rd6, %rd6, %skws;
\tmul.wide.u32 %rd7, %r11, 16;
\tadd.s64 %rd6, %rd6, %rd7;""")
    for j in range(BN // 8):
        e(f"\tst.global.v4.f32 [%rd6+{4096 * j}], {{%acc{4*j}, %acc{4*j+1}, %acc{4*j+2}, %acc{4*j+3}}};")
    e(f"""\t// every consumer thread stored: one release of the flag publishes the slot
\tbar.sync 4, 256;
\tsetp.eq.u32 %psk, %r11, 0;
\tmul.lo.u32 %r12, %tstride, {CL};
\tmul.wide.u32 %rd8, %r12, {SK_SLOT};
\tadd.s64 %rd8, %rd8, %skws;                  // flags follow the slots
\tmul.wide.u32 %rd9, %r10, 4;
\tadd.s64 %rd8, %rd8, %rd9;
\t@%psk st.release.gpu.global.u32 [%rd8], %skep;
\tbra L_c_next;
L_sk_owner:
\tsetp.eq.u32 %psk, %ke, %nks;
\t@%psk bra L_sk_done;                        // the whole tile: nothing to add
{skph_init}\tld.param.u32 %skep, [p_sk_epoch];
\tsub.u32 %r12, %tile, %skdp;
\tadd.u32 %r12, %r12, 1;
\tmul.lo.u32 %r12, %r12, %nks;                // split iteration where the tile ends
\tadd.u32 %r13, %tile0, 1;                    // b' = the next cluster
\tsub.u32 %r11, %thr, {TRANSFORM_THREADS};
\tmul.wide.u32 %rd9, %r11, 16;
\tld.param.u32 %r17, [p_sk_q];
\tld.param.u32 %r18, [p_sk_r];
\tmul.lo.u32 %r15, %tstride, {CL};
\tmul.wide.u32 %rd10, %r15, {SK_SLOT};
\tadd.s64 %rd10, %rd10, %skws;                // flags
L_sk_peer:
\tsetp.ge.u32 %psk, %r13, %tstride;
\t@%psk bra L_sk_done;
\tmin.u32 %r14, %r13, %r18;
\tmad.lo.u32 %r14, %r13, %r17, %r14;          // where b' starts: b'*q + min(b', r)
\tsetp.ge.u32 %psk, %r14, %r12;
\t@%psk bra L_sk_done;                        // past the tile: no more partials
\tsetp.eq.u32 %psk, %r17, 0;
\tsetp.ge.and.u32 %psk, %r13, %r18, %psk;
\t@%psk bra L_sk_next_peer;                   // an empty range (q = 0): no partial
\tmad.lo.u32 %r10, %r13, {CL}, %crank;
\tmul.wide.u32 %rd8, %r10, 4;
\tadd.s64 %rd8, %rd8, %rd10;
L_sk_spin:
\tld.acquire.gpu.global.u32 %r16, [%rd8];
\tsetp.eq.u32 %psk, %r16, %skep;
\t@%psk bra L_sk_ready;
\tnanosleep.u32 100;
\tbra L_sk_spin;
L_sk_ready:""")
    if SKBULK_ON:
        nb = 4
        e(f"""\t// skbulk: the peer's partial comes by bulk copies into the W ring (idle: the last unit)
\tfence.proxy.async.shared::cta;              // a previous partial's ld.shared before the copy overwrites it
\tbar.sync 4, 256;                            // both WGs' wgmmas (wait_group 0) and reads are done
\tadd.u32 %r15, %bar_full, {8 * L['nbar']};
\tadd.u32 %r14, %sbase, {L['t']};
\tsetp.eq.u32 %psk, %r11, 0;
\tmul.wide.u32 %rd6, %r10, {SK_SLOT};
\tadd.s64 %rd6, %rd6, %skws;
\t@%psk fence.proxy.async.global;             // the peer's stores (acquired above) before async-proxy reads
\t@%psk mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r15], {SK_SLOT};""")
        for i in range(nb):
            e(f"\t@%psk cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r14+{i * SK_SLOT // nb}], "
              f"[%rd6+{i * SK_SLOT // nb}], {SK_SLOT // nb}, [%r15];")
        e.wait("%r15", "%skph", "skbulk")
        e("""\txor.b32 %skph, %skph, 1;
\tshl.b32 %r16, %r11, 4;
\tadd.u32 %r16, %r16, %r14;                  // this thread's 16 bytes of each 4 KiB row""")
        for b in range(32 // 4):
            for j in range(4):
                jj = 4 * b + j
                e(f"\tld.shared.v4.f32 {{%skf{4*j}, %skf{4*j+1}, %skf{4*j+2}, %skf{4*j+3}}}, [%r16+{4096 * jj}];")
            for i in range(16):
                e(f"\tadd.f32 %acc{16*b+i}, %acc{16*b+i}, %skf{i};")
    else:
        e(f"""\tmul.wide.u32 %rd6, %r10, {SK_SLOT};
\tadd.s64 %rd6, %rd6, %skws;
\tadd.s64 %rd6, %rd6, %rd9;""")
        for b in range(BN // 8 // SK_BATCH):
            for j in range(SK_BATCH):
                jj = SK_BATCH * b + j
                e(f"\tld.global.v4.f32 {{%skf{4*j}, %skf{4*j+1}, %skf{4*j+2}, %skf{4*j+3}}}, [%rd6+{4096 * jj}];")
            for i in range(4 * SK_BATCH):
                e(f"\tadd.f32 %acc{4*SK_BATCH*b+i}, %acc{4*SK_BATCH*b+i}, %skf{i};")
    e("""L_sk_next_peer:
\tadd.u32 %r13, %r13, 1;
\tbra L_sk_peer;
L_sk_done:
\t// the flag waits may have split the warps: reconverge before the .aligned operations
\tbar.warp.sync 0xffffffff;""")


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
    buf = q % WB_STAGES
    if XDBUF and q == 0:
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
    elif XDBUF:
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
        e(f"""\t// chunk {q}{"" if keep == WB_STAGES - 1 else f" (the previous tile's last store read this buffer: wait for all)"}
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
\tadd.u32 %r58, %n0, {EPI_COLS * q};   // epinostore: no bulk store""")
    else:
        e(f"""\tfence.proxy.async.shared::cta;
\tbar.sync %r46, 128;
\tadd.u32 %r58, %n0, {EPI_COLS * q};
\t@%p2 cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%tmY, {{{coords}}}], [%r53];
\t@%p2 cp.async.bulk.commit_group;""")
    if q == epi_chunks() - 1:
        tline(e, 40, TRANSFORM_THREADS, "%tl0")


CHUNK_WORDS = {4: "Four", 5: "Five", 8: "Eight"}


def epi_buffers_doc(L):
    """Which staging buffer an epilogue chunk uses, for the epilogue's comment."""
    half = f"this WG's {L['wbuf'] // 2 // 1024} KiB half"
    if XDBUF:
        return (f"chunk q uses the own buffer ({half}), odd chunks\n\t// the converters' staging "
                "instead once they have left (xdone; two buffers)")
    return f"chunk q uses staging buffer q%{WB_STAGES} ({half})"


def wb_wait_keep(q):
    """The bulk groups chunk q's wait may leave outstanding: those committed after the last
    store that read its buffer (q % WB_STAGES).  WB_STAGES - 1 inside a tile; for the first
    chunks of a tile, the previous tile's stores after that buffer's last use there, plus this
    tile's before chunk q (0 for chunk 0 of the narrow tile: five chunks over two buffers end
    on buffer 0).  tools/writeback_check.py checks the result from the PTX."""
    if q >= WB_STAGES:
        return WB_STAGES - 1
    e = epi_chunks()
    last = q + WB_STAGES * ((e - 1 - q) // WB_STAGES)   # the previous tile's last chunk on q's buffer
    return min(WB_STAGES - 1, (e - 1 - last) + q)


def wb_wait_doc():
    """wait_group.read's count in the plain epilogue's header comment."""
    keeps = [wb_wait_keep(q) for q in range(epi_chunks())]
    if len(set(keeps)) == 1:
        return str(keeps[0])
    return ", ".join(f"{k} at chunk {q}" for q, k in enumerate(keeps) if k != WB_STAGES - 1) + \
        f", else {WB_STAGES - 1}"


def epi_chunks():
    """The epilogue's chunks: the tile's BN columns in EPI_COLS-column pieces."""
    return BN // EPI_COLS


# FP4LR_GEN_EXPERIMENT=epistg (the 256-wide non-swapped _x kernels): the epilogue stores Y
# with 16-byte global stores from a per-warp shared scratch (stmatrix in, ld.shared out)
# instead of bulk tensor stores from WG-wide staging: no named barriers, no proxy fence, no
# wait for a store's reads (timing only bounds: without any epilogue the dense _x kernels ran
# 4-6 % faster, without its bulk stores 0.5-3.7 %; H200, 2026-12-04).  The host passes Y, its
# row stride and M after the _x parameters (every kernel ignores parameters it does not
# declare).  Measured (H200, 2026-12-04, 2 rounds, 6 shapes): correct (GPU suite and the three
# sanitizers clean) but slower, NVFP4 dense 0.992, fused 0.994, MXFP4 dense 0.989: opt-in.
# Since the converters' flag index comes from registers (the identity order, 2026-12-04) the
# NVFP4 fused epistg kernel spills 16 bytes; the dense ones still build clean.
EPISTG = "epistg" in EXPERIMENTS
EPISTG_ON = False   # set per kernel by emit_kernel
# the _w<n>_yt kernels' last parameter: K, for HALFK (read by the NVFP4 ones; the family's
# MXFP4 kernels declare it too, so that both formats share one parameter list)
WYT_PARAMS = """\t.param .u32 p_K                        // K (a multiple of 64 / 128): where the last K block ends
"""


def k_param():
    """The parameter that holds K (HALFK's test): the _x kernels' p_x_K, the _w_yt kernels' p_K."""
    return "p_x_K" if XCONV else "p_K"


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
    assert BN == 256 and not YT
    assert WB_STAGES * L['wbuf'] >= 8 * 2048, "epistg: the scratch is the staging's first 16 KiB"
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
                    if FUSED:
                        e(f"\tcvt.rn.bf16x2.f32 {reg}, %acc{i+1}, %acc{i};")
                    else:
                        e(f"{alpha_mul(i, '%f0', folded)}{alpha_mul(i + 1, '%f1', folded)}"
                          f"\tcvt.rn.bf16x2.f32 {reg}, %f1, %f0;")
                e(f"""\txor.b32 %et3, %eo1, {2 * p};
\tmad.lo.u32 %et3, %et3, 16, %eo0;            // pair {p}: 8-column groups {2 * p}, {2 * p + 1} of the chunk
\tstmatrix.sync.aligned.m8n8.x4.shared.b16 [%et3], {{{', '.join(regs)}}};""")
        e(f"\t// chunk {q}: columns {64 * q}..{64 * q + 63}")
        if FUSED:
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
    if EPISTG_ON:
        emit_epilogue_direct(e, L)
        return
    if YT:
        emit_epilogue_transposed(e, L)
        return
    # the 16-byte unit u of staging row r sits at u ^ phase: 128B swizzle (128-byte rows)
    # phase = r % 8; 64B swizzle (64-byte rows, four units) phase = (r / 2) % 4
    if EPI_COLS == 64:
        phase, rowshift = "\tand.b32 %r48, %r47, 7;                      // 128B swizzle phase", 7
    else:
        assert EPI_COLS == 32
        phase = ("\tshr.u32 %r48, %r47, 1;\n"
                 "\tand.b32 %r48, %r48, 3;                      // 64B swizzle phase: (row / 2) % 4")
        rowshift = 6
    e(f"""\t// ---- epilogue: alpha * acc -> bf16 -> swizzled staging -> bulk tensor store ----
\t// {CHUNK_WORDS[epi_chunks()]} {EPI_COLS}-column chunks; {epi_buffers_doc(L)}.
\t// Before writing a buffer the WG's issuing thread waits until the store that used it
\t// last has finished reading (wait_group.read {"1, or 0 with one buffer" if XDBUF else wb_wait_doc()}), then the WG synchronises.
\tadd.u32 %r46, %r42, 1;                      // named barrier id 1 / 2
\tand.b32 %r47, %r20, 63;                     // row inside the WG's 64 rows
{phase}
\tshl.b32 %r49, %r47, {rowshift};                      // row * {2 * EPI_COLS}
\tshl.b32 %r50, %r21, 2;                      // 4c
\tadd.u32 %r49, %r49, %r50;
{EPI_WG_FIRST_ROW.format("first row of the WG's store")}""")
    for q in range(epi_chunks()):
        epilogue_chunk_begin(e, q, L)

        def chunk_body(folded, q=q):
            for j in range(EPI_COLS // 8):
                i = EPI_COLS // 2 * q + 4 * j
                if FUSED:   # alpha was applied with the affine
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
\tst.shared.b32 [%r57+{16 * EPI_COLS}], %r56;            // row r+8 (same swizzle phase)""")
        if FUSED:
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
\t// {CHUNK_WORDS[epi_chunks()]} {EPI_COLS}-column chunks of C ({EPI_COLS}-row blocks of Y); {epi_buffers_doc(L)},
\t// with the same wait_group.read / named-barrier protocol as the plain epilogue.
\tadd.u32 %r46, %r42, 1;                      // named barrier id 1 / 2
\tshr.u32 %r47, %lane, 3;                     // m: the {"x2 matrix (lanes 16-31: as 0-15)" if FUSED else "x4 matrix"} whose row this lane addresses
\tand.b32 %r48, %lane, 7;                     // rho: that row (a C column, a Y row)""")
    if FUSED:
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
        if FUSED:
            # alpha was applied with the affine; one x2 (rows r, r+8 of columns 8j..) at a
            # time: the fused consumer has no registers for four
            for j in range(EPI_COLS // 8):
                i = EPI_COLS // 2 * q + 4 * j
                e(f"""\tcvt.rn.bf16x2.f32 %r55, %acc{i+1}, %acc{i};
\tcvt.rn.bf16x2.f32 %r56, %acc{i+3}, %acc{i+2};
\tstmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%r54+{1024 * j}], {{%r55, %r56}};""")
            epilogue_chunk_store(e, q, "%r51, %r58")
            continue
        # the dense family: EPI_COLS / 16 x4 stores a chunk (four, or two in the narrow tile)

        def chunk_body(folded, q=q):
            for p in range(EPI_COLS // 16):
                for k, reg in enumerate(regs):
                    i = EPI_COLS // 2 * q + 8 * p + 2 * k
                    e(f"""{alpha_mul(i, f"%f{2*k}", folded)}{alpha_mul(i + 1, f"%f{2*k+1}", folded)}\tcvt.rn.bf16x2.f32 {reg}, %f{2*k+1}, %f{2*k};""")
                e(f"\tstmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%r54+{2048 * p}], {{{', '.join(regs)}}};")
        alpha_paths(e, f"epi{q}", chunk_body)
        epilogue_chunk_store(e, q, "%r51, %r58")


PREP_THREADS = 256


def staging_row_address(e, row, base):
    """%r21 = base + 128 row | (row % 8) << 4: a converting thread's 128-byte staging row, its
    16-byte chunk q kept at q ^ (row % 8) (chunk_to_stage's staging_row of both callers)."""
    e(f"""\tshl.b32 %r21, {row}, 7;
\tadd.u32 %r21, %r21, {base};
\tand.b32 %r22, {row}, 7;
\tshl.b32 %r22, %r22, 4;
\tor.b32 %r21, %r21, %r22;""")


def chunk_to_stage(e, fmt, staging_row):
    """One thread converts one 64-element chunk of W into its 128-byte row of a warp's
    staging block: %r5 = chunk g (n * K/64 + j), %r7 = row n, %r8 = chunk j, %r1 = K, %rd0 =
    W, %rd1 = SFW (global); staging_row(e) sets %r21 = the row's address | (lane % 8) << 4.
    Clobbers %r9-%r13, %r20-%r23, %rd3, %rd4 and the transform's registers (the
    preparation kernel and the _x kernels' converter warps both emit it)."""
    chunk_load(e, fmt)
    chunk_convert(e, fmt, staging_row)


# %r10 += the byte of W row %r7 inside its 128x4 scale atom: (n%32)*16 + ((n%128)/32)*4
ATOM_ROW_BYTES = """\tand.b32 %r11, %r7, 31;
\tshl.b32 %r11, %r11, 4;
\tadd.u32 %r10, %r10, %r11;
\tshr.u32 %r11, %r7, 5;
\tand.b32 %r11, %r11, 3;
\tshl.b32 %r11, %r11, 2;
\tadd.u32 %r10, %r10, %r11;"""


def chunk_load(e, fmt, words=None, scale="%r12", vec=4):
    """chunk_to_stage's loads: the chunk's 8 fp4 words into `words` (default %wi0-7) and its
    scales into `scale` (the same inputs; clobbers %r9-%r11, %rd3, %rd4); `vec` words a load
    (4, or 2: the first fill, whose 16-byte loads of four chunks at once spill)."""
    words = words or [f"%wi{i}" for i in range(8)]
    blk = FORMATS[fmt][0]
    mxone = MXONE and fmt == "mxfp4"
    loads = "\n".join(f"\tld.global.nc.v{vec}.b32 {{{', '.join(words[i:i + vec])}}}, [%rd3{f'+{4 * i}' if i else ''}];"
                      for i in range(0, 8, vec))
    e(f"""\t// the chunk's 32 fp4 bytes: W + 32g (rows are K/2 bytes, so chunk g of the matrix)
\tmul.wide.u32 %rd3, %r5, 32;
\tadd.u64 %rd3, %rd0, %rd3;
{loads}
\t// its scales: atom (n/128, {"j" if blk == 16 else "j/2"}) of the 128x4 layout, byte (n%32)*16 + ((n%128)/32)*4{"" if blk == 16 else " + 2*(j%2)"}
\tshr.u32 %r9, %r1, {(4 * blk).bit_length() - 1};                       // atoms a 128-row block = K/{4 * blk}
\tshr.u32 %r10, %r7, 7;
\t{"mad.lo.u32 %r10, %r10, %r9, %r8;" if blk == 16 else "shr.u32 %r11, %r8, 1;" + chr(10) + chr(9) + "mad.lo.u32 %r10, %r10, %r9, %r11;"}
\tshl.b32 %r10, %r10, 9;                     // * 512
{ATOM_ROW_BYTES}""")
    if blk == 32:
        e("""\tand.b32 %r11, %r8, 1;
\tshl.b32 %r11, %r11, 1;
\tadd.u32 %r10, %r10, %r11;""")
    e("""\tcvt.u64.u32 %rd4, %r10;
\tadd.u64 %rd4, %rd1, %rd4;""")
    if fmt == "nvfp4":
        e(f"\tld.global.nc.u32 {scale}, [%rd4];              // scales of groups c = 0..3")
    else:
        what = "raw scales" if mxone else "scales"
        e(f"\tld.global.nc.u16 {scale}, [%rd4];              // {what}: groups 0,1 | 2,3")


def chunk_convert(e, fmt, staging_row, mx_fast=True):
    """chunk_to_stage's conversion of %wi0-7 and the scales in %r12 (chunk_load) into the
    row at staging_row (clobbers %r12, %r13, %r20-%r23 and the transform's registers);
    mx_fast as in transform_rows."""
    mxone = MXONE and fmt == "mxfp4" and mx_fast
    sc = [f"%sc{c}" for c in range(4)]
    if fmt == "nvfp4":
        scales_nv4(e, "%r12", sc, 0)
    elif mxone:
        e("\tmov.b32 %sc3, %r12;")
    else:
        mx_scales(e, "%r12", sc, "%r13", scale_mx)
    staging_row(e)
    def store(e, p, q, vec):
        e(f"""\txor.b32 %r23, %r21, {q << 4};
\tst.shared.v4.b32 [%r23], {{{vec}}};   // logical chunk {q}""")

    transform_rows(e, fmt, 0, None, rows=[0], part="convert", store=store, mx_fast=mx_fast)


def emit_prep(fmt, pdl=False):
    """The W preparation kernel of a format: W (fp4 and its scale atoms) -> the prepared W
    the _w kernels load, N x K {f16 | bf16}, each 64-element chunk in the transform's order
    and scaling (transform_rows itself emits the conversion).  pdl: each CTA first releases
    the launch's programmatic dependent (griddepcontrol.launch_dependents; the _w<n>_yt
    kernel, which waits for this grid's completion before its first read of Wp)."""
    global F16, WPRE, FUSED, TSPLIT
    F16 = fmt == "nvfp4" and "bf16" not in EXPERIMENTS
    WPRE = FUSED = TSPLIT = False
    blk = FORMATS[fmt][0]
    optype = "f16" if F16 else "bf16"
    mxone = MXONE and fmt == "mxfp4"
    e = Emitter(1)
    name = prep_name(fmt, pdl)
    pdl_doc = """
// _pdl: each CTA first executes griddepcontrol.launch_dependents, so that the kernel the host
// launches after it as its programmatic dependent (the _w<n>_yt kernels: CU_LAUNCH_ATTRIBUTE_
// PROGRAMMATIC_STREAM_SERIALIZATION) may be scheduled once every CTA of this grid has started,
// and start its own loads while this grid converts; that kernel's W producer waits
// (griddepcontrol.wait: this grid complete, its stores visible) before its first copy of Wp.
// Without such a dependent the instruction does nothing; otherwise the same kernel.
//""" if pdl else ""
    e(f"""//
// {name}
//
// GENERATED by tools/gen_sm90a.py -- edit the generator, then run it; a test checks
// that this file equals the generator's output.
//
// The W preparation of the W-prepared (_w) dense kernels: converts W once per launch,
//     Wp[n, 64j + x] = the {optype} the transform warps of the _t kernels write for
//                      logical column x of W chunk j of row n,
// so a _w kernel's W ring is filled by bulk copies of Wp instead of converting W in the
// K loop.  Same values, K order and scaling as the transform (transform_rows emits both):
// {"e2m1 x ue4m3 in f16 as value * 2^-14 (the consumers undo 2^-28 in the epilogue)" if F16 else "e2m1 x ue8m0 in bf16, exact (one or two multiplies, chosen per warp)"}; inside
// a chunk, logical 16-byte chunk q = {{ W_0[q], W_1[q], W_2[q], W_3[q] }} (the kernels'
// K permutation, see their header).  Wp is N x K {optype}, rows K*2 bytes apart,
// unswizzled (the bulk copies swizzle it).
//
// One thread a 64-element chunk: chunk g = n*(K/64) + j reads W bytes 32g..32g+31 and the
// chunk's {64 // blk} scales from the 128x4 atom layout; its 128 output bytes (Wp bytes
// 128g..128g+127) go to the warp's 4 KiB of shared memory (row = lane, 16-byte chunk q at
// q ^ (lane % 8): conflict-free), and the warp then writes its 32 chunks' 4 KiB to Wp as
// eight fully coalesced 512-byte rows of 16-byte stores (one thread writing its own 128
// bytes made every store instruction touch 32 lines: ncu, H200, flux-qkv, 97 us for 70 MB).
// K is a multiple of {4 * blk} (the problem's rule), so every chunk is whole.  The grid is
// ceil(N*K/64 / {PREP_THREADS}) CTAs of {PREP_THREADS}; a thread past the last chunk converts the last one
// again{" (so every warp reaches the scale vote whole)" if mxone else ""} and nothing past the last chunk is stored.
//
// Shared memory: 0 bytes dynamic; static {PREP_THREADS * 128} (the warps' staging blocks).
//   total 0 bytes (dynamic shared memory; ptx/ABI.md lists this kernel's launch)
//{pdl_doc}
.version 8.0
.target sm_90a
.address_size 64

.visible .entry {name}(
\t.param .u64 p_W,                      // W: N x K e2m1, K/2 bytes a row
\t.param .u64 p_SFW,                    // W's scales, 128x4 atoms
\t.param .u64 p_Wp,                     // out: N x K {optype}
\t.param .u32 p_N,
\t.param .u32 p_K                       // a multiple of {4 * blk}; N * K / 64 < 2^30
)
.maxntid {PREP_THREADS}, 1, 1
{{
\t.reg .pred %p<8>{", %pmx" if mxone else ""};
\t.reg .b32 %r<64>;
\t.reg .b64 %rd<8>;
\t.reg .b16 %h<2>, %hs<2>;
\t.reg .f32 %f<2>, %fs<2>;
\t.reg .b32 %lut0, %lut1, %luth0, %luth1, %bfx126{", %mxt, %mxt2" if mxone else ""};
\t.reg .b32 %tw<16>, %wi<8>, %sc<4>, %cv<6>;
\t.shared .align 1024 .b8 stage[{PREP_THREADS * 128}];   // one 4 KiB row block a warp""")
    if pdl:
        e("\tgriddepcontrol.launch_dependents;           // the dependent kernel may be scheduled (header)")
    if pdl and "slowprep" in EXPERIMENTS:
        # measurement / test variant: every CTA waits 50 us after releasing its dependent and
        # before converting, so a dependent that reads Wp without griddepcontrol.wait (nogdwait)
        # reads what was there before (the tests' poison), and one that waits must still be right
        e("""\tmov.u64 %rd6, %globaltimer;
\tadd.u64 %rd7, %rd6, 50000;                 // slowprep: 50 us from now
$Lslowprep:
\tmov.u64 %rd6, %globaltimer;
\tsetp.lt.u64 %p7, %rd6, %rd7;
\t@%p7 bra $Lslowprep;""")
    emit_lut_setup(e)
    e(f"""\tld.param.u64 %rd0, [p_W];
\tcvta.to.global.u64 %rd0, %rd0;
\tld.param.u64 %rd1, [p_SFW];
\tcvta.to.global.u64 %rd1, %rd1;
\tld.param.u64 %rd2, [p_Wp];
\tcvta.to.global.u64 %rd2, %rd2;
\tld.param.u32 %r0, [p_N];
\tld.param.u32 %r1, [p_K];
\tshr.u32 %r3, %r1, 6;                       // K/64: chunks a row
\tmul.lo.u32 %r4, %r0, %r3;                  // chunks in all
\tmov.u32 %r5, %ctaid.x;
\tmov.u32 %r6, %tid.x;
\tmad.lo.u32 %r5, %r5, {PREP_THREADS}, %r6;                // chunk g
\tsub.u32 %r6, %r4, 1;
\tmin.u32 %r5, %r5, %r6;                     // past the end: the last chunk again, no store
\tdiv.u32 %r7, %r5, %r3;                     // row n
\tmul.lo.u32 %r8, %r7, %r3;
\tsub.u32 %r8, %r5, %r8;                     // chunk j of the row""")

    def staging_row(e):
        e("""\t// the thread's row of the warp's staging block: stage + 128*tid, chunk q at q ^ (lane % 8)
\tmov.u32 %r20, stage;
\tmov.u32 %r6, %tid.x;""")
        staging_row_address(e, "%r6", "%r20")

    chunk_to_stage(e, fmt, staging_row)
    e(f"""\t// ---- the warp's 32 chunks (4 KiB of Wp from chunk g0 = its lane 0's) as 8 rows of
\t// 512 bytes: store i, lane l writes 16 bytes at 512i + 16l = row 4i + l/8, chunk l%8 ----
\tbar.warp.sync 0xffffffff;
\tand.b32 %r24, %r6, 31;                      // lane
\tand.b32 %r25, %r6, 0xFFFFFFE0;
\tshl.b32 %r25, %r25, 7;
\tadd.u32 %r25, %r25, %r20;                   // the warp's block
\tshr.u32 %r26, %r24, 3;                      // l/8
\tand.b32 %r27, %r24, 7;                      // l%8
\tshl.b32 %r28, %r26, 7;
\tadd.u32 %r28, %r28, %r25;                   // row l/8 of the block
\txor.b32 %r29, %r27, %r26;
\tshl.b32 %r29, %r29, 4;
\tadd.u32 %r29, %r29, %r28;                   // even i: row phase l/8
\txor.b32 %r30, %r27, %r26;
\txor.b32 %r30, %r30, 4;
\tshl.b32 %r30, %r30, 4;
\tadd.u32 %r30, %r30, %r28;                   // odd i: row phase 4 + l/8
\tmov.u32 %r5, %ctaid.x;
\tmad.lo.u32 %r5, %r5, {PREP_THREADS}, %r6;
\tsub.u32 %r5, %r5, %r24;                     // g0
\tadd.u32 %r31, %r5, %r26;                    // the chunk of store 0's 16 bytes
\tmul.wide.u32 %rd5, %r5, 128;
\tadd.u64 %rd5, %rd2, %rd5;
\tmul.wide.u32 %rd6, %r24, 16;
\tadd.u64 %rd5, %rd5, %rd6;                   // Wp + 128*g0 + 16l""")
    for i in range(8):
        e(f"""\tld.shared.v4.b32 {{%r32, %r33, %r34, %r35}}, [{"%r29" if i % 2 == 0 else "%r30"}+{512 * i}];
\tadd.u32 %r36, %r31, {4 * i};
\tsetp.lt.u32 %p1, %r36, %r4;
\t@%p1 st.global.v4.b32 [%rd5+{512 * i}], {{%r32, %r33, %r34, %r35}};""")
    e("\tret;\n}")
    return "\n".join(e.lines) + "\n"


def main():
    # tw8 is measured on the one-CTA dense kernels only (its low-rank wgmma would need the
    # same split), so only those are emitted
    def is_prep(inst):
        return inst[1] in ("wprep", "wprep_pdl")

    def name_of(inst):
        return prep_name(inst[0], inst[1] == "wprep_pdl") if is_prep(inst) else entry_name(*inst)

    def emit_of(inst):
        return emit_prep(inst[0], inst[1] == "wprep_pdl") if is_prep(inst) else emit_kernel(*inst)

    # the W-prepared kernels share the 8-warp consumers: the tw4 and consumer_assist
    # experiments build without them
    insts = [i for i in INSTANCES if not (len(i) > 5 and i[5]) or (TW8 and not ASSIST)]
    return ptxgen.main("gen_sm90a", __doc__, insts, name_of, emit_of, OUTDIR)


if __name__ == "__main__":
    sys.exit(main())
