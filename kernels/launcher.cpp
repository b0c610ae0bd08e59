// launcher.cpp: the one host launcher every variant is built with (fused_jit.load compiles it beside
// the variant's kernel file). It validates the tensors, fills FusedArgs, calls the kernel file's
// fused_forward and checks the launch. FUSED_CUDA is defined for .cu variants, FUSED_VARIANT always.
#include <torch/extension.h>
#include <string>
#include "fused_args.h"
#include "eager_autograd.h"  // fused_jit's CUDA builds define DWSEP_BACKWARD_KERNEL and link dw_silu_backward.cu
#ifdef FUSED_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace {

#ifdef FUSED_CUDA
constexpr bool kOnCuda = true;
#else
constexpr bool kOnCuda = false;
#endif

// Error messages are built from strings only: numbers go through std::to_string, devices through
// Device::str(). (Streaming an integer into c10::str crashed inside this extension's libstdc++ on the
// H200 machine, whose compiler differs from the one torch was built with.)
std::string num(int64_t v) { return std::to_string(v); }
std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}
std::string shape_str(const torch::Tensor& t) { return shape_str(t.sizes().vec()); }
std::string dev(const torch::Tensor& t) { return t.device().str(); }
std::string dtype_str(const torch::Tensor& t) { return std::string(c10::toString(t.scalar_type())); }

int dtype_code(const torch::Tensor& x) {
  switch (x.scalar_type()) {
    case torch::kFloat: return FUSED_F32;
    case torch::kBFloat16: return FUSED_BF16;
    case torch::kHalf: return FUSED_F16;
    default:
      TORCH_CHECK(false, "fused[", FUSED_VARIANT, "]: x must be float32, bfloat16 or float16; got ",
                  dtype_str(x));
  }
  return -1;
}

// A weight or bias tensor: same device as x, the expected shape, as contiguous float32.
torch::Tensor param(const torch::Tensor& t, const torch::Tensor& x, const char* name,
                    std::vector<int64_t> shape, const std::string& meaning) {
  TORCH_CHECK(t.device() == x.device(), "fused[", FUSED_VARIANT, "]: ", name, " is on ", dev(t),
              " but x is on ", dev(x));
  TORCH_CHECK(t.sizes().vec() == shape, "fused[", FUSED_VARIANT, "]: ", name, " must have shape ",
              shape_str(shape), " (", meaning, "); got ", shape_str(t));
  TORCH_CHECK(t.is_floating_point(), "fused[", FUSED_VARIANT, "]: ", name, " must be floating point; got ",
              dtype_str(t));
  return t.to(torch::kFloat).contiguous();
}

struct Prepared {
  torch::Tensor x, w_dw, b_dw, w_pw, b_pw;
  FusedArgs args{};
};

