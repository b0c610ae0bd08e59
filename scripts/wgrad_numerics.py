"""Which numerics eager's 1x1-conv weight gradient (cuDNN, dW_pw = dy act^T summed over B and T) has at each shape,
under PyTorch's defaults (TF32 on): its dW_pw against float64 sums of operands rounded to TF32 (round to nearest
even) and of the float32 operands as they are, as scripts/dgrad_numerics.py does for the data gradient. Where cuDNN
runs a TF32 kernel the first difference is the smaller; where it runs a float32 kernel the second. Backward rung 6
(kernels/pw_weight_grad.cu) rounds as TF32 does, so it may replace cuDNN's weight gradient only where cuDNN does the
same: this table is what the rule in kernels/eager_autograd.h was read from.
    python scripts/wgrad_numerics.py"""
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
    print(f"{'B':>3} {'T':>5} {'C_in':>5} {'C_out':>5}  max|dW - tf32 ref|/max  max|dW - fp32 ref|/max  -> class")
    pairs = [(c, c) for c in (32, 40, 48, 64, 96, 128)] + [(40, 32), (32, 48), (128, 72), (100, 128), (64, 48),
                                                           (40, 100), (48, 64)]
    for (B, T), (c_in, c_out) in itertools.product([(1, 200), (2, 1000), (3, 4096), (4, 1024), (8, 512), (16, 2048)],
                                                   pairs):
        w = torch.randn(c_out, c_in, 1, device="cuda")
        dy = torch.randn(B, c_out, T, device="cuda")
        act = torch.randn(B, c_in, T, device="cuda")
        dw = torch.ops.aten.convolution_backward(dy, act, w, None, [1], [0], [1], False, [0], 1,
                                                 [False, True, False])[1][:, :, 0]
        ref = {name: torch.einsum("bot,bct->oc", yy.double(), aa.double())
               for name, (yy, aa) in {"tf32": (tf32_rne(dy), tf32_rne(act)), "fp32": (dy, act)}.items()}
        scale = float(ref["fp32"].abs().max())
        d = {k: float((dw.double() - v).abs().max()) / scale for k, v in ref.items()}
        cls = "tf32" if d["tf32"] < d["fp32"] else "fp32"
        print(f"{B:3d} {T:5d} {c_in:5d} {c_out:5d}  {d['tf32']:22.2e}  {d['fp32']:22.2e}  -> {cls}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
