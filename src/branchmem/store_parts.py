"""What the `Store` mixins use of `Store` itself, declared for type checking.

`Store` (in `store.py`) is composed of mixins, one job each: `EventOps`
(`ingest.py`), `RecordOps` (`records.py`), `ReadOps` (`reads.py`),
`BranchOps`, `SnapshotOps`, `MergeOps`, `LifecycleOps`, `PurgeOps`, `AuditOps`. The
attributes and methods below are set or defined in `store.py`,
`branches.py` and `lifecycle.py`; nothing here runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from .backends.base import Backend, Pos
from .model import Event, Memory

if TYPE_CHECKING:
    from .lifecycle import Policy
    from .lineage_memo import RangesMemo

_Item = TypeVar("_Item", Event, Memory)


class StoreParts:
    """The state and helpers of `Store` that its mixins use."""

    _b: Backend
    _clock: Callable[[], float]
    _policy: Policy
    _ranges_memo: RangesMemo
    _on_records: Callable[[str, list[Memory]], None] | None

    if TYPE_CHECKING:

        def _redacted(self, items: list[_Item]) -> list[_Item]: ...

        def _redact(self, text: str) -> str: ...

        def _redact_value(self, value: Any) -> Any: ...

        def _identifier(self, value: str, what: str) -> str: ...

        def _seg_parents(
            self, ns: str
        ) -> Callable[[Iterable[int]], dict[int, tuple[Pos, ...]]]: ...

        def _write_event(
            self,
            ns: str,
            branch: str,
            fields: dict[str, Any],
            actor: str | None,
            expected_head: str | None,
        ) -> Event: ...

        def touch(
            self,
            ids: Iterable[str],
            *,
            namespace: str = "default",
            now: float | None = None,
            actor: str | None = None,
        ) -> None: ...
