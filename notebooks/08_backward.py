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
# # 8. The backward
#
# **Why.** A block that trains needs five gradients: `dx`, `dW_dw`, `db_dw`, `dW_pw`, `db_pw`. Eager autograd runs
# them as a chain of separate kernels, each reading and writing a full `(B, C, T)` tensor. This lesson counts
# what each gradient needs (bytes and FLOPs), draws how many bytes eager's chain moves against the floor, shows
# ModelNew's training path (one C++ autograd node) and its backward rung, checks every gradient, and, on a
# GPU, times and draws where the time goes.
#
# With `a = silu(v)`, `v = dw(x)`, `y = W_pw a + b_pw` and `g = dL/dy`:
#
# * `dW_pw = g a^T` and `db_pw = sum g` (reductions over B and T),
# * `ga = W_pw^T g` (a GEMM, as large as the forward's),
# * `gv = ga * silu'(v)` with `silu'(v) = s (1 + v (1 - s))`, `s = sigmoid(v)`,
# * `dx[t] = sum_k W_dw[k] gv[t + p - k d]` (the depthwise, transposed), `dW_dw[k] = sum gv[t] x[t - p + k d]`,
#   `db_dw = sum gv`.

# %%
import sys, pathlib  # the repository root (the folder of fused_jit.py) on sys.path: the package is not installed
sys.path.insert(0, str(next(p for p in [pathlib.Path.cwd(), *pathlib.Path.cwd().parents] if (p / "fused_jit.py").is_file())))

# %% tags=["parameters"]
# Parameters (papermill can override them): the problem shape and the timed calls per measurement.
B, C_in, C_out, T, K, dilation = 16, 128, 128, 2048, 5, 2
REPS = 100

# %%
from fusedkit.notebook import *  # np, pd, torch, plt, fj, setup and the lessons' helpers: fusedkit/notebook.py
HAS_GPU, DEVICE, SHAPE, RUN_SHAPE, RUN_REPS, SMALL_SHAPES = setup(B, C_in, C_out, T, K, dilation, REPS)

# %% [markdown]
# ## Bytes and FLOPs, pass by pass
#
# Each tensor of shape `(B, C, T)` in float32 is `4 B C T` bytes (16.8 MB at the headline). Below, every kernel
# of a backward as bytes it must read and write at least (weights are negligible), counted, not measured. Eager
# keeps `x`, `v` and `a` from its forward; ModelNew keeps only `x` (as large as `a`) and recomputes `v` and `a`:
# with `backward='eager'` as two passes of their own, with the default `'dw_kernel'` inside its one kernel, which
# writes `a` for the weight gradient of the 1x1 conv. `'fused'` (rung 5) also computes `ga` inside that kernel, so
# `ga` never travels through memory. The floor of any backward: read `x` and `g`, write `dx`.

