// variant: accuracy=strict dtypes=float32
// Rung 1, naive: one thread per output element (b, oc, t). Each thread loops over all C_in input
// channels and, for every one, recomputes the depthwise conv (K loads) and the SiLU before the
// pointwise multiply-add: the depthwise+SiLU work is repeated C_out times, as a GPU novice writes it.
// Predicted (headline B=16 C=128 T=2048 K=5 d=2): 4.2M outputs x 128 ic x (5 FMA + expf + div + FMA)
//   ~ 5.4 GFMA-equivalents + 537M expf/div: compute/latency bound, on the order of 1-2 ms.
// Measured: see the README's results table (generated from results/timings.csv) and docs/ladder.md.
//   Slower than predicted: the accurate expf + IEEE divide (strict fp32) for each of the 537M recomputed
//   SiLUs. ptxas: 32 registers, 0 spills.
// Shape limits: float32 only; B * C_out * T_out / 256 blocks must fit a 1-D grid. Knobs: none.
#include "common.cuh"

namespace {

__global__ void naive_kernel(const float* __restrict__ x, const float* __restrict__ w_dw,
                             const float* __restrict__ b_dw, const float* __restrict__ w_pw,
                             const float* __restrict__ b_pw, float* __restrict__ y, int64_t B, int64_t C_in,
                             int64_t C_out, int64_t T, int64_t T_out, int K, int dilation, int padding) {
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t total = B * C_out * T_out;
  if (idx >= total) return;
  const int64_t t = idx % T_out;
  const int64_t oc = (idx / T_out) % C_out;
  const int64_t b = idx / (T_out * C_out);
  float acc = b_pw ? b_pw[oc] : 0.0f;
  for (int64_t ic = 0; ic < C_in; ++ic) {
    const float a = dw_silu_at(x + (b * C_in + ic) * T, w_dw + ic * K, b_dw ? b_dw[ic] : 0.0f, t, T, K,
                               dilation, padding);
    acc = fmaf(w_pw[oc * C_in + ic], a, acc);
  }
  y[idx] = acc;
}

}  // namespace

const char* fused_unsupported(const FusedArgs& a) { return require_float32(a); }

void fused_forward(const FusedArgs& a, void* stream) {
  const int threads = 256;
  const int64_t total = a.B * a.C_out * a.T_out;
  const int64_t blocks = ceil_div<int64_t>(total, threads);
  if (blocks > 0x7fffffffLL) throw std::runtime_error("naive: output too large for a 1-D grid");
  naive_kernel<<<static_cast<unsigned>(blocks), threads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(a.x), a.w_dw, a.b_dw, a.w_pw, a.b_pw, static_cast<float*>(a.y), a.B, a.C_in,
      a.C_out, a.T, a.T_out, a.K, a.dilation, a.padding);
}
