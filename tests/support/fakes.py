"""Fixtures serving the fake platform APIs (rigs/fakes/): one running fake per test."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol, TypeVar

import pytest_asyncio


class Served(Protocol):
    """A fake API server: started before the test, stopped after it."""

    async def start(self) -> Any: ...

    async def stop(self) -> Any: ...


F = TypeVar("F", bound=Served)


def served(name: str, make: Callable[..., F], **options: Any) -> Any:
    """A fixture called `name` yielding a started `make(**options)`, stopped afterwards."""

    @pytest_asyncio.fixture(name=name)
    async def fixture() -> AsyncIterator[F]:
        fake = make(**options)
        await fake.start()
        yield fake
        await fake.stop()

    return fixture
