"""A whole training step compiled once: forward, loss, backward and the optimizer update.

`Trainer.compile_step(net, loss_fn)` returns a `CompiledStep`; calling it with
``(data, label, batch_size)`` does what the usual Gluon step does::

    with autograd.record():
        loss = loss_fn(net(data), label)
    loss.backward()
    trainer.step(batch_size)

but as one traced graph (net and loss together) compiled for training, whose
backward writes the parameters' gradients straight into their `.grad` buffers,
followed by the Trainer's own optimizer update. Nothing goes on the autograd
tape and nothing is looked up per parameter beyond the arrays themselves.

Exactness: the graph computes the same kernels in the same order as the two
hybridized calls of the unfused step (the loss's head gradient is ones, as
`backward()` seeds it), and the update is the Trainer's updater, so parameters,
gradients and optimizer states are bit-identical to the unfused step
(tests/gluon/test_compiled_step.py checks SGD-momentum and Adam on an MLP and a
CNN with `==`).

Fallback: when the step cannot be compiled -- the net or loss is not a
HybridBlock, tracing fails (code that reads values), the Trainer reduces
gradients over several contexts or a kvstore, applies the optimizer on the
kvstore, uses an AMP loss scaler, or some trained parameter is not reached by
the loss -- the step runs the unfused code above instead. `fallback_reason`
says why (None while compiled), and a warning says so once.
"""
from __future__ import annotations

import warnings
from typing import Any

from hybridgraph.nd import autograd
from hybridgraph.nd.ndarray import NDArray

from .cached_graph import CachedGraph
from .tracing import trace_block

__all__ = ["CompiledStep"]


class _NetAndLoss:
    """What `trace_block` needs of a block, for ``loss_fn(net(data), label)``: the two
    blocks are traced together into one graph (no new Block, so no name is taken from
    the naming counters)."""

    def __init__(self, net: Any, loss_fn: Any):
        self.net, self.loss_fn = net, loss_fn
        self.name = f"{net.name}+{loss_fn.name}"
        self._children = {"net": net, "loss": loss_fn}

    def collect_params(self) -> dict:
        params = dict(self.net.collect_params().items())
        params.update(self.loss_fn.collect_params().items())
        return params

    def name_scope(self):
        return _NullScope()

    def forward(self, data: Any, label: Any) -> Any:
        return self.loss_fn(self.net(data), label)


class _NullScope:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class CompiledStep:
    """One compiled training step of `net` and `loss_fn` for `trainer` (see the module docstring)."""

    def __init__(self, trainer: Any, net: Any, loss_fn: Any):
        self.trainer, self.net, self.loss_fn = trainer, net, loss_fn
        self._static = self._static_reason()
        self._graphs: dict = {}          # (data sig, label sig, ctx) -> _Compiled, or a reason str
        self._warned = False
        self.last_fallback: str | None = None   # why the last call ran unfused (None: it ran compiled)

    # -- when the step can be compiled ------------------------------------------------------
    def _static_reason(self) -> str | None:
        from .hybrid_block import HybridBlock
        for what, blk in (("net", self.net), ("loss_fn", self.loss_fn)):
            if not isinstance(blk, HybridBlock):
                return f"{what} is a {type(blk).__name__}, not a HybridBlock (it cannot be traced)"
        return None

    def _trainer_reason(self) -> str | None:
        tr = self.trainer
        tr._prepare()
        if len(tr._contexts) != 1:
            return f"the parameters live on {len(tr._contexts)} contexts (gradients are reduced between steps)"
        if tr._kvstore is not None:
            return f"gradients go through a {tr._kvstore.type!r} kvstore"
        if getattr(tr, "_amp_loss_scaler", None) is not None:
            return "an AMP loss scaler checks the gradients for overflow"
        if tr._contains_sparse_weight or tr._contains_sparse_grad:
            return "some parameter has a sparse weight or gradient"
        return None

    def _build(self, data: NDArray, label: NDArray) -> Any:
        """The compiled step for these input signatures, or the reason it cannot be built."""
        if self.net._forward_hooks or self.net._forward_pre_hooks:
            return "the net has forward hooks (a traced graph would not call them)"
        try:
            traced = trace_block(_NetAndLoss(self.net, self.loss_fn), (data, label), {})
        except Exception as exc:   # noqa: BLE001 - any failure to trace means: run eagerly
            return f"tracing net and loss failed: {type(exc).__name__}: {exc}"
        for p in self.net.collect_params().values():
            p._finish_deferred_init()
        if len(traced.symbol._outputs) != 1 or traced.out_consts:
            return "the loss does not return exactly one array"
        used = {p.name for p in traced.params}
        for p in self.trainer._params:
            if p.grad_req != "null" and p.name not in used:
                return f"the loss does not depend on the trained parameter {p.name!r} (its gradient would be stale)"
        return _Compiled(traced, self.trainer)

    # -- calling ---------------------------------------------------------------------------
    def __call__(self, data: NDArray, label: NDArray, batch_size: float) -> NDArray:
        """One training step; returns the loss (as `loss_fn` returns it)."""
        comp = reason = self._static
        if reason is None:
            reason = self._trainer_reason()
        if reason is None:
            key = (data.shape, data._data.dtype.str, label.shape, label._data.dtype.str, data._ctx)
            comp = self._graphs.get(key)
            if comp is None:
                comp = self._graphs[key] = self._build(data, label)
            reason = comp if isinstance(comp, str) else None
        self.last_fallback = reason
        if reason is not None:
            self._note_fallback(reason)
            return self._eager(data, label, batch_size)
        return comp.run(data, label, batch_size)

    def _note_fallback(self, reason: str) -> None:
        if not self._warned:
            self._warned = True
            warnings.warn(f"compile_step: running the unfused step because {reason}", stacklevel=3)

    @property
    def fallback_reason(self) -> str | None:
        """Why the step runs unfused (None when the last call ran compiled)."""
        return self.last_fallback if self.last_fallback is not None else self._static

    @property
    def compiled(self) -> bool:
        """Whether the last call ran the compiled step (False when it cannot be compiled)."""
        return self._static is None and self.last_fallback is None

    def _eager(self, data: NDArray, label: NDArray, batch_size: float) -> NDArray:
        with autograd.record():
            loss = self.loss_fn(self.net(data), label)
        loss.backward()
        self.trainer.step(batch_size)
        return loss


