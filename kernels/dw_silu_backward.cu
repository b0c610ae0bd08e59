// dw_silu_backward.cu: the depthwise + SiLU half of the backward in one kernel (contract: dw_backward_args.h),
// and the activations' recompute the backward of the 1x1 conv needs. Rung 2 of the backward ladder.
// Eager runs this half as four kernels over HBM: the forward's depthwise and SiLU again (v, act), silu_backward
// (gv), then the depthwise's convolution_backward (dx, and a weight-gradient kernel that reduces over B*T).
// Here one block owns a (b, c) row and a tile of kTile = 2048 time steps: it stages x (with a (K-1)*dilation
// halo each side) and ga in shared memory, recomputes v, forms gv in shared memory (with the halo the transposed
// depthwise needs), writes dx, and reduces gv*x and gv into K+1 partial sums. Bytes: read x and ga once, write
// dx once (plus the halo re-reads, L2 hits). dw_silu_forward recomputes act = silu(dw(x)) for the 1x1 conv's
// backward with the general path's kernel (row_window.cuh), eager's bits, instead of PyTorch's depthwise + SiLU.
// The 1x1 conv's backward (dact = W_pw^T dy, dW_pw = dy act^T) stays with PyTorch: fusing it is the next rung.
//
// What changed from rung 1 (the first form of this file, git history): its windows were staged with one load in
// flight per thread (each element waited a full memory latency: latency-bound, several times its prediction at
// the headline), the K+1 weight-gradient sums each ended in a block reduction with two barriers, and the
// activations were recomputed by PyTorch's depthwise kernel (the profile's largest single item). Now: 9 loads in
// flight per thread for x and ga each, together (row_window.cuh's RwBatch), one barrier for all K+1 sums
// (per-warp partials, summed in a fixed order).
// Prediction: memory-bound, x + ga read, dx written = 50 MB at the headline: ~12-15 us at the copy rate, and
// the recompute ~8 us (x read, act written: 33.6 MB).
// Outcome: both several times slower than that (docs/results.md, docs/ladder.md); the next rung
// is the fused one (ga = W_pw^T dy on tensor cores with this kernel as its epilogue).
// Numerics: v as eager's depthwise (bias first, taps in order, fmaf), sigmoid = 1 / (1 + exp(-v)) and
// gv = ga * s * (1 + v * (1 - s)) as aten's silu_backward: gv equals eager's bit for bit. dx and the weight
// gradients sum in another order than cuDNN/aten: within float32 rounding of eager's, not bit-identical;
// deterministic (no atomics; the partial sums are reduced in a fixed order).
// Limits: float32 only (16-bit training keeps eager's backward ops); padding <= (K-1)*dilation <= 1024 (else
// eager's ops).
#include <cuda_runtime.h>
#include <stdexcept>
#include <string>
#include "dw_backward_args.h"
#include "row_window.cuh"

namespace dwbw {

constexpr int kThreads = 256, kPer = 8, kTile = kThreads * kPer, kMaxHalo = 1024, kWarps = kThreads / 32;

// shared memory: the K weights, x over [t0 - halo, t0 + kTile + halo) (zero outside [0, T)), gv over
// [t_lo, t_lo + kTile + halo) with t_lo = t0 + padding - halo (zero outside [0, T_out)), then kWarps x (K + 1)
// per-warp partial sums.
inline size_t smem_bytes(int K, int halo) {
  return (static_cast<size_t>(K) + 2 * kTile + 3 * static_cast<size_t>(halo) + kWarps * (K + 1)) * sizeof(float);
}

__global__ void __launch_bounds__(kThreads) dw_silu_backward_kernel(DwBackwardArgs a) {
  extern __shared__ float smem[];
  const int K = a.K, d = a.dilation, p = a.padding, halo = (K - 1) * d;
  float* ws = smem;
  float* xs = ws + K;
  float* gv_s = xs + kTile + 2 * halo;
  float* red = gv_s + kTile + halo;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int64_t row = blockIdx.x;  // b * C + c
  const int64_t b = row / a.C, c = row % a.C;
  const int64_t tile = blockIdx.y, t0 = tile * kTile;
  const int64_t t_lo = t0 + p - halo;
  for (int k = tid; k < K; k += kThreads) ws[k] = a.w_dw[c * K + k];
  // x and ga windows in one batch of loads (2 x (kPer + 1) in flight per thread): one memory latency per block
  const int nx = kTile + 2 * halo, ng = kTile + halo;
  for (int base = 0; base < nx; base += kThreads * (kPer + 1)) {
    rw::RwBatch<kThreads, kPer + 1> bx, bg;
    bx.load(a.x + row * a.T, t0 - halo, base, nx, a.T);
    bg.load(a.ga + row * a.T_out, t_lo, base, ng, a.T_out);
    bx.store(xs, base, nx);
    bg.store(gv_s, base, ng);
  }
  const float bias = a.b_dw ? a.b_dw[c] : 0.0f;
  __syncthreads();
  // gv[t] for t = t_lo + i, in place over the staged ga: v from x[t - p + k*d], whose xs index is i + k*d
  for (int i = tid; i < kTile + halo; i += kThreads) {
    const int64_t t = t_lo + i;
    float g = 0.0f;
    if (t >= 0 && t < a.T_out) {
      const float v = rw::rw_depthwise(ws, xs, i, K, d, bias);
      const float s = 1.0f / (1.0f + expf(-v));
      g = gv_s[i] * s * (1.0f + v * (1.0f - s));
    }
    gv_s[i] = g;
  }
  __syncthreads();
  // dx[t'] = sum_k w[k] * gv[t' + p - k*d]: gv_s index (t' - t0) + halo - k*d
  float* dxr = a.dx + row * a.T + t0;
#pragma unroll
  for (int r = 0; r < kPer; ++r) {
    const int i = r * kThreads + tid;
    if (t0 + i < a.T) {
      float acc = 0.0f;
      for (int k = 0; k < K; ++k) acc = fmaf(ws[k], gv_s[i + halo - k * d], acc);
      dxr[i] = acc;
    }
  }
  // partial sums over the gv this tile owns, t in [t0, t0 + kTile): gv_s index i + halo - p, and
  // x[t - p + k*d] at xs index i + halo - p + k*d. Per-warp sums, then one barrier, then a fixed-order sum.
  for (int k = 0; k <= K; ++k) {
    float sum = 0.0f;
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
      const int i = r * kThreads + tid;
      if (t0 + i < a.T_out) {
        const float g = gv_s[i + halo - p];
        sum = k == K ? sum + g : fmaf(g, xs[i + halo - p + k * d], sum);
      }
    }
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (lane == 0) red[warp * (K + 1) + k] = sum;
  }
  __syncthreads();
  float* out = a.partial + ((tile * a.B + b) * a.C + c) * (K + 1);
  for (int k = tid; k <= K; k += kThreads) {
    float s = 0.0f;
    for (int wi = 0; wi < kWarps; ++wi) s += red[wi * (K + 1) + k];
    out[k] = s;
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
  const size_t smem = dwbw::smem_bytes(a.K, static_cast<int>(halo));
  const dim3 grid(static_cast<unsigned>(a.B * a.C), static_cast<unsigned>(tiles));
  dwbw::dw_silu_backward_kernel<<<grid, dwbw::kThreads, smem, static_cast<cudaStream_t>(stream)>>>(a);
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
