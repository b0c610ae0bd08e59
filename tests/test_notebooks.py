"""Execute every lesson notebook top to bottom (without a GPU the notebooks skip their GPU cells).

Each notebook is copied to a temporary file and run there with nbclient, in the notebooks/ folder as the
working directory; FUSED_RESULTS points at a temporary log, so the committed results/timings.csv is never
written. A cell that raises fails the test (nbclient's CellExecutionError carries the traceback).

Each notebook is paired (jupytext, notebooks/jupytext.toml) with a percent-format script NN_topic.py holding the
same cells; test_notebook_script_pair fails when one side was edited without the other.
"""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import jupytext  # required (requirements), as nbclient
import nbclient  # required (requirements): a missing package must fail here, not skip
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NB_DIR.glob("*.ipynb"))
COMMITTED_RESULTS = ROOT / "results" / "timings.csv"


def _digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def test_notebooks_exist():
    assert len(NOTEBOOKS) >= 6, f"expected the six lesson notebooks in {NB_DIR}, found {NOTEBOOKS}"


def _cells(nb) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(c.cell_type, c.source, tuple(c.metadata.get("tags", ()))) for c in nb.cells]


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_script_pair(nb_path: Path):
    """NN_topic.ipynb and its NN_topic.py have the same cells: kinds, sources and tags (the parameters cell) in
    order. An edit of one side only fails here; `jupytext --sync notebooks/*.ipynb` brings the other along."""
    script = nb_path.with_suffix(".py")
    assert script.is_file(), f"{nb_path.name} has no paired {script.name}: jupytext --sync {nb_path.relative_to(ROOT)}"
    a, b = _cells(jupytext.read(nb_path)), _cells(jupytext.read(script))
    diff = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    assert a == b, (f"{nb_path.name} ({len(a)} cells) and {script.name} ({len(b)} cells) differ from cell {diff} on: "
                    f"{a[diff:diff + 1]} vs {b[diff:diff + 1]}; run jupytext --sync {nb_path.relative_to(ROOT)}")


def test_no_orphan_scripts():
    """Every script in notebooks/ is a notebook's pair (a renamed or deleted notebook takes its .py along)."""
    orphans = [p.name for p in NB_DIR.glob("*.py") if not p.with_suffix(".ipynb").is_file()]
    assert not orphans, f"scripts in notebooks/ without their .ipynb: {orphans}"


def test_source_markers_exist():
    """The lessons print kernel source between marker lines (show_source); an edit to a kernel that drops a
    marker breaks a notebook. Checked here in a second, before the notebooks run."""
    import ast
    import fused_jit as fj
    calls = []
    for nb_path in NOTEBOOKS:
        for cell in nbformat.read(nb_path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            for node in ast.walk(ast.parse(cell.source)):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "show_source" \
                        and all(isinstance(a, ast.Constant) for a in node.args[:3]):
                    calls.append((nb_path.name, *(a.value for a in node.args[:3])))
    assert calls, "no show_source calls found"
    for nb_name, name, start, end in calls:
        path = fj.KERNELS_DIR / name if "." in name else fj.variant_info(name).path
        lines = path.read_text().splitlines()
        i = next((n for n, ln in enumerate(lines) if start in ln), None)
        assert i is not None, f"{nb_name}: marker {start!r} not in {path.name}"
        assert any(end in ln for ln in lines[i + 1:]), f"{nb_name}: marker {end!r} not after {start!r} in {path.name}"


@pytest.mark.parametrize("nb_path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(nb_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    original = nb_path.read_bytes()
    committed_log = _digest(COMMITTED_RESULTS)
    copy = tmp_path / nb_path.name
    shutil.copyfile(nb_path, copy)
    nb = nbformat.read(copy, as_version=4)

    # committed notebooks carry the real outputs of their H200 run (papermill): every code cell executed,
    # none of them an error; this test runs a copy and never rewrites them
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.get("execution_count") for c in code), f"{nb_path.name}: not executed top to bottom"
    assert not [o for c in code for o in c.outputs if o.output_type == "error"], f"{nb_path.name}: error cell"
    for cell in code:
        cell.outputs, cell.execution_count = [], None
    assert any("parameters" in c.metadata.get("tags", []) for c in nb.cells), \
        f"{nb_path.name}: no papermill parameters cell"

    monkeypatch.setenv("FUSED_RESULTS", str(tmp_path / "timings.csv"))
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the notebook's inline backend, as on the GPU machine
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(NB_DIR)}})
    client.execute()  # raises CellExecutionError on the first failing cell
    nbformat.write(nb, copy)  # the executed copy stays in tmp_path, for inspection

    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, errors
    assert nb_path.read_bytes() == original, "the committed notebook was modified"
    assert _digest(COMMITTED_RESULTS) == committed_log, "the committed results log was written"
