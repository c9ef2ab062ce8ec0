"""`mx.operator`: operators written in Python — CustomOp, CustomOpProp and `register`.

As in MXNet 1.9.1: subclass CustomOpProp to describe the operator (argument,
output and aux names, shape and dtype inference, backward dependencies) and
CustomOp to compute it (`forward`/`backward` on NDArrays, writing results
with `assign`), register the prop under a name, and call it as
`mx.nd.Custom(..., op_type=name)` or `mx.sym.Custom(...)`. It runs eagerly, under
autograd, inside Symbol graphs and hybridized blocks (see nd/ops/custom.py).
"""
from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

from hybridgraph.nd.ops.custom import PROPS
from hybridgraph.nd.attrs import REQUIRED
from hybridgraph.nd.registry import all_names, get_op

__all__ = ["CustomOp", "CustomOpProp", "register", "get_all_registered_operators",
           "get_operator_arguments", "OperatorArguments"]

#: what `get_operator_arguments` returns (MXNet's namedtuple of this name)
OperatorArguments = collections.namedtuple("OperatorArguments", ["narg", "names", "types"])


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
    """Every registered operator name and alias (as MXNet: the backend's operators, not the
    CustomOp op_types, which `mx.nd.Custom(op_type=...)` takes)."""
    return sorted(all_names())


def _attr_type(decl) -> str:
    """An attribute's type string in MXNet's wording ("float, optional, default=0.5")."""
    if decl.choices:
        names = ["None"] * (decl.default is None) + [repr(c) for c in sorted(decl.choices)]
        kind = "{" + ", ".join(names) + "}"
        return f"{kind}, required" if decl.default is REQUIRED else f"{kind},optional, default={str(decl.default)!r}"
    if decl.default is REQUIRED:
        return f"{decl.type_name}, required"
    default = int(decl.default) if isinstance(decl.default, bool) else decl.default
    return f"{decl.type_name}, optional, default={default}"


def get_operator_arguments(op_name: str) -> OperatorArguments:
    """An operator's inputs then attributes, with MXNet-style type strings."""
    op = get_op(op_name)
    if op.key_var_num_args:
        names, types = ["args"], ["NDArray-or-Symbol[]"]
    else:
        names = list(op.input_names(op.schema.parse_lenient({})))
        types = ["NDArray-or-Symbol"] * len(names)
    for key, decl in op.schema.attrs.items():
        if key == op.key_var_num_args:
            continue
        names.append(key)
        types.append(_attr_type(decl))
    return OperatorArguments(len(names), names, types)


from .operator_legacy import NDArrayOp, NumpyOp, PythonOp  # noqa: E402,F401  (MXNet's deprecated API)
