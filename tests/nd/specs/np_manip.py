"""Specs for numpy's stacking operators (nd/ops/np_manip.py): forward against numpy's
hstack / vstack / dstack / column_stack on 0-d to 3-d inputs, gradients by finite differences."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr

_REF = {"hstack": np.hstack, "vstack": np.vstack, "dstack": np.dstack, "column_stack": np.column_stack}
_JOIN_AXIS = {"hstack": 1, "vstack": 0, "dstack": 2, "column_stack": 1}


def _case(kind):
    def case(draw):
        ndim = draw(st.integers(0, 3))
        if kind == "column_stack":
            ndim = min(ndim, 2)
        base = tuple(draw(st.lists(st.integers(1, 3), min_size=ndim, max_size=ndim)))
        n = draw(st.integers(1, 3))
        shapes = []
        for _ in range(n):
            s = list(base)
            ax = 0 if (kind == "hstack" and ndim == 1) else _JOIN_AXIS[kind]
            if ndim > ax and ndim >= {"hstack": 1, "vstack": 2, "dstack": 3, "column_stack": 2}[kind]:
                s[ax] = draw(st.integers(1, 3))   # the joined axis may differ between inputs
            shapes.append(tuple(s))
        attrs = {"num_args": n}
        if kind in ("hstack", "dstack"):
            attrs["dim"] = 1
        return [draw(arr(s)) for s in shapes], attrs
    return case


def _ref(kind):
    return lambda *xs, **kw: _REF[kind](xs)


def _backward_case(kind):
    def case(draw):
        xs, attrs = _case(kind)(draw)
        return [draw(arr(_REF[kind](xs).shape)), *xs], attrs
    return case


def _backward_ref(kind):
    def ref(g, *xs, **kw):
        lifted = [np.asarray(_REF[kind]([x])) for x in xs]
        ax = 0 if (kind == "hstack" and lifted[0].ndim == 1) else _JOIN_AXIS[kind]
        cuts = np.cumsum([p.shape[ax] for p in lifted])[:-1]
        return tuple(p.reshape(x.shape) for p, x in zip(np.split(g, cuts, axis=ax), xs))
    return ref


SPECS = [OpSpec(f"_npi_{k}", case=_case(k), ref=_ref(k)) for k in _REF] + [
    OpSpec(f"_backward_np_{k}", case=_backward_case(k), ref=_backward_ref(k),
           nondiff="a gradient kernel (checked through its forward operator)") for k in _REF]


def _broadcast_to_case(draw):
    src = draw(st.lists(st.sampled_from([1, 2, 3]), min_size=0, max_size=3))
    lead = draw(st.lists(st.integers(0, 3), max_size=2))
    target = list(lead) + [draw(st.integers(0, 3)) if d == 1 else draw(st.sampled_from([d, -2])) for d in src]
    return [draw(arr(tuple(src)))], {"shape": tuple(target)}


def _broadcast_to_ref(x, shape, **kw):
    s = tuple(x.shape[i - len(shape) + x.ndim] if d == -2 else d for i, d in enumerate(shape))
    return np.broadcast_to(x, s)


def _broadcast_to_backward_case(draw):
    (x,), attrs = _broadcast_to_case(draw)
    return [draw(arr(_broadcast_to_ref(x, **attrs).shape)), x], attrs


def _broadcast_to_backward_ref(g, x, **kw):
    lead = g.ndim - x.ndim
    g = g.sum(axis=tuple(range(lead))) if lead else g
    return g.sum(axis=tuple(i for i, d in enumerate(x.shape) if d == 1), keepdims=True).reshape(x.shape)


SPECS += [OpSpec("_npi_broadcast_to", case=_broadcast_to_case, ref=_broadcast_to_ref),
          OpSpec("_backward_np_broadcast_to", case=_broadcast_to_backward_case, ref=_broadcast_to_backward_ref,
                 nondiff="a gradient kernel (checked through _npi_broadcast_to)")]
