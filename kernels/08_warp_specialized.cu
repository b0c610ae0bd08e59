// variant: accuracy=tf32 dtypes=float32
// Rung 8, warp specialization: rung 5's math (TF32 mma.sync pointwise, depthwise + SiLU prologue, W_pw
// resident in smem in A-fragment order), but the block's warps split into two groups that run at the
// same time on different tiles (tc_ws_kernel in common.cuh):
//   PRODUCER_WARPS producers: cp.async x tiles into a 2-slot ring, depthwise + bias + SiLU into a
//     2-slot act ring, up to two tiles ahead;
//   WARPS_M x WARPS_N consumers: the MMAs from act and W, then bias + y stores from the accumulators.
// Handoffs are named barriers (FULL / EMPTY per act slot) instead of block-wide __syncthreads, so
// DRAM traffic, the depthwise and the tensor cores overlap. What rung 5's profile showed: its phases
// (x wait -> depthwise -> MMA -> stores) ran one after another with every warp in each.
// Predicted (headline B=16 C=128 T=2048 K=5 d=2, TILE_T=64: 512 tiles, 3.9 per SM): with the three
//   streams overlapped, time ~ max(DRAM 33.6 MB / 4.27 TB/s = 7.9 us, depthwise ~18k warp instr/SM
//   ~ 2.5 us, MMA ~ 4k HMMA + 6k LDS/SM ~ 2-3 us) + pipeline fill (first x tile + W_pw, ~1.5 us)
//   + drain (last tile's MMA + stores, ~1 us) ~ 10-12 us.
// Measured: see results/timings.csv (not yet run on the H200 at the time of writing).
#include "common.cuh"

// Tile parameters (sweepable with -D): TILE_T = WARPS_N * WARP_N time steps per tile, WARPS_M * WARP_M
// output channels per chunk (all chunks of W_pw stay resident), PRODUCER_WARPS depthwise/copy warps,
// X_STAGES x tiles in the copy ring.
#ifndef WARPS_M
#define WARPS_M 4
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#ifndef WARP_M
#define WARP_M 32
#endif
#ifndef WARP_N
#define WARP_N 32
#endif
#ifndef PRODUCER_WARPS
#define PRODUCER_WARPS 8
#endif
#ifndef X_STAGES
#define X_STAGES 2
#endif
#define TILE_T (WARPS_N * WARP_N)
static_assert(WARP_M % 16 == 0 && WARP_N % 8 == 0, "warp tile must be a multiple of the 16x8 mma tile");
static_assert((WARPS_M * WARPS_N + PRODUCER_WARPS) * 32 <= 1024, "too many threads per block");

namespace {
constexpr int kBM = WARPS_M * WARP_M;
}  // namespace

const char* fused_unsupported(const FusedArgs& a) {
  if (const char* why = require_float32(a)) return why;
  // Only the 16-byte windowed depthwise path (tc_dw_silu_x4): compute-sanitizer racecheck reported
  // hazards between the per-column fallback's act writes and the MMA reads in this kernel
  // (results/logs/h200_session_11.log), which no check caught and we could not explain; those shapes
  // go to rung 05 through ModelNew instead.
  if (a.T % 4 != 0 || reinterpret_cast<uintptr_t>(a.x) % 16 != 0 || a.dilation > 4 ||
      static_cast<int64_t>(a.K - 1) * a.dilation > 16)
    return "this variant needs T % 4 == 0, a 16-byte aligned x, dilation <= 4 and (K-1)*dilation <= 16";
  TcParams p;
  size_t smem;
  if (!tc_ws_plan(a, 4, TILE_T, kBM, X_STAGES, p, smem))
    return "C_in, C_out or the kernel span (K-1)*dilation too large for this variant's shared memory (all of "
           "W_pw plus two x tiles and two activation tiles must fit; C_in = C_out <= ~150 at K=5, d=2)";
  return nullptr;
}

void fused_forward(const FusedArgs& a, void* stream) {
  tc_ws_launch<float, false, TILE_T, WARPS_M, WARPS_N, WARP_M, WARP_N, PRODUCER_WARPS, X_STAGES>(a, stream);
}
