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


def test_ladder_table_marks_modelnew_with_its_kernel(tmp_path, monkeypatch):
    """ModelNew's row at a dtype is marked as an earlier parameter set's where the kernel it runs at that dtype has no
    row built as results/tuned.json gives it (rung 11 after its tuned set changed), and not where that kernel's row
    is as tuned; the footnote says which kernel that is."""
    gpu, head = "NVIDIA H200", {k: str(v) for k, v in fj.shape_cols(fj.HEADLINE).items()}
    def row(variant, dtype, defines, us):
        ts = "2026-01-01T00:00:00"
        return {"timestamp": ts, "kind": "bench", "run": ts, "device_name": gpu, "variant": variant, "defines": defines,
                **head, "dtype": dtype, "median_us": us, "floor_us": 7.9, "torch": "2.11", "cuda": "13.0",
                "commit": "abc1234", "n": 200, "p10_us": us, "p90_us": us, "rel_err": 1e-4}
    p = tmp_path / "t.csv"
    fj.append_results([row("modelnew", "float32", "", 20.0), row(fj.DEFAULT_VARIANT, "float32", "A=1", 20.0),
                       row("modelnew", "bfloat16", "", 17.0), row("wgmma_bf16", "bfloat16", "TILE_T=128", 17.0)], p)
    tuned = tmp_path / "tuned.json"
    tuned.write_text('{"NVIDIA H200": {"%s": {"A": "1"}, "wgmma_bf16": {"TILE_T": "64"}}}' % fj.DEFAULT_VARIANT)
    monkeypatch.setattr(fusedkit.config, "TUNED_JSON", tuned)
    t = fj.ladder_table(fj.read_results(p))
    marked = {(v, dt) for v, dt, ok in zip(t["variant"], t["dtype"], t["as_tuned"]) if not ok}
    assert marked == {("modelnew", "bfloat16"), ("wgmma_bf16", "bfloat16")}
    lines = importlib.import_module("fusedkit.report")._table_lines(t, short=True)
    assert lines[-1].startswith("\\* wgmma_bf16, modelnew:") and "the kernel it runs at that dtype" in lines[-1]
    # a later bench of the kernel alone, as tuned, at a later commit (its source changed): ModelNew's row, of the commit
    # before, still shows the earlier kernel and stays marked; the kernel's row does not
    later = {**row("wgmma_bf16", "bfloat16", "TILE_T=64", 15.0), "timestamp": "2026-01-02T00:00:00",
             "run": "2026-01-02T00:00:00", "source_hash": "new", "commit": "def5678"}
    fj.append_results([later], p)
    t = fj.ladder_table(fj.read_results(p))
    marked = {(v, dt) for v, dt, ok in zip(t["variant"], t["dtype"], t["as_tuned"]) if not ok}
    assert marked == {("modelnew", "bfloat16")}
    fj.append_results([{**later, "variant": "modelnew", "defines": "", "median_us": 15.5, "source_hash": ""}], p)
    t = fj.ladder_table(fj.read_results(p))  # ... and once a bench at that commit times ModelNew, neither is
    assert all(t["as_tuned"]) and t.set_index(["variant", "dtype"]).loc[("modelnew", "bfloat16"), "median_us"] == 15.5


def test_ladder_table_keeps_the_gpu_with_the_fullest_bench(tmp_path):
    """A later bench of a few variants on another GPU (an H100 lent for one call) does not replace the table of the
    GPU whose rows cover more variants; naming that GPU shows its rows."""
    head = {k: str(v) for k, v in fj.shape_cols(fj.HEADLINE).items()}
    def row(ts, gpu, variant, us):
        return {"timestamp": ts, "kind": "bench", "run": ts, "device_name": gpu, "variant": variant, "defines": "",
                **head, "dtype": "float32", "median_us": us, "floor_us": 7.9, "torch": "2.11", "cuda": "13.0",
                "commit": "abc1234", "n": 200, "p10_us": us, "p90_us": us, "rel_err": 1e-4}
    p = tmp_path / "t.csv"
    fj.append_results([row("2026-01-01T00:00:00", "NVIDIA H200", v, us) for v, us in
                       [("eager", 80.0), ("naive", 3000.0), ("wgmma_tf32", 20.0)]] +
                      [row("2026-01-02T00:00:00", "NVIDIA H100 80GB HBM3", v, us) for v, us in [("eager", 87.0), ("modelnew", 21.0)]], p)
    df = fj.read_results(p)
    t = fj.ladder_table(df)
    assert set(t["device_name"]) == {"NVIDIA H200"} and set(t["variant"]) == {"eager", "naive", "wgmma_tf32"}
    t = fj.ladder_table(df, device_name="NVIDIA H100 80GB HBM3")
    assert set(t["variant"]) == {"eager", "modelnew"}


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


