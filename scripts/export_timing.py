"""Where the exported ModelNew's time goes under KernelBench's timer, beside eager and fused_jit's ModelNew.

KernelBench (src/kernelbench/timing.py, time_execution_with_cuda_event) synchronizes, flushes the L2 by allocating
and filling a 256 MB tensor, records an event, calls the model with gradients enabled (parameters require grad)
and records another: on an idle GPU that interval holds the host's launch overhead as well as the GPU's work.
This script times, per case and TF32 setting, in one run:
  kb_us     that procedure, written out here (mean of 50 after 3 warm-ups and 1 discarded, as KernelBench),
  kb_ng_us  the same under torch.no_grad,
  dev_us    bench's Timer (GPU time only: a spin kernel hides the host),
  host_us   host time per call with gradients enabled (timing.host_time_us),
for eager Model, the exported file and fj.ModelNew; and a torch.profiler table of the export's kernels at one case.
    python scripts/export_timing.py [--variant wgmma_tf32] [--profile-case 2]
"""
import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402
from kernelbench_eval import CASES  # noqa: E402


def kb_time(fn, trials=50, warmup=3, discard=1) -> float:
    """KernelBench's time_execution_with_cuda_event, procedure for procedure (mean, ms -> us)."""
    for _ in range(warmup):
        fn()
        torch.cuda.synchronize()
    torch.cuda.empty_cache()
    out = []
    for i in range(trials + discard):
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        dummy = torch.empty((32, 1024, 1024), dtype=torch.int64, device="cuda")
        dummy.fill_(42)
        del dummy
        s.record()
        _ = fn()
        e.record()
        torch.cuda.synchronize()
        if i >= discard:
            out.append(s.elapsed_time(e) * 1e3)
    return float(np.mean(out))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", default=None)
    p.add_argument("--profile-case", type=int, default=2)
    a = p.parse_args()
    path = fj.export_modelnew(a.variant, Path(tempfile.mkdtemp()) / "kb_export.py")
    spec = importlib.util.spec_from_file_location("kb_export", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    timer, rows = fj.Timer("cuda"), []
    for tf32 in (True, False):
        torch.backends.cudnn.allow_tf32 = tf32
        for case in CASES:
            B, Ci, Co, T, K, d = case
            torch.manual_seed(0)
            ref = fj.Model(Ci, Co, K, d).cuda()
            exp = mod.ModelNew(Ci, Co, K, d).cuda()
            new = fj.ModelNew(Ci, Co, K, d).cuda()
            exp.load_state_dict(ref.state_dict())
            new.load_state_dict(ref.state_dict())
            x = torch.randn(B, Ci, T, device="cuda")
            for name, m in (("eager", ref), ("export", exp), ("modelnew", new)):
                fn = lambda m=m: m(x)  # noqa: E731
                with torch.no_grad():
                    ng = kb_time(fn)
                    dev = float(np.median(timer.time(fn, 100)))
                row = dict(B=B, C_in=Ci, C_out=Co, T=T, K=K, d=d, tf32=tf32, model=name, kb_us=kb_time(fn),
                           kb_ng_us=ng, dev_us=dev, host_us=fj.host_time_us(fn, 100))
                print(row, flush=True)
                rows.append(row)
    torch.backends.cudnn.allow_tf32 = True
    t = pd.DataFrame(rows)
    with pd.option_context("display.width", 200):
        print(t.round(1).to_string(index=False))
    B, Ci, Co, T, K, d = CASES[a.profile_case]
    for tf32 in (True, False):
        torch.backends.cudnn.allow_tf32 = tf32
        exp = mod.ModelNew(Ci, Co, K, d).cuda()
        ref = fj.Model(Ci, Co, K, d).cuda()
        x = torch.randn(B, Ci, T, device="cuda")
        for name, m in (("export", exp), ("eager", ref)):
            kb_time(lambda: m(x), trials=5)
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                    torch.profiler.ProfilerActivity.CUDA]) as prof:
                kb_time(lambda: m(x), trials=10)
            print(f"--- profile {name} {CASES[a.profile_case]} tf32={tf32}")
            print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12, max_name_column_width=70))
    torch.backends.cudnn.allow_tf32 = True
    return 0


if __name__ == "__main__":
    sys.exit(main())
