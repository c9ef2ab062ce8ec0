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
import weakref
from collections.abc import Callable, Sequence
from heapq import heappop, heappush
from typing import Any

import numpy as np

from .errors import AutogradError, ShapeError

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

    __slots__ = ("grad", "grad_req", "fresh", "overwritten", "written", "__weakref__")

    def __init__(self, grad, grad_req: str):
        if grad_req not in ("write", "add", "null"):
            raise AutogradError(f"grad_req must be 'write', 'add' or 'null', got {grad_req!r}")
        self.grad = grad
        self.grad_req = grad_req
        self.fresh = False  # set by backward(), cleared by Trainer.step (MXNet's _fresh_grad)
        # a backward overwrites the buffer (so one writer may fill it directly); fixed here,
        # like grad and grad_req (marking a variable again makes a new Leaf)
        self.overwritten = grad_req == "write" and grad is not None
        self.written = 0  # recording time (TapeNode.seq scale) of the last in-place write, 0: none


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
# `x is None` as a C function: lists of gradients hold NDArrays, whose `==` is elementwise
_IS_NONE = functools.partial(operator.is_, None)


class TapeNode:
    """One recorded call: inputs, outputs and how to get input gradients.

    `grad_fn(inputs, outputs, ograds) -> list of input gradients (None = none)`; with
    `uses_outputs=False` it is passed None instead of the outputs (saves wrapping them).
    `loss` nodes ignore their head gradient (SoftmaxOutput and friends). `seq` orders
    nodes by recording time: a node's consumers always come later. `versions` holds each
    input's write count when recorded (`version_cell`); backward refuses to run the node
    once one changed.
    """

    __slots__ = ("grad_fn", "inputs", "parents", "outputs", "name", "freed", "loss", "seq", "uses_outputs",
                 "written", "cells", "versions", "__weakref__")

    def __init__(self, grad_fn: Callable, inputs: Sequence[Any], outputs: Sequence[Any],
                 name: str, loss: bool = False, uses_outputs: bool = True):
        self.grad_fn = grad_fn
        self.inputs = list(inputs)
        self.parents = list(map(live_entry, inputs))
        self.outputs = list(outputs)   # raw backend arrays, hidden outputs included
        self.name = name
        self.freed = False
        self.loss = loss
        self.seq = next(_SEQUENCE)
        self.uses_outputs = uses_outputs
        self.written = 0  # when an output was last written in place (outside recording), 0: never
        self.cells = cells = list(map(version_cell, self.inputs))
        self.versions = list(map(_VERSION, cells))
        me = weakref.ref(self)
        for c in cells:
            c[1] = me


_VERSION = operator.itemgetter(0)


def version_cell(x: Any) -> list:
    """`x`'s version cell, made on first need and shared with the arrays that view its
    memory (`share_version`): `[in-place writes so far, weak reference to the last tape node
    that read x]`. Only arrays a tape node read, and their views, have one (`x._ver` is
    None until then), so eager code that never records pays nothing. As PyTorch's version
    counter: `check_inplace` counts writes, backward compares with what the node saw."""
    cell = x._ver
    if cell is None:
        cell = x._ver = [0, None]
    return cell


def share_version(view: Any, base: Any) -> Any:
    """Make NDArray `view`, which shares `base`'s memory (a basic slice, reshape, detach),
    count its writes with `base` (and the other way round); returns `view`."""
    view._ver = version_cell(base)
    return view


def live_entry(x: Any) -> Any:
    """`x`'s autograd entry, or None once the graph that computed it was freed by a
    backward(): like MXNet, such an array is then a constant (an RNN's hidden state carried
    into the next batch). The stale entry is dropped on the way."""
    entry = x._ag
    if type(entry) is tuple and entry[0].freed:
        x._ag = entry = None
    return entry


def _describe(x: Any) -> str:
    entry = x._ag
    what = f"the output of {entry[0].name}" if type(entry) is tuple else "a variable (attach_grad)"
    return f"an NDArray of shape {x.shape} and dtype {x._data.dtype} ({what})"


