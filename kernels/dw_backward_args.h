// dw_backward_args.h: the contract of the depthwise half of the backward (dw_silu_backward.cu), torch-free like
// fused_args.h. Given ga = dL/d act (act = silu(v), v = dw(x)), it computes, for one (b, c) row at a time:
//   gv[t]     = ga[t] * silu'(v[t])            (v recomputed from x, as eager's forward computed it)
//   dx[t']    = sum_k w_dw[c, k] * gv[t' + padding - k * dilation]    (the transposed dilated depthwise)
//   act[t]    = silu(v[t])                     (eager's bits: the input of the 1x1 conv's weight gradient)
//   dW_dw[c,k]= sum_{b,t} gv[t] * x[t - padding + k * dilation],   db_dw[c] = sum_{b,t} gv[t]
// and, for the 1x1 conv's bias, db_pw[o] = sum_{b,t} gy[b, o, t]. The reductions are written as per-block partial
// sums, partial[(c * (K + 1) + k) * n + tile * B + b] (k = K: the bias; n = tiles * B) and
// partial_pw[o * n + tile * B + b], which dw_backward_finish sums in a fixed order: deterministic, no atomics.
#pragma once
#include <cstdint>

struct DwBackwardArgs {
  const float* x;     // (B, C, T) float32, contiguous
  const float* ga;    // (B, C, T_out) float32, contiguous
  const float* gy;    // (B, C_out, T_out) float32, contiguous, or nullptr (no db_pw)
  const float* w_dw;  // (C, K) float32
  const float* b_dw;  // (C) float32, or nullptr
  float* dx;          // (B, C, T), or nullptr (x needs no gradient)
  float* act;         // (B, C, T_out), or nullptr (W_pw needs no gradient)
  float* partial;     // (C * (K + 1), tiles * B)
  float* partial_pw;  // (C_out, tiles * B) where gy is given
  int64_t B, C, C_out, T, T_out;
  int K, dilation, padding;
};

// Whether dw_silu_backward takes this shape: padding <= (K-1)*dilation <= 1024, its grid (C, tiles of 1024 steps,
// B) and dw_silu_forward's (B * C, tiles) within CUDA's limits, rows short enough for 32-bit in-row indices.
// Callers route other shapes elsewhere.
bool dw_backward_fits(int64_t B, int64_t C, int64_t T, int64_t T_out, int K, int dilation, int padding);
// Tiles along time the launch uses for these args (the partial buffers hold tiles * B sums per output).
int64_t dw_backward_tiles(const DwBackwardArgs& a);
// Launch on `stream` (a cudaStream_t). Throws std::runtime_error where dw_backward_fits is false.
void dw_silu_backward(const DwBackwardArgs& a, void* stream);
// The fixed-order sums of the partials: dW_dw (C, K), db_dw (C) where not nullptr, db_pw (C_out) where gy was given.
void dw_backward_finish(const DwBackwardArgs& a, float* dw_dw, float* db_dw, float* db_pw, void* stream);
// act = silu(dw(x)) (B, C, T_out) float32 with eager's bits, the recompute the 1x1 conv's backward needs where
// x needs no gradient; reads x, w_dw, b_dw and the shape of `a` only. Same limits as dw_silu_backward.
void dw_silu_forward(const DwBackwardArgs& a, float* act, void* stream);
