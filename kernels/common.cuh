// common.cuh: the numerics every CUDA rung shares: CUDA_CHECK, element conversions, the depthwise + SiLU of one
// output as eager computes it, the SiLU forms (FUSED_SILU), TF32 rounding (RNE) and the 3xTF32 split, and the
// float32-only refusal. Other shared device code lives in headers named for what they hold: cp_async.cuh,
// mbarrier.cuh, tc_tile.cuh (the mma.sync tile kernel of rungs 05-07), warp_specialized.cuh (rung 08),
// wgmma.cuh (rungs 09-11), wgmma_rs.cuh (rung 12).
#pragma once
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include "fused_args.h"

// FUSED_ABLATE (a bit mask, timing experiments only: the output is then wrong) leaves a stage out of
// the kernels of rungs 08-12, so that time differences place the time inside the kernel (scripts/ablate.py): 1 = depthwise, 2 = MMAs,
// 4 = y stores, 8 = x copies; wgmma.cuh's wg_kernel (rungs 09, 11, 13 narrow) also 16 = the W_pw fill, and for fp32
// I/O 32 = the fill's rounding to TF32 (W_pw's bits stored as they are), 64 = y's DRAM writes (every tile's y into
// batch row 0: the same stores, L2-resident) and 128 = x's DRAM reads (every tile's x box from batch row 0).
#ifndef FUSED_ABLATE
#define FUSED_ABLATE 0
#endif

// Throw (pybind11 turns it into RuntimeError) when a CUDA API call fails.
#define CUDA_CHECK(expr)                                                                        \
  do {                                                                                          \
    cudaError_t err_ = (expr);                                                                  \
    if (err_ != cudaSuccess)                                                                    \
      throw std::runtime_error(std::string(#expr) + " failed: " + cudaGetErrorString(err_) +   \
                               " (" + __FILE__ + ":" + std::to_string(__LINE__) + ")");          \
  } while (0)

template <typename T>
__host__ __device__ __forceinline__ T ceil_div(T a, T b) { return (a + b - 1) / b; }

// SiLU exactly as eager PyTorch computes it in fp32 (aten's silu: x / (1 + exp(-x)), accurate expf, IEEE
// division, no fast math): activations bit-identical to eager's are what lets a TF32 GEMM reproduce eager's
// output (../DESIGN numerics: one ulp off already costs up to 8.6e-5 against allclose's 1e-4).
__device__ __forceinline__ float silu(float v) { return v / (1.0f + expf(-v)); }

// IEEE division a / b without its slow-path call, where that is exact: the division's fast path (an approximate
// reciprocal, one Newton step, the quotient and one correction by its remainder), which CUDA's div.rn returns
// unless its range check sends the operands to a subroutine. div_newton_ok bounds both operands well inside the
// normal range (b in [1, 2^96], |a| in [2^-60, 2^60]: no denormal, overflow or zero on the way); elsewhere the
// caller divides. The backward's SiLU terms 1 / (1 + e) and v / (1 + e) (e = expf(-v)) computed this way equal IEEE
// division's at every float32 v where the check passes (scripts/silu_exhaustive.cu, all 2^32 inputs). Without the
// call a kernel's code stays one basic block, which lets ptxas interleave independent divisions and keep wgmmas
// in flight across them (backward rung 8).
__device__ __forceinline__ float div_newton(float a, float b) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(b));
  r = fmaf(r, fmaf(-b, r, 1.0f), r);
  const float q = a * r;
  return fmaf(r, fmaf(-b, q, a), q);
}
__device__ __forceinline__ bool div_newton_ok(float a, float b) {
  const float m = fabsf(a);
  return b >= 1.0f && b <= 0x1p96f && m >= 0x1p-60f && m <= 0x1p60f;
}

// Eager's SiLU (silu above) bit for bit at every float32 input (scripts/silu_exhaustive.cu, all 2^32), without
// IEEE division's slow-path call: div_newton where div_newton_ok, and outside its range the same quotient by
// other exact means, picked by selects so the code stays one basic block: |v| < 2^-60 (1 + e == 2: v * 0.5, both
// correctly rounded), 1 + e > 2^96 (v < -66.5: the divisor scaled by 2^-64 into div_newton's range and the
// quotient scaled back, exact as it stays normal), 1 + e == inf (v * 0: -0, NaN at v = -inf), v > 2^60 (1 + e
// == 1: v). NaN stays NaN. About 26 instructions against the 18 of expf + division, but no call, around which
// ptxas serializes wgmmas left in flight (rung 12 computes its SiLU under the previous chunk's wgmmas).
// silu_nocall_den: the same from den = 1 + expf(-v) already computed (backward rung 9 also needs 1 / den).
__device__ __forceinline__ float silu_nocall_den(float v, float den) {
  const bool big = den > 0x1p96f;
  float q = div_newton(v, big ? den * 0x1p-64f : den);
  q = big ? q * 0x1p-64f : q;
  q = fabsf(v) < 0x1p-60f ? v * 0.5f : q;
  q = v > 0x1p60f ? v : q;
  return den == __int_as_float(0x7f800000) ? v * 0.0f : q;
}
__device__ __forceinline__ float silu_nocall(float v) { return silu_nocall_den(v, 1.0f + expf(-v)); }

