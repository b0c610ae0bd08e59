import os
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
HAS_GPU = torch.cuda.is_available()


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """Without a GPU (CI: 2 cores) most of the run is nvcc and g++ builds of one core each, so where pytest-xdist is
    installed (requirements.txt) and no -n was given, the tests run on one worker per core, each taking the next test
    as it finishes (--dist worksteal); builds stay safe in parallel (fusedkit.jit builds each extension under a file
    lock). With a GPU the tests stay in one process, so no timing test shares the card; -n 0 turns it off anywhere.
    (Runs before xdist's own hook of this name, which reads the option.)"""
    opt = config.option
    if getattr(opt, "numprocesses", 0) is None and not HAS_GPU and (os.cpu_count() or 1) > 1 \
            and not hasattr(config, "workerinput") and not opt.collectonly:
        opt.numprocesses = "auto"
        opt.dist = "worksteal"


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU (skipped, with the reason shown, where none is visible)")


def pytest_collection_modifyitems(config, items):
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="GPU test: no CUDA GPU visible on this machine (run on the H200: pytest -m gpu)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _private_results(tmp_path, monkeypatch):
    """No test writes to the committed results/timings.csv."""
    import fusedkit.config
    monkeypatch.setattr(fusedkit.config, "RESULTS_CSV", tmp_path / "timings.csv")
    monkeypatch.setenv("FUSED_RESULTS", str(tmp_path / "timings.csv"))
