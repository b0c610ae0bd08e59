// row_float4.cuh: 32-bit in-row bounds checks and float4 access to rows of float32, shared by the backward's
// vector paths (rung 4 in dw_silu_backward.cu, rung 5 in dw_silu_backward_tc.cu). Indices within a row are 32-bit
// (the hosts keep rows below 2^31 minus two tiles): rung 3's first form did its in-row index math in 64 bits, and
// its integer instructions were the largest share of its code.
#pragma once
#include <cuda_runtime.h>

namespace rowf4 {

// 0 <= t < len, in one unsigned compare
__device__ __forceinline__ bool in_row(int t, int len) { return static_cast<unsigned>(t) < static_cast<unsigned>(len); }
// the float4 at row[t .. t + 3] (16-byte aligned), zero where t is outside [0, len): rows of whole float4s
__device__ __forceinline__ float4 ldg4_in(const float* __restrict__ row, int t, int len) {
  return in_row(t, len) ? __ldg(reinterpret_cast<const float4*>(row + t)) : make_float4(0.f, 0.f, 0.f, 0.f);
}
__device__ __forceinline__ void unpack4(float* dst, float4 q) {
  dst[0] = q.x; dst[1] = q.y; dst[2] = q.z; dst[3] = q.w;
}
__device__ __forceinline__ float4 pack4(const float* src) { return make_float4(src[0], src[1], src[2], src[3]); }

}  // namespace rowf4
