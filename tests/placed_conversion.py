#!/usr/bin/env python3
"""placed_conversion.py -- checks the e2m1 -> f16 / bf16 conversion that tools/sm90a_ptx/convert.py
emits (fp4x8_to_placed) by running the emitted PTX through a small interpreter of the
integer instructions it uses, against the e2m1 definition.

For f16 every output must hold (e2m1 value) * 2^-14 exactly, for bf16 (e2m1 value) * 2^-126
before the multiply by 2^126 (that multiply is checked apart: the result must be the exact
e2m1 value).  Inputs: every pair of codes in every output position (the two elements an
output holds) with the six other nibbles random, and 50000 random words; and the one-multiply
MXFP4 scale (2^(E-1) for E <= 128) with the exactness of its one multiply.  Exit status 0
when every output matches, 1 otherwise (the first mismatches are printed).

    python3 tests/placed_conversion.py
"""
import os
import random
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from sm90a_ptx import convert, kstate  # noqa: E402

MASK = 0xFFFFFFFF
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def emitted(f16):
    """The PTX lines fp4x8_to_placed emits for word %w into %o0..%o3."""
    lines = []
    kstate.F16 = f16
    convert.fp4x8_to_placed(lambda t: lines.extend(t.split("\n")), "%w",
                            ["%o0", "%o1", "%o2", "%o3"], ["%t0", "%t1", "%t2", "%t3", "%t4", "%t5"])
    return [ln.split("//")[0].strip().rstrip(";") for ln in lines if ln.strip()]


def value(tok, regs):
    return regs[tok] if tok.startswith("%") else int(tok, 0) & MASK


def run(program, w):
    """Interprets the program on word w; mul.rn.bf16x2 lines are skipped (checked apart)."""
    regs = {"%w": w}
    for line in program:
        m = re.match(r"(\S+)\s+(.*)", line)
        op, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
        if op == "mul.rn.bf16x2":
            continue
        d, srcs = args[0], [value(a, regs) for a in args[1:]]
        if op == "mul.lo.u32":
            regs[d] = (srcs[0] * srcs[1]) & MASK
        elif op == "shr.u32":
            regs[d] = srcs[0] >> srcs[1]
        elif op == "and.b32":
            regs[d] = srcs[0] & srcs[1]
        elif op == "or.b32":
            regs[d] = srcs[0] | srcs[1]
        elif op == "add.u32":
            regs[d] = (srcs[0] + srcs[1]) & MASK
        elif op == "shl.b32":
            regs[d] = (srcs[0] << srcs[1]) & MASK
        elif op == "prmt.b32":
            a, b, sel = srcs
            pool = a | b << 32
            regs[d] = sum((pool >> (8 * (sel >> (4 * k) & 7)) & 0xFF) << (8 * k) for k in range(4))
        elif op == "lop3.b32":
            a, b, c, lut = srcs
            r = 0
            for i in range(8):   # the minterms the table selects (a: bit 2 of i, b: 1, c: 0)
                if lut >> i & 1:
                    r |= ((a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)) & MASK
            regs[d] = r
        else:
            raise SystemExit(f"placed_conversion: no interpreter for '{op}'")
    return [regs[f"%o{a}"] for a in range(4) if f"%o{a}" in regs]


def f16_value(bits):
    return struct.unpack("<e", struct.pack("<H", bits))[0]


def bf16_value(bits):
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def code_value(code):
    return -E2M1[code & 7] if code & 8 else E2M1[code & 7]


def check(f16, words):
    program = emitted(f16)
    unit = 2.0 ** -14 if f16 else 2.0 ** -126
    decode = f16_value if f16 else bf16_value
    bad = 0
    for w in words:
        outs = run(program, w)
        for a in range(4):
            for half, elem in ((0, a), (1, a + 4)):
                bits = outs[a] >> (16 * half) & 0xFFFF
                code = w >> (4 * elem) & 15
                want = code_value(code) * unit
                got = decode(bits)
                # -0 must stay -0 (the sign bit is placed for every code)
                if got != want or (code == 8) != (bits == 0x8000):
                    bad += 1
                    if bad <= 5:
                        print(f"placed_conversion: {'f16' if f16 else 'bf16'} word 0x{w:08X} element {elem}: "
                              f"bits 0x{bits:04X} = {got!r}, want {want!r}")
    return bad


def bf16_exact(x):
    """x is a bf16 value (normal or subnormal): its float32 pattern has no low 16 bits."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    return struct.unpack("<f", struct.pack("<I", bits))[0] == x and bits & 0xFFFF == 0


def check_mx_fast():
    """The MXFP4 one-multiply path (FP4LR_GEN_EXPERIMENT=mxtwo turns it off): the scale code
    emitted for ue8m0 bytes E <= 128 gives bf16x2 (2^(E-1), 2^(E-1)), and every placed element times it is the exact
    e2m1 value times 2^(E-127), a bf16 number (so the one rounding multiply is exact)."""
    lines = []
    convert.scale_mx_fast(lambda t: lines.extend(t.split("\n")), "%w", "%o0", "%t0")
    program = [ln.split("//")[0].strip().rstrip(";") for ln in lines if ln.strip()]
    bad = 0
    for e8 in range(129):
        got = run(program, e8 | 0xAB00)[0]   # the byte's neighbours must not leak in
        want = (e8 + 126) << 7
        if got != (want | want << 16) or bf16_value(want) != 2.0 ** (e8 - 1):
            bad += 1
            print(f"placed_conversion: mx fast scale E={e8}: 0x{got:08X}, want 2^{e8 - 1}")
        for code in range(16):
            prod = code_value(code) * 2.0 ** -126 * 2.0 ** (e8 - 1)
            if prod != code_value(code) * 2.0 ** (e8 - 127) or not bf16_exact(prod):
                bad += 1
    return bad


def main():
    rnd = random.Random(7)
    words = []
    for a in range(4):
        for lo in range(16):
            for hi in range(16):
                w = rnd.getrandbits(32)
                w &= ~((15 << (4 * a)) | (15 << (4 * (a + 4)))) & MASK
                words.append(w | lo << (4 * a) | hi << (4 * (a + 4)))
    words += [rnd.getrandbits(32) for _ in range(50000)]
    words += [0, MASK, 0x88888888, 0x77777777]
    bad = check(True, words) + check(False, words)
    # the bf16 path's multiply by 2^126 is exact on every placed pattern (0.5 * 2^-126 is the
    # subnormal 0x0040, 6 * 2^-126 the largest)
    for code in range(16):
        placed = code_value(code) * 2.0 ** -126
        if placed * 2.0 ** 126 != code_value(code):
            bad += 1
    bad += check_mx_fast()
    n = 2 * 8 * len(words)
    if bad:
        print(f"placed_conversion: FAIL, {bad} of {n} elements wrong")
        return 1
    print(f"placed_conversion: PASS, {n} elements (f16 and bf16 placement, "
          f"{len(emitted(True))} / {len(emitted(False))} instructions a word)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
