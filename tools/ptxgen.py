"""ptxgen.py -- what the PTX generators of tools/ share.

The Emitter collecting lines (one unique label per mbarrier wait loop), the ring-cursor
advance, and the command-line driver that writes every instantiation or, with --check,
compares the committed files with what the generator would write.
"""
import argparse
import os
import sys


def experiment_flags(tool, var, known):
    """The measurement flags of environment variable `var` (comma-separated) as a set; a flag
    not in `known` ends the generator with a message naming it (a misspelt flag would
    silently build the committed kernels)."""
    flags = set(x for x in os.environ.get(var, "").split(",") if x)
    if flags - known:
        sys.exit(f"{tool}: unknown {var} flag(s) {', '.join(sorted(flags - known))}; "
                 f"known: {', '.join(sorted(known))}")
    return flags


# The mbarrier watchdog: a bounded wait whose phase has not completed after WATCHDOG_NS of
# polling (%globaltimer, nanoseconds) executes `trap`, so that a protocol bug (a missed arrive,
# a copy that never lands, a walk that disagrees) ends the launch with a CUDA error instead of
# hanging the process.  Time, not a count of polls: a failed try_wait suspends the thread for
# about 3.8 us on the H100 in most places, but a thread whose warp-mates wait at the pair's
# cluster barrier polled 2^22 times in well under a second (bench/results/experiments/
# README.md, "The watchdog"), so a count has no floor.  A poll that comes more than
# WATCHDOG_GAP_NS after the previous one starts a new window: the thread was not running
# (stopped in a debugger, preempted), which is no evidence of a hang.  The timer's low 32 bits
# suffice (the window is shorter than their 4.29 s wrap).  The first try_wait is as before
# (one poll, one branch) and the window's three registers live only in the spin, so a wait
# that succeeds at once costs nothing more; but the spin needs registers, which is why the
# sm_90a consumer warpgroups (at their register limit in the K loop) wait unbounded and a
# producer thread watches them instead (sm90a_ptx/watch.py).
WATCHDOG_NS = 4_000_000_000
WATCHDOG_GAP_NS = 1 << 26          # 67 ms: a poll takes microseconds
# FP4LR_GEN_WATCHDOG_NS=N builds another bound, for measurement (tests/test_watchdog.c times
# planted hangs at two bounds); never committed
if os.environ.get("FP4LR_GEN_WATCHDOG_NS"):
    try:
        WATCHDOG_NS = int(os.environ["FP4LR_GEN_WATCHDOG_NS"], 0)
    except ValueError:
        WATCHDOG_NS = 0
    if not WATCHDOG_GAP_NS < WATCHDOG_NS < 0xF0000000:
        sys.exit(f"FP4LR_GEN_WATCHDOG_NS='{os.environ['FP4LR_GEN_WATCHDOG_NS']}': a bound in nanoseconds "
                 f"in ({WATCHDOG_GAP_NS}, {0xF0000000}) expected")
# the watchdog's registers, declared by every kernel that emits bounded waits
WATCHDOG_REGS = ("\t.reg .b32 %wdog, %wdt0, %wdt1;                  "
                 "// watchdog: the time now, the window's start, the last poll\n")


def watchdog_start():
    """A watchdog window starts: %wdt0 (its start) and %wdt1 (the last poll) = now."""
    return """\tmov.u32 %wdt0, %globaltimer_lo;           // watchdog: the window starts (ns, mod 2^32)
\tmov.u32 %wdt1, %wdt0;                     // the last poll"""


def watchdog_check(pred, retry, why):
    """After a failed poll: back to `retry` unless the window (watchdog_start) has lasted
    WATCHDOG_NS, else `trap`; a poll more than WATCHDOG_GAP_NS after the previous one starts a
    new window.  `pred` is a scratch predicate (free until the next poll)."""
    return f"""\tmov.u32 %wdog, %globaltimer_lo;
\tsub.u32 %wdt1, %wdog, %wdt1;
\tsetp.gt.u32 {pred}, %wdt1, {WATCHDOG_GAP_NS};      // not polled for so long: the thread was stopped
\t@{pred} mov.u32 %wdt0, %wdog;                 // (a debugger, preemption): a new window
\tmov.u32 %wdt1, %wdog;
\tsub.u32 %wdog, %wdog, %wdt0;
\tsetp.lt.u32 {pred}, %wdog, {WATCHDOG_NS};
\t@{pred} bra {retry};
\ttrap;                                       // watchdog: {why}"""


