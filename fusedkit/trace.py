"""Per-block event clocks of a FUSED_TRACE=1 build (rungs 09-12): decode what ext.trace() returns, summarize it
per tile, draw the per-block (rung 12: per-warpgroup) timeline.

The decoding and the drawing are those of scripts/trace_case.py, as functions of a DataFrame (the columns of the
CSVs that script writes, so a recorded trace in results/traces/ draws the same way); they need no GPU.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

# The phases of a tile, in wgmma.cuh's WgTracePhase order (ext.trace_layout() gives their count).
PHASES = ["x landed", "act free", "dw done", "mma issued", "mma done", "y stored", "barrier", "x requested"]
# what the time up to each event was spent on, and which thread records it in the warp-specialized kernel (whose
# consumers, with a share of act, mark "x requested" after waiting for FULL: the act wait then lies in that piece)
ENDS = {"w_fill": "W_pw fill", "x_landed": "wait for x", "act_free": "wait for act buffer", "dw_done": "depthwise",
        "mma_issued": "MMA issue (+TMA issue | +act wait)", "mma_done": "MMA wait", "y_stored": "y stores",
        "barrier": "barrier", "x_requested": "x request (TMA issue | +act wait)"}
PRODUCER = {"x_landed", "act_free", "dw_done", "barrier"}
RS_ENDS = {**ENDS, "mma_issued": "depthwise + MMA issue"}  # rung 12: no separate depthwise mark


def decode_trace(raw, layout) -> pd.DataFrame:
    """ext.trace() (uint64 clocks, `slots` per block, 0 = not reached) and ext.trace_layout() (slots, first tile
    slot, tiles, phases) -> one row per block that ran: every event in us since that block started (clock64
    converted with the block's own %globaltimer entry/exit pair), its start since the first block's (start_us)."""
    slots, tile0, tiles, n_phases = (int(v) for v in layout)
    if n_phases != len(PHASES):
        raise ValueError(f"trace layout {tuple(layout)} has {n_phases} phases per tile, this decoder knows {len(PHASES)}")
    raw = np.asarray(raw, dtype=np.float64).reshape(-1, slots)
    block = np.flatnonzero(raw[:, 0] > 0)  # blocks that ran
    raw = raw[block]
    us_per_cycle = (raw[:, 3] - raw[:, 2]) / 1e3 / (raw[:, 1] - raw[:, 0])
    ev = np.where(raw > 0, (raw - raw[:, :1]) * us_per_cycle[:, None], np.nan)
    ev[:, 2:tile0] = np.where(np.arange(2, tile0) == 4, ev[:, 2:tile0], np.nan)  # the ns stamps and spare slots
    cols = ["entry", "exit", "entry_ns", "exit_ns", "w_fill"] + [f"_{i}" for i in range(5, tile0)]
    cols += [f"t{n}_{ph.replace(' ', '_')}" for n in range(tiles) for ph in PHASES]
    cols += [f"_{i}" for i in range(len(cols), slots)]
    out = pd.DataFrame(ev, columns=cols)
    out.insert(0, "block", block)
    out["start_us"] = (raw[:, 2] - raw[:, 2].min()) / 1e3
    out["ghz"] = 1e-3 / us_per_cycle
    return out


def trace_table(events: pd.DataFrame, warpgroups: int = 0) -> pd.DataFrame:
    """Per tile (rung 12: warpgroup g's n-th tile is g + G n) and phase: the median over blocks of the event's
    time since the block started, us."""
    tiles = sorted({int(c[1:].split("_", 1)[0]) for c in events.columns if c[:1] == "t" and c[1:2].isdigit()})
    phases = [ph for ph in PHASES if f"t0_{ph.replace(' ', '_')}" in events]  # (older traces lack later phases)
    table = pd.DataFrame({ph: [events[f"t{n}_{ph.replace(' ', '_')}"].median() for n in tiles] for ph in phases},
                         index=pd.Index(tiles, name=f"tile (g + {warpgroups} n)" if warpgroups else "tile"))
    return table.dropna(how="all").dropna(axis=1, how="all")


def trace_summary(events: pd.DataFrame) -> str:
    """One line: blocks, the launch's span, block start offsets and durations, when W_pw's fill was done."""
    dur, start = events["exit"], events["start_us"]
    return (f"blocks {len(events)}; first block start to last block end {(start + dur).max():.2f} us; block start "
            f"offsets median {start.median():.2f} max {start.max():.2f} us; block durations median {dur.median():.2f} "
            f"(p10 {dur.quantile(0.1):.2f}, p90 {dur.quantile(0.9):.2f}) us; W_pw fill done at "
            f"{events['w_fill'].median():.2f} us; SM clock {events['ghz'].median():.2f} GHz")


def trace_walk(events: pd.DataFrame, slots: int = 2, bytes_per_tile: float | None = None) -> pd.DataFrame:
    """The x stream of a wg_kernel trace (rungs 09 and 13; `slots`: its WG_X_SLOTS), tile by tile, medians over
    blocks of per-block figures, us:
    - landed: x(n) landed, since the block started; gap: since x(n - 1) landed (a tile's period);
    - latency: from x(n)'s request (tile n - slots's "x requested" mark: the request after that tile's barrier)
      to its landing; tiles n < slots are requested at the block's start, so theirs is `landed`;
    - tail (last row, tile "exit"): from the block's last landing to its exit, the part of the block no x read
      overlaps.
    With bytes_per_tile (x's box + y's tile, bytes), rate_tbs: every traced block moving a tile's bytes in one gap, a
    chip-wide DRAM rate in TB/s (a rough figure: blocks are not in step). Needs no GPU."""
    tiles = sorted({int(c[1:].split("_", 1)[0]) for c in events.columns if c[:1] == "t" and c.endswith("_x_landed")})
    landed = pd.DataFrame({n: events[f"t{n}_x_landed"] for n in tiles})
    rows = []
    for n in tiles:
        if landed[n].notna().sum() == 0:
            break
        req_col = f"t{n - slots}_x_requested"  # (traces before the mark existed: no latency past the first slots)
        req = 0.0 if n < slots else events[req_col] if req_col in events else np.nan
        gap = (landed[n] - landed[n - 1]).median() if n else np.nan
        rows.append({"tile": str(n), "blocks": int(landed[n].notna().sum()), "landed": landed[n].median(),
                     "gap": gap, "latency": (landed[n] - req).median()})
    last = landed.ffill(axis=1).iloc[:, -1]  # each block's last landing
    rows.append({"tile": "exit", "blocks": len(events), "landed": events["exit"].median(), "gap": np.nan,
                 "latency": np.nan, "tail": (events["exit"] - last).median()})
    out = pd.DataFrame(rows).set_index("tile")
    if bytes_per_tile:
        out["rate_tbs"] = len(events) * bytes_per_tile / (out["gap"] * 1e-6) / 1e12
    return out


def trace_walks(traces: dict[str, pd.DataFrame], slots: int = 2, bytes_per_tile: float | None = None) -> pd.DataFrame:
    """Several wg_kernel traces side by side (e.g. a build and its skeleton, recorded CSVs), one row each, from
    trace_walk: the block's median duration, x(0)'s landing, the gaps between the tiles after it (the period), the
    chip-wide rate over those gaps (with bytes_per_tile) and the tail after the last landing, us. Needs no GPU."""
    rows = {}
    for name, events in traces.items():
        w = trace_walk(events, slots, bytes_per_tile)
        tiles = w.drop(index="exit")
        gaps = tiles["gap"].dropna()
        row = {"block_us": w.loc["exit", "landed"], "x0_landed": tiles["landed"].iloc[0],
               "gaps": ", ".join(f"{g:.2f}" for g in gaps), "gap_min": gaps.min(), "gap_max": gaps.max(),
               "tail": w.loc["exit", "tail"]}
        if bytes_per_tile:
            rate = tiles["rate_tbs"].dropna()
            row |= {"rate_min_tbs": rate.min(), "rate_max_tbs": rate.max()}
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def plot_trace(events: pd.DataFrame, warpgroups: int = 0, blocks: int = 12, title: str = ""):
    """The timeline of `blocks` blocks spread over the grid: one bar per recording thread (warp-specialized: the
    producers and the consumers; rung 12, warpgroups = G > 0: one bar per warpgroup g, from its tiles g, g + G, ..),
    cut at the events, each piece coloured by the phase its event ends. Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt
    d = events
    ws = "t0_act_free" in d and d["t0_act_free"].notna().any()  # warp-specialized: two recording threads
    n_rows = min(blocks, len(d)) if not warpgroups else min(len(d), max(1, blocks // warpgroups))
    rows = d.iloc[np.linspace(0, len(d) - 1, n_rows).astype(int)] if len(d) else d
    ends = RS_ENDS if warpgroups else ENDS
    colors = dict(zip(dict.fromkeys(list(ENDS.values()) + list(RS_ENDS.values())), plt.get_cmap("tab10").colors))
    n_bars = len(rows) * (warpgroups or (2 if ws else 1))
    fig, ax = plt.subplots(figsize=(11, 0.45 * max(n_bars, 1) + 1.4))
    tile_cols = [c for c in d.columns if c[:1] == "t" and c[1:2].isdigit()]
    labels, used = [], set()
    for _, r in rows.iterrows():
        events_r = [("w_fill", r["w_fill"], -1)] + [(c.split("_", 1)[1], r[c], int(c[1:].split("_", 1)[0]))
                                                  for c in tile_cols if np.isfinite(r[c])]
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
            for name, t, _ in sorted((e for e in events_r if e[0] in names and mine(e[2]) and np.isfinite(e[1])),
                                     key=lambda e: e[1]):
                ax.broken_barh([(t_prev, t - t_prev)], (y - 0.4, 0.8), color=colors[ends[name]])
                used.add(ends[name])
                t_prev = t
    if not labels:
        ax.text(0.5, 0.5, "no blocks in this trace", ha="center", va="center")
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("us since the block started")
    ax.set_title(title or "per-block timeline of one traced launch", fontsize=9)
    shown = [lab for lab in colors if lab in used]
    if shown:
        ax.legend(handles=[plt.Rectangle((0, 0), 1, 1, color=colors[lab]) for lab in shown], labels=shown,
                  fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.12 if len(labels) < 16 else -0.06))
    fig.tight_layout()
    return fig


def traced_build(variant: str, defines: dict | None = None):
    """The variant's FUSED_TRACE=1 build (its tuned parameters, `defines` over them), compiled on first use (no GPU
    needed): (the extension, its defines). traced_launch launches it; scripts/trace_case.py --build-only makes it."""
    from .jit import defines_over_tuned, load
    defs = {**defines_over_tuned(variant, defines or {}), "FUSED_TRACE": "1"}
    return load(variant, defs), defs


def traced_launch(variant: str = "wgmma_rs_tf32", shape: dict | None = None, dtype: str = "float32",
                  defines: dict | None = None, flush: str = "write"):
    """One launch of the variant's FUSED_TRACE=1 build (its tuned parameters, `defines` over them) at `shape`,
    after 5 untimed calls and with the L2 flushed as bench times it: (events per block, from
    fusedkit.trace.decode_trace; G, the warpgroups of a rung-12 build (0: one record per block); the defines).
    flush="read": the L2 flushed by a read instead (Timer's diagnostic: clean lines, so the traced launch pays no
    write-backs), to see what the write flush's dirty lines cost the first x tile's landing.
    Needs a GPU; the records cost a few global stores per tile, so it is a timing experiment, not a benchmark."""
    from .check import make_case
    from .config import DTYPES, HEADLINE
    from .model import forward_args
    from .timing import Timer
    ext, defs = traced_build(variant, defines)
    model, x = make_case(dict(shape or HEADLINE), DTYPES[dtype], "cuda", seed=0)
    args = forward_args(model)
    for _ in range(5):
        ext.forward(x, *args)
    ext.trace()  # clear
    Timer("cuda", flush=flush).time(lambda: ext.forward(x, *args), reps=1, warmup=0)
    events = decode_trace(ext.trace(), ext.trace_layout())
    return events, int(defs.get("RS_WARPGROUPS", 0)), defs
