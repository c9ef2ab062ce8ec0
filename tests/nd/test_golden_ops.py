"""Every per-operator case MXNet 1.9.1 recorded, run through the eager front end."""
from __future__ import annotations

import pytest

from tests.conftest import GOLDEN
from tests.golden_ops import LATER, case_arrays, check_case, load_cases, run_eager, skip_reason

CASES = load_cases(GOLDEN) if GOLDEN.is_dir() else []


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_golden_case_eager(case, golden):
    reason = skip_reason(case)
    if reason:
        pytest.skip(reason)
    arrays = case_arrays(golden, case)
    outs, grads, aux = run_eager(case, arrays)
    check_case(case, arrays, outs, grads, aux)


def test_every_golden_operator_of_nd_is_registered(golden):
    """Acceptance [nd] 1: none of the issue's operators is skipped."""
    from hybridgraph.nd.registry import has_op
    missing = sorted({c["op"] for c in load_cases(golden) if c["op"] not in LATER and not has_op(c["op"])})
    assert not missing, f"operators with golden cases but no declaration: {missing}"
