"""Source batches parsed ahead of the freeze, on a thread of their own.

pyarrow's streaming readers parse a block only when the next batch is asked for, so a freeze
that bounds, maps and spills each batch before asking for the next leaves the parser idle
meanwhile. :func:`read_ahead` asks for the next batches on a thread of its own (parsing releases
the GIL), at most :data:`DEPTH` ahead: parsing overlaps the freeze's own work, the batches and
their order are unchanged, and an error the reader raises is raised where its batch would have
been, with the batches before it delivered first.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Final, TypeVar

_T = TypeVar("_T")

DEPTH: Final = 2
"""Batches parsed and not yet taken, at most."""
_POLL_SECONDS: Final = 0.05


class _End:
    """The reader is exhausted."""


class _Raised:
    """The reader raised ``error``."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


def read_ahead(items: Iterator[_T], depth: int = DEPTH) -> Iterator[_T]:
    """The items of ``items``, taken from it on a thread of its own up to ``depth`` ahead.

    ``depth=0``: the next item is made while the consumer works on this one, and only then (two
    items in memory at most). Closing the returned generator early stops the thread (it takes
    no further item)."""
    slots: queue.Queue[_T | _End | _Raised] = queue.Queue(maxsize=max(depth, 1))
    taken = threading.Semaphore(0)
    stop = threading.Event()

    def handed_over() -> bool:
        while not stop.is_set():
            if taken.acquire(timeout=_POLL_SECONDS):
                return True
        return False

    def offer(item: _T | _End | _Raised) -> bool:
        while not stop.is_set():
            try:
                slots.put(item, timeout=_POLL_SECONDS)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not offer(item) or (depth == 0 and not handed_over()):
                    return
        except BaseException as error:  # raised again on the consumer's thread
            offer(_Raised(error))
            return
        offer(_End())

    thread = threading.Thread(target=produce, name="dpone-source-read", daemon=True)
    thread.start()
    try:
        while True:
            item = slots.get()
            taken.release()
            if isinstance(item, _End):
                return
            if isinstance(item, _Raised):
                raise item.error
            yield item
    finally:
        stop.set()
        thread.join()