def test_ablation_picture_reads_several_ablations_with_the_clone(tmp_path):
    """A log of several ablate.py runs with --baseline clone (one header line before each) parses into one section a
    variant, each with its clone, and draws as ratios to the clone with the class's target; an ablation without a full
    kernel of its own draws too, a log with none is refused."""
    import importlib.util
    import subprocess
    import sys
    script = fj.ROOT / "scripts" / "plot_ablation.py"
    spec = importlib.util.spec_from_file_location("plot_ablation", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    log = tmp_path / "2026-12-05_abc1234_ablate.log"
    log.write_text(
        "NVIDIA H100 80GB HBM3, 580.159.04, 345 MHz, 1980 MHz, 40\n"
        "wgmma_wide   headline {'B': 16, 'T': 2048} float32\n"
        "clone (before)                            median    16.51 us  (p10 15.97, p90 17.38)\n"
        "mask  0 full kernel                              median    21.74 us  (p10 21.02, p90 22.56)  1.317x clone\n"
        "mask  3 without depthwise + MMA                  median    19.55 us  (p10 18.91, p90 20.35)  1.184x clone\n"
        "clone (after)                             median    16.60 us  (p10 16.00, p90 17.57)\n"
        "wgmma_bf16   headline {'B': 16, 'T': 2048} bfloat16\n"
        "clone (before)                            median    10.75 us  (p10 10.24, p90 11.65)\n"
        "mask  0 full kernel                              median    17.95 us  (p10 17.44, p90 18.79)  1.670x clone\n")
    secs = mod.parse(log)
    assert [(s["variant"], s["dtype"], s["clone"], len(s["rows"]), s["shape"]["B"]) for s in secs] == [
        ("wgmma_wide", "float32", 16.51, 2, 16), ("wgmma_bf16", "bfloat16", 10.75, 1, 16)]
    assert secs[0]["gpu"] == "NVIDIA H100 80GB HBM3"
    assert (mod.target("wgmma_wide", "float32"), mod.target("wgmma_3xtf32", "float32"),
            mod.target("wgmma_bf16", "bfloat16")) == (1.15, 1.7, 1.25)
    png = tmp_path / "r.png"
    subprocess.run([sys.executable, str(script), "--out", str(png), str(log)], check=True, capture_output=True, timeout=120)
    assert png.stat().st_size > 10_000
    log.write_text(log.read_text().replace("mask  0 full kernel                              median    17.95", "mask  1 x median    17.95"))
    subprocess.run([sys.executable, str(script), "--out", str(png), str(log)], check=True, capture_output=True, timeout=120)
    log.write_text(log.read_text().replace("mask  0 full kernel                              median    21.74", "mask  1 x median    21.74"))
    r = subprocess.run([sys.executable, str(script), "--out", str(png), str(log)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "no 'mask 0 full kernel' line" in (r.stdout + r.stderr)


def test_ablate_refuses_a_bad_shape_field_by_name():
    """scripts/ablate.py --shape: a field that is not the headline's, or a value that is not a whole number, stops the
    run before any build with a message naming what was expected."""
    import subprocess
    import sys
    script = fj.ROOT / "scripts" / "ablate.py"
    for bad in ("Q=3", "B=x", "T="):
        r = subprocess.run([sys.executable, str(script), "wgmma_wide", "3", "--shape", bad], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode != 0 and "--shape: expected NAME=VALUE" in r.stderr and repr(bad) in r.stderr, (bad, r.stderr)


def test_launch_cost_probe_builds_and_says_what_it_needs():
    """scripts/launch_cost.py's probe extension compiles with the kit's JIT (no GPU needed to build it); on a machine
    without a GPU the script stops with a message saying so instead of a traceback."""
    import subprocess
    import sys
    import torch
    sys.path.insert(0, str(fj.ROOT / "scripts"))
    try:
        import launch_cost
    finally:
        sys.path.pop(0)
    mod = launch_cost.probe()
    assert callable(mod.launch)
    if not torch.cuda.is_available():
        r = subprocess.run([sys.executable, str(fj.ROOT / "scripts" / "launch_cost.py"), "--no-rung"], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode != 0 and "no CUDA device here" in r.stderr


def test_ab_picture_draws_the_logged_pairs(tmp_path):
    """scripts/plot_ab.py: each ab's two logged rows are one bar (its ratio and interval from the note), A/Bs against a
    build and against the clone kept apart, the shape labelled by its difference from the headline; a commit without
    ab rows is refused by name."""
    import importlib.util
    import subprocess
    import sys
    script = fj.ROOT / "scripts" / "plot_ab.py"
    spec = importlib.util.spec_from_file_location("plot_ab", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    head = {k: str(v) for k, v in fj.shape_cols(fj.HEADLINE).items()}
    def pair(run, a, b, ratio, shape=None, dtype="float32"):
        note = f"ab {a} vs {b}: ratio {ratio:.4f} [{ratio - 0.01:.4f}, {ratio + 0.01:.4f}] slower; same bits"
        base = {"kind": "ab", "run": run, "commit": "abc1234", "device_name": "NVIDIA H100 80GB HBM3", "note": note,
                **head, **(shape or {}), "dtype": dtype, "median_us": 20.0}
        return [dict(base, variant=a.split(":")[0]), dict(base, variant=b.split(":")[0])]
    p = tmp_path / "t.csv"
    fj.append_results(pair("r1", "wgmma_bf16", "wgmma_bf16:X=1", 1.05, dtype="bfloat16")
                      + pair("r2", "wgmma_bf16", "wgmma_bf16:X=1", 1.10, {"K": "3"}, "bfloat16")
                      + pair("r3", "wgmma_bf16:X=1", "clone", 1.55, dtype="bfloat16"), p)
    df = fj.read_results(p)
    tree = mod.ab_pairs(df, ["abc1234"])
    assert [(x["b"], x["ratio"], x["shape"]) for x in tree] == [("wgmma_bf16:X=1", 1.05, "bf16"),
                                                                  ("wgmma_bf16:X=1", 1.10, "K 3, bf16")]
    clone = mod.ab_pairs(df, ["abc1234"], "clone")
    assert [(x["a"], x["ratio"], x["lo"]) for x in clone] == [("wgmma_bf16:X=1", 1.55, 1.54)]
    assert mod.target("wgmma_bf16:X=1", "bfloat16") == 1.25 and mod.target("wgmma_3xtf32", "float32") == 1.7
    png = tmp_path / "ab.png"
    for extra in ([], ["--against", "clone"]):
        subprocess.run([sys.executable, str(script), "--commit", "abc1234", "--name", "x", "--results", str(p),
                        "--out", str(png), *extra], check=True, capture_output=True, timeout=120)
        assert png.stat().st_size > 10_000
    r = subprocess.run([sys.executable, str(script), "--commit", "fffffff", "--name", "x", "--results", str(p),
                        "--out", str(png)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "no A/B rows" in (r.stdout + r.stderr)


def test_fetch_probe_picture_reads_the_committed_probe_log(tmp_path):
    """scripts/plot_fetch_probe.py finds the three probe runs of the 26ec94f log (each: the clone, two plain reads and
    four paths at three depths, 15 rows, medians inside p10-p90), and draws them; a log without probe output is refused
    by name."""
    import subprocess
    import sys
    script = fj.ROOT / "scripts" / "plot_fetch_probe.py"
    spec = importlib.util.spec_from_file_location("plot_fetch_probe", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    log = fj.ROOT / "results" / "logs" / "2026-12-06_26ec94f_l2_hint_fetch_probe_h100.log"
    runs = mod.parse(log.read_text())
    assert [r["args"] for r in runs] == ["4 16 128 2048 64 50", "2 16 128 2048 64 50", "4 64 128 4096 64 50"]
    for r in runs:
        assert len(r["rows"]) == 15 and r["gpu"].startswith("NVIDIA") and r["flush"].startswith("L2 flushed (256 MB")
        assert r["rows"][0][0] == "clone (read + write)" and r["rows"][-1][0] == "tma_ef, 4 in flight"
        assert all(p10 <= med <= p90 for _, med, p10, p90 in r["rows"])
    out = tmp_path / "probe.png"
    done = subprocess.run([sys.executable, str(script), str(log), "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0 and out.stat().st_size > 10_000, done.stderr[-1000:]
    empty = tmp_path / "empty.log"
    empty.write_text("nothing here\n")
    refused = subprocess.run([sys.executable, str(script), str(empty), "--out", str(tmp_path / "e.png")],
                             capture_output=True, text=True)
    assert refused.returncode != 0 and "no x_fetch_probe output" in refused.stderr and not (tmp_path / "e.png").exists()


def test_skeleton_picture_reads_the_committed_probe_log(tmp_path):
    """scripts/plot_skeletons.py finds the skeleton runs of the dfd3ff4 log that followed bench's flush (the float32
    headline at busy 0, 1000, 2000 and 4000 cycles, five other runs), each skeleton's ratio its median over the clone's
    of the same run (every y checked == x there), and draws them; a log without them is refused by name."""
    import subprocess
    import sys
    script = fj.ROOT / "scripts" / "plot_skeletons.py"
    spec = importlib.util.spec_from_file_location("plot_skeletons", script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    log = fj.ROOT / "results" / "logs" / "2026-12-06_dfd3ff4_skeleton_probe_h100.log"
    text = log.read_text()
    runs = mod.skeleton_runs(text)
    head = [r for r in runs if r["args"][:5] == ["4", "16", "128", "2048", "64"]]
    assert sorted(r["busy"] for r in head) == [0, 1000, 2000, 4000] and len(runs) == 9
    for r in runs:
        assert len(r["ratio"]) == 22 and all(0.9 < v < 3.0 for v in r["ratio"].values()), r["args"]
    assert "WRONG" not in text and text.count("y == x") >= 9 * 22
    out = tmp_path / "skel.png"
    done = subprocess.run([sys.executable, str(script), str(log), "--out", str(out)], capture_output=True, text=True)
    assert done.returncode == 0 and out.stat().st_size > 10_000, done.stderr[-1000:]
    older = fj.ROOT / "results" / "logs" / "2026-12-06_26ec94f_l2_hint_fetch_probe_h100.log"
    refused = subprocess.run([sys.executable, str(script), str(older), "--out", str(tmp_path / "e.png")],
                             capture_output=True, text=True)
    assert refused.returncode != 0 and "fewer than two" in refused.stderr and not (tmp_path / "e.png").exists()
