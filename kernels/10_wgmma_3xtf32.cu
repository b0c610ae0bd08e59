// variant: accuracy=strict dtypes=float32 arch=9.0a
// Rung 10, 3xTF32 on wgmma: rung 06's split (a = big + small, big = tf32(a), small = tf32(a - big);
// W*act ~ Wb*ab + Wb*as + Ws*ab, error ~2^-22 relative, as fp32's) on rung 09's Hopper kernel (wgmma.cuh):
//   - W_pw is staged twice (big, small: 2 x 64 KB) and the depthwise writes each activation twice (big and
//     small act tiles, double-buffered); every k-step issues three wgmmas (48 per tile per warpgroup);
//   - the tensor cores' accumulation truncates, so the big*big products go into WG_CHAINS independent
//     accumulators over K slices and the small terms into one more; the epilogue adds them in fp32
//     (rung 06 needed a zeroed partial per k-step with mma.sync);
//   - the accurate SiLU (expf, IEEE division, as silu_nocall): the activations must be fp32-exact.
//   - warp-specialized (WG_WS=1): warpgroups 2-3 build act (depthwise + SiLU, 256 threads,
//     one channel each), warpgroups 0-1 stage W_pw, then per tile wait for act, issue the 48 wgmmas, wait,
//     hand the act buffer back and store y; act is a 2-deep ring between them, handed over on mbarriers
//     (FULL: every producer thread after its stores and a proxy fence; EMPTY: every consumer thread after
//     wgmma.wait). So the depthwise of tile i+1 runs in other warps than the MMA and the stores of tile i.
//   With 192 KB of W_pw and act at TILE_T = 32, one x slot fits (WgLayout::x_slots = 1): the x box of tile
//   i+1 is issued once the producers have read the slot; x tiles are also prefetched into L2 two tiles ahead
//   (WG_L2_PREFETCH=2), so that load finds them there.
// Predicted (headline B=16 C=128 T=2048 K=5 d=2, TILE_T=32, 4 warpgroups: 1024 tiles, 7.8 per SM): rung
//   09's 22 us is issue-bound in the depthwise (~106 SASS per 4 outputs); the split adds a subtraction,
//   a rounding and a second st.shared per output and the accurate SiLU (~2x the SiLU's 5 instructions),
//   ~+40%, and the MMA triples (2.8 us in rung 09's ablation -> ~8 us, mostly hidden under the depthwise):
//   ~28-32 us, about half rung 06's time; the 14 us target stays out of reach until the depthwise is cheaper.
// Measured: see the README's results table (generated from results/timings.csv) and docs/ladder.md.
//   Strict accuracy held; above the prediction's upper end and far from the 14 us target. ncu of the serial
//   build (2 warpgroups): too few warps to hide latency (~200 registers per thread, 8 warps per SM) and
//   instruction-cache misses; hence the warp-specialized default with 4 warpgroups (each role's registers
//   fit under 128) and the L2 prefetch for its one x slot. History: docs/ladder.md.
//   Shared memory: 215 KiB dynamic at the headline (W_pw 2 x 64 + act 2 x 2 x 16 + one x slot 22 KiB)
//   -> 1 block/SM of 16 warps.
//   Knobs: this file's TILE_T, WG_WS, WG_L2_PREFETCH over wgmma.cuh's defaults; WG_CHAINS (wgmma.cuh) sets the
//   independent big*big accumulators (more chains, smaller error, same time within noise). The tuned set is
//   in results/tuned.json.
//   Since 2026-12-04 evening wgmma.cuh divides tile indices by a multiply-high, builds the k-steps' descriptors by
//   adds, and has kernels of their own for K = 3, 5, 7: ab at the headline 36.45 -> 34.21 us (1.066;
//   logs/2026-12-04_3267093_ct_k_tests_ab.log), bench 33.74 us, 2.62x the same run's clone
//   (logs/2026-12-04_2695b41_tests_bench_shapes_kernelbench.log). Since 2026-12-04 night the split rounds by
//   cvt.rn.tf32.f32 (common.cuh's tc_tf32 on sm_90: one instruction for six, twice per activation): bench 31.18 us,
//   2.44x the same run's clone (logs/2026-12-04_a82acbb_tests_bench_shapes.log; separate runs, not an ab).
//   What would close it: the producers' depthwise (8 warps, the accurate SiLU, two rounded stores per
//   output) bounds the loop as in rung 09's warp-specialized build; W_pw's small parts out of smem (a 2-CTA
//   cluster splitting C_out, or A from registers) for two x slots; fewer instructions per depthwise output.
//   Since 2026-12-05 the default has four producer warpgroups (WG_WS_EXTRA=2, below: producers at 64 registers, the
//   consumers at 112 by setmaxnreg, no spill where the old form's 128 spilled 8 bytes,
//   logs/2026-12-04_e9fc64f_ws_extra_split_ptxas.txt). Predicted 10-25% at the headline (the producers' share of a
//   tile's chain shorter by a third to a half); measured 7.3-7.7% (H100, two runs): below the prediction: the rest of
//   a tile's chain (the consumers' MMA and stores) is untouched by it (a reading, not profiled). WG_W_SMALL_REGS=1
//   (W_pw's small parts as the consumers' register A operand, two x slots; an experiment, off): with two producer
//   warpgroups, against this default, H100 ab 0.95 at the headline, 1.01 at ~16 tiles a block, 1.07 at B 64 T 4096;
//   with four, 0.75-0.79 (docs/ladder.md).
// Shape limits: as rung 09 (fused_unsupported): an sm_90 GPU, fp32 x with T % 4 == 0 and 16-byte alignment,
//   dilation <= 4, (K-1)*dilation <= 16, C_in <= 128, C_out <= 128. ModelNew routes every other shape to
//   the next strict rung (06, then 04).
#ifndef TILE_T
#define TILE_T 32
#endif
#ifndef WG_WS
#define WG_WS 1
#endif
#ifndef WG_L2_PREFETCH
#define WG_L2_PREFETCH 2
#endif
// Four producer warpgroups (wgmma.cuh's WG_WS_EXTRA=2; 0 is the two-producer form of 2026-12-03..05), since 2026-12-05:
// ab against that form on an H100 (no H200 lent), y bit for bit the same: 1.073 at the headline, 1.056 at K 3, 1.078 at
// K 9 d 1, 1.119 at B 64 T 4096, 1.013 at B 2 T 1000, 1.034 at C 96->72 T 1000 K 3 d 3, 0.974 at C 64 T 4096 K 3 d 1
// (logs/2026-12-05_6162464_targets_knobs_h100.log; 1.077 at the headline in 069c5c4's run).
#ifndef WG_WS_EXTRA
#define WG_WS_EXTRA 2
#endif
// Eager's SiLU as common.cuh's silu_nocall (the same float32 bits at every input, no slow-path call): 39.26 ->
// 36.61 us in one ab (2026-12-03, logs/2026-12-03_5457865_silu_nocall_ab.log); FUSED_SILU_NOCALL=0 is the old form.
#ifndef FUSED_SILU_NOCALL
#define FUSED_SILU_NOCALL 1
#endif
#include "wgmma.cuh"

const char* fused_unsupported(const FusedArgs& a) {
  if (const char* why = require_float32(a)) return why;
  return wg_refusal<float, true>(a);
}

void fused_forward(const FusedArgs& a, void* stream) { wg_launch<float, true>(a, stream); }
