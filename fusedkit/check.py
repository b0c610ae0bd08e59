"""Correctness: the shape battery, fresh random cases, the float64 reference, NaN-poisoned outputs (and shared
memory), `check`."""
from __future__ import annotations

import functools
import hashlib
import os
import subprocess
from pathlib import Path

import pandas as pd
import torch
import torch.nn as nn

from .config import HEADLINE, DTYPES, ROOT, KERNELS_DIR
from .model import Model, forward_args, copy_model
from .registry import Variant, variant_info, tolerance
from .jit import load, load_built, cuda_arch, cuda_home, build_root


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


def wide_shapes() -> list[dict]:
    """Shapes for the wide-channel kernel (rung 13), each one it accepts: a partial C_in chunk and C_out tile, narrow
    input with wide output, odd T_out, 32 chunks with idle rows, odd padding (its x box then starts off 16 bytes:
    it faulted there before 62e2af5), the widest x box."""
    return [dict(B=2, C_in=256, C_out=256, T=2048, K=5, dilation=2, bias=True),
            dict(B=2, C_in=192, C_out=192, T=1000, K=3, dilation=1, bias=True),     # padding 1
            dict(B=1, C_in=300, C_out=520, T=1000, K=9, dilation=4, bias=False),    # partial chunk and C_out tile
            dict(B=2, C_in=96, C_out=520, T=516, K=4, dilation=3, bias=True),       # odd T_out
            dict(B=2, C_in=1024, C_out=128, T=256, K=5, dilation=2, bias=True),     # 32 chunks, half the rows idle
            dict(B=1, C_in=1024, C_out=1024, T=2048, K=7, dilation=3, bias=True),   # padding 9
            dict(B=3, C_in=512, C_out=384, T=4096, K=31, dilation=4, bias=True)]    # span 120: the widest x box


def make_case(shape: dict, dtype: torch.dtype, device: str, seed: int):
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
    m = model if model.dw.weight.dtype == x.dtype else copy_model(model).to(x.dtype)
    with torch.no_grad():
        return Model.forward(m, x)


def max_diff(y: torch.Tensor, other: torch.Tensor) -> float:
    """max |y - other| elementwise (in float64); NaN anywhere gives inf."""
    d = (y.double() - other.double()).abs()
    return float(d.max()) if d.numel() and torch.isfinite(d).all() else (0.0 if not d.numel() else float("inf"))


def gradients(model: nn.Module, x: torch.Tensor, gy: torch.Tensor) -> list:
    """[dL/dx, dL/dp for each parameter p of model] for L = sum(model(x) * gy), detached (x itself untouched)."""
    xg = x.detach().clone().requires_grad_(True)
    y = model(xg)
    return [g.detach() for g in torch.autograd.grad(y, [xg, *model.parameters()], gy)]


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
# earlier kernel left there, usually finite, so a wrong read can still give the right answer (the run of 2026-11-30 (4fa178b..be2f50b): rung
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
    arch = cuda_arch()
    h = hashlib.sha256(repr((_SMEM_POISON_CU, arch, torch.__version__, torch.version.cuda)).encode())
    kwargs = dict(cpp_sources="void poison_smem();", cuda_sources="#include <c10/cuda/CUDAStream.h>\n"
                  "#include <c10/cuda/CUDAException.h>\n" + _SMEM_POISON_CU, functions=["poison_smem"],
                  extra_cuda_cflags=["-O3"], with_cuda=True)
    return load_built(f"fused_smem_poison_{h.hexdigest()[:16]}", arch, kwargs)


def tf32_rne(t: torch.Tensor) -> torch.Tensor:
    """float32 -> TF32 (10-bit mantissa) by round to nearest even, kept as float32 (finite inputs): how the
    kernels and cuDNN's TF32 GEMMs round their operands."""
    u = t.contiguous().view(torch.int32).to(torch.int64)
    r = ((u + 0xFFF + ((u >> 13) & 1)) & ~0x1FFF) & 0xFFFFFFFF
    return r.where(r < 2 ** 31, r - 2 ** 32).to(torch.int32).view(torch.float32)


