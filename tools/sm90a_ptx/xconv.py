"""The _x kernels' converter warps: W converted in the kernel into a global workspace,
published per unit by flags that the W producer acquires."""
from ptxgen import watchdog_check, watchdog_start

from . import kstate as K
from .flags import FAULT, WATCHDOG, EXPERIMENTS, TLINE, XCONV_STAGE, XCONV_WARPS, XHEAD, XLOOK, XSTAG_NS, XSTAG_UNITS
from .timeline import tline
from .sync import spin_ns
from .convert import emit_lut_setup
from .layout import xdone_off
from .prep import chunk_convert, chunk_load, chunk_to_stage, staging_row_address


def xconv_branch():
    return """
\tsetp.ge.u32 %p1, %warp, 2;
\t@%p1 bra L_xconv;                          // warps 2-7: the converters""" if K.XCONV else ""


# The W producer's wait-loop labels (L_xw<n>) count across the whole run, not per kernel: the
# committed files' labels depend on INSTANCES' order (process-wide on purpose; not kstate).
XWAITS = [0]


# the converters' two publications (a unit's flag; the launch's "every item converted"); the
# planted fault nopublish (tests/test_watchdog.c) leaves both out, so the W producer's flag wait
# must trap
PUBLISH_UNIT = ("\t// FAULT nopublish (planted, never committed): the unit's flag is not stored" if FAULT == "nopublish"
                else f"\t@%px st.release.gpu.global.u32 [%rd5+{XHEAD}], %xv;")
PUBLISH_ALL = ("\t// FAULT nopublish: nor the launch's" if FAULT == "nopublish"
               else "\t@%px st.release.gpu.global.u32 [%xfa+4], %xv;")


def spin_count(n):
    """nowatchdog: the flag wait's old bound, 2 million polls."""
    return f"""\tadd.u32 %xspin, %xspin, 1;
\tsetp.lt.u32 %px, %xspin, 2000000;
\t@%px bra L_xw{n};
\ttrap;"""


def upi():
    """The converters' units (32-row blocks) of an item: BN / 32 (8, or 5 in the narrow tile);
    an item's flags stay 8 words apart (32 bytes) either way."""
    return K.BN // 32


def order_entry(item):
    """The unit %xu's item (kb * tiles_n + nt) into `item`, from the host's order p_x_order.
    With 8 units an item the table holds one item a rank (rank u / 8, block u % 8, both taken
    from %xu); in the narrow tile (5 units an item) one entry a unit, 8 item + b (the unit's
    flag index: no division by 5 in the converters, whose 56 registers MXFP4 would spill),
    and the item to %xt.  Then %xkb = the item's K block.  p_x_order = 0 is the identity order
    (item = rank; the host's order wherever one band holds every N tile): no table load at the
    head of the converters' first chain (a cold load, about 1 us into a launch)."""
    load = f"""\tld.param.u64 %rd5, [p_x_order];
\tsetp.ne.u64 %px, %rd5, 0;                   // a table (0: the identity order, nothing to load)
\tcvta.to.global.u64 %rd5, %rd5;
\tmul.wide.u32 %rd6, {item}, 4;
\tadd.u64 %rd5, %rd5, %rd6;
"""
    if upi() == 8:
        return (f"\tshr.u32 {item}, %xu, 3;                     // the item's rank in conversion order\n" + load +
                f"\t@%px ld.global.nc.u32 {item}, [%rd5];        // the item kb * tiles_n + nt of that rank\n"
                f"\tdiv.u32 %xkb, {item}, %tiles_n;\n")
    return (f"\tmov.u32 {item}, %xu;\n" + load +
            f"""\t@%px ld.global.nc.u32 {item}, [%rd5];        // 8 item + b of this unit
{identity_unit(item, "%xt", "%xu", "!%px")}\tshr.u32 %xt, {item}, 3;                     // the item kb * tiles_n + nt
\tdiv.u32 %xkb, %xt, %tiles_n;
""")


