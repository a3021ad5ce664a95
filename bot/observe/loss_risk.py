"""The one-line warning when Redis could lose a report already answered "Logged" (from the
store's Durability facts), for the start-up log, /status and the Slack Home tab."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from bot.domain.plurals import counted
from bot.store import Durability, StoreUnavailable

LOST = "a crash can lose reports already answered 'Logged'"


def loss_warning(d: Durability, where: str) -> str | None:
    """None when an acknowledged report survives a crash; else one line saying why not."""
    if d.durable:
        return None
    if d.durable is None:
        return (f"Redis at {where}: its persistence could not be checked (CONFIG GET "
                "refused) and no replica is waited for: unless it uses appendfsync always, "
                + LOST)
    if d.appendonly is False:
        disk = "keeps no append-only file"
    elif d.appendfsync == "everysec":
        disk = "writes its append-only file to disk once a second (appendfsync everysec)"
    else:
        disk = f"leaves its append-only file to the OS to flush (appendfsync {d.appendfsync})"
    if d.replicas == 0:
        copies = "has no replica"
    else:
        n = counted(d.replicas, "replica")
        copies = f"does not wait for its {n} (MATCHDAY_REPLICA_ACKS=0)"
    return f"Redis at {where} {disk} and {copies}: {LOST}"


class LossRisk:
    """The warning for /status: checked again at most once a minute (two small reads)."""

    def __init__(self, check: Callable[[], Awaitable[Durability]], where: str,
                 clock: Callable[[], float] = time.monotonic, every_s: float = 60.0) -> None:
        self.check, self.where, self.clock, self.every_s = check, where, clock, every_s
        self._line: str | None = None
        self._at: float | None = None

    def prime(self, d: Durability) -> str | None:
        """Record a check made elsewhere (start-up); the warning line, if any."""
        self._line, self._at = loss_warning(d, self.where), self.clock()
        return self._line

    async def lines(self, _fixture: object = None) -> list[str]:
        """'⚠ Redis at … : a crash can lose …' while it holds; nothing otherwise."""
        if self._at is None or self.clock() - self._at >= self.every_s:
            try:
                self.prime(await self.check())
            except StoreUnavailable:
                pass  # the store being away is said elsewhere; keep the last answer
        return [f"⚠ {self._line}"] if self._line else []
