"""Reports from the log: the ladder table and plot, the roofline, a lesson's rungs beside the ones before them,
the shape-sweep picture, the README table."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from .config import HEADLINE, BASELINES, FUSED_16BIT, FUSED_TF32, ROOT
from .registry import variants, variant_info
from .jit import tuned_table
from .timing import defines_str, flops, min_bytes
from .results import read_results, shape_cols, _run_ids


def plot_shape_sweep(df: pd.DataFrame | None = None, device_name: str | None = None, path: str | Path | None = None):
    """ModelNew's speedup over eager (eager time / ModelNew time, same run) per channel count, one point per
    shape and dtype on one GPU, marked by the route taken; the 1.0 line is parity. Each dtype's points are those of
    its latest run over the most shapes (a whole sweep), each replaced by a later run's measurement of the same
    shape where there is one (a sweep may re-run one dtype or some channel counts only: `shape-sweep --C 128`)."""
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
    sel = sel[sel["device_name"] == sel["device_name"].iloc[-1]]
    sel = sel.dropna(subset=["speedup_vs_eager"])
    key = [c for c in ("B", "C_in", "C_out", "T", "K", "dilation", "bias", "dtype") if c in sel]
    parts, runs_of = [], {}
    for dt, g in sel.groupby("dtype", sort=False):  # rows are appended in time order
        order = list(dict.fromkeys(g["commit"]))
        size = g.groupby("commit").size()
        base = max(order, key=lambda c: (size[c], order.index(c)))  # the latest of the runs over the most shapes
        later = order[order.index(base):]
        parts.append(g[g["commit"].isin(later)].drop_duplicates(subset=key, keep="last"))
        runs_of[dt] = " + ".join(str(c)[:7] for c in later)
    sel = pd.concat(parts)
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
    runs = ", ".join(f"{dt} at {c}" for dt, c in runs_of.items())
    ax.set_title(f"ModelNew vs eager over {len(sel)} shapes on {sel['device_name'].iloc[0]} (L2 flushed)\n"
                 f"runs: {runs}", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def _fullest_device(sel: pd.DataFrame) -> str:
    """The GPU whose bench rows cover the most (variant, dtype) pairs (the latest such GPU on a tie): a partial bench on
    another GPU (an H100 lent for one call where the ladder was benched on the H200) does not replace the table."""
    cover = sel.groupby("device_name")[["variant", "dtype"]].apply(lambda g: len(g.drop_duplicates()))
    last = sel.groupby("device_name")["timestamp"].max()
    return max(cover.index, key=lambda d: (cover[d], str(last[d])))


def ladder_table(df: pd.DataFrame | None = None, device_name: str | None = None, shape: dict | None = None,
                 ) -> pd.DataFrame:
    """The latest bench row of each variant and baseline (per dtype) on one GPU (by default the one whose rows cover the
    most variants and dtypes at that shape) at one shape (headline by default): its time, spread, error, ratio to the floor and speedup over eager timed in the same run
    (NaN where that run did not time eager). Where a variant has rows built with its parameters in
    results/tuned.json for that GPU, the latest of those: the table shows what `load` builds there now; where none
    was, the latest row, with `as_tuned` False (the tables mark it: the figure is an earlier parameter set's)."""
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
    device_name = device_name or _fullest_device(sel)
    sel = sel[sel["device_name"] == device_name].copy()
    sel["run"] = _run_ids(sel)
    tuned = tuned_table().get(device_name, {})
    sel["as_tuned"] = [n not in tuned or str(d) == defines_str(tuned[n])
                       for n, d in zip(sel["variant"], sel["defines"])]
    has_tuned = sel.groupby(["variant", "dtype"])["as_tuned"].transform("any")
    pick = sel[sel["as_tuned"] | ~has_tuned]
    latest = pick.sort_values("timestamp", kind="stable").groupby(["variant", "dtype"]).tail(1).copy()
    # ModelNew's row was timed with the kernel it runs at that dtype (under PyTorch's defaults), and records neither
    # that kernel's parameters nor its source: it shows today's kernel only where a bench at the same commit timed that
    # kernel as tuned, from the source of the kernel's row in the table (a later bench of the kernel alone, after its
    # tuned set or its source changed, leaves ModelNew's row an earlier kernel's: rung 11 at 5da087f)
    def _current(commit, dt):
        kernel = FUSED_TF32 if dt == "float32" else FUSED_16BIT
        row = latest[(latest["variant"] == kernel) & (latest["dtype"] == dt)]
        if row.empty or not row["as_tuned"].iloc[0]:
            return False
        same = sel[(sel["commit"].astype(str) == str(commit)) & (sel["variant"] == kernel) & (sel["dtype"] == dt)
                   & sel["as_tuned"]]
        src = row["source_hash"].iloc[0] if "source_hash" in row else None
        return bool(len(same)) and (pd.isna(src) or bool((same["source_hash"].astype(str) == str(src)).any()))
    latest["as_tuned"] = [_current(c, dt) if v == "modelnew" else ok
                          for v, dt, c, ok in zip(latest["variant"], latest["dtype"], latest["commit"], latest["as_tuned"])]
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
    _time_bars(ax, rungs, labels, "#4c72b0", lambda y: f"{y:.3g}")
    _mark_baselines(ax, t)
    ax.set_title(f"The ladder at B=16 C=128 T=2048 K=5 d=2 on {t['device_name'].iloc[0]} (L2 flushed)")
    return _finish(fig, ax, path, rotation=35)


def _time_bars(ax, rows: pd.DataFrame, labels: list, color, fmt):
    """Bars of the rows' median times with p10-p90 whiskers, each labelled with fmt(median), on a log axis."""
    med = rows["median_us"].to_numpy()
    err = np.vstack([med - rows["p10_us"].to_numpy(), rows["p90_us"].to_numpy() - med])
    ax.bar(labels, med, yerr=err, color=color, capsize=3)
    for i, y in enumerate(med):
        ax.annotate(fmt(y), (i, y), ha="center", va="bottom", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("median time per call, us (log)")


def _finish(fig, ax, path, rotation: int):
    """Legend, slanted tick labels, tight layout, saved to `path` if given; returns the figure."""
    import matplotlib.pyplot as plt
    ax.legend(fontsize=8, loc="upper right")
    plt.setp(ax.get_xticklabels(), rotation=rotation, ha="right")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


_BASELINE_STYLES = {"eager": ("#c44e52", "--"), "compile": ("#dd8452", "-."), "clone": ("#55a868", ":")}


def _mark_baselines(ax, t: pd.DataFrame, floors: tuple = ("float32",)):
    """Horizontal lines: eager, torch.compile and clone (float32) and the memory floor of each dtype in `floors`,
    from the rows of a ladder table."""
    for name, (color, ls) in _BASELINE_STYLES.items():
        row = t[(t["variant"] == name) & (t["dtype"] == "float32")]
        if len(row):
            ax.axhline(row["median_us"].iloc[0], color=color, ls=ls, label=f"{name} {row['median_us'].iloc[0]:.3g} us")
    for dt, lw in zip(floors, (1.5, 1.0, 1.0)):
        rows = t[t["dtype"] == dt]
        if len(rows) and np.isfinite(rows["floor_us"].iloc[0]):
            ax.axhline(rows["floor_us"].iloc[0], color="k", lw=lw, ls="-" if dt == "float32" else (0, (5, 2)),
                       label=f"memory floor ({_short(dt)}) {rows['floor_us'].iloc[0]:.3g} us")


def _short(dtype: str) -> str:
    return {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}.get(dtype, dtype)


def _us(v: float) -> str:
    return f"{v:.0f}" if v >= 100 else f"{v:.3g}"


def _shape_label(shape: dict) -> str:
    s = shape
    return f"B={s['B']} C_in={s['C_in']} C_out={s['C_out']} T={s['T']} K={s['K']} d={s['dilation']}"


def _empty(ax, what: str):
    ax.text(0.5, 0.5, f"no GPU bench rows {what} in the results log yet", ha="center", va="center")
    ax.set_axis_off()


def plot_rung_times(rungs, df: pd.DataFrame | None = None, device_name: str | None = None,
                    shape: dict | None = None, path: str | Path | None = None):
    """A lesson's rungs (`rungs`, highlighted) beside every CUDA rung before them: bars of each one's latest bench
    median (p10-p90 whiskers, log scale; float32, plus the 16-bit rows of the lesson's own rungs), with eager,
    torch.compile, clone and the memory floor as lines, all from the log (`ladder_table`). Returns the Figure."""
    import matplotlib.pyplot as plt
    rungs = [rungs] if isinstance(rungs, str) else list(rungs)
    top = max(variant_info(n).rung for n in rungs)
    shape = dict(shape or HEADLINE)
    t = ladder_table(df, device_name, shape)
    fig, ax = plt.subplots(figsize=(10, 4.5))
    if t.empty:
        _empty(ax, f"at {_shape_label(shape)}")
        return fig
    before = {n for n in variants("cuda") if variant_info(n).rung <= top}
    bars = t[t["variant"].isin(before) & ((t["dtype"] == "float32")
                                          | (t["variant"].isin(rungs) & (t["dtype"] == "bfloat16")))]
    bars = bars.assign(rung=bars["variant"].map(lambda n: variant_info(n).rung)).sort_values(["rung", "dtype"],
                                                                                           ascending=[True, False])
    labels = [f"{r.rung:02d} {r.variant}" + ("" if r.dtype == "float32" else f" ({_short(r.dtype)})")
              for r in bars.itertuples()]
    _time_bars(ax, bars, labels, ["#4c72b0" if n in rungs else "#b8c4d6" for n in bars["variant"]], _us)
    _mark_baselines(ax, t, ("float32", "bfloat16") if (bars["dtype"] == "bfloat16").any() else ("float32",))
    missing = [n for n in rungs if n not in set(bars["variant"])]
    nums = ", ".join(f"{variant_info(n).rung}" for n in rungs)
    ax.set_title(f"Rung{'s' if len(rungs) > 1 else ''} {nums} (dark) beside the rungs before: latest bench rows, "
                 f"{_shape_label(shape)}\non {t['device_name'].iloc[0]}, L2 flushed"
                 + (f"; not in the log: {', '.join(missing)}" if missing else ""), fontsize=9)
    return _finish(fig, ax, path, rotation=30)


# Dense peak FLOP rates from NVIDIA's H200 SXM datasheet (specifications, not measurements; the tensor-core
# figures there are "with sparsity", halved here): the compute roofs. Another GPU: pass `peaks`.
PEAK_FLOPS = {"NVIDIA H200": {"FP32 CUDA cores": 67e12, "TF32 tensor cores": 494.5e12, "BF16 tensor cores": 989.5e12}}


def _spread(y: np.ndarray, gap: float) -> np.ndarray:
    """Label positions (log10 units) at least `gap` apart, as close to `y` as that allows."""
    order = np.argsort(y)
    out = np.array(y, dtype=float)[order]
    for i in range(1, len(out)):
        out[i] = max(out[i], out[i - 1] + gap)
    shift = (out - np.asarray(y, dtype=float)[order]).mean() / 2  # centre the pushed stack on the points
    out -= shift
    for i in range(1, len(out)):
        out[i] = max(out[i], out[i - 1] + gap)
    res = np.empty_like(out)
    res[order] = out
    return res


def roofline_table(df: pd.DataFrame | None = None, device_name: str | None = None,
                   shape: dict | None = None) -> pd.DataFrame:
    """The roofline's points: each rung (float32 and bfloat16) and eager, torch.compile and clone (float32) from
    `ladder_table`, with the op's arithmetic intensity (flops / min_bytes of its I/O dtype, FLOP/byte), the rate
    achieved (flops / median time, FLOP/s) and the copy bandwidth of its run (min_bytes / floor time, bytes/s).
    clone does no arithmetic: its rate is the op's FLOPs over the time of a copy of x (where a kernel as fast as
    a copy would sit)."""
    shape = dict(shape or HEADLINE)
    t = ladder_table(df, device_name, shape)
    if t.empty:
        return t
    keep = (t["dtype"].isin(["float32", "bfloat16"]) & ~t["variant"].isin(BASELINES)) | (
        t["variant"].isin(list(_BASELINE_STYLES)) & (t["dtype"] == "float32"))
    t = t[keep].copy()
    fl = flops(shape)
    nbytes = t["dtype"].map(lambda dt: min_bytes(shape, dt))
    t["intensity"] = fl / nbytes
    t["flop_per_s"] = fl / (t["median_us"] * 1e-6)
    t["copy_bw"] = nbytes / (t["floor_us"] * 1e-6)
    return t


def plot_roofline(df: pd.DataFrame | None = None, device_name: str | None = None, shape: dict | None = None,
                  peaks: dict | None = None, path: str | Path | None = None):
    """The roofline of the ladder (log-log): x the arithmetic intensity, y the FLOP rate achieved; the memory
    roof is the copy bandwidth measured in the runs (median of the rows'), the compute roofs the datasheet peaks
    (`peaks`, {label: FLOP/s}; default PEAK_FLOPS of the GPU). Every rung is a labelled point, eager, compile
    and clone are marked, the floor (the op at the copy bandwidth) is a star on the memory roof. All fp32 rows
    share one intensity (the same op, the same minimum bytes), bf16 I/O has twice it. Returns the Figure."""
    import matplotlib.pyplot as plt
    shape = dict(shape or HEADLINE)
    t = roofline_table(df, device_name, shape)
    fig, ax = plt.subplots(figsize=(10, 7))
    if t.empty:
        _empty(ax, f"at {_shape_label(shape)}")
        return fig
    dev = t["device_name"].iloc[0]
    peaks = dict(PEAK_FLOPS.get(dev, {}) if peaks is None else peaks)
    bw = float(t.loc[t["dtype"] == "float32", "copy_bw"].median()) if (t["dtype"] == "float32").any() \
        else float(t["copy_bw"].median())
    fl = flops(shape)
    xs = sorted(t["intensity"].unique())
    x_lo = xs[0] / 16
    x_hi = max([xs[-1]] + [p / bw for p in peaks.values()]) * 8
    x = np.geomspace(x_lo, x_hi, 200)
    ax.plot(x, np.minimum(bw * x, max(peaks.values(), default=np.inf)) / 1e12, color="k", lw=2,
            label=f"memory roof: copy bandwidth {bw / 1e12:.2f} TB/s (measured)")
    for (label, p), ls in zip(peaks.items(), ["-", "--", ":", "-."]):
        xr = x[x >= p / bw]
        ax.plot(xr, np.full_like(xr, p / 1e12), color="0.35", ls=ls, lw=1.3,
                label=f"compute roof: {label} {p / 1e12:.0f} TFLOP/s (datasheet)")
    styles = {"eager": ("#c44e52", "s"), "compile": ("#dd8452", "D"), "clone": ("#55a868", "v")}
    points = []
    for r in t.itertuples():
        color, marker = styles.get(r.variant, ("#4c72b0" if r.dtype == "float32" else "#8172b3", "o"))
        ax.scatter(r.intensity, r.flop_per_s / 1e12, color=color, marker=marker, s=40, zorder=3)
        name = r.variant if r.variant in styles else f"{variant_info(r.variant).rung:02d} {r.variant}"
        points.append((r.intensity, r.flop_per_s,
                       name + ("" if r.dtype == "float32" else f" ({_short(r.dtype)})") + f" {_us(r.median_us)} us"))
    for dt in t["dtype"].unique():
        floor = float(t.loc[t["dtype"] == dt, "floor_us"].median())
        xi = fl / min_bytes(shape, dt)
        ax.scatter(xi, fl / (floor * 1e-6) / 1e12, marker="*", s=160, color="k", zorder=4)
        points.append((xi, fl / (floor * 1e-6), f"floor ({_short(dt)}) {floor:.3g} us"))
    ys_all = [p[1] / 1e12 for p in points] + [p / 1e12 for p in peaks.values()]
    y_lo, y_hi = min(ys_all) / 3, max(ys_all) * 3
    for xi in xs:  # labels left of the fp32 column, right of the bf16 one, pushed apart vertically
        col = [p for p in points if np.isclose(p[0], xi)]
        ys = _spread(np.log10([p[1] / 1e12 for p in col]), 0.028 * np.log10(y_hi / y_lo))
        left = xi == xs[0] and len(xs) > 1
        for (px, py, name), yl in zip(col, ys):
            ax.annotate(name, (px, py / 1e12), xytext=(px * (0.62 if left else 1.6), 10 ** yl), fontsize=7,
                        ha="right" if left else "left", va="center",
                        arrowprops=dict(arrowstyle="-", color="0.6", lw=0.6))
    for xi in xs:
        ax.axvline(xi, color="0.8", lw=0.8, zorder=0)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_lo, x_hi)
    ax.set_ylim(y_lo, y_hi)
    ax.set_xlabel("arithmetic intensity, FLOP per byte of minimum traffic (log)")
    ax.set_ylabel("achieved TFLOP/s = FLOPs / median time (log)")
    ax.set_title(f"Roofline of the ladder, {_shape_label(shape)} ({fl / 1e9:.2f} GFLOP) on {dev}, "
                 "latest bench rows, L2 flushed", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def _table_lines(t: pd.DataFrame, short: bool = False) -> list[str]:
    """The results table as markdown lines: every column (docs/results.md), or `short` (the README: median, max diff
    to eager, x floor, speedup; the spread and the error vs float64 stay in the full table)."""
    head = (f"GPU: {t['device_name'].iloc[0]}, torch {t['torch'].iloc[0]}, CUDA {t['cuda'].iloc[0]}, "
            f"commit(s) {', '.join(sorted(set(str(c)[:7] for c in t['commit'])))}; median of {int(t['n'].max())} calls, "
            "L2 flushed; each row is the latest bench of that variant and dtype; ")
    if short:
        lines = [head + "max diff to eager: max |y - eager's y| under PyTorch's defaults; floor = minimum bytes / "
                 "copy bandwidth of the same run; speedup vs eager in the same run (-: not timed there). Spread and "
                 "error vs float64: docs/results.md.", "",
                 "| rung | variant | dtype | median us | max diff to eager | x floor | speedup vs eager |",
                 "|---|---|---|---|---|---|---|"]
    else:
        lines = [head + "floor = minimum bytes / copy bandwidth measured in the same run; max diff to eager: "
                 "max |y - eager's y| under PyTorch's defaults (-: not recorded then); speedup vs eager in the same "
                 "run and dtype (-: that run did not time eager).", "",
                 "| rung | variant | dtype | median us | p10-p90 us | max diff to eager | rel. err vs fp64 | x floor | "
                 "speedup vs eager |",
                 "|---|---|---|---|---|---|---|---|---|"]
    stale = []
    for r in t.itertuples():
        rung = f"{variant_info(r.variant).rung:02d}" if r.variant not in BASELINES else "-"
        if not getattr(r, "as_tuned", True):
            stale.append(r.variant)
            r = r._replace(variant=r.variant + " \\*")
        err = "-" if pd.isna(r.rel_err) else f"{r.rel_err:.1e}"
        diff = getattr(r, "max_diff_eager", float("nan"))
        diff = "-" if pd.isna(diff) else f"{diff:.1e}"
        speedup = "-" if pd.isna(r.speedup_vs_eager) else f"{r.speedup_vs_eager:.2f}"
        if short:
            lines.append(f"| {rung} | {r.variant} | {r.dtype} | {r.median_us:.1f} | {diff} | {r.x_floor:.2f} | "
                         f"{speedup} |")
        else:
            lines.append(f"| {rung} | {r.variant} | {r.dtype} | {r.median_us:.1f} | {r.p10_us:.1f}-{r.p90_us:.1f} | "
                         f"{diff} | {err} | {r.x_floor:.2f} | {speedup} |")
    if stale:
        names = sorted(set(stale) - {"modelnew"}) + (["modelnew"] if "modelnew" in stale else [])
        whose = (" (modelnew: no bench at one commit with the kernel it runs at that dtype as it is "
                 "built today)") if "modelnew" in stale else ""
        lines += ["", f"\\* {', '.join(names)}: no bench on this GPU yet with the parameters results/tuned.json gives it "
                      f"today{whose}; the row is the latest bench, of an earlier parameter set (docs/results.md says what "
                      "changed and what the A/B of the change measured)."]
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
        _write_between_markers(readme, _table_lines(short, short=True))
    return t
