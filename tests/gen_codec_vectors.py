#!/usr/bin/env python3
"""Codec oracle vectors: ml_dtypes' encodings and decodings of the three fp4lr
element/scale formats (float4_e2m1fn, float8_e4m3fn, float8_e8m0fnu), written
as compact little-endian binary files under tests/data/ for
tests/test_codec_oracle.c.

  python3 tests/gen_codec_vectors.py            write tests/data/codec_*
  python3 tests/gen_codec_vectors.py --check    regenerate into a temp dir and
                                                compare byte for byte

Files (all little-endian):
  codec_decode_e2m1.f32     16 float32: value of codes 0..15
  codec_decode_e4m3fn.f32  256 float32: value of codes 0..255 (NaN for 0x7F, 0xFF)
  codec_decode_e8m0fnu.f32 256 float32: value of codes 0..255 (NaN for 0xFF)
  codec_inputs.f32           N float32 inputs (N = 2^20)
  codec_enc_e2m1.u8          N bytes: ml_dtypes float4_e2m1fn code of each input
  codec_enc_e4m3fn.u8        N bytes: ml_dtypes float8_e4m3fn code
  codec_enc_e8m0fnu.u8       N bytes: ml_dtypes float8_e8m0fnu code

The inputs come from a self-contained splitmix64 generator with a fixed seed
(so they do not depend on numpy's random streams): specials, every code value
of each format with its float32 neighbours and midpoints, short-mantissa
values (which hit ties exactly), and random values spread evenly over every
float32 binade of each format's range (and beyond it, for saturation),
both signs.  Without ml_dtypes: exit 0 printing 'skipped', or exit 1 when
FP4LR_REQUIRE_ORACLE=1.
"""
import os
import sys
import tempfile

SEED = 0xF4C0DEC5EED
N = 1 << 20
DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
FILES = [
    "codec_decode_e2m1.f32",
    "codec_decode_e4m3fn.f32",
    "codec_decode_e8m0fnu.f32",
    "codec_inputs.f32",
    "codec_enc_e2m1.u8",
    "codec_enc_e4m3fn.u8",
    "codec_enc_e8m0fnu.u8",
]


def splitmix64(np, seed, count):
    """count 64-bit outputs of splitmix64 started at `seed` (vectorised)."""
    with np.errstate(over="ignore"):
        gamma = np.uint64(0x9E3779B97F4A7C15)
        z = np.uint64(seed) + gamma * np.arange(1, count + 1, dtype=np.uint64)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def binade_values(np, rnd, lo_exp, hi_exp, mant_bits):
    """float32 bit patterns with unbiased exponent uniform in [lo_exp, hi_exp]
    (exponents below -126 give fp32 subnormals), random sign, and only the top
    `mant_bits` mantissa bits random (23 = all)."""
    r = rnd.astype(np.uint64)
    span = np.uint64(hi_exp - lo_exp + 1)
    e = (r % span).astype(np.int64) + lo_exp
    mant = ((r >> np.uint64(8)) & np.uint64(0x7FFFFF)).astype(np.uint32)
    mant &= np.uint32((0x7FFFFF >> (23 - mant_bits)) << (23 - mant_bits))
    sign = ((r >> np.uint64(40)) & np.uint64(1)).astype(np.uint32) << np.uint32(31)
    field = np.clip(e + 127, 0, 254).astype(np.uint32)
    # Subnormal float32: shift the implicit bit into the mantissa.
    sub = e < -126
    shift = np.where(sub, np.minimum(-126 - e, 31), 0).astype(np.uint32)
    mant = np.where(sub, ((mant | np.uint32(0x800000)) >> shift) & np.uint32(0x7FFFFF), mant)
    return sign | (field << np.uint32(23)) | mant


