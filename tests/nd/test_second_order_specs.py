"""Second derivatives of every differentiable registry operator (the spec table of
tests/op_specs.py): `autograd.grad(create_graph=True)` records the gradient rule's registry ops,
so differentiating the first gradient again must equal central finite differences of the first
gradient. Operators whose gradient runs through a hidden backward operator that has no gradient
rule of its own (as in MXNet 1.9.1, where most `_backward_X` have no FGradient) must refuse with
an AutogradError that names it."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from hybridgraph import nd
from hybridgraph.nd import autograd
from hybridgraph.nd.dispatch import invoke
from hybridgraph.nd.errors import AutogradError
from hybridgraph.nd.registry import get_op
from tests.nd.specs import all_specs

#: first-order only: the gradient rule emits a hidden backward operator without a gradient rule
FIRST_ORDER_ONLY = frozenset("""
    Correlation Custom gamma gammaln _mod broadcast_mod _mod_scalar _rmod_scalar _image_crop
    _contrib_index_copy _linalg_trsm _linalg_det _linalg_sumlogdiag _linalg_potri _linalg_trmm
    _linalg_gelqf _while_loop softmax_cross_entropy BatchNorm LayerNorm InstanceNorm GroupNorm
    L2Normalization LRN moments _np_diag _np_diagonal _np_diagflat _npi_einsum _npi_ediff1d _npi_svd
    _npi_slogdet _npi_solve _npi_tensorinv _npi_tensorsolve _npi_tensordot _npi_tensordot_int_axes
    _npi_hstack _npi_vstack _npi_dstack _npi_column_stack _npi_broadcast_to _npi_polyval _npi_mod
    _npi_mod_scalar _npi_rmod_scalar _np_dot _npi_matmul _np_cumsum _npi_diff RNN _linalg_slogdet
    BilinearSampler SpatialTransformer ROIPooling
    _contrib_box_nms _contrib_interleaved_matmul_selfatt_qk _contrib_interleaved_matmul_selfatt_valatt
    _contrib_interleaved_matmul_encdec_qk _contrib_interleaved_matmul_encdec_valatt _contrib_hawkesll
    _contrib_DeformablePSROIPooling _contrib_PSROIPooling _contrib_ROIAlign im2col _contrib_boolean_mask
    _foreach _contrib_DeformableConvolution _contrib_ModulatedDeformableConvolution _CachedOp""".split())

SPECS = [s for s in all_specs() if s.nondiff is None]
EPS = 1e-6


def _first_gradient(spec, inputs, attrs, wrt, heads, create: bool):
    """The variables and the first gradients of sum(outputs * heads) with respect to them."""
    xs = [nd.array(x, dtype=x.dtype) for x in inputs]
    for i in wrt:
        xs[i].attach_grad()
    with autograd.record(train_mode=spec.is_train):
        out = invoke(get_op(spec.name), xs, dict(attrs))
        outs = out if isinstance(out, list) else [out]
        hs = [nd.array(h, dtype=o.dtype) for h, o in zip(heads, outs)]
        gs = autograd.grad(outs, [xs[i] for i in wrt], head_grads=hs, create_graph=create,
                           retain_graph=create)
    return xs, gs


def _first_order_only(name: str, attrs: dict) -> bool:
    """Whether this call has no second derivative (max and lp pooling have none)."""
    return name in FIRST_ORDER_ONLY or (name == "Pooling" and attrs.get("pool_type", "max") not in ("avg", "sum"))


def test_first_order_only_names_registered_specs():
    names = {s.name for s in SPECS}
    assert FIRST_ORDER_ONLY <= names, sorted(FIRST_ORDER_ONLY - names)


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
def test_second_derivative_is_finite_difference_of_first(spec):
    @settings(max_examples=3)
    @given(st.data())
    def check(data):
        inputs, attrs, wrt = spec.draw_case(data.draw)
        rng = np.random.default_rng(0)
        with autograd.train_mode() if spec.is_train else autograd.predict_mode():
            out = invoke(get_op(spec.name), [nd.array(x, dtype=x.dtype) for x in inputs], dict(attrs))
        heads = [rng.standard_normal(o.shape) for o in (out if isinstance(out, list) else [out])]
        xs, gs = _first_gradient(spec, inputs, attrs, wrt, heads, create=True)
        heads2 = [rng.standard_normal(g.shape) for g in gs]
        if _first_order_only(spec.name, attrs):
            with pytest.raises(AutogradError, match="_backward|second-order|not differentiable"):
                autograd.grad(gs, [xs[i] for i in wrt], head_grads=[nd.array(h, dtype=g.dtype) for h, g in
                                                                    zip(heads2, gs)])
            return
        second = autograd.grad(gs, [xs[i] for i in wrt],
                               head_grads=[nd.array(h, dtype=g.dtype) for h, g in zip(heads2, gs)])
        dirs = [rng.standard_normal(inputs[i].shape) for i in wrt]
        analytic = sum(float((g.asnumpy() * d).sum()) for g, d in zip(second, dirs))

        def first(sign: float) -> float:
            moved = [x.copy() for x in inputs]
            for i, d in zip(wrt, dirs):
                moved[i] = moved[i] + sign * EPS * d
            _, g1 = _first_gradient(spec, moved, attrs, wrt, heads, create=False)
            return sum(float((g.asnumpy().astype(np.float64) * h).sum()) for g, h in zip(g1, heads2))
        numeric = (first(1.0) - first(-1.0)) / (2 * EPS)
        assert abs(analytic - numeric) <= 1e-3 * max(1.0, abs(numeric)), \
            f"{spec.name}: second derivative {analytic} vs finite difference {numeric} (attrs {attrs})"
    check()
