"""The copy-paste KernelBench ModelNew: structure (KernelBench's static rules), self-containment, and that it
compiles (here without a GPU; on the H200 tests/test_gpu.py evaluates it the way KernelBench does)."""
import ast
import importlib.util
import re
import shutil
import subprocess
import sys

import pytest

import fused_jit as fj


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    return fj.export_modelnew(None, tmp_path_factory.mktemp("export") / "modelnew_export.py")


def test_structure_follows_kernelbench_rules(exported):
    text = exported.read_text()
    tree = ast.parse(text)
    assert fj.DEFAULT_EXPORT_VARIANT in text and "__global__" in text and "load_inline(" in text
    assert not any(isinstance(n, (ast.Try, ast.Pass)) for n in ast.walk(tree))
    assert not re.search(r"\btry\s*:|\bexcept\b|\bpass\b", text)  # KernelBench's text rules, kernel source too
    imports = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imports |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert imports == {"torch"}  # nothing from this repository
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelNew")
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    assert [a.arg for a in init.args.args] == ["self", "in_channels", "out_channels", "kernel_size", "dilation", "bias"]


def test_export_serves_its_kernels_accuracy_class_and_routes_the_rest(tmp_path):
    """The fused kernel serves inputs of its class (tf32: float32 with TF32 on; strict: off; bf16: 16-bit), the
    general path (dw_silu + PyTorch's 1x1 conv, kernels/general.cpp) the rest; gradients on: each extension's
    forward_train (one C++ autograd node); an sm_90a kernel is built only on such a GPU."""
    text = fj.export_modelnew(None, tmp_path / "d.py").read_text()
    assert "x.dtype == torch.float32 and torch.backends.cudnn.allow_tf32" in text
    assert "at::conv1d(dw_silu(x, w_dw, b_dw, dilation, padding), w_pw, b_pw)" in text
    assert "ext.forward_train(" in text and "dwsep::DwSepFunction<FusedForward>::apply" in text
    assert "torch.cuda.get_device_capability() == (9, 0)" in text
    strict = fj.export_modelnew("wgmma_3xtf32", tmp_path / "s.py").read_text()
    assert "x.dtype == torch.float32 and not torch.backends.cudnn.allow_tf32" in strict
    assert "x.dtype in (torch.bfloat16, torch.float16)" in fj.export_modelnew("wgmma_bf16", tmp_path / "b.py").read_text()
    with pytest.raises(ValueError, match="CUDA variants"):
        fj.export_modelnew("cpu", tmp_path / "c.py")


def test_export_names_the_build_arch_a_kernel_needs(tmp_path):
    """Rung 09 (wgmma, sm_90a only) exports with its -gencode flag, so torch adds no sm_90 target it cannot
    build for; the other rungs leave the arch to torch (the visible GPU)."""
    text = fj.export_modelnew("wgmma_tf32", tmp_path / "w.py").read_text()
    assert '"-gencode=arch=compute_90a,code=sm_90a"' in text
    assert "-gencode" not in fj.export_modelnew("3xtf32_mma", tmp_path / "s.py").read_text()


def test_exported_file_compiles_alone(exported, tmp_path):
    """Import the file from a folder with nothing of this repository: load_inline builds both extensions (the
    fused one as on an H200: the GPU check is answered as there, since this machine may have no GPU)."""
    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(exported, alone / "modelnew_export.py")
    code = ("import torch; torch.cuda.is_available = lambda: True; "
            "torch.cuda.get_device_capability = lambda *a: (9, 0); "
            "import modelnew_export as m; net = m.ModelNew(*[16, 24, 5, 2]); "
            "assert [k for k in net.state_dict()] == ['dw.weight', 'dw.bias', 'pw.weight', 'pw.bias']; "
            "print('compiled', m.fused.__name__, m.general.__name__)")
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"}
    env["TORCH_EXTENSIONS_DIR"] = str(tmp_path / "ext")
    env["TORCH_CUDA_ARCH_LIST"] = env.get("TORCH_CUDA_ARCH_LIST", "9.0")
    if fj.CUDA_HOME:
        env["CUDA_HOME"] = fj.CUDA_HOME
    r = subprocess.run([sys.executable, "-c", code], cwd=alone, env=env, capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0 and "compiled" in r.stdout, r.stdout[-2000:] + r.stderr[-4000:]


def test_exported_file_runs_on_cpu_through_pytorch(exported):
    """Without a GPU the file still imports (the fused kernel is not built) and a CPU input gets PyTorch's answer,
    gradients included."""
    import torch
    spec = importlib.util.spec_from_file_location("modelnew_cpu_check", exported)
    code = exported.read_text().replace("general = load_inline(", "general = None and load_inline(")
    mod = importlib.util.module_from_spec(spec)
    exec(compile(code, str(exported), "exec"), mod.__dict__)
    torch.manual_seed(0)
    ref = fj.Model(8, 8, 5, 2)
    new = mod.ModelNew(8, 8, 5, 2)
    new.load_state_dict(ref.state_dict())
    x = torch.randn(2, 8, 40, requires_grad=True)
    y = new(x)
    torch.testing.assert_close(y, ref(x))
    y.sum().backward()
    assert x.grad is not None and new.dw.weight.grad is not None
