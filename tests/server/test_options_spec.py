"""Every door takes exactly the search and context options that
`branchmem.retrieval.options` lists: `Store`, `AsyncStore`, `RemoteStore`,
`AsyncRemoteStore`, the HTTP API (its model and route), the MCP tools and the
command line. A new option joins the spec, and then each door, or this fails."""

from __future__ import annotations

import argparse
import asyncio
import inspect
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client

from branchmem import AsyncStore, InvalidInput, Store
from branchmem.cli import build_parser
from branchmem.client import AsyncRemoteStore, RemoteStore
from branchmem.retrieval import options as spec
from branchmem.server.mcp_tools import build_mcp
from branchmem.server.models import SearchIn
from helpers.server_fixtures import make_served

SEARCH = [o.name for o in spec.SEARCH]
CONTEXT = [o.name for o in spec.CONTEXT]


def params(fn: Any) -> dict[str, inspect.Parameter]:
    return {n: p for n, p in inspect.signature(fn).parameters.items() if n != "self"}


@pytest.mark.parametrize("door", [Store, AsyncStore])
def test_the_python_doors_take_the_spec_with_its_types_and_defaults(door: type) -> None:
    got = params(door.search)
    assert list(got) == SEARCH
    for o in spec.SEARCH:
        assert got[o.name].annotation == o.type, o.name
        want = inspect.Parameter.empty if o.name in ("query", "at") else o.default
        assert got[o.name].default == want, o.name
    ctx = params(door.context)
    assert list(ctx) == CONTEXT
    for o in spec.CONTEXT:
        if o.name != "at":
            assert ctx[o.name].default == o.default, o.name


@pytest.mark.parametrize("door", [RemoteStore, AsyncRemoteStore])
def test_the_remote_doors_take_the_same_names(door: type) -> None:
    assert set(params(door.search)) == set(SEARCH)
    assert set(params(door.context)) == set(CONTEXT)


def test_the_http_api_takes_the_served_options() -> None:
    served = {o for o in spec.served(spec.SEARCH) if o != "namespace"}  # in the path
    assert set(SearchIn.model_fields) == served
    app = make_served().client.app
    route = app.openapi()["paths"]["/v1/namespaces/{namespace}/context"]["get"]
    assert {p["name"] for p in route["parameters"]} == set(spec.CONTEXT_SERVED)


def test_the_mcp_tools_take_what_the_spec_says() -> None:
    state = make_served().client.app.state.served

    async def schemas() -> dict[str, set[str]]:
        async with Client(build_mcp(state)) as c:
            tools = (await c.list_tools()).tools
        return {t.name: set(t.input_schema["properties"]) for t in tools}

    got = asyncio.run(schemas())
    assert got["recall"] == {o.name for o in spec.SEARCH if o.mcp}
    assert got["context"] == set(spec.CONTEXT_MCP)


def subcommand(name: str) -> set[str]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    own = {"help", "db", "json", "progress"}  # the command's, not search options
    return {a.dest for a in sub.choices[name]._actions} - own


def test_the_command_line_takes_what_the_spec_says() -> None:
    assert subcommand("search") == {o.cli for o in spec.SEARCH if o.cli}
    assert subcommand("context") == set(spec.CONTEXT_CLI)


# A bad value for each option the spec checks; every door refuses it alike.
BAD = {
    "k": "3",
    "mode": "fuzzy",
    "kind": "fact",
    "key_prefix": 5,
    "meta": "x",
    "now": "noon",
    "as_of": float("nan"),
    "explain": "yes",
    "max_embed": -1,
    "hops": 99,
    "min_score": 2,
    "cutoff": "some",
    "filter": {"meta.x": {"$like": 1}},
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_each_check_is_the_one_search_makes(name: str) -> None:
    option = spec.BY_NAME[name]
    assert option.check is not None
    with pytest.raises(InvalidInput):
        option.check(BAD[name])
    with Store() as s:
        s.add_event("e1")
        with pytest.raises(InvalidInput):
            s.search("x", at="e1", **{name: BAD[name]})
        if option.served:
            remote = RemoteStore("http://testserver", http_client=make_served().client)
            with pytest.raises(InvalidInput):
                remote.search("x", at="e1", **{name: BAD[name]})


def test_every_option_has_a_doc_and_a_known_door() -> None:
    assert len(SEARCH) == len(set(SEARCH)) == 22
    assert len(CONTEXT) == 18
    for o in (*spec.SEARCH, spec.WINDOW):
        assert o.doc and o.type
        assert o.served or o.check is None or o.name == "max_embed"
    assert set(spec.CONTEXT_SERVED) | set(spec.CONTEXT_MCP) | set(spec.CONTEXT_CLI) <= set(CONTEXT)
