# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: -papermill,-execution
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 7. Overlapping the stages: warp specialization and Hopper's wgmma + TMA (rungs 8-12)
#
# **Why.** Rung 5 (`tf32_mma`) moved the GEMM to tensor cores and stopped at ~36 us, 4.6x the memory floor, with
# DRAM mostly idle. The profiler said why: every warp runs every phase of a tile one after the other (wait for
# x, depthwise + SiLU, MMA, y stores), and `mma.sync` needs each warp to load its own operand fragments, so the
# kernel is bound by instruction issue and latency, not by bytes. Two ways to let the phases overlap:
#
# * rung 8, `warp_specialized`: producer warps (x copies + depthwise) and MMA warps hand tiles over through
#   mbarriers. Same `mma.sync` math; the stages overlap, but each side has fewer warps for its own latency.
# * rung 9, `wgmma_tf32`: Hopper's own machinery. `wgmma.mma_async` lets one warpgroup (128 threads) multiply
#   a 64 x N x 8 block with operands read straight from shared memory through descriptors, *asynchronously*:
#   the block issues the MMA of tile i and computes the depthwise of tile i+1 while the tensor cores work.
#   The x tiles arrive by TMA (one thread issues a whole 3-D box; zeros outside the tensor; completion counted
#   on an mbarrier), so no warp spends instructions on copies.
# * rungs 10 and 11: the same Hopper kernel (`kernels/wgmma.cuh`, a template), for the other two accuracy
#   classes. `wgmma_3xtf32` stores W_pw and every activation twice, as big = tf32(v) and small = tf32(v - big),
#   and issues three wgmmas per k-step (big*big + big*small + small*big): fp32 accuracy on tensor cores.
#   `wgmma_bf16` takes bfloat16 / float16 x and y (half the bytes) and runs the GEMM in bf16.
# * rung 12, `wgmma_rs_tf32`: the GEMM turned around (y^T = act^T W_pw^T), so the activations are wgmma's A
#   operand *from registers*: each thread computes exactly the depthwise outputs its A fragment holds, with no
#   act tile in shared memory and no block barrier; every warpgroup runs its own pipeline over its own tiles.

# %%
import sys, pathlib  # the repository root (the folder of fused_jit.py) on sys.path: the package is not installed
sys.path.insert(0, str(next(p for p in [pathlib.Path.cwd(), *pathlib.Path.cwd().parents] if (p / "fused_jit.py").is_file())))

# %% tags=["parameters"]
# Parameters (papermill can override them): the problem shape and the timed calls per measurement.
B, C_in, C_out, T, K, dilation = 16, 128, 128, 2048, 5, 2
REPS = 200

# %%
from fusedkit.notebook import *  # np, pd, torch, plt, fj, setup and the lessons' helpers: fusedkit/notebook.py
HAS_GPU, DEVICE, SHAPE, RUN_SHAPE, RUN_REPS, SMALL_SHAPES = setup(B, C_in, C_out, T, K, dilation, REPS)

# %% [markdown]
# ## The plans and predictions

# %%
for name in ("warp_specialized", "wgmma_tf32", "wgmma_3xtf32", "wgmma_bf16", "wgmma_rs_tf32"):
    print(fj.variant_info(name))
    print(prediction(name), "\n")

# %% [markdown]
# ## The source that matters
#
# wgmma reads both operands from shared memory in a fixed layout: K-major (for fp32/TF32 both operands must
# be), in 8-row x 128-byte atoms whose 16-byte chunks are XOR-swizzled by the row, described by a 64-bit
# descriptor. The depthwise writes its activations straight into that layout (row = time step, k = channel).

# %%
show_source("wgmma_ops.cuh", "// Shared-memory matrix descriptor", "// Pin the accumulators")

