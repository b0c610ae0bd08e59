"""Generate the lesson notebooks (notebooks/NN_topic.ipynb) without outputs.

    python notebooks/make_notebooks.py        # rewrites every notebook from the text below
    python notebooks/make_notebooks.py 07_hopper_wgmma   # only that one (a rewrite drops executed outputs)

The notebooks are executed on a GPU machine later (outputs committed then); tests/test_notebooks.py
executes them on a CPU-only machine, where the GPU cells say so and skip. Cell ids are fixed, so
regenerating an unchanged notebook gives an identical file.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

# --------------------------------------------------------------------------------------------------
# Cells shared by every notebook
# --------------------------------------------------------------------------------------------------
PATH_CELL = '''\
# Make the repository root (the folder holding fused_jit.py) importable, wherever Jupyter started.
import sys, pathlib
ROOT = next(p for p in [pathlib.Path.cwd(), *pathlib.Path.cwd().parents] if (p / "fused_jit.py").is_file())
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
print("repository:", ROOT)'''

PARAMS_CELL = '''\
# Parameters (papermill can override them): the problem shape and the timed calls per measurement.
B, C_in, C_out, T, K, dilation = 16, 128, 128, 2048, 5, 2
REPS = 200'''

SETUP_CELL = '''\
import os, re, shutil, tempfile, time, importlib.util
import numpy as np
import pandas as pd
import torch
import matplotlib.pyplot as plt
import fused_jit as fj

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


def src_path(name):
    """A variant name (e.g. 'naive') or a file in kernels/ (e.g. 'common.cuh') -> its path."""
    return fj.KERNELS_DIR / name if "." in name else fj.variant_info(name).path


def header(name):
    """The leading // comment block of a kernel file: the idea, the prediction, the ptxas summary."""
    lines = src_path(name).read_text().splitlines()
    out = []
    for ln in lines:
        if not ln.startswith("//"):
            break
        out.append(ln)
    return "\\n".join(out)


def prediction(name):
    """The 'Predicted ...' lines of a kernel's header (up to 'Measured'), or the whole header."""
    lines = header(name).splitlines()
    start = next((i for i, ln in enumerate(lines) if "Predicted" in ln), None)
    if start is None:
        return "\\n".join(lines)
    end = next((i for i in range(start + 1, len(lines)) if "Measured" in lines[i]), len(lines))
    return "\\n".join(lines[start:end])


def show_source(name, start, end, after=0):
    """Print a kernel file from the first line containing `start` to the next containing `end`
    (plus `after` more lines), with line numbers: found by marker, so edits elsewhere do not shift it."""
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


def check_summary(name, table, ok=None):
    """One line per checked variant: pass/fail over the battery, worst error, the bound."""
    ran = table[~table["status"].str.startswith("unsupported")]
    if ok is None:  # a part of a table (one dtype): every shape run passed
        ok = len(ran) > 0 and bool((ran["status"] == "pass").all())
    print(f"{name:>22}: {'PASS' if ok else 'FAIL'}  {len(ran)} shapes run, "
          f"{len(table) - len(ran)} refused (ModelNew routes those elsewhere), "
          f"worst rel. err {ran['rel_err'].max():.2e} (bound {table['tolerance'].iloc[0]:g})")'''


def cells(nb_id: str, spec: list[tuple[str, str]], title_md: str) -> nbformat.NotebookNode:
    """Build a notebook: the title markdown, the path cell, the parameters cell, the setup cell, then
    `spec` as (kind, text) pairs with kind 'md' or 'code'."""
    nb = new_notebook()
    body = [("md", title_md), ("code", PATH_CELL), ("params", PARAMS_CELL), ("code", SETUP_CELL)] + spec
    for i, (kind, text) in enumerate(body):
        text = text.strip("\n")
        if kind == "md":
            c = new_markdown_cell(text)
        else:
            c = new_code_cell(text)
            if kind == "params":
                c.metadata["tags"] = ["parameters"]
        c.id = f"{nb_id}-{i:02d}"
        nb.cells.append(c)
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    return nb


NOTEBOOKS: dict[str, tuple[str, list[tuple[str, str]]]] = {}

# --------------------------------------------------------------------------------------------------
# 01: the problem and the roofline
# --------------------------------------------------------------------------------------------------
NOTEBOOKS["01_problem_and_roofline"] = ('''
# 1. The problem and its roofline

**Why start here.** Before writing a kernel we want to know what "fast" means for this op. We count the
bytes the op must move and the arithmetic it must do, measure how fast this GPU can move bytes, and
time what PyTorch already does. The result is a *floor* (no kernel can beat it) and a set of *baselines*
(every kernel must beat them to be worth having). Every later notebook measures against these.

The op is `y = pw(silu(dw(x)))` on a channels-first input `x` of shape `(B, C_in, T)`:

* `dw`: a depthwise, dilated `Conv1d` (one length-`K` filter per channel, `groups = C_in`, "same" padding);
* SiLU: `v * sigmoid(v)`;
* `pw`: a pointwise (1x1) `Conv1d` from `C_in` to `C_out` channels, i.e. a matrix multiply per batch.

The cells below run on a CPU-only machine too: where a GPU is needed they say so and skip, or use a CPU
stand-in on a small shape.
''', [
    ("md", '''
## The reference model

`fj.Model` is the PyTorch reference (the KernelBench `Model`): two `nn.Conv1d` submodules, `dw` and `pw`.
Every kernel is checked against a float64 copy of it.
'''),
    ("code", '''
import inspect
print(inspect.getsource(fj.Model))
torch.manual_seed(0)
model = fj.Model(C_in, C_out, K, dilation)
print(model)
pad = model.dw.padding[0]
T_out = T + 2 * pad - dilation * (K - 1)
print(f"padding = (K-1)*dilation//2 = {pad}; T_out = T + 2*pad - dilation*(K-1) = {T_out}")
'''),
    ("code", '''
