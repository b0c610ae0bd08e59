// general.cpp: the general path's extension (not a rung): act = silu(dw(x)) from dw_silu.cu, eager's bits, then
// PyTorch's own 1x1 conv, which rounds as eager's does under the user's TF32 switch. ModelNew and the exported
// file take it wherever no fused rung runs a shape. `forward` is inference; `forward_train` is the same forward
// with the C++ backward of eager_autograd.h, one call where a Python autograd.Function cost ~50 us of host time.
#include <torch/extension.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <c10/cuda/CUDAException.h>
#include "eager_autograd.h"  // jit.general_kernel defines DWSEP_BACKWARD_KERNEL and links dw_silu_backward.cu

// dw_silu.cu (torch-free): act = silu(dw(x)) for raw device pointers, dtype 0 float32, 1 bfloat16, 2 float16
void dw_silu_launch(int dtype, const void* x, const float* w, const float* b, void* act, int64_t B, int64_t C,
                    int64_t T_in, int64_t T_out, int K, int dilation, int padding, void* stream);

namespace {
std::string shape_of(const torch::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}
}  // namespace

// act = silu(dw(x)) in x's dtype, shape (B, C_in, T_out): eager's numbers (dw_silu.cu's head says how).
torch::Tensor dw_silu(torch::Tensor x, torch::Tensor w_dw, c10::optional<torch::Tensor> b_dw, int64_t dilation,
                      int64_t padding) {
  TORCH_CHECK(x.is_cuda() && x.dim() == 3, "dw_silu: x must be a 3-D CUDA tensor (batch, channels, time); got ",
              shape_of(x), " on ", x.device().str());
  TORCH_CHECK(x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kBFloat16 ||
                  x.scalar_type() == torch::kHalf,
              "dw_silu: x must be float32, bfloat16 or float16; got ", std::string(c10::toString(x.scalar_type())));
  const int64_t B = x.size(0), C = x.size(1), T_in = x.size(2);
  TORCH_CHECK(w_dw.dim() == 3 && w_dw.size(0) == C && w_dw.size(1) == 1,
              "dw_silu: depthwise weight must have shape (C_in, 1, K) with C_in = ", std::to_string(C), "; got ",
              shape_of(w_dw));
  TORCH_CHECK(dilation >= 1 && padding >= 0, "dw_silu: dilation must be >= 1 and padding >= 0");
  const int64_t K = w_dw.size(2), T_out = T_in + 2 * padding - dilation * (K - 1);
  TORCH_CHECK(K >= 1 && T_out >= 1, "dw_silu: input of length ", std::to_string(T_in),
              " is too short for kernel_size=", std::to_string(K), ", dilation=", std::to_string(dilation));
  TORCH_CHECK(K <= INT32_MAX && dilation <= INT32_MAX && padding <= INT32_MAX, "dw_silu: kernel_size, dilation "
              "and padding must fit in 32 bits");
  const c10::cuda::CUDAGuard guard(x.device());
  const torch::Tensor xc = x.contiguous();
  const torch::Tensor w = w_dw.to(x.device(), torch::kFloat).contiguous();
  torch::Tensor b;
  if (b_dw) {
    TORCH_CHECK(b_dw->numel() == C, "dw_silu: depthwise bias must have C_in = ", std::to_string(C), " elements");
    b = b_dw->to(x.device(), torch::kFloat).contiguous();
  }
  torch::Tensor act = torch::empty({B, C, T_out}, xc.options());
  if (act.numel() == 0) return act;
  const int dtype = x.scalar_type() == torch::kFloat ? 0 : x.scalar_type() == torch::kBFloat16 ? 1 : 2;
  try {
    dw_silu_launch(dtype, xc.data_ptr(), w.data_ptr<float>(), b_dw ? b.data_ptr<float>() : nullptr,
                   act.data_ptr(), B, C, T_in, T_out, static_cast<int>(K), static_cast<int>(dilation),
                   static_cast<int>(padding), c10::cuda::getCurrentCUDAStream().stream());
  } catch (const std::runtime_error& e) {
    TORCH_CHECK(false, e.what(), " (x of shape ", shape_of(x), ")");
  }
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return act;
}

