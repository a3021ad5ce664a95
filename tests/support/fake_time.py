"""A clock for delivery tests that moves only when someone sleeps."""

from __future__ import annotations

import asyncio


class FakeTime:
    """A clock that moves only when someone sleeps."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self.now = start

    def clock(self) -> float:
        """The time now."""
        return self.now

    async def sleep(self, s: float) -> None:
        """Move the clock on by `s` instead of waiting."""
        self.now += max(s, 0.0)
        await asyncio.sleep(0)
