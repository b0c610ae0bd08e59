// x_fetch_probe.cu: how fast can a block of the fused kernels fetch its x tiles from DRAM, by which path? The x reads
// alone of rungs 09/13 ran at ~53% of the H100's DRAM peak under ncu (docs/ladder.md, the runs of e805dea), and a lone
// first x box landed 2.6 us (bf16) to 4.1 us (float32) after the block started. This probe takes the kernels' walk of
// tiles (tile = blockIdx.x + n * gridDim.x, 132 blocks, a box of all C rows x XW columns a tile, S tiles in flight a
// block) without anything else, and fetches each tile four ways:
//   tma   : one cp.async.bulk.tensor box a tile (the kernels' path), issued by thread 0;
//   rows  : one 1-D cp.async.bulk a channel row (C bulk copies a tile), issued by the 32 lanes of warp 0;
//   lsu   : 16-byte cp.async by all 256 threads (rung 04's path), one commit group a tile;
//   tma_ef: tma with an L2 evict_first hint (26ec94f's WG_L2_HINT bit 1, since removed), so that x's lines, not the
//           flush's dirty ones, are the next to leave L2.
// Each launch follows a 256 MB memset (the L2 flushed, as bench's timer does; FLUSH 0), a 256 MB read (the L2 full of
// clean lines: FLUSH 2) or nothing (FLUSH 1: x stays in L2 from the launch before where it fits: what DRAM costs);
// CUDA events around it, median and p10-p90 of the reps; the blocks' landing times (globaltimer, since the block
// started) as medians over blocks.
// The skeletons (method 4): x by the box as the kernels fetch it, y = the tile's centre written back (the fused
// kernels' traffic with nothing computed), y by a TMA store, by st.global.v4, st.global.cs.v4 or in wgmma's
// accumulator pattern (y frag: 8 bytes a lane and row, as the float32 kernels store y); with and without
// evict_first on x; 1 or 2 tiles in flight a block, or one tile a block (the non-persistent form); with y by st, also
// with W_pw's bytes (C x C elements) fetched at each block's start (+ W_pw); each checked y == x. They ask what the
// fused kernels' one-pass walk could take at best, and which way of writing y costs least. BUSY cycles spun by every
// thread a tile, after x landed and before y, stand in for a tile's compute (issue slots taken). Measured on an H100:
// docs/ladder.md, the runs of dfd3ff4 and 4fea1f2 (y frag).
// Beside them, in the same run: cudaMemcpyAsync of x (the clone: x read and written) and a plain read of x (16-byte
// loads, every thread a grid-stride sum; with the streaming hint ld.global.cs and without), the two roofs.
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I kernels scripts/x_fetch_probe.cu -o /tmp/x_fetch_probe
//   /tmp/x_fetch_probe [esize B C T TILE_T reps method flush busy]   (default: 4 16 128 2048 64 50 -1 0 0: every method,
//   bench's flush; esize 2 for bf16; method -1 all, 0 tma, 1 rows, 2 lsu, 3 tma_ef, 4 the skeletons; S tiles in flight
//   at most what fits in 227 KB)
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../kernels/cp_async.cuh"
#include "../kernels/mbarrier.cuh"
#include "../kernels/wgmma_ops.cuh"  // tma_load_3d, bulk_load, mbar_expect_tx, tma_map_3d
#include "standalone_check.cuh"      // CK
#include "standalone_timer.cuh"      // time_calls, flush_l2, TimeStats

