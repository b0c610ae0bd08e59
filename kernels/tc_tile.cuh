// tc_tile.cuh: the mma.sync tensor-core tile kernel rungs 05-07 instantiate (tc_fused_kernel), its building
// blocks (TF32 mma fragments, the W_pw fill, x tiles, the depthwise tile), its host plan and launch, and the
// persistent launch wgmma.cuh and wgmma_rs.cuh share. Names carry a tc_ prefix.
#pragma once
#include "common.cuh"
#include "cp_async.cuh"
#include "mma_sync.cuh"
#include "fast_div.cuh"

// ---- tensor cores (rungs 05-07) ----
// Building blocks for the mma.sync rungs, plus the one tile kernel they share (tc_fused_kernel):
// 05 instantiates it with TF32, 06 with the 3xTF32 split, 07 with bf16/fp16 I/O. Names carry a tc_ prefix.

// Store two adjacent outputs of one row (8- or 4-byte store when `pair`, else element by element).
__device__ __forceinline__ void tc_store2(float* d, float v0, float v1) {
  *reinterpret_cast<float2*>(d) = make_float2(v0, v1);
}
__device__ __forceinline__ void tc_store2(__nv_bfloat16* d, float v0, float v1) {
  *reinterpret_cast<__nv_bfloat162*>(d) = __floats2bfloat162_rn(v0, v1);
}
__device__ __forceinline__ void tc_store2(__half* d, float v0, float v1) {
  *reinterpret_cast<__half2*>(d) = __floats2half2_rn(v0, v1);
}

// Everything the tile kernel needs; filled on the host by tc_plan.
struct TcParams {
  const void* x;
  void* y;
  const float *w_dw, *b_dw, *w_pw, *b_pw;
  int64_t T, T_out, n_tt, n_tiles;  // n_tt time tiles per batch row, n_tiles = B * n_tt
  int C_in, C_out, K, dilation, padding;
  int C_in_pad;     // C_in rounded up to 8 (the mma K step); padded rows of act are zero
  int XW;           // elements per x-tile row in smem (tile + halo + alignment slack)
  int w_rows;       // pointwise-weight rows held in smem (all C_out, or one BM chunk)
  int n_chunks;     // ceil(C_out / BM)
  int w_resident;   // 1: all of W_pw stays in smem; 0: one BM-row chunk reloaded per tile
  int x_vec;        // 1: 16-byte cp.async for x (T % VEC == 0, x aligned)
  int y_pair;       // 1: two-element stores for y (T_out even, y aligned)
  int y_tma = 0;    // wgmma.cuh's WG_Y_TMA: 1 = y by TMA stores (T_out * elem % 16 == 0, y 16-byte aligned)
  uint32_t off_act, off_wdw, off_w;  // byte offsets of the smem regions
  uint32_t off_x, x_stage, act_stage;  // tc_ws_kernel only: first x slot, bytes per x slot / act slot
  uint32_t off_mbar;                   // tc_ws_kernel only: its 4 mbarriers (8 bytes each)
  int groups = 0;                      // wgmma_rs only: warpgroups per block, each on its own tile (0 = 1 tile
                                       // per block); tc_launch_persistent sizes the grid by it
  FastDiv tt_div;                      // wgmma.cuh: tile index -> batch row (n_tt as the divisor; n_tiles < 2^31)
};

// Activation row stride (floats): TT + pad with stride % 32 == 8, so the B-fragment loads
// (rows k = t and t+4, column g) hit 32 distinct banks.
__host__ __device__ constexpr int tc_act_stride(int TT) { return TT + ((8 - TT % 32) + 32) % 32; }

