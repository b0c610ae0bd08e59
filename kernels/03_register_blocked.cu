// variant: accuracy=strict dtypes=float32
// Rung 3, register blocked: the pointwise conv is a GEMM per batch, y[b] (C_out x T_out) =
// W_pw (C_out x C_in) * act[b] (C_in x T_out). A block computes a BLOCK_OC x TILE_T tile of y, walking
// C_in in chunks of IC_CHUNK: per chunk it stages W^T (the A operand, [ic][oc]) and the act tile (the
// B operand, [ic][t], depthwise + SiLU computed once per chunk, x read through L1) in shared memory,
// then every thread accumulates a TM x TN register tile as outer products (SGEMM_CUDA style): per ic,
// TM + TN floats come from smem as float4s and feed TM * TN FMAs. Rung 2 read W_pw from global memory
// and did 1.5 loads per FMA; here it is 3 LDS.128 per 32 FMAs, so the kernel becomes FMA bound.
// Predicted (headline): 1.07 GFLOP = 537M FMA / (132 SMs x 128 FMA/clk x 1.98 GHz) = 16 us at peak;
//   at ~70% of peak (two barriers per 16-ic chunk, no load/compute overlap) ~23 us + ~3 us SiLU => ~26 us.
// Measured: see the README's results table (generated from results/timings.csv) and docs/ladder.md.
//   Target <= 30 us missed: each 16-channel chunk computes the depthwise straight from global x
//   (K scattered loads per act) between two barriers, W^T chunk loads are synchronous, and 3 blocks/SM
//   (75 registers) do not hide those latencies; its 537M FMAs alone would take 16 us at peak FP32 rate.
// Shared memory: static 12544 B (W^T 16 x 132 + act 16 x 64 floats); 256 threads -> 3 blocks/SM by registers.
// Shape limits: ceil(C_out / BLOCK_OC) <= 65535 (grid.y); B * ceil(T_out / TILE_T) blocks must fit a 1-D grid.
// Knobs: BLOCK_OC, TILE_T, IC_CHUNK, TM x TN (below).
#include "common.cuh"

// ---- Tunables (override with -DNAME=value) ----
// BLOCK_OC: output channels per block tile (M). C_out > BLOCK_OC uses more blocks along grid.y (each
//           recomputes its act tile).
#ifndef BLOCK_OC
#define BLOCK_OC 128
#endif
// TILE_T: time steps per block tile (N).
#ifndef TILE_T
#define TILE_T 64
#endif
// IC_CHUNK: input channels staged in shared memory per step (the GEMM's K chunk).
#ifndef IC_CHUNK
#define IC_CHUNK 16
#endif
// TM x TN: the register tile of one thread (TM output channels x TN consecutive time steps).
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 4
#endif
static_assert(TM % 4 == 0 && TN % 4 == 0, "TM and TN must be multiples of 4 (float4 smem reads)");
static_assert(BLOCK_OC % TM == 0 && TILE_T % TN == 0, "the block tile must be a whole number of thread tiles");
static_assert(IC_CHUNK % 8 == 0, "IC_CHUNK must be a multiple of 8 (W^T loader: 8 ic x 4 oc per warp)");

namespace {

constexpr int kThreadsT = TILE_T / TN;                     // threads along time
constexpr int kThreads = (BLOCK_OC / TM) * kThreadsT;      // threads per block
constexpr int kLdw = BLOCK_OC + 4;                         // W^T row stride: the padding makes the transposing
                                                           // store conflict-free (bank = 4*ic + oc)
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "(BLOCK_OC/TM)*(TILE_T/TN) must be a multiple of 32, <= 1024");
static_assert(BLOCK_OC % 4 == 0, "BLOCK_OC must be a multiple of 4");
static_assert((IC_CHUNK * kLdw + IC_CHUNK * TILE_T) * 4 <= 48 * 1024, "static smem tile exceeds 48 KB");

