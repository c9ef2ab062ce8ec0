"""What MXNet 1.9.1's unit tests (test_symbol, test_infer_shape, control flow) taught about
gradients that stop, partial shape inference and symbolic loops; expectations checked
against real MXNet 1.9.1."""
import numpy as np
import pytest

import hybridgraph as mx


def test_stop_gradient_hides_an_op_without_gradient():
    # batch_take has no gradient in MXNet; behind stop_gradient nothing needs one
    x, idx = mx.sym.var("x"), mx.sym.var("idx")
    y = mx.sym.batch_take(x, idx)
    exe = mx.sym.stop_gradient(y).simple_bind(mx.cpu(), x=(3, 4), idx=(3,),
                                              type_dict={"x": np.float32, "idx": np.int32})
    exe.forward(is_train=True, x=mx.nd.ones((3, 4)), idx=mx.nd.array([0, 1, 3], dtype="int32"))
    exe.backward()
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), np.zeros((3, 4)))
    with pytest.raises(mx.base.MXNetError, match="batch_take"):
        y.simple_bind(mx.cpu(), x=(3, 4), idx=(3,), type_dict={"x": np.float32, "idx": np.int32})


def test_zero_gradient_branch_leaves_other_paths_intact():
    x = mx.sym.var("x")
    out = mx.sym.BlockGrad(mx.sym.batch_take(x, mx.sym.var("i"))).reshape((2, 1)) + x * 3
    exe = out.simple_bind(mx.cpu(), x=(2, 1), i=(2,), type_dict={"i": np.int32})
    exe.forward(is_train=True, x=mx.nd.array([[1], [2]]), i=mx.nd.array([0, 0], dtype="int32"))
    exe.backward(mx.nd.ones((2, 1)))
    np.testing.assert_array_equal(exe.grad_dict["x"].asnumpy(), [[3], [3]])


# -- partial shape inference (values from MXNet 1.9.1) ------------------------------------

def _args(sym, **shapes):
    return sym.infer_shape_partial(**shapes)[0]


def test_split_piece_shape_fills_the_input():
    s = mx.sym.split(mx.sym.var("a"), num_outputs=3, axis=1)
    assert _args(s[0] + mx.sym.var("b", shape=(2, 2)), a=(0, 6)) == [(2, 6), (2, 2)]
    sq = mx.sym.split(mx.sym.var("a", shape=(0, 4)), num_outputs=4, axis=1, squeeze_axis=True)
    assert _args(sq[3] + mx.sym.var("c", shape=(7,))) == [(7, 4), (7,)]


def test_concat_output_fills_the_other_dims_of_every_input():
    c = mx.sym.concat(mx.sym.var("a", shape=(0, 3)), mx.sym.var("b"), dim=0) + mx.sym.var("d", shape=(7, 3))
    assert _args(c) == [(0, 3), (0, 3), (7, 3)]
    c = mx.sym.concat(mx.sym.var("a", shape=(0, 10)), mx.sym.var("b", shape=(0, 5)), dim=1)
    assert (mx.sym.var("d", shape=(2, 0)) + c).infer_shape()[0] == [(2, 15), (2, 10), (2, 5)]


def test_convolution_output_fills_batch_and_unit_stride_spatial_dims():
    conv = mx.sym.Convolution(mx.sym.var("a", shape=(0, 2, 0, 0)), num_filter=4, kernel=(3, 3), no_bias=True)
    assert _args(conv + mx.sym.var("d", shape=(6, 4, 5, 7))) == [(6, 2, 7, 9), (4, 2, 3, 3), (6, 4, 5, 7)]


def test_where_and_batch_dot_wait_for_the_dims_mxnet_needs():
    w = mx.sym.where(mx.sym.var("c"), mx.sym.var("x"), mx.sym.var("y"))
    assert w.infer_shape_partial(c=(0, 2), x=(3, 2))[1] == [()]
    assert w.infer_shape_partial(c=(3,), x=(3, 2))[1] == [(3, 2)]
    bd = mx.sym.batch_dot(mx.sym.var("x"), mx.sym.var("y"), transpose_a=True)
    assert bd.infer_shape_partial(x=(2, 4, 3), y=(2, 0, 5))[1] == [()]
    assert bd.infer_shape_partial(x=(2, 4, 3), y=(2, 4, 5))[1] == [(2, 3, 5)]
    assert bd.infer_shape_partial(x=(2, 4, 0), y=(2, 4, 5))[1] == [()]


