"""Draw scripts/ablate.py's runs as a picture: for each logged ablation (lines `mask N <what> median X us`), the
time each build took against the full kernel's in the same run, one bar per mask. Reads the logs given (by default
the two runs of 2026-12-03 afternoon at the headline), writes results/ablation_<name>.png.
    python scripts/plot_ablation.py [--name wgmma_wide_2026-12-03] [--out PNG] [LOG ...]"""
import argparse
import re
import sys
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_LOGS = ["results/logs/2026-12-03_99b1738_ablate_ncu.log", "results/logs/2026-12-03_5273aae_dram_ablate.log"]
LINE = re.compile(r"^mask\s+(\d+)\s+(.*?)\s+median\s+([0-9.]+) us\s+\(p10 ([0-9.]+), p90 ([0-9.]+)\)")


def parse(log: Path) -> list[tuple[int, str, float, float, float]]:
    """The (mask, description, median, p10, p90) rows of one log, in order; an error if it has no full-kernel row."""
    rows = [(int(m[1]), m[2], float(m[3]), float(m[4]), float(m[5]))
            for m in map(LINE.match, log.read_text().splitlines()) if m]
    if not any(r[0] == 0 for r in rows):
        raise SystemExit(f"{log}: no 'mask 0 full kernel' line: not a scripts/ablate.py log")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("logs", nargs="*", default=DEFAULT_LOGS)
    ap.add_argument("--name", default="wgmma_wide_2026-12-03")
    ap.add_argument("--out", default=None, help="the picture's path (default results/ablation_<name>.png)")
    a = ap.parse_args()
    runs = [(Path(p).name.split("_")[1], parse(ROOT / p if not Path(p).is_absolute() else Path(p))) for p in a.logs]
    n = sum(len(r) for _, r in runs)
    fig, ax = plt.subplots(figsize=(12, 0.42 * n + 1.6))
    y, labels = 0, []
    for i, (commit, rows) in enumerate(runs):
        full = next(r[2] for r in rows if r[0] == 0)
        for mask, what, med, p10, p90 in rows:
            color = "0.55" if mask == 0 else ("tab:green" if med < full else "tab:red")
            ax.barh(y, med, xerr=[[med - p10], [p90 - med]], color=color, capsize=2)
            ax.text(p90 + 0.3, y, f"{med:.1f}", va="center", fontsize=8)
            labels.append(f"{commit}: {what}")
            y += 1
        if i + 1 < len(runs):
            ax.axhline(y - 0.5, color="k", lw=0.5)
    ax.set_yticks(range(y), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("us at the headline (bench's timer: L2 flushed, median, p10-p90 bars)")
    ax.set_xlim(0, 1.12 * max(r[4] for _, rows in runs for r in rows))
    ax.set_title("ModelNew's fp32 kernel (rung 09) with parts left out, by run (commit)\n"
                 "grey: the full kernel, green: faster than it, red: slower", fontsize=10)
    fig.tight_layout()
    out = Path(a.out) if a.out else ROOT / "results" / f"ablation_{a.name}.png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
