#!/usr/bin/env python3
"""samples_clock.py -- how a benchmark run's launches spread, and what the card's clock did.

Reads the per-launch file of `fp4lr-bench --samples FILE` and, optionally, a clock log that
nvidia-smi wrote beside the run, e.g.

    nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw.instant,clocks_event_reasons.active \\
               --format=csv,nounits -lms 20 > smi.csv &

and prints one fixed-width line per (shape, variant): launches, median / min / p90 time, the
median's excess over the minimum, and with the log the SM clock over each launch (the mean of
the log's samples inside it, or the nearest one), the share of launches that ran while the
driver capped the clock for power (clocks event reason 0x4, SW power cap), the correlation of
launch time with clock, and the median launch in millions of SM cycles (time x clock: a row
whose cycles stay put while its time moves is following the clock).

    tools/samples_clock.py SAMPLES [SMI_LOG] [--skip N]

SAMPLES and SMI_LOG may be gzip files (.gz).  The log's timestamps are read as UTC (the device
machine's clock); the samples' start times are Unix seconds.  --skip N leaves out the first N
launches of every round (a steady-state view: the clock settles after a round starts).

Exit status: 0 ok; 2 bad arguments or unusable input, the message naming the file and ending
with the rule: [SAMPLES_CLOCK_READ] a file that cannot be read, [SAMPLES_CLOCK_FORMAT] a
SAMPLES file without fp4lr-bench's sample columns, [SAMPLES_CLOCK_LOG] a log without timestamp
and SM clock columns, [SAMPLES_CLOCK_SKIP] a negative --skip or no launch left after it.
"""
import argparse
import bisect
import csv
import datetime
import gzip
import io
import math
import signal
import statistics
import sys

SAMPLE_COLUMNS = ("shape", "variant", "round", "launch", "ms", "start_unix_s")
POWER_CAP = 0x4  # clocks_event_reasons: SW power cap


class InputError(Exception):
    """Unusable input: rule names the check (in brackets after the message), str() the message."""

    def __init__(self, rule, msg):
        super().__init__(msg)
        self.rule = rule


def read_csv(path):
    try:
        raw = open(path, "rb").read()
    except OSError as e:
        raise InputError("SAMPLES_CLOCK_READ", f"{path}: cannot read ({e.strerror})")
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise InputError("SAMPLES_CLOCK_READ", f"{path}: a broken gzip file ({e})")
    try:
        text = raw.decode()
    except UnicodeDecodeError:
        raise InputError("SAMPLES_CLOCK_READ", f"{path}: not text (expected CSV)")
    return list(csv.reader(io.StringIO(text)))


def read_samples(path, skip):
    rows = read_csv(path)
    if not rows:
        raise InputError("SAMPLES_CLOCK_FORMAT", f"{path}: empty (expected fp4lr-bench --samples CSV)")
    head = [h.strip() for h in rows[0]]
    missing = [c for c in SAMPLE_COLUMNS if c not in head]
    if missing:
        raise InputError("SAMPLES_CLOCK_FORMAT", f"{path}: no column {', '.join(missing)} (expected fp4lr-bench --samples CSV)")
    col = {c: head.index(c) for c in SAMPLE_COLUMNS}
    groups = {}
    for n, r in enumerate(rows[1:], 2):
        if not r:
            continue
        try:
            launch = int(r[col["launch"]])
            ms = float(r[col["ms"]])
            start = float(r[col["start_unix_s"]]) if r[col["start_unix_s"]].strip() else None
        except (ValueError, IndexError):
            raise InputError("SAMPLES_CLOCK_FORMAT", f"{path}: line {n} is not a sample line")
        if launch < skip:
            continue
        groups.setdefault((r[col["shape"]], r[col["variant"]]), []).append((ms, start))
    if not groups:
        raise InputError("SAMPLES_CLOCK_SKIP", f"{path}: no launch left" + (f" after --skip {skip}" if skip else ""))
    return groups


def find_column(head, *names):
    for i, h in enumerate(head):
        key = h.strip().split(" [")[0]
        if key in names:
            return i
    return None


