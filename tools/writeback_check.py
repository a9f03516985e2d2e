#!/usr/bin/env python3
"""writeback_check.py -- the writeback staging protocol of sm_90a kernels, checked from the PTX.

An sm_90a kernel's epilogue writes a tile of Y in chunks: each chunk is written into a staging
buffer in shared memory, and the warpgroup's thread 0 issues a bulk tensor store that reads the
buffer asynchronously (cp.async.bulk.tensor ... bulk_group; cp.async.bulk.commit_group).  Before
a chunk writes a buffer, the issuing thread must have waited (cp.async.bulk.wait_group.read N)
until no store still reading that buffer is outstanding, and the warpgroup must synchronise
(bar.sync) after that wait, before anyone writes.  The epilogue runs once a tile, so the
chunk 0 of a tile races the previous tile's last stores.

This tool reads the epilogue of each PTX file (from "// ---- epilogue" to "L_c_next:"), and
simulates the issuing thread's bulk groups over several consecutive tiles, independently of the
generator's arithmetic: the buffer of a chunk is the shared-memory offset its base address is
computed from (add.u32 %r53, %sbase, OFF), or, where the epilogue picks it at run time (XDBUF:
the WG's word read from shared memory, 0 or the converters' staging), every sequence of that
word over the tiles that the protocol allows (0 until the converters leave, then the other
value for good).  It reports every chunk that writes a buffer a store may still be reading.

    tools/writeback_check.py FILE.ptx [FILE.ptx ...]    exit 0: all safe; 1: a violation;
                                                         2: a file has no epilogue it can read

`--tiles N` sets the tiles simulated (default 4).
"""

import argparse
import itertools
import re
import sys

WAIT = re.compile(r"^\s*(@(!?)(%\w+)\s+)?cp\.async\.bulk\.wait_group\.read\s+(\d+)\s*;")
WAIT_ALL = re.compile(r"^\s*(@!?%\w+\s+)?cp\.async\.bulk\.wait_group\s+(\d+)\s*;")
BASE = re.compile(r"^\s*add\.u32\s+%r53,\s*%sbase,\s*(\d+)\s*;")
DYN_LOAD = re.compile(r"^\s*ld\.shared\.u32\s+%r53,\s*\[")
DYN_ADD_SBASE = re.compile(r"^\s*add\.u32\s+%r53,\s*%r53,\s*%sbase\s*;")
DYN_ADD_OFF = re.compile(r"^\s*add\.u32\s+%r53,\s*%r53,\s*(\d+)\s*;")
PXD = re.compile(r"^\s*setp\.eq\.and\.u32\s+%pxd,\s*%r53,\s*0,\s*%p2\s*;")
WORD = re.compile(r"^\s*@%p2\s+selp\.u32\s+%r54,\s*(\d+),\s*0,\s*%pxd\s*;")
STORE = re.compile(r"^\s*@%p2\s+cp\.async\.bulk\.tensor\.\d+d\.global\.shared::cta\.bulk_group\s+\[[^\]]*\],\s*\[%r53\]")
COMMIT = re.compile(r"^\s*@%p2\s+cp\.async\.bulk\.commit_group\s*;")
BAR = re.compile(r"^\s*bar\.sync\s")


class NoEpilogue(Exception):
    pass


def epilogue_ops(text):
    """The epilogue's operations, in program order, as tuples:
    ("wait", pred, n)   wait_group.read n, pred None (%p2: the issuing thread) or "pxd"
    ("waitall",)        wait_group 0
    ("bar",)            bar.sync
    ("base", off)       the chunk's buffer at off
    ("dyn", off)        the chunk's buffer at the WG's word + off
    ("word",)           the WG's word loaded (%pxd = word == 0 follows)
    ("store",)          a bulk store reading the current buffer
    ("commit",)         commit_group
    and the nonzero word value (XDBUF) or None."""
    lines = text.split("\n")
    try:
        start = next(i for i, ln in enumerate(lines) if "// ---- epilogue" in ln)
        end = next(i for i in range(start, len(lines)) if lines[i].startswith("L_c_next:"))
    except StopIteration:
        raise NoEpilogue("no epilogue (a '// ---- epilogue' comment followed by L_c_next:)")
    ops, word, pending_sbase = [], None, False
    for ln in lines[start:end]:
        code = ln.split("//")[0]
        m = WAIT.match(code)
        if m:
            pred = m.group(3)
            if pred not in ("%p2", "%pxd") or m.group(2):
                raise NoEpilogue(f"a wait under an unknown predicate: {ln.strip()}")
            ops.append(("wait", "pxd" if pred == "%pxd" else None, int(m.group(4))))
            continue
        m = WAIT_ALL.match(code)
        if m:
            if m.group(2) != "0":
                raise NoEpilogue(f"an unexpected wait: {ln.strip()}")
            ops.append(("waitall",))
            continue
        if BAR.match(code):
            ops.append(("bar",))
            continue
        m = BASE.match(code)
        if m:
            ops.append(("base", int(m.group(1))))
            continue
        if DYN_LOAD.match(code):
            ops.append(("word",))
            continue
        if DYN_ADD_SBASE.match(code):
            pending_sbase = True
            continue
        m = DYN_ADD_OFF.match(code)
        if m and pending_sbase:
            ops.append(("dyn", int(m.group(1))))
            pending_sbase = False
            continue
        m = WORD.match(code)
        if m:
            word = int(m.group(1))
            continue
        if STORE.match(code):
            ops.append(("store",))
            continue
        if COMMIT.match(code):
            ops.append(("commit",))
    if not any(o[0] == "store" for o in ops):
        raise NoEpilogue("the epilogue issues no bulk store the tool can read")
    if any(o[0] == "dyn" for o in ops) and word is None:
        raise NoEpilogue("a buffer picked at run time, but no word value (selp) found")
    return ops, word


