"""The notebooks' pictures on CPU, from small made-up logs: the rung bars, the roofline, the trace timeline, and
the rows the notebooks draw from (fusedkit/report.py, fusedkit/trace.py, fusedkit/notebook.py)."""
from __future__ import annotations

import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import fused_jit as fj  # noqa: E402

GPU = "Test GPU"  # not in results/tuned.json, so every row counts as built with its defaults


def _log(times: dict, floor_us: float = 8.0, dtype: str = "float32", run: str = "r1", stamp: str = "2026-01-01",
         device: str = GPU) -> pd.DataFrame:
    """Bench rows of one run at the headline shape: {variant: median us}; p10/p90 at -/+10%."""
    return pd.DataFrame([{**fj.shape_cols(fj.HEADLINE), "timestamp": f"{stamp}T00:00:{i:02d}+00:00", "kind": "bench",
                          "device_name": device, "commit": "abc", "variant": v, "defines": "", "dtype": dtype,
                          "median_us": t, "p10_us": 0.9 * t, "p90_us": 1.1 * t, "floor_us": floor_us, "run": run,
                          "n": 10, "rel_err": 0.0, "torch": "x", "cuda": "x"} for i, (v, t) in enumerate(times.items())])


LOG = _log({"eager": 80.0, "compile": 70.0, "clone": 12.0, "naive": 3000.0, "smem_tiled": 200.0,
            "register_blocked": 110.0, "vectorized_pipelined": 75.0, "tf32_mma": 40.0})


def test_rung_times_draws_the_rungs_up_to_the_lesson_and_the_baselines():
    fig = fj.plot_rung_times(["smem_tiled", "register_blocked"], LOG)
    ax = fig.axes[0]
    heights = [p.get_height() for p in ax.patches]
    assert heights == [3000.0, 200.0, 110.0]  # naive before them; vectorized_pipelined, tf32_mma are later rungs
    colors = [p.get_facecolor() for p in ax.patches]
    assert colors[1] == colors[2] != colors[0]  # the lesson's rungs stand out from the ones before
    lines = {ln.get_label(): ln.get_ydata()[0] for ln in ax.get_lines()}
    assert lines["eager 80 us"] == 80.0 and lines["clone 12 us"] == 12.0 and lines["compile 70 us"] == 70.0
    assert lines["memory floor (fp32) 8 us"] == 8.0


def test_rung_times_takes_the_latest_row_and_says_when_there_is_none():
    later = _log({"eager": 90.0, "naive": 2500.0}, run="r2", stamp="2026-02-01")
    fig = fj.plot_rung_times("naive", pd.concat([LOG, later], ignore_index=True))
    assert [p.get_height() for p in fig.axes[0].patches] == [2500.0]
    empty = fj.plot_rung_times("naive", LOG.iloc[0:0])
    assert "no GPU bench rows" in empty.axes[0].texts[0].get_text()


def test_roofline_points_and_roofs_come_from_the_log():
    peaks = {"made-up CUDA cores": 50e12, "made-up tensor cores": 400e12}
    t = fj.roofline_table(LOG)
    fl, nbytes = fj.flops(fj.HEADLINE), fj.min_bytes(fj.HEADLINE)
    assert np.allclose(t["intensity"], fl / nbytes)
    assert np.allclose(t.set_index("variant").loc["tf32_mma", "flop_per_s"], fl / 40e-6)
    assert np.allclose(t["copy_bw"], nbytes / 8e-6)
    fig = fj.plot_roofline(LOG, peaks=peaks)
    ax = fig.axes[0]
    points = np.vstack([c.get_offsets() for c in ax.collections])
    assert len(points) == len(LOG) + 1  # every rung and baseline, and the floor
    assert np.allclose(sorted(points[:, 1]), sorted([fl / (t * 1e-6) / 1e12 for t in LOG["median_us"]]
                                                   + [fl / 8e-6 / 1e12]))
    memory = next(ln for ln in ax.get_lines() if ln.get_label().startswith("memory roof"))
    x, y = memory.get_data()
    below = x * nbytes / 8e-6 / 1e12 < 400
    assert np.allclose(y[below], x[below] * nbytes / 8e-6 / 1e12)  # slope: the measured copy bandwidth
    roofs = [ln for ln in ax.get_lines() if ln.get_label().startswith("compute roof")]
    assert sorted(r.get_ydata()[0] for r in roofs) == [50.0, 400.0]
    labels = {a.get_text() for a in ax.texts}
    assert {"eager 80 us", "clone 12 us", "05 tf32_mma 40 us", "floor (fp32) 8 us"} <= labels


def _raw_trace(blocks: int = 3, slots: int = 72, tile0: int = 8, phases: int = 8) -> np.ndarray:
    """Clocks as a FUSED_TRACE build leaves them: block b enters at cycle 1000 + b, 2 cycles per ns (2 GHz)."""
    raw = np.zeros((blocks, slots), dtype=np.uint64)
    for b in range(blocks):
        c0 = 1000 + b
        raw[b, 0], raw[b, 1] = c0, c0 + 20_000  # entry, exit: 10 us
        raw[b, 2], raw[b, 3] = 50_000 + 1000 * b, 50_000 + 1000 * b + 10_000  # ns stamps
        raw[b, 4] = c0 + 2_000  # W_pw fill done: 1 us
        for n in range(2):  # two tiles, each phase 0.5 us after the previous
            for p in range(phases):
                raw[b, tile0 + n * phases + p] = c0 + 2_000 + 1_000 * (n * phases + p + 1)
    return raw.ravel()


