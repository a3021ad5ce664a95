"""Polling that meets a Redis outage waits quietly: the outage log says it once, not the
poller every second."""

from __future__ import annotations

import asyncio
import logging

import pytest
from telegram import Bot
from telegram.ext import ApplicationBuilder

from bot.adapters.telegram.polling import Poller
from bot.adapters.telegram.probes import MessageIds
from bot.store.gateway import Gateway
from bot.store.inbox import Inbox
from rigs.fakes.telegram_api import TOKEN, FakeTelegram
from rigs.net import free_port


async def test_polling_with_redis_away_logs_no_warning_of_its_own(
        caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeTelegram()
    await fake.start()
    bot = Bot(TOKEN, base_url=fake.base_url + "/bot")
    application = ApplicationBuilder().bot(bot).job_queue(None).build()
    # nothing listens on this port: every inbox call is the store not answering
    gateway = Gateway.from_url(f"redis://127.0.0.1:{free_port()}/0")
    tried = asyncio.Event()

    class Watched(Inbox):
        async def offset(self) -> int | None:
            tried.set()
            return await super().offset()

    poller = Poller(application, Watched(gateway, "1"), MessageIds(), set(), timeout=1)
    try:
        with caplog.at_level(logging.INFO, logger="bot"):
            await poller.start()
            await asyncio.wait_for(tried.wait(), 10)
            tried.clear()
            await asyncio.wait_for(tried.wait(), 10)  # tried again: it keeps polling
        assert not [r.getMessage() for r in caplog.records
                    if r.levelno >= logging.WARNING and "polling" in r.getMessage()]
    finally:
        await poller.stop()
        await gateway.close()
        await fake.stop()
