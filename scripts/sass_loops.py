"""Instructions per depthwise group, read from a rung's SASS on any machine with nvcc (no GPU): builds the variant's
kernel file with its tuned parameters and the knobs given, disassembles it with line information, and for each loop of
one kernel that holds the SiLU's MUFU instructions walks the common path of one iteration (the guard accepting every
value, a live channel, the store branch without a per-store swizzle) and counts its instructions by what they come
from. The walk is a heuristic (at each branch it takes the side whose next instructions come from fewer cold source
lines); --list prints the path, to read it.

Usage: python scripts/sass_loops.py VARIANT[:NAME=VALUE,...] KERNEL_PATTERN [--list]
  e.g. python scripts/sass_loops.py wgmma_tf32:WG_ROW_GROUPS=0 'Lb0ELi64ELi2ELb1ELi5E' (rung 09, dilation 2, K 5, the
  two-warpgroup form: wg_kernel<float, false, 64, 2, true, 5>)
Needs nvdisasm and cuobjdump: $CUDA_HOME/bin, else the copies triton bundles."""
from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import fusedkit.jit as J  # noqa: E402
from fusedkit.registry import variant_info  # noqa: E402
from fusedkit.timing import variant_spec  # noqa: E402

# source text of the lines off the common path: eager's SiLU (refused values), the per-store swizzle of shifted groups,
# a padded channel's zeros
COLD = ["expf(-v)", "exact(v[i])", "put(tt0", "sAct + cbase + tt * 128", "v[i] = 0.0f"]
# what an instruction's source line is, by its text (first match)
KINDS = [("guard", ("kGuard", "refused", "any |=", "__builtin_expect")), ("fma", ("fmaf(wt",)),
         ("silu", ("ex2.approx", "rcp.approx", "return v * r")), ("round", ("cvt.rn.tf32",)),
         ("lds", ("float4 w =",)), ("sts", ("reinterpret_cast<float*>(p) = v",))]


def tool(name: str) -> str:
    """nvdisasm / cuobjdump from the CUDA toolkit, else from triton's bundle."""
    for d in [Path(J.cuda_home() or "/usr/local/cuda") / "bin"]:
        if (d / name).exists():
            return str(d / name)
    try:
        import triton
        p = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / name
        if p.exists():
            return str(p)
    except ImportError:
        pass
    found = shutil.which(name)
    if not found:
        raise SystemExit(f"{name} not found (CUDA_HOME/bin, triton's bundle, PATH)")
    return found


def compile_object(kernel: Path, defines: dict, work: Path, arch: str = "9.0a", lineinfo: bool = False):
    """One kernel file alone, as a build's CUDA source sees it (FUSED_CUDA, the arch's preamble, the defines), into
    work/<stem>.o with nvcc: (the object, "") or (None, nvcc's message)."""
    work.mkdir(parents=True, exist_ok=True)
    src = work / f"{kernel.stem}.cu"
    src.write_text("#define FUSED_CUDA 1\n" + J.sm90a_define(arch) + "".join(f"#define {k} {v}\n" for k, v in defines.items())
                   + f'#include "{kernel}"\n')
    obj, sm = work / f"{kernel.stem}.o", arch.replace(".", "")
    r = subprocess.run([str(Path(J.cuda_home() or "/usr/local/cuda") / "bin" / "nvcc"), "-std=c++17", "-O3",
                        *(["-lineinfo"] if lineinfo else []), f"-gencode=arch=compute_{sm},code=sm_{sm}",
                        f"-I{kernel.parent}", "-c", str(src), "-o", str(obj)], cwd=work, capture_output=True, text=True)
    return (obj, "") if r.returncode == 0 else (None, r.stderr)


def disassemble(spec: str, work: Path) -> Path:
    variant, defines = variant_spec(spec)  # its tuned parameters, with the knobs given
    v = variant_info(variant)
    defines = defines if defines is not None else J.defines_over_tuned(variant, {})
    obj, err = compile_object(v.path, defines, work, v.arch or "9.0a", lineinfo=True)
    if obj is None:
        raise SystemExit(f"nvcc failed on {v.path.name} with {defines}:\n{err}")
    subprocess.run([tool("cuobjdump"), "-xelf", "all", str(obj)], check=True, cwd=work, capture_output=True)
    cubin = next(work.glob("*.cubin"))
    out = work / "k.dis"
    with open(out, "w") as f:
        subprocess.run([tool("nvdisasm"), "--print-line-info", "-c", str(cubin)], check=True, stdout=f)
    return out


