// variant: accuracy=tf32 dtypes=float32 arch=9.0a
// Rung 9, Hopper wgmma + TMA: rung 5's math (TF32 tensor cores, fp32 accumulation, W_pw and act rounded
// to tf32), but the pointwise GEMM is wgmma.mma_async (sm_90a) instead of mma.sync, it runs under the next
// tile's depthwise instead of after it, and the x tiles arrive by TMA:
//   - four warpgroups (512 threads; WARPGROUPS=2 also builds), each owning 64 output channels x TILE_T/2
//     time steps; one m64nNk8 wgmma per 8 input channels reads W_pw and act straight from shared memory
//     (no per-warp fragment loads: rung 5 issued ~21M warp instructions for 0.5M HMMA);
//   - W_pw (C_out padded to 128 rows, C_in to K = 128) and act are stored K-major in the 128-byte swizzled
//     layout wgmma reads (8 rows x 128 B atoms, 16-byte chunk index XOR row % 8); W_pw once per block;
//   - act is double-buffered: the wgmma of tile i is issued asynchronously, the block computes the
//     depthwise + SiLU of tile i+1 into the other buffer meanwhile, then waits for the MMA and stores y(i)
//     from the accumulators;
//   - x tiles are double-buffered, one 3-D TMA box each (zeros outside the tensor), issued by one thread
//     and completed on an mbarrier: no warp spends instructions on copies;
//   - the depthwise is tc_dw_silu_x4's windowed form (four outputs per thread from 16-byte x loads,
//     dilation and K compile-time constants), with a thread owning one channel for the whole kernel (its
//     taps and bias in registers) and lanes on consecutive channels, so act stores are conflict-free.
// Predicted (headline B=16 C=128 T=2048 K=5 d=2, TILE_T=64: 512 tiles, 3.9 per SM): the MMA (1M FMA per
//   tile, ~1k cycles at wgmma's 1024 TF32 FMA/clk/SM) hides under the depthwise (~4k warp instructions per
//   tile, ~1-2k cycles on 8 warps); per tile 72 KB of DRAM traffic at 4.27 TB/s / 132 SMs = 2.2 us, so the
//   kernel is memory-bound if one tile of x prefetch keeps enough bytes in flight: ~8.5-10 us
//   (floor 7.9 us) plus W_pw staging and the first tile (~1.5 us).
// Measured: 22.2 us median (p10-p90 21.7-22.9), rel. err 1.7e-4 (= eager's TF32 default), 3.85x eager
//   (85.4 us) and 1.63x rung 5 (36.1 us) in the same run (H200, commit 77fa532, results/timings.csv,
//   results/logs/h200_session_21.log); 2.8x the 7.9 us floor, 2.2x the prediction, and rung 5's <= 10 us
//   target missed by 2.2x. Tuned WARPGROUPS=4 TILE_T=64 FUSED_Y_TMA=0 (results/tuned.json). ptxas (sm_90a):
//   125-128 registers, 0 spills (results/logs/rung09_ptxas_sass.txt); dynamic smem 213 KiB (W_pw 64 +
//   act 2 x 32 + x 2 x 42 KiB) -> 1 block/SM.
//   memcheck + racecheck clean (h200_session_21.log; sanitize_case includes a shape with 2 tiles per block).
// How it got there (each line: same-run rung 5 at 35.9-36.5 us; logs h200_session_15 .. 21):
//   v1 x by cp.async, 2 warpgroups, run-time K: 33.0 us (3f54647). ncu (results/profiles/
//      ncu_wgmma_tf32_03d9ce1.txt): 11.0M warp instructions, 8 warps/SM, DRAM 12% of peak. Stage costs
//      (scripts/ablate.py; full 32.8 us): depthwise 9.0, MMA 1.8, y stores 8.3, x copies 9.3; all four out 6.5.
//   v2 x tiles by TMA + 4 warpgroups (16 warps): 25.6 us (186d76d). Stage costs (full 25.6): depthwise 5.9,
//      MMA 2.4, y stores 7.8, x copies 2.9; all out 6.7.
//   v3 y staged in smem (128-byte swizzle) + TMA bulk tensor stores: 26.6 us vs 25.1 us from the registers
//      (976a82e, h200_session_18.log): two more barriers per tile cost more than they save. Kept as
//      FUSED_Y_TMA=1 for A/B; the default stores from the accumulators.
//   v4 depthwise with compile-time K (the run-time form issued all 16/D+1 taps predicated: its loop per 4
//      outputs was 170-223 SASS instructions, now 106-110 at K=5, d=2, both store paths counted;
//      results/logs/rung09_ptxas_sass.txt) + y stores without per-element tests: 23.0 us (94f8dd0). Stage
//      costs (full 23.0): depthwise 5.0, MMA 3.0, y stores 2.9, x copies 2.9; all out 7.2.
//   v5 W_pw staged with 16-byte loads instead of cp.async (racecheck reported a cp.async write hazard at
//      94f8dd0, h200_session_20.log): 22.2 us (77fa532), racecheck clean.
// Why not at the floor: ncu at 2359bdf (results/profiles/ncu_wgmma_tf32_2359bdf.txt; 22.4 us under the
//   profiler): 9.9M warp instructions, 16 warps/SM, DRAM 17% of peak, ~0.4 instructions issued per cycle per
//   scheduler: the stages of a tile still run one after another in the same warps (the ablation's stage costs
//   add up instead of hiding behind the DRAM traffic). Part of every figure is the timer's: an empty kernel
//   measures 4.4 us and the 33.6 MB copy 13.8 us under it (the L2 flush leaves dirty lines that are written
//   back during the timed call; h200_session_19_timer_floor.txt).
// Next: producer warpgroups for the depthwise (setmaxnreg) so that depthwise, MMA and stores of different
//   tiles overlap; fewer instructions per depthwise output (integer work, the swizzled act addresses and
//   the tf32 rounding, is ~35 of the loop's 106 SASS instructions);
//   deeper x prefetch, which needs W_pw's 64 KB of smem (A operand from registers).
// Shape limits (fused_unsupported): an sm_90 GPU (wgmma is sm_90a-only); fp32 x with T % 4 == 0 and
//   16-byte alignment, dilation <= 4 and (K-1)*dilation <= 16 (the windowed depthwise); C_in <= 128,
//   C_out <= 128. ModelNew routes every other shape to the next rung of its accuracy class (rung 8, then 5).
// Timing experiments: FUSED_ABLATE (common.cuh; scripts/ablate.py) leaves out the depthwise (1), the
//   MMAs (2), the y stores (4) or the x copies (8).
#include "common.cuh"