def check_inplace(x: Any, how: str) -> None:
    """Call before writing into NDArray `x` in place (`how`: `+=`, `x[key] = v`, `out=`).

    While recording, a write into an array the tape holds raises, as in MXNet: the
    gradient would use the new values; so does a write into a plain array a live tape node
    read. Outside recording (MXNet silently computes a wrong gradient then) the write is
    stamped on the array's entry and counted on its version cell, and a later backward
    that needs the old values raises instead (`_check_saved`)."""
    entry = live_entry(x)
    if entry is None:
        cell = x._ver
        if cell is not None:
            if cell[1] is not None and _STATE.get()[0]:
                node = cell[1]()
                if node is not None and not node.freed:   # MXNet 1.9.1 raises here too
                    raise AutogradError(
                        f"in-place write ({how}) into an NDArray of shape {x.shape} and dtype "
                        f"{x._data.dtype} that {node.name} read while autograd is recording: the array "
                        "is in the computational graph (as an input) and the gradient would use the "
                        "new values. Write into a copy instead (c2 = c.copy(); c2[:] = v), or write "
                        "after backward() or outside autograd.record().")
            cell[0] += 1
        return
    if _STATE.get()[0]:
        raise AutogradError(
            f"in-place write ({how}) into {_describe(x)} while autograd is recording: the array "
            "is already in the computational graph and its gradient would use the new values. "
            "Write into a new array instead (y = y + 1, nd.where(...), y2 = y.copy(); y2[:] = v), "
            "or write after backward() or outside autograd.record().")
    if x._ver is not None:
        x._ver[0] += 1
    (entry[0] if type(entry) is tuple else entry).written = next(_SEQUENCE)


def _check_saved(node: "TapeNode") -> None:
    """Refuse to run a gradient whose saved arrays were written in place after recording."""
    if node.written and node.uses_outputs:
        stale = f"an output of {node.name}"
    elif list(map(_VERSION, node.cells)) != node.versions:
        i = next(i for i, (c, v) in enumerate(zip(node.cells, node.versions)) if c[0] != v)
        x, p = node.inputs[i], node.parents[i]
        what = (f"the output of {p[0].name}" if type(p) is tuple else "a variable" if p is not None
                else "an array outside the graph")
        stale = f"an input of {node.name} (input {i}: {what}, shape {x.shape}, dtype {x._data.dtype})"
    else:
        for p in node.parents:
            src = p[0] if type(p) is tuple else p
            if src is not None and src.written > node.seq:
                stale = (f"an input of {node.name} (the output of {src.name})" if type(p) is tuple
                         else f"an input of {node.name} (a variable)")
                break
        else:
            return
    raise AutogradError(
        f"backward: {stale} was written in place after it was recorded, so the gradient of "
        f"{node.name} would use the new values (MXNet 1.9.1 silently does). Write into a new array "
        "instead (c = c + 1, or c2 = c.copy() and write c2), or write after backward().")


def retaining() -> bool:
    """True inside a backward pass that was asked to keep its graph (retain_graph=True)."""
    return _RETAIN.get()


def needs_record(inputs: Sequence[Any]) -> bool:
    """True when recording and some input is connected to a variable."""
    if not _STATE.get()[0]:
        return False
    for x in inputs:
        if live_entry(x) is not None:
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

    __slots__ = ("heap", "pending", "leaves", "F", "cut", "on_final", "nulls")

    def __init__(self):
        self.heap: list = []
        self.pending: dict = {}      # node -> its output gradients (None: nothing yet)
        self.leaves: dict = {}       # Leaf -> summed gradient (an NDArray)
        self.F = _late().F
        self.cut = False             # whether a graph freed by an earlier backward was reached
        self.on_final = None         # fn(leaf, grad) once a variable's gradient is final (hooks)
        self.nulls: set = set()      # variables with grad_req 'null' the pass reached

    def add(self, entry, g) -> None:
        """Add one gradient contribution for a tape output `(node, i)` or a variable. A node
        an earlier backward freed is a constant (MXNet clears its graph)."""
        if type(entry) is tuple:
            node, i = entry
            if node.freed:
                self.cut = True
                return
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
        elif entry is not None and g is not None:
            self.nulls.add(entry)

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
            if node.written or list(map(_VERSION, node.cells)) != node.versions:
                _check_saved(node)
            else:
                for p in node.parents:
                    if p is not None and (p[0] if type(p) is tuple else p).written > node.seq:
                        _check_saved(node)
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
        entry = h._ag
        if entry is None or (type(entry) is tuple and entry[0].freed):
            raise AutogradError(_NOT_IN_GRAPH if entry is None else f"backward a second time: {_FREED}")
        bwd.add(entry, _ones_like(h) if hg is None else _head_grad(h, hg))
    token = _RETAIN.set(retain_graph)
    try:
        with _Scope(create_graph, train):
            bwd.run(retain_graph, create_graph)
    finally:
        _RETAIN.reset(token)
    if bwd.cut and not bwd.leaves:
        raise AutogradError(f"no variable in the computational graph needs a gradient: {_FREED}")
    for leaf in bwd.nulls:   # MXNet drops the buffer of a grad_req='null' variable a backward reached
        leaf.grad = None
    return bwd.leaves