// Copy W_pw rows [row0, row0 + rows) into smem in mma A-fragment order: fragment f = mt * KS + ks
// (16 rows x 8 columns) holds 32 lanes x float4 {a0, a1, a2, a3}, so one LDS.128 per lane loads a
// whole A fragment without bank conflicts. Out-of-range rows/columns are zero. kRound: store tf32.
// Every thread of the block calls it (it may __syncthreads once, to zero the padding first). W_pw is
// read as 16-byte vectors (C_in % 4 == 0) with kBatch loads in flight per thread before the first
// store, so the fill costs about one memory latency per kBatch * nthreads vectors.
template <bool kRound>
__device__ __forceinline__ void tc_fill_w(float* sW, const float* __restrict__ w_pw, int row0, int rows, int C_in,
                                          int C_in_pad, int C_out, int tid, int nthreads) {
  const int KS = C_in_pad / 8;
  const int real_rows = max(0, min(rows, C_out - row0));
  if (C_in != C_in_pad || real_rows != rows) {  // block-uniform
    for (int i = tid; i < rows * C_in_pad; i += nthreads) sW[i] = 0.0f;
    __syncthreads();
  }
  // (m, k) -> fragment (m/16)*KS + k/8, lane (m%8)*4 + k%4, register (m/8)%2 + 2*((k/4)%2)
  auto slot = [KS](int m, int k) {
    return ((((m >> 4) * KS + (k >> 3)) * 32 + (m & 7) * 4 + (k & 3)) << 2) + ((m >> 3) & 1) + (((k >> 2) & 1) << 1);
  };
  auto rnd = [](float v) { return kRound ? __uint_as_float(tc_tf32(v)) : v; };
  const float* src = w_pw + static_cast<int64_t>(row0) * C_in;
  constexpr int kBatch = 8;
  if (C_in % 4 == 0 && (reinterpret_cast<uintptr_t>(w_pw) & 15) == 0) {
    const int c4 = C_in / 4, n4 = real_rows * c4;
    for (int base = tid; base < n4; base += kBatch * nthreads) {
      float4 v[kBatch];
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const int i = base + j * nthreads;
        if (i < n4) v[j] = __ldg(reinterpret_cast<const float4*>(src) + i);
      }
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const int i = base + j * nthreads;
        if (i < n4) {
          const int m = i / c4, k = (i - m * c4) * 4;
          float* d = sW + slot(m, k);  // k..k+3 are lanes +0..+3 of the same register: 4 floats apart
          d[0] = rnd(v[j].x); d[4] = rnd(v[j].y); d[8] = rnd(v[j].z); d[12] = rnd(v[j].w);
        }
      }
    }
  } else {
    const int n = real_rows * C_in;
    for (int base = tid; base < n; base += kBatch * nthreads) {
      float v[kBatch];
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const int i = base + j * nthreads;
        if (i < n) v[j] = __ldg(src + i);
      }
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        const int i = base + j * nthreads;
        if (i < n) {
          const int m = i / C_in;
          sW[slot(m, i - m * C_in)] = rnd(v[j]);
        }
      }
    }
  }
}

// First x column a tile needs, rounded down to a multiple of `vec` (floor, also for negatives).
__host__ __device__ __forceinline__ int64_t tc_x_start(int64_t s, int vec) {
  return s >= 0 ? s / vec * vec : -((-s + vec - 1) / vec) * vec;
}

// Issue the loads of one x tile (all C_in rows, XW columns from xs_start) into sX, zero outside [0, T).
// 16-byte cp.async on the vector path; 4-byte cp.async for unaligned fp32; plain loads for unaligned
// 16-bit types (cp.async has no 2-byte form).
template <typename T>
__device__ __forceinline__ void tc_issue_x_tile(T* sX, const T* __restrict__ x, int64_t b, const TcParams& p,
                                                int64_t xs_start, int tid, int nthreads) {
  // Rows by warp, columns by lane: no run-time division in the address arithmetic.
  const T* xb = x + b * p.C_in * p.T;
  const int warp = tid >> 5, lane = tid & 31, nwarps = nthreads >> 5;
  if (p.x_vec) {
    constexpr int VEC = 16 / sizeof(T);
    const int cpr = p.XW / VEC;
    for (int ic = warp; ic < p.C_in; ic += nwarps) {
      const T* row = xb + static_cast<int64_t>(ic) * p.T;
      for (int c = lane; c < cpr; c += 32) {
        const int64_t gt = xs_start + static_cast<int64_t>(c) * VEC;  // whole chunk in or out (T % VEC == 0)
        const bool ok = gt >= 0 && gt < p.T;
        cp_async_16(sX + ic * p.XW + c * VEC, ok ? row + gt : row, ok ? 16 : 0);
      }
    }
  } else {
    for (int ic = warp; ic < p.C_in; ic += nwarps) {
      const T* row = xb + static_cast<int64_t>(ic) * p.T;
      for (int c = lane; c < p.XW; c += 32) {
        const int64_t gt = xs_start + c;
        const bool ok = gt >= 0 && gt < p.T;
        if constexpr (sizeof(T) == 4) cp_async_4(sX + ic * p.XW + c, ok ? row + gt : row, ok ? 4 : 0);
        else sX[ic * p.XW + c] = ok ? row[gt] : from_float<T>(0.0f);
      }
    }
  }
}

