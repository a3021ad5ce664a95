"""Escalation tiers fire once at their deadline, never after an acknowledgement, across a
restart and with two app instances; reminders for incidents left open too long."""

import asyncio
from datetime import timedelta

from bot.app import build_core
from bot.schedule.deadlines import next_due
from handlers import sweep_escalations
from tests.conftest import START
from tests.support.lifecycle import log_of, record


def at(seconds: int):
    return START + timedelta(seconds=seconds)


async def test_severity_3_tiers_fire_once_each_at_their_deadline(say, core):
    await say("/incident missile @stb_upper s3", as_="steward")
    sent = record(core)
    assert await sweep_escalations(core, core.store, at(119)) == []
    outs = await sweep_escalations(core, core.store, at(120))
    assert [o.audience for o in outs] == ["command"]
    assert "INC-1 unacknowledged 2m" in outs[0].reply.title
    assert outs[0].reply.buttons[0][0].command == "/ack 1"
    assert await sweep_escalations(core, core.store, at(121)) == []
    assert await sweep_escalations(core, core.store, at(299)) == []
    outs = await sweep_escalations(core, core.store, at(300))
    assert sorted(o.audience for o in outs) == ["command", "police"]
    tiers = [e.data["tier"] for e in await log_of(core, "incident.escalated")]
    assert tiers == [1, 2]
    assert len(sent) >= 3
    fx = await core.active_fixture()
    assert (await core.store.incident(fx.id, 1)).escalated_tier == 2


async def test_an_acknowledgement_stops_escalation_in_the_same_write(say, core):
    await say("/incident disorder @stb_walkway s4", as_="steward")
    fx = await core.active_fixture()
    assert "1:ack" in await core.facades.deadlines.deadlines(fx.id)
    await say("/ack 1", as_="control")
    assert "1:ack" not in await core.facades.deadlines.deadlines(fx.id)
    assert await sweep_escalations(core, core.store, at(61)) == []
    assert await sweep_escalations(core, core.store, at(600)) == []
    assert await log_of(core, "incident.escalated") == []


async def test_severity_4_goes_to_command_and_police_after_a_minute(say, core):
    await say("/incident segregation_breach @seg_ne s4", as_="steward")
    assert await sweep_escalations(core, core.store, at(59)) == []
    outs = await sweep_escalations(core, core.store, at(60))
    assert sorted(o.audience for o in outs) == ["command", "police"]


async def test_severity_5_escalates_immediately_with_a_methane_prompt(say, core):
    await say("/incident crowd_density @gate_away s5 crush at turnstiles", as_="steward")
    outs = await sweep_escalations(core, core.store, at(0))
    assert sorted(o.audience for o in outs) == ["command", "control", "police"]
    assert "/methane" in outs[0].reply.text
    assert any(b.command == "/methane" for b in outs[0].reply.buttons[0])


async def test_deadlines_survive_a_restart(say, core, store, settings, clock):
    await say("/incident disorder @stb_walkway s4", as_="steward")
    restarted = build_core(store, settings, clock, cache_ttl=0)  # a new process, same Redis
    assert await next_due(restarted, restarted.facades.deadlines) == at(60)
    assert await sweep_escalations(restarted, restarted.store, at(30)) == []
    # was down at the deadline: fires late
    outs = await sweep_escalations(restarted, restarted.store, at(75))
    assert len(outs) == 2
    # the old instance does not repeat it
    assert await sweep_escalations(core, core.store, at(76)) == []


async def test_two_instances_sweeping_together_fire_each_tier_once(say, core, store, settings,
                                                                 clock):
    other = build_core(store, settings, clock, cache_ttl=0)
    for kind in ("disorder", "missile", "pyro", "fire", "assault_staff"):
        r = await say(f"/incident {kind} @bbs_upper s4", as_="steward")
        assert r.reply.title.startswith("Logged"), r.reply.text
    await say("/ack 3", as_="control")
    sent = 0
    for t in (60, 61, 180):
        a, b = await asyncio.gather(sweep_escalations(core, core.store, at(t)),
                                    sweep_escalations(other, other.store, at(t)))
        sent += len(a) + len(b)
        if t == 61:
            assert a == b == []
    assert sent == 4 * (2 + 3)  # tier 1 to command+police, tier 2 adds control; once each
    events = await log_of(core, "incident.escalated")
    got = sorted((e.data["id"], e.data["tier"]) for e in events)
    expected = sorted((f"INC-{n}", tier) for n in (1, 2, 4, 5) for tier in (1, 2))
    assert got == expected


async def test_reminders_for_incidents_left_open_too_long(say, core):
    await say("/incident medical @stb_lower s3", as_="steward")
    await say("/ack 1", as_="control")
    assert await sweep_escalations(core, core.store, at(1199)) == []
    outs = await sweep_escalations(core, core.store, at(1200))
    assert [o.audience for o in outs] == ["control"]
    assert "still open after 20m" in outs[0].reply.title
    assert await sweep_escalations(core, core.store, at(1201)) == []
    assert len(await sweep_escalations(core, core.store, at(2100))) == 1  # every 15 min after
    await say("/resolve 1", as_="control")
    assert await sweep_escalations(core, core.store, at(9000)) == []
    assert len(await log_of(core, "incident.reminder")) == 2


async def test_raising_severity_replans_the_escalation(say, core):
    await say("/incident antisocial @stb_upper s1", as_="steward")
    assert await sweep_escalations(core, core.store, at(100)) == []
    await say("/amend 1 s4 missiles now", as_="control")
    outs = await sweep_escalations(core, core.store, at(101))  # sev 4's first tier is already due
    assert sorted(o.audience for o in outs) == ["command", "police"]
