"""The committed instantiations and their entry names (each one kernel file under ptx/sm90a/)."""
from .flags import BK, BM, BN_NARROW


# The instantiations the host can pick: (format, family, cluster, main stages).
# The stage counts equal what host/budget.c solves for the tile (flags.BM x kstate.BN, a K stage
# of flags.BK; checked by
# tests/test_sm90a_instances.c); lower counts exist for the stage sweep.
INSTANCES = [
    # (format, family, cluster, main stages[, transform slots = 2]).  The solver's default
    # plans use 3 transform slots (_t3) where 3 main stages fit beside them (every rank:
    # r = 128 and up with 16-rank low-rank chunks); the 2-slot instances serve the stage
    # sweep, --stages 4 / 5 and the forced 2-slot ring.  The fused s2_t3 instances serve the
    # forced A/B of a deeper low-rank ring (--stages 2 --transform-slots 3: 2 x 32 or 4 x 16
    # ranks beside 2 main stages).
    ("nvfp4", "dense", 1, 3, 3),
    ("mxfp4", "dense", 1, 3, 3),
    ("nvfp4", "dense", 2, 3, 3),
    ("mxfp4", "dense", 2, 3, 3),
    ("nvfp4", "dense", 1, 4),
    ("mxfp4", "dense", 1, 5),
    ("nvfp4", "dense", 1, 2),
    ("nvfp4", "dense", 1, 3),
    ("nvfp4", "dense", 1, 1),
    ("nvfp4", "dense", 2, 4),
    ("mxfp4", "dense", 2, 5),
    # fused: the solver's stage counts for r = 0 (affine only) .. 1024, both formats
    ("nvfp4", "fused", 1, 4, 3),
    ("nvfp4", "fused", 1, 3, 3),
    ("mxfp4", "fused", 1, 4, 3),
    ("mxfp4", "fused", 1, 3, 3),
    ("nvfp4", "fused", 1, 2, 3),
    ("mxfp4", "fused", 1, 2, 3),
    ("nvfp4", "fused", 1, 4),
    ("nvfp4", "fused", 1, 3),
    ("nvfp4", "fused", 1, 2),
    ("nvfp4", "fused", 1, 1),
    ("mxfp4", "fused", 1, 5),
    ("mxfp4", "fused", 1, 4),
    ("mxfp4", "fused", 1, 3),
    # the fused pair: W and U multicast by rank 0, the same per-CTA budget as one CTA.
    # A pair's default plans keep 2 slots (host/budget.c); its _t3 instances serve the
    # forced A/B (fp4lr_plan_opts.force_transform_stages = 3).
    ("nvfp4", "fused", 2, 4, 3),
    ("nvfp4", "fused", 2, 3, 3),
    ("mxfp4", "fused", 2, 4, 3),
    ("mxfp4", "fused", 2, 3, 3),
    ("nvfp4", "fused", 2, 5),
    ("nvfp4", "fused", 2, 4),
    ("nvfp4", "fused", 2, 3),
    ("mxfp4", "fused", 2, 5),
    ("mxfp4", "fused", 2, 4),
    ("mxfp4", "fused", 2, 3),
    # W prepared (one CTA): dense, 5 W slots beside 3 main stages of A + SFA (NVFP4, 9216 B
    # each) or 4 (MXFP4, 8704 B) is what host/budget.c solves; nvfp4 s4_w4 and mxfp4 s3_w5
    # serve forced A/Bs (--stages 4 / 3)
    ("nvfp4", "dense", 1, 3, 5, True),
    ("mxfp4", "dense", 1, 4, 5, True),
    ("nvfp4", "dense", 1, 4, 4, True),
    ("mxfp4", "dense", 1, 3, 5, True),
    # W prepared, fused (one CTA): the solver's counts for r = 0 .. 1024 (at most 4 main
    # stages; what is left goes to the low-rank ring)
    ("nvfp4", "fused", 1, 4, 5, True),
    ("nvfp4", "fused", 1, 3, 5, True),
    ("nvfp4", "fused", 1, 4, 4, True),
    ("nvfp4", "fused", 1, 3, 4, True),
    ("mxfp4", "fused", 1, 4, 5, True),
    ("mxfp4", "fused", 1, 4, 4, True),
    ("mxfp4", "fused", 1, 3, 4, True),
    # W prepared, the pair (cluster 2, WPAIR): each CTA's budget is one CTA's, so the solver's
    # counts are the one-CTA _w kernels'; rank 0 multicasts each W chunk to both CTAs
    ("nvfp4", "dense", 2, 3, 5, True),
    ("mxfp4", "dense", 2, 4, 5, True),
    ("nvfp4", "fused", 2, 4, 5, True),
    ("nvfp4", "fused", 2, 3, 5, True),
    ("nvfp4", "fused", 2, 4, 4, True),
    ("nvfp4", "fused", 2, 3, 4, True),
    ("mxfp4", "fused", 2, 4, 5, True),
    ("mxfp4", "fused", 2, 4, 4, True),
    ("mxfp4", "fused", 2, 3, 4, True),
    # W converted in the kernel (_x, one CTA; fp4lr_wprep INLINE, AUTO from M = 1536): the converter
    # warps' 24 KiB staging leaves 4 W slots beside 4 main stages (host/budget.c); fused, 3
    # from r = 32 on (with the affine slices)
    ("nvfp4", "dense", 1, 4, 4, True, True),
    ("mxfp4", "dense", 1, 4, 4, True, True),
    ("nvfp4", "fused", 1, 4, 4, True, True),
    ("nvfp4", "fused", 1, 3, 4, True, True),
    ("mxfp4", "fused", 1, 4, 4, True, True),
    ("mxfp4", "fused", 1, 3, 4, True, True),
    # the same dense kernels storing their tile transposed (_yt): the host's swapped plan
    # (fp4lr_swap, AUTO for M < 1536 <= N) binds A and W exchanged, so that the operand converted
    # once per launch is A, and the kernel's C is Y^T
    ("nvfp4", "dense", 1, 4, 4, True, True, True),
    ("mxfp4", "dense", 1, 4, 4, True, True, True),
    ("nvfp4", "fused", 1, 4, 4, True, True, True),
    ("nvfp4", "fused", 1, 3, 4, True, True, True),
    ("mxfp4", "fused", 1, 4, 4, True, True, True),
    ("mxfp4", "fused", 1, 3, 4, True, True, True),
    # the narrow swapped tile (128 x 160, BN_NARROW): 20 KiB W slots leave the solver 4 main
    # stages and 5 slots at every rank (the low-rank ring takes what is left); the host takes it
    # where the 256-wide grid is under one wave and the 160-wide one fills at most one
    ("nvfp4", "dense", 1, 4, 5, True, True, True, BN_NARROW),
    ("mxfp4", "dense", 1, 4, 5, True, True, True, BN_NARROW),
    ("nvfp4", "fused", 1, 4, 5, True, True, True, BN_NARROW),
    ("mxfp4", "fused", 1, 4, 5, True, True, True, BN_NARROW),
    # the W-prepared kernels storing their tile transposed (_w<n>_yt): the swapped plan with
    # w_prep on (host/plan.c), the user's A (the small operand at M = 1024) prepared by its own
    # launch and the kernel launched as that launch's programmatic dependent; the solver's
    # counts for every rank (dense as the _w rows above; fused with two writeback buffers,
    # host/budget.c yt_prepared: r = 0 s3_w5, r >= 16 s4_w4, MXFP4 r = 48 s3_w4)
    ("nvfp4", "dense", 1, 3, 5, True, False, True),
    ("mxfp4", "dense", 1, 4, 5, True, False, True),
    ("nvfp4", "fused", 1, 3, 5, True, False, True),
    ("nvfp4", "fused", 1, 4, 4, True, False, True),
    ("mxfp4", "fused", 1, 3, 5, True, False, True),
    ("mxfp4", "fused", 1, 4, 4, True, False, True),
    ("mxfp4", "fused", 1, 3, 4, True, False, True),
    # ... and their narrow tile (128 x 160: 4 main stages beside 5 W slots of 20 KiB, but 3 in
    # NVFP4 fused from r = 112, whose low-rank chunk grows), where the 256-wide grid is under
    # one wave (sana-out)
    ("nvfp4", "dense", 1, 4, 5, True, False, True, BN_NARROW),
    ("mxfp4", "dense", 1, 4, 5, True, False, True, BN_NARROW),
    ("nvfp4", "fused", 1, 4, 5, True, False, True, BN_NARROW),
    ("nvfp4", "fused", 1, 3, 5, True, False, True, BN_NARROW),
    ("mxfp4", "fused", 1, 4, 5, True, False, True, BN_NARROW),
    # the W preparation kernels of the _w kernels, and (_pdl) the same kernels releasing their
    # programmatic dependents at their start (the _w<n>_yt launches)
    ("nvfp4", "wprep"),
    ("mxfp4", "wprep"),
    ("nvfp4", "wprep_pdl"),
    ("mxfp4", "wprep_pdl"),
]


def entry_name(fmt, family, cluster, stages, tslots=2, wpre=False, xconv=False, yt=False, bn=256):
    deep = f"_x{tslots}" if xconv else f"_w{tslots}" if wpre else "_t3" if tslots == 3 else ""
    return f"fp4lr_sm90a_{fmt}_{family}_m{BM * cluster}n{bn}k{BK}_c{cluster}_s{stages}{deep}{'_yt' if yt else ''}"


def prep_name(fmt, pdl=False):
    """The W preparation kernel of a format (emit_prep); pdl: the one that releases its
    programmatic dependents at its start."""
    return f"fp4lr_sm90a_{fmt}_wprep{'_pdl' if pdl else ''}"
