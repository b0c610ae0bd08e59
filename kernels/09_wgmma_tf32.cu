// variant: accuracy=tf32 dtypes=float32 arch=9.0a
// Numerics since 2026-12-01 (ModelNew's contract: eager's numbers): the SiLU is eager's x / (1 + exp(-x)) and
//   both GEMM operands are rounded to TF32 round-to-nearest-even (common.cuh), so max |y - eager| is 0 at the
//   headline. It cost 20.8 -> 24.4 us (bench at 7e6098c, logs/2026-12-01_7e6098c_bench.log; 24.5 at 8dfb761);
//   still the fastest rung with eager's numbers, hence ModelNew's default. The tanh SiLU below is FUSED_SILU=2.
// Rung 9, Hopper wgmma + TMA (kernels/wgmma.cuh, shared with rungs 10-11): rung 5's math (TF32 tensor
// cores, fp32 accumulation, W_pw and act rounded to tf32), but the pointwise GEMM is wgmma.mma_async (sm_90a) instead of mma.sync, it runs under the next
// tile's depthwise instead of after it, and the x tiles arrive by TMA:
//   - four warpgroups (512 threads; WARPGROUPS=2 also builds), each owning 64 output channels x TILE_T/2
//     time steps; one m64nNk8 wgmma per 8 input channels reads W_pw and act straight from shared memory
//     (no per-warp fragment loads: rung 5 issued ~21M warp instructions for 0.5M HMMA);
//   - W_pw (C_out padded to 128 rows, C_in to K = 128) and act are stored K-major in the 128-byte swizzled
//     layout wgmma reads (8 rows x 128 B atoms, 16-byte chunk index XOR row % 8); W_pw once per block;
//   - act is double-buffered: the wgmma of tile i is issued asynchronously, the block computes the
//     depthwise + SiLU of tile i+1 into the other buffer meanwhile, then waits for the MMA and stores y(i)
//     from the accumulators;
//   - x tiles are double-buffered, one 3-D TMA box each (zeros outside the tensor), issued by one thread
//     and completed on an mbarrier: no warp spends instructions on copies;
//   - the depthwise is tc_dw_silu_x4's windowed form (four outputs per thread from 16-byte x loads,
//     dilation and K compile-time constants), with a thread owning one channel for the whole kernel (its
//     taps and bias in registers) and lanes on consecutive channels, so act stores are conflict-free.
// Predicted (headline B=16 C=128 T=2048 K=5 d=2, TILE_T=64: 512 tiles, 3.9 per SM): the MMA (1M FMA per
//   tile, ~1k cycles at wgmma's 1024 TF32 FMA/clk/SM) hides under the depthwise (~4k warp instructions per
//   tile, ~1-2k cycles on 8 warps); per tile 72 KB of DRAM traffic at 4.27 TB/s / 132 SMs = 2.2 us, so the
//   kernel is memory-bound if one tile of x prefetch keeps enough bytes in flight: ~8.5-10 us
//   (floor 7.9 us) plus W_pw staging and the first tile (~1.5 us).
// Measured: 21.0 us median (p10-p90 20.4-21.8), rel. err 1.7e-4 (= eager's TF32 default), 4.08x eager
//   (85.6 us) and 1.72x rung 5 (36.1 us) in the same run (H200, commit 7ba44a3, results/timings.csv,
//   results/logs/2026-11-29_a0e0217_gpu_tests_notebook07.log = notebook 07; the bench at 889b9c0 in
//   2026-11-29_7ba44a3_check_sanitize_bench_ab: 21.0 us too); 2.7x the 7.9 us floor, 1.6x the same run's 13.1 us copy, 2.1x the
//   prediction, and rung 5's <= 10 us target missed by 2.1x. Tuned (results/tuned.json = wgmma.cuh's defaults):
//   WARPGROUPS=4 TILE_T=64 WG_X_FIRST=1 (then with the tanh SiLU). ptxas (sm_90a, nvcc 13.0, D = 4, 3, 2, 1): 110, 110,
//   114, 118 registers, 0 spills; dynamic smem 205 KiB at the headline (W_pw 64 + act 2 x 32 + x 2 x 38 KiB;
//   both in results/logs/wgmma_ptxas_smem.txt) -> 1 block/SM. memcheck + racecheck clean (2026-11-29_7ba44a3_check_sanitize_bench_ab;
//   sanitize_case includes a shape with 2 tiles per block).
// How it got there (each line: same-run rung 5 at 35.9-36.5 us; logs 2026-11-29_{03d9ce1_run,de07dbb_run,de07dbb_run_2,2359bdf_run,42c4811_run,d1f8872_run,42c4811_run_2}):
//   v1 x by cp.async, 2 warpgroups, run-time K: 33.0 us (3f54647). ncu (results/profiles/
//      ncu_wgmma_tf32_03d9ce1.txt): 11.0M warp instructions, 8 warps/SM, DRAM 12% of peak. Stage costs
//      (scripts/ablate.py; full 32.8 us): depthwise 9.0, MMA 1.8, y stores 8.3, x copies 9.3; all four out 6.5.
//   v2 x tiles by TMA + 4 warpgroups (16 warps): 25.6 us (186d76d). Stage costs (full 25.6): depthwise 5.9,
//      MMA 2.4, y stores 7.8, x copies 2.9; all out 6.7.
//   v3 y staged in smem (128-byte swizzle) + TMA bulk tensor stores: 26.6 us vs 25.1 us from the registers
//      (976a82e, 2026-11-29_2359bdf_run.log): two more barriers per tile cost more than they save. Kept as
//      FUSED_Y_TMA=1 for A/B until v6 dropped it; y is stored from the accumulators.
//   v4 depthwise with compile-time K (the run-time form issued all 16/D+1 taps predicated: its loop per 4
//      outputs was 170-223 SASS instructions, now 106-110 at K=5, d=2, both store paths counted;
//      results/logs/rung09_ptxas_sass.txt) + y stores without per-element tests: 23.0 us (94f8dd0). Stage
//      costs (full 23.0): depthwise 5.0, MMA 3.0, y stores 2.9, x copies 2.9; all out 7.2.
//   v5 W_pw staged with 16-byte loads instead of cp.async (racecheck reported a cp.async write hazard at
//      94f8dd0, 2026-11-29_d1f8872_run.log): 22.2 us (77fa532), racecheck clean.
//   v6 the kernel became kernels/wgmma.cuh, a template over the I/O type and the 3xTF32 split (rungs 10,
//      11). First cut 24.4-24.7 us: an interleaved A/B against v5 (2026-11-29_6b7ea7a_ab_regression, 2026-11-29_e76836e_ab_after_slots) gave 0.84-0.86; a
//      bisect over three suspects (2026-11-29_e76836e_bisect) found the W_pw fill: its unrolled loop also held the
//      scalar fallback, so the 16-byte loads no longer all left before the first store, and the fill is on
//      every block's critical path. Fixed: 22.5 us in the bench (6e7a8f6), but an interleaved A/B against
//      v5 still gives 0.95 (CI 0.944-0.956, v5 22.8 vs 24.0 us under ab; 2026-11-29_e76836e_ab_prev.log):
//      ~1 us of the template's cost is not found yet (the run of 2026-11-30 (4fa178b..be2f50b): unprimed ab calls were biased by up to ~2 us by
//      the instruction caches of two alternating kernels, so this 0.95 is suspect). Issuing W_pw's loads before the first x wait and its
//      stores after depthwise(0) (WG_W_LATE=1) measured 22.3 vs 22.0 us: not kept.
//   v7 (2026-11-29 (4e8b9c4..3f95ac1)) SiLU as h + h tanh(h), h = v/2 (one MUFU op per output instead of ex2 + rcp; same rel. err
//      1.7e-4) and the first x tile's load alone (the second slot's once it has landed, WG_X_FIRST): 21.0 us.
//      Same-run sweep pairs (2026-11-29_4e8b9c4_knob_sweep_ablate): tanh 21.47 vs 22.14, 21.54 vs 21.98; first tile alone 21.12
//      vs 21.41 (2026-11-29_6329149_prefetch_sweep_trace). Measured and not kept (knobs in wgmma.cuh; sweeps 2026-11-29_{4e8b9c4_ws_sweep_check,4e8b9c4_knob_sweep_ablate,6329149_prefetch_sweep_trace,3f95ac1_tma_late_sweep}): the
//      warp-specialized kernel (WG_WS=1, two producer warpgroups for the depthwise, two for MMA + stores:
//      21.6-22.4 us), 4 x slots at TILE_T=32 (23.6-26.6), x tiles prefetched into L2 1-3 tiles ahead
//      (WG_L2_PREFETCH: 21.4-22.2), the next x load issued after thread 0's wgmmas (WG_TMA_LATE: 21.12-21.15
//      vs 20.96-20.99 alternating in one sweep, 2026-11-29_3f95ac1_tma_late_sweep; `ab` had said 0.937, 2026-11-29_3f95ac1_tma_late_ab: an artefact of ab's unprimed
//      calls, found in the run of 2026-11-30 (4fa178b..be2f50b), NOTES), W_pw's loads before the first x request (WG_W_FIRST, rung 12's
//      gain: 21.30 / 21.39 vs 20.86 / 21.07 alternating in one sweep, 2026-11-30_15e7803_w_first_check_bench_trace).
// Why not at the floor: a per-block timeline (FUSED_TRACE=1 build, scripts/trace_case.py; 2026-11-29_4e8b9c4_trace, 2026-11-29_6329149_prefetch_sweep_trace,
//   drawn in results/traces/trace_wgmma_tf32_06f96e4.png) says where a block's ~19 us go. The first x
//   tile lands 4.7 us after the block starts (3.5 us with WG_X_FIRST): every SM asks for its tiles at once
//   while DRAM also writes back the L2 flush's
//   dirty lines. Then each tile costs ~3.2 us one phase after another: depthwise 1.0-1.3 us, the MMA issue
//   0.9 us (the warps leave wgmma's issue only when most of the MMA has run: four warpgroups' 16 wgmmas each
//   queue on the SM's tensor cores, so little of the MMA hides under the depthwise), 0.4-1.7 us more in the
//   steps where thread 0 first issues the next x TMA load (issuing it after the wgmmas, WG_TMA_LATE, did not
//   shorten the kernel, 2026-11-29_3f95ac1_tma_late_sweep: the cause is not settled), y stores
//   0.3-0.6 us, barriers. Warp specialization moves the depthwise to 8 warps, where it takes 1.7-2.5 us per
//   tile (it is latency-bound per warp): the producers then bound the kernel, hence no gain. Earlier ncu
//   (results/profiles/ncu_wgmma_tf32_2359bdf.txt): 16 warps/SM, DRAM 17% of peak, ~0.4 instructions issued
//   per cycle per scheduler. An empty kernel measures 4.4 us and the 33.6 MB copy 13.1-13.8 us under this timer
//   (2026-11-29_d1f8872_timer_floor.txt; the clone row of each bench).
// Next: find what lengthens the steps that issue a TMA load (a dedicated producer warp); fewer, larger wgmmas
//   per tile (N = 64-128 from fewer warpgroups) or the MMA issue split around the depthwise; fewer instructions
//   per depthwise output (integer work is ~35 of the loop's ~100 SASS instructions per 4 outputs); W_pw as
//   the A operand from registers, for a deeper x ring.
// Shape limits (fused_unsupported): an sm_90 GPU (wgmma is sm_90a-only); fp32 x with T % 4 == 0 and
//   16-byte alignment, dilation <= 4 and (K-1)*dilation <= 16 (the windowed depthwise); C_in <= 128,
//   C_out <= 128. ModelNew routes every other shape to the next rung of its accuracy class (rung 8, then 5).
// Timing experiments: FUSED_ABLATE (common.cuh; scripts/ablate.py) leaves out the depthwise (1), the
//   MMAs (2), the y stores (4) or the x copies (8).
#include "wgmma.cuh"  // its defaults are this rung's tuned configuration

const char* fused_unsupported(const FusedArgs& a) {
  if (const char* why = require_float32(a)) return why;
  return wg_refusal<float, false>(a);
}

void fused_forward(const FusedArgs& a, void* stream) { wg_launch<float, false>(a, stream); }
