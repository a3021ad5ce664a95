"""The life-safety lane: while a procedure (evacuate, lockdown, …) goes out, the bot sends
nothing else, on any replica.

The procedure's command holds the lane in Redis (with a cap on how long) before its messages
enter the outbox; every replica's delivery asks whether it is held (at most every `poll_s`)
before each message that is not part of the procedure, and waits while it is. The replica
delivering the procedure gives the lane back once it has delivered every message of it (a
replica that takes over after a crash counts only its own, so the cap ends the lane then)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from bot.store import StoreUnavailable

log = logging.getLogger(__name__)
# A procedure's sends are spaced a little wider than the bot-wide pace: they leave on time
# but arrive with a few milliseconds of jitter, and at exactly 30/s one in a thousand
# arrived inside Telegram's window (bench/broadcast.py).
HEADROOM = 1.03


class LaneState(Protocol):
    """Where the lane is held (bot.store.stewarding_keys.Stewarding)."""

    async def hold_lane(self, bid: str, messages: int, ttl_s: float) -> None:
        """Hold the lane for a procedure of `messages` sends, at most ttl_s."""

    async def lane(self) -> tuple[str, int] | None:
        """(procedure id, messages) while held."""

    async def release_lane(self, bid: str) -> bool:
        """Give the lane back if the procedure holds it."""


def lane_cap(messages: int, per_second: float = 30.0) -> float:
    """How long a procedure may hold the lane: twice the platform's floor, plus a margin."""
    return 2.0 * messages / per_second + 30.0


class Lane:
    """One replica's view of the lane (cached for `poll_s`, so a send costs no round trip)."""

    def __init__(self, state: LaneState, *, poll_s: float = 0.25,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.state = state
        self.poll_s = poll_s
        self.clock = clock
        self._held: tuple[str, int] | None = None
        self._checked = float("-inf")
        self._delivered: dict[str, int] = {}
        self._admitting = asyncio.Semaphore(1)
        self._next = float("-inf")

    async def hold(self, bid: str, messages: int) -> None:
        """Take the lane for a procedure before its messages are queued."""
        await self.state.hold_lane(bid, messages, lane_cap(messages))
        self._held, self._checked = (bid, messages), self.clock()

    async def held(self) -> bool:
        """Whether a procedure holds the lane now (as of at most poll_s ago)."""
        now = self.clock()
        if now - self._checked >= self.poll_s:
            try:
                self._held = await self.state.lane()
            except StoreUnavailable:  # unknown: go on with what was last known
                pass
            self._checked = now
        return self._held is not None

    async def admit(self, take: Callable[[], Awaitable[None]], gap: float) -> None:
        """Take a procedure message's rate-limit slot (`take`), one chat at a time and at
        least `gap` seconds (the platform's bot-wide pace) after the last: a thousand chat
        workers polling the shared limiter at once would bunch their sends into bursts that
        arrive too close together."""
        async with self._admitting:
            now = self.clock()
            if self._next > now:
                await asyncio.sleep(self._next - now)
            start = max(self._next, now)  # on schedule: the round trip is not added to it
            await take()
            self._next = max(start + gap * HEADROOM, self.clock() - gap)

    async def delivered(self, bid: str) -> None:
        """One message of a procedure reached its chat; the last one gives the lane back."""
        n = self._delivered[bid] = self._delivered.get(bid, 0) + 1

        await self.held()
        held = self._held
        if held is not None and held[0] == bid and n >= held[1]:
            try:
                await self.state.release_lane(bid)
            except StoreUnavailable:  # its cap ends it
                log.warning("life-safety lane of %s not released (Redis is not answering)",
                            bid)
                return
            self._held, self._checked = None, self.clock()
            self._delivered.pop(bid, None)

    async def release(self, bid: str) -> None:
        """Give the lane back at once: the procedure's write was refused, nothing goes out."""
        await self.state.release_lane(bid)
        self._held, self._checked = None, self.clock()
