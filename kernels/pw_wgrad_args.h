// pw_wgrad_args.h: the contract of backward rung 6 (pw_weight_grad.cu), torch-free like dw_backward_args.h.
// The 1x1 conv's weight and bias gradients from its input act = silu(dw(x)) (written by rungs 3-5) and gy:
//   dW_pw[o, c]  = sum_{b,t} gy[b, o, t] act[b, c, t]   (TF32 operands rounded to nearest even, fp32 sums)
//   db_pw[o]     = sum_{b,t} gy[b, o, t]               (unrounded gy)
// Each of the launch's G blocks owns a contiguous range of (b, 32-step chunk) pairs and writes its sums as
// partials: partial_w[(blk * C_out + o) * C + c] and partial_b[o * G + blk]; backward_finish (dw_backward_args.h)
// sums them over the blocks in a fixed order: deterministic, no atomics.
#pragma once
#include <cstdint>

struct PwWgradArgs {
  const float* act;   // (B, C, T) float32, contiguous, 16-byte aligned (T: the 1x1 conv's length, T_out)
  const float* gy;    // (B, C_out, T) float32, contiguous, 16-byte aligned
  float* partial_w;   // (G, C_out, C)
  float* partial_b;   // (C_out, G), or nullptr (no db_pw)
  int64_t B, C, C_out, T;
};

// Whether rung 6 takes these args: rows of whole float4s (T % 4 == 0, act and gy 16-byte aligned), kTcMinC <= C,
// C_out <= 128 (kTcMinC: dw_backward_args.h), a GPU of compute capability 8.0 or newer (mma.sync TF32).
bool pw_wgrad_fits(const PwWgradArgs& a);
// G, the launch's blocks (the partials' count): at most one per SM (rung 7: PW_TMA_SM_DIV), never more than the
// (b, chunk) pairs.
int64_t pw_wgrad_blocks(const PwWgradArgs& a);
// The launch on `stream` (a cudaStream_t): rung 7 where pw_wgrad_tma_fits, else rung 6; throws
// std::runtime_error where pw_wgrad_fits is false.
void pw_wgrad(const PwWgradArgs& a, void* stream);

// Rung 7 (pw_weight_grad_wgmma.cu, TMA + wgmma): whether it takes these args (built for sm_90a, an sm_90 GPU,
// pw_wgrad_fits' shapes), its block count and its launch with G blocks. pw_wgrad and pw_wgrad_blocks take it where
// it fits.
bool pw_wgrad_tma_fits(const PwWgradArgs& a);
int64_t pw_wgrad_tma_blocks(const PwWgradArgs& a);
void pw_wgrad_tma(const PwWgradArgs& a, int64_t G, void* stream);

// Backward rung 10 (pw_data_grad_wgmma.cu, TMA + wgmma, dy as the register operand): the 1x1 conv's data gradient
//   ga[b, c, t] = sum_o W_pw[o, c] gy[b, o, t]     (TF32 operands rounded to nearest even, as cuDNN's TF32 data
//                                                   gradient rounds them; fp32 accumulation)
// and db_pw's partials from the same reads of gy (unrounded): partial_b[o * G + blk], for backward_finish (n_pw = G).
struct PwDgradArgs {
  const float* gy;    // (B, C_out, T) float32, contiguous, 16-byte aligned
  const float* w_pw;  // (C_out, C) float32, contiguous
  float* ga;          // (B, C, T), contiguous, 8-byte aligned
  float* partial_b;   // (C_out, G), or nullptr (no db_pw)
  int64_t B, C, C_out, T;
  // zero0[0 .. n0) and zero1[0 .. n1) set to 0 by the kernel (block 0), for the next kernel's atomic sums (rung 4's
  // inline sums: dW_dw and db_dw); nullptr: none
  float* zero0 = nullptr;
  float* zero1 = nullptr;
  int64_t n0 = 0, n1 = 0;
  // launched as a programmatic dependent of the stream's previous kernel (pdl.cuh) where the GPU and build allow;
  // the next kernel (rung 4, its dependent) launches as its blocks exit (PWDG_EARLY_TRIGGER=1: as they start)
  bool dependent = false;
};
// Whether rung 10 takes the args (built for sm_90a, an sm_90 GPU, T % 4 == 0, gy 16-byte aligned, 1 <= C, C_out <=
// 128), G for them (one block per SM at most, never more than the 64-step tiles) and the launch (throws where it
// does not fit). The caller runs it only where cuDNN's data gradient is a TF32 GEMM at the shape.
bool pw_dgrad_tma_fits(const PwDgradArgs& a);
int64_t pw_dgrad_tma_blocks(const PwDgradArgs& a);
void pw_dgrad_tma(const PwDgradArgs& a, int64_t G, void* stream);