DW_WGRAD_OUTPUTS = ("dx", "dW_dw", "db_dw", "dW_pw", "db_pw")  # what dw_wgrad_fused returns, in order


def _backward_refs(x, w, b, gy, ga64, dilation: int, pad: int):
    """The float64 references and bounds of dw_wgrad_case and split_case from their inputs and ga = dL/d act
    (float64): dx, dW_dw, db_dw (None without b) by float64 autograd through the SiLU and the depthwise; dW_pw from gy
    and eager's float32 act rounded to TF32 as cuDNN rounds them; db_pw from gy's row sums. tols: each output's bound
    on max |got - ref| / max |ref| (float32 summation error, growing as the root of the B * T steps summed)."""
    B, C, T = x.shape
    x64, w64 = x.double().requires_grad_(True), w.double().requires_grad_(True)
    b64 = b.double().requires_grad_(True) if b is not None else None
    conv = torch.nn.functional.conv1d
    act64 = torch.nn.functional.silu(conv(x64, w64, b64, padding=pad, dilation=dilation, groups=C))
    (act64 * ga64).sum().backward()
    act32 = torch.nn.functional.silu(conv(x, w, b, padding=pad, dilation=dilation, groups=C))
    dw_pw = torch.einsum("bot,bct->oc", tf32_rne(gy).double(), tf32_rne(act32).double())[:, :, None]
    refs = [x64.grad, w64.grad, b64.grad if b64 is not None else None, dw_pw, gy.double().sum((0, 2))]
    steps = max(1.0, (B * T / 4096) ** 0.5)
    return refs, [1e-5, 1e-5 * steps, 1e-5 * steps, 2e-6 * steps, 1e-5 * steps]


