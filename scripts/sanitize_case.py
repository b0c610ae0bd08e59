"""Run one variant on a few small, awkward shapes (for compute-sanitizer memcheck / racecheck).
Usage: compute-sanitizer --tool memcheck python scripts/sanitize_case.py VARIANT[:NAME=VALUE,...] [NAME=VALUE ...]
(NAME=VALUE: compile-time parameters over the variant's tuned ones; the VARIANT:NAME=VALUE form is ab's, and lets
scripts/h200.sh's SANITIZE_VARIANTS name a knob build, e.g. wgmma_tf32:WG_GEMM_WGS=2). VARIANT `general`: the general path's
dw_silu kernel (kernels/dw_silu.cu) in every dtype, against eager. VARIANT `backward`: the depthwise half of the
backward (kernels/dw_silu_backward.cu, rungs 3-4, and dw_silu_backward_tc.cu, rung 5) and the 1x1 conv's weight
gradient (pw_weight_grad.cu, rung 6, or pw_weight_grad_wgmma.cu, rung 7, on sm_90: the shapes with C, C_out >= 32)
through the general path's forward_train, gradients against eager's (mode 3 runs rung 8, dw_silu_wgrad_wgmma.cu, on
sm_90 where it takes the shape); and rungs 7 (or 6) and 8 alone at odd shapes."""
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402

variant, _, knobs = sys.argv[1].partition(":")
knobs = [k for k in knobs.split(",") if k] + sys.argv[2:]
SHAPES = None
if variant == fj.GENERAL:
    worst = 0.0
    for i, s in enumerate([dict(B=2, C_in=8, C_out=3, T=5, K=7, dilation=3, bias=True),
                           dict(B=1, C_in=96, C_out=200, T=1031, K=4, dilation=3, bias=False),
                           dict(B=2, C_in=40, C_out=8, T=300, K=5, dilation=2, bias=True),  # the 512-step tile
                           dict(B=2, C_in=300, C_out=40, T=2100, K=9, dilation=5, bias=True)]):
        for dt in ("float32", "bfloat16", "float16"):
            model, x = fj.make_case(s, fj.DTYPES[dt], "cuda", seed=i)
            m = model.to(x.dtype)
            act = fj.general_kernel().dw_silu(x, m.dw.weight, m.dw.bias, m.dw.dilation[0], m.dw.padding[0])
            torch.cuda.synchronize()
            worst = max(worst, fj.max_diff(act, torch.nn.functional.silu(m.dw(x))))
    print(f"sanitize_case general: max |act - eager's act| = {worst:.3g} (bit-identical: 0)")
    sys.exit(0 if worst == 0 else 1)
