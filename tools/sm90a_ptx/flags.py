"""The generator's switches and fixed sizes: the measurement flags of FP4LR_GEN_EXPERIMENT
(checked against KNOWN_EXPERIMENTS), the tile, warp and register layout, the ring and
workspace constants every part reads.  Nothing here changes while kernels are emitted."""
import os
import sys

import ptxgen

# the tools directory (this package lives in tools/sm90a_ptx/)
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Measurement-only variants (never committed): FP4LR_GEN_EXPERIMENT=skip_transform makes
# the transform warps skip their conversion, to time everything else; xnowait / xnoconv: the
# _x W producer does not wait for the converters / the converters convert nothing.
# every flag the generator reads (a misspelt one would silently build the default kernels)
KNOWN_EXPERIMENTS = {"skip_transform", "consumer_assist", "bf16", "lut", "notfence", "cnoconv", "tw4",
                     "prodfix", "notprefetch", "mxtwo", "lprefetch", "tsplit", "notsplit", "nochoist", "noepi",
                     "xnowait", "xnoconv", "tline", "noxself", "xself1", "xpre", "xnofence",
                     "skbulk", "xstag", "xstagl", "cstag", "cstagl", "noxdbuf", "nohalfk", "n160one", "tlineself", "filldep", "aprefetch", "wnocopy", "anocopy", "walkpre", "epinostore", "epistg", "fillasync", "epinowait",
                     "nogdwait", "w3wb", "slowprep", "noltail", "tpaircl", "lrserial", "nowatchdog", "noluni", "nofold", "lrgdwait", "pgdwait", "sknofix", "skfixc", "skfixo", "skrelax", "skb4", "skorder", "skinit", "prepwait", "gtrig", "tlpro", "fprolate", "nolrprod", "nolraff", "lrw"}
EXPERIMENTS = ptxgen.experiment_flags("gen_sm90a", "FP4LR_GEN_EXPERIMENT", KNOWN_EXPERIMENTS)
# Every mbarrier wait outside the consumer warpgroups traps after a bound instead of spinning
# forever, and the consumers (their mbarrier waits and the stream-K owner's wait for partial
# flags) are watched (ptxgen.WATCHDOG_NS, sm90a_ptx/watch.py); nowatchdog emits the unbounded
# waits again, for measurement.
WATCHDOG = "nowatchdog" not in EXPERIMENTS
# Planted faults for tests/test_watchdog.c (FP4LR_GEN_FAULT, never committed: gen_sm90a.py
# refuses to write them into ptx/sm90a/): noleave, the consumers wait at their end for a
# main stage the producer never issues (the watcher's bounded wait for `cdone` must trap);
# norelease, the consumers never release a main stage (the producer's bounded `empty` wait
# must trap once the ring wraps); nopublish, the _x converters never publish a converted unit
# (the W producer's bounded wait for their flags must trap).
FAULTS = {"noleave", "norelease", "nopublish"}
FAULT = os.environ.get("FP4LR_GEN_FAULT", "")
if FAULT and FAULT not in FAULTS:
    sys.exit(f"gen_sm90a: unknown FP4LR_GEN_FAULT '{FAULT}'; known: {', '.join(sorted(FAULTS))}")
# FP4LR_GEN_EXPERIMENT=consumer_assist: the consumer warpgroups convert half of every W
# chunk (one row-half per thread) between issuing a chunk's wgmmas and the next chunk's,
# the transform warps the other half (measurement variant until it has run on a GPU).
ASSIST = "consumer_assist" in EXPERIMENTS
# e2m1 -> f16 / bf16 by bit placement (fp4x8_to_placed): half the
# ALU operations of the byte-permute tables, the shifts moved to the FMA pipe.  Measured on
# the H200 (same run, flux-qkv / square-r0 / qwen-fc1-r128): NVFP4 dense +9.4 %, fused +7.3 %;
# MXFP4 dense +8.1 %, fused +5.7 %.  FP4LR_GEN_EXPERIMENT=lut emits the tables again.
PLACED = "lut" not in EXPERIMENTS
OUTDIR = os.path.join(os.path.dirname(HERE), "ptx", "sm90a")

