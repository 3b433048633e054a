"""Forget a coding session: erase (`Store.purge`) every event imported from its
transcript, rewound branches and subagents included, and with them every
memory derived from any of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import InvalidInput, UnknownBranch
from ...importers.model import branch_name
from ...importers.transcripts import FORMATS

if TYPE_CHECKING:
    from ...store import Store


def session_events(store: Store, session: str, *, namespace: str) -> list[str]:
    """The ids of every event of ``session``: the trees its branch and its
    subagents' branches (``conv/<session>:agent-...``) stand in, walked down
    from their roots through the events a transcript import wrote (a merge into
    the project branch, and what lies past it, is not the session's).

    >>> import json, pathlib, tempfile
    >>> from branchmem import Store
    >>> from branchmem.importers.agents import import_transcript
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s1.jsonl"
    >>> rows = [{"uuid": "u1", "parentUuid": None, "sessionId": "s1", "type": "user",
    ...          "message": {"role": "user", "content": "hi"}},
    ...         {"uuid": "u2", "parentUuid": "u1", "sessionId": "s1", "type": "user",
    ...          "message": {"role": "user", "content": "again"}}]
    >>> _ = p.write_text("".join(json.dumps(r) + "\\n" for r in rows))
    >>> store = Store()
    >>> _ = import_transcript(store, p)
    >>> session_events(store, "s1", namespace="default")
    ['u1', 'u2']
    """
    main = branch_name(session)
    names = [main] + [
        b.name for b in store.branches(namespace=namespace) if b.name.startswith(f"{main}:agent")
    ]
    roots: list[str] = []
    for name in names:
        try:
            path = store.path(name, namespace=namespace)
        except UnknownBranch:
            continue
        if path and path[0].id not in roots:
            roots.append(path[0].id)
    if not roots:
        raise InvalidInput(
            f"no session {session!r} in namespace {namespace!r}; `branchmem claude-code "
            "forget --list` shows the sessions stored there"
        )
    found: dict[str, None] = {}
    todo = list(roots)
    while todo:
        eid = todo.pop()
        if eid in found:
            continue
        found[eid] = None
        cursor: str | None = None
        while True:
            page = store.children(eid, namespace=namespace, limit=1000, cursor=cursor)
            todo += [e.id for e in page.events if (e.meta or {}).get("source") in FORMATS]
            cursor = page.cursor
            if cursor is None:
                break
    return sorted(found)


def sessions(store: Store, *, namespace: str) -> list[str]:
    """The sessions stored in ``namespace`` (their branches' names, ``conv/`` cut)."""
    return [
        b.name[len("conv/") :]
        for b in store.branches(namespace=namespace)
        if b.name.startswith("conv/") and ":agent" not in b.name
    ]
