"""Command menus are set once, not at every start: a restart sets only the menus that changed
(a 15,000-steward roster is not 15,000 setMyCommands each start), and setting them never
holds the start."""

from __future__ import annotations

import dataclasses

from pydantic import SecretStr

from bot.core.dispatch import Core
from bot.runtime import telegram_for
from bot.settings import Settings
from rigs.fakes.telegram_api import TOKEN, FakeTelegram
from tests.support.fakes import served

STEWARD = "100000001"  # roster: a Telegram steward

fake = served("fake", FakeTelegram)


def menus_for(fake: FakeTelegram, user: str) -> list[set[str]]:
    """The menus a person was given, oldest first (their entries' command names)."""
    return [{c["command"] for c in call.params["commands"]}
            for call in fake.calls_of("setMyCommands")
            if str(call.params.get("scope", {}).get("chat_id")) == user]


async def started_and_menus_set(core: Core, settings: Settings, fake: FakeTelegram) -> None:
    """Start the adapter, let its members' menus be set, stop it."""
    adapter = telegram_for(core, settings.model_copy(update={
        "telegram_bot_token": SecretStr(TOKEN), "telegram_base_url": fake.base_url}),
        poll_timeout=1)
    await adapter.start()
    try:
        assert adapter.menus_task is not None
        await adapter.menus_task
    finally:
        await adapter.stop()


async def test_a_restart_sets_only_the_menus_that_changed(core: Core, settings: Settings,
                                                           fake: FakeTelegram) -> None:
    await started_and_menus_set(core, settings, fake)
    [first] = menus_for(fake, STEWARD)
    assert "incident" in first and "decision" not in first
    await started_and_menus_set(core, settings, fake)
    assert len(menus_for(fake, STEWARD)) == 1  # unchanged: not set again
    who = f"telegram:{STEWARD}"
    core.roster[who] = dataclasses.replace(core.roster[who], role="safety_officer")
    await started_and_menus_set(core, settings, fake)
    menus = menus_for(fake, STEWARD)
    assert len(menus) == 2 and "evacuate" in menus[-1]  # promoted: the new menu
