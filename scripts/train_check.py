"""Training through ModelNew: a residual stack of blocks x + block(x) (each block the fused op) trained 200 steps
with Adam, once with ModelNew and once with Model, from the same seed and the same batches. The loss curves must
agree within the accuracy class (TF32 by default: both see eager's TF32 1x1 conv), and the step time of each is
reported. Writes results/training_check.png and a CSV of the losses beside it (in --out), prints the step times.
    python scripts/train_check.py [--steps 200] [--out results/logs]"""
import argparse
import sys
import time
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import torch

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402


class Stack(torch.nn.Module):
    def __init__(self, block, depth, C, K, d):
        super().__init__()
        self.blocks = torch.nn.ModuleList(block(C, C, K, d) for _ in range(depth))
        self.head = torch.nn.Conv1d(C, 1, 1)

    def forward(self, x):
        for b in self.blocks:
            x = x + b(x)
        return self.head(x)


def run(block, args, device):
    torch.manual_seed(0)
    net = Stack(block, args.depth, args.C, 5, 2).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    g = torch.Generator(device="cpu").manual_seed(1)
    losses, times = [], []
    for step in range(args.steps):
        x = torch.randn(args.B, args.C, args.T, generator=g).to(device)
        target = x[:, :1].roll(3, dims=2) * 0.5  # a learnable temporal map
        if device == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = torch.nn.functional.mse_loss(net(x), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if device == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        losses.append(float(loss))
    return np.array(losses), np.array(times)


def plot(csv_path, png_path, title):
    """The two loss curves and their relative gap, from the CSV main() writes."""
    df = pd.read_csv(csv_path)
    rel = (df.loss_modelnew - df.loss_model).abs() / df.loss_model.abs()
    t_new, t_ref = df.step_s_modelnew.iloc[10:].median() * 1e3, df.step_s_model.iloc[10:].median() * 1e3
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    ax[0].plot(df.loss_model, label="Model (eager)", lw=2)
    ax[0].plot(df.loss_modelnew, "--", label="ModelNew", lw=1.5)
    ax[0].set_yscale("log")
    ax[0].set_xlabel("step")
    ax[0].set_ylabel("MSE loss")
    ax[0].legend()
    ax[0].set_title(title)
    ax[1].plot(df.step, rel)
    if (rel > 0).any():
        ax[1].set_yscale("log")
    else:
        ax[1].text(0.5, 0.5, "identical losses at every step (gap 0)", ha="center", transform=ax[1].transAxes)
    ax[1].set_xlabel("step")
    ax[1].set_ylabel("|loss ModelNew - loss Model| / loss Model")
    ax[1].set_title(f"step time (median): ModelNew {t_new:.2f} ms, Model {t_ref:.2f} ms")
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--B", type=int, default=16)
    p.add_argument("--C", type=int, default=128)
    p.add_argument("--T", type=int, default=2048)
    p.add_argument("--out", default=str(fj.ROOT / "results"))
    a = p.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    l_new, t_new = run(fj.ModelNew, a, device)
    l_ref, t_ref = run(fj.Model, a, device)
    rel = np.abs(l_new - l_ref) / np.abs(l_ref)
    warm = slice(10, None)
    print(f"final loss ModelNew {l_new[-1]:.6f}  Model {l_ref[-1]:.6f}; max relative gap over {a.steps} steps "
          f"{rel.max():.2e} (median {np.median(rel):.2e})")
    print(f"step time (median after 10 steps): ModelNew {np.median(t_new[warm]) * 1e3:.2f} ms, "
          f"Model {np.median(t_ref[warm]) * 1e3:.2f} ms")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({"step": np.arange(a.steps), "loss_modelnew": l_new, "loss_model": l_ref,
                  "step_s_modelnew": t_new, "step_s_model": t_ref}).to_csv(out / "training_check.csv", index=False)
    plot(out / "training_check.csv", out / "training_check.png",
         f"{a.depth} residual blocks, B={a.B} C={a.C} T={a.T} ({device})")
    return 0 if rel.max() <= 1e-2 else 1


if __name__ == "__main__":
    sys.exit(main())
