"""Memory planning and compiled execution plans (see compiled.py for the public API).

schedule.py lowers a graph to steps over entry ids; memory.py plans their
storage (liveness, in-place, pooled best fit) and validates plans; mirror.py
rewrites training schedules to recompute cheap values in the backward;
codegen.py turns a planned schedule into straight-line Python; compiled.py
ties them together (`compile_graph`, `CompiledGraph`, `Plan`).
"""
from __future__ import annotations

from .compiled import CompiledGraph, ExecutionError, Plan, compile_graph, lower
from .memory import MemoryPlan, MemoryStats, PlanError, plan_memory, validate_plan
from .schedule import Schedule, Step, build_schedule

__all__ = ["CompiledGraph", "ExecutionError", "Plan", "compile_graph", "lower", "MemoryPlan", "MemoryStats",
           "PlanError", "plan_memory", "validate_plan", "Schedule", "Step", "build_schedule"]
