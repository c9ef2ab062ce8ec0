"""`_fused_elemwise`: one node running a whole tree of elementwise operators.

Made only by the fuse_elemwise graph pass (symbol/passes/fuse_elemwise.py);
exported JSON never contains it (export writes the unoptimised graph). Its
`program` attribute is a JSON list of steps `[op name, attributes, refs]`:
registers 0..num_args-1 are the node's inputs and step j writes register
num_args + j; the last step is the output. Every step's operator is an
ordinary registry entry, so everything about a step comes from its OpDef.

* numpy: the steps run into one preallocated output buffer. Values on the
  "spine" (the chain the output is computed in place along, following the
  operators' `inplace` pairs) live in the output buffer itself; other values
  use a few temporaries, reused in place where `inplace` allows. Kernels that
  accept `out=` (`writes_out`) write there; others fall back to a copy. The
  schedule runs as generated straight-line code (`schedule_source`: one Python
  function per program, compiled once and cached with the parsed program);
  `run_schedule` is the step-by-step reference it is tested against.
* cupy: one generated `cupy.ElementwiseKernel` built from the steps' C
  expressions (`OpDef.cexpr`); `cuda_source` is the pure code generator.
  Programs with a step lacking a C expression run the numpy schedule on cupy.
* gradient: the steps are replayed with `F` and each step's own gradient rule
  is applied in reverse (fused nodes recompute their intermediates in the
  backward graph, like MXNet's mirror mode), so autodiff and higher-order
  gradients work unchanged.
"""
from __future__ import annotations

import functools
import json
import math
import re
from typing import Any, NamedTuple

import numpy as np

from ..attrs import Attr, Attrs
from ..errors import MXNetError
from ..registry import ZERO_GRAD, get_op, register, same_shape

OUT = -1  # destination code: the node's output buffer


class Step(NamedTuple):
    op: Any          # OpDef
    attrs: Attrs
    refs: tuple      # register numbers of the operands


class Program(NamedTuple):
    """A parsed program plus its numpy buffer schedule (computed once per program text)."""

    steps: tuple
    num_args: int
    dests: tuple      # per step: OUT, a temporary index, or None (the kernel allocates)
    num_temps: int
    same_shape: bool  # every step uses the shared same-shape rule (no broadcasting)
    run: Any = None   # the schedule as generated straight-line code: run(xp, out, *arrays)


def encode_program(steps: list[tuple[str, dict, list[int]]]) -> str:
    """The `program` attribute for steps (op name, MXNet attribute strings, operand registers)."""
    return json.dumps([[name, dict(given), list(refs)] for name, given, refs in steps], separators=(",", ":"))


