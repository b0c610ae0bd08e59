// pdl.cuh: programmatic dependent launch (Hopper). A kernel launched by launch_maybe_dependent with `dependent` set may
// start while the kernel before it in the stream is still running or draining: its blocks get to the SMs the earlier
// grid frees, and the launch's own latency overlaps the earlier grid's tail. Such a kernel must call griddep_wait()
// before it touches global memory, reads and writes alike (the caching allocator may hand it memory the earlier
// kernel still reads); griddep_wait returns once the earlier grid has completed and its writes are visible. A kernel
// calls griddep_launch_dependents() to let the next (dependent) launch start before it completes.
// Without the launch attribute (other GPUs, or the caller's choice) both instructions are no-ops.
#pragma once
#include <cuda_runtime.h>
#include <map>
#include <mutex>
#include <utility>

__device__ __forceinline__ void griddep_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

__device__ __forceinline__ void griddep_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}

// Whether `kernel`'s loaded binary was compiled for sm_90 or newer from PTX of sm_90 or newer, i.e. holds its
// griddep_wait: only then may it be launched as a dependent (a build for an older arch, JIT-compiled on Hopper, has
// no wait and would race the kernel before it).
// Asked once per (device, kernel), then remembered.
template <typename Kernel>
inline bool pdl_ready(Kernel kernel) {
  static std::mutex mu;
  static std::map<std::pair<int, const void*>, bool> known;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  const std::pair<int, const void*> key{dev, reinterpret_cast<const void*>(kernel)};
  {
    const std::lock_guard<std::mutex> lock(mu);
    const auto it = known.find(key);
    if (it != known.end()) return it->second;
  }
  cudaFuncAttributes f{};
  bool ready = false;
  if (cudaFuncGetAttributes(&f, key.second) == cudaSuccess)
    ready = f.binaryVersion >= 90 && f.ptxVersion >= 90;
  else
    cudaGetLastError();  // clear the error: the caller launches without the attribute
  const std::lock_guard<std::mutex> lock(mu);
  known[key] = ready;
  return ready;
}

// <<<grid, block, smem, stream>>>(args...), as a programmatic dependent of the stream's previous kernel where
// `dependent` and pdl_ready(kernel) (a binary without the wait launches plainly). Returns the launch's error.
template <typename... Params, typename... Args>
inline cudaError_t launch_maybe_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, size_t smem,
                                          cudaStream_t stream, bool dependent, Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = dependent && pdl_ready(kernel) ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
}
