"""backward="split"'s kernels alone (backward rung 9, kernels/dgrad_wgrad_wgmma.cu, then rung 4's gv form and the
finish) at one or more shapes: each output against float64 (fj.split_case: the GPU test's bounds), then, unless
--no-time, the whole under bench's timer (CUDA events, L2 flushed, median and quartiles of --reps, interleaved
across the builds) beside a read of x and dy, and the kernels of one call (torch.profiler, L2 warm).
Builds: the working tree's kernels/ ('tree') and any LABEL=DIR (a copy of kernels/ with a knob #defined, e.g.
DGWG_ABLATE; an ablated build's outputs are wrong by design: its check is printed, not counted).
    python scripts/split_check.py B,C,C_out,T,K,dilation,bias [...] [--reps 100] [--no-time] [LABEL=DIR ...]"""
import argparse
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("items", nargs="+", help="B,C,C_out,T,K,dilation,bias (bias 0 or 1) shapes and LABEL=DIR builds")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--no-time", action="store_true")
    args = ap.parse_args()
    exts = {"tree": fj.general_kernel()}
    shapes = []
    for it in args.items:
        if "=" in it:
            label, _, d = it.partition("=")
            exts[label] = fj.general_kernel(Path(d).resolve())
        else:
            shapes.append(it)
    ok = True
    for spec in shapes:
        B, C, C_out, T, K, d, bias = (int(v) for v in spec.split(","))
        inputs, refs, tols = fj.split_case(B, C, C_out, T, K, d, bool(bias))
        for label, ext in exts.items():
            got = ext.split_backward(*inputs)
            torch.cuda.synchronize()
            errs = {n: fj.max_diff(g, r) / max(1e-30, float(r.abs().max()))
                    for n, g, r in zip(fj.SPLIT_OUTPUTS, got, refs) if r is not None}
            passed = all(errs[n] <= t + 1e-6 for n, t in zip(fj.SPLIT_OUTPUTS, tols) if n in errs)
            if label == "tree":
                ok &= passed
            print(f"{spec} {label}: {'ok' if passed else 'FAILED'} " + " ".join(f"{n} {e:.2e}" for n, e in errs.items()))
        if args.no_time:
            continue
        gy, x = inputs[:2]
        fns = [lambda e=e: e.split_backward(*inputs) for e in exts.values()] + [lambda: (x.sum(), gy.sum())]
        us = fj.Timer("cuda").time_interleaved(fns, args.reps)
        q = np.percentile(us, [25, 50, 75], axis=0)
        for j, label in enumerate(exts):
            print(f"  {label}: {q[1, j]:.1f} us [{q[0, j]:.1f}, {q[2, j]:.1f}]; kernels (L2 warm): "
                  f"{fj.kernel_summary(fns[j], width=32)}")
        print(f"  x, gy summed {q[1, -1]:.1f} us (their {2 * x.numel() * 4 / 1e6:.1f} MB)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