if variant == "backward":
    worst = 0.0
    for i, s in enumerate([dict(B=2, C_in=8, C_out=3, T=5, K=7, dilation=3, bias=True),      # T below the span
                           dict(B=1, C_in=24, C_out=16, T=4200, K=4, dilation=3, bias=False),  # 3 tiles, odd T_out
                           dict(B=2, C_in=16, C_out=8, T=1024, K=5, dilation=2, bias=True),   # one full tile (vector)
                           dict(B=3, C_in=8, C_out=20, T=1501, K=9, dilation=4, bias=True),   # runtime K, C_out > C
                           dict(B=2, C_in=12, C_out=12, T=300, K=3, dilation=1, bias=True),   # short rows
                           dict(B=2, C_in=8, C_out=20, T=2052, K=7, dilation=3, bias=True),   # vector path, shifted
                           dict(B=1, C_in=6, C_out=6, T=20, K=9, dilation=4, bias=False),     # vector, T < span
                           dict(B=2, C_in=128, C_out=128, T=256, K=5, dilation=2, bias=True),  # rung 5: headline C
                           dict(B=1, C_in=100, C_out=128, T=132, K=9, dilation=1, bias=True),  # rung 5: C % 16 != 0
                           dict(B=2, C_in=128, C_out=72, T=68, K=3, dilation=1, bias=False),  # rung 5: short tile
                           dict(B=1, C_in=32, C_out=48, T=200, K=7, dilation=1, bias=True),   # rung 5: fewest C
                           dict(B=3, C_in=40, C_out=32, T=4096, K=5, dilation=2, bias=True),  # rung 5: 2 tiles per block
                           dict(B=2, C_in=40, C_out=100, T=1000, K=4, dilation=2, bias=True)]):  # rung 3, then rung 6
        model, x = fj.make_case(s, torch.float32, "cuda", seed=i)
        args = fj.forward_args(model)
        for mode in (fj.BACKWARDS["dw_kernel"], fj.BACKWARDS["fused"], fj.BACKWARDS["wgrad_kernel"],
                     fj.BACKWARDS["wgrad_fused"], fj.BACKWARDS["split"], fj.BACKWARDS["dgrad_kernel"],
                     fj.BACKWARDS["streams"]):
            # rungs 3/4, 5, 6/7, 8, 9 + 4's gv form, 10 + 4, then 1's on two streams
            xs, xr = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
            y = fj.general_kernel().forward_train(xs, *args, mode)
            gy = torch.randn_like(y)
            got = torch.autograd.grad(y, [xs, *model.parameters()], gy)
            want = torch.autograd.grad(model(xr), [xr, *model.parameters()], gy)
            torch.cuda.synchronize()
            here = max(fj.max_diff(a, b) / max(1e-30, float(b.abs().max())) for a, b in zip(got, want))
            if here > 1e-4:
                print(f"sanitize_case backward: {s} mode {mode}: max |grad - eager's| / max |eager's| = {here:.3g}")
            worst = max(worst, here)
    worst_pw = 0.0  # the weight-gradient kernel alone, TF32 operands: ~1e-4 of the max from float64's
    for B, C, C_out, T in [(3, 40, 100, 1000), (1, 33, 128, 4100), (5, 97, 35, 36), (1, 32, 32, 4)]:
        gy = torch.randn(B, C_out, T, device="cuda")
        act = torch.randn(B, C, T, device="cuda")
        dw, db, rung = fj.general_kernel().pw_weight_grad(gy, act)  # rung 7 on sm_90 (TMA + wgmma), else 6
        ref = torch.einsum("bot,bct->oc", gy.double(), act.double())
        worst_pw = max(worst_pw, fj.max_diff(dw[:, :, 0], ref) / float(ref.abs().max()),
                       fj.max_diff(db, gy.double().sum((0, 2))) / float(gy.double().sum((0, 2)).abs().max()))
    worst_dg = 0.0  # rung 10 alone (sm_90): ga and db_pw against float64's of its TF32-rounded operands
    for B, C, C_out, T in [(3, 40, 100, 1000), (1, 33, 128, 4100), (5, 97, 35, 36), (1, 1, 1, 4)] \
            if torch.cuda.get_device_capability() == (9, 0) else []:
        gy = torch.randn(B, C_out, T, device="cuda")
        w = torch.randn(C_out, C, 1, device="cuda")
        ga, db = fj.general_kernel().pw_data_grad(gy, w)
        ref = torch.einsum("oc,bot->bct", fj.tf32_rne(w[:, :, 0]).double(), fj.tf32_rne(gy).double())
        worst_dg = max(worst_dg, fj.max_diff(ga, ref) / float(ref.abs().max()),
                       fj.max_diff(db, gy.double().sum((0, 2))) / float(gy.double().sum((0, 2)).abs().max()))
    # rung 8 alone and backward="split"'s kernels (rung 9 + 4's gv form) alone, on sm_90: every gradient against
    # float64's (fj.dw_wgrad_case, fj.split_case)
    alone = {"r8": (fj.dw_wgrad_case, lambda a_: fj.general_kernel().dw_wgrad_fused(*a_)),
             "r9": (fj.split_case, lambda a_: fj.general_kernel().split_backward(*a_))}
    worst_alone, ran_alone = {k: 0.0 for k in alone}, {k: 0 for k in alone}
    sm90 = torch.cuda.get_device_capability() == (9, 0)
    for key, (case, call) in alone.items():
        for shape in [(3, 40, 100, 1000, 5, 2, True), (1, 33, 128, 4100, 5, 4, False), (5, 97, 35, 36, 3, 3, True),
                      (1, 32, 32, 4, 5, 1, True)] if sm90 else []:
            args, refs, _ = case(*shape)
            got = call(args)
            torch.cuda.synchronize()
            worst_alone[key] = max([worst_alone[key]] + [fj.max_diff(g_, r) / float(r.abs().max())
                                                         for g_, r in zip(got, refs) if r is not None])
            ran_alone[key] += 1
    print(f"sanitize_case backward: worst max |grad - eager's| / max |eager's| = {worst:.3g} (bound 1e-4); "
          f"rung {rung} alone: max |dW_pw, db_pw - float64's| / max = {worst_pw:.3g} (bound 1e-3); "
          f"rung 10 alone: max |ga, db_pw - float64's| / max = {worst_dg:.3g} (bound 1e-5); "
          f"rung 8 alone at {ran_alone['r8']} shapes: max |grad - float64's| / max = {worst_alone['r8']:.3g} "
          "(bound 1e-3); "
          f"rung 9 + 4's gv form at {ran_alone['r9']} shapes: max |grad - float64's| / max = {worst_alone['r9']:.3g} "
          "(bound 1e-3)")
    sys.exit(0 if worst <= 1e-4 and worst_pw <= 1e-3 and worst_dg <= 1e-5 and max(worst_alone.values()) <= 1e-3 else 1)
defines = fj.defines_over_tuned(variant, knobs)
info = fj.variant_info(variant)
shapes = [dict(B=2, C_in=128, C_out=128, T=256, K=5, dilation=2, bias=True),   # the headline's tiles
          dict(B=1, C_in=96, C_out=200, T=131, K=4, dilation=3, bias=False),   # odd everything
          dict(B=2, C_in=8, C_out=3, T=5, K=7, dilation=3, bias=True),        # T below the span
          dict(B=1, C_in=72, C_out=40, T=8960, K=4, dilation=3, bias=False),  # > 1 tile per block, odd T_out
          dict(B=1, C_in=128, C_out=96, T=8960, K=3, dilation=2, bias=True),  # the same, WG_DW_EXTRA's block
          dict(B=9, C_in=16, C_out=24, T=4160, K=3, dilation=1, bias=True),   # 585 64-step tiles: rung 12's
                                                                              # warpgroups take 1-2 each
          dict(B=1, C_in=300, C_out=520, T=1000, K=9, dilation=4, bias=False),  # rung 13's wide kernel: 3 C_out
                                                                                # tiles, the last partial
          dict(B=1, C_in=192, C_out=160, T=777, K=3, dilation=1, bias=True)]   # rung 13, odd padding: its x box
                                                                               # starts off 16 bytes
worst = 0.0
for i, s in enumerate(shapes):
    for dt in info.dtypes:
        model, x = fj.make_case(s, fj.DTYPES[dt], "cuda", seed=i)
        if fj.load(variant, defines).why_unsupported(x, *fj.forward_args(model)):
            continue
        y = fj.run_variant(variant, model, x, defines=defines)
        worst = max(worst, fj.rel_err(y, fj.reference(model, x)) / fj.tolerance(variant, dt))
print(f"sanitize_case {variant} {fj.defines_str(defines)}: worst error / bound = {worst:.3g}")
sys.exit(0 if worst <= 1 else 1)
