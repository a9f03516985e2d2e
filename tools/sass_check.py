#!/usr/bin/env python3
"""sass_check.py -- what ptxas made of the kernels, read from their SASS.

    tools/sass_check.py [--quiet] CUBIN [CUBIN ...]

Disassembles each cubin with nvdisasm and checks, per kernel:
  - no local memory: no LDL / STL (spills) in the code;
  - wgmma kept and pipelined: a kernel whose PTX issues wgmma must hold as many HGMMA
    instructions as its PTX has wgmma.mma_async (every committed kernel does), and at most half
    as many WARPGROUP.ARRIVE as HGMMA.  Fewer HGMMA means ptxas deleted wgmmas whose
    accumulators nothing reads: a timing-only build with neither an epilogue nor stream-K's
    partial stores (noepi,sknofix) kept 2 of 16 and ran twice as fast as the kernel it was to
    time (2026-12-06, bench/results/experiments/README.md, "The ceiling that was not one").
    ptxas serialises wgmma when it lacks the registers (warning C7511 / C7512): every HGMMA
    then gets its own arrive and a wait for zero groups, one in flight (the fused ping-pong
    kernels at 216 registers: 30 HGMMA, 30 arrives; committed, 30 and 5).
  - sm_90a K loop uniform: in the shortest loop that holds 16 or more HGMMA (the consumers' K
    loop) no R2UR: ptxas kept the wgmma descriptors and the ring cursors in uniform registers.
    A branch that one consumer thread takes (the fused kernels' low-rank issue before
    2026-12-06) makes ptxas keep them in vector registers and move them with R2UR before
    every HGMMA (32 R2UR in a 314-instruction loop against 233 instructions and none).  The
    ping-pong kernels (`_pp`) are not held to it: theirs holds 32 R2UR (noticed 2026-12-06).
  - sm_100a / sm_100f: a kernel whose PTX issues tcgen05.mma must hold a UTC*MMA instruction
    (UTCOMMA / UTCQMMA / UTCHMMA: the tensor-memory MMA) -- ptxas dropped none.
A cubin without either passes the local-memory check alone (the W preparation kernels).
It prints one line a cubin: HGMMA, WARPGROUP.ARRIVE, LDL/STL counts, the sm_90a K loop's length in
SASS instructions (a cheap measure of the consumers' per-iteration work) and ok or what failed.

nvdisasm: $NVDISASM, else nvdisasm on PATH or beside ptxas, else the pip package
nvidia-cuda-nvdisasm (`python3 -m pip install nvidia-cuda-nvdisasm`; .ci/run installs it).
Exit status: 0 every cubin passed; 1 a check failed; 2 bad arguments, an unreadable cubin, or no
nvdisasm (3 when FP4LR_REQUIRE_NVDISASM is unset and none is found: the caller may skip).
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys


def find_nvdisasm():
    env = os.environ.get("NVDISASM")
    if env:
        return env if os.access(env, os.X_OK) else None
    found = shutil.which("nvdisasm")
    if found:
        return found
    ptxas = shutil.which("ptxas")
    if ptxas and os.access(os.path.join(os.path.dirname(ptxas), "nvdisasm"), os.X_OK):
        return os.path.join(os.path.dirname(ptxas), "nvdisasm")
    try:
        import nvidia   # the pip package's namespace (nvidia-cuda-nvdisasm)
        for root in getattr(nvidia, "__path__", []):
            for cand in sorted(glob.glob(os.path.join(root, "*", "bin", "nvdisasm"))):
                if os.access(cand, os.X_OK):
                    return cand
    except ImportError:
        pass
    return None


HGMMA = re.compile(r"\bHGMMA\b")
WGMMA_PTX = re.compile(r"^\s*(@!?%\w+\s+)?wgmma\.mma_async", re.M)   # an instruction, not a comment
UTCMMA = re.compile(r"\bUTC[A-Z]*MMA\b")
ARRIVE = re.compile(r"\bWARPGROUP\.ARRIVE\b")
LOCAL = re.compile(r"\b(LDL|STL)\b")
LABEL = re.compile(r"^\s*(\.L_x_\d+):")
BACK = re.compile(r"\bBRA\b.*`\((\.L_x_\d+)\)")


def k_loop_r2ur(sass):
    """The R2UR count of the shortest loop (a branch back to a label) holding >= 16 HGMMA, and
    its length; None when there is no such loop."""
    ins, labels = [], {}
    for ln in sass.split("\n"):
        m = LABEL.match(ln)
        if m:
            labels[m.group(1)] = len(ins)
        elif "/*" in ln and ";" in ln:
            ins.append(ln)
    hg = [i for i, ln in enumerate(ins) if HGMMA.search(ln)]
    best = None
    for i, ln in enumerate(ins):
        m = BACK.search(ln)
        t = labels.get(m.group(1)) if m else None
        if t is None or t > i or sum(1 for j in hg if t <= j <= i) < 16:
            continue
        if best is None or i - t < best[1] - best[0]:
            best = (t, i)
    if best is None:
        return None
    body = ins[best[0]:best[1] + 1]
    return sum(1 for ln in body if "R2UR" in ln), len(body)


def check(nvdisasm, path):
    """(line, ok) for one cubin."""
    try:
        sass = subprocess.run([nvdisasm, "-c", path], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise RuntimeError(f"{path}: nvdisasm failed ({getattr(e, 'stderr', '') or e})")
    code = [ln for ln in sass.split("\n") if "/*" in ln]
    h = sum(1 for ln in code if HGMMA.search(ln))
    a = sum(1 for ln in code if ARRIVE.search(ln))
    lo = sum(1 for ln in code if LOCAL.search(ln))
    bad = []
    if lo:
        bad.append(f"{lo} local-memory instructions (spills)")
    ptx_text = ""
    ptx = re.sub(r"\.cubin$", ".ptx", path)
    name = os.path.basename(ptx)
    for cand in (ptx, os.path.join("ptx", os.path.basename(os.path.dirname(path)), name)):
        if os.path.exists(cand):
            with open(cand) as f:
                ptx_text = f.read()
            break
    w = len(WGMMA_PTX.findall(ptx_text))
    if w and h == 0:
        bad.append("its PTX issues wgmma but the SASS has no HGMMA")
    elif h < w:
        bad.append(f"ptxas removed wgmmas: {h} HGMMA for the PTX's {w} wgmma.mma_async (accumulators never read?)")
    u = sum(1 for ln in code if UTCMMA.search(ln))
    if "tcgen05.mma" in ptx_text and u == 0:
        bad.append("its PTX issues tcgen05.mma but the SASS has no UTC*MMA")
    if h and 2 * a > h:
        bad.append(f"wgmma serialised: {a} WARPGROUP.ARRIVE for {h} HGMMA")
    loop = k_loop_r2ur(sass) if h and "_pp." not in name else None
    if loop and loop[0]:
        bad.append(f"K loop not uniform: {loop[0]} R2UR in its {loop[1]} instructions (wgmma descriptors in "
                   f"vector registers)")
    kl = f", K loop {loop[1]} instructions" if loop else ""
    line = (f"{os.path.basename(path)}: HGMMA {h}, ARRIVE {a}, UTC*MMA {u}, LDL/STL {lo}{kl}: " +
            ("ok" if not bad else "; ".join(bad)))
    return line, not bad


def main():
    ap = argparse.ArgumentParser(prog="sass_check.py", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quiet", action="store_true", help="print only the cubins that fail")
    ap.add_argument("cubins", nargs="+")
    args = ap.parse_args()
    nvdisasm = find_nvdisasm()
    if not nvdisasm:
        print("sass_check: no nvdisasm ($NVDISASM, PATH, beside ptxas, or pip nvidia-cuda-nvdisasm)",
              file=sys.stderr)
        return 2 if os.environ.get("FP4LR_REQUIRE_NVDISASM") == "1" else 3
    ok_all = True
    for path in args.cubins:
        if not os.path.isfile(path):
            print(f"sass_check: {path}: no such file", file=sys.stderr)
            return 2
        try:
            line, ok = check(nvdisasm, path)
        except RuntimeError as e:
            print(f"sass_check: {e}", file=sys.stderr)
            return 2
        ok_all &= ok
        if not ok or not args.quiet:
            print(line)
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())
