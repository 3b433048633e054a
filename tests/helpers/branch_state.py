"""A comparable picture of a store's branch-level state, for "bad input changes nothing"."""

from __future__ import annotations

from typing import Any

from branchmem import Store


def state(store: Store, namespace: str = "default") -> dict[str, Any]:
    branches = store.branches(namespace=namespace)
    return {
        "branches": [(b.name, b.head, b.fork_point, b.parent, b.memories) for b in branches],
        "history": {b.name: store.history(b.name, namespace=namespace) for b in branches},
        "memories": {
            b.name: [m.id for m in store.memories(at=b.name, namespace=namespace)] for b in branches
        },
        "conflicts": {
            b.name: [c.id for c in store.conflicts(at=b.name, namespace=namespace)]
            for b in branches
        },
        "snapshots": store.snapshots(namespace=namespace),
        "audit": len(store.audit(namespace)),
    }