// Depthwise + bias + SiLU for one tile: act[ic][tt] (row stride AS) from the x tile in smem.
// Rows ic >= C_in and columns past T_out are written as zeros, so padded GEMM terms are exact zeros.
// A warp takes one channel row at a time, its lanes the columns (lane, lane + 32, ...): each depthwise
// weight is one broadcast load reused for TT/32 outputs, and for K <= kKmax the k loop is unrolled at
// compile time (the K test is warp-uniform), so a tap costs an LDS + FFMA with no index arithmetic.
// `warp` / `nwarps`: this warp's index among the warps that share the work, and their number.
template <typename T, bool kRound, bool kFastSilu, int TT, int AS>
__device__ __forceinline__ void tc_dw_silu_tile(float* sAct, const T* sX, const float* sWdw, const float* sBdw,
                                                const TcParams& p, int shift, int64_t t0, int warp, int nwarps) {
  constexpr int kKmax = 9, Q = (TT + 31) / 32;
  const int lane = threadIdx.x & 31;
  for (int ic = warp; ic < p.C_in_pad; ic += nwarps) {
    float* arow = sAct + ic * AS;
    float acc[Q];
    if (ic < p.C_in) {
      const T* xr = sX + ic * p.XW + shift + lane;  // x tile column of x[t0 + lane - padding]
      const float* wr = sWdw + ic * p.K;
#pragma unroll
      for (int q = 0; q < Q; ++q) acc[q] = sBdw[ic];
      if (p.K <= kKmax) {
#pragma unroll
        for (int k = 0; k < kKmax; ++k) {
          if (k < p.K) {
            const float w = wr[k];
            const T* xk = xr + k * p.dilation;
#pragma unroll
            for (int q = 0; q < Q; ++q)
              if (lane + 32 * q < TT) acc[q] = fmaf(w, to_float(xk[32 * q]), acc[q]);
          }
        }
      } else {
        for (int k = 0; k < p.K; ++k) {
          const float w = wr[k];
          const T* xk = xr + k * p.dilation;
#pragma unroll
          for (int q = 0; q < Q; ++q)
            if (lane + 32 * q < TT) acc[q] = fmaf(w, to_float(xk[32 * q]), acc[q]);
        }
      }
    }
#pragma unroll
    for (int q = 0; q < Q; ++q) {
      const int tt = lane + 32 * q;
      if (tt >= TT) break;
      const bool ok = ic < p.C_in && t0 + tt < p.T_out;
      const float v = ok ? (kFastSilu ? silu_act(acc[q]) : silu(acc[q])) : 0.0f;
      arow[tt] = kRound ? tc_round_tf32(v) : v;
    }
  }
}