# Tile of one CTA: 128 x BN outputs, a K stage of 128 fp4 elements (64 bytes a row),
# converted and multiplied 64 K at a time ("chunks").  BN is 256 but in the narrow _yt
# kernels (BN_NARROW below), set per kernel by emit_kernel (kstate.BN).
BM, BK, CHUNK_K = 128, 128, 64
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
REG_WIDE = (104, 200)   # (WG0, each consumer WG): kstate.REG_WG0, kstate.REG_CONSUMER
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
# The low-rank loads without a branch on the issuing thread (since 2026-12-06; noluni: the
# branch, for measurement): every consumer thread walks the issue (the wait for the slot, the
# boxes, the cursors) and only the issuer's arrive and copies are predicated.  Why: behind a branch that one thread takes, ptxas cannot prove the
# consumer's warps converged, and keeps the K loop's wgmma descriptors, stage and slot cursors
# out of the uniform registers (R2UR before every HGMMA): the fused _yt K loop ran 314 SASS
# instructions an iteration against the dense kernel's 233 (ncu: 35 % more instructions in
# the launch), the _x4 one 239 against 221; with it 240 and 230.  A/B (H100, 3 rounds of
# 2 x 1000 launches, fused rows of 7 shapes): NVFP4 1.008 (sana-out 1.040), MXFP4 1.002.
LUNI = "noluni" not in EXPERIMENTS
# `tfull` split by column half (FP4LR_GEN_EXPERIMENT=notsplit: one tfull a slot; `tsplit`
# also splits NVFP4's): transform warps 0-3 (W rows 0-127) arrive on tfull_lo[t], warps 4-7
# (rows 128-255) on tfull_hi[t] (count 4 each); a consumer issues a chunk's four
# column-0-127 wgmmas after tfull_lo and its four column-128-255 wgmmas after tfull_hi, so
# the tensor core starts on a chunk when half of its W rows are converted.  Why: at 777e9dd
# the consumers spent 30 % of their samples in the two tfull waits and the transform warps
# 14 % of theirs in tempty waits (ncu with line information at 5cc9b03).  Measured at
# 5cc9b03+1 (H200, 4 shapes, A/B): MXFP4 dense +2.9 %, fused +2.0 %; NVFP4 dense -0.5 %,
# fused -0.8 %: the default for MXFP4 only (kstate.TSPLIT, set per kernel in kernel.emit_kernel).
TSPLIT_FORCED = "tsplit" in EXPERIMENTS
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
# FP4LR_GEN_EXPERIMENT=tline,tlpro (the W-prepared kernels, whose consumers have no first fill):
# more consumer stamps in unit 1, on the numbers of events these kernels never store: 41 the
# walk and the tile's coordinates done, 42 the fused prologue done (wc / beta copies and the
# first low-rank issue; = 41 in the dense kernels), 43 the affine and low-rank term done (the
# epilogue begins; = fix-up done in the dense kernels); in the fused kernels also 34 / 44
# before / after the wc / beta copies and 35 after the affine (before the low-rank term)
TLPRO = TLINE and "tlpro" in EXPERIMENTS
# FP4LR_GEN_EXPERIMENT=fprolate (the fused kernels): the fused prologue of a unit (the wc / beta
# copies and the first low-rank issue) after the unit's first wgmmas are issued, so that it runs
# under them, instead of before its first A stage is waited for.  Built 2026-12-06 and not run:
# every fused kernel but _s1 builds without spills, but tools/sass_check.py rejects the _yt
# ones (256 R2UR in their K loops: the low-rank issue's copies in the loop body move the wgmma
# descriptors to vector registers), and every K loop grows from 230-240 to 1296-1704
# instructions (bench/results/experiments/README.md, "The fused unit's own time, stamped")
FPROLATE = "fprolate" in EXPERIMENTS
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
                    34: "converter warp 0: pass 1 converted / tlpro: wc, beta copies begun",
                    35: "converter warp 0: unit stored / tlpro: affine done",
                    36: "unit 0 epilogue: chunk 0 begun", 37: "unit 0 epilogue: chunk 1 begun",
                    38: "unit 0 epilogue: chunk 2 begun", 39: "unit 0 epilogue: chunk 3 begun",
                    40: "unit 0 epilogue: chunk 3 store issued",
                    41: "consumer fill: begun / tlpro: unit 1 walk done",
                    42: "consumer fill: first loads landed / tlpro: unit 1 fused prologue done",
                    43: "consumer fill: converted / tlpro: unit 1 affine and low rank done",
                    44: "consumer fill: handed off / tlpro: wc, beta copies issued",
                    45: "main producer: unit 0's stage 8 issued", 46: "consumer: unit 0's stage 8 full",
                    47: "main producer: unit 1's first stage issued"})


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
CSTAG_SETUP = ("\t.reg .pred %pcst;\n\t.reg .b64 %cst0, %cst1;\n"
               "\tsetp.eq.u32 %pcst, %r42, 1;                // cstag: the second consumer WG waits once\n"
               if CSTAG_NS else "")
