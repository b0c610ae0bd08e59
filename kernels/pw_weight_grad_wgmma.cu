// pw_weight_grad_wgmma.cu: backward rung 7, the 1x1 conv's weight and bias gradients on Hopper: TMA + wgmma
// (contract: pw_wgrad_args.h, rung 6's: the same partial sums, the same backward_finish). pw_wgrad (in
// pw_weight_grad.cu) runs this rung where it is built (an sm_90a build: FUSED_SM90A) and the GPU is sm_90,
// rung 6 elsewhere.
// What it changes against rung 6: rung 6 staged its chunks through registers (16-byte loads a chunk ahead) and
// ran at 24.5-28.4 us against 14.7 us for a plain read of its 33.5 MB: its loads did not stream (ncu: DRAM 25-27%
// busy, warps waiting on loads). Here the copies are TMA boxes, issued by one thread into a ring of kStages
// stages, so each SM has up to 6 x 32 KB of reads in flight with no warp spending instructions on them; and the
// GEMM is wgmma reading both operands from shared memory (no per-warp fragment loads).
// Form: G = one block per SM (256 threads, two warpgroups), block j owns a contiguous range of (b, 32-step
// chunk) pairs (the GEMM's k). A chunk is two boxes of 128 rows x 32 steps (128 bytes per row): gy's rows
// (C_out) and act's (C), zeros past T, landing in the 128-byte swizzled K-major layout wgmma reads
// (K = time). Each thread rounds 8 of the stage's 16-byte units to TF32 in place (round to nearest even, as
// cuDNN's TF32 weight gradient rounds its operands; db_pw's sums of the unrounded gy on the way), then each
// warpgroup issues 4 wgmma m64n128k8 (its 64 rows of dW_pw x all 128 columns, accumulators in registers for
// the whole range). The stage of chunk i - 2 is refilled after the barrier of chunk i (every thread has then
// waited for chunk i - 2's wgmmas).
// Bytes at the headline: read gy and act, 33.5 MB, plus 8.7 MB of partials (L2-resident) for the finish.
// Prediction: near a plain read of the same bytes (14.7 us under pw_wgrad_sweep.cu's timer), i.e. about
// cuDNN's pair (13.1 + 1.6 us), and the backward ~4 us faster than the default through rung 4 reading no gy.
// Knobs (timing experiments, scripts/pw_wgrad_ab.py): PW_TMA_STAGES, PW_TMA_SM_DIV, PW_TMA_ABLATE (below); the
// defaults are the first form's, none measured faster. Removed after their runs, no faster: PW_TMA_ORDER (chunks
// strided over the blocks), PW_TMA_PROMO (256-byte or no L2 promotion), PW_TMA_PREFETCH (the block's later chunks
// asked of the L2 at the start); their code is in commit 7fbb0de.
// Outcome (docs/results.md, "backward rung 7"; logs/2026-12-02_{7228c78,b2cf1c3,4cd91e0,7fbb0de}_*): faster than
// rung 6, not than cuDNN. In the backward's profile at the headline 20.1-21.6 us (rung 6: 24.5-28.4; cuDNN's pair
// 13.3 + 1.8), rung 4 without gy 20.8-22.1 us (25.9 with it), the finish 3.6 (2.1): the backward 65.1 us against the
// default's 65.0, fwd+bwd 90.3 against 89.3 (eager 247.2), same run. Alone, under bench's timer (scripts/
// pw_wgrad_ab.py, one run each): 29.9-30.6 us against cuDNN's 21.6-22.3 and 27.6-28.7 for gy.sum() + act.sum();
// the TMA boxes alone (PW_TMA_ABLATE=3: no rounding, no wgmma) 28.2, so the reads bound it, not the rounding or
// the MMA. ncu: 24.4 us, DRAM 31% busy (1.47 TB/s), against cuDNN's kernel (64 blocks of 384 threads, 64 x 64
// tiles, split K, 231 KB of smem) at 15.6 us and 46%. No knob moved it by more than the spread: 4 or 7 stages, the
// strided chunk order, 256-byte or no L2 promotion, an L2 prefetch of the block's later chunks; fewer blocks
// (66, 44, 33) made it as slow or slower (30.3, 36.9, 43.1 us): each block's stream is then the limit.
// Two more forms measured no faster (docs/ladder.md, backward rung 7): a producer warp refilling each stage once
// both warpgroups release it (30.53 us alone against 30.19, cuDNN 22.05; commit ac120f8) and the rounding pass by
// LDS/STS instead of the generic LD.E.128 / ST.E.128 the uintptr_t alignment below gives (the backward 65.3 against
// 63.7; a1c103a): logs/2026-12-03_{5457865_silu_nocall_ab,519b27a_backward_ab_lds}.log. Next: cuDNN's form (64 x 64
// output tiles a block, split K over fewer, longer runs).
// Numerics: both operands rounded to nearest even, fp32 accumulation on the tensor cores per block, the
// blocks' partials summed in a fixed order by backward_finish: deterministic, no atomics; another order than
// cuDNN's, so within float32 summation order of eager's dW_pw (TF32 class).
// Limits: rung 6's (pw_wgrad_fits), an sm_90 GPU, a build for sm_90a.
#include <cuda_runtime.h>
#include <cstdint>
#include <stdexcept>
#include <string>
#include "common.cuh"      // tc_tf32
#include "mbarrier.cuh"    // mbar_init, mbar_wait
#include "wgmma_ops.cuh"   // Wgmma, wg_desc, TMA loads, tma_map_3d
#include "dw_backward_args.h"
#include "pw_wgrad_args.h"
#include "gpu_props.h"      // gpu_compute_capability, blocks_per_sm_capped
#include "warp_reduce.cuh"  // lanes_sum