def simulate(ops, words):
    """Run the epilogue once per tile with the WG's word words[t]; the list of violations."""
    out = []
    pending = []          # buffers read by committed, unretired groups, oldest first
    current = None        # the chunk's buffer
    uncommitted = []      # stores issued since the last commit
    waited_since_bar = False
    chunk_free = True     # the last wait of the chunk was followed by a bar.sync
    last_keep = None      # the groups the chunk's last wait left outstanding
    for t, w in enumerate(words):
        q = -1
        for op in ops:
            kind = op[0]
            if kind == "wait":
                if op[1] == "pxd" and w != 0:
                    continue                     # %pxd = word == 0
                keep = last_keep = op[2]
                if len(pending) > keep:
                    pending = pending[len(pending) - keep:]
                waited_since_bar = True
            elif kind == "waitall":
                pending = []
                last_keep = 0
                waited_since_bar = True
            elif kind == "bar":
                if waited_since_bar:
                    chunk_free = True
                waited_since_bar = False
            elif kind in ("base", "dyn"):
                q += 1
                current = op[1] + (w if kind == "dyn" else 0)
                if waited_since_bar or not chunk_free:
                    out.append(f"tile {t} chunk {q}: the buffer at {current} is written without a bar.sync "
                               "after the issuing thread's wait")
                if current in pending:
                    ahead = len(pending) - 1 - max(i for i, b in enumerate(pending) if b == current)
                    out.append(f"tile {t} chunk {q}: writes the buffer at {current} while a bulk store "
                               f"may still read it (its wait leaves {last_keep} group(s) outstanding; the "
                               f"store reading this buffer has {ahead} newer one(s), so the wait must leave "
                               f"at most {ahead})")
                chunk_free = False
            elif kind == "store":
                uncommitted.append(current)
            elif kind == "commit":
                pending.append(uncommitted[-1] if uncommitted else None)
                uncommitted = []
    return out


def word_sequences(word, tiles):
    """The WG's word over the tiles: 0 until the converters leave, then `word` for good."""
    if word is None:
        return [[0] * tiles]
    return [[0] * k + [word] * (tiles - k) for k in range(tiles + 1)]


def check_file(path, tiles):
    with open(path) as f:
        ops, word = epilogue_ops(f.read())
    problems = []
    for seq in word_sequences(word, tiles):
        for p in simulate(ops, seq):
            tag = f" (word per tile {seq})" if word is not None else ""
            if p + tag not in problems:
                problems.append(p + tag)
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("ptx", nargs="+")
    ap.add_argument("--tiles", type=int, default=4)
    a = ap.parse_args(argv)
    if a.tiles < 2:
        ap.error("--tiles must be 2 or more (the race is between consecutive tiles)")
    rc = 0
    for path in a.ptx:
        try:
            problems = check_file(path, a.tiles)
        except OSError as e:
            print(f"{path}: cannot read: {e.strerror}", file=sys.stderr)
            rc = 2
            continue
        except NoEpilogue as e:
            print(f"{path}: {e}", file=sys.stderr)
            rc = 2
            continue
        if problems:
            rc = max(rc, 1)
            for p in problems:
                print(f"{path}: {p}")
        else:
            print(f"{path}: ok")
    return rc


if __name__ == "__main__":
    sys.exit(main())
