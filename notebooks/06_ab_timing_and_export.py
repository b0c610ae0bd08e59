# ---
# jupyter:
#   jupytext:
#     cell_metadata_filter: -papermill,-execution
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 6. A/B timing, the ladder, and the copy-paste `ModelNew`
#
# **Why.** Two medians from two separate runs differ for reasons that have nothing to do with the kernels:
# clocks, temperature, other work on the machine. To decide whether A is faster than B, `fj.ab` runs them
# *interleaved* (A B A B ...), with the L2 flushed before every call, and takes the ratio `t_A / t_B` pair by
# pair: drift hits both members of a pair alike. The median ratio comes with a 95% bootstrap interval, and the
# verdict is "faster" or "slower" only when the whole interval is on one side of 1. Then we plot the whole ladder
# from the results log, and export a self-contained KernelBench `ModelNew` file and prove it matches `Model`.

# %%
import sys, pathlib  # the repository root (the folder of fused_jit.py) on sys.path: the package is not installed
sys.path.insert(0, str(next(p for p in [pathlib.Path.cwd(), *pathlib.Path.cwd().parents] if (p / "fused_jit.py").is_file())))

# %% tags=["parameters"]
# Parameters (papermill can override them): the problem shape and the timed calls per measurement.
B, C_in, C_out, T, K, dilation = 16, 128, 128, 2048, 5, 2
REPS = 200

# %%
from fusedkit.notebook import *  # np, pd, torch, plt, fj, setup and the lessons' helpers: fusedkit/notebook.py
HAS_GPU, DEVICE, SHAPE, RUN_SHAPE, RUN_REPS, SMALL_SHAPES = setup(B, C_in, C_out, T, K, dilation, REPS)

# %% [markdown]
# ## A/B: two rungs
#
# The fp32 CUDA-core rung against the TF32 tensor-core rung (both outputs are checked against float64 before
# any timing).

# %%
from fusedkit.notebook import show_ab, tf32_off  # an fj.ab result in one line; strict fp32 (used below)

if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the CPU variant against CPU eager stands in, on a small shape)")
    ab_rungs = fj.ab("cpu", "eager", shape=RUN_SHAPE, reps=max(RUN_REPS, 10))
else:
    ab_rungs = fj.ab("vectorized_pipelined", "tf32_mma", shape=SHAPE, reps=REPS)
show_ab(ab_rungs)

# %% [markdown]
# ## A/B: a rung against eager PyTorch
#
# `ModelNew`'s default variant (`fj.DEFAULT_VARIANT`) against eager PyTorch as users run it.

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped")
    ab_eager = None
else:
    ab_eager = fj.ab(fj.DEFAULT_VARIANT, "eager", shape=SHAPE, reps=REPS)
    show_ab(ab_eager)

# %%
ab_table = pd.DataFrame([r for r in (ab_rungs, ab_eager) if r is not None])
ab_table[["a", "b", "median_a_us", "median_b_us", "ratio", "ci_low", "ci_high", "verdict"]]

# %% [markdown]
# **Interpretation.** Read the interval, not just the ratio: when it excludes 1, the verdict is solid at this
# shape on this GPU; "within noise" means the two cannot be told apart with this many pairs. The medians
# printed next to the ratio come from the interleaved run and may differ slightly from the `fj.bench` medians
# of earlier notebooks; the ratio is the number to trust for the comparison. Both A/B runs are in the results
# log as rows of kind `ab`.

# %% [markdown]
# ## The ladder, from the results log
#
# `fj.plot_ladder` takes the latest GPU `bench` row of each rung and baseline at the headline shape from the
# results log, and draws the rungs as bars (log scale, p10-p90 whiskers) with the memory floor, eager and
# `torch.compile` as lines.

# %%
results = fj.read_results()
print(f"results log {fj.RESULTS_CSV}: {len(results)} rows")
fig = fj.plot_ladder(results)
plt.show()

# %%
ladder = fj.ladder_table(results)
if ladder.empty:
    print("no GPU bench rows at the headline shape in this log yet (they come from running notebooks 1-5 on a GPU)")
