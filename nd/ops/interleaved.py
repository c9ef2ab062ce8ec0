"""The fused self-/encoder-decoder attention matmuls of MXNet 1.9.1 (src/operator/contrib/transformer.cc):
`_contrib_interleaved_matmul_selfatt_qk`, `..._selfatt_valatt`, `..._encdec_qk`, `..._encdec_valatt`.

Projections arrive interleaved per head: self-attention's (seq, batch, heads * 3 * head_dim) holds
[q, k, v] for each head in turn, encoder-decoder's keys_values (seq, batch, heads * 2 * head_dim)
holds [k, v]. The qk ops give (batch * heads, q_seq, k_seq) scores of q / sqrt(head_dim) against k;
the valatt ops multiply attention maps by v back into (q_seq, batch, heads * head_dim).
Each has a hidden backward op (MXNet's `_backward_interleaved_matmul_*`), not differentiated again.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import ShapeError
from ..registry import register

_HEADS = {"heads": Attr("int", doc="Set number of heads")}


def _scale(head_dim: int):
    """MXNet's 1 / sqrt(float(head_dim)), rounded to float32."""
    return np.float32(1.0 / float(np.sqrt(np.float32(head_dim))))


def _split(x, heads: int, parts: int, op: str, name: str):
    """(seq, batch, heads*parts*d) -> (seq, batch, heads, parts, d)."""
    s, b, e = x.shape
    if heads < 1 or e % (heads * parts):
        raise ShapeError(f"operator {op}: {name}'s last dimension {e} is not a multiple of "
                         f"heads * {parts} = {heads * parts}")
    return x.reshape(s, b, heads, parts, e // (heads * parts))


def _check_rank(op: str, **shapes) -> None:
    for name, s in shapes.items():
        if s is not None and len(s) != 3:
            raise ShapeError(f"operator {op}: {name} must be 3-D, got shape {tuple(s)}")


def _qk(xp, q, k):
    """(sq, b, h, d) x (sk, b, h, d) -> (b*h, sq, sk) of q.k / sqrt(d)."""
    sq, b, h, d = q.shape
    out = xp.einsum("ibhd,jbhd->bhij", q, k) * q.dtype.type(_scale(d))
    return out.reshape(b * h, sq, k.shape[0]).astype(q.dtype, copy=False)


def _valatt(xp, v, att):
    """(sk, b, h, d) with (b*h, sq, sk) -> (sq, b, h*d)."""
    sk, b, h, d = v.shape
    att = att.reshape(b, h, -1, sk)
    out = xp.einsum("bhij,jbhd->ibhd", att, v)
    return out.reshape(out.shape[0], b, h * d).astype(v.dtype, copy=False)


def _valatt_grads(xp, v, att, g):
    """Gradients of _valatt for v (sk, b, h, d) and att (b*h, sq, sk), from g (sq, b, h*d)."""
    sk, b, h, d = v.shape
    g4 = g.reshape(g.shape[0], b, h, d)
    a4 = att.reshape(b, h, -1, sk)
    dv = xp.einsum("bhij,ibhd->jbhd", a4, g4)
    datt = xp.einsum("ibhd,jbhd->bhij", g4, v).reshape(att.shape)
    return dv, datt


def _qk_grads(xp, q, k, g):
    """Gradients of _qk for q (sq, b, h, d) and k (sk, b, h, d), from g (b*h, sq, sk)."""
    sq, b, h, d = q.shape
    g4 = g.reshape(b, h, sq, k.shape[0]) * q.dtype.type(_scale(d))
    return xp.einsum("bhij,jbhd->ibhd", g4, k), xp.einsum("bhij,ibhd->jbhd", g4, q)


# ---------------------------------------------------------------------------
# self attention

_SQK = "_contrib_interleaved_matmul_selfatt_qk"


def _sqk_shape(a, qkv):
    if qkv is None:
        return None
    _check_rank(_SQK, queries_keys_values=qkv)
    return [tuple(qkv)], [(a.heads * qkv[1], qkv[0], qkv[0])]


@register(_SQK, inputs=("queries_keys_values",), attrs=_HEADS, infer_shape=_sqk_shape)
def _contrib_interleaved_matmul_selfatt_qk(xp, a, qkv):
    """Attention scores (batch*heads, seq, seq) from interleaved [q, k, v] projections."""
    _sqk_shape(a, qkv.shape)
    x = _split(qkv, a.heads, 3, _SQK, "queries_keys_values")
    return (_qk(xp, x[:, :, :, 0], x[:, :, :, 1]),)


@_contrib_interleaved_matmul_selfatt_qk.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_interleaved_matmul_selfatt_qk(ograds[0], inputs[0], heads=a.heads)]


