"""The JIT: build a variant (or a helper extension) with load_inline on first use, cache it across processes.

Nothing happens at import: the CUDA toolkit is looked up (through nvcc wrapper scripts) at the first build."""
from __future__ import annotations

import functools
import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import re
import shutil
import sys
import threading
import warnings
from pathlib import Path

import torch
from filelock import FileLock

from . import config
from .config import LAUNCHER, BACKWARD_KERNELS, ROOT
from .registry import Variant, variant_info

HOST_CFLAGS = ("-O3", "-fopenmp")  # every build's C++ flags (the CPU variant's OpenMP; harmless elsewhere)


class KernelBuildError(RuntimeError):
    """A variant failed to compile; the message starts with the compiler's error lines (kernels/ file:line)."""

    def first_error(self) -> str:
        """The compiler's first error line (the message's second line; the whole message where it has one)."""
        lines = str(self).splitlines()
        return lines[1] if len(lines) > 1 else str(self)


_cuda_home: list = []


def cuda_home() -> str | None:
    """The CUDA toolkit the builds use (looked up once, at the first call)."""
    if not _cuda_home:
        _cuda_home.append(_find_cuda_home())
    return _cuda_home[0]


def _cpp_extension():
    """torch.utils.cpp_extension, imported at the first build with CUDA_HOME set to the real toolkit (torch would
    guess /usr/local from an nvcc wrapper script in /usr/local/bin and fail to link)."""
    home = cuda_home()
    if home:
        os.environ["CUDA_HOME"] = home
    logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)  # "No CUDA runtime is found" on CPU hosts
    import torch.utils.cpp_extension as ext
    if home:
        ext.CUDA_HOME = home
    return ext


def _find_cuda_home() -> str | None:
    """The real CUDA toolkit: $CUDA_HOME if valid, else nvcc's own folder (through wrapper scripts), else
    /usr/local/cuda. torch would guess /usr/local from a wrapper script in /usr/local/bin and fail to link."""
    def valid(p):
        return p and (Path(p) / "bin" / "nvcc").is_file() and any(
            (Path(p) / d).is_dir() for d in ("lib64", "targets"))
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        real = Path(nvcc).resolve()
        candidates.append(str(real.parent.parent))
        with contextlib.suppress(OSError, UnicodeDecodeError):  # a wrapper script: `exec /path/to/nvcc "$@"`
            m = re.search(r"(/\S+)/bin/nvcc", real.read_text()[:4096])
            if m:
                candidates.append(m.group(1))
    candidates += ["/usr/local/cuda"] + sorted((str(p) for p in Path("/usr/local").glob("cuda-*")), reverse=True)
    return next((str(Path(c).resolve()) for c in candidates if valid(c)), None)


_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


_loaded: dict = {}


_failed: dict = {}


def build_root() -> Path:
    """Where built extensions live: $TORCH_EXTENSIONS_DIR if set, else the git-ignored .cache/ here."""
    root = Path(os.environ.get("TORCH_EXTENSIONS_DIR") or ROOT / ".cache" / "torch_extensions")
    root.mkdir(parents=True, exist_ok=True)
    return root


def cuda_arch() -> str:
    if os.environ.get("TORCH_CUDA_ARCH_LIST"):
        return os.environ["TORCH_CUDA_ARCH_LIST"]
    if torch.cuda.is_available():
        major, minor = torch.cuda.get_device_capability()
        return f"{major}.{minor}"
    return "9.0"  # no GPU here (CI): build for the H200


def sm90a_define(arch: str) -> str:
    """The preamble line of a build for sm_90a (the wgmma rungs', and the general path's on sm_90): such builds also
    hold backward rung 7 (kernels/pw_weight_grad_wgmma.cu: wgmma + TMA), which needs the arch's own instructions."""
    return "#define FUSED_SM90A 1\n" if arch == "9.0a" else ""


