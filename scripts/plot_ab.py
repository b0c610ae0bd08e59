"""Draw `fused_jit.py ab` runs as a picture: for each A/B logged in results/timings.csv by the commits given (each ab
appends two rows, A's and B's, whose note holds `ab A vs B: ratio R [lo, hi]`), one bar of A's time over B's (above 1:
B is faster) with its 95% bootstrap interval, labelled by the shape's difference from the headline and grouped by B's
build, the GPU named. Writes results/ab_<name>.png.
    python scripts/plot_ab.py --commit 45c73fb [--commit ...] --name row_groups_2026-12-05 [--against clone] [--out PNG]
--against clone draws the A/Bs against x.clone() instead (issue 17's targets: A's time over the clone's)."""
import argparse
import re
import sys
from pathlib import Path

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

NOTE = re.compile(r"^ab (\S+) vs (\S+): ratio ([0-9.]+) \[([0-9.]+), ([0-9.]+)\]")
SHAPE_KEYS = ("B", "C_in", "C_out", "T", "K", "dilation")


target = fj.clone_target  # issue 17's target of a class, as a ratio to the clone


def shape_label(row) -> str:
    """The shape as its difference from the headline (`headline` where it is the headline), with a 16-bit dtype."""
    diff = [f"{'d' if k == 'dilation' else k} {int(row[k])}" for k in SHAPE_KEYS if int(row[k]) != fj.HEADLINE[k]]
    if str(row.get("dtype", "float32")) != "float32":
        diff.append(str(row["dtype"]).replace("bfloat16", "bf16").replace("float16", "fp16"))
    return ", ".join(diff) or "headline"


def ab_pairs(df, commits, against: str = "tree") -> list[dict]:
    """One entry per logged A/B of the commits: {a, b, ratio, lo, hi, shape, gpu}. against='tree': A/Bs of a build
    against another build; 'clone': those against x.clone()."""
    sel = df[(df["kind"] == "ab") & df["commit"].astype(str).isin(commits)]
    out, seen = [], set()
    for _, r in sel.iterrows():
        m = NOTE.match(str(r.get("note", "")))
        if not m or (m[2] == "clone") != (against == "clone"):
            continue
        key = (r["run"], m[0], tuple(int(r[k]) for k in SHAPE_KEYS), str(r["dtype"]))
        if key in seen:  # (each ab logs A's row and B's: one bar)
            continue
        seen.add(key)
        out.append({"a": m[1], "b": m[2], "ratio": float(m[3]), "lo": float(m[4]), "hi": float(m[5]),
                    "shape": shape_label(r), "gpu": str(r["device_name"]), "dtype": str(r["dtype"])})
    return out


def plot(pairs: list[dict], title: str, path: Path, against: str = "tree") -> Path:
    if not pairs:
        raise SystemExit("no A/B rows for those commits in the results log")
    build_of = (lambda p: p["a"]) if against == "clone" else (lambda p: p["b"])
    builds = list(dict.fromkeys(build_of(p) for p in pairs))
    pairs = sorted(pairs, key=lambda p: builds.index(build_of(p)))  # one build's bars together, in run order
    colors = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(9, 0.34 * len(pairs) + 0.3 * len(builds) + 2.0))
    for i, p in enumerate(pairs):
        k = builds.index(build_of(p))
        ax.barh(i, p["ratio"], color=colors(k % 10), xerr=[[p["ratio"] - p["lo"]], [p["hi"] - p["ratio"]]], capsize=2)
        ax.text(p["hi"] + 0.005, i, f"{p['ratio']:.3f}", va="center", fontsize=8)
    ax.set_yticks(range(len(pairs)), [p["shape"] for p in pairs], fontsize=8)
    ax.invert_yaxis()
    ax.axvline(1.0, color="k", lw=0.8)
    if against == "clone":  # issue 17's target of each class drawn
        for j, t in enumerate(sorted({target(p["a"], p["dtype"]) for p in pairs})):
            ax.axvline(t, color="tab:red", ls="--", lw=0.9)
            # labels alternately under the bottom bar and over the top one: 1.15 and 1.25 lie too close to share a line
            ax.text(t, len(pairs) - 0.45 if j % 2 == 0 else -0.55, f" target {t}", color="tab:red", fontsize=8,
                    va="top" if j % 2 == 0 else "bottom")
    lo = min(min(p["lo"] for p in pairs), 1.0)
    hi_t = max((target(p["a"], p["dtype"]) for p in pairs), default=0) if against == "clone" else 0
    ax.set_xlim(lo - 0.05 * (max(p["hi"] for p in pairs) - lo + 0.1), max(max(p["hi"] for p in pairs), hi_t) * 1.04)
    ax.set_xlabel("A's time / the clone's (issue 17's targets: TF32 1.15, strict 1.7, bf16 1.25)" if against == "clone"
                  else "the tree's time / the build's (above 1: the build is faster); 95% bootstrap interval")
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors(k % 10)) for k in range(len(builds))]
    ax.legend(handles, builds, fontsize=7, loc="upper center", bbox_to_anchor=(0.4, -0.07 - 0.6 / len(pairs)))
    ax.set_title(f"{title}\non {', '.join(sorted({p['gpu'] for p in pairs}))} (L2 flushed, interleaved pairs)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--commit", action="append", required=True, help="a commit whose ab rows to draw (repeatable)")
    ap.add_argument("--name", required=True, help="the picture is results/ab_<name>.png")
    ap.add_argument("--against", choices=("tree", "clone"), default="tree")
    ap.add_argument("--title", default=None, help="default: A/B against the tree, or against x.clone() with --against clone")
    ap.add_argument("--results", default=None, help="the results log (default results/timings.csv)")
    ap.add_argument("--out", default=None, help="the picture's path (default results/ab_<name>.png)")
    a = ap.parse_args()
    df = fj.read_results(a.results) if a.results else fj.read_results()
    title = a.title or ("A/B against x.clone()" if a.against == "clone" else "A/B against the tree")
    out = plot(ab_pairs(df, a.commit, a.against), title, Path(a.out) if a.out else fj.ROOT / "results" / f"ab_{a.name}.png",
               a.against)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