def read_log(path):
    rows = read_csv(path)
    if not rows:
        raise InputError("SAMPLES_CLOCK_LOG", f"{path}: empty (expected an nvidia-smi --format=csv log)")
    head = rows[0]
    t = find_column(head, "timestamp")
    clk = find_column(head, "clocks.current.sm", "clocks.sm")
    why = find_column(head, "clocks_event_reasons.active", "clocks_throttle_reasons.active")
    watts = find_column(head, "power.draw.instant", "power.draw")
    if t is None or clk is None:
        raise InputError("SAMPLES_CLOCK_LOG", f"{path}: no timestamp and SM clock columns (expected nvidia-smi "
                         "--query-gpu=timestamp,clocks.sm,... --format=csv)")
    log = []
    for r in rows[1:]:
        try:
            when = datetime.datetime.strptime(r[t].strip(), "%Y/%m/%d %H:%M:%S.%f")
            mhz = float(r[clk])
            reasons = int(r[why], 16) if why is not None else None
            power = float(r[watts]) if watts is not None else None
        except (ValueError, IndexError):
            continue  # nvidia-smi writes a partial last line when it is killed
        log.append((when.replace(tzinfo=datetime.timezone.utc).timestamp(), mhz, reasons, power))
    if not log:
        raise InputError("SAMPLES_CLOCK_LOG", f"{path}: no sample line")
    log.sort()
    return log


def clock_over(log, times, start, ms):
    """The mean clock, whether any sample showed the power cap, and the mean power (None
    without that column) over [start, start + ms]."""
    end = start + ms * 1e-3
    i, j = bisect.bisect_left(times, start), bisect.bisect_right(times, end)
    inside = log[i:j]
    if not inside:  # shorter than the log's interval: the nearest sample
        k = min(range(max(i - 1, 0), min(i + 1, len(log))), key=lambda k: abs(times[k] - start))
        inside = [log[k]]
    mhz = sum(s[1] for s in inside) / len(inside)
    capped = None if inside[0][2] is None else any(s[2] & POWER_CAP for s in inside)
    power = None if inside[0][3] is None else sum(s[3] for s in inside) / len(inside)
    return mhz, capped, power


def correlation(xs, ys):
    if len(xs) < 2:
        return math.nan
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sx = math.sqrt(sum((x - mx) ** 2 for x in xs))
    sy = math.sqrt(sum((y - my) ** 2 for y in ys))
    if sx == 0 or sy == 0:
        return math.nan
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / (sx * sy)


def fmt(x, spec):
    """x in spec ("8.0f"), or "-" as wide when unknown."""
    width = int(spec.lstrip("+").split(".")[0])
    return "-".rjust(width) if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("samples")
    ap.add_argument("smi_log", nargs="?")
    ap.add_argument("--skip", type=int, default=0, help="leave out the first N launches of every round")
    a = ap.parse_args(argv)
    if a.skip < 0:
        print(f"samples_clock: --skip {a.skip}: expected N >= 0 [SAMPLES_CLOCK_SKIP]", file=sys.stderr)
        return 2
    try:
        groups = read_samples(a.samples, a.skip)
        log = read_log(a.smi_log) if a.smi_log else None
    except InputError as e:
        print(f"samples_clock: {e} [{e.rule}]", file=sys.stderr)
        return 2
    times = [s[0] for s in log] if log else None
    print(f"{'shape':<16}{'variant':<22}{'launches':>8}{'median_ms':>11}{'min_ms':>10}{'p90_ms':>10}"
          f"{'med/min':>8}{'sm_MHz':>8}{'capped':>8}{'corr':>7}{'Mcycles':>9}{'W':>6}{'mJ':>8}")
    all_capped = all_known = 0
    for (shape, variant), v in groups.items():
        ms = sorted(x[0] for x in v)
        med, lo = statistics.median(ms), ms[0]
        p90 = ms[min(len(ms) * 9 // 10, len(ms) - 1)]
        mhz = capped = corr = mcyc = watts = mj = None
        if log:
            timed = [(x[0],) + clock_over(log, times, x[1], x[0]) for x in v if x[1] is not None]
            if timed:
                mhz = statistics.median(t[1] for t in timed)
                known = [t[2] for t in timed if t[2] is not None]
                if known:
                    capped = sum(known) / len(known)
                    all_capped += sum(known)
                    all_known += len(known)
                corr = correlation([t[0] for t in timed], [t[1] for t in timed])
                mcyc = statistics.median(t[0] * t[1] * 1e-3 for t in timed)
                if timed[0][3] is not None:
                    watts = statistics.median(t[3] for t in timed)
                    mj = statistics.median(t[0] * t[3] for t in timed)
        print(f"{shape:<16}{variant:<22}{len(ms):>8}{med:>11.4f}{lo:>10.4f}{p90:>10.4f}{med / lo:>8.3f}"
              f"{fmt(mhz, '8.0f')}{fmt(None if capped is None else 100 * capped, '7.0f')}"
              f"{'%' if capped is not None else ' '}{fmt(corr, '+7.2f')}{fmt(mcyc, '9.3f')}{fmt(watts, '6.0f')}"
              f"{fmt(mj, '8.1f')}")
    if all_known:
        print(f"launches under the power cap: {all_capped} of {all_known} ({100 * all_capped / all_known:.0f} %)")
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output, not an error
    sys.exit(main(sys.argv[1:]))
