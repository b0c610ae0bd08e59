// variant: accuracy=strict dtypes=float32
// Rung 4, vectorized + pipelined + persistent: rung 3's BLOCK_OC x TILE_T register-blocked GEMM, plus
//  * a persistent grid (num_sms x blocks/SM) looping over tiles; W_pw^T of the block's output-channel
//    tile stays resident in shared memory (loaded once, not once per chunk per tile);
//  * the x window of a chunk (IC_CHUNK rows x TILE_T + dilated halo) is staged with cp.async, 16-byte
//    cp.async.cg when T % 4 == 0 (zero-fill for the padding halo), 4-byte cp.async.ca otherwise; the
//    NEXT step's window is in flight while this step computes depthwise+SiLU and its FMAs (2 stages);
//  * float4 (st.global.cs) stores of the output when T_out % 4 == 0, scalar otherwise;
//  * padded W^T rows (BLOCK_OC + 4) so the transposing W store is bank-conflict free; float4 smem reads.
// Fallbacks keep every shape correct: W^T streamed per chunk through the 2 stages when the resident
// copy does not fit, and depthwise read straight from global when the halo window does not fit.
// Predicted (headline): FMA bound, 537M FMA / (132 SMs x 128 FMA/clk x 1.98 GHz) = 16.0 us at peak;
//   ~80% of peak with loads hidden behind compute -> 20 us, + ~1 us of SiLU not overlapped => ~21 us
//   (DRAM 33.6 MB / 4.27 TB/s = 7.9 us fully overlapped).
// Measured: see the README's results table (generated from results/timings.csv) and docs/ladder.md.
//   Target <= 22 us missed by a wide margin. ncu: issue-bound on the depthwise phase (runtime-K loop, index
//   arithmetic, accurate expf/div) and the 2 barriers per 32-channel step, at low occupancy (127 registers,
//   2 blocks/SM). Closing it: compile-time K/dilation taps, a register-resident sliding window for the
//   depthwise, fewer/larger steps per barrier.
// Shared memory: dynamic, at headline 95232 B (W^T 128 x 132 + x 2 x 32 x 76 + act 32 x 64 floats)
//   -> 2 blocks/SM; __launch_bounds__(256, 2) caps registers at 128.
// Shape limits: float32 only; every shape runs through the fallbacks above (refused only if even streamed
//   W^T with unstaged x does not fit, which the default tiles cannot hit).
// Knobs: BLOCK_OC, TILE_T, IC_CHUNK, TM x TN, BLOCKS_PER_SM (below); the sweep's choice is in results/tuned.json.
#include <algorithm>
#include "common.cuh"
#include "cp_async.cuh"

// ---- Tunables (override with -DNAME=value) ----
// BLOCK_OC: output channels per tile (GEMM M). C_out > BLOCK_OC: tiles also walk the C_out chunks.
#ifndef BLOCK_OC
#define BLOCK_OC 128
#endif
// TILE_T: time steps per tile (GEMM N).
#ifndef TILE_T
#define TILE_T 64
#endif
// IC_CHUNK: input channels per pipeline step (GEMM K chunk; one x window / act tile of IC_CHUNK rows).
#ifndef IC_CHUNK
#define IC_CHUNK 32
#endif
// TM x TN: register tile of one thread (TM output channels x TN consecutive time steps).
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 4
#endif
// BLOCKS_PER_SM: persistent-grid blocks per SM (further capped by the occupancy calculator).
#ifndef BLOCKS_PER_SM
#define BLOCKS_PER_SM 2
#endif
static_assert(TM % 4 == 0 && TN % 4 == 0, "TM and TN must be multiples of 4 (float4 smem reads / stores)");
static_assert(BLOCK_OC % TM == 0 && TILE_T % TN == 0, "the tile must be a whole number of thread tiles");
static_assert(IC_CHUNK % 8 == 0, "IC_CHUNK must be a multiple of 8 (W^T loader: 8 ic x 4 oc per warp)");
static_assert(BLOCKS_PER_SM >= 1, "BLOCKS_PER_SM must be >= 1");

