"""The contract every backend passes, importable so another backend can run it.

A backend is anything `Store(backend=...)` accepts (the `Backend` protocol of
`branchmem.backends.base`). The suite opens stores on fresh backends from a
factory you give it and checks, through the public `Store` API, what must hold
on every backend: the gate agrees with a naive reference on random trees
and DAGs whatever order events arrive in; every batch is all or none; bad
input is refused with the same error, word for word, as on the in-memory
backend, and changes nothing; the store's `Generation` moves with writes
and erasures. memory, SQLite and PostgreSQL run it in this project's tests.

Run it all at once::

    from branchmem.testing import check_backend
    check_backend(lambda: MyBackend(...))   # raises AssertionError naming each failed check

or one test per check, under pytest::

    import pytest
    from branchmem.testing import CHECKS

    @pytest.mark.parametrize("check", CHECKS, ids=str)
    def test_contract(check, tmp_path):
        check(lambda: MyBackend(tmp_path / "x"))

``make_backend`` must return a new, empty backend at each call (the suite
opens many, and closes each through its store). ``raw_state`` (optional) maps
a backend to a comparable value of everything it stores; with it, "changes
nothing" is checked on the stored rows too, not only through the API.
``scale`` multiplies the number of Hypothesis examples of the property
checks (at least one each).

Importing this package needs only the standard library; running the checks
needs pytest and Hypothesis (the ``dev`` extra: ``pip install 'branchmem[dev]'``).

>>> [str(c) for c in CHECKS][:2]
['gate_matches_reference', 'answers_do_not_depend_on_arrival_order']
"""

from __future__ import annotations

from .contract import CHECKS, Check, ContractFailure, check_backend

__all__ = ["CHECKS", "Check", "ContractFailure", "check_backend"]
