"""The `tline` measurement builds' event stamps (FP4LR_GEN_EXPERIMENT=tline)."""
from .flags import TLINE, TLINE_EVENTS


def tline(e, ev, thread, cond=None, dep=None):
    """TLINE: thread `thread` stores the time at event `ev` (a number, or (register,
    offset)); `cond` (a b32 register) must be nonzero as well.  `dep` (a b32 register): the
    store waits for its value (a load's result), so the time is taken after it arrived."""
    if not TLINE:
        return
    evx = ev if not isinstance(ev, tuple) else "%tle"
    pre = "" if not isinstance(ev, tuple) else f"\n\tadd.u32 %tle, {ev[0]}, {ev[1]};"
    cnd = "" if not cond else f"\n\tsetp.ne.u32 %tlq, {cond}, 0;\n\tand.pred %tlp, %tlp, %tlq;"
    if dep:
        cnd += f"\n\tsetp.ne.u32 %tlq, {dep}, 0xfffffffe;\n\tand.pred %tlp, %tlp, %tlq;"
    e(f"""\t{{   // tline: event {ev}
\t.reg .b64 %tla, %tlb, %tlt;
\t.reg .b32 %tlc, %tle;
\t.reg .pred %tlp, %tlq;
\tsetp.eq.u32 %tlp, %thr, {thread};{cnd}{pre}
\tmov.u64 %tlt, 0;
\t@%tlp mov.u64 %tlt, %globaltimer;          // predicated: read after `dep` arrived
\tmov.u32 %tlc, %ctaid.x;
\tmad.lo.u32 %tlc, %tlc, {TLINE_EVENTS}, {evx};
\tmul.wide.u32 %tla, %tlc, 8;
\tmov.u64 %tlb, fp4lr_tline;
\tadd.u64 %tla, %tla, %tlb;
\t@%tlp st.global.u64 [%tla], %tlt;
\t}}""")
