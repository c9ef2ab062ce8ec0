"""Binding and running graphs: `bind`, `simple_bind`, `eval` and the Executor.

Binding lowers the symbol once (symbol/plan/): graph passes when enabled, the
joined forward+backward schedule (symbol/gradient.py) for the arguments whose
`grad_req` is not null, shape/dtype inference, memory planning and generated
straight-line code (symbol/plan/compiled.py). The Executor keeps one `Plan`
per train flag; the first call of each runs step by step (it sees which
kernels return views) and later calls run the compiled code. Everything
operator-specific comes from the OpDef: aux states are updated because the
kernels that declare `mutate_inputs` write into the very buffers of the bound
aux arrays.

Arrays the user sees (`arg_dict`, `grad_dict`, `aux_dict`, `outputs`) are
allocated once and always written in place, so references stay valid. The
saved activations of the last forward stay valid until the next forward, so
`backward` may run several times per forward (MXNet's executors allow it).

Options (`executor_options(passes=..., mirror=...)` or the environment
variables HYBRIDGRAPH_EXEC_PASSES=1 and MXNET_BACKWARD_DO_MIRROR=1): graph
passes are off by default for executors (monitors and `debug_str` then show
the user's nodes); mirror recomputes cheap forward values in the backward.
"""
from __future__ import annotations

import contextlib
import functools
import os
import threading
from typing import Any
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from hybridgraph.nd.backend import Context, current_context, to_numpy
from hybridgraph.nd.errors import MXNetError
from hybridgraph.nd.ndarray import NDArray
from hybridgraph.nd.registry import shape_known
from hybridgraph.nd.writes import note_write

from .infer import graph_shapes, graph_types
from .plan.compiled import ExecutionError, Plan, lower, step_error
from .plan.monitor import step_reporter
from .plan.report import plan_report
from .plan.schedule import Schedule, Step

__all__ = ["Executor", "ExecutionError", "bind", "simple_bind", "eval_symbol", "executor_options",
           "Step", "step_error"]

GRAD_REQS = ("write", "add", "null")

#: executor-wide options; see `executor_options`
OPTIONS = {"passes": os.environ.get("HYBRIDGRAPH_EXEC_PASSES", "0") not in ("", "0"),
           "mirror": os.environ.get("MXNET_BACKWARD_DO_MIRROR", "0") not in ("", "0")}


@contextlib.contextmanager
def executor_options(**options: Any) -> Iterator[None]:
    """Set executor options (`passes`, `mirror`) for the executors bound inside the block."""
    unknown = [k for k in options if k not in OPTIONS]
    if unknown:
        raise ValueError(f"unknown executor options {unknown}; known: {sorted(OPTIONS)}")
    old = dict(OPTIONS)
    OPTIONS.update(options)
    try:
        yield
    finally:
        OPTIONS.clear()
        OPTIONS.update(old)


class Program:
    """A bound symbol lowered for one set of argument shapes: one Plan per train flag."""

    def __init__(self, sym, arrays: Sequence, wrt: Sequence, ctx: Context, passes: bool, mirror: bool,
                 outputs: Sequence = (), grads: Sequence = ()):
        graph = sym._graph()
        self.symbol = sym
        self.inputs = graph.arguments() + graph.auxiliary_states()
        self.wrt = list(wrt)
        self.shapes = [tuple(a.shape) for a in arrays]
        self.dtypes = [np.dtype(a.dtype) for a in arrays]
        self.ctx = ctx
        self.passes, self.mirror = passes, mirror
        self.out_arrays = list(outputs)     # the executor's persistent outputs / written gradients:
        self.grad_arrays = list(grads)      # kernels that write `out=` fill them directly
        self._plans: dict[bool, Plan] = {}

    def plan(self, is_train: bool) -> Plan:
        plan = self._plans.get(is_train)
        if plan is None:
            sched, ran = lower(self.symbol._outputs, self.inputs, self.shapes, self.dtypes, wrt=self.wrt,
                               passes=self.passes, for_training=bool(self.wrt) or is_train,
                               mirror=self.mirror, ctx=self.ctx)
            bound = {}
            for e, arr in zip(sched.outputs, self.out_arrays):
                if arr is not None:
                    bound.setdefault(e, arr._data)
            for e, arr in zip(sched.grads, self.grad_arrays):
                if e is not None and arr is not None:
                    bound.setdefault(e, arr._data)
            plan = Plan(sched, self.ctx, retain=True, static=True, pool_outputs=True, pool_grads=True,
                        bound=bound, label="executor", passes_ran=ran)
            self._plans[is_train] = plan
        return plan

    @property
    def schedule(self) -> Schedule:
        return self.plan(bool(self.wrt)).sched


