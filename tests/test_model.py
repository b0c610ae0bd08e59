"""The reference, ModelNew's parameters and routing, variant discovery, the shape battery (CPU, fast)."""
import shutil

import pytest
import torch

import fused_jit as fj


def test_model_is_the_op():
    torch.manual_seed(0)
    m = fj.Model(8, 12, 5, dilation=2)
    assert m.dw.groups == 8 and m.dw.padding == (4,) and m.dw.dilation == (2,) and m.pw.kernel_size == (1,)
    x = torch.randn(2, 8, 33)
    ref = m.pw(torch.nn.functional.silu(m.dw(x)))
    assert torch.equal(m(x), ref) and m(x).shape == (2, 12, 33)


def test_kernelbench_inputs():
    (x,) = fj.get_inputs()
    assert x.shape == (16, 128, 2048) and x.dtype == torch.float32
    assert fj.get_init_inputs() == [128, 128, 5, 2]


@pytest.mark.parametrize("args", [(128, 128, 5, 2), (3, 7, 4, 3, False)])
def test_modelnew_has_models_parameters(args):
    torch.manual_seed(7)
    ref = fj.Model(*args)
    torch.manual_seed(7)
    new = fj.ModelNew(*args)
    sd_ref, sd_new = ref.state_dict(), new.state_dict()
    assert sd_ref.keys() == sd_new.keys()
    assert all(torch.equal(sd_ref[k], sd_new[k]) for k in sd_ref)
    other = fj.Model(*args)
    other.load_state_dict(new.state_dict())  # both ways
    new.load_state_dict(fj.Model(*args).state_dict())


def test_variants_in_ladder_order():
    names = fj.variants()
    assert names[0] == "cpu" and names[1] == "naive"
    rungs = [fj.variant_info(n).rung for n in names]
    assert rungs == sorted(rungs)
    assert fj.variants("cpu") == ["cpu"]
    assert "cpu" not in fj.variants("cuda")
    with pytest.raises(ValueError, match="unknown variant 'nope'"):
        fj.variant_info("nope")


def test_default_variants_exist_and_qualify():
    assert fj.variant_info(fj.DEFAULT_VARIANT).device == "cuda"
    assert fj.variant_info(fj.DEFAULT_VARIANT).accuracy == "tf32"  # eager's default numerics (TF32 on)
    assert fj.variant_info(fj.FUSED_STRICT).accuracy == "strict"
    assert set(fj.variant_info(fj.FUSED_16BIT).dtypes) == {"bfloat16", "float16"}
    assert fj.DEFAULT_EXPORT_VARIANT == fj.DEFAULT_VARIANT


def test_rule_follows_dtype_and_the_tf32_switch(monkeypatch):
    """ModelNew's fused kernel: TF32 rung for float32 under cuDNN's TF32 switch (PyTorch's default), the strict
    rung with it off, the 16-bit rung for bfloat16/float16; a forced variant always; CPU float32 the CPU variant."""
    from types import SimpleNamespace as NS
    cuda = lambda dt: NS(device=NS(type="cuda"), dtype=dt)
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", True)
    assert fj.preferred_variant(None, cuda(torch.float32)) == fj.DEFAULT_VARIANT
    assert fj.preferred_variant(None, cuda(torch.bfloat16)) == fj.preferred_variant(None, cuda(torch.float16)) == fj.FUSED_16BIT
    assert fj.preferred_variant("tf32_mma", cuda(torch.float32)) == "tf32_mma"
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    assert fj.preferred_variant(None, cuda(torch.float32)) == fj.FUSED_STRICT
    assert fj.preferred_variant(None, NS(device=NS(type="cpu"), dtype=torch.float32)) == "cpu"
    assert fj.preferred_variant(None, NS(device=NS(type="cpu"), dtype=torch.float64)) is None


def test_fused_backward_follows_the_tf32_switch(monkeypatch):
    """backward="fused" (rung 5's TF32 data gradient) runs only where TF32 is on; with it off it is "dw_kernel"
    (cuDNN's strict data gradient, then rung 4), so the strict class holds. Unknown names are refused."""
    from fusedkit.routing import backward_mode
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", True)
    names = ("eager", "dw_kernel", "fused", "wgrad_kernel", "wgrad_fused", "split", "dgrad_kernel", "streams")
    assert [backward_mode(b) for b in names] == [0, 1, 2, 3, 4, 5, 6, 7]
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    assert [backward_mode(b) for b in names] == [0, 1, 1, 1, 1, 1, 1, 7]
    assert fj.DEFAULT_BACKWARD in fj.BACKWARDS
    with pytest.raises(ValueError, match="backward must be one of"):
        fj.ModelNew(8, 8, 3, backward="tc")