namespace {

constexpr int kThreadsT = TILE_T / TN;                 // threads along time
constexpr int kThreads = (BLOCK_OC / TM) * kThreadsT;  // threads per block
constexpr int kLdw = BLOCK_OC + 4;                     // W^T row stride (bank = 4*ic + oc on the transposing store)
constexpr int kLda = TILE_T;                           // act row stride (float4 reads: 16 consecutive addresses)
static_assert(kThreads % 32 == 0 && kThreads <= 1024, "(BLOCK_OC/TM)*(TILE_T/TN) must be a multiple of 32, <= 1024");
static_assert(BLOCK_OC % 4 == 0, "BLOCK_OC must be a multiple of 4");

struct Params {
  const float* x;
  float* y;
  const float *w_dw, *b_dw, *w_pw, *b_pw;
  int64_t B, C_in, C_out, T, T_out;
  int K, dilation, padding;
  int64_t n_ttiles;  // ceil(T_out / TILE_T)
  int64_t n_items;   // tiles: ceil(C_out / BLOCK_OC) * B * n_ttiles, ordered (oc tile, b, time tile)
  int n_chunks;      // ceil(C_in / IC_CHUNK)
  int w_resident;    // 1: W^T rows for all C_in in smem; 0: streamed per chunk into 2 stages
  int stage_x;       // 1: x window staged by cp.async; 0: depthwise reads x from global (huge halo)
  int vec_x;         // 1: 16-byte cp.async for x (T % 4 == 0, x 16-byte aligned)
  int vec_y;         // 1: float4 stores of y (T_out % 4 == 0, y 16-byte aligned)
  int ldx;           // floats per staged x row (multiple of 4, >= 3 + TILE_T + (K-1)*dilation)
};

struct Tile {
  int64_t oc0, b, t0;
};
__device__ __forceinline__ Tile decode(const Params& p, int64_t item) {
  const int64_t per_oc = p.B * p.n_ttiles, rem = item % per_oc;
  return {item / per_oc * BLOCK_OC, rem / p.n_ttiles, rem % p.n_ttiles * TILE_T};
}

// First global time index held by a staged x row: t0 - padding, rounded down to a multiple of 4 on the
// 16-byte path so every 4-float group is aligned and lies wholly inside or outside [0, T).
__device__ __forceinline__ int64_t window_start(const Params& p, int64_t t0) {
  const int64_t s0 = t0 - p.padding;
  return p.vec_x ? s0 - (((s0 % 4) + 4) % 4) : s0;
}

// W^T rows [k_begin, k_end) of the oc tile -> Ws[(k - k_begin) * kLdw + o], zero outside C_out x C_in.
// Lane mapping 8 ic x 4 oc: each 8-lane group reads one 32-byte sector of a w_pw row, and the smem
// banks (4 * ic + oc) of a warp are all distinct. Issued as cp.async (the caller commits and waits).
__device__ __forceinline__ void load_wt(const Params& p, float* Ws, int64_t oc0, int64_t k_begin, int rows) {
  for (int e = threadIdx.x; e < rows * BLOCK_OC; e += kThreads) {
    const int kl = e & 7, ol = (e >> 3) & 3, rest = e >> 5;
    const int o = (rest % (BLOCK_OC / 4)) * 4 + ol, k = (rest / (BLOCK_OC / 4)) * 8 + kl;
    const int64_t oc = oc0 + o, ic = k_begin + k;
    const bool ok = oc < p.C_out && ic < p.C_in;
    cp_async_4(&Ws[k * kLdw + o], ok ? p.w_pw + oc * p.C_in + ic : p.w_pw, ok ? 4 : 0);
  }
}

// Issue the cp.async copies of one pipeline step (tile `item`, channel chunk `chunk`) into a stage.
__device__ __forceinline__ void issue_step(const Params& p, int64_t item, int chunk, float* Xs, float* Ws) {
  const Tile tl = decode(p, item);
  const int64_t ic0 = static_cast<int64_t>(chunk) * IC_CHUNK;
  if (p.stage_x) {
    const int64_t a0 = window_start(p, tl.t0);
    const float* xb = p.x + tl.b * p.C_in * p.T;
    if (p.vec_x) {
      const int groups = p.ldx / 4;
      for (int e = threadIdx.x; e < IC_CHUNK * groups; e += kThreads) {
        const int r = e / groups, g = e % groups;
        const int64_t ic = ic0 + r, pos = a0 + 4 * g;
        const bool ok = ic < p.C_in && pos >= 0 && pos < p.T;  // T % 4 == 0: the group is all in or all out
        cp_async_16(&Xs[r * p.ldx + 4 * g], ok ? xb + ic * p.T + pos : p.x, ok ? 16 : 0);
      }
    } else {
      for (int e = threadIdx.x; e < IC_CHUNK * p.ldx; e += kThreads) {
        const int r = e / p.ldx, u = e % p.ldx;
        const int64_t ic = ic0 + r, pos = a0 + u;
        const bool ok = ic < p.C_in && pos >= 0 && pos < p.T;
        cp_async_4(&Xs[r * p.ldx + u], ok ? xb + ic * p.T + pos : p.x, ok ? 4 : 0);
      }
    }
  }
  if (!p.w_resident) load_wt(p, Ws, tl.oc0, ic0, IC_CHUNK);
}

__global__ void __launch_bounds__(kThreads, BLOCKS_PER_SM) vectorized_pipelined_kernel(const Params p) {
  extern __shared__ __align__(16) float smem[];
  // [W^T: resident n_chunks*IC_CHUNK rows, or 2 stages of IC_CHUNK rows][x: 2 stages][act: IC_CHUNK rows]
  float* const Ws = smem;
  float* const Xs = Ws + static_cast<int64_t>(p.w_resident ? p.n_chunks : 2) * IC_CHUNK * kLdw;
  float* const As = Xs + (p.stage_x ? 2 * IC_CHUNK * p.ldx : 0);
  const int tid = threadIdx.x;
  const int tr = tid / kThreadsT, tc = tid % kThreadsT;  // thread tile: rows tr*TM.., columns tc*TN..

  // This block's steps: tiles blockIdx.x, blockIdx.x + gridDim.x, ... (grid <= n_items), each n_chunks.
  const int64_t my_items = (p.n_items - blockIdx.x + gridDim.x - 1) / gridDim.x;
  const int64_t n_steps = my_items * p.n_chunks;
  int64_t item = blockIdx.x;
  int chunk = 0;
  int64_t resident_oc0 = -1;  // oc tile whose W^T sits in smem (w_resident only)

  // Prologue: the resident W^T of the first tile's oc range (cp.async: hundreds of loads in flight,
  // not one latency per load) together with step 0 -> stage 0, one commit group.
  if (p.w_resident && n_steps > 0) {
    resident_oc0 = decode(p, item).oc0;
    load_wt(p, Ws, resident_oc0, 0, p.n_chunks * IC_CHUNK);
  }
  issue_step(p, item, 0, Xs, Ws);
  cp_async_commit();

  float acc[TM][TN];
  for (int64_t s = 0; s < n_steps; ++s) {
    const int st = static_cast<int>(s & 1);
    const Tile tl = decode(p, item);
    const int64_t ic0 = static_cast<int64_t>(chunk) * IC_CHUNK;

    // Stage st has landed (this thread's copies: wait; everyone's: the barrier). The barrier also means
    // every thread finished step s-1, so stage st^1 and the act tile may be overwritten.
    cp_async_wait<0>();
    __syncthreads();

    // Prefetch step s+1 into stage st^1; it lands while this step computes.
    if (s + 1 < n_steps) {
      const bool last = chunk + 1 == p.n_chunks;
      issue_step(p, last ? item + gridDim.x : item, last ? 0 : chunk + 1, Xs + (st ^ 1) * IC_CHUNK * p.ldx,
                 Ws + (st ^ 1) * IC_CHUNK * kLdw);
      cp_async_commit();
    }

    // Resident W^T: (re)load when the tile's oc range changes (once per block unless C_out > BLOCK_OC).
    // Every thread is past step s-1's FMAs (barrier above), so W^T may be overwritten; the barrier
    // after the depthwise makes the new copy visible.
    if (p.w_resident && tl.oc0 != resident_oc0) {
      load_wt(p, Ws, tl.oc0, 0, p.n_chunks * IC_CHUNK);
      cp_async_commit();
      cp_async_wait<0>();
      resident_oc0 = tl.oc0;
    }

    if (chunk == 0) {  // new tile: accumulators start at the pointwise bias
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const int64_t oc = tl.oc0 + tr * TM + i;
        const float bias = (p.b_pw && oc < p.C_out) ? p.b_pw[oc] : 0.0f;
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = bias;
      }
    }

    // Depthwise + bias + SiLU of this chunk -> As, zero for ic >= C_in or t >= T_out.
    {
      const float* xs = Xs + st * IC_CHUNK * p.ldx;
      const int shift = static_cast<int>(tl.t0 - p.padding - window_start(p, tl.t0));  // 0..3
      for (int e = tid; e < IC_CHUNK * TILE_T; e += kThreads) {
        const int r = e / TILE_T, j = e % TILE_T;
        const int64_t ic = ic0 + r, t = tl.t0 + j;
        float v = 0.0f;
        if (ic < p.C_in && t < p.T_out) {
          const float* wrow = p.w_dw + ic * p.K;
          const float bias = p.b_dw ? p.b_dw[ic] : 0.0f;
          if (p.stage_x) {  // zero-filled halo: no bounds checks
            const float* xr = xs + r * p.ldx + shift + j;
            float a = bias;
#pragma unroll 4
            for (int k = 0; k < p.K; ++k) a = fmaf(__ldg(wrow + k), xr[k * p.dilation], a);
            v = silu(a);
          } else {
            v = dw_silu_at(p.x + (tl.b * p.C_in + ic) * p.T, wrow, bias, t, p.T, p.K, p.dilation, p.padding);
          }
        }
        As[r * kLda + j] = v;
      }
    }
    __syncthreads();  // As (and a reloaded resident W^T) complete

    // Outer products over the chunk: TM/4 + TN/4 LDS.128 feed TM*TN FMAs per ic.
    const float* wc = p.w_resident ? Ws + ic0 * kLdw : Ws + st * IC_CHUNK * kLdw;
#pragma unroll
    for (int k = 0; k < IC_CHUNK; ++k) {
      float a[TM], v[TN];
#pragma unroll
      for (int i = 0; i < TM; i += 4) {
        const float4 w4 = *reinterpret_cast<const float4*>(&wc[k * kLdw + tr * TM + i]);
        a[i] = w4.x; a[i + 1] = w4.y; a[i + 2] = w4.z; a[i + 3] = w4.w;
      }
#pragma unroll
      for (int j = 0; j < TN; j += 4) {
        const float4 x4 = *reinterpret_cast<const float4*>(&As[k * kLda + tc * TN + j]);
        v[j] = x4.x; v[j + 1] = x4.y; v[j + 2] = x4.z; v[j + 3] = x4.w;
      }
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], v[j], acc[i][j]);
    }

    if (++chunk == p.n_chunks) {
      // Tile done: float4 streaming stores (a warp writes 2 rows x 256 contiguous bytes) or scalar tail.
#pragma unroll
      for (int i = 0; i < TM; ++i) {
        const int64_t oc = tl.oc0 + tr * TM + i;
        if (oc >= p.C_out) continue;
        float* yrow = p.y + (tl.b * p.C_out + oc) * p.T_out;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
          const int64_t t = tl.t0 + tc * TN + j;
          if (p.vec_y) {  // T_out % 4 == 0 and t % 4 == 0: the 4 steps are all in or all out
            if (t < p.T_out)
              __stcs(reinterpret_cast<float4*>(yrow + t),
                     make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
          } else {
#pragma unroll
            for (int jj = 0; jj < 4; ++jj)
              if (t + jj < p.T_out) yrow[t + jj] = acc[i][j + jj];
          }
        }
      }
      chunk = 0;
      item += gridDim.x;
    }
  }
  cp_async_wait<0>();  // nothing is outstanding here (the last step issues no prefetch); kept for safety
}

