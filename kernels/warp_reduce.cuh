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

}  // namespace wred
