"""The outbox lag alarm: a lag over the limit that is still growing (messages taken and not
going out: the probe counts only fixtures whose outbox has stopped delivering) raises it
once, in the log, /healthz and to control; it clears, once, when the lag is back under the
limit."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from bot.domain.messages import Reply
from bot.domain.outbox_lag import OutboxLag

log = logging.getLogger(__name__)

LIMIT_S = 45.0  # a flashpoint's digests keep the lag well under this (bench/failover: <= 10 s)
EVERY_S = 5.0


def lag_reply(notice: OutboxLag) -> Reply:
    """Control's line about the alarm."""
    if notice.raised:
        return Reply(f"Messages from the log are {notice.lag_s:.0f} s behind and falling "
                     "further: new incidents may not be reaching this chat. Check the log "
                     "(matchday list) or radio.", title="⚠ Delivery falling behind")
    return Reply(f"Delivery has caught up ({notice.lag_s:.0f} s behind).",
                 title="Delivery recovered")


class LagAlarm:
    """Samples the outbox lag; raises the alarm once and clears it once."""

    def __init__(self, probe: Callable[[], Awaitable[float]],
                 tell: Callable[[OutboxLag], Awaitable[None]], *,
                 limit_s: float = LIMIT_S) -> None:
        self.probe = probe
        self.tell = tell
        self.limit_s = limit_s
        self.raised = False
        self.lag_s: float | None = None

    async def check(self) -> None:
        """One sample: raise, clear or leave the alarm."""
        lag = await self.probe()
        growing = self.lag_s is not None and lag > self.lag_s
        self.lag_s = lag
        if not self.raised and lag > self.limit_s and growing:
            self.raised = True
            log.warning("outbox lag %.0f s and growing: messages are not going out", lag)
            await self.tell(OutboxLag(lag, True))
        elif self.raised and lag <= self.limit_s:
            self.raised = False
            log.warning("outbox lag recovered (%.0f s)", lag)
            await self.tell(OutboxLag(lag, False))

    async def run(self, every_s: float = EVERY_S,
                  sleep: Callable[[float], Awaitable[object]] = asyncio.sleep) -> None:
        """Sample for ever; a sample the store cannot answer is skipped."""
        while True:
            await sleep(every_s)
            try:
                await self.check()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis away: the outage has its own lines
                log.debug("outbox lag not sampled (%s)", exc.__class__.__name__)
