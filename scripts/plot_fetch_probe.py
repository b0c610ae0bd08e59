"""Draw scripts/x_fetch_probe.cu's output (h200.sh's fetch_probe stage, or a log holding it) as a picture: one panel a
probe run ("=== x_fetch_probe ARGS" and the lines after it), a bar a path and depth (median, p10-p90 whiskers), the
clone and the plain read beside them (a dotted line at the clone); the skeletons (x in, y = x out) coloured by how y is
written, hatched where x carries evict_first.

    python scripts/plot_fetch_probe.py results/logs/2026-12-06_26ec94f_l2_hint_fetch_probe_h100.log \
        --out results/x_fetch_probe_h100_2026-12-06.png
"""
import argparse
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HEAD = re.compile(r"=== (?:\d\d:\d\d:\d\d )?x_fetch_probe (.+?)\s*$")
ROW = re.compile(r"^(.+?)\s{2,}([\d.]+) us \(p10 ([\d.]+), p90 ([\d.]+)\)")
PATH_COLORS = {"tma": "C0", "rows": "C1", "lsu": "C2", "tma_ef": "C3"}  # the roofs (clone, plain read): gray
SKEL_COLORS = {"y tma": "C4", "y st": "C5", "y st.cs": "C6", "y frag": "C7"}  # the skeletons by how y is written (method 4)
GPU = re.compile(r"^(NVIDIA [^,]+), \d+ SMs; (.+?); tiles.*launches each, (.+)$")


def parse(text: str) -> list[dict]:
    """Each probe run of `text`: its arguments, GPU, x's description, what preceded each launch (the flush) and rows
    (name, median, p10, p90)."""
    runs = []
    for line in text.splitlines():
        if m := HEAD.search(line):
            runs.append({"args": m.group(1), "gpu": "", "x": "", "flush": "", "rows": []})
        elif runs and (m := GPU.match(line)):
            runs[-1]["gpu"], runs[-1]["x"], runs[-1]["flush"] = m.groups()
        elif runs and (m := ROW.match(line)):
            runs[-1]["rows"].append((m.group(1).strip(), *map(float, m.groups()[1:])))
    return [r for r in runs if r["rows"]]


def cli(doc: str) -> argparse.Namespace:
    """The probe pictures' command line: LOG --out PNG (this script's and scripts/plot_skeletons.py's)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("log", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    return ap.parse_args()


def save_figure(fig, out: Path) -> None:
    """Lay out and write `fig` to `out` whole (a temporary file renamed: never a half-written picture)."""
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=110)
    tmp.replace(out)
    print(out)


def main() -> None:
    args = cli(__doc__)
    runs = parse(args.log.read_text())
    if not runs:
        raise SystemExit(f"{args.log}: no x_fetch_probe output found (lines '=== x_fetch_probe ARGS' and its rows)")
    fig, axes = plt.subplots(1, len(runs), figsize=(5.2 * len(runs), 6.5), squeeze=False)
    for ax, run in zip(axes[0], runs):
        names = [r[0] for r in run["rows"]][::-1]
        med = [r[1] for r in run["rows"]][::-1]
        lo = [r[1] - r[2] for r in run["rows"]][::-1]
        hi = [r[3] - r[1] for r in run["rows"]][::-1]
        colors = [SKEL_COLORS.get(n.split(", ")[1], "tab:gray") if n.startswith("skel ")
                  else PATH_COLORS.get(n.split(",")[0], "tab:gray") for n in names]
        hatches = ["//" if n.startswith("skel tma_ef") else "" for n in names]
        ax.barh(names, med, xerr=[lo, hi], color=colors, hatch=hatches, capsize=2)
        clone = [r[1] for r in run["rows"] if r[0].startswith("clone")]
        if clone:
            ax.axvline(clone[0], color="k", lw=0.8, ls=":")
        for y, (v, h) in enumerate(zip(med, hi)):
            ax.text(v + h, y, f" {v:.1f}", va="center", fontsize=7)
        ax.set_title(f"{run['x']}\n(probe args {run['args']}; {run['flush']})", fontsize=7)
        ax.set_xlabel("us per launch (median, p10-p90)")
        ax.tick_params(axis="y", labelsize=7)
    fig.suptitle(f"x tiles fetched by path and tiles in flight, beside the clone and a plain read ({runs[0]['gpu']})",
                 fontsize=10)
    save_figure(fig, args.out)


if __name__ == "__main__":
    main()