#ifndef PW_TMA_STAGES
#define PW_TMA_STAGES 6  // chunks in flight or in use per block (7 is the most that fits in 227 KB)
#endif
#ifndef PW_TMA_SM_DIV
#define PW_TMA_SM_DIV 1  // G = SMs / PW_TMA_SM_DIV blocks (fewer blocks: longer runs of steps per block)
#endif
#ifndef PW_TMA_ABLATE
#define PW_TMA_ABLATE 0  // a timing experiment (scripts/pw_wgrad_ab.py), bits: 1 no rounding, 2 no wgmma (then wrong)
#endif

namespace pwtma {

constexpr int kKC = 32;                                   // steps per chunk: one 128-byte row of fp32
constexpr int kStages = PW_TMA_STAGES;                    // chunks in flight or in use per block
constexpr int kThreads = 256;                             // two warpgroups: dW_pw rows 0-63 and 64-127
constexpr int kRows = 128;                                // rows per box (C and C_out zero-padded to 128)
constexpr uint32_t kTileBytes = kRows * kKC * 4;          // one operand's box: 16 KB
constexpr uint32_t kStageBytes = 2 * kTileBytes;          // gy's box, then act's
constexpr size_t kSmem = kStages * kStageBytes + 1024 + 8 * kStages;  // + 1024-byte alignment + mbarriers
static_assert(kTileBytes / 16 == 4 * kThreads, "each thread rounds 4 units of each box");

// grid G, kThreads threads, kSmem bytes of dynamic shared memory. gmap, amap: gy (B, C_out, T) and act (B, C, T)
// as 3-D (T, rows, B), box (kKC, rows, 1), 128-byte swizzle; a stage's rows past C_out or C are stale, and
// each feeds only its own row or column of dW_pw, which is not stored.
__global__ void __launch_bounds__(kThreads, 1) pw_wgrad_tma_kernel(const __grid_constant__ CUtensorMap gmap,
                                                                  const __grid_constant__ CUtensorMap amap,
                                                                  float* partial_w, float* partial_b, int64_t B,
                                                                  int C, int C_out, int T) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();  // built for another arch: pw_wgrad_tma_fits is false there, so this never runs
#elif defined(__CUDA_ARCH__)
  extern __shared__ unsigned char smem_raw[];
  // 1024-byte aligned for the swizzle (its own expression: calling wgmma.cuh's wg_smem_base here changed the SASS of
  // rung 09's kernel, built in the same translation unit)
  const uintptr_t raw = reinterpret_cast<uintptr_t>(smem_raw);
  unsigned char* smem = reinterpret_cast<unsigned char*>((raw + 1023) & ~uintptr_t(1023));
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kStages * kStageBytes);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = tid >> 7;
  const int tiles = (T + kKC - 1) / kKC;
  const int64_t chunks = B * tiles, G = gridDim.x, blk = blockIdx.x;
  const int64_t c_begin = blk * chunks / G;
  const int n = static_cast<int>((blk + 1) * chunks / G - c_begin);
  auto issue = [&](int i) {  // chunk i of this block -> stage i % kStages (thread 0)
    const int64_t id = c_begin + i;
    const int b = static_cast<int>(id / tiles), t0 = static_cast<int>(id - static_cast<int64_t>(b) * tiles) * kKC;
    unsigned char* st = smem + (i % kStages) * kStageBytes;
    uint64_t* bar = &full[i % kStages];
    mbar_expect_tx(bar, static_cast<uint32_t>(C_out + C) * kKC * 4);
    tma_load_3d(st, &gmap, bar, t0, 0, b);
    tma_load_3d(st + kTileBytes, &amap, bar, t0, 0, b);
  };
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(&full[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the TMA unit
  }
  __syncthreads();
  if (tid == 0)
    for (int i = 0; i < n && i < kStages; ++i) issue(i);
  float d[1][64];
#pragma unroll
  for (int r = 0; r < 64; ++r) d[0][r] = 0.0f;
  float dbs[4] = {0.0f, 0.0f, 0.0f, 0.0f};  // gy rows tid / 8 + 32 k: this thread's units of them
  const uint32_t base = smem_u32(smem);
  for (int i = 0; i < n; ++i) {
    const int s = i % kStages;
    mbar_wait(&full[s], (i / kStages) & 1);
    float4* u = reinterpret_cast<float4*>(smem + s * kStageBytes);
    float4 v[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) v[k] = u[tid + kThreads * k];  // unit f: row f / 8, a quarter warp one row
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if (k < 4) dbs[k] += (v[k].x + v[k].y) + (v[k].z + v[k].w);
      if (!(PW_TMA_ABLATE & 1)) u[tid + kThreads * k] = tc_round_tf32(v[k]);
    }
    fence_proxy_async();  // the rounded operands -> visible to wgmma (and to the TMA that later refills)
    __syncthreads();      // ... from every thread; and every thread has waited for chunk i - 2's wgmmas
    if (tid == 0 && i >= 2 && i - 2 + kStages < n) issue(i - 2 + kStages);
    const uint32_t a_addr = base + s * kStageBytes + wg * 64 * 128, b_addr = base + s * kStageBytes + kTileBytes;
    wg_fence_regs(d);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < (PW_TMA_ABLATE & 2 ? 0 : kKC / 8); ++ks)
      Wgmma<128, float>::mma(d[0], wg_desc(a_addr + 32 * ks), wg_desc(b_addr + 32 * ks), 1);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    wg_fence_regs(d);
    wg_wait<1>();
  }
  wg_wait<0>();
  wg_fence_regs(d);
  // dW_pw's partial: rows 64 wg + 16 (warp % 4) + lane / 4 (+8), columns 8 j + 2 (lane % 4) (+1) in d[4 j + ..]
  float* pw = partial_w + blk * C_out * static_cast<int64_t>(C);
  const int o0 = 64 * wg + 16 * (warp & 3) + (lane >> 2);
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    const int c = 8 * j + 2 * (lane & 3);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int o = o0 + 8 * h;
      if (o >= C_out) continue;
      float* dst = pw + static_cast<int64_t>(o) * C + c;
      if (c < C) dst[0] = d[0][4 * j + 2 * h];
      if (c + 1 < C) dst[1] = d[0][4 * j + 2 * h + 1];
    }
  }
  // db_pw's partial: a row's 8 units are 8 consecutive lanes; their sums meet by fixed-order shuffles
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float x = wred::lanes_sum<1, 4>(dbs[k]);
    const int r = tid / 8 + 32 * k;
    if (partial_b && (tid & 7) == 0 && r < C_out) partial_b[static_cast<int64_t>(r) * G + blk] = x;
  }
