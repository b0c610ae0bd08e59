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
import sys, pathlib  # the repository root (the folder of fused_jit.py) on sys.path: the package is not installed
sys.path.insert(0, str(next(p for p in [pathlib.Path.cwd(), *pathlib.Path.cwd().parents] if (p / "fused_jit.py").is_file())))

# %% tags=["parameters"]
# Parameters (papermill can override them): the problem shape and the timed calls per measurement.
B, C_in, C_out, T, K, dilation = 16, 128, 128, 2048, 5, 2
REPS = 200

# %%
from fusedkit.notebook import *  # np, pd, torch, plt, fj, setup and the lessons' helpers: fusedkit/notebook.py
HAS_GPU, DEVICE, SHAPE, RUN_SHAPE, RUN_REPS, SMALL_SHAPES = setup(B, C_in, C_out, T, K, dilation, REPS)

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
# Rungs 2 and 3 beside the naive rung, from the results log: `fj.plot_rung_times` draws the latest GPU `bench` row of each rung at this shape
# (p10-p90 whiskers), with eager, `torch.compile`, `clone` and the memory floor as lines. `logged_results()` is this
# notebook's log plus the committed `results/timings.csv`, so without a GPU the picture shows the logged GPU runs.

# %%
fig = fj.plot_rung_times(["smem_tiled", "register_blocked"], logged_results(), shape=SHAPE)
plt.show()

# %% [markdown]
# **Interpretation.** The gain of rung 2 over the naive kernel comes from removing the repeated depthwise and
# SiLU work counted in notebook 2; compare the measured time with the header's prediction, which modelled the
# pointwise loop as bound by load issue (one shared-memory load and global weight loads per multiply-add).
# Rung 3's gain comes from the ratio of loads to FMAs inside the loop: with a register tile, a few wide
# shared-memory loads feed many FMAs, so the kernel approaches the FP32 FMA limit the header computes. The
# `useful TFLOP/s` column shows how close each gets; the `x floor` column shows how far both still are from
# the memory floor, which no FP32-CUDA-core GEMM of this size can reach.
