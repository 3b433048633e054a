"""`Store`'s door for the extraction queue (`branchmem.ops.jobs`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ops import jobs as _jobs

if TYPE_CHECKING:
    from ..backends.jobs import Job
    from . import Front


def pending(self: Front, namespace: str | None = None) -> list[Job]:
    """The extractions still to do or that failed (of ``namespace``, or of
    every namespace), oldest first: each a `Job` with its ``state``
    (``queued``, ``running`` or ``failed``), attempts and last error.

    >>> store = Store()
    >>> _ = store.add_event("e1", content="我对花生过敏。", extract=True)
    >>> [(j.tip, j.state) for j in store.pending()]
    [('e1', 'queued')]
    """
    return _jobs.pending(self._engine, namespace)
