"""Run KernelBench's own evaluation (src/kernelbench/eval.py: eval_kernel_against_ref, and its static checker)
against the exported ModelNew, at the headline and at other get_init_inputs(), under PyTorch's defaults (cuDNN
TF32 on) and with TF32 off. KernelBench itself is not part of this repository: pass the folder holding its
`kernelbench` package (e.g. a checkout's src/, kept in a git-ignored folder) as --kernelbench.

    python scripts/kernelbench_eval.py --kernelbench .kb/src [--variant wgmma_rs_tf32] [--out results.csv]
"""
import argparse
import inspect
import os
import sys
import tempfile
from pathlib import Path

import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

# (B, C_in, C_out, T, K, dilation): the headline, C_in != C_out with odd T, wide channels, K = 7 with d = 3 and
# T not a multiple of 8, and C = 512 -> 384.
CASES = [(16, 128, 128, 2048, 5, 2), (8, 96, 200, 1001, 5, 2), (16, 256, 256, 2048, 5, 2),
         (8, 128, 128, 2047, 7, 3), (4, 512, 384, 1000, 3, 1)]


def reference_source(B, C_in, C_out, T, K, d) -> str:
    """The KernelBench problem file: the reference Model and its inputs at one shape."""
    return ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\n"
            + inspect.getsource(fj.Model)
            + f"\n\nbatch_size, in_channels, out_channels, length, kernel_size, dilation = {B}, {C_in}, {C_out}, {T}, "
              f"{K}, {d}\n\n\ndef get_inputs():\n    return [torch.randn(batch_size, in_channels, length)]\n\n\n"
              "def get_init_inputs():\n    return [in_channels, out_channels, kernel_size, dilation]\n")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kernelbench", required=True, help="folder holding KernelBench's `kernelbench` package")
    p.add_argument("--variant", default=None, help=f"exported variant (default {fj.DEFAULT_EXPORT_VARIANT})")
    p.add_argument("--out", default=None, help="CSV of the results")
    p.add_argument("--perf-trials", type=int, default=50)
    a = p.parse_args()
    sys.path.insert(0, a.kernelbench)
    from kernelbench.eval import eval_kernel_against_ref
    from kernelbench.kernel_static_checker import validate_kernel_static

    work = Path(tempfile.mkdtemp(prefix="kb_eval_"))
    src = fj.export_modelnew(a.variant, work / "modelnew.py").read_text()
    valid, errors, warns = validate_kernel_static(src, backend="cuda", precision="fp32")
    print(f"static check: valid={valid} errors={errors} warnings={warns}")
    rows = []
    for tf32 in (True, False):
        torch.backends.cudnn.allow_tf32 = tf32
        for case in CASES:
            r = eval_kernel_against_ref(reference_source(*case), src, seed_num=42, num_correct_trials=5,
                                        num_perf_trials=a.perf_trials, measure_performance=True,
                                        build_dir=os.environ.get("TORCH_EXTENSIONS_DIR") or str(work / "build"), device=0, backend="cuda",
                                        precision=torch.float32)
            md = r.metadata if r else {}
            row = dict(zip(("B", "C_in", "C_out", "T", "K", "dilation"), case), cudnn_tf32=tf32,
                       compiled=bool(r and r.compiled), correct=bool(r and r.correctness),
                       trials=md.get("correctness_trials", ""), max_difference=";".join(md.get("max_difference", [])),
                       runtime_ms=getattr(r, "runtime", -1.0), ref_runtime_ms=getattr(r, "ref_runtime", -1.0),
                       error=str(md.get("runtime_error", md.get("compilation_error", "")))[:200])
            row["speedup"] = row["ref_runtime_ms"] / row["runtime_ms"] if row["runtime_ms"] and row["runtime_ms"] > 0 else float("nan")
            print(row, flush=True)
            rows.append(row)
    torch.backends.cudnn.allow_tf32 = True
    t = pd.DataFrame(rows)
    with pd.option_context("display.width", 200):
        print(t.drop(columns=["error"]).to_string(index=False))
    if a.out:
        t.assign(static_valid=valid, static_errors=";".join(errors), static_warnings=";".join(warns),
                 variant=a.variant or fj.DEFAULT_EXPORT_VARIANT, commit=fj.git_commit(),
                 device_name=torch.cuda.get_device_name(), torch=torch.__version__).to_csv(a.out, index=False)
    return 0 if valid and t.correct.all() else 1


if __name__ == "__main__":
    sys.exit(main())
