// variant: accuracy=tf32 dtypes=float32
// Rung 8, warp specialization: rung 5's math (TF32 mma.sync pointwise, depthwise + SiLU prologue, W_pw
// resident in smem in A-fragment order), but the block's warps split into two groups that run at the
// same time on different tiles (tc_ws_kernel in common.cuh):
//   PRODUCER_WARPS producers: cp.async x tiles into a 2-slot ring, depthwise + bias + SiLU into a
//     2-slot act ring, up to two tiles ahead;
//   WARPS_M x WARPS_N consumers: the MMAs from act and W, then bias + y stores from the accumulators.
// Handoffs are mbarriers (FULL / EMPTY per act slot), so DRAM traffic, the depthwise and the tensor
// cores can overlap instead of running one after another as in rung 05. The producers' depthwise is
// tc_dw_silu_x4: four outputs per thread from a 16-byte x window, dilation a compile-time constant.
// Predicted (headline B=16 C=128 T=2048 K=5 d=2, TILE_T=64: 512 tiles, 3.9 per SM): with the three
//   streams overlapped, time ~ max(DRAM 33.6 MB / 4.27 TB/s = 7.9 us, depthwise ~18k warp instr/SM
//   ~ 2.5 us, MMA ~ 4k HMMA + 6k LDS/SM ~ 2-3 us) + pipeline fill (first x tile + W_pw, ~1.5 us)
//   + drain (last tile's MMA + stores, ~1 us) ~ 10-12 us.
// Measured: see the README's results table (generated from results/timings.csv) and docs/ladder.md.
//   Slower than rung 05 and far above the prediction, so not ModelNew's default. Builds that leave one
//   stage out (scripts/ablate.py, FUSED_ABLATE) found no stage dominating: each added its cost on top of a
//   skeleton (the W_pw fill, barriers, the launch), i.e. the stages do not overlap well. The y stores (8-byte
//   scattered STG from the accumulators) and the producers (x + depthwise) were the largest; the MMA warps
//   alone are latency-bound with one MMA warp per scheduler. The stage costs per version: docs/ladder.md.
//   Next: wgmma (a warpgroup per 64 rows, B from smem, no per-warp fragment loads), setmaxnreg to give
//   consumers registers (producers need ~70), y staged in smem and stored with 16-byte / TMA stores.
// Races: the named-barrier handoffs (bar.arrive + bar.sync, then bar.sync on both sides) passed every
//   check but compute-sanitizer racecheck reported act write/read hazards; with mbarriers racecheck and
//   memcheck are clean. The per-column depthwise fallback was not racechecked with the mbarrier handoff, so
//   this rung serves only shapes the windowed path takes (T % 4 == 0, dilation <= 4, span <= 16) and
//   ModelNew routes the rest to other rungs.
// Knobs: the consumers' warp tiling of tc_tiles.h (WARPS_M x WARPS_N warps of WARP_M x WARP_N), and
//   PRODUCER_WARPS, X_STAGES (below). The sweep's choice is in results/tuned.json.
// Shape limits: all of W_pw + two x tiles + two act tiles in smem: C_in = C_out <= ~150 at K=5, d=2.
#include "warp_specialized.cuh"

#include "tc_tiles.h"

// Also sweepable: PRODUCER_WARPS depthwise/copy warps, X_STAGES x tiles in the copy ring. All chunks of
// W_pw stay resident.
#ifndef PRODUCER_WARPS
#define PRODUCER_WARPS 8
#endif
#ifndef X_STAGES
#define X_STAGES 2
#endif
static_assert((WARPS_M * WARPS_N + PRODUCER_WARPS) * 32 <= 1024, "too many threads per block");

const char* fused_unsupported(const FusedArgs& a) {
  if (const char* why = require_float32(a)) return why;
  // Only the 16-byte windowed depthwise path (tc_dw_silu_x4), the one racechecked with this kernel's
  // mbarrier handoff (see the header); ModelNew routes other shapes to another rung.
  if (!tc_x4_path(a))
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
