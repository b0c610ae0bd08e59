"""The JIT: every kernel compiles through load (also without a GPU), edits rebuild, the cache is fast in a
new process, compiler errors name kernels/ file:line, and a build killed mid-way does not wedge the next."""
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch

import fused_jit as fj

ROOT = Path(fj.__file__).parent


def _py(code: str, env: dict | None = None, timeout: int = 900, **kw):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env={**os.environ, **(env or {})},
                          capture_output=True, text=True, timeout=timeout, **kw)


@pytest.fixture
def kernels_copy(tmp_path, monkeypatch):
    """A private copy of kernels/ and a private build cache, so edits never touch the real ones."""
    kdir = tmp_path / "kernels"
    shutil.copytree(ROOT / "kernels", kdir)
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "ext"))
    return kdir


@pytest.mark.parametrize("variant", fj.variants())
def test_every_variant_compiles_through_load(variant):
    module = fj.load(variant)
    assert module.variant == variant
    assert callable(module.forward) and callable(module.why_unsupported)


def test_four_warpgroup_gemm_knob_compiles():
    """Rung 09 with WG_GEMM_WGS=4 (every warpgroup issues the GEMM at every shape, the form before the two-warpgroup
    GEMM became the default where C_out > 64) compiles here too; tests/test_gpu.py compares the forms' y."""
    module = fj.load("wgmma_tf32", fj.defines_over_tuned("wgmma_tf32", {"WG_GEMM_WGS": "4"}))
    assert callable(module.forward)


def test_smem_poisoner_compiles():
    """The kernel run_variant launches before each checked call to fill every SM's shared memory with NaN
    compiles here too (it runs only on a GPU)."""
    assert callable(fj.smem_poisoner().poison_smem)


def test_edit_rebuilds_and_header_edit_changes_the_key(kernels_copy):
    v = fj.variant_info("cpu", kernels_copy)
    name_before = fj.build_plan(v, None)[0]
    m1 = fj.load("cpu", kernels_dir=kernels_copy)
    x = torch.randn(1, 4, 16)
    model = fj.Model(4, 4, 3)
    y1 = m1.forward(x, *fj.forward_args(model))
    # a header the kernel includes changes the key (checked without building)
    (kernels_copy / "fused_args.h").write_text((kernels_copy / "fused_args.h").read_text() + "\n// edited\n")
    assert fj.build_plan(v, None)[0] != name_before
    # an edit of the kernel itself rebuilds, in this same process, and the new code runs
    src = kernels_copy / "00_cpu.cpp"
    src.write_text(src.read_text().replace("std::copy(out.begin(), out.begin() + n,",
                                           "for (auto& o : out) o *= 2.0f;\n        std::copy(out.begin(), out.begin() + n,"))
    m2 = fj.load("cpu", kernels_dir=kernels_copy)
    assert m2 is not m1
    torch.testing.assert_close(m2.forward(x, *fj.forward_args(model)), 2 * y1)


def test_cache_hit_in_a_new_process_is_fast():
    fj.load("cpu")  # built (or cached) by this process
    r = _py("""
        import time, fused_jit
        t = time.perf_counter(); fused_jit.load("cpu"); print(time.perf_counter() - t)
    """)
    assert r.returncode == 0, r.stderr
    assert float(r.stdout.strip().splitlines()[-1]) < 1.0


def test_compile_error_names_the_kernel_file_and_line(kernels_copy):
    src = kernels_copy / "01_naive.cu"
    lines = src.read_text().splitlines()
    i = next(i for i, ln in enumerate(lines) if "y[idx] = acc;" in ln)
    lines[i] = lines[i].replace("y[idx] = acc;", "y[idx] = acc")  # a missing semicolon
    src.write_text("\n".join(lines) + "\n")
    t0 = time.time()
    with pytest.raises(fj.KernelBuildError) as err:
        fj.load("naive", kernels_dir=kernels_copy)
    first = str(err.value).split("--- full build log ---")[0]
    assert f"01_naive.cu({i + 2})" in first or f"01_naive.cu:{i + 2}" in first, first
    assert "error" in first and time.time() - t0 < 600
    with pytest.raises(fj.KernelBuildError):  # and again: no stale module is handed out
        fj.load("naive", kernels_dir=kernels_copy)


