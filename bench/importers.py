"""Benchmark `Store.import_export` on a generated ChatGPT export, against
`json.load` of the same file plus a plain `add_events` of already-parsed events.

    python bench/importers.py           # 2,000 conversations, 200,000 messages
    python bench/importers.py --quick   # 200 conversations, 20,000 messages
    python bench/importers.py --smoke   # 10 conversations, 200 messages (seconds)
    python bench/importers.py --heap    # also the import's peak Python heap (a third run)

The export has the published shape (``mapping`` of nodes with ``message``,
``parent``, ``children``; a ``message: null`` root; ``current_node``); 10% of
the messages are edits or regenerations (a sibling of the message before).
Each side runs in its own process, so each peak RSS is its own:

* **import**: ``store.import_export(file)`` into a new SQLite store (streamed:
  one conversation parsed and imported at a time, a transaction each).
* **baseline**: ``json.load(file)`` (timed), then the very events the
  importer writes (meta included) built from it (not timed), then
  ``add_events`` per conversation and ``set_branch`` at its current node into
  a new SQLite store (timed). Its peak RSS holds the whole parsed file, as
  any non-streaming importer's would. The difference in time is the
  importer's own work: streaming parse, conversion, and its lookups.

Printed: messages/s of each, the ratio, and peak RSS (and RSS of a bare
interpreter that has imported branchmem, the floor both start from).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from branchmem import Store
from branchmem.importers import chatgpt

WORDS = [
    "我",
    "下个月",
    "搬去",
    "杭州",
    "成都",
    "的",
    "房子",
    "很",
    "贵",
    "the",
    "user",
    "moves",
    "next",
    "month",
    "to",
    "a",
    "new",
    "flat",
]


def generate(path: Path, conversations: int, per_conversation: int, seed: int = 7) -> int:
    """Write the export one conversation at a time; return the number of messages."""
    rng = random.Random(seed)
    total = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write("[")
        for c in range(conversations):
            cid = f"{c:08x}-0000-4000-8000-{rng.getrandbits(48):012x}"
            root = f"{cid}-root"
            mapping: dict[str, Any] = {
                root: {"id": root, "message": None, "parent": None, "children": []}
            }
            tip = root
            for i in range(per_conversation):
                nid = f"{cid}-{i}"
                parent = tip
                if i >= 2 and rng.random() < 0.10:  # an edit or a regeneration
                    parent = mapping[tip]["parent"]
                role = "user" if i % 2 == 0 else "assistant"
                text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 30)))
                mapping[nid] = {
                    "id": nid,
                    "message": {
                        "id": nid,
                        "author": {"role": role, "name": None, "metadata": {}},
                        "create_time": 1714550000.0 + i,
                        "update_time": None,
                        "content": {"content_type": "text", "parts": [text]},
                        "status": "finished_successfully",
                        "end_turn": role == "assistant",
                        "weight": 1.0,
                        "metadata": {"model_slug": "gpt-4o"} if role == "assistant" else {},
                        "recipient": "all",
                    },
                    "parent": parent,
                    "children": [],
                }
                mapping[parent]["children"].append(nid)
                tip = nid
            keys = list(mapping)
            rng.shuffle(keys)  # exports do not promise parents first
            conv = {
                "title": f"conversation {c}",
                "create_time": 1714550000.0,
                "mapping": {k: mapping[k] for k in keys},
                "current_node": tip,
                "conversation_id": cid,
                "id": cid,
            }
            f.write(("," if c else "") + json.dumps(conv, ensure_ascii=False))
            total += per_conversation
        f.write("]")
    return total


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def phase_import(export: Path, db: Path) -> dict[str, float]:
    with Store(db) as store:
        t = time.perf_counter()
        report = store.import_export(export)
        secs = time.perf_counter() - t
    events = sum(c.events for c in report.conversations)
    return {"seconds": secs, "events": events, "rss": peak_rss_mb()}


def phase_baseline(export: Path, db: Path) -> dict[str, float]:
    t = time.perf_counter()
    with open(export, encoding="utf-8") as f:
        data = json.load(f)
    load_secs = time.perf_counter() - t
    # The same events the importer writes (meta included), built beforehand (not timed).
    batches = []
    for i, item in enumerate(data):
        conv = chatgpt.convert(item, i)
        rows = [
            {"id": e.id, "parent": e.parent, "role": e.role, "content": e.content, "meta": e.meta}
            for e in conv.events
        ]
        batches.append((conv.id, rows, conv.current))
    del data
    with Store(db) as store:
        t = time.perf_counter()
        for cid, events, current in batches:
            store.add_events(events)
            store.set_branch(f"conv/{cid}", current)
        add_secs = time.perf_counter() - t
    n = sum(len(b[1]) for b in batches)
    return {"load": load_secs, "add": add_secs, "events": n, "rss": peak_rss_mb()}


def phase_heap(export: Path, db: Path) -> dict[str, float]:
    """The import's peak Python heap (tracemalloc: slower, so a run of its own)."""
    import tracemalloc

    with Store(db) as store:
        tracemalloc.start()
        store.import_export(export)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    return {"heap": peak / 2**20}


