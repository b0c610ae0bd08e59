"""Where a block's time goes, tile by tile: a FUSED_TRACE=1 build of a wgmma rung (09-11) records clock64() at
the phase boundaries of each block's first tiles; this runs it once at the headline shape (L2 flushed, as in
bench) and prints, per tile, the median over blocks of each event's time since the block started (us).
Usage: python scripts/trace_case.py VARIANT [NAME=VALUE ...] [--dtype bfloat16] [--csv PATH] [--plot PNG]
       python scripts/trace_case.py --from-csv PATH --plot PNG [--warpgroups G]   (a recorded trace; no GPU)
Rung 12 (wgmma_rs_tf32) records per warpgroup: its trace "tile" g + G n is warpgroup g's n-th tile (G =
RS_WARPGROUPS), and the plot draws one bar per warpgroup; its "mma issued" ends the depthwise + MMA issue.
A timing experiment: the records cost a few global stores per tile in one thread per role. The plot draws
each sampled block's recording thread(s) as a bar per role, cut at the events, each piece coloured by the
phase that the event ends (e.g. the piece ending at "dw done" is the depthwise)."""
import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

# The record's layout comes from the extension (trace_layout(): wgmma.cuh's kTraceSlots, kTrTile0, kTraceTiles,
# kTrPhases); these are the phase names in WgTracePhase order, and the layout of the recorded CSVs' columns.
PHASES = ["x landed", "act free", "dw done", "mma issued", "mma done", "y stored", "barrier"]
TILES = 8
# what the time up to each event was spent on, and which thread records it in the warp-specialized kernel
ENDS = {"w_fill": "W_pw fill", "x_landed": "wait for x", "act_free": "wait for act buffer", "dw_done": "depthwise",
        "mma_issued": "MMA issue (+TMA issue | +act wait)", "mma_done": "MMA wait", "y_stored": "y stores", "barrier": "barrier"}
PRODUCER = {"x_landed", "act_free", "dw_done", "barrier"}
RS_ENDS = {**ENDS, "mma_issued": "depthwise + MMA issue"}  # rung 12: no separate depthwise mark


