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
# # 5. Tensor cores, and what they cost in accuracy (rungs 5-7)
#
# **Why.** The pointwise GEMM on FP32 CUDA cores takes longer than moving the bytes, so the fp32 rungs cannot
# reach the floor. Tensor cores do the GEMM many times faster, at a price:
#
# * rung 5, `tf32_mma`: `mma.sync` on TF32 operands (fp32 with the mantissa rounded to 10 bits), fp32
#   accumulation. Fast; the error moves to the TF32 class, the same class as eager PyTorch's default.
# * rung 6, `3xtf32_mma`: each operand split into a TF32 "big" part and a TF32 "small" remainder, three MMAs per
#   product: back to the strict fp32 class, for about three times the tensor-core work.
# * rung 7, `bf16_io`: rung 5 with bfloat16 (or float16) input and output: half the bytes, so half the floor,
#   and an error set by the 8-bit mantissa of the output.
#
# The accuracy classes, as relative error against float64: strict 1e-6, TF32 5e-4, bf16 1e-2.

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
# ## The three rungs' plans and predictions

# %%
for name in ("tf32_mma", "3xtf32_mma", "bf16_io"):
    print(fj.variant_info(name))
    print(header(name), "\n")

# %% [markdown]
# ## The source that matters
#
# The three rungs share one tile kernel in `common.cuh`. First the rounding: `cvt.rna.tf32.f32` rounds fp32
# to TF32, and the 3xTF32 split keeps the part that rounding dropped.

# %%
show_source("common.cuh", "// fp32 -> tf32", "small = tc_tf32(v - __uint_as_float(big));", after=1)

# %% [markdown]
# The inner loop: one MMA per fragment pair for TF32, three (small x big, big x small, big x big) into a
# zeroed partial tile for 3xTF32, added to the accumulator with an ordinary fp32 add.

# %%
show_source("tc_tile.cuh", "if constexpr (!kSplit3) {", "// Epilogue: c0,c1")

# %% [markdown]
# Rung 7 instantiates the same kernel for each I/O type:

# %%
show_source("bf16_io", "switch (a.dtype)", "default:")

# %% [markdown]
# ## Accuracy: the error of every rung at the headline shape
#
# `fj.check` at one shape for each CUDA rung in float32, and for `bf16_io` in bfloat16 as well, against
# float64. The plot draws the three class bounds; a bar must stay below its class's line.

# %%
acc_rows = []
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant's error at a small shape is plotted instead)")
    t, ok = fj.check("cpu", shapes=[RUN_SHAPE], trials=1)
    acc_rows.append(dict(variant="cpu", dtype="float32", accuracy=fj.variant_info("cpu").accuracy,
                         rel_err=t["rel_err"].iloc[0], status=t["status"].iloc[0]))
else:
    for name in fj.variants("cuda"):
        for dt in ["float32"] + (["bfloat16"] if "bfloat16" in fj.variant_info(name).dtypes else []):
            t, ok = fj.check(name, shapes=[SHAPE], dtypes=[dt], trials=1)
            acc_rows.append(dict(variant=name, dtype=dt, accuracy=fj.variant_info(name).accuracy,
                                 rel_err=t["rel_err"].iloc[0], status=t["status"].iloc[0]))
accuracy = pd.DataFrame(acc_rows)
accuracy

# %%
labels = [f"{r.variant}" + ("" if r.dtype == "float32" else f"\n({r.dtype})") for r in accuracy.itertuples()]
colors = {"strict": "#4c72b0", "tf32": "#dd8452", "bf16": "#55a868"}
fig, ax = plt.subplots(figsize=(9, 4))
ax.bar(labels, accuracy["rel_err"], color=[colors[a] for a in accuracy["accuracy"]])
for cls, bound in fj.TOLERANCE.items():
    ax.axhline(bound, color=colors[cls], ls="--", lw=1, label=f"{cls} bound {bound:g}")
ax.set_yscale("log")
ax.set_ylabel("relative error vs float64 (log)")
ax.set_title(f"Error per rung at {RUN_SHAPE['B']}x{RUN_SHAPE['C_in']}x{RUN_SHAPE['T']}, K={K}, d={dilation}")
ax.legend(fontsize=8, loc="upper left")
plt.setp(ax.get_xticklabels(), rotation=20, ha="right")
fig.tight_layout()
plt.show()

# %% [markdown]
# ## The whole battery for the new rungs

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped")
else:
    for name in ("tf32_mma", "3xtf32_mma", "bf16_io"):
        table, ok = fj.check(name)
        for dt, part in table.groupby("dtype", sort=False):
            check_summary(f"{name} [{dt}]", part)

# %% [markdown]
# ## Time
#
# The fp32 rungs 4-7 in one run, then `bf16_io` with bfloat16 input and output (`dtype="bfloat16"`), whose
# floor is half the fp32 one. The baselines in the bfloat16 run also take bfloat16 input.

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant stands in, on a small shape)")
    timing = fj.bench(["cpu"], shape=RUN_SHAPE, reps=RUN_REPS)
    timing_bf16 = None
else:
    timing = fj.bench(["vectorized_pipelined", "tf32_mma", "3xtf32_mma", "bf16_io"], shape=SHAPE, reps=REPS)
    timing_bf16 = fj.bench(["bf16_io"], shape=SHAPE, dtype="bfloat16", reps=REPS)
timing[BENCH_COLS]

# %%
if timing_bf16 is None:
    print("needs a CUDA GPU: skipped")
else:
    display(timing_bf16[BENCH_COLS])
    both = pd.concat([timing, timing_bf16])
    both = both[~both["variant"].isin(fj.BASELINES)]
    trade = both[["variant", "dtype", "median_us", "rel_err", "floor_us", "x_floor"]].copy()
    trade["accuracy class"] = [fj.variant_info(n).accuracy for n in trade["variant"]]
    trade["within bound"] = [e <= fj.tolerance(n, d) for n, d, e in zip(trade["variant"], trade["dtype"], trade["rel_err"])]
    print(trade.to_string(index=False, float_format="{:.3g}".format))

# %% [markdown]
# Rungs 5-7 beside the rungs before them (`bf16_io` in float32 and bfloat16 I/O), from the results log: `fj.plot_rung_times` draws the latest GPU `bench` row of each rung at this shape
# (p10-p90 whiskers), with eager, `torch.compile`, `clone` and the memory floor as lines. `logged_results()` is this
# notebook's log plus the committed `results/timings.csv`, so without a GPU the picture shows the logged GPU runs.

# %%
fig = fj.plot_rung_times(["tf32_mma", "3xtf32_mma", "bf16_io"], logged_results(), shape=SHAPE)
plt.show()

# %% [markdown]
# **Interpretation.** The bar plot is the trade-off in one picture: the strict rungs (including 3xTF32) sit
# orders of magnitude below the TF32 ones, and bfloat16 I/O is set by the rounding of the output, far above
# both but inside its own class. The timings show what each step of accuracy costs: compare the TF32 rung with
# the fp32 rung 4 (the tensor-core speed-up), the 3xTF32 rung with the TF32 one (the price of getting strict
# accuracy back on tensor cores), and `x_floor` for each, which says how close to the memory floor of its own
# I/O type each kernel gets. Set the numbers against the headers' predictions: a rung far from its prediction
# is the one to profile next.
