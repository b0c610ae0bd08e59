// variant: accuracy=tf32 dtypes=float32 arch=9.0a
// Rung 12, act in registers (kernels/wgmma_rs.cuh): rung 09's math (TF32 tensor cores, fp32 accumulation,
// W_pw and act rounded to tf32, tanh SiLU) with the GEMM turned around, y^T = act^T W_pw^T, so the
// activations are wgmma's A operand straight from the registers that computed them:
//   - no act tile in smem: rung 09 stored every activation into a swizzled smem tile (address arithmetic,
//     a proxy fence and a block barrier per tile) for wgmma to read back;
//   - every warpgroup runs its own pipeline over its own 64-step tiles (own x slot, own mbarrier, a
//     warpgroup barrier instead of block barriers), so the four warpgroups of an SM overlap each other's
//     x loads, depthwise, MMA and y stores instead of running them in lock-step;
//   - a thread computes the outputs of its A fragment: 2 time rows 8 apart x 2 channels per k-step, the
//     taps of the two rows that coincide loaded once; weights + bias from a smem table (2 LDS.128 per channel);
//   - wgmma m64n128k8 (N = C_out padded to 128) against W_pw in smem as the B operand (its row-major
//     layout is K-major), RS_CHUNK k-steps per batch, A double-buffered so the next chunk's depthwise runs
//     under this chunk's MMA; accumulators start at b_pw.
// Predicted (headline B=16 C=128 T=2048 K=5 d=2: 512 tiles = 128 blocks x 4 warpgroups, one tile each):
//   depthwise ~16 instructions per output (18 x loads + 4 table loads + 20 FMA + 12 SiLU + 8 rounding per
//   4 outputs), vs ~25 in rung 09: ~4k warp instructions per tile, ~2.2 us per SM with 4 tiles in flight;
//   the MMA 16 x 64 clk per tile (~0.55 us); x (19 MB) lands over ~4.5-5 us, y leaves over ~4 us: with the
//   phases of different warpgroups overlapping, ~9-11 us + the timer's ~4.4 us -> 13-15 us measured.
// Measured: (not yet on the H200)
// Shape limits (fused_unsupported): an sm_90 GPU; fp32 x with T % 4 == 0 and 16-byte alignment (TMA),
//   dilation <= 4 and (K-1)*dilation <= 16; C_in <= 128, C_out <= 128. Where the x slots of 4 warpgroups
//   do not fit (span + (-padding mod 4) > 8: 88-float rows), 3 warpgroups per block work.
#include "wgmma_rs.cuh"

const char* fused_unsupported(const FusedArgs& a) {
  if (const char* why = require_float32(a)) return why;
  return rs_refusal(a);
}

void fused_forward(const FusedArgs& a, void* stream) { rs_launch(a, stream); }