def test_build_log_with_bytes_that_are_not_utf8_still_names_the_error(tmp_path, monkeypatch):
    """torch decodes the compilers' output as UTF-8; a byte that is not (a CI run met one) used to surface as a bare
    UnicodeDecodeError. The error names the file and line, and a log that points at torch's PCH gets one plain
    build more."""
    import fusedkit.jit as jit
    calls = []

    class FakeTorchExt:
        @staticmethod
        def load_inline(name, build_directory, verbose, use_pch, **kw):
            calls.append(use_pch)
            out = b"[2/3] nvcc ...\n/k/01_naive.cu(17): error: expected a \";\"\n\xff\xfe garbage from a PCH\n"
            try:
                raise subprocess.CalledProcessError(1, ["ninja", "-v"], output=out)
            except subprocess.CalledProcessError as e:
                e.output.decode()  # what torch does: UnicodeDecodeError, this error as its context

    monkeypatch.setattr(jit, "_cpp_extension", lambda: FakeTorchExt)
    monkeypatch.setattr(jit, "_pch_ready", lambda kwargs, root: True)
    with pytest.raises(fj.KernelBuildError) as err:
        jit._build("fused_fake", "-", {}, tmp_path, False)
    first = str(err.value).split("--- full build log ---")[0]
    assert "01_naive.cu(17): error" in first, first
    assert calls == [True, False]  # undecodable bytes: the PCH is suspect, so once more without it
    assert not (tmp_path / "fused_fake").exists()  # nothing half-built is handed out


def test_build_killed_midway_does_not_wedge_the_next_load(kernels_copy, tmp_path):
    env = {"TORCH_EXTENSIONS_DIR": str(tmp_path / "ext")}
    code = f"import fused_jit; fused_jit.load('cpu', kernels_dir={str(kernels_copy)!r}); print('built')"
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env={**os.environ, **env},
                            start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    locks = []
    while time.time() < deadline and not locks:
        locks = list((tmp_path / "ext").glob("*.building/lock"))  # torch's lock: the compiler is running
        time.sleep(0.2)
    assert locks, "the build never started"
    time.sleep(2)
    os.killpg(proc.pid, signal.SIGKILL)  # the builder and its compilers, mid-build
    proc.wait(30)
    assert locks[0].exists()  # the stale lock torch would wait on forever
    r = _py(code, env=env, timeout=600)
    assert r.returncode == 0 and "built" in r.stdout, r.stdout + r.stderr


def test_launcher_errors_are_clear():
    ext = fj.load("cpu")
    model = fj.Model(8, 4, 3)
    args = fj.forward_args(model)
    with pytest.raises(RuntimeError, match="x has 6 channels but the depthwise weight has 8"):
        ext.forward(torch.randn(2, 6, 10), *args)
    with pytest.raises(RuntimeError, match=r"x must be 3-D"):
        ext.forward(torch.randn(8, 10), *args)
    with pytest.raises(RuntimeError, match="float32 input only"):
        ext.forward(torch.randn(2, 8, 10, dtype=torch.bfloat16), *args)
    with pytest.raises(RuntimeError, match="too short"):
        ext.forward(torch.randn(1, 8, 1), model.dw.weight, None, model.pw.weight, None, 5, 0)
    with pytest.raises(RuntimeError, match="out must be"):
        ext.forward(torch.randn(2, 8, 10), *args, out=torch.empty(2, 4, 9))
    # non-contiguous input is made contiguous: the right answer, not an error
    x = torch.randn(2, 10, 8).transpose(1, 2)
    torch.testing.assert_close(ext.forward(x, *args), model(x).detach(), rtol=1e-5, atol=1e-5)