def test_decode_trace_converts_clocks_to_us_since_the_block_started():
    ev = fj.decode_trace(_raw_trace(), (72, 8, 8, 8))
    assert list(ev["block"]) == [0, 1, 2]
    assert np.allclose(ev["exit"], 10.0) and np.allclose(ev["w_fill"], 1.0)
    assert np.allclose(ev["ghz"], 2.0)
    assert np.allclose(ev["start_us"], [0.0, 1.0, 2.0])
    assert np.allclose(ev["t0_x_landed"], 1.5) and np.allclose(ev["t1_barrier"], 8.5)
    assert ev["t2_x_landed"].isna().all()  # tiles not reached stay empty
    table = fj.trace_table(ev)
    assert list(table.index) == [0, 1] and table.loc[1, "x landed"] == pytest.approx(5.5)
    assert "blocks 3" in fj.trace_summary(ev)
    with pytest.raises(ValueError, match="phases"):
        fj.decode_trace(_raw_trace(), (72, 8, 8, 7))


def test_trace_walk_gives_each_tiles_gap_latency_and_the_tail():
    nan = float("nan")
    ev = pd.DataFrame({"exit": [13.0, 14.0],
                       "t0_x_landed": [4.0, 4.2], "t0_x_requested": [6.0, 6.4],
                       "t1_x_landed": [7.0, 7.4], "t1_x_requested": [9.0, 9.4],
                       "t2_x_landed": [10.0, 11.4], "t2_x_requested": [nan, nan],
                       "t3_x_landed": [nan, nan]})
    w = fj.trace_walk(ev, slots=2, bytes_per_tile=3e6)
    assert list(w.index) == ["0", "1", "2", "exit"]  # tile 3 landed in no block: no row
    assert w.loc["1", "gap"] == pytest.approx(3.1) and w.loc["2", "gap"] == pytest.approx(3.5)
    assert w.loc["0", "latency"] == pytest.approx(4.1)  # requested at the start
    assert w.loc["2", "latency"] == pytest.approx(4.5)  # from tile 0's request: 4.0 and 5.0
    assert w.loc["exit", "tail"] == pytest.approx(2.8)  # 3.0 and 2.6
    assert w.loc["2", "rate_tbs"] == pytest.approx(2 * 3e6 / 3.5e-6 / 1e12)
    assert "rate_tbs" not in fj.trace_walk(ev)


def test_trace_walks_puts_traces_side_by_side():
    nan = float("nan")
    fast = pd.DataFrame({"exit": [10.0, 10.0], "t0_x_landed": [2.0, 2.0], "t0_x_requested": [3.0, 3.0],
                         "t1_x_landed": [4.0, 4.0], "t1_x_requested": [nan, nan], "t2_x_landed": [6.5, 6.5]})
    slow = fast.assign(exit=[12.0, 12.0], t2_x_landed=[7.0, 7.0])
    w = fj.trace_walks({"fast": fast, "slow": slow}, slots=2, bytes_per_tile=1e6)
    assert list(w.index) == ["fast", "slow"]
    assert w.loc["fast", "gaps"] == "2.00, 2.50" and w.loc["slow", "gaps"] == "2.00, 3.00"
    assert w.loc["slow", "gap_max"] == pytest.approx(3.0) and w.loc["fast", "x0_landed"] == pytest.approx(2.0)
    assert w.loc["fast", "tail"] == pytest.approx(3.5) and w.loc["slow", "block_us"] == pytest.approx(12.0)
    assert w.loc["fast", "rate_min_tbs"] == pytest.approx(2 * 1e6 / 2.5e-6 / 1e12)


def test_trace_case_walks_reads_recorded_traces_without_a_gpu():
    """scripts/trace_case.py --walks on two committed traces of an H100 (e9c42f0): the kernel and its skeleton, the
    figures docs/ladder.md quotes (runs of 2026-12-07)."""
    d = fj.ROOT / "results" / "traces"
    r = subprocess.run([sys.executable, str(fj.ROOT / "scripts" / "trace_case.py"), "--walks",
                        str(d / "trace_wgmma_tf32_h100_e9c42f0.csv"), str(d / "trace_wgmma_tf32_FUSED_ABLATE3_h100_e9c42f0.csv")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = {ln.split()[0]: ln for ln in r.stdout.splitlines()[1:]}
    assert "3.22, 3.36, 3.40" in rows["trace_wgmma_tf32_h100_e9c42f0"]
    assert "2.88, 2.64, 3.07" in rows["trace_wgmma_tf32_FUSED_ABLATE3_h100_e9c42f0"]


def test_plot_trace_draws_one_bar_per_warpgroup_and_block():
    ev = fj.decode_trace(_raw_trace(blocks=4), (72, 8, 8, 8))
    fig = fj.plot_trace(ev, warpgroups=2, blocks=4)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["block 0 wg 0", "block 0 wg 1", "block 3 wg 0",
                                                            "block 3 wg 1"]
    assert len(ax.collections) == 2 * 2 * (1 + 8)  # per bar: the W_pw fill, then its one tile's 8 phases


def test_logged_results_adds_the_committed_log_to_a_run_log():
    from fusedkit.notebook import logged_results
    committed = fj.read_results(fj.ROOT / "results" / "timings.csv")
    fj.append_results(_log({"naive": 1.0}, stamp="2099-01-01").to_dict("records"))  # the test's own log
    df = logged_results()
    assert len(df) == len(committed) + 1
    assert df["timestamp"].iloc[-1].startswith("2099") and df["timestamp"].is_monotonic_increasing
