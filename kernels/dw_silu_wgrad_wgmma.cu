// dw_silu_wgrad_wgmma.cu: backward rung 8, the depthwise + SiLU half of the backward and the 1x1 conv's weight
// gradient in one pass on Hopper (contract: dw_backward_args.h; rung 4's outputs and partials plus rung 7's dW_pw
// partials, summed by the same backward_finish).
// What it changes: with backward="wgrad_kernel", rung 4 wrote act (16.8 MB at the headline) only for rung 7 to read
// it back with gy (33.5 MB), two kernels of ~20 us each. Here one block owns (b, 32-step tile) pairs with every
// channel, so the activations it makes for dx's gradient are the GEMM's operand where they are made: act goes from
// registers to shared memory (TF32, the 128-byte swizzled K-major layout), never to HBM, and gy's tile, staged for
// db_pw anyway, is the GEMM's other operand. Bytes at the headline: read x, ga, gy, write dx: 67 MB, rung 4's own
// (it wrote act instead of reading gy), against 100.6 MB for rungs 4 + 7. ModelNew runs it with
// backward="wgrad_fused" (eager_autograd.h, mode 4).
// Form: G = one block per SM (512 threads, four warpgroups), block j takes tiles j, j + G, .. (DWWG_ORDER). One
// thread issues three TMA boxes per tile into a ring of `stages` stages (2-4, as many as fit; 3 at the headline):
// gy (C_out rows x 32 steps, 128-byte swizzle), x over [t0 - halo, t0 + 32 + halo) and ga over [t0 - halo/2,
// t0 + 32 + halo/2) (C rows each, zeros outside the tensor, each box starting on a 16-byte boundary). Per tile:
//   - each thread rounds 2 of gy's 16-byte units to TF32 in place (db_pw's sums of the unrounded gy on the way);
//   - warp w takes channels w, w + 16, .. (8 of them, every one computed, those past C never stored: no branch per
//     channel): lane l makes v and the SiLU terms of step t0 + l for 4 channels side by side (div_newton, IEEE
//     division's fast path, exact where div_newton_ok; IEEE division for the rest), then gv, the channel's K + 1
//     sums (registers, for the block's whole range), gv over ga in place and act (rounded to TF32) into the act
//     tile; then the halo's gv steps (half the span each side), lanes over (channel, step);
//   - after one barrier each warpgroup issues 4 wgmma m64n64k8 (a 64 x 64 quarter of dW_pw, accumulators in
//     registers for the block's range) and, while they run, computes dx of step t0 + l from gv's window, one
//     128-byte store a row (code without calls: ptxas serializes wgmmas left in flight across the IEEE
//     divisions' slow-path calls), then waits for them. Two act tiles alternate; a stage is refilled at the next
//     tile's barrier.
// Prediction: rung 4's time or a little more (its bytes; the MMA and the TMA asynchronous beside the arithmetic),
// and the backward ~15 us faster than the default: one kernel of ~22 us where the default runs rung 4 (25.9 us)
// and cuDNN's weight gradient (13.6 + 1.8).
// Outcome (docs/results.md, "backward rung 8"; logs/2026-12-0[23]_{bb59620,4e910a1,850feae,f170978,75a0c44}_*):
// correct (rung 8 alone against float64 at the GPU test's 6 shapes and the sanitizer's 4, ModelNew's gradients
// against eager's in the backward tests; memcheck and racecheck clean) but slower than what it replaces: 58.8 us in
// the backward's profile at the headline, the backward 81.5 us against the default's 63.8 (fwd+bwd 106.5 against
// 88.3, eager 245.0), one run. The first form (256 threads, IEEE divisions, a branch per channel) took 74.7 us:
// ncu, 2 warps per scheduler with 0.36 eligible, DRAM 14% busy. 512 threads and div_newton: 75.3 alone (87.1
// before); the strided tile order 71.2 against 75.7. ncu of the 512-thread form (f170978): 23.8 M warp
// instructions (~1450 per warp per tile: ~180 per output step against rung 4's far fewer, which keeps one
// channel's weights in registers), long-scoreboard and fixed-latency stalls first (2.6 and 1.6 cycles per
// issue), DRAM 18%: latency-bound at 16 warps per SM, 128 registers each (32 accumulators, 48 sums, 16 spill
// loads/stores in the loop: logs/2026-12-03_7523c61_rung8_lds_sass.txt). So the one-block-per-(b, t)-tile form
// costs more instructions and occupancy than the 33.5 MB it saves. ncu's source view (aecc8ad) then showed why so
// many instructions: the shared-memory tiles are read by generic LD.E (16% of the executed instructions) with
// 64-bit address math, because `smem` below is aligned through a uintptr_t round trip and loses its address
// space. Aligned by an offset from the shared array instead (wgmma.cuh's wg_smem_base form, a1c103a): LDS/STS, the
// loop 4% shorter and unspilled; alone 64.9 us against 70.4 in the same run, the `wgrad_fused` backward
// 76.8 against 82.3 (logs/2026-12-03_{519b27a_backward_ab_lds,5457865_silu_nocall_ab}.log): still 13 us behind the
// default. Next: fewer channels per warp (the K + 1 sums reduced per tile, not held), or the GEMM in its own
// warpgroup with setmaxnreg.
// Numerics: v, act and gv as rung 4 (eager's bits before act's TF32 rounding: div_newton is IEEE division's
// result where it is used, scripts/silu_exhaustive.cu); dx's taps in aten's order; dW_pw from TF32 operands rounded
// to nearest even as cuDNN's weight gradient rounds them (so it runs only where that is a TF32 GEMM:
// eager_autograd.h); the sums in fixed orders (deterministic, no atomics): within float32 summation order of
// eager's gradients.
// Limits: an sm_90 GPU and a build for sm_90a; rung 4's vector shapes with K <= 5 (DWWG_SHAPES: the channels'
// sums live in registers beside the 32 accumulators); kTcMinC <= C, C_out <= 128; B * ceil(T / 32) < 2^31; float32.
#include <cuda_runtime.h>
#include <cstdint>
#include <stdexcept>
#include <string>
#include "common.cuh"       // tc_round_tf32
#include "mbarrier.cuh"     // mbar_init, mbar_wait
#include "wgmma_ops.cuh"    // Wgmma, wg_desc, wg_swz, TMA loads, tma_map_3d
#include "row_float4.cuh"   // in_row
#include "warp_reduce.cuh"  // warp_sum
#include "dw_backward_args.h"
#include "gpu_props.h"      // gpu_compute_capability, blocks_per_sm_capped

