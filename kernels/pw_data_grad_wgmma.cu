// pw_data_grad_wgmma.cu: backward rung 10, the 1x1 conv's data gradient and bias gradient on Hopper: TMA + wgmma with
// dy as the register operand (contract: pw_wgrad_args.h, PwDgradArgs). backward="dgrad_kernel" (eager_autograd.h,
// mode 6) runs it in place of cuDNN's data gradient, and rung 4 then reads no dy (its db_pw comes from here).
// What it changes against the default: the default reads dy twice before the weight gradient, once in cuDNN's data
// gradient (a cutlass_80 mma.sync kernel: ~11 us in the backward's profile for 33.5 MB) and once more in rung 4 only
// for db_pw = sum of dy over (b, t) (rung 4 without that read: 20.4-21.0 against 24.9-25.4 us, docs/results.md). Here
// the dy tile the data gradient reads anyway gives db_pw's sums on the way.
// The GEMM, turned around so both operands suit TF32 wgmma (which takes K-major operands only from shared memory):
//   ga^T (time x C) = dy^T (time x C_out) * W_pw (C_out x C),
// A = dy^T from registers (M = 64 time steps a warpgroup tile, K = C_out padded to 128): each thread loads its A
// fragment from dy's TMA tile (rows C_out, 32 steps a 128-byte row, 128-byte swizzle) with LDS.64; B = W_pw, K-major
// (C rows of C_out), filled once per block into shared memory with TF32 rounding. The fragment's logical rows and k
// are mapped onto time and channels so that every load and store is 8 bytes wide: logical row g <-> step 2g,
// g + 8 <-> 2g + 1 (a0/a1 and d's row pair are neighbouring steps), and logical k t4 <-> channel 2 t4, t4 + 4 <->
// 2 t4 + 1 within each 8-channel k-step (B's fill uses the same order): a half-warp's LDS.64 then covers the 8
// 16-byte chunks of the swizzle, no bank conflict; a warp's float2 store of ga covers 4 rows x 64 contiguous bytes.
// Form: G = one block per SM (persistent), tiles of 64 steps strided over the blocks; two warpgroups (8 warps: a
// ninth, producer warp would put 3 warps on one scheduler, whose 64 KB of registers then allow 168 a thread) take the
// block's tiles in turn, each into its own PWDG_STAGES / 2 stages, its thread 0 issuing the tile's two TMA boxes.
// Per tile: wait, 32 LDS.64 (the whole A: 64 registers), round to TF32 (nearest even, as cuDNN rounds its operands)
// while summing the unrounded values into db_pw's per-thread sums, a warpgroup barrier, the stage refilled with the
// warpgroup's tile after next, 16 wgmma m64n128k8, wait, store ga from the accumulators. The two warpgroups overlap
// each other's loads, MMA and stores.
// Bytes at the headline: read dy, write ga: 33.5 MB (~7.9 us at the copy rate), plus W_pw's 64 KB per block (L2).
// Prediction: near the copy rate, 9-10 us against cuDNN's ~11, and the backward 5-6 us shorter than the default's
// (rung 4 without dy: -4.8 us; the finish sums 132 more db_pw partials).
// Numerics: TF32 operands rounded to nearest even, fp32 accumulation on the tensor cores over C_out: within TF32
// summation order of cuDNN's data gradient (the caller runs it only where cuDNN's is a TF32 GEMM:
// cudnn_pw_grad_is_tf32). db_pw from the unrounded dy, fixed-order sums (per thread over its tiles, then lanes, warps
// and warpgroups, then backward_finish over the blocks, or rung 4's first C_out blocks in the same order): deterministic,
// no atomics. For rung 4's inline sums block 0 also zeroes dW_dw and db_dw (a.zero0, a.zero1); launched as a
// programmatic dependent of the previous kernel there (griddep_wait before any global access: pdl.cuh); rung 4, its
// dependent, launches as its blocks exit (PWDG_EARLY_TRIGGER=1: as they start, measured slower).
// Limits: an sm_90 GPU and a build for sm_90a; float32; T % 4 == 0 and dy 16-byte aligned (TMA rows); 1 <= C, C_out
// <= 128; B * ceil(T / 64) < 2^31.
// Measured (H200; docs/ladder.md, "backward rung 10"): correct at every shape tested (ga equal to cuDNN's TF32 data
// gradient bit for bit at two shapes, in the 9c022df form and in this one; within float32 summation error of float64
// at seven shapes into NaN-poisoned memory; ModelNew's gradients as close to eager's as the default's), memcheck and
// racecheck clean. Slower than predicted: the first form took 19.6 us in the backward's profile against cuDNN's 11.1;
// its ablation and ncu showed it latency-bound (2 warps per scheduler, 0.32 instructions issued per cycle), the
// fill's index math and the guarded stores the largest parts. This form (1204d8f): 13.0 against cuDNN's 10.8, rung 4
// 20.7 against 25.8, and the backward 65.18 against the default's 64.91 us in one interleaved ab: no faster.
// Alone (L2 flushed) 21.4-22.0 us against cuDNN's 14.8-14.9; PWDG_TMA_LATE=2 (dy's boxes after W_pw's fill, but each
// warpgroup's first) 18.88 in one run; in the backward's profile 11.6 against 12.7 us, ModelNew's gradients as the
// tree's (logs/2026-12-04_48b10f4_streams_tests_ab_timeline_bench.log): this file's default since 2026-12-04.
// With PWDG_TMA_LATE=2 (6f83237): alone 19.04 against 22.02 us with 0 (cuDNN 14.85), ga bit for bit cuDNN's at two
// shapes, memcheck and racecheck clean; the headline's backward 61.8 against the cuDNN path's 64.4 us, the training
// step 86.1 against 90.8 (logs/2026-12-04_6f83237_op_backward_tma_late_bench_sanitize.log).
// Outcome: ModelNew's default backward since 2026-12-04 (backward="dgrad_kernel"); still slower alone than cuDNN's.
#include <cuda_runtime.h>
#include <cstdint>
#include <stdexcept>
#include <string>
#include "common.cuh"       // tc_tf32: RNE rounding to TF32 in one instruction (cvt.rn.tf32.f32)
#include "mbarrier.cuh"     // mbar_init, mbar_arrive, mbar_wait, named_bar_sync
#include "wgmma_ops.cuh"    // WgmmaRs, wg_desc, wg_swz, wg_fence_regs, TMA loads, tma_map_3d
#include "pw_wgrad_args.h"
#include "gpu_props.h"      // gpu_compute_capability, blocks_per_sm_capped
#include "pdl.cuh"          // griddep_wait, griddep_launch_dependents, launch_maybe_dependent
#include "warp_reduce.cuh"  // lanes_sum

