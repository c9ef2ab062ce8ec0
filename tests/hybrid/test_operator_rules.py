"""One table of Python-operator rules (nd/arith.py `RULES`) serves NDArray, Symbol, the
tracer and the helpers (issue 13, item 6). Eager and hybridized code agree on every
operator, and an in-place operator in traced code raises instead of silently rebinding
the name while eager code mutates the array."""
from __future__ import annotations

import operator
import re

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import nd
from hybridgraph import symbol as S  # noqa: N812
from hybridgraph.gluon import HybridBlock
from hybridgraph.nd.arith import OPERATOR_RULES, RULES
from hybridgraph.symbol.tracer import TraceError

ARITH = [r for r in OPERATOR_RULES if r.augmented]
PY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv,
      "mod": operator.mod, "pow": operator.pow, "eq": operator.eq, "ne": operator.ne, "gt": operator.gt,
      "ge": operator.ge, "lt": operator.lt, "le": operator.le}
IPY = {"add": operator.iadd, "sub": operator.isub, "mul": operator.imul, "truediv": operator.itruediv,
       "mod": operator.imod, "pow": operator.ipow}


class Apply(HybridBlock):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def hybrid_forward(self, F, a, b):
        return self.fn(a, b)


def _pair():
    a = nd.array([[1.5, 2.0, 3.0], [4.0, 0.5, 2.5]])
    b = nd.array([2.0, 1.5, 0.5])    # broadcasts against a
    return a, b


def test_every_python_operator_has_one_rule():
    assert sorted(r.dunder for r in OPERATOR_RULES) == sorted(PY)
    for r in OPERATOR_RULES:
        assert hasattr(nd.NDArray, f"__{r.dunder}__") and hasattr(S.Symbol, f"__{r.dunder}__")
        assert RULES[next(k for k, v in RULES.items() if v is r)] is r


# comparisons have no reflected method (Python swaps the operands: `1.5 < a` is `a > 1.5`)
FORMS = [(r, f) for r in OPERATOR_RULES for f in ("array", "scalar", "rscalar") if f != "rscalar" or r.augmented]


@pytest.mark.parametrize("rule,form", FORMS, ids=[f"{r.dunder}-{f}" for r, f in FORMS])
def test_eager_equals_hybridized(rule, form):
    fn = PY[rule.dunder]
    call = {"array": fn, "scalar": lambda a, b: fn(a, 1.5),
            "rscalar": lambda a, b: fn(1.5, a)}[form]
    a, b = _pair()
    want = call(a, b).asnumpy()
    net = Apply(call)
    net.hybridize()
    got = net(a, b).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(want, call(a.asnumpy(), b.asnumpy()).astype(np.float32), rtol=1e-6)


@pytest.mark.parametrize("rule", ARITH, ids=[r.dunder for r in ARITH])
def test_inplace_operator_mutates_eagerly_and_raises_when_traced(rule):
    ifn = IPY[rule.dunder]

    def body(a, b):
        alias = a
        a = ifn(a, 2.0)
        return alias + a * 0

    a, b = _pair()
    x = a.copy()
    eager = Apply(body)(x, b)
    np.testing.assert_allclose(x.asnumpy(), PY[rule.dunder](a.asnumpy(), 2.0), rtol=1e-6)   # mutated
    np.testing.assert_allclose(eager.asnumpy(), x.asnumpy())
    net = Apply(body)
    net.hybridize()
    with pytest.raises(TraceError, match=rf"in-place {re.escape(rule.augmented)}"):
        net(a.copy(), b)


def test_symbols_keep_mxnet_node_names():
    a, b = S.var("a"), S.var("b")
    with S.NameManager():
        assert (a + b).name == "_plus0"
        assert (a % 2).name == "_modscalar0"
        assert (2 ** a).name == "_rpower_scalar0"      # MXNet 1.9.1's spelling
        assert (a >= b).name == "_greater_equal0"
    assert mx.sym.maximum(a, b).list_outputs()[0].startswith("_maximum")
