"""The one way hybridgraph writes a file: whole or not at all.

`atomic_write` writes the bytes to a temporary file beside the target, syncs it
and renames it over the target, so a crash or a kill at any moment leaves
either the old file or the new one, never a torn one. Every writer in the
package (nd.save, Symbol.save, export, checkpoints, optimizer and trainer
states, viz) goes through it; tests/test_reliability_kill.py enumerates them.

Temporary files are named `.<target name>.<pid>.<random>.hybridgraph-tmp`, so
one left behind by a killed process is recognisable; the next write to the same
target removes those whose process is gone.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path

#: the suffix of every temporary file hybridgraph writes
TEMP_SUFFIX = ".hybridgraph-tmp"


def _umask() -> int:
    """The process umask, read without changing it where the OS allows."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def temp_path(path: Path) -> Path:
    """A fresh temporary name beside `path`: `.<name>.<pid>.<random>.hybridgraph-tmp`."""
    return path.parent / f".{path.name}.{os.getpid()}.{secrets.token_hex(6)}{TEMP_SUFFIX}"


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists (another user's) or unknown: leave its file alone
    return True


def stale_temps(path: str | os.PathLike) -> list[Path]:
    """Temporary files of earlier writes to `path` whose writing process has exited."""
    path = Path(path)
    head = f".{path.name}."
    out = []
    try:
        entries = list(os.scandir(path.parent or "."))
    except OSError:
        return out
    for e in entries:
        name = e.name
        if not (name.startswith(head) and name.endswith(TEMP_SUFFIX)):
            continue
        parts = name[len(head):-len(TEMP_SUFFIX)].split(".")
        if len(parts) == 2 and parts[0].isdigit() and not _pid_alive(int(parts[0])):
            out.append(path.parent / name)
    return out


def clean_stale_temps(path: str | os.PathLike) -> int:
    """Remove what `stale_temps(path)` finds; returns how many were removed."""
    n = 0
    for p in stale_temps(path):
        try:
            os.unlink(p)
            n += 1
        except OSError:
            pass
    return n


def atomic_write(fname: str | os.PathLike, payload: bytes) -> None:
    """Write `payload` to `fname` atomically: a synced temporary file beside it, renamed
    over it. Permissions follow the umask, as open() would; stale temporaries of
    earlier, killed writes to the same file are removed first."""
    if isinstance(payload, str):
        raise TypeError("atomic_write expects bytes; encode text first")
    path = Path(fname)
    clean_stale_temps(path)
    tmp = temp_path(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
