"""Newer beats older (`retrieval.recency_order`): against a plain reference,
and through `search`."""

from __future__ import annotations

from itertools import permutations

from hypothesis import given, settings
from hypothesis import strategies as st

from branchmem import HashingEmbedder, Store
from branchmem.model import Memory
from branchmem.retrieval.recency_order import asks_history, order, relation, similar

TEXTS = [
    "用户的手机是iPhone 12",
    "用户上周换了小米14",
    "用户对虾过敏",
    "用户对花生过敏",
    "User now works on billing",
    "User works on Atlas",
    "User switched to Vue",
    "User likes tea",
]
KEYS = [None, "user.phone", "user.phone.new", "user.allergy", "user.job", "user.son"]


@st.composite
def memories(draw: st.DrawFn) -> list[Memory]:
    n = draw(st.integers(0, 6))
    out = []
    for i in range(n):
        out.append(
            Memory(
                id=f"m{i}",
                content=draw(st.sampled_from(TEXTS)),
                sources=("e1",),
                key=draw(st.sampled_from(KEYS)),
                kind=draw(st.sampled_from(["semantic", "semantic", "episodic"])),
                created_at=float(draw(st.integers(0, 3))),
                seq=draw(st.integers(1, 50)),
            )
        )
    return out


def reference(
    mems: list[Memory], query: str, near: list[list[bool]] | None = None
) -> tuple[list[str], dict[str, str]]:
    """Plainly: each record folds into the first later one that folds it, to
    the end of the chain; the rest, each at the best rank of its fold, in the
    first order (by that rank) in which none precedes one that demotes it.
    ``near[i][j]``: whether records i and j state the same attribute, told
    to `relation` at once (no facts of its own worked out ahead)."""
    if asks_history(query) or len(mems) < 2:
        return [m.id for m in mems], {}
    ids = [m.id for m in mems]

    def rel(i: int, j: int) -> str | None:
        return relation(mems[i], mems[j], bool(near and i != j and near[i][j]))

    def into(i: int) -> int | None:
        js = [j for j in range(len(mems)) if rel(i, j) == "fold"]
        return js[0] if js else None

    root: dict[int, int] = {}
    for i in range(len(mems)):
        j = into(i)
        while j is not None and into(j) is not None:
            j = into(j)
        if j is not None:
            root[i] = j
    alive = [i for i in range(len(mems)) if i not in root]
    place = {j: min([j] + [i for i in root if root[i] == j]) for j in alive}
    for perm in sorted(permutations(alive), key=lambda p: [(place[i], i) for i in p]):
        at = {i: n for n, i in enumerate(perm)}
        if all(at[b] < at[a] for a in alive for b in alive if rel(a, b) == "demote"):
            return [ids[i] for i in perm], {ids[i]: ids[j] for i, j in root.items()}
    raise AssertionError("no order satisfies the demotions")


@settings(max_examples=300, deadline=None)
@given(memories(), st.sampled_from(["我现在用什么手机", "what did I use before", "job"]))
def test_order_matches_the_reference(mems: list[Memory], query: str) -> None:
    got, folded = order(mems, lambda m: m, query)
    want, want_folded = reference(mems, query)
    assert [m.id for m in got] == want
    assert {mems[i].id: into for i, into in folded.items()} == want_folded
    assert set(folded.values()) <= {m.id for m in got}  # folded into a record still there


@settings(max_examples=300, deadline=None)
@given(memories(), st.data())
def test_order_by_meaning_matches_the_reference(mems: list[Memory], data: st.DataObject) -> None:
    """With a nearness (any symmetric one), as the reference that tells
    `relation` each pair's answer at once."""
    n = len(mems)
    pairs = data.draw(st.sets(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=12))
    near = [[(i, j) in pairs or (j, i) in pairs for j in range(n)] for i in range(n)]
    got, folded = order(mems, lambda m: m, "job", lambda i, j: near[i][j])
    want, want_folded = reference(mems, "job", near)
    assert [m.id for m in got] == want
    assert {mems[i].id: into for i, into in folded.items()} == want_folded