torch::Tensor general_forward(torch::Tensor x, torch::Tensor w_dw, c10::optional<torch::Tensor> b_dw,
                              torch::Tensor w_pw, c10::optional<torch::Tensor> b_pw, int64_t dilation,
                              int64_t padding) {
  return at::conv1d(dw_silu(x, w_dw, b_dw, dilation, padding), w_pw, b_pw);
}

struct GeneralForward {
  static torch::Tensor run(const torch::Tensor& x, const torch::Tensor& w_dw, const c10::optional<torch::Tensor>& b_dw,
                           const torch::Tensor& w_pw, const c10::optional<torch::Tensor>& b_pw, int64_t dilation,
                           int64_t padding) {
    return general_forward(x, w_dw, b_dw, w_pw, b_pw, dilation, padding);
  }
};

torch::Tensor general_forward_train(torch::Tensor x, torch::Tensor w_dw, c10::optional<torch::Tensor> b_dw,
                                    torch::Tensor w_pw, c10::optional<torch::Tensor> b_pw, int64_t dilation,
                                    int64_t padding, int64_t backward) {
  return dwsep::DwSepFunction<GeneralForward>::apply(x, w_dw, b_dw, w_pw, b_pw, dilation, padding, backward);
}

#ifdef DWSEP_BACKWARD_KERNEL  // (the exported file inlines this file without the backward's kernels)
// The 1x1 conv's weight and bias gradients from gy (B, C_out, T) and act (B, C, T) by the backward's own kernel
// (rung 7 where pw_wgrad_tma_fits, else rung 6; pw_wgrad_args.h), then backward_finish: (dW_pw (C_out, C, 1),
// db_pw (C_out), the rung that ran). For checking the kernels alone (tests/test_gpu.py); the backward calls them
// through eager_autograd.h.
std::tuple<torch::Tensor, torch::Tensor, int64_t> pw_weight_grad(torch::Tensor gy, torch::Tensor act) {
  TORCH_CHECK(gy.is_cuda() && act.is_cuda() && gy.dim() == 3 && act.dim() == 3 && gy.size(0) == act.size(0) &&
                  gy.size(2) == act.size(2) && gy.scalar_type() == torch::kFloat &&
                  act.scalar_type() == torch::kFloat,
              "pw_weight_grad: gy (B, C_out, T) and act (B, C, T) must be float32 CUDA tensors of one B and T; got ",
              shape_of(gy), " and ", shape_of(act));
  const c10::cuda::CUDAGuard guard(gy.device());
  const torch::Tensor g = gy.contiguous(), a = act.contiguous();
  PwWgradArgs args{};
  args.act = a.data_ptr<float>();
  args.gy = args.partial_w = g.data_ptr<float>();
  args.B = a.size(0); args.C = a.size(1); args.C_out = g.size(1); args.T = a.size(2);
  TORCH_CHECK(pw_wgrad_fits(args), "pw_weight_grad: outside the kernels' limits (T % 4 == 0, 32 <= C, C_out <= "
              "128, sm_80+); got gy ", shape_of(gy), ", act ", shape_of(act));
  const int64_t rung = pw_wgrad_tma_fits(args) ? 7 : 6;
  const dwsep::PwKernelPartials p = dwsep::pw_kernel_wgrad(g, a, true);
  dwsep::finish_sums(nullptr, p, a.size(1), 1);
  return {p.dw_pw, p.db_pw, rung};
}

