"""A HybridBlock around one function, so a test runs the same code eagerly and hybridized."""
from __future__ import annotations

from typing import Any, Callable

from hybridgraph import gluon


class FnBlock(gluon.HybridBlock):
    """Calls `fn(F, *inputs)`: F is mx.np eagerly and the symbol namespace once hybridized."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self._fn = fn

    def hybrid_forward(self, F: Any, *xs: Any) -> Any:  # noqa: N803 - MXNet's signature
        return self._fn(F, *xs)
