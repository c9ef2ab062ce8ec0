"""mx.operator: Python operators (CustomOp / CustomOpProp / register) eagerly, under autograd,
in Symbol graphs and JSON (the form MXNet 1.9.1 writes), and in hybridized blocks."""
import json

import numpy as np
import pytest

import hybridgraph as mx


class _ScaleAdd(mx.operator.CustomOp):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * self.k + in_data[1])
        self.assign(out_data[1], req[1], in_data[0] - in_data[1])
        if aux:
            aux[0][:] = aux[0] + 1  # counts forward calls in place

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * self.k + out_grad[1])
        self.assign(in_grad[1], req[1], out_grad[0] - out_grad[1])


@mx.operator.register("hg_test_scale_add")
class _ScaleAddProp(mx.operator.CustomOpProp):
    def __init__(self, k="2", with_aux="0"):
        super().__init__(need_top_grad=True)
        self.k, self.with_aux = float(k), with_aux == "1"

    def list_arguments(self):
        return ["x", "y"]

    def list_outputs(self):
        return ["sum", "diff"]

    def list_auxiliary_states(self):
        return ["calls"] if self.with_aux else []

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], in_shape[0]], ([[1]] if self.with_aux else [])

    def create_operator(self, ctx, shapes, dtypes):
        assert isinstance(shapes[0], list) and dtypes[0] is np.float32
        return _ScaleAdd(self.k)


class _Ones(mx.operator.CustomOp):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], np.ones((self.n, 2), dtype=np.float32))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        pass


@mx.operator.register("hg_test_ones")
class _OnesProp(mx.operator.CustomOpProp):
    def __init__(self, n):
        super().__init__()
        self.n = int(n)

    def list_arguments(self):
        return []

    def infer_shape(self, in_shape):
        return [], [(self.n, 2)], []

    def infer_type(self, in_type):
        return [], [np.float32], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Ones(self.n)


A = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
B = np.ones((2, 2), dtype=np.float32)


def test_eager_forward_two_outputs_and_autograd():
    a, b = mx.nd.array(A), mx.nd.array(B)
    a.attach_grad()
    b.attach_grad()
    with mx.autograd.record():
        s, d = mx.nd.Custom(a, b, op_type="hg_test_scale_add", k=3)
        (s * s + d).sum().backward()
    np.testing.assert_allclose(s.asnumpy(), 3 * A + B)
    np.testing.assert_allclose(d.asnumpy(), A - B)
    np.testing.assert_allclose(a.grad.asnumpy(), 2 * (3 * A + B) * 3 + 1)
    np.testing.assert_allclose(b.grad.asnumpy(), 2 * (3 * A + B) - 1)


def test_aux_state_written_in_place_and_listed_as_aux():
    calls = mx.nd.zeros((1,))
    mx.nd.Custom(mx.nd.array(A), mx.nd.array(B), calls, op_type="hg_test_scale_add", with_aux=1)
    mx.nd.Custom(mx.nd.array(A), mx.nd.array(B), calls, op_type="hg_test_scale_add", with_aux=1)
    assert calls.asnumpy().tolist() == [2.0]
    sym = mx.sym.Custom(mx.sym.Variable("x"), mx.sym.Variable("y"), op_type="hg_test_scale_add", with_aux=1,
                        name="sa")
    assert sym.list_arguments() == ["x", "y"] and sym.list_auxiliary_states() == ["sa_calls"]
    assert sym.list_outputs() == ["sa_sum", "sa_diff"]


def test_no_input_operator():
    out = mx.nd.Custom(op_type="hg_test_ones", n=3)
    assert out.shape == (3, 2) and out.dtype == np.float32 and (out.asnumpy() == 1).all()


