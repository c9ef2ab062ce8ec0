"""Pieces shared by the vision models."""
from __future__ import annotations

from typing import Any

from ... import nn
from ..model_store import load_pretrained

__all__ = ["HybridConcurrent", "finish"]


class HybridConcurrent(nn.HybridConcatenate):
    """MXNet 1.9.1's ``gluon.contrib.nn.HybridConcurrent``: children side by side,
    outputs concatenated along `axis` (one ``Concat`` node named ``concatN``)."""


def finish(net: nn.HybridBlock, name: str, pretrained: Any, ctx: Any, root: str | None) -> nn.HybridBlock:
    """Load local pretrained weights into `net` when asked (`pretrained` True or a path); return it."""
    if pretrained:
        load_pretrained(net, name, pretrained, ctx, root)
    return net