def phase_floor() -> dict[str, float]:
    return {"rss": peak_rss_mb()}


def run_phase(name: str, export: Path, tmp: Path) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--phase", name, str(export), str(tmp / f"{name}.db")],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, float] = json.loads(out.stdout)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="200 conversations, 20,000 messages")
    ap.add_argument("--conversations", type=int)
    ap.add_argument("--per-conversation", type=int, default=100)
    ap.add_argument("--smoke", action="store_true", help="10 conversations of 20 messages")
    ap.add_argument("--heap", action="store_true", help="also the import's peak Python heap")
    ap.add_argument("--phase", nargs=3, metavar=("NAME", "EXPORT", "DB"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phase:
        name, export, db = args.phase
        fn = {"import": phase_import, "baseline": phase_baseline, "heap": phase_heap}.get(name)
        res = fn(Path(export), Path(db)) if fn else phase_floor()
        print(json.dumps(res))
        return
    if args.smoke:
        args.conversations, args.per_conversation = 10, 20
    convs = args.conversations or (200 if args.quick else 2000)
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        export = tmp / "conversations.json"
        t = time.perf_counter()
        messages = generate(export, convs, args.per_conversation)
        size = os.path.getsize(export) / 2**20
        print(
            f"export: {convs} conversations, {messages} messages, {size:.1f} MiB "
            f"(generated in {time.perf_counter() - t:.1f} s); SQLite store in {d}"
        )
        floor = run_phase("floor", export, tmp)
        imp = run_phase("import", export, tmp)
        base = run_phase("baseline", export, tmp)
        heap = run_phase("heap", export, tmp) if args.heap else None
    assert imp["events"] == base["events"] == messages, (imp, base, messages)
    base_secs = base["load"] + base["add"]
    rate = messages / imp["seconds"]
    print(f"  import_export (streamed)      {imp['seconds']:8.2f} s  {rate:9.0f} msg/s")
    print(
        f"  json.load + add_events        {base_secs:8.2f} s  {messages / base_secs:9.0f} msg/s"
        f"   (json.load {base['load']:.2f} s, add_events {base['add']:.2f} s)"
    )
    print(f"  time ratio import / baseline  {imp['seconds'] / base_secs:8.2f}x")
    print(
        f"  peak RSS: import {imp['rss']:.0f} MiB, baseline {base['rss']:.0f} MiB, "
        f"bare interpreter with branchmem {floor['rss']:.0f} MiB; above the floor: "
        f"import {imp['rss'] - floor['rss']:.0f} MiB, "
        f"baseline {base['rss'] - floor['rss']:.0f} MiB "
        f"(file {size:.0f} MiB)"
    )
    print(
        "  (the store's SQLite page cache, up to 64 MiB, is part of both RSS figures)"
        if heap is None
        else f"  import's peak Python heap (tracemalloc): {heap['heap']:.1f} MiB; the rest of its "
        "RSS above the floor is mostly SQLite's page cache (up to 64 MiB)"
    )


if __name__ == "__main__":
    main()
