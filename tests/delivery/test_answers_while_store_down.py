"""With Redis stopped, a direct answer ("NOT logged…", not in the outbox) still reaches the
steward on Telegram, paced by a local limiter while the shared one in Redis is away, and the
chat's worker waits instead of spinning (#27 items 2a and 3)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from bot.app import build_core
from bot.delivery.ratelimit import SharedRateLimiter
from bot.domain.messages import Reply
from bot.runtime import telegram_for
from bot.sample import ensure_sample_fixture
from bot.store import Store
from bot.store.windows import Windows
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.delivery import (
    tg_settings,
)
from tests.support.fakes import served

STEWARD = "100000001"


class VirtualTime:
    """A monotonic clock that moves only when something sleeps on it; counts the sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += max(0.0, seconds)
        await asyncio.sleep(0)


# The fake Bot API; the pace is the bot's, on virtual time, so the fake does not time.
fake = served("fake", FakeTelegram)


async def test_a_direct_answer_leaves_while_redis_is_stopped_without_a_hot_loop(
        server, settings, clock, fake: FakeTelegram, caplog: pytest.LogCaptureFixture):
    store = Store.from_url(server.url)
    core = build_core(store, settings, clock)
    await ensure_sample_fixture(core)
    t = VirtualTime()
    core.notifier.limiter = SharedRateLimiter(Windows(store.gateway), clock=t.clock, sleep=t.sleep,
                                              monotonic=t.clock)
    core.notifier.clock = t.clock
    adapter = telegram_for(core, tg_settings(settings, fake), poll_timeout=1)
    await adapter.start()
    try:
        core.notifier.reply("telegram", STEWARD, Reply("You are on the steward list."))
        await asyncio.wait_for(core.notifier.drain(), 10)
        assert len(fake.sent_to(STEWARD)) == 1

        server.stop()
        caplog.clear()
        with caplog.at_level(logging.INFO):
            for n in (1, 2):
                core.notifier.reply("telegram", STEWARD, Reply(f"NOT logged {n}: the log store "
                                                               "is not answering."))
            await asyncio.wait_for(core.notifier.drain(), 10)

        texts = [str(c.params.get("text")) for c in fake.sent_to(STEWARD)]
        assert any("NOT logged 1" in x for x in texts) and any("NOT logged 2" in x
                                                                for x in texts), texts
        # paced by the fallback limiter: about a second of (virtual) waiting for the second,
        # in a handful of sleeps, not thousands of turns of a loop
        assert 0.9 <= sum(t.sleeps) <= 5 and len(t.sleeps) <= 10, t.sleeps
        lines = [r for r in caplog.records if r.name.startswith("bot.")]
        assert len(lines) <= 3, [r.getMessage() for r in lines]
        assert not any(r.exc_info for r in lines), [r.getMessage() for r in lines]
    finally:
        await adapter.stop()
        await store.close()