def test_empty_batch_and_forced_routes_on_cpu():
    torch.manual_seed(0)
    ref, new = fj.Model(6, 5, 3, 2), fj.ModelNew(6, 5, 3, 2)
    new.load_state_dict(ref.state_dict())
    x0 = torch.randn(0, 6, 40)
    assert new(x0).shape == ref(x0).shape == (0, 5, 40) and new.route(x0).name == fj.EAGER
    x = torch.randn(2, 6, 40)[:, :, ::2]  # not contiguous
    with torch.no_grad():
        torch.testing.assert_close(new(x), ref(x), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"expects x of shape \(batch, 6, time\)"):
        new(torch.randn(2, 7, 40))
    with pytest.raises(ValueError, match="unknown variant"):
        fj.ModelNew(6, 5, 3, variant="nope")
    assert fj.ModelNew(6, 5, 3, variant=fj.EAGER).route(x).name == fj.EAGER


def test_ties_away_build_serves_a_shape_the_tf32_kernel_leaves(monkeypatch):
    """routing.ties_away_build, the rule (fakes for the extension and the probe; the GPU test runs the real ones): where
    the TF32 kernel's probe failed, a float32 shape goes to the TF32 variant's FUSED_TF32_RNA build if that accepts the
    shape and its own probe passes, and to the general path (None) if it refuses the shape or differs from eager too;
    never for another preferred kernel or dtype. Its route name is a spec fj.variant_spec reads back."""
    import fusedkit.routing as routing

    class Ext:
        refusal = None

        def why_unsupported(self, x, *args):
            return self.refusal

    ext, probed, loaded = Ext(), [], []
    monkeypatch.setattr(routing, "load", lambda v, d=None: (loaded.append((v, d)), ext)[1])
    diff = [0.0]
    monkeypatch.setattr(routing, "probe_against_eager", lambda e, x, args: (probed.append(e), (diff[0], 1e-5))[1])
    model = fj.Model(64, 48, 5, 2)
    x, args = torch.randn(2, 64, 100), fj.forward_args(model)
    assert routing.ties_away_build(fj.FUSED_TF32, x, args) is ext and probed == [ext]
    assert loaded[0] == (fj.FUSED_TF32, fj.defines_over_tuned(fj.FUSED_TF32, fj.TF32_TIES_AWAY))
    assert loaded[0][1]["FUSED_TF32_RNA"] == "1"
    diff[0] = 3e-5  # the ties-away build differs from eager as well: the general path
    assert routing.ties_away_build(fj.FUSED_TF32, x, args) is None
    diff[0], ext.refusal = 0.0, "T must be a multiple of 4"
    assert routing.ties_away_build(fj.FUSED_TF32, x, args) is None and len(probed) == 2  # refused: never probed
    ext.refusal = None
    assert routing.ties_away_build(fj.FUSED_STRICT, x, args) is None
    assert routing.ties_away_build(fj.FUSED_16BIT, x, args) is None
    assert routing.ties_away_build(fj.FUSED_TF32, x.double(), args) is None and len(probed) == 2
    name = fj.ties_away_name(fj.FUSED_TF32)
    assert fj.variant_spec(name) == (fj.FUSED_TF32, fj.defines_over_tuned(fj.FUSED_TF32, fj.TF32_TIES_AWAY))