# %% [markdown]
# One tile's GEMM per warpgroup: 16 tf32 wgmmas (K = 128 in steps of 8; bf16: 8 in steps of 16), one commit
# group, no wait: the call returns while the tensor cores work. The 3xTF32 form issues three per k-step and
# spreads the big*big products over several accumulators (the tensor cores' accumulation truncates; a short
# chain keeps that error at fp32 level). Where C_out > 64 and the dilation is above 1 (or K >= 9), rung 9 issues
# the tile's GEMM from two of its four warpgroups at N = TILE_T instead (`WG_GEMM_WGS`): each multiplies its 64 rows
# of W_pw by the whole tile, so W_pw is read from shared memory once per tile instead of twice, and the other two
# warpgroups go on with the next tile's depthwise meanwhile. In the A/B runs of 2026-12-04 that was 1.04-1.06x faster
# at dilation 2 and 4, and 0.987-0.996x at dilation 1 with K <= 5, where the four-warpgroup form stays
# (docs/ladder.md, results/logs/2026-12-04_251218f_*).
#
# Below, each k-step's descriptor is the first one plus its offset / 16: one add instead of rebuilding it from the
# address. That, the tile index divided by a multiply-high (`fast_div.cuh`) instead of a 64-bit division, and a
# kernel of its own for K = 3, 5 and 7 (`WG_CT_K`: one depthwise loop per call site instead of one per possible
# K, which ncu had shown as instruction-fetch stalls) made the kernel 1.047x faster at the headline and 1.015-1.121x
# at five other shapes in the A/B runs of 2026-12-04 evening (results/logs/2026-12-04_3267093_ct_k_tests_ab.log).

# %%
show_source("wgmma.cuh", "// Issue this warpgroup's GEMM", "// ---- depthwise")

# %% [markdown]
# The main loop: wait for x of the next tile (mbarrier), its depthwise (overlapping the MMA in flight), then
# wait for the MMA and store y from the accumulators; one barrier, the next TMA and the next MMA.

# %%
show_source("wgmma.cuh", "for (int i = 0;; ++i) {", "// Every x box")

# %% [markdown]
# Rung 12 (`kernels/wgmma_rs.cuh`) per tile and warpgroup: for each chunk of k-steps, the depthwise of the
# thread's A-fragment entries (2 time rows x 2 channels per k-step) straight into registers, then
# `wgmma.fence` and the chunk's wgmmas (m64n128k8, A from registers, W_pw from smem); the A registers are
# double-buffered, so the next chunk's depthwise runs under this chunk's MMA.

# %%
show_source("wgmma_rs.cuh", "    uint32_t a[2][RS_CHUNK][4];", "    // every warp of the warpgroup has read its x")

# %% [markdown]
# ## Check
#
# These rungs serve only the shapes of their fast path (the wgmma rungs: an sm_90 GPU, T % 4 == 0 (16-bit:
# T % 8 == 0), dilation <= 4, span <= 16, C_in and C_out <= 128) and refuse the others with a reason; `ModelNew`
# routes those to a rung that can run them. Every shape they do run must pass its accuracy class's bound
# (tf32 5e-4, strict 1e-6, bf16 1e-2 against float64 of the rounded inputs).

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (wgmma and TMA exist only on sm_90)")
else:
    for name in ("wgmma_tf32", "warp_specialized", "wgmma_3xtf32", "wgmma_bf16", "wgmma_rs_tf32"):
        table, ok = fj.check(name)
        check_summary(name, table, ok)
        if name == "wgmma_tf32":
            refused = table[table["status"].str.startswith("unsupported")]
            print("    refuses, e.g.:", refused["status"].iloc[0] if len(refused) else "nothing")

# %% [markdown]
# `ModelNew` (default variant `fj.DEFAULT_VARIANT`: rung 9 when this notebook last ran, rung 12 from the run of
# 2026-11-30 (39c12ec..6e06902), rung 9 again since 2026-12-01) on a shape both refuse (odd T): a warning names the rung that ran instead, and the answer is still
# checked against float64.

# %%
import warnings
torch.manual_seed(0)
odd = fj.ModelNew(64, 96, 5, dilation=2).to(DEVICE)
x_odd = torch.randn(2, 64, 1037, device=DEVICE)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with torch.no_grad():
        y_odd = odd(x_odd)
for w in caught:
    print("warning:", w.message)
print("default variant:", fj.DEFAULT_VARIANT, "| rel. err vs float64:", f"{fj.rel_err(y_odd, fj.reference(odd, x_odd)):.2e}")

