"""``branchmem demo``: the edit / regenerate / switch-back story on an SQLite file.

It writes a small branching conversation, derives memories from it with their
true sources, and at each anchor prints which memories are visible and why.
Every id is fixed, so running it again on the same file adds nothing new
(re-adding an identical event or record is a no-op) and prints the same.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import ConflictingEvent, InvalidInput
from ..store import Store

# (event id, parent, role, content)
EVENTS = [
    ("e1", None, "user", "你好，我在准备搬家，预算3000元。"),
    ("e2", "e1", "assistant", "好的，需要我帮你做什么？"),
    ("e3", "e2", "user", "我下个月搬去成都。"),
    ("e4", "e3", "assistant", "成都不错，火锅很有名。"),
    # the user edits e3: a sibling user message
    ("e3b", "e2", "user", "我下个月搬去杭州。"),
    ("e4b", "e3b", "assistant", "杭州不错，西湖很美。"),
    # the user regenerates the reply: a sibling assistant message
    ("e4c", "e3b", "assistant", "杭州是个好选择，要我推荐几个小区吗？"),
    ("e5", "e4c", "user", "好的。另外预算改成4000元。"),
]

# (memory id, content, sources, key)
MEMORIES = [
    ("m_move", "用户在准备搬家", ["e1"], "user.plan"),
    ("m_budget", "用户的搬家预算是3000元", ["e1"], "user.budget"),
    ("m_chengdu", "用户下个月搬去成都", ["e3"], "user.move.city"),
    ("m_hangzhou", "用户下个月搬去杭州", ["e3b"], "user.move.city"),
    ("m_summary_b", "摘要：用户要搬去杭州，助手提到西湖", ["e3b", "e4b"], None),
]

STEPS = [
    ("e4", "the first branch: the user said 成都"),
    ("e4b", "after the edit: the user now says 杭州 (成都 is on an abandoned sibling)"),
    ("e4c", "after regenerating the reply (the summary that quoted e4b is now off the path)"),
    ("e5", "after the user changed the budget inside the branch (a gated supersede)"),
    ("e4", "switch back to the first branch: only the anchor moved, nothing was rewritten"),
]


def build(store: Store) -> None:
    store.add_events([{"id": i, "parent": p, "role": r, "content": c} for i, p, r, c in EVENTS])
    for mid, content, sources, key in MEMORIES:
        store.add_memory(content, sources=sources, key=key, id=mid)
    # A correction inside the branch: retraction + new record, both sourced from e5.
    if not _exists(store, "m_budget_4000"):
        store.supersede("m_budget", "用户的搬家预算是4000元", sources=["e5"], id="m_budget_4000")
    store.set_branch("current", "e5")


def _exists(store: Store, memory_id: str) -> bool:
    try:
        store.get_memory(memory_id)
    except KeyError:
        return False
    return True


def report(store: Store) -> list[str]:
    """The lines the demo prints: for each step, every memory's state at that anchor."""
    ids = [m[0] for m in MEMORIES] + ["m_budget_4000"]
    lines = []
    for n, (anchor, title) in enumerate(STEPS, 1):
        path = " → ".join(e.id for e in store.path(anchor))
        lines.append(f"\n[{n}] at={anchor}: {title}")
        lines.append(f"    path: {path}")
        for mid in ids:
            m = store.get_memory(mid)
            ex = store.explain(mid, at=anchor)
            mark = "✓ visible" if ex.visible else "✗ hidden "
            lines.append(f"    {mark}  {m.content}")
            if not ex.visible:
                lines.append(f"               why: {ex.reason}")
        visible = [m.content for m in store.memories(at=anchor)]
        lines.append(f"    memories(at={anchor!r}) -> {visible}")
    lines.append(f"\n[no anchor] memories(at=None) -> {store.memories(at=None)}")
    return lines


def run(args: Any) -> int:
    with Store(args.db) as store:
        try:
            build(store)
        except ConflictingEvent as exc:
            raise InvalidInput(
                f"{args.db!r} already holds other events under the demo's ids ({exc.event_id!r}); "
                "the demo needs its own file: pass a new --db path"
            ) from exc
        print(f"branchmem demo on {args.db} (SQLite): an edit, a regenerate, a switch back")
        for line in report(store):
            print(line)
    return 0


def register(sub: Any) -> None:
    p: argparse.ArgumentParser = sub.add_parser(
        "demo", help="walk the edit / regenerate / switch-back story on an SQLite file"
    )
    p.add_argument(
        "--db", default="branchmem-demo.db", help="SQLite file to use (default: %(default)s)"
    )
    p.set_defaults(func=run)
