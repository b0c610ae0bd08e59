"""What a launch costs before any byte moves. Under bench's timer (L2 flushed, the spin kernel queued, CUDA events),
interleaved so that every row runs under the same conditions: empty kernels of growing size (one warp; one block of
the TF32 kernel's size on every SM; the same with its ~200 KB of shared memory; and that block reading a 64 KB weight
as W_pw's fill does, from DRAM after the flush), beside x.clone() of the headline's bytes and the TF32 kernel's builds
with neither x reads nor y writes (FUSED_ABLATE=15: the launch, W_pw's fill, the tile loop's barriers) and without the
fill too (31). The skeleton's fixed part (~6.3 us on an H100 at 672476e, ~1.7 us over the clone's) is then split into
the launch of such a block, the fill, and the block's own set-up.
    python scripts/launch_cost.py [--reps 200] [--threads 768] [--smem-kb 203] [--no-rung]"""
import argparse
import hashlib
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

CUDA_SRC = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>

__global__ void empty_kernel() {}

// every block reads the whole weight (as W_pw's fill does) into its shared memory
__global__ void fill_kernel(const float4* __restrict__ w, int n) {
  extern __shared__ float4 sm[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) sm[i] = __ldg(w + i);
  __syncthreads();
}

void launch(int kind, int blocks, int threads, int64_t smem, torch::Tensor w) {
  TORCH_CHECK(kind == 0 || kind == 1, "kind: 0 (empty) or 1 (fill), got ", kind);
  TORCH_CHECK(w.is_cuda() && w.scalar_type() == torch::kFloat32 && w.is_contiguous() && w.numel() % 4 == 0,
              "w: a contiguous float32 CUDA tensor of a multiple of 4 elements");
  TORCH_CHECK(kind == 0 || smem >= w.numel() * 4, "fill: smem must hold w (", w.numel() * 4, " bytes), got ", smem);
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream();
  // each kernel's shared-memory limit raised once (to the largest asked), not on every timed call
  static int64_t opted[2] = {0, 0};
  if (smem > opted[kind]) {
    C10_CUDA_CHECK(cudaFuncSetAttribute(kind == 0 ? (const void*)empty_kernel : (const void*)fill_kernel,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    opted[kind] = smem;
  }
  if (kind == 0) empty_kernel<<<blocks, threads, smem, stream>>>();
  else fill_kernel<<<blocks, threads, smem, stream>>>(reinterpret_cast<const float4*>(w.data_ptr<float>()),
                                                      (int)(w.numel() / 4));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}
"""


def probe():
    """The probe's extension, built on first use by the kit's JIT (its build folder, lock and CUDA toolkit)."""
    arch = fj.cuda_arch()
    h = hashlib.sha256(repr((CUDA_SRC, arch, torch.__version__, torch.version.cuda)).encode()).hexdigest()[:16]
    kwargs = dict(cpp_sources="void launch(int, int, int, int64_t, torch::Tensor);", cuda_sources=CUDA_SRC,
                  functions=["launch"], extra_cuda_cflags=["-O3"], with_cuda=True)
    return fj.load_built(f"launch_cost_probe_{h}", arch, kwargs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--threads", type=int, default=768, help="the TF32 kernel's block at the headline: 6 warpgroups")
    ap.add_argument("--smem-kb", type=int, default=203, help="its dynamic shared memory, KiB")
    ap.add_argument("--no-rung", action="store_true", help="leave out rung 13's two builds (minutes of compiling)")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("launch_cost.py times GPU launches: no CUDA device here")
    mod = probe()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    smem = a.smem_kb * 1024
    w = torch.randn(128 * 128, device="cuda")  # W_pw's 64 KB
    model, x = fj.make_case(fj.HEADLINE, torch.float32, "cuda", seed=1234)
    rows = {
        "empty: 1 block of 32 threads": lambda: mod.launch(0, 1, 32, 0, w),
        f"empty: {sms} blocks of {a.threads} threads": lambda: mod.launch(0, sms, a.threads, 0, w),
        f"empty: {sms} x {a.threads} threads, {a.smem_kb} KiB smem": lambda: mod.launch(0, sms, a.threads, smem, w),
        f"64 KiB fill: {sms} x {a.threads}, {a.smem_kb} KiB smem": lambda: mod.launch(1, sms, a.threads, smem, w),
        "x.clone() (headline)": fj.callable_for("clone", model, x),
    }
    for mask, what in () if a.no_rung else ((15, "no x reads, no y writes"), (31, "no x reads, no y writes, no W_pw fill")):
        d = {**fj.defines_over_tuned("wgmma_wide", []), "FUSED_ABLATE": mask}
        rows[f"rung 13 FUSED_ABLATE={mask} ({what})"] = fj.callable_for("wgmma_wide", model, x, d)
    t = fj.Timer("cuda").time_interleaved(list(rows.values()), a.reps)
    print(f"{torch.cuda.get_device_name()}  {a.reps} interleaved rounds, L2 flushed before each call")
    for j, name in enumerate(rows):
        c = t[:, j]
        print(f"{name:<58} median {np.median(c):7.2f} us  (p10 {np.percentile(c, 10):.2f}, p90 {np.percentile(c, 90):.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
