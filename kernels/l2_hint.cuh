// l2_hint.cuh: L2 eviction priorities on global loads and stores, and the reset of lines to normal priority.
// A policy made by createpolicy rides on a load or store (the .L2::cache_hint qualifier, sm_80 and later): lines it
// brings in or writes get that priority. evict_last lines are evicted only when no other candidate is left, so data
// that a later kernel of the same stream reads again can stay in L2 across the kernels in between; evict_first marks
// data read once. Lines keep evict_last until evicted or reset: whoever sets it must reset them (to_normal, below)
// once the last reader has run, or they crowd the L2 of whatever runs next (and survive a timer's L2 flush).
// Before sm_80 the hints fall away: plain loads and stores, no reset.
#pragma once
#include <cstdint>
#include <cuda_runtime.h>

namespace l2h {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define L2H_HINTS 1
#else
#define L2H_HINTS 0
#endif

enum Priority : int { kNormal = 0, kLast = 1, kFirst = 2 };

// A policy for every line an access touches (fraction 1.0) with the given priority.
__device__ __forceinline__ uint64_t policy(int priority) {
  uint64_t p = 0;
#if L2H_HINTS
  if (priority == kLast)
    asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  else if (priority == kFirst)
    asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  else
    asm("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(p));
#else
  (void)priority;
#endif
  return p;
}

// A read-only (non-coherent) 16-byte load with the policy's priority.
__device__ __forceinline__ float4 ldg4(const float* p, uint64_t pol) {
#if L2H_HINTS
  float4 v;
  asm("ld.global.nc.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], %5;"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "l"(p), "l"(pol));
  return v;
#else
  (void)pol;
  return __ldg(reinterpret_cast<const float4*>(p));
#endif
}

// A 16-byte store with the policy's priority.
__device__ __forceinline__ void st4(float* p, float4 v, uint64_t pol) {
#if L2H_HINTS
  asm volatile("st.global.L2::cache_hint.v4.f32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "f"(v.x), "f"(v.y),
               "f"(v.z), "f"(v.w), "l"(pol)
               : "memory");
#else
  (void)pol;
  *reinterpret_cast<float4*>(p) = v;
#endif
}

// A 4-byte store with the policy's priority.
__device__ __forceinline__ void st1(float* p, float v, uint64_t pol) {
#if L2H_HINTS
  asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" ::"l"(p), "f"(v), "l"(pol) : "memory");
#else
  (void)pol;
  *p = v;
#endif
}

// The 128-byte line holding `line` (128-byte aligned) back to normal priority, if it is in L2.
__device__ __forceinline__ void to_normal(const void* line) {
#if L2H_HINTS
  asm volatile("applypriority.global.L2::evict_normal [%0], 128;" ::"l"(line) : "memory");
#else
  (void)line;
#endif
}

}  // namespace l2h
