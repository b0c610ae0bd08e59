"""Whether the default backward's L2 priorities outlive it: after one backward with the given hint bits
(set_backward_l2_hints; 8 = skip the reset, the control that must show a residue), the timer's L2 flush, then a
timed read of dy (which rung 4 marked evict_last) against a read of an untouched tensor of the same size after the
same flush. With the reset, both reads should take the same time (the kept lines were evicted by the flush like any
others); without it, dy's read is faster where its lines survived. Prints one line per bit set; the run's record.
    python scripts/l2_residue.py [--reps 50] [BITS ...]"""
import argparse
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("bits", nargs="*", type=int, default=[0, 3, 11])
    p.add_argument("--reps", type=int, default=50)
    a = p.parse_args()
    ext = fj.general_kernel()
    model, x = fj.make_case(fj.HEADLINE, torch.float32, "cuda", seed=7)
    args = fj.forward_args(model)
    params = list(model.parameters())
    xs = x.clone().requires_grad_(True)
    y = ext.forward_train(xs, *args, 1)
    gy = torch.randn_like(y)
    other = torch.randn_like(y)
    flush = torch.empty(256 * 2**20 // 4, device="cuda")
    for bits in a.bits:
        ext.set_backward_l2_hints(bits)
        t = {"dy": [], "other": []}
        for _ in range(a.reps):
            for name, src in (("dy", gy), ("other", other)):
                torch.autograd.grad(y, [xs, *params], gy, retain_graph=True)
                flush.zero_()
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                src.sum()
                e.record()
                torch.cuda.synchronize()
                t[name].append(s.elapsed_time(e) * 1e3)
        md, mo = np.median(t["dy"]), np.median(t["other"])
        print(f"bits {bits:2d}: read of dy after backward + flush {md:6.2f} us, of an untouched tensor {mo:6.2f} us "
              f"(ratio {md / mo:.3f}; spread dy {np.percentile(t['dy'], 25):.2f}-{np.percentile(t['dy'], 75):.2f})",
              flush=True)
    ext.set_backward_l2_hints(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
