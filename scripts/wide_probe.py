"""Rung 13 (wgmma_wide) on the GPU: its wide kernel checked over the battery (WIDE_ALWAYS=1, so small C runs it
too) and over wide shapes (float64 reference, eager's numbers, NaN-poisoned outputs), then benched at
B=16, T=2048 for C in {192, 256, 512, 1024} beside eager, the copy and the general path (rows in the results log).
    python scripts/wide_probe.py [--no-bench] [--no-battery] [--shape I]   (I: one of WIDE_SHAPES, alone)
    python scripts/wide_probe.py --route-grid   (rung 13 vs the general path where ModelNew would choose between
                                                 them: C 129..512, B 1/16/64, T 1000/2048/16384, two K x d)"""
import sys
from pathlib import Path

import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

# and one it refuses: T below one x box
WIDE_SHAPES = fj.wide_shapes() + [dict(B=2, C_in=260, C_out=36, T=12, K=5, dilation=2, bias=True)]

pd.set_option("display.width", 200)
ok = True
checks = [("battery, WIDE_ALWAYS=1", None, {"WIDE_ALWAYS": "1"}), ("wide shapes", WIDE_SHAPES, None)]
if "--shape" in sys.argv:  # one wide shape in this process (a fault ends the process's CUDA context)
    i = int(sys.argv[sys.argv.index("--shape") + 1])
    checks = [(f"wide shape {i}", WIDE_SHAPES[i:i + 1], None)]
elif "--route-grid" in sys.argv:
    checks = []
elif "--no-battery" in sys.argv:
    checks = checks[1:]
for name, shapes, defines in checks:
    table, passed = fj.check("wgmma_wide", shapes=shapes, defines=defines)
    ran = table[~table["status"].str.startswith("unsupported")]
    print(f"== wgmma_wide check, {name}: {'PASS' if passed else 'FAIL'}; {len(ran)} of {len(table)} shapes ran, "
          f"max rel. err {ran['rel_err'].max():.2e}, max |y - eager| {ran['max_diff_eager'].max():.2e}")
    cols = ["B", "C_in", "C_out", "T", "K", "dilation", "bias", "rel_err", "max_diff_eager", "status"]
    shown = table if shapes else table[table["status"] != "pass"]
    print(shown[cols].to_string(index=False))
    ok &= passed
if "--route-grid" in sys.argv:
    rows, bw = [], fj.copy_bandwidth("cuda")  # the copy rate once, not per shape
    for (ci, co) in [(160, 160), (192, 192), (256, 256), (128, 256), (256, 128), (384, 384), (512, 512)]:
        for B in (1, 16, 64):
            for T in (1000, 2048, 16384):
                for K, d in ((5, 2), (9, 4)):
                    if B * T * max(ci, co) > 64 * 2048 * 512:
                        continue
                    shape = dict(B=B, C_in=ci, C_out=co, T=T, K=K, dilation=d, bias=True)
                    t = fj.bench(["wgmma_wide"], shape=shape, baselines=("eager", "general"), reps=50,
                                 copy_bw=bw)
                    t = t.set_index("variant")
                    rows.append(dict(shape, wide_us=t.median_us["wgmma_wide"], general_us=t.median_us["general"],
                                     eager_us=t.median_us["eager"],
                                     max_diff_eager=t.max_diff_eager["wgmma_wide"]))
                    print(rows[-1], flush=True)
    g = pd.DataFrame(rows)
    g["wide_vs_general"] = g.general_us / g.wide_us
    print(g.to_string(index=False))
if "--no-bench" not in sys.argv and "--route-grid" not in sys.argv:
    for C in (192, 256, 512, 1024):
        shape = dict(B=16, C_in=C, C_out=C, T=2048, K=5, dilation=2, bias=True)
        t = fj.bench(["wgmma_wide"], shape=shape, baselines=("eager", "clone", "general"))
        print(f"== bench C={C}: " + ", ".join(f"{r.variant} {r.median_us:.1f} us ({r.speedup_vs_eager:.2f}x)"
                                             for r in t.itertuples()) +
              f"; max |wide - eager| {t.loc[t.variant == 'wgmma_wide', 'max_diff_eager'].iloc[0]:.1e}")
sys.exit(0 if ok else 1)