#include <cudaTypedefs.h>  // CUtensorMap, PFN_cuTensorMapEncodeTiled (fetched through the runtime: no -lcuda)

#ifndef TILE_T
#define TILE_T 64
#endif
#ifndef WARPGROUPS
#define WARPGROUPS 4  // 2: each warpgroup 64 channels x TILE_T; 4: 64 channels x TILE_T / 2
#endif
static_assert(WARPGROUPS == 2 || WARPGROUPS == 4, "WARPGROUPS must be 2 or 4");
#ifndef FUSED_Y_TMA
#define FUSED_Y_TMA 0  // 1: y staged in smem and written by TMA stores (measured slower: see the header)
#endif

namespace {

constexpr int kThreads = WARPGROUPS * 128;
constexpr int kRows = 128;     // W_pw rows in smem (C_out padded to 128; warpgroup g takes rows 64 (g % 2) ..)
constexpr int kMaxCin = 128;
constexpr int kNT = TILE_T / (WARPGROUPS / 2);  // time columns per warpgroup: the wgmma N
static_assert(kNT == 16 || kNT == 32 || kNT == 64, "TILE_T / (WARPGROUPS / 2) must be 16, 32 or 64");
static_assert(TILE_T % 32 == 0, "TILE_T must be a multiple of 32 (the y boxes are 32 columns)");

// ---- wgmma (sm_90a) ----
// D (64 x N, fp32, registers) (+)= A (64 x 8, W_pw rows, smem) * B (8 x N, act, smem); both operands
// K-major, described by 64-bit shared-memory descriptors. D layout per warp w of the warpgroup: rows
// 16w + lane/4 (+8), columns 8j + 2*(lane%4) (+1) in d[4j + {0,1,2,3}]: the mma.m16n8 C fragment order,
// so tc_warp_store writes it.
template <int N>
struct WgmmaTf32;
#pragma nv_diag_suppress 177  // the shapes a configuration does not use are "declared but never referenced"
template <>
struct WgmmaTf32<16> {  // m64n16k8: 8 fp32 accumulators per thread
  static __device__ __forceinline__ void mma(float (&d)[8], uint64_t a, uint64_t b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7"
        "}, %8, %9, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "l"(a), "l"(b), "r"(accumulate));
  }
};
template <>
struct WgmmaTf32<32> {  // m64n32k8: 16 fp32 accumulators per thread
  static __device__ __forceinline__ void mma(float (&d)[16], uint64_t a, uint64_t b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
        "}, %16, %17, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "l"(a), "l"(b), "r"(accumulate));
  }
};
template <>
struct WgmmaTf32<64> {  // m64n64k8: 32 fp32 accumulators per thread
  static __device__ __forceinline__ void mma(float (&d)[32], uint64_t a, uint64_t b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, %32, %33, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(a), "l"(b), "r"(accumulate));
  }
};

