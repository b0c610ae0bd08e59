"""Which part of rung 13's wide kernel faults, and at which shapes: one WIDE_SKIP build (WIDE_ALWAYS=1) run once
per shape (a CUDA fault ends the process's context: give each build, or each shape, its own process).
    python scripts/wide_bisect.py SKIP [SHAPE_INDEX ...]"""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

skip = sys.argv[1]
defines = {"WIDE_ALWAYS": "1", "WIDE_SKIP": skip}
SHAPES = [dict(B=2, C_in=128, C_out=128, T=256, K=5, dilation=2, bias=True),
          dict(B=2, C_in=256, C_out=256, T=2048, K=5, dilation=2, bias=True),
          dict(B=4, C_in=128, C_out=128, T=256, K=5, dilation=2, bias=True),
          dict(B=16, C_in=128, C_out=128, T=256, K=5, dilation=2, bias=True),
          dict(B=1, C_in=128, C_out=128, T=32768, K=5, dilation=2, bias=True),  # 256 blocks, one batch row
          dict(B=16, C_in=128, C_out=128, T=2048, K=5, dilation=2, bias=True),
          dict(B=9, C_in=16, C_out=24, T=4160, K=3, dilation=1, bias=True),
          dict(B=2, C_in=16, C_out=24, T=256, K=3, dilation=1, bias=True)]
for i in [int(a) for a in sys.argv[2:]] or range(len(SHAPES)):
    shape = SHAPES[i]
    model, x = fj.make_case(shape, torch.float32, "cuda", seed=0)
    try:
        y = fj.run_variant("wgmma_wide", model, x, defines=defines)
        print(f"WIDE_SKIP={skip} {shape}: ran, rel. err {fj.rel_err(y, fj.reference(model, x)):.2e}, "
              f"unwritten {int(torch.isnan(y).sum())}")
    except Exception as e:  # the fault is the finding: report it and stop this process
        print(f"WIDE_SKIP={skip} {shape}: FAULT {str(e).splitlines()[0]}")
        sys.exit(1)
