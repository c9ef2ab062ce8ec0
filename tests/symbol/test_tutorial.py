"""Every snippet of MXNet 1.x's Symbol tutorial (docs/tutorials/basic/symbol.md)
and the Symbol API overview, with the values real MXNet 1.9.1 printed for them.

Each test starts a fresh NameManager, so automatic names (`_plus0`) are the
ones a fresh MXNet process prints. A snippet whose operators are not registered
fails, naming them.
"""
from __future__ import annotations

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph import symbol as S  # noqa: N812 - the tutorial's mx.sym
from hybridgraph.nd.registry import has_op


@pytest.fixture(autouse=True)
def fresh_names():
    with S.NameManager():
        yield


def needs(*ops: str) -> None:
    missing = [o for o in ops if not has_op(o)]
    if missing:
        pytest.fail(f"operators not registered: {missing}")


def needs_json_io() -> None:
    missing = [f for f in ("load", "load_json") if not hasattr(S, f)]
    assert not missing, f"symbol does not export {missing}"


def mlp(out_name: str = "out"):
    net = S.Variable("data")
    net = S.FullyConnected(data=net, name="fc1", num_hidden=128)
    net = S.Activation(data=net, name="relu1", act_type="relu")
    net = S.FullyConnected(data=net, name="fc2", num_hidden=10)
    return S.SoftmaxOutput(data=net, name=out_name)


# -- Basic Symbol Composition --------------------------------------------------------------

def test_basic_operators():
    a = S.Variable("a")
    b = S.Variable("b")
    c = a + b
    assert repr((a, b, c)) == "(<Symbol a>, <Symbol b>, <Symbol _plus0>)"


def test_most_ndarray_operators_apply_to_symbols():
    needs("dot", "Reshape", "broadcast_to")
    a, b = S.Variable("a"), S.Variable("b")
    d = a * b
    e = S.dot(a, b)
    f = S.reshape(d + e, shape=(1, 4))
    g = S.broadcast_to(f, shape=(2, 4))
    assert [s.name for s in (d, e, f, g)] == ["_mul0", "dot0", "reshape0", "broadcast_to0"]
    assert g.list_arguments() == ["a", "b"] and g.list_outputs() == ["broadcast_to0_output"]
    av = np.array([[1, 2], [3, 4]], "f")
    bv = np.array([[0.5, -1], [2, 0]], "f")
    out = g.eval(ctx=nd.cpu(), a=nd.array(av), b=nd.array(bv))[0].asnumpy()
    np.testing.assert_array_equal(out, [[5.0, -3.0, 15.5, -3.0]] * 2)


def test_basic_neural_network_arguments():
    needs("FullyConnected", "Activation", "SoftmaxOutput")
    net = mlp()
    assert net.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias", "out_label"]
    assert net.list_outputs() == ["out_output"]
    net = S.Variable("data")
    w = S.Variable("myweight")
    net = S.FullyConnected(data=net, weight=w, name="fc1", num_hidden=128)
    assert net.list_arguments() == ["data", "myweight", "fc1_bias"]


def test_more_complicated_composition():
    needs("FullyConnected")
    lhs, rhs = S.Variable("data1"), S.Variable("data2")
    net = S.FullyConnected(data=lhs + rhs, name="fc1", num_hidden=128)
    assert net.list_arguments() == ["data1", "data2", "fc1_weight", "fc1_bias"]
    net = S.FullyConnected(data=S.Variable("data"), name="fc1", num_hidden=128)
    net2 = S.FullyConnected(data=S.Variable("data2"), name="net2", num_hidden=128)
    composed_net = net(data=net2, name="compose")
    assert composed_net.list_arguments() == ["data2", "net2_weight", "net2_bias", "fc1_weight", "fc1_bias"]
    assert composed_net.name == "compose"


def test_prefix_name_manager():
    needs("FullyConnected")
    net = S.Variable("data")
    for i in range(2):
        with S.Prefix(f"layer{i + 1}_"):
            net = S.FullyConnected(data=net, name="fc", num_hidden=100)
    assert net.list_arguments() == ["data", "layer1_fc_weight", "layer1_fc_bias",
                                    "layer2_fc_weight", "layer2_fc_bias"]


def test_modularized_construction():
    needs("Convolution", "BatchNorm", "Activation", "Pooling", "Concat")

    def conv_factory(data, num_filter, kernel, stride=(1, 1), pad=(0, 0), name=None, suffix=""):
        conv = S.Convolution(data=data, num_filter=num_filter, kernel=kernel, stride=stride, pad=pad,
                             name=f"conv_{name}{suffix}")
        bn = S.BatchNorm(data=conv, name=f"bn_{name}{suffix}")
        return S.Activation(data=bn, act_type="relu", name=f"relu_{name}{suffix}")

    prev = S.Variable(name="Previos Output")
    conv_comp = conv_factory(data=prev, num_filter=64, kernel=(7, 7), stride=(2, 2))
    arg_shapes, out_shapes, aux_shapes = conv_comp.infer_shape(**{"Previos Output": (128, 3, 28, 28)})
    assert out_shapes == [(128, 64, 11, 11)] and aux_shapes == [(64,), (64,)]


