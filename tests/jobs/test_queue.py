"""The extraction queue kept in the store, and its worker, on every backend.

A write with ``extract=True`` returns at once; the worker extracts at each
queued tip once; a failing model is retried then recorded; a claim whose
worker died is taken again after its lease, and nothing is written twice;
several workers on one queue extract each tip once; a purge drops the jobs
and nothing purged is written back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from branchmem import Store
from branchmem.engine import engine_of
from branchmem.errors import InvalidInput
from branchmem.extract import Proposal, RuleExtractor, Worker
from branchmem.model import Event, Memory
from branchmem.ops import jobs

FACT = "我对花生过敏。"


class Scripted:
    """The rules, behind a model that may sleep or fail its first calls; it
    counts its calls per tip (the window's last event)."""

    def __init__(self, *, sleep: float = 0.0, fail: int = 0) -> None:
        self.sleep = sleep
        self.fail = fail
        self.calls: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.rules = RuleExtractor()

    def propose(self, window: list[Event], visible: list[Memory]) -> list[Proposal]:
        with self.lock:
            self.calls[window[-1].id] += 1
            failing = self.fail > 0
            self.fail -= 1
        time.sleep(self.sleep)
        if failing:
            raise RuntimeError("the model is down")
        return self.rules.propose(window, visible)


def contents(store: Store, at: str, namespace: str = "default") -> list[str]:
    return [m.content for m in store.memories(at=at, namespace=namespace)]


def test_a_queued_write_returns_and_the_worker_extracts_once(store: Store) -> None:
    ex = Scripted(sleep=0.2)
    t0 = time.perf_counter()
    store.add_event("e1", content=FACT, extract=True)
    assert time.perf_counter() - t0 < 0.2  # no model call in the write
    assert contents(store, "e1") == []
    assert [(j.tip, j.state, j.attempts) for j in store.pending()] == [("e1", "queued", 0)]
    worker = Worker(store, ex)
    assert worker.drain() == 1
    assert contents(store, "e1") == ["用户对花生过敏"]
    assert store.pending() == []
    # Queued again: the tip keeps its done job, so the model is not asked twice.
    store.add_event("e1", content=FACT, extract=True)
    assert store.pending() == [] and worker.drain() == 0
    assert ex.calls == {"e1": 1}


def test_without_extract_nothing_is_queued(store: Store) -> None:
    store.add_event("e1", content=FACT)
    assert store.pending() == [] and contents(store, "e1") == []
    with pytest.raises(InvalidInput, match="extract must be True or False"):
        store.add_event("e2", content=FACT, extract="yes")  # type: ignore[arg-type]


def test_a_batch_queues_its_tips(store: Store) -> None:
    store.add_events(
        [{"id": "a"}, {"id": "b", "parent": "a"}, {"id": "c", "parent": "a"},
         {"id": "x", "namespace": "u2"}],
        extract=True,
    )  # fmt: skip
    assert sorted((j.namespace, j.tip) for j in store.pending()) == [
        ("default", "b"), ("default", "c"), ("u2", "x")
    ]  # fmt: skip
    assert [j.tip for j in store.pending("u2")] == ["x"]


def test_a_read_may_wait_for_the_extraction(store: Store) -> None:
    worker = store.start_worker(Scripted(sleep=0.3), poll=0.02)
    try:
        store.add_event("e1", content=FACT, extract=True, branch=None)
        assert contents(store, "e1") == []  # takes what is there
        got = [m.content for m in store.memories(at="e1", wait=10)]
        assert got == ["用户对花生过敏"]
        assert [h.memory.content for h in store.search("花生", at="e1", wait=1, embedder="hashing")]
    finally:
        assert worker.close()
    with pytest.raises(InvalidInput, match="wait must be"):
        store.memories(at="e1", wait=-1)


def test_a_failing_model_is_retried_then_recorded(store: Store) -> None:
    store.add_event("e1", content=FACT, extract=True)
    ex = Scripted(fail=1)
    worker = Worker(store, ex, backoff=0.5, max_attempts=2)
    assert worker.drain() == 1  # the first attempt fails; the retry waits
    (job,) = store.pending()
    assert (job.state, job.attempts, job.error) == ("queued", 1, "RuntimeError: the model is down")
    assert job.not_before > time.time()
    assert worker.drain() == 0  # not yet due
    time.sleep(max(0.0, job.not_before - time.time()) + 0.01)
    assert worker.drain() == 1 and store.pending() == []
    assert contents(store, "e1") == ["用户对花生过敏"]
    # A model that never answers: failed for good after max_attempts, with the error.
    store.add_event("e2", parent="e1", content="我住在成都。", extract=True)
    broken = Worker(store, Scripted(fail=99), backoff=0.01, max_attempts=2)
    broken.drain()
    time.sleep(0.02)
    broken.drain()
    (job,) = store.pending()
    assert (job.tip, job.state, job.attempts) == ("e2", "failed", 2)
    assert "the model is down" in (job.error or "")


def test_a_dead_workers_job_is_redone_once_after_its_lease(
    reopen: Callable[[], Store],
) -> None:
    store = reopen()
    store.add_event("e1", content=FACT, extract=True)
    engine = engine_of(store)
    other = Worker(reopen(), Scripted())
    dead = jobs.claim(engine, "dead", lease=0.5)  # claimed, then abandoned
    assert dead is not None and dead.state == "running"
    assert other.drain() == 0  # the lease holds
    time.sleep(max(0.0, (dead.lease_until or 0.0) - time.time()) + 0.01)
    assert other.drain() == 1  # lapsed: taken again
    written = store.records()
    # The dead worker comes back and finishes: its claim is gone, nothing is written.
    late = Worker(store, Scripted(), name="dead")
    late.run(dead)
    assert store.records() == written and late.done == 0
    assert contents(store, "e1") == ["用户对花生过敏"] and store.pending() == []


def test_several_workers_extract_each_tip_once(reopen: Callable[[], Store]) -> None:
    store = reopen()
    tips = [f"t{i}" for i in range(12)]
    store.add_events([{"id": "root", "content": "你好"}])
    for t in tips:
        store.add_event(t, parent="root", content=FACT, extract=True)
    ex = Scripted(sleep=0.01)
    workers = [Worker(reopen(), ex, name=f"w{i}") for i in range(4)]
    threads = [threading.Thread(target=w.drain) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert ex.calls == dict.fromkeys(tips, 1)
    assert sum(w.done for w in workers) == len(tips) and store.pending() == []
    assert all(contents(store, t) == ["用户对花生过敏"] for t in tips)


def test_purge_drops_the_jobs_and_nothing_purged_comes_back(store: Store) -> None:
    store.add_event("e1", content=FACT, namespace="u1", extract=True)
    store.add_event("k1", content=FACT, extract=True)
    store.purge(namespace="u1", whole_namespace=True)
    assert [j.tip for j in store.pending()] == ["k1"]
    # Purged while the model reads: the worker writes nothing back.
    store.add_event("e2", content=FACT, namespace="u2", extract=True)

    class PurgedMeanwhile(Scripted):
        def propose(self, window: list[Event], visible: list[Memory]) -> list[Proposal]:
            out = super().propose(window, visible)
            if window[-1].namespace == "u2":
                store.purge(namespace="u2", whole_namespace=True)
            return out

    Worker(store, PurgedMeanwhile()).drain()
    assert store.records(namespace="u2") == [] and store.pending() == []
    assert contents(store, "k1") == ["用户对花生过敏"]


def test_an_import_queues_the_current_leaf_of_each_conversation(
    store: Store, tmp_path: Path
) -> None:
    path = tmp_path / "conversations.json"
    convs = [
        {"conversation_id": c, "current_node": f"{c}-m2", "mapping": {
            f"{c}-m1": {"parent": None, "message": {"author": {"role": "user"},
                        "content": {"content_type": "text", "parts": ["你好"]}}},
            f"{c}-m2": {"parent": f"{c}-m1", "message": {"author": {"role": "user"},
                        "content": {"content_type": "text", "parts": [FACT]}}}}}
        for c in ("c1", "c2")
    ]  # fmt: skip
    path.write_text(json.dumps(convs), encoding="utf-8")
    store.import_export(path, extract=True)
    assert sorted(j.tip for j in store.pending()) == ["c1-m2", "c2-m2"]
    assert Worker(store).drain() == 2
    assert contents(store, "conv/c1") == ["用户对花生过敏"]
    store.import_export(path, extract=True)  # nothing new: nothing queued
    assert store.pending() == []


def test_worker_processes_share_one_queue(tmp_path: Path) -> None:
    db = str(tmp_path / "q.db")
    tips = [f"t{i}" for i in range(30)]
    with Store(db) as store:
        store.add_event("root", content="你好")
        store.add_events([{"id": t, "parent": "root", "content": FACT} for t in tips], extract=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    cmd = [sys.executable, "-m", "branchmem", "worker", "--db", db, "--once"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env) for _ in range(3)]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    done = [int(o.split()[0]) for o in outs]
    assert sum(done) == len(tips), outs  # each tip once, whichever process took it
    with Store(db) as store:
        assert store.pending() == []
        assert all(contents(store, t) == ["用户对花生过敏"] for t in tips)
        assert len(store.records()) == len(tips)


def test_a_tip_waiting_for_its_parent_is_tried_again_once_it_arrives(store: Store) -> None:
    store.add_event("e2", parent="e1", content=FACT, extract=True)  # e1 not here yet
    worker = Worker(store, backoff=0.05)
    assert worker.drain() == 1
    (job,) = store.pending()
    assert job.state == "queued" and "waits for a parent" in (job.error or "")
    store.add_event("e1", content="你好")
    time.sleep(0.06)
    assert worker.drain() == 1 and store.pending() == []
    assert contents(store, "e2") == ["用户对花生过敏"]


def test_a_worker_may_consolidate_every_n_jobs(store: Store) -> None:
    store.add_event("e1", content="我住在成都。", extract=True)
    store.add_event("e2", parent="e1", content="我对花生过敏。", extract=True)
    worker = Worker(store, consolidate_every=2)
    assert worker.drain() == 2 and worker.consolidations == 1
    assert store.profile("e2").facts and not store.profile("e1").facts
    with pytest.raises(InvalidInput, match="consolidate_every"):
        Worker(store, consolidate_every=0)
