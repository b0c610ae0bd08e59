// dw_silu_backward_tc.cu: backward rung 5, the 1x1 conv's data gradient on tensor cores with rung 4's body as its
// epilogue (contract: dw_backward_args.h).
// What it changes: rung 4 read ga = dL/d act = W_pw^T dy from HBM, written there by cuDNN's data gradient (13.4 us
// at the headline, plus ga's 33.5 MB round trip). Here a tile is a batch row b and kTcTile = 64 time steps of every
// channel: dy over the tile and the halo the transposed depthwise needs (NJ columns) and x over the tile and twice
// that halo are copied to shared memory (cp.async); dy is rounded to TF32 there as cuDNN rounds its operands (the
// unrounded values feed db_pw's row sums); ga = W_pw^T dy on mma.sync TF32 (W_pw rounded the same way, fp32
// accumulation) lands in shared memory over the staged dy; then rung 4's arithmetic per channel from there: v
// recomputed from x, act written, gv in place over ga, the K+1 weight-gradient sums, then dx from gv's window.
// One persistent block of 512 threads per SM: W_pw's fragments staged once per block (64 KB), and the next
// tile's x and dy copies in flight during the whole of this tile's work (two buffers of each).
// Bytes at the headline: read x and dy, write dx and act, 67 MB, against rung 4's 84 MB plus the data gradient's
// 33.5 MB.
// Prediction: the kernel near its 67 MB at the copy rate (~16 us) and at most ~25 us, in place of rung 4 (25.8) +
// cuDNN's data gradient (13.4). The forms before this one (git history: one block per tile, 2 per SM) ran 60.2,
// 57.8 and 49.2 us: latency-bound, each block's loads, GEMM and epilogue one after the other (ncu: 3.8 warps
// per scheduler, 0.43 issued per cycle); docs/ladder.md ("backward rung 5") has each form's measurement.
// Numerics: ga sums its C_out products in another order than cuDNN's (both from RNE-rounded TF32 operands, fp32
// accumulation), so dx and the depthwise gradients may leave eager's bits, within TF32 summation order (1e-4 of
// the gradient's max); act and the SiLU terms are eager's expressions (rung 4's). Used only where
// torch.backends.cudnn.allow_tf32 is on (fusedkit.routing) and cuDNN's data gradient is a TF32 GEMM (C, C_out >=
// kTcMinC); with TF32 off, rung 4 after cuDNN's strict data gradient. Deterministic: fixed-order sums, no atomics.
// Limits: rung 4's vector shapes (odd span, 'same' padding, T % 4 == 0, 16-byte aligned, compiled (K, dilation)),
// kTcMinC <= C, C_out <= 128 (the GEMM pads both to 128), spans whose buffers fit in shared memory (TcShape::fits:
// halo <= 8 at most), sm_80+. Other shapes take rungs 3 and 4.
#include <cuda_runtime.h>
#include <cstdint>
#include <stdexcept>
#include <string>
#include "common.cuh"     // tc_tf32: RNE rounding to TF32
#include "mma_sync.cuh"   // tc_mma_tf32
#include "cp_async.cuh"
#include "dw_backward_args.h"

