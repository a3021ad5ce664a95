"""Many stewards, one event: a matching report joins the open incident at once, in the same
single write; counts never double; the reporter can split it out."""

from datetime import timedelta

from bot.domain.ledger import recount
from tests.support.lifecycle import log_of

TG = {"as_": "100000001", "platform": "telegram"}  # a second steward, on Telegram


async def test_same_type_in_an_adjacent_zone_joins_the_incident_and_counts_once(say, core,
                                                                                 clock):
    sent = []

    async def tap(out):
        sent.append(out)

    core.notifier.taps.append(tap)
    await say("/incident disorder @stb_walkway s4 fight", as_="steward")
    clock.advance(timedelta(minutes=3))
    r = await say("/incident disorder @stb_upper s3 fans fighting by the stairs", **TG)
    assert r.reply.title == "Added to INC-1"
    assert r.reply.text.startswith("Looks like INC-1: Disorder")
    labels = [b.label for row in r.reply.buttons for b in row]
    assert labels == ["Keep with INC-1", "No, it's a new incident"]
    # control sees the second report straight away, under INC-1
    assert any(o.thread == "INC-1" and "fans fighting by the stairs" in o.reply.text
               for o in sent)
    fx = await core.active_fixture()
    counts = await core.store.counts(fx.id)
    assert counts["inc:total"] == 1 and counts["inc:type:disorder"] == 1
    assert counts == dict(recount(await core.store.events(fx.id)).counts)
    assert (await core.store.incident(fx.id, 1)).merged == 1
    merged = (await log_of(core, "incident.merged"))[0]
    assert merged.data["id"] == "INC-1"
    assert merged.data["report"]["description"] == "fans fighting by the stairs"
    assert "1 merged report" in (await say("/incident 1", as_="control")).reply.text
    # text the second steward sends next goes to INC-1, where their report now lives
    r = await say("now spilling onto the concourse", **TG)
    assert "Added to INC-1" in r.reply.text


async def test_the_reporter_can_split_it_out_as_a_new_incident(say, core):
    await say("/incident pyro @away_upper s3", as_="steward")
    r = await say("/incident pyro @seg_ne s3 flare", **TG)
    split = r.reply.buttons[0][1].command
    other = await say(split, as_="steward")
    assert not other.reply.ok  # only the reporter may split their report
    r = await say(split, **TG)
    assert r.reply.title == "Logged INC-2"
    again = await say(split, **TG)
    assert not again.reply.ok and "Already handled" in again.reply.text
    fx = await core.active_fixture()
    counts = await core.store.counts(fx.id)
    assert counts["inc:total"] == 2
    assert (await core.store.incident(fx.id, 1)).merged == 0
    assert counts == dict(recount(await core.store.events(fx.id)).counts)


async def test_no_merge_for_another_type_far_away_rival_fans_or_outside_the_window(say, clock):
    await say("/incident disorder @stb_walkway s4", as_="steward")
    r = await say("/incident missile @stb_walkway s4", **TG)
    assert r.reply.title == "Logged INC-2"
    r = await say("/incident disorder @bms_lower s4", **TG)  # not adjacent
    assert r.reply.title == "Logged INC-3"
    await say("/incident missile @pitch_south s4 aff=away", as_="steward")
    r = await say("/incident missile @pitch_south s4 aff=home", **TG)  # rivals throwing back
    assert r.reply.title == "Logged INC-5"
    clock.advance(timedelta(minutes=11))  # window is 10 minutes
    r = await say("/incident disorder @stb_upper s4", **TG)
    assert r.reply.title == "Logged INC-6"


async def test_a_closed_incident_is_not_joined(say):
    await say("/incident medical @bbs_lower s3", as_="steward")
    await say("/resolve 1", as_="control")
    r = await say("/incident medical @bbs s3 fainted", **TG)
    assert r.reply.title == "Logged INC-2"


async def test_a_merge_is_one_round_trip_and_a_redelivery_is_not_merged_twice(say, core):
    await say("/incident medical @bbs_lower s3", as_="steward")
    a = await say("/incident medical @bbs s3 fainted", dedupe="telegram:77", **TG)
    b = await say("/incident medical @bbs s3 fainted", dedupe="telegram:77", **TG)
    # the redelivery is answered as the first run was (its messages are not queued again)
    assert a.reply.title == b.reply.title == "Added to INC-1"
    fx = await core.active_fixture()
    assert (await core.store.incident(fx.id, 1)).merged == 1