// PWDG_ABLATE (a bit mask, timing experiments only: the output is then wrong; scripts/pw_dgrad_ab.py) leaves a part
// out: 1 ga's stores, 2 the MMA (issue and wait), 4 W_pw's fill, 8 the A fragment's rounding and db_pw's sums,
// 16 dy's TMA loads and their waits (the stages' stale contents are used).
#ifndef PWDG_ABLATE
#define PWDG_ABLATE 0
#endif
// PWDG_TMA_LATE: dy's first loads issued 0 before W_pw's fill, 1 after the fill's loads are issued (W_pw then comes
// first from L2 and DRAM instead of queueing behind ~17 MB of dy boxes), 2 each warpgroup's first tile before, the rest
// after
#ifndef PWDG_TMA_LATE
#define PWDG_TMA_LATE 2
#endif
// PWDG_EARLY_TRIGGER: 1 lets the next kernel (rung 4, launched as a programmatic dependent) launch once every block has
// started (griddepcontrol.launch_dependents), 0 only as the blocks exit. 0 since 2026-12-04: in ModelNew's training
// step (backward_ab --variant wgmma_wide --mode 6 --with-forward, interleaved) 81.90 (p10-p90 79.96-83.69) against 1's
// 86.62 us (84.90-88.07), the backward alone 58.62 against 59.81 (logs/2026-12-04_2b6dd25_early_trigger_ab_bench.log;
// in the general path's step 101.73 against 106.56, 2026-12-04_c7bcfea_inline_sums_fwd_bwd_ab_bench.log). Why 1 loses
// is not measured (rung 10 is one block per SM; with 1, rung 4's blocks wait resident beside it from the start).
#ifndef PWDG_EARLY_TRIGGER
#define PWDG_EARLY_TRIGGER 0
#endif
#ifndef PWDG_STAGES
#define PWDG_STAGES 4  // dy tiles in flight or in use per block, half per warpgroup (4 is the most that fits)
#endif

