// pw_wgrad_sweep.cu: backward rung 6's forms (KC steps per chunk, kernels/pw_weight_grad.cu; the cp.async forms of
// 2aaceb6..9ae9e6b and their logs are in git history) timed against each other and against a read of the same
// bytes, at one shape, in one run; each form's dW_pw and
// db_pw (its partials summed on the host in float64) checked against a float64 reference on the GPU.
// Timing: CUDA events around each launch, the L2 flushed before it (a 256 MB memset), median and p10-p90 of --reps.
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -DFUSED_SM90A=1 -I kernels scripts/pw_wgrad_sweep.cu -o /tmp/pw_sweep
//   /tmp/pw_sweep [B C C_out T] [reps]      (default: the headline, 16 128 128 2048, 50 reps)
#include "../kernels/pw_weight_grad.cu"
#include "../kernels/pw_weight_grad_wgmma.cu"  // pw_wgrad_tma_fits / _blocks, which pw_weight_grad.cu's pw_wgrad_blocks asks

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "standalone_check.cuh"  // CK
#include "standalone_timer.cuh"  // time_calls, flush_l2

// float64 reference: one thread per (o, c) (c == C: db_pw[o])
__global__ void reference(const float* act, const float* gy, double* out, int64_t B, int C, int C_out, int T) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j >= static_cast<int64_t>(C_out) * (C + 1)) return;
  const int o = static_cast<int>(j / (C + 1)), c = static_cast<int>(j % (C + 1));
  double s = 0.0;
  for (int64_t b = 0; b < B; ++b) {
    const float* gr = gy + (b * C_out + o) * T;
    const float* ar = act + (b * C + (c < C ? c : 0)) * T;
    for (int t = 0; t < T; ++t) s += static_cast<double>(gr[t]) * (c < C ? static_cast<double>(ar[t]) : 1.0);
  }
  out[j] = s;
}

// the read floor: every float4 of act and gy read once (a grid-stride sum, written where nobody looks)
__global__ void read_all(const float4* a, const float4* b, int64_t n4, float* sink) {
  float s = 0.0f;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const float4 p = a[i], q = b[i];
    s += (p.x + p.y + p.z + p.w) + (q.x + q.y + q.z + q.w);
  }
  if (s == 1234.5f) *sink = s;
}

struct Form {
  const char* name;
  int KC;
  cudaError_t (*launch)(const PwWgradArgs&, int64_t, cudaStream_t);
};

int main(int argc, char** argv) {
  const int64_t B = argc > 4 ? std::atoll(argv[1]) : 16;
  const int C = argc > 4 ? std::atoi(argv[2]) : 128, C_out = argc > 4 ? std::atoi(argv[3]) : 128;
  const int T = argc > 4 ? std::atoi(argv[4]) : 2048;
  const int reps = argc > 5 ? std::atoi(argv[5]) : (argc == 2 ? std::atoi(argv[1]) : 50);
  const int64_t na = B * C * T, ng = B * C_out * T;
  std::vector<float> ha(na), hg(ng);
  std::mt19937 rng(7);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (auto& v : ha) v = nd(rng) * 0.5f;
  for (auto& v : hg) v = nd(rng);
  float *act, *gy, *pw, *pb, *sink;
  double* ref;
  char* flush;
  const size_t flush_bytes = 256u << 20;
  CK(cudaMalloc(&act, na * 4));
  CK(cudaMalloc(&gy, ng * 4));
  CK(cudaMalloc(&pw, 132ll * 128 * 128 * 4 * 2));
  CK(cudaMalloc(&pb, 132ll * 128 * 4 * 2));
  CK(cudaMalloc(&ref, static_cast<size_t>(C_out) * (C + 1) * 8));
  CK(cudaMalloc(&flush, flush_bytes));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMemcpy(act, ha.data(), na * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(gy, hg.data(), ng * 4, cudaMemcpyHostToDevice));
  const int64_t nref = static_cast<int64_t>(C_out) * (C + 1);
  reference<<<static_cast<unsigned>((nref + 127) / 128), 128>>>(act, gy, ref, B, C, C_out, T);
  CK(cudaGetLastError());
  std::vector<double> href(nref);
  CK(cudaMemcpy(href.data(), ref, nref * 8, cudaMemcpyDeviceToHost));

  PwWgradArgs a{};
  a.act = act; a.gy = gy; a.partial_w = pw; a.partial_b = pb; a.B = B; a.C = C; a.C_out = C_out; a.T = T;
  if (!pw_wgrad_fits(a)) {
    std::printf("shape outside pw_wgrad_fits\n");
    return 1;
  }
  const Form forms[] = {{"registers KC=32 (pw_wgrad)", 32, pwwg::launch_ldg<32>},
                        {"registers KC=64", 64, pwwg::launch_ldg<64>}};
  // (3 untimed calls before the reps; bench's L2 flush before each)
  auto time_it = [&](auto&& fn) { return time_calls(reps, 3, [&](int r) { flush_l2(flush, flush_bytes, r); }, fn); };
  std::printf("shape B=%lld C=%d C_out=%d T=%d, %d reps, L2 flushed; bytes read %.1f MB\n",
              static_cast<long long>(B), C, C_out, T, reps, (na + ng) * 4 / 1e6);
  const auto rd = time_it([&] { read_all<<<132 * 8, 512>>>(reinterpret_cast<const float4*>(act),
                                                             reinterpret_cast<const float4*>(gy), na / 4, sink); });
  std::printf("%-26s median %7.2f us (p10 %.2f, p90 %.2f)  [act and gy read once; C == C_out only]\n", "read floor",
              rd.med, rd.p10, rd.p90);
  for (const Form& f : forms) {
    const int64_t G = blocks_per_sm_capped(a.B, a.T, f.KC);  // (the grid pw_wgrad_blocks gives the ldg form)
    const auto t = time_it([&] { CK(f.launch(a, G, 0)); });
    std::vector<float> hw(G * C_out * C), hb(G * C_out);
    CK(cudaMemcpy(hw.data(), pw, hw.size() * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hb.data(), pb, hb.size() * 4, cudaMemcpyDeviceToHost));
    double num = 0, den = 0, numb = 0, denb = 0;
    for (int o = 0; o < C_out; ++o) {
      for (int c = 0; c < C; ++c) {
        double s = 0;
        for (int64_t g = 0; g < G; ++g) s += hw[(g * C_out + o) * C + c];
        const double r = href[o * (C + 1) + c];
        num += (s - r) * (s - r);
        den += r * r;
      }
      double s = 0;
      for (int64_t g = 0; g < G; ++g) s += hb[o * G + g];
      const double r = href[o * (C + 1) + C];
      numb += (s - r) * (s - r);
      denb += r * r;
    }
    std::printf("%-26s median %7.2f us (p10 %.2f, p90 %.2f)  G=%lld  rel.err dW_pw %.2e db_pw %.2e\n", f.name, t.med,
                t.p10, t.p90, static_cast<long long>(G), std::sqrt(num / den), std::sqrt(numb / denb));
  }
  return 0;
}
