// pw_weight_grad.cu: backward rung 6, the 1x1 conv's weight and bias gradients as one TF32 tensor-core pass
// (contract: pw_wgrad_args.h). ModelNew's backward="wgrad_kernel" (an opt-in for A/B: measured slower, below) where
// rung 7 (pw_weight_grad_wgmma.cu, TMA + wgmma, faster than this one) is not built or the GPU is not sm_90.
// What it changes: after rung 4 (dw_silu_backward.cu) the backward runs cuDNN's weight-gradient GEMM (13.1-13.4 us
// at the headline) and its split-K reduction (1.6-1.9 us), and rung 4 reads dy (16.8 MB) only for db_pw's row sums.
// Here one pass reads act (written by rungs 4 and 5) and dy: dW_pw = dy act^T on mma.sync TF32 and db_pw from the
// same staged dy, so rung 4 no longer reads dy; the per-block sums are added up in the one finishing launch that
// already sums rung 4's (backward_finish): two launches and 16.8 MB fewer per backward.
// Form: G = one block per SM (512 threads, 16 warps); block j owns a contiguous range of (b, 32-step chunk) pairs,
// the GEMM's k dimension; each warp accumulates a 32 x 32 tile of the 128 x 128 dW_pw on mma.sync m16n8k8 in
// registers across the whole range (the accumulators are the block's partial). A chunk is staged by 16-byte loads
// into registers a chunk ahead and rounded to TF32 on its store to shared memory (pw_wgrad_ldg_kernel); the first
// forms staged by cp.async (git history: 4c0231d..9ae9e6b) and measured slower.
// Bytes at the headline: read act and dy, 33.5 MB, plus 8.4 MB of partials (L2-resident) for the finish.
// Prediction: at the copy rate, ~11 us (cuDNN's pair: ~15 us), and rung 4 ~4 us faster without dy.
// Outcome (docs/ladder.md, "backward rung 6"): rung 4 without dy ran 20.4-21.0 us against 24.9-25.4 (as predicted),
// but this kernel 24.5-28.4 us in the backward's profiles (the register form 24.5 at f63e967): the backward slower
// than with cuDNN's weight gradient (67.9 against 63.8 us in one run).
// scripts/pw_wgrad_sweep.cu: every cp.async form 29.8-35.3 us at the headline (chunk 16-64 steps, 2-8 buffers, an
// L2 prefetch hint: no knob moved it), the register form 28.2, against 14.7 us for a plain read of the same bytes
// under the same timer; taking the per-copy address arithmetic (a 64-bit division each) out of the loop changed
// nothing. ncu: DRAM 25-27% busy, warps stalled on global loads first: bound by how these reads (256 rows x 128
// bytes per chunk, rows 8 KB apart) stream, not by issue. Where the rows are half as many (C = 64) the register
// form takes 15.0 us against 9.5 for the read.
// Numerics: both operands rounded to nearest even as cuDNN's TF32 weight gradient rounds them; fp32 accumulation in
// another order than cuDNN's (per block along t, then over the blocks in a fixed order): 4.3e-6 of the max from
// eager's dW_pw at the headline. db_pw: fp32 sums of unrounded dy, in a fixed order. Deterministic, no atomics. Run
// only where cuDNN's own weight gradient is TF32 (eager_autograd.h's probe: cuDNN runs float32 kernels at many
// shapes under allow_tf32, logs/2026-12-02_e61db30_wgrad_numerics.txt).
// Limits: pw_wgrad_fits (T_out % 4 == 0, 16-byte aligned rows, kTcMinC <= C, C_out <= 128, sm_80+); other shapes
// and TF32 off keep cuDNN's weight gradient.
#include <cuda_runtime.h>
#include <cstdint>
#include <stdexcept>
#include <string>
#include "common.cuh"     // tc_tf32: RNE rounding to TF32
#include "mma_sync.cuh"   // tc_mma_tf32
#include "dw_backward_args.h"
#include "pw_wgrad_args.h"
#include "gpu_props.h"    // gpu_compute_capability, blocks_per_sm_capped

