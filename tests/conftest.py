import os
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
HAS_GPU = torch.cuda.is_available()


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
