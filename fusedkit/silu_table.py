"""The bfloat16 SiLU table of wgmma.cuh's WG_SILU_LUT (kernels/silu_bf16_table.h, written by scripts/gen_silu_lut.py):
which values it holds, in which order, and its entries read back, for the generator and the tests."""
from __future__ import annotations

import re

import torch

from .config import ROOT

TABLE_HEADER = ROOT / "kernels" / "silu_bf16_table.h"
LUT_BASE = 0x3380  # the first magnitude held (bits & 0x7fff of 2^-24); kSiluLutBase in wgmma.cuh
LUT_MAGS = 4096  # magnitudes held (32 exponents x 128 mantissas: up to 2^8); kSiluLutMags


def _bf16(bits: torch.Tensor) -> torch.Tensor:
    """16-bit patterns held in int32 (0 .. 0xffff) as a bfloat16 tensor of those bits."""
    return torch.where(bits >= 1 << 15, bits - (1 << 16), bits).to(torch.int16).view(torch.bfloat16)


def table_inputs() -> torch.Tensor:
    """The table's inputs in entry order, a bfloat16 tensor: entry 2 i + s is magnitude LUT_BASE + i with sign s."""
    i = torch.arange(2 * LUT_MAGS, dtype=torch.int32)
    return _bf16((LUT_BASE + (i >> 1)) | ((i & 1) << 15))


def read_table(path=TABLE_HEADER) -> torch.Tensor:
    """The committed table's entries as a bfloat16 tensor (ValueError naming the file where it is not 2 LUT_MAGS
    hexadecimal 16-bit entries)."""
    body = path.read_text().split("{", 1)[-1]
    vals = [int(h, 16) for h in re.findall(r"0x([0-9a-fA-F]{4})\b", body)]
    if len(vals) != 2 * LUT_MAGS:
        raise ValueError(f"{path}: expected {2 * LUT_MAGS} 16-bit entries, found {len(vals)}")
    return _bf16(torch.tensor(vals, dtype=torch.int32))
