#!/usr/bin/env python3
"""gen_sm100a.py -- writes the sm_100a (Blackwell, tcgen05) dense PTX kernels of fp4lr.

The kernels are hand-written PTX; this generator only emits the mechanical parts (the
unrolled scale-factor copies and MMAs of a K stage, the epilogue's register lists and
conversions, one label per wait loop) so that each instantiation (format x cluster x
stage count) is one reproducible file.  Its output is committed under ptx/sm100a/ and a
test regenerates it and compares (``--check``).

No sm_100a instruction of these kernels has executed: there is no Blackwell GPU here.
They are verified by ptxas (tools/ptxas_gate.sh), by tests/test_sm100a_instances.c
against the budget solver, and by the constants below, which are checked against the
fact sheet's worked values (../shared/facts/sm100a-tcgen05.md) every time this runs.

    tools/gen_sm100a.py            write every instantiation into ptx/sm100a/
    tools/gen_sm100a.py --check    regenerate in memory, compare with ptx/sm100a/
    tools/gen_sm100a.py --list     print the entry names
"""
import os
import sys

from ptxgen import Emitter, advance
import ptxgen
import sm100a_fused as fused

HERE = os.path.dirname(os.path.abspath(__file__))
# Measurement-only variants (never committed), FP4LR_GEN100_EXPERIMENT=flag[,flag]:
#   paircta  the pair (cluster 2) waits and arrives at CTA scope everywhere but `affdone`
#            (ptx/sm100a/README.md item 12: the sm_90a pairs ran 1.3-2x faster so, and a
#            review found every other hand-off of these kernels safe at CTA scope).  Not run:
#            no sm_100 device; build it with --outdir and A/B it where one exists.
EXPERIMENTS = ptxgen.experiment_flags("gen_sm100a", "FP4LR_GEN100_EXPERIMENT", {"paircta", "nowatchdog"})
# Every mbarrier wait traps after ptxgen.WATCHDOG_NS of polling (the sm_90a watchdog; here no
# role is at its register limit, so none is watched instead of bounded).  Verified by ptxas and
# tests/test_watchdog.c's census only: no sm_100 GPU has run it.  nowatchdog emits the unbounded
# waits again.
WATCHDOG = "nowatchdog" not in EXPERIMENTS
WATCHDOG_DOC = """
//   Watchdog: every wait above, after a failed first try_wait, polls for at most 4 s of
//   %globaltimer (a pause over 67 ms between polls starts again) and then executes `trap`: a
//   protocol bug fails the launch (CUDA_ERROR_LAUNCH_FAILED) instead of hanging it
//   (tools/ptxgen.py WATCHDOG_NS; not yet run on an sm_100 GPU)."""
OUTDIR = os.path.join(os.path.dirname(HERE), "ptx")   # each target writes into OUTDIR/<target>/

# Targets: the arch-specific sm_100a (compute capability 10.0 only) and the family target
# sm_100f (every 10.x part, e.g. B300 at 10.3), which spells the block-scale vector size
# .block16 / .block32 instead of .scale_vec::4X / ::2X and needs PTX ISA 8.8.  The kernels
# are otherwise identical.
TARGETS = {
    # name: (PTX ISA version, .target, index of the scale-vector spelling in FORMATS)
    "sm100a": ("8.7", "sm_100a", 0),
    "sm100f": ("8.8", "sm_100f", 1),
}

# Per CTA: 128 accumulator rows (tcgen05 block-scaled MMA: M = 128 per CTA), the full
# tile N = 256, a K stage of 256 fp4 elements = one 128-byte row of the 128B swizzle.
# One MMA consumes K = 64 (32 bytes), so a stage is 4 MMAs.
BM, BN, BK, MMA_K = 128, 256, 256, 64
THREADS = 256                 # 8 warps: roles in the header
EPI_CHUNK = 64                # bf16 output columns per staging chunk (128 bytes a row)
WB_BUFS = 2                   # epilogue staging buffers (host/budget.c: WB_STAGES)
WB_BUF = BM * EPI_CHUNK * 2   # bytes of one staging buffer (all 128 rows)
FIXED = 1024                  # barriers + TMEM slot, rounded up to 1024 (host/budget.c)
TMEM_COLS = 512
ATOM = 512                    # one 128x4 scale atom (bytes)

FORMATS = {
    # name: (scale block, scale name, MMA kind (sm100a spelling, sm100f spelling), scale type bit of the idesc)
    "nvfp4": (16, "ue4m3", ("kind::mxf4nvf4.block_scale.scale_vec::4X", "kind::mxf4nvf4.block_scale.block16"), 0),
    "mxfp4": (32, "ue8m0", ("kind::mxf4nvf4.block_scale.scale_vec::2X", "kind::mxf4nvf4.block_scale.block32"), 1),
}

# The instantiations the host can pick: (format, cluster, main stages, accumulator stages).
# The stage counts and the accumulator stages equal what host/budget.c solves for the tile
# (fp4lr-budget --arch sm100a --tile 128x256x256 --cluster 1 / 256x256x256 --cluster 2);
# tests/test_sm100a_instances.c checks them.
# Fused (r > 0 or the affine): the solver's counts over the ranks 0..1024 with and without the
# affine are 2 and 3 (one CTA) and 3, 4, 5 (pair); the naive policy (full-size W and U charged
# per CTA: the diagnostic curve of ARCHITECTURE.md sec. 5) gives 2 and 3 for the pair.
CONFIGS = [
    ("nvfp4", "dense", 1, 3, 1),
    ("mxfp4", "dense", 1, 3, 1),
    ("nvfp4", "dense", 2, 5, 1),
    ("mxfp4", "dense", 2, 5, 1),
    # the naive-policy pair (full W charged per CTA): 3 stages, the diagnostic curve's middle point
    ("nvfp4", "dense", 2, 3, 1),
    ("mxfp4", "dense", 2, 3, 1),
] + [(f, "fused", 1, s, 1) for f in ("nvfp4", "mxfp4") for s in (3, 2)] \
  + [(f, "fused", 2, s, 1) for f in ("nvfp4", "mxfp4") for s in (5, 4, 3, 2)]
# every configuration for both targets: (target, format, family, cluster, main stages, acc stages)
INSTANCES = [(t,) + c for t in TARGETS for c in CONFIGS]


def entry_name(fmt, cluster, stages, target="sm100a", family="dense"):
    return f"fp4lr_{target}_{fmt}_{family}_m{BM * cluster}n{BN}k{BK}_c{cluster}_s{stages}"


# ---- descriptors (fact sheet sec. 2, sec. 3, sec. 5.3) ------------------------------------------

def idesc(m, n, ue8m0, sfa_id=0, sfb_id=0):
    """32-bit instruction descriptor of kind::mxf4 / mxf4nvf4 (fact sheet sec. 2): dense,
    atype = btype = E2M1 (1), K-major (no transpose), N>>3 at 17, scale type at 23,
    M>>7 at 27, SF IDs at 29 (A) and 4 (B), K = 64 (bit 31 clear)."""
    return ((sfb_id << 4) | (1 << 7) | (1 << 10) | ((n >> 3) << 17) | (ue8m0 << 23) |
            ((m >> 7) << 27) | (sfa_id << 29))


