// dw_silu.cu: the general path's kernel: act = silu(dw(x)) for any shape and dtype, bit-identical to eager.
// Not a rung (no NN_ prefix): ModelNew and the exported file use it where no fused rung runs a shape (C > 128,
// K or dilation beyond the windowed depthwise, T % 4 != 0, another GPU) and feed act to PyTorch's own 1x1 conv,
// which then rounds exactly as eager's does under the user's TF32 switch. Two kernels instead of eager's three:
// act is written once and read once, where eager writes and reads the pre-SiLU tensor as well.
//
// Numerics (what makes act equal to eager's, bit for bit):
//   - the depthwise as aten/src/ATen/native/cuda/DepthwiseConv2d.cu computes it: the accumulator starts at the
//     bias (in float, the accumulate type of every dtype), taps added in order k = 0..K-1 with one fused
//     multiply-add each, taps outside [0, T) skipped, the sum rounded to x's dtype;
//   - the SiLU as aten's: x / (1 + exp(-x)) in float on the value in x's dtype, rounded to x's dtype.
//   For float16 without dilation eager may take cuDNN's depthwise instead (another summation order): there the
//   result is within float16's rounding of eager's, not bit-identical.
// Layout: one block per (row of B*C_in, tile of kTile = 2048 outputs; 128 or 512 for rows up to that long); the
// block stages its x window (tile + (K-1)*dilation halo) in shared memory with kPer + 1 loads in flight per thread
// (row_window.cuh), then thread i computes outputs i, i + threads, ... from shared memory. Memory-bound: x read
// once from DRAM, act written once.
// Prediction: at B=16, C=256, T=2048 (67 MB moved) ~17 us at the copy rate; the first form had one load in flight
// per thread (latency-bound). Windows beyond 48 KB of shared memory ((K-1)*dilation > ~10000) keep the first
// form (every tap read through L1).
// Outcome: faster than the first form but well short of the copy rate; not yet explained (the accurate expf and
// IEEE division per output are the first suspects). Figures: docs/ladder.md.
// Torch-free (a kernel file nvcc compiles without PyTorch's headers): the tensor checks and the launch error check
// are general.cpp's, which calls dw_silu_launch below.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include "row_window.cuh"

namespace {

constexpr int kThreads = 256, kPerThread = 8, kTile = kThreads * kPerThread;
constexpr size_t kWindowSmem = 48 * 1024;  // the staged window's limit (no opt-in needed)

// The first form, kept for windows beyond kWindowSmem: every tap read through L1 with a bounds check.
template <typename T>
__global__ void __launch_bounds__(kThreads) dw_silu_direct_kernel(const T* __restrict__ x, const float* __restrict__ w,
                                                                 const float* __restrict__ b, T* __restrict__ act,
                                                                 int C, int64_t T_in, int64_t T_out, int K,
                                                                 int dilation, int padding) {
  const int64_t row = blockIdx.x;  // b * C + c
  const int c = static_cast<int>(row % C);
  const T* xr = x + row * T_in;
  const float* wr = w + static_cast<int64_t>(c) * K;
  const float bias = b ? b[c] : 0.0f;
  const int64_t t_first = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.x;
  for (int i = 0; i < kPerThread; ++i) {
    const int64_t t = t_first + i * kThreads;
    if (t >= T_out) break;
    float acc = bias;
    int64_t src = t - padding;
    for (int k = 0; k < K; ++k, src += dilation)
      if (src >= 0 && src < T_in) acc = fmaf(__ldg(wr + k), rw::rw_load(xr + src), acc);
    const float v = rw::rw_round(acc, static_cast<const T*>(nullptr));
    rw::rw_store(act + row * T_out + t, rw::rw_silu(v));
  }
}

template <typename T>
void launch_dw_silu(const T* x, const float* w, const float* b, T* act, int64_t B, int C, int64_t T_in,
                    int64_t T_out, int K, int dilation, int padding, cudaStream_t stream) {
  // short rows get a tile near their length: one block of 256 threads per 100-step row left 7 of 8 warps idle
  // and the general path fell behind eager there (docs/ladder.md, runs of 2026-12-02)
  if (T_out <= 128 && rw::rw_dw_silu_smem<64, 2>(K, dilation) <= kWindowSmem)
    return rw::rw_launch_dw_silu<64, 2>(x, w, b, act, B, C, T_in, T_out, K, dilation, padding, stream);
  if (T_out <= 512 && rw::rw_dw_silu_smem<128, 4>(K, dilation) <= kWindowSmem)
    return rw::rw_launch_dw_silu<128, 4>(x, w, b, act, B, C, T_in, T_out, K, dilation, padding, stream);
  if (rw::rw_dw_silu_smem<kThreads, kPerThread>(K, dilation) <= kWindowSmem)
    return rw::rw_launch_dw_silu<kThreads, kPerThread>(x, w, b, act, B, C, T_in, T_out, K, dilation, padding, stream);
  const dim3 grid(static_cast<unsigned>(B * C), static_cast<unsigned>((T_out + kTile - 1) / kTile));
  dw_silu_direct_kernel<T><<<grid, kThreads, 0, stream>>>(x, w, b, act, C, T_in, T_out, K, dilation, padding);
}

}  // namespace

// act = silu(dw(x)) for x of shape (B, C, T_in) in `dtype` (0 float32, 1 bfloat16, 2 float16), w (C, K) and b (C)
// float32 (b may be null), act (B, C, T_out) in x's dtype, on `stream`. Throws where the grid would overflow.
void dw_silu_launch(int dtype, const void* x, const float* w, const float* b, void* act, int64_t B, int64_t C,
                    int64_t T_in, int64_t T_out, int K, int dilation, int padding, void* stream_ptr) {
  if (B * C > 0x7fffffff || (T_out + kTile - 1) / kTile > 65535)
    throw std::runtime_error("dw_silu: B * C_in = " + std::to_string(B * C) + " rows of " + std::to_string(T_out) +
                             " outputs exceed the launch grid");
  const auto stream = static_cast<cudaStream_t>(stream_ptr);
  const int Ci = static_cast<int>(C);
  if (dtype == 0)
    launch_dw_silu(static_cast<const float*>(x), w, b, static_cast<float*>(act), B, Ci, T_in, T_out, K, dilation,
                   padding, stream);
  else if (dtype == 1)
    launch_dw_silu(static_cast<const __nv_bfloat16*>(x), w, b, static_cast<__nv_bfloat16*>(act), B, Ci, T_in,
                   T_out, K, dilation, padding, stream);
  else
    launch_dw_silu(static_cast<const __half*>(x), w, b, static_cast<__half*>(act), B, Ci, T_in, T_out, K, dilation,
                   padding, stream);
}