@functools.lru_cache(maxsize=1024)
def parse_program(text: str, num_args: int) -> Program:
    """Parse and schedule a program attribute (cached by its text)."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MXNetError(f"operator _fused_elemwise: attribute 'program' is not valid JSON: {exc}") from None
    steps = []
    for j, (name, given, refs) in enumerate(raw):
        op = get_op(name)
        if any(not 0 <= r < num_args + j for r in refs):
            raise MXNetError(f"operator _fused_elemwise: step {j} ({name}) reads registers {refs}; only "
                             f"0..{num_args + j - 1} exist")
        steps.append(Step(op, op.parse_attrs(given), tuple(refs)))
    if not steps:
        raise MXNetError("operator _fused_elemwise: the program has no steps")
    dests, num_temps = _schedule(steps, num_args)
    prog = Program(tuple(steps), num_args, dests, num_temps, all(s.op.infer_shape is same_shape for s in steps))
    return prog._replace(run=generate_schedule(prog))


def _program(a: Attrs) -> Program:
    return parse_program(a.program, a.num_args)


# ---------------------------------------------------------------------------
# the numpy schedule


def _spine(steps: list[Step], num_args: int, uses: list[int]) -> set[int]:
    """Steps whose value can live in the output buffer: from the last step down, through
    operands the step may overwrite (`inplace` pair (k, 0)) and that die there."""
    spine, j = set(), len(steps) - 1
    while steps[j].op.writes_out:
        spine.add(j)
        nxt = None
        for k, r in enumerate(steps[j].refs):
            p = r - num_args
            if (p >= 0 and (k, 0) in steps[j].op.inplace and steps[p].op.writes_out
                    and uses[r] == steps[j].refs.count(r) == 1):
                nxt = p
                break
        if nxt is None:
            break
        j = nxt
    return spine


def _schedule(steps: list[Step], num_args: int) -> tuple[tuple, int]:
    """Per-step destination buffer: the output (spine), a temporary, or None."""
    uses = [0] * (num_args + len(steps))
    for s in steps:
        for r in s.refs:
            uses[r] += 1
    spine = _spine(steps, num_args, uses)
    holder: dict[int, int] = {}   # register -> temporary holding it
    free: list[int] = []
    num_temps = 0
    dests = []
    left = list(uses)
    for j, s in enumerate(steps):
        dying = []
        for r in dict.fromkeys(s.refs):
            left[r] -= s.refs.count(r)
            if left[r] == 0 and r in holder:
                dying.append(r)
        dest = None
        if j in spine:
            dest = OUT
        elif s.op.writes_out:
            reuse = [holder[r] for k, r in enumerate(s.refs) if r in dying and (k, 0) in s.op.inplace]
            if reuse:
                dest = reuse[0]
            elif free:
                dest = free.pop()
            else:
                dest, num_temps = num_temps, num_temps + 1
        for r in dying:
            t = holder.pop(r)
            if t != dest:
                free.append(t)
        if isinstance(dest, int) and dest != OUT:
            holder[num_args + j] = dest
        dests.append(dest)
    return tuple(dests), num_temps


def run_schedule(xp, prog: Program, arrays: tuple, out):
    """Evaluate the program into `out` following its schedule, step by step (the reference
    for the generated code of `generate_schedule`, which the operator runs)."""
    regs = list(arrays)
    temps: list = [None] * prog.num_temps
    for s, dest in zip(prog.steps, prog.dests):
        args = [regs[r] for r in s.refs]
        if dest is None:
            regs.append(s.op.compute(xp, s.attrs, args)[0])
            continue
        if dest == OUT:
            buf = out
        else:
            if temps[dest] is None:
                temps[dest] = xp.empty_like(out)
            buf = temps[dest]
        res = s.op.forward(xp, s.attrs, *args, out=(buf,))[0]
        if res is not buf:      # a kernel may ignore `out` for some dtypes
            buf[...] = res
        regs.append(buf)
    if regs[-1] is not out:
        out[...] = regs[-1]
    return out


def schedule_source(prog: Program) -> tuple[str, dict]:
    """The schedule as the source of one function `run(xp, out, r0, r1, ...)` with its namespace:
    one kernel call per step with the step's buffer as `out=`, temporaries allocated on entry."""
    args = "".join(f", r{i}" for i in range(prog.num_args))
    lines = [f"def run(xp, out{args}):"]
    lines += [f"    t{k} = xp.empty_like(out)" for k in range(prog.num_temps)]
    ns: dict = {}
    for j, (s, dest) in enumerate(zip(prog.steps, prog.dests)):
        me, operands = f"r{prog.num_args + j}", ", ".join(f"r{r}" for r in s.refs)
        ns[f"A{j}"] = s.attrs
        if dest is None:
            ns[f"C{j}"] = s.op.compute
            lines.append(f"    {me} = C{j}(xp, A{j}, [{operands}])[0]")
            continue
        ns[f"K{j}"] = s.op.forward
        buf = "out" if dest == OUT else f"t{dest}"
        lines += [f"    {me} = K{j}(xp, A{j}, {operands + ', ' if operands else ''}out=({buf},))[0]",
                  f"    if {me} is not {buf}:",        # a kernel may ignore `out` for some dtypes
                  f"        {buf}[...] = {me}",
                  f"        {me} = {buf}"]
    last = f"r{prog.num_args + len(prog.steps) - 1}"
    lines += [f"    if {last} is not out:", f"        out[...] = {last}", "    return out"]
    return "\n".join(lines) + "\n", ns


def generate_schedule(prog: Program):
    """Compile `schedule_source` once per program (parse_program caches the result)."""
    source, ns = schedule_source(prog)
    exec(compile(source, "<fused elementwise program>", "exec"), ns)  # noqa: S102 - generated above
    return ns["run"]


# ---------------------------------------------------------------------------
# the cupy code generator

_IDENT = re.compile(r"\b([A-Za-z_]\w*)\b")


def _literal(value: Any) -> str:
    """A C literal of an attribute value, cast to the kernel's type T."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"((T)({value}))"
    v = float(value)
    if math.isnan(v):
        return "((T)(0.0 / 0.0))"
    if math.isinf(v):
        return "((T)(1.0 / 0.0))" if v > 0 else "((T)(-1.0 / 0.0))"
    return f"((T)({v!r}))"


def step_expr(s: Step, operands: list[str]) -> str | None:
    """One step's C expression with its operands and scalar attributes substituted."""
    cexpr = s.op.cexpr(s.attrs) if callable(s.op.cexpr) else s.op.cexpr
    if cexpr is None:
        return None
    attrs = s.op.schema.attrs

    def sub(m: re.Match) -> str:
        word = m.group(1)
        if re.fullmatch(r"x\d+", word):
            return operands[int(word[1:])]
        if word in attrs and isinstance(s.attrs.get(word), (int, float)):
            return _literal(s.attrs.get(word))
        return word
    return _IDENT.sub(sub, cexpr)


