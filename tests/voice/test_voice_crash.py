"""kill -9 of a real `matchday run` while it transcribes a voice note: the note was confirmed
to Telegram already, yet the restarted bot finishes it and answers it exactly once (#26)."""
# ruff: noqa: F811  (pytest fixtures imported from the Telegram adapter tests)

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.core.dispatch import Core
from bot.runtime import telegram_for
from bot.settings import Settings
from bot.store.inbox import Inbox
from rigs.botproc import STEWARD0, Rig
from rigs.crash import keyboard, prompt
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.telegram import (  # noqa: F401  (fixtures)
    STEWARD,
    fake,
    sends_to,
    tg_settings,
)
from tests.voice.conftest import transcriber

pytestmark = pytest.mark.voice
MARK = "transcript (automatic): "


async def until(done: Callable[[], object], timeout: float) -> None:
    """Wait for a condition the fakes' records show (checked every 10 ms)."""
    end = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < end, "timed out"
        await asyncio.sleep(0.01)


def heard(rig: Rig) -> list[str]:
    """The voice-report offers sent to the steward (each a message with the transcript)."""
    return [str(c.params["text"]) for c in rig.tg.calls if c.ok and c.method == "sendMessage"
            and c.params.get("chat_id") == STEWARD0 and MARK in str(c.params.get("text"))]


async def test_kill_9_mid_transcription_then_restart_answers_the_note_once(
        redis_url: str, monkeypatch: pytest.MonkeyPatch, whisper: Path,
        say: Callable[[str], bytes]) -> None:
    monkeypatch.setenv("REDIS_URL", redis_url)  # the session's server, not one of its own
    rig = Rig(1)
    await rig.start()
    try:
        await rig.spawn()
        update = rig.tg.voice_update(
            STEWARD0, say("Racist chanting in block 215, east upper tier."), 4)
        uid, fid = update["update_id"], update["message"]["voice"]["file_id"]
        await rig.tg.push(update)
        # the audio is fetched (transcription starts) and the update confirmed to Telegram
        await until(lambda: f"voice/{fid}.oga" in rig.tg.downloaded
                    and rig.tg.confirmed > uid, 60)
        rig.kill9()
        assert heard(rig) == [], "the kill came after the answer: not mid-transcription"
        await rig.spawn()
        await until(lambda: heard(rig), 240)
        offer = await prompt(rig, STEWARD0, " ok")
        ok = next(d for d in keyboard(offer) if d.endswith(" ok"))
        await rig.tg.push(rig.tg.callback_update(STEWARD0, offer, ok))
        await until(lambda: [c for c in rig.tg.calls if c.ok and c.params.get("chat_id")
                             == STEWARD0 and "Logged INC-1" in str(c.params.get("text"))], 60)
        assert rig.proc is not None
        rig.proc.terminate()  # SIGTERM: whatever was queued is delivered first
        rig.proc.wait(60)
        assert len(heard(rig)) == 1, "the note was answered twice"
        assert rig.store is not None
        [inc] = [e.data for e in await rig.store.events(rig.fixture)
                 if e.kind == "incident.reported"]
        assert (inc["type"], inc["location"]) == ("discriminatory", "bbs_upper")
        assert [e["file_id"] for e in inc["evidence"]] == [fid]  # the note, kept once
    finally:
        await rig.stop()


async def test_a_note_finished_again_from_the_inbox_is_answered_and_kept_once(
        core: Core, settings: Settings, fake: FakeTelegram, whisper: Path,
        say: Callable[[str], bytes]) -> None:
    """A crash after the note's answer went into the outbox but before its update left the
    inbox: the next run transcribes it again, and neither the answer nor the note in the
    voice report is doubled."""
    update = fake.voice_update(STEWARD, say("Racist chanting in block 215, east upper tier."), 4)
    first = telegram_for(core, tg_settings(settings, fake), poll_timeout=1,
                         voice=transcriber(whisper))
    await first.start()
    await fake.push(update)
    await fake.wait_for(sends_to(STEWARD, MARK), timeout=120)
    await first.stop()
    inbox = Inbox(core.store.gateway, first.bot_id)
    await inbox.record([update])  # as the crash left it: recorded, never forgotten
    again = telegram_for(core, tg_settings(settings, fake), poll_timeout=1,
                         voice=transcriber(whisper))
    await again.start()

    async def finished() -> None:  # it leaves the inbox once its answer is in the outbox
        while await inbox.pending():
            await asyncio.sleep(0.05)

    await asyncio.wait_for(finished(), 120)
    await again.drain()
    await again.stop()
    assert len(sends_to(STEWARD, MARK)(fake.calls)) == 1
    fx = await core.active_fixture()
    assert fx is not None
    state = await core.facades.forms.form(fx.id, f"telegram:{STEWARD}")
    assert state is not None and state["kind"] == "voice", state
    assert [e["file_id"] for e in state["evidence"]] == [update["message"]["voice"]["file_id"]]
    assert state["heard"].lower().count("chanting") == 1, state["heard"]
