"""A chat app's edit, as the backend sees it: edit -> versions -> switch -> diff.

The user says they move to Chengdu, a fact is extracted, then they edit the
message to Hangzhou. The UI shows "version 2 of 2" with a switcher; switching
back is only a move of the anchor, and `diff` says what the model's memory
gains and loses on the way. Run it: ``python examples/chat_versions.py``.
"""

from __future__ import annotations

from branchmem import Store


def main() -> None:
    store = Store()  # Store("chat.db") keeps it in a file
    store.add_event("u1", parent=None, content="你好")
    store.add_event("u2", parent="u1", content="我下个月搬去成都")
    store.add_memory("用户下个月搬去成都", sources=["u2"], key="city")

    # The edit: the parent of the edited message is the parent of the new one.
    edited = store.get_event("u2").parent
    store.add_event("u2b", parent=edited, content="我下个月搬去杭州")
    store.add_memory("用户下个月搬去杭州", sources=["u2b"], key="city")

    # The version switcher on the edited message: ‹ 2/2 ›.
    v = store.versions("u2b")
    print(f"version {v.position} of {v.count}; previous: {v.previous}")
    print("versions:", [e.content for e in store.siblings("u2b").events])
    print("under u1:", [e.id for e in store.children("u1").events])

    # What reads see at each version: switching is a move of the anchor.
    print("at u2b:", [m.content for m in store.memories(at="u2b")])
    d = store.diff("u2b", v.previous or "u2")
    print("switching back loses:", [m.content for m in d.only_a])
    print("and brings back:", [m.content for m in d.only_b], "fork point:", d.fork_point)


if __name__ == "__main__":
    main()
