"""Two `branchmem serve` processes on one PostgreSQL store, four clients moving
one branch head with ``expected_head`` (set the head, append an event on the
branch, remember on it, by turns): every move is one compare-and-set in
the database, so no expected head wins twice and the history records each
acknowledged move from the head its client expected."""

from __future__ import annotations

import threading
import time
import urllib.parse
import uuid
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("psycopg")

import httpx

from branchmem import Store
from helpers.pg_helpers import PG_URL, SKIP_REASON
from helpers.serve_proc import serving

pytestmark = pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)

CLIENTS = 4
TARGETS = 1_000  # events per client, each moved to at most once: a head never recurs
SECONDS = 4.0
HEAD = "/v1/namespaces/race/branches/main/head"


def _schema_url(schema: str) -> str:
    parts = urllib.parse.urlsplit(PG_URL)
    query = [*urllib.parse.parse_qsl(parts.query), ("options", f"-csearch_path={schema}")]
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


@pytest.fixture
def schema() -> object:
    import psycopg

    from branchmem.backends.postgres import PostgresBackend

    name = "bmt_race_" + uuid.uuid4().hex[:12]
    with Store(backend=PostgresBackend(PG_URL, schema=name)) as store:
        store.add_event("e0", namespace="race")
        store.add_events(
            [
                {"id": f"t{c}_{i}", "parent": "e0", "namespace": "race"}
                for c in range(CLIENTS)
                for i in range(TARGETS)
            ]
        )
        store.create_branch("main", at="e0", namespace="race")
    yield name
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def _move(http: httpx.Client, c: int, i: int, head: str) -> tuple[httpx.Response, str]:
    """One head move from ``head``, by turns: point it at an existing event,
    append an event on the branch, remember on the branch; and the new head."""
    if i % 3 == 0:
        to = f"t{c}_{i}"
        return http.post(HEAD, json={"to": to, "expected_head": head}), to
    to = f"w{c}_{i}"
    if i % 3 == 1:
        body = {"id": to, "branch": "main", "expected_head": head}
        return http.post("/v1/namespaces/race/events", json=body), to
    body = {"content": f"fact {to}", "branch": "main", "event_id": to, "expected_head": head}
    return http.post("/v1/namespaces/race/memories", json=body), to


def test_expected_head_moves_are_compare_and_set_across_servers(
    schema: str, tmp_path: Path
) -> None:
    url = _schema_url(schema)
    acked: list[tuple[str, str]] = []  # (expected_head, to) of every 200
    errors: list[str] = []
    lock = threading.Lock()

    def client(c: int, base: str, stop: float) -> None:
        with httpx.Client(base_url=base, timeout=30) as http:
            head = http.get("/v1/namespaces/race/branches/main").json()["head"]
            for i in range(TARGETS):
                if time.monotonic() > stop:
                    return
                r, to = _move(http, c, i, head)
                if r.status_code == 200:
                    with lock:
                        acked.append((head, to))
                    head = to
                elif r.status_code == 409:
                    head = r.json()["error"]["detail"]["actual"]
                else:
                    errors.append(f"{r.status_code} {r.text}")
                    return

    args = ["--db", url, "--no-auth", "--host", "127.0.0.1"]
    with serving(args, tmp_path, count=2) as (one, two):
        stop = time.monotonic() + SECONDS
        threads = [
            threading.Thread(target=client, args=(c, (one, two)[c % 2], stop))
            for c in range(CLIENTS)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        history = httpx.get(
            f"{one}/v1/namespaces/race/history", params={"branch": "main", "limit": 1000}
        ).json()
        moves = history["moves"]
        while history.get("next_offset") is not None:
            history = httpx.get(
                f"{one}/v1/namespaces/race/history",
                params={"branch": "main", "limit": 1000, "offset": history["next_offset"]},
            ).json()
            moves += history["moves"]
        final = httpx.get(f"{one}/v1/namespaces/race/branches/main").json()["head"]

    assert not errors, errors[:3]
    assert len(acked) > 20, "too few moves to race"
    won = Counter(expected for expected, _ in acked)
    twice = {h: n for h, n in won.items() if n > 1}
    assert not twice, f"{len(twice)} expected heads won more than once"
    assert {m["why"] for m in moves} == {"create", "set", "add_event", "remember"}
    came_from = {m["to_head"]: m["from_head"] for m in moves if m["why"] != "create"}
    lost = [(e, to, came_from.get(to)) for e, to in acked if came_from.get(to) != e]
    assert not lost, f"{len(lost)} of {len(acked)} acknowledged moves recorded another 'from'"
    # The acknowledged moves are the whole history, one chain from e0 to the final head.
    assert len(came_from) == len(acked)
    chain, at = [], final
    while at != "e0":
        chain.append(at)
        at = came_from[at]
    assert len(chain) == len(acked)