# -- argument normalisation ----------------------------------------------------------

def _arrays_by_name(names: list[str], given: Any, what: str, required: bool) -> list:
    """A list (in `names` order) from a list or dict of arrays; None where absent."""
    if given is None:
        if required and names:
            raise ValueError(f"`{what}` is missing; expected arrays for {names}")
        return [None] * len(names)
    if isinstance(given, dict):
        if required:
            for n in names:
                if n not in given:
                    raise ValueError(f"key `{n}` is missing in `{what}`; expected arrays for {names}")
        out = [given.get(n) for n in names]
    elif isinstance(given, (list, tuple)):
        if len(given) != len(names):
            raise ValueError(f"Length of {what} does not match the number of arguments: got "
                             f"{len(given)}, expected {len(names)} for {names}")
        out = list(given)
    else:
        raise TypeError(f"`{what}` must be a list or a dict of NDArrays, got {type(given).__name__}")
    for n, a in zip(names, out):
        if a is not None and not isinstance(a, NDArray):
            raise TypeError(f"{what}[{n!r}] must be an NDArray, got {type(a).__name__}")
    return out


def _grad_reqs(names: list[str], grad_req: Any) -> list[str]:
    if isinstance(grad_req, str):
        reqs = [grad_req] * len(names)
    elif isinstance(grad_req, dict):
        reqs = [grad_req.get(n, "null") for n in names]
    elif isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(names):
            raise ValueError(f"grad_req has {len(grad_req)} entries for {len(names)} arguments {names}")
        reqs = list(grad_req)
    else:
        raise TypeError(f"grad_req must be a str, list or dict, got {type(grad_req).__name__}")
    for n, r in zip(names, reqs):
        if r not in GRAD_REQS:
            raise ValueError(f"grad_req for {n!r} must be one of {GRAD_REQS}, got {r!r}")
    return reqs


def _check_shapes(kind: str, names: list[str], arrays: list, expected: list) -> None:
    for n, a, e in zip(names, arrays, expected):
        if a is not None and e is not None and tuple(a.shape) != tuple(e):
            raise ValueError(f"{kind} {n!r}: expected shape {tuple(e)}, got {tuple(a.shape)}")


def _validate(sym, args: list, aux: list) -> tuple[list, list]:
    """Shape- and type-check the bound arrays against the graph; (shapes, dtypes) of the outputs."""
    graph = sym._graph()
    nodes = graph.arguments() + graph.auxiliary_states()
    arrays = args + aux
    shapes = graph_shapes(graph, {graph.entry_id((n, 0)): tuple(a.shape) for n, a in zip(nodes, arrays)})
    dtypes = graph_types(graph, {graph.entry_id((n, 0)): np.dtype(a.dtype) for n, a in zip(nodes, arrays)})
    for n, a in zip(nodes, arrays):
        got = shapes[graph.entry_id((n, 0))]
        if got is not None and tuple(got) != tuple(a.shape):
            raise ValueError(f"argument {n.name!r}: expected shape {got}, got {tuple(a.shape)}")
    outs = [graph.entry_id(e) for e in sym._outputs]
    return [shapes[i] for i in outs], [dtypes[i] for i in outs]


def _zeros(shape: tuple, dtype: Any, ctx: Context) -> NDArray:
    return NDArray._wrap(ctx.xp.zeros(tuple(shape), dtype=np.dtype(dtype)), ctx)


def _as_backend(x: Any, ctx: Context, like: NDArray | None, what: str):
    """An out_grad / forward input as a backend array on ctx (NDArray or numpy accepted)."""
    if isinstance(x, NDArray):
        data = x._data if x._ctx == ctx else ctx.xp.asarray(to_numpy(x._data))
    elif isinstance(x, np.ndarray):
        data = ctx.xp.asarray(x)
    else:
        raise TypeError(f"{what} must be an NDArray or numpy.ndarray, got {type(x).__name__}")
    if like is not None and tuple(data.shape) != tuple(like.shape):
        raise ValueError(f"{what}: expected shape {tuple(like.shape)}, got {tuple(data.shape)}")
    return data