def test_training_gets_eagers_gradients_cpu():
    """Gradients arrive (a residual block, as users train it) and equal eager's."""
    torch.manual_seed(1)
    ref, new = fj.Model(8, 8, 5, 2), fj.ModelNew(8, 8, 5, 2)
    new.load_state_dict(ref.state_dict())
    x = torch.randn(3, 8, 50)
    xr, xn = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    (xr + ref(xr)).square().mean().backward()
    (xn + new(xn)).square().mean().backward()
    torch.testing.assert_close(xn.grad, xr.grad, rtol=1e-5, atol=1e-6)
    for (name, p), q in zip(new.named_parameters(), ref.parameters()):
        assert p.grad is not None and p.grad.abs().sum() > 0, name
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bias", [True, False])
def test_forward_train_is_one_cpp_autograd_node_with_eagers_gradients(bias):
    """ModelNew with gradients on calls the route's forward_train (kernels/eager_autograd.h): one C++ autograd
    node, gradients equal to eager's for whichever inputs want one (here the CPU variant's)."""
    torch.manual_seed(3)
    ref, new = fj.Model(6, 10, 3, 4, bias=bias), fj.ModelNew(6, 10, 3, 4, bias=bias)
    new.load_state_dict(ref.state_dict())
    x = torch.randn(2, 6, 41)
    y = new(x)
    assert "DwSepFunction" in y.grad_fn.name(), y.grad_fn.name()
    gy = torch.randn_like(y)
    y.backward(gy)
    ref(x).backward(gy)
    for (name, p), q in zip(new.named_parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-5, atol=1e-6, msg=name)
    new.zero_grad()
    ref.zero_grad()
    new.dw.weight.requires_grad_(False)  # only some inputs want a gradient: x and the pointwise weights
    xr, xn = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    new(xn).backward(gy)
    ref(xr).backward(gy)
    assert new.dw.weight.grad is None
    torch.testing.assert_close(xn.grad, xr.grad, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(new.pw.weight.grad, ref.pw.weight.grad, rtol=1e-5, atol=1e-6)


def test_the_operator_passes_opcheck_gradcheck_and_compiles_fullgraph():
    """fused_jit::dwsep_conv1d as PyTorch's own tools check an operator (schema, fake tensor, autograd
    registration), float64 gradcheck, torch.compile(fullgraph=True) and torch.export of a model holding it."""
    torch.manual_seed(2)
    m = fj.ModelNew(8, 12, 5, 2)
    for shape, bias in (((2, 8, 33), True), ((1, 8, 7), True), ((3, 8, 64), False)):
        x = torch.randn(*shape, requires_grad=True)
        b_dw, b_pw = (m.dw.bias, m.pw.bias) if bias else (None, None)
        torch.library.opcheck(fj.dwsep_conv1d, (x, m.dw.weight, b_dw, m.pw.weight, b_pw, 2, 4, ""))
    m64 = fj.ModelNew(4, 3, 3, 2).double()
    x64 = torch.randn(2, 4, 9, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, *p: fj.dwsep_conv1d(x, *p, 2, 2, ""),
                                    (x64, m64.dw.weight, m64.dw.bias, m64.pw.weight, m64.pw.bias))
    seq = torch.nn.Sequential(m, torch.nn.GELU())
    x = torch.randn(2, 8, 33)
    with torch.no_grad():
        torch.testing.assert_close(torch.compile(seq, fullgraph=True)(x), seq(x), rtol=1e-5, atol=1e-5)
    ep = torch.export.export(m, (x,))
    assert any("dwsep_conv1d" in str(n.target) for n in ep.graph.nodes)


def test_the_backward_operator_passes_opcheck_and_compiled_training_calls_it():
    """fused_jit::dwsep_conv1d_backward (the operator's gradients) under opcheck, with and without biases and with
    some gradients not wanted; a torch.compile(fullgraph=True) training step calls it (not eager_backward's traced
    ops) and gets eager Model's gradients."""
    torch.manual_seed(3)
    m = fj.ModelNew(8, 12, 5, 2)
    for bias, need in ((True, [True] * 5), (False, [True, True, False, True, False]),
                       (True, [False, True, True, False, False])):
        x = torch.randn(2, 8, 33)
        gy = torch.randn(2, 12, 33)
        b_dw, b_pw = (m.dw.bias.detach(), m.pw.bias.detach()) if bias else (None, None)
        torch.library.opcheck(fj.dwsep_conv1d_backward, (gy, x, m.dw.weight.detach(), b_dw, m.pw.weight.detach(),
                                                         b_pw, 2, 4, need, "", "dw_kernel"))
        got = fj.dwsep_conv1d_backward(gy, x, m.dw.weight.detach(), b_dw, m.pw.weight.detach(), b_pw, 2, 4, need, "",
                                       "dw_kernel")
        want = fj.eager_backward(gy, x, m.dw.weight.detach(), b_dw, m.pw.weight.detach(), b_pw, 2, 4, need)
        for g, w in zip(got, want):
            assert (w is None and g.numel() == 0) or torch.allclose(g, w, rtol=1e-5, atol=1e-6)
    ref = fj.Model(8, 12, 5, 2)
    ref.load_state_dict(m.state_dict())
    x = torch.randn(2, 8, 33)
    g = torch.randn(2, 12, 33)
    xn, xr = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    step = torch.compile(lambda x: (m(x) * g).sum(), fullgraph=True)
    with torch.profiler.profile() as prof:
        step(xn).backward()
    assert "fused_jit::dwsep_conv1d_backward" in {e.name for e in prof.events()}
    (ref(xr) * g).sum().backward()
    for a, b in [(xn, xr)] + list(zip(m.parameters(), ref.parameters())):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-5, atol=1e-6)


