"""mx.profiler: operator calls (eager, bound executor, hybridized) and user ranges recorded while
running, written as Chrome-trace JSON, and aggregated per name by dumps()."""
import json

import pytest

import hybridgraph as mx
from hybridgraph import profiler


@pytest.fixture
def prof(tmp_path):
    profiler.set_config(profile_all=True, filename=str(tmp_path / "trace.json"), aggregate_stats=True)
    profiler.dumps(reset=True)
    profiler.dump(True)  # start from an empty event list
    yield tmp_path / "trace.json"
    profiler.set_state("stop")
    profiler.resume()
    profiler.set_config(profile_all=False, filename="profile.json", aggregate_stats=False)


def _ops(path):
    doc = json.loads(path.read_text())
    return doc, [e for e in doc["traceEvents"] if e["ph"] == "X"]


def test_eager_executor_and_hybridized_calls_are_traced(prof):
    profiler.set_state("run")
    x = mx.nd.ones((2, 3))
    mx.nd.sqrt(x)
    y = x + 1
    y = y + 1
    exe = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=2, name="fc").simple_bind(mx.cpu(), data=(2, 3))
    exe.forward()
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize()
    net.hybridize()
    net(x)
    net(x)
    profiler.set_state("stop")
    mx.nd.sqrt(x)  # after stop: not recorded
    profiler.dump()
    doc, ops = _ops(prof)
    assert doc["displayTimeUnit"] == "ms"
    names = [(e["cat"], e["name"]) for e in ops]
    assert names.count(("imperative", "sqrt")) == 1 and names.count(("imperative", "_plus_scalar")) == 2
    assert names.count(("symbolic", "FullyConnected")) == 3  # one executor step, two hybridized calls
    assert all(e["dur"] >= 0 and isinstance(e["ts"], float) for e in ops)
    stats = json.loads(profiler.dumps(format="json"))
    assert stats["Unit"] == {"Time": "ms", "Memory": "kB"} and "Memory" in stats
    assert stats["Time"]["operator"]["_plus_scalar"]["Count"] == 2


def test_pause_resume_and_categories(prof):
    profiler.set_config(profile_all=False, profile_imperative=False, profile_symbolic=True)
    profiler.set_state("run")
    mx.nd.sqrt(mx.nd.ones((2,)))  # imperative switched off
    profiler.set_config(profile_imperative=True)
    profiler.pause()
    mx.nd.exp(mx.nd.ones((2,)))
    profiler.resume()
    mx.nd.log(mx.nd.ones((2,)))
    profiler.set_state("stop")
    profiler.dump()
    _, ops = _ops(prof)
    names = {e["name"] for e in ops}
    assert "log" in names and "exp" not in names and "sqrt" not in names


def test_user_ranges_counters_markers_and_continuous_dump(prof):
    profiler.set_state("run")
    dom = profiler.Domain("PyDomain")
    task = dom.new_task("step")
    task.start()
    task.stop()
    ev = profiler.Event("ev")
    ev.start()
    ev.stop()
    counter = dom.new_counter("items", 5)
    counter += 2
    dom.new_marker("here").mark("process")
    profiler.dump(False)
    size1 = prof.stat().st_size
    profiler.Event("later").start()
    mx.nd.ones((1,))
    profiler.dump(False)
    assert prof.stat().st_size >= size1
    doc = json.loads(prof.read_text())
    kinds = {(e["ph"], e["name"]) for e in doc["traceEvents"]}
    assert {("X", "step"), ("X", "ev"), ("C", "items"), ("i", "here")} <= kinds
    assert counter.value == 7
    stats = json.loads(profiler.dumps(format="json", sort_by="count", ascending=True))
    assert stats["Time"]["PyDomain"]["step"]["Count"] == 1 and "ev" in stats["Time"]["Custom"]
    table = profiler.dumps()
    assert "operator" in table and "Total Count" in table
    with pytest.raises(mx.MXNetError, match="without start"):
        profiler.Task(dom, "never").stop()


def test_dumps_sorting_and_bad_arguments(prof):
    profiler.set_state("run")
    for _ in range(3):
        mx.nd.sqrt(mx.nd.ones((2,)))
    profiler.set_state("stop")
    for key, field in (("count", "Count"), ("total", "Total"), ("avg", "Avg")):
        for asc in (True, False):
            rows = json.loads(profiler.dumps(format="json", sort_by=key, ascending=asc))["Time"]["operator"]
            vals = [r[field] for r in rows.values()]
            assert vals == sorted(vals, reverse=not asc)
    with pytest.raises(ValueError, match="sort_by"):
        profiler.dumps(sort_by="name")
    with pytest.raises(ValueError, match="state"):
        profiler.set_state("go")
    with pytest.raises(mx.MXNetError, match="unknown option"):
        profiler.set_config(bogus=1)
    assert profiler.dumps(reset=True) and json.loads(profiler.dumps(format="json"))["Time"] == {}
