"""results/timings.csv: atomic, locked appends that survive damage and concurrency."""
import importlib
import multiprocessing as mp

import fused_jit as fj
import fusedkit


def _rows(n, tag):
    return [{"kind": "test", "variant": f"{tag}{i}", "median_us": float(i)} for i in range(n)]


def test_append_and_read(tmp_path):
    p = tmp_path / "t.csv"
    fj.append_results(_rows(3, "a"), p)
    fj.append_results([{"kind": "test", "variant": "b", "median_us": 1.5, "new_col": "x"}], p)
    df = fj.read_results(p)
    assert list(df["variant"]) == ["a0", "a1", "a2", "b"] and "new_col" in df.columns
    assert df["median_us"].dtype.kind == "f"


def test_damaged_last_line_keeps_the_rows_before_it(tmp_path):
    p = tmp_path / "t.csv"
    fj.append_results(_rows(5, "a"), p)
    with open(p, "a") as f:
        f.write("2026-01-01,bench,half a line")  # an interrupted writer elsewhere, no newline
    fj.append_results(_rows(1, "z"), p)
    df = fj.read_results(p)
    assert list(df["variant"]) == ["a0", "a1", "a2", "a3", "a4", "z0"]
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind


def _writer(path, tag):
    for i in range(10):
        fj.append_results(_rows(2, f"{tag}-{i}-"), path)


def test_concurrent_appends_lose_nothing(tmp_path):
    p = tmp_path / "t.csv"
    procs = [mp.get_context("spawn").Process(target=_writer, args=(p, t)) for t in "abcd"]
    for pr in procs:
        pr.start()
    for pr in procs:
        pr.join(120)
        assert pr.exitcode == 0
    df = fj.read_results(p)
    assert len(df) == 4 * 10 * 2 and df["variant"].is_unique


def test_ladder_table_shows_the_tuned_build(tmp_path, monkeypatch):
    gpu, head = "NVIDIA H200", {k: str(v) for k, v in fj.shape_cols(fj.HEADLINE).items()}
    def row(ts, variant, defines, us):
        return {"timestamp": ts, "kind": "bench", "run": ts, "device_name": gpu, "variant": variant,
                "defines": defines, **head, "dtype": "float32", "median_us": us, "floor_us": 7.9, "torch": "2.11",
                "cuda": "13.0", "commit": "abc1234", "n": 200, "p10_us": us, "p90_us": us, "rel_err": 1e-4}
    p = tmp_path / "t.csv"
    fj.append_results([row("2026-01-01T00:00:00", "eager", "", 80.0), row("2026-01-01T00:00:00", "wgmma_tf32", "A=1", 20.0),
                       row("2026-01-02T00:00:00", "eager", "", 81.0), row("2026-01-02T00:00:00", "wgmma_tf32", "A=2", 19.0),
                       row("2026-01-02T00:00:00", "naive", "", 3000.0)], p)
    tuned = tmp_path / "tuned.json"
    tuned.write_text('{"NVIDIA H200": {"wgmma_tf32": {"A": "1"}}}')
    monkeypatch.setattr(fusedkit.config, "TUNED_JSON", tuned)
    t = fj.ladder_table(fj.read_results(p)).set_index("variant")
    assert t.loc["wgmma_tf32", "median_us"] == 20.0 and t.loc["wgmma_tf32", "speedup_vs_eager"] == 4.0
    assert t.loc["eager", "median_us"] == 81.0 and t.loc["naive", "median_us"] == 3000.0
    tuned.write_text('{"NVIDIA H200": {"wgmma_tf32": {"A": "3"}}}')  # no row built as tuned: the latest
    t = fj.ladder_table(fj.read_results(p))
    assert t.set_index("variant").loc["wgmma_tf32", "median_us"] == 19.0
    lines = importlib.import_module("fusedkit.report")._table_lines(t, short=True)  # ... and the table says it is an earlier parameter set's
    assert any(ln.startswith("| 09 | wgmma_tf32 \\* |") for ln in lines) and lines[-1].startswith("\\* wgmma_tf32:")
    assert not any("naive \\*" in ln for ln in lines)


def test_trace_timeline_draws_from_a_recorded_csv(tmp_path):
    import subprocess
    import sys
    root = fj.ROOT
    traces = root / "results" / "traces"
    # rung 09 (one bar per block), its warp-specialized build (producers / consumers), rung 12 (per warpgroup)
    for name, extra in (("trace_wgmma_tf32_06f96e4", []), ("trace_wgmma_tf32_ws_06f96e4", []),
                        ("trace_wgmma_rs_tf32_1c17acf", ["--warpgroups", "2"])):
        png = tmp_path / (name + ".png")
        subprocess.run([sys.executable, str(root / "scripts" / "trace_case.py"), "--from-csv", str(traces / f"{name}.csv"),
                        "--plot", str(png), *extra], check=True, capture_output=True, timeout=120)
        assert png.stat().st_size > 10_000


def test_ablation_picture_draws_from_the_logged_runs(tmp_path):
    """scripts/plot_ablation.py reads scripts/ablate.py's logged lines (the default logs are committed) and draws
    them; a log without a full-kernel line is refused by name."""
    import subprocess
    import sys
    script = fj.ROOT / "scripts" / "plot_ablation.py"
    png = tmp_path / "a.png"
    subprocess.run([sys.executable, str(script), "--out", str(png)], check=True, capture_output=True, timeout=120)
    assert png.stat().st_size > 10_000
    bad = tmp_path / "x_deadbee_bad.log"
    bad.write_text("mask  1 without depthwise                        median    17.70 us  (p10 17.09, p90 18.44)\n")
    r = subprocess.run([sys.executable, str(script), "--out", str(png), str(bad)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode != 0 and "no 'mask 0 full kernel' line" in (r.stdout + r.stderr)
