// wgmma.cuh: the Hopper (sm_90a) tile kernel of rungs 09-11, templated on
//   T      the element type of x and y (float; __nv_bfloat16 or __half, whose GEMM runs in bf16),
//   kSplit 3xTF32 (rung 10): W_pw and act are stored twice, big = tf32(v) and small = tf32(v - big), and
//          every k-step issues big*big + big*small + small*big, so the product is as accurate as fp32's.
// The design is rung 09's (see its header): W_pw resident in smem, act double-buffered, both K-major in the
// 128-byte swizzled layout wgmma reads; the GEMM of tile i runs asynchronously under the depthwise of tile
// i+1; x tiles by TMA (one 3-D box, zeros outside the tensor) completed on an mbarrier; y stored from the
// accumulators. Two kernels: wg_kernel, every warp doing every phase (rungs 09, 11), and wg_ws_kernel
// (WG_WS=1, rung 10), where two warpgroups build act and two multiply and store (rungs 09 and 13 also launch it at
// dilation 1, its consumers then building a share of act too: WG_WS_D1_SHARE). The defaults below are
// rung 09's tuned configuration; a rung file sets what differs for it before including this.
// Shared-memory operands:
//   tf32: 4 atoms of 32 channels (128 B per row); one m64nNk8 wgmma per 8 channels (16 per tile);
//   bf16: 2 atoms of 64 channels (128 B per row); one m64nNk16 wgmma per 16 channels (8 per tile).
#pragma once
#include "tc_tile.cuh"
#include "mbarrier.cuh"
#include "wgmma_ops.cuh"  // wgmma, descriptors, the swizzled layout, TMA loads, the tensor-map encoder
#include <utility>

#ifndef TILE_T
#define TILE_T 64
#endif
#ifndef WARPGROUPS
#define WARPGROUPS 4  // 2: each warpgroup 64 channels x TILE_T; 4: 64 channels x TILE_T / 2
#endif
#ifndef WG_MIN_BLOCKS
#define WG_MIN_BLOCKS 1  // __launch_bounds__ minimum blocks per SM (2: 2 blocks/SM where smem allows, <= 128
                         // registers; measured no faster on rung 11: docs/ladder.md)
#endif
// The SiLU is common.cuh's FUSED_SILU knob (default: eager's formula). The tanh form is faster on rung 09
// (docs/ladder.md) but leaves eager's numbers: a knob, not a default.
#ifndef WG_X_SLOTS
#define WG_X_SLOTS 2  // x tiles in flight or in use at most (fewer where they do not fit in smem); 4 at
                      // TILE_T=32 measured no faster than 2; 3 and 4 on rung 11 at TILE_T=64 slower at the
                      // headline, faster at B 64 T 4096, with WG_X_FIRST=0 as well (docs/ladder.md)
#endif
#ifndef WG_L2_PREFETCH
#define WG_L2_PREFETCH 0  // > 0: x tiles are also prefetched into L2 (TMA prefetch) this many tiles ahead of their
                          // load into smem, so the load finds them there: it paid on rung 10 (one x slot),
                          // not on rungs 09 and 11 (two slots; docs/ladder.md)
#endif
#ifndef WG_X_FIRST
#define WG_X_FIRST 1  // 1: the first x tile's load goes out alone, the other slots' loads once it has landed
                      // (faster on rung 09 in a same-run sweep; docs/ladder.md)
#endif
// Timed on an H100 2026-12-06 at every shape of their plans, slower, and gone (docs/ladder.md, the runs of e805dea and
// 2229254; the code is in git): WG_TAIL_HALVES, the last round of tiles as half tiles on neighbouring blocks (0.80-0.99x,
// b93598c..e805dea); WG_X_BOXES, an x tile as 2 or 4 boxes of channel rows issued in a per-block rotated order
// (0.89-0.99x), and WG_X_PROMO=256, x's L2 promotion at 256 bytes (0.994-0.996x), 2229254. WG_L2_HINT (26ec94f):
// L2 evict_first hints on x's TMA loads (1.022-1.024x at the headline, 0.81-0.95x at B 33, B 32 T 4096 and B 64 T 4096; rung
// 10 0.93-0.98x), y's TMA stores (no change) or y's stores from the accumulators (1.006x; with x's, 0.82x at B 64 T 4096).
// Removed knobs, measured slower or no faster (docs/ladder.md keeps the runs): WG_W_FIRST (first x requests after
// W_pw's loads), WG_TMA_LATE (next x load after the wgmmas) and WG_W_TMA (W_pw by four TMA boxes rounded in place
// after the first depthwise: 24.32 against 23.87 us, logs/2026-12-02_69dd9d9_w_tma_ab.log; the code: commit 69dd9d9),
// WG_GRID_TILES (one block a tile, not persistent blocks; rung 11's two-warpgroup form with one x slot: 1.44x slower at
// the headline, logs/2026-12-06_aec361f_grid_tiles_ab_h100.log; its layout takes ~105 KB a block, so 2 blocks an SM,
// each filling W_pw and the SiLU table for one tile; the code: aec361f), WG_Y_ROWS (the two-warpgroup float32 form's y
// staged in act by each warp and stored by whole rows, 16-byte stores, 2: streaming: 0.973-0.985 of the tree in six
// lines, rungs 09 and 13, logs/2026-12-06_4fea1f2_y_rows_targets_probe_h100.log; the code: 4fea1f2), WG_Y_FIRST (the
// two-warpgroup form's GEMM warpgroups storing y(i) before they wait for x(i + 1): 0.973-0.985 of the tree at five lines,
// logs/2026-12-06_7cb870a_y_first_skeleton_gap_h100.log; the code: 7cb870a), WG_DW_LEAN and common.cuh's FUSED_SILU_ANY
// (fewer instructions a depthwise group: 0.987-1.000), WG_DW_EXTRA_16 and WG_Y_TMA_HALF (rung 11's six-warpgroup block
// and two-warpgroup y by TMA at TILE_T 64: 0.887-0.982 of its tree then; all four timed at 069c5c4,
// logs/2026-12-05_069c5c4_knobs_tf32_gpu_tests.log and _knobs_strict_bf16_gpu_tests.log; the code: 7cb870a),
// WG_X_HALVES (the first x tile as two boxes of 64 channels, its depthwise in two halves: 0.959-0.971 at three lines)
// and WG_DW_FIRST_SHARE (the first tile's depthwise shared toward the two warpgroups that do not fill W_pw: 0.987-1.000),
// logs/2026-12-06_dbf0c39_first_tile_knobs_fill_traces_h100.log; the code: dbf0c39),
// WG_MMA_SPREAD (a tile's GEMM in 4 parts between the next tile's depthwise groups: 25.50 against 23.70 us,
// logs/2026-12-03_8b237e6_mma_spread_ab.log; the code: commit 8b237e6), WG_DW_PAIR (two depthwise groups a step, act stores at precomputed offsets:
// 23.97 against 23.86 us) and WG_WS=2 (three producer warpgroups, one consumer: 24.45 against 23.78;
// logs/2026-12-03_99b1738_dw_pair_ws2_ab.log; the code: commit 99b1738).
// WG_FAST_DIV and WG_DESC_ADD (the 64-bit tile division and the per-step descriptors as knobs beside their
// replacements) were removed once measured: logs/2026-12-04_3e2c7b2_fast_div_fixed_k_ab.log; the old code: 4db2629.
// WG_TMA_TID=256 (the later x requests by a depthwise-only thread at the barrier: 0.994, 0.998, 0.988 of thread 0's,
// logs/2026-12-04_bae53a3_tma_tid_traces_ab.log; the code: bae53a3) and WG_X_EARLY (each x slot's next load requested
// once all 16 warps had read it, per-warp mbarrier arrivals: 0.961-0.982 at five shapes,
// logs/2026-12-04_d48e6c1_x_early_ab_trace_sanitize.log; the code: d48e6c1). WG_DW_UNROLL=2 (two depthwise groups a
// step from one window of NQ + 1 x chunks, one SiLU guard branch for both: rung 09 0.968 and 0.972 at the headline,
// 0.79-0.98 at four other shapes, rung 11 0.943; logs/2026-12-04_0098ec2_dw_unroll_ws_d1_ab.log; the code: 0098ec2).
// WG_DW_STEAL=1 (the two-warpgroup form's depthwise groups claimed at run time, one atomic add a group from a counter per
// channel quarter, so that a free warp builds what is left: y bit for bit the tree's, sanitizer-clean; tree time over the
// knob's on an H100, rung 13: headline 0.991, K 3 0.988, B 33 0.987, B 64 T 4096 0.992; rung 09 K 7 0.983;
// logs/2026-12-07_1cc62a4_dw_steal_ab_tests_sanitize_h100.log; the code: 1cc62a4).
// WG_DW_PIPE=1 (the depthwise loop without row groups summed group j + 1 (loads, bias, taps) before group j's SiLU, so
// a warp's next loads and FMA chain could overlap its MUFU chain: y bit for bit the tree's, sanitizer-clean; 103 against
// 100 instructions a group, 12-20 bytes spilled in the six-warpgroup kernels; tree time over the knob's on an H100,
// rung 13: headline 0.928, K 3 0.985, B 33 0.918, B 64 T 4096 0.900; rung 09 K 7 0.950;
// logs/2026-12-07_571174a_dw_pipe_ab_tests_sanitize_h100.log; the code: 59f6a10).
#ifndef WG_WS
#define WG_WS 0  // 1: warp-specialized (wg_ws_kernel below)
#endif
#ifndef WG_Y_TMA
#define WG_Y_TMA 0  // y(i) staged in the act buffer MMA(i) has just read (16 rows x 128 bytes a warp, swizzled) and
                    // written by TMA stores instead of the stores from the accumulators, where a warpgroup's N is 128
                    // bytes of y (wg_y_box): wg_kernel at fp32 TILE_T = 64 or 16-bit 128 (the staging's reads
                    // awaited before the tile's last barrier; awaited after the next MMA issue, one barrier more, it
                    // was slower: 25.79 us, code in 2f00678), and the WG_WS consumers at TILE_T = 32 fp32 (before act
                    // goes back to the producers). Rung 11's default (19.07 against 22.30 us); fp32 rung 09 slower
                    // (25.28 against 23.68; docs/ladder.md)
#endif
#ifndef WG_GEMM_WGS
#define WG_GEMM_WGS 0  // wg_kernel (WG_WS = 0, WARPGROUPS = 4, one accumulator, y stored from the accumulators): the
                       // warpgroups that issue the GEMM. 4: every warpgroup, N = TILE_T / 2. 2: warpgroups 0 and 1
                       // each multiply their 64 W rows by the whole tile (wgmma N = TILE_T, W_pw read from smem once
                       // per tile instead of twice) and store y; warpgroups 2 and 3 only build act (WG_DW_SHARE).
                       // 0 (the default): 2 where C_out > 64 and the depthwise is long enough to hide y's stores
                       // behind (dilation > 1, or K >= WG_GEMM_D1_MIN_K at dilation 1), else 4. Where C_out <= 64,
                       // warpgroup 1's W rows are all padding and warpgroup 0 alone would store y; at dilation 1
                       // the windowed depthwise reuses its loads across outputs and is short: both measured slower
                       // (four-warpgroup time / two-warpgroup time at B 16, C 128, T 2048: K 3, 5 at d 1 0.987,
                       // 0.996; K 9 at d 1 1.019; every K at d 2, 4 1.041-1.056; docs/ladder.md)
#endif
#ifndef WG_GEMM_D1_MIN_K
#define WG_GEMM_D1_MIN_K 9  // WG_GEMM_WGS = 0: the smallest K the two-warpgroup form is chosen at where dilation = 1
#endif
#ifndef WG_DW_SHARE
#define WG_DW_SHARE 25  // WG_GEMM_WGS = 2: percent of a tile's depthwise groups each GEMM warpgroup builds (the
                        // other two split the rest)
#endif
#ifndef WG_DW_EXTRA
#define WG_DW_EXTRA 2  // the two-warpgroup form with float32 I/O where WG_DW_EXTRA_WHERE says: its block gets this many more
                       // depthwise-only warpgroups (4 + WG_DW_EXTRA; 65536 / threads registers each at launch, then
                       // setmaxnreg moves WG_DW_REGS's leftovers to the GEMM warpgroups), more warps to hide the
                       // depthwise's latencies (ncu of the depthwise alone: 4 warps a scheduler, 0.94 eligible, no
                       // pipe above 30%), and the GEMM warpgroups build WG_DW_EXTRA_SHARE percent each. 4 warpgroups'
                       // time / 6's (ab): rung 09 headline 1.039 and 1.032, K 3 d 2 1.037, B 64 T 4096 1.050, K 9 d 1
                       // 0.921; shares 25, 10, 5: 0.978, 1.011, 1.001; one more warpgroup (share 15) 1.011; rung 13
                       // (ModelNew's) headline 1.029 and 1.030, K 3 d 2 1.034 (logs/2026-12-04_96566ec_dw_extra_ab.log,
                       // _96566ec_dw_extra_2_ab.log, _81002ae_dw_extra_default_sanitize_ab.log). 0: 4 everywhere
