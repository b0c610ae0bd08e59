"""Timing: CUDA events with the L2 flushed and a spin kernel ahead of each call, baselines in the same run,
`bench` and `ab`."""
from __future__ import annotations

import contextlib
import datetime as _dt
import os

import numpy as np
import pandas as pd
import torch
from torch import nn

from .config import HEADLINE, DTYPES, BASELINES, TOLERANCE
from .model import Model, forward_args, copy_model
from .registry import variant_info, variants, tolerance
from .jit import load, tuned_defines, defines_over_tuned, source_hash
from .check import make_case, reference, eager_output, max_diff, rel_err, run_variant
from .results import environment, append_results, result_row
from .routing import ModelNew, general_forward


def min_bytes(shape: dict, dtype: str = "float32") -> int:
    """Bytes the op must move at least: x read once, y written once (weights are negligible but counted)."""
    s, e = shape, torch.tensor([], dtype=DTYPES[dtype]).element_size()
    t_out = s["T"] + 2 * ((s["K"] - 1) * s["dilation"] // 2) - s["dilation"] * (s["K"] - 1)
    weights = 4 * (s["C_in"] * s["K"] + s["C_in"] * s["C_out"] + s["C_in"] + s["C_out"])
    return e * s["B"] * (s["C_in"] * s["T"] + s["C_out"] * t_out) + weights


def flops(shape: dict) -> int:
    """FLOPs of the op: 2 per multiply-add (depthwise K per act, the 1x1 GEMM C_in per output), 1 per bias
    add, 4 per SiLU (negate, exp, add, divide); 1.14 GFLOP at the headline shape, 94% of it the GEMM."""
    s = shape
    macs = s["C_in"] * s["K"] + s["C_in"] * s["C_out"]
    return s["B"] * s["T"] * (2 * macs + (s["C_in"] + s["C_out"] if s.get("bias", True) else 0) + 4 * s["C_in"])


class Timer:
    """Per-call device time: CUDA events around each call, the L2 flushed (a 256 MB write) before each,
    then a spin kernel queued (~100 us, or 1.5x the call's host time measured in warm-up if longer), so the GPU
    is still busy while the host enqueues the call: the events then time the call's GPU work, not the host's
    launch overhead. (On the H200, eager PyTorch
    spends 63-105 us of host time per call, longer than the flush; without the spin its event time
    absorbed part of that: results/logs/2026-11-29_3a0c328_diagnose.txt and 2026-11-29_3a0c328_run_2.log.)
    flush="read" (a diagnostic, not bench's timer: scripts/flush_kinds.py) flushes by reading the buffer
    instead, so the L2 holds clean lines and the timed call pays no write-backs for the lines it allocates."""

    SPIN_CYCLES = 200_000  # ~100 us at 1.98 GHz
    # a forward + backward costs the host ~0.3-0.9 ms (the autograd engine, ~15 launches): 200_000 cycles let
    # its host time into the events (eager's backward read 768 us, spread 650-930, in the 0b2d696 run);
    # backward timings use Timer(device, spin_cycles=Timer.TRAIN_SPIN_CYCLES)
    TRAIN_SPIN_CYCLES = 4_000_000  # ~2 ms

    def __init__(self, device: str, spin_cycles: int = SPIN_CYCLES, flush: str = "write"):
        if flush not in ("write", "read"):
            raise ValueError(f"flush must be 'write' or 'read', got {flush!r}")
        self.device, self.spin_cycles, self.flush_kind = device, spin_cycles, flush
        self.flush_buf = torch.empty(256 * 2**20 // 4, dtype=torch.float32, device=device) if device == "cuda" \
            else None

    def time(self, fn, reps: int, warmup: int = 10) -> np.ndarray:
        """Microseconds of each of `reps` calls of fn."""
        return self.time_interleaved([fn], reps, warmup)[:, 0]

    def time_interleaved(self, fns: list, reps: int, warmup: int = 10, prime: bool | None = None) -> np.ndarray:
        """Microseconds, shape (reps, len(fns)): the functions called in turn (f0 f1 .. f0 f1 ..), each call
        timed as above, and on the GPU all of them queued before one synchronize at the end, so that every
        function is timed under the same conditions (an A/B must not synchronize between its calls while
        bench does not: the two then measure different things). `prime` (default: with more than one
        function) runs each function once, untimed, before the L2 flush that precedes its timed call, so its
        code is in the SMs' instruction caches as when bench calls one kernel back to back: two builds of one
        kernel timed in turn without it measured 22.8 and 23.2 us against 21.0 in bench (A/A ratio 0.979,
        2026-11-30_dd8477f_gpu_tests): each call then fetched its ~80 KB of code after the other kernel's."""
        prime = len(fns) > 1 if prime is None else prime
        import time
        host = np.zeros((max(warmup, 1), len(fns)))
        for w in range(warmup):
            for j, fn in enumerate(fns):
                t0 = time.perf_counter()
                fn()
                host[w, j] = (time.perf_counter() - t0) * 1e6
        if self.device != "cuda":
            out = np.empty((reps, len(fns)))
            for r in range(reps):
                for j, fn in enumerate(fns):
                    if prime:
                        fn()
                    t0 = time.perf_counter()
                    fn()
                    out[r, j] = (time.perf_counter() - t0) * 1e6
            return out
        torch.cuda.synchronize()
        # the spin must outlast the host's work for the call, or launch gaps enter the events: at least 1.5x the
        # slowest function's median warm-up host time (at ~2000 cycles per us); small eager calls take ~120 us of
        # host time on the H200's host, more than SPIN_CYCLES (ModelNew's PyTorch route read 0.94-0.97x eager's
        # time with it at bfloat16 T=100, same kernels: 2026-12-01_4f353fc_notebooks_shape_sweep.log)
        spin = max(self.spin_cycles, int(1.5 * 2000 * float(np.median(host[1:] if warmup > 1 else host, 0).max()))) \
            if self.spin_cycles else 0
        events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in fns]
                  for _ in range(reps)]
        for row in events:
            for fn, (s, e) in zip(fns, row):
                if prime:
                    fn()
                if self.flush_kind == "write":
                    self.flush_buf.zero_()
                else:
                    self.flush_buf.sum()  # reads 256 MB: the dirty lines are written back here, before the call
                if spin:
                    torch.cuda._sleep(spin)
                s.record()
                fn()
                e.record()
        torch.cuda.synchronize()
        return np.array([[s.elapsed_time(e) * 1e3 for s, e in row] for row in events])


