"""The long-term views of a process, one per `Store` and namespace, and the
saver's notices to them: a head moved, a task wrote, a checkpoint saved."""

from __future__ import annotations

import threading
import time
import weakref

from ...errors import UnknownEvent
from ...model import Memory
from ...store import Store
from ._heads import HeadView, Writes, derive
from ._longterm import LongTerm


class _PerStore:
    """What a process keeps for one `Store`. It is one of the engine's caches
    (`Engine.attach`), so a purge through the store, or one another `Store`
    made (the engine sees the erasure counter move), drops every kept view:
    a purged item must not be served from memory."""

    def __init__(self) -> None:
        self.views: dict[str, LongTerm] = {}
        self.saved: dict[str, None] = {}  # recently saved checkpoint events, in order
        self.tasks: dict[str, Writes] = {}  # recent tasks' writes, by task event
        self.cond = threading.Condition()
        self.erasures = 0  # purges seen (`clear`)
        self.built: dict[str, int] = {}  # ns -> `erasures` when its view was last reset
        self.spoiled: dict[str, None] = {}  # tasks whose kept writes a purge dropped

    def clear(self) -> None:
        """Something was erased. Called under the engine's lock, so it takes
        none: it only counts, and each view is read again before its next use
        (`view_of`), and not derived from until then (`view_at`, `head_moved`)."""
        self.erasures += 1

    def forget(self, ns: str, ids: list[str] | None, /) -> None:
        """A purge through the store: a view's items come from several
        namespaces (its own, its registry, one per thread), so every view goes."""
        self.clear()

    def current(self, ns: str) -> LongTerm | None:
        """The view of ``ns`` if it is kept and nothing was erased since it was built."""
        view = self.views.get(ns)
        return view if view is not None and self.built.get(ns) == self.erasures else None


_REGISTRY: weakref.WeakKeyDictionary[Store, _PerStore] = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()
_SAVED_KEPT = 4096
_CACHE = "langgraph-views"


def _per(store: Store) -> _PerStore:
    with _REGISTRY_LOCK:
        per = _REGISTRY.get(store)
        if per is None:
            per = _REGISTRY[store] = _PerStore()
            made = True
        else:
            made = False
    if made:  # (outside the registry's lock: the engine's is taken inside it)
        store._engine.attach(_CACHE, per)
    return per


def view_of(store: Store, ns: str) -> LongTerm:
    """The (built) long-term view of ``ns`` in ``store``."""
    per = _per(store)
    with _REGISTRY_LOCK:
        view = per.views.get(ns)
        if view is None:
            view = per.views[ns] = LongTerm(store, ns)
            per.built[ns] = per.erasures
    erasures = per.erasures
    if per.built.get(ns) != erasures:  # a purge since: read every head again
        view.reset()
        with per.cond:  # tasks' kept writes may hold what was purged: never derive from them
            per.spoiled.update(dict.fromkeys(per.tasks))
            per.tasks.clear()
            while len(per.spoiled) > _SAVED_KEPT:
                del per.spoiled[next(iter(per.spoiled))]
        per.built[ns] = erasures
    view.build()
    return view


def head_moved(
    store: Store,
    ns: str,
    thread: str,
    anchor: str | None,
    parents: list[str] = (),  # type: ignore[assignment]
) -> None:
    """Called by the saver: ``thread``'s newest root checkpoint is ``anchor``,
    whose parents are ``parents``."""
    per = _REGISTRY.get(store)
    view = per.current(ns) if per is not None else None
    if view is not None:
        view.move(thread, anchor, parents, per.tasks if per is not None else {})


def task_wrote(store: Store, task: str, added: list[Memory], hid: list[str]) -> None:
    """Called by the store: what a task's batch wrote (sourced from ``task``)."""
    per = _per(store)
    with per.cond:
        per.tasks.setdefault(task, []).append((list(added), list(hid)))
        if len(per.tasks) > _SAVED_KEPT:
            del per.tasks[next(iter(per.tasks))]


def view_at(store: Store, ns: str, thread: str, anchor: str, checkpoint: str) -> HeadView | None:
    """The view at a task's ``anchor`` (the task event, or its ``checkpoint``)
    from ``thread``'s kept head where that head is ``checkpoint``, without a
    read; ``None`` where it cannot be told so."""
    per = _REGISTRY.get(store)
    view = per.current(ns) if per is not None else None
    if per is None or view is None or not view.built:
        return None
    with view.lock:
        head = view.heads.get(thread)
        if head is None or head.anchor != checkpoint:
            return None
        if anchor == checkpoint:
            return head
        with per.cond:
            if anchor in per.spoiled:
                return None
            writes = list(per.tasks.get(anchor, []))
        return derive(head, anchor, writes)


def saved(store: Store, event: str) -> None:
    """Called by the saver once a checkpoint event is stored."""
    per = _per(store)
    with per.cond:
        per.saved[event] = None
        if len(per.saved) > _SAVED_KEPT:
            del per.saved[next(iter(per.saved))]
        per.cond.notify_all()


def wait_saved(store: Store, event: str, ns: str, timeout: float) -> bool:
    """Wait until ``event`` is stored: told by a saver of this process (which
    also marks the checkpoints it loads), or, failing that for a while (another
    process's saver), found in the backend, checked now and then."""
    per = _per(store)
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        look = min(time.monotonic() + delay, deadline)
        with per.cond:
            # Woken by another checkpoint's save: wait on, the backend is
            # looked at only once ``delay`` has passed without this one.
            while event not in per.saved:
                left = look - time.monotonic()
                if left <= 0:
                    break
                per.cond.wait(left)
            else:
                return True
        if _stored(store, event, ns):
            return True
        if time.monotonic() >= deadline:
            return False
        delay = min(delay * 2, 0.2)


def _stored(store: Store, event: str, ns: str) -> bool:
    try:
        store.get_event(event, namespace=ns)
    except UnknownEvent:
        return False
    return True
