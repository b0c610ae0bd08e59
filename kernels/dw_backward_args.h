// dw_backward_args.h: the contract of the depthwise half of the backward (dw_silu_backward.cu), torch-free like
// fused_args.h. Given ga = dL/d act (act = silu(v), v = dw(x)), it computes, for one (b, c) row at a time:
//   gv[t]     = ga[t] * silu'(v[t])            (v recomputed from x, as eager's forward computed it)
//   dx[t']    = sum_k w_dw[c, k] * gv[t' + padding - k * dilation]    (the transposed dilated depthwise)
//   dW_dw[c,k]= sum_{b,t} gv[t] * x[t - padding + k * dilation],   db_dw[c] = sum_{b,t} gv[t]
// The two reductions are written as per-block partial sums, partial[tile, b, c, 0..K] (K = the bias), which the
// caller sums over (tile, b) with torch.sum: deterministic, no atomics.
#pragma once
#include <cstdint>

struct DwBackwardArgs {
  const float* x;     // (B, C, T) float32, contiguous
  const float* ga;    // (B, C, T_out) float32, contiguous
  const float* w_dw;  // (C, K) float32
  const float* b_dw;  // (C) float32, or nullptr
  float* dx;          // (B, C, T)
  float* partial;     // (tiles, B, C, K + 1)
  int64_t B, C, T, T_out;
  int K, dilation, padding;
};

// Tiles along time the launch uses for these args (the partial buffer's first dimension).
int64_t dw_backward_tiles(const DwBackwardArgs& a);
// Launch on `stream` (a cudaStream_t). Throws std::runtime_error on a CUDA API error.
void dw_silu_backward(const DwBackwardArgs& a, void* stream);
// act = silu(dw(x)) (B, C, T_out) float32 with eager's bits, the recompute the 1x1 conv's backward needs; reads
// x, w_dw, b_dw and the shape of `a` only. Same limits as dw_silu_backward.
void dw_silu_forward(const DwBackwardArgs& a, float* act, void* stream);
