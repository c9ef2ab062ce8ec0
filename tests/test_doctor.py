"""`hybridgraph doctor`: the facts it reads (OpenBLAS's kernel set, threads, the [jit] extra)
and the hints it gives from them."""
from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

import pytest

from hybridgraph import cli, doctor
from hybridgraph.nd.ops import blas

#: a machine where nothing leaves speed unused
GOOD = doctor.Facts(numpy_version="2.0", blas="openblas 0.3", cores=("SkylakeX",), coretype_env=None,
                    avx512=True, cpus=2, blas_threads=2, threads_from="OMP_NUM_THREADS", numba="0.60",
                    jit_on=True, cupy=False)


def _with(**changes) -> doctor.Facts:
    return dataclasses.replace(GOOD, **changes)


def test_no_hints_where_nothing_is_found():
    assert doctor.hints(GOOD) == []
    assert "no hints" in doctor.report(GOOD)


def test_avx2_kernels_forced_on_an_avx512_cpu_are_named_with_the_variable():
    (hint,) = doctor.hints(_with(cores=("Haswell",), coretype_env="Haswell"))
    assert "Haswell" in hint and "OPENBLAS_CORETYPE=Haswell forces them" in hint
    assert "OPENBLAS_CORETYPE=SkylakeX" in hint and "--gemm" in hint


def test_avx2_kernels_picked_by_openblas_itself_say_so():
    (hint,) = doctor.hints(_with(cores=("Zen",)))
    assert "does not recognise the CPU" in hint and "(or unset it)" not in hint


@pytest.mark.parametrize("facts", [
    _with(cores=("Haswell",), avx512=False),          # AVX2 kernels are the right ones
    _with(cores=("Cooperlake",)),                     # an AVX-512 kernel set
    _with(cores=()),                                  # not OpenBLAS (MKL, Accelerate)
])
def test_no_kernel_hint_where_the_kernels_fit_the_cpu(facts):
    assert not any("kernels" in h for h in doctor.hints(facts))


def test_more_blas_threads_than_cpus():
    (hint,) = doctor.hints(_with(blas_threads=8, threads_from="OPENBLAS_NUM_THREADS"))
    assert "8 threads (OPENBLAS_NUM_THREADS) on 2 available CPUs" in hint and "OMP_NUM_THREADS=2" in hint


def test_the_jit_extra_missing_or_switched_off():
    (missing,) = doctor.hints(_with(numba=None))
    assert "pip install 'hybridgraph[jit]'" in missing
    (off,) = doctor.hints(_with(jit_on=False))
    assert "HYBRIDGRAPH_JIT=0" in off
    assert "off (HYBRIDGRAPH_JIT=0)" in doctor.report(_with(jit_on=False))


def test_report_lists_every_fact():
    text = doctor.report(_with(cores=("Haswell",), coretype_env="Haswell", cupy=True))
    assert "kernels: Haswell (OPENBLAS_CORETYPE=Haswell)" in text
    assert "AVX-512 yes" in text and "numba 0.60" in text and "cupy installed" in text
    assert "hints:" in text


def test_gather_reads_this_process():
    facts = doctor.gather()
    assert facts.cpus >= 1 and facts.blas_threads >= 1
    assert facts.cores == tuple(blas.openblas_cores())


def _core_in_fresh_process(coretype: str) -> list[str]:
    env = dict(os.environ, OPENBLAS_CORETYPE=coretype)
    out = subprocess.run([sys.executable, "-c", "import numpy; from hybridgraph.nd.ops import blas; "
                          "print(','.join(blas.openblas_cores()))"],
                         env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip().split(",")


def test_openblas_cores_names_the_kernel_set_a_variable_forces():
    if not blas.openblas_cores():
        pytest.skip("numpy's BLAS is not an OpenBLAS that names its kernel set")
    got = _core_in_fresh_process("Haswell")
    if got != ["Haswell"]:
        pytest.skip(f"this OpenBLAS is not built for several CPUs (DYNAMIC_ARCH): {got}")
    assert _core_in_fresh_process("Nehalem") == ["Nehalem"]       # any x86-64 CPU runs it


def test_gemm_rates_run_each_setting_in_a_fresh_process():
    facts = dataclasses.replace(doctor.gather(), coretype_env="Haswell")
    rows = doctor.gemm_rates(facts, size=64)
    labels = [r[0] for r in rows]
    assert labels[:2] == ["as set", "OPENBLAS_CORETYPE unset"]
    if facts.avx512 and facts.cores:
        assert dict((r[0], r[1]) for r in rows)["OPENBLAS_CORETYPE=SkylakeX"] == "SkylakeX"
    assert all(rate > 0 for _, _, rate in rows)


def test_a_failing_probe_process_is_reported_not_dropped(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/bin/false")
    rows = doctor.gemm_rates(_with(coretype_env=None, avx512=False), size=64)
    assert rows == [("as set", "-", "failed: exit status 1")]


def test_a_gemm_size_below_one_is_refused(capsys):
    assert cli.main(["doctor", "--gemm", "--size", "0"]) == 2
    assert "the GEMM size must be a positive integer, got 0" in capsys.readouterr().err


def test_doctor_command(capsys):
    assert cli.main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "BLAS" in out and "compiled kernels" in out
