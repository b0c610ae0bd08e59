"""Paths, the headline shape, accuracy classes and the names every module shares."""
from __future__ import annotations

import os
from pathlib import Path

import torch


ROOT = Path(__file__).resolve().parents[1]  # the repository (kernels/, results/)


KERNELS_DIR = Path(os.environ.get("FUSED_KERNELS_DIR", ROOT / "kernels"))


RESULTS_CSV = Path(os.environ.get("FUSED_RESULTS", ROOT / "results" / "timings.csv"))


LAUNCHER = "launcher.cpp"
# the depthwise half of the backward (rungs 3-4, and rung 5 with the 1x1 conv's data gradient), built beside every
# CUDA variant
BACKWARD_KERNELS = ("dw_silu_backward.cu", "dw_silu_backward_tc.cu", "pw_weight_grad.cu", "pw_weight_grad_wgmma.cu",
                    "dw_silu_wgrad_wgmma.cu", "dgrad_wgrad_wgmma.cu", "pw_data_grad_wgmma.cu")


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
DEFAULT_VARIANT = "wgmma_wide"  # rung 09's kernel at C <= 128, its wide kernel where that pays (fused_kernel_pays)


DEFAULT_EXPORT_VARIANT = "wgmma_wide"


TUNED_JSON = ROOT / "results" / "tuned.json"


# ModelNew's rule (DESIGN.md's contract: eager's numbers, any shape, never slower than eager). For CUDA input:
#   1. float32 with torch.backends.cudnn.allow_tf32 on (PyTorch's default): the TF32 fused kernel
#      (FUSED_TF32, activations as eager computes them, both GEMM operands rounded to TF32 as cuDNN rounds);
#      float32 with it off: the strict fused kernel (FUSED_STRICT, 3xTF32); bfloat16 / float16: FUSED_16BIT.
#   2. Where that kernel refuses the shape (its launcher says why: C > 128, a depthwise span > 16, T % 4 != 0,
#      another GPU, ...): the general path, GENERAL = the dw_silu kernel (kernels/dw_silu.cu: silu(dw(x)) bit
#      for bit as eager) followed by PyTorch's own 1x1 conv, which follows the TF32 switch as eager's does.
#   3. Where PyTorch is measured faster (eager_is_faster: the shape sweep's result) or the input is empty:
#      EAGER, PyTorch's own ops.
#   Where the TF32 kernel leaves eager's numbers at a shape (its probe at the shape's first call: cuDNN's 1x1 conv
#   rounds differently there), its ties-away build (TF32_TIES_AWAY, common.cuh's FUSED_TF32_RNA) is probed next,
#   and serves the shape if it matches eager (prepared 2026-12-07: docs/ladder.md, "Runs of 2026-12-07, noon").
# A route other than the fused kernel is announced once per reason (a UserWarning) and `ModelNew.route(x)` says
# which route a given input takes and why. CPU input: the CPU variant (float32), else PyTorch.
FUSED_TF32, FUSED_STRICT, FUSED_16BIT = DEFAULT_VARIANT, "wgmma_3xtf32", "wgmma_bf16"
TF32_TIES_AWAY = {"FUSED_TF32_RNA": "1"}  # FUSED_TF32's ties-away build (route name "VARIANT:FUSED_TF32_RNA=1")


def clone_target(spec: str, dtype: str) -> float:
    """Issue 17's target for the class of `spec` (a variant, a knob build VARIANT:NAME=V,... or modelnew) in `dtype`: its
    time over x.clone()'s of the same dtype, timed in the same run. bf16 I/O 1.25, strict (3xTF32) 1.7, TF32 1.15."""
    return 1.25 if dtype in ("bfloat16", "float16") else 1.7 if "3xtf32" in spec else 1.15


GENERAL, EAGER = "general", "eager"


