// wgmma_rs.cuh: the act-in-registers form of the Hopper kernel (rung 12). The GEMM is turned around:
//   y^T (time x C_out) = act^T (time x C_in) * W_pw^T (C_in x C_out),
// so act is wgmma's A operand, which may come from registers: each thread computes the depthwise + SiLU
// outputs that its own A fragment holds and hands them to wgmma directly. No act tile in smem, no act
// stores, no proxy fence, no block barrier per tile. W_pw^T is the B operand, read from smem (N = C_out
// padded to 128, K-major = W_pw's own row-major layout, 128-byte swizzle; wgmma.cuh's wg_fill_w).
// Every warpgroup is an independent pipeline over its own 64-step time tiles (M = 64), with its own x
// slots (RS_X_SLOTS; RS_X_PARTS TMA boxes of channel rows each, zeros outside the tensor) and mbarriers; the
// warpgroups of an SM overlap each other's loads, depthwise, MMA and stores as the schedulers see fit (rungs
// 09-11 run those phases in lock-step). Per tile and warpgroup: for each chunk of RS_CHUNK k-steps (8
// channels each): wait for the x parts holding its channels, depthwise into A registers, wgmma.fence,
// issue, commit (A double-buffered: chunk q+1 is computed while the MMA of chunk q runs); warpgroup barrier,
// TMA tile n + RS_X_SLOTS into the slot just read; wait the MMA; store y. The defaults below are the tuned
// configuration (results/tuned.json). FUSED_TRACE's "x landed" is the first chunk's parts.
//
// A fragment (m64k8 tf32, CUTLASS ALayout_64x8): warp w, lane (g = lane/4, t4 = lane%4) holds
//   a0 (row 16w+g, k t4), a1 (row 16w+g+8, k t4), a2 (row 16w+g, k t4+4), a3 (row 16w+g+8, k t4+4);
// D fragment (m64nN): d[4j + 2v + u] = (row 16w+g+8v, col 8j+2t4+u). Rows are time steps, k the channel.
#pragma once
#include "wgmma.cuh"

#ifndef RS_WARPGROUPS
#define RS_WARPGROUPS 2  // warpgroups per block (each its own tiles and x slots; fewer work where slots do not fit)
#endif
#ifndef RS_CHUNK
#define RS_CHUNK 4  // k-steps (8 channels each) per wgmma batch: A registers 2 x 4 x RS_CHUNK per thread
#endif
#ifndef RS_X_AHEAD
#define RS_X_AHEAD 2  // warpgroups whose first x tile is requested at the start; warpgroup g >= RS_X_AHEAD requests
                      // its first tile when warpgroup g - RS_X_AHEAD's has landed, so the first tiles arrive one
                      // after another (and W_pw's fill is not queued behind them) instead of all at the end
#endif
#ifndef RS_X_SLOTS
#define RS_X_SLOTS 2  // x slots per warpgroup: 2 = the next tile's x loads while this tile computes and stores
#endif
#ifndef RS_X_PARTS
#define RS_X_PARTS 2  // channel parts per x tile, each its own TMA box and mbarrier: a chunk's depthwise starts once
                      // the parts holding its channels have landed, not the whole tile
#endif
// Removed: RS_X_EAGER (every x slot requested at the start), slower in all six combinations of a same-run sweep
// (docs/ladder.md). A warpgroup requests its first tile, then the
// others' once part RS_X_NEXT_PART of it has landed.
#ifndef RS_X_NEXT_PART
#define RS_X_NEXT_PART -1  // a warpgroup requests its other slots' first tiles once part
                           // RS_X_NEXT_PART of its first tile has landed (-1: the last part). Timed at
                           // 9686478: 0 slower than -1 (24.70 against 22.88 us; docs/ladder.md)