def test_group_multiple_symbols():
    needs("FullyConnected", "Activation", "SoftmaxOutput", "LinearRegressionOutput")
    net = S.Variable("data")
    fc1 = S.FullyConnected(data=net, name="fc1", num_hidden=128)
    net = S.Activation(data=fc1, name="relu1", act_type="relu")
    out1 = S.SoftmaxOutput(data=net, name="softmax")
    out2 = S.LinearRegressionOutput(data=net, name="regression")
    group = S.Group([out1, out2])
    assert group.list_outputs() == ["softmax_output", "regression_output"]
    assert group.list_arguments() == ["data", "fc1_weight", "fc1_bias", "softmax_label", "regression_label"]


# -- Symbol Manipulation ----------------------------------------------------------------------

def test_shape_and_type_inference():
    a, b = S.Variable("a"), S.Variable("b")
    c = a + b
    arg_name = c.list_arguments()
    out_name = c.list_outputs()
    arg_shape, out_shape, _ = c.infer_shape(a=(2, 3), b=(2, 3))
    arg_type, out_type, _ = c.infer_type(a="float32", b="float32")
    assert {"input": dict(zip(arg_name, arg_shape)), "output": dict(zip(out_name, out_shape))} == \
        {"input": {"a": (2, 3), "b": (2, 3)}, "output": {"_plus0_output": (2, 3)}}
    types = {"input": dict(zip(arg_name, arg_type)), "output": dict(zip(out_name, out_type))}
    assert repr(types) == ("{'input': {'a': <class 'numpy.float32'>, 'b': <class 'numpy.float32'>}, "
                           "'output': {'_plus0_output': <class 'numpy.float32'>}}")


def test_bind_with_data_and_evaluate():
    c = S.Variable("a") + S.Variable("b")
    ex = c.bind(ctx=nd.cpu(), args={"a": nd.ones([2, 3]), "b": nd.ones([2, 3])})
    ex.forward()
    text = f"number of outputs = {len(ex.outputs)}\nthe first output = \n{ex.outputs[0].asnumpy()}"
    assert text == "number of outputs = 1\nthe first output = \n[[2. 2. 2.]\n [2. 2. 2.]]"
    ex = c.eval(ctx=nd.cpu(), a=nd.ones([2, 3]), b=nd.ones([2, 3]))
    assert len(ex) == 1
    np.testing.assert_array_equal(ex[0].asnumpy(), np.full((2, 3), 2.0))


def test_simple_bind_allocates_everything():
    needs("FullyConnected", "Activation", "SoftmaxOutput")
    ex = mlp().simple_bind(ctx=nd.cpu(), data=(64, 784))
    assert {k: v.shape for k, v in ex.arg_dict.items()} == {
        "data": (64, 784), "fc1_weight": (128, 784), "fc1_bias": (128,), "fc2_weight": (10, 128),
        "fc2_bias": (10,), "out_label": (64,)}
    assert [o.shape for o in ex.outputs] == [(64, 10)]
    assert all(g.shape == ex.arg_dict[k].shape for k, g in ex.grad_dict.items())


def test_load_and_save(tmp_path):
    needs_json_io()
    c = S.Variable("a") + S.Variable("b")
    text = c.tojson()
    assert '"op": "elemwise_add"' in text and '"name": "_plus0"' in text
    c.save(str(tmp_path / "symbol-c.json"))
    c2 = S.load(str(tmp_path / "symbol-c.json"))
    assert c.tojson() == c2.tojson()
    assert S.load_json(text).tojson() == text


def test_type_cast():
    needs("Cast")
    a = S.Variable("data")
    arg, out, _ = S.Cast(data=a, dtype="float16").infer_type(data="float32")
    assert repr({"input": arg, "output": out}) == \
        "{'input': [<class 'numpy.float32'>], 'output': [<class 'numpy.float16'>]}"
    arg, out, _ = S.Cast(data=a, dtype="uint8").infer_type(data="int32")
    assert {"input": arg, "output": out} == {"input": [np.int32], "output": [np.uint8]}


def test_variable_sharing():
    a, b, c = S.Variable("a"), S.Variable("b"), S.Variable("c")
    d = a + b * c
    data = nd.ones((2, 3)) * 2
    ex = d.bind(ctx=nd.cpu(), args={"a": data, "b": data, "c": data})
    ex.forward()
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), np.full((2, 3), 6.0))


