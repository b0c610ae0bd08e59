"""The whole path on the CPU variant: check, bench + results log, ModelNew, ab, CLI exit codes."""
import subprocess
import sys

import pytest
import torch

import fused_jit as fj
import fusedkit

SMALL = dict(B=2, C_in=16, C_out=24, T=203, K=5, dilation=2, bias=True)


def test_check_cpu_variant_passes_the_battery():
    table, ok = fj.check("cpu", trials=1)
    assert ok, table[table.status != "pass"]
    assert len(table) == len(fj.shape_battery()) and (table.rel_err <= 1e-6).all()


def test_check_fails_a_wrong_kernel(tmp_path, monkeypatch):
    """check must be able to fail: a kernel that leaves the last time step unwritten (NaN poison) fails."""
    import shutil
    kdir = tmp_path / "kernels"
    shutil.copytree(fj.ROOT / "kernels", kdir)
    src = kdir / "00_cpu.cpp"
    src.write_text(src.read_text().replace("std::copy(out.begin(), out.begin() + n,",
                                           "std::copy(out.begin(), out.begin() + (n > 1 ? n - 1 : n),"))
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(tmp_path / "ext"))
    monkeypatch.setattr(fusedkit.config, "KERNELS_DIR", kdir)
    table, ok = fj.check("cpu", shapes=[SMALL], trials=1)
    assert not ok and table.status.iloc[0] == "FAIL"


def test_bench_cpu_logs_rows(tmp_path):
    t = fj.bench(["cpu"], SMALL, reps=5)
    assert list(t.variant) == ["eager", "cpu"]
    assert (t.median_us > 0).all() and (t.p10_us <= t.median_us).all() and (t.median_us <= t.p90_us).all()
    log = fj.read_results()
    assert len(log) == 2 and set(log.source_hash.dropna().astype(str)) >= {fj.source_hash("cpu")}
    for col in ("device_name", "torch", "cuda", "commit", "dtype", "rel_err", "median_us", "p10_us", "p90_us"):
        assert col in log.columns


def test_modelnew_cpu_matches_model_and_routes():
    torch.manual_seed(3)
    ref = fj.Model(16, 24, 4, dilation=3, bias=False)
    torch.manual_seed(3)
    new = fj.ModelNew(16, 24, 4, dilation=3, bias=False)
    x = torch.randn(2, 16, 101)
    assert new.route(x).name == "cpu" and new.route(x).reason == ""
    with torch.no_grad():
        torch.testing.assert_close(new(x), ref(x), rtol=1e-5, atol=1e-5)
    # a CUDA variant forced on CPU input, and a dtype no CPU kernel takes: PyTorch's own ops, its numbers
    forced = fj.ModelNew(16, 24, 4, dilation=3, bias=False, variant="naive")
    forced.load_state_dict(ref.state_dict())
    assert forced.route(x).name == fj.EAGER and "runs on cuda" in forced.route(x).reason
    xb = x.to(torch.bfloat16)
    with torch.no_grad(), pytest.warns(UserWarning, match="no fused kernel for torch.bfloat16"):
        yb = new.to(torch.bfloat16)(xb)
    assert yb.dtype == torch.bfloat16 and torch.equal(yb, ref.to(torch.bfloat16)(xb))


def test_ab_cpu():
    r = fj.ab("cpu", "eager", SMALL, reps=8)
    assert r["verdict"] in ("faster", "slower", "within noise") and r["ci_low"] <= r["ratio"] <= r["ci_high"]
    assert not r["same_bits"] or r["max_diff_ab"] == 0
    # eager with and without TF32 are the same computation on the CPU: ab says the outputs are bit for bit equal
    same = fj.ab("eager", "eager_fp32", SMALL, reps=4, log=False)
    assert same["same_bits"] and same["max_diff_ab"] == 0


