// dw_silu_backward.cu: the depthwise + SiLU half of the backward in one kernel (contract: dw_backward_args.h).
// Rungs 3 and 4 of the backward ladder: rung 4 (the vector path, below rung 3's kernel) takes odd spans, rows of
// whole float4s and compiled (K, dilation) pairs; rung 3's kernel takes every other shape. What follows describes
// rung 3; rung 4's own header is above its kernel.
// Eager runs this half as five kernels over HBM: the forward's depthwise and SiLU again (v, act), silu_backward
// (gv), then the depthwise's convolution_backward (dx, and a weight-gradient kernel that reduces over B*T); and
// the 1x1 conv's bias gradient as one more reduction over dy. Here one block owns a (b, c) row and a tile of
// kTile = 1024 time steps: it stages x (with a (K-1)*dilation halo each side) and ga in shared memory,
// recomputes v, writes act (the 1x1 conv's weight gradient reads it: the recompute kernel of rung 2 is gone),
// forms gv in shared memory (with the halo the transposed depthwise needs), writes dx, and reduces gv*x and gv
// into K+1 partial sums; it also sums dy's row (b, c) (and rows (b, c + C), (b, c + 2C), .. where C_out > C)
// for the 1x1 conv's bias, its loads in flight with x's and ga's. dw_backward_finish sums the partials.
// Bytes at the headline: read x, ga, dy, write dx, act: 84 MB.
//
// What changed from rung 2 (git history): rung 2 ran at several times its byte time and left three jobs to other
// kernels.
// Now: the activations are written here instead of recomputed by a second kernel (rung 2's recompute read x
// again), dy's row sums replace PyTorch's bias reduction, one small kernel finishes every reduction (rung 2:
// torch.sum plus copies). And fewer instructions per output, which bound it: the taps a compile-time constant for
// K in {3, 4, 5, 7} (weights in registers, loops unrolled; other K take the runtime loops), the K+1
// weight-gradient sums taken from the very taps v was made of (no second pass over shared memory), 32-bit
// in-row index math, a (C, tiles, B) grid so that no block divides to find its row, 1024-step tiles (several waves
// at the headline, so that blocks drift out of phase and loads overlap other blocks' arithmetic).
// Prediction: memory-bound at the headline, 84 MB at the copy rate, faster than rung 2, its recompute and
// PyTorch's bias reduction together. Outcome: faster than those three, still bound by instruction issue, not
// bytes (docs/results.md, docs/ladder.md: the measurements, the prediction's figures and ncu).
// Numerics: v as eager's depthwise (bias first, taps in order, fmaf), act = v / (1 + exp(-v)) as aten's SiLU,
// sigmoid = 1 / (1 + exp(-v)) and gv = ga * s * (1 + v * (1 - s)) as aten's silu_backward: act and gv equal
// eager's bit for bit. dx sums its taps in the order aten's depthwise backward does; the weight gradients and
// db_pw sum in another order than cuDNN/aten: within float32 rounding of eager's. Deterministic (no atomics;
// fixed-order sums).
// Limits: float32 only (16-bit training keeps eager's backward ops); padding <= (K-1)*dilation <= 1024 (else
// eager's ops).
#include <cuda_runtime.h>
#include <cstdint>
#include <stdexcept>
#include <string>
#include "dw_backward_args.h"
#include "pdl.cuh"      // griddep_wait, launch_maybe_dependent
#include "row_float4.cuh"
#include "row_window.cuh"
#include "warp_reduce.cuh"

namespace dwbw {

constexpr int kThreads = 256, kPer = 4, kTile = kThreads * kPer, kMaxHalo = 1024, kWarps = kThreads / 32;
constexpr int kFinishThreads = 128;
constexpr int64_t kMaxRow = 0x7fffffff - 2 * kTile;  // in-row indices are 32-bit

// shared memory: the K weights, x over [t0 - halo, t0 + kTile + halo) (zero outside [0, T)), gv over
// [t_lo, t_lo + kTile + halo) with t_lo = t0 + padding - halo (zero outside [0, T_out)), then kWarps x (K + 1)
// per-warp partial sums and kWarps per-warp sums of a dy row.
inline size_t smem_bytes(int K, int halo) {
  return (static_cast<size_t>(K) + 2 * kTile + 3 * static_cast<size_t>(halo) + kWarps * (K + 2)) * sizeof(float);
}

using wred::warp_sum;

// The sum of src[0 .. n) in backward_finish's fixed order: strided by thread, then the lanes (warp_sum), then the
// block's warps in order. Every thread of a block of kFinishThreads calls it (red: kFinishThreads / 32 floats of
// shared memory); thread 0 gets the sum. backward_finish and rung 4's inline db_pw both sum this way, so their
// results are the same bits.
__device__ __forceinline__ float block_fixed_sum(const float* src, int64_t n, float* red) {
  const int tid = threadIdx.x;
  float s = 0.0f;
  for (int64_t j = tid; j < n; j += kFinishThreads) s += src[j];
  s = warp_sum(s);
  if ((tid & 31) == 0) red[tid >> 5] = s;
  __syncthreads();
  float t = 0.0f;
  if (tid == 0)
    for (int w = 0; w < kFinishThreads / 32; ++w) t += red[w];
  return t;
}

// This thread's share of a dy row's sum over the tile [t0, t0 + kTile) (for db_pw), loads issued before use.
struct GyShare {
  float v[kPer];
  __device__ __forceinline__ void load(const float* __restrict__ g, int t0, int len) {
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
      const int t = t0 + r * kThreads + static_cast<int>(threadIdx.x);
      v[r] = t < len ? __ldg(g + t) : 0.0f;
    }
  }
  __device__ __forceinline__ float sum() const {
    float s = 0.0f;
#pragma unroll
    for (int r = 0; r < kPer; ++r) s += v[r];
    return warp_sum(s);
  }
};