namespace pwdg {

constexpr int kM = 64;                                  // steps per tile (the wgmma M)
constexpr int kBoxT = 32;                               // steps per TMA box: one 128-byte row of fp32
constexpr int kRows = 128;                              // C_out rows per box, C columns of B (zero-padded)
constexpr int kStages = PWDG_STAGES;
constexpr int kConsumers = 2;                           // consumer warpgroups
constexpr int kThreads = kConsumers * 128;
constexpr int kPerWg = kStages / kConsumers;            // stages per warpgroup
constexpr uint32_t kBoxBytes = kRows * kBoxT * 4;       // 16 KB
constexpr uint32_t kStageBytes = 2 * kBoxBytes;         // a tile: two boxes
constexpr uint32_t kWBytes = kRows * kRows * 4;         // B = W_pw, 128 x 128 tf32
constexpr size_t kSmem = 1024 + kWBytes + kStages * kStageBytes + 8 * kStages + 4 * kConsumers * 4 * 32 * 4;
static_assert(kStages % kConsumers == 0, "PWDG_STAGES: a multiple of the consumer warpgroups");
static_assert(kSmem <= 227 * 1024, "PWDG_STAGES: too many stages for 227 KB");

__device__ __forceinline__ float2 lds64(uint32_t addr) {
  float2 v;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(v.x), "=f"(v.y) : "r"(addr) : "memory");
  return v;
}

// grid G, kThreads threads, kSmem bytes of dynamic shared memory. gmap: dy (B, C_out, T) as 3-D (T, C_out, B), box
// (32, 128, 1), 128-byte swizzle, zeros outside (rows past C_out, steps past T).
__global__ void __launch_bounds__(kThreads, 1) pw_dgrad_kernel(const __grid_constant__ CUtensorMap gmap,
                                                              const float* __restrict__ w_pw, float* __restrict__ ga,
                                                              float* __restrict__ partial_b, int B, int C, int C_out,
                                                              int T, float* __restrict__ zero0, int n0,
                                                              float* __restrict__ zero1, int n1) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();  // built for another arch: pw_dgrad_tma_fits is false there, so this never runs
