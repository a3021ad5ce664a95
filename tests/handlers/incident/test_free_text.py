"""Plain text joins the steward's latest report only within a configurable window and says
which incident it joined; text over the limit is refused with its length, never cut
(issue 10 item 10)."""

from __future__ import annotations

from datetime import timedelta

from bot.core.dispatch import MAX_TEXT
from tests.support.lifecycle import log_of


async def test_text_soon_after_a_report_joins_it_and_says_which(say, core, clock):
    await say("/incident disorder @stb_walkway s4", as_="steward")
    clock.advance(timedelta(seconds=core.settings.note_window_seconds - 10))
    r = await say("two lads in grey tracksuits", as_="steward")
    assert r.reply.ok and "INC-1" in r.reply.text and "Disorder" in r.reply.text
    (ev,) = await log_of(core, "incident.update")
    assert ev.data["text"] == "two lads in grey tracksuits"


async def test_text_after_the_window_joins_nothing(say, core, clock):
    assert core.settings.note_window_seconds == 300  # the documented default: 5 minutes
    await say("/incident disorder @stb_walkway s4 fight", as_="steward")
    clock.advance(timedelta(seconds=core.settings.note_window_seconds + 1))
    r = await say("flare lit in block 255", as_="steward")
    assert not r.reply.ok
    assert "5 minutes" in r.reply.text and "/update" in r.reply.text
    assert await log_of(core, "incident.update") == []


async def test_the_window_is_a_setting(settings):
    from bot.settings import load_settings

    s = load_settings(REDIS_URL=settings.redis_url, MATCHDAY_NOTE_WINDOW="120")
    assert s.note_window_seconds == 120


async def test_text_over_the_limit_is_refused_with_its_length(say, core):
    await say("/incident disorder @stb_walkway s4", as_="steward")
    long = "word " * 700  # 3,500 characters
    n = len(long.strip())
    assert n > MAX_TEXT
    r = await say(long, as_="steward")
    assert not r.reply.ok and f"{n:,}" in r.reply.text and f"{MAX_TEXT:,}" in r.reply.text
    r = await say("/update 1 " + long, as_="steward")
    assert not r.reply.ok and "characters" in r.reply.text
    assert await log_of(core, "incident.update") == []


async def test_long_group_chatter_is_still_ignored(say):
    assert await say("x" * 5000, as_="steward", private=False) is None
