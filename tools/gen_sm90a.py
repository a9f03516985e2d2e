#!/usr/bin/env python3
"""gen_sm90a.py -- writes the sm_90a PTX kernels of fp4lr.

The kernels are hand-written PTX; this generator only emits the mechanical
parts (the 128-register accumulator lists, the unrolled wgmma and dequant
sequences, one label per wait loop) so that each instantiation (format x stage
count x cluster size) is one reproducible file.  Its output is committed under
ptx/sm90a/ and a test regenerates it and compares (``--check``).  The parts live in
tools/sm90a_ptx/, one module a concern (its __init__ lists them); this file is the
command line.

    tools/gen_sm90a.py            write every instantiation into ptx/sm90a/
    tools/gen_sm90a.py --check    regenerate in memory, compare with ptx/sm90a/
    tools/gen_sm90a.py --list     print the entry names
"""
import os
import sys

import ptxgen
from sm90a_ptx.flags import ASSIST, FAULT, OUTDIR, TW8
from sm90a_ptx.instances import INSTANCES, entry_name, prep_name
from sm90a_ptx.prep import emit_prep
from sm90a_ptx.kernel import emit_kernel


def main():
    def is_prep(inst):
        return inst[1] in ("wprep", "wprep_pdl")

    def name_of(inst):
        return prep_name(inst[0], inst[1] == "wprep_pdl") if is_prep(inst) else entry_name(*inst)

    def emit_of(inst):
        return emit_prep(inst[0], inst[1] == "wprep_pdl") if is_prep(inst) else emit_kernel(*inst)

    # the W-prepared kernels share the 8-warp consumers: the tw4 and consumer_assist
    # experiments build without them
    insts = [i for i in INSTANCES if not (len(i) > 5 and i[5]) or (TW8 and not ASSIST)]
    if FAULT and not ptxgen.writes_elsewhere(sys.argv[1:], OUTDIR):
        print(f"gen_sm90a: FP4LR_GEN_FAULT={FAULT} plants a fault: write it elsewhere (--outdir DIR), "
              f"never into {os.path.relpath(OUTDIR)}", file=sys.stderr)
        return 2
    return ptxgen.main("gen_sm90a", __doc__, insts, name_of, emit_of, OUTDIR)


if __name__ == "__main__":
    sys.exit(main())