#elif defined(__CUDA_ARCH__)
  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = smem_u32(smem_raw), base = (raw + 1023u) & ~1023u;
  unsigned char* smem = smem_raw + (base - raw);
  const uint32_t w_addr = base, st_addr = base + kWBytes;
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + kWBytes + kStages * kStageBytes);
  float* red = reinterpret_cast<float*>(full + kStages);  // db_pw: [kConsumers][4 warps][4 lanes t4][32 channels]
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, wg = tid >> 7;
  const int tpr = (T + kM - 1) / kM;                      // tiles per batch row
  const int64_t tiles = static_cast<int64_t>(B) * tpr;
  const int G = gridDim.x, blk = blockIdx.x;
  // this block's tiles blk + G i, i = 0 .. n - 1; warpgroup wg takes i = wg + kConsumers j into its own stages
  // wg * kPerWg + j % kPerWg, and its thread 0 refills a stage once the warpgroup has read it
  const int n = tiles > blk ? static_cast<int>((tiles - 1 - blk) / G + 1) : 0;
  const int nw = n > wg ? (n - 1 - wg) / kConsumers + 1 : 0;
  auto tile_of = [&](int j, int& b, int& t0) {
    const int64_t id = blk + static_cast<int64_t>(G) * (wg + kConsumers * j);
    b = static_cast<int>(id / tpr);
    t0 = static_cast<int>(id - static_cast<int64_t>(b) * tpr) * kM;
  };
  auto issue = [&](int j) {  // this warpgroup's tile j -> its stage j % kPerWg (one thread)
    int b, t0;
    tile_of(j, b, t0);
    const int s = wg * kPerWg + j % kPerWg;
    unsigned char* dst = smem + kWBytes + s * kStageBytes;
    mbar_expect_tx(&full[s], kStageBytes);
    tma_load_3d(dst, &gmap, &full[s], t0, 0, b);
    tma_load_3d(dst + kBoxBytes, &gmap, &full[s], t0 + kBoxT, 0, b);
  };
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(&full[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the TMA unit
  }
  __syncthreads();
  // (launched as a dependent) the previous kernel's writes visible before any global access; with
  // PWDG_EARLY_TRIGGER the next kernel (rung 4, which waits for this whole grid in its turn) may launch now
  griddep_wait();
  if (PWDG_EARLY_TRIGGER) griddep_launch_dependents();
  if (blk == 0) {
    for (int i = tid; i < n0; i += kThreads) zero0[i] = 0.0f;
    for (int i = tid; i < n1; i += kThreads) zero1[i] = 0.0f;
  }
  constexpr int kEarly = PWDG_TMA_LATE == 0 ? kPerWg : PWDG_TMA_LATE == 1 ? 0 : 1;  // tiles issued before the fill
  if ((tid & 127) == 0 && !(PWDG_ABLATE & 16))
    for (int j = 0; j < nw && j < kEarly; ++j) issue(j);
  // B = W_pw: element (row c, logical k) = tf32(W_pw[o, c]) at k = 8 (o / 8) + e / 2 + 4 (e % 2), e = o % 8 (the
  // head's channel order), zeros past C_out or C.
  // A thread owns row c = tid % 128 and the 16-byte chunks q = wg + 2 r (logical k 4q .. 4q + 3: channels o = 8 (q / 2)
  // + 2 kk + q % 2, kk = 0..3), one STS.128 each at chunk q % 8 of atom q / 8, XORed with c % 8 (wg_swz<4>'s layout,
  // written out: with its generic index math per element the fill was 3294 SASS instructions, now 1053, both C
  // paths: results/logs/rung10_ptxas_sass.txt). A warp's loads read 32 consecutive c of one row o; all 64 of a
  // thread's loads in flight at once.
  if (!(PWDG_ABLATE & 4)) {
    constexpr int kChunks = kRows / 4 / kConsumers;  // 16 chunks a thread
    const int c = tid % kRows;
    float w[kChunks][4];
    const bool full_w = C == kRows && C_out == kRows;
#pragma unroll
    for (int r = 0; r < kChunks; ++r) {
      const int q = wg + kConsumers * r;
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const int o = 8 * (q >> 1) + 2 * kk + (q & 1);
        w[r][kk] = (full_w || (o < C_out && c < C)) ? __ldg(w_pw + o * C + c) : 0.0f;
      }
    }
    if (kEarly < kPerWg && (tid & 127) == 0 && !(PWDG_ABLATE & 16))  // after the fill's loads are issued
      for (int j = kEarly; j < nw && j < kPerWg; ++j) issue(j);
    const uint32_t row = w_addr + c * 128;
#pragma unroll
    for (int r = 0; r < kChunks; ++r) {
      const int q = wg + kConsumers * r;
      const uint32_t addr = row + (q >> 3) * (kRows * 128) + (((q & 7) ^ (c & 7)) << 4);
      asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(tc_tf32(w[r][0])),
                   "r"(tc_tf32(w[r][1])), "r"(tc_tf32(w[r][2])), "r"(tc_tf32(w[r][3])) : "memory");
    }
  }
  if ((PWDG_ABLATE & 4) && kEarly < kPerWg && (tid & 127) == 0 && !(PWDG_ABLATE & 16))  // no fill: issue them here
    for (int j = kEarly; j < nw && j < kPerWg; ++j) issue(j);
  fence_proxy_async();        // W_pw -> visible to wgmma
  __syncthreads();
  const int w4 = warp & 3, g = lane >> 2, t4 = lane & 3;
  // this thread's A fragment: steps 16 w4 + 2g, +1 of the tile; channels 8 s + 2 t4 (a0, a1) and + 1 (a2, a3)
  const int tb = 16 * (w4 & 1) + 2 * g;                    // step within its box (box w4 / 2)
  const uint32_t a_box = (w4 >> 1) * kBoxBytes, a_chunk = tb >> 2, a_in = (tb & 3) * 4;
  // its two rows of each 8-row group (o % 8 = 2 t4 + h, the swizzle's XOR), as offsets in a stage; k-step ks adds 1024
  uint32_t a_off[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const uint32_t o = 2 * t4 + h;
    a_off[h] = a_box + o * 128 + ((a_chunk ^ o) << 4) + a_in;
  }
  float dbs[32];
