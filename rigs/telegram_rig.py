"""The real python-telegram-bot adapter on a fake Bot API, for tests and benches: alone, or
(the steward benches) with the durable outbox, the shared rate limiter in Redis and an
outbox reader sending from it; and the benches' Telegram stewards on a core's roster."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

from pydantic import SecretStr

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from bot.core.roles import Member
from bot.delivery.durable import OutboxReader
from bot.delivery.ratelimit import SharedRateLimiter
from bot.runtime import telegram_for
from bot.settings import Settings
from rigs.fakes.telegram_api import TOKEN, FakeTelegram


def tabards_on_telegram(core: Core, first_id: int, first_tabard: int,
                        posts: Iterable[tuple[str, str]]) -> None:
    """Put one Telegram member on the core's roster per (role, zone) in `posts`: user ids
    from `first_id`, named "Tabard <first_tabard + i>"."""
    for i, (role, zone) in enumerate(posts):
        uid = str(first_id + i)
        core.roster[f"telegram:{uid}"] = Member("telegram", uid, role,
                                                f"Tabard {first_tabard + i}", zone)


def telegram_on(core: Core, settings: Settings, fake: FakeTelegram,
                **options: Any) -> TelegramAdapter:
    """The core's Telegram adapter (not started) with the fake's token and address; options
    as bot.runtime.telegram_for takes them."""
    s = settings.model_copy(update={
        "telegram_bot_token": SecretStr(TOKEN), "telegram_base_url": fake.base_url})
    return telegram_for(core, s, **options)


@asynccontextmanager
async def telegram_through_outbox(core: Core, fake: FakeTelegram,
                                  owner: str = "bench") -> AsyncIterator[OutboxReader]:
    """A polling Telegram adapter on `fake`, the core's notifier writing to the outbox and
    pacing with the shared limiter, and a running reader; all stopped (and the notifier
    closed) after."""
    adapter = telegram_on(core, core.settings, fake, poll_timeout=1)
    await adapter.start()
    outbox = core.facades.delivery.outbox  # the one the composition root built
    core.notifier.outbox = outbox
    core.notifier.limiter = SharedRateLimiter(core.facades.delivery.windows)
    reader = OutboxReader(core.notifier, outbox, owner=owner, block_ms=100, rescan_s=0.2)
    reader.start()
    try:
        yield reader
    finally:
        await reader.stop()
        await adapter.stop()
        await core.notifier.close()
