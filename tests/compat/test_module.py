"""mx.mod.Module: the tutorial MLP trained on scikit-learn's digits (issue 8, acceptance 1),
and the Module API piece by piece."""
from __future__ import annotations

import logging
import warnings

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import nd
from hybridgraph import symbol as sym
from hybridgraph.gluon import metric
from hybridgraph.gluon.symbol_block import SymbolBlock
from hybridgraph.io import DataBatch, NDArrayIter
from hybridgraph.module import BucketingModule, Module

from ._helpers import run_script
from .mlp_script import PREDICT


def mlp() -> sym.Symbol:
    data = sym.Variable("data")
    net = sym.FullyConnected(data, num_hidden=128, name="fc1")
    net = sym.Activation(net, act_type="relu", name="relu1")
    net = sym.FullyConnected(net, num_hidden=64, name="fc2")
    net = sym.Activation(net, act_type="relu", name="relu2")
    net = sym.FullyConnected(net, num_hidden=10, name="fc3")
    return sym.SoftmaxOutput(net, name="softmax")


@pytest.fixture(scope="module")
def digits() -> dict:
    datasets = pytest.importorskip("sklearn.datasets", reason="scikit-learn provides the digits data")
    d = datasets.load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.float32)
    perm = np.random.RandomState(0).permutation(len(x))
    x, y = x[perm], y[perm]
    return {"X_train": x[:1400], "y_train": y[:1400], "X_val": x[1400:], "y_val": y[1400:]}


# -- acceptance: train, checkpoint, resume, cross-check ---------------------------------------

@pytest.fixture(scope="module")
def trained(digits, tmp_path_factory) -> dict:
    """The MLP trained 4 epochs with fit + Speedometer + do_checkpoint; its log and files."""
    root = tmp_path_factory.mktemp("mlp")
    prefix = str(root / "mlp")
    np.random.seed(0)
    train = NDArrayIter(digits["X_train"], digits["y_train"], batch_size=32, shuffle=True)
    val = NDArrayIter(digits["X_val"], digits["y_val"], batch_size=32)
    mod = mx.mod.Module(mlp(), context=mx.cpu())
    records: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: records.append(record.getMessage())
    root_logger = logging.getLogger()
    old_level = root_logger.level
    root_logger.addHandler(handler)
    root_logger.setLevel(logging.INFO)
    try:
        mod.fit(train, eval_data=val, num_epoch=4, optimizer="sgd",
                optimizer_params={"learning_rate": 0.1, "momentum": 0.9}, eval_metric="acc",
                initializer=mx.init.Xavier(), batch_end_callback=mx.callback.Speedometer(32, 20),
                epoch_end_callback=mx.callback.do_checkpoint(prefix))
    finally:
        root_logger.removeHandler(handler)
        root_logger.setLevel(old_level)
    return {"mod": mod, "prefix": prefix, "root": root, "train": train, "val": val, "log": records,
            "pred": mod.predict(val).asnumpy()}


def test_fit_reaches_90_percent_with_callbacks(trained):
    mod, val = trained["mod"], trained["val"]
    assert dict(mod.score(val, "acc"))["accuracy"] >= 0.9
    log = "\n".join(trained["log"])
    assert "Epoch[3] Batch [20-40]\tSpeed:" in log and "\taccuracy=" in log
    assert "Epoch[3] Validation-accuracy=" in log and "Epoch[3] Train-accuracy=" in log
    assert f'Saved checkpoint to "{trained["prefix"]}-0004.params"' in log
    names = sorted(p.name for p in trained["root"].iterdir())
    assert names == ["mlp-0001.params", "mlp-0002.params", "mlp-0003.params", "mlp-0004.params",
                     "mlp-symbol.json"]


def test_module_load_predicts_the_same_and_resumes(trained, tmp_path):
    prefix, val, pred = trained["prefix"], trained["val"], trained["pred"]
    loaded = Module.load(prefix, 4, context=mx.cpu())
    loaded.bind(data_shapes=val.provide_data, label_shapes=val.provide_label, for_training=False)
    np.testing.assert_allclose(loaded.predict(val).asnumpy(), pred, rtol=1e-5, atol=1e-6)
    assert loaded.score(val, "acc") == trained["mod"].score(val, "acc")
    resumed = Module.load(prefix, 4)
    new_prefix = str(tmp_path / "resumed")
    with pytest.warns(UserWarning, match="already initialized"):   # fit keeps the loaded parameters
        resumed.fit(trained["train"], num_epoch=5, begin_epoch=4, optimizer="sgd",
                    optimizer_params={"learning_rate": 0.05},
                    epoch_end_callback=mx.callback.do_checkpoint(new_prefix))
    assert (tmp_path / "resumed-0005.params").exists() and not (tmp_path / "resumed-0004.params").exists()
    assert dict(resumed.score(val, "acc"))["accuracy"] >= 0.9


