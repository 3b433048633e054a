"""The OpenAPI document against the server: generated requests (schemathesis)
never get a 5xx and every answer fits the document; the document states the
limits the server enforces, character for character."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from branchmem import Store
from branchmem.errors import InvalidInput
from branchmem.server.service import Limits
from branchmem.validate import check_id, check_name, check_text

pytest.importorskip("fastapi")
schemathesis = pytest.importorskip("schemathesis")
create_app = pytest.importorskip("branchmem.server.app").create_app
components = pytest.importorskip("branchmem.server.schema").components
checks = pytest.importorskip("schemathesis.checks")

LIMITS = Limits(max_batch=20, max_k=30, max_page=40)


def _app() -> Any:
    store = Store()
    store.add_events(
        [
            {"id": "e1", "content": "你好"},
            {"id": "e2", "parent": "e1", "content": "我下个月搬去成都。"},
        ]
    )
    store.add_memory("用户搬去成都", sources=["e2"], key="city", id="m1")
    store.create_branch("main", at="e2")
    return create_app(store, None, limits=LIMITS, embedder="hashing", mcp=False)


APP = _app()

# The document's character rules are classes of hundreds of Unicode ranges, which
# Hypothesis takes seconds to turn into a strategy each time. For the run below,
# each shared string schema becomes a format with a strategy of the same
# characters (drawn by Unicode category, as `str.isprintable` judges them);
# `test_the_patterns_are_the_stores_own_checks` holds the patterns to the checks.
_PRINTABLE = st.characters(categories=("L", "M", "N", "P", "S"))
_SEEDED = st.sampled_from(["default", "e1", "e2", "m1", "main"])
_ID = _SEEDED | st.text(_PRINTABLE | st.just(" "), min_size=1, max_size=20).filter(
    lambda v: not v.isspace()
)
_PART = st.text(_PRINTABLE.filter(lambda c: c != "/"), min_size=1, max_size=8)
_NAME = st.sampled_from(["main", "task/a"]) | st.lists(_PART, min_size=1, max_size=3).map("/".join)
_TEXT_CHARS = st.characters(codec="utf-8", exclude_characters="\x00")
_FORMATS = {
    "Id": _ID,
    "Name": _NAME,
    "Anchor": _SEEDED | _ID,
    "Text": st.text(_TEXT_CHARS, max_size=30),
    "Query": st.text(_TEXT_CHARS, min_size=1, max_size=30).filter(str.strip),
}


def _document() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(json.dumps(APP.openapi()))
    for name, strategy in _FORMATS.items():
        fmt = f"branchmem-{name.lower()}"
        schemathesis.openapi.format(fmt, strategy)
        shared = doc["components"]["schemas"][name]
        shared.pop("pattern")
        shared["format"] = fmt
    return doc


# The coverage phase draws thousands of boundary values per operation while
# collecting: the fuzzing phase alone keeps the run within its minute.
_CONFIG = schemathesis.Config.from_dict({"phases": {"coverage": {"enabled": False}}})
SCHEMA = schemathesis.openapi.from_dict(_document(), config=_CONFIG)
SCHEMA.app = APP
CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]


@pytest.fixture
def app() -> Iterator[Any]:
    """A fresh app for each operation: schemathesis ends an app's lifespan with
    each test, and a served app's shutdown closes its pool for good."""
    fresh = _app()
    yield fresh
    fresh.state.served.close()
    fresh.state.served.store.close()


# Each operation's examples are few, so the whole run stays well under a minute.
@SCHEMA.parametrize()
@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_generated_requests_get_no_5xx_and_fit_the_document(case: Any, app: Any) -> None:
    # A server without keys answers loopback hosts only.
    case.call_and_validate(app=app, headers={"host": "localhost"}, checks=CHECKS)


def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = APP.openapi()
    return doc


def test_the_document_states_the_configured_limits() -> None:
    doc = _doc()
    schemas = doc["components"]["schemas"]
    assert schemas["SearchIn"]["properties"]["k"]["maximum"] == LIMITS.max_k
    assert schemas["EventsIn"]["properties"]["events"]["maxItems"] == LIMITS.max_batch
    assert schemas["Id"]["maxLength"] == 512 and schemas["Name"]["maxLength"] == 200
    listing = doc["paths"]["/v1/namespaces/{namespace}/events"]["get"]["parameters"]
    limit = next(p for p in listing if p["name"] == "limit")["schema"]
    offset = next(p for p in listing if p["name"] == "offset")["schema"]
    assert limit["maximum"] == LIMITS.max_page and offset["maximum"] == 2**63 - 1
    body = doc["paths"]["/v1/namespaces/{namespace}/events"]["post"]
    assert {"400", "413", "422"} <= set(body["responses"])
    event = schemas["EventIn"]["properties"]
    assert event["id"]["$ref"] == "#/components/schemas/Id"
    assert "64 levels" in event["meta"]["description"]
    assert event["role"]["enum"] == ["user", "assistant", "tool", "system", "note"]


def _accepts(check: Any, value: str) -> bool:
    try:
        check(value)
    except InvalidInput:
        return False
    return True


_TEXT = st.text(
    st.characters(codec="utf-8") | st.sampled_from(" /\x00\u00a0\u200d\u2028é用"), max_size=12
)
# ECMA's "$" (the document's dialect) is Python's "\Z": Python's "$" also matches
# before a final line break.
_PATTERNS = {
    name: re.compile(s["pattern"].removesuffix("$") + "\\Z") for name, s in components().items()
}


@given(_TEXT)
@settings(max_examples=300, deadline=None)
def test_the_patterns_are_the_stores_own_checks(value: str) -> None:
    """The document's character rules (big classes built from the Unicode
    table) against the checks they describe, on the same strings."""
    assert bool(_PATTERNS["Id"].search(value)) == _accepts(lambda v: check_id(v, "id"), value)
    assert bool(_PATTERNS["Name"].search(value)) == _accepts(check_name, value)
    assert bool(_PATTERNS["Text"].search(value)) == _accepts(lambda v: check_text(v, "t"), value)
    assert bool(_PATTERNS["Query"].search(value)) == (
        _accepts(lambda v: check_text(v, "q"), value) and bool(value.strip())
    )


def test_an_unreadable_body_is_a_listed_422() -> None:
    from fastapi.testclient import TestClient

    client = TestClient(APP, base_url="http://localhost")
    deep = b'{"id": "x", "meta": ' + b'{"a": ' * 5_000 + b"{}" + b"}" * 5_000 + b"}"
    for body in (deep, b"{not json"):
        r = client.post(
            "/v1/namespaces/default/events",
            content=body,
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 422, r.text
        assert r.json()["error"]["type"] == "InvalidInput"
