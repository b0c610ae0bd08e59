"""Where the general path's time goes at small shapes: per call, host time (perf_counter around the call, the GPU
kept busy so launches never wait) and device time (bench's timer) of eager, ModelNew, the general path called
directly, its two parts, and the custom op's dispatch.
    python scripts/route_overhead.py [B C T dtype ...]"""
import sys
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402


cases = [(1, 64, 2047, "float32"), (16, 192, 100, "bfloat16"), (1, 512, 2048, "float32"), (16, 256, 2048, "float32"),
         (16, 512, 2048, "float32"), (16, 1024, 2048, "float32"), (16, 512, 2048, "bfloat16")]
if len(sys.argv) > 1:
    a = sys.argv[1:]
    cases = [(int(a[i]), int(a[i + 1]), int(a[i + 2]), a[i + 3]) for i in range(0, len(a), 4)]
timer = fj.Timer("cuda")
torch.backends.cuda.matmul.allow_tf32 = True  # the probe below: cuBLAS in TF32, as cuDNN runs eager's conv by default
for B, C, T, dt in cases:
    shape = dict(B=B, C_in=C, C_out=C, T=T, K=5, dilation=2, bias=True)
    model, x = fj.make_case(shape, fj.DTYPES[dt], "cuda", seed=0)
    model = model.to(fj.DTYPES[dt])
    new = fj.ModelNew(C, C, 5, 2).cuda().to(fj.DTYPES[dt])
    new.load_state_dict(model.state_dict())
    args = fj.forward_args(model)
    ext = fj.general_kernel()
    act = ext.dw_silu(x, args[0], args[1], 2, 4)
    fns = {"eager": lambda: model(x), "modelnew": lambda: new(x), "op(eager)": lambda: fj.dwsep_conv1d(x, *args, "eager"),
           "general direct": lambda: fj.general_forward(x, *args), "dw_silu": lambda: ext.dw_silu(x, args[0], args[1], 2, 4),
           "pw conv1d": lambda: F.conv1d(act, args[2], args[3]),
           "pw matmul": lambda: torch.baddbmm(args[3][:, None].expand(C, act.shape[2]), args[2][:, :, 0].expand(B, C, C), act),
           "eager dw": lambda: F.conv1d(x, args[0], args[1], padding=4, dilation=2, groups=C)}
    with torch.no_grad():
        print(f"== B={B} C={C} T={T} {dt}: route {new.route(x).name}")
        # could the general path's 1x1 conv be cuBLAS's batched GEMM? only if it rounds as cuDNN's conv does
        d_mm = (fns["pw matmul"]() - fns["pw conv1d"]()).abs().max().item()
        print(f"  max |baddbmm - conv1d| = {d_mm:.2e} (TF32 switch {torch.backends.cudnn.allow_tf32}, "
              f"matmul TF32 {torch.backends.cuda.matmul.allow_tf32})")
        for name, fn in fns.items():
            dev = float(np.median(timer.time(fn, 50)))
            print(f"  {name:<15} host {fj.host_time_us(fn):8.1f} us   device (bench timer) {dev:8.1f} us")
