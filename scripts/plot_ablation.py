"""Draw scripts/ablate.py's runs as a picture: for each logged ablation (lines `mask N <what> median X us`), the
time each build took against the full kernel's in the same run, one bar per mask. Reads the logs given (by default
the two runs of 2026-12-03 afternoon at the headline), writes results/ablation_<name>.png. A log may hold several
ablations (one `VARIANT ... headline {...}` line before each); where every one of them timed x.clone() beside it
(`ablate.py --baseline clone`), the bars are ratios to that clone, with issue 17's target for the class drawn.
    python scripts/plot_ablation.py [--name wgmma_wide_2026-12-03] [--out PNG] [LOG ...]"""
import argparse
import ast
import re
import sys
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from fusedkit.config import clone_target  # noqa: E402
DEFAULT_LOGS = ["results/logs/2026-12-03_99b1738_ablate_ncu.log", "results/logs/2026-12-03_5273aae_dram_ablate.log"]
LINE = re.compile(r"^mask\s+(\d+)\s+(.*?)\s+median\s+([0-9.]+) us\s+\(p10 ([0-9.]+), p90 ([0-9.]+)\)")
HEADER = re.compile(r"^(\w+)\s(.*?)\s*headline (\{[^}]*\})\s*(\w*)")  # ablate.py's first line: variant, defines, shape, dtype
CLONE = re.compile(r"^clone \(before\)\s+median\s+([0-9.]+) us")
GPU = re.compile(r"NVIDIA [A-Z]+\d+[^,\n]*")  # nvidia-smi's or torch's name of the GPU, where the log has it


target = clone_target  # issue 17's target of a class, as a ratio to the clone


def parse(log: Path) -> list[dict]:
    """The ablations of one log, in order: {variant, defines, shape, dtype, clone (the clone's median before the builds,
    or None), rows [(mask, description, median, p10, p90)], gpu}; an error where none has a full-kernel row (an ablation
    of masks alone, e.g. one define's skeleton, may go without its own)."""
    sections, text = [], log.read_text()
    gpu = (g[0].strip() if (g := GPU.search(text)) else "")
    for line in text.splitlines():
        if (h := HEADER.match(line)) and not line.startswith("mask"):
            sections.append({"variant": h[1], "defines": h[2].strip(), "shape": ast.literal_eval(h[3]),
                             "dtype": h[4] or "float32", "clone": None, "rows": [], "gpu": gpu})
        elif (c := CLONE.match(line)) and sections:
            sections[-1]["clone"] = float(c[1])
        elif m := LINE.match(line):
            if not sections:  # (a log without ablate.py's first line)
                sections.append({"variant": "?", "defines": "", "shape": {}, "dtype": "float32", "clone": None, "rows": [],
                                 "gpu": gpu})
            sections[-1]["rows"].append((int(m[1]), m[2], float(m[3]), float(m[4]), float(m[5])))
    sections = [sec for sec in sections if sec["rows"]]
    if not any(r[0] == 0 for sec in sections for r in sec["rows"]):
        raise SystemExit(f"{log}: no 'mask 0 full kernel' line: not a scripts/ablate.py log")
    return sections


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("logs", nargs="*", default=DEFAULT_LOGS)
    ap.add_argument("--name", default="wgmma_wide_2026-12-03")
    ap.add_argument("--out", default=None, help="the picture's path (default results/ablation_<name>.png)")
    a = ap.parse_args()
    runs = [(Path(p).name.split("_")[1], sec) for p in a.logs
            for sec in parse(ROOT / p if not Path(p).is_absolute() else Path(p))]
    ratios = all(sec["clone"] for _, sec in runs)  # every ablation timed the clone beside it: ratios to it
    fields = sorted({k for _, sec in runs for k, v in sec["shape"].items()
                     if any(o["shape"].get(k) != v for _, o in runs)})  # shape fields that differ between ablations
    n = sum(len(sec["rows"]) for _, sec in runs)
    fig, ax = plt.subplots(figsize=(12, 0.42 * n + 1.6))
    y, labels, right = 0, [], 0.0
    for i, (commit, sec) in enumerate(runs):
        unit = sec["clone"] if ratios else 1.0
        full = next((r[2] for r in sec["rows"] if r[0] == 0), None)
        y0 = y
        for mask, what, med, p10, p90 in sec["rows"]:
            color = "0.55" if mask == 0 else "tab:olive" if full is None else ("tab:green" if med < full else "tab:red")
            med, p10, p90 = med / unit, p10 / unit, p90 / unit
            ax.barh(y, med, xerr=[[med - p10], [p90 - med]], color=color, capsize=2)
            ax.text(p90 * 1.01, y, f"{med:.3f}x" if ratios else f"{med:.1f}", va="center", fontsize=8)
            tag = " ".join([sec["variant"], sec["defines"], *(f"{k}={sec['shape'][k]}" for k in fields if k in sec["shape"]),
                            "" if sec["dtype"] == "float32" else sec["dtype"]]).replace("  ", " ").strip()
            labels.append(f"{commit} {tag}: {what}" if ratios else f"{commit}: {what}")
            right = max(right, p90)
            y += 1
        if ratios:  # the clone (1.0) and issue 17's target for this class, across the section's bars
            t = target(sec["variant"], sec["dtype"])
            ax.vlines(1.0, y0 - 0.5, y - 0.5, colors="k", lw=1)
            ax.vlines(t, y0 - 0.5, y - 0.5, colors="tab:blue", lw=1.5, linestyles="--")
            ax.text(t, y0 - 0.45, f" target {t:g}x", color="tab:blue", fontsize=8, va="top")
        if i + 1 < len(runs):
            ax.axhline(y - 0.5, color="k", lw=0.5)
    ax.set_yticks(range(y), labels, fontsize=8)
    ax.invert_yaxis()
    if ratios:
        ax.set_xlabel("time / x.clone()'s of the same dtype, timed in the same run\n(L2 flushed, median, p10-p90 bars; "
                      "black: the clone, dashed: issue 17's target)")
        ax.set_xlim(0, 1.12 * right)
        gpus = sorted({sec["gpu"] for _, sec in runs if sec["gpu"]})
        ax.set_title(f"Kernels with parts left out{'' if fields else ' at the headline'}, against the copy of the same "
                     f"bytes{chr(10) + ', '.join(gpus) if gpus else ''}\ngrey: the full kernel, green: faster than it (olive: "
                     "no full kernel in that run);\nwithout depthwise and MMA: the pipeline's memory skeleton", fontsize=10)
    else:
        ax.set_xlabel("us at the headline (bench's timer: L2 flushed, median, p10-p90 bars)")
        ax.set_xlim(0, 1.12 * right)
        ax.set_title("ModelNew's fp32 kernel (rung 09) with parts left out, by run (commit)\n"
                     "grey: the full kernel, green: faster than it, red: slower", fontsize=10)
    fig.tight_layout()
    out = Path(a.out) if a.out else ROOT / "results" / f"ablation_{a.name}.png"
    fig.savefig(out, dpi=110)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