def test_variant_arch_from_its_first_line(tmp_path):
    """`arch=` in a kernel's first line is the build arch (rung 09's wgmma/TMA need sm_90a), part of the
    extension's name; other variants build for the visible GPU (sm_90 without one)."""
    assert fj.variant_info("wgmma_tf32").arch == "9.0a"
    assert fj.variant_info("tf32_mma").arch == ""
    kdir = tmp_path / "kernels"
    shutil.copytree(fj.KERNELS_DIR, kdir)
    src = kdir / "05_tf32_mma.cu"
    name_plain, arch_plain, _ = fj.build_plan(fj.variant_info("tf32_mma", kdir), {})
    src.write_text(src.read_text().replace("dtypes=float32", "dtypes=float32 arch=9.0a", 1))
    name_a, arch_a, _ = fj.build_plan(fj.variant_info("tf32_mma", kdir), {})
    assert arch_a == "9.0a" and arch_plain != "9.0a" and name_a != name_plain


def test_battery_covers_the_required_cases():
    b = fj.shape_battery()
    assert b[0] == fj.HEADLINE
    assert any(s["T"] == 1 for s in b)
    assert any(s["T"] < (s["K"] - 1) * s["dilation"] + 1 for s in b)
    assert any(s["C_in"] != s["C_out"] and s["C_in"] < s["C_out"] for s in b)
    assert any(s["B"] == 1 for s in b) and any(not s["bias"] for s in b)
    assert {1, 2, 3, 4, 7, 9} <= {s["K"] for s in b} and {1, 2, 3, 4} <= {s["dilation"] for s in b}
    assert any(s["T"] % 64 and s["T"] > 64 for s in b)


def test_rel_err_catches_nan():
    ref = torch.ones(4, dtype=torch.float64)
    assert fj.rel_err(torch.tensor([1.0, float("nan"), 1.0, 1.0]), ref) == float("inf")
    assert fj.rel_err(torch.ones(4), ref) == 0.0


def test_min_bytes_and_flops_at_headline():
    assert fj.min_bytes(fj.HEADLINE) == pytest.approx(33.6e6, rel=0.01)
    assert fj.flops(fj.HEADLINE) == pytest.approx(1.14e9, rel=0.01)


def test_defaults_are_the_fastest_qualifying_in_the_log():
    """DEFAULT_VARIANT: the fastest H200 variant whose error is no worse than eager's (TF32) default. Read from
    results/."""
    t = fj.ladder_table(fj.read_results(fj.ROOT / "results" / "timings.csv"))
    if t.empty:
        pytest.skip("no H200 bench rows in results/timings.csv")
    f32 = t[t.dtype == "float32"]
    eager_err = float(f32[f32.variant == "eager"].rel_err.iloc[0])
    rungs = f32[~f32.variant.isin(fj.BASELINES) & f32.variant.isin(fj.variants("cuda"))]
    def fastest_within_spread(candidates, name):  # a difference inside the run's p10-p90 spread is noise
        best = candidates.sort_values("median_us").iloc[0]
        mine = candidates[candidates.variant == name]
        assert len(mine), f"{name} not among the qualifying variants"
        assert float(mine.median_us.iloc[0]) <= float(best.p90_us), (name, best.variant)

    fastest_within_spread(rungs[rungs.rel_err <= eager_err * 1.05], fj.DEFAULT_VARIANT)


def test_build_model_trains_the_models_parameters_through_the_extension():
    """fj.BuildModel (a build's training path as a module, for backward_timeline's builds): its forward is the
    extension's forward_train with the model's own parameter tensors and the given mode, so training_step_fn puts
    the gradients on the model's parameters. The extension here is a Python stand-in computing eager's op."""
    seen = []

    class Ext:
        @staticmethod
        def forward_train(x, w_dw, b_dw, w_pw, b_pw, dilation, padding, mode):
            seen.append(mode)
            return fj.eager_forward(x, w_dw, b_dw, w_pw, b_pw, dilation, padding)

    torch.manual_seed(3)
    model = fj.Model(6, 10, 5, dilation=2)
    x = torch.randn(2, 6, 37)
    gy = torch.randn(2, 10, 37)
    want = torch.autograd.grad(model(x.clone().requires_grad_(True)), list(model.parameters()), gy)
    built = fj.BuildModel(Ext, model, fj.BACKWARDS["dgrad_kernel"])
    assert [id(p) for p in built.parameters()] == [id(p) for p in model.parameters()]
    xs = x.clone().requires_grad_(True)
    fj.training_step_fn(built, xs, gy)()
    assert seen == [fj.BACKWARDS["dgrad_kernel"]] and xs.grad is not None
    for p, w in zip(model.parameters(), want):
        torch.testing.assert_close(p.grad, w)
