// dw_silu_backward_tc.cu: backward rung 5, the 1x1 conv's data gradient on tensor cores with rung 4's body as its
// epilogue (contract: dw_backward_args.h). ModelNew's backward="fused"; not its default (it is slower, below).
// What it changes: rung 4 reads ga = dL/d act = W_pw^T dy from HBM, written there by cuDNN's data gradient (13.4 us
// at the headline, plus ga's 33.5 MB round trip). Here one block owns a batch row b and a tile of kTcTile = 64
// time steps of every channel: it stages dy over the tile and the halo the transposed depthwise needs (NJ columns,
// rounded to TF32 as cuDNN rounds its operands; the unrounded values feed db_pw's row sums) and, by cp.async, x
// over the tile and twice that halo; computes ga = W_pw^T dy on mma.sync TF32 (W_pw's fragments from L2, rounded
// the same way; fp32 accumulation) into shared memory over the staged dy; then rung 4's arithmetic, one channel
// per pair of threads: v recomputed from x, act written, gv in place over ga, the K+1 weight-gradient sums, then
// dx from gv's window.
// Bytes at the headline: read x and dy, write dx and act, 67 MB, against rung 4's 84 MB plus the data gradient's
// 33.5 MB.
// Prediction: the kernel near its 67 MB at the copy rate (~16 us) and at most ~20 us, in place of rung 4 (25.8) +
// cuDNN's data gradient (13.4): a training step near 75 us at the headline (~3.3x eager).
// Outcome: slower than what it replaces (docs/ladder.md, "backward rung 5", has each form's measurement). The
// kernel is bound by instruction issue and latency at 16 warps per SM (2 blocks: 127 registers, 90 KB of shared
// memory each): 150-160 instructions per output against rung 4's ~100 (ncu), rung 4's SiLU arithmetic (accurate exp,
// two IEEE divisions) plus the GEMM's operand loads, rounding and fragment traffic on mma.sync. A persistent form
// (one 512-thread block per SM, W_pw staged once, the next tile's copies in flight) measured the same and took
// fewer shapes: not kept.
// Numerics: ga sums its C_out products in another order than cuDNN's (both from RNE-rounded TF32 operands, fp32
// accumulation), so dx and the depthwise gradients may leave eager's bits, within TF32 summation order (1e-4 of
// the gradient's max); act and the SiLU terms are eager's expressions (rung 4's). Used only where
// torch.backends.cudnn.allow_tf32 is on (fusedkit.routing) and cuDNN's data gradient is a TF32 GEMM (C, C_out >=
// kTcMinC); with TF32 off, rung 4 after cuDNN's strict data gradient. Deterministic: fixed-order sums, no atomics.
// Limits: rung 4's vector shapes (odd span, 'same' padding, T % 4 == 0, 16-byte aligned, compiled (K, dilation)),
// kTcMinC <= C, C_out <= 128 (the GEMM pads both to 128), sm_80+. Other shapes take rungs 3 and 4.
#include <cuda_runtime.h>
#include <cstdint>
#include <stdexcept>
#include <string>
#include "common.cuh"     // tc_tf32: RNE rounding to TF32
#include "mma_sync.cuh"   // tc_mma_tf32
#include "cp_async.cuh"
#include "dw_backward_args.h"
#include "row_float4.cuh"
#include "gpu_props.h"  // gpu_compute_capability

