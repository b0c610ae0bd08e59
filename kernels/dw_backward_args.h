// dw_backward_args.h: the contract of the depthwise half of the backward (dw_silu_backward.cu), torch-free like
// fused_args.h. Given ga = dL/d act (act = silu(v), v = dw(x)), it computes, for one (b, c) row at a time:
//   gv[t]     = ga[t] * silu'(v[t])            (v recomputed from x, as eager's forward computed it)
//   dx[t']    = sum_k w_dw[c, k] * gv[t' + padding - k * dilation]    (the transposed dilated depthwise)
//   act[t]    = silu(v[t])                     (eager's bits: the input of the 1x1 conv's weight gradient)
//   dW_dw[c,k]= sum_{b,t} gv[t] * x[t - padding + k * dilation],   db_dw[c] = sum_{b,t} gv[t]
// and, for the 1x1 conv's bias, db_pw[o] = sum_{b,t} gy[b, o, t]. The reductions are written as per-block partial
// sums, partial[(c * (K + 1) + k) * n + tile * B + b] (k = K: the bias; n = tiles * B) and
// partial_pw[o * n + tile * B + b], which dw_backward_finish sums in a fixed order: deterministic, no atomics (rung 4's
// inline sums, below, instead add them into the gradients with atomics: backward="dgrad_kernel" without a
// deterministic switch).
// Rung 5 (dw_silu_backward_tc.cu) takes w_pw instead of ga and computes ga = W_pw^T gy itself, per 64-step tile on
// TF32 tensor cores; its partials have the same layout over its own tiles. Rung 8 (dw_silu_wgrad_wgmma.cu) takes
// ga and gy, writes no act and computes the 1x1 conv's weight gradient as well; its partials are per block.
#pragma once
#include <cstdint>

// The (K, dilation) pairs compiled for the vector paths (rungs 4 and 5): X(K, D) for each.
#define DWBW_VEC_SHAPES(X) \
  X(3, 1) X(3, 2) X(3, 3) X(3, 4) X(5, 1) X(5, 2) X(5, 3) X(5, 4) X(7, 1) X(7, 2) X(7, 3) X(7, 4) X(9, 1) X(9, 2) \
  X(9, 4)

// The (K, dilation) pairs compiled for backward rung 9 (dgrad_wgrad_wgmma.cu) and rung 4's gv form (a.gv_in).
#define DWBW_GV_SHAPES(X) X(3, 1) X(3, 2) X(3, 3) X(3, 4) X(5, 1) X(5, 2) X(5, 3) X(5, 4)

// Rung 5's tile: output steps per block. kTcMinC: the fewest channels (C and C_out) it takes: below, cuDNN's data
// gradient is not always a TF32 GEMM (logs/2026-12-02_c8639af_dgrad_numerics.txt: float32 at 8 and 24 channels),
// so rung 5's TF32 ga would leave eager's numbers there.
constexpr int kTcTile = 64, kTcMinC = 32;

struct DwBackwardArgs {
  const float* x;     // (B, C, T) float32, contiguous
  const float* ga;    // (B, C, T_out) float32, contiguous (rungs 3 and 4; rung 5: nullptr)
  const float* gy;    // (B, C_out, T_out) float32, contiguous, or nullptr (no db_pw; rung 5: always given)
  const float* w_pw;  // (C_out, C) float32: rung 5 only (it computes ga from gy), else nullptr
  const float* w_dw;  // (C, K) float32
  const float* b_dw;  // (C) float32, or nullptr
  float* dx;          // (B, C, T), or nullptr (x needs no gradient)
  float* act;         // (B, C, T_out), or nullptr (W_pw needs no gradient)
  float* partial;     // (C * (K + 1), tiles * B)
  float* partial_pw;  // (C_out, tiles * B) where db_pw is wanted, else nullptr
  int64_t B, C, C_out, T, T_out;
  int K, dilation, padding;
  bool gv_in = false;  // rung 4's gv form (after rung 9): ga holds gv = dL/dv, no SiLU terms; act, gy nullptr
  // The sums finished in rung 4 itself (backward="dgrad_kernel" where no deterministic algorithms are asked for; see
  // dw_backward_sums_inline): where `sums_w` is set, each block adds its K + 1 sums with atomicAdd into sums_w (dW_dw,
  // (C, K)) and sums_b (db_dw, (C); nullptr: no bias), zeroed before the launch (rung 10 zeroes them), instead of
  // writing `partial`; the order of the additions varies from run to run. Where `pw_partial` is set, the blocks of
  // linear index o < C_out sum its row o (n_pw partials of db_pw, rung 10's) into db_pw[o] in backward_finish's order.
  float* sums_w = nullptr;
  float* sums_b = nullptr;
  const float* pw_partial = nullptr;  // (C_out, n_pw)
  int64_t n_pw = 0;
  float* db_pw = nullptr;             // (C_out)
  // launched as a programmatic dependent of the stream's previous kernel (pdl.cuh) where the GPU and build allow
  bool dependent = false;
};

