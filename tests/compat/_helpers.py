"""Running one script text under MXNet's interpreter and under hybridgraph's."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_script(python: Path | str, text: str, args: list, tmp_path: Path, name: str,
               timeout: float = 120) -> subprocess.CompletedProcess:
    """Write `text` to tmp_path/name.py and run it with `python`, the repo on PYTHONPATH."""
    script = tmp_path / f"{name}.py"
    script.write_text(text)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    res = subprocess.run([str(python), str(script), *map(str, args)], capture_output=True, text=True,
                         timeout=timeout, cwd=str(tmp_path), env=env, check=False)
    assert res.returncode == 0, f"{name} failed:\n{res.stderr[-4000:]}"
    return res


def both(mxnet_python: Path, template: str, args: list, tmp_path: Path, name: str) -> dict:
    """Run `template.format(MX=...)` under MXNet and hybridgraph; {'mxnet': proc, 'hybridgraph': proc}."""
    return {mx: run_script(py, template.format(MX=mx), args, tmp_path, f"{name}_{mx}")
            for mx, py in (("mxnet", mxnet_python), ("hybridgraph", sys.executable))}
