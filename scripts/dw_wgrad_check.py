"""Backward rung 8 (kernels/dw_silu_wgrad_wgmma.cu) alone at one or more shapes: each output against float64
(fj.dw_wgrad_case: the bounds the GPU test uses), then, unless --no-time, its time under bench's timer (CUDA
events, L2 flushed, median and quartiles of --reps, interleaved) beside rung 7 alone (the weight gradient from
act, half of what it replaces) and a read of x, ga and gy.
One shape per process keeps a fault in one from hiding the others (compute-sanitizer and ncu run it this way).
    python scripts/dw_wgrad_check.py B,C,C_out,T,K,dilation,bias [...] [--reps 100] [--no-time] [--kernels DIR]"""
import argparse
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shapes", nargs="+", help="B,C,C_out,T,K,dilation,bias (bias 0 or 1)")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--no-time", action="store_true")
    ap.add_argument("--kernels", type=Path, default=None,
                    help="a kernels/ directory to build the general path from (e.g. a copy with a knob #defined)")
    args = ap.parse_args()
    ext, ok = fj.general_kernel(args.kernels), True
    for spec in args.shapes:
        B, C, C_out, T, K, d, bias = (int(v) for v in spec.split(","))
        inputs, refs, tols = fj.dw_wgrad_case(B, C, C_out, T, K, d, bool(bias))
        got = ext.dw_wgrad_fused(*inputs)
        torch.cuda.synchronize()
        errs = {n: fj.max_diff(g, r) / max(1e-30, float(r.abs().max()))
                for n, g, r in zip(fj.DW_WGRAD_OUTPUTS, got, refs) if r is not None}
        passed = all(errs[n] <= t + 1e-6 for n, t in zip(fj.DW_WGRAD_OUTPUTS, tols) if n in errs)
        ok &= passed
        print(f"{spec}: {'ok' if passed else 'FAILED'} " + " ".join(f"{n} {e:.2e}" for n, e in errs.items()))
        if args.no_time:
            continue
        ga, gy, x = inputs[:3]
        act = torch.empty_like(x).normal_()
        us = fj.Timer("cuda").time_interleaved([lambda: ext.dw_wgrad_fused(*inputs),
                                                lambda: ext.pw_weight_grad(gy, act),
                                                lambda: (x.sum(), ga.sum(), gy.sum())], args.reps)
        q = np.percentile(us, [25, 50, 75], axis=0)
        print(f"  rung 8 {q[1, 0]:.1f} us [{q[0, 0]:.1f}, {q[2, 0]:.1f}]; rung 7 alone (from act) {q[1, 1]:.1f}; "
              f"x, ga, gy summed {q[1, 2]:.1f} (their {3 * x.numel() * 4 / 1e6:.1f} MB)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
