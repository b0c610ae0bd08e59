"""Where a backward's GPU time goes when the host is slower than the GPU: one call of each path (eager Model,
ModelNew with each kernel backward), queued behind a long spin kernel as bench's training timer queues it, under
torch.profiler with CPU and CUDA activities. Prints, per call, the CUDA runtime calls that can make the host wait
for the GPU (synchronizations, blocking copies, cudaMalloc/cudaFree), the kernels' start times relative to the
call's first kernel, and the GPU's idle gaps between them; and, for a shape ladder, the training timer's event time
next to the summed kernel time (a time that stays flat while the kernels shrink is the host's, not the GPU's).
Kernels on two streams (backward "streams") overlap: "first start -> last end" is then the GPU's span, not the sum.
With --variant V and builds (backward_ab's LABEL:NAME=VALUE forms), also each build's training path in --mode (a
fused variant's forward_train is ModelNew's training step with its knobs), beside the working tree's build of V:
where a knob's time goes, kernel by kernel.
    python scripts/backward_timeline.py [--trace-dir DIR] [--headline] [--variant V --mode 6 LABEL:NAME=VALUE ...]"""
import argparse
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

BLOCKING = ("Synchronize", "Memcpy", "cudaMalloc", "cudaFree", "cudaHostAlloc", "cudaStreamQuery",
            "cudaEventQuery", "cudaGetDeviceProperties")
SHAPES = [fj.HEADLINE, dict(fj.HEADLINE, T=512), dict(fj.HEADLINE, B=2),
          dict(B=8, C_in=96, C_out=200, T=1001, K=5, dilation=2, bias=True)]


def calls(shape, builds=None, build_mode=6):
    """{(label, "bwd" | "fwd+bwd"): function}: eager, ModelNew in three backward modes, and each build in `builds`
    ({label: extension}) as fj.BuildModel in `build_mode`."""
    model, x = fj.make_case(shape, torch.float32, "cuda", seed=7)
    out = {"eager": model}
    for label, ext in (builds or {}).items():
        out[f"build[{label}]"] = fj.BuildModel(ext, model, build_mode)
    for mode in ("dw_kernel", "dgrad_kernel", "streams"):
        m = fj.ModelNew(shape["C_in"], shape["C_out"], shape["K"], shape["dilation"], shape["bias"],
                        backward=mode).cuda()
        m.load_state_dict(model.state_dict())
        out[f"modelnew[{mode}]"] = m
    xs = x.detach().clone().requires_grad_(True)
    gy = torch.randn_like(model(x))
    fns = {}
    for label, m in out.items():
        fns[(label, "bwd")] = fj.backward_fn(m, xs, gy)
        fns[(label, "fwd+bwd")] = fj.training_step_fn(m, xs, gy)
    return fns


def timeline(fn, trace_path=None):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        torch.cuda._sleep(4_000_000)
        fn()
        torch.cuda.synchronize()
    if trace_path:
        prof.export_chrome_trace(str(trace_path))
    ev = prof.events()
    kern = sorted([e for e in ev if e.device_type == torch.autograd.DeviceType.CUDA and "spin" not in e.name and "sleep" not in e.name
                   and e.time_range.elapsed_us() > 0], key=lambda e: e.time_range.start)
    rt = [e for e in ev if e.device_type == torch.autograd.DeviceType.CPU and e.name.startswith("cuda")
          and any(b in e.name for b in BLOCKING)]
    t0 = kern[0].time_range.start if kern else 0
    rows, gaps, end = [], [], t0
    for k in kern:
        if k.time_range.start - end > 2:
            gaps.append((k.name[:40], k.time_range.start - end))
        rows.append((k.name[:44], k.time_range.start - t0, k.time_range.elapsed_us()))
        end = max(end, k.time_range.end)
    return rows, gaps, [(e.name, e.time_range.elapsed_us()) for e in rt], (end - t0)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trace-dir", default=None)
    p.add_argument("--headline", action="store_true", help="the headline shape only")
    p.add_argument("--variant", default=None,
                   help="the fused variant the builds are of (e.g. wgmma_wide); the headline shape only")
    p.add_argument("--mode", type=int, default=fj.BACKWARDS["dgrad_kernel"], help="the builds' backward mode")
    p.add_argument("builds", nargs="*", help="LABEL:NAME=VALUE[,NAME=VALUE] (needs --variant)")
    a = p.parse_args()
    if a.builds and not a.variant:
        p.error("builds need --variant (e.g. --variant wgmma_wide)")
    try:
        builds = {label: ext for label, (ext, _) in fj.backward_builds(a.builds, a.variant).items()}
    except ValueError as e:
        p.error(str(e))
    if a.variant:
        builds["tree"] = fj.load(a.variant)
    timer = fj.Timer("cuda", spin_cycles=fj.Timer.TRAIN_SPIN_CYCLES)
    for i, shape in enumerate(SHAPES[:1] if a.headline or a.variant else SHAPES):
        print(f"\n== {fj.shape_cols(shape)}", flush=True)
        for (label, what), fn in calls(shape, builds, a.mode).items():
            t = float(np.median(timer.time(fn, 30)))
            host = fj.host_time_us(fn, 20)
            path = Path(a.trace_dir) / f"trace_{i}_{label}_{what}.json".replace("[", "_").replace("]", "") \
                if a.trace_dir and i == 0 else None
            rows, gaps, rt, span = timeline(fn, path)
            ksum = sum(r[2] for r in rows)
            print(f"  {label:<20} {what:<8} events {t:7.1f} us | kernels {len(rows)} sum {ksum:6.1f} us, first start"
                  f" -> last end {span:6.1f} us | host {host:6.0f} us | GPU gaps > 2 us: "
                  + (", ".join(f"{g:.1f} before {n}" for n, g in gaps) or "none")
                  + " | blocking runtime calls: " + (", ".join(f"{n} {d:.1f}" for n, d in rt) or "none"), flush=True)
            if i == 0:
                for n, s, d in rows:
                    print(f"      {s:8.1f} +{d:6.1f}  {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
