"""Bad inputs to a CUDA variant's launcher must raise clear errors (run under cuda-gdb for a backtrace)."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

ext = fj.load(sys.argv[1] if len(sys.argv) > 1 else "naive")
model = fj.Model(8, 4, 3).cuda()
args = fj._forward_args(model)
cases = {"cpu x": lambda: ext.forward(torch.randn(2, 8, 10), *args),
         "fp16 x": lambda: ext.forward(torch.randn(2, 8, 10, device="cuda", dtype=torch.float16), *args),
         "cpu w_pw": lambda: ext.forward(torch.randn(2, 8, 10, device="cuda"), model.dw.weight, model.dw.bias,
                                         model.pw.weight.cpu(), model.pw.bias, 1, 1)}
for name, fn in cases.items():
    print("case", name, flush=True)
    try:
        fn()
        print("  no error!")
    except RuntimeError as e:
        print("  RuntimeError:", str(e).splitlines()[0][:150], flush=True)