class Emitter:
    """Collects PTX lines; gives each wait loop a unique label.  `watchdog`: the wait loops
    emitted while it is set trap after WATCHDOG_NS of polling (the kernel declares
    WATCHDOG_REGS)."""

    def __init__(self, cluster=1, cluster_scope=None, watchdog=False):
        self.lines = []
        self.nlabel = 0
        self.watchdog = watchdog
        self.cl = cluster
        # waits acquire at cluster scope in a cluster unless told otherwise (cluster_scope=False:
        # every cross-CTA hand-off of the kernel is a bulk copy onto the waiter's own mbarrier,
        # which makes the bytes visible on its own; see sm90a_ptx/kstate.py WPAIR)
        self.cluster_scope = cluster == 2 if cluster_scope is None else cluster_scope

    def __call__(self, text=""):
        for line in text.split("\n"):
            self.lines.append(line.rstrip())

    def label(self, stem):
        self.nlabel += 1
        return f"L_{stem}_{self.nlabel}"

    def wait(self, bar_addr, parity, what, scope=None):
        """Spin on mbarrier phase `parity` (try_wait suspends in hardware between polls).
        In a cluster the wait acquires at cluster scope: the peer CTA arrives and writes.
        scope="cluster" acquires at cluster scope whatever the Emitter's default (a hand-off
        that needs it where the rest of the kernel waits at CTA scope).  Bounded while
        self.watchdog (a generator clears it for a role that is watched instead)."""
        lab = self.label("wait_" + what)
        sem = ".acquire.cluster" if scope == "cluster" or (scope is None and self.cluster_scope) else ""
        poll = f"\tmbarrier.try_wait.parity{sem}.shared::cta.b64 %pw, [{bar_addr}], {parity};"
        if not self.watchdog:
            self(f"{lab}:")
            self(poll)
            self(f"\t@!%pw bra {lab};")
            return
        self(f"""{poll}
\t@%pw bra {lab}_ok;
{watchdog_start()}
{lab}:
{poll}
\t@%pw bra {lab}_ok;
{watchdog_check("%pw", lab, "the phase never completed")}
{lab}_ok:""")

    def text(self):
        return "\n".join(self.lines) + "\n"


# The parameters every fp4lr GEMM entry shares (the ABI of ptx/ABI.md): the five tensor
# maps used through their generic addresses, the K stage count and the tile walk.
COMMON_PARAMS = """\tmov.u64 %rd0, p_tmA;   cvta.param.u64 %tmA, %rd0;
\tmov.u64 %rd0, p_tmW;   cvta.param.u64 %tmW, %rd0;
\tmov.u64 %rd0, p_tmSFA; cvta.param.u64 %tmSFA, %rd0;
\tmov.u64 %rd0, p_tmSFW; cvta.param.u64 %tmSFW, %rd0;
\tmov.u64 %rd0, p_tmY;   cvta.param.u64 %tmY, %rd0;
\tld.param.u32 %nks, [p_num_k_stages];
\tld.param.u32 %tiles_m, [p_tiles_m];
\tld.param.u32 %tiles_n, [p_tiles_n];
\tld.param.u32 %group, [p_group];
\tmul.lo.u32 %ntiles, %tiles_m, %tiles_n;
"""


def grouped_raster(tile):
    """The persistent tile walk's raster: linear tile index -> m tile in %r5, n tile in %r6.
    Groups of `group` tile rows, n-major inside a group, so consecutive tiles share a W
    tile in L2 (%r0-%r4 are scratch)."""
    return f"""\tmul.lo.u32 %r0, %group, %tiles_n;          // tiles per group
\tdiv.u32 %r1, {tile}, %r0;                    // group id
\tmul.lo.u32 %r2, %r1, %group;                // first m tile of the group
\tsub.u32 %r3, %tiles_m, %r2;
\tmin.u32 %r3, %r3, %group;                   // rows of this group
\tmul.lo.u32 %r4, %r1, %r0;
\tsub.u32 %r4, {tile}, %r4;                    // index inside the group
\trem.u32 %r5, %r4, %r3;
\tadd.u32 %r5, %r5, %r2;                      // m tile
\tdiv.u32 %r6, %r4, %r3;                      // n tile
"""


