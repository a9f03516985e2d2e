"""results_jsonl.py -- reading fp4lr-bench's JSON Lines results (bench/results/*.jsonl).

One reader for the tools that take those files (results_table.py, plots.py): each record is a
JSON object on its own line.  A file that cannot be read, or a line that is not such an
object, raises ResultsError with a message naming the file and line; the tool prints it its own
way and exits with its own status.
"""
import json


class ResultsError(Exception):
    """Unusable results input; str() is the message (it names the file)."""


def read_records(path):
    """The file's records, in order (blank lines skipped)."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise ResultsError(f"{path}: cannot read ({e.strerror})")
    except UnicodeDecodeError:
        raise ResultsError(f"{path}: not text (expected fp4lr-bench JSON Lines)")
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