# %%
t_out = T + 2 * ((K - 1) * dilation // 2) - dilation * (K - 1)
X, A, G = 4 * B * C_in * T, 4 * B * C_in * t_out, 4 * B * C_out * t_out  # bytes of x, of v/a/ga/gv, of g and y
passes = {
    "eager": [("ga = W^T g", G + A), ("dW_pw, db_pw", G + A), ("gv = silu_backward", 3 * A), ("dx (dw, input)", A + X),
              ("dW_dw (dw, weight)", A + X)],
    "ModelNew, backward='eager'": [("recompute v", X + A), ("recompute a", 2 * A), ("ga = W^T g", G + A),
                                   ("dW_pw, db_pw", G + A), ("gv = silu_backward", 3 * A), ("dx (dw, input)", A + X),
                                   ("dW_dw (dw, weight)", A + X)],
    "ModelNew, backward='dw_kernel'": [("ga = W^T g", G + A), ("dw_silu_backward.cu", 2 * X + 2 * A + G),
                                       ("dW_pw", G + A)],
    "ModelNew, backward='fused'": [("dw_silu_backward_tc.cu", 2 * X + A + G), ("dW_pw", G + A)],
}
floor = X + G + X
flops_gemms = 2 * 2 * B * t_out * C_in * C_out  # ga and dW_pw
rows = [(k, name, b / 1e6) for k, ps in passes.items() for name, b in ps]
table = pd.DataFrame(rows, columns=["path", "pass", "MB"])
print(table.groupby("path", sort=False)["MB"].sum().to_string())
print(f"floor (read x and g, write dx): {floor / 1e6:.1f} MB; the two GEMMs: {flops_gemms / 1e9:.2f} GFLOP")

# %%
fig, ax = plt.subplots(figsize=(9, 3.2))
for i, (path, ps) in enumerate(passes.items()):
    left = 0.0
    for name, b in ps:
        ax.barh(i, b / 1e6, left=left, edgecolor="white")
        ax.text(left + b / 2e6, i, name, ha="center", va="center", fontsize=7, rotation=0)
        left += b / 1e6
ax.axvline(floor / 1e6, color="k", ls="--", label=f"floor {floor / 1e6:.0f} MB")
ax.set_yticks(range(len(passes)), list(passes))
ax.set_xlabel("MB moved at least (counted, not measured)")
ax.set_title(f"backward bytes, pass by pass, B={B} C={C_in}->{C_out} T={T}")
ax.legend(loc="lower right")
fig.tight_layout()
plt.show()

# %% [markdown]
# **Reading it.** Eager's chain moves several times the floor, most of it in the elementwise SiLU backward and
# the depthwise's two backward kernels, which each stream a full tensor. ModelNew's backward rung,
# `kernels/dw_silu_backward.cu`, is one pass between the two GEMMs of the 1x1 conv: it reads `x`, `ga` and `g`,
# recomputes `v`, and writes `dx` and `a`, with both depthwise gradients and the 1x1 conv's bias gradient as
# reductions on the way (the earlier forms of the path, in git history, needed a recompute pass, a SiLU
# pass and bias reductions of their own). What is left above the floor is `ga`'s round trip through memory
# and the weight gradient's second read of `g`: the next rung fuses the GEMM `ga = W^T g` with this kernel as
# its epilogue, so `ga` never reaches memory.
#
# Below, the heart of rung 4 (the vector path, for odd spans and rows of whole float4s): one thread, 8
# consecutive steps, K and the dilation compile-time constants, so each tap is a register and every address
# a register plus an immediate. `x`'s window and `ga` arrive as float4s; `v`, the SiLU terms, `a` and `gv` and
# the K+1 weight-gradient sums all come from the same registers. Shapes it does not take run rung 3 (same file).

# %%
show_source("dw_silu_backward.cu", "auto group = [&](int g) {", "gv[e] = gval;", after=3)

# %% [markdown]
# ## ModelNew's training path
#
# With gradients on, ModelNew makes one call, the route's `forward_train`: a C++ autograd node
# (`kernels/eager_autograd.h`) whose forward is the route's kernel. Its backward (`backward="dw_kernel"`, the
# default when this notebook's outputs were recorded, float32 on CUDA): cuDNN's data gradient of the 1x1 conv
# (`ga`), the backward rung for everything but the 1x1 conv's weight gradient, then cuDNN's weight gradient from
# the rung's `a`. Since 2026-12-04 the default is `backward="dgrad_kernel"`: backward rung 10 (below) in place of
# cuDNN's data gradient where it runs, else the same. `backward="fused"` (rung 5, TF32 on, 32 to 128 channels)
# computes `ga` on tensor cores inside the rung instead; or eager's ops throughout (`backward="eager"`, the
# activations recomputed first). Under `torch.compile` the operator `fused_jit::dwsep_conv1d` takes its place, and
# its backward, the operator `fused_jit::dwsep_conv1d_backward`, runs the same kernels. Every gradient is checked
# below against float64 and against eager's.

# %%
shape = RUN_SHAPE if HAS_GPU else dict(RUN_SHAPE, B=2, T=200)
model, x = fj.make_case(shape, torch.float32, DEVICE, seed=5)
gy = torch.randn_like(model(x))
ref64 = fj.gradients(fj.copy_model(model).double(), x.double(), gy.double())
eager = fj.gradients(model, x, gy)
names = ["dx", "dW_dw", "db_dw", "dW_pw", "db_pw"]
check_rows = []
for mode in fj.BACKWARDS:
    new = fj.ModelNew(shape["C_in"], shape["C_out"], shape["K"], shape["dilation"], backward=mode).to(DEVICE)
    new.load_state_dict(model.state_dict())
    for n, g, e, r in zip(names, fj.gradients(new, x, gy), eager, ref64):
        check_rows.append(dict(backward=mode, grad=n, rel_err_vs_fp64=fj.rel_err(g, r),
                               eager_rel_err_vs_fp64=fj.rel_err(e, r),
                               max_diff_to_eager=fj.max_diff(g, e) / max(1e-30, float(e.abs().max()))))
print("route:", new.route(x).name, "| gradient node:", new(x.clone().requires_grad_(True)).grad_fn.name())
pd.DataFrame(check_rows)

# %% [markdown]
# On the CPU both modes run eager's ops (the backward rung is CUDA code), so every difference is 0. On the H200,
# `backward="eager"` runs eager's very ops (bit-identical under `torch.backends.cudnn.deterministic`; cuDNN may
# otherwise reorder the weight gradient's sums from call to call) and `"dw_kernel"` and `"fused"` are within
# float32 summation order of eager (the last column, relative to the gradient's largest entry), and as close to float64.

# %% [markdown]
# ## Where the time goes (GPU)
#
# Forward + backward (a training step's: gradients set to None first, as `optimizer.zero_grad()` does) and
# backward alone, eager against ModelNew in both modes, with bench's timer (CUDA events, L2 flushed, a spin kernel
# ahead so host launch time is not counted); then a profile of one backward per path, drawn kernel by kernel.
# `scripts/backward_bench.py` does the same over more shapes and logs the rows (kind `backward`).

# %%
if not HAS_GPU:
    print("needs a CUDA GPU: skipped")
else:
    timer = fj.Timer("cuda", spin_cycles=fj.Timer.TRAIN_SPIN_CYCLES)  # a spin longer than autograd's host time
    xs = x.detach().clone().requires_grad_(True)
    paths = {"eager": model}
    for mode in fj.BACKWARDS:
        m = fj.ModelNew(C_in, C_out, K, dilation, backward=mode).cuda()
        m.load_state_dict(model.state_dict())
        paths[f"ModelNew[{mode}]"] = m
    times = {}
    for label, m in paths.items():
        y = m(xs)
        params = [xs, *m.parameters()]
        bwd = lambda y=y, params=params: torch.autograd.grad(y, params, gy, retain_graph=True)  # noqa: E731

        def fwd_bwd(m=m, params=params):
            for p_ in params:
                p_.grad = None
            m(xs).backward(gy)
        times[label] = (np.median(timer.time(fwd_bwd, RUN_REPS)), np.median(timer.time(bwd, RUN_REPS)))
    bw = fj.copy_bandwidth("cuda")
    t = pd.DataFrame(times, index=["fwd+bwd us", "bwd us"]).T
    t["bwd x floor"] = t["bwd us"] / (floor / bw * 1e6)
    print(t.round(2).to_string())
    fig, ax = plt.subplots(figsize=(8, 3))
    t[["fwd+bwd us", "bwd us"]].plot.barh(ax=ax)
    ax.axvline(floor / bw * 1e6, color="k", ls="--", label="backward floor")
    ax.set_xlabel("us (median, L2 flushed)")
    ax.legend()
    plt.show()

# %%
if HAS_GPU:
    prof_rows = []
    for label, m in paths.items():
        y = m(xs)
        torch.autograd.grad(y, [xs, *m.parameters()], gy, retain_graph=True)  # warm: cuDNN's plans made
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            torch.autograd.grad(y, [xs, *m.parameters()], gy)
            torch.cuda.synchronize()
        for e in prof.key_averages():
            if e.device_time_total > 0:
                prof_rows.append(dict(path=label, kernel=e.key[:44], us=e.device_time_total))
    prof_t = pd.DataFrame(prof_rows)
    fig, ax = plt.subplots(figsize=(10, 3.2))
    for i, (label, grp) in enumerate(prof_t.groupby("path", sort=False)):
        left = 0.0
        for _, r in grp.sort_values("us", ascending=False).iterrows():
            ax.barh(i, r.us, left=left, edgecolor="white")
            if r.us > 6:
                ax.text(left + r.us / 2, i, r.kernel[:18], ha="center", va="center", fontsize=6)
            left += r.us
    ax.set_yticks(range(prof_t.path.nunique()), list(prof_t.path.unique()))
    ax.set_xlabel("GPU time of one backward, kernel by kernel (us, L2 warm, torch.profiler)")
    ax.set_title("where the backward's time goes")
    fig.tight_layout()
    plt.show()
    print(prof_t.sort_values(["path", "us"], ascending=[True, False]).round(1).to_string(index=False))

# %% [markdown]
# ## What the log holds
#
# The latest `backward` rows of `results/timings.csv` (written by `scripts/backward_bench.py` on the H200), if
# any: the numbers the docs quote come from there.

# %%
logged = logged_results()
bwd_rows = logged[logged["kind"] == "backward"] if "kind" in logged else logged.iloc[:0]
if bwd_rows.empty:
    print("no backward run logged yet: run scripts/backward_bench.py on the GPU")
else:
    cols = ["timestamp", "commit", "variant", "B", "C_in", "C_out", "T", "K", "dilation", "median_us", "floor_us"]
    print(bwd_rows[[c for c in cols if c in bwd_rows]].tail(24).to_string(index=False))

# %% [markdown]
# The same rows as a picture: at the shape of this notebook, each logged run (commit) of the training step and of
# the backward alone, eager against ModelNew's `'dw_kernel'` backward (the default until 2026-12-04), with the
# backward's byte floor of that run.
# Runs before 0a7b7cb timed the training step without setting the gradients to None, so both paths added their
# dx into an earlier one there; within a run, eager and ModelNew were timed alike.

# %%
if not bwd_rows.empty:
    here = bwd_rows[(bwd_rows.B == B) & (bwd_rows.C_in == C_in) & (bwd_rows.C_out == C_out) & (bwd_rows["T"] == T)
                    & (bwd_rows.K == K) & (bwd_rows.dilation == dilation)]
    runs = list(dict.fromkeys(here.commit))[-5:]  # the last five runs, oldest first
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.2), sharey=True)
    for ax, what in zip(axes, ("fwd+bwd", "bwd")):
        for j, (label, variant) in enumerate((("eager", f"eager {what}"),
                                             ("ModelNew", f"modelnew[dw_kernel] {what}"),
                                             ("ModelNew, rung 5", f"modelnew[fused] {what}"))):
            vals = [here[(here.commit == c) & (here.variant == variant)].median_us.median() for c in runs]
            ax.barh(np.arange(len(runs)) + 0.27 * j, vals, height=0.27, label=label)
        if what == "bwd":
            floors = [here[(here.commit == c) & (here.variant == "eager bwd")].floor_us.median() for c in runs]
            ax.scatter(floors, np.arange(len(runs)) + 0.27, marker="|", s=300, color="k", label="byte floor")
        ax.set_title(f"{what} (logged, median us)")
        ax.legend(fontsize=7, loc="lower right")
    axes[0].set_yticks(np.arange(len(runs)) + 0.27, [c[:7] for c in runs])
    fig.tight_layout()
    plt.show()

