"""A/B of the backward kernel across commits or knobs: the general path's extension built from each given copy of
kernels/ (LABEL=KERNELS_DIR: an earlier commit's, made here with `git archive REV kernels | tar -x -C .ab/REV`, .ab/
ignored and carried: the GPU machine's copy has no git history), from the working tree's kernels with compile-time
knobs (LABEL:NAME=VALUE,...: "late:PWDG_TMA_LATE=2"), and from the working tree, then one backward each
(torch.autograd.grad of forward_train's output in each --mode: 1 the backward kernel between cuDNN's two GEMMs, 3
rungs 4 + 7, 4 rung 8, 5 rung 9 + rung 4's gv form, 6 rung 10 + rung 4; default 1) timed in turn with bench's timer
(CUDA events, L2 flushed, the training spin; interleaved, each primed), at the headline and one more shape.
Gradients checked against eager's first. With --with-forward each call is forward_train and its backward (a
training step's GPU work); with --variant wgmma_wide the builds are that fused variant's, whose forward_train is
ModelNew's training step (its forward kernel, the same C++ backward), else the general path's (its forward is
dw_silu.cu + cuDNN's 1x1 conv). Rows go to the results log (kind 'backward_ab', or 'fwd_bwd_ab'); the printed table is
the run's record.
    python scripts/backward_ab.py [--reps 100] [--mode 1 ...] [--with-forward] [--variant V]
                                  [LABEL=KERNELS_DIR | LABEL:NAME=VALUE,...]"""
import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

SHAPES = [fj.HEADLINE, dict(B=8, C_in=96, C_out=200, T=1001, K=5, dilation=2, bias=True)]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("builds", nargs="*", help="LABEL=KERNELS_DIR or LABEL:NAME=VALUE[,NAME=VALUE] (the tree's kernels "
                   "with compile-time knobs); the working tree's kernels/ is always 'tree'")
    p.add_argument("--reps", type=int, default=100)
    p.add_argument("--profile", action="store_true",
                   help="also print the kernels of one backward per build and mode at the headline (torch.profiler, "
                        "L2 warm)")
    p.add_argument("--mode", type=int, action="append", choices=sorted(set(fj.config.BACKWARDS.values()) - {0}),
                   help="backward mode(s) to time (fusedkit.config.BACKWARDS; default 1)")
    p.add_argument("--with-forward", action="store_true",
                   help="time forward_train + the backward (a training step's GPU work) instead of the backward alone")
    p.add_argument("--variant", default=None,
                   help="build this fused variant (e.g. wgmma_wide: ModelNew's forward kernel) instead of the general "
                        "path's extension; its forward_train runs ModelNew's forward and the same C++ backward")
    a = p.parse_args()
    modes = a.mode or [1]
    try:
        exts = {label: ext for label, (ext, _) in fj.backward_builds(a.builds, a.variant).items()}
    except ValueError as e:
        p.error(str(e))
    exts["tree"] = fj.load(a.variant) if a.variant else fj.general_kernel()
    timer, env = fj.Timer("cuda", spin_cycles=fj.Timer.TRAIN_SPIN_CYCLES), fj.environment("cuda")
    for shape in SHAPES:
        model, x = fj.make_case(shape, torch.float32, "cuda", seed=7)
        args = fj.forward_args(model)
        params = list(model.parameters())
        xs = x.clone().requires_grad_(True)
        gy = torch.randn_like(model(x))
        want = torch.autograd.grad(model(xs), [xs, *params], gy)
        fns, labels = [], []
        why = exts["tree"].why_unsupported(x, *args) if a.variant else ""  # a fused variant's own shapes only
        if why:
            print(f"{shape}: {a.variant} does not take it, not timed ({why})")
            continue
        for (label, ext), mode in ((e, m) for m in modes for e in exts.items()):
            built = fj.BuildModel(ext, model, mode)
            y = built(xs)
            label = label if len(modes) == 1 else f"{label}/mode{mode}"
            labels.append(label)
            got = torch.autograd.grad(y, [xs, *params], gy, retain_graph=True)
            worst = max(fj.max_diff(g, w) / max(1e-30, float(w.abs().max())) for g, w in zip(got, want))
            print(f"{label}: {shape}: worst max |grad - eager's| / max |eager's| = {worst:.2e}", flush=True)
            if worst > 1e-4:
                print(f"{label}: gradients off: not timed")
                return 1
            if a.with_forward:
                fns.append(lambda built=built: torch.autograd.grad(built(xs), [xs, *params], gy))
            else:
                fns.append(lambda y=y: torch.autograd.grad(y, [xs, *params], gy, retain_graph=True))
        if a.profile and shape == fj.HEADLINE:
            for label, fn in zip(labels, fns):
                print(f"  kernels of one backward, {label} (L2 warm), {fj.kernel_summary(fn, width=40)}")
        t = timer.time_interleaved(fns, a.reps)
        kind, what = ("fwd_bwd_ab", "fwd+bwd") if a.with_forward else ("backward_ab", "backward")
        fj.append_results(fj.interleaved_rows(kind, env, [f"{what}[{k}]" for k in labels], labels, shape, t))
    return 0


if __name__ == "__main__":
    sys.exit(main())