// Indices within a row are 32-bit (the host keeps T and T_out below 2^31 - 2 * kTile): row_float4.cuh.
using rowf4::in_row;
using rowf4::ldg4_in;
using rowf4::pack4;
using rowf4::unpack4;

// KT: the number of taps as a compile-time constant, or 0 for a runtime K (a.K).
template <int KT>
__global__ void __launch_bounds__(kThreads, 6) dw_silu_backward_kernel(DwBackwardArgs a) {
  extern __shared__ float smem[];
  const int tile = blockIdx.y, t0 = tile * kTile, T = static_cast<int>(a.T), T_out = static_cast<int>(a.T_out);
  const int K = KT > 0 ? KT : a.K, d = a.dilation, p = a.padding, halo = (K - 1) * d;
  float* ws = smem;
  float* xs = ws + K;
  float* gv_s = xs + kTile + 2 * halo;
  float* red = gv_s + kTile + halo;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t c = blockIdx.x, b = blockIdx.z, row = b * a.C + c;  // grid (C, tiles, B): no division
  const int t_lo = t0 + p - halo, x_lo = t0 - halo;
  for (int k = tid; k < K; k += kThreads) ws[k] = a.w_dw[c * K + k];
  // dy rows for db_pw: (b, o) for o = c, c + C, .. below C_out; the first one's loads fly with x's and ga's
  const int64_t n = static_cast<int64_t>(gridDim.y) * a.B;
  const bool gy_row = a.gy && c < a.C_out;
  GyShare gy;
  if (gy_row) gy.load(a.gy + (b * a.C_out + c) * a.T_out, t0, T_out);
  // x and ga windows in one batch of loads (2 x (kPer + 1) in flight per thread): one memory latency per block.
  // row_window.cuh's RwBatch with 32-bit indices, x's and ga's loads interleaved (two RwBatch loads, one after
  // the other, compiled to 32 more instructions in its code: this kernel is issue-bound)
  const float* __restrict__ xr = a.x + row * a.T;
  const float* __restrict__ gr = a.ga + row * a.T_out;
  const int nx = kTile + 2 * halo, ng = kTile + halo;
  for (int base = 0; base < nx; base += kThreads * (kPer + 1)) {
    float vx[kPer + 1], vg[kPer + 1];
#pragma unroll
    for (int r = 0; r < kPer + 1; ++r) {
      const int i = base + r * kThreads + tid;
      vx[r] = i < nx && in_row(x_lo + i, T) ? __ldg(xr + x_lo + i) : 0.0f;
      vg[r] = i < ng && in_row(t_lo + i, T_out) ? __ldg(gr + t_lo + i) : 0.0f;
    }
#pragma unroll
    for (int r = 0; r < kPer + 1; ++r) {
      const int i = base + r * kThreads + tid;
      if (i < nx) xs[i] = vx[r];
      if (i < ng) gv_s[i] = vg[r];
    }
  }
  float* red_gy = red + kWarps * (K + 1);
  if (gy_row) {  // the dy row's loads have landed with x's and ga's: its registers are free from here
    const float s = gy.sum();
    if (lane == 0) red_gy[warp] = s;
  }
  const float bias = a.b_dw ? a.b_dw[c] : 0.0f;
  __syncthreads();
  float wr[KT > 0 ? KT : 1];  // the taps in registers where K is a compile-time constant
  if constexpr (KT > 0) {
#pragma unroll
    for (int k = 0; k < KT; ++k) wr[k] = ws[k];
  }
  auto w = [&](int k) -> float {
    if constexpr (KT > 0) return wr[k]; else return ws[k];
  };
  // gv[t] for t = t_lo + i, in place over the staged ga: v from x[t - p + k*d], whose xs index is i + k*d;
  // act[t] for the t this tile owns, [t0, t0 + kTile): i in [halo - p, halo - p + kTile). Where K is a
  // compile-time constant, the K+1 weight-gradient sums of an owned t are taken here too: dW_dw[k] sums
  // gv[t] * x[t - p + k*d], the very taps v[t] was made of (already in registers).
  float* actr = a.act ? a.act + row * a.T_out : nullptr;
  float sums[(KT > 0 ? KT : 0) + 1];
#pragma unroll
  for (int k = 0; k < (KT > 0 ? KT : 0) + 1; ++k) sums[k] = 0.0f;
  auto gv_at = [&](int i) {
    const int t = t_lo + i;
    float g = 0.0f;
    if (in_row(t, T_out)) {
      float xk[KT > 0 ? KT : 1];
      float v = bias;
      if constexpr (KT > 0) {
#pragma unroll
        for (int k = 0; k < KT; ++k) {
          xk[k] = xs[i + k * d];
          v = fmaf(wr[k], xk[k], v);
        }
      } else {
        for (int k = 0; k < K; ++k) v = fmaf(ws[k], xs[i + k * d], v);
      }
      const float e = expf(-v);
      const float s = 1.0f / (1.0f + e);
      g = gv_s[i] * s * (1.0f + v * (1.0f - s));
      if (in_row(t - t0, kTile)) {  // a t this tile owns
        if (actr) actr[t] = v / (1.0f + e);
        if constexpr (KT > 0) {
#pragma unroll
          for (int k = 0; k < KT; ++k) sums[k] = fmaf(g, xk[k], sums[k]);
          sums[KT] += g;
        }
      }
    }
    gv_s[i] = g;
  };
#pragma unroll
  for (int r = 0; r < kPer; ++r) gv_at(r * kThreads + tid);  // unrolled: kPer independent exp/divide chains
  for (int i = kTile + tid; i < ng; i += kThreads) gv_at(i);  // the halo
  if constexpr (KT > 0) {
#pragma unroll
    for (int k = 0; k <= KT; ++k) {
      const float s = warp_sum(sums[k]);
      if (lane == 0) red[warp * (K + 1) + k] = s;
    }
  }
  __syncthreads();
  // dx[t'] = sum_k w[k] * gv[t' + p - k*d]: gv_s index (t' - t0) + halo - k*d
  if (a.dx) {
    float* dxr = a.dx + row * a.T + t0;
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
      const int i = r * kThreads + tid;
      if (t0 + i < T) {
        float acc = 0.0f;
#pragma unroll
        for (int k = 0; k < K; ++k) acc = fmaf(w(k), gv_s[i + halo - k * d], acc);
        dxr[i] = acc;
      }
    }
  }
  // runtime K: the K+1 partial sums over the gv this tile owns, t in [t0, t0 + kTile): gv_s index i + halo - p,
  // and x[t - p + k*d] at xs index i + halo - p + k*d, one pass per k.
  if constexpr (KT == 0) {
    const float* gv_own = gv_s + halo - p;
    const float* xs_own = xs + halo - p;
    for (int k = 0; k <= K; ++k) {
      float sum = 0.0f;
#pragma unroll
      for (int r = 0; r < kPer; ++r) {
        const int i = r * kThreads + tid;
        if (t0 + i < T_out) {
          const float g = gv_own[i];
          sum = k == K ? sum + g : fmaf(g, xs_own[i + k * d], sum);
        }
      }
      sum = warp_sum(sum);
      if (lane == 0) red[warp * (K + 1) + k] = sum;
    }
  }
  __syncthreads();
  for (int k = tid; k <= K; k += kThreads) {
    float s = 0.0f;
    for (int wi = 0; wi < kWarps; ++wi) s += red[wi * (K + 1) + k];
    a.partial[(c * (K + 1) + k) * n + tile * a.B + b] = s;
  }
  // dy row (b, o): partial_pw[o * n + tile * B + b]
  auto write_gy = [&](int64_t o) {
    float s = 0.0f;
    for (int wi = 0; wi < kWarps; ++wi) s += red_gy[wi];
    a.partial_pw[o * n + tile * a.B + b] = s;
  };
  if (gy_row && tid == 0) write_gy(c);
  for (int64_t o = c + a.C; a.gy && o < a.C_out; o += a.C) {  // C_out > C: further rows, one at a time
    __syncthreads();  // red_gy is read above
    gy.load(a.gy + (b * a.C_out + o) * a.T_out, t0, T_out);
    const float s = gy.sum();
    if (lane == 0) red_gy[warp] = s;
    __syncthreads();
    if (tid == 0) write_gy(o);
  }
}

