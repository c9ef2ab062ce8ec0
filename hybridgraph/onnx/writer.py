"""NodeWriter: what a lowering (nd/ops/onnx_*.py) sees while it writes one MXNet node as ONNX.

It knows the node's input tensor names, the static shapes and dtypes inferred at
the export shapes, which input is a known parameter (an initializer), and it
collects the ONNX nodes and initializers the lowerings emit. Lowerings never
import onnx: `op()` and `const()` build the protobufs here.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from hybridgraph.nd.errors import MXNetError


class ExportError(MXNetError, NotImplementedError):
    """A graph (or one node of it) that cannot be written as ONNX."""


class NodeWriter:
    """Emits ONNX nodes for one export; `begin(node, ...)` points it at the node being lowered."""

    def __init__(self, opset: int, params: dict[str, np.ndarray], dynamic: bool):
        from onnx import helper, numpy_helper

        self._helper, self._numpy_helper = helper, numpy_helper
        self.opset = opset
        self.params = params
        #: True when some input dimension is symbolic in the exported model
        self.dynamic = dynamic
        self.nodes: list = []
        self.initializers: dict[str, Any] = {}
        self._used: set[str] = set()
        self._const_cache: dict[tuple, str] = {}
        self.node = None
        self.inputs: list[str] = []
        self.in_shapes: list[tuple] = []
        self.in_dtypes: list[np.dtype] = []
        self.out_shapes: list[tuple] = []
        self.out_dtypes: list[np.dtype] = []
        #: per output: None, or per dim None / (graph input, axis, scale) when it follows a symbolic dim
        self.out_sources: list = []

    # -- the node being lowered ------------------------------------------------------------
    def begin(self, node, inputs, in_shapes, in_dtypes, out_shapes, out_dtypes) -> None:
        self.node, self.inputs = node, list(inputs)
        self.in_shapes, self.in_dtypes = list(in_shapes), list(in_dtypes)
        self.out_shapes, self.out_dtypes = list(out_shapes), list(out_dtypes)

    @property
    def attrs(self):
        return self.node.attrs

    def param(self, i: int) -> np.ndarray | None:
        """Input i's value when it is a parameter of the exported model (else None)."""
        if i >= len(self.inputs):
            return None
        return self.params.get(self.inputs[i])

    def fail(self, what: str, alternative: str = "") -> ExportError:
        """An error naming the op, the node and (when given) what to do instead."""
        n = self.node
        msg = f"cannot export node {n.name!r} (operator {n.op.name}) to ONNX opset {self.opset}: {what}"
        return ExportError(msg + (f"; {alternative}" if alternative else ""))

    # -- names -----------------------------------------------------------------------------
    def reserve(self, name: str) -> None:
        self._used.add(name)

    def fresh(self, hint: str) -> str:
        """A tensor name not used yet in the model."""
        base = f"{self.node.name}/{hint}" if self.node is not None else hint
        name, i = base, 1
        while name in self._used:
            name, i = f"{base}_{i}", i + 1
        self._used.add(name)
        return name

    # -- emitting --------------------------------------------------------------------------
    def op(self, op_type: str, inputs: list[str], n_out: int = 1, **attrs: Any) -> Any:
        """Emit one ONNX node; returns its output name (a list when n_out > 1)."""
        outs = [self.fresh(op_type.lower()) for _ in range(n_out)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(self._helper.make_node(op_type, list(inputs), outs, name=outs[0], **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, value: Any, dtype: Any = None, hint: str = "const") -> str:
        """An initializer holding `value` (deduplicated by content)."""
        arr = np.asarray(value, dtype=dtype)
        if arr.dtype == np.float64 and dtype is None and not isinstance(value, np.ndarray):
            arr = arr.astype(np.float32)
        key = (arr.dtype.str, arr.shape, arr.tobytes())
        if key in self._const_cache:
            return self._const_cache[key]
        name = self.fresh(hint)
        self.initializers[name] = self._numpy_helper.from_array(arr, name)
        self._const_cache[key] = name
        return name

    def ints(self, values, hint: str = "shape") -> str:
        """An int64 1-D initializer (shapes, axes, indices)."""
        return self.const(np.asarray(list(values), dtype=np.int64).reshape(-1), hint=hint)

    def scalar(self, value: float, dtype: Any, hint: str = "scalar") -> str:
        """A 0-d initializer of `dtype` (float16 written as float16)."""
        return self.const(np.asarray(value, dtype=np.dtype(dtype)), hint=hint)

    # -- helpers many lowerings need --------------------------------------------------------
    def cast(self, x: str, dtype: Any) -> str:
        return self.op("Cast", [x], to=self.onnx_dtype(dtype))

    def onnx_dtype(self, dtype: Any) -> int:
        """ONNX's TensorProto enum of a numpy dtype (Cast's `to`, the random ops' `dtype`)."""
        from onnx import helper
        return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))

    def reshape(self, x: str, shape) -> str:
        """Reshape with ONNX's codes (0 copies a dim, -1 infers one)."""
        return self.op("Reshape", [x, self.ints(shape)])

    def axes_op(self, op_type: str, x: str, axes, **attrs: Any) -> str:
        """An op whose `axes` became an input in some opset (Unsqueeze/Squeeze 13, Reduce* 18)."""
        axes = [int(a) for a in axes]
        if op_type in ("Unsqueeze", "Squeeze", "ReduceSum") or self.opset >= 18:
            return self.op(op_type, [x, self.ints(axes, "axes")] if axes else [x], **attrs)
        return self.op(op_type, [x], axes=axes or None, **attrs)

    def out_shape_tensor(self, i: int = 0) -> str:
        """Output i's shape as an int64 tensor: baked, or computed from the symbolic input dims it follows."""
        shape, src = self.out_shapes[i], (self.out_sources[i] if i < len(self.out_sources) else None)
        if not src or not any(src):
            return self.ints(shape)
        parts = []
        for d, s in zip(shape, src):
            if s is None:
                parts.append(self.ints([d]))
                continue
            name, axis, scale = s
            dim = self.op("Shape", [name], start=axis, end=axis + 1)
            if scale != 1:
                num, den = float(scale).as_integer_ratio()
                dim = self.op("Div", [self.op("Mul", [dim, self.ints([num])]), self.ints([den])])
            parts.append(dim)
        return self.op("Concat", parts, axis=0)

    def reshape_out(self, x: str, i: int = 0) -> str:
        """x reshaped to output i's shape (allowzero keeps a size-0 dim 0 instead of copying it)."""
        zero = 0 in self.out_shapes[i]
        return self.op("Reshape", [x, self.out_shape_tensor(i)], allowzero=1 if zero else None)

    def fill(self, shape: str, value: float, dtype) -> str:
        """ConstantOfShape: a tensor of `shape` (an int64 tensor) filled with `value` of `dtype`."""
        from onnx import numpy_helper
        return self.op("ConstantOfShape", [shape],
                       value=numpy_helper.from_array(np.asarray([value], dtype=np.dtype(dtype))))

    def shape_of(self, x: str, start: int | None = None, end: int | None = None) -> str:
        """ONNX Shape (optionally a slice of it, opset 15's start/end)."""
        return self.op("Shape", [x], start=start, end=end)
