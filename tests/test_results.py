"""results/timings.csv: atomic, locked appends that survive damage and concurrency."""
import multiprocessing as mp

import fused_jit as fj


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