#endif
#ifndef WG_DW_EXTRA_WHERE
#define WG_DW_EXTRA_WHERE 0  // 0: where it was measured faster, dilation 2 with K 3 or 5 (their own kernels); 1: every
                             // kernel of the two-warpgroup form at dilation > 1 (not measured; ptxas spills 8-28 bytes
                             // in the run-time-K kernels and at K 7 d 2 with WG_DW_REGS = 64:
                             // logs/2026-12-04_77a9bc5_dw_extra_ptxas.txt)
#endif
#ifndef WG_DW_EXTRA_SHARE
#define WG_DW_EXTRA_SHARE 15  // WG_DW_SHARE of the WG_DW_EXTRA block
#endif
#ifndef WG_DW_REGS
#define WG_DW_REGS 64  // WG_DW_EXTRA's block: registers per thread of the depthwise-only warpgroups (setmaxnreg.dec);
                       // the GEMM warpgroups take what they release (setmaxnreg.inc). 56 spills at K 5 d 2 (the same log)
#endif
#ifndef WG_WS_SHARE
#define WG_WS_SHARE 0  // WG_WS = 1: percent of a tile's depthwise groups each consumer warpgroup builds, between issuing
                       // the tile's GEMM and waiting for it (the producers split the rest). 0: the producers build
                       // all of act (rung 10). Rung 09 with WG_WS=1 at the headline, its default's time / this one's
                       // (ab): share 0 0.846, 10 0.948, 15 0.978, 20 1.0125, 25 0.998, 30 0.972, 40 0.932, 45 0.899; K 9
                       // d 1, K 3 d 2, B 64 T 4096 slower at every share (logs/2026-12-04_eea1ed3_ws_share_ab.log,
                       // _7e98793_ws_share_2_ab.log)
#endif
#ifndef WG_WS_D1_SHARE
#define WG_WS_D1_SHARE 20  // WG_WS = 0, fp32 (not the split): where dilation = 1 and the two-warpgroup form is not chosen
                           // (K < WG_GEMM_D1_MIN_K or C_out <= 64) and K is listed in WG_CT_K, launch wg_ws_kernel with this
                           // consumer share instead of the four-warpgroup form. Four-warpgroup time / this route's (ab,
                           // ModelNew's rung 13): K 3 1.055, K 5 1.043, K 7 C 96 1.039, K 3 C 64 T 4096 1.080; y bit for
                           // bit the same (logs/2026-12-04_cfe3315_ws_d1_route_tests_sweep.log; shares 15 and 20 measured
                           // alike, logs/2026-12-04_0098ec2_dw_unroll_ws_d1_ab.log). 0: the four-warpgroup form there
#endif
#ifndef WG_CT_K
#define WG_CT_K 3, 5, 7  // the kernel sizes K with a kernel of their own (the depthwise's K a compile-time constant, one
                         // depthwise loop per call site); every other K runs the kernel whose depthwise dispatches on
                         // K at run time, holding one loop per K <= 16 / dilation + 1 at each call site. A one-K build
                         // (WG_FIXED_K, 3e2c7b2) measured against that kernel: K 5 d 2 1.009, K 3 d 2 1.030,
                         // K 3 d 1 (C 64, T 4096) 1.057 (logs/2026-12-04_3e2c7b2_fast_div_fixed_k_ab.log). 0: none
#endif
#ifndef WG_WS_EXTRA
#define WG_WS_EXTRA 0  // (rung 10 sets 2; an experiment elsewhere: docs/ladder.md) wg_ws_kernel: this many more producer
                       // warpgroups (2 + WG_WS_EXTRA producers, 2 consumers), registers moved by setmaxnreg as in
                       // WG_DW_EXTRA's block (producers WG_DW_REGS, consumers what they release): the warp-specialized
                       // kernel's producers were too few warps for the depthwise (8 warps: 2.9-3.1 us a tile at the
                       // headline), which six warpgroups' 16 depthwise-only warps address without the block barrier that
                       // couples them to the GEMM warpgroups' stores and MMA issue. The split (rung 10, whose producers
                       // run eager's SiLU and store two parts an output) too: with 1, 144 registers a consumer thread
                       // (the tree's 128 spill 8 bytes), with 2, 112; neither build spills (ptxas)
#endif
#ifndef WG_W_SMALL_REGS
#define WG_W_SMALL_REGS 0  // 1 (a timing experiment, timed on an H100 2026-12-05: docs/ladder.md): the split in wg_ws_kernel (rung 10) holds
                           // W_pw's small parts in the consumers' registers, wgmma's A operand for the small*big products
                           // (64 registers a thread), instead of 64 KiB of smem: at TILE_T 32 a second x slot then fits, so
                           // x(n + 2) loads under depthwise(n + 1) instead of one slot's load, then wait. The producers drop
                           // to WG_DW_REGS (setmaxnreg) so that the consumers' accumulators and fragments fit. H100 ab
                           // (2026-12-05): with WG_WS_EXTRA=0 against rung 10's default, 0.95 at the headline, 1.07 at
                           // B 64 T 4096 (~60 tiles a block); with rung 10's WG_WS_EXTRA=2, 0.75-0.79 everywhere
#endif
#ifndef WG_ROW_GROUPS
#define WG_ROW_GROUPS 1  // (since 2026-12-05 night; 0: the form before) where the x box's 16-byte aligned start lies `shift` columns
                         // before the tile's first input column (padding % G != 0: bf16 at the headline, shift 4), the
                         // depthwise's groups are the tile's act rows G j .. G j + G - 1 and each reads its window `shift`
                         // columns into the 16-byte chunks (one chunk more a group where shift + span passes a chunk), not
                         // windows from chunk j whose outputs straddle two row groups: TILE_T / G groups a channel
                         // instead of one more, none partial, each act store at an offset made before the loop (16-bit:
                         // rows 8 j + i, the swizzle's row term i, instead of each of 8 addresses derived in the group:
                         // 30 instructions for a group's stores against 55, logs/2026-12-05_1899c50_row_groups_sass_loops.txt).
                         // The box itself stays 16-byte aligned (a TMA box start off 16 bytes faulted: rung 13, 2308040).
                         // The per-K kernels (WG_CT_K) at 'same' padding only; the run-time-K kernel keeps the form before.
                         // ab against 0 on an H100, y bit for bit the same: bf16 1.019 at the headline, 1.025 at K 3, 1.055
                         // at B 2 T 1000, 1.030 at B 64 T 4096, 1.049 at C 64 T 4096 K 3 d 1, fp16 1.025 at K 7; TF32
                         // 1.024 at K 3, 1.109 at C 64 T 4096 K 3 d 1, rung 13 1.043 at K 7 d 1; strict 1.082 at K 3; the
                         // fp32 headline 0.994 at 45c73fb, whose K 5 d 2 kernel still held the run-time test (since compiled out where the
                         // shift is 0: the form before, instruction for instruction; logs/2026-12-05_92085ee_row_groups_sass_diff.txt)
                         // (logs/2026-12-05_45c73fb_row_groups_ab_check_sanitize_h100.log)
#endif
#ifndef WG_SILU_LUT
#define WG_SILU_LUT 0  // 1 (bf16 x only; rung 11 sets it, its default since 2026-12-06: docs/ladder.md): each depthwise output
                       // rounded to bf16 (as eager's bf16 depthwise writes its output), then eager's SiLU of that bf16 value read
                       // from a table in shared memory (silu_bf16_table.h: torch's own F.silu of every bf16 value of magnitude in
                       // [2^-24, 2^8), 16 KiB, landed by one bulk copy with the block's first x tile) instead of computed (the
                       // guarded fast form: two MUFU a value, 89 of a group's 204 instructions with its guard,
                       // logs/2026-12-05_e321f4f_silu_lut_sass_loops.txt); values outside the table (0, tiny, huge, inf, NaN) take
                       // eager's formula behind one rarely taken branch a group. Numerics: the activations are eager's SiLU of the bf16-rounded depthwise, not of the
                       // fp32 one (the default's, one bf16 ulp from eager's at most).
                       // 2 (for the tests): every value by eager's formula on its bf16 input (what the table holds).
#endif
#if WG_SILU_LUT
#include "silu_bf16_table.h"  // kSiluBf16Table (scripts/gen_silu_lut.py)
#endif
#ifndef WG_CHAINS
#define WG_CHAINS 2  // 3xTF32 only: independent accumulators the big*big products are split over along K
#endif
static_assert(WARPGROUPS == 2 || WARPGROUPS == 4, "WARPGROUPS must be 2 or 4");
static_assert(WG_X_SLOTS >= 1 && WG_X_SLOTS <= 4, "WG_X_SLOTS: 1 .. 4");
static_assert(WG_GEMM_WGS == 0 || WG_GEMM_WGS == 2 || WG_GEMM_WGS == 4, "WG_GEMM_WGS: 0 (chosen at launch), 2 or 4");
static_assert(WG_DW_SHARE >= 0 && WG_DW_SHARE <= 50, "WG_DW_SHARE: 0 .. 50 (percent per GEMM warpgroup)");
static_assert(WG_DW_EXTRA >= 0 && WG_DW_EXTRA <= 4, "WG_DW_EXTRA: 0 .. 4 (a block of at most 1024 threads)");
static_assert(WG_DW_EXTRA_SHARE >= 0 && WG_DW_EXTRA_SHARE <= 50, "WG_DW_EXTRA_SHARE: 0 .. 50 (percent per GEMM warpgroup)");
static_assert(WG_DW_REGS % 8 == 0 && WG_DW_REGS >= 24, "WG_DW_REGS: a multiple of 8, >= 24");
static_assert(WG_WS_SHARE >= 0 && WG_WS_SHARE <= 50, "WG_WS_SHARE: 0 .. 50 (percent per consumer warpgroup)");
static_assert(WG_WS_D1_SHARE >= 0 && WG_WS_D1_SHARE <= 50, "WG_WS_D1_SHARE: 0 .. 50 (percent per consumer warpgroup)");
static_assert(WG_CHAINS == 1 || WG_CHAINS == 2 || WG_CHAINS == 4 || WG_CHAINS == 8, "WG_CHAINS: 1, 2, 4 or 8");

