"""The tile walk every role shares: grouped raster coordinates, stream-K units, and the main
producer's issue of the A / W / scale stages."""
import ptxgen
from ptxgen import advance

from . import kstate as K
from .flags import BM, FORMATS, PRODROT, TLINE, TRANSFORM_WARPS


def emit_tile_coords_doc(e):
    walk = "%clusterid.x, += %nclusterid.x (both\n\t// CTAs of the pair)" if K.CL == 2 else "blockIdx.x, += gridDim.x"
    e(f"""\t// Every role walks the same tile sequence: tile = {walk}.  The grouped
\t// raster maps a linear tile index to (m tile, n tile): groups of `group` tile rows, inside
\t// a group n-major so consecutive CTAs share the same W tile (and A rows stay in L2).""")


def tile_coords(e, tile="%tile", m0="%m0", n0="%n0"):
    """tile index -> m0 (row of the tile's first output), n0 (column)."""
    e(f"""\t// tile coordinates (grouped raster)
{ptxgen.grouped_raster(tile)}\tmul.lo.u32 {m0}, %r5, {BM * K.CL};
\tadd.u32 {m0}, {m0}, %mrank;                // this CTA's rows of the cluster tile
\tmul.lo.u32 {n0}, %r6, {K.BN};""")


# gen_sm90a_pp replaces walk.sk_consts while it emits the W-prepared producers: producer code
# calls it through this module's namespace (not a `from .walk import sk_consts` copy).
def sk_consts(e):
    """The stream-K walk's constants, recomputed where a unit boundary needs them (so
    that none stays live through the K loop, and with no division): the data-parallel tile
    count %skdp and this cluster's slice [%skit0, %skit1) of the split tiles' T = (ntiles -
    skdp) * nks K iterations: q = p_sk_q each, one more for the first r = p_sk_r clusters,
    so slice b starts at b*q + min(b, r).  Clipped to T whatever the parameters say.  A
    launch without a workspace (p_sk_ws = 0) walks every tile whole."""
    e("""\tld.param.u64 %skws, [p_sk_ws];
\tld.param.u32 %skdp, [p_sk_dp_tiles];
\tsetp.eq.u64 %psk, %skws, 0;
\t@%psk mov.u32 %skdp, %ntiles;              // no workspace: no split tiles
\tmin.u32 %skdp, %skdp, %ntiles;
\tsub.u32 %skT, %ntiles, %skdp;
\tmul.lo.u32 %skT, %skT, %nks;               // T: K iterations of the split tiles
\tld.param.u32 %skit1, [p_sk_q];
\tld.param.u32 %skit, [p_sk_r];
\tmin.u32 %skit0, %tile0, %skit;
\tmad.lo.u32 %skit0, %tile0, %skit1, %skit0;     // b*q + min(b, r)
\tsetp.lt.u32 %psk, %tile0, %skit;
\tadd.u32 %skit1, %skit1, %skit0;
\t@%psk add.u32 %skit1, %skit1, 1;            // + q (+ 1 for the first r)
\tmin.u32 %skit0, %skit0, %skT;
\tmin.u32 %skit1, %skit1, %skT;""")


def unit_first(e, c, tag):
    """The first work unit of cursor c (dict of register names tile, kb, ke)."""
    e(f"""\t// ---- first work unit: data-parallel tile %tile0, or the start of the split range ----
\tmov.u32 {c['tile']}, %tile0;
\tmov.u32 {c['kb']}, 0;
\tmov.u32 {c['ke']}, %nks;""")
    sk_consts(e)
    if K.SKORDER_ON:
        e(f"""\t// skorder: a split range that starts inside a tile takes that piece (a contributor's) first
\tsetp.ge.u32 %psk, %skit0, %skit1;
\t@%psk bra L_unit_plain_{tag};              // an empty range
\trem.u32 %skit, %skit0, %nks;
\tsetp.eq.u32 %psk, %skit, 0;
\t@%psk bra L_unit_plain_{tag};              // the range starts at a tile's start
\tmov.u32 %skit, %skit0;
\tbra L_unit_sk_{tag};
L_unit_plain_{tag}:""")
    e(f"""\tsetp.lt.u32 %psk, {c['tile']}, %skdp;
\t@%psk bra L_unit_done_{tag};
\tmov.u32 %skit, %skit0;
\tbra L_unit_sk_{tag};""")
    unit_split(e, c, tag)


def unit_bounds(e, c):
    """kb and ke of the unit at tile c['tile'] again, from the tile alone (so that they need
    not stay live through the K loop): 0 and nks for a data-parallel tile; for a split tile
    with first iteration base = (tile - skdp)*nks, this cluster's range clipped to the tile.
    Needs sk_consts."""
    lab = e.label("unit_bounds")
    e(f"""\tmov.u32 {c['kb']}, 0;
\tmov.u32 {c['ke']}, %nks;
\tsetp.lt.u32 %psk, {c['tile']}, %skdp;
\t@%psk bra {lab};
\tsub.u32 %skit, {c['tile']}, %skdp;
\tmul.lo.u32 %skit, %skit, %nks;             // the tile's first split iteration
\tmax.u32 {c['kb']}, %skit0, %skit;
\tsub.u32 {c['kb']}, {c['kb']}, %skit;
\tadd.u32 {c['ke']}, %skit, %nks;
\tmin.u32 {c['ke']}, {c['ke']}, %skit1;
\tsub.u32 {c['ke']}, {c['ke']}, %skit;
{lab}:""")


