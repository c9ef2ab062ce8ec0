"""Imperative autodiff: record operations on a tape, run the registry's
gradient rules backwards.

State (recording, training) lives in a ContextVar, so threads and asyncio
tasks each see their own. Gradient rules are ordinary registry operators
called through the `nd` namespace, so `create_graph=True` records the backward
pass too and gives higher-order gradients.
"""
from __future__ import annotations

import contextvars
import functools
import itertools
import operator
from heapq import heappop, heappush
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


# gradient-ready hooks: fn(leaf) called during backward() once a variable's gradient is final
# and written to its buffer (register_grad_ready_hook); empty = the backward pass is unchanged
_GRAD_READY: list = []


def register_grad_ready_hook(fn: Callable) -> Callable[[], None]:
    """Call ``fn(leaf)`` during every `backward()` as soon as a variable's gradient is final
    (no node still to run feeds it) and stored in ``leaf.grad``, before the rest of the pass
    runs: a distributed kvstore starts reducing those gradients while backward goes on. A
    hybridized block's backward is one tape node, so its gradients all become ready together.
    Returns a function that removes the hook."""
    _GRAD_READY.append(fn)
    return lambda: _GRAD_READY.remove(fn) if fn in _GRAD_READY else None


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

    __slots__ = ("grad", "grad_req", "fresh", "overwritten", "__weakref__")

    def __init__(self, grad, grad_req: str):
        if grad_req not in ("write", "add", "null"):
            raise AutogradError(f"grad_req must be 'write', 'add' or 'null', got {grad_req!r}")
        self.grad = grad
        self.grad_req = grad_req
        self.fresh = False  # set by backward(), cleared by Trainer.step (MXNet's _fresh_grad)
        # a backward overwrites the buffer (so one writer may fill it directly); fixed here,
        # like grad and grad_req (marking a variable again makes a new Leaf)
        self.overwritten = grad_req == "write" and grad is not None


def claim_grad_buffers(entries: Sequence[Any], positions: Sequence[int]) -> tuple[list, list] | None:
    """For a tape node's gradient function that can write results in place (a compiled
    backward): per input (`entries`: the node's recorded autograd entries, `TapeNode.parents`),
    the variable's gradient buffer when the function may write that input's gradient there,
    else None; only `positions` are asked. Returns (the buffers as NDArrays, their backend
    arrays), or None when no buffer was claimed.

    Only inside `backward()`, for a variable with grad_req 'write', and once per backward: a
    second writer would overwrite the first one's contribution (their sum then goes through
    the usual accumulation). A gradient function returns the buffer it wrote as that
    input's gradient; `backward()` then skips its copy."""
    claimed = _CLAIMED.get()
    if claimed is None:
        return None
    buffers = backend = None
    for i in positions:
        leaf = entries[i]
        if type(leaf) is Leaf and leaf.overwritten and leaf not in claimed:
            claimed.add(leaf)
            if buffers is None:
                buffers, backend = [None] * len(entries), [None] * len(entries)
            buffers[i] = leaf.grad
            backend[i] = leaf.grad._data
    return None if buffers is None else (buffers, backend)


_SEQUENCE = itertools.count()
_AUTOGRAD_ENTRY = operator.attrgetter("_ag")
# `x is None` as a C function: lists of gradients hold NDArrays, whose `==` is elementwise
_IS_NONE = functools.partial(operator.is_, None)


class TapeNode:
    """One recorded call: inputs, outputs and how to get input gradients.

    `grad_fn(inputs, outputs, ograds) -> list of input gradients (None = none)`; with
    `uses_outputs=False` it is passed None instead of the outputs (saves wrapping them).
    `loss` nodes ignore their head gradient (SoftmaxOutput and friends). `seq` orders
    nodes by recording time: a node's consumers always come later.
    """

    __slots__ = ("grad_fn", "inputs", "parents", "outputs", "name", "freed", "loss", "seq", "uses_outputs")

    def __init__(self, grad_fn: Callable, inputs: Sequence[Any], outputs: Sequence[Any],
                 name: str, loss: bool = False, uses_outputs: bool = True):
        self.grad_fn = grad_fn
        self.inputs = list(inputs)
        self.parents = list(map(_AUTOGRAD_ENTRY, inputs))
        self.outputs = list(outputs)   # raw backend arrays, hidden outputs included
        self.name = name
        self.freed = False
        self.loss = loss
        self.seq = next(_SEQUENCE)
        self.uses_outputs = uses_outputs


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


def _zeros_like(o):
    """The gradient of an output nothing used (a hidden one, say): a constant, like `_ones_like`."""
    return _late().NDArray._wrap(o._ctx.xp.zeros(o.shape, dtype=o.dtype), o._ctx)