// Shared-memory plan for a shape: the fastest configuration that fits in one block's opt-in limit.
struct Plan {
  int w_resident, stage_x, ldx;
  size_t smem;
};
Plan plan_for(const FusedArgs& a) {
  const int64_t budget = a.max_smem_optin > 0 ? a.max_smem_optin : 48 * 1024;
  const int64_t n_chunks = ceil_div<int64_t>(a.C_in, IC_CHUNK);
  const int64_t halo = static_cast<int64_t>(a.K - 1) * a.dilation;
  const int64_t ldx = (TILE_T + halo + 3 + 3) / 4 * 4;  // +3: alignment shift of the 16-byte path
  for (int w_res = 1; w_res >= 0; --w_res)
    for (int stage = 1; stage >= 0; --stage) {
      const int64_t floats = (w_res ? n_chunks : 2) * IC_CHUNK * kLdw + (stage ? 2 * IC_CHUNK * ldx : 0) +
                             static_cast<int64_t>(IC_CHUNK) * kLda;
      if (floats * 4 <= budget)
        return {w_res, stage, stage ? static_cast<int>(ldx) : 0, static_cast<size_t>(floats * 4)};
    }
  return {0, 0, 0, 0};  // cannot happen for the default tiles (streamed W, unstaged x: ~42 KB)
}

}  // namespace

