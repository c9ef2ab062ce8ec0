"""fuse_conv_epilogue: Convolution -> [residual add] -> ReLU becomes one `_fused_convolution`.

Inference only, after fold_batchnorm (which turns Convolution -> BatchNorm into one
Convolution with a bias), before fuse_elemwise. Patterns, each intermediate entry read by
its one consumer only and no head:

* Convolution -> relu                       (`Activation(act_type='relu')` or `relu`)
* Convolution -> add(., residual) -> relu   (`elemwise_add` / `_Plus` / `broadcast_add` of
  equal known shapes, the convolution on either side: ResNet's ``relu(x + residual)``)
* Convolution -> add(., residual)           (no activation: pre-activation ResNets)

The fused node keeps the last node's name and computes the same operations in the same
order (nd/ops/conv_fused.py), so results are bitwise those of the unfused plan; it
spares the output two full passes over memory. Switch: HYBRIDGRAPH_CONV_EPILOGUE=0, or
``disable=("fuse_conv_epilogue",)`` where passes can be disabled.

Winograd: a 3x3 stride-1 Convolution (fused or alone) with a frozen float32 weight that
nd/ops/winograd4.use_winograd4 accepts for its input shape gets the weight transformed
once here (a new constant `<weight>_winograd4`) and runs F(4x4, 3x3) -- no longer bitwise
equal, within winograd4.ERROR_BOUND. Switch: HYBRIDGRAPH_WINOGRAD4=0. The node's weight
input then only gives the weight's shape (the F(4x4) kernel reads the transform): it becomes
a constant `<weight>_shape` that holds no memory (`weight_placeholder`), so a BatchNorm-folded
weight (fold_batchnorm) is not kept by the plan beside its transform.
"""
from __future__ import annotations

import os

import numpy as np

from hybridgraph.nd.errors import MXNetError
from hybridgraph.nd.ops import winograd4
from hybridgraph.nd.registry import get_op

from ..graph import Entry, Node
from . import PassContext, register_pass
from .fold_constants import _const_variable
from .rewrite import consumers, head_keys, make_node, rebuild, visible_given


def enabled() -> bool:
    """Whether the pass rewrites anything (HYBRIDGRAPH_CONV_EPILOGUE=0 turns it off)."""
    return os.environ.get("HYBRIDGRAPH_CONV_EPILOGUE", "1") not in ("0", "")


def _is_relu(node: Node) -> bool:
    op = node.op
    if op is None or len(node.inputs) != 1:
        return False
    if op is get_op("relu"):
        return True
    return op is get_op("Activation") and node.attrs.act_type == "relu"


def _is_add(node: Node, shapes: dict) -> bool:
    op = node.op
    if op is None or len(node.inputs) != 2:
        return False
    if op is get_op("elemwise_add"):
        return True
    if op is get_op("broadcast_add"):
        a, b = (shapes.get((id(s), i)) for s, i in node.inputs)
        return a is not None and a == b
    return False


def weight_placeholder(w: np.ndarray) -> np.ndarray:
    """A read-only array of `w`'s shape and dtype that holds no memory (every element is one
    zero, broadcast): the weight input of a convolution that runs from its Winograd transform."""
    return np.broadcast_to(np.zeros((), dtype=w.dtype), w.shape)


