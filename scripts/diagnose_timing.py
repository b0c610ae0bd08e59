"""Where does a call's time go? For each variant and eager: CUDA-event time with the L2 flushed, without and
with the spin kernel that bench's timer queues (it hides host launch overhead), host time per call, and the
kernels' own device time from torch.profiler (CUPTI)."""
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

names = sys.argv[1:] or ["eager"] + fj.variants("cuda")[1:]
model, x = fj.make_case(fj.HEADLINE, torch.float32, "cuda", seed=1)
flush = torch.empty(256 * 2**20 // 4, device="cuda")
for name in names:
    fn = fj.callable_for(name, model, x)
    res = {spin: float(np.median(fj.Timer("cuda", spin_cycles=spin).time(fn, reps=50))) for spin in (0, 200_000)}
    host = []
    for _ in range(50):  # host time to issue one call, the GPU kept busy so the queue never blocks
        flush.zero_()
        torch.cuda._sleep(200_000)
        t0 = time.perf_counter()
        fn()
        host.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    res["host"] = float(np.median(host)) * 1e6
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(20):
            flush.zero_()
            fn()
        torch.cuda.synchronize()
    kern = [(e.key, e.device_time_total / e.count, e.count) for e in prof.key_averages()
            if "zero" not in e.key.lower() and "fill" not in e.key.lower() and e.device_time_total > 0]
    print(f"{name:>22}: events {res[0]:8.2f} us | events after spin {res[200000]:8.2f} us | host/call "
          f"{res['host']:6.1f} us | kernels: " + "; ".join(f"{k[:40]} {t:.2f} us x{c // 20}" for k, t, c in kern))
