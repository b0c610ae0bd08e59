# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: -papermill,-execution
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 3. Shared-memory tiling and register blocking (rungs 2 and 3)
#
# **Why.** The naive kernel recomputes each depthwise + SiLU activation once per output channel. Rung 2
# (`smem_tiled`) lets a thread block compute the activations of one time tile *once*, for all input channels,
# into shared memory, and then produce every output channel from there. That removes the redundant work but
# leaves the pointwise loop limited by how fast it can issue loads. Rung 3 (`register_blocked`) treats the
# pointwise conv as what it is, a GEMM (`y[b] = W_pw @ act[b]`), and has every thread accumulate a small tile of
# outputs in registers, so that each value loaded from shared memory feeds several multiply-adds.

# %%
# Make the repository root (the folder holding fused_jit.py) importable, wherever Jupyter started.
import sys, pathlib
ROOT = next(p for p in [pathlib.Path.cwd(), *pathlib.Path.cwd().parents] if (p / "fused_jit.py").is_file())
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
print("repository:", ROOT)

# %% tags=["parameters"]
# Parameters (papermill can override them): the problem shape and the timed calls per measurement.
B, C_in, C_out, T, K, dilation = 16, 128, 128, 2048, 5, 2
REPS = 200

# %%
import os, re, shutil, tempfile, time, importlib.util
import numpy as np
import pandas as pd
import torch
import matplotlib.pyplot as plt
import fused_jit as fj
from fusedkit.notebook import src_path, header, prediction, show_source, check_summary  # fusedkit/notebook.py

HAS_GPU = torch.cuda.is_available()
SHAPE = dict(B=B, C_in=C_in, C_out=C_out, T=T, K=K, dilation=dilation, bias=True)
if HAS_GPU:
    DEVICE, RUN_SHAPE, RUN_REPS = "cuda", SHAPE, REPS
else:  # no GPU: the CPU variant stands in, on a small shape with few calls, so the notebook stays quick
    DEVICE, RUN_SHAPE, RUN_REPS = "cpu", dict(SHAPE, B=min(B, 2), T=min(T, 256)), min(REPS, 5)
# small shapes of the correctness battery, for CPU stand-in checks
SMALL_SHAPES = [s for s in fj.shape_battery() if s["B"] * s["C_in"] * s["T"] <= 200_000]
BENCH_COLS = ["variant", "dtype", "median_us", "p10_us", "p90_us", "rel_err", "gbps", "x_floor", "speedup_vs_eager"]
pd.set_option("display.width", 200)
pd.set_option("display.float_format", "{:.4g}".format)

print("device:", torch.cuda.get_device_name() if HAS_GPU else "no CUDA GPU (CPU stand-ins, small shapes)")
print("torch", torch.__version__, "| CUDA", torch.version.cuda, "| nvcc toolkit", fj.CUDA_HOME)
print("shape:", SHAPE, "| run shape:", RUN_SHAPE, "| reps:", RUN_REPS)
print("results log:", fj.RESULTS_CSV)

# %% [markdown]
# ## Rung 2: depthwise once per tile
#
# The header states the plan and a prediction made before the kernel was timed.

# %%
print(fj.variant_info("smem_tiled"))
print(header("smem_tiled"))

# %% [markdown]
# The part that matters: phase 1 fills the shared activation tile (each `(ic, t)` computed once), a barrier,
# then phase 2 runs the pointwise loop over `C_in` from shared memory, each thread holding a few output
# channels' accumulators.

# %%
show_source("smem_tiled", "// Phase 1: depthwise", "if (oc < C_out) y[", after=3)

# %% [markdown]
# ## Rung 3: a register-blocked GEMM
#
# Here a block computes a tile of `y` (output channels x time steps) and walks `C_in` in chunks: per chunk it
# stages the transposed weights and the activation chunk in shared memory, then every thread forms outer
# products into its register tile.

# %%
print(fj.variant_info("register_blocked"))
print(header("register_blocked"))

# %%
show_source("register_blocked", "for (int64_t ic0 = 0; ic0 < C_in; ic0 += IC_CHUNK)", "// Epilogue")

# %% [markdown]
# ## Predictions
#
# Taken from the headers, to hold the measurements against.

# %%
for name in ("smem_tiled", "register_blocked"):
    print(f"== {name}\n{prediction(name)}\n")

# %% [markdown]
# ## Check
#
# Both rungs are in the strict fp32 class: they change the order of work, not its precision.

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant, which follows rung 2's plan, stands in on small shapes)")
    table, ok = fj.check("cpu", shapes=SMALL_SHAPES, trials=1)
    check_summary("cpu", table, ok)
else:
    for name in ("smem_tiled", "register_blocked"):
        table, ok = fj.check(name)
        check_summary(name, table, ok)

# %% [markdown]
# ## Time and gain
#
# The naive rung is timed again in the same run, so the gains are ratios of numbers measured together.

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant stands in, on a small shape)")
    timing = fj.bench(["cpu"], shape=RUN_SHAPE, reps=RUN_REPS)
else:
    timing = fj.bench(["naive", "smem_tiled", "register_blocked"], shape=SHAPE, reps=REPS)
timing[BENCH_COLS]

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped")
else:
    rungs = timing[timing["variant"].isin(["naive", "smem_tiled", "register_blocked"])].set_index("variant")
    gain = pd.DataFrame({
        "median_us": rungs["median_us"],
        "gain over previous rung": rungs["median_us"].shift(1) / rungs["median_us"],
        "gain over naive": rungs["median_us"].iloc[0] / rungs["median_us"],
        "useful TFLOP/s": fj.flops(SHAPE) / (rungs["median_us"] * 1e-6) / 1e12,
        "x floor": rungs["x_floor"],
    })
    print(gain.to_string(float_format="{:.3g}".format))

# %% [markdown]
# **Interpretation.** The gain of rung 2 over the naive kernel comes from removing the repeated depthwise and
# SiLU work counted in notebook 2; compare the measured time with the header's prediction, which modelled the
# pointwise loop as bound by load issue (one shared-memory load and global weight loads per multiply-add).
# Rung 3's gain comes from the ratio of loads to FMAs inside the loop: with a register tile, a few wide
# shared-memory loads feed many FMAs, so the kernel approaches the FP32 FMA limit the header computes. The
# `useful TFLOP/s` column shows how close each gets; the `x floor` column shows how far both still are from
# the memory floor, which no FP32-CUDA-core GEMM of this size can reach.
