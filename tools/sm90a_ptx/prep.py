"""The W preparation kernel (fp4lr_sm90a_<fmt>_wprep[_pdl]) and the chunk load / convert /
stage sequences it shares with the converters and the first fill."""
from ptxgen import Emitter

from . import kstate as K
from .flags import EXPERIMENTS, FORMATS, MXONE, PREPWAIT, PREP_THREADS
from .instances import prep_name
from .convert import emit_lut_setup, mx_scales, scale_mx, scales_nv4
from .transform import transform_rows


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
    K.F16 = fmt == "nvfp4" and "bf16" not in EXPERIMENTS
    K.WPRE = K.FUSED = K.TSPLIT = False
    blk = FORMATS[fmt][0]
    optype = "f16" if K.F16 else "bf16"
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
// {"e2m1 x ue4m3 in f16 as value * 2^-14 (the consumers undo 2^-28 in the epilogue)" if K.F16 else "e2m1 x ue8m0 in bf16, exact (one or two multiplies, chosen per warp)"}; inside
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
    if pdl and PREPWAIT:
        e("\tgriddepcontrol.wait;                        // prepwait: the kernel before this one complete")
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
