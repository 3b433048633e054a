"""How a write says it was accepted but is probably not what was meant
(`branchmem.errors.BranchmemWarning`): through Python's `warnings`, or, inside
`caught_warnings`, into a list of the calling thread or task alone.

`warnings.catch_warnings` swaps process-wide state, so a server answering
several calls at once cannot use it to tell each call its own warnings; the
collector here lives in a context variable, one per thread and task.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from .errors import BranchmemWarning, UnknownParents, UnknownSources

_CAUGHT: ContextVar[list[BranchmemWarning] | None] = ContextVar("branchmem_caught", default=None)
_HELD: ContextVar[list[BranchmemWarning] | None] = ContextVar("branchmem_held", default=None)
_PACKAGE = str(Path(__file__).resolve().parent)
_CONTEXTLIB = contextlib.__file__  # `held` issues them from its __exit__


@contextmanager
def caught_warnings() -> Iterator[list[BranchmemWarning]]:
    """Collect the warnings of the writes made inside (in this thread or task)
    into the list it yields, instead of issuing them through `warnings`.

    >>> from branchmem import Store
    >>> store = Store()
    >>> with caught_warnings() as caught:
    ...     _ = store.add_memory("a fact", sources=["never-added"])
    >>> [type(w).__name__ for w in caught], caught[0].unknown
    (['UnknownSources'], ('never-added',))
    """
    caught: list[BranchmemWarning] = []
    token = _CAUGHT.set(caught)
    try:
        yield caught
    finally:
        _CAUGHT.reset(token)


@contextmanager
def held() -> Iterator[None]:
    """Hold the warnings issued inside until the block ends well (a write's
    transaction has committed), then issue them; none if it raises. So a
    warning turned into an error (``warnings.simplefilter("error", ...)``)
    comes after the write is stored, on every backend."""
    if _HELD.get() is not None:  # an outer write holds them
        yield
        return
    pending: list[BranchmemWarning] = []
    token = _HELD.set(pending)
    try:
        yield
    finally:
        _HELD.reset(token)
    for w in pending:
        notify(w)


def notify(warning: BranchmemWarning) -> None:
    """Issue ``warning``: held by an enclosing `held`, else into the innermost
    `caught_warnings`, else through `warnings.warn`, attributed to the first
    caller outside branchmem."""
    pending = _HELD.get()
    if pending is not None:
        pending.append(warning)
        return
    caught = _CAUGHT.get()
    if caught is not None:
        caught.append(warning)
        return
    warnings.warn(warning, stacklevel=_outside())


def _outside() -> int:
    """The stack level of the first frame outside this package (for `warnings.warn`)."""
    level, frame = 1, sys._getframe(1)
    while frame is not None and (
        frame.f_code.co_filename.startswith(_PACKAGE) or frame.f_code.co_filename == _CONTEXTLIB
    ):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


_KINDS: dict[str, type[UnknownParents] | type[UnknownSources]] = {
    "UnknownParents": UnknownParents,
    "UnknownSources": UnknownSources,
}


def warning_from(d: dict[str, object]) -> BranchmemWarning:
    """The warning a served store answered with (`BranchmemWarning.to_dict`)."""
    kind = _KINDS.get(str(d.get("warning")))
    ids, unknown = d.get("ids"), d.get("unknown")
    ns = str(d.get("namespace", ""))
    if kind is None or not isinstance(ids, list) or not isinstance(unknown, list):
        return BranchmemWarning(str(d.get("message", d)), ns, (), ())
    return kind(ns, tuple(map(str, ids)), tuple(map(str, unknown)))
