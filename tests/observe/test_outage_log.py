"""A Redis outage is two lines in the log, not a warning per command and per second: one when
Redis stops answering, one when it is back with how many commands were answered NOT logged."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime

import pytest
from pydantic import SecretStr

from bot.app import App
from bot.domain.clock import FileClock
from bot.observe.outage import OutageLog
from bot.runtime import run_bot
from bot.sample import ensure_sample_fixture
from bot.settings import load_settings
from rigs.fakes.telegram_api import TOKEN, FakeTelegram
from rigs.net import free_port
from tests.conftest import Chat


class Ticks(OutageLog):
    """The outage log, also counting the background loops meeting the outage: each
    scheduler tick that finds Redis away says gone(), each store call that fails is
    observed (the lease, the outbox reader, the change feed)."""

    def __init__(self) -> None:
        super().__init__()
        self.gone_calls = 0
        self.failed_calls = 0
        self.moved = asyncio.Event()

    def gone(self) -> None:
        self.gone_calls += 1
        self.moved.set()
        super().gone()

    def observe(self, answered: bool) -> None:
        if not answered:
            self.failed_calls += 1
            self.moved.set()
        super().observe(answered)

    async def loops_met_it(self, ticks: int, calls: int) -> None:
        """Wait until `ticks` more scheduler ticks and `calls` more store calls met the
        outage (each wakes this wait; no fixed sleep)."""
        want = (self.gone_calls + ticks, self.failed_calls + calls)
        while self.gone_calls < want[0] or self.failed_calls < want[1]:
            self.moved.clear()
            await asyncio.wait_for(self.moved.wait(), 30)


async def _until(check, what: str) -> None:  # type: ignore[no-untyped-def]
    for _ in range(600):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never: {what}")


async def test_an_outage_is_one_line_when_it_goes_and_one_with_the_count_when_back(
        server, tmp_path, caplog: pytest.LogCaptureFixture):
    fake = FakeTelegram()
    await fake.start()
    # virtual time from a file: the scheduler then also ticks every 0.1 s (not only every 1
    # and 2 s), so the ticks that meet the outage come without seconds of real waiting
    clock_file = tmp_path / "clock"
    FileClock.write(clock_file, datetime.now(UTC))
    settings = load_settings(REDIS_URL=server.url, MATCHDAY_DATA_DIR=str(tmp_path),
                             PORT=str(free_port()), MATCHDAY_LEASE_MS="1000",
                             MATCHDAY_CLOCK_FILE=str(clock_file)).model_copy(
        update={"telegram_bot_token": SecretStr(TOKEN), "telegram_base_url": fake.base_url})
    ticks = Ticks()
    app = App(settings, serving=True, outage=ticks)
    core = await app.start()
    await ensure_sample_fixture(core)
    bot = asyncio.create_task(run_bot(app, web=True))  # scheduler, lease, outbox, feeds
    say = Chat(core)
    try:
        await _until(lambda: bot.done() or any(r.getMessage().startswith("running:")
                                                for r in caplog.records), "the bot is running")
        assert not bot.done(), bot.exception()
        assert (await say("/incident pyro @stb_upper s3", as_="steward")).reply.ok
        caplog.clear()
        with caplog.at_level(logging.INFO):
            server.stop()
            for i in range(20):
                r = await say(f"/incident missile @seg_ne s4 coins {i}", as_="steward")
                assert r.reply.text.startswith("NOT logged"), r.reply.text
            # background loops (escalation and early-warning ticks, lease, outbox reader,
            # change feed) meeting the outage several times: what they log is measured
            await ticks.loops_met_it(ticks=3, calls=20)
            during = [r for r in caplog.records if r.levelno >= logging.WARNING]
            server.start()  # same port, same data directory
            await _until(lambda: any("back after" in r.getMessage() for r in caplog.records),
                         "the 'back' line")
            assert (await say("/incident disorder @stb_walkway s5", as_="steward")).reply.ok
        texts = [r.getMessage() for r in caplog.records]
        gone = [t for t in texts if "Redis not answering (since " in t]
        back = [t for t in texts if t.startswith("Redis back after ")]
        assert len(gone) == 1 and len(back) == 1, texts
        assert "; 20 commands answered NOT logged" in back[0], back[0]
        assert back[0].endswith(" meanwhile")
        # nothing per command or per tick: besides the outage line, at most the leases' own
        # changes ("now the standby", "stopped Telegram polling")
        assert len(during) <= 3, [r.getMessage() for r in during]
        assert not [r for r in caplog.records if r.exc_info], "no traceback in the log"
    finally:
        bot.cancel()
        await asyncio.gather(bot, return_exceptions=True)
        await app.stop()
        await fake.stop()
