"""Write tests/data/control_flow_ref.npz with MXNet 1.9.1 (run: /work/mxvenv/bin/python THIS).

For every case of tests/data/control_flow_cases.py: the inputs, the outputs
and the input gradients of sum(out * head) from `mx.nd` under autograd, after
checking that MXNet's symbolic executor (`_cond` / `_foreach` / `_while_loop`
subgraph operators) and a hybridized Gluon block give the same numbers. For
while_loop cases, `<name>/steps` is the number of iterations that ran (later
rows of the stacked outputs are undefined in MXNet and not stored).

MXNet's own front ends disagree in places (printed when this runs): the
gradients of `_cond` through the symbolic executor and through a hybridized
block are wrong (uninitialised memory: values like 4e37), and a hybridized
block with `while_loop` fails under autograd.record ("Assigning to NDArrays
that are already in a computational graph"). The stored reference is
therefore mx.nd under autograd, whose gradients are plain chain rule; the
hybridgraph tests also check them against finite differences.
"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
import mxnet as mx  # noqa: E402
from mxnet import autograd  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from control_flow_cases import CASES, make_heads, make_inputs  # noqa: E402


def run_nd(fn, inputs: dict, heads: list | None):
    xs = {k: mx.nd.array(v) for k, v in inputs.items()}
    for x in xs.values():
        x.attach_grad()
    with autograd.record():
        outs = fn(mx.nd, **xs)
    if heads is None:
        return [o.asnumpy() for o in outs], None
    autograd.backward(outs, [mx.nd.array(h) for h in heads])
    return [o.asnumpy() for o in outs], {k: x.grad.asnumpy() for k, x in xs.items()}


def run_sym(fn, inputs: dict, heads: list):
    vs = {k: mx.sym.var(k, shape=v.shape) for k, v in inputs.items()}
    out = mx.sym.Group(fn(mx.sym, **vs))
    args = {k: mx.nd.array(v) for k, v in inputs.items()}
    grads = {k: mx.nd.zeros(v.shape) for k, v in inputs.items()}
    ex = out.bind(mx.cpu(), args, args_grad=grads)
    outs = [o.asnumpy() for o in ex.forward(is_train=True)]
    ex.backward([mx.nd.array(h) for h in heads])
    return outs, {k: g.asnumpy() for k, g in grads.items()}


class CaseBlock(mx.gluon.HybridBlock):
    def __init__(self, fn, names):
        super().__init__()
        self.fn, self.names = fn, names

    def hybrid_forward(self, F, *xs):
        return self.fn(F, **dict(zip(self.names, xs)))


def run_hybrid(fn, inputs: dict, heads: list):
    net = CaseBlock(fn, list(inputs))
    net.hybridize()
    xs = [mx.nd.array(v) for v in inputs.values()]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        outs = net(*xs)
    autograd.backward(outs, [mx.nd.array(h) for h in heads])
    return [o.asnumpy() for o in outs], dict(zip(inputs, (x.grad.asnumpy() for x in xs)))


def valid(outs: list, steps: int | None, stacked: int) -> list:
    return [o[:steps] if steps is not None and k < stacked else o for k, o in enumerate(outs)]


def main() -> None:
    ref = {}
    for name, fn, shapes, extra in CASES:
        inputs = make_inputs(name, shapes)
        outs, _ = run_nd(fn, inputs, None)
        heads = make_heads(name, [o.shape for o in outs])
        outs, grads = run_nd(fn, inputs, heads)
        steps = None
        if "stacked" in extra:
            steps = _steps(fn, inputs)
            ref[f"{name}/steps"] = np.array(steps)
        stacked = extra.get("stacked", 0)
        for mode, runner in (("sym", run_sym), ("hybrid", run_hybrid)):
            try:
                o2, g2 = runner(fn, inputs, heads)
            except mx.base.MXNetError as exc:
                print(f"  MXNet {mode} failed: {str(exc).splitlines()[-1][:120]}")
                continue
            for a, b in zip(valid(outs, steps, stacked), valid(o2, steps, stacked)):
                np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6, err_msg=f"{name} {mode}")
            for k in grads:
                if not np.allclose(g2[k], grads[k], rtol=1e-5, atol=1e-6):
                    print(f"  MXNet {mode} gradient of {k} differs from mx.nd's "
                          f"(max abs diff {np.abs(g2[k] - grads[k]).max():.3g})")
        for k, v in inputs.items():
            ref[f"{name}/in/{k}"] = v
        for i, (o, h) in enumerate(zip(valid(outs, steps, stacked), heads)):
            ref[f"{name}/out{i}"] = o
            ref[f"{name}/head{i}"] = h
        for k, g in grads.items():
            ref[f"{name}/grad/{k}"] = g
        print(name, [o.shape for o in outs], "steps", steps)
    np.savez_compressed(os.path.join(HERE, "control_flow_ref.npz"), **ref)


def _steps(fn, inputs: dict) -> int:
    """Iterations that ran: MXNet's NDArray while_loop stops calling cond after the end."""
    calls = []
    orig = mx.nd.contrib.while_loop

    def counting(cond, func, loop_vars, max_iterations=None):
        def body(*vs):
            calls.append(1)
            return func(*vs)
        return orig(cond, body, loop_vars, max_iterations)
    mx.nd.contrib.while_loop = counting
    try:
        fn(mx.nd, **{k: mx.nd.array(v) for k, v in inputs.items()})
    finally:
        mx.nd.contrib.while_loop = orig
    return len(calls)


if __name__ == "__main__":
    main()
