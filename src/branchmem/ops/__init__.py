"""The capabilities of a store, as plain functions that take the `Engine` first.

`Store` delegates each public method to one of these; nothing here imports
`Store`, and each module imports only what lies below it. The whole package,
bottom to top (a module imports only from lines above its own):

1. ``errors``, ``model``, ``branch_types``, ``validate``, ``validate_batch``,
   ``bulk``, ``redact``, ``searchlog`` (the query log file): plain data and checks.
2. ``backends``: storage behind one small interface (`backends.base`).
3. ``lineage``, ``lineage_memo``, ``copies``, ``policy``, then ``engine``
   (backend, clock, policy, redactor and every cache), then ``gate``
   (anchors, ranges, `gate.read_views`).
4. ``ops``, in this order:

   - ``audit``: the audit writer `audit.log` and the log's reader;
   - ``ingest``: planning one namespace's events into the lineage;
   - ``stream``: large batches a chunk at a time, where the backend streams;
   - ``records``: writing records, retractions and supersedes;
   - ``heads``: branch rows, head moves, writing on a branch;
   - ``events``: adding events (plain, or on a branch);
   - ``times``: what ``now`` and ``as_of`` leave out of a read;
   - ``scope``: the one read through a scope chain (a search's candidates too);
   - ``lifecycle``: use, score, archive, restore;
   - ``reads``: memories, visible, explain, path and listings;
   - ``branches``: create, remember, set, list, delete, prune;
   - ``snapshots``: snapshot, rollback, history;
   - ``merge``: merge, conflicts, resolve;
   - ``purge``: erasure, and telling every cache (`Engine.forget`).

5. ``retrieval``: keyword, vector, fusion and the search over the gate, on
   the engine. Its caches are the engine's.
6. ``api``: `StoreAPI`, the protocol of the public methods that the next
   layer uses.
7. ``context``, ``extract``, ``importers``, ``demo``, and the evaluation
   harnesses of the package ``branchmem_eval`` (beside this one): built on
   `StoreAPI`, like a client; a `RemoteStore` serves them too.
8. ``front``: `Store`'s doors, one module per area, each a function that
   hands the engine to ``ops``, ``retrieval`` or ``graph``; then ``store``:
   `Store`, which holds one engine, binds the doors, and hands itself to the
   modules of 7.
9. The shells: ``cli``, ``client``, ``server``, ``integrations``, ``ui``.

Imports under ``TYPE_CHECKING`` and inside functions count too; a test walks
every module and fails on any cycle (tests/core/test_layers.py).
"""