// Backward rung 10 alone (pw_data_grad_wgmma.cu): from gy (B, C_out, T) and w_pw (C_out, C, 1), (ga = W_pw^T gy (B, C,
// T), db_pw (C_out)), whatever the TF32 switch says (the backward asks for it only where cuDNN's data gradient is
// TF32). For checking the kernel against float64 (tests/test_gpu.py). Refuses shapes outside pw_dgrad_tma_fits.
std::tuple<torch::Tensor, torch::Tensor> pw_data_grad(torch::Tensor gy, torch::Tensor w_pw) {
  TORCH_CHECK(gy.is_cuda() && w_pw.is_cuda() && gy.dim() == 3 && w_pw.dim() == 3 && w_pw.size(0) == gy.size(1) &&
                  w_pw.size(2) == 1 && gy.scalar_type() == torch::kFloat && w_pw.scalar_type() == torch::kFloat,
              "pw_data_grad: gy (B, C_out, T) and w_pw (C_out, C, 1) must be float32 CUDA tensors; got gy ",
              shape_of(gy), ", w_pw ", shape_of(w_pw));
  const c10::cuda::CUDAGuard guard(gy.device());
  const torch::Tensor g = gy.contiguous();
  PwDgradArgs args{};
  args.gy = g.data_ptr<float>();
  args.B = g.size(0); args.C = w_pw.size(1); args.C_out = g.size(1); args.T = g.size(2);
  TORCH_CHECK(pw_dgrad_tma_fits(args), "pw_data_grad: outside backward rung 10's limits (an sm_90 GPU and an sm_90a "
              "build, T % 4 == 0, 1 <= C, C_out <= 128); got gy ", shape_of(gy), ", w_pw ", shape_of(w_pw));
  const dwsep::PwDgradOut r = dwsep::pw_kernel_dgrad(g, w_pw, true);
  dwsep::finish_sums(nullptr, r.p, args.C, 1);
  return {r.ga, r.p.db_pw};
}

// Backward rung 8 alone (dw_silu_wgrad_wgmma.cu): from ga = dL/d act, gy and x, (dx, dW_dw, db_dw, dW_pw, db_pw)
// (db_dw undefined without b_dw). For checking the kernel against float64 (tests/test_gpu.py); the backward calls it
// through eager_autograd.h. Refuses shapes outside dw_wgrad_fused_fits.
std::vector<torch::Tensor> dw_wgrad_fused(torch::Tensor ga, torch::Tensor gy, torch::Tensor x, torch::Tensor w_dw,
                                          c10::optional<torch::Tensor> b_dw, int64_t dilation, int64_t padding) {
  TORCH_CHECK(ga.is_cuda() && gy.is_cuda() && x.is_cuda() && w_dw.is_cuda() && x.dim() == 3 && ga.sizes() == x.sizes() &&
                  gy.dim() == 3 && gy.size(0) == x.size(0) && gy.size(2) == x.size(2) && w_dw.dim() == 3 &&
                  w_dw.size(0) == x.size(1) && w_dw.size(1) == 1,
              "dw_wgrad_fused: ga and x (B, C, T), gy (B, C_out, T), w_dw (C, 1, K) CUDA tensors; got ga ", shape_of(ga),
              ", gy ", shape_of(gy), ", x ", shape_of(x), ", w_dw ", shape_of(w_dw));
  const auto g = dwsep::dw_wgrad_fused_backward(ga, gy, x, w_dw, b_dw ? *b_dw : torch::Tensor(), dilation, padding,
                                                true, true);
  TORCH_CHECK(g.has_value(), "dw_wgrad_fused: outside backward rung 8's limits (an sm_90 GPU and an sm_90a build, "
              "float32, K <= 5 with 'same' padding of an even span, T % 4 == 0, 32 <= C, C_out <= 128); got x ",
              shape_of(x), ", gy ", shape_of(gy), ", K ", w_dw.size(2), ", dilation ", dilation);
  return {(*g)[0], (*g)[1], (*g)[2], (*g)[3], (*g)[4]};
}

