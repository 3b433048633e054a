"""The PostgreSQL backend (the ``postgres`` extra)."""

from .backend import PostgresBackend

__all__ = ["PostgresBackend"]