def test_trace_build_exports_its_record_layout():
    """A FUSED_TRACE=1 build of a wgmma rung tells readers its record's layout (scripts/trace_case.py reads it
    instead of copying wgmma.cuh's constants): values per block, first per-tile slot, tiles, phases per tile."""
    ext = fj.load("wgmma_tf32", {**fj.tuned_defines("wgmma_tf32"), "FUSED_TRACE": "1"})
    slots, tile0, tiles, phases = ext.trace_layout()
    assert (tiles, phases) == (8, 8) and tile0 + tiles * phases <= slots


def test_precompiled_header_only_for_the_kernels_folders_shared_flags(monkeypatch, tmp_path):
    """The PCH serves one set of flags: builds with other flags or an -I list, and FUSED_PCH=0, go without it (a
    second set of flags would rebuild torch's PCH in place under the other builds)."""
    from fusedkit import jit
    monkeypatch.setattr(jit, "_pch_state", {"ok": True})
    own = {"extra_cflags": list(jit.HOST_CFLAGS)}  # the kernels folder travels in CPATH, not as -I
    assert jit._pch_ready(own, tmp_path)
    assert not jit._pch_ready({**own, "extra_cflags": ["-O2"]}, tmp_path)
    assert not jit._pch_ready({**own, "extra_include_paths": [str(tmp_path)]}, tmp_path)
    monkeypatch.setenv("FUSED_PCH", "0")
    assert not jit._pch_ready(own, tmp_path)


def test_builds_in_threads_keep_their_own_compiler_environment(monkeypatch, tmp_path):
    """A build sets CPATH and TORCH_CUDA_ARCH_LIST for the process while it runs: two threads building at once must
    not see each other's (a device run's threaded prebuild lost a build to it). load_inline stands in here for the
    compiler and records the environment at its start and its end; build a ends while build b would be running,
    where the two could overlap."""
    import threading
    from fusedkit import jit

    seen, a_started, b_started = {}, threading.Event(), threading.Event()

    class FakeExt:
        @staticmethod
        def load_inline(name, build_directory, **kw):
            first = (os.environ.get("CPATH"), os.environ.get("TORCH_CUDA_ARCH_LIST"))
            if name == "a":
                a_started.set()
                b_started.wait(1.0)  # overlapping builds: b is inside its build now; taking turns: it never gets in
            else:
                b_started.set()
                time.sleep(0.5)  # a ends meanwhile, where the builds overlap
            seen[name] = (first, (os.environ.get("CPATH"), os.environ.get("TORCH_CUDA_ARCH_LIST")))
            Path(build_directory, f"{name}.so").write_text("")

    monkeypatch.setattr(jit, "_cpp_extension", lambda: FakeExt)
    monkeypatch.setattr(jit, "_pch_ready", lambda kwargs, root: False)

    def build(name, arch):
        jit._build(name, arch, {"extra_include_paths": [f"/inc/{name}"]}, tmp_path, False)

    a = threading.Thread(target=build, args=("a", "9.0a"))
    a.start()
    a_started.wait(5)
    b = threading.Thread(target=build, args=("b", "8.0"))
    b.start()
    a.join(10)
    b.join(10)
    for name, arch in (("a", "9.0a"), ("b", "8.0")):
        for cpath, arch_list in seen[name]:
            assert (cpath or "").split(os.pathsep)[0] == f"/inc/{name}" and arch_list == arch, (name, seen)
    assert (tmp_path / "a" / "a.so").is_file() and (tmp_path / "b" / "b.so").is_file()


def test_silu_exhaustive_checker_compiles():
    """The exhaustive check of common.cuh's guarded SiLU builds here too (it runs on the GPU: test_gpu.py), also with
    FUSED_TF32_RNA=1 (the tf32 side rounding ties away)."""
    assert fj.silu_exhaustive(run=False) == ""
    assert fj.silu_exhaustive(run=False, rna=True) == ""


