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
# # 2. The naive kernel
#
# **Why.** The first rung is the kernel a newcomer writes: one thread per output element `y[b, oc, t]`,
# each doing all the work that output needs. It is short, obviously correct, and slow. We read its source,
# compile it with `fj.load`, check it against float64 with `fj.check`, time it with `fj.bench`, and then
# count the work it repeats to see *why* it is slow. Last, we break it on purpose to see what a compile
# error looks like through `fj.load`.

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
# ## The source
#
# Read from `kernels/01_naive.cu` (the file is the truth; nothing is pasted here). The header comment states
# the idea and the prediction; `fused_forward` is what the shared launcher calls.

# %%
info = fj.variant_info("naive")
print(info)
print(info.path.read_text())

# %% [markdown]
# Each thread calls `dw_silu_at` from the shared header for every input channel: the depthwise convolution
# of one time step plus the SiLU, with zero padding.

# %%
show_source("common.cuh", "// Depthwise dilated conv + bias + SiLU for one", "return silu(acc);", after=1)

# %% [markdown]
# ## Compile: `fj.load`
#
# `fj.load(variant)` compiles the kernel file together with the shared launcher through
# `torch.utils.cpp_extension.load_inline` on first use. The extension's name carries a hash of the kernel, the
# headers it includes, the launcher and the flags: an edit rebuilds, an unchanged file loads from the cache.

# %%
import time
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant is loaded instead, through the same path)")
    name = "cpu"
else:
    name = "naive"
t0 = time.perf_counter()
ext = fj.load(name)
print(f"{name}: loaded {ext.__name__} in {time.perf_counter() - t0:.1f} s (source hash {fj.source_hash(name)})")
print("build folder:", fj.build_root())

# %% [markdown]
# ## Check: `fj.check`
#
# `fj.check` compares the kernel with a float64 reference over a battery of shapes (odd lengths, `T = 1`,
# `T` shorter than the filter span, `C_in != C_out`, no bias, many `K` x `dilation`), with fresh random inputs
# per trial and the output poisoned with NaN beforehand, so an element the kernel forgets to write fails.
# The naive kernel is in the strict fp32 class (relative error at most 1e-6).

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant stands in, on the small shapes of the battery)")
    table, ok = fj.check("cpu", shapes=SMALL_SHAPES, trials=1)
    check_summary("cpu", table, ok)
else:
    table, ok = fj.check("naive")
    check_summary("naive", table, ok)
table[["B", "C_in", "C_out", "T", "K", "dilation", "bias", "rel_err", "status"]].head(10)

# %% [markdown]
# ## Time: `fj.bench`
#
# The same harness as the baselines: CUDA events, the L2 flushed before each call, the median with p10/p90,
# the baselines timed in the same run, one row per variant appended to the results log.

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant stands in, on a small shape)")
    timing = fj.bench(["cpu"], shape=RUN_SHAPE, reps=RUN_REPS)
else:
    timing = fj.bench(["naive"], shape=SHAPE, reps=REPS)
timing[BENCH_COLS]

# %% [markdown]
# The naive rung beside the baselines, from the results log: `fj.plot_rung_times` draws the latest GPU `bench` row of each rung at this shape
# (p10-p90 whiskers), with eager, `torch.compile`, `clone` and the memory floor as lines. `logged_results()` is this
# notebook's log plus the committed `results/timings.csv`, so without a GPU the picture shows the logged GPU runs.

# %%
fig = fj.plot_rung_times("naive", logged_results(), shape=SHAPE)
plt.show()

# %% [markdown]
# ## Why it is slow, in numbers
#
# Every output recomputes, for each of the `C_in` input channels, the depthwise convolution (`K`
# multiply-adds and `K` loads of `x`) and one SiLU (an `expf` and a division), then does one pointwise
# multiply-add. But the depthwise + SiLU result of `(b, ic, t)` does not depend on the output channel: the
# naive kernel computes each one `C_out` times. The fused minimum computes each once.