def dw_wgrad_case(B: int, C: int, C_out: int, T: int, K: int, dilation: int, bias: bool, seed: int = 0):
    """Fresh random inputs of backward rung 8 (kernels/dw_silu_wgrad_wgmma.cu) on the GPU and their float64
    references: returns (args, refs, tols). args = (ga, gy, x, w_dw, b_dw, dilation, padding) for
    `general_kernel().dw_wgrad_fused(*args)`; refs = [dx, dW_dw, db_dw (None without bias), dW_pw, db_pw] in
    float64 (autograd's for the depthwise half; dW_pw from its operands rounded to TF32 as cuDNN rounds them, gy and
    eager's float32 act; db_pw from gy's row sums); tols = each output's bound on max |got - ref| / max |ref|
    (float32 summation error, growing as the root of the B * T steps summed)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    pad = (K - 1) * dilation // 2
    x, ga = (torch.randn(B, C, T, device="cuda", generator=g) for _ in range(2))
    gy = torch.randn(B, C_out, T, device="cuda", generator=g)
    w = torch.randn(C, 1, K, device="cuda", generator=g) / K ** 0.5
    b = torch.randn(C, device="cuda", generator=g) if bias else None
    refs, tols = _backward_refs(x, w, b, gy, ga.double(), dilation, pad)
    return (ga, gy, x, w, b, dilation, pad), refs, tols


SPLIT_OUTPUTS = DW_WGRAD_OUTPUTS  # what split_backward returns, in the same order


def split_case(B: int, C: int, C_out: int, T: int, K: int, dilation: int, bias: bool, seed: int = 0):
    """Fresh random inputs of backward="split" (backward rung 9, kernels/dgrad_wgrad_wgmma.cu, then rung 4's gv form)
    on the GPU and their float64 references: returns (args, refs, tols). args = (gy, x, w_dw, b_dw, w_pw, dilation,
    padding) for `general_kernel().split_backward(*args)`; refs = [dx, dW_dw, db_dw (None without bias), dW_pw,
    db_pw] in float64: ga = W_pw^T gy from both operands rounded to TF32 as cuDNN's data gradient rounds them, then
    float64 autograd through the SiLU and the depthwise; dW_pw from TF32-rounded gy and eager's float32 act; db_pw
    from gy's row sums. tols: each output's bound on max |got - ref| / max |ref| (float32 summation error, growing as
    the root of the B * T steps summed)."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    pad = (K - 1) * dilation // 2
    x = torch.randn(B, C, T, device="cuda", generator=g)
    gy = torch.randn(B, C_out, T, device="cuda", generator=g)
    w = torch.randn(C, 1, K, device="cuda", generator=g) / K ** 0.5
    b = torch.randn(C, device="cuda", generator=g) if bias else None
    w_pw = torch.randn(C_out, C, 1, device="cuda", generator=g) / C ** 0.5
    ga = torch.einsum("oc,bot->bct", tf32_rne(w_pw[:, :, 0]).double(), tf32_rne(gy).double())
    refs, tols = _backward_refs(x, w, b, gy, ga, dilation, pad)
    return (gy, x, w, b, w_pw, dilation, pad), refs, tols


def silu_exhaustive(run: bool = True, guard: int | None = None, rna: bool = False) -> str:
    """common.cuh's guarded SiLU against eager's, both rounded to tf32 and to bf16, at all 2^32 float32 inputs:
    scripts/silu_exhaustive.cu built by nvcc with the JIT's device flags (cached by source hash under build_root())
    and, if `run`, run on the GPU. Returns its report (fallback rates and ulp distances per band of |v|); raises
    RuntimeError with the report if the build fails or any input's rounded value differs from eager's.
    `guard` overrides FUSED_SILU_GUARD (ulp); `rna` builds it with FUSED_TF32_RNA=1 (the tf32 side rounds ties away)."""
    src = ROOT / "scripts" / "silu_exhaustive.cu"
    arch = cuda_arch().replace(".", "").rstrip("a")  # "9.0" or "9.0a" -> sm_90a (the rungs' target)
    flags = ["-std=c++17", "-O3", f"-gencode=arch=compute_{arch}a,code=sm_{arch}a", f"-I{KERNELS_DIR}"]
    flags += [] if guard is None else [f"-DFUSED_SILU_GUARD={int(guard)}"]
    flags += ["-DFUSED_TF32_RNA=1"] if rna else []
    h = hashlib.sha256(repr(flags).encode())
    for f in (src, src.with_name("standalone_check.cuh"), KERNELS_DIR / "common.cuh", KERNELS_DIR / "fused_args.h"):
        h.update(f.read_bytes())  # what the harness includes: an edit rebuilds it
    exe = build_root() / f"silu_exhaustive_{h.hexdigest()[:16]}"
    if not exe.exists():
        if cuda_home() is None:
            raise RuntimeError("silu_exhaustive needs nvcc: no CUDA toolkit found (set CUDA_HOME)")
        tmp = exe.with_name(exe.name + f".{os.getpid()}.tmp")  # written whole, then renamed: never half a binary
        r = subprocess.run([str(Path(cuda_home()) / "bin" / "nvcc"), *flags, str(src), "-o", str(tmp)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            tmp.unlink(missing_ok=True)
            raise RuntimeError(f"nvcc failed on {src}:\n{r.stdout}{r.stderr}")
        os.replace(tmp, exe)
    if not run:
        return ""
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{src.name} failed (exit {r.returncode}):\n{r.stdout}{r.stderr}")
    return r.stdout


def run_variant(variant: str, model: nn.Module, x: torch.Tensor, poison: bool = True,
                defines: dict | None = None) -> torch.Tensor:
    """One call of a variant's kernel into an output poisoned with NaN (an unwritten element stays NaN); on a
    GPU the shared memory of every SM is poisoned with NaN first (a read of unwritten smem then shows)."""
    ext = load(variant, defines)
    args = forward_args(model)
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
                model, x = make_case(shape, DTYPES[dt], device, seed + 1000 * i + trial)
                why = ext.why_unsupported(x, *forward_args(model))
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
