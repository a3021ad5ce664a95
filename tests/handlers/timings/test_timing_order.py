"""Key timings never move the match phase backwards, and kick-off straight from pre-match
waits for the same inspection as turnstiles-open (issue 36 §16)."""

from __future__ import annotations

from datetime import timedelta


async def _tap(say, label: str):
    board = (await say("/timing", as_="control")).reply
    command = next(b.command for row in board.buttons for b in row if b.label.endswith(label))
    return await say(command, as_="control")


async def test_turnstiles_open_after_kick_off_does_not_take_the_phase_back(say, core, clock):
    assert (await _tap(say, "Turnstiles open")).reply.ok
    clock.advance(timedelta(minutes=75))
    assert (await _tap(say, "Kick-off")).reply.ok
    clock.advance(timedelta(minutes=5))
    for r in (await _tap(say, "Turnstiles open"), await say("/timing turnstiles", as_="control")):
        assert not r.reply.ok and "\n" not in r.reply.text
        assert "The phase is First half" in r.reply.text and "nothing was recorded" in r.reply.text
    assert (await core.active_fixture()).phase == "first_half"
    await say("/incident missile @stb walkway coins thrown", as_="steward")
    inc = await core.store.incident((await core.active_fixture()).id, 1)
    assert inc.phase == "first_half"


async def test_kick_off_from_pre_match_waits_for_the_inspection(say, core):
    await say("/inspect walkway_netting fail", as_="supervisor")
    r = await say("/timing ko", as_="control")
    assert not r.reply.ok and "Not ready to open turnstiles" in r.reply.text
    r = await say("/phase first_half", as_="control")
    assert not r.reply.ok and (await core.active_fixture()).phase == "pre"
