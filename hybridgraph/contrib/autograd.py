"""`mx.contrib.autograd`: MXNet 1.x's first autograd API, kept for old scripts.

`train_section()` records and trains at once (today's `autograd.record()`),
`test_section()` turns both off; `mark_variables` / `backward` /
`compute_gradient` and the functional `grad_and_loss` / `grad` wrap the same
tape as `mx.autograd` (hybridgraph.nd.autograd).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from hybridgraph.nd import NDArray, zeros_like
from hybridgraph.nd import autograd as _ag

__all__ = ["set_is_training", "TrainingStateScope", "train_section", "test_section", "mark_variables",
           "backward", "compute_gradient", "grad_and_loss", "grad", "NDArray", "zeros_like"]


def set_is_training(is_train: bool) -> bool:
    """Turn recording and training mode on or off together; returns the previous state."""
    prev = _ag.set_training(bool(is_train))
    _ag.set_recording(bool(is_train))
    return bool(prev)


class TrainingStateScope:
    """``with`` scope that sets recording and training to `enter_state` and restores them."""

    def __init__(self, enter_state: bool):
        self._enter_state = enter_state
        self._prev: bool | None = None

    def __enter__(self) -> None:
        self._prev = set_is_training(self._enter_state)

    def __exit__(self, *exc: Any) -> None:
        if self._prev != self._enter_state:
            set_is_training(self._prev)


def train_section() -> TrainingStateScope:
    """Record and train inside the scope (today: ``autograd.record()``)."""
    return TrainingStateScope(True)


def test_section() -> TrainingStateScope:
    """Neither record nor train inside the scope (e.g. evaluation within a train_section)."""
    return TrainingStateScope(False)


def mark_variables(variables: list, gradients: list, grad_reqs: Any = "write") -> None:
    """Attach `gradients` as the gradient buffers of `variables` (as `autograd.mark_variables`)."""
    _ag.mark_variables(variables, gradients, grad_reqs)


def backward(outputs: list, out_grads: list | None = None, retain_graph: bool = False) -> None:
    """Gradients of `outputs` (a list) with respect to the marked variables."""
    if not isinstance(outputs, (list, tuple)):
        raise AssertionError("outputs must be a list or tuple of NDArrays")
    if out_grads is not None and len(out_grads) != len(outputs):
        raise AssertionError("outputs and out_grads must have the same length")
    _ag.backward(list(outputs), out_grads, retain_graph=retain_graph)


def compute_gradient(outputs: list) -> None:
    """Deprecated name of `backward`."""
    backward(outputs)


def grad_and_loss(func: Callable, argnum: int | list | None = None) -> Callable:
    """Wrap `func` to return ``(gradients of the arguments argnum (all by default), func's output)``."""
    @functools.wraps(func)
    def wrapped(*args: Any) -> tuple[list, Any]:
        variables = args if argnum is None else [args[i] for i in (argnum if isinstance(argnum, list) else [argnum])]
        for x in variables:
            if not isinstance(x, NDArray):
                raise AssertionError("type of autograd input should NDArray.")
        grads = [zeros_like(x) for x in variables]
        mark_variables(list(variables), grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs
    return wrapped


def grad(func: Callable, argnum: int | list | None = None) -> Callable:
    """Wrap `func` to return only the gradients of its arguments (see `grad_and_loss`)."""
    grad_with_loss_func = grad_and_loss(func, argnum)

    @functools.wraps(grad_with_loss_func)
    def wrapped(*args: Any) -> list:
        return grad_with_loss_func(*args)[0]
    return wrapped
