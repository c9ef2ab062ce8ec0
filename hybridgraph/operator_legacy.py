"""MXNet's deprecated Python operators `mx.operator.PythonOp`, `NumpyOp` and `NDArrayOp`,
run through the CustomOp machinery (nd/ops/custom.py).

As in MXNet 1.9.1 a subclass overrides `forward(in_data, out_data)`, `backward(out_grad,
in_data, out_data, in_grad)`, `infer_shape`, `list_arguments`, `list_outputs` (and
`need_top_grad`, NDArrayOp's `declare_backward_dependency`); `get_symbol(*inputs)` returns the
Symbol. NumpyOp's methods get float32 numpy arrays to write into, NDArrayOp's get NDArrays.
MXNet writes such a node as `_Native` / `_NDArray` holding a C pointer, which no file can
carry; here it is a `Custom` node whose op_type names this instance (registered on first
use), so the graph runs eagerly, in Executors and hybridized, within this process.
"""
from __future__ import annotations

import itertools
import warnings
from typing import Any

import numpy as np

from hybridgraph.nd.ops.custom import PROPS

_COUNTER = itertools.count()


class PythonOp:
    """Base class of the deprecated Python operators (use CustomOp / CustomOpProp instead)."""

    def __init__(self, need_top_grad: bool = True):
        self.info_ = None
        self.need_top_grad_ = need_top_grad
        self._op_type: str | None = None
        warnings.warn("PythonOp has been deprecated. Please use CustomOp", stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args: Any, **kwargs: Any):
        """The Symbol applying this operator to `args` (Symbols)."""
        from hybridgraph import symbol
        if self._op_type is None:
            self._op_type = f"_python_op_{type(self).__name__}_{next(_COUNTER)}"
            PROPS[self._op_type] = _prop_class(self)
        return symbol.Custom(*args, op_type=self._op_type, **kwargs)

    def forward(self, in_data: list, out_data: list) -> None:
        """Default: copy the first input to the first output."""
        out_data[0][:] = in_data[0]

    def backward(self, out_grad: list, in_data: list, out_data: list, in_grad: list) -> None:
        """Default: a gradient of ones for the first input."""
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape: list) -> tuple:
        """(input shapes, output shapes): by default the output has input 0's shape."""
        return in_shape, [in_shape[0]]

    def list_outputs(self) -> list:
        return ["output"]

    def list_arguments(self) -> list:
        return ["data"]

    def need_top_grad(self) -> bool:
        return self.need_top_grad_

    # how the arrays reach forward/backward: NumpyOp hands float32 numpy buffers
    _numpy = True


class NumpyOp(PythonOp):
    """Deprecated Python operator computing on numpy arrays (use CustomOp instead)."""

    def __init__(self, need_top_grad: bool = True):
        super().__init__(need_top_grad)
        warnings.warn("NumpyOp has been deprecated. Please use CustomOp", stacklevel=2)


class NDArrayOp(PythonOp):
    """Deprecated Python operator computing on NDArrays (use CustomOp instead)."""

    _numpy = False

    def __init__(self, need_top_grad: bool = True):
        super().__init__(need_top_grad)
        warnings.warn("NDArrayOp has been deprecated. Please use CustomOp", stacklevel=2)

    def declare_backward_dependency(self, out_grad: list, in_data: list, out_data: list) -> list:
        deps = list(out_grad) if self.need_top_grad() else []
        return deps + list(in_data) + list(out_data)


def _run(pyop: PythonOp, method: str, groups: dict, writes: dict, assign) -> None:
    """Call pyop.forward/backward with the arrays (numpy copies for NumpyOp), then store what
    it wrote into the `writes` groups back into the NDArrays."""
    if not pyop._numpy:
        getattr(pyop, method)(**groups)
        return
    host = {k: [np.array(a.asnumpy(), dtype=np.float32) for a in v] for k, v in groups.items()}
    getattr(pyop, method)(**host)
    for key, reqs in writes.items():
        for dst, req, src in zip(groups[key], reqs, host[key]):
            assign(dst, req, src)


def _prop_class(pyop: PythonOp) -> type:
    from hybridgraph.operator import CustomOp, CustomOpProp

    class _Op(CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            _run(pyop, "forward", {"in_data": in_data, "out_data": out_data}, {"out_data": req},
                 self.assign)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            _run(pyop, "backward", {"out_grad": out_grad, "in_data": in_data, "out_data": out_data,
                                    "in_grad": in_grad}, {"in_grad": ["write"] * len(in_grad)}, self.assign)

    class _Prop(CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=pyop.need_top_grad())

        def list_arguments(self):
            return pyop.list_arguments()

        def list_outputs(self):
            return pyop.list_outputs()

        def infer_shape(self, in_shape):
            ishape, oshape = pyop.infer_shape(in_shape)
            return ishape, oshape, []

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return _Op()

    return _Prop