# The same computation written out with the functional API, on a small input: the op is nothing more.
x_small = torch.randn(2, C_in, 64)
with torch.no_grad():
    y_model = model(x_small)
    v = torch.nn.functional.conv1d(x_small, model.dw.weight, model.dw.bias, padding=pad, dilation=dilation,
                                   groups=C_in)
    y_manual = torch.nn.functional.conv1d(v * torch.sigmoid(v), model.pw.weight, model.pw.bias)
print("x", tuple(x_small.shape), "-> y", tuple(y_model.shape),
      "| max |model - manual| =", float((y_model - y_manual).abs().max()))
'''),
    ("md", '''
## Bytes and FLOPs

A fused kernel has to read `x` once and write `y` once; the weights are tiny next to them. That is
`fj.min_bytes`. The arithmetic (`fj.flops`, a multiply-add counted as 2 FLOPs) is the depthwise
conv (`K` multiply-adds per activation) plus the pointwise GEMM (`C_in` multiply-adds per output).
Their ratio, the arithmetic intensity, says which resource should limit a good kernel.
'''),
    ("code", '''
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
'''),
    ("md", '''
## The floor: measured copy bandwidth

The memory roof is not the datasheet number but what a plain device-to-device copy achieves here:
`fj.copy_bandwidth` times a large copy (read + write counted). The floor of our op is
`min_bytes / bandwidth`; the FLOP rate a kernel would need to finish its arithmetic in that time tells us
which execution units can possibly get there.
'''),
    ("code", '''
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
'''),
    ("md", '''
## The baselines, timed by `fj.bench`

`fj.bench` with no variants times only the baselines, in one run, with the L2 cache flushed before every
call (the input would otherwise sit in L2 and we would time the cache), and appends the rows to the results
log:

* `eager`: PyTorch as users run it. cuDNN's TF32 is on by default, so its convolutions round their inputs
  to TF32: its relative error against float64 is in the TF32 class, not the strict fp32 class.
* `eager_fp32`: the same with TF32 off (strict fp32).
* `compile`: `torch.compile` of the model.
* `clone`: `x.clone()`, a copy of the input, the simplest memory-bound kernel.
'''),
    ("code", '''
if HAS_GPU:
    base = fj.bench(variant_names=[], shape=SHAPE, reps=REPS)
else:
    print("needs a CUDA GPU for the GPU baselines: CPU eager (TF32 on/off makes no difference there) on a small shape")
    base = fj.bench(variant_names=[], shape=RUN_SHAPE, reps=RUN_REPS, baselines=("eager", "eager_fp32"))
print(f"{base['device_name'].iloc[0]} | floor {base['floor_us'].iloc[0]:.2f} us")
base[BENCH_COLS]
'''),
    ("md", '''
**Reading the table.** `x_floor` is each baseline's time over the floor: how far PyTorch is from what the
memory system allows. `rel_err` is the error against float64: compare `eager` with `eager_fp32` to see
what TF32 costs in accuracy and buys in time. `clone` is the practical memory-bound reference: a kernel
that reads and writes the same number of bytes cannot do much better than a copy. On the CPU stand-in the
floor is not measured (the column is empty) and the numbers only show that the machinery runs.
'''),
    ("md", '''
## Where the time goes in eager

Eager PyTorch runs the op as separate kernels; each writes its result to memory and the next one reads it
back. The profiler lists the kernels of one forward (names, how many launches, their GPU time). The cell
after it counts the bytes that the unfused chain moves, next to the fused minimum.
'''),
    ("code", '''
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
'''),
    ("code", '''
# Bytes the unfused chain moves: x read; dw output written and read back; SiLU output written and read back; y written.
act_bytes = 4 * B * C_in * T_out
unfused = x_bytes + 2 * act_bytes + 2 * act_bytes + y_bytes
print(f"unfused chain: {unfused / 1e6:.1f} MB vs fused minimum {nbytes / 1e6:.1f} MB "
      f"({unfused / nbytes:.1f}x the traffic) at {SHAPE}")
'''),
    ("md", '''
**Interpretation.** The profiler shows eager PyTorch launching several kernels per forward (the depthwise
convolution, the SiLU and the pointwise convolution, plus any layout or bias kernels cuDNN needs), and the
share column shows which of them dominate. Each intermediate makes a round trip through memory, so the
unfused chain moves the multiple of the minimum bytes printed above; a single fused kernel avoids all of
that. Compare the baselines' `x_floor` with that multiple: the gap between PyTorch and the floor is what the
ladder of kernels in the next notebooks tries to close, and the arithmetic intensity printed earlier warns
that once the traffic is gone, the pointwise GEMM's arithmetic becomes the next limit.
'''),
])

# --------------------------------------------------------------------------------------------------
# 02: the naive kernel
# --------------------------------------------------------------------------------------------------
NOTEBOOKS["02_naive_kernel"] = ('''
# 2. The naive kernel

**Why.** The first rung is the kernel a newcomer writes: one thread per output element `y[b, oc, t]`,
each doing all the work that output needs. It is short, obviously correct, and slow. We read its source,
compile it with `fj.load`, check it against float64 with `fj.check`, time it with `fj.bench`, and then
count the work it repeats to see *why* it is slow. Last, we break it on purpose to see what a compile
error looks like through `fj.load`.
''', [
    ("md", '''
## The source

Read from `kernels/01_naive.cu` (the file is the truth; nothing is pasted here). The header comment states
the idea and the prediction; `fused_forward` is what the shared launcher calls.
'''),
    ("code", '''
info = fj.variant_info("naive")
print(info)
print(info.path.read_text())
'''),
    ("md", '''
Each thread calls `dw_silu_at` from the shared header for every input channel: the depthwise convolution
of one time step plus the SiLU, with zero padding.
'''),
    ("code", '''
show_source("common.cuh", "// Depthwise dilated conv + bias + SiLU for one", "return silu(acc);", after=1)
'''),
    ("md", '''
## Compile: `fj.load`

