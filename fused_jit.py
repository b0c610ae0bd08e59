"""fused_jit: write, check and time a fused CUDA kernel for y = pw(silu(dw(x))) from Python or a notebook.

dw is a depthwise dilated Conv1d (groups = C_in, 'same' padding (K-1)*d//2, bias), pw a 1x1 Conv1d.
Kernels live in kernels/NN_name.cu (one file per rung of the ladder, plus a C++ CPU variant); `load`
compiles one on first use with torch.utils.cpp_extension.load_inline and caches it across processes.

    import fused_jit as fj
    fj.variants()                       # the ladder, in order
    table, ok = fj.check("naive")       # float64 reference, NaN-poisoned outputs, a battery of shapes
    fj.bench(["naive"])                 # CUDA events, L2 flushed, baselines in the same run, logged
    model = fj.ModelNew(128, 128, 5, dilation=2).cuda()   # eager's numbers, any shape, faster

This file is the entry point (`import fused_jit as fj`, `python fused_jit.py <command>`); the code lives in the
package fusedkit/, one module per job. Run `python fused_jit.py --help` for the command line.
"""
import sys

from fusedkit import *  # noqa: F401,F403  (the public API: fusedkit/__init__.py lists it)
from fusedkit import config as _config
from fusedkit import jit as _jit
from fusedkit.cli import main


def __getattr__(name):
    """Paths that tests and scripts may redirect (read from fusedkit.config at call time) and the CUDA toolkit
    (looked up on first use, not at import)."""
    if name in ("KERNELS_DIR", "RESULTS_CSV", "TUNED_JSON"):
        return getattr(_config, name)
    if name == "CUDA_HOME":
        return _jit.cuda_home()
    raise AttributeError(f"module 'fused_jit' has no attribute {name!r}")


if __name__ == "__main__":
    sys.exit(main())
