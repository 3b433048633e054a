"""`StoreAPI`, what context, extraction and imports use of a store: `Store` and
`RemoteStore` both offer it (mypy checks the same in `branchmem.client`)."""

from __future__ import annotations

import inspect

import pytest

from branchmem import Store
from branchmem.api import StoreAPI
from branchmem.client import RemoteStore

P = inspect.Parameter
METHODS = sorted(n for n in vars(StoreAPI) if not n.startswith("_") or n in ("__enter__",))


def accepts(impl: inspect.Signature, want: inspect.Parameter) -> bool:
    """Can a call that passes ``want`` as the protocol declares it reach ``impl``?"""
    got = impl.parameters.get(want.name)
    if got is not None:
        if want.kind is P.KEYWORD_ONLY:
            return got.kind in (P.KEYWORD_ONLY, P.POSITIONAL_OR_KEYWORD)
        if want.kind is P.POSITIONAL_OR_KEYWORD:
            return got.kind is P.POSITIONAL_OR_KEYWORD
        return True
    kinds = {p.kind for p in impl.parameters.values()}
    return (want.kind is P.KEYWORD_ONLY and P.VAR_KEYWORD in kinds) or (
        want.kind is P.VAR_KEYWORD and P.VAR_KEYWORD in kinds
    )


@pytest.mark.parametrize("cls", [Store, RemoteStore])
@pytest.mark.parametrize("name", METHODS)
def test_both_stores_offer_the_protocol(cls: type, name: str) -> None:
    want = inspect.signature(getattr(StoreAPI, name))
    impl = inspect.signature(getattr(cls, name))
    for p in want.parameters.values():
        if p.name == "self":  # the object the method is bound on, never passed by name
            continue
        assert accepts(impl, p), f"{cls.__name__}.{name} does not take {p}"
        if p.default is not P.empty and p.name in impl.parameters:
            assert impl.parameters[p.name].default is not P.empty, (cls.__name__, name, p.name)
    # No more required parameters than the protocol passes.
    for p in impl.parameters.values():
        if p.default is P.empty and p.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD):
            assert p.name in want.parameters, f"{cls.__name__}.{name} requires {p.name}"


def test_the_protocol_names_real_methods() -> None:
    assert {"search", "memories", "path", "add_events", "set_branch"} <= set(METHODS)