def _with_headers(path: Path, kdir: Path, seen: set | None = None) -> list[Path]:
    """`path` and every local header it includes, recursively (each once)."""
    seen = set() if seen is None else seen
    if path in seen:
        return []
    seen.add(path)
    files = [path]
    for inc in _INCLUDE.findall(path.read_text()):
        if (kdir / inc).is_file():
            files += _with_headers(kdir / inc, kdir, seen)
    return files


def source_hash(variant: str, kernels_dir: Path | None = None) -> str:
    """Content hash (12 hex) of a variant's kernel file and the headers it includes: logged with every result."""
    v = variant_info(variant, kernels_dir)
    h = hashlib.sha256()
    for f in _with_headers(v.path, v.path.parent):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def backward_sources(kdir: Path) -> list[Path]:
    """The backward's CUDA files in `kdir`, in config.BACKWARD_KERNELS' order (one translation unit with the
    forward's); an earlier commit's kernels/ (scripts/backward_ab.py) may lack the later ones."""
    return [kdir / f for f in BACKWARD_KERNELS if (kdir / f).is_file()]


def build_plan(v: Variant, defines: dict | None):
    """Extension name (content-hashed), sources and flags for one variant + compile-time defines."""
    kdir = v.path.parent
    preamble = f'#line 1 "<fused_jit defines for {v.name}>"\n#define FUSED_VARIANT "{v.name}"\n'
    # CUDA builds link the depthwise half of the backward (kernels/dw_silu_backward.cu; eager_autograd.h uses it)
    preamble += "#define FUSED_CUDA 1\n#define DWSEP_BACKWARD_KERNEL 1\n" if v.device == "cuda" else ""
    arch = (v.arch or cuda_arch()) if v.device == "cuda" else "-"
    preamble += sm90a_define(arch)
    preamble += "".join(f"#define {k} {val}\n" for k, val in sorted((defines or {}).items()))

    def with_line(path: Path) -> str:  # compiler messages name kernels/<file>:<line>, not the build copy
        return f'#line 1 "{path}"\n{path.read_text()}'

    launcher = kdir / LAUNCHER
    backward = backward_sources(kdir)  # the depthwise half of the backward, linked into every CUDA variant
    if v.device == "cuda":
        cpp, cuda = [preamble + with_line(launcher)], [preamble + "\n".join(map(with_line, [v.path, *backward]))]
    else:
        cpp, cuda = [preamble + with_line(launcher), preamble + with_line(v.path)], None
    cflags = list(HOST_CFLAGS)  # one set for every build, so one precompiled torch header serves them all
    cuda_flags = ["-O3", "-lineinfo", "-std=c++17"]
    ldflags = ["-fopenmp"]
    h = hashlib.sha256()
    files = _with_headers(v.path, kdir) + _with_headers(launcher, kdir) + (
        [f for b in backward for f in _with_headers(b, kdir)] if v.device == "cuda" else [])
    for part in [*(f.name.encode() + f.read_bytes() for f in files), preamble.encode(), repr(
            (cflags, cuda_flags, ldflags, arch, torch.__version__, torch.version.cuda, sys.version_info[:2],
             str(kdir))).encode()]:
        h.update(part + b"\0")
    name = f"fused_{v.name}_{h.hexdigest()[:16]}"
    kwargs = dict(cpp_sources=cpp, cuda_sources=cuda, extra_cflags=cflags, extra_cuda_cflags=cuda_flags,
                  extra_ldflags=ldflags, extra_include_paths=[str(kdir)], with_cuda=v.device == "cuda",
                  no_implicit_headers=True)  # the sources include what they need; kernels stay torch-free
    return name, arch, kwargs


def tuned_table() -> dict:
    """results/tuned.json: {GPU name: {variant: {parameter: value}}} ({} if absent)."""
    import json
    return json.loads(config.TUNED_JSON.read_text()) if config.TUNED_JSON.is_file() else {}


