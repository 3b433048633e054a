"""What the OpenAPI document says about the values the server takes, so that a
client generated from it sends nothing the server refuses as malformed.

The request models (`branchmem.server.models`) and the routes name these
types; they add nothing to validation (the store checks every value, with
messages that say what to do), only to the schema. The character rules the
store applies (ids printable, branch names without whitespace, text without
NUL) are character classes too large to repeat at every field, so each lives
once in ``components/schemas`` and fields refer to it. `install` adds them,
and the server's configured limits (``k``, batch size, query length), when the
document is first asked for; the routes state those of query parameters
(page size, ``k``, query length).
"""

from __future__ import annotations

import functools
import re
import sys
from typing import Annotated, Any

from fastapi import FastAPI
from pydantic import WithJsonSchema

from ..validate import MAX_DEPTH, MAX_ID_LEN, MAX_NAME_LEN

_REF = "#/components/schemas/"
_MARK = "x-branchmem-string"
"""Stands where a shared schema goes until `install` puts the reference there
(pydantic resolves a ``$ref`` of its own at once, and knows no components)."""


def _shared(name: str) -> Any:
    return WithJsonSchema({_MARK: name})


Id = Annotated[str, _shared("Id")]
"""An event, record, conflict id, key or namespace: printable, 1 to 512 characters."""

Name = Annotated[str, _shared("Name")]
"""A branch or snapshot name: ``user_001/session_abc/task``."""

Anchor = Annotated[str, _shared("Anchor")]
"""``at``: an event id or a branch name."""

Text = Annotated[str, _shared("Text")]
"""Stored text: no NUL character, no lone surrogate."""

Query = Annotated[str, _shared("Query")]
"""A search query: text with at least one character that is not whitespace."""

META = (
    f"a JSON object; objects and lists nest at most {MAX_DEPTH} levels deep "
    "(the object itself is the first)"
)


def _ranges(ok: bytearray) -> str:
    """A regex character class body of the code points ``cp`` where ``ok[cp]`` is 1."""
    out = []
    for run in re.finditer(b"\x01+", ok):
        a, b = run.start(), run.end() - 1
        out.append(_char(a) if a == b else f"{_char(a)}-{_char(b)}")
    return "".join(out)


def _char(cp: int) -> str:
    c = chr(cp)
    return "\\" + c if c in "\\]^-[" else c


@functools.cache
def components() -> dict[str, dict[str, Any]]:
    """The shared string schemas (built once: they walk every code point)."""

    ok = bytearray(chr(cp).isprintable() for cp in range(sys.maxunicode + 1))
    ok[ord(" ")] = 0
    p = _ranges(ok)
    ok[ord("/")] = 0
    n = _ranges(ok)
    text = "\\x00\\ud800-\\udfff"
    return {
        "Id": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_ID_LEN,
            "pattern": f"^ *[{p}][{p} ]*$",
            "description": "printable characters (spaces allowed, not only spaces)",
        },
        "Name": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_NAME_LEN,
            "pattern": f"^[{n}]+(/[{n}]+)*$",
            "description": "parts joined by '/', each of printable characters other "
            "than whitespace, such as user_001/session_abc/task",
        },
        "Anchor": {
            "type": "string",
            "minLength": 1,
            "pattern": "^[^\\ud800-\\udfff]+$",
            "description": "an event id or a branch name",
        },
        "Text": {
            "type": "string",
            "pattern": f"^[^{text}]*$",
            "description": "text without NUL characters or lone surrogates",
        },
        "Query": {
            "type": "string",
            "pattern": f"^[^{text}]*[^{text}\\s][^{text}]*$",
            "description": "text with at least one character that is not whitespace",
        },
    }


def install(app: FastAPI, limits: Any) -> None:
    """Make ``app``'s OpenAPI document carry the shared schemas and ``limits``
    (a `branchmem.server.service.Limits`)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            doc = build()
            _refer(doc)
            schemas = doc.setdefault("components", {}).setdefault("schemas", {})
            schemas.update(components())
            _limit(schemas, limits)
        return app.openapi_schema or {}

    app.openapi = openapi  # type: ignore[method-assign]


def _refer(doc: Any) -> None:
    """Every marked place in ``doc`` refers to its shared schema."""
    todo = [doc]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            name = node.pop(_MARK, None)
            if name is not None:
                node["$ref"] = _REF + name
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)


def _limit(schemas: dict[str, Any], limits: Any) -> None:
    def prop(model: str, field: str) -> dict[str, Any]:
        found: dict[str, Any] = schemas[model]["properties"][field]
        return found

    prop("SearchIn", "k")["maximum"] = limits.max_k
    query = prop("SearchIn", "query")
    query["maxLength"] = limits.max_query
    query["description"] = (
        f"at most {limits.max_query} characters (422 above; `branchmem serve --max-query`)"
    )
    for model, field in (
        ("EventsIn", "events"),
        ("MemoriesIn", "memories"),
        ("TouchIn", "ids"),
        ("PurgeIn", "events"),
        ("PurgeIn", "memories"),
    ):
        prop(model, field)["maxItems"] = limits.max_batch