XSELF_BATCH = 4   # chunks whose loads are issued together (all: one memory latency)
if TW8:
    THREADS, TRANSFORM_WARPS = 512, 8
    REG_WIDE = (56, 200)
# The narrow tile's consumers hold 80 accumulators, not 128: 8 of their registers go to WG0 and
# WG1 (128 * (2 * 64 + 2 * 192) = 65536), whose MXFP4 fused converters spill 4 bytes at 56
# there (ptxas 13.0; at 80 / 176 the NVFP4 fused consumer spills instead; emit_kernel sets
# kstate.REG_WG0 / REG_CONSUMER to these or to REG_WIDE per kernel)
REG_NARROW = (64, 192)
TRANSFORM_THREADS = 32 * TRANSFORM_WARPS
# the consumer warpgroups' names in the kernels' comments (rows 0-63, rows 64-127)
CWG0, CWG1 = ("WG2", "WG3") if TW8 else ("WG1", "WG2")
# FP4LR_GEN_EXPERIMENT=w3wb (measurement, with noxself, or xself1 where that builds: the first
# fill needs two slots a K block): the 256-wide _x4 kernels keep 3 W slots
# and give the fourth slot's 32 KiB to two more 64-column writeback buffers: dense four in all,
# so that a tile's four epilogue chunks never wait for the bulk stores' reads (what epinowait
# bounds); fused three of their own instead of one plus the converters' staging (XDBUF).  Same
# entry names and shared-memory size: the committed host runs them.
W3WB = "w3wb" in EXPERIMENTS