def test_np_shape_mode_marks_unknowns_with_none_and_minus_one():
    with mx.np_shape(True):
        assert mx.sym.sin(mx.sym.var("q")).infer_shape_partial() == ([None], [None], [])
        assert (mx.sym.var("q") + 1).infer_shape_partial(q=(-1, 3)) == ([(-1, 3)], [(-1, 3)], [])
    assert mx.sym.sin(mx.sym.var("q")).infer_shape_partial() == ([()], [()], [])


# -- autograd.get_symbol ------------------------------------------------------------------

def test_get_symbol_rebuilds_the_recorded_graph():
    x, c = mx.nd.array([3.0]), mx.nd.array([0.5])
    x.attach_grad()
    with mx.autograd.record():
        y = x * x + 2 * x - c
    sym = mx.autograd.get_symbol(y)
    args = sym.list_arguments()
    assert len(args) == 2 and args[0].startswith("var") and args[1].startswith("null")
    out = sym.eval(**{args[0]: x, args[1]: c})[0]
    np.testing.assert_allclose(out.asnumpy(), y.asnumpy())
    # a variable keeps its name; the variable alone is a variable symbol
    assert mx.autograd.get_symbol(x).list_arguments() == [args[0]]


def test_get_symbol_refuses_what_has_no_graph():
    with pytest.raises(mx.base.MXNetError, match="not computed under autograd.record"):
        mx.autograd.get_symbol(mx.nd.ones((2,)))

    class Twice(mx.autograd.Function):
        def forward(self, a):
            return a * 2

        def backward(self, g):
            return g * 2

    x = mx.nd.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        y = Twice()(x)
    with pytest.raises(NotImplementedError, match="autograd.Function"):
        mx.autograd.get_symbol(y)


def test_reshaped_executor_writes_into_the_old_outputs():
    y = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2, no_bias=True)
    exe = y.simple_bind(mx.cpu(), x=(4, 3), grad_req="null")
    exe.arg_dict[y.list_arguments()[1]][:] = 1
    exe.forward(x=mx.nd.zeros((4, 3)))
    small = exe.reshape(x=(2, 3))
    small.forward(x=mx.nd.ones((2, 3)))
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), [[3, 3], [3, 3], [0, 0], [0, 0]])
    big = exe.reshape(allow_up_sizing=True, x=(6, 3))   # larger: new arrays, the old ones kept
    big.forward(x=mx.nd.ones((6, 3)) * 2)
    assert big.outputs[0].shape == (6, 2) and exe.outputs[0].asnumpy()[0, 0] == 3


def test_hybridized_bidirectional_unroll_of_one_step_with_valid_length():
    cell = mx.gluon.rnn.BidirectionalCell(mx.gluon.rnn.LSTMCell(4, prefix="l_"), mx.gluon.rnn.LSTMCell(4, prefix="r_"))

    class Net(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.cell = cell

        def hybrid_forward(self, F, x, valid):
            return self.cell.unroll(1, x, valid_length=valid, layout="NTC", merge_outputs=True)[0]

    net = Net()
    net.initialize()
    x, valid = mx.nd.random.uniform(shape=(3, 1, 5)), mx.nd.array([1, 1, 1])
    eager = net(x, valid)
    net.hybridize()
    out = net(x, valid)
    assert out.shape == (3, 1, 8)
    np.testing.assert_allclose(out.asnumpy(), eager.asnumpy(), rtol=1e-5, atol=1e-6)


# -- nd.CachedOp and nd.fill_element_0index ------------------------------------------------

def test_cached_op_runs_a_symbol_on_arrays_and_records():
    sym = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2, name="fc") * 3
    op = mx.nd.CachedOp(sym)
    x, w, b = mx.nd.ones((1, 2)), mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([0.5, 0])
    np.testing.assert_allclose(op(x, w, b).asnumpy(), [[10.5, 21]])
    out = mx.nd.zeros((1, 2))
    op(x, w, b, out=out)
    np.testing.assert_allclose(out.asnumpy(), [[10.5, 21]])
    w.attach_grad()
    with mx.autograd.record():
        y = op(x * 2, w, b)
    y.backward()
    np.testing.assert_allclose(w.grad.asnumpy(), [[6, 6], [6, 6]])
    with pytest.raises(mx.base.MXNetError, match="3 inputs"):
        op(x, w)


