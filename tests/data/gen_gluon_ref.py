"""Write tests/data/gluon_ref.npz and gluon_ref.json with MXNet 1.9.1 (run: /work/mxvenv/bin/python THIS).

For every case of tests/data/gluon_cases.py: the inputs, the parameter values
(set after a first forward pass), the output and the input/parameter
gradients of sum(out * cot) in predict mode, in train mode where the case asks
(with the BatchNorm statistics after the pass), and the `-symbol.json` the
hybridized block exports.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import mxnet as mx  # noqa: E402
from mxnet import autograd  # noqa: E402
from mxnet.gluon import loss, nn  # noqa: E402,F401 - used by eval'd constructors

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gluon_cases import CONV_CASES, LAYER_CASES, LOSS_CASES, case_seed, make_input, make_param  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def with_prefix(ctor: str) -> str:
    return ctor[:-1] + (", " if not ctor.endswith("()") else "") + "prefix='net_')"


def run_pass(net, inputs: dict, names: list, nograd: tuple, cot, train: bool, out: dict, tag: str,
             grad: bool = True) -> None:
    args = [None if inputs[n] is None else mx.nd.array(inputs[n]) for n in names]
    for n, a in zip(names, args):
        if a is not None and n not in nograd:
            a.attach_grad()
    params = net._collect_params_with_prefix()
    for p in params.values():
        if p.grad_req != "null":
            p.zero_grad()
    if not grad:  # MXNet's own code cannot run under autograd.record (in-place ops)
        out[f"{tag}out"] = net(*args).asnumpy()
        return
    with autograd.record(train_mode=train):
        y = net(*args)
    y.backward(mx.nd.array(cot))
    out[f"{tag}out"] = y.asnumpy()
    for n, a in zip(names, args):
        if a is not None and n not in nograd:
            out[f"{tag}grad:in:{n}"] = a.grad.asnumpy()
    for key, p in params.items():
        if p.grad_req != "null":
            out[f"{tag}grad:param:{key}"] = p.grad().asnumpy()
        elif train:
            out[f"{tag}aux:{key}"] = p.data().asnumpy()


def run_case(name: str, ctor: str, specs: list, flags: dict, arrays: dict, symbols: dict) -> None:
    rng = np.random.RandomState(case_seed(name))
    names = [s[0] for s in specs]
    inputs = {n: make_input(rng, shape, kind) for n, shape, kind in specs}
    net = eval(with_prefix(ctor))  # noqa: S307 - constructors from gluon_cases.py
    net.initialize()
    args = [None if inputs[n] is None else mx.nd.array(inputs[n]) for n in names]
    y = net(*args)
    prng = np.random.RandomState(case_seed(name) + 1)
    params = {}
    for key, p in sorted(net._collect_params_with_prefix().items()):
        params[key] = make_param(prng, key, p.shape)
        p.set_data(mx.nd.array(params[key]))
    cot = rng.randn(*y.shape).astype(np.float32)
    out = {"cot": cot}
    out.update({f"in:{n}": v for n, v in inputs.items() if v is not None})
    out.update({f"param:{k}": v for k, v in params.items()})
    nograd = tuple(flags.get("nograd", ()))
    run_pass(net, inputs, names, nograd, cot, flags.get("mx_record_train", False), out, "", flags.get("grad", True))
    if flags.get("train"):
        run_pass(net, inputs, names, nograd, cot, True, out, "train:")
    if flags.get("hybrid", True):
        for key, p in net._collect_params_with_prefix().items():
            p.set_data(mx.nd.array(params[key]))
        net.hybridize()
        y = net(*args)
        np.testing.assert_allclose(y.asnumpy(), out["out"], rtol=1e-5, atol=1e-6)
        with tempfile.TemporaryDirectory() as tmp:
            net.export(os.path.join(tmp, "m"))
            with open(os.path.join(tmp, "m-symbol.json")) as f:
                symbols[name] = json.load(f)
    arrays.update({f"{name}/{k}": v for k, v in out.items()})


def main() -> None:
    arrays: dict = {}
    symbols: dict = {}
    for name, ctor, specs, flags in LAYER_CASES + CONV_CASES + LOSS_CASES:
        try:
            run_case(name, ctor, specs, flags, arrays, symbols)
        except Exception as exc:  # noqa: BLE001 - report and go on
            print(f"{name}: FAILED {str(exc)[-600:]}")
            raise
    np.savez_compressed(os.path.join(HERE, "gluon_ref.npz"), **arrays)
    with open(os.path.join(HERE, "gluon_ref.json"), "w") as f:
        json.dump({"mxnet_version": mx.__version__, "symbols": symbols}, f, separators=(",", ":"), sort_keys=True)
    print(f"{len(arrays)} arrays, {len(symbols)} symbols")


if __name__ == "__main__":
    main()