def host_time_us(fn, n: int = 200) -> float:
    """Median host time of one call of fn, microseconds (perf_counter around the call), with the GPU kept busy by a
    long spin kernel first so the host never waits on a full queue: what the call costs the CPU (Python, dispatch,
    launches), as opposed to `Timer`, which times its GPU work."""
    import time
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(n):
        torch.cuda._sleep(1_000_000)
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e6)
        torch.cuda.synchronize()
    return float(np.median(out))


def kernel_times(fn) -> dict:
    """{kernel name: us} of the CUDA kernels of one call of `fn` (after one unprofiled call: L2 warm, builds done),
    by torch.profiler."""
    fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return {e.key: e.device_time_total for e in prof.key_averages() if e.device_time_total > 0}


def kernel_summary(fn, width: int = 48, top: int | None = None) -> str:
    """kernel_times of one call of `fn` as "sum S us: name t; name t; ..", longest first, names cut to `width`
    characters, the `top` longest (all: None)."""
    ev = sorted(kernel_times(fn).items(), key=lambda kv: -kv[1])
    return f"sum {sum(t for _, t in ev):.1f} us: " + "; ".join(f"{k[:width]} {t:.1f}" for k, t in ev[:top])


def interleaved_rows(kind: str, env: dict, variants: list, labels: list, shape: dict, times, base: str | None = None,
                     **fields) -> list:
    """The results-log rows (kind `kind`, one per label) of an interleaved timing (Timer.time_interleaved's
    (reps, len(labels)) microseconds), each also printed: median, p10, p90, and with `base` (a label) the ratio of
    the medians to its."""
    times = np.asarray(times, dtype=float)
    ref = float(np.median(times[:, labels.index(base)])) if base is not None else None
    rows = []
    for j, (variant, label) in enumerate(zip(variants, labels)):
        t = times[:, j]
        rows.append(result_row(kind, env, variant, shape, "float32", t, l2_flushed=True, **fields))
        med = float(np.median(t))
        print(f"  {label:<12} {med:8.2f} us  (p10 {np.percentile(t, 10):.2f}, p90 {np.percentile(t, 90):.2f})"
              + (f"  {med / ref:.3f}x {base}'s" if ref else ""), flush=True)
    return rows


