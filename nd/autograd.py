"""Imperative autodiff: record operations on a tape, run the registry's
gradient rules backwards.

State (recording, training) lives in a ContextVar, so threads and asyncio
tasks each see their own. Gradient rules are ordinary registry operators
called through the `nd` namespace, so `create_graph=True` records the backward
pass too and gives higher-order gradients.
"""
from __future__ import annotations

import contextvars
from typing import Any
from collections.abc import Callable, Sequence

from .errors import AutogradError

# whether the backward now running keeps its graph (compiled graphs keep their saved state)
_RETAIN: contextvars.ContextVar[bool] = contextvars.ContextVar("hybridgraph_retain_graph", default=False)

# the leaves whose gradient buffer the running backward() handed to a writer (None: no
# direct writes, e.g. inside autograd.grad, which must leave `.grad` untouched)
_CLAIMED: contextvars.ContextVar[set | None] = contextvars.ContextVar("hybridgraph_grad_buffers", default=None)

# (is_recording, is_training)
_STATE: contextvars.ContextVar[tuple[bool, bool]] = contextvars.ContextVar(
    "hybridgraph_autograd", default=(False, False))


class _Scope:
    """Context manager that sets recording/training and restores them on exit."""

    __slots__ = ("_rec", "_train", "_token")

    def __init__(self, is_record: bool | None, train_mode: bool | None):
        self._rec = is_record
        self._train = train_mode
        self._token = None

    def __enter__(self):
        rec, train = _STATE.get()
        self._token = _STATE.set((rec if self._rec is None else self._rec,
                                  train if self._train is None else self._train))
        return self

    def __exit__(self, *exc):
        _STATE.reset(self._token)


def record(train_mode: bool = True) -> _Scope:
    """Record operations for gradient computation (`with autograd.record():`)."""
    return _Scope(True, train_mode)


def pause(train_mode: bool = False) -> _Scope:
    """Stop recording inside a recorded scope."""
    return _Scope(False, train_mode)


def train_mode() -> _Scope:
    return _Scope(None, True)


def predict_mode() -> _Scope:
    return _Scope(None, False)


def is_recording() -> bool:
    return _STATE.get()[0]


def is_training() -> bool:
    return _STATE.get()[1]


def set_recording(is_recording: bool) -> bool:  # noqa: A002 - MXNet's name
    """Set recording state; returns the previous one (MXNet API)."""
    prev, train = _STATE.get()
    _STATE.set((bool(is_recording), train))
    return prev


def set_training(train_mode: bool) -> bool:  # noqa: A002
    rec, prev = _STATE.get()
    _STATE.set((rec, bool(train_mode)))
    return prev


class Leaf:
    """Marks an NDArray as a variable: where its gradient goes and how."""

    __slots__ = ("grad", "grad_req", "fresh", "__weakref__")

    def __init__(self, grad, grad_req: str):
        if grad_req not in ("write", "add", "null"):
            raise AutogradError(f"grad_req must be 'write', 'add' or 'null', got {grad_req!r}")
        self.grad = grad
        self.grad_req = grad_req
        self.fresh = False  # set by backward(), cleared by Trainer.step (MXNet's _fresh_grad)


def claim_grad_buffers(arrays: Sequence[Any], positions: Sequence[int]) -> list:
    """Per array, the backend array of its gradient buffer when a gradient function may write
    its result there directly (a compiled backward), else None; only `positions` are asked.

    Only inside `backward()`, for a variable with grad_req 'write', and once per backward: a
    second writer would overwrite the first one's contribution (their sum then goes through
    the usual accumulation). A contribution written in place is returned as usual, wrapping
    the buffer itself; `backward()` then skips its copy."""
    out: list = [None] * len(arrays)
    claimed = _CLAIMED.get()
    if claimed is None:
        return out
    for i in positions:
        leaf = arrays[i]._ag
        if type(leaf) is Leaf and leaf.grad_req == "write" and leaf.grad is not None and id(leaf) not in claimed:
            claimed.add(id(leaf))
            out[i] = leaf.grad._data
    return out


