// standalone_timer.cuh: the timing loop of the standalone nvcc harnesses in scripts/ (pw_wgrad_sweep.cu,
// x_fetch_probe.cu): `before(r)` ahead of each call (bench's L2 flush, flush_l2 below, unless the harness asks for
// another), CUDA events around `fn()`, `warmup` untimed calls first; the median, p10 and p90 of `reps` calls in us.
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

#include "standalone_check.cuh"  // CK

struct TimeStats {
  float med, p10, p90;
};

// bench's flush: a 256 MB buffer (flush_bytes) memset before call r
inline void flush_l2(void* buf, size_t bytes, int r) { CK(cudaMemsetAsync(buf, r & 0xff, bytes)); }

template <typename Before, typename Fn>
TimeStats time_calls(int reps, int warmup, Before&& before, Fn&& fn) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> us;
  for (int r = 0; r < reps + warmup; ++r) {
    before(r);
    CK(cudaEventRecord(e0));
    fn();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    float ms = 0.0f;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (r >= warmup) us.push_back(ms * 1e3f);
  }
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  std::sort(us.begin(), us.end());
  return {us[us.size() / 2], us[us.size() / 10], us[us.size() * 9 / 10]};
}
