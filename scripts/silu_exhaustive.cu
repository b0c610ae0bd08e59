// silu_exhaustive.cu: kernels/common.cuh's guarded SiLU (silu_rounded<13> for tf32, <16> for bf16, in batches of
// 4 as the rungs call it) against eager's SiLU rounded the same way (tc_tf32(silu(v)), __float2bfloat16_rn(silu(v)))
// at every one of the 2^32 float32 inputs, bit for bit; and the backward's SiLU terms 1 / (1 + e), v / (1 + e) by
// div_newton (where div_newton_ok) against IEEE division, bit for bit; and silu_nocall against silu in float32, bit
// for bit (NaN against NaN); and tc_tf32 (cvt.rn.tf32.f32 on sm_90) against its integer form tc_tf32_int, bit for bit
// (NaN against NaN). With -DFUSED_TF32_RNA=1 silu_rounded<13> is compared with the ties-away rounding of silu(v)
// (tc_tf32_gemm).
// Reports the mismatches (the guard is wrong if there is one: exit status 1), how often the guard falls back to
// eager's formula per band of |v|, and the largest distance in ulp between silu_fast and silu per band (what
// FUSED_SILU_GUARD is weighed against: the exhaustive comparison, not this distance, decides). Built with the JIT's device flags (-O3, no fast math), as tests/test_gpu.py does:
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I kernels scripts/silu_exhaustive.cu -o /tmp/silu_ex
//   /tmp/silu_ex
#include "../kernels/common.cuh"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "standalone_check.cuh"  // CK

constexpr int kBands = 6;  // |v| in [0, 1), [1, 2), [2, 4), [4, 8), [8, 16), the rest (inf, NaN included)
struct Tally {
  unsigned long long mismatch_tf32, mismatch_bf16, inputs[kBands], fallback_tf32[kBands], fallback_bf16[kBands];
  unsigned int max_ulp[kBands];
  unsigned int first_bad_tf32, first_bad_bf16;  // an input that mismatched (valid when the count is > 0)
  // the backward's SiLU terms by div_newton where div_newton_ok, against IEEE division (backward rung 8)
  unsigned long long mismatch_div, div_fallback;
  unsigned int first_bad_div;
  unsigned long long mismatch_nocall;  // silu_nocall against silu (eager's formula), float32 bits
  unsigned int first_bad_nocall;
  unsigned long long mismatch_cvt;  // tc_tf32 (cvt.rn.tf32.f32 on sm_90) against tc_tf32_int, bits (NaN against NaN)
  unsigned int first_bad_cvt;
};

__device__ int band_of(float v) {
  const float a = fabsf(v);
  if (!(a < 16.0f)) return 5;
  return a < 1.0f ? 0 : a < 2.0f ? 1 : a < 4.0f ? 2 : a < 8.0f ? 3 : 4;
}

__global__ void exhaust(Tally* t) {
  unsigned long long mt = 0, mb = 0, md = 0, fd = 0, mn = 0, mc = 0, in[kBands] = {}, ft[kBands] = {}, fb[kBands] = {};
  unsigned int mu[kBands] = {};
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = 4 * (blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x);
       i < (1ull << 32); i += 4 * stride) {  // four consecutive inputs per batch
    float vt[4], vb[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) vt[j] = vb[j] = __uint_as_float(static_cast<uint32_t>(i + j));
    silu_rounded<13>(vt);
    silu_rounded<16>(vb);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const uint32_t bits = static_cast<uint32_t>(i + j);
      const float v = __uint_as_float(bits);
      const int b = band_of(v);
      ++in[b];
      const float ref = silu(v), f = silu_fast(v);
      if (__float_as_uint(vt[j]) != tc_tf32_gemm(ref)) {
        ++mt;
        t->first_bad_tf32 = bits;
      }
      if (__float_as_uint(vb[j]) != static_cast<uint32_t>(__bfloat16_as_ushort(__float2bfloat16_rn(ref))) << 16) {
        ++mb;
        t->first_bad_bf16 = bits;
      }
      const float nc = silu_nocall(v);
      if (__float_as_uint(nc) != __float_as_uint(ref) && !(isnan(nc) && isnan(ref))) {
        ++mn;
        t->first_bad_nocall = bits;
      }
      const uint32_t rc = tc_tf32(v), ri = tc_tf32_int(v);
      if (rc != ri && !(isnan(__uint_as_float(rc)) && isnan(__uint_as_float(ri)))) {
        ++mc;
        t->first_bad_cvt = bits;
      }
      const float den = 1.0f + expf(-v);
      if (div_newton_ok(v, den)) {
        if (__float_as_uint(div_newton(1.0f, den)) != __float_as_uint(1.0f / den) ||
            __float_as_uint(div_newton(v, den)) != __float_as_uint(v / den)) {
          ++md;
          t->first_bad_div = bits;
        }
      } else {
        ++fd;
      }
      ft[b] += !silu_guard_ok<13>(v, f);
      fb[b] += !silu_guard_ok<16>(v, f);
      if (b < 5) {  // finite: the distance between the two bit patterns (same sign: silu keeps v's sign or is 0)
        const int d = static_cast<int>(__float_as_uint(f) & 0x7fffffffu) -
                      static_cast<int>(__float_as_uint(ref) & 0x7fffffffu);
        mu[b] = max(mu[b], static_cast<unsigned int>(abs(d)));
      }
    }
  }
  atomicAdd(&t->mismatch_tf32, mt);
  atomicAdd(&t->mismatch_bf16, mb);
  atomicAdd(&t->mismatch_div, md);
  atomicAdd(&t->div_fallback, fd);
  atomicAdd(&t->mismatch_nocall, mn);
  atomicAdd(&t->mismatch_cvt, mc);
  for (int b = 0; b < kBands; ++b) {
    atomicAdd(&t->inputs[b], in[b]);
    atomicAdd(&t->fallback_tf32[b], ft[b]);
    atomicAdd(&t->fallback_bf16[b], fb[b]);
    atomicMax(&t->max_ulp[b], mu[b]);
  }
}

