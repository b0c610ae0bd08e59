// variant: accuracy=tf32 dtypes=float32 arch=9.0a
// Rung 13, wide channels: the fused kernel for C_in and C_out beyond 128, where rungs 09-12 (W_pw resident,
// the whole C_in of a tile in shared memory) refuse and ModelNew used to run the general path (dw_silu, then
// PyTorch's 1x1 conv: act written to HBM and read back). At C_in <= 128 and C_out <= 128 this variant runs rung
// 09's kernel unchanged (wgmma.cuh), so ModelNew's TF32 class can name one variant for every width.
//
// The wide kernel (wide_kernel below): one block per (C_out tile of 256 rows, batch row, 128 time steps);
// 4 warpgroups, each the wgmma m64n128k8 of 64 output rows x the 128 time steps. The GEMM's K (C_in) is
// streamed in chunks of 32 channels through a ring of S = 3 stages (2 where the x window is wide), each stage
// one TMA box of W_pw (256 rows x 32 channels, 128-byte swizzled: the K-major layout wgmma reads) and one of
// x (32 channels x the window: 128 + (K-1)*dilation steps, zeros outside the tensor), landing on one mbarrier.
// Per chunk every thread (a) rounds its share of the landed W_pw box to TF32 in place (round-to-nearest-even,
// as cuDNN rounds it: a TMA copy cannot round, and wgmma alone would truncate), (b) computes its share of the
// chunk's activations (32 channels x 128 steps: eager's depthwise from the bias with taps in order, eager's
// SiLU rounded to TF32 RNE by common.cuh's guarded form, same bits) into one of two act buffers; then one
// barrier, and the warpgroups issue the chunk's 4 wgmmas asynchronously: they run under the next chunk's rounding and
// depthwise. After the last chunk: bias + y from the accumulators. Nothing but x and y touches HBM (W_pw and the x of
// the other C_out tiles are L2 hits).
//
// Prediction (H200, 4.27 TB/s copy, TF32 wgmma ~3.7 TFLOP/s per SM): per chunk and block, 32 KB of W_pw from
// L2 + ~18 KB of x, 2.1 MFLOP of wgmma (~0.55 us), 4096 depthwise outputs on 512 threads (~0.6 us), all
// overlapped: ~0.7 us per chunk. B=16, T=2048: C=256 (256 blocks, 2 waves x 8 chunks) ~15-20 us, several times
// under the general path's two kernels; C=512 (512 blocks, 4 waves x 16 chunks) ~50-60 us; C=1024 (1024 blocks,
// 8 waves x 32 chunks) ~200 us, where the GEMM is most of the time and cuDNN's own GEMM is close to that.
// Limits (fused_unsupported): an sm_90 GPU; float32 with T % 4 == 0, C_in % 4 == 0 and 16-byte aligned x (TMA
// strides); (K-1)*dilation <= 124 (the x box is at most 256 steps); C_in >= 32 and T >= the x box (a box larger
// than its tensor faulted). Everything else: the general path.
// Knobs: WIDE_ALWAYS=1 runs the wide kernel at every width (so the battery checks it at small C too).
// Outcome: several times slower than predicted; faster than the general path at C <= 256, slower at C >= 512
// (docs/ladder.md: the runs, why, what to try). Status: ModelNew's TF32 kernel; its wide kernel serves C <= 256
// with enough rows (routing.fused_kernel_pays), the general path the rest. The fault where the x box started off
// 16 bytes (odd padding) is gone with the aligned start below (sanitizer-clean on the GPU).
// Measured: see the README's results table (generated from results/timings.csv) and docs/ladder.md.
#include "wgmma.cuh"  // rung 09's kernel and defaults for C <= 128; wgmma, TMA and mbarrier helpers

#ifndef WIDE_ALWAYS
#define WIDE_ALWAYS 0
#endif
#ifndef WIDE_SKIP
#define WIDE_SKIP 0  // a debugging and timing experiment, bits: 1 no wgmma, 2 no W_pw box, 4 no x box, 8 no W_pw
                     // rounding, 16 no depthwise, 32 no y stores (the output is then wrong)
#endif

