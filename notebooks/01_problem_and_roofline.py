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
# # 1. The problem and its roofline
#
# **Why start here.** Before writing a kernel we want to know what "fast" means for this op. We count the
# bytes the op must move and the arithmetic it must do, measure how fast this GPU can move bytes, and
# time what PyTorch already does. The result is a *floor* (no kernel can beat it) and a set of *baselines*
# (every kernel must beat them to be worth having). Every later notebook measures against these.
#
# The op is `y = pw(silu(dw(x)))` on a channels-first input `x` of shape `(B, C_in, T)`:
#
# * `dw`: a depthwise, dilated `Conv1d` (one length-`K` filter per channel, `groups = C_in`, "same" padding);
# * SiLU: `v * sigmoid(v)`;
# * `pw`: a pointwise (1x1) `Conv1d` from `C_in` to `C_out` channels, i.e. a matrix multiply per batch.
#
# The cells below run on a CPU-only machine too: where a GPU is needed they say so and skip, or use a CPU
# stand-in on a small shape.

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
# ## The reference model
#
# `fj.Model` is the PyTorch reference (the KernelBench `Model`): two `nn.Conv1d` submodules, `dw` and `pw`.
# Every kernel is checked against a float64 copy of it.

# %%
import inspect
print(inspect.getsource(fj.Model))
torch.manual_seed(0)
model = fj.Model(C_in, C_out, K, dilation)
print(model)
pad = model.dw.padding[0]
T_out = T + 2 * pad - dilation * (K - 1)
print(f"padding = (K-1)*dilation//2 = {pad}; T_out = T + 2*pad - dilation*(K-1) = {T_out}")

# %%
# The same computation written out with the functional API, on a small input: the op is nothing more.
x_small = torch.randn(2, C_in, 64)
with torch.no_grad():
    y_model = model(x_small)
    v = torch.nn.functional.conv1d(x_small, model.dw.weight, model.dw.bias, padding=pad, dilation=dilation,
                                   groups=C_in)
    y_manual = torch.nn.functional.conv1d(v * torch.sigmoid(v), model.pw.weight, model.pw.bias)
print("x", tuple(x_small.shape), "-> y", tuple(y_model.shape),
      "| max |model - manual| =", float((y_model - y_manual).abs().max()))

# %% [markdown]
# ## Bytes and FLOPs
#
# A fused kernel has to read `x` once and write `y` once; the weights are tiny next to them. That is
# `fj.min_bytes`. The arithmetic (`fj.flops`, a multiply-add counted as 2 FLOPs) is the depthwise
# conv (`K` multiply-adds per activation) plus the pointwise GEMM (`C_in` multiply-adds per output).
# Their ratio, the arithmetic intensity, says which resource should limit a good kernel.

# %%
nbytes = fj.min_bytes(SHAPE)
nbytes_bf16 = fj.min_bytes(SHAPE, "bfloat16")
fl = fj.flops(SHAPE)
fl_dw = 2 * B * T * C_in * K
fl_pw = 2 * B * T * C_in * C_out
x_bytes, y_bytes = 4 * B * C_in * T, 4 * B * C_out * T_out
print(f"x: {x_bytes / 1e6:.1f} MB, y: {y_bytes / 1e6:.1f} MB, weights: {(nbytes - x_bytes - y_bytes) / 1e3:.1f} KB")
print(f"minimum bytes: {nbytes / 1e6:.1f} MB in float32, {nbytes_bf16 / 1e6:.1f} MB with bfloat16 I/O")
print(f"FLOPs: {fl / 1e9:.3f} GFLOP = depthwise {fl_dw / 1e9:.3f} ({fl_dw / fl:.1%}) + pointwise {fl_pw / 1e9:.3f} ({fl_pw / fl:.1%})")
print(f"arithmetic intensity: {fl / nbytes:.1f} FLOP/byte (float32 I/O)")

# %% [markdown]
# ## The floor: measured copy bandwidth
#
# The memory roof is not the datasheet number but what a plain device-to-device copy achieves here:
# `fj.copy_bandwidth` times a large copy (read + write counted). The floor of our op is
# `min_bytes / bandwidth`; the FLOP rate a kernel would need to finish its arithmetic in that time tells us
# which execution units can possibly get there.

# %%
if HAS_GPU:
    bw = fj.copy_bandwidth()
    label = "GPU device copy"
else:
    print("needs a CUDA GPU for the real floor: CPU copy bandwidth shown as a stand-in")
    bw = fj.copy_bandwidth("cpu", nbytes=2**26)
    label = "CPU memory copy (stand-in)"
floor_us = nbytes / bw * 1e6
print(f"{label}: {bw / 1e12:.3f} TB/s")
print(f"floor at {SHAPE}: {floor_us:.2f} us (float32 I/O), {nbytes_bf16 / bw * 1e6:.2f} us (bfloat16 I/O)")
print(f"to finish the arithmetic within the floor a kernel must sustain {fl / (floor_us * 1e-6) / 1e12:.1f} TFLOP/s")

# %% [markdown]
# ## The baselines, timed by `fj.bench`
#
# `fj.bench` with no variants times only the baselines, in one run, with the L2 cache flushed before every
# call (the input would otherwise sit in L2 and we would time the cache), and appends the rows to the results
# log:
#
# * `eager`: PyTorch as users run it. cuDNN's TF32 is on by default, so its convolutions round their inputs
#   to TF32: its relative error against float64 is in the TF32 class, not the strict fp32 class.
# * `eager_fp32`: the same with TF32 off (strict fp32).
# * `compile`: `torch.compile` of the model.
# * `clone`: `x.clone()`, a copy of the input, the simplest memory-bound kernel.

# %%
if HAS_GPU:
    base = fj.bench(variant_names=[], shape=SHAPE, reps=REPS)