def tuned_defines(variant: str) -> dict:
    """The compile-time parameters `sweep` found best for this variant on the visible GPU ({} if none)."""
    if not torch.cuda.is_available():
        return {}
    return dict(tuned_table().get(torch.cuda.get_device_name(), {}).get(variant, {}))


def defines_over_tuned(variant: str, given) -> dict:
    """The variant's tuned parameters with `given` set over them: a dict, or "NAME=VALUE" strings."""
    if not isinstance(given, dict):
        try:
            given = dict(kv.split("=", 1) for kv in given)
        except ValueError:
            raise ValueError(f"bad compile-time parameters {list(given)!r}: expected NAME=VALUE") from None
    return {**tuned_defines(variant), **given}


def _import_built(name: str, so: Path):
    spec = importlib.util.spec_from_file_location(name, so)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _build_error(name: str, log: str) -> KernelBuildError:
    errors = [ln for ln in log.splitlines() if re.search(r"\berror\b|: fatal|undefined reference", ln)]
    head = "\n".join(errors[:30]) or "(no error lines found; full log below)"
    return KernelBuildError(f"building {name} failed:\n{head}\n\n--- full build log ---\n{log}")


def load(variant: str, defines: dict | None = None, *, kernels_dir: Path | None = None, verbose: bool = False):
    """Compile (first use) or load (cached) one variant; returns the extension module with
    `forward(x, w_dw, b_dw, w_pw, b_pw, dilation, padding, out=None)` and `why_unsupported(...)`.

    The module name carries a hash of the kernel, its headers, the launcher, the defines and the flags, so
    an edit rebuilds and an unchanged variant loads from the cache. Builds run in a private staging folder
    under an OS file lock and are moved into place only when complete: a build killed mid-way (and the
    lock file torch leaves behind) is cleared by the next `load`.
    """
    v = variant_info(variant, kernels_dir)
    if defines is None:
        defines = tuned_defines(variant)
    if kernels_dir is None:
        _record_build(variant, defines)
    return load_built(*build_plan(v, defines), verbose)


_recorded: set = set()


def build_entry(variant: str, defines: dict | None) -> dict:
    """A build as fusedkit.prebuild lists it: {"variant": V, "knobs": {...}} where `defines` holds the variant's tuned
    parameters (the knobs: what differs from them, so the entry means the same build on a GPU with another tuned set),
    {"variant": V, "defines": {...}} where it does not (a build of those defines alone); V "general": the general
    path's extension with `defines` as its knobs."""
    defines = {str(k): str(v) for k, v in (defines or {}).items()}
    if variant == "general":
        return {"variant": "general", "defines": defines}
    tuned = tuned_defines(variant)
    if all(defines.get(k) == str(v) for k, v in tuned.items()):
        return {"variant": variant, "knobs": {k: v for k, v in defines.items() if tuned.get(k) != v}}
    return {"variant": variant, "defines": defines}


def _record_build(variant: str, defines: dict | None) -> None:
    """With FUSED_BUILD_LOG set (a file), each build this process asks for, once, as one JSON line (build_entry's form):
    the list `python fused_jit.py prebuild` makes first, in parallel (scripts/h200.sh's test stage keeps the GPU
    suite's in tests/gpu_builds.jsonl)."""
    path = os.environ.get("FUSED_BUILD_LOG")
    if not path:
        return
    line = json.dumps(build_entry(variant, defines), sort_keys=True)
    if line not in _recorded:
        _recorded.add(line)
        with open(path, "a") as f:  # one short write in append mode: whole lines, whichever process writes
            f.write(line + "\n")