# The fused family's parameters after the dense ones (both architectures declare the same
# list): the L and U maps through their generic addresses, wc / beta (0 = absent), N and the
# low-rank ring geometry the host chose.
LOWRANK_PARAMS = """\tmov.u64 %rd0, p_tmL;   cvta.param.u64 %tmL, %rd0;
\tmov.u64 %rd0, p_tmU;   cvta.param.u64 %tmU, %rd0;
\tld.param.u64 %wcp, [p_wc];
\tld.param.u64 %betap, [p_beta];
\tsetp.ne.u64 %pwc, %wcp, 0;
\tsetp.ne.u64 %pbeta, %betap, 0;
\tld.param.u32 %ncols, [p_N];
\tld.param.u32 %lchunks, [p_lora_chunks];
\tld.param.u32 %lslots, [p_lora_slots];
\tld.param.u32 %lsub, [p_lora_sub];
\tld.param.u32 %lksteps, [p_lora_ksteps];
\tld.param.u32 %lwk, [p_lora_wk];
\tld.param.u32 %ldeschi, [p_lora_deschi];
"""


def advance(e, idx, phase, n):
    """Next slot of a ring of n slots; the phase bit flips on wrap-around (%p7 is scratch)."""
    if n == 1:
        e(f"\txor.b32 {phase}, {phase}, 1;")
        return
    e(f"""\tadd.u32 {idx}, {idx}, 1;
\tsetp.eq.u32 %p7, {idx}, {n};
\t@%p7 mov.u32 {idx}, 0;
\t@%p7 xor.b32 {phase}, {phase}, 1;""")


def writes_elsewhere(argv, outdir):
    """Whether a generator run with these arguments writes nowhere or not into `outdir` (the
    committed files): --check, --list, or --outdir naming another directory."""
    if "--check" in argv or "--list" in argv:
        return True
    for i, a in enumerate(argv):
        d = a[len("--outdir="):] if a.startswith("--outdir=") else argv[i + 1] if a == "--outdir" and i + 1 < len(argv) else None
        if d is not None:
            return os.path.abspath(d) != os.path.abspath(outdir)
    return False


def main(tool, doc, instances, name_of, emit_of, outdir, subdir_of=None):
    """Writes every instantiation into outdir (or outdir/subdir_of(inst)), or --check /
    --list; returns the exit status (0; 1 --check found a difference; 2 cannot write)."""
    ap = argparse.ArgumentParser(prog=tool, description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the committed files, write nothing")
    ap.add_argument("--list", action="store_true", help="print the entry names")
    ap.add_argument("--outdir", default=outdir)
    args = ap.parse_args()
    if os.environ.get("FP4LR_GEN_WATCHDOG_NS") and not writes_elsewhere(sys.argv[1:], outdir):
        print(f"{tool}: FP4LR_GEN_WATCHDOG_NS builds a measurement bound: write it elsewhere "
              f"(--outdir DIR), never into {os.path.relpath(outdir)}", file=sys.stderr)
        return 2
    bad = 0
    for inst in instances:
        name = name_of(inst)
        if args.list:
            print(name)
            continue
        text = emit_of(inst)
        path = os.path.join(args.outdir, subdir_of(inst) if subdir_of else "", name + ".ptx")
        if args.check:
            try:
                with open(path) as f:
                    old = f.read()
            except OSError:
                old = None
            if old != text:
                print(f"{tool}: {path} differs from the generator's output (run tools/{tool}.py)", file=sys.stderr)
                bad = 1
        else:
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
            except OSError as e:
                print(f"{tool}: cannot write {path}: {e.strerror}", file=sys.stderr)
                return 2
    if args.check and not bad:
        print(f"{tool}: {len(instances)} kernels match the generator")
    return bad