def test_fill_element_0index_sets_one_element_per_row():
    lhs = mx.nd.zeros((3, 4))
    res = mx.nd.fill_element_0index(lhs, mx.nd.array([5, 6, 7]), mx.nd.array([3, 0, 1]))
    np.testing.assert_array_equal(res.asnumpy(), [[0, 0, 0, 5], [6, 0, 0, 0], [0, 7, 0, 0]])
    assert lhs.asnumpy().sum() == 0
    with pytest.raises(mx.base.MXNetError, match="float32"):
        mx.nd.fill_element_0index(lhs.astype("float64"), mx.nd.array([5, 6, 7]), mx.nd.array([3, 0, 1]))


# -- what a hybridized HybridBlock refuses (MXNet 1.x's cached op) ---------------------------

class _Pair(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, a, b=None):
        return a if b is None else a + b


def test_hybridized_call_refuses_mixing_scalars_contexts_and_structures():
    x = mx.nd.ones((2,))
    with pytest.raises(ValueError, match="mixed NDArrays and Symbols"):
        _Pair()(x, mx.sym.var("s"))
    net = _Pair()
    net.hybridize()
    with pytest.raises(ValueError, match="must be \\(nested\\) list of Symbol or NDArray"):
        net(x, 1)
    net = _Pair()
    net.hybridize()
    with pytest.raises(ValueError, match="multiple contexts"):
        net(mx.nd.ones((2,), ctx=mx.cpu(1)), mx.nd.ones((2,), ctx=mx.cpu(2)))
    net = _Pair()
    net.hybridize()
    net(x)
    assert net(x, None).asnumpy().tolist() == [1, 1]          # a trailing None default is the same call
    with pytest.raises(ValueError, match="does not match the cached version"):
        net(x, x)
    net.hybridize()                                            # a new hybridize() forgets the structure
    assert net(x, x).asnumpy().tolist() == [2, 2]


def test_forward_style_blocks_keep_scalar_inputs_when_hybridized():
    class Scale(mx.gluon.HybridBlock):
        def forward(self, x, k):
            return x * k

    net = Scale()
    net.hybridize()
    assert net(mx.nd.ones((2,)), 3.0).asnumpy().tolist() == [3, 3]


# -- Block bookkeeping MXNet 1.x programs rely on --------------------------------------------

def test_blocks_in_plain_containers_warn_and_sequential_of_hybrid_blocks_warns():
    class Holder(mx.gluon.Block):
        def __init__(self):
            super().__init__()
            self.layers = [mx.gluon.nn.Dense(2)]

    with pytest.warns(UserWarning, match="unregistered container with Blocks"):
        Holder().collect_params()
    seq = mx.gluon.nn.Sequential()
    seq.add(mx.gluon.nn.Dense(2))
    with pytest.warns(UserWarning, match="Consider using HybridSequential"):
        seq.hybridize()


def test_deduplicated_shared_parameters_load_back(tmp_path):
    class Pair(mx.gluon.Block):
        def __init__(self):
            super().__init__()
            self.a = mx.gluon.nn.Dense(2, in_units=2)
            self.b = mx.gluon.nn.Dense(2, in_units=2, params=self.a.collect_params())

    net = Pair()
    net.initialize()
    net.save_parameters(str(tmp_path / "p.params"), deduplicate=True)
    assert len(mx.nd.load(str(tmp_path / "p.params"))) == 2
    other = Pair()
    other.load_parameters(str(tmp_path / "p.params"))
    np.testing.assert_array_equal(other.b.weight.data().asnumpy(), net.a.weight.data().asnumpy())


def test_legacy_save_params_and_load_params(tmp_path):
    net = mx.gluon.nn.HybridSequential(prefix="")
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(3, in_units=2))
    net.initialize()
    with pytest.warns(UserWarning, match="save_params is deprecated"):
        net.save_params(str(tmp_path / "old.params"))
    names = sorted(mx.nd.load(str(tmp_path / "old.params")))       # full names, no structural keys
    assert [n.split("_")[-1] for n in names] == ["bias", "weight"] and not any("." in n for n in names)
    block = mx.gluon.nn.SymbolBlock(net(mx.sym.var("data")), mx.sym.var("data"))
    with pytest.warns(UserWarning, match="load_params is deprecated"):
        block.load_params(str(tmp_path / "old.params"))
    x = mx.nd.ones((1, 2))
    np.testing.assert_allclose(block(x).asnumpy(), net(x).asnumpy(), rtol=1e-6)


def test_traced_squeeze_and_expand_dims_accept_inplace():
    class Foo(mx.gluon.HybridBlock):
        def forward(self, x):
            return x.squeeze(inplace=True).expand_dims(0, inplace=True)

    block = Foo()
    block.hybridize()
    assert block(mx.nd.ones((3, 1))).shape == (1, 3)
