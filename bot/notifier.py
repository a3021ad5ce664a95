"""Fan-out of outbound messages to audiences' channels on every configured platform."""

from __future__ import annotations

import asyncio
import logging
import tomllib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

from bot.messages import Outbound
from bot.ratelimit import RateLimiter

log = logging.getLogger(__name__)


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
    return {aud: {plat: [str(c) for c in chats] for plat, chats in plats.items()}
            for aud, plats in data.get("audiences", {}).items()}


class Notifier:
    """Routes each Outbound to every sink that has chats for its audience."""

    def __init__(self, channels: dict[str, dict[str, list[str]]],
                 limiter: RateLimiter | None = None) -> None:
        self.channels = channels
        self.limiter = limiter or RateLimiter()  # per-chat/platform limits (bot/ratelimit.py)
        self.sinks: dict[str, Sink] = {}
        # Observers that see every outbound once, by audience (console, replay, tests).
        self.taps: list[Callable[[Outbound], Awaitable[None]]] = []

    def add_sink(self, sink: Sink) -> None:
        """Register an adapter; one per platform."""
        self.sinks[sink.platform] = sink

    def targets(self, audience: str) -> dict[str, list[str]]:
        """platform -> chats for an audience ('user:<platform>:<id>' is one person)."""
        if audience.startswith("user:"):
            _, platform, user = audience.split(":", 2)
            return {platform: [user]}
        return self.channels.get(audience, {})

    async def send(self, outs: list[Outbound]) -> None:
        """Deliver everything: chats in parallel, each chat in order and within its platform's
        rate limits (slots are booked now, in call order); one failing platform never stops
        the others."""
        queues: dict[tuple[str, str], list[tuple[float, int, Outbound]]] = {}
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
                    queues.setdefault((platform, chat), []).append((at, cost, out))
        if queues:
            await asyncio.gather(*(self._deliver(p, c, q) for (p, c), q in queues.items()))

    async def _deliver(self, platform: str, chat: str,
                       queue: list[tuple[float, int, Outbound]]) -> None:
        sink = self.sinks[platform]
        for at, cost, out in queue:
            await self.limiter.wait_until(at)
            await self.limiter.admit(platform, chat, cost)
            try:
                await sink.deliver(out, [chat])
            except Exception:  # a platform outage must not lose the others' messages
                log.exception("delivery to %s:%s failed for %s", platform, chat, out.audience)