def test_backward_build_spec_takes_a_kernels_copy_or_knobs_and_names_both_forms_otherwise():
    """The A/B scripts' builds (scripts/backward_ab.py, scripts/pw_dgrad_ab.py): LABEL=KERNELS_DIR (a copy holding
    general.cpp) or LABEL:NAME=VALUE,... (the tree's kernels with knobs); anything else is refused by name."""
    assert fj.backward_build_spec("late:PWDG_TMA_LATE=2,PWDG_STAGES=2") == \
        ("late", None, {"PWDG_TMA_LATE": "2", "PWDG_STAGES": "2"})
    label, kdir, defines = fj.backward_build_spec(f"prev={ROOT / 'kernels'}")
    assert (label, kdir, defines) == ("prev", ROOT / "kernels", {})
    for bad in ["late", "late:PWDG_TMA_LATE", "late:=2", "late:2X=1", "prev=/no/such/kernels", ":A=1"]:
        with pytest.raises(ValueError, match="expected LABEL=KERNELS_DIR .* or LABEL:NAME=VALUE"):
            fj.backward_build_spec(bad)


def test_backward_builds_of_a_variant_carry_the_knob_into_its_launcher_and_backward(monkeypatch):
    """backward_builds(specs, "wgmma_wide") (scripts/backward_ab.py --variant: ModelNew's own training step per knob)
    builds the variant with the knob defined ahead of its C++ launcher (the backward's host code) and of its CUDA
    sources (the forward's kernel and the backward's), under a name of its own. load_built is stubbed: nothing
    compiles."""
    from fusedkit import jit
    seen = {}
    monkeypatch.setattr(jit, "load_built", lambda name, arch, kwargs, verbose=False: seen.setdefault(name, kwargs)
                        and name)
    name, defines = fj.backward_builds(["trig:PWDG_EARLY_TRIGGER=1"], "wgmma_wide")["trig"]
    plain = fj.load("wgmma_wide")
    assert defines == {"PWDG_EARLY_TRIGGER": "1"} and name != plain and name.startswith("fused_wgmma_wide_")
    src, cpp = seen[name]["cuda_sources"][0], seen[name]["cpp_sources"][0]
    assert src.index("#define PWDG_EARLY_TRIGGER 1") < src.index("pw_data_grad_wgmma.cu")
    assert "#define PWDG_EARLY_TRIGGER 1\n" in cpp
    assert "PWDG_EARLY_TRIGGER 1" not in seen[plain]["cuda_sources"][0] + seen[plain]["cpp_sources"][0]


def test_general_kernel_knobs_are_defined_ahead_of_the_cuda_sources_in_a_build_of_their_own(monkeypatch):
    """general_kernel(defines=...) puts each knob in the CUDA translation unit before the backward's kernels, and in
    the C++ one (the backward's host code reads knobs too), and names the build apart from the default's (so an A/B
    never loads the other build); without knobs the name and sources are the default build's. load_built is
    stubbed: nothing compiles."""
    from fusedkit import jit
    seen = {}
    monkeypatch.setattr(jit, "load_built", lambda name, arch, kwargs: seen.setdefault(name, kwargs) and name)
    jit._general_kernel.cache_clear()
    try:
        plain = fj.general_kernel()
        knob = fj.general_kernel(defines={"PWDG_TMA_LATE": 1})
        assert fj.general_kernel(ROOT / "kernels") == plain  # the same kernels/, however named
    finally:
        jit._general_kernel.cache_clear()
    assert plain != knob and plain.startswith("fused_general_") and knob.startswith("fused_general_")
    src = seen[knob]["cuda_sources"]
    assert "#define PWDG_TMA_LATE 1\n" in src
    assert src.index("#define PWDG_TMA_LATE 1") < src.index("pw_data_grad_wgmma.cu")
    assert "#define PWDG_TMA_LATE 1\n" in seen[knob]["cpp_sources"]
    assert "PWDG_TMA_LATE 1" not in seen[plain]["cuda_sources"] + seen[plain]["cpp_sources"]