// ---- Rung 4: the vector path (odd spans: halo = (K-1)*dilation even, 'same' padding halo/2, T % 4 == 0) ----
// Rung 3 is bound by instruction issue (ncu at 3aeb90c), most of its instructions not arithmetic: per-element
// bounds checks and 64-bit addresses in the staging loop, runtime tap offsets, ga and gv round trips through
// shared memory, K+1 warp reductions per 4 outputs. Here each thread owns kVecSteps consecutive steps and K and the
// dilation are compile-time constants, so every index below is a register plus an immediate:
//   - x's window (kVecSteps + halo steps) comes straight from global memory as float4s (L1 serves the overlap
//     between neighbouring threads), each float4 wholly inside or outside the row (T % 4 == 0): one predicate each;
//   - ga and dy are read where they are used, as float4s, never staged;
//   - v, the SiLU terms, act and gv from registers; the K+1 weight-gradient sums from the same registers; gv to
//     shared memory as float4s, then one barrier; dx from a window of float4s of gv, stored as float4s;
//   - the K+1 sums and dy's row sum leave the warp by one reduce-scatter (9 shuffles for 8 sums, not 35);
//   - the gv past the tile (the halo the transposed depthwise needs) one step per thread of the last warp, so
//     that no warp of the block carries a second group while the others wait at the barrier.
// Same numerics as rung 3 (the same expressions in the same order: act and gv eager's bits, dx's taps in aten's
// order); the weight-gradient and bias sums in another fixed order (deterministic, within float32 rounding).
// Prediction: about a quarter of rung 3's instructions per output, so memory-bound at the copy rate.
// Outcome: the instructions fell by half, not three quarters (the IEEE divisions' range checks and branches, the
// per-thread setup), and the kernel became latency-bound rather than memory-bound: faster than rung 3, short of
// the copy rate. Each form, its prediction and its measurement: docs/ladder.md ("backward rung 4").
// Limits: compile-time (K, dilation) pairs in DWBW_VEC_SHAPES, T % 4 == 0, 16-byte aligned tensors, float32;
// other shapes take rung 3's kernel above.
// Inline sums (backward="dgrad_kernel" where no deterministic algorithms are asked for: eager_autograd.h,
// dgrad_inline_backward): the block's K + 1 sums go into dW_dw and db_dw by atomicAdd (rung 10 zeroed them) and the
// first C_out blocks sum rung 10's db_pw partials in backward_finish's order (block_fixed_sum), so backward_finish is
// not launched; the kernel is then a programmatic dependent of rung 10 (griddep_wait first: pdl.cuh). Only dW_dw and
// db_dw change bits from run to run (the atomics' order). Measured: the headline's backward 58.11 against 62.26 us
// with the finish (interleaved; logs/2026-12-04_d3d6ebb_inline_sums_ab_timeline_bench_train.log).
// 128 threads per block, one group of kVecSteps steps each: rung 3's 1024-step tiles (and its partials' layout)
constexpr int kVecSteps = 8, kVecThreads = kTile / kVecSteps, kVecWarps = kVecThreads / 32;
static_assert(kVecThreads * kVecSteps == kTile && kVecThreads % 32 == 0, "one group of steps per thread");

