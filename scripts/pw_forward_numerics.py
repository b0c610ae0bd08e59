"""Which numerics eager's forward 1x1 conv (cuDNN, y = W_pw act + b) has at each batch and length, under PyTorch's
defaults (TF32 on), and which kernels cuDNN runs for it: y against y computed in float64 from the operands rounded to
TF32 by round to nearest even (what the TF32 fused kernels do, common.cuh's tc_tf32), with ties away from zero (their
FUSED_TF32_RNA build, which ModelNew probes where the first fails), by truncation (the low 13 bits dropped), and as they
are (float32). Why: ModelNew probes its TF32 kernel against eager at a shape's first call
(routing.probe_against_eager); at B 64, C 128, T 2048 and 4096 the probe failed (1.1e-4 against a bound of 1.7e-5) and
the strict kernel's probe failed as well (logs/2026-12-07_81730f9_strict_fallback_tests_shapes_h100.log), so ModelNew
runs the general path there: 237 and 451 us on an H100, where the TF32 kernel itself ran B 64 T 4096 in 103-104 us
(logs/2026-12-07_8e9f994_silu_guard_depthwise_bounds_h100.log). The column nearest 0 names the rounding a kernel would
need to serve such a shape with eager's numbers.
--cpu-model (no GPU): how far each rounding's y lies from round to nearest even's, in a float64 model of the GEMM on
ModelNew's test case (fj.make_case at C 128, T 2048, K 5, d 2, seed 64): the size of difference each would leave
against a kernel that rounds to nearest even, to set beside the probe's.
    python scripts/pw_forward_numerics.py [--C 128] [--shapes 16x2048,64x2048,...] [--cpu-model]"""
import argparse
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fused_jit import tf32_rne  # noqa: E402


def tf32_truncated(t: torch.Tensor) -> torch.Tensor:
    return (t.contiguous().view(torch.int32) & ~0x1FFF).view(torch.float32)


def tf32_ties_away(t: torch.Tensor) -> torch.Tensor:
    """cvt.rna's rounding of finite values (common.cuh's tc_tf32_rna_int): add half the dropped ulp, clear the bits."""
    return ((t.contiguous().view(torch.int32) + 0x1000) & ~0x1FFF).view(torch.float32)


def conv1x1_f64(w: torch.Tensor, act: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """y = W_pw act + b in float64, from the operands as given (w: C_out x C_in)."""
    return torch.einsum("oc,bct->bot", w.double(), act.double()) + b.double()[None, :, None]


def rounding_model(batches=(16, 64), seed: int = 64) -> None:
    """The --cpu-model table: max |y_rounding - y_rne| in float64 for ties away, truncation and W_pw alone rounded."""
    import fused_jit as fj
    print(f"float64 model of the 1x1 conv on the CPU: fj.make_case(C 128, T 2048, K 5, d 2, seed {seed}); max |y - y_rne|")
    for B in batches:
        model, x = fj.make_case(dict(fj.HEADLINE, B=B), torch.float32, "cpu", seed=seed)
        with torch.no_grad():
            act, w = F.silu(model.dw(x)), model.pw.weight[:, :, 0]
            y = {name: conv1x1_f64(fw(w), fa(act), model.pw.bias) for name, (fw, fa) in {
                "rne": (tf32_rne, tf32_rne), "ties away": (tf32_ties_away, tf32_ties_away),
                "truncation": (tf32_truncated, tf32_truncated), "W_pw alone rne": (tf32_rne, lambda t: t)}.items()}
        print(f"B {B}: max |y| {float(y['rne'].abs().max()):.2f}; " +
              ", ".join(f"{k} {float((v - y['rne']).abs().max()):.2e}" for k, v in y.items() if k != "rne"), flush=True)


def cudnn_kernels(fn) -> str:
    """The names of the GPU kernels one call of fn runs (the profiler's CUDA events), shortened."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return "; ".join(sorted({e.name[:70] for e in prof.events() if e.device_type.name == "CUDA"}))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--C", type=int, default=128, help="C_in = C_out")
    ap.add_argument("--shapes", default="16x2048,32x2048,64x2048,16x16384,64x4096,1x2048,1x16384",
                    help="BxT pairs, comma-separated")
    ap.add_argument("--cpu-model", action="store_true", help="the float64 model of the roundings on the CPU (no GPU)")
    a = ap.parse_args()
    if a.cpu_model:
        rounding_model()
        return 0
    if not torch.cuda.is_available():
        print("no CUDA GPU visible: this script reads cuDNN's numerics on the GPU")
        return 0
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}, "
          f"allow_tf32 {torch.backends.cudnn.allow_tf32}, C {a.C}")
    print(f"{'B':>4} {'T':>6}  max|y - ref|/max: {'tf32 rne':>9} {'tf32 rna':>9} {'tf32 trunc':>10} {'fp32':>9}  -> nearest; "
          "kernels")
    for bt in a.shapes.split(","):
        B, T = (int(v) for v in bt.split("x"))
        torch.manual_seed(B * 100003 + T)
        act = F.silu(torch.randn(B, a.C, T, device="cuda"))  # a SiLU's outputs, as the 1x1 conv sees them
        w = torch.randn(a.C, a.C, 1, device="cuda") / a.C ** 0.5
        b = torch.rand(a.C, device="cuda") - 0.5
        y = F.conv1d(act, w, b)
        refs = {"tf32 rne": (tf32_rne(w), tf32_rne(act)), "tf32 rna": (tf32_ties_away(w), tf32_ties_away(act)),
                "tf32 trunc": (tf32_truncated(w), tf32_truncated(act)), "fp32": (w, act)}
        d = {}
        for name, (ww, aa) in refs.items():
            ref = conv1x1_f64(ww[:, :, 0], aa, b)
            d[name] = float((y.double() - ref).abs().max()) / float(ref.abs().max())
        near = min(d, key=d.get)
        print(f"{B:4d} {T:6d}  {'':17} {d['tf32 rne']:9.2e} {d['tf32 rna']:9.2e} {d['tf32 trunc']:10.2e} {d['fp32']:9.2e}  "
              f"-> {near}; "
              f"{cudnn_kernels(lambda: F.conv1d(act, w, b))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
