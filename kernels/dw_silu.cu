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
// Layout: one block per (row of B*C_in, span of kTile outputs); thread i takes outputs i, i + 256, ... so every
// tap is a coalesced read (the K taps of a row hit L1). Memory-bound: x read once from DRAM, act written once.
#include <torch/extension.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

constexpr int kThreads = 256, kPerThread = 4, kTile = kThreads * kPerThread;

__device__ __forceinline__ float dws_load(const float* p) { return __ldg(p); }
__device__ __forceinline__ float dws_load(const __nv_bfloat16* p) { return __bfloat162float(__ldg(p)); }
__device__ __forceinline__ float dws_load(const __half* p) { return __half2float(__ldg(p)); }
// Round to the element type and back: eager stores the depthwise output in x's dtype before its SiLU.
__device__ __forceinline__ float dws_round(float v, float*) { return v; }
__device__ __forceinline__ float dws_round(float v, __nv_bfloat16*) { return __bfloat162float(__float2bfloat16_rn(v)); }
__device__ __forceinline__ float dws_round(float v, __half*) { return __half2float(__float2half_rn(v)); }
__device__ __forceinline__ void dws_store(float* p, float v) { *p = v; }
__device__ __forceinline__ void dws_store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }
__device__ __forceinline__ void dws_store(__half* p, float v) { *p = __float2half_rn(v); }

template <typename T>
__global__ void __launch_bounds__(kThreads) dw_silu_kernel(const T* __restrict__ x, const float* __restrict__ w,
                                                          const float* __restrict__ b, T* __restrict__ act,
                                                          int C, int64_t T_in, int64_t T_out, int K, int dilation,
                                                          int padding) {
  const int64_t row = blockIdx.x;  // b * C + c
  const int c = static_cast<int>(row % C);
  const T* xr = x + row * T_in;
  const float* wr = w + static_cast<int64_t>(c) * K;
  const float bias = b ? b[c] : 0.0f;
  const int64_t t_first = static_cast<int64_t>(blockIdx.y) * kTile + threadIdx.x;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int64_t t = t_first + i * kThreads;
    if (t >= T_out) break;
    float acc = bias;
    int64_t src = t - padding;
    for (int k = 0; k < K; ++k, src += dilation)
      if (src >= 0 && src < T_in) acc = fmaf(__ldg(wr + k), dws_load(xr + src), acc);
    const float v = dws_round(acc, static_cast<T*>(nullptr));
    dws_store(act + row * T_out + t, v / (1.0f + expf(-v)));
  }
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
  const dim3 grid(static_cast<unsigned>(B * C), static_cast<unsigned>((T_out + kTile - 1) / kTile));
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  const float* bp = b_dw ? b.data_ptr<float>() : nullptr;
  const int Ci = static_cast<int>(C), Ki = static_cast<int>(K), Di = static_cast<int>(dilation),
            Pi = static_cast<int>(padding);
  switch (x.scalar_type()) {
    case torch::kFloat:
      dw_silu_kernel<float><<<grid, kThreads, 0, stream>>>(xc.data_ptr<float>(), w.data_ptr<float>(), bp,
                                                           act.data_ptr<float>(), Ci, T_in, T_out, Ki, Di, Pi);
      break;
    case torch::kBFloat16:
      dw_silu_kernel<__nv_bfloat16><<<grid, kThreads, 0, stream>>>(
          reinterpret_cast<const __nv_bfloat16*>(xc.data_ptr()), w.data_ptr<float>(), bp,
          reinterpret_cast<__nv_bfloat16*>(act.data_ptr()), Ci, T_in, T_out, Ki, Di, Pi);
      break;
    default:
      dw_silu_kernel<__half><<<grid, kThreads, 0, stream>>>(reinterpret_cast<const __half*>(xc.data_ptr()),
                                                            w.data_ptr<float>(), bp,
                                                            reinterpret_cast<__half*>(act.data_ptr()), Ci, T_in,
                                                            T_out, Ki, Di, Pi);
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return act;
}
