# ruff: noqa: F811  (pytest fixtures imported from the Telegram adapter tests)
"""Without the `.[voice]` extra a voice note is kept as evidence and its sender told that
transcription is not installed; nothing fails (issue #26). Runs everywhere: no model."""

from __future__ import annotations

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.telegram import (  # noqa: F401  (fixtures)
    STEWARD,
    buttons,
    fake,
    incidents,
    polling_on,
    pressed,
    sends_to,
    sent_message,
)
from tests.support.voice_adapter import (  # noqa: F401 (fixtures)
    adapter,
)

NOT_INSTALLED = "Transcription is not installed on this bot"


async def test_without_the_extra_a_voice_note_starts_the_form_and_is_kept(
        adapter: TelegramAdapter, fake: FakeTelegram, core: Core) -> None:
    """No report open: the guided form starts, says transcription is not installed, and
    the report it logs carries the voice note; the audio is never fetched."""
    update = fake.voice_update(STEWARD, b"OggS not fetched", 4)
    await fake.push(update)
    [first] = await fake.wait_for(sends_to(STEWARD, NOT_INSTALLED))
    assert "What is happening?" in first.params["text"]
    for step, tap in (("What is happening?", " type disorder"), ("Where?", " loc gate_away"),
                      ("How serious?", " sev 3")):
        message = sent_message(fake, STEWARD, step)
        await fake.push(fake.callback_update(STEWARD, message, pressed(message, tap)))
        if step != "How serious?":
            await fake.wait_for(lambda c, s=step: [x for x in c if x.ok and x.method ==
                                                   "editMessageText" and s not in
                                                   str(x.params.get("text")) and buttons(x)])
    await fake.wait_for(lambda c: [x for x in c if x.ok and "Logged INC-1" in
                                   str(x.params.get("text"))])
    [inc] = await incidents(core)
    assert inc["type"] == "disorder"
    [note] = inc["evidence"]
    assert note["file_id"] == update["message"]["voice"]["file_id"] and note["duration"] == 4
    assert not fake.calls_of("getFile")


async def test_without_the_extra_a_voice_note_joins_the_open_report(
        adapter: TelegramAdapter, fake: FakeTelegram, core: Core) -> None:
    """After a report, the voice note is added to it as evidence and the answer says why
    there is no transcript."""
    await fake.push(fake.message_update(STEWARD, "/incident pyro @stb_walkway s2 flare"))
    await fake.wait_for(sends_to(STEWARD, "Logged INC-1"))
    await fake.push(fake.voice_update(STEWARD, b"OggS not fetched", 9))
    [added] = await fake.wait_for(sends_to(STEWARD, "Added to INC-1"))
    assert "🎤 voice note 0:09" in added.params["text"]
    assert NOT_INSTALLED in added.params["text"]
    assert not fake.calls_of("getFile")