def cuda_source(prog: Program) -> tuple[str, str, str] | None:
    """(in_params, out_params, operation) of one cupy.ElementwiseKernel computing the program,
    or None when some step has no C expression."""
    names = [f"in{i}" for i in range(prog.num_args)]
    lines = []
    for j, s in enumerate(prog.steps):
        expr = step_expr(s, [names[r] for r in s.refs])
        if expr is None:
            return None
        if j == len(prog.steps) - 1:
            lines.append(f"out0 = (T)({expr});")
        else:
            names.append(f"v{j}")
            lines.append(f"T v{j} = (T)({expr});")
    in_params = ", ".join(f"T in{i}" for i in range(prog.num_args))
    return in_params, "T out0", "\n".join(lines)


_KERNELS: dict[str, Any] = {}


def _cupy_kernel(xp, text: str, prog: Program):
    if text not in _KERNELS:
        src = cuda_source(prog)
        _KERNELS[text] = None if src is None else xp.ElementwiseKernel(*src, name="hybridgraph_fused_elemwise")
    return _KERNELS[text]


# ---------------------------------------------------------------------------
# the operator


def _fused_shape(a: Attrs, *shapes):
    prog = _program(a)
    if prog.same_shape:
        return same_shape(a, *shapes)
    regs = list(shapes)
    for s in prog.steps:
        res = s.op.infer_shape(s.attrs, *[regs[r] for r in s.refs])
        if res is None or res[1][0] is None:
            return None
        regs.append(tuple(res[1][0]))
    return list(shapes), [regs[-1]]


@register("_fused_elemwise", inputs=lambda a: tuple(f"data{i}" for i in range(a.num_args or 0)),
          attrs={"program": Attr("str", doc="JSON list of steps [op name, attributes, operand registers]."),
                 "num_args": Attr("int", doc="Number of inputs (registers 0..num_args-1).")},
          infer_shape=_fused_shape, writes_out=True, hint="fused_elemwise")
def fused_elemwise(xp, a: Attrs, *arrays, out=None):
    """Evaluate a fused tree of elementwise operators in one pass over the output."""
    prog = _program(a)
    if len(arrays) != prog.num_args:
        raise MXNetError(f"operator _fused_elemwise: expected {prog.num_args} inputs, got {len(arrays)}")
    buf = out[0] if out is not None else None
    if buf is None:
        shape = np.broadcast_shapes(*(x.shape for x in arrays))
        buf = xp.empty(shape, dtype=arrays[0].dtype)
    if xp is not np:
        kernel = _cupy_kernel(xp, a.program, prog)
        if kernel is not None:
            kernel(*arrays, buf)
            return (buf,)
    return (prog.run(xp, buf, *arrays),)


def _sum(F, grads: list):
    total = grads[0]
    for g in grads[1:]:
        total = F.elemwise_add(total, g)
    return total


@fused_elemwise.def_gradient
def _fused_gradient(F, a, inputs, outputs, ograds):
    """Replay the steps with F, then apply each step's gradient rule in reverse."""
    prog = _program(a)
    regs = list(inputs)
    for s in prog.steps[:-1]:
        regs.append(getattr(F, s.op.name)(*[regs[r] for r in s.refs], **s.attrs.given))
    regs.append(outputs[0])
    grads: dict[int, list] = {len(regs) - 1: [ograds[0]]}
    for j in range(len(prog.steps) - 1, -1, -1):
        s, me = prog.steps[j], prog.num_args + j
        if me not in grads or s.op.gradient == ZERO_GRAD:
            continue
        if s.op.gradient is None:
            raise MXNetError(f"operator {s.op.name} (step {j} of a fused elementwise node) is not "
                             "differentiable")
        ins = [regs[r] for r in s.refs]
        res = s.op.gradient(F, s.attrs, ins, [regs[me]], [_sum(F, grads[me])])
        for r, g in zip(s.refs, res):
            if g is not None:
                grads.setdefault(r, []).append(g)
    return [_sum(F, grads[k]) if k in grads else None for k in range(prog.num_args)]