// The (K, dilation) pairs compiled for rung 8: X(K, D) for each (rung 4's with K <= 5).
#ifndef DWWG_SHAPES
#define DWWG_SHAPES(X) X(3, 1) X(3, 2) X(3, 3) X(3, 4) X(5, 1) X(5, 2) X(5, 3) X(5, 4)
#endif

// DWWG_ORDER (a timing experiment): 0 a block's tiles contiguous (b, t) ranges, 1 strided over the blocks (tile
// blk + G i), so that the blocks read neighbouring 128-byte pieces of each row at about the same time.
#ifndef DWWG_ORDER
#define DWWG_ORDER 1  // 71.2 us against 75.7 for contiguous ranges at the headline (one run each, f170978)
#endif

namespace dwwg {

constexpr int kTT = 32;                      // steps per tile: one 128-byte row of fp32, the GEMM's k per tile
constexpr int kThreads = 512, kWarps = kThreads / 32;  // four warpgroups: dW_pw's four 64 x 64 quarters
constexpr int kRows = 128;                   // channels (C and C_out) at most
constexpr int kCPW = kRows / kWarps;         // channels per warp: c = warp + kWarps * ci
constexpr uint32_t kOpBytes = kRows * kTT * 4;  // one GEMM operand's tile (gy or act): 16 KB
constexpr size_t kSmemMax = 227 * 1024;      // an sm_90 block's dynamic shared memory
constexpr int kMaxStages = 4;
constexpr int kUnits = kOpBytes / 16 / kThreads;  // gy's 16-byte units each thread rounds
static_assert(kUnits * 16 * kThreads == kOpBytes, "gy's tile in whole units per thread");

template <int K, int D>
struct Shape {
  static constexpr int H = (K - 1) * D, P = H / 2;  // the span (even: rung 4's vector shapes), 'same' padding
  // x over [t0 - H, t0 + kTT + H), ga (then gv) over [t0 - P, t0 + kTT + P), each box starting on a 16-byte
  // boundary, H4 = H and P4 = P rounded up to 4 steps before t0 (a box starting off one faulted: the 4e910a1 and
  // 850feae runs, an illegal instruction at every span with H % 8 != 0); SX, SG: the steps before the first needed
  static constexpr int H4 = (H + 3) / 4 * 4, P4 = (P + 3) / 4 * 4, SX = H4 - H, SG = P4 - P;
  static constexpr int XW = (H4 + kTT + H + 7) / 8 * 8, GW = (P4 + kTT + P + 7) / 8 * 8;  // rows of 32-byte sectors
  static constexpr uint32_t kXBytes = kRows * XW * 4, kGBytes = kRows * GW * 4;
  static constexpr uint32_t kStageBytes = kOpBytes + kXBytes + kGBytes;  // gy (1024-byte aligned), x, ga
  static_assert(kStageBytes % 1024 == 0, "every stage's gy tile 1024-byte aligned for the swizzle");
  static_assert(H4 % 4 == 0 && P4 % 4 == 0 && kTT % 4 == 0, "every TMA box starts on a 16-byte boundary");
  static_assert(XW % 8 == 0 && GW % 8 == 0 && XW <= 256 && GW <= 256, "box rows of whole 32-byte sectors, <= 256");
  static constexpr int kHalo = (kCPW * H + 31) / 32;  // passes of the warp over its channels' halo steps
  static size_t smem(int stages) {  // + 1024-byte alignment, the two act tiles, the weights and biases, mbarriers
    return 1024 + 2 * kOpBytes + stages * static_cast<size_t>(kStageBytes) + kRows * (K + 1) * 4 + 8 * stages;
  }
  static int stages() {
    for (int s = kMaxStages; s >= 2; --s)
      if (smem(s) <= kSmemMax) return s;
    return 0;
  }
};

// v = dw(x) at one step from x's window xr (taps xr[k D]), and its SiLU terms s = 1 / (1 + e), act = v / (1 + e)
// (e = expf(-v)) as rung 4's IEEE divisions give them: div_newton (common.cuh) where div_newton_ok, flagged in
// `slow` elsewhere (the caller redoes those with IEEE division).
template <int K, int D>
__device__ __forceinline__ void silu_terms(const float* xr, const float* w, float bias, float& v, float& sg,
                                           float& act, bool& slow) {
  v = bias;
#pragma unroll
  for (int k = 0; k < K; ++k) v = fmaf(w[k], xr[k * D], v);
  const float den = 1.0f + expf(-v);
  sg = div_newton(1.0f, den);
  act = div_newton(v, den);
  slow |= !div_newton_ok(v, den);
}

// grid G, kThreads threads, Shape::smem(stages) bytes of dynamic shared memory. ymap: gy (B, C_out, T) as 3-D (T,
// rows, B), box (kTT, C_out, 1), 128-byte swizzle; xmap, gmap: x and ga (B, C, T), boxes (XW, C, 1) and (GW, C, 1),
// no swizzle. Rows past C_out or C (of the tiles, the weights) are stale: a channel c >= C is computed like the
// others (no branch) but never stored, and each stale GEMM row feeds only its own row or column of dW_pw, which
// is not stored.
template <int K, int D>
__global__ void __launch_bounds__(kThreads, 1) dw_wgrad_kernel(const __grid_constant__ CUtensorMap ymap,
                                                              const __grid_constant__ CUtensorMap xmap,
                                                              const __grid_constant__ CUtensorMap gmap,
                                                              const DwBackwardArgs a, float* partial_w, int stages) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();  // built for another arch: dw_wgrad_fused_fits is false there, so this never runs
#elif defined(__CUDA_ARCH__)
  using S = Shape<K, D>;
  extern __shared__ unsigned char smem_raw[];
  // 1024-byte aligned by an offset from the shared array itself (wgmma.cuh's wg_smem_base form), so that the
  // compiler keeps the pointers in the shared window: the uintptr_t round trip of 75a0c44 made every tile access a
  // generic LD.E / ST.E (logs/2026-12-03_aecc8ad_rung8_ncu_source.txt)
  unsigned char* smem = smem_raw + ((1024 - (__cvta_generic_to_shared(smem_raw) & 1023)) & 1023);
  unsigned char* stage0 = smem + 2 * kOpBytes;  // the two act tiles first
  float* ws = reinterpret_cast<float*>(stage0 + static_cast<size_t>(stages) * S::kStageBytes);  // w_dw (C, K), b_dw
  uint64_t* full = reinterpret_cast<uint64_t*>(ws + kRows * (K + 1));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = tid >> 7;
  const int C = static_cast<int>(a.C), C_out = static_cast<int>(a.C_out), T = static_cast<int>(a.T);
  const int tiles = (T + kTT - 1) / kTT;
  const int64_t chunks = a.B * tiles, G = gridDim.x, blk = blockIdx.x;
  const int64_t c_begin = blk * chunks / G;
  const int n = DWWG_ORDER ? static_cast<int>((chunks - blk + G - 1) / G)
                           : static_cast<int>((blk + 1) * chunks / G - c_begin);
  const uint32_t tx_bytes = static_cast<uint32_t>(C * (S::XW + S::GW) + C_out * kTT) * 4;
  auto where = [&](int i, int& b, int& t0) {  // tile i of this block (32-bit: the host keeps B * tiles < 2^31)
    const unsigned id = DWWG_ORDER ? static_cast<unsigned>(blk + G * i) : static_cast<unsigned>(c_begin) + i;
    b = static_cast<int>(id / static_cast<unsigned>(tiles));
    t0 = static_cast<int>(id - static_cast<unsigned>(b) * tiles) * kTT;
  };
  auto issue = [&](int i) {  // tile i -> stage i % stages (thread 0)
    int b, t0;
    where(i, b, t0);
    unsigned char* st = stage0 + (i % stages) * S::kStageBytes;
    uint64_t* bar = &full[i % stages];
    mbar_expect_tx(bar, tx_bytes);
    tma_load_3d(st, &ymap, bar, t0, 0, b);
    tma_load_3d(st + kOpBytes, &xmap, bar, t0 - S::H4, 0, b);
    tma_load_3d(st + kOpBytes + S::kXBytes, &gmap, bar, t0 - S::P4, 0, b);
  };
  if (tid == 0) {
    for (int s = 0; s < stages; ++s) mbar_init(&full[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the TMA unit
  }
  for (int i = tid; i < kRows * K; i += kThreads) ws[i] = i < C * K ? __ldg(a.w_dw + i) : 0.0f;
  for (int i = tid; i < kRows; i += kThreads) ws[kRows * K + i] = a.b_dw && i < C ? __ldg(a.b_dw + i) : 0.0f;
  __syncthreads();
  if (tid == 0)
    for (int i = 0; i < n && i < stages; ++i) issue(i);
  // warpgroup wg: dW_pw rows 64 (wg / 2) .., columns 64 (wg % 2) ..
  float d[1][32];
#pragma unroll
  for (int r = 0; r < 32; ++r) d[0][r] = 0.0f;
  float dbs[kUnits];  // gy rows tid / 8 + 64 k: this thread's units of them
  float sums[kCPW][K + 1];  // channel warp + 16 ci: K of dW_dw, then db_dw (this lane's steps)
#pragma unroll
  for (int k = 0; k < kUnits; ++k) dbs[k] = 0.0f;
#pragma unroll
  for (int ci = 0; ci < kCPW; ++ci)
#pragma unroll
    for (int k = 0; k <= K; ++k) sums[ci][k] = 0.0f;
  const uint32_t base = smem_u32(smem);
  for (int i = 0; i < n; ++i) {
    const int s = i % stages;
    int b, t0;
    where(i, b, t0);
    unsigned char* st = stage0 + s * S::kStageBytes;
    mbar_wait(&full[s], (i / stages) & 1);
    float4* u = reinterpret_cast<float4*>(st);  // gy's tile: unit f is row f / 8, a quarter warp one row
#pragma unroll
    for (int k = 0; k < kUnits; ++k) {
      const float4 q = u[tid + kThreads * k];
      dbs[k] += (q.x + q.y) + (q.z + q.w);
      u[tid + kThreads * k] = tc_round_tf32(q);
    }
    const float* xs = reinterpret_cast<const float*>(st + kOpBytes);
    float* gs = reinterpret_cast<float*>(st + kOpBytes + S::kXBytes);
    unsigned char* at = smem + (i & 1) * kOpBytes;  // tile i - 2's wgmmas, which read it, were waited for
    const bool own = t0 + lane < T;
    // the tile's own steps, lane -> t = t0 + lane (gv index P + lane, x index P + lane + k D): the SiLU terms of
    // kGroup channels first (independent chains), then gv, the sums, gv over ga in place and act (TF32) for the GEMM
    constexpr int kGroup = 4;  // channels whose chains run side by side (8 spilled at K = 5)
#pragma unroll
    for (int g0 = 0; g0 < kCPW; g0 += kGroup) {
      float v[kGroup], sg[kGroup], ac[kGroup];
      bool slow = false;
#pragma unroll
      for (int e = 0; e < kGroup; ++e) {
        const int c = warp + kWarps * (g0 + e);
        silu_terms<K, D>(xs + c * S::XW + S::SX + S::P + lane, ws + c * K, ws[kRows * K + c], v[e], sg[e], ac[e], slow);
      }
      if (slow) {  // |v| or 1 + e outside div_newton's range (|v| > 2^60 or < 2^-60, v < -66): IEEE division
#pragma unroll
        for (int e = 0; e < kGroup; ++e) {
          const float den = 1.0f + expf(-v[e]);
          sg[e] = 1.0f / den;
          ac[e] = v[e] / den;
        }
      }
#pragma unroll
      for (int e = 0; e < kGroup; ++e) {
        const int ci = g0 + e, c = warp + kWarps * ci;
        const float* xr = xs + c * S::XW + S::SX + S::P + lane;
        float* gr = gs + c * S::GW + S::SG + S::P + lane;
        const float gval = own ? *gr * sg[e] * (1.0f + v[e] * (1.0f - sg[e])) : 0.0f;
#pragma unroll
        for (int k = 0; k < K; ++k) sums[ci][k] = fmaf(gval, xr[k * D], sums[ci][k]);
        sums[ci][K] += gval;
        *gr = gval;
        *reinterpret_cast<float*>(at + wg_swz<4>(c, lane, kRows)) = own ? tc_round_tf32(ac[e]) : 0.0f;
      }
    }
    // the halo's gv steps, [t0 - P, t0) and [t0 + kTT, t0 + kTT + P): lanes over (channel, step)
    constexpr int kHalo = S::kHalo, kItems = kCPW * S::H;
    float hv[kHalo], hs[kHalo], ha[kHalo];
    bool hslow = false;
#pragma unroll
    for (int it = 0; it < kHalo; ++it) {
      const int idx = min(32 * it + lane, kItems - 1), ci = idx / S::H, q = idx - ci * S::H, c = warp + kWarps * ci;
      const int j = q < S::P ? q : kTT + q;  // gv index; t = t0 - P + j
      silu_terms<K, D>(xs + c * S::XW + S::SX + j, ws + c * K, ws[kRows * K + c], hv[it], hs[it], ha[it], hslow);
    }
    if (hslow) {
#pragma unroll
      for (int it = 0; it < kHalo; ++it) hs[it] = 1.0f / (1.0f + expf(-hv[it]));
    }
#pragma unroll
    for (int it = 0; it < kHalo; ++it) {
      const int idx = 32 * it + lane, ci = idx / S::H, q = idx - ci * S::H, c = warp + kWarps * ci;
      const int j = q < S::P ? q : kTT + q;
      float* gr = gs + c * S::GW + S::SG + j;
      if (kItems % 32 == 0 || idx < kItems)  // (the last pass's spare lanes computed a copy of the last item)
        *gr = rowf4::in_row(t0 - S::P + j, T) ? *gr * hs[it] * (1.0f + hv[it] * (1.0f - hs[it])) : 0.0f;
    }
    fence_proxy_async();  // the rounded gy and act -> visible to wgmma (and to the TMA that refills the stage)
    __syncthreads();      // every warp's gv and act of tile i written; tile i - 1's stage free (its wgmmas waited for)
    if (tid == 0 && i >= 1 && i - 1 + stages < n) issue(i - 1 + stages);
    const uint32_t a_addr = base + 2 * kOpBytes + s * S::kStageBytes + (wg >> 1) * 64 * 128,
                   b_addr = base + (i & 1) * kOpBytes + (wg & 1) * 64 * 128;
    wg_fence_regs(d);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < kTT / 8; ++ks)
      Wgmma<64, float>::mma(d[0], wg_desc(a_addr + 32 * ks), wg_desc(b_addr + 32 * ks), 1);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    wg_fence_regs(d);
    // dx[t0 + lane] = sum_k w[k] gv[t0 + lane + P - k D] (gv index lane + H - k D), while the wgmmas run: code
    // without calls (ptxas serializes wgmmas left in flight across a call, as an IEEE division's slow path is)
    if (a.dx && own) {
#pragma unroll
      for (int ci = 0; ci < kCPW; ++ci) {
        const int c = warp + kWarps * ci;
        const float* gr = gs + c * S::GW + S::SG + S::H + lane;
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k < K; ++k) acc = fmaf(ws[c * K + k], gr[-k * D], acc);
        if (c < C) a.dx[(static_cast<int64_t>(b) * C + c) * T + t0 + lane] = acc;
      }
    }
    wg_wait<0>();  // this warpgroup's wgmmas of tile i done: after the next barrier, every warpgroup's are
    wg_fence_regs(d);
  }
  wg_wait<0>();
  wg_fence_regs(d);
  // dW_pw's partial: rows 64 (wg / 2) + 16 (warp % 4) + lane / 4 (+8), columns 64 (wg % 2) + 8 j + 2 (lane % 4) (+1)
  // in d[4 j + ..]
  float* pw = partial_w + blk * C_out * static_cast<int64_t>(C);
  const int o0 = 64 * (wg >> 1) + 16 * (warp & 3) + (lane >> 2);
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const int c = 64 * (wg & 1) + 8 * j + 2 * (lane & 3);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int o = o0 + 8 * h;
      if (o >= C_out) continue;
      float* dst = pw + static_cast<int64_t>(o) * C + c;
      if (c < C) dst[0] = d[0][4 * j + 2 * h];
      if (c + 1 < C) dst[1] = d[0][4 * j + 2 * h + 1];
    }
  }
  // db_pw's partial: a row's 8 units are 8 consecutive lanes; their sums meet by fixed-order shuffles