#endif
}

}  // namespace pwtma

bool pw_wgrad_tma_fits(const PwWgradArgs& a) {
#ifdef FUSED_SM90A
  auto aligned16 = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  // (not partial_w: pw_wgrad_blocks asks before the partials are allocated)
  return gpu_compute_capability() == 90 && a.act && a.gy && aligned16(a.act) && aligned16(a.gy) &&
         a.T % 4 == 0 && a.C >= kTcMinC && a.C <= pwtma::kRows && a.C_out >= kTcMinC && a.C_out <= pwtma::kRows &&
         a.B >= 0 && a.B <= 0x7fffffff && a.T <= 0x7fffffff - 1024;
#else
  (void)a;
  return false;
#endif
}

int64_t pw_wgrad_tma_blocks(const PwWgradArgs& a) { return blocks_per_sm_capped(a.B, a.T, pwtma::kKC, PW_TMA_SM_DIV); }

void pw_wgrad_tma(const PwWgradArgs& a, int64_t G, void* stream) {
  if (!pw_wgrad_tma_fits(a) || !a.partial_w)
    throw std::runtime_error("pw_wgrad_tma: not built for sm_90a, no partials, or shape outside its limits");
  if (G < 1) return;
  const CUtensorMap gmap = tma_map_rows_f32(a.gy, a.B, a.C_out, a.T, pwtma::kKC, CU_TENSOR_MAP_SWIZZLE_128B),
                    amap = tma_map_rows_f32(a.act, a.B, a.C, a.T, pwtma::kKC, CU_TENSOR_MAP_SWIZZLE_128B);
  cudaError_t err = cudaFuncSetAttribute(pwtma::pw_wgrad_tma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(pwtma::kSmem));
  if (err == cudaSuccess) {
    pwtma::pw_wgrad_tma_kernel<<<static_cast<unsigned>(G), pwtma::kThreads, pwtma::kSmem,
                                 static_cast<cudaStream_t>(stream)>>>(gmap, amap, a.partial_w, a.partial_b, a.B,
                                                                      static_cast<int>(a.C),
                                                                      static_cast<int>(a.C_out),
                                                                      static_cast<int>(a.T));
    err = cudaGetLastError();
  }
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("pw_wgrad_tma: launch failed: ") + cudaGetErrorString(err));
}
