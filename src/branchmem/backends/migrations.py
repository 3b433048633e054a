"""Schema versions, shared by the SQL backends.

Each store records the versions applied to it in a ``schema_version`` table.
Opening an older store applies the missing steps in one transaction; opening
a newer one is refused, because this code cannot know what the newer columns
mean. Steps are plain statement lists per dialect, numbered from the version
they produce; a version that changes nothing in one dialect has no step there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import StorageError

CURRENT = 12
"""The schema version this code reads and writes (both SQL backends)."""


def steps_to_apply(found: int, where: str) -> range:
    """Versions to apply to a store at version ``found`` (empty when current).

    >>> list(steps_to_apply(2, "x"))
    [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    """
    if found > CURRENT:
        raise StorageError(
            f"{where} has schema version {found}, made by a newer branchmem; this one reads "
            f"versions up to {CURRENT}: upgrade branchmem to open it"
        )
    if found < 2:
        raise StorageError(
            f"{where} has schema version {found}, older than any release this branchmem "
            "can upgrade; export it with the release that made it"
        )
    return range(found + 1, CURRENT + 1)


def plan(
    found: int | None, steps: Mapping[int, Sequence[str]], schema: str, where: str
) -> tuple[list[str], list[int]]:
    """What opening a store at version ``found`` (None: no store yet) runs:
    the statements, in order (the missing steps, then ``schema``'s idempotent
    ``CREATE ... IF NOT EXISTS`` statements), and the versions to record."""
    todo = [] if found is None else list(steps_to_apply(found, where))
    stmts = [stmt for v in todo for stmt in steps.get(v, ())]
    stmts += [stmt for stmt in schema.split(";\n") if stmt.strip()]
    return stmts, todo if found is not None else [CURRENT]
