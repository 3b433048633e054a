"""The ``"stem"`` tokenizer: English inflections meet, Chinese is left as it was."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from branchmem import Store
from branchmem.retrieval.stem import stem
from branchmem.retrieval.tokenize import bigram_tokens, stem_tokens


def test_inflections_meet() -> None:
    for group in (
        ["live", "lives", "lived", "living"],
        ["move", "moved", "moves", "moving"],
        ["city", "cities"],
        ["study", "studies", "studied"],
        ["run", "running"],
        ["work", "works", "worked", "working"],
    ):
        assert len({stem(w) for w in group}) == 1, group
    # short words, digits and different words stay apart
    assert stem("is") == "is" and stem("this") == "this" and stem("py3s") == "py3s"
    assert stem("boss") != stem("bos") and stem("pass") == "pass"


def test_where_do_i_live_finds_lives_in_berlin() -> None:
    store = Store()
    store.add_events([{"id": "e1"}])
    store.add_memory("User lives in Berlin", sources=["e1"], id="m1")
    store.add_memory("Dashboard digest: weekly active users up", sources=["e1"], id="m2")
    plain = store.search(
        "where do I live", at="e1", mode="keyword", cutoff="off", tokenizer="bigram"
    )
    stemmed = store.search("where do I live", at="e1", mode="keyword", tokenizer="stem")
    default = store.search("where do I live", at="e1", mode="keyword")
    assert "m1" not in [h.memory.id for h in plain]
    assert [h.memory.id for h in stemmed] == [h.memory.id for h in default] == ["m1"]


@given(st.text(alphabet=st.sampled_from("我下个月搬去杭州花生过敏，。！ ")))
def test_chinese_is_unchanged(text: str) -> None:
    assert stem_tokens(text) == bigram_tokens(text)
