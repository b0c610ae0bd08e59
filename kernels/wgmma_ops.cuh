// wgmma_ops.cuh: the Hopper (sm_90a) primitives the wgmma kernels share: wgmma.mma_async on shared-memory
// descriptors (tf32 and bf16, N = 8 .. 128), the 128-byte swizzled K-major layout, the async-proxy fence, TMA
// tensor loads completed on mbarriers, and the host's tensor-map encoder. Used by wgmma.cuh (forward rungs
// 09-13) and pw_weight_grad_wgmma.cu (backward rung 7). Device code here assembles only for sm_90a: a file
// that includes it in a build for another arch guards its kernels' bodies (FUSED_SM90A, jit.py's preamble).
#pragma once
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cudaTypedefs.h>  // CUtensorMap, PFN_cuTensorMapEncodeTiled (fetched through the runtime: no -lcuda)
#include <cstdint>
#include <stdexcept>
#include <string>

namespace {

// ---- wgmma (sm_90a) ----
// D (64 x N, fp32, registers) (+)= A (64 x k, W_pw rows, smem) * B (k x N, act, smem), k = 32 bytes of K;
// both operands K-major, described by 64-bit shared-memory descriptors. D layout per warp w of the
// warpgroup: rows 16w + lane/4 (+8), columns 8j + 2*(lane%4) (+1) in d[4j + {0,1,2,3}]: the mma.m16n8
// C fragment order, so tc_warp_store writes it. (tf32 takes no transpose operands; bf16 takes 0, 0.)
#define WG_R4 "%0, %1, %2, %3"
#define WG_R8 WG_R4 ", %4, %5, %6, %7"
#define WG_R16 WG_R8 ", %8, %9, %10, %11, %12, %13, %14, %15"
#define WG_R32 WG_R16 ", %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define WG_R64 WG_R32 ", %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, " \
               "%49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define WG_D4(d) "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
#define WG_D8(d) WG_D4(d), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
#define WG_D16(d) WG_D8(d), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), \
                  "+f"(d[15])
#define WG_D32(d) WG_D16(d), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), \
                  "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]),  \
                  "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define WG_D64(d) WG_D32(d), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), \
                  "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]),  \
                  "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]),  \
                  "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]),  \
                  "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
// One wgmma: R accumulators %0 .. %R-1, descriptors %NA (W_pw) and %NB (act), accumulate flag %NP.
#define WG_MMA(INSTR, TAIL, R, NA, NB, NP)                                                               \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #NP ", 0;\n" INSTR " {" WG_R##R "}, %" #NA ", %" #NB \
               ", p, 1, 1" TAIL ";\n}\n"                                                                   \
               : WG_D##R(d)                                                                               \
               : "l"(a), "l"(b), "r"(accumulate))
// Wgmma<N, float> (m64nNk8 tf32) and Wgmma<N, bf16> (m64nNk16) for one N, with R = N / 2 accumulators.
#define WG_DEFINE(N, R, NA, NB, NP)                                                                         \
  template <>                                                                                               \
  struct Wgmma<N, float> {                                                                                  \
    static __device__ __forceinline__ void mma(float (&d)[R], uint64_t a, uint64_t b, int accumulate) {     \
      WG_MMA("wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32", "", R, NA, NB, NP);               \
    }                                                                                                       \
  };                                                                                                        \
  template <>                                                                                               \
  struct Wgmma<N, __nv_bfloat16> {                                                                          \
    static __device__ __forceinline__ void mma(float (&d)[R], uint64_t a, uint64_t b, int accumulate) {     \
      WG_MMA("wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.bf16.bf16", ", 0, 0", R, NA, NB, NP);        \
    }                                                                                                       \
  };