def _exclusive(method: Callable) -> Callable:
    """Refuse a call while another thread runs forward/backward on the same Executor: an
    Executor is one set of argument, gradient and activation buffers, so overlapping
    calls would silently mix their values (MXNet's executors do)."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        if not self._busy.acquire(blocking=False):
            raise MXNetError(f"Executor.{method.__name__}() called while another thread is running "
                             "forward/backward on the same Executor; an Executor holds one set of "
                             "buffers: bind one Executor per thread (simple_bind, or reshape / "
                             "shared_exec to share parameters), or serialise the calls with a lock")
        try:
            return method(self, *args, **kwargs)
        finally:
            self._busy.release()
    return run


class Executor:
    """A bound symbol: forward/backward over arrays it keeps (MXNet's `mx.executor.Executor`).

    Not for concurrent use: an Executor is one set of buffers, and a forward/backward
    started while another thread runs one on the same Executor raises MXNetError
    (MXNet silently mixes the two). Bind one Executor per thread, or serialise the
    forward+backward pairs; forward in one thread and backward in another is fine
    when the caller orders them.
    """

    def __init__(self, sym, ctx: Context, args: list, grads: list, reqs: list[str], aux: list,
                 out_meta: tuple[list, list] | None = None, program: Program | None = None,
                 outputs: list | None = None):
        graph = sym._graph()
        self._symbol = sym
        self._ctx = ctx
        self._arg_nodes = graph.arguments()
        self._aux_nodes = graph.auxiliary_states()
        self.arg_arrays = list(args)
        self.aux_arrays = list(aux)
        self._grad_req = ["null" if g is None else r for g, r in zip(grads, reqs)]
        self.grad_arrays = [None if r == "null" else g for g, r in zip(grads, self._grad_req)]
        self._wrt = [i for i, r in enumerate(self._grad_req) if r != "null"]
        self._outputs = list(outputs) if outputs is not None else self._allocate_outputs(out_meta)
        written = [self.grad_arrays[i] if self._grad_req[i] == "write" else None for i in self._wrt]
        self._program = Program(sym, self.arg_arrays + self.aux_arrays,
                                [self._arg_nodes[i] for i in self._wrt], ctx,
                                OPTIONS["passes"], OPTIONS["mirror"], self._outputs, written)
        self._program.plan(bool(self._wrt))     # lower now: errors surface at bind time, as MXNet's
        self._saved = None
        self._last_plan: Plan | None = None
        self._monitor: tuple | None = None
        self._busy = threading.Lock()           # held by a running forward/backward (_exclusive)

    def _allocate_outputs(self, meta) -> list:
        if meta is None:
            return [None] * len(self._symbol._outputs)
        return [_zeros(s, t, self._ctx) if s is not None and shape_known(s) and t is not None else None
                for s, t in zip(*meta)]

    # -- views -------------------------------------------------------------------------
    @property
    def outputs(self) -> list[NDArray]:
        return list(self._outputs)

    @staticmethod
    def _dict(names: list[str], arrays: list) -> dict:
        if len(set(names)) != len(names):
            raise ValueError(f"Duplicate names detected, {names}")
        return dict(zip(names, arrays))

    @property
    def arg_dict(self) -> dict:
        return self._dict([n.name for n in self._arg_nodes], self.arg_arrays)

    @property
    def grad_dict(self) -> dict:
        return self._dict([n.name for n in self._arg_nodes], self.grad_arrays)

    @property
    def aux_dict(self) -> dict:
        return self._dict([n.name for n in self._aux_nodes], self.aux_arrays)

    @property
    def output_dict(self) -> dict:
        return self._dict(self._symbol.list_outputs(), self.outputs)

    # -- running -------------------------------------------------------------------------
    @_exclusive
    def forward(self, is_train: bool = False, **kwargs: Any) -> list[NDArray]:
        """Run the forward graph; keyword arrays are first copied into the argument arrays."""
        if kwargs:
            self._copy_inputs(kwargs)
        plan = self._program.plan(bool(is_train))
        inputs = [a._data for a in self.arg_arrays] + [a._data for a in self.aux_arrays]
        self._saved = None
        outs, self._saved = plan.forward(inputs, bool(is_train), bool(self._wrt), self._monitor_fn(plan))
        self._last_plan = plan
        self._store_outputs(outs)
        return self.outputs

    def _copy_inputs(self, kwargs: dict) -> None:
        arg_dict = self.arg_dict
        for name, array in kwargs.items():
            if not isinstance(array, (NDArray, np.ndarray)):
                raise ValueError("only accept keyword argument of NDArrays and numpy.ndarray")
            if name not in arg_dict:
                raise TypeError(f"Unknown argument {name}; the arguments are {list(arg_dict)}")
            if arg_dict[name].shape != array.shape:
                raise ValueError(f"Shape not match! Argument {name}, need: {arg_dict[name].shape}, "
                                 f"received: {array.shape}")
            arg_dict[name][:] = array

    def _store_outputs(self, values: list) -> None:
        xp = self._ctx.xp
        for k, val in enumerate(values):
            out = self._outputs[k]
            if out is not None and out._data is val:
                continue                       # the kernel wrote into the output buffer itself
            if out is None or out.shape != val.shape or out.dtype != val.dtype:
                self._outputs[k] = NDArray._wrap(xp.array(val, copy=True), self._ctx)
            else:
                out._data[...] = val

    @_exclusive
    def backward(self, out_grads: Any = None, is_train: bool = True) -> None:
        """Run the backward graph and write/add the gradients into `grad_arrays`.

        `out_grads` (NDArray, list, or dict by output name) are the head
        gradients; loss-style outputs need none.
        """
        if not self._wrt:
            return
        if self._saved is None:
            # MXNet 1.9.1 lets backward() run without a forward: its gradients come from the bound
            # arguments. Run the training forward for the intermediate values it needs.
            Executor.forward.__wrapped__(self, is_train=True)
        plan = self._last_plan
        given = self._out_grad_list(out_grads)
        head = [None if h is None else self._head_grad(k, given)
                for k, h in enumerate(plan.sched.head_grads)]
        grads = plan.backward(self._saved, head, monitor=self._monitor_fn(plan))
        self._write_grads(grads)
        for a in self.aux_arrays:   # BatchNorm's moving statistics are updated in the backward
            note_write(a._data)

    def _out_grad_list(self, out_grads: Any) -> list:
        if out_grads is None:
            return []
        if isinstance(out_grads, (NDArray, np.ndarray)):
            return [out_grads]
        if isinstance(out_grads, dict):
            return [out_grads.get(k) for k in self._symbol.list_outputs()]
        return list(out_grads)

    def _head_grad(self, k: int, given: list):
        if k >= len(given) or given[k] is None:
            name = self._symbol.list_outputs()[k]
            raise MXNetError(f"output {name!r}: because the last operator is not Loss function, "
                             "head_gradient is required when calling backward. If you are attempting "
                             "to minimize the output as an objective, please modify your network and "
                             "pass it through the make_loss symbol.")
        data = _as_backend(given[k], self._ctx, self._outputs[k], f"out_grads[{k}]")
        want = self._outputs[k]._data.dtype
        # MXNet copies each head gradient into a buffer of its output's dtype (CopyFromTo casts)
        return data if data.dtype == want else data.astype(want)

    def _write_grads(self, values: list) -> None:
        for i, val in zip(self._wrt, values):
            g = self.grad_arrays[i]
            if self._grad_req[i] == "write":
                if val is not g._data:
                    g._data[...] = 0 if val is None else val
            elif val is not None:
                g._data += val

    # -- monitoring ---------------------------------------------------------------------------
    def set_monitor_callback(self, callback: Callable[[str, NDArray], None], monitor_all: bool = False) -> None:
        """Call `callback(name, array)` for every output (and with monitor_all every input) of
        every node as it runs. Arrays are NDArrays (MXNet passes raw handles)."""
        self._monitor = (callback, monitor_all)

    def _monitor_fn(self, plan: Any):
        if self._monitor is None:
            return None
        callback, monitor_all = self._monitor
        # MXNet: with monitor_all a variable input is reported under its own name first
        variables = {eid: node.name for eid, node in zip(plan.sched.inputs, self._program.inputs)}
        return step_reporter(lambda name, _op, array: callback(name, array), monitor_all, self._ctx, variables)

    # -- parameters and reshaping -----------------------------------------------------------
    def copy_params_from(self, arg_params: dict, aux_params: dict | None = None,
                         allow_extra_params: bool = False) -> None:
        """Copy parameter values into the bound arrays (by name, cast to their dtypes)."""
        for params, targets, what in ((arg_params, self.arg_dict, "arguments"),
                                      (aux_params or {}, self.aux_dict, "auxiliary states")):
            for name, array in params.items():
                if name not in targets:
                    if allow_extra_params:
                        continue
                    raise ValueError(f'Find name "{name}" that is not in the {what}')
                dst = targets[name]
                if tuple(array.shape) != tuple(dst.shape):
                    raise ValueError(f"copy_params_from: {name!r} has shape {tuple(array.shape)}, the "
                                     f"bound array has {tuple(dst.shape)}")
                dst._data[...] = _as_backend(array, self._ctx, None, name)
                note_write(dst._data)

    def reshape(self, partial_shaping: bool = False, allow_up_sizing: bool = False,
                **kwargs: Any) -> "Executor":
        """A new executor for new input shapes, sharing this one's arrays where shapes allow.

        Arrays whose shape is unchanged are the same objects; smaller ones are
        views of the old buffers; larger ones need `allow_up_sizing=True`.
        """
        from .infer import infer_shape_partial
        arg_shapes, _, aux_shapes = infer_shape_partial(self._symbol, **kwargs)
        names = [n.name for n in self._arg_nodes]
        unknown = [n for n, s in zip(names, arg_shapes) if not shape_known(s or None)]
        if unknown:
            raise MXNetError(f"reshape: cannot decide the shapes of {unknown} from {kwargs}")
        resize = _Resizer(self._ctx, kwargs, partial_shaping, allow_up_sizing)
        args = [resize(n, a, s) for n, a, s in zip(names, self.arg_arrays, arg_shapes)]
        grads = [None if g is None else resize(n, g, s)
                 for n, g, s in zip(names, self.grad_arrays, arg_shapes)]
        aux = [resize(n.name, a, s) for n, a, s in zip(self._aux_nodes, self.aux_arrays, aux_shapes)]
        meta = _validate(self._symbol, args, aux)
        fresh = self._allocate_outputs(meta)
        outs = [_shared_output(old, new) for old, new in zip(self._outputs, fresh)]
        new = Executor(self._symbol, self._ctx, args, grads, self._grad_req, aux, meta, outputs=outs)
        new._monitor = self._monitor   # MXNet's reshaped executor keeps the monitor callback
        return new

    # -- inspection ----------------------------------------------------------------------------
    def _plan(self) -> Plan:
        return self._last_plan or self._program.plan(bool(self._wrt))

    def memory_stats(self) -> dict:
        """Bytes of the plan that ran last (or would run): `planned` (pooled storages plus the
        peak of kernel-allocated ones), `naive` (every entry its own buffer), `lower_bound`
        (most bytes live at one step), `pooled`, `dynamic_peak`, `num_storages`,
        `num_inplace`; `calibrated` is False before the first run (registry-only plan)."""
        return self._plan().memory_stats()

    def debug_str(self) -> str:
        """The graph, the pass pipeline, the schedule with storage ids and in-place marks, and
        "Total N MB allocated (naive M MB, ...)" (MXNet's debug_str)."""
        lines = ["Symbol Outputs:"]
        for k, (node, idx) in enumerate(self._symbol._outputs):
            lines.append(f"\toutput[{k}]={node.name}({idx})")
        for node in self._symbol._graph().nodes:
            if node.op is None:
                lines.append(f"Variable:{node.name}")
                continue
            lines += ["--------------------", f"Op:{node.op.name}, Name={node.name}", "Inputs:"]
            lines += [f"\targ[{i}]={src.name}({j})" for i, (src, j) in enumerate(node.inputs)]
            if node.attrs is not None and node.attrs.given:
                lines.append("Attrs:")
                lines += [f"\t{k}={v}" for k, v in node.attrs.given.items()]
        return "\n".join(lines) + "\n" + plan_report(self._plan())

    def __repr__(self) -> str:
        return f"<Executor {self._symbol!r} @{self._ctx}>"


def _shared_output(old: NDArray | None, new: NDArray | None) -> NDArray | None:
    """reshape()'s output array: a view of the old executor's output buffer when it is large
    enough (MXNet's reshaped executors write into the memory of the one they came from)."""
    if old is None or new is None or old.dtype != new.dtype or new.size > old.size:
        return new
    if old.shape == new.shape:
        return old
    return NDArray._wrap(old._data.reshape(-1)[:new.size].reshape(new.shape), old._ctx)


class _Resizer:
    """reshape()'s rule for one array: same shape -> same object, smaller -> a view."""

    def __init__(self, ctx: Context, given: dict, partial: bool, up_sizing: bool):
        self.ctx, self.given, self.partial, self.up_sizing = ctx, given, partial, up_sizing

    def __call__(self, name: str, arr: NDArray, shape: tuple) -> NDArray:
        shape = tuple(shape)
        if tuple(arr.shape) == shape:
            return arr
        if name not in self.given and not self.partial:
            raise MXNetError(f"Shape of unspecified array arg:{name} changed. This can cause the new "
                             "executor to not share parameters with the old one. Please check for error "
                             "in network. If this is intended, set partial_shaping=True to suppress "
                             "this warning.")
        size = int(np.prod(shape))
        if size > arr.size:
            if not self.up_sizing:
                raise MXNetError(f"New shape of arg: {name} is larger than original. First making a big "
                                 "executor and then down sizing it is more efficient than the reverse. "
                                 "If you really want to up size, set allow_up_sizing=True to enable "
                                 "allocation of new arrays.")
            return _zeros(shape, arr.dtype, self.ctx)
        return NDArray._wrap(arr._data.reshape(-1)[:size].reshape(shape), self.ctx)


# -- bind / simple_bind / eval ---------------------------------------------------------------

def _check_ctx(ctx: Context, named: Sequence[tuple[str, NDArray | None]], placed: dict | None = None) -> None:
    for name, a in named:
        want = (placed or {}).get(name, ctx)
        if a is not None and a._ctx != want:
            raise MXNetError(f"array {name!r} lives on {a._ctx} but the executor places it on {want}; "
                             "use as_in_context() first")


def _placement(sym, ctx: Context, group2ctx: dict | None) -> dict:
    """``{variable name: Context}`` for the variables of a ``ctx_group`` (`mx.AttrScope(ctx_group=...)`)
    that `group2ctx` maps: MXNet allocates their arrays (and gradients) there. A variable made
    outside any group takes the group of the first operator that reads it (MXNet's device
    placement pass).

    The graph itself runs on `ctx`'s device, so the groups must be contexts of the same
    memory: CPU contexts (any id) for a CPU executor, the same GPU for a GPU one."""
    if not group2ctx:
        return {}
    import json  # noqa: PLC0415 - only for model-parallel binds
    nodes = json.loads(sym.tojson())["nodes"]
    groups = {}
    for node in nodes:   # topological order: the first reader of a variable comes first
        group = (node.get("attrs") or {}).get("__ctx_group__")
        if node["op"] == "null":
            if group is not None:
                groups[node["name"]] = group
            continue
        for src, _, _ in node["inputs"]:
            if group is not None and nodes[src]["op"] == "null":
                groups.setdefault(nodes[src]["name"], group)
    placed = {}
    for name, group in groups.items():
        if group not in group2ctx:
            continue
        target = Context(group2ctx[group])
        if target.device_type != ctx.device_type or (ctx.device_type == "gpu" and target != ctx):
            raise NotImplementedError(
                f"group2ctx places ctx_group {group!r} on {target} while the executor runs on {ctx}: model "
                "parallelism across devices is not supported (hybridgraph runs a graph on one device). Bind the "
                "whole graph to one device, or train data-parallel over several contexts.")
        placed[name] = target
    return placed


def bind(sym, ctx: Context | None, args: Any, args_grad: Any = None, grad_req: Any = "write",
         aux_states: Any = None, group2ctx: dict | None = None, shared_exec: Any = None) -> Executor:
    """Bind arrays to a symbol's arguments (MXNet's `Symbol.bind`); the arrays are used in place."""
    ctx = Context(ctx) if ctx is not None else current_context()
    names = sym.list_arguments()
    aux_names = sym.list_auxiliary_states()
    arg_list = _arrays_by_name(names, args, "args", True)
    grads = _arrays_by_name(names, args_grad, "args_grad", False)
    reqs = _grad_reqs(names, grad_req)
    aux = _arrays_by_name(aux_names, [] if aux_states is None and aux_names else aux_states,
                          "aux_states", True)
    _check_ctx(ctx, list(zip(names, arg_list)) + list(zip(names, grads)) + list(zip(aux_names, aux)),
               _placement(sym, ctx, group2ctx))
    _check_shapes("gradient of", names, grads, [a.shape for a in arg_list])
    meta = _validate(sym, arg_list, aux)
    return Executor(sym, ctx, arg_list, grads, reqs, aux, meta)


def _default_types(sym, type_dict: dict | None) -> dict:
    """MXNet's simple_bind: float32 for every argument without a `__dtype__` attribute."""
    if type_dict is not None:
        return dict(type_dict)
    attrs = sym.attr_dict()
    return {n: np.float32 for n in sym.list_arguments() if "__dtype__" not in attrs.get(n, {})}


def _shared(name: str, shape: tuple, dtype: Any, pool: dict | None) -> NDArray | None:
    """An array from a shared pool when it matches (simple_bind's sharing)."""
    arr = None if pool is None else pool.get(name)
    if arr is None:
        return None
    if tuple(arr.shape) != tuple(shape) or arr.dtype != np.dtype(dtype):
        raise MXNetError(f"shared array {name!r} has shape {tuple(arr.shape)} and dtype {np.dtype(arr.dtype).name}, "
                         f"expected {tuple(shape)} and {np.dtype(dtype)}")
    return arr


def _from_buffer(name: str, shape: tuple, dtype: Any, ctx: Context, buffer: dict | None) -> NDArray:
    """simple_bind's shared_buffer: reuse a big enough buffer by name, or allocate and record one."""
    size = int(np.prod(shape))
    old = None if buffer is None else buffer.get(name)
    if old is not None and old.size >= size and old.dtype == np.dtype(dtype):
        return NDArray._wrap(old._data.reshape(-1)[:size].reshape(shape), ctx)
    arr = _zeros(shape, dtype, ctx)
    if buffer is not None:
        buffer[name] = arr
    return arr


def simple_bind(sym, ctx: Context | None, grad_req: Any = "write", type_dict: dict | None = None,
                stype_dict: dict | None = None, group2ctx: dict | None = None,
                shared_arg_names: Sequence[str] | None = None, shared_exec: Executor | None = None,
                shared_buffer: dict | None = None, **kwargs: Any) -> Executor:
    """Bind with freshly allocated (zero) arrays whose shapes and dtypes are inferred from
    `kwargs` shapes and `type_dict` (MXNet's `Symbol.simple_bind`)."""
    from .infer import infer_shape_partial, infer_type_partial
    ctx = Context(ctx) if ctx is not None else current_context()
    names, aux_names = sym.list_arguments(), sym.list_auxiliary_states()
    # MXNet reads only tuple-valued keywords as shapes and ignores the rest (axis=1, mode='clip')
    kwargs = {k: v for k, v in kwargs.items() if isinstance(v, (tuple, list))}
    arg_shapes, _, aux_shapes = infer_shape_partial(sym, **kwargs)
    unknown = [f"{n}: {s}" for n, s in zip(names + aux_names, arg_shapes + aux_shapes)
               if not shape_known(s or None)]
    if unknown:
        raise MXNetError("simple_bind: cannot decide the shapes of " + ", ".join(unknown)
                         + "; give the input shapes as keyword arguments, e.g. data=(64, 784)")
    arg_types, _, aux_types = infer_type_partial(sym, **_default_types(sym, type_dict))
    reqs = _grad_reqs(names, grad_req)
    shared_args = set(shared_arg_names or ()) if shared_exec is not None else set()
    pools = (shared_exec.arg_dict, shared_exec.grad_dict, shared_exec.aux_dict) if shared_exec else ({}, {}, {})
    placed = _placement(sym, ctx, group2ctx)
    args, grads = [], []
    for n, s, t, r in zip(names, arg_shapes, arg_types, reqs):
        t, where = t or np.float32, placed.get(n, ctx)
        pick = n in shared_args
        arr = _shared(n, s, t, pools[0]) if pick else None
        args.append(arr if arr is not None else _from_buffer(n, s, t, where, shared_buffer))
        grad = _shared(n, s, t, pools[1]) if pick and r != "null" else None
        grads.append(None if r == "null" else grad if grad is not None else _zeros(s, t, where))
    aux = []
    for n, s, t in zip(aux_names, aux_shapes, aux_types):
        arr = _shared(n, s, t or np.float32, pools[2])
        aux.append(arr if arr is not None else _zeros(s, t or np.float32, placed.get(n, ctx)))
    return Executor(sym, ctx, args, grads, reqs, aux, _validate(sym, args, aux))


def eval_symbol(sym, ctx: Context | None = None, **kwargs: NDArray) -> list[NDArray]:
    """Bind the keyword arrays, run forward once and return the outputs (MXNet's `Symbol.eval`)."""
    return bind(sym, ctx if ctx is not None else current_context(), kwargs).forward()
