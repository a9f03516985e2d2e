#!/usr/bin/env python3
"""End-to-end check of fp4lr-check --in / --out with files written by numpy.

Writes a random problem in the OPERATOR.md §2 layouts (A, W packed e2m1 pairs,
low nibble first; SFA, SFW in the 128x4 atom layout built like PyTorch's
to_blocked; L, U saved as ml_dtypes.bfloat16, i.e. descr '<V2'; wc, beta
float32; alpha a float32 scalar), runs

    fp4lr-check --in DIR --out OUT --out-ref --format F

and compares OUT/ref.npy on OUT/rows.npy with a float64 numpy reference of the
same formula.  With a GPU the tool also writes OUT/Y.npy, which is checked for
shape and dtype (the tool validates its values itself).

usage: python3 tests/npy_roundtrip.py [--tool build/bin/fp4lr-check] [--format nvfp4|mxfp4] [--keep DIR]
Exit status 0 when every check passes.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import ml_dtypes
import numpy as np

E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def to_blocked(sf):
    """Row-major (rows, kv) scale bytes -> the 128x4 atom layout, padding zero."""
    rows, kv = sf.shape
    rp, kp = -(-rows // 128) * 128, -(-kv // 4) * 4
    pad = np.zeros((rp, kp), np.uint8)
    pad[:rows, :kv] = sf
    # offset = ((i/128)*ceil(kv/4) + c/4)*512 + (i%32)*16 + ((i%128)/32)*4 + c%4
    return pad.reshape(rp // 128, 4, 32, kp // 4, 4).transpose(0, 3, 2, 1, 4).reshape(-1).copy()


def deq(q, sf, fmt, block):
    """Packed e2m1 (rows, K/2) and row-major scales (rows, kv) -> float64 (rows, K)."""
    codes = np.stack([q & 0xF, q >> 4], axis=-1).reshape(q.shape[0], -1)
    if fmt == "nvfp4":
        scale = sf.view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    else:
        scale = np.ldexp(1.0, sf.astype(np.int64) - 127)
    return E2M1[codes] * np.repeat(scale, block, axis=1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", default="build/bin/fp4lr-check")
    ap.add_argument("--format", default="nvfp4", choices=["nvfp4", "mxfp4"])
    ap.add_argument("--keep", help="write the files here instead of a temporary directory")
    args = ap.parse_args()

    block = 16 if args.format == "nvfp4" else 32
    M, N, K, r = 130, 70, 3 * 4 * block, 16  # rows cross a 128-row atom; 3 atom columns
    kv = K // block
    g = np.random.default_rng(7)
    A = g.integers(0, 256, (M, K // 2), dtype=np.uint8)
    W = g.integers(0, 256, (N, K // 2), dtype=np.uint8)
    if args.format == "nvfp4":  # ue4m3 codes around 1 (exponent fields 5..9), sign bit clear
        sfa, sfw = (g.integers(0x28, 0x50, (n, kv), dtype=np.uint8) for n in (M, N))
    else:  # ue8m0 around 2^0
        sfa, sfw = (g.integers(122, 132, (n, kv), dtype=np.uint8) for n in (M, N))
    L = g.standard_normal((M, r)).astype(ml_dtypes.bfloat16)
    U = g.standard_normal((N, r)).astype(ml_dtypes.bfloat16)
    wc = g.uniform(-2, 2, N).astype(np.float32)
    beta = g.standard_normal(N).astype(np.float32)
    alpha = np.float32(0.75)

    with tempfile.TemporaryDirectory() as tmp:
        d = args.keep or os.path.join(tmp, "in")
        out = os.path.join(d if args.keep else tmp, "out")
        os.makedirs(d, exist_ok=True)
        for name, x in [("A", A), ("SFA", to_blocked(sfa)), ("W", W), ("SFW", to_blocked(sfw)), ("L", L),
                        ("U", U), ("wc", wc), ("beta", beta), ("alpha", alpha)]:
            np.save(os.path.join(d, name + ".npy"), x)
        cmd = [args.tool, "--in", d, "--out", out, "--out-ref", "--format", args.format, "--iters", "0"]
        run = subprocess.run(cmd, capture_output=True, text=True)
        sys.stdout.write(run.stdout)
        sys.stderr.write(run.stderr)
        if run.returncode != 0:
            print(f"npy_roundtrip: FAIL: {' '.join(cmd)} exited {run.returncode}")
            return 1

        rows = np.load(os.path.join(out, "rows.npy"))
        ref = np.load(os.path.join(out, "ref.npy"))
        main_ = deq(A, sfa, args.format, block)[rows] @ deq(W, sfw, args.format, block).T
        low = L.astype(np.float64)[rows] @ U.astype(np.float64).T
        want = wc.astype(np.float64) * (np.float64(alpha) * main_) + beta.astype(np.float64) + low
        mag = (np.abs(np.float64(alpha) * wc.astype(np.float64))
               * (np.abs(deq(A, sfa, args.format, block)[rows]) @ np.abs(deq(W, sfw, args.format, block)).T)
               + np.abs(beta.astype(np.float64)) + np.abs(L.astype(np.float64)[rows]) @ np.abs(U.astype(np.float64)).T)
        ok = True
        if rows.dtype != np.int64 or ref.dtype != np.float64 or ref.shape != (rows.size, N):
            print(f"npy_roundtrip: FAIL: rows {rows.dtype} {rows.shape}, ref {ref.dtype} {ref.shape}")
            ok = False
        else:
            err = np.max(np.abs(ref - want) / np.maximum(mag, 1e-300))
            print(f"npy_roundtrip: {rows.size} rows x {N} columns, max |ref - numpy| / mag = {err:.3g}")
            ok = err < 1e-12
        y_path = os.path.join(out, "Y.npy")
        if os.path.exists(y_path):
            y = np.load(y_path)
            print(f"npy_roundtrip: Y.npy {y.dtype} {y.shape}")
            ok = ok and y.dtype == np.uint16 and y.shape == (M, N)
        print("npy_roundtrip:", "PASS" if ok else "FAIL")
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
