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
# # 4. Vectorized loads and a software pipeline (rung 4)
#
# **Why.** Rung 3 is nearly FMA bound but still stalls: each chunk loads its inputs, waits at a barrier,
# computes, and only then loads the next chunk, and it re-stages the pointwise weights for every chunk of
# every tile. Rung 4 (`vectorized_pipelined`) keeps the same register-blocked GEMM and attacks the overheads
# around it:
#
# * a persistent grid: each block loops over tiles and keeps its slice of the weights resident in shared memory;
# * `cp.async` copies of the next chunk's `x` window (16-byte copies when alignment allows) that are in flight
#   while the current chunk computes (two stages);
# * wide (`float4`) streaming stores of the output.

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
# ## The plan and the prediction

# %%
print(fj.variant_info("vectorized_pipelined"))
print(header("vectorized_pipelined"))

# %% [markdown]
# ## The source that matters
#
# The asynchronous copy helpers, from the shared header: `cp.async` moves global memory straight into shared
# memory without passing through registers, and a thread waits only for the groups it needs.

# %%
show_source("cp_async.cuh", "// ---- cp.async", "cp_async_wait() {")

# %% [markdown]
# The pipeline in the kernel's main loop: wait for this step's stage, then issue the copies of the *next* step
# into the other stage before computing this one.

# %%
show_source("vectorized_pipelined", "issue_step(p, item, 0, Xs, Ws);", "// Resident W^T")

# %% [markdown]
# The epilogue: a warp writes whole rows of `y` with 16-byte streaming stores (`__stcs`), falling back to scalar
# stores when the length or alignment does not allow it.

# %%
show_source("vectorized_pipelined", "// Tile done: float4 streaming stores", "chunk = 0;")

# %%
print(prediction("vectorized_pipelined"))

# %% [markdown]
# ## Check
#
# Still strict fp32; the fallbacks (scalar copies, streamed weights) are exercised by the odd shapes of the
# battery.

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant stands in on small shapes)")
    table, ok = fj.check("cpu", shapes=SMALL_SHAPES, trials=1)
    check_summary("cpu", table, ok)
else:
    table, ok = fj.check("vectorized_pipelined")
    check_summary("vectorized_pipelined", table, ok)
    print(table["status"].value_counts().to_string())

# %% [markdown]
# ## Time and gain over rung 3

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant stands in, on a small shape)")
    timing = fj.bench(["cpu"], shape=RUN_SHAPE, reps=RUN_REPS)
else:
    timing = fj.bench(["register_blocked", "vectorized_pipelined"], shape=SHAPE, reps=REPS)
timing[BENCH_COLS]

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped")
else:
    r = timing.set_index("variant")
    t3, t4 = r.loc["register_blocked", "median_us"], r.loc["vectorized_pipelined", "median_us"]
    print(f"register_blocked {t3:.1f} us -> vectorized_pipelined {t4:.1f} us: {t3 / t4:.2f}x")
    for name, t in (("register_blocked", t3), ("vectorized_pipelined", t4)):
        print(f"{name:>22}: useful {fj.flops(SHAPE) / (t * 1e-6) / 1e12:.1f} TFLOP/s, "
              f"{r.loc[name, 'gbps']:.0f} GB/s of minimum traffic, {r.loc[name, 'x_floor']:.2f}x the floor")

# %% [markdown]
# Rung 4 beside the rungs before it, from the results log: `fj.plot_rung_times` draws the latest GPU `bench` row of each rung at this shape
# (p10-p90 whiskers), with eager, `torch.compile`, `clone` and the memory floor as lines. `logged_results()` is this
# notebook's log plus the committed `results/timings.csv`, so without a GPU the picture shows the logged GPU runs.

# %%
fig = fj.plot_rung_times("vectorized_pipelined", logged_results(), shape=SHAPE)
plt.show()

# %% [markdown]
# **Interpretation.** The gain printed above is what overlapping the loads with compute and loading the weights
# once per block buys; set it against the header's prediction, which expected the kernel to stay FMA bound and
# approach the FP32 peak. The `useful TFLOP/s` line is the key number: once it is a large fraction of what the
# FP32 CUDA cores can do, no further memory trick helps, because the pointwise GEMM itself takes longer than the
# memory floor. Getting to the floor needs faster arithmetic: tensor cores, the next notebook.
