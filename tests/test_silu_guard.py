"""The guarded SiLU's test in kernels/common.cuh (silu_guard_ok) is the rule it states: it reads f's dropped bits
((f + half + guard) & mask > 2 guard), and accepts exactly the f of the fast SiLU that lie more than `guard` units of
the last place from a rounding midpoint, that is, whose distance to the rounded value is at most half - guard - 1.
Both read only f's low bits (the dropped ones, and for TF32's ties-to-even the lowest kept bit), so every pattern of
those bits, under a spread of high bits that includes the carry into the exponent and both signs, is every case. The
integer roundings here are what the kernels compute: the TF32 rounding (cvt.rn.tf32.f32 on sm_90, whose bits
scripts/silu_exhaustive.cu compares with the integer form at every input) and the bf16 path's ties-away add and
mask."""
import numpy as np
import pytest
import torch

GUARD = 16  # FUSED_SILU_GUARD's default


def rounded(u: np.ndarray, dropped: int, ties_away: bool = False) -> np.ndarray:
    """The kernels' rounding of finite float32 bit patterns: RNE for TF32 (13 dropped bits; ties away under
    FUSED_TF32_RNA: `ties_away`), ties-away for bf16."""
    half, keep = np.uint32(1 << (dropped - 1)), np.uint32(~((1 << dropped) - 1) & 0xFFFFFFFF)
    if dropped == 13 and not ties_away:
        return (u + np.uint32(0xFFF) + ((u >> np.uint32(13)) & np.uint32(1))) & keep
    return (u + half) & keep


def accepted_by_bits(u: np.ndarray, dropped: int) -> np.ndarray:
    half, mask = np.uint32(1 << (dropped - 1)), np.uint32((1 << dropped) - 1)
    return ((u + half + np.uint32(GUARD)) & mask) > np.uint32(2 * GUARD)


def accepted_by_distance(u: np.ndarray, dropped: int, ties_away: bool = False) -> np.ndarray:
    inner = np.uint32((1 << (dropped - 1)) - GUARD - 1)
    return (u - rounded(u, dropped, ties_away) + inner) <= np.uint32(2) * inner


@pytest.mark.parametrize("dropped,ties_away", [(13, False), (13, True), (16, False)], ids=["tf32", "tf32_rna", "bf16"])
def test_guard_accepts_what_lies_off_the_midpoints(dropped, ties_away):
    """tf32_rna: the same guard under FUSED_TF32_RNA (the TF32 rounding ties away): it accepts the same values, and
    there the two TF32 roundings agree (no accepted value is a tie), so the kept fast path is right for either."""
    low = np.arange(1 << 17, dtype=np.uint32)  # every pattern of the low 17 bits (13 or 16 dropped, plus the kept lsb)
    highs = [0x00000000, 0x3F800000, 0x3FFE0000, 0x41700000, 0x7F000000, 0x7F7E0000, 0x80000000, 0xBF800000,
             0xC17E0000, 0xFF7E0000]  # zero, 1, just below 2, 15, a large and the largest binade's top, negatives
    with np.errstate(over="ignore"):
        for high in highs:
            u = np.uint32(high) | low
            u = u[(u & np.uint32(0x7F800000)) != np.uint32(0x7F800000)]  # finite only: inf and NaN are refused by |v|
            by_bits, by_distance = accepted_by_bits(u, dropped), accepted_by_distance(u, dropped, ties_away)
            assert np.array_equal(by_bits, by_distance), hex(int(u[np.argmax(by_bits != by_distance)]))
            if ties_away:
                kept = u[by_bits]
                assert np.array_equal(rounded(kept, 13), rounded(kept, 13, True))
                assert not np.array_equal(rounded(u, 13), rounded(u, 13, True))  # the ties themselves differ
            assert 0.99 < by_bits.mean() < 1.0  # the guard refuses a few values near each midpoint, not all or none


def test_silu_table_holds_the_silu_of_its_inputs():
    """kernels/silu_bf16_table.h (wgmma.cuh's WG_SILU_LUT; written on a GPU by scripts/gen_silu_lut.py, checked against
    torch's F.silu there by tests/test_gpu.py): 8192 entries, entry 2 i + s the SiLU of the bf16 value of magnitude bits
    0x3380 + i and sign s, each within one bf16 ulp of eager's formula in float64 (0 where float32's exp(-x) overflows,
    x < -88.7, as eager's fp32 formula gives), a table shifted by one entry or with the signs swapped being off by far more."""
    from fusedkit.silu_table import LUT_MAGS, read_table, table_inputs
    x = table_inputs().double()
    got = read_table().double()
    assert got.numel() == 2 * LUT_MAGS
    # eager's formula x / (1 + exp(-x)) in float64, except where float32's exp(-x) overflows to inf: eager's -0 there
    ref = torch.where(-x > 88.72, torch.zeros_like(x), x / (1 + torch.exp(-x)))
    ulp = torch.ldexp(torch.ones_like(ref), torch.frexp(ref).exponent - 8)  # a bf16 ulp at |ref| (8 significant bits)
    assert ((got - ref).abs() <= ulp).all()
    assert float(x.abs().min()) == 2.0 ** -24 and float(x.abs().max()) == 255.0
