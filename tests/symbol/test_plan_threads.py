"""The plan cache evicting plans of a graph another thread is calling: calls keep working and
keep their results (an evicted plan's idle arenas go to spare storage atomically, and a
hybridized call reads the plan that ran, not the graph's `last_plan`, which eviction clears)."""
from __future__ import annotations

import threading

import numpy as np

from hybridgraph import nd
from hybridgraph.gluon import nn
from hybridgraph.symbol.plan import plan_cache


def test_calls_survive_evictions_from_another_thread(monkeypatch):
    monkeypatch.setattr(plan_cache, "PROTECT", 0)
    old = plan_cache.set_plan_cache_limit(1)     # every new plan or arena evicts the others
    stop = threading.Event()
    errors: list[BaseException] = []

    def churn():
        other = nn.Dense(4)
        other.initialize()
        other.hybridize()
        i = 0
        try:
            while not stop.is_set():
                i += 1
                other(nd.ones((1 + i % 7, 3)))
        except BaseException as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(exc)

    net = nn.HybridSequential()
    net.add(nn.Dense(8), nn.Dense(3))
    net.initialize()
    threads = [threading.Thread(target=churn) for _ in range(2)]
    for t in threads:
        t.start()
    try:
        for it in range(300):
            x = nd.array(np.random.default_rng(it).standard_normal((1 + it % 5, 5)))
            net.hybridize(False)
            want = net(x).asnumpy()
            net.hybridize()
            np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
    finally:
        stop.set()
        for t in threads:
            t.join()
        plan_cache.set_plan_cache_limit(old)
    assert not errors, errors
