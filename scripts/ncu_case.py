"""Run one variant a few times at the headline shape (for ncu). Usage: ncu ... python scripts/ncu_case.py VARIANT[:NAME=VALUE,...] [DTYPE]
(NAME=VALUE: compile-time parameters over the variant's tuned ones, ab's form, e.g. wgmma_tf32:FUSED_ABLATE=6 for the
depthwise phase without the MMA and y's stores; VARIANT may be a baseline, e.g. eager (clone is a cudaMemcpy, which ncu
does not profile); DTYPE: x's dtype, float32 unless named, e.g. bfloat16.)
VARIANT `backward`: three backwards of ModelNew at the headline (its default backward: rung 10, kernels/dw_silu_backward.cu and cuDNN's weight gradient)."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

dtype = sys.argv[2] if len(sys.argv) > 2 else "float32"
if dtype not in fj.DTYPES:
    raise SystemExit(f"DTYPE: one of {', '.join(fj.DTYPES)}, got {dtype!r}")
model, x = fj.make_case(fj.HEADLINE, fj.DTYPES[dtype], "cuda", seed=1)
if sys.argv[1] == "backward":
    s = fj.HEADLINE
    new = fj.ModelNew(s["C_in"], s["C_out"], s["K"], s["dilation"], s["bias"]).cuda()
    new.load_state_dict(model.state_dict())
    xs = x.clone().requires_grad_(True)
    y = new(xs)
    gy = torch.randn_like(y)
    params = [xs, *new.parameters()]

    def fn():
        torch.autograd.grad(y, params, gy, retain_graph=True)
else:
    variant, defines = fj.variant_spec(sys.argv[1])
    fn = fj.callable_for(variant, model, x, defines)
# (the profiled range: under `ncu --profile-from-start off` only these calls count, not the set-up's kernels)
torch.cuda.synchronize()
torch.cuda.profiler.start()
for _ in range(3):
    fn()
torch.cuda.synchronize()
torch.cuda.profiler.stop()
