"""Helpers for large batch writes."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

BULK = 1000
"""Batches at least this large pause the cyclic garbage collector while they are planned."""


@contextmanager
def gc_paused(size: int) -> Iterator[None]:
    """Pause the cyclic garbage collector for a batch of ``size`` items.

    A batch import allocates several objects per item and frees none of them
    in cycles, yet every few hundred allocations the collector walks the
    young objects and, now and then, every tracked object the process holds:
    a quarter of an import's time in a process with a large live heap. The
    previous state is restored afterwards; small batches are left alone.
    """
    if size < BULK or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
