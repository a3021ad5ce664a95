"""The reporter's answer never waits for a rate-limited control group."""

from __future__ import annotations

import asyncio

from bot.delivery.ratelimit import RateLimiter
from bot.domain.messages import Reply
from rigs.recording_sink import RecordingSink


class Held(RecordingSink):
    """A sink plus a limiter clock that never moves: every over-limit message waits."""

    def __init__(self) -> None:
        super().__init__("telegram")
        self.sent: list[tuple[str, str]] = []
        self.release = asyncio.Event()
        self.first = asyncio.Event()  # something reached the platform
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    async def sleep(self, _: float) -> None:
        await self.release.wait()
        self.now += 3600.0  # released: time has moved on past every slot

    async def on_send(self, chat: str, reply: Reply) -> None:
        self.sent.append((chat, reply.title))
        self.first.set()


async def test_reply_comes_back_while_the_control_group_is_rate_limited(say, core):
    held = Held()
    core.notifier.limiter = RateLimiter(clock=held.clock, sleep=held.sleep)
    core.notifier.add_sink(held)
    reports = ["medical @ws_lower s2", "fire @bms_upper s2", "drugs @stratford s2"]
    for i, text in enumerate(reports):  # the group takes 1 message a second: 2 must wait
        r = await asyncio.wait_for(say(f"/incident {text}", as_="steward"), timeout=30)
        assert r.reply.title == f"Logged INC-{i + 1}"
    await asyncio.wait_for(held.first.wait(), timeout=30)  # the rest wait for `release`
    assert [c for c, _ in held.sent] == ["-1001000000001"]  # only the first went so far
    held.release.set()
    await core.notifier.drain()
    titles = [t for c, t in held.sent if c == "-1001000000001"]
    assert [t.split()[1] for t in titles] == ["INC-1", "INC-2", "INC-3"]  # in order