// Shared-memory matrix descriptor of a K-major operand in the 128-byte swizzled layout: start address,
// leading byte offset unused (1), stride byte offset 1024 B (between 8-row groups), swizzle mode 1 (128 B).
__device__ __forceinline__ uint64_t wg_desc(uint32_t smem_addr) {
  return static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4) | (1ull << 16) | (static_cast<uint64_t>(1024 >> 4) << 32) |
         (1ull << 62);
}
// Byte offset of element (row, k) of a K-major operand with `rows` rows, 128-byte swizzle: K in atoms of
// 32 fp32 (one 128-byte row each); an atom is `rows` rows of 128 B; the 16-byte chunk index (k % 32) / 4
// is XORed with row % 8. Atoms start 1024-byte aligned, as the hardware's swizzle assumes.
__host__ __device__ __forceinline__ uint32_t wg_swz(int row, int k, int rows) {
  return static_cast<uint32_t>((k >> 5) * rows * 128 + row * 128 + ((((k & 31) >> 2) ^ (row & 7)) << 4) + (k & 3) * 4);
}
// Pin the accumulators around the asynchronous MMA, so the compiler neither reads nor moves them while
// the tensor cores own them.
template <int R>
__device__ __forceinline__ void wg_fence_regs(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int N>
__device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Generic-proxy smem writes (st.shared, cp.async) -> visible to the async proxy (wgmma operand reads).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Issue this warpgroup's GEMM for one tile: d (64 x N) = 64 W rows x N act rows (time columns), K = 128
// (C_in zero-padded), as 16 asynchronous wgmmas in one commit group (fully unrolled: a run-time trip
// count made ptxas insert warpgroup waits). w_addr: smem address of the warpgroup's first W row (k atom
// 0); act_addr: of its first act row in act buffer k atom 0, whose atoms are TT rows apart.
template <int N, int TT>
__device__ __forceinline__ void wg_gemm_issue(float (&d)[N / 2], uint32_t w_addr, uint32_t act_addr) {
  wg_fence_regs(d);
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
  for (int ks = 0; ks < (FUSED_ABLATE & 2 ? 0 : kMaxCin / 8); ++ks) {
    const uint32_t koff = (ks & 3) * 32u;  // k-step within the 128-byte atom row: 8 fp32 = 32 bytes
    WgmmaTf32<N>::mma(d, wg_desc(w_addr + (ks >> 2) * (kRows * 128) + koff),
                      wg_desc(act_addr + (ks >> 2) * (TT * 128) + koff), ks > 0);
  }
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  wg_fence_regs(d);
}

// ---- TMA (cp.async.bulk.tensor) for the x tiles ----
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
// Arm mbarrier `bar` for one phase: this thread's arrival plus `bytes` of transactions still to land.
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
// One 3-D box of x (t from c0, channels from c1, batch c2; zeros outside the tensor) -> smem, completing
// `bytes` on `bar`.
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n"
      ::"r"(smem_u32(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_u32(bar))
      : "memory");
}
// One 3-D box smem -> y (t from c0, channels from c1, batch c2; parts outside the tensor are not written),
// in this thread's bulk group.
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_u32(src)) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Wait until this thread's bulk stores have read their smem source (kRead) or completed.
template <bool kRead>
__device__ __forceinline__ void bulk_wait_all() {
  if constexpr (kRead) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
  else asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

// Depthwise + bias + SiLU of one channel over output groups [j0, j1) of one tile, into act (K-major,
// swizzled: row = tile column, k = channel). Group j covers tile columns 4j - shift .. 4j - shift + 3 and
// reads the 16-byte aligned x window starting at x-tile column 4j (see tc_dw_silu_x4). Channels >= C_in
// (live == false) write zeros, so the padded K terms of the GEMM are exact zeros. K and D are compile-time
// constants: only the window's float4s and the taps that exist are issued (the run-time K form issued
// kKmax predicated taps and window copies: 170-223 SASS instructions per 4 outputs at d=2, now 106-110).
template <int TT, int D, int K>
__device__ __forceinline__ void wg_dw_silu_k(unsigned char* sAct, const float* xrow, const float (&wt)[16 / D + 1],
                                             float bias, int c, bool live, int j0, int j1, int shift) {
  constexpr int NQ = ((K - 1) * D + 4 + 3) / 4;  // float4s in the window
  const uint32_t cbase = (c >> 5) * (TT * 128) + (c & 3) * 4;
  const uint32_t chunk = (c >> 2) & 7;
  for (int j = j0; j < j1; ++j) {
    float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (live) {
      float win[4 * NQ];
#pragma unroll
      for (int q = 0; q < NQ; ++q) {
        const float4 w4 = *reinterpret_cast<const float4*>(xrow + 4 * j + 4 * q);
        win[4 * q] = w4.x; win[4 * q + 1] = w4.y; win[4 * q + 2] = w4.z; win[4 * q + 3] = w4.w;
      }
      float acc[4] = {bias, bias, bias, bias};
#pragma unroll
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[i] = fmaf(wt[k], win[k * D + i], acc[i]);
#pragma unroll
      for (int i = 0; i < 4; ++i) v[i] = tc_round_tf32(silu_fast(acc[i]));
    }
    const int tt0 = 4 * j - shift;
    auto put = [&](int tt, float val) {
      *reinterpret_cast<float*>(sAct + cbase + tt * 128 + ((chunk ^ (tt & 7)) << 4)) = val;
    };
    if (tt0 >= 0 && tt0 + 4 <= TT) {  // warp-uniform (the lanes of a warp share j)
#pragma unroll
      for (int i = 0; i < 4; ++i) put(tt0 + i, v[i]);
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i)
        if (tt0 + i >= 0 && tt0 + i < TT) put(tt0 + i, v[i]);
    }
  }
}
// Run-time K -> wg_dw_silu_k<.., K> (K = KK, KK - 1, ..., 1; the shape test guarantees (K-1)*D <= 16).
template <int TT, int D, int KK = 16 / D + 1>
__device__ __forceinline__ void wg_dw_silu(int K, unsigned char* sAct, const float* xrow, const float (&wt)[16 / D + 1],
                                           float bias, int c, bool live, int j0, int j1, int shift) {
  if constexpr (KK >= 1) {
    if (K == KK) wg_dw_silu_k<TT, D, KK>(sAct, xrow, wt, bias, c, live, j0, j1, shift);
    else wg_dw_silu<TT, D, KK - 1>(K, sAct, xrow, wt, bias, c, live, j0, j1, shift);
  }
}

