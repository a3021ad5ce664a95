"""The Telegram adapter on the fake Bot API: chats, fixtures `fake`, `polling`, `hook`, filters."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest_asyncio
from aiohttp.test_utils import TestClient, TestServer
from pydantic import SecretStr

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.adapters.telegram.webhook import SECRET_HEADER
from bot.core.dispatch import Core
from bot.runtime import telegram_for
from bot.settings import Settings
from bot.web.host import application
from rigs.fakes.telegram_api import TOKEN, Call, FakeTelegram
from tests.support.fakes import served

STEWARD = 100000001  # roster: Telegram steward, zone gate_away
CONTROL = -1001000000001  # channels.toml: control audience
SUPERVISOR = 200000002  # joins by invite in the tests that need one
STRANGER = 999000999
SECRET = "s3cret-token_for-tests"


def tg_settings(settings: Settings, fake: FakeTelegram) -> Settings:
    return settings.model_copy(update={
        "telegram_bot_token": SecretStr(TOKEN), "telegram_base_url": fake.base_url,
        "telegram_webhook_secret": SecretStr(SECRET),
        "telegram_webhook_url": "https://bot.example.test/telegram"})


fake = served("fake", FakeTelegram)


@asynccontextmanager
async def polling_on(core: Core, settings: Settings, fake: FakeTelegram,
                     **options: Any) -> AsyncIterator[TelegramAdapter]:
    """The core's Telegram adapter started, polling `fake` (options as telegram_for takes
    them); stopped after."""
    a = telegram_for(core, tg_settings(settings, fake), poll_timeout=1, **options)
    await a.start()
    try:
        yield a
    finally:
        await a.stop()


@pytest_asyncio.fixture
async def polling(core: Core, settings: Settings, fake: FakeTelegram
                  ) -> AsyncIterator[TelegramAdapter]:
    async with polling_on(core, settings, fake) as a:
        yield a


@pytest_asyncio.fixture
async def hook(core: Core, settings: Settings, fake: FakeTelegram
               ) -> AsyncIterator[tuple[TelegramAdapter, TestClient]]:
    a = telegram_for(core, tg_settings(settings, fake), webhook=True)
    await a.start()
    client = TestClient(TestServer(application(a.routes())))
    await client.start_server()
    yield a, client
    await client.close()
    await a.stop()


def markup(call: Call) -> dict[str, Any]:
    rm = call.params.get("reply_markup")
    return rm if isinstance(rm, dict) else {}


def buttons(call: Call) -> list[str]:
    """callback_data of every inline button of a sendMessage/editMessageText call."""
    return [b["callback_data"] for row in markup(call).get("inline_keyboard", []) for b in row]


def sends_to(chat: int, needle: str = "") -> Any:
    """Predicate: successful sendMessage calls to a chat whose text contains needle."""
    def pred(calls: list[Call]) -> list[Call]:
        return [c for c in calls if c.ok and c.method == "sendMessage"
                and c.params.get("chat_id") == chat and needle in str(c.params.get("text"))]
    return pred


def edits_of(chat: int, message_id: int, needle: str = "") -> Any:
    def pred(calls: list[Call]) -> list[Call]:
        return [c for c in calls if c.ok and c.method == "editMessageText"
                and c.params.get("chat_id") == chat and c.params.get("message_id") == message_id
                and needle in str(c.params.get("text"))]
    return pred


def pressed(message: dict[str, Any], command: str) -> str:
    """The callback data of the button on a bot message whose press means `command`."""
    rows = message.get("reply_markup", {}).get("inline_keyboard", [])
    return next(b["callback_data"] for row in rows for b in row
                if b["callback_data"].endswith(command))


def sent_message(fake: FakeTelegram, chat: int, needle: str) -> dict[str, Any]:
    """The Message the bot sent to a chat whose text contains needle (latest)."""
    hits = [m for (c, _), m in fake.messages.items() if c == chat and needle in m.get("text", "")]
    assert hits, f"no message with {needle!r} in {chat}"
    return hits[-1]


async def incidents(core: Core) -> list[dict[str, Any]]:
    fx = await core.active_fixture()
    assert fx is not None
    return [e.data for e in await core.store.events(fx.id) if e.kind == "incident.reported"]


class Feed:
    """Deliver updates by polling (push to the fake) or by webhook POSTs."""

    def __init__(self, fake: FakeTelegram, client: TestClient | None = None) -> None:
        self.fake = fake
        self.client = client

    async def __call__(self, update: dict[str, Any]) -> None:
        if self.client is None:
            await self.fake.push(update)
            return
        resp = await self.client.post("/telegram", json=update, headers={SECRET_HEADER: SECRET})
        assert resp.status == 200, await resp.text()


async def to_last_step(fake: FakeTelegram, feed: Feed, first: Call, mid: int) -> str:
    """Tap "missile" on the guided form's first step (`first`, message `mid`) and then the
    first place offered; the severity 3 button's callback data."""
    missile = next(b for b in buttons(first) if b.endswith(" type missile"))
    await feed(fake.callback_update(STEWARD, fake.message(STEWARD, mid), missile))
    loc = buttons((await fake.wait_for(edits_of(STEWARD, mid, "Where?")))[-1])[0]
    await feed(fake.callback_update(STEWARD, fake.message(STEWARD, mid), loc))
    step = (await fake.wait_for(edits_of(STEWARD, mid, "How serious?")))[-1]
    return next(b for b in buttons(step) if b.endswith(" sev 3"))


async def join_supervisor(core: Core, fake: FakeTelegram, feed: Feed) -> None:
    await core.facades.members.create_invite("sup123", "supervisor", "console:admin", 3600)
    await feed(fake.message_update(SUPERVISOR, "/start sup123", first_name="Sam"))
    await fake.wait_for(sends_to(SUPERVISOR, "registered as"))
