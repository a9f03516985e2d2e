"""The kernel being emitted: the per-kernel switches (cluster size, family, tile width, which
W path, which epilogue, ...) that emit_kernel / emit_prep (and gen_sm90a_pp's configure) set
before they emit, and every part reads as K.NAME.  Their values here are the defaults before
the first kernel."""
from .flags import REG_WIDE

# the tile width (flags.BN_NARROW in the narrow _yt kernels) and the registers of WG0 and of
# each consumer WG (setmaxnreg; flags.REG_WIDE or flags.REG_NARROW)
BN = 256
REG_WG0, REG_CONSUMER = REG_WIDE
# NVFP4 dequantizes both operands to f16 (e2m1 x ue4m3 lies in [2^-10, 2688] with at most 6
# significant bits, so f16 holds it exactly) and multiplies with f16 wgmma: the f16 high byte
# of an e2m1 value comes from one byte-permute table and its low byte is always zero, which
# saves two of the 17 integer operations per 8 elements and the f32 round trip of every
# scale.  Measured on the H200 (commit 677c607, NVFP4, same session): dense +7 %, fused +8-9 %
# over bf16.  MXFP4 stays bf16: ue8m0 scales reach 2^+-127, beyond f16.
# FP4LR_GEN_EXPERIMENT=bf16 emits the NVFP4 bf16 path again, for measurement.
F16 = False   # set per kernel by emit_kernel
TSPLIT = False     # the tfull split by column half (flags.TSPLIT_FORCED says why; set by emit_kernel)
FILLDEP_ON = False   # set per kernel by emit_kernel
FILLASYNC_ON = False   # set per kernel by emit_kernel
CSTAG_ON = 0   # set per kernel by emit_kernel
XSELF_ON = False  # set per kernel by emit_kernel
XPRE_ON = False   # likewise
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
NAME_TSLOTS = 2    # the W slots the entry's name says (TSLOTS but under w3wb; set by emit_kernel)
AFF_SLICE = 2 * 256 * 4   # fused: one WG's wc and beta slices of a tile (BN fp32 each; set per kernel)


# The cluster size of the kernel being emitted (1 or 2), and whether the pair splits the
# W transform (each CTA converts half the rows into both CTAs' slots); set by emit_kernel.
CL = 1
SPLIT = False
BULK = False   # split pair, the peer's half delivered by one DSMEM bulk copy per chunk
FUSED = False      # the fused family: affine and low-rank after the main loop
LTAIL = False      # fused _w: the low-rank chunks past the ring come through the W ring
LRPIPE = False     # LTAIL: a low-rank chunk's wgmmas are issued before the previous chunk's end
WPRE = False       # W prepared: the W ring is filled by bulk copies of the prepared W (set by emit_kernel)
WPAIR = False      # ... by a pair: rank 0 multicasts each W chunk into both CTAs (set by emit_kernel)
PAIR_CTA = False   # the pair's waits / arrives at CTA scope: every non-split pair (tpaircl: WPAIR only)
XCONV = False      # ... and W is converted inside the kernel by its idle warps (the _x kernels; implies WPRE)
YT = False         # the tile is stored transposed (the _yt kernels: the host binds A and W exchanged, so the
                   # kernel's C = Y^T; set by emit_kernel)


# The narrow tile's main-loop wgmma as one m64n160k16 a k16 step instead of two m64n80k16
# halves (FP4LR_GEN_EXPERIMENT=n160one, measurement only; the 256-wide tile cannot: ptxas
# needs 158 registers at entry for an m64n256 wgmma, C7602, and 512 threads give 128).
# Measured on sana-out (H200, 2026-12-04, 3 rounds): slower, 0.966-0.990.  ptxas 13.0 serialises
# the narrow FUSED kernels' wgmmas with it (C7511, found 2026-12-05 when tools/ptxas_gate.sh
# began refusing every "serialized" warning), so the fused part of that measurement is not of
# the schedule meant; the dense narrow kernels gate clean.
WHOLE_N = False   # set per kernel by emit_kernel
WALKPRE_ON = False   # set per kernel by emit_kernel
SKBULK_ON = False   # set per kernel by emit_kernel
EPISTG_ON = False   # set per kernel by emit_kernel
SKORDER_ON = False  # set per kernel by emit_kernel (flags.SKORDER)
SKINIT_ON = False   # likewise (flags.SKINIT)
LRPROD_ON = False   # likewise: a producer, not the consumers, issues the low-rank ring's chunks
LRP64_ON = False    # likewise (flags.LRPROD): that producer is thread 64 (warp 2 with LRAFF_ON)
LRW_ON = False      # likewise (flags.LRW): that producer is the W producer, at a unit's end
LRAFF_ON = False    # likewise (flags.LRAFF): warp 2 also copies wc / beta (afull / aempty)
