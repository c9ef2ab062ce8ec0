"""Per-node monitoring of a step-by-step run: the one reporter behind
`Executor.set_monitor_callback` and `HybridBlock.register_op_hook`.

With `monitor_all`, every input is reported before its step runs (MXNet's order: the names
come through even when the kernel then fails); after the step every output, hidden ones too
(LRN's tmp_norm), is reported as `<node>_<slot>`. Input slots have the names MXNet's monitor
gives them (`OpDef.monitor_input_names`: `input<i>` for operators MXNet registers without
FListInputNames, e.g. Activation).
"""
from __future__ import annotations

from collections.abc import Callable

from hybridgraph.nd.ndarray import NDArray

from .schedule import Step


def step_reporter(callback: Callable[[str, str, NDArray], None], monitor_all: bool, ctx,
                  variables: dict | None = None) -> Callable[[Step, dict, bool], None]:
    """A `monitor(step, env, done)` for Plan.forward that calls `callback(name, op_name, array)`.

    `variables` (entry id -> name): with monitor_all, an input read straight from a graph
    variable is first reported under the variable's own name (the executor's monitor)."""
    wrap = NDArray._wrap

    def report(st: Step, env: dict, done: bool) -> None:
        op_name = st.op.name
        if not done:
            if monitor_all:
                for name, eid in zip(st.op.monitor_input_names(st.attrs), st.inputs):
                    if variables and eid in variables:
                        callback(variables[eid], op_name, wrap(env[eid], ctx))
                    callback(f"{st.name}_{name}", op_name, wrap(env[eid], ctx))
            return
        for name, eid in zip(st.op.output_names(st.attrs), st.outputs):
            callback(f"{st.name}_{name}", op_name, wrap(env[eid], ctx))
    return report