ROUTES = (GENERAL, EAGER)  # the two routes that are not a kernel file's variant
# ModelNew's backward (kernels/eager_autograd.h): "dw_kernel" for float32 CUDA input runs cuDNN's data gradient of
# the 1x1 conv, then kernels/dw_silu_backward.cu (rungs 3 and 4 of the backward ladder: dx, the activations, both
# depthwise gradients and the 1x1 conv's bias gradient in one pass), then cuDNN's weight gradient; PyTorch's ops
# elsewhere. "fused": where torch.backends.cudnn.allow_tf32 is on and the shape fits (32 <= C, C_out <= 128, rung 4's
# vector shapes), kernels/dw_silu_backward_tc.cu (rung 5) computes the data gradient itself on TF32 tensor cores in
# the same pass (measured slower than "dw_kernel": an opt-in for A/B, not the default); elsewhere it is "dw_kernel".
# "wgrad_kernel": "dw_kernel" with the 1x1 conv's weight and bias gradients by the backward's own TF32 kernel where
# allow_tf32 is on, cuDNN's own weight gradient is TF32 at the shape and 32 <= C, C_out <= 128: rung 7
# (kernels/pw_weight_grad_wgmma.cu, TMA + wgmma) in sm_90a builds on an sm_90 GPU, else rung 6
# (kernels/pw_weight_grad.cu, mma.sync). Measured no faster than "dw_kernel" (rung 7) or slower (rung 6): an opt-in
# for A/B.
# "wgrad_fused": "wgrad_kernel" with, where backward rung 8 takes the shape (sm_90, an sm_90a build, rung 4's vector
# shapes with K <= 5, dx or the depthwise's gradients wanted), kernels/dw_silu_wgrad_wgmma.cu doing rung 4's job and
# the weight gradient in one pass (the activations never leave shared memory). Measured slower than "dw_kernel"
# (docs/results.md, "backward rung 8"): an opt-in for A/B.
# "split": where allow_tf32 is on, cuDNN's data and weight gradients of the 1x1 conv are TF32 GEMMs at the shape,
# 32 <= C, C_out <= 128, rung 4's vector shapes with K <= 5, an sm_90 GPU and an sm_90a build, and W_pw wants a
# gradient: backward rung 9 (kernels/dgrad_wgrad_wgmma.cu: gv = (W_pw^T dy) silu'(v), dW_pw and db_pw from x and dy
# on TF32 tensor cores) then rung 4's gv form (dx, dW_dw, db_dw from gv and x); elsewhere "dw_kernel". Measured
# slower than "dw_kernel" (74.1 against 63.9 us at the headline: rung 9 alone ~44-48 us, latency-bound at 8 warps per
# SM; docs/results.md, "backward rung 9"): an opt-in for A/B.
# "dgrad_kernel" (the default): "dw_kernel" with, where allow_tf32 is on, cuDNN's data gradient of the 1x1 conv is a
# TF32 GEMM at the shape, C, C_out <= 128, T % 4 == 0, an sm_90 GPU and an sm_90a build: backward rung 10
# (kernels/pw_data_grad_wgmma.cu: ga = W_pw^T dy on TF32 wgmma with dy from registers, and db_pw from the same reads)
# in place of cuDNN's data gradient, so that rung 4 reads no dy; elsewhere "dw_kernel". Its first forms were no faster
# than "dw_kernel" (65.18 against 64.91 us at the headline,
# logs/2026-12-04_132054f_rung10_ab_tests_sanitize_backward.log); with dy's boxes requested after W_pw's fill
# (PWDG_TMA_LATE=2) 61.8 against 64.4 (DEFAULT_BACKWARD below).
# "streams": "dw_kernel"'s kernels on two streams where W_pw wants a gradient: cuDNN's data gradient, rung 4 (no act
# written) and the finish on a side stream, beside act recomputed alone and cuDNN's weight gradient from it (the two
# halves of the backward do not depend on each other); gradients bit for bit "dw_kernel"'s. Measured slower at the
# headline (76.1 against 67.6 us: the recompute's extra 16.7 MB read and the two chains slow each other), faster at
# B = 8, C 96 -> 200, T = 1001 (63.4 against 67.4; logs/2026-12-04_58de510_pipelined_streams_bench.log): an opt-in.
# "eager" runs PyTorch's backward ops throughout (eager's gradients, bit for bit under deterministic cuDNN).
# docs/results.md has the measurements of each rung.
BACKWARDS = {"eager": 0, "dw_kernel": 1, "fused": 2, "wgrad_kernel": 3, "wgrad_fused": 4, "split": 5,
             "dgrad_kernel": 6, "streams": 7}
# The default since 2026-12-04: "dgrad_kernel" (backward rung 10 with PWDG_TMA_LATE=2) ran the headline's backward
# 61.8 against "dw_kernel"'s 64.4 us and the training step 86.1 against 90.8 (logs/2026-12-04_6f83237_*); at shapes
# rung 10 does not take it is "dw_kernel".
DEFAULT_BACKWARD = "dgrad_kernel"


BASELINES = ("eager", "eager_fp32", "compile", "clone", "modelnew", "general")  # modelnew: ModelNew's rule,
# timed like eager; general: the general path (dw_silu + PyTorch's 1x1 conv) at any shape
