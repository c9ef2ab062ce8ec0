"""Gradients of mod against MXNet 1.9.1 (tests/data/mod_grad_ref.npz from
tests/data/gen_mod_grad_ref.py): floating types get (1, -floor(x / y)), integer types zero;
the Executor casts a head gradient to its output's dtype, as MXNet copies it."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import autograd, nd

REF = np.load(pathlib.Path(__file__).parent.parent / "data" / "mod_grad_ref.npz")
OPS = {"broadcast": nd.broadcast_mod, "scalar": lambda x, y: x % 2.5,
       "rscalar": lambda x, y: 7.5 % x}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("name", sorted(OPS))
def test_mod_gradients_match_mxnet(dtype, name):
    key = f"{dtype}_{name}"
    x, y = nd.array(REF[key + "_a"], dtype=dtype), nd.array(REF[key + "_b"], dtype=dtype)
    x.attach_grad()
    y.attach_grad()
    with autograd.record():
        out = OPS[name](x, y)
    out.backward(nd.array(REF[key + "_head"], dtype=dtype))
    np.testing.assert_array_equal(out.asnumpy(), REF[key + "_out"])
    np.testing.assert_array_equal(x.grad.asnumpy(), REF[key + "_ga"])
    np.testing.assert_array_equal(y.grad.asnumpy(), REF[key + "_gb"])


def test_executor_casts_head_gradients_to_the_output_dtype():
    sym = mx.sym.broadcast_mod(mx.sym.cast(mx.sym.var("a"), dtype="int32"),
                               mx.sym.cast(mx.sym.var("b"), dtype="int32"))
    g1, g2 = nd.zeros((2,)), nd.zeros((2,))
    exe = sym.bind(mx.cpu(), args={"a": nd.array([5.0, 7.0]), "b": nd.array([3.0, 2.0])}, args_grad=[g1, g2])
    exe.forward(is_train=True)
    exe.backward([nd.array(np.array([0.99999999, 2.5]))])
    np.testing.assert_array_equal(g1.asnumpy(), REF["exe_ga"])
    np.testing.assert_array_equal(g2.asnumpy(), REF["exe_gb"])
    # a float64 output with a float32 head gradient (test_binary_op's cast-to-double mod)
    sym = mx.sym.cast(mx.sym.var("a"), dtype="float64") * 2
    ga = nd.zeros((2,))
    exe = sym.bind(mx.cpu(), args={"a": nd.array([1.0, 2.0])}, args_grad=[ga])
    exe.forward(is_train=True)
    exe.backward([nd.array([1.0, 3.0])])
    np.testing.assert_array_equal(ga.asnumpy(), [2.0, 6.0])