namespace dwtc {

constexpr int kTT = kTcTile, kThreads = 512, kWarps = kThreads / 32;
constexpr int kMaxC = 128, kKSteps = kMaxC / 8, kMTiles = kMaxC / 16;  // C and C_out padded to 128
constexpr int kWFloats = kMaxC * kMaxC;  // W_pw's A fragments, in fragment order
constexpr size_t kSmemLimit = 227 * 1024;
static_assert(kWarps == 2 * kMTiles, "two warps (halves of the columns) per m-tile of 16 channels");
static_assert(kThreads == 4 * kMaxC, "four threads per channel in the epilogue");

template <int K, int D>
struct TcShape {
  static constexpr int halo = (K - 1) * D, h2 = halo / 2;      // 'same' padding h2 on each side
  static constexpr int lead4 = (h2 + 3) / 4 * 4;              // columns before the tile's first step (16-byte aligned)
  static constexpr int NJ = kTT + 2 * lead4;                  // dy / ga / gv columns: t = t0 - lead4 + col
  static constexpr int NT = NJ / 8, NTH = (NT + 1) / 2, NF = NJ / 4;  // n-tiles, per warp (half), float4s per row
  static constexpr int SJ = NJ + (40 - NJ % 32) % 32;          // row stride = 8 (mod 32): B fragments conflict-free
  static constexpr int sx = (4 - h2 % 4) % 4;                  // x window back to a 16-byte boundary
  static constexpr int nx = (sx + 4 + halo + 3) / 4;           // x float4s per 4 steps
  static constexpr int sd = lead4 - h2;                        // dx's gv window: from column 4g, offset sd
  static constexpr int nd = (sd + 4 + halo + 3) / 4;
  static constexpr int XL = (halo + 3) / 4 * 4;                // x over t0 - XL + xcol, xcol < NX: every x the
  static constexpr int NX = kTT + 2 * XL, NXF = NX / 4;        // tile's gv (its halo included) reads
  static constexpr int x0 = XL - lead4;                        // step group g's x window: xcol 4g + x0
  static constexpr size_t smem_floats = kWFloats + 2 * static_cast<size_t>(kMaxC) * (SJ + NX);
  static constexpr bool fits = smem_floats * sizeof(float) <= kSmemLimit;
  static_assert(NJ % 8 == 0 && SJ % 32 == 8 && SJ % 4 == 0, "tile shape");
  static_assert(4 * nd + kTT - 4 <= NJ, "dx's windows stay inside the staged columns");
  static_assert(x0 >= 0 && x0 % 4 == 0 && x0 + kTT - 4 + 4 * nx <= NX, "x windows inside the staged x");
};

__device__ __forceinline__ bool in_row(int t, int len) { return static_cast<unsigned>(t) < static_cast<unsigned>(len); }
__device__ __forceinline__ void unpack4(float* dst, float4 q) {
  dst[0] = q.x; dst[1] = q.y; dst[2] = q.z; dst[3] = q.w;
}
__device__ __forceinline__ float4 pack4(const float* src) { return make_float4(src[0], src[1], src[2], src[3]); }
// gv = ga * silu'(v), as aten's silu_backward (rung 4's expression)
__device__ __forceinline__ float silu_grad(float ga, float v, float s) { return ga * s * (1.0f + v * (1.0f - s)); }

// The copies of one tile (b, tt) into a buffer: dy's NJ columns of all 128 rows (rows >= C_out zero-filled: the
// GEMM's k dimension is padded), x's NX columns of the C rows; zero outside [0, T). One commit group.
template <int K, int D>
__device__ __forceinline__ void issue_tile(const DwBackwardArgs& a, int64_t b, int t0, float* dys, float* xs) {
  using S = TcShape<K, D>;
  const int T = static_cast<int>(a.T), C = static_cast<int>(a.C), C_out = static_cast<int>(a.C_out);
  for (int it = threadIdx.x; it < kMaxC * S::NF; it += kThreads) {
    const int co = it / S::NF, f = it % S::NF, t = t0 - S::lead4 + 4 * f;
    const bool ok = co < C_out && in_row(t, T);
    const float* src = a.gy + (b * a.C_out + (co < C_out ? co : 0)) * a.T;
    cp_async_16(dys + co * S::SJ + 4 * f, ok ? src + t : src, ok ? 16 : 0);
  }
  for (int it = threadIdx.x; it < C * S::NXF; it += kThreads) {
    const int c = it / S::NXF, f = it % S::NXF, t = t0 - S::XL + 4 * f;
    const float* src = a.x + (b * a.C + c) * a.T;
    cp_async_16(xs + c * S::NX + 4 * f, in_row(t, T) ? src + t : src, in_row(t, T) ? 16 : 0);
  }
  cp_async_commit();
}

// grid: one block per SM (at most the tiles); 512 threads; dynamic shared memory TcShape::smem_floats floats.
template <int K, int D>
__global__ void __launch_bounds__(kThreads, 1) dw_silu_backward_tc_kernel(DwBackwardArgs a, int tiles_t) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  __trap();  // the host routes older GPUs elsewhere (dw_backward_tc_fits)
#else
  using S = TcShape<K, D>;
  extern __shared__ float4 smem4[];
  float* sm = reinterpret_cast<float*>(smem4);
  uint32_t* wf = reinterpret_cast<uint32_t*>(sm);      // [kMTiles][kKSteps][32 lanes][4]: W_pw's A fragments
  float* dybuf = sm + kWFloats;                          // 2 x [kMaxC][SJ]: dy (TF32 bits), then ga, then gv
  float* xbuf = dybuf + 2 * kMaxC * S::SJ;               // 2 x [kMaxC][NX]
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, q4 = lane & 3;
  const int T = static_cast<int>(a.T), C = static_cast<int>(a.C), C_out = static_cast<int>(a.C_out);
  const int64_t n = static_cast<int64_t>(tiles_t) * a.B, total = n;
  int64_t tile = blockIdx.x;
  if (tile >= total) return;
  issue_tile<K, D>(a, tile / tiles_t, static_cast<int>(tile % tiles_t) * kTT, dybuf, xbuf);

