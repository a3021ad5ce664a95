"""Fixtures of the control-room tests: the Telegram adapter against the fake Bot API."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from pydantic import SecretStr

from bot.adapters.telegram.adapter import TelegramAdapter
from bot.core.dispatch import Core
from bot.settings import Settings
from tests.fakes.telegram_api import TOKEN, FakeTelegram

TG_CONTROL = -1001000000001  # channels.toml: control audience on Telegram


@pytest_asyncio.fixture
async def telegram(core: Core, settings: Settings) -> AsyncIterator[FakeTelegram]:
    fake = FakeTelegram()
    await fake.start()
    adapter = TelegramAdapter(core, settings.model_copy(update={
        "telegram_bot_token": SecretStr(TOKEN), "telegram_base_url": fake.base_url}),
        poll_timeout=1)
    await adapter.start()
    yield fake
    await adapter.stop()
    await fake.stop()