def _head_grad(h, hg):
    """The head gradient `hg` for head `h`. MXNet 1.9.1 reads a larger buffer as the head's
    shape (its leading elements, row-major: checked in .mxvenv) and refuses a smaller one."""
    if hg.shape == h.shape:
        return hg
    size = int(np.prod(h.shape))
    if hg.size < size:
        raise ShapeError(f"backward: the head gradient has shape {hg.shape} ({hg.size} elements), "
                         f"smaller than its head's {h.shape} ({size} elements)")
    return type(hg)._wrap(hg._data.reshape(-1)[:size].reshape(h.shape), hg._ctx)


_NOT_IN_GRAPH = ("cannot differentiate with respect to an array that was not computed inside "
                 "autograd.record() from a variable (call attach_grad() on the inputs first)")
_FREED = ("the graph was freed by an earlier backward(). Pass retain_graph=True to the first "
          "backward to differentiate through the same graph twice.")


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
    """Gradients of heads with respect to variables, returned (not stored): always a list, one
    gradient per variable, even for a single NDArray `variables` (MXNet 1.9.1's `grad` returns
    `ret` whenever it reaches its end; `autograd.grad(y, x)[0]` is how its users read it)."""
    variables = _as_list(variables)
    if not variables:
        raise AutogradError("autograd.grad: variables cannot be an empty list")
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
        hit = F.zeros_like(v) if hit is None else hit
        if create_graph and hit._ag is None:
            hit = _constant_entry(hit)
        out.append(hit)
    return out


def _constant_entry(g):
    """A copy of gradient `g`, which no variable's value reaches (radians' gradient is
    `head_grad * pi/180`), recorded as a constant: MXNet records every gradient that
    `grad(create_graph=True)` returns, so differentiating it again is allowed and gives zero
    (a copy, so the caller's head gradient, which `g` may be, stays unrecorded)."""
    c = _late().NDArray._wrap(g._data.copy(), g._ctx)
    node = TapeNode(_no_inputs, [], [c._data], "_constant", uses_outputs=False)
    c._ag = (node, 0)
    return c


def _no_inputs(_inputs, _outs, _ograds) -> list:
    return []


def _as_list(x):
    if x is None:
        return None
    return list(x) if isinstance(x, (list, tuple)) else [x]


def get_symbol(x):
    """The recorded computation of x as a Symbol (MXNet API; symbol/tape_symbol.py)."""
    from hybridgraph.symbol.tape_symbol import get_symbol as build  # noqa: PLC0415 - nd sits below symbol
    return build(x)


class _FunctionInGraph(AutogradError, NotImplementedError):
    """autograd.Function recorded on symbolic (hybridized) inputs."""


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
        if is_recording() and any(getattr(x, "_is_symbolic", False) for x in inputs):
            raise _FunctionInGraph(
                f"autograd.Function {type(self).__name__} was recorded inside a hybridized block: its Python "
                "backward cannot be part of a compiled graph (MXNet 1.9.1 fails there too). Use "
                "mx.operator.CustomOp for a custom backward in hybridized blocks, or leave this block "
                "unhybridized")
        if needs_record(inputs):
            def grad_fn(_inputs, _outs, ograds):
                res = self.backward(*ograds)
                return [res] if not isinstance(res, (list, tuple)) else list(res)
            node = TapeNode(grad_fn, inputs, [o._data for o in outs], type(self).__name__)
            for i, o in enumerate(outs):
                o._ag = (node, i)
        return outs[0] if single else outs


# MXNet's autograd module has no __all__: `from mxnet.autograd import *` brings its public
# functions and also the NDArray and Symbol classes and `array` it imports. Those three come
# lazily here (importing them at the top would be circular).
__all__ = [  # noqa: F822 - NDArray, Symbol and array come from the module __getattr__
    "Function", "NDArray", "Symbol", "array", "backward", "get_symbol", "grad", "is_recording",
    "is_training", "mark_variables", "pause", "predict_mode", "record", "set_recording",
    "set_training", "train_mode"]


def __getattr__(name: str) -> Any:
    if name == "NDArray":
        from .ndarray import NDArray
        return NDArray
    if name == "array":
        from .creation import array
        return array
    if name == "Symbol":
        from ..symbol import Symbol
        return Symbol
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
