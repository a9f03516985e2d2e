#!/usr/bin/env python3
"""wgmma_rs.py -- can one warpgroup drive the H200's tensor cores alone, A converted in registers?

The question a ping-pong schedule (each consumer warpgroup its own tile, one in its K loop while
the other runs its epilogue) depends on.  The probe kernels run nothing but the consumer's K
loop of the sm_90a `_x` kernels: per 64-wide K chunk, load the fp4 A words and their scales
from shared memory, convert them to f16 by bit placement and one f16x2 multiply (the kernels'
sequence, tools/sm90a_ptx/convert.py fp4x8_to_placed), then wgmma m64n128k16 from registers against a
K-major, 128B-swizzled f16 B in shared memory; one commit and `wait_group 1` a chunk, the A
fragments double-buffered.  No copies, no barriers, no epilogue: the rate is the K loop's
ceiling.  The data is a fixed pseudo-random pattern of finite values (every 32-bit word
(i * 2654435761) & 0x3B3F3B3F: f16 below 1, ue4m3 scales up to 1.875, no NaN), not zeros, so
that the tensor cores see changing operands (the converted A values are small: the kernels'
placed values are 2^-14 of the real ones until the accumulators are unscaled).

  emit DIR   write DIR/<entry>.ptx for every probe entry (deterministic)
  run DIR    load DIR/<entry>.cubin (or .ptx, JIT) with the driver API (ctypes, libcuda.so.1),
             launch one CTA per SM, time with events, check that thread 0's accumulator sum is
             finite and not 0 (else the entry fails: status 1), print TFLOP/s and the ratio to the
             two-warpgroup 64 x 256 configuration (today's kernels)
             [--iters N (K loop entries: 2-chunk iterations, 4000)] [--tiles N (tiles a
             warpgroup, 80)] [--kchunks N (chunks a tile, even, 48: K = 3072)] [--reps N (5)]
             [--csv FILE]; it also prints ping-pong / cooperative

Entries (probe_sm90a_wgmma_rs_<tile per warpgroup>_<warpgroups>[_noconv]):
  m64n256_wg2   two warpgroups, each 64 rows x 256 columns (2 x m64n128 per k16, one A
                fragment): today's consumer K loop
  m64n256_wg1   the same, one warpgroup alone
  m128n128_wg1  one warpgroup, 128 rows x 128 columns (2 x m64n128 per k16, two A fragments:
                twice the conversion per FLOP): a ping-pong consumer
  m128n128_wg2  two such warpgroups at once
  m64n256_coop  two warpgroups, each 64 x 256, in tiles of --kchunks chunks, each tile ending in
                an epilogue (the accumulators to bf16 in shared memory, one 32 KiB bulk store a
                warpgroup): today's cooperative schedule, epilogues together
  m128n128_pp   two warpgroups, each its own 128 x 128 tiles, the K loops taking turns (named
                barriers: a warpgroup starts its K loop when the other has issued its last
                wgmma), each epilogue under the other's K loop: ping-pong
  *_noconv      the loop entries without the conversion (A fragments reused): its cost
  *_ss          A read from shared memory by the wgmma (as cuBLAS's bf16 kernels): the
                tensor cores' ceiling in this harness
Exit status: 0 ok, 1 a launch or the driver failed, 2 bad arguments, 3 no GPU.
"""
import ctypes
import math
import os
import statistics
import sys

CHUNK_K = 64                      # K per chunk (one commit group)
SMEM_BYTES = 200 * 1024           # forces one CTA per SM
B_OFF = 0                         # B: 256 rows x 128 B (K-major, 128B swizzle) = 32 KiB
A_OFF = 32768                     # A: 128 rows x 32 B of fp4 (64 elements a row)
S_OFF = A_OFF + 4096              # scales: 128 rows x 4 bytes (one ue4m3 a 16 elements)
A2_OFF = 65536                    # ss: A as f16, 128 rows x 128 B (K-major, 128B swizzle) = 16 KiB

STG_OFF = 98304                   # coop / pp: each warpgroup's 32 KiB epilogue staging
CONFIGS = [  # (name, warpgroups, rows a warpgroup, columns a warpgroup, schedule)
    ("m64n256_wg2", 2, 64, 256, "loop"),
    ("m64n256_wg1", 1, 64, 256, "loop"),
    ("m128n128_wg1", 1, 128, 128, "loop"),
    ("m128n128_wg2", 2, 128, 128, "loop"),
    ("m64n256_coop", 2, 64, 256, "coop"),
    ("m128n128_pp", 2, 128, 128, "pp"),
]