def sdesc_hi(sbo, swizzle):
    """Upper 32 bits of a 64-bit shared-memory descriptor (fact sheet sec. 3): SBO>>4 at
    32-45, the fixed bit 46, swizzle code at 61-63.  LBO (16-29) is 0."""
    return (sbo >> 4) | (1 << 14) | (swizzle << 29)


SW128 = 2                      # descriptor swizzle code of 128B (fact sheet sec. 3)
OPND_HI = sdesc_hi(1024, SW128)  # A/B: K-major SW128, SBO 1024 (8 rows x 128 B)
SF_HI = sdesc_hi(128, 0)         # scale atom: no swizzle, SBO 128 (8 rows x 16 B)

# The fact sheet's worked values; a wrong encoder stops the generator here.
assert idesc(128, 256, 0) == 0x08400480 and idesc(128, 256, 1) == 0x08C00480
assert idesc(256, 256, 0) == 0x10400480 and idesc(256, 256, 1) == 0x10C00480
assert idesc(128, 128, 0) == 0x08200480 and idesc(256, 128, 1) == 0x10A00480
assert (OPND_HI << 32) == 0x4000404000000000 and (SF_HI << 32) == 0x0000400800000000


class Kernel:
    """Everything that varies between instantiations, derived once."""

    def __init__(self, fmt, cluster, stages, acc, target="sm100a", family="dense"):
        assert cluster in (1, 2) and stages >= 2 and acc in (1, 2) and family in ("dense", "fused")
        self.fmt, self.cl, self.stages, self.acc = fmt, cluster, stages, acc
        self.family, self.fused, self.bn = family, family == "fused", BN
        self.block, self.scale_name, kinds, self.ue8m0 = FORMATS[fmt]
        self.target = target
        self.ptx_version, self.ptx_target, spelling = TARGETS[target]
        self.kind = kinds[spelling]
        self.name = entry_name(fmt, cluster, stages, target, family)
        self.target_note = "" if target == "sm100a" else f"""
// Target {self.ptx_target}, the family target: the same kernel as
// {entry_name(fmt, cluster, stages, family=family)} (compute capability 10.0 only), spelled
// for every 10.x part (e.g. B300, 10.3): .block{self.block} for the block-scale vector, PTX ISA 8.8.
//"""
        self.kas = BK // (4 * self.block)          # scale atoms per 128 rows per stage
        self.mmas = BK // MMA_K                    # MMAs per stage
        self.mma_per_atom = self.mmas // self.kas  # 1 (NVFP4: 4 SFs = K 64), 2 (MXFP4)
        self.bn_cta = BN // cluster                # B rows this CTA holds (the pair splits B)
        self.sfb_blocks = BN // 128                # SFB is replicated: full N in each CTA
        self.cg = f"cta_group::{cluster}"
        # the measurement flag paircta: CTA-scope waits and arrives in the pair but `affdone`'s
        self.paircta = cluster == 2 and "paircta" in EXPERIMENTS
        # shared memory, per CTA (identical offsets in both CTAs of a pair)
        L = {}
        L["a"] = 0
        L["b"] = L["a"] + BM * BK // 2
        L["sfa"] = L["b"] + self.bn_cta * BK // 2
        L["sfb"] = L["sfa"] + self.kas * ATOM
        L["stage"] = L["sfb"] + self.sfb_blocks * self.kas * ATOM
        assert L["stage"] % 1024 == 0, "SW128 operand tiles need 1024-byte aligned stages"
        L["wb"] = stages * L["stage"]
        L["fixed"] = L["wb"] + WB_BUFS * WB_BUF
        if self.fused:
            fused.layout(self, L)             # the wc/beta slice before the fixed area
        self.nbar = 2 * stages + 2 * acc + (fused.barriers(self) if self.fused else 0)
        L["slot"] = L["fixed"] + (8 * self.nbar + 15) // 16 * 16
        assert L["slot"] + 16 <= L["fixed"] + FIXED
        L["total"] = L["fixed"] + FIXED
        if self.fused:
            fused.ring_after_fixed(L)          # the low-rank ring, sized at run time
        self.L = L
        # tensor memory: accumulator stages, then one SF area per main stage
        self.sfa_cols = 4 * self.kas
        self.sf_cols = self.sfa_cols + 4 * self.sfb_blocks * self.kas
        self.sf_base = acc * BN
        self.tmem_total = self.sf_base + stages * self.sf_cols
        assert self.tmem_total <= TMEM_COLS
        self.tmem_alloc = 32                       # tcgen05.alloc: a power of two in [32, 512]
        while self.tmem_alloc < self.tmem_total:
            self.tmem_alloc *= 2
        # bytes landing on the (even CTA's) full barrier per stage
        self.tx_bytes = cluster * L["stage"]
        self.acc_per_tile = BN // EPI_CHUNK
        assert self.acc_per_tile % WB_BUFS == 0

    def mma_idesc(self, k):
        """idesc of MMA k of a stage: MXFP4 uses SF bytes 0-1 (ID 0) or 2-3 (ID 2) of the
        atom's word, alternately; NVFP4 uses all four (ID 0)."""
        sf_id = 2 * (k % self.mma_per_atom) if self.mma_per_atom == 2 else 0
        return idesc(BM * self.cl, BN, self.ue8m0, sf_id, sf_id)

    def sfa_col(self, j):
        return 4 * j                                  # SFA atom j

    def sfb_col(self, j, blk):
        return self.sfa_cols + 8 * j + 4 * blk       # SFB atom j of row block blk


# ---- header -------------------------------------------------------------------------