def test_symbol_bind_backward_and_json_as_mxnet_writes_it():
    sym = mx.sym.Custom(mx.sym.Variable("x"), mx.sym.Variable("y"), op_type="hg_test_scale_add", k=3, name="sa")[0]
    node = [n for n in json.loads(sym.tojson())["nodes"] if n["op"] == "Custom"][0]
    assert node == {"op": "Custom", "name": "sa", "attrs": {"k": "3", "op_type": "hg_test_scale_add"},
                    "inputs": [[0, 0, 0], [1, 0, 0]]}
    # what MXNet 1.9.1 writes for the same call (measured), loaded back
    mx_json = {"nodes": [{"op": "null", "name": "x", "inputs": []}, {"op": "null", "name": "y", "inputs": []},
                         {"op": "Custom", "name": "sa", "attrs": {"k": "3", "op_type": "hg_test_scale_add"},
                          "inputs": [[0, 0, 0], [1, 0, 0]]}],
               "arg_nodes": [0, 1], "node_row_ptr": [0, 1, 2, 4], "heads": [[2, 0, 0]],
               "attrs": {"mxnet_version": ["int", 10901]}}
    loaded = mx.sym.load_json(json.dumps(mx_json))
    exe = loaded.simple_bind(mx.cpu(), x=(2, 2), y=(2, 2))
    exe.forward(is_train=True, x=mx.nd.array(A), y=mx.nd.array(B))
    exe.backward(mx.nd.ones((2, 2)))
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), 3 * A + B)
    np.testing.assert_allclose(exe.grad_dict["x"].asnumpy(), np.full((2, 2), 3.0))
    np.testing.assert_allclose(exe.grad_dict["y"].asnumpy(), np.ones((2, 2)))


def test_hybridized_block_matches_eager():
    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            s, d = F.Custom(x, x * 2, op_type="hg_test_scale_add", k=2)
            return s * d

    net = Net()
    runs = []
    for hybridize in (False, True):
        if hybridize:
            net.hybridize()
        x = mx.nd.array(A)
        x.attach_grad()
        with mx.autograd.record():
            y = net(x)
        y.backward()
        runs.append((y.asnumpy(), x.grad.asnumpy()))
    np.testing.assert_allclose(runs[0][0], runs[1][0])
    np.testing.assert_allclose(runs[0][1], runs[1][1])
    np.testing.assert_allclose(runs[0][0], (4 * A) * (-A))  # s = 2x + 2x, d = x - 2x


def test_errors_name_the_problem():
    with pytest.raises(mx.MXNetError, match="not registered"):
        mx.nd.Custom(mx.nd.array(A), op_type="hg_no_such_op")
    with pytest.raises(TypeError, match="CustomOpProp"):
        mx.operator.register("bad")(object)
    op = mx.operator.CustomOp()
    dst = mx.nd.ones((2,))
    op.assign(dst, "add", mx.nd.ones((2,)))
    op.assign(dst, "null", mx.nd.zeros((2,)))
    assert dst.asnumpy().tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="req"):
        op.assign(dst, "bogus", dst)
    ops = mx.operator.get_all_registered_operators()  # backend ops, as MXNet: not the op_types
    assert "hg_test_ones" not in ops and "Custom" in ops


def test_default_prop_inference_and_dependencies():
    prop = mx.operator.CustomOpProp(need_top_grad=False)
    assert prop.infer_shape([[2, 3]]) == ([[2, 3]], ([2, 3],), ())
    assert prop.infer_type([np.float32]) == ([np.float32], [np.float32], [])
    assert prop.declare_backward_dependency([1], [2], [3]) == [2, 3]
    with pytest.raises(NotImplementedError, match="dense"):
        prop.infer_storage_type(["csr"])


def test_autograd_function_in_hybridized_block():
    class Sq(mx.autograd.Function):
        def forward(self, x):
            self.save_for_backward(x)
            return x * x

        def backward(self, dy):
            (x,) = self.saved_tensors
            return 2 * x * dy

    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return Sq()(x) + 1

    net = Net()
    net.hybridize()
    assert net(mx.nd.array([1.0, 2.0])).asnumpy().tolist() == [2.0, 5.0]  # traced forward, as MXNet
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with pytest.raises(NotImplementedError, match="CustomOp"):
        with mx.autograd.record():
            net2 = Net()
            net2.hybridize()
            net2(x)


def test_error_in_user_forward_is_an_mxnet_error_naming_the_op():
    class Bad(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            raise ValueError("broken on purpose")

    @mx.operator.register("hg_test_bad")
    class BadProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, shapes, dtypes):
            return Bad()

    with pytest.raises(mx.MXNetError, match="hg_test_bad.*Bad.forward raised ValueError: broken"):
        mx.nd.Custom(mx.nd.ones((2,)), op_type="hg_test_bad")
