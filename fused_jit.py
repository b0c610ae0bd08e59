"""fused_jit: write, check and time a fused CUDA kernel for y = pw(silu(dw(x))) from Python or a notebook.

dw is a depthwise dilated Conv1d (groups = C_in, 'same' padding (K-1)*d//2, bias), pw a 1x1 Conv1d.
Kernels live in kernels/NN_name.cu (one file per rung of the ladder, plus a C++ CPU variant); `load`
compiles one on first use with torch.utils.cpp_extension.load_inline and caches it across processes.

    import fused_jit as fj
    fj.variants()                       # the ladder, in order
    table, ok = fj.check("naive")       # float64 reference, NaN-poisoned outputs, a battery of shapes
    fj.bench(["naive"])                 # CUDA events, L2 flushed, baselines in the same run, logged
    model = fj.ModelNew(128, 128, 5, dilation=2).cuda()

Run `python fused_jit.py --help` for the command line.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import datetime as _dt
import functools
import hashlib
import importlib.util
import io
import os
import platform
import re
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from filelock import FileLock

ROOT = Path(__file__).resolve().parent
KERNELS_DIR = Path(os.environ.get("FUSED_KERNELS_DIR", ROOT / "kernels"))
RESULTS_CSV = Path(os.environ.get("FUSED_RESULTS", ROOT / "results" / "timings.csv"))
LAUNCHER = "launcher.cpp"

# Headline shape (KernelBench style).
batch_size, in_channels, out_channels, length, kernel_size, dilation = 16, 128, 128, 2048, 5, 2
HEADLINE = dict(B=batch_size, C_in=in_channels, C_out=out_channels, T=length, K=kernel_size, dilation=dilation,
                bias=True)

# Relative error bounds vs float64, by accuracy class (DESIGN.md).
TOLERANCE = {"strict": 1e-6, "tf32": 5e-4, "bf16": 1e-2}
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}

# ModelNew's fused kernel for float32 under TF32 (PyTorch's default): the fastest variant that keeps eager's
# numbers (results/timings.csv, H200 rows; README's table). The export default: the file that keeps eager's
# numbers under both TF32 settings and is fastest at the headline: this kernel where it runs, the general path
# (dw_silu + PyTorch's 1x1 conv) elsewhere, on any GPU.
DEFAULT_VARIANT = "wgmma_tf32"
DEFAULT_EXPORT_VARIANT = "wgmma_tf32"


# --------------------------------------------------------------------------------------------------
# The reference
# --------------------------------------------------------------------------------------------------
class Model(nn.Module):
    """The PyTorch reference: pw(silu(dw(x))) with submodules `dw` (depthwise, dilated) and `pw` (1x1)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, dilation: int = 1, bias: bool = True):
        super().__init__()
        padding = (kernel_size - 1) * dilation // 2
        self.dw = nn.Conv1d(in_channels, in_channels, kernel_size, padding=padding, dilation=dilation,
                            groups=in_channels, bias=bias)
        self.pw = nn.Conv1d(in_channels, out_channels, 1, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pw(F.silu(self.dw(x)))


def get_inputs():
    """KernelBench: the forward inputs at the headline shape."""
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    """KernelBench: the constructor arguments at the headline shape."""
    return [in_channels, out_channels, kernel_size, dilation]


# --------------------------------------------------------------------------------------------------
# Variants: kernels/NN_name.cu (CUDA) or kernels/NN_name.cpp (CPU); the first line says
#   // variant: accuracy=strict|tf32|bf16 dtypes=float32[,bfloat16,float16] [arch=9.0a]
# (arch: the TORCH_CUDA_ARCH_LIST entry a kernel needs, e.g. 9.0a for wgmma; default: the visible GPU's)
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Variant:
    name: str
    path: Path
    rung: int
    device: str  # "cuda" or "cpu"
    accuracy: str  # key of TOLERANCE
    dtypes: tuple
    arch: str = ""  # build arch the kernel needs ("" = the visible GPU's)

    @property
    def tolerance(self) -> float:
        return TOLERANCE[self.accuracy]


_VARIANT_FILE = re.compile(r"^(\d+)_(\w+)\.(cu|cpp)$")
_VARIANT_META = re.compile(r"//\s*variant:\s*accuracy=(\w+)\s+dtypes=([\w,]+)(?:\s+arch=([\w.]+))?")


def _variant_table(kernels_dir: Path | None = None) -> dict:
    kdir = Path(kernels_dir or KERNELS_DIR)
    table = {}
    for path in sorted(kdir.iterdir()):
        m = _VARIANT_FILE.match(path.name)
        if not m:
            continue
        meta = _VARIANT_META.search(path.read_text()[:500])
        if not meta:
            raise ValueError(f"{path}: first line must be '// variant: accuracy=<{'|'.join(TOLERANCE)}> "
                             "dtypes=float32[,bfloat16,float16]'")
        accuracy, dtypes = meta.group(1), tuple(meta.group(2).split(","))
        if accuracy not in TOLERANCE or not set(dtypes) <= set(DTYPES):
            raise ValueError(f"{path}: unknown accuracy {accuracy!r} or dtypes {dtypes!r}")
        table[m.group(2)] = Variant(m.group(2), path, int(m.group(1)), "cuda" if m.group(3) == "cu" else "cpu",
                                    accuracy, dtypes, meta.group(3) or "")
    return dict(sorted(table.items(), key=lambda kv: (kv[1].rung, kv[0])))


def variants(device: str | None = None, kernels_dir: Path | None = None) -> list[str]:
    """Variant names in ladder order (kernels/03_smem_tiled.cu is 'smem_tiled'); device='cuda'|'cpu' filters."""
    return [n for n, v in _variant_table(kernels_dir).items() if device is None or v.device == device]


def variant_info(name: str, kernels_dir: Path | None = None) -> Variant:
    """The Variant record (file, rung, device, accuracy class, dtypes) of one variant name."""
    table = _variant_table(kernels_dir)
    if name not in table:
        raise ValueError(f"unknown variant {name!r}; known: {', '.join(table)}")
    return table[name]


# --------------------------------------------------------------------------------------------------
# The JIT
# --------------------------------------------------------------------------------------------------
class KernelBuildError(RuntimeError):
    """A variant failed to compile; the message starts with the compiler's error lines (kernels/ file:line)."""


def _find_cuda_home() -> str | None:
    """The real CUDA toolkit: $CUDA_HOME if valid, else nvcc's own folder (through wrapper scripts), else
    /usr/local/cuda. torch would guess /usr/local from a wrapper script in /usr/local/bin and fail to link."""
    def valid(p):
        return p and (Path(p) / "bin" / "nvcc").is_file() and any(
            (Path(p) / d).is_dir() for d in ("lib64", "targets"))
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        real = Path(nvcc).resolve()
        candidates.append(str(real.parent.parent))
        with contextlib.suppress(OSError, UnicodeDecodeError):  # a wrapper script: `exec /path/to/nvcc "$@"`
            m = re.search(r"(/\S+)/bin/nvcc", real.read_text()[:4096])
            if m:
                candidates.append(m.group(1))
    candidates += ["/usr/local/cuda"] + sorted((str(p) for p in Path("/usr/local").glob("cuda-*")), reverse=True)
    return next((str(Path(c).resolve()) for c in candidates if valid(c)), None)


CUDA_HOME = _find_cuda_home()
if CUDA_HOME:
    os.environ["CUDA_HOME"] = CUDA_HOME
import logging  # noqa: E402

logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)  # "No CUDA runtime is found" on CPU hosts
import torch.utils.cpp_extension as _cpp_ext  # noqa: E402  (after CUDA_HOME is known)

if CUDA_HOME:
    _cpp_ext.CUDA_HOME = CUDA_HOME

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
_loaded: dict = {}
_failed: dict = {}


def build_root() -> Path:
    """Where built extensions live: $TORCH_EXTENSIONS_DIR if set, else the git-ignored .cache/ here."""
    root = Path(os.environ.get("TORCH_EXTENSIONS_DIR") or ROOT / ".cache" / "torch_extensions")
    root.mkdir(parents=True, exist_ok=True)
    return root


def _cuda_arch() -> str:
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return os.environ["TORCH_CUDA_ARCH_LIST"]
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        return f"{major}.{minor}"
    return "9.0"  # no GPU here (CI): build for the H200


def _with_headers(path: Path, kdir: Path, seen: set | None = None) -> list[Path]:
    """`path` and every local header it includes, recursively (each once)."""
    seen = set() if seen is None else seen
    if path in seen:
        return []
    seen.add(path)
    files = [path]
    for inc in _INCLUDE.findall(path.read_text()):
        if (kdir / inc).is_file():
            files += _with_headers(kdir / inc, kdir, seen)
    return files


def source_hash(variant: str, kernels_dir: Path | None = None) -> str:
    """Content hash (12 hex) of a variant's kernel file and the headers it includes: logged with every result."""
    v = variant_info(variant, kernels_dir)
    h = hashlib.sha256()
    for f in _with_headers(v.path, v.path.parent):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def _build_plan(v: Variant, defines: dict | None):
    """Extension name (content-hashed), sources and flags for one variant + compile-time defines."""
    kdir = v.path.parent
    preamble = f'#line 1 "<fused_jit defines for {v.name}>"\n#define FUSED_VARIANT "{v.name}"\n'
    preamble += "#define FUSED_CUDA 1\n" if v.device == "cuda" else ""
    preamble += "".join(f"#define {k} {val}\n" for k, val in sorted((defines or {}).items()))

    def with_line(path: Path) -> str:  # compiler messages name kernels/<file>:<line>, not the build copy
        return f'#line 1 "{path}"\n{path.read_text()}'

    launcher = kdir / LAUNCHER
    if v.device == "cuda":
        cpp, cuda = [preamble + with_line(launcher)], [preamble + with_line(v.path)]
    else:
        cpp, cuda = [preamble + with_line(launcher), preamble + with_line(v.path)], None
    cflags = ["-O3"] + (["-fopenmp"] if v.device == "cpu" else [])
    cuda_flags = ["-O3", "-lineinfo", "-std=c++17"]
    ldflags = ["-fopenmp"] if v.device == "cpu" else []
    arch = (v.arch or _cuda_arch()) if v.device == "cuda" else "-"
    h = hashlib.sha256()
    files = _with_headers(v.path, kdir) + _with_headers(launcher, kdir)
    for part in [*(f.name.encode() + f.read_bytes() for f in files), preamble.encode(), repr(
            (cflags, cuda_flags, ldflags, arch, torch.__version__, torch.version.cuda, sys.version_info[:2],
             str(kdir))).encode()]:
        h.update(part + b"\0")
    name = f"fused_{v.name}_{h.hexdigest()[:16]}"
    kwargs = dict(cpp_sources=cpp, cuda_sources=cuda, extra_cflags=cflags, extra_cuda_cflags=cuda_flags,
                  extra_ldflags=ldflags, extra_include_paths=[str(kdir)], with_cuda=v.device == "cuda",
                  no_implicit_headers=True)  # the sources include what they need; kernels stay torch-free
    return name, arch, kwargs


