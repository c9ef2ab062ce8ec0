"""Large zero arrays (`nd.zeros`, gradient buffers) cost no resident memory until written,
whatever glibc's malloc did before (nd/ops/init.py: lazy_zeros)."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from hybridgraph import nd
from hybridgraph.nd.ops.init import LAZY_ZEROS_BYTES, lazy_zeros

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/statm")


def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_a_large_zero_array_is_not_resident_until_written():
    # freeing a large block raises glibc's dynamic mmap threshold: numpy's calloc would then
    # take the next blocks of that size from the heap and write every byte
    for _ in range(3):
        tmp = np.ones(24 << 18, np.float32)      # 24 MiB
        del tmp
    before = _rss_bytes()
    arrays = [nd.zeros((6, 1 << 20)) for _ in range(4)]      # 4 x 24 MiB of float32 zeros
    grown = _rss_bytes() - before
    assert grown < (16 << 20), grown
    a = arrays[0]
    assert a.shape == (6, 1 << 20) and a.dtype == np.float32
    assert float(a.sum().asscalar()) == 0.0
    a[:] = 1.5
    assert float(a[5, 7].asscalar()) == 1.5 and _rss_bytes() - before >= (20 << 20)


def test_small_or_non_numpy_requests_are_plain_zeros():
    small = lazy_zeros(np, (4, 4), np.float64)
    assert small.flags.owndata and small.dtype == np.float64 and not small.any()
    big = lazy_zeros(np, (LAZY_ZEROS_BYTES // 2,), np.int16)
    assert big.flags.writeable and big.shape == (LAZY_ZEROS_BYTES // 2,) and not big.any()
    big[3] = 7
    assert big.sum() == 7


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_writes_its_own_copy():
    a = lazy_zeros(np, (LAZY_ZEROS_BYTES,), np.uint8)
    pid = os.fork()
    if pid == 0:                       # child: write, exit without running pytest's teardown
        a[:] = 9
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert not a.any()
