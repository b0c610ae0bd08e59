// warp_reduce.cuh: the fixed-order warp sum the backward kernels reduce with (rungs 3-5 in dw_silu_backward.cu,
// rung 8 in dw_silu_wgrad_wgmma.cu): a butterfly over lane ^ 16, ^ 8, .. ^ 1, so every lane ends with the same
// sum, in the same order on every run (deterministic, no atomics).
#pragma once
#include <cuda_runtime.h>

namespace wred {

__device__ __forceinline__ float warp_sum(float s) {
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  return s;
}

// The sum over the lanes that differ from this one only in lane bits LO .. HI (powers of two, LO <= HI): a butterfly
// over lane ^ LO, ^ 2 LO, .. ^ HI, in that order (rung 7's db_pw over 8 consecutive lanes: <1, 4>; rung 10's over
// the 8 lanes of one quad position: <4, 16>).
template <int LO, int HI>
__device__ __forceinline__ float lanes_sum(float s) {
  static_assert(LO > 0 && (LO & (LO - 1)) == 0 && HI >= LO && HI <= 16 && (HI & (HI - 1)) == 0, "lane bits");
#pragma unroll
  for (int o = LO; o <= HI; o <<= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  return s;
}

}  // namespace wred
