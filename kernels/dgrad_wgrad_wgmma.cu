// dgrad_wgrad_wgmma.cu: backward rung 9, the 1x1 conv's two gradients and the SiLU's in one pass on Hopper
// (contract: dw_backward_args.h, dgwg_*). Its output gv = dL/dv feeds rung 4 in its gv form (dw_silu_backward.cu,
// a.gv_in), which makes dx, dW_dw and db_dw; ModelNew runs the pair with backward="split" (eager_autograd.h, mode 5).
// What it changes: the default backward moves 151 MB in five kernels (docs/results.md, "where issue 15's targets
// stand"); rungs 5 and 8 each removed one intermediate and lost on arithmetic, each putting a GEMM beside rung 4's
// per-channel sums. Here the split is the other way: this kernel holds both GEMMs and the SiLU's derivative, rung 4
// keeps the depthwise's sums. Per (b, 32-step tile), all channels at once, it reads x and dy only and writes gv:
//   v, act = silu(v) and sd = silu'(v) from x (no halo of gv: rung 4 reads gv's halo from memory);
//   dact = W_pw^T dy on TF32 tensor cores (wgmma m64n32k8, W_pw^T as the register operand, loaded once per block:
//     dy is t-contiguous, and a tf32 wgmma reads only K-major operands from shared memory, so dy's tile is also
//     written transposed, t rows of 128 output channels, while it is rounded to TF32);
//   gv = dact * sd, stored from the accumulators (each warp's store: 8 rows of 32 bytes);
//   dW_pw += dy act^T (wgmma m64n128k8, both operands from shared memory: dy's TMA tile and the act tile), db_pw from
//     the unrounded dy on the way.
// Bytes at the headline: read x and dy, write gv: 50.3 MB, and the weight gradient's partials (G x 64 KB), against
// cuDNN's data gradient (33.5 MB), rung 4 (83.9) and cuDNN's weight gradient (33.5) that it and rung 4's gv form
// (50.3) replace: 100.6 MB against 151.
// Form: G = one block per SM (256 threads, two warpgroups), block j takes tiles j, j + G, .. . One thread issues two
// TMA boxes per tile into a ring of `stages` stages (as many as fit, 2-3): dy (C_out rows x 32 steps, 128-byte
// swizzle) and x over [t0 - P4, t0 + 32 + P] (C rows, no swizzle; zeros outside the tensor). Per tile:
//   - each thread rounds 4 of dy's 16-byte units in place (rows lane + 32 k, chunk = warp), sums them for db_pw, and
//     writes them transposed into the dyT tile (a warp's 32 lanes: 32 output channels of one step, one 128-byte row);
//   - each thread computes v, act and sd of 4 channels x 4 consecutive steps (x's window as float4s), act (TF32)
//     into the swizzled act tile, sd into the sd tile;
//   - tile i - 1's GEMMs (issued at the last barrier, running under the above) waited for; its gv = dact * sd made
//     in place over its sd tile (three sd tiles);
//   - one barrier; thread 0 stores tile i - 1's gv by TMA and refills tile i - 1's stage; each warpgroup issues
//     GEMM 1 (its 64 channels: 16 wgmmas, A = its W_pw^T fragments) and GEMM 2 (its 64 output channels of dW_pw: 4
//     wgmmas) of tile i in one commit group. act and dyT alternate between two tiles.
//   At the end each cluster of 2 blocks sums its dW_pw over distributed shared memory into one partial.
// Prediction: near the copy rate for its 50 MB (~15 us), the two GEMMs (2.1 GFLOP) beside the TMA; with rung 4's
// gv form (50.3 MB, ~17 us at rung 4's rate) and the finish, a backward of ~40 us against the default's 64.
// Outcome (docs/results.md, "backward rung 9"; logs/2026-12-03_{72b64cb,a8cf7e8,58aa372,ce1a992}_split_*): correct
// (float64 at the GPU test's 6 shapes, eager's gradients in the backward tests, memcheck and racecheck clean) but
// ~3x slower than predicted: 44-48 us alone (L2 warm), so backward="split" takes 74.1 us against the default's 63.9.
// Rung 4's gv form met its prediction (14.6-16.0 us). ncu (58aa372): 8 warps per SM (2 per scheduler, 0.5
// eligible, one issue every 2.8 cycles), DRAM 15%: latency-bound (208-219 registers a thread: ptxas,
// results/logs/dgwg_ptxas.txt). Ablated one at a time, no part dominates: without the SiLU terms 36.8 us, without the GEMMs 32.9, without gv's stores
// 31.9, without dy's pass 42.4 (44.3 whole). Tried without gain: the software pipeline (43.9 against 45.2), gv by
// TMA store (44.4 against 44.1), dW_pw's partials per cluster (the finish 4.3 against 6.0 us, rung 9 48.1 against
// 44.4: the whole 74.6 against 71.9, slower; kept only because it is the form the sanitizers and tests ran on).
// Next: more warps (W_pw^T from shared memory instead of 64 registers a thread, which needs ~64 KB the tiles now
// hold), or the SiLU terms in warps of their own.
// Numerics: v and act as rung 8 (eager's SiLU bits: silu_nocall_den, no call), s = 1 / (1 + e) by div_newton with
// the divisor clamped at 2^96 (IEEE division's quotient up to there); dact and dW_pw from TF32 operands rounded to
// nearest even (W_pw, dy, act), as cuDNN's TF32 data and weight gradients round them, fp32 accumulation: within
// TF32 summation order of eager's (the caller runs it only where both of cuDNN's are TF32 GEMMs). gv = dact * (s (1 +
// v (1 - s))), eager's silu_backward up to one rounding of its product order. Fixed-order sums (deterministic, no
// atomics).
// Limits: an sm_90 GPU and a build for sm_90a; rung 4's vector shapes with K <= 5 (DWBW_GV_SHAPES);
// kTcMinC <= C, C_out <= 128; B * ceil(T / 32) < 2^31; float32.
#include <cuda_runtime.h>
#include <cstdint>
#include <stdexcept>
#include <string>
#include "common.cuh"       // tc_round_tf32, div_newton
#include "mbarrier.cuh"     // mbar_init, mbar_wait
#include "wgmma_ops.cuh"    // Wgmma, wg_desc, wg_swz, TMA loads, tma_map_rows_f32
#include "dw_backward_args.h"
#include "gpu_props.h"      // gpu_compute_capability, blocks_per_sm_capped

