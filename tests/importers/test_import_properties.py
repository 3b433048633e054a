"""Properties: random trees exported in ChatGPT's shape (keys in random order, some
nodes without a message) import as exactly that tree and that current path; the
streaming array reader parses exactly what `json.loads` does, at any chunk size."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from branchmem import Store
from branchmem.importers.jsonstream import ArrayReader
from helpers.chatgpt_shape import conversation


@st.composite
def trees(draw: st.DrawFn) -> tuple[dict[str, str | None], str, list[str], list[str]]:
    """(parents, current, structural nodes, mapping key order)."""
    n = draw(st.integers(1, 25))
    ids = [f"n{i}" for i in range(n)]
    parents: dict[str, str | None] = {ids[0]: None}
    for i in range(1, n):
        parents[ids[i]] = ids[draw(st.integers(max(0, i - 4), i - 1))]
    structural = [i for i in ids if draw(st.integers(0, 5)) == 0]
    current = draw(st.sampled_from(ids))
    order = draw(st.permutations(ids))
    return parents, current, structural, list(order)


def naive_kept_parent(parents: dict[str, str | None], node: str, structural: set[str]) -> Any:
    p = parents[node]
    while p is not None and p in structural:
        p = parents[p]
    return p


FIXTURE_OK = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FIXTURE_OK
@given(trees())
# current_node is the structural root, and the only message has only a structural child
@example(({"n0": None, "n1": "n0", "n2": "n1"}, "n0", ["n0", "n2"], ["n0", "n1", "n2"]))
def test_random_chatgpt_trees_import_exactly(
    make_store: Callable[[], Store], tmp_path: Path, tree: Any
) -> None:
    parents, current, structural, order = tree
    kept = [n for n in parents if n not in structural]
    path = tmp_path / "c.json"
    path.write_text(
        json.dumps([conversation("c", parents, current, structural=structural, order=order)])
    )
    store = make_store()
    report = store.import_export(path)
    if not kept:
        assert report.conversations == () and "no message" in report.skipped[0].reason
        return
    skip = set(structural)
    for n in kept:
        p = naive_kept_parent(parents, n, skip)
        assert store.get_event(n).parents == (() if p is None else (p,))
    # the export's current path: from current_node up, messages only
    expected, node = [], current
    while node is not None:
        if node not in skip:
            expected.append(node)
        node = parents[node]
    expected.reverse()
    if expected:
        assert [e.id for e in store.path("conv/c")] == expected
    else:  # current_node is structural with no message above it: the last leaf is used
        assert report.conversations[0].notes
    assert report.conversations[0].added == len(kept)
    assert store.import_export(path).conversations[0].added == 0


@FIXTURE_OK
@given(trees(), st.data())
def test_an_older_export_then_the_newer_equals_the_newer_alone(
    make_store: Callable[[], Store], tmp_path: Path, tree: Any, data: st.DataObject
) -> None:
    """An export is a growing tree: importing an older one first changes nothing in the end."""
    parents, current, _, order = tree
    ids = list(parents)  # generation order: parents come first
    cut = data.draw(st.integers(1, len(ids)))
    old_parents = {n: parents[n] for n in ids[:cut]}
    old_current = data.draw(st.sampled_from(ids[:cut]))
    old = conversation("c", old_parents, old_current, order=[n for n in order if n in old_parents])
    new = conversation("c", parents, current, order=order)
    (tmp_path / "old.json").write_text(json.dumps([old]))
    (tmp_path / "new.json").write_text(json.dumps([new]))
    both, alone = make_store(), make_store()
    first = both.import_export(tmp_path / "old.json").conversations[0].added
    then = both.import_export(tmp_path / "new.json").conversations[0]
    assert (first, then.added, then.conflicts) == (cut, len(ids) - cut, ())
    alone.import_export(tmp_path / "new.json")
    assert both.path("conv/c") == alone.path("conv/c")
    for n in ids:
        assert both.get_event(n) == alone.get_event(n)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(json_values, max_size=6),
    st.integers(1, 40),
    st.sampled_from(["", " ", "\n  ", "\t"]),
    st.booleans(),
    st.booleans(),
)
def test_array_reader_matches_json_loads(
    items: list[Any], chunk: int, ws: str, ascii_only: bool, bom: bool
) -> None:
    text = (
        ws
        + "["
        + ws
        + ("," + ws).join(json.dumps(x, ensure_ascii=ascii_only) for x in items)
        + ws
        + "]"
        + ws
    )
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
    assert list(ArrayReader(io.BytesIO(raw), chunk=chunk)) == json.loads(text)