namespace {

// FUSED_TRACE=1 (a timing experiment; scripts/trace_case.py): one thread per role records clock64() at the
// phase boundaries of its block's first kTraceTiles tiles, and %globaltimer at entry and exit (so cycles
// convert to microseconds per block). Slot layout per block: entry, exit (clocks), entry, exit (ns), the
// W_pw fill done, then kTrPhases slots per tile.
#ifndef FUSED_TRACE
#define FUSED_TRACE 0
#endif
constexpr int kTraceSlots = 72, kTraceBlocks = 1024, kTraceTiles = 8;
enum WgTraceSlot { kTrEntry = 0, kTrExit = 1, kTrEntryNs = 2, kTrExitNs = 3, kTrWFill = 4, kTrTile0 = 8 };
// kTrXIssued (wg_kernel): thread 0 is past the x request that precedes tile n's MMA issue
enum WgTracePhase { kTrXLanded, kTrActFree, kTrDwDone, kTrMmaIssued, kTrMmaDone, kTrStored, kTrBarrier, kTrXIssued,
                    kTrPhases };
static_assert(kTrTile0 + kTraceTiles * kTrPhases <= kTraceSlots, "trace slots");
#if FUSED_TRACE
__device__ unsigned long long wg_trace_buf[kTraceBlocks * kTraceSlots];
#endif
__device__ __forceinline__ void wg_mark(int slot, bool ns = false) {
#if FUSED_TRACE
  unsigned long long t;
  if (ns) asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  else t = clock64();
  if (blockIdx.x < kTraceBlocks) wg_trace_buf[blockIdx.x * kTraceSlots + slot] = t;
#endif
}
__device__ __forceinline__ void wg_mark_tile(int n, int phase) {
  if (FUSED_TRACE && n < kTraceTiles) wg_mark(kTrTile0 + n * kTrPhases + phase);
}
__device__ __forceinline__ void wg_mark_ends(bool entry) {
  if (FUSED_TRACE) {
    wg_mark(entry ? kTrEntryNs : kTrExitNs, true);
    wg_mark(entry ? kTrEntry : kTrExit);
  }
}

constexpr int kThreads = WARPGROUPS * 128;
constexpr int kRows = 128;     // W_pw rows in smem (C_out padded to 128; warpgroup g takes rows 64 (g % 2) ..)
constexpr int kMaxCin = 128;   // the GEMM's K (C_in zero-padded)
constexpr int kNT = TILE_T / (WARPGROUPS / 2);  // time columns per warpgroup: the wgmma N
static_assert(kNT == 8 || kNT == 16 || kNT == 32 || kNT == 64, "TILE_T / (WARPGROUPS / 2) must be 8, 16, 32 or 64");
static_assert(TILE_T % 8 == 0, "TILE_T must be a multiple of 8");

// The GEMM's element type: tf32 (stored as float) for fp32 I/O, bf16 for 16-bit I/O (bf16's range also
// holds fp16 activations).
template <typename T>
using WgElem = std::conditional_t<std::is_same_v<T, float>, float, __nv_bfloat16>;

// Issue this warpgroup's GEMM for one tile, all in one commit group (fully unrolled: a run-time trip count
// made ptxas insert warpgroup waits). w_addr: smem address of the warpgroup's first W row (K atom 0);
// act_addr: of its first act row, atoms TT rows apart. One accumulator d[0] = W * act; for the split
// (A = WG_CHAINS + 1): d[c] = the big*big products of K slice c, d[A-1] = big*small + small*big, where
// the small operands sit w_small / act_small bytes after the big ones. Chains, because the tensor cores'
// accumulation truncates, so a long chain of big*big products drifts (the errors per chain count:
// docs/ladder.md). kSmallRegs (WG_W_SMALL_REGS): the small W_pw parts are A fragments in registers, w_small_regs[ks]
// the k-step ks's (wg_small_frags), and w_small is unused.
template <typename E, bool kSplit, int N, int TT, int A, bool kSmallRegs = false>
__device__ __forceinline__ void wg_gemm_issue(float (&d)[A][N / 2], uint32_t w_addr, uint32_t act_addr,
                                              uint32_t w_small, uint32_t act_small,
                                              const uint32_t (*w_small_regs)[4] = nullptr) {
  constexpr int kSteps = kMaxCin * static_cast<int>(sizeof(E)) / 32;  // 32 bytes of K per wgmma
  constexpr int kPerAtom = 4;                                         // k-steps per 128-byte atom row
  wg_fence_regs(d);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  // Each k-step's descriptor is the first one plus its byte offset / 16: the start-address field (bits 0-13, the
  // address / 16) holds any shared-memory address, so the add never carries out of it, and one add replaces
  // wg_desc's add, mask, shift and or per operand (1.006x at the headline; the form before: 4db2629).
  const uint64_t w_desc = wg_desc(w_addr), act_desc = wg_desc(act_addr);
  auto desc = [](uint64_t base, uint32_t off) { return base + (off >> 4); };
#pragma unroll
  for (int ks = 0; ks < (FUSED_ABLATE & 2 ? 0 : kSteps); ++ks) {
    const uint32_t koff = (ks % kPerAtom) * 32u;
    const uint32_t wo = (ks / kPerAtom) * (kRows * 128) + koff;
    const uint32_t ao = (ks / kPerAtom) * (TT * 128) + koff;
    if constexpr (!kSplit) {
      Wgmma<N, E>::mma(d[0], desc(w_desc, wo), desc(act_desc, ao), ks > 0);
    } else {
      constexpr int kChainSteps = kSteps / (A - 1);
      Wgmma<N, E>::mma(d[A - 1], desc(w_desc, wo), desc(act_desc, ao + act_small), ks > 0);
      if constexpr (kSmallRegs)
        WgmmaRs<N>::mma(d[A - 1], w_small_regs[ks], desc(act_desc, ao));
      else
        Wgmma<N, E>::mma(d[A - 1], desc(w_desc, wo + w_small), desc(act_desc, ao), 1);
      Wgmma<N, E>::mma(d[ks / kChainSteps], desc(w_desc, wo), desc(act_desc, ao),
                       ks % kChainSteps > 0);
    }
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  wg_fence_regs(d);
}

// ---- eager's bf16 SiLU from a table (WG_SILU_LUT) ----
template <typename T>
__host__ __device__ constexpr bool wg_lut() { return WG_SILU_LUT != 0 && std::is_same_v<T, __nv_bfloat16>; }
constexpr uint32_t kSiluLutBase = 0x3380;                  // the first magnitude held: bits & 0x7fff of 2^-24
constexpr uint32_t kSiluLutMags = 4096;                    // 32 exponents x 128 mantissas: up to 2^8
constexpr uint32_t kSiluLutBytes = 2 * kSiluLutMags * 2;   // both signs, 16 bits an entry
constexpr uint32_t kSiluLutOff = (kRows + 2 * TILE_T) * kMaxCin * 2;  // smem: after W_pw and the two bf16 act tiles
// v[i] <- eager's SiLU of bf16(v[i]) (RNE), as a float holding a bf16 value. Entry 2 (m - kSiluLutBase) + s (byte
// offset 4 (m - base) + 2 s) holds the value of magnitude bits m and sign s. With a = h - base (h the bf16 bits): a =
// 0x8000 s + m - base, so the offset is ((a << 2) | (a >> 14)) & 0x3ffe wherever m is held, and m is held exactly where
// a & 0x7000 is 0 (m - base < 0x1000; m < base wraps a into bits 12-14); the other values' offsets are masked into the
// table (a load that is not used) and the group takes eager's formula for them behind one branch.
template <int N>
__device__ __forceinline__ void wg_silu_lut(float (&v)[N]) {
#if WG_SILU_LUT
  extern __shared__ unsigned char wg_smem_raw[];
  const uint32_t lut = ((static_cast<uint32_t>(__cvta_generic_to_shared(wg_smem_raw)) + 1023u) & ~1023u) + kSiluLutOff;
  uint32_t h[N], r[N], any = 0;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    h[i] = __bfloat16_as_ushort(__float2bfloat16_rn(v[i]));
    const uint32_t a = h[i] - kSiluLutBase;
    any |= a;
    uint16_t e;
    asm("ld.shared.u16 %0, [%1];" : "=h"(e) : "r"(lut + (((a << 2) | (a >> 14)) & 0x3ffeu)));
    r[i] = e;
  }
  if (WG_SILU_LUT == 2 || __builtin_expect((any & 0x7000u) != 0, 0)) {
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (WG_SILU_LUT == 2 || ((h[i] - kSiluLutBase) & 0x7000u) != 0)
        r[i] = __bfloat16_as_ushort(__float2bfloat16_rn(silu(__uint_as_float(h[i] << 16))));
  }
#pragma unroll
  for (int i = 0; i < N; ++i) v[i] = __uint_as_float(r[i] << 16);
#endif
}
// A group's activations, rounded to the GEMM's type: eager's SiLU, by the table (WG_SILU_LUT, bf16 x) or by common.cuh's
// guarded form.
template <typename T, int N>
__device__ __forceinline__ void wg_act_rounded(float (&v)[N]) {
  if constexpr (wg_lut<T>()) wg_silu_lut(v);
  else silu_rounded<std::is_same_v<WgElem<T>, float> ? 13 : 16>(v);
}

// ---- depthwise ----
// 16 bytes of x from smem -> G floats.
__device__ __forceinline__ void wg_load16(const float* p, float (&v)[4]) {
  const float4 w = *reinterpret_cast<const float4*>(p);
  v[0] = w.x; v[1] = w.y; v[2] = w.z; v[3] = w.w;
}
template <typename H>  // __nv_bfloat16 or __half
__device__ __forceinline__ void wg_load16(const H* p, float (&v)[8]) {
  const uint4 w = *reinterpret_cast<const uint4*>(p);
  const uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (std::is_same_v<H, __nv_bfloat16>) {  // bf16 -> fp32 is a shift: two integer ops per pair
      v[2 * i] = __uint_as_float(u[i] << 16);
      v[2 * i + 1] = __uint_as_float(u[i] & 0xffff0000u);
    } else {
      const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&u[i]));
      v[2 * i] = f.x; v[2 * i + 1] = f.y;
    }
  }
}
// One activation into act, in the GEMM's element type: split, eager's fp32 SiLU cut into its big and small
// parts here; otherwise a value already rounded to the element type (common.cuh's silu_rounded: eager's bits).
template <typename E, bool kSplit>
__device__ __forceinline__ void wg_put_act(unsigned char* p, uint32_t small_off, float v) {
  if constexpr (kSplit) {
    const float big = tc_round_tf32(v);
    *reinterpret_cast<float*>(p) = big;
    *reinterpret_cast<float*>(p + small_off) = tc_round_tf32(v - big);
  } else if constexpr (std::is_same_v<E, float>) {
    *reinterpret_cast<float*>(p) = v;
  } else {
    *reinterpret_cast<uint16_t*>(p) = static_cast<uint16_t>(__float_as_uint(v) >> 16);  // v is a bf16 value
  }
}

// One group of one channel: G outputs of depthwise + bias + SiLU from the 16-byte aligned x window at xp (the row
// groups' loop; wg_dw_silu_k's own loop keeps these lines inline). SiLU:
// eager's formula for the split, whose activations must be fp32-exact; otherwise eager's value rounded to the GEMM's
// type, by the guarded fast form.
// kOff (WG_ROW_GROUPS): the group's first input lies kOff elements into the window's first 16-byte chunk.
template <typename T, bool kSplit, int D, int K, int kOff = 0>
__device__ __forceinline__ void wg_dw_group(const T* xp, const float (&wt)[16 / D + 1], float bias,
                                            float (&v)[16 / sizeof(T)]) {
  using E = WgElem<T>;
  constexpr int G = 16 / static_cast<int>(sizeof(T));
  constexpr int NQ = (kOff + (K - 1) * D + G + G - 1) / G;  // 16-byte loads in the window
  float win[G * NQ];
#pragma unroll
  for (int q = 0; q < NQ; ++q) wg_load16(xp + G * q, reinterpret_cast<float(&)[G]>(win[G * q]));
#pragma unroll
  for (int i = 0; i < G; ++i) v[i] = bias;
#pragma unroll
  for (int k = 0; k < K; ++k)
#pragma unroll
    for (int i = 0; i < G; ++i) v[i] = fmaf(wt[k], win[kOff + k * D + i], v[i]);
#pragma unroll
  for (int i = 0; i < G; ++i) v[i] = kSplit ? silu_eager(v[i]) : v[i];
  if constexpr (!kSplit) wg_act_rounded<T>(v);
}

