"""Both real adapters (PTB and slack-bolt) on one core, pointed at the fake servers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from pydantic import SecretStr

from bot.adapters.slack.slack_adapter import SlackAdapter
from bot.core.dispatch import Core
from bot.runtime import slack_for, telegram_for
from bot.settings import Settings
from rigs.fakes.slack_api import RESPONSE_HOSTS, SIGNING_SECRET, FakeSlack
from rigs.fakes.telegram_api import TOKEN, FakeTelegram


@asynccontextmanager
async def both_adapters(core: Core, settings: Settings, tg: FakeTelegram, slack: FakeSlack
                        ) -> AsyncIterator[SlackAdapter]:
    """Start both fakes and both adapters (Telegram polling); stop all four after."""
    await tg.start()
    await slack.start()
    s = settings.model_copy(update={
        "telegram_bot_token": SecretStr(TOKEN), "telegram_base_url": tg.base_url,
        "slack_bot_token": SecretStr("xoxb-test"),
        "slack_signing_secret": SecretStr(SIGNING_SECRET),
        "slack_api_url": slack.api_url, "slack_response_hosts": RESPONSE_HOSTS})
    telegram = telegram_for(core, s, poll_timeout=1)
    slack_adapter = slack_for(core, s)
    await telegram.start()
    await slack_adapter.start()
    try:
        yield slack_adapter
    finally:
        await slack_adapter.stop()
        await telegram.stop()
        await slack.stop()
        await tg.stop()
