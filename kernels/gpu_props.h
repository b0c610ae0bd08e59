// gpu_props.h: the current GPU's properties the backward's launches ask for (host code): its compute capability
// (major * 10 + minor, 0 where the runtime cannot say) and its SM count (1 where it cannot say), and the grid of the
// weight-gradient kernels that follows from it: one block per SM at most, never more than the (b, chunk) pairs.
#pragma once
#include <cuda_runtime.h>
#include <cstdint>

inline int gpu_compute_capability() {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess)
    return 0;
  return 10 * major + minor;
}

inline int gpu_sm_count() {
  int dev = 0, sms = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess || sms < 1)
    return 1;
  return sms;
}

// min(SMs / sm_div (at least 1), B * ceil(T / chunk)): the blocks of a launch whose blocks each own a range of
// (b, chunk-step) pairs
inline int64_t blocks_per_sm_capped(int64_t B, int64_t T, int chunk, int sm_div = 1) {
  const int64_t per = gpu_sm_count() / sm_div, g = per > 0 ? per : 1;
  const int64_t chunks = B * ((T + chunk - 1) / chunk);
  return chunks < g ? chunks : g;
}
