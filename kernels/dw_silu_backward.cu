// dw_silu_backward.cu: the depthwise + SiLU half of the backward in one kernel (contract: dw_backward_args.h).
// Rung 1 of the backward ladder. Eager runs this half as four kernels over HBM: the forward's depthwise and SiLU
// again (v, act), silu_backward (gv), then the depthwise's convolution_backward (dx, and a weight-gradient kernel
// that reduces over B*T). Here one block owns a (b, c) row and a tile of kTile time steps: it stages x (with a
// (K-1)*dilation halo each side) in shared memory, recomputes v, forms gv in shared memory (with the halo the
// transposed depthwise needs), writes dx, and reduces gv*x and gv into K+1 partial sums. Bytes: read x and ga
// once, write dx once (plus the halo re-reads, L2 hits).
// The 1x1 conv's backward (dact = W_pw^T dy, dW_pw = dy act^T) stays with PyTorch: fusing it is the next rung.
//
// Prediction: memory-bound, ~3 x 16.8 MB at the headline (x, ga, dx) = 50 MB: ~15 us at the copy rate, against
// eager's silu + silu_backward + depthwise backward (input + weight), several passes each.
// Numerics: v as eager's depthwise (bias first, taps in order, fmaf), sigmoid = 1 / (1 + exp(-v)) and
// gv = ga * s * (1 + v * (1 - s)) as aten's silu_backward: gv equals eager's bit for bit. dx and the weight
// gradients sum in another order than cuDNN/aten: within float32 rounding of eager's, not bit-identical.
// Limits: float32 only (16-bit training keeps eager's backward ops); padding <= (K-1)*dilation <= 1024 (else eager's
// ops). Status: ModelNew's default backward; tests/test_gpu.py and scripts/backward_bench.py check and time it on
// the H200 (gradients within 3e-7 of eager's max, memcheck + racecheck clean: 2026-12-01 runs at 0b2d696/4f353fc).
// Measured far from its prediction: ~69 us at the headline in a profile (L2 warm), 4.6x the ~15 us predicted: one
// block per (b, c) row tile of 1024 steps with a serial tap loop per element and K+1 block reductions; the next
// rung (the GEMM with this as its epilogue) replaces it rather than tuning it.
#include <cuda_runtime.h>
#include <stdexcept>
#include <string>
#include "dw_backward_args.h"

namespace dwbw {

constexpr int kThreads = 256, kTile = 1024, kMaxHalo = 1024;  // (K-1)*dilation <= kMaxHalo: <= 20.5 KB of smem

__global__ void __launch_bounds__(kThreads) dw_silu_backward_kernel(DwBackwardArgs a) {
  // shared memory: the K weights, x over [t0 - halo, t0 + kTile + halo) (zero outside [0, T)), gv over
  // [t_lo, t_lo + kTile + halo) with t_lo = t0 + padding - halo (zero outside [0, T_out))
  extern __shared__ float smem[];
  __shared__ float red[kThreads / 32];
  const int K = a.K, d = a.dilation, p = a.padding, halo = (K - 1) * d;
  float* ws = smem;
  float* xs = ws + K;
  float* gv_s = xs + kTile + 2 * halo;
  const int64_t row = blockIdx.x;  // b * C + c
  const int64_t b = row / a.C, c = row % a.C;
  const int64_t tile = blockIdx.y, t0 = tile * kTile;
  const float* xr = a.x + row * a.T;
  const float* gr = a.ga + row * a.T_out;
  const float bias = a.b_dw ? a.b_dw[c] : 0.0f;
  for (int k = threadIdx.x; k < K; k += kThreads) ws[k] = a.w_dw[c * K + k];
  const int64_t x0 = t0 - halo;
  for (int i = threadIdx.x; i < kTile + 2 * halo; i += kThreads) {
    const int64_t src = x0 + i;
    xs[i] = (src >= 0 && src < a.T) ? __ldg(xr + src) : 0.0f;
  }
  __syncthreads();
  // gv[t] for t = t_lo + i: v from x[t - p + k*d], whose xs index is i + k*d (t - p - x0 = i)
  const int64_t t_lo = t0 + p - halo;
  for (int i = threadIdx.x; i < kTile + halo; i += kThreads) {
    const int64_t t = t_lo + i;
    float g = 0.0f;
    if (t >= 0 && t < a.T_out) {
      float v = bias;
      for (int k = 0; k < K; ++k) v = fmaf(ws[k], xs[i + k * d], v);
      const float s = 1.0f / (1.0f + expf(-v));
      g = __ldg(gr + t) * s * (1.0f + v * (1.0f - s));
    }
    gv_s[i] = g;
  }
  __syncthreads();
  // dx[t'] = sum_k w[k] * gv[t' + p - k*d]: gv_s index (t' - t0) + halo - k*d
  for (int i = threadIdx.x; i < kTile; i += kThreads) {
    const int64_t tp = t0 + i;
    if (tp >= a.T) break;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc = fmaf(ws[k], gv_s[i + halo - k * d], acc);
    a.dx[row * a.T + tp] = acc;
  }
  // partial sums over the gv this tile owns, t in [t0, t0 + kTile): gv_s index i + halo - p, and
  // x[t - p + k*d] at xs index i + halo - p + k*d
  float* out = a.partial + ((tile * a.B + b) * a.C + c) * (K + 1);
  for (int k = 0; k <= K; ++k) {
    float sum = 0.0f;
    for (int i = threadIdx.x; i < kTile; i += kThreads) {
      if (t0 + i >= a.T_out) break;
      const float g = gv_s[i + halo - p];
      sum = k == K ? sum + g : fmaf(g, xs[i + halo - p + k * d], sum);
    }
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = sum;
    __syncthreads();
    if (threadIdx.x == 0) {
      float s = 0.0f;
      for (int wi = 0; wi < kThreads / 32; ++wi) s += red[wi];
      out[k] = s;
    }
    __syncthreads();
  }
}

}  // namespace dwbw

int64_t dw_backward_tiles(const DwBackwardArgs& a) {
  const int64_t n = a.T > a.T_out ? a.T : a.T_out;
  return (n + dwbw::kTile - 1) / dwbw::kTile;
}

void dw_silu_backward(const DwBackwardArgs& a, void* stream) {
  const int64_t halo = static_cast<int64_t>(a.K - 1) * a.dilation;
  if (halo > dwbw::kMaxHalo)
    throw std::runtime_error("dw_silu_backward: (K-1)*dilation = " + std::to_string(halo) + " exceeds " +
                             std::to_string(dwbw::kMaxHalo));
  const int64_t tiles = dw_backward_tiles(a);
  if (a.B * a.C > 0x7fffffff || tiles > 65535)
    throw std::runtime_error("dw_silu_backward: shape exceeds the launch grid");
  const size_t smem = static_cast<size_t>(a.K + 2 * dwbw::kTile + 3 * halo) * sizeof(float);
  const dim3 grid(static_cast<unsigned>(a.B * a.C), static_cast<unsigned>(tiles));
  dwbw::dw_silu_backward_kernel<<<grid, dwbw::kThreads, smem, static_cast<cudaStream_t>(stream)>>>(a);
}