# %% [markdown]
# ## Time
#
# Rungs 5, 6, 8, 9, 10 and 12 in one run (float32), with the baselines; then the 16-bit rungs 7 and 11 in bfloat16.

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant stands in, on a small shape)")
    timing = fj.bench(["cpu"], shape=RUN_SHAPE, reps=RUN_REPS)
else:
    timing = fj.bench(["tf32_mma", "3xtf32_mma", "warp_specialized", "wgmma_tf32", "wgmma_3xtf32", "wgmma_rs_tf32"],
                      shape=SHAPE, reps=REPS)
timing[BENCH_COLS]

# %%
if HAS_GPU:
    timing16 = fj.bench(["bf16_io", "wgmma_bf16"], shape=SHAPE, dtype="bfloat16", reps=REPS, baselines=())
    display(timing16[BENCH_COLS])

# %% [markdown]
# Rungs 8-12 beside the rungs before them (`wgmma_bf16` in bfloat16 I/O), from the results log: `fj.plot_rung_times` draws the latest GPU `bench` row of each rung at this shape
# (p10-p90 whiskers), with eager, `torch.compile`, `clone` and the memory floor as lines. `logged_results()` is this
# notebook's log plus the committed `results/timings.csv`, so without a GPU the picture shows the logged GPU runs.

# %%
fig = fj.plot_rung_times(["warp_specialized", "wgmma_tf32", "wgmma_3xtf32", "wgmma_bf16", "wgmma_rs_tf32"], logged_results(), shape=SHAPE)
plt.show()

# %% [markdown]
# ## Where the time goes: stage ablation
#
# No counters needed: `scripts/ablate.py` builds the kernel with one stage left out at a time (`FUSED_ABLATE`:
# 1 depthwise, 2 MMA, 4 y stores, 8 x copies; the outputs of those builds are wrong by design) and times each.
# The difference to the full kernel is what a stage costs while the others still run.

# %%
import subprocess, sys
if not HAS_GPU:
    print("needs a CUDA GPU: skipped")
else:
    r = subprocess.run([sys.executable, str(fj.ROOT / "scripts" / "ablate.py"), "wgmma_tf32", "0", "1", "2", "4", "8", "15"],
                       capture_output=True, text=True, cwd=fj.ROOT)
    print("\n".join(ln for ln in r.stdout.splitlines() if "arn" not in ln))

# %% [markdown]
# ## Where the time goes: the per-warpgroup timeline
#
# A `FUSED_TRACE=1` build records `clock64()` at the phase boundaries of each block's first tiles (`kernels/wgmma.cuh`;
# `ext.trace()` returns the clocks, `ext.trace_layout()` their layout); rung 12 records per warpgroup.
# `traced_launch` runs one launch of that build at this shape, the L2 flushed as `bench` does, and decodes the
# records (`fj.decode_trace`: us since each block started); `fj.trace_table` is the median over blocks of each event
# per tile, and `fj.plot_trace` draws a sample of blocks, one bar per warpgroup, each piece coloured by the phase it
# ends. The records cost a few global stores per tile: a timing experiment, not a benchmark.

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the trace is the clock64() records of a launch on the GPU)")
else:
    events, G, trace_defines = traced_launch("wgmma_rs_tf32", SHAPE)
    print("wgmma_rs_tf32", fj.defines_str(trace_defines), "|", fj.trace_summary(events))
    display(fj.trace_table(events, G))
    fig = fj.plot_trace(events, warpgroups=G, title=f"wgmma_rs_tf32 {fj.defines_str(trace_defines)}: one launch, "
                                                    f"B={SHAPE['B']} C={SHAPE['C_in']} T={SHAPE['T']}")
    plt.show()