TUNED_JSON = ROOT / "results" / "tuned.json"


def _tuned_table() -> dict:
    """results/tuned.json: {GPU name: {variant: {parameter: value}}} ({} if absent)."""
    import json
    return json.loads(TUNED_JSON.read_text()) if TUNED_JSON.is_file() else {}


def tuned_defines(variant: str) -> dict:
    """The compile-time parameters `sweep` found best for this variant on the visible GPU ({} if none)."""
    if not torch.cuda.is_available():
        return {}
    return dict(_tuned_table().get(torch.cuda.get_device_name(), {}).get(variant, {}))


def defines_over_tuned(variant: str, given) -> dict:
    """The variant's tuned parameters with `given` set over them: a dict, or "NAME=VALUE" strings."""
    if not isinstance(given, dict):
        try:
            given = dict(kv.split("=", 1) for kv in given)
        except ValueError:
            raise ValueError(f"bad compile-time parameters {list(given)!r}: expected NAME=VALUE") from None
    return {**tuned_defines(variant), **given}


def _import_built(name: str, so: Path):
    spec = importlib.util.spec_from_file_location(name, so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build_error(name: str, log: str) -> KernelBuildError:
    errors = [ln for ln in log.splitlines() if re.search(r"\berror\b|: fatal|undefined reference", ln)]
    head = "\n".join(errors[:30]) or "(no error lines found; full log below)"
    return KernelBuildError(f"building {name} failed:\n{head}\n\n--- full build log ---\n{log}")


def load(variant: str, defines: dict | None = None, *, kernels_dir: Path | None = None, verbose: bool = False):
    """Compile (first use) or load (cached) one variant; returns the extension module with
    `forward(x, w_dw, b_dw, w_pw, b_pw, dilation, padding, out=None)` and `why_unsupported(...)`.

    The module name carries a hash of the kernel, its headers, the launcher, the defines and the flags, so
    an edit rebuilds and an unchanged variant loads from the cache. Builds run in a private staging folder
    under an OS file lock and are moved into place only when complete: a build killed mid-way (and the
    lock file torch leaves behind) is cleared by the next `load`.
    """
    v = variant_info(variant, kernels_dir)
    if defines is None:
        defines = tuned_defines(variant)
    return _load_built(*_build_plan(v, defines), verbose)


def _load_built(name: str, arch: str, kwargs: dict, verbose: bool = False):
    """The extension `name`: in memory, else from the build cache, else built (staged, under a file lock)."""
    if name in _loaded:
        return _loaded[name]
    if name in _failed:  # same sources, same flags: the same error (torch would not retry in-process)
        raise _failed[name]
    root = build_root()
    final = root / name
    so = final / f"{name}.so"
    if not so.is_file():
        with FileLock(str(root / f"{name}.lock")):  # flock: released by the OS if its holder dies
            if not so.is_file():
                try:
                    _build(name, arch, kwargs, root, verbose)
                except KernelBuildError as e:
                    _failed[name] = e
                    raise
    module = _loaded[name] = _import_built(name, so)
    return module


def _build(name: str, arch: str, kwargs: dict, root: Path, verbose: bool):
    staging = root / f"{name}.building"
    shutil.rmtree(staging, ignore_errors=True)  # a killed build's leftovers, torch's stale 'lock' among them
    staging.mkdir(parents=True)
    old_arch = os.environ.get("TORCH_CUDA_ARCH_LIST")
    if arch != "-":  # CUDA builds: the visible GPU's arch (or sm_90); CPU builds never read it
        os.environ["TORCH_CUDA_ARCH_LIST"] = arch
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _cpp_ext.load_inline(name, build_directory=str(staging), verbose=verbose, **kwargs)
    except RuntimeError as e:
        raise _build_error(name, str(e)) from None
    finally:
        if old_arch is None:
            os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
        else:
            os.environ["TORCH_CUDA_ARCH_LIST"] = old_arch
    final = root / name
    shutil.rmtree(final, ignore_errors=True)
    os.replace(staging, final)  # atomic: a complete build or none


# --------------------------------------------------------------------------------------------------
# ModelNew: Model's parameters, eager's numbers, the fastest path that keeps them
# --------------------------------------------------------------------------------------------------
# ModelNew's rule (DESIGN.md's contract: eager's numbers, any shape, never slower than eager). For CUDA input:
#   1. float32 with torch.backends.cudnn.allow_tf32 on (PyTorch's default): the TF32 fused kernel
#      (FUSED_TF32, activations as eager computes them, both GEMM operands rounded to TF32 as cuDNN rounds);
#      float32 with it off: the strict fused kernel (FUSED_STRICT, 3xTF32); bfloat16 / float16: FUSED_16BIT.
#   2. Where that kernel refuses the shape (its launcher says why: C > 128, a depthwise span > 16, T % 4 != 0,
#      another GPU, ...): the general path, GENERAL = the dw_silu kernel (kernels/dw_silu.cu: silu(dw(x)) bit
#      for bit as eager) followed by PyTorch's own 1x1 conv, which follows the TF32 switch as eager's does.
#   3. Where PyTorch is measured faster (eager_is_faster: the shape sweep's result) or the input is empty:
#      EAGER, PyTorch's own ops.
# A route other than the fused kernel is announced once per reason (a UserWarning) and `ModelNew.route(x)` says
# which route a given input takes and why. CPU input: the CPU variant (float32), else PyTorch.
FUSED_TF32, FUSED_STRICT, FUSED_16BIT = DEFAULT_VARIANT, "wgmma_3xtf32", "wgmma_bf16"
GENERAL, EAGER = "general", "eager"
ROUTES = (GENERAL, EAGER)  # the two routes that are not a kernel file's variant


def _forward_args(model: nn.Module):
    return (model.dw.weight, model.dw.bias, model.pw.weight, model.pw.bias, model.dw.dilation[0],
            model.dw.padding[0])


@functools.lru_cache(maxsize=None)
def general_kernel():
    """The extension of kernels/dw_silu.cu (built on first use): `dw_silu(x, w_dw, b_dw, dilation, padding)`
    returns act = silu(dw(x)) in x's dtype, eager's numbers bit for bit."""
    path = KERNELS_DIR / "dw_silu.cu"
    arch = _cuda_arch()
    h = hashlib.sha256(repr((path.read_bytes(), arch, torch.__version__, torch.version.cuda)).encode())
    kwargs = dict(cpp_sources="torch::Tensor dw_silu(torch::Tensor x, torch::Tensor w_dw, "
                              "c10::optional<torch::Tensor> b_dw, int64_t dilation, int64_t padding);",
                  cuda_sources=f'#line 1 "{path}"\n' + path.read_text(), functions=["dw_silu"],
                  extra_cuda_cflags=["-O3", "-lineinfo"], with_cuda=True)
    return _load_built(f"fused_dw_silu_{h.hexdigest()[:16]}", arch, kwargs)


_f32_copies: dict = {}


def _as_float32(t):
    """The fused kernels take float32 weights: a 16-bit model's parameter converted once and reused until the
    parameter changes (its version counter), instead of four conversion kernels per call."""
    if t is None or t.dtype == torch.float32:
        return t
    key = (t.data_ptr(), t._version, t.dtype, tuple(t.shape))
    hit = _f32_copies.get(id(t))
    if hit is None or hit[0] != key:
        if len(_f32_copies) > 256:
            _f32_copies.clear()
        hit = _f32_copies[id(t)] = (key, t.detach().float().contiguous())
    return hit[1]


def eager_forward(x, w_dw, b_dw, w_pw, b_pw, dilation: int, padding: int) -> torch.Tensor:
    """PyTorch's own ops: exactly what Model computes."""
    v = F.conv1d(x, w_dw, b_dw, padding=padding, dilation=dilation, groups=x.shape[1])
    return F.conv1d(F.silu(v), w_pw, b_pw)


def general_forward(x, w_dw, b_dw, w_pw, b_pw, dilation: int, padding: int) -> torch.Tensor:
    """The general path: act from the dw_silu kernel (eager's bits), then PyTorch's 1x1 conv (eager's GEMM)."""
    act = general_kernel().dw_silu(x, _as_float32(w_dw), _as_float32(b_dw), dilation, padding)
    return F.conv1d(act, w_pw, b_pw)


def eager_is_faster(shape: dict, dtype: torch.dtype, route: str) -> bool:
    """Where PyTorch's own ops beat what ModelNew would otherwise run, from the shape sweep on the H200
    (docs/results.md lists the points): there ModelNew calls PyTorch. The 2026-12-01 sweep at 8dfb761: every C at
    B=16, T=100 in bfloat16 on the general path ran 0.84-0.94x eager (0.39x once, host-bound); nothing else lost."""
    t_out = shape["T"] + 2 * ((shape["K"] - 1) * shape["dilation"] // 2) - shape["dilation"] * (shape["K"] - 1)
    return route == GENERAL and dtype != torch.float32 and t_out <= 128


@dataclass(frozen=True)
class Route:
    name: str  # a variant, GENERAL or EAGER
    reason: str  # why this route ("" for the preferred fused kernel)
    ext: object = None  # the loaded extension of a variant route


def _preferred(variant: str | None, x: torch.Tensor) -> str | None:
    if variant:
        return variant
    if x.device.type == "cpu":
        return "cpu" if x.dtype == torch.float32 else None
    if x.dtype == torch.float32:
        return FUSED_TF32 if torch.backends.cudnn.allow_tf32 else FUSED_STRICT
    return FUSED_16BIT


def choose_route(x: torch.Tensor, args: tuple, variant: str | None = None) -> Route:
    """The route ModelNew takes for x with weights `args` (_forward_args), following the rule above."""
    w_dw, b_dw, w_pw, b_pw, dil, pad = args
    B, C_in, T = x.shape
    K = w_dw.shape[-1]
    t_out = T + 2 * pad - dil * (K - 1)
    if variant == EAGER or x.numel() == 0 or t_out < 1 or x.device.type not in ("cpu", "cuda"):
        return Route(EAGER, "asked for" if variant == EAGER else "" if x.numel() == 0 else
                     "empty output or a device without kernels: PyTorch's own ops (and its errors)")
    if variant == GENERAL:
        return Route(GENERAL, "asked for") if x.is_cuda else Route(EAGER, "the general path runs on CUDA only")
    want = _preferred(variant, x)
    reason = "" if want else f"no fused kernel for {x.dtype} on {x.device.type}"
    ext = None
    if want:
        v = variant_info(want)
        if v.device != x.device.type:
            reason = f"{want} runs on {v.device}, x is on {x.device.type}"
        else:
            ext = load(want)
            why = ext.why_unsupported(x, *args)
            if why:
                reason, ext = f"{want}: {why}", None
    if ext is not None:
        shape = dict(B=B, C_in=C_in, C_out=w_pw.shape[0], T=T, K=K, dilation=dil, bias=b_pw is not None)
        if not variant and eager_is_faster(shape, x.dtype, want):
            return Route(EAGER, f"PyTorch measured faster than {want} at this shape")
        if not variant and x.is_cuda:
            d, bound = probe_against_eager(ext, x, args)
            if not d <= bound:
                return Route(GENERAL, f"{want} differs from eager by {d:.1e} at this shape (bound {bound:.1e}): "
                                      "PyTorch's 1x1 conv does not round as the kernel does here")
        return Route(want, "", ext)
    if x.is_cuda:
        shape = dict(B=B, C_in=C_in, C_out=w_pw.shape[0], T=T, K=K, dilation=dil, bias=b_pw is not None)
        if not variant and eager_is_faster(shape, x.dtype, GENERAL):
            return Route(EAGER, f"{reason}; PyTorch measured faster than the general path at this shape")
        return Route(GENERAL, reason)
    return Route(EAGER, reason)


def probe_against_eager(ext, x: torch.Tensor, args: tuple) -> tuple[float, float]:
    """Run the fused kernel and the general path (eager's own 1x1 conv on eager's activations) once on x and return
    (max |difference|, bound): the bound is 1e-5 x max(1, max |y|) for float32 and 1e-2 x max(1, max |y|) for
    16-bit (their own rounding). Why: which GEMM cuDNN runs for eager's 1x1 conv depends on the shape (on the H200
    it runs a TF32 one at the headline but strict fp32 ones where T_out or C_in is not aligned), so whether a TF32
    kernel reproduces eager at a shape is measured once, at the first call of that shape, as cudnn.benchmark
    measures algorithms."""
    with torch.no_grad():
        y = ext.forward(x, *args)
        y_gen = general_forward(x, *args)
        scale = max(1.0, float(y_gen.abs().max())) if y_gen.numel() else 1.0
        return max_diff(y, y_gen), (1e-5 if x.dtype == torch.float32 else 1e-2) * scale


_routes: dict = {}
_announced: set = set()


def _route_cached(x: torch.Tensor, args: tuple, variant: str) -> Route:
    w_dw, b_dw, w_pw, b_pw, dil, pad = args
    key = (variant, x.device, tuple(x.shape), x.dtype, x.is_contiguous(), x.data_ptr() % 16, tuple(w_dw.shape),
           tuple(w_pw.shape), b_dw is None, b_pw is None, dil, pad, torch.backends.cudnn.allow_tf32)
    r = _routes.get(key)
    if r is None:
        r = _routes[key] = choose_route(x, args, variant or None)
        announce = (r.name, r.reason.split(":")[0] + r.reason[r.reason.find(":"):][:80])
        if not variant and r.reason and announce not in _announced and x.numel() and r.name != r.reason:
            _announced.add(announce)
            warnings.warn(f"ModelNew: {r.reason}; running the {r.name!r} route (eager's numbers; "
                          "ModelNew.route(x) tells any input's route)", stacklevel=4)
    return r


def _forward_impl(x, w_dw, b_dw, w_pw, b_pw, dilation: int, padding: int, variant: str) -> torch.Tensor:
    args = (w_dw, b_dw, w_pw, b_pw, dilation, padding)
    r = _route_cached(x, args, variant)
    if r.name == EAGER:
        return eager_forward(x, *args)
    if r.name == GENERAL:
        return general_forward(x, *args)
    return r.ext.forward(x, *(_as_float32(a) for a in args[:4]), dilation, padding)


# The fused op as a PyTorch operator: torch.compile(fullgraph=True) and torch.export see one opaque node (its
# fake implementation gives the output's shape and dtype); autograd attaches through register_autograd.
# A Python custom op rather than TORCH_LIBRARY in the launcher: the route is chosen in Python (per shape,
# dtype, TF32 switch), and one op serves every variant, the general path and PyTorch.
_OP_SCHEMA = "(Tensor x, Tensor w_dw, Tensor? b_dw, Tensor w_pw, Tensor? b_pw, int dilation, int padding, " \
             "str variant) -> Tensor"


@torch.library.custom_op("fused_jit::dwsep_conv1d", mutates_args=(), schema=_OP_SCHEMA)
def dwsep_conv1d(x, w_dw, b_dw, w_pw, b_pw, dilation, padding, variant):
    """y = pw(silu(dw(x))) by ModelNew's rule ("" = the rule's choice; a variant, GENERAL or EAGER to force one)."""
    if torch.is_autocast_enabled(x.device.type):  # the caller cast the inputs; PyTorch's convs must not recast
        with torch.autocast(x.device.type, enabled=False):
            return _forward_impl(x, w_dw, b_dw, w_pw, b_pw, dilation, padding, variant)
    return _forward_impl(x, w_dw, b_dw, w_pw, b_pw, dilation, padding, variant)


@dwsep_conv1d.register_fake
def _(x, w_dw, b_dw, w_pw, b_pw, dilation, padding, variant):
    t_out = x.shape[2] + 2 * padding - dilation * (w_dw.shape[-1] - 1)
    return x.new_empty((x.shape[0], w_pw.shape[0], t_out))


def _setup_context(ctx, inputs, output):
    x, w_dw, b_dw, w_pw, b_pw, dilation, padding, _ = inputs
    ctx.save_for_backward(x, w_dw, b_dw, w_pw, b_pw)
    ctx.dilation, ctx.padding = dilation, padding


def _backward(ctx, gy):
    """The backward as eager's autograd computes it, from PyTorch's own ops (the fused backward is not written
    yet): the activations recomputed from x (cheaper than storing them: x is C_in x T, act as large), then
    convolution_backward of the 1x1 conv, silu_backward, convolution_backward of the depthwise."""
    x, w_dw, b_dw, w_pw, b_pw = ctx.saved_tensors
    d, p, C = ctx.dilation, ctx.padding, x.shape[1]
    need = ctx.needs_input_grad
    aten = torch.ops.aten
    v = aten.convolution(x, w_dw, b_dw, [1], [p], [d], False, [0], C)
    a = aten.silu(v)
    need_act = need[0] or need[1] or need[2]
    ga, gw_pw, gb_pw = aten.convolution_backward(
        gy, a, w_pw, None if b_pw is None else [w_pw.shape[0]], [1], [0], [1], False, [0], 1,
        [need_act, need[3], need[4] and b_pw is not None])
    gx = gw_dw = gb_dw = None
    if need_act:
        gv = aten.silu_backward(ga, v)
        gx, gw_dw, gb_dw = aten.convolution_backward(
            gv, x, w_dw, None if b_dw is None else [C], [1], [p], [d], False, [0], C,
            [need[0], need[1], need[2] and b_dw is not None])
    return gx, gw_dw, gb_dw, gw_pw, gb_pw, None, None, None


dwsep_conv1d.register_autograd(_backward, setup_context=_setup_context)


class ModelNew(Model):
    """Drop-in for `Model` (same `dw`/`pw` parameters and state_dict): eager's numbers, faster.

    The forward follows ModelNew's rule (above): the fused kernel for the input's dtype and the TF32 switch,
    the general path where no fused kernel runs the shape, PyTorch where PyTorch is faster; `route(x)` says
    which. `variant` forces one route (a variant name, GENERAL or EAGER), for A/B timing. Under autocast it
    computes in the autocast dtype, as eager's conv does. It trains: gradients are eager's (PyTorch's own
    backward ops on recomputed activations). It is a torch.library operator (fused_jit::dwsep_conv1d), so
    torch.compile(fullgraph=True) and torch.export take it whole.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, dilation: int = 1,
                 bias: bool = True, variant: str | None = None):
        super().__init__(in_channels, out_channels, kernel_size, dilation, bias)
        if variant is not None and variant not in ROUTES:
            variant_info(variant)  # unknown names fail here, not at the first forward
        self.variant = variant

    def _inputs(self, x: torch.Tensor):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"ModelNew.forward expects a torch.Tensor, got {type(x).__name__}")
        if x.dim() != 3 or x.shape[1] != self.dw.in_channels:
            raise ValueError(f"ModelNew expects x of shape (batch, {self.dw.in_channels}, time); got "
                             f"{tuple(x.shape)}")
        args = _forward_args(self)
        if x.is_floating_point() and torch.is_autocast_enabled(x.device.type):  # as eager's conv under autocast
            dt = torch.get_autocast_dtype(x.device.type)
            x = x.to(dt)
            args = tuple(a.to(dt) if isinstance(a, torch.Tensor) else a for a in args)
        return x, args

    def route(self, x: torch.Tensor) -> Route:
        """The route this input takes (a variant, GENERAL or EAGER) and why."""
        x, args = self._inputs(x)
        return choose_route(x, args, self.variant)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x, args = self._inputs(x)
        if torch.compiler.is_compiling() or (torch.is_grad_enabled() and (x.requires_grad or any(
                isinstance(a, torch.Tensor) and a.requires_grad for a in args))):
            return dwsep_conv1d(x, *args, self.variant or "")  # the operator: graph capture, autograd
        # eager inference: the same implementation without the custom op's Python dispatch (~60 us of host time
        # per call on the H200 host: 113 vs 54 us at B=1 C=64 T=2047, logs/*_route_overhead.log)
        if torch.is_autocast_enabled(x.device.type):
            with torch.autocast(x.device.type, enabled=False):
                return _forward_impl(x, *args, self.variant or "")
        return _forward_impl(x, *args, self.variant or "")


# --------------------------------------------------------------------------------------------------
# Correctness
# --------------------------------------------------------------------------------------------------
def shape_battery() -> list[dict]:
    """The shapes every variant must pass: headline, odd T, T=1, T below the kernel span, C_in != C_out,
    B=1, bias off, K in {1,2,3,4,7,9} x dilation in {1,2,3,4} (odd T), and K x dilation pairs and odd
    channel counts with T % 8 == 0 (the 16-byte vector paths), and one shape of 585 64-step tiles."""
    s = [dict(HEADLINE),
         dict(B=3, C_in=64, C_out=64, T=1037, K=5, dilation=2, bias=True),    # T not a multiple of any tile
         dict(B=2, C_in=16, C_out=8, T=1, K=3, dilation=1, bias=True),        # T = 1
         dict(B=2, C_in=32, C_out=32, T=5, K=7, dilation=3, bias=True),       # T below the span (19)
         dict(B=2, C_in=3, C_out=7, T=300, K=3, dilation=1, bias=True),       # C_in != C_out, tiny
         dict(B=2, C_in=96, C_out=200, T=513, K=5, dilation=2, bias=True),    # C_in != C_out, odd T
         dict(B=1, C_in=128, C_out=128, T=2048, K=5, dilation=2, bias=True),  # B = 1
         dict(B=4, C_in=32, C_out=48, T=777, K=5, dilation=2, bias=False),    # bias off
         dict(B=2, C_in=256, C_out=64, T=4099, K=9, dilation=4, bias=True)]   # wide input, long T
    s += [dict(B=2, C_in=16, C_out=24, T=203, K=k, dilation=d, bias=True) for k in (1, 2, 3, 4, 7, 9)
          for d in (1, 2, 3, 4)]
    # T % 8 == 0 (16-byte rows in fp32 and in 16-bit), so the rungs with a vector path (the windowed
    # depthwise of rungs 08-11) run it at every dilation 1..4 and window width (span 1..16), and with
    # C_in != C_out, bias off, K even, B = 1, T below the span
    s += [dict(B=2, C_in=16, C_out=24, T=208, K=k, dilation=d, bias=True)
          for k, d in ((7, 1), (9, 2), (2, 3), (4, 3), (6, 3), (1, 4), (3, 4), (5, 4))]
    s += [dict(B=2, C_in=96, C_out=72, T=520, K=4, dilation=3, bias=False),
          dict(B=1, C_in=40, C_out=128, T=8, K=9, dilation=2, bias=True)]
    # more 64-step tiles (585) than an H200 has warpgroups in rung 12's grid (132 x 4): some take two
    s += [dict(B=9, C_in=40, C_out=56, T=4160, K=5, dilation=2, bias=True)]
    return s


def _make_case(shape: dict, dtype: torch.dtype, device: str, seed: int):
    """A Model with fresh random weights and a fresh random input (never zeros), at `shape`."""
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = Model(shape["C_in"], shape["C_out"], shape["K"], shape["dilation"], shape["bias"])
    with torch.no_grad():  # biases large enough to matter, weights as PyTorch initialises them
        for p in model.parameters():
            if p.dim() == 1:
                p.uniform_(-0.5, 0.5, generator=g)
    x = torch.randn(shape["B"], shape["C_in"], shape["T"], generator=g).to(dtype)
    return model.to(device), x.to(device)


def reference(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """The float64 reference of `model` on x (x's values as given, e.g. already rounded to bf16)."""
    m64 = Model(model.dw.in_channels, model.pw.out_channels, model.dw.kernel_size[0], model.dw.dilation[0],
                model.dw.bias is not None).double().to(x.device)
    m64.load_state_dict({k: v.double() for k, v in model.state_dict().items()})
    with torch.no_grad():
        return m64(x.double())


def eager_output(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """What eager PyTorch gives for x under the current TF32 switch, in x's dtype (the model's weights cast to it,
    as a user's `model.to(dtype)` does)."""
    m = model if model.dw.weight.dtype == x.dtype else _copy_model(model).to(x.dtype)
    with torch.no_grad():
        return Model.forward(m, x)


def max_diff(y: torch.Tensor, other: torch.Tensor) -> float:
    """max |y - other| elementwise (in float64); NaN anywhere gives inf."""
    d = (y.double() - other.double()).abs()
    return float(d.max()) if d.numel() and torch.isfinite(d).all() else (0.0 if not d.numel() else float("inf"))


def rel_err(y: torch.Tensor, ref: torch.Tensor) -> float:
    """||y - ref|| / ||ref|| in float64; NaN anywhere gives inf."""
    y64 = y.double()
    if not torch.isfinite(y64).all():
        return float("inf")
    return float((y64 - ref).norm() / ref.norm().clamp_min(1e-300))


def _device_for(v: Variant) -> str:
    if v.device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(f"variant {v.name!r} needs a CUDA GPU and none is visible "
                           "(use the CPU variant, or run on a GPU machine)")
    return v.device


# Shared memory is not cleared between kernels: a kernel that reads shared memory it never wrote sees what an
# earlier kernel left there, usually finite, so a wrong read can still give the right answer (session 25: rung
# 12 left x rows past C_in unzeroed in some slots; their weights are zero). run_variant therefore fills the
# shared memory of every SM with NaN before the kernel, as it fills y with NaN: such a read then shows in y.
_SMEM_POISON_CU = r"""
__global__ void fused_fill_smem_nan(int words) {
  extern __shared__ unsigned int fused_poison_smem[];
  volatile unsigned int* s = fused_poison_smem;  // volatile: the stores are the point, nothing reads them
  for (int i = threadIdx.x; i < words; i += blockDim.x) s[i] = 0x7fc00000u;  // a quiet NaN
}
void poison_smem() {  // every SM: blocks of the largest dynamic smem a block may have, two rounds of them
  int dev = 0, sms = 0, bytes = 0;
  C10_CUDA_CHECK(cudaGetDevice(&dev));
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  C10_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  C10_CUDA_CHECK(cudaFuncSetAttribute(fused_fill_smem_nan, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  fused_fill_smem_nan<<<2 * sms, 1024, bytes, c10::cuda::getCurrentCUDAStream()>>>(bytes / 4);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""


@functools.lru_cache(maxsize=None)
def smem_poisoner():
    """The extension whose poison_smem() fills every SM's shared memory with NaN (built on first use)."""
    arch = _cuda_arch()
    h = hashlib.sha256(repr((_SMEM_POISON_CU, arch, torch.__version__, torch.version.cuda)).encode())
    kwargs = dict(cpp_sources="void poison_smem();", cuda_sources="#include <c10/cuda/CUDAStream.h>\n"
                  "#include <c10/cuda/CUDAException.h>\n" + _SMEM_POISON_CU, functions=["poison_smem"],
                  extra_cuda_cflags=["-O3"], with_cuda=True)
    return _load_built(f"fused_smem_poison_{h.hexdigest()[:16]}", arch, kwargs)


def run_variant(variant: str, model: nn.Module, x: torch.Tensor, poison: bool = True,
                defines: dict | None = None) -> torch.Tensor:
    """One call of a variant's kernel into an output poisoned with NaN (an unwritten element stays NaN); on a
    GPU the shared memory of every SM is poisoned with NaN first (a read of unwritten smem then shows)."""
    ext = load(variant, defines)
    args = _forward_args(model)
    k, d, p = model.dw.kernel_size[0], model.dw.dilation[0], model.dw.padding[0]
    t_out = x.shape[2] + 2 * p - d * (k - 1)
    out = torch.full((x.shape[0], model.pw.out_channels, t_out), float("nan") if poison else 0.0,
                     dtype=x.dtype, device=x.device)
    if poison and x.is_cuda:
        smem_poisoner().poison_smem()
    y = ext.forward(x, *args, out=out)
    if x.is_cuda:
        torch.cuda.synchronize()  # surfaces asynchronous kernel faults here, on this call
    return y


def check(variant: str, shapes: list[dict] | None = None, dtypes: list[str] | None = None, trials: int = 2,
          seed: int = 0, verbose: bool = False, defines: dict | None = None):
    """Relative error vs float64 over a battery of shapes, fresh random inputs per trial, outputs poisoned.

    Returns (table, passed): a pandas DataFrame with one row per (shape, dtype) and whether every supported
    shape met the variant's accuracy class bound (strict 1e-6, tf32 5e-4, bf16 1e-2); max_diff_eager is the
    largest |y - eager| under the current TF32 switch (what a user's allclose sees). Shapes the variant's
    launcher refuses are listed as 'unsupported' (ModelNew routes those elsewhere); the headline must run.
    """
    v = variant_info(variant)
    device = _device_for(v)
    ext = load(variant, defines)
    rows = []
    for i, shape in enumerate(shapes or shape_battery()):
        for dt in dtypes or list(v.dtypes):
            tol = tolerance(variant, dt)
            worst, diff, status = 0.0, 0.0, "pass"
            for trial in range(trials):
                model, x = _make_case(shape, DTYPES[dt], device, seed + 1000 * i + trial)
                why = ext.why_unsupported(x, *_forward_args(model))
                if why:
                    status, worst, diff = "unsupported: " + why, float("nan"), float("nan")
                    break
                y = run_variant(variant, model, x, defines=defines)
                worst = max(worst, rel_err(y, reference(model, x)))
                diff = max(diff, max_diff(y, eager_output(model, x)))
            if status == "pass" and not worst <= tol:
                status = "FAIL"
            rows.append({**shape, "dtype": dt, "rel_err": worst, "max_diff_eager": diff, "tolerance": tol,
                         "status": status})
            if verbose:
                print(f"{variant:>20} {shape} {dt}: {status} ({worst:.2e})")
    table = pd.DataFrame(rows)
    headline_ran = not table["status"].iloc[0].startswith("unsupported")
    passed = bool(headline_ran and (table["status"].isin(["pass"]) | table["status"].str.startswith("unsupported"))
                  .all())
    return table, passed


# --------------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------------
BASELINES = ("eager", "eager_fp32", "compile", "clone", "modelnew")  # modelnew: ModelNew's rule, timed like eager


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


class _Timer:
    """Per-call device time: CUDA events around each call, the L2 flushed (a 256 MB write) before each,
    then a ~100 us spin kernel queued, so the GPU is still busy while the host enqueues the call: the
    events then time the call's GPU work, not the host's launch overhead. (On the H200, eager PyTorch
    spends 63-105 us of host time per call, longer than the flush; without the spin its event time
    absorbed part of that: results/logs/h200_session_2_diagnose.txt and h200_session_3.log.)
    flush="read" (a diagnostic, not bench's timer: scripts/flush_kinds.py) flushes by reading the buffer
    instead, so the L2 holds clean lines and the timed call pays no write-backs for the lines it allocates."""

    SPIN_CYCLES = 200_000  # ~100 us at 1.98 GHz

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
        h200_session_25d): each call then fetched its ~80 KB of code after the other kernel's."""
        prime = len(fns) > 1 if prime is None else prime
        for _ in range(warmup):
            for fn in fns:
                fn()
        if self.device != "cuda":
            import time
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
                if self.spin_cycles:
                    torch.cuda._sleep(self.spin_cycles)
                s.record()
                fn()
                e.record()
        torch.cuda.synchronize()
        return np.array([[s.elapsed_time(e) * 1e3 for s, e in row] for row in events])


def copy_bandwidth(device: str = "cuda", nbytes: int = 2**30) -> float:
    """Measured device-to-device copy bandwidth, bytes/s (read + write counted): the memory roof."""
    src = torch.empty(nbytes // 4, dtype=torch.float32, device=device).uniform_()
    dst = torch.empty_like(src)
    times = _Timer(device).time(lambda: dst.copy_(src), reps=20, warmup=3)
    return 2 * nbytes / (np.median(times) * 1e-6)


def _callable(name: str, model: Model, x: torch.Tensor, defines: dict | None = None):
    """A zero-argument function running a variant or a baseline on (model, x), and its accuracy class."""
    if name in ("eager", "eager_fp32", "compile"):
        fn = torch.compile(model) if name == "compile" else model
        tf32 = name != "eager_fp32"

        def run():
            with torch.no_grad(), _cudnn_tf32(tf32):
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
    ext, args = load(name, defines), _forward_args(model)
    return lambda: ext.forward(x, *args)


@contextlib.contextmanager
def _cudnn_tf32(enabled: bool):
    old = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = enabled
    torch.backends.cuda.matmul.allow_tf32 = enabled and old[1]
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = old


def environment(device: str) -> dict:
    """What every results row records about where it ran."""
    if device == "cuda":
        hw = torch.cuda.get_device_name()
    else:
        hw = platform.processor() or platform.machine()
        with contextlib.suppress(OSError):
            m = re.search(r"model name\s*:\s*(.+)", Path("/proc/cpuinfo").read_text())
            hw = m.group(1).strip() if m else hw
        hw = f"CPU {hw} x{os.cpu_count()}"
    return {"device_name": hw, "torch": torch.__version__, "cuda": torch.version.cuda or "none",
            "commit": git_commit()}


def git_commit() -> str:
    """HEAD's short hash (+'-dirty' if tracked files differ); $FUSED_COMMIT where there is no git."""
    if os.environ.get("FUSED_COMMIT"):
        return os.environ["FUSED_COMMIT"]
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def _shape_cols(shape: dict) -> dict:
    return {k: shape[k] for k in ("B", "C_in", "C_out", "T", "K", "dilation", "bias")}


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
    model, x = _make_case(shape, DTYPES[dtype], device, seed=1234)
    ref = reference(model, x)
    eager_y = eager_output(model, x)  # under the caller's TF32 switch: what a user's allclose compares against
    timer = _Timer(device)
    bw = copy_bw or (copy_bandwidth(device) if device == "cuda" else float("nan"))
    floor_us = min_bytes(shape, dtype) / bw * 1e6
    env = environment(device)
    run = f"{_dt.datetime.now(_dt.timezone.utc):%Y%m%dT%H%M%S}-{os.getpid()}"
    rows = []
    for name in list(baselines) + names:
        is_variant = name not in BASELINES
        # baselines run in the I/O dtype, as a user would; variants keep float32 weights
        model_run = model if is_variant or dtype == "float32" else _copy_model(model).to(DTYPES[dtype])
        dfs = (defines if defines is not None else tuned_defines(name)) if is_variant else None
        fn = _callable(name, model_run, x, dfs)
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
        rows.append({"timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "kind": "bench",
                     "run": run, **env, "variant": name, "source_hash": source_hash(name) if is_variant else "",
                     "defines": _defines_str(dfs), **_shape_cols(shape), "dtype": dtype,
                     "rel_err": acc, "max_diff_eager": diff, "median_us": med, "p10_us": float(np.percentile(times, 10)),
                     "p90_us": float(np.percentile(times, 90)), "n": len(times), "floor_us": floor_us,
                     "gbps": min_bytes(shape, dtype) / (med * 1e-6) / 1e9, "l2_flushed": device == "cuda"})
    table = pd.DataFrame(rows)
    eager = table.loc[table["variant"] == "eager", "median_us"]
    table["speedup_vs_eager"] = float(eager.iloc[0]) / table["median_us"] if len(eager) else float("nan")
    table["x_floor"] = table["median_us"] / table["floor_us"]
    if log:
        append_results(table.to_dict("records"))
    return table


def _build_quietly(variant: str, defines: dict) -> str:
    """Build one configuration (in a worker process); '' on success, else the first compiler error line."""
    try:
        load(variant, defines)
        return ""
    except KernelBuildError as e:
        return str(e).splitlines()[1] if len(str(e).splitlines()) > 1 else str(e)


SWEEP_CHECK_SHAPES = [HEADLINE, dict(B=3, C_in=64, C_out=64, T=1037, K=5, dilation=2, bias=True),
                      dict(B=2, C_in=96, C_out=200, T=513, K=4, dilation=3, bias=False),
                      dict(B=2, C_in=32, C_out=32, T=5, K=7, dilation=3, bias=True)]


def sweep(variant: str, grid: dict, shape: dict | None = None, reps: int = 100, jobs: int | None = None,
          log: bool = True, save_best: bool = True, dtype: str = "float32") -> pd.DataFrame:
    """Build every configuration of a variant's compile-time parameters (the product of `grid`, e.g.
    {"TILE_T": [32, 64], "WARPS_N": [2, 4]}), each set over the variant's tuned parameters, in parallel
    processes, check each on a few awkward shapes, time those that pass, log them (kind 'sweep') and, with
    save_best, record the fastest (tuned parameters included) in results/tuned.json so `load(variant)` uses
    it by default on this GPU. A configuration that does not
    compile or fails its check is reported in the table and skipped, not fatal."""
    import itertools
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing as mp
    from tqdm.auto import tqdm
    shape = dict(shape or HEADLINE)
    base = tuned_defines(variant)  # parameters the grid leaves alone keep their tuned values
    configs = [{**base, **dict(zip(grid, vals))} for vals in itertools.product(*grid.values())]
    jobs = jobs or max(1, min(len(configs), (os.cpu_count() or 2) // 2))
    with ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn")) as ex:
        futures = [ex.submit(_build_quietly, variant, d) for d in configs]
        built = [f.result() for f in tqdm(futures, desc=f"building {variant}", leave=False)]
    rows = []
    bw = copy_bandwidth() if torch.cuda.is_available() else None  # the roof, measured once for the sweep
    for d, err in zip(tqdm(configs, desc=f"checking + timing {variant}", leave=False), built):
        row = {"variant": variant, "defines": _defines_str(d), **{k: d[k] for k in grid}}
        if err:
            rows.append({**row, "status": "build failed: " + err})
            continue
        table, ok = check(variant, shapes=SWEEP_CHECK_SHAPES, trials=1, defines=d)
        if not ok:
            bad = table[~table.status.isin(["pass"]) & ~table.status.str.startswith("unsupported")]
            rows.append({**row, "status": f"check failed ({len(bad)} shapes)" if len(bad)
                         else "unsupported at every check shape (e.g. does not fit in shared memory)"})
            continue
        t = bench([variant], shape, dtype, reps=reps, baselines=(), log=False, defines=d, copy_bw=bw)
        t["kind"] = "sweep"
        if log:
            append_results(t.to_dict("records"))
        r = t.iloc[0]
        rows.append({**row, "status": "ok", "median_us": r.median_us, "p10_us": r.p10_us, "p90_us": r.p90_us,
                     "rel_err": r.rel_err})
    table = pd.DataFrame(rows)
    ok = table[table.status == "ok"] if "median_us" in table else table.iloc[0:0]
    if save_best and len(ok) and torch.cuda.is_available():
        import json
        best = configs[int(ok.median_us.idxmin())]
        with FileLock(str(TUNED_JSON) + ".lock"):
            data = json.loads(TUNED_JSON.read_text()) if TUNED_JSON.is_file() else {}
            data.setdefault(torch.cuda.get_device_name(), {})[variant] = best
            tmp = TUNED_JSON.with_name(f".{TUNED_JSON.name}.tmp")
            tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
            os.replace(tmp, TUNED_JSON)
    return table


def shape_grid() -> list[tuple[dict, str]]:
    """The contract's grid (shape, dtype): every C in {32, 64, 128, 192, 256, 512, 1024} (C_in = C_out) at
    T in {100, 2047, 2048, 16384} x B in {1, 16, 64} (K=5, d=2, float32); K in {3, 5, 9} x d in {1, 2, 4} at
    B=16, T=2048 per C; and bfloat16 at B=16 for every C and T. Trimmed from the full product for time."""
    Cs, Ts = (32, 64, 128, 192, 256, 512, 1024), (100, 2047, 2048, 16384)
    g = [(dict(B=b, C_in=c, C_out=c, T=t, K=5, dilation=2, bias=True), "float32")
         for c in Cs for t in Ts for b in (1, 16, 64)]
    g += [(dict(B=16, C_in=c, C_out=c, T=2048, K=k, dilation=d, bias=True), "float32")
          for c in Cs for k in (3, 5, 9) for d in (1, 2, 4) if (k, d) != (5, 2)]
    g += [(dict(B=16, C_in=c, C_out=c, T=t, K=5, dilation=2, bias=True), "bfloat16") for c in Cs for t in Ts]
    return g


def shape_sweep(grid: list | None = None, reps: int = 30, max_bytes: int = 2 * 2**30, log: bool = True,
                baselines: tuple = ("eager",)) -> pd.DataFrame:
    """ModelNew (its rule: `modelnew` rows, with the route it took) against eager at every point of `grid`
    (default shape_grid()), each point a `bench` call (same timer; eager timed in the same run), logged as
    kind 'shape_sweep'; points whose x + y exceed max_bytes are skipped. Plot with `plot_shape_sweep`."""
    from tqdm.auto import tqdm
    device = "cuda" if torch.cuda.is_available() else "cpu"
    grid = sorted(grid or shape_grid(), key=lambda p: min_bytes(p[0], p[1]))
    tables = []
    bw = copy_bandwidth(device) if device == "cuda" else None  # the roof, measured once for the sweep
    for shape, dt in tqdm(grid, desc="shape sweep", leave=False):
        if min_bytes(shape, dt) > max_bytes:
            continue
        model, x = _make_case(shape, DTYPES[dt], device, seed=7)
        new = ModelNew(shape["C_in"], shape["C_out"], shape["K"], shape["dilation"], shape["bias"]).to(device)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            route = new.to(DTYPES[dt]).route(x)
        del model, x, new
        t = bench([], shape, dtype=dt, reps=reps, baselines=tuple(baselines) + ("modelnew",), device=device,
                  log=False, copy_bw=bw)
        t["kind"], t["bytes"] = "shape_sweep", min_bytes(shape, dt)
        t["route"] = np.where(t["variant"] == "modelnew", route.name, "")
        if log:
            append_results(t.to_dict("records"))
        tables.append(t)
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()


def plot_shape_sweep(df: pd.DataFrame | None = None, device_name: str | None = None, path: str | Path | None = None):
    """ModelNew's speedup over eager (eager time / ModelNew time, same run) per channel count, one point per
    shape of the log's latest 'shape_sweep' run on one GPU, marked by the route taken; the 1.0 line is parity."""
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
    sel = sel[(sel["device_name"] == sel["device_name"].iloc[-1]) & (sel["commit"] == sel["commit"].iloc[-1])]
    sel = sel.dropna(subset=["speedup_vs_eager"])
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
    ax.set_title(f"ModelNew vs eager over {len(sel)} shapes on {sel['device_name'].iloc[0]} (L2 flushed)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def _copy_model(model: Model) -> Model:
    m = Model(model.dw.in_channels, model.pw.out_channels, model.dw.kernel_size[0], model.dw.dilation[0],
              model.dw.bias is not None).to(model.dw.weight.device)
    m.load_state_dict(model.state_dict())
    return m


def tolerance(variant: str, dtype: str = "float32") -> float:
    """The rel. error bound for a variant at an I/O dtype: its accuracy class for float32, bf16's otherwise."""
    v = variant_info(variant)
    return v.tolerance if dtype == "float32" else max(v.tolerance, TOLERANCE["bf16"])


def _defines_str(defines: dict | None) -> str:
    return ";".join(f"{k}={v}" for k, v in sorted((defines or {}).items()))


def _variant_spec(spec: str) -> tuple[str, dict | None]:
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

    Both outputs are checked against float64 first. Then A and B are called alternately (A B A B ...), each
    timed call primed (run once just before, untimed, so its code is in the instruction caches as in bench)
    and preceded by the L2 flush, and the ratio t_A / t_B taken pair by pair; returns the median ratio, its
    95% bootstrap interval and a verdict: A is 'faster' (interval below 1), 'slower' (above 1) or
    'within noise'. Logged to results/ as kind 'ab'.
    """
    if a == b:
        raise ValueError(f"ab: A and B are the same ({a!r})")
    shape = dict(shape or HEADLINE)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    specs = {s: _variant_spec(s) for s in (a, b)}  # label -> (variant or baseline, defines or None)
    for n, _ in specs.values():
        if n not in BASELINES and variant_info(n).device != device:
            raise ValueError(f"variant {n!r} runs on {variant_info(n).device}, not {device}")
    model, x = _make_case(shape, DTYPES[dtype], device, seed=1234 + seed)
    ref = reference(model, x)
    fns, errs = {}, {}
    for s, (n, defs) in specs.items():
        run_model = model if n not in BASELINES or dtype == "float32" else _copy_model(model).to(DTYPES[dtype])
        fns[s] = _callable(n, run_model, x, defs)
        if n == "clone":
            errs[s] = float("nan")
            continue
        y = run_variant(n, model, x, defines=defs) if n not in BASELINES else fns[s]()
        errs[s] = rel_err(y, ref)
        bound = tolerance(n, dtype) if n not in BASELINES else TOLERANCE["tf32" if dtype == "float32" else "bf16"]
        if not errs[s] <= bound:
            raise AssertionError(f"ab: {s} is wrong at {shape} {dtype}: rel. error {errs[s]:.3g} > {bound:g}")
    # A and B in turn, queued as bench queues its calls, each primed (why: _Timer.time_interleaved)
    pairs = _Timer(device).time_interleaved([fns[a], fns[b]], reps)
    ratios = pairs[:, 0] / pairs[:, 1]
    rng = np.random.default_rng(seed)
    boot = np.median(rng.choice(ratios, size=(2000, len(ratios)), replace=True), axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    verdict = "faster" if hi < 1 else "slower" if lo > 1 else "within noise"
    result = {"a": a, "b": b, "median_a_us": float(np.median(pairs[:, 0])),
              "median_b_us": float(np.median(pairs[:, 1])), "ratio": float(np.median(ratios)),
              "ci_low": float(lo), "ci_high": float(hi), "verdict": verdict, "rel_err_a": errs[a],
              "rel_err_b": errs[b], "n": reps}
    if log:
        env, now = environment(device), _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
        rows = []
        for s, col in ((a, 0), (b, 1)):
            t, (n, defs) = pairs[:, col], specs[s]
            rows.append({"timestamp": now, "kind": "ab", **env, "variant": n,
                         "source_hash": source_hash(n) if n not in BASELINES else "",
                         "defines": _defines_str(defs) if defs else "",
                         **_shape_cols(shape), "dtype": dtype, "rel_err": errs[s], "median_us": float(np.median(t)),
                         "p10_us": float(np.percentile(t, 10)), "p90_us": float(np.percentile(t, 90)), "n": reps,
                         "l2_flushed": device == "cuda",
                         "note": f"ab {a} vs {b}: ratio {result['ratio']:.4f} [{lo:.4f}, {hi:.4f}] {verdict}"})
        append_results(rows)
    return result


# --------------------------------------------------------------------------------------------------
# Copy-paste ModelNew (KernelBench format)
# --------------------------------------------------------------------------------------------------
_COMMENT_OR_STRING = re.compile(r'("(?:\\.|[^"\\\n])*")|//[^\n]*|/\*.*?\*/', re.S)


def _inline_headers(path: Path, kdir: Path, seen: set) -> str:
    """The file's text with its local #include "..." replaced by the headers' text (each header once)."""
    out = []
    for line in path.read_text().splitlines():
        m = _INCLUDE.match(line)
        if m and (kdir / m.group(1)).is_file():
            inc = kdir / m.group(1)
            if inc not in seen:
                seen.add(inc)
                out.append(_inline_headers(inc, kdir, seen))
            continue
        if line.strip() != "#pragma once":
            out.append(line)
    return "\n".join(out)


def _strip_comments(src: str) -> str:
    src = _COMMENT_OR_STRING.sub(lambda m: m.group(1) or "", src)
    return re.sub(r"\n\s*\n+", "\n", src)


_EXPORT_CONDITION = {  # when the exported file's fused kernel serves an input (else its general path does)
    "tf32": "x.dtype == torch.float32 and torch.backends.cudnn.allow_tf32",
    "strict": "x.dtype == torch.float32 and not torch.backends.cudnn.allow_tf32",
    "bf16": "x.dtype in (torch.bfloat16, torch.float16)",
}


def export_modelnew(variant: str | None = None, path: str | Path | None = None) -> Path:
    """Write ModelNew as one self-contained KernelBench-format file: the variant's kernel and launcher and the
    general path's kernel (kernels/dw_silu.cu) inlined as strings, module-level load_inline, and
    `class ModelNew(nn.Module)` with Model's __init__ signature and `dw`/`pw` parameters. It routes as ModelNew
    does: the fused kernel where its accuracy class matches the input (tf32: float32 with cuDNN's TF32 switch
    on; strict: with it off; bf16: 16-bit input) and its launcher accepts the shape, else the general path
    (dw_silu + PyTorch's 1x1 conv), PyTorch for empty input; it trains (eager's backward ops). A kernel pinned to
    one arch (arch=9.0a) is built only on such a GPU; elsewhere the general path serves every input. Nothing of
    this repository is imported by it. Default: DEFAULT_EXPORT_VARIANT."""
    variant = variant or DEFAULT_EXPORT_VARIANT
    v = variant_info(variant)
    if v.device != "cuda":
        raise ValueError(f"export is for CUDA variants (KernelBench runs on a GPU); {variant!r} runs on {v.device}")
    kdir = v.path.parent
    defines = f'#define FUSED_VARIANT "{variant}"\n#define FUSED_CUDA 1\n'
    cpp = defines + _strip_comments(_inline_headers(kdir / LAUNCHER, kdir, set()))
    cuda = defines + _strip_comments(_inline_headers(v.path, kdir, set()))
    general = _strip_comments((kdir / "dw_silu.cu").read_text())
    for src in (cpp, cuda, general):
        if '"""' in src:
            raise ValueError("kernel source contains a triple quote; cannot embed it")
    digest = hashlib.sha256((cpp + cuda).encode()).hexdigest()[:12]
    gdigest = hashlib.sha256(general.encode()).hexdigest()[:12]
    sm = v.arch.replace(".", "")
    arch_flag = f', "-gencode=arch=compute_{sm},code=sm_{sm}"' if sm else ""
    if sm:  # e.g. 9.0a: the wgmma/TMA kernels build and run on that GPU only
        major, minor = v.arch.rstrip("a").split(".")
        fused_when = f"torch.cuda.is_available() and torch.cuda.get_device_capability() == ({major}, {minor})"
    else:
        fused_when = "torch.cuda.is_available()"
    text = f'''"""KernelBench ModelNew: fused depthwise-dilated Conv1d + SiLU + pointwise Conv1d (fused_jit export).

Fused kernel: {variant!r} (kernels/{v.path.name}, source hash {source_hash(variant)}, accuracy class {v.accuracy}),
used when {_EXPORT_CONDITION[v.accuracy]}, its launcher accepts the shape and, measured at the first call of a
shape, it reproduces eager there (cuDNN chooses per shape whether eager's 1x1 conv runs in TF32).
Everywhere else the general path: kernels/dw_silu.cu computes silu(dw(x)) with eager's exact numerics and
PyTorch's own 1x1 conv finishes, so the output follows torch.backends.cudnn.allow_tf32 as eager's does.
Empty input: PyTorch's own ops. Backward: eager's own backward ops (convolution_backward, silu_backward).
Self-contained: needs torch, ninja and nvcc.
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
{cpp}
"""

cuda_source = r"""
{cuda}
"""

general_source = r"""
{general}
"""

general = load_inline(
    name="fused_dw_silu_{gdigest}",
    cpp_sources="torch::Tensor dw_silu(torch::Tensor x, torch::Tensor w_dw, c10::optional<torch::Tensor> b_dw, "
                "int64_t dilation, int64_t padding);",
    cuda_sources=general_source,
    functions=["dw_silu"],
    extra_cuda_cflags=["-O3"],
)

fused = load_inline(
    name="fused_{variant}_{digest}",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3", "-std=c++17"{arch_flag}],
    no_implicit_headers=True,
) if {fused_when} else None

_routes = {{}}


def _use_fused(x, w_dw, b_dw, w_pw, b_pw, dilation, padding):
    key = (x.device, tuple(x.shape), x.dtype, x.data_ptr() % 16, b_dw is None, b_pw is None, dilation, padding,
           torch.backends.cudnn.allow_tf32)
    if key not in _routes:
        ok = bool(fused is not None and x.is_cuda and {_EXPORT_CONDITION[v.accuracy]}
                  and fused.why_unsupported(x, w_dw, b_dw, w_pw, b_pw, dilation, padding) == "")
        if ok:  # first call of a shape: does the kernel reproduce eager's 1x1 conv here? (cuDNN picks per shape)
            with torch.no_grad():
                y = fused.forward(x, w_dw, b_dw, w_pw, b_pw, dilation, padding)
                y_gen = _general(x, w_dw, b_dw, w_pw, b_pw, dilation, padding)
                bound = (1e-5 if x.dtype == torch.float32 else 1e-2) * max(1.0, float(y_gen.abs().max()))
                ok = bool((y - y_gen).abs().max() <= bound)
        _routes[key] = ok
    return _routes[key]


def _general(x, w_dw, b_dw, w_pw, b_pw, dilation, padding):
    return torch.nn.functional.conv1d(general.dw_silu(x, w_dw, b_dw, dilation, padding), w_pw, b_pw)


def _forward(x, w_dw, b_dw, w_pw, b_pw, dilation, padding):
    t_out = x.shape[2] + 2 * padding - dilation * (w_dw.shape[-1] - 1)
    if x.numel() == 0 or t_out < 1 or not x.is_cuda:
        v = torch.nn.functional.conv1d(x, w_dw, b_dw, padding=padding, dilation=dilation, groups=x.shape[1])
        return torch.nn.functional.conv1d(torch.nn.functional.silu(v), w_pw, b_pw)
    x = x.contiguous()
    if _use_fused(x, w_dw, b_dw, w_pw, b_pw, dilation, padding):
        return fused.forward(x, w_dw, b_dw, w_pw, b_pw, dilation, padding)
    return _general(x, w_dw, b_dw, w_pw, b_pw, dilation, padding)


class _DwSepConv1d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w_dw, b_dw, w_pw, b_pw, dilation, padding):
        ctx.save_for_backward(x, w_dw, b_dw, w_pw, b_pw)
        ctx.dilation, ctx.padding = dilation, padding
        return _forward(x, w_dw, b_dw, w_pw, b_pw, dilation, padding)

    @staticmethod
    def backward(ctx, gy):
        x, w_dw, b_dw, w_pw, b_pw = ctx.saved_tensors
        d, p, c = ctx.dilation, ctx.padding, x.shape[1]
        need = ctx.needs_input_grad
        aten = torch.ops.aten
        v = aten.convolution(x, w_dw, b_dw, [1], [p], [d], False, [0], c)
        a = aten.silu(v)
        need_act = need[0] or need[1] or need[2]
        ga, gw_pw, gb_pw = aten.convolution_backward(
            gy, a, w_pw, None if b_pw is None else [w_pw.shape[0]], [1], [0], [1], False, [0], 1,
            [need_act, need[3], need[4] and b_pw is not None])
        gx = gw_dw = gb_dw = None
        if need_act:
            gx, gw_dw, gb_dw = aten.convolution_backward(
                aten.silu_backward(ga, v), x, w_dw, None if b_dw is None else [c], [1], [p], [d], False, [0], c,
                [need[0], need[1], need[2] and b_dw is not None])
        return gx, gw_dw, gb_dw, gw_pw, gb_pw, None, None


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dilation=1, bias=True):
        super().__init__()
        padding = (kernel_size - 1) * dilation // 2
        self.dw = nn.Conv1d(in_channels, in_channels, kernel_size, padding=padding, dilation=dilation,
                            groups=in_channels, bias=bias)
        self.pw = nn.Conv1d(in_channels, out_channels, 1, bias=bias)

    def forward(self, x):
        args = [self.dw.weight, self.dw.bias, self.pw.weight, self.pw.bias]
        if x.is_floating_point() and torch.is_autocast_enabled(x.device.type):
            dt = torch.get_autocast_dtype(x.device.type)
            x, args = x.to(dt), [a if a is None else a.to(dt) for a in args]
        if torch.is_grad_enabled() and (x.requires_grad or any(a is not None and a.requires_grad for a in args)):
            return _DwSepConv1d.apply(x, *args, self.dw.dilation[0], self.dw.padding[0])
        return _forward(x, *args, self.dw.dilation[0], self.dw.padding[0])
'''
    path = Path(path or f"modelnew_{variant}.py")
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path


# --------------------------------------------------------------------------------------------------
# results/timings.csv: an append-only log, written atomically under a lock
# --------------------------------------------------------------------------------------------------
def append_results(rows: list[dict], path: Path | None = None) -> Path:
    """Append rows to the CSV log. Under a file lock, the kept rows plus the new ones are written to a
    temporary file that replaces the log in one rename: an interrupted or concurrent writer never leaves
    a broken file. A damaged (partial) last line from elsewhere is dropped, the rows before it are kept."""
    path = Path(path or RESULTS_CSV)
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        header, old = _read_rows(path)
        fields = header + [k for r in rows for k in r if k not in header]
        fields = list(dict.fromkeys(fields))
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore", restval="")
            w.writeheader()
            w.writerows(old)
            w.writerows(rows)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    return path


def _read_rows(path: Path) -> tuple[list[str], list[dict]]:
    if not path.is_file() or path.stat().st_size == 0:
        return [], []
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):  # a partial last line: drop it, keep the rest
        warnings.warn(f"{path}: dropping a damaged last line: {lines[-1][:80]!r}")
        lines = lines[:-1]
    reader = csv.reader(io.StringIO("".join(lines)))
    header = next(reader, [])
    rows = []
    for rec in reader:
        if len(rec) == len(header):
            rows.append(dict(zip(header, rec)))
        else:
            warnings.warn(f"{path}: skipping a malformed row ({len(rec)} fields, expected {len(header)})")
    return header, rows


def read_results(path: Path | None = None) -> pd.DataFrame:
    """The results log as a DataFrame (numbers parsed)."""
    header, rows = _read_rows(Path(path or RESULTS_CSV))
    df = pd.DataFrame(rows, columns=header)
    text_cols = {"timestamp", "kind", "device_name", "torch", "cuda", "commit", "variant", "source_hash", "defines",
                 "dtype", "note"}  # a hash like 991860679022 must stay text
    for col in df.columns:
        if col in text_cols:
            continue
        if col == "bias" or col == "l2_flushed":
            df[col] = df[col].map({"True": True, "False": False}).fillna(df[col])
            continue
        with contextlib.suppress(ValueError, TypeError):
            num = df[col].map(lambda v: float(v) if v != "" else np.nan).astype(float)
            df[col] = num.astype("int64") if num.notna().all() and (num % 1 == 0).all() else num
    return df


# --------------------------------------------------------------------------------------------------
# Reports: the ladder table and plot, from results/timings.csv
# --------------------------------------------------------------------------------------------------
def ladder_table(df: pd.DataFrame | None = None, device_name: str | None = None, shape: dict | None = None,
                 ) -> pd.DataFrame:
    """The latest bench row of each variant and baseline (per dtype) on one GPU at one shape (headline by
    default): its time, spread, error, ratio to the floor and speedup over eager timed in the same run
    (NaN where that run did not time eager). Where a variant has rows built with its parameters in
    results/tuned.json for that GPU, the latest of those: the table shows what `load` builds there now."""
    df = read_results() if df is None else df
    shape = dict(shape or HEADLINE)
    if df.empty:
        return df
    sel = df[(df["kind"] == "bench") & ~df["device_name"].astype(str).str.startswith("CPU ")]
    if device_name:
        sel = sel[sel["device_name"] == device_name]
    for k, val in _shape_cols(shape).items():
        sel = sel[sel[k].astype(str) == str(val)]
    if sel.empty:
        return sel
    device_name = device_name or sel["device_name"].iloc[-1]
    sel = sel[sel["device_name"] == device_name].copy()
    sel["run"] = _run_ids(sel)
    tuned = _tuned_table().get(device_name, {})
    sel["as_tuned"] = [n not in tuned or str(d) == _defines_str(tuned[n])
                       for n, d in zip(sel["variant"], sel["defines"])]
    has_tuned = sel.groupby(["variant", "dtype"])["as_tuned"].transform("any")
    pick = sel[sel["as_tuned"] | ~has_tuned]
    latest = pick.sort_values("timestamp", kind="stable").groupby(["variant", "dtype"]).tail(1).drop(
        columns="as_tuned").copy()
    order = {n: i for i, n in enumerate(list(BASELINES) + variants())}
    latest["order"] = latest["variant"].map(lambda n: order.get(n, 99))
    latest = latest.sort_values(["order", "dtype"]).drop(columns="order")
    latest["x_floor"] = latest["median_us"] / latest["floor_us"]
    eager = sel[sel["variant"] == "eager"].groupby(["run", "dtype"])["median_us"].last()  # same run and dtype
    latest["speedup_vs_eager"] = [eager.get((r, dt), float("nan")) / m
                                  for r, dt, m in zip(latest["run"], latest["dtype"], latest["median_us"])]
    return latest


def _run_ids(df: pd.DataFrame) -> pd.Series:
    """Which bench call each row came from: its 'run' column, or, for rows logged before that column
    existed, consecutive rows of one commit, shape and dtype until a variant repeats."""
    ids, current, seen, key_prev = [], 0, set(), None
    has_run = "run" in df.columns
    for r in df.itertuples():
        if has_run and isinstance(r.run, str) and r.run:
            ids.append(r.run)
            continue
        key = (r.commit, r.dtype, r.B, r.C_in, r.C_out, r.T, r.K, r.dilation)
        if key != key_prev or r.variant in seen:
            current, seen = current + 1, set()
        seen.add(r.variant)
        key_prev = key
        ids.append(f"legacy-{current}")
    return pd.Series(ids, index=df.index)


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
    med = rungs["median_us"].to_numpy()
    err = np.vstack([med - rungs["p10_us"].to_numpy(), rungs["p90_us"].to_numpy() - med])
    ax.bar(labels, med, yerr=err, color="#4c72b0", capsize=3)
    for i, y in enumerate(med):
        ax.annotate(f"{y:.3g}", (i, y), ha="center", va="bottom", fontsize=8)
    styles = {"eager": ("#c44e52", "--"), "compile": ("#dd8452", "-."), "clone": ("#55a868", ":")}
    for name, (color, ls) in styles.items():
        row = t[(t["variant"] == name) & (t["dtype"] == "float32")]
        if len(row):
            ax.axhline(row["median_us"].iloc[0], color=color, ls=ls, label=f"{name} {row['median_us'].iloc[0]:.3g} us")
    f32 = t[t["dtype"] == "float32"]
    ax.axhline(f32["floor_us"].iloc[0], color="k", lw=1.5,
               label=f"memory floor (fp32) {f32['floor_us'].iloc[0]:.3g} us")
    ax.set_yscale("log")
    ax.set_ylabel("median time per call, us (log)")
    ax.set_title(f"The ladder at B=16 C=128 T=2048 K=5 d=2 on {t['device_name'].iloc[0]} (L2 flushed)")
    ax.legend(fontsize=8, loc="upper right")
    plt.setp(ax.get_xticklabels(), rotation=35, ha="right")
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def report(readme: Path | None = None) -> pd.DataFrame:
    """Regenerate results/ladder.png and the results table between the README's markers, from the log."""
    t = ladder_table()
    plot_ladder(path=ROOT / "results" / "ladder.png")
    log = read_results()
    if "kind" in log and (log["kind"] == "shape_sweep").any():
        plot_shape_sweep(log, path=ROOT / "results" / "shape_sweep.png")
    readme = Path(readme or ROOT / "README.md")
    if t.empty or not readme.is_file():
        return t
    lines = [f"GPU: {t['device_name'].iloc[0]}, torch {t['torch'].iloc[0]}, CUDA {t['cuda'].iloc[0]}, "
             f"commit(s) {', '.join(sorted(set(map(str, t['commit']))))}; median of {int(t['n'].max())} calls, "
             "L2 flushed; each row is the latest bench of that variant and dtype; floor = minimum bytes / copy "
             "bandwidth measured in the same run; speedup vs eager in the same run and dtype (-: that run did not "
             "time eager).", "",
             "| rung | variant | dtype | median us | p10-p90 us | rel. err vs fp64 | x floor | speedup vs eager |",
             "|---|---|---|---|---|---|---|---|"]
    for r in t.itertuples():
        rung = f"{variant_info(r.variant).rung:02d}" if r.variant not in BASELINES else "-"
        err = "-" if pd.isna(r.rel_err) else f"{r.rel_err:.1e}"
        speedup = "-" if pd.isna(r.speedup_vs_eager) else f"{r.speedup_vs_eager:.2f}"
        lines.append(f"| {rung} | {r.variant} | {r.dtype} | {r.median_us:.1f} | {r.p10_us:.1f}-{r.p90_us:.1f} | "
                     f"{err} | {r.x_floor:.2f} | {speedup} |")
    text = readme.read_text()
    start, end = "<!-- results:start -->", "<!-- results:end -->"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + start + "\n" + "\n".join(lines) + "\n" + end + rest.split(end, 1)[1]
        tmp = readme.with_name(f".{readme.name}.tmp")
        tmp.write_text(text)
        os.replace(tmp, readme)
    return t


# --------------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------------
def _shape_args(p: argparse.ArgumentParser):
    g = p.add_argument_group("shape (default: the headline B=16 C=128 T=2048 K=5 d=2)")
    g.add_argument("--B", type=int, default=batch_size, help="batch")
    g.add_argument("--C-in", type=int, default=in_channels, help="input channels")
    g.add_argument("--C-out", type=int, default=out_channels, help="output channels")
    g.add_argument("--T", type=int, default=length, help="time steps")
    g.add_argument("--K", type=int, default=kernel_size, help="depthwise kernel size")
    g.add_argument("--dilation", type=int, default=dilation, help="depthwise dilation")
    g.add_argument("--no-bias", action="store_true", help="both convolutions without bias")
    g.add_argument("--dtype", default="float32", choices=list(DTYPES), help="I/O element type")


def _shape_from(a) -> dict:
    return dict(B=a.B, C_in=a.C_in, C_out=a.C_out, T=a.T, K=a.K, dilation=a.dilation, bias=not a.no_bias)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="fused_jit.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="list the variants in ladder order")
    pc = sub.add_parser("check", help="correctness vs float64 over the shape battery (exit 1 on failure)")
    pc.add_argument("--variant", action="append", help="variant(s) to check (default: all for this machine)")
    pc.add_argument("--shape-only", action="store_true", help="check only the shape given by the shape options")
    pc.add_argument("--trials", type=int, default=2, help="fresh random inputs per shape")
    pc.add_argument("--define", action="append", default=[], metavar="NAME=VALUE",
                    help="compile-time parameter over the tuned ones (e.g. --define TILE_T=32), repeatable")
    _shape_args(pc)
    pb = sub.add_parser("bench", help="time variants and baselines, append to results/timings.csv")
    pb.add_argument("--variant", action="append", help="variant(s) to time (default: all for this machine)")
    pb.add_argument("--reps", type=int, default=200, help="timed calls per variant")
    pb.add_argument("--no-baselines", action="store_true", help="skip eager / torch.compile / clone")
    pb.add_argument("--no-log", action="store_true", help="do not append to results/timings.csv")
    _shape_args(pb)
    pa = sub.add_parser("ab", help="interleaved A/B timing of two variants or baselines (eager, compile, ...)")
    pa.add_argument("a", help="variant or baseline A (a variant may take parameters: name:NAME=V,NAME=V)")
    pa.add_argument("b", help="variant or baseline B")
    pa.add_argument("--reps", type=int, default=200, help="A/B pairs")
    pa.add_argument("--no-log", action="store_true", help="do not append to results/timings.csv")
    _shape_args(pa)
    pe = sub.add_parser("export", help="write a self-contained KernelBench ModelNew file")
    pe.add_argument("variant", nargs="?", default=None, help=f"variant (default {DEFAULT_EXPORT_VARIANT})")
    pe.add_argument("-o", "--output", default=None, help="output file (default modelnew_<variant>.py)")
    ps = sub.add_parser("sweep", help="build, check and time a grid of a variant's compile-time parameters")
    ps.add_argument("variant")
    ps.add_argument("param", nargs="+", help="NAME=v1,v2,... (e.g. TILE_T=32,64 WARPS_N=2,4)")
    ps.add_argument("--reps", type=int, default=100)
    ps.add_argument("--no-save", action="store_true", help="do not record the best in results/tuned.json")
    _shape_args(ps)
    pss = sub.add_parser("shape-sweep", help="time ModelNew vs eager over the contract's grid of shapes")
    pss.add_argument("--C", type=int, nargs="+", default=None, help="only these channel counts")
    pss.add_argument("--dtype", action="append", default=None, choices=list(DTYPES), help="only these dtypes")
    pss.add_argument("--reps", type=int, default=30)
    sub.add_parser("report", help="regenerate results/ladder.png and the README results table from the log")
    a = p.parse_args(argv)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if a.cmd == "list":
        for n in variants():
            v = variant_info(n)
            print(f"{v.rung:02d}  {n:<22} {v.device:<5} {v.accuracy:<7} {','.join(v.dtypes):<28} "
                  f"{v.path.relative_to(ROOT) if v.path.is_relative_to(ROOT) else v.path}")
        return 0
    names = getattr(a, "variant", None) or variants(device)
    if a.cmd == "check":
        ok_all = True
        shapes = [_shape_from(a)] if a.shape_only else None
        dts = [a.dtype] if a.shape_only or a.dtype != "float32" else None
        for n in names:
            table, ok = check(n, shapes=shapes, dtypes=dts, trials=a.trials,
                              defines=defines_over_tuned(n, a.define) if a.define else None)
            ok_all &= ok
            with pd.option_context("display.width", 200, "display.max_rows", 500):
                print(f"== {n}{''.join(' ' + d for d in a.define)}: {'PASS' if ok else 'FAIL'}")
                print(table.to_string(index=False))
        return 0 if ok_all else 1
    if a.cmd == "bench":
        # every variant in each dtype it takes (a named variant: the dtype given, or its first)
        if a.variant:
            runs = [(a.dtype if a.dtype in variant_info(n).dtypes else variant_info(n).dtypes[0], [n])
                    for n in a.variant]
        else:
            dts = [a.dtype] if a.dtype != "float32" else list(DTYPES)
            runs = [(dt, [n for n in variants(device) if dt in variant_info(n).dtypes]) for dt in dts]
        bad = []
        for dt, ns in runs:
            if not ns:
                continue
            table = bench(ns, _shape_from(a), dt, reps=a.reps, baselines=() if a.no_baselines else None,
                          log=not a.no_log)
            cols = ["variant", "median_us", "p10_us", "p90_us", "rel_err", "max_diff_eager", "gbps", "x_floor",
                    "speedup_vs_eager"]
            with pd.option_context("display.width", 200, "display.float_format", "{:.4g}".format):
                print(f"{table['device_name'].iloc[0]}  torch {table['torch'].iloc[0]}  shape {_shape_from(a)} "
                      f"{dt}  floor {table['floor_us'].iloc[0]:.2f} us")
                print(table[cols].to_string(index=False))
            bad += [r.variant for r in table.itertuples() if r.variant not in BASELINES
                    and not r.rel_err <= tolerance(r.variant, dt)]
        if bad:
            print(f"accuracy out of bounds: {bad}", file=sys.stderr)
        return 1 if bad else 0
    if a.cmd == "ab":
        r = ab(a.a, a.b, _shape_from(a), a.dtype, reps=a.reps, log=not a.no_log)
        print(f"{r['a']}: {r['median_a_us']:.2f} us   {r['b']}: {r['median_b_us']:.2f} us   "
              f"ratio A/B {r['ratio']:.4f}  95% CI [{r['ci_low']:.4f}, {r['ci_high']:.4f}]  -> A is {r['verdict']}")
        return 0
    if a.cmd == "export":
        print(export_modelnew(a.variant, a.output))
        return 0
    if a.cmd == "sweep":
        grid = {k: v.split(",") for k, v in (p_.split("=", 1) for p_ in a.param)}
        t = sweep(a.variant, grid, _shape_from(a), reps=a.reps, save_best=not a.no_save, dtype=a.dtype)
        with pd.option_context("display.width", 200, "display.max_colwidth", 80):
            print(t.to_string(index=False))
        return 0 if (t.status == "ok").any() else 1
    if a.cmd == "shape-sweep":
        grid = [(s_, dt) for s_, dt in shape_grid() if (not a.C or s_["C_in"] in a.C) and (not a.dtype or dt in a.dtype)]
        t = shape_sweep(grid, reps=a.reps)
        cols = [c for c in ("variant", "route", "B", "C_in", "T", "K", "dilation", "dtype", "median_us",
                            "speedup_vs_eager", "max_diff_eager") if c in t]
        with pd.option_context("display.width", 200, "display.max_rows", 1000, "display.float_format", "{:.4g}".format):
            print(t[t.variant == "modelnew"][cols].to_string(index=False))
        plot_shape_sweep(path=ROOT / "results" / "shape_sweep.png")
        return 0
    if a.cmd == "report":
        t = report()
        print(t.to_string(index=False) if not t.empty else "no GPU bench rows at the headline shape yet")
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