MODES = ("conv", "noconv", "ss")


def entries():
    for name, wgs, rows, cols, sched in CONFIGS:
        for mode in MODES:
            if sched != "loop" and mode == "noconv":
                continue
            yield ("probe_sm90a_wgmma_rs_" + name + ("" if mode == "conv" else "_" + mode), wgs, rows, cols, mode,
                   sched)


def acc_list(base):
    return "{" + ", ".join("%%acc%d" % (base + i) for i in range(64)) + "}"


def convert(out, w, sreg, tmp):
    """4 f16x2 words out[0..3] from the 8 e2m1 codes in w, times the scale pair in sreg."""
    a, b = tmp
    return [
        "\tmul.lo.u32 %s, %s, 8;" % (a, w),
        "\tlop3.b32 %s, %s, %s, 0x07070707, 0xE4;" % (a, w, a),
        "\tshr.u32 %s, %s, 3;" % (b, w),
        "\tlop3.b32 %s, %s, %s, 0x0E0E0E0E, 0xE4;" % (b, b, w),
        "\tmul.lo.u32 %s, %s, 512;" % (out[0], a),
        "\tand.b32 %s, %s, 0x8E008E00;" % (out[0], out[0]),
        "\tmul.lo.u32 %s, %s, 256;" % (out[1], b),
        "\tand.b32 %s, %s, 0x8E008E00;" % (out[1], out[1]),
        "\tmul.lo.u32 %s, %s, 2;" % (out[2], a),
        "\tand.b32 %s, %s, 0x8E008E00;" % (out[2], out[2]),
        "\tand.b32 %s, %s, 0x8E008E00;" % (out[3], b),
    ] + ["\tmul.rn.f16x2 %s, %s, %s;" % (o, o, sreg) for o in out]


