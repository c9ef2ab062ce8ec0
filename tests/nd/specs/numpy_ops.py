"""Specs for the numpy front end's operators (nd/ops/np_elemwise.py, np_matrix.py, np_init.py):
forward against numpy, shapes against infer_shape, gradients by finite differences."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from hybridgraph.nd.ops import np_elemwise as npe
from hybridgraph.nd.ops.np_matrix import npx_reshape_out
from tests.nd.specs.elemwise import BINARY_REF, NONDIFF, UNARY_REF, _operands
from tests.op_specs import OpSpec, arr, shapes

_CMP = "zero gradient (comparison)"


def _unary(np_name, key):
    ref, lo, hi, kink = UNARY_REF[key]
    return OpSpec("_npi_" + np_name, case=lambda draw: ([draw(arr(shapes(), lo, hi, away_from=kink))], {}),
                  ref=lambda x, **kw: ref(x),
                  nondiff="zero gradient (piecewise constant)" if key in NONDIFF else None)


def _npx_unary(name, key):
    ref, lo, hi, kink = UNARY_REF[key]
    return OpSpec(name, case=lambda draw: ([draw(arr(shapes(), lo, hi, away_from=kink))], {}),
                  ref=lambda x, **kw: ref(x))


def _bcast_case(kind):
    def case(draw):
        s = draw(shapes(max_dims=3))
        mask = draw(st.lists(st.booleans(), min_size=len(s), max_size=len(s)))
        s2 = tuple(1 if m else d for m, d in zip(mask, s))
        if draw(st.booleans()):
            s2 = s2[1:]   # fewer dimensions, including 0-d
        return (_operands(kind, s2, s)(draw) if draw(st.booleans()) else _operands(kind, s, s2)(draw)), {}
    return case


def _binary(np_name, key, compare=False):
    fn, kind = BINARY_REF[key]
    ref = (lambda a, b, **kw: np.asarray(fn(a, b)).astype(bool)) if compare else \
        (lambda a, b, **kw: np.asarray(fn(a, b)))
    return OpSpec("_npi_" + np_name, case=_bcast_case(kind), ref=ref, nondiff=_CMP if compare else None)


def _scalar(np_name, key, rev, compare=False):
    fn, kind = BINARY_REF[key]

    def case(draw):
        s = draw(shapes())
        if kind == "positive":
            return ([draw(arr(s, -1.5, 1.5))], {"scalar": 1.7}) if rev else \
                ([draw(arr(s, 0.5, 2))], {"scalar": draw(st.sampled_from([2.0, 0.5, 3.0]))})
        if kind == "nonzero":
            return ([draw(arr(s, 0.5, 2))], {"scalar": 1.3}) if rev else ([draw(arr(s, 0.1, 3))], {"scalar": 0.7})
        if kind == "mod":
            x = draw(arr(s, 0.0, 3.0))
            x = 0.75 * (np.floor(x) + 0.1 + 0.8 * (x - np.floor(x)))
            return ([np.full(s, 0.75) + draw(arr(s, 0.0, 0.05))], {"scalar": 1.3}) if rev else ([x], {"scalar": 0.75})
        if kind == "distinct":
            return [draw(arr(s, away_from=0.25))], {"scalar": 0.25}
        return [draw(arr(s))], {"scalar": draw(st.sampled_from([0.0, 1.0, -1.5, 2.5]))}

    def ref(x, scalar, **kw):
        r = np.asarray(fn(x.dtype.type(scalar), x) if rev else fn(x, x.dtype.type(scalar)))
        return r.astype(bool) if compare else r
    return OpSpec(f"_npi_{np_name}_scalar", case=case, ref=ref, nondiff=_CMP if compare else None,
                  fd_rtol=1e-3 if key == "power" else 1e-4)


def _axis_case(draw, allow_none=True):
    s = draw(shapes(max_dims=3))
    axes = draw(st.one_of(st.none() if allow_none else st.nothing(),
                          st.lists(st.integers(0, len(s) - 1), min_size=1, max_size=len(s), unique=True)))
    return s, None if axes is None else tuple(axes)


def _reduction(name, ref, distinct=False):
    def case(draw):
        s, axes = _axis_case(draw)
        x = draw(arr(s, 0.5, 2)) if name == "_np_prod" else draw(arr(s))
        if distinct:
            x = x + np.arange(x.size).reshape(s) * 0.01
        return [x], {"axis": axes, "keepdims": draw(st.booleans())}
    return OpSpec(name, case=case, ref=lambda x, axis, keepdims, **kw: ref(x, axis=axis, keepdims=keepdims))


def _arg(name, fn):
    def case(draw):
        s = draw(shapes(max_dims=3))
        x = draw(arr(s)) + np.arange(int(np.prod(s))).reshape(s) * 1e-3
        axis = draw(st.one_of(st.none(), st.integers(0, len(s) - 1)))
        return [x], {"axis": axis, "keepdims": draw(st.booleans()) if axis is not None else False}
    return OpSpec(name, case=case, ref=lambda x, axis, keepdims, **kw: fn(x, axis=axis, keepdims=keepdims),
                  nondiff="integer indices")


def _reshape_case(draw):
    s = draw(shapes(max_dims=3))
    return [draw(arr(s))], {"newshape": (-1,) + tuple(s[1:]) if len(s) > 1 else (-1,)}


def _npx_reshape_case(draw):
    s = draw(shapes(min_dims=2, max_dims=3))
    spec = draw(st.sampled_from([(-5, -4), (-2, -1), (-4,), (-6, 1, -1, -4)]))
    return [draw(arr(s))], {"newshape": spec}


def _transpose_case(draw):
    s = draw(shapes(max_dims=4))
    perm = draw(st.permutations(range(len(s))))
    return [draw(arr(s))], {"axes": draw(st.sampled_from([None, tuple(perm)]))}


def _squeeze_case(draw):
    s = draw(shapes(max_dims=4, min_side=1, max_side=2))
    return [draw(arr(s))], {"axis": None}


def _dot_case(draw):
    k = draw(st.integers(1, 4))
    form = draw(st.sampled_from(["vv", "mv", "mm", "sv", "vm"]))
    m, n = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    shapes_ = {"vv": ((k,), (k,)), "mv": ((m, k), (k,)), "mm": ((m, k), (k, n)), "sv": ((), (k,)),
               "vm": ((k,), (k, n))}[form]
    return [draw(arr(shapes_[0])), draw(arr(shapes_[1]))], {}


def _matmul_case(draw):
    k, m, n = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    b = draw(st.sampled_from([(), (2,), (2, 1)]))
    form = draw(st.sampled_from(["mm", "bm", "vm", "mv"]))
    ls, rs = {"mm": ((m, k), (k, n)), "bm": (b + (m, k), (1,) * len(b) + (k, n)),
              "vm": ((k,), b + (k, n)), "mv": (b + (m, k), (k,))}[form]
    return [draw(arr(ls)), draw(arr(rs))], {}


def _join_case(stack):
    def case(draw):
        s = draw(shapes(max_dims=3))
        n = draw(st.integers(1, 3))
        ax = draw(st.integers(0, len(s) if stack else len(s) - 1))
        xs = [draw(arr(s)) for _ in range(n)]
        return xs, {"axis": ax, "num_args": n}
    return case


def _where_case(draw):
    s = draw(shapes(max_dims=3))
    c = draw(arr(s)) > 0
    return [c.astype(np.float64), draw(arr(s)), draw(arr(s[1:] if len(s) > 1 else s))], {}


def _full_like_case(draw):
    return [draw(arr(shapes()))], {"fill_value": draw(st.sampled_from([0.0, 1.0, -2.5]))}


def _creation(name, attrs, ref):
    return OpSpec(name, case=lambda draw: ([], attrs(draw)), ref=ref,
                  nondiff="a creation op has no inputs")


def _random(name, attrs):
    return OpSpec(name, case=lambda draw: ([], attrs(draw)), nondiff="random sampling")


def _backward_case(forward_case, ref):
    def case(draw):
        (a, b), attrs = forward_case(draw)
        return [draw(arr(np.shape(ref(a, b)))), a, b], attrs
    return case


def _dot_backward_ref(g, a, b, **kw):
    """np.dot's gradients by the chain rule on the einsum of the forward (reference)."""
    if a.ndim == 0 or b.ndim == 0:
        return (np.sum(g * b).reshape(a.shape) if a.ndim == 0 else g * b,
                np.sum(g * a).reshape(b.shape) if b.ndim == 0 else g * a)
    if b.ndim == 1:
        return np.multiply.outer(g, b), np.tensordot(a, g, axes=(list(range(a.ndim - 1)), list(range(g.ndim))))
    return np.dot(g, np.swapaxes(b, -1, -2)), np.dot(np.swapaxes(a, -1, -2) if a.ndim > 1 else a[:, None],
                                                     g if a.ndim > 1 else g[None, :])