def identity_unit(dst, tmp, u, pred):
    """The narrow tile's identity order: dst = 8 (u / 5) + u % 5 under pred (tmp = u / 5)."""
    return (f"""\t@{pred} div.u32 {tmp}, {u}, {upi()};                // identity order: item u / {upi()} ...
\t@{pred} mul.lo.u32 {dst}, {tmp}, {upi()};
\t@{pred} sub.u32 {dst}, {u}, {dst};                // ... unit b = u % {upi()}
\t@{pred} mad.lo.u32 {dst}, {tmp}, 8, {dst};          // 8 item + b
""")


def units_of(dst, items, why):
    """dst = items * upi()."""
    return (f"\tshl.b32 {dst}, {items}, 3;{why}" if upi() == 8 else
            f"\tmul.lo.u32 {dst}, {items}, {upi()};{why}")


def n_tile_of(dst, n0):
    """dst = n0 / BN: the N tile whose first row is n0."""
    return (f"\tshr.u32 {dst}, {n0}, 8;" if K.BN == 256 else f"\tdiv.u32 {dst}, {n0}, {K.BN};")


def xconv_wait(e):
    """_x W producer, before K block %pks of N tile %pcn0/256: unless the item is in the range
    of K blocks [%xrk0, %xrk1) of N tile %xrn already known converted, wait until its 8 flags
    hold p_x_epoch (relaxed loads), extend the range over the next items of the N tile whose
    flags already hold it (up to XLOOK items, no waiting), then one fence.acq_rel.gpu (an
    acquire of every release seen) and fence.proxy.async.global (the converters' generic-proxy
    writes before this thread's bulk copies) for the whole range.  One fence per range, not per
    item: the fences cost the producer about a stage's time (bench/results/experiments).
    Flags that never arrive (a broken launch) trap after the watchdog's 4 s of polling
    (ptxgen.watchdog_check; nowatchdog: 2 million polls, the bound before it) instead of
    hanging."""
    if "xnowait" in EXPERIMENTS or "xnoconv" in EXPERIMENTS:
        return                                  # timing only: W may be read before it is written
    n = XWAITS[0]
    XWAITS[0] += 1

    def flags_ready(item, miss):
        """the upi() flags of item (a register) equal the epoch, else branch to `miss`"""
        n = upi()
        assert n in (5, 8)
        second = ("\tld.relaxed.gpu.global.v4.u32 {%xf4, %xf5, %xf6, %xf7}, " if n == 8 else
                  "\tld.relaxed.gpu.global.u32 %xf4, ")
        e(f"""\tmul.wide.u32 %xfa, {item}, 32;
\tadd.u64 %xfa, %xflags, %xfa;
\tld.relaxed.gpu.global.v4.u32 {{%xf0, %xf1, %xf2, %xf3}}, [%xfa+{XHEAD}];
{second}[%xfa+{XHEAD + 16}];""")
        for i in range(1, n):
            e(f"\tand.b32 %xv, {'%xf0' if i == 1 else '%xv'}, %xf{i};")
        for i in range(1, n):
            e(f"\tor.b32 %xf0, %xf0, %xf{i};")
        e(f"""\tsetp.eq.u32 %px, %xv, %xepoch;             // every flag has all the epoch's bits ...
\tsetp.eq.and.u32 %px, %xf0, %xepoch, %px;   // ... and no other: all {"eight" if n == 8 else "five"} equal it
\t@!%px bra {miss};""")

    e(f"""\t// _x: every item converted (seen once, fenced), or this one known converted (in the range)?
\tsetp.ne.u32 %px, %xall, 0;
\t@%px bra L_xd{n};
\tsetp.eq.u32 %px, %pcn0, %xrn;
\tsetp.ge.and.u32 %px, %pks, %xrk0, %px;
\tsetp.lt.and.u32 %px, %pks, %xrk1, %px;
\t@%px bra L_xd{n};
{watchdog_start() if WATCHDOG else chr(9) + "mov.u32 %xspin, 0;"}
L_xw{n}:
\tld.relaxed.gpu.global.u32 %xv, [%xflags+4];  // the launch's "all converted" word
\tsetp.eq.u32 %px, %xv, %xepoch;
\t@%px bra L_xa{n};
{n_tile_of("%xitem", "%pcn0")}
\tmad.lo.u32 %xitem, %pks, %tiles_n, %xitem;   // item ks * tiles_n + nt""")
    flags_ready("%xitem", f"L_xs{n}")
    e(f"""\tbra L_xr{n};
L_xs{n}:
\tnanosleep.u32 64;
{watchdog_check("%px", f"L_xw{n}", "the converters' flags never came") if WATCHDOG else spin_count(n)}
L_xr{n}:
\t// the range starts here; extend it over the next items already converted (no waiting)
\tmov.u32 %xrn, %pcn0;
\tmov.u32 %xrk0, %pks;
\tadd.u32 %xrk1, %pks, 1;
\tadd.u32 %xlim, %pks, {XLOOK};
\tmin.u32 %xlim, %xlim, %nks;
L_xe{n}:
\tsetp.ge.u32 %px, %xrk1, %xlim;
\t@%px bra L_xf{n};
{n_tile_of("%xitem", "%pcn0")}
\tmad.lo.u32 %xitem, %xrk1, %tiles_n, %xitem;""")
    flags_ready("%xitem", f"L_xf{n}")
    e(f"""\tadd.u32 %xrk1, %xrk1, 1;
\tbra L_xe{n};
L_xa{n}:
\tmov.u32 %xall, 1;                          // no wait again in this launch""")
    tline(e, 29, 32)
    e(f"""L_xf{n}:
\tfence.acq_rel.gpu;                          // with the relaxed loads: an acquire of the releases seen
\tfence.proxy.async.global;                   // the converters' writes before the bulk copies
L_xd{n}:""")