def training_step_fn(model: nn.Module, x: torch.Tensor, gy: torch.Tensor):
    """A zero-argument function running a training step's forward and backward of model on x (x requires grad):
    the gradients set to None first (zero_grad's default, so nothing is accumulated into an earlier gradient: a 50 MB
    add for x at the headline), then model(x).backward(gy)."""
    params = [x, *model.parameters()]

    def run():
        for t in params:
            t.grad = None
        model(x).backward(gy)
    return run


class BuildModel(nn.Module):
    """A build's training path as a module: model's parameters (the same tensors, so gradients reach them) through
    an extension's forward_train in one backward mode (fusedkit.config.BACKWARDS' numbers), for training_step_fn and
    backward_fn: what an A/B build (backward_builds) runs in a training step."""

    def __init__(self, ext, model: nn.Module, mode: int):
        super().__init__()
        self.ext, self.model, self.mode = ext, model, int(mode)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ext.forward_train(x, *forward_args(self.model), self.mode)


def backward_fn(model: nn.Module, x: torch.Tensor, gy: torch.Tensor):
    """A zero-argument function running the backward alone: one forward now, then each call computes every
    gradient (x's and the parameters') of that graph for gy, the graph kept for the next call."""
    y = model(x)
    params = [x, *model.parameters()]
    return lambda: torch.autograd.grad(y, params, gy, retain_graph=True)


def copy_bandwidth(device: str = "cuda", nbytes: int = 2**30) -> float:
    """Measured device-to-device copy bandwidth, bytes/s (read + write counted): the memory roof."""
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device).uniform_()
    dst = torch.empty_like(src)
    times = Timer(device).time(lambda: dst.copy_(src), reps=20, warmup=3)
    return 2 * nbytes / (np.median(times) * 1e-6)


def callable_for(name: str, model: Model, x: torch.Tensor, defines: dict | None = None):
    """A zero-argument function running a variant or a baseline on (model, x), and its accuracy class."""
    if name in ("eager", "eager_fp32", "compile"):
        fn = torch.compile(model) if name == "compile" else model
        tf32 = name != "eager_fp32"

        def run():
            with torch.no_grad(), cudnn_tf32(tf32):
                return fn(x)
        return run
    if name == "clone":
        return x.clone
    if name == "modelnew":  # what a user's ModelNew runs (its rule), same weights
        new = ModelNew(model.dw.in_channels, model.pw.out_channels, model.dw.kernel_size[0], model.dw.dilation[0],
                       model.dw.bias is not None).to(device=x.device, dtype=model.dw.weight.dtype)
        new.load_state_dict(model.state_dict())

        def run_new():
            with torch.no_grad():
                return new(x)
        return run_new
    if name == "general":  # the general path ModelNew falls back to (CUDA only)
        gargs = forward_args(model)

        def run_general():
            with torch.no_grad():
                return general_forward(x, *gargs)
        return run_general
    ext, args = load(name, defines), forward_args(model)
    return lambda: ext.forward(x, *args)


@contextlib.contextmanager
def cudnn_tf32(enabled: bool):
    old = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = enabled
    torch.backends.cuda.matmul.allow_tf32 = enabled and old[1]
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = old