`fj.load(variant)` compiles the kernel file together with the shared launcher through
`torch.utils.cpp_extension.load_inline` on first use. The extension's name carries a hash of the kernel, the
headers it includes, the launcher and the flags: an edit rebuilds, an unchanged file loads from the cache.
'''),
    ("code", '''
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant is loaded instead, through the same path)")
    name = "cpu"
else:
    name = "naive"
t0 = time.perf_counter()
ext = fj.load(name)
print(f"{name}: loaded {ext.__name__} in {time.perf_counter() - t0:.1f} s (source hash {fj.source_hash(name)})")
print("build folder:", fj.build_root())
'''),
    ("md", '''
## Check: `fj.check`

`fj.check` compares the kernel with a float64 reference over a battery of shapes (odd lengths, `T = 1`,
`T` shorter than the filter span, `C_in != C_out`, no bias, many `K` x `dilation`), with fresh random inputs
per trial and the output poisoned with NaN beforehand, so an element the kernel forgets to write fails.
The naive kernel is in the strict fp32 class (relative error at most 1e-6).
'''),
    ("code", '''
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant stands in, on the small shapes of the battery)")
    table, ok = fj.check("cpu", shapes=SMALL_SHAPES, trials=1)
    check_summary("cpu", table, ok)
else:
    table, ok = fj.check("naive")
    check_summary("naive", table, ok)
table[["B", "C_in", "C_out", "T", "K", "dilation", "bias", "rel_err", "status"]].head(10)
'''),
    ("md", '''
## Time: `fj.bench`

The same harness as the baselines: CUDA events, the L2 flushed before each call, the median with p10/p90,
the baselines timed in the same run, one row per variant appended to the results log.
'''),
    ("code", '''
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant stands in, on a small shape)")
    timing = fj.bench(["cpu"], shape=RUN_SHAPE, reps=RUN_REPS)
else:
    timing = fj.bench(["naive"], shape=SHAPE, reps=REPS)
timing[BENCH_COLS]
'''),
    ("md", '''
## Why it is slow, in numbers

Every output recomputes, for each of the `C_in` input channels, the depthwise convolution (`K`
multiply-adds and `K` loads of `x`) and one SiLU (an `expf` and a division), then does one pointwise
multiply-add. But the depthwise + SiLU result of `(b, ic, t)` does not depend on the output channel: the
naive kernel computes each one `C_out` times. The fused minimum computes each once.
'''),
    ("code", '''
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
'''),
    ("md", '''
**Interpretation.** The table shows where the time goes: the pointwise multiply-adds are the same as the
minimum, but the depthwise work, the SiLUs (each an `expf` and a division, far costlier than an FMA) and the
`x` loads are all multiplied by `C_out`. The kernel is bound by that redundant arithmetic and latency, not by
memory: compare its time with the floor and with eager in the bench table. The cure is to compute the
depthwise + SiLU activations once and share them among all output channels, which needs on-chip storage
that the threads of a block share: shared memory, the next notebook.
'''),
    ("md", '''
## When it does not compile

A kernel file with a syntax error should fail loudly and point at the line. We copy `kernels/` into a
temporary folder, remove a semicolon from the copy of `01_naive.cu` there, and load the variant from that
folder (`kernels_dir=`). The real `kernels/` is never touched, and the failed build goes to a temporary
build folder too. `fj.load` raises `fj.KernelBuildError`, whose message starts with nvcc's error lines; the
sources are compiled under a `#line` directive, so nvcc names the kernel file and its own line number. This
runs without a GPU as well: nvcc compiles (and fails) without one.
'''),
    ("code", '''
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
        print(f"KernelBuildError after {time.perf_counter() - t0:.0f} s; the first lines of its message:\\n")
        print("\\n".join(msg.splitlines()[:4]))
        m = re.search(r"01_naive\\.cu\\((\\d+)\\)", msg)
        if m:  # show the line nvcc names, from the broken copy
            line = int(m.group(1))
            print(f"\\nline {line} of the broken copy and its neighbours:")
            for n, text in enumerate(broken.read_text().splitlines()[line - 2:line + 1], start=line - 1):
                print(f"{n:4d}  {text}")
    finally:
        if old_ext_dir is None:
            os.environ.pop("TORCH_EXTENSIONS_DIR", None)
        else:
            os.environ["TORCH_EXTENSIONS_DIR"] = old_ext_dir
print("real kernels/01_naive.cu untouched:", "y[idx] = acc;" in fj.variant_info("naive").path.read_text())
'''),
    ("md", '''
**Interpretation.** The first lines of the exception are nvcc's own: the path of the file in the temporary
kernels folder, the line number in parentheses and the complaint. The statement it points at (or the one
just before it, as is usual for a missing semicolon) is the one we broke. The full build log follows in the
message for anything less obvious, such as a link error.
'''),
])

# --------------------------------------------------------------------------------------------------
# 03: shared memory tiling (rungs 2 and 3)
# --------------------------------------------------------------------------------------------------
NOTEBOOKS["03_shared_memory_tiling"] = ('''
# 3. Shared-memory tiling and register blocking (rungs 2 and 3)

**Why.** The naive kernel recomputes each depthwise + SiLU activation once per output channel. Rung 2
(`smem_tiled`) lets a thread block compute the activations of one time tile *once*, for all input channels,
into shared memory, and then produce every output channel from there. That removes the redundant work but
leaves the pointwise loop limited by how fast it can issue loads. Rung 3 (`register_blocked`) treats the
pointwise conv as what it is, a GEMM (`y[b] = W_pw @ act[b]`), and has every thread accumulate a small tile of
outputs in registers, so that each value loaded from shared memory feeds several multiply-adds.
''', [
    ("md", '''
## Rung 2: depthwise once per tile

The header states the plan and a prediction made before the kernel was timed.
'''),
    ("code", '''
print(fj.variant_info("smem_tiled"))
print(header("smem_tiled"))
'''),
    ("md", '''
