"""Append the rows an H200 session wrote (device tool's $OUT/timings_new.csv) to results/timings.csv."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

for src in sys.argv[1:]:
    header, rows = fj._read_rows(Path(src))
    fj.append_results(rows)
    print(f"{src}: {len(rows)} rows appended to {fj.RESULTS_CSV}")
