"""A redelivered platform event is applied at most once."""

from __future__ import annotations


async def test_same_report_twice_logs_once(say, core):
    a = await say("/incident missile @seg_ne s4", as_="steward", dedupe="telegram:5001")
    b = await say("/incident missile @seg_ne s4", as_="steward", dedupe="telegram:5001")
    assert a.reply.title == "Logged INC-1"
    assert b.reply.ok and "Already logged as INC-1" in b.reply.text
    fx = await core.active_fixture()
    assert len(await core.store.events(fx.id)) == 2  # fixture.created + one report
    assert (await core.store.counts(fx.id))["inc:total"] == 1


async def test_same_ack_and_arrest_twice_apply_once(say, core):
    await say("/incident disorder @stb_walkway s5", as_="steward")
    await say("/ack 1", as_="control", dedupe="slack:act:1")
    r = await say("/ack 1", as_="control", dedupe="slack:act:1")
    assert r.reply.ok and "Already done" in r.reply.text
    for _ in range(2):
        await say("/arrest violent_disorder x3 inside home", as_="police_liaison",
                  dedupe="slack:cmd:9")
    fx = await core.active_fixture()
    counts = await core.store.counts(fx.id)
    assert counts["arr:total"] == 3
    kinds = [e.kind for e in await core.store.events(fx.id)]
    assert kinds.count("incident.status") == 1 and kinds.count("arrest.recorded") == 1


async def test_different_keys_are_different_reports(say, core):
    await say("/incident missile @seg_ne", as_="steward", dedupe="telegram:1")
    # (far from seg_ne: a nearby one would be offered as "add to INC-1, or new?")
    await say("/incident missile @bms_lower", as_="steward", dedupe="telegram:2")
    fx = await core.active_fixture()
    assert (await core.store.counts(fx.id))["inc:total"] == 2