def unit_next(e, c, tag, bounds=False):
    """Advance cursor c to its next work unit; tile = ntiles when none is left.
    Units: the data-parallel tiles b, b+G, ... below %skdp (K 0..nks), then this cluster's
    slice [%skit0, %skit1) of the split tiles' K iterations, one unit per tile it touches
    (the unit after one ending at stage ke of split tile t starts at iteration
    (t - skdp)*nks + ke)."""
    e("\t// ---- next work unit ----")
    sk_consts(e)
    if bounds:
        unit_bounds(e, c)
    e(f"""\tsetp.lt.u32 %psk, {c['tile']}, %skdp;
\t@!%psk bra L_unit_skadv_{tag};
\tadd.u32 {c['tile']}, {c['tile']}, %tstride;     // next data-parallel tile
\tsetp.lt.u32 %psk, {c['tile']}, %skdp;
\t@%psk bra L_unit_done_{tag};
\tmov.u32 %skit, %skit0;                     // data-parallel tiles done: the split range""")
    if K.SKORDER_ON:
        e(f"""\trem.u32 %skit, %skit0, %nks;                // skorder: past the piece taken first, if any
\tsetp.ne.u32 %psk, %skit, 0;
\tsub.u32 %skit, %nks, %skit;
\t@!%psk mov.u32 %skit, 0;
\tadd.u32 %skit, %skit, %skit0;""")
    e(f"""\tbra L_unit_sk_{tag};
L_unit_skadv_{tag}:""")
    if K.SKORDER_ON:
        e(f"""\t// skorder: after the piece taken first (the only split unit with kb > 0), the
\t// data-parallel tiles, if this cluster has any
\tsetp.ne.u32 %psk, {c['kb']}, 0;
\tsetp.lt.and.u32 %psk, %tile0, %skdp, %psk;
\t@!%psk bra L_unit_skcont_{tag};
\tmov.u32 {c['tile']}, %tile0;
\tmov.u32 {c['kb']}, 0;
\tmov.u32 {c['ke']}, %nks;
\tbra L_unit_done_{tag};
L_unit_skcont_{tag}:""")
    e(f"""\tsub.u32 %skit, {c['tile']}, %skdp;
\tmad.lo.u32 %skit, %skit, %nks, {c['ke']};""")
    unit_split(e, c, tag)


def unit_split(e, c, tag):
    """The split unit at iteration %skit: tile skdp + it/nks, K from it%nks to the tile's
    end or the end of the range, whichever is first."""
    e(f"""L_unit_sk_{tag}:
\tsetp.ge.u32 %psk, %skit, %skit1;
\t@%psk mov.u32 {c['tile']}, %ntiles;          // range done: no unit left
\t@%psk bra L_unit_done_{tag};
\tdiv.u32 {c['tile']}, %skit, %nks;
\tmul.lo.u32 {c['kb']}, {c['tile']}, %nks;
\tsub.u32 {c['kb']}, %skit, {c['kb']};          // first K stage of the unit
\tadd.u32 {c['tile']}, {c['tile']}, %skdp;
\tsub.u32 {c['ke']}, %skit1, %skit;
\tadd.u32 {c['ke']}, {c['ke']}, {c['kb']};
\tmin.u32 {c['ke']}, {c['ke']}, %nks;              // one past its last K stage
L_unit_done_{tag}:""")


CUR = dict(tile="%tile", kb="%kb", ke="%ke")      # transform and consumers
NCUR = dict(tile="%ntl", kb="%nkb", ke="%nke")    # the consumers' next unit (walkpre)
PCUR = dict(tile="%ptile", kb="%pkb", ke="%pke")  # the producer (thread 0)


def producer_unit_start(e):
    """The producer's cursor at a new unit: K coordinate = its first stage, tile origin
    (the unit's bounds are recomputed at every stage, so none of them stays live)."""
    e("\tmov.u32 %pks, %pkb;")
    tile_coords(e, "%ptile", "%pcm0", "%pcn0")