// The (K, dilation) pairs compiled for rung 9: rung 4's gv form's (dw_backward_args.h)
#ifndef DGWG_SHAPES
#define DGWG_SHAPES(X) DWBW_GV_SHAPES(X)
#endif

// DGWG_ABLATE (a timing experiment, results wrong when set): bit 1 skips the SiLU terms (act and sd tiles left
// as they are), 2 the GEMMs, 4 gv's stores, 8 dy's rounding and transposition.
#ifndef DGWG_ABLATE
#define DGWG_ABLATE 0
#endif

// DGWG_ACT_MUL: 1 takes act = v * s (one division per step, s's) instead of eager's v / (1 + e) (silu_nocall_den):
// act differs by an ulp or two of float32 before its TF32 rounding, so dW_pw's operand by one TF32 ulp at a few
// steps in 4096 (within the TF32 class); 0 keeps eager's act bits before the rounding.
#ifndef DGWG_ACT_MUL
#define DGWG_ACT_MUL 0
#endif

namespace dgwg {

constexpr int kTT = 32;                       // steps per tile: one 128-byte row of fp32 (GEMM 2's k, GEMM 1's n)
constexpr int kThreads = 256, kWarps = kThreads / 32;  // two warpgroups: 64 channels of GEMM 1, 64 rows of GEMM 2
constexpr int kRows = 128;                    // channels (C and C_out) at most
constexpr uint32_t kOpBytes = kRows * kTT * 4;  // dy's tile, dyT's, act's: 16 KB
constexpr int kSdBufs = 3;                    // sd (then gv) tiles: written, read by the next tile's gv, TMA-stored
constexpr size_t kSmemMax = 227 * 1024;
constexpr int kMaxStages = 3;

template <int K, int D>
struct Shape {
  static constexpr int H = (K - 1) * D, P = H / 2;  // the span (even), 'same' padding
  // x over [t0 - P4, t0 + kTT + P], the box starting on a 16-byte boundary (P4 = P rounded up to 4 steps); SX: the
  // steps before the first needed; a thread's window for 4 outputs from step 4 g: NQ float4s from x index 4 g
  static constexpr int P4 = (P + 3) / 4 * 4, SX = P4 - P;
  static constexpr int XW = (P4 + kTT + P + 7) / 8 * 8, NQ = (SX + 3 + H) / 4 + 1;
  static constexpr uint32_t kXBytes = kRows * XW * 4;
  static constexpr uint32_t kStageBytes = kOpBytes + kXBytes;  // dy (1024-byte aligned), x
  static_assert(kStageBytes % 1024 == 0, "every stage's dy tile 1024-byte aligned for the swizzle");
  static_assert(4 * NQ <= XW - 4 * (kTT / 4 - 1), "the last window inside the row");
  static_assert(XW <= 256, "box rows <= 256 elements");
  // + alignment, act x 2, dyT x 2, sd x 3, the stages, w_dw and b_dw, mbarriers
  static size_t smem(int stages) {
    return 1024 + (4 + kSdBufs) * static_cast<size_t>(kOpBytes) + stages * static_cast<size_t>(kStageBytes) +
           kRows * (K + 1) * 4 + 8 * stages;
  }
  static int stages() {
    for (int s = kMaxStages; s >= 2; --s)
      if (smem(s) <= kSmemMax) return s;
    return 0;
  }
};

// D (64 x 32, fp32) (+)= A (64 x 8 tf32, registers) * B (8 x 32, smem descriptor b); accumulate 0: D = A B.
__device__ __forceinline__ void mma_rs_n32(float (&d)[16], const uint32_t (&a)[4], uint64_t b, int accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 {" WG_R16 "}, {%16, %17, %18, %19}, %20, p, 1, 1;\n}\n"
               : WG_D16(d)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}
