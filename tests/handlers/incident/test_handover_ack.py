"""A police /handover of an unacknowledged incident is recorded as its acknowledgement by
that police member at that time, shown as such, and said in the reply (issue 22 item 12)."""

from __future__ import annotations

from datetime import timedelta

from bot.domain.ledger import recount
from bot.evidence.summary import summary_figures
from tests.conftest import START
from tests.support.lifecycle import log_of, record


async def test_handover_of_an_unacknowledged_incident_is_its_acknowledgement(say, core, clock):
    await say("/incident disorder @stb_walkway s3 fighting", as_="steward")
    sent = record(core)
    clock.advance(timedelta(seconds=90))
    r = await say("/handover 1 arrests likely", as_="police_liaison")
    assert "recorded as its acknowledgement (by DFO, 18:01)" in r.reply.text

    fx = await core.active_fixture()
    moves = [(e.data["from"], e.data["to"], e.by, e.at) for e in
             await log_of(core, "incident.status")]
    at = (START + timedelta(seconds=90)).isoformat()
    assert [m[:2] for m in moves] == [("reported", "acknowledged"),
                                      ("acknowledged", "handed_to_police")]
    assert {m[2] for m in moves} == {"console:police_liaison"}
    assert all(m[3].startswith(at[:19]) for m in moves)

    inc = await core.store.incident(fx.id, 1)
    assert inc.status == "handed_to_police" and inc.tta_s == 90
    assert inc.marks["acknowledged_by"] == "console:police_liaison"
    shown = (await say("/incident 1", as_="control")).reply.text
    assert "acknowledged in 1m30 (by DFO handing it to police)" in shown
    assert "→ acknowledged (police_liaison)" in shown
    # the reporter is told it was acknowledged, and escalation stopped
    assert any(o.audience == "user:console:steward" and "acknowledged" in o.reply.text
               for o in sent)
    assert "1:ack" not in await core.facades.deadlines.deadlines(fx.id)
    # time to acknowledge stays honest: the summary counts it once, at the handover
    rt = (await summary_figures(core.store, core.facades, fx))["response_times"]
    assert rt["acknowledged"] == 1 and rt["median_ack_s"] == 90
    assert dict(recount(await core.store.events(fx.id)).ack_seconds) == {"INC-1": 90.0}


async def test_handover_after_an_acknowledgement_adds_no_second_one(say, core, clock):
    await say("/incident disorder @stb_walkway s3", as_="steward")
    await say("/ack 1", as_="control")
    r = await say("/handover 1", as_="police_liaison")
    assert "recorded as its acknowledgement" not in r.reply.text
    moves = [(e.data["from"], e.data["to"]) for e in await log_of(core, "incident.status")]
    assert moves == [("reported", "acknowledged"), ("acknowledged", "handed_to_police")]
