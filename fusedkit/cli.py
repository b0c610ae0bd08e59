"""The command line: `python fused_jit.py list | check | bench | ab | sweep | shape-sweep | export | report | prebuild`."""
from __future__ import annotations

import argparse
import json
import sys
import time

import pandas as pd
import torch

from .config import ROOT
from .config import DTYPES, DEFAULT_EXPORT_VARIANT, DEFAULT_VARIANT, FUSED_16BIT, BASELINES, batch_size, in_channels, out_channels, length, kernel_size, dilation
from .registry import variants, variant_info, tolerance
from .jit import defines_over_tuned
from .check import check
from .timing import bench, ab
from .sweeps import sweep, shape_grid, shape_sweep
from .report import plot_shape_sweep, report
from .export import export_modelnew
from .prebuild import GPU_SUITE_BUILDS, prebuild, read_build_list


def _shape_args(p: argparse.ArgumentParser):
    g = p.add_argument_group("shape (default: the headline B=16 C=128 T=2048 K=5 d=2)")
    g.add_argument("--B", type=int, default=batch_size, help="batch")
    g.add_argument("--C-in", type=int, default=in_channels, help="input channels")
    g.add_argument("--C-out", type=int, default=out_channels, help="output channels")
    g.add_argument("--T", type=int, default=length, help="time steps")
    g.add_argument("--K", type=int, default=kernel_size, help="depthwise kernel size")
    g.add_argument("--dilation", type=int, default=dilation, help="depthwise dilation")
    g.add_argument("--no-bias", action="store_true", help="both convolutions without bias")
    g.add_argument("--dtype", default="float32", choices=list(DTYPES), help="I/O element type")


def _shape_from(a) -> dict:
    return dict(B=a.B, C_in=a.C_in, C_out=a.C_out, T=a.T, K=a.K, dilation=a.dilation, bias=not a.no_bias)