namespace dwtc {

constexpr int kTT = kTcTile, kThreads = 256, kWarps = kThreads / 32;
constexpr int kMaxC = 128, kKSteps = kMaxC / 8;  // C and C_out padded to 128: 16 k-steps, 8 m-tiles of 16 rows
static_assert(kWarps * 16 == kMaxC, "one m-tile of 16 channels per warp");
static_assert(kThreads == 2 * kMaxC, "two threads stage each dy row");

template <int K, int D>
struct TcShape {
  static constexpr int halo = (K - 1) * D, h2 = halo / 2;      // 'same' padding h2 on each side
  static constexpr int lead4 = (h2 + 3) / 4 * 4;              // columns before the tile's first step (16-byte aligned)
  static constexpr int NJ = kTT + 2 * lead4;                  // staged columns: t = t0 - lead4 + col
  static constexpr int NT = NJ / 8, NF = NJ / 4, NH = NF / 2;  // n-tiles; float4s per row; per staging thread
  static constexpr int SJ = NJ + (40 - NJ % 32) % 32;          // row stride = 8 (mod 32): B fragments conflict-free
  static constexpr int sx = (4 - h2 % 4) % 4;                  // x window back to a 16-byte boundary
  static constexpr int nx = (sx + 4 + halo + 3) / 4;           // x float4s per 4 steps
  static constexpr int sd = lead4 - h2;                        // dx's gv window: from column 4q, offset sd
  static constexpr int nd = (sd + 4 + halo + 3) / 4;
  static constexpr int XL = (halo + 3) / 4 * 4;                // x staged over t0 - XL + xcol, xcol < NX
  static constexpr int NX = kTT + 2 * XL, NXF = NX / 4;        // (every x the tile's gv, halo included, reads)
  static constexpr int XS = NX + (40 - NX % 32) % 32;           // x's row stride = 8 (mod 32)
  static constexpr int x0 = XL - lead4;                        // owned step group q's x window: xcol 4q + x0
  static constexpr size_t smem_floats = static_cast<size_t>(kMaxC) * (SJ + XS);
  static_assert(NJ % 8 == 0 && SJ % 32 == 8 && SJ % 4 == 0, "tile shape");
  static_assert(4 * nd + kTT - 4 <= NJ, "dx's windows stay inside the staged columns");
  static_assert(x0 >= 0 && x0 % 4 == 0 && x0 + kTT - 4 + 4 * nx <= NX, "x windows inside the staged x");
};

using rowf4::in_row;
using rowf4::ldg4_in;
using rowf4::pack4;
using rowf4::unpack4;
// gv = ga * silu'(v), as aten's silu_backward (rung 4's expression)
__device__ __forceinline__ float silu_grad(float ga, float v, float s) { return ga * s * (1.0f + v * (1.0f - s)); }

// grid (tiles, B), 256 threads; dynamic shared memory kMaxC x (SJ + XS) floats.
template <int K, int D>
__global__ void __launch_bounds__(kThreads, 2) dw_silu_backward_tc_kernel(DwBackwardArgs a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // the host routes older GPUs elsewhere (dw_backward_tc_fits)
#else
  using S = TcShape<K, D>;
  extern __shared__ float4 smem4[];
  float* sm = reinterpret_cast<float*>(smem4);  // [kMaxC][SJ]: dy (TF32 bits), then ga, then gv in place; then x
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, q4 = lane & 3;
  const int tile = blockIdx.x, t0 = tile * kTT, s0 = t0 - S::lead4, T = static_cast<int>(a.T);
  const int C = static_cast<int>(a.C), C_out = static_cast<int>(a.C_out);
  const int64_t b = blockIdx.y, n = static_cast<int64_t>(gridDim.x) * a.B, part_col = tile * a.B + b;

  // 0. x over [t0 - XL, t0 + kTT + XL) for every channel, by cp.async (zero-filled outside [0, T)): in flight with dy's
  //    and W_pw's loads and the GEMM; the epilogue reads it from shared memory
  float* xs = sm + kMaxC * S::SJ;  // [kMaxC][XS]
  for (int it = tid; it < C * S::NXF; it += kThreads) {
    const int c = it / S::NXF, f = it % S::NXF, t = t0 - S::XL + 4 * f;
    const float* xr = a.x + (b * a.C + c) * a.T;
    cp_async_16(xs + c * S::XS + 4 * f, in_row(t, T) ? xr + t : xr, in_row(t, T) ? 16 : 0);
  }
  cp_async_commit();
  // 1. dy's columns [s0, s0 + NJ): row co = tid / 2, half hf = tid % 2 of its float4s; zero outside [0, T) and
  //    for co >= C_out (the GEMM's k dimension is padded to 128). Loads in flight with W_pw's below.
  const int co_s = tid >> 1, hf = tid & 1;
  const bool row_ok = co_s < C_out;
  const float* gyr = a.gy + (b * a.C_out + (row_ok ? co_s : 0)) * a.T;
  float4 dq[S::NH];
#pragma unroll
  for (int m = 0; m < S::NH; ++m) {
    const int t = s0 + 4 * (hf * S::NH + m);
    dq[m] = row_ok ? ldg4_in(gyr, t, T) : make_float4(0.f, 0.f, 0.f, 0.f);
  }
  // 2. W_pw's A fragments for this warp's 16 channels (A[ci][co] = W_pw[co][ci]), all 16 k-steps, RNE-rounded
  const int m0 = 16 * warp;
  const bool mma_warp = m0 < C;
  uint32_t af[kKSteps][4];
#pragma unroll
  for (int ks = 0; ks < kKSteps; ++ks) {
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int co = 8 * ks + q4 + 4 * (r >> 1), ci = m0 + g + 8 * (r & 1);
      af[ks][r] = mma_warp && co < C_out && ci < C ? __float_as_uint(__ldg(a.w_pw + co * C + ci)) : 0u;
    }
  }
  // db_pw's partial: the row's sum over the steps this tile owns (unrounded dy), in a fixed order
  if (a.partial_pw) {
    float s = 0.0f;
#pragma unroll
    for (int m = 0; m < S::NH; ++m) {
      const int f = hf * S::NH + m;
      if (f >= S::lead4 / 4 && f < S::lead4 / 4 + kTT / 4) s += (dq[m].x + dq[m].y) + (dq[m].z + dq[m].w);
    }
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    if (hf == 0 && row_ok) a.partial_pw[co_s * n + part_col] = s;
  }
#pragma unroll
  for (int m = 0; m < S::NH; ++m) {
    const float4 v = dq[m];
    *reinterpret_cast<uint4*>(sm + co_s * S::SJ + 4 * (hf * S::NH + m)) =
        make_uint4(tc_tf32(v.x), tc_tf32(v.y), tc_tf32(v.z), tc_tf32(v.w));
  }
#pragma unroll
  for (int ks = 0; ks < kKSteps; ++ks)
#pragma unroll
    for (int r = 0; r < 4; ++r) af[ks][r] = tc_tf32(__uint_as_float(af[ks][r]));
  __syncthreads();  // dy staged (x's copies may still fly: waited for after the GEMM)