#pragma unroll
  for (int r = 0; r < 32; ++r) dbs[r] = 0.0f;
  float d[64];
#pragma unroll
  for (int r = 0; r < 64; ++r) d[r] = 0.0f;
  for (int j = 0; j < nw; ++j) {
    const int s = wg * kPerWg + j % kPerWg;
    if (!(PWDG_ABLATE & 16)) mbar_wait(&full[s], (j / kPerWg) & 1);
    const uint32_t st = st_addr + s * kStageBytes;
    uint32_t a[16][4];
#pragma unroll
    for (int ks = 0; ks < 16; ++ks) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const float2 v = lds64(st + a_off[h] + ks * 1024);  // row o = 8 ks + 2 t4 + h
        if (PWDG_ABLATE & 8) {
          a[ks][2 * h] = __float_as_uint(v.x);
          a[ks][2 * h + 1] = __float_as_uint(v.y);
        } else {
          dbs[2 * ks + h] += v.x + v.y;
          a[ks][2 * h] = tc_tf32(v.x);
          a[ks][2 * h + 1] = tc_tf32(v.y);
        }
      }
    }
    named_bar_sync(1 + wg, 128);  // the warpgroup's values are in registers (their loads consumed above)
    if ((tid & 127) == 0 && j + kPerWg < nw && !(PWDG_ABLATE & 16)) issue(j + kPerWg);
    wg_fence_regs(d);
    if (PWDG_ABLATE & 2) {
#pragma unroll
      for (int ks = 0; ks < 16; ++ks) d[4 * ks] += __uint_as_float(a[ks][0] ^ a[ks][1] ^ a[ks][2] ^ a[ks][3]);
    } else {
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
      for (int ks = 0; ks < 16; ++ks)
        WgmmaRs<128>::mma(d, a[ks], wg_desc(w_addr + (ks / 4) * (kRows * 128) + (ks % 4) * 32), ks > 0);
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      wg_wait<0>();
    }
    wg_fence_regs(d);
    // ga (b, c, t): d[4 jn + 2v + u] = (step t0 + 16 w4 + 2g + v, channel 8 jn + 2 t4 + u): float2 over v
    int b, t;
    tile_of(j, b, t);
    t += 16 * w4 + 2 * g;
    if (t < T && !(PWDG_ABLATE & 1)) {  // T % 4 == 0 and t even: t + 1 < T too
      // channel 8 jn + 2 t4 + u at p + (8 jn + u) T: one pointer step of 8 T per jn (a guarded store with its own
      // 64-bit index each was 818 SASS instructions for the stores and the loop's end, now 586 for both C paths)
      float* p = ga + (static_cast<int64_t>(b) * C + 2 * t4) * T + t;
      const int64_t T8 = static_cast<int64_t>(8) * T;
      if (C == kRows) {
#pragma unroll
        for (int jn = 0; jn < 16; ++jn, p += T8) {
          *reinterpret_cast<float2*>(p) = make_float2(d[4 * jn], d[4 * jn + 2]);
          *reinterpret_cast<float2*>(p + T) = make_float2(d[4 * jn + 1], d[4 * jn + 3]);
        }
      } else {
        const int left = C - 2 * t4;  // channels 8 jn + u < left exist
#pragma unroll
        for (int jn = 0; jn < 16; ++jn, p += T8) {
          if (8 * jn < left) *reinterpret_cast<float2*>(p) = make_float2(d[4 * jn], d[4 * jn + 2]);
          if (8 * jn + 1 < left) *reinterpret_cast<float2*>(p + T) = make_float2(d[4 * jn + 1], d[4 * jn + 3]);
        }
      }
    }
  }
  // db_pw: this thread's 32 sums are channels 8 ks + 2 t4 + h; the 8 lanes of one t4 (g = 0..7) meet by shuffles,
  // then the 4 warps and 2 warpgroups in smem, in a fixed order