def test_interleaved_timing_primes_each_call_only_when_asked():
    """ab times A and B in turn with each call primed (run once, untimed, just before: its code then sits in the
    instruction caches as in bench); a single function is not primed unless asked."""
    calls = {"a": 0, "b": 0}
    fa, fb = (lambda: calls.__setitem__("a", calls["a"] + 1)), (lambda: calls.__setitem__("b", calls["b"] + 1))
    out = fj.Timer("cpu").time_interleaved([fa, fb], reps=5, warmup=2)
    assert out.shape == (5, 2) and calls == {"a": 2 + 2 * 5, "b": 2 + 2 * 5}
    calls.update(a=0, b=0)
    fj.Timer("cpu").time(fa, reps=5, warmup=2)
    assert calls["a"] == 2 + 5


def test_timer_flush_kind_is_write_or_read():
    """bench's flush writes the buffer; scripts/flush_kinds.py also times with a reading flush. Anything else is an
    error naming the two."""
    assert fj.Timer("cpu", flush="read").time(lambda: None, reps=3, warmup=1).shape == (3,)
    with pytest.raises(ValueError, match="'write' or 'read'"):
        fj.Timer("cpu", flush="clean")


def test_ab_variant_spec_carries_parameters():
    assert fj.variant_spec("cpu") == ("cpu", None)
    name, defs = fj.variant_spec("wgmma_tf32:WG_WS=1,TILE_T=32")
    assert name == "wgmma_tf32" and defs["WG_WS"] == "1" and defs["TILE_T"] == "32"
    with pytest.raises(ValueError, match="name:NAME=VALUE"):
        fj.variant_spec("wgmma_tf32:WG_WS")
    with pytest.raises(ValueError, match="no compile-time parameters"):
        fj.variant_spec("eager:X=1")
    with pytest.raises(ValueError, match="the same"):
        fj.ab("cpu", "cpu", SMALL, reps=2)


def test_cli_exit_codes(tmp_path):
    env_results = {"FUSED_RESULTS": str(tmp_path / "cli.csv")}
    import os
    run = lambda *a: subprocess.run([sys.executable, "fused_jit.py", *a], cwd=fj.ROOT, capture_output=True,
                                    text=True, env={**os.environ, **env_results}, timeout=600)
    r = run("list")
    assert r.returncode == 0 and "naive" in r.stdout
    r = run("check", "--variant", "cpu", "--shape-only", "--B", "1", "--T", "50", "--C-in", "8", "--C-out", "8")
    assert r.returncode == 0 and "PASS" in r.stdout, r.stdout + r.stderr
    r = run("bench", "--variant", "cpu", "--reps", "3", "--B", "1", "--T", "64")
    assert r.returncode == 0 and "cpu" in r.stdout, r.stdout + r.stderr
    assert len(fj.read_results(tmp_path / "cli.csv")) == 2
    r = run("bench", "--reps", "3", "--B", "1", "--T", "64")  # the README's command: every variant, each dtype
    assert r.returncode == 0 and "cpu" in r.stdout, r.stdout + r.stderr
    r = run("try", "cpu", "--reps", "3")  # check over the battery, bench beside eager, A/B: one command
    assert r.returncode == 0 and "PASS" in r.stdout and "A/B cpu / eager" in r.stdout, r.stdout + r.stderr
    for cmd in ("check", "bench", "ab", "export", "list", "report", "shape-sweep", "try"):
        assert run(cmd, "--help").returncode == 0


def test_shape_sweep_and_plots_cpu(tmp_path):
    grid = [(dict(B=b, C_in=8, C_out=8, T=t, K=5, dilation=2, bias=True), "float32") for b in (1, 2) for t in (64, 200)]
    t = fj.shape_sweep(grid, reps=3)
    assert set(t.variant) == {"modelnew", "eager"} and len(t) == 8 and (t.kind == "shape_sweep").all()
    assert set(t[t.variant == "modelnew"].route) == {"cpu"} and (t.speedup_vs_eager > 0).all()
    log = fj.read_results()
    assert (log.kind == "shape_sweep").sum() == 8
    fig = fj.plot_shape_sweep(log, path=tmp_path / "sweep.png")
    assert (tmp_path / "sweep.png").stat().st_size > 0 and fig.axes[0].get_yscale() == "log"
    assert len(fig.axes[0].collections) == 1  # one route x dtype group of points
    fj.plot_ladder(log, path=tmp_path / "ladder.png")  # no GPU rows: a labelled empty plot, no error
    assert (tmp_path / "ladder.png").is_file()


