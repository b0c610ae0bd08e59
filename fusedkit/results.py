"""results/timings.csv: an append-only log (one row per timed call set), written atomically under a lock; what
every row records about where it ran."""
from __future__ import annotations

import contextlib
import csv
import io
import os
import platform
import re
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from filelock import FileLock

from . import config
from .config import ROOT


def environment(device: str) -> dict:
    """What every results row records about where it ran."""
    if device == "cuda":
        hw = torch.cuda.get_device_name()
    else:
        hw = platform.processor() or platform.machine()
        with contextlib.suppress(OSError):
            m = re.search(r"model name\s*:\s*(.+)", Path("/proc/cpuinfo").read_text())
            hw = m.group(1).strip() if m else hw
        hw = f"CPU {hw} x{os.cpu_count()}"
    return {"device_name": hw, "torch": torch.__version__, "cuda": torch.version.cuda or "none",
            "commit": git_commit()}


def git_commit() -> str:
    """HEAD's short hash (+'-dirty' if tracked files differ); $FUSED_COMMIT where there is no git."""
    if os.environ.get("FUSED_COMMIT"):
        return os.environ["FUSED_COMMIT"]
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def shape_cols(shape: dict) -> dict:
    return {k: shape[k] for k in ("B", "C_in", "C_out", "T", "K", "dilation", "bias")}


def result_row(kind: str, env: dict, variant: str, shape: dict, dtype: str, times_us=None, **fields) -> dict:
    """One row of the log, the only place its common columns are put together: when (UTC), what kind of
    measurement, where it ran (`environment`), what ran (variant, shape, dtype) and, given the per-call times in
    microseconds, median / p10 / p90 / n. Anything else (rel_err, source_hash, note, ...) comes as a keyword."""
    import datetime as _dt
    row = {"timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "kind": kind, **env,
           "variant": variant, **shape_cols(shape), "dtype": dtype}
    if times_us is not None:
        t = np.asarray(times_us, dtype=float)
        row.update(median_us=float(np.median(t)), p10_us=float(np.percentile(t, 10)),
                   p90_us=float(np.percentile(t, 90)), n=int(t.size))
    row.update(fields)
    return row


def append_results(rows: list[dict], path: Path | None = None) -> Path:
    """Append rows to the CSV log. Under a file lock, the kept rows plus the new ones are written to a
    temporary file that replaces the log in one rename: an interrupted or concurrent writer never leaves
    a broken file. A damaged (partial) last line from elsewhere is dropped, the rows before it are kept."""
    path = Path(path or config.RESULTS_CSV)
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        header, old = read_rows(path)
        fields = header + [k for r in rows for k in r if k not in header]
        fields = list(dict.fromkeys(fields))
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore", restval="")
            w.writeheader()
            w.writerows(old)
            w.writerows(rows)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    return path


def read_rows(path: Path) -> tuple[list[str], list[dict]]:
    if not path.is_file() or path.stat().st_size == 0:
        return [], []
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):  # a partial last line: drop it, keep the rest
        warnings.warn(f"{path}: dropping a damaged last line: {lines[-1][:80]!r}")
        lines = lines[:-1]
    reader = csv.reader(io.StringIO("".join(lines)))
    header = next(reader, [])
    rows = []
    for rec in reader:
        if len(rec) == len(header):
            rows.append(dict(zip(header, rec)))
        else:
            warnings.warn(f"{path}: skipping a malformed row ({len(rec)} fields, expected {len(header)})")
    return header, rows


def read_results(path: Path | None = None) -> pd.DataFrame:
    """The results log as a DataFrame (numbers parsed)."""
    header, rows = read_rows(Path(path or config.RESULTS_CSV))
    df = pd.DataFrame(rows, columns=header)
    text_cols = {"timestamp", "kind", "device_name", "torch", "cuda", "commit", "variant", "source_hash", "defines",
                 "dtype", "note"}  # a hash like 991860679022 must stay text
    for col in df.columns:
        if col in text_cols:
            continue
        if col == "bias" or col == "l2_flushed":
            df[col] = df[col].map({"True": True, "False": False}).fillna(df[col])
            continue
        with contextlib.suppress(ValueError, TypeError):
            num = df[col].map(lambda v: float(v) if v != "" else np.nan).astype(float)
            df[col] = num.astype("int64") if num.notna().all() and (num % 1 == 0).all() else num
    return df


def _run_ids(df: pd.DataFrame) -> pd.Series:
    """Which bench call each row came from: its 'run' column, or, for rows logged before that column
    existed, consecutive rows of one commit, shape and dtype until a variant repeats."""
    ids, current, seen, key_prev = [], 0, set(), None
    has_run = "run" in df.columns
    for r in df.itertuples():
        if has_run and isinstance(r.run, str) and r.run:
            ids.append(r.run)
            continue
        key = (r.commit, r.dtype, r.B, r.C_in, r.C_out, r.T, r.K, r.dilation)
        if key != key_prev or r.variant in seen:
            current, seen = current + 1, set()
        seen.add(r.variant)
        key_prev = key
        ids.append(f"legacy-{current}")
    return pd.Series(ids, index=df.index)
