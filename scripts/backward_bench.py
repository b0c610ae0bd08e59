"""The backward, checked and timed: ModelNew's gradients (backward "dw_kernel": kernels/dw_silu_backward.cu for
SiLU + depthwise, and backward "eager": PyTorch's ops) against float64 and against eager's gradients under the same
TF32 switch, over a few shapes; then, at each shape, in one run with bench's timer (CUDA events, L2 flushed,
median of --reps): forward+backward (as a training step runs it: gradients set to None first, then
forward and loss.backward()) and backward alone of eager Model and of ModelNew in every backward mode (the default
also under torch.use_deterministic_algorithms, which trades its atomic sums for a fixed-order finish), at the
headline also the training step of both under torch.compile(fullgraph=True) (ModelNew's backward then through its
operator, fused_jit::dwsep_conv1d_backward),
and the backward's byte floor (read x and dy, write dx, at the copy rate measured in the same run).
Rows go to the results log (kind 'backward'); the printed table is the run's record.
    python scripts/backward_bench.py [--reps 100]"""
import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

SHAPES = [fj.HEADLINE,
          dict(B=8, C_in=96, C_out=200, T=1001, K=5, dilation=2, bias=True),    # general path, odd T
          dict(B=16, C_in=256, C_out=256, T=2048, K=5, dilation=2, bias=True),  # general path, wide
          dict(B=4, C_in=64, C_out=64, T=777, K=9, dilation=4, bias=False)]     # long span, no bias


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reps", type=int, default=100)
    a = p.parse_args()
    timer, env, rows = fj.Timer("cuda", spin_cycles=fj.Timer.TRAIN_SPIN_CYCLES), fj.environment("cuda"), []
    bw = fj.copy_bandwidth("cuda")
    names = ["x", "w_dw", "b_dw", "w_pw", "b_pw"]
    for shape in SHAPES:
        model, x = fj.make_case(shape, torch.float32, "cuda", seed=7)
        news = {}
        for mode in fj.BACKWARDS:
            m = fj.ModelNew(shape["C_in"], shape["C_out"], shape["K"], shape["dilation"], shape["bias"],
                            backward=mode).cuda()
            m.load_state_dict(model.state_dict())
            news[mode] = m
        gy = torch.randn(shape["B"], shape["C_out"], x.shape[2] + 2 * model.dw.padding[0]
                         - shape["dilation"] * (shape["K"] - 1), device="cuda")
        m64 = fj.copy_model(model).double()
        g64 = fj.gradients(m64, x.double(), gy.double())
        g_eager = fj.gradients(model, x, gy)
        route = news["dw_kernel"].route(x).name
        errs = {}
        for mode, m in news.items():
            g = fj.gradients(m, x, gy)
            nb = [n for n in names if shape["bias"] or not n.startswith("b_")]
            errs[mode] = {n: (fj.rel_err(gi, r), fj.max_diff(gi, e) / max(1e-30, float(e.abs().max())))
                          for n, gi, r, e in zip(nb, g, g64, g_eager)}
            print(f"{shape} route {route} backward {mode}: " + ", ".join(
                f"{n} rel.err {r:.1e} / max|diff to eager|/max {d:.1e}" for n, (r, d) in errs[mode].items()),
                flush=True)
        floor_us = 4 * (x.numel() * 2 + gy.numel()) / bw * 1e6  # read x, read dy, write dx
        xs = x.detach().clone().requires_grad_(True)
        fwd_bwd = lambda m: fj.training_step_fn(m, xs, gy)  # noqa: E731
        bwd_only = lambda m: fj.backward_fn(m, xs, gy)  # noqa: E731

        host = {}
        for label, m in [("eager", model)] + [(f"modelnew[{k}]", v) for k, v in news.items()]:
            for what, fn in (("fwd+bwd", fwd_bwd(m)), ("bwd", bwd_only(m))):
                t = timer.time(fn, a.reps)
                host[(label, what)] = fj.host_time_us(fn, 50)
                worst = max(r for r, _ in errs[label.split("[")[1][:-1]].values()) if "[" in label else float("nan")
                rows.append(fj.result_row("backward", env, f"{label} {what}", shape, "float32", t,
                                          floor_us=floor_us if what == "bwd" else float("nan"), route=route,
                                          rel_err=worst, l2_flushed=True))
        # the default backward under torch.use_deterministic_algorithms: its fixed-order finish instead of atomics
        det = f"modelnew[{fj.DEFAULT_BACKWARD}, deterministic]"
        m_default = news[fj.DEFAULT_BACKWARD]
        with fj.deterministic_algorithms():
            for what, fn in (("fwd+bwd", fwd_bwd(m_default)), ("bwd", bwd_only(m_default))):
                rows.append(fj.result_row("backward", env, f"{det} {what}", shape, "float32", timer.time(fn, a.reps),
                                          floor_us=floor_us if what == "bwd" else float("nan"), route=route,
                                          l2_flushed=True))
        m_eager = {r["variant"]: r["median_us"] for r in rows if r["kind"] == "backward"
                   and all(r[k] == v for k, v in fj.shape_cols(shape).items())}
        for what in ("fwd+bwd", "bwd"):
            e = m_eager[f"eager {what}"]
            for k in fj.BACKWARDS:
                n = m_eager[f"modelnew[{k}] {what}"]
                print(f"  {what:<8} eager {e:8.1f} us  modelnew[{k}] {n:8.1f} us  ({e / n:.2f}x)"
                      + (f"  floor {floor_us:.1f} us, modelnew {n / floor_us:.2f}x floor" if what == "bwd" else "")
                      + f"  | host us per call: eager {host[('eager', what)]:.0f}, "
                        f"modelnew[{k}] {host[(f'modelnew[{k}]', what)]:.0f}")
            n = m_eager[f"{det} {what}"]
            print(f"  {what:<8} eager {e:8.1f} us  {det} {n:8.1f} us  ({e / n:.2f}x)", flush=True)
        if shape == fj.HEADLINE:
            # a training step under torch.compile(fullgraph=True): eager's Model and ModelNew's
            compiled = {}
            mine = f"modelnew[{fj.DEFAULT_BACKWARD}] compiled"
            for label, m in (("compile", model), (mine, news[fj.DEFAULT_BACKWARD])):
                fn = fwd_bwd(torch.compile(m, fullgraph=True))
                compiled[label] = timer.time(fn, a.reps)
                rows.append(fj.result_row("backward", env, f"{label} fwd+bwd", shape, "float32", compiled[label],
                                          route=route, l2_flushed=True))
            c, n = (float(np.median(compiled[k])) for k in ("compile", mine))
            print(f"  fwd+bwd  torch.compile(Model) {c:8.1f} us  torch.compile(ModelNew) {n:8.1f} us  ({c / n:.2f}x); "
                  f"eager {m_eager['eager fwd+bwd']:.1f} us", flush=True)
            try:  # where the GPU time goes: the kernels of one backward per path
                for label, m in [("eager", model)] + [(f"modelnew[{k}]", v) for k, v in news.items()]:
                    print(f"  kernels of one backward, {label} (L2 warm), {fj.kernel_summary(bwd_only(m), top=8)}")
            except Exception as err:  # the profile is a diagnostic: never lose the timed rows to it
                print(f"  profile failed: {err!r}")
    fj.append_results(rows)
    t = pd.DataFrame(rows)
    with pd.option_context("display.width", 220):
        print(t[["variant", "B", "C_in", "C_out", "T", "K", "dilation", "route", "median_us", "p10_us", "p90_us",
                 "floor_us", "rel_err"]].round(2).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