  // W_pw's A fragments (A[ci][co] = W_pw[co][ci]), RNE-rounded, once per block: entry (mt, ks, lane) holds
  // a0 (ci = 16 mt + g, co = 8 ks + q4), a1 (ci + 8), a2 (co + 4), a3 (ci + 8, co + 4); zero past C or C_out
  for (int e = tid; e < kMTiles * kKSteps * 32; e += kThreads) {
    const int mt = e / (kKSteps * 32), ks = (e / 32) % kKSteps, l = e % 32;
    uint32_t v[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int co = 8 * ks + (l & 3) + 4 * (r >> 1), ci = 16 * mt + (l >> 2) + 8 * (r & 1);
      v[r] = co < C_out && ci < C ? tc_tf32(__ldg(a.w_pw + co * C + ci)) : 0u;
    }
    *reinterpret_cast<uint4*>(wf + 4 * e) = make_uint4(v[0], v[1], v[2], v[3]);
  }

  // this thread's channel in the epilogue (c, quarter qq: step groups g = 4j + qq) and dy row in the rounding pass
  const int c = tid >> 2, qq = tid & 3;
  const bool live = c < C;
  const int cc = live ? c : 0;
  float w[K];
#pragma unroll
  for (int k = 0; k < K; ++k) w[k] = __ldg(a.w_dw + cc * K + k);
  const float bias = a.b_dw ? __ldg(a.b_dw + cc) : 0.0f;
  const int mt = warp & (kMTiles - 1), nh = warp / kMTiles, m0 = 16 * mt;
  const bool mma_warp = m0 < C;

