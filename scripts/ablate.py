"""Place time inside a kernel without counters: build it with stages left out (FUSED_ABLATE bit mask,
see tc_ws_kernel in kernels/warp_specialized.cuh and kernels/wgmma.cuh) and time each build at the headline shape; differences between
rows are what a stage costs when the others still run. Outputs of ablated builds are wrong by design.
Usage: python scripts/ablate.py VARIANT [MASK ...] [--define NAME=VALUE ...]"""
import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
import multiprocessing as mp
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

STAGES = {1: "depthwise", 2: "MMA", 4: "y stores", 8: "x copies", 16: "W_pw fill", 32: "W_pw rounding",
          64: "y's DRAM writes (y into batch row 0)", 128: "x's DRAM reads (x from batch row 0)"}


def describe(mask: int) -> str:
    left_out = [name for bit, name in STAGES.items() if mask & bit]
    return "full kernel" if not left_out else "without " + " + ".join(left_out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("variant")
    ap.add_argument("masks", nargs="*", type=int, default=[0, 1, 2, 4, 8, 6, 9, 15])
    ap.add_argument("--define", action="append", default=[], help="extra NAME=VALUE (default: the tuned ones)")
    ap.add_argument("--reps", type=int, default=100)
    a = ap.parse_args()
    base = fj.defines_over_tuned(a.variant, a.define)
    configs = [{**base, "FUSED_ABLATE": m} for m in a.masks]
    with ProcessPoolExecutor(min(len(configs), 8), mp_context=mp.get_context("spawn")) as ex:
        errors = list(ex.map(fj.build_quietly, [a.variant] * len(configs), configs))
    print(f"{a.variant} {fj.defines_str(base)}  headline {fj.HEADLINE}")
    for m, d, err in zip(a.masks, configs, errors):
        if err:
            print(f"mask {m:2d} {describe(m):<40} build failed: {err[:200]}")
            continue
        t = fj.bench([a.variant], fj.HEADLINE, reps=a.reps, baselines=(), log=False, defines=d)
        r = t.iloc[0]
        print(f"mask {m:2d} {describe(m):<40} median {r.median_us:8.2f} us  (p10 {r.p10_us:.2f}, p90 {r.p90_us:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
