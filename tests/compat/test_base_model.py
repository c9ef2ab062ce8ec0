"""mx.base (errors, type tuples, helpers) and mx.model (checkpoint files)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import nd
from hybridgraph import symbol as sym
from hybridgraph import base, model


def test_error_classes():
    assert base.MXNetError is mx.MXNetError
    assert issubclass(base.NotImplementedForSymbol, base.MXNetError)
    with pytest.raises(base.MXNetError, match="not implemented for Symbol"):
        sym.Variable("x").asnumpy()
    err = base.NotSupportedForSparseNDArray(np.sum, "sum", 1)
    assert str(err) == ('Function sum (namely operator "sum") with arguments (<class \'int\'>) '
                        "is not supported for SparseNDArray and only available in NDArray.")


def test_type_tuples_and_helpers(monkeypatch):
    assert isinstance("a", base.string_types) and isinstance(np.int64(1), base.integer_types)
    assert isinstance(np.float32(1), base.numeric_types) and isinstance(2.0, base.numeric_types)
    assert base.mx_real_t is np.float32
    assert base.py_str(b"abc") == "abc" == base.py_str("abc")  # monitor names arrive as str
    assert base._as_list(3) == [3] and base._as_list((1, 2)) == (1, 2)
    monkeypatch.setenv("MXNET_HOME", "/tmp/mxhome")
    assert base.data_dir() == "/tmp/mxhome"
    monkeypatch.delenv("MXNET_HOME")
    assert base.data_dir() == os.path.join(os.path.expanduser("~"), ".mxnet")
    assert repr(base._Null) == "_Null"

    class Meta(type):
        pass

    class WithMeta(base.with_metaclass(Meta, object)):
        pass

    class Prop:
        @base.classproperty
        def answer(cls):  # noqa: N805 - a class property
            return 42

    assert type(WithMeta) is Meta and Prop.answer == 42


def _net():
    x = sym.Variable("data")
    bn = sym.BatchNorm(sym.FullyConnected(x, num_hidden=2, name="fc"), name="bn")
    return sym.SoftmaxOutput(bn, name="softmax")


def test_save_and_load_checkpoint(tmp_path):
    prefix = str(tmp_path / "m")
    args = {"fc_weight": nd.ones((2, 3)), "fc_bias": nd.zeros((2,)), "bn_gamma": nd.ones((2,)),
            "bn_beta": nd.zeros((2,))}
    aux = {"bn_moving_mean": nd.full((2,), 0.5), "bn_moving_var": nd.ones((2,))}
    model.save_checkpoint(prefix, 7, _net(), args, aux)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m-0007.params", "m-symbol.json"]
    raw = nd.load(prefix + "-0007.params")
    assert sorted(raw) == sorted([f"arg:{k}" for k in args] + [f"aux:{k}" for k in aux])
    assert json.loads((tmp_path / "m-symbol.json").read_text())["nodes"][-1]["op"] == "SoftmaxOutput"
    s, arg_params, aux_params = model.load_checkpoint(prefix, 7)
    assert s.list_arguments() == _net().list_arguments()
    assert sorted(arg_params) == sorted(args) and sorted(aux_params) == sorted(aux)
    np.testing.assert_array_equal(aux_params["bn_moving_mean"].asnumpy(), [0.5, 0.5])
    assert model.load_params(prefix, 7)[1].keys() == aux.keys()


def test_save_checkpoint_without_symbol_and_empty_params(tmp_path, caplog):
    prefix = str(tmp_path / "e")
    model.save_checkpoint(prefix, 0, None, {}, {})
    assert [p.name for p in tmp_path.iterdir()] == ["e-0000.params"]
    assert model.load_params(prefix, 0) == ({}, {})
    assert "is empty" in caplog.text


def test_load_params_rejects_unnamed_arrays(tmp_path):
    nd.save(str(tmp_path / "u-0001.params"), [nd.ones((1,))])
    with pytest.raises(ValueError, match="arg:"):
        model.load_params(str(tmp_path / "u"), 1)


def test_batch_end_param():
    p = model.BatchEndParam(epoch=1, nbatch=2, eval_metric=None, locals={})
    assert type(p).__name__ == "BatchEndParams" and p.nbatch == 2
