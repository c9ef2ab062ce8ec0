"""Running a benchmark script under real MXNet 1.9.1, in its own venv, in a subprocess."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: source of `peak_kb()` for benchmark scripts run in fresh processes: this process's own
#: high-water mark (VmHWM; ru_maxrss can report the parent's peak inherited across fork + exec)
PEAK_KB_SOURCE = r'''
def peak_kb():
    import resource
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
'''


def find_mxnet_python() -> str | None:
    """The Python of a venv with MXNet 1.9.1: HYBRIDGRAPH_MXNET_PYTHON, .mxvenv, /work/mxvenv."""
    for c in (os.environ.get("HYBRIDGRAPH_MXNET_PYTHON", ""), str(ROOT / ".mxvenv" / "bin" / "python"),
              "/work/mxvenv/bin/python"):
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return c
    return None


def run_mxnet_script(script: str, args: list, timeout: int) -> tuple[dict | None, str]:
    """Run `script` (which prints one JSON line last) under MXNet with `args` as JSON in argv[1],
    with numpy's BLAS thread budget; returns (its result or None, a note saying what ran)."""
    python = find_mxnet_python()
    if python is None:
        return None, "MXNet 1.9.1 not run: no venv (set HYBRIDGRAPH_MXNET_PYTHON or run .ci/run)"
    env = dict(os.environ)
    if env.get("OPENBLAS_NUM_THREADS") and "OMP_NUM_THREADS" not in env:
        env["OMP_NUM_THREADS"] = env["OPENBLAS_NUM_THREADS"]      # same thread budget as numpy's BLAS
    proc = subprocess.run([python, "-c", script, json.dumps(args)], check=False, capture_output=True,
                          text=True, timeout=timeout, env=env)
    if proc.returncode != 0:
        return None, f"MXNet 1.9.1 run failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}"
    return json.loads(proc.stdout.strip().splitlines()[-1]), f"MXNet 1.9.1 from {python}"
