# ruff: noqa: F811  (pytest fixtures imported from test_telegram_adapter)
"""The platform's time beside ours: a report Telegram says was sent 7 minutes before the bot
received it (a phone that sat on it in a dead spot) keeps both times, and the card says so
(issue 36, beyond)."""

from __future__ import annotations

from datetime import timedelta

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from bot.domain.clock import iso
from rigs.fakes.telegram_api import FakeTelegram
from tests.conftest import START
from tests.support.telegram import (  # noqa: F401  (fixtures)
    CONTROL,
    STEWARD,
    Feed,
    fake,
    polling,
    sends_to,
)


async def test_a_late_delivered_report_keeps_the_platform_time_and_shows_the_delay(
        core: Core, fake: FakeTelegram, polling: TelegramAdapter) -> None:
    update = fake.message_update(STEWARD, "/incident disorder @gate_away s3 fight")
    update["message"]["date"] = int((START - timedelta(minutes=7)).timestamp())
    await Feed(fake)(update)
    await fake.wait_for(sends_to(CONTROL, "Sent 17:53:00 (platform time)"))
    fx = await core.active_fixture()
    inc = await core.store.incident(fx.id, 1)
    assert inc.platform_at == iso(START - timedelta(minutes=7))
    assert inc.reported_at == iso(START)
    card = sends_to(CONTROL, "Sent 17:53:00")(fake.calls)[-1].params["text"]
    assert "received 7m00 after our 18:00:00" in card