def header(e, K):
    L = K.L
    pair = K.cl == 2
    cta_rows = " (rank v holds rows 128v..128v+127)" if pair else ""
    if K.fused:
        what = ("// What it computes (OPERATOR.md, the whole operator; see Family below):\n"
                "//     Y[m,n] = bf16_rne( wc[n] * (alpha * main[m,n]) + beta[n] + (L . U^T)[m,n] )\n"
                "//     main[m,n] = sum_k deq(A)[m,k] * deq(W)[n,k]")
        aff_line = f"\n//   [{L['aff']:6d}]  wc/beta slice, {BN} + {BN} fp32"
        bar_line = (f"\n//                    lfull[{fused.LORA_SLOTS}], lempty[{fused.LORA_SLOTS}], "
                    f"affdone[{K.acc}], lrdone[{K.acc}], affready, affempty")
        lora_line = (f"\n//   [{L['lora']:6d}]  low-rank ring at {L['lora']}: slots x (128 + {K.bn_cta}) x rc x 2 bytes, "
                     "set by the host")
    else:
        what = ("// What it computes (OPERATOR.md, r = 0, no affine):\n"
                "//     Y[m,n] = bf16_rne( alpha * sum_k deq(A)[m,k] * deq(W)[n,k] )")
        aff_line = bar_line = lora_line = ""
    sf_ids = ("SF ID 0 (the four ue4m3 bytes of a TMEM word are the four 16-blocks of K = 64)"
              if K.mma_per_atom == 1 else
              "SF ID 0 for even k (bytes 0-1: the two 32-blocks of K 0..63 of the atom) and 2 for odd k (bytes 2-3)")
    e(f"""//
// {K.name}
//
// GENERATED by tools/gen_sm100a.py -- edit the generator, then run it; a test checks
// that this file equals the generator's output.
//
// NOT EXECUTED: no sm_100a instruction of this kernel has run (no Blackwell GPU was
// available).  It is verified by ptxas and by the budget/instance tests only; the
// assumptions a Blackwell run must confirm are listed at the end of this header.
//{K.target_note}
{what}
// A: M x K e2m1 (K contiguous, element 2i in the low nibble of byte i), W: N x K likewise,
// SFA / SFW: {K.scale_name} scales per {K.block} elements in the 128x4 atom layout.
// The tensor cores multiply the 4-bit operands with their block scales directly:
//     tcgen05.mma.{K.cg}.{K.kind}
// M x N x K = {BM * K.cl} x {BN} x {MMA_K} per instruction, fp32 accumulator in tensor memory.
//
// Tile: {"the CTA pair" if pair else "one CTA"} computes {BM * K.cl} x {BN} outputs{cta_rows}; the K loop moves
// {BK} elements (one 128-byte row of A and W) per main stage = {K.mmas} MMAs.
// Persistent: each {"pair" if pair else "CTA"} walks tiles {"clusterid.x, +nclusterid.x" if pair else "blockIdx.x, +gridDim.x"}, ... of a grouped raster
// order (groups of `group` tile rows along M share W tiles in L2).
//
// Warp roles ({THREADS} threads; every thread ends in the teardown):
//   warp 0, lane 0   producer: per main stage waits `empty`, {"(even CTA) " if pair else ""}arms `full` with the
//                    stage's byte count and issues the bulk tensor copies of A, W{" (this CTA's N half)" if pair else ""},
//                    SFA and SFW{" (full N, replicated)" if pair else ""}{" onto the EVEN CTA's `full` (.cta_group::2)" if pair else ""}.
//   warp 1, lane 0   MMA issuer{" (even CTA only; the odd CTA's warp 1 idles)" if pair else ""}: per tile waits `accempty`;
//                    per stage waits `full`, copies the stage's scale atoms into tensor
//                    memory (tcgen05.cp.{K.cg}.32x128b.warpx4), issues {K.mmas} MMAs and commits to
//                    `empty`{" (multicast to both CTAs)" if pair else ""}; after the tile's last stage commits to `accfull`.
//   warp 2           tensor-memory allocator: tcgen05.alloc / relinquish_alloc_permit at
//                    start, tcgen05.dealloc at the end ({K.tmem_alloc} columns{", both CTAs, cluster-synchronised" if pair else ""}).
//   warp 3           {"low-rank producer (see Family below)." if K.fused else "idle."}
//   warps 4-7        epilogue: warp w reads TMEM lanes 32(w%4)..32(w%4)+31 = tile rows
//                    {"128v + " if pair else ""}32(w%4)+lane; per tile waits `accfull`, tcgen05.fence::after_thread_sync,
//                    tcgen05.ld.sync.aligned.32x32b.x32 ({BN // 32} loads = {BN} columns), tcgen05.wait::ld,
//                    alpha in fp32, bf16; per {EPI_CHUNK}-column chunk st.shared into a 128B-swizzled
//                    buffer, fence.proxy.async, bulk tensor store of 32 rows x {EPI_CHUNK} columns.
//                    Chunks 0-{WB_BUFS - 1} are stored while draining, the rest held in registers
//                    until the accumulator is released (arrive `accempty`{" of the even CTA" if pair else ""}).
//
// Launch: {THREADS} threads, {"clusters of (2,1,1), " if pair else ""}dynamic shared memory {L['total']} B, persistent grid
// (at most one {"pair" if pair else "CTA"} per tile{", a whole number of pairs" if pair else ""}); one CTA per SM (the shared memory admits one).
//
{cluster_doc(K)}{fused.header_doc(K) if K.fused else ""}
//
// Barrier protocol (mbarriers in shared memory; phases tracked by parity bits):
//   full[s]     count 1  {"even CTA: " if pair else ""}the producer's arrive.expect_tx({K.tx_bytes} B{" = both CTAs' stage" if pair else ""});
//                        the bulk copies' complete_tx.  Waited by the MMA issuer.{"  (Unused in the odd CTA.)" if pair else ""}
//   empty[s]    count 1  tcgen05.commit of the stage's cps and MMAs{" (multicast: one arrive in each CTA)" if pair else ""}.
//                        Waited by the producer (first lap passes).
//   accfull[a]  count 1  tcgen05.commit after the tile's last MMA{" (multicast)" if pair else ""}.  Waited by the epilogue.
//   accempty[a] count {4 * K.cl}  one arrive per epilogue warp{" of both CTAs (the odd CTA's remotely, release.cluster)" if pair else ""} after its
//                        tcgen05.wait::ld and tcgen05.fence::before_thread_sync.  Waited by the
//                        MMA issuer before the tile's first MMA (first tile passes).{"  (Unused in the odd CTA.)" if pair else ""}
//   Accumulator stages: {K.acc} (a = tile % {K.acc}); host/budget.c's TMEM plan gives acc_stages = {K.acc} for N = {BN}.
//   Epilogue staging: no barrier; each epilogue warp's lane 0 tracks its own bulk stores
//   (cp.async.bulk.wait_group.read 1 before reusing a buffer).{WATCHDOG_DOC if WATCHDOG else ""}
//
// Shared memory map (dynamic, 1024-byte aligned; the same offsets in every CTA), {K.stages} main stages:
//   [{L['a']:6d} + s*{L['stage']}]  A fp4     {BM} x {BK // 2} B, TMA swizzle 128B               ({BM * BK // 2} B)
//   [{L['b']:6d} + s*{L['stage']}]  W fp4     {K.bn_cta} x {BK // 2} B, TMA swizzle 128B               ({K.bn_cta * BK // 2} B)
//   [{L['sfa']:6d} + s*{L['stage']}]  SFA       {K.kas} atom(s) x 1 row block, raw bytes          ({K.kas * ATOM} B)
//   [{L['sfb']:6d} + s*{L['stage']}]  SFW       {K.kas} atom(s) x {K.sfb_blocks} row blocks, raw bytes         ({K.sfb_blocks * K.kas * ATOM} B)
//   [{L['wb']:6d} + b*{WB_BUF}]  epilogue staging, {WB_BUFS} buffers of {BM} x {EPI_CHUNK} bf16, swizzle 128B
//                                   (warp w's 32 rows at +4096*(w%4)){aff_line}
//   [{L['fixed']:6d}]  mbarriers: full[{K.stages}], empty[{K.stages}], accfull[{K.acc}], accempty[{K.acc}]{bar_line}
//   [{L['slot']:6d}]  TMEM base address slot (written by tcgen05.alloc)
//   total {L['total']} bytes (host/budget.c charges the same objects; fixed area {FIXED} B).{lora_line}
//
// Tensor memory map (128 lanes x 32-bit columns):
//   tmem alloc {K.tmem_alloc} columns (tcgen05.alloc.{K.cg}, a power of two), {K.tmem_total} used
//   [  0 + a*{BN}]  accumulator stage a: lane i = tile row {"128v + " if pair else ""}i, column n = tile column n (fp32)
//   [{K.sf_base:3d} + s*{K.sf_cols}]  scale factors of main stage s ({K.sf_cols} columns):
//                   +{K.sfa_col(0)}  + 4j       SFA atom j (j < {K.kas}): column = row/32, byte = scale index
//                   +{K.sfb_col(0, 0)} + 8j + 4b  SFW atom j of row block b (b < {K.sfb_blocks}): column = (128b + n%128)/32
//   One SF area per main stage: a stage's SF columns are rewritten only after `empty[s]`
//   (the commit of the MMAs that read them) let the producer refill the stage, so the
//   kernel does not rely on mma -> cp ordering (fact sheet sec. 4, pitfall 9).
//
// Constants (fact sheet sections in brackets):
//   idesc [sec. 2]   = atype E2M1 (1<<7) | btype E2M1 (1<<10) | (N>>3)<<17 | scale type<<23
//                  ({K.ue8m0}: {K.scale_name}) | (M>>7)<<27 | SFA ID<<29 | SFB ID<<4, M = {BM * K.cl}, N = {BN}:
{idesc_doc(K)}//                  {sf_ids}.
//   A/W descriptor [sec. 3] = 0x{OPND_HI:08X}_0000xxxx: K-major, swizzle 128B (code 2 at 61-63),
//                  SBO 1024 B (8 rows x 128 B), LBO 0, bit 46 set, base offset 0 (1024-B aligned
//                  tiles); start = addr>>4; MMA k of a stage adds 32 B (lo += 2k).
//   SF descriptor [sec. 5.3] = 0x{SF_HI:08X}_0000xxxx: no swizzle, SBO 128 B (8 rows x 16 B), LBO 0,
//                  bit 46 set; start = atom address >> 4.  One tcgen05.cp.32x128b.warpx4 copies
//                  one 512-byte atom (32 rows x 16 B) into 4 columns of all four lane quarters.
//   TMEM address [sec. 4] = lane<<16 | column, added to the allocated base.
//
// UNCONFIRMED hardware assumptions this kernel relies on (fact sheet tags; only a
// Blackwell run can confirm them):
{assumptions_doc(K)}//""")


