"""The consumers' first fill (xself): the first unit's first K blocks converted by the consumers
themselves so that the first wgmma need not wait for the converters."""
from . import kstate as K
from .flags import FORMATS, TRANSFORM_THREADS, XSELF_BATCH, XSELF_KB
from .timeline import tline
from .prep import ATOM_ROW_BYTES, chunk_convert, chunk_load, staging_row_address


def self_fill_has_half(kb, nkb, t0, t1, pred):
    """halfk: pred = the first fill's K blocks kb .. kb + nkb - 1 reach a chunk wholly past K
    (128 (kb + nkb - 1) + 64 >= K).  Both the consumers and the W producer skip the fill then:
    its slot would be the producer's, for the next unit, and nobody would multiply it."""
    return f"""\tadd.u32 {t0}, {kb}, {nkb};
\tshl.b32 {t0}, {t0}, 7;
\tsub.u32 {t0}, {t0}, 64;
\tld.param.u32 {t1}, [p_x_K];
\tsetp.ge.u32 {pred}, {t0}, {t1};"""


def halfk_no_fill(done):
    """The consumers' side of self_fill_has_half: straight to `done` (the producer copies the
    unit's every chunk), for the rare first unit within two K blocks of a tile's end."""
    if not K.HALFK:
        return ""
    return f"""
\tsub.u32 %r2, %ke, %kb;
\tmin.u32 %r2, %r2, {XSELF_KB};
{self_fill_has_half("%kb", "%r2", "%r2", "%r3", "%p5")}
\t@%p5 bra {done};                      // halfk: this fill would reach a half K block"""


def self_fill_begin(done):
    """The first fill's start (both emitters): skip unless it is the CTA's first unit (and the
    halfk case), save r, c and the SFA offset, load K, W, SFW and N."""
    return f"""\tsetp.eq.u32 %p5, %cself, 0;
\t@%p5 bra {done};
\tmov.u32 %cself, 0;{halfk_no_fill(done)}
\tmov.b32 %skf0, %r20;                       // r, c and the SFA offset: chunk_to_stage clobbers them
\tmov.b32 %skf1, %r21;
\tmov.b32 %skf2, %r22;
\tld.param.u32 %r1, [p_x_K];
\tld.param.u64 %rd0, [p_x_W];
\tcvta.to.global.u64 %rd0, %rd0;
\tld.param.u64 %rd1, [p_x_SFW];
\tcvta.to.global.u64 %rd1, %rd1;
\tld.param.u32 %r2, [p_x_N];"""


def self_fill_handoff(e, one, done, nch):
    """The first fill's end (both emitters): fence the slots' writes for the async proxy,
    synchronise the consumers, consumer thread 0 completes the filled slots' tfull phase 0
    (slots 2-3 only for a unit of two K blocks or more), restore r, c, the SFA offset."""
    e(f"{one}:")
    tline(e, 43, TRANSFORM_THREADS)
    e(f"""\tfence.proxy.async.shared::cta;              // the slots' writes before the wgmmas read them
\tbar.sync 4, 256;
\tsetp.eq.u32 %p5, %r3, 0;
\tsub.u32 %r2, %ke, %kb;
\tsetp.ge.u32 %p6, %r2, 2;""")
    for c in range(nch):
        pred = "%p5" if c < 2 else "%p6"
        if c == 2:
            e("\tand.pred %p6, %p6, %p5;")
        e(f"\t@{pred} mbarrier.arrive.shared::cta.b64 _, [%bar_tfull+{8 * c}];")
    tline(e, 44, TRANSFORM_THREADS)
    e(f"""\tmov.b32 %r20, %skf0;
\tmov.b32 %r21, %skf1;
\tmov.b32 %r22, %skf2;
{done}:""")