static float host_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

int main() {
  Tally* d;
  CK(cudaMalloc(&d, sizeof(Tally)));
  CK(cudaMemset(d, 0, sizeof(Tally)));
  exhaust<<<132 * 16, 256>>>(d);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  Tally t;
  CK(cudaMemcpy(&t, d, sizeof(Tally), cudaMemcpyDeviceToHost));
  const char* names[kBands] = {"[0,1)", "[1,2)", "[2,4)", "[4,8)", "[8,16)", ">=16,inf,nan"};
  std::printf("FUSED_SILU=%d FUSED_SILU_GUARD=%d FUSED_TF32_RNA=%d: all 2^32 float32 inputs\n", FUSED_SILU,
              FUSED_SILU_GUARD, FUSED_TF32_RNA);
  std::printf("%-14s %12s %16s %16s %22s\n", "|v| band", "inputs", "fallback tf32", "fallback bf16",
              "max ulp |fast - silu|");
  for (int b = 0; b < kBands; ++b)
    std::printf("%-14s %12llu %15.5f%% %15.5f%% %22s\n", names[b], t.inputs[b],
                100.0 * t.fallback_tf32[b] / t.inputs[b], 100.0 * t.fallback_bf16[b] / t.inputs[b],
                b < 5 ? std::to_string(t.max_ulp[b]).c_str() : "-");
  std::printf("mismatches: tf32 %llu, bf16 %llu\n", t.mismatch_tf32, t.mismatch_bf16);
  std::printf("backward SiLU terms 1/(1+e), v/(1+e) by div_newton: mismatches %llu, inputs left to IEEE division %llu\n",
              t.mismatch_div, t.div_fallback);
  std::printf("silu_nocall against silu (float32 bits): mismatches %llu\n", t.mismatch_nocall);
  std::printf("tc_tf32 (cvt.rn.tf32.f32) against tc_tf32_int (bits; NaN against NaN): mismatches %llu\n", t.mismatch_cvt);
  const auto example = [](const char* kind, uint32_t bits) {
    std::printf("  e.g. %s at v = %.9g (0x%08x)\n", kind, host_float(bits), bits);
  };
  if (t.mismatch_tf32) example("tf32", t.first_bad_tf32);
  if (t.mismatch_bf16) example("bf16", t.first_bad_bf16);
  if (t.mismatch_div) example("div_newton", t.first_bad_div);
  if (t.mismatch_nocall) example("silu_nocall", t.first_bad_nocall);
  if (t.mismatch_cvt) example("tc_tf32", t.first_bad_cvt);
  const bool bad = t.mismatch_tf32 || t.mismatch_bf16 || t.mismatch_div || t.mismatch_nocall || t.mismatch_cvt;
  std::printf("%s\n", bad ? "FAIL" : "PASS: bit for bit at every input");
  return bad ? 1 : 0;
}