  // 3. ga[ci][col] = sum_co W_pw[co][ci] dy[co][col]: warp w rows [16w, 16w + 16), every column
  float acc[S::NT][4];
#pragma unroll
  for (int nt = 0; nt < S::NT; ++nt) acc[nt][0] = acc[nt][1] = acc[nt][2] = acc[nt][3] = 0.0f;
  if (mma_warp) {
#pragma unroll
    for (int ks = 0; ks < kKSteps; ++ks) {
      const float* r0 = sm + (8 * ks + q4) * S::SJ + g;
#pragma unroll
      for (int nt = 0; nt < S::NT; ++nt) {
        const uint32_t bf[2] = {__float_as_uint(r0[8 * nt]), __float_as_uint(r0[4 * S::SJ + 8 * nt])};
        tc_mma_tf32(acc[nt], af[ks], bf);
      }
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // every warp has read dy (ga overwrites it), and x has landed
  if (mma_warp) {
#pragma unroll
    for (int nt = 0; nt < S::NT; ++nt) {
      float* d0 = sm + (m0 + g) * S::SJ + 8 * nt + 2 * q4;
      *reinterpret_cast<float2*>(d0) = make_float2(acc[nt][0], acc[nt][1]);
      *reinterpret_cast<float2*>(d0 + 8 * S::SJ) = make_float2(acc[nt][2], acc[nt][3]);
    }
  }
  __syncthreads();

  // 4. the epilogue, one channel per pair of threads: c = tid / 2, half hh = tid % 2 takes the 4-step groups
  //    g = 2j + hh (j < kTT / 8) of the tile, columns lead4 + 4g: v, act, gv in place over ga and the K+1 sums (the
  //    pair's partial sums meet by one shuffle); then the h2 gv steps past the tile on its side (hh = 0: before,
  //    1: after), which another tile owns (no sums, no act). The taps stay in registers for dx (step 5).
  //    Interleaved groups and row strides of 8 (mod 32) keep the pair's and the warp's float4s conflict-free.
  const int c = tid >> 1, hh = tid & 1;
  const bool live = c < C;
  const int cc = live ? c : 0;
  const int64_t row = b * a.C + cc;
  float w[K], sums[K + 1];
#pragma unroll
  for (int k = 0; k < K; ++k) w[k] = __ldg(a.w_dw + cc * K + k);
#pragma unroll
  for (int k = 0; k <= K; ++k) sums[k] = 0.0f;
  const float bias = a.b_dw ? __ldg(a.b_dw + cc) : 0.0f;
  float* gr = sm + cc * S::SJ;             // ga, then gv, of this channel: column col = t - s0
  const float* xc = xs + cc * S::XS;       // x of this channel: x[t] at xc[t - t0 + XL]
  if (live) {
#pragma unroll 2
    for (int j = 0; j < kTT / 8; ++j) {
      const int g4 = 4 * (2 * j + hh), tq = t0 + g4;
      float xw[4 * S::nx], gw[4], gv[4], act[4];
#pragma unroll
      for (int m = 0; m < S::nx; ++m) unpack4(xw + 4 * m, *reinterpret_cast<const float4*>(xc + S::x0 + g4 + 4 * m));
      unpack4(gw, *reinterpret_cast<const float4*>(gr + S::lead4 + g4));
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float v = bias;
#pragma unroll
        for (int k = 0; k < K; ++k) v = fmaf(w[k], xw[S::sx + e + k * D], v);
        const float ex = expf(-v);
        const float s = 1.0f / (1.0f + ex);
        const float gval = tq + e < T ? silu_grad(gw[e], v, s) : 0.0f;
#pragma unroll
        for (int k = 0; k < K; ++k) sums[k] = fmaf(gval, xw[S::sx + e + k * D], sums[k]);
        sums[K] += gval;
        gv[e] = gval;
        act[e] = v / (1.0f + ex);
      }
      *reinterpret_cast<float4*>(gr + S::lead4 + g4) = pack4(gv);
      if (a.act && tq < T) *reinterpret_cast<float4*>(a.act + row * a.T + tq) = pack4(act);  // T % 4 == 0
    }
#pragma unroll
    for (int e = 0; e < S::h2; ++e) {
      const int col = hh ? S::lead4 + kTT + e : S::lead4 - S::h2 + e, t = s0 + col;
      float gval = 0.0f;
      if (in_row(t, T)) {
        float v = bias;
#pragma unroll
        for (int k = 0; k < K; ++k) v = fmaf(w[k], xc[t - t0 + S::XL - S::h2 + k * D], v);
        const float s = 1.0f / (1.0f + expf(-v));
        gval = silu_grad(gr[col], v, s);
      }
      gr[col] = gval;
    }
  }
#pragma unroll
  for (int k = 0; k <= K; ++k) {
    const float s = sums[k] + __shfl_xor_sync(0xffffffffu, sums[k], 1);
    if (live && hh == 0) a.partial[(static_cast<int64_t>(c) * (K + 1) + k) * n + part_col] = s;
  }
  __syncthreads();

  // 5. dx[t'] = sum_k w[k] gv[t' + h2 - k D] for t' = tq + e, the same pair's groups: column g4 + sd + e + halo - k D
  //    of the window of float4s from column g4
  if (a.dx && live) {
#pragma unroll 2
    for (int j = 0; j < kTT / 8; ++j) {
      const int g4 = 4 * (2 * j + hh), tq = t0 + g4;
      if (tq >= T) break;
      float gwin[4 * S::nd], dx[4];
#pragma unroll
      for (int m = 0; m < S::nd; ++m) unpack4(gwin + 4 * m, *reinterpret_cast<const float4*>(gr + g4 + 4 * m));
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        float accx = 0.0f;
#pragma unroll
        for (int k = 0; k < K; ++k) accx = fmaf(w[k], gwin[S::sd + e + S::halo - k * D], accx);
        dx[e] = accx;
      }
      *reinterpret_cast<float4*>(a.dx + row * a.T + tq) = pack4(dx);
    }
  }
#endif
}

