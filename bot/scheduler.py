"""One scheduler for every platform (APScheduler AsyncIOScheduler, memory job store).

STUB: the interface the app and replay rely on; the briefing work fills it in.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

from bot.clock import Clock
from bot.core import Core

Ticker = Callable[[datetime], Awaitable[None]]


class Scheduler:
    """Rebuilt from plans in Redis; every firing claimed once across replicas."""

    def __init__(self, core: Core, *, clock: Clock, live: bool = True) -> None:
        self.core = core
        self.clock = clock
        self.live = live
        self.tickers: list[tuple[Ticker, float]] = []

    def add_ticker(self, fn: Ticker, every_s: float = 1.0) -> None:
        """Run fn(now) every `every_s` seconds (escalation sweeps)."""
        self.tickers.append((fn, every_s))

    async def start(self) -> None:
        """Start firing (live mode) after rebuilding plans from Redis."""

    async def stop(self) -> None:
        """Stop firing."""

    async def run_due(self, now: datetime) -> None:
        """Virtual time: fire everything due up to `now`, in time order (replay, tests)."""
        for fn, _ in self.tickers:
            await fn(now)
