"""A steward's /onscene is a note, not the acknowledgement: only roles that handle incidents
acknowledge (issue 10 item 7)."""

from __future__ import annotations

from datetime import timedelta

from handlers import sweep_escalations
from tests.conftest import START
from tests.support.lifecycle import log_of


async def test_steward_on_scene_is_recorded_without_stopping_escalation(say, core, clock):
    await say("/incident disorder @stb_walkway s4", as_="supervisor")
    fx = await core.active_fixture()
    clock.advance(timedelta(seconds=20))
    r = await say("/onscene 1 two of us at the top of the stairs", as_="steward")
    assert r.reply.ok and "INC-1" in r.reply.text and "acknowledge" in r.reply.text.lower()
    inc = await core.store.incident(fx.id, 1)
    assert inc.status == "reported"
    assert "1:ack" in await core.facades.deadlines.deadlines(fx.id)
    outs = await sweep_escalations(core, core.store, START + timedelta(seconds=60))
    assert sorted(o.audience for o in outs) == ["command", "police"]  # still escalates
    (note,) = await log_of(core, "incident.update")
    assert "on scene" in note.data["text"].lower() and "top of the stairs" in note.data["text"]
    assert await log_of(core, "incident.status") == []
    rt = await core.facades.views.response_times(fx.id)
    assert rt["acknowledged"] == 0  # the median time to acknowledge does not count it

    clock.advance(timedelta(seconds=40))
    r = await say("/ack 1", as_="control")
    assert r.reply.ok and "acknowledged" in r.reply.text
    inc = await core.store.incident(fx.id, 1)
    assert inc.status == "acknowledged" and inc.tta_s == 60


async def test_handlers_on_scene_still_moves_the_status(say, core):
    await say("/incident disorder @stb_walkway s4", as_="steward")
    r = await say("/onscene 1", as_="supervisor")
    assert r.reply.ok
    fx = await core.active_fixture()
    assert (await core.store.incident(fx.id, 1)).status == "on_scene"


async def test_steward_may_mark_on_scene_once_acknowledged(say, core):
    await say("/incident disorder @stb_walkway s4", as_="supervisor")
    await say("/ack 1", as_="control")
    r = await say("/onscene 1", as_="steward")
    assert r.reply.ok
    fx = await core.active_fixture()
    assert (await core.store.incident(fx.id, 1)).status == "on_scene"