def idesc_doc(K):
    if K.mma_per_atom == 1:
        return f"//                  0x{K.mma_idesc(0):08X}  (every MMA)\n"
    return "".join(f"//                  0x{K.mma_idesc(k):08X}  ({which} MMA k of a stage)\n"
                   for k, which in ((0, "even"), (1, "odd")))


def cluster_doc(K):
    if K.cl == 1:
        return """// Cluster: none (one CTA per 128x256 tile; cta_group::1 everywhere)."""
    return """// CTA pair (cluster of two, cta_group::2 in EVERY tcgen05 instruction): the even CTA's
// thread issues each MMA of M = 256; CTA v holds A rows 128v.. and SFA of its rows, W rows
// (N index) 128v..128v+127 only (the MMA reads both halves), and SFW for the full N.  Both
// CTAs place every object at the same offset (the even CTA's descriptors are used in both).
// The tcgen05.cp of the even thread fills each CTA's tensor memory from that CTA's own
// shared memory.  Teardown: the producer drains its `empty` ring and the MMA issuer its
// `accempty` ring, so no remote arrive is in flight; then cluster barrier, dealloc,
// cluster barrier, so no CTA exits while its peer may still write its shared memory or
// arrive on its barriers.""" + ("""
// Scope (paircta, a measurement build): every wait acquires and every arrive releases at CTA
// scope except `affdone`'s (the peer's tcgen05.st, its generic arrive, then this pair's MMA
// reading those columns), as CUTLASS's sm100 2-SM pipelines do; not yet run on a GPU.""" if K.paircta else "")


def assumptions_doc(K):
    items = [
        "e2m1 packing: the MMA reads element 2i from the low nibble of byte i (sec. 3).",
        "Scale atom -> TMEM: tcgen05.cp.32x128b.warpx4 of a 128x4 atom gives column m/32, lane m%32\n"
        "  (all four quarters), byte s = scale index, the layout the MMA reads (sec. 5.3; CUTLASS).",
        f"SFW for N = {BN}: 8 consecutive columns per MMA, row block b at +4b (sec. 5.3).",
        "The dynamic shared-memory window starts 1024-byte aligned (.align 1024), so the TMA's\n"
        "  128B swizzle and the descriptors' (base offset 0) agree (sec. 3, sec. 7).",
        "LBO = 0 is accepted for K-major swizzled operands (PTX: \"assumed 1\"; DeepGEMM uses 0) (sec. 3).",
    ]
    if K.mma_per_atom == 2:
        items.append("scale_vec::2X at K = 64: SF ID 0/2 selects bytes 0-1 / 2-3 of the word (sec. 5.3).")
    if K.fused:
        items += fused.assumptions(K)
    if K.cl == 2:
        items += [
            "cp.async.bulk.tensor ... .cta_group::2 with the even CTA's barrier: the odd CTA's bytes\n"
            "  complete_tx on the even CTA's `full` (exact PTX wording not found, sec. 6).",
            "tcgen05.cp.cta_group::2 from the even CTA fills each CTA's TMEM from that CTA's own\n"
            "  shared memory at the same offset (sec. 5.4, CUTLASS PR #3647).",
            "M = 256 pair accumulator: CTA v's TMEM lane i holds tile row 128v + i (sec. 6).",
        ]
    return "".join("//   - " + it.replace("\n", "\n//   ") + "\n" for it in items)


# ---- kernel body --------------------------------------------------------------------

def emit_kernel(fmt, family, cluster, stages, acc, target="sm100a"):
    K = Kernel(fmt, cluster, stages, acc, target, family)
    e = Emitter(cluster, cluster_scope=False if K.paircta else None, watchdog=WATCHDOG)
    header(e, K)
    emit_entry(e, K)
    emit_setup(e, K)
    emit_producer(e, K)
    emit_mma(e, K)
    if K.fused:
        fused.emit_lowrank_producer(e, K, tile_coords, walk_start, walk_next)
    emit_epilogue(e, K)
    emit_teardown(e, K)
    e("}")
    return e.text()