// The block's cluster: its size and rank, a barrier of all its threads, and a float of rank q's shared memory at the
// address p has in this block's.
__device__ __forceinline__ unsigned cluster_nctarank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_ctarank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ float ld_cluster_f32(const float* p, int q) {
  uint32_t addr;
  float v;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(addr) : "r"(smem_u32(p)), "r"(q));
  asm volatile("ld.shared::cluster.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
  return v;
}

// v = dw(x) at 4 steps from the window xw (x index of the first step's first tap at 0), act = silu(v) and
// sd = silu'(v) = s (1 + v (1 - s)), s = 1 / (1 + e), e = expf(-v). Code without calls (GEMMs of the previous tile
// are in flight around it: ptxas serializes wgmmas across a call): act by silu_nocall_den (eager's bits), s by
// div_newton with the divisor clamped at 2^96 (IEEE division's quotient up to there; beyond, v < -66.5, s < 2^-96
// and gv = dact * sd is below 1e-27 either way).
template <int K, int D>
__device__ __forceinline__ void silu_grad_terms(const float* xw, const float* w, float bias, float (&act)[4],
                                                float (&sd)[4]) {
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    float v = bias;
#pragma unroll
    for (int k = 0; k < K; ++k) v = fmaf(w[k], xw[e + k * D], v);
    const float den = 1.0f + expf(-v);
    const float s = div_newton(1.0f, fminf(den, 0x1p96f));
    act[e] = DGWG_ACT_MUL ? v * s : silu_nocall_den(v, den);
    sd[e] = s * (1.0f + v * (1.0f - s));
  }
}

