"""Fuzz worker: loads hostile inputs in its own process, under an address-space limit.

Run by test_fuzz.py as a subprocess. It sets RLIMIT_AS (default 2 GiB), then reads
requests from stdin -- one JSON header line {"kind": "json"|"params"|"states", "size": n}
followed by n bytes -- and answers each with one JSON line {"outcome", "detail"}:

* "ok": the input loaded (and, for a symbol, wrote back and inferred);
* "clean": it raised an MXNetError subclass (the only acceptable failure);
* "other": any other exception (type and message in detail);
* "timeout": it ran past the per-input time limit (SIGALRM in this process).
"""
from __future__ import annotations

import json
import resource
import signal
import sys


class _Timeout(BaseException):
    """Raised by SIGALRM: a BaseException so no `except Exception` in the code under test eats it."""


def _alarm(signum, frame):
    raise _Timeout()


def _run_json(data: bytes) -> None:
    import hybridgraph as mx
    sym = mx.sym.load_json(data)
    sym.tojson()
    sym.infer_shape_partial()
    sym.infer_type_partial()


def _run_params(data: bytes) -> None:
    import hybridgraph as mx
    mx.nd.load_frombuffer(data)


def _run_states(data: bytes) -> None:
    from hybridgraph.gluon.optimizer import loads_states
    loads_states(data)


def main() -> None:
    limit_bytes = int(sys.argv[1]) if len(sys.argv) > 1 else 2 << 30
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
    resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    import hybridgraph  # noqa: F401 - imported once, before the first input
    from hybridgraph.nd.errors import MXNetError
    signal.signal(signal.SIGALRM, _alarm)
    run = {"json": _run_json, "params": _run_params, "states": _run_states,
           "alloc": lambda data: bytearray(int(data))}
    out = sys.stdout
    inp = sys.stdin.buffer
    print(json.dumps({"ready": True}), file=out, flush=True)
    while True:
        header = inp.readline()
        if not header:
            return
        req = json.loads(header)
        data = inp.read(req["size"])
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            run[req["kind"]](data)
            outcome, detail = "ok", ""
        except _Timeout:
            outcome, detail = "timeout", f"over {seconds} s"
        except MXNetError as exc:
            outcome, detail = "clean", type(exc).__name__
        except BaseException as exc:  # noqa: BLE001 - every other outcome is what we count
            outcome, detail = "other", f"{type(exc).__name__}: {str(exc)[:300]}"
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        print(json.dumps({"outcome": outcome, "detail": detail}), file=out, flush=True)


if __name__ == "__main__":
    main()