def test_shape_sweep_plot_takes_each_dtypes_latest_run():
    """A sweep may re-run one dtype, or some shapes of it: the picture shows each dtype's latest whole run, with the
    shapes a later run measured again taken from that run."""
    import pandas as pd
    row = dict(kind="shape_sweep", variant="modelnew", device_name="GPU", route="general")
    df = pd.DataFrame([dict(row, commit="a", dtype="float32", C_in=c, speedup_vs_eager=1.5) for c in (32, 64)]
                      + [dict(row, commit="a", dtype="bfloat16", C_in=c, speedup_vs_eager=0.5) for c in (32, 64, 128)]
                      + [dict(row, commit="b", dtype="bfloat16", C_in=c, speedup_vs_eager=2.0) for c in (32, 64)])
    ax = fj.plot_shape_sweep(df).axes[0]
    ys = sorted(float(y) for c in ax.collections for y in c.get_offsets()[:, 1])
    assert ys == [0.5, 1.5, 1.5, 2.0, 2.0], ys  # bfloat16 at C 32, 64 from run b, at 128 from run a
    assert "bfloat16 at a + b" in ax.get_title() and "float32 at a," in ax.get_title()
    whole = pd.DataFrame([dict(row, commit="c", dtype="bfloat16", C_in=c, speedup_vs_eager=3.0) for c in (32, 64, 128)])
    ax = fj.plot_shape_sweep(pd.concat([df, whole])).axes[0]  # a later whole run replaces both
    ys = sorted(float(y) for c in ax.collections for y in c.get_offsets()[:, 1])
    assert ys == [1.5, 1.5, 3.0, 3.0, 3.0], ys


def test_shape_grid_covers_the_contract():
    g = fj.shape_grid()
    assert {s["C_in"] for s, _ in g} == {32, 64, 128, 192, 256, 512, 1024}
    assert {s["T"] for s, _ in g} >= {100, 2047, 2048, 16384} and {s["B"] for s, _ in g} == {1, 16, 64}
    assert {s["K"] for s, _ in g} == {3, 5, 9} and {s["dilation"] for s, _ in g} == {1, 2, 4}
    assert {dt for _, dt in g} == {"float32", "bfloat16"}
    assert all({s["C_in"] for s, dt in g if dt == "bfloat16"} == {s["C_in"] for s, _ in g} for _ in [0])


def test_tile_sweep_reports_a_broken_configuration_and_times_the_rest(monkeypatch):
    """Each configuration is the grid set over the variant's tuned parameters (here a stand-in tuned set)."""
    monkeypatch.setattr(fusedkit.sweeps, "tuned_defines", lambda v: {"CPU_TILE_T": "32", "FUSED_TUNED_MARK": "7"})
    t = fj.sweep("cpu", {"CPU_TILE_T": ["128", "not_a_number"]}, SMALL, reps=3, jobs=2)
    assert list(t.status.iloc[:1]) == ["ok"] and t.median_us.iloc[0] > 0
    assert t.defines.iloc[0] == "CPU_TILE_T=128;FUSED_TUNED_MARK=7" and list(t.CPU_TILE_T) == ["128", "not_a_number"]
    assert t.status.iloc[1].startswith("build failed") and "not_a_number" in t.status.iloc[1]
    assert (fj.read_results().kind == "sweep").sum() == 1


def test_deterministic_algorithms_switch_is_scoped():
    """fj.deterministic_algorithms() (what turns ModelNew's default backward from atomic sums to its fixed-order finish)
    sets torch.use_deterministic_algorithms(True, warn_only=True) inside the block only, also when the block raises."""
    was = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(False)
    try:
        with fj.deterministic_algorithms():
            assert torch.are_deterministic_algorithms_enabled()
            assert torch.is_deterministic_algorithms_warn_only_enabled()
        assert not torch.are_deterministic_algorithms_enabled()
        with pytest.raises(ValueError):
            with fj.deterministic_algorithms():
                raise ValueError("inside")
        assert not torch.are_deterministic_algorithms_enabled()
    finally:
        torch.use_deterministic_algorithms(was[0], warn_only=was[1])