namespace pwwg {

constexpr int kThreads = 512, kWarps = kThreads / 32, kMaxC = 128;
static_assert(kWarps == 16, "a 4 x 4 grid of 32 x 32 warp tiles covers 128 x 128");
// Steps per chunk of the launch (pw_wgrad); scripts/pw_wgrad_sweep.cu times others.
constexpr int kKC = 32;

// Row stride of a staged chunk: KC + 4 floats = 4 (mod 32), so that a fragment's 32 reads (rows g, columns t) fall in
// 32 banks, and an odd count of 16-byte units, so that a quarter warp's float4 stores (8 of one row) do too.
template <int KC>
__host__ __device__ constexpr int row_stride() { return KC + 4; }

// grid G (pw_wgrad_blocks), 512 threads, 2 x 2 x kMaxC x row_stride<KC>() floats of dynamic shared memory. Each
// thread loads its share of chunk i + 2 (16-byte loads into registers) while the MMAs consume chunk i, and stores
// chunk i + 1 rounded into shared memory (db_pw's sums on the way): two chunk buffers, one barrier per chunk.
template <int KC>
__global__ void __launch_bounds__(kThreads, 1) pw_wgrad_ldg_kernel(const float* __restrict__ act,
                                                                  const float* __restrict__ gy, float* partial_w,
                                                                  float* partial_b, int64_t B, int C, int C_out,
                                                                  int T) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();
#else
  constexpr int RS = row_stride<KC>(), F4 = KC / 4, CF = kMaxC * RS;
  constexpr int kCopies = 2 * kMaxC * F4 / kThreads;
  static_assert(KC % 32 == 0 && (RS / 4) % 2 == 1 && (2 * kMaxC * F4) % kThreads == 0, "chunk shape");
  extern __shared__ float4 smem4[];
  float* sm = reinterpret_cast<float*>(smem4);  // 2 x {act [kMaxC][RS], dy [kMaxC][RS]}: TF32 bits
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, q4 = lane & 3;
  const int tiles = (T + KC - 1) / KC;
  const int64_t chunks = B * tiles, G = gridDim.x, blk = blockIdx.x;
  const int64_t c_begin = blk * chunks / G;
  const int n_mine = static_cast<int>((blk + 1) * chunks / G - c_begin);
  // copy k: float4 f = it % F4 of staged row r = it / F4 (it = tid + kThreads k): a quarter warp stores 8
  // consecutive float4s of one row (conflict-free), and the F4 threads of a row are F4 consecutive lanes
  int64_t sb = c_begin / tiles;
  int st0 = static_cast<int>(c_begin - sb * tiles) * KC;
  const float* src[kCopies];
  int64_t wrap[kCopies];
  int dst_off[kCopies], t_off[kCopies];
  bool valid[kCopies], is_gy[kCopies];
  float dbs[kCopies];
#pragma unroll
  for (int k = 0; k < kCopies; ++k) {
    const int it = tid + kThreads * k, r = it / F4, f = it % F4;
    const bool is_act = r < C;
    valid[k] = r < C + C_out;
    is_gy[k] = valid[k] && !is_act;
    const int64_t bstride = static_cast<int64_t>(is_act ? C : C_out) * T;
    src[k] = (is_act ? act + static_cast<int64_t>(r) * T : gy + static_cast<int64_t>(r - C) * T) + 4 * f +
             sb * bstride + st0;
    wrap[k] = bstride - static_cast<int64_t>(tiles) * KC;
    dst_off[k] = (is_act ? r * RS : CF + (r - C) * RS) + 4 * f;
    t_off[k] = 4 * f;
    dbs[k] = 0.0f;
  }
  float4 q[kCopies];
  auto load = [&]() {
#pragma unroll
    for (int k = 0; k < kCopies; ++k) {
      q[k] = valid[k] && st0 + t_off[k] < T ? __ldg(reinterpret_cast<const float4*>(src[k]))
                                            : make_float4(0.f, 0.f, 0.f, 0.f);
      src[k] += KC;
    }
    st0 += KC;
    if (st0 >= T) {
      st0 = 0;
#pragma unroll
      for (int k = 0; k < kCopies; ++k) src[k] += wrap[k];
    }
  };
  auto store = [&](int s) {
#pragma unroll
    for (int k = 0; k < kCopies; ++k) {
      if (!valid[k]) continue;
      if (is_gy[k]) dbs[k] += (q[k].x + q[k].y) + (q[k].z + q[k].w);
      *reinterpret_cast<float4*>(sm + s * 2 * CF + dst_off[k]) = tc_round_tf32(q[k]);
    }
  };
  const int m0 = 32 * (warp >> 2), n0 = 32 * (warp & 3);
  const bool mma_live = m0 < C_out && n0 < C;
  float acc[2][4][4];
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) acc[mt][nt][0] = acc[mt][nt][1] = acc[mt][nt][2] = acc[mt][nt][3] = 0.0f;
  if (n_mine > 0) {
    load();
    store(0);
  }
  if (n_mine > 1) load();
  __syncthreads();
  for (int i = 0; i < n_mine; ++i) {
    const int b = i & 1;
    if (i + 1 < n_mine) store(b ^ 1);  // buffer b ^ 1 was chunk i - 1's: every warp passed the barrier after it
    if (i + 2 < n_mine) load();
    if (mma_live) {
      const float* cg = sm + b * 2 * CF + CF;
      const float* ca = sm + b * 2 * CF;
#pragma unroll
      for (int ks = 0; ks < KC / 8; ++ks) {
        uint32_t af[2][4], bf[4][2];
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
          const float* p = cg + (m0 + 16 * mt + g) * RS + 8 * ks + q4;
          af[mt][0] = __float_as_uint(p[0]);
          af[mt][1] = __float_as_uint(p[8 * RS]);
          af[mt][2] = __float_as_uint(p[4]);
          af[mt][3] = __float_as_uint(p[8 * RS + 4]);
        }
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
          const float* p = ca + (n0 + 8 * nt + g) * RS + 8 * ks + q4;
          bf[nt][0] = __float_as_uint(p[0]);
          bf[nt][1] = __float_as_uint(p[4]);
        }
#pragma unroll
        for (int mt = 0; mt < 2; ++mt)
#pragma unroll
          for (int nt = 0; nt < 4; ++nt) tc_mma_tf32(acc[mt][nt], af[mt], bf[nt]);
      }
    }
    __syncthreads();
  }
  float* pw = partial_w + blk * C_out * static_cast<int64_t>(C);
  if (mma_live) {
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) {
        const int o = m0 + 16 * mt + g, c = n0 + 8 * nt + 2 * q4;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          if (o + 8 * h >= C_out) continue;
          float* dst = pw + static_cast<int64_t>(o + 8 * h) * C + c;
          if (c < C) dst[0] = acc[mt][nt][2 * h];
          if (c + 1 < C) dst[1] = acc[mt][nt][2 * h + 1];
        }
      }
  }
  // db_pw's partial: row r's F4 threads are F4 consecutive lanes; their sums meet by fixed-order shuffles