// Depthwise + bias + SiLU for one tile, fp32 x, dilation D known at compile time: each thread takes
// four consecutive outputs of one channel row, loads the x window they share with 16-byte LDS (once,
// instead of once per tap) and keeps four independent FMA chains. Output group j covers tile columns
// 4j - shift .. 4j - shift + 3, so its window starts at the 16-byte aligned x-tile column 4j whatever
// the padding. Same result as tc_dw_silu_tile, for spans (K-1)*D <= 16; the x tile must have
// XW >= TT + span + 8 columns.
template <bool kRound, bool kFastSilu, int TT, int AS, int D>
__device__ __forceinline__ void tc_dw_silu_x4(float* sAct, const float* sX, const float* sWdw, const float* sBdw,
                                              const TcParams& p, int shift, int64_t t0, int warp, int nwarps) {
  // groups per row; the widest window this path takes (span <= 16: 20 floats in registers) and its taps
  constexpr int G = TT / 4 + 1, NQ = 5, kKmax = 16 / D + 1;
  static_assert(TT % 4 == 0, "TT must be a multiple of 4");
  const int span = (p.K - 1) * D, nq = (span + 4 + 3) / 4;
  const int n_items = p.C_in_pad * G;
  const int64_t t_left = p.T_out - t0;  // outputs of this tile that exist: columns [0, t_left)
  for (int item = warp * 32 + (threadIdx.x & 31); item < n_items; item += nwarps * 32) {
    const int ic = item / G, j = item - ic * G;
    const int tt0 = 4 * j - shift;  // first of this thread's four tile columns
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (ic < p.C_in) {
      const float* xr = sX + ic * p.XW + 4 * j;
      float win[4 * NQ];
#pragma unroll
      for (int q = 0; q < NQ; ++q)
        if (q < nq) {
          const float4 v = *reinterpret_cast<const float4*>(xr + 4 * q);
          win[4 * q] = v.x; win[4 * q + 1] = v.y; win[4 * q + 2] = v.z; win[4 * q + 3] = v.w;
        }
      const float* wr = sWdw + ic * p.K;
      const float bias = sBdw[ic];
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[i] = bias;
#pragma unroll
      for (int k = 0; k < kKmax; ++k)
        if (k < p.K) {
          const float w = wr[k];
#pragma unroll
          for (int i = 0; i < 4; ++i) acc[i] = fmaf(w, win[k * D + i], acc[i]);
        }
    }
    float* arow = sAct + ic * AS;
    if (ic < p.C_in && tt0 >= 0 && tt0 + 3 < TT && tt0 + 3 < t_left) {  // all four exist: no per-output tests
      float v[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        v[i] = kFastSilu ? silu_act(acc[i]) : silu(acc[i]);
        if (kRound) v[i] = tc_round_tf32(v[i]);
      }
      if (shift == 0) {
        *reinterpret_cast<float4*>(arow + tt0) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) arow[tt0 + i] = v[i];
      }
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int tt = tt0 + i;
        if (tt < 0 || tt >= TT) continue;
        const bool ok = ic < p.C_in && tt < t_left;
        const float v = ok ? (kFastSilu ? silu_act(acc[i]) : silu(acc[i])) : 0.0f;
        arow[tt] = kRound ? tc_round_tf32(v) : v;
      }
    }
  }
}

// The depthwise tile: tc_dw_silu_x4 where it applies (fp32 x on the 16-byte path, dilation 1..4,
// span <= 16), tc_dw_silu_tile otherwise. The branch is uniform over the launch.
template <typename T, bool kRound, bool kFastSilu, int TT, int AS>
__device__ __forceinline__ void tc_dw_silu_any(float* sAct, const T* sX, const float* sWdw, const float* sBdw,
                                               const TcParams& p, int shift, int64_t t0, int warp, int nwarps) {
  if constexpr (sizeof(T) == 4) {
    const int span = (p.K - 1) * p.dilation;
    if (p.x_vec && span <= 16 && p.XW >= TT + span + 8) {
      switch (p.dilation) {
        case 1: return tc_dw_silu_x4<kRound, kFastSilu, TT, AS, 1>(sAct, sX, sWdw, sBdw, p, shift, t0, warp, nwarps);
        case 2: return tc_dw_silu_x4<kRound, kFastSilu, TT, AS, 2>(sAct, sX, sWdw, sBdw, p, shift, t0, warp, nwarps);
        case 3: return tc_dw_silu_x4<kRound, kFastSilu, TT, AS, 3>(sAct, sX, sWdw, sBdw, p, shift, t0, warp, nwarps);
        case 4: return tc_dw_silu_x4<kRound, kFastSilu, TT, AS, 4>(sAct, sX, sWdw, sBdw, p, shift, t0, warp, nwarps);
        default: break;
      }
    }
  }
  tc_dw_silu_tile<T, kRound, kFastSilu, TT, AS>(sAct, sX, sWdw, sBdw, p, shift, t0, warp, nwarps);
}