The part that matters: phase 1 fills the shared activation tile (each `(ic, t)` computed once), a barrier,
then phase 2 runs the pointwise loop over `C_in` from shared memory, each thread holding a few output
channels' accumulators.
'''),
    ("code", '''
show_source("smem_tiled", "// Phase 1: depthwise", "if (oc < C_out) y[", after=3)
'''),
    ("md", '''
## Rung 3: a register-blocked GEMM

Here a block computes a tile of `y` (output channels x time steps) and walks `C_in` in chunks: per chunk it
stages the transposed weights and the activation chunk in shared memory, then every thread forms outer
products into its register tile.
'''),
    ("code", '''
print(fj.variant_info("register_blocked"))
print(header("register_blocked"))
'''),
    ("code", '''
show_source("register_blocked", "for (int64_t ic0 = 0; ic0 < C_in; ic0 += IC_CHUNK)", "// Epilogue")
'''),
    ("md", '''
## Predictions

Taken from the headers, to hold the measurements against.
'''),
    ("code", '''
for name in ("smem_tiled", "register_blocked"):
    print(f"== {name}\\n{prediction(name)}\\n")
'''),
    ("md", '''
## Check

Both rungs are in the strict fp32 class: they change the order of work, not its precision.
'''),
    ("code", '''
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant, which follows rung 2's plan, stands in on small shapes)")
    table, ok = fj.check("cpu", shapes=SMALL_SHAPES, trials=1)
    check_summary("cpu", table, ok)
else:
    for name in ("smem_tiled", "register_blocked"):
        table, ok = fj.check(name)
        check_summary(name, table, ok)
'''),
    ("md", '''
## Time and gain

The naive rung is timed again in the same run, so the gains are ratios of numbers measured together.
'''),
    ("code", '''
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant stands in, on a small shape)")
    timing = fj.bench(["cpu"], shape=RUN_SHAPE, reps=RUN_REPS)
else:
    timing = fj.bench(["naive", "smem_tiled", "register_blocked"], shape=SHAPE, reps=REPS)
timing[BENCH_COLS]
'''),
    ("code", '''
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
'''),
    ("md", '''
**Interpretation.** The gain of rung 2 over the naive kernel comes from removing the repeated depthwise and
SiLU work counted in notebook 2; compare the measured time with the header's prediction, which modelled the
pointwise loop as bound by load issue (one shared-memory load and global weight loads per multiply-add).
Rung 3's gain comes from the ratio of loads to FMAs inside the loop: with a register tile, a few wide
shared-memory loads feed many FMAs, so the kernel approaches the FP32 FMA limit the header computes. The
`useful TFLOP/s` column shows how close each gets; the `x floor` column shows how far both still are from
the memory floor, which no FP32-CUDA-core GEMM of this size can reach.
'''),
])

# --------------------------------------------------------------------------------------------------
# 04: vectorize and pipeline (rung 4)
# --------------------------------------------------------------------------------------------------
NOTEBOOKS["04_vectorize_and_pipeline"] = ('''
# 4. Vectorized loads and a software pipeline (rung 4)

**Why.** Rung 3 is nearly FMA bound but still stalls: each chunk loads its inputs, waits at a barrier,
computes, and only then loads the next chunk, and it re-stages the pointwise weights for every chunk of
every tile. Rung 4 (`vectorized_pipelined`) keeps the same register-blocked GEMM and attacks the overheads
around it:

* a persistent grid: each block loops over tiles and keeps its slice of the weights resident in shared memory;
* `cp.async` copies of the next chunk's `x` window (16-byte copies when alignment allows) that are in flight
  while the current chunk computes (two stages);
* wide (`float4`) streaming stores of the output.
''', [
    ("md", '''
## The plan and the prediction
'''),
    ("code", '''
print(fj.variant_info("vectorized_pipelined"))
print(header("vectorized_pipelined"))
'''),
    ("md", '''
## The source that matters

The asynchronous copy helpers, from the shared header: `cp.async` moves global memory straight into shared
memory without passing through registers, and a thread waits only for the groups it needs.
'''),
    ("code", '''
show_source("common.cuh", "// ---- cp.async", "// Host: the usual")
'''),
    ("md", '''
The pipeline in the kernel's main loop: wait for this step's stage, then issue the copies of the *next* step
into the other stage before computing this one.
'''),
    ("code", '''
show_source("vectorized_pipelined", "issue_step(p, item, 0, Xs, Ws);", "// Resident W^T")
'''),
    ("md", '''
The epilogue: a warp writes whole rows of `y` with 16-byte streaming stores (`__stcs`), falling back to scalar
stores when the length or alignment does not allow it.
'''),
    ("code", '''
show_source("vectorized_pipelined", "// Tile done: float4 streaming stores", "chunk = 0;")
'''),
    ("code", '''
print(prediction("vectorized_pipelined"))
'''),
    ("md", '''
## Check

Still strict fp32; the fallbacks (scalar copies, streamed weights) are exercised by the odd shapes of the
battery.
'''),
    ("code", '''
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant stands in on small shapes)")
    table, ok = fj.check("cpu", shapes=SMALL_SHAPES, trials=1)
    check_summary("cpu", table, ok)
else:
    table, ok = fj.check("vectorized_pipelined")
    check_summary("vectorized_pipelined", table, ok)
    print(table["status"].value_counts().to_string())
'''),
    ("md", '''
## Time and gain over rung 3
'''),
    ("code", '''
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant stands in, on a small shape)")
    timing = fj.bench(["cpu"], shape=RUN_SHAPE, reps=RUN_REPS)
else:
    timing = fj.bench(["register_blocked", "vectorized_pipelined"], shape=SHAPE, reps=REPS)
timing[BENCH_COLS]
'''),
    ("code", '''
if not HAS_GPU:
    print("needs a CUDA GPU: skipped")