  for (int p = 0; tile < total; tile += gridDim.x, p ^= 1) {
    const int64_t b = tile / tiles_t;
    const int tt = static_cast<int>(tile % tiles_t), t0 = tt * kTT, s0 = t0 - S::lead4;
    const int64_t part_col = static_cast<int64_t>(tt) * a.B + b, row = b * a.C + cc;
    float* dys = dybuf + p * kMaxC * S::SJ;
    const float* xs = xbuf + p * kMaxC * S::NX;
    cp_async_wait<0>();
    __syncthreads();  // this tile's copies landed everywhere; the last tile's reads of the other buffers are done
    const int64_t next = tile + gridDim.x;
    if (next < total)  // in flight during all of this tile's work
      issue_tile<K, D>(a, next / tiles_t, static_cast<int>(next % tiles_t) * kTT, dybuf + (p ^ 1) * kMaxC * S::SJ,
                       xbuf + (p ^ 1) * kMaxC * S::NX);

    // 1. dy row co = tid / 4: db_pw's partial over the owned columns (unrounded, fixed order), then TF32 in place
    {
      float s = 0.0f;
      for (int f = qq; f < S::NF; f += 4) {
        float4* q = reinterpret_cast<float4*>(dys + c * S::SJ + 4 * f);
        const float4 v = *q;
        if (f >= S::lead4 / 4 && f < S::lead4 / 4 + kTT / 4) s += (v.x + v.y) + (v.z + v.w);
        *reinterpret_cast<uint4*>(q) = make_uint4(tc_tf32(v.x), tc_tf32(v.y), tc_tf32(v.z), tc_tf32(v.w));
      }
      s += __shfl_xor_sync(0xffffffffu, s, 1);
      s += __shfl_xor_sync(0xffffffffu, s, 2);
      if (a.partial_pw && qq == 0 && c < C_out) a.partial_pw[c * n + part_col] = s;
    }
    __syncthreads();

    // 2. ga[ci][col] = sum_co W_pw[co][ci] dy[co][col]: warp (mt, nh) rows [16 mt, 16 mt + 16), n-tiles nh*NTH ..
    float acc[S::NTH][4];
#pragma unroll
    for (int i = 0; i < S::NTH; ++i) acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;
    const int nt0 = nh * S::NTH;
    if (mma_warp) {
#pragma unroll
      for (int ks = 0; ks < kKSteps; ++ks) {
        const uint4 av = *reinterpret_cast<const uint4*>(wf + 4 * ((mt * kKSteps + ks) * 32 + lane));
        const uint32_t af[4] = {av.x, av.y, av.z, av.w};
        const float* r0 = dys + (8 * ks + q4) * S::SJ + g;
#pragma unroll
        for (int i = 0; i < S::NTH; ++i) {
          if (nt0 + i < S::NT) {
            const uint32_t bf[2] = {__float_as_uint(r0[8 * (nt0 + i)]), __float_as_uint(r0[4 * S::SJ + 8 * (nt0 + i)])};
            tc_mma_tf32(acc[i], af, bf);
          }
        }
      }
    }
    __syncthreads();  // every warp has read dy: ga overwrites it
    if (mma_warp) {
#pragma unroll
      for (int i = 0; i < S::NTH; ++i) {
        if (nt0 + i < S::NT) {
          float* d0 = dys + (m0 + g) * S::SJ + 8 * (nt0 + i) + 2 * q4;
          *reinterpret_cast<float2*>(d0) = make_float2(acc[i][0], acc[i][1]);
          *reinterpret_cast<float2*>(d0 + 8 * S::SJ) = make_float2(acc[i][2], acc[i][3]);
        }
      }
    }
    __syncthreads();

    // 3. the epilogue, four threads per channel (groups g = 4j + qq of 4 steps, columns lead4 + 4g): v, act, gv in
    //    place over ga and the K+1 sums (the four partial sums meet by two shuffles); then the gv steps past the
    //    tile that dx needs (columns lead4 - h2 .. and lead4 + 64 ..; another tile owns them: no sums, no act)
    float* gr = dys + cc * S::SJ;          // ga, then gv, of this channel: column col = t - s0
    const float* xc = xs + cc * S::NX;     // x of this channel: x[t] at xc[t - t0 + XL]
    float sums[K + 1];
#pragma unroll
    for (int k = 0; k <= K; ++k) sums[k] = 0.0f;
    if (live) {
#pragma unroll 2
      for (int j = 0; j < kTT / 16; ++j) {
        const int g4 = 4 * (4 * j + qq), tq = t0 + g4;
        float xw[4 * S::nx], gw[4], gv[4], act[4];
#pragma unroll
        for (int m = 0; m < S::nx; ++m)
          unpack4(xw + 4 * m, *reinterpret_cast<const float4*>(xc + S::x0 + g4 + 4 * m));
        unpack4(gw, *reinterpret_cast<const float4*>(gr + S::lead4 + g4));
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float v = bias;
#pragma unroll
          for (int k = 0; k < K; ++k) v = fmaf(w[k], xw[S::sx + e + k * D], v);
          const float ex = expf(-v);
          const float s = 1.0f / (1.0f + ex);
          const float gval = tq + e < T ? silu_grad(gw[e], v, s) : 0.0f;
#pragma unroll
          for (int k = 0; k < K; ++k) sums[k] = fmaf(gval, xw[S::sx + e + k * D], sums[k]);
          sums[K] += gval;
          gv[e] = gval;
          act[e] = v / (1.0f + ex);
        }
        *reinterpret_cast<float4*>(gr + S::lead4 + g4) = pack4(gv);
        if (a.act && tq < T) *reinterpret_cast<float4*>(a.act + row * a.T + tq) = pack4(act);  // T % 4 == 0
      }
      for (int e2 = qq; e2 < 2 * S::h2; e2 += 4) {
        const int col = e2 < S::h2 ? S::lead4 - S::h2 + e2 : S::lead4 + kTT + e2 - S::h2, t = s0 + col;
        float gval = 0.0f;
        if (in_row(t, T)) {
          float v = bias;
#pragma unroll
          for (int k = 0; k < K; ++k) v = fmaf(w[k], xc[t - t0 + S::XL - S::h2 + k * D], v);
          const float s = 1.0f / (1.0f + expf(-v));
          gval = silu_grad(gr[col], v, s);
        }
        gr[col] = gval;
      }
    }
#pragma unroll
    for (int k = 0; k <= K; ++k) {
      float s = sums[k] + __shfl_xor_sync(0xffffffffu, sums[k], 1);
      s += __shfl_xor_sync(0xffffffffu, s, 2);
      if (live && qq == 0) a.partial[(static_cast<int64_t>(c) * (K + 1) + k) * n + part_col] = s;
    }
    __syncthreads();

