"""Run one variant a few times at the headline shape (for ncu). Usage: ncu ... python scripts/ncu_case.py VARIANT"""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

model, x = fj.make_case(fj.HEADLINE, torch.float32, "cuda", seed=1)
fn = fj.callable_for(sys.argv[1], model, x)
for _ in range(3):
    fn()
torch.cuda.synchronize()