// One warp's share of the pointwise GEMM for one tile: acc (kWM output channels x kWN time steps) =
// W rows [row of sWw] x act columns [col0, col0 + kWN), K = C_in_pad, from smem. sWw: the warp's first
// A fragment (W in fragment order); sAw: act + col0 + g (row stride AS).
// kSplit3 = false: W and act were rounded to tf32 when stored, one mma per fragment pair.
// kSplit3 = true : W and act stay fp32 in smem and are split at load time; per k-step the three
//   products (small*big, big*small, big*big) go into a zeroed partial tile that is then added to
//   the fp32 accumulator with an ordinary (round-to-nearest) FADD, so the tensor core's truncating
//   internal accumulation only ever touches one 8-term k-step.
template <bool kSplit3, int kWM, int kWN, int AS>
__device__ __forceinline__ void tc_warp_mma(float (&acc)[kWM / 16][kWN / 8][4], const float* sWw, const float* sAw,
                                            int KS) {
  constexpr int MT = kWM / 16, NT = kWN / 8;
  const int lane = threadIdx.x & 31, tq = lane & 3;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[mt][nt][r] = 0.0f;

  for (int ks = 0; ks < KS; ++ks) {
    float af[MT][4], bf[NT][2];
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const float4 v = *reinterpret_cast<const float4*>(sWw + ((mt * KS + ks) * 32 + lane) * 4);
      af[mt][0] = v.x; af[mt][1] = v.y; af[mt][2] = v.z; af[mt][3] = v.w;
    }
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      bf[nt][0] = sAw[(ks * 8 + tq) * AS + nt * 8];
      bf[nt][1] = sAw[(ks * 8 + tq + 4) * AS + nt * 8];
    }
    if constexpr (!kSplit3) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          const uint32_t a[4] = {__float_as_uint(af[mt][0]), __float_as_uint(af[mt][1]),
                                 __float_as_uint(af[mt][2]), __float_as_uint(af[mt][3])};
          const uint32_t bb[2] = {__float_as_uint(bf[nt][0]), __float_as_uint(bf[nt][1])};
          tc_mma_tf32(acc[mt][nt], a, bb);
        }
    } else {
      uint32_t a_big[MT][4], a_small[MT][4], b_big[NT][2], b_small[NT][2];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int r = 0; r < 4; ++r) tc_split_tf32(af[mt][r], a_big[mt][r], a_small[mt][r]);
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int r = 0; r < 2; ++r) tc_split_tf32(bf[nt][r], b_big[nt][r], b_small[nt][r]);
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
          tc_mma_tf32(part, a_small[mt], b_big[nt]);  // small terms first
          tc_mma_tf32(part, a_big[mt], b_small[nt]);
          tc_mma_tf32(part, a_big[mt], b_big[nt]);
#pragma unroll
          for (int r = 0; r < 4; ++r) acc[mt][nt][r] += part[r];
        }
    }
  }
}

