"""Place time inside a kernel without counters: build it with stages left out (FUSED_ABLATE bit mask,
see tc_ws_kernel in kernels/warp_specialized.cuh and kernels/wgmma.cuh) and time each build at the headline shape; differences between
rows are what a stage costs when the others still run. Outputs of ablated builds are wrong by design.
--baseline clone times x.clone() of the same bytes before and after the builds, in the same run, and prints each
row's ratio to the first clone's median: a build without the compute stages (mask 3: no depthwise, no MMA) is the
pipeline's memory skeleton, the least a faster depthwise or GEMM could bring the kernel to.
--shape B=33,T=2048 changes the headline's fields; --build-only builds the masks and times nothing (several runs' builds
can then go in parallel, each in a process of its own).
Usage: python scripts/ablate.py VARIANT [MASK ...] [--define NAME=VALUE ...] [--dtype bfloat16] [--baseline clone]
                                [--shape NAME=VALUE,...] [--build-only]"""
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
    ap.add_argument("--dtype", default="float32", choices=list(fj.DTYPES), help="x's and y's dtype (the baseline's too)")
    ap.add_argument("--baseline", action="append", default=[], choices=sorted(fj.BASELINES),
                    help="a baseline timed before and after the builds, in the same run (e.g. clone)")
    ap.add_argument("--shape", default="", help="fields over the headline's, e.g. B=33,T=2048")
    ap.add_argument("--build-only", action="store_true", help="build the masks, time nothing")
    a = ap.parse_args()
    shape = dict(fj.HEADLINE)
    for kv in filter(None, a.shape.split(",")):
        k, _, v = kv.partition("=")
        if k not in shape or not (v.isdigit() or isinstance(shape[k], bool) and v.lower() in ("0", "1", "true", "false")):
            raise SystemExit(f"--shape: expected NAME=VALUE, NAME one of {', '.join(shape)} and VALUE a whole number "
                             f"(bias: 0 or 1), got {kv!r}")
        shape[k] = v.lower() in ("1", "true") if isinstance(shape[k], bool) else int(v)
    base = fj.defines_over_tuned(a.variant, a.define)
    configs = [{**base, "FUSED_ABLATE": m} for m in a.masks]
    with ProcessPoolExecutor(min(len(configs), 8), mp_context=mp.get_context("spawn")) as ex:
        errors = list(ex.map(fj.build_quietly, [a.variant] * len(configs), configs))
    if a.build_only:
        for m, err in zip(a.masks, errors):
            print(f"built {a.variant} {fj.defines_str(base)} mask {m}: {err[:200] if err else 'ok'}")
        return 1 if any(errors) else 0
    print(f"{a.variant} {fj.defines_str(base)}  headline {shape} {a.dtype}")
    ref_us = None

    def baselines(when: str):
        nonlocal ref_us
        for b in a.baseline:
            r = fj.bench([], shape, dtype=a.dtype, reps=a.reps, baselines=(b,), log=False).iloc[0]
            ref_us = ref_us or r.median_us
            print(f"{b} ({when}){'':<{max(0, 38 - len(b) - len(when))}} median {r.median_us:8.2f} us  "
                  f"(p10 {r.p10_us:.2f}, p90 {r.p90_us:.2f})")

    baselines("before")
    for m, d, err in zip(a.masks, configs, errors):
        if err:
            print(f"mask {m:2d} {describe(m):<40} build failed: {err[:200]}")
            continue
        t = fj.bench([a.variant], shape, dtype=a.dtype, reps=a.reps, baselines=(), log=False, defines=d)
        r = t.iloc[0]
        ratio = f"  {r.median_us / ref_us:.3f}x {a.baseline[0]}" if ref_us else ""
        print(f"mask {m:2d} {describe(m):<40} median {r.median_us:8.2f} us  (p10 {r.p10_us:.2f}, p90 {r.p90_us:.2f}){ratio}")
    baselines("after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
