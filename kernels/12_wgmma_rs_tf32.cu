// variant: accuracy=tf32 dtypes=float32 arch=9.0a
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
// Measured: 20.9 us median (p10-p90 20.4-21.7), rel. err 1.7e-4, in the same bench as rung 09's 20.8 us
//   (eager 85.6 -> 4.09x; H200, commit 1c17acfb6d98, results/timings.csv, results/logs/
//   h200_session_25g_rs_bench_ab_trace.log); the primed A/B against rung 09: ratio 1.000 (CI 0.997-1.003). A
//   tie with rung 09, 2.6x the 7.9 us floor, 1.6x the same run's 13.2 us copy; the prediction missed by ~1.5x.
//   Tuned (results/tuned.json = wgmma_rs.cuh's defaults): RS_WARPGROUPS=2 RS_X_SLOTS=2 RS_CHUNK=4 RS_X_AHEAD=2.
//   ptxas (sm_90a, nvcc 13.0, K=5, D = 4, 3, 2, 1): 221, 212, 217, 212 registers, 0 spills; smem 219.5 KiB
//   at the headline (W_pw 64 + tables 10.5 + 2 x 2 x 36 KiB x slots); results/logs/wgmma_rs_ptxas.txt.
//   Battery PASS, compute-sanitizer memcheck 0 errors and racecheck 0 hazards (h200_session_25f).
//   Fixed after the last H200 run, by reading (not re-run there): with 2 x slots per warpgroup the rows past C_in
//   of the second warpgroup's slots were not zeroed (x rows C_in..127 are outside the TMA box); their weights
//   are zero, so finite leftovers gave the right answer (the battery passed), but a NaN left in smem would not.
// How it got there (session 25; logs h200_session_25a-g; traces in results/traces/trace_wgmma_rs_tf32_*):
//   v1 4 warpgroups x 1 x slot (one tile each at the headline: 528 warpgroups for 512 tiles), chunks of 2:
//      24.8 us vs rung 09 20.8 in one bench (25a). The K=3 shapes faulted ("illegal instruction" at the TMA):
//      a box's innermost start coordinate must be 16-byte aligned; the box now starts (-padding) mod 4 steps
//      early. A per-warpgroup timeline (FUSED_TRACE=1, 25b) showed the phases of all four warpgroups in
//      lock-step: W_pw staged at 7.4 us (queued behind all four x tiles), x landed at ~8 us, depthwise + MMA
//      6.5 us (four tiles at once, ~0.4 instructions per cycle per scheduler), y stores to 17.5 us; the
//      ablation (25b): full 23.3 us, without depthwise 17.6, MMA 16.1, y stores 12.5, x copies 18.2.
//   v2 depthwise table loads issued together + first x tiles chained (RS_X_AHEAD: warpgroup g asks for its
//      tile when g - 2's has landed): 21.6-21.8 us (same-run sweep 25c/25d: 2 ahead 21.73/21.84, 1 ahead
//      22.40/22.30, 4 ahead 23.2); bench 21.8 vs rung 09 21.0 (25d), ab 1.058 (25e).
//   v3 two x slots per warpgroup (RS_X_SLOTS=2: the next tile loads while this one computes and stores), so
//      2 warpgroups per block (255-register cap: chunks of 4 k-steps, fewer MMA waits): 20.5 us in the sweep
//      (25f: 2 warpgroups x 1 slot 23.6-24.3; 4 x 1 slot 20.9-21.8), 20.9 in the bench vs rung 09's 20.8.
// Why not faster: the tuned kernel's timeline (25g, results/traces/trace_wgmma_rs_tf32_1c17acf.png, one bar per
//   warpgroup: scripts/trace_case.py --from-csv .. --warpgroups 2): W_pw is staged at
//   6.4 us and the first x tiles land at 7.0 us (every SM asks for 2 x 36 KB + 64 KB of W_pw at once while
//   DRAM also writes back the L2 flush's dirty lines); depthwise + MMA then take 3.0 us per tile with both
//   warpgroups busy, y stores 1.2-1.8 us; the second tiles land at 12.0 us (all SMs load and store at once),
//   and the block ends at ~16.6 us. So the act round trip through smem that this rung removes was not what
//   bounded rung 09: the start (W_pw + first x: 6-7 us before any compute) and the per-tile depthwise +
//   MMA (the 4 warps of a warpgroup meet at every wgmma.fence, and each chunk waits for the MMA of the
//   chunk before last) are. Next: W_pw staged before the x requests (or by TMA), deeper A buffering, the
//   run-time-K kernels unserialized (ptxas C7520), and the 16-bit I/O form (A = bf16 pairs from registers).
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