// grid G, kThreads threads, Shape::smem(stages) bytes. ymap: dy (B, C_out, T) as (T, rows, B), box (kTT, C_out, 1),
// 128-byte swizzle; xmap: x (B, C, T), box (XW, C, 1), no swizzle. Rows past C or C_out compute zeros or stay out
// of what is stored (a stale dy row feeds only its own row of dW_pw; dyT's rows past C_out are written as zeros).
template <int K, int D>
__global__ void __launch_bounds__(kThreads, 1) dgwg_kernel(const __grid_constant__ CUtensorMap ymap,
                                                          const __grid_constant__ CUtensorMap xmap,
                                                          const __grid_constant__ CUtensorMap gmap,
                                                          const DgwgArgs a, int stages) {
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();  // built for another arch: dgwg_fits is false there, so this never runs
#elif defined(__CUDA_ARCH__)
  using S = Shape<K, D>;
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = smem_raw + ((1024 - (__cvta_generic_to_shared(smem_raw) & 1023)) & 1023);
  unsigned char* act_t = smem;                      // 2 x [C rows][32 steps], swizzled (GEMM 2's B)
  unsigned char* dyt_t = smem + 2 * kOpBytes;       // 2 x 4 atoms of [32 steps][32 output channels] (GEMM 1's B)
  unsigned char* sd_t = smem + 4 * kOpBytes;       // 3 x [C rows][32 steps], swizzled: sd, then gv in place
  unsigned char* stage0 = smem + (4 + kSdBufs) * kOpBytes;
  float* ws = reinterpret_cast<float*>(stage0 + static_cast<size_t>(stages) * S::kStageBytes);  // w_dw, b_dw
  uint64_t* full = reinterpret_cast<uint64_t*>(ws + kRows * (K + 1));
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = tid >> 7, wi = warp & 3;
  const int C = static_cast<int>(a.C), C_out = static_cast<int>(a.C_out), T = static_cast<int>(a.T);
  const int tiles = (T + kTT - 1) / kTT;
  const int64_t chunks = a.B * tiles, G = gridDim.x, blk = blockIdx.x;
  const int n = static_cast<int>((chunks - blk + G - 1) / G);
  const uint32_t tx_bytes = static_cast<uint32_t>(C * S::XW + C_out * kTT) * 4;
  auto where = [&](int i, int& b, int& t0) {
    const unsigned id = static_cast<unsigned>(blk + G * i);
    b = static_cast<int>(id / static_cast<unsigned>(tiles));
    t0 = static_cast<int>(id - static_cast<unsigned>(b) * tiles) * kTT;
  };
  auto issue = [&](int i) {  // tile i -> stage i % stages (thread 0)
    int b, t0;
    where(i, b, t0);
    unsigned char* st = stage0 + (i % stages) * S::kStageBytes;
    uint64_t* bar = &full[i % stages];
    mbar_expect_tx(bar, tx_bytes);
    tma_load_3d(st, &ymap, bar, t0, 0, b);
    tma_load_3d(st + kOpBytes, &xmap, bar, t0 - S::P4, 0, b);
  };
  if (tid == 0) {
    for (int s = 0; s < stages; ++s) mbar_init(&full[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  for (int i = tid; i < kRows * K; i += kThreads) ws[i] = i < C * K ? __ldg(a.w_dw + i) : 0.0f;
  for (int i = tid; i < kRows; i += kThreads) ws[kRows * K + i] = a.b_dw && i < C ? __ldg(a.b_dw + i) : 0.0f;
  __syncthreads();
  if (tid == 0)
    for (int i = 0; i < n && i < stages; ++i) issue(i);
  // GEMM 1's A: W_pw^T rows (channels) 64 wg + 16 wi + lane / 4 (+8), k (output channels) 8 ks + lane % 4 (+4),
  // rounded to TF32 (zeros past C or C_out): loaded once, while the first tiles land
  uint32_t wa[16][4];
  {
    const int c0 = 64 * wg + 16 * wi + (lane >> 2);
#pragma unroll
    for (int ks = 0; ks < 16; ++ks)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int c = c0 + 8 * (r & 1), o = 8 * ks + (lane & 3) + 4 * (r >> 1);
        wa[ks][r] = __float_as_uint(c < C && o < C_out ? tc_round_tf32(__ldg(a.w_pw + o * C + c)) : 0.0f);
      }
  }
  float d2[64];  // dW_pw rows 64 wg + 16 wi + lane / 4 (+8), columns 8 j + 2 (lane % 4) (+1): d2[4 j + ..]
#pragma unroll
  for (int r = 0; r < 64; ++r) d2[r] = 0.0f;
  float dbs[4] = {0.0f, 0.0f, 0.0f, 0.0f};  // db_pw: rows lane + 32 k, this warp's chunk of every tile
  const uint32_t base = smem_u32(smem);
  float d1[16];  // GEMM 1 of the tile in flight: dact at (channel 64 wg + 16 wi + lane / 4 (+8), step 8 j + 2 (lane % 4) (+1))
#pragma unroll
  for (int r = 0; r < 16; ++r) d1[r] = 0.0f;
  // gv of tile i = d1 (its GEMM 1 waited for) * sd, over sd in its tile (each thread its own positions); after the
  // next barrier thread 0 stores the tile by TMA (steps past T and rows past C clipped)
  auto make_gv = [&](int i) {
    unsigned char* sdt = sd_t + (i % kSdBufs) * kOpBytes;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int c = 64 * wg + 16 * wi + (lane >> 2) + 8 * h;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        float2* p = reinterpret_cast<float2*>(sdt + wg_swz<4>(c, 8 * j + 2 * (lane & 3), kRows));
        const float2 sv = *p;
        *p = make_float2(d1[4 * j + 2 * h] * sv.x, d1[4 * j + 2 * h + 1] * sv.y);
      }
    }
  };
  auto store_gv = [&](int i) {  // thread 0, after the barrier that follows make_gv(i)
    int b, t0;
    where(i, b, t0);
    if (!(DGWG_ABLATE & 4)) {
      tma_store_3d(&gmap, sd_t + (i % kSdBufs) * kOpBytes, t0, 0, b);
      tma_store_commit();
    }
  };
  // Software pipeline: tile i's operands are built while tile i - 1's GEMMs run; then those are waited for, tile
  // i - 1's gv stored, one barrier, and tile i's GEMMs issued.
  for (int i = 0; i < n; ++i) {
    const int s = i % stages, buf = i & 1;
    int b, t0;
    where(i, b, t0);
    unsigned char* st = stage0 + s * S::kStageBytes;
    mbar_wait(&full[s], (i / stages) & 1);
    // dy: unit (row o = lane + 32 k, chunk warp) -> rounded in place, and transposed into dyT (zeros past C_out)
    unsigned char* dyt = dyt_t + buf * kOpBytes;
#pragma unroll
    for (int k = 0; k < (DGWG_ABLATE & 8 ? 0 : 4); ++k) {
      const int o = lane + 32 * k;
      float4* u = reinterpret_cast<float4*>(st + o * 128 + ((warp ^ (o & 7)) << 4));
      float4 q = o < C_out ? *u : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      dbs[k] += (q.x + q.y) + (q.z + q.w);
      q = tc_round_tf32(q);
      *u = q;
      const float e[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
      for (int j = 0; j < 4; ++j) *reinterpret_cast<float*>(dyt + wg_swz<4>(4 * warp + j, o, kTT)) = e[j];
    }
    // v, act, sd: item m of this thread is channel 16 warp + 4 m + lane / 8, steps 4 (lane % 8) ..
    const float* xs = reinterpret_cast<const float*>(st + kOpBytes);
    unsigned char* at = act_t + buf * kOpBytes;
    unsigned char* sdt = sd_t + (i % kSdBufs) * kOpBytes;
    const int g4 = 4 * (lane & 7);
    const bool own = t0 + g4 < T;  // T % 4 == 0: 4 steps in or out together
#pragma unroll
    for (int m = 0; m < (DGWG_ABLATE & 1 ? 0 : 4); ++m) {
      const int c = 16 * warp + 4 * m + (lane >> 3);
      float xw[4 * S::NQ];
#pragma unroll
      for (int q = 0; q < S::NQ; ++q) {
        const float4 v4 = *reinterpret_cast<const float4*>(xs + c * S::XW + g4 + 4 * q);
        xw[4 * q] = v4.x; xw[4 * q + 1] = v4.y; xw[4 * q + 2] = v4.z; xw[4 * q + 3] = v4.w;
      }
      float ac[4], sd[4];
      silu_grad_terms<K, D>(xw + S::SX, ws + c * K, ws[kRows * K + c], ac, sd);
      const bool live = own && c < C;
      const float4 a4 = live ? tc_round_tf32(make_float4(ac[0], ac[1], ac[2], ac[3])) : make_float4(0, 0, 0, 0);
      *reinterpret_cast<float4*>(at + wg_swz<4>(c, g4, kRows)) = a4;
      *reinterpret_cast<float4*>(sdt + wg_swz<4>(c, g4, kRows)) = make_float4(sd[0], sd[1], sd[2], sd[3]);
    }
    if (i > 0) {  // tile i - 1's GEMMs, then its gv
      wg_wait<0>();
      wg_fence_regs(d1);
      wg_fence_regs(d2);
      make_gv(i - 1);
    }
    // tile i - 2's gv store has read its tile (the buffer tile i + 1 writes, after this barrier)
    if (tid == 0) tma_store_wait_read<0>();
    fence_proxy_async();  // the rounded dy, dyT, act and gv -> visible to wgmma and the TMA (stores, refills)
    __syncthreads();      // tile i's operands written; tile i - 1's stage free (every warpgroup waited its wgmmas)
    if (tid == 0 && i >= 1) store_gv(i - 1);
    if (tid == 0 && i >= 1 && i - 1 + stages < n) issue(i - 1 + stages);
    const uint32_t dyt_addr = base + 2 * kOpBytes + buf * kOpBytes;
    const uint32_t a2 = base + (4 + kSdBufs) * kOpBytes + s * S::kStageBytes + wg * 64 * 128,
                   b2 = base + buf * kOpBytes;
    wg_fence_regs(d1);
    wg_fence_regs(d2);
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < (DGWG_ABLATE & 2 ? 0 : 16); ++ks)  // k = output channels 8 ks ..: dyT atom ks / 4, 32 bytes per k-step within
      mma_rs_n32(d1, wa[ks], wg_desc(dyt_addr + (ks >> 2) * (kTT * 128) + 32 * (ks & 3)), ks > 0);
#pragma unroll
    for (int ks = 0; ks < (DGWG_ABLATE & 2 ? 0 : kTT / 8); ++ks) Wgmma<128, float>::mma(d2, wg_desc(a2 + 32 * ks), wg_desc(b2 + 32 * ks), 1);
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    wg_fence_regs(d1);
    wg_fence_regs(d2);
  }
  wg_wait<0>();  // (also where n == 0: ptxas then sees every accumulator read after a wait)
  wg_fence_regs(d1);
  wg_fence_regs(d2);
  if (n > 0) {
    make_gv(n - 1);
    fence_proxy_async();
    __syncthreads();
    if (tid == 0) {
      store_gv(n - 1);
      tma_store_wait<0>();  // every store done before the block's shared memory goes
    }
  }
  // dW_pw's partial, one per cluster of `cs` blocks (1 or 2, the launch's cluster size): each block puts its sums in
  // its shared memory ([o][c], pitch kWP), then block r of the cluster adds rows [r C_out / cs, ..) of every block's
  // in rank order (the same order for every row) and stores them coalesced; cs = 2 halves the partials the finish
  // reads (66 x 64 KB at the headline)
  constexpr int kWP = kRows + 8;  // pitch (floats): the accumulators' 8 rows x 4 lanes of float2 stores in 2 wavefronts
  static_assert(kRows * kWP * 4 <= (4 + kSdBufs) * kOpBytes, "the sums fit over the act, dyT and sd tiles");
  float* wsum = reinterpret_cast<float*>(smem);
  __syncthreads();  // every warp done with the tiles (every GEMM waited for)
  {
    const int o0 = 64 * wg + 16 * wi + (lane >> 2);
#pragma unroll
    for (int j = 0; j < 16; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        *reinterpret_cast<float2*>(wsum + (o0 + 8 * h) * kWP + 8 * j + 2 * (lane & 3)) =
            make_float2(d2[4 * j + 2 * h], d2[4 * j + 2 * h + 1]);
  }
  const int cs = static_cast<int>(cluster_nctarank()), rank = static_cast<int>(cluster_ctarank());
  cluster_sync();  // every block's sums in its shared memory
  {
    const int rows = (C_out + cs - 1) / cs, r0 = rank * rows, r1 = min(C_out, r0 + rows);
    float* pw = a.partial_w + (blk / cs) * C_out * static_cast<int64_t>(C);
    for (int idx = tid; idx < (r1 - r0) * C; idx += kThreads) {
      const int o = r0 + idx / C, c = idx - (idx / C) * C;
      float t = 0.0f;
      for (int q = 0; q < cs; ++q) t += ld_cluster_f32(wsum + o * kWP + c, q);
      pw[static_cast<int64_t>(o) * C + c] = t;
    }
  }
  cluster_sync();  // no block leaves while another reads its shared memory
  // db_pw's partial: the 8 warps' sums of a row, added in warp order
  if (a.partial_pw) {
    float* red = reinterpret_cast<float*>(stage0);  // (the stages are idle: every TMA load landed and was read)
#pragma unroll
    for (int k = 0; k < 4; ++k) red[warp * kRows + lane + 32 * k] = dbs[k];
    __syncthreads();
    if (tid < C_out) {
      float r = 0.0f;
      for (int w = 0; w < kWarps; ++w) r += red[w * kRows + tid];
      a.partial_pw[static_cast<int64_t>(tid) * G + blk] = r;
    }
  }
#endif
}

template <int K, int D>
void launch(const DgwgArgs& a, int64_t G, cudaStream_t stream) {
  using S = Shape<K, D>;
  const int stages = S::stages();
  const size_t smem = S::smem(stages);
  const CUtensorMap ymap = tma_map_rows_f32(a.gy, a.B, a.C_out, a.T, kTT, CU_TENSOR_MAP_SWIZZLE_128B),
                    xmap = tma_map_rows_f32(a.x, a.B, a.C, a.T, S::XW, CU_TENSOR_MAP_SWIZZLE_NONE),
                    gmap = tma_map_rows_f32(a.gv, a.B, a.C, a.T, kTT, CU_TENSOR_MAP_SWIZZLE_128B);
  cudaError_t err = cudaFuncSetAttribute(dgwg_kernel<K, D>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem));
  if (err == cudaSuccess) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(static_cast<unsigned>(G));
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = static_cast<unsigned>(dgwg_cluster(G));
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    err = cudaLaunchKernelEx(&cfg, dgwg_kernel<K, D>, ymap, xmap, gmap, a, stages);
    if (err == cudaSuccess) err = cudaGetLastError();
  }
  if (err != cudaSuccess)
    throw std::runtime_error(std::string("dgrad_wgrad: launch failed: ") + cudaGetErrorString(err));
}

}  // namespace dgwg

