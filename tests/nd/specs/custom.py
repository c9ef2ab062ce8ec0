"""Specs for nd/ops/custom.py: Custom (a Python operator registered by the spec itself) and
_backward_Custom. The operator computes x * x * y with its own backward, so the gradient
check compares the user's backward against finite differences through the registry op."""
from __future__ import annotations

import hybridgraph as mx
from tests.op_specs import OpSpec, arr, shapes


class _SquareTimes(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * in_data[0] * in_data[1])

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], 2 * in_data[0] * in_data[1] * out_grad[0])
        self.assign(in_grad[1], req[1], in_data[0] * in_data[0] * out_grad[0])


@mx.operator.register("spec_square_times")
class _SquareTimesProp(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ["x", "y"]

    def infer_shape(self, in_shape):
        return [in_shape[0], in_shape[0]], [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _SquareTimes()


def _case(draw, backward=False):
    shape = draw(shapes(max_dims=3))
    n = 3 if backward else 2
    return [draw(arr(shape)) for _ in range(n)], {"op_type": "spec_square_times"}


def _ref(x, y, op_type):
    return x * x * y


def _back_ref(g, x, y, op_type):
    # inputs of _backward_Custom: output grads, arguments, outputs (the outputs are unused here)
    return 2 * x * y * g, x * x * g


def _back_case(draw):
    (g, x, y), attrs = _case(draw, backward=True)
    return [g, x, y, x * x * y], attrs


SPECS = [
    OpSpec("Custom", case=_case, ref=_ref),
    OpSpec("_backward_Custom", case=_back_case, ref=lambda g, x, y, out, op_type: _back_ref(g, x, y, op_type),
           nondiff="hidden backward operator (its own gradient is not defined)"),
]