template <int K, int D>
struct VecShape {
  static constexpr int halo = (K - 1) * D, lead = halo - halo / 2;  // lead: gv steps before the tile's first
  static constexpr int G = kVecSteps, G4 = G / 4;
  // the steps by which the x and ga windows start before the first they need: back to a 16-byte boundary
  static constexpr int sx = (4 - halo % 4) % 4, sg = (4 - lead % 4) % 4;
  static constexpr int nx = (sx + G + halo + 3) / 4, ng = (sg + G + 3) / 4, nd = (G + halo + 3) / 4;
  // gv past the tile: halo4 steps (the dx windows read whole float4s), one step each for the last halo4 threads
  static constexpr int halo4 = (halo + 3) / 4 * 4, tail4 = halo4 / 4;
  static_assert(halo4 <= kVecThreads, "one tail step per thread");
  static constexpr int nsum = K + 2;               // K weight sums, the depthwise bias, dy's row
  static constexpr int npow = nsum <= 8 ? 8 : 16;  // padded for the reduce-scatter
};


// Sums N values (a power of two, 8 or 16) over the warp: each step halves the values a lane holds, trading the
// half it gives away with its partner (lane ^ 16, ^ 8, ..); then plain butterflies over the remaining lane bits.
// Returns the full sum of the value with index `idx` (set here): every lane ends with one sum, lanes that differ
// only in the low bits hold the same one.
template <int N>
__device__ __forceinline__ float warp_reduce_scatter(float (&v)[N], int lane, int& idx) {
  idx = 0;
  int off = 16;
#pragma unroll
  for (int half = N / 2; half >= 1; half /= 2, off /= 2) {
    const bool up = lane & off;
#pragma unroll
    for (int i = 0; i < half; ++i) {
      const float give = up ? v[i] : v[i + half], keep = up ? v[i + half] : v[i];
      v[i] = keep + __shfl_xor_sync(0xffffffffu, give, off);
    }
    if (up) idx += half;
  }
  float s = v[0];
#pragma unroll
  for (; off >= 1; off /= 2) s += __shfl_xor_sync(0xffffffffu, s, off);
  return s;
}