Prepared prepare(torch::Tensor x, const torch::Tensor& w_dw, const c10::optional<torch::Tensor>& b_dw,
                 const torch::Tensor& w_pw, const c10::optional<torch::Tensor>& b_pw, int64_t dilation,
                 int64_t padding) {
  const char* v = FUSED_VARIANT;
  TORCH_CHECK(x.dim() == 3, "fused[", v, "]: x must be 3-D (batch, channels, time); got shape ", shape_str(x));
  if (kOnCuda) {
    TORCH_CHECK(x.is_cuda(), "fused[", v, "]: this variant runs on CUDA, but x is on ", dev(x),
                "; move x to a GPU or use the CPU variant");
  } else {
    TORCH_CHECK(x.device().is_cpu(), "fused[", v, "]: this variant runs on the CPU, but x is on ", dev(x));
  }
  TORCH_CHECK(w_dw.dim() == 3 && w_dw.size(1) == 1,
              "fused[", v, "]: depthwise weight must have shape (C_in, 1, K); got ", shape_str(w_dw));
  TORCH_CHECK(w_pw.dim() == 3 && w_pw.size(2) == 1,
              "fused[", v, "]: pointwise weight must have shape (C_out, C_in, 1); got ", shape_str(w_pw));
  const int64_t B = x.size(0), C_in = x.size(1), T = x.size(2), K = w_dw.size(2), C_out = w_pw.size(0);
  TORCH_CHECK(w_dw.size(0) == C_in, "fused[", v, "]: x has ", num(C_in), " channels but the depthwise weight has ",
              num(w_dw.size(0)), " (shape ", shape_str(w_dw), ")");
  TORCH_CHECK(w_pw.size(1) == C_in, "fused[", v, "]: x has ", num(C_in), " channels but the pointwise weight expects ",
              num(w_pw.size(1)), " input channels (shape ", shape_str(w_pw), ")");
  TORCH_CHECK(dilation >= 1, "fused[", v, "]: dilation must be >= 1; got ", num(dilation));
  TORCH_CHECK(padding >= 0, "fused[", v, "]: padding must be >= 0; got ", num(padding));
  TORCH_CHECK(B >= 1 && C_in >= 1 && C_out >= 1 && K >= 1, "fused[", v, "]: empty dimension in x ",
              shape_str(x), ", w_dw ", shape_str(w_dw), " or w_pw ", shape_str(w_pw));
  const int64_t T_out = T + 2 * padding - dilation * (K - 1);
  TORCH_CHECK(T_out >= 1, "fused[", v, "]: input of length T=", num(T), " is too short for kernel_size=", num(K),
              ", dilation=", num(dilation), ", padding=", num(padding), " (output length ", num(T_out), ")");

  Prepared p;
  p.x = x.contiguous();
  p.w_dw = param(w_dw, x, "w_dw", {C_in, 1, K}, "C_in, 1, kernel_size");
  p.w_pw = param(w_pw, x, "w_pw", {C_out, C_in, 1}, "C_out, C_in, 1");
  if (b_dw) p.b_dw = param(*b_dw, x, "b_dw", {C_in}, "C_in");
  if (b_pw) p.b_pw = param(*b_pw, x, "b_pw", {C_out}, "C_out");
  FusedArgs& a = p.args;
  a.x = p.x.data_ptr();
  a.w_dw = p.w_dw.data_ptr<float>();
  a.b_dw = b_dw ? p.b_dw.data_ptr<float>() : nullptr;
  a.w_pw = p.w_pw.data_ptr<float>();
  a.b_pw = b_pw ? p.b_pw.data_ptr<float>() : nullptr;
  a.B = B; a.C_in = C_in; a.C_out = C_out; a.T = T; a.T_out = T_out;
  a.K = static_cast<int>(K); a.dilation = static_cast<int>(dilation); a.padding = static_cast<int>(padding);
  a.dtype = dtype_code(x);
#ifdef FUSED_CUDA
  const int device_index = x.get_device();
  int num_sms = 0, smem_optin = 0, major = 0, minor = 0;
  TORCH_CHECK(cudaDeviceGetAttribute(&num_sms, cudaDevAttrMultiProcessorCount, device_index) == cudaSuccess &&
                  cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device_index) ==
                      cudaSuccess &&
                  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_index) == cudaSuccess &&
                  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device_index) == cudaSuccess,
              "fused[", v, "]: cannot read the properties of CUDA device ", dev(x));
  a.num_sms = num_sms;
  a.max_smem_optin = smem_optin;
  a.cc = major * 10 + minor;
#endif
  return p;
}

}  // namespace

// Why this variant cannot compute these inputs ("" when it can). Same checks as forward, no launch.
std::string why_unsupported(torch::Tensor x, torch::Tensor w_dw, c10::optional<torch::Tensor> b_dw,
                            torch::Tensor w_pw, c10::optional<torch::Tensor> b_pw, int64_t dilation,
                            int64_t padding) {
  Prepared p = prepare(x, w_dw, b_dw, w_pw, b_pw, dilation, padding);
  const char* why = fused_unsupported(p.args);
  return why ? std::string(why) : std::string();
}

// y = pw(silu(dw(x))). `out`, if given, receives y (it must be contiguous, x's dtype and device, and of
// shape (B, C_out, T_out)): check() passes a NaN-poisoned one so an unwritten element cannot pass.
torch::Tensor forward(torch::Tensor x, torch::Tensor w_dw, c10::optional<torch::Tensor> b_dw, torch::Tensor w_pw,
                      c10::optional<torch::Tensor> b_pw, int64_t dilation, int64_t padding,
                      c10::optional<torch::Tensor> out) {
  Prepared p = prepare(x, w_dw, b_dw, w_pw, b_pw, dilation, padding);
  const char* why = fused_unsupported(p.args);
  TORCH_CHECK(why == nullptr, "fused[", FUSED_VARIANT, "]: cannot run x of shape ", shape_str(x), " with K=",
              num(p.args.K), ", C_out=", num(p.args.C_out), ": ", why);
  const std::vector<int64_t> y_shape{p.args.B, p.args.C_out, p.args.T_out};
  torch::Tensor y;
  if (out) {
    y = *out;
    TORCH_CHECK(y.device() == x.device() && y.scalar_type() == x.scalar_type() && y.sizes().vec() == y_shape &&
                    y.is_contiguous(),
                "fused[", FUSED_VARIANT, "]: out must be a contiguous ", dtype_str(x), " tensor on ", dev(x),
                " of shape ", shape_str(y_shape), "; got ", dtype_str(y), " on ", dev(y), " of shape ", shape_str(y),
                y.is_contiguous() ? "" : " (not contiguous)");
  } else {
    y = torch::empty(y_shape, p.x.options());
  }
  p.args.y = y.data_ptr();
#ifdef FUSED_CUDA
  const c10::cuda::CUDAGuard guard(x.device());
  fused_forward(p.args, c10::cuda::getCurrentCUDAStream().stream());
  const cudaError_t err = cudaGetLastError();
  TORCH_CHECK(err == cudaSuccess, "fused[", FUSED_VARIANT, "]: kernel launch failed: ", cudaGetErrorString(err));
#else
  fused_forward(p.args, nullptr);
#endif
  return y;
}

