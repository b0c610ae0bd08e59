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
// (row_window.cuh), then thread i computes outputs i, i + threads, ... from shared memory. Memory-bound: x read once from DRAM, act written once.
// Prediction: at B=16, C=256, T=2048 (67 MB moved) ~17 us at the copy rate; the first form had one load in flight
// per thread (latency-bound). Windows beyond 48 KB of shared memory ((K-1)*dilation > ~10000) keep the first
// form (every tap read through L1).
// Outcome: faster than the first form but well short of the copy rate; not yet explained (the accurate expf and
// IEEE division per output are the first suspects). Figures: docs/ladder.md.
#include <torch/extension.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
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
  // (0.69-0.94x eager at T = 100, C >= 192 in the 2026-12-02 sweep, where the first form had run 1.08-1.26x)
  if (T_out <= 128 && rw::rw_dw_silu_smem<64, 2>(K, dilation) <= kWindowSmem)
    return rw::rw_launch_dw_silu<64, 2>(x, w, b, act, B, C, T_in, T_out, K, dilation, padding, stream);
  if (T_out <= 512 && rw::rw_dw_silu_smem<128, 4>(K, dilation) <= kWindowSmem)
    return rw::rw_launch_dw_silu<128, 4>(x, w, b, act, B, C, T_in, T_out, K, dilation, padding, stream);
  if (rw::rw_dw_silu_smem<kThreads, kPerThread>(K, dilation) <= kWindowSmem)
    return rw::rw_launch_dw_silu<kThreads, kPerThread>(x, w, b, act, B, C, T_in, T_out, K, dilation, padding, stream);
  const dim3 grid(static_cast<unsigned>(B * C), static_cast<unsigned>((T_out + kTile - 1) / kTile));
  dw_silu_direct_kernel<T><<<grid, kThreads, 0, stream>>>(x, w, b, act, C, T_in, T_out, K, dilation, padding);
}

std::string shape_of(const torch::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

}  // namespace

// act = silu(dw(x)) in x's dtype, shape (B, C_in, T_out): eager's numbers (see the file's head).
torch::Tensor dw_silu(torch::Tensor x, torch::Tensor w_dw, c10::optional<torch::Tensor> b_dw, int64_t dilation,
                      int64_t padding) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 3, "dw_silu: x must be a 3-D CUDA tensor (batch, channels, time); got ",
              shape_of(x), " on ", x.device().str());
  TORCH_CHECK(x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kBFloat16 ||
                  x.scalar_type() == torch::kHalf,
              "dw_silu: x must be float32, bfloat16 or float16; got ", std::string(c10::toString(x.scalar_type())));
  const int64_t B = x.size(0), C = x.size(1), T_in = x.size(2);
  TORCH_CHECK(w_dw.dim() == 3 && w_dw.size(0) == C && w_dw.size(1) == 1,
              "dw_silu: depthwise weight must have shape (C_in, 1, K) with C_in = ", std::to_string(C), "; got ",
              shape_of(w_dw));
  TORCH_CHECK(dilation >= 1 && padding >= 0, "dw_silu: dilation must be >= 1 and padding >= 0");
  const int64_t K = w_dw.size(2), T_out = T_in + 2 * padding - dilation * (K - 1);
  TORCH_CHECK(K >= 1 && T_out >= 1, "dw_silu: input of length ", std::to_string(T_in),
              " is too short for kernel_size=", std::to_string(K), ", dilation=", std::to_string(dilation));
  TORCH_CHECK(C <= INT32_MAX && (T_out + kTile - 1) / kTile <= 65535, "dw_silu: shape ", shape_of(x),
              " exceeds the launch grid");
  const c10::cuda::CUDAGuard guard(x.device());
  const torch::Tensor xc = x.contiguous();
  const torch::Tensor w = w_dw.to(x.device(), torch::kFloat).contiguous();
  torch::Tensor b;
  if (b_dw) {
    TORCH_CHECK(b_dw->numel() == C, "dw_silu: depthwise bias must have C_in = ", std::to_string(C), " elements");
    b = b_dw->to(x.device(), torch::kFloat).contiguous();
  }
  torch::Tensor act = torch::empty({B, C, T_out}, xc.options());
  if (act.numel() == 0) return act;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const float* bp = b_dw ? b.data_ptr<float>() : nullptr;
  const int Ci = static_cast<int>(C), Ki = static_cast<int>(K), Di = static_cast<int>(dilation),
            Pi = static_cast<int>(padding);
  switch (x.scalar_type()) {
    case torch::kFloat:
      launch_dw_silu(xc.data_ptr<float>(), w.data_ptr<float>(), bp, act.data_ptr<float>(), B, Ci, T_in, T_out, Ki,
                     Di, Pi, stream);
      break;
    case torch::kBFloat16:
      launch_dw_silu(reinterpret_cast<const __nv_bfloat16*>(xc.data_ptr()), w.data_ptr<float>(), bp,
                     reinterpret_cast<__nv_bfloat16*>(act.data_ptr()), B, Ci, T_in, T_out, Ki, Di, Pi, stream);
      break;
    default:
      launch_dw_silu(reinterpret_cast<const __half*>(xc.data_ptr()), w.data_ptr<float>(), bp,
                     reinterpret_cast<__half*>(act.data_ptr()), B, Ci, T_in, T_out, Ki, Di, Pi, stream);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return act;
}
