"""Benchmark extraction and context, each against its plain baseline, side by side.

    python bench/extract.py              # 10,000 messages, 10,000 visible memories
    python bench/extract.py --quick      # 2,000 and 2,000 (well under a minute)
    python bench/extract.py --smoke      # 200 and 200, 3 rounds (seconds)

* **RuleExtractor throughput**: ``RuleExtractor().parse`` over the messages
  (messages per second).
* **extract() per message**: a branching conversation (each message a reply to
  the one before, 5% forking from an older message instead; seeded), Chinese
  and English sentences about the user mixed with small talk. One store runs
  ``add_event`` then ``extract(at=message)`` (window 8) per message, the way
  an app would; the other ``add_event`` then one ``add_memory`` per message,
  written by hand. Reported: time per message of each and their ratio, on
  memory and on SQLite.
* **context()**: 10,000 memories visible at one anchor; ``context(at, query,
  k=10)`` against ``memories(at)`` plus ``search(query, at, k=10)`` called
  separately (what a caller would do without it), both with the hashing
  embedder, vectors computed once before timing. Median of interleaved rounds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from branchmem import HashingEmbedder, Store
from branchmem.extract.rules import _parse

ZH = [
    "我住在{c}。",
    "我下个月搬到{c}了。",
    "我在{co}上班。",
    "我对{f}过敏。",
    "我喜欢{h}。",
    "我养了一只{p}。",
    "今天天气不错。",
    "你能帮我看看这个方案吗？",
    "好的，谢谢。",
]
EN = [
    "I live in {C}.",
    "I work at {CO}.",
    "I'm allergic to {F}.",
    "I love {H}.",
    "I have a {P}.",
    "Can you summarize this?",
    "Thanks, that's helpful.",
]
FILL = {
    "c": ["杭州", "成都", "北京", "上海", "深圳", "厦门"],
    "co": ["腾讯", "阿里巴巴", "华为", "字节跳动"],
    "f": ["花生", "芒果", "海鲜", "青霉素"],
    "h": ["爬山", "游泳", "看电影", "弹吉他"],
    "p": ["柯基", "布偶猫", "仓鼠"],
    "C": ["Oslo", "Lima", "Rome", "Quito"],
    "CO": ["Google", "Stripe", "Airbnb"],
    "F": ["peanuts", "shellfish", "pollen"],
    "H": ["hiking", "chess", "jazz"],
    "P": ["dog", "cat", "rabbit"],
}


def messages(n: int, rng: random.Random) -> list[tuple[str, str | None, str]]:
    out: list[tuple[str, str | None, str]] = []
    for i in range(n):
        parent = None if i == 0 else f"m{i - 1}"
        if i > 10 and rng.random() < 0.05:
            parent = f"m{rng.randrange(i - 10, i - 1)}"
        t = rng.choice(ZH + EN)
        text = t.format(**{k: rng.choice(v) for k, v in FILL.items()})
        out.append((f"m{i}", parent, text))
    return out


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def run_extract(store: Store, msgs: list[tuple[str, str | None, str]]) -> None:
    for mid, parent, text in msgs:
        store.add_event(mid, parent=parent, content=text)
        store.extract(at=mid)


def run_manual(store: Store, msgs: list[tuple[str, str | None, str]]) -> None:
    for mid, parent, text in msgs:
        store.add_event(mid, parent=parent, content=text)
        store.add_memory(text, sources=[mid], id="h" + mid)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="2,000 messages and memories")
    ap.add_argument("--smoke", action="store_true", help="200 messages and memories, 3 rounds")
    ap.add_argument("--messages", type=int, help="messages in the conversation")
    ap.add_argument("--rounds", type=int, default=15, help="context() rounds (default 15)")
    ap.add_argument(
        "--backends", default="memory,sqlite", help="for extract(): memory,sqlite (default both)"
    )
    args = ap.parse_args()
    n = args.messages or (200 if args.smoke else 2_000 if args.quick else 10_000)
    if args.smoke:
        args.rounds = 3
    rng = random.Random(7)
    msgs = messages(n, rng)
    print(f"conversation: {n:,} messages, 5% forking from an older message (seed 7)")

    parse = _parse.__wrapped__  # the patterns themselves, not the cache of parsed messages
    t = timed(lambda: [parse(text) for _, _, text in msgs])
    facts = sum(len(parse(text)) for _, _, text in msgs)
    print(f"RuleExtractor.parse (uncached): {n / t:,.0f} messages/s ({facts:,} facts found)")

    with tempfile.TemporaryDirectory() as tmp:
        for backend in args.backends.split(","):
            stores = []
            for name in ("extract", "manual"):
                stores.append(Store() if backend == "memory" else Store(f"{tmp}/{name}.db"))
            te = timed(lambda s=stores[0]: run_extract(s, msgs))  # type: ignore[misc]
            tm = timed(lambda s=stores[1]: run_manual(s, msgs))  # type: ignore[misc]
            written = len(stores[0].memories(at=msgs[-1][0]))
            print(
                f"{backend:>6}: add_event + extract(): {te / n * 1e3:.3f} ms/message; "
                f"add_event + add_memory(): {tm / n * 1e3:.3f} ms/message; "
                f"ratio {te / tm:.2f}x ({written} memories visible at the tip)"
            )
            for s in stores:
                s.close()

    # context() with many visible memories
    store = Store()
    store.add_event("root", content="我在准备搬家。")
    prev = "root"
    for i in range(n):
        store.add_event(f"c{i}", parent=prev, content=f"消息{i}")
        prev = f"c{i}"
    mems = [
        {"content": msgs[i][2], "sources": [f"c{i}"], "importance": rng.random()} for i in range(n)
    ]
    store.add_memories(mems)
    emb = HashingEmbedder()
    query = "我住在哪个城市？"
    store.search(query, at=prev, k=10, embedder=emb)  # vectors computed once, before timing
    ctx_t, sep_t = [], []
    for _ in range(args.rounds):
        ctx_t.append(timed(lambda: store.context(at=prev, query=query, k=10, embedder=emb)))
        sep_t.append(
            timed(
                lambda: (
                    store.path(prev)[-8:],
                    store.memories(at=prev),
                    store.search(query, at=prev, k=10, embedder=emb),
                )
            )
        )
    c, s = statistics.median(ctx_t), statistics.median(sep_t)
    print(
        f"context(k=10) with {n:,} visible memories: {c * 1e3:.1f} ms; path + memories() + "
        f"search() separately: {s * 1e3:.1f} ms; ratio {c / s:.2f}x (median of {args.rounds})"
    )


if __name__ == "__main__":
    main()
