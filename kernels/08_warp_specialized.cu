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
// Measured: 39.4 us median (p10-p90 38.9-40.3) vs rung 05's 36.1 us in the same run, rel. err 1.7e-4
//   (= eager's), tuned WARPS_M=4 WARPS_N=2 WARP_M=32 WARP_N=32 PRODUCER_WARPS=12 (640 threads; ptxas:
//   96 registers, 28 B spilled) (H200, commit 590d9e0, results/logs/2026-11-29_aa7a6bd_run.log). Slower than
//   rung 05, 3.3x the prediction, so not ModelNew's default.
// How it got there (results/logs/2026-11-29_{e1e9ad0_run,0fbaba9_ablate,126a0e7_run,e574c4a_run,590d9e0_run,aa7a6bd_run}; timings in results/timings.csv, kind 'sweep'):
//   v1 52.3 us: named-barrier handoff, consumers staged W_pw alone. Producer count mattered most
//     (4 producer warps 82-111 us, 8: 52-70 us): producer-bound.
//   Stage costs from builds that leave one stage out (scripts/ablate.py, FUSED_ABLATE; us, full kernel ->
//   without depthwise / MMA / y stores / x copies / all four):
//     v1  52.4 -> 35.8 / 47.4 / 44.9 / 43.5 / 16.9   the 16.9 us "skeleton" was the W_pw fill: 8 scalar
//         loads in flight per consumer thread, 16 round trips; now 16-byte loads by the whole block.
//     v2  45.0 -> 31.4 / 37.8 / 35.6 / 36.4 / 10.6   windowed depthwise; SASS showed ~52 instructions per
//         output (per-output masks, __expf's denormal fix-ups, emulated cvt.rna.tf32).
//     v3  38.1 -> 30.0 / 32.2 / 29.6 / 33.3 / 10.1   test-free fast path, ex2/rcp.ftz SiLU, integer tf32
//         rounding (~19 instructions per output). The ~10 us skeleton is the W_pw fill, barriers and
//         the launch (the 33.6 MB clone baseline itself takes 13 us against 7.9 us at copy bandwidth).
//   What v3 says: no stage dominates; each costs 4-9 us on top of a 10 us skeleton, i.e. the stages do
//   not overlap well. The y stores (8-byte scattered STG from the accumulators, 8.5 us) and the
//   producers (x + depthwise, ~20 us over the skeleton when alone) are the largest; 4 MMA warps alone
//   need ~16 us for work the tensor pipe would do in ~4 us at A100's mma.sync TF32 rate (assumed; latency-
//   bound with one MMA warp per scheduler).
//   Next: wgmma (a warpgroup per 64 rows, B from smem, no per-warp fragment loads), setmaxnreg to give
//   consumers registers (producers need ~70), y staged in smem and stored with 16-byte / TMA stores.
// Races: the named-barrier handoffs (bar.arrive + bar.sync, then bar.sync on both sides) passed every
//   check but compute-sanitizer racecheck reported act write/read hazards (2026-11-29_{126a0e7_run,e574c4a_run,590d9e0_run}); with
//   mbarriers racecheck and memcheck are clean (2026-11-29_aa7a6bd_run). The per-column depthwise fallback was
//   not racechecked with the mbarrier handoff, so this rung serves only shapes the windowed path takes
//   (T % 4 == 0, dilation <= 4, span <= 16) and ModelNew routes the rest to other rungs.
// Checked on the H200 (check battery, sweeps, sanitizers) only on shapes with T % 4 == 0 at dilation 1
//   and 2; the battery's T = 204 shapes for dilation 3 and 4 were added after this session's device time
//   was spent: run `python fused_jit.py check --variant warp_specialized` on a GPU before relying on them.
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
