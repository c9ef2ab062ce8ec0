"""Container blocks: Sequential, HybridSequential, Lambda, HybridLambda, Identity."""
from __future__ import annotations

import warnings

from typing import Any, Callable

from hybridgraph import nd
from hybridgraph import symbol as sym_module

from ..block import Block, _indent
from ..hybrid_block import HybridBlock


class _SequentialMixin:
    """Children run in order; indexing and len() as in Gluon."""

    def add(self, *blocks: Block) -> None:
        for block in blocks:
            self.register_child(block)

    def __repr__(self) -> str:
        mods = "\n".join(f"  ({key}): {_indent(repr(block), 2)}" for key, block in self._children.items())
        return f"{self.__class__.__name__}(\n{mods}\n)"

    def __getitem__(self, key: int | slice) -> Any:
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)(prefix=self._prefix)
            with net.name_scope():
                net.add(*layers)
            return net
        return layers

    def __len__(self) -> int:
        return len(self._children)

    def forward(self, x: Any, *args: Any) -> Any:
        """Run the children in order; a child's tuple output feeds its rest to the next as extra inputs."""
        for block in self._children.values():
            x = block(x, *args)
            args = ()
            if isinstance(x, (tuple, list)):
                args, x = tuple(x[1:]), x[0]
        return (x, *args) if args else x


class Sequential(_SequentialMixin, Block):
    """Stacks Blocks sequentially."""

    def hybridize(self, active: bool = True, **kwargs: Any) -> None:
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are HybridBlocks. Consider "
                          "using HybridSequential for the best performance.", stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_SequentialMixin, HybridBlock):
    """Stacks HybridBlocks sequentially; hybridizes as one graph."""


def _resolve(function: Callable | str, namespace: Any) -> Callable:
    if isinstance(function, str):
        if not hasattr(namespace, function):
            raise ValueError(f"Function name {function} is not found in {namespace.__name__}.")
        return getattr(namespace, function)
    if not callable(function):
        raise ValueError(f"Unrecognized function in lambda: {function} of type {type(function)}")
    return function


class Lambda(Block):
    """Wraps a function (or the name of an `nd` function) as a Block."""

    def __init__(self, function: Callable | str, prefix: str | None = None):
        super().__init__(prefix=prefix)
        self._func_impl = _resolve(function, nd)
        self._func_name = function if isinstance(function, str) else function.__name__

    def forward(self, *args: Any) -> Any:
        return self._func_impl(*args)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._func_name})"


class HybridLambda(HybridBlock):
    """Wraps `fn(F, *args)` (or an operator name) as a HybridBlock."""

    def __init__(self, function: Callable | str, prefix: str | None = None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            name = function
            if not hasattr(nd, name) or not hasattr(sym_module, name):
                raise ValueError(f"Function name {name} is not found in symbol/ndarray.")
            self._func = lambda F, *args: getattr(F, name)(*args)
            self._func_name = name
        elif callable(function):
            self._func = function
            self._func_name = function.__name__
        else:
            raise ValueError(f"Unrecognized function in lambda: {function} of type {type(function)}")

    def hybrid_forward(self, F: Any, x: Any, *args: Any) -> Any:  # noqa: N803
        return self._func(F, x, *args)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self._func_name})"


class Identity(HybridBlock):
    """Returns its input unchanged."""

    def hybrid_forward(self, F: Any, x: Any) -> Any:  # noqa: N803
        return x