// GV: the gv form (a.gv_in, after backward rung 9): a.ga holds gv = dL/dv itself, so no SiLU terms are computed
// (v, act and the exponentials fall away; act and dy must not be asked for).
template <int K, int D, bool GV = false>
__global__ void __launch_bounds__(kVecThreads, VecShape<K, D>::halo > 16 ? 4 : 6)  // long spans: no spills
    dw_silu_backward_vec_kernel(DwBackwardArgs a) {
  using S = VecShape<K, D>;
  constexpr int G = S::G;
  __shared__ float4 gs4[kVecThreads * S::G4 + S::tail4];  // gv over t = t0 - lead + j
  __shared__ float red[kVecWarps * S::nsum];                // per-warp sums: K of dW_dw, db_dw, a dy row
  __shared__ float fin[kFinishThreads / 32];                // db_pw's inline sums (a.pw_partial)
  static_assert(kVecThreads == kFinishThreads, "db_pw's inline sums take backward_finish's block");
  griddep_wait();  // (a.dependent) the previous kernel's writes (ga) visible; nothing global touched before
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int t0 = blockIdx.y * kTile, T = static_cast<int>(a.T);  // T_out == T on this path
  const int64_t c = blockIdx.x, b = blockIdx.z, row = b * a.C + c, n = static_cast<int64_t>(gridDim.y) * a.B;
  const float* __restrict__ xr = a.x + row * a.T;
  const float* __restrict__ gr = a.ga + row * a.T;
  float* actr = a.act ? a.act + row * a.T : nullptr;
  float w[K];
#pragma unroll
  for (int k = 0; k < K; ++k) w[k] = __ldg(a.w_dw + c * K + k);
  const float bias = a.b_dw ? __ldg(a.b_dw + c) : 0.0f;
  const bool gy_row = a.gy && c < a.C_out;
  float sums[S::npow];
#pragma unroll
  for (int k = 0; k < S::npow; ++k) sums[k] = 0.0f;
  if (gy_row) {
#pragma unroll
    for (int m = 0; m < S::G4; ++m) {
      const float4 q = ldg4_in(a.gy + (b * a.C_out + c) * a.T, t0 + G * tid + 4 * m, T);
      sums[K + 1] += (q.x + q.y) + (q.z + q.w);
    }
  }
  // gv (and act, and the sums of the steps this tile owns) for the G steps j = G g .. G g + G - 1 (t = t0 - lead + j)
  auto group = [&](int g) {
    const int j0 = G * g, xb = t0 - S::halo + j0 - S::sx, gb = t0 - S::lead + j0 - S::sg;
    float xw[4 * S::nx], gw[4 * S::ng];
#pragma unroll
    for (int m = 0; m < S::nx; ++m) unpack4(xw + 4 * m, ldg4_in(xr, xb + 4 * m, T));
#pragma unroll
    for (int m = 0; m < S::ng; ++m) unpack4(gw + 4 * m, ldg4_in(gr, gb + 4 * m, T));
    float gv[G], act[G];
    bool own[G];
#pragma unroll
    for (int e = 0; e < G; ++e) {
      const int j = j0 + e, t = t0 - S::lead + j;
      float v = bias;
#pragma unroll
      for (int k = 0; k < K; ++k) v = fmaf(w[k], xw[S::sx + e + k * D], v);
      const float ex = expf(-v);
      const float s = 1.0f / (1.0f + ex);
      const bool valid = in_row(t, T);
      const float gval = !valid ? 0.0f : GV ? gw[S::sg + e] : gw[S::sg + e] * s * (1.0f + v * (1.0f - s));
      own[e] = valid && in_row(j - S::lead, kTile);
      const float go = own[e] ? gval : 0.0f;
#pragma unroll
      for (int k = 0; k < K; ++k) sums[k] = fmaf(go, xw[S::sx + e + k * D], sums[k]);
      sums[K] += go;
      gv[e] = gval;
      if (actr) act[e] = v / (1.0f + ex);
    }
#pragma unroll
    for (int m = 0; m < S::G4; ++m) gs4[g * S::G4 + m] = pack4(gv + 4 * m);
    if (actr) {
      const int ta = t0 - S::lead + j0;
      if constexpr (S::sg == 0) {  // 4 steps from a 16-byte boundary: owned together or not at all
#pragma unroll
        for (int m = 0; m < S::G4; ++m)
          if (own[4 * m]) *reinterpret_cast<float4*>(actr + ta + 4 * m) = pack4(act + 4 * m);
      } else {
#pragma unroll
        for (int e = 0; e < G; ++e)
          if (own[e]) actr[ta + e] = act[e];
      }
    }
  };
  group(tid);
  // the tail, j in [kTile, kTile + halo4): one step for each of the last halo4 threads (rung 4's first forms gave
  // whole groups to warp 0, which doubled its work while the other warps waited at the barrier: ncu at 998c858)
  if (tid >= kVecThreads - S::halo4) {
    const int j = kTile + tid - (kVecThreads - S::halo4), t = t0 - S::lead + j;
    float xk[K], v = bias;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int tx = t0 - S::halo + j + k * D;
      xk[k] = in_row(tx, T) ? __ldg(xr + tx) : 0.0f;
      v = fmaf(w[k], xk[k], v);
    }
    const float ex = expf(-v);
    const float s = 1.0f / (1.0f + ex);
    const bool valid = in_row(t, T), own = valid && in_row(j - S::lead, kTile);
    const float gval = !valid ? 0.0f : GV ? __ldg(gr + t) : __ldg(gr + t) * s * (1.0f + v * (1.0f - s));
    if (own) {
#pragma unroll
      for (int k = 0; k < K; ++k) sums[k] = fmaf(gval, xk[k], sums[k]);
      sums[K] += gval;
      if (actr) actr[t] = v / (1.0f + ex);
    }
    reinterpret_cast<float*>(gs4)[j] = gval;
  }
  int idx;
  const float s = warp_reduce_scatter<S::npow>(sums, lane, idx);
  if ((lane & (32 / S::npow - 1)) == 0 && idx < S::nsum) red[warp * S::nsum + idx] = s;
  __syncthreads();
  // dx[t'] = sum_k w[k] * gv[t' + padding - k * D] for t' = t0 + G tid + e: gs index G tid + e + halo - k * D
  if (a.dx && t0 + G * tid < T) {
    float gw[4 * S::nd];
#pragma unroll
    for (int m = 0; m < S::nd; ++m) unpack4(gw + 4 * m, gs4[S::G4 * tid + m]);
    float dx[G];
#pragma unroll
    for (int e = 0; e < G; ++e) {
      float acc = 0.0f;
#pragma unroll
      for (int k = 0; k < K; ++k) acc = fmaf(w[k], gw[e + S::halo - k * D], acc);
      dx[e] = acc;
    }
    float* dxr = a.dx + row * a.T + t0 + G * tid;
#pragma unroll
    for (int m = 0; m < S::G4; ++m)  // T % 4 == 0: each float4 wholly inside the row or outside
      if (t0 + G * tid + 4 * m < T) *reinterpret_cast<float4*>(dxr + 4 * m) = pack4(dx + 4 * m);
  }
  const int tile = blockIdx.y;
  if (tid <= K) {
    float r = 0.0f;
    for (int wi = 0; wi < kVecWarps; ++wi) r += red[wi * S::nsum + tid];
    if (a.sums_w) {  // inline: into dW_dw and db_dw, zeroed before the launch
      if (tid < K) atomicAdd(a.sums_w + c * K + tid, r);
      else if (a.sums_b) atomicAdd(a.sums_b + c, r);
    } else
      a.partial[(c * (K + 1) + tid) * n + tile * a.B + b] = r;
  }
  if (a.pw_partial) {  // db_pw's row o = this block's linear index, in backward_finish's order (a block-uniform test)
    const int64_t o = blockIdx.x + static_cast<int64_t>(gridDim.x) * (blockIdx.y + static_cast<int64_t>(gridDim.y) *
                                                                                        blockIdx.z);
    if (o < a.C_out) {
      const float t = block_fixed_sum(a.pw_partial + o * a.n_pw, a.n_pw, fin);
      if (tid == 0) a.db_pw[o] = t;
    }
  }
  if (gy_row && tid == kVecThreads - 1) {
    float r = 0.0f;
    for (int wi = 0; wi < kVecWarps; ++wi) r += red[wi * S::nsum + K + 1];
    a.partial_pw[c * n + tile * a.B + b] = r;
  }
  for (int64_t o = c + a.C; a.gy && o < a.C_out; o += a.C) {  // C_out > C: further dy rows, one at a time
    __syncthreads();  // red's dy slots are read above
    float q = 0.0f;
#pragma unroll
    for (int m = 0; m < S::G4; ++m) {
      const float4 y = ldg4_in(a.gy + (b * a.C_out + o) * a.T, t0 + G * tid + 4 * m, T);
      q += (y.x + y.y) + (y.z + y.w);
    }
    q = warp_sum(q);
    if (lane == 0) red[warp * S::nsum + K + 1] = q;
    __syncthreads();
    if (tid == 0) {
      float r = 0.0f;
      for (int wi = 0; wi < kVecWarps; ++wi) r += red[wi * S::nsum + K + 1];
      a.partial_pw[o * n + tile * a.B + b] = r;
    }
  }
}