def parser() -> argparse.ArgumentParser:
    """The command line's parser (main's; scripts that build command lines check theirs against it)."""
    p = argparse.ArgumentParser(prog="fused_jit.py", description="Write, check and time a fused CUDA kernel for "
                                "y = pw(silu(dw(x))); ModelNew, the shape sweep, the KernelBench export.")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="list the variants in ladder order")
    pc = sub.add_parser("check", help="correctness vs float64 over the shape battery (exit 1 on failure)")
    pc.add_argument("--variant", action="append", help="variant(s) to check (default: all for this machine)")
    pc.add_argument("--shape-only", action="store_true", help="check only the shape given by the shape options")
    pc.add_argument("--trials", type=int, default=2, help="fresh random inputs per shape")
    pc.add_argument("--define", action="append", default=[], metavar="NAME=VALUE",
                    help="compile-time parameter over the tuned ones (e.g. --define TILE_T=32), repeatable")
    _shape_args(pc)
    pb = sub.add_parser("bench", help="time variants and baselines, append to results/timings.csv")
    pb.add_argument("--variant", action="append", help="variant(s) to time (default: all for this machine)")
    pb.add_argument("--reps", type=int, default=200, help="timed calls per variant")
    pb.add_argument("--no-baselines", action="store_true", help="skip eager / torch.compile / clone")
    pb.add_argument("--no-log", action="store_true", help="do not append to results/timings.csv")
    _shape_args(pb)
    pa = sub.add_parser("ab", help="interleaved A/B timing of two variants or baselines (eager, compile, ...)")
    pa.add_argument("a", help="variant or baseline A (a variant may take parameters: name:NAME=V,NAME=V)")
    pa.add_argument("b", help="variant or baseline B")
    pa.add_argument("--reps", type=int, default=200, help="A/B pairs")
    pa.add_argument("--no-log", action="store_true", help="do not append to results/timings.csv")
    _shape_args(pa)
    pe = sub.add_parser("export", help="write a self-contained KernelBench ModelNew file")
    pe.add_argument("variant", nargs="?", default=None, help=f"variant (default {DEFAULT_EXPORT_VARIANT})")
    pe.add_argument("-o", "--output", default=None, help="output file (default modelnew_<variant>.py)")
    ps = sub.add_parser("sweep", help="build, check and time a grid of a variant's compile-time parameters")
    ps.add_argument("variant")
    ps.add_argument("param", nargs="+", help="NAME=v1,v2,... (e.g. TILE_T=32,64 WARPS_N=2,4)")
    ps.add_argument("--reps", type=int, default=100)
    ps.add_argument("--no-save", action="store_true", help="do not record the best in results/tuned.json")
    _shape_args(ps)
    pss = sub.add_parser("shape-sweep", help="time ModelNew vs eager over the contract's grid of shapes")
    pss.add_argument("--C", type=int, nargs="+", default=None, help="only these channel counts")
    pss.add_argument("--dtype", action="append", default=None, choices=list(DTYPES), help="only these dtypes")
    pss.add_argument("--reps", type=int, default=30)
    sub.add_parser("report", help="regenerate results/ladder.png and the README results table from the log")
    pp = sub.add_parser("prebuild", help="make a list of builds first, in parallel (default: the GPU suite's, "
                                         "tests/gpu_builds.jsonl; FUSED_BUILD_LOG=FILE records a job's list)")
    pp.add_argument("list", nargs="?", default=None, help="a build list, one JSON entry a line")
    pp.add_argument("--jobs", type=int, default=None, help="processes at once (default: the CPU count)")
    pt = sub.add_parser("try", help="a new variant in one go: check over the battery, bench beside ModelNew's "
                                    "fused kernel and eager, A/B against that kernel (exit 1 if check fails)")
    pt.add_argument("variant")
    pt.add_argument("--reps", type=int, default=200, help="timed calls (bench) and A/B pairs")
    pt.add_argument("--dtype", default=None, choices=list(DTYPES), help="I/O dtype (default: the variant's first)")
    return p


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if a.cmd == "list":
        for n in variants():
            v = variant_info(n)
            print(f"{v.rung:02d}  {n:<22} {v.device:<5} {v.accuracy:<7} {','.join(v.dtypes):<28} "
                  f"{v.path.relative_to(ROOT) if v.path.is_relative_to(ROOT) else v.path}")
        return 0
    names = getattr(a, "variant", None) or variants(device)
    if a.cmd == "check":
        ok_all = True
        shapes = [_shape_from(a)] if a.shape_only else None
        dts = [a.dtype] if a.shape_only or a.dtype != "float32" else None
        for n in names:
            table, ok = check(n, shapes=shapes, dtypes=dts, trials=a.trials,
                              defines=defines_over_tuned(n, a.define) if a.define else None)
            ok_all &= ok
            with pd.option_context("display.width", 200, "display.max_rows", 500):
                print(f"== {n}{''.join(' ' + d for d in a.define)}: {'PASS' if ok else 'FAIL'}")
                print(table.to_string(index=False))
        return 0 if ok_all else 1
    if a.cmd == "bench":
        # every variant in each dtype it takes (a named variant: the dtype given, or its first)
        if a.variant:
            runs = [(a.dtype if a.dtype in variant_info(n).dtypes else variant_info(n).dtypes[0], [n])
                    for n in a.variant]
        else:
            dts = [a.dtype] if a.dtype != "float32" else list(DTYPES)
            runs = [(dt, [n for n in variants(device) if dt in variant_info(n).dtypes]) for dt in dts]
        bad = []
        for dt, ns in runs:
            if not ns:
                continue
            table = bench(ns, _shape_from(a), dt, reps=a.reps, baselines=() if a.no_baselines else None,
                          log=not a.no_log)
            cols = ["variant", "median_us", "p10_us", "p90_us", "rel_err", "max_diff_eager", "gbps", "x_floor",
                    "speedup_vs_eager"]
            with pd.option_context("display.width", 200, "display.float_format", "{:.4g}".format):
                print(f"{table['device_name'].iloc[0]}  torch {table['torch'].iloc[0]}  shape {_shape_from(a)} "
                      f"{dt}  floor {table['floor_us'].iloc[0]:.2f} us")
                print(table[cols].to_string(index=False))
            bad += [r.variant for r in table.itertuples() if r.variant not in BASELINES
                    and not r.rel_err <= tolerance(r.variant, dt)]
        if bad:
            print(f"accuracy out of bounds: {bad}", file=sys.stderr)
        return 1 if bad else 0
    if a.cmd == "ab":
        r = ab(a.a, a.b, _shape_from(a), a.dtype, reps=a.reps, log=not a.no_log)
        print(f"{r['a']}: {r['median_a_us']:.2f} us   {r['b']}: {r['median_b_us']:.2f} us   "
              f"ratio A/B {r['ratio']:.4f}  95% CI [{r['ci_low']:.4f}, {r['ci_high']:.4f}]  -> A is {r['verdict']}; "
              + ("outputs bit for bit equal" if r["same_bits"] else f"outputs differ, max |A - B| {r['max_diff_ab']:.3g}"
                 if r["compared"] else "outputs not compared (the clone's output is x; a FUSED_ABLATE build's is not y)"))
        return 0
    if a.cmd == "export":
        print(export_modelnew(a.variant, a.output))
        return 0
    if a.cmd == "sweep":
        grid = {k: v.split(",") for k, v in (p_.split("=", 1) for p_ in a.param)}
        t = sweep(a.variant, grid, _shape_from(a), reps=a.reps, save_best=not a.no_save, dtype=a.dtype)
        with pd.option_context("display.width", 200, "display.max_colwidth", 80):
            print(t.to_string(index=False))
        return 0 if (t.status == "ok").any() else 1
    if a.cmd == "shape-sweep":
        grid = [(s_, dt) for s_, dt in shape_grid() if (not a.C or s_["C_in"] in a.C) and (not a.dtype or dt in a.dtype)]
        t = shape_sweep(grid, reps=a.reps)
        cols = [c for c in ("variant", "route", "B", "C_in", "T", "K", "dilation", "dtype", "median_us",
                            "speedup_vs_eager", "max_diff_eager") if c in t]
        with pd.option_context("display.width", 200, "display.max_rows", 1000, "display.float_format", "{:.4g}".format):
            print(t[t.variant == "modelnew"][cols].to_string(index=False))
        plot_shape_sweep(path=ROOT / "results" / "shape_sweep.png")
        return 0
    if a.cmd == "try":
        v = variant_info(a.variant)
        dt = a.dtype or v.dtypes[0]
        table, ok = check(a.variant, dtypes=[dt])
        with pd.option_context("display.width", 200, "display.max_rows", 500):
            print(f"== check {a.variant} ({dt}): {'PASS' if ok else 'FAIL'}")
            print(table[table.status != "pass"].to_string(index=False) if not ok else
                  f"{(table.status == 'pass').sum()} shapes pass, {table.status.str.startswith('unsupported').sum()} "
                  f"refused (ModelNew routes those elsewhere); max |diff to eager| {table.max_diff_eager.max():.2e}")
        if not ok:
            return 1
        best = (DEFAULT_VARIANT if dt == "float32" else FUSED_16BIT) if v.device == "cuda" else "cpu"
        others = [best] if best != a.variant and dt in variant_info(best).dtypes else []
        t = bench([a.variant] + others, dtype=dt, reps=a.reps, device=v.device,
                  baselines=("eager",) if v.device == "cpu" else ("eager", "clone"))
        with pd.option_context("display.width", 200, "display.float_format", "{:.4g}".format):
            print(t[["variant", "median_us", "p10_us", "p90_us", "rel_err", "max_diff_eager", "speedup_vs_eager"]]
                  .to_string(index=False))
        r = ab(a.variant, others[0] if others else "eager", dtype=dt, reps=a.reps)
        print(f"A/B {r['a']} / {r['b']}: {r['ratio']:.4f}  95% CI [{r['ci_low']:.4f}, {r['ci_high']:.4f}]  -> "
              f"{r['a']} is {r['verdict']}")
        return 0
    if a.cmd == "prebuild":
        path = a.list or GPU_SUITE_BUILDS
        t0, results = time.time(), prebuild(read_build_list(path), a.jobs)
        for entry, err in results:
            print(f"{'built' if not err else 'FAILED'} {json.dumps(entry, sort_keys=True)}{': ' + err if err else ''}")
        print(f"{len(results)} builds of {path} in {time.time() - t0:.0f} s, {sum(bool(e) for _, e in results)} failed")
        return 1 if any(err for _, err in results) else 0
    if a.cmd == "report":
        t = report()
        print(t.to_string(index=False) if not t.empty else "no GPU bench rows at the headline shape yet")
        return 0
    return 2