#pragma unroll
  for (int k = 0; k < kUnits; ++k) {
    float x = dbs[k];
    x += __shfl_xor_sync(0xffffffffu, x, 1);
    x += __shfl_xor_sync(0xffffffffu, x, 2);
    x += __shfl_xor_sync(0xffffffffu, x, 4);
    const int r = tid / 8 + (kThreads / 8) * k;
    if (a.partial_pw && (tid & 7) == 0 && r < C_out) a.partial_pw[static_cast<int64_t>(r) * G + blk] = x;
  }
  // dW_dw's and db_dw's partials: partial[(c (K + 1) + k) G + blk]
#pragma unroll
  for (int ci = 0; ci < kCPW; ++ci) {
    const int c = warp + kWarps * ci;
#pragma unroll
    for (int k = 0; k <= K; ++k) {
      const float t = wred::warp_sum(sums[ci][k]);
      if (lane == 0 && c < C) a.partial[(static_cast<int64_t>(c) * (K + 1) + k) * G + blk] = t;
    }
  }
#endif
}

template <int K, int D>
void launch(const DwBackwardArgs& a, float* partial_w, int64_t G, cudaStream_t stream) {
  using S = Shape<K, D>;
  const int stages = S::stages();
  const size_t smem = S::smem(stages);
  const CUtensorMap ymap = tma_map_rows_f32(a.gy, a.B, a.C_out, a.T, kTT, CU_TENSOR_MAP_SWIZZLE_128B),
                    xmap = tma_map_rows_f32(a.x, a.B, a.C, a.T, S::XW, CU_TENSOR_MAP_SWIZZLE_NONE),
                    gmap = tma_map_rows_f32(a.ga, a.B, a.C, a.T, S::GW, CU_TENSOR_MAP_SWIZZLE_NONE);
  cudaError_t err = cudaFuncSetAttribute(dw_wgrad_kernel<K, D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  if (err == cudaSuccess) {
    dw_wgrad_kernel<K, D><<<static_cast<unsigned>(G), kThreads, smem, stream>>>(ymap, xmap, gmap, a, partial_w,
                                                                                stages);
    err = cudaGetLastError();
  }
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("dw_silu_wgrad_fused: launch failed: ") + cudaGetErrorString(err));
}

}  // namespace dwwg