def _matmul_backward_ref(g, a, b, **kw):
    am = a if a.ndim > 1 else a[None, :]
    bm = b if b.ndim > 1 else b[:, None]
    gm = g
    if a.ndim == 1:
        gm = np.expand_dims(gm, -2)
    if b.ndim == 1:
        gm = np.expand_dims(gm, -1)
    ga, gb = np.matmul(gm, np.swapaxes(bm, -1, -2)), np.matmul(np.swapaxes(am, -1, -2), gm)
    ga = ga.sum(axis=tuple(range(ga.ndim - am.ndim))) if ga.ndim > am.ndim else ga
    gb = gb.sum(axis=tuple(range(gb.ndim - bm.ndim))) if gb.ndim > bm.ndim else gb
    for i, d in enumerate(am.shape[:-2]):
        if d == 1 and ga.shape[i] != 1:
            ga = ga.sum(axis=i, keepdims=True)
    for i, d in enumerate(bm.shape[:-2]):
        if d == 1 and gb.shape[i] != 1:
            gb = gb.sum(axis=i, keepdims=True)
    return ga.reshape(a.shape), gb.reshape(b.shape)


def _roll_case(draw):
    s = draw(shapes(max_dims=3))
    if draw(st.booleans()):
        return [draw(arr(s))], {"shift": (draw(st.integers(-5, 5)),), "axis": None}
    axes = tuple(draw(st.lists(st.integers(0, len(s) - 1), min_size=1, max_size=len(s), unique=True)))
    return [draw(arr(s))], {"shift": tuple(draw(st.integers(-5, 5)) for _ in axes), "axis": axes}