template <int N, typename E>
struct Wgmma;
WG_DEFINE(8, 4, 4, 5, 6)
WG_DEFINE(16, 8, 8, 9, 10)
WG_DEFINE(32, 16, 16, 17, 18)
WG_DEFINE(64, 32, 32, 33, 34)
WG_DEFINE(128, 64, 64, 65, 66)
// WgmmaRs<N>: m64nNk8 tf32 with A (64 x 8) from registers (rung 12's activations, rung 10's small W_pw parts under
// WG_W_SMALL_REGS, the backward's dy), B from a descriptor, in the fragment of wgmma_rs.cuh's header: warp w, lane
// (g = lane/4, t4 = lane%4) holds a[0] (row 16w+g, k t4), a[1] (row 16w+g+8, k t4), a[2] (row 16w+g, k t4+4), a[3]
// (row 16w+g+8, k t4+4). mma(d, a, b) always accumulates (scale-d 1); mma(d, a, b, accumulate): 0 overwrites d.
#define WG_DEFINE_RS(N, R, A0, A1, A2, A3, NB, NP)                                                              \
  template <>                                                                                                   \
  struct WgmmaRs<N> {                                                                                           \
    static __device__ __forceinline__ void mma(float (&d)[R], const uint32_t (&a)[4], uint64_t b) {            \
      asm volatile("wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 {" WG_R##R "}, {%" #A0 ", %" #A1  \
                   ", %" #A2 ", %" #A3 "}, %" #NB ", 1, 1, 1;\n"                                                \
                   : WG_D##R(d)                                                                                 \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));                                       \
    }                                                                                                           \
    static __device__ __forceinline__ void mma(float (&d)[R], const uint32_t (&a)[4], uint64_t b, int accumulate) {\
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #NP ", 0;\n"                                           \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 {" WG_R##R "}, {%" #A0 ", %" #A1      \
                   ", %" #A2 ", %" #A3 "}, %" #NB ", p, 1, 1;\n}\n"                                             \
                   : WG_D##R(d)                                                                                 \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));                     \
    }                                                                                                           \
  };
template <int N>
struct WgmmaRs;
WG_DEFINE_RS(8, 4, 4, 5, 6, 7, 8, 9)
WG_DEFINE_RS(16, 8, 8, 9, 10, 11, 12, 13)
WG_DEFINE_RS(32, 16, 16, 17, 18, 19, 20, 21)
WG_DEFINE_RS(64, 32, 32, 33, 34, 35, 36, 37)
WG_DEFINE_RS(128, 64, 64, 65, 66, 67, 68, 69)

// Shared-memory matrix descriptor of a K-major operand in the 128-byte swizzled layout: start address,
// leading byte offset unused (1), stride byte offset 1024 B (between 8-row groups), swizzle mode 1 (128 B).
__device__ __forceinline__ uint64_t wg_desc(uint32_t smem_addr) {
  return static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4) | (1ull << 16) | (static_cast<uint64_t>(1024 >> 4) << 32) |
         (1ull << 62);
}
// Byte offset of element (row, k) of a K-major operand of ES-byte elements with `rows` rows, 128-byte
// swizzle: K in atoms of 128 / ES elements (one 128-byte row each); an atom is `rows` rows of 128 B; the
// 16-byte chunk index is XORed with row % 8. Atoms start 1024-byte aligned, as the hardware's swizzle assumes.
template <int ES>
__host__ __device__ __forceinline__ uint32_t wg_swz(int row, int k, int rows) {
  constexpr int kAtomK = 128 / ES;
  const int kb = (k % kAtomK) * ES;  // byte within the 128-byte row
  return static_cast<uint32_t>((k / kAtomK) * rows * 128 + row * 128 + (((kb >> 4) ^ (row & 7)) << 4) + (kb & 15));
}
// Pin the accumulators around the asynchronous MMA, so the compiler neither reads nor moves them while
// the tensor cores own them.
template <int R>
__device__ __forceinline__ void wg_fence_regs(float (&d)[R]) {  // one accumulator array
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int A, int R>
__device__ __forceinline__ void wg_fence_regs(float (&d)[A][R]) {  // A of them
#pragma unroll
  for (int c = 0; c < A; ++c) wg_fence_regs(d[c]);
}
template <int N>
__device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Generic-proxy smem writes (st.shared) -> visible to the async proxy (wgmma operand reads, TMA writes).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// ---- TMA (cp.async.bulk.tensor) for the x tiles ----
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
// Arm mbarrier `bar` for one phase: this thread's arrival plus `bytes` of transactions still to land.
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
// One 3-D box of x (t from c0, channels from c1, batch c2; zeros outside the tensor) -> smem, completing
// `bytes` on `bar`.
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1, int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n"
      ::"r"(smem_u32(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_u32(bar))
      : "memory");
}

// `bytes` (a multiple of 16; both addresses 16-byte aligned) of global memory -> smem, completing on `bar`.
__device__ __forceinline__ void bulk_load(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
               ::"r"(smem_u32(dst)), "l"(__cvta_generic_to_global(src)), "r"(bytes), "r"(smem_u32(bar))
               : "memory");
}
// One 2-D box (c0 along the inner dimension, c1 along the outer) -> smem, completing its bytes on `bar`.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n"
      ::"r"(smem_u32(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar))
      : "memory");
}

// The reverse: one 3-D box smem -> global (writes outside the tensor are dropped), in this thread's bulk async-group;
// commit the group, then wait until at most N groups still read their smem (the source may be rewritten after).
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, const void* src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(smem_u32(src)), "r"(c0), "r"(c1), "r"(c2) : "memory");
}
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
template <int N>
__device__ __forceinline__ void tma_store_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}

// Prefetch the same box into L2 only (no smem, no mbarrier).
__device__ __forceinline__ void tma_prefetch_3d(const CUtensorMap* map, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.prefetch.tensor.3d.L2.global.tile [%0, {%1, %2, %3}];\n"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2) : "memory");
}

// Host: the driver's cuTensorMapEncodeTiled, fetched once through the runtime (no -lcuda).
inline PFN_cuTensorMapEncodeTiled_v12000 wg_encode_fn() {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess || found != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  if (!encode) throw std::runtime_error("TMA: the driver has no cuTensorMapEncodeTiled");
  return encode;
}


// Host: a TMA descriptor of a 3-D tensor (dims innermost first, byte strides of dims 1 and 2), box `box`,
// element strides 1, zeros outside the tensor, 128-byte L2 promotion; `swizzle` the smem layout the boxes land in.
inline CUtensorMap tma_map_3d(const void* base, CUtensorMapDataType type, const cuuint64_t (&dims)[3],
                              const cuuint64_t (&strides)[2], const cuuint32_t (&box)[3],
                              CUtensorMapSwizzle swizzle) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = wg_encode_fn();
  CUtensorMap map;
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  const CUresult r = encode(&map, type, 3, const_cast<void*>(base), dims, strides, box, elem_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("TMA: cuTensorMapEncodeTiled failed with CUresult " + std::to_string(r));
  return map;
}

// Host: a float32 (B, rows, T) tensor (contiguous) as 3-D (T, rows, B), boxes of (box_t, rows, 1): the weight-gradient
// kernels' tiles of every row over box_t steps.
inline CUtensorMap tma_map_rows_f32(const float* base, int64_t B, int64_t rows, int64_t T, int box_t,
                                    CUtensorMapSwizzle swizzle) {
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(T), static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(B)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(T) * 4, static_cast<cuuint64_t>(rows * T) * 4};
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(box_t), static_cast<cuuint32_t>(rows), 1};
  return tma_map_3d(base, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, dims, strides, box, swizzle);
}

}  // namespace