def emit_entry(e, K):
    pair = K.cl == 2
    e(f""".version {K.ptx_version}
.target {K.ptx_target}
.address_size 64

.extern .shared .align 1024 .b8 smem[];

.visible .entry {K.name}(
\t.param .align 128 .b8 p_tmA[128],     // A   UINT8 {{K/2, M}}, box {{{BK // 2}, {BM}}}, swizzle 128B
\t.param .align 128 .b8 p_tmW[128],     // W   UINT8 {{K/2, N}}, box {{{BK // 2}, {K.bn_cta}}}, swizzle 128B
\t.param .align 128 .b8 p_tmSFA[128],   // SFA UINT8 {{256, 2*KA, ceil(M/128)}}, box {{256, {2 * K.kas}, 1}}
\t.param .align 128 .b8 p_tmSFW[128],   // SFW UINT8 {{256, 2*KA, ceil(N/128)}}, box {{256, {2 * K.kas}, {K.sfb_blocks}}}
\t.param .align 128 .b8 p_tmY[128],     // Y   BF16  {{N, M}}, box {{{EPI_CHUNK}, 32}}, swizzle 128B
\t.param .u32 p_num_k_stages,          // ceil(K / {BK})
\t.param .f32 p_alpha,
\t.param .u32 p_tiles_m,               // ceil(M / {BM * K.cl}){" (pair tiles)" if pair else ""}
\t.param .u32 p_tiles_n,               // ceil(N / {BN})
\t.param .u32 p_group{"," if K.fused else ""}                  // tile rows per raster group (>= 1)
{fused.params() if K.fused else ""})
.maxntid {THREADS}, 1, 1
.minnctapersm 1
{{""")
    e(f"""\t.reg .pred %pw, %p<8>, %ptrue, %pacc, %plane0, %plead;
\t.reg .b32 %r<40>;
\t.reg .b64 %rd<4>, %ad, %bd, %sd;
\t.reg .b32 %thr, %warp, %lane, %quad;
\t.reg .b32 %sbase, %bar_full, %bar_empty, %bar_accf, %bar_acce, %tslot, %tmem;
\t.reg .b32 %tile, %ntiles, %tiles_m, %tiles_n, %group, %nks, %ks, %m0, %n0;
\t.reg .b32 %s, %ph, %a, %aph, %cnt;
\t.reg .b32 %tile0, %tstride, %crank, %lead, %mrank;   // tile walk; cluster rank, even rank, row offset
\t.reg .b32 %idesc, %idesc1, %tacc, %tsf;
\t.reg .b64 %tmA, %tmW, %tmSFA, %tmSFW, %tmY;
\t.reg .b16 %mask;
\t.reg .b32 %v<64>, %pk<{BN // 2}>;   // epilogue: TMEM words, packed bf16x2 outputs
\t.reg .f32 %alpha, %f<2>;
""")
    if WATCHDOG:
        e(ptxgen.WATCHDOG_REGS.rstrip("\n"))
    if K.fused:
        e(fused.regs())


def emit_setup(e, K):
    L = K.L
    pair = K.cl == 2
    e(f"""\t// ---- setup: thread identity, tensor-map addresses, shared-memory addresses ----
\tmov.u32 %thr, %tid.x;
\tshr.u32 %warp, %thr, 5;
\tand.b32 %lane, %thr, 31;
\tand.b32 %quad, %warp, 3;                    // TMEM lane quarter of this warp
\tsetp.eq.u32 %plane0, %lane, 0;
{ptxgen.COMMON_PARAMS}\tmov.u32 %sbase, smem;                       // the window's base is not 0: always add it
\tadd.u32 %bar_full, %sbase, {L['fixed']};
\tadd.u32 %bar_empty, %bar_full, {8 * K.stages};
\tadd.u32 %bar_accf, %bar_empty, {8 * K.stages};
\tadd.u32 %bar_acce, %bar_accf, {8 * K.acc};
\tadd.u32 %tslot, %sbase, {L['slot']};
\tsetp.eq.u32 %ptrue, 0, 0;""")
    if K.fused:
        fused.setup(e, K)
    if pair:
        e("""\tmov.u32 %tile0, %clusterid.x;
\tmov.u32 %tstride, %nclusterid.x;
\tmov.u32 %crank, %cluster_ctarank;
\tand.b32 %lead, %crank, 0xFFFFFFFE;          // the even CTA of this pair
\tshl.b32 %mrank, %crank, 7;                  // this CTA's rows of the pair tile
\tsetp.eq.u32 %plead, %crank, %lead;
\tmov.b16 %mask, 3;                           // both CTAs of the pair (cluster of two)""")
    else:
        e("""\tmov.u32 %tile0, %ctaid.x;
\tmov.u32 %tstride, %nctaid.x;
\tmov.u32 %crank, 0;
\tmov.u32 %lead, 0;
\tmov.u32 %mrank, 0;
\tsetp.eq.u32 %plead, 0, 0;""")
    e("""\t// ---- barrier init (thread 0), made visible to the async proxy and the cluster ----
\tsetp.ne.u32 %p0, %thr, 0;
\t@%p0 bra L_init_done;""")
    for i in range(K.stages):
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_full+{8 * i}], 1;")
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_empty+{8 * i}], 1;")
    for i in range(K.acc):
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_accf+{8 * i}], 1;")
        e(f"\tmbarrier.init.shared::cta.b64 [%bar_acce+{8 * i}], {4 * K.cl};")
    if K.fused:
        fused.init_barriers(e, K)
    e("""\tfence.mbarrier_init.release.cluster;
\tfence.proxy.async.shared::cta;
L_init_done:""")
    if pair:
        e(f"""\t// both CTAs launched and their barriers initialised before any remote access or the
\t// pair's collective allocation
\tbarrier.cluster.arrive.release;
\tbarrier.cluster.wait.acquire;""")
    e(f"""\t// ---- tensor memory: warp 2 allocates {K.tmem_alloc} columns (one CTA per SM: the shared-memory
\t// budget admits no second one, so the allocation cannot block on a neighbour) ----
\tsetp.ne.u32 %p0, %warp, 2;
\t@%p0 bra L_alloc_done;
\ttcgen05.alloc.{K.cg}.sync.aligned.shared::cta.b32 [%tslot], {K.tmem_alloc};
\ttcgen05.relinquish_alloc_permit.{K.cg}.sync.aligned;
L_alloc_done:
\ttcgen05.fence::before_thread_sync;""")
    if pair:
        e("""\tbarrier.cluster.arrive.release;             // both CTAs allocated; the slot is written
\tbarrier.cluster.wait.acquire;""")
    else:
        e("\tbarrier.sync 0;                              // barriers initialised; the slot is written")
    warp3 = "\n\tsetp.eq.u32 %p0, %warp, 3;\n\t@%p0 bra L_lowrank;" if K.fused else ""
    e(f"""\ttcgen05.fence::after_thread_sync;
\tld.shared.u32 %tmem, [%tslot];              // TMEM base (lane 0, first column)
\tadd.u32 %tsf, %tmem, {K.sf_base};              // first scale-factor column

\t// ---- role dispatch ----
\tsetp.eq.u32 %p0, %warp, 0;
\t@%p0 bra L_producer;
\tsetp.eq.u32 %p0, %warp, 1;
\t@%p0 bra L_mma;
\tsetp.ge.u32 %p0, %warp, 4;
\t@%p0 bra L_epilogue;{warp3}
\tbra L_teardown;                             // warp 2 (allocator){"" if K.fused else " and warp 3"}
""")