else:
    print("needs a CUDA GPU for the GPU baselines: CPU eager (TF32 on/off makes no difference there) on a small shape")
    base = fj.bench(variant_names=[], shape=RUN_SHAPE, reps=RUN_REPS, baselines=("eager", "eager_fp32"))
print(f"{base['device_name'].iloc[0]} | floor {base['floor_us'].iloc[0]:.2f} us")
base[BENCH_COLS]

# %% [markdown]
# **Reading the table.** `x_floor` is each baseline's time over the floor: how far PyTorch is from what the
# memory system allows. `rel_err` is the error against float64: compare `eager` with `eager_fp32` to see
# what TF32 costs in accuracy and buys in time. `clone` is the practical memory-bound reference: a kernel
# that reads and writes the same number of bytes cannot do much better than a copy. On the CPU stand-in the
# floor is not measured (the column is empty) and the numbers only show that the machinery runs.

# %% [markdown]
# ## The roofline, from the results log
#
# The floor, the baselines and every rung of the ladder in one picture (`fj.plot_roofline`): x is the arithmetic
# intensity (the op's FLOPs over its minimum bytes), y the FLOP rate achieved (FLOPs over the median time). The
# memory roof is the copy bandwidth measured in the bench runs, the compute roofs are the GPU's datasheet peaks
# (FP32 CUDA cores, TF32 and BF16 tensor cores). Each point is the latest GPU `bench` row of a rung or baseline at
# this shape; `logged_results()` reads this notebook's log plus the committed `results/timings.csv`, so without a
# GPU the picture shows the logged GPU runs.

# %%
fig = fj.plot_roofline(logged_results(), shape=SHAPE)
plt.show()

# %% [markdown]
# **Reading the roofline.** Every float32 kernel computes the same op and must move the same bytes, so all of them
# sit on one vertical line, at the op's intensity; bfloat16 I/O halves the bytes and doubles it. The floor (the
# star) is the op at the copy bandwidth, on the memory roof; a point's distance below the lowest roof above it is
# what that kernel leaves. Where the FP32 CUDA-core roof lies below the memory roof at this intensity, a kernel
# doing the GEMM on CUDA cores cannot reach the floor however well it moves bytes: only the tensor-core roofs let
# the memory roof be the limit. `clone` does no arithmetic; its point is the op's FLOPs over the time of a copy of
# `x`, where a kernel as fast as a copy would sit.

# %% [markdown]
# ## Where the time goes in eager
#
# Eager PyTorch runs the op as separate kernels; each writes its result to memory and the next one reads it
# back. The profiler lists the kernels of one forward (names, how many launches, their GPU time). The cell
# after it counts the bytes that the unfused chain moves, next to the fused minimum.

# %%
from torch.profiler import profile, ProfilerActivity
from torch.autograd import DeviceType

ITERS = 10
torch.manual_seed(0)
prof_model = fj.Model(C_in, C_out, K, dilation).to(DEVICE)
xp = torch.randn(RUN_SHAPE["B"], C_in, RUN_SHAPE["T"], device=DEVICE)
with torch.no_grad():
    for _ in range(3):
        prof_model(xp)  # warm-up: cuDNN picks its algorithms here
    if HAS_GPU:
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(ITERS):
                prof_model(xp)
            torch.cuda.synchronize()
    else:
        print("needs a CUDA GPU to list GPU kernels: the CPU operators of eager are listed instead")
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            for _ in range(ITERS):
                prof_model(xp)

events = prof.key_averages()
if HAS_GPU:
    rows = [(e.key, e.count / ITERS, e.device_time_total / ITERS) for e in events if e.device_type == DeviceType.CUDA]
    kern = pd.DataFrame(rows, columns=["kernel", "launches per forward", "GPU us per forward"])
else:
    rows = [(e.key, e.count / ITERS, e.self_cpu_time_total / ITERS) for e in events if e.key.startswith("aten::")]
    kern = pd.DataFrame(rows, columns=["operator", "calls per forward", "self CPU us per forward"])
kern = kern.sort_values(kern.columns[2], ascending=False).reset_index(drop=True)
kern[kern.columns[0]] = kern[kern.columns[0]].str.slice(0, 90)
kern["share"] = kern[kern.columns[2]] / kern[kern.columns[2]].sum()
print(f"{len(kern)} distinct {'kernels' if HAS_GPU else 'operators'}, {kern[kern.columns[1]].sum():.0f} "
      f"{'kernel launches' if HAS_GPU else 'operator calls (nested ones included)'} per forward (L2 not flushed here)")
kern

# %%
# Bytes the unfused chain moves: x read; dw output written and read back; SiLU output written and read back; y written.
act_bytes = 4 * B * C_in * T_out
unfused = x_bytes + 2 * act_bytes + 2 * act_bytes + y_bytes
print(f"unfused chain: {unfused / 1e6:.1f} MB vs fused minimum {nbytes / 1e6:.1f} MB "
      f"({unfused / nbytes:.1f}x the traffic) at {SHAPE}")

# %% [markdown]
# **Interpretation.** The profiler shows eager PyTorch launching several kernels per forward (the depthwise
# convolution, the SiLU and the pointwise convolution, plus any layout or bias kernels cuDNN needs), and the
# share column shows which of them dominate. Each intermediate makes a round trip through memory, so the
# unfused chain moves the multiple of the minimum bytes printed above; a single fused kernel avoids all of
# that. Compare the baselines' `x_floor` with that multiple: the gap between PyTorch and the floor is what the
# ladder of kernels in the next notebooks tries to close, and the arithmetic intensity printed earlier warns
# that once the traffic is gone, the pointwise GEMM's arithmetic becomes the next limit.
