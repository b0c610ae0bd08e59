// general.cpp: the general path's extension (not a rung): act = silu(dw(x)) from dw_silu.cu, eager's bits, then
// PyTorch's own 1x1 conv, which rounds as eager's does under the user's TF32 switch. ModelNew and the exported
// file take it wherever no fused rung runs a shape. `forward` is inference; `forward_train` is the same forward
// with the C++ backward of eager_autograd.h, one call where a Python autograd.Function cost ~50 us of host time.
#include <torch/extension.h>
#include "eager_autograd.h"  // jit.general_kernel defines DWSEP_BACKWARD_KERNEL and links dw_silu_backward.cu

// dw_silu.cu
torch::Tensor dw_silu(torch::Tensor x, torch::Tensor w_dw, c10::optional<torch::Tensor> b_dw, int64_t dilation,
                      int64_t padding);

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
}
