"""The options of `search` and `context`, listed once for every door.

Each `Option` names a keyword, its type as the Python doors write it, its
default there, the check that refuses a bad value (`InvalidInput`, the same
function `search` calls) and one line of doc, and says which other doors
take it: over HTTP per call (``served``; the others are the server's own
choice, set once by ``branchmem serve``, or not served at all), as an
argument of the MCP tool ``recall``, on the command line of ``branchmem
search`` (by its argparse ``dest``), and whether `context` takes it besides
`search` (`CONTEXT_SERVED`, `CONTEXT_MCP` and `CONTEXT_CLI` say which of
context's the other doors take).

`Store`, `AsyncStore`, `RemoteStore` and `AsyncRemoteStore` take exactly the
keywords of `SEARCH` (`CONTEXT` for context); the remote ones check the
served values with these checks before sending, and refuse the rest.
tests/server/test_options_spec.py holds every door, the HTTP models, the MCP
tools and the CLI included, to this list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInput
from ..model import KINDS
from ..validate import check_anchors, check_int, check_namespace, check_query, check_time, show
from . import filters
from .cutoff import check_min_score, check_rule
from .hops import check_hops

MODES = ("hybrid", "keyword", "vector")


def check_mode(mode: Any) -> str:
    if mode not in MODES:
        raise InvalidInput(f"mode must be one of {', '.join(MODES)}; got {show(mode)}")
    return str(mode)


def check_kinds(kind: Any) -> list[str] | None:
    """A kind or a list of kinds (None: every kind), sorted."""
    if kind is None:
        return None
    items = [kind] if isinstance(kind, str) else kind
    if not isinstance(items, (list, tuple, set, frozenset)):
        raise InvalidInput(f"kind must be a kind or a list of kinds; got {show(kind)}")
    bad = [k for k in items if k not in KINDS]
    if bad:
        raise InvalidInput(
            f"unknown kind {', '.join(map(repr, bad))}; choose from {', '.join(KINDS)}"
        )
    return sorted(items)


def check_key_prefix(key_prefix: Any) -> str | None:
    if key_prefix is not None and not isinstance(key_prefix, str):
        raise InvalidInput(f"key_prefix must be a string, got {show(key_prefix)}")
    return key_prefix


def check_meta(meta: Any) -> Mapping[str, Any] | None:
    if meta is not None and not isinstance(meta, Mapping):
        raise InvalidInput(f"meta must be a dict of field -> value to match, got {show(meta)}")
    return meta


def check_max_embed(max_embed: Any) -> int | None:
    if max_embed is not None and (
        isinstance(max_embed, bool) or not isinstance(max_embed, int) or max_embed < 0
    ):
        raise InvalidInput(f"max_embed must be an integer >= 0 or None, got {show(max_embed)}")
    return max_embed


def check_at(at: Any) -> list[str]:
    """``at`` as a list of anchors: None is none, a string is one (`check_anchors`)."""
    if at is None:
        return []
    return check_anchors([at] if isinstance(at, str) else at)


def check_explain(v: Any) -> bool:
    if not isinstance(v, bool):
        raise InvalidInput(f"explain must be True or False, got {show(v)}")
    return v


def _optional(check: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda v: None if v is None else check(v)


@dataclass(frozen=True)
class Option:
    """One keyword of `search` (and perhaps `context`)."""

    name: str
    type: str
    default: Any
    check: Callable[[Any], Any] | None
    doc: str
    served: bool = True
    mcp: bool = False
    cli: str | None = None
    context: bool = True


_ANY = "str | Sequence[str] | None"
_MAP = "Mapping[str, Any] | None"
_LOG = "QueryLog | str | os.PathLike[str] | None"


def _k(v: Any) -> int:
    return check_int(v, "k", 1)


def _now(v: Any) -> float | None:
    return check_time(v, "now")


def _as_of(v: Any) -> float | None:
    return check_time(v, "as_of")


_o = Option
SEARCH: tuple[Option, ...] = (
    _o("query", "str", None, check_query, "what to look for", mcp=True, cli="query"),
    _o("at", _ANY, None, check_at, "an anchor or a scope chain", mcp=True, cli="at"),
    _o("k", "int", 10, _k, "the most hits returned", mcp=True, cli="k"),
    _o("namespace", "str", "default", check_namespace, "the tenant", mcp=True, cli="namespace"),
    _o("mode", "str", "hybrid", check_mode, "hybrid, keyword or vector", cli="mode"),
    _o("embedder", "Embedder | str | None", None, None, "vectors", served=False, cli="embedder"),
    _o("tokenizer", "Tokenizer | str | None", None, None, "tokens", served=False, cli="tokenizer"),
    _o("weights", "Weights | None", None, None, "how the signals mix", served=False),
    _o("scope_weights", "Sequence[float] | None", None, None, "per anchor", served=False,
      cli="scope_weight"),
    _o("kind", _ANY, None, check_kinds, "keep only these kinds", cli="kind"),
    _o("key_prefix", "str | None", None, check_key_prefix, "keys starting so", cli="key_prefix"),
    _o("meta", _MAP, None, check_meta, "fields the meta must equal", cli="meta"),
    _o("now", "float | None", None, _now, "recency measured from", cli="now"),
    _o("as_of", "float | None", None, _as_of, "answer as the store was then", cli="as_of"),
    _o("explain", "bool", False, check_explain, "say why each hit", cli="explain"),
    _o("log", _LOG, None, None, "append to a query log", served=False, cli="log"),
    _o("max_embed", "int | None", None, check_max_embed, "embed at most", served=False),
    _o("hops", "int", 0, check_hops, "follow the relation graph", cli="hops", context=False),
    _o("min_score", "float | None", None, check_min_score, "lowest confidence", context=False),
    _o("cutoff", "str | None", None, _optional(check_rule), "ratio, knee, off", context=False),
    _o("filter", _MAP, None, filters.check, "LangGraph-style conditions", context=False),
    _o("wait", "float | None", None, None, "seconds to wait for the tip's extraction",
      served=False, context=False),  # checked by `ops.jobs.wait_at`
)  # fmt: skip
"""`search`'s parameters, ``query`` (positional) first."""

WINDOW = _o(
    "window", "int | None", 8, lambda v: check_int(v, "window"), "last messages", cli="window"
)
CONTEXT: tuple[Option, ...] = (
    SEARCH[1],  # at
    SEARCH[0],  # query
    WINDOW,
    *(o for o in SEARCH if o.context and o.name not in ("at", "query")),
)
"""`context`'s parameters, ``at`` (positional) first."""

CONTEXT_SERVED = ("at", "query", "window", "k", "namespace")
"""What `context` takes over HTTP (its search options are the server's)."""
CONTEXT_MCP = ("at", "query", "namespace")
"""The arguments of the MCP tool ``context``."""
CONTEXT_CLI = ("at", "query", "window", "k", "namespace", "embedder")
"""The options of ``branchmem context``."""

BY_NAME = {o.name: o for o in (*SEARCH, WINDOW)}


def served(options: Sequence[Option]) -> tuple[str, ...]:
    """The names of ``options`` a remote door sends per call."""
    return tuple(o.name for o in options if o.served)


def check_served(values: Mapping[str, Any]) -> None:
    """Check ``values`` (name -> value, None left out) as `search` would, before a
    request: `InvalidInput` for a bad one (the server's models would coerce "3")."""
    for name, v in values.items():
        check = BY_NAME[name].check
        if check is not None and v is not None:
            check(v)
