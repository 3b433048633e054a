"""Everything a store holds, as one comparable value: "changes nothing" means equal.

SQLite: every row of every table (`iterdump`), read through a separate
connection. Memory: the repr of every namespace's rows and counters.
"""

from __future__ import annotations

import sqlite3

from branchmem import Store
from branchmem.backends.memory import MemoryBackend
from branchmem.backends.sqlite import SQLiteBackend


def raw_state(store: Store) -> object:
    b = store._b
    if isinstance(b, SQLiteBackend):
        db = sqlite3.connect(b.path)
        try:
            return list(db.iterdump())
        finally:
            db.close()
    assert isinstance(b, MemoryBackend)
    spaces = {ns: repr(sorted(vars(sp).items())) for ns, sp in b._spaces.items()}
    return spaces, b._seq, repr(b._detached)