else:
    r = timing.set_index("variant")
    t3, t4 = r.loc["register_blocked", "median_us"], r.loc["vectorized_pipelined", "median_us"]
    print(f"register_blocked {t3:.1f} us -> vectorized_pipelined {t4:.1f} us: {t3 / t4:.2f}x")
    for name, t in (("register_blocked", t3), ("vectorized_pipelined", t4)):
        print(f"{name:>22}: useful {fj.flops(SHAPE) / (t * 1e-6) / 1e12:.1f} TFLOP/s, "
              f"{r.loc[name, 'gbps']:.0f} GB/s of minimum traffic, {r.loc[name, 'x_floor']:.2f}x the floor")
'''),
    ("md", '''
**Interpretation.** The gain printed above is what overlapping the loads with compute and loading the weights
once per block buys; set it against the header's prediction, which expected the kernel to stay FMA bound and
approach the FP32 peak. The `useful TFLOP/s` line is the key number: once it is a large fraction of what the
FP32 CUDA cores can do, no further memory trick helps, because the pointwise GEMM itself takes longer than the
memory floor. Getting to the floor needs faster arithmetic: tensor cores, the next notebook.
'''),
])

# --------------------------------------------------------------------------------------------------
# 05: tensor cores (rungs 5-7)
# --------------------------------------------------------------------------------------------------
NOTEBOOKS["05_tensor_cores"] = ('''
# 5. Tensor cores, and what they cost in accuracy (rungs 5-7)

**Why.** The pointwise GEMM on FP32 CUDA cores takes longer than moving the bytes, so the fp32 rungs cannot
reach the floor. Tensor cores do the GEMM many times faster, at a price:

* rung 5, `tf32_mma`: `mma.sync` on TF32 operands (fp32 with the mantissa rounded to 10 bits), fp32
  accumulation. Fast; the error moves to the TF32 class, the same class as eager PyTorch's default.
* rung 6, `3xtf32_mma`: each operand split into a TF32 "big" part and a TF32 "small" remainder, three MMAs per
  product: back to the strict fp32 class, for about three times the tensor-core work.
* rung 7, `bf16_io`: rung 5 with bfloat16 (or float16) input and output: half the bytes, so half the floor,
  and an error set by the 8-bit mantissa of the output.

The accuracy classes, as relative error against float64: strict 1e-6, TF32 5e-4, bf16 1e-2.
''', [
    ("md", '''
## The three rungs' plans and predictions
'''),
    ("code", '''
for name in ("tf32_mma", "3xtf32_mma", "bf16_io"):
    print(fj.variant_info(name))
    print(header(name), "\\n")
'''),
    ("md", '''
## The source that matters

The three rungs share one tile kernel in `common.cuh`. First the rounding: `cvt.rna.tf32.f32` rounds fp32
to TF32, and the 3xTF32 split keeps the part that rounding dropped.
'''),
    ("code", '''
show_source("common.cuh", "// fp32 -> tf32", "// D = A * B + D")
'''),
    ("md", '''
The inner loop: one MMA per fragment pair for TF32, three (small x big, big x small, big x big) into a
zeroed partial tile for 3xTF32, added to the accumulator with an ordinary fp32 add.
'''),
    ("code", '''
show_source("common.cuh", "if constexpr (!kSplit3) {", "// Epilogue: c0,c1")
'''),
    ("md", '''
Rung 7 instantiates the same kernel for each I/O type:
'''),
    ("code", '''
show_source("bf16_io", "switch (a.dtype)", "default:")
'''),
    ("md", '''
## Accuracy: the error of every rung at the headline shape

`fj.check` at one shape for each CUDA rung in float32, and for `bf16_io` in bfloat16 as well, against
float64. The plot draws the three class bounds; a bar must stay below its class's line.
'''),
    ("code", '''
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
'''),
    ("code", '''
labels = [f"{r.variant}" + ("" if r.dtype == "float32" else f"\\n({r.dtype})") for r in accuracy.itertuples()]
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
'''),
    ("md", '''
## The whole battery for the new rungs
'''),
    ("code", '''
if not HAS_GPU:
    print("needs a CUDA GPU: skipped")
else:
    for name in ("tf32_mma", "3xtf32_mma", "bf16_io"):
        table, ok = fj.check(name)
        for dt, part in table.groupby("dtype", sort=False):
            check_summary(f"{name} [{dt}]", part)
'''),
    ("md", '''
## Time

The fp32 rungs 4-7 in one run, then `bf16_io` with bfloat16 input and output (`dtype="bfloat16"`), whose
floor is half the fp32 one. The baselines in the bfloat16 run also take bfloat16 input.
'''),
    ("code", '''
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant stands in, on a small shape)")
    timing = fj.bench(["cpu"], shape=RUN_SHAPE, reps=RUN_REPS)
    timing_bf16 = None
else:
    timing = fj.bench(["vectorized_pipelined", "tf32_mma", "3xtf32_mma", "bf16_io"], shape=SHAPE, reps=REPS)
    timing_bf16 = fj.bench(["bf16_io"], shape=SHAPE, dtype="bfloat16", reps=REPS)
timing[BENCH_COLS]
'''),
    ("code", '''
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
'''),
    ("md", '''
**Interpretation.** The bar plot is the trade-off in one picture: the strict rungs (including 3xTF32) sit
orders of magnitude below the TF32 ones, and bfloat16 I/O is set by the rounding of the output, far above
both but inside its own class. The timings show what each step of accuracy costs: compare the TF32 rung with
the fp32 rung 4 (the tensor-core speed-up), the 3xTF32 rung with the TF32 one (the price of getting strict
accuracy back on tensor cores), and `x_floor` for each, which says how close to the memory floor of its own
I/O type each kernel gets. Set the numbers against the headers' predictions: a rung far from its prediction
is the one to profile next.
'''),
])

# --------------------------------------------------------------------------------------------------
# 06: A/B timing, the ladder plot and the export
# --------------------------------------------------------------------------------------------------
NOTEBOOKS["06_ab_timing_and_export"] = ('''
# 6. A/B timing, the ladder, and the copy-paste `ModelNew`