def plot_trace(csv: str, png: str, title: str = "", blocks: int = 12, warpgroups: int = 0) -> None:
    """A timeline of `blocks` blocks (spread over the grid) from a trace CSV written by --csv; warpgroups = G > 0
    (rung 12): one bar per warpgroup g of each block, from its tiles g, g + G, g + 2G .."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    d = pd.read_csv(csv)
    ws = "t0_act_free" in d and d["t0_act_free"].notna().any()  # warp-specialized: two recording threads
    rows = d.iloc[np.linspace(0, len(d) - 1, min(blocks, len(d) if not warpgroups else max(1, blocks // warpgroups)))
                  .astype(int)]
    ends = RS_ENDS if warpgroups else ENDS
    colors = dict(zip(dict.fromkeys(list(ENDS.values()) + list(RS_ENDS.values())), plt.get_cmap("tab10").colors))
    fig, ax = plt.subplots(figsize=(11, 0.45 * len(rows) * (2 if ws else 1) + 1.2))
    labels, used = [], set()
    for i, (_, r) in enumerate(rows.iterrows()):
        events = [("w_fill", r["w_fill"], -1)] + [(c.split("_", 1)[1], r[c], int(c[1:].split("_", 1)[0]))
                                                 for c in d.columns if c[0] == "t" and c[1].isdigit() and np.isfinite(r[c])]
        if warpgroups:  # (name filter, tile filter) per bar
            roles = [(f"wg {g}", set(ends), lambda n, g=g: n < 0 or n % warpgroups == g) for g in range(warpgroups)]
        elif ws:
            roles = [("producers", PRODUCER, lambda n: True), ("consumers", set(ENDS) - PRODUCER, lambda n: True)]
        else:
            roles = [("block", set(ENDS), lambda n: True)]
        for role, names, mine in roles:
            y = len(labels)
            labels.append(f"block {int(r['block'])}" + (f" {role}" if ws or warpgroups else ""))
            t_prev = 0.0
            for name, t, _ in sorted((e for e in events if e[0] in names and mine(e[2])), key=lambda e: e[1]):
                ax.broken_barh([(t_prev, t - t_prev)], (y - 0.4, 0.8), color=colors[ends[name]])
                used.add(ends[name])
                t_prev = t
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("us since the block started")
    ax.set_title(title or Path(csv).stem, fontsize=9)
    shown = [lab for lab in colors if lab in used]
    ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=colors[lab]) for lab in shown], labels=shown,
              fontsize=7, ncol=8, loc="upper center", bbox_to_anchor=(0.5, -0.18 if len(labels) < 16 else -0.08))
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("variant", nargs="?")
    ap.add_argument("defines", nargs="*", help="NAME=VALUE over the tuned parameters")
    ap.add_argument("--dtype", default="float32", choices=list(fj.DTYPES))
    ap.add_argument("--csv", default=None, help="write every block's events (us since its start) here")
    ap.add_argument("--plot", default=None, help="draw the timeline of a sample of blocks into this PNG")
    ap.add_argument("--from-csv", default=None, help="no run: draw --plot from a CSV that --csv wrote")
    ap.add_argument("--warpgroups", type=int, default=0, help="with --from-csv: rung 12's RS_WARPGROUPS of the trace")
    a = ap.parse_args()
    if a.from_csv:
        if not a.plot:
            ap.error("--from-csv needs --plot")
        plot_trace(a.from_csv, a.plot, warpgroups=a.warpgroups)
        return 0
    if not a.variant:
        ap.error("a variant (or --from-csv) is required")
    defines = {**fj.defines_over_tuned(a.variant, a.defines), "FUSED_TRACE": "1"}
    warpgroups = int(defines.get("RS_WARPGROUPS", 0))  # rung 12: per-warpgroup records
    ext = fj.load(a.variant, defines)
    SLOTS, TILE0, tiles, n_phases = ext.trace_layout()
    if (tiles, n_phases) != (TILES, len(PHASES)):
        raise RuntimeError(f"trace layout {ext.trace_layout()} does not match this script's {TILES} tiles x "
                           f"{len(PHASES)} phases")
    model, x = fj.make_case(fj.HEADLINE, fj.DTYPES[a.dtype], "cuda", seed=0)
    args = fj.forward_args(model)
    for _ in range(5):
        ext.forward(x, *args)
    ext.trace()  # clear
    fj.Timer("cuda").time(lambda: ext.forward(x, *args), reps=1, warmup=0)  # one call, L2 flushed as in bench
    raw = np.array(ext.trace(), dtype=np.float64).reshape(-1, SLOTS)
    raw = raw[raw[:, 0] > 0]  # blocks that ran
    us_per_cycle = (raw[:, 3] - raw[:, 2]) / 1e3 / (raw[:, 1] - raw[:, 0])
    ev = np.where(raw > 0, (raw - raw[:, :1]) * us_per_cycle[:, None], np.nan)
    ev[:, 2:TILE0] = np.where(np.arange(2, TILE0) == 4, ev[:, 2:TILE0], np.nan)  # the ns stamps and spare slots
    start_us = (raw[:, 2] - raw[:, 2].min()) / 1e3
    span_us = (raw[:, 3].max() - raw[:, 2].min()) / 1e3
    dur = ev[:, 1]
    print(f"{a.variant} {fj.defines_str(defines)} {a.dtype}  headline {fj.HEADLINE}")
    print(f"blocks {len(raw)}; first block start to last block end {span_us:.2f} us; block start offsets "
          f"median {np.median(start_us):.2f} max {start_us.max():.2f} us; block durations median {np.median(dur):.2f} "
          f"(p10 {np.percentile(dur, 10):.2f}, p90 {np.percentile(dur, 90):.2f}) us; W_pw fill done at "
          f"{np.nanmedian(ev[:, 4]):.2f} us; SM clock {1e-3 / np.median(us_per_cycle):.2f} GHz")
    table = pd.DataFrame({ph: [np.nanmedian(ev[:, TILE0 + n * len(PHASES) + i]) if np.isfinite(
        ev[:, TILE0 + n * len(PHASES) + i]).any() else np.nan for n in range(TILES)] for i, ph in enumerate(PHASES)})
    table.index.name = f"tile (warpgroup g's n-th: g + {warpgroups} n)" if warpgroups else "tile"
    table = table.dropna(how="all").dropna(axis=1, how="all")
    print("median over blocks, us since the block started:")
    with pd.option_context("display.width", 200, "display.float_format", "{:.2f}".format):
        print(table.to_string())
    if a.csv or a.plot:
        a.csv = a.csv or str(Path(a.plot).with_suffix(".csv"))
        cols = ["entry", "exit", "entry_ns", "exit_ns", "w_fill", "_5", "_6", "_7"] + [
            f"t{n}_{ph.replace(' ', '_')}" for n in range(TILES) for ph in PHASES]
        pd.DataFrame(ev, columns=cols).assign(start_us=start_us).to_csv(a.csv, index_label="block")
    if a.plot:
        plot_trace(a.csv, a.plot, f"{a.variant} {fj.defines_str(defines)} {a.dtype}", warpgroups=warpgroups)
    return 0


if __name__ == "__main__":
    sys.exit(main())