# %% [markdown]
# **Interpretation.** Rung 9 is the first rung to move clearly off rung 5's ~36 us: the MMA costs little once it
# runs under the depthwise, and TMA takes the x copies off the warps. It is still well above the 7.9 us floor.
# The ablation shows why: the stages still add up instead of hiding behind the memory traffic. Leaving out any
# one of them saves a few microseconds, and without all four a ~7 us skeleton remains (W_pw staging, barriers,
# launch, and the ~4.4 us this timer measures for an empty kernel: the L2 flush leaves dirty lines that are
# written back during the timed call). Rung 9's header lists what was tried (TMA stores for y: slower here) and
# what would close the gap next.
#
# Rung 12 removes the act round trip through shared memory and the per-tile block barriers, and issues fewer
# instructions per output. That alone bought nothing (a tie with rung 9, the run of 2026-11-30 (4fa178b..be2f50b)): what bounded both was the
# start, 6-7 us before any compute, with W_pw's fill queued behind every SM's x requests. Rung 12 as tuned now
# (results/tuned.json) lets W_pw's loads leave first and asks for each x tile in two channel halves, so a
# warpgroup starts on the first half while the second lands: in the bench of the run of 2026-11-30 (39c12ec..6e06902) it took 19.9 us against
# rung 9's 20.9 (results/logs/2026-11-30_15e7803_w_first_check_bench_trace.log); the table above is this
# notebook's own run. Its header has the per-warpgroup timeline and what is left: the depthwise + MMA of a tile
# still take ~3 us with both warpgroups busy, and the second tiles land only after the first ones' stores.

# %% [markdown]
# ## Eager's numbers at the fast SiLU's cost (2026-12-02)
#
# ModelNew must give eager's numbers, and under TF32 that means eager's activations: `x / (1 + exp(-x))` with the
# accurate `expf` and an IEEE division, then rounded to TF32: 24 SASS instructions against the fast form's 5
# (`ex2.approx`, `rcp.approx`; results/logs/2026-12-02_a0642d6_silu_sass.txt). But the GEMM only ever sees the *rounded* activation, with 13 low bits
# dropped, and the fast form lands within a few ulp of eager's value. So both round to the same TF32 number unless
# one of them sits within a few ulp of a rounding midpoint. `common.cuh`'s `silu_rounded` takes the fast value
# wherever its dropped bits are more than 16 ulp from the midpoint, and falls back to eager's formula for the
# ~0.4% of values that are not. That is cheap to prove for a function of one float32: `fj.silu_exhaustive()` runs
# all 2^32 inputs and finds 0 mismatches (a guard of 0 ulp finds 12281). Rung 9 went from 25.1 to 23.9 us at the
# headline with the same bits, and rung 11 (bf16) from 24.5 to 22.4. Rung 12 got slower with it (28.4 to 31.7), so
# it keeps eager's formula (results/logs/2026-12-02_0618161_guarded_silu_batched.log; docs/ladder.md). The table
# above is from this notebook's own run, made before this change.

# %% [markdown]
# ## Where the time goes now, and y by TMA stores (2026-12-03)
#
# Leaving parts out of ModelNew's fp32 kernel (rung 9, `scripts/ablate.py`, two runs at the headline; drawn by
# `scripts/plot_ablation.py` from results/logs/2026-12-03_99b1738_ablate_ncu.log and 2026-12-03_5273aae_dram_ablate.log):
#
# ![rung 9 with parts left out](../results/ablation_wgmma_wide_2026-12-03.png)
#
# The depthwise and the y stores cost ~5.5 us each of ~23, the MMA ~3. Bytes are not what binds it: with every
# tile's y written into one batch row (the same store instructions, all in L2) it runs as long, with every x tile
# read from one batch row (L2 hits) 1 us shorter ("without x copies" is slower, not faster: the depthwise then
# reads stale shared memory, whose values take the SiLU's slow path). Shortening one phase alone did not help: a
# depthwise with fewer instructions and twice the independent work per thread ran 0.7% slower, and 12
# producer warps beside one MMA warpgroup 2.7% slower (docs/ladder.md): the block's barriers tie the phases together.
#
# What did pay is the y stores where they were worst. In rung 11 (bf16 I/O) each thread wrote 16 bf16x2 values
# (a warp's store covered 8 rows x 16 bytes); now each warp stages its 16 rows in the act buffer its MMA has just
# read, in the 128-byte swizzle, and one lane writes them with a TMA store (`WG_Y_TMA` in `kernels/wgmma.cuh`):
# 22.30 -> 19.07 us in one A/B, and in the bench 18.9 us against the bf16 copy's 9.07
# (results/logs/2026-12-03_2f00678_y_tma_ab_sanitize.log, 2026-12-03_ec050bc_bf16_y_tma_verify_bench.log). In
# fp32 the same form is 6.6% slower: 8-byte stores already fill 32-byte sectors, and the extra barrier and the wait
# for the staging's reads cost more than they save. The tables above are from this notebook's own run, made before
# this change.