// backward="split"'s kernels alone (backward rung 9, dgrad_wgrad_wgmma.cu, then rung 4's gv form): from gy, x and the
// weights, (dx, dW_dw, db_dw, dW_pw, db_pw) (db_dw undefined without b_dw), whatever the TF32 switch says (the
// backward asks for it only where cuDNN's gradients are TF32). For checking the kernels against float64
// (tests/test_gpu.py). Refuses shapes outside dgwg_fits.
std::vector<torch::Tensor> split_backward(torch::Tensor gy, torch::Tensor x, torch::Tensor w_dw,
                                          c10::optional<torch::Tensor> b_dw, torch::Tensor w_pw, int64_t dilation,
                                          int64_t padding) {
  TORCH_CHECK(gy.is_cuda() && x.is_cuda() && w_dw.is_cuda() && w_pw.is_cuda() && x.dim() == 3 && gy.dim() == 3 &&
                  gy.size(0) == x.size(0) && gy.size(2) == x.size(2) && w_dw.dim() == 3 && w_dw.size(0) == x.size(1) &&
                  w_dw.size(1) == 1 && w_pw.dim() == 3 && w_pw.size(0) == gy.size(1) && w_pw.size(1) == x.size(1) &&
                  w_pw.size(2) == 1,
              "split_backward: x (B, C, T), gy (B, C_out, T), w_dw (C, 1, K), w_pw (C_out, C, 1) CUDA tensors; got x ",
              shape_of(x), ", gy ", shape_of(gy), ", w_dw ", shape_of(w_dw), ", w_pw ", shape_of(w_pw));
  const auto g = dwsep::split_backward(gy, x, w_dw, b_dw ? *b_dw : torch::Tensor(), w_pw, dilation, padding, true,
                                       true);
  TORCH_CHECK(g.has_value(), "split_backward: outside backward rung 9's limits (an sm_90 GPU and an sm_90a build, "
              "float32, K <= 5 with 'same' padding of an even span, T % 4 == 0, 32 <= C, C_out <= 128); got x ",
              shape_of(x), ", gy ", shape_of(gy), ", K ", w_dw.size(2), ", dilation ", dilation);
  return {(*g)[0], (*g)[1], (*g)[2], (*g)[3], (*g)[4]};
}
#endif

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "the general path: silu(dw(x)) with eager's numerics (dw_silu.cu) + PyTorch's 1x1 conv";
  m.def("dw_silu", &dw_silu, "act = silu(dw(x)) in x's dtype, eager's bits", py::arg("x"), py::arg("w_dw"),
        py::arg("b_dw"), py::arg("dilation"), py::arg("padding"));
  m.def("forward", &general_forward, "y = pw(silu(dw(x))): dw_silu + PyTorch's 1x1 conv", py::arg("x"),
        py::arg("w_dw"), py::arg("b_dw"), py::arg("w_pw"), py::arg("b_pw"), py::arg("dilation"), py::arg("padding"));
  m.def("forward_train", &general_forward_train,
        "forward with autograd; backward 0: eager's ops, 1: dw_silu_backward.cu for the depthwise half",
        py::arg("x"), py::arg("w_dw"), py::arg("b_dw"), py::arg("w_pw"), py::arg("b_pw"), py::arg("dilation"),
        py::arg("padding"), py::arg("backward") = 0);
  m.def("backward", &dwsep::backward_list,
        "[gx, gw_dw, gb_dw, gw_pw, gb_pw] of y = pw(silu(dw(x))) for gy, in a backward mode (0 eager's ops, ...); an "
        "empty tensor where need is false", py::arg("gy"), py::arg("x"), py::arg("w_dw"), py::arg("b_dw"),
        py::arg("w_pw"), py::arg("b_pw"), py::arg("dilation"), py::arg("padding"), py::arg("need"), py::arg("mode"));
#ifdef DWSEP_BACKWARD_KERNEL
  m.def("pw_weight_grad", &pw_weight_grad, "(dW_pw, db_pw, rung) from gy and act by backward rung 7 or 6",
        py::arg("gy"), py::arg("act"));
  m.def("pw_data_grad", &pw_data_grad, "(ga = W_pw^T gy, db_pw) by backward rung 10 alone", py::arg("gy"),
        py::arg("w_pw"));
  m.def("dw_wgrad_fused", &dw_wgrad_fused, "[dx, dW_dw, db_dw, dW_pw, db_pw] by backward rung 8 alone",
        py::arg("ga"), py::arg("gy"), py::arg("x"), py::arg("w_dw"), py::arg("b_dw"), py::arg("dilation"),
        py::arg("padding"));
  m.def("split_backward", &split_backward, "[dx, dW_dw, db_dw, dW_pw, db_pw] by backward rung 9 + rung 4's gv form",
        py::arg("gy"), py::arg("x"), py::arg("w_dw"), py::arg("b_dw"), py::arg("w_pw"), py::arg("dilation"),
        py::arg("padding"));
#endif
}
