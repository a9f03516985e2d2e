"""e2m1 and scale conversion sequences (bit placement, byte-permute tables, ue4m3 / ue8m0
scales) and the alpha folding of the f16 path."""
from . import kstate as K
from .flags import EXPERIMENTS, MXONE, PLACED


def emit_lut_setup(e):
    if PLACED:
        if not K.F16:
            e("\tmov.b32 %bfx126, 0x7E807E80;                // bf16x2 (2^126, 2^126)")
        return
    if K.F16:
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
    if K.F16:
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
        if not K.F16 and undo:
            e(f"\tmul.rn.bf16x2 {outs[a]}, {outs[a]}, %bfx126;   // * 2^126: exact")


def unscale(i):
    """The multiply by 2^28 that undoes the placed f16 operands' 2^-14 * 2^-14 on accumulator
    i, before alpha (exact: a power of two on sums of products of at least 2^-48)."""
    if K.F16 and PLACED:
        return f"\tmul.f32 %acc{i}, %acc{i}, 0f4D800000;          // * 2^28 (placed f16 operands)\n"
    return ""


# NVFP4 (f16 placed operands): the accumulators hold sum * 2^-28, so alpha * (acc * 2^28) is two
# multiplies an accumulator.  alpha * 2^28 is exact whenever it is finite (|alpha| < 2^100):
# then (alpha * 2^28) * acc is the same real number as alpha * (acc * 2^28) and rounds to the
# same fp32, so one multiply by it gives the same bits.  The epilogue and the affine test it
# once (alpha_fold_begin) and take the two-multiply code otherwise (alpha >= 2^100, inf, NaN).
def alpha_folds():
    """Whether this kernel's accumulators carry 2^-28 (then the alpha fold applies; nofold:
    never, the two multiplies on one path without a branch, for measurement)."""
    return K.F16 and PLACED and "nofold" not in EXPERIMENTS


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
    (fp4x8_to_f16 if K.F16 else fp4x8_to_bf16)(e, w, outs, tmp)


def mul_x2():
    """The packed multiply of the operand type."""
    return "mul.rn.f16x2" if K.F16 else "mul.rn.bf16x2"


def scale_nv(e, byte_reg, out, tmp):
    """ue4m3 byte (in the low 8 bits of byte_reg) -> bf16x2 (s, s) (f16x2 with F16); exact, NaN kept."""
    h0, h1 = "%h0", "%h1"
    f = "%f0"
    if K.F16:
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


def scales_nv4(e, sreg, outs, p):
    """Four ue4m3 scales (bytes of sreg) -> four bf16x2 (s, s) (f16x2 with F16); two e4m3x2
    conversions."""
    if K.F16:
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


def mx_scales(e, raw, sc, tmp, conv):
    """Two ue8m0 bytes (raw, low byte first; raw may be sc[3]) -> sc[0] = sc[1] (group 0 / 1's
    scale pair) and sc[2] = sc[3], through conv (scale_mx or scale_mx_fast)."""
    conv(e, raw, sc[0], tmp)
    e(f"\tshr.u32 %mxt2, {raw}, 8;" if MXONE else f"\tshr.u32 {raw}, {raw}, 8;")
    conv(e, "%mxt2" if MXONE else raw, sc[2], tmp)
    e(f"\tmov.b32 {sc[1]}, {sc[0]};\n\tmov.b32 {sc[3]}, {sc[2]};")