class TapeNode:
    """One recorded call: inputs, outputs and how to get input gradients.

    `grad_fn(inputs, outputs, ograds) -> list of input gradients (None = none)`.
    `loss` nodes ignore their head gradient (SoftmaxOutput and friends).
    """

    __slots__ = ("grad_fn", "inputs", "parents", "outputs", "name", "freed", "loss")

    def __init__(self, grad_fn: Callable, inputs: Sequence[Any], outputs: Sequence[Any],
                 name: str, loss: bool = False):
        self.grad_fn = grad_fn
        self.inputs = list(inputs)
        self.parents = [x._ag for x in inputs]
        self.outputs = list(outputs)   # raw backend arrays, hidden outputs included
        self.name = name
        self.freed = False
        self.loss = loss


def retaining() -> bool:
    """True inside a backward pass that was asked to keep its graph (retain_graph=True)."""
    return _RETAIN.get()


def needs_record(inputs: Sequence[Any]) -> bool:
    """True when recording and some input is connected to a variable."""
    if not _STATE.get()[0]:
        return False
    for x in inputs:
        if x._ag is not None:
            return True
    return False


def mark_variables(variables, gradients, grad_reqs="write") -> None:
    """Mark NDArrays as variables whose gradients go to `gradients`."""
    if not isinstance(variables, (list, tuple)):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    for v, g, r in zip(variables, gradients, grad_reqs):
        v._ag = Leaf(g, r)


def _topo_order(heads: Sequence[Any]) -> list[TapeNode]:
    """Tape nodes reachable from the heads, producers before consumers."""
    order, seen = [], set()
    stack = [(h._ag, False) for h in heads if isinstance(h._ag, tuple)]
    while stack:
        entry, done = stack.pop()
        node = entry[0] if isinstance(entry, tuple) else entry
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for p in node.parents:
            if isinstance(p, tuple) and id(p[0]) not in seen:
                stack.append((p, False))
    return order


class _Late:
    """Modules that import this one (NDArray, the operator namespace), bound on first use:
    a function-level import runs Python code on every call."""

    F = None
    NDArray = None


def _late() -> type[_Late]:
    if _Late.F is None:
        from . import ops_namespace  # noqa: PLC0415 - cycle
        from .ndarray import NDArray  # noqa: PLC0415 - cycle
        _Late.F, _Late.NDArray = ops_namespace, NDArray
    return _Late


def _ones_like(h):
    """The default head gradient: a constant, so a plain array (no operator call) even when
    the backward is recorded."""
    return _late().NDArray._wrap(h._ctx.xp.ones(h.shape, dtype=h.dtype), h._ctx)


def _run_backward(heads, head_grads, retain_graph: bool, create_graph: bool, train: bool):
    """Propagate head gradients; returns {id(Leaf): (Leaf, grad NDArray)}."""
    F = _late().F  # noqa: N806
    if head_grads is None:
        head_grads = [None] * len(heads)
    grads: dict[tuple[int, int], Any] = {}
    leaves: dict[int, tuple[Leaf, Any]] = {}

    def accumulate(entry, g):
        if g is None or entry is None:
            return
        if isinstance(entry, Leaf):
            if entry.grad_req == "null":
                return
            old = leaves.get(id(entry))
            leaves[id(entry)] = (entry, g if old is None else F.elemwise_add(old[1], g))
            return
        key = (id(entry[0]), entry[1])
        old = grads.get(key)
        grads[key] = g if old is None else F.elemwise_add(old, g)

    for h, hg in zip(heads, head_grads):
        if h._ag is None:
            raise AutogradError("cannot differentiate with respect to an array that was not "
                                "computed inside autograd.record() from a variable "
                                "(call attach_grad() on the inputs first)")
        accumulate(h._ag, _ones_like(h) if hg is None else hg)

    order = _topo_order(heads)
    scope = _Scope(create_graph, train)
    token = _RETAIN.set(retain_graph)
    try:
        _propagate(order, grads, accumulate, retain_graph, create_graph, scope)
    finally:
        _RETAIN.reset(token)
    return leaves


