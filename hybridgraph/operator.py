"""`mx.operator`: operators written in Python — CustomOp, CustomOpProp and `register`.

As in MXNet 1.9.1: subclass CustomOpProp to describe the operator (argument,
output and aux names, shape and dtype inference, backward dependencies) and
CustomOp to compute it (`forward`/`backward` on NDArrays, writing results
with `assign`), register the prop under a name, and call it as
`mx.nd.Custom(..., op_type=name)` or `mx.sym.Custom(...)`. It runs eagerly, under
autograd, inside Symbol graphs and hybridized blocks (see nd/ops/custom.py).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hybridgraph.nd.ops.custom import PROPS

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators"]


class CustomOp:
    """Base class of a Python operator's computation."""

    def __init__(self):
        pass

    def forward(self, is_train: bool, req: list, in_data: list, out_data: list, aux: list) -> None:
        """Compute out_data from in_data (write with `self.assign(out_data[i], req[i], value)`)."""
        raise NotImplementedError("CustomOp.forward must be overridden")

    def backward(self, req: list, out_grad: list, in_data: list, out_data: list, in_grad: list,
                 aux: list) -> None:
        """Compute in_grad from out_grad (and the forward's data)."""
        raise NotImplementedError("CustomOp.backward must be overridden")

    def assign(self, dst: Any, req: str, src: Any) -> None:
        """Write `src` into `dst` as `req` asks: 'null' (skip), 'write'/'inplace' or 'add'."""
        if req == "null":
            return
        if req in ("write", "inplace"):
            dst[:] = src
        elif req == "add":
            dst[:] = dst + src
        else:
            raise ValueError(f"CustomOp.assign: unknown req {req!r}; expected null, write, inplace or add")


class CustomOpProp:
    """Base class of a Python operator's description.

    Parameters
    ----------
    need_top_grad : bool
        Whether backward needs the output gradients (False for loss-like operators).
    """

    def __init__(self, need_top_grad: bool = True):
        self.need_top_grad_ = need_top_grad

    def infer_shape(self, in_shape: list) -> tuple:
        """(argument shapes, output shapes, aux shapes); by default every output has input 0's shape."""
        return in_shape, (in_shape[0],) * len(self.list_outputs()), ()

    def infer_type(self, in_type: list) -> tuple:
        """(argument dtypes, output dtypes, aux dtypes); by default all input 0's dtype."""
        return (in_type, [in_type[0]] * len(self.list_outputs()),
                [in_type[0]] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype: list) -> tuple:
        """Storage types: hybridgraph arrays are dense, so 'default' everywhere."""
        for i, stype in enumerate(in_stype):
            if stype != "default":
                raise NotImplementedError(f"CustomOpProp: input {i} has storage type {stype!r}; hybridgraph "
                                          "arrays are dense ('default')")
        return in_stype, ["default"] * len(self.list_outputs()), ["default"] * len(self.list_auxiliary_states())

    def infer_storage_type_backward(self, ograd_stype: list, in_stype: list, out_stype: list, igrad_stype: list,
                                    aux_stype: list) -> tuple:
        """Storage types of the backward pass: all 'default'."""
        return (["default"] * len(ograd_stype), ["default"] * len(in_stype), ["default"] * len(out_stype),
                ["default"] * len(igrad_stype), ["default"] * len(aux_stype))

    def list_outputs(self) -> list:
        """Output names (default ['output'])."""
        return ["output"]

    def list_arguments(self) -> list:
        """Argument (input) names (default ['data'])."""
        return ["data"]

    def list_auxiliary_states(self) -> list:
        """Auxiliary state names (default none)."""
        return []

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        """What backward reads: output gradients (when need_top_grad), inputs and outputs."""
        deps = list(out_grad) if self.need_top_grad_ else []
        return deps + list(in_data) + list(out_data)

    def create_operator(self, ctx: Any, in_shapes: list, in_dtypes: list) -> CustomOp:
        """The CustomOp that computes this operator."""
        raise NotImplementedError("CustomOpProp.create_operator must be overridden")


def register(reg_name: str) -> Callable[[type], type]:
    """Class decorator: register a CustomOpProp subclass as op_type `reg_name`."""
    def do_register(prop_cls: type) -> type:
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise TypeError(f"mx.operator.register({reg_name!r}) decorates a CustomOpProp subclass, got {prop_cls!r}")
        PROPS[reg_name] = prop_cls
        return prop_cls
    return do_register


def get_all_registered_operators() -> list[str]:
    """The op_type names registered so far."""
    return sorted(PROPS)