bool dw_wgrad_fused_fits(const DwBackwardArgs& a) {
#ifdef FUSED_SM90A
  bool compiled = false;
#define DWWG_COMPILED(KK, DD) \
  compiled = compiled || (a.K == KK && a.dilation == DD && dwwg::Shape<KK, DD>::stages() >= 2);
  DWWG_SHAPES(DWWG_COMPILED)
#undef DWWG_COMPILED
  return gpu_compute_capability() == 90 && compiled && a.ga && a.gy && !a.w_pw && !a.act && a.B >= 1 && a.T >= 1 &&
         a.T <= 0x7fffffff - 1024 && a.B * ((a.T + dwwg::kTT - 1) / dwwg::kTT) <= 0x7fffffff && a.C >= kTcMinC &&
         a.C <= dwwg::kRows && a.C_out >= kTcMinC && a.C_out <= dwwg::kRows && dw_backward_vec_shape(a);
#else
  (void)a;
  return false;
#endif
}

int64_t dw_wgrad_fused_blocks(const DwBackwardArgs& a) { return blocks_per_sm_capped(a.B, a.T, dwwg::kTT); }

void dw_silu_wgrad_fused(const DwBackwardArgs& a, float* partial_w, int64_t G, void* stream) {
  if (!dw_wgrad_fused_fits(a) || !partial_w || !a.partial)
    throw std::runtime_error("dw_silu_wgrad_fused: not built for sm_90a, no partials, or shape outside its limits");
  if (G < 1) return;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
#define DWWG_LAUNCH(KK, DD)                          \
  if (a.K == KK && a.dilation == DD) {                \
    dwwg::launch<KK, DD>(a, partial_w, G, s);         \
    return;                                           \
  }
  DWWG_SHAPES(DWWG_LAUNCH)
#undef DWWG_LAUNCH
}