// Depthwise + bias + SiLU of one channel over output groups [j0, j1) of one tile, into act (K-major,
// swizzled: row = tile column, k = channel). G = 16 bytes of x = 4 fp32 or 8 16-bit outputs per group:
// group j covers tile columns G j - shift .. G j - shift + G - 1 and reads the 16-byte aligned x window
// starting at x-tile column G j. Channels >= C_in (live == false) write zeros, so the padded K terms of
// the GEMM are exact zeros. K and D are compile-time constants: only the window's 16-byte loads and the
// taps that exist are issued (the run-time K form issued kKmax predicated taps and window copies: 170-223
// SASS instructions per 4 outputs at d=2, then 106-110).
// The depthwise's shift at 'same' padding ((K - 1) D / 2) for groups of G elements: where the 16-byte aligned x box starts,
// that many columns before the tile's first input (tile starts are multiples of G). WG_ROW_GROUPS works where it is not 0.
__host__ __device__ constexpr int wg_row_shift(int K, int D, int G) { return (G - (K - 1) * D / 2 % G) % G; }
// rows (WG_ROW_GROUPS; the caller's groups are then TT / G a channel): group j is act rows G j .. G j + G - 1, its window
// wg_row_shift(K, D, G) elements into x chunk j.
template <typename T, bool kSplit, int TT, int D, int K>
__device__ __forceinline__ void wg_dw_silu_k(unsigned char* sAct, uint32_t small_off, const T* xrow,
                                             const float (&wt)[16 / D + 1], float bias, int c, bool live, int j0,
                                             int j1, int shift, bool rows = false) {
  using E = WgElem<T>;
  constexpr int G = 16 / static_cast<int>(sizeof(T));
  constexpr int ES = static_cast<int>(sizeof(E));
  constexpr int NQ = ((K - 1) * D + G + G - 1) / G;  // 16-byte loads in the window
  const int kb = (c % (128 / ES)) * ES;              // byte of channel c within its atom row
  const uint32_t cbase = (c / (128 / ES)) * (TT * 128) + (kb & 15);
  const uint32_t chunk = kb >> 4;
  // fp32 (G = 4) at shift 0: rows tt0 + i, tt0 = 4 j, share bit 2 of the swizzle's row term (tt0 & 4), so row
  // tt0 + i lies at cbase + 128 tt0 + 16 (chunk ^ (tt0 & 4)) + e_i, e_i = 128 i + 16 ((chunk & 3) ^ i) - 16 (chunk & 3):
  // one base a group and three per-thread offsets instead of the swizzle per store (with the one-instruction
  // rounding, 1.0030-1.0075 in four ab runs at the headline, K 9 d 1 1.0155: logs/2026-12-04_ba760c1_tf32_cvt_act_addr_ab.log,
  // _475f57c_cvt_defaults_verify_ab.log; the form before: ba760c1 with WG_ACT_ADDR=0)
  constexpr bool kFastAddr = G == 4;
  const int lo2 = static_cast<int>(chunk & 3u);
  const uint32_t e1 = 128 + 16 * ((lo2 ^ 1) - lo2), e2 = 256 + 16 * ((lo2 ^ 2) - lo2), e3 = 384 + 16 * ((lo2 ^ 3) - lo2);
  const uint32_t base0 = cbase + 16u * chunk, base1 = cbase + 16u * (chunk ^ 4u);  // even / odd groups
  constexpr int kRowShift = wg_row_shift(K, D, G);
  if constexpr (WG_ROW_GROUPS != 0 && kRowShift != 0) {
    if (rows) {
      // 16-bit: row 8 j + i's swizzle term is i, so each store lies at 1024 j plus o8[i], made once (fp32 has no use for
      // them: the shift-0 stores above, base0 / base1 and e1..e3)
      constexpr int kO8 = G == 8 ? 8 : 1;
      uint32_t o8[kO8];
#pragma unroll
      for (int i = 0; i < kO8; ++i) o8[i] = cbase + 128u * i + 16u * (chunk ^ static_cast<uint32_t>(i));
      for (int j = j0; j < j1; ++j) {
        float v[G];
#pragma unroll
        for (int i = 0; i < G; ++i) v[i] = 0.0f;
        if (live) wg_dw_group<T, kSplit, D, K, kRowShift>(xrow + G * j, wt, bias, v);
        if constexpr (G == 8) {
          unsigned char* b = sAct + 1024u * static_cast<uint32_t>(j);
#pragma unroll
          for (int i = 0; i < G; ++i) wg_put_act<E, kSplit>(b + o8[i], small_off, v[i]);
        } else {
          unsigned char* b = sAct + ((j & 1) ? base1 : base0) + 512u * static_cast<uint32_t>(j);
          wg_put_act<E, kSplit>(b, small_off, v[0]);
          wg_put_act<E, kSplit>(b + e1, small_off, v[1]);
          wg_put_act<E, kSplit>(b + e2, small_off, v[2 % G]);
          wg_put_act<E, kSplit>(b + e3, small_off, v[3 % G]);
        }
      }
      return;
    }
  }
  // (wg_dw_group's lines inline: the form whose SASS was timed. Through the helper, ptxas scheduled every wgmma rung's
  // kernels differently (scripts/sass_diff.py, 2026-12-06), a change not timed)
  for (int j = j0; j < j1; ++j) {
    float v[G];
#pragma unroll
    for (int i = 0; i < G; ++i) v[i] = 0.0f;
    if (live) {
      float win[G * NQ];
#pragma unroll
      for (int q = 0; q < NQ; ++q) wg_load16(xrow + G * j + G * q, reinterpret_cast<float(&)[G]>(win[G * q]));
#pragma unroll
      for (int i = 0; i < G; ++i) v[i] = bias;
#pragma unroll
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int i = 0; i < G; ++i) v[i] = fmaf(wt[k], win[k * D + i], v[i]);
#pragma unroll
      for (int i = 0; i < G; ++i) v[i] = kSplit ? silu_eager(v[i]) : v[i];
      if constexpr (!kSplit) wg_act_rounded<T>(v);
    }
    const int tt0 = G * j - shift;
    auto put = [&](int tt, float val) {
      wg_put_act<E, kSplit>(sAct + cbase + tt * 128 + ((chunk ^ (tt & 7)) << 4), small_off, val);
    };
    if (kFastAddr && shift == 0) {  // tile-uniform; every group lies inside the tile
      unsigned char* b = sAct + ((j & 1) ? base1 : base0) + 512u * static_cast<uint32_t>(j);
      wg_put_act<E, kSplit>(b, small_off, v[0]);
      wg_put_act<E, kSplit>(b + e1, small_off, v[1]);
      wg_put_act<E, kSplit>(b + e2, small_off, v[2 % G]);
      wg_put_act<E, kSplit>(b + e3, small_off, v[3 % G]);
    } else if (tt0 >= 0 && tt0 + G <= TT) {  // warp-uniform (the lanes of a warp share j)
#pragma unroll
      for (int i = 0; i < G; ++i) put(tt0 + i, v[i]);
    } else {
#pragma unroll
      for (int i = 0; i < G; ++i)
        if (tt0 + i >= 0 && tt0 + i < TT) put(tt0 + i, v[i]);
    }
  }
}

// Where the first k warpgroups' depthwise shares end, in 200ths of a tile's groups, when warpgroups 0 and 1 each build
// `share` percent and the n warpgroups from 2 on split the rest (k = 0 .. 2 + n). (n = 2 keeps its own expression: the
// same values, as 200 - 4 share is even, but one form for every n changes the SASS of 15 timed kernels' setup.)
__host__ __device__ constexpr int wg_share_edge(int k, int share, int n = 2) {
  return k <= 2 ? 2 * share * k : n == 2 ? 4 * share + (200 - 4 * share) / 2 * (k - 2) : 4 * share + (200 - 4 * share) * (k - 2) / n;
}

// Run-time K -> wg_dw_silu_k<.., K> (K = KK, KK - 1, ..., 1; the shape test guarantees (K-1)*D <= 16).
template <typename T, bool kSplit, int TT, int D, int KK = 16 / D + 1>
__device__ __forceinline__ void wg_dw_silu(int K, unsigned char* sAct, uint32_t small_off, const T* xrow,
                                           const float (&wt)[16 / D + 1], float bias, int c, bool live, int j0,
                                           int j1, int shift) {
  if constexpr (KK >= 1) {
    if (K == KK) wg_dw_silu_k<T, kSplit, TT, D, KK>(sAct, small_off, xrow, wt, bias, c, live, j0, j1, shift);
    else wg_dw_silu<T, kSplit, TT, D, KK - 1>(K, sAct, small_off, xrow, wt, bias, c, live, j0, j1, shift);
  }
}

// WG_W_SMALL_REGS applies: the split, in wg_ws_kernel (WG_WS = 1: every launch of the build)
template <bool kSplit>
__host__ __device__ constexpr bool wg_small_regs() { return kSplit && WG_W_SMALL_REGS && WG_WS == 1; }

// Host and device: the smem layout of one configuration (bytes).
template <typename T, bool kSplit>
struct WgLayout {
  using E = WgElem<T>;
  static constexpr uint32_t w_bytes = kRows * kMaxCin * sizeof(E);           // one copy of W_pw
  static constexpr uint32_t act_part = TILE_T * kMaxCin * sizeof(E);         // one act tile (a multiple of 1024)
  static constexpr int w_copies = kSplit && !wg_small_regs<kSplit>() ? 2 : 1;
  static constexpr uint32_t off_act = w_copies * w_bytes;                    // [W_pw big | W_pw small (in smem)]
  static constexpr uint32_t act_stage = (kSplit ? 2 : 1) * act_part;         // [act big | act small] x 2 stages
  static constexpr uint32_t lut_bytes = wg_lut<T>() ? kSiluLutBytes : 0;       // WG_SILU_LUT's table, after act
  static_assert(lut_bytes == 0 || off_act + 2 * act_stage == kSiluLutOff, "WG_SILU_LUT: the table follows act");
  static constexpr uint32_t off_x = off_act + 2 * act_stage + lut_bytes;
  // x slots: as many of the largest x tiles (C_in = 128, span 16, one chunk of padding) as fit, at most
  // WG_X_SLOTS, at least 1 (a compile-time constant: the slot and mbarrier parity of a tile are then
  // shifts, not divisions where S is a power of 2)
  static constexpr int G = 16 / sizeof(T);
  static constexpr uint32_t x_stage_max = (kMaxCin * (TILE_T + (16 + 2 * G - 1) / G * G + G) * sizeof(T) + 1023) / 1024 * 1024;
  static constexpr uint32_t bars = (WG_X_SLOTS + 4) * 8;  // x slots, then FULL[2], EMPTY[2] (WG_WS)
  static constexpr int64_t x_fit = (227 * 1024 - 1024 - static_cast<int64_t>(bars) - off_x) / x_stage_max;
  static constexpr int x_slots = x_fit < 1 ? 1 : x_fit < WG_X_SLOTS ? static_cast<int>(x_fit) : WG_X_SLOTS;
};

// The x tiles, the act buffers and the depthwise of one block (both kernels below). x tiles sit in
// S = L::x_slots slots (2 where smem allows): the block's n-th tile in slot n % S, completed on xbar[n % S];
// act tile n is built in buffer n % 2.
template <typename T, bool kSplit, int TT, int D, int KC>  // KC: the compile-time K (0: K at run time)
struct WgTiles {
  using L = WgLayout<T, kSplit>;
  static constexpr int S = L::x_slots, G = L::G, kKmax = 16 / D + 1;
  const TcParams& p;
  const CUtensorMap* xmap;
  unsigned char* smem;  // 1024-byte aligned base
  uint64_t* xbar;       // one mbarrier per x slot
  // Thread 0 of the issuing group: the block's n-th tile (tile index t) -> slot n % S (nothing past the end).
  // With WG_L2_PREFETCH = PF, a load past the first S also prefetches the block's tile n + PF into L2
  // (the first S loads: after_first() covers tiles S .. S + PF - 1).
  __device__ __forceinline__ void issue_x(int n, int64_t t) const {
    if (t < p.n_tiles && !(FUSED_ABLATE & 8)) {
      const int s = n % S;
      const bool lut = wg_lut<T>() && n == 0;  // WG_SILU_LUT: the SiLU table lands with the block's first tile
      // (zero-filled parts count)
      mbar_expect_tx(&xbar[s], static_cast<uint32_t>(p.XW) * p.C_in * sizeof(T) + (lut ? kSiluLutBytes : 0u));
#if WG_SILU_LUT
      if (lut) bulk_load(smem + kSiluLutOff, kSiluBf16Table, kSiluLutBytes, &xbar[s]);
#endif
      // FUSED_ABLATE 128: every tile's box from batch row 0 (L2 hits after the first: what x's DRAM reads cost)
      tma_load_3d(smem + L::off_x + s * p.x_stage, xmap, &xbar[s], x_col(t), 0, FUSED_ABLATE & 128 ? 0 : row_of(t));
      if (WG_L2_PREFETCH > 0 && n >= S) prefetch(t + static_cast<int64_t>(WG_L2_PREFETCH) * gridDim.x);
    }
  }
  // Once the first tile has landed (so that the loads at the start do not delay it): WG_X_FIRST's other
  // slot loads, then the L2 prefetches of tiles S .. S + PF - 1.
  __device__ __forceinline__ void after_first(int64_t first_tile) const {
    if (WG_X_FIRST)
      for (int n = 1; n < S; ++n) issue_x(n, first_tile + static_cast<int64_t>(n) * gridDim.x);
    for (int k = S; k < S + WG_L2_PREFETCH; ++k) prefetch(first_tile + static_cast<int64_t>(k) * gridDim.x);
  }
  // Tile t's batch row and time tile (t = row * n_tt + col; wg_shape_refusal keeps n_tiles < 2^31): fast_div's
  // multiply-high instead of the 64-bit division of `t / n_tt`, `t % n_tt` (1.034x at the headline; the form before:
  // 4db2629).
  __device__ __forceinline__ int row_of(int64_t t) const {
    return static_cast<int>(fast_div(static_cast<uint32_t>(t), p.tt_div));
  }
  __device__ __forceinline__ int col_of(int64_t t) const {
    return static_cast<int>(static_cast<uint32_t>(t) - static_cast<uint32_t>(row_of(t)) * p.tt_div.d);
  }
  __device__ __forceinline__ int x_col(int64_t t) const {  // first x column of tile t's box
    return static_cast<int>(tc_x_start(static_cast<int64_t>(col_of(t)) * TT - p.padding, G));
  }
  __device__ __forceinline__ void prefetch(int64_t t) const {
    if (t < p.n_tiles && !(FUSED_ABLATE & 8)) tma_prefetch_3d(xmap, x_col(t), 0, row_of(t));
  }
  // The block's n-th tile landed (slot n % S, its (n / S)-th fill: the parity alternates).
  __device__ __forceinline__ void wait_x(int n) const {
    if (!(FUSED_ABLATE & 8)) mbar_wait(&xbar[n % S], (n / S) & 1);
  }
  // x slot n % S -> act buffer n % 2 for tile t: channel c, groups [groups lo / den, groups hi / den) of the tile's.
  __device__ __forceinline__ void depthwise(int n, int64_t t, const float (&wt)[kKmax], float bias, int c, bool live,
                                            int lo, int hi, int den) const {
    const int64_t xs = static_cast<int64_t>(col_of(t)) * TT - p.padding;
    const int shift = static_cast<int>(xs - tc_x_start(xs, G));
    // WG_ROW_GROUPS (the per-K kernels, 'same' padding): groups of act rows, windows `shift` into the chunks
    // (a compile-time false where the 'same' padding's shift is 0: those kernels are the form before, instruction for instruction)
    constexpr bool kRowsAt = WG_ROW_GROUPS && KC > 0 && wg_row_shift(KC, D, G) != 0;
    const bool rows = kRowsAt && shift > 0 && p.padding == (KC - 1) * D / 2;
    const int groups = TT / G + (shift > 0 && !rows ? 1 : 0);  // per channel row
    unsigned char* act = smem + L::off_act + (n & 1) * L::act_stage;
    const T* xrow = reinterpret_cast<const T*>(smem + L::off_x + (n % S) * p.x_stage) + c * p.XW;
    if (FUSED_ABLATE & 1) return;
    if constexpr (KC > 0)
      wg_dw_silu_k<T, kSplit, TT, D, KC>(act, L::act_part, xrow, wt, bias, c, live, groups * lo / den,
                                         groups * hi / den, shift, rows);
    else
      wg_dw_silu<T, kSplit, TT, D>(p.K, act, L::act_part, xrow, wt, bias, c, live, groups * lo / den,
                                   groups * hi / den, shift);
  }
};

