"""Lifecycle: every transition, refusals by state and by role, amendments keep the original."""

from datetime import timedelta

import pytest

from bot.domain.ledger import recount
from tests.support.lifecycle import log_of


async def _counts_agree(core) -> None:
    fx = await core.active_fixture()
    assert await core.store.counts(fx.id) == dict(recount(await core.store.events(fx.id)).counts)


async def test_each_transition_in_order_is_an_event_with_who_when_and_note(say, core, clock):
    r = await say("/incident disorder @stb_walkway s3 scuffle", as_="steward")
    assert r.reply.title == "Logged INC-1"
    steps = [("ack", "control", "acknowledged"), ("dispatch", "supervisor", "dispatched"),
             ("onscene", "steward", "on_scene"), ("contain", "supervisor", "contained"),
             ("handover", "police_commander", "handed_to_police"),
             ("resolve", "safety_officer", "closed")]
    for cmd, who, _ in steps:
        clock.advance(timedelta(seconds=30))
        r = await say(f"/{cmd} 1 note for {cmd}", as_=who)
        assert r.reply.ok, r.reply.text
    fx = await core.active_fixture()
    inc = await core.store.incident(fx.id, 1)
    assert inc.status == "closed"
    assert inc.tta_s == 30 and inc.ttc_s == 180
    moves = await log_of(core, "incident.status")
    assert [e.data["to"] for e in moves] == [s for _, _, s in steps]
    assert [e.by for e in moves] == [f"console:{w}" for _, w, _ in steps]
    assert moves[2].data["note"] == "note for onscene"
    r = await say("/incident 1", as_="control")
    assert "Response: acknowledged in 30s, closed in 3m00" in r.reply.text
    assert r.reply.text.count("→") == 6
    await _counts_agree(core)


async def test_steps_may_be_skipped_but_never_repeated_or_reversed(say, core, clock):
    await say("/incident pyro @away_upper s2", as_="steward")
    clock.advance(timedelta(seconds=45))
    assert (await say("/onscene 1", as_="supervisor")).reply.ok  # skips ack and dispatch
    fx = await core.active_fixture()
    assert (await core.store.incident(fx.id, 1)).tta_s == 45  # first response counts
    for cmd in ("ack", "dispatch", "onscene"):
        r = await say(f"/{cmd} 1", as_="control")
        assert not r.reply.ok and "already on_scene" in r.reply.text, r.reply.text
    assert (await say("/resolve 1", as_="control")).reply.ok
    r = await say("/resolve 1", as_="control")
    assert not r.reply.ok and "already closed" in r.reply.text
    assert len(await log_of(core, "incident.status")) == 2


@pytest.mark.parametrize("cmd,role", [
    ("/ack 1", "steward"), ("/ack 1", "viewer"), ("/dispatch 1", "police_commander"),
    ("/resolve 1", "steward"), ("/contain 1", "police_liaison"), ("/amend 1 s4", "steward"),
    ("/reopen 1", "viewer"), ("/amend 1 s4", "police_commander"),
])
async def test_roles_that_may_not_move_an_incident_are_refused(say, core, cmd, role):
    await say("/incident medical @stb_lower s3", as_="steward")
    r = await say(cmd, as_=role)
    assert not r.reply.ok and "not for your role" in r.reply.text
    fx = await core.active_fixture()
    inc = await core.store.incident(fx.id, 1)
    assert inc.status == "reported" and inc.severity == 3


async def test_amendment_keeps_the_original_visible_and_moves_counters(say, core):
    await say("/incident antisocial @stb_upper s2 chanting", as_="steward")
    r = await say("/amend 1 type=discriminatory severity=4 @seg_ne racist chanting confirmed",
                  as_="control")
    assert r.reply.ok, r.reply.text
    fx = await core.active_fixture()
    inc = await core.store.incident(fx.id, 1)
    assert (inc.type, inc.severity, inc.location) == ("discriminatory", 4, "seg_ne")
    assert (inc.orig["type"], inc.orig["severity"], inc.orig["location"]) == \
        ("antisocial", "2", "stb_upper")
    reported, amended = (await log_of(core, "incident.reported"))[0], \
        (await log_of(core, "incident.amended"))[0]
    assert reported.data["type"] == "antisocial"  # the original report is untouched
    assert amended.data["old"] == {"type": "antisocial", "severity": "2", "location": "stb_upper"}
    assert amended.data["why"] == "racist chanting confirmed"
    counts = await core.store.counts(fx.id)
    assert counts.get("inc:type:discriminatory") == 1 and "inc:type:antisocial" not in counts
    await _counts_agree(core)
    view = (await say("/incident 1", as_="control")).reply.text
    assert "originally type antisocial, severity 2, location stb_upper" in view
    assert "amended" in view and "severity 2 → 4" in view
    r = await say("/amend 1 severity=4", as_="control")
    assert not r.reply.ok and "Nothing to change" in r.reply.text


async def test_reopen_and_backward_correction_are_recorded_not_overwritten(say, core):
    await say("/incident fire @bbs_concourse s4", as_="steward")
    await say("/onscene 1", as_="supervisor")
    r = await say("/amend 1 status=dispatched wrong button", as_="control")
    assert r.reply.ok, r.reply.text
    r = await say("/amend 1 status=contained", as_="control")
    assert not r.reply.ok and "moving forward" in r.reply.text
    await say("/resolve 1", as_="control")
    r = await say("/reopen 1 smoke again", as_="safety_officer")
    assert r.reply.ok and "reopened" in r.reply.text
    fx = await core.active_fixture()
    inc = await core.store.incident(fx.id, 1)
    assert inc.status == "acknowledged" and inc.ttc_s is not None  # the first close stays measured
    moves = [(e.data["to"], e.data["cls"]) for e in await log_of(core, "incident.status")]
    assert moves == [("on_scene", "progress"), ("dispatched", "amend"), ("closed", "close"),
                     ("acknowledged", "reopen")]
    open_list, _ = await core.store.open_incidents(fx.id)
    assert [i.id for i in open_list] == ["INC-1"]
    await _counts_agree(core)


async def test_an_incident_shows_its_linked_arrests_without_refs(say):
    await say("/incident missile @seg_ne s4", as_="steward")
    r = await say("/arrest throwing_missiles x2 inside away ref=CUS/123 inc=1",
                  as_="police_liaison")
    assert r.reply.ok, r.reply.text
    view = (await say("/incident 1", as_="police_commander")).reply.text
    assert "2 arrests" in view and "arrest" in view and "throwing_missiles" in view
    assert "CUS/123" not in view