def test_symbol_block_on_the_checkpoint_agrees(trained, digits):
    prefix = trained["prefix"]
    net = SymbolBlock.imports(prefix + "-symbol.json", ["data", "softmax_label"], prefix + "-0004.params")
    x_val = digits["X_val"]
    gluon = net(nd.array(x_val), nd.zeros((len(x_val),))).asnumpy()
    np.testing.assert_allclose(gluon, trained["pred"], rtol=1e-5, atol=1e-6)
    acc = (gluon.argmax(1) == digits["y_val"]).mean()
    # score() counts the 19 padded examples of the last batch, as MXNet does; compare without them
    assert acc >= 0.9


def test_mxnet_loads_the_checkpoint_and_predicts_the_same(trained, digits, mxnet_python, tmp_path):
    np.savez(tmp_path / "data.npz", **digits)
    run_script(mxnet_python, PREDICT.format(MX="mxnet"),
               [trained["prefix"], 4, tmp_path / "data.npz", tmp_path / "mx_pred.npz"], tmp_path, "predict_mx")
    theirs = np.load(tmp_path / "mx_pred.npz")
    np.testing.assert_allclose(theirs["pred"], trained["pred"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(theirs["gluon_pred"], trained["pred"], rtol=1e-4, atol=1e-5)


def test_hybridgraph_loads_an_mxnet_checkpoint(mxnet_python, digits, tmp_path):
    """A checkpoint written by MXNet's Module predicts the same under hybridgraph's Module."""
    np.savez(tmp_path / "data.npz", **digits)
    text = PREDICT.replace("mod = mx.mod.Module.load", "mx.model.save_checkpoint(prefix, epoch, *TRAIN())\n"
                           "mod = mx.mod.Module.load")
    train = '''
def TRAIN():
    data = mx.sym.Variable("data")
    net = mx.sym.FullyConnected(data, num_hidden=10, name="fc")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    mod = mx.mod.Module(net)
    it = mx.io.NDArrayIter(np.load(sys.argv[3])["X_train"], np.load(sys.argv[3])["y_train"], batch_size=50)
    mod.fit(it, num_epoch=2, initializer=mx.init.Xavier(), optimizer_params={{"learning_rate": 0.5}})
    return (net,) + mod.get_params()
'''
    text = text.replace("prefix, epoch, data_file", train + "\nprefix, epoch, data_file")
    run_script(mxnet_python, text.format(MX="mxnet"), [tmp_path / "ck", 1, tmp_path / "data.npz",
                                                       tmp_path / "out.npz"], tmp_path, "mx_train")
    ref = np.load(tmp_path / "out.npz")["pred"]
    mod = Module.load(str(tmp_path / "ck"), 1)
    with pytest.warns(UserWarning, match="label_names"):   # bound without labels, as MXNet warns too
        mod.bind([("data", (32, 64))], for_training=False)
    ours = mod.predict(NDArrayIter(digits["X_val"], batch_size=32)).asnumpy()
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-5)


# -- the API step by step --------------------------------------------------------------------------

def _bound(batch: int = 4, **kwargs) -> Module:
    mod = Module(mlp(), **kwargs)
    mod.bind(data_shapes=[("data", (batch, 64))], label_shapes=[("softmax_label", (batch,))])
    mod.init_params(mx.init.Xavier())
    return mod


def _batch(n: int = 4, seed: int = 0) -> DataBatch:
    rng = np.random.RandomState(seed)
    return DataBatch([nd.array(rng.rand(n, 64))], [nd.array(rng.randint(0, 10, n))])


def test_shapes_and_names():
    mod = _bound()
    assert mod.data_names == ["data"] and mod.label_names == ["softmax_label"]
    assert mod.output_names == ["softmax_output"]
    assert mod.data_shapes == [("data", (4, 64))] and mod.label_shapes == [("softmax_label", (4,))]
    assert mod.output_shapes == [("softmax_output", (4, 10))]
    assert mod.symbol.list_outputs() == ["softmax_output"]
    assert sorted(mod.get_params()[0]) == ["fc1_bias", "fc1_weight", "fc2_bias", "fc2_weight",
                                           "fc3_bias", "fc3_weight"]


def test_bad_names_raise_or_warn():
    with pytest.raises(ValueError, match="Did you mean one of"):
        Module(mlp(), data_names=["x"])
    with pytest.warns(UserWarning, match="label_names"):
        Module(mlp(), label_names=["lbl"])
    with pytest.raises(ValueError, match="don't match"):
        Module(mlp()).bind([("x", (1, 64))])


def test_forward_backward_update_changes_only_free_params():
    mod = _bound(fixed_param_names=["fc1_weight"])
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    before = {k: v.asnumpy().copy() for k, v in mod.get_params()[0].items()}
    mod.forward(_batch(), is_train=True)
    out = mod.get_outputs()[0].asnumpy()
    np.testing.assert_allclose(out.sum(1), 1, rtol=1e-5)
    mod.backward()
    mod.update()
    after = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    np.testing.assert_array_equal(after["fc1_weight"], before["fc1_weight"])
    assert not np.allclose(after["fc3_weight"], before["fc3_weight"])


def test_update_is_an_sgd_step_with_rescaled_gradients():
    mod = _bound()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 1.0})
    w0 = mod.get_params()[0]["fc3_bias"].asnumpy().copy()
    batch = _batch()
    mod.forward(batch, is_train=True)
    probs = mod.get_outputs()[0].asnumpy()
    mod.backward()
    mod.update()
    grad = (probs - np.eye(10)[batch.label[0].asnumpy().astype(int)]).sum(0) / 4   # rescale_grad = 1/batch
    np.testing.assert_allclose(mod.get_params()[0]["fc3_bias"].asnumpy(), w0 - grad, rtol=1e-4, atol=1e-6)