def parse(path: Path, pattern: str):
    """The instructions (address, text, (file, line)) of the first kernel whose name holds `pattern`, and its labels."""
    ins, labels, pending, on, src, done = [], {}, [], False, None, False
    for line in open(path):
        if line.startswith("//-----") and ".text." in line:
            if on:
                done = True
            on = pattern in line and not done
            continue
        if not on:
            continue
        m = re.search(r'//## File "([^"]+)", line (\d+)', line)
        if m:
            src = (m.group(1), int(m.group(2)))
            continue
        m = re.match(r"^(\.L_x_\d+):", line.strip())
        if m:
            pending.append(m.group(1))
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", line)
        if m:
            a = int(m.group(1), 16)
            labels.update({lab: a for lab in pending})
            pending = []
            ins.append((a, m.group(2), src))
    return ins, labels


_lines: dict[str, list[str]] = {}


def text(src) -> str:
    if not src:
        return ""
    f, n = src
    if f not in _lines:
        _lines[f] = Path(f).read_text().split("\n") if Path(f).exists() else []
    return _lines[f][n - 1] if 0 < n <= len(_lines[f]) else ""


def target(t: str, labels: dict) -> int | None:
    m = re.search(r"\((\.L_x_\d+)\)", t) if "BRA" in t else None
    return labels.get(m.group(1)) if m else None


def common_path(ins, labels, lo: int, hi: int):
    """One iteration of the loop [lo, hi] along its common path."""
    at = {a: i for i, (a, _, _) in enumerate(ins)}
    cold = lambda j: sum(any(c in text(ins[k][2]) for c in COLD) for k in range(j, min(j + 6, len(ins))))  # noqa: E731
    i, path, seen = at[lo], [], set()
    while ins[i][0] not in seen:
        a, t, s = ins[i]
        seen.add(a)
        path.append(ins[i])
        dest = target(t, labels)
        if dest == lo or "EXIT" in t:
            break
        if dest is not None and (not t.startswith("@") or cold(at[dest]) < cold(i + 1)):
            i = at[dest]
            continue
        i += 1
        if i >= len(ins) or ins[i][0] > hi:
            break
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spec", help="VARIANT[:NAME=VALUE,...]")
    ap.add_argument("pattern", help="a substring of the kernel's mangled name")
    ap.add_argument("--list", action="store_true", help="print each loop's common path, less its FMA and SiLU lines")
    ap.add_argument("--max-body", type=int, default=900, help="skip loops longer than this")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ins, labels = parse(disassemble(args.spec, Path(tmp)), args.pattern)
    if not ins:
        raise SystemExit(f"no kernel matching {args.pattern!r}")
    print(f"{args.spec} {args.pattern}: {len(ins)} instructions in the kernel")
    loops = sorted({(target(t, labels), a) for a, t, _ in ins if (target(t, labels) or a) < a})
    mufu = [(lo, hi) for lo, hi in loops if any("MUFU" in t for a, t, _ in ins if lo <= a <= hi)]
    for lo, hi in mufu:
        body = [x for x in ins if lo <= x[0] <= hi]
        if len(body) > args.max_body or any(lo <= l2 and h2 <= hi and (l2, h2) != (lo, hi) for l2, h2 in mufu):
            continue  # an outer loop (a tile loop holding a group loop)
        path = common_path(ins, labels, lo, hi)
        kinds = collections.Counter(next((k for k, keys in KINDS if any(key in text(s) for key in keys)), "other")
                                    for _, _, s in path)
        print(f"loop {lo:#x}-{hi:#x}: {len(body)} instructions, common path {len(path)}: "
              + " ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
        if args.list:
            for a, t, s in path:
                if not any(key in text(s) for key in ("fmaf(wt", "ex2.approx", "rcp.approx", "return v * r")):
                    print(f"    {a:#07x} {t[:60]:60s} {Path(s[0]).name if s else ''}:{s[1] if s else ''}")


if __name__ == "__main__":
    main()
