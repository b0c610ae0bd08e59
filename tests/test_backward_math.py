"""The tiling and halo index math of kernels/dw_silu_backward.cu, ported line for line to Python and checked against
autograd in float64 on the CPU (the kernel itself needs a GPU: tests/test_gpu.py runs it). Small tiles (16 steps
instead of the kernel's 1024) so that several tiles, halos that cross tile edges, even K (T_out = T - 1), K = 1
and T shorter than the span all occur. Edit both together."""
import itertools

import pytest
import torch

TILE = 16


def nan_outputs(x, T_out, C_out, K, n):
    """dx, act and the two partial buffers, NaN-filled: every element a port leaves unwritten shows."""
    B, C, _ = x.shape
    nan = float("nan")
    return (torch.full_like(x, nan), torch.full((B, C, T_out), nan, dtype=x.dtype),
            torch.full((C * (K + 1), n), nan, dtype=x.dtype), torch.full((C_out, n), nan, dtype=x.dtype))


def float4s(row, start, count, T):
    """`count` float4s of `row` from an aligned start, each zero where it lies outside [0, T) (T % 4 == 0)."""
    assert start % 4 == 0
    return [row[t] if 0 <= start + 4 * m < T else 0.0 for m in range(count) for t in range(start + 4 * m,
                                                                                          start + 4 * m + 4)]


def kernel_port(x, ga, gy, w, b, d, p):
    """dw_silu_backward_kernel's loops: per (b, c, tile) block, the x window, gv with its halo, act, dx, K+1
    partials, and the tile's sums of gy's rows (b, o) for o = c, c + C, ..; then dw_backward_finish's sums."""
    B, C, T = x.shape
    T_out, K, C_out = ga.shape[2], w.shape[1], gy.shape[1]
    halo = (K - 1) * d
    tiles = (max(T, T_out) + TILE - 1) // TILE
    n = tiles * B
    dx, act, part, part_pw = nan_outputs(x, T_out, C_out, K, n)  # every element must be written
    for bb, c, tile in itertools.product(range(B), range(C), range(tiles)):
        t0 = tile * TILE
        x0 = t0 - halo
        xs = [x[bb, c, x0 + i] if 0 <= x0 + i < T else 0.0 for i in range(TILE + 2 * halo)]
        t_lo = t0 + p - halo
        gv = []
        for i in range(TILE + halo):
            t, g = t_lo + i, 0.0
            if 0 <= t < T_out:
                v = b[c] if b is not None else 0.0
                for k in range(K):
                    v = v + w[c, k] * xs[i + k * d]
                e = torch.exp(-v)
                s = 1 / (1 + e)
                g = ga[bb, c, t] * s * (1 + v * (1 - s))
                if t0 <= t < t0 + TILE:
                    act[bb, c, t] = v / (1 + e)
            gv.append(g)
        for i in range(TILE):
            if t0 + i >= T:
                break
            dx[bb, c, t0 + i] = sum(w[c, k] * gv[i + halo - k * d] for k in range(K))
        for k in range(K + 1):
            acc = 0.0
            for i in range(TILE):
                if t0 + i >= T_out:
                    break
                g = gv[i + halo - p]
                acc = acc + g if k == K else acc + g * xs[i + halo - p + k * d]
            part[c * (K + 1) + k, tile * B + bb] = acc
        for o in range(c, C_out, C):
            part_pw[o, tile * B + bb] = gy[bb, o, t0:min(t0 + TILE, T_out)].sum()
    sums = part.sum(1).reshape(C, K + 1)
    return dx, act, sums[:, :K], sums[:, K], part_pw.sum(1)


@pytest.mark.parametrize("B,C,T,K,d,bias", [(2, 3, 37, 5, 2, True), (1, 2, 5, 7, 3, True), (1, 2, 40, 4, 3, False),
                                            (2, 2, 33, 1, 1, True), (1, 1, 20, 3, 4, True)])
def test_backward_kernel_index_math_equals_autograd(B, C, T, K, d, bias):
    check_port_against_autograd(kernel_port, B, C, T, K, d, bias, C_out=C + 1, seed=0)  # C_out != C


def check_port_against_autograd(port, B, C, T, K, d, bias, C_out, seed, pw=False):
    """A port's dx, act, dW_dw, db_dw and db_pw against autograd in float64, to 1e-12. pw: the port computes ga
    itself from gy and a (C_out, C) W_pw (its keyword w_pw), so ga = W_pw^T gy here."""
    torch.manual_seed(seed)
    p = (K - 1) * d // 2
    dw = torch.nn.Conv1d(C, C, K, padding=p, dilation=d, groups=C, bias=bias).double()
    x = torch.randn(B, C, T, dtype=torch.float64, requires_grad=True)
    act = torch.nn.functional.silu(dw(x))
    gy = torch.randn(B, C_out, act.shape[2], dtype=torch.float64)
    w_pw = torch.randn(C_out, C, dtype=torch.float64) if pw else None
    ga = torch.einsum("oc,bot->bct", w_pw, gy) if pw else torch.randn_like(act)
    want = torch.autograd.grad(act, [x, dw.weight] + ([dw.bias] if bias else []), ga)
    kw = dict(w_pw=w_pw) if pw else {}
    dx, a, dW, db, db_pw = port(x.detach(), ga, gy, dw.weight.detach()[:, 0], dw.bias.detach() if bias else None, d, p,
                                **kw)
    torch.testing.assert_close(dx, want[0], rtol=0, atol=1e-12)
    torch.testing.assert_close(a, act.detach(), rtol=0, atol=1e-12)
    torch.testing.assert_close(dW, want[1][:, 0], rtol=0, atol=1e-12)
    torch.testing.assert_close(db_pw, gy.sum((0, 2)), rtol=0, atol=1e-12)
    if bias:
        torch.testing.assert_close(db, want[2], rtol=0, atol=1e-12)


