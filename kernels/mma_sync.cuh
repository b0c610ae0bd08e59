// mma_sync.cuh: the warp-level TF32 tensor-core instruction (mma.sync m16n8k8, sm_80+) and its fragment layout,
// shared by the mma.sync forward rungs (tc_tile.cuh, rungs 05-07) and backward rung 5 (dw_silu_backward_tc.cu).
#pragma once
#include <cstdint>

// D = A * B + D, one m16n8k8 TF32 tile, fp32 accumulation. g = lane / 4, t = lane % 4:
//   A (16x8, row): a0 (g, t)  a1 (g+8, t)  a2 (g, t+4)  a3 (g+8, t+4)
//   B (8x8, col):  b0 (k=t, n=g)  b1 (k=t+4, n=g)
//   C/D (16x8):    c0 (g, 2t)  c1 (g, 2t+1)  c2 (g+8, 2t)  c3 (g+8, 2t+1)
__device__ __forceinline__ void tc_mma_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
