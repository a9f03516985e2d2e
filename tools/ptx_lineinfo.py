#!/usr/bin/env python3
"""ptx_lineinfo.py -- a PTX kernel with line information, for profiling.

    tools/ptx_lineinfo.py IN.ptx OUT.ptx [--source PATH]

Writes OUT.ptx: IN.ptx with a `.file 1 "PATH"` directive after `.address_size` and a
`.loc 1 N 1` before every instruction of the kernel bodies, N being that instruction's line
in IN.ptx (PATH defaults to IN.ptx as given).  Assembled with `ptxas -lineinfo`, the cubin maps
every SASS instruction back to a line of the generated kernel, whose comments say which role
and which barrier it belongs to; `ncu --import-source yes` then shows the stall samples per
PTX line (`--page source --print-source cuda,sass`).  The instructions themselves are not
touched, so the code ptxas emits is the same.

Exit status: 0; 1 when IN.ptx has no `.address_size` or no kernel body; 2 for bad arguments
or an unreadable / unwritable file.
"""
import argparse
import sys


def instruction(text):
    """True for a line that holds a PTX instruction (not a directive, label, brace or comment)."""
    code = text.split("//")[0].strip()
    return bool(code) and not code.endswith(":") and not code.startswith((".", "{", "}"))


def with_lineinfo(lines, source):
    """(new lines, instructions marked) or None when there is no .address_size or no body."""
    out, depth, marked, have_file = [], 0, 0, False
    for n, text in enumerate(lines, start=1):
        code = text.split("//")[0].strip()
        if depth > 0 and instruction(text):
            out.append(f"\t.loc 1 {n} 1")
            marked += 1
        out.append(text)
        if code.startswith(".address_size") and not have_file:
            out.append(f'.file 1 "{source}"')
            have_file = True
        depth += code.count("{") - code.count("}")
    if not have_file or marked == 0:
        return None
    return out, marked


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--source", help="the file name the line table records (default: INPUT)")
    try:
        a = ap.parse_args()
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        with open(a.input) as f:
            lines = f.read().split("\n")
    except (OSError, UnicodeDecodeError) as e:
        print(f"ptx_lineinfo: {a.input}: cannot read ({getattr(e, 'strerror', None) or e})", file=sys.stderr)
        return 2
    got = with_lineinfo(lines, a.source or a.input)
    if got is None:
        print(f"ptx_lineinfo: {a.input}: not a PTX kernel (needs .address_size and a body with "
              "instructions)", file=sys.stderr)
        return 1
    out, marked = got
    try:
        with open(a.output, "w") as f:
            f.write("\n".join(out))
    except OSError as e:
        print(f"ptx_lineinfo: {a.output}: cannot write ({e.strerror})", file=sys.stderr)
        return 2
    print(f"ptx_lineinfo: {a.output}: {marked} instructions with line information")
    return 0


if __name__ == "__main__":
    sys.exit(main())
