"""The control audience as one Telegram group, the real adapter on a fake Bot API, and the
active fixture's outbox: what the in-doubt and album delivery tests start from."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from bot.settings import Settings
from bot.store.outbox import Outbox
from rigs.fakes.telegram_api import FakeTelegram
from rigs.telegram_rig import telegram_on

GROUP = "-1001000000001"
ARCHIVE = "-1009999999999"  # a private channel only the bot posts in (in-doubt lookups)


@asynccontextmanager
async def control_group(core: Core, settings: Settings, fake: FakeTelegram, archive: str = ""
                        ) -> AsyncIterator[tuple[TelegramAdapter, str, Outbox]]:
    """(adapter, fixture id, outbox): control sent to GROUP through the started adapter
    (with `archive` as its archive chat, if given), the outbox's group made for the active
    fixture; the adapter stopped after."""
    core.notifier.channels = {"control": {"telegram": [GROUP]}}
    conf = settings.model_copy(update={"telegram_archive_chat": archive}) if archive \
        else settings
    adapter = telegram_on(core, conf, fake, poll_timeout=1)
    await adapter.start()
    try:
        fixture = await core.active_fixture()
        assert fixture is not None
        outbox = Outbox(core.store.gateway)
        await outbox.ensure_group(fixture.id)
        yield adapter, fixture.id, outbox
    finally:
        await adapter.stop()
