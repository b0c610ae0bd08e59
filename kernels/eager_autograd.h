// eager_autograd.h: y = pw(silu(dw(x))) as a C++ autograd function: the forward is an extension's own (a fused
// rung's kernel, or the general path), the backward is eager's. Included by launcher.cpp (every variant) and
// general.cpp (the general path), so training and KernelBench's timing loop (which runs with gradients on) pay
// one C++ call per forward instead of a Python autograd.Function (~50 us of host time per call on the H200
// host, more than a small shape's GPU time: results/logs/2026-12-01_0b02739_export_timing.log).
//
// The backward is what autograd runs for Model, op for op (fusedkit.routing.eager_backward is its Python twin,
// used by the torch.library operator): the activations recomputed from x (x is C_in x T, act as large, so
// saving x instead of act costs one depthwise + SiLU in the backward and no memory), then PyTorch's
// convolution_backward of the 1x1 conv, silu_backward, convolution_backward of the depthwise. So gradients
// are eager's, bit for bit, under the same TF32 switch.
//
// Builds that define DWSEP_BACKWARD_KERNEL (every CUDA variant and the general path) link dw_silu_backward.cu:
// there, for float32 CUDA input, backward mode 1 (ModelNew's default where mode 6 does not run) runs cuDNN's data
// gradient of the 1x1 conv
// (ga, eager's call), then that kernel for dx, the activations, the depthwise's weight and bias gradients and the
// 1x1 conv's bias gradient (rungs 3 and 4 of the backward ladder), then cuDNN's weight gradient of the 1x1 conv
// from the kernel's activations: no separate recompute, silu_backward, depthwise backward or bias reductions. Gradients
// within float32 summation order of eager's (dx and dW_pw bit for bit where cuDNN picks the same algorithms).
// Mode 2 (backward="fused", chosen by the caller only where torch.backends.cudnn.allow_tf32 is on) runs rung 5
// instead of cuDNN's data gradient + that kernel where rung 5 takes the shape (dw_silu_backward_tc.cu: ga = W_pw^T
// dy on TF32 tensor cores inside the kernel; dx and the depthwise gradients within TF32 summation order of eager's;
// measured slower than mode 1, so not the default), else mode 1.
// Mode 3 (backward="wgrad_kernel") is mode 1 with, where allow_tf32 is on, cuDNN's weight gradient is a TF32 GEMM
// (cudnn_pw_grad_is_tf32) and the backward's weight-gradient kernel takes the shape (C, C_out in [kTcMinC, 128],
// T_out % 4 == 0), the 1x1 conv's weight and bias gradients from that kernel (dW_pw = dy act^T on TF32 tensor cores,
// db_pw from the same staged dy: rung 7, pw_weight_grad_wgmma.cu, TMA + wgmma, in sm_90a builds on sm_90; rung 6,
// pw_weight_grad.cu, mma.sync, elsewhere) instead of cuDNN's weight gradient and the depthwise kernel's dy sums, one
// finishing launch summing every kernel's partials. Measured no faster than mode 1 (rung 7 reads its 33.5 MB slower
// than cuDNN's kernel does; rung 6 slower still), so not the default.
// Mode 4 (backward="wgrad_fused") is mode 3 with, where it takes the shape (an sm_90 GPU, an sm_90a build, K <= 5,
// dx or the depthwise's gradients wanted), backward rung 8 instead of rungs 4 and 7 (dw_silu_wgrad_wgmma.cu: rung 4's
// job and the weight gradient in one pass, the activations never written to memory). Measured slower than mode 1.
// Mode 5 (backward="split"), where allow_tf32 is on, both of cuDNN's 1x1-conv gradients are TF32 GEMMs at the shape
// (kTcMinC <= C, C_out; cudnn_pw_grad_is_tf32), the 1x1 conv's weight gradient is wanted and backward rung 9 takes the
// shape (an sm_90 GPU, an sm_90a build, rung 4's vector shapes with K <= 5, C, C_out <= 128): rung 9
// (dgrad_wgrad_wgmma.cu: from x and dy, gv = (W_pw^T dy) silu'(v), dW_pw and db_pw on TF32 tensor cores, no ga and no
// act in memory), then rung 4's gv form (dx, dW_dw, db_dw from gv and x), then one backward_finish; elsewhere mode 1.
// Measured slower than mode 1 (74.1 against 63.9 us at the headline, logs/2026-12-03_ce1a992_split_verify_bench.log).
// Mode 6 (backward="dgrad_kernel") is mode 1 with, where allow_tf32 is on, cuDNN's data gradient is a TF32 GEMM at the
// shape (cudnn_pw_grad_is_tf32) and backward rung 10 takes it (pw_dgrad_kernel_runs: an sm_90 GPU, an sm_90a build,
// C, C_out <= 128, T % 4 == 0), rung 10 (pw_data_grad_wgmma.cu) for the data gradient and db_pw, so that rung 4
// reads no gy; elsewhere mode 1. ModelNew's default since 2026-12-04: with rung 10's PWDG_TMA_LATE=2 the headline's
// backward took 61.8 against mode 1's 64.4 us (logs/2026-12-04_6f83237_op_backward_tma_late_bench_sanitize.log;
// earlier forms no faster: 65.18 against 64.91, logs/2026-12-04_132054f_rung10_ab_tests_sanitize_backward.log).
// Where no deterministic algorithms are asked for, without backward_finish (dgrad_inline_backward, below): 58.4-58.5
// against mode 1's 64.5-64.9 us (logs/2026-12-04_d3d6ebb_inline_sums_ab_timeline_bench_train.log,
// 2026-12-04_c7bcfea_inline_sums_fwd_bwd_ab_bench.log); with rung 4 launched as rung 10's blocks exit
// (PWDG_EARLY_TRIGGER=0) 57.3 us, the training step 79.8 against eager's 244.2
// (logs/2026-12-04_a009e03_no_early_trigger_ab_bench_train.log).
// Mode 7 (backward="streams"), where the 1x1 conv's weight gradient is wanted: mode 1's kernels on two streams, the
// data-gradient chain beside act's recompute and cuDNN's weight gradient (streams_backward); elsewhere mode 1.
// Measured slower than mode 1 at the headline (76.1 against 67.6 us), faster at B = 8, C 96 -> 200, T = 1001 (63.4
// against 67.4; logs/2026-12-04_58de510_pipelined_streams_bench.log): an A/B option.
// Mode 0 keeps eager's ops throughout (and is what the exported file runs).
#pragma once
#include <torch/extension.h>

#include <array>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#ifdef DWSEP_BACKWARD_KERNEL
#include <c10/core/Event.h>
#include <c10/cuda/CUDAGraphsC10Utils.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include "dw_backward_args.h"
#include "pw_wgrad_args.h"
#endif

