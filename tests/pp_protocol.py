#!/usr/bin/env python3
"""pp_protocol.py -- the ping-pong kernels' ring and turn protocol, model-checked on the CPU.

tools/gen_sm90a_pp.py's kernels share two rings (main stages: full/empty; W chunks:
tfull/tempty) between one producer each and two consumer warpgroups that own alternate work
units, and order the consumers with a turn (named barriers 5 / 6).  This is a model of that
protocol, not of the PTX: every role is a Python generator that does what the kernel's header
comment says, in the same order, under mbarrier semantics (a phase completes when its arrivals
and bytes are in; try_wait.parity P passes when the barrier's current phase parity differs from
P, so a wait for a lap's fill also passes while the fill of the lap before is outstanding), with the bulk copies completing at random
later times and the roles interleaved at random.  It checks that every wait a consumer passes
finds the fill it wants (the stage / chunk of its own unit, not an older lap's), that no fill
overwrites a slot its owner has not released, that nothing deadlocks, and that every turn arrive
is matched by a sync before the CTA ends, for 0-7 units a CTA, 1-5 stages a unit and the built
ring sizes (gen_sm90a_pp.INSTANCES).

    tests/pp_protocol.py [--noturn] [--seeds N]

--noturn models FP4LR_GEN_PP_FAULT=noturn (no turn barrier): the check must find a violation.
Exit status: 0 the protocol held in every run (with --noturn: a violation was found, as it
must); 1 otherwise; 2 bad arguments.
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))


class Violation(Exception):
    pass


class MBarrier:
    """count arrivals (and expect_tx bytes, modelled as one pending completion) per phase."""

    def __init__(self, count):
        self.count, self.arrived, self.pending, self.completed = count, 0, 0, 0

    def arrive(self, expect_tx=False):
        self.arrived += 1
        if expect_tx:
            self.pending += 1
        self._maybe_complete()

    def complete_tx(self):
        self.pending -= 1
        self._maybe_complete()

    def _maybe_complete(self):
        if self.arrived == self.count and self.pending == 0:
            self.completed += 1
            self.arrived = 0

    def passes(self, parity):
        """mbarrier.try_wait.parity: the current (incomplete) phase's parity differs from `parity`."""
        return (self.completed & 1) != parity