#pragma unroll
  for (int k = 0; k < kCopies; ++k) {
    float v = dbs[k];
#pragma unroll
    for (int o = 1; o < F4 && o < 32; o <<= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    const int r = (tid + kThreads * k) / F4;
    if (partial_b && is_gy[k] && (tid % F4) == 0) partial_b[(r - C) * G + blk] = v;
  }
#endif
}

template <int KC>
cudaError_t launch_ldg(const PwWgradArgs& a, int64_t G, cudaStream_t stream) {
  constexpr size_t smem = sizeof(float) * 2 * 2 * kMaxC * row_stride<KC>();
  const cudaError_t attr = cudaFuncSetAttribute(pw_wgrad_ldg_kernel<KC>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                static_cast<int>(smem));
  if (attr != cudaSuccess) return attr;
  pw_wgrad_ldg_kernel<KC><<<static_cast<unsigned>(G), kThreads, smem, stream>>>(
      a.act, a.gy, a.partial_w, a.partial_b, a.B, static_cast<int>(a.C), static_cast<int>(a.C_out),
      static_cast<int>(a.T));
  return cudaGetLastError();
}

}  // namespace pwwg

bool pw_wgrad_fits(const PwWgradArgs& a) {
  auto aligned16 = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return gpu_compute_capability() >= 80 && a.act && a.gy && a.partial_w && aligned16(a.act) && aligned16(a.gy) && a.T % 4 == 0 &&
         a.C >= kTcMinC && a.C <= pwwg::kMaxC && a.C_out >= kTcMinC && a.C_out <= pwwg::kMaxC && a.B >= 0 &&
         a.T <= 0x7fffffff - 1024;
}

int64_t pw_wgrad_blocks(const PwWgradArgs& a) {
  return pw_wgrad_tma_fits(a) ? pw_wgrad_tma_blocks(a) : blocks_per_sm_capped(a.B, a.T, pwwg::kKC);
}

void pw_wgrad(const PwWgradArgs& a, void* stream) {
  if (!pw_wgrad_fits(a)) throw std::runtime_error("pw_wgrad: shape outside the kernel's limits (pw_wgrad_fits)");
  const int64_t G = pw_wgrad_blocks(a);
  if (G < 1) return;
  if (pw_wgrad_tma_fits(a)) return pw_wgrad_tma(a, G, stream);
  const cudaError_t err = pwwg::launch_ldg<pwwg::kKC>(a, G, static_cast<cudaStream_t>(stream));
  if (err != cudaSuccess) throw std::runtime_error(std::string("pw_wgrad: launch failed: ") + cudaGetErrorString(err));
}