// The kernel. Persistent blocks walk tiles (b, TT time steps) tile = blockIdx.x + i * gridDim.x:
//   prologue: TMA x(0), x(1); W_pw -> smem (tf32); depthwise(0) -> act[0]; TMA x(2); MMA(0)
//   step i:   wait x(i+1) (mbarrier); depthwise(i+1) -> act[(i+1)%2]   (MMA(i) runs meanwhile)
//             wait MMA(i); bias + store y(i) from the accumulators
//             barrier; TMA x(i+3) into the x slot depthwise(i+1) freed; issue MMA(i+1)
// Warpgroup g multiplies W rows 64 (g % 2) .. + 63 by tile columns kNT (g / 2) .. + kNT - 1.
template <int TT, int D>
__global__ void __launch_bounds__(kThreads, 1) wg_kernel(const TcParams p, const __grid_constant__ CUtensorMap xmap,
                                                         const __grid_constant__ CUtensorMap ymap) {
  constexpr int kKmax = 16 / D + 1;
  extern __shared__ unsigned char wg_smem_raw[];
  // the swizzle needs 1024-byte aligned atoms: align the base (the plan asks for 1 KB extra)
  unsigned char* smem = wg_smem_raw + ((1024 - (__cvta_generic_to_shared(wg_smem_raw) & 1023)) & 1023);
  float* sW = reinterpret_cast<float*>(smem + p.off_w);
  uint64_t* xbar = reinterpret_cast<uint64_t*>(smem + p.off_mbar);  // one per x slot
  const uint32_t w_addr = smem_u32(sW), act_addr = smem_u32(smem + p.off_act);

  const int tid = threadIdx.x, warp = tid >> 5, wgroup = warp >> 2;
  // K is always 128 (C_in zero-padded): thread -> one channel c (lanes on consecutive channels) and one
  // share h of the tile's output groups
  constexpr int CP = kMaxCin, nsplit = kThreads / CP;
  const int c = tid % CP, h = tid / CP;
  const bool live = c < p.C_in;
  float wt[kKmax], bias = 0.0f;
#pragma unroll
  for (int k = 0; k < kKmax; ++k) wt[k] = (live && k < p.K) ? __ldg(p.w_dw + c * p.K + k) : 0.0f;
  if (live && p.b_dw) bias = __ldg(p.b_dw + c);

  if (tid == 0) {
    mbar_init(&xbar[0], 1);
    mbar_init(&xbar[1], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the TMA unit
  }
  __syncthreads();

  float* y = static_cast<float*>(p.y);  // (direct stores only)
  const uint32_t x_bytes = static_cast<uint32_t>(p.XW) * p.C_in * 4;  // one box (zero-filled parts count)
  auto x_slot = [&](int s) { return reinterpret_cast<float*>(smem + p.off_x + s * p.x_stage); };
  auto issue_x = [&](int s, int64_t t) {  // thread 0 only
    if (t < p.n_tiles && !(FUSED_ABLATE & 8)) {
      mbar_expect_tx(&xbar[s], x_bytes);
      tma_load_3d(x_slot(s), &xmap, &xbar[s], static_cast<int>(tc_x_start((t % p.n_tt) * TT - p.padding, 4)), 0,
                  static_cast<int>(t / p.n_tt));
    }
  };
  auto wait_x = [&](int s, int use) {  // the use-th fill of slot s (phases alternate parity)
    if (!(FUSED_ABLATE & 8)) mbar_wait(&xbar[s], use & 1);
  };
  auto depthwise = [&](int s, int64_t t) {  // x slot s -> act buffer s, tile t
    const int64_t xs = (t % p.n_tt) * TT - p.padding;
    const int shift = static_cast<int>(xs - tc_x_start(xs, 4));
    const int G = TT / 4 + (shift > 0 ? 1 : 0);  // groups per channel row
    if (!(FUSED_ABLATE & 1))
      wg_dw_silu<TT, D>(p.K, smem + p.off_act + s * p.act_stage, x_slot(s) + c * p.XW, wt, bias, c, live,
                        G * h / nsplit, G * (h + 1) / nsplit, shift);
  };

  const int64_t stride = gridDim.x;
  int64_t tile = blockIdx.x;  // grid <= n_tiles: every block has a first tile
  if (tid == 0) {
    issue_x(0, tile);
    issue_x(1, tile + stride);
  }
  // (while the first x tiles are in flight) W_pw -> tf32 (round to nearest), swizzled K-major
  // [4][kRows][32], zero outside C_out x C_in: every
  // thread's 16-byte loads in flight at once, then rounded and stored (one L2 round trip per block).
  if (p.C_in % 4 == 0 && (reinterpret_cast<uintptr_t>(p.w_pw) & 15) == 0) {
    constexpr int kPer = kRows * CP / 4 / kThreads;  // float4s per thread
    float4 v[kPer];
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
      const int i = tid + r * kThreads, m = i / (CP / 4), k = (i % (CP / 4)) * 4;
      v[r] = (m < p.C_out && k < p.C_in) ? __ldg(reinterpret_cast<const float4*>(p.w_pw + m * p.C_in + k))
                                         : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
      const int i = tid + r * kThreads, m = i / (CP / 4), k = (i % (CP / 4)) * 4;
      *reinterpret_cast<float4*>(smem + p.off_w + wg_swz(m, k, kRows)) =
          make_float4(__uint_as_float(tc_tf32(v[r].x)), __uint_as_float(tc_tf32(v[r].y)),
                      __uint_as_float(tc_tf32(v[r].z)), __uint_as_float(tc_tf32(v[r].w)));
    }
  } else {
    for (int i = tid; i < kRows * CP; i += kThreads) {
      const int m = i / CP, k = i - m * CP;
      const float w = (m < p.C_out && k < p.C_in) ? __ldg(p.w_pw + m * p.C_in + k) : 0.0f;
      *reinterpret_cast<float*>(smem + p.off_w + wg_swz(m, k, kRows)) = __uint_as_float(tc_tf32(w));
    }
  }
  wait_x(0, 0);
  depthwise(0, tile);
  fence_proxy_async();
  __syncthreads();  // act[0] and W_pw complete and visible to wgmma; x slot 0 free
  if (tid == 0) issue_x(0, tile + 2 * stride);

  float d[kNT / 2];
#pragma unroll
  for (int r = 0; r < kNT / 2; ++r) d[r] = 0.0f;
  const int wg_m = wgroup & 1, wg_n = wgroup >> 1;
  const uint32_t w_wg = w_addr + wg_m * 64 * 128;  // this warpgroup's first W row
  const uint32_t act_wg = act_addr + wg_n * kNT * 128;  // ... and its first act row (tile column)
  wg_gemm_issue<kNT, TT>(d, w_wg, act_wg);

  // y(i) leaves by TMA (p.y_tma): bias is added and the tile written into act[i % 2], free once every
  // warpgroup's MMA(i) is done, in the 128-byte swizzled layout of a (32 t x 128 channel) box per 32
  // columns (wg_swz with k = t); thread 0 then issues TT / 32 bulk tensor stores. Otherwise y is stored
  // from the accumulators (tc_warp_store).
  // The loop exits only before an MMA is issued, so every path to the accumulators' next use passes a
  // wgmma.wait (otherwise ptxas inserts one right after the issue and serializes MMA and depthwise).
  const int lane = tid & 31, g = lane >> 2, q = lane & 3;
  const int row_lo = wg_m * 64 + (warp & 3) * 16 + g;  // this thread's accumulator rows: row_lo, row_lo + 8
  const float bias_lo = (p.b_pw && row_lo < p.C_out) ? __ldg(p.b_pw + row_lo) : 0.0f;
  const float bias_hi = (p.b_pw && row_lo + 8 < p.C_out) ? __ldg(p.b_pw + row_lo + 8) : 0.0f;
  for (int i = 0;; ++i) {
    const int slot = i & 1;
    const int64_t next = tile + stride;
    const bool has_next = next < p.n_tiles;  // block-uniform
    if (p.y_tma) {  // the stores of y(i-1) must have read act[slot ^ 1] before depthwise(i+1) writes it
      if (tid == 0) bulk_wait_all<true>();
      __syncthreads();
    }
    if (has_next) {
      wait_x(slot ^ 1, (i + 1) >> 1);  // x(next) landed
      depthwise(slot ^ 1, next);       // overlaps MMA(tile)
      fence_proxy_async();             // act[slot ^ 1] -> visible to MMA(next)
    }
    wg_wait<0>();
    wg_fence_regs(d);
    const int64_t b = tile / p.n_tt, t0 = (tile % p.n_tt) * TT;
    if (p.y_tma) {
      __syncthreads();  // every warpgroup's MMA(tile) has read act[slot]
      unsigned char* ystage = smem + p.off_act + slot * p.act_stage;
#pragma unroll
      for (int j = 0; j < kNT / 8; ++j) {
        const int col = wg_n * kNT + 8 * j + 2 * q;
        *reinterpret_cast<float2*>(ystage + wg_swz(row_lo, col, kRows)) =
            make_float2(d[4 * j] + bias_lo, d[4 * j + 1] + bias_lo);
        *reinterpret_cast<float2*>(ystage + wg_swz(row_lo + 8, col, kRows)) =
            make_float2(d[4 * j + 2] + bias_hi, d[4 * j + 3] + bias_hi);
      }
      fence_proxy_async();
      __syncthreads();  // the y tile is in smem
      if (tid == 0 && !(FUSED_ABLATE & 4)) {
        for (int c0 = 0; c0 < TT && t0 + c0 < p.T_out; c0 += 32)
          tma_store_3d(&ymap, ystage + c0 * (kRows * 4), static_cast<int>(t0 + c0), 0, static_cast<int>(b));
        bulk_commit();
      }
    } else {
      const int64_t tcol = t0 + wg_n * kNT;
      if (FUSED_ABLATE & 4) {
      } else if (p.y_pair && tcol + kNT <= p.T_out && row_lo + 8 < p.C_out) {  // all of this thread's outputs exist
        float* y_lo = y + (b * p.C_out + row_lo) * p.T_out + tcol + 2 * q;  // 8-byte aligned (y_pair)
        float* y_hi = y_lo + 8 * p.T_out;
#pragma unroll
        for (int j = 0; j < kNT / 8; ++j) {
          *reinterpret_cast<float2*>(y_lo + 8 * j) = make_float2(d[4 * j] + bias_lo, d[4 * j + 1] + bias_lo);
          *reinterpret_cast<float2*>(y_hi + 8 * j) = make_float2(d[4 * j + 2] + bias_hi, d[4 * j + 3] + bias_hi);
        }
      } else {
        tc_warp_store<float, 16, kNT>(reinterpret_cast<const float(&)[1][kNT / 8][4]>(d), y, p, b,
                                      wg_m * 64 + (warp & 3) * 16, tcol);
      }
      __syncthreads();  // act[slot ^ 1] complete; x slot (slot ^ 1) free; act[slot] no longer read
    }
    if (!has_next) break;
    if (tid == 0) issue_x(slot ^ 1, next + 2 * stride);
    wg_gemm_issue<kNT, TT>(d, w_wg, act_wg + (slot ^ 1) * p.act_stage);
    tile = next;
  }
  if (tid == 0) bulk_wait_all<false>();  // the last y stores complete before the block exits
  // Every x box this block issued has been waited for (x(i+2), x(i+3) only exist while tiles remain).
}

