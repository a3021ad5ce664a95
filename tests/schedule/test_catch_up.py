# ruff: noqa: F811  (pytest fixtures imported from tests.support)
"""Briefings and summaries due while Redis is down are sent late once when it is back, or
recorded as missed; the start-up catch-up waits until every output is registered."""

from __future__ import annotations

import io
import sys

from bot.app import App
from bot.runtime import run_bot
from tests.conftest import Chat
from tests.support.outage import (  # noqa: F401 (fixtures)
    outage,
)
from tests.support.scheduler import (
    FX,
    Recorder,
    add,
    started,
    utc,
)


async def test_briefing_due_during_an_outage_goes_late_once_when_back(outage, server, clock):
    core = outage
    rec = Recorder(core)
    s = await started(core, clock, live=True)
    s.aps.pause()  # the test fires the jobs itself, at virtual times
    key = f"{FX}/briefing@20261128T120000Z"
    server.stop()
    clock.set(utc(2026, 11, 28, 12))
    await s._fire_live(key)  # due now, Redis is down: nothing sent, nothing lost
    assert rec.titles() == []
    server.start()
    clock.set(utc(2026, 11, 28, 12, 30))
    await s.catch_up(clock.now())
    await s.catch_up(clock.now())
    await core.notifier.drain()
    titles = rec.titles()
    assert len(titles) == 1 and "LATE (was due 12:00)" in titles[0], titles
    plan = await core.facades.plans.load_plan(FX)
    assert (await core.facades.plans.slot_claim(plan[0]))["state"] == "late"
    await s.stop()


async def test_briefing_due_during_an_outage_past_kickoff_is_missed_in_status(outage, server,
                                                                              clock):
    core = outage
    rec = Recorder(core)
    s = await started(core, clock, live=True)
    s.aps.pause()
    server.stop()
    clock.set(utc(2026, 11, 28, 12))
    await s._fire_live(f"{FX}/briefing@20261128T120000Z")
    server.start()
    clock.set(utc(2026, 11, 28, 15, 5))  # back only after kick-off
    await s.catch_up(clock.now())
    assert rec.titles() == []
    assert [m.label for m in await core.facades.plans.missed_slots(FX)
            if m.kind == "briefing"] == ["T-3h"]
    await Chat(core)(f"/fixture use {FX} all", as_="admin")
    r = await Chat(core)("/status", as_="police_commander")
    assert "Missed briefing: T-3h (12:00)" in r.reply.text, r.reply.text
    await s.stop()


async def test_summary_due_during_an_outage_goes_late_once(outage, server, clock):
    core = outage
    say = Chat(core)
    rec = Recorder(core)
    await say(f"/fixture use {FX} all", as_="admin")
    s = await started(core, clock, live=True)
    s.aps.pause()
    clock.set(utc(2026, 11, 28, 16, 50))
    await say("/phase full_time", as_="control")  # summary planned for 17:00
    server.stop()
    clock.set(utc(2026, 11, 28, 17))
    await s._fire_live(f"{FX}/summary@20261128T170000Z")
    server.start()
    clock.set(utc(2026, 11, 28, 18))
    await s.catch_up(clock.now())
    await s.catch_up(clock.now())
    await core.notifier.drain()
    got = [r.title for _, c, r in rec.sent if c == "summary"]
    assert len(got) == 1 and "LATE (was due 17:00)" in got[0], got
    await s.stop()


async def test_start_up_catch_up_reaches_the_console(store, settings, clock, monkeypatch,
                                                     capsys):
    app = App(settings, clock, serving=True)
    core = await app.start()
    try:
        core.cache.ttl = 0
        s = await started(core, clock)  # an earlier run planned the briefing, then stopped
        await add(Chat(core))
        await s.stop()
        clock.set(utc(2026, 11, 28, 12, 40))  # down over the T-3h slot, back before kick-off
        monkeypatch.setattr(sys, "stdin", io.StringIO("/quit\n"))
        assert await run_bot(app, as_role="control", console=True) == 0
        out = capsys.readouterr().out
        assert "→ command: Briefing T-3h" in out and "LATE (was due 12:00)" in out, out
    finally:
        await app.stop()