// Epilogue: c0,c1 -> (oc = row g, t = 2tq, 2tq+1); c2,c3 -> row g+8 of one warp tile: bias + store
// y[b, row0 + m, t0 + col0 + n] straight from the accumulators.
template <typename T, int kWM, int kWN>
__device__ __forceinline__ void tc_warp_store(const float (&acc)[kWM / 16][kWN / 8][4], T* y, const TcParams& p,
                                              int64_t b, int row0, int64_t tcol0) {
  const int lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
#pragma unroll
  for (int mt = 0; mt < kWM / 16; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int oc = row0 + mt * 16 + g + h * 8;
      if (oc >= p.C_out) continue;
      const float bias = p.b_pw ? __ldg(p.b_pw + oc) : 0.0f;
      T* yrow = y + (b * p.C_out + oc) * p.T_out;
#pragma unroll
      for (int nt = 0; nt < kWN / 8; ++nt) {
        const int64_t t = tcol0 + nt * 8 + 2 * tq;
        const float v0 = acc[mt][nt][2 * h] + bias, v1 = acc[mt][nt][2 * h + 1] + bias;
        if (t + 1 < p.T_out) {
          if (p.y_pair) tc_store2(yrow + t, v0, v1);
          else { yrow[t] = from_float<T>(v0); yrow[t + 1] = from_float<T>(v1); }
        } else if (t < p.T_out) {
          yrow[t] = from_float<T>(v0);
        }
      }
    }
}

// The shared tile kernel (rungs 05-07). Persistent blocks walk tiles (b, TT time steps); per tile:
//   wait x(tile) -> dw+SiLU into sAct -> issue cp.async of x(next tile) -> for each BM-row chunk of
//   C_out: warps (kWarpsM x kWarpsN, warp tile kWM x kWN) run the K loop of mma.sync -> bias + store y.
// The x load of the next tile overlaps this tile's MMAs and stores (sX is free once act is built);
// every warp does every phase, so the phases of one tile run one after the other.
template <typename T, bool kSplit3, int TT, int kWarpsM, int kWarpsN, int kWM, int kWN>
__global__ void __launch_bounds__(kWarpsM* kWarpsN * 32) tc_fused_kernel(const TcParams p) {
  constexpr int NTHREADS = kWarpsM * kWarpsN * 32, BM = kWarpsM * kWM;
  constexpr int AS = tc_act_stride(TT);
  static_assert(kWM % 16 == 0 && kWN % 8 == 0 && TT == kWarpsN * kWN, "bad warp tiling");
  extern __shared__ __align__(16) unsigned char tc_smem[];
  T* sX = reinterpret_cast<T*>(tc_smem);
  float* sAct = reinterpret_cast<float*>(tc_smem + p.off_act);
  float* sWdw = reinterpret_cast<float*>(tc_smem + p.off_wdw);
  float* sBdw = sWdw + p.C_in * p.K;
  float* sW = reinterpret_cast<float*>(tc_smem + p.off_w);

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int wm = warp % kWarpsM, wn = warp / kWarpsM, g = lane >> 2;
  const int KS = p.C_in_pad / 8;
  const int vec = p.x_vec ? 16 / static_cast<int>(sizeof(T)) : 1;
  const T* x = static_cast<const T*>(p.x);
  T* y = static_cast<T*>(p.y);

  // The first x tile's copies go out first, so they are in flight while the weights are staged.
  int64_t tile = blockIdx.x;
  if (tile < p.n_tiles)
    tc_issue_x_tile(sX, x, tile / p.n_tt, p, tc_x_start((tile % p.n_tt) * TT - p.padding, vec), tid, NTHREADS);
  cp_async_commit();
  for (int i = tid; i < p.C_in * p.K; i += NTHREADS) sWdw[i] = p.w_dw[i];
  for (int i = tid; i < p.C_in; i += NTHREADS) sBdw[i] = p.b_dw ? p.b_dw[i] : 0.0f;
  if (p.w_resident) tc_fill_w<!kSplit3>(sW, p.w_pw, 0, p.w_rows, p.C_in, p.C_in_pad, p.C_out, tid, NTHREADS);

  for (; tile < p.n_tiles; tile += gridDim.x) {
    const int64_t b = tile / p.n_tt, t0 = (tile % p.n_tt) * TT;
    const int64_t xs = t0 - p.padding;
    cp_async_wait<0>();
    __syncthreads();  // x(tile) visible to all; every warp is done reading sAct of the previous tile
    tc_dw_silu_tile<T, !kSplit3, !kSplit3, TT, AS>(sAct, sX, sWdw, sBdw, p, static_cast<int>(xs - tc_x_start(xs, vec)),
                                                   t0, warp, NTHREADS / 32);
    __syncthreads();  // act ready; sX no longer read
    const int64_t next = tile + gridDim.x;
    if (next < p.n_tiles)
      tc_issue_x_tile(sX, x, next / p.n_tt, p, tc_x_start((next % p.n_tt) * TT - p.padding, vec), tid, NTHREADS);
    cp_async_commit();

    for (int c = 0; c < p.n_chunks; ++c) {
      if (!p.w_resident) {  // uniform branch: reload this chunk of W
        __syncthreads();    // everyone is done with the previous chunk
        tc_fill_w<!kSplit3>(sW, p.w_pw, c * BM, BM, p.C_in, p.C_in_pad, p.C_out, tid, NTHREADS);
        __syncthreads();
      }
      const int row0 = c * BM + wm * kWM, col0 = wn * kWN;  // warp's first oc, first tile column
      if (row0 >= p.C_out || t0 + col0 >= p.T_out) continue;  // nothing of this warp tile is stored
      float acc[kWM / 16][kWN / 8][4];
      tc_warp_mma<kSplit3, kWM, kWN, AS>(acc, sW + static_cast<size_t>((p.w_resident ? c * BM : 0) + wm * kWM) / 16 * KS * 128,
                                         sAct + col0 + g, KS);
      tc_warp_store<T, kWM, kWN>(acc, y, p, b, row0, t0 + col0);
    }
  }
  cp_async_wait<0>();  // nothing may be in flight when the block exits
}


