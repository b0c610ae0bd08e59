"""What the lesson notebooks (notebooks/NN_topic.ipynb) share: their setup, kernel headers and source excerpts,
check summaries, A/B lines, a strict-fp32 context, the results they draw from and a traced launch.

A notebook puts the repository root on sys.path (the package is not installed), then
``from fusedkit.notebook import *`` (numpy as np, pandas as pd, torch, matplotlib.pyplot as plt, fused_jit as fj
and the helpers below) and ``setup(...)`` with its papermill parameters. Meant for notebooks only: importing this
module imports torch, matplotlib and fused_jit.
"""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import NamedTuple

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

import fused_jit as fj
from fusedkit.trace import traced_launch

__all__ = ["np", "pd", "torch", "plt", "fj", "Setup", "setup", "BENCH_COLS", "src_path", "header", "prediction",
           "show_source", "check_summary", "tf32_off", "show_ab", "logged_results", "traced_launch"]

# the columns of fj.bench's table that the lessons show
BENCH_COLS = ["variant", "dtype", "median_us", "p10_us", "p90_us", "rel_err", "gbps", "x_floor", "speedup_vs_eager"]


class Setup(NamedTuple):
    """What `setup` chose (unpacks in this order)."""
    HAS_GPU: bool
    DEVICE: str  # "cuda", or "cpu" where the CPU variant stands in
    SHAPE: dict  # the parameters' shape (bias on)
    RUN_SHAPE: dict  # the shape the cells run: SHAPE on a GPU, a small one on the CPU
    RUN_REPS: int  # timed calls per measurement: REPS on a GPU, at most 5 on the CPU
    SMALL_SHAPES: list  # the correctness battery's small shapes, for CPU stand-in checks


def setup(B: int, C_in: int, C_out: int, T: int, K: int, dilation: int, REPS: int) -> Setup:
    """The shape and device every lesson runs with, from its papermill parameters; sets pandas' display options
    and prints the repository, device, versions, shapes and results log. Without a GPU the CPU variant stands in
    on a small shape (B <= 2, T <= 256) with at most 5 timed calls, so the notebook stays quick."""
    has_gpu = torch.cuda.is_available()
    shape = dict(B=B, C_in=C_in, C_out=C_out, T=T, K=K, dilation=dilation, bias=True)
    if has_gpu:
        device, run_shape, run_reps = "cuda", shape, REPS
    else:
        device, run_shape, run_reps = "cpu", dict(shape, B=min(B, 2), T=min(T, 256)), min(REPS, 5)
    small = [s for s in fj.shape_battery() if s["B"] * s["C_in"] * s["T"] <= 200_000]
    pd.set_option("display.width", 200)
    pd.set_option("display.float_format", "{:.4g}".format)
    print("repository:", fj.ROOT)
    print("device:", torch.cuda.get_device_name() if has_gpu else "no CUDA GPU (CPU stand-ins, small shapes)")
    print("torch", torch.__version__, "| CUDA", torch.version.cuda, "| nvcc toolkit", fj.CUDA_HOME)
    print("shape:", shape, "| run shape:", run_shape, "| reps:", run_reps)
    print("results log:", fj.RESULTS_CSV)
    return Setup(has_gpu, device, shape, run_shape, run_reps, small)


def logged_results() -> pd.DataFrame:
    """The rows the pictures draw from: the results log this notebook writes (fj.RESULTS_CSV, $FUSED_RESULTS)
    and, where that is another file (a GPU run's or a test's own log), the committed results/timings.csv
    too, oldest first; so a lesson's rung is drawn beside the rungs logged before it, and the latest row wins."""
    committed = fj.ROOT / "results" / "timings.csv"
    logs = [fj.read_results()]
    if Path(fj.RESULTS_CSV).resolve() != committed.resolve():
        logs.insert(0, fj.read_results(committed))
    df = pd.concat([d for d in logs if not d.empty] or logs, ignore_index=True)
    return df.sort_values("timestamp", kind="stable", ignore_index=True) if "timestamp" in df else df


def src_path(name: str) -> Path:
    """A variant name (e.g. 'naive') or a file in kernels/ (e.g. 'common.cuh') -> its path."""
    return fj.KERNELS_DIR / name if "." in name else fj.variant_info(name).path


def header(name: str) -> str:
    """The leading // comment block of a kernel file: the idea, the prediction, the ptxas summary."""
    lines = src_path(name).read_text().splitlines()
    out = []
    for ln in lines:
        if not ln.startswith("//"):
            break
        out.append(ln)
    return "\n".join(out)


def prediction(name: str) -> str:
    """The 'Predicted ...' lines of a kernel's header (up to 'Measured'), or the whole header."""
    lines = header(name).splitlines()
    start = next((i for i, ln in enumerate(lines) if "Predicted" in ln), None)
    if start is None:
        return "\n".join(lines)
    end = next((i for i in range(start + 1, len(lines)) if "Measured" in lines[i]), len(lines))
    return "\n".join(lines[start:end])


def show_source(name: str, start: str, end: str, after: int = 0) -> None:
    """Print a kernel file from the first line containing `start` to the next containing `end`
    (plus `after` more lines), with line numbers: found by marker, so edits elsewhere do not shift it.

    Raises ValueError when a marker is missing (tests/test_notebooks.py checks every call's markers)."""
    path = src_path(name)
    lines = path.read_text().splitlines()
    i = next((n for n, ln in enumerate(lines) if start in ln), None)
    if i is None:
        raise ValueError(f"marker {start!r} not found in {path.name}")
    j = next((n for n in range(i + 1, len(lines)) if end in lines[n]), None)
    if j is None:
        raise ValueError(f"marker {end!r} not found after line {i + 1} of {path.name}")
    j = min(j + after, len(lines) - 1)
    print(f"--- {path.name}, lines {i + 1}-{j + 1} ---")
    for n in range(i, j + 1):
        print(f"{n + 1:4d}  {lines[n]}")


def check_summary(name: str, table, ok: bool | None = None) -> None:
    """One line per checked variant: pass/fail over the battery, worst error, the bound.

    `table` is a correctness table of fused_jit (columns status, rel_err, tolerance); rows whose status
    starts with 'unsupported' are counted as refused. With `ok` None (a part of a table, e.g. one dtype),
    PASS means every shape run passed."""
    ran = table[~table["status"].str.startswith("unsupported")]
    if ok is None:
        ok = len(ran) > 0 and bool((ran["status"] == "pass").all())
    print(f"{name:>22}: {'PASS' if ok else 'FAIL'}  {len(ran)} shapes run, "
          f"{len(table) - len(ran)} refused (ModelNew routes those elsewhere), "
          f"worst rel. err {ran['rel_err'].max():.2e} (bound {table['tolerance'].iloc[0]:g})")


@contextlib.contextmanager
def tf32_off():
    """cuDNN and matmul TF32 off (an fp32 reference that is really fp32), restored afterwards."""
    old = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = old


def show_ab(r: dict) -> None:
    """One line for an A/B result of fj.ab: both medians, the ratio t_a/t_b with its 95% interval, the verdict."""
    print(f"{r['a']} vs {r['b']}: {r['median_a_us']:.2f} us vs {r['median_b_us']:.2f} us; "
          f"ratio t_a/t_b = {r['ratio']:.3f} [95% CI {r['ci_low']:.3f}, {r['ci_high']:.3f}] -> {r['a']} is {r['verdict']}")