def test_input_grads_and_head_gradients():
    x = sym.Variable("data")
    net = sym.FullyConnected(x, num_hidden=3, name="fc")
    mod = Module(net, label_names=None)
    mod.bind([("data", (2, 4))], None, inputs_need_grad=True)
    mod.init_params(mx.init.One())
    mod.forward(DataBatch([nd.ones((2, 4))]), is_train=True)
    mod.backward([nd.ones((2, 3))])
    np.testing.assert_allclose(mod.get_input_grads()[0].asnumpy(), np.full((2, 4), 3.0))
    with pytest.raises(AssertionError):
        _bound().get_input_grads()


def test_update_metric_score_predict_iter_predict():
    mod = _bound(batch=5)
    rng = np.random.RandomState(1)
    x, y = rng.rand(12, 64), rng.randint(0, 10, 12)
    it = NDArrayIter(x, y, batch_size=5)
    m = metric.create("acc")
    mod.forward(next(iter(it)), is_train=False)
    mod.update_metric(m, [nd.array(y[:5])])
    assert m.num_inst == 5
    pred = mod.predict(it)
    assert pred.shape == (12, 10)                       # the padding of the last batch is removed
    chunks = [out[0].shape[0] for out, _, _ in mod.iter_predict(it)]
    assert chunks == [5, 5, 2]
    np.testing.assert_allclose(mod.predict(x[:5]).asnumpy(), pred.asnumpy()[:5], rtol=1e-6)
    listed = mod.predict(it, merge_batches=False)
    assert len(listed) == 3 and listed[2][0].shape == (2, 10)
    assert mod.predict(it, always_output_list=True)[0].shape == (12, 10)
    assert mod.predict(it, num_batch=1).shape == (5, 10)
    (name, value), = mod.score(it, "acc")
    expected = np.mean(np.concatenate([pred.asnumpy().argmax(1), pred.asnumpy()[:3].argmax(1)])
                       == np.concatenate([y, y[:3]]))   # score keeps the padded examples, as MXNet
    assert name == "accuracy" and value == pytest.approx(expected)


def test_forward_reshapes_for_a_new_batch_size():
    mod = _bound(batch=4)
    mod.forward(_batch(n=7), is_train=False)
    assert mod.get_outputs()[0].shape == (7, 10)
    assert mod.data_shapes[0].shape == (7, 64)


def test_set_params_get_params_and_init_rules():
    mod = _bound()
    args, aux = mod.get_params()
    new = {k: nd.ones(v.shape) for k, v in args.items()}
    mod.set_params(new, aux)
    assert mod.get_params()[0]["fc2_weight"].asnumpy().min() == 1
    with pytest.raises(RuntimeError, match="fc1_bias is not presented"):
        mod.set_params({k: v for k, v in new.items() if k != "fc1_bias"}, aux)
    mod.set_params({"fc1_bias": nd.zeros((128,))}, {}, allow_missing=True)
    assert mod.get_params()[0]["fc1_bias"].asnumpy().max() == 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mod.init_params()
    assert "already initialized" in str(caught[0].message)
    mod.set_params({**new, "extra": nd.ones((1,))}, aux)      # extra names are ignored, as in MXNet


