"""`door`: one method written once as a plan, a blocking method on `RemoteStore`
and an awaitable one on `AsyncRemoteStore`.

A method of `surface.Surface` returns a `wire.Plan`; decorated with `door`,
it is looked up on a store through this descriptor, which runs the plan on
the store's connection: ``store._c.run(plan)``. A `Connection` runs it to
its result; an `AsyncConnection` returns a coroutine. mypy sees the same:
on an object whose ``_c`` is a `Connection` the method returns ``T``, on one
whose ``_c`` is an `AsyncConnection` a coroutine of ``T``, with the plan's
parameters either way.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload

from .connection import AsyncConnection, Connection
from .wire import Plan

P = ParamSpec("P")
T = TypeVar("T")


class _Blocking(Protocol):
    _c: Connection


class _Awaiting(Protocol):
    _c: AsyncConnection


class door(Generic[P, T]):  # a decorator, like property
    """The plan ``plan`` (a method returning a `wire.Plan`), run by the store's connection."""

    def __init__(self, plan: Callable[Concatenate[Any, P], Plan[T]]) -> None:
        self.plan = plan
        sig = inspect.signature(plan)
        self.signature = sig.replace(parameters=list(sig.parameters.values())[1:])
        functools.update_wrapper(self, plan)  # type: ignore[arg-type]

    @overload
    def __get__(self, obj: None, owner: type) -> Callable[Concatenate[Any, P], Plan[T]]: ...

    @overload
    def __get__(self, obj: _Blocking, owner: type) -> Callable[P, T]: ...

    @overload
    def __get__(self, obj: _Awaiting, owner: type) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(self, obj: Any, owner: type) -> Any:
        if obj is None:
            return self.plan
        plan = self.plan

        @functools.wraps(plan)
        def method(*args: Any, **kwargs: Any) -> Any:
            return obj._c.run(plan(obj, *args, **kwargs))

        method.__signature__ = self.signature  # type: ignore[attr-defined]
        return method
