"""ModelNew: Model's parameters, eager's numbers, the fastest route that keeps them; the fused op as a PyTorch
operator (fused_jit::dwsep_conv1d) whose backward is an operator too (fused_jit::dwsep_conv1d_backward: ModelNew's
backward kernels, also inside torch.compile's graphs)."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .config import (FUSED_TF32, FUSED_STRICT, FUSED_16BIT, GENERAL, EAGER, ROUTES, BACKWARDS, DEFAULT_BACKWARD,
                     TF32_TIES_AWAY)
from .model import Model, forward_args
from .registry import variant_info
from .jit import load, general_kernel, defines_over_tuned
from .check import max_diff


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
    """The general path: act from the dw_silu kernel (eager's bits), then PyTorch's 1x1 conv (eager's GEMM), in one
    call into kernels/general.cpp."""
    return general_kernel().forward(x, _as_float32(w_dw), _as_float32(b_dw), w_pw, b_pw, dilation, padding)


def eager_is_faster(shape: dict, dtype: torch.dtype, route: str) -> bool:
    """Where PyTorch's own ops beat what ModelNew would otherwise run, from the shape sweep on the H200
    (docs/results.md lists the points): there ModelNew calls PyTorch. The 2026-12-01 sweep at 8dfb761: every C at
    B=16, T=100 in bfloat16 on the general path ran 0.84-0.94x eager (0.39x once, host-bound); nothing else lost."""
    t_out = shape["T"] + 2 * ((shape["K"] - 1) * shape["dilation"] // 2) - shape["dilation"] * (shape["K"] - 1)
    return route == GENERAL and dtype != torch.float32 and t_out <= 128


def fused_kernel_pays(variant: str, B: int, C_in: int, C_out: int, t_out: int) -> bool:
    """Whether a fused kernel that accepts a shape beats the general path there, as measured on the H200 (route
    grid, results/logs/2026-12-02_9649b8c_wide_sanitize_route_grid.log): rung 13's wide kernel (C_in or C_out
    above 128) ran 1.05-1.87x the general path's speed at C <= 256 with B * T_out >= 16000 and 0.47-0.88x at
    B * T_out <= 2048; at C = 384 and 512 0.34-1.03x. Every other kernel: wherever it runs."""
    if variant != "wgmma_wide" or max(C_in, C_out) <= 128:
        return True
    return max(C_in, C_out) <= 256 and B * t_out >= 16000


def ties_away_name(variant: str) -> str:
    """The route name of a variant's ties-away build: its spec, VARIANT:FUSED_TF32_RNA=1 (fj.variant_spec reads it)."""
    return variant + ":" + ",".join(f"{k}={v}" for k, v in TF32_TIES_AWAY.items())


def ties_away_build(want: str, x: torch.Tensor, args: tuple):
    """Where the TF32 kernel's probe failed at a float32 shape: the extension of its ties-away build (common.cuh's
    FUSED_TF32_RNA: both GEMM operands rounded to TF32 with ties away from zero, as cvt.rna does) if it accepts the
    shape and its own probe passes; else None (the general path serves the shape). Why: at B 64, C 128, T 2048 the
    probe found the TF32 kernel 1.1e-4 from eager (2026-12-07 on an H100; the sweeps since 2026-12-02 on both cards
    sent the shape to the general path), and a float64 model of the GEMM puts ties away at 1.05e-4 from round to
    nearest even there, truncation at 1.2e-3 (logs/2026-12-07_724e8ac_pw_rounding_model_cpu.log): cuDNN's kernel at
    that shape likely rounds ties away. Prepared, not yet run on a GPU (tests/test_gpu.py,
    test_modelnew_runs_a_fused_kernel_at_b64_c128)."""
    if want != FUSED_TF32 or x.dtype != torch.float32:
        return None
    ext = load(want, defines_over_tuned(want, TF32_TIES_AWAY))
    if ext.why_unsupported(x, *args):
        return None
    d, bound = probe_against_eager(ext, x, args)
    return ext if d <= bound else None


@dataclass(frozen=True)
class Route:
    name: str  # a variant, a knob build's spec (ties_away_name), GENERAL or EAGER
    reason: str  # why this route ("" for the preferred fused kernel)
    ext: object = None  # the loaded extension of a variant route


def preferred_variant(variant: str | None, x: torch.Tensor) -> str | None:
    if variant:
        return variant
    if x.device.type == "cpu":
        return "cpu" if x.dtype == torch.float32 else None
    if x.dtype == torch.float32:
        return FUSED_TF32 if torch.backends.cudnn.allow_tf32 else FUSED_STRICT
    return FUSED_16BIT


def choose_route(x: torch.Tensor, args: tuple, variant: str | None = None) -> Route:
    """The route ModelNew takes for x with weights `args` (forward_args), following the rule above."""
    w_dw, b_dw, w_pw, b_pw, dil, pad = args
    B, C_in, T = x.shape
    K = w_dw.shape[-1]
    t_out = T + 2 * pad - dil * (K - 1)
    if variant == EAGER or x.numel() == 0 or t_out < 1 or x.device.type not in ("cpu", "cuda"):
        return Route(EAGER, "asked for" if variant == EAGER else "" if x.numel() == 0 else
                     "empty output or a device without kernels: PyTorch's own ops (and its errors)")
    if variant == GENERAL:
        return Route(GENERAL, "asked for") if x.is_cuda else Route(EAGER, "the general path runs on CUDA only")
    want = preferred_variant(variant, x)
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
            elif not variant and not fused_kernel_pays(want, B, C_in, w_pw.shape[0], t_out):
                reason, ext = f"the general path measured faster than {want} at this shape", None
    if ext is not None:
        shape = dict(B=B, C_in=C_in, C_out=w_pw.shape[0], T=T, K=K, dilation=dil, bias=b_pw is not None)
        if not variant and eager_is_faster(shape, x.dtype, want):
            return Route(EAGER, f"PyTorch measured faster than {want} at this shape")
        if not variant and x.is_cuda:
            d, bound = probe_against_eager(ext, x, args)
            if not d <= bound:
                why = (f"{want} differs from eager by {d:.1e} at this shape (bound {bound:.1e}): "
                       "PyTorch's 1x1 conv does not round as the kernel does here")
                away = ties_away_build(want, x, args)
                if away is not None:
                    return Route(ties_away_name(want), f"{why}; its ties-away build does", away)
                return Route(GENERAL, why)
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


def reset_route_cache():
    """Forget every route chosen so far and every reason announced (the next call of a shape chooses again)."""
    _routes.clear()
    _announced.clear()


_announced: set = set()


def _route_cached(x: torch.Tensor, args: tuple, variant: str) -> Route:
    w_dw, b_dw, w_pw, b_pw, dil, pad = args
    key = (variant, x.device, tuple(x.shape), x.dtype, x.is_contiguous(), x.data_ptr() % 16, tuple(w_dw.shape),
           tuple(w_pw.shape), b_dw is None, b_pw is None, dil, pad, torch.backends.cudnn.allow_tf32)
    r = _routes.get(key)
    if r is None:
        r = _routes[key] = choose_route(x, args, variant or None)
        announce = (r.name, r.reason)
        if not variant and r.reason and x.numel() and announce not in _announced:
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


def _train_impl(x, w_dw, b_dw, w_pw, b_pw, dilation: int, padding: int, variant: str,
                backward: str = DEFAULT_BACKWARD) -> torch.Tensor:
    """The forward with gradients on, outside graph capture: the route's forward_train, a C++ autograd function
    (kernels/eager_autograd.h), one call instead of the operator's Python dispatch and autograd (~300 us of host
    time per call on the H200 host against eager's ~130: results/logs/2026-12-01_0b02739_export_timing.log).
    Its backward: `backward` (BACKWARDS). PyTorch's own ops where the route is EAGER."""
    args = (w_dw, b_dw, w_pw, b_pw, dilation, padding)
    r = _route_cached(x, args, variant)
    if r.name == EAGER:
        return eager_forward(x, *args)
    ext = general_kernel() if r.name == GENERAL else r.ext
    return ext.forward_train(x, *args, backward_mode(backward))


def backward_mode(backward: str) -> int:
    """The C++ backward mode (kernels/eager_autograd.h) for a BACKWARDS name under the TF32 switch as it stands:
    "fused" computes the 1x1 conv's data gradient on TF32 tensor cores, so with allow_tf32 off it runs as
    "dw_kernel" (cuDNN's strict data gradient, then rung 4), keeping the strict class."""
    mode = BACKWARDS[backward]
    tf32_only = (BACKWARDS["fused"], BACKWARDS["wgrad_kernel"], BACKWARDS["wgrad_fused"], BACKWARDS["split"],
                 BACKWARDS["dgrad_kernel"])
    return BACKWARDS["dw_kernel"] if mode in tf32_only and not torch.backends.cudnn.allow_tf32 else mode


# The fused op as a PyTorch operator: torch.compile(fullgraph=True) and torch.export see one opaque node (its
# fake implementation gives the output's shape and dtype); autograd attaches through register_autograd.
# A Python custom op rather than TORCH_LIBRARY in the launcher: the route is chosen in Python (per shape,
# dtype, TF32 switch), and one op serves every variant, the general path and PyTorch.
_OP_SCHEMA = "(Tensor x, Tensor w_dw, Tensor? b_dw, Tensor w_pw, Tensor? b_pw, int dilation, int padding, " \
             f"str variant, str backward=\"{DEFAULT_BACKWARD}\") -> Tensor"


@torch.library.custom_op("fused_jit::dwsep_conv1d", mutates_args=(), schema=_OP_SCHEMA)
def dwsep_conv1d(x, w_dw, b_dw, w_pw, b_pw, dilation, padding, variant, backward=DEFAULT_BACKWARD):
    """y = pw(silu(dw(x))) by ModelNew's rule ("" = the rule's choice; a variant, GENERAL or EAGER to force one);
    its gradients by `backward` (BACKWARDS), through fused_jit::dwsep_conv1d_backward."""
    if torch.is_autocast_enabled(x.device.type):  # the caller cast the inputs; PyTorch's convs must not recast
        with torch.autocast(x.device.type, enabled=False):
            return _forward_impl(x, w_dw, b_dw, w_pw, b_pw, dilation, padding, variant)
    return _forward_impl(x, w_dw, b_dw, w_pw, b_pw, dilation, padding, variant)


@dwsep_conv1d.register_fake
def _(x, w_dw, b_dw, w_pw, b_pw, dilation, padding, variant, backward=DEFAULT_BACKWARD):
    t_out = x.shape[2] + 2 * padding - dilation * (w_dw.shape[-1] - 1)
    return x.new_empty((x.shape[0], w_pw.shape[0], t_out))


def _setup_context(ctx, inputs, output):
    x, w_dw, b_dw, w_pw, b_pw, dilation, padding, variant, backward = inputs  # (the schema's default bound)
    ctx.save_for_backward(x, w_dw, b_dw, w_pw, b_pw)
    ctx.dilation, ctx.padding, ctx.variant, ctx.backward = dilation, padding, variant, backward


def eager_backward(gy, x, w_dw, b_dw, w_pw, b_pw, dilation, padding, need):
    """Gradients of y = pw(silu(dw(x))) as eager's autograd computes them, from PyTorch's own ops: the activations
    recomputed from x (cheaper than storing them: x is C_in x T, act as large), then convolution_backward of the
    1x1 conv, silu_backward, convolution_backward of the depthwise. `need`: which of x, w_dw, b_dw, w_pw, b_pw
    want a gradient. Returns (gx, gw_dw, gb_dw, gw_pw, gb_pw), None where not needed. The exported file carries
    this function's source (export.py), so both backward paths are this one."""
    aten = torch.ops.aten
    c = x.shape[1]
    v = aten.convolution(x, w_dw, b_dw, [1], [padding], [dilation], False, [0], c)
    a = aten.silu(v)
    need_act = need[0] or need[1] or need[2]
    ga, gw_pw, gb_pw = aten.convolution_backward(
        gy, a, w_pw, None if b_pw is None else [w_pw.shape[0]], [1], [0], [1], False, [0], 1,
        [need_act, need[3], need[4] and b_pw is not None])
    gx = gw_dw = gb_dw = None
    if need_act:
        gx, gw_dw, gb_dw = aten.convolution_backward(
            aten.silu_backward(ga, v), x, w_dw, None if b_dw is None else [c], [1], [padding], [dilation], False,
            [0], c, [need[0], need[1], need[2] and b_dw is not None])
    return gx, gw_dw, gb_dw, gw_pw, gb_pw


# The operator's backward as an operator of its own, so that torch.compile's backward graph calls it whole (the
# kernels of ModelNew's C++ autograd node, as outside graph capture) instead of tracing eager_backward's ops.
_BACKWARD_SCHEMA = "(Tensor gy, Tensor x, Tensor w_dw, Tensor? b_dw, Tensor w_pw, Tensor? b_pw, int dilation, " \
                   "int padding, bool[] need, str variant, str backward) -> Tensor[]"


@torch.library.custom_op("fused_jit::dwsep_conv1d_backward", mutates_args=(), schema=_BACKWARD_SCHEMA)
def dwsep_conv1d_backward(gy, x, w_dw, b_dw, w_pw, b_pw, dilation, padding, need, variant, backward):
    """[gx, gw_dw, gb_dw, gw_pw, gb_pw] of dwsep_conv1d for gy (an empty tensor where `need` is false or the input is
    None): where the forward's route is a kernel of ours, that extension's C++ backward in `backward`'s mode under
    the TF32 switch as it stands when it runs (kernels/eager_autograd.h, the same as ModelNew's autograd node);
    where it is PyTorch, or backward is "eager", eager_backward."""
    args = (w_dw, b_dw, w_pw, b_pw, dilation, padding)
    need = [bool(n) and t is not None for n, t in zip(need, (x, w_dw, b_dw, w_pw, b_pw))]
    r = _route_cached(x, args, variant)
    mode = backward_mode(backward)
    if r.name != EAGER and mode != 0:
        ext = general_kernel() if r.name == GENERAL else r.ext
        return ext.backward(gy, x, *args, need, mode)
    return [g if g is not None else x.new_empty(0) for g in eager_backward(gy, x, *args, need)]


@dwsep_conv1d_backward.register_fake
def _(gy, x, w_dw, b_dw, w_pw, b_pw, dilation, padding, need, variant, backward):
    return [t.new_empty(t.shape) if n and t is not None else x.new_empty(0)
            for t, n in zip((x, w_dw, b_dw, w_pw, b_pw), need)]


def _backward(ctx, gy):
    """The operator's backward: dwsep_conv1d_backward in the forward's backward mode."""
    need = [bool(n) and t is not None for n, t in zip(ctx.needs_input_grad[:5], ctx.saved_tensors)]
    if not any(need):
        return (None,) * 9
    grads = dwsep_conv1d_backward(gy, *ctx.saved_tensors, ctx.dilation, ctx.padding, need, ctx.variant,
                                  ctx.backward)
    return (*[g if n else None for g, n in zip(grads, need)], None, None, None, None)


dwsep_conv1d.register_autograd(_backward, setup_context=_setup_context)


class ModelNew(Model):
    """Drop-in for `Model` (same `dw`/`pw` parameters and state_dict): eager's numbers, faster.

    The forward follows ModelNew's rule (above): the fused kernel for the input's dtype and the TF32 switch,
    the general path where no fused kernel runs the shape, PyTorch where PyTorch is faster; `route(x)` says
    which. `variant` forces one route (a variant name, GENERAL or EAGER), for A/B timing. Under autocast it
    computes in the autocast dtype, as eager's conv does. It trains: one C++ autograd node that saves x, not the
    activations. By default (`backward="dgrad_kernel"`, float32 on CUDA, TF32 on, an sm_90 GPU, C, C_out <= 128) its
    backward is the 1x1 conv's data gradient and bias gradient by backward rung 10 (kernels/pw_data_grad_wgmma.cu,
    TF32 wgmma, bit for bit cuDNN's data gradient), one kernel for the rest but the 1x1 conv's weight gradient
    (kernels/dw_silu_backward.cu: the activations recomputed, dx, the depthwise's gradients), then cuDNN's weight
    gradient; elsewhere `"dw_kernel"` (cuDNN's data gradient in place of rung 10); gradients within float32
    summation order of eager's. With rung 10, dW_dw and db_dw are summed with atomics (their last bits vary from run
    to run) unless torch.use_deterministic_algorithms or cudnn.deterministic asks for fixed-order sums. `backward="fused"` (TF32 on, 32-128 channels)
    computes the data gradient inside that kernel on tensor cores instead (kernels/dw_silu_backward_tc.cu, measured
    slower: an A/B option). `backward="eager"` runs PyTorch's ops throughout (the activations recomputed from x).
    It is a torch.library operator (fused_jit::dwsep_conv1d), so torch.compile(fullgraph=True) and torch.export
    take it whole; its backward is an operator too (fused_jit::dwsep_conv1d_backward), running the same kernels.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, dilation: int = 1,
                 bias: bool = True, variant: str | None = None, backward: str = DEFAULT_BACKWARD):
        super().__init__(in_channels, out_channels, kernel_size, dilation, bias)
        if variant is not None and variant not in ROUTES:
            variant_info(variant)  # unknown names fail here, not at the first forward
        if backward not in BACKWARDS:
            raise ValueError(f"backward must be one of {sorted(BACKWARDS)}; got {backward!r}")
        self.variant, self.backward = variant, backward

    def _inputs(self, x: torch.Tensor):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"ModelNew.forward expects a torch.Tensor, got {type(x).__name__}")
        if x.dim() != 3 or x.shape[1] != self.dw.in_channels:
            raise ValueError(f"ModelNew expects x of shape (batch, {self.dw.in_channels}, time); got "
                             f"{tuple(x.shape)}")
        args = forward_args(self)
        if x.is_floating_point() and torch.is_autocast_enabled(x.device.type):  # as eager's conv under autocast
            dt = torch.get_autocast_dtype(x.device.type)
            x = x.to(dt)
            args = tuple(a.to(dt) if isinstance(a, torch.Tensor) else a for a in args)
        return x, args

    def route(self, x: torch.Tensor) -> Route:
        """The route this input takes (a variant, GENERAL or EAGER) and why: the one forward uses (chosen at the
        first call of this input's signature and cached)."""
        x, args = self._inputs(x)
        return _route_cached(x, args, self.variant or "")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x, args = self._inputs(x)
        if torch.compiler.is_compiling():
            # the operator: graph capture, its autograd through the backward's operator (the same kernels)
            return dwsep_conv1d(x, *args, self.variant or "", self.backward)
        if torch.is_grad_enabled() and (x.requires_grad or any(
                isinstance(a, torch.Tensor) and a.requires_grad for a in args)):
            return _train_impl(x, *args, self.variant or "", self.backward)  # one C++ autograd function
        # eager inference: the same implementation without the custom op's Python dispatch (~60 us of host time
        # per call on the H200 host: 113 vs 54 us at B=1 C=64 T=2047, logs/*_route_overhead.log)
        if torch.is_autocast_enabled(x.device.type):
            with torch.autocast(x.device.type, enabled=False):
                return _forward_impl(x, *args, self.variant or "")
        return _forward_impl(x, *args, self.variant or "")
