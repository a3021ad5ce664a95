"""/incident <id> and /summary read only what they show: a per-incident index of stream ids
and per-15-minute chart counters, both written in the report's own script (issue #10 #19)."""

from __future__ import annotations

from bot.domain.ledger import incident_of


async def test_an_incident_timeline_is_its_own_events_from_the_index(say, core):
    await say("/incident missile @seg_ne s3 coins", as_="steward")
    await say("/incident pyro @away_upper s3", as_="steward")
    await say("/incident missile @seg_ne s4 more coins", as_="supervisor")  # joins INC-1
    await say("/ack 1", as_="control")
    await say("/update 2 flare out", as_="steward")
    await say("/arrest throwing_missiles x2 inside away inc=1", as_="police_liaison")
    await say("/amend 1 severity=5 worse than thought", as_="control")
    fx = await core.active_fixture()
    everything = await core.store.events(fx.id)
    for n in (1, 2):
        mine = [e for e in everything if incident_of(e) == str(n)]
        assert await core.facades.views.incident_events(fx.id, n) == mine
    kinds = [e.kind for e in await core.facades.views.incident_events(fx.id, 1)]
    # the s4 report that joined raised INC-1 to severity 4 (an amendment in the same write)
    assert kinds == ["incident.reported", "incident.merged", "incident.amended",
                     "incident.status", "arrest.recorded", "incident.amended"]
    r = await say("/incident 1", as_="control")
    assert "merged report" in r.reply.text and "2 × throwing_missiles" in r.reply.text
    assert "flare out" not in r.reply.text