# %% [markdown]
# ## A tile's time, traced (2026-12-04 night)
#
# The trace of rung 9 at the headline (`scripts/trace_case.py wgmma_tf32`, one launch; thread 0 of warpgroup 0,
# results/traces/trace_wgmma_tf32_bae53a3.png): W_pw and the first x tile are in at ~4 us, then every tile takes
# 3.2-3.4 us in the same pieces: its share of the depthwise ~1.6, the previous tile's y stores ~0.3, a barrier and
# the next x request ~0.3-0.5, and the MMA issue ~0.5 (a warpgroup leaves the issue only once the tensor cores have
# taken most of its wgmmas).
#
# ![rung 9's per-block timeline](../results/traces/trace_wgmma_tf32_bae53a3.png)
#
# Two more traces with one phase left out (results/logs/2026-12-04_eae952b_ablate_traces.log) say which of those
# pieces bind:
#
# | build | block | a tile | the depthwise of tiles 1-3 |
# |---|---|---|---|
# | the kernel | 17.15 us | 3.2-3.4 us | 1.76, 1.60, 1.62 us |
# | no MMA | 14.85 | 2.7-2.9 | 1.83, 1.66, 1.69 |
# | no depthwise | 12.29 | 2.0-2.5, waiting for x | - |
#
# The depthwise takes as long with the tensor cores reading shared memory beside it as without. Without the
# depthwise the block waits for x: two x slots deliver a tile every ~2.3 us, the memory floor of this pipeline. So
# the serial chain of the GEMM warpgroups is ~0.9 us a tile over it. Asking for x earlier was slower at every shape
# (0.96-0.98x: x's reads then compete with y's writes). The TF32 rounding in one instruction (`cvt.rn.tf32.f32`)
# with simpler act store addresses bought 0.3-0.75% here in four A/B runs; rung 10, which rounds every activation
# twice, benched 31.2 us against 33.7 in the run before (separate runs; docs/ladder.md, "Runs of 2026-12-04 night").

# %% [markdown]
# ## The depthwise's groups on act rows (2026-12-05 night)
#
# The depthwise reads x in 16-byte windows from a box whose start is rounded down to 16 bytes (a TMA box that starts
# off 16 bytes faulted in rung 13). Where the 'same' padding is not a multiple of 16 bytes of x (bf16 at the headline:
# padding 4, 8 elements to a window), each group of 8 outputs straddled two groups of act rows: 17 groups a channel
# instead of 16, two of them partial, and each group derived the swizzled address of each of its 8 stores. Now each
# group is 8 act rows and reads its window 4 elements into the aligned chunks (one 8-byte load more), and its stores
# lie at offsets made once per thread (`WG_ROW_GROUPS` in `kernels/wgmma.cuh`): 30 instructions for a group's stores
# instead of 55 in the SASS (results/logs/2026-12-05_1899c50_row_groups_sass_loops.txt), the same activations in the
# same order, so y is bit for bit what it was. On an H100 (no H200 was lent):
# 1.02-1.11x at eleven shapes where it applies, the fp32 headline's kernel unchanged (its padding is a multiple of 4
# floats). With it, rung 11 as the warp-specialized kernel with four producer warpgroups at TILE_T 64 (1.01x without
# it) runs 1.06-1.35x faster than its TILE_T 128 form at seven shapes, and is the default: 1.56x the bf16 copy at the
# headline, from 1.73x. (results/logs/2026-12-05_45c73fb_row_groups_ab_check_sanitize_h100.log,
# _45c73fb_row_groups_bf16_ws_h100.log; docs/ladder.md, "Runs of 2026-12-05 night".)
#
# ![the row groups and rung 11's new form against the tree](../results/ab_row_groups_2026-12-05.png)
