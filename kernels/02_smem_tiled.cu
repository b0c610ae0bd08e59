// variant: accuracy=strict dtypes=float32
// Rung 2, smem tiled ("depthwise once per tile"): a block owns one (batch b, time tile) and first
// computes depthwise + bias + SiLU for ALL C_in channels of its tile ONCE into shared memory
// (act[C_in][tt], x read through L1). Only then does it compute the pointwise outputs of every C_out
// channel from that tile. Rung 1 recomputed the depthwise+SiLU C_out (=128) times; here it runs once.
// Each thread owns one time column and OC_PER_THREAD output channels, so one smem read of act feeds
// OC_PER_THREAD FMAs; W_pw is still read from global memory (warp-uniform address -> L1 broadcast).
// Predicted (headline B=16 C=128 T=2048 K=5 d=2): the pointwise loop is load-issue bound:
//   537M FMA x (1 LDS + 2 LDG)/2 FMA / 32 lanes = 25M warp loads / 132 SMs ~ 190K clk @ 1.98 GHz ~ 96 us
//   (+ ~3 us depthwise/SiLU, DRAM 33.6 MB = 8 us hidden)  =>  ~100 us.
// Measured: see the README's results table (generated from results/timings.csv) and docs/ladder.md.
//   Target <= 150 us missed: the pointwise loop issues ~1.5 loads per FMA (W_pw from L1, act from smem)
//   and sits on load-issue throughput, as predicted, plus the serialized dw phase of each block.
// Shared memory: dynamic only (C_in * TILE_T * 4 = 32 KB at headline).
// Shape limits: one act column (C_in * 4 bytes) must fit in a block's shared memory (TILE_T shrinks at run
//   time until C_in x TILE_T fits); B * ceil(T_out / tile) blocks must fit a 1-D grid.
// Knobs: TILE_T, THREADS, OC_PER_THREAD (below).
#include <algorithm>
#include "common.cuh"

// ---- Tunables (override with -DNAME=value) ----
// TILE_T: time steps per block (the act tile is C_in x TILE_T floats of shared memory). The launcher
//         shrinks it at run time when C_in x TILE_T x 4 bytes exceeds the opt-in shared memory.
#ifndef TILE_T
#define TILE_T 64
#endif
// THREADS: threads per block. Thread i works on time column i % tt for output channels i / tt + k*rows.
#ifndef THREADS
#define THREADS 256
#endif
// OC_PER_THREAD: output channels each thread accumulates at once (act value reused from a register).
#ifndef OC_PER_THREAD
#define OC_PER_THREAD 2
#endif
static_assert(TILE_T >= 1 && TILE_T <= THREADS, "TILE_T must be in [1, THREADS]");
static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS must be a multiple of 32, at most 1024");
static_assert(OC_PER_THREAD >= 1 && OC_PER_THREAD <= 16, "OC_PER_THREAD must be in [1, 16]");

