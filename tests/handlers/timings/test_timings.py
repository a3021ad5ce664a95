"""Key timings (issue 25 §3): one tap each; the phase-starting ones are the phase's
declaration (same write); they feed /summary and the chart."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

from bot.evidence.match_chart import ChartData, render_chart
from bot.store.timing_keys import KeyTimings
from tests.support.lifecycle import log_of


async def _tap(say, reply, label: str, as_: str = "control"):
    command = next(b.command for row in reply.buttons for b in row if b.label.endswith(label))
    return await say(command, as_=as_)


async def test_one_tap_each_records_the_moment_and_declares_its_phase(say, core, clock):
    board = (await say("/timing", as_="control")).reply
    assert [b.label for row in board.buttons for b in row] == [
        "Turnstiles open", "Kick-off", "Half-time", "Second half kick-off", "Full-time",
        "Ground clear", "Zone Ex clear"]
    assert "Turnstiles open: not yet" in board.text
    r = await _tap(say, board, "Turnstiles open")
    assert "Turnstiles open recorded at 18:00" in r.reply.text
    assert (await core.active_fixture()).phase == "gates"
    clock.advance(timedelta(minutes=75))
    await say("/incident missile @stb walkway coins thrown", as_="steward")
    r = await say("/timing ko", as_="safety_officer")  # typed works too
    assert (await core.active_fixture()).phase == "first_half"
    clock.advance(timedelta(minutes=150))
    r = await _tap(say, (await say("/timing", as_="control")).reply, "Zone Ex clear")
    assert r.reply.text == "Recorded: Zone Ex clear at 21:45."
    assert (await core.active_fixture()).phase == "first_half"  # Zone Ex clear is no phase
    board = (await say("/timing", as_="control")).reply
    assert "✔ Turnstiles open: 18:00:00" in board.text and "✔ Kick-off: 19:15:00" in board.text
    assert "· Half-time: not yet" in board.text
    [phase_ev] = [e for e in await log_of(core, "fixture.phase") if e.data["phase"] == "gates"]
    assert phase_ev.at.endswith("18:00:00+00:00")
    r = await say("/summary", as_="control")
    assert ("Key timings: Turnstiles open 18:00 · Kick-off 19:15 · Zone Ex clear 21:45"
            in r.reply.text)
    assert r.reply.images  # the chart, with the recorded moments marked


async def test_a_second_tap_corrects_and_both_stay_and_redelivery_records_once(say, core, clock):
    await say("/timing ground_clear", as_="control", dedupe="tg:1")
    await say("/timing ground_clear", as_="control", dedupe="tg:1")  # redelivered
    clock.advance(timedelta(minutes=5))
    await say("/timing ground clear", as_="control")
    fx = await core.active_fixture()
    rows = await KeyTimings(core.store.gateway).read(fx.id)
    assert [t.at.strftime("%H:%M") for t in rows] == ["18:00", "18:05"]
    assert "Ground clear: 18:05:00" in (await say("/timing", as_="control")).reply.text


async def test_timings_are_for_control_and_the_safety_officer_and_bad_words_are_refused(say):
    for role in ("steward", "supervisor", "viewer", "police_liaison"):
        r = await say("/timing kick_off", as_=role)
        assert not r.reply.ok, role
    r = await say("/timing tea_break", as_="control")
    assert not r.reply.ok and "'tea_break' is not a key timing." in r.reply.text


def test_the_chart_marks_the_key_timings() -> None:
    from datetime import UTC, datetime

    start = datetime(2026, 11, 4, 19, 0, tzinfo=UTC)
    data = ChartData(start, 8, {"first_half": [1, 2, 0, 1, 0, 0, 0, 3]}, [0] * 8)
    tz = ZoneInfo("Europe/London")
    plain = render_chart(data, "t", tz)
    marked = render_chart(data, "t", tz, marks=((start + timedelta(minutes=100), "ZX"),))
    assert plain != marked