def test_fast_div_equals_integer_division(tmp_path):
    """kernels/fast_div.cuh (wgmma.cuh's tile index -> batch row) against `/`, run on the host: every divisor up to
    4096 with the edge numerators and a spread of others below 2^31, and large divisors, powers of two among them."""
    from fusedkit.jit import cuda_home
    home = cuda_home()
    if home is None:
        pytest.skip("no CUDA toolkit (nvcc) found")
    src = tmp_path / "fast_div_check.cu"
    src.write_text(textwrap.dedent("""
        #include <cstdio>
        #include "fast_div.cuh"
        int main() {
          long long checked = 0, bad = 0;
          auto check = [&](uint32_t n, uint32_t d, const FastDiv& f) {
            ++checked;
            if (fast_div(n, f) != n / d && bad++ < 5) std::printf("n %u d %u: %u, not %u\\n", n, d, fast_div(n, f), n / d);
          };
          for (uint32_t d = 1; d <= 4096; ++d) {
            const FastDiv f = fast_div_make(d);
            for (uint32_t n = 0; n < 3 * d + 3; ++n) check(n, d, f);
            for (uint32_t n = 0x7fffffffu; n > 0x7fffffffu - 3 * d - 3; --n) check(n, d, f);
            for (uint64_t n = d; n < 0x80000000u; n = n * 3 + 7) { check(uint32_t(n - 1), d, f); check(uint32_t(n), d, f); }
          }
          for (uint64_t d = 4097; d < 0x80000000u; d = d * 5 / 4 + 1)
            for (uint64_t dd : {d, uint64_t(1) << (63 - __builtin_clzll(d))}) {
              const FastDiv f = fast_div_make(uint32_t(dd));
              for (uint64_t n = 0; n < 0x80000000u; n = n * 2 + 1) { check(uint32_t(n), uint32_t(dd), f); }
              for (uint64_t k = 1; k * dd < 0x80000000u; k = k * 2 + 1) {
                check(uint32_t(k * dd - 1), uint32_t(dd), f); check(uint32_t(k * dd), uint32_t(dd), f);
              }
              check(0x7fffffffu, uint32_t(dd), f);
            }
          std::printf("checked %lld, wrong %lld\\n", checked, bad);
          return bad != 0;
        }
    """))
    exe = tmp_path / "fast_div_check"
    build = subprocess.run([str(Path(home) / "bin" / "nvcc"), "-O2", "-std=c++17", "-I", str(ROOT / "kernels"),
                            str(src), "-o", str(exe)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "wrong 0" in run.stdout, run.stdout[-2000:]


def test_x_fetch_probe_compiles_and_refuses_bad_arguments(tmp_path):
    """scripts/x_fetch_probe.cu (h200.sh's fetch_probe stage) builds for sm_90a with the command its header gives, and
    refuses a bad element size, a method past the skeletons (4) and a negative busy count with its usage line before
    touching a GPU."""
    from fusedkit.jit import cuda_home
    home = cuda_home()
    if home is None:
        pytest.skip("no CUDA toolkit (nvcc) found")
    exe = tmp_path / "x_fetch_probe"
    build = subprocess.run([str(Path(home) / "bin" / "nvcc"), "-std=c++17", "-O3", "-gencode=arch=compute_90a,code=sm_90a",
                            "-I", str(ROOT / "kernels"), str(ROOT / "scripts" / "x_fetch_probe.cu"), "-o", str(exe)],
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-2000:]
    for bad in (["3"], "4 16 128 2048 64 50 5".split(), "4 16 128 2048 64 50 4 0 -1".split()):
        run = subprocess.run([str(exe), *bad], capture_output=True, text=True, timeout=60)
        assert run.returncode == 1 and "usage: x_fetch_probe" in run.stderr, (bad, run.returncode, run.stderr[-500:])


def test_pw_wgrad_sweep_compiles(tmp_path):
    """scripts/pw_wgrad_sweep.cu (backward rung 6's forms against a read of the same bytes) builds with the command its
    header gives, against today's kernels/pw_weight_grad.cu: until 2026-12-06 nothing built it, and it had stopped
    compiling (a grid helper renamed in 7f31029, a TMA form's functions it now needs)."""
    from fusedkit.jit import cuda_home
    home = cuda_home()
    if home is None:
        pytest.skip("no CUDA toolkit (nvcc) found")
    src = ROOT / "scripts" / "pw_wgrad_sweep.cu"
    cmd = re.search(r"^//   (nvcc .*)$", src.read_text(), re.M).group(1).split()
    assert cmd[-2:] == ["-o", "/tmp/pw_sweep"], cmd
    build = subprocess.run([str(Path(home) / "bin" / "nvcc"), *cmd[1:-1], str(tmp_path / "pw_sweep")], cwd=ROOT,
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-2000:]


def _h200_plan(var: str, env: str) -> list[list[str]]:
    """A default plan of scripts/h200.sh, `VAR=${ENV:-"..."}`, as its lines' words ("SPEC [ab args]")."""
    plan = re.search(rf'\b{var}=\$\{{{env}:-"([^"]*)"\}}', (fj.ROOT / "scripts" / "h200.sh").read_text())
    assert plan, f"h200.sh's default {env}"
    return [ln.split() for ln in plan.group(1).split(";") if ln.strip()]


def _kernel_sources(suffixes=(".cu", ".cuh")) -> str:
    """Every kernel source of these suffixes, joined: what `_reads_knob` searches."""
    return "".join(p.read_text() for p in fj.KERNELS_DIR.iterdir() if p.suffix in suffixes)


def _reads_knob(sources: str, name: str) -> bool:
    """Whether a kernel source reads the compile-time knob `name` (`#ifndef NAME`, `#if NAME`, `defined(NAME)`)."""
    return re.search(rf"#if(?:ndef)? {name}\b|defined\({name}\)", sources) is not None


def test_h200_knob_plan_names_knobs_the_kernels_define():
    """scripts/h200.sh's `knobs` stage: its default plan parses (each line a variant spec and `ab`'s shape arguments),
    and every knob it sets is one its variant's sources read, so a renamed knob fails here, not on the GPU."""
    assert subprocess.run(["bash", "-n", str(fj.ROOT / "scripts" / "h200.sh")]).returncode == 0
    lines = _h200_plan("plan", "KNOB_PLAN")
    assert len(lines) >= 5
    from fusedkit.cli import parser
    sources = _kernel_sources()
    for spec, *args in lines:
        variant, defines = fj.variant_spec(spec)
        knobs = spec.partition(":")[2].split(",")
        assert knobs != [""], f"{spec}: a knob build"
        for name in (k.partition("=")[0] for k in knobs):
            assert _reads_knob(sources, name), f"{spec}: no kernel source reads {name}"
        a = parser().parse_args(["ab", variant, spec, *args])
        assert (a.a, a.b) == (variant, spec) and defines is not None


def test_h200_targets_plan_times_each_class_against_the_clone():
    """scripts/h200.sh's `targets` stage (issue 17's ratios, a kernel against x.clone() in one run): every line of its
    default plan parses as `ab SPEC clone [args]`, names a variant, a knob build or ModelNew, and the three classes of
    the issue are there (TF32, strict, bf16 with bf16 I/O), each of TF32 and bf16 beside its skeleton (FUSED_ABLATE=3:
    the ratio no faster compute can go under)."""
    from fusedkit.cli import parser
    names, skeletons = set(), set()
    for spec, *args in _h200_plan("tplan", "TARGET_PLAN"):
        variant, defines = fj.variant_spec(spec)
        assert variant == "modelnew" or variant in fj.variants(), spec
        a = parser().parse_args(["ab", spec, "clone", *args])
        names.add((variant, a.dtype))
        if defines and str(defines.get("FUSED_ABLATE")) == "3":
            skeletons.add(a.dtype)
    assert {("wgmma_tf32", "float32"), ("wgmma_3xtf32", "float32"), ("wgmma_bf16", "bfloat16")} <= names
    assert skeletons == {"float32", "bfloat16"}


def test_h200_pairs_plan_names_two_builds_a_line():
    """scripts/h200.sh's `pairs` stage (two builds of any variants against each other): every line of its default plan
    parses as `ab SPEC_A SPEC_B [args]`, each spec names a variant or a knob build of one, and every knob it sets is one
    the kernel sources read."""
    from fusedkit.cli import parser
    sources = _kernel_sources()
    lines = _h200_plan("pplan", "PAIR_PLAN")
    assert lines
    for spec_a, spec_b, *args in lines:
        for spec in (spec_a, spec_b):
            variant, _ = fj.variant_spec(spec)
            assert variant in fj.variants(), spec
            for name in (k.partition("=")[0] for k in spec.partition(":")[2].split(",") if k):
                assert _reads_knob(sources, name), f"{spec}: no kernel source reads {name}"
        a = parser().parse_args(["ab", spec_a, spec_b, *args])
        assert (a.a, a.b) == (spec_a, spec_b)


def test_h200_trace_plan_names_variants_and_knobs_they_read():
    """scripts/h200.sh's `traces` stage: every line of its default plan is "VARIANT [NAME=VALUE ...] [--dtype DTYPE]
    [--flush read]", a variant with a FUSED_TRACE build (rungs 09-12), knobs its sources read, a dtype it takes and a
    flush scripts/trace_case.py knows."""
    sources = _kernel_sources()
    lines = _h200_plan("trplan", "TRACE_PLAN")
    assert lines
    for variant, *rest in lines:
        assert variant in fj.variants() and fj.variant_info(variant).rung in (9, 10, 11, 12), variant
        dtype = rest[rest.index("--dtype") + 1] if "--dtype" in rest else "float32"
        assert dtype in fj.variant_info(variant).dtypes, (variant, dtype)
        assert "--flush" not in rest or rest[rest.index("--flush") + 1] in ("write", "read"), (variant, rest)
        for knob in (w for w in rest if "=" in w):
            name = knob.partition("=")[0]
            assert _reads_knob(sources, name), f"{variant}: no kernel source reads {name}"
        fj.defines_over_tuned(variant, [w for w in rest if "=" in w])


def test_sass_diff_sees_a_knob_and_nothing_else():
    """scripts/sass_diff.py (the check that a change leaves the timed kernels' machine code alone): the working tree
    against HEAD's kernels with a knob at its default is identical (exit 0); with the knob changed, the kernel differs
    (exit 1); with the changed value given to both builds (--both), identical again. Every build of rung 02 goes through
    nvcc and cuobjdump (no GPU)."""
    script = fj.ROOT / "scripts" / "sass_diff.py"
    if subprocess.run(["git", "-C", str(fj.ROOT), "rev-parse", "HEAD"], capture_output=True).returncode != 0:
        pytest.skip("not a git checkout")
    same = subprocess.run([sys.executable, str(script), "HEAD", "--files", "02_smem_tiled", "--define", "THREADS=256"],
                          capture_output=True, text=True)
    changed = subprocess.run([sys.executable, str(script), "HEAD", "--files", "02_smem_tiled", "--define", "THREADS=128"],
                             capture_output=True, text=True)
    # --both reaches the revision's build too: at THREADS=128 on both sides the kernel is the same again
    both = subprocess.run([sys.executable, str(script), "HEAD", "--files", "02_smem_tiled", "--both", "THREADS=128"],
                          capture_output=True, text=True)
    assert same.returncode == 0 and "identical" in same.stdout, same.stdout + same.stderr
    assert changed.returncode == 1 and " differ" in changed.stdout, changed.stdout + changed.stderr
    assert both.returncode == 0 and "identical" in both.stdout, both.stdout + both.stderr


def test_build_log_records_each_build_once(tmp_path, monkeypatch):
    """FUSED_BUILD_LOG: load() and general_kernel() write each build they are asked for, once a process, as a build
    list entry (the variant's tuned set as knobs over it, other defines whole); nothing is compiled here (load_built
    stubbed)."""
    import fusedkit.jit as J
    log = tmp_path / "builds.jsonl"
    monkeypatch.setenv("FUSED_BUILD_LOG", str(log))
    monkeypatch.setattr(J, "_recorded", set())
    monkeypatch.setattr(J, "load_built", lambda name, arch, kwargs, verbose=False: name)
    monkeypatch.setattr(J, "_general_kernel", lambda kdir, defines: "general")
    monkeypatch.setattr(J, "tuned_defines", lambda v: {"TILE_T": "64", "WG_WS": "1"} if v == "wgmma_bf16" else {})
    J.load("naive")
    J.load("naive")
    J.load("wgmma_bf16", J.defines_over_tuned("wgmma_bf16", {"WG_X_SLOTS": 4}))
    J.load("wgmma_bf16", {"TILE_T": "128"})                  # without the tuned set: a build of these defines alone
    J.general_kernel(defines={"PWDG_TMA_LATE": 2})
    J.load("naive", kernels_dir=fj.KERNELS_DIR)               # another copy of kernels/: not the tree's, not recorded
    assert fj.read_build_list(log) == [
        {"knobs": {}, "variant": "naive"}, {"knobs": {"WG_X_SLOTS": "4"}, "variant": "wgmma_bf16"},
        {"defines": {"TILE_T": "128"}, "variant": "wgmma_bf16"}, {"defines": {"PWDG_TMA_LATE": "2"}, "variant": "general"}]
    assert len(log.read_text().splitlines()) == 4


def test_read_build_list_dedupes_and_names_a_bad_line(tmp_path):
    p = tmp_path / "b.jsonl"
    p.write_text('{"variant": "naive", "knobs": {}}\n\n{"knobs": {}, "variant": "naive"}\n{"variant": "naive", "knobs": {"A": 1}}\n')
    with pytest.raises(ValueError, match=r"b.jsonl:4: expected a build entry"):
        fj.read_build_list(p)
    p.write_text('{"variant": "naive", "knobs": {}}\n{"knobs": {}, "variant": "naive"}\n')
    assert fj.read_build_list(p) == [{"variant": "naive", "knobs": {}}]
    assert fj.prebuild([]) == []
    assert fj.build_one({"variant": "no_such_rung", "knobs": {}}).startswith("ValueError: unknown variant 'no_such_rung'")
    p.write_text('{"variant": "no_such_rung", "knobs": {}}\n')
    r = subprocess.run([sys.executable, str(fj.ROOT / "fused_jit.py"), "prebuild", str(p)], capture_output=True, text=True)
    assert r.returncode == 1 and "FAILED" in r.stdout and "1 failed" in r.stdout, r.stdout + r.stderr


def test_gpu_suite_build_list_names_variants_and_knobs():
    """tests/gpu_builds.jsonl (what scripts/h200.sh's test stage builds in parallel before the GPU suite): every entry
    names a variant or the general path, and every knob in it is one a kernel source reads or tests/test_gpu.py names
    (FUSED_AA, the A/A test's unused define): a list gone stale fails here, not as an hour of builds on the GPU."""
    entries = fj.read_build_list(fj.GPU_SUITE_BUILDS)
    assert len(entries) >= 20
    sources = _kernel_sources((".cu", ".cuh", ".cpp", ".h"))
    tests = (fj.ROOT / "tests" / "test_gpu.py").read_text()
    for e in entries:
        assert e["variant"] == "general" or e["variant"] in fj.variants(), e
        for name in e.get("knobs", e.get("defines")):
            assert _reads_knob(sources, name) or name in tests, (e, name)
