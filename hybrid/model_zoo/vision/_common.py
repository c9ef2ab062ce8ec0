"""Pieces shared by the vision models."""
from __future__ import annotations

from typing import Any, Callable

from ... import nn
from ..model_store import load_pretrained

__all__ = ["HybridConcurrent", "finish", "entry_point"]


class HybridConcurrent(nn.HybridConcatenate):
    """MXNet 1.9.1's ``gluon.contrib.nn.HybridConcurrent``: children side by side,
    outputs concatenated along `axis` (one ``Concat`` node named ``concatN``)."""


def finish(net: nn.HybridBlock, name: str, pretrained: Any, ctx: Any, root: str | None) -> nn.HybridBlock:
    """Load local pretrained weights into `net` when asked (`pretrained` True or a path); return it."""
    if pretrained:
        load_pretrained(net, name, pretrained, ctx, root)
    return net


def entry_point(name: str, summary: str, build: Callable[..., nn.HybridBlock], *args: Any,
                **forced: Any) -> Callable[..., nn.HybridBlock]:
    """The model-zoo function `name(**kwargs)` (e.g. ``resnet18_v1``): ``build(*args, **kwargs)``
    with the `forced` keyword arguments overriding the caller's, as MXNet's ``vgg11_bn`` forces
    ``batch_norm=True``. Its docstring is `summary` and a pointer to `build`'s keywords."""

    def model(**kwargs: Any) -> nn.HybridBlock:
        return build(*args, **{**kwargs, **forced})

    model.__name__ = model.__qualname__ = name
    model.__module__ = build.__module__
    model.__doc__ = f"{summary}; keyword arguments as :func:`{build.__name__}`."
    return model