template <int K, int D>
void launch(const DwBackwardArgs& a, cudaStream_t stream) {
  constexpr size_t smem = sizeof(float) * TcShape<K, D>::smem_floats;
  if constexpr (smem > 48 * 1024) {  // past the default limit: set on every launch (the attribute is per device)
    const cudaError_t attr = cudaFuncSetAttribute(dw_silu_backward_tc_kernel<K, D>,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (attr != cudaSuccess)
      throw std::runtime_error(std::string("dw_silu_backward_tc: cudaFuncSetAttribute failed: ") +
                               cudaGetErrorString(attr));
  }
  const dim3 grid(static_cast<unsigned>(dw_backward_tiles(a)), static_cast<unsigned>(a.B));
  dw_silu_backward_tc_kernel<K, D><<<grid, kThreads, smem, stream>>>(a);
}

}  // namespace dwtc

bool dw_backward_tc_fits(const DwBackwardArgs& a) {
  const int64_t tiles = (a.T + kTcTile - 1) / kTcTile;
  return gpu_compute_capability() >= 80 && a.w_pw && a.gy && a.C >= kTcMinC && a.C <= dwtc::kMaxC && a.C_out >= kTcMinC &&
         a.C_out <= dwtc::kMaxC && a.B <= 65535 && tiles <= 0x7fffffff && a.T <= 0x7fffffff - 2 * kTcTile &&
         reinterpret_cast<uintptr_t>(a.gy) % 16 == 0 && dw_backward_vec_shape(a);
}

void dw_silu_backward_tc(const DwBackwardArgs& a, void* stream) {
  if (!dw_backward_tc_fits(a))
    throw std::runtime_error("dw_silu_backward_tc: shape outside the kernel's limits (dw_backward_tc_fits)");
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
#define DWTC_LAUNCH(KK, DD)                 \
  if (a.K == KK && a.dilation == DD) {      \
    dwtc::launch<KK, DD>(a, s);             \
    return;                                 \
  }
  DWBW_VEC_SHAPES(DWTC_LAUNCH)
#undef DWTC_LAUNCH
}
