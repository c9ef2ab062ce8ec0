"""mx.onnx.export_model's MXNet 1.9.1 contract, the exactness items, verify, import and the CLI."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="ONNX export needs the onnx package (hybridgraph[onnx])")
ort = pytest.importorskip("onnxruntime", reason="checking exports needs onnxruntime (a test dependency)")

import hybridgraph as mx  # noqa: E402
from hybridgraph import gluon, nd, symbol  # noqa: E402
from hybridgraph.onnx import ExportError, build_model  # noqa: E402


def _ort(model, feeds):
    from pathlib import Path
    data = model.SerializeToString() if hasattr(model, "SerializeToString") else Path(model).read_bytes()
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def _mlp():
    net = gluon.nn.HybridSequential(prefix="mlp_")
    with net.name_scope():
        net.add(gluon.nn.Dense(8, activation="relu"), gluon.nn.BatchNorm(), gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = nd.array(np.random.RandomState(0).randn(4, 5))
    with mx.autograd.record():  # moving statistics away from their initial values
        net(x)
    return net, x


def test_export_model_accepts_mxnets_forms(tmp_path):
    net, x = _mlp()
    want = net(x).asnumpy()
    prefix = str(tmp_path / "mlp")
    net.export(prefix)
    sym = symbol.load(prefix + "-symbol.json")
    saved = nd.load(prefix + "-0000.params")
    arg = {k[4:]: v for k, v in saved.items() if k.startswith("arg:")}
    aux = {k[4:]: v for k, v in saved.items() if k.startswith("aux:")}
    forms = [(prefix + "-symbol.json", prefix + "-0000.params"), (sym, saved), (sym, {**arg, **aux}),
             (sym, [arg, aux])]
    for i, (s, p) in enumerate(forms):
        path = str(tmp_path / f"m{i}.onnx")
        assert mx.onnx.export_model(s, p, [(4, 5)], np.float32, path) == path
        onnx.checker.check_model(onnx.load(path))
        np.testing.assert_allclose(_ort(path, {"data": x.asnumpy()})[0], want, rtol=1e-5, atol=1e-5)
    # MXNet's old argument names, and a list of dtypes
    path = str(tmp_path / "old.onnx")
    mx.onnx.export_model(sym, saved, input_shape=[(4, 5)], input_type=[np.float32], onnx_file_path=path)
    assert onnx.load(path).graph.output[0].name == "mlp_dense1_fwd"  # MXNet's output naming


def test_dynamic_shapes_and_opsets(tmp_path):
    net, x = _mlp()
    want = net(nd.concat(x, x, dim=0)).asnumpy()
    sym, params = net(symbol.var("data")), {k: v.data() for k, v in net.collect_params().items()}
    model = build_model(sym, params, [(4, 5)], dynamic=True)
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert not dims[0].HasField("dim_value") and not dims[1].HasField("dim_value")
    feed = np.concatenate([x.asnumpy()] * 2)
    np.testing.assert_allclose(_ort(model, {"data": feed})[0], want, rtol=1e-5, atol=1e-5)
    for opset in range(13, 21):
        m = build_model(sym, params, [(4, 5)], opset=opset, dynamic=True, dynamic_input_shapes=[("N", 5)])
        assert m.opset_import[0].version == opset
        onnx.checker.check_model(m)
        np.testing.assert_allclose(_ort(m, {"data": feed})[0], want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="opset 12"):
        build_model(sym, params, [(4, 5)], opset=12)
    with pytest.raises(ValueError, match="dynamic=True"):
        build_model(sym, params, [(4, 5)], dynamic_input_shapes=[(None, 5)])


def test_op_without_lowering_names_op_node_and_alternative():
    x = symbol.var("data")
    y = symbol.gammaln(x, name="lg")
    with pytest.raises(ExportError, match=r"node 'lg': operator gammaln has no ONNX lowering \(nearest"):
        build_model(y, {}, [(2, 3)])


def _check_graph(sym, feeds: dict, params=None, rtol=1e-5, atol=1e-5, dynamic=False):
    params = params or {}
    from hybridgraph.onnx.verification import _run_hybridgraph
    want = _run_hybridgraph(sym, params, feeds)
    names = [n for n in sym.list_inputs() if n not in params and not n.endswith("_label")]
    model = build_model(sym, params, [feeds[n].shape for n in names], [feeds[n].dtype for n in names],
                        dynamic=dynamic)
    got = _ort(model, feeds)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return model


@pytest.mark.parametrize("fix_gamma", [True, False])
@pytest.mark.parametrize("use_global_stats", [True, False])
@pytest.mark.parametrize("axis", [1, -1, 2])
def test_batchnorm_inference_exact(fix_gamma, use_global_stats, axis):
    rng = np.random.RandomState(1)
    x = rng.randn(2, 3, 4, 4).astype("f")
    c = x.shape[axis]
    params = {"bn_gamma": rng.uniform(0.5, 2, c).astype("f"), "bn_beta": rng.randn(c).astype("f"),
              "bn_moving_mean": rng.randn(c).astype("f"), "bn_moving_var": rng.uniform(0.5, 2, c).astype("f")}
    sym = symbol.BatchNorm(symbol.var("data"), fix_gamma=fix_gamma, use_global_stats=use_global_stats,
                           axis=axis, eps=1e-3, name="bn")
    _check_graph(sym, {"data": x}, params)


@pytest.mark.parametrize("gamma_shape", [(1,), (3,)])
def test_prelu_broadcast(gamma_shape):
    x = np.random.RandomState(2).randn(2, 3, 5).astype("f")
    params = {"p_gamma": np.linspace(0.1, 0.5, gamma_shape[0]).astype("f")}
    _check_graph(symbol.LeakyReLU(symbol.var("data"), act_type="prelu", name="p"), {"data": x}, params)


@pytest.mark.parametrize("conv,pool,include", [("full", "max", None), ("full", "avg", True), ("full", "avg", False),
                                               ("same", "max", None), ("same", "avg", True),
                                               ("valid", "avg", False), ("full", "sum", None)])
def test_pooling_conventions(conv, pool, include):
    x = np.random.RandomState(3).randn(2, 2, 7, 6).astype("f")
    kw = {"count_include_pad": include} if include is not None else {}
    pad = (0, 0) if conv == "same" else (1, 1)
    sym = symbol.Pooling(symbol.var("data"), kernel=(3, 3), stride=(2, 2), pad=pad, pool_type=pool,
                         pooling_convention=conv, **kw)
    _check_graph(sym, {"data": x})


@pytest.mark.parametrize("shape,reverse", [((0, -1), False), ((-2,), False), ((0, -3, -1), False),
                                           ((-4, 1, -1, 0, 0, 0), False), ((0, -1, 2), False),
                                           ((-1, 0), True), ((-3, -2), False)])
def test_reshape_codes_with_dynamic_batch(shape, reverse):
    x = np.arange(3 * 4 * 2 * 6, dtype="f").reshape(3, 4, 2, 6)
    sym = symbol.reshape(symbol.var("data"), shape=shape, reverse=reverse)
    model = _check_graph(sym, {"data": x[:1]}, dynamic=True)
    from hybridgraph.onnx.verification import _run_hybridgraph
    np.testing.assert_array_equal(_ort(model, {"data": x})[0], _run_hybridgraph(sym, {}, {"data": x})[0])


def test_flatten_and_softmax_output_at_inference():
    x = np.random.RandomState(4).randn(2, 3, 4).astype("f")
    data = symbol.var("data")
    _check_graph(symbol.SoftmaxOutput(symbol.Flatten(data), name="softmax"), {"data": x})
    _check_graph(symbol.SoftmaxOutput(data, multi_output=True, name="softmax"), {"data": x})
    _check_graph(symbol.SoftmaxActivation(symbol.Flatten(data)), {"data": x})
    _check_graph(symbol.SoftmaxActivation(data, mode="channel"), {"data": x})


@pytest.mark.parametrize("dtype", ["float16", "float64", "int32", "int64"])
def test_dtypes(dtype):
    x = (np.random.RandomState(5).randn(2, 3) * 4).astype(dtype)
    data = symbol.var("data")
    sym = symbol.Group([symbol.relu(data) + data, symbol.sum(data, axis=1), symbol.transpose(data)])
    tol = 1e-2 if dtype == "float16" else 1e-6
    _check_graph(sym, {"data": x}, rtol=tol, atol=tol)


def test_verify_reports_outputs_and_first_diverging_node(tmp_path):
    net, x = _mlp()
    sym, params = net(symbol.var("data")), {k: v.data() for k, v in net.collect_params().items()}
    model = build_model(sym, params, [(4, 5)])
    report = mx.onnx.verify(model, sym, params, [x], per_node=True)
    assert report.ok and report.nodes_compared >= 4, str(report)
    # tamper with the second Dense's weight in the ONNX file: the first diverging node is that Dense
    for t in model.graph.initializer:
        if t.name == "mlp_dense1_weight":
            arr = onnx.numpy_helper.to_array(t) * 1.5
            t.CopyFrom(onnx.numpy_helper.from_array(arr, t.name))
    report = mx.onnx.verify(model, sym, params, {"data": x}, per_node=True)
    assert not report.ok
    assert report.first_divergence.node == "mlp_dense1_fwd" and report.first_divergence.op == "FullyConnected"
    assert "first diverging node: mlp_dense1_fwd" in str(report)


def test_import_round_trip(tmp_path):
    from hybridgraph.gluon.model_zoo import vision
    net = vision.get_model("resnet18_v1")
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = nd.array(np.random.RandomState(6).uniform(-1, 1, (2, 3, 32, 32)))
    want = net(x).asnumpy()
    path = str(tmp_path / "r18.onnx")
    net.export_onnx(path, x, dynamic_batch=True)
    sym, arg, aux = mx.onnx.import_model(path)
    assert set(sym.list_arguments()) - {"data"} == set(arg) and set(sym.list_auxiliary_states()) == set(aux)
    assert sorted(sym.list_inputs()) == sorted(net(symbol.var("data")).list_inputs())
    exe = sym.bind(mx.cpu(), {"data": x, **arg}, aux_states=aux, grad_req="null")
    np.testing.assert_allclose(exe.forward()[0].asnumpy(), want, rtol=1e-4, atol=1e-4)
    block = mx.onnx.import_to_gluon(path)
    np.testing.assert_allclose(block(x).asnumpy(), want, rtol=1e-4, atol=1e-4)
    block = gluon.SymbolBlock.imports(path, ["data"])
    np.testing.assert_allclose(block(x).asnumpy(), want, rtol=1e-4, atol=1e-4)


def test_cli(tmp_path, capsys):
    from hybridgraph.cli import main
    net, x = _mlp()
    prefix = str(tmp_path / "mlp")
    net.export(prefix)
    out = str(tmp_path / "mlp.onnx")
    assert main(["convert", prefix + "-symbol.json", prefix + "-0000.params", "--to", "onnx",
                 "--input", "data:4x5", "--dynamic-batch", "-o", out]) == 0
    assert main(["inspect", out]) == 0
    text = capsys.readouterr().out
    assert "data" in text and "'batch'" in text and "Gemm" in text
    assert main(["verify", out, prefix + "-symbol.json", prefix + "-0000.params", "--input", "data:7x5",
                 "--per-node"]) == 0
    assert "agree" in capsys.readouterr().out
    assert main(["inspect", prefix + "-symbol.json"]) == 0
    assert main(["inspect", prefix + "-0000.params"]) == 0
    assert main(["summary", prefix + "-symbol.json", "--input", "data:4x5"]) == 0
    assert main(["upgrade", prefix + "-symbol.json", "-o", str(tmp_path / "up.json")]) == 0
    capsys.readouterr()
    assert main(["inspect", str(tmp_path / "missing.onnx")]) == 2
    assert "no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    assert main(["inspect", str(bad)]) == 2
    assert main(["convert", prefix + "-symbol.json", prefix + "-0000.params", "--input", "x:1x5"]) == 2
    assert "not inputs of the model" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["convert", prefix + "-symbol.json", prefix + "-0000.params", "--input", "data"])
    assert exc.value.code == 2


def test_import_deconvolution_and_pooling_round_trip():
    from hybridgraph.onnx.verification import _run_hybridgraph
    rng = np.random.RandomState(7)
    x = rng.randn(1, 2, 5, 5).astype("f")
    params = {"d_weight": rng.randn(2, 3, 3, 3).astype("f"), "d_bias": rng.randn(3).astype("f")}
    y = symbol.Deconvolution(symbol.var("data"), kernel=(3, 3), stride=(2, 2), pad=(1, 1), adj=(1, 1),
                             num_filter=3, no_bias=False, name="d")
    sym = symbol.Pooling(y, kernel=(3, 3), stride=(2, 2), pool_type="max", pooling_convention="full")
    want = _run_hybridgraph(sym, params, {"data": x})[0]
    back, arg, aux = mx.onnx.import_model(build_model(sym, params, [x.shape]))
    got = _run_hybridgraph(back, {k: v.asnumpy() for k, v in arg.items()}, {"data": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