def tile_coords(e, K, tile, m0, n0):
    """tile index -> m0 (first row of this CTA's part of the tile), n0 (first column)."""
    e(f"""\t// tile coordinates (grouped raster: groups of `group` tile rows, n-major inside a group
\t// so consecutive tiles share the W tile in L2)
{ptxgen.grouped_raster(tile)}\tmul.lo.u32 {m0}, %r5, {BM * K.cl};
\tadd.u32 {m0}, {m0}, %mrank;                // this CTA's rows of the tile
\tmul.lo.u32 {n0}, %r6, {BN};""")


def walk_start(e, tag, cursors):
    """A role's walk over its tiles: its ring cursors (slot, phase) at 0, the first tile,
    and the loop head (L_<tag>_tile; L_<tag>_done after the last tile)."""
    for reg in cursors:
        e(f"\tmov.u32 {reg}, 0;")
    e(f"""\tmov.u32 %tile, %tile0;
L_{tag}_tile:
\tsetp.ge.u32 %p0, %tile, %ntiles;
\t@%p0 bra L_{tag}_done;""")


def walk_next(e, tag):
    e(f"""\tadd.u32 %tile, %tile, %tstride;
\tbra L_{tag}_tile;""")


def drain(e, bar, idx, phase, n, what):
    """The tail of a ring's producer side: wait until every slot's last fill has been
    released (slots never filled pass at once), so no arrive on this ring is in flight."""
    e(f"""\tmov.u32 %cnt, 0;
L_{what}_tail:
\tmul.lo.u32 %r10, {idx}, 8;
\tadd.u32 %r11, {bar}, %r10;
\txor.b32 %r12, {phase}, 1;""")
    e.wait("%r11", "%r12", what + "_tail")
    advance(e, idx, phase, n)
    e(f"""\tadd.u32 %cnt, %cnt, 1;
\tsetp.lt.u32 %p0, %cnt, {n};
\t@%p0 bra L_{what}_tail;""")


def emit_producer(e, K):
    L = K.L
    pair = K.cl == 2
    e(f"""
// =====================================================================================
// Producer (warp 0, lane 0): for every (tile, K stage) of the walk, wait `empty[s]`,
// {"(even CTA) " if pair else ""}arm `full[s]` with {K.tx_bytes} bytes, issue the four bulk tensor copies.
// =====================================================================================
L_producer:
\t@!%plane0 bra L_teardown;
\tprefetch.tensormap [%tmA];
\tprefetch.tensormap [%tmW];
\tprefetch.tensormap [%tmSFA];
\tprefetch.tensormap [%tmSFW];""")
    walk_start(e, "p", ["%s", "%ph"])
    tile_coords(e, K, "%tile", "%m0", "%n0")
    e(f"""\tshr.u32 %r8, %m0, 7;                        // SFA row block
\tshr.u32 %r9, %n0, 7;                        // SFW first row block
\tmad.lo.u32 %r7, %crank, {K.bn_cta}, %n0;        // W rows of this CTA{" (its N half)" if pair else ""}
\tmov.u32 %ks, 0;
L_p_k:
\tmul.lo.u32 %r10, %s, 8;
\tadd.u32 %r11, %bar_empty, %r10;
\txor.b32 %r12, %ph, 1;                      // first lap passes""")
    e.wait("%r11", "%r12", "empty")
    e(f"""\tadd.u32 %r13, %bar_full, %r10;""")
    if pair:
        e(f"""\t// both CTAs' bytes land on the even CTA's `full[s]`; only the even CTA arms it
\t@%plead mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r13], {K.tx_bytes};
\tmapa.shared::cluster.u32 %r13, %r13, %lead;""")
    else:
        e(f"\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r13], {K.tx_bytes};")
    e(f"""\tmad.lo.u32 %r14, %s, {L['stage']}, %sbase;  // stage base
\tshl.b32 %r15, %ks, 7;                      // K byte coordinate = ks * {BK // 2}
\tmul.lo.u32 %r16, %ks, {2 * K.kas};             // SF half-atom coordinate""")
    cta = ".cta_group::2" if pair else ""
    op = f"cp.async.bulk.tensor.{{}}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes{cta}"
    e(f"""\t{op.format(2)} [%r14], [%tmA, {{%r15, %m0}}], [%r13];
\tadd.u32 %r17, %r14, {L['b']};
\t{op.format(2)} [%r17], [%tmW, {{%r15, %r7}}], [%r13];
\tadd.u32 %r17, %r14, {L['sfa']};
\t{op.format(3)} [%r17], [%tmSFA, {{0, %r16, %r8}}], [%r13];
\tadd.u32 %r17, %r14, {L['sfb']};
\t{op.format(3)} [%r17], [%tmSFW, {{0, %r16, %r9}}], [%r13];""")
    advance(e, "%s", "%ph", K.stages)
    e("""\tadd.u32 %ks, %ks, 1;
\tsetp.lt.u32 %p0, %ks, %nks;
\t@%p0 bra L_p_k;""")
    walk_next(e, "p")
    e("""L_p_done:
\t// tail: every stage released (the last commits have arrived in this CTA)""")
    drain(e, "%bar_empty", "%s", "%ph", K.stages, "p")
    e("\tbra L_teardown;")