// Host: smem layout and launch parameters for tc_fused_kernel; returns false when even one BM-row
// chunk of W does not fit next to the x and act tiles. Layout: [sX | sAct | w_dw, b_dw | sW].
inline bool tc_plan(const FusedArgs& a, int elem_bytes, int TT, int BM, TcParams& p, size_t& smem) {
  const int64_t limit = a.max_smem_optin > 0 ? a.max_smem_optin : 227 * 1024;
  if (a.C_in > (1 << 20) || a.C_out > (1 << 30)) return false;
  const int vec = 16 / elem_bytes;
  const int64_t span = static_cast<int64_t>(a.K - 1) * a.dilation;
  const int64_t c_in_pad = (a.C_in + 7) / 8 * 8;
  const int64_t xw = (TT + span + vec - 1 + vec - 1) / vec * vec;
  auto align16 = [](int64_t v) { return (v + 15) / 16 * 16; };
  const int64_t off_act = align16(a.C_in * xw * elem_bytes);
  const int64_t off_wdw = off_act + c_in_pad * tc_act_stride(TT) * 4;
  const int64_t off_w = align16(off_wdw + (a.C_in * a.K + a.C_in) * 4);
  const int64_t n_chunks = (a.C_out + BM - 1) / BM;
  const int64_t resident_bytes = off_w + n_chunks * BM * c_in_pad * 4;
  const int64_t chunk_bytes = off_w + static_cast<int64_t>(BM) * c_in_pad * 4;
  if (chunk_bytes > limit) return false;
  const bool resident = resident_bytes <= limit;
  p.x = a.x; p.y = a.y;
  p.w_dw = a.w_dw; p.b_dw = a.b_dw; p.w_pw = a.w_pw; p.b_pw = a.b_pw;
  p.T = a.T; p.T_out = a.T_out;
  p.n_tt = (a.T_out + TT - 1) / TT;
  p.n_tiles = a.B * p.n_tt;
  p.tt_div = fast_div_make(static_cast<uint32_t>(p.n_tt < (int64_t{1} << 31) ? p.n_tt : 1));  // (see TcParams)
  p.C_in = static_cast<int>(a.C_in); p.C_out = static_cast<int>(a.C_out);
  p.K = a.K; p.dilation = a.dilation; p.padding = a.padding;
  p.C_in_pad = static_cast<int>(c_in_pad);
  p.XW = static_cast<int>(xw);
  p.n_chunks = static_cast<int>(n_chunks);
  p.w_resident = resident ? 1 : 0;
  p.w_rows = static_cast<int>(resident ? n_chunks * BM : BM);
  p.x_vec = (a.T % vec == 0 && reinterpret_cast<uintptr_t>(a.x) % 16 == 0) ? 1 : 0;
  p.y_pair = (a.T_out % 2 == 0 && reinterpret_cast<uintptr_t>(a.y) % (2 * elem_bytes) == 0) ? 1 : 0;
  p.off_act = static_cast<uint32_t>(off_act);
  p.off_wdw = static_cast<uint32_t>(off_wdw);
  p.off_w = static_cast<uint32_t>(off_w);
  smem = static_cast<size_t>(resident ? resident_bytes : chunk_bytes);
  return true;
}

