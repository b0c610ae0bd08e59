// warp_specialized.cuh: rung 08's kernel: producer warps (x copies, depthwise) and consumer warps (MMA, y stores)
// handing tiles over through mbarriers, and its host plan and launch.
#pragma once
#include "tc_tile.cuh"
#include "mbarrier.cuh"

// The warp-specialized tile kernel. Two groups of warps run different loops over the block's tiles:
//   producers (kProdWarps): cp.async x tiles into a kXStages-deep ring, depthwise + bias + SiLU into a
//     2-deep act ring: act of tile i+1 is built while the consumers multiply tile i.
//   consumers (kWarpsM x kWarpsN): the pointwise GEMM on the tensor cores from act and the resident W,
//     then bias + y stores from the accumulators.
// So the DRAM copies, the depthwise and the MMAs of different tiles run at the same time instead of
// one phase after another. Handoffs are mbarriers per act slot s: FULL[s] (every producer thread
// arrives once act[s] is built; consumers wait) and EMPTY[s] (every consumer thread arrives once its
// MMAs have read act[s]; producers wait before building the next tile into it), so the producers run
// up to two tiles ahead. (Named-barrier handoffs, bar.arrive/bar.sync or bar.sync on both sides, were
// flagged by compute-sanitizer racecheck; docs/ladder.md.)
// All of W_pw stays in smem (tc_ws_plan refuses shapes where it does not fit).
// FUSED_ABLATE (common.cuh) leaves stages out for timing experiments.
template <typename T, bool kSplit3, int TT, int kWarpsM, int kWarpsN, int kWM, int kWN, int kProdWarps, int kXStages>
__global__ void __launch_bounds__((kWarpsM* kWarpsN + kProdWarps) * 32, 1) tc_ws_kernel(const TcParams p) {
  constexpr int NCW = kWarpsM * kWarpsN, NC = NCW * 32, NP = kProdWarps * 32, NALL = NC + NP;
  constexpr int NX = kXStages, NA = 2;  // ring depths of the x and act tiles
  constexpr int BM = kWarpsM * kWM, AS = tc_act_stride(TT);
  constexpr int kBarProducers = 1;
  static_assert(kWM % 16 == 0 && kWN % 8 == 0 && TT == kWarpsN * kWN, "bad warp tiling");
  extern __shared__ __align__(16) unsigned char tc_smem[];
  float* sW = reinterpret_cast<float*>(tc_smem + p.off_w);
  float* sWdw = reinterpret_cast<float*>(tc_smem + p.off_wdw);
  float* sBdw = sWdw + p.C_in * p.K;
  uint64_t* full = reinterpret_cast<uint64_t*>(tc_smem + p.off_mbar);  // full[NA], then empty[NA]
  uint64_t* empty = full + NA;
  const int warp = threadIdx.x >> 5;
  // This block's tiles: blockIdx.x, blockIdx.x + gridDim.x, ...
  const int64_t n_mine = blockIdx.x < p.n_tiles ? (p.n_tiles - 1 - blockIdx.x) / gridDim.x + 1 : 0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < NA; ++s) {
      mbar_init(full + s, NP);
      mbar_init(empty + s, NC);
    }
  }

  // Every thread: the first x tiles' copies go out (producers), then the whole block stages the weights,
  // so the fill costs one memory latency for all of W_pw while those copies are in flight.
  const int ptid = threadIdx.x - NC;  // producer thread index (negative for consumers)
  const int vec = p.x_vec ? 16 / static_cast<int>(sizeof(T)) : 1;
  const T* x = static_cast<const T*>(p.x);
  auto x_slot = [&](int64_t i) { return reinterpret_cast<T*>(tc_smem + p.off_x + (i % NX) * p.x_stage); };
  auto issue = [&](int64_t i) {  // producers: copies of the block's i-th tile; always one commit group
    if (i < n_mine && !(FUSED_ABLATE & 8)) {
      const int64_t tile = blockIdx.x + i * gridDim.x;
      tc_issue_x_tile(x_slot(i), x, tile / p.n_tt, p, tc_x_start((tile % p.n_tt) * TT - p.padding, vec), ptid, NP);
    }
    cp_async_commit();
  };
  if (warp >= NCW) {
#pragma unroll
    for (int i = 0; i < NX; ++i) issue(i);
  }
  tc_fill_w<!kSplit3>(sW, p.w_pw, 0, p.w_rows, p.C_in, p.C_in_pad, p.C_out, threadIdx.x, NALL);
  for (int i = threadIdx.x; i < p.C_in * p.K; i += NALL) sWdw[i] = p.w_dw[i];
  for (int i = threadIdx.x; i < p.C_in; i += NALL) sBdw[i] = p.b_dw ? p.b_dw[i] : 0.0f;
  __syncthreads();  // weights staged, mbarriers initialised

  if (warp >= NCW) {  // ---- producers
    for (int64_t i = 0; i < n_mine; ++i) {
      const int64_t t0 = ((blockIdx.x + i * gridDim.x) % p.n_tt) * TT, xs = t0 - p.padding;
      cp_async_wait<NX - 1>();            // my copies of tile i have landed
      named_bar_sync(kBarProducers, NP);  // everyone's have
      if (i >= NA) mbar_wait(empty + i % NA, static_cast<int>((i / NA - 1) & 1));  // consumers are done with it
      float* act = reinterpret_cast<float*>(tc_smem + p.off_act + (i % NA) * p.act_stage);
      if (!(FUSED_ABLATE & 1))
        tc_dw_silu_any<T, !kSplit3, !kSplit3, TT, AS>(act, x_slot(i), sWdw, sBdw, p,
                                                      static_cast<int>(xs - tc_x_start(xs, vec)), t0, warp - NCW,
                                                      kProdWarps);
      mbar_arrive(full + i % NA);         // act[i % NA] is built
      named_bar_sync(kBarProducers, NP);  // every producer is done reading x slot i % NX
      issue(i + NX);
    }
    cp_async_wait<0>();  // nothing may be in flight when the block exits
  } else {  // ---- consumers
    const int lane = threadIdx.x & 31, wm = warp % kWarpsM, wn = warp / kWarpsM, g = lane >> 2;
    const int KS = p.C_in_pad / 8;
    T* y = static_cast<T*>(p.y);
    for (int64_t i = 0; i < n_mine; ++i) {
      const int64_t tile = blockIdx.x + i * gridDim.x, b = tile / p.n_tt, t0 = (tile % p.n_tt) * TT;
      mbar_wait(full + i % NA, static_cast<int>((i / NA) & 1));
      const float* act = reinterpret_cast<const float*>(tc_smem + p.off_act + (i % NA) * p.act_stage);
      for (int c = 0; c < p.n_chunks; ++c) {
        const int row0 = c * BM + wm * kWM, col0 = wn * kWN;
        const bool active = row0 < p.C_out && t0 + col0 < p.T_out;  // warp-uniform
        float acc[kWM / 16][kWN / 8][4] = {};
        if (active && !(FUSED_ABLATE & 2))
          tc_warp_mma<kSplit3, kWM, kWN, AS>(acc, sW + static_cast<size_t>(c * BM + wm * kWM) / 16 * KS * 128,
                                             act + col0 + g, KS);
        if (c == p.n_chunks - 1) mbar_arrive(empty + i % NA);  // done reading act[i % NA]
        if (active && !(FUSED_ABLATE & 4)) tc_warp_store<T, kWM, kWN>(acc, y, p, b, row0, t0 + col0);
      }
    }
  }
}