namespace dwsep {

// Whether dw_silu_backward.cu computes the depthwise half of the backward for these inputs.
inline bool dw_kernel_runs(const at::Tensor& x, const at::Tensor& ga, const at::Tensor& w_dw, const at::Tensor& b_dw,
                           int64_t dilation, int64_t padding) {
#ifdef DWSEP_BACKWARD_KERNEL
  auto f32 = [](const at::Tensor& t) { return !t.defined() || t.scalar_type() == at::kFloat; };
  const int64_t K = w_dw.size(2), T_out = x.size(2) + 2 * padding - dilation * (K - 1);
  return x.is_cuda() && f32(x) && f32(ga) && f32(w_dw) && f32(b_dw) && K <= INT32_MAX && dilation <= INT32_MAX &&
         padding <= INT32_MAX && dw_backward_fits(x.size(0), x.size(1), x.size(2), T_out, static_cast<int>(K),
                                                  static_cast<int>(dilation), static_cast<int>(padding));
#else
  (void)x; (void)ga; (void)w_dw; (void)b_dw; (void)dilation; (void)padding;
  return false;
#endif
}

// What dw_silu_backward.cu returns: each entry undefined where it was not asked for.
struct DwKernelGrads {
  at::Tensor dx, dw_dw, db_dw, act, db_pw;
  at::Tensor partial;  // the kernel's partial sums (C * (K + 1), n), where the caller finishes them (finish false)
  int64_t n = 0;
};

#ifdef DWSEP_BACKWARD_KERNEL
// The depthwise kernels' args from contiguous x (B, C, T), w_dw (C, 1, K) and b_dw (or undefined): the inputs, the
// shape and the conv's parameters; the caller sets ga, gy, w_pw, T_out, C_out and the outputs.
inline DwBackwardArgs dw_args(const at::Tensor& xc, const at::Tensor& w, const at::Tensor& bc, int64_t dilation,
                              int64_t padding) {
  DwBackwardArgs a{};
  a.x = xc.data_ptr<float>();
  a.w_dw = w.data_ptr<float>();
  a.b_dw = bc.defined() ? bc.data_ptr<float>() : nullptr;
  a.B = xc.size(0); a.C = xc.size(1); a.T = xc.size(2);
  a.K = static_cast<int>(w.size(2)); a.dilation = static_cast<int>(dilation); a.padding = static_cast<int>(padding);
  return a;
}
#endif

// From ga = dL/d act by dw_silu_backward.cu (see dw_kernel_runs), or, where `w_pw` is defined, from gy alone by
// dw_silu_backward_tc.cu (rung 5: ga = W_pw^T gy computed in the kernel, TF32): dx (want_dx), act (want_act: the 1x1
// conv's weight gradient reads it), dW_dw and db_dw (where b_dw is defined), db_pw = sum of gy over (B, T)
// (want_db_pw; rungs 3 and 4 take gy for it only then). Two launches: the kernel, then the fixed-order sums of its
// partials (with finish false, the caller's backward_finish sums them: dw_dw and db_dw are then allocated, not yet
// written, and `partial` holds them). Rung 5 returns nullopt where it cannot take the args (dw_backward_tc_fits):
// the caller runs rung 3/4.
inline c10::optional<DwKernelGrads> dw_kernel_backward(const at::Tensor& ga, const at::Tensor& gy, const at::Tensor& x,
                                                       const at::Tensor& w_dw, const at::Tensor& b_dw,
                                                       int64_t dilation, int64_t padding, bool want_dx,
                                                       bool want_act, bool want_db_pw,
                                                       const at::Tensor& w_pw = at::Tensor(), bool finish = true) {
#ifdef DWSEP_BACKWARD_KERNEL
  const c10::cuda::CUDAGuard guard(x.device());
  const bool tc = w_pw.defined();
  const at::Tensor xc = x.contiguous(), w = w_dw.contiguous();
  const at::Tensor gc = tc ? at::Tensor() : ga.contiguous();
  const at::Tensor bc = b_dw.defined() ? b_dw.contiguous() : at::Tensor();
  const at::Tensor gyc = gy.defined() && (tc || want_db_pw) ? gy.contiguous() : at::Tensor();
  const at::Tensor wpc = tc ? w_pw.contiguous() : at::Tensor();
  DwBackwardArgs a = dw_args(xc, w, bc, dilation, padding);
  a.ga = tc ? nullptr : gc.data_ptr<float>();
  a.gy = gyc.defined() ? gyc.data_ptr<float>() : nullptr;
  a.w_pw = tc ? wpc.data_ptr<float>() : nullptr;
  a.T_out = tc ? gyc.size(2) : gc.size(2);
  a.C_out = gyc.defined() ? gyc.size(1) : 0;
  // the outputs are the caching allocator's (512-byte aligned), so the alignment the vector paths need is x's and gy's
  if (tc && !dw_backward_tc_fits(a)) return c10::nullopt;
  DwKernelGrads g;
  if (want_dx) g.dx = at::empty_like(xc);
  if (want_act) g.act = at::empty({a.B, a.C, a.T_out}, xc.options());
  const int64_t n = dw_backward_tiles(a) * a.B;
  at::Tensor partial = at::empty({a.C * (a.K + 1), n}, xc.options());
  at::Tensor partial_pw = want_db_pw ? at::empty({a.C_out, n}, xc.options()) : at::Tensor();
  g.dw_dw = at::empty(w_dw.sizes(), xc.options());
  if (bc.defined()) g.db_dw = at::empty({a.C}, xc.options());
  if (want_db_pw) g.db_pw = at::empty({a.C_out}, xc.options());
  a.dx = want_dx ? g.dx.data_ptr<float>() : nullptr;
  a.act = want_act ? g.act.data_ptr<float>() : nullptr;
  a.partial = partial.data_ptr<float>();
  a.partial_pw = want_db_pw ? partial_pw.data_ptr<float>() : nullptr;
  if (n == 0 || a.C == 0) {  // empty input: the sums are zero, dx and act empty
    g.dw_dw.zero_();
    if (g.db_dw.defined()) g.db_dw.zero_();
    if (g.db_pw.defined()) g.db_pw.zero_();
    return g;
  }
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  tc ? dw_silu_backward_tc(a, stream) : dw_silu_backward(a, stream);
  cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, tc ? "dw_silu_backward_tc" : "dw_silu_backward", ": kernel launch failed: ",
              cudaGetErrorString(err));
  if (!finish) {
    g.partial = partial;
    g.n = n;
    return g;
  }
  dw_backward_finish(a, g.dw_dw.data_ptr<float>(), g.db_dw.defined() ? g.db_dw.data_ptr<float>() : nullptr,
                     g.db_pw.defined() ? g.db_pw.data_ptr<float>() : nullptr, stream);
  err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "dw_backward_finish: kernel launch failed: ", cudaGetErrorString(err));
  return g;