// Thread `tid` of `NT` threads: W_pw -> the GEMM's type (round to nearest), swizzled K-major, zero outside
// C_out x C_in; split: also the small parts (W_pw bytes after the big ones). Batches of up to 16 float4 per
// thread, each batch's 16-byte loads all issued before its first store: the fill is on every block's
// critical path (a fill whose loop also held the scalar fallback issued its loads one by one and made the
// whole kernel measurably slower; docs/ladder.md).
// after_loads() runs once the first batch's loads are in flight (rung 12's RS_W_FIRST issues its x requests there,
// so W_pw's loads are not queued behind them).
// W_pw's big part as the GEMM reads it (FUSED_ABLATE 32: unrounded); the split's small part is tc_tf32(w - big). One
// formula for wg_fill_w's smem copy and wg_small_frags' register fragments (WG_W_SMALL_REGS), so both hold the same bits.
__device__ __forceinline__ float wg_w_big(float w) { return FUSED_ABLATE & 32 ? w : __uint_as_float(tc_tf32_gemm(w)); }
struct WgNoHook {
  __device__ void operator()() const {}
};
template <typename E, bool kSplit, int NT, typename Hook = WgNoHook>
__device__ __forceinline__ void wg_fill_w(unsigned char* smem, const TcParams& p, int tid, Hook after_loads = {}) {
  constexpr int CP = kMaxCin, kTotal = kRows * CP / 4;  // float4s of the padded W_pw
  constexpr uint32_t w_bytes = kRows * kMaxCin * sizeof(E);
  constexpr int kBatch = kTotal / NT < 16 ? kTotal / NT : 16;
  static_assert(kTotal % (NT * kBatch) == 0, "W_pw fill: thread count must divide the padded W_pw");
  auto put_w = [&](int i, const float4& w4) {  // float4 i of the 128 x 128 W_pw (4 consecutive k)
    const int m = i / (CP / 4), k = (i % (CP / 4)) * 4;
    const float w[4] = {w4.x, w4.y, w4.z, w4.w};
    unsigned char* dst = smem + wg_swz<sizeof(E)>(m, k, kRows);
    if constexpr (std::is_same_v<E, float>) {
      float big[4], small[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        big[e] = wg_w_big(w[e]);
        small[e] = __uint_as_float(tc_tf32(w[e] - big[e]));
      }
      *reinterpret_cast<float4*>(dst) = make_float4(big[0], big[1], big[2], big[3]);
      if constexpr (kSplit) *reinterpret_cast<float4*>(dst + w_bytes) = make_float4(small[0], small[1], small[2], small[3]);
    } else {
      const __nv_bfloat162 lo = __floats2bfloat162_rn(w[0], w[1]), hi = __floats2bfloat162_rn(w[2], w[3]);
      *reinterpret_cast<uint2*>(dst) = make_uint2(*reinterpret_cast<const uint32_t*>(&lo),
                                                  *reinterpret_cast<const uint32_t*>(&hi));
    }
  };
  if (p.C_in % 4 == 0 && (reinterpret_cast<uintptr_t>(p.w_pw) & 15) == 0) {  // block-uniform
#pragma unroll
    for (int base = 0; base < kTotal; base += NT * kBatch) {
      float4 wv[kBatch];
#pragma unroll
      for (int r = 0; r < kBatch; ++r) {
        const int i = base + tid + r * NT, m = i / (CP / 4), k = (i % (CP / 4)) * 4;
        wv[r] = (m < p.C_out && k < p.C_in) ? __ldg(reinterpret_cast<const float4*>(p.w_pw + m * p.C_in + k))
                                            : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
      if (base == 0) after_loads();
#pragma unroll
      for (int r = 0; r < kBatch; ++r) put_w(base + tid + r * NT, wv[r]);
    }
  } else {  // C_in % 4 != 0 or unaligned W_pw: element loads
    after_loads();
    for (int i = tid; i < kTotal; i += NT) {
      const int m = i / (CP / 4), k = (i % (CP / 4)) * 4;
      float e[4];
      for (int j = 0; j < 4; ++j) e[j] = (m < p.C_out && k + j < p.C_in) ? __ldg(p.w_pw + m * p.C_in + k + j) : 0.0f;
      put_w(i, make_float4(e[0], e[1], e[2], e[3]));
    }
  }
}

// WG_W_SMALL_REGS: consumer thread `tid` (of 256; warpgroup tid / 128 multiplies W_pw rows 64 (tid / 128) ..) -> its A
// fragments of W_pw's small parts, one a k-step (WgmmaRs's layout, wgmma_ops.cuh): the bits wg_fill_w's split stores in
// smem, zero outside C_out x C_in. All 64 loads first (once a block; L2 hits after the first blocks), then the rounding.
__device__ __forceinline__ void wg_small_frags(const TcParams& p, int tid, uint32_t (&a)[kMaxCin / 8][4]) {
  const int lane = tid & 31, row = (tid >> 7) * 64 + ((tid >> 5) & 3) * 16 + (lane >> 2), t4 = lane & 3;
  float w[kMaxCin / 8][4];
#pragma unroll
  for (int ks = 0; ks < kMaxCin / 8; ++ks)
#pragma unroll
    for (int r = 0; r < 4; ++r) {  // r: (row + 8 (r & 1), k 8 ks + t4 + 4 (r >> 1))
      const int m = row + 8 * (r & 1), k = 8 * ks + t4 + 4 * (r >> 1);
      w[ks][r] = (m < p.C_out && k < p.C_in) ? __ldg(p.w_pw + m * p.C_in + k) : 0.0f;
    }
#pragma unroll
  for (int ks = 0; ks < kMaxCin / 8; ++ks)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      a[ks][r] = tc_tf32(w[ks][r] - wg_w_big(w[ks][r]));
    }
}

// Bias + y stores of one warpgroup's accumulators (64 rows from row0, N columns from tcol; the split's
// accumulators summed: small terms, then the big chains). Thread rows: row0 + 16 (warp % 4) + lane / 4 (+8).
template <typename T, int N, int A>
__device__ __forceinline__ void wg_store(const float (&d)[A][N / 2], T* y, const TcParams& p, int64_t b, int row0,
                                         int64_t tcol, float bias_lo, float bias_hi) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, q = lane & 3;
  const int row_lo = row0 + (warp & 3) * 16 + (lane >> 2);
  float out[N / 2];
#pragma unroll
  for (int r = 0; r < N / 2; ++r) {
    out[r] = d[A - 1][r];
#pragma unroll
    for (int a = 0; a + 1 < A; ++a) out[r] += d[a][r];
  }
  if (FUSED_ABLATE & 4) {
  } else if (p.y_pair && tcol + N <= p.T_out && row_lo + 8 < p.C_out) {  // all of this thread's outputs exist
    T* y_lo = y + (b * p.C_out + row_lo) * p.T_out + tcol + 2 * q;  // pair-aligned (y_pair)
    T* y_hi = y_lo + 8 * p.T_out;
#pragma unroll
    for (int j = 0; j < N / 8; ++j) {
      tc_store2(y_lo + 8 * j, out[4 * j] + bias_lo, out[4 * j + 1] + bias_lo);
      tc_store2(y_hi + 8 * j, out[4 * j + 2] + bias_hi, out[4 * j + 3] + bias_hi);
    }
  } else {
    tc_warp_store<T, 16, N>(reinterpret_cast<const float(&)[1][N / 8][4]>(out), y, p, b, row0 + (warp & 3) * 16, tcol);
  }
}
// WG_Y_TMA: bias + this warp's 16 rows x N columns of y (one accumulator array, the split's already summed) into
// `piece` (2 KB, 1024-byte aligned: rows of 128 bytes, the 16-byte chunk index XOR row % 8, TMA's 128-byte swizzle),
// then lane 0 stores it as the box (t, row, b) of ymap and waits until the store has read `piece`, which the caller
// may then hand back for rewriting.
template <typename T, int N>
__device__ __forceinline__ void wg_store_tma(const float (&d)[N / 2], unsigned char* piece, float bias_lo,
                                             float bias_hi, const CUtensorMap* ymap, int64_t t, int row, int64_t b) {
  static_assert(N * sizeof(T) == 128, "a staged row is one 128-byte swizzle row");
  const int lane = threadIdx.x & 31, q = lane & 3, r = lane >> 2;
#pragma unroll
  for (int j = 0; j < N / 8; ++j) {
    const uint32_t byte = (8 * j + 2 * q) * sizeof(T), sw = (((byte >> 4) ^ r) << 4) + (byte & 15);
    tc_store2(reinterpret_cast<T*>(piece + r * 128 + sw), d[4 * j] + bias_lo, d[4 * j + 1] + bias_lo);
    tc_store2(reinterpret_cast<T*>(piece + (r + 8) * 128 + sw), d[4 * j + 2] + bias_hi, d[4 * j + 3] + bias_hi);
  }
  fence_proxy_async();  // the staged rows -> visible to the TMA store
  __syncwarp();
  if (lane == 0 && !(FUSED_ABLATE & 4)) {  // (FUSED_ABLATE 4, y's writes left out: staged, not stored; before 2026-12-06
                                           // this path ignored the bit, so rung 11's mask-7 runs wrote y: docs/ladder.md)
    tma_store_3d(ymap, piece, static_cast<int>(t), row, static_cast<int>(b));
    tma_store_commit();
    tma_store_wait_read<0>();
  }
}
// This thread's two output-channel biases for the warpgroup rows from row0 (0 past C_out or without bias).
__device__ __forceinline__ float2 wg_bias(const TcParams& p, int row0) {
  const int row_lo = row0 + ((threadIdx.x >> 5) & 3) * 16 + ((threadIdx.x & 31) >> 2);
  return make_float2((p.b_pw && row_lo < p.C_out) ? __ldg(p.b_pw + row_lo) : 0.0f,
                     (p.b_pw && row_lo + 8 < p.C_out) ? __ldg(p.b_pw + row_lo + 8) : 0.0f);
}

// The 1024-byte aligned smem base (the swizzle needs 1024-byte aligned atoms; the plan asks for 1 KB extra).
__device__ __forceinline__ unsigned char* wg_smem_base(unsigned char* raw) {
  return raw + ((1024 - (__cvta_generic_to_shared(raw) & 1023)) & 1023);
}

