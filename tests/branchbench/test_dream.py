"""The consolidation split: a profile written before the user edited, switched
back or forked from a checkpoint. A system that consolidates without
provenance (``dream_flat``, the way peers do) leaks it; ``branchmem_dream``,
whose consolidations are gated records, leaks nothing and keeps what it should."""

from __future__ import annotations

from test_systems import contexts

from branchbench.frozen import verify_split
from branchbench.metrics import score
from branchbench.scenario import load_split, split_dir
from branchbench.validate import validate_dir


def rates(name: str) -> tuple[int, int, int, int]:
    """(leak questions leaked, leak questions, retain questions kept, retain questions)."""
    leaked = leaks = kept = retains = 0
    for sc in load_split(split_dir("consolidation")):
        ctx = contexts(sc, name)
        for q in sc.questions:
            got = score(ctx[q.id], q)
            if q.type == "leak":
                leaks += 1
                leaked += got.leak
            else:
                retains += 1
                kept += got.retain
    return leaked, leaks, kept, retains


def test_the_split_is_valid_frozen_and_counted() -> None:
    assert validate_dir(split_dir("consolidation"), manifest=True) == []
    assert verify_split("consolidation") == split_dir("consolidation")
    scenarios = load_split(split_dir("consolidation"))
    assert (len(scenarios), sum(len(s.questions) for s in scenarios)) == (4, 9)


def test_a_profile_without_provenance_leaks_and_branchmems_does_not() -> None:
    assert rates("dream_flat") == (4, 5, 4, 4)
    assert rates("branchmem_dream") == (0, 5, 4, 4)


def test_branchmem_dream_did_consolidate() -> None:
    from branchbench.systems import make_system

    sc = next(s for s in load_split(split_dir("consolidation")) if s.id.endswith("04"))
    system = make_system("branchmem_dream")
    for e in sc.events:
        system.receive(e)
    store = system.store  # type: ignore[attr-defined]
    assert store.profile("e6").facts["budget"].endswith("3000元")  # made before the fork
    assert store.profile("e6c").facts["budget"].endswith("5000元")