#else
  (void)ga; (void)gy; (void)x; (void)w_dw; (void)b_dw; (void)dilation; (void)padding; (void)want_dx; (void)want_act;
  (void)want_db_pw; (void)w_pw; (void)finish;
  TORCH_CHECK(false, "dw_silu_backward is not built into this extension");
  return c10::nullopt;
#endif
}

#ifdef DWSEP_BACKWARD_KERNEL
// Whether eager's weight gradient (data_grad false) or data gradient (true) of the 1x1 conv, cuDNN's, is a TF32 GEMM
// for gy of this shape under the current flags: with allow_tf32 on cuDNN still picks a float32 kernel at some shapes
// (scripts/wgrad_numerics.py), where a TF32 kernel of ours would leave eager's numbers. Measured once per (device,
// shape, C_in, which gradient, cuDNN's deterministic and benchmark flags), by a gradient whose one nonzero product is
// 1 * (1 + 2^-12): exact in float32 whatever the order of the sums, 1 under TF32's rounding. Not measured during a
// CUDA graph capture (false there, unless known).
inline bool cudnn_pw_grad_is_tf32(const at::Tensor& gy, int64_t C_in, bool data_grad) {
  static std::mutex mu;
  static std::map<std::array<int64_t, 8>, bool> known;
  const at::Context& ctx = at::globalContext();
  const std::array<int64_t, 8> key{gy.get_device(), gy.size(0), gy.size(1), gy.size(2), C_in, data_grad,
                                   ctx.deterministicCuDNN(), ctx.benchmarkCuDNN()};
  {
    const std::lock_guard<std::mutex> lock(mu);
    const auto it = known.find(key);
    if (it != known.end()) return it->second;
  }
  if (c10::cuda::currentStreamCaptureStatusMayInitCtx() != c10::cuda::CaptureStatus::None) return false;
  const at::TensorOptions o = gy.options().dtype(at::kFloat);
  at::Tensor g1 = at::zeros({gy.size(0), gy.size(1), gy.size(2)}, o);
  g1.select(2, 0).select(0, 0).fill_(1.0);
  // the other operand carries the 1 + 2^-12: the input for the weight gradient, the weight for the data gradient
  at::Tensor in = data_grad ? at::empty({gy.size(0), C_in, gy.size(2)}, o)  // a shape only
                            : at::zeros({gy.size(0), C_in, gy.size(2)}, o);
  at::Tensor w = data_grad ? at::zeros({gy.size(1), C_in, 1}, o) : at::empty({gy.size(1), C_in, 1}, o);
  (data_grad ? w : in).select(2, 0).select(0, 0).fill_(1.0 + 1.0 / 4096);
  const auto grads = at::convolution_backward(g1, in, w, at::OptionalIntArrayRef(), {1}, {0}, {1}, false, {0}, 1,
                                              {data_grad, !data_grad, false});
  const bool tf32 = (data_grad ? std::get<0>(grads) : std::get<1>(grads)).flatten()[0].item<float>() == 1.0f;
  const std::lock_guard<std::mutex> lock(mu);
  known[key] = tf32;
  return tf32;
}
#endif

#ifdef DWSEP_BACKWARD_KERNEL
// What every TF32 kernel of the 1x1 conv's gradients asks first: allow_tf32 on (cuDNN's GEMMs may then be TF32), CUDA
// input, float32 gy and W_pw.
inline bool tf32_float32_cuda(const at::Tensor& x, const at::Tensor& gy, const at::Tensor& w_pw) {
  return at::globalContext().allowTF32CuDNN() && x.is_cuda() && gy.scalar_type() == at::kFloat &&
         w_pw.scalar_type() == at::kFloat;
}
#endif

// Whether rung 6 or 7 (pw_wgrad) computes the 1x1 conv's weight gradient for a backward of these inputs: float32
// CUDA tensors under allow_tf32 where cuDNN's weight gradient is a TF32 GEMM (cudnn_pw_grad_is_tf32), pw_wgrad_fits'
// shapes. act is not yet written when this is asked: the caching allocator's blocks are 512-byte aligned, so its
// alignment is given.
inline bool pw_kernel_runs(const at::Tensor& x, const at::Tensor& gy, const at::Tensor& w_pw) {
#ifdef DWSEP_BACKWARD_KERNEL
  if (!tf32_float32_cuda(x, gy, w_pw)) return false;
  // a contiguous gy's own alignment; else the allocator's (pw_kernel_wgrad takes a contiguous copy)
  float* const p = gy.is_contiguous() ? gy.data_ptr<float>() : x.data_ptr<float>();
  PwWgradArgs a{};
  a.act = p;  // act's stand-in: the allocator's alignment
  a.gy = p;
  a.partial_w = p;
  a.B = gy.size(0); a.C = w_pw.size(1); a.C_out = gy.size(1); a.T = gy.size(2);
  return pw_wgrad_fits(a) && cudnn_pw_grad_is_tf32(gy, w_pw.size(1), false);
#else
  (void)x; (void)gy; (void)w_pw;
  return false;
#endif
}

// Rung 6's partial sums of dW_pw (n, C_out, C) and db_pw (C_out, n; want_db), for backward_finish (see
// pw_kernel_runs: the caller has checked that it runs).
struct PwKernelPartials {
  at::Tensor w, b, dw_pw, db_pw;
  int64_t n = 0;    // partials of db_pw
  int64_t n_w = 0;  // partials of dW_pw (n, but for rung 9: one per cluster of blocks)
};
// The 1x1 conv's weight-gradient partials and outputs for backward_finish: n_w of dW_pw (C_out, C), n of db_pw where
// wanted.
inline PwKernelPartials pw_partials(const at::Tensor& xc, int64_t C_out, int64_t C, int64_t n, int64_t n_w,
                                    bool want_db) {
  PwKernelPartials p;
  p.n = n;
  p.n_w = n_w;
  p.w = at::empty({n_w, C_out, C}, xc.options());
  p.dw_pw = at::empty({C_out, C, 1}, xc.options());
  if (want_db) {
    p.b = at::empty({C_out, n}, xc.options());
    p.db_pw = at::empty({C_out}, xc.options());
  }
  return p;
}
inline PwKernelPartials pw_kernel_wgrad(const at::Tensor& gy, const at::Tensor& act, bool want_db) {
  PwKernelPartials p;
#ifdef DWSEP_BACKWARD_KERNEL
  PwWgradArgs a{};
  a.act = act.data_ptr<float>();
  a.gy = gy.data_ptr<float>();
  a.B = act.size(0); a.C = act.size(1); a.C_out = gy.size(1); a.T = act.size(2);
  const int64_t n = pw_wgrad_blocks(a);
  p = pw_partials(act, a.C_out, a.C, n, n, want_db);
  a.partial_w = p.w.data_ptr<float>();
  a.partial_b = want_db ? p.b.data_ptr<float>() : nullptr;
  if (p.n == 0) {  // empty input: the sums are zero
    p.dw_pw.zero_();
    if (want_db) p.db_pw.zero_();
    p.w = p.b = at::Tensor();
    return p;
  }
  pw_wgrad(a, c10::cuda::getCurrentCUDAStream().stream());
  const cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "pw_wgrad: kernel launch failed: ", cudaGetErrorString(err));
