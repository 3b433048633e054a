"""Large batch writes and bulk reads with the cyclic garbage collector paused.

A batch import, or a read that builds many objects at once (a gate read of
100,000 records, a search state made from their stored vectors and tokens),
allocates several objects per item and frees none of them in cycles, yet
every few hundred allocations the collector walks the young objects and,
now and then, every tracked object the process holds: a quarter of an
import's time in a process with a large live heap, and 0.7-1.1 s of a
2.5-3 s first search at 100,000 records (`bench/first_search.py`).
Reference counting still frees what they drop, so the collector is paused
while they run and resumed after.

Pauses nest and may overlap across threads: the collector resumes when the
last one ends, and only if it was running when the first began (a caller
that turned it off keeps it off). A busy server may always have one search
in flight, so the collector would never resume: a pause that ends while
others go on runs a collection itself once the collector has been paused
for `MAX_PAUSE_S`.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import wraps
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

BULK = 1000
"""Batches at least this large pause the collector while they are planned."""

MAX_PAUSE_S = 2.0
"""The longest overlapping pauses keep the collector from running."""

_lock = threading.Lock()
_depth = 0
_resume = False
_since = 0.0  # when the collector last ran or was paused


@contextmanager
def paused() -> Iterator[None]:
    """The cyclic collector paused for the block (see the module's docstring)."""
    global _depth, _resume, _since
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            _since = time.monotonic()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        overdue = False
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
            elif _depth and _resume and time.monotonic() - _since >= MAX_PAUSE_S:
                _since, overdue = time.monotonic(), True
        if overdue:  # (outside the lock: other pauses begin and end meanwhile)
            gc.collect()


@contextmanager
def gc_paused(size: int) -> Iterator[None]:
    """The collector `paused` for a batch of ``size`` items; small batches are left alone."""
    if size < BULK:
        yield
        return
    with paused():
        yield


def pausing(fn: Callable[P, T]) -> Callable[P, T]:
    """``fn`` run with the collector `paused` (a read that may build many objects)."""

    @wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        with paused():
            return fn(*args, **kwargs)

    return run
