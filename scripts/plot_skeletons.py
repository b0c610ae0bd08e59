"""Draw x_fetch_probe's skeletons (method 4: x in by the kernels' box, y = x out, BUSY cycles a tile standing in for
the compute) as their time over the clone's in the same run: left, float32 at the headline against the busy cycles;
right, each other run's skeletons at one busy count. Persistent blocks with 2 tiles in flight (the kernels' walk)
against one block a tile, each with and without W_pw's fetch at the block's start.

    python scripts/plot_skeletons.py results/logs/2026-12-06_dfd3ff4_skeleton_probe_h100.log \
        --out results/skeletons_h100_2026-12-06.png
"""
import importlib.util
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

_spec = importlib.util.spec_from_file_location("plot_fetch_probe", Path(__file__).with_name("plot_fetch_probe.py"))
_probe = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_probe)

HEADLINE_ARGS = ["4", "16", "128", "2048", "64"]  # the probe's float32 headline: esize B C T TILE_T
LINES = ["skel tma, y st, 2 in flight", "skel tma, y st, a tile a block", "skel tma, y st.cs, a tile a block",
         "skel tma, y st, 2 in flight + W_pw", "skel tma, y st, a tile a block + W_pw", "skel tma, y tma, 2 in flight"]
STYLE = {n: ("C0" if "2 in flight" in n else "C3", "--" if "W_pw" in n else ":" if "y tma" in n or "st.cs" in n else "-")
         for n in LINES}


def skeleton_runs(text: str) -> list[dict]:
    """The probe runs of `text` that timed skeletons (bench's flush), each with its busy cycles (the 9th argument, 0
    where absent) and ratios {name: median / the clone's median}."""
    runs = []
    for r in _probe.parse(text):
        args = r["args"].split()
        names = {n: med for n, med, _, _ in r["rows"]}
        if "clone (read + write)" not in names or not any(n.startswith("skel ") for n in names):
            continue
        if not r["flush"].startswith("L2 flushed"):
            continue
        clone = names["clone (read + write)"]
        runs.append({"args": args, "busy": int(args[8]) if len(args) > 8 else 0, "gpu": r["gpu"], "x": r["x"],
                     "ratio": {n: v / clone for n, v in names.items() if n.startswith("skel ")}})
    return runs


def main() -> None:
    args = _probe.cli(__doc__)
    runs = skeleton_runs(args.log.read_text())
    head = sorted((r for r in runs if r["args"][:5] == HEADLINE_ARGS), key=lambda r: r["busy"])
    if len(head) < 2:
        raise SystemExit(f"{args.log}: fewer than two float32 headline skeleton runs (x_fetch_probe 4 16 128 2048 64 .. 4 0)")
    others = [r for r in runs if r["args"][:5] != HEADLINE_ARGS]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 5.2))
    for n in LINES:
        color, ls = STYLE[n]
        ax.plot([r["busy"] for r in head], [r["ratio"][n] for r in head], marker="o", color=color, ls=ls,
                label=n.removeprefix("skel "))
    target = fj.clone_target(fj.FUSED_TF32, "float32")  # issue 17's TF32 target, as a ratio to the clone
    ax.axhline(target, color="k", lw=0.8, ls=":")
    ax.text(0, target + 0.002, f" TF32 target ({target}x)", fontsize=7, va="bottom")
    ax.set_xlabel("cycles each thread spins a tile (a stand-in for its compute)")
    ax.set_ylabel("time / the clone's (same run)")
    ax.set_title("float32, B 16 C 128 T 2048, TILE_T 64", fontsize=9)
    ax.legend(fontsize=7)
    width = 0.8 / len(LINES)
    for i, n in enumerate(LINES):
        color, ls = STYLE[n]
        xs = [j + (i - len(LINES) / 2 + 0.5) * width for j in range(len(others))]
        bx.bar(xs, [r["ratio"].get(n, float("nan")) for r in others], width, color=color,
               hatch="//" if "W_pw" in n else "", alpha=0.6 if ls == ":" else 1.0)
    bx.set_xticks(range(len(others)))
    bx.set_xticklabels([f"{'fp32' if r['args'][0] == '4' else 'bf16'} B {r['args'][1]} T {r['args'][3]}\nbusy {r['busy']}"
                        for r in others], fontsize=7)
    bx.axhline(1.0, color="k", lw=0.8)
    bx.set_ylim(0.9, None)
    bx.set_title("other runs (bars in the legend's order)", fontsize=9)
    fig.suptitle(f"Skeletons against the clone: persistent blocks (blue) or one block a tile (red) ({head[0]['gpu']})",
                 fontsize=10)
    _probe.save_figure(fig, args.out)


if __name__ == "__main__":
    main()