**Why.** Two medians from two separate runs differ for reasons that have nothing to do with the kernels:
clocks, temperature, other work on the machine. To decide whether A is faster than B, `fj.ab` runs them
*interleaved* (A B A B ...), with the L2 flushed before every call, and takes the ratio `t_A / t_B` pair by
pair: drift hits both members of a pair alike. The median ratio comes with a 95% bootstrap interval, and the
verdict is "faster" or "slower" only when the whole interval is on one side of 1. Then we plot the whole ladder
from the results log, and export a self-contained KernelBench `ModelNew` file and prove it matches `Model`.
''', [
    ("md", '''
## A/B: two rungs

The fp32 CUDA-core rung against the TF32 tensor-core rung (both outputs are checked against float64 before
any timing).
'''),
    ("code", '''
import contextlib


@contextlib.contextmanager
def tf32_off():
    """cuDNN and matmul TF32 off (an fp32 reference that is really fp32), restored afterwards."""
    old = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = old


def show_ab(r):
    print(f"{r['a']} vs {r['b']}: {r['median_a_us']:.2f} us vs {r['median_b_us']:.2f} us; "
          f"ratio t_a/t_b = {r['ratio']:.3f} [95% CI {r['ci_low']:.3f}, {r['ci_high']:.3f}] -> {r['a']} is {r['verdict']}")

if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant against CPU eager stands in, on a small shape)")
    ab_rungs = fj.ab("cpu", "eager", shape=RUN_SHAPE, reps=max(RUN_REPS, 10))
else:
    ab_rungs = fj.ab("vectorized_pipelined", "tf32_mma", shape=SHAPE, reps=REPS)
show_ab(ab_rungs)
'''),
    ("md", '''
## A/B: a rung against eager PyTorch

`ModelNew`'s default variant (`fj.DEFAULT_VARIANT`) against eager PyTorch as users run it.
'''),
    ("code", '''
if not HAS_GPU:
    print("needs a CUDA GPU: skipped")
    ab_eager = None
else:
    ab_eager = fj.ab(fj.DEFAULT_VARIANT, "eager", shape=SHAPE, reps=REPS)
    show_ab(ab_eager)
'''),
    ("code", '''
ab_table = pd.DataFrame([r for r in (ab_rungs, ab_eager) if r is not None])
ab_table[["a", "b", "median_a_us", "median_b_us", "ratio", "ci_low", "ci_high", "verdict"]]
'''),
    ("md", '''
**Interpretation.** Read the interval, not just the ratio: when it excludes 1, the verdict is solid at this
shape on this GPU; "within noise" means the two cannot be told apart with this many pairs. The medians
printed next to the ratio come from the interleaved run and may differ slightly from the `fj.bench` medians
of earlier notebooks; the ratio is the number to trust for the comparison. Both A/B runs are in the results
log as rows of kind `ab`.
'''),
    ("md", '''
## The ladder, from the results log

`fj.plot_ladder` takes the latest GPU `bench` row of each rung and baseline at the headline shape from the
results log, and draws the rungs as bars (log scale, p10-p90 whiskers) with the memory floor, eager and
`torch.compile` as lines.
'''),
    ("code", '''
results = fj.read_results()
print(f"results log {fj.RESULTS_CSV}: {len(results)} rows")
fig = fj.plot_ladder(results)
plt.show()
'''),
    ("code", '''
ladder = fj.ladder_table(results)
if ladder.empty:
    print("no GPU bench rows at the headline shape in this log yet (they come from running notebooks 1-5 on a GPU)")
else:
    print(ladder[["variant", "dtype", "median_us", "p10_us", "p90_us", "rel_err", "x_floor",
                  "speedup_vs_eager"]].to_string(index=False, float_format="{:.3g}".format))
'''),
    ("md", '''
## The copy-paste `ModelNew`

`fj.export_modelnew` writes one file in the KernelBench format: the kernel and launcher sources inlined as
strings, a module-level `load_inline`, and `class ModelNew` with `Model`'s constructor and `dw`/`pw`
parameters. It needs nothing from this repository. We write it into a temporary folder, import it under a
fresh module name with `importlib` (as a KernelBench harness would), build `Model` and `ModelNew` from the
same seed and compare their outputs on random inputs.
'''),
    ("code", '''
export_dir = pathlib.Path(tempfile.mkdtemp(prefix="modelnew_"))
export_path = fj.export_modelnew(path=export_dir / "modelnew_fused.py")
text = export_path.read_text()
imports_repo = re.search(r"^\\s*(import|from)\\s+fused_jit", text, re.M) is not None
print(f"{export_path} ({len(text.splitlines())} lines, {len(text) / 1e3:.0f} kB); imports fused_jit: {imports_repo}")
print("\\n".join(text.splitlines()[:12]))
print("...")
start = text.index("fused = load_inline(")
print(text[start:])
'''),
    ("code", '''
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the exported file builds a CUDA extension); fj.ModelNew on CPU stands in below")
else:
    spec = importlib.util.spec_from_file_location(f"kb_modelnew_{export_path.stat().st_mtime_ns}", export_path)
    kb = importlib.util.module_from_spec(spec)
    t0 = time.perf_counter()
    spec.loader.exec_module(kb)  # compiles the inlined sources (cached by torch after the first time)
    print(f"imported {spec.name} in {time.perf_counter() - t0:.0f} s")

    init = [C_in, C_out, K, dilation]
    torch.manual_seed(42)
    ref = fj.Model(*init).cuda()
    torch.manual_seed(42)
    new = kb.ModelNew(*init).cuda()
    print("same parameters:", all(torch.equal(a, b) for a, b in zip(ref.state_dict().values(), new.state_dict().values())))
    with torch.no_grad(), tf32_off():
        for trial in range(3):
            x = torch.randn(B, C_in, T, device="cuda")
            y_ref, y_new = ref(x), new(x)
            print(f"trial {trial}: allclose(atol=rtol=1e-4) {torch.allclose(y_new, y_ref, atol=1e-4, rtol=1e-4)}, "
                  f"max |diff| {float((y_new - y_ref).abs().max()):.2e}, "
                  f"rel. err vs float64 {fj.rel_err(y_new, fj.reference(ref, x)):.2e}")
