"""Backward rung 10 (kernels/pw_data_grad_wgmma.cu) alone against what it replaces, in one interleaved run (bench's
timer: CUDA events, L2 flushed, each call primed): cuDNN's data gradient of the 1x1 conv (eager's call, TF32 on)
with and without db_pw's reduction (gy.sum), and rung 10 (ga and db_pw) from the working tree's kernels/ and from
each given build: LABEL=KERNELS_DIR (another copy of kernels/, e.g. an earlier commit's) or LABEL:NAME=VALUE,...
(the tree's kernels with compile-time knobs: "late:PWDG_TMA_LATE=2", "nostores:PWDG_ABLATE=1"). Every build's ga is
checked against cuDNN's and printed; a build whose ga is off is timed only where PWDG_ABLATE marks it as an
experiment (its output is wrong by design). Rows go to the results log (kind 'pw_dgrad_ab'); the printed table is
the run's record.
    python scripts/pw_dgrad_ab.py [--reps 200] [LABEL=KERNELS_DIR | LABEL:NAME=VALUE[,NAME=VALUE] ...]"""
import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

SHAPES = [dict(B=16, C=128, C_out=128, T=2048), dict(B=8, C=96, C_out=128, T=1000)]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("builds", nargs="*", help="LABEL=KERNELS_DIR (the working tree's kernels/ is always 'rung10')")
    p.add_argument("--reps", type=int, default=200)
    a = p.parse_args()
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        print("pw_dgrad_ab: backward rung 10 runs on sm_90 GPUs only")
        return 1
    try:
        builds = fj.backward_builds(a.builds)
    except ValueError as e:
        p.error(str(e))
    exts = {"rung10": fj.general_kernel(), **{label: ext for label, (ext, _) in builds.items()}}
    missing = [label for label, e in exts.items() if not hasattr(e, "pw_data_grad")]
    if missing:
        p.error(f"{missing}: these builds have no backward rung 10 (pw_data_grad)")
    ablated = {label for label, (_, defines) in builds.items() if int(defines.get("PWDG_ABLATE", 0))}
    torch.backends.cudnn.allow_tf32 = True
    timer, env, rows = fj.Timer("cuda"), fj.environment("cuda"), []
    for s in SHAPES:
        torch.manual_seed(0)
        gy = torch.randn(s["B"], s["C_out"], s["T"], device="cuda")
        w = torch.randn(s["C_out"], s["C"], 1, device="cuda") / s["C_out"] ** 0.5
        shape_only = torch.empty(s["B"], s["C"], s["T"], device="cuda")

        def cudnn():
            return torch.ops.aten.convolution_backward(gy, shape_only, w, None, [1], [0], [1], False, [0], 1,
                                                       [True, False, False])[0]

        ref = cudnn()
        for label, e in exts.items():
            ga, db = e.pw_data_grad(gy, w)
            err = fj.max_diff(ga, ref) / float(ref.abs().max())
            print(f"{s}: {label}'s ga against cuDNN's TF32 data gradient: max |diff| / max = {err:.2e}; db_pw against "
                  f"gy.sum: {fj.max_diff(db, gy.sum((0, 2))):.2e}" + (" (ablated: not checked)" if label in ablated
                                                                       else ""), flush=True)
            if err > 1e-5 and label not in ablated:
                print(f"{label}'s output is off: not timed")
                return 1
        fns = {"cudnn": cudnn, "cudnn+sum": lambda: (cudnn(), gy.sum((0, 2)))}
        fns.update({label: (lambda e=e: e.pw_data_grad(gy, w)) for label, e in exts.items()})
        labels = list(fns)
        t = timer.time_interleaved(list(fns.values()), a.reps)
        print(f"{s} (bytes: gy in, ga out {(gy.numel() + shape_only.numel()) * 4 / 1e6:.1f} MB)")
        shape = dict(B=s["B"], C_in=s["C"], C_out=s["C_out"], T=s["T"], K=1, dilation=1, bias=True)
        rows += fj.interleaved_rows("pw_dgrad_ab", env, [f"pw_dgrad[{k}]" for k in labels], labels, shape, t,
                                    base="cudnn")
    fj.append_results(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
