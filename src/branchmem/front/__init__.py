"""The doors of `Store`, by area: each public method of `Store` is a plain
function here, with its full signature and docstring, that hands its
arguments to the capability implementing it (`branchmem.ops`,
`branchmem.retrieval`, `branchmem.graph`) together with the store's engine.

`Store` binds each as its method (``memories = reads.memories`` in its class
body), so ``help(Store.memories)``, `inspect.signature` and mypy see it as
written here. A door's ``self`` is a `Front`: the one thing it reaches of the
store is the engine (tests/core/test_layers.py checks that every door touches
``self`` only as ``self._engine``). Nothing here imports `branchmem.store`.

The modules: `events` and `records` (writes), `reads` (the gate's reads and
the listings), `tree` (children, versions, diff), `branches` (pointers,
snapshots, rollback, history), `merge`, `lifecycle` (use, score, archive,
purge, audit, info), `graph`, `search`, `jobs` (the extraction queue). The
doors that hand the whole store to a layer built on `StoreAPI` (``extract``,
``context``, ``import_export``, ``start_worker``) stay in `branchmem.store`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..engine import Engine


class Front(Protocol):
    """What a door sees of the store it is bound on: its engine, nothing else."""

    _engine: Engine
