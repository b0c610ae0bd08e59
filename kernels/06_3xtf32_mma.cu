// variant: accuracy=strict dtypes=float32
// Rung 6, 3xTF32 tensor cores: rung 5's kernel with every operand split as a = big + small (big = tf32(a),
// small = tf32(a - big)) and acc += a_small*b_big + a_big*b_small + a_big*b_big, recovering fp32
// accuracy (the dropped small*small and residual terms are ~2^-22 relative). W_pw and act stay fp32
// in smem and are split at fragment-load time. Each k-step's three products go into a zeroed partial
// tile that is added to the accumulator with a round-to-nearest FADD: the tensor core's internal
// (truncating) accumulation then never carries the running sum, which keeps the error at fp32 level
// (<= 1e-6 vs float64). The prologue uses the accurate expf / IEEE division SiLU.
// Predicted (headline B=16 C=128 T=2048 K=5 d=2): memory floor 7.9 us as in rung 5; 3 x 1.07 GFLOP of
//   TF32 mma ~ 6 us. Per tile per warp and k-step: 24 HMMA + 24 x 3 split ops + 32 FADD + 12 LDS ~ 140
//   instr -> 8 warps x 16 k-steps x 140 / 4 schedulers = 4.5k clk, + accurate prologue ~ 2.5k clk =
//   7k clk = 3.5 us/tile; 4 tiles/SM -> ~ 13-14 us, compute bound (target <= 14 us).
// Measured: see the README's results table (generated from results/timings.csv) and docs/ladder.md.
//   Strict accuracy held (better than eager with TF32 off). The <= 14 us target was missed by a wide
//   margin, for the reasons in 05's header plus 3x the MMA and split work per k-step. The target is likely
//   out of reach with mma.sync: at A100's m16n8k8 TF32 rate (512 FMA/clk/SM; assumed, not measured on the
//   H200) the 3 x 0.54 G FMA alone take ~12 us; it needs wgmma's rate or a cheaper split (2xTF32 with an
//   error bound, or bf16x3). On sm_90 the same split on wgmma is rung 10 (wgmma_3xtf32), faster; this rung
//   stays the portable strict rung and the export default.
// Shared memory: 144384 B dynamic at the headline (same layout as rung 5) -> 1 block/SM.
// Knobs: as rung 5 (tc_tiles.h; the sweep's choice is in results/tuned.json).
// Shape limits: as rung 5 (x tile + act tile + one 128-row chunk of W_pw must fit in the opt-in smem;
//   C_in <= ~200 at K=5, d=2; any C_out).
#include "tc_tile.cuh"

#include "tc_tiles.h"

const char* fused_unsupported(const FusedArgs& a) {
  if (const char* why = require_float32(a)) return why;
  return tc_fit_refusal(a, 4, TILE_T, kBM);
}

void fused_forward(const FusedArgs& a, void* stream) {
  tc_launch<float, true, TILE_T, WARPS_M, WARPS_N, WARP_M, WARP_N>(a, stream);
}