# %%
T_out = T + 2 * ((K - 1) * dilation // 2) - dilation * (K - 1)
n_out = B * C_out * T_out                 # outputs, one thread each
n_act = B * C_in * T_out                  # distinct depthwise+SiLU values
work = pd.DataFrame({
    "naive kernel": [n_out * C_in * K, n_out * C_in, n_out * C_in, n_out * C_in * K],
    "fused minimum": [n_act * K, n_act, n_out * C_in, B * C_in * T],
}, index=["depthwise FMAs", "expf + division (SiLU)", "pointwise FMAs", "x element loads"])
work["naive / minimum"] = work["naive kernel"] / work["fused minimum"]
print(f"at {SHAPE}:")
print(work.to_string(float_format="{:.3g}".format))
naive_ops = work.loc[["depthwise FMAs", "pointwise FMAs"], "naive kernel"].sum()
min_ops = work.loc[["depthwise FMAs", "pointwise FMAs"], "fused minimum"].sum()
print(f"FMAs: naive {naive_ops:.3g} vs minimum {min_ops:.3g} ({naive_ops / min_ops:.1f}x); "
      f"every SiLU is computed {C_out}x (= C_out)")
if not HAS_GPU:
    print("needs a CUDA GPU for the achieved rates: skipped")
else:
    t_us = float(timing.loc[timing["variant"] == "naive", "median_us"].iloc[0])
    print(f"naive: {t_us:.0f} us -> useful {fj.flops(SHAPE) / (t_us * 1e-6) / 1e12:.3f} TFLOP/s, "
          f"executed {2 * naive_ops / (t_us * 1e-6) / 1e12:.2f} TFLOP/s of FMAs plus "
          f"{n_out * C_in / (t_us * 1e-6) / 1e12:.2f} T expf/s; {t_us / float(timing['floor_us'].iloc[0]):.0f}x the floor")

# %% [markdown]
# **Interpretation.** The table shows where the time goes: the pointwise multiply-adds are the same as the
# minimum, but the depthwise work, the SiLUs (each an `expf` and a division, far costlier than an FMA) and the
# `x` loads are all multiplied by `C_out`. The kernel is bound by that redundant arithmetic and latency, not by
# memory: compare its time with the floor and with eager in the bench table. The cure is to compute the
# depthwise + SiLU activations once and share them among all output channels, which needs on-chip storage
# that the threads of a block share: shared memory, the next notebook.

# %% [markdown]
# ## When it does not compile
#
# A kernel file with a syntax error should fail loudly and point at the line. We copy `kernels/` into a
# temporary folder, remove a semicolon from the copy of `01_naive.cu` there, and load the variant from that
# folder (`kernels_dir=`). The real `kernels/` is never touched, and the failed build goes to a temporary
# build folder too. `fj.load` raises `fj.KernelBuildError`, whose message starts with nvcc's error lines; the
# sources are compiled under a `#line` directive, so nvcc names the kernel file and its own line number. This
# runs without a GPU as well: nvcc compiles (and fails) without one.

# %%
import os, re, shutil, tempfile
with tempfile.TemporaryDirectory() as tmp:
    kdir = pathlib.Path(tmp) / "kernels"
    shutil.copytree(fj.KERNELS_DIR, kdir)
    broken = kdir / "01_naive.cu"
    src = broken.read_text()
    assert "y[idx] = acc;" in src, "the statement to break is not in 01_naive.cu any more"
    broken.write_text(src.replace("y[idx] = acc;", "y[idx] = acc", 1))  # a missing semicolon
    old_ext_dir = os.environ.get("TORCH_EXTENSIONS_DIR")
    os.environ["TORCH_EXTENSIONS_DIR"] = str(pathlib.Path(tmp) / "build")  # keep the failed build out of .cache/
    t0 = time.perf_counter()
    try:
        fj.load("naive", kernels_dir=kdir)
        print("unexpected: the broken kernel compiled")
    except fj.KernelBuildError as e:
        msg = str(e)
        print(f"KernelBuildError after {time.perf_counter() - t0:.0f} s; the first lines of its message:\n")
        print("\n".join(msg.splitlines()[:4]))
        m = re.search(r"01_naive\.cu\((\d+)\)", msg)
        if m:  # show the line nvcc names, from the broken copy
            line = int(m.group(1))
            print(f"\nline {line} of the broken copy and its neighbours:")
            for n, text in enumerate(broken.read_text().splitlines()[line - 2:line + 1], start=line - 1):
                print(f"{n:4d}  {text}")
    finally:
        if old_ext_dir is None:
            os.environ.pop("TORCH_EXTENSIONS_DIR", None)
        else:
            os.environ["TORCH_EXTENSIONS_DIR"] = old_ext_dir
print("real kernels/01_naive.cu untouched:", "y[idx] = acc;" in fj.variant_info("naive").path.read_text())

# %% [markdown]
# **Interpretation.** The first lines of the exception are nvcc's own: the path of the file in the temporary
# kernels folder, the line number in parentheses and the complaint. The statement it points at (or the one
# just before it, as is usual for a missing semicolon) is the one we broke. The full build log follows in the
# message for anything less obvious, such as a link error.
