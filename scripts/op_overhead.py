"""What the operator registration costs per call at a small shape (B=1, C=128, T=256, K=5, d=2), where host time
shows: eager, ModelNew (eager inference: the implementation called directly), the operator itself
(fused_jit::dwsep_conv1d through torch.library's dispatch), ModelNew with gradients on (its C++ autograd node,
forward_train) beside eager with gradients on, and the operator with gradients on (torch.library's dispatch + its
Python autograd),
and torch.compile(fullgraph=True) of a model holding ModelNew, against torch.compile of eager. Per call: host
time (perf_counter around the call, the GPU kept busy so the host never waits) and device time (bench's timer).
Rows go to the results log (kind 'op_overhead', median_us = device time, host_us = host time).
    python scripts/op_overhead.py [--B 1 --C 128 --T 256]"""
import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--B", type=int, default=1)
    p.add_argument("--C", type=int, default=128)
    p.add_argument("--T", type=int, default=256)
    a = p.parse_args()
    shape = dict(B=a.B, C_in=a.C, C_out=a.C, T=a.T, K=5, dilation=2, bias=True)
    model, x = fj.make_case(shape, torch.float32, "cuda", seed=0)
    new = fj.ModelNew(a.C, a.C, 5, 2).cuda()
    new.load_state_dict(model.state_dict())
    args = fj.forward_args(new)
    seq_new = torch.compile(torch.nn.Sequential(new), fullgraph=True)
    seq_eager = torch.compile(torch.nn.Sequential(model), fullgraph=True)
    x_grad = x.clone().requires_grad_(True)
    fns = {"eager": lambda: model(x), "modelnew": lambda: new(x),
           "operator (torch.library dispatch)": lambda: fj.dwsep_conv1d(x, *args, ""),
           "compile(ModelNew), fullgraph": lambda: seq_new(x), "compile(eager)": lambda: seq_eager(x)}
    timer = fj.Timer("cuda")
    rows, env = [], fj.environment("cuda")
    print(f"route: {new.route(x)}")
    grad_fns = [("eager, grad on", lambda: model(x_grad)),
                ("modelnew, grad on (C++ autograd node)", lambda: new(x_grad)),
                ("operator, grad on (torch.library + Python autograd)", lambda: fj.dwsep_conv1d(x_grad, *args, ""))]
    for name, fn in list(fns.items()) + grad_fns:
        grad = "grad on" in name
        with torch.set_grad_enabled(grad):
            h = fj.host_time_us(fn)
            d = float(np.median(timer.time(fn, 100)))
        rows.append(fj.result_row("op_overhead", env, name, shape, "float32", median_us=d, host_us=h, n=100))
        print(f"{name:<42} host {h:7.1f} us   device {d:7.1f} us")
    fj.append_results(rows)
    print(pd.DataFrame(rows)[["variant", "host_us", "median_us"]].to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