def emit_self_fill(e, fmt, L):
    """XSELF: before the prologue of the CTA's first unit, each consumer thread converts W row
    n0 + (its consumer index) of the unit's first XSELF_KB K blocks straight into W slots
    0 .. 2 XSELF_KB - 1 (chunk_to_stage's code, the slot's 128-byte swizzle: the bytes the
    bulk copy of the converted W would bring), then completes those slots' `tfull` phase 0
    itself; the W producer skips the same K blocks.  Why: the first item of the launch's
    conversion reaches a slot 5-7 us after the launch starts (convert, publish, flag seen,
    bulk copy), the first A stage after 1-2 us (fp4lr-check --timeline, 2026-12-03).  The
    four chunks' loads are issued before any conversion (one memory latency, not four)."""
    if K.FILLASYNC_ON:
        emit_self_fill_async(e, fmt, L)
        return
    blk = FORMATS[fmt][0]
    nch = 2 * XSELF_KB
    done = e.label("cself_done")
    one = e.label("cself_one")
    # the narrow tile's slots hold BN rows: consumer threads BN.. convert nothing
    narrow_rows = ("" if K.BN == 256 else
                   f"\n\tsetp.ge.u32 %p5, %r3, {K.BN};\n\t@%p5 bra {one};                      // no slot row {K.BN}.. in the narrow tile")
    e(f"""\t// ---- first fill (xself): the first unit's first {XSELF_KB} K blocks, converted here ----
{self_fill_begin(done)}
\tsub.u32 %r2, %r2, 1;
\tsub.u32 %r3, %thr, {TRANSFORM_THREADS};                   // consumer thread = the slot row it converts{narrow_rows}
\tadd.u32 %r7, %n0, %r3;
\tmin.u32 %r7, %r7, %r2;                     // W row (rows past N: the last row's values, never stored)
\tshr.u32 %r4, %r1, 6;                       // K/64: chunks a row
\tsub.u32 %r6, %r4, 1;""")
    tline(e, 41, TRANSFORM_THREADS)
    for b0 in range(0, nch, XSELF_BATCH):
        batch = range(b0, min(nch, b0 + XSELF_BATCH))
        for c in batch:
            s, h = divmod(c, 2)
            e(f"""\t// chunk {c}: K block kb + {s}, half {h} (clamped into K for the load)
\tadd.u32 %r8, %kb, {s};
\tshl.b32 %r8, %r8, 1;
\tadd.u32 %r8, %r8, {h};
\tmin.u32 %r8, %r8, %r6;
\tmad.lo.u32 %r5, %r7, %r4, %r8;""")
            chunk_load(e, fmt, [f"%sw{8 * (c - b0) + i}" for i in range(8)], f"%ss{c - b0}",
                       vec=2 if K.FILLDEP_ON else 4)
        if K.FILLDEP_ON:
            # a shared store that needs every load of the batch comes before the slots' stores
            # (never executed: its predicate is K = 0), so ptxas keeps the loads ahead of the
            # first conversion (without it, it sinks each chunk's loads to just before that
            # chunk's conversion: a memory latency a chunk)
            deps = [f"%sw{8 * (c - b0) + i}" for c in batch for i in range(0, 8, 2)] + \
                   [f"%ss{c - b0}" for c in batch]
            e("\t// FILLDEP: all these loads before the first slot store (one memory latency, not one a chunk)")
            e(f"\txor.b32 %sdep, {deps[0]}, {deps[1]};")
            for d in deps[2:]:
                e(f"\txor.b32 %sdep, %sdep, {d};")
            e("""\tsetp.eq.u32 %pself, %r1, 0;                 // K = 0: never launched (ptxas cannot know)
\t@%pself st.shared.u32 [%sbase], %sdep;       // never stored; shared stores stay in order""")
        if b0 == 0:
            tline(e, 42, TRANSFORM_THREADS, dep="%sw0")
        for c in batch:
            s, h = divmod(c, 2)
            if c == 2:
                # (loaded with the others, harmless) a one-K-block unit's slots 2 and 3 are
                # the producer's, for the next unit's first K block: nothing may be stored
                # there.  (Until 2026-12-04 this check sat where the four-chunk batch never
                # reached it: under racecheck the late stores overwrote the producer's copy.)
                e(f"""\tsub.u32 %r2, %ke, %kb;
\tsetp.lt.u32 %p5, %r2, 2;
\t@%p5 bra {one};                      // a one-K-block unit: the producer brings the rest""")
            e(f"\t// chunk {c} -> slot {c}, row = consumer thread")
            for i in range(8):
                e(f"\tmov.b32 %wi{i}, %sw{8 * (c - b0) + i};")
            e(f"\tmov.b32 %r12, %ss{c - b0};")

            def staging_row(e, c=c):
                e(f"\tadd.u32 %r9, %sbase, {L['t'] + c * L['tslot']};")
                staging_row_address(e, "%r3", "%r9")

            # MXFP4: the two-multiply path alone (the one-multiply path's vote and second copy
            # of the code pushed the kernel's 56-register warps into spills)
            chunk_convert(e, fmt, staging_row, mx_fast=False)
            if blk == 16:   # NVFP4: K % 128 may be 64, the last K block's second half is past K
                e(f"""\tadd.u32 %r8, %kb, {s};
\tshl.b32 %r8, %r8, 1;
\tadd.u32 %r8, %r8, {h};
\tsetp.ge.u32 %p6, %r8, %r4;               // past K: zeros (as the bulk copy reads them)""")
                for q in range(8):
                    e(f"\txor.b32 %r23, %r21, {q << 4};\n\t@%p6 st.shared.v4.b32 [%r23], {{0, 0, 0, 0}};")
    self_fill_handoff(e, one, done, nch)