namespace {

constexpr int kWideThreads = 512;  // 4 warpgroups
constexpr int kWideBM = 256;       // output rows per block: warpgroup g takes rows 64 g .. 64 g + 63
constexpr int kWideTT = 128;       // time steps per block: the wgmma N
constexpr int kWideBK = 32;        // channels per chunk: one 128-byte row of fp32 (one swizzle atom)
constexpr uint32_t kWideWBytes = kWideBM * 128;   // one W_pw stage (32 KB, 1024-byte aligned)
constexpr uint32_t kWideActBytes = kWideTT * 128;  // one act buffer (16 KB)

// The block's tile: C_out tile m (fastest, so the blocks sharing an x window run together and find it in L2),
// then time tile, then batch row.
struct WideTile {
  int m;
  int64_t b, t0;
};
__device__ __forceinline__ WideTile wide_tile(const TcParams& p) {
  const int64_t i = blockIdx.x, n_m = p.n_chunks;  // n_chunks: C_out tiles (see wide_plan)
  const int64_t bt = i / n_m;
  return {static_cast<int>(i % n_m), bt / p.n_tt, (bt % p.n_tt) * kWideTT};
}

// Smem layout from the 1024-byte aligned base: W_pw stages [S x 32 KB] | act [2 x 16 KB] | x stages [S x
// x_stage] | S mbarriers. TcParams fields as this kernel uses them: off_act, off_x, x_stage, off_mbar, XW (the x
// box's steps), C_in_pad (the number of K chunks), n_chunks (C_out tiles), groups (S).
__global__ void __launch_bounds__(kWideThreads, 1)
    wide_kernel(const TcParams p, const __grid_constant__ CUtensorMap xmap, const __grid_constant__ CUtensorMap wmap) {
  extern __shared__ unsigned char wg_smem_raw[];
  unsigned char* smem = wg_smem_base(wg_smem_raw);
  const int S = p.groups, NC = p.C_in_pad;
  uint64_t* bar = reinterpret_cast<uint64_t*>(smem + p.off_mbar);
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, wgroup = warp >> 2;
  const WideTile tile = wide_tile(p);
  const int m0 = tile.m * kWideBM;
  const uint32_t x_bytes = static_cast<uint32_t>(p.XW) * kWideBK * sizeof(float);
  // the x box starts 16-byte aligned (a TMA box start off 16 bytes faulted: odd padding, 2026-12-01 at 2308040),
  // `shift` steps before the tile's first tap
  const int64_t x_first = tile.t0 - p.padding;
  const int x_col = static_cast<int>(tc_x_start(x_first, 4)), shift = static_cast<int>(x_first - x_col);

  auto issue = [&](int c) {  // chunk c -> stage c % S (thread 0)
    const int s = c % S;
    mbar_expect_tx(&bar[s], (WIDE_SKIP & 2 ? 0 : kWideWBytes) + (WIDE_SKIP & 4 ? 0 : x_bytes));
    if (!(WIDE_SKIP & 2)) tma_load_2d(smem + s * kWideWBytes, &wmap, &bar[s], c * kWideBK, m0);
    if (!(WIDE_SKIP & 4))
      tma_load_3d(smem + p.off_x + s * p.x_stage, &xmap, &bar[s], x_col, c * kWideBK, static_cast<int>(tile.b));
  };
  if (tid == 0) {
    for (int s = 0; s < S; ++s) mbar_init(&bar[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the TMA unit
    for (int c = 0; c < S && c < NC; ++c) issue(c);
  }
  __syncthreads();

  float d[1][64];
#pragma unroll
  for (int r = 0; r < 64; ++r) d[0][r] = 0.0f;
  const bool mma_live = m0 + 64 * wgroup < p.C_out;  // warpgroup-uniform: rows past C_out need no MMA
  const uint32_t w_base = smem_u32(smem) + wgroup * 64 * 128, act_base = smem_u32(smem + p.off_act);
  const int K = p.K, dil = p.dilation;

  for (int c = 0; c < NC; ++c) {
    const int s = c % S;
    mbar_wait(&bar[s], (c / S) & 1);
    // (a) W_pw box -> TF32 in place (tc_tf32_gemm: to nearest even; ties away under FUSED_TF32_RNA): 2048 float4 over
    // 512 threads
    float4* wst = reinterpret_cast<float4*>(smem + s * kWideWBytes);
#pragma unroll
    for (int r = 0; r < (WIDE_SKIP & 8 ? 0 : 4); ++r) {
      float4 w = wst[tid + r * kWideThreads];
      w.x = tc_round_tf32_gemm(w.x); w.y = tc_round_tf32_gemm(w.y);
      w.z = tc_round_tf32_gemm(w.z); w.w = tc_round_tf32_gemm(w.w);
      wst[tid + r * kWideThreads] = w;
    }
    // (b) act of channels 32 c + {2 warp, 2 warp + 1}, steps lane + 32 j: act[step][channel], swizzled K-major
    unsigned char* act = smem + p.off_act + (c & 1) * kWideActBytes;
    const float* xst = reinterpret_cast<const float*>(smem + p.off_x + s * p.x_stage);
#pragma unroll
    for (int h = 0; h < (WIDE_SKIP & 16 ? 0 : 2); ++h) {
      const int cc = 2 * warp + h, ch = c * kWideBK + cc;
      const bool live = ch < p.C_in;
      float acc[4];
      const float bias = (live && p.b_dw) ? __ldg(p.b_dw + ch) : 0.0f;
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[j] = bias;
      const float* xrow = xst + cc * p.XW + shift + lane;
      if (live)
        for (int k = 0; k < K; ++k) {
          const float w = __ldg(p.w_dw + ch * K + k);
#pragma unroll
          for (int j = 0; j < 4; ++j) acc[j] = fmaf(w, xrow[32 * j + k * dil], acc[j]);
        }
      silu_rounded<13>(acc);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int tt = lane + 32 * j;
        *reinterpret_cast<float*>(act + wg_swz<4>(tt, cc, kWideTT)) = live ? acc[j] : 0.0f;
      }
    }
    fence_proxy_async();  // the rounded W_pw and act -> visible to wgmma
    __syncthreads();
    // (c) the chunk's GEMM: 4 k-steps of 8 channels, asynchronous
    if (mma_live && !(WIDE_SKIP & 1)) {
      wg_fence_regs(d);
      asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
      const uint32_t wa = w_base + s * kWideWBytes, aa = act_base + (c & 1) * kWideActBytes;
#pragma unroll
      for (int ks = 0; ks < 4; ++ks) Wgmma<128, float>::mma(d[0], wg_desc(wa + 32 * ks), wg_desc(aa + 32 * ks), 1);
      asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
      wg_fence_regs(d);
      wg_wait<1>();  // the previous chunk's GEMM is done: its W_pw stage and act buffer are free
      wg_fence_regs(d);
    }
    __syncthreads();
    if (tid == 0 && c >= 1 && c - 1 + S < NC) issue(c - 1 + S);  // into the stage chunk c - 1 used
  }
  if (mma_live && !(WIDE_SKIP & 32)) {
    if (!(WIDE_SKIP & 1)) wg_wait<0>();
    wg_fence_regs(d);
    const int row0 = m0 + 64 * wgroup;
    const float2 bias_pw = wg_bias(p, row0);
    wg_store<float, 128, 1>(d, static_cast<float*>(p.y), p, tile.b, row0, tile.t0, bias_pw.x, bias_pw.y);
  }
}

// Host: a TMA descriptor of W_pw (C_out x C_in fp32, row-major) as 2-D (C_in, C_out), box 32 x 256, 128-byte
// swizzle, zeros outside.
CUtensorMap wide_w_map(const float* w, int64_t C_out, int64_t C_in) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(C_in), static_cast<cuuint64_t>(C_out)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(C_in) * sizeof(float)};
  const cuuint32_t box[2] = {kWideBK, kWideBM};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = wg_encode_fn()(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(w), dims, strides,
                                    box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("wgmma_wide: cuTensorMapEncodeTiled (W_pw) failed with CUresult " + std::to_string(r));
  return map;
}

const char* wide_shape_refusal(const FusedArgs& a) {
  if (a.T % 4 != 0 || reinterpret_cast<uintptr_t>(a.x) % 16 != 0)
    return "the wide kernel needs T % 4 == 0 and 16-byte aligned x (TMA strides)";
  if (a.C_in % 4 != 0 || reinterpret_cast<uintptr_t>(a.w_pw) % 16 != 0)
    return "the wide kernel needs C_in % 4 == 0 and 16-byte aligned W_pw (TMA strides)";
  if (static_cast<int64_t>(a.K - 1) * a.dilation > 124) return "the wide kernel needs (K-1)*dilation <= 124";
  // a TMA box may not be larger than its tensor along the channels (an illegal instruction on the H200 at C_in = 16)
  // nor, kept on the safe side, along time
  if (a.C_in < kWideBK || a.T < kWideTT + static_cast<int64_t>(a.K - 1) * a.dilation + 6)
    return "the wide kernel needs C_in >= 32 and T >= 128 + (K-1)*dilation + 6 (its TMA boxes)";
  if (a.C_in > (1 << 20) || a.C_out > (1 << 20) || a.B > (1 << 20)) return "the wide kernel's grid is too large";
  return nullptr;
}

// Host: the wide kernel's smem plan (false: does not fit).
bool wide_plan(const FusedArgs& a, TcParams& p, size_t& smem) {
  const int64_t limit = a.max_smem_optin > 0 ? a.max_smem_optin : 227 * 1024;
  const int64_t span = static_cast<int64_t>(a.K - 1) * a.dilation;
  const int xw = static_cast<int>((kWideTT + span + 3 + 3) / 4 * 4);  // up to 3 steps of alignment shift
  if (xw > 256) return false;
  const uint32_t x_stage = static_cast<uint32_t>((kWideBK * xw * 4 + 1023) / 1024 * 1024);
  int S = 3;
  auto total = [&](int s) {
    return static_cast<int64_t>(s) * (kWideWBytes + x_stage) + 2 * kWideActBytes + 8 * s + 1024;
  };
  if (total(S) > limit) S = 2;
  if (total(S) > limit) return false;
  p = TcParams{};
  p.x = a.x; p.y = a.y; p.w_dw = a.w_dw; p.b_dw = a.b_dw; p.w_pw = a.w_pw; p.b_pw = a.b_pw;
  p.T = a.T; p.T_out = a.T_out;
  p.n_tt = (a.T_out + kWideTT - 1) / kWideTT;
  p.C_in = static_cast<int>(a.C_in); p.C_out = static_cast<int>(a.C_out);
  p.K = a.K; p.dilation = a.dilation; p.padding = a.padding;
  p.C_in_pad = static_cast<int>((a.C_in + kWideBK - 1) / kWideBK);  // K chunks
  p.n_chunks = static_cast<int>((a.C_out + kWideBM - 1) / kWideBM);  // C_out tiles
  p.n_tiles = a.B * p.n_tt * p.n_chunks;
  p.XW = xw;
  p.groups = S;
  p.off_act = static_cast<uint32_t>(S) * kWideWBytes;
  p.off_x = p.off_act + 2 * kWideActBytes;
  p.x_stage = x_stage;
  p.off_mbar = p.off_x + static_cast<uint32_t>(S) * x_stage;
  p.y_pair = (a.T_out % 2 == 0 && reinterpret_cast<uintptr_t>(a.y) % 8 == 0) ? 1 : 0;
  smem = static_cast<size_t>(total(S));
  return true;
}

bool narrow(const FusedArgs& a) { return !WIDE_ALWAYS && a.C_in <= kMaxCin && a.C_out <= kRows; }

}  // namespace