def chunk(L, frag_set, halves, mode, wait):
    """One 64-wide K chunk: convert set `frag_set`'s fragments, four k16 steps, commit, wait 1."""
    if mode == "conv":
        for h in range(halves):                 # row group h: rows 64h + (r, r+8)
            L.append("\tld.shared.v2.b32 {%%w0, %%w1}, [%%aaddr+%d];" % (h * 2048))
            L.append("\tld.shared.v2.b32 {%%w2, %%w3}, [%%aaddr+%d];" % (h * 2048 + 256))
            L.append("\tld.shared.u8 %%s0, [%%saddr+%d];" % (h * 256))
            L.append("\tld.shared.u8 %%s1, [%%saddr+%d];" % (h * 256 + 32))
            for j, s in enumerate(("%s0", "%s1")):
                L.append("\tcvt.u16.u32 %%hs, %s;" % s)
                L.append("\tcvt.rn.f16x2.e4m3x2 %%sc%d, %%hs;" % j)
                L.append("\tprmt.b32 %%sc%d, %%sc%d, 0, 0x1010;" % (j, j))
            for wi in range(4):                 # words 0, 1: row r; 2, 3: row r + 8
                out = ["%%f%s%d_%d" % (frag_set, h, 4 * wi + i) for i in range(4)]
                L.extend(convert(out, "%%w%d" % wi, "%%sc%d" % (wi // 2), ("%t0", "%t1")))
    L.append("\twgmma.fence.sync.aligned;")
    L.append("\tmov.b64 %rdb, {%bdesc, %bhi};")
    L.append("\tmov.b64 %rda, {%adesc, %bhi};")
    for k in range(4):
        sd = "%pacc" if k == 0 else "%ptrue"   # a tile's first k16 step overwrites the accumulators
        for h in range(halves):
            if mode == "ss":                    # A from shared memory too: 64 rows x 128 B a half
                a = "%rda" if h == 0 else "%rde"
                if h == 1:
                    L.append("\tadd.s64 %rde, %rda, 512;")
                if halves == 2:
                    L.append("\twgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 %s, %s, %%rdb, %s, 1, 1, 0, 0;"
                             % (acc_list(64 * h), a, sd))
                else:
                    L.append("\twgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 %s, %s, %%rdb, %s, 1, 1, 0, 0;"
                             % (acc_list(0), a, sd))
                    L.append("\tadd.s64 %rdc, %rdb, 1024;")
                    L.append("\twgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 %s, %s, %%rdc, %s, 1, 1, 0, 0;"
                             % (acc_list(64), a, sd))
                continue
            # fragment for k16 step k: (row r, cols 2q), (row r+8, ...), (row r, +8), (row r+8, +8)
            fr = ["%%f%s%d_%d" % (frag_set, h, i) for i in (2 * k, 8 + 2 * k, 2 * k + 1, 9 + 2 * k)]
            frag = "{" + ", ".join(fr) + "}"
            if halves == 2:                     # 128 rows x 128 columns: same B, two A fragments
                L.append("\twgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 %s, %s, %%rdb, %s, 1, 1, 0;"
                         % (acc_list(64 * h), frag, sd))
            else:                               # 64 rows x 256 columns: one A fragment, two B halves
                L.append("\twgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 %s, %s, %%rdb, %s, 1, 1, 0;"
                         % (acc_list(0), frag, sd))
                L.append("\tadd.s64 %rdc, %rdb, 1024;")
                L.append("\twgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 %s, %s, %%rdc, %s, 1, 1, 0;"
                         % (acc_list(64), frag, sd))
        L.append("\tadd.s64 %rdb, %rdb, 2;              // next k16: +32 bytes")
        if mode == "ss":
            L.append("\tadd.s64 %rda, %rda, 2;")
    L.append("\twgmma.commit_group.sync.aligned;")
    L.append("\tmov.pred %pacc, %ptrue;")
    L.append("\twgmma.wait_group.sync.aligned %d;" % wait)


def epilogue(L):
    """A tile's epilogue, as the kernels' in kind: wait until this warpgroup's previous bulk
    store has read its staging, the 128 accumulators to bf16 into the staging (16 stores of 16
    bytes a thread, consecutive across the warpgroup), fence, warpgroup barrier, one thread
    stores the 32 KiB to global memory by one bulk copy."""
    L += ["\t// ---- epilogue ----",
          "\t@%pissue cp.async.bulk.wait_group.read 0;",
          "\tbar.sync %bid, 128;"]
    for g in range(16):
        for j in range(4):
            L.append("\tcvt.rn.bf16x2.f32 %%e%d, %%acc%d, %%acc%d;" % (j, 8 * g + 2 * j + 1, 8 * g + 2 * j))
        L.append("\tst.shared.v4.b32 [%%stg+%d], {%%e0, %%e1, %%e2, %%e3};" % (g * 2048))
    L += ["\tfence.proxy.async.shared::cta;",
          "\tbar.sync %bid, 128;",
          "\t@%pissue cp.async.bulk.global.shared::cta.bulk_group [%gout], [%stg0], 32768;",
          "\t@%pissue cp.async.bulk.commit_group;"]


def emit(entry, wgs, rows, cols, mode, sched):
    halves = rows // 64
    L = ["// %s: generated by bench/probes/wgmma_rs.py (do not edit); see its docstring." % entry,
         "// %d warpgroup(s), each %d x %d a k16 step (%s), %s." % (
             wgs, rows, cols, "two m64n128k16 on two A fragments" if halves == 2 else
             "two m64n128k16 on one A fragment", {"conv": "A converted from fp4 every chunk",
             "noconv": "A fragments converted once and reused",
             "ss": "A read by the wgmma from shared memory (f16, 128B swizzle), no conversion"}[mode]),
         "// Shared memory: B f16 at %d (256 x 128 B, K-major, 128B swizzle), A fp4 at %d (128 rows x 32 B)," % (B_OFF, A_OFF),
         "// scales at %d (128 x 4 B), A f16 for _ss at %d (128 x 128 B), epilogue staging at %d (32 KiB a" % (S_OFF, A2_OFF, STG_OFF),
         "// warpgroup); all filled once with a fixed pattern, never reloaded.",
         "// Schedule: %s." % {
             "loop": "the K loop alone, p_iters iterations of two chunks (fragment sets X, Y)",
             "coop": "p_iters tiles a warpgroup of p_kchunks chunks, each followed by its epilogue; the "
                     "warpgroups run side by side (barriers 3 + wg: a warpgroup's own)",
             "pp": "p_iters tiles a warpgroup of p_kchunks chunks; WG0 starts, and a warpgroup arrives on named "
                   "barrier 1 (WG0) / 2 (WG1) when its last wgmma of a tile is issued, the other waits there "
                   "before its next K loop; epilogues (barriers 3 + wg) run under the other's K loop"}[sched],
         ".version 8.0", ".target sm_90a", ".address_size 64", "",
         ".extern .shared .align 1024 .b8 smem[];", "",
         ".visible .entry %s(.param .u64 p_out, .param .u32 p_iters, .param .u32 p_kchunks)" % entry,
         "{",
         "\t.reg .pred %p, %ptrue, %pacc, %pissue, %pw0;",
         "\t.reg .b16 %hs;",
         "\t.reg .b32 %th, %lane, %wrow, %sbase, %aaddr, %saddr, %adesc, %bdesc, %bhi, %it, %i, %w<4>, %s<2>, %sc<2>, %t<2>, %kc, %kn, %tile, %wg, %bid, %stg, %stg0, %e<4>;",
         "\t.reg .b32 %fX0_<16>, %fX1_<16>, %fY0_<16>, %fY1_<16>;",
         "\t.reg .f32 %acc<128>;",
         "\t.reg .b64 %rda, %rdb, %rdc, %rde, %out, %gout;",
         "\tld.param.u64 %out, [p_out];",
         "\tld.param.u32 %it, [p_iters];",
         "\tld.param.u32 %kn, [p_kchunks];",
         "\tshr.u32 %kn, %kn, 1;                  // chunks come in pairs (X, Y)",
         "\tmov.u32 %th, %tid.x;",
         "\tsetp.eq.u32 %ptrue, 0, 0;",
         "\tmov.pred %pacc, %ptrue;",
         "\tmov.u32 %sbase, smem;",
         "\t// the 128B swizzle needs a 1024-byte aligned base: trap rather than time a wrong layout",
         "\tand.b32 %i, %sbase, 1023;",
         "\tsetp.ne.u32 %p, %i, 0;",
         "\t@%p trap;",
         "\t// fill the probe's shared memory (B, A, scales, A2: 80 KiB), word i = (i * 2654435761) & 0x3B3F3B3F",
         "\tmov.u32 %i, %th;",
         "L_fill:",
         "\tshl.b32 %w0, %i, 4;",
         "\tadd.u32 %w0, %w0, %sbase;",
         "\tshl.b32 %w1, %i, 2;",
         "\tmul.lo.u32 %s0, %w1, 2654435761;",
         "\tand.b32 %s0, %s0, 0x3B3F3B3F;",
         "\tadd.u32 %s1, %w1, 1;",
         "\tmul.lo.u32 %s1, %s1, 2654435761;",
         "\tand.b32 %s1, %s1, 0x3B3F3B3F;",
         "\tadd.u32 %w2, %w1, 2;",
         "\tmul.lo.u32 %w2, %w2, 2654435761;",
         "\tand.b32 %w2, %w2, 0x3B3F3B3F;",
         "\tadd.u32 %w3, %w1, 3;",
         "\tmul.lo.u32 %w3, %w3, 2654435761;",
         "\tand.b32 %w3, %w3, 0x3B3F3B3F;",
         "\tst.shared.v4.b32 [%w0], {%s0, %s1, %w2, %w3};",
         "\tadd.u32 %%i, %%i, %d;" % (128 * wgs),
         "\tsetp.lt.u32 %%p, %%i, %d;" % ((A2_OFF + 16384) // 16),
         "\t@%p bra L_fill;",
         "\t// the wgmmas read shared memory through the async proxy: the generic stores must be visible to it",
         "\tfence.proxy.async.shared::cta;",
         "\tbar.sync 0;",
         "\t// this thread's A rows: r = 16 * warp + lane / 4 (and r + 8), its 8-byte column pair lane % 4",
         "\tand.b32 %lane, %th, 127;",
         "\tshr.u32 %wrow, %lane, 5;",
         "\tshl.b32 %wrow, %wrow, 4;",
         "\tand.b32 %w0, %lane, 31;",
         "\tshr.u32 %w1, %w0, 2;",
         "\tadd.u32 %wrow, %wrow, %w1;",
         "\tshl.b32 %aaddr, %wrow, 5;",
         "\tand.b32 %w2, %w0, 3;",
         "\tshl.b32 %w2, %w2, 3;",
         "\tadd.u32 %aaddr, %aaddr, %w2;",
         "\tadd.u32 %%aaddr, %%aaddr, %d;" % A_OFF,
         "\tadd.u32 %aaddr, %aaddr, %sbase;",
         "\tshl.b32 %saddr, %wrow, 2;",
         "\tadd.u32 %%saddr, %%saddr, %d;" % S_OFF,
         "\tadd.u32 %saddr, %saddr, %sbase;",
         "\t// B descriptor: K-major, 128B swizzle, SBO 1024 (encoded 64), start = B >> 4",
         "\tadd.u32 %%bdesc, %%sbase, %d;" % B_OFF,
         "\tshr.u32 %bdesc, %bdesc, 4;",
         "\tmov.b32 %bhi, 0x40000040;",
         "\t// ss: A's descriptor, the same layout at A2 (128 rows x 128 B)",
         "\tadd.u32 %%adesc, %%sbase, %d;" % A2_OFF,
         "\tshr.u32 %adesc, %adesc, 4;"]
    for a in range(128):
        L.append("\tmov.f32 %%acc%d, 0f00000000;" % a)
    if mode == "noconv":                        # fragments: the pattern's f16 pairs, converted never
        for s in "XY":
            for h in range(2):
                for i in range(16):
                    L.append("\tmov.b32 %%f%s%d_%d, 0x%08X;" % (s, h, i, ((64 * h + 16 * i + (s == "Y")) * 2654435761) & 0x3B3F3B3F))
    if sched == "loop":                         # the K loop alone, 2 chunks an iteration
        L.append("L_loop:")
        chunk(L, "X", halves, mode, 1)
        chunk(L, "Y", halves, mode, 1)
        L += ["\tsub.u32 %it, %it, 1;",
              "\tsetp.ne.u32 %p, %it, 0;",
              "\t@%p bra L_loop;",
              "\twgmma.wait_group.sync.aligned 0;"]
    else:                                       # tiles of p_kchunks chunks, each with its epilogue
        L += ["\t// the warpgroup, its barrier (3 + wg), its staging, its thread that stores, its output",
              "\tshr.u32 %wg, %th, 7;",
              "\tsetp.eq.u32 %pw0, %wg, 0;",
              "\tadd.u32 %bid, %wg, 3;",
              "\tmad.lo.u32 %%stg0, %%wg, 32768, %d;" % STG_OFF,
              "\tadd.u32 %stg0, %stg0, %sbase;",
              "\tshl.b32 %stg, %lane, 4;",
              "\tadd.u32 %stg, %stg, %stg0;",
              "\tsetp.eq.u32 %pissue, %lane, 0;",
              "\tmov.u32 %i, %ctaid.x;",
              "\tmad.lo.u32 %i, %i, 2, %wg;",
              "\tmul.wide.u32 %gout, %i, 32768;",
              "\tadd.s64 %gout, %gout, %out;",
              "\tadd.s64 %gout, %gout, 256;",
              "\tmov.u32 %tile, 0;                    // tile index (its own register: %t0 / %t1 are the conversion's)"]
        L.append("L_tile:")
        if sched == "pp":
            L += ["\t// ping-pong: the K loops take turns (named barrier 1: WG0's K loop issued; 2: WG1's)",
                  "\t@%pw0 bra L_turn0;",
                  "\tbar.sync 1, 256;",
                  "\tbra L_turn_done;",
                  "L_turn0:",
                  "\tsetp.eq.u32 %p, %tile, 0;",
                  "\t@%p bra L_turn_done;",
                  "\tbar.sync 2, 256;",
                  "L_turn_done:"]
        L += ["\tsetp.ne.u32 %pacc, 0, 0;               // the tile's first k16 step overwrites",
              "\tmov.u32 %kc, %kn;",
              "L_k:"]
        chunk(L, "X", halves, mode, 1)
        chunk(L, "Y", halves, mode, 1)
        L += ["\tsub.u32 %kc, %kc, 1;",
              "\tsetp.ne.u32 %p, %kc, 0;",
              "\t@%p bra L_k;"]
        if sched == "pp":
            L += ["\t// hand the tensor cores over as soon as the last wgmma is issued",
                  "\t@%pw0 bra L_hand0;",
                  "\tbar.arrive 2, 256;",
                  "\tbra L_hand_done;",
                  "L_hand0:",
                  "\tbar.arrive 1, 256;",
                  "L_hand_done:"]
        L.append("\twgmma.wait_group.sync.aligned 0;")
        epilogue(L)
        L += ["\tadd.u32 %tile, %tile, 1;",
              "\tsetp.ne.u32 %p, %tile, %it;",
              "\t@%p bra L_tile;"]
        if sched == "pp":
            L += ["\t// WG0 takes WG1's last hand-over, so that every barrier phase completes",
                  "\t@!%pw0 bra L_tiles_done;",
                  "\tbar.sync 2, 256;",
                  "L_tiles_done:"]
        L += ["\t@%pissue cp.async.bulk.wait_group 0;  // the last bulk store done before the CTA ends"]
    L += ["\t// the sum of every accumulator out, so that no wgmma is dead"] + [
          "\tadd.f32 %%acc0, %%acc0, %%acc%d;" % a for a in range(1, 128)] + [
          "\t// thread 0 stores it",
          "\tsetp.ne.u32 %p, %th, 0;",
          "\t@%p bra L_end;",
          "\tst.global.f32 [%out], %acc0;",
          "L_end:",
          "\tret;",
          "}", ""]
    return "\n".join(L)


# ---- run: the driver API through ctypes ----------------------------------------------------

def check(cu, rc, what):
    if rc != 0:
        s = ctypes.c_char_p()
        cu.cuGetErrorString(rc, ctypes.byref(s))
        raise RuntimeError("%s: CUDA error %d (%s)" % (what, rc, s.value.decode() if s.value else "?"))


def run(d, iters, tiles, kchunks, reps, csv):
    try:
        cu = ctypes.CDLL("libcuda.so.1")
    except OSError as ex:
        print("wgmma_rs: no GPU: cannot open libcuda.so.1 (%s)" % ex)
        return 3
    check(cu, cu.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(cu, cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    check(cu, cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    check(cu, cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    sms, clk = ctypes.c_int(), ctypes.c_int()
    check(cu, cu.cuDeviceGetAttribute(ctypes.byref(sms), 16, dev), "SM count")
    check(cu, cu.cuDeviceGetAttribute(ctypes.byref(clk), 13, dev), "clock")
    out = ctypes.c_uint64()                     # the sum, then each warpgroup's 32 KiB tile output
    check(cu, cu.cuMemAlloc_v2(ctypes.byref(out), ctypes.c_size_t(256 + sms.value * 2 * 32768)), "cuMemAlloc")
    e0, e1 = ctypes.c_void_p(), ctypes.c_void_p()
    check(cu, cu.cuEventCreate(ctypes.byref(e0), 0), "cuEventCreate")
    check(cu, cu.cuEventCreate(ctypes.byref(e1), 0), "cuEventCreate")
    rows = []
    for entry, wgs, r, c, mode, sched in entries():
        path = os.path.join(d, entry + ".cubin")
        if not os.path.exists(path):
            path = os.path.join(d, entry + ".ptx")
        image = open(path, "rb").read() + (b"\0" if path.endswith(".ptx") else b"")
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        check(cu, cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(image)), "load " + path)
        check(cu, cu.cuModuleGetFunction(ctypes.byref(fn), mod, entry.encode()), "function " + entry)
        check(cu, cu.cuFuncSetAttribute(fn, 8, SMEM_BYTES), "dynamic shared memory")
        n = iters if sched == "loop" else tiles
        chunks = 2 * iters if sched == "loop" else tiles * kchunks   # chunks a warpgroup
        params = [ctypes.c_uint64(out.value), ctypes.c_uint32(n), ctypes.c_uint32(kchunks)]
        args = (ctypes.c_void_p * 3)(*[ctypes.cast(ctypes.byref(x), ctypes.c_void_p) for x in params])
        check(cu, cu.cuMemsetD8_v2(ctypes.c_uint64(out.value), ctypes.c_ubyte(0), ctypes.c_size_t(256)), "memset")
        times = []
        for rep in range(reps + 2):             # two warm-up launches
            check(cu, cu.cuEventRecord(e0, None), "event")
            check(cu, cu.cuLaunchKernel(fn, sms.value, 1, 1, 128 * wgs, 1, 1, SMEM_BYTES, None, args, None),
                  "launch " + entry)
            check(cu, cu.cuEventRecord(e1, None), "event")
            check(cu, cu.cuEventSynchronize(e1), "run " + entry)
            ms = ctypes.c_float()
            check(cu, cu.cuEventElapsedTime(ctypes.byref(ms), e0, e1), "elapsed")
            if rep >= 2:
                times.append(ms.value)
        check(cu, cu.cuModuleUnload(mod), "unload")
        got = ctypes.c_float()                  # thread 0's sum of its accumulators: no wgmma ran if 0
        check(cu, cu.cuMemcpyDtoH_v2(ctypes.byref(got), ctypes.c_uint64(out.value), ctypes.c_size_t(4)), "read back")
        if not math.isfinite(got.value) or got.value == 0.0:
            raise RuntimeError("%s: its accumulator sum is %r: the wgmmas did not run as built" % (entry, got.value))
        ms = statistics.median(times)
        flop = 2.0 * 64 * 128 * 16 * 2 * 4 * chunks * wgs * sms.value   # 2 wgmmas a k16, 4 k16 a chunk
        rows.append((entry, wgs, r, c, mode, sched, ms, flop / ms / 1e9))
    base = {m: t for e, w, r, c, m, sc, ms, t in rows if w == 2 and r == 64 and sc == "loop"}
    print("device: %d SMs, clock %d MHz; K loop alone: %d iterations of 2 chunks (K = %d each); tiles: %d a "
          "warpgroup of %d chunks (K = %d) with their epilogues; median of %d launches"
          % (sms.value, clk.value // 1000, iters, CHUNK_K, tiles, kchunks, kchunks * CHUNK_K, reps))
    print("%-40s %3s %9s %6s %5s %10s %10s %s" % ("entry", "wgs", "tile/wg", "A", "sched", "median ms", "TFLOP/s",
                                                  "vs wg2 64x256 loop, same A"))
    for e, w, r, c, m, sc, ms, t in rows:
        print("%-40s %3d %9s %6s %5s %10.4f %10.1f %9.3f" % (e, w, "%dx%d" % (r, c), m, sc, ms, t, t / base[m]))
    tile = {(m, sc): t for e, w, r, c, m, sc, ms, t in rows if sc != "loop"}
    for m in MODES:
        if (m, "pp") in tile:
            print("ping-pong / cooperative, A %s: %.3f" % (m, tile[(m, "pp")] / tile[(m, "coop")]))
    if csv:
        with open(csv, "w") as f:
            f.write("entry,warpgroups,rows,cols,a_operand,schedule,median_ms,tflops,ratio_vs_wg2_m64n256\n")
            for e, w, r, c, m, sc, ms, t in rows:
                f.write("%s,%d,%d,%d,%s,%s,%.5f,%.2f,%.4f\n" % (e, w, r, c, m, sc, ms, t, t / base[m]))
    return 0


def main(argv):
    if len(argv) < 2 or argv[0] in ("-h", "--help") or argv[0] not in ("emit", "run"):
        print(__doc__.strip(), file=sys.stderr if len(argv) and argv[0] not in ("-h", "--help") else sys.stdout)
        return 0 if len(argv) and argv[0] in ("-h", "--help") else 2
    cmd, d, rest = argv[0], argv[1], argv[2:]
    if cmd == "emit":
        if rest:
            print("wgmma_rs: emit takes only the directory", file=sys.stderr)
            return 2
        os.makedirs(d, exist_ok=True)
        for e in entries():
            with open(os.path.join(d, e[0] + ".ptx"), "w") as f:
                f.write(emit(*e))
        return 0
    opts = {"--iters": 4000, "--tiles": 80, "--kchunks": 48, "--reps": 5, "--csv": None}
    while rest:
        k = rest.pop(0)
        if k not in opts or not rest:
            print("wgmma_rs: unknown option or missing value: %s" % k, file=sys.stderr)
            return 2
        v = rest.pop(0)
        if k == "--csv":
            opts[k] = v
        elif not v.isdigit() or not 1 <= int(v) <= 1000000 or (k == "--kchunks" and int(v) % 2):
            print("wgmma_rs: %s needs an integer from 1 to 1000000%s, got '%s'"
                  % (k, " (even)" if k == "--kchunks" else "", v), file=sys.stderr)
            return 2
        else:
            opts[k] = int(v)
    try:
        return run(d, opts["--iters"], opts["--tiles"], opts["--kchunks"], opts["--reps"], opts["--csv"])
    except (RuntimeError, OSError) as ex:
        print("wgmma_rs: %s" % ex, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