#else
  (void)gy; (void)act; (void)want_db;
  TORCH_CHECK(false, "pw_wgrad is not built into this extension");
#endif
  return p;
}


// Whether backward rung 10 (pw_data_grad_wgmma.cu) computes the 1x1 conv's data gradient (and db_pw) for a backward
// of these inputs: float32 CUDA tensors under allow_tf32 where cuDNN's data gradient is a TF32 GEMM at the shape
// (cudnn_pw_grad_is_tf32), pw_dgrad_tma_fits' shapes (an sm_90 GPU, an sm_90a build).
inline bool pw_dgrad_kernel_runs(const at::Tensor& x, const at::Tensor& gy, const at::Tensor& w_pw) {
#ifdef DWSEP_BACKWARD_KERNEL
  if (!tf32_float32_cuda(x, gy, w_pw)) return false;
  PwDgradArgs a{};
  a.gy = gy.is_contiguous() ? gy.data_ptr<float>() : x.data_ptr<float>();  // else a contiguous copy: the allocator's
  a.w_pw = a.gy;
  a.ga = x.data_ptr<float>();
  a.B = gy.size(0); a.C = w_pw.size(1); a.C_out = gy.size(1); a.T = gy.size(2);
  return pw_dgrad_tma_fits(a) && cudnn_pw_grad_is_tf32(gy, w_pw.size(1), true);
#else
  (void)x; (void)gy; (void)w_pw;
  return false;
#endif
}

// Rung 10's outputs: ga = W_pw^T gy (B, C, T) and, where want_db, db_pw's partials (p.b, p.n) and its output p.db_pw
// (p.w and p.dw_pw undefined), for finish_sums.
struct PwDgradOut {
  at::Tensor ga;
  PwKernelPartials p;
};
// zero: buffers rung 10 zeroes for the next kernel's atomic sums (undefined: none); dependent: launched as a
// programmatic dependent of the stream's previous kernel (pdl.cuh).
inline PwDgradOut pw_kernel_dgrad(const at::Tensor& gy, const at::Tensor& w_pw, bool want_db,
                                  std::array<at::Tensor, 2> zero = {}, bool dependent = false) {
  PwDgradOut r;
#ifdef DWSEP_BACKWARD_KERNEL
  const at::Tensor g = gy.contiguous(), w = w_pw.reshape({w_pw.size(0), w_pw.size(1)}).contiguous();
  PwDgradArgs a{};
  a.gy = g.data_ptr<float>();
  a.w_pw = w.data_ptr<float>();
  a.B = g.size(0); a.C = w.size(1); a.C_out = g.size(1); a.T = g.size(2);
  r.ga = at::empty({a.B, a.C, a.T}, g.options());
  a.ga = r.ga.data_ptr<float>();
  if (zero[0].defined()) { a.zero0 = zero[0].data_ptr<float>(); a.n0 = zero[0].numel(); }
  if (zero[1].defined()) { a.zero1 = zero[1].data_ptr<float>(); a.n1 = zero[1].numel(); }
  a.dependent = dependent;
  const int64_t G = pw_dgrad_tma_blocks(a);
  r.p.n = G;
  if (want_db) {
    r.p.b = at::empty({a.C_out, G}, g.options());
    r.p.db_pw = at::empty({a.C_out}, g.options());
    a.partial_b = r.p.b.data_ptr<float>();
  }
  if (G == 0) {  // empty input: ga empty, db_pw zero
    if (want_db) r.p.db_pw.zero_();
    r.p.b = at::Tensor();
    return r;
  }
  pw_dgrad_tma(a, G, c10::cuda::getCurrentCUDAStream().stream());
  const cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "pw_dgrad_tma: kernel launch failed: ", cudaGetErrorString(err));
#else
  (void)gy; (void)w_pw; (void)want_db; (void)zero; (void)dependent;
  TORCH_CHECK(false, "pw_dgrad_tma is not built into this extension");
#endif
  return r;
}

// One launch for the fixed-order sums of a backward's partials: the depthwise kernel's (d, where it ran with finish
// false) and rung 6's or 7's (p).
inline void finish_sums(const DwKernelGrads* d, const PwKernelPartials& p, int64_t C, int64_t K) {
#ifdef DWSEP_BACKWARD_KERNEL
  BackwardSums s;
  if (d && d->partial.defined()) {
    s.partial = d->partial.data_ptr<float>();
    s.n = d->n; s.C = C; s.K = static_cast<int>(K);
    s.dw_dw = d->dw_dw.data_ptr<float>();
    s.db_dw = d->db_dw.defined() ? d->db_dw.data_ptr<float>() : nullptr;
  }
  if (p.b.defined()) {
    s.partial_pw = p.b.data_ptr<float>();
    s.n_pw = p.n; s.C_out = p.db_pw.size(0);
    s.db_pw = p.db_pw.data_ptr<float>();
  }
  if (p.w.defined()) {
    s.partial_w = p.w.data_ptr<float>();
    s.n_w = p.n_w; s.C_out = p.dw_pw.size(0); s.C_in = p.dw_pw.size(1);
    s.dw_pw = p.dw_pw.data_ptr<float>();
  }
  backward_finish(s, c10::cuda::getCurrentCUDAStream().stream());
  const cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "backward_finish: kernel launch failed: ", cudaGetErrorString(err));
#else
  (void)d; (void)p; (void)C; (void)K;
#endif
}

#ifdef DWSEP_BACKWARD_KERNEL
// The depthwise half's outputs and partials as dw_kernel_backward leaves them (finish false), for a kernel that writes
// n partials per sum: dW_dw and db_dw (where a has b_dw) allocated, dx where wanted; a.dx and a.partial point at them.
inline DwKernelGrads dw_partials(DwBackwardArgs& a, const at::Tensor& xc, const at::Tensor& w_dw, int64_t n,
                                 bool want_dx) {
  DwKernelGrads d;
  d.n = n;
  d.partial = at::empty({a.C * (a.K + 1), n}, xc.options());
  d.dw_dw = at::empty(w_dw.sizes(), xc.options());
  if (a.b_dw) d.db_dw = at::empty({a.C}, xc.options());
  if (want_dx) d.dx = at::empty_like(xc);
  a.dx = want_dx ? d.dx.data_ptr<float>() : nullptr;
  a.partial = d.partial.data_ptr<float>();
  return d;
}
#endif

