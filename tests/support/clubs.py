"""Many clubs on one fake of each platform: fixtures `telegram_clubs` and `slack_clubs` (two
clubs each, limits enforced on a clock that stands still, so a burst is all in one second)
and the real clients (python-telegram-bot, slack_sdk) a club's bot talks to them with."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest_asyncio
from slack_sdk.web.async_client import AsyncWebClient
from telegram import Bot
from telegram.request import HTTPXRequest

from rigs.fakes.slack_api import FakeSlack
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.fake_time import FakeTime

# two clubs' bot tokens (BotFather's shape: <bot id>:<secret>)
CLUB_A_BOT = "700000001:AAclubA-secret_for-the-fake-api-tests"
CLUB_B_BOT = "700000002:BBclubB-secret_for-the-fake-api-tests"
# two clubs' Slack workspaces: team id, bot token, signing secret
CLUB_A_TEAM = ("T0CLUBA", "xoxb-club-a", "signing-secret-club-a")
CLUB_B_TEAM = ("T0CLUBB", "xoxb-club-b", "signing-secret-club-b")


@pytest_asyncio.fixture
async def telegram_clubs() -> AsyncIterator[FakeTelegram]:
    """A fake Bot API serving both clubs' bots, Telegram's limits enforced."""
    fake = FakeTelegram(enforce_limits=True, clock=FakeTime().clock)
    for token in (CLUB_A_BOT, CLUB_B_BOT):
        fake.add_bot(token)
    await fake.start()
    yield fake
    await fake.stop()


@pytest_asyncio.fixture
async def slack_clubs() -> AsyncIterator[FakeSlack]:
    """A fake Slack with the app installed in both clubs' workspaces, limits enforced; its
    own first workspace names its token too, so a token no workspace has is refused."""
    fake = FakeSlack(enforce_limits=True, clock=FakeTime().clock, bot_token="xoxb-first")
    for team in (CLUB_A_TEAM, CLUB_B_TEAM):
        fake.add_workspace(*team)
    await fake.start()
    yield fake
    await fake.stop()


@asynccontextmanager
async def club_bot(fake: FakeTelegram, token: str) -> AsyncIterator[Bot]:
    """A real python-telegram-bot Bot for one club's token, over HTTP to the fake."""
    bot = Bot(token, base_url=f"{fake.base_url}/bot", base_file_url=f"{fake.base_url}/file/bot",
              request=HTTPXRequest(connection_pool_size=4))
    async with bot:
        yield bot


def club_slack(fake: FakeSlack, team: tuple[str, str, str]) -> AsyncWebClient:
    """A real slack_sdk client with one club workspace's bot token, over HTTP to the fake."""
    return AsyncWebClient(token=team[1], base_url=fake.api_url)
