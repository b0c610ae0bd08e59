"""The reference Model (PyTorch), KernelBench's get_inputs/get_init_inputs, and the weights a kernel takes."""
from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from .config import batch_size, in_channels, out_channels, length, kernel_size, dilation


class Model(nn.Module):
    """The PyTorch reference: pw(silu(dw(x))) with submodules `dw` (depthwise, dilated) and `pw` (1x1)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, dilation: int = 1, bias: bool = True):
        super().__init__()
        padding = (kernel_size - 1) * dilation // 2
        self.dw = nn.Conv1d(in_channels, in_channels, kernel_size, padding=padding, dilation=dilation,
                            groups=in_channels, bias=bias)
        self.pw = nn.Conv1d(in_channels, out_channels, 1, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pw(F.silu(self.dw(x)))


def get_inputs():
    """KernelBench: the forward inputs at the headline shape."""
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    """KernelBench: the constructor arguments at the headline shape."""
    return [in_channels, out_channels, kernel_size, dilation]


def forward_args(model: nn.Module):
    return (model.dw.weight, model.dw.bias, model.pw.weight, model.pw.bias, model.dw.dilation[0],
            model.dw.padding[0])


def copy_model(model: Model) -> Model:
    m = Model(model.dw.in_channels, model.pw.out_channels, model.dw.kernel_size[0], model.dw.dilation[0],
              model.dw.bias is not None).to(model.dw.weight.device)
    m.load_state_dict(model.state_dict())
    return m