def _bw_shape():
    def shape(a, g, *xs):
        if any(x is None for x in xs):
            return None
        return [g, *xs], [tuple(x) for x in xs]
    return shape


def _bw_type(a, *dts):
    known = [t for t in dts if t is not None]
    return None if not known else ([known[0]] * len(dts), [known[0]] * (len(dts) - 1))


@register("_backward_interleaved_matmul_selfatt_qk", inputs=("ograd", "queries_keys_values"), attrs=_HEADS,
          infer_shape=_bw_shape(), infer_type=_bw_type, differentiable=False, fluent=False)
def _backward_interleaved_matmul_selfatt_qk(xp, a, g, qkv):
    """The gradient of selfatt_qk for its interleaved input (zero in the v slots)."""
    x = _split(qkv, a.heads, 3, _SQK, "queries_keys_values")
    dq, dk = _qk_grads(xp, x[:, :, :, 0], x[:, :, :, 1], g)
    out = xp.stack([dq, dk, xp.zeros_like(dq)], axis=3).astype(qkv.dtype, copy=False)
    return (out.reshape(qkv.shape),)


_SVA = "_contrib_interleaved_matmul_selfatt_valatt"


def _sva_shape(a, qkv, att):
    _check_rank(_SVA, queries_keys_values=qkv, attention=att)
    if qkv is None:
        return None
    if qkv[2] % 3:
        raise ShapeError(f"operator {_SVA}: queries_keys_values' last dimension {qkv[2]} is not a multiple of 3")
    want = (qkv[1] * a.heads, qkv[0], qkv[0])
    if att is not None and tuple(att) != want:
        raise ShapeError(f"operator {_SVA}: attention must have shape (batch*heads, seq, seq) = {want}, "
                         f"got {tuple(att)}")
    return [tuple(qkv), want], [(qkv[0], qkv[1], qkv[2] // 3)]


@register(_SVA, inputs=("queries_keys_values", "attention"), attrs=_HEADS, infer_shape=_sva_shape)
def _contrib_interleaved_matmul_selfatt_valatt(xp, a, qkv, att):
    """Attention-weighted values (seq, batch, heads*head_dim) from interleaved [q, k, v]."""
    _sva_shape(a, qkv.shape, att.shape)
    x = _split(qkv, a.heads, 3, _SVA, "queries_keys_values")
    return (_valatt(xp, x[:, :, :, 2], att.astype(qkv.dtype, copy=False)),)


@_contrib_interleaved_matmul_selfatt_valatt.def_gradient
def _(F, a, inputs, outputs, ograds):
    return list(F._backward_interleaved_matmul_selfatt_valatt(ograds[0], *inputs, heads=a.heads))


@register("_backward_interleaved_matmul_selfatt_valatt", inputs=("ograd", "queries_keys_values", "attention"),
          outputs=("qkv_grad", "attention_grad"), attrs=_HEADS, infer_shape=_bw_shape(),
          infer_type=_bw_type, differentiable=False, fluent=False)
def _backward_interleaved_matmul_selfatt_valatt(xp, a, g, qkv, att):
    """The gradients of selfatt_valatt: for the v slots of the interleaved input, and the attention."""
    x = _split(qkv, a.heads, 3, _SVA, "queries_keys_values")
    dv, datt = _valatt_grads(xp, x[:, :, :, 2], att, g)
    z = xp.zeros_like(dv)
    return (xp.stack([z, z, dv], axis=3).astype(qkv.dtype, copy=False).reshape(qkv.shape),
            datt.astype(att.dtype, copy=False))


# ---------------------------------------------------------------------------
# encoder-decoder attention

_EQK = "_contrib_interleaved_matmul_encdec_qk"


def _eqk_shape(a, q, kv):
    _check_rank(_EQK, queries=q, keys_values=kv)
    if q is None or kv is None:
        return None
    if q[2] * 2 != kv[2] or q[1] != kv[1]:
        raise ShapeError(f"operator {_EQK}: keys_values must have shape (k_seq, {q[1]}, {q[2] * 2}) for "
                         f"queries {tuple(q)}, got {tuple(kv)}")
    return [tuple(q), tuple(kv)], [(q[1] * a.heads, q[0], kv[0])]


@register(_EQK, inputs=("queries", "keys_values"), attrs=_HEADS, infer_shape=_eqk_shape)
def _contrib_interleaved_matmul_encdec_qk(xp, a, queries, kv):
    """Scores (batch*heads, q_seq, k_seq) of queries against the k slots of interleaved [k, v]."""
    _eqk_shape(a, queries.shape, kv.shape)
    q = _split(queries, a.heads, 1, _EQK, "queries")[:, :, :, 0]
    k = _split(kv.astype(queries.dtype, copy=False), a.heads, 2, _EQK, "keys_values")[:, :, :, 0]
    return (_qk(xp, q, k),)


@_contrib_interleaved_matmul_encdec_qk.def_gradient
def _(F, a, inputs, outputs, ograds):
    return list(F._backward_interleaved_matmul_encdec_qk(ograds[0], *inputs, heads=a.heads))


@register("_backward_interleaved_matmul_encdec_qk", inputs=("ograd", "queries", "keys_values"),
          outputs=("queries_grad", "keys_values_grad"), attrs=_HEADS, infer_shape=_bw_shape(),
          infer_type=_bw_type, differentiable=False, fluent=False)
def _backward_interleaved_matmul_encdec_qk(xp, a, g, queries, kv):
    """The gradients of encdec_qk: for the queries and the k slots of keys_values."""
    q = _split(queries, a.heads, 1, _EQK, "queries")[:, :, :, 0]
    k = _split(kv, a.heads, 2, _EQK, "keys_values")[:, :, :, 0]
    dq, dk = _qk_grads(xp, q, k, g)
    dkv = xp.stack([dk, xp.zeros_like(dk)], axis=3).reshape(kv.shape)
    return dq.reshape(queries.shape).astype(queries.dtype, copy=False), dkv.astype(kv.dtype, copy=False)


_EVA = "_contrib_interleaved_matmul_encdec_valatt"


def _eva_shape(a, kv, att):
    _check_rank(_EVA, keys_values=kv, attention=att)
    if kv is None or att is None:
        return None
    if kv[0] != att[2] or kv[1] * a.heads != att[0]:
        raise ShapeError(f"operator {_EVA}: attention must have shape ({kv[1] * a.heads}, q_seq, {kv[0]}) "
                         f"(batch*heads, q_seq, k_seq) for keys_values {tuple(kv)}, got {tuple(att)}")
    return [tuple(kv), tuple(att)], [(att[1], kv[1], kv[2] // 2)]


@register(_EVA, inputs=("keys_values", "attention"), attrs=_HEADS, infer_shape=_eva_shape)
def _contrib_interleaved_matmul_encdec_valatt(xp, a, kv, att):
    """Attention-weighted values (q_seq, batch, heads*head_dim) from the v slots of interleaved [k, v]."""
    _eva_shape(a, kv.shape, att.shape)
    v = _split(kv, a.heads, 2, _EVA, "keys_values")[:, :, :, 1]
    return (_valatt(xp, v, att.astype(kv.dtype, copy=False)),)


@_contrib_interleaved_matmul_encdec_valatt.def_gradient
def _(F, a, inputs, outputs, ograds):
    return list(F._backward_interleaved_matmul_encdec_valatt(ograds[0], *inputs, heads=a.heads))


@register("_backward_interleaved_matmul_encdec_valatt", inputs=("ograd", "keys_values", "attention"),
          outputs=("keys_values_grad", "attention_grad"), attrs=_HEADS, infer_shape=_bw_shape(),
          infer_type=_bw_type, differentiable=False, fluent=False)
def _backward_interleaved_matmul_encdec_valatt(xp, a, g, kv, att):
    """The gradients of encdec_valatt: for the v slots of keys_values, and the attention."""
    v = _split(kv, a.heads, 2, _EVA, "keys_values")[:, :, :, 1]
    dv, datt = _valatt_grads(xp, v, att, g)
    dkv = xp.stack([xp.zeros_like(dv), dv], axis=3).reshape(kv.shape)
    return dkv.astype(kv.dtype, copy=False), datt.astype(att.dtype, copy=False)
