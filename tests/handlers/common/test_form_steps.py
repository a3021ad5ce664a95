"""The guided report's steps as a steward meets them: numbered buttons, confirm, back, cancel,
stable positions, typed numbers (issue 10 items 4, 8, 9)."""

from __future__ import annotations

import io

from bot.runtime import console_for
from tests.support.buttons import (
    press,
)


def _labels(result) -> list[str]:
    return [b.label for row in result.reply.buttons for b in row]


async def _at_severity(say, as_="steward"):
    r = await say("/incident", as_=as_)
    r = await say(press(r, "Throwing missiles"), as_=as_)
    return await say(press(r, "STB top walkway"), as_=as_)


async def _total(core) -> int:
    fx = await core.active_fixture()
    return (await core.store.counts(fx.id)).get("inc:total", 0)


async def test_console_button_numbers_equal_severities(core):
    out = io.StringIO()
    console = console_for(core, "steward", stdout=out)
    await console.say("/incident")
    await console.say("2")  # Throwing missiles is the second type button
    await console.say("1")  # the steward's own zone first
    screen = out.getvalue().splitlines()[-1]
    for s in range(1, 6):
        assert f"[{s}] {s} " in screen, screen
    await console.say("1")
    assert "Logged INC-1" in out.getvalue()
    fx = await core.active_fixture()
    assert (await core.store.incident(fx.id, 1)).severity == 1


async def test_severity_five_asks_for_confirmation_and_can_go_back(say, core):
    r = await _at_severity(say)
    r = await say(press(r, "5 major"), as_="steward")
    assert "major incident" in r.reply.text.lower() and "confirm" in r.reply.text.lower()
    assert await _total(core) == 0  # nothing logged, nothing escalated yet
    r = await say(press(r, "Back"), as_="steward")
    assert "How serious" in r.reply.text
    r = await say(press(r, "5 major"), as_="steward")
    r = await say(press(r, "Yes"), as_="steward")
    assert r.reply.title == "Logged INC-1"
    fx = await core.active_fixture()
    assert (await core.store.incident(fx.id, 1)).severity == 5


async def test_typed_5_at_the_severity_step_also_needs_confirmation(say, core):
    await _at_severity(say)
    r = await say("5", as_="steward")
    assert "confirm" in r.reply.text.lower()
    assert await _total(core) == 0
    r = await say("3", as_="steward")  # a typed severity is its number
    assert "confirm" not in r.reply.text.lower() or "How serious" in r.reply.text


async def test_every_step_has_cancel_and_back(say, core):
    r = await say("/incident", as_="steward")
    assert "Cancel" in _labels(r)
    more = await say(press(r, "More"), as_="steward")
    assert {"Back", "Cancel"} <= set(_labels(more))
    r = await say(press(more, "Back"), as_="steward")
    assert "What is happening" in r.reply.text
    loc = await say(press(r, "Throwing missiles"), as_="steward")
    assert {"Back", "Cancel"} <= set(_labels(loc))
    sev = await say(press(loc, "STB top walkway"), as_="steward")
    assert {"Back", "Cancel"} <= set(_labels(sev))
    back = await say(press(sev, "Back"), as_="steward")
    assert "Where?" in back.reply.text
    back = await say(press(back, "Back"), as_="steward")
    assert "What is happening" in back.reply.text
    assert await _total(core) == 0


async def test_typed_cancel_cancels_at_any_step(say, core):
    for steps in (0, 1, 2):
        r = await say("/incident", as_="steward")
        if steps >= 1:
            r = await say(press(r, "Disorder"), as_="steward")
        if steps >= 2:
            r = await say(press(r, "STB top walkway"), as_="steward")
        r = await say("cancel", as_="steward")
        assert "cancelled" in r.reply.text.lower(), (steps, r.reply.text)
        fx = await core.active_fixture()
        assert await core.facades.forms.form(fx.id, "console:steward") is None
    assert await _total(core) == 0


async def test_type_buttons_keep_their_positions_within_a_fixture(say):
    first = _labels(await say("/incident", as_="steward"))
    await say("cancel", as_="steward")
    for _ in range(3):  # tonight's reports change what is common
        await say("/incident medical @stb_upper s2 new", as_="control")
    again = _labels(await say("/incident", as_="steward"))
    assert again == first


async def test_gate_a_typed_at_the_location_step_is_gate_a(say):
    r = await say("/incident", as_="steward")
    await say(press(r, "Disorder"), as_="steward")
    r = await say("gate a", as_="steward")
    assert "How serious" in r.reply.text and "Gate A" in r.reply.text


async def test_block_number_typed_at_the_location_step(say):
    r = await say("/incident", as_="steward")
    await say(press(r, "Disorder"), as_="steward")
    r = await say("block 112", as_="steward")
    assert "How serious" in r.reply.text and "lower" in r.reply.text.lower()


async def test_a_number_with_no_button_is_an_error_not_a_search(say, core):
    r = await say("/incident", as_="steward")
    loc = await say(press(r, "Disorder"), as_="steward")
    r = await say("9", as_="steward")
    assert not r.reply.ok and "9" in r.reply.text
    assert "Where?" in r.reply.text  # the same step again
    sev = await say(press(loc, "STB top walkway"), as_="steward")
    r = await say("9", as_="steward")
    assert not r.reply.ok and "1 to 5" in r.reply.text
    assert sev.reply.buttons and await _total(core) == 0
