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
    assert fj.variant_info(fj.DEFAULT_VARIANT).accuracy in ("strict", "tf32")  # no worse than eager's TF32
    assert fj.variant_info(fj.DEFAULT_EXPORT_VARIANT).accuracy == "strict"


def test_routing_tries_the_same_accuracy_class_first():
    """A variant that refuses a shape hands it to the next variant of its own accuracy class (newest first),
    then to the strict ones; every CUDA variant appears once."""
    order = fj.route_candidates("wgmma_tf32", "cuda")
    classes = [fj.variant_info(n).accuracy for n in order]
    assert order[0] == "wgmma_tf32" and sorted(order) == sorted(fj.variants("cuda"))
    first_other = next(i for i, c in enumerate(classes) if c != "tf32")
    assert all(c == "tf32" for c in classes[:first_other]) and "tf32" not in classes[first_other:]
    assert classes[first_other] == "strict"
    assert fj.route_candidates("naive", "cpu") == ["cpu"]  # a CUDA variant never runs CPU input
    strict = fj.route_candidates("wgmma_3xtf32", "cuda")  # rung 10 refuses -> rung 06, then 04 ...
    assert strict[:2] == ["wgmma_3xtf32", "3xtf32_mma"] and fj.variant_info(strict[2]).accuracy == "strict"


def test_variant_arch_from_its_first_line(tmp_path):
    """`arch=` in a kernel's first line is the build arch (rung 09's wgmma/TMA need sm_90a), part of the
    extension's name; other variants build for the visible GPU (sm_90 without one)."""
    assert fj.variant_info("wgmma_tf32").arch == "9.0a"
    assert fj.variant_info("tf32_mma").arch == ""
    kdir = tmp_path / "kernels"
    shutil.copytree(fj.KERNELS_DIR, kdir)
    src = kdir / "05_tf32_mma.cu"
    name_plain, arch_plain, _ = fj._build_plan(fj.variant_info("tf32_mma", kdir), {})
    src.write_text(src.read_text().replace("dtypes=float32", "dtypes=float32 arch=9.0a", 1))
    name_a, arch_a, _ = fj._build_plan(fj.variant_info("tf32_mma", kdir), {})
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
    """DEFAULT_VARIANT: the fastest H200 variant whose error is no worse than eager's (TF32) default;
    DEFAULT_EXPORT_VARIANT: the fastest strict one (KernelBench's allclose 1e-4) built for any GPU (no arch=
    pin: the exported file runs wherever KernelBench does; rung 10 is sm_90a-only). Read from results/."""
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
    strict = rungs[rungs.variant.map(lambda n: fj.variant_info(n).accuracy == "strict" and not fj.variant_info(n).arch)]
    fastest_within_spread(strict, fj.DEFAULT_EXPORT_VARIANT)
