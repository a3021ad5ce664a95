"""Telegram members of the sign-off and roll-call tests."""

from __future__ import annotations

from rigs.fakes.telegram_api import FakeTelegram
from tests.support.telegram import Feed, sends_to

SO = 300000001


AWAY_GATE = 100000001  # the roster's Telegram steward


async def ask(fake: FakeTelegram, who: int, text: str, needle: str) -> str:  # noqa: F811
    before = len(sends_to(who)(fake.calls))
    await Feed(fake)(fake.message_update(who, text))
    got = await fake.wait_for(lambda calls: [c for c in sends_to(who)(calls)[before:]
                                             if needle in str(c.params["text"])])
    return str(got[-1].params["text"])
