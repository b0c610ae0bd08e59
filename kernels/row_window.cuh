// row_window.cuh: staging one row's window of x (or of a gradient) in shared memory with many loads in flight,
// and the depthwise + SiLU of one output computed as eager computes it. Torch-free; shared by the general path's
// forward (dw_silu.cu) and the depthwise half of the backward (dw_silu_backward.cu). Names carry an rw_ prefix.
//
// Why a header of its own: the first forms of both kernels staged (or read) their window with one load per loop
// iteration, so each thread waited a full memory latency per element and the kernels ran at ~1.2 TB/s
// (latency-bound). rw_stage issues kPer independent loads per thread before the first shared-memory store.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace rw {

__device__ __forceinline__ float rw_load(const float* p) { return __ldg(p); }
__device__ __forceinline__ float rw_load(const __nv_bfloat16* p) { return __bfloat162float(__ldg(p)); }
__device__ __forceinline__ float rw_load(const __half* p) { return __half2float(__ldg(p)); }
// Round to the element type and back: eager stores the depthwise output in x's dtype before its SiLU.
__device__ __forceinline__ float rw_round(float v, const float*) { return v; }
__device__ __forceinline__ float rw_round(float v, const __nv_bfloat16*) {
  return __bfloat162float(__float2bfloat16_rn(v));
}
__device__ __forceinline__ float rw_round(float v, const __half*) { return __half2float(__float2half_rn(v)); }
__device__ __forceinline__ void rw_store(float* p, float v) { *p = v; }
__device__ __forceinline__ void rw_store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
__device__ __forceinline__ void rw_store(__half* p, float v) { *p = __float2half_rn(v); }

// A batch of staged elements: thread j holds elements base + r * kThreads + j, r < kB, of a window, loaded
// (load) before any is stored (store), so a thread has kB loads in flight; two batches can be loaded before
// either is stored (the backward stages x and the gradient together).
template <int kThreads, int kB>
struct RwBatch {
  float v[kB];
  template <typename T>
  __device__ __forceinline__ void load(const T* __restrict__ row, int64_t start, int base, int count, int64_t len) {
#pragma unroll
    for (int r = 0; r < kB; ++r) {
      const int i = base + r * kThreads + static_cast<int>(threadIdx.x);
      const int64_t s = start + i;
      v[r] = (i < count && s >= 0 && s < len) ? rw_load(row + s) : 0.0f;
    }
  }
  __device__ __forceinline__ void store(float* dst, int base, int count) const {
#pragma unroll
    for (int r = 0; r < kB; ++r) {
      const int i = base + r * kThreads + static_cast<int>(threadIdx.x);
      if (i < count) dst[i] = v[r];
    }
  }
};

// dst[i] = row[start + i] as float for i in [0, count), 0 where start + i lies outside [0, len).
// Every thread of the block calls it; the caller syncs before reading dst. Coalesced, kPer + 1 loads in flight
// per thread: a tile of kThreads * kPer outputs and a halo of up to kThreads steps land in one memory latency
// (a separate pass for the halo cost a second latency per block).
template <int kThreads, int kPer, typename T>
__device__ __forceinline__ void rw_stage(float* dst, const T* __restrict__ row, int64_t start, int count,
                                         int64_t len) {
  for (int base = 0; base < count; base += kThreads * (kPer + 1)) {
    RwBatch<kThreads, kPer + 1> b;
    b.load(row, start, base, count, len);
    b.store(dst, base, count);
  }
}

// v = eager's depthwise of one output from the staged window (xs[i + k * dilation] is tap k): the accumulator
// starts at the bias, taps added in order with one fused multiply-add each (aten's DepthwiseConv2d.cu). A tap
// outside [0, T) is a staged zero: fmaf(w, 0, acc) == acc for finite w, the same value as eager's skipped tap.
__device__ __forceinline__ float rw_depthwise(const float* ws, const float* xs, int i, int K, int dilation,
                                              float bias) {
  float acc = bias;
  for (int k = 0; k < K; ++k) acc = fmaf(ws[k], xs[i + k * dilation], acc);
  return acc;
}

// aten's SiLU: x / (1 + exp(-x)) in float, accurate expf and IEEE division (no fast math).
__device__ __forceinline__ float rw_silu(float v) { return v / (1.0f + expf(-v)); }

// act[t] = silu(dw(x))[t] for one (b, c) row and the tile [t0, t0 + kThreads * kPer) of outputs, in x's dtype.
// smem: K weights then the x window of (tile + (K-1) * dilation) floats. One block per (row, tile).
template <int kThreads, int kPer, typename T>
__global__ void __launch_bounds__(kThreads) rw_dw_silu_kernel(const T* __restrict__ x, const float* __restrict__ w,
                                                             const float* __restrict__ b, T* __restrict__ act, int C,
                                                             int64_t T_in, int64_t T_out, int K, int dilation,
                                                             int padding) {
  constexpr int kTile = kThreads * kPer;
  extern __shared__ float rw_smem[];
  float* ws = rw_smem;
  float* xs = rw_smem + K;
  const int64_t row = blockIdx.x;  // b * C + c
  const int c = static_cast<int>(row % C);
  const int64_t t0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int n_out = static_cast<int>(T_out - t0 < kTile ? T_out - t0 : kTile);
  for (int k = threadIdx.x; k < K; k += kThreads) ws[k] = w[static_cast<int64_t>(c) * K + k];
  rw_stage<kThreads, kPer>(xs, x + row * T_in, t0 - padding, n_out + (K - 1) * dilation, T_in);
  const float bias = b ? b[c] : 0.0f;
  __syncthreads();
  T* out = act + row * T_out + t0;
#pragma unroll
  for (int r = 0; r < kPer; ++r) {
    const int i = r * kThreads + static_cast<int>(threadIdx.x);
    if (i < n_out) {
      const float v = rw_round(rw_depthwise(ws, xs, i, K, dilation, bias), static_cast<const T*>(nullptr));
      rw_store(out + i, rw_silu(v));
    }
  }
}

// Host: shared memory of rw_dw_silu_kernel (bytes) and its launch over B * C rows x ceil(T_out / tile) tiles; the
// callers (dw_silu.cu, dw_silu_backward.cu) check the grid limits and the launch error.
template <int kThreads, int kPer>
inline size_t rw_dw_silu_smem(int K, int dilation) {
  return (static_cast<size_t>(K) + kThreads * kPer + static_cast<size_t>(K - 1) * dilation) * sizeof(float);
}
template <int kThreads, int kPer, typename T>
inline void rw_launch_dw_silu(const T* x, const float* w, const float* b, T* act, int64_t B, int C, int64_t T_in,
                              int64_t T_out, int K, int dilation, int padding, cudaStream_t stream) {
  constexpr int kTile = kThreads * kPer;
  const dim3 grid(static_cast<unsigned>(B * C), static_cast<unsigned>((T_out + kTile - 1) / kTile));
  rw_dw_silu_kernel<kThreads, kPer, T><<<grid, kThreads, rw_dw_silu_smem<kThreads, kPer>(K, dilation), stream>>>(
      x, w, b, act, C, T_in, T_out, K, dilation, padding);
}

}  // namespace rw
