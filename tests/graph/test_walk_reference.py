"""The mention walk (`retrieval.spread.walk`, with its kept index and its fast
paths) against the walk as first written (`helpers.walk_reference`): the same
records reached, with the same scores, hops, paths and seeds."""

from __future__ import annotations

import random

import pytest

from branchmem.graph.entities import EntityCache
from branchmem.model import Memory, make_memory
from branchmem.retrieval import spread
from helpers import walk_reference

PEOPLE = ["Alice Chen", "Bob Smith", "Carol Wang", "Dan Kim", "Eve Park"]
THINGS = ["auth-service", "pay-service", "api-gateway", "MatrixOne", "port 6001", "CVE-2022-23529"]


def records(rnd: random.Random, n: int) -> list[Memory]:
    out = []
    for i in range(n):
        words = rnd.sample(PEOPLE + THINGS, rnd.randint(0, 3))
        text = " and ".join(words) + f" note {i}" if words else f"nothing here {i}"
        out.append(make_memory(f"m{i}", text, ("e1",), "note", None, 0.5, "default",
                               None, None, 1.0, i))  # fmt: skip
    return out


@pytest.mark.parametrize("beam", [None, 3, 64])
@pytest.mark.parametrize("seed", range(40))
def test_the_walk_reaches_what_the_reference_reaches(
    seed: int, beam: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the beam at its default, at 3 (it binds often) and off (None)."""
    monkeypatch.setattr(spread, "BEAM", 10**9 if beam is None else beam)
    rnd = random.Random(seed)
    mems = records(rnd, rnd.choice([3, 12, 40, 150]))
    memo = EntityCache()
    for _ in range(3):  # the same list again (its kept index), then a copy of it
        seeds = [(m.id, rnd.uniform(0.1, 1.0)) for m in rnd.sample(mems, min(len(mems), 4))]
        seeds.append(("not-a-candidate", 0.9))
        query = " ".join(rnd.sample(PEOPLE + THINGS + ["who", "what"], 2))
        top = rnd.choice([1.0, 0.5])
        hops = rnd.randint(1, 3)
        decay = rnd.choice([None, 0.5, 1.0])
        got = spread.walk(mems, seeds, query, top, hops, None, decay, names_of=memo)
        want = walk_reference.walk(
            mems, seeds, query, top, hops, None, decay, EntityCache(), beam=beam
        )
        assert got == want
        mems = list(mems) if rnd.random() < 0.5 else mems


def test_the_index_is_kept_for_the_very_list_and_dropped_by_a_purge() -> None:
    mems = records(random.Random(1), 30)
    memo = EntityCache()
    first = spread.index_for(mems, memo)
    assert spread.index_for(mems, memo) is first
    assert spread.index_for(list(mems), memo) is not first  # another list: built again
    again = list(mems)
    kept = spread.index_for(again, memo)
    memo.forget("default", ["m3"])
    assert spread.index_for(again, memo) is not kept
    kept = spread.index_for(again, memo)
    memo.clear()
    assert spread.index_for(again, memo) is not kept


def test_what_an_entity_passes_on_is_shared_among_those_naming_it() -> None:
    """The fan effect (`spread.FAN`): a name two records share passes the
    seed's activation whole; one five records share gives each of the four
    others ``1 / 4 ** FAN`` of it."""
    texts = ["Alice Chen and MatrixOne", "MatrixOne runs on port 6001"] + [
        f"Alice Chen note {i}" for i in range(4)
    ] + [f"nothing here {i}" for i in range(30)]  # fmt: skip
    mems = [
        make_memory(f"m{i}", t, ("e1",), "note", None, 0.5, "default", None, None, 1.0, i)
        for i, t in enumerate(texts)
    ]
    got = spread.walk(mems, [("m0", 1.0)], "", 0.0, 1, None, names_of=EntityCache())
    w = spread.weights([EntityCache().get("default", m.id, m.content) for m in mems])
    assert got[1].score == pytest.approx(w["matrixone"])  # named by m0 and m1 only
    share = 1 / 4**spread.FAN
    assert spread.FAN > 0 and share < 1
    for j in range(2, 6):  # m0's other four "Alice Chen" records
        assert got[j].score == pytest.approx(w["alice chen"] * share)
