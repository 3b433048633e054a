"""The limits over HTTP: a JSON value nested too deep or an integer out of range
is a 422 before anything is written, and reads of meta stored too deep (before
the limit) answer 200 for every reader."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_input_limits import nested_text, store_deep_meta

from branchmem import Store
from branchmem.validate import MAX_DEPTH, TOO_DEEP
from helpers.server_fixtures import NS, make_served  # skips the module without the server extra


def _post(s: Any, path: str, body: str) -> Any:
    headers = {**s.h("owner"), "content-type": "application/json"}
    return s.client.post(f"{NS}/default/{path}", content=body.encode(), headers=headers)


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 300, 400, 900, 5_000])
def test_http_meta_over_the_limit_is_a_422_and_nothing_is_written(levels: int) -> None:
    s = make_served()
    s.store.add_event("e1")
    r = _post(s, "events", f'{{"id": "x", "parent": "e1", "meta": {nested_text(levels)}}}')
    assert r.status_code == 422, r.text
    assert r.json()["error"]["type"] == "InvalidInput"
    r = _post(
        s, "memories", f'{{"content": "c", "sources": ["e1"], "meta": {nested_text(levels)}}}'
    )
    assert r.status_code == 422, r.text
    h = s.h("owner")
    assert s.client.get(f"{NS}/default/events/x", headers=h).status_code == 404
    listing = s.client.get(f"{NS}/default/events", headers=h)
    assert listing.status_code == 200 and [e["id"] for e in listing.json()["events"]] == ["e1"]
    assert s.store.records() == []


def test_http_reads_of_meta_stored_too_deep_answer_200(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store_deep_meta(path, 400)
    with Store(path) as store:
        s = make_served(store=store)
        h = s.h("owner")
        for route in ("events/deep", "path?at=deep", "events", "memories?at=deep", "inspect"):
            r = s.client.get(f"{NS}/default/{route}", headers=h)
            assert r.status_code == 200, (route, r.text)
        assert s.client.get(f"{NS}/default/events/deep", headers=h).json()["meta"] == {
            TOO_DEEP: nested_text(400)
        }


@pytest.mark.parametrize("route", ["events", "inspect", "branches", "path?at=e1", "audit"])
def test_http_offsets_over_the_range_are_a_422(route: str) -> None:
    s = make_served()
    s.store.add_event("e1")
    sep = "&" if "?" in route else "?"
    for offset in (2**63, 10**30):
        r = s.client.get(f"{NS}/default/{route}{sep}offset={offset}", headers=s.h("owner"))
        assert r.status_code == 422, (route, r.text)
        assert r.json()["error"]["type"] == "InvalidInput"