def vec_kernel_port(x, ga, gy, w, b, d, p, G=8):
    """dw_silu_backward_vec_kernel's index math (rung 4): per block, groups of G steps j = Gg .. Gg + G - 1 of the gv
    range t = t0 - lead + j (g < TILE / G, then halo4 single steps past the tile), each reading its x window from the
    float4s at xb = t0 - halo + Gg - sx and its ga from gb = t0 - lead + Gg - sg (each float4 wholly in or out of
    the row); the steps this tile owns (lead <= j < TILE + lead) write act and feed the K+1 sums; then dx of the G
    steps Gg .. Gg + G - 1 from gs[Gg + e + halo - k*d]."""
    B, C, T = x.shape
    K, C_out = w.shape[1], gy.shape[1]
    halo = (K - 1) * d
    lead = halo - halo // 2
    sx, sg = (4 - halo % 4) % 4, (4 - lead % 4) % 4
    nx, ng, nd, halo4 = (sx + G + halo + 3) // 4, (sg + G + 3) // 4, (G + halo + 3) // 4, (halo + 3) // 4 * 4
    assert halo % 2 == 0 and p == halo // 2 and T % 4 == 0 and ga.shape[2] == T  # the host's vec_path conditions
    tiles = (T + TILE - 1) // TILE
    n = tiles * B
    dx, act, part, part_pw = nan_outputs(x, T, C_out, K, n)

    for bb, c, tile in itertools.product(range(B), range(C), range(tiles)):
        t0 = tile * TILE
        gs = [float("nan")] * (TILE + halo4)
        sums = [0.0] * (K + 1)
        def step(j, xk, ga_t):  # one gv step from its K x taps; ga_t() reads ga at t, only where t is in the row
            t = t0 - lead + j
            v = b[c] if b is not None else 0.0
            for k in range(K):
                v = v + w[c, k] * xk[k]
            ex = torch.exp(-v)
            s = 1 / (1 + ex)
            valid = 0 <= t < T
            gval = ga_t() * s * (1 + v * (1 - s)) if valid else 0.0
            if valid and 0 <= j - lead < TILE:
                act[bb, c, t] = v / (1 + ex)
                for k in range(K):
                    sums[k] = sums[k] + gval * xk[k]
                sums[K] = sums[K] + gval
            gs[j] = gval

        for g in range(TILE // G):
            j0 = G * g
            xw = float4s(x[bb, c], t0 - halo + j0 - sx, nx, T)
            gw = float4s(ga[bb, c], t0 - lead + j0 - sg, ng, T)
            for e in range(G):
                step(j0 + e, [xw[sx + e + k * d] for k in range(K)], lambda e=e: gw[sg + e])
        for j in range(TILE, TILE + halo4):  # the tail: one step per thread, x's taps and ga read one by one
            xk = [x[bb, c, t0 - halo + j + k * d] if 0 <= t0 - halo + j + k * d < T else 0.0 for k in range(K)]
            step(j, xk, lambda j=j: ga[bb, c, t0 - lead + j])
        for g in range(TILE // G):
            gw = gs[G * g:G * g + 4 * nd]
            for e in range(G):
                if t0 + G * g + e < T:  # whole float4s: T % 4 == 0
                    dx[bb, c, t0 + G * g + e] = sum(w[c, k] * gw[e + halo - k * d] for k in range(K))
        for k in range(K + 1):
            part[c * (K + 1) + k, tile * B + bb] = sums[k]
        for o in range(c, C_out, C):
            part_pw[o, tile * B + bb] = sum(float4s(gy[bb, o], t0, TILE // 4, T))
    sums = part.sum(1).reshape(C, K + 1)
    return dx, act, sums[:, :K], sums[:, K], part_pw.sum(1)


@pytest.mark.parametrize("B,C,T,K,d,bias", [(2, 3, 36, 5, 2, True),    # the headline's (K, d): no shifts
                                            (1, 2, 8, 7, 3, True),     # T below the span; sx = 2, sg = 3
                                            (1, 2, 40, 3, 1, False),   # halo 2: sx = 2, sg = 3
                                            (2, 1, 20, 9, 4, True),    # halo 32 over 16-step tiles
                                            (1, 1, 44, 5, 3, True)])   # halo 12, lead 6: sg = 2
def test_vector_kernel_index_math_equals_autograd(B, C, T, K, d, bias):
    # C_out = 2 C + 1: three dy rows for some c
    check_port_against_autograd(vec_kernel_port, B, C, T, K, d, bias, C_out=2 * C + 1, seed=1)


def tc_kernel_port(x, ga, gy, w, b, d, p, w_pw, TT=16):
    """dw_silu_backward_tc_kernel's index math (rung 5; TT = 16 steps per tile here, 64 in the kernel): per (b, tile),
    gy's NJ columns t = t0 - lead4 + col staged (zero outside [0, T)), ga = W_pw^T of them (the port ignores
    the given ga), db_pw's row sums over the owned columns [lead4, lead4 + TT); then per channel and step group q
    (steps t0 + 4q .. + 3): its x window from the float4s at t0 + 4q - h2 - sx, gv in place over ga, act and the
    K+1 sums; the 2 h2 halo columns one step each; dx from the gv window at column 4q (offset sd). Which thread
    takes which group is the kernel's business; the arithmetic and its order per output are these."""
    B, C, T = x.shape
    K, C_out = w.shape[1], gy.shape[1]
    halo = (K - 1) * d
    h2 = halo // 2
    lead4 = (h2 + 3) // 4 * 4
    NJ = TT + 2 * lead4
    sx, sd = (4 - h2 % 4) % 4, lead4 - h2
    nx, nd = (sx + 4 + halo + 3) // 4, (sd + 4 + halo + 3) // 4
    assert halo % 2 == 0 and p == h2 and T % 4 == 0 and gy.shape[2] == T and 4 * nd + TT - 4 <= NJ
    tiles = (T + TT - 1) // TT
    n = tiles * B
    dx, act, part, part_pw = nan_outputs(x, T, C_out, K, n)

    for bb, tile in itertools.product(range(B), range(tiles)):
        t0 = tile * TT
        s0 = t0 - lead4
        dys = torch.tensor([float4s(gy[bb, o], s0, NJ // 4, T) for o in range(C_out)], dtype=x.dtype)
        for o in range(C_out):
            part_pw[o, tile * B + bb] = dys[o, lead4:lead4 + TT].sum()
        sm = w_pw.t() @ dys  # ga[c][col]
        for c in range(C):
            bias = b[c] if b is not None else 0.0
            sums = [0.0] * (K + 1)
            for q in range(TT // 4):
                tq = t0 + 4 * q
                xw = float4s(x[bb, c], tq - h2 - sx, nx, T)
                for e in range(4):
                    v = bias
                    for k in range(K):
                        v = v + w[c, k] * xw[sx + e + k * d]
                    ex = torch.exp(-v)
                    s = 1 / (1 + ex)
                    col = lead4 + 4 * q + e
                    gval = sm[c, col] * s * (1 + v * (1 - s)) if tq + e < T else 0.0
                    for k in range(K):
                        sums[k] = sums[k] + gval * xw[sx + e + k * d]
                    sums[K] = sums[K] + gval
                    if tq < T:
                        act[bb, c, tq + e] = v / (1 + ex)
                    sm[c, col] = gval
            for k in range(K + 1):
                part[c * (K + 1) + k, tile * B + bb] = sums[k]
            for e in range(2 * h2):
                col = lead4 - h2 + e if e < h2 else lead4 + TT + e - h2
                t, gval = s0 + col, 0.0
                if 0 <= t < T:
                    v = bias
                    for k in range(K):
                        tx = t - h2 + k * d
                        v = v + w[c, k] * (x[bb, c, tx] if 0 <= tx < T else 0.0)
                    s = 1 / (1 + torch.exp(-v))
                    gval = sm[c, col] * s * (1 + v * (1 - s))
                sm[c, col] = gval
        for c, q in itertools.product(range(C), range(TT // 4)):
            tq = t0 + 4 * q
            if tq >= T:
                continue
            gwin = sm[c, 4 * q:4 * q + 4 * nd]
            for e in range(4):
                dx[bb, c, tq + e] = sum(w[c, k] * gwin[sd + e + halo - k * d] for k in range(K))
    sums = part.sum(1).reshape(C, K + 1)
    return dx, act, sums[:, :K], sums[:, K], part_pw.sum(1)


@pytest.mark.parametrize("B,C,C_out,T,K,d,bias", [(2, 3, 5, 36, 5, 2, True),   # the headline's (K, d): no shifts
                                                  (1, 2, 3, 8, 7, 3, True),    # T below the span; sx = 3, sd = 3
                                                  (1, 2, 2, 40, 3, 1, False),  # h2 = 1: sx = 3, sd = 3
                                                  (2, 1, 4, 20, 9, 4, True),   # halo 32 over 16-step tiles
                                                  (1, 2, 1, 44, 5, 3, True)])  # h2 = 6: sx = 2, sd = 2
def test_tc_kernel_index_math_equals_autograd(B, C, C_out, T, K, d, bias):
    check_port_against_autograd(tc_kernel_port, B, C, T, K, d, bias, C_out=C_out, seed=2, pw=True)
