// variant: accuracy=strict dtypes=float32
// Rung 0, cpu: the C++ CPU variant, built through the same fused_jit.load and launcher as the CUDA
// rungs, so the whole path (load, ModelNew, check, bench, results) runs and is tested without a GPU.
// Same plan as the GPU rung 2: per (batch, time tile) compute depthwise + bias + SiLU for all input
// channels once into a small buffer, then the pointwise as loops over time that the compiler vectorizes.
// OpenMP threads take (batch, time tile) pairs.
#include <algorithm>
#include <cmath>
#include <vector>
#include "fused_args.h"

#ifndef CPU_TILE_T
#define CPU_TILE_T 256  // time steps per work item: act buffer = C_in * CPU_TILE_T floats
#endif

const char* fused_unsupported(const FusedArgs& a) {
  return a.dtype == FUSED_F32 ? nullptr : "this variant takes float32 input only";
}

void fused_forward(const FusedArgs& a, void* /*stream*/) {
  const float* x = static_cast<const float*>(a.x);
  float* y = static_cast<float*>(a.y);
  const int64_t tiles = (a.T_out + CPU_TILE_T - 1) / CPU_TILE_T;
  const int64_t items = a.B * tiles;
#pragma omp parallel
  {
    std::vector<float> act(static_cast<size_t>(a.C_in) * CPU_TILE_T);
    std::vector<float> out(CPU_TILE_T);
#pragma omp for schedule(static)
    for (int64_t item = 0; item < items; ++item) {
      const int64_t b = item / tiles, t0 = (item % tiles) * CPU_TILE_T;
      const int64_t n = std::min<int64_t>(CPU_TILE_T, a.T_out - t0);
      for (int64_t ic = 0; ic < a.C_in; ++ic) {  // depthwise + bias + SiLU, once per (ic, t)
        const float* xrow = x + (b * a.C_in + ic) * a.T;
        const float* w = a.w_dw + ic * a.K;
        const float bias = a.b_dw ? a.b_dw[ic] : 0.0f;
        float* arow = act.data() + ic * CPU_TILE_T;
        for (int64_t j = 0; j < n; ++j) {
          float v = bias;
          int64_t src = t0 + j - a.padding;
          for (int k = 0; k < a.K; ++k, src += a.dilation)
            if (src >= 0 && src < a.T) v += w[k] * xrow[src];
          arow[j] = v / (1.0f + std::exp(-v));
        }
      }
      for (int64_t oc = 0; oc < a.C_out; ++oc) {  // pointwise: out[t] = b + sum_ic w[oc, ic] * act[ic, t]
        const float bias = a.b_pw ? a.b_pw[oc] : 0.0f;
        std::fill(out.begin(), out.begin() + n, bias);
        const float* wrow = a.w_pw + oc * a.C_in;
        for (int64_t ic = 0; ic < a.C_in; ++ic) {
          const float w = wrow[ic];
          const float* arow = act.data() + ic * CPU_TILE_T;
          for (int64_t j = 0; j < n; ++j) out[j] += w * arow[j];  // vectorizes (std::fma would be a libm call)
        }
        std::copy(out.begin(), out.begin() + n, y + (b * a.C_out + oc) * a.T_out + t0);
      }
    }
  }
}
