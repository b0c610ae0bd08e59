// variant: accuracy=tf32 dtypes=float32 arch=9.0a
// Numerics since 2026-12-01: eager's SiLU and round-to-nearest-even TF32 operands (common.cuh). With them
//   this rung became slower than rung 09, which took over as ModelNew's default (docs/ladder.md). Its tuning
//   and the timeline below were measured with the tanh SiLU (FUSED_SILU=2) and ties-away rounding.
// Rung 12, act in registers (kernels/wgmma_rs.cuh): rung 09's math (TF32 tensor cores, fp32 accumulation,
// W_pw and act rounded to tf32, tanh SiLU) with the GEMM turned around, y^T = act^T W_pw^T, so the
// activations are wgmma's A operand straight from the registers that computed them:
//   - no act tile in smem: rung 09 stored every activation into a swizzled smem tile (address arithmetic,
//     a proxy fence and a block barrier per tile) for wgmma to read back;
//   - every warpgroup runs its own pipeline over its own 64-step tiles (own x slots, own mbarriers, a
//     warpgroup barrier instead of block barriers), so the warpgroups of an SM overlap each other's x
//     loads, depthwise, MMA and y stores instead of running them in lock-step;
//   - a thread computes the outputs of its A fragment: 2 time rows 8 apart x 2 channels per k-step, the
//     taps of the two rows that coincide loaded once; weights + bias from a smem table (2 LDS.128 per channel);
//   - wgmma m64n128k8 (N = C_out padded to 128) against W_pw in smem as the B operand (its row-major
//     layout is K-major), RS_CHUNK k-steps per batch, A double-buffered so the next chunk's depthwise runs
//     under this chunk's MMA; accumulators start at b_pw.
// Predicted (headline B=16 C=128 T=2048 K=5 d=2: 512 tiles of 64 steps): depthwise ~16 instructions per
//   output (18 x loads + 4 table loads + 20 FMA + 12 SiLU + 8 rounding per 4 outputs) vs ~25 in rung 09,
//   ~4k warp instructions per tile; the MMA 16 x 64 clk per tile (~0.55 us); x (19 MB) lands over ~4.5-5 us,
//   y leaves over ~4 us: with the warpgroups' phases overlapping, ~9-11 us + the timer's ~4.4 us -> 13-15 us.
// Measured: see the README's results table (generated from results/timings.csv) and docs/ladder.md.
//   With the tanh SiLU it was the fastest TF32 rung, a little ahead of rung 09, and somewhat slower than
//   predicted. History (versions, sweeps, ablations): docs/ladder.md.
//   Shared memory: 219.6 KiB at the headline (W_pw 64 + tables 10.5 + 2 x 2 x 36 KiB x slots).
//   Knobs: wgmma_rs.cuh's RS_WARPGROUPS, RS_X_SLOTS, RS_CHUNK, RS_X_AHEAD, RS_X_PARTS, RS_X_NEXT_PART,
//   RS_W_FIRST (its defaults are the tuned configuration, results/tuned.json) and common.cuh's FUSED_SILU.
//   x boxes start (-padding) mod 4 steps early: a TMA box's innermost start coordinate must be 16-byte
//   aligned (an unaligned one is an "illegal instruction" at the TMA).
// Why not faster (traced timeline, scripts/trace_case.py): W_pw is staged first, then the first x halves
//   land, but the first tile's depthwise + MMA and its y stores run before the second tiles (requested
//   once the first tile's last half is in) land, behind every SM's y stores. Per SM there are ~4 tiles of
//   64 steps, so there is little to pipeline, and the phases of the SMs line up. The L2 flush's dirty lines
//   are not the bound (scripts/flush_kinds.py): after a flush that reads instead of writes the copy gets
//   faster but this kernel slower, for reasons not found. Next: the second tiles requested earlier without
//   delaying the first (RS_X_EAGER asked too early), y stores that leave per chunk of channels instead of
//   at the end of the tile, the run-time-K kernels unserialized (ptxas C7520), the 16-bit I/O form (A = bf16
//   pairs).
// Shape limits (fused_unsupported): an sm_90 GPU; fp32 x with T % 4 == 0 and 16-byte alignment (TMA),
//   dilation <= 4 and (K-1)*dilation <= 16; C_in <= 128, C_out <= 128. Where span + (-padding mod 4) > 8
//   (88-float x rows) only one warpgroup's two slots fit, so 1 of the 2 warpgroups works (slower, correct).
//   K = 3, 5, 7 are compile-time (one kernel per dilation each); other K use a run-time tap loop, where ptxas
//   serializes the wgmmas (ptxas C7520).
// Timing experiments: FUSED_ABLATE (1 depthwise, 2 MMA, 4 y stores, 8 x copies; scripts/ablate.py) and
//   FUSED_TRACE=1 (scripts/trace_case.py; a trace "tile" is warpgroup g's n-th tile, g + RS_WARPGROUPS n).
// The guarded SiLU (common.cuh silu_rounded) made this rung slower, per value 28.0 -> 31.6 us and in batches over
// a chunk 28.4 -> 31.7 (ab, logs/2026-12-02_{3a08f8b,0618161}_guarded_silu_*; cause not found: the SASS keeps its
// wgmma waits and spills nothing), so it evaluates eager's formula at every element unless a build asks otherwise.
// That formula without the division's slow-path call (silu_nocall, the same bits): 27.30 -> 24.58 us in one ab,
// still ~2% behind rung 09 (23.8); with the guard on top 30.82 (logs/2026-12-03_5457865_silu_nocall_ab.log).
#ifndef FUSED_SILU_GUARD
#define FUSED_SILU_GUARD -1
#endif
#ifndef FUSED_SILU_NOCALL
#define FUSED_SILU_NOCALL 1
#endif
#include "wgmma_rs.cuh"

const char* fused_unsupported(const FusedArgs& a) {
  if (const char* why = require_float32(a)) return why;
  return rs_refusal(a);
}

void fused_forward(const FusedArgs& a, void* stream) { rs_launch(a, stream); }
