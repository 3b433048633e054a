"""The SQLite backend, the embedded default."""

from .backend import SQLiteBackend

__all__ = ["SQLiteBackend"]