inline bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Whether the vector path can take these args (besides dw_backward_fits and a compiled (K, dilation), which the
// launch checks): 'same' padding of an even span (T_out == T), rows of whole float4s, 16-byte aligned tensors.
inline bool vec_path(const DwBackwardArgs& a) {
  const int halo = (a.K - 1) * a.dilation;
  return halo % 2 == 0 && a.padding == halo / 2 && a.T == a.T_out && a.T % 4 == 0 && aligned16(a.x) &&
         aligned16(a.ga) && (!a.gy || aligned16(a.gy)) && (!a.dx || aligned16(a.dx)) && (!a.act || aligned16(a.act));
}

// One block per output of the first two kinds (C * (K + 1) depthwise weight-gradient sums, then C_out bias sums of
// dy): its n partials summed strided by thread, then across the block in a fixed order. Then blocks of 32 dW_pw
// outputs (rung 6's partials): thread (slice s, output j) sums partials s, s + 4, .. of output j (loads coalesced
// across j), then the four slices are added in order.
__global__ void __launch_bounds__(kFinishThreads) backward_finish_kernel(BackwardSums a) {
  __shared__ float red[kFinishThreads];
  const int64_t dw_outs = a.partial ? a.C * (a.K + 1) : 0, pw_outs = a.partial_pw ? a.C_out : 0;
  const int64_t out = blockIdx.x;
  const int tid = threadIdx.x;
  if (out < dw_outs + pw_outs) {
    const bool dw = out < dw_outs;
    const float* src = dw ? a.partial + out * a.n : a.partial_pw + (out - dw_outs) * a.n_pw;
    const float t = block_fixed_sum(src, dw ? a.n : a.n_pw, red);
    if (tid != 0) return;
    if (!dw) {
      a.db_pw[out - dw_outs] = t;
    } else if (out % (a.K + 1) < a.K) {
      a.dw_dw[(out / (a.K + 1)) * a.K + out % (a.K + 1)] = t;
    } else if (a.db_dw) {
      a.db_dw[out / (a.K + 1)] = t;
    }
    return;
  }
  constexpr int kSlices = kFinishThreads / 32;
  const int64_t outs = a.C_out * a.C_in, j = (out - dw_outs - pw_outs) * 32 + (tid & 31);
  const int slice = tid >> 5;
  float s = 0.0f;
  if (j < outs)
    for (int64_t p = slice; p < a.n_w; p += kSlices) s += a.partial_w[p * outs + j];
  red[tid] = s;
  __syncthreads();
  if (slice != 0 || j >= outs) return;
  float t = 0.0f;
  for (int k = 0; k < kSlices; ++k) t += red[k * 32 + (tid & 31)];
  a.dw_pw[j] = t;
}

}  // namespace dwbw

