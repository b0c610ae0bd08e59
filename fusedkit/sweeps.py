"""Sweeps: a variant's compile-time parameters (`sweep`), and ModelNew against eager over the contract's grid
of shapes (`shape_sweep`)."""
from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd
import torch
from filelock import FileLock

from . import config
from .config import HEADLINE, DTYPES
from .jit import load, KernelBuildError, tuned_defines
from .check import check
from .timing import bench, copy_bandwidth, min_bytes, defines_str
from .results import append_results
from .routing import ModelNew


def build_quietly(variant: str, defines: dict) -> str:
    """Build one configuration (in a worker process); '' on success, else the first compiler error line."""
    try:
        load(variant, defines)
        return ""
    except KernelBuildError as e:
        return e.first_error()


SWEEP_CHECK_SHAPES = [HEADLINE, dict(B=3, C_in=64, C_out=64, T=1037, K=5, dilation=2, bias=True),
                      dict(B=2, C_in=96, C_out=200, T=513, K=4, dilation=3, bias=False),
                      dict(B=2, C_in=32, C_out=32, T=5, K=7, dilation=3, bias=True)]


def sweep(variant: str, grid: dict, shape: dict | None = None, reps: int = 100, jobs: int | None = None,
          log: bool = True, save_best: bool = True, dtype: str = "float32") -> pd.DataFrame:
    """Build every configuration of a variant's compile-time parameters (the product of `grid`, e.g.
    {"TILE_T": [32, 64], "WARPS_N": [2, 4]}), each set over the variant's tuned parameters, in parallel
    processes, check each on a few awkward shapes, time those that pass, log them (kind 'sweep') and, with
    save_best, record the fastest (tuned parameters included) in results/tuned.json so `load(variant)` uses
    it by default on this GPU. A configuration that does not
    compile or fails its check is reported in the table and skipped, not fatal."""
    import itertools
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing as mp
    from tqdm.auto import tqdm
    shape = dict(shape or HEADLINE)
    base = tuned_defines(variant)  # parameters the grid leaves alone keep their tuned values
    configs = [{**base, **dict(zip(grid, vals))} for vals in itertools.product(*grid.values())]
    jobs = jobs or max(1, min(len(configs), (os.cpu_count() or 2) // 2))
    with ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn")) as ex:
        futures = [ex.submit(build_quietly, variant, d) for d in configs]
        built = [f.result() for f in tqdm(futures, desc=f"building {variant}", leave=False)]
    rows = []
    bw = copy_bandwidth() if torch.cuda.is_available() else None  # the roof, measured once for the sweep
    for d, err in zip(tqdm(configs, desc=f"checking + timing {variant}", leave=False), built):
        row = {"variant": variant, "defines": defines_str(d), **{k: d[k] for k in grid}}
        if err:
            rows.append({**row, "status": "build failed: " + err})
            continue
        table, ok = check(variant, shapes=SWEEP_CHECK_SHAPES, trials=1, defines=d)
        if not ok:
            bad = table[~table.status.isin(["pass"]) & ~table.status.str.startswith("unsupported")]
            rows.append({**row, "status": f"check failed ({len(bad)} shapes)" if len(bad)
                         else "unsupported at every check shape (e.g. does not fit in shared memory)"})
            continue
        t = bench([variant], shape, dtype, reps=reps, baselines=(), log=False, defines=d, copy_bw=bw)
        t["kind"] = "sweep"
        if log:
            append_results(t.to_dict("records"))
        r = t.iloc[0]
        rows.append({**row, "status": "ok", "median_us": r.median_us, "p10_us": r.p10_us, "p90_us": r.p90_us,
                     "rel_err": r.rel_err})
    table = pd.DataFrame(rows)
    ok = table[table.status == "ok"] if "median_us" in table else table.iloc[0:0]
    if save_best and len(ok) and torch.cuda.is_available():
        import json
        best = configs[int(ok.median_us.idxmin())]
        with FileLock(str(config.TUNED_JSON) + ".lock"):
            data = json.loads(config.TUNED_JSON.read_text()) if config.TUNED_JSON.is_file() else {}
            data.setdefault(torch.cuda.get_device_name(), {})[variant] = best
            tmp = config.TUNED_JSON.with_name(f".{config.TUNED_JSON.name}.tmp")
            tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
            os.replace(tmp, config.TUNED_JSON)
    return table


def shape_grid() -> list[tuple[dict, str]]:
    """The contract's grid (shape, dtype): every C in {32, 64, 128, 192, 256, 512, 1024} (C_in = C_out) at
    T in {100, 2047, 2048, 16384} x B in {1, 16, 64} (K=5, d=2, float32); K in {3, 5, 9} x d in {1, 2, 4} at
    B=16, T=2048 per C; and bfloat16 at B=16 for every C and T. Trimmed from the full product for time."""
    Cs, Ts = (32, 64, 128, 192, 256, 512, 1024), (100, 2047, 2048, 16384)
    g = [(dict(B=b, C_in=c, C_out=c, T=t, K=5, dilation=2, bias=True), "float32")
         for c in Cs for t in Ts for b in (1, 16, 64)]
    g += [(dict(B=16, C_in=c, C_out=c, T=2048, K=k, dilation=d, bias=True), "float32")
          for c in Cs for k in (3, 5, 9) for d in (1, 2, 4) if (k, d) != (5, 2)]
    g += [(dict(B=16, C_in=c, C_out=c, T=t, K=5, dilation=2, bias=True), "bfloat16") for c in Cs for t in Ts]
    return g


def shape_sweep(grid: list | None = None, reps: int = 30, max_bytes: int = 2 * 2**30, log: bool = True,
                baselines: tuple = ("eager",)) -> pd.DataFrame:
    """ModelNew (its rule: `modelnew` rows, with the route it took) against eager at every point of `grid`
    (default shape_grid()), each point a `bench` call (same timer; eager timed in the same run), logged as
    kind 'shape_sweep'; points whose x + y exceed max_bytes are skipped. Plot with `plot_shape_sweep`."""
    from tqdm.auto import tqdm
    device = "cuda" if torch.cuda.is_available() else "cpu"
    grid = sorted(grid or shape_grid(), key=lambda p: min_bytes(p[0], p[1]))
    tables = []
    bw = copy_bandwidth(device) if device == "cuda" else None  # the roof, measured once for the sweep
    for shape, dt in tqdm(grid, desc="shape sweep", leave=False):
        if min_bytes(shape, dt) > max_bytes:
            continue
        # the route depends on the shape, dtype and switches, not on the values: an input drawn on the device
        # (bench draws its own case on the CPU generator, which at 1 GB takes seconds)
        new = ModelNew(shape["C_in"], shape["C_out"], shape["K"], shape["dilation"], shape["bias"]).to(device)
        x = torch.randn(shape["B"], shape["C_in"], shape["T"], device=device, dtype=DTYPES[dt])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            route = new.to(DTYPES[dt]).route(x)
        del x, new
        t = bench([], shape, dtype=dt, reps=reps, baselines=tuple(baselines) + ("modelnew",), device=device,
                  log=False, copy_bw=bw)
        t["kind"], t["bytes"] = "shape_sweep", min_bytes(shape, dt)
        t["route"] = np.where(t["variant"] == "modelnew", route.name, "")
        if log:
            append_results(t.to_dict("records"))
        tables.append(t)
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame()
