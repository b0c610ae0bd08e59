"""A/B of one variant's forward across commits: the variant built from each given copy of kernels/ (an earlier
commit's, e.g. `git archive REV kernels | tar -x -C .ab/REV`; .ab/ is ignored) and from the working tree, timed in
turn with bench's timer (CUDA events, L2 flushed; interleaved, each call primed) at the headline. Every output is
checked against the working tree's forward first, bit for bit. Rows go to the results log (kind 'forward_ab'); the printed
table is the run's record.
    python scripts/forward_ab.py [--variant wgmma_wide] [--reps 200] LABEL=KERNELS_DIR ..."""
import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import fused_jit as fj  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("builds", nargs="*", help="LABEL=KERNELS_DIR (the working tree's kernels/ is always 'tree')")
    p.add_argument("--variant", default="wgmma_wide")
    p.add_argument("--reps", type=int, default=200)
    a = p.parse_args()
    exts = {}
    for spec in a.builds:
        label, _, path = spec.partition("=")
        if not path or not Path(path).is_dir():
            p.error(f"{spec!r}: expected LABEL=DIR with DIR a copy of kernels/")
        exts[label] = fj.load(a.variant, kernels_dir=Path(path).resolve())
    exts["tree"] = fj.load(a.variant)  # (its tuned parameters, as ModelNew builds it)
    model, x = fj.make_case(fj.HEADLINE, torch.float32, "cuda", seed=7)
    args = fj.forward_args(model)
    with torch.no_grad():
        want = exts["tree"].forward(x, *args)
        fns = {label: (lambda e=ext: e.forward(x, *args)) for label, ext in exts.items()}
        for label, fn in fns.items():
            y = fn()
            if not torch.equal(y, want):
                print(f"{label}: y differs from the tree's forward (max |diff| {fj.max_diff(y, want):.3g}): not timed")
                return 1
        timer, env = fj.Timer("cuda"), fj.environment("cuda")
        t = timer.time_interleaved(list(fns.values()), a.reps)
    labels = list(fns)
    rows = fj.interleaved_rows("forward_ab", env, [f"{a.variant}[{k}]" for k in labels], labels, fj.HEADLINE, t,
                               base="tree", note=f"forward_ab of {', '.join(labels)}")
    fj.append_results(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