#endif
#ifndef RS_W_FIRST
#define RS_W_FIRST 1  // 1: the first x requests leave once W_pw's loads are in flight (0: before them)
#endif
#ifndef RS_SPLIT
#define RS_SPLIT 0  // 1 (an experiment, off): the strict class's numerics (rung 10's 3xTF32) in this
                    // form. Each activation is eager's fp32 SiLU split into big = tf32(s) and small = tf32(s - big), both
                    // A fragments; W_pw's big and small parts both sit in smem (wg_fill_w's split, 128 KiB); each k-step
                    // issues big*W_big into the bias-started accumulators and small*W_big + big*W_small into a second
                    // chain of 64 (rung 10's arrangement with one big chain), added before the stores. Why: rung 10
                    // keeps TILE_T 32 and one x slot beside two act buffers of two parts; this form has no act
                    // buffers, so two x slots of 36 KiB fit beside the 138.5 KiB of weights and tables (at K 5 d 2:
                    // RS_X_SLOTS=1 gives two warpgroups one slot each, RS_X_SLOTS=2 one warpgroup two). ptxas: 211-250
                    // registers and no spill in any kernel (RS_CHUNK 2 and 4), 48 wgmmas a tile with no serialization;
                    // with the knob off every kernel's SASS is as before (logs/2026-12-07_3a41e3f_rs_split_ptxas_sass.txt).
                    // Predicted: between rung 10's time and ~12% under it at the headline (issue 17's strict target,
                    // 1.7x the clone, needs ~6% under rung 10). Measured on an H100 (2026-12-07, a5723db; rung 10's
                    // time over the build's, 200 interleaved pairs): RS_X_SLOTS=1,RS_CHUNK=2 0.966 at the headline
                    // (30.78 against 29.76 us; 1.87x the clone where rung 10 reads 1.82x), 0.995 at K 3, 1.049 at B 64
                    // T 4096; RS_X_SLOTS=2 0.800 and RS_CHUNK 4 0.833 at the headline. Below the prediction at the
                    // headline, where each warpgroup's single x slot leaves its loads exposed and a block runs ~4
                    // tiles; ahead of rung 10 only where blocks run many tiles. Its GPU test passed (every shape of
                    // rung 12's battery within 1e-6; 5.0e-7 at the headline against rung 10's 1.2e-7); memcheck 0
                    // errors, racecheck 0 hazards (logs/2026-12-07_a5723db_rs_split_tests_sanitize_pairs_h100.log).
                    // Kept as a knob, as wgmma.cuh keeps WG_W_SMALL_REGS: docs/ladder.md, "Runs of 2026-12-07, noon"
#endif
static_assert(RS_X_SLOTS == 1 || RS_X_SLOTS == 2, "RS_X_SLOTS: 1 or 2");
static_assert(RS_X_PARTS == 1 || RS_X_PARTS == 2 || RS_X_PARTS == 4, "RS_X_PARTS: 1, 2 or 4");
static_assert(RS_WARPGROUPS >= 2 && RS_WARPGROUPS <= 4, "RS_WARPGROUPS: 2 .. 4 (the second warpgroup stages b_pw)");
static_assert(16 % RS_CHUNK == 0, "RS_CHUNK must divide the 16 k-steps");
static_assert(RS_SPLIT == 0 || RS_SPLIT == 1, "RS_SPLIT: 0 or 1");

