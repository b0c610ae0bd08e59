"""Append the rows an H200 session wrote (device tool's $OUT/timings_new.csv) to results/timings.csv, skipping
rows the log already holds (a warm device machine keeps its rows file between calls, so a later call's copy
repeats the earlier call's rows)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402


def key(row: dict) -> tuple:
    return tuple(sorted((k, v) for k, v in row.items() if v not in ("", None)))


for src in sys.argv[1:]:
    _, have = fj.read_rows(fj.RESULTS_CSV)
    seen = {key(r) for r in have}
    _, rows = fj.read_rows(Path(src))
    new = [r for r in rows if key(r) not in seen]
    fj.append_results(new)
    print(f"{src}: {len(new)} rows appended to {fj.RESULTS_CSV} ({len(rows) - len(new)} already there)")
