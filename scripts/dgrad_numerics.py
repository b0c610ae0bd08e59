"""Which numerics eager's 1x1-conv data gradient (cuDNN, ga = W_pw^T dy) has at each channel count, under PyTorch's
defaults (TF32 on): its ga against ga computed in float64 from operands rounded to TF32 (round to nearest even) and
from the float32 operands as they are. Where cuDNN runs a TF32 kernel the first difference is at float32 rounding
(~1e-7 of the max) and the second near TF32's (~1e-4); where it runs a float32 kernel the other way round. Backward
rung 5 (kernels/dw_silu_backward_tc.cu) rounds as TF32 does, so it is routed only where cuDNN does the same
(fusedkit.routing and dw_backward_tc_fits).
    python scripts/dgrad_numerics.py"""
import itertools
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from fused_jit import tf32_rne  # noqa: E402


def main() -> int:
    torch.manual_seed(0)
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}, "
          f"allow_tf32 {torch.backends.cudnn.allow_tf32}")
    print(f"{'C_in':>5} {'C_out':>5}  max|ga - tf32 ref|/max  max|ga - fp32 ref|/max  -> cuDNN's class")
    for c_in, c_out in itertools.chain(((c, c) for c in (8, 16, 24, 32, 48, 64, 96, 128)),
                                       [(16, 8), (24, 40), (16, 40), (128, 72), (100, 128), (64, 48), (32, 128)]):
        B, T = 4, 1024
        w = torch.randn(c_out, c_in, 1, device="cuda")
        dy = torch.randn(B, c_out, T, device="cuda")
        shape_only = torch.empty(B, c_in, T, device="cuda")
        ga = torch.ops.aten.convolution_backward(dy, shape_only, w, None, [1], [0], [1], False, [0], 1,
                                                 [True, False, False])[0]
        ref = {name: torch.einsum("oc,bot->bct", ww[:, :, 0].double(), yy.double())
               for name, (ww, yy) in {"tf32": (tf32_rne(w), tf32_rne(dy)), "fp32": (w, dy)}.items()}
        scale = float(ref["fp32"].abs().max())
        d = {k: float((ga.double() - v).abs().max()) / scale for k, v in ref.items()}
        cls = "tf32" if d["tf32"] < d["fp32"] else "fp32"
        print(f"{c_in:5d} {c_out:5d}  {d['tf32']:22.2e}  {d['fp32']:22.2e}  -> {cls}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
