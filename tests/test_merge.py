"""Many stewards, one event: merge offered for the same type nearby, counts never doubled."""

from datetime import timedelta

from bot.escalation import sweep_escalations
from bot.ledger import recount
from tests.conftest import START
from tests.lifecycle_support import log_of

TG = {"as_": "100000001", "platform": "telegram"}  # a second steward, on Telegram


async def test_same_type_in_an_adjacent_zone_offers_merge_and_counts_once(say, core, clock):
    await say("/incident disorder @stb_walkway s4 fight", as_="steward")
    clock.advance(timedelta(minutes=3))
    r = await say("/incident disorder @stb_upper s3 fans fighting by the stairs", **TG)
    assert r.reply.text.startswith("Looks like INC-1: Disorder")
    assert "Add to it, or new?" in r.reply.text
    labels = [b.label for row in r.reply.buttons for b in row]
    assert labels == ["Add to INC-1", "New incident"]
    r2 = await say(r.reply.buttons[0][0].command, as_="steward")
    assert not r2.reply.ok  # only the reporter may choose
    r = await say(r.reply.buttons[0][0].command, **TG)
    assert r.reply.ok and "Added to INC-1" in r.reply.text
    fx = await core.active_fixture()
    counts = await core.store.counts(fx.id)
    assert counts["inc:total"] == 1 and counts["inc:type:disorder"] == 1
    assert counts == dict(recount(await core.store.events(fx.id)).counts)
    assert (await core.store.incident(fx.id, 1))["merged"] == "1"
    merged = (await log_of(core, "incident.merged"))[0]
    assert merged.data["report"]["description"] == "fans fighting by the stairs"
    assert "1 merged report" in (await say("/incident 1", as_="control")).reply.text


async def test_new_incident_button_logs_a_second_one(say, core):
    await say("/incident pyro @away_upper s3", as_="steward")
    r = await say("/incident pyro @seg_ne s3 flare", **TG)
    assert r.reply.title == "Same incident?"
    r = await say(r.reply.buttons[-1][0].command, **TG)
    assert r.reply.title == "Logged INC-2"
    again = await say("/merge x 1", **TG)
    assert not again.reply.ok


async def test_no_offer_for_another_type_far_away_or_outside_the_window(say, clock):
    await say("/incident disorder @stb_walkway s4", as_="steward")
    r = await say("/incident missile @stb_walkway s4", **TG)
    assert r.reply.title == "Logged INC-2"
    r = await say("/incident disorder @bms_lower s4", **TG)  # not adjacent
    assert r.reply.title == "Logged INC-3"
    clock.advance(timedelta(minutes=11))  # window is 10 minutes
    r = await say("/incident disorder @stb_upper s4", **TG)
    assert r.reply.title == "Logged INC-4"


async def test_an_unanswered_offer_is_added_automatically_so_no_report_is_lost(say, core):
    await say("/incident medical @bbs_lower s3", as_="steward")
    r = await say("/incident medical @bbs s3 fainted", **TG)
    assert r.reply.title == "Same incident?"
    outs = await sweep_escalations(core, START + timedelta(seconds=121))
    assert any("was added to INC-1" in o.reply.text for o in outs)
    assert (await log_of(core, "incident.merged"))[0].data["auto"] is True
    fx = await core.active_fixture()
    assert (await core.store.counts(fx.id))["inc:total"] == 1