// The fused forward with a C++ backward (eager_autograd.h: eager's ops, or on CUDA in float32 the depthwise half by
// dw_silu_backward.cu): what ModelNew and the exported file call when gradients are on. The weights keep their
// dtype (their gradients come in that dtype, as eager's).
struct FusedForward {
  static torch::Tensor run(const torch::Tensor& x, const torch::Tensor& w_dw, const c10::optional<torch::Tensor>& b_dw,
                           const torch::Tensor& w_pw, const c10::optional<torch::Tensor>& b_pw, int64_t dilation,
                           int64_t padding) {
    return forward(x, w_dw, b_dw, w_pw, b_pw, dilation, padding, c10::nullopt);
  }
};

torch::Tensor forward_train(torch::Tensor x, torch::Tensor w_dw, c10::optional<torch::Tensor> b_dw,
                            torch::Tensor w_pw, c10::optional<torch::Tensor> b_pw, int64_t dilation,
                            int64_t padding, int64_t backward) {
  return dwsep::DwSepFunction<FusedForward>::apply(x, w_dw, b_dw, w_pw, b_pw, dilation, padding, backward);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "fused depthwise-dilated Conv1d + SiLU + pointwise Conv1d, variant " FUSED_VARIANT;
  m.attr("variant") = FUSED_VARIANT;
  m.def("forward", &forward, "y = pw(silu(dw(x)))", py::arg("x"), py::arg("w_dw"), py::arg("b_dw"),
        py::arg("w_pw"), py::arg("b_pw"), py::arg("dilation"), py::arg("padding"), py::arg("out") = py::none());
  m.def("forward_train", &forward_train, "y = pw(silu(dw(x))) with autograd; backward 0: eager's ops, 1: dw_silu_backward.cu where it runs, 2: rung 5 (dw_silu_backward_tc.cu) where it runs, else 1",
        py::arg("x"), py::arg("w_dw"), py::arg("b_dw"), py::arg("w_pw"), py::arg("b_pw"), py::arg("dilation"),
        py::arg("padding"), py::arg("backward") = 0);
  m.def("backward", &dwsep::backward_list,
        "[gx, gw_dw, gb_dw, gw_pw, gb_pw] of y = pw(silu(dw(x))) for gy, in a backward mode (0 eager's ops, ...); an "
        "empty tensor where need is false", py::arg("gy"), py::arg("x"), py::arg("w_dw"), py::arg("b_dw"),
        py::arg("w_pw"), py::arg("b_pw"), py::arg("dilation"), py::arg("padding"), py::arg("need"), py::arg("mode"));
  m.def("why_unsupported", &why_unsupported, "'' when this variant can compute these inputs, else why not",
        py::arg("x"), py::arg("w_dw"), py::arg("b_dw"), py::arg("w_pw"), py::arg("b_pw"), py::arg("dilation"),
        py::arg("padding"));
#ifdef FUSED_TRACE
  m.def("trace", [] {
    std::vector<uint64_t> v(1 << 17);
    v.resize(static_cast<size_t>(fused_trace_read(v.data(), static_cast<int>(v.size()))));
    return v;
  }, "the last launch's per-block event clocks (FUSED_TRACE builds only), then cleared");
  m.def("trace_layout", [] {
    int slots = 0, tile0 = 0, tiles = 0, phases = 0;
    fused_trace_layout(&slots, &tile0, &tiles, &phases);
    return std::vector<int>{slots, tile0, tiles, phases};
  }, "the trace record's layout: [values per block, first per-tile slot, tiles recorded, phases per tile]");
#endif
}
