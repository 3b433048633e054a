"""The shared Hypothesis strategies, for the tests that import them by this
name (they live in `branchmem.testing.strategies`, with the contract suite)."""

from branchmem.testing.strategies import History, Op, apply_op, histories

__all__ = ["History", "Op", "apply_op", "histories"]
