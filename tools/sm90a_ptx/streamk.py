"""Stream-K: a split tile's partial sums through the workspace, flags, and the owner's fix-up."""
from . import kstate as K
from .flags import EXPERIMENTS, SK_BATCH, SK_SLOT, TRANSFORM_THREADS
from .walk import CUR, sk_consts, unit_bounds


SK_PARAMS = """\t.param .u64 p_sk_ws,                 // stream-K workspace (partial sums, flags) or 0: every tile whole
\t.param .u32 p_sk_dp_tiles,           // tiles walked whole; the rest are split by K iterations
\t.param .u32 p_sk_q,                  // split iterations per cluster (T = G*q + r)
\t.param .u32 p_sk_r,                  // clusters 0..r-1 take q + 1
\t.param .u32 p_sk_epoch               // this launch's flag value (changes every launch)
"""


def emit_stream_k_fixup(e, L):
    """After a unit's K loop.  A unit that does not start its tile (kb > 0) is a
    contributor: it stores its raw sums into its cluster rank's partial slot, then sets the
    slot's flag to the launch epoch (release) and goes to its next unit.  A unit that starts
    the tile but does not reach its end is the owner: it waits for the flags of the clusters
    b+1, b+2, ... whose ranges start inside the tile (they did that part first in their
    ranges, the owner does its part last in its range, so nobody waits for a waiter) and adds
    their partials in that order (deterministic), then finishes the tile as usual.
    Workspace: G*CL slots of 128 KiB (thread t's accumulator i at slot + (i/4)*4096 +
    16t + 4(i%4): coalesced), then G*CL u32 flags."""
    skph_init = ("\tmov.u32 %skph, 0;                           // skbulk: this is the CTA's last unit, so once "
                 "a launch\n" if K.SKBULK_ON else "")
    # sknofix (timing only, wrong results by design): no partial is stored, waited for or added,
    # to bound what the fix-up costs (sana-qkv 12-14 %, sana-mlp 6 %, flux-out 5 % on an H100:
    # bench/results/experiments/README.md, "What the stream-K fix-up costs")
    # skfixc: no hand-off, and the owner adds its peers' slots without waiting for their flags;
    # skfixo: the hand-off alone, no fix-up; skrelax (below): the flag published relaxed
    nofix_c = "sknofix" in EXPERIMENTS or "skfixc" in EXPERIMENTS
    nofix_o = "sknofix" in EXPERIMENTS or "skfixo" in EXPERIMENTS
    skip_handoff = "\tbra L_c_next;                               // sknofix: no hand-off\n" if nofix_c else ""
    skip_fixup = "\tbra L_sk_done;                              // sknofix: no fix-up\n" if nofix_o else ""
    init_skip = ("\tbra L_sk_done;                              // skinit: the owner added its peers' sums "
                 "before its K loop\n" if K.SKINIT_ON else "")
    e("\t// ---- stream-K: a unit that does not start its tile hands its sums to the tile's owner ----")
    sk_consts(e)
    unit_bounds(e, CUR)
    e(f"""\tsetp.eq.u32 %psk, %kb, 0;
\t@%psk bra L_sk_owner;
{skip_handoff}\tld.param.u32 %skep, [p_sk_epoch];
\tmad.lo.u32 %r10, %tile0, {K.CL}, %crank;       // this cluster rank's slot
\tsub.u32 %r11, %thr, {TRANSFORM_THREADS};                    // consumer thread 0..255
\tmul.wide.u32 %rd6, %r10, {SK_SLOT};
\tadd.s64 %rd6, %rd6, %skws;
\tmul.wide.u32 %rd7, %r11, 16;
\tadd.s64 %rd6, %rd6, %rd7;""")
    for j in range(K.BN // 8):
        e(f"\tst.global.v4.f32 [%rd6+{4096 * j}], {{%acc{4*j}, %acc{4*j+1}, %acc{4*j+2}, %acc{4*j+3}}};")
    e(f"""\t// every consumer thread stored: one release of the flag publishes the slot
\tbar.sync 4, 256;
\tsetp.eq.u32 %psk, %r11, 0;
\tmul.lo.u32 %r12, %tstride, {K.CL};
\tmul.wide.u32 %rd8, %r12, {SK_SLOT};
\tadd.s64 %rd8, %rd8, %skws;                  // flags follow the slots
\tmul.wide.u32 %rd9, %r10, 4;
\tadd.s64 %rd8, %rd8, %rd9;
\t@%psk {"st.relaxed.gpu" if "skrelax" in EXPERIMENTS else "st.release.gpu"}.global.u32 [%rd8], %skep;
\tbra L_c_next;
L_sk_owner:
{skip_fixup}{init_skip}\tsetp.eq.u32 %psk, %ke, %nks;
\t@%psk bra L_sk_done;                        // the whole tile: nothing to add""")
    if not K.SKINIT_ON:
        if skph_init:
            e(skph_init.rstrip("\n"))
        owner_adds(e, L, "")
    e("""L_sk_done:
\t// the flag waits may have split the warps: reconverge before the .aligned operations
\tbar.warp.sync 0xffffffff;""")


def emit_stream_k_owner_init(e, L):
    """skinit (K.SKINIT_ON), at the start of a unit before its K loop: a unit that starts its
    tile but does not reach its end (the owner) starts its accumulators from its peers'
    partials and sets %pacc, so that its first wgmma accumulates onto them.  With skorder
    those partials were published long before (each peer's piece came first in its range),
    and the owners' reads fall at their pieces' starts, spread over the launch, instead of
    all at its end."""
    e("""\t// ---- skinit: a split tile's owner starts from its peers' partial sums ----
\tsetp.ne.u32 %pacc, 0, 0;                    // first wgmma of the unit overwrites
\tsetp.ne.u32 %psk, %kb, 0;
\t@%psk bra L_sk_init_skip;                  // a contributor: from zero
\tsetp.eq.u32 %psk, %ke, %nks;
\t@%psk bra L_sk_init_skip;                  // a whole tile: from zero""")
    sk_consts(e)
    e("\tsetp.ge.u32 %psk, %tile, %skdp;\n\t@!%psk bra L_sk_init_skip;             // a data-parallel tile")
    for i in range(K.BN // 2):
        e(f"\tmov.f32 %acc{i}, 0f00000000;")
    owner_adds(e, L, "_i")
    e("""L_sk_done_i:
\tbar.warp.sync 0xffffffff;                   // (the flag waits may have split the warps)
\tsetp.eq.u32 %pacc, 0, 0;                    // the first wgmma accumulates onto the partials
L_sk_init_skip:""")


def owner_adds(e, L, x):
    """A split tile's owner adds the partials of the clusters b+1, b+2, ... whose ranges start
    inside its tile, in that order (deterministic), each once its flag carries the launch
    epoch; then goes to L_sk_done{x}.  Labels end in x (the fix-up after the K loop: "",
    skinit's before it: "_i").  Needs sk_consts and the unit's %tile."""
    skip_wait = "\tbra L_sk_ready{x};                             // skfixc: no flag wait\n" if "skfixc" in EXPERIMENTS else ""
    skip_wait = skip_wait.format(x=x)
    e(f"""\tld.param.u32 %skep, [p_sk_epoch];
\tsub.u32 %r12, %tile, %skdp;
\tadd.u32 %r12, %r12, 1;
\tmul.lo.u32 %r12, %r12, %nks;                // split iteration where the tile ends
\tadd.u32 %r13, %tile0, 1;                    // b' = the next cluster
\tsub.u32 %r11, %thr, {TRANSFORM_THREADS};
\tmul.wide.u32 %rd9, %r11, 16;
\tld.param.u32 %r17, [p_sk_q];
\tld.param.u32 %r18, [p_sk_r];
\tmul.lo.u32 %r15, %tstride, {K.CL};
\tmul.wide.u32 %rd10, %r15, {SK_SLOT};
\tadd.s64 %rd10, %rd10, %skws;                // flags
L_sk_peer{x}:
\tsetp.ge.u32 %psk, %r13, %tstride;
\t@%psk bra L_sk_done{x};
\tmin.u32 %r14, %r13, %r18;
\tmad.lo.u32 %r14, %r13, %r17, %r14;          // where b' starts: b'*q + min(b', r)
\tsetp.ge.u32 %psk, %r14, %r12;
\t@%psk bra L_sk_done{x};                        // past the tile: no more partials
\tsetp.eq.u32 %psk, %r17, 0;
\tsetp.ge.and.u32 %psk, %r13, %r18, %psk;
\t@%psk bra L_sk_next_peer{x};                   // an empty range (q = 0): no partial
\tmad.lo.u32 %r10, %r13, {K.CL}, %crank;
\tmul.wide.u32 %rd8, %r10, 4;
\tadd.s64 %rd8, %rd8, %rd10;
{skip_wait}L_sk_spin{x}:
\tld.acquire.gpu.global.u32 %r16, [%rd8];
\tsetp.eq.u32 %psk, %r16, %skep;
\t@%psk bra L_sk_ready{x};
\tnanosleep.u32 100;
\tbra L_sk_spin{x};
L_sk_ready{x}:""")
    if K.SKBULK_ON:
        nb = 4
        e(f"""\t// skbulk: the peer's partial comes by bulk copies into the W ring (idle: the last unit)
\tfence.proxy.async.shared::cta;              // a previous partial's ld.shared before the copy overwrites it
\tbar.sync 4, 256;                            // both WGs' wgmmas (wait_group 0) and reads are done
\tadd.u32 %r15, %bar_full, {8 * L['nbar']};
\tadd.u32 %r14, %sbase, {L['t']};
\tsetp.eq.u32 %psk, %r11, 0;
\tmul.wide.u32 %rd6, %r10, {SK_SLOT};
\tadd.s64 %rd6, %rd6, %skws;
\t@%psk fence.proxy.async.global;             // the peer's stores (acquired above) before async-proxy reads
\t@%psk mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r15], {SK_SLOT};""")
        for i in range(nb):
            e(f"\t@%psk cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r14+{i * SK_SLOT // nb}], "
              f"[%rd6+{i * SK_SLOT // nb}], {SK_SLOT // nb}, [%r15];")
        e.wait("%r15", "%skph", "skbulk")
        e("""\txor.b32 %skph, %skph, 1;
\tshl.b32 %r16, %r11, 4;
\tadd.u32 %r16, %r16, %r14;                  // this thread's 16 bytes of each 4 KiB row""")
        for b in range(32 // 4):
            for j in range(4):
                jj = 4 * b + j
                e(f"\tld.shared.v4.f32 {{%skf{4*j}, %skf{4*j+1}, %skf{4*j+2}, %skf{4*j+3}}}, [%r16+{4096 * jj}];")
            for i in range(16):
                e(f"\tadd.f32 %acc{16*b+i}, %acc{16*b+i}, %skf{i};")
    else:
        e(f"""\tmul.wide.u32 %rd6, %r10, {SK_SLOT};
\tadd.s64 %rd6, %rd6, %skws;
\tadd.s64 %rd6, %rd6, %rd9;""")
        for b in range(K.BN // 8 // SK_BATCH):
            for j in range(SK_BATCH):
                jj = SK_BATCH * b + j
                e(f"\tld.global.v4.f32 {{%skf{4*j}, %skf{4*j+1}, %skf{4*j+2}, %skf{4*j+3}}}, [%rd6+{4096 * jj}];")
            for i in range(4 * SK_BATCH):
                e(f"\tadd.f32 %acc{4*SK_BATCH*b+i}, %acc{4*SK_BATCH*b+i}, %skf{i};")
    e(f"""L_sk_next_peer{x}:
\tadd.u32 %r13, %r13, 1;
\tbra L_sk_peer{x};""")
