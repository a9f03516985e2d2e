"""The watchdog's sm_90a side: every producer, transform and converter wait is bounded
(ptxgen.WATCHDOG_NS of polling, then `trap`), but the consumer warpgroups wait unbounded:
their K loop is at the register limit, and a spin's register made ptxas spill in the NVFP4
fused _x kernels.  So a producer thread watches them.  Each consumer WG arrives once on
mbarrier `cdone` when it leaves (after its last bulk store has read shared memory); a producer
thread then waits for `cdone`'s phase 0, bounded, before it leaves: the A producer (thread 0)
in the W-prepared, _x and ping-pong kernels, which issued the CTA's last main stage; all of
warp 0 in the transform kernels (whose cluster teardown barrier is .aligned), one of the
transform warps that take turns issuing the stages and convert W to the end.  A consumer that
never leaves (a stage that never lands, a walk that expects more than the producers issue, a
stream-K flag that never comes) so traps the launch instead of hanging it.  The watcher's wait
is short when nothing is wrong: a ring's depth of stages, the epilogue and a stream-K fix-up."""
from . import kstate as K
from .flags import WATCHDOG
from .layout import BAR_EXTRA

WATCH = "L_watch"


def cdone_off(L):
    """`cdone` at %bar_full + this: after the kernel's barriers, skbulk's (nbar), xdone (nbar +
    1) and the XDBUF words (nbar + 2), inside the barriers' 1024 bytes (host/budget.c's fixed
    area is 1024 bytes at least: FIXED_ALIGN)."""
    off = 8 * (L['nbar'] + BAR_EXTRA - 1)
    assert L['total'] >= L['bar'] + off + 8, "cdone past the kernel's map"
    assert (L['bar'] % 1024) + off + 8 <= 1024, "cdone past the fixed area's first 1024 bytes"
    if K.XCONV:
        assert L['xstage'] >= L['bar'] + off + 8
    return off


def cdone_init(L):
    """Thread 0's init of `cdone`: one arrive per consumer WG."""
    return f"\tmbarrier.init.shared::cta.b64 [%bar_full+{cdone_off(L)}], 2;   // cdone: the consumers left (watch.py)"


def consumers_leave(e, L):
    """A consumer WG's last act (its thread 0, %r43 = 0 as %p0, after cp.async.bulk.wait_group 0):
    arrive on `cdone`."""
    e(f"""\tadd.u32 %r10, %bar_full, {cdone_off(L)};
\t@%p0 mbarrier.arrive.shared::cta.b64 _, [%r10];   // cdone: this WG leaves (the watcher waits for it)""")


def emit_watch(e, L):
    """The watcher's code (reached by branch only, never falls through): wait, bounded, for
    phase 0 of `cdone`, then leave by L_exit."""
    assert e.watchdog
    e(f"""\t// ---- watchdog: a producer thread waits, bounded, for both consumer WGs to leave (watch.py) ----
{WATCH}:
\tadd.u32 %r11, %bar_full, {cdone_off(L)};""")
    e.wait("%r11", "0", "cdone")
    e("\tbra L_exit;")


def cdone_map(L):
    """`cdone` in the header's shared-memory map (after the barriers)."""
    return f", cdone (+{cdone_off(L)})" if WATCHDOG else ""


def cdone_doc(L):
    """`cdone` in the header's barrier protocol."""
    who = "thread 0 (the A producer)" if K.WPRE else "warp 0 (all lanes: the cluster teardown is .aligned)"
    return f"""
//   cdone     count 2  (at mbarriers + {cdone_off(L)}) one arrive per consumer WG when it leaves.  Waited
//                      by {who} before it leaves, bounded: the consumers wait
//                      unbounded, and this watchdog traps a launch whose consumers never leave
//                      (tools/sm90a_ptx/watch.py); every other wait traps after its own bound."""