def test_save_and_load_checkpoint_with_optimizer_states(tmp_path):
    mod = _bound()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    for seed in range(2):
        mod.forward_backward(_batch(seed=seed))
        mod.update()
    prefix = str(tmp_path / "ck")
    mod.save_checkpoint(prefix, 3, save_optimizer_states=True)
    assert (tmp_path / "ck-0003.states").exists()
    other = Module.load(prefix, 3, load_optimizer_states=True)
    other.bind([("data", (4, 64))], [("softmax_label", (4,))])
    other.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    for m in (mod, other):
        m.forward_backward(_batch(seed=9))
        m.update()
    for k, v in mod.get_params()[0].items():
        np.testing.assert_allclose(other.get_params()[0][k].asnumpy(), v.asnumpy(), rtol=1e-6, atol=1e-7)
    mod.save_params(str(tmp_path / "p.params"))
    fresh = _bound()
    fresh.load_params(str(tmp_path / "p.params"))
    np.testing.assert_array_equal(fresh.get_params()[0]["fc1_weight"].asnumpy(),
                                  mod.get_params()[0]["fc1_weight"].asnumpy())


def test_shared_module_and_borrow_optimizer():
    mod = _bound()
    mod.init_optimizer()
    small = Module(mlp())
    small.bind([("data", (2, 64))], [("softmax_label", (2,))], shared_module=mod)
    assert small.params_initialized and small.optimizer_initialized
    assert small._exec_group.param_arrays[0][0] is mod._exec_group.param_arrays[0][0]
    small.forward_backward(_batch(n=2))
    small.update()
    np.testing.assert_array_equal(mod._exec_group.param_arrays[0][0].asnumpy(),
                                  small._exec_group.param_arrays[0][0].asnumpy())


def test_two_contexts_match_one():
    one = _bound(batch=6)
    two = Module(mlp(), context=[mx.cpu(0), mx.cpu(1)])
    two.bind([("data", (6, 64))], [("softmax_label", (6,))])
    two.init_params(arg_params=one.get_params()[0], aux_params={})
    for m in (one, two):
        m.init_optimizer(optimizer_params={"learning_rate": 0.3})
        m.forward_backward(_batch(n=6))
        m.update()
    np.testing.assert_allclose(two.get_outputs()[0].asnumpy(), one.get_outputs()[0].asnumpy(), rtol=1e-5)
    for k, v in one.get_params()[0].items():
        np.testing.assert_allclose(two.get_params()[0][k].asnumpy(), v.asnumpy(), rtol=1e-5, atol=1e-7)


def test_install_monitor_sees_every_node():
    seen = []

    class Mon:
        def install(self, exe):
            exe.set_monitor_callback(lambda name, arr: seen.append(name))

    mod = _bound()
    mod.install_monitor(Mon())
    mod.forward(_batch(), is_train=False)
    assert "fc1_output" in seen and "softmax_output" in seen


def test_bucketing_module_shares_parameters(tmp_path):
    def sym_gen(key):
        data = sym.Variable("data")                                   # (batch, key, 4)
        net = sym.FullyConnected(sym.sum(data, axis=1), num_hidden=3, name="fc")
        return sym.SoftmaxOutput(net, name="softmax"), ("data",), ("softmax_label",)

    mod = BucketingModule(sym_gen, default_bucket_key=3)
    assert mod.data_names == ("data",) and mod.output_names == ["softmax_output"]
    mod.bind([("data", (2, 3, 4))], [("softmax_label", (2,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer_params={"learning_rate": 0.1})
    batch = DataBatch([nd.ones((2, 2, 4))], [nd.zeros((2,))], bucket_key=2,
                      provide_data=[("data", (2, 2, 4))], provide_label=[("softmax_label", (2,))])
    w0 = mod.get_params()[0]["fc_weight"].asnumpy().copy()
    mod.forward(batch, is_train=True)
    assert mod.get_outputs()[0].shape == (2, 3) and sorted(mod._buckets) == [2, 3]
    mod.backward()
    mod.update()
    w = mod.get_params()[0]["fc_weight"].asnumpy()
    assert not np.allclose(w, w0)
    np.testing.assert_array_equal(mod._buckets[3]._exec_group.param_arrays[0][0].asnumpy(), w)
    prefix = str(tmp_path / "bk")
    mod.save_checkpoint(prefix, 1)
    loaded = BucketingModule.load(prefix, 1, sym_gen=sym_gen, default_bucket_key=3)
    loaded.bind([("data", (2, 3, 4))], [("softmax_label", (2,))], for_training=False)
    loaded.forward(batch, is_train=False)
    mod.forward(batch, is_train=False)
    np.testing.assert_allclose(loaded.get_outputs()[0].asnumpy(), mod.get_outputs()[0].asnumpy(), rtol=1e-6)
