"""Write notifications for array buffers whose values compiled code has frozen.

A hybridized inference variant with BatchNorm folded into its convolutions bakes the
parameters' values of the moment into new constants (hybrid/cached_graph.py). It is
correct only while those values are: it `Watch`es the buffers it read and checks
`Watch.stale` before every call. Every path that writes into an NDArray's buffer in
place calls `note_write(data)`: `x[...] = v`, `+=` and the other in-place operators,
`out=` destinations and kernels that mutate their inputs (nd/dispatch.py), `copyto`,
the optimizers' update kernels, and compiled training steps that update BatchNorm's
moving statistics. Rebinding a buffer (`Parameter.set_data` on a new array, `cast`,
`initialize(force_reinit=True)`) is caught by the watcher itself: it also compares
buffer identities.

Writes are matched by the *owner* of the memory: numpy and cupy views keep a `.base`
chain to the array that owns it, so a write through any view (`w[0:2] = 0`,
`w.reshape(...)[:] = 1`) reaches the watch on the owner. Raw numpy aliases of an
NDArray are read-only (`NDArray.__array__`), so no write bypasses these paths.

With nothing watched, `note_write` costs one dict truth test.
"""
from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

__all__ = ["Watch", "note_write", "owner"]

#: id(owner array) -> weak references to the watches on it (each watch holds its owners,
#: so an id stays valid while it is a key); tuples are replaced, never mutated (threads)
WATCHED: dict[int, tuple] = {}


def owner(data: Any) -> Any:
    """The array owning `data`'s memory: the end of its `.base` chain (`data` itself when
    it owns its memory)."""
    base = getattr(data, "base", None)
    while base is not None:
        data = base
        base = getattr(data, "base", None)
    return data


def note_write(data: Any) -> None:
    """Mark every watch on the memory of backend array `data` stale (call after writing)."""
    if WATCHED:
        refs = WATCHED.get(id(owner(data)))
        if refs:
            for ref in refs:
                w = ref()
                if w is not None:
                    w.stale = True


class Watch:
    """Watches the memory of some backend arrays: `stale` turns True at the first write
    into any of them (through any view) that goes through `note_write`."""

    __slots__ = ("stale", "_owners", "__weakref__")

    def __init__(self, arrays: Iterable[Any]):
        self.stale = False
        owners = {id(o): o for o in map(owner, arrays)}
        self._owners = owners
        me = weakref.ref(self)
        for key in owners:
            WATCHED[key] = WATCHED.get(key, ()) + (me,)

    def close(self) -> None:
        """Stop watching (also done when the watch is garbage collected)."""
        owners, self._owners = self._owners, {}
        for key in owners:
            kept = tuple(r for r in WATCHED.get(key, ()) if r() is not None and r() is not self)
            if kept:
                WATCHED[key] = kept
            else:
                WATCHED.pop(key, None)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown: module globals may be gone
            pass
