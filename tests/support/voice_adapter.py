"""A Telegram adapter for voice tests (fixture `adapter`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from bot.settings import Settings
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.telegram import polling_on


@pytest_asyncio.fixture
async def adapter(core: Core, settings: Settings, fake: FakeTelegram
                  ) -> AsyncIterator[TelegramAdapter]:
    """The adapter as telegram_adapter() makes it when the extra is missing: no pool."""
    async with polling_on(core, settings, fake, voice=None) as a:
        yield a
