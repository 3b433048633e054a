"""The one fixture adapted in the SDK's session tests: where they construct a
``SQLiteSession(session_id, db_path)``, they get a `BranchmemSession` on a
branchmem `Store` over that file (``:memory:`` when none), which it closes
with the session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.memory.session_settings import SessionSettings

from branchmem import Store
from branchmem.integrations.openai_agents import BranchmemSession


class SQLiteSession(BranchmemSession):
    def __init__(
        self,
        session_id: str,
        db_path: str | Path = ":memory:",
        session_settings: SessionSettings | None = None,
        **_: Any,
    ) -> None:
        store = Store() if str(db_path) == ":memory:" else Store(db_path)
        super().__init__(session_id, store, session_settings=session_settings)

    def close(self) -> None:
        self.store.close()