# %% [markdown]
# **Interpretation.** The forward's lesson carries over: the backward is memory-bound (two GEMMs of ~1 GFLOP
# against ~100-300 MB of passes), so its speed is the number of full-tensor passes. In the profile, eager's two
# depthwise backward kernels and its bias reductions dominate, not the GEMMs. ModelNew's default path runs four
# kernels that matter: the two cuDNN GEMMs, which are near their own byte times, and the backward rung, the
# largest bar, which runs at well above its byte time (84 MB at the headline; docs/results.md has the numbers
# and what limits it: instruction issue at rung 3, latency and the block's barrier at rung 4). Rung 5 (`'fused'`,
# `ga` computed on tensor cores inside the kernel that consumes it) removes `ga`'s two trips through memory and
# cuDNN's data-gradient kernel, yet its one kernel takes longer than the two it replaces: fewer bytes did not make
# it faster, because it is bound by instruction issue and latency (150-160 instructions per output against rung
# 4's 100: the same SiLU arithmetic plus the GEMM's operand traffic on mma.sync, at 16 warps per SM). Bytes are a
# floor, not a forecast; the profile above shows which kernel pays.
#
# Rung 6 (`'wgrad_kernel'`, kernels/pw_weight_grad.cu, added after this notebook's outputs were recorded at
# ce825df) is the same lesson from the other side: it takes over the weight gradient and db_pw so that rung 4 no
# longer reads dy, and rung 4 did get faster by the 16.8 MB it saves (25 -> 21 us); but the new GEMM kernel reads
# its 33.5 MB at about half the copy rate (24.5-28.4 us against cuDNN's 14.9), so the backward as a whole got
# slower (67.9 against 63.8 us in one run: docs/results.md, "backward rung 6"). How a kernel's reads stream
# (here 256 rows of 128 bytes each per step, 8 KB apart) matters as much as how many bytes it reads.
#
# Rung 7 (kernels/pw_weight_grad_wgmma.cu, the same job on Hopper: TMA boxes into a 6-stage ring, wgmma reading
# both operands from shared memory) took the loads off the warps entirely and closed half the gap: 20.1-21.6 us in
# the backward's profile, against rung 6's 24.5-28.4 and cuDNN's 13.3 + 1.8. Its TMA boxes alone, with no
# rounding and no MMA, take as long as the whole kernel, so the reads still bound it; cuDNN's kernel streams the
# same bytes at 46% of DRAM's peak to its 31% (ncu). The backward with rung 7 ran 65.1 us against the default's
# 65.0 in one run: no gain yet (docs/results.md, "backward rung 7").
#
# Rung 8 (`'wgrad_fused'`, kernels/dw_silu_wgrad_wgmma.cu, also added after the outputs here were recorded) fuses
# rung 4 and rung 7: a block owns a 32-step tile with every channel, so the activations it makes go straight into
# the weight gradient's GEMM from shared memory and never to HBM (67 MB against 100.6 MB for the pair). It is the
# rung 5 lesson again: 58.8 us in the backward's profile against ~41 for rung 4 and cuDNN's weight gradient, the
# backward 81.5 us against the default's 63.8 (docs/results.md, "backward rung 8"). Owning every channel of a tile
# means holding 8 channels' sums per thread beside the GEMM's accumulators and reloading each channel's weights:
# ~180 instructions per output at 16 warps per SM, latency-bound, where rung 4 runs one channel per block with its
# weights in registers at 24 warps per SM. The 'trains' cells above loop over every backward in fj.BACKWARDS;
# re-executed, they would show 'wgrad_fused' too.
#
# Rung 9 (`'split'`, kernels/dgrad_wgrad_wgmma.cu, added after the outputs here were recorded) cuts the other way:
# it holds both of the 1x1 conv's GEMMs and the SiLU's derivative (from x and dy it writes gv = (W_pw^T dy)
# silu'(v), with dW_pw and db_pw), and rung 4 in its gv form keeps the depthwise's sums: 100.6 MB against the
# default's 151. Rung 4's half met its prediction (~15 us); rung 9 took 44-48 us against ~15 predicted, latency-bound
# at 8 warps per SM (64 registers a thread hold W_pw^T for the register-operand GEMM), so the backward ran 74.1 us
# against the default's 63.9 (docs/results.md, "backward rung 9"). Bytes saved do not pay while the kernel that
# saves them cannot keep enough warps in flight.
#
# Rung 10 (`'dgrad_kernel'`, kernels/pw_data_grad_wgmma.cu, added after the outputs here were recorded) replaces
# cuDNN's data gradient instead: ga = W_pw^T dy on TF32 wgmma with dy as the register operand, and db_pw from the
# same reads of dy, so that rung 4 reads no dy (25.8 -> 20.7 us in the profile). Its first form took 19.6 us against
# cuDNN's 11.1; leaving parts out and reading the SASS put the time in instructions, not bytes (W_pw's fill was 3294
# SASS instructions, mostly index math; each store had a guard and a 64-bit index). Written out, 13.0 us against 10.8; the
# backward 65.18 against the default's 64.91 (docs/results.md, "backward rung 10"): what rung 4 saves, the new GEMM
# gives back. Before timing a kernel again, count what it issues. Then the order of its requests: with each
# warpgroup's later dy boxes requested after W_pw's fill instead of all at the start (`PWDG_TMA_LATE=2`), so the
# fill's loads no longer queue behind ~17 MB of dy, rung 10 alone took 19.0 us against 22.0, the backward 61.8 against
# 64.4 and the training step 86.1 against 90.8 us, 2.87x eager's 247.0 (logs/2026-12-04_6f83237_*): `'dgrad_kernel'`
# became the default. Then one launch fewer: where no deterministic algorithms are asked for, rung 4 adds its sums into
# dW_dw and db_dw with atomics (rung 10 zeroed them) and sums db_pw's partials itself, so the finish kernel is gone,
# and rung 4 starts as a programmatic dependent of rung 10 (kernels/pdl.cuh). The backward alone 58.11 against 62.26
# us with the finish (interleaved). Last, rung 4 waits for rung 10's blocks to exit before it launches instead of
# launching beside them (`PWDG_EARLY_TRIGGER=0`): the training step 81.90 against 86.62 us (interleaved), and in
# backward_bench 79.8 us against eager's 244.2, 3.06x (docs/results.md, "Rung 10 without its early trigger"). Under
# `torch.use_deterministic_algorithms(True)` the fixed-order finish runs again.
#
# What did not pay (docs/ladder.md, "Runs of 2026-12-04 (48b10f4..36b39d6)"): the backward's two independent halves on
# two streams (`'streams'`: act recomputed and cuDNN's weight gradient beside the data-gradient chain) ran 74-76 us
# against 64-68 at the headline, since the recompute reads x once more and both chains share DRAM; the batch in two
# chunks, each chunk's weight gradient beside the next chunk, 93 us: cuDNN's GEMMs take 8.5-12 us for half the batch
# against 11-13 for all of it. Concurrency pays only where the kernels leave the GPU idle, not where they share its
# bytes.
