// mbarrier.cuh: block-level synchronization beyond __syncthreads: named barriers and mbarriers (rungs 08-12).
#pragma once
#include <cstdint>
#include <cuda_runtime.h>

// Named barrier (ids 1..15; 0 is __syncthreads): waits until `n` threads (a multiple of 32) of the
// block have reached barrier `id`, so two groups of warps can synchronize without the others.
__device__ __forceinline__ void named_bar_sync(int id, int n) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
// mbarrier (sm_80+ arrive/wait, sm_90 try_wait): a shared-memory barrier object that completes a phase
// when `count` threads have arrived; arrive releases this thread's earlier shared-memory accesses,
// a successful wait acquires them. Phases alternate parity 0, 1, 0, ...
__device__ __forceinline__ void mbar_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;\n" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))),
               "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared.b64 state, [%0];\n}\n"
               ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))) : "memory");
}
// Wait until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, int parity) {
  asm volatile("{\n .reg .pred done;\n WAIT_%=:\n mbarrier.try_wait.parity.shared.b64 done, [%0], %1;\n"
               " @!done bra WAIT_%=;\n}\n"
               ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(parity) : "memory");
}
