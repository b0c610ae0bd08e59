"""A/B of the backward's 1x1-conv weight gradient alone (dW_pw = gy act^T and db_pw: rung 7, kernels/
pw_weight_grad_wgmma.cu, on an sm_90 GPU), its compile-time forms against each other and against what it replaces,
in one run with bench's timer (CUDA events, L2 flushed, interleaved, each primed): cuDNN's weight gradient (eager's
call, its split-K reduction included) and a plain read of the same bytes (gy.sum() and act.sum()). Each FORM is
LABEL or LABEL:NAME=VALUE,NAME=VALUE: the general path's extension built from a copy of kernels/ whose
pw_weight_grad_wgmma.cu starts with those #defines (PW_TMA_STAGES, PW_TMA_SM_DIV, PW_TMA_ABLATE; its header says
what they do); builds run in parallel. Results are checked against the tree's (ablated forms are timed only).
Rows go to the results log (kind 'pw_wgrad_ab'); the printed table is the run's record.
    python scripts/pw_wgrad_ab.py [--reps 100] FORM ..."""
import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import fused_jit as fj  # noqa: E402

SHAPES = [(16, 128, 128, 2048), (16, 64, 64, 2048), (4, 128, 128, 4096)]  # (B, C, C_out, T)


def form_dir(root: Path, label: str, defines: dict) -> Path:
    """A copy of kernels/ under root/label whose rung 7 file starts with `defines`."""
    d = root / label / "kernels"
    shutil.copytree(fj.config.KERNELS_DIR, d)
    f = d / "pw_weight_grad_wgmma.cu"
    f.write_text("".join(f"#define {k} {v}\n" for k, v in defines.items()) + f.read_text())
    return d


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("forms", nargs="*", help="LABEL[:NAME=VALUE,...] (the working tree's kernels/ is always 'tree')")
    p.add_argument("--reps", type=int, default=100)
    a = p.parse_args()
    root = Path(tempfile.mkdtemp(prefix="pw_wgrad_ab_"))
    forms = {}
    for spec in a.forms:
        label, _, kv = spec.partition(":")
        try:
            defines = dict(item.split("=", 1) for item in kv.split(",") if item)
        except ValueError:
            p.error(f"{spec!r}: expected LABEL or LABEL:NAME=VALUE,...")
        forms[label] = (form_dir(root, label, defines), defines)
    procs = [subprocess.Popen([sys.executable, "-c", "import sys, pathlib; sys.path.insert(0, sys.argv[2]); "
                               "import fused_jit as fj; fj.general_kernel(pathlib.Path(sys.argv[1]))", str(d),
                               str(ROOT)]) for d, _ in forms.values()]
    tree = fj.general_kernel()
    if any(pr.wait() for pr in procs):
        print("a form's build failed")
        return 1
    exts = {"tree": (tree, {})} | {label: (fj.general_kernel(d), defs) for label, (d, defs) in forms.items()}
    timer, env, rows = fj.Timer("cuda"), fj.environment("cuda"), []
    for B, C, C_out, T in SHAPES:
        torch.manual_seed(0)
        gy = torch.randn(B, C_out, T, device="cuda")
        act = torch.randn(B, C, T, device="cuda")
        w = torch.empty(C_out, C, 1, device="cuda")
        want, want_b, rung = tree.pw_weight_grad(gy, act)
        shape = dict(B=B, C_in=C, C_out=C_out, T=T, K=1, dilation=1, bias=True)
        fns = {"cudnn_wgrad": lambda: torch.ops.aten.convolution_backward(
                   gy, act, w, None, [1], [0], [1], False, [0], 1, [False, True, False]),
               "read_same_bytes": lambda: (gy.sum(), act.sum())}
        for label, (ext, defs) in exts.items():
            got, got_b, r = ext.pw_weight_grad(gy, act)
            if not int(defs.get("PW_TMA_ABLATE", 0)):
                d = max(fj.max_diff(got, want) / float(want.abs().max()), fj.max_diff(got_b, want_b) / float(
                    want_b.abs().max()))
                if d > 1e-5:
                    print(f"{label}: {(B, C, C_out, T)}: max |diff to the tree's| / max = {d:.2e}: not timed")
                    continue
            fns[f"rung{r}[{label}]"] = lambda ext=ext: ext.pw_weight_grad(gy, act)
        t = timer.time_interleaved(list(fns.values()), a.reps)
        print(f"(B, C, C_out, T) = {(B, C, C_out, T)}: {(gy.numel() + act.numel()) * 4 / 1e6:.1f} MB read")
        for j, name in enumerate(fns):
            rows.append(fj.result_row("pw_wgrad_ab", env, name, shape, "float32", t[:, j], l2_flushed=True))
            print(f"  {name:<24} {np.median(t[:, j]):8.2f} us  (p10 {np.percentile(t[:, j], 10):.2f}, "
                  f"p90 {np.percentile(t[:, j], 90):.2f})", flush=True)
    fj.append_results(rows)
    shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