def emit_self_fill_async(e, fmt, L):
    """emit_self_fill with its loads as coalesced cp.async copies into the slots (FILLASYNC)."""
    assert fmt == "nvfp4" and XSELF_KB == 2 and not K.FILLDEP_ON
    done = e.label("cself_done")
    one = e.label("cself_one")
    e(f"""\t// ---- first fill (xself, fillasync): the first unit's first 2 K blocks, copied coalesced
\t// (cp.async, 16 bytes a lane, 8 lanes a row) into the rows of the slots, then converted here ----
{self_fill_begin(done)}
\tsub.u32 %r2, %r2, 1;                       // the last W row
\tsub.u32 %r3, %thr, {TRANSFORM_THREADS};                   // consumer thread
\tshr.u32 %r4, %r1, 6;                       // K/64: chunks a row
\tsub.u32 %r6, %r4, 1;
\tsub.u32 %r9, %ke, %kb;
\tsetp.ge.u32 %p6, %r9, 2;                   // two K blocks in the unit (else slots 2-3 are the producer's)""")
    tline(e, 41, TRANSFORM_THREADS)
    e(f"""\t// the fp4 bytes: lane piece g = 256 it + thread: row g/8 (+32 an it), chunk c = (g%8)/2,
\t// 16-byte half g%2 -> slot c, the row's bytes 16 (g%2)..
\tand.b32 %r10, %r3, 7;
\tshr.u32 %r11, %r10, 1;                     // c
\tand.b32 %r10, %r10, 1;                     // half
\tsetp.lt.u32 %p5, %r11, 2;
\tor.pred %p5, %p5, %p6;                     // copy this piece
\tshl.b32 %r8, %kb, 1;
\tadd.u32 %r8, %r8, %r11;
\tmin.u32 %r8, %r8, %r6;                     // chunk j (clamped into K)
\tshl.b32 %r5, %r8, 5;
\tshl.b32 %r12, %r10, 4;
\tadd.u32 %r5, %r5, %r12;                    // byte j*32 + 16 half of the row
\tcvt.u64.u32 %rd3, %r5;
\tadd.u64 %rd3, %rd0, %rd3;
\tshr.u32 %r12, %r3, 3;                      // row of it 0 (its row % 8 stays: + 32 an it)
\tand.b32 %r9, %r12, 7;
\txor.b32 %r10, %r10, %r9;
\tshl.b32 %r10, %r10, 4;                     // the half's 16 bytes at unit half ^ row%8 (as chunk_convert's)
\tmul.lo.u32 %r13, %r11, {L['tslot']};
\tadd.u32 %r13, %r13, %r10;
\tmad.lo.u32 %r13, %r12, 128, %r13;
\tadd.u32 %r13, %r13, %sbase;
\tadd.u32 %r13, %r13, {L['t']};                // shared destination of it 0
\tadd.u32 %r12, %r12, %n0;
\tshr.u32 %r7, %r1, 1;                       // K/2: bytes a row""")
    for it in range(K.BN // 32):
        e(f"""\tadd.u32 %r9, %r12, {32 * it};
\tmin.u32 %r9, %r9, %r2;
\tmul.wide.u32 %rd4, %r9, %r7;
\tadd.u64 %rd4, %rd4, %rd3;
\t@%p5 cp.async.cg.shared.global [%r13+{4096 * it}], [%rd4], 16;""")
    nosc = e.label("cself_nosc")
    e(f"""\t// the scales: thread = row, its chunks' 4 bytes each -> the row's unit 2 ^ row%8 of slot c
\tsetp.ge.u32 %p5, %r3, {K.BN};
\t@%p5 bra {nosc};
\tadd.u32 %r7, %n0, %r3;
\tmin.u32 %r7, %r7, %r2;                     // W row n (rows past N: the last row's, never stored)
\tshr.u32 %r9, %r1, 6;                       // atoms a 128-row block = K/64
\tshr.u32 %r10, %r7, 7;
\tmul.lo.u32 %r10, %r10, %r9;
\tshl.b32 %r10, %r10, 9;
{ATOM_ROW_BYTES}                  // byte of atom 0
\tand.b32 %r13, %r3, 7;
\txor.b32 %r13, %r13, 2;
\tshl.b32 %r13, %r13, 4;
\tadd.u32 %r13, %r13, %sbase;
\tmad.lo.u32 %r13, %r3, 128, %r13;
\tadd.u32 %r13, %r13, {L['t']};""")
    for c in range(4):
        s_, h = divmod(c, 2)
        e(f"""\tshl.b32 %r8, %kb, 1;
\tadd.u32 %r8, %r8, {c};
\tmin.u32 %r8, %r8, %r6;
\tmad.lo.u32 %r11, %r8, 512, %r10;
\tcvt.u64.u32 %rd4, %r11;
\tadd.u64 %rd4, %rd1, %rd4;""" + (f"\n\tcp.async.ca.shared.global [%r13+{c * L['tslot']}], [%rd4], 4;" if c < 2 else
             f"\n\t@%p6 cp.async.ca.shared.global [%r13+{c * L['tslot']}], [%rd4], 4;"))
    e(f"""{nosc}:
\tcp.async.commit_group;
\tcp.async.wait_group 0;
\tbar.sync 4, 256;                           // every row's bytes landed""")
    tline(e, 42, TRANSFORM_THREADS)
    if K.BN != 256:
        e(f"\tsetp.ge.u32 %p5, %r3, {K.BN};\n\t@%p5 bra {one};                      // no slot row {K.BN}.. in the narrow tile")
    for c in range(4):
        s_, h = divmod(c, 2)
        if c == 2:
            e(f"\t@!%p6 bra {one};                      // a one-K-block unit: the producer brings the rest")
        e(f"""\t// chunk {c}: K block kb + {s_}, half {h}: the row's raw bytes in slot {c}, converted in place
\tadd.u32 %r9, %sbase, {L['t'] + c * L['tslot']};""")
        staging_row_address(e, "%r3", "%r9")
        e("""\tld.shared.v4.b32 {%wi0, %wi1, %wi2, %wi3}, [%r21];   // units 0, 1, 2 at u ^ row%8: conflict-free
\txor.b32 %r23, %r21, 16;
\tld.shared.v4.b32 {%wi4, %wi5, %wi6, %wi7}, [%r23];
\txor.b32 %r23, %r21, 32;
\tld.shared.u32 %r12, [%r23];""")

        def staging_row(e, c=c):
            e(f"\tadd.u32 %r9, %sbase, {L['t'] + c * L['tslot']};")
            staging_row_address(e, "%r3", "%r9")

        chunk_convert(e, fmt, staging_row, mx_fast=False)
        e(f"""\tshl.b32 %r8, %kb, 1;
\tadd.u32 %r8, %r8, {c};
\tsetp.ge.u32 %p5, %r8, %r4;               // past K: zeros (as the bulk copy reads them)""")
        for q in range(8):
            e(f"\txor.b32 %r23, %r21, {q << 4};\n\t@%p5 st.shared.v4.b32 [%r23], {{0, 0, 0, 0}};")
    self_fill_handoff(e, one, done, 4)