def inputs(np, md):
    """The N float32 input bit patterns."""
    f32 = np.float32
    parts = []
    # Specials and fp32 edge values.
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 3.4028234663852886e38, -3.4028234663852886e38,
                1.1754943508222875e-38, 1.401298464324817e-45, -1.401298464324817e-45, 2.0 ** -127, 2.0 ** 127]
    parts.append(np.array(specials, dtype=f32).view(np.uint32))
    parts.append(np.array([0x7FC00001, 0xFFFFFFFF, 0x7F800001, 0x00400000, 0x00600000, 0x005FFFFF],
                          dtype=np.uint32))
    # Every code value of each format, the midpoints between neighbours, and
    # the float32 neighbours of both.
    for dt in (md.float4_e2m1fn, md.float8_e4m3fn, md.float8_e8m0fnu):
        ncodes = 16 if dt is md.float4_e2m1fn else 256
        v = np.arange(ncodes, dtype=np.uint8).view(dt).astype(np.float64)
        v = np.unique(v[np.isfinite(v)])
        mids = (v[:-1] + v[1:]) / 2
        pts = np.concatenate([v, mids, -v, -mids]).astype(f32)
        up = np.nextafter(pts, f32(np.inf))
        dn = np.nextafter(pts, f32(-np.inf))
        parts.append(np.concatenate([pts, up, dn]).view(np.uint32))
    head = np.concatenate(parts)
    # Random values: (exponent range, share of N) per family; each family is
    # half full-mantissa, half short-mantissa (3 random bits: exact ties).
    rest = N - head.size
    families = [(-6, 5), (-14, 11), (-149, 127)]  # e2m1, e4m3, e8m0 (all fp32)
    rnd = splitmix64(np, SEED, rest)
    chunks = []
    per = rest // (2 * len(families) + 1)  # the last share: raw bit patterns
    pos = 0
    for lo, hi in families:
        for mbits in (23, 3):
            chunks.append(binade_values(np, rnd[pos:pos + per], lo, hi, mbits))
            pos += per
    # The remainder: uniformly random bit patterns (NaNs and Infs included).
    chunks.append((rnd[pos:] >> np.uint64(32)).astype(np.uint32))
    out = np.concatenate([head] + chunks)
    assert out.size == N
    return out


def generate(np, md, out_dir):
    f32 = np.float32
    le_f32 = np.dtype("<f4")

    def write(name, arr):
        with open(os.path.join(out_dir, name), "wb") as fh:
            fh.write(arr.tobytes())

    write("codec_decode_e2m1.f32", np.arange(16, dtype=np.uint8).view(md.float4_e2m1fn).astype(le_f32))
    write("codec_decode_e4m3fn.f32", np.arange(256, dtype=np.uint8).view(md.float8_e4m3fn).astype(le_f32))
    write("codec_decode_e8m0fnu.f32", np.arange(256, dtype=np.uint8).view(md.float8_e8m0fnu).astype(le_f32))
    bits = inputs(np, md).astype("<u4")
    x = bits.view(f32)
    write("codec_inputs.f32", bits)
    with np.errstate(all="ignore"):
        write("codec_enc_e2m1.u8", x.astype(md.float4_e2m1fn).view(np.uint8))
        write("codec_enc_e4m3fn.u8", x.astype(md.float8_e4m3fn).view(np.uint8))
        write("codec_enc_e8m0fnu.u8", x.astype(md.float8_e8m0fnu).view(np.uint8))


def main(argv):
    try:
        import numpy as np
        import ml_dtypes as md
    except ImportError as exc:
        print(f"gen_codec_vectors: ml_dtypes/numpy not importable ({exc})")
        if os.environ.get("FP4LR_REQUIRE_ORACLE") == "1":
            print("gen_codec_vectors: FP4LR_REQUIRE_ORACLE=1, failing")
            return 1
        print("gen_codec_vectors: skipped")
        return 0

    if "--check" not in argv:
        os.makedirs(DATA_DIR, exist_ok=True)
        generate(np, md, DATA_DIR)
        print(f"gen_codec_vectors: wrote {len(FILES)} files to {DATA_DIR} (ml_dtypes {md.__version__})")
        return 0

    with tempfile.TemporaryDirectory() as tmp:
        generate(np, md, tmp)
        bad = 0
        for name in FILES:
            committed = os.path.join(DATA_DIR, name)
            fresh = open(os.path.join(tmp, name), "rb").read()
            if not os.path.exists(committed):
                print(f"gen_codec_vectors: MISSING {committed}")
                bad += 1
                continue
            old = open(committed, "rb").read()
            if old != fresh:
                diff = next((i for i, (a, b) in enumerate(zip(old, fresh)) if a != b), min(len(old), len(fresh)))
                print(f"gen_codec_vectors: DIFFERS {name}: {len(old)} vs {len(fresh)} bytes, first difference at byte {diff}")
                bad += 1
            else:
                print(f"gen_codec_vectors: ok {name} ({len(old)} bytes)")
        if bad:
            print(f"gen_codec_vectors: {bad} file(s) differ from ml_dtypes {md.__version__}; "
                  "regenerate with python3 tests/gen_codec_vectors.py and review")
            return 1
        print(f"gen_codec_vectors: all {len(FILES)} files match ml_dtypes {md.__version__} ({N} random inputs)")
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