def _cumsum_case(draw):
    s = draw(shapes(max_dims=3))
    return [draw(arr(s))], {"axis": draw(st.one_of(st.none(), st.integers(-len(s), len(s) - 1)))}


def _diff_case(draw):
    s = draw(shapes(max_dims=3))
    axis = draw(st.integers(-len(s), len(s) - 1))
    return [draw(arr(s))], {"n": draw(st.integers(0, s[axis])), "axis": axis}


def _backward_of(case, ref):
    def build(draw):
        (x,), attrs = case(draw)
        return [draw(arr(np.shape(ref(x, **attrs)))), x], attrs
    return build


def _cumsum_backward_ref(g, x, axis, **kw):
    ax = -1 if axis is None else axis
    return np.flip(np.cumsum(np.flip(g, ax), axis=ax), ax).reshape(x.shape)


def _diff_backward_ref(g, x, n, axis, **kw):
    res = g
    for _ in range(n):
        res = -np.diff(res, axis=axis, prepend=0, append=0)
    return res.reshape(x.shape)


def _roll_ref(x, shift, axis, **kw):
    return np.roll(x, shift[0] if axis is None else shift, axis)


_SHAPE = shapes(min_dims=1, max_dims=3)

SPECS = (
    [_unary(n, k) for n, k in npe.NP_UNARY.items()]
    + [_npx_unary("_npx_relu", "relu"), _npx_unary("_npx_sigmoid", "sigmoid"),
       OpSpec("_npi_logical_not", case=lambda draw: ([draw(arr(shapes()))], {}),
              ref=lambda x, **kw: np.logical_not(x), nondiff="bool result"),
       OpSpec("_np_copy", case=lambda draw: ([draw(arr(shapes()))], {}), ref=lambda x, **kw: x),
       OpSpec("_npi_around", case=lambda draw: ([draw(arr(shapes(), -50, 50))],
                                                {"decimals": draw(st.integers(-1, 2))}),
              ref=lambda x, decimals, **kw: np.around(x, decimals), nondiff="zero gradient (piecewise constant)")]
    + [_binary(n, k) for n, k in npe.NP_BINARY.items()]
    + [_binary(n, k, compare=True) for n, k in npe.NP_COMPARE.items()]
    + [_scalar(n, k, rev) for n, (k, rev, _) in npe.NP_SCALAR.items()]
    + [_scalar(n, npe.NP_COMPARE[n], False, compare=True) for n in npe.NP_COMPARE_SCALAR]
    + [_reduction("_np_sum", np.sum), _reduction("_npi_mean", np.mean), _reduction("_np_prod", np.prod),
       _reduction("_np_max", np.max, distinct=True), _reduction("_np_min", np.min, distinct=True),
       _arg("_npi_argmax", np.argmax), _arg("_npi_argmin", np.argmin),
       OpSpec("_np_reshape", case=_reshape_case, ref=lambda x, newshape, **kw: x.reshape(newshape)),
       OpSpec("_npx_reshape", case=_npx_reshape_case,
              ref=lambda x, newshape, **kw: x.reshape(npx_reshape_out(x.shape, newshape))),
       OpSpec("_np_transpose", case=_transpose_case, ref=lambda x, axes, **kw: np.transpose(x, axes)),
       OpSpec("_np_squeeze", case=_squeeze_case, ref=lambda x, axis, **kw: np.squeeze(x, axis)),
       OpSpec("_np_dot", case=_dot_case, ref=lambda a, b, **kw: np.dot(a, b)),
       OpSpec("_npi_matmul", case=_matmul_case, ref=lambda a, b, **kw: np.matmul(a, b)),
       OpSpec("_np_roll", case=_roll_case, ref=_roll_ref),
       OpSpec("_npi_tril", case=lambda draw: ([draw(arr(shapes(min_dims=2, max_dims=3)))],
                                              {"k": draw(st.integers(-2, 2))}), ref=lambda x, k, **kw: np.tril(x, k)),
       OpSpec("_np_cumsum", case=_cumsum_case, ref=lambda x, axis, **kw: np.cumsum(x, axis=axis)),
       OpSpec("_npi_diff", case=_diff_case, ref=lambda x, n, axis, **kw: np.diff(x, n=n, axis=axis)),
       OpSpec("_backward_np_cumsum", case=_backward_of(_cumsum_case, lambda x, axis, **kw: np.cumsum(x, axis=axis)),
              ref=_cumsum_backward_ref, nondiff="a gradient kernel (checked through _np_cumsum)"),
       OpSpec("_backward_npi_diff", case=_backward_of(_diff_case, lambda x, n, axis, **kw: np.diff(x, n=n, axis=axis)),
              ref=_diff_backward_ref, nondiff="a gradient kernel (checked through _npi_diff)"),
       OpSpec("_backward_np_dot", case=_backward_case(_dot_case, np.dot), ref=_dot_backward_ref,
              nondiff="a gradient kernel (np.dot's gradients are checked through _np_dot)"),
       OpSpec("_backward_npi_matmul", case=_backward_case(_matmul_case, np.matmul), ref=_matmul_backward_ref,
              nondiff="a gradient kernel (np.matmul's gradients are checked through _npi_matmul)"),
       OpSpec("_npi_concatenate", case=_join_case(False),
              ref=lambda *xs, axis, num_args: np.concatenate(xs, axis=axis)),
       OpSpec("_npi_stack", case=_join_case(True), ref=lambda *xs, axis, num_args: np.stack(xs, axis=axis)),
       OpSpec("_npi_where", case=_where_case, ref=lambda c, x, y, **kw: np.where(c != 0, x, y),
              grad_inputs=(1, 2)),
       OpSpec("_npi_full_like", case=_full_like_case, ref=lambda x, fill_value, **kw: np.full_like(x, fill_value),
              nondiff="constant output"),
       _creation("_npi_zeros", lambda draw: {"shape": draw(_SHAPE)}, np.zeros),
       _creation("_npi_ones", lambda draw: {"shape": draw(_SHAPE)}, np.ones),
       _creation("_npi_full", lambda draw: {"shape": draw(_SHAPE), "value": 2.5},
                 lambda shape, value, **kw: np.full(shape, value)),
       _creation("_npi_arange", lambda draw: {"start": 1.0, "stop": float(draw(st.integers(2, 9))), "step": 1.5},
                 np.arange),
       _creation("_npi_eye", lambda draw: {"N": draw(st.integers(1, 4)), "M": draw(st.integers(1, 4)),
                                           "k": draw(st.integers(-1, 1))},
                 np.eye),
       _creation("_npi_identity", lambda draw: {"shape": (draw(st.integers(1, 4)),) * 2},
                 lambda shape: np.eye(shape[0])),
       _random("_npi_uniform", lambda draw: {"low": -1.0, "high": 1.0, "size": draw(_SHAPE)}),
       _random("_npi_random_randint", lambda draw: {"low": 0, "high": 5, "shape": draw(_SHAPE)})]
)
