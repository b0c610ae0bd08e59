"""Which part of rung 13's wide kernel faults: one WIDE_SKIP build (WIDE_ALWAYS=1) run once at two shapes in this
process (a CUDA fault ends the process's context, so each build gets its own process).
    python scripts/wide_bisect.py SKIP"""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

skip = sys.argv[1]
defines = {"WIDE_ALWAYS": "1", "WIDE_SKIP": skip}
for shape in (dict(B=2, C_in=128, C_out=128, T=256, K=5, dilation=2, bias=True),
              dict(B=2, C_in=256, C_out=256, T=2048, K=5, dilation=2, bias=True)):
    model, x = fj.make_case(shape, torch.float32, "cuda", seed=0)
    try:
        y = fj.run_variant("wgmma_wide", model, x, defines=defines)
        print(f"WIDE_SKIP={skip} {shape['C_in']}: ran, rel. err {fj.rel_err(y, fj.reference(model, x)):.2e}, "
              f"unwritten {int(torch.isnan(y).sum())}")
    except Exception as e:  # the fault is the finding: report it and stop this process
        print(f"WIDE_SKIP={skip} {shape['C_in']}: FAULT {str(e).splitlines()[0]}")
        sys.exit(1)
