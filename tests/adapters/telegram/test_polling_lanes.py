"""Polling processes people side by side: one person's slow tap answer holds nobody else's
update (a thousand stewards tapping "I have it" at an evacuation are not answered one after
another)."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import SecretStr

from bot.core.dispatch import Core
from bot.runtime import telegram_for
from bot.settings import Settings
from rigs.fakes.telegram_api import TOKEN, Call, FakeTelegram
from tests.support.fakes import served

STEWARD = 100000001  # roster: a Telegram steward
STRANGER = 999000999  # not on the roster: answered with one line, nothing else

fake = served("fake", FakeTelegram)


def texts_to(calls: list[Call], chat: int) -> list[str]:
    return [str(c.params.get("text")) for c in calls
            if c.ok and c.method == "sendMessage" and c.params.get("chat_id") == chat]


async def test_a_slow_tap_answer_holds_no_one_else(core: Core, settings: Settings,
                                                    fake: FakeTelegram,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    adapter = telegram_for(core, settings.model_copy(update={
        "telegram_bot_token": SecretStr(TOKEN), "telegram_base_url": fake.base_url}),
        poll_timeout=1)
    await adapter.start()
    slow = asyncio.Event()
    fake.stalled = {STEWARD: slow}  # the answer to the steward's tap hangs
    try:
        old = {"message_id": 1, "chat": {"id": STEWARD, "type": "private"}, "date": 0,
               "text": "an old message"}
        await fake.push(fake.callback_update(STEWARD, old, "forged"))  # answered "not mine"
        await fake.wait_for(lambda calls: [c for c in calls
                                           if c.method == "getUpdates"] and fake.tapped_by)
        for text in ("/help", "/whoami"):
            await fake.push(fake.message_update(STRANGER, text))
        # the stranger is answered, in order, while the steward's tap answer still hangs
        answered = await fake.wait_for(lambda calls: len(texts_to(calls, STRANGER)) >= 2
                                       and texts_to(calls, STRANGER), timeout=10)
        assert len(answered) == 2
        # not after the tap's answer gave up (processed one after another, it had to)
        assert not [c for c in fake.calls if c.method == "answerCallbackQuery"]
        assert not [r for r in caplog.records if "update failed" in r.getMessage()]
        slow.set()
        await fake.wait_for(lambda calls: [c for c in calls
                                           if c.method == "answerCallbackQuery"], timeout=10)
    finally:
        slow.set()
        await adapter.stop()
