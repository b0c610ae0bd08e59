// cp_async.cuh: asynchronous global -> shared copies (cp.async, sm_80+), used by rungs 04-08.
#pragma once
#include <cuda_runtime.h>

// ---- cp.async (added for rung 04) ----
// Asynchronous global -> shared copies (sm_80+), bypassing registers. `src_bytes` < the copy size
// zero-fills the rest: pass src_bytes = 0 for an out-of-range element (the source pointer must still
// be a valid global address; nothing is read from it). Visible to the issuing thread after
// cp_async_wait<N>() and to the whole block after a following __syncthreads().
__device__ __forceinline__ void cp_async_16(void* smem_dst, const void* gmem_src, int src_bytes) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_4(void* smem_dst, const void* gmem_src, int src_bytes) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem_dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(src_bytes)
               : "memory");
}
// Close the group of copies issued so far by this thread.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Wait until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