'''),
    ("code", '''
# fj.ModelNew: the same drop-in inside this repository (on CPU input it runs the CPU variant).
shape = RUN_SHAPE
torch.manual_seed(7)
ref = fj.Model(shape["C_in"], shape["C_out"], shape["K"], shape["dilation"]).to(DEVICE)
torch.manual_seed(7)
new = fj.ModelNew(shape["C_in"], shape["C_out"], shape["K"], shape["dilation"]).to(DEVICE)
with torch.no_grad(), tf32_off():
    x = torch.randn(shape["B"], shape["C_in"], shape["T"], device=DEVICE)
    y_ref, y_new = ref(x), new(x)
runs = new.variant if HAS_GPU else "the CPU variant, as for any CPU input"
print(f"fj.ModelNew ({runs}) vs fj.Model at {shape}: "
      f"allclose(atol=rtol=1e-4) {torch.allclose(y_new, y_ref, atol=1e-4, rtol=1e-4)}, "
      f"max |diff| {float((y_new - y_ref).abs().max()):.2e}")
'''),
    ("md", '''
**Interpretation.** Seeding before construction gives both models the same weights (the parameter check
prints it), so any difference in the outputs is the kernel's. The reference runs with cuDNN's TF32 off, since
an fp32 eager reference with TF32 on is itself only TF32-accurate. The exported file's agreement, and its
error against float64, are printed per trial; a strict-class export should pass KernelBench's
`allclose(1e-4)` with a wide margin. The file is what you paste into a KernelBench submission.
'''),
])


# --------------------------------------------------------------------------------------------------
# 07: Hopper (rungs 8-9)
# --------------------------------------------------------------------------------------------------
NOTEBOOKS["07_hopper_wgmma"] = ('''
# 7. Overlapping the stages: warp specialization and Hopper's wgmma + TMA (rungs 8-12)

**Why.** Rung 5 (`tf32_mma`) moved the GEMM to tensor cores and stopped at ~36 us, 4.6x the memory floor, with
DRAM mostly idle. The profiler said why: every warp runs every phase of a tile one after the other (wait for
x, depthwise + SiLU, MMA, y stores), and `mma.sync` needs each warp to load its own operand fragments, so the
kernel is bound by instruction issue and latency, not by bytes. Two ways to let the phases overlap:

* rung 8, `warp_specialized`: producer warps (x copies + depthwise) and MMA warps hand tiles over through
  mbarriers. Same `mma.sync` math; the stages overlap, but each side has fewer warps for its own latency.
* rung 9, `wgmma_tf32`: Hopper's own machinery. `wgmma.mma_async` lets one warpgroup (128 threads) multiply
  a 64 x N x 8 block with operands read straight from shared memory through descriptors, *asynchronously*:
  the block issues the MMA of tile i and computes the depthwise of tile i+1 while the tensor cores work.
  The x tiles arrive by TMA (one thread issues a whole 3-D box; zeros outside the tensor; completion counted
  on an mbarrier), so no warp spends instructions on copies.
* rungs 10 and 11: the same Hopper kernel (`kernels/wgmma.cuh`, a template), for the other two accuracy
  classes. `wgmma_3xtf32` stores W_pw and every activation twice, as big = tf32(v) and small = tf32(v - big),
  and issues three wgmmas per k-step (big*big + big*small + small*big): fp32 accuracy on tensor cores.
  `wgmma_bf16` takes bfloat16 / float16 x and y (half the bytes) and runs the GEMM in bf16.
* rung 12, `wgmma_rs_tf32`: the GEMM turned around (y^T = act^T W_pw^T), so the activations are wgmma's A
  operand *from registers*: each thread computes exactly the depthwise outputs its A fragment holds, with no
  act tile in shared memory and no block barrier; every warpgroup runs its own pipeline over its own tiles.
''', [
    ("md", '''
## The plans and predictions
'''),
    ("code", '''
for name in ("warp_specialized", "wgmma_tf32", "wgmma_3xtf32", "wgmma_bf16", "wgmma_rs_tf32"):
    print(fj.variant_info(name))
    print(prediction(name), "\\n")
'''),
    ("md", '''
## The source that matters

wgmma reads both operands from shared memory in a fixed layout: K-major (for fp32/TF32 both operands must
be), in 8-row x 128-byte atoms whose 16-byte chunks are XOR-swizzled by the row, described by a 64-bit
descriptor. The depthwise writes its activations straight into that layout (row = time step, k = channel).
'''),
    ("code", '''
show_source("wgmma.cuh", "// Shared-memory matrix descriptor", "// Pin the accumulators")
'''),
    ("md", '''
One tile's GEMM per warpgroup: 16 tf32 wgmmas (K = 128 in steps of 8; bf16: 8 in steps of 16), one commit
group, no wait: the call returns while the tensor cores work. The 3xTF32 form issues three per k-step and
spreads the big*big products over several accumulators (the tensor cores' accumulation truncates; a short
chain keeps that error at fp32 level).
'''),
    ("code", '''
show_source("wgmma.cuh", "// Issue this warpgroup's GEMM", "// ---- TMA")
'''),
    ("md", '''
The main loop: wait for x of the next tile (mbarrier), its depthwise (overlapping the MMA in flight), then
wait for the MMA and store y from the accumulators; one barrier, the next TMA and the next MMA.
'''),
    ("code", '''
show_source("wgmma.cuh", "for (int i = 0;; ++i) {", "// Every x box")
'''),
    ("md", '''
