"""When an incident happened, as the steward says it ("10 min ago", "at 17:40"), beside when
we received it and when it was acknowledged and resolved; the card says so when the gap
matters (issue 36, beyond: occurred/reported/acknowledged/resolved)."""

from __future__ import annotations

from datetime import timedelta

from bot.domain.clock import iso
from tests.conftest import START
from tests.support.buttons import press


async def _inc(core, n=1):
    fx = await core.active_fixture()
    return await core.store.incident(fx.id, n)


async def test_a_steward_says_it_happened_ten_minutes_ago(say, core):
    r = await say("/incident disorder @stb_walkway s3 10 min ago fighting", as_="steward")
    assert r.reply.ok, r.reply.text
    inc = await _inc(core)
    assert inc.occurred_at == iso(START - timedelta(minutes=10))
    assert inc.reported_at == iso(START)
    assert inc.description == "fighting"  # the time words are not the description
    assert "Happened 17:50, reported 10m00 later" in r.reply.text
    card = next(o.reply for o in r.outbound if o.audience == "control")
    assert "Happened 17:50, reported 10m00 later" in card.text


async def test_a_clock_time_and_a_short_form(say, core):
    await say("/incident pyro @stb_walkway at 17:40 flare", as_="steward")
    await say("/incident medical @gate_a 3m ago", as_="steward")
    first, second = await _inc(core, 1), await _inc(core, 2)
    assert first.occurred_at == iso(START - timedelta(minutes=20))
    assert first.description == "flare"
    assert second.occurred_at == iso(START - timedelta(minutes=3))


async def test_a_report_made_now_shows_no_gap(say, core):
    r = await say("/incident disorder @stb_walkway s3 fighting at the gate", as_="steward")
    inc = await _inc(core)
    assert inc.occurred_at == inc.reported_at
    assert inc.description == "fighting at the gate"
    assert "Happened" not in r.reply.text


async def test_impossible_times_are_refused_and_nothing_is_logged(say, core):
    fx = await core.active_fixture()
    before = len(await core.store.events(fx.id))
    for text in ("/incident disorder @stb_walkway at 23:50",  # 18 h before 18:00
                 "/incident disorder @stb_walkway 20 hours ago",
                 "/incident disorder @stb_walkway 5m ago at 17:58"):
        r = await say(text, as_="steward")
        assert not r.reply.ok
        assert "12 hours" in r.reply.text or "One time per report" in r.reply.text
    assert len(await core.store.events(fx.id)) == before


async def test_the_guided_form_takes_when_it_happened_at_any_step(say, core):
    r = await say("/incident", as_="steward")
    r = await say(press(r, "Throwing missiles"), as_="steward")
    r = await say("15 min ago", as_="steward")
    assert r.reply.ok and "Noted: it happened at 17:45." in r.reply.text
    assert "Where?" in r.reply.text  # the same step again
    r = await say(press(r, "STB top walkway"), as_="steward")
    r = await say(press(r, "3"), as_="steward")
    assert r.reply.title == "Logged INC-1"
    assert (await _inc(core)).occurred_at == iso(START - timedelta(minutes=15))


async def test_acknowledged_and_resolved_times_are_kept_and_shown(say, core, clock):
    await say("/incident disorder @stb_walkway s3 2 min ago", as_="steward")
    clock.set(START + timedelta(seconds=40))
    await say("/ack 1", as_="control")
    clock.set(START + timedelta(minutes=12))
    await say("/resolve 1 sorted", as_="control")
    inc = await _inc(core)
    assert inc.times == {"occurred_at": iso(START - timedelta(minutes=2)), "platform_at": "",
                         "reported_at": iso(START),
                         "acknowledged_at": iso(START + timedelta(seconds=40)),
                         "resolved_at": iso(START + timedelta(minutes=12))}
    r = await say("/incident 1", as_="control")
    assert ("Times: happened 17:58:00 · received 18:00:00 · acknowledged 18:00:40 · "
            "resolved 18:12:00") in r.reply.text
