"""results_jsonl.py -- reading fp4lr-bench's JSON Lines results (bench/results/*.jsonl).

One reader for the tools that take those files (results_table.py, plots.py): each record is a
JSON object on its own line.  A name ending in .gz is read through gzip (the records of days
that are over are kept compressed: bench/README.md).  A file that cannot be read, or a line
that is not such an object, raises ResultsError with a message naming the file and line; the
tool prints it its own way and exits with its own status.
"""
import glob
import gzip
import json
import os
import re


class ResultsError(Exception):
    """Unusable results input; str() is the message (it names the file)."""


def read_records(path):
    """The file's records, in order (blank lines skipped)."""
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rt") as f:
                lines = f.read().splitlines()
        else:
            with open(path) as f:
                lines = f.read().splitlines()
    except OSError as e:
        # gzip's own errors (not gzip data, a truncated stream) are OSErrors without strerror
        raise ResultsError(f"{path}: cannot read ({e.strerror or e})")
    except (UnicodeDecodeError, EOFError) as e:
        what = "not text" if isinstance(e, UnicodeDecodeError) else "a truncated gzip stream"
        raise ResultsError(f"{path}: {what} (expected fp4lr-bench JSON Lines)")
    records = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as e:
            raise ResultsError(f"{path}: line {n} is not JSON ({e}); expected fp4lr-bench JSON Lines, "
                               "one record a line")
        if not isinstance(rec, dict):
            raise ResultsError(f"{path}: line {n} is a JSON {type(rec).__name__}, not a record; expected "
                               "fp4lr-bench JSON Lines, one record object a line")
        records.append(rec)
    return records


def results_files(root):
    """root/bench/results/<device>-<date>.jsonl and the closed days' .jsonl.gz, oldest first: by
    the date in the name, then by modification time (a fresh clone gives every file about the
    same time, so the name decides)."""
    def key(path):
        m = re.search(r"(\d{4}-\d{2}-\d{2})\.jsonl(\.gz)?$", path)
        return (m.group(1) if m else "", os.path.getmtime(path))
    where = os.path.join(root, "bench", "results")
    return sorted(glob.glob(os.path.join(where, "*.jsonl")) + glob.glob(os.path.join(where, "*.jsonl.gz")), key=key)
