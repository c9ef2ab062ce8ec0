"""Per-node monitoring of a step-by-step run: the one reporter behind
`Executor.set_monitor_callback` and `HybridBlock.register_op_hook`.

After each step, every visible output (and with `monitor_all` first every input) is
reported as `<node>_<slot>`, MXNet's names: an input slot is named by the operator's
declared input name, or `input<i>` for operators MXNet registers without input names
(`OpDef.named_inputs`, e.g. Activation).
"""
from __future__ import annotations

from collections.abc import Callable

from hybridgraph.nd.ndarray import NDArray

from .schedule import Step


def input_slot_names(st: Step) -> tuple:
    """The names a monitor gives the inputs of step `st` (without the node prefix)."""
    if st.op.named_inputs:
        return st.op.input_names(st.attrs)
    return tuple(f"input{i}" for i in range(len(st.inputs)))


def step_reporter(callback: Callable[[str, str, NDArray], None], monitor_all: bool, ctx,
                  variables: dict | None = None) -> Callable[[Step, dict], None]:
    """A `monitor(step, env)` for Plan.forward that calls `callback(name, op_name, array)`.

    `variables` (entry id -> name): with monitor_all, an input read straight from a graph
    variable is first reported under the variable's own name (the executor's monitor)."""
    wrap = NDArray._wrap

    def report(st: Step, env: dict) -> None:
        op_name = st.op.name
        if monitor_all:
            for name, eid in zip(input_slot_names(st), st.inputs):
                if variables and eid in variables:
                    callback(variables[eid], op_name, wrap(env[eid], ctx))
                callback(f"{st.name}_{name}", op_name, wrap(env[eid], ctx))
        nvis = st.op.num_visible_outputs(st.attrs)
        for name, eid in list(zip(st.op.output_names(st.attrs), st.outputs))[:nvis]:
            callback(f"{st.name}_{name}", op_name, wrap(env[eid], ctx))
    return report
