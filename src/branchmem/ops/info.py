"""`Store.info`: what a store runs on, for operators and the docs."""

from __future__ import annotations

from typing import Any

from ..engine import Engine


def info(engine: Engine) -> dict[str, Any]:
    """The backend's class and, for vectors, whether the server's index is used.

    >>> from branchmem import Store
    >>> info(Store()._engine)["vectors"]["pgvector"] is None
    True
    """
    b = engine.backend
    vectors = getattr(b, "vector_info", None)
    return {
        "backend": type(b).__name__,
        "vectors": vectors() if vectors is not None else {
            "pgvector": None, "ranking": "in process (numpy or Python)"
        },
    }  # fmt: skip
