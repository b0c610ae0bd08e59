"""Does a change leave the timed kernels' machine code alone? Builds every kernels/*.cu of the working tree and of a git
revision with nvcc (no GPU needed), each rung with the tuned parameters results/tuned.json holds for one GPU (and knobs
given), disassembles both with cuobjdump and compares them function by function: instructions and their control bits,
addresses and the anonymous namespace's per-file hash left out. Prints one line a file, and the functions that differ.

Usage: python scripts/sass_diff.py REV [--files 09_wgmma_tf32,13_wgmma_wide] [--define NAME=VALUE ...] [--both NAME=VALUE ...]
                                      [--gpu NAME] [--show LINES]
  e.g. python scripts/sass_diff.py HEAD            (the uncommitted change)
       python scripts/sass_diff.py ac14c1e --files 09_wgmma_tf32,10_wgmma_3xtf32,11_wgmma_bf16,13_wgmma_wide
  --define applies to the working tree's build only (a knob that should change nothing by default: set it to its
  default; one that should change a kernel: see which); --both to both builds, over the tuned set (a configuration a
  knob plan times as its baseline, e.g. --files 11_wgmma_bf16 --both TILE_T=64). Exit status 1 where any function differs
  or a build fails."""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from fusedkit.config import ROOT  # noqa: E402
from fusedkit.registry import variant_info, variants  # noqa: E402
from sass_loops import compile_object, tool  # noqa: E402

ANON = re.compile(r"_GLOBAL__N__[0-9a-f]+_\d+_\w+?_cu_[0-9a-f]+")  # differs with the source file's path
ADDR = re.compile(r"/\*[0-9a-f]{4,8}\*/")  # an instruction's address (its encoding's comment holds 0x)


def functions(sass: str) -> dict[str, list[str]]:
    out, cur = {}, None
    for line in sass.splitlines():
        line = ANON.sub("ANON", line)
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            cur = out.setdefault(m.group(1), [])
        elif cur is not None and "/*" in line:
            cur.append(ADDR.sub("", line).strip())  # an instruction and its encoding, or its control bits
    return out


def instructions(lines: list[str]) -> int | str:
    """How many instructions a function's lines hold (the others are control bits), '-' where it is absent."""
    return sum(not t.startswith("/*") for t in lines) or "-"


def build(kdir: Path, stem: str, defines: dict, work: Path) -> tuple[dict | None, str]:
    """One kernel file's functions (None and nvcc's message where it fails)."""
    obj, err = compile_object(kdir / f"{stem}.cu", defines, work)
    if obj is None:
        return None, err[-1500:]
    s = subprocess.run([tool("cuobjdump"), "-sass", str(obj)], capture_output=True, text=True, check=True).stdout
    return functions(s), ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev", help="the git revision to compare the working tree's kernels against")
    ap.add_argument("--files", default="", help="kernel files by stem, comma-separated (default: every kernels/*.cu)")
    ap.add_argument("--define", action="append", default=[], metavar="NAME=VALUE", help="a knob of the tree's build")
    ap.add_argument("--both", action="append", default=[], metavar="NAME=VALUE",
                    help="a parameter of both builds, over the tuned set")
    ap.add_argument("--gpu", default="NVIDIA H200", help="whose tuned parameters (results/tuned.json)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--show", type=int, default=0, metavar="LINES",
                    help="print this many lines of a unified diff of each differing function's instructions")
    a = ap.parse_args()
    extra = dict(d.split("=", 1) for d in a.define)
    both = dict(d.split("=", 1) for d in a.both)
    tuned = json.loads((ROOT / "results" / "tuned.json").read_text()).get(a.gpu, {})
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "old"
        old.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", a.rev, "kernels"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
        new_k, old_k = ROOT / "kernels", old / "kernels"
        stems = a.files.split(",") if a.files else sorted(p.stem for p in new_k.glob("*.cu"))
        rungs = {variant_info(v).path.stem: v for v in variants()}  # kernels/NN_name.cu -> its variant
        jobs = []
        with cf.ThreadPoolExecutor(a.jobs) as ex:
            for stem in stems:
                d = {**tuned.get(rungs.get(stem, ""), {}), **both}
                jobs.append((stem, ex.submit(build, old_k, stem, d, Path(tmp) / "o_old"),
                             ex.submit(build, new_k, stem, {**d, **extra}, Path(tmp) / "o_new")))
            status = 0
            for stem, fo, fn in jobs:
                (fa, ea), (fb, eb) = fo.result(), fn.result()
                if fa is None or fb is None:
                    print(f"{stem}: BUILD FAILED ({'revision' if fa is None else 'tree'})\n{ea or eb}")
                    status = 1
                    continue
                diff = sorted(n for n in set(fa) | set(fb) if fa.get(n) != fb.get(n))
                print(f"{stem}: {len(fb)} functions, " + ("identical" if not diff else f"{len(diff)} differ"))
                for n in diff:
                    print(f"    {n[:110]}: {instructions(fa.get(n, []))} -> {instructions(fb.get(n, []))} instructions")
                    if a.show:
                        ins = [[t for t in f.get(n, []) if not t.startswith("/*")] for f in (fa, fb)]
                        print("\n".join(list(difflib.unified_diff(*ins, "revision", "tree", n=1, lineterm=""))[2:2 + a.show]))
                status |= bool(diff)
    return status


if __name__ == "__main__":
    sys.exit(main())