namespace {
constexpr int kThreads = 256, kMaxSlots = 4, kMaxRounds = 64;

struct Probe {
  const unsigned char* x;  // (B, C, T) of esize-byte elements
  const unsigned char* w;  // the skeletons' stand-in for W_pw: C x C elements
  int esize, C, T, tile_t, halo, xw, n_tt;
  int64_t n_tiles;
  unsigned long long* land;  // [land_blocks][kMaxRounds]: ns since the block started, tile n landed
  int land_blocks;           // the blocks that record (the SM count)
  long long busy;            // the skeletons: cycles each thread spins a tile before y (a stand-in for its compute)
  // tile t: batch row t / n_tt, columns [col * tile_t - halo, + xw) (16-byte aligned: halo = 16 / esize)
  __device__ int row(int64_t t) const { return static_cast<int>(t / n_tt); }
  __device__ int xs(int64_t t) const { return static_cast<int>(t % n_tt) * tile_t - halo; }
  __device__ unsigned row_bytes() const { return static_cast<unsigned>(xw) * esize; }
};

// tma_load_3d with an L2 evict_first hint (the tma_ef path; as wgmma.cuh's WG_L2_HINT in the kernels it was 2% faster at
// the headline and 5-19% slower at 2-8x its x, and is gone: docs/ladder.md, the runs of 26ec94f)
__device__ __forceinline__ void tma_load_3d_evict_first(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1,
                                                        int c2) {
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
      " [%0], [%1, {%2, %3, %4}], [%5], %6;\n"
      ::"r"(smem_u32(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_u32(bar)),
      "l"(policy)
      : "memory");
}

// Thread 0's load of tile t's box into `dst`, completing on `bar` (EF: with the evict_first hint): the tma and tma_ef
// paths and the skeletons' x.
template <bool EF>
__device__ __forceinline__ void load_box(void* dst, const CUtensorMap* xmap, uint64_t* bar, const Probe& p, int64_t t,
                                         unsigned bytes) {
  mbar_expect_tx(bar, bytes);
  if (EF) tma_load_3d_evict_first(dst, xmap, bar, p.xs(t), 0, p.row(t));
  else tma_load_3d(dst, xmap, bar, p.xs(t), 0, p.row(t));
}

__device__ __forceinline__ unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}