@contextlib.contextmanager
def deterministic_algorithms(enabled: bool = True):
    """torch.use_deterministic_algorithms(enabled, warn_only=True) for the block, the previous setting restored after.
    ModelNew's default backward sums dW_dw and db_dw with atomics unless this (or cudnn.deterministic) is on."""
    old = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(enabled, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(old[0], warn_only=old[1])


def bench(variant_names: list[str] | None = None, shape: dict | None = None, dtype: str = "float32",
          reps: int = 200, baselines: tuple | list | None = None, device: str | None = None,
          log: bool = True, defines: dict | None = None, copy_bw: float | None = None) -> pd.DataFrame:
    """Time variants and baselines at one shape, in one run; returns a DataFrame and appends to results/.

    GPU: CUDA events per call, 10 warm-up calls, L2 flushed before each timed call, median/p10/p90 of
    `reps` calls; baselines eager (cuDNN TF32, PyTorch's default), eager_fp32 (TF32 off), torch.compile
    and x.clone(); the floor is min_bytes over the copy bandwidth measured in the same run (or `copy_bw`,
    bytes/s, when a sweep measured it once for all its calls).
    CPU: wall-clock per call, the CPU variant against PyTorch CPU eager.
    """
    shape = dict(shape or HEADLINE)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    if variant_names is None:  # every variant of this device that takes this dtype
        names = [n for n in variants(device) if dtype in variant_info(n).dtypes]
    else:
        names = list(variant_names)
    if baselines is None:
        baselines = ("eager", "eager_fp32", "compile", "clone", "modelnew") if device == "cuda" else ("eager",)
        if dtype != "float32":
            baselines = tuple(b for b in baselines if b != "eager_fp32")
    for n in names:
        if variant_info(n).device != device:
            raise ValueError(f"variant {n!r} runs on {variant_info(n).device}, not {device}")
        if dtype not in variant_info(n).dtypes:
            raise ValueError(f"variant {n!r} takes {', '.join(variant_info(n).dtypes)}, not {dtype}")
    model, x = make_case(shape, DTYPES[dtype], device, seed=1234)
    ref = reference(model, x)
    eager_y = eager_output(model, x)  # under the caller's TF32 switch: what a user's allclose compares against
    timer = Timer(device)
    bw = copy_bw or (copy_bandwidth(device) if device == "cuda" else float("nan"))
    floor_us = min_bytes(shape, dtype) / bw * 1e6
    env = environment(device)
    run = f"{_dt.datetime.now(_dt.timezone.utc):%Y%m%dT%H%M%S}-{os.getpid()}"
    rows = []
    for name in list(baselines) + names:
        is_variant = name not in BASELINES
        # baselines run in the I/O dtype, as a user would; variants keep float32 weights
        model_run = model if is_variant or dtype == "float32" else copy_model(model).to(DTYPES[dtype])
        dfs = (defines if defines is not None else tuned_defines(name)) if is_variant else None
        fn = callable_for(name, model_run, x, dfs)
        if is_variant:
            y = run_variant(name, model, x, defines=dfs)
        elif name == "clone":
            y = None
        else:
            y = fn()
        acc = rel_err(y, ref) if y is not None else float("nan")
        diff = max_diff(y, eager_y) if y is not None else float("nan")
        times = timer.time(fn, reps)
        med = float(np.median(times))
        rows.append(result_row("bench", env, name, shape, dtype, times, run=run,
                               source_hash=source_hash(name) if is_variant else "", defines=defines_str(dfs),
                               rel_err=acc, max_diff_eager=diff, floor_us=floor_us,
                               gbps=min_bytes(shape, dtype) / (med * 1e-6) / 1e9, l2_flushed=device == "cuda"))
    table = pd.DataFrame(rows)
    eager = table.loc[table["variant"] == "eager", "median_us"]
    table["speedup_vs_eager"] = float(eager.iloc[0]) / table["median_us"] if len(eager) else float("nan")
    table["x_floor"] = table["median_us"] / table["floor_us"]
    if log:
        append_results(table.to_dict("records"))
    return table


def defines_str(defines: dict | None) -> str:
    return ";".join(f"{k}={v}" for k, v in sorted((defines or {}).items()))


def variant_spec(spec: str) -> tuple[str, dict | None]:
    """'name' -> (name, None: its tuned parameters); 'name:A=1,B=2' -> (name, tuned parameters with A, B set)."""
    name, _, params = spec.partition(":")
    if not params:
        return name, None
    if name in BASELINES:
        raise ValueError(f"baseline {name!r} takes no compile-time parameters")
    try:
        return name, defines_over_tuned(name, params.split(","))
    except ValueError:
        raise ValueError(f"bad variant spec {spec!r}: expected name:NAME=VALUE,NAME=VALUE") from None


def ab(a: str, b: str, shape: dict | None = None, dtype: str = "float32", reps: int = 200, log: bool = True,
       seed: int = 0) -> dict:
    """Interleaved A/B timing of two variants or baselines (eager, eager_fp32, compile, clone).

    A variant may carry compile-time parameters over its tuned ones, "name:NAME=V,NAME=V" (e.g.
    "wgmma_tf32:WG_WS=1"), so two settings of one kernel can be compared.

    Both outputs are checked against float64 first, and against each other (same_bits: equal bit for bit, as a
    faster setting of a kernel that keeps its numbers should be; max_diff_ab otherwise; compared False where one of them
    is the clone, whose output is x, or a skeleton, a build with FUSED_ABLATE set, whose output is not y: neither is
    checked, and ab times a skeleton against the clone, as scripts/ablate.py does). Then A and B are called
    alternately (A B A B ...), each timed call primed (run once just before, untimed, so its code is in the
    instruction caches as in bench) and preceded by the L2 flush, and the ratio t_A / t_B taken pair by pair; returns the median ratio, its
    95% bootstrap interval and a verdict: A is 'faster' (interval below 1), 'slower' (above 1) or
    'within noise'. Logged to results/ as kind 'ab'.
    """
    if a == b:
        raise ValueError(f"ab: A and B are the same ({a!r})")
    shape = dict(shape or HEADLINE)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    specs = {s: variant_spec(s) for s in (a, b)}  # label -> (variant or baseline, defines or None)
    for n, _ in specs.values():
        if n not in BASELINES and variant_info(n).device != device:
            raise ValueError(f"variant {n!r} runs on {variant_info(n).device}, not {device}")
    model, x = make_case(shape, DTYPES[dtype], device, seed=1234 + seed)
    ref = reference(model, x)
    fns, errs, ys = {}, {}, {}
    for s, (n, defs) in specs.items():
        run_model = model if n not in BASELINES or dtype == "float32" else copy_model(model).to(DTYPES[dtype])
        fns[s] = callable_for(n, run_model, x, defs)
        if n == "clone" or int((defs or {}).get("FUSED_ABLATE", 0)):
            errs[s] = float("nan")
            continue
        y = run_variant(n, model, x, defines=defs) if n not in BASELINES else fns[s]()
        ys[s] = y.clone()  # (a baseline's callable may return a buffer the next call rewrites)
        errs[s] = rel_err(y, ref)
        bound = tolerance(n, dtype) if n not in BASELINES else TOLERANCE["tf32" if dtype == "float32" else "bf16"]
        if not errs[s] <= bound:
            raise AssertionError(f"ab: {s} is wrong at {shape} {dtype}: rel. error {errs[s]:.3g} > {bound:g}")
    both = len(ys) == 2  # (the clone has no output to compare)
    same_bits = both and ys[a].dtype == ys[b].dtype and torch.equal(ys[a], ys[b])
    diff_ab = max_diff(ys[a], ys[b]) if both else float("nan")
    # A and B in turn, queued as bench queues its calls, each primed (why: Timer.time_interleaved)
    pairs = Timer(device).time_interleaved([fns[a], fns[b]], reps)
    ratios = pairs[:, 0] / pairs[:, 1]
    rng = np.random.default_rng(seed)
    boot = np.median(rng.choice(ratios, size=(2000, len(ratios)), replace=True), axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    verdict = "faster" if hi < 1 else "slower" if lo > 1 else "within noise"
    result = {"a": a, "b": b, "median_a_us": float(np.median(pairs[:, 0])),
              "median_b_us": float(np.median(pairs[:, 1])), "ratio": float(np.median(ratios)),
              "ci_low": float(lo), "ci_high": float(hi), "verdict": verdict, "rel_err_a": errs[a],
              "rel_err_b": errs[b], "compared": both, "same_bits": bool(same_bits), "max_diff_ab": float(diff_ab),
              "n": reps}
    if log:
        env = environment(device)
        rows = []
        for s, col in ((a, 0), (b, 1)):
            t, (n, defs) = pairs[:, col], specs[s]
            rows.append(result_row("ab", env, n, shape, dtype, t,
                                   source_hash=source_hash(n) if n not in BASELINES else "",
                                   defines=defines_str(defs) if defs else "", rel_err=errs[s],
                                   l2_flushed=device == "cuda",
                                   note=f"ab {a} vs {b}: ratio {result['ratio']:.4f} [{lo:.4f}, {hi:.4f}] {verdict}"
                                        + ("; same bits" if same_bits else f"; max |A - B| {diff_ab:.3g}" if both else "")))
        append_results(rows)
    return result
