"""The variant registry: kernels/NN_name.cu (CUDA) or kernels/NN_name.cpp (CPU), described by their first line."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from . import config
from .config import TOLERANCE, DTYPES


@dataclass(frozen=True)
class Variant:
    name: str
    path: Path
    rung: int
    device: str  # "cuda" or "cpu"
    accuracy: str  # key of TOLERANCE
    dtypes: tuple
    arch: str = ""  # build arch the kernel needs ("" = the visible GPU's)

    @property
    def tolerance(self) -> float:
        return TOLERANCE[self.accuracy]


_VARIANT_FILE = re.compile(r"^(\d+)_(\w+)\.(cu|cpp)$")


_VARIANT_META = re.compile(r"//\s*variant:\s*accuracy=(\w+)\s+dtypes=([\w,]+)(?:\s+arch=([\w.]+))?")


def _variant_table(kernels_dir: Path | None = None) -> dict:
    kdir = Path(kernels_dir or config.KERNELS_DIR)
    table = {}
    for path in sorted(kdir.iterdir()):
        m = _VARIANT_FILE.match(path.name)
        if not m:
            continue
        meta = _VARIANT_META.search(path.read_text()[:500])
        if not meta:
            raise ValueError(f"{path}: first line must be '// variant: accuracy=<{'|'.join(TOLERANCE)}> "
                             "dtypes=float32[,bfloat16,float16]'")
        accuracy, dtypes = meta.group(1), tuple(meta.group(2).split(","))
        if accuracy not in TOLERANCE or not set(dtypes) <= set(DTYPES):
            raise ValueError(f"{path}: unknown accuracy {accuracy!r} or dtypes {dtypes!r}")
        table[m.group(2)] = Variant(m.group(2), path, int(m.group(1)), "cuda" if m.group(3) == "cu" else "cpu",
                                    accuracy, dtypes, meta.group(3) or "")
    return dict(sorted(table.items(), key=lambda kv: (kv[1].rung, kv[0])))


def variants(device: str | None = None, kernels_dir: Path | None = None) -> list[str]:
    """Variant names in ladder order (kernels/03_smem_tiled.cu is 'smem_tiled'); device='cuda'|'cpu' filters."""
    return [n for n, v in _variant_table(kernels_dir).items() if device is None or v.device == device]


def variant_info(name: str, kernels_dir: Path | None = None) -> Variant:
    """The Variant record (file, rung, device, accuracy class, dtypes) of one variant name."""
    table = _variant_table(kernels_dir)
    if name not in table:
        raise ValueError(f"unknown variant {name!r}; known: {', '.join(table)}")
    return table[name]


def tolerance(variant: str, dtype: str = "float32") -> float:
    """The rel. error bound for a variant at an I/O dtype: its accuracy class for float32, bf16's otherwise."""
    v = variant_info(variant)
    return v.tolerance if dtype == "float32" else max(v.tolerance, TOLERANCE["bf16"])
