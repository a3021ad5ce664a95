"""Escalations and reminders reach every fixture with open incidents, not only the active
one; a drill's own fixtures are left to the drill."""

from __future__ import annotations

from datetime import timedelta

from bot.app import build_core
from bot.core.drill import Drill
from bot.store import Store
from handlers import sweep_escalations
from tests.conftest import START, Chat


def at(seconds: int):
    return START + timedelta(seconds=seconds)


async def test_an_incident_escalates_after_control_switches_fixture(say, core):
    live = (await core.active_fixture()).id
    await say("/incident crowd_density @gate_away s5 crush", as_="steward")
    r = await say("/fixture add Arsenal v Spurs 2026-11-26 19:45 cat=B", as_="admin")
    assert r.reply.ok, r.reply.text
    await say("/fixture use arsenal-spurs-20261126 all", as_="admin")
    outs = await sweep_escalations(core, core.store, at(0))
    assert sorted(o.audience for o in outs) == ["command", "control", "police"]
    assert {o.fixture for o in outs} == {live}
    assert "INC-1" in outs[0].reply.title


async def test_both_fixtures_escalate_and_remind_in_one_sweep(say, core):
    live = (await core.active_fixture()).id
    await say("/incident missile @stb_upper s3", as_="steward")
    await say("/fixture add Arsenal v Spurs 2026-11-26 19:45 cat=B", as_="admin")
    await say("/fixture use arsenal-spurs-20261126 all", as_="admin")
    await say("/incident pyro @away_upper s3", as_="steward")
    outs = await sweep_escalations(core, core.store, at(120))
    assert sorted(o.fixture for o in outs) == sorted([live, "arsenal-spurs-20261126"])
    await say(f"/fixture use {live} all", as_="admin")
    await say("/ack 1", as_="control")  # acknowledged, still open: reminders follow
    outs = await sweep_escalations(core, core.store, at(1200))
    reminders = [o for o in outs if "still open" in o.reply.title]
    assert {o.fixture for o in reminders} == {live, "arsenal-spurs-20261126"}


async def test_the_live_sweep_leaves_a_drills_fixtures_alone(core, settings, redis_url, clock):
    drill_store = Store.from_url(redis_url)  # a replay in another process
    drill = build_core(drill_store, settings, clock, cache_ttl=0, drill=Drill())
    say = Chat(drill)
    try:
        r = await say("/fixture add Arsenal v Spurs 2026-11-26 19:45 cat=B", as_="admin")
        assert r.reply.ok, r.reply.text
        r = await say("/incident crowd_density @gate_away s5 crush", as_="steward")
        assert r.reply.ok and "INC-1" in r.reply.title, r.reply.text
        assert await sweep_escalations(core, core.store, at(3600)) == []  # the live bot's sweep
        assert len(await sweep_escalations(drill, drill.store, at(0))) == 3  # the drill's own sweep
    finally:
        await drill_store.close()
