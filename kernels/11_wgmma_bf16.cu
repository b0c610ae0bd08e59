// variant: accuracy=bf16 dtypes=bfloat16,float16 arch=9.0a
// Numerics since 2026-12-01: eager's SiLU (FUSED_SILU=0) by default; the tanh form of the figures below is
//   FUSED_SILU=2. Default build 23.3 us in bfloat16, max |y - eager| one bfloat16 ulp (logs/2026-12-01_7e6098c_bench.log).
// Rung 11, 16-bit I/O on wgmma: rung 09's Hopper kernel (wgmma.cuh) with bfloat16 or float16 x and y and
// the GEMM in bf16 (m64nNk16, fp32 accumulation); rung 07's goal (half the bytes of fp32 I/O) on the
// kernel that overlaps the GEMM with the depthwise:
//   - x tiles are 16-bit TMA boxes; the depthwise reads 16-byte windows of 8 elements (8 outputs per
//     group), converts to fp32 (bf16: a shift), accumulates in fp32, and writes act as bf16;
//   - W_pw is staged as bf16 (32 KB), act tiles are half rung 09's, so smem holds two x slots and
//     TILE_T = 128 also fits; y is rounded to the I/O type in the epilogue (bf16x2 / half2 stores);
//   - the GEMM runs in bf16 for fp16 I/O too: bf16's range holds any activation (fp16's does not), and
//     the error stays within the bf16 tolerance.
// Predicted (headline B=16 C=128 T=2048 K=5 d=2, bf16, TILE_T=64: 512 tiles): memory floor 16.8 MB /
//   4.27 TB/s = 3.9 us; the depthwise issues about rung 09's instructions per output (the window loads
//   halve, the conversions add), the MMA halves (k16), the y stores halve: ~15-18 us, issue-bound like
//   rung 09, vs rung 07's 35.6 us; the 6 us target stays out of reach for the same reason.
// Measured: bf16 19.9 us median (p10-p90 19.3-20.7), rel. err 2.2e-3 vs float64 of the rounded inputs
//   (H200, commit 7ba44a3, notebook 07's run, 2026-11-29_a0e0217_gpu_tests_notebook07.log); in the bench at
//   889b9c0 (2026-11-29_7ba44a3_check_sanitize_bench_ab): bf16 19.7 us, fp16 19.5 us (19.0-20.3), 1.4e-3; rung 07 in that run 35.6 /
//   35.7 us -> 1.8x. 5.0x the 3.96 us bf16 floor, 1.1x the prediction's upper end; the <= 6 us target
//   missed by 3.3x. Halving rung 09's bytes (21.0 us in fp32) buys 1 us: like rung 09 the kernel is bound
//   by its phases running one after another, not by DRAM. The per-block timeline (FUSED_TRACE=1,
//   scripts/trace_case.py, 2026-11-29_4e8b9c4_trace) shows the y stores as this rung's largest phase: 2.6-3.3 us per
//   128-column tile (each thread's 16 bf16x2 stores; a warp's store covers 8 rows x 16 bytes), against the
//   depthwise's 1.7-3.3 us and the first x tile's 4.5 us.
//   History: the run of 2026-11-29 (6b7ea7a..4fcdc02) (6e7a8f6) 20.4 / 20.3 us; sweep (2026-11-29_6b7ea7a_check_sweep, 2026-11-29_6b7ea7a_ab_regression): TILE_T=64 with 2 / 4
//   warpgroups 21.8 / 21.1 us, TILE_T=128 with 4: 20.6; 2 blocks/SM (TILE_T=64, 2 warpgroups,
//   WG_MIN_BLOCKS=2: 109 KiB each) 21.0 vs 22.0 with one. The run of 2026-11-29 (4e8b9c4..3f95ac1) (2026-11-29_4e8b9c4_knob_sweep_ablate, 2026-11-29_6329149_prefetch_sweep_trace): the tanh SiLU
//   (WG_SILU_TANH=1) 19.9-20.1 us at TILE_T=128 (20.7 without it in 2026-11-29_4e8b9c4_ws_sweep_check's sweep) and the first tile's load
//   alone (WG_X_FIRST=1) 19.8; warp-specialized (WG_WS=1) 19.8-20.1, 4 x slots 19.8-20.4, L2 prefetch
//   20.0-20.2, the next x load after thread 0's wgmmas (WG_TMA_LATE) 19.79 vs 19.94 (2026-11-29_3f95ac1_tma_late_sweep): within noise,
//   not kept; W_pw's loads before the first x request (WG_W_FIRST, rung 12's gain) 20.35 / 20.30 vs 19.90 /
//   19.90 alternating in one sweep (2026-11-30_15e7803_w_first_check_bench_trace): slower, not kept. Tuned (results/tuned.json = this file's settings over wgmma.cuh's defaults): TILE_T=128 WARPGROUPS=4 (then with the tanh SiLU)
//   WG_X_FIRST=1.
//   ptxas (sm_90a, D = 4, 3, 2, 1, for __half and bf16 alike): 112, 112, 114, 109 registers, 0 spills;
//   dynamic smem 173 KiB at the headline (W_pw 32 + act 2 x 32 + x 2 x 38 KiB) -> 1 block/SM (both in
//   results/logs/wgmma_ptxas_smem.txt).
//   memcheck + racecheck clean (2026-11-29_7ba44a3_check_sanitize_bench_ab).
// Next: stage y through the act buffer the MMA has just read and store it with TMA (whole rows instead of
//   16-byte pieces), which the warp-specialized form can do without a block-wide barrier.
// Shape limits (fused_unsupported): an sm_90 GPU, bfloat16 or float16 x with T % 8 == 0 and 16-byte
//   alignment, dilation <= 4, (K-1)*dilation <= 16, C_in <= 128, C_out <= 128. ModelNew routes every other
//   shape (and float32 input) to the next rung that serves it (rung 07 for 16-bit input).
#ifndef TILE_T
#define TILE_T 128
#endif
#include "wgmma.cuh"

const char* fused_unsupported(const FusedArgs& a) {
  switch (a.dtype) {
    case FUSED_BF16: return wg_refusal<__nv_bfloat16, false>(a);
    case FUSED_F16: return wg_refusal<__half, false>(a);
    default: return "this variant takes bfloat16 or float16 input only (float32: rung 09 wgmma_tf32)";
  }
}

void fused_forward(const FusedArgs& a, void* stream) {
  switch (a.dtype) {
    case FUSED_BF16: return wg_launch<__nv_bfloat16, false>(a, stream);
    case FUSED_F16: return wg_launch<__half, false>(a, stream);
    default: throw std::runtime_error("wgmma_bf16: unsupported dtype code " + std::to_string(a.dtype));
  }
}