const char* fused_unsupported(const FusedArgs& a) {
  if (const char* why = require_float32(a)) return why;
  if (plan_for(a).smem == 0) return "the tile parameters need more shared memory than one block may use";
  return nullptr;
}

void fused_forward(const FusedArgs& a, void* stream) {
  const Plan pl = plan_for(a);
  Params p;
  p.x = static_cast<const float*>(a.x);
  p.y = static_cast<float*>(a.y);
  p.w_dw = a.w_dw; p.b_dw = a.b_dw; p.w_pw = a.w_pw; p.b_pw = a.b_pw;
  p.B = a.B; p.C_in = a.C_in; p.C_out = a.C_out; p.T = a.T; p.T_out = a.T_out;
  p.K = a.K; p.dilation = a.dilation; p.padding = a.padding;
  p.n_ttiles = ceil_div<int64_t>(a.T_out, TILE_T);
  p.n_items = ceil_div<int64_t>(a.C_out, BLOCK_OC) * a.B * p.n_ttiles;
  p.n_chunks = static_cast<int>(ceil_div<int64_t>(a.C_in, IC_CHUNK));
  p.w_resident = pl.w_resident;
  p.stage_x = pl.stage_x;
  p.vec_x = (a.T % 4 == 0) && (reinterpret_cast<uintptr_t>(a.x) % 16 == 0);
  p.vec_y = (a.T_out % 4 == 0) && (reinterpret_cast<uintptr_t>(a.y) % 16 == 0);
  p.ldx = pl.ldx > 0 ? pl.ldx : 4;  // unused when x is not staged

  const int smem = static_cast<int>(pl.smem);
  if (smem > 48 * 1024)
    CUDA_CHECK(cudaFuncSetAttribute(vectorized_pipelined_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, vectorized_pipelined_kernel, kThreads, smem));
  per_sm = std::max(1, std::min(per_sm, BLOCKS_PER_SM));
  const int64_t sms = a.num_sms > 0 ? a.num_sms : 132;
  const int64_t grid = std::min<int64_t>(p.n_items, sms * per_sm);  // >= 1: n_items >= 1
  vectorized_pipelined_kernel<<<static_cast<unsigned>(grid), kThreads, smem, static_cast<cudaStream_t>(stream)>>>(p);
}