class _Pass:
    """One backward pass: the gradients gathered so far for tape outputs and variables.

    Tape nodes run in decreasing recording order (a heap on `seq`): a node's consumers
    were recorded after it, so by the time it runs every consumer reachable from the
    heads has run and its output gradients are complete. Reaching a node registers it
    even without a gradient, so loss nodes (which ignore their head gradient) still run.
    """

    __slots__ = ("heap", "pending", "leaves", "F", "on_final")

    def __init__(self):
        self.heap: list = []
        self.pending: dict = {}      # node -> its output gradients (None: nothing yet)
        self.leaves: dict = {}       # Leaf -> summed gradient (an NDArray)
        self.F = _late().F
        self.on_final = None         # fn(leaf, grad) once a variable's gradient is final (hooks)

    def add(self, entry, g) -> None:
        """Add one gradient contribution for a tape output `(node, i)` or a variable."""
        if type(entry) is tuple:
            node, i = entry
            slots = self.pending.get(node)
            if slots is None:
                slots = self.pending[node] = [None] * len(node.outputs)
                heappush(self.heap, (-node.seq, node))
            if g is not None:
                old = slots[i]
                slots[i] = g if old is None else self.F.elemwise_add(old, g)
        elif entry is not None and g is not None and entry.grad_req != "null":
            old = self.leaves.get(entry)
            self.leaves[entry] = g if old is None else self.F.elemwise_add(old, g)

    def run(self, retain_graph: bool, create_graph: bool) -> None:
        """Apply each reached tape node's gradient function, consumers before producers."""
        heap, pending, add = self.heap, self.pending, self.add
        wrap = _late().NDArray._wrap
        last_use = self._last_uses() if self.on_final is not None else None
        while heap:
            if last_use is not None:
                self._finalize(last_use, -heap[0][0])
            node = heappop(heap)[1]
            ograds = pending.pop(node)
            if node.freed:
                raise AutogradError(
                    f"backward through {node.name} a second time: its graph was freed by an "
                    "earlier backward. Pass retain_graph=True to the first backward.")
            if not node.loss and all(map(_IS_NONE, ograds)):
                for parent in node.parents:   # nothing flows through; loss nodes above still run
                    add(parent, None)
                continue
            ctx = node.inputs[0]._ctx if node.inputs else None
            outs = None
            missing = any(map(_IS_NONE, ograds))
            if node.uses_outputs or create_graph or missing:
                outs = [wrap(o, ctx) for o in node.outputs]
                if create_graph:
                    for i, o in enumerate(outs):
                        o._ag = (node, i)
                if missing:
                    ograds = [_zeros_like(o) if g is None else g for g, o in zip(ograds, outs)]
                if not node.uses_outputs:
                    outs = None
            in_grads = node.grad_fn(node.inputs, outs, ograds)
            for parent, g in zip(node.parents, in_grads):
                add(parent, g)
            if not retain_graph:
                node.freed = True
        if last_use is not None:
            self._finalize(last_use, -1)

    def _last_uses(self) -> list:
        """``[(seq, id, leaf)]``, lowest first: per variable, the lowest `seq` among the nodes
        reachable from the heads that feed it (the last of them to run); only computed when
        gradient-ready hooks are registered."""
        last: dict = {}
        seen = set()
        stack = [n for _, n in self.heap]
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            for parent in node.parents:
                if type(parent) is tuple:
                    stack.append(parent[0])
                elif parent is not None and node.seq < last.get(parent, node.seq + 1):
                    last[parent] = node.seq
        return sorted((seq, id(leaf), leaf) for leaf, seq in last.items())  # popped from the end

    def _finalize(self, last_use: list, next_seq: int) -> None:
        """Hand every variable whose last feeding node has run (seq above `next_seq`) to on_final."""
        while last_use and last_use[-1][0] > next_seq:
            leaf = last_use.pop()[2]
            g = self.leaves.get(leaf)
            if g is not None:
                self.on_final(leaf, g)


def _run_backward(heads, head_grads, retain_graph: bool, create_graph: bool, train: bool,
                  on_final: Callable | None = None) -> dict:
    """Propagate head gradients; returns {Leaf: gradient NDArray}."""
    if head_grads is None:
        head_grads = [None] * len(heads)
    bwd = _Pass()
    bwd.on_final = on_final
    for h, hg in zip(heads, head_grads):
        if h._ag is None:
            raise AutogradError("cannot differentiate with respect to an array that was not "
                                "computed inside autograd.record() from a variable "
                                "(call attach_grad() on the inputs first)")
        bwd.add(h._ag, _ones_like(h) if hg is None else hg)
    token = _RETAIN.set(retain_graph)
    try:
        with _Scope(create_graph, train):
            bwd.run(retain_graph, create_graph)
    finally:
        _RETAIN.reset(token)
    return bwd.leaves


def backward(heads, head_grads=None, retain_graph: bool = False, train_mode: bool = True) -> None:  # noqa: A002
    """Compute gradients of heads and store them into the variables' `.grad`."""
    heads, head_grads = _as_list(heads), _as_list(head_grads)
    token = _CLAIMED.set(set())
    written: set | None = set() if _GRAD_READY else None
    try:
        leaves = _run_backward(heads, head_grads, retain_graph, False, train_mode,
                               None if written is None else _ready_writer(written))
    finally:
        _CLAIMED.reset(token)
    if written:
        leaves = {leaf: g for leaf, g in leaves.items() if leaf not in written}
    for leaf, g in leaves.items():
        dst = leaf.grad
        if dst is None:
            continue
        leaf.fresh = True
        if g is dst:                       # written there directly (claim_grad_buffers)
            continue
        if leaf.grad_req == "add":
            dst._data += g._data
        else:
            dst._data[...] = g._data


def _ready_writer(written: set) -> Callable:
    """The `_Pass.on_final` of a backward() with gradient-ready hooks: store (as backward()
    does at its end for the others), then notify."""
    def on_final(leaf, g) -> None:
        dst = leaf.grad
        if dst is not None:
            leaf.fresh = True
            if g is not dst:
                if leaf.grad_req == "add":
                    dst._data += g._data
                else:
                    dst._data[...] = g._data
        written.add(leaf)
        if leaf.grad is not None:
            for fn in list(_GRAD_READY):
                fn(leaf)
    return on_final


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
    F = _late().F  # noqa: N806
    out = []
    for v in variables:
        hit = leaves.get(v._ag)
        out.append(F.zeros_like(v) if hit is None else hit)
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
