"""Benchmark ``search(..., filter=)``: the filter on the gate's answer, against
the least a filter pushed into SQL would cost, side by side.

    python bench/filters.py            # 50,000 visible records (about a minute)
    python bench/filters.py --smoke    # 500 (seconds)

History: one trunk of V events on an SQLite file, one record per event with
``meta.topic`` one of ten topics, plus V records on an abandoned branch;
texts embedded with `HashingEmbedder` (the filter's cost, not the embedder's,
is measured).

* **search** — ``store.search(q, at=tip, k=10)``, warm (its gate answer and
  search state kept), without a filter and with ``{"meta.topic": "t3"}``
  (a tenth of the visible set) and ``{"meta.topic": {"$in": [3 topics]}}``.
* **after a write** — the same filtered search right after one more event and
  record on the trunk (the kept answer is extended, not read again).
* **at the new tip** — a chat turn: one more event and record on the trunk
  (not timed), then the search at that new event, timed alone, beside the
  warm search at an anchor searched before (ratio: after / warm). The kept
  answer of the previous tip is extended to the new one, and its search
  state follows it.
* **SQL floor** — ``SELECT id, content FROM records WHERE ns = ? AND
  json_extract(meta, '$.topic') = ?`` on the same file: what a filter pushed
  into SQL would have to read at the least, before gating or ranking anything.

The ratios say whether pushing the filter into SQL could make a search faster:
a filtered warm search below the floor cannot be helped by it.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable

from branchmem import Store
from branchmem.retrieval.embed import get_embedder

EMBEDDER = get_embedder("hashing")

TOPICS = [f"t{i}" for i in range(10)]
FLOOR = "SELECT id, content FROM records WHERE ns = ? AND json_extract(meta, '$.topic') = ?"
WORDS = [
    "咖啡",
    "跑步",
    "成都",
    "杭州",
    "猫",
    "狗",
    "花生",
    "过敏",
    "项目",
    "周末",
    "电影",
    "音乐",
    "爬山",
    "阅读",
    "游泳",
    "会议",
]


def build(path: str, visible: int) -> str:
    """The store at ``path``; returns the trunk's tip."""
    with Store(path, durability="normal") as store:
        events = [{"id": "e0", "content": "开始"}]
        events += [
            {"id": f"e{i}", "parent": f"e{i - 1}", "content": "x"} for i in range(1, visible)
        ]
        events += [{"id": "a0", "parent": "e0", "content": "y"}]
        store.add_events(events)
        recs = []
        for i in range(visible):
            text = f"用户提到{WORDS[i % len(WORDS)]}和{WORDS[(i * 7) % len(WORDS)]}{i}"
            meta = {"topic": TOPICS[i % len(TOPICS)]}
            recs.append({"content": text, "sources": [f"e{i}"], "meta": meta})
            recs.append({"content": "放弃的" + text, "sources": ["a0"], "meta": meta})
        store.add_memories(recs)
    return f"e{visible - 1}"


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def run(visible: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "f.db")
        tip = build(path, visible)
        store = Store(path)
        conn = sqlite3.connect(path)
        ns = conn.execute("SELECT id FROM namespaces WHERE name = 'default'").fetchone()[0]
        one = {"meta.topic": "t3"}
        three = {"meta.topic": {"$in": ["t1", "t3", "t5"]}}
        q = "用户喜欢咖啡和跑步吗"

        def floor() -> object:
            return conn.execute(FLOOR, (ns, "t3")).fetchall()

        for flt in (None, one, three):
            store.search(q, at=tip, k=10, filter=flt, embedder=EMBEDDER)  # warm: gate answer, state
        floor_ms = median_ms(floor, repeat)
        print(f"SQLite, {visible:,} visible and {visible:,} abandoned records, {repeat} queries")
        print(f"  SQL floor (json_extract on the table)    {floor_ms:8.3f} ms")
        warm: dict[str, float] = {}
        for label, flt in (("no filter", None), ("meta.topic = t3", one), ("$in 3 topics", three)):
            ms = median_ms(
                lambda f=flt: store.search(q, at=tip, k=10, filter=f, embedder=EMBEDDER), repeat
            )
            warm[label] = ms
            print(f"  warm search, {label:<22}    {ms:8.3f} ms   ratio {ms / floor_ms:6.2f}x")
        state = {"n": visible}

        def at_new_tip(flt: dict[str, object] | None) -> float:
            """A turn's write, then the search at its new event (timed alone), in ms."""
            i = state["n"]
            state["n"] += 1
            store.add_event(f"e{i}", parent=f"e{i - 1}", content="x")
            store.add_memory(f"用户提到咖啡{i}", sources=[f"e{i}"], meta={"topic": "t3"})
            t0 = time.perf_counter()
            store.search(q, at=f"e{i}", k=10, filter=flt, embedder=EMBEDDER)
            return (time.perf_counter() - t0) * 1000

        for label, flt in (("no filter", None), ("meta.topic = t3", one)):
            at_new_tip(flt)  # the previous tip searched with this filter, as in a chat
            tip_ms = statistics.median(at_new_tip(flt) for _ in range(repeat))
            print(
                f"  at the new tip after a write, {label:<15} {tip_ms:8.3f} ms   "
                f"ratio {tip_ms / warm[label]:6.2f}x the warm search"
            )

        def after_write() -> object:
            i = state["n"]
            state["n"] += 1
            store.add_event(f"e{i}", parent=f"e{i - 1}", content="x")
            store.add_memory(f"用户提到咖啡{i}", sources=[f"e{i}"], meta={"topic": "t3"})
            return store.search(q, at=f"e{i}", k=10, filter=one, embedder=EMBEDDER)

        def write_only() -> object:
            i = state["n"]
            state["n"] += 1
            store.add_event(f"e{i}", parent=f"e{i - 1}", content="x")
            return store.add_memory(f"用户提到咖啡{i}", sources=[f"e{i}"], meta={"topic": "t3"})

        store.search(q, at=f"e{state['n'] - 1}", k=10, filter=one, embedder=EMBEDDER)
        both = median_ms(after_write, repeat)
        writes = median_ms(write_only, repeat)
        store.search(q, at=f"e{state['n'] - 1}", k=10, filter=one, embedder=EMBEDDER)
        both2 = median_ms(after_write, repeat)
        search_ms = max(min(both, both2) - writes, 0.0)
        print(
            f"  filtered search after a write             {search_ms:8.3f} ms   "
            f"ratio {search_ms / floor_ms:6.2f}x  (write and search {min(both, both2):.3f} ms, "
            f"write alone {writes:.3f} ms)"
        )
        conn.close()
        store.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--visible", type=int, default=50_000, help="visible records (default 50,000)")
    ap.add_argument("--repeat", type=int, default=30, help="queries per figure (default 30)")
    ap.add_argument("--smoke", action="store_true", help="500 visible records, 5 queries")
    args = ap.parse_args()
    if args.smoke:
        run(500, 5)
    else:
        run(args.visible, args.repeat)


if __name__ == "__main__":
    main()