int64_t dw_backward_tiles(const DwBackwardArgs& a) {
  const int64_t n = a.T > a.T_out ? a.T : a.T_out, tile = a.w_pw ? kTcTile : dwbw::kTile;
  return (n + tile - 1) / tile;
}

bool dw_backward_vec_shape(const DwBackwardArgs& a) {
  bool compiled = false;
#define DWBW_VEC_COMPILED(KK, DD) compiled = compiled || (a.K == KK && a.dilation == DD);
  DWBW_VEC_SHAPES(DWBW_VEC_COMPILED)
#undef DWBW_VEC_COMPILED
  return compiled && dwbw::vec_path(a);
}

bool dw_backward_sums_inline(const DwBackwardArgs& a) {
  return !a.gv_in && !a.gy && dw_backward_vec_shape(a) && a.C_out <= a.C * dw_backward_tiles(a) * a.B;
}

bool dw_backward_fits(int64_t B, int64_t C, int64_t T, int64_t T_out, int K, int dilation, int padding) {
  const int64_t halo = static_cast<int64_t>(K - 1) * dilation, n = T > T_out ? T : T_out;
  // B * C: the recompute's grid
  return padding <= halo && halo <= dwbw::kMaxHalo && B <= 65535 && B * C <= 0x7fffffff &&
         (n + dwbw::kTile - 1) / dwbw::kTile <= 65535 && T <= dwbw::kMaxRow && T_out <= dwbw::kMaxRow;
}