const char* fused_unsupported(const FusedArgs& a) {
  if (const char* why = require_float32(a)) return why;
  if (a.cc != 90) return "needs an sm_90 GPU (H100/H200): wgmma exists only on sm_90a";
  if (narrow(a)) return wg_refusal<float, false>(a);  // rung 09's kernel, its limits
  if (const char* why = wide_shape_refusal(a)) return why;
  TcParams p;
  size_t smem;
  if (!wide_plan(a, p, smem)) return "the kernel span (K-1)*dilation is too large for the wide kernel's x boxes";
  return nullptr;
}

void fused_forward(const FusedArgs& a, void* stream) {
  if (narrow(a)) return wg_launch<float, false>(a, stream);
  TcParams p;
  size_t smem = 0;
  if (wide_shape_refusal(a) || !wide_plan(a, p, smem))
    throw std::runtime_error("wgmma_wide: shape not supported (see fused_unsupported)");
  if (p.n_tiles == 0) return;
  const CUtensorMap xmap = wg_x_map<float>(a.x, a.B, a.C_in, a.T, p.XW, kWideBK);
  const CUtensorMap wmap = wide_w_map(a.w_pw, a.C_out, a.C_in);
  CUDA_CHECK(cudaFuncSetAttribute(wide_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  wide_kernel<<<static_cast<unsigned>(p.n_tiles), kWideThreads, smem, static_cast<cudaStream_t>(stream)>>>(p, xmap,
                                                                                                          wmap);
}
