"""Where a block's time goes, tile by tile: a FUSED_TRACE=1 build of a wgmma rung (09-11) records clock64() at
the phase boundaries of each block's first tiles; this runs it once at the headline shape (L2 flushed, as in
bench) and prints, per tile, the median over blocks of each event's time since the block started (us).
Usage: python scripts/trace_case.py VARIANT [NAME=VALUE ...] [--dtype bfloat16] [--csv PATH]
A timing experiment: the records cost a few global stores per tile in one thread per role."""
import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

SLOTS, TILE0, TILES = 64, 8, 8  # wgmma.cuh: kTraceSlots, kTrTile0, kTraceTiles
PHASES = ["x landed", "act free", "dw done", "mma issued", "mma done", "y stored", "barrier"]  # WgTracePhase


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("variant")
    ap.add_argument("defines", nargs="*", help="NAME=VALUE over the tuned parameters")
    ap.add_argument("--dtype", default="float32", choices=list(fj.DTYPES))
    ap.add_argument("--csv", default=None, help="write every block's events (us since its start) here")
    a = ap.parse_args()
    defines = {**fj.tuned_defines(a.variant), **dict(d.split("=", 1) for d in a.defines), "FUSED_TRACE": "1"}
    ext = fj.load(a.variant, defines)
    model, x = fj._make_case(fj.HEADLINE, fj.DTYPES[a.dtype], "cuda", seed=0)
    args = fj._forward_args(model)
    for _ in range(5):
        ext.forward(x, *args)
    ext.trace()  # clear
    timer = fj._Timer("cuda")
    timer.flush_buf.zero_()
    torch.cuda._sleep(timer.spin_cycles)
    ext.forward(x, *args)
    torch.cuda.synchronize()
    raw = np.array(ext.trace(), dtype=np.float64).reshape(-1, SLOTS)
    raw = raw[raw[:, 0] > 0]  # blocks that ran
    us_per_cycle = (raw[:, 3] - raw[:, 2]) / 1e3 / (raw[:, 1] - raw[:, 0])
    ev = np.where(raw > 0, (raw - raw[:, :1]) * us_per_cycle[:, None], np.nan)
    ev[:, 2:TILE0] = np.where(np.arange(2, TILE0) == 4, ev[:, 2:TILE0], np.nan)  # the ns stamps and spare slots
    start_us = (raw[:, 2] - raw[:, 2].min()) / 1e3
    span_us = (raw[:, 3].max() - raw[:, 2].min()) / 1e3
    dur = ev[:, 1]
    print(f"{a.variant} {fj._defines_str(defines)} {a.dtype}  headline {fj.HEADLINE}")
    print(f"blocks {len(raw)}; first block start to last block end {span_us:.2f} us; block start offsets "
          f"median {np.median(start_us):.2f} max {start_us.max():.2f} us; block durations median {np.median(dur):.2f} "
          f"(p10 {np.percentile(dur, 10):.2f}, p90 {np.percentile(dur, 90):.2f}) us; W_pw fill done at "
          f"{np.nanmedian(ev[:, 4]):.2f} us; SM clock {1e-3 / np.median(us_per_cycle):.2f} GHz")
    table = pd.DataFrame({ph: [np.nanmedian(ev[:, TILE0 + n * len(PHASES) + i]) if np.isfinite(
        ev[:, TILE0 + n * len(PHASES) + i]).any() else np.nan for n in range(TILES)] for i, ph in enumerate(PHASES)})
    table.index.name = "tile"
    table = table.dropna(how="all").dropna(axis=1, how="all")
    print("median over blocks, us since the block started:")
    with pd.option_context("display.width", 200, "display.float_format", "{:.2f}".format):
        print(table.to_string())
    if a.csv:
        cols = ["entry", "exit", "entry_ns", "exit_ns", "w_fill", "_5", "_6", "_7"] + [
            f"t{n}_{ph.replace(' ', '_')}" for n in range(TILES) for ph in PHASES]
        pd.DataFrame(ev, columns=cols).assign(start_us=start_us).to_csv(a.csv, index_label="block")
    return 0


if __name__ == "__main__":
    sys.exit(main())
