"""Helpers the lesson notebooks (notebooks/NN_topic.ipynb) share: kernel headers and source excerpts, check
summaries, A/B lines, a strict-fp32 context.

Every notebook's setup cell imports them (``from fusedkit.notebook import ...``) after putting the repository
root on sys.path. They were pasted into each notebook before; the behaviour is unchanged. fused_jit and torch
are imported inside the functions, so importing this module costs nothing.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

__all__ = ["src_path", "header", "prediction", "show_source", "check_summary", "tf32_off", "show_ab"]


def src_path(name: str) -> Path:
    """A variant name (e.g. 'naive') or a file in kernels/ (e.g. 'common.cuh') -> its path."""
    import fused_jit as fj
    return fj.KERNELS_DIR / name if "." in name else fj.variant_info(name).path


def header(name: str) -> str:
    """The leading // comment block of a kernel file: the idea, the prediction, the ptxas summary."""
    lines = src_path(name).read_text().splitlines()
    out = []
    for ln in lines:
        if not ln.startswith("//"):
            break
        out.append(ln)
    return "\n".join(out)


def prediction(name: str) -> str:
    """The 'Predicted ...' lines of a kernel's header (up to 'Measured'), or the whole header."""
    lines = header(name).splitlines()
    start = next((i for i, ln in enumerate(lines) if "Predicted" in ln), None)
    if start is None:
        return "\n".join(lines)
    end = next((i for i in range(start + 1, len(lines)) if "Measured" in lines[i]), len(lines))
    return "\n".join(lines[start:end])


def show_source(name: str, start: str, end: str, after: int = 0) -> None:
    """Print a kernel file from the first line containing `start` to the next containing `end`
    (plus `after` more lines), with line numbers: found by marker, so edits elsewhere do not shift it.

    Raises ValueError when a marker is missing (tests/test_notebooks.py checks every call's markers)."""
    path = src_path(name)
    lines = path.read_text().splitlines()
    i = next((n for n, ln in enumerate(lines) if start in ln), None)
    if i is None:
        raise ValueError(f"marker {start!r} not found in {path.name}")
    j = next((n for n in range(i + 1, len(lines)) if end in lines[n]), None)
    if j is None:
        raise ValueError(f"marker {end!r} not found after line {i + 1} of {path.name}")
    j = min(j + after, len(lines) - 1)
    print(f"--- {path.name}, lines {i + 1}-{j + 1} ---")
    for n in range(i, j + 1):
        print(f"{n + 1:4d}  {lines[n]}")


def check_summary(name: str, table, ok: bool | None = None) -> None:
    """One line per checked variant: pass/fail over the battery, worst error, the bound.

    `table` is a correctness table of fused_jit (columns status, rel_err, tolerance); rows whose status
    starts with 'unsupported' are counted as refused. With `ok` None (a part of a table, e.g. one dtype),
    PASS means every shape run passed."""
    ran = table[~table["status"].str.startswith("unsupported")]
    if ok is None:
        ok = len(ran) > 0 and bool((ran["status"] == "pass").all())
    print(f"{name:>22}: {'PASS' if ok else 'FAIL'}  {len(ran)} shapes run, "
          f"{len(table) - len(ran)} refused (ModelNew routes those elsewhere), "
          f"worst rel. err {ran['rel_err'].max():.2e} (bound {table['tolerance'].iloc[0]:g})")


@contextlib.contextmanager
def tf32_off():
    """cuDNN and matmul TF32 off (an fp32 reference that is really fp32), restored afterwards."""
    import torch
    old = torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32
    torch.backends.cudnn.allow_tf32 = torch.backends.cuda.matmul.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = old


def show_ab(r: dict) -> None:
    """One line for an A/B result of fj.ab: both medians, the ratio t_a/t_b with its 95% interval, the verdict."""
    print(f"{r['a']} vs {r['b']}: {r['median_a_us']:.2f} us vs {r['median_b_us']:.2f} us; "
          f"ratio t_a/t_b = {r['ratio']:.3f} [95% CI {r['ci_low']:.3f}, {r['ci_high']:.3f}] -> {r['a']} is {r['verdict']}")