def _propagate(order, grads, accumulate, retain_graph: bool, create_graph: bool, scope) -> None:
    """Apply each tape node's gradient function, consumers before producers."""
    late = _late()
    F, wrap = late.F, late.NDArray._wrap  # noqa: N806
    with scope:
        for node in reversed(order):
            if node.freed:
                raise AutogradError(
                    f"backward through {node.name} a second time: its graph was freed by an "
                    "earlier backward. Pass retain_graph=True to the first backward.")
            ograds = [grads.pop((id(node), i), None) for i in range(len(node.outputs))]
            if all(g is None for g in ograds) and not node.loss:
                continue
            ctx = node.inputs[0].context if node.inputs else None
            outs = [wrap(o, ctx) for o in node.outputs]
            if create_graph:
                for i, o in enumerate(outs):
                    o._ag = (node, i)
            ograds = [F.zeros_like(o) if g is None else g for g, o in zip(ograds, outs)]
            in_grads = node.grad_fn(node.inputs, outs, ograds)
            for parent, g in zip(node.parents, in_grads):
                accumulate(parent, g)
            if not retain_graph:
                node.freed = True


def backward(heads, head_grads=None, retain_graph: bool = False, train_mode: bool = True) -> None:  # noqa: A002
    """Compute gradients of heads and store them into the variables' `.grad`."""
    heads, head_grads = _as_list(heads), _as_list(head_grads)
    token = _CLAIMED.set(set())
    try:
        leaves = _run_backward(heads, head_grads, retain_graph, False, train_mode)
    finally:
        _CLAIMED.reset(token)
    for leaf, g in leaves.values():
        if leaf.grad is None:
            continue
        leaf.fresh = True
        if leaf.grad_req == "add":
            leaf.grad._data += g._data
        elif g._data is not leaf.grad._data:   # not already written there (claim_grad_buffers)
            leaf.grad._data[...] = g._data


def grad(heads, variables, head_grads=None, retain_graph: bool | None = None,
         create_graph: bool = False, train_mode: bool = True):  # noqa: A002
    """Gradients of heads with respect to variables, returned (not stored)."""
    single = not isinstance(variables, (list, tuple))
    variables = _as_list(variables)
    for v in variables:
        if not isinstance(v._ag, Leaf):
            raise AutogradError("autograd.grad: every variable must be marked with "
                                "attach_grad() (or mark_variables) before recording")
    if retain_graph is None:
        retain_graph = create_graph
    leaves = _run_backward(_as_list(heads), _as_list(head_grads), retain_graph, create_graph,
                           train_mode)
    from . import ops_namespace as F  # noqa: PLC0415, N812
    out = []
    for v in variables:
        hit = leaves.get(id(v._ag))
        out.append(F.zeros_like(v) if hit is None else hit[1])
    return out[0] if single else out


def _as_list(x):
    if x is None:
        return None
    return list(x) if isinstance(x, (list, tuple)) else [x]


def get_symbol(x):
    """The recorded computation of x as a Symbol (MXNet API)."""
    raise AutogradError("autograd.get_symbol is not supported; hybridize a HybridBlock "
                        "and use export() to get the graph")


class Function:
    """A user-defined differentiable function (MXNet's autograd.Function).

    Subclass it, implement `forward(*inputs)` and `backward(*output_grads)`
    with NDArray code, and call an instance like a function.
    """

    def __init__(self):
        self._saved = ()

    def save_for_backward(self, *args) -> None:
        self._saved = args

    @property
    def saved_tensors(self):
        return self._saved

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, *output_grads):
        raise NotImplementedError

    def __call__(self, *inputs):
        with pause(is_training()):
            outputs = self.forward(*inputs)
        single = not isinstance(outputs, (list, tuple))
        outs = [outputs] if single else list(outputs)
        if needs_record(inputs):
            def grad_fn(_inputs, _outs, ograds):
                res = self.backward(*ograds)
                return [res] if not isinstance(res, (list, tuple)) else list(res)
            node = TapeNode(grad_fn, inputs, [o._data for o in outs], type(self).__name__)
            for i, o in enumerate(outs):
                o._ag = (node, i)
        return outs[0] if single else outs
