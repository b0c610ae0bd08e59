"""The copy-paste KernelBench ModelNew: one self-contained file that routes as ModelNew does."""
from __future__ import annotations

import hashlib
import inspect
import os
import re
from pathlib import Path

from .config import DEFAULT_EXPORT_VARIANT, LAUNCHER
from .registry import variant_info
from .jit import source_hash, _INCLUDE
from .routing import eager_backward


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
    backward_source = inspect.getsource(eager_backward).rstrip()
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


{backward_source}

class _DwSepConv1d(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w_dw, b_dw, w_pw, b_pw, dilation, padding):
        ctx.save_for_backward(x, w_dw, b_dw, w_pw, b_pw)
        ctx.dilation, ctx.padding = dilation, padding
        return _forward(x, w_dw, b_dw, w_pw, b_pw, dilation, padding)

    @staticmethod
    def backward(ctx, gy):
        grads = eager_backward(gy, *ctx.saved_tensors, ctx.dilation, ctx.padding, ctx.needs_input_grad[:5])
        return (*grads, None, None)


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