// Rung 8 (dw_silu_wgrad_wgmma.cu): from ga, gy and x in one kernel, (dx (want_dx), dW_dw, db_dw (where b_dw is
// defined), dW_pw (C_out, C, 1), db_pw (want_db_pw)), then one backward_finish; nullopt where it does not take the
// args (dw_wgrad_fused_fits): the caller runs rung 4 and the weight gradient apart. Its dW_pw is TF32 (operands
// rounded to nearest even): the caller asks only where cuDNN's weight gradient is a TF32 GEMM (pw_kernel_runs).
inline c10::optional<std::array<at::Tensor, 5>> dw_wgrad_fused_backward(
    const at::Tensor& ga, const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w_dw, const at::Tensor& b_dw,
    int64_t dilation, int64_t padding, bool want_dx, bool want_db_pw) {
#ifdef DWSEP_BACKWARD_KERNEL
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor xc = x.contiguous(), w = w_dw.contiguous(), gc = ga.contiguous(), gyc = gy.contiguous();
  const at::Tensor bc = b_dw.defined() ? b_dw.contiguous() : at::Tensor();
  DwBackwardArgs a = dw_args(xc, w, bc, dilation, padding);
  a.ga = gc.data_ptr<float>();
  a.gy = gyc.data_ptr<float>();
  a.T_out = gc.size(2); a.C_out = gyc.size(1);
  // the outputs are the caching allocator's (512-byte aligned); the kernel's fit checks x's, ga's and gy's
  if (!dw_wgrad_fused_fits(a)) return c10::nullopt;
  const int64_t G = dw_wgrad_fused_blocks(a);
  // the depthwise half's partials and the weight gradient's: finish_sums sums both, n = G for each
  DwKernelGrads d = dw_partials(a, xc, w_dw, G, want_dx);
  const PwKernelPartials p = pw_partials(xc, a.C_out, a.C, G, G, want_db_pw);
  a.partial_pw = want_db_pw ? p.b.data_ptr<float>() : nullptr;
  dw_silu_wgrad_fused(a, p.w.data_ptr<float>(), G, c10::cuda::getCurrentCUDAStream().stream());
  const cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "dw_silu_wgrad_fused: kernel launch failed: ", cudaGetErrorString(err));
  finish_sums(&d, p, a.C, a.K);
  return std::array<at::Tensor, 5>{d.dx, d.dw_dw, d.db_dw, p.dw_pw, p.db_pw};
#else
  (void)ga; (void)gy; (void)x; (void)w_dw; (void)b_dw; (void)dilation; (void)padding; (void)want_dx;
  (void)want_db_pw;
  return c10::nullopt;
#endif
}

// Mode 5 (backward="split"): backward rung 9 (dgrad_wgrad_wgmma.cu: gv, dW_pw's and db_pw's partials from x and gy
// on TF32 tensor cores), then rung 4's gv form (dx, dW_dw's and db_dw's partials from gv and x), then one
// backward_finish. nullopt where rung 9 does not take the args (dgwg_fits): the caller runs mode 1. Both GEMMs are
// TF32 (operands rounded to nearest even): the caller asks only where cuDNN's data and weight gradients are TF32
// GEMMs (allow_tf32, kTcMinC <= C, pw_kernel_runs).
inline c10::optional<std::array<at::Tensor, 5>> split_backward(const at::Tensor& gy, const at::Tensor& x,
                                                               const at::Tensor& w_dw, const at::Tensor& b_dw,
                                                               const at::Tensor& w_pw, int64_t dilation,
                                                               int64_t padding, bool want_dx, bool want_db_pw) {
#ifdef DWSEP_BACKWARD_KERNEL
  const c10::cuda::CUDAGuard guard(x.device());
  if (w_pw.scalar_type() != at::kFloat || w_dw.scalar_type() != at::kFloat ||
      (b_dw.defined() && b_dw.scalar_type() != at::kFloat) || gy.size(2) != x.size(2))
    return c10::nullopt;
  const at::Tensor xc = x.contiguous(), w = w_dw.contiguous(), gyc = gy.contiguous();
  const at::Tensor wp = w_pw.reshape({w_pw.size(0), w_pw.size(1)}).contiguous();
  const at::Tensor bc = b_dw.defined() ? b_dw.contiguous() : at::Tensor();
  DgwgArgs k{};
  k.x = xc.data_ptr<float>(); k.gy = gyc.data_ptr<float>(); k.w_pw = wp.data_ptr<float>();
  k.w_dw = w.data_ptr<float>(); k.b_dw = bc.defined() ? bc.data_ptr<float>() : nullptr;
  k.B = xc.size(0); k.C = xc.size(1); k.C_out = gyc.size(1); k.T = xc.size(2);
  k.K = static_cast<int>(w.size(2)); k.dilation = static_cast<int>(dilation); k.padding = static_cast<int>(padding);
  if (!dgwg_fits(k)) return c10::nullopt;  // (gv and the partials are the caching allocator's: aligned)
  const int64_t G = dgwg_blocks(k);
  at::Tensor gv = at::empty_like(xc);
  const PwKernelPartials p = pw_partials(xc, k.C_out, k.C, G, G / dgwg_cluster(G), want_db_pw);
  k.gv = gv.data_ptr<float>();
  k.partial_w = p.w.data_ptr<float>();
  k.partial_pw = want_db_pw ? p.b.data_ptr<float>() : nullptr;
  const cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  dgrad_wgrad(k, G, stream);
  cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "dgrad_wgrad: kernel launch failed: ", cudaGetErrorString(err));
  // rung 4's gv form: its partials as dw_kernel_backward leaves them (finish false)
  DwBackwardArgs a = dw_args(xc, w, bc, dilation, padding);
  a.ga = gv.data_ptr<float>();
  a.gv_in = true;
  a.T_out = a.T;
  a.C_out = k.C_out;
  DwKernelGrads d = dw_partials(a, xc, w_dw, dw_backward_tiles(a) * a.B, want_dx);
  dw_silu_backward(a, stream);
  err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "dw_silu_backward (gv form): kernel launch failed: ", cudaGetErrorString(err));
  finish_sums(&d, p, a.C, a.K);
  return std::array<at::Tensor, 5>{d.dx, d.dw_dw, d.db_dw, p.dw_pw, p.db_pw};
#else
  (void)gy; (void)x; (void)w_dw; (void)b_dw; (void)w_pw; (void)dilation; (void)padding; (void)want_dx;
  (void)want_db_pw;
  return c10::nullopt;
#endif
}

// act = silu(dw(x)) recomputed by dw_silu_backward.cu's dw_silu_forward (eager's bits; see dw_kernel_runs).
inline at::Tensor dw_kernel_act(const at::Tensor& x, const at::Tensor& w_dw, const at::Tensor& b_dw, int64_t dilation,
                                int64_t padding) {
#ifdef DWSEP_BACKWARD_KERNEL
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor xc = x.contiguous(), w = w_dw.contiguous();
  const at::Tensor bc = b_dw.defined() ? b_dw.contiguous() : at::Tensor();
  DwBackwardArgs a = dw_args(xc, w, bc, dilation, padding);
  a.T_out = a.T + 2 * padding - dilation * (a.K - 1);
  at::Tensor act = at::empty({a.B, a.C, a.T_out}, xc.options());
  if (act.numel() > 0) {
    dw_silu_forward(a, act.data_ptr<float>(), c10::cuda::getCurrentCUDAStream().stream());
    const cudaError_t err = cudaGetLastError();
    TORCH_CHECK(err == cudaSuccess, "dw_silu_forward: kernel launch failed: ", cudaGetErrorString(err));
  }
  return act;
#else
  (void)x; (void)w_dw; (void)b_dw; (void)dilation; (void)padding;
  TORCH_CHECK(false, "dw_silu_forward is not built into this extension");
  return {};
#endif
}