namespace {

constexpr int kRsThreads = RS_WARPGROUPS * 128;
constexpr int kRsM = 64;       // time steps per warpgroup tile (the wgmma M)
constexpr int kRsN = kRows;    // C_out padded to 128 (the wgmma N)
constexpr int kRsDwStride = 20;  // floats per channel in the depthwise table: bias, w_0 .. w_16, padding

// Host and device: the smem layout (bytes from the 1024-byte aligned base):
// [W_pw 128 x 128 tf32, swizzled (RS_SPLIT: its big part, then its small part) | depthwise table 128 x kRsDwStride |
//  b_pw 128 | RS_X_SLOTS x slots per warpgroup | mbarriers]
struct RsLayout {
  static constexpr uint32_t w_bytes = kRows * kMaxCin * 4;
  static constexpr uint32_t off_dw = (RS_SPLIT ? 2 : 1) * w_bytes;
  static constexpr uint32_t off_bpw = off_dw + kMaxCin * kRsDwStride * 4;
  static constexpr uint32_t off_x = off_bpw + kRows * 4;  // 65536 + 10240 + 512 = 76288 (74.5 KiB); RS_SPLIT 141824
  // x tile row: XW >= 64 + span floats with XW % 16 == 8, so the 8 time rows x 4 channels a warp's loads
  // touch fall in 32 distinct banks (channel stride XW = 8 or 24 banks)
  static __host__ __device__ constexpr int xw(int span) { return (kRsM + span + 7) / 16 * 16 + 8; }
};
static_assert(RsLayout::off_x % 128 == 0, "TMA destinations must be 128-byte aligned");
// Channel rows per x part (one TMA box each): C_in split in RS_X_PARTS boxes of a multiple of 4 rows (so every
// part's smem destination is 128-byte aligned; rows past C_in are zero-filled by the TMA).
__host__ __device__ __forceinline__ int rs_part_rows(int C_in) {
  const int r = (C_in + 3) / 4 * 4;
  return RS_X_PARTS == 1 ? C_in : r < kMaxCin / RS_X_PARTS ? r : kMaxCin / RS_X_PARTS;
}
// Time steps between an x box's (16-byte aligned) first column and the tile's first tap: (-padding) mod 4.
__host__ __device__ __forceinline__ int rs_shift(int padding) { return (4 - padding % 4) % 4; }

// Depthwise + bias of channel row xc (x slot row of the channel, at this thread's tile-local time row) for rows
// r and r + 8, as bits: the two A registers of one channel before the SiLU and the tf32 rounding (the caller's
// silu_rounded, over a whole chunk). wc: the channel's table
// row (bias, w_0 ..). KC > 0: K at compile time (taps of the two rows that coincide are loaded once);
// KC == 0: K at run time.
template <int D, int KC>
__device__ __forceinline__ void rs_dw_pair(const float* xc, const float* wc, int K, uint32_t& lo, uint32_t& hi) {
  float acc0, acc1;
  if constexpr (KC > 0) {
    constexpr int NV = (KC + 1 + 3) / 4;
    float w[4 * NV];
#pragma unroll
    for (int i = 0; i < NV; ++i) {
      const float4 v = reinterpret_cast<const float4*>(wc)[i];
      w[4 * i] = v.x; w[4 * i + 1] = v.y; w[4 * i + 2] = v.z; w[4 * i + 3] = v.w;
    }
    acc0 = w[0];
    acc1 = w[0];
#pragma unroll
    for (int k = 0; k < KC; ++k) {
      acc0 = fmaf(w[1 + k], xc[k * D], acc0);
      acc1 = fmaf(w[1 + k], xc[8 + k * D], acc1);
    }
  } else {
    acc0 = wc[0];
    acc1 = wc[0];
    for (int k = 0; k < K; ++k) {
      const float wk = wc[1 + k];
      acc0 = fmaf(wk, xc[k * D], acc0);
      acc1 = fmaf(wk, xc[8 + k * D], acc1);
    }
  }
  lo = __float_as_uint(acc0);  // the depthwise outputs; the caller applies the SiLU to a whole chunk at once
  hi = __float_as_uint(acc1);
}

// The kernel. Warpgroup wg of block blk takes tiles (blk * G + wg) + i * gridDim.x * G, G = p.groups
// (the warpgroups that work: as many x slots as fit, at most RS_WARPGROUPS); a tile is 64 time steps of
// one batch row, all C_out channels.
template <int D, int KC>
__global__ void __launch_bounds__(kRsThreads, 1) wg_rs_kernel(const TcParams p, const __grid_constant__ CUtensorMap xmap) {
  using L = RsLayout;
  constexpr int kChunks = 16 / RS_CHUNK;
  extern __shared__ unsigned char wg_smem_raw[];
  unsigned char* smem = wg_smem_base(wg_smem_raw);
  const int tid = threadIdx.x, wg = tid >> 7, wtid = tid & 127;
  const int groups = p.groups;
  float* s_dw = reinterpret_cast<float*>(smem + L::off_dw);
  float* s_bpw = reinterpret_cast<float*>(smem + L::off_bpw);
  constexpr int S = RS_X_SLOTS;
  constexpr int P = RS_X_PARTS;
  uint64_t* xbar = reinterpret_cast<uint64_t*>(smem + p.off_mbar);  // [RS_WARPGROUPS][S][P]: g's x slots' parts
  uint64_t* landed = xbar + RS_WARPGROUPS * S * P;  // [RS_WARPGROUPS]: g's first tile has landed (one phase only)
  unsigned char* xslot = smem + p.off_x + wg * S * p.x_stage;  // the warpgroup's n-th tile: slot n % S
  const int64_t stride = static_cast<int64_t>(gridDim.x) * groups;
  int64_t tile = static_cast<int64_t>(blockIdx.x) * groups + wg;
  const int part_rows = rs_part_rows(p.C_in), n_parts = (p.C_in + part_rows - 1) / part_rows;
  // the first tile's part after whose landing the warpgroup requests its other slots' tiles (RS_X_NEXT_PART)
  const int next_after = RS_X_NEXT_PART < 0 ? n_parts - 1 : min(RS_X_NEXT_PART, n_parts - 1);
  const uint32_t part_bytes = static_cast<uint32_t>(p.XW) * part_rows * 4;  // zero-filled columns and rows count
  // A TMA box's first time step must sit on a 16-byte boundary (an unaligned innermost coordinate is an illegal
  // instruction): the box starts `shift` = (-padding) mod 4 steps before the tile's halo (0 at the headline).
  const int shift = rs_shift(p.padding);
  auto issue_x = [&](int64_t t, int n) {  // one thread of the warpgroup: tile t, its n-th -> slot n % S
    if (FUSED_ABLATE & 8) return;
    for (int i = 0; i < n_parts; ++i) {
      uint64_t* bar = &xbar[(wg * S + n % S) * P + i];
      mbar_expect_tx(bar, part_bytes);
      tma_load_3d(xslot + (n % S) * p.x_stage + i * part_bytes, &xmap, bar,
                  static_cast<int>((t % p.n_tt) * kRsM - p.padding - shift), i * part_rows, static_cast<int>(t / p.n_tt));
    }
  };
  auto issue_first = [&]() {  // the warpgroup's first tile, tile = its first
    if (tile < p.n_tiles) issue_x(tile, 0);
  };

  if (tid == 0) {
    for (int g = 0; g < groups; ++g) {
      for (int s = 0; s < S * P; ++s) mbar_init(&xbar[g * S * P + s], 1);
      mbar_init(&landed[g], 1);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the TMA unit
  }
  if (FUSED_TRACE && tid == 0) wg_mark_ends(true);
  __syncthreads();
  const bool first_now = wtid == 0 && wg < groups && wg < RS_X_AHEAD && tile < p.n_tiles;
  if (!RS_W_FIRST && first_now) issue_first();  // fly while the weights stage

  // The depthwise table (bias, taps; one channel per thread of the first 128, loads issued together) and
  // b_pw (the next 128) are loaded before W_pw's fill and stored after it, so the round trips overlap.
  float dw[kRsDwStride];
  const int c = tid;
  if (tid < kMaxCin) {
#pragma unroll
    for (int k = 0; k < kRsDwStride; ++k)
      dw[k] = c >= p.C_in ? 0.0f : k == 0 ? (p.b_dw ? __ldg(p.b_dw + c) : 0.0f)
                                 : k - 1 < p.K ? __ldg(p.w_dw + c * p.K + k - 1) : 0.0f;
  } else if (tid < kMaxCin + kRows) {
    dw[0] = (p.b_pw && tid - kMaxCin < p.C_out) ? __ldg(p.b_pw + tid - kMaxCin) : 0.0f;
  }
  // W_pw (tf32, swizzled K-major: wgmma's B)
  constexpr int kFillThreads = kRsThreads >= 512 ? 512 : kRsThreads >= 256 ? 256 : 128;
  if (tid < kFillThreads)
    wg_fill_w<float, RS_SPLIT != 0, kFillThreads>(smem, p, tid, [&] {
      if (RS_W_FIRST && first_now) issue_first();  // W_pw's loads are in flight
    });
  else if (RS_W_FIRST && first_now)
    issue_first();
  if (tid < kMaxCin) {
#pragma unroll
    for (int k = 0; k < kRsDwStride; k += 4)
      *reinterpret_cast<float4*>(s_dw + c * kRsDwStride + k) = make_float4(dw[k], dw[k + 1], dw[k + 2], dw[k + 3]);
  } else if (tid < kMaxCin + kRows) {
    s_bpw[tid - kMaxCin] = dw[0];
  }
  // x rows past the parts (n_parts x part_rows >= C_in; the TMA zero-fills rows C_in ..) of every slot are zero
  const int covered = n_parts * part_rows;
  if (covered < kMaxCin)
    for (int i = tid; i < groups * S * (kMaxCin - covered) * p.XW; i += kRsThreads) {  // all groups x S slots
      const int per = (kMaxCin - covered) * p.XW, slot = i / per;
      reinterpret_cast<float*>(smem + p.off_x + slot * p.x_stage)[covered * p.XW + i % per] = 0.0f;
    }
  fence_proxy_async();  // W_pw -> visible to wgmma
  __syncthreads();
  if (FUSED_TRACE && tid == 0) wg_mark(kTrWFill);
  if (wg >= groups) return;
  if (wtid == 0 && wg >= RS_X_AHEAD && tile < p.n_tiles) {  // the chain of first tiles (see RS_X_AHEAD)
    if (!(FUSED_ABLATE & 8)) mbar_wait(&landed[wg - RS_X_AHEAD], 0);  // (a lower warpgroup of the block: it has a tile)
    issue_first();
  }

  const int warp = wtid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
  const int row = 16 * warp + g;  // this thread's time rows: row, row + 8
  const uint32_t w_addr = smem_u32(smem);
  const float* x_lane0 = reinterpret_cast<const float*>(xslot) + t4 * p.XW + row + shift;  // channel t4, time row
  const float* dw_lane = s_dw + t4 * kRsDwStride;
  float* y = static_cast<float*>(p.y);
  const bool fast_store = p.C_out == kRows;
  const bool tracer = FUSED_TRACE && wtid == 0;  // FUSED_TRACE: one recording thread per warpgroup

  for (int n = 0; tile < p.n_tiles; tile += stride, ++n) {
    float d[64];  // accumulators start at the bias: wgmma adds to them
#pragma unroll
    for (int j = 0; j < 16; ++j) {
      const float2 bb = *reinterpret_cast<const float2*>(s_bpw + 8 * j + 2 * t4);
      d[4 * j] = bb.x; d[4 * j + 1] = bb.y; d[4 * j + 2] = bb.x; d[4 * j + 3] = bb.y;
    }
    float ds[64];  // RS_SPLIT: the chain of small*W_big + big*W_small, from 0 (unused otherwise)
    if constexpr (RS_SPLIT != 0) {
#pragma unroll
      for (int i = 0; i < 64; ++i) ds[i] = 0.0f;
    }
    int waited = 0;  // parts of this tile waited for
    uint64_t* tile_bars = &xbar[(wg * S + n % S) * P];
    auto wait_parts = [&](int ch) {  // the parts holding channels < ch (those of the chunks so far)
      const int last = min((ch - 1) / part_rows, n_parts - 1);
      for (; waited <= last; ++waited) {
        if (!(FUSED_ABLATE & 8)) mbar_wait(&tile_bars[waited], (n / S) & 1);
        if (n == 0 && wtid == 0) {
          // the next warpgroup of the chain may request its first tile once this one's is in
          if (waited == n_parts - 1) mbar_arrive(&landed[wg]);
          // and this one its next S - 1 once part next_after of the first is in (so they do not delay it)
          if (waited == next_after)
            for (int k = 1; k < S; ++k)
              if (tile + k * stride < p.n_tiles) issue_x(tile + k * stride, k);
        }
      }
    };
    wait_parts(8 * RS_CHUNK);
    const float* x_lane = x_lane0 + (n % S) * (p.x_stage / 4);
    const int tr = wg + RS_WARPGROUPS * n;  // trace: warpgroup wg's n-th tile
    if (tracer) wg_mark_tile(tr, kTrXLanded);
    uint32_t a[2][RS_CHUNK][4];
    uint32_t as[RS_SPLIT ? 2 : 1][RS_SPLIT ? RS_CHUNK : 1][4];  // RS_SPLIT: the small parts of a's activations
#pragma unroll
    for (int q = 0; q < kChunks; ++q) {
      if (q >= 2) wg_wait<1>();  // the MMA of chunk q - 2 has read a[q % 2]
      if (q >= 1) wait_parts(8 * RS_CHUNK * (q + 1));
#pragma unroll
      for (int s = 0; s < RS_CHUNK; ++s) {
        const int ks = q * RS_CHUNK + s;  // channels 8 ks + t4 and 8 ks + t4 + 4
        if (FUSED_ABLATE & 1) {
          a[q & 1][s][0] = a[q & 1][s][1] = a[q & 1][s][2] = a[q & 1][s][3] = static_cast<uint32_t>(ks);
          if constexpr (RS_SPLIT != 0) as[q & 1][s][0] = as[q & 1][s][1] = as[q & 1][s][2] = as[q & 1][s][3] = 0u;
          continue;
        }
        rs_dw_pair<D, KC>(x_lane + 8 * ks * p.XW, dw_lane + 8 * ks * kRsDwStride, p.K, a[q & 1][s][0], a[q & 1][s][1]);
        rs_dw_pair<D, KC>(x_lane + (8 * ks + 4) * p.XW, dw_lane + (8 * ks + 4) * kRsDwStride, p.K, a[q & 1][s][2],
                          a[q & 1][s][3]);
      }
      if constexpr (RS_SPLIT != 0) {
        // eager's SiLU in fp32 whatever FUSED_SILU says (the split's activations must be fp32-exact, as rung 10's),
        // then tc_split_tf32
        if (!(FUSED_ABLATE & 1)) {
#pragma unroll
          for (int s = 0; s < RS_CHUNK; ++s)
#pragma unroll
            for (int r = 0; r < 4; ++r)
              tc_split_tf32(silu_eager(__uint_as_float(a[q & 1][s][r])), a[q & 1][s][r], as[q & 1][s][r]);
        }
        wg_fence_regs<1, 64>(reinterpret_cast<float(&)[1][64]>(ds));
      } else if (!(FUSED_ABLATE & 1)) {
        silu_rounded<13>(reinterpret_cast<float(&)[RS_CHUNK * 4]>(a[q & 1]));
      }
      wg_fence_regs<1, 64>(reinterpret_cast<float(&)[1][64]>(d));
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int s = 0; s < RS_CHUNK; ++s) {
        const int ks = q * RS_CHUNK + s;
        const uint32_t wo = (ks / 4) * (kRows * 128) + (ks % 4) * 32;
        if constexpr (RS_SPLIT != 0)
          if (!(FUSED_ABLATE & 2)) {
            WgmmaRs<128>::mma(ds, as[q & 1][s], wg_desc(w_addr + wo));                   // small * W_big
            WgmmaRs<128>::mma(ds, a[q & 1][s], wg_desc(w_addr + RsLayout::w_bytes + wo));  // big * W_small
          }
        if (!(FUSED_ABLATE & 2)) WgmmaRs<128>::mma(d, a[q & 1][s], wg_desc(w_addr + wo));
      }
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      wg_fence_regs<1, 64>(reinterpret_cast<float(&)[1][64]>(d));
      if constexpr (RS_SPLIT != 0) wg_fence_regs<1, 64>(reinterpret_cast<float(&)[1][64]>(ds));
    }
    // every warp of the warpgroup has read its x: refill the slot with the next tile while the MMA finishes
    if (tracer) wg_mark_tile(tr, kTrMmaIssued);
    named_bar_sync(1 + wg, 128);
    if (wtid == 0 && tile + S * stride < p.n_tiles) issue_x(tile + S * stride, n + S);  // into the slot just read
    wg_wait<0>();
    wg_fence_regs<1, 64>(reinterpret_cast<float(&)[1][64]>(d));
    if constexpr (RS_SPLIT != 0) {
      wg_fence_regs<1, 64>(reinterpret_cast<float(&)[1][64]>(ds));
#pragma unroll
      for (int i = 0; i < 64; ++i) d[i] += ds[i];
    }
    if (tracer) wg_mark_tile(tr, kTrMmaDone);

    // y[b, co, t]: co = 8j + 2 t4 + u, t = t0 + row + 8v. A warp's store writes 4 rows x 32 bytes.
    const int64_t b = tile / p.n_tt, t0 = (tile % p.n_tt) * kRsM;
    float* yb = y + (b * p.C_out + 2 * t4) * p.T_out + t0 + row;
    if (FUSED_ABLATE & 4) {
    } else if (fast_store && t0 + kRsM <= p.T_out) {
#pragma unroll
      for (int j = 0; j < 16; ++j) {
        float* y0 = yb + static_cast<int64_t>(8 * j) * p.T_out;
        y0[0] = d[4 * j];
        y0[8] = d[4 * j + 2];
        y0[p.T_out] = d[4 * j + 1];
        y0[p.T_out + 8] = d[4 * j + 3];
      }
    } else {
      const bool lo_ok = t0 + row < p.T_out, hi_ok = t0 + row + 8 < p.T_out;
#pragma unroll
      for (int j = 0; j < 16; ++j)
#pragma unroll
        for (int u = 0; u < 2; ++u) {
          if (8 * j + 2 * t4 + u >= p.C_out) continue;
          float* yr = yb + static_cast<int64_t>(8 * j + u) * p.T_out;
          if (lo_ok) yr[0] = d[4 * j + u];
          if (hi_ok) yr[8] = d[4 * j + 2 + u];
        }
    }
    if (tracer) wg_mark_tile(tr, kTrStored);
  }
  if (FUSED_TRACE && tid == 0) wg_mark_ends(false);
  // every x box this warpgroup issued has been waited for (the next is issued only while tiles remain)
}

// Host: the smem plan. p.groups = warpgroups that work (x slots that fit, at most RS_WARPGROUPS).
inline bool rs_plan(const FusedArgs& a, TcParams& p, size_t& smem) {
  size_t unused;
  if (!tc_plan(a, 4, kRsM, kRows, p, unused)) return false;  // the shape fields of p
  const int64_t limit = a.max_smem_optin > 0 ? a.max_smem_optin : 227 * 1024;
  const int span = (a.K - 1) * a.dilation;
  p.XW = RsLayout::xw(span + rs_shift(a.padding));
  p.C_in_pad = kMaxCin;
  p.off_x = RsLayout::off_x;
  p.x_stage = static_cast<uint32_t>(kMaxCin * p.XW * 4);  // a multiple of 128 bytes (XW % 8 == 0)
  const int mbar_bytes = RS_WARPGROUPS * (RS_X_SLOTS * RS_X_PARTS + 1) * 8;
  const int64_t room = limit - 1024 - RsLayout::off_x - mbar_bytes;
  const int64_t fit = room / (static_cast<int64_t>(p.x_stage) * RS_X_SLOTS);
  if (fit < 1 || p.XW > 256) return false;
  p.groups = static_cast<int>(fit < RS_WARPGROUPS ? fit : RS_WARPGROUPS);
  p.off_mbar = p.off_x + p.groups * RS_X_SLOTS * p.x_stage;
  smem = static_cast<size_t>(p.off_mbar) + mbar_bytes + 1024;
  return true;
}

// Host: the refusal (nullptr = this variant computes `a`): rung 09's shape limits, and the x slots must fit.
inline const char* rs_refusal(const FusedArgs& a, TcParams& p, size_t& smem) {
  if (a.cc != 90) return "needs an sm_90 GPU (H100/H200): wgmma exists only on sm_90a";
  if (const char* why = wg_shape_refusal<float>(a)) return why;
  if (!rs_plan(a, p, smem)) return "the x tiles do not fit in shared memory";
  return nullptr;
}
inline const char* rs_refusal(const FusedArgs& a) {
  TcParams p{};
  size_t smem = 0;
  return rs_refusal(a, p, smem);
}

// Host: TMA descriptor (box: XW time steps x C_in channel rows) and the persistent launch (p.groups tiles
// per block at once); K at compile time for the common odd sizes 3, 5, 7 (where the span allows), at run
// time otherwise.
template <int D, int KC>
void rs_launch_dk(const FusedArgs& a, const TcParams& p, size_t smem, void* stream) {
  const CUtensorMap xmap = wg_x_map<float>(a.x, a.B, a.C_in, a.T, p.XW, rs_part_rows(a.C_in));
  tc_launch_persistent(wg_rs_kernel<D, KC>, kRsThreads, smem, a, p, stream, xmap);
}
template <int D>
void rs_launch_d(const FusedArgs& a, const TcParams& p, size_t smem, void* stream) {
  if (a.K == 5) return rs_launch_dk<D, 5>(a, p, smem, stream);
  if (a.K == 3) return rs_launch_dk<D, 3>(a, p, smem, stream);
  if (a.K == 7 && 6 * D <= 16) return rs_launch_dk<D, (6 * D <= 16 ? 7 : 0)>(a, p, smem, stream);
  return rs_launch_dk<D, 0>(a, p, smem, stream);
}
inline void rs_launch(const FusedArgs& a, void* stream) {
  TcParams p{};
  size_t smem = 0;
  if (rs_refusal(a, p, smem)) throw std::runtime_error("wgmma_rs variant: shape not supported (see fused_unsupported)");
  switch (a.dilation) {
    case 1: return rs_launch_d<1>(a, p, smem, stream);
    case 2: return rs_launch_d<2>(a, p, smem, stream);
    case 3: return rs_launch_d<3>(a, p, smem, stream);
    default: return rs_launch_d<4>(a, p, smem, stream);
  }
}

}  // namespace
