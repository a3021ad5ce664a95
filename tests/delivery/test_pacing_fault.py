"""When pacing fails unexpectedly (a limiter bug, an odd error from the shared windows) the
message stays first in line and goes once pacing works again: the chat's worker backs off
(1 s, 2 s, … on the injected clock) instead of spinning and filling the log."""

from __future__ import annotations

import asyncio

from bot.delivery.ratelimit import RateLimiter
from rigs.recording_sink import RecordingSink

CONTROL = "-1001000000001"


class Faulty(RateLimiter):
    """A limiter whose admissions to control fail `faults` times (other chats' pacing works:
    their workers run beside it in whatever order the loop gives), on a clock that moves
    only when slept."""

    def __init__(self, faults: int) -> None:
        self.now = 0.0
        self.slept: list[float] = []
        self.faults = faults
        self.tries = 0
        super().__init__(clock=lambda: self.now, sleep=self._sleep)

    async def _sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)

    async def admit(self, platform: str, chat: str, cost: int = 1, call: str = "post") -> None:
        if chat != CONTROL:
            await super().admit(platform, chat, cost, call)
            return
        self.tries += 1
        if self.faults > 0:
            self.faults -= 1
            raise RuntimeError("windows out of step")
        await super().admit(platform, chat, cost, call)

    async def acquire(self, platform: str, chat: str, cost: int = 1, call: str = "post") -> None:
        await self.admit(platform, chat, cost, call)


async def test_a_pacing_fault_backs_off_and_the_message_still_goes_once(say, core) -> None:
    limiter = Faulty(faults=3)
    core.notifier.limiter = limiter
    sink = RecordingSink("telegram")
    core.notifier.add_sink(sink)
    r = await asyncio.wait_for(say("/incident fight @ws_lower s3", as_="steward"), timeout=30)
    assert r.reply.title == "Logged INC-1"
    await asyncio.wait_for(core.notifier.drain(), timeout=30)
    cards = [(chat, r) for chat, r in sink.got if chat == CONTROL
             and "INC-1" in r.title]
    assert len(cards) == 1, sink.got  # control got the card, once
    assert limiter.tries <= 8  # a few tries, not a spin
    faults = [s for s in limiter.slept if s >= 1.0]
    assert faults[:3] == [1.0, 2.0, 4.0]