// Mode 6 without backward_finish (DWSEP_INLINE_SUMS, on by default), where no deterministic algorithms are asked for
// (neither torch.use_deterministic_algorithms nor torch.backends.cudnn.deterministic): rung 10 zeroes dW_dw
// (C, 1, K) and db_dw (C), rung 4 (launched as a programmatic dependent of rung 10, pdl.cuh) adds each
// block's K + 1 sums into it with atomicAdd and sums rung 10's db_pw partials in its first C_out blocks, in
// backward_finish's order. So one launch and its gap fewer; dW_dw and db_dw then vary in their last bits from run to
// run (the atomics' order), within float32 summation error of the fixed order; db_pw, dx and ga are the
// deterministic path's bits. Under either deterministic switch mode 6 keeps its fixed-order finish.
#ifndef DWSEP_INLINE_SUMS
#define DWSEP_INLINE_SUMS 1
#endif
// DWSEP_PDL_RUNG10: 1 launches rung 10 as a programmatic dependent of the stream's previous kernel too (the forward's,
// in a training step), 0 as a plain launch (rung 4 is rung 10's dependent either way)
#ifndef DWSEP_PDL_RUNG10
#define DWSEP_PDL_RUNG10 1
#endif

// cuDNN's weight gradient of the 1x1 conv from its input act (eager's call: its bits where act is eager's).
inline at::Tensor cudnn_pw_weight_grad(const at::Tensor& gy, const at::Tensor& act, const at::Tensor& w_pw) {
  return std::get<1>(at::convolution_backward(gy, act, w_pw, at::OptionalIntArrayRef(), {1}, {0}, {1}, false, {0}, 1,
                                              {false, true, false}));
}

inline bool deterministic_asked() {
  const at::Context& ctx = at::globalContext();
  return ctx.deterministicAlgorithms() || ctx.deterministicCuDNN();
}

// Rung 10 then rung 4 with inline sums (above): (dx (want_dx), dW_dw, db_dw (where b_dw is defined), act (want_act),
// db_pw (want_db_pw)) as a DwKernelGrads; nullopt where rung 4 cannot finish the sums itself
// (dw_backward_sums_inline) or the input is empty: the caller runs mode 6 with backward_finish.
inline c10::optional<DwKernelGrads> dgrad_inline_backward(const at::Tensor& gy, const at::Tensor& x,
                                                          const at::Tensor& w_dw, const at::Tensor& b_dw,
                                                          const at::Tensor& w_pw, int64_t dilation, int64_t padding,
                                                          bool want_dx, bool want_act, bool want_db_pw) {
#ifdef DWSEP_BACKWARD_KERNEL
  if (!DWSEP_INLINE_SUMS || deterministic_asked()) return c10::nullopt;
  const c10::cuda::CUDAGuard guard(x.device());
  const at::Tensor xc = x.contiguous(), w = w_dw.contiguous();
  const at::Tensor bc = b_dw.defined() ? b_dw.contiguous() : at::Tensor();
  DwBackwardArgs a = dw_args(xc, w, bc, dilation, padding);
  a.ga = a.x;  // ga's stand-in for the shape checks: it will be the caching allocator's (aligned)
  a.T_out = gy.size(2);
  a.C_out = want_db_pw ? gy.size(1) : 0;  // (rung 4 reads no gy: C_out counts db_pw's rows only)
  if (a.B * a.C * a.T == 0 || !dw_backward_sums_inline(a)) return c10::nullopt;
  DwKernelGrads g;
  g.dw_dw = at::empty(w_dw.sizes(), xc.options());
  if (bc.defined()) g.db_dw = at::empty({a.C}, xc.options());
  const PwDgradOut r = pw_kernel_dgrad(gy, w_pw, want_db_pw, {g.dw_dw, g.db_dw}, DWSEP_PDL_RUNG10 != 0);
  if (want_dx) g.dx = at::empty_like(xc);
  if (want_act) g.act = at::empty({a.B, a.C, a.T_out}, xc.options());
  a.ga = r.ga.data_ptr<float>();
  a.dx = want_dx ? g.dx.data_ptr<float>() : nullptr;
  a.act = want_act ? g.act.data_ptr<float>() : nullptr;
  a.sums_w = g.dw_dw.data_ptr<float>();
  a.sums_b = bc.defined() ? g.db_dw.data_ptr<float>() : nullptr;
  if (want_db_pw) {
    a.pw_partial = r.p.b.data_ptr<float>();
    a.n_pw = r.p.n;
    a.db_pw = r.p.db_pw.data_ptr<float>();
    g.db_pw = r.p.db_pw;
  }
  a.dependent = true;
  dw_silu_backward(a, c10::cuda::getCurrentCUDAStream().stream());
  const cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "dw_silu_backward: kernel launch failed: ", cudaGetErrorString(err));
  return g;
#else
  (void)gy; (void)x; (void)w_dw; (void)b_dw; (void)w_pw; (void)dilation; (void)padding; (void)want_dx;
  (void)want_act; (void)want_db_pw;
  return c10::nullopt;
#endif
}