# -- Variables and attributes ----------------------------------------------------------------

def test_variable_repr_and_attributes():
    v = S.var("v", attr={"mood": "angry"}, shape=(2, 3), lr_mult=2.0, dtype="float16")
    assert repr(v) == "<Symbol v>" and str(v) == "<Symbol v>"
    assert v.attr("mood") == "angry" and v.attr("__shape__") == "(2, 3)"
    assert v.list_attr() == {"__dtype__": "2", "__lr_mult__": "2.0", "lr_mult": "2.0",
                             "__shape__": "(2, 3)", "mood": "angry"}


def test_attr_scope():
    with S.AttrScope(group="4", data="great"):
        assert S.var("x").list_attr() == {"data": "great", "group": "4"}


def test_variable_errors():
    with pytest.raises(TypeError, match="Expect a string for variable `name`"):
        S.var(1)
    with pytest.raises(ValueError, match="Attribute name=foo is not supported"):
        S.var("x", foo=1)


# -- helper functions of the Symbol API ---------------------------------------------------------

CREATION = [
    (lambda: S.zeros((2, 3)), np.zeros((2, 3))),
    (lambda: S.ones((2,)), np.ones(2)),
    (lambda: S.full((2, 2), 7), np.full((2, 2), 7.0)),
    (lambda: S.arange(0, 5, 2), np.array([0.0, 2.0, 4.0])),
    (lambda: S.linspace(0, 1, 5), np.array([0.0, 0.25, 0.5, 0.75, 1.0])),
    (lambda: S.eye(3, 2, 1), np.array([[0.0, 1.0], [0.0, 0.0], [0.0, 0.0]])),
]


@pytest.mark.parametrize("k", range(len(CREATION)))
def test_creation_helpers(k):
    make, want = CREATION[k]
    out = make().eval(ctx=nd.cpu())[0]
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.asnumpy(), want)


X = np.array([[1, 4], [9, 2]], "f")
Y = np.array([[2, 2], [3, 5]], "f")
BINARY_HELPERS = [   # expression, arguments, MXNet 1.9.1's result
    ("pow(x, y)", ["x", "y"], [[1, 16], [729, 32]]),
    ("pow(x, 2)", ["x"], [[1, 16], [81, 4]]),
    ("pow(2, y)", ["y"], [[4, 4], [8, 32]]),
    ("maximum(x, y)", ["x", "y"], [[2, 4], [9, 5]]),
    ("maximum(x, 3)", ["x"], [[3, 4], [9, 3]]),
    ("minimum(x, y)", ["x", "y"], [[1, 2], [3, 2]]),
    ("minimum(3, y)", ["y"], [[2, 2], [3, 3]]),
    ("hypot(x, y)", ["x", "y"], [[2.236068, 4.472136], [9.486833, 5.3851647]]),
    ("hypot(x, 4)", ["x"], [[4.1231055, 5.656854], [9.848858, 4.472136]]),
]


@pytest.mark.parametrize("expr,args,want", BINARY_HELPERS, ids=[e for e, _, _ in BINARY_HELPERS])
def test_binary_helpers(expr, args, want):
    x, y = S.var("x"), S.var("y")
    fn = getattr(S, expr.split("(")[0])
    sym = eval(expr, {"x": x, "y": y, expr.split("(")[0]: fn})  # noqa: S307 - fixed table above
    assert sym.list_arguments() == args
    feed = {"x": nd.array(X), "y": nd.array(Y)}
    out = sym.eval(ctx=nd.cpu(), **{n: feed[n] for n in args})[0].asnumpy()
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_power_operators():
    x, y = S.var("x"), S.var("y")
    out = (x ** y).eval(ctx=nd.cpu(), x=nd.array(X), y=nd.array(Y))[0].asnumpy()
    np.testing.assert_array_equal(out, [[1, 16], [729, 32]])
    out = (2 ** x).eval(ctx=nd.cpu(), x=nd.array(X))[0].asnumpy()
    np.testing.assert_array_equal(out, [[2, 16], [512, 4]])


def test_split_v2():
    x = S.var("x")
    parts = S.split_v2(x, indices_or_sections=2, axis=1)
    assert len(parts) == 2
    got = [o.asnumpy().tolist() for o in parts.eval(ctx=nd.cpu(), x=nd.array(X))]
    assert got == [[[1.0], [9.0]], [[4.0], [2.0]]]
    parts = S.split_v2(S.var("z"), indices_or_sections=(1, 3), axis=0)
    got = [o.asnumpy().tolist() for o in parts.eval(ctx=nd.cpu(), z=nd.arange(5))]
    assert got == [[0.0], [1.0, 2.0], [3.0, 4.0]]