// Host: the warp-specialized kernel's smem plan: [W_pw resident | w_dw, b_dw | x ring (nx) | act ring (2) | mbarriers].
// Returns false when that does not fit in the opt-in smem (C_in, C_out or the span too large).
inline bool tc_ws_plan(const FusedArgs& a, int elem_bytes, int TT, int BM, int nx, TcParams& p, size_t& smem) {
  if (!tc_plan(a, elem_bytes, TT, BM, p, smem)) return false;  // fills the shape fields of p
  const int64_t limit = a.max_smem_optin > 0 ? a.max_smem_optin : 227 * 1024;
  auto align16 = [](int64_t v) { return (v + 15) / 16 * 16; };
  const int64_t w_bytes = static_cast<int64_t>(p.n_chunks) * BM * p.C_in_pad * 4;
  // room for tc_dw_silu_x4's 16-byte windows: XW >= TT + span + 8
  if (elem_bytes == 4 && tc_x4_path(a))
    p.XW = std::max(p.XW, static_cast<int>((TT + static_cast<int64_t>(a.K - 1) * a.dilation + 8 + 3) / 4 * 4));
  const int64_t off_x = align16(w_bytes + (a.C_in * a.K + a.C_in) * 4);
  const int64_t x_stage = align16(a.C_in * p.XW * elem_bytes);
  const int64_t act_stage = static_cast<int64_t>(p.C_in_pad) * tc_act_stride(TT) * 4;
  const int64_t off_mbar = off_x + nx * x_stage + 2 * act_stage;  // 16-byte aligned
  const int64_t total = off_mbar + 4 * 8;
  if (total > limit) return false;
  p.w_resident = 1;
  p.w_rows = p.n_chunks * BM;
  p.off_w = 0;
  p.off_wdw = static_cast<uint32_t>(w_bytes);
  p.off_x = static_cast<uint32_t>(off_x);
  p.x_stage = static_cast<uint32_t>(x_stage);
  p.off_act = static_cast<uint32_t>(off_x + nx * x_stage);
  p.act_stage = static_cast<uint32_t>(act_stage);
  p.off_mbar = static_cast<uint32_t>(off_mbar);
  smem = static_cast<size_t>(total);
  return true;
}

// Host: plan, opt in to the smem, one persistent block per SM (or fewer when there are fewer tiles), launch.
template <typename T, bool kSplit3, int TT, int kWarpsM, int kWarpsN, int kWM, int kWN, int kProdWarps, int kXStages>
void tc_ws_launch(const FusedArgs& a, void* stream) {
  constexpr int threads = (kWarpsM * kWarpsN + kProdWarps) * 32, BM = kWarpsM * kWM;
  TcParams p{};
  size_t smem = 0;
  if (!tc_ws_plan(a, static_cast<int>(sizeof(T)), TT, BM, kXStages, p, smem))
    throw std::runtime_error("warp-specialized variant: shape does not fit in shared memory (see fused_unsupported)");
  tc_launch_persistent(tc_ws_kernel<T, kSplit3, TT, kWarpsM, kWarpsN, kWM, kWN, kProdWarps, kXStages>, threads, smem,
                       a, p, stream);
}
