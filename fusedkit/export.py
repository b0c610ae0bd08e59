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
from .routing import fused_kernel_pays


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
    general path (kernels/general.cpp + dw_silu.cu) inlined as strings, module-level load_inline, and
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
    general_cpp = _strip_comments(_inline_headers(kdir / "general.cpp", kdir, set()))  # eager's backward ops only
    general = _strip_comments(_inline_headers(kdir / "dw_silu.cu", kdir, set()))
    for src in (cpp, cuda, general_cpp, general):
        if '"""' in src:
            raise ValueError("kernel source contains a triple quote; cannot embed it")
    digest = hashlib.sha256((cpp + cuda).encode()).hexdigest()[:12]
    gdigest = hashlib.sha256((general_cpp + general).encode()).hexdigest()[:12]
    sm = v.arch.replace(".", "")
    arch_flag = f', "-gencode=arch=compute_{sm},code=sm_{sm}"' if sm else ""
    if sm:  # e.g. 9.0a: the wgmma/TMA kernels build and run on that GPU only
        major, minor = v.arch.rstrip("a").split(".")
        fused_when = f"torch.cuda.is_available() and torch.cuda.get_device_capability() == ({major}, {minor})"
    else:
        fused_when = "torch.cuda.is_available()"
    pays_source = inspect.getsource(fused_kernel_pays)
    text = f'''"""KernelBench ModelNew: fused depthwise-dilated Conv1d + SiLU + pointwise Conv1d (fused_jit export).

Fused kernel: {variant!r} (kernels/{v.path.name}, source hash {source_hash(variant)}, accuracy class {v.accuracy}),
used when {_EXPORT_CONDITION[v.accuracy]}, its launcher accepts the shape and, measured at the first call of a
shape, it reproduces eager there (cuDNN chooses per shape whether eager's 1x1 conv runs in TF32).
Everywhere else the general path: kernels/dw_silu.cu computes silu(dw(x)) with eager's exact numerics and
PyTorch's own 1x1 conv finishes, so the output follows torch.backends.cudnn.allow_tf32 as eager's does.
Empty input: PyTorch's own ops. With gradients on, one C++ autograd function whose backward is eager's own ops
(the activations recomputed from x; convolution_backward, silu_backward).
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

general_cpp_source = r"""
{general_cpp}
"""

general_source = r"""
{general}
"""

general = load_inline(
    name="fused_general_{gdigest}",
    cpp_sources=general_cpp_source,
    cuda_sources=general_source,
    extra_cflags=["-O3"],
    extra_cuda_cflags=["-O3"],
    no_implicit_headers=True,
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


{pays_source}

def _route(x, w_dw, b_dw, w_pw, b_pw, dilation, padding):
    """The extension that computes x (fused or general; None: PyTorch's own ops), chosen at a shape's first call."""
    key = (x.shape, x.dtype, x.device, x.data_ptr() % 16, x.is_contiguous(), b_dw is None, b_pw is None, dilation,
           padding, torch.backends.cudnn.allow_tf32)
    ext = _routes.get(key, False)
    if ext is False:
        t_out = x.shape[2] + 2 * padding - dilation * (w_dw.shape[-1] - 1)
        if x.numel() == 0 or t_out < 1 or not x.is_cuda:
            ext = None
        else:
            ext = general
            if (fused is not None and {_EXPORT_CONDITION[v.accuracy]}
                    and fused_kernel_pays({variant!r}, x.shape[0], x.shape[1], w_pw.shape[0], t_out)
                    and fused.why_unsupported(x, w_dw, b_dw, w_pw, b_pw, dilation, padding) == ""):
                # does the kernel reproduce eager's 1x1 conv at this shape? (cuDNN picks its GEMM per shape)
                with torch.no_grad():
                    y = fused.forward(x, w_dw, b_dw, w_pw, b_pw, dilation, padding)
                    y_gen = general.forward(x, w_dw, b_dw, w_pw, b_pw, dilation, padding)
                    bound = (1e-5 if x.dtype == torch.float32 else 1e-2) * max(1.0, float(y_gen.abs().max()))
                    if bool((y - y_gen).abs().max() <= bound):
                        ext = fused
        _routes[key] = ext
    return ext


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, dilation=1, bias=True):
        super().__init__()
        padding = (kernel_size - 1) * dilation // 2
        self.dw = nn.Conv1d(in_channels, in_channels, kernel_size, padding=padding, dilation=dilation,
                            groups=in_channels, bias=bias)
        self.pw = nn.Conv1d(in_channels, out_channels, 1, bias=bias)
        self._dilation, self._padding = dilation, padding

    def forward(self, x):
        w_dw, b_dw, w_pw, b_pw = self.dw.weight, self.dw.bias, self.pw.weight, self.pw.bias
        d, p = self._dilation, self._padding
        if x.is_floating_point() and torch.is_autocast_enabled(x.device.type):
            dt = torch.get_autocast_dtype(x.device.type)
            x, w_dw, w_pw = x.to(dt), w_dw.to(dt), w_pw.to(dt)
            b_dw, b_pw = (None if b is None else b.to(dt) for b in (b_dw, b_pw))
        ext = _route(x, w_dw, b_dw, w_pw, b_pw, d, p)
        if ext is None:  # empty input, or not on CUDA: PyTorch's own ops (and errors)
            v = torch.nn.functional.conv1d(x, w_dw, b_dw, padding=p, dilation=d, groups=x.shape[1])
            return torch.nn.functional.conv1d(torch.nn.functional.silu(v), w_pw, b_pw)
        if torch.is_grad_enabled():  # a C++ autograd function whose backward is eager's
            return ext.forward_train(x, w_dw, b_dw, w_pw, b_pw, d, p)
        return ext.forward(x, w_dw, b_dw, w_pw, b_pw, d, p)
'''
    path = Path(path or f"modelnew_{variant}.py")
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path