// Mode 7 (backward="streams"): the backward's two independent halves on two streams. On a side stream (forked from
// the caller's after everything queued there so far), the data-gradient chain: ga by cuDNN's data gradient, then
// rung 4 for dx, dW_dw, db_dw and db_pw without writing act, then backward_finish.
// On the caller's stream meanwhile: act recomputed alone (dw_silu_forward, eager's bits, as rung 4's) and cuDNN's
// weight gradient from it (eager's call on eager's act: dW_pw bit for bit mode 1's where cuDNN picks the same
// algorithm). The caller's stream then waits for the side stream. Why: cuDNN's weight gradient runs 64 blocks at
// the headline, latency-bound, with half the SMs idle, and each launch of the one-stream chain leaves a gap; here the
// other half fills them, at the price of x read once more (16.7 MB at the headline) and rung 4 writing no act.
// Measured: at the headline the act recompute (rw_dw_silu, 20 us alone) and the chain slow each other down, 65.9
// against 59.9 us from the first kernel's start to the last's end (logs/2026-12-04_58de510_pipelined_streams_bench.log).
// Allocation: what the side stream allocates and returns (dx, dW_dw, db_dw, db_pw) is marked used on the caller's
// stream (record_stream), so the caching allocator does not hand it to the side stream again before the caller's
// work on it is done; everything else the side stream allocates it alone uses. Works under CUDA graph capture
// (the fork and the join are event edges of the captured graph).
inline std::array<at::Tensor, 5> streams_backward(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w_dw,
                                                  const at::Tensor& b_dw, const at::Tensor& w_pw, bool db_pw,
                                                  int64_t dilation, int64_t padding, std::array<bool, 5> need) {
  std::array<at::Tensor, 5> g{};
#ifdef DWSEP_BACKWARD_KERNEL
  const c10::cuda::CUDAGuard guard(x.device());
  const c10::cuda::CUDAStream caller = c10::cuda::getCurrentCUDAStream();
  const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, x.device().index());
  c10::Event fork(c10::DeviceType::CUDA), join(c10::DeviceType::CUDA);
  fork.record(caller);
  fork.block(side);
  {
    const c10::cuda::CUDAStreamGuard on_side(side);
    const at::Tensor shape_only = at::empty({x.size(0), x.size(1), gy.size(2)}, x.options());
    const at::Tensor ga = std::get<0>(at::convolution_backward(gy, shape_only, w_pw, at::OptionalIntArrayRef(), {1},
                                                               {0}, {1}, false, {0}, 1, {true, false, false}));
    const c10::optional<DwKernelGrads> d = dw_kernel_backward(ga, gy, x, w_dw, b_dw, dilation, padding, need[0], false,
                                                              db_pw);
    if (db_pw) g[4] = d->db_pw;
    if (need[0]) g[0] = d->dx;
    if (need[1]) g[1] = d->dw_dw;
    if (need[2]) g[2] = d->db_dw;
    for (at::Tensor& t : g)
      if (t.defined()) t.record_stream(caller);
    join.record(side);
  }
  g[3] = cudnn_pw_weight_grad(gy, dw_kernel_act(x, w_dw, b_dw, dilation, padding), w_pw);
  join.block(caller);
#else
  (void)gy; (void)x; (void)w_dw; (void)b_dw; (void)w_pw; (void)db_pw; (void)dilation; (void)padding; (void)need;
  TORCH_CHECK(false, "the streams backward is not built into this extension");
#endif
  return g;
}

// (gx, gw_dw, gb_dw, gw_pw, gb_pw); an entry is undefined where `need` is false (or its bias is absent).
inline std::array<at::Tensor, 5> eager_backward(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w_dw,
                                                const at::Tensor& b_dw, const at::Tensor& w_pw,
                                                const at::Tensor& b_pw, int64_t dilation, int64_t padding,
                                                std::array<bool, 5> need, int64_t mode = 0) {
  const int64_t c = x.size(1);
  const bool need_act = need[0] || need[1] || need[2];
  const std::vector<int64_t> pw_bias{w_pw.size(0)}, dw_bias{c};
  const bool kernel = mode >= 1 && dw_kernel_runs(x, gy, w_dw, b_dw, dilation, padding);
  std::array<at::Tensor, 5> g{};
  if (kernel && need_act) {
    // mode 2 (the caller's choice where TF32 is on), the depthwise half needed: dw_silu_backward_tc.cu computes ga
    // itself, with dx, act, dW_dw, db_dw and db_pw, where it takes the shape. Else (mode 1, or rung 5 cannot take
    // it): ga by cuDNN's data gradient of the 1x1 conv (eager's call, its bits; the input is only a shape there),
    // then dw_silu_backward.cu for the same outputs. Then the 1x1 conv's weight gradient from that act.
    // Mode 3, where the weight gradient is wanted and rung 6 or 7 runs: it computes dW_pw and db_pw from act and gy (the
    // depthwise kernel then reads no gy), and one backward_finish sums both kernels' partials.
    const bool db_pw = need[4] && b_pw.defined();
    // mode 7: the two halves on two streams (streams_backward), where the 1x1 conv's weight gradient is wanted
    if (mode == 7 && need[3]) return streams_backward(gy, x, w_dw, b_dw, w_pw, db_pw, dilation, padding, need);
    // mode 6: backward rung 10 (pw_data_grad_wgmma.cu: ga = W_pw^T gy and db_pw's partials) where cuDNN's data
    // gradient is a TF32 GEMM and rung 10 takes the shape, then rung 4 reading no gy, one finish for both kernels'
    // partials (none where dgrad_inline_backward runs: rung 4 finishes them), then cuDNN's weight gradient from rung
    // 4's act; elsewhere mode 1
    if (mode == 6 && pw_dgrad_kernel_runs(x, gy, w_pw)) {
      c10::optional<DwKernelGrads> d = dgrad_inline_backward(gy, x, w_dw, b_dw, w_pw, dilation, padding, need[0],
                                                             need[3], db_pw);
      if (!d) {  // the fixed-order finish of both kernels' partials
        const PwDgradOut r = pw_kernel_dgrad(gy, w_pw, db_pw);
        d = dw_kernel_backward(r.ga, gy, x, w_dw, b_dw, dilation, padding, need[0], need[3], false, at::Tensor(),
                               false);
        finish_sums(&*d, r.p, c, w_dw.size(2));
        d->db_pw = r.p.db_pw;
      }
      if (need[0]) g[0] = d->dx;
      if (need[1]) g[1] = d->dw_dw;
      if (need[2]) g[2] = d->db_dw;
      if (need[3]) g[3] = cudnn_pw_weight_grad(gy, d->act, w_pw);
      if (db_pw) g[4] = d->db_pw;
      return g;
    }
    // mode 5: rung 9 + rung 4's gv form where both of cuDNN's 1x1-conv gradients are TF32 GEMMs (pw_kernel_runs;
    // dgwg_fits: kTcMinC <= C, C_out, as rung 5) and rung 9 takes the shape
    if (mode == 5 && need[3] && pw_kernel_runs(x, gy, w_pw)) {
      const auto r = split_backward(gy, x, w_dw, b_dw, w_pw, dilation, padding, need[0], db_pw);
      if (r) {
        for (int i = 0; i < 5; ++i)
          if (need[i]) g[i] = (*r)[i];
        return g;
      }
    }
    const bool pw6 = (mode == 3 || mode == 4) && need[3] && pw_kernel_runs(x, gy, w_pw);
    const bool gy_db = pw6 ? false : db_pw;
    c10::optional<DwKernelGrads> fused;
    if (mode == 2 && w_pw.scalar_type() == at::kFloat)
      fused = dw_kernel_backward(at::Tensor(), gy, x, w_dw, b_dw, dilation, padding, need[0], need[3], gy_db,
                                 w_pw.reshape({w_pw.size(0), w_pw.size(1)}), !pw6);
    if (!fused) {
      const at::Tensor shape_only = at::empty({x.size(0), c, gy.size(2)}, x.options());
      const at::Tensor ga = std::get<0>(at::convolution_backward(gy, shape_only, w_pw, at::OptionalIntArrayRef(),
                                                                 {1}, {0}, {1}, false, {0}, 1, {true, false, false}));
      if (pw6 && mode == 4) {  // rung 8 where it takes the shape: the depthwise half and the weight gradient at once
        const auto r = dw_wgrad_fused_backward(ga, gy, x, w_dw, b_dw, dilation, padding, need[0], db_pw);
        if (r) {
          for (int i = 0; i < 5; ++i)
            if (need[i]) g[i] = (*r)[i];
          return g;
        }
      }
      fused = dw_kernel_backward(ga, gy, x, w_dw, b_dw, dilation, padding, need[0], need[3], gy_db, at::Tensor(),
                                 !pw6);
    }
    DwKernelGrads& d = *fused;
    if (need[0]) g[0] = d.dx;
    if (need[1]) g[1] = d.dw_dw;
    if (need[2]) g[2] = d.db_dw;
    if (pw6) {
      const PwKernelPartials p = pw_kernel_wgrad(gy.contiguous(), d.act, db_pw);
      finish_sums(&d, p, x.size(1), w_dw.size(2));
      g[3] = p.dw_pw;
      if (db_pw) g[4] = p.db_pw;
      return g;
    }
    if (need[3]) g[3] = cudnn_pw_weight_grad(gy, d.act, w_pw);
    if (db_pw) g[4] = d.db_pw;
    return g;
  }
  // eager's order: the activations recomputed (mode 1 where the kernels run: by dw_silu_forward, eager's bits),
  // the 1x1 conv's backward, then silu_backward and the depthwise's convolution_backward
  at::Tensor v, a;
  if (kernel) {
    a = dw_kernel_act(x, w_dw, b_dw, dilation, padding);
    // only the 1x1 conv's parameters want gradients (modes 3 and 4: rung 6 or 7 from the recomputed act)
    if ((mode == 3 || mode == 4) && !need_act && need[3] && pw_kernel_runs(x, gy, w_pw)) {
      const bool db_pw = need[4] && b_pw.defined();
      const PwKernelPartials p = pw_kernel_wgrad(gy.contiguous(), a, db_pw);
      finish_sums(nullptr, p, c, w_dw.size(2));
      g[3] = p.dw_pw;
      if (db_pw) g[4] = p.db_pw;
      return g;
    }
  } else {
    v = at::convolution(x, w_dw, b_dw, {1}, {padding}, {dilation}, false, {0}, c);
    a = at::silu(v);
  }
  at::Tensor ga;
  std::tie(ga, g[3], g[4]) = at::convolution_backward(
      gy, a, w_pw, b_pw.defined() ? at::OptionalIntArrayRef(pw_bias) : at::OptionalIntArrayRef(), {1}, {0}, {1},
      false, {0}, 1, {need_act, need[3], need[4] && b_pw.defined()});
  if (need_act) {
    std::tie(g[0], g[1], g[2]) = at::convolution_backward(
        at::silu_backward(ga, v), x, w_dw, b_dw.defined() ? at::OptionalIntArrayRef(dw_bias) : at::OptionalIntArrayRef(),
        {1}, {padding}, {dilation}, false, {0}, c, {need[0], need[1], need[2] && b_dw.defined()});
  }
  return g;
}

