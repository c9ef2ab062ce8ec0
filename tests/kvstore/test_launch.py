"""`python -m hybridgraph.launch`: MXNet's launcher arguments mapped onto mpiexec."""
from __future__ import annotations

import sys

import pytest

from hybridgraph.kvstore.comm import launcher_env
from hybridgraph.launch import build_command
from hybridgraph.nd.errors import MXNetError


def test_local_launch_maps_onto_mpiexec():
    cmd = build_command(["-n", "3", "--mpiexec", "/x/mpiexec", "--env", "A:1", "--timeout", "5", "python", "t.py"])
    assert cmd[:5] == ["/x/mpiexec", "-n", "3", "-hosts", "localhost"]
    assert cmd[5:11] == ["-genv", "A", "1", "-genv", "HYBRIDGRAPH_KVSTORE_TIMEOUT", "5.0"]
    assert cmd[11:] == [sys.executable, "-m", "hybridgraph.launch", "--supervise", "--", "python", "t.py"]


def test_hostfile_launchers(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("a\nb\n")
    ssh = build_command(["-n", "4", "-H", str(hosts), "--mpiexec", "m", "python", "t.py"])
    assert ssh[:7] == ["m", "-n", "4", "-f", str(hosts), "-launcher", "ssh"]
    mpi = build_command(["-n", "4", "-H", str(hosts), "--launcher", "mpi", "--mpiexec", "m", "python", "t.py"])
    assert mpi[:5] == ["m", "-n", "4", "-f", str(hosts)] and "-launcher" not in mpi


@pytest.mark.parametrize("argv, message", [
    (["-n", "2", "--launcher", "ssh", "python", "t.py"], "needs -H hostfile"),
    (["-n", "2", "--launcher", "yarn", "python", "t.py"], "not supported"),
    (["-n", "0", "python", "t.py"], "at least 1"),
    (["-n", "2"], "no command"),
])
def test_bad_arguments_are_explained(argv, message):
    with pytest.raises(SystemExit, match=message):
        build_command([*argv[:2], "--mpiexec", "m", *argv[2:]])


def test_rank_and_size_from_the_launchers_environment(monkeypatch):
    for var in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_RANK",
                "PMIX_RANK", "DMLC_ROLE", "DMLC_NUM_WORKER"):
        monkeypatch.delenv(var, raising=False)
    assert launcher_env() is None
    monkeypatch.setenv("OMPI_COMM_WORLD_RANK", "2")
    monkeypatch.setenv("OMPI_COMM_WORLD_SIZE", "4")
    assert launcher_env() == (2, 4, "Open MPI mpirun")
    monkeypatch.setenv("PMI_RANK", "1")
    monkeypatch.setenv("PMI_SIZE", "2")
    assert launcher_env()[:2] == (1, 2)
    for var in ("PMI_RANK", "OMPI_COMM_WORLD_RANK"):
        monkeypatch.delenv(var)
    monkeypatch.setenv("DMLC_ROLE", "server")
    with pytest.raises(MXNetError, match="hybridgraph.launch -n N"):
        launcher_env()


def test_open_mpi_spelling(tmp_path):
    fake = tmp_path / "mpiexec"
    fake.write_text("#!/bin/sh\necho 'mpiexec (OpenRTE) 4.1.2'\n")
    fake.chmod(0o755)
    cmd = build_command(["-n", "2", "-H", "hosts", "--mpiexec", str(fake), "--env", "A:1", "python", "t.py"])
    assert cmd[:7] == [str(fake), "-n", "2", "--hostfile", "hosts", "-x", "A=1"]