// Host: the shape test shared by the refusal and the plan (nullptr = supported).
const char* wg_shape_refusal(const FusedArgs& a) {
  if (!tc_x4_path(a))
    return "needs T % 4 == 0 and 16-byte aligned x, dilation <= 4 and (K-1)*dilation <= 16 (the windowed depthwise)";
  if (a.C_in > kMaxCin || a.C_out > kRows)
    return "needs C_in <= 128 and C_out <= 128 (W_pw resident as two 64-row wgmma tiles)";
  return nullptr;
}

// Host: smem layout [W_pw | act x 2 | x x 2 | 2 mbarriers] (+1 KB for the 1024-byte alignment of the base).
bool wg_plan(const FusedArgs& a, TcParams& p, size_t& smem) {
  size_t unused;
  if (!tc_plan(a, 4, TILE_T, kRows, p, unused)) return false;  // the shape fields of p
  const int64_t limit = a.max_smem_optin > 0 ? a.max_smem_optin : 227 * 1024;
  const int64_t span = static_cast<int64_t>(a.K - 1) * a.dilation;
  int xw = static_cast<int>((TILE_T + span + 8 + 3) / 4 * 4);
  if ((xw / 4) % 2 == 0) xw += 4;  // odd number of 16-byte chunks per row: the depthwise's LDS.128 of 8
                                   // consecutive channels hit 8 distinct bank groups
  p.C_in_pad = kMaxCin;  // the GEMM's K
  // TMA stores need 16-byte row strides and base (else y goes out from the registers)
  p.y_tma = (a.T_out % 4 == 0 && reinterpret_cast<uintptr_t>(a.y) % 16 == 0 && FUSED_Y_TMA) ? 1 : 0;
  p.XW = xw;
  p.off_w = 0;
  p.off_act = static_cast<uint32_t>(kRows * kMaxCin * 4);
  p.act_stage = static_cast<uint32_t>(TILE_T * kMaxCin * 4);  // a multiple of 1024
  p.off_x = p.off_act + 2 * p.act_stage;
  p.x_stage = static_cast<uint32_t>((a.C_in * xw * 4 + 1023) / 1024 * 1024);  // TMA boxes: 128-byte aligned
  p.off_mbar = p.off_x + 2 * p.x_stage;
  const int64_t total = static_cast<int64_t>(p.off_mbar) + 2 * 8 + 1024;
  if (xw > 256 || total > limit) return false;  // (a TMA box is at most 256 elements per dimension)
  smem = static_cast<size_t>(total);
  return true;
}

