// variant: accuracy=tf32 dtypes=float32 arch=9.0a
// Numerics since 2026-12-01: eager's SiLU and round-to-nearest-even TF32 operands (common.cuh); max |y - eager|
//   7.2e-7 at the headline. It cost 19.7 -> 27.8 us (logs/2026-12-01_7e6098c_bench.log; 26.1 at 8dfb761), now
//   slower than rung 09 (24.4), which took over as ModelNew's default. The figures below are of the tanh SiLU
//   (FUSED_SILU=2) and ties-away rounding.
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
// Measured: 19.9 us median (p10-p90 19.3-20.6), rel. err 1.7e-4, in the same bench as rung 09's 20.9 us
//   (eager 85.7 -> 4.31x; H200, commit 26f98a5db6af, results/timings.csv, results/logs/
//   2026-11-30_15e7803_w_first_check_bench_trace.log); notebook 07's run (2026-11-30_a008b31_check_notebook07): 19.7 vs rung 09's 20.8 us. The
//   fastest TF32 rung, ~5% ahead of rung 09; 2.5x the 7.9 us floor, 1.5x the same run's 13.2 us copy; the
//   prediction missed by ~1.4x.
//   Tuned (results/tuned.json = wgmma_rs.cuh's defaults): RS_WARPGROUPS=2 RS_X_SLOTS=2 RS_CHUNK=4 RS_X_AHEAD=2
//   RS_X_PARTS=2 RS_W_FIRST=1 RS_X_EAGER=0.
//   ptxas (sm_90a, nvcc 13.0, K=5, D = 4, 3, 2, 1): 199, 208, 206, 208 registers, 0 spills; smem 219.6 KiB
//   at the headline (W_pw 64 + tables 10.5 + 2 x 2 x 36 KiB x slots); results/logs/wgmma_rs_ptxas.txt.
//   Battery PASS with NaN-poisoned smem (2026-11-30_39c12ec_sanitize_gpu_tests at the config of 2026-11-30 (4fa178b..be2f50b), 2026-11-30_a008b31_check_notebook07 at the tuned one and at 4 parts),
//   compute-sanitizer memcheck 0 errors and racecheck 0 hazards (2026-11-30_39c12ec_sanitize_gpu_tests; 2026-11-30_15e7803_w_first_check_bench_trace at the tuned config).
// How it got there (the runs of 2026-11-30; logs results/logs/2026-11-30_{4fa178b,dd8477f,8e03485,be2f50b,26f98a5,15e7803}_*; traces in results/traces/trace_wgmma_rs_tf32_*):
//   v1 4 warpgroups x 1 x slot (one tile each at the headline: 528 warpgroups for 512 tiles), chunks of 2:
//      24.8 us vs rung 09 20.8 in one bench (2026-11-30_4fa178b_rs_first). The K=3 shapes faulted ("illegal instruction" at the TMA):
//      a box's innermost start coordinate must be 16-byte aligned; the box now starts (-padding) mod 4 steps
//      early. A per-warpgroup timeline (FUSED_TRACE=1, 2026-11-30_dd8477f_rs_trace_ablate) showed the phases of all four warpgroups in
//      lock-step: W_pw staged at 7.4 us (queued behind all four x tiles), x landed at ~8 us, depthwise + MMA
//      6.5 us (four tiles at once, ~0.4 instructions per cycle per scheduler), y stores to 17.5 us; the
//      ablation (2026-11-30_dd8477f_rs_trace_ablate): full 23.3 us, without depthwise 17.6, MMA 16.1, y stores 12.5, x copies 18.2.
//   v2 depthwise table loads issued together + first x tiles chained (RS_X_AHEAD: warpgroup g asks for its
//      tile when g - 2's has landed): 21.6-21.8 us (same-run sweep 2026-11-30_dd8477f_rs_probe_chain, 2026-11-30_dd8477f_check_sanitize_sweep_bench: 2 ahead 21.73/21.84, 1 ahead
//      22.40/22.30, 4 ahead 23.2); bench 21.8 vs rung 09 21.0 (2026-11-30_dd8477f_check_sanitize_sweep_bench), ab 1.058 (2026-11-30_8e03485_aa_ab_trace_notebook07).
//   v3 two x slots per warpgroup (RS_X_SLOTS=2: the next tile loads while this one computes and stores), so
//      2 warpgroups per block (255-register cap: chunks of 4 k-steps, fewer MMA waits): 20.5 us in the sweep
//      (2026-11-30_be2f50b_rs_slots_sweep_check_sanitize: 2 warpgroups x 1 slot 23.6-24.3; 4 x 1 slot 20.9-21.8), 20.9 in the bench vs rung 09's 20.8.
//   v4 W_pw's loads first (RS_W_FIRST: the first x requests leave once they are in flight, not before them) and
//      each x tile in two channel halves (RS_X_PARTS=2: two TMA boxes, two mbarriers; chunks 0-1 start once the
//      first half has landed): two same-run sweeps in reversed order (2026-11-30_26f98a5_rs_parts_wfirst_sweep), old config 21.66 / 21.70 us, W first
//      20.16 / 20.11, W first + 2 parts 19.58 / 19.68, + 4 parts 20.67 / 20.45; all x slots requested at once
//      (RS_X_EAGER) slower in every combination (+0.3 to +2 us). Primed ab against the old config: 0.894 (CI
//      0.891-0.897, 2026-11-30_15e7803_w_first_check_bench_trace). The same W_pw-first order made rungs 09 and 11 slower (2026-11-30_15e7803_w_first_check_bench_trace), so they keep x first.
// Why not faster: the traced kernel's timeline (2026-11-30_15e7803_w_first_check_bench_trace, results/traces/trace_wgmma_rs_tf32_26f98a5.png; tracing
//   slows it to ~19.5 us of block time): W_pw is staged at 3.2 us (6.4 in the run of 2026-11-30 (4fa178b..be2f50b)), the first x half lands
//   at 4.9-5.1 us (7.0), but the first tile's depthwise + MMA then runs to 10.6 us, its y stores take ~3 us, and
//   the second tiles (requested once the first tile's last half is in) land only at 14.3 us, behind every SM's
//   y stores. Per SM there are ~4 tiles of 64 steps, so there is little to pipeline, and the phases of the
//   SMs line up. The L2 flush's dirty lines are not the bound: after a flush that reads instead of writes
//   (scripts/flush_kinds.py, 2026-11-30_53242e2_flush_kinds) the copy drops from 13.3 to 11.6 us, but this kernel takes 21.7 us, not
//   19.8 (rung 09 21.3 vs 20.8), for reasons not found. Next: the second tiles requested earlier without
//   delaying the first (RS_X_EAGER asks too early), y stores that leave per chunk of channels instead of at the
//   end of the tile, the run-time-K kernels unserialized (ptxas C7520), the 16-bit I/O form (A = bf16 pairs).
// Shape limits (fused_unsupported): an sm_90 GPU; fp32 x with T % 4 == 0 and 16-byte alignment (TMA),
//   dilation <= 4 and (K-1)*dilation <= 16; C_in <= 128, C_out <= 128. Where span + (-padding mod 4) > 8
//   (88-float x rows) only one warpgroup's two slots fit, so 1 of the 2 warpgroups works (slower, correct).
//   K = 3, 5, 7 are compile-time (one kernel per dilation each); other K use a run-time tap loop, where ptxas
//   serializes the wgmmas (C7520 in results/logs/wgmma_rs_ptxas.txt).
// Timing experiments: FUSED_ABLATE (1 depthwise, 2 MMA, 4 y stores, 8 x copies; scripts/ablate.py) and
//   FUSED_TRACE=1 (scripts/trace_case.py; a trace "tile" is warpgroup g's n-th tile, g + RS_WARPGROUPS n).
#include "wgmma_rs.cuh"

const char* fused_unsupported(const FusedArgs& a) {
  if (const char* why = require_float32(a)) return why;
  return rs_refusal(a);
}

void fused_forward(const FusedArgs& a, void* stream) { rs_launch(a, stream); }