// METHOD 0: tma, 1: rows, 2: lsu, 3: tma_ef. S tiles in flight; each landing recorded by thread 0, then the slot refilled.
template <int METHOD>
__global__ void __launch_bounds__(kThreads) fetch(const __grid_constant__ CUtensorMap xmap, Probe p, int S) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) uint64_t bar[kMaxSlots];
  const unsigned long long t0 = now_ns();
  const unsigned slot_bytes = static_cast<unsigned>(p.C) * p.row_bytes();
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) mbar_init(&bar[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  auto issue = [&](int n) {
    const int64_t t = blockIdx.x + static_cast<int64_t>(n) * gridDim.x;
    if (t >= p.n_tiles) return;
    const int s = n % S;
    unsigned char* dst = smem + s * slot_bytes;
    if (METHOD == 0 || METHOD == 3) {
      if (threadIdx.x == 0) load_box<METHOD == 3>(dst, &xmap, &bar[s], p, t, slot_bytes);
    } else if (METHOD == 1) {
      if (threadIdx.x < 32) {
        if (threadIdx.x == 0) mbar_expect_tx(&bar[s], slot_bytes);
        __syncwarp();
        // (the box's columns stay inside [0, T) except the first and last tile's halo: those rows are clamped, which
        // moves the same bytes; nothing reads them)
        const int c0 = min(max(p.xs(t), 0), p.T - p.xw);
        for (int c = threadIdx.x; c < p.C; c += 32) {
          const unsigned char* src = p.x + ((static_cast<int64_t>(p.row(t)) * p.C + c) * p.T + c0) * p.esize;
          bulk_load(dst + c * p.row_bytes(), src, p.row_bytes(), &bar[s]);
        }
      }
    } else {
      const int c0 = min(max(p.xs(t), 0), p.T - p.xw);
      const int chunks = p.row_bytes() / 16;
      for (int i = threadIdx.x; i < p.C * chunks; i += kThreads) {
        const int c = i / chunks, k = i % chunks;
        const unsigned char* src = p.x + ((static_cast<int64_t>(p.row(t)) * p.C + c) * p.T + c0) * p.esize + k * 16;
        cp_async_16(dst + c * p.row_bytes() + k * 16, src, 16);
      }
      cp_async_commit();
    }
  };
  for (int n = 0; n < S; ++n) issue(n);
  for (int n = 0; blockIdx.x + static_cast<int64_t>(n) * gridDim.x < p.n_tiles; ++n) {
    if (METHOD == 2) {
      // groups committed after tile n's: min(S - 1, tiles issued after it)
      const int64_t later = (p.n_tiles - 1 - blockIdx.x) / gridDim.x - n;
      if (later >= 3 && S == 4) cp_async_wait<3>();
      else if (later >= 2 && S >= 3) cp_async_wait<2>();
      else if (later >= 1 && S >= 2) cp_async_wait<1>();
      else cp_async_wait<0>();
      __syncthreads();
    } else {
      mbar_wait(&bar[n % S], (n / S) & 1);
    }
    if (threadIdx.x == 0 && n < kMaxRounds) p.land[blockIdx.x * kMaxRounds + n] = now_ns() - t0;
    __syncthreads();  // (the slot is free: nothing reads it)
    issue(n + S);
  }
}

// The skeleton: x by the kernels' TMA box (EF: with the evict_first hint), then y, the tile's centre (y = x, the
// fused kernels' traffic with nothing computed), written out of the slot before it is refilled. YMODE 1: copied into a
// dense staging tile and stored by one TMA box (rung 11's WG_Y_TMA path); 2: st.global.v4 by all threads, each row's
// 16-byte pieces in order (coalesced); 3: the same with st.global.cs; 4: in the pattern the float32 kernels store y
// from wgmma's accumulators (warp w: rows 16 w + lane / 4 and 8 below, 2 elements a lane at column 8 j + 2 (lane % 4);
// a warp's store is 8 rows x 4 lanes x 8 bytes, a sector a row; 8 warps cover 128 rows). A grid
// of n_tiles blocks with S = 1 is the non-persistent form: one tile a block, as many blocks resident as their shared
// memory allows.
// W: the block also fetches W_pw's bytes (p.w, C x C elements, an L2 hit after the first block) by one bulk copy at its
// start, and writes no y before they landed, as the kernels stage W_pw once a block.
template <int YMODE, bool EF, bool W>
__global__ void __launch_bounds__(kThreads) skel(const __grid_constant__ CUtensorMap xmap,
                                                  const __grid_constant__ CUtensorMap ymap, Probe p, unsigned char* y,
                                                  int S) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) uint64_t bar[kMaxSlots + 1];  // the x slots', then W's
  const unsigned long long t0 = now_ns();
  const unsigned slot_bytes = static_cast<unsigned>(p.C) * p.row_bytes();
  const int centre = p.tile_t * p.esize, vecs = centre / 16;  // bytes of a row's centre, its 16-byte pieces
  unsigned char* stage = smem + S * slot_bytes;               // YMODE 1: C rows x centre bytes
  const unsigned w_bytes = static_cast<unsigned>(p.C) * p.C * p.esize;
  unsigned char* wbuf = stage + (YMODE == 1 ? p.C * centre : 0);  // W: C x C elements
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) mbar_init(&bar[s], 1);
    mbar_init(&bar[kMaxSlots], 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    if (W) {
      mbar_expect_tx(&bar[kMaxSlots], w_bytes);
      bulk_load(wbuf, p.w, w_bytes, &bar[kMaxSlots]);
    }
  }
  __syncthreads();
  auto issue = [&](int n) {
    const int64_t t = blockIdx.x + static_cast<int64_t>(n) * gridDim.x;
    if (t < p.n_tiles && threadIdx.x == 0)
      load_box<EF>(smem + (n % S) * slot_bytes, &xmap, &bar[n % S], p, t, slot_bytes);
  };
  for (int n = 0; n < S; ++n) issue(n);
  for (int n = 0; blockIdx.x + static_cast<int64_t>(n) * gridDim.x < p.n_tiles; ++n) {
    const int64_t t = blockIdx.x + static_cast<int64_t>(n) * gridDim.x;
    const unsigned char* slot = smem + (n % S) * slot_bytes + 16;  // the centre: past the 16-byte halo
    // y's tile (the store modes 2-4)
    unsigned char* dst = y + (static_cast<int64_t>(p.row(t)) * p.C * p.T + (t % p.n_tt) * p.tile_t) * p.esize;
    mbar_wait(&bar[n % S], (n / S) & 1);
    if (threadIdx.x == 0 && n < kMaxRounds && blockIdx.x < p.land_blocks)
      p.land[blockIdx.x * kMaxRounds + n] = now_ns() - t0;
    if (W && n == 0) mbar_wait(&bar[kMaxSlots], 0);
    if (p.busy > 0) {
      const long long c0 = clock64();
      while (clock64() - c0 < p.busy) {
      }
    }
    if (YMODE == 1) {
      if (threadIdx.x == 0) tma_store_wait_read<0>();  // the staging tile's last store has read it
      __syncthreads();
      for (int i = threadIdx.x; i < p.C * vecs; i += kThreads) {
        const int c = i / vecs, k = i % vecs;
        *reinterpret_cast<uint4*>(stage + c * centre + k * 16) =
            *reinterpret_cast<const uint4*>(slot + c * p.row_bytes() + k * 16);
      }
      fence_proxy_async();
      __syncthreads();
      if (threadIdx.x == 0) {
        tma_store_3d(&ymap, stage, static_cast<int>(t % p.n_tt) * p.tile_t, 0, p.row(t));
        tma_store_commit();
      }
    } else if (YMODE == 4) {
      const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, pair = 2 * p.esize;  // bytes a lane stores a row
      for (int r0 = 0; r0 < p.C; r0 += 128)
        for (int half = 0; half < 2; ++half) {
          const int r = r0 + 16 * warp + lane / 4 + 8 * half;
          if (r >= p.C) continue;
          for (int j = 0; j < p.tile_t / 8; ++j) {
            const int col = 8 * j + 2 * (lane % 4);
            const unsigned char* src = slot + r * p.row_bytes() + col * p.esize;
            unsigned char* out = dst + static_cast<int64_t>(r) * p.T * p.esize + col * p.esize;
            if (pair == 8) *reinterpret_cast<uint2*>(out) = *reinterpret_cast<const uint2*>(src);
            else *reinterpret_cast<uint32_t*>(out) = *reinterpret_cast<const uint32_t*>(src);
          }
        }
      __syncthreads();  // (the slot is read: it may be refilled)
    } else {
      for (int i = threadIdx.x; i < p.C * vecs; i += kThreads) {
        const int c = i / vecs, k = i % vecs;
        const uint4 v = *reinterpret_cast<const uint4*>(slot + c * p.row_bytes() + k * 16);
        uint4* out = reinterpret_cast<uint4*>(dst + static_cast<int64_t>(c) * p.T * p.esize + k * 16);
        if (YMODE == 3) __stcs(out, v);
        else *out = v;
      }
      __syncthreads();  // (the slot is read: it may be refilled)
    }
    issue(n + S);
  }
  if (W && blockIdx.x >= p.n_tiles) mbar_wait(&bar[kMaxSlots], 0);  // (no tile: W's copy still lands before the exit)
  if (YMODE == 1 && threadIdx.x == 0) tma_store_wait<0>();
}

