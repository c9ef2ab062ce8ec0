"""The direct path of a hybridized block's repeated inference call.

A deployed model calls `net(x)` again and again with one array of the same shape, outside
autograd. The general path re-derives, at every call, what cannot have changed since the
last one: the call's structure, its cache key, the compiled variant and the plan for the
signature. `DirectCall` remembers them after a general call and, for a call it can prove is
the same (same array type, shape, dtype and context, same autograd and tracing state, no
hooks, no profiler, the plan still cached, the parameters the same buffers or buffers of
the same shapes and dtypes), runs the plan's generated code straight away. Anything else
returns None and the block takes the general path, which stays the reference: the direct
path computes bitwise the same outputs, it only skips bookkeeping.

Graphs that fold BatchNorm into frozen weights keep the general path (their per-call
validity checks are the point), as do plans whose outputs alias inputs or constants.
"""
from __future__ import annotations

from operator import attrgetter
from typing import Any

from hybridgraph.nd import autograd, profiling
from hybridgraph.nd.ndarray import NDArray
from hybridgraph.symbol.plan.plan_cache import tick
from hybridgraph.symbol.tracer import current_trace
from hybridgraph.util import is_np_array

from . import cached_graph
from .parameter import arrays_on
from .tracing import regroup

_BACKEND_ARRAY = attrgetter("_data")
_SIGNATURE = attrgetter("shape", "dtype")
_IDLE = (False, False)   # autograd state (recording, training) of a plain inference call


def _plain_call(block: Any) -> bool:
    """Whether a call of `block` now is a plain inference call: not recording, not training,
    no numpy mode, no interpreter, no op hook."""
    return (autograd._STATE.get() == _IDLE and not is_np_array() and not cached_graph.INTERPRET
            and block.__dict__.get("_op_hook") is None)


class DirectCall:
    """What a block's last single-array inference call resolved to, and how to rerun it."""

    __slots__ = ("block", "traced", "graph", "cg", "plan", "key", "ctx", "shape", "dtype", "datas")

    def __init__(self, block: Any, traced: Any, graph: Any, cg: Any, plan: Any, key: tuple,
                 ctx: Any, datas: list):
        self.block, self.traced, self.graph, self.cg, self.plan = block, traced, graph, cg, plan
        self.key, self.ctx, self.datas = key, ctx, datas
        self.shape, self.dtype = key[0][0]

    @classmethod
    def after_call(cls, block: Any, traced: Any, graph: Any, x: Any) -> DirectCall | None:
        """A direct path for calls like the inference call `block(x)` that just ran, or None
        when such calls need the general path."""
        if (type(x) is not NDArray or graph._foldable or not graph._feed_all
                or len(traced.array_positions) != 1 or not _plain_call(block)):
            return None
        cg = graph._last
        plan = cg.last_plan if cg is not None else None
        if plan is None or plan.fwd is None or plan.aliased_outputs:
            return None
        datas = [x._data, *map(_BACKEND_ARRAY, arrays_on(traced.params, x._ctx))]
        key = (tuple(map(_SIGNATURE, datas)), False, False)
        if cg._plans.get(key) is not plan:
            return None
        return cls(block, traced, graph, cg, plan, key, x._ctx, datas)

    def __call__(self, x: Any) -> Any:
        """The block's outputs for `x`, or None when this call is not like the remembered one."""
        if type(x) is not NDArray or x._ctx is not self.ctx:
            return None
        data = x._data
        block = self.block
        if (data.shape != self.shape or data.dtype != self.dtype or not _plain_call(block)
                or current_trace() is not None or profiling.ACTIVE
                or block._forward_pre_hooks or block._forward_hooks):
            return None
        plan, cg = self.plan, self.cg
        if cg._plans.get(self.key) is not plan:   # evicted by the plan cache, or rebuilt
            return None
        datas = [data, *map(_BACKEND_ARRAY, arrays_on(self.traced.params, self.ctx))]
        if not self._same_params(datas):
            return None
        outs = plan.forward(datas, False, False)[0]
        plan.tick = tick()
        cg.last_plan = plan
        graph = self.graph
        graph._last = cg
        graph.calls += 1
        block._cache_stats["hits"] += 1
        ctx, wrap = self.ctx, NDArray._wrap
        results = [wrap(o, ctx) for o in outs]
        traced = self.traced
        return regroup(traced.fill_outputs(results), traced.out_fmt, lists=True)

    def _same_params(self, datas: list) -> bool:
        """Whether the parameters are the remembered buffers, or new buffers of the same
        signature (then remembered); a changed shape or dtype needs another plan."""
        old = self.datas
        for i in range(1, len(datas)):
            if datas[i] is not old[i]:
                if list(map(_SIGNATURE, datas[1:])) != list(self.key[0][1:]):
                    return False
                break
        self.datas = datas
        return True