def run(units, nks, stages, slots, turn, rng):
    full = [MBarrier(1) for _ in range(stages)]
    empty = [MBarrier(1) for _ in range(stages)]     # the owning consumer's warps: one arrival here
    tfull = [MBarrier(1) for _ in range(slots)]
    tempty = [MBarrier(1) for _ in range(slots)]
    stage_data = [None] * stages      # which main-ring position a stage holds
    slot_data = [None] * slots        # which W-ring position a slot holds
    turns = [[0, 0], [0, 0]]          # per consumer's barrier: arrivals, syncs
    copies = []                       # bulk copies in flight: (barrier, ring, index, position)

    def wait(bar, parity):
        while not bar.passes(parity):
            yield

    def producer(ring, bars_full, bars_empty, n, per_stage):
        data = stage_data if ring == "main" else slot_data
        for pos in range(units * nks * per_stage):
            i, lap = pos % n, pos // n
            yield from wait(bars_empty[i], (lap & 1) ^ 1)      # the first lap passes
            bars_full[i].arrive(expect_tx=True)
            copies.append((bars_full[i], data, i, pos))
            yield

    def consumer(c):
        for u in range(c, units, 2):
            if turn and u > 0:                                  # the other consumer's unit u - 1
                while turns[1 - c][0] <= turns[1 - c][1]:
                    yield
                turns[1 - c][1] += 1
            prev = None                                          # the chunk whose wgmmas may run
            for k in range(nks):
                g = u * nks + k
                s = g % stages
                yield from wait(full[s], (g // stages) & 1)
                if stage_data[s] != g:
                    raise Violation(f"consumer {c} unit {u}: stage {s} holds position {stage_data[s]}, "
                                    f"wanted {g}")
                for h in range(2):
                    q = 2 * g + h
                    t = q % slots
                    yield from wait(tfull[t], (q // slots) & 1)
                    if slot_data[t] != q:
                        raise Violation(f"consumer {c} unit {u}: W slot {t} holds position {slot_data[t]}, "
                                        f"wanted {q}")
                    yield                                        # wgmmas issued on slot t
                    if prev is not None:                         # wait_group 1: the previous chunk done
                        pt, pq = prev
                        if slot_data[pt] != pq:
                            raise Violation(f"consumer {c}: W slot {pt} overwritten before its release")
                        tempty[pt].arrive()
                    prev = (t, q)
                    if h == 0:                                   # A of both chunks read: free the stage
                        if stage_data[s] != g:
                            raise Violation(f"consumer {c}: stage {s} overwritten before its release")
                        empty[s].arrive()
                    yield
            if turn and u + 1 < units:                           # every wait of unit u done
                turns[c][0] += 1
                if turns[c][0] - turns[c][1] > 1:
                    raise Violation(f"consumer {c}: a second turn arrive before the first was synced")
            pt, pq = prev                                        # wait_group 0: the last chunk done
            if slot_data[pt] != pq:
                raise Violation(f"consumer {c}: W slot {pt} overwritten before its release")
            tempty[pt].arrive()
            for _ in range(rng.randrange(3)):                    # the epilogue
                yield

    actors = [producer("main", full, empty, stages, 1), producer("w", tfull, tempty, slots, 2),
              consumer(0), consumer(1)]
    stalled = 0
    while actors or copies:
        if copies and (not actors or rng.random() < 0.3):       # a bulk copy lands
            bar, data, i, pos = copies.pop(rng.randrange(len(copies)))
            data[i] = pos
            bar.complete_tx()
            stalled = 0
            continue
        a = rng.choice(actors)
        before = [(b.completed, b.arrived, b.pending) for b in full + empty + tfull + tempty]
        try:
            next(a)
        except StopIteration:
            actors.remove(a)
            stalled = 0
            continue
        after = [(b.completed, b.arrived, b.pending) for b in full + empty + tfull + tempty]
        stalled = 0 if before != after or copies else stalled + 1
        if stalled > 2000:
            raise Violation("deadlock: no role can move and no copy is in flight")
    for c in range(2):
        if turns[c][0] != turns[c][1]:
            raise Violation(f"consumer {c}'s turn barrier: {turns[c][0]} arrives, {turns[c][1]} syncs at exit")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--noturn", action="store_true", help="model the planted fault (no turn barrier)")
    ap.add_argument("--seeds", type=int, default=12, help="random interleavings per configuration (default 12)")
    args = ap.parse_args()
    if args.seeds < 1:
        ap.error("--seeds must be >= 1")
    import gen_sm90a_pp
    rings = sorted({(s, w) for _, _, s, w in gen_sm90a_pp.INSTANCES})
    found, runs = None, 0
    for stages, slots in rings:
        for units in range(8):
            for nks in range(1, 6):
                for seed in range(args.seeds):
                    runs += 1
                    try:
                        run(units, nks, stages, slots, not args.noturn, random.Random(seed * 7919 + units * 31 + nks))
                    except Violation as e:
                        where = f"s{stages}_w{slots}, {units} units of {nks} stages, seed {seed}: {e}"
                        if not args.noturn:
                            print(f"pp_protocol: VIOLATION {where}")
                            return 1
                        found = found or where
    if args.noturn:
        if found:
            print(f"pp_protocol: without the turn, as expected, a violation: {found}")
            return 0
        print(f"pp_protocol: without the turn no violation was found in {runs} runs: the model cannot fail")
        return 1
    print(f"pp_protocol: the protocol held in {runs} runs (rings {rings}, 0-7 units, 1-5 stages a unit)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