// Host: a TMA descriptor of a (B, C, L) fp32 tensor as 3-D (L, C, B), box (box_l, C, 1).
// x: box XW, no swizzle, zeros outside; y: box 32 (128 bytes) in the 128-byte swizzled layout.
CUtensorMap wg_tensor_map(const void* base, int64_t B, int64_t C, int64_t L, int box_l, bool swizzle) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess || found != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  if (!encode) throw std::runtime_error("wgmma variant: the driver has no cuTensorMapEncodeTiled");
  CUtensorMap map;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(L), static_cast<cuuint64_t>(C), static_cast<cuuint64_t>(B)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(L) * 4, static_cast<cuuint64_t>(C * L) * 4};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(box_l), static_cast<cuuint32_t>(C), 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, const_cast<void*>(base), dims, strides, box,
                            elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            swizzle ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("wgmma variant: cuTensorMapEncodeTiled failed with CUresult " + std::to_string(r));
  return map;
}

int device_arch() {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  return major * 10 + minor;
}

}  // namespace

const char* fused_unsupported(const FusedArgs& a) {
  if (const char* why = require_float32(a)) return why;
  if (device_arch() != 90) return "needs an sm_90 GPU (H100/H200): wgmma exists only on sm_90a";
  if (const char* why = wg_shape_refusal(a)) return why;
  TcParams p{};
  size_t smem = 0;
  if (!wg_plan(a, p, smem)) return "the kernel span (K-1)*dilation is too large for the x tiles in shared memory";
  return nullptr;
}

void fused_forward(const FusedArgs& a, void* stream) {
  TcParams p{};
  size_t smem = 0;
  if (wg_shape_refusal(a) || !wg_plan(a, p, smem))
    throw std::runtime_error("wgmma variant: shape not supported (see fused_unsupported)");
  const CUtensorMap xmap = wg_tensor_map(a.x, a.B, a.C_in, a.T, p.XW, false);
  const CUtensorMap ymap = p.y_tma ? wg_tensor_map(a.y, a.B, a.C_out, a.T_out, 32, true) : xmap;
  switch (a.dilation) {
    case 1: return tc_launch_persistent(wg_kernel<TILE_T, 1>, kThreads, smem, a, p, stream, xmap, ymap);
    case 2: return tc_launch_persistent(wg_kernel<TILE_T, 2>, kThreads, smem, a, p, stream, xmap, ymap);
    case 3: return tc_launch_persistent(wg_kernel<TILE_T, 3>, kThreads, smem, a, p, stream, xmap, ymap);
    default: return tc_launch_persistent(wg_kernel<TILE_T, 4>, kThreads, smem, a, p, stream, xmap, ymap);
  }
}