// grid.x = B * n_ttiles (flattened (b, time tile)), grid.y = ceil(C_out / BLOCK_OC); block = kThreads.
__global__ void __launch_bounds__(kThreads)
register_blocked_kernel(const float* __restrict__ x, const float* __restrict__ w_dw,
                        const float* __restrict__ b_dw, const float* __restrict__ w_pw,
                        const float* __restrict__ b_pw, float* __restrict__ y, int64_t C_in, int64_t C_out,
                        int64_t T, int64_t T_out, int K, int dilation, int padding, int64_t n_ttiles) {
  __shared__ __align__(16) float Ws[IC_CHUNK * kLdw];    // Ws[k][o] = w_pw[oc0 + o, ic0 + k]  (A^T)
  __shared__ __align__(16) float As[IC_CHUNK * TILE_T];  // As[k][j] = act[b, ic0 + k, t0 + j] (B)

  const int64_t b = blockIdx.x / n_ttiles;
  const int64_t t0 = (blockIdx.x % n_ttiles) * TILE_T;
  const int64_t oc0 = static_cast<int64_t>(blockIdx.y) * BLOCK_OC;
  const int tid = threadIdx.x;
  const int tr = tid / kThreadsT, tc = tid % kThreadsT;  // thread tile: rows tr*TM.., columns tc*TN..

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t oc = oc0 + tr * TM + i;
    const float bias = (b_pw && oc < C_out) ? b_pw[oc] : 0.0f;
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = bias;
  }

  for (int64_t ic0 = 0; ic0 < C_in; ic0 += IC_CHUNK) {
    __syncthreads();  // the previous chunk's FMAs are done with Ws / As

    // W^T chunk, zero outside [C_out) x [C_in). Lane mapping: 8 consecutive ic x 4 oc per warp, so each
    // 8-lane group reads one 32-byte sector of a w_pw row and the 32 smem banks (4*ic + oc) are distinct.
    for (int e = tid; e < IC_CHUNK * BLOCK_OC; e += kThreads) {
      const int kl = e & 7, ol = (e >> 3) & 3, rest = e >> 5;
      const int o = (rest % (BLOCK_OC / 4)) * 4 + ol, k = (rest / (BLOCK_OC / 4)) * 8 + kl;
      const int64_t oc = oc0 + o, ic = ic0 + k;
      Ws[k * kLdw + o] = (oc < C_out && ic < C_in) ? w_pw[oc * C_in + ic] : 0.0f;
    }
    // act chunk: depthwise + bias + SiLU, zero for ic >= C_in or t >= T_out.
    for (int e = tid; e < IC_CHUNK * TILE_T; e += kThreads) {
      const int k = e / TILE_T, j = e % TILE_T;
      const int64_t ic = ic0 + k, t = t0 + j;
      float v = 0.0f;
      if (ic < C_in && t < T_out)
        v = dw_silu_at(x + (b * C_in + ic) * T, w_dw + ic * K, b_dw ? b_dw[ic] : 0.0f, t, T, K, dilation, padding);
      As[e] = v;
    }
    __syncthreads();

    // Outer products: per ic, TM weights (2 float4, a broadcast: a warp holds only 2 distinct tr) and TN
    // activations (float4s of 16 consecutive addresses per warp: conflict-free).
#pragma unroll
    for (int k = 0; k < IC_CHUNK; ++k) {
      float a[TM], v[TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 w4 = *reinterpret_cast<const float4*>(&Ws[k * kLdw + tr * TM + i]);
        a[i] = w4.x; a[i + 1] = w4.y; a[i + 2] = w4.z; a[i + 3] = w4.w;
      }
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 x4 = *reinterpret_cast<const float4*>(&As[k * TILE_T + tc * TN + j]);
        v[j] = x4.x; v[j + 1] = x4.y; v[j + 2] = x4.z; v[j + 3] = x4.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], v[j], acc[i][j]);
    }
  }

  // Epilogue: scalar, bounds-checked stores (rung 4 adds float4 stores).
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    const int64_t oc = oc0 + tr * TM + i;
    if (oc >= C_out) continue;
    float* yrow = y + (b * C_out + oc) * T_out;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int64_t t = t0 + tc * TN + j;
      if (t < T_out) yrow[t] = acc[i][j];
    }
  }
}

}  // namespace

const char* fused_unsupported(const FusedArgs& a) {
  if (const char* why = require_float32(a)) return why;
  if (ceil_div<int64_t>(a.C_out, BLOCK_OC) > 65535) return "ceil(C_out / BLOCK_OC) exceeds grid.y's 65535 blocks";
  if (a.B * ceil_div<int64_t>(a.T_out, TILE_T) > 0x7fffffffLL)
    return "B * ceil(T_out / TILE_T) exceeds the 2^31-1 blocks of a 1-D grid";
  return nullptr;
}

void fused_forward(const FusedArgs& a, void* stream) {
  const int64_t n_ttiles = ceil_div<int64_t>(a.T_out, TILE_T);
  const dim3 grid(static_cast<unsigned>(a.B * n_ttiles), static_cast<unsigned>(ceil_div<int64_t>(a.C_out, BLOCK_OC)));
  register_blocked_kernel<<<grid, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(a.x), a.w_dw, a.b_dw, a.w_pw, a.b_pw, static_cast<float*>(a.y), a.C_in, a.C_out,
      a.T, a.T_out, a.K, a.dilation, a.padding, n_ttiles);
}
