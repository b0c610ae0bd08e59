// variant: accuracy=tf32 dtypes=float32 arch=9.0a
// Numerics since 2026-12-01 (ModelNew's contract: eager's numbers): the SiLU is eager's x / (1 + exp(-x)) and
//   both GEMM operands are rounded to TF32 round-to-nearest-even (common.cuh), so y matches eager's at the
//   headline. It costs time against the tanh SiLU (FUSED_SILU=2, the form the history in docs/ladder.md was
//   measured with); still the fastest rung with eager's numbers, hence ModelNew's default.
//   Since 2026-12-02 the SiLU is common.cuh's guarded form (silu_rounded: the 5-instruction fast SiLU where its
//   rounded value provably equals eager's, eager's formula elsewhere; all 2^32 inputs checked): same bits, one
//   primed ab at the headline 25.1 -> 23.9 us (logs/2026-12-02_0618161_guarded_silu_batched.log).
// Rung 9, Hopper wgmma + TMA (kernels/wgmma.cuh, shared with rungs 10-11): rung 5's math (TF32 tensor
// cores, fp32 accumulation, W_pw and act rounded to tf32), but the pointwise GEMM is wgmma.mma_async (sm_90a)
// instead of mma.sync, it runs under the next tile's depthwise instead of after it, and the x tiles arrive by TMA:
//   - four warpgroups (512 threads; WARPGROUPS=2 also builds), each owning 64 output channels x TILE_T/2
//     time steps; one m64nNk8 wgmma per 8 input channels reads W_pw and act straight from shared memory
//     (no per-warp fragment loads, which dominated rung 5's instruction count);
//   - W_pw (C_out padded to 128 rows, C_in to K = 128) and act are stored K-major in the 128-byte swizzled
//     layout wgmma reads (8 rows x 128 B atoms, 16-byte chunk index XOR row % 8); W_pw once per block;
//   - act is double-buffered: the wgmma of tile i is issued asynchronously, the block computes the
//     depthwise + SiLU of tile i+1 into the other buffer meanwhile, then waits for the MMA and stores y(i)
//     from the accumulators;
//   - x tiles are double-buffered, one 3-D TMA box each (zeros outside the tensor), issued by one thread
//     and completed on an mbarrier: no warp spends instructions on copies;
//   - the depthwise is tc_dw_silu_x4's windowed form (four outputs per thread from 16-byte x loads,
//     dilation and K compile-time constants), with a thread owning one channel for the whole kernel (its
//     taps and bias in registers) and lanes on consecutive channels, so act stores are conflict-free.
// Predicted (headline B=16 C=128 T=2048 K=5 d=2, TILE_T=64: 512 tiles, 3.9 per SM): the MMA (1M FMA per
//   tile, ~1k cycles at wgmma's 1024 TF32 FMA/clk/SM) hides under the depthwise (~4k warp instructions per
//   tile, ~1-2k cycles on 8 warps); per tile 72 KB of DRAM traffic at 4.27 TB/s / 132 SMs = 2.2 us, so the
//   kernel is memory-bound if one tile of x prefetch keeps enough bytes in flight: ~8.5-10 us
//   (floor 7.9 us) plus W_pw staging and the first tile (~1.5 us).
// Measured: see the README's results table (generated from results/timings.csv) and docs/ladder.md.
//   It ran at about twice the predicted time (well above the floor and the same run's copy), bound by its
//   phases running one after another rather than by DRAM (below); the version-by-version history and the
//   knobs measured and not kept are in docs/ladder.md.
//   Shared memory: 205 KiB dynamic at the headline (W_pw 64 + act 2 x 32 + x 2 x 38 KiB) -> 1 block/SM.
//   Knobs: wgmma.cuh's (WARPGROUPS, TILE_T, WG_X_SLOTS, WG_X_FIRST, WG_L2_PREFETCH, WG_WS, WG_MIN_BLOCKS, WG_Y_TMA,
//   WG_GEMM_WGS, WG_GEMM_D1_MIN_K, WG_DW_SHARE, WG_DW_EXTRA, WG_DW_EXTRA_SHARE, WG_DW_EXTRA_WHERE, WG_DW_REGS, WG_CT_K,
//   WG_WS_SHARE, WG_WS_D1_SHARE, WG_WS_EXTRA)
//   and common.cuh's FUSED_SILU; wgmma.cuh's defaults are this rung's tuned configuration (results/tuned.json).
//   WG_Y_TMA=1 (y by TMA stores, rung 11's default) is 6.6% slower here: 8-byte stores already fill 32-byte sectors.
//   Since 2026-12-04 (c1ea9ca) the GEMM is issued by warpgroups 0 and 1 at wgmma N = TILE_T where C_out > 64 and
//   (dilation > 1 or K >= 9), warpgroups 2 and 3 building act meanwhile (WG_GEMM_WGS=0): 1.04-1.06x faster there,
//   0.987-0.996 at dilation 1 and K <= 5, where the four-warpgroup form stays (ab, logs/2026-12-04_251218f_*).
//   Since 2026-12-04 evening (3267093): the tile index divided by a multiply-high (fast_div.cuh) instead of 64-bit
//   divisions, each k-step's wgmma descriptors one add to the first, and a kernel of its own per K = 3, 5, 7
//   (WG_CT_K; the run-time-K kernel held one depthwise loop per K at each call site, and ncu counted 1.48 cycles
//   of "no instruction" stall per issued instruction, 0.41 after): old / new 1.047 at the headline, 1.015-1.121
//   over five other shapes (ab, logs/2026-12-04_3267093_ct_k_tests_ab.log; profiles logs/2026-12-04_*_ncu_sass.log).
//   Since 2026-12-04 late (cfe3315): at dilation 1 with K = 3, 5, 7, where the four-warpgroup form ran, the
//   warp-specialized kernel runs instead, its two consumer warpgroups building 20% of act each between issuing a
//   tile's GEMM and waiting for it (WG_WS_D1_SHARE): 1.039-1.080x at four shapes, y bit for bit the same
//   (logs/2026-12-04_cfe3315_ws_d1_route_tests_sweep.log). At the headline the same kernel with any share is no
//   faster than the two-warpgroup form (share 20 1.0125, 25 0.998, 15 0.978; logs/2026-12-04_eea1ed3_ws_share_ab.log,
//   _7e98793_ws_share_2_ab.log), nor are two depthwise groups a step (0.968-0.972; _0098ec2_dw_unroll_ws_d1_ab.log).
//   Since 2026-12-04 night (81002ae): at dilation 2 with K = 3, 5 the two-warpgroup form's block has six warpgroups,
//   not four (WG_DW_EXTRA=2): the depthwise alone ran 4 warps a scheduler with 0.94 eligible and no pipe above 30%
//   (ncu, results/profiles/ncu_wgmma_tf32_ablate6_96566ec.txt), so two more depthwise-only warpgroups hide its
//   latencies; setmaxnreg gives them 64 registers and the GEMM warpgroups 112, which build 15% of act each. Four /
//   six warpgroups: 1.032-1.039 at the headline, 1.037 at K 3, 1.050 at B 64 T 4096 (rung 13: 1.029, 1.030, K 3
//   1.034); at K 9 d 1 0.921, so elsewhere four stay (logs/2026-12-04_96566ec_dw_extra_ab.log, _96566ec_dw_extra_2_ab.log,
//   _81002ae_dw_extra_default_sanitize_ab.log).
// Why not at the floor: a per-block timeline (FUSED_TRACE=1 build, scripts/trace_case.py; results/traces/)
//   says where a block's time goes. The first x tile lands late (every SM asks for its tiles at once;
//   WG_X_FIRST shortens it). Then each tile's phases run one after another: the depthwise, the MMA issue
//   (the warps leave wgmma's issue only when most of the MMA has run: four warpgroups' 16 wgmmas each
//   queue on the SM's tensor cores, so little of the MMA hides under the depthwise), extra time in the
//   steps where thread 0 first issues the next x TMA load (issuing it after the wgmmas did not shorten the
//   kernel: the cause is not settled), the y stores, barriers. Warp specialization moves the depthwise to
//   8 warps, where it is latency-bound per warp: the producers then bound the kernel, hence no gain. An
//   empty kernel and the 33.6 MB copy set a floor under this timer (docs/ladder.md).
// Next (traces of 2026-12-04 night, docs/ladder.md): a tile takes 3.2-3.4 us, ~0.9 over what two x slots deliver
//   (logs/2026-12-04_eae952b_ablate_traces.log): take the MMA issue (~0.5 us a tile) off the GEMM warpgroups' chain;
//   fewer instructions per depthwise output (the K = 5 loop: 77-81 SASS instructions per 4 outputs to the SiLU
//   guard's branch, ~27 of them the guard and rounding, then 12-15 for the act stores at shift 0:
//   logs/2026-12-04_1d7550b_k5_loop_sass.txt); the ~4 us before the first tile. Since six warpgroups (81002ae):
//   a trace of the six-warpgroup block (how its tile splits now), six warpgroups timed at dilations 3 and 4 and in
//   the run-time-K kernels (WG_DW_EXTRA_WHERE=1: ptxas spills 8-28 bytes there), and the GEMM warpgroups' chain
//   (MMA issue, y stores, barrier), which the 25% share showed the tile then waits for. Timed on an H100 2026-12-05
//   and not kept (docs/ladder.md, the runs of 069c5c4): FUSED_SILU_ANY and WG_DW_LEAN, a group of K 5 d 2 in 82-91
//   instructions instead of 100-108 (logs/2026-12-04_0dc7b01_lean_dw_sass.txt), 0.987-1.000 of the tree (removed
//   2026-12-06; the code: 7cb870a), and WG_WS_EXTRA with WG_WS=1 (0.964-0.988).
// Shape limits (fused_unsupported): an sm_90 GPU (wgmma is sm_90a-only); fp32 x with T % 4 == 0 and
//   16-byte alignment, dilation <= 4 and (K-1)*dilation <= 16 (the windowed depthwise); C_in <= 128,
//   C_out <= 128. ModelNew routes every other shape to the next rung of its accuracy class (rung 8, then 5).
// Timing experiments: FUSED_ABLATE (common.cuh; scripts/ablate.py) leaves out the depthwise (1), the
//   MMAs (2), the y stores (4) or the x copies (8), the W_pw fill (16) or its rounding (32), or keeps y's writes
//   (64) or x's reads (128) in L2. Where the time went on 2026-12-03: docs/ladder.md, results/ablation_*.png.
#include "wgmma.cuh"  // its defaults are this rung's tuned configuration

const char* fused_unsupported(const FusedArgs& a) {
  if (const char* why = require_float32(a)) return why;
  return wg_refusal<float, false>(a);
}

void fused_forward(const FusedArgs& a, void* stream) { wg_launch<float, false>(a, stream); }
