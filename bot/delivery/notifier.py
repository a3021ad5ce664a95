"""Fan-out of outbound messages to audiences' channels on every configured platform."""

from __future__ import annotations

import asyncio
import logging
import tomllib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

from bot.core.messages import Outbound
from bot.delivery.ratelimit import RateLimiter
from bot.domain.vocab import ROLES

log = logging.getLogger(__name__)
READERS = "readers"


class Sink(Protocol):
    """A platform adapter's delivery side."""

    platform: str

    async def deliver(self, out: Outbound, chats: list[str]) -> None:
        """Send (or edit in place, when out.ref names a live message) to these chats."""


def load_channels(path: Path) -> dict[str, dict[str, list[str]]]:
    """audience -> platform -> chat ids, from channels.toml."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text())
    return {aud: {plat: [str(c) for c in chats] for plat, chats in plats.items()
                  if plat != READERS}
            for aud, plats in data.get("audiences", {}).items()}


def load_readers(path: Path) -> dict[str, frozenset[str]]:
    """audience -> the roles of the people in its chats (`readers = [...]` in channels.toml)."""
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text())
    out = {}
    for aud, row in data.get("audiences", {}).items():
        if READERS in row:
            unknown = [r for r in row[READERS] if r not in ROLES.keys()]
            if unknown:
                raise ValueError(f"{path.name}: audience {aud!r} has unknown reader role "
                                 f"{unknown[0]!r} (roles: {', '.join(ROLES.keys())})")
            out[aud] = frozenset(row[READERS])
    return out


class Notifier:
    """Routes each Outbound to every sink that has chats for its audience."""

    def __init__(self, channels: dict[str, dict[str, list[str]]],
                 limiter: RateLimiter | None = None,
                 readers: dict[str, frozenset[str]] | None = None) -> None:
        self.channels = channels
        self.readers = readers or {}  # audience -> roles reading it (who may see what)
        self.limiter = limiter or RateLimiter()  # per-chat/platform limits (bot/ratelimit.py)
        self.sinks: dict[str, Sink] = {}
        # Observers that see every outbound once, by audience (console, replay, tests).
        self.taps: list[Callable[[Outbound], Awaitable[None]]] = []
        self._queues: dict[tuple[str, str], asyncio.Queue[tuple[float, int, Outbound]]] = {}
        self._workers: dict[tuple[str, str], asyncio.Task[None]] = {}

    def add_sink(self, sink: Sink) -> None:
        """Register an adapter; one per platform."""
        self.sinks[sink.platform] = sink

    def readers_of(self, audience: str) -> frozenset[str] | None:
        """Every role that reads an audience's chats, counting other audiences sharing a
        chat; None when some audience involved does not declare its readers."""
        chats = {(p, c) for p, cs in self.channels.get(audience, {}).items() for c in cs}
        roles: set[str] = set(self.readers.get(audience, ()))
        if audience not in self.readers:
            return None
        for other, plats in self.channels.items():
            if any((p, c) in chats for p, cs in plats.items() for c in cs):
                if other not in self.readers:
                    return None
                roles |= self.readers[other]
        return frozenset(roles)

    def targets(self, audience: str) -> dict[str, list[str]]:
        """platform -> chats for an audience ('user:<platform>:<id>' is one person)."""
        if audience.startswith("user:"):
            _, platform, user = audience.split(":", 2)
            return {platform: [user]}
        return self.channels.get(audience, {})

    async def send(self, outs: list[Outbound]) -> None:
        """Queue everything for delivery and return at once: chats in parallel, each chat in
        order and within its platform's rate limits (slots are booked now, in call order).
        The sender's own reply never waits for a busy control group; one failing platform
        never stops the others. `drain()` waits until the queues are empty."""
        for out in outs:
            for tap in self.taps:
                await tap(out)
            for platform, chats in self.targets(out.audience).items():
                sink = self.sinks.get(platform)
                if sink is None:
                    continue
                cost = sink.cost(out) if hasattr(sink, "cost") else 1
                for chat in chats:
                    at = self.limiter.reserve(platform, chat, cost)
                    self._queue(platform, chat).put_nowait((at, cost, out))

    def _queue(self, platform: str, chat: str) -> asyncio.Queue[tuple[float, int, Outbound]]:
        key = (platform, chat)
        if key not in self._queues:
            self._queues[key] = asyncio.Queue()
            self._workers[key] = asyncio.create_task(self._worker(platform, chat))
        return self._queues[key]

    async def _worker(self, platform: str, chat: str) -> None:
        queue = self._queues[(platform, chat)]
        sink = self.sinks[platform]
        while True:
            at, cost, out = await queue.get()
            try:
                await self.limiter.wait_until(at)
                await self.limiter.admit(platform, chat, cost)
                await sink.deliver(out, [chat])
            except Exception:  # a platform outage must not lose the others' messages
                log.exception("delivery to %s:%s failed for %s", platform, chat, out.audience)
            finally:
                queue.task_done()

    def queued(self) -> int:
        """Messages waiting in every chat's queue."""
        return sum(q.qsize() for q in self._queues.values())

    async def drain(self) -> None:
        """Wait until every queued message has been handed to its platform."""
        for queue in list(self._queues.values()):
            await queue.join()

    async def close(self) -> None:
        """Deliver what is queued, then stop the workers."""
        await self.drain()
        for task in self._workers.values():
            task.cancel()
        self._workers.clear()
        self._queues.clear()
