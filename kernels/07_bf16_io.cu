// variant: accuracy=bf16 dtypes=float32,bfloat16,float16
// Rung 7, 16-bit I/O: rung 5's TF32 tensor-core kernel templated on the element type of x and y
// (__nv_bfloat16, __half, or float), dispatched on a.dtype. x tiles are half the bytes (16-byte
// cp.async moves 8 elements), act/W_pw stay tf32 in smem, accumulation fp32, y is rounded to the I/O
// type in the epilogue (bf16x2 / half2 stores). Weights and biases are float32 as always.
// Predicted (headline, bf16): 8.4 MB in + 8.4 MB out = 16.8 MB / 4.27 TB/s = 3.9 us floor. Per tile:
//   HBM 20 KB x + 16 KB y / 32 GB/s-per-SM = 1.1 us, but the smem side is unchanged from rung 5
//   (fragment loads 2.0k clk + prologue ~ 1.8k clk ~ 2.0 us/tile) -> 4 tiles/SM ~ 8 us: compute (smem)
//   bound, above the 6 us target; the next step would be bf16 m16n8k16 MMAs (half the fragment bytes)
//   and 2 blocks/SM (try -DWARPS_M=8 -DWARPS_N=1 -DWARP_M=16 -DWARP_N=32: ~100 KB smem per block).
// Measured: see the README's results table (generated from results/timings.csv) and docs/ladder.md.
//   The <= 6 us target was missed by a wide margin, and halving the I/O bytes changed nothing against fp32
//   input through the same kernel, which confirms the shared tile kernel is issue/latency-bound, not
//   memory-bound (see 05's header for what closes it). On sm_90, rung 11 (wgmma_bf16) is faster.
// Shared memory: 125952 B dynamic at the headline in bf16 (x 20480 + act 36864 + w_dw 3072 + W_pw 65536)
//   -> 1 block/SM.
// Knobs: as rung 5 (tc_tiles.h; the sweep's choice is in results/tuned.json).
// Shape limits: as rung 5 (x tile + act tile + one 128-row chunk of W_pw must fit in the opt-in smem:
//   C_in <= ~236 in 16-bit, ~200 in fp32 at K=5, d=2; any C_out).
#include "tc_tile.cuh"

#include "tc_tiles.h"

namespace {
int elem_bytes(int dtype) {
  return dtype == FUSED_F32 ? 4 : (dtype == FUSED_BF16 || dtype == FUSED_F16) ? 2 : 0;
}
}  // namespace

const char* fused_unsupported(const FusedArgs& a) {
  if (elem_bytes(a.dtype) == 0) return "this variant takes float32, bfloat16 or float16 input only";
  return tc_fit_refusal(a, elem_bytes(a.dtype), TILE_T, kBM);
}

void fused_forward(const FusedArgs& a, void* stream) {
  switch (a.dtype) {
    case FUSED_BF16: tc_launch<__nv_bfloat16, false, TILE_T, WARPS_M, WARPS_N, WARP_M, WARP_N>(a, stream); break;
    case FUSED_F16: tc_launch<__half, false, TILE_T, WARPS_M, WARPS_N, WARP_M, WARP_N>(a, stream); break;
    case FUSED_F32: tc_launch<float, false, TILE_T, WARPS_M, WARPS_N, WARP_M, WARP_N>(a, stream); break;
    default: throw std::runtime_error("bf16_io: unsupported dtype code " + std::to_string(a.dtype));
  }
}
