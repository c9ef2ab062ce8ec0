"""`NDArray.dtype` is the numpy scalar type, as in MXNet 1.9.1 (issue 13, item 6):
`x.dtype is np.float32`, `x.dtype.__name__`, and dicts keyed by `np.float32` work; traced
arrays inside a hybridized block answer the same."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import nd


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool"])
def test_dtype_is_the_scalar_type(name):
    x = nd.zeros((2,), dtype=name)
    want = np.dtype(name).type
    assert x.dtype is want
    assert x.dtype.__name__ == want.__name__
    assert {want: "hit"}[x.dtype] == "hit"
    assert x.dtype == np.dtype(name)       # still compares equal to the numpy dtype
    assert x.astype(x.dtype, copy=False) is x


def test_ops_keep_the_scalar_type():
    x = nd.array([1, 2, 3], dtype="int32")
    assert (x + 1).dtype is np.int32
    assert x.astype("float64").dtype is np.float64
    assert nd.array(np.ones(2, np.float16)).dtype is np.float32   # MXNet: float32 unless dtype= is given


def test_traced_arrays_report_the_same_type():
    seen = {}

    class Probe(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            seen[F.__name__.rsplit(".", 1)[-1]] = x.dtype
            return x * 2

    net = Probe()
    x = nd.ones((2, 2), dtype="float64")
    net(x)
    net.hybridize()
    net(x)
    assert set(seen.values()) == {np.float64}, seen
    assert len(seen) == 2


def test_export_returns_none_and_export_paths_names_the_files(tmp_path):
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize()
    net.hybridize()
    net(nd.ones((1, 3)))
    prefix = str(tmp_path / "m")
    assert net.export(prefix, epoch=3) is None          # as MXNet 1.9.1
    sym_file, params_file = mx.gluon.utils.export_paths(prefix, epoch=3)
    assert sym_file == prefix + "-symbol.json" and params_file == prefix + "-0003.params"
    back = mx.gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_allclose(back(nd.ones((1, 3))).asnumpy(), net(nd.ones((1, 3))).asnumpy())