// Host: the refusal of the rungs on tc_fused_kernel (nullptr when the shape's tiles fit).
inline const char* tc_fit_refusal(const FusedArgs& a, int elem_bytes, int TT, int BM) {
  TcParams p;
  size_t smem;
  if (tc_plan(a, elem_bytes, TT, BM, p, smem)) return nullptr;
  return "C_in or the kernel span (K-1)*dilation too large for this variant's shared-memory tiles (x tile, "
         "activation tile and one 128-row chunk of W_pw must fit in the opt-in shared memory)";
}

// Host: opt a tile kernel in to its dynamic smem, size the persistent grid (the blocks that fit on all
// SMs at once, at most one per p.groups tiles) and launch it on `stream` with (p, extra...). Shared by
// tc_launch, tc_ws_launch, wgmma.cuh's wg_launch and wgmma_rs.cuh's rs_launch (whose kernels also take
// their TMA descriptor).
template <typename... KernelExtra, typename... Extra>
void tc_launch_persistent(void (*kernel)(const TcParams, KernelExtra...), int threads, size_t smem,
                          const FusedArgs& a, const TcParams& p, void* stream, const Extra&... extra) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  int per_sm = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  const int64_t slots = static_cast<int64_t>(a.num_sms > 0 ? a.num_sms : 1) * (per_sm > 0 ? per_sm : 1);
  const int64_t per_block = p.groups > 0 ? p.groups : 1, wanted = (p.n_tiles + per_block - 1) / per_block;
  const int64_t grid = wanted < slots ? wanted : slots;
  if (grid < 1) return;
  kernel<<<static_cast<unsigned>(grid), threads, smem, static_cast<cudaStream_t>(stream)>>>(p, extra...);
}

// Host: plan, opt in to the dynamic smem, size the persistent grid from the occupancy, launch.
template <typename T, bool kSplit3, int TT, int kWarpsM, int kWarpsN, int kWM, int kWN>
void tc_launch(const FusedArgs& a, void* stream) {
  constexpr int threads = kWarpsM * kWarpsN * 32, BM = kWarpsM * kWM;
  TcParams p{};
  size_t smem = 0;
  if (!tc_plan(a, static_cast<int>(sizeof(T)), TT, BM, p, smem))
    throw std::runtime_error("tensor-core variant: shape does not fit in shared memory (see fused_unsupported)");
  tc_launch_persistent(tc_fused_kernel<T, kSplit3, TT, kWarpsM, kWarpsN, kWM, kWN>, threads, smem, a, p, stream);
}

// Host: whether input of this shape takes the windowed depthwise (tc_dw_silu_x4, tc_dw_silu_any's test on
// the device side; wgmma.cuh's wg_dw_silu): 16-byte rows of `vec` elements (4 fp32, 8 16-bit), dilation
// 1..4, span <= 16.
inline bool tc_x4_path(const FusedArgs& a, int vec = 4) {
  return a.T % vec == 0 && reinterpret_cast<uintptr_t>(a.x) % 16 == 0 && a.dilation <= 4 &&
         static_cast<int64_t>(a.K - 1) * a.dilation <= 16;
}