else:
    print(ladder[["variant", "dtype", "median_us", "p10_us", "p90_us", "rel_err", "x_floor",
                  "speedup_vs_eager"]].to_string(index=False, float_format="{:.3g}".format))

# %% [markdown]
# ## The copy-paste `ModelNew`
#
# `fj.export_modelnew` writes one file in the KernelBench format: the kernel and launcher sources inlined as
# strings, a module-level `load_inline`, and `class ModelNew` with `Model`'s constructor and `dw`/`pw`
# parameters. It needs nothing from this repository. We write it into a temporary folder, import it under a
# fresh module name with `importlib` (as a KernelBench harness would), build `Model` and `ModelNew` from the
# same seed and compare their outputs on random inputs.

# %%
import re, tempfile
export_dir = pathlib.Path(tempfile.mkdtemp(prefix="modelnew_"))
export_path = fj.export_modelnew(path=export_dir / "modelnew_fused.py")
text = export_path.read_text()
imports_repo = re.search(r"^\s*(import|from)\s+fused_jit", text, re.M) is not None
print(f"{export_path} ({len(text.splitlines())} lines, {len(text) / 1e3:.0f} kB); imports fused_jit: {imports_repo}")
print("\n".join(text.splitlines()[:12]))
print("...")
start = text.index("fused = load_inline(")
print(text[start:])

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped (the exported file builds a CUDA extension); fj.ModelNew on CPU stands in below")
else:
    import importlib.util, time
    spec = importlib.util.spec_from_file_location(f"kb_modelnew_{export_path.stat().st_mtime_ns}", export_path)
    kb = importlib.util.module_from_spec(spec)
    t0 = time.perf_counter()
    spec.loader.exec_module(kb)  # compiles the inlined sources (cached by torch after the first time)
    print(f"imported {spec.name} in {time.perf_counter() - t0:.0f} s")

    init = [C_in, C_out, K, dilation]
    torch.manual_seed(42)
    ref = fj.Model(*init).cuda()
    torch.manual_seed(42)
    new = kb.ModelNew(*init).cuda()
    print("same parameters:", all(torch.equal(a, b) for a, b in zip(ref.state_dict().values(), new.state_dict().values())))
    with torch.no_grad(), tf32_off():
        for trial in range(3):
            x = torch.randn(B, C_in, T, device="cuda")
            y_ref, y_new = ref(x), new(x)
            print(f"trial {trial}: allclose(atol=rtol=1e-4) {torch.allclose(y_new, y_ref, atol=1e-4, rtol=1e-4)}, "
                  f"max |diff| {float((y_new - y_ref).abs().max()):.2e}, "
                  f"rel. err vs float64 {fj.rel_err(y_new, fj.reference(ref, x)):.2e}")

# %%
# fj.ModelNew: the same drop-in inside this repository (on CPU input it runs the CPU variant).
shape = RUN_SHAPE
torch.manual_seed(7)
ref = fj.Model(shape["C_in"], shape["C_out"], shape["K"], shape["dilation"]).to(DEVICE)
torch.manual_seed(7)
new = fj.ModelNew(shape["C_in"], shape["C_out"], shape["K"], shape["dilation"]).to(DEVICE)
with torch.no_grad(), tf32_off():
    x = torch.randn(shape["B"], shape["C_in"], shape["T"], device=DEVICE)
    y_ref, y_new = ref(x), new(x)
runs = new.variant if HAS_GPU else "the CPU variant, as for any CPU input"
print(f"fj.ModelNew ({runs}) vs fj.Model at {shape}: "
      f"allclose(atol=rtol=1e-4) {torch.allclose(y_new, y_ref, atol=1e-4, rtol=1e-4)}, "
      f"max |diff| {float((y_new - y_ref).abs().max()):.2e}")

# %% [markdown]
# **Interpretation.** Seeding before construction gives both models the same weights (the parameter check
# prints it), so any difference in the outputs is the kernel's. The reference runs with cuDNN's TF32 off, since
# an fp32 eager reference with TF32 on is itself only TF32-accurate. The exported file's agreement, and its
# error against float64, are printed per trial; a strict-class export should pass KernelBench's
# `allclose(1e-4)` with a wide margin. The file is what you paste into a KernelBench submission.
