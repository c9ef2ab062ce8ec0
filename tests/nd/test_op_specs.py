"""Generic checks over the operator spec table (tests/op_specs.py)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

from hybridgraph import nd
from hybridgraph.nd import autograd
from hybridgraph.nd.dispatch import invoke, parse_cached
from hybridgraph.nd.registry import ZERO_GRAD, all_ops, get_op
from tests.nd.specs import all_specs

SPECS = all_specs()
IDS = [s.name for s in SPECS]


def _run(spec, inputs, attrs, record=False):
    op = get_op(spec.name)
    xs = [nd.array(x, dtype=x.dtype) for x in inputs]
    if record:
        for x in xs:
            x.attach_grad()
        with autograd.record(train_mode=spec.is_train):
            out = invoke(op, xs, dict(attrs))
        return xs, out if isinstance(out, list) else [out]
    scope = autograd.train_mode() if spec.is_train else autograd.predict_mode()
    with scope:
        out = invoke(op, xs, dict(attrs))
    return xs, out if isinstance(out, list) else [out]


def test_every_registered_operator_has_a_spec():
    """Acceptance [nd] 2: the registry and the spec table cover each other."""
    covered = {s.name for s in SPECS}
    missing = sorted(n for n in all_ops() if n not in covered)
    assert not missing, f"operators without an OpSpec: {missing}"
    unknown = sorted(covered - set(all_ops()))
    assert not unknown, f"specs for unregistered (or alias) names: {unknown}"


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_spec_forward_and_shape(spec):
    @given(st.data())
    def check(data):
        inputs, attrs = spec.case(data.draw)
        _, outs = _run(spec, inputs, attrs)
        op = get_op(spec.name)
        a = parse_cached(op, {k: v for k, v in attrs.items()}) if attrs else op.schema.parse({})
        inferred = op.infer_shape(a, *[tuple(x.shape) for x in inputs]) if op.infer_shape else None
        assert inferred is not None or spec.dynamic_shape, \
            f"{spec.name}: infer_shape gave nothing for known input shapes"
        out_shapes = inferred[1] if inferred is not None else [o.shape for o in outs]
        for i, o in enumerate(outs):
            assert tuple(out_shapes[i]) == o.shape, f"{spec.name} output {i}: inferred {out_shapes[i]} vs {o.shape}"
        if spec.ref is not None:
            want = spec.ref(*inputs, **attrs)
            want = list(want) if isinstance(want, (tuple, list)) else [want]
            n = spec.compare_outputs or len(want)
            for o, w in zip(outs[:n], want[:n]):
                np.testing.assert_allclose(o.asnumpy(), np.asarray(w), rtol=spec.rtol, atol=spec.atol,
                                           err_msg=spec.name)
        else:
            assert spec.golden or spec.nondiff, f"{spec.name}: a spec needs a numpy ref or golden=True"
    check()


DIFF_SPECS = [s for s in SPECS if s.nondiff is None]


@pytest.mark.parametrize("spec", DIFF_SPECS, ids=[s.name for s in DIFF_SPECS])
def test_spec_gradient_finite_difference(spec):
    op = get_op(spec.name)
    assert op.gradient is not None and op.gradient != ZERO_GRAD or spec.nondiff, \
        f"{spec.name}: no gradient rule; mark the spec nondiff='why'"

    @given(st.data())
    def check(data):
        inputs, attrs, wrt = spec.draw_case(data.draw)
        rng = np.random.default_rng(0)
        xs, outs = _run(spec, inputs, attrs, record=True)
        heads = [nd.array(rng.standard_normal(o.shape), dtype=o.dtype) for o in outs]
        autograd.backward(outs, heads)
        dirs = [rng.standard_normal(inputs[i].shape) for i in wrt]
        analytic = sum(float((xs[i].grad.asnumpy() * d).sum()) for i, d in zip(wrt, dirs))

        def loss(sign):
            moved = [x.copy() for x in inputs]
            for i, d in zip(wrt, dirs):
                moved[i] = moved[i] + sign * spec.fd_eps * d
            _, o = _run(spec, moved, attrs)
            return sum(float((oo.asnumpy().astype(np.float64) * h.asnumpy()).sum()) for oo, h in zip(o, heads))
        numeric = (loss(1) - loss(-1)) / (2 * spec.fd_eps)
        assert abs(analytic - numeric) <= spec.fd_rtol * max(1.0, abs(numeric)), \
            f"{spec.name}: analytic {analytic} vs numeric {numeric} (attrs {attrs})"
    check()
