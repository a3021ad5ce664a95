"""Asking the bot something in a Telegram chat as one member."""

from __future__ import annotations

from rigs.fakes.telegram_api import FakeTelegram
from tests.support.telegram import Feed, sends_to


async def ask_as(fake: FakeTelegram, user: int, text: str,  # noqa: F811
                 needle: str) -> str:
    """Send a command as a Telegram user; their answer, which must contain `needle`."""
    before = len(sends_to(user)(fake.calls))
    await Feed(fake)(fake.message_update(user, text))
    got = await fake.wait_for(lambda calls: sends_to(user)(calls)[before:])
    text_out = str(got[-1].params["text"])
    assert needle in text_out, text_out
    return text_out
