"""Reports from the log: the ladder table and plot, the shape-sweep picture, the README table."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from .config import HEADLINE, BASELINES, ROOT
from .registry import variants, variant_info
from .jit import tuned_table
from .timing import defines_str
from .results import read_results, shape_cols, _run_ids


def plot_shape_sweep(df: pd.DataFrame | None = None, device_name: str | None = None, path: str | Path | None = None):
    """ModelNew's speedup over eager (eager time / ModelNew time, same run) per channel count, one point per
    shape of the log's latest 'shape_sweep' run on one GPU, marked by the route taken; the 1.0 line is parity."""
    import matplotlib
    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    df = read_results() if df is None else df
    fig, ax = plt.subplots(figsize=(8, 5))
    sel = df[(df["kind"] == "shape_sweep") & (df["variant"] == "modelnew")] if "kind" in df else df.iloc[0:0]
    if device_name:
        sel = sel[sel["device_name"] == device_name]
    if sel.empty or "speedup_vs_eager" not in sel:
        ax.text(0.5, 0.5, "no shape_sweep rows in results/timings.csv yet", ha="center", va="center")
        return fig
    sel = sel[(sel["device_name"] == sel["device_name"].iloc[-1]) & (sel["commit"] == sel["commit"].iloc[-1])]
    sel = sel.dropna(subset=["speedup_vs_eager"])
    route = sel["route"].fillna("?").astype(str) if "route" in sel else pd.Series("?", index=sel.index)
    markers = {"float32": "o", "bfloat16": "s", "float16": "^"}
    rng = np.random.default_rng(0)
    for (r, dt), g in sel.assign(route_=route).groupby(["route_", "dtype"]):
        jitter = np.exp(rng.uniform(-0.08, 0.08, len(g)))
        ax.scatter(g["C_in"].astype(float) * jitter, g["speedup_vs_eager"], marker=markers.get(dt, "x"), s=22,
                   alpha=0.75, label=f"{r} ({dt})")
    ax.axhline(1.0, color="k", lw=1)
    ax.axhline(1 / 1.05, color="k", lw=0.8, ls=":", label="contract: ModelNew <= 1.05x eager's time")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(sel["C_in"].unique()))
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%.1fx"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_yticks([0.9, 1.0, 1.5, 2, 3, 4, 5])
    ax.set_xlabel("channels (C_in = C_out)")
    ax.set_ylabel("speedup over eager (eager time / ModelNew time)")
    ax.set_title(f"ModelNew vs eager over {len(sel)} shapes on {sel['device_name'].iloc[0]} (L2 flushed)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def ladder_table(df: pd.DataFrame | None = None, device_name: str | None = None, shape: dict | None = None,
                 ) -> pd.DataFrame:
    """The latest bench row of each variant and baseline (per dtype) on one GPU at one shape (headline by
    default): its time, spread, error, ratio to the floor and speedup over eager timed in the same run
    (NaN where that run did not time eager). Where a variant has rows built with its parameters in
    results/tuned.json for that GPU, the latest of those: the table shows what `load` builds there now."""
    df = read_results() if df is None else df
    shape = dict(shape or HEADLINE)
    if df.empty:
        return df
    sel = df[(df["kind"] == "bench") & ~df["device_name"].astype(str).str.startswith("CPU ")]
    if device_name:
        sel = sel[sel["device_name"] == device_name]
    for k, val in shape_cols(shape).items():
        sel = sel[sel[k].astype(str) == str(val)]
    if sel.empty:
        return sel
    device_name = device_name or sel["device_name"].iloc[-1]
    sel = sel[sel["device_name"] == device_name].copy()
    sel["run"] = _run_ids(sel)
    tuned = tuned_table().get(device_name, {})
    sel["as_tuned"] = [n not in tuned or str(d) == defines_str(tuned[n])
                       for n, d in zip(sel["variant"], sel["defines"])]
    has_tuned = sel.groupby(["variant", "dtype"])["as_tuned"].transform("any")
    pick = sel[sel["as_tuned"] | ~has_tuned]
    latest = pick.sort_values("timestamp", kind="stable").groupby(["variant", "dtype"]).tail(1).drop(
        columns="as_tuned").copy()
    order = {n: i for i, n in enumerate(list(BASELINES) + variants())}
    latest["order"] = latest["variant"].map(lambda n: order.get(n, 99))
    latest = latest.sort_values(["order", "dtype"]).drop(columns="order")
    latest["x_floor"] = latest["median_us"] / latest["floor_us"]
    eager = sel[sel["variant"] == "eager"].groupby(["run", "dtype"])["median_us"].last()  # same run and dtype
    latest["speedup_vs_eager"] = [eager.get((r, dt), float("nan")) / m
                                  for r, dt, m in zip(latest["run"], latest["dtype"], latest["median_us"])]
    return latest