// the read roof: every thread sums 16-byte vectors grid-stride (the sum written so it is not dropped); CS: ld.global.cs
template <bool CS>
__global__ void read_all(const uint4* x, int64_t n, unsigned* sink) {
  unsigned acc = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const uint4 v = CS ? __ldcs(x + i) : x[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  const int esize = argc > 1 ? std::atoi(argv[1]) : 4;
  const int64_t B = argc > 2 ? std::atoll(argv[2]) : 16;
  const int C = argc > 3 ? std::atoi(argv[3]) : 128;
  const int T = argc > 4 ? std::atoi(argv[4]) : 2048;
  const int tile_t = argc > 5 ? std::atoi(argv[5]) : 64;
  const int reps = argc > 6 ? std::atoi(argv[6]) : 50;
  const int only = argc > 7 ? std::atoi(argv[7]) : -1;  // one method only (its index), or all
  const int flush_kind = argc > 8 ? std::atoi(argv[8]) : 0;  // 0 write flush, 1 none, 2 read flush
  const long long busy = argc > 9 ? std::atoll(argv[9]) : 0;  // the skeletons' cycles a tile (0: none)
  // (a TMA box is at most 256 elements a row: TILE_T plus the two 16-byte halos)
  if ((esize != 2 && esize != 4) || B < 1 || C < 1 || C > 256 || tile_t < 1 || T % tile_t || T < tile_t ||
      tile_t + 32 / esize > 256 || tile_t * esize % 16 || reps < 5 || only < -1 || only > 4 || flush_kind < 0 || flush_kind > 2 ||
      busy < 0 || busy > 100000000) {
    std::fprintf(stderr, "usage: x_fetch_probe [esize(2|4) B C(1..256) T TILE_T(divides T, + 32 / esize <= 256) "
                         "reps(>=5) method(-1 all, 0..3 one fetch path, 4 the skeletons) flush(0 write, 1 none, 2 read) "
                         "busy(cycles a skeleton's tile spins, 0..1e8)]\n");
    return 1;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  const int grid = prop.multiProcessorCount;
  Probe p{};
  p.esize = esize, p.C = C, p.T = T, p.tile_t = tile_t, p.halo = 16 / esize;
  p.xw = tile_t + 2 * p.halo, p.n_tt = T / tile_t, p.n_tiles = B * p.n_tt;
  const size_t xbytes = static_cast<size_t>(B) * C * T * esize, flush_bytes = size_t(256) << 20;
  unsigned char *x, *y, *flush;
  unsigned* sink;
  CK(cudaMalloc(&x, xbytes));
  CK(cudaMalloc(&y, xbytes));
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMalloc(&sink, 4));
  unsigned char* w;
  CK(cudaMalloc(&w, static_cast<size_t>(C) * C * esize));
  CK(cudaMemset(w, 0x3c, static_cast<size_t>(C) * C * esize));
  {  // x: a pattern (not a constant), so that the skeletons' y = x check sees a misplaced piece
    std::vector<uint32_t> h(xbytes / 4);
    for (size_t i = 0; i < h.size(); ++i) h[i] = static_cast<uint32_t>(i * 2654435761u) ^ static_cast<uint32_t>(i >> 7);
    CK(cudaMemcpy(x, h.data(), xbytes, cudaMemcpyHostToDevice));
  }
  CK(cudaMalloc(&p.land, sizeof(unsigned long long) * grid * kMaxRounds));
  p.x = x, p.w = w, p.land_blocks = grid, p.busy = busy;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(T), static_cast<cuuint64_t>(C), static_cast<cuuint64_t>(B)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(T) * esize, static_cast<cuuint64_t>(C) * T * esize};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(p.xw), static_cast<cuuint32_t>(C), 1};
  const CUtensorMap xmap = tma_map_3d(x, esize == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                                      dims, strides, box, CU_TENSOR_MAP_SWIZZLE_NONE);
  const cuuint32_t ybox[3] = {static_cast<cuuint32_t>(tile_t), static_cast<cuuint32_t>(C), 1};
  const CUtensorMap ymap = tma_map_3d(y, esize == 4 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                                      dims, strides, ybox, CU_TENSOR_MAP_SWIZZLE_NONE);
  const int64_t rounds = (p.n_tiles + grid - 1) / grid;
  std::printf("%s, %d SMs; x (%lld, %d, %d) of %d-byte elements, %.2f MB; tiles of %d columns + halo: rows of %d bytes, "
              "%lld tiles, %lld rounds; %d launches each, %s\n",
              prop.name, grid, static_cast<long long>(B), C, T, esize, xbytes / 1e6, tile_t, p.xw * esize,
              static_cast<long long>(p.n_tiles), static_cast<long long>(rounds), reps,
              flush_kind == 0   ? "L2 flushed (256 MB memset) before each"
              : flush_kind == 1 ? "no flush (x left in L2 by the launch before, where it fits)"
                                : "L2 refilled with clean lines (256 MB read) before each");
  // (2 untimed calls before the reps; before each call the flush asked for)
  auto time = [&](auto&& fn) {
    return time_calls(reps, 2, [&](int r) {
      if (flush_kind == 0) flush_l2(flush, flush_bytes, r);
      if (flush_kind == 2)
        read_all<false><<<grid * 8, 256>>>(reinterpret_cast<const uint4*>(flush), flush_bytes / 16, sink);
    }, fn);
  };
  auto show = [&](const char* name, TimeStats s, double bytes) {
    std::printf("%-22s %8.2f us (p10 %.2f, p90 %.2f)  %7.1f GB/s", name, s.med, s.p10, s.p90, bytes / (s.med * 1e3));
  };
  const TimeStats clone = time([&] { CK(cudaMemcpyAsync(y, x, xbytes, cudaMemcpyDeviceToDevice)); });
  show("clone (read + write)", clone, 2.0 * xbytes);
  std::printf("\n");
  const TimeStats rd = time([&] { read_all<true><<<grid * 8, 256>>>(reinterpret_cast<const uint4*>(x), xbytes / 16, sink); });
  show("plain read, .cs", rd, xbytes);
  std::printf("\n");
  const TimeStats rd0 = time([&] { read_all<false><<<grid * 8, 256>>>(reinterpret_cast<const uint4*>(x), xbytes / 16, sink); });
  show("plain read", rd0, xbytes);
  std::printf("\n");
  auto show_landed = [&] {  // the persistent grid's blocks, tile n = block + n * grid
    std::vector<unsigned long long> land(static_cast<size_t>(grid) * kMaxRounds);
    CK(cudaMemcpy(land.data(), p.land, land.size() * sizeof(land[0]), cudaMemcpyDeviceToHost));
    std::printf("  landed (us, median over blocks):");
    for (int n = 0; n < std::min<int64_t>(rounds, 8); ++n) {
      std::vector<float> v;
      for (int b = 0; b < grid; ++b)
        if (b + static_cast<int64_t>(n) * grid < p.n_tiles) v.push_back(land[b * kMaxRounds + n] * 1e-3f);
      std::printf(" %.2f", median(v));
    }
    std::printf("\n");
  };
  const char* names[4] = {"tma", "rows", "lsu", "tma_ef"};
  for (int method = 0; method < 4; ++method)
    for (int S : {1, 2, 4}) {
      if (only >= 0 && method != only) continue;
      const size_t smem = static_cast<size_t>(S) * C * p.xw * esize;
      if (smem > static_cast<size_t>(prop.sharedMemPerBlockOptin)) continue;
      void (*const kernel)(const CUtensorMap, Probe, int) = method == 0 ? fetch<0> : method == 1 ? fetch<1>
                                                          : method == 2 ? fetch<2> : fetch<3>;
      CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
      auto launch = [&] { kernel<<<grid, kThreads, smem>>>(xmap, p, S); };
      const TimeStats s = time(launch);
      const std::string name = std::string(names[method]) + ", " + std::to_string(S) + " in flight";
      show(name.c_str(), s, static_cast<double>(p.n_tiles) * C * p.xw * esize);
      show_landed();
    }
  if (busy > 0 && (only == -1 || only == 4)) std::printf("the skeletons spin %lld cycles a tile before y\n", busy);
  // The skeletons: x in and y (= x) out, nothing computed; x and y bytes counted for GB/s, the ratio to the clone above.
  // Each checked afterwards: y equals x bit for bit.
  if (only == -1 || only == 4) {
    std::vector<unsigned char> hx(xbytes), hy(xbytes);
    CK(cudaMemcpy(hx.data(), x, xbytes, cudaMemcpyDeviceToHost));
    const char* ynames[5] = {"", "y tma", "y st", "y st.cs", "y frag"};
    using Skel = void (*)(const CUtensorMap, const CUtensorMap, Probe, unsigned char*, int);
    const Skel kernels[2][2][4] = {
        {{skel<1, false, false>, skel<2, false, false>, skel<3, false, false>, skel<4, false, false>},
         {skel<1, true, false>, skel<2, true, false>, skel<3, true, false>, skel<4, true, false>}},
        {{skel<1, false, true>, skel<2, false, true>, skel<3, false, true>, skel<4, false, true>},
         {skel<1, true, true>, skel<2, true, true>, skel<3, true, true>, skel<4, true, true>}}};
    int failures = 0;
    for (int with_w = 0; with_w < 2; ++with_w) {
      for (int ef = 0; ef < 2; ++ef)
        for (int ymode = 1; ymode <= 4; ++ymode)
          for (int S : {1, 2, 0}) {  // 0: the non-persistent form (one tile a block)
            if (with_w && (ymode != 2 || S == 1)) continue;  // W_pw's fetch: with y by st, 2 in flight or a tile a block
            if (ymode == 4 && (ef || tile_t % 8)) continue;  // y in the fragments' pattern: x without the hint
            const int slots = S == 0 ? 1 : S;
            const int64_t blocks = S == 0 ? p.n_tiles : grid;
            const size_t smem = static_cast<size_t>(slots) * C * p.xw * esize +
                                (ymode == 1 ? static_cast<size_t>(C) * tile_t * esize : 0) +
                                (with_w ? static_cast<size_t>(C) * C * esize : 0);
            if (smem > static_cast<size_t>(prop.sharedMemPerBlockOptin)) continue;
            const auto kernel = kernels[with_w][ef][ymode - 1];
            CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
            CK(cudaMemset(y, 0xff, xbytes));
            const TimeStats s = time([&] {
              kernel<<<static_cast<unsigned>(blocks), kThreads, smem>>>(xmap, ymap, p, y, slots);
            });
            CK(cudaMemcpy(hy.data(), y, xbytes, cudaMemcpyDeviceToHost));
            const bool ok = hx == hy;
            failures += !ok;
            const std::string name = std::string("skel ") + (ef ? "tma_ef" : "tma") + ", " + ynames[ymode] + ", " +
                                     (S == 0 ? std::string("a tile a block") : std::to_string(S) + " in flight") +
                                     (with_w ? " + W_pw" : "");
            show(name.c_str(), s, static_cast<double>(p.n_tiles) * C * (p.xw + tile_t) * esize);
            std::printf("  %.3fx clone, y %s", s.med / clone.med, ok ? "== x" : "WRONG");
            if (S == 0) std::printf("\n");
            else show_landed();
          }
    }
    if (failures) {
      std::fprintf(stderr, "x_fetch_probe: %d skeleton(s) wrote a y that is not x\n", failures);
      return 2;
    }
  }
  return 0;
}