namespace {

// grid.x = B * n_ttiles (flattened (b, time tile)); block = THREADS; dynamic smem = C_in * tt floats.
__global__ void __launch_bounds__(THREADS)
smem_tiled_kernel(const float* __restrict__ x, const float* __restrict__ w_dw, const float* __restrict__ b_dw,
                  const float* __restrict__ w_pw, const float* __restrict__ b_pw, float* __restrict__ y,
                  int64_t C_in, int64_t C_out, int64_t T, int64_t T_out, int K, int dilation, int padding,
                  int tt, int64_t n_ttiles) {
  extern __shared__ float act[];  // act[ic * tt + j] = silu(dw(x))[b, ic, t0 + j]
  const int64_t b = blockIdx.x / n_ttiles;
  const int64_t t0 = (blockIdx.x % n_ttiles) * tt;
  const int cols = static_cast<int>(T_out - t0 < tt ? T_out - t0 : tt);  // valid time columns in this tile

  // Phase 1: depthwise + bias + SiLU for every (ic, column) of the tile, once. Consecutive threads take
  // consecutive columns, so the x reads of a warp are coalesced and the smem writes conflict-free.
  const int n_act = static_cast<int>(C_in) * tt;  // fits in int: it fits in shared memory
  for (int e = threadIdx.x; e < n_act; e += THREADS) {
    const int ic = e / tt, j = e % tt;
    float v = 0.0f;  // columns past T_out are never stored; keep them finite anyway
    if (j < cols)
      v = dw_silu_at(x + (b * C_in + ic) * T, w_dw + static_cast<int64_t>(ic) * K, b_dw ? b_dw[ic] : 0.0f,
                     t0 + j, T, K, dilation, padding);
    act[e] = v;
  }
  __syncthreads();

  // Phase 2: pointwise. Thread -> (column j, channel row r); it handles OC_PER_THREAD channels
  // oc = oc0 + i * rows at a time. A warp shares r (when tt >= 32), so its W_pw loads are one broadcast.
  const int rows = THREADS / tt;
  const int j = threadIdx.x % tt, r = threadIdx.x / tt;
  if (r >= rows || j >= cols) return;  // no barrier follows
  const int64_t t = t0 + j;
  const int cin = static_cast<int>(C_in);  // C_in * tt floats fit in smem, so C_in fits in int
  for (int64_t oc0 = r; oc0 < C_out; oc0 += static_cast<int64_t>(rows) * OC_PER_THREAD) {
    float acc[OC_PER_THREAD];
    const float* wrow[OC_PER_THREAD];
#pragma unroll
    for (int i = 0; i < OC_PER_THREAD; ++i) {
      const int64_t oc_i = oc0 + static_cast<int64_t>(i) * rows;
      const int64_t oc = oc_i < C_out ? oc_i : C_out - 1;  // clamp; the result is discarded below
      acc[i] = b_pw ? b_pw[oc] : 0.0f;
      wrow[i] = w_pw + oc * C_in;
    }
#pragma unroll 4
    for (int ic = 0; ic < cin; ++ic) {
      const float a = act[ic * tt + j];
#pragma unroll
      for (int i = 0; i < OC_PER_THREAD; ++i) acc[i] = fmaf(wrow[i][ic], a, acc[i]);
    }
#pragma unroll
    for (int i = 0; i < OC_PER_THREAD; ++i) {
      const int64_t oc = oc0 + static_cast<int64_t>(i) * rows;
      if (oc < C_out) y[(b * C_out + oc) * T_out + t] = acc[i];  // consecutive threads: consecutive t
    }
  }
}

int smem_budget(const FusedArgs& a) { return a.max_smem_optin > 0 ? a.max_smem_optin : 48 * 1024; }

// Time tile actually used: TILE_T, shrunk so that the C_in x tt act tile fits in shared memory.
int64_t time_tile(const FusedArgs& a) {
  return std::min<int64_t>(TILE_T, smem_budget(a) / (a.C_in * static_cast<int64_t>(sizeof(float))));
}

}  // namespace

const char* fused_unsupported(const FusedArgs& a) {
  if (const char* why = require_float32(a)) return why;
  if (time_tile(a) < 1)
    return "C_in * 4 bytes exceeds the shared memory of one block: one time column of the act tile does not fit";
  if (a.B * ceil_div<int64_t>(a.T_out, time_tile(a)) > 0x7fffffffLL)
    return "B * ceil(T_out / tile) exceeds the 2^31-1 blocks of a 1-D grid";
  return nullptr;
}

void fused_forward(const FusedArgs& a, void* stream) {
  const int tt = static_cast<int>(time_tile(a));
  const int64_t n_ttiles = ceil_div<int64_t>(a.T_out, tt);
  const int64_t blocks = a.B * n_ttiles;  // >= 1: B >= 1 and T_out >= 1
  const size_t smem = static_cast<size_t>(a.C_in) * tt * sizeof(float);
  if (smem > 48 * 1024)
    CUDA_CHECK(cudaFuncSetAttribute(smem_tiled_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(smem)));
  smem_tiled_kernel<<<static_cast<unsigned>(blocks), THREADS, smem, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const float*>(a.x), a.w_dw, a.b_dw, a.w_pw, a.b_pw, static_cast<float*>(a.y), a.C_in, a.C_out,
      a.T, a.T_out, a.K, a.dilation, a.padding, tt, n_ttiles);
}
