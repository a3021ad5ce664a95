# ruff: noqa: F811  (pytest fixtures imported from the Telegram adapter tests)
"""Issue 31, item 9, through python-telegram-bot and the fake Bot API: a voice note whose
update declares 2^31 seconds is answered with one line, never fetched, never logged, and its
length is never shown."""

from __future__ import annotations

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.telegram import (  # noqa: F401  (fixtures)
    CONTROL,
    STEWARD,
    fake,
    incidents,
    sends_to,
)
from tests.support.voice_adapter import (  # noqa: F401  (no pool: fixture)
    adapter,
)


async def test_a_voice_note_declaring_2_31_seconds_is_refused(
        adapter: TelegramAdapter, fake: FakeTelegram, core: Core) -> None:
    await fake.push(fake.message_update(STEWARD, "/incident pyro @stb_walkway s2 flare"))
    await fake.wait_for(sends_to(STEWARD, "Logged INC-1"))
    await fake.push(fake.voice_update(STEWARD, b"OggS never fetched", 2**31))
    [refused] = await fake.wait_for(sends_to(STEWARD, "Voice notes up to 240 min"))
    assert "Nothing was logged" in refused.params["text"]
    await fake.push(fake.message_update(STEWARD, "/incident missile @seg_ne s3 coins"))
    await fake.wait_for(sends_to(STEWARD, "Logged INC-2"))  # everything before it was handled
    assert not fake.calls_of("getFile")
    assert not any("35791394" in str(c.params.get("text")) for c in fake.calls)
    assert len(await incidents(core)) == 2
    fx = await core.active_fixture()
    assert fx is not None and (await core.store.incident(fx.id, 1)).evidence == 0
    assert not [c for c in fake.calls if c.params.get("chat_id") == CONTROL
                and "voice note" in str(c.params.get("text"))]  # control was not told of it