def emit_mma(e, K):
    L = K.L
    pair = K.cl == 2
    commit = (f"tcgen05.commit.{K.cg}.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [{{}}], %mask;"
              if pair else f"tcgen05.commit.{K.cg}.mbarrier::arrive::one.shared::cluster.b64 [{{}}];")
    e(f"""
// =====================================================================================
// MMA issuer (warp 1, lane 0{", even CTA" if pair else ""}).  Per tile: wait `accempty[a]`; per stage: wait
// `full[s]`, copy the stage's {K.kas + K.kas * K.sfb_blocks} scale atoms into its TMEM SF area, {K.mmas} MMAs, commit
// to `empty[s]`; after the last stage commit to `accfull[a]`.  cp -> mma and mma -> mma
// from one thread are pipelined (fact sheet sec. 4); the commits track both.
// =====================================================================================
L_mma:
\t@!%plane0 bra L_teardown;""")
    if pair:
        e("\t@!%plead bra L_teardown;                   // the odd CTA issues nothing")
    ids = sorted({K.mma_idesc(k) for k in range(K.mmas)})
    e(f"\tmov.b32 %idesc, 0x{ids[0]:08X};")
    if len(ids) > 1:
        e(f"\tmov.b32 %idesc1, 0x{ids[1]:08X};           // SF ID 2 (upper half-word)")
    if K.fused:
        e(f"\tmov.b32 %idesc_lr, 0x{fused.kind_f16_idesc(BM * K.cl, BN):08X};        // kind::f16, bf16 x bf16 -> fp32")
        e("\tmov.u32 %ls, 0;\n\tmov.u32 %lph, 0;                          // low-rank ring cursor")
    walk_start(e, "m", ["%s", "%ph", "%a", "%aph"])
    e("""\tmul.lo.u32 %r10, %a, 8;
\tadd.u32 %r11, %bar_acce, %r10;
\txor.b32 %r12, %aph, 1;                     // first use of each stage passes""")
    e.wait("%r11", "%r12", "accempty")
    e(f"""\ttcgen05.fence::after_thread_sync;
\tmad.lo.u32 %tacc, %a, {BN}, %tmem;           // accumulator stage a
\tsetp.ne.u32 %pacc, 0, 0;                    // the tile's first MMA overwrites
\tmov.u32 %ks, 0;
L_m_k:
\tmul.lo.u32 %r10, %s, 8;
\tadd.u32 %r11, %bar_full, %r10;""")
    e.wait("%r11", "%ph", "full")
    e(f"""\ttcgen05.fence::after_thread_sync;
\tmad.lo.u32 %r13, %s, {L['stage']}, %sbase;  // stage base
\tmad.lo.u32 %r14, %s, {K.sf_cols}, %tsf;         // SF area of stage s
\tshr.u32 %r15, %r13, 4;
\tand.b32 %r15, %r15, 0x3FFF;                 // descriptor start address field
\t// scale atoms -> TMEM (one 512-byte atom = 32 rows x 16 B -> 4 columns x 4 lane quarters)""")
    for j in range(K.kas):
        e(f"""\tadd.u32 %r16, %r15, {(L['sfa'] + j * ATOM) >> 4};
\tmov.b64 %sd, {{%r16, 0x{SF_HI:08X}}};
\tadd.u32 %r17, %r14, {K.sfa_col(j)};
\ttcgen05.cp.{K.cg}.32x128b.warpx4 [%r17], %sd;          // SFA atom {j}""")
    for blk in range(K.sfb_blocks):
        for j in range(K.kas):
            e(f"""\tadd.u32 %r16, %r15, {(L['sfb'] + (blk * K.kas + j) * ATOM) >> 4};
\tmov.b64 %sd, {{%r16, 0x{SF_HI:08X}}};
\tadd.u32 %r17, %r14, {K.sfb_col(j, blk)};
\ttcgen05.cp.{K.cg}.32x128b.warpx4 [%r17], %sd;          // SFW atom {j}, row block {blk}""")
    e(f"\t// {K.mmas} MMAs of K = {MMA_K}: operands advance 32 bytes inside the 128-byte swizzled row")
    for k in range(K.mmas):
        j = k // K.mma_per_atom
        ireg = "%idesc1" if K.mma_idesc(k) != ids[0] else "%idesc"
        pred = "%pacc" if k == 0 else "%ptrue"
        e(f"""\tadd.u32 %r16, %r15, {(L['a'] >> 4) + 2 * k};
\tmov.b64 %ad, {{%r16, 0x{OPND_HI:08X}}};
\tadd.u32 %r16, %r15, {(L['b'] >> 4) + 2 * k};
\tmov.b64 %bd, {{%r16, 0x{OPND_HI:08X}}};
\tadd.u32 %r17, %r14, {K.sfa_col(j)};
\tadd.u32 %r18, %r14, {K.sfb_col(j, 0)};
\ttcgen05.mma.{K.cg}.{K.kind} [%tacc], %ad, %bd, {ireg}, [%r17], [%r18], {pred};""")
    e(f"""\tsetp.eq.u32 %pacc, 0, 0;
\tadd.u32 %r11, %bar_empty, %r10;
\t{commit.format('%r11')}   // stage s free when these finish""")
    advance(e, "%s", "%ph", K.stages)
    e(f"""\tadd.u32 %ks, %ks, 1;
\tsetp.lt.u32 %p0, %ks, %nks;
\t@%p0 bra L_m_k;
\tmul.lo.u32 %r10, %a, 8;
\tadd.u32 %r11, %bar_accf, %r10;
\t{commit.format('%r11')}   // accumulator a complete""")
    if K.fused:
        fused.emit_mma_lowrank(e, K, commit)
    advance(e, "%a", "%aph", K.acc)
    walk_next(e, "m")
    e("""L_m_done:
\t// tail: every accumulator stage released by the epilogue (all its arrives landed)""")
    drain(e, "%bar_acce", "%a", "%aph", K.acc, "m")
    e("\tbra L_teardown;")