#pragma unroll
  for (int r = 0; r < 32; ++r) dbs[r] = wred::lanes_sum<4, 16>(dbs[r]);
  if (g == 0) {
#pragma unroll
    for (int r = 0; r < 32; ++r) red[((wg * 4 + w4) * 4 + t4) * 32 + r] = dbs[r];
  }
  __syncthreads();
  if (partial_b && tid < kRows) {
    const int o = tid, ks = o / 8, q = o % 8, t4o = (q >> 1), h = q & 1;  // o = 8 ks + 2 t4 + h
    float sum = 0.0f;
    for (int wv = 0; wv < 4 * kConsumers; ++wv) sum += red[(wv * 4 + t4o) * 32 + 2 * ks + h];
    if (o < C_out) partial_b[static_cast<int64_t>(o) * G + blk] = sum;
  }
#endif
}

}  // namespace pwdg

bool pw_dgrad_tma_fits(const PwDgradArgs& a) {
#ifdef FUSED_SM90A
  auto aligned16 = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return gpu_compute_capability() == 90 && a.gy && aligned16(a.gy) && a.T % 4 == 0 && a.C >= 1 &&
         a.C <= pwdg::kRows && a.C_out >= 1 && a.C_out <= pwdg::kRows && a.B >= 0 && a.B <= 0x7fffffff &&
         a.T <= 0x7fffffff - 1024 && a.B * ((a.T + pwdg::kM - 1) / pwdg::kM) < 0x7fffffff;
#else
  (void)a;
  return false;
#endif
}

int64_t pw_dgrad_tma_blocks(const PwDgradArgs& a) { return blocks_per_sm_capped(a.B, a.T, pwdg::kM); }

void pw_dgrad_tma(const PwDgradArgs& a, int64_t G, void* stream) {
  auto bad_zero = [](const float* p, int64_t n) { return n < 0 || n > 0x7fffffff || (n && !p); };
  if (!pw_dgrad_tma_fits(a) || !a.ga || !a.w_pw || bad_zero(a.zero0, a.n0) || bad_zero(a.zero1, a.n1))
    throw std::runtime_error("pw_dgrad_tma: not built for sm_90a, no output, or shape outside its limits");
  if (G < 1) return;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(a.T), static_cast<cuuint64_t>(a.C_out),
                              static_cast<cuuint64_t>(a.B)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(a.T) * 4, static_cast<cuuint64_t>(a.C_out * a.T) * 4};
  const cuuint32_t box[3] = {pwdg::kBoxT, pwdg::kRows, 1};
  const CUtensorMap gmap = tma_map_3d(a.gy, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, dims, strides, box,
                                      CU_TENSOR_MAP_SWIZZLE_128B);
  cudaError_t err = cudaFuncSetAttribute(pwdg::pw_dgrad_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(pwdg::kSmem));
  if (err == cudaSuccess)
    err = launch_maybe_dependent(pwdg::pw_dgrad_kernel, dim3(static_cast<unsigned>(G)), dim3(pwdg::kThreads),
                                 pwdg::kSmem, static_cast<cudaStream_t>(stream),
                                 a.dependent, gmap, a.w_pw, a.ga, a.partial_b,
                                 static_cast<int>(a.B), static_cast<int>(a.C), static_cast<int>(a.C_out),
                                 static_cast<int>(a.T), a.zero0, static_cast<int>(a.n0), a.zero1,
                                 static_cast<int>(a.n1));
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("pw_dgrad_tma: launch failed: ") + cudaGetErrorString(err));
}