// eager_backward for the operator's backward (fused_jit::dwsep_conv1d_backward, fusedkit/routing.py): the same
// gradients as the autograd node's backward in `mode`, as a list of five tensors, an empty one (0 elements) where
// `need` is false or the input is absent, so that torch.compile's graphs call the backward's kernels too.
inline std::vector<at::Tensor> backward_list(const at::Tensor& gy, const at::Tensor& x, const at::Tensor& w_dw,
                                             const c10::optional<at::Tensor>& b_dw, const at::Tensor& w_pw,
                                             const c10::optional<at::Tensor>& b_pw, int64_t dilation, int64_t padding,
                                             const std::vector<bool>& need, int64_t mode) {
  TORCH_CHECK(need.size() == 5, "backward: need holds one flag for each of x, w_dw, b_dw, w_pw, b_pw; got ",
              need.size());
  TORCH_CHECK(x.dim() == 3 && gy.dim() == 3 && gy.size(0) == x.size(0) && gy.size(1) == w_pw.size(0),
              "backward: x (B, C_in, T) and gy (B, C_out, T_out) of the same batch; got x ", x.sizes(), ", gy ",
              gy.sizes());
  const at::Tensor bd = b_dw ? *b_dw : at::Tensor(), bp = b_pw ? *b_pw : at::Tensor();
  const std::array<bool, 5> n{need[0], need[1], need[2] && bd.defined(), need[3], need[4] && bp.defined()};
  const auto g = eager_backward(gy, x, w_dw, bd, w_pw, bp, dilation, padding, n, mode);
  std::vector<at::Tensor> out;
  for (int i = 0; i < 5; ++i) out.push_back(n[i] && g[i].defined() ? g[i] : at::empty({0}, x.options()));
  return out;
}

// Impl::run(x, w_dw, b_dw, w_pw, b_pw, dilation, padding) -> y computes the forward (autograd is off inside).
// `backward`: 0 = eager's ops throughout, 1 = dw_silu_backward.cu for the depthwise half where it runs, 2 = as 1
// with rung 5 (dw_silu_backward_tc.cu: the 1x1 conv's data gradient in the kernel, TF32) where it takes the shape.
template <class Impl>
struct DwSepFunction : public torch::autograd::Function<DwSepFunction<Impl>> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const at::Tensor& w_dw,
                            const c10::optional<at::Tensor>& b_dw, const at::Tensor& w_pw,
                            const c10::optional<at::Tensor>& b_pw, int64_t dilation, int64_t padding,
                            int64_t backward) {
    const at::Tensor bd = b_dw ? *b_dw : at::Tensor(), bp = b_pw ? *b_pw : at::Tensor();
    ctx->save_for_backward({x, w_dw, bd, w_pw, bp});
    ctx->saved_data["dilation"] = dilation;
    ctx->saved_data["padding"] = padding;
    ctx->saved_data["backward"] = backward;
    return Impl::run(x, w_dw, b_dw, w_pw, b_pw, dilation, padding);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto s = ctx->get_saved_variables();
    // needs_input_grad counts the inputs that are tensors: x, w_dw, [b_dw], w_pw, [b_pw]
    std::array<bool, 5> need{};
    size_t edge = 0;
    for (int i = 0; i < 5; ++i)
      if (s[i].defined()) need[i] = ctx->needs_input_grad(edge++);
    const auto g = eager_backward(grads[0], s[0], s[1], s[2], s[3], s[4], ctx->saved_data["dilation"].toInt(),
                                  ctx->saved_data["padding"].toInt(), need, ctx->saved_data["backward"].toInt());
    return {g[0], g[1], g[2], g[3], g[4], at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace dwsep
