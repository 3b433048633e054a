"""The naive gate reference, for the tests that import it by this name (it
lives in `branchmem.testing.reference`, with the contract suite)."""

from branchmem.testing.reference import Reference, RefRecord

__all__ = ["RefRecord", "Reference"]
