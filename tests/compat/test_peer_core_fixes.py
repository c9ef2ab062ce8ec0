"""What MXNet 1.9.1's own unit tests taught about module names code imports from mxnet."""
import numpy as np

import hybridgraph as mx


def test_autograd_star_import_brings_ndarray_symbol_and_array():
    # MXNet's autograd has no __all__, so its star import hands over NDArray, Symbol and array
    ns: dict = {}
    exec("from hybridgraph.autograd import *", ns)
    assert ns["NDArray"] is mx.nd.NDArray
    assert ns["Symbol"] is mx.sym.Symbol
    assert ns["record"] is mx.autograd.record
    assert isinstance(ns["array"]([1, 2]), mx.nd.NDArray)
    assert "Any" not in ns and "TapeNode" not in ns


def test_ndarray_module_names_builtin_slice_py_slice():
    from hybridgraph.nd.ndarray import py_slice
    assert py_slice is slice
    x = mx.nd.arange(6)
    np.testing.assert_array_equal(x[py_slice(1, 4)].asnumpy(), [1, 2, 3])
