"""mbarrier arrives (one CTA, or the CTA and its peer) and the nanosleep spin of the staggered
starts."""
from . import kstate as K


def arrive(e, pred, addr, remote_tmp, remote=True):
    """One arrive on a local barrier; in a cluster (when `remote`) also on the peer's
    barrier at the same offset (mapa), with cluster-scope release, or (PAIR_CTA: every non-split
    pair unless the measurement flag tpaircl) the default release at CTA scope, PAIR_SCOPE_DOC /
    TPAIR_SCOPE_DOC."""
    if K.CL == 1 or not remote:
        e(f"\t@{pred} mbarrier.arrive.shared::cta.b64 _, [{addr}];")
    elif K.PAIR_CTA:
        e(f"""\t@{pred} mbarrier.arrive.shared::cta.b64 _, [{addr}];
\tmapa.shared::cluster.u32 {remote_tmp}, {addr}, %peer;
\t@{pred} mbarrier.arrive.shared::cluster.b64 _, [{remote_tmp}];""")
    else:
        e(f"""\t@{pred} mbarrier.arrive.release.cluster.shared::cta.b64 _, [{addr}];
\tmapa.shared::cluster.u32 {remote_tmp}, {addr}, %peer;
\t@{pred} mbarrier.arrive.release.cluster.shared::cluster.b64 _, [{remote_tmp}];""")


def spin_ns(e, label, ns, nap, t0, t1, pred):
    """Measurement flags' wait: spin on %globaltimer until `ns` nanoseconds have passed
    (nanosleep `nap` between reads); leaves `pred` false."""
    e(f"""\tmov.u64 {t0}, %globaltimer;
{label}:
\tnanosleep.u32 {nap};
\tmov.u64 {t1}, %globaltimer;
\tsub.u64 {t1}, {t1}, {t0};
\tsetp.lt.u64 {pred}, {t1}, {ns};
\t@{pred} bra {label};""")
