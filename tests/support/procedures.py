"""A deployed fixture on Telegram and the procedure buttons (fixture `deployed`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest_asyncio

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from bot.core.roles import Member
from bot.delivery.durable import OutboxReader
from rigs.fakes.telegram_api import Call, FakeTelegram
from tests.support.delivery import durable
from tests.support.telegram import Feed, sends_to, sent_message

SO = 300000001  # the safety officer, on Telegram


EAST = [300000011, 300000012]
COMMAND = -1001000000002  # channels.toml: the command audience on Telegram
AWAY_GATE = 100000001  # the roster's Telegram steward (zone gate_away)
ROTA = {300000011: ("Tabard 311", "stb_upper"), 300000012: ("Tabard 312", "stb_lower")}


@pytest_asyncio.fixture
async def deployed(core: Core, polling: TelegramAdapter  # noqa: F811
                   ) -> AsyncIterator[OutboxReader]:
    core.roster[f"telegram:{SO}"] = Member("telegram", str(SO), "safety_officer",
                                           "Safety Officer")
    for who in ("console:steward", "console:supervisor"):  # a Telegram-only deployment here
        core.roster.pop(who)
    for uid, (name, zone) in ROTA.items():
        core.roster[f"telegram:{uid}"] = Member("telegram", str(uid), "steward", name, zone)
    reader = await durable(core)
    yield reader
    await reader.stop()


def procedure_calls(calls: list[Call], word: str) -> list[Call]:
    return [c for c in calls if c.ok and c.method == "sendMessage"
            and word in str(c.params.get("text"))]


def button(call: Call, label: str) -> str:
    rows = (call.params.get("reply_markup") or {}).get("inline_keyboard", [])
    return next(b["callback_data"] for row in rows for b in row if label in b["text"])


async def confirm(fake: FakeTelegram, feed: Feed, text: str) -> None:  # noqa: F811
    await feed(fake.message_update(SO, text))
    ask = (await fake.wait_for(sends_to(SO, "Confirm")))[-1]
    await feed(fake.callback_update(SO, sent_message(fake, SO, "Confirm"),
                                    button(ask, "now")))