def emit_xconv(e, fmt, L):
    """The _x kernels' converter warps (2-7): the launch's W conversion, unit by unit
    (xconv_roles_doc), with the preparation kernel's chunk code (chunk_to_stage).  They
    run with the producers' {REG_WG0} registers, so across a chunk's conversion only the unit
    (%xu), its K block and first row, the staging block, K and the W / SFW addresses stay
    live; everything else is recomputed or reloaded from the parameters."""
    e(f"""
// =====================================================================================
// Converters (warps 2-7).  Unit of rank u = {upi()} i + b: W rows {K.BN} nt + 32 b ..+31 x K 128 kb
// ..+127 of item p_x_order[i] = kb * tiles_n + nt, flag 8 p_x_order[i] + b.  Two passes of
// 16 rows: lane l converts row 16p + l/2, chunk 2kb + l%2 (clamped to the last row / chunk,
// then not stored) into its staging row;
// 8 stores of 512 contiguous bytes (2 rows x 2 chunks) each; then the unit is published.
// =====================================================================================
L_xconv:""")
    if "xnoconv" in EXPERIMENTS:
        e("\tbra L_exit;                                // timing only: no conversion")
    emit_lut_setup(e)
    e(f"""\tld.param.u64 %rd0, [p_x_W];
\tcvta.to.global.u64 %rd0, %rd0;
\tld.param.u64 %rd1, [p_x_SFW];
\tcvta.to.global.u64 %rd1, %rd1;
\tld.param.u32 %r1, [p_x_K];
\tsub.u32 %xt, %warp, 2;                     // converter warp 0..{XCONV_WARPS - 1}
\tmov.u32 %xu, %ctaid.x;
\tmad.lo.u32 %xu, %xu, {XCONV_WARPS}, %xt;               // first unit
\tmad.lo.u32 %xbase, %xt, {XCONV_STAGE}, %sbase;
\tadd.u32 %xbase, %xbase, {L['xstage']};            // this warp's staging block""")
    if XSTAG_NS:
        e(f"""\t// xstag: a warp whose first unit comes after the first {XSTAG_UNITS} waits {XSTAG_NS} ns first
\tsetp.lt.u32 %px, %xu, {XSTAG_UNITS};
\t@%px bra L_xstag_done;""")
        spin_ns(e, "L_xstag_wait", XSTAG_NS, 128, "%rd5", "%rd6", "%px")
        e("L_xstag_done:")
    if TLINE:
        e("\t.reg .b32 %tlv;\n\tmov.u32 %tlv, 1;")
    e(f"""L_x_unit:
\tmul.lo.u32 %xt, %tiles_n, %nks;
{units_of("%xt", "%xt", f"                       // units: {upi()} row blocks an item")}
\tsetp.ge.u32 %px, %xu, %xt;
\t@%px bra {"L_x_leave" if K.XDBUF else "L_exit"};
{order_entry("%xitem").rstrip()}""")
    tline(e, 32, 64, "%tlv", dep="%xkb")
    if upi() == 8:
        e("""\tmul.lo.u32 %xt, %xkb, %tiles_n;
\tsub.u32 %xt, %xitem, %xt;                  // N tile
\tshl.b32 %xrow0, %xt, 8;
\tand.b32 %xt, %xu, 7;                       // row block
\tshl.b32 %xt, %xt, 5;
\tadd.u32 %xrow0, %xrow0, %xt;              // the unit's first row""")
    else:   # %xitem holds 8 item + b (order_entry), %xt the item
        e(f"""\tmul.lo.u32 %xrow0, %xkb, %tiles_n;
\tsub.u32 %xrow0, %xt, %xrow0;              // N tile
\tand.b32 %xt, %xitem, 7;                    // row block b
\tshl.b32 %xt, %xt, 5;
\tmad.lo.u32 %xrow0, %xrow0, {K.BN}, %xt;        // the unit's first row: {K.BN} nt + 32 b""")
    def pass_chunk(p):
        """%r5, %r7, %r8: the chunk lane l converts in pass p"""
        e(f"""\tld.param.u32 %xN, [p_x_N];
\tshr.u32 %xk64, %r1, 6;                     // K/64: chunks a row
\tshr.u32 %xt, %lane, 1;
\tadd.u32 %r7, %xrow0, %xt;
\tadd.u32 %r7, %r7, {16 * p};
\tsub.u32 %xt, %xN, 1;
\tmin.u32 %r7, %r7, %xt;                     // row n (clamped)
\tshl.b32 %r8, %xkb, 1;
\tand.b32 %xt, %lane, 1;
\tadd.u32 %r8, %r8, %xt;
\tsub.u32 %xt, %xk64, 1;
\tmin.u32 %r8, %r8, %xt;                     // chunk j (clamped)
\tmad.lo.u32 %r5, %r7, %xk64, %r8;           // chunk g of W""")

    def staging_row(e):
        e("\t// the lane's row of the warp's staging block, chunk q at q ^ (lane % 8)")
        staging_row_address(e, "%lane", "%xbase")

    pre = [f"%xw{i}" for i in range(9)]
    for p in range(2):
        e(f"\t// ---- pass {p}: rows {16 * p}..{16 * p + 15} of the unit ----")
        if not K.XPRE_ON:
            pass_chunk(p)
            chunk_to_stage(e, fmt, staging_row)
        elif p == 0:
            pass_chunk(0)
            chunk_load(e, fmt)
            e("\t// xpre: pass 1's loads now, under pass 0's conversion")
            pass_chunk(1)
            chunk_load(e, fmt, pre[:8], pre[8])
            chunk_convert(e, fmt, staging_row)
        else:
            e("\t// xpre: pass 1's words and scales, loaded in pass 0")
            for i in range(8):
                e(f"\tmov.b32 %wi{i}, {pre[i]};")
            e(f"\tmov.b32 %r12, {pre[8]};")
            chunk_convert(e, fmt, staging_row)
        tline(e, 33 + p, 64, "%tlv", dep="%wi7")
        e(f"""\tbar.warp.sync 0xffffffff;
\t// the stores: piece l of store s = staging row 4s + l/8 (row R = first + {16 * p} + 2s + l/16,
\t// chunk J = 2kb + (l/8)%2), 16-byte chunk q = l%8 kept at q ^ (l/8 + 4(s%2)); %xrl = rows
\t// from store 0's R on that exist (0 when J is past K)
\tld.param.u32 %xN, [p_x_N];
\tshr.u32 %xk64, %r1, 6;
\tshr.u32 %xl8, %lane, 3;
\tand.b32 %xt, %lane, 7;
\tshl.b32 %xsm0, %xl8, 7;
\tadd.u32 %xsm0, %xsm0, %xbase;
\txor.b32 %xsm1, %xt, %xl8;
\tshl.b32 %xsm1, %xsm1, 4;
\tadd.u32 %xsm1, %xsm1, %xsm0;               // even s (+ 512 s)
\txor.b32 %xt, %xt, %xl8;
\txor.b32 %xt, %xt, 4;
\tshl.b32 %xt, %xt, 4;
\tadd.u32 %xsm0, %xsm0, %xt;                 // odd s (+ 512 s)
\tshr.u32 %xr, %lane, 4;
\tadd.u32 %xr, %xr, %xrow0;
\tadd.u32 %xr, %xr, {16 * p};                 // R of store 0
\tand.b32 %xj, %xl8, 1;
\tshl.b32 %xt, %xkb, 1;
\tadd.u32 %xj, %xj, %xt;                     // chunk J
\tmax.u32 %xrl, %xN, %xr;
\tsub.u32 %xrl, %xrl, %xr;                   // N - R, or 0 past N
\tsetp.ge.u32 %px, %xj, %xk64;
\t@%px mov.u32 %xrl, 0;
\tld.param.u64 %xg, [p_x_Wp];
\tcvta.to.global.u64 %xg, %xg;
\tmul.wide.u32 %rd5, %xr, %r1;
\tshl.b64 %rd5, %rd5, 1;                     // R * 2K
\tadd.u64 %xg, %xg, %rd5;
\tmul.wide.u32 %rd5, %xj, 128;
\tadd.u64 %xg, %xg, %rd5;
\tand.b32 %xt, %lane, 7;
\tmul.wide.u32 %rd5, %xt, 16;
\tadd.u64 %xg, %xg, %rd5;
\tmul.wide.u32 %rd6, %r1, 4;                 // two rows: 4K bytes""")
        for st in range(8):
            e(f"""\tld.shared.v4.b32 {{%r32, %r33, %r34, %r35}}, [{"%xsm1" if st % 2 == 0 else "%xsm0"}+{512 * st}];
\tsetp.gt.u32 %px, %xrl, {2 * st};
\t@%px st.global.v4.b32 [%xg], {{%r32, %r33, %r34, %r35}};""")
            if st < 7:
                e("\tadd.u64 %xg, %xg, %rd6;")
        e("\tbar.warp.sync 0xffffffff;                  // the staging block is free again")
    tline(e, 35, 64, "%tlv")
    # the unit's flag index: from its K block and first row (both still live after the stores),
    # not from the order table again (no load, and p_x_order may be 0: the identity order)
    XRELOAD = ("\tmul.lo.u32 %xt, %xkb, %tiles_n;\n\tshl.b32 %xt, %xt, 3;\n"
               "\tshr.u32 %xv, %xrow0, 5;                    // 8 nt + b: the unit's first row / 32\n"
               "\tadd.u32 %xt, %xt, %xv;                     // flag 8 (kb * tiles_n + nt) + b\n")
    if upi() != 8:   # the per-unit table holds the flag index itself (row / 32 is not 8 nt + b here)
        XRELOAD = ("\tld.param.u64 %rd5, [p_x_order];\n"
                   "\tsetp.ne.u64 %px, %rd5, 0;                   // a table (0: the identity order)\n"
                   "\tcvta.to.global.u64 %rd5, %rd5;\n"
                   "\tmul.wide.u32 %rd6, %xu, 4;\n\tadd.u64 %rd5, %rd5, %rd6;\n"
                   "\t@%px ld.global.nc.u32 %xt, [%rd5];          // flag 8 item + b, again (reloaded: nothing more stays live)\n" +
                   identity_unit("%xt", "%xv", "%xu", "!%px"))
    # FP4LR_GEN_EXPERIMENT=xnofence (timing only, not correct in principle): no proxy fence
    # before the release, to time what the fence costs the publication (with tline)
    pfence = ("\t// xnofence: no fence.proxy.async.global (timing only)" if "xnofence" in EXPERIMENTS
              else "\tfence.proxy.async.global;")
    e(f"""\t// ---- publish the unit: the writes ordered for the bulk copies, then its flag ----
{pfence}
\tbar.warp.sync 0xffffffff;
\tld.param.u64 %xfa, [p_x_flags];
\tcvta.to.global.u64 %xfa, %xfa;
{XRELOAD}\tsetp.eq.u32 %px, %lane, 0;
\tmul.wide.u32 %rd5, %xt, 4;
\tadd.u64 %rd5, %xfa, %rd5;
\tld.param.u32 %xv, [p_x_epoch];
{PUBLISH_UNIT}
\t// count the unit (word 0); the launch's last unit sets the count back to 0 for the next
\t// launch and stores the epoch to word 1, "every item converted" (the count's acq_rel
\t// read-modify-writes carry every unit's release to it)
\t@%px atom.acq_rel.gpu.global.add.u32 %xt, [%xfa], 1;
\tadd.u32 %xt, %xt, 1;
\tmul.lo.u32 %xv, %tiles_n, %nks;
{units_of("%xv", "%xv", "                       // units (as at L_x_unit)")}
\tsetp.eq.and.u32 %px, %xt, %xv, %px;        // this was the last unit
\t@%px st.relaxed.gpu.global.u32 [%xfa], 0;
\tld.param.u32 %xv, [p_x_epoch];
{PUBLISH_ALL}""")
    tline(e, 30, 64, "%tlv")
    tline(e, 31, 64)
    if TLINE:
        e("\tmov.u32 %tlv, 0;")
    e(f"""\tmov.u32 %xt, %nctaid.x;
\tmad.lo.u32 %xu, %xt, {XCONV_WARPS}, %xu;               // the next unit of this warp
\tbra L_x_unit;""")
    if K.XDBUF:
        e(f"""L_x_leave:
\t// no unit left: this warp's staging block is free for the epilogues (XDBUF); every lane's
\t// last staging read happened before the warp barrier, the elected lane's arrive releases them
\tbar.warp.sync -1;
\telect.sync _|%px, -1;                      // one lane (nothing live through the loop for this)
\tmov.u32 %xt, smem;
\t@%px mbarrier.arrive.shared::cta.b64 _, [%xt+{L['bar'] + xdone_off(L)}];
\tbra L_exit;""")


# The _x kernels' own parameters, after the stream-K ones (ptx/ABI.md).
def x_params():
    """The _x kernels' parameters; the narrow tile's order table has an entry a unit."""
    if upi() == 8:
        return X_PARAMS
    return X_PARAMS.replace("tiles_n * nks u32, rank -> item kb * tiles_n + nt",
                            f"tiles_n * nks * {upi()} u32, unit -> 8 item + b")


X_PARAMS = """\t.param .u64 p_x_W,                    // W: N x K e2m1, K/2 bytes a row (the converters' source)
\t.param .u64 p_x_SFW,                  // W's scale atoms (128x4 layout)
\t.param .u64 p_x_Wp,                   // the prepared W the converters write and p_tmW maps
\t.param .u64 p_x_flags,                // unit count, "all converted", pad to 64 B; then per item kb * tiles_n + nt 8 u32 flags
\t.param .u32 p_x_epoch,                // this launch's flag value (nonzero, changes every launch)
\t.param .u32 p_x_N,
\t.param .u32 p_x_K,                    // a multiple of 64 (NVFP4) / 128 (MXFP4)
\t.param .u64 p_x_order                 // the conversion order (0: the identity): tiles_n * nks u32, rank -> item kb * tiles_n + nt
"""
