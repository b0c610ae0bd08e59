// variant: accuracy=bf16 dtypes=bfloat16,float16 arch=9.0a
// Numerics since 2026-12-01: eager's SiLU (FUSED_SILU=0) by default; FUSED_SILU=2 is the tanh form the
//   history in docs/ladder.md was measured with. Since 2026-12-02 eager's SiLU rounded to bf16 comes from
//   common.cuh's guarded form (same bits, every input checked): ab at the headline 24.5 -> 22.4 us (bf16 I/O,
//   logs/2026-12-02_0618161_guarded_silu_batched.log).
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
//   rung 09, about half rung 07's time; the 6 us target stays out of reach for the same reason.
// Measured: see the README's results table (generated from results/timings.csv) and docs/ladder.md.
//   Slightly above the prediction's upper end, far from the 6 us target. Halving rung 09's bytes bought
//   little: like rung 09 the kernel is bound by its phases running one after another, not by DRAM. The
//   per-block timeline (FUSED_TRACE=1, scripts/trace_case.py) shows the y stores as this rung's largest
//   phase (each thread's 16 bf16x2 stores; a warp's store covers 8 rows x 16 bytes). History and the knobs
//   measured and not kept: docs/ladder.md.
//   Shared memory (the form before 2026-12-05 night, TILE_T 128): 173 KiB dynamic at the headline (W_pw 32 + act
//   2 x 32 + x 2 x 38 KiB) -> 1 block/SM; at TILE_T 64 the act and x parts halve (not logged).
//   Knobs: this file's TILE_T over wgmma.cuh's defaults (WARPGROUPS, WG_X_FIRST, WG_X_SLOTS, WG_WS,
//   WG_L2_PREFETCH, WG_MIN_BLOCKS) and common.cuh's FUSED_SILU; the tuned set is in results/tuned.json.
// Since 2026-12-03 y goes out by TMA stores (WG_Y_TMA=1): each warp stages its 16 rows x 64 steps (128 bytes a
//   row, swizzled) in the act buffer its MMA has just read, once both warpgroups of that column half are past it
//   (a 256-thread named barrier), and one lane stores the box: ab at the headline 22.30 -> 19.07 us (bf16,
//   logs/2026-12-03_2f00678_y_tma_ab_sanitize.log); bench 18.9 us against the bf16 clone's 9.07 (2.08x, from
//   2.43x; logs/2026-12-03_ec050bc_bf16_y_tma_verify_bench.log). Rows that do not fill 16-byte pieces
//   (T_out % 8 != 0) keep the stores from the accumulators.
// Since 2026-12-04 evening wgmma.cuh divides tile indices by a multiply-high, builds the k-steps' descriptors by
//   adds, and has kernels of their own for K = 3, 5, 7: ab at the headline 19.01 -> 17.76 us (1.070;
//   logs/2026-12-04_3267093_ct_k_tests_ab.log), bench 17.31 us (logs/2026-12-04_2695b41_tests_bench_shapes_kernelbench.log).
// Timed on an H100 2026-12-05 and not kept (docs/ladder.md; the knobs removed 2026-12-06, their code: 7cb870a):
//   WG_DW_EXTRA_16=1 at TILE_T=64 (the six-warpgroup block for 16-bit I/O), WG_Y_TMA_HALF=1 (with and without it).
//   WG_WS_EXTRA=2 with WG_WS=1 at TILE_T=64 measured 1.011 alone and 1.108-1.113 with wgmma.cuh's row groups: the
//   default since 2026-12-05 night (below).
// Shape limits (fused_unsupported): an sm_90 GPU, bfloat16 or float16 x with T % 8 == 0 and 16-byte
//   alignment, dilation <= 4, (K-1)*dilation <= 16, C_in <= 128, C_out <= 128. ModelNew routes every other
//   shape (and float32 input) to the next rung that serves it (rung 07 for 16-bit input).
// Since 2026-12-05 night: the warp-specialized kernel with four producer warpgroups at TILE_T 64 (WG_WS=1, WG_WS_EXTRA=2;
//   the form before: wg_kernel at TILE_T 128) and wgmma.cuh's row groups (WG_ROW_GROUPS): ab against that form on an H100
//   (no H200 lent), y bit for bit the same: 1.108 and 1.113 at the headline, 1.094 at K 3, 1.352 at B 2 T 1000, 1.106 at
//   B 64 T 4096, 1.057 at C 64 T 4096 K 3 d 1, 1.111 (fp16) at K 7 d 2, 1.107 at K 9 d 2; against the bf16 clone 1.550x (the
//   form before 1.735x) (logs/2026-12-05_45c73fb_row_groups_ab_check_sanitize_h100.log, _45c73fb_row_groups_bf16_ws_h100.log);
//   as the default 1.560x, battery, memcheck and racecheck clean (logs/2026-12-05_92085ee_defaults_check_sanitize_targets_h100.log).
//   Without the row groups this block had measured 1.011 (069c5c4).
// Timed on an H100 2026-12-05 late and not kept: WG_X_SLOTS=4 (every x tile of a block asked for at its start at the
//   headline: 0.979, 1.021 at B 64 T 4096), WG_X_SLOTS=3 0.971, WG_L2_PREFETCH=2 0.978
//   (logs/2026-12-05_43db5f8_x_slots_ab_check_sanitize_tests_h100.log).
// Since 2026-12-06 (WG_SILU_LUT=1, bf16 x): each depthwise output rounded to bf16, as eager's bf16 depthwise writes it,
//   and eager's SiLU of that value read from a 16 KiB table in smem (kernels/silu_bf16_table.h: torch's F.silu of every
//   bf16 value of magnitude 2^-24 .. 2^8, generated on the GPU by scripts/gen_silu_lut.py), landed with the first x tile;
//   the depthwise group's common path 143 instructions against 204 (logs/2026-12-05_e321f4f_silu_lut_sass_loops.txt).
//   Predicted 10-20%; ab on an H100 1.048 at the headline, 1.084 at B 2 T 1000, 1.091 at B 64 T 4096, 1.058 at K 3;
//   against the bf16 clone 1.494x (the form before 1.567x); y bit for bit eager's at ~75% of the elements (54% before),
//   max |y - eager| one bf16 ulp in both; battery, memcheck, racecheck clean
//   (logs/2026-12-06_e321f4f_silu_lut_ab_check_sanitize_kernelbench_h100.log).
//   On the H200 at this default (5da087f): 14.75 against 15.71 us without the table (ratio 0.938), 1.674x the bf16
//   clone (target 1.25x), bench 14.98 us; rung 11's GPU tests pass (logs/2026-12-06_5da087f_silu_lut_default_verify_h200.log).
#ifndef TILE_T
#define TILE_T 64
#endif
#ifndef WG_WS
#define WG_WS 1
#endif
#ifndef WG_WS_EXTRA
#define WG_WS_EXTRA 2
#endif
#ifndef WG_Y_TMA
#define WG_Y_TMA 1  // y by TMA stores from the act buffer just read (wgmma.cuh): 22.30 -> 19.07 us at the headline
#endif              // (ab, logs/2026-12-03_2f00678_y_tma_ab_sanitize.log); fp32's 8-byte stores gain nothing from it
#ifndef WG_SILU_LUT
#define WG_SILU_LUT 1  // bf16 x: eager's SiLU of the bf16-rounded depthwise from a table (wgmma.cuh; float16 x keeps the
#endif                 // guarded fast form), since 2026-12-06: measured in the header above
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
