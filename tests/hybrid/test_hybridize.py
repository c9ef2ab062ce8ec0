"""hybridize(): tracing semantics, TraceError, the trace cache, threads, autograd and export.

Every semantic test runs the same block eagerly and hybridized and expects the
same results; the tracer must behave like an NDArray (shape, ndim, dtype,
slicing, broadcasting, Python scalars, None / keyword / nested inputs and outputs).
"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hybridgraph import nd
from hybridgraph.gluon import HybridBlock, nn
from hybridgraph.gluon.testing import check_hybrid_consistency
from hybridgraph.nd import autograd
from hybridgraph.nd.errors import MXNetError
from hybridgraph.symbol.tracer import TraceError, Tracer


def _rand(*shape: int, seed: int = 0, dtype: Any = np.float32) -> nd.NDArray:
    return nd.array(np.random.default_rng(seed).standard_normal(shape).astype(dtype), dtype=dtype)


def _numpy(out: Any) -> Any:
    """NDArrays -> numpy in a nested structure (other leaves unchanged)."""
    if isinstance(out, nd.NDArray):
        return out.asnumpy()
    if isinstance(out, (list, tuple)):
        return type(out)(_numpy(o) for o in out)
    if isinstance(out, dict):
        return {k: _numpy(v) for k, v in out.items()}
    return out


def _assert_same(got: Any, want: Any) -> None:
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, np.ndarray):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same(g, w)
    elif isinstance(want, dict):
        assert sorted(got) == sorted(want)
        for k in want:
            _assert_same(got[k], want[k])
    else:
        assert got == want


def _as_lists(out: Any) -> Any:
    """Tuples -> lists at every depth: MXNet 1.9.1's cached op regroups a hybridized block's
    outputs into (nested) lists whatever the block returned."""
    if isinstance(out, (list, tuple)):
        return [_as_lists(o) for o in out]
    if isinstance(out, dict):
        return {k: _as_lists(v) for k, v in out.items()}
    return out


def eager_vs_hybridized(block: HybridBlock, *args: Any, **kwargs: Any) -> Any:
    """Call eagerly, then hybridized (twice: trace, then cache hit); all results must agree,
    the hybridized ones with tuples turned into lists as MXNet's cached op returns them.
    Returns the hybridized result."""
    block.hybridize(False)
    want = _numpy(block(*args, **kwargs))
    block.hybridize()
    for _ in range(2):
        got = _numpy(block(*args, **kwargs))
        _assert_same(got, _as_lists(want))
    return got


class Fn(HybridBlock):
    """A HybridBlock running `fn(x, *args, **kwargs)` as its plain forward."""

    def __init__(self, fn: Callable, **kwargs: Any):
        super().__init__(**kwargs)
        self._fn = fn

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)


# -- tracer semantics --------------------------------------------------------------------------

def test_tracer_carries_shape_ndim_dtype() -> None:
    seen = []

    def fn(x):
        seen.append((type(x), x.shape, x.ndim, x.dtype))
        return x.reshape((x.shape[0], -1)) * x.ndim + x.shape[1]

    block = Fn(fn)
    x = _rand(2, 3, 4, dtype=np.float64)
    eager_vs_hybridized(block, x)
    assert seen[0] == (nd.NDArray, (2, 3, 4), 3, np.dtype(np.float64))
    assert seen[1] == (Tracer, (2, 3, 4), 3, np.dtype(np.float64))
    assert len(seen) == 2  # one trace, then the cached graph


def test_dtype_flows_through_operators() -> None:
    def fn(x):
        y = x.astype("float16")
        assert y.dtype == np.float16
        return y, (x > 0), x.astype(x.dtype) * 2

    eager_vs_hybridized(Fn(fn), _rand(3, 4))


@pytest.mark.parametrize("key", [0, -1, (slice(None), slice(1, 3)), (slice(1, None), slice(None, None, 2)),
                                 (Ellipsis, 0), (0, slice(1, 3)), (slice(None), None), slice(None, None, -1),
                                 (1, 2)], ids=repr)
def test_slicing(key: Any) -> None:
    x = nd.array(np.arange(24, dtype=np.float32).reshape(3, 8))
    eager_vs_hybridized(Fn(lambda x: x[key] * 1), x)


def test_slicing_with_shapes_read_inside() -> None:
    eager_vs_hybridized(Fn(lambda x: x[:, 1:x.shape[1] - 1] + x[0, 1:-1]), _rand(4, 6))


@given(st.sampled_from([((3, 4), (1, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((5,), (2, 5)),
                        ((2, 3), (2, 3)), ((1,), (2, 2))]),
       st.sampled_from(["+", "-", "*", "/"]))
def test_broadcasting_between_different_shapes(shapes: tuple, op: str) -> None:
    a, b = _rand(*shapes[0], seed=1), _rand(*shapes[1], seed=2) + 3
    ops = {"+": lambda p, q: p + q, "-": lambda p, q: p - q, "*": lambda p, q: p * q, "/": lambda p, q: p / q}
    eager_vs_hybridized(Fn(lambda x, y: (ops[op](x, y), ops[op](y, x))), a, b)


def test_broadcasting_emits_broadcast_ops_and_same_shapes_elementwise(tmp_path: Path) -> None:
    class B(HybridBlock):
        def hybrid_forward(self, F, x, y, z):  # noqa: N803
            return (x + y) * z, F.broadcast_maximum(x, y)

    block = B()
    args = (_rand(3, 4), _rand(1, 4, seed=1), _rand(3, 4, seed=2))
    eager_vs_hybridized(block, *args)
    block.export(str(tmp_path / "b"))
    ops = [n["op"] for n in json.loads((tmp_path / "b-symbol.json").read_text())["nodes"]]
    assert ops == ["null", "null", "broadcast_add", "null", "elemwise_mul", "broadcast_maximum"]


@pytest.mark.parametrize("fn", [lambda x: x * 2, lambda x: 2 - x, lambda x: x ** 2, lambda x: 1 / (x + 5),
                                lambda x: -x + 0.5, lambda x: (x > 0.1) * x, lambda x: abs(x) % 0.3],
                         ids=["mul", "rsub", "pow", "rdiv", "neg", "cmp", "mod"])
def test_python_scalars(fn: Callable) -> None:
    eager_vs_hybridized(Fn(fn), _rand(3, 4))


def test_scalar_keyword_and_none_inputs() -> None:
    class B(HybridBlock):
        def forward(self, x, y=None, scale=1.0, shift=0):
            out = x * scale + shift
            return out if y is None else out + y

    block = B()
    x, y = _rand(2, 3), _rand(2, 3, seed=1)
    eager_vs_hybridized(block, x)
    eager_vs_hybridized(block, x, None, 3.0)
    eager_vs_hybridized(block, x, y, scale=2.0)
    eager_vs_hybridized(block, x, y=y, scale=0.5, shift=1)
    # a different scalar is a different constant in the graph: it must not reuse the old trace
    block.hybridize()
    np.testing.assert_allclose(block(x, scale=2.0).asnumpy(), x.asnumpy() * 2, rtol=1e-6)
    np.testing.assert_allclose(block(x, scale=5.0).asnumpy(), x.asnumpy() * 5, rtol=1e-6)


def test_hybrid_forward_with_keyword_inputs_and_parameters() -> None:
    class B(HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get("w", shape=(3,), init="ones")

        def hybrid_forward(self, F, x, mask=None, w=None):  # noqa: N803
            out = F.broadcast_mul(x, w)
            return out if mask is None else out * mask

    block = B()
    block.initialize()
    x = _rand(2, 3)
    eager_vs_hybridized(block, x)
    eager_vs_hybridized(block, x, mask=_rand(2, 3, seed=4))


def test_nested_list_tuple_inputs_and_outputs() -> None:
    def fn(xs, pair, scale=1.0):
        a, b = xs
        c, (d, e) = pair
        return [a + b, (c * scale, [d - e, None]), 7]

    xs = [_rand(2, 3, seed=i) for i in range(2)]
    pair = (_rand(4, seed=3), (_rand(2, 2, seed=4), _rand(2, 2, seed=5)))
    out = eager_vs_hybridized(Fn(fn), xs, pair, scale=2.0)
    assert isinstance(out, list) and isinstance(out[1], list) and out[1][1][1] is None and out[2] == 7


def test_hybridized_outputs_are_lists_as_in_mxnet() -> None:
    """MXNet 1.9.1 (checked): eagerly a block returns what hybrid_forward returns; hybridized,
    every tuple of outputs comes back as a list (static_alloc or not); one array stays one."""
    class Pair(HybridBlock):
        def hybrid_forward(self, F, x):  # noqa: N803
            return (x + 1, (x * 2, x))

    class One(HybridBlock):
        def hybrid_forward(self, F, x):  # noqa: N803
            return x + 1

    x = _rand(2)
    for flags in ({}, {"static_alloc": True, "static_shape": True}):
        block = Pair()
        assert type(block(x)) is tuple and type(block(x)[1]) is tuple
        block.hybridize(**flags)
        for _ in range(2):
            out = block(x)
            assert type(out) is list and type(out[1]) is list
            np.testing.assert_allclose(out[1][0].asnumpy(), x.asnumpy() * 2)
        one = One()
        one.hybridize(**flags)
        assert isinstance(one(x), nd.NDArray)


def test_dict_outputs() -> None:
    eager_vs_hybridized(Fn(lambda x: {"double": x * 2, "neg": -x}), _rand(2, 2))


def test_multi_output_operator_returned_whole() -> None:
    class B(HybridBlock):
        def hybrid_forward(self, F, x):  # noqa: N803
            return F.split(x, num_outputs=3, axis=1)

    out = eager_vs_hybridized(B(), _rand(2, 6))
    assert isinstance(out, list) and len(out) == 3


def test_len_and_iteration_of_known_shapes() -> None:
    eager_vs_hybridized(Fn(lambda x: [row * i for i, row in enumerate(x)] + [x * len(x)]), _rand(3, 2))


def test_nested_blocks_with_parameters() -> None:
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu"), nn.BatchNorm(), nn.Dense(4))
    net.initialize()
    eager_vs_hybridized(net, _rand(5, 7))


def test_hybridize_child_only_inside_eager_parent() -> None:
    net = nn.Sequential()
    net.add(nn.Dense(4), nn.Dense(2))
    net.initialize()
    x = _rand(3, 5)
    want = net(x).asnumpy()
    net[1].hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    assert net[1].cache_info()["traces"] == 1


# -- TraceError ---------------------------------------------------------------------------------

def _line_of(marker: str) -> int:
    """Line number in this file of the line containing `# marker`."""
    for i, line in enumerate(Path(__file__).read_text().splitlines(), start=1):
        if line.rstrip().endswith(f"# {marker}"):
            return i
    raise AssertionError(marker)


def _if_sum(x):
    if x.sum() > 0:  # TE:if
        return x
    return -x


def _float(x):
    return x * float(x.sum())  # TE:float


def _int(x):
    return x * int(x[0, 0])  # TE:int


def _asnumpy(x):
    return x * x.asnumpy().max()  # TE:asnumpy


def _asscalar(x):
    return x * x.sum().asscalar()  # TE:asscalar


def _setitem(x):
    x[:] = 0  # TE:setitem
    return x


def _iadd(x):
    x += 1  # TE:iadd
    return x


def _np_array(x):
    return x * np.asarray(x).sum()  # TE:np


CASES = {"if": _if_sum, "float": _float, "int": _int, "asnumpy": _asnumpy, "asscalar": _asscalar,
         "setitem": _setitem, "iadd": _iadd, "np": _np_array}


class _Deep(HybridBlock):
    """`features` holds four blocks; the last one runs the offending code."""

    def __init__(self, fn: Callable):
        super().__init__()
        with self.name_scope():
            self.features = nn.HybridSequential()
            self.features.add(nn.Dense(4, flatten=False), nn.Activation("relu"), nn.Dense(3, flatten=False),
                              Fn(fn))

    def forward(self, x):
        return self.features(x)


@pytest.mark.parametrize("case", sorted(CASES))
def test_trace_error_names_file_line_block_and_fix(case: str) -> None:
    net = _Deep(CASES[case])
    net.initialize()
    x = _rand(2, 3)
    net(x)  # eagerly it works
    net.hybridize()
    with pytest.raises(TraceError) as info:
        net(x)
    err = info.value
    assert isinstance(err, MXNetError) and isinstance(err, NotImplementedError)
    msg = str(err)
    assert f"{os.path.basename(__file__)}:{_line_of('TE:' + case)}" in msg
    assert f"{net.name}.features.3" in msg
    assert "F.where" in msg and "outside the hybridized block" in msg


def test_trace_error_in_a_direct_child_and_at_the_root() -> None:
    root = Fn(_float)
    root.hybridize()
    with pytest.raises(TraceError, match=rf"inside {root.name}\b"):
        root(_rand(2, 2))
    net = nn.HybridSequential()
    net.add(nn.Dense(2), Fn(_if_sum))
    net.initialize()
    net.hybridize()
    with pytest.raises(TraceError, match=rf"{net.name}\.1\b"):
        net(_rand(2, 2))


def test_trace_error_for_len_of_a_size_unknown_at_trace_time() -> None:
    class B(HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.w = self.params.get("w", shape=(0,), allow_deferred_init=True)

        def forward(self, x):
            n = len(self.w.data())  # TE:len
            return x * n

    block = B()
    block.initialize()
    block.hybridize()
    with pytest.raises(TraceError) as info:
        block(_rand(2, 2))
    assert f"{os.path.basename(__file__)}:{_line_of('TE:len')}" in str(info.value)
    assert "not known at trace time" in str(info.value)


def test_trace_error_leaves_the_block_usable() -> None:
    block = Fn(_if_sum)
    block.hybridize()
    with pytest.raises(TraceError):
        block(_rand(2, 2))
    block.hybridize(False)
    np.testing.assert_allclose(block(_rand(2, 2)).asnumpy(), _if_sum(_rand(2, 2)).asnumpy())


def test_where_is_the_fix() -> None:
    class B(HybridBlock):
        def hybrid_forward(self, F, x):  # noqa: N803
            return F.where(x > 0, x, -x)

    eager_vs_hybridized(B(), _rand(3, 3))


# -- the trace cache ------------------------------------------------------------------------------

def test_train_and_predict_never_share_a_trace() -> None:
    def fn(x):
        return x * (2 if autograd.is_training() else 3)

    block = Fn(fn)
    block.hybridize()
    x = _rand(2, 2)
    np.testing.assert_allclose(block(x).asnumpy(), x.asnumpy() * 3, rtol=1e-6)
    with autograd.record(train_mode=True):
        y = block(x)
    np.testing.assert_allclose(y.asnumpy(), x.asnumpy() * 2, rtol=1e-6)
    with autograd.record(train_mode=False):
        np.testing.assert_allclose(block(x).asnumpy(), x.asnumpy() * 3, rtol=1e-6)
    with autograd.train_mode():
        np.testing.assert_allclose(block(x).asnumpy(), x.asnumpy() * 2, rtol=1e-6)
    np.testing.assert_allclose(block(x).asnumpy(), x.asnumpy() * 3, rtol=1e-6)
    info = block.cache_info()
    assert info["traces"] == 4 and info["hits"] == 1
    assert all("autograd mode" in r for r in info["retrace_reasons"][1:])


def test_dropout_and_batchnorm_follow_the_mode() -> None:
    drop, bn = nn.Dropout(0.5), nn.BatchNorm(in_channels=4)
    bn.initialize()
    drop.hybridize()
    bn.hybridize()
    x = _rand(8, 4) + 2
    assert not (drop(x).asnumpy() == 0).any()
    with autograd.record():
        assert (drop(x).asnumpy() == 0).any()
    np.testing.assert_allclose(bn(x).asnumpy(), x.asnumpy() / np.sqrt(1 + 1e-5), rtol=1e-5)
    with autograd.record():
        y = bn(x)
    y.backward()
    np.testing.assert_allclose(y.asnumpy().mean(axis=0), 0, atol=1e-5)
    np.testing.assert_allclose(bn.running_mean.data().asnumpy(), 0.1 * x.asnumpy().mean(axis=0), rtol=1e-5)


def test_new_batch_size_reuses_a_shape_generic_trace() -> None:
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu"), nn.Dense(3))
    net.initialize()
    inputs = [_rand(batch, 5, seed=batch) for batch in (4, 7, 1, 4)]
    want = [net(x).asnumpy() for x in inputs]
    net.hybridize()
    for x, w in zip(inputs, want):
        np.testing.assert_allclose(net(x).asnumpy(), w, rtol=1e-6)
    info = net.cache_info()
    assert info["traces"] == 1 and info["hits"] == 3 and info["retrace_reasons"] == ["first call"]


def test_reading_a_shape_makes_the_trace_shape_specific() -> None:
    block = Fn(lambda x: x.reshape((x.shape[0], -1)) + 1)
    block.hybridize()
    for batch in (2, 5, 2):
        x = _rand(batch, 3, 2)
        np.testing.assert_allclose(block(x).asnumpy(), x.asnumpy().reshape(batch, -1) + 1, rtol=1e-6)
    info = block.cache_info()
    assert info["traces"] == 2 and info["hits"] == 1
    assert "read a concrete shape" in info["retrace_reasons"][1]
    assert "(5, 3, 2)" in info["retrace_reasons"][1] and "(2, 3, 2)" in info["retrace_reasons"][1]


def test_new_rank_or_dtype_retraces_with_a_reason() -> None:
    block = Fn(lambda x: x * 2)
    block.hybridize()
    block(_rand(2, 2))
    block(_rand(2, 2, 2))
    block(_rand(2, 2, dtype=np.float64))
    info = block.cache_info()
    assert info["traces"] == 3
    assert all("new input signature" in r for r in info["retrace_reasons"][1:])


def test_rehybridize_clears_the_cache() -> None:
    block = Fn(lambda x: x + 1)
    block.hybridize()
    block(_rand(2))
    assert block.cache_info()["entries"] == 1
    block.hybridize()
    assert block.cache_info()["entries"] == 0


# -- threads ------------------------------------------------------------------------------------

def _mlp() -> nn.HybridSequential:
    net = nn.HybridSequential()
    net.add(nn.Dense(16, activation="relu"), nn.BatchNorm(), nn.Dense(10))
    net.initialize()
    return net


def test_eight_threads_get_the_sequential_results() -> None:
    net = _mlp()
    net.hybridize()
    inputs = [_rand(1 + i % 3, 12, seed=i) for i in range(8)]
    want = [net(x).asnumpy() for x in inputs]
    net.hybridize()  # fresh cache: the threads also race to build the traces
    got: list = [None] * 8
    errors: list = []
    barrier = threading.Barrier(8)

    def work(i: int) -> None:
        try:
            barrier.wait()
            for _ in range(25):
                out = net(inputs[i]).asnumpy()
                if got[i] is not None and not np.array_equal(out, got[i]):
                    raise AssertionError(f"thread {i}: results changed between calls")
                got[i] = out
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


# -- autograd -----------------------------------------------------------------------------------

def test_hybridized_gradients_equal_eager_ones() -> None:
    net = nn.HybridSequential()
    net.add(nn.Dense(6, activation="tanh"), nn.BatchNorm(), nn.Dense(3))
    net.initialize()
    net(_rand(4, 5))  # settle deferred shapes, so the consistency check snapshots every parameter
    check_hybrid_consistency(net, [np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)],
                             rtol=1e-5, atol=1e-6)


@given(st.integers(1, 5), st.integers(1, 6))
def test_hybridized_gradients_on_drawn_shapes(batch: int, features: int) -> None:
    block = Fn(lambda x, y: (x * y + x[:, :1]).sum(axis=1) + (x / (y * y + 1)).mean())
    x, y = _rand(batch, features, seed=batch), _rand(batch, features, seed=features + 10)
    grads = []
    for hybrid in (False, True):
        block.hybridize(hybrid)
        xs = [x.copy(), y.copy()]
        for a in xs:
            a.attach_grad()
        with autograd.record():
            out = block(*xs)
        out.backward()
        grads.append([a.grad.asnumpy() for a in xs])
    for g, w in zip(grads[1], grads[0]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_grad_req_add_accumulates_like_eager() -> None:
    results = []
    for hybrid in (False, True):
        nd.random.seed(3)
        net = nn.Dense(3, in_units=4)
        net.initialize()
        net.collect_params().setattr("grad_req", "add")
        net.hybridize(hybrid)
        for seed in range(3):
            with autograd.record():
                loss = (net(_rand(2, 4, seed=seed)) ** 2).sum()
            loss.backward()
        results.append(net.weight.grad().asnumpy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-6)


# -- export -------------------------------------------------------------------------------------

def test_export_files_names_and_keys(tmp_path: Path) -> None:
    net = _mlp()
    net.hybridize()
    net(_rand(2, 12))
    net.export(str(tmp_path / "model"), epoch=7)
    assert sorted(os.listdir(tmp_path)) == ["model-0007.params", "model-symbol.json"]
    graph = json.loads((tmp_path / "model-symbol.json").read_text())
    assert graph["nodes"][0]["name"] == "data"
    params = nd.load(str(tmp_path / "model-0007.params"))
    bn = net[1].prefix
    assert {k for k in params if k.startswith("aux:")} == {f"aux:{bn}running_mean", f"aux:{bn}running_var"}
    args = {k[4:] for k in params if k.startswith("arg:")}
    assert args == {p for p in net.collect_params() if "running" not in p}
    for name, p in net.collect_params().items():
        key = ("aux:" if "running" in name else "arg:") + name
        np.testing.assert_array_equal(params[key].asnumpy(), p.data().asnumpy())


def test_export_input_names_for_several_inputs(tmp_path: Path) -> None:
    block = Fn(lambda a, b, c: a * b + c)
    block.hybridize()
    block(_rand(2), _rand(2), _rand(2))
    block.export(str(tmp_path / "three"))
    graph = json.loads((tmp_path / "three-symbol.json").read_text())
    assert [graph["nodes"][i]["name"] for i in graph["arg_nodes"]] == ["data0", "data1", "data2"]
    assert not nd.load(str(tmp_path / "three-0000.params"))


def test_export_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    net = _mlp()
    net.hybridize()
    net(_rand(2, 12))
    net.export(str(tmp_path / "m"))
    before = {f: (tmp_path / f).read_bytes() for f in os.listdir(tmp_path)}

    import hybridgraph.nd.serialization as ser

    def broken(*_a, **_k):
        raise OSError("disk full")
    monkeypatch.setattr(ser, "save_tobuffer", broken)
    net.collect_params()[net[0].prefix + "weight"].set_data(nd.zeros((16, 12)))
    with pytest.raises(OSError, match="disk full"):
        net.export(str(tmp_path / "m"))
    monkeypatch.undo()
    assert {f: (tmp_path / f).read_bytes() for f in os.listdir(tmp_path) if not f.startswith(".")} == before
    assert sorted(os.listdir(tmp_path)) == sorted(before)  # no temporary files left behind


def test_export_of_a_never_called_block_is_a_clear_error(tmp_path: Path) -> None:
    net = _mlp()
    with pytest.raises(RuntimeError, match="run forward with this block at least once"):
        net.export(str(tmp_path / "x"))
    net.hybridize()
    with pytest.raises(RuntimeError, match="before calling export"):
        net.export(str(tmp_path / "x"))
    assert not os.listdir(tmp_path)
