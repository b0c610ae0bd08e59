// fused_args.h: the one contract between the host launcher (launcher.cpp) and every kernel file.
// Plain C++ (no torch, no CUDA), so that .cu files compile with nvcc alone and quickly.
//
// The op, for every b < B, oc < C_out, t < T_out:
//   act[b, ic, t] = silu(b_dw[ic] + sum_k w_dw[ic, k] * x[b, ic, t - padding + k * dilation])  (x = 0 outside [0, T))
//   y[b, oc, t]   = b_pw[oc] + sum_ic w_pw[oc, ic] * act[b, ic, t]
// with T_out = T + 2 * padding - dilation * (K - 1)  (PyTorch's Conv1d output length).
#pragma once
#include <cstdint>

enum FusedDtype : int { FUSED_F32 = 0, FUSED_BF16 = 1, FUSED_F16 = 2 };

struct FusedArgs {
  const void* x;       // (B, C_in, T), contiguous, element type `dtype`
  void* y;             // (B, C_out, T_out), contiguous, element type `dtype`
  const float* w_dw;   // (C_in, K) float32
  const float* b_dw;   // (C_in) float32, or nullptr when bias is off
  const float* w_pw;   // (C_out, C_in) float32
  const float* b_pw;   // (C_out) float32, or nullptr when bias is off
  int64_t B, C_in, C_out, T, T_out;
  int K, dilation, padding;
  int dtype;           // FusedDtype of x and y
  int num_sms;         // multiprocessors on the device (0 on CPU)
  int max_smem_optin;  // largest dynamic shared memory a block may opt in to, bytes (0 on CPU)
  int cc;              // compute capability of x's device, major * 10 + minor (0 on CPU)
};

// Every kernel file defines exactly these two functions.
// nullptr when this variant computes `a` correctly; otherwise a sentence saying what it cannot do.
const char* fused_unsupported(const FusedArgs& a);
// Launch on `stream` (a cudaStream_t; unused on CPU). Throws std::runtime_error on a CUDA API error;
// the launcher checks cudaGetLastError() after it returns.
void fused_forward(const FusedArgs& a, void* stream);

#ifdef FUSED_TRACE
// Kernel files that support FUSED_TRACE=1 (a timing experiment: rungs 09-12) also define this: the last
// launch's per-block event clocks (kTraceSlots uint64 per block, 0 = not reached) -> dst (at most `max`
// values); returns the count and clears the record.
int fused_trace_read(uint64_t* dst, int max);
// The record's layout, so readers need not copy it: values per block, the first per-tile slot, the tiles
// recorded, the phases recorded per tile (in WgTracePhase order: x landed, act free, dw done, mma issued,
// mma done, y stored, barrier).
void fused_trace_layout(int* slots, int* tile0, int* tiles, int* phases);
#endif
