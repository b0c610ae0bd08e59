"""What the L2 flush costs the timed call. bench's timer flushes by writing 256 MB, so the L2 is full of dirty
lines and every line a timed call allocates (x read, y written) first writes one back to DRAM. This times the
same calls with that flush and with a flush that reads the buffer instead (clean lines: no write-backs in the
timed call), plus the copy (x.clone()) and a one-element kernel, in fp32 and bf16 at the headline shape.
    python3 scripts/flush_kinds.py [--reps 200] [--csv FILE]
A diagnostic: bench, the README and every header keep the write flush (as triton.testing.do_bench does)."""
import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

CALLS = {"float32": ["empty", "clone", "wgmma_rs_tf32", "wgmma_tf32"],
         "bfloat16": ["empty", "clone", "wgmma_bf16"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--csv", default=None)
    a = ap.parse_args()
    timers = {kind: fj.Timer("cuda", flush=kind) for kind in ("write", "read")}
    rows = []
    for dtype, names in CALLS.items():
        model, x = fj.make_case(fj.HEADLINE, fj.DTYPES[dtype], "cuda", seed=1)
        tiny = torch.empty(1, device="cuda")
        for name in names:
            fn = tiny.zero_ if name == "empty" else fj.callable_for(name, model, x)
            for kind, timer in timers.items():
                t = timer.time(fn, reps=a.reps)
                rows.append({"dtype": dtype, "call": name, "flush": kind, "median_us": np.median(t),
                             "p10_us": np.percentile(t, 10), "p90_us": np.percentile(t, 90)})
    table = pd.DataFrame(rows)
    env = fj.environment("cuda")
    print(f"{env['device_name']}  torch {env['torch']}  commit {env['commit']}  headline {fj.HEADLINE}, "
          f"{a.reps} calls each")
    print(table.pivot_table(index=["dtype", "call"], columns="flush", values="median_us", sort=False).round(2)
          .to_string())
    print(table.round(2).to_string(index=False))
    if a.csv:
        table.assign(**env).to_csv(a.csv, index=False)


if __name__ == "__main__":
    main()