    // 4. dx[t'] = sum_k w[k] gv[t' + h2 - k D] for t' = tq + e, the same groups: column 4g + sd + e + halo - k D of
    //    the window of float4s from column 4g
    if (a.dx && live) {
#pragma unroll 2
      for (int j = 0; j < kTT / 16; ++j) {
        const int g4 = 4 * (4 * j + qq), tq = t0 + g4;
        if (tq >= T) break;
        float gwin[4 * S::nd], dx[4];
#pragma unroll
        for (int m = 0; m < S::nd; ++m) unpack4(gwin + 4 * m, *reinterpret_cast<const float4*>(gr + g4 + 4 * m));
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          float accx = 0.0f;
#pragma unroll
          for (int k = 0; k < K; ++k) accx = fmaf(w[k], gwin[S::sd + e + S::halo - k * D], accx);
          dx[e] = accx;
        }
        *reinterpret_cast<float4*>(a.dx + row * a.T + tq) = pack4(dx);
      }
    }
  }
#endif
}

template <int K, int D>
bool shape_fits() { return TcShape<K, D>::fits; }

template <int K, int D>
void launch(const DwBackwardArgs& a, cudaStream_t stream) {
  if constexpr (TcShape<K, D>::fits) {
    constexpr size_t smem = sizeof(float) * TcShape<K, D>::smem_floats;
    const cudaError_t attr = cudaFuncSetAttribute(dw_silu_backward_tc_kernel<K, D>,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    if (attr != cudaSuccess)
      throw std::runtime_error(std::string("dw_silu_backward_tc: cudaFuncSetAttribute failed: ") +
                               cudaGetErrorString(attr));
    int dev = 0, sms = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1)
      throw std::runtime_error("dw_silu_backward_tc: could not read the device's SM count");
    const int tiles_t = static_cast<int>(dw_backward_tiles(a));
    const int64_t total = static_cast<int64_t>(tiles_t) * a.B;
    const unsigned grid = static_cast<unsigned>(total < sms ? total : sms);
    dw_silu_backward_tc_kernel<K, D><<<grid, kThreads, smem, stream>>>(a, tiles_t);
  } else {
    (void)a; (void)stream;
    throw std::runtime_error("dw_silu_backward_tc: this span's buffers exceed shared memory");
  }
}

}  // namespace dwtc

bool dw_backward_tc_fits(const DwBackwardArgs& a) {
  int dev = 0, major = 0, optin = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess)
    return false;
  bool span = false;
  size_t smem = 0;
#define DWTC_FITS(KK, DD)                                                                    \
  if (a.K == KK && a.dilation == DD) {                                                        \
    span = dwtc::shape_fits<KK, DD>();                                                        \
    smem = sizeof(float) * dwtc::TcShape<KK, DD>::smem_floats;                                \
  }
  DWBW_VEC_SHAPES(DWTC_FITS)
#undef DWTC_FITS
  const int64_t tiles = (a.T + kTcTile - 1) / kTcTile;
  return major >= 8 && span && smem <= static_cast<size_t>(optin) && a.w_pw && a.gy && a.C >= kTcMinC &&
         a.C <= dwtc::kMaxC && a.C_out >= kTcMinC && a.C_out <= dwtc::kMaxC && tiles <= 0x7fffffff &&
         tiles * a.B <= 0x7fffffffffffLL && a.T <= 0x7fffffff - 2 * kTcTile &&
         reinterpret_cast<uintptr_t>(a.gy) % 16 == 0 && dw_backward_vec_shape(a);
}

void dw_silu_backward_tc(const DwBackwardArgs& a, void* stream) {
  if (!dw_backward_tc_fits(a))
    throw std::runtime_error("dw_silu_backward_tc: shape outside the kernel's limits (dw_backward_tc_fits)");
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
#define DWTC_LAUNCH(KK, DD)                 \
  if (a.K == KK && a.dilation == DD) {      \
    dwtc::launch<KK, DD>(a, s);             \
    return;                                 \
  }
  DWBW_VEC_SHAPES(DWTC_LAUNCH)
#undef DWTC_LAUNCH
}