def produce_next(e, fmt, stages, L, tag):
    """Thread 0 of WG0 issues the next main stage of its own cursor (%ptile, %pks,
    ring slot %ps, parity %pph), if any is left: wait `empty`, arm `full` with the
    stage's bytes, four bulk tensor copies."""
    blk, ka, _, _ = FORMATS[fmt]
    if PRODROT:
        e(f"""\t// ---- producer step ({tag}): every transform warp advances the cursor; lane 0 of
\t// warp (stages issued % {TRANSFORM_WARPS}) issues the stage ----
\tsetp.ge.u32 %p5, %ptile, %ntiles;
\t@%p5 bra L_prod_skip_{tag};
\tand.b32 %r10, %pgs, {TRANSFORM_WARPS - 1};
\tsetp.ne.u32 %p5, %r10, %warp;
\tsetp.ne.or.u32 %p5, %lane, 0, %p5;
\t@%p5 bra L_prod_issued_{tag};""")
    else:
        e(f"""\t// ---- producer step ({tag}): thread 0 issues the next stage of its cursor ----
\t@!%pthr0 bra L_prod_skip_{tag};
\tsetp.ge.u32 %p5, %ptile, %ntiles;
\t@%p5 bra L_prod_skip_{tag};""")
    e(f"""\tmul.lo.u32 %r10, %ps, 8;
\tadd.u32 %r11, %bar_empty, %r10;
\txor.b32 %r12, %pph, 1;                     // first lap passes""")
    e.wait("%r11", "%r12", "empty")
    e(f"""\tadd.u32 %r13, %bar_full, %r10;
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [%r13], {L['stage']};
\tmad.lo.u32 %r14, %ps, {L['stage']}, %sbase;  // stage base
\tshl.b32 %r15, %pks, 6;                     // K byte coordinate = ks * 64
\tmul.lo.u32 %r16, %pks, {2 * ka};             // SF half-atom coordinate
\tshr.u32 %r8, %pcm0, 7;                      // SFA row block
\tshr.u32 %r9, %pcn0, 7;                      // SFW row block
\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r14], [%tmA, {{%r15, %pcm0}}], [%r13];
\tadd.u32 %r17, %r14, {L['sfa']};
\tcp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r17], [%tmSFA, {{0, %r16, %r8}}], [%r13];""")
    if K.CL == 1:
        e(f"""\tadd.u32 %r17, %r14, {L['w']};
\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r17], [%tmW, {{%r15, %pcn0}}], [%r13];
\tadd.u32 %r17, %r14, {L['sfw']};
\tcp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r17], [%tmSFW, {{0, %r16, %r9}}], [%r13];""")
    else:
        e(f"""\t// W and SFW: loaded once per pair by rank 0 and multicast to both CTAs (same
\t// offsets; each CTA's `full` receives the bytes).  Rank 0's `empty` counts both
\t// CTAs' readers, so the peer's stage is free too.
\t@!%prank0 bra L_prod_nomc_{tag};
\tadd.u32 %r17, %r14, {L['w']};
\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r17], [%tmW, {{%r15, %pcn0}}], [%r13], %mask;
\tadd.u32 %r17, %r14, {L['sfw']};
\tcp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r17], [%tmSFW, {{0, %r16, %r9}}], [%r13], %mask;
L_prod_nomc_{tag}:""")
    if PRODROT:
        # %pke stays the unit's end: set by unit_first / unit_split, and every
        # data-parallel tile (the only units unit_next leaves it alone for) ends at nks
        e(f"L_prod_issued_{tag}:")
        advance(e, "%ps", "%pph", stages)
        e("\tadd.u32 %pks, %pks, 1;\n\tadd.u32 %pgs, %pgs, 1;")
    else:
        advance(e, "%ps", "%pph", stages)
        e("\tadd.u32 %pks, %pks, 1;")
        sk_consts(e)
        unit_bounds(e, PCUR)
    e(f"""\tsetp.lt.u32 %p5, %pks, %pke;
\t@%p5 bra L_prod_skip_{tag};""")
    unit_next(e, PCUR, f"p{tag}")
    producer_unit_start(e)
    e(f"L_prod_skip_{tag}:")


def producer_walk(e, label, first, nxt, stage, skip_first=None, at_unit=None, unit_end=None, leave="L_exit"):
    """One W-prepared producer's loop: its own cursor (PCUR) over the same work units as the
    consumers; `stage` emits the issue of stage %pks of the unit, at label `label`;
    `skip_first` (optional) emits code between the first unit's start and the loop;
    `unit_end` (optional) emits code after a unit's last stage, before the next unit;
    `leave`: where it goes when the walk is done (the watchdog's watcher, or L_exit)."""
    main = label == "L_mprod"
    if TLINE and main:
        e("""\t.reg .b32 %tlu0, %tlq1;
\tmov.u32 %tlu0, 1;                          // tline: 1 through unit 0 (event 45)
\tmov.u32 %tlq1, 0;                          // tline: 1 at unit 1's first stage (event 47)""")
    unit_first(e, PCUR, first)
    producer_unit_start(e)
    if at_unit:
        at_unit(f"{nxt}0")
    if skip_first:
        skip_first()
    e(f"""{label}:
\tsetp.ge.u32 %p5, %ptile, %ntiles;
\t@%p5 bra {leave};""")
    stage()
    e(f"""\tadd.u32 %pks, %pks, 1;
\tsetp.lt.u32 %p5, %pks, %pke;
\t@%p5 bra {label};""")
    if unit_end:
        unit_end()
    unit_next(e, PCUR, nxt)
    if TLINE and main:
        e("\tmov.u32 %tlq1, %tlu0;\n\tmov.u32 %tlu0, 0;")
    producer_unit_start(e)
    if at_unit:
        at_unit(f"{nxt}1")
    e(f"\tbra {label};")
