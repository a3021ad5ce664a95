# ruff: noqa: F811  (pytest fixtures imported from the Telegram adapter tests)
"""Voice notes through the real python-telegram-bot path (fake Bot API: getFile and the file
download), transcribed by the real pool with the bundled Whisper model (issue #26)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from bot.adapters.telegram.telegram_adapter import TelegramAdapter
from bot.core.dispatch import Core
from bot.evidence.report import report_markdown
from bot.settings import Settings
from bot.web.visibility import describe
from rigs.fakes.telegram_api import FakeTelegram
from tests.support.telegram import (  # noqa: F401  (fixtures)
    CONTROL,
    STEWARD,
    fake,
    incidents,
    polling_on,
    pressed,
    sends_to,
    sent_message,
)
from tests.voice.conftest import transcriber

pytestmark = pytest.mark.voice
MARK = "transcript (automatic): "
FIRST_NOTE = 120  # seconds: the worker process starts and loads the model


@pytest_asyncio.fixture
async def adapter(request: pytest.FixtureRequest, core: Core, settings: Settings,
                  fake: FakeTelegram, whisper: Path) -> AsyncIterator[TelegramAdapter]:
    """The Telegram adapter with a transcription pool (limits from the test's `pool` mark)."""
    mark = request.node.get_closest_marker("pool")
    async with polling_on(core, settings, fake,
                          voice=transcriber(whisper, **(mark.kwargs if mark else {}))) as a:
        yield a


async def evidence_events(core: Core) -> list[dict[str, Any]]:
    fx = await core.active_fixture()
    assert fx is not None
    return [e.data for e in await core.store.events(fx.id) if e.kind == "incident.evidence"]


async def test_a_voice_note_starts_a_report_confirmed_in_one_tap(
        adapter: TelegramAdapter, fake: FakeTelegram, core: Core,
        say: Callable[[str], bytes]) -> None:
    """No report open: the answer is the transcript, marked, and a button with the type and
    place heard (from the ground's vocabulary); one tap logs it with the audio as evidence."""
    update = fake.voice_update(STEWARD, say("Racist chanting in block 215, east upper tier."),
                               4)
    await fake.push(update)
    [offer] = await fake.wait_for(sends_to(STEWARD, MARK), timeout=FIRST_NOTE)
    assert fake.calls_of("getFile"), "the audio is fetched from Telegram"
    assert "Suggested: Discriminatory abuse at Billy Bonds Stand upper tier" in \
        offer.params["text"]
    message = sent_message(fake, STEWARD, MARK)
    [one_tap] = [b["text"] for row in message["reply_markup"]["inline_keyboard"] for b in row
                 if b["callback_data"].endswith(" ok")]
    assert one_tap == "Report: Discriminatory abuse at BBS upper 213-225, severity 3"
    await fake.push(fake.callback_update(STEWARD, message, pressed(message, " ok")))
    await fake.wait_for(lambda c: [x for x in c if x.ok and x.params.get("chat_id") == STEWARD
                                   and "Logged INC-1" in str(x.params.get("text"))])
    [inc] = await incidents(core)
    assert (inc["type"], inc["location"], inc["severity"]) == ("discriminatory", "bbs_upper", 3)
    assert inc["description"].startswith(MARK) and "215" in inc["description"]
    [note] = inc["evidence"]
    assert note["kind"] == "voice" and note["file_id"] == update["message"]["voice"]["file_id"]
    assert note["transcript"] and note["transcript"] in inc["description"]
    await fake.wait_for(sends_to(CONTROL, "INC-1"))


async def test_a_voice_note_is_added_to_the_open_incident_with_its_transcript(
        adapter: TelegramAdapter, fake: FakeTelegram, core: Core,
        say: Callable[[str], bytes]) -> None:
    """After a report, a voice note joins it: the audio is the evidence, the transcript is
    beside it marked as automatic, in the steward's answer, control's thread and the log."""
    await fake.push(fake.message_update(STEWARD, "/incident missile @away_upper s3 coins"))
    await fake.wait_for(sends_to(STEWARD, "Logged INC-1"))
    await fake.push(fake.voice_update(STEWARD, say("Coins thrown from the away end."), 3))
    [added] = await fake.wait_for(sends_to(STEWARD, "Added to INC-1"), timeout=FIRST_NOTE)
    assert "🎤 voice note 0:03" in added.params["text"] and MARK in added.params["text"]
    # control gets the audio again with its line as the caption
    [line] = await fake.wait_for(lambda c: [x for x in c if x.ok and x.method == "sendVoice"
                                            and x.params.get("chat_id") == CONTROL])
    assert line.params["caption"].startswith("Evidence on INC-1")
    assert MARK in line.params["caption"]
    [ev] = await evidence_events(core)
    assert ev["text"].startswith(MARK) and "away end" in ev["text"].lower()
    assert ev["evidence"][0]["transcript"].lower() in ev["text"].lower()
    assert len(await incidents(core)) == 1
    # the web view's timeline line and the signed export's say it is automatic too
    fx = await core.active_fixture()
    assert fx is not None
    events = await core.store.events(fx.id)
    [kept] = [e for e in events if e.kind == "incident.evidence"]
    assert MARK in describe(kept, core.grounds[fx.ground])
    assert f"`incident.evidence` by telegram:{STEWARD} (steward): {MARK}" in \
        await report_markdown(core.store, core.facades, fx, events, "# Export")


@pytest.mark.pool(max_s=5)
async def test_a_note_over_the_limit_is_kept_and_not_transcribed(
        adapter: TelegramAdapter, fake: FakeTelegram, core: Core,
        say: Callable[[str], bytes]) -> None:
    """A note longer than the limit is refused politely before it is downloaded; the audio
    is still the evidence, for control to listen to."""
    await fake.push(fake.message_update(STEWARD, "/incident disorder @stb_walkway s4 fight"))
    await fake.wait_for(sends_to(STEWARD, "Logged INC-1"))
    await fake.push(fake.voice_update(STEWARD, say("Fight still going on."), 75))
    [added] = await fake.wait_for(sends_to(STEWARD, "Added to INC-1"))
    assert "Too long to transcribe (over 5 s)" in added.params["text"]
    assert "kept as evidence" in added.params["text"]
    assert not fake.calls_of("getFile")
    [ev] = await evidence_events(core)
    assert ev["evidence"][0]["duration"] == 75 and "transcript" not in ev["evidence"][0]


@pytest.mark.pool(workers=1, queue=0)
async def test_a_note_when_the_pool_is_full_is_kept_and_the_sender_told(
        adapter: TelegramAdapter, fake: FakeTelegram, core: Core,
        say: Callable[[str], bytes]) -> None:
    """One worker, no queue: while a note is being fetched and transcribed, the next is not
    queued for ever; it is kept as evidence and its sender told transcription is busy. The
    first one's transcript still arrives."""
    await fake.push(fake.message_update(STEWARD, "/incident medical @gate_c s3 collapsed"))
    await fake.wait_for(sends_to(STEWARD, "Logged INC-1"))
    first = fake.voice_update(STEWARD, say("Man collapsed at gate C."), 3)
    path = f"voice/{first['message']['voice']['file_id']}.oga"
    fake.held[path] = asyncio.Event()  # a slow signal: the download waits
    await fake.push(first)
    await fake.wait_for(lambda c: fake.calls_of("getFile"))
    await fake.push(fake.voice_update(STEWARD, say("Paramedics needed now."), 3))
    [busy] = await fake.wait_for(sends_to(STEWARD, "busy"))
    assert "Added to INC-1" in busy.params["text"] and "kept as evidence" in busy.params["text"]
    fake.held[path].set()
    [heard] = await fake.wait_for(sends_to(STEWARD, MARK), timeout=FIRST_NOTE)
    assert "Added to INC-1" in heard.params["text"]
    events = await evidence_events(core)
    assert len(events) == 2 and sum(1 for e in events if e["text"].startswith(MARK)) == 1


@pytest.mark.pool(workers=1, queue=20)
async def test_a_note_that_waits_is_acknowledged_at_once_and_never_answered_busy(
        adapter: TelegramAdapter, fake: FakeTelegram, core: Core,
        say: Callable[[str], bytes]) -> None:
    """A burst: while the first note holds the only worker, the next ones are told at once
    how many notes are ahead of theirs; none is answered "busy", and each gets its
    transcript and stays evidence (issue #38)."""
    from bot.voice.outcome import NotHeard, reason, waiting

    await fake.push(fake.message_update(STEWARD, "/incident medical @gate_c s3 collapsed"))
    await fake.wait_for(sends_to(STEWARD, "Logged INC-1"))
    first = fake.voice_update(STEWARD, say("Man collapsed at gate C."), 3)
    path = f"voice/{first['message']['voice']['file_id']}.oga"
    fake.held[path] = asyncio.Event()  # a slow signal: the first note's download waits
    await fake.push(first)
    await fake.wait_for(lambda c: fake.calls_of("getFile"))
    await fake.push(fake.voice_update(STEWARD, say("Paramedics needed now."), 3))
    await fake.push(fake.voice_update(STEWARD, say("Coins thrown from the away end."), 3))
    await fake.wait_for(sends_to(STEWARD, waiting(1)))
    await fake.wait_for(sends_to(STEWARD, waiting(2)))
    fake.held[path].set()
    await fake.wait_for(lambda c: len(sends_to(STEWARD, MARK)(c)) >= 3, timeout=FIRST_NOTE)
    assert not sends_to(STEWARD, reason(NotHeard("busy")))(fake.calls)
    events = await evidence_events(core)
    assert len(events) == 3 and all(e["text"].startswith(MARK) for e in events)


async def test_a_wrong_suggested_severity_costs_one_tap_not_a_wrong_record(
        adapter: TelegramAdapter, fake: FakeTelegram, core: Core,
        say: Callable[[str], bytes]) -> None:
    """Each button of a voice report is a whole report: the steward who hears the wrong
    severity suggested taps the right one and the incident is logged with it, in one tap."""
    spoken = say("Racist chanting in block 215, east upper tier.")
    await fake.push(fake.voice_update(STEWARD, spoken, 4))
    await fake.wait_for(sends_to(STEWARD, MARK), timeout=FIRST_NOTE)
    message = sent_message(fake, STEWARD, MARK)
    await fake.push(fake.callback_update(STEWARD, message, pressed(message, " sev 4")))
    await fake.wait_for(lambda c: [x for x in c if x.ok and x.params.get("chat_id") == STEWARD
                                   and "Logged INC-1" in str(x.params.get("text"))])
    [inc] = await incidents(core)
    assert (inc["type"], inc["location"], inc["severity"]) == ("discriminatory", "bbs_upper", 4)
