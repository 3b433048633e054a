"""`Store("postgresql://...")` on what needs no server: options that do not
apply are refused, not ignored, and a missing extra is named."""

from __future__ import annotations

import sys

import pytest

from branchmem import InvalidInput, Store

URL = "postgresql://app@db.invalid:5432/memory"  # never reached: both fail first


def test_readonly_is_refused_for_a_postgresql_url() -> None:
    # It used to be dropped silently: the store then took writes.
    with pytest.raises(InvalidInput, match="readonly=True applies to SQLite"):
        Store(URL, readonly=True)


@pytest.mark.parametrize("module", ["psycopg", "psycopg_pool"])
def test_a_missing_postgres_extra_is_named(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed
    with pytest.raises(InvalidInput, match=r"pip install 'branchmem\[postgres\]'"):
        Store(URL)
