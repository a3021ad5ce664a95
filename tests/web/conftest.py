"""Fixtures of the control-room tests: the Telegram adapter against the fake Bot API."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio
from aiohttp.test_utils import TestServer
from pydantic import SecretStr

from bot.adapters.telegram.adapter import TelegramAdapter
from bot.core.dispatch import Core
from bot.settings import Settings
from bot.web.server import ControlRoom
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


@pytest_asyncio.fixture
async def control_url(core: Core) -> AsyncIterator[str]:
    """The control room served on a local port (its base URL)."""
    room = ControlRoom(core, "http://127.0.0.1")
    server = TestServer(room.web_app(), host="127.0.0.1")
    await server.start_server()
    yield str(server.make_url("")).rstrip("/")
    await room.live.close()
    await server.close()