class _Compiled:
    """The compiled graph of one signature and how to feed it."""

    def __init__(self, traced: Any, trainer: Any):
        self.traced = traced
        self.cached = CachedGraph(traced, static_alloc=True, name="compiled_step")
        self.trainer = trainer
        params = traced.params
        self.params = params
        self.n_data = sum(self.cached._feed[:len(traced.input_names)])
        self.data_feed = self.cached._feed[:len(traced.input_names)]
        self.param_feed = self.cached._feed[len(traced.input_names):]
        self._updates = {p.name: i for i, p in enumerate(trainer._params) if p.grad_req != "null"}

    def run(self, data: NDArray, label: NDArray, batch_size: float) -> NDArray:
        from .parameter import arrays_on
        ctx = data._ctx
        pdatas = arrays_on(self.params, ctx)
        arrays = [a for a, keep in zip((data, label), self.data_feed) if keep]
        arrays += [a for a, keep in zip(pdatas, self.param_feed) if keep]
        fed_params = [p for p, keep in zip(self.params, self.param_feed) if keep]
        fed_datas = [a for a, keep in zip(pdatas, self.param_feed) if keep]
        leaves = [a._ag for a in fed_datas]
        wrt = tuple(p.name for p, leaf in zip(fed_params, leaves) if leaf is not None and leaf.grad_req != "null")
        cg = self.cached.compiled(True, ctx, wrt)
        backend = [a._data for a in arrays]
        _, outs, saved = cg.run(backend, is_train=True, record=True)
        self.cached._note_mutations(arrays)
        loss = outs[0]
        out, req = [None] * self.n_data, ["null"] * self.n_data
        for leaf in leaves:
            if leaf is None or leaf.grad_req == "null":
                out.append(None)
                req.append("null")
            else:
                out.append(leaf.grad._data)
                req.append(leaf.grad_req)
        ones = cg.ctx.xp.ones(loss.shape, loss.dtype)
        cg.backward(saved, [ones], out=out, req=req)
        self.cached._note_mutations(arrays)
        self._update(fed_params, fed_datas, leaves, batch_size)
        return NDArray._wrap(loss, ctx)

    def _update(self, params: list, datas: list, leaves: list, batch_size: float) -> None:
        """The Trainer's update of the trained parameters (its own updater: exact)."""
        tr = self.trainer
        tr._check_and_rescale_grad(tr._scale / batch_size)
        pick = [(self._updates[p.name], leaf.grad, d) for p, d, leaf in zip(params, datas, leaves)
                if p.name in self._updates and leaf is not None]
        pick.sort(key=lambda t: t[0])
        indices, grads, weights = (list(t) for t in zip(*pick)) if pick else ([], [], [])
        if indices:
            tr._updaters[0](indices, grads, weights)