def load_built(name: str, arch: str, kwargs: dict, verbose: bool = False):
    """The extension `name`: in memory, else from the build cache, else built (staged, under a file lock)."""
    if name in _loaded:
        return _loaded[name]
    if name in _failed:  # same sources, same flags: the same error (torch would not retry in-process)
        raise _failed[name]
    root = build_root()
    final = root / name
    so = final / f"{name}.so"
    if not so.is_file():
        with FileLock(str(root / f"{name}.lock")):  # flock: released by the OS if its holder dies
            if not so.is_file():
                try:
                    _build(name, arch, kwargs, root, verbose)
                except KernelBuildError as e:
                    _failed[name] = e
                    raise
    module = _loaded[name] = _import_built(name, so)
    return module


# A build sets the compilers' environment (TORCH_CUDA_ARCH_LIST, CPATH) for the whole process while it runs, so builds
# in one process take turns: two threads building at once undid each other's CPATH and one build failed ("compilation
# terminated", a 7f4d631 device run). Parallel builds belong in separate processes (scripts/h200.sh's build stage).
_build_env_lock = threading.Lock()


def _build(name: str, arch: str, kwargs: dict, root: Path, verbose: bool):
    with _build_env_lock:
        _build_locked(name, arch, kwargs, root, verbose)


def _build_locked(name: str, arch: str, kwargs: dict, root: Path, verbose: bool):
    staging = root / f"{name}.building"
    _empty_dir(staging)  # a killed build's leftovers, torch's stale 'lock' among them
    old_arch = os.environ.get("TORCH_CUDA_ARCH_LIST")
    if arch != "-":  # CUDA builds: the visible GPU's arch (or sm_90); CPU builds never read it
        os.environ["TORCH_CUDA_ARCH_LIST"] = arch
    # the kernels folder reaches the compilers through CPATH rather than -I: then every build, a kernels copy's too,
    # has the same flags and one precompiled torch header serves them all (torch keys it on the -I list)
    kwargs = dict(kwargs)
    inc = kwargs.pop("extra_include_paths", None) or []
    old_cpath = os.environ.get("CPATH")
    os.environ["CPATH"] = os.pathsep.join([*inc] + ([old_cpath] if old_cpath else []))
    try:
        use_pch = _pch_ready(kwargs, root)
        log = _load_inline(name, staging, verbose, use_pch, kwargs)
        if log is not None and use_pch and _pch_suspect(log):
            # another process rewrote or removed torch's PCH while this build read it: once more without it
            _empty_dir(staging)
            log = _load_inline(name, staging, verbose, False, kwargs)
        if log is not None:
            raise _build_error(name, log)
    finally:
        if old_cpath is None:
            os.environ.pop("CPATH", None)
        else:
            os.environ["CPATH"] = old_cpath
        if old_arch is None:
            os.environ.pop("TORCH_CUDA_ARCH_LIST", None)
        else:
            os.environ["TORCH_CUDA_ARCH_LIST"] = old_arch
    final = root / name
    shutil.rmtree(final, ignore_errors=True)
    os.replace(staging, final)  # atomic: a complete build or none


def _empty_dir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)