// Whether dw_silu_backward takes this shape: padding <= (K-1)*dilation <= 1024, its grid (C, tiles of 1024 steps,
// B) and dw_silu_forward's (B * C, tiles) within CUDA's limits, rows short enough for 32-bit in-row indices.
// Callers route other shapes elsewhere.
bool dw_backward_fits(int64_t B, int64_t C, int64_t T, int64_t T_out, int K, int dilation, int padding);
// Tiles along time the launch uses for these args (the partial buffers hold tiles * B sums per output): rung 5's
// 64-step tiles where a.w_pw is set, else 1024-step tiles.
int64_t dw_backward_tiles(const DwBackwardArgs& a);
// Whether rung 4's vector path takes these args: 'same' padding of an even span (T_out == T), T % 4 == 0, 16-byte
// aligned tensors, a compiled (K, dilation) pair.
bool dw_backward_vec_shape(const DwBackwardArgs& a);
// Whether rung 4 finishes the sums itself for these args (a.sums_w, a.pw_partial): its vector shapes (not the gv form),
// no gy (db_pw comes from a.pw_partial), and at least C_out blocks (C * tiles * B) for db_pw's rows.
bool dw_backward_sums_inline(const DwBackwardArgs& a);
// Whether rung 5 (dw_silu_backward_tc) takes these args: rung 4's vector shapes with kTcMinC <= C, C_out <= 128,
// float32, on a GPU of compute capability 8.0 or newer (mma.sync TF32), its grid within CUDA's limits.
bool dw_backward_tc_fits(const DwBackwardArgs& a);
// Rung 5's launch on `stream`: like dw_silu_backward with ga = W_pw^T gy computed in the kernel (TF32 operands
// rounded to nearest even, as cuDNN's data gradient rounds them, fp32 accumulation). Throws where
// dw_backward_tc_fits is false.
void dw_silu_backward_tc(const DwBackwardArgs& a, void* stream);
// Launch on `stream` (a cudaStream_t). Throws std::runtime_error where dw_backward_fits is false.
void dw_silu_backward(const DwBackwardArgs& a, void* stream);
// The fixed-order sums of the partials: dW_dw (C, K), db_dw (C) where not nullptr, db_pw (C_out) where not nullptr
// (partial_pw then holds its partials).
void dw_backward_finish(const DwBackwardArgs& a, float* dw_dw, float* db_dw, float* db_pw, void* stream);
// Every partial sum of one backward and where its total goes, for backward_finish's one launch: the depthwise
// kernel's (rungs 3-5: (C * (K + 1), n) as above; partial nullptr: none), db_pw's ((C_out, n_pw) from rungs 3-5 or
// rung 6; nullptr: none) and dW_pw's (rung 6's (n_w, C_out, C_in); nullptr: none).
struct BackwardSums {
  const float* partial = nullptr;     // (C * (K + 1), n)
  int64_t n = 0, C = 0;
  int K = 0;
  float* dw_dw = nullptr;             // (C, K)
  float* db_dw = nullptr;             // (C), or nullptr
  const float* partial_pw = nullptr;  // (C_out, n_pw)
  int64_t n_pw = 0, C_out = 0;
  float* db_pw = nullptr;             // (C_out)
  const float* partial_w = nullptr;   // (n_w, C_out, C_in)
  int64_t n_w = 0, C_in = 0;
  float* dw_pw = nullptr;             // (C_out, C_in)
};
void backward_finish(const BackwardSums& s, void* stream);
// act = silu(dw(x)) (B, C, T_out) float32 with eager's bits, the recompute the 1x1 conv's backward needs where
// x needs no gradient; reads x, w_dw, b_dw and the shape of `a` only. Same limits as dw_silu_backward.
void dw_silu_forward(const DwBackwardArgs& a, float* act, void* stream);
// Rung 8 (dw_silu_wgrad_wgmma.cu, TMA + wgmma): rung 4's outputs from ga, x and gy (a.act and a.w_pw nullptr: act
// is not written, it stays in shared memory as the GEMM's operand) and the 1x1 conv's weight gradient dW_pw = gy
// act^T (TF32 operands rounded to nearest even, as cuDNN's weight gradient), in one pass. Each of its G blocks
// writes partials: partial[(c * (K + 1) + k) * G + blk], partial_pw[o * G + blk] (where not nullptr) and
// partial_w[(blk * C_out + o) * C + c]; backward_finish sums them (n = n_pw = n_w = G). Whether it takes the args
// (built for sm_90a, an sm_90 GPU, rung 4's vector shapes with K <= 5, kTcMinC <= C, C_out <= 128), G for them (one
// block per SM at most), and the launch (throws where it does not fit).
bool dw_wgrad_fused_fits(const DwBackwardArgs& a);
int64_t dw_wgrad_fused_blocks(const DwBackwardArgs& a);
void dw_silu_wgrad_fused(const DwBackwardArgs& a, float* partial_w, int64_t G, void* stream);
// Backward rung 9 (dgrad_wgrad_wgmma.cu, TMA + wgmma): from x and gy alone, the SiLU's gradient
//   gv[b, c, t] = (W_pw^T gy)[b, c, t] * silu'(v[b, c, t])     (the 1x1 conv's data gradient on TF32 tensor cores)
// and the 1x1 conv's weight and bias gradients, dW_pw = gy act^T (TF32) and db_pw = sum gy, as partials
// partial_w[(cluster * C_out + o) * C + c] (one per cluster of dgwg_cluster(G) blocks) and partial_pw[o * G + blk],
// for backward_finish (n_w = G / dgwg_cluster(G), n_pw = G). Rung 4's
// gv form then makes dx, dW_dw and db_dw from gv and x. The TF32 GEMMs round their operands to nearest even, as
// cuDNN's TF32 data and weight gradients do: callers run it only where both of those are TF32 GEMMs.
struct DgwgArgs {
  const float* x;      // (B, C, T) float32, contiguous, 16-byte aligned
  const float* gy;     // (B, C_out, T), the same
  const float* w_pw;   // (C_out, C)
  const float* w_dw;   // (C, K)
  const float* b_dw;   // (C), or nullptr
  float* gv;           // (B, C, T), 16-byte aligned
  float* partial_w;    // (G, C_out, C)
  float* partial_pw;   // (C_out, G), or nullptr (no db_pw)
  int64_t B, C, C_out, T;
  int K, dilation, padding;
};
// Whether rung 9 takes the args (built for sm_90a, an sm_90 GPU, DWBW_GV_SHAPES with 'same' padding, T % 4 == 0,
// kTcMinC <= C, C_out <= 128, x and gy 16-byte aligned; the outputs gv and partial_w are not looked at: the caching
// allocator's blocks are aligned), G for them (one block per SM at most) and the launch (throws where it
// does not fit).
// G (one block per SM at most, even where above 1) and the cluster size of a launch of G blocks (2 where G is even,
// else 1): partial_w holds G / dgwg_cluster(G) partials (one per cluster), partial_pw G.
bool dgwg_fits(const DgwgArgs& a);
int64_t dgwg_blocks(const DgwgArgs& a);
int dgwg_cluster(int64_t G);
void dgrad_wgrad(const DgwgArgs& a, int64_t G, void* stream);
