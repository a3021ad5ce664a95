"""A merged report with a higher severity raises the incident's: the highest reported wins,
recorded as an amendment, escalation re-planned, counters agree with the log (issue 10
item 6)."""

from __future__ import annotations

from datetime import timedelta

from bot.domain.ledger import recount
from handlers import sweep_escalations
from tests.conftest import START
from tests.support.lifecycle import log_of

TG = {"as_": "100000001", "platform": "telegram"}  # a second steward, on Telegram


async def _agree(core) -> dict[str, int]:
    fx = await core.active_fixture()
    counts = await core.store.counts(fx.id)
    assert counts == dict(recount(await core.store.events(fx.id)).counts)
    return counts


async def test_a_higher_severity_merged_report_raises_the_incident(say, core, clock):
    await say("/incident missile @stb_walkway s3 coins", as_="steward")
    fx = await core.active_fixture()
    assert (await core.facades.deadlines.deadlines(fx.id))["1:ack"] == int(START.timestamp()) + 120
    clock.advance(timedelta(seconds=30))
    r = await say("/incident missile @stb_upper s4 bottles now", **TG)
    assert r.reply.title == "Added to INC-1"
    assert "severity 4" in r.reply.text.lower()
    inc = await core.store.incident(fx.id, 1)
    assert (inc.severity, inc.orig["severity"]) == (4, "3")
    (amend,) = await log_of(core, "incident.amended")
    assert amend.data["old"] == {"severity": "3"} and amend.data["new"] == {"severity": "4"}
    assert amend.data["id"] == "INC-1"
    counts = await _agree(core)
    assert counts.get("inc:sev:4") == 1 and "inc:sev:3" not in counts
    # escalation re-planned on severity 4's timers: a minute from the report, not two
    assert (await core.facades.deadlines.deadlines(fx.id))["1:ack"] == int(START.timestamp()) + 60
    outs = await sweep_escalations(core, core.store, START + timedelta(seconds=60))
    assert sorted(o.audience for o in outs) == ["command", "police"]
    # the open list orders it with the severity-4 incidents
    (first,), by_sev = await core.store.open_incidents(fx.id, limit=1)
    assert first.n == 1 and by_sev[4] == 1 and by_sev[3] == 0
    assert "Amended; originally severity 3" in (await say("/incident 1", as_="control")).reply.text


async def test_a_lower_or_equal_severity_changes_nothing(say, core):
    await say("/incident missile @stb_walkway s4 coins", as_="steward")
    await say("/incident missile @stb_upper s2 one coin", **TG)
    await say("/incident missile @stb_upper s4 more coins", as_="supervisor")
    fx = await core.active_fixture()
    inc = await core.store.incident(fx.id, 1)
    assert inc.severity == 4 and "severity" not in inc.orig and inc.merged == 2
    assert await log_of(core, "incident.amended") == []
    await _agree(core)


async def test_an_acknowledged_incident_is_raised_without_restarting_escalation(say, core):
    await say("/incident missile @stb_walkway s3 coins", as_="steward")
    await say("/ack 1", as_="control")
    await say("/incident missile @stb_upper s5 seats ripped out and thrown", **TG)
    fx = await core.active_fixture()
    inc = await core.store.incident(fx.id, 1)
    assert (inc.severity, inc.status) == (5, "acknowledged")
    assert "1:ack" not in await core.facades.deadlines.deadlines(fx.id)
    await _agree(core)