bool dgwg_fits(const DgwgArgs& a) {
#ifdef FUSED_SM90A
  bool compiled = false;
#define DGWG_COMPILED(KK, DD) \
  compiled = compiled || (a.K == KK && a.dilation == DD && dgwg::Shape<KK, DD>::stages() >= 2);
  DGWG_SHAPES(DGWG_COMPILED)
#undef DGWG_COMPILED
  const int halo = (a.K - 1) * a.dilation;
  auto al16 = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return gpu_compute_capability() == 90 && compiled && a.x && a.gy && a.w_pw && a.w_dw && al16(a.x) && al16(a.gy) &&
         halo % 2 == 0 && a.padding == halo / 2 && a.T % 4 == 0 &&
         a.B >= 1 && a.T >= 4 && a.T <= 0x7fffffff - 1024 && a.B * ((a.T + dgwg::kTT - 1) / dgwg::kTT) <= 0x7fffffff &&
         a.C >= kTcMinC && a.C <= dgwg::kRows && a.C_out >= kTcMinC && a.C_out <= dgwg::kRows;
#else
  (void)a;
  return false;
#endif
}

int64_t dgwg_blocks(const DgwgArgs& a) {
  const int64_t G = blocks_per_sm_capped(a.B, a.T, dgwg::kTT);
  return G > 1 ? G / 2 * 2 : G;  // clusters of 2 where there are two blocks or more
}

int dgwg_cluster(int64_t G) { return G % 2 == 0 ? 2 : 1; }

void dgrad_wgrad(const DgwgArgs& a, int64_t G, void* stream) {
  if (!dgwg_fits(a))
    throw std::runtime_error("dgrad_wgrad: not built for sm_90a, or args outside its limits (dgwg_fits)");
  if (!a.gv || !a.partial_w || reinterpret_cast<uintptr_t>(a.gv) % 16 != 0)
    throw std::runtime_error("dgrad_wgrad: gv (16-byte aligned) and partial_w must be given");
  if (G < 1) return;
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
#define DGWG_LAUNCH(KK, DD)                 \
  if (a.K == KK && a.dilation == DD) {       \
    dgwg::launch<KK, DD>(a, G, s);           \
    return;                                  \
  }
  DGWG_SHAPES(DGWG_LAUNCH)
#undef DGWG_LAUNCH
}
