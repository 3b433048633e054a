"""Import an export into a `Store`, one conversation (one transaction) at a time,
through the store's public API only."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import (
    BranchmemError,
    ConflictingEvent,
    InvalidInput,
    NameClash,
    UnknownBranch,
    UnknownEvent,
)
from ..model import Event
from ..validate import MAX_MESSAGE_BYTES, check_name
from .model import Conflict, Conversation, Imported, ImportReport, Skipped, branch_name
from .reader import Export, PathLike, read_export

if TYPE_CHECKING:
    from ..api import StoreAPI
    from ..redact import Redactor


def import_export(
    store: StoreAPI,
    path: PathLike | Sequence[PathLike] | Export,
    *,
    format: str = "auto",
    namespace: str = "default",
    progress: Callable[[int, int], None] | None = None,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
) -> ImportReport:
    """Import every conversation of an export (a path, or one `read_export`
    already opened); see `Store.import_export`."""
    if isinstance(path, Export):
        export = path
    else:
        export = read_export(path, format, max_message_bytes=max_message_bytes)
    export.progress = progress
    export.known = lambda event: _is_stored(store, event, namespace)
    done: list[Imported] = []
    skipped: list[Skipped] = []
    convs = iter(export)
    while True:
        try:
            conv = next(convs)
        except StopIteration:
            break
        except InvalidInput as exc:  # a file cut off or malformed part way through
            if not done:
                raise
            raise InvalidInput(
                f"{exc}. The {len(done)} conversations before that point were imported; "
                "importing the complete file again adds the rest (what is stored is skipped)"
            ) from None
        try:
            done.append(import_conversation(store, conv, namespace=namespace))
        except BranchmemError as exc:  # e.g. a branch name already naming an event
            skipped.append(Skipped(conv.id, str(exc)))
    return ImportReport(export.format, tuple(done), tuple(export.skipped) + tuple(skipped))


def import_conversation(
    store: StoreAPI, conv: Conversation, *, namespace: str = "default"
) -> Imported:
    """Add one conversation's new events in one transaction and point ``conv/<id>``
    at its current leaf. Events already stored unchanged are left alone; an event
    stored with other content is reported as a conflict and not overwritten.

    A conversation imported for the first time (no ``conv/<id>`` yet) whose
    message ids are stored with other content, by another conversation that
    reuses them, is refused (`InvalidInput`, nothing written): its branch would
    point into the other conversation's messages.
    """
    branch = check_name(branch_name(conv.id))
    with contextlib.suppress(UnknownEvent):  # set_branch would refuse it after the write
        store.get_event(branch, namespace=namespace)
        raise NameClash(branch, namespace, "an event")
    events = conv.events
    known = _has_branch(store, branch, namespace)
    fresh = not known and not _stored(store, [e for e in events if not e.parents], namespace)
    redact = _redact_of(store)
    while True:
        stored = {} if fresh else _stored(store, events, namespace)
        conflicts = tuple(
            Conflict(e.id, fields)
            for e in events
            if e.id in stored and (fields := _differs(stored[e.id], e, redact))
        )
        if conflicts and not known:
            raise _taken(conv, conflicts, namespace)
        new = [_row(e, namespace) for e in events if e.id not in stored]
        try:
            if new:
                store.add_events(new)
            break
        except ConflictingEvent:
            if not fresh:
                raise
            fresh = False  # ids stored by other writes: look every one up
    store.set_branch(branch, conv.current, namespace=namespace)
    return Imported(
        conv.id, conv.title, branch, len(events), len(new), conv.current, conflicts, conv.notes
    )


def _has_branch(store: StoreAPI, branch: str, ns: str) -> bool:
    """Was this conversation imported before (is ``conv/<id>`` there)?

    Without it and without any of the conversation's roots stored (every
    import adds a conversation's roots with the rest), nothing of it can be
    stored yet, and the lookup of every id is skipped (a first import).
    """
    try:
        store.branch_head(branch, namespace=ns)
        return True
    except UnknownBranch:
        return False


def _taken(conv: Conversation, conflicts: tuple[Conflict, ...], ns: str) -> InvalidInput:
    ids = ", ".join(repr(c.id) for c in conflicts[:3])
    more = f" and {len(conflicts) - 3} more" if len(conflicts) > 3 else ""
    return InvalidInput(
        f"conversation {conv.id!r} reuses message ids stored with other content in "
        f"namespace {ns!r} ({ids}{more}), by another conversation most likely; importing "
        "it would point its branch into that one. Import it into another namespace, or "
        "give its messages ids of their own"
    )


def _stored(store: StoreAPI, events: Sequence[Event], ns: str) -> dict[str, Event]:
    out = {}
    for e in events:
        with contextlib.suppress(UnknownEvent):
            out[e.id] = store.get_event(e.id, namespace=ns)
    return out


def _is_stored(store: StoreAPI, event: Event, ns: str) -> bool:
    """Is ``event`` stored, unchanged?"""
    try:
        old = store.get_event(event.id, namespace=ns)
    except UnknownEvent:
        return False
    redact = _redact_of(store)
    return not _differs(old, event, redact)


def _redact_of(store: StoreAPI) -> Redactor | None:
    """The store's redactor, which stored content and meta went through (a remote
    store's redactor is the server's: there, what is stored is compared as sent)."""
    return getattr(store, "redactor", None)


def _differs(old: Event, new: Event, redactor: Redactor | None) -> tuple[str, ...]:
    """The fields of ``new`` that differ from the stored ``old`` (whose content and
    meta the store's redactor, if any, redacted before storing them)."""
    content, meta = new.content, new.meta
    if redactor is not None:
        content, meta = redactor.redact(content), redactor.redact_value(meta)
    out = tuple(f for f in ("parents", "role") if getattr(old, f) != getattr(new, f))
    out += ("meta",) if old.meta != meta else ()
    return out + (("content",) if old.content != content else ())


def _row(e: Event, ns: str) -> dict[str, Any]:
    return {
        "id": e.id,
        "parent": e.parent,
        "role": e.role,
        "content": e.content,
        "namespace": ns,
        "meta": e.meta,
    }
