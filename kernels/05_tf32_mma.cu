// variant: accuracy=tf32 dtypes=float32
// Rung 5, TF32 tensor cores: the pointwise GEMM (M=C_out, N=time, K=C_in) moves from FP32 CUDA cores
// to mma.sync.m16n8k8 TF32 with fp32 accumulation. Persistent blocks (1/SM at the headline), 256
// threads = 4x2 warps of 32x32 warp tiles over a (128 oc x 64 t) block tile. W_pw is rounded to tf32
// once per block into smem in A-fragment order (one LDS.128 per fragment); the x tile + dilated halo
// arrives by cp.async (16 B when T % 4 == 0) and the next tile's copy overlaps this tile's MMAs; the
// depthwise + bias + SiLU prologue writes tf32 act into a bank-conflict-free padded smem tile.
// The kernel itself (tc_fused_kernel) lives in common.cuh, shared with rungs 06 and 07.
// Predicted (headline B=16 C=128 T=2048 K=5 d=2): 16.8 MB in + 16.8 MB out = 33.6 MB / 4.27 TB/s =
//   7.9 us floor; 1.07 GFLOP of TF32 mma ~ 2 us. Per SM: 512 tiles / 132 SMs -> 4 tiles. Per tile the
//   smem side is the limit: fragment loads 8 warps x 16 k-steps x (2 A x 512 B + 8 B x 128 B) = 256 KB
//   / 128 B/clk = 2.0k clk, prologue 8192 act x 5 LDS / 32 lanes + stores ~ 1.8k clk -> ~2.0 us/tile at
//   1.98 GHz; HBM per tile 39 KB x + 32 KB y at 4.27 TB/s / 132 SMs = 2.2 us/tile. x of the next tile
//   overlaps the MMAs, the prologue does not: predicted ~ 4 x 2.4 us ~ 9.5 us (target <= 10 us).
// Measured: see the README's results table (generated from results/timings.csv) and docs/ladder.md.
//   The <= 10 us target was missed by a wide margin: ncu says the kernel is bound by instruction issue and
//   latency in its serialized phases (x wait -> depthwise -> MMA -> stores), not by memory. The 16-byte
//   windowed depthwise of rung 08 made this kernel spill at 512 threads and cost time, so this rung keeps
//   the per-column one. Rung 08 tried overlapping the phases with warp specialization and did not beat this
//   rung (see its header); what is left: wgmma (at A100's mma.sync TF32 rate per SM, assumed, the MMAs alone
//   take ~4 us at the headline, half the floor), staged 16-byte (or TMA) y stores, and fewer instructions
//   per depthwise output.
// Shared memory at the headline, default tiles: 144384 B dynamic (x 38912 + act 36864 + w_dw 3072 + W_pw
//   65536) -> 1 block/SM.
// Knobs (tc_tiles.h, -DNAME=value): WARPS_M x WARPS_N warps, each a WARP_M x WARP_N tile of m16n8k8 MMAs;
//   TILE_T = WARPS_N * WARP_N time steps per tile. The sweep's choice is in results/tuned.json.
// Shape limits: x tile (C_in x (TILE_T + (K-1)*dilation)) + act tile + one 128-row chunk of W_pw must fit
//   in the opt-in smem: ~1128 B per input channel at K=5, d=2 -> C_in <= ~200; any C_out (W_pw chunks are
//   reloaded per tile when all of it does not fit next to the tiles).
#include "tc_tile.cuh"

#include "tc_tiles.h"

const char* fused_unsupported(const FusedArgs& a) {
  if (const char* why = require_float32(a)) return why;
  return tc_fit_refusal(a, 4, TILE_T, kBM);
}

void fused_forward(const FusedArgs& a, void* stream) {
  tc_launch<float, false, TILE_T, WARPS_M, WARPS_N, WARP_M, WARP_N>(a, stream);
}
