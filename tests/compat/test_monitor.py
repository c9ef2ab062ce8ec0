"""mx.mon.Monitor on a Module: node outputs matching the pattern during tic/toc, then the
arguments, with the statistic as text; nothing outside the interval."""

import hybridgraph as mx


def test_monitor_collects_outputs_and_arguments_every_interval():
    x = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc_0")
    x = mx.sym.LinearRegressionOutput(mx.sym.Activation(x, act_type="sigmoid", name="act_0"), name="lro")
    mod = mx.mod.Module(x, label_names=["lro_label"])
    mod.bind([("data", (1, 2))], [("lro_label", (1, 2))])
    mon = mx.mon.Monitor(2, stat_func=lambda a: mx.nd.abs(a).sum(), pattern="fc_0|act_0", sort=True)
    mod.install_monitor(mon)
    mod.init_params(arg_params={"fc_0_weight": mx.nd.array([[0.15, 0.2], [0.25, 0.3]]),
                                "fc_0_bias": mx.nd.array([0.35, 0.35])})
    batch = mx.io.DataBatch([mx.nd.array([[0.05, 0.1]])], [mx.nd.array([[0.01, 0.99]])])
    mon.tic()
    mod.forward(batch, is_train=False)
    res = mon.toc()
    names = [k for _, k, _ in res]
    assert names == sorted(names) and "fc_0_output" in names and "act_0_output" in names
    assert {"fc_0_weight", "fc_0_bias"} <= set(names) and not any(k.startswith("data") for k in names)
    stat = dict((k, v) for _, k, v in res)
    assert abs(float(stat["fc_0_weight"]) - 0.9) < 1e-6 and stat["fc_0_weight"].endswith("\t")
    mon.tic()  # step 1: outside the interval of 2
    mod.forward(batch, is_train=False)
    assert mon.toc() == []