// WG_Y_TMA's box width (elements of y per staged row: 128 bytes), 0 where it does not apply: wg_kernel with one
// accumulator (not the split) and kNT * sizeof(T) == 128; wg_ws_kernel (WG_WS = 1) with TT * sizeof(T) == 128. (Not
// wg_kernel's two-warpgroup form, whose y leaves from the accumulators.)
template <typename T, bool kSplit>
__host__ __device__ constexpr int wg_y_box() {
  if (WG_Y_TMA == 0) return 0;
  if (WG_WS == 0) return (!kSplit && kNT * sizeof(T) == 128) ? kNT : 0;
  if (WG_WS == 1) return TILE_T * sizeof(T) == 128 ? TILE_T : 0;
  return 0;
}

// setmaxnreg: this warpgroup's registers per thread (all its warps execute it)
template <int N>
__device__ __forceinline__ void wg_setmaxnreg_inc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N)); }
template <int N>
__device__ __forceinline__ void wg_setmaxnreg_dec() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N)); }

// wg_kernel's depthwise-only warpgroups beyond 4 (WG_DW_EXTRA: the two-warpgroup form, float32 I/O, where
// WG_DW_EXTRA_WHERE says), and its block
template <typename T, bool kGemmHalf, int D, int KC>
__host__ __device__ constexpr int wg_dw_extra() {
  const bool where = WG_DW_EXTRA_WHERE == 1 ? D > 1 : D == 2 && (KC == 3 || KC == 5);
  return kGemmHalf && where && std::is_same_v<T, float> ? WG_DW_EXTRA : 0;
}
template <typename T, bool kGemmHalf, int D, int KC>
__host__ __device__ constexpr int wg_block_threads() {
  return kThreads + 128 * wg_dw_extra<T, kGemmHalf, D, KC>();
}
// wg_ws_kernel's block: 2 consumer and 2 + WG_WS_EXTRA producer warpgroups
constexpr int kWsThreads = kThreads + 128 * WG_WS_EXTRA;
// Where a block's depthwise-only warpgroups drop to WG_DW_REGS registers (setmaxnreg.dec), what its other two warpgroups
// may take (setmaxnreg.inc): the launch's registers (65536 / threads, rounded down to 8) plus what the others release.
// setmaxnreg.inc takes only what the block's own setmaxnreg.dec released (asking for more waits for ever).
__host__ __device__ constexpr int wg_launch_regs(int threads) { return 65536 / threads / 8 * 8; }
__host__ __device__ constexpr int wg_raised_regs(int threads, int dw_wgs) {
  return (wg_launch_regs(threads) + dw_wgs * (wg_launch_regs(threads) - WG_DW_REGS) / 2) / 8 * 8;
}