FORMATS = {
    # name: (scale block, K-atoms per stage, SFA bytes per stage, SFW bytes per stage)
    "nvfp4": (16, 2, 1024, 2048),
    "mxfp4": (32, 1, 512, 1024),
}
XCONV_WARPS = 6    # the converter warps: warps 2-7 (WG0 and WG1 less the two producers' warps)
XCONV_STAGE = 4096  # a converter warp's staging block: 32 chunks of 128 bytes
XLOOK = 4          # the _x W producer checks up to this many items ahead before one fence
XHEAD = 64         # _x flags workspace: the unit count (word 0), "all converted" (word 1), then the flags
LORA_SLOTS = 4     # low-rank ring slots the kernel has barriers for (the host uses <= this)
APREFETCH = "aprefetch" in EXPERIMENTS   # the next unit's first A stages into L2 (a_prefetch)
# FP4LR_GEN_EXPERIMENT=walkpre (measurement): the consumers compute their next unit and its
# tile origin after the K loop's last wgmma issue, before waiting for it, instead of after
# the epilogue (a timeline: that walk took 0.5 us with the tensor cores idle).  The NVFP4
# fused _t and _x4_yt kernels spill 8-24 bytes with it and keep the walk after the epilogue.
# Measured (H200, 2026-12-04, 2
# rounds, 6 shapes, the spilling kernels left as committed): 1.004 / 1.001 (NVFP4 dense /
# fused), 1.000 / 1.002 (MXFP4), within the run-to-run noise; GPU suite and sanitizers clean.
WALKPRE = "walkpre" in EXPERIMENTS
# Timing only (the results are wrong by design): FP4LR_GEN_EXPERIMENT=wnocopy makes the W-prepared
# kernels' W producer complete each slot's tfull without its bulk copy, anocopy the main
# producer each stage's full without A and SFA: what the K loop costs without the copies.
# Measured (H200 at 1980 MHz, 2026-12-04, NVFP4 _x4 dense flux-qkv): 813 TFLOP/s committed,
# 847 wnocopy, 842 anocopy, 866 both (81 % of the 1070 TFLOP/s the clock gives).
# 16-byte partial loads in flight per owner thread (skb4: 4, measured 1.000-1.008 on an H100,
# 2026-12-06: the owners' load depth is not what the fix-up costs)
SK_BATCH = 4 if "skb4" in EXPERIMENTS else 2
# FP4LR_GEN_EXPERIMENT=skbulk (the _x kernels): a stream-K owner brings each peer's 128 KiB
# partial into the W ring with bulk copies (one thread, onto an mbarrier in the barrier area's
# slack) and adds it from shared memory, instead of 32 16-byte global loads a thread with
# about ten in flight (2-3 us at the end of every split launch: bench/results/experiments).
# The ring is free then: an owner unit that does not reach its tile's end is the last unit of
# its CTA's range, so no W chunk is in flight or still to come.
SKBULK = "skbulk" in EXPERIMENTS
SK_SLOT = 256 * 128 * 4    # one cluster rank's partial: 256 consumer threads x 128 fp32
# FP4LR_GEN_EXPERIMENT=skorder: a CTA whose split range starts inside a tile takes that piece
# (it only contributes: kb > 0) before its data-parallel tiles instead of after them, so the
# owners (whose piece is the last of their range) find every partial published long before
# they need it: a three-way tile's owner no longer waits for the middle peer, which finished
# together with it.  skinit (implies skorder): the owner adds its peers' partials at the
# start of its piece (its accumulators start from them, the first wgmma accumulates) instead
# of after its K loop, so the owners' reads are spread over the launch instead of all coming
# at its end.  Not in the _x kernels: their converters convert W in the order the whole-tile
# walk first needs it (host/sm90a_xorder.h), and a split piece first would wait for the last band.
# Measured on an H100 (2026-12-06, a1fad22+1, NVFP4, SANA): slower, skorder 0.920-0.943 and
# skinit 0.935-0.970 on sana-qkv / sana-mlp (correct: GPU suite clean but for the bitwise
# inline-against-prepared checks, whose summation order it changes).  A partial read about
# 25 us after it was written has left L2: the owners' reads took 3.8-5.1 us (skorder, at the
# end) or 3-5 us (skinit, at the start) against 1.5 us when read about 5 us after the store
# (bench/results/experiments/README.md, "Stream-K: the contributors first").
SKORDER = "skorder" in EXPERIMENTS or "skinit" in EXPERIMENTS
# FP4LR_GEN_EXPERIMENT=prepwait / gtrig (measurement, with a host built with
# -DFP4LR_MEASURE_PREPPDL, which launches the _pdl preparation as the programmatic dependent
# of whatever kernel precedes it on the stream): prepwait makes the _pdl preparation wait for
# that kernel (griddepcontrol.wait) before it reads or writes anything, and only then release
# its own dependent; gtrig makes the _w<n>_yt kernels release their dependent (the next
# launch's preparation) at their start, so that it is scheduled as their CTAs leave.
PREPWAIT = "prepwait" in EXPERIMENTS
GTRIG = "gtrig" in EXPERIMENTS
SKINIT = "skinit" in EXPERIMENTS
# The low-rank producer (the default since 2026-12-06; FP4LR_GEN_EXPERIMENT=nolrprod emits the
# kernels before it, nolraff keeps it but leaves wc / beta to the consumers), in the fused
# one-CTA W-prepared kernels without converters (_w, _w_yt): a producer of its own, walking the
# same work units as the other roles, issues every low-rank chunk the ring carries (waits
# `lempty`, arms `lfull`, the L and U bulk copies): thread 64, idle there; in the _w_yt kernels
# (lraff) all of warp 2, whose lanes first copy the tile's wc / beta into the consumer WGs'
# slices (cp.async onto mbarrier `afull`, one cp.async.mbarrier.arrive.noinc a lane; refilled
# after `aempty`: every consumer warp has read its slice; absent wc / beta are taken as 1 / 0 by
# the consumers).  Before, thread 0 of the first consumer WG issued the chunks and every
# consumer thread its wc / beta copies at the tile's start: that fused prologue took 0.59-0.62 us
# of a sana-mlp tile (0.18 the copies, 0.37-0.39 the low-rank issue) against 0.05 in the dense
# kernel; with lraff 0.045-0.054.  Measured on an H100 (2026-12-06, 72c7d14, NVFP4): fp4lr-check
# (L2-warm, stamped builds) sana-mlp fused 658.8 -> 672.9 TFLOP/s (dense 679.9), sana-qkv
# 582.9 -> 587.8 (dense 601.9); tools/ab_kernels.sh, 3 sustained rounds, lraff / before: fused
# sana-qkv 1.012, sana-mlp 1.014, sana-out 0.994 (the unchanged dense kernels 1.002 / 1.009 /
# 1.007: the noise).  The first lraff build arrived twice a lane and phase on `afull` (synccheck:
# 832 "missing wait" errors); the fixed one, as the default (08028d7, H100): GPU suite 689 / 689,
# synccheck, racecheck and memcheck clean on 31 cases (bench/results/experiments/README.md, "A
# producer of its own for the low-rank ring").
LRPROD = "nolrprod" not in EXPERIMENTS
LRAFF = LRPROD and "nolraff" not in EXPERIMENTS
# FP4LR_GEN_EXPERIMENT=lrw (measurement): the same for the fused one-CTA _x kernels (not swapped,
# 256 wide: the ones with the low-rank tail, LTAIL), where warp 2 converts W and no thread is
# idle: their W producer (thread 32), which already loads a tile's chunks past the ring into the
# W ring after the unit's last W chunk, loads the ring's chunks there too, just before them
# (waits `lempty`, arms `lfull`); the consumers issue nothing.  At that point the W producer is
# at most the W ring's depth ahead of the consumers, which are inside the unit, so the previous
# tile's low-rank slots are free and the wait passes; the chunks land while the consumers finish
# the K loop's last two K blocks, as the tail chunks do.  The wc / beta copies stay with the
# consumers (0.18 of the fused prologue's 0.6 us on SANA; the low-rank issue was 0.37-0.39).
# The consumers keep the issue code with a predicate no thread has (fused_consumer_setup:
# without it ptxas spills 4-8 bytes in them).  Measured on an H100 (2026-12-06, 7e3754c): GPU
# suite 691 / 691 and the three sanitizers clean with it; sustained A/B, lrw / committed, fused
# 0.999 / 0.999 (NVFP4 / MXFP4; flux-qkv, qwen-fc1-r32, qwen-qkv-r128; dense 0.998): no gain, so
# not the default (bench/results/experiments/README.md, "The W producer loads the low-rank
# ring of the _x kernels").
LRW = LRPROD and "lrw" in EXPERIMENTS


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


PREP_THREADS = 256
