"""Where a block's time goes, tile by tile: a FUSED_TRACE=1 build of a wgmma rung (09-11) records clock64() at
the phase boundaries of each block's first tiles; this runs it once at the headline shape (L2 flushed, as in
bench) and prints, per tile, the median over blocks of each event's time since the block started (us).
Usage: python scripts/trace_case.py VARIANT [NAME=VALUE ...] [--dtype bfloat16] [--csv PATH] [--plot PNG] [--build-only]
                                   [--flush read]   (the L2 flushed by a read: clean lines, no write-backs)
       python scripts/trace_case.py --from-csv PATH --plot PNG [--warpgroups G]   (a recorded trace; no GPU)
       python scripts/trace_case.py --walks CSV [CSV ...] [--tile-t 64] [--slots 2] [--dtype D]   (recorded wg_kernel
                                   traces side by side: block, x(0), the gaps, the chip-wide rate, the tail; no GPU)
Rung 12 (wgmma_rs_tf32) records per warpgroup: its trace "tile" g + G n is warpgroup g's n-th tile (G =
RS_WARPGROUPS), and the plot draws one bar per warpgroup; its "mma issued" ends the depthwise + MMA issue.
A timing experiment: the records cost a few global stores per tile in one thread per role. The plot draws
each sampled block's recording thread(s) as a bar per role, cut at the events, each piece coloured by the
phase that the event ends (e.g. the piece ending at "dw done" is the depthwise). The launch, the decoding and the
drawing are fusedkit/trace.py's (traced_launch, decode_trace, trace_table, trace_summary, plot_trace)."""
import argparse
import sys
from pathlib import Path

import matplotlib
import pandas as pd

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402


def save_plot(events: pd.DataFrame, png: str, title: str, warpgroups: int) -> None:
    fig = fj.plot_trace(events, warpgroups=warpgroups, title=title)
    fig.savefig(png, dpi=110)
    plt.close(fig)


def headline_tile_bytes(tile_t: int, dtype: str) -> int:
    """x's box (TILE_T + the halo steps, every input channel) + y's tile, bytes, at the headline shape."""
    h, esize = fj.HEADLINE, fj.DTYPES[dtype].itemsize
    return ((tile_t + (h["K"] - 1) * h["dilation"]) * h["C_in"] + tile_t * h["C_out"]) * esize


def print_walks(csvs: list[str], tile_t: int, dtype: str, slots: int) -> None:
    """Recorded wg_kernel traces side by side (fusedkit's trace_walks), each named by its file's stem; no GPU."""
    walks = fj.trace_walks({Path(c).stem: pd.read_csv(c) for c in csvs}, slots, headline_tile_bytes(tile_t, dtype))
    with pd.option_context("display.width", 250, "display.max_colwidth", 60, "display.float_format", "{:.2f}".format):
        print(walks.to_string())


def print_walk(events: pd.DataFrame, defines: dict, dtype: str) -> None:
    """wg_kernel's x stream (fusedkit's trace_walk): gaps, request-to-landing latency, the tail, the chip-wide rate
    at the headline's bytes per tile. Not for the warp-specialized (its x marks differ) or rung 12 traces."""
    if "t0_act_free" in events and events["t0_act_free"].notna().any():
        return
    per_tile = headline_tile_bytes(int(defines.get("TILE_T", 64)), dtype)
    print(f"x stream (x box + y tile = {per_tile / 1e3:.1f} KB a tile; rate: every block one tile a gap):")
    with pd.option_context("display.width", 200, "display.float_format", "{:.2f}".format):
        print(fj.trace_walk(events, int(defines.get("WG_X_SLOTS", 2)), per_tile).to_string())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("variant", nargs="?")
    ap.add_argument("defines", nargs="*", help="NAME=VALUE over the tuned parameters")
    ap.add_argument("--dtype", default="float32", choices=list(fj.DTYPES))
    ap.add_argument("--csv", default=None, help="write every block's events (us since its start) here")
    ap.add_argument("--plot", default=None, help="draw the timeline of a sample of blocks into this PNG")
    ap.add_argument("--from-csv", default=None, help="no run: draw --plot from a CSV that --csv wrote")
    ap.add_argument("--warpgroups", type=int, default=0, help="with --from-csv: rung 12's RS_WARPGROUPS of the trace")
    ap.add_argument("--build-only", action="store_true", help="make the FUSED_TRACE build, trace nothing (no GPU needed)")
    ap.add_argument("--walks", nargs="+", default=None, metavar="CSV",
                    help="no run: recorded wg_kernel traces side by side (block, x(0), gaps, rate, tail)")
    ap.add_argument("--tile-t", type=int, default=64, help="with --walks: the traces' TILE_T (bytes per tile)")
    ap.add_argument("--slots", type=int, default=2, help="with --walks: the traces' WG_X_SLOTS")
    ap.add_argument("--flush", default="write", choices=["write", "read"],
                    help="how the L2 is flushed before the traced launch: bench's write, or a read (clean lines)")
    a = ap.parse_args()
    if a.walks:
        print_walks(a.walks, a.tile_t, a.dtype, a.slots)
        return 0
    if a.from_csv:
        if not a.plot:
            ap.error("--from-csv needs --plot")
        save_plot(pd.read_csv(a.from_csv), a.plot, Path(a.from_csv).stem, a.warpgroups)
        return 0
    if not a.variant:
        ap.error("a variant (or --from-csv) is required")
    if a.build_only:
        _, defines = fj.traced_build(a.variant, fj.defines_over_tuned(a.variant, a.defines))
        print(f"built {a.variant} {fj.defines_str(defines)}")
        return 0
    events, warpgroups, defines = fj.traced_launch(a.variant, fj.HEADLINE, a.dtype,
                                                   fj.defines_over_tuned(a.variant, a.defines), flush=a.flush)
    title = f"{a.variant} {fj.defines_str(defines)} {a.dtype}" + (" (read flush)" if a.flush == "read" else "")
    print(f"{title}  headline {fj.HEADLINE}")
    print(fj.trace_summary(events))
    print("median over blocks, us since the block started:")
    with pd.option_context("display.width", 200, "display.float_format", "{:.2f}".format):
        print(fj.trace_table(events, warpgroups).to_string())
    if not warpgroups:
        print_walk(events, defines, a.dtype)
    if a.csv or a.plot:
        a.csv = a.csv or str(Path(a.plot).with_suffix(".csv"))
        events.to_csv(a.csv, index=False)
    if a.plot:
        save_plot(events, a.plot, title, warpgroups)
    return 0


if __name__ == "__main__":
    sys.exit(main())
