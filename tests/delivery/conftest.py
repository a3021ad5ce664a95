"""Fixtures of the delivery tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import FakeTelegram


@pytest_asyncio.fixture
async def slack_api() -> AsyncIterator[FakeSlack]:
    """The fake Slack Web API, enforcing Slack's limits."""
    f = FakeSlack(enforce_limits=True)
    await f.start()
    yield f
    await f.stop()


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    """The fake Bot API, enforcing Telegram's limits."""
    f = FakeTelegram(enforce_limits=True)
    await f.start()
    yield f
    await f.stop()
