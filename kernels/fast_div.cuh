// fast_div.cuh: division of a tile index by a run-time divisor fixed for the whole launch (the time tiles per
// batch row), as a multiply-high, an add and a shift, instead of the integer division nvcc emits for `/` and `%`
// (the straight-line blocks holding rung 09's 64-bit `t / n_tt` and `t % n_tt` were 11% of its executed instructions
// at the headline: ncu, logs/2026-12-04_4db2629_ncu_sass.log).
// Round-up method (Granlund and Montgomery, "Division by invariant integers using multiplication", 1994): with
// l = ceil(log2 d) and m = floor(2^32 (2^l - d) / d) + 1, q = (mulhi(n, m) + n) >> l is n / d for every
// n < 2^31 (the sum then fits in 32 bits). tests/test_jit.py runs this header's host path against `/` on the CPU.
#pragma once
#include <cstdint>

struct FastDiv {
  uint32_t d = 1, mul = 0;
  int shift = 0;
};

// Host: the constants for divisor d >= 1.
inline FastDiv fast_div_make(uint32_t d) {
  FastDiv f;
  f.d = d;
  while ((1ull << f.shift) < d) ++f.shift;
  f.mul = static_cast<uint32_t>(((1ull << 32) * ((1ull << f.shift) - d)) / d + 1);
  return f;
}

// n / d for 0 <= n < 2^31.
__host__ __device__ __forceinline__ uint32_t fast_div(uint32_t n, const FastDiv& f) {
#ifdef __CUDA_ARCH__
  const uint32_t hi = __umulhi(n, f.mul);
#else
  const uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(n) * f.mul) >> 32);
#endif
  return (hi + n) >> f.shift;
}
