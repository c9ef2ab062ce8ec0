"""mx.np.pad / unique / delete / bincount / einsum: numpy's results, gradients, hybridize
(MXNet's `_npi_*` names and attributes in the export) and MXNet 1.9.1's argument errors."""
from __future__ import annotations

import json

import numpy as onp
import pytest

import hybridgraph as mx
from hybridgraph import autograd, np

from .fn_block import FnBlock as _Fn


pytestmark = pytest.mark.usefixtures("np_mode")


def _both(fn, *xs):
    """The block's outputs eagerly and hybridized (as numpy lists)."""
    outs = []
    for hybridize in (False, True):
        net = _Fn(fn)
        if hybridize:
            net.hybridize()
        out = net(*xs)
        outs.append([o.asnumpy() for o in (out if isinstance(out, (list, tuple)) else [out])])
    return outs


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "maximum", "minimum"])
def test_pad_modes_match_numpy_eager_and_hybridized(mode):
    x = onp.arange(24, dtype="float32").reshape(2, 3, 4)
    pw = ((1, 2), (0, 1), (2, 0))
    want = onp.pad(x, pw, mode=mode)
    for got in _both(lambda F, a: F.np.pad(a, pw, mode=mode), np.array(x)):
        onp.testing.assert_array_equal(got[0], want)


def test_pad_constant_value_and_gradients():
    x = np.array([[1, 2], [3, 4]], dtype="float32")
    onp.testing.assert_array_equal(np.pad(x, ((1, 1), (1, 1)), constant_values=5).asnumpy(),
                                   onp.pad(x.asnumpy(), 1, constant_values=5))
    g = onp.arange(20, dtype="float32").reshape(4, 5)
    for mode in ("constant", "edge", "reflect", "symmetric"):
        x.attach_grad()
        with autograd.record():
            y = np.pad(x, ((1, 1), (2, 1)), mode=mode)
        y.backward(np.array(g))
        kw = {"constant_values": -1} if mode == "constant" else {}
        idx = onp.pad(onp.arange(4).reshape(2, 2), ((1, 1), (2, 1)), mode=mode, **kw)
        want = onp.zeros(4)
        onp.add.at(want, idx[idx >= 0], g[idx >= 0])
        onp.testing.assert_allclose(x.grad.asnumpy(), want.reshape(2, 2), err_msg=mode)


def test_pad_errors_as_mxnet():
    x = np.ones((2, 2))
    with pytest.raises(TypeError, match="must be tuple"):
        np.pad(x, [(1, 1), (1, 1)])
    with pytest.raises(TypeError, match="integral"):
        np.pad(x, ((1.5, 1), (1, 1)))
    with pytest.raises(ValueError, match="wrap"):
        np.pad(x, ((1, 1), (1, 1)), mode="wrap")
    with pytest.raises(ValueError, match="unsupported reflect_type"):
        np.pad(x, ((1, 1), (1, 1)), mode="reflect", reflect_type="odd")
    x.attach_grad()
    with pytest.raises(NotImplementedError, match="maximum"):
        with autograd.record():
            y = np.pad(x, ((1, 1), (1, 1)), mode="maximum")
        y.backward()


def test_pad_export_names_mxnet_attrs(tmp_path):
    net = _Fn(lambda F, a: F.np.pad(a, ((1, 2), (0, 1)), mode="edge"))
    net.hybridize()
    net(np.ones((2, 3)))
    net.export(str(tmp_path / "m"))
    nodes = json.loads((tmp_path / "m-symbol.json").read_text())["nodes"]
    pad = [n for n in nodes if n["op"] == "_npi_pad"][0]
    assert pad["attrs"]["mode"] == "edge" and pad["attrs"]["pad_width"] == "((1, 2), (0, 1))"


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_unique_all_outputs(axis):
    x = onp.array([[1, 0, 1], [2, 2, 0], [1, 0, 1]], dtype="float32")
    want = onp.unique(x, True, True, True, axis=axis)
    for got in _both(lambda F, a: F.np.unique(a, True, True, True, axis), np.array(x)):
        assert len(got) == 4
        for g, w in zip(got, want):
            onp.testing.assert_array_equal(g, w)
    u = np.unique(np.array(x))
    assert isinstance(u, np.ndarray) and u.dtype == onp.float32


