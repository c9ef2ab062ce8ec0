"""Start N workers over MPI: ``python -m hybridgraph.launch -n N [-H hostfile] python train.py``.

MXNet's `tools/launch.py` command line, mapped onto ``mpiexec`` (MPICH's Hydra,
from ``pip install 'hybridgraph[dist]'``, or any ``mpiexec`` on PATH). There are
no parameter servers: workers allreduce (``kvstore='dist_sync'``), so ``-s`` is
ignored. ``--launcher local`` runs every worker on this machine; ``ssh`` and
``mpi`` start them on the hosts of ``-H hostfile`` (one host per line,
optionally ``host:slots``). Each worker runs under a small supervisor that
reports, with its rank, a worker killed by a signal (the MPI launcher then ends
the others); a worker that raises reports itself (see `kvstore.comm`).
"""
from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys

__all__ = ["build_command", "main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m hybridgraph.launch",
                                description="Launch a distributed (dist_sync) training job over MPI.")
    p.add_argument("-n", "--num-workers", required=True, type=int, help="number of worker processes")
    p.add_argument("-s", "--num-servers", type=int, help="ignored: there are no parameter servers (allreduce)")
    p.add_argument("-H", "--hostfile", type=str, help="hosts to run on (required for ssh and mpi launchers)")
    p.add_argument("--launcher", type=str, default=None, choices=["local", "ssh", "mpi", "sge", "yarn"],
                   help="local (default without -H), ssh (default with -H) or mpi")
    p.add_argument("--env", action="append", default=[],
                   help="VAR or VAR:VALUE, passed to every worker (repeatable)")
    p.add_argument("--env-worker", action="append", default=[], help="VAR:VALUE for the workers")
    p.add_argument("--env-server", action="append", default=[], help="ignored: there are no servers")
    p.add_argument("--sync-dst-dir", type=str, help="not supported: copy the code to the hosts yourself")
    p.add_argument("--p3", action="store_true", help="not supported (MXNet's P3 parameter servers)")
    p.add_argument("--mpiexec", type=str, default=None, help="the mpiexec to use (default: next to python, "
                   "then PATH)")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds a worker waits for the others in a collective (HYBRIDGRAPH_KVSTORE_TIMEOUT)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="command for launching the program")
    return p


def _find_mpiexec(explicit: str | None) -> str:
    if explicit:
        return explicit
    here = os.path.dirname(sys.executable)
    found = shutil.which("mpiexec", path=os.pathsep.join([here, os.environ.get("PATH", "")]))
    if found is None:
        raise SystemExit("hybridgraph.launch: mpiexec not found. Install an MPI: pip install 'hybridgraph[dist]' "
                         "(mpi4py and mpich), or pass --mpiexec PATH")
    return found


def _is_open_mpi(mpiexec: str) -> bool:
    """Whether `mpiexec` is Open MPI's (else MPICH / Hydra syntax is used)."""
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return "Open MPI" in out.stdout + out.stderr or "OpenRTE" in out.stdout + out.stderr


def build_command(argv: list[str]) -> list[str]:
    """The mpiexec command line for `argv` (the launcher's arguments)."""
    args = _parser().parse_args(argv)
    if not args.command:
        raise SystemExit("hybridgraph.launch: no command given (e.g. python train.py)")
    if args.num_workers < 1:
        raise SystemExit(f"hybridgraph.launch: -n must be at least 1, got {args.num_workers}")
    if args.launcher in ("sge", "yarn"):
        raise SystemExit(f"hybridgraph.launch: --launcher {args.launcher} is not supported; use local, ssh or mpi")
    if args.sync_dst_dir or args.p3:
        raise SystemExit("hybridgraph.launch: --sync-dst-dir and --p3 (parameter-server features) are not supported")
    if args.num_servers:
        print("hybridgraph.launch: -s ignored: workers allreduce, there are no parameter servers", file=sys.stderr)
    launcher = args.launcher or ("ssh" if args.hostfile else "local")
    if launcher in ("ssh", "mpi") and not args.hostfile:
        raise SystemExit(f"hybridgraph.launch: --launcher {launcher} needs -H hostfile")
    mpiexec = _find_mpiexec(args.mpiexec)
    env = {}
    for item in args.env + args.env_worker:
        name, sep, value = item.partition(":")
        env[name] = value if sep else os.environ.get(name, "")
    if args.timeout is not None:
        env["HYBRIDGRAPH_KVSTORE_TIMEOUT"] = str(args.timeout)
    cmd = [mpiexec, "-n", str(args.num_workers)]
    if _is_open_mpi(mpiexec):  # Open MPI's mpirun spells the options differently from MPICH's Hydra
        cmd += ["--hostfile", args.hostfile] if args.hostfile else []
        for name, value in env.items():
            cmd += ["-x", f"{name}={value}"]
    else:
        if launcher == "local":
            cmd += ["-hosts", "localhost"] if not args.hostfile else ["-f", args.hostfile]
        else:
            cmd += ["-f", args.hostfile]
            if launcher == "ssh":
                cmd += ["-launcher", "ssh"]
        for name, value in env.items():
            cmd += ["-genv", name, value]
    command = args.command[1:] if args.command[0] == "--" else args.command
    return [*cmd, sys.executable, "-m", "hybridgraph.launch", "--supervise", "--", *command]


def _supervise(command: list[str]) -> int:
    """Run one worker; report its rank if a signal kills it."""
    child = subprocess.Popen(command, close_fds=False)  # the MPI launcher's descriptors (PMI_FD) stay open

    def forward(signum, _frame):
        child.send_signal(signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, forward)
    code = child.wait()
    if code < 0:
        rank = next((os.environ[v] for v in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK") if v in os.environ),
                    "?")
        name = signal.Signals(-code).name
        print(f"hybridgraph.launch: worker rank {rank} (pid {child.pid} on {socket.gethostname()}) was killed by "
              f"{name}; the other workers are stopped", file=sys.stderr, flush=True)
        return 128 - code
    return code


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:2] == ["--supervise", "--"]:
        return _supervise(argv[2:])
    cmd = build_command(argv)
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