Rung 12 (`kernels/wgmma_rs.cuh`) per tile and warpgroup: for each chunk of k-steps, the depthwise of the
thread's A-fragment entries (2 time rows x 2 channels per k-step) straight into registers, then
`wgmma.fence` and the chunk's wgmmas (m64n128k8, A from registers, W_pw from smem); the A registers are
double-buffered, so the next chunk's depthwise runs under this chunk's MMA.
'''),
    ("code", '''
show_source("wgmma_rs.cuh", "    uint32_t a[2][RS_CHUNK][4];", "    // every warp of the warpgroup has read its x")
'''),
    ("md", '''
## Check

These rungs serve only the shapes of their fast path (the wgmma rungs: an sm_90 GPU, T % 4 == 0 (16-bit:
T % 8 == 0), dilation <= 4, span <= 16, C_in and C_out <= 128) and refuse the others with a reason; `ModelNew`
routes those to a rung that can run them. Every shape they do run must pass its accuracy class's bound
(tf32 5e-4, strict 1e-6, bf16 1e-2 against float64 of the rounded inputs).
'''),
    ("code", '''
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (wgmma and TMA exist only on sm_90)")
else:
    for name in ("wgmma_tf32", "warp_specialized", "wgmma_3xtf32", "wgmma_bf16", "wgmma_rs_tf32"):
        table, ok = fj.check(name)
        check_summary(name, table, ok)
        if name == "wgmma_tf32":
            refused = table[table["status"].str.startswith("unsupported")]
            print("    refuses, e.g.:", refused["status"].iloc[0] if len(refused) else "nothing")
'''),
    ("md", '''
`ModelNew` (default variant `fj.DEFAULT_VARIANT`: rung 9 when this notebook last ran, rung 12 since session
26) on a shape both refuse (odd T): a warning names the rung that ran instead, and the answer is still
checked against float64.
'''),
    ("code", '''
import warnings
torch.manual_seed(0)
odd = fj.ModelNew(64, 96, 5, dilation=2).to(DEVICE)
x_odd = torch.randn(2, 64, 1037, device=DEVICE)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with torch.no_grad():
        y_odd = odd(x_odd)
for w in caught:
    print("warning:", w.message)
print("default variant:", fj.DEFAULT_VARIANT, "| rel. err vs float64:", f"{fj.rel_err(y_odd, fj.reference(odd, x_odd)):.2e}")
'''),
    ("md", '''
## Time

Rungs 5, 6, 8, 9, 10 and 12 in one run (float32), with the baselines; then the 16-bit rungs 7 and 11 in bfloat16.
'''),
    ("code", '''
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant stands in, on a small shape)")
    timing = fj.bench(["cpu"], shape=RUN_SHAPE, reps=RUN_REPS)
else:
    timing = fj.bench(["tf32_mma", "3xtf32_mma", "warp_specialized", "wgmma_tf32", "wgmma_3xtf32", "wgmma_rs_tf32"],
                      shape=SHAPE, reps=REPS)
timing[BENCH_COLS]
'''),
    ("code", '''
if HAS_GPU:
    timing16 = fj.bench(["bf16_io", "wgmma_bf16"], shape=SHAPE, dtype="bfloat16", reps=REPS, baselines=())
    display(timing16[BENCH_COLS])
'''),
    ("md", '''
## Where the time goes: stage ablation

No counters needed: `scripts/ablate.py` builds the kernel with one stage left out at a time (`FUSED_ABLATE`:
1 depthwise, 2 MMA, 4 y stores, 8 x copies; the outputs of those builds are wrong by design) and times each.
The difference to the full kernel is what a stage costs while the others still run.
'''),
    ("code", '''
import subprocess, sys
if not HAS_GPU:
    print("needs a CUDA GPU: skipped")
else:
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "ablate.py"), "wgmma_tf32", "0", "1", "2", "4", "8", "15"],
                       capture_output=True, text=True, cwd=ROOT)
    print("\\n".join(ln for ln in r.stdout.splitlines() if "arn" not in ln))
'''),
    ("md", '''
**Interpretation.** Rung 9 is the first rung to move clearly off rung 5's ~36 us: the MMA costs little once it
runs under the depthwise, and TMA takes the x copies off the warps. It is still well above the 7.9 us floor.
The ablation shows why: the stages still add up instead of hiding behind the memory traffic. Leaving out any
one of them saves a few microseconds, and without all four a ~7 us skeleton remains (W_pw staging, barriers,
launch, and the ~4.4 us this timer measures for an empty kernel: the L2 flush leaves dirty lines that are
written back during the timed call). Rung 9's header lists what was tried (TMA stores for y: slower here) and
what would close the gap next.

Rung 12 removes the act round trip through shared memory and the per-tile block barriers, and issues fewer
instructions per output. That alone bought nothing (a tie with rung 9, 2026-11-30_be2f50b_rs_bench_ab_trace): what bounded both was the
start, 6-7 us before any compute, with W_pw's fill queued behind every SM's x requests. Rung 12 as tuned now
(results/tuned.json) lets W_pw's loads leave first and asks for each x tile in two channel halves, so a
warpgroup starts on the first half while the second lands: in one bench it took 19.9 us against
rung 9's 20.9 (results/logs/2026-11-30_15e7803_w_first_check_bench_trace.log); the table above is this
notebook's own run. Its header has the per-warpgroup timeline and what is left: the depthwise + MMA of a tile
still take ~3 us with both warpgroups busy, and the second tiles land only after the first ones' stores.
'''),
])


def main() -> None:
    """Writes every notebook, or only those named on the command line (e.g. 07_hopper_wgmma): a rewrite drops
    a notebook's executed outputs."""
    import sys
    names = sys.argv[1:] or list(NOTEBOOKS)
    for stem in names:
        title, spec = NOTEBOOKS[stem]
        nb = cells(stem[:2], spec, title)
        nbformat.validate(nb)
        path = HERE / f"{stem}.ipynb"
        nbformat.write(nb, path)
        print("wrote", path.relative_to(HERE.parent))


if __name__ == "__main__":
    main()