def test_delete_int_slice_and_index_array():
    x = onp.arange(12, dtype="float32").reshape(3, 4)
    a = np.array(x)
    onp.testing.assert_array_equal(np.delete(a, 1, axis=1).asnumpy(), onp.delete(x, 1, axis=1))
    onp.testing.assert_array_equal(np.delete(a, slice(None, None, 2), axis=0).asnumpy(),
                                   onp.delete(x, slice(None, None, 2), axis=0))
    # MXNet ignores indices outside [0, size), negative ones included
    got = np.delete(a, np.array([-1, 1, 20, 1], dtype="int32")).asnumpy()
    onp.testing.assert_array_equal(got, onp.delete(x, [1]))
    for got in _both(lambda F, b: F.np.delete(b, -1, axis=0), a):
        onp.testing.assert_array_equal(got[0], x[:2])
    with pytest.raises(TypeError, match="'obj' can not support"):
        np.delete(a, 1.5)
    with pytest.raises(TypeError, match="'arr' can not support"):
        np.delete(x, 1)


def test_bincount_weights_minlength_and_errors():
    x = np.array([1, 1, 3], dtype="int32")
    onp.testing.assert_array_equal(np.bincount(x, minlength=6).asnumpy(), [0, 2, 0, 1, 0, 0])
    w = np.array([0.5, 0.25, 1.0], dtype="float32")
    got = np.bincount(x, w)
    assert got.dtype == onp.float32
    onp.testing.assert_allclose(got.asnumpy(), [0, 0.75, 0, 1.0])
    for out in _both(lambda F, a, b: F.np.bincount(a, b, 5), x, w):
        onp.testing.assert_allclose(out[0], [0, 0.75, 0, 1.0, 0])
    with pytest.raises(Exception, match="int type"):
        np.bincount(np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match="Minlength"):
        np.bincount(x, minlength=-1)
    with pytest.raises(ValueError, match="non-negative"):
        np.bincount(np.array([-1, 2], dtype="int32"))


@pytest.mark.parametrize("sub,shapes", [("ij,jk->ik", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]), ("ii", [(4, 4)]),
                                        ("...ij,...jk", [(2, 2, 3), (1, 3, 2)]), ("i,j", [(2,), (3,)]),
                                        ("ijk->", [(2, 3, 2)])])
def test_einsum_forward_gradient_hybridize(sub, shapes):
    rng = onp.random.default_rng(0)
    xs = [rng.standard_normal(s).astype("float32") for s in shapes]
    want = onp.einsum(sub, *xs)
    for optimize in (False, True):
        for got in _both(lambda F, *a: F.np.einsum(sub, *a, optimize=optimize), *map(np.array, xs)):
            onp.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-5)
    arrs = [np.array(x) for x in xs]
    for a in arrs:
        a.attach_grad()
    with autograd.record():
        y = np.einsum(sub, *arrs)
    y.backward()
    for i, (a, x) in enumerate(zip(arrs, xs)):   # d sum(out) / d x_i by unit perturbations
        want_g = onp.zeros(x.shape)
        for k in onp.ndindex(x.shape):
            e = onp.zeros(x.shape)
            e[k] = 1
            want_g[k] = onp.einsum(sub, *[e if j == i else xj for j, xj in enumerate(xs)]).sum()
        onp.testing.assert_allclose(a.grad.asnumpy(), want_g, rtol=1e-5, atol=1e-5)
    with pytest.raises(Exception, match="operands"):
        np.einsum("ij,jk", arrs[0])


def test_symbol_attrs_as_mxnet_writes_them():
    """The node attributes real MXNet 1.9.1's mx.sym.np writes for the same calls (checked)."""
    def v(n):
        return mx.sym.var(n).as_np_ndarray()

    def attrs(s):
        return [(n["op"], n.get("attrs")) for n in json.loads(s.tojson())["nodes"] if n["op"] != "null"]

    u = mx.sym.np.unique(v("a"), True, False, True, 0)
    assert isinstance(u, list) and len(u) == 3
    assert attrs(u[0]) == [("_npi_unique", {"axis": "0", "return_counts": "True", "return_index": "True",
                                            "return_inverse": "False"})]
    assert attrs(mx.sym.np.einsum("ij,jk->ik", v("a"), v("b"), optimize=True)) == [
        ("_npi_einsum", {"num_args": "2", "optimize": "1", "subscripts": "ij,jk->ik"})]
    assert attrs(mx.sym.np.delete(v("a"), slice(1, None, 2), axis=0)) == [
        ("_npi_delete", {"axis": "0", "start": "1", "step": "2", "stop": "None"})]
    assert attrs(mx.sym.np.delete(v("a"), 3)) == [("_npi_delete", {"axis": "None", "int_ind": "3"})]
    assert attrs(mx.sym.np.bincount(v("a"), v("w"), minlength=3)) == [
        ("_npi_bincount", {"has_weights": "True", "minlength": "3"})]