def plot_ladder(df: pd.DataFrame | None = None, device_name: str | None = None, path: str | Path | None = None):
    """Bars: each rung's median time (p10-p90 whiskers), log scale; lines: the memory floor, eager and
    torch.compile from the same log. Saved to `path` if given. Returns the matplotlib Figure."""
    import matplotlib
    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    t = ladder_table(df, device_name)
    fig, ax = plt.subplots(figsize=(11, 5))
    if t.empty:
        ax.text(0.5, 0.5, "no GPU bench rows in results/timings.csv yet", ha="center", va="center")
        if path is not None:
            fig.savefig(path, dpi=120)
        return fig
    rungs = t[~t["variant"].isin(BASELINES)]
    labels = [f"{r.variant}" + ("" if r.dtype == "float32" else f" ({r.dtype})") for r in rungs.itertuples()]
    med = rungs["median_us"].to_numpy()
    err = np.vstack([med - rungs["p10_us"].to_numpy(), rungs["p90_us"].to_numpy() - med])
    ax.bar(labels, med, yerr=err, color="#4c72b0", capsize=3)
    for i, y in enumerate(med):
        ax.annotate(f"{y:.3g}", (i, y), ha="center", va="bottom", fontsize=8)
    styles = {"eager": ("#c44e52", "--"), "compile": ("#dd8452", "-."), "clone": ("#55a868", ":")}
    for name, (color, ls) in styles.items():
        row = t[(t["variant"] == name) & (t["dtype"] == "float32")]
        if len(row):
            ax.axhline(row["median_us"].iloc[0], color=color, ls=ls, label=f"{name} {row['median_us'].iloc[0]:.3g} us")
    f32 = t[t["dtype"] == "float32"]
    ax.axhline(f32["floor_us"].iloc[0], color="k", lw=1.5,
               label=f"memory floor (fp32) {f32['floor_us'].iloc[0]:.3g} us")
    ax.set_yscale("log")
    ax.set_ylabel("median time per call, us (log)")
    ax.set_title(f"The ladder at B=16 C=128 T=2048 K=5 d=2 on {t['device_name'].iloc[0]} (L2 flushed)")
    ax.legend(fontsize=8, loc="upper right")
    plt.setp(ax.get_xticklabels(), rotation=35, ha="right")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def _table_lines(t: pd.DataFrame) -> list[str]:
    lines = [f"GPU: {t['device_name'].iloc[0]}, torch {t['torch'].iloc[0]}, CUDA {t['cuda'].iloc[0]}, "
             f"commit(s) {', '.join(sorted(set(map(str, t['commit']))))}; median of {int(t['n'].max())} calls, "
             "L2 flushed; each row is the latest bench of that variant and dtype; floor = minimum bytes / copy "
             "bandwidth measured in the same run; max diff to eager: max |y - eager's y| under PyTorch's defaults "
             "(-: not recorded then); speedup vs eager in the same run and dtype (-: that run did not time eager).",
             "",
             "| rung | variant | dtype | median us | p10-p90 us | max diff to eager | rel. err vs fp64 | x floor | "
             "speedup vs eager |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in t.itertuples():
        rung = f"{variant_info(r.variant).rung:02d}" if r.variant not in BASELINES else "-"
        err = "-" if pd.isna(r.rel_err) else f"{r.rel_err:.1e}"
        diff = getattr(r, "max_diff_eager", float("nan"))
        diff = "-" if pd.isna(diff) else f"{diff:.1e}"
        speedup = "-" if pd.isna(r.speedup_vs_eager) else f"{r.speedup_vs_eager:.2f}"
        lines.append(f"| {rung} | {r.variant} | {r.dtype} | {r.median_us:.1f} | {r.p10_us:.1f}-{r.p90_us:.1f} | "
                     f"{diff} | {err} | {r.x_floor:.2f} | {speedup} |")
    return lines


def _write_between_markers(path: Path, lines: list[str]):
    text = path.read_text()
    start, end = "<!-- results:start -->", "<!-- results:end -->"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + start + "\n" + "\n".join(lines) + "\n" + end + rest.split(end, 1)[1]
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text)
        os.replace(tmp, path)


def report(readme: Path | None = None, full: Path | None = None) -> pd.DataFrame:
    """Regenerate results/ladder.png, results/shape_sweep.png and the results tables between the markers of
    docs/results.md (every variant and baseline in every dtype) and of the README (float32, plus ModelNew and the
    16-bit rung in 16-bit), from the log."""
    t = ladder_table()
    plot_ladder(path=ROOT / "results" / "ladder.png")
    log = read_results()
    if "kind" in log and (log["kind"] == "shape_sweep").any():
        plot_shape_sweep(log, path=ROOT / "results" / "shape_sweep.png")
    if t.empty:
        return t
    full = Path(full or ROOT / "docs" / "results.md")
    if full.is_file():
        _write_between_markers(full, _table_lines(t))
    readme = Path(readme or ROOT / "README.md")
    if readme.is_file():
        short = t[(t["dtype"] == "float32") & (t["variant"] != "eager_fp32") | (t["variant"] == "modelnew")
                  | ((t["dtype"] == "bfloat16") & t["variant"].isin(["eager", "wgmma_bf16"]))]
        _write_between_markers(readme, _table_lines(short))
    return t