void dw_silu_backward(const DwBackwardArgs& a, void* stream) {
  if (!dw_backward_fits(a.B, a.C, a.T, a.T_out, a.K, a.dilation, a.padding))
    throw std::runtime_error("dw_silu_backward: shape outside the kernel's limits (dw_backward_fits)");
  if ((a.sums_w || a.pw_partial) && !dw_backward_sums_inline(a))
    throw std::runtime_error("dw_silu_backward: inline sums outside rung 4's vector shapes (dw_backward_sums_inline)");
  const int64_t halo = static_cast<int64_t>(a.K - 1) * a.dilation, tiles = dw_backward_tiles(a);
  const dim3 grid(static_cast<unsigned>(a.C), static_cast<unsigned>(tiles), static_cast<unsigned>(a.B));
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (a.gv_in) {  // the gv form: rung 4 only, at rung 9's shapes
    if (!dwbw::vec_path(a) || a.act || a.gy)
      throw std::runtime_error("dw_silu_backward: the gv form takes rung 4's vector shapes, no act and no dy");
#define DWBW_GV_LAUNCH(KK, DD)                                                                 \
  if (a.K == KK && a.dilation == DD) {                                                          \
    dwbw::dw_silu_backward_vec_kernel<KK, DD, true><<<grid, dwbw::kVecThreads, 0, s>>>(a);      \
    return;                                                                                     \
  }
    DWBW_GV_SHAPES(DWBW_GV_LAUNCH)
#undef DWBW_GV_LAUNCH
    throw std::runtime_error("dw_silu_backward: the gv form is not compiled for this (K, dilation)");
  }
  if (dwbw::vec_path(a)) {  // a compiled (K, dilation) launches rung 4 and returns; others fall through to rung 3
#define DWBW_VEC_LAUNCH(KK, DD)                                                                                \
  if (a.K == KK && a.dilation == DD) {                                                                          \
    const cudaError_t err = launch_maybe_dependent(dwbw::dw_silu_backward_vec_kernel<KK, DD>, grid,             \
                                                   dim3(dwbw::kVecThreads), 0, s, a.dependent, a);              \
    if (err != cudaSuccess)                                                                                     \
      throw std::runtime_error(std::string("dw_silu_backward: launch failed: ") + cudaGetErrorString(err));    \
    return;                                                                                                     \
  }
    DWBW_VEC_SHAPES(DWBW_VEC_LAUNCH)
#undef DWBW_VEC_LAUNCH
  }
  const size_t smem = dwbw::smem_bytes(a.K, static_cast<int>(halo));
  switch (a.K) {
    case 3: dwbw::dw_silu_backward_kernel<3><<<grid, dwbw::kThreads, smem, s>>>(a); break;
    case 4: dwbw::dw_silu_backward_kernel<4><<<grid, dwbw::kThreads, smem, s>>>(a); break;
    case 5: dwbw::dw_silu_backward_kernel<5><<<grid, dwbw::kThreads, smem, s>>>(a); break;
    case 7: dwbw::dw_silu_backward_kernel<7><<<grid, dwbw::kThreads, smem, s>>>(a); break;
    default: dwbw::dw_silu_backward_kernel<0><<<grid, dwbw::kThreads, smem, s>>>(a); break;
  }
}

void backward_finish(const BackwardSums& s, void* stream) {
  const int64_t blocks = (s.partial ? s.C * (s.K + 1) : 0) + (s.partial_pw ? s.C_out : 0) +
                         (s.partial_w ? (s.C_out * s.C_in + 31) / 32 : 0);
  if (blocks > 0x7fffffff) throw std::runtime_error("backward_finish: shape exceeds the launch grid");
  if (blocks == 0) return;
  dwbw::backward_finish_kernel<<<static_cast<unsigned>(blocks), dwbw::kFinishThreads, 0,
                                 static_cast<cudaStream_t>(stream)>>>(s);
}

void dw_backward_finish(const DwBackwardArgs& a, float* dw_dw, float* db_dw, float* db_pw, void* stream) {
  BackwardSums s;
  s.partial = a.partial; s.n = dw_backward_tiles(a) * a.B; s.C = a.C; s.K = a.K; s.dw_dw = dw_dw; s.db_dw = db_dw;
  if (db_pw) { s.partial_pw = a.partial_pw; s.n_pw = s.n; s.C_out = a.C_out; s.db_pw = db_pw; }
  backward_finish(s, stream);
}

void dw_silu_forward(const DwBackwardArgs& a, float* act, void* stream) {
  const int64_t halo = static_cast<int64_t>(a.K - 1) * a.dilation;
  const int64_t tiles = (a.T_out + dwbw::kTile - 1) / dwbw::kTile;
  if (halo > dwbw::kMaxHalo || a.B * a.C > 0x7fffffff || tiles > 65535)
    throw std::runtime_error("dw_silu_forward: shape outside the backward kernel's limits");
  rw::rw_launch_dw_silu<dwbw::kThreads, dwbw::kPer>(a.x, a.w_dw, a.b_dw, act, a.B, static_cast<int>(a.C), a.T,
                                                    a.T_out, a.K, a.dilation, a.padding,
                                                    static_cast<cudaStream_t>(stream));
}