def _load_inline(name: str, staging: Path, verbose: bool, use_pch: bool, kwargs: dict) -> str | None:
    """torch's load_inline into `staging`; None when it built, else the build's log. torch decodes the compilers'
    output as UTF-8 and raises UnicodeDecodeError on any other byte (a CI run met one): the log is then read
    from the failed subprocess's own output, undecodable bytes replaced."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _cpp_extension().load_inline(name, build_directory=str(staging), verbose=verbose, use_pch=use_pch,
                                         **kwargs)
        return None
    except RuntimeError as e:
        return str(e)
    except UnicodeDecodeError as e:
        failed = e.__context__
        out = getattr(failed, "output", None)
        if not isinstance(out, (bytes, bytearray)):
            raise
        return f"{failed}\n" + bytes(out).decode("utf-8", errors="replace")


def _pch_suspect(log: str) -> bool:
    """Whether a failed build's log points at torch's precompiled header rather than at the sources: it names the
    .gch file, or the compilers printed bytes that are not text (a PCH read while another process rewrote it)."""
    return "extension.h.gch" in log or "\ufffd" in log


_pch_state: dict = {}


def _pch_ready(kwargs: dict, root: Path) -> bool:
    """Whether a build may use torch's precompiled torch/extension.h (load_inline's use_pch): about 30 s less per
    extension on 2 cores, most of a variant's build. Only for builds with the flags every build here shares
    (HOST_CFLAGS, no -I: a PCH serves one set of flags; another set would rebuild it in place), where torch's
    include folder is writable and FUSED_PCH is not 0. The PCH is built once, under a file lock: parallel builds would
    otherwise write it at the same time. Any failure there: no PCH, the plain build."""
    if os.environ.get("FUSED_PCH", "1") == "0" or kwargs.get("extra_cflags") != list(HOST_CFLAGS) or \
            kwargs.get("extra_include_paths"):
        return False
    if _pch_state.get("ok") is False:
        return False
    _pch_restore(root)  # before every build: another load_inline may have deleted it
    if "ok" not in _pch_state:
        make = getattr(_cpp_extension(), "_check_and_build_extension_h_precompiler_headers", None)
        ok = make is not None and os.access(_pch_files(root)[0][0].parent, os.W_OK)
        if ok:
            try:
                with FileLock(str(root / "torch_extension_h_pch.lock")), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    make(list(HOST_CFLAGS), [])
                    _pch_keep(root)
            except Exception as e:  # a PCH is an optimization: build without it
                logging.getLogger(__name__).warning("precompiled torch header unavailable (%s): plain builds", e)
                ok = False
        _pch_state["ok"] = ok
    return _pch_state["ok"]


def _pch_files(root: Path) -> list[tuple[Path, Path]]:
    """(torch's PCH file, our kept copy) for the header and its signature. torch deletes its PCH whenever any
    load_inline runs without use_pch (the exported file's builds do): the kept copy (a hard link where the
    filesystem allows) puts it back instead of a ~70 s rebuild."""
    inc = Path(torch.__file__).parent / "include" / "torch"
    key = hashlib.sha256(f"{inc}|{torch.__version__}".encode()).hexdigest()[:12]
    return [(inc / n, root / "pch" / key / n) for n in ("extension.h.gch", "extension.h.sign")]


def _pch_keep(root: Path) -> None:
    try:
        for live, kept in _pch_files(root):
            if live.is_file():
                kept.parent.mkdir(parents=True, exist_ok=True)
                kept.unlink(missing_ok=True)
                try:
                    os.link(live, kept)
                except OSError:
                    shutil.copy2(live, kept)
    except OSError:
        pass  # an optimization only


def _pch_restore(root: Path) -> None:
    try:
        files = _pch_files(root)
        if all(kept.is_file() for _, kept in files) and not all(live.is_file() for live, _ in files):
            with FileLock(str(root / "torch_extension_h_pch.lock")):
                for live, kept in files:
                    if not live.is_file():
                        tmp = live.with_name(live.name + f".{os.getpid()}.tmp")
                        try:
                            os.link(kept, tmp)
                        except OSError:
                            shutil.copy2(kept, tmp)
                        os.replace(tmp, live)
    except OSError:
        pass  # torch rebuilds it


def general_kernel(kernels_dir: Path | None = None, defines: dict | None = None):
    """The general path's extension, kernels/general.cpp + kernels/dw_silu.cu (built on first use):
    `dw_silu(x, w_dw, b_dw, dilation, padding)` returns act = silu(dw(x)) in x's dtype, eager's numbers bit for
    bit; `forward(x, w_dw, b_dw, w_pw, b_pw, dilation, padding)` adds PyTorch's 1x1 conv; `forward_train(...)`
    is forward with eager's backward (kernels/eager_autograd.h). `kernels_dir`: another copy of kernels/ (an
    earlier commit's, for an A/B of the backward: scripts/backward_ab.py). `defines`: compile-time knobs of the
    backward's kernels and its host code ({"PWDG_TMA_LATE": 2}), #defined ahead of the CUDA and C++ sources: a
    separate build."""
    if kernels_dir is None:
        _record_build("general", defines)
    kdir = Path(kernels_dir) if kernels_dir is not None else config.KERNELS_DIR
    return _general_kernel(kdir.resolve(), tuple(sorted((str(k), str(v)) for k, v in (defines or {}).items())))


@functools.lru_cache(maxsize=None)
def _general_kernel(kdir: Path, defines: tuple):
    cpp, cu, bw = kdir / "general.cpp", kdir / "dw_silu.cu", backward_sources(kdir)
    arch = "9.0a" if cuda_arch() == "9.0" else cuda_arch()  # on sm_90 the backward's rung 7 builds in too
    files = _with_headers(cpp, kdir) + _with_headers(cu, kdir) + [f for b in bw for f in _with_headers(b, kdir)]
    knobs = "".join(f"#define {k} {v}\n" for k, v in defines)
    h = hashlib.sha256(repr(([f.name for f in files], [f.read_bytes() for f in files], arch, torch.__version__,
                             torch.version.cuda, sys.version_info[:2]) + ((knobs,) if knobs else ())).encode())
    kwargs = dict(cpp_sources=f'#define DWSEP_BACKWARD_KERNEL 1\n{knobs}#line 1 "{cpp}"\n' + cpp.read_text(),
                  cuda_sources=sm90a_define(arch) + knobs +
                  "\n".join(f'#line 1 "{f}"\n' + f.read_text() for f in [cu, *bw]),
                  extra_cflags=list(HOST_CFLAGS), extra_ldflags=["-fopenmp"],
                  extra_cuda_cflags=["-O3", "-lineinfo"], extra_include_paths=[str(kdir)], with_cuda=True,
                  no_implicit_headers=True)
    return load_built(f"fused_general_{h.hexdigest()[:16]}", arch, kwargs)


def backward_build_spec(spec: str) -> tuple[str, Path | None, dict]:
    """An A/B script's build: "LABEL=KERNELS_DIR" (another copy of kernels/, e.g. an earlier commit's made with
    `git archive REV kernels | tar -x -C .ab/REV`) or "LABEL:NAME=VALUE[,NAME=VALUE...]" (the working tree's kernels
    with compile-time knobs, e.g. "late:PWDG_TMA_LATE=2"): (label, kernels_dir or None, defines). Raises ValueError
    naming the expected forms."""
    label, sep, rest = spec.partition(":")
    if sep and label and "=" in rest:
        try:
            defines = dict(kv.split("=", 1) for kv in rest.split(","))
        except ValueError:
            defines = {}
        if defines and all(re.fullmatch(r"[A-Za-z_]\w*", k) and v for k, v in defines.items()):
            return label, None, defines
    label, sep, path = spec.partition("=")
    if sep and label and path and Path(path, "general.cpp").is_file():
        return label, Path(path), {}
    raise ValueError(f"{spec!r}: expected LABEL=KERNELS_DIR (a copy of kernels/ with general.cpp) or "
                     "LABEL:NAME=VALUE[,NAME=VALUE...] (the tree's kernels with compile-time knobs)")


def backward_builds(specs, variant: str | None = None) -> dict:
    """{label: (general path's extension, defines)} for an A/B script's build specs (backward_build_spec's forms),
    each built on first use; ValueError for the first spec of neither form. With `variant` (a fused rung, e.g.
    "wgmma_wide"), that variant's extension instead (its tuned defines, the spec's on top): its forward_train is
    ModelNew's fused forward with the same C++ backward."""
    builds = {}
    for spec in specs:
        label, kdir, defines = backward_build_spec(spec)
        if variant:
            builds[label] = (load(variant, defines_over_tuned(variant, defines), kernels_dir=kdir), defines)
            continue
        builds[label] = (general_kernel(kdir, defines), defines)
    return builds