class _Fuser:
    def __init__(self, heads: list[Entry], ctx: PassContext):
        self.uses = consumers(heads)
        self.heads = head_keys(heads)
        self.shapes = ctx.entry_shapes(heads)
        self.dtypes = ctx.entry_dtypes(heads)
        self.conv = get_op("Convolution")
        self.ctx = ctx
        self.taken = ctx.taken_names(heads)
        self.transformed: dict[str, tuple] = {}     # weight name -> (its Winograd constant, placeholder)

    def winograd(self, conv: Node) -> tuple | None:
        """(the constant holding the conv's weight transformed for F(4x4, 3x3), the weight's
        placeholder constant), when it runs so."""
        wsrc = conv.inputs[1][0]
        dshape = self.shapes.get((id(conv.inputs[0][0]), conv.inputs[0][1]))
        if wsrc.op is not None or dshape is None:
            return None
        if wsrc.name in self.transformed:
            return self.transformed[wsrc.name]
        w = self.ctx.value_of(wsrc.name)
        if w is None or not winograd4.use_winograd4(tuple(dshape), w.shape, w.dtype, conv.attrs):
            return None
        name = self.ctx.fresh_name(wsrc.name + "_winograd4", self.taken)
        u = winograd4.weight4(w)
        self.ctx.new_params[name] = u
        shape_name = self.ctx.fresh_name(wsrc.name + "_shape", self.taken)
        self.ctx.new_params[shape_name] = hollow = weight_placeholder(w)
        entries = self.transformed[wsrc.name] = ((_const_variable(name, u), 0),
                                                 (_const_variable(shape_name, hollow), 0))
        return entries

    def private(self, node: Node) -> bool:
        """Whether the node's one output is read by one consumer and is no head."""
        key = (id(node), 0)
        return node.num_outputs() == 1 and self.uses[key] == 1 and key not in self.heads

    def conv_input(self, node: Node) -> Node | None:
        """`node`'s input when it is a Convolution only `node` reads."""
        src, idx = node.inputs[0] if len(node.inputs) == 1 else (None, 0)
        if src is not None and src.op is self.conv and idx == 0 and self.private(src):
            return src
        return None

    def match(self, node: Node):
        """(conv, add or None, residual entry position in add or None, relu or None) ending at `node`."""
        if _is_relu(node):
            src, idx = node.inputs[0]
            if src.op is self.conv and idx == 0 and self.private(src):
                return src, None, None, node
            if idx == 0 and src.op is not None and _is_add(src, self.shapes) and self.private(src):
                found = self._conv_side(src)
                if found is not None:
                    return found[0], src, found[1], node
            return None
        if _is_add(node, self.shapes):
            found = self._conv_side(node)
            if found is not None:
                return found[0], node, found[1], None
        return None

    def _conv_side(self, add: Node):
        """(conv, position of the residual) for an add with a private Convolution input whose
        output has the add's dtype."""
        for pos in (0, 1):
            src, idx = add.inputs[pos]
            other = add.inputs[1 - pos]
            if (src.op is self.conv and idx == 0 and self.private(src) and other[0] is not src
                    and self.dtypes.get((id(src), 0)) == self.dtypes.get((id(other[0]), other[1]))):
                return src, 1 - pos
        return None


@register_pass("fuse_conv_epilogue", provides=("conv_epilogue_fused",))
def fuse_conv_epilogue(heads: list[Entry], ctx: PassContext) -> list[Entry]:
    """Fuse residual adds and ReLUs into the Convolution before them (inference plans)."""
    if ctx.for_training:
        raise MXNetError("fuse_conv_epilogue is an inference rewrite; run it with for_training=False")
    epilogues = enabled()
    if not epilogues and not winograd4.enabled():
        return heads
    fuser = _Fuser(heads, ctx)
    new_ins: dict[int, tuple] = {}
    fused_op = get_op("_fused_convolution")

    def visit(node: Node, ins: tuple):
        new_ins[id(node)] = ins
        m = None if node.op is None or not epilogues else fuser.match(node)
        if m is None:
            if node.op is not fuser.conv:
                return None
            m = (node, None, None, None)
        conv, add, res_pos, relu = m
        wino = fuser.winograd(conv)
        if node is conv and wino is None:
            return None
        given = visible_given(conv.attrs)
        inputs = list(new_ins[id(conv)])
        if add is not None:
            given["with_residual"] = True
            inputs.append(new_ins[id(add)][res_pos])
        if relu is not None:
            given["act_type"] = "relu"
        if wino is not None:
            given["winograd"] = True
            inputs[1] = wino[1]
            inputs.append(wino[0])
        return ((make_node(fused_op, node.name, given, inputs), 0),)

    return rebuild(heads, visit)