def test_make_loss_and_gradient():
    """MXNet 1.9.1's Symbol.gradient raises 'not implemented'; hybridgraph builds the graph."""
    needs("make_loss")
    data = S.var("data")
    loss = S.make_loss(S.square(data))
    assert loss.name == "make_loss0" and loss.list_outputs() == ["make_loss0_loss"]
    (g,) = loss.gradient(wrt=["data"])
    v = np.array([[1.0, -2.0], [0.5, 3.0]], "f")
    np.testing.assert_allclose(g.eval(ctx=nd.cpu(), data=nd.array(v))[0].asnumpy(), 2 * v)


# -- a training loop with the executor ------------------------------------------------------------

def _toy_data(n: int = 256):
    rs = np.random.RandomState(0)
    centers = rs.randn(10, 784).astype(np.float32)
    labels = rs.randint(0, 10, n)
    return centers[labels] + 0.3 * rs.randn(n, 784).astype(np.float32), labels.astype(np.float32)


def _init_params(exe, inputs):
    rs = np.random.RandomState(1)
    for name, arr in exe.arg_dict.items():
        if name not in inputs:
            arr[:] = rs.uniform(-0.07, 0.07, arr.shape).astype(np.float32)


def test_training_loop_with_in_place_sgd():
    needs("FullyConnected", "Activation", "SoftmaxOutput")
    net = mlp("softmax")
    batch = 32
    exe = net.simple_bind(ctx=nd.cpu(), data=(batch, 784))
    inputs = ("data", "softmax_label")
    _init_params(exe, inputs)
    weight = exe.arg_dict["fc1_weight"]
    x, y = _toy_data()
    accuracy = []
    for _ in range(3):
        correct = 0
        for i in range(0, len(x), batch):
            exe.arg_dict["data"][:] = x[i:i + batch]
            exe.arg_dict["softmax_label"][:] = y[i:i + batch]
            exe.forward(is_train=True)
            exe.backward()
            for name in exe.arg_dict:
                if name not in inputs:
                    exe.arg_dict[name][:] -= 0.1 / batch * exe.grad_dict[name]
            correct += int((exe.outputs[0].asnumpy().argmax(1) == y[i:i + batch]).sum())
        accuracy.append(correct / len(x))
    assert exe.arg_dict["fc1_weight"] is weight
    assert accuracy[-1] > 0.9 and accuracy[-1] > accuracy[0]


def lenet():
    data = S.Variable("data")
    conv1 = S.Convolution(data=data, kernel=(5, 5), num_filter=20)
    pool1 = S.Pooling(data=S.Activation(data=conv1, act_type="tanh"), pool_type="max",
                      kernel=(2, 2), stride=(2, 2))
    conv2 = S.Convolution(data=pool1, kernel=(5, 5), num_filter=50)
    pool2 = S.Pooling(data=S.Activation(data=conv2, act_type="tanh"), pool_type="max",
                      kernel=(2, 2), stride=(2, 2))
    fc1 = S.FullyConnected(data=S.Flatten(data=pool2), num_hidden=500)
    fc2 = S.FullyConnected(data=S.Activation(data=fc1, act_type="tanh"), num_hidden=10)
    return S.SoftmaxOutput(data=fc2, name="softmax")


def test_lenet_trains_and_saves(tmp_path):
    needs("Convolution", "Pooling", "Flatten", "FullyConnected", "Activation", "SoftmaxOutput")
    net = lenet()
    exe = net.simple_bind(ctx=nd.cpu(), data=(8, 1, 28, 28))
    inputs = ("data", "softmax_label")
    _init_params(exe, inputs)
    rs = np.random.RandomState(2)
    exe.arg_dict["data"][:] = rs.rand(8, 1, 28, 28).astype(np.float32)
    exe.arg_dict["softmax_label"][:] = rs.randint(0, 10, 8).astype(np.float32)
    losses = []
    for _ in range(5):
        exe.forward(is_train=True)
        p = exe.outputs[0].asnumpy()
        losses.append(-np.log(p[np.arange(8), exe.arg_dict["softmax_label"].asnumpy().astype(int)]).mean())
        exe.backward()
        for name in exe.arg_dict:
            if name not in inputs:
                exe.arg_dict[name][:] -= 0.1 / 8 * exe.grad_dict[name]
    assert losses[-1] < losses[0]
    net.save(str(tmp_path / "lenet-symbol.json"))
    from hybridgraph.symbol.json_io import load
    assert getattr(S, "load", load)(str(tmp_path / "lenet-symbol.json")).tojson() == net.tojson()