// Element type <-> float, so one kernel template serves float32, bfloat16 and float16 I/O.
__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }
template <typename T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16(v); }
template <> __device__ __forceinline__ __half from_float<__half>(float v) { return __float2half(v); }

// Depthwise dilated conv + bias + SiLU for one (channel row, output time t), reading x from global
// memory with zero padding. `xrow` points at x[b, ic, 0].
template <typename T>
__device__ __forceinline__ float dw_silu_at(const T* __restrict__ xrow, const float* __restrict__ wrow,
                                            float bias, int64_t t, int64_t T_in, int K, int dilation,
                                            int padding) {
  float acc = bias;
  int64_t src = t - padding;
  for (int k = 0; k < K; ++k, src += dilation)
    if (src >= 0 && src < T_in) acc = fmaf(wrow[k], to_float(xrow[src]), acc);
  return silu(acc);
}


// Host: the usual "float32 only" refusal shared by the fp32 rungs.
inline const char* require_float32(const FusedArgs& a) {
  return a.dtype == FUSED_F32 ? nullptr : "this variant takes float32 input only";
}

// fp32 -> tf32 with round-to-nearest-even (low 13 bits zero), as cuDNN rounds both GEMM operands when
// torch.backends.cudnn.allow_tf32 is on (ties-away, cvt.rna, differs from eager by up to 8.6e-5 at the
// headline; RNE by 6e-7). Integer form (any arch): add 0xfff plus the kept lsb, clear the low bits; a NaN comes
// back a NaN with its quiet bit set, so that it stays one in the 19 bits the tensor cores read. (Before
// 2026-12-04 a signed max stood in for that test: it kept CUDA's canonical NaN, but turned the NaNs whose payload
// lay only in the dropped bits into infinities and wrapped negative NaNs at 0xfffff000 and above, all-ones
// included, to +0: 12288 inputs, found by scripts/silu_exhaustive.cu.)
__device__ __forceinline__ uint32_t tc_tf32_int(float v) {
  const uint32_t u = __float_as_uint(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return u | 0x00400000u;
  return (u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u;
}
// The same rounding; from sm_90 on in one instruction (cvt.rn.tf32.f32: F2FP.TF32.F32.PACK_B), whose bits
// scripts/silu_exhaustive.cu compares with tc_tf32_int's at every float32 input (NaN against NaN).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define TC_TF32_ONE_INSTRUCTION 1
#else
#define TC_TF32_ONE_INSTRUCTION 0
#endif
__device__ __forceinline__ uint32_t tc_tf32(float v) {
#if TC_TF32_ONE_INSTRUCTION
  uint32_t r;
  asm("cvt.rn.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
  return r;
#else
  return tc_tf32_int(v);
#endif
}
// FUSED_TF32_RNA=1 (prepared 2026-12-07, not yet run on a GPU): the forward TF32 GEMM's operands (W_pw and the
// activations, rungs 09, 12, 13: tc_tf32_gemm below, silu_rounded<13>) rounded to nearest with ties away from zero, as
// cvt.rna does (in integers, below); the 3xTF32 split of the activations and the backward's kernels keep RNE. Why:
// eager's 1x1 conv does not round as RNE at every shape. At B 64, C 128, T 2048 ModelNew's probe found the TF32 kernel
// 1.1e-4 from eager (bound 1.7e-5; logs/2026-12-07_81730f9_strict_fallback_tests_shapes_h100.log) and sent the shape to
// the general path (237 us on an H100). A float64 model of the GEMM on the CPU (both operands rounded, against RNE's)
// gives 1.05e-4 there for ties away, 1.2e-3 for truncation and 2.9e-4 for W alone rounded (8.6e-5 for ties away at the
// headline, the figure this comment gave before for cvt.rna against eager;
// logs/2026-12-07_724e8ac_pw_rounding_model_cpu.log): ties away is the likeliest rounding of cuDNN's kernel at that
// shape. routing.choose_route probes this build where the RNE build's probe fails; the GPU's own reading is
// scripts/pw_forward_numerics.py. docs/ladder.md, "Runs of 2026-12-07, noon".
#ifndef FUSED_TF32_RNA
#define FUSED_TF32_RNA 0
#endif
// Ties away in integers (any arch; NaN as tc_tf32_int): add half the dropped ulp, clear the low bits. Not cvt.rna:
// on sm_90 that is no one instruction either (ptxas emits FSETP, IADD, LOP3), and it clears a NaN's low payload bits,
// which turns a NaN whose payload lies only there into an infinity.
__device__ __forceinline__ uint32_t tc_tf32_rna_int(float v) {
  const uint32_t u = __float_as_uint(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return u | 0x00400000u;
  return (u + 0x1000u) & 0xffffe000u;
}
// The forward GEMM's operand rounding.
__device__ __forceinline__ uint32_t tc_tf32_gemm(float v) {
  if constexpr (FUSED_TF32_RNA != 0) return tc_tf32_rna_int(v);
  else return tc_tf32(v);
}
// 3xTF32 split: v = big + small + O(2^-22 |v|); v - big is exact in fp32.
__device__ __forceinline__ void tc_split_tf32(float v, uint32_t& big, uint32_t& small) {
  big = tc_tf32(v);
  small = tc_tf32(v - __uint_as_float(big));
}

// SiLU with the fast exp and division (rel. error ~1e-6: fine under TF32 or bf16 rounding).
// Five instructions: FMUL, MUFU.EX2, FADD, MUFU.RCP, FMUL (the .ftz forms skip the denormal range
// fix-ups __expf carries). Limits: v -> -inf gives v * rcp(inf) = -0, v -> +inf gives v.
__device__ __forceinline__ float silu_fast(float v) {
  float e, r;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(e) : "f"(v * -1.4426950408889634f));
  asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(1.0f + e));
  return v * r;
}
// SiLU with one MUFU op instead of two: v sigmoid(v) = h + h tanh(h), h = v / 2 (tanh.approx: max
// relative error about 2^-11; the MUFU pipe issues 16 per clock per SM, a quarter of the FMA pipe).
__device__ __forceinline__ float silu_tanh(float v) {
  const float h = 0.5f * v;
  float t;
  asm("tanh.approx.f32 %0, %1;\n" : "=f"(t) : "f"(h));
  return fmaf(h, t, h);
}
// The SiLU of the TF32 and 16-bit rungs: FUSED_SILU=0 (default) eager's formula (silu above), 1 silu_fast,
// 2 silu_tanh. The approximations are knobs for timing experiments only: with them the output leaves eager's
// (tanh: max |diff| ~9e-4 at the headline, failing allclose 1e-4), so no default and no export uses them.
#ifndef FUSED_SILU
#define FUSED_SILU 0
#endif
// Eager's SiLU in the tensor-core rungs: FUSED_SILU_NOCALL=1 as silu_nocall (the same bits, no call), 0 as silu.
#ifndef FUSED_SILU_NOCALL
#define FUSED_SILU_NOCALL 0
#endif
__device__ __forceinline__ float silu_eager(float v) {
  if constexpr (FUSED_SILU_NOCALL != 0) return silu_nocall(v);
  else return silu(v);
}
__device__ __forceinline__ float silu_act(float v) {
  if constexpr (FUSED_SILU == 2) return silu_tanh(v);
  else if constexpr (FUSED_SILU == 1) return silu_fast(v);
  else return silu_eager(v);
}
// fp32 -> tf32 (RNE, as tc_tf32) kept as a float: the activations as a TF32 GEMM operand.
__device__ __forceinline__ float tc_round_tf32(float v) { return __uint_as_float(tc_tf32(v)); }
// The same by the forward GEMM's rounding (tc_tf32_gemm: RNE, or ties away under FUSED_TF32_RNA).
__device__ __forceinline__ float tc_round_tf32_gemm(float v) { return __uint_as_float(tc_tf32_gemm(v)); }
// The same for 16 bytes of operands (the weight-gradient kernels' staged chunks).
__device__ __forceinline__ float4 tc_round_tf32(float4 v) {
  return make_float4(tc_round_tf32(v.x), tc_round_tf32(v.y), tc_round_tf32(v.z), tc_round_tf32(v.w));
}

// Eager's SiLU rounded to the GEMM's operand type, bit for bit, at about half the instructions. The TF32 and
// bf16 rungs use an activation only rounded (13 or 16 low bits dropped), so they need eager's rounded value,
// not eager's fp32 one. silu_fast (5 instructions) is within 17 ulp of silu at |v| < 16 (4 at |v| < 1; expf +
// IEEE division: 18 instructions, plus 6 for tc_tf32's rounding; SASS in logs/2026-12-02_a0642d6_silu_sass.txt,
// distances in logs/2026-12-02_0618161_guarded_silu_batched.log); rounding f = silu_fast(v) gives eager's rounded
// value unless silu(v) and f lie on different sides of a rounding midpoint, which needs f close to one. So: f is
// kept where |v| < 16 and its dropped bits are more than FUSED_SILU_GUARD ulp from the midpoint (4 instructions
// with the |v| test); there no tie is possible either, so ties-away rounding (2 integer instructions: f is
// finite) equals RNE of silu(v). Elsewhere (~33/8192 of uniform dropped bits; |v| >= 16, NaN, inf) it
// evaluates eager's formula. Proved by exhaustion, not by the bound: scripts/silu_exhaustive.cu runs all 2^32
// inputs against tc_tf32(silu(v)) and the bf16 rounding of silu(v) (a GPU test, which also shows that a guard of
// 0 ulp fails). FUSED_SILU_GUARD=-1: eager's formula at every element (the form measured before the guard).
// Removed: FUSED_SILU_GUARD_FORM=1 (the dropped bits' test as one shifted add and one compare, one refusal flag a
// batch: 8-10 fewer instructions per 4 outputs on rung 13's K 5 loop's common path, but a longer loop body) ran slower on an
// H100: tree time over the knob's 0.990 at the headline, 0.987 at B 33, 0.992 at K 3, 0.995 at B 64 T 4096, 0.942 at
// K 9 d 1, same bits
// (logs/2026-12-07_e24f214_targets_guard_form_h100.log; the code: e24f214).
#ifndef FUSED_SILU_GUARD
#define FUSED_SILU_GUARD 16
#endif
template <int kDropped>  // 13: tf32, 16: bf16
__device__ __forceinline__ bool silu_guard_ok(float v, float f) {
  constexpr uint32_t kHalf = 1u << (kDropped - 1), kMask = (1u << kDropped) - 1u;
  constexpr uint32_t kGuard = FUSED_SILU_GUARD < 0 ? 0u : FUSED_SILU_GUARD;
  return fabsf(v) < 16.0f && ((__float_as_uint(f) + kHalf + kGuard) & kMask) > 2u * kGuard;
}
// v[i] <- silu_act(v[i]) rounded (RNE) to tf32 (kDropped = 13: tc_round_tf32's value) or to bf16 (16: the value
// of __float2bfloat16_rn, kept as a float), bit for bit, N values at a time: the fast form and the guard for
// all N without a branch (a branch per value serialized them: rung 12 measured 13% slower that way), then
// eager's formula for the refused ones, behind one rarely taken branch.
template <int kDropped, int N>
__device__ __forceinline__ void silu_rounded(float (&v)[N]) {
  auto exact = [](float x) {
    if constexpr (kDropped == 13) return tc_round_tf32_gemm(silu_act(x));
    else return __bfloat162float(__float2bfloat16_rn(silu_act(x)));
  };
  if constexpr (FUSED_SILU != 0 || FUSED_SILU_GUARD < 0) {
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = exact(v[i]);
  } else {
    static_assert(N <= 32, "one refusal bit per value");
    constexpr uint32_t kHalf = 1u << (kDropped - 1), kKeep = ~((1u << kDropped) - 1u);
    float r[N];
    uint32_t refused = 0;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const float f = silu_fast(v[i]);
      refused |= static_cast<uint32_t>(!silu_guard_ok<kDropped>(v[i], f)) << i;
      // tf32 on sm_90: tc_tf32's one instruction for the ties-away form's two (ba760c1's knob); either is right
      // here for RNE and for ties away (FUSED_TF32_RNA, which takes the two: a kept f is finite and no tie)
      if constexpr (kDropped == 13 && TC_TF32_ONE_INSTRUCTION && FUSED_TF32_RNA == 0)
        r[i] = __uint_as_float(tc_tf32(f));
      else r[i] = __uint_as_float((__float_as_uint(f) + kHalf) & kKeep);
    }
    if (__builtin_expect(refused != 0, 0)) {
#pragma unroll
      for (int i = 0; i < N; ++i)
        if ((refused >> i) & 1u) r[i] = exact(v[i]);
    }
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = r[i];
  }
}
