"""fold_batchnorm: BatchNorm folded into the preceding FullyConnected / Convolution.

Inference only. A normalisation node whose operator declares
`inference_scale_shift` (BatchNorm: out = data * scale + shift per channel,
from gamma, beta and the moving statistics) folds into its data producer when

* the producer's operator declares `affine_channel` (FullyConnected,
  Convolution: output channel c is linear in weight[c] plus bias[c]) with the
  same channel axis as the normalisation;
* the producer's output feeds only this node (and is no head), and the
  normalisation's other outputs are unused;
* every parameter involved (weight, bias, gamma, beta, moving statistics) is a
  frozen variable with a known value (`ctx.value_of`);
* the folded weight pays for its memory (`_worth_folding`): the plan keeps it beside the
  parameter for as long as it lives, while folding saves one pass over the producer's
  output per call. A weight of at least `KEEP_UNFOLDED_BYTES` that is larger than the
  output it makes (ResNet-18's 512-channel layers at batch 8: 9.4 MB of weight for 0.8 MB
  of output) stays unfolded -- unless its convolution runs Winograd F(4x4, 3x3), whose
  transformed weight the plan keeps anyway and the folded weight only passes through
  (fuse_conv_epilogue then drops it).

The producer is rebuilt with weight' = weight * scale (along its channel axis)
and bias' = bias * scale + shift (a bias is created when it had none); the new
arrays are new variables `<weight>_bnfold` / `<producer>_bias_bnfold` in
`ctx.new_params`, so the original parameters stay untouched.
"""
from __future__ import annotations

import numpy as np

from hybridgraph.nd.errors import MXNetError
from hybridgraph.nd.ops import winograd4

from ..graph import Entry, Node
from . import PassContext, register_pass
from .fold_constants import _const_variable
from .rewrite import consumers, head_keys, make_node, rebuild, visible_given


def _values(node: Node, ctx: PassContext, positions) -> list | None:
    """Fixed values of the node's inputs at `positions` (all frozen variables), or None."""
    out = []
    for pos in positions:
        src, _ = node.inputs[pos]
        v = None if src.op is not None else ctx.value_of(src.name)
        if v is None:
            return None
        out.append(v)
    return out


#: weights below this many bytes always fold (the copy is cheap; see the module docstring)
KEEP_UNFOLDED_BYTES = 1 << 20


def _worth_folding(prod: Node, weight: np.ndarray, out_shape, in_shape) -> bool:
    """Whether the folded copy of `weight` is worth keeping for the producer `prod` whose
    output has `out_shape` (data input `in_shape`; None when unknown: fold)."""
    if weight.nbytes < KEEP_UNFOLDED_BYTES or out_shape is None:
        return True
    if weight.nbytes <= int(np.prod(out_shape)) * weight.itemsize:
        return True
    return (in_shape is not None and prod.op.name == "Convolution"
            and winograd4.use_winograd4(tuple(in_shape), weight.shape, weight.dtype, prod.attrs))


def _same_axis(a: int, b: int, ndim: int | None) -> bool:
    if a == b:
        return True
    return ndim is not None and a % ndim == b % ndim


class _Folder:
    """Finds foldable (producer, normalisation) pairs on the old graph and rewrites them."""

    def __init__(self, heads: list[Entry], ctx: PassContext):
        self.ctx = ctx
        self.uses = consumers(heads)
        self.heads = head_keys(heads)
        self.shapes = ctx.entry_shapes(heads)
        self.taken = ctx.taken_names(heads)

    def plan(self, bn: Node):
        """(producer, scale, shift, weight, bias or None, weight channel axis) when `bn` folds."""
        op = bn.op
        if op.inference_scale_shift is None or not bn.inputs:
            return None
        prod, idx = bn.inputs[0]
        pop = prod.op
        if pop is None or pop.affine_channel is None or prod.num_outputs() != 1 or idx != 0:
            return None
        if self.uses[(id(prod), 0)] != 1 or (id(prod), 0) in self.heads:
            return None
        if any(self.uses[(id(bn), i)] for i in range(1, bn.num_outputs())):
            return None
        stats = _values(bn, self.ctx, range(1, len(bn.inputs)))
        names = prod.input_names()
        if stats is None or "weight" not in names:
            return None
        params = _values(prod, self.ctx, [names.index(n) for n in ("weight", "bias") if n in names])
        if params is None:
            return None
        shape = self.shapes.get((id(prod), 0))
        if not _worth_folding(prod, params[0], shape, self.shapes.get((id(prod.inputs[0][0]), prod.inputs[0][1]))):
            return None
        axis, scale, shift = op.inference_scale_shift(bn.attrs, *stats)
        out_axis, w_axis = pop.affine_channel(prod.attrs)
        if not _same_axis(axis, out_axis, None if shape is None else len(shape)):
            return None
        return prod, scale, shift, params[0], params[1] if len(params) > 1 else None, w_axis

    def rewrite(self, ins_of_prod: tuple, plan) -> Node:
        """The producer with scaled weights and a shifted (maybe new) bias as new variables."""
        prod, scale, shift, weight, bias, w_axis = plan
        bshape = [1] * weight.ndim
        bshape[w_axis] = -1
        new_w = (weight.astype(np.float64) * scale.reshape(bshape)).astype(weight.dtype)
        b = np.zeros(scale.shape) if bias is None else bias.astype(np.float64).reshape(-1)
        new_b = (b * scale + shift).astype(weight.dtype if bias is None else bias.dtype)
        names = prod.input_names()
        w_name = self.ctx.fresh_name(prod.inputs[names.index("weight")][0].name + "_bnfold", self.taken)
        b_name = self.ctx.fresh_name(prod.name + "_bias_bnfold", self.taken)
        self.ctx.new_params[w_name] = new_w
        self.ctx.new_params[b_name] = new_b
        given = dict(visible_given(prod.attrs), no_bias=False)
        data = [e for n, e in zip(names, ins_of_prod) if n not in ("weight", "bias")]
        params = {"weight": (_const_variable(w_name, new_w), 0), "bias": (_const_variable(b_name, new_b), 0)}
        rest = iter(data)
        inputs = [params[n] if n in params else next(rest)
                  for n in prod.op.input_names(prod.op.parse_attrs(given))]
        return make_node(prod.op, prod.name, given, inputs)


@register_pass("fold_batchnorm", provides=("batchnorm_folded",))
def fold_batchnorm(heads: list[Entry], ctx: PassContext) -> list[Entry]:
    """Fold inference BatchNorm into the FullyConnected / Convolution before it."""
    if ctx.for_training:
        raise MXNetError("fold_batchnorm is an inference rewrite (BatchNorm uses batch statistics in "
                         "training); run it with for_training=False")
    folder = _Folder(heads, ctx)
    new_ins: dict[int, tuple] = {}

    def visit(node: Node, ins: tuple):
        new_ins[id(node)] = ins
        plan = None if node.op is None else folder.plan(node)
        if plan is None:
            return None
        new = folder.rewrite(new_ins[id(plan[0])], plan)
        return ((new, 0),) + tuple((node, i) for i in range(1, node.num_outputs()))

    return rebuild(heads, visit)