def test_relation_by_kind_of_statement() -> None:
    old = Memory("a", "用户的手机是iPhone 12", ("e1",), key="user.device.phone", seq=1)
    new = Memory("b", "用户上周换了小米14", ("e2",), key="user.device.phone.new", seq=2)
    assert relation(old, new) == "fold" and relation(new, old) is None
    a1 = Memory("c", "用户对花生过敏", ("e1",), key="user.allergy", seq=1)
    a2 = Memory("d", "用户对虾过敏", ("e2",), key="user.allergy", seq=2)
    assert relation(a1, a2) == "demote"  # both may hold: ranked below, not folded
    s1 = Memory("e", "User works on Atlas", ("e1",), key="user.son", seq=1)
    s2 = Memory("f", "User now works on Atlas", ("e2",), key="user.daughter", seq=2)
    assert relation(s1, s2) is None  # unrelated keys


def test_an_episodic_record_is_never_folded_or_demoted() -> None:
    """What was said stays true as said: a later line is no replacement."""
    old = Memory("a", "用户的手机是iPhone 12", ("e1",), key="user.phone", kind="episodic", seq=1)
    new = Memory("b", "用户上周换了小米14", ("e2",), key="user.phone", seq=2)
    assert relation(old, new) is None
    again = Memory("c", "用户的手机是iPhone 12", ("e2",), key="user.phone", seq=3)
    assert relation(old, again) is None  # the same key, no change: not demoted either
    # a semantic record with the same facts still is
    fact = Memory("d", "用户的手机是iPhone 12", ("e1",), key="user.phone", seq=1)
    assert relation(fact, new) == "fold" and relation(fact, again) == "demote"


def test_function_words_do_not_make_two_lines_alike() -> None:
    a = "Hi! I am going out for coffee with them."
    b = "Hi? I am pretty good today. Now I am going to study with them for my exam."
    assert not similar(a, b)
    assert relation(Memory("a", a, ("e1",), seq=1), Memory("b", b, ("e2",), seq=2)) is None
    # the same content in other words around it still is
    assert similar("The team uses React for the web app", "Now the team uses Vue for the web app")


def test_search_keeps_both_lines_of_a_chat() -> None:
    store = Store()
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    store.add_memory(
        "Fahim: I started playing a new game called dragonheir", sources=["e1"], kind="episodic"
    )
    store.add_memory(
        "Fahim: my brother is currently playing a new game called control",
        sources=["e2"],
        kind="episodic",
    )
    hits = store.search("which game does Fahim play", at="e2", k=5, embedder=HashingEmbedder())
    assert len(hits) == 2 and not hits.cut  # type: ignore[attr-defined]


def _phone_store() -> Store:
    store = Store()
    store.add_events(
        [
            {"id": "e1", "content": "我的手机是iPhone 12"},
            {"id": "e2", "parent": "e1", "content": "上周换了小米14"},
        ]
    )
    store.add_memory("用户的手机是iPhone 12，电池不太行", sources=["e1"], key="user.device.phone")
    store.add_memory("用户上周换了手机小米14", sources=["e2"], key="user.device.phone.new")
    return store


def test_search_folds_the_replaced_value_unless_history_is_asked() -> None:
    store, emb = _phone_store(), HashingEmbedder()
    hits = store.search("我的手机是什么", at="e2", k=2, embedder=emb, explain=True)
    assert [h.memory.content for h in hits] == ["用户上周换了手机小米14"]
    assert [h.memory.content for h in hits.cut] == ["用户的手机是iPhone 12，电池不太行"]  # type: ignore[attr-defined]
    assert "folded into the newer record" in hits.cut[0].explanation.cutoff  # type: ignore[attr-defined]
    past = store.search("我以前的手机是什么", at="e2", k=2, embedder=emb)
    assert {h.memory.content for h in past} >= {"用户的手机是iPhone 12，电池不太行"}
    # off the change's path the old value is all there is
    assert [h.memory.key for h in store.search("我的手机", at="e1", k=2, embedder=emb)] == [
        "user.device.phone"
    ]
    # cutoff="off" ranks as before, folding nothing
    off = store.search("我的手机是什么", at="e2", k=2, embedder=emb, cutoff="off")
    assert len(off) == 2


def test_same_key_without_a_change_ranks_below_not_out() -> None:
    store = Store()
    store.add_events([{"id": "e1"}, {"id": "e2", "parent": "e1"}])
    store.add_memory("用户对花生过敏", sources=["e1"], key="user.allergy")
    store.add_memory("用户对虾过敏，吃了会起疹子", sources=["e2"], key="user.allergy")
    hits = store.search("过敏", at="e2", k=2, embedder=HashingEmbedder())
    assert [h.memory.content for h in hits] == ["用户对虾过敏，吃了会起疹子", "用户对花生过敏"]
