"""Builds made ahead, in parallel: a list of the builds a job will ask for (one JSON line each, as
fusedkit.jit.build_entry writes them where FUSED_BUILD_LOG is set), each built in a process of its own, so that a job
that asks for them one after another (the GPU suite: 45-65 s of nvcc a knob build) finds them in the cache."""
from __future__ import annotations

import json
import multiprocessing as mp
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from .config import ROOT
from .jit import KernelBuildError, defines_over_tuned, general_kernel
from .sweeps import build_quietly

GPU_SUITE_BUILDS = ROOT / "tests" / "gpu_builds.jsonl"


def read_build_list(path: str | Path) -> list[dict]:
    """The entries of a build list, each once, in file order. Raises ValueError naming the line that is not an entry
    ({"variant": NAME, "knobs": {...}} or {"variant": NAME, "defines": {...}}, values strings)."""
    entries, seen = [], set()
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            e = json.loads(line)
            params = e.get("knobs", e.get("defines")) if isinstance(e, dict) else None
            ok = (isinstance(e.get("variant"), str) and len(e) == 2 and isinstance(params, dict)
                  and all(isinstance(k, str) and isinstance(v, str) for k, v in params.items()))
        except (json.JSONDecodeError, AttributeError):
            ok = False
        if not ok:
            raise ValueError(f"{path}:{n}: expected a build entry, {{\"variant\": NAME, \"knobs\" or \"defines\": "
                             f"{{NAME: VALUE, ...}}}} with string values, got {line[:200]!r}")
        key = json.dumps(e, sort_keys=True)
        if key not in seen:
            seen.add(key)
            entries.append(e)
    return entries


def build_one(entry: dict) -> str:
    """Build one entry (in a worker process): '' on success, else why not (the compiler's first error line, or an
    unknown variant)."""
    name, params = entry["variant"], entry.get("knobs", entry.get("defines"))
    try:
        if name != "general":
            return build_quietly(name, defines_over_tuned(name, params) if "knobs" in entry else params)
        general_kernel(defines=params or None)
        return ""
    except KernelBuildError as e:  # the general path's (build_quietly returns a variant's)
        return e.first_error()
    except ValueError as e:  # a variant renamed or removed since the list was written
        return f"{type(e).__name__}: {e}"


def prebuild(entries: list[dict], jobs: int | None = None) -> list[tuple[dict, str]]:
    """Build every entry, `jobs` processes at a time (default: the CPU count): [(entry, '' or why it failed)]."""
    if not entries:
        return []
    with ProcessPoolExecutor(min(len(entries), jobs or os.cpu_count() or 1), mp_context=mp.get_context("spawn")) as ex:
        return list(zip(entries, ex.map(build_one, entries)))