def load_chunk(e, q, K=None, mode="alpha"):
    """TMEM columns of chunk q (2 x tcgen05.ld.32x32b.x32) -> 32 packed bf16x2 registers
    %pk<32q..32q+31> = bf16_rne(alpha * acc), column pairs (2p, 2p+1) low/high.  mode
    "plain": the accumulator already holds the result (fused, after the low-rank pass);
    "affine": wc * (alpha * acc) + beta from the slice (fused, r = 0)."""
    c0 = EPI_CHUNK * q
    e(f"""\t// chunk {q}: TMEM columns {c0}..{c0 + EPI_CHUNK - 1} -> registers
\tadd.u32 %r27, %r26, {c0};
\ttcgen05.ld.sync.aligned.32x32b.x32.b32 {{{", ".join(f"%v{i}" for i in range(32))}}}, [%r27];
\tadd.u32 %r27, %r26, {c0 + 32};
\ttcgen05.ld.sync.aligned.32x32b.x32.b32 {{{", ".join(f"%v{i}" for i in range(32, 64))}}}, [%r27];
\ttcgen05.wait::ld.sync.aligned;""")
    if mode == "affine":
        fused.affine_chunk(e, K, q)
    for p in range(EPI_CHUNK // 2):
        if mode == "alpha":
            e(f"""\tmul.f32 %f0, %v{2 * p}, %alpha;
\tmul.f32 %f1, %v{2 * p + 1}, %alpha;
\tcvt.rn.bf16x2.f32 %pk{32 * q + p}, %f1, %f0;""")
        else:
            e(f"\tcvt.rn.bf16x2.f32 %pk{32 * q + p}, %v{2 * p + 1}, %v{2 * p};")


def store_chunk(e, q):
    """Registers of chunk q -> the warp's 32-row slice of buffer q%2 (128B swizzle) -> lane 0
    issues the bulk tensor store of 32 rows x 64 columns."""
    buf = q % WB_BUFS
    e(f"""\t// chunk {q} -> staging buffer {buf} -> Y columns n0+{EPI_CHUNK * q}..
\t@%plane0 cp.async.bulk.wait_group.read {WB_BUFS - 1};     // the store that used this buffer has read it
\tbar.warp.sync 0xffffffff;""")
    for j in range(8):
        vec = ", ".join(f"%pk{32 * q + 4 * j + i}" for i in range(4))
        e(f"""\txor.b32 %r27, %r23, {j << 4};
\tadd.u32 %r27, %r27, %r22;
\tst.shared.v4.b32 [%r27+{buf * WB_BUF}], {{{vec}}};""")
    e(f"""\tfence.proxy.async.shared::cta;              // generic-proxy writes -> the bulk store
\tbar.warp.sync 0xffffffff;
\tadd.u32 %r28, %n0, {EPI_CHUNK * q};
\tadd.u32 %r29, %r21, {buf * WB_BUF};
\t@%plane0 cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%tmY, {{%r28, %m0}}], [%r29];
\t@%plane0 cp.async.bulk.commit_group;""")


def final_pass(e, K, mode):
    """Every accumulator column of the tile -> bf16 -> staging -> bulk stores; the stage is
    released after the last TMEM load (and, with mode "affine", the slice too)."""
    pair = K.cl == 2
    nchunks = K.acc_per_tile
    for q in range(nchunks):
        load_chunk(e, q, K, mode)
        if q < WB_BUFS:
            store_chunk(e, q)
    e("""\t// every accumulator column is read: release the stage (one arrive per warp)
\ttcgen05.fence::before_thread_sync;
\tbar.warp.sync 0xffffffff;""")
    if pair:
        sem = "" if K.paircta else ".release.cluster"
        e(f"""\tadd.u32 %r12, %r24, %r10;
\t@%plane0 mbarrier.arrive{sem}.shared::cluster.b64 _, [%r12];""")
    else:
        e("""\tadd.u32 %r11, %bar_acce, %r10;
\t@%plane0 mbarrier.arrive.shared::cta.b64 _, [%r11];""")
    if mode == "affine":
        e("\t@%plane0 mbarrier.arrive.shared::cta.b64 _, [%bar_affe];   // slice read")
    advance(e, "%a", "%aph", K.acc)
    for q in range(WB_BUFS, nchunks):
        store_chunk(e, q)


def emit_epilogue(e, K):
    L = K.L
    pair = K.cl == 2
    nchunks = K.acc_per_tile
    held = nchunks - WB_BUFS
    e(f"""
// =====================================================================================
// Epilogue (warps 4-7).  Warp w owns TMEM lanes 32q..32q+31, q = w%4 (the lane quarter
// a warp may access), i.e. output rows m0 + 32q + lane.  A tile is {nchunks} chunks of {EPI_CHUNK}
// columns; a chunk is loaded from TMEM, scaled by alpha in fp32 and rounded to bf16x2
// registers.  The first {WB_BUFS} chunks go straight to the {WB_BUFS} staging buffers; the last {held}
// stay in registers ({held * EPI_CHUNK // 2} words) until the accumulator is released, so the next tile's
// MMAs wait for {nchunks} TMEM loads, not for the stores.  Staging: the warp's 32 rows x 128 B
// of buffer chunk%{WB_BUFS} (128B swizzle: 16-byte unit j of row r at (j ^ r%8)*16), fence, and
// lane 0 issues the bulk tensor store, tracked by its own bulk async-group.
// =====================================================================================
L_epilogue:
\tld.param.f32 %alpha, [p_alpha];
\tsetp.eq.u32 %p0, %thr, 128;
\t@%p0 prefetch.tensormap [%tmY];
\tshl.b32 %r20, %quad, 21;                   // lane offset (32q) << 16
\tadd.u32 %r20, %r20, %tmem;                 // this warp's TMEM lanes
\tadd.u32 %r21, %sbase, {L['wb']};
\tmad.lo.u32 %r21, %quad, {32 * EPI_CHUNK * 2}, %r21;      // this warp's 32-row slice of buffer 0
\tshl.b32 %r22, %lane, 7;                    // row * 128
\tadd.u32 %r22, %r22, %r21;
\tand.b32 %r23, %lane, 7;                    // swizzle phase of the row
\tshl.b32 %r23, %r23, 4;""")
    if pair:
        e("""\tmapa.shared::cluster.u32 %r24, %bar_acce, %lead;   // the even CTA's accempty""")
        if K.fused:
            e("""\tmapa.shared::cluster.u32 %r19, %bar_affd, %lead;   // the even CTA's affdone""")
    walk_start(e, "e", ["%a", "%aph"] + (["%fph"] if K.fused else []))
    tile_coords(e, K, "%tile", "%m0", "%n0")
    e("""\tshl.b32 %r25, %quad, 5;
\tadd.u32 %m0, %m0, %r25;                    // this warp's first row
\tmul.lo.u32 %r10, %a, 8;
\tadd.u32 %r11, %bar_accf, %r10;""")
    e.wait("%r11", "%aph", "accfull")
    e(f"""\tbar.warp.sync 0xffffffff;
\ttcgen05.fence::after_thread_sync;
\tmad.lo.u32 %r26, %a, {BN}, %r20;           // accumulator stage a, this warp's lanes""")
    if not K.fused:
        final_pass(e, K, "alpha")
    else:
        e("""\t// the tile's wc/beta slice (warp 3)""")
        e.wait("%bar_affr", "%fph", "affready")
        e("""\txor.b32 %fph, %fph, 1;
\tbar.warp.sync 0xffffffff;                  // reconverge before the .aligned TMEM loads
\t@!%plr bra L_e_affine_only;""")
        fused.emit_affine_pass(e, K)
        final_pass(e, K, "plain")
        e("""\tbra L_e_tile_done;
L_e_affine_only:""")
        final_pass(e, K, "affine")
        e("L_e_tile_done:")
    walk_next(e, "e")
    e("""L_e_done:
\t// the last bulk stores must finish reading shared memory before the CTA exits
\t@%plane0 cp.async.bulk.wait_group 0;
\tbra L_teardown;""")


def emit_teardown(e, K):
    pair = K.cl == 2
    sync = ("""\tbarrier.cluster.arrive.release;
\tbarrier.cluster.wait.acquire;""" if pair else "\tbarrier.sync 0;")
    e(f"""
// =====================================================================================
// Teardown (every thread).  Each role has drained its rings, so nothing is in flight
// towards this CTA{" or its peer" if pair else ""}; the allocator frees tensor memory after every reader.
// =====================================================================================
L_teardown:
\tbar.warp.sync 0xffffffff;
\ttcgen05.fence::before_thread_sync;
{sync}
\tsetp.ne.u32 %p0, %warp, 2;
\t@%p0 bra L_dealloc_done;
\ttcgen05.fence::after_thread_sync;
\ttcgen05.dealloc.{K.cg}.sync.aligned.b32 %tmem, {K.tmem_alloc};
L_dealloc_done:""")
    if pair:
        e("""\t// neither CTA leaves before both have deallocated (the pair's dealloc is collective)
\tbarrier.cluster.arrive.release;
\tbarrier.cluster.wait.acquire;""")
    e("\tret;")


def main():
    return ptxgen.main("gen_sm100a", __doc__, INSTANCES,
                       lambda inst: entry_name(inst[1], inst[3], inst[4], target=inst[0], family=inst[2]),
                       lambda inst: emit_kernel(*inst[1:], target=inst[0]), OUTDIR, subdir_of=lambda inst: inst[0])


if __name__ == "__main__":
    sys.exit(main())