// The kernel (WG_WS = 0). Persistent blocks walk tiles (b, TT time steps) tile = blockIdx.x + i * gridDim.x,
// every warp doing every phase; tile n's x in slot n % S, issued S tiles ahead:
//   prologue: TMA x(0) (, x(1)); W_pw -> smem; depthwise(0) -> act[0]; TMA x(S); MMA(0)
//   step i:   wait x(i+1) (mbarrier); depthwise(i+1) -> act[(i+1)%2]   (MMA(i) runs meanwhile)
//             [S = 1: barrier; TMA x(i+2) into the slot depthwise(i+1) freed]
//             wait MMA(i); bias + store y(i) from the accumulators
//             barrier; [S = 2: TMA x(i+3) into the slot depthwise(i+1) freed]; issue MMA(i+1)
// Warpgroup g multiplies W rows 64 (g % 2) .. + 63 by tile columns kNT (g / 2) .. + kNT - 1; with kGemmHalf
// (WG_GEMM_WGS, chosen at launch by wg_gemm_half) warpgroups 0, 1 multiply their rows by all TT columns and store y,
// and warpgroups 2, 3 (and WG_DW_EXTRA more where wg_dw_extra says) run only the depthwise steps, in a loop of their own
// meeting the same block barriers.
template <typename T, bool kSplit, int TT, int D, bool kGemmHalf, int KC>
__global__ void __launch_bounds__(wg_block_threads<T, kGemmHalf, D, KC>(), WG_MIN_BLOCKS) wg_kernel(const TcParams p, const __grid_constant__ CUtensorMap xmap,
                                                                     const __grid_constant__ CUtensorMap ymap) {
  using E = WgElem<T>;
  using L = WgLayout<T, kSplit>;
  using Tiles = WgTiles<T, kSplit, TT, D, KC>;
  constexpr int kKmax = Tiles::kKmax, S = Tiles::S;
  constexpr int kAcc = kSplit ? WG_CHAINS + 1 : 1;
  constexpr int kYBox = kGemmHalf ? 0 : wg_y_box<T, kSplit>();  // y's TMA box width (0: none)
  constexpr bool kYTma = kYBox != 0;
  extern __shared__ unsigned char wg_smem_raw[];
  unsigned char* smem = wg_smem_base(wg_smem_raw);
  uint64_t* xbar = reinterpret_cast<uint64_t*>(smem + p.off_mbar);  // one per x slot
  const Tiles tiles{p, &xmap, smem, xbar};
  const uint32_t w_addr = smem_u32(smem), act_addr = smem_u32(smem + L::off_act);

  const int tid = threadIdx.x, warp = tid >> 5, wgroup = warp >> 2;
  // thread -> one channel c of the 128 (lanes on consecutive channels) and one share h of the tile's groups
  constexpr int CP = kMaxCin, nsplit = kThreads / CP;
  const int c = tid % CP, h = tid / CP;
  // WG_GEMM_WGS = 2: warpgroups 0, 1 issue the GEMM (N = TT) and store y; their depthwise shares are WG_DW_SHARE
  // percent of the groups each, warpgroups 2, 3 split the rest (h = the warpgroup at 512 threads)
  constexpr int kN = kGemmHalf ? TT : kNT;  // this kernel's wgmma N
  static_assert(!kYTma || kYBox == kN, "a warp's staged y rows are its accumulators' N columns");
  const bool gemm_wg = !kGemmHalf || wgroup < 2;
  const int64_t stride = gridDim.x;
  constexpr int kDen = kGemmHalf ? 200 : nsplit;
  // this thread's groups: [dw_lo, dw_hi) in 200ths with kGemmHalf, else share h of nsplit (dw_hi unused)
  constexpr int kExtra = wg_dw_extra<T, kGemmHalf, D, KC>(), kDwWgs = 2 + kExtra;  // kGemmHalf: the warpgroups from 2 on
  constexpr int kShare = kExtra > 0 ? WG_DW_EXTRA_SHARE : WG_DW_SHARE;
  const int dw_lo = kGemmHalf ? wg_share_edge(h, kShare, kDwWgs) : h,
            dw_hi = h == (kGemmHalf ? 1 + kDwWgs : 3) ? 200 : wg_share_edge(h + 1, kShare, kDwWgs);
  const bool live = c < p.C_in;
  float wt[kKmax], bias = 0.0f;
#pragma unroll
  for (int k = 0; k < kKmax; ++k) wt[k] = (live && k < p.K) ? __ldg(p.w_dw + c * p.K + k) : 0.0f;
  if (live && p.b_dw) bias = __ldg(p.b_dw + c);

  if (tid == 0) {
    for (int s = 0; s < S; ++s) mbar_init(&xbar[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the TMA unit
  }
  __syncthreads();

  int64_t tile = blockIdx.x;  // grid <= n_tiles: every block has a first tile
  const bool tracer = FUSED_TRACE && tid == 0;
  if (tracer) wg_mark_ends(true);
  auto first_x = [&] {
    if (tid == 0)
      for (int n = 0; n < (WG_X_FIRST ? 1 : S); ++n) tiles.issue_x(n, tile + n * stride);
  };
  first_x();
  if (!(FUSED_ABLATE & 16) && (kExtra == 0 || tid < kThreads)) wg_fill_w<E, kSplit, kThreads>(smem, p, tid);
  if (tracer) wg_mark(kTrWFill);
  tiles.wait_x(0);
  if (tracer) wg_mark_tile(0, kTrXLanded);
  if (tid == 0) tiles.after_first(tile);
  // (the upper edge written at the call for the four-warpgroup form: its SASS then stays the one before WG_GEMM_WGS)
  tiles.depthwise(0, tile, wt, bias, c, live, dw_lo, kGemmHalf ? dw_hi : dw_lo + 1, kDen);
  if (tracer) wg_mark_tile(0, kTrDwDone);
  fence_proxy_async();
  __syncthreads();  // act[0] and W_pw complete and visible to wgmma; x slot 0 free
  if (tracer) wg_mark_tile(0, kTrBarrier);
  if (tid == 0) tiles.issue_x(S, tile + S * stride);
  if (tracer) wg_mark_tile(0, kTrXIssued);

  // step i's first half: x(next) landed -> depthwise(i + 1) into act[(i + 1) % 2] (MMA(i) runs meanwhile)
  auto build_next = [&](int i, int64_t next) {
    tiles.wait_x(i + 1);  // x(next) landed
    if (tracer) wg_mark_tile(i + 1, kTrXLanded);
    tiles.depthwise(i + 1, next, wt, bias, c, live, dw_lo, kGemmHalf ? dw_hi : dw_lo + 1, kDen);
    if (tracer) wg_mark_tile(i + 1, kTrDwDone);
    fence_proxy_async();  // act[(i + 1) % 2] -> visible to MMA(next)
    if constexpr (S == 1) {  // the only x slot is free: refill it now, so the load overlaps the y stores
      __syncthreads();
      if (tid == 0) tiles.issue_x(i + 2, next + stride);
    }
  };
  // kExtra: registers move from the depthwise-only warpgroups to the GEMM warpgroups (wg_raised_regs)
  constexpr int kLaunchRegs = wg_launch_regs(wg_block_threads<T, kGemmHalf, D, KC>());
  constexpr int kGemmRegs = wg_raised_regs(wg_block_threads<T, kGemmHalf, D, KC>(), kDwWgs);
  static_assert(kExtra == 0 || (WG_DW_REGS <= kLaunchRegs && kGemmRegs <= 256),
                "WG_DW_REGS: at most the launch's registers per thread");
  if (kGemmHalf && !gemm_wg) {  // warpgroups 2 .. 1 + kDwWgs (WG_GEMM_WGS = 2): the depthwise only, at the same barriers.
    if constexpr (kExtra > 0) wg_setmaxnreg_dec<WG_DW_REGS>();
    // (A loop of its own: a branch on the role between a wgmma issue and its wait makes ptxas serialize them, C7518.)
    for (int i = 0;; ++i) {
      const int64_t next = tile + stride;
      const bool has_next = next < p.n_tiles;  // block-uniform
      if (has_next) build_next(i, next);
      __syncthreads();
      if (!has_next) return;
      tile = next;
    }
  }

  if constexpr (kExtra > 0) wg_setmaxnreg_inc<kGemmRegs>();
  float d[kAcc][kN / 2];
#pragma unroll
  for (int a = 0; a < kAcc; ++a)
#pragma unroll
    for (int r = 0; r < kN / 2; ++r) d[a][r] = 0.0f;
  const int wg_m = wgroup & 1, wg_n = kGemmHalf ? 0 : wgroup >> 1;
  const uint32_t w_wg = w_addr + wg_m * 64 * 128;       // this warpgroup's first W row
  const uint32_t act_wg = act_addr + wg_n * kNT * 128;  // ... and its first act row (tile column)
  wg_gemm_issue<E, kSplit, kN, TT>(d, w_wg, act_wg, L::w_bytes, L::act_part);
  if (tracer) wg_mark_tile(0, kTrMmaIssued);

  // The loop exits only before an MMA is issued, so every path to the accumulators' next use passes a
  // wgmma.wait (otherwise ptxas inserts one right after the issue and serializes MMA and depthwise).
  T* y = static_cast<T*>(p.y);
  const float2 bias_pw = wg_bias(p, wg_m * 64);
  for (int i = 0;; ++i) {
    const int64_t next = tile + stride;
    const bool has_next = next < p.n_tiles;  // block-uniform
    if (has_next) build_next(i, next);  // overlaps MMA(tile)
    wg_wait<0>();
    wg_fence_regs(d);
    if (tracer) wg_mark_tile(i, kTrMmaDone);
    const int64_t yb = FUSED_ABLATE & 64 ? 0 : tiles.row_of(tile), ycol = static_cast<int64_t>(tiles.col_of(tile)) * TT + wg_n * kNT;
    // FUSED_ABLATE 64: every tile's y into batch row 0 (the same stores, L2-resident: what y's DRAM writes cost)
    auto store_regs = [&] { wg_store<T, kN, kAcc>(d, y, p, yb, wg_m * 64, ycol, bias_pw.x, bias_pw.y); };
    if constexpr (kYTma) {
      if (p.y_tma) {  // block-uniform
        // both warpgroups of this column half (kGemmHalf: both GEMM warpgroups, wg_n 0) are past MMA(i): its part
        // of act[i % 2] is free for y(i)
        named_bar_sync(1 + wg_n, 256);
        const int piece = 4 * wg_m + (warp & 3);  // of the 8 pieces of 16 rows x 128 bytes in the half
        unsigned char* stage = smem + L::off_act + (i & 1) * L::act_stage + (piece / (kYBox / 16)) * (TT * 128) +
                               (wg_n * kYBox + 16 * (piece % (kYBox / 16))) * 128;
        // (act[i % 2] is rewritten by depthwise(i + 2), after the barrier below)
        wg_store_tma<T, kYBox>(d[0], stage, bias_pw.x, bias_pw.y, &ymap, ycol, wg_m * 64 + 16 * (warp & 3), yb);
      } else {
        store_regs();
      }
    } else {
      store_regs();
    }
    if (tracer) wg_mark_tile(i, kTrStored);
    __syncthreads();  // act[(i + 1) % 2] complete; its x slot free; act[i % 2] no longer read
    if (tracer) wg_mark_tile(i + 1, kTrBarrier);
    if (!has_next) break;
    if constexpr (S >= 2)
      if (tid == 0) tiles.issue_x(i + 1 + S, next + S * stride);
    if (tracer) wg_mark_tile(i + 1, kTrXIssued);
    wg_gemm_issue<E, kSplit, kN, TT>(d, w_wg, act_wg + ((i + 1) & 1) * L::act_stage, L::w_bytes, L::act_part);
    if (tracer) wg_mark_tile(i + 1, kTrMmaIssued);
    tile = next;
  }
  if (kYTma && p.y_tma && (tid & 31) == 0) tma_store_wait<0>();  // (the smem stays valid until the stores have read it)
  if (tracer) wg_mark_ends(false);
  // Every x box this block issued has been waited for (x(i + 1 + S) only exists while tiles remain).
}

// The warp-specialized kernel (WG_WS = 1; WARPGROUPS = 4). The block's warpgroups split into two loops
// over the same tiles:
//   producers (warpgroups 2, 3): wait x(n); wait act[n % 2] empty; depthwise(n) -> act[n % 2];
//     arrive FULL[n % 2]; producer barrier; TMA x(n + S) into the slot just read;
//   consumers (warpgroups 0, 1, after staging W_pw while the producers build act(0)): wait FULL[n % 2];
//     issue the GEMM of tile n; wait for it; arrive EMPTY[n % 2]; bias + store y(n).
// So the depthwise of tile n+1 runs in other warps than the MMA and the y stores of tile n, instead of
// before those stores in the same warps; act is a 2-deep ring, the producers run up to two tiles ahead.
// Handoffs are mbarriers (FULL: every producer thread, after its act stores and a proxy fence, so the
// wgmma reads see them; EMPTY: every consumer thread, after wgmma.wait), as rung 08's racechecked design.
// Consumer warpgroup cg multiplies W rows 64 cg .. + 63 by every column of the tile, in wgmma N of
// min(TT, 64). (One consumer warpgroup for both row halves holds twice the accumulators: it spills
// under the 128 registers a 512-thread block allows.)
// kSharePct > 0 (WG_WS_SHARE with WG_WS = 1; WG_WS_D1_SHARE where wg_launch picks this kernel at dilation 1): the
// consumers also build kSharePct percent of each tile's groups per warpgroup (of tile n + 1
// between issuing MMA(n) and waiting for it, once EMPTY says MMA(n - 1) is done with that buffer), the producers
// the rest; FULL then counts both roles' threads, and consumer thread 0 requests x(n + S) once FULL(n) completes
// (every read of that slot is done), instead of the producers after a barrier of their own.
static_assert(WG_WS == 0 || (WG_WS == 1 && WARPGROUPS == 4), "WG_WS: 0 (off) or 1 (needs WARPGROUPS=4)");
template <typename T, bool kSplit, int TT, int D, int KC, int kSharePct>
__global__ void __launch_bounds__(kWsThreads, 1) wg_ws_kernel(const TcParams p,
                                                                              const __grid_constant__ CUtensorMap xmap,
                                                                              const __grid_constant__ CUtensorMap ymap) {
  using E = WgElem<T>;
  using L = WgLayout<T, kSplit>;
  using Tiles = WgTiles<T, kSplit, TT, D, KC>;
  constexpr int kKmax = Tiles::kKmax, S = Tiles::S;
  constexpr int kAcc = kSplit ? WG_CHAINS + 1 : 1;
  constexpr int kWsExtra = WG_WS_EXTRA, NPW = 2 + kWsExtra;  // producer warpgroups
  constexpr int NC = 256, NP = kWsThreads - NC;  // consumer and producer threads
  constexpr int kConsRegs = wg_raised_regs(kWsThreads, NPW);
  // registers move from the producers to the consumers (setmaxnreg) for more producers or for W_pw's small parts
  constexpr bool kSmallRegs = wg_small_regs<kSplit>(), kMoveRegs = kWsExtra > 0 || kSmallRegs;
  static_assert(!kMoveRegs || (WG_DW_REGS <= wg_launch_regs(kWsThreads) && kConsRegs <= 256),
                "WG_DW_REGS: at most the launch's registers per thread");
  constexpr int kN = TT < 64 ? TT : 64, kCH = TT / kN;  // wgmma N per column chunk, column chunks
  constexpr bool kYTma = wg_y_box<T, kSplit>() != 0;  // (then kN = TT: one chunk; WG_WS = 1: two consumers)
  constexpr int kBarProducers = 1, kBarConsumers = 2;
  constexpr bool kShare = kSharePct > 0;
  extern __shared__ unsigned char wg_smem_raw[];
  unsigned char* smem = wg_smem_base(wg_smem_raw);
  uint64_t* xbar = reinterpret_cast<uint64_t*>(smem + p.off_mbar);  // xbar[S], full[2], empty[2]
  uint64_t* full = xbar + S;
  uint64_t* empty = xbar + S + 2;
  const Tiles tiles{p, &xmap, smem, xbar};
  const int tid = threadIdx.x;
  if (tid == 0) {
    for (int s = 0; s < S; ++s) mbar_init(&xbar[s], 1);
    for (int s = 0; s < 2; ++s) {
      mbar_init(&full[s], kShare ? NP + NC : NP);
      mbar_init(&empty[s], NC);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the TMA unit
  }
  __syncthreads();
  const int64_t stride = gridDim.x;

  // every thread that builds act: one channel c (lanes on consecutive channels), its taps and bias, and its
  // warpgroup's groups [dw_lo, dw_hi) of kDen (producers: share h of nsplit; kShare: wg_share_edge's 200ths, warpgroup
  // h + 2 for producer share h), set by dw_setup in the role that builds
  constexpr int nsplit = NP / kMaxCin, kDen = kShare ? 200 : nsplit;
  int dw_lo, dw_hi;
  bool live;
  float wt[kKmax], bias = 0.0f;
  auto dw_setup = [&](int c, int wgi) {  // wgi: the block's warpgroup (kShare), else the producer share
    dw_lo = kShare ? wg_share_edge(wgi, kSharePct, NPW) : wgi;
    dw_hi = kShare ? (wgi == 1 + NPW ? 200 : wg_share_edge(wgi + 1, kSharePct, NPW)) : wgi + 1;
    live = c < p.C_in;
#pragma unroll
    for (int k = 0; k < kKmax; ++k) wt[k] = (live && k < p.K) ? __ldg(p.w_dw + c * p.K + k) : 0.0f;
    if (live && p.b_dw) bias = __ldg(p.b_dw + c);
  };

  if (tid >= NC) {  // ---- producers
    if constexpr (kMoveRegs) wg_setmaxnreg_dec<WG_DW_REGS>();
    const int ptid = tid - NC, c = ptid % kMaxCin, h = ptid / kMaxCin;
    dw_setup(c, kShare ? h + 2 : h);
    if (ptid == 0)
      for (int n = 0; n < (WG_X_FIRST ? 1 : S); ++n) tiles.issue_x(n, blockIdx.x + n * stride);
    const bool tracer = FUSED_TRACE && ptid == 0;
    int n = 0;
    for (int64_t tile = blockIdx.x; tile < p.n_tiles; tile += stride, ++n) {
      tiles.wait_x(n);
      if (tracer) wg_mark_tile(n, kTrXLanded);
      if (n == 0 && ptid == 0) tiles.after_first(tile);
      if (n >= 2) mbar_wait(&empty[n & 1], ((n >> 1) - 1) & 1);  // the consumers' MMA(n - 2) is done with it
      if (tracer) wg_mark_tile(n, kTrActFree);
      tiles.depthwise(n, tile, wt, bias, c, live, dw_lo, dw_hi, kDen);
      if (tracer) wg_mark_tile(n, kTrDwDone);
      fence_proxy_async();  // act[n % 2] -> visible to the consumers' wgmma
      mbar_arrive(&full[n & 1]);
      if constexpr (!kShare) {
        named_bar_sync(kBarProducers, NP);  // every producer is done reading x slot n % S
        if (tracer) wg_mark_tile(n, kTrBarrier);
        if (ptid == 0) tiles.issue_x(n + S, tile + S * stride);
      }
    }
  } else {  // ---- consumers
    if constexpr (kMoveRegs) wg_setmaxnreg_inc<kConsRegs>();
    const bool tracer = FUSED_TRACE && tid == 0;
    if (tracer) wg_mark_ends(true);
    uint32_t w_small[kSmallRegs ? kMaxCin / 8 : 1][4];  // kSmallRegs: this thread's A fragments of W_pw's small parts
    if constexpr (kSmallRegs) wg_small_frags(p, tid, w_small);
    if (!(FUSED_ABLATE & 16)) wg_fill_w<E, kSplit && !kSmallRegs, NC>(smem, p, tid);  // kSmallRegs: the big parts only
    fence_proxy_async();
    named_bar_sync(kBarConsumers, NC);  // W_pw complete and visible to wgmma
    if (tracer) wg_mark(kTrWFill);
    const int cg = tid >> 7;
    const uint32_t w_cg = smem_u32(smem) + cg * 64 * 128, act_addr = smem_u32(smem + L::off_act);
    float d[kCH][kAcc][kN / 2];
#pragma unroll
    for (int u = 0; u < kCH; ++u)
#pragma unroll
      for (int a = 0; a < kAcc; ++a)
#pragma unroll
        for (int r = 0; r < kN / 2; ++r) d[u][a][r] = 0.0f;
    const float2 bias_pw = wg_bias(p, cg * 64);
    T* y = static_cast<T*>(p.y);
    // kShare: the consumers' part of tile m's act (m >= 2: once every consumer is past MMA(m - 2))
    auto build_share = [&](int m, int64_t t) {
      tiles.wait_x(m);
      if (m >= 2) mbar_wait(&empty[m & 1], ((m >> 1) - 1) & 1);
      tiles.depthwise(m, t, wt, bias, tid % kMaxCin, live, dw_lo, dw_hi, kDen);
      fence_proxy_async();
      mbar_arrive(&full[m & 1]);
    };
    if constexpr (kShare) {
      dw_setup(tid % kMaxCin, tid / kMaxCin);
      build_share(0, blockIdx.x);
    }
    int n = 0;
    for (int64_t tile = blockIdx.x; tile < p.n_tiles; tile += stride, ++n) {
      mbar_wait(&full[n & 1], (n >> 1) & 1);
      if constexpr (kShare) {  // every read of x slot n % S is done
        if (tid == 0) tiles.issue_x(n + S, tile + S * stride);
        if (tracer) wg_mark_tile(n, kTrXIssued);
      }
      const uint32_t act_n = act_addr + (n & 1) * L::act_stage;
#pragma unroll
      for (int ch = 0; ch < kCH; ++ch)
        wg_gemm_issue<E, kSplit, kN, TT, kAcc, kSmallRegs>(d[ch], w_cg, act_n + ch * kN * 128, L::w_bytes, L::act_part,
                                                           w_small);
      if (tracer) wg_mark_tile(n, kTrMmaIssued);
      if constexpr (kShare)
        if (tile + stride < p.n_tiles) build_share(n + 1, tile + stride);  // block-uniform
      wg_wait<0>();
#pragma unroll
      for (int ch = 0; ch < kCH; ++ch) wg_fence_regs(d[ch]);
      if (tracer) wg_mark_tile(n, kTrMmaDone);
      const int64_t b = tiles.row_of(tile), t0 = static_cast<int64_t>(tiles.col_of(tile)) * TT;
      if constexpr (kYTma) {
        if (p.y_tma) {  // y(n) staged in act[n % 2] once both consumers are past MMA(n), stored by TMA, then released
          named_bar_sync(kBarConsumers, NC);
          float out[kN / 2];
#pragma unroll
          for (int r = 0; r < kN / 2; ++r) {
            out[r] = d[0][kAcc - 1][r];
#pragma unroll
            for (int a = 0; a + 1 < kAcc; ++a) out[r] += d[0][a][r];
          }
          const int w = (tid >> 5) & 3, piece = 4 * cg + w;  // of the 8 pieces of 16 rows x 128 bytes
          unsigned char* stage = smem + L::off_act + (n & 1) * L::act_stage + (piece / (TT / 16)) * (TT * 128) +
                                 16 * (piece % (TT / 16)) * 128;
          wg_store_tma<T, kN>(out, stage, bias_pw.x, bias_pw.y, &ymap, t0, cg * 64 + 16 * w, b);
          mbar_arrive(&empty[n & 1]);  // (EMPTY completes after every warp's lane 0, so after every staged read)
          if (tracer) wg_mark_tile(n, kTrStored);
          continue;
        }
      }
      mbar_arrive(&empty[n & 1]);  // act[n % 2] read
#pragma unroll
      for (int ch = 0; ch < kCH; ++ch)
        wg_store<T, kN, kAcc>(d[ch], y, p, b, cg * 64, t0 + ch * kN, bias_pw.x, bias_pw.y);
      if (tracer) wg_mark_tile(n, kTrStored);
    }
    if (kYTma && p.y_tma && (tid & 31) == 0) tma_store_wait<0>();
    if (tracer) wg_mark_ends(false);
  }
  // Every x box the producers issued has been waited for (x(n + S) only exists while tiles remain).
}

// Host: the fast-path shape test (nullptr = supported).
template <typename T>
const char* wg_shape_refusal(const FusedArgs& a) {
  if (!tc_x4_path(a, 16 / sizeof(T)))
    return "needs 16-byte rows (T % 4 == 0 in float32, T % 8 == 0 in 16-bit) and 16-byte aligned x, dilation <= 4 "
           "and (K-1)*dilation <= 16 (the windowed depthwise)";
  if (a.C_in > kMaxCin || a.C_out > kRows)
    return "needs C_in <= 128 and C_out <= 128 (W_pw resident as two 64-row wgmma tiles)";
  if (a.B * ((a.T_out + TILE_T - 1) / TILE_T) >= (int64_t{1} << 31))
    return "needs fewer than 2^31 tiles of TILE_T time steps (tile indices are divided in 32 bits)";
  return nullptr;
}

// Host: smem layout [W_pw (big, small) | act x 2 | x x S | mbarriers (S for x; FULL[2], EMPTY[2])] (+1 KB for
// the 1024-byte alignment of the base); S = WgLayout::x_slots.
template <typename T, bool kSplit>
bool wg_plan(const FusedArgs& a, TcParams& p, size_t& smem) {
  using L = WgLayout<T, kSplit>;
  size_t unused;
  if (!tc_plan(a, sizeof(T), TILE_T, kRows, p, unused)) return false;  // the shape fields of p
  const int64_t limit = a.max_smem_optin > 0 ? a.max_smem_optin : 227 * 1024;
  constexpr int G = L::G;
  const int64_t span = static_cast<int64_t>(a.K - 1) * a.dilation;
  int xw = static_cast<int>(TILE_T + (span + 2 * G - 1) / G * G);  // the last group's window ends there
  if ((xw / G) % 2 == 0) xw += G;  // odd number of 16-byte chunks per row: the depthwise's 16-byte loads of
                                   // 8 consecutive channels hit 8 distinct bank groups
  p.C_in_pad = kMaxCin;  // the GEMM's K
  p.XW = xw;
  p.off_w = 0;
  p.off_act = L::off_act;
  p.act_stage = L::act_stage;
  p.off_x = L::off_x;
  p.x_stage = static_cast<uint32_t>((a.C_in * xw * sizeof(T) + 1023) / 1024 * 1024);  // TMA boxes: 128-byte aligned
  p.off_mbar = p.off_x + L::x_slots * p.x_stage;
  const int64_t total = static_cast<int64_t>(p.off_mbar) + L::bars + 1024;
  if (xw > 256 || total > limit) return false;  // (a TMA box is at most 256 elements per dimension)
  smem = static_cast<size_t>(total);
  return true;
}

// Host: a TMA descriptor of a (B, C, L) tensor of T as 3-D (L, C, B), boxes of (box_l, box_c or C, 1): x (no swizzle,
// zeros read outside) and, for WG_Y_TMA, y (boxes of 16 rows in the 128-byte swizzle of the staged pieces; writes
// outside the tensor dropped).
template <typename T>
CUtensorMap wg_x_map(const void* base, int64_t B, int64_t C, int64_t L, int box_l, int box_c = 0,
                     CUtensorMapSwizzle swizzle = CU_TENSOR_MAP_SWIZZLE_NONE) {
  const CUtensorMapDataType type = std::is_same_v<T, float>           ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                   : std::is_same_v<T, __nv_bfloat16> ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                                      : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(L), static_cast<cuuint64_t>(C), static_cast<cuuint64_t>(B)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(L) * sizeof(T), static_cast<cuuint64_t>(C * L) * sizeof(T)};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(box_l), static_cast<cuuint32_t>(box_c > 0 ? box_c : C), 1};
  return tma_map_3d(base, type, dims, strides, box, swizzle);
}

// WG_WS_D1_SHARE's route exists for this configuration (wg_kernel's build, fp32, not the split, y from registers)
template <typename T, bool kSplit>
constexpr bool wg_ws_d1_ok() {
  return WG_WS_D1_SHARE > 0 && WG_WS == 0 && WARPGROUPS == 4 && std::is_same_v<T, float> && !kSplit &&
         wg_y_box<T, kSplit>() == 0;
}
// WG_GEMM_WGS = 2's form exists for this configuration (wg_kernel, 4 warpgroups, one accumulator, y from registers)
template <typename T, bool kSplit>
constexpr bool wg_gemm_half_ok() {
  return WG_GEMM_WGS != 4 && WG_WS == 0 && WARPGROUPS == 4 && !kSplit && wg_y_box<T, kSplit>() == 0;
}
// ... and is used for `a`
template <typename T, bool kSplit>
bool wg_gemm_half(const FusedArgs& a) {
  return wg_gemm_half_ok<T, kSplit>() &&
         (WG_GEMM_WGS == 2 || (a.C_out > 64 && (a.dilation > 1 || a.K >= WG_GEMM_D1_MIN_K)));
}

// Host: the whole refusal of one configuration (nullptr = this variant computes `a`).
template <typename T, bool kSplit>
const char* wg_refusal(const FusedArgs& a) {
  if (a.cc != 90) return "needs an sm_90 GPU (H100/H200): wgmma exists only on sm_90a";
  if (const char* why = wg_shape_refusal<T>(a)) return why;
  TcParams p{};
  size_t smem = 0;
  if (!wg_plan<T, kSplit>(a, p, smem)) return "the kernel span (K-1)*dilation is too large for the x tiles in shared memory";
  return nullptr;
}

// Host: WG_CT_K as an array (its 0 stands for no entry, so that WG_CT_K=0 leaves it empty), and f(K) for each entry
// as a compile-time constant.
constexpr int kWgCtK[] = {0, WG_CT_K};
template <typename F, size_t... I>
void wg_each_ct_k(F&& f, std::index_sequence<I...>) {
  (f(std::integral_constant<int, kWgCtK[I]>{}), ...);
}

// Host: plan, TMA descriptor, launch (dilation as a compile-time constant). The form: WG_WS's kernel; else wg_kernel's
// two-warpgroup form where wg_gemm_half picks it; else at dilation 1 and a K in WG_CT_K wg_ws_kernel with
// WG_WS_D1_SHARE (wg_ws_d1_ok); else wg_kernel's four-warpgroup form.
struct WgWsD1 {};  // launch_d's tag for the WG_WS_D1_SHARE route
template <typename T, bool kSplit>
void wg_launch(const FusedArgs& a, void* stream) {
  TcParams p{};
  size_t smem = 0;
  if (wg_shape_refusal<T>(a) || !wg_plan<T, kSplit>(a, p, smem))
    throw std::runtime_error("wgmma variant: shape not supported (see fused_unsupported)");
  const CUtensorMap xmap = wg_x_map<T>(a.x, a.B, a.C_in, a.T, p.XW);
  // WG_Y_TMA: y as (T_out, C_out, B), boxes of kYBox steps x 16 rows, 128-byte swizzle (otherwise xmap stands in, unused)
  constexpr int kYBox = wg_y_box<T, kSplit>();
  const bool y_tma_ok =
      (a.T_out * static_cast<int64_t>(sizeof(T))) % 16 == 0 && reinterpret_cast<uintptr_t>(a.y) % 16 == 0;
  p.y_tma = (kYBox > 0 && y_tma_ok) ? 1 : 0;
  const CUtensorMap ymap = p.y_tma ? wg_x_map<T>(a.y, a.B, a.C_out, a.T_out, kYBox, 16, CU_TENSOR_MAP_SWIZZLE_128B) : xmap;
  // The kernel for dilation D (compile-time) and the K of `a`: WG_CT_K's own where it lists K, else the run-time-K one.
  auto launch_d = [&](auto half, auto dil) {  // half: WG_GEMM_WGS = 2's form (or WgWsD1); both compile-time constants
    constexpr int D = decltype(dil)::value;
    auto go = [&](auto kc) {
      constexpr int KC = decltype(kc)::value;
      if constexpr (WG_WS)
        tc_launch_persistent(wg_ws_kernel<T, kSplit, TILE_T, D, KC, WG_WS_SHARE>, kWsThreads, smem, a, p,
                             stream, xmap, ymap);
      else if constexpr (std::is_same_v<decltype(half), WgWsD1> && KC > 0)
        tc_launch_persistent(wg_ws_kernel<T, kSplit, TILE_T, D, KC, WG_WS_D1_SHARE>, kWsThreads, smem, a,
                             p, stream, xmap, ymap);
      else  // (WgWsD1 at a K without a kernel of its own: the four-warpgroup form; wg_ws_kernel's run-time-K build spills)
        tc_launch_persistent(wg_kernel<T, kSplit, TILE_T, D, std::is_same_v<decltype(half), std::true_type>, KC>,
                             wg_block_threads<T, std::is_same_v<decltype(half), std::true_type>, D, KC>(), smem, a, p, stream, xmap, ymap);
    };
    bool launched = false;
    wg_each_ct_k([&](auto kc) {
      constexpr int KC = decltype(kc)::value;
      if constexpr (KC > 0 && (KC - 1) * D <= 16)
        if (!launched && a.K == KC) { go(kc); launched = true; }
    }, std::make_index_sequence<sizeof(kWgCtK) / sizeof(int)>{});
    if (!launched) go(std::integral_constant<int, 0>{});
  };
  auto launch = [&](auto half) {
    switch (a.dilation) {
      case 1: return launch_d(half, std::integral_constant<int, 1>{});
      case 2: return launch_d(half, std::integral_constant<int, 2>{});
      case 3: return launch_d(half, std::integral_constant<int, 3>{});
      default: return launch_d(half, std::integral_constant<int, 4>{});
    }
  };
  if constexpr (wg_gemm_half_ok<T, kSplit>())
    if (wg_gemm_half<T, kSplit>(a)) return launch(std::true_type{});
  if constexpr (wg_ws_d1_ok<T, kSplit>())
    if (a.dilation == 1) return launch_d(WgWsD1{}, std::integral_constant<int, 1>{});
  return launch(std::false_type{});
}

}  // namespace

#if FUSED_TRACE
int fused_trace_read(uint64_t* dst, int max) {
  const int n = max < kTraceBlocks * kTraceSlots ? max : kTraceBlocks * kTraceSlots;
  void* buf = nullptr;
  if (cudaDeviceSynchronize() != cudaSuccess || cudaGetSymbolAddress(&buf, wg_trace_buf) != cudaSuccess ||
      cudaMemcpy(dst, buf, n * sizeof(uint64_t), cudaMemcpyDeviceToHost) != cudaSuccess ||
      cudaMemset(buf, 0, sizeof(wg_trace_buf)) != cudaSuccess)
    throw std::runtime_error("fused_trace_read: CUDA error");
  return n;
}
void fused_trace_layout(int* slots, int* tile0, int* tiles, int* phases) {
  *slots = kTraceSlots;
  *tile0 = kTrTile0;
  *tiles = kTraceTiles;
  *phases = kTrPhases;
}
#endif
