"""What MXNet 1.9.1's own unit tests taught about module names code imports from mxnet."""
import numpy as np
import pytest

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


def test_squeeze_and_expand_dims_inplace_are_views():
    data = mx.nd.ones((1, 5, 1, 3, 1))
    copy, view = data.squeeze(axis=(0, 2)), data.squeeze(axis=(0, 2), inplace=True)
    assert view.shape == copy.shape == (5, 3, 1)
    data[0][0] = -1
    assert view[0, 0, 0].asscalar() == -1 and copy[0, 0, 0].asscalar() == 1
    base = mx.nd.zeros((2, 3))
    ex = base.expand_dims(axis=-1, inplace=True)
    base[0] = 5
    assert ex.shape == (2, 3, 1) and ex[0, 0, 0].asscalar() == 5


def test_shape_attribute_takes_a_numpy_vector():
    out = mx.nd.ones((1, 3)).broadcast_to(shape=np.array([4, 3]))
    assert out.shape == (4, 3)


def test_creation_functions_write_into_out():
    out = mx.nd.zeros((2, 2))
    assert mx.nd.ones((2, 2), out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), 1)
    mx.nd.zeros((2, 2), out=out)
    np.testing.assert_array_equal(out.asnumpy(), 0)


def test_setitem_drops_leading_unit_axes_of_the_value():
    b = mx.nd.zeros(1)
    b[0] = np.array([47.5], dtype=np.float32)
    assert b.asscalar() == 47.5
    with pytest.raises(ValueError):
        b[0] = np.array([1.0, 2.0])


def test_moveaxis_concatenate_onehot_encode_split_v2_method():
    x = mx.nd.array(np.arange(12).reshape(2, 2, 3))
    np.testing.assert_array_equal(mx.nd.moveaxis(x, 0, 2).asnumpy(), np.moveaxis(x.asnumpy(), 0, 2))
    assert mx.nd.moveaxis(mx.nd.zeros((3, 4, 5)), [0, 1], [-1, -2]).shape == (5, 4, 3)
    with pytest.raises(ValueError):
        mx.nd.moveaxis(x, 3, 0)
    np.testing.assert_array_equal(mx.nd.concatenate([x, x], axis=1).asnumpy(),
                                  np.concatenate([x.asnumpy()] * 2, axis=1))
    out = mx.nd.zeros((3, 4))
    assert mx.nd.onehot_encode(mx.nd.array([1, 0, 3]), out=out) is out
    np.testing.assert_array_equal(out.asnumpy(), np.eye(4)[[1, 0, 3]])
    assert [p.shape for p in x.split_v2(2, axis=0)] == [(1, 2, 3), (1, 2, 3)]


def test_fused_rnn_layer_infer_shape_fills_the_input_size():
    layer = mx.gluon.rnn.LSTM(8, num_layers=2, layout="NTC", bidirectional=True)
    layer.initialize()
    x = mx.nd.random.normal(shape=(1, 5, 6))
    layer.infer_shape(x, layer.begin_state(1))
    shapes = {k.split("_", 1)[1]: v.shape for k, v in layer.collect_params().items()}
    assert shapes["l0_i2h_weight"] == shapes["r0_i2h_weight"] == (32, 6)
    assert shapes["l1_i2h_weight"] == (32, 16)
    out, _ = layer(x, layer.begin_state(1))
    assert out.shape == (1, 5, 16)


def test_from_numpy_zero_copy_freezes_the_source_and_shares_memory():
    src = np.array([[1, 2], [3, 4], [5, 6]], dtype="float32")
    arr = mx.nd.from_numpy(src)
    with pytest.raises(ValueError):
        src[2, 1] = 0
    arr[2, 1] = 100
    assert src[2, 1] == 100
    with pytest.raises(ValueError):
        mx.nd.from_numpy(np.ones((2, 3)).T)
    copy = mx.nd.from_numpy(np.ones((2, 3)).T, zero_copy=False)
    assert copy.shape == (3, 2)


def test_setstate_reads_mxnet_raw_record_of_a_gpu_array():
    # MXNet's state of nd.arange(1, ctx=gpu()): V2 record, device type 2, float32 [0.]
    state = {"handle": bytearray(b"\xc9\xfa\x93\xf9" + b"\x00" * 4 + b"\x01\x00\x00\x00" + b"\x01" + b"\x00" * 7
                                 + b"\x02\x00\x00\x00" + b"\x00" * 4 + b"\x00" * 4 + b"\x00\x00\x80\x3f")}
    arr = mx.nd.zeros(3)
    arr.__setstate__(state)
    assert arr.shape == (1,) and arr.asscalar() == 1.0


def test_flatten_inplace_is_a_view():
    x = (mx.nd.arange(30) + 1).reshape(2, 3, 5)
    copy, view = x.flatten(), x.flatten(inplace=True)
    x[0] = -1
    assert copy[0, 0].asscalar() == 1 and view[0, 0].asscalar() == -1 and view.shape == (2, 15)


def test_get_children_lists_a_shared_node_inputs_once():
    sliced = mx.sym.SliceChannel(mx.sym.Variable("data"), num_outputs=3, name="slice")
    assert sliced.get_children().list_outputs() == ["data"]
    a = mx.sym.Variable("a")
    assert mx.sym.Group([a + 1, a * 2]).get_children().list_outputs() == ["a", "a"]


def test_json_written_under_np_shape_is_marked_as_mxnet_does():
    import json
    with mx.util.np_shape(True):
        text = mx.sym.var("data").tojson()
    assert json.loads(text)["attrs"] == {"is_np_shape": ["int", 1], "mxnet_version": ["int", 10901]}
    assert text.endswith('"attrs": {\n    "is_np_shape": ["int", 1], \n    "mxnet_version": ["int", 10901]\n  }\n}')
    assert "is_np_shape" not in mx.sym.var("data").tojson()
    assert mx.sym.load_json(text).list_outputs() == ["data"]


def test_storage_type_ids_are_mxnet_codes():
    from hybridgraph.nd.ndarray import _STORAGE_TYPE_STR_TO_ID
    assert _STORAGE_TYPE_STR_TO_ID == {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}


def test_from_numpy_twice_on_one_source_still_shares_writeable_memory():
    src = np.zeros((2, 2), dtype="float32")
    mx.nd.from_numpy(src)
    again = mx.nd.from_numpy(src)
    again[1, 1] = 7
    assert src[1, 1] == 7 and not src.flags.writeable


def test_context_default_ctx_is_the_current_context():
    assert mx.Context.default_ctx == mx.cpu()
    with mx.Context("cpu", 1):
        assert mx.Context.default_ctx == mx.cpu(1)
    assert mx.cpu(2).default_ctx == mx.cpu()
